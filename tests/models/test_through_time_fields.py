"""TrueSkill Through Time reads what a result says beyond the order (issue 31): advantages, match weights and
scores, in its first pass (TrueSkill's online replay, bit for bit) and in every sweep (on a history where every
match is scored the model is linear-Gaussian, so the smoothed means are the exact posterior's, solved densely)."""

from __future__ import annotations

import random

import numpy as np
import pytest

import podium
from podium import Match, TrueSkillThroughTime
from podium.data.match import MAX_MATCH_WEIGHT

BETA = 25.0 / 6.0


def _history(seed: int, *, scored: float = 0.6, matches: int = 48, players: int = 8, per_time: int = 4
             ) -> list[Match]:
    """Duels, 2 v 2 with partial play and three-team matches; a share ``scored`` with scores (the rest with ranks,
    draws and a non-finisher among them), every other match with a home side, some weighted."""
    rng = random.Random(seed)
    out = []
    for m in range(matches):
        n, k = rng.choice([(2, 1), (2, 1), (2, 2), (3, 1)])
        who = rng.sample(range(players), n * k)
        teams = [[f"p{who[i * k + j]}" for j in range(k)] for i in range(n)]
        weights = [[rng.choice([1.0, 0.5]) for _ in t] for t in teams] if k > 1 else None
        extra: dict = {}
        if m % 2 == 0:
            extra["advantage"] = [1.0] + [0.0] * (n - 1)
        if m % 3 == 0:
            extra["weight"] = rng.choice([0.5, 2.0, 3.0])
        if rng.random() < scored:
            extra["scores"] = [float(rng.randint(0, 5)) for _ in range(n)]
        else:
            ranks = list(range(n))
            rng.shuffle(ranks)
            if n == 2 and rng.random() < 0.2:
                ranks = [0, 0]
            if n == 3 and rng.random() < 0.3:
                ranks[ranks.index(2)] = None  # a non-finisher
            extra["ranks"] = ranks
        out.append(Match(teams, weights=weights, time=float(m // per_time) * 1.5, **extra))
    return out


@pytest.mark.parametrize("gamma", [0.0, 0.3])
@pytest.mark.parametrize("margins", [False, True])
def test_the_first_pass_is_trueskills_replay_with_the_fields(gamma: float, margins: bool) -> None:
    """With no sweeps, the smoother's ratings are ``TrueSkill(tau=0, drift=gamma, center=False)``'s with the same
    advantage, scale and noise, replayed in time order: bit for bit, advantages, weights and scores included."""
    matches = _history(1)
    shuffled = matches[:]
    random.Random(2).shuffle(shuffled)
    fields = {"advantage": 1.5, "margin_scale": 0.7 if margins else None, "margin_noise": 2.5 if margins else None}
    model = TrueSkillThroughTime(mu=25.0, sigma=25 / 3, beta=BETA, gamma=gamma, **fields)
    result = model.smooth(shuffled, max_iterations=0)
    league = podium.League(podium.TrueSkill(mu=25.0, sigma=25 / 3, beta=BETA, tau=0.0, drift=gamma,
                                            tolerance=1e-9, max_iterations=100, center=False, **fields))
    league.record_many(sorted(shuffled, key=lambda m: m.time))
    for player in league.players:
        online = league.trajectory(player)
        smoothed = result.trajectory(player)
        last = np.r_[online.time[1:] != online.time[:-1], True]
        assert np.array_equal(online.mu[last], smoothed.mu)
        assert np.array_equal(online.sigma[last], smoothed.sigma)
    # Reading the fields changes the answer (so the comparison above saw them).
    plain = TrueSkillThroughTime(mu=25.0, sigma=25 / 3, beta=BETA, gamma=gamma).smooth(shuffled, max_iterations=0)
    assert not np.allclose(plain.trajectory("p0").mu, result.trajectory("p0").mu)


def test_first_pass_evidence_is_trueskills_predictive_log_likelihood() -> None:
    """Without dynamics each term of the evidence is ``log P(outcome_m)`` under the ratings before match ``m``:
    :meth:`podium.TrueSkill.log_likelihood` (its advantage and margin noise included), match by match."""
    matches = sorted(_history(3), key=lambda m: m.time)
    fields = {"advantage": -2.0, "margin_scale": 0.5, "margin_noise": 3.0}
    result = TrueSkillThroughTime(mu=25.0, sigma=25 / 3, beta=BETA, gamma=0.0, **fields).smooth(
        matches, max_iterations=0)
    filt = podium.TrueSkill(mu=25.0, sigma=25 / 3, beta=BETA, tau=0.0, center=False, tolerance=1e-9,
                            max_iterations=100, **fields)
    ratings: dict = {}
    expected = []
    for match in matches:
        expected.append(filt.log_likelihood(match, ratings))
        ratings.update(filt.rate(match, ratings))
    np.testing.assert_allclose(result.match_log_evidence, expected, rtol=1e-12, atol=1e-13)


def _exact_means(matches: list[Match], *, mu: float, sigma: float, beta: float, gamma: float, advantage: float,
                 scale: float, noise: float) -> dict[tuple[str, float], float]:
    """The exact posterior means of every (player, time) skill when every match is scored: the model is then
    linear-Gaussian (scores ``scale y_t = sum_i w_i s_i + advantage a_t + c + eta_t``, ``eta_t ~ N(0, sum w_i^2
    beta^2 + noise^2 / 2)``, ``c`` flat, the likelihood to the power of the match's weight; first skills
    ``N(mu, sigma^2)``, then a random walk of variance ``gamma^2`` per unit of time), solved densely."""
    index: dict[tuple[str, float], int] = {}
    for match in matches:
        for team in match.teams:
            for p in team:
                index.setdefault((p, match.time), len(index))
    n = len(index)
    lam = np.zeros((n, n))
    h = np.zeros(n)
    last: dict[str, tuple[float, int]] = {}
    for (p, t), k in sorted(index.items(), key=lambda kv: kv[0][1]):
        if p in last:
            t0, j = last[p]
            q = 1.0 / (gamma ** 2 * (t - t0))
            lam[np.ix_([j, k], [j, k])] += q * np.array([[1.0, -1.0], [-1.0, 1.0]])
        else:
            lam[k, k] += 1.0 / sigma ** 2
            h[k] += mu / sigma ** 2
        last[p] = (t, k)
    for match in matches:
        rows = np.zeros((len(match.teams), n))
        var = np.zeros(len(match.teams))
        for i, team in enumerate(match.teams):
            weights = match.weights[i] if match.weights is not None else [1.0] * len(team)
            for p, w in zip(team, weights):
                rows[i, index[(p, match.time)]] += w
                var[i] += w * w * beta ** 2
        var += noise ** 2 / 2.0
        z = scale * np.asarray(match.scores, dtype=float)
        if match.advantage is not None:
            z -= advantage * np.asarray(match.advantage, dtype=float)
        prec = np.diag(1.0 / var)
        ones = np.ones(len(var))
        q = prec - np.outer(prec @ ones, ones @ prec) / (ones @ prec @ ones)  # c integrated out
        v = match.weight if match.weight is not None else 1.0
        lam += v * rows.T @ q @ rows
        h += v * rows.T @ q @ z
    mean = np.linalg.solve(lam, h)
    return {key: float(mean[k]) for key, k in index.items()}


@pytest.mark.parametrize("seed", [4, 5])
def test_smoothed_means_are_the_exact_gaussian_posterior_when_every_match_is_scored(seed: int) -> None:
    """Scores make each match's likelihood Gaussian, so the history's posterior is Gaussian and EP's fixed point
    has its exact means (Gaussian belief propagation: Weiss & Freeman 2001): advantages, weights, partial play,
    free-for-alls and the random walk all enter the dense solve independently of the sweeps."""
    # Without match weights: a weight tempers the match's messages to the teams' performances (as TrueSkill's
    # filter does), which is not the likelihood to that power once the performances' noise is integrated out.
    matches = [Match(m.teams, weights=m.weights, scores=m.scores, advantage=m.advantage, time=m.time)
               for m in _history(seed, scored=1.0)]
    params = {"mu": 25.0, "sigma": 25 / 3, "beta": BETA, "gamma": 0.4}
    fields = {"advantage": 2.0, "scale": 0.8, "noise": 3.0}
    model = TrueSkillThroughTime(**params, advantage=fields["advantage"], margin_scale=fields["scale"],
                                 margin_noise=fields["noise"])
    result = model.smooth(matches, tolerance=1e-11, max_iterations=5000)
    assert result.converged
    exact = _exact_means(matches, **params, **fields)
    worst = 0.0
    for player in result.players:
        curve = result.trajectory(player)
        for t, m in zip(curve.time, curve.mu):
            worst = max(worst, abs(m - exact[(player, float(t))]))
    assert worst < 1e-7
    # The first pass alone is a filter: its last ratings are not the smoothed posterior.
    first = model.smooth(matches, max_iterations=0)
    assert max(abs(first.trajectory(p).mu[0] - exact[(p, float(first.trajectory(p).time[0]))])
               for p in first.players) > 1e-3


def test_a_history_without_the_fields_or_a_model_that_ignores_them_smooths_as_before() -> None:
    """Fields the model does not read change nothing: the same history stripped of them gives the same posterior
    bit for bit (ranks from the scores kept)."""
    matches = _history(6)
    stripped = [Match(m.teams, ranks=m.ranks, weights=m.weights, time=m.time) for m in matches]
    weighted = any(m.weight is not None for m in matches)
    model = TrueSkillThroughTime(gamma=0.2)
    a, b = model.smooth(stripped), model.smooth([
        Match(m.teams, ranks=m.ranks, weights=m.weights, time=m.time, advantage=m.advantage, scores=m.scores)
        for m in matches])
    assert weighted
    for p in a.players:
        assert np.array_equal(a.trajectory(p).mu, b.trajectory(p).mu)
        assert np.array_equal(a.trajectory(p).sigma, b.trajectory(p).sigma)


@pytest.mark.parametrize("scored", [False, True])
def test_a_match_weight_scales_its_say_from_nothing_up(scored: bool) -> None:
    """A match's weight tempers its messages at every sweep: near 0 the match says nothing (its result reversed
    gives the same posterior), and a heavier match pulls its players further (here: ``a``'s rating at the end,
    after a win over ``b`` at time 0)."""
    won, lost = (dict(scores=[3, 1]), dict(scores=[1, 3])) if scored else (dict(ranks=[0, 1]), dict(ranks=[1, 0]))
    rest = [Match([["b"], ["c"]], ranks=[0, 1], time=1.0), Match([["c"], ["a"]], ranks=[0, 1], time=2.0),
            Match([["a"], ["c"]], ranks=[1, 0], time=3.0)]
    model = TrueSkillThroughTime(gamma=0.1, margin_scale=1.0 if scored else None, margin_noise=1.0 if scored else None)

    def a_at_end(weight: float, result: dict) -> float:
        history = [Match([["a"], ["b"]], time=0.0, weight=weight, **result)] + rest
        return float(model.smooth(history, tolerance=1e-12, max_iterations=5000).ratings(at=3.0)["a"].mu)

    least = 1 / MAX_MATCH_WEIGHT  # the least the format takes: the result's say is of its order
    nothing = a_at_end(least, won)
    assert a_at_end(least, lost) == pytest.approx(nothing, abs=10 * least)
    say = [a_at_end(w, won) - nothing for w in (0.5, 1.0, 2.0, 4.0)]
    assert 0.0 < say[0] < say[1] < say[2] < say[3]
    if not scored:  # (a loss by 2 points can raise a player whom the rest puts far below: a closer result)
        assert a_at_end(1.0, lost) < nothing


def test_fit_searches_the_fields_only_where_the_history_has_them() -> None:
    plain = [Match([["a"], ["b"]], ranks=[0, 1], time=float(i)) for i in range(30)]
    fitted = podium.fit(TrueSkillThroughTime, plain, max_evaluations=10)
    assert set(fitted.params) == {"beta", "gamma"}
    scored = [Match([["a"], ["b"]], scores=[i % 4, 1], advantage=[1, 0], time=float(i)) for i in range(30)]
    fitted = podium.fit(TrueSkillThroughTime, scored, max_evaluations=10)
    # (1-1: a draw, which informs the draw probability)
    assert set(fitted.params) == {"beta", "gamma", "draw_probability", "advantage", "margin_scale", "margin_noise"}


def test_errors_name_the_new_parameters() -> None:
    with pytest.raises(ValueError, match="margin_scale"):
        TrueSkillThroughTime(margin_scale=-1.0)
    with pytest.raises(ValueError, match="advantage"):
        TrueSkillThroughTime(advantage=float("nan"))
