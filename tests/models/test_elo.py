"""Reference values of the two-team Elo and the pairwise Elo.

Sources: the multiplayer-Elo note (sections 2 and 3.1) in natural units (``scale=1, initial=0``), closed
forms written beside each assertion, and chess Elo's ``E = 1 / (1 + 10**(-diff/400))``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

import podium
from podium import Elo, Match, MatchError, PairwiseElo, Rating

NATURAL = {"scale": 1.0, "initial": 0.0}


def duel(model, r1: float, r2: float, ranks=(0, 1)) -> tuple[float, float]:
    new = model.rate(Match([["a"], ["b"]], ranks=list(ranks)), {"a": Rating(r1), "b": Rating(r2)})
    return new["a"].mu, new["b"].mu


@pytest.mark.parametrize("r1,r2", [(0.0, 0.0), (0.7, -0.4), (-3.0, 2.5), (12.0, -5.0)])
def test_logistic_update_is_the_notes_formula(r1: float, r2: float) -> None:
    # Note, section 2: when player 2 wins, r1' = r1 - eta / (1 + exp(r2 - r1)); r2 gains the same.
    eta = 0.3
    a, b = duel(Elo(k=eta, **NATURAL), r1, r2, ranks=(1, 0))
    step = eta / (1.0 + math.exp(r2 - r1))
    assert a == pytest.approx(r1 - step, abs=1e-14)
    assert b == pytest.approx(r2 + step, abs=1e-14)


def test_equal_ratings_move_by_half_eta() -> None:
    # S - E = 1 - 1/2 at equal ratings.
    a, b = duel(Elo(k=0.5, **NATURAL), 0.0, 0.0)
    assert (a, b) == (pytest.approx(0.25), pytest.approx(-0.25))


def test_gaussian_gradient_at_equal_ratings_is_one_over_sqrt_pi() -> None:
    # d/dr1 log Phi((r1 - r2)/sqrt 2) at r1 = r2: phi(0) / (Phi(0) sqrt 2) = 1/sqrt(pi).
    a, b = duel(Elo(k=1.0, performance="gaussian", **NATURAL), 0.0, 0.0)
    assert a == pytest.approx(1.0 / math.sqrt(math.pi), rel=1e-14)
    assert b == pytest.approx(-1.0 / math.sqrt(math.pi), rel=1e-14)


@pytest.mark.parametrize("d", [-40.0, -8.0, -1.0, 0.3, 5.0])
def test_gaussian_gradient_closed_form(d: float) -> None:
    # gradient = phi(z)/(Phi(z) sqrt 2), z = d/sqrt 2, from scipy's log-pdf and log-cdf (finite in the tail).
    z = d / math.sqrt(2.0)
    expected = math.exp(norm.logpdf(z) - norm.logcdf(z)) / math.sqrt(2.0)
    a, _ = duel(Elo(k=1.0, performance="gaussian", **NATURAL), d, 0.0)
    assert a == pytest.approx(d + expected, rel=1e-12)


def test_gaussian_classic_is_bounded_s_minus_e() -> None:
    # classic: S - Phi(d / sqrt 2), bounded by 1 even in a huge upset.
    a, _ = duel(Elo(k=1.0, performance="gaussian", update="classic", **NATURAL), -40.0, 0.0)
    assert a == pytest.approx(-40.0 + 1.0 - norm.cdf(-40.0 / math.sqrt(2.0)))
    g, _ = duel(Elo(k=1.0, performance="gaussian", update="gradient", **NATURAL), -40.0, 0.0)
    assert g + 40.0 > 20.0  # the likelihood gradient is unbounded: about |d|/2 here


def test_chess_elo_reference() -> None:
    # Elo(k=25): 1200 beats 1500. E = 1/(1 + 10**(300/400)) = 0.15098; 25 * (1 - E) = 21.2255.
    a, b = duel(Elo(k=25), 1200.0, 1500.0)
    assert round(a, 2) == 1221.23 and round(b, 2) == 1478.77


def test_draw_is_half_a_win_and_half_a_loss() -> None:
    # Logistic: S - E with S = 1/2; Gaussian gradient: (phi/Phi(z) - phi/Phi(-z)) / (2 sqrt 2).
    a, _ = duel(Elo(k=1.0, **NATURAL), 1.0, 0.0, ranks=(0, 0))
    assert a == pytest.approx(1.0 + 0.5 - 1.0 / (1.0 + math.exp(-1.0)))
    a, _ = duel(Elo(k=1.0, performance="gaussian", **NATURAL), 1.0, 0.0, ranks=(0, 0))
    z = 1.0 / math.sqrt(2.0)
    h = lambda x: norm.pdf(x) / norm.cdf(x)  # noqa: E731
    assert a == pytest.approx(1.0 + 0.5 * (h(z) - h(-z)) / math.sqrt(2.0))


def test_log_likelihood_closed_forms() -> None:
    ratings = {"a": Rating(0.4), "b": Rating(-0.2)}
    win = Match([["a"], ["b"]])
    draw = Match([["a"], ["b"]], ranks=[0, 0])
    p = 1.0 / (1.0 + math.exp(-0.6))
    assert Elo(**NATURAL).log_likelihood(win, ratings) == pytest.approx(math.log(p))
    assert Elo(**NATURAL).log_likelihood(draw, ratings) == pytest.approx(0.5 * math.log(p) + 0.5 * math.log(1 - p))
    q = norm.cdf(0.6 / math.sqrt(2.0))
    assert Elo(performance="gaussian", **NATURAL).log_likelihood(win, ratings) == pytest.approx(math.log(q))


def test_teams_share_the_update_by_partial_play_weight() -> None:
    # spread=0 (the note's plain Elo): team strength = weighted sum; member i moves by k * w_i * (S - E).
    match = Match([["a", "b"], ["c"]], weights=[[1.0, 0.5], [1.0]])
    ratings = {"a": Rating(0.2), "b": Rating(0.4), "c": Rating(0.1)}
    new = Elo(k=2.0, spread=0.0, **NATURAL).rate(match, ratings)
    g = 1.0 - 1.0 / (1.0 + math.exp(-(0.2 + 0.5 * 0.4 - 0.1)))
    assert new["a"].mu == pytest.approx(0.2 + 2.0 * g, rel=1e-14)
    assert new["b"].mu == pytest.approx(0.4 + 2.0 * 0.5 * g, rel=1e-14)
    assert new["c"].mu == pytest.approx(0.1 - 2.0 * g, rel=1e-14)


@pytest.mark.parametrize("spread", [1.0, 0.3, 2.5])
def test_team_spread_divides_strengths_and_steps(spread: float) -> None:
    # N = mean over the two teams of sum w^2 = ((1 + 0.25) + 1) / 2; c = sqrt(1 + spread (N - 1)); the
    # probability uses d / c and member i moves by k * w_i * (S - E) / c (the chain rule through d / c).
    match = Match([["a", "b"], ["c"]], weights=[[1.0, 0.5], [1.0]])
    ratings = {"a": Rating(0.2), "b": Rating(0.4), "c": Rating(0.1)}
    c = math.sqrt(1.0 + spread * (1.125 - 1.0))
    p = 1.0 / (1.0 + math.exp(-(0.2 + 0.5 * 0.4 - 0.1) / c))
    model = Elo(k=2.0, spread=spread, **NATURAL)
    new = model.rate(match, ratings)
    assert new["a"].mu == pytest.approx(0.2 + 2.0 * (1 - p) / c, rel=1e-14)
    assert new["b"].mu == pytest.approx(0.4 + 2.0 * 0.5 * (1 - p) / c, rel=1e-14)
    assert new["c"].mu == pytest.approx(0.1 - 2.0 * (1 - p) / c, rel=1e-14)
    assert model.log_likelihood(match, ratings) == pytest.approx(math.log(p), rel=1e-14)
    assert model.win_probabilities([["a", "b"], ["c"]], ratings, weights=[[1.0, 0.5], [1.0]])[0] == pytest.approx(p)


def test_full_team_games_spread_as_the_sum_of_performances() -> None:
    # 3 v 3 with spread=1: c = sqrt(3), the logistic analogue of TrueSkill's n beta^2 (Gaussian: exact).
    teams = [["a", "b", "c"], ["d", "e", "f"]]
    ratings = {p: Rating(0.5 if p in "abc" else 0.0) for p in "abcdef"}
    d = 1.5
    assert Elo(**NATURAL).win_probabilities(teams, ratings)[0] == pytest.approx(1 / (1 + math.exp(-d / math.sqrt(3))))
    q = Elo(performance="gaussian", **NATURAL).win_probabilities(teams, ratings)[0]
    assert q == pytest.approx(norm.cdf(d / math.sqrt(2 * 3)))  # X_team ~ N(sum, 3): difference variance 6
    assert Elo(spread=0.0, **NATURAL).win_probabilities(teams, ratings)[0] == pytest.approx(1 / (1 + math.exp(-d)))


def test_uneven_teams_of_newcomers_are_even() -> None:
    # Strengths are measured from `initial`: four new players against three is a coin flip, not a
    # 4 * 1500 v 3 * 1500 rout; one point more for the smaller team tips it its way.
    teams = [["a", "b", "c", "d"], ["e", "f", "g"]]
    for model in (Elo(), PairwiseElo(spread=0.0), Elo(performance="gaussian", initial=-40.0)):
        assert model.win_probabilities(teams, {})[0] == pytest.approx(0.5, abs=1e-15)
        up = {"e": Rating(model.initial + 1.0)}
        assert model.win_probabilities(teams, up)[0] < 0.5


def test_spread_changes_nothing_in_duels() -> None:
    for spread in (0.0, 0.4, 1.0, 3.0):
        assert duel(Elo(k=0.7, spread=spread, **NATURAL), 0.3, -0.2) == duel(Elo(k=0.7, **NATURAL), 0.3, -0.2)


def test_spread_must_be_non_negative() -> None:
    with pytest.raises(ValueError, match="'spread'.*non-negative.*-1"):
        Elo(spread=-1.0)


def test_elo_rejects_more_than_two_teams() -> None:
    with pytest.raises(MatchError, match="PlackettLuce"):
        Elo().rate(Match.ffa(["a", "b", "c"]), {})


def test_non_finisher_loses_to_finisher_and_two_non_finishers_do_nothing() -> None:
    a, b = duel(Elo(k=1.0, **NATURAL), 0.0, 0.0, ranks=(0, None))
    assert a > 0 > b
    a, b = duel(Elo(k=1.0, **NATURAL), 0.3, 0.0, ranks=(None, None))
    assert (a, b) == (0.3, 0.0)


def four_equal(model) -> list[float]:
    new = model.rate(Match.ffa(["a", "b", "c", "d"]), {})
    return [new[p].mu for p in "abcd"]


def test_pairwise_sum_and_mean_on_four_equal_players() -> None:
    # Each pair contributes S - 1/2: the winner 3 * 1/2 = 1.5, then 0.5, -0.5, -1.5; mean divides by n - 1 = 3.
    assert four_equal(PairwiseElo(k=1.0, combine="sum", **NATURAL)) == pytest.approx([1.5, 0.5, -0.5, -1.5])
    assert four_equal(PairwiseElo(k=1.0, combine="mean", **NATURAL)) == pytest.approx([1 / 2, 1 / 6, -1 / 6, -1 / 2])
    assert four_equal(PairwiseElo(k=3.0, combine="sum", **NATURAL)) == pytest.approx([4.5, 1.5, -1.5, -4.5])
    # the default is the mean (a field's pairs are views of one performance, not n - 1 games)
    assert four_equal(PairwiseElo(k=1.0, **NATURAL)) == four_equal(PairwiseElo(k=1.0, combine="mean", **NATURAL))


def test_pairwise_equals_elo_for_two_teams() -> None:
    for performance in ("logistic", "gaussian"):
        for update in ("gradient", "classic"):
            kw = dict(k=7.0, performance=performance, update=update)
            assert duel(PairwiseElo(**kw), 1400, 1620) == pytest.approx(duel(Elo(**kw), 1400, 1620), abs=1e-12)


def test_pairwise_log_likelihood_is_the_sum_over_pairs() -> None:
    s = {"a": 0.5, "b": -0.1, "c": 0.3}
    ratings = {p: Rating(v) for p, v in s.items()}
    match = Match([["a"], ["b"], ["c"]], ranks=[0, 1, 1])  # b and c draw
    ls = lambda d: -math.log1p(math.exp(-d))  # noqa: E731  log sigmoid
    expected = ls(0.6) + ls(0.2) + 0.5 * (ls(-0.4) + ls(0.4))
    assert PairwiseElo(combine="sum", **NATURAL).log_likelihood(match, ratings) == pytest.approx(expected)
    assert PairwiseElo(**NATURAL).log_likelihood(match, ratings) == pytest.approx(expected / 2)  # "mean"


def test_win_probabilities_two_teams_match_the_closed_forms() -> None:
    ratings = {"a": Rating(1700.0), "b": Rating(1500.0)}
    p = Elo().win_probabilities([["a"], ["b"]], ratings)
    assert p[0] == pytest.approx(1.0 / (1.0 + 10 ** (-200 / 400)))
    assert p.sum() == pytest.approx(1.0)
    g = Elo(performance="gaussian", **NATURAL).win_probabilities([["a"], ["b"]], {"a": Rating(0.9), "b": Rating(0.1)})
    assert g[0] == pytest.approx(norm.cdf(0.8 / math.sqrt(2.0)))


def test_gaussian_pairwise_win_probabilities_monte_carlo() -> None:
    # X_i ~ N(s_i, 1): 400,000 draws; the standard error of each frequency is below 8e-4.
    s = np.array([0.4, 0.0, -0.3, 1.1])
    ratings = {f"p{i}": Rating(v) for i, v in enumerate(s)}
    p = PairwiseElo(performance="gaussian", **NATURAL).win_probabilities([[f"p{i}"] for i in range(4)], ratings)
    rng = np.random.default_rng(7)
    winners = np.argmax(s + rng.normal(size=(400_000, 4)), axis=1)
    freq = np.bincount(winners, minlength=4) / 400_000
    assert p == pytest.approx(freq, abs=4e-3)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)


def test_model_parameters_are_validated() -> None:
    with pytest.raises(ValueError, match="'k' parameter of Elo must be a positive float. Got -1"):
        Elo(k=-1)
    with pytest.raises(ValueError, match="'performance'"):
        PairwiseElo(performance="cauchy")
    with pytest.raises(ValueError, match="'combine'"):
        PairwiseElo(combine="max")
    with pytest.raises(ValueError, match="'scale'"):
        Elo(scale=float("nan"))
    with pytest.raises(TypeError):
        Elo(32)  # keyword-only


def test_rate_does_not_mutate_and_returns_only_the_match_players() -> None:
    ratings = {"a": Rating(1500.0), "b": Rating(1500.0), "z": Rating(1800.0)}
    before = dict(ratings)
    new = Elo().rate(Match([["a"], ["b"]]), ratings)
    assert ratings == before
    assert set(new) == {"a", "b"}


def test_unknown_players_start_at_initial() -> None:
    new = Elo(k=20, initial=1000.0).rate(Match([["x"], ["y"]]), {})
    assert new["x"].mu == pytest.approx(1010.0) and new["y"].mu == pytest.approx(990.0)


@pytest.mark.parametrize("performance", ["logistic", "gaussian"])
def test_provisional_steps_fall_with_games_played(performance: str) -> None:
    # Player i's step is k (1 + provisional / (n_i + 1)) after n_i matches: a League's replay by hand.
    k, boost = 0.8, 3.0
    model = PairwiseElo(k=k, provisional=boost, performance=performance, **NATURAL)
    plain = PairwiseElo(k=k, performance=performance, **NATURAL)
    matches = [Match([["a"], ["b"]]), Match([["a"], ["c"]], ranks=[1, 0]), Match.ffa(["b", "c", "a"]),
               Match([["a", "b"], ["c"]], weights=[[1.0, 0.5], [1.0]])]
    league = podium.League(model).record_many(matches)
    ratings: dict[str, Rating] = {}
    games: dict[str, int] = {}
    for match in matches:
        before = {p: ratings.get(p, Rating(0.0)) for p in match.players}
        step = plain.rate(match, before)  # the plain step k * w * dL/ds (no game counts)
        for p in match.players:
            factor = 1.0 + boost / (games.get(p, 0) + 1.0)
            ratings[p] = Rating(before[p].mu + factor * (step[p].mu - before[p].mu))
            games[p] = games.get(p, 0) + 1
    for p, r in ratings.items():
        assert league.rating(p).mu == pytest.approx(r.mu, rel=1e-13, abs=1e-15)


def test_provisional_must_be_non_negative() -> None:
    with pytest.raises(ValueError, match="'provisional'.*non-negative.*-0.5"):
        PairwiseElo(provisional=-0.5)
