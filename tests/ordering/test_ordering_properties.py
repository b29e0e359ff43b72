"""Property tests of the ordering engine (``podium.ordering``) over random inputs, against mpmath.

References are independent of the code under test: for two or three competitors the probability of an
order ``a > b > c`` is one integral, ``P = int f_b(x) F_c(x) (1 - F_a(x)) dx`` (condition on the middle
one; a non-finisher below the last finisher is the same event as a strict last place), evaluated by
mpmath at 20 digits over breakpoints at every competitor's location +- multiples of its scale and around
the integrand's mode, within the range where the (log-concave) integrand is above ``e^-90`` of its peak.
Ties (margin 0) are the mean over the tied group's orders of the log-likelihood, as documented.

The Hypothesis searches are marked ``slow`` and left out of ``make test`` (one run took 25 s, another more than
15 minutes: an extreme example costs seconds in mpmath and in the engine); ``make test-slow`` runs them.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from podium.ordering import log_order, rank_probabilities

mp.mp.dps = 20


def _mp_logf(density: str, z: mp.mpf) -> mp.mpf:
    if density == "gaussian":
        return -z * z / 2 - mp.log(mp.sqrt(2 * mp.pi))
    if density == "logistic":
        return -z - 2 * mp.log1p(mp.exp(-z)) if z > 0 else z - 2 * mp.log1p(mp.exp(z))
    return -z - mp.exp(-z)  # maximum-type Gumbel


def _mp_logcdf(density: str, z: mp.mpf, upper: bool) -> mp.mpf:
    if density == "gaussian":
        return mp.log(mp.ncdf(-z if upper else z))
    if density == "logistic":
        return -mp.log1p(mp.exp(z if upper else -z))
    if upper:  # 1 - exp(-e^-z)
        w = mp.exp(-z)
        if w > 1e4:
            # log(1 - e^-w) = -e^-w (1 + O(e^-w)): below e^-10000, zero at any tolerance here; mpmath would
            # otherwise raise its working precision without end to resolve 1 - e^-w
            return -mp.exp(-w) if w < 1e6 else mp.mpf(0)
        return mp.log(-mp.expm1(-w))
    return -mp.exp(-z)


def mp_log_order(m: list[float], s: list[float], order: list[int], density: str) -> float:
    """``log P(X_order[0] > X_order[1] (> X_order[2]))`` by one mpmath integral over the middle one."""
    if len(order) == 2:
        a, b, c = order[0], order[1], None
    else:
        a, b, c = order
    mm = [mp.mpf(v) for v in m]
    ss = [mp.mpf(v) for v in s]

    def logg(x: mp.mpf) -> mp.mpf:
        out = _mp_logf(density, (x - mm[b]) / ss[b]) - mp.log(ss[b])
        out += _mp_logcdf(density, (x - mm[a]) / ss[a], True)
        if c is not None:
            out += _mp_logcdf(density, (x - mm[c]) / ss[c], False)
        return out

    lo = min(mm) - 60 * max(ss)
    hi = max(mm) + 60 * max(ss)
    # golden-section search of the (concave) log-integrand maximum
    inv = (mp.sqrt(5) - 1) / 2
    x1, x2 = hi - inv * (hi - lo), lo + inv * (hi - lo)
    f1, f2 = logg(x1), logg(x2)
    for _ in range(120):
        if f1 < f2:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + inv * (hi - lo)
            f2 = logg(x2)
        else:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - inv * (hi - lo)
            f1 = logg(x1)
    mode = (lo + hi) / 2
    peak = logg(mode)

    def edge(direction: int) -> mp.mpf:
        # walk out until the integrand is below e^-90 of its peak (doubling, then bisection)
        step = min(ss) / 8
        inside = mode
        while True:
            x = mode + direction * step
            if logg(x) < peak - 90:
                break
            inside = x
            step *= 2
        outside = x
        for _ in range(60):
            mid = (inside + outside) / 2
            if logg(mid) < peak - 90:
                outside = mid
            else:
                inside = mid
        return outside

    left, right = edge(-1), edge(1)
    points = {left, right, mode}
    for i in range(len(m)):
        for k in (-8, -4, -2, -1, -0.5, 0, 0.5, 1, 2, 4, 8):
            p = mm[i] + k * ss[i]
            if left < p < right:
                points.add(p)
    span = right - left
    for k in range(1, 16):
        points.add(left + span * k / 16)
    pts = sorted(points)
    total = mp.quad(lambda x: mp.exp(logg(x) - peak), pts)
    return float(peak + mp.log(total))


densities = st.sampled_from(["gaussian", "logistic", "gumbel"])
# the mpmath references cost 0.1-3 s each: failures are reported as found, not shrunk (that took 11 minutes)
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)


@st.composite
def races(draw: st.DrawFn) -> tuple[list[float], list[float], list[int], str]:
    n = draw(st.integers(2, 3))
    density = draw(densities)
    # Known gap (issue 14 stays open for it): with exponential tails (logistic, Gumbel) an upset across more
    # than about 1e4 scales has a posterior flat over the whole spread, and the window search runs out of
    # rounds before it covers it (log P off by log of the uncovered fraction).  Gaussian spreads go to 1e6.
    spread = draw(st.sampled_from([0.3, 1.0, 5.0, 1e3, 1e6] if density == "gaussian" else [0.3, 1.0, 5.0, 1e3]))
    ratio = draw(st.sampled_from([1.0, 10.0, 1e4, 1e8]))
    m = [draw(st.floats(-1.0, 1.0)) * spread for _ in range(n)]
    logs = [draw(st.floats(0.0, 1.0)) for _ in range(n)]
    s = [float(ratio ** v) for v in logs]
    order = draw(st.permutations(list(range(n))))
    return m, s, list(order), density


def _ranks(order: list[int]) -> list[int | None]:
    rank: list[int | None] = [0] * len(order)
    for place, i in enumerate(order):
        rank[i] = place
    return rank


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=NO_SHRINK)
@given(races())
def test_log_order_against_mpmath(race: tuple[list[float], list[float], list[int], str]) -> None:
    m, s, order, density = race
    reference = mp_log_order(m, s, order, density)
    value, gm, gs = log_order(m, s, _ranks(order), density=density, gradient=True)
    assert math.isfinite(value)
    assert value == pytest.approx(reference, abs=1e-9 * max(1.0, abs(reference) * 1e-3)), (value, reference)
    assert np.all(np.isfinite(gm)) and np.all(np.isfinite(gs))
    # translation invariance: the location gradient sums to zero
    assert abs(gm.sum()) <= 1e-9 * max(1.0, np.abs(gm).max())


@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=NO_SHRINK)
@given(races())
def test_non_finisher_is_censored_exactly(race: tuple[list[float], list[float], list[int], str]) -> None:
    # with three competitors, "c did not finish, a beat b" is the event a > b > c (c below the last finisher)
    m, s, order, density = race
    if len(order) != 3:
        return
    rank: list[int | None] = [None] * 3
    rank[order[0]], rank[order[1]] = 0, 1
    reference = mp_log_order(m, s, order, density)
    assert log_order(m, s, rank, density=density) == pytest.approx(
        reference, abs=1e-9 * max(1.0, abs(reference) * 1e-3))


@pytest.mark.slow
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=NO_SHRINK)
@given(races())
def test_tie_is_the_mean_over_orders(race: tuple[list[float], list[float], list[int], str]) -> None:
    m, s, order, density = race
    a, b = order[0], order[1]
    rank = _ranks(order)
    rank[b] = rank[a]  # a and b tied at the top
    swapped = list(order)
    swapped[0], swapped[1] = b, a
    reference = 0.5 * (mp_log_order(m, s, order, density) + mp_log_order(m, s, swapped, density))
    assert log_order(m, s, rank, density=density) == pytest.approx(
        reference, abs=1e-9 * max(1.0, abs(reference) * 1e-3))


@pytest.mark.parametrize("order", [[0, 1, 2], [1, 0, 2]])
def test_a_spread_1e7_times_its_neighbours_squeezed_between_them(order: list[int]) -> None:
    # Found by make explore (test_tie_is_the_mean_over_orders): the wide competitor placed between the two
    # narrow ones.  Expectation propagation's three sweeps left its window 1e4 spreads wide and far from the
    # mass (log P was the -1e300 sentinel), and with the windows right the adaptive engine's mass check at
    # 1e-8 let log P be 6.5e-9 off in the other order.
    m = [-684.2547107721781, -197.63073906307605, -25.36417541825542]
    s = [17.900051553758885, 46342827.68119254, 1.0]
    reference = mp_log_order(m, s, order, "gaussian")
    value, gm, _ = log_order(m, s, _ranks(order), gradient=True)
    assert value == pytest.approx(reference, abs=1e-9)
    assert abs(gm.sum()) <= 1e-9 * max(1.0, np.abs(gm).max())


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 12), st.integers(0, 2**32 - 1), densities, st.sampled_from([1.0, 1e2, 1e4, 1e8]))
def test_place_probabilities_are_doubly_stochastic(n: int, seed: int, density: str, ratio: float) -> None:
    rng = np.random.default_rng(seed)
    m = rng.normal(0.0, 2.0, n)
    s = ratio ** rng.uniform(0.0, 1.0, n)
    p = rank_probabilities(m, s, density=density)
    assert np.all(np.isfinite(p)) and np.all(p >= 0.0)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(p.sum(axis=0), 1.0, rtol=0, atol=1e-12)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 40), st.integers(0, 2**32 - 1), densities, st.sampled_from([0.5, 2.0, 20.0]))
def test_larger_races_are_finite_and_translation_invariant(n: int, seed: int, density: str, spread: float) -> None:
    rng = np.random.default_rng(seed)
    m = rng.normal(0.0, spread, n)
    s = np.exp(rng.normal(0.0, 0.3, n))
    rank: list[int | None] = [int(r) for r in rng.permutation(n)]
    if n > 3:
        rank[int(rng.integers(n))] = None
    value, gm, gs = log_order(m, s, rank, density=density, gradient=True)
    assert math.isfinite(value) and value <= 1e-12
    assert np.all(np.isfinite(gm)) and np.all(np.isfinite(gs))
    assert abs(gm.sum()) <= 1e-9 * max(1.0, np.abs(gm).max())
    shifted = log_order(m + 123.0, s, rank, density=density)
    assert shifted == pytest.approx(value, abs=1e-9 * max(1.0, abs(value)))


def test_logistic_crowded_race_gradient_sums_to_zero() -> None:
    """Found by the search above (logistic noise, 38 competitors spread 20, seed 2219): a non-finisher far above
    everyone presses the chain together, each round's edge check found the next stage's window too short, and
    the eight rounds the engine allowed ran out with the location gradient summing to -2.8e-9 (bound 1.7e-9).
    It needs 12 (each widening reveals the next stage's tail); the engine now allows 16, and the sum is then
    4e-13 (log P moves by 5e-13)."""
    rng = np.random.default_rng(2219)
    n = 38
    m = rng.normal(0.0, 20.0, n)
    s = np.exp(rng.normal(0.0, 0.3, n))
    rank: list[int | None] = [int(r) for r in rng.permutation(n)]
    rank[int(rng.integers(n))] = None
    _, gm, _ = log_order(m, s, rank, density="logistic", gradient=True)
    assert abs(gm.sum()) <= 1e-9 * max(1.0, np.abs(gm).max())


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 14), st.integers(0, 2**32 - 1), st.sampled_from(["gaussian", "gumbel", "logistic"]),
       st.sampled_from([0.3, 2.0, 1e3]), st.sampled_from([0.0, 25.0, 1e5]), st.sampled_from([0.0, 1.0, 4.0]),
       st.booleans())
def test_the_gradient_keeps_the_invariances_of_an_order(n: int, seed: int, density: str, spread: float, offset: float,
                                                          decades: float, dnf: bool) -> None:
    """An order of ``X_i = m_i + s_i e_i`` is unchanged by a common shift and by a common positive factor on ``m``
    and ``s``: ``sum dm = 0`` and ``sum m dm + s ds = 0``, each below 1e-9 of its largest term (issue 32: they were
    1.9e-9 and 3.1e-8), over random orders, scales spanning ``decades`` and non-finishers."""
    rng = np.random.default_rng(seed)
    m = offset + rng.normal(0.0, spread, n)
    s = 10.0 ** rng.uniform(0.0, decades, n)
    rank: list[int | None] = [int(r) for r in rng.permutation(n)]
    if dnf and n > 2:
        for i in rng.choice(n, size=int(rng.integers(1, n)), replace=False):
            rank[int(i)] = None
    _, dm, ds = log_order(m, s, rank, density=density, gradient=True)
    assert np.all(np.isfinite(dm)) and np.all(np.isfinite(ds))
    largest = np.abs(dm).max()
    assert abs(dm.sum()) <= 1e-9 * largest
    terms = np.r_[m * dm, s * ds]
    assert abs(terms.sum()) <= 1e-9 * np.abs(terms).max()
    # ... and the projection that keeps them left the gradient right: a central difference of log P along one
    # location (about the shifted locations, which the invariance allows, so that a large offset costs no digits).
    i = int(rng.integers(n))
    h = 1e-3 * min(spread, float(s.min()))
    shape = 0.0
    up, down = m - offset, m - offset
    up[i] += h
    down[i] -= h
    numeric = (log_order(up, s, rank, density=density, shape=shape)
               - log_order(down, s, rank, density=density, shape=shape)) / (2 * h)
    assert numeric == pytest.approx(dm[i], abs=1e-5 * max(1.0, largest))


@pytest.mark.parametrize("density", ["gaussian", "gumbel", "logistic", "skew_normal"])
def test_exchangeable_non_finishers_have_equal_derivatives(density: str) -> None:
    """Found while testing the gradient's invariances: two tied finishers above six non-finishers, five of them
    at the same location.  Those five are exchangeable, so ``d log P / d m_i`` (a central difference of the value)
    is the same for each; with the skew-normal (shape 3) the differences ran from 0.5235 to 0.5362, the partials
    summed to 7.3 where a common shift moves log P by nothing, and log P was 1.68 too low (issue 32): the
    non-finishers' distribution functions, integrated on the grid, were held constant above the last finisher's
    window (``tests/ordering/test_skew_normal_non_finishers.py``)."""
    shape = 3.0 if density == "skew_normal" else 0.0
    m = np.array([-2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0])
    rank: list[int | None] = [0, None, None, None, None, None, None, 0]
    h = 1e-4
    partial = []
    for i in range(1, 6):
        up, down = m.copy(), m.copy()
        up[i] += h
        down[i] -= h
        partial.append((log_order(up, None, rank, density=density, shape=shape)
                        - log_order(down, None, rank, density=density, shape=shape)) / (2 * h))
    assert max(partial) - min(partial) < 1e-5, partial
