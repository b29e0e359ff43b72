"""Exact posterior moments of an observed order (podium.ordering.moment_chain) and TrueSkill's update from them.

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
from podium.kernels.ep import MAX_ROTATIONS
from podium.ordering.moment_chain import order_moments
from podium.ordering.numerics import truncated_moments
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
        chain = podium.TrueSkill(tau=0.0, update="chain").rate(podium.Match.ffa(players), {})
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
    assert podium.TrueSkill(update="chain").log_likelihood(ffa, {}) < -math.log(120.0) - 0.1
    assert podium.TrueSkill().log_likelihood(ffa, {}) == pytest.approx(-math.log(120.0), abs=1e-9)
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


# -- the default update, update="ordered": expectation propagation on the ordered chain -----------------------
def _posteriors(model: podium.TrueSkill, loc: np.ndarray, sd: np.ndarray, rank: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """Players' posterior means and spreads after one match of single-player teams under ``model``."""
    players = [f"p{i}" for i in range(len(loc))]
    ratings = {p: podium.Rating(float(m), float(s)) for p, m, s in zip(players, loc, sd)}
    ranks = [None if r < 0 else int(r) for r in rank]
    new = model.rate(podium.Match([[p] for p in players], ranks=ranks), ratings)
    return np.array([new[p].mu for p in players]), np.array([new[p].sigma for p in players])


def _exact_messages(ts: podium.TrueSkill, loc: np.ndarray, sd: np.ndarray, rank: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The exact posterior's messages ``(pi, tau)`` to each performance for ``rank`` a strict order (non-finishers
    allowed): the exact performance moments (order_moments, checked above against quadrature and Monte Carlo)
    divided by the performance's prior ``N(loc - mu, sd^2 + beta^2)``."""
    tm, tv = loc - ts.mu, sd ** 2 + ts.beta ** 2
    pm, pv = np.empty(len(loc)), np.empty(len(loc))
    _, ok = order_moments(tm, np.sqrt(tv), rank, np.ones(len(loc)), 0.0, False, pm, pv)
    assert ok
    return 1.0 / pv - 1.0 / tv, pm / pv - tm / tv


def _skill(ts: podium.TrueSkill, loc: np.ndarray, sd: np.ndarray, pi: np.ndarray, tau: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray]:
    """Skill means and spreads from messages to the performances: the performance's posterior, then through the
    performance factor, ``s | x ~ N(mu + v/(v + b^2) (x - mu), v b^2/(v + b^2))``."""
    tm, tv = loc - ts.mu, sd ** 2 + ts.beta ** 2
    prec = 1.0 / tv + pi
    mean = (tm / tv + tau) / prec
    gain = sd ** 2 / tv
    return loc + gain * (mean - tm), np.sqrt(sd ** 2 * ts.beta ** 2 / tv + gain ** 2 / prec)


def _exact_skill(ts: podium.TrueSkill, loc: np.ndarray, sd: np.ndarray, rank: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The exact posterior's skill moments for ``rank`` a strict order."""
    return _skill(ts, loc, sd, *_exact_messages(ts, loc, sd, rank))


@pytest.mark.parametrize(("n", "issue_value"), [(3, None), (100, 43.7), (434, 47.4), (1000, 49.2), (10_000, None)])
def test_ordered_update_is_the_exact_posterior_from_the_prior(n: int, issue_value: float | None) -> None:
    """Every place of ``n`` newcomers in a strict order: the default update's means within 2e-3 of a spread of
    the exact posterior (quadrature of the order statistics for the winner and the loser, order_moments for
    every place) and its spreads within 1 % (issue 29: within 0.5 of 43.7 / 47.4 / 49.2 and 10 % of the
    spread)."""
    ts = podium.TrueSkill(tau=0.0)
    loc, sd, rank = np.full(n, ts.mu), np.full(n, ts.sigma), np.arange(n)
    mean, spread = _posteriors(ts, loc, sd, rank)
    s2 = ts.sigma ** 2 + ts.beta ** 2
    e1, v1 = _max_moments(n)
    top = ts.mu + ts.sigma ** 2 / math.sqrt(s2) * e1
    assert mean[0] == pytest.approx(top, abs=0.01)
    assert mean[-1] == pytest.approx(2 * ts.mu - top, abs=0.01)
    assert spread[0] == pytest.approx(math.sqrt(ts.sigma ** 2 - ts.sigma ** 4 / s2 + ts.sigma ** 4 / s2 * v1),
                                      rel=0.01)
    if issue_value is not None:
        assert abs(mean[0] - issue_value) < 0.5
    if n <= 1000:
        em, es = _exact_skill(ts, loc, sd, rank)
        assert np.max(np.abs(mean - em) / es) < 2e-3
        assert np.max(np.abs(spread / es - 1.0)) < 0.01


@pytest.mark.parametrize(("n", "seed"), [(5, 0), (40, 1), (300, 2), (2000, 3)])
def test_ordered_update_is_the_exact_posterior_of_a_league_field(n: int, seed: int) -> None:
    """Players of unequal ratings in an order drawn from them, a few not finishing: means within 5e-3 of a
    spread of the exact posterior, spreads within 1 %."""
    rng = np.random.default_rng(seed)
    ts = podium.TrueSkill(tau=0.0)
    loc = rng.normal(25.0, 5.0, n)
    sd = rng.uniform(1.0, 8.3, n)
    perf = loc + rng.normal(0.0, 6.0, n)
    rank = np.argsort(np.argsort(-perf)).astype(np.int64)
    rank[rank >= n - max(1, n // 20)] = -1
    mean, spread = _posteriors(ts, loc, sd, rank)
    em, es = _exact_skill(ts, loc, sd, rank)
    assert np.max(np.abs(mean - em) / es) < 5e-3
    assert np.max(np.abs(spread / es - 1.0)) < 0.01


@pytest.mark.parametrize(("n", "first", "size", "spread"),
                         [(6, 1, 3, 5.0), (60, 20, 12, 5.0), (400, 100, 200, 5.0), (300, 50, 100, 15.0)])
def test_ordered_update_with_a_tie_group_is_the_mean_over_its_orders(n: int, first: int, size: int,
                                                                     spread: float) -> None:
    """A tied group is its orders, its likelihood their geometric mean: the update is the prior times the mean,
    in natural parameters, of the exact messages of the strict orders in which the group is rotated (every
    rotation up to 16, else 8 evenly spaced rotations and each reflected), each from order_moments.  The runs after the first start from
    the last one's messages and stop at 1,000 times the tolerance (WARM_FACTOR); the widest spread of ratings (sd 15
    of means within one tied group of 100) is where a short warm run would show."""
    rng = np.random.default_rng(n)
    ts = podium.TrueSkill(tau=0.0)
    loc = rng.normal(25.0, spread, n)
    sd = rng.uniform(1.0, 8.3, n)
    rank = np.arange(n)
    rank[first:first + size] = first
    mean, spread = _posteriors(ts, loc, sd, rank)
    members = list(range(first, first + size))
    members.sort(key=lambda i: (loc[i] - ts.mu, sd[i] ** 2 + ts.beta ** 2))  # the canonical order
    # every rotation up to 16 members, else 8 evenly spaced rotations and each of them reflected
    runs = ([(r, False) for r in range(size)] if size <= MAX_ROTATIONS
            else [(j * size // 8, reflected) for reflected in (False, True) for j in range(8)])
    pi, tau = np.zeros(n), np.zeros(n)  # the runs' messages to each performance, averaged in natural parameters
    for rot, reflected in runs:
        strict = rank.copy()
        for k in range(size):
            strict[members[(size - 1 - k + rot) % size if reflected else (k + rot) % size]] = first + k
        p, t = _exact_messages(ts, loc, sd, strict)
        pi += p / len(runs)
        tau += t / len(runs)
    m1, es = _skill(ts, loc, sd, pi, tau)
    assert np.max(np.abs(mean - m1) / es) < 5e-3
    assert np.max(np.abs(spread / es - 1.0)) < 0.01
