"""What a result says beyond the order (issue 31): home advantage, match weight and score margins in the models.

Reference values come from closed forms (the logistic and Gaussian win probabilities, the eloratings.net table,
FiveThirtyEight's NFL multiplier as published) and from numerical integration (the margin observation's posterior).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import podium
from podium import Elo, Match, Matches, PairwiseElo, PlackettLuce, Rating, TrueSkill
from podium.kernels.elo import ELORATINGS, FIVETHIRTYEIGHT, POWER, margin_factor
from podium.kernels.trueskill import margin_messages
from podium.ordering.numerics import WIN, tilted_messages

CHESS = 400.0 / math.log(10.0)


# -- the margin-of-victory multipliers ---------------------------------------------------------------------------
@pytest.mark.parametrize("goals, expected", [(0, 1.0), (1, 1.0), (2, 1.5), (3, 1.75), (4, 1.875), (6, 2.125)])
def test_eloratings_table(goals: int, expected: float) -> None:
    # eloratings.net, "About": K x 1 for a win by one goal, x 1.5 by two, x 1.75 by three, x 1.75 + (N - 3) / 8 beyond
    assert margin_factor(ELORATINGS, 0.0, 0.0, float(goals), 0.3) == expected


@pytest.mark.parametrize("points, lead_elo", [(1, 0.0), (3, 120.0), (7, -80.0), (21, 400.0)])
def test_fivethirtyeight_multiplier(points: int, lead_elo: float) -> None:
    # FiveThirtyEight's NFL: ln(|PD| + 1) * 2.2 / ((EloW - EloL) * 0.001 + 2.2); podium's form is it over ln 2
    published = math.log(points + 1.0) * 2.2 / (lead_elo * 0.001 + 2.2)
    own = 400.0 / (2200.0 * math.log(10.0))
    got = margin_factor(FIVETHIRTYEIGHT, 0.0, own, float(points), lead_elo / CHESS)
    assert got * math.log(2.0) == pytest.approx(published, rel=1e-12)


def test_power_form_and_missing_scores() -> None:
    assert margin_factor(POWER, 0.6, 0.0, 5.0, 0.0) == pytest.approx(5.0 ** 0.6)
    assert margin_factor(POWER, 0.6, 0.0, 0.5, 0.0) == 1.0  # a margin below one point is the plain step
    assert margin_factor(POWER, 0.6, 0.0, math.nan, 0.0) == 1.0  # no score, no multiplier
    assert margin_factor(POWER, 0.0, 0.0, 9.0, 0.0) == 1.0


# -- the Elo family -------------------------------------------------------------------------------------------------
def _expected(diff_points: float) -> float:
    return 1.0 / (1.0 + 10.0 ** (-diff_points / 400.0))


def test_elo_home_advantage_in_the_prediction() -> None:
    ratings = {"home": Rating(1500.0), "away": Rating(1580.0)}
    p = Elo(advantage=100.0).win_probabilities([["home"], ["away"]], ratings, advantage=[True, False])
    assert p[0] == pytest.approx(_expected(-80.0 + 100.0), rel=1e-12)
    plain = Elo(advantage=100.0).win_probabilities([["home"], ["away"]], ratings)
    assert plain[0] == pytest.approx(_expected(-80.0), rel=1e-12)


@pytest.mark.parametrize("weight", [1.0, 0.5, 2.0])
@pytest.mark.parametrize("scores, factor", [(None, 1.0), ([1, 0], 1.0), ([2, 0], 1.5), ([5, 1], 1.875)])
def test_elo_step_with_advantage_weight_and_margin(weight: float, scores: list[int] | None, factor: float) -> None:
    # eloratings.net's update: R' = R + K * G * w * (W - We), We with the home side's +100
    ratings = {"a": Rating(1610.0), "b": Rating(1540.0)}
    match = Match([["a"], ["b"]], scores=scores, advantage=[1, 0], weight=weight)
    new = Elo(k=20.0, advantage=100.0, margin="eloratings").rate(match, ratings)
    step = 20.0 * factor * weight * (1.0 - _expected(70.0 + 100.0))
    assert new["a"].mu == pytest.approx(1610.0 + step, rel=1e-13)
    assert new["b"].mu == pytest.approx(1540.0 - step, rel=1e-13)


def test_pairwise_margins_multiply_each_pair() -> None:
    # three runners' times (lower is better): each pair's term of the update times its own G = |dt| ** power
    ratings = {"a": Rating(1500.0), "b": Rating(1520.0), "c": Rating(1450.0)}
    times = {"a": 61.0, "b": 64.0, "c": 70.0}
    match = Match.from_scores([["a"], ["b"], ["c"]], [times["a"], times["b"], times["c"]], higher_is_better=False)
    model = PairwiseElo(k=24.0, margin="power", margin_power=0.5, combine="sum")
    new = model.rate(match, ratings)
    for x in "abc":
        step = 0.0
        for y in "abc":
            if x != y:
                s = 1.0 if times[x] < times[y] else 0.0
                g = abs(times[x] - times[y]) ** 0.5
                step += g * (s - _expected(ratings[x].mu - ratings[y].mu))
        assert new[x].mu == pytest.approx(ratings[x].mu + 24.0 * step, rel=1e-12)


def test_plackett_luce_reads_the_advantage_but_no_margin() -> None:
    ratings = {"a": Rating(1500.0), "b": Rating(1500.0), "c": Rating(1500.0)}
    base = PlackettLuce(advantage=50.0)
    with_scores = Match.from_scores([["a"], ["b"], ["c"]], [9, 5, 1])
    assert base.rate(with_scores, ratings) == base.rate(Match([["a"], ["b"], ["c"]]), ratings)
    favoured = base.win_probabilities([["a"], ["b"], ["c"]], ratings, advantage=[1, 0, 0])
    assert favoured[0] > favoured[1] == pytest.approx(favoured[2])


# -- TrueSkill ------------------------------------------------------------------------------------------------------
def test_trueskill_advantage_in_the_prediction() -> None:
    model = TrueSkill(advantage=3.0)
    ratings = {"a": Rating(27.0, 4.0), "b": Rating(29.0, 2.5)}
    p = model.win_probabilities([["a"], ["b"]], ratings, advantage=[1, 0])
    spread = math.sqrt(2 * model.beta ** 2 + 4.0 ** 2 + 2.5 ** 2)
    assert p[0] == pytest.approx(stats.norm.cdf((27.0 - 29.0 + 3.0) / spread), rel=1e-10)


@pytest.mark.parametrize("z", [2.5, 0.0, -1.0])
def test_margin_messages_are_gaussian_conditioning(z: float) -> None:
    # (t_a, t_b) ~ N((ma, mb), diag(va, vb)) observed through z = t_a - t_b + N(0, noise2): the posterior means by
    # the Gaussian conditioning formula, mean + cov h (z - h'mean) / (h' cov h + noise2) with h = (1, -1)
    ma, va, mb, vb, noise2 = 0.7, 1.9, 0.1, 2.6, 1.3
    pa, ta, pb, tb = margin_messages(ma, va, mb, vb, z, noise2)
    gain = (z - (ma - mb)) / (va + vb + noise2)
    assert (ta + ma / va) / (pa + 1.0 / va) == pytest.approx(ma + va * gain, rel=1e-12)
    assert (tb + mb / vb) / (pb + 1.0 / vb) == pytest.approx(mb - vb * gain, rel=1e-12)
    # and the posterior variance of t_a: va - va^2 / (va + vb + noise2)
    assert 1.0 / (pa + 1.0 / va) == pytest.approx(va - va * va / (va + vb + noise2), rel=1e-12)


def test_trueskill_match_weight_tempers_the_messages() -> None:
    model = TrueSkill(tau=0.0)
    ratings = {"a": Rating(26.0, 5.0), "b": Rating(24.0, 6.0)}
    for weight in (0.5, 3.0):
        new = model.rate(Match([["a"], ["b"]], weight=weight), ratings)
        va, vb = 25.0, 36.0
        ma, mb = 26.0 - 25.0, 24.0 - 25.0
        b2 = model.beta ** 2
        pa, ta, _, _ = tilted_messages(WIN, model.draw_margin(2), ma, va + b2, mb, vb + b2)
        pa, ta = weight * pa, weight * ta
        tv = va + b2
        expect_mu = 26.0 + va * (ta - pa * ma) / (1.0 + pa * tv)
        expect_var = va * (1.0 + pa * (tv - va)) / (1.0 + pa * tv)
        assert new["a"].mu == pytest.approx(expect_mu, rel=1e-12)
        assert new["a"].sigma == pytest.approx(math.sqrt(expect_var), rel=1e-12)


def test_trueskill_margin_moves_further_for_a_bigger_win() -> None:
    model = TrueSkill(margin_scale=1.0, margin_noise=4.0)
    ratings = {"a": Rating(25.0, 3.0), "b": Rating(25.0, 3.0)}
    moves = [model.rate(Match([["a"], ["b"]], scores=[goals, 0]), ratings)["a"].mu - 25.0 for goals in (0, 1, 6)]
    assert moves[0] == pytest.approx(0.0, abs=1e-12)  # a 0-0 draw between equals says they are equal
    assert 0.0 < moves[1] < moves[2]
    # lower is better (race times): the faster team's score difference counts as a win's
    timed = model.rate(Match([["a"], ["b"]], scores=[60.0, 66.0], higher_is_better=False), ratings)["a"].mu
    assert timed - 25.0 == pytest.approx(moves[2], rel=1e-12)


# -- histories without the new information ------------------------------------------------------------------------
def _with_fields(matches: Matches, rng: np.random.Generator) -> Matches:
    """The same history with scores that agree with its ranks and a home side in every match."""
    n_teams = len(matches.team_rank)
    rank = matches.team_rank.astype(float)
    score = np.where(rank >= 0, 100.0 - 3.0 * rank, np.nan)
    advantage = (rng.random(n_teams) < 0.5).astype(float)
    return Matches(matches.match_start, matches.team_start, matches.team_rank, matches.player, matches.weight,
                   matches.time, matches.players, matches.ids, time_is_date=matches.time_is_date, score=score,
                   advantage=advantage)


MODELS = [Elo(), PairwiseElo(), PlackettLuce(), TrueSkill(), podium.Thurstone(), podium.Glicko2(),
          podium.EloMMR()]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: type(m).__name__)
def test_fields_the_model_does_not_use_change_nothing(model: podium.Model) -> None:
    sim = podium.simulate(40, 300, teams=3 if not isinstance(model, Elo) else 2, seed=7)
    plain = sim.matches
    fielded = _with_fields(plain, np.random.default_rng(1))
    a = podium.League(model).record_many(plain)
    b = podium.League(model).record_many(fielded)
    for player in a.players:
        assert a.rating(player) == b.rating(player)  # to the bit: advantage 0 and no margin read nothing


# -- every model: an advantage is a strength offset, a weight is evidence -------------------------------------------
OFFSET_MODELS = [Elo(advantage=70.0), PairwiseElo(advantage=70.0), PlackettLuce(advantage=70.0),
                 TrueSkill(advantage=2.5), podium.Thurstone(advantage=70.0), podium.Glicko2(advantage=70.0),
                 podium.EloMMR(advantage=70.0)]


@pytest.mark.parametrize("model", OFFSET_MODELS, ids=lambda m: type(m).__name__)
def test_advantage_is_the_same_as_a_stronger_player(model: podium.Model) -> None:
    # one-player teams: the home side's advantage h predicts as its rating raised by h
    prior = model.prior
    ratings = {"a": Rating(prior.mu + 10.0, prior.sigma), "b": Rating(prior.mu, prior.sigma),
               "c": Rating(prior.mu - 30.0, prior.sigma)}
    teams = [["a"], ["b"], ["c"]] if not isinstance(model, Elo) else [["a"], ["b"]]
    raised = dict(ratings, b=Rating(prior.mu + model.advantage, prior.sigma))
    with_edge = model.win_probabilities(teams, ratings, advantage=[0, 1, 0][:len(teams)])
    assert np.allclose(with_edge, model.win_probabilities(teams, raised), rtol=1e-12, atol=0)
    assert with_edge[1] > model.win_probabilities(teams, ratings)[1]


def test_glicko2_weight_counts_the_games_again() -> None:
    # within one rating period every game uses the period's start values: a match of weight 2 is the match twice
    model = podium.Glicko2(period=1.0)
    twice = [Match([["a"], ["b"]], time=0.5), Match([["a"], ["b"]], time=0.5)]
    once = [Match([["a"], ["b"]], time=0.5, weight=2.0)]
    a = podium.League(model).record_many(twice)
    b = podium.League(model).record_many(once)
    for player in ("a", "b"):
        assert b.rating(player).mu == pytest.approx(a.rating(player).mu, rel=1e-12)
        assert b.rating(player).sigma == pytest.approx(a.rating(player).sigma, rel=1e-12)


@pytest.mark.parametrize("model", [podium.EloMMR(), podium.Thurstone(), TrueSkill()], ids=lambda m: type(m).__name__)
def test_a_heavier_match_moves_further(model: podium.Model) -> None:
    moves = [model.rate(Match([["a"], ["b"]], weight=w), {})["a"].mu - model.prior.mu for w in (0.5, 1.0, 2.0)]
    assert 0.0 < moves[0] < moves[1] < moves[2]


# -- scores of more than two teams (points, race times) -----------------------------------------------------------
def _dense_posterior(tm: np.ndarray, tv: np.ndarray, z: np.ndarray, noise2: float) -> tuple[np.ndarray, np.ndarray]:
    """The posterior of the performances by dense Gaussian conditioning: z = t + c 1 + e, e ~ N(0, noise2/2 I), the
    common shift c with a prior so wide (sd 1e4) that it is flat at this precision."""
    n = len(tm)
    cov_t = np.diag(tv)
    cov_z = cov_t + 1e8 * np.ones((n, n)) + 0.5 * noise2 * np.eye(n)
    gain = cov_t @ np.linalg.inv(cov_z)
    return tm + gain @ (z - tm), np.diag(cov_t - gain @ cov_t)


def test_score_messages_are_the_exact_posterior() -> None:
    from podium.kernels.trueskill import score_messages

    rng = np.random.default_rng(5)
    for n in (2, 3, 4, 9):
        tm, tv, z = rng.normal(0, 3, n), rng.uniform(1, 30, n), rng.normal(0, 5, n)
        pi, tau = np.empty(n), np.empty(n)
        score_messages(tm, tv, z, n, 2.3, pi, tau)
        mean, var = _dense_posterior(tm, tv, z, 2.3)
        assert np.allclose((tau + tm / tv) / (pi + 1 / tv), mean, rtol=1e-6, atol=1e-6)
        assert np.allclose(1 / (pi + 1 / tv), var, rtol=1e-5)
        shifted_pi, shifted_tau = np.empty(n), np.empty(n)
        score_messages(tm, tv, z + 1000.0, n, 2.3, shifted_pi, shifted_tau)  # only differences of scores count
        assert np.allclose(shifted_pi, pi, rtol=1e-12) and np.allclose(shifted_tau, tau, rtol=1e-9, atol=1e-9)
        if n == 2:  # the two-team closed form
            pa, ta, pb, tb = margin_messages(tm[0], tv[0], tm[1], tv[1], z[0] - z[1], 2.3)
            assert np.allclose([pa, ta, pb, tb], [pi[0], tau[0], pi[1], tau[1]], rtol=1e-12)


def test_thurstone_score_gradient_is_the_marginal_likelihoods() -> None:
    from podium.kernels.thurstone import score_gradient

    rng = np.random.default_rng(6)
    loc, y = rng.normal(0, 1, 5), rng.normal(0, 10, 5)
    u, noise2 = 0.3, 1.7

    def log_lik(x: np.ndarray) -> float:  # c integrated out under a wide prior
        cov = 1e8 * np.ones((5, 5)) + 0.5 * noise2 * np.eye(5)
        return float(stats.multivariate_normal(x, cov).logpdf(u * y))

    grad = np.empty(5)
    score_gradient(loc, y, 5, u, noise2, grad)
    h = 1e-5
    numeric = [(log_lik(loc + h * e) - log_lik(loc - h * e)) / (2 * h) for e in np.eye(5)]
    assert np.allclose(grad, numeric, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("model", [TrueSkill(margin_scale=1e-3, margin_noise=2.0),
                                   podium.Thurstone(margin_scale=1e-4, margin_noise=0.5)],
                         ids=lambda m: type(m).__name__)
def test_points_move_a_four_player_table(model: podium.Model) -> None:
    # mahjong-like points: the big winner gains more than the narrow winner of the same order
    ratings = {p: model.prior for p in "abcd"}
    close = model.rate(Match.from_scores([["a"], ["b"], ["c"], ["d"]], [26000, 25500, 24500, 24000]), ratings)
    far = model.rate(Match.from_scores([["a"], ["b"], ["c"], ["d"]], [60000, 25000, 10000, 5000]), ratings)
    assert far["a"].mu - model.prior.mu > close["a"].mu - model.prior.mu > 0.0
    assert far["d"].mu < close["d"].mu < model.prior.mu


def test_fit_starts_a_margin_scale_from_the_scores_own_size() -> None:
    from podium.models.base import typical_margin

    goals = Matches.from_matches([Match([["a"], ["b"]], scores=[3, 0]), Match([["a"], ["b"]], scores=[1, 2])])
    assert typical_margin(goals) == pytest.approx(2.0)  # the mean absolute goal difference
    points = Matches.from_matches([Match([["a"], ["b"], ["c"], ["d"]], scores=[30000, 25000, 25000, 20000]),
                                   Match([["a"], ["b"]])])
    assert typical_margin(points) == pytest.approx(2.0 * math.sqrt(2 * 5000.0 ** 2 / 4))  # 2 x the points' sd
    assert TrueSkill()._fit_prepare(points, ["margin_scale"]).margin_scale == pytest.approx(
        2.0 * TrueSkill().beta / typical_margin(points))
