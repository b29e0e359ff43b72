"""Gaussian ordering probabilities (``podium.ordering``) and TrueSkill's predictive model built on them.

References, each independent of the code under test:

* closed forms: ``P(X_1 > X_2 + eps) = Phi((m_1 - m_2 - eps) / sqrt(s_1^2 + s_2^2))`` for two independent
  Gaussians (the difference is Gaussian), the draw ``P(|X_1 - X_2| <= eps)``, ``1/n`` and ``1/n!`` for
  exchangeable performances, ``d!/n!`` for one order of ``n - d`` finishers above ``d`` censored players;
  ``log Phi`` from ``scipy.special.log_ndtr``;
* ``scipy.integrate.quad`` of ``phi_i prod_j Phi_j`` for win probabilities;
* mpmath (20 digits) of the one-dimensional integral of a three-team chain, conditioning on the middle
  team: ``P(X_a - X_b > e_ab, X_b - X_c > e_bc) = int phi_b(x) Phi((m_a - x - e_ab)/s_a)
  Phi((x - e_bc - m_c)/s_c) dx`` (the inner integrals of the nested form done in closed form);
* brute force over all ``n!`` orders;
* seeded, vectorized Monte Carlo of exactly the event of :func:`gaussian_log_order`'s docstring
  (:func:`outcome_event` below), within five standard errors.

Bugs found while writing these tests are marked ``xfail(strict=True)`` with the failing case.
"""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
import textwrap

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from scipy import integrate, optimize, special

from podium import Match, Rating, TrueSkill
from podium.ordering import gaussian_log_order, gaussian_log_win


# -- helpers ------------------------------------------------------------------------------------------
def log_win(m: list[float], s: list[float]) -> NDArray[np.float64]:
    out = np.full(len(m), np.nan)
    gaussian_log_win(np.asarray(m, dtype=np.float64), np.asarray(s, dtype=np.float64), out)
    return out


def log_order(m: list[float], s: list[float], rank: list[int], size: list[float] | None = None,
              margin: float = 0.0) -> float:
    n = len(m)
    return float(gaussian_log_order(
        np.asarray(m, dtype=np.float64), np.asarray(s, dtype=np.float64), np.asarray(rank, dtype=np.int64),
        np.ones(n) if size is None else np.asarray(size, dtype=np.float64), float(margin)))


def quad_win(m: list[float], s: list[float], i: int) -> float:
    """``P(X_i > X_j for all j) = int phi_i(x) prod_{j != i} Phi_j(x) dx`` by scipy's adaptive quadrature.

    The integrand is at most ``phi_i``, so ``m_i +- 14 s_i`` holds all of it but ``~1e-44``.
    """
    others = [j for j in range(len(m)) if j != i]

    def f(x: float) -> float:
        return float(np.exp(-0.5 * ((x - m[i]) / s[i]) ** 2) / (s[i] * math.sqrt(2 * math.pi))
                     * np.prod([special.ndtr((x - m[j]) / s[j]) for j in others]))

    edges = np.linspace(m[i] - 14 * s[i], m[i] + 14 * s[i], 15)
    return sum(integrate.quad(f, a, b, epsabs=0.0, epsrel=1e-13, limit=200)[0] for a, b in zip(edges[:-1], edges[1:]))


def mp_chain3(m: list[float], s: list[float], e_ab: float = 0.0, e_bc: float = 0.0) -> float:
    """``log P(X_a - X_b > e_ab, X_b - X_c > e_bc)`` for ``(a, b, c) = (0, 1, 2)``, in mpmath.

    Conditioning on ``X_b = x``: ``int phi_b(x) Phi((m_a - x - e_ab)/s_a) Phi((x - e_bc - m_c)/s_c) dx``;
    the survival function is written ``ncdf(-z)`` (no ``1 - ncdf``, which would cancel in an upset).
    The log-integrand is concave with curvature at least ``1/s_b^2``, so it is below its peak value times
    ``exp(-(x - x*)^2 / (2 s_b^2))``: ``x* +- 40 s_b`` holds all of it (relative ``e^-800``).  The peak is
    found in floating point (unimodal: bounded Brent) and the range is cut into many pieces, finest near
    the peak (pieces of the local width ``1/sqrt(sum 1/s^2)``, a lower bound of the integrand's width,
    within 20 of them; then pieces of ``2 s_b``).  At 20 digits this agrees to 1e-10 in ``log P`` with
    pieces half as wide at 30 digits on the cases below.
    """
    ma, mb, mc = m
    sa, sb, sc = s

    def neg_log_f(x: float) -> float:
        return -(-0.5 * ((x - mb) / sb) ** 2 + special.log_ndtr((ma - x - e_ab) / sa)
                 + special.log_ndtr((x - e_bc - mc) / sc))

    lo, hi = min(m) - 40 * max(s), max(m) + 40 * max(s)
    peak = optimize.minimize_scalar(neg_log_f, bounds=(lo, hi), method="bounded",
                                    options={"xatol": 1e-10 * (hi - lo)}).x
    local = 1.0 / math.sqrt(1 / sa**2 + 1 / sb**2 + 1 / sc**2)
    points = sorted({*(peak + local * np.arange(-20, 21)), *(peak + sb * np.arange(-40, 41, 2))})
    with mp.workdps(20):
        def f(x: mp.mpf) -> mp.mpf:
            return mp.npdf(x, mb, sb) * mp.ncdf((ma - x - e_ab) / sa) * mp.ncdf((x - e_bc - mc) / sc)

        return float(mp.log(mp.quad(f, [mp.mpf(p) for p in points])))


def outcome_event(x: NDArray[np.float64], rank: list[int], size: list[float], margin: float) -> NDArray[np.bool_]:
    """Whether each row of performances ``x`` (samples x teams) is the outcome ``rank``, as the docstring
    of :func:`gaussian_log_order` defines it:

    * ranks grouped (``-1``: did not finish); in a group, every member ``j`` lies within
      ``eps_ij = margin sqrt(size_i + size_j)`` below the group's best member ``i``;
    * consecutive groups: best of the better group - best of the next > ``margin sqrt(big_a + big_b)``,
      ``big`` the largest team size of each group;
    * non-finishers: all below the best member of the last group of finishers, no margin.
    """
    size_arr = np.asarray(size, dtype=np.float64)
    levels = sorted({r for r in rank if r >= 0})
    groups = [[i for i, r in enumerate(rank) if r == level] for level in levels]
    ok = np.ones(len(x), dtype=bool)
    bests = []
    for g in groups:
        xg = x[:, g]
        arg = np.argmax(xg, axis=1)
        best = xg[np.arange(len(x)), arg]
        bests.append(best)
        if len(g) > 1:
            best_size = size_arr[g][arg]
            for k, j in enumerate(g):
                eps = margin * np.sqrt(best_size + size_arr[j])
                ok &= xg[:, k] >= best - eps
    for k in range(len(groups) - 1):
        link = margin * math.sqrt(max(size_arr[groups[k]]) + max(size_arr[groups[k + 1]]))
        ok &= bests[k] - bests[k + 1] > link
    out = [i for i, r in enumerate(rank) if r < 0]
    if out:
        ok &= x[:, out].max(axis=1) < bests[-1]
    return ok


def monte_carlo(m: list[float], s: list[float], rank: list[int], size: list[float], margin: float,
                seed: int, samples: int = 2_000_000) -> tuple[float, float]:
    """Monte Carlo estimate of the outcome's probability and its standard error."""
    rng = np.random.default_rng(seed)
    x = np.asarray(m) + np.asarray(s) * rng.standard_normal((samples, len(m)))
    p = float(outcome_event(x, rank, size, margin).mean())
    return p, math.sqrt(p * (1 - p) / samples)


# -- 1. gaussian_log_win --------------------------------------------------------------------------------
@pytest.mark.parametrize("m, s", [
    ([0.0, 0.0], [1.0, 1.0]),
    ([1.3, -0.4], [0.5, 2.0]),
    ([0.0, 60.0 * math.sqrt(2.0)], [1.0, 1.0]),     # 60 sd of the difference: log P ~ -1804
    ([3.0, -5.0], [1e-3, 1e-3]),                     # 5657 sd
    ([1e4, -1e4], [10.0, 30.0]),
])
def test_win_two_teams_closed_form(m: list[float], s: list[float]) -> None:
    # Closed form: X_1 - X_2 ~ N(m_1 - m_2, s_1^2 + s_2^2); scipy.special.log_ndtr is accurate in the tails.
    d = (m[0] - m[1]) / math.hypot(s[0], s[1])
    out = log_win(m, s)
    assert out[0] == pytest.approx(special.log_ndtr(d), rel=1e-13, abs=1e-15)
    assert out[1] == pytest.approx(special.log_ndtr(-d), rel=1e-13, abs=1e-15)


@pytest.mark.parametrize("m, s", [
    ([0.0, 0.5, -0.3], [1.0, 0.6, 2.0]),
    ([1.0, 0.0, -1.0, 0.4], [0.3, 1.0, 3.0, 0.8]),
    ([2.0, -1.0, 0.0, 0.5, 1.5], [1.0, 2.5, 0.4, 1.2, 0.7]),
    ([0.0, 0.2, -0.4, 1.1, -2.0, 0.7], [0.5, 1.5, 1.0, 4.0, 0.25, 2.0]),
    ([10.0, 4.0, 0.0], [1.0, 1.0, 1.0]),           # P(third wins) ~ 1e-13: still relative accuracy
])
def test_win_against_quadrature(m: list[float], s: list[float]) -> None:
    out = log_win(m, s)
    expected = np.array([quad_win(m, s, i) for i in range(len(m))])
    np.testing.assert_allclose(np.exp(out), expected, rtol=1e-10, atol=0)
    assert math.fsum(np.exp(out)) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 9])
def test_win_equal_teams_and_shifted_scaled(n: int) -> None:
    # Exchangeable performances: each team wins with probability 1/n, also after a common shift and scale.
    np.testing.assert_allclose(log_win([0.0] * n, [1.0] * n), -math.log(n), rtol=0, atol=1e-12)
    # shifted by 1.2e5 scales: the grid coordinates x - m carry rounding errors of 1e5 ulp in z
    np.testing.assert_allclose(log_win([1234.5] * n, [0.01] * n), -math.log(n), rtol=0, atol=1e-10)


def test_win_probabilities_sum_to_one_random() -> None:
    rng = np.random.default_rng(7)
    for _ in range(30):
        n = int(rng.integers(3, 9))
        m = rng.normal(0.0, 3.0, n)
        s = 10.0 ** rng.uniform(-1.0, 1.0, n)
        p = np.exp(log_win(list(m), list(s)))
        assert math.fsum(p) == pytest.approx(1.0, abs=1e-12)


def test_win_team_1000_sd_below_is_finite_and_tiny() -> None:
    for n in (2, 3, 5):
        m = [0.0] * (n - 1) + [-1000.0]
        out = log_win(m, [1.0] * n)
        assert np.all(np.isfinite(out))
        # the true value is about -3.3e5 for n = 3 (log integrand -(x+1000)^2/2 - x^2 at x = -1000/3);
        # for n = 2 it is log Phi(-1000/sqrt 2) exactly.  The docstring promises a lower bound for n > 2.
        assert out[-1] < -2.4e5
        np.testing.assert_allclose(out[:-1], -math.log(n - 1), rtol=0, atol=1e-12)
    assert log_win([0.0, -1000.0], [1.0, 1.0])[1] == pytest.approx(special.log_ndtr(-1000 / math.sqrt(2)), rel=1e-13)
    # n = 3: the documented lower bound really is below the true value, log int phi(x + 1000) Phi(x)^2 dx
    # (mpmath around the log-integrand's peak; its curvature is about -3, so +-40 holds everything).
    peak = optimize.minimize_scalar(lambda x: 0.5 * (x + 1000) ** 2 - 2 * special.log_ndtr(x),
                                    bounds=(-1000.0, 0.0), method="bounded", options={"xatol": 1e-9}).x
    with mp.workdps(30):
        true = float(mp.log(mp.quad(lambda x: mp.npdf(x, -1000) * mp.ncdf(x) ** 2,
                                    [mp.mpf(peak + k) for k in range(-40, 41, 2)])))
    assert true == pytest.approx(-333_333, rel=1e-4)
    assert log_win([0.0, 0.0, -1000.0], [1.0, 1.0, 1.0])[2] <= true


@pytest.mark.xfail(strict=True, reason=(
    "BUG: gaussian_log_win caps its grid at _MAX_NODES = 200,000 nodes; with scales spanning 1e5 "
    "(0.01 and 1000) the step becomes 12 smallest scales, not a quarter, and the trapezoid rule is "
    "wrong: P(team 0 wins) = 0.082 instead of 0.25 and the probabilities sum to 0.834"))
def test_win_extreme_scale_ratio() -> None:
    # m = [0, 0, 0], s = [0.01, 1000, 1]: reference by scipy quad, and the probabilities must sum to 1.
    m, s = [0.0, 0.0, 0.0], [0.01, 1000.0, 1.0]
    out = log_win(m, s)
    assert math.fsum(np.exp(out)) == pytest.approx(1.0, abs=1e-9)
    np.testing.assert_allclose(np.exp(out), [quad_win(m, s, i) for i in range(3)], rtol=1e-8)


# -- 2. gaussian_log_order: strict orders, no margin -----------------------------------------------------
# The grid method's error is O(h^6) per integrated group (h = s_min/8; checked on a scratch copy with 16
# and 32 nodes per scale: the errors below shrink 64-fold per halving): about 1e-9 in log P for two or
# three teams, as the docstring says, but growing with the number of groups (2.6e-8 for 8 equal teams).
def grid_tol(groups: int) -> float:
    return 1e-9 * groups * groups


@pytest.mark.parametrize("m, s, rank", [
    ([0.3, 0.0, -0.5], [1.0, 0.7, 1.6], [0, 1, 2]),
    ([0.3, 0.0, -0.5], [1.0, 0.7, 1.6], [2, 0, 1]),
    ([5.0, -2.0, 1.0], [0.2, 3.0, 1.0], [1, 2, 0]),
    ([-20.0, 0.0, 20.0], [1.0, 1.0, 1.0], [0, 1, 2]),   # extreme upset, log P ~ -408.38
    ([-8.0, 0.0, 8.0], [0.5, 2.0, 1.0], [0, 1, 2]),
])
def test_order_three_teams_against_mpmath(m: list[float], s: list[float], rank: list[int]) -> None:
    order = sorted(range(3), key=lambda i: rank[i])
    expected = mp_chain3([m[i] for i in order], [s[i] for i in order])
    assert log_order(m, s, rank) == pytest.approx(expected, rel=0, abs=1e-8)


def test_extreme_upset_value() -> None:
    # The mpmath chain integral of means [-20, 0, 20] finishing in that order (see mp_chain3).
    assert mp_chain3([-20.0, 0.0, 20.0], [1.0, 1.0, 1.0]) == pytest.approx(-408.3828, abs=1e-3)
    assert log_order([-20.0, 0.0, 20.0], [1.0, 1.0, 1.0], [0, 1, 2]) == pytest.approx(-408.3828, abs=1e-3)


def test_all_strict_orders_of_four_sum_to_one() -> None:
    # Without a margin the 4! strict orders partition the sample space (ties have probability 0).
    m, s = [0.3, -0.5, 1.2, 0.0], [1.0, 0.7, 1.5, 2.0]
    total = 0.0
    for perm in itertools.permutations(range(4)):
        rank = [0] * 4
        for place, team in enumerate(perm):
            rank[team] = place
        total += math.exp(log_order(m, s, rank))
    assert total == pytest.approx(1.0, abs=1e-7)


@pytest.mark.parametrize("n", range(3, 9))
def test_equal_teams_give_one_over_n_factorial(n: int) -> None:
    # Exchangeable performances: every one of the n! orders has probability 1/n!.
    rank = list(range(n))[::-1]
    assert log_order([0.0] * n, [1.0] * n, rank) == pytest.approx(-math.lgamma(n + 1), abs=grid_tol(n))
    assert log_order([-7.0] * n, [3.5] * n, rank, margin=0.0) == pytest.approx(-math.lgamma(n + 1), abs=grid_tol(n))


@pytest.mark.parametrize("n, d", [(3, 1), (3, 2), (4, 2), (5, 1), (5, 3), (6, 2), (7, 4), (6, 5), (4, 4)])
def test_non_finishers_among_equal_players(n: int, d: int) -> None:
    # One specific order of the n - d finishers, all above the d non-finishers: d! of the n! equally
    # likely orders, P = d!/n!.  (d = n: nothing finished, P = 1.)  Non-finishers ignore the margin.
    rank = list(range(n - d)) + [-1] * d
    expected = math.lgamma(d + 1) - math.lgamma(n + 1)
    assert log_order([0.0] * n, [1.0] * n, rank) == pytest.approx(expected, abs=grid_tol(n))
    assert log_order([0.0] * n, [1.0] * n, rank[::-1], margin=0.0) == pytest.approx(expected, abs=grid_tol(n))


@pytest.mark.parametrize("margin", [0.0, 0.4])
def test_winner_above_non_finishers_is_win_probability(margin: float) -> None:
    # Ranks [-1, 0, -1, -1]: team 1 above all the others, unordered: P(team 1 performs best) (no margin).
    m, s = [0.5, -0.2, 1.0, 0.0], [1.0, 0.5, 2.0, 1.5]
    expected = log_win(m, s)[1]
    assert expected == pytest.approx(math.log(quad_win(m, s, 1)), abs=1e-10)
    assert log_order(m, s, [-1, 0, -1, -1], margin=margin) == pytest.approx(expected, abs=1e-8)


# -- 3. margin, no draws -----------------------------------------------------------------------------------
@pytest.mark.parametrize("m, s, size, margin, rank", [
    ([0.0, 0.0], [1.0, 1.0], [1.0, 1.0], 0.5, [0, 1]),
    ([1.0, -0.5], [0.7, 1.9], [2.0, 3.0], 0.3, [0, 1]),
    ([1.0, -0.5], [0.7, 1.9], [2.0, 3.0], 0.3, [1, 0]),
    ([0.0, 20.0], [1.0, 1.5], [1.0, 4.0], 0.8, [0, 1]),    # upset, log P ~ -64
    ([25.0, 25.0], [4.9, 4.9], [1.0, 1.0], 0.74, [1, 0]),
])
def test_order_two_teams_with_margin_closed_form(m: list[float], s: list[float], size: list[float],
                                                 margin: float, rank: list[int]) -> None:
    # P(X_w - X_l > eps) = Phi((m_w - m_l - eps)/sqrt(s_w^2 + s_l^2)), eps = margin sqrt(size_w + size_l).
    w, loser = (0, 1) if rank[0] < rank[1] else (1, 0)
    eps = margin * math.sqrt(size[0] + size[1])
    expected = special.log_ndtr((m[w] - m[loser] - eps) / math.hypot(s[0], s[1]))
    assert log_order(m, s, rank, size, margin) == pytest.approx(expected, rel=1e-9, abs=1e-8)


@pytest.mark.parametrize("m, s, size, margin", [
    ([0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0], 0.3),
    ([0.5, 0.1, -0.8], [1.2, 0.6, 2.0], [1.0, 2.0, 3.0], 0.4),
    ([-3.0, 0.0, 4.0], [1.0, 1.5, 0.8], [2.0, 1.0, 1.0], 1.0),   # upset with margins
])
def test_order_three_teams_with_margin_against_mpmath(m: list[float], s: list[float], size: list[float],
                                                      margin: float) -> None:
    # P(X_1 - X_2 > e_12, X_2 - X_3 > e_23), e_ij = margin sqrt(size_i + size_j).
    e12 = margin * math.sqrt(size[0] + size[1])
    e23 = margin * math.sqrt(size[1] + size[2])
    expected = mp_chain3(m, s, e12, e23)
    assert log_order(m, s, [0, 1, 2], size, margin) == pytest.approx(expected, rel=0, abs=1e-8)
    # listed in another order: the same outcome
    assert log_order(m[::-1], s[::-1], [2, 1, 0], size[::-1], margin) == pytest.approx(expected, rel=0, abs=1e-8)


# -- 4. draws ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("m, s, size, margin", [
    ([0.0, 0.0], [1.0, 1.0], [1.0, 1.0], 0.5),
    ([1.3, 0.0], [0.8, 1.7], [2.0, 1.0], 0.2),
    ([-4.0, 0.0], [1.0, 1.0], [1.0, 1.0], 0.05),   # tail: log P ~ -11
    ([0.0, 0.0], [1.0, 1.0], [1.0, 1.0], 1e-4),    # narrow
    ([25.0, 30.0], [4.9, 5.3], [3.0, 2.0], 0.74),
])
def test_two_team_draw_closed_form(m: list[float], s: list[float], size: list[float], margin: float) -> None:
    # P(|X_1 - X_2| <= eps) = Phi((eps - d)/sd) - Phi((-eps - d)/sd), d = m_1 - m_2, in mpmath.
    eps = margin * math.sqrt(size[0] + size[1])
    d, sd = m[0] - m[1], math.hypot(s[0], s[1])
    with mp.workdps(40):
        expected = float(mp.log(mp.ncdf((eps - d) / sd) - mp.ncdf((-eps - d) / sd)))
    assert log_order(m, s, [0, 0], size, margin) == pytest.approx(expected, rel=1e-9, abs=1e-8)
    assert log_order(m, s, [3, 3], size, margin) == pytest.approx(expected, rel=1e-9, abs=1e-8)


@pytest.mark.parametrize("rank", [[0, 0], [0, 1, 1], [0, 0, 1], [1, 0, 1, -1], [2, 2, 2]])
def test_draw_without_margin_is_impossible(rank: list[int]) -> None:
    n = len(rank)
    assert log_order([0.0] * n, [1.0] * n, rank, margin=0.0) == -math.inf


def test_tied_non_finishers_are_not_a_draw() -> None:
    # -1's are censored, not tied: finite with margin 0 (P(team 0 first) = 1/3 for equal teams).
    assert log_order([0.0] * 3, [1.0] * 3, [0, -1, -1]) == pytest.approx(-math.log(3), abs=1e-8)


MC_CASES = [
    # (m, s, size, margin, rank, seed)
    ([0.4, 0.0, -0.3], [1.0, 0.8, 1.3], [1.0, 2.0, 3.0], 0.5, [0, 1, 1], 1),
    ([0.4, 0.0, -0.3], [1.0, 0.8, 1.3], [1.0, 2.0, 3.0], 0.5, [0, 0, 1], 2),
    ([0.4, 0.0, -0.3], [1.0, 0.8, 1.3], [1.0, 2.0, 3.0], 0.5, [1, 0, 1], 3),
    ([0.0, 0.2, -0.1], [1.0, 1.0, 0.6], [1.0, 1.0, 2.0], 0.8, [0, 0, 0], 4),
    ([0.4, 0.0, -0.3], [1.0, 0.8, 1.3], [1.0, 2.0, 3.0], 0.5, [0, 0, -1], 5),
    ([0.4, 0.0, -0.3, 0.2], [1.0, 0.8, 1.3, 0.5], [2.0, 1.0, 1.0, 3.0], 0.3, [0, 1, 1, -1], 6),
    # 5. non-finishers with a margin
    ([0.4, 0.0, -0.3, 0.2], [1.0, 0.8, 1.3, 0.5], [2.0, 1.0, 1.0, 3.0], 0.4, [0, 1, -1, -1], 7),
    ([1.0, 0.5, 0.0, -0.5], [1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0], 0.4, [0, 1, -1, -1], 8),
]


@pytest.mark.parametrize("m, s, size, margin, rank, seed", MC_CASES)
def test_ties_and_non_finishers_against_monte_carlo(m: list[float], s: list[float], size: list[float],
                                                    margin: float, rank: list[int], seed: int) -> None:
    p_hat, se = monte_carlo(m, s, rank, size, margin, seed)
    assert p_hat > 0.02  # the event is common enough that five standard errors are a sharp test
    p = math.exp(log_order(m, s, rank, size, margin))
    assert abs(p - p_hat) < 5 * se, (p, p_hat, se)


# -- 6. TrueSkill's predictive model ---------------------------------------------------------------------
TS = TrueSkill()
ANN, BOB, CY = Rating(27.0, 4.0), Rating(22.5, 6.5), Rating(30.0, 2.0)


def test_trueskill_one_on_one_win_likelihood() -> None:
    # P(win) = Phi((mu1 - mu2 - eps)/c), c^2 = 2 beta^2 + s1^2 + s2^2, eps = draw_margin(2).
    ratings = {"ann": ANN, "bob": BOB}
    eps = TS.draw_margin(2)
    c = math.sqrt(2 * TS.beta**2 + ANN.sigma**2 + BOB.sigma**2)
    assert eps == pytest.approx(0.12566 * math.sqrt(2) * 25 / 6, rel=1e-4)  # Phi^-1(0.55) = 0.125661
    got = TS.log_likelihood(Match([["ann"], ["bob"]]), ratings)
    assert got == pytest.approx(special.log_ndtr((ANN.mu - BOB.mu - eps) / c), rel=1e-12)
    got = TS.log_likelihood(Match([["ann"], ["bob"]], ranks=[1, 0]), ratings)
    assert got == pytest.approx(special.log_ndtr((BOB.mu - ANN.mu - eps) / c), rel=1e-12)
    # a draw: Phi((eps - d)/c) - Phi((-eps - d)/c)
    d = ANN.mu - BOB.mu
    got = TS.log_likelihood(Match([["ann"], ["bob"]], ranks=[0, 0]), ratings)
    assert got == pytest.approx(math.log(special.ndtr((eps - d) / c) - special.ndtr((-eps - d) / c)), rel=1e-10)
    # a non-finisher: below the finisher, no margin
    got = TS.log_likelihood(Match([["ann"], ["bob"]], ranks=[None, 0]), ratings)
    assert got == pytest.approx(special.log_ndtr(-d / c), rel=1e-12)


def test_trueskill_free_for_all_equals_gaussian_log_order() -> None:
    ratings = {"ann": ANN, "bob": BOB, "cy": CY}
    margin = TS.draw_margin(2) / math.sqrt(2)
    means = [ANN.mu, BOB.mu, CY.mu]
    sds = [math.sqrt(r.sigma**2 + TS.beta**2) for r in (ANN, BOB, CY)]
    for ranks in ([0, 1, 2], [2, 0, 1], [0, 1, 1], [0, None, None], [1, 0, None]):
        rank = [-1 if r is None else r for r in ranks]
        got = TS.log_likelihood(Match([["ann"], ["bob"], ["cy"]], ranks=ranks), ratings)
        assert got == pytest.approx(log_order(means, sds, rank, [1.0] * 3, margin), rel=1e-12)
    # and the strict order against the mpmath chain directly: ann > bob > cy
    e = TS.draw_margin(2)
    got = TS.log_likelihood(Match([["ann"], ["bob"], ["cy"]]), ratings)
    assert got == pytest.approx(mp_chain3(means, sds, e, e), abs=1e-8)


def test_trueskill_one_on_one_win_probabilities_and_quality() -> None:
    ratings = {"ann": ANN, "bob": BOB}
    c = math.sqrt(2 * TS.beta**2 + ANN.sigma**2 + BOB.sigma**2)
    p = TS.win_probabilities([["ann"], ["bob"]], ratings)
    p_ann = special.ndtr((ANN.mu - BOB.mu) / c)
    np.testing.assert_allclose(p, [p_ann, 1 - p_ann], rtol=1e-12)
    # Quality (Herbrich et al. 2007, eq. 7): sqrt(2 beta^2 / c^2) exp(-(mu1 - mu2)^2 / (2 c^2)).
    q = math.sqrt(2 * TS.beta**2 / c**2) * math.exp(-((ANN.mu - BOB.mu) ** 2) / (2 * c**2))
    assert TS.quality([["ann"], ["bob"]], ratings) == pytest.approx(q, rel=1e-12)


def test_trueskill_partial_play_uses_squared_weights() -> None:
    # Team performance ~ N(sum w mu, sum w^2 (sigma^2 + beta^2)); the margin counts players, not weights.
    ratings = {"ann": ANN, "bob": BOB, "cy": CY}
    weights = [[0.5, 0.5], [0.8]]
    b2 = TS.beta**2
    m1 = 0.5 * ANN.mu + 0.5 * BOB.mu
    v1 = 0.25 * (ANN.sigma**2 + b2) + 0.25 * (BOB.sigma**2 + b2)
    m2 = 0.8 * CY.mu
    v2 = 0.64 * (CY.sigma**2 + b2)
    c = math.sqrt(v1 + v2)
    eps = TS.draw_margin(3)
    got = TS.log_likelihood(Match([["ann", "bob"], ["cy"]], weights=weights), ratings)
    assert got == pytest.approx(special.log_ndtr((m1 - m2 - eps) / c), rel=1e-12)
    p = TS.win_probabilities([["ann", "bob"], ["cy"]], ratings, weights=weights)
    assert p[0] == pytest.approx(special.ndtr((m1 - m2) / c), rel=1e-12)
    # with w instead of w^2 the variance would differ: make sure the test can tell
    wrong = math.sqrt(0.5 * (ANN.sigma**2 + b2) + 0.5 * (BOB.sigma**2 + b2) + 0.8 * (CY.sigma**2 + b2))
    assert abs(special.ndtr((m1 - m2) / wrong) - p[0]) > 1e-3
    # three teams with partial play: equal to gaussian_log_order on the hand-computed teams
    ratings["dee"] = Rating(24.0, 3.0)
    weights3 = [[0.5, 0.5], [0.8], [0.6]]
    m3, v3 = 0.6 * 24.0, 0.36 * (9.0 + b2)
    got = TS.log_likelihood(Match([["ann", "bob"], ["cy"], ["dee"]], ranks=[1, 2, 0], weights=weights3), ratings)
    expected = log_order([m1, m2, m3], [math.sqrt(v1), math.sqrt(v2), math.sqrt(v3)], [1, 2, 0], [2.0, 1.0, 1.0],
                         TS.draw_margin(1))
    assert got == pytest.approx(expected, rel=1e-12)


# -- 7. no NaN for random finite inputs -----------------------------------------------------------------
@st.composite
def random_outcomes(draw: st.DrawFn) -> tuple[list[float], list[float], list[int], list[float], float]:
    """Means within +-1e4, scales in [1e-2, 1e3], 2-12 teams, random ranks with ties and -1's.

    The spread of the means and the ratio of the scales are bounded relative to the smallest scale
    (means within 100 smallest scales of a common centre, scales within a factor 10): beyond that
    gaussian_log_order's work grows quadratically and it effectively hangs (see
    test_order_wide_scale_ratio_runs_in_bounded_time).  The margin is 0 or at least 1e-6: a margin below
    the rounding unit of the performances gives NaN (see test_order_tiny_margin_draw).
    """
    n = draw(st.integers(2, 12))
    centre = draw(st.floats(-1e4, 1e4))
    s_min = 10.0 ** draw(st.floats(-2.0, 3.0))
    s = [s_min * 10.0 ** draw(st.floats(0.0, 1.0)) for _ in range(n)]
    m = [float(np.clip(centre + s_min * draw(st.floats(-100.0, 100.0)), -1e4, 1e4)) for _ in range(n)]
    rank = draw(st.lists(st.integers(-1, n - 1), min_size=n, max_size=n))
    size = [float(draw(st.integers(1, 5))) for _ in range(n)]
    margin = draw(st.one_of(st.just(0.0), st.floats(1e-6, 2.0)))
    return m, s, rank, size, margin


@settings(max_examples=200, derandomize=True)
@given(random_outcomes())
def test_order_is_a_finite_log_probability(case: tuple[list[float], list[float], list[int], list[float], float]) -> None:
    m, s, rank, size, margin = case
    value = log_order(m, s, rank, size, margin)
    finishers = [r for r in rank if r >= 0]
    tie = len(set(finishers)) < len(finishers)
    if tie and margin == 0.0:
        assert value == -math.inf
    else:
        assert math.isfinite(value), case
    assert value <= 1e-9, case


# -- bugs ---------------------------------------------------------------------------------------------
SLOW_REASON = (
    "BUG: gaussian_log_order's work grows with the square of (grid range / smallest scale): _log_panel splits "
    "a panel into ceil(|change of the log-integrand| / 4) sub-panels without bound, and the grid spans every "
    "team's m +- 12 s at 8 nodes per smallest scale.  m = [0, 0], s = [0.01, 1000], rank = [0, 1] (expected "
    "log 1/2) does not return in minutes (s = [1, 1e4]: > 120 s; s = [1, 1000]: 3.6 s; m = [0, 400], "
    "s = [0.01, 1]: 24 s).  Reached from TrueSkill.log_likelihood with partial play: a free-for-all of three "
    "new players with weights [[1e-4], [1], [1]] takes > 90 s (weight 1e-3: 4 s)")


def _timed_call(code: str, timeout: float) -> float:
    try:
        result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                                timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"no result within {timeout} s")
    assert result.returncode == 0, result.stderr
    return float(result.stdout)


@pytest.mark.xfail(strict=True, reason=SLOW_REASON)
def test_order_wide_scale_ratio_runs_in_bounded_time() -> None:
    got = _timed_call("""
        import numpy as np
        from podium.ordering import gaussian_log_order
        print(gaussian_log_order(np.array([0.0, 0.0]), np.array([0.01, 1000.0]), np.array([0, 1]),
                                 np.ones(2), 0.0))
    """, timeout=2.5)
    assert got == pytest.approx(-math.log(2), abs=1e-8)  # X_0 - X_1 is symmetric about 0


@pytest.mark.xfail(strict=True, reason=SLOW_REASON)
def test_trueskill_small_partial_play_weight_runs_in_bounded_time() -> None:
    got = _timed_call("""
        from podium import Match, TrueSkill
        print(TrueSkill().log_likelihood(Match([["a"], ["b"], ["c"]], weights=[[1e-4], [1.0], [1.0]]), {}))
    """, timeout=2.5)
    # the predictive teams, by hand: N(w mu, w^2 (sigma^2 + beta^2)) with the default prior; mpmath chain
    v = TS.sigma**2 + TS.beta**2
    e = TS.draw_margin(2)
    expected = mp_chain3([1e-4 * TS.mu, TS.mu, TS.mu], [1e-4 * math.sqrt(v), math.sqrt(v), math.sqrt(v)], e, e)
    assert got == pytest.approx(expected, abs=1e-8)


@pytest.mark.xfail(strict=True, reason=(
    "BUG: gaussian_log_order subtracts the margin from the grid coordinate (x - e - m_j), which rounds "
    "to x - m_j when e is below the rounding unit of x: m = [1e4, 1e4], s = [1, 1], rank = [0, 0], "
    "margin 1e-13 gives nan; expected log(Phi(e/sqrt2) - Phi(-e/sqrt2)) = -30.15940 (mpmath)"))
def test_order_tiny_margin_draw() -> None:
    e = 1e-13 * math.sqrt(2.0)
    with mp.workdps(40):
        expected = float(mp.log(mp.ncdf(e / mp.sqrt(2)) - mp.ncdf(-e / mp.sqrt(2))))
    assert log_order([1e4, 1e4], [1.0, 1.0], [0, 0], [1.0, 1.0], 1e-13) == pytest.approx(expected, abs=1e-6)
