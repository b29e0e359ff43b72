"""The ordering engine's fast tier (podium.ordering.gauss_chain) against the adaptive engine and closed forms.

References: the adaptive engine (podium.ordering.chain, tested against mpmath in test_ordering.py) run at six
times its default precision, which converges to about 1e-12 on these races (h^8 in its step); the
three-competitor Gaussian order against an mpmath 1-D integral; a single finisher above non-finishers in
closed form.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from podium.ordering.chain import order_log_prob
from podium.ordering.gauss_chain import gauss_order_log_prob
from podium.ordering import GAUSSIAN


def _dnf(d: np.ndarray) -> np.ndarray:
    return d if len(d) else np.zeros(1, dtype=np.int64)


def fast(loc, scale, members, dnf, precision=1.0):
    n = len(loc)
    gl, gs = np.zeros(n), np.zeros(n)
    lp = gauss_order_log_prob(loc, scale, members, len(members), _dnf(dnf), len(dnf), True, gl, gs, precision)
    return lp, gl, gs


def adaptive(loc, scale, members, dnf, precision=6.0):
    n, st = len(loc), len(members)
    gl, gs = np.zeros(n), np.zeros(n)
    lp = order_log_prob(loc, scale, GAUSSIAN, 0.0, np.arange(st + 1), members, st, np.zeros(max(st, 1)), 0.0,
                        np.ones(n), _dnf(dnf), len(dnf), True, gl, gs, precision, False)  # (not the fast tier)
    return lp, gl, gs


def _race(rng: np.random.Generator):
    n = int(rng.integers(3, 30))
    loc = rng.normal(size=n) * rng.choice([0.3, 1.0, 3.0])
    scale = np.exp(rng.normal(size=n) * rng.choice([0.0, 0.3, 1.0]))
    perf = loc + scale * rng.normal(size=n) * rng.choice([1.0, 2.0, 5.0])  # up to heavy upsets
    order = np.argsort(-perf)
    k = int(rng.integers(0, 3))
    return loc, scale, order[:n - k].copy(), order[n - k:].copy()


def test_random_races_match_the_adaptive_engine_to_1e9():
    rng = np.random.default_rng(20261125)
    answered = 0
    for _ in range(60):
        loc, scale, members, dnf = _race(rng)
        lp, gl, gs = fast(loc, scale, members, dnf)
        if math.isnan(lp):
            continue  # the adaptive engine answers these (log_outcome falls through)
        answered += 1
        ref, rgl, rgs = adaptive(loc, scale, members, dnf)
        assert abs(lp - ref) <= 1e-9, (lp, ref)
        big = max(1.0, float(np.max(np.abs(rgl))))
        assert np.max(np.abs(gl - rgl)) <= 1e-8 * big
        assert np.max(np.abs(gs - rgs)) <= 1e-8 * max(1.0, float(np.max(np.abs(rgs))))
        # translation invariance: the location gradient sums to zero
        assert abs(gl.sum()) <= 1e-9 * big
    assert answered >= 45  # the tier takes most races (else it is only overhead)


def test_the_adaptive_engine_itself_is_within_1e9_on_long_races():
    """The races the fast tier declines go to the adaptive engine, so it must meet the same 1e-9.  With a
    step of 0.4 over the log-slope its error built up over 20-30 stages to 5.9e-9 (300 races of seed 7)."""
    rng = np.random.default_rng(7)
    checked = 0
    while checked < 10:
        loc, scale, members, dnf = _race(rng)
        if len(loc) < 20:
            continue
        checked += 1
        ref = adaptive(loc, scale, members, dnf)[0]
        assert abs(adaptive(loc, scale, members, dnf, precision=1.0)[0] - ref) <= 1e-9


@pytest.mark.parametrize("n", [6, 20, 100])
def test_races_drawn_from_the_model_are_answered_by_the_fast_tier(n):
    rng = np.random.default_rng(n)
    loc = rng.normal(size=n)
    order = np.argsort(-(loc + rng.normal(size=n)))
    lp, gl, _ = fast(loc, np.ones(n), order, np.zeros(0, dtype=np.int64))
    assert math.isfinite(lp)
    ref, rgl, _ = adaptive(loc, np.ones(n), order, np.zeros(0, dtype=np.int64))
    assert abs(lp - ref) <= 1e-9
    assert np.max(np.abs(gl - rgl)) <= 1e-8 * max(1.0, float(np.max(np.abs(rgl))))


def test_three_gaussians_against_mpmath():
    loc = np.array([0.3, -0.2, 1.1])
    scale = np.array([1.0, 0.7, 1.6])
    order = np.array([2, 0, 1])  # the strongest first, then an upset below it
    lp, _, _ = fast(loc, scale, order, np.zeros(0, dtype=np.int64))
    mpmath.mp.dps = 30
    a, b, c = (mpmath.mpf(float(v)) for v in loc[order])
    sa, sb, sc = (mpmath.mpf(float(v)) for v in scale[order])
    # P(X_a > X_b > X_c) = int phi_b(x) P(X_a > x) P(X_c < x) dx
    f = lambda x: (mpmath.npdf(x, b, sb) * mpmath.ncdf((a - x) / sa) * mpmath.ncdf((x - c) / sc))
    ref = float(mpmath.log(mpmath.quad(f, [-mpmath.inf, b - 5 * sb, b, b + 5 * sb, mpmath.inf])))
    assert abs(lp - ref) <= 1e-10


def test_one_finisher_above_non_finishers_closed_form():
    # P(X_0 > max(X_1, X_2)) with the non-finishers unordered: int phi_0(x) Phi_1(x) Phi_2(x) dx
    loc = np.array([0.5, 0.0, -1.0])
    scale = np.array([1.0, 2.0, 0.5])
    lp, gl, _ = fast(loc, scale, np.array([0]), np.array([1, 2]))
    mpmath.mp.dps = 30
    f = lambda x: (mpmath.npdf(x, 0.5, 1.0) * mpmath.ncdf(x / 2.0) * mpmath.ncdf((x + 1.0) / 0.5))
    ref = float(mpmath.log(mpmath.quad(f, [-mpmath.inf, -2, 0.5, 3, mpmath.inf])))
    assert abs(lp - ref) <= 1e-10
    assert abs(gl.sum()) <= 1e-9


def test_beyond_its_reach_it_declines_instead_of_guessing():
    # a spread of 1e6 scales: the uniform lattice would need 1e8 nodes; the tier returns NaN and adds nothing
    loc = np.array([0.0, 1e6, -1e6])
    gl, gs = np.zeros(3), np.zeros(3)
    lp = gauss_order_log_prob(loc, np.ones(3), np.array([0, 1, 2]), 3, np.zeros(1, dtype=np.int64), 0, True,
                              gl, gs, 1.0)
    assert math.isnan(lp)
    assert not gl.any() and not gs.any()


def test_a_thousand_player_race_is_answered_where_expectation_propagation_misplaces_the_windows():
    """In a crowded 1,000-player race, the windows' expectation propagation (three sweeps) leaves the middle
    stages' means 3-4 spreads from the truth; the tier measures the posteriors on its first attempt, moves
    the windows there and answers.  Reference: the adaptive engine at its default precision, whose own
    error here is about 4e-8 (at 3x precision the two engines agree to 5e-11)."""
    n = 1000
    rng = np.random.default_rng(0)
    loc = rng.normal(size=n)
    order = np.argsort(-(loc + rng.normal(size=n)))
    none = np.zeros(0, dtype=np.int64)
    lp, gl, _ = fast(loc, np.ones(n), order, none)
    assert math.isfinite(lp)
    ref, rgl, _ = adaptive(loc, np.ones(n), order, none, precision=1.0)
    assert abs(lp - ref) <= 1e-7 + 1e-13 * abs(ref)
    # the posterior means (loc + d log P / d loc for unit scales) agree in the crowded middle
    assert np.max(np.abs(gl - rgl)) <= 1e-6
    assert abs(gl.sum()) <= 1e-9 * max(1.0, float(np.max(np.abs(gl))))


@pytest.mark.parametrize("n", [1000, 2000, 3359])
def test_a_crowd_of_equal_competitors_is_one_order_in_n_factorial(n: int) -> None:
    """``n`` competitors of one distribution: every order is equally likely, so ``P = 1/n!`` (closed form), and the
    gradient in the locations sums to 0.  The fast tier must answer (not NaN) and be exact: before the neighbours'
    pull entered its step (PULL), 1,000 came out 1.4e-4 off while passing the mass check, and 2,000 or more fell
    to the adaptive engine (10 s a chain at 2,000, 220 s at 10,000)."""
    loc, scale = np.zeros(n), np.ones(n)
    lp, gl, _ = fast(loc, scale, np.arange(n), [])
    assert not math.isnan(lp)
    assert lp == pytest.approx(-math.lgamma(n + 1.0), abs=1e-8)
    assert abs(gl.sum()) < 1e-8
    # the location gradient is the expected normal order statistics, E[z_(k)] (first place the largest)
    assert gl[0] == pytest.approx(-gl[-1], abs=1e-8)
    assert np.all(np.diff(gl) < 0.0)
