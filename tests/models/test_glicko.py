"""Glicko-2 as a podium model: rating periods, teams, free-for-alls, predictions and the league replay.

References: Glickman (2012), "Example of the Glicko-2 system" (the worked example, steps 1-8); the closed forms
written beside each assertion; brute force over the same steps with the numerics of ``podium.models.glicko``
(tested against the note and the ``glicko2`` package in ``test_glicko_math.py``), one game at a time in Python.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import podium
from podium import Glicko2, League, Match, PlayerState, Rating
from podium.kernels.glicko import SCALE, expected_score, glicko_g, period_update

NAN = math.nan


def worked_example_league(**kw: float) -> League:
    league = League(Glicko2(period=1.0, **kw))
    league.set_states({"me": PlayerState(1500.0, 200.0, 0, NAN), "a": PlayerState(1400.0, 30.0, 0, NAN),
                       "b": PlayerState(1550.0, 100.0, 0, NAN), "c": PlayerState(1700.0, 300.0, 0, NAN)})
    return league


def test_glickmans_worked_example_as_one_rating_period() -> None:
    # Three games in one period (times 0.1 .. 0.3 with period 1): rated from the ratings at its start.
    league = worked_example_league()
    for t, (opp, ranks) in enumerate([("a", [0, 1]), ("b", [1, 0]), ("c", [1, 0])]):
        league.record(Match([["me"], [opp]], ranks=ranks, time=0.1 * (t + 1)))
    me = league.rating("me")
    # the note prints 1464.06 from its rounded mu' = -0.2069; full precision gives 1464.0507 (test_glicko_math)
    assert round(me.mu, 2) == 1464.05
    assert round(me.sigma, 2) == 151.52
    vol = league.states(["me"])["me"].extra[0]
    assert math.floor(vol * 1e5) / 1e5 == 0.05999 and vol == pytest.approx(0.0599960, abs=1e-7)  # the note truncates
    # the opponents moved too, each from its own start, against "me" at 1500 / 200 (not at the updated values)
    phi = 200.0 / SCALE
    g, e = glicko_g(phi), expected_score((1400.0 - 1500.0) / SCALE, 0.0, phi)
    mu, phi_new, _ = period_update((1400.0 - 1500.0) / SCALE, 30.0 / SCALE, 0.06, g * g * e * (1 - e), g * (0 - e),
                                   0.5, 1e-6)
    assert league.rating("a").mu == pytest.approx(1500.0 + SCALE * mu, rel=1e-14)
    assert league.rating("a").sigma == pytest.approx(SCALE * phi_new, rel=1e-14)


def test_a_period_does_not_depend_on_the_order_of_its_games() -> None:
    games = [("a", [0, 1]), ("b", [1, 0]), ("c", [1, 0])]
    results = []
    for order in ([0, 1, 2], [2, 0, 1], [1, 2, 0]):
        league = worked_example_league()
        league.record_many([Match([["me"], [games[i][0]]], ranks=games[i][1], time=0.5) for i in order])
        results.append({p: league.rating(p) for p in ("me", "a", "b", "c")})
    for other in results[1:]:
        for p, r in results[0].items():
            assert other[p].mu == pytest.approx(r.mu, rel=1e-13) and other[p].sigma == pytest.approx(r.sigma, rel=1e-13)


def test_idle_periods_grow_the_deviation_by_sigma_squared_each() -> None:
    # Step 6 for a player who does not compete: phi^2 + sigma^2 per period; two idle periods (1 and 2) before 3.
    league = League(Glicko2(period=10.0))
    league.record(Match([["x"], ["y"]], time=5.0))
    after = league.states(["x"])["x"]
    league.record(Match([["x"], ["z"]], ranks=[0, 0], time=35.0))
    phi0 = math.sqrt((after.sigma / SCALE) ** 2 + 2 * after.extra[0] ** 2)
    state = league.states(["x"])["x"]
    assert state.extra[3] == pytest.approx(phi0, rel=1e-14)  # the period's start
    z_phi = 350.0 / SCALE
    g = glicko_g(z_phi)
    mu0 = (after.mu - 1500.0) / SCALE
    e = expected_score(mu0, 0.0, z_phi)
    mu, phi, _ = period_update(mu0, phi0, after.extra[0], g * g * e * (1 - e), g * (0.5 - e), 0.5, 1e-6)
    assert league.rating("x").mu == pytest.approx(1500.0 + SCALE * mu, rel=1e-13)
    assert league.rating("x").sigma == pytest.approx(SCALE * phi, rel=1e-13)


def brute_force(matches: list[Match], tau: float = 0.5, combine: str = "mean") -> dict[str, tuple[float, float, float]]:
    """Each match a period of its own (no times): every pair of teams one game between composites (weighted mean
    mu, variance of the mean), each member's period update from its own start (Glickman's steps, in Python); with
    ``combine="mean"`` a team's games of an ``n``-team match count ``1 / (n - 1)`` each."""
    state: dict[str, tuple[float, float, float]] = {}
    for match in matches:
        before = {p: state.get(p, (0.0, 350.0 / SCALE, 0.06)) for team in match.teams for p in team}
        weights = match.weights or tuple(tuple(1.0 for _ in t) for t in match.teams)
        comp = []
        for team, ws in zip(match.teams, weights):
            total = sum(ws)
            comp.append((sum(w * before[p][0] for p, w in zip(team, ws)) / total,
                         math.sqrt(sum((w * before[p][1]) ** 2 for p, w in zip(team, ws))) / total))
        ranks = match.ranks
        for a, (team, ws) in enumerate(zip(match.teams, weights)):
            v_inv = delta = 0.0
            for b in range(len(match.teams)):
                ra, rb = ranks[a], ranks[b]
                if b == a or (ra is None and rb is None):
                    continue
                s = 0.5 if ra == rb else (1.0 if rb is None or (ra is not None and ra < rb) else 0.0)
                g = glicko_g(comp[b][1])
                e = 1.0 / (1.0 + math.exp(-g * (comp[a][0] - comp[b][0])))
                v_inv += g * g * e * (1 - e)
                delta += g * (s - e)
            if combine == "mean" and len(match.teams) > 2:
                v_inv /= len(match.teams) - 1
                delta /= len(match.teams) - 1
            for p, w in zip(team, ws):
                mu, phi, vol = before[p]
                state[p] = period_update(mu, phi, vol, w * v_inv, w * delta, tau, 1e-6)  # v_inv = 0: sat out
    return state


@pytest.mark.parametrize("combine", ["mean", "sum"])
@pytest.mark.parametrize("seed", range(3))
def test_teams_free_for_alls_and_non_finishers_against_brute_force(seed: int, combine: str) -> None:
    rng = np.random.default_rng(seed)
    players = [f"p{i}" for i in range(9)]
    matches = []
    for _ in range(40):
        n_teams = int(rng.integers(2, 5))
        chosen = list(rng.permutation(players))
        sizes = rng.integers(1, 3, n_teams)
        teams = [chosen[int(sum(sizes[:i])):int(sum(sizes[:i + 1]))] for i in range(n_teams)]
        ranks: list[int | None] = [int(r) for r in rng.integers(0, n_teams, n_teams)]
        if rng.uniform() < 0.3:
            ranks[int(rng.integers(n_teams))] = None
        weights = [[float(rng.choice([1.0, 0.5])) for _ in t] for t in teams]
        matches.append(Match(teams, ranks=ranks, weights=weights))
    league = League(Glicko2(tau=0.7, combine=combine)).record_many(matches)
    expected = brute_force(matches, tau=0.7, combine=combine)
    for p, (mu, phi, vol) in expected.items():
        assert league.rating(p).mu == pytest.approx(1500.0 + SCALE * mu, rel=1e-12)
        assert league.rating(p).sigma == pytest.approx(SCALE * phi, rel=1e-12)
        assert league.states([p])[p].extra[0] == pytest.approx(vol, rel=1e-12)


def test_two_non_finishers_play_no_game_and_a_finisher_beats_a_non_finisher() -> None:
    model = Glicko2()
    # no game: a period sat out, RD^2 + (sigma * 173.7178)^2 (step 6's rule for a player who did not compete)
    grown = Rating(1500.0, math.hypot(350.0, 0.06 * SCALE))
    new = model.rate(Match([["a"], ["b"]], ranks=[None, None]), {})
    assert new["a"].mu == new["b"].mu == 1500.0
    assert new["a"].sigma == pytest.approx(grown.sigma, rel=1e-14) and new["b"].sigma == new["a"].sigma
    new = model.rate(Match([["a"], ["b"]], ranks=[0, None]), {})
    assert new == model.rate(Match([["a"], ["b"]], ranks=[0, 1]), {})


def test_two_player_predictions_are_glickos_expected_score() -> None:
    # E = 1 / (1 + exp(-g(sqrt(phi_a^2 + phi_b^2)) (mu_a - mu_b))) (Glickman's Glicko papers).
    a, b = Rating(1620.0, 80.0), Rating(1500.0, 240.0)
    g = glicko_g(math.hypot(80.0, 240.0) / SCALE)
    e = 1.0 / (1.0 + math.exp(-g * 120.0 / SCALE))
    model = Glicko2()
    ratings = {"a": a, "b": b}
    assert model.win_probabilities([["a"], ["b"]], ratings)[0] == pytest.approx(e, rel=1e-12)
    assert model.log_likelihood(Match([["a"], ["b"]]), ratings) == pytest.approx(math.log(e), rel=1e-12)
    assert model.log_likelihood(Match([["a"], ["b"]], ranks=[0, 0]), ratings) == pytest.approx(
        0.5 * math.log(e) + 0.5 * math.log(1 - e), rel=1e-12)
    p = model.rank_probabilities([["a"], ["b"], ["c"]], ratings)
    np.testing.assert_allclose(p.sum(axis=0), 1.0, atol=1e-9)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-9)
    assert 0.0 < model.quality([["a"], ["b"]], ratings) < 1.0


def test_league_log_likelihoods_are_the_predictions_before_each_match() -> None:
    sim = podium.simulate(30, 300, teams=3, team_size=2, seed=2)
    league = League(Glicko2()).record_many(sim.matches)
    one_by_one = League(Glicko2())  # keeps each player's volatility, which the single-match methods cannot
    expected = []
    for match in sim.matches:
        expected.append(Glicko2().log_likelihood(match, {p: one_by_one.rating(p) for p in match.players}))
        one_by_one.record(match)
    np.testing.assert_allclose(league.log_likelihoods, expected, rtol=1e-12)
    assert one_by_one.ratings == league.ratings


def test_saved_states_continue_a_period_exactly() -> None:
    sim = podium.simulate(40, 400, seed=5)
    matches = [Match(m.teams, ranks=m.ranks, time=float(i // 7)) for i, m in enumerate(sim.matches)]
    whole = League(Glicko2(period=3.0)).record_many(matches)
    first = League(Glicko2(period=3.0)).record_many(matches[:200])  # 200 is inside a period (period 9: 189..209)
    resumed = League(Glicko2(period=3.0))
    resumed.set_states(first.states())
    resumed.record_many(matches[200:])
    for p in whole.players:
        assert resumed.rating(p) == whole.rating(p)
        assert resumed.states([p])[p].extra == whole.states([p])[p].extra


def test_states_of_the_wrong_width_are_refused() -> None:
    league = League(Glicko2())
    with pytest.raises(ValueError, match=r"'states\['x'\].extra' must hold 8 numbers for Glicko2.*\(1.0, 2.0\)"):
        league.set_states({"x": PlayerState(1500.0, 100.0, 0, NAN, (1.0, 2.0))})
    league.set_states({"x": PlayerState(1500.0, 100.0, 3, NAN)})  # no extra: a new player's volatility
    assert league.states(["x"])["x"].extra[0] == 0.06


@pytest.mark.parametrize("kwargs, message", [
    ({"rd": 0.0}, "'rd' parameter of Glicko2 must be a positive float. Got 0.0"),
    ({"tau": -1.0}, "'tau' parameter of Glicko2 must be a positive float. Got -1.0"),
    ({"period": "week"}, "'period' parameter of Glicko2 must be a positive float. Got 'week'"),
    ({"volatility": math.inf}, "'volatility' parameter of Glicko2 must be a positive float. Got inf"),
    ({"rating": math.nan}, "'rating' parameter of Glicko2 must be a finite float. Got nan"),
])
def test_bad_hyperparameters_are_named(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Glicko2(**kwargs)  # type: ignore[arg-type]


def test_fit_tunes_tau_rd_and_a_period_only_with_times() -> None:
    m = podium.simulate(60, 1500, seed=8).matches
    untimed = podium.Matches(m.match_start, m.team_start, m.team_rank, m.player, m.weight, np.full(len(m), NAN),
                             m.players)
    assert set(podium.fit(Glicko2, untimed, max_evaluations=6).params) == {"tau", "rd"}
    timed = podium.Matches(m.match_start, m.team_start, m.team_rank, m.player, m.weight, np.arange(len(m)) / 10.0,
                           m.players)
    result = podium.fit(Glicko2, timed, max_evaluations=12)
    assert set(result.params) == {"tau", "period", "rd"} and result.params["period"] > 0


def test_extreme_ratings_stay_finite() -> None:
    model = Glicko2()
    ratings = {"a": Rating(9000.0, 1.0), "b": Rating(-7000.0, 2000.0)}
    for ranks in ([0, 1], [1, 0], [0, 0]):
        new = model.rate(Match([["a"], ["b"]], ranks=ranks), ratings)
        assert all(math.isfinite(r.mu) and math.isfinite(r.sigma) and r.sigma > 0 for r in new.values())
        assert math.isfinite(model.log_likelihood(Match([["a"], ["b"]], ranks=ranks), ratings))


def test_a_free_for_all_counts_as_one_game_by_default() -> None:
    """combine="mean": the n - 1 pair games of a race, which share one performance, count one game in all; the
    log-likelihood is the mean over the team's pairs.  Summed (combine="sum"), Formula 1's 20-car races drive
    the volatility past 8 within 135 races at the default tau and the held-out pair log loss to 5e49 (measured on
    ../shared/data/f1_races)."""
    race = Match.ffa(["a", "b", "c", "d"])
    mean, total = Glicko2(), Glicko2(combine="sum")
    assert mean.log_likelihood(race, {}) == pytest.approx(total.log_likelihood(race, {}) / 3, rel=1e-14)
    one, many = mean.rate(race, {}), total.rate(race, {})
    assert 0 < one["a"].mu - 1500.0 < many["a"].mu - 1500.0
    duel = Match([["a"], ["b"]])
    assert mean.rate(duel, {}) == total.rate(duel, {})
    with pytest.raises(ValueError, match="'combine' parameter of Glicko2 must be one of"):
        Glicko2(combine="max")


def test_a_period_without_a_decided_game_is_one_sat_out() -> None:
    """Two non-finishers play no game: a period of only such matches grows the deviation as an absent player's."""
    present, absent = League(Glicko2(period=1.0)), League(Glicko2(period=1.0))
    for league in (present, absent):
        league.record(Match([["x"], ["y"]], time=0.5))
    present.record(Match([["x"], ["z"]], ranks=[None, None], time=1.5))  # period 1: nothing decided for x
    for league in (present, absent):
        league.record(Match([["x"], ["w"]], time=2.5))  # period 2
    assert present.rating("x").mu == pytest.approx(absent.rating("x").mu, rel=1e-13)
    assert present.rating("x").sigma == pytest.approx(absent.rating("x").sigma, rel=1e-13)


def test_an_untimed_match_keeps_the_count_of_periods_sat_out() -> None:
    """An untimed match is a period of its own; the periods sat out are still counted from the last timed one."""
    league = League(Glicko2(period=1.0))
    league.record(Match([["x"], ["y"]], time=0.5))
    league.record(Match([["x"], ["z"]]))  # untimed
    after_untimed = league.states(["x"])["x"]
    league.record(Match([["x"], ["w"]], time=50.5))  # periods 1 .. 49 sat out
    phi0 = math.sqrt((after_untimed.sigma / SCALE) ** 2 + 49 * after_untimed.extra[0] ** 2)
    assert league.states(["x"])["x"].extra[3] == pytest.approx(phi0, rel=1e-14)


def test_an_upset_beyond_the_exponents_range_still_moves_the_ratings() -> None:
    # E (1 - E) underflows to 0 at a gap of 140,000 points; the game is decided and must count.
    model = Glicko2()
    ratings = {"a": Rating(141_500.0, 50.0), "b": Rating(1500.0, 50.0)}
    new = model.rate(Match([["a"], ["b"]], ranks=[1, 0]), ratings)
    assert new["a"].mu < 141_500.0 - 1.0 and new["b"].mu > 1501.0
    assert all(math.isfinite(r.mu) and math.isfinite(r.sigma) for r in new.values())


def test_periods_of_huge_times_stay_apart() -> None:
    # floor(time / period) beyond 2**63: a float, not an int64 that saturates and merges the periods
    league = League(Glicko2(period=1e-3))
    league.record(Match([["x"], ["y"]], time=1e17))
    league.record(Match([["x"], ["z"]], time=1e17 + 1e6))
    assert league.states(["x"])["x"].extra[1] == math.floor((1e17 + 1e6) / 1e-3)


def test_lockstep_volatilities_are_each_players_own_to_the_bit() -> None:
    from podium.kernels.glicko import _DELTA2, _OUT, _PHI2, _SIGMA2, _V
    from podium.kernels.glicko import _WORK, new_volatilities, new_volatility

    rng = np.random.default_rng(6)
    n = 64
    work = np.empty((_WORK, n))
    phi, sigma = rng.uniform(0.05, 3.0, n), rng.uniform(0.01, 0.3, n)
    v, delta = rng.uniform(0.2, 50.0, n), rng.normal(0.0, 3.0, n)
    work[_PHI2], work[_SIGMA2], work[_V], work[_DELTA2] = phi ** 2, sigma ** 2, v, delta ** 2
    new_volatilities(n, 0.5, 1e-6, work)
    alone = [new_volatility(phi[i], sigma[i], v[i], delta[i], 0.5, 1e-6) for i in range(n)]
    assert work[_OUT].tolist() == alone


@pytest.mark.parametrize("name", ["rd", "volatility"])
def test_deviations_whose_square_overflows_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match=f"'{name}' parameter of Glicko2 must be at most 1e\\+100"):
        Glicko2(**{name: 1e160})
