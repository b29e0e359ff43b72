"""Glicko-2 numerics of ``podium.models.glicko``.

References: Glickman (2012), "Example of the Glicko-2 system" (glicko.net/glicko/glicko2.pdf): the worked
example after the algorithm (steps 2-8) and the formulas of steps 3-7; the PyPI package ``glicko2`` 2.1.0
(``glicko2/glicko2.py``), which differs from the note in one expression of step 5 (see
:func:`test_package_volatility_uses_the_rating_where_glickman_has_phi`).
"""

from __future__ import annotations

import inspect
import itertools
import math
from types import ModuleType

import mpmath
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from podium.kernels.glicko import SCALE, expected_score, glicko_g, new_volatility, period_update

EPSILON = 1e-6  # Glickman's convergence tolerance; glicko2 2.1.0 uses the same (``eps = 0.000001``)
Opponents = list[tuple[float, float, float]]  # (rating, RD, score) in rating points


def sums(mu: float, opponents: Opponents) -> tuple[float, float]:
    """``(v_inv, delta_sum)`` of steps 3-4 from Glicko-2-scale ``mu`` and opponents in rating points."""
    v_inv = delta_sum = 0.0
    for r, rd, s in opponents:
        mu_j, phi_j = (r - 1500.0) / SCALE, rd / SCALE
        g = glicko_g(phi_j)
        e, one_minus_e = expected_score(mu, mu_j, phi_j), expected_score(mu_j, mu, phi_j)
        v_inv += g * g * e * one_minus_e
        delta_sum += g * (s * one_minus_e - (1.0 - s) * e)  # g (s - E), exact for s = 0, 1/2, 1
    return v_inv, delta_sum


def podium_update(rating: float, rd: float, sigma: float, tau: float, opponents: Opponents,
                  epsilon: float = EPSILON) -> tuple[float, float, float]:
    """One rating period in rating points: ``(r', RD', sigma')``."""
    mu = (rating - 1500.0) / SCALE
    mu_new, phi_new, sigma_new = period_update(mu, rd / SCALE, sigma, *sums(mu, opponents), tau, epsilon)
    return 1500.0 + SCALE * mu_new, SCALE * phi_new, sigma_new


# -- Glickman's worked example -----------------------------------------------------------------------------
EXAMPLE: Opponents = [(1400.0, 30.0, 1.0), (1550.0, 100.0, 0.0), (1700.0, 300.0, 0.0)]  # player 1500, 200, 0.06


def test_glickmans_worked_example_intermediate_values() -> None:
    phi = [rd / SCALE for _, rd, _ in EXAMPLE]
    mu = [(r - 1500.0) / SCALE for r, _, _ in EXAMPLE]
    assert [round(x, 4) for x in mu] == [-0.5756, 0.2878, 1.1513]  # step 2
    assert [round(x, 4) for x in phi] == [0.1727, 0.5756, 1.7269]
    g = [glicko_g(p) for p in phi]
    e = [expected_score(0.0, m, p) for m, p in zip(mu, phi)]
    assert [round(x, 4) for x in g] == [0.9955, 0.9531, 0.7242]  # step 3
    assert [round(x, 3) for x in e] == [0.639, 0.432, 0.303]
    # The note's v = 1.7785 and Delta = -0.4834 (steps 3, 4) come from its printed g (4 places) and E (3 places):
    g_note, e_note, s = [0.9955, 0.9531, 0.7242], [0.639, 0.432, 0.303], [1.0, 0.0, 0.0]
    v_inv_note = sum(gj * gj * ej * (1.0 - ej) for gj, ej in zip(g_note, e_note))
    delta_sum_note = sum(gj * (sj - ej) for gj, ej, sj in zip(g_note, e_note, s))
    assert round(1.0 / v_inv_note, 4) == 1.7785 and round(delta_sum_note / v_inv_note, 4) == -0.4834
    # Unrounded they are 1.77898 and -0.48393 (glicko2 2.1.0 computes the same).
    v_inv, delta_sum = sums(0.0, EXAMPLE)
    assert round(1.0 / v_inv, 4) == 1.7790 and round(delta_sum / v_inv, 4) == -0.4839
    # Step 5 from the note's own v and Delta: it prints sigma' = 0.05999, the first five places of 0.0599960
    # (truncated, not rounded).
    sigma_new = new_volatility(200.0 / SCALE, 0.06, 1.7785, -0.4834, 0.5, EPSILON)
    assert math.floor(sigma_new * 1e5) / 1e5 == 0.05999 and round(sigma_new, 6) == 0.059996


def test_glickmans_worked_example_result() -> None:
    # The note's step 8: r' = 1464.06, RD' = 151.52, sigma' = 0.05999, from mu' = -0.2069 and phi' = 0.8722.
    mu_new, phi_new, sigma_new = period_update(0.0, 200.0 / SCALE, 0.06, *sums(0.0, EXAMPLE), 0.5, EPSILON)
    assert round(mu_new, 4) == -0.2069 and round(phi_new, 4) == 0.8722
    assert round(SCALE * phi_new, 2) == 151.52
    assert math.floor(sigma_new * 1e5) / 1e5 == 0.05999  # 0.0599960, printed truncated
    # The note converts its rounded mu' = -0.2069: 1500 + 173.7178 * (-0.2069) = 1464.06.  Unrounded, r' is
    # 1464.0507 (1464.05 to two places), which every implementation at full precision gets.
    assert round(1500.0 + SCALE * round(mu_new, 4), 2) == 1464.06
    assert round(1500.0 + SCALE * mu_new, 4) == 1464.0507


# -- the PyPI package glicko2 2.1.0 ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def glicko2() -> ModuleType:
    return pytest.importorskip("glicko2")


def package_update(glicko2: ModuleType, rating: float, rd: float, sigma: float, tau: float,
                   opponents: Opponents) -> tuple[float, float, float]:
    player = glicko2.Player(rating=rating, rd=rd, vol=sigma)
    player._tau = tau  # the package's system constant is the class attribute Player._tau = 0.5
    player.update_player([r for r, _, _ in opponents], [d for _, d, _ in opponents], [s for _, _, s in opponents])
    return player.rating, player.rd, player.vol


OPPONENTS = st.lists(st.tuples(st.floats(800.0, 2400.0), st.floats(30.0, 350.0), st.sampled_from([0.0, 0.5, 1.0])),
                     min_size=1, max_size=10)
RD = st.integers(30 * 1024, 350 * 1024).map(lambda k: k / 1024)  # exact binary: (1500 +- RD) - 1500 == +-RD
SIGMA = st.floats(0.02, 0.12)
TAU = st.floats(0.3, 1.2)  # Glickman's suggested range


def test_package_volatility_uses_the_rating_where_glickman_has_phi(glicko2: ModuleType) -> None:
    """The package's step-5 function ``Player._f`` (glicko2/glicko2.py, lines 138-139 in 2.1.0) computes
    ``num1 = ex * (delta**2 - self.__rating**2 - v - ex)`` and ``denom1 = 2 * ((self.__rating**2 + v + ex)**2)``
    where ``self.__rating`` is ``mu = (r - 1500) / 173.7178``: ``mu^2`` stands where Glickman's ``f`` has
    ``phi^2 = self.__rd**2``.  The bracket of ``_newVol`` (lines 106-107) does use ``self.__rd**2``, and so do
    steps 6 and 7.  Its sigma' therefore solves ``f`` with ``phi^2`` replaced by ``mu^2``: Glickman's only when
    ``|r - 1500| = RD``; at ``r = 1500`` it drops ``phi^2``.  Its epsilon is Glickman's ``0.000001``.
    """
    source = inspect.getsource(glicko2.Player)
    assert "num1 = ex * (delta**2 - self.__rating**2 - v - ex)" in source
    assert "denom1 = 2 * ((self.__rating**2 + v + ex)**2)" in source
    assert "eps = 0.000001" in source
    # A 2200 player (RD 60, sigma 0.06) who loses to 1800 and 1900 and draws 2000: mu^2 = 11.9, phi^2 = 0.12.
    rating, rd, sigma, tau = 2200.0, 60.0, 0.06, 0.5
    opponents: Opponents = [(1800.0, 50.0, 0.0), (1900.0, 80.0, 0.0), (2000.0, 60.0, 0.5)]
    mu, phi = (rating - 1500.0) / SCALE, rd / SCALE
    v_inv, delta_sum = sums(mu, opponents)
    v, delta = mpmath.mpf(1.0 / v_inv), mpmath.mpf(delta_sum / v_inv)
    a = mpmath.log(mpmath.mpf(sigma) ** 2)

    def f(x: mpmath.mpf, phi2: float) -> mpmath.mpf:  # the note's step 5, at 30 digits
        ex = mpmath.exp(x)
        return ex * (delta**2 - phi2 - v - ex) / (2 * (phi2 + v + ex) ** 2) - (x - a) / tau**2

    with mpmath.workdps(30):
        root_glickman = mpmath.findroot(lambda x: f(x, phi * phi), a)
        root_package = mpmath.findroot(lambda x: f(x, mu * mu), a)
        x_podium = math.log(podium_update(rating, rd, sigma, tau, opponents)[2] ** 2)
        x_package = math.log(package_update(glicko2, rating, rd, sigma, tau, opponents)[2] ** 2)
        # Illinois stops with the root between A and B, |B - A| <= epsilon, and returns A.
        assert abs(x_podium - root_glickman) <= EPSILON and abs(x_package - root_package) <= EPSILON
        assert abs(x_package - root_glickman) > 1000 * EPSILON
        assert abs(f(x_podium, phi * phi)) < 1e-5 < 1e-3 < abs(f(x_package, phi * phi))
    r_pod, rd_pod, s_pod = podium_update(rating, rd, sigma, tau, opponents)
    r_pkg, rd_pkg, s_pkg = package_update(glicko2, rating, rd, sigma, tau, opponents)
    assert round(s_pod, 5) == 0.06004 and round(s_pkg, 5) == 0.06000
    assert abs(r_pod - r_pkg) > 1e-3 and abs(rd_pod - rd_pkg) > 1e-3


@settings(max_examples=200)
@given(opponents=OPPONENTS, rd=RD, sigma=SIGMA, tau=TAU, side=st.sampled_from([-1.0, 1.0]))
def test_agrees_with_package_where_its_volatility_function_is_glickmans(
        glicko2: ModuleType, opponents: Opponents, rd: float, sigma: float, tau: float, side: float) -> None:
    # At r = 1500 +- RD the package's mu^2 equals phi^2 (see the test above), so its update is Glickman's.
    rating = 1500.0 + side * rd
    ours = podium_update(rating, rd, sigma, tau, opponents)
    theirs = package_update(glicko2, rating, rd, sigma, tau, opponents)
    for x, y in zip(ours, theirs):
        assert abs(x - y) <= 1e-9


@given(opponents=OPPONENTS, rd=RD, sigma=SIGMA, tau=TAU)
def test_at_1500_the_package_is_glickman_without_phi_in_f(
        glicko2: ModuleType, opponents: Opponents, rd: float, sigma: float, tau: float) -> None:
    # At r = 1500 (mu = 0) the package's f lacks phi^2.  When Delta^2 <= v neither bracket rule sees phi^2
    # either, so its sigma' is new_volatility at phi = 0, and its r' and RD' are steps 6-8 with that sigma':
    # everything else (g, E, v, Delta, steps 6-8) agrees to 1e-9.
    v_inv, delta_sum = sums(0.0, opponents)
    v, delta = 1.0 / v_inv, delta_sum / v_inv
    assume(delta * delta <= v)
    rating, rd_new, sigma_new = package_update(glicko2, 1500.0, rd, sigma, tau, opponents)
    assert abs(sigma_new - new_volatility(0.0, sigma, v, delta, tau, EPSILON)) <= 1e-9
    phi_star2 = (rd / SCALE) ** 2 + sigma_new**2
    phi_new = 1.0 / math.sqrt(1.0 / phi_star2 + v_inv)
    assert abs(rd_new - SCALE * phi_new) <= 1e-9
    assert abs(rating - (1500.0 + SCALE * phi_new**2 * delta_sum)) <= 1e-9


def test_no_games_is_step_6_as_in_the_package(glicko2: ModuleType) -> None:
    assert period_update(0.7, 1.2, 0.06, 0.0, 0.0, 0.5, EPSILON) == (0.7, math.sqrt(1.2**2 + 0.06**2), 0.06)
    player = glicko2.Player(rating=1621.6, rd=208.5, vol=0.06)
    player.did_not_compete()
    _, phi_new, _ = period_update((1621.6 - 1500.0) / SCALE, 208.5 / SCALE, 0.06, 0.0, 0.0, 0.5, EPSILON)
    assert SCALE * phi_new == pytest.approx(player.rd, rel=1e-14)


# -- robustness ---------------------------------------------------------------------------------------------
def test_expected_score_does_not_overflow() -> None:
    assert expected_score(1e6, 0.0, 0.1) == 1.0 and expected_score(-1e6, 0.0, 0.1) == 0.0
    # The tail is accurate, so 1 - E is best computed as E with the players swapped.
    assert expected_score(-50.0, 0.0, 0.0) == pytest.approx(math.exp(-50.0), rel=1e-14)
    for d in (-30.0, -0.3, 0.0, 2.0, 40.0):
        assert expected_score(d, 0.0, 0.8) + expected_score(0.0, d, 0.8) == pytest.approx(1.0, abs=2.3e-16)


def test_extreme_inputs_stay_finite() -> None:
    """RD 1e-6 to 1e4 for the player and the opponent, rating gaps of 10,000 points, any result, tau from 1e-200
    to 1e6, sigma from 1e-6 to 1."""
    grid = itertools.product([1e-6, 50.0, 1e4], [1e-6, 50.0, 1e4], [-10_000.0, 0.0, 10_000.0], [0.0, 0.5, 1.0],
                             [1e-200, 1e-12, 0.5, 1e3, 1e6], [1e-6, 0.06, 1.0])
    for rd, rd_j, gap, s, tau, sigma in grid:
        out = podium_update(1500.0, rd, sigma, tau, [(1500.0 + gap, rd_j, s)])
        assert all(math.isfinite(x) for x in out) and out[1] > 0.0 and out[2] > 0.0, (rd, rd_j, gap, s, tau, sigma)


@pytest.mark.parametrize("v_inv", [5e-324, 1e-300, 1e-120, 1e-30])
@pytest.mark.parametrize("delta_sum", [0.0, 1e-300, 1.0, -1.0, -10.0])
@pytest.mark.parametrize("sigma", [0.06, 1.0])
def test_tiny_v_inv_stays_finite(v_inv: float, delta_sum: float, sigma: float) -> None:
    mu_new, phi_new, sigma_new = period_update(0.3, 1.0, sigma, v_inv, delta_sum, 0.5, EPSILON)
    assert all(math.isfinite(x) for x in (mu_new, phi_new, sigma_new)) and phi_new > 0.0 and sigma_new > 0.0
    # Bounded limit (period_update's docstring) while e sigma^2 tau^2 delta_sum^2 <= 2: phi' -> phi*,
    # mu' -> mu + phi*^2 delta_sum.  Beyond it (sigma = 1, delta_sum = -10) the update grows like 1 / v_inv.
    if math.e * sigma**2 * 0.25 * delta_sum**2 <= 2.0:
        phi_star2 = 1.0 + sigma_new**2
        assert phi_new == pytest.approx(math.sqrt(phi_star2), rel=1e-12)
        assert mu_new == pytest.approx(0.3 + phi_star2 * delta_sum, rel=1e-12)
    else:
        assert sigma_new > 1e10 and mu_new < -1e10


def test_certain_results_10000_points_apart() -> None:
    # The expected result of a certain game carries no information: the no-games update.  Its upset moves mu by
    # phi*^2 g toward the winner, sigma barely (period_update's docstring, the limit v_inv -> 0).
    phi, sigma = 200.0 / SCALE, 0.06
    no_games = (1500.0, SCALE * math.sqrt(phi**2 + sigma**2), sigma)
    g = glicko_g(30.0 / SCALE)
    for gap in (-10_000.0, 10_000.0):
        expected = podium_update(1500.0, 200.0, sigma, 0.5, [(1500.0 + gap, 30.0, float(gap < 0))])
        assert expected == pytest.approx(no_games, rel=1e-12)
        r_new, _, sigma_new = podium_update(1500.0, 200.0, sigma, 0.5, [(1500.0 + gap, 30.0, float(gap > 0))])
        assert r_new == pytest.approx(1500.0 + math.copysign(SCALE * (phi**2 + sigma_new**2) * g, gap), rel=1e-12)
        assert sigma_new == pytest.approx(sigma, rel=1e-3)


def test_volatility_loops_terminate() -> None:
    phi, sigma, v, delta = 1.1513, 0.06, 1.7785, -0.4834
    # tau far below the spacing of floats near ln sigma^2: the k search would never leave A; sigma' = sigma.
    assert new_volatility(phi, sigma, v, delta, 1e-20, EPSILON) == pytest.approx(sigma, rel=1e-15)
    # epsilon = 0: Illinois runs until it stalls, at the root to rounding.
    exact = new_volatility(phi, sigma, v, delta, 0.5, 0.0)
    assert exact == pytest.approx(new_volatility(phi, sigma, v, delta, 0.5, 1e-12), rel=1e-12)
    # tau = 1: sigma' is the root of f, which Illinois's answer differs from by at most epsilon in ln sigma'^2.
    assert abs(math.log(new_volatility(phi, sigma, v, delta, 1.0, EPSILON) ** 2)
               - math.log(new_volatility(phi, sigma, v, delta, 1.0, 0.0) ** 2)) <= EPSILON
