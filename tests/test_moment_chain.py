"""Exact posterior moments of an observed order (podium.moment_chain) and TrueSkill's update from them.

References: the ordering engine's log P and gradients (podium.ordering, itself checked against mpmath and brute
force; a different algorithm on different lattices), scipy's truncated normal, the order statistics of iid
Gaussians by quadrature (scipy.integrate), and Monte Carlo by rejection.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy import integrate, stats

import podium
from podium.moment_chain import order_moments
from podium.numerics import truncated_moments
from podium.ordering import GAUSSIAN, log_outcome


@pytest.mark.parametrize(("m", "s", "a", "b"), [
    (0.0, 1.0, -1.0, 0.5), (0.0, 1.0, -40.0, -39.9), (2.0, 3.0, -np.inf, -20.0), (0.0, 1.0, 3.0, 3.05),
    (0.0, 1.0, -2.0, 5.0), (1.0, 2.0, 30.0, 31.0), (0.0, 1.0, -np.inf, 8.0), (5.0, 0.5, 4.0, 4.0001)])
def test_truncated_moments_against_scipy(m: float, s: float, a: float, b: float) -> None:
    """Against mpmath's quadrature at 40 digits (scipy's truncnorm loses 0.2 % of the variance of the
    narrowest interval here)."""
    mean, var = truncated_moments(m, s, a, b)
    mp.mp.dps = 40
    lo = mp.mpf(a) if np.isfinite(a) else mp.mpf(min(b - 1.0, m) - 60 * s)
    hi = mp.mpf(b)
    peak = min(max(mp.mpf(m), lo), hi)  # the density relative to its largest value on the interval
    f = lambda x: mp.exp(-((x - m) ** 2 - (peak - m) ** 2) / (2 * s * s))  # noqa: E731
    cuts = [lo] + [lo + (hi - lo) * k / 8 for k in range(1, 8)] + [hi]
    mass = mp.quad(f, cuts)
    m1 = mp.quad(lambda x: x * f(x), cuts) / mass
    m2 = mp.quad(lambda x: (x - m1) ** 2 * f(x), cuts) / mass
    assert mean == pytest.approx(float(m1), rel=1e-9, abs=1e-9 * s)
    assert var == pytest.approx(float(m2), rel=1e-6)


def _field(seed: int, n: int, dnf: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    loc = rng.normal(0.0, 2.0, n)
    scale = np.exp(rng.normal(0.5, 0.3, n))
    rank = rng.integers(0, n, n).astype(np.int64)
    if dnf:
        rank[rng.integers(0, n)] = -1
    return loc, scale, rank


@pytest.mark.parametrize("seed", range(8))
def test_log_p_equals_the_ordering_engine_with_draws(seed: int) -> None:
    """With the margin between places (links=True) the outcome is log_outcome's margin model exactly."""
    loc, scale, rank = _field(seed, 3 + seed % 6, seed % 2 == 1)
    n = len(loc)
    pm, pv = np.empty(n), np.empty(n)
    lp, ok = order_moments(loc, scale, rank, np.ones(n), 0.3, True, pm, pv)
    ref = log_outcome(loc, scale, GAUSSIAN, 0.0, rank, np.ones(n), 0.3, False, np.zeros(n), np.zeros(n), 4.0)
    assert ok
    assert lp == pytest.approx(ref, abs=1e-7)


@pytest.mark.parametrize("seed", range(4))
def test_strict_order_moments_equal_the_engines_gradients(seed: int) -> None:
    """E[X] = m + s^2 dlogP/dm and E[(X - m)^2] = s^2 (1 + s dlogP/ds) for Gaussian performances."""
    rng = np.random.default_rng(100 + seed)
    n = 30
    loc = rng.normal(0.0, 2.0, n)
    scale = np.exp(rng.normal(0.5, 0.3, n))
    rank = rng.permutation(n).astype(np.int64)
    if seed % 2:
        rank[:3] = -1
    pm, pv = np.empty(n), np.empty(n)
    lp, ok = order_moments(loc, scale, rank, np.ones(n), 0.1, False, pm, pv)
    gl, gs = np.zeros(n), np.zeros(n)
    ref = log_outcome(loc, scale, GAUSSIAN, 0.0, rank, np.ones(n), 0.0, True, gl, gs, 4.0)
    assert ok
    assert lp == pytest.approx(ref, abs=1e-5)
    np.testing.assert_allclose(pm, loc + scale ** 2 * gl, atol=2e-6 * scale.max())
    np.testing.assert_allclose(pv, scale ** 2 * (1.0 + scale * gs) - scale ** 4 * gl ** 2, rtol=1e-5)


def test_group_and_non_finisher_moments_against_monte_carlo() -> None:
    """A drawn pair above a third player and a non-finisher: rejection sampling, 4 standard errors."""
    loc = np.array([0.3, -0.2, 0.5, 0.0])
    scale = np.array([1.0, 1.3, 0.8, 1.1])
    rank = np.array([0, 0, 1, -1], dtype=np.int64)
    margin = 0.8  # a pair's margin 0.8 sqrt(2)
    pm, pv = np.empty(4), np.empty(4)
    _, ok = order_moments(loc, scale, rank, np.ones(4), margin, False, pm, pv)
    assert ok
    rng = np.random.default_rng(7)
    e = margin * math.sqrt(2.0)
    kept = []
    for _ in range(10):
        x = loc + scale * rng.standard_normal((1_000_000, 4))
        best = np.maximum(x[:, 0], x[:, 1])
        ok_rows = ((np.minimum(x[:, 0], x[:, 1]) > best - e) & (best > x[:, 2]) & (x[:, 3] < x[:, 2]))
        kept.append(x[ok_rows])
    sample = np.concatenate(kept)
    se = sample.std(axis=0) / math.sqrt(len(sample))
    assert np.all(np.abs(pm - sample.mean(axis=0)) < 4.0 * se)
    np.testing.assert_allclose(pv, sample.var(axis=0), rtol=0.02)


def _max_moments(n: int) -> tuple[float, float]:
    """Mean and variance of the largest of ``n`` iid standard normals, by quadrature of n phi Phi^(n-1)."""
    def dens(x: float) -> float:
        return n * stats.norm.pdf(x) * math.exp((n - 1) * stats.norm.logcdf(x))
    m1 = integrate.quad(lambda x: x * dens(x), -10, 12, limit=200)[0]
    m2 = integrate.quad(lambda x: x * x * dens(x), -10, 12, limit=200)[0]
    return m1, m2 - m1 * m1


@pytest.mark.parametrize(("n", "issue_value"), [(100, 43.7), (434, 47.4), (1000, 49.2)])
def test_trueskill_exact_winner_and_loser_from_the_prior(n: int, issue_value: float) -> None:
    """The winner of ``n`` newcomers: mu + sigma^2/s E[Z_(1)], the exact posterior (issue 29's Monte Carlo
    43.7 / 47.4 / 49.2); the paper's chain is far off (62.3 at n = 100, the trueskill package's 62.28)."""
    ts = podium.TrueSkill(update="exact", tau=0.0)
    players = [f"p{i}" for i in range(n)]
    new = ts.rate(podium.Match.ffa(players), {})
    s2 = ts.sigma ** 2 + ts.beta ** 2
    e1, v1 = _max_moments(n)
    mean = ts.mu + ts.sigma ** 2 / math.sqrt(s2) * e1
    sd = math.sqrt(ts.sigma ** 2 - ts.sigma ** 4 / s2 + ts.sigma ** 4 / s2 * v1)
    assert new[players[0]].mu == pytest.approx(mean, abs=0.02)
    assert abs(new[players[0]].mu - issue_value) < 0.5
    assert new[players[0]].sigma == pytest.approx(sd, rel=0.01)
    assert new[players[-1]].mu == pytest.approx(2 * ts.mu - mean, abs=0.02)
    if n == 100:
        chain = podium.TrueSkill(tau=0.0).rate(podium.Match.ffa(players), {})
        assert chain[players[0]].mu == pytest.approx(62.28, abs=0.01)


def test_trueskill_exact_two_teams_is_the_paper() -> None:
    """Two teams: the closed form, whatever ``update`` says."""
    match = podium.Match([["a"], ["b"]])
    a = podium.TrueSkill(update="exact").rate(match, {})
    b = podium.TrueSkill().rate(match, {})
    assert a["a"] == b["a"] and a["b"] == b["b"]


def test_update_is_validated() -> None:
    with pytest.raises(ValueError, match="update"):
        podium.TrueSkill(update="fast")


def test_trueskill_exact_log_likelihood_is_its_updates_model() -> None:
    """``update="exact"``: a strict order of equals has probability 1/n! (places only ordered; the paper's chain
    needs every gap beyond the margin, which is less likely); a League's deferred log-likelihoods are the same."""
    exact = podium.TrueSkill(update="exact")
    players = [f"p{i}" for i in range(5)]
    ffa = podium.Match.ffa(players)
    assert exact.log_likelihood(ffa, {}) == pytest.approx(-math.log(120.0), abs=1e-9)
    assert podium.TrueSkill().log_likelihood(ffa, {}) < -math.log(120.0) - 0.1
    tied = podium.Match([[p] for p in players], ranks=[0, 1, 1, 2, None])
    pm, pv = np.empty(5), np.empty(5)
    s = math.sqrt(exact.sigma ** 2 + exact.beta ** 2)
    ref, ok = order_moments(np.zeros(5), np.full(5, s), np.array([0, 1, 1, 2, -1]), np.ones(5),
                            exact.draw_margin(1), False, pm, pv)
    assert ok and exact.log_likelihood(tied, {}) == pytest.approx(ref, abs=1e-12)
    league = podium.League(exact)
    league.record_many([ffa, tied])
    second = exact.log_likelihood(tied, exact.rate(ffa, {}))
    np.testing.assert_allclose(league.log_likelihoods, [-math.log(120.0), second], rtol=1e-9)
