"""Ordering probabilities of independent performances (``podium.ordering``).

Every reference is independent of the code under test:

* closed forms: ``log Phi((m_1 - m_2)/sqrt 2)`` for two unit Gaussians (scipy.special.log_ndtr),
  ``1/n!`` and ``d!/n!`` for exchangeable performances, Plackett-Luce for maximum-type Gumbel noise
  (McFadden 1974: ``P = prod_i e^{v_i} / sum_{j >= i} e^{v_j}``), probability bounds by inclusion;
* mpmath one-dimensional integrals conditioning on the middle of three competitors, and their derivatives
  under the integral sign;
* brute force over all orders (places from sums over orders; ties = mean over the tied group's orders);
* seeded numpy Monte Carlo of exactly the documented event, tolerance five standard errors;
* central finite differences of ``log_order`` itself for the gradients.

Every reference value is computed independently of the code under test (no golden files).
"""

from __future__ import annotations

import itertools
import math

import mpmath as mp
import numpy as np
import pytest
from numpy.typing import NDArray
from scipy import special

import podium
from podium.ordering import log_order, log_win_probabilities, rank_probabilities


def ranks_of(order: list[int] | tuple[int, ...], n: int) -> list[int]:
    """Ranks (0 best) of the competitors listed best first in ``order``."""
    rank = [0] * n
    for place, i in enumerate(order):
        rank[i] = place
    return rank


# -- 1. reference values -----------------------------------------------------------------------------------
def mp_three(m: list[float], s: list[float] | None = None) -> tuple[float, list[float], list[float]]:
    """``log P(X_1 > X_2 > X_3)`` and its gradient in ``m`` and ``s``, Gaussian, by mpmath at 15 digits
    (checked: the same to 1e-12 as at 40 digits; pieces of a whole s_2 were 2.6e-9 off for the upset).

    Conditioning on the middle competitor: ``P = int phi_2(x) Phi((x - m_3)/s_3) (1 - Phi((x - m_1)/s_1)) dx``
    with ``phi_2(x) = phi((x - m_2)/s_2)/s_2``; derivatives under the integral sign.
    """
    s = s or [1.0, 1.0, 1.0]
    with mp.workdps(15):
        m1, m2, m3 = (mp.mpf(v) for v in m)
        s1, s2, s3 = (mp.mpf(v) for v in s)

        def z(x, a, b):  # noqa: ANN001, ANN202
            return (x - a) / b

        def integral(g) -> mp.mpf:  # noqa: ANN001
            # phi_2 bounds the integrand: m_2 +- 24 s_2 holds all but e^-288 of it; pieces of s_2 / 2
            return mp.quad(g, [m2 + s2 * k / 2 for k in range(-48, 49)])

        def f2(x):  # noqa: ANN001, ANN202
            return mp.npdf(z(x, m2, s2)) / s2

        def up(x):  # noqa: ANN001, ANN202
            return mp.ncdf(-z(x, m1, s1))

        def low(x):  # noqa: ANN001, ANN202
            return mp.ncdf(z(x, m3, s3))

        p = integral(lambda x: f2(x) * low(x) * up(x))
        dm1 = integral(lambda x: f2(x) * low(x) * mp.npdf(z(x, m1, s1)) / s1)
        dm3 = -integral(lambda x: f2(x) * mp.npdf(z(x, m3, s3)) / s3 * up(x))
        dm2 = integral(lambda x: f2(x) * z(x, m2, s2) / s2 * low(x) * up(x))
        ds1 = integral(lambda x: f2(x) * low(x) * mp.npdf(z(x, m1, s1)) * z(x, m1, s1) / s1)
        ds3 = -integral(lambda x: f2(x) * mp.npdf(z(x, m3, s3)) * z(x, m3, s3) / s3 * up(x))
        ds2 = integral(lambda x: f2(x) * (z(x, m2, s2) ** 2 - 1) / s2 * low(x) * up(x))
        return (float(mp.log(p)), [float(v / p) for v in (dm1, dm2, dm3)], [float(v / p) for v in (ds1, ds2, ds3)])


@pytest.mark.parametrize("m, expected", [
    ([0.0, 0.0, 0.0], 0.846284),     # brief's reference values (6 digits), also checked against mpmath below
    ([1.0, 0.0, -1.0], 0.364552),
    ([-1.0, 0.0, 1.0], 1.548725),
])
def test_three_players_reference_gradient(m: list[float], expected: float) -> None:
    value, dm, ds = log_order(m, gradient=True)
    np.testing.assert_allclose(dm, [expected, 0.0, -expected], rtol=0, atol=1e-6)
    ref_value, ref_dm, ref_ds = mp_three(m)
    assert value == pytest.approx(ref_value, abs=1e-8)
    np.testing.assert_allclose(dm, ref_dm, rtol=0, atol=1e-8)
    np.testing.assert_allclose(ds, ref_ds, rtol=0, atol=1e-8)
    if m == [0.0, 0.0, 0.0]:
        assert value == pytest.approx(math.log(1 / 6), abs=1e-9)  # exchangeable: 1/3!


@pytest.mark.parametrize("m, s", [
    ([0.3, 0.0, -0.5], [1.0, 0.7, 1.6]),
    ([-8.0, 0.0, 8.0], [1.0, 1.0, 1.0]),   # upset, log P ~ -70
])
def test_three_players_unequal_scales_against_mpmath(m: list[float], s: list[float]) -> None:
    value, dm, ds = log_order(m, s, gradient=True)
    ref_value, ref_dm, ref_ds = mp_three(m, s)
    assert value == pytest.approx(ref_value, abs=1e-8)
    np.testing.assert_allclose(dm, ref_dm, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(ds, ref_ds, rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("d", [0.0, 0.7, -1.3, 4.0, -6.0, -30.0])
def test_two_players_closed_form(d: float) -> None:
    # X_1 - X_2 ~ N(d, 2): log P = log Phi(d/sqrt 2); d/dm_1 = phi(z)/Phi(z)/sqrt 2 (z = d/sqrt 2)
    value, dm, _ = log_order([d, 0.0], gradient=True)
    z = d / math.sqrt(2.0)
    # "about 1e-9 in log P" (module docstring); measured 1.8e-9 at d = 4 (-0.0023416087 vs -0.0023416069)
    assert value == pytest.approx(special.log_ndtr(z), rel=1e-9, abs=3e-9)
    mills = math.exp(-0.5 * z * z - special.log_ndtr(z)) / math.sqrt(2 * math.pi)
    np.testing.assert_allclose(dm, [mills / math.sqrt(2), -mills / math.sqrt(2)], rtol=1e-7, atol=1e-9)
    if d == 0.0:
        assert dm[0] == pytest.approx(1 / math.sqrt(math.pi), abs=1e-9)  # phi(0)/Phi(0)/sqrt 2


@pytest.mark.parametrize("n, d", [(3, 1), (3, 2), (4, 2), (5, 3), (6, 1), (8, 5), (4, 4)])
def test_non_finishers_among_equal_players(n: int, d: int) -> None:
    # one order of n - d finishers, all above d unordered non-finishers: d! of n! equally likely orders
    rank = list(range(n - d)) + [None] * d
    expected = math.lgamma(d + 1) - math.lgamma(n + 1)
    assert log_order([0.0] * n, rank=rank) == pytest.approx(expected, abs=1e-8)
    assert log_order([0.0] * n, rank=rank[::-1]) == pytest.approx(expected, abs=1e-8)


# -- 2. Gumbel = Plackett-Luce ---------------------------------------------------------------------------
def pl_log_order(v: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
    """Plackett-Luce victory order (listed winner first) and its gradient, by hand.

    ``log P = sum_i [v_i - log S_i]``, ``S_i = sum_{j >= i} e^{v_j}``;
    ``d log P / d v_k = 1 - sum_{i <= k} e^{v_k} / S_i`` (the last stage, a single term, contributes 0).
    """
    n = len(v)
    log_s = np.array([special.logsumexp(v[i:]) for i in range(n)])
    value = float(np.sum(v - log_s))
    grad = np.array([1.0 - sum(math.exp(v[k] - log_s[i]) for i in range(k + 1)) for k in range(n)])
    return value, grad


@pytest.mark.parametrize("n, seed", [(3, 1), (6, 2), (12, 3), (12, 4)])
def test_gumbel_is_plackett_luce(n: int, seed: int) -> None:
    v = np.random.default_rng(seed).normal(0.0, 2.0, n)
    value, dm, _ = log_order(v, density="gumbel", gradient=True)
    ref_value, ref_grad = pl_log_order(v)
    assert value == pytest.approx(ref_value, abs=1e-8)
    np.testing.assert_allclose(dm, ref_grad, rtol=0, atol=1e-8)


@pytest.mark.parametrize("far", [100.0, 400.0, 839.3260854166873])
def test_gumbel_non_finisher_far_above_is_plackett_luce(far: float) -> None:
    # A non-finisher hundreds of scales above both finishers: the event "a > b > c" (c did not finish) is
    # the whole Plackett-Luce order.  It once returned the -1e300 sentinel or raised (found by
    # test_non_finisher_is_censored_exactly): log f - log F of a Gumbel's lower tail subtracted two numbers
    # of size e^|z| when the windows were placed.
    v = np.array([far, -95.75265407440159, 4.8e-176])
    value, dm, _ = log_order(v, rank=[None, 0, 1], density="gumbel", gradient=True)
    ref_value, ref_grad = pl_log_order(v[[1, 2, 0]])
    assert value == pytest.approx(ref_value, abs=1e-9)  # measured: 2.3e-13 off at each distance
    np.testing.assert_allclose(dm[[1, 2, 0]], ref_grad, rtol=0, atol=1e-9)


# -- 3. Monte Carlo --------------------------------------------------------------------------------------
def outcome_event(x: NDArray[np.float64], rank: list[int | None], size: list[float], margin: float) -> NDArray[np.bool_]:
    """Whether each row of performances ``x`` is the outcome ``rank`` as log_order documents it:

    * a group of equal rank: every member ``j`` within ``margin sqrt(size_i + size_j)`` below the group's
      best member ``i`` (a single competitor is a group);
    * consecutive groups: best of the better group exceeds best of the next by
      ``margin sqrt(big_a + big_b)``, ``big`` the largest size in each group;
    * non-finishers (None): all below the best of the last group of finishers.
    """
    sz = np.asarray(size, dtype=np.float64)
    levels = sorted({r for r in rank if r is not None})
    groups = [[i for i, r in enumerate(rank) if r == lv] for lv in levels]
    ok = np.ones(len(x), dtype=bool)
    bests = []
    for g in groups:
        xg = x[:, g]
        arg = np.argmax(xg, axis=1)
        best = xg[np.arange(len(x)), arg]
        bests.append(best)
        for k, j in enumerate(g):
            ok &= xg[:, k] >= best - margin * np.sqrt(sz[g][arg] + sz[j])
    for k in range(len(groups) - 1):
        link = margin * math.sqrt(max(sz[groups[k]]) + max(sz[groups[k + 1]]))
        ok &= bests[k] - bests[k + 1] > link
    out = [i for i, r in enumerate(rank) if r is None]
    if out:
        ok &= x[:, out].max(axis=1) < bests[-1]
    return ok


def noise(rng: np.random.Generator, density: str, shape: tuple[int, int]) -> NDArray[np.float64]:
    if density == "gaussian":
        return rng.standard_normal(shape)
    if density == "logistic":
        return rng.logistic(size=shape)
    return rng.gumbel(size=shape)  # numpy's Gumbel is the maximum type, f = exp(-z - e^-z)


MC_CASES = [
    # (m, s, rank, size, margin, density, seed)
    ([0.5, 0.0, -0.3, 0.2, 0.1], [1.0, 0.8, 1.3, 0.5, 2.0], [1, 0, None, 2, None], None, 0.0, "gaussian", 11),
    ([0.5, 0.0, -0.3, 0.2], [1.0, 0.8, 1.3, 0.5], [None, 0, None, 1], None, 0.0, "logistic", 12),
    ([0.5, 0.0, -0.3, 0.2], [1.0, 0.8, 1.3, 0.5], [2, 0, None, 1], None, 0.0, "gumbel", 13),
    ([0.4, 0.0, -0.3], [1.0, 0.8, 1.3], [0, 1, 1], [1.0, 2.0, 3.0], 0.5, "gaussian", 14),
    ([0.4, 0.0, -0.3], [1.0, 0.8, 1.3], [1, 0, 1], [1.0, 2.0, 3.0], 0.5, "gaussian", 15),
    ([0.0, 0.2, -0.1], [1.0, 1.0, 0.6], [0, 0, 0], [1.0, 1.0, 2.0], 0.8, "gaussian", 16),
    ([0.4, 0.0, -0.3, 0.2], [1.0, 0.8, 1.3, 0.5], [0, 1, 1, None], [2.0, 1.0, 1.0, 3.0], 0.3, "gaussian", 17),
    ([1.0, 0.5, 0.0, -0.5], [1.0, 0.8, 1.3, 0.5], [0, 1, 2, None], [2.0, 1.0, 3.0, 1.0], 0.1, "logistic", 18),
    ([0.4, 0.0, -0.3], [1.0, 0.8, 1.3], [0, 0, 1], [1.0, 2.0, 1.0], 0.4, "gumbel", 19),
]


@pytest.mark.parametrize("m, s, rank, size, margin, density, seed", MC_CASES)
def test_outcomes_against_monte_carlo(m: list[float], s: list[float], rank: list[int | None], size: list[float] | None,
                                      margin: float, density: str, seed: int) -> None:
    samples = 1_000_000
    rng = np.random.default_rng(seed)
    x = np.asarray(m) + np.asarray(s) * noise(rng, density, (samples, len(m)))
    sizes = size or [1.0] * len(m)
    p_hat = float(outcome_event(x, rank, sizes, margin).mean())
    se = math.sqrt(p_hat * (1 - p_hat) / samples)
    assert p_hat > 0.01  # common enough that 5 standard errors is a sharp test
    p = math.exp(log_order(m, s, rank, density=density, margin=margin, size=size))
    assert abs(p - p_hat) < 5 * se, (p, p_hat, se)


@pytest.mark.parametrize("rank", [[0, 0, 1, 2], [1, 0, 1, None], [0, 1, 1, 1], [2, 2, 0, 0], [0, 0, 0, 0]])
@pytest.mark.parametrize("density", ["gaussian", "logistic"])
def test_ties_are_the_mean_over_the_group_orders(rank: list[int | None], density: str) -> None:
    # brute force: every way to break the ties (orders within each tied group), mean of log P and of gradients
    m, s = [0.4, -0.2, 0.9, 0.0], [1.0, 0.6, 1.4, 0.8]
    groups = [[i for i, r in enumerate(rank) if r == lv] for lv in sorted({r for r in rank if r is not None})]
    values, grads_m, grads_s = [], [], []
    for perms in itertools.product(*(itertools.permutations(g) for g in groups)):
        strict: list[int | None] = [None] * 4
        place = 0
        for perm in perms:
            for i in perm:
                strict[i] = place
                place += 1
        v, gm, gs = log_order(m, s, strict, density=density, gradient=True)
        values.append(v)
        grads_m.append(gm)
        grads_s.append(gs)
    value, gm, gs = log_order(m, s, rank, density=density, gradient=True)
    assert value == pytest.approx(float(np.mean(values)), abs=1e-12)
    np.testing.assert_allclose(gm, np.mean(grads_m, axis=0), rtol=0, atol=1e-12)
    np.testing.assert_allclose(gs, np.mean(grads_s, axis=0), rtol=0, atol=1e-12)


def test_large_tied_group_is_the_mean_over_all_its_orders() -> None:
    # six tied competitors: brute-force mean over all 720 orders of the log-likelihood
    m = [0.9, 0.4, 0.0, -0.3, -0.8, 1.5]
    rank = [0, 0, 0, 0, 0, 0]
    mean = float(np.mean([log_order(m, rank=ranks_of(p, 6)) for p in itertools.permutations(range(6))]))
    assert log_order(m, rank=rank) == pytest.approx(mean, abs=1e-6)


# -- 4. gradients against finite differences -----------------------------------------------------------------
def central_difference(m: NDArray[np.float64], s: NDArray[np.float64], rank: list[int | None], h: float = 1e-4,
                       **kw: object) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    def f(mm: NDArray[np.float64], ss: NDArray[np.float64]) -> float:
        return float(log_order(mm, ss, rank, **kw))  # type: ignore[arg-type]

    gm, gs = np.empty(len(m)), np.empty(len(m))
    for i in range(len(m)):
        e = np.zeros(len(m))
        e[i] = h
        gm[i] = (f(m + e, s) - f(m - e, s)) / (2 * h)
        gs[i] = (f(m, s + e) - f(m, s - e)) / (2 * h)
    return gm, gs


FD_CASES = [(density, seed) for density in ("gaussian", "logistic", "gumbel", "skew_normal") for seed in range(3)]


@pytest.mark.parametrize("density, seed", FD_CASES)
def test_gradient_against_finite_differences(density: str, seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(3, 7))
    m = rng.normal(0.0, 1.0, n)
    s = 10.0 ** rng.uniform(-0.3, 0.3, n)
    rank: list[int | None] = [int(r) for r in rng.permutation(n)]
    rank[int(rng.integers(n))] = None            # a non-finisher
    if seed == 1:                                # and a tie (margin 0: mean over the group's orders)
        fin = [i for i in range(n) if rank[i] is not None]
        rank[fin[1]] = rank[fin[0]]
    shape = 3.0 if density == "skew_normal" else 0.0
    value, gm, gs = log_order(m, s, rank, density=density, shape=shape, gradient=True)
    fm, fs = central_difference(m, s, rank, density=density, shape=shape)
    np.testing.assert_allclose(gm, fm, rtol=0, atol=1e-6)
    np.testing.assert_allclose(gs, fs, rtol=0, atol=1e-6)


def test_gradient_with_margin_and_no_draw() -> None:
    m, s = np.array([0.3, 0.0, -0.4]), np.array([1.0, 0.8, 1.2])
    _, gm, gs = log_order(m, s, gradient=True, margin=0.2)
    fm, fs = central_difference(m, s, [0, 1, 2], margin=0.2)
    np.testing.assert_allclose(gm, fm, rtol=0, atol=1e-6)
    np.testing.assert_allclose(gs, fs, rtol=0, atol=1e-6)


# -- 5. robustness ---------------------------------------------------------------------------------------------
def test_300_players_in_reverse_order_gradient_sums_to_zero() -> None:
    # translation invariance: sum_i d log P / d m_i = 0
    m = np.linspace(-20.0, 20.0, 300)  # listed increasing and finishing in the listed order: a huge upset
    value, gm, gs = log_order(m, gradient=True)
    assert math.isfinite(value) and value < 0
    assert np.all(np.isfinite(gm)) and np.all(np.isfinite(gs))
    assert abs(gm.sum()) <= 1e-8 * np.max(np.abs(gm))


def test_1000_player_race_sampled_from_the_model() -> None:
    rng = np.random.default_rng(2024)
    m = rng.normal(0.0, 2.0, 1000)
    order = np.argsort(-(m + rng.standard_normal(1000)))
    value, gm, gs = log_order(m[order], gradient=True)  # (its speed is benchmarks/ordering.py's, not a test's)
    assert math.isfinite(value) and value < 0
    assert np.all(np.isfinite(gm)) and np.all(np.isfinite(gs))
    assert abs(gm.sum()) <= 1e-8 * np.max(np.abs(gm))


def _check_finite(m: list[float], s: list[float] | None, rank: list[int | None] | None, margin: float,
                  density: str) -> float:
    draw = rank is not None and len({r for r in rank if r is not None}) < len([r for r in rank if r is not None])
    if margin > 0 and draw:
        value = log_order(m, s, rank, density=density, margin=margin)
    else:
        value, gm, gs = log_order(m, s, rank, density=density, margin=margin, gradient=True)
        assert np.all(np.isfinite(gm)) and np.all(np.isfinite(gs)), (gm, gs)
    assert math.isfinite(value) and value <= 1e-9, value
    assert value > -1e299  # the kernels' floor sentinel (-1e300) is not an answer
    return float(value)


SWEEP = {
    # name: (m, s, rank, margin)
    "shifted_1e6": ([1e6, 1e6 - 1.0, 1e6 - 2.0], None, None, 0.0),
    "tiny_scales": ([0.0, 0.0, 0.0], [1e-4, 1e-4, 1e-4], None, 0.0),
    "huge_scales": ([0.0, 0.0, 0.0], [1e4, 1e4, 1e4], None, 0.0),
    "upset_far_top": ([0.0, 0.1, -0.2, 1e5], None, None, 0.0),
    "far_winner_upset": ([-1e5, 0.1, -0.2, 0.3], None, None, 0.0),
    "tiny_margin_win": ([0.0, 0.5, -0.5], None, None, 1e-12),
    "large_margin_win": ([0.0, 0.5, -0.5], None, None, 50.0),
    "large_margin_draw": ([0.0, 0.5, -0.5], None, [0, 0, 1], 50.0),
    "tiny_margin_draw3": ([0.0, 0.5, -0.5], None, [0, 0, 0], 1e-12),
}


@pytest.mark.parametrize("name", list(SWEEP))
@pytest.mark.parametrize("density", ["gaussian", "logistic", "gumbel"])
def test_extreme_inputs_stay_finite(name: str, density: str) -> None:
    m, s, rank, margin = SWEEP[name]
    value = _check_finite(m, s, rank, margin, density)
    if density == "gumbel" and margin == 0.0 and s is None and rank is None:
        # maximum-type Gumbel noise is Plackett-Luce (McFadden 1974): the closed form holds at any spread
        assert value == pytest.approx(pl_log_order(np.array(m))[0], rel=1e-12, abs=1e-9)


@pytest.mark.parametrize("density", ["gaussian", "logistic", "gumbel"])
def test_huge_spread_in_the_likely_order(density: str) -> None:
    value = _check_finite([1e6, 0.0, -1e6], None, None, 0.0, density)
    assert value == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("density", ["gaussian", "logistic"])
def test_extreme_scale_ratio_two_players(density: str) -> None:
    value = _check_finite([0.0, 0.0], [1e-4, 1e4], None, 0.0, density)
    assert value == pytest.approx(-math.log(2.0), abs=1e-8)  # X_1 - X_2 symmetric about 0


def test_extreme_scale_ratio_three_players() -> None:
    # event contains {X_1 > -4e-4} & {-1 < X_2 < -4e-4} & {X_3 < -1}, independent
    bound = math.log(special.ndtr(4.0) * (special.ndtr(-4e-4) - special.ndtr(-1.0)) * special.ndtr(-1e-4))
    value = _check_finite([0.0, 0.0, 0.0], [1e-4, 1.0, 1e4], None, 0.0, "gaussian")
    assert value >= bound


@pytest.mark.parametrize("density", ["gaussian", "logistic", "gumbel"])
def test_far_below_non_finisher_changes_nothing(density: str) -> None:
    m3 = [0.0, 0.1, -0.2]
    value = _check_finite(m3 + [-1e5], None, [0, 1, 2, None], 0.0, density)
    # P(non-finisher at -1e5 below the third) = 1 - O(e^-1e5) for all three densities
    if density == "gumbel":
        reference = pl_log_order(np.array(m3))[0]   # closed form
    else:
        reference = float(log_order(m3, density=density, precision=2.0))
    assert value == pytest.approx(reference, abs=1e-8)


def mp_draw(margin: float) -> float:
    """``log P(|X_1 - X_2| <= margin sqrt 2)`` for two unit Gaussians, mpmath at 40 digits."""
    with mp.workdps(40):
        e = mp.mpf(margin) * mp.sqrt(2)
        return float(mp.log(mp.ncdf(e / mp.sqrt(2)) - mp.ncdf(-e / mp.sqrt(2))))


@pytest.mark.parametrize("centre, margin", [(0.0, 1e-6), (1e4, 1e-6), (0.0, 1e-12), (1e4, 1e-12), (1e6, 1e-12)])
def test_tiny_margin_draw_against_mpmath(centre: float, margin: float) -> None:
    assert log_order([centre, centre], rank=[0, 0], margin=margin) == pytest.approx(mp_draw(margin), abs=1e-8)


# -- 6. rank probabilities ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("density", ["gaussian", "gumbel", "logistic", "skew_normal"])
def test_rank_probabilities_are_doubly_stochastic_and_column0_is_win(density: str) -> None:
    rng = np.random.default_rng(5)
    m = rng.normal(0.0, 1.5, 7)
    s = 10.0 ** rng.uniform(-0.3, 0.3, 7)
    shape = -2.0 if density == "skew_normal" else 0.0
    p = rank_probabilities(m, s, density=density, shape=shape)
    np.testing.assert_allclose(p.sum(axis=0), 1.0, rtol=0, atol=1e-9)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=0, atol=1e-9)
    win = np.exp(log_win_probabilities(m, density=density, scale=s, shape=shape))
    np.testing.assert_allclose(p[:, 0], win, rtol=0, atol=1e-9)


def brute_places(log_p_of: object, n: int) -> NDArray[np.float64]:
    """``P[i, k] = sum over orders with i in place k of P(order)``."""
    out = np.zeros((n, n))
    for order in itertools.permutations(range(n)):
        p = math.exp(log_p_of(order))  # type: ignore[operator]
        for place, i in enumerate(order):
            out[i, place] += p
    return out


def test_rank_probabilities_three_gaussians_brute_force() -> None:
    m, s = [0.4, -0.3, 0.0], [1.0, 0.6, 1.5]
    # the sum over orders of exp(log_order) (log_order itself is checked against mpmath above)
    ref2 = brute_places(lambda o: log_order(m, s, ranks_of(o, 3)), 3)
    np.testing.assert_allclose(rank_probabilities(m, s), ref2, rtol=0, atol=1e-9)


def test_rank_probabilities_gumbel_is_plackett_luce() -> None:
    v = np.random.default_rng(8).normal(0.0, 1.0, 5)
    ref = brute_places(lambda o: pl_log_order(v[list(o)])[0], 5)  # closed form per order
    np.testing.assert_allclose(rank_probabilities(v, density="gumbel"), ref, rtol=0, atol=1e-9)


def test_rank_probabilities_logistic_monte_carlo() -> None:
    m, s = np.array([0.5, 0.0, -0.4, 0.9]), np.array([1.0, 0.5, 1.5, 0.8])
    samples = 400_000
    x = m + s * np.random.default_rng(21).logistic(size=(samples, 4))
    places = np.argsort(np.argsort(-x, axis=1), axis=1)  # place of each competitor, 0 best
    p_hat = np.stack([(places == k).mean(axis=0) for k in range(4)], axis=1)
    se = np.sqrt(p_hat * (1 - p_hat) / samples)
    p = rank_probabilities(m, s, density="logistic")
    assert np.all(np.abs(p - p_hat) < 5 * se), (p, p_hat)


# -- 7. TrueSkill -----------------------------------------------------------------------------------------------
def test_trueskill_log_likelihood_is_log_order_of_teams() -> None:
    ts = podium.TrueSkill(center=False, update="chain")  # the paper's literal team sums and margins, by hand below
    ordered = podium.TrueSkill(center=False)  # the default: places only ordered
    r = {"a": podium.Rating(27.0, 4.0), "b": podium.Rating(22.5, 6.5), "c": podium.Rating(30.0, 2.0),
         "d": podium.Rating(24.0, 3.0), "e": podium.Rating(20.0, 7.0), "f": podium.Rating(26.0, 5.0)}
    teams = [["a", "b"], ["c"], ["d", "e", "f"]]
    weights = [[1.0, 0.5], [0.8], [1.0, 1.0, 0.3]]
    for ranks in ([0, 1, 2], [1, 2, 0], [2, 0, 1], [0, None, 1]):
        match = podium.Match(teams, ranks=ranks, weights=weights)
        # team performance N(sum w mu, sum w^2 (sigma^2 + beta^2)), by hand
        mean = [sum(w * r[p].mu for p, w in zip(t, ws)) for t, ws in zip(teams, weights)]
        sd = [math.sqrt(sum(w * w * (r[p].sigma ** 2 + ts.beta ** 2) for p, w in zip(t, ws)))
              for t, ws in zip(teams, weights)]
        expected = log_order(mean, sd, ranks, margin=ts._margin, size=[2.0, 1.0, 3.0])
        assert ts.log_likelihood(match, r) == pytest.approx(expected, rel=1e-12)
        assert ordered.log_likelihood(match, r) == pytest.approx(log_order(mean, sd, ranks), rel=1e-12)
    p = ts.rank_probabilities(teams, r, weights=weights)
    np.testing.assert_allclose(p.sum(axis=0), 1.0, atol=1e-9)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-9)
