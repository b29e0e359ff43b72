"""League: arrays of ratings, the leaderboard, trajectories, and agreement with the single-match path."""

from __future__ import annotations

import math

import numpy as np
import pytest

import podium
from podium import Elo, League, Match, PairwiseElo, PlackettLuce, Rating


def test_record_returns_the_new_ratings_and_updates_the_league() -> None:
    league = League(Elo(k=25), {"a": Rating(1200.0), "b": Rating(1500.0)})
    new = league.record(Match([["a"], ["b"]]))
    assert round(new["a"].mu, 2) == 1221.23  # chess Elo reference, as in test_elo
    assert league.rating("a") == new["a"]
    assert league.games("a") == 1 and league.games("nobody") == 0
    assert league.rating("nobody") == Elo().prior


def test_leaderboard_orders_by_rating_and_breaks_ties_by_name() -> None:
    league = League(PlackettLuce())
    league.record(Match.ffa(["cy", "ann", "bob"]))
    league.record(Match.ffa(["dee", "eve"]))
    rows = league.leaderboard()
    assert [r.player for r in rows][:1] == ["cy"]
    scores = [r.score for r in rows]
    assert scores == sorted(scores, reverse=True)
    assert [r.rank for r in rows] == list(range(1, len(rows) + 1))
    assert len(league.leaderboard(top=2)) == 2
    league.record(Match.ffa(["cy", "ann"]))
    assert {r.player for r in league.leaderboard(min_games=2)} == {"cy", "ann"}


def test_trajectory_follows_each_match() -> None:
    league = League(Elo(k=10.0, scale=1.0, initial=0.0))
    league.record_many([Match([["a"], ["b"]], time=1.0), Match([["b"], ["c"]], time=2.0), Match([["a"], ["c"]], time=3.0)])
    traj = league.trajectory("a")
    assert traj.match.tolist() == [0, 2]
    assert traj.time.tolist() == [1.0, 3.0]
    assert traj.mu[0] == pytest.approx(5.0)  # equal ratings move by k/2
    assert traj.mu[-1] == league.rating("a").mu
    assert league.history("b").match.tolist() == [0, 1]
    assert len(league.trajectory("nobody").mu) == 0
    with pytest.raises(ValueError, match="keep_history"):
        League(Elo(), keep_history=False).trajectory("a")


@pytest.mark.parametrize("model", [Elo(), PairwiseElo(performance="gaussian"), PlackettLuce(order="elimination")])
def test_record_many_in_chunks_equals_one_pass(model) -> None:
    sim = podium.simulate(40, 3000, teams=2, team_size=2, draw_probability=0.1, seed=5)
    whole = League(model).record_many(sim.matches)
    parts = League(model)
    for start in range(0, 3000, 700):
        parts.record_many(sim.matches[start:start + 700])
    assert whole.ratings == parts.ratings
    assert np.array_equal(whole.log_likelihoods, parts.log_likelihoods)


def test_replay_with_progress_bar_equals_without(capsys) -> None:
    sim = podium.simulate(300, 140_000, seed=9)
    a = League(Elo(), keep_history=False).record_many(sim.matches, progress=True)
    b = League(Elo(), keep_history=False).record_many(sim.matches)
    assert a.ratings == b.ratings


def test_record_many_rejects_free_for_all_for_two_team_elo() -> None:
    sim = podium.simulate(20, 10, teams=3, seed=1)
    with pytest.raises(podium.MatchError, match="two teams"):
        League(Elo()).record_many(sim.matches)


def test_simulated_season_is_recovered() -> None:
    # With 100 players and 20,000 duels every player has ~400 games: ratings must rank true skills well.
    sim = podium.simulate(100, 20_000, seed=3)
    league = League(Elo(k=16)).record_many(sim.matches)
    names = list(sim.skills)
    est = np.array([league.rating(p).mu for p in names])
    true = np.array([sim.skills[p] for p in names])
    assert np.corrcoef(est, true)[0, 1] > 0.9
    assert math.isfinite(float(league.log_likelihoods.mean()))


def test_league_rejects_non_models() -> None:
    with pytest.raises(TypeError, match="model"):
        League("elo")  # type: ignore[arg-type]


def test_a_slice_adds_only_the_players_who_play_in_it() -> None:
    sim = podium.simulate(1000, 200, seed=4)
    league = League(Elo()).record_many(sim.matches[:5])
    assert len(league) == 10
    assert {r.player for r in league.leaderboard()} == {p for m in sim.matches[:5] for p in m.players}
    league.record_many(sim.matches[5:10])
    assert len(league) == len({p for m in sim.matches[:10] for p in m.players})
    assert all(league.games(p) > 0 for p in league.players)


def test_known_players_keep_their_rows_across_histories() -> None:
    league = League(Elo(k=10.0, scale=1.0, initial=0.0), {"b": Rating(1.0)})
    league.record_many([Match([["a"], ["b"]])])
    league.record_many(podium.Matches.from_matches([Match([["c"], ["b"]]), Match([["a"], ["c"]])]))
    single: dict[str, Rating] = {"b": Rating(1.0)}
    model = league.model
    for m in [Match([["a"], ["b"]]), Match([["c"], ["b"]]), Match([["a"], ["c"]])]:
        single.update(model.rate(m, single))
    assert [league.rating(p).mu for p in "abc"] == pytest.approx([single[p].mu for p in "abc"], abs=1e-12)
    assert league.players == ["b", "a", "c"]


@pytest.mark.parametrize("model", [PairwiseElo(), PairwiseElo(performance="gaussian", combine="mean"),
                                   PlackettLuce(), PlackettLuce(order="elimination")])
def test_fast_replay_without_log_likelihoods_gives_the_same_ratings(model) -> None:
    # keep_history=False skips the logarithms only the log-likelihood needs; the ratings must not change.
    sim = podium.simulate(60, 2000, teams=5, draw_probability=0.2, seed=8)
    m = sim.matches
    rank = m.team_rank.copy()
    rank[np.random.default_rng(2).random(len(rank)) < 0.15] = -1  # some teams did not finish
    history = podium.Matches(m.match_start, m.team_start, rank, m.player, m.weight, m.time, m.players)
    full = League(model).record_many(history)
    fast = League(model, keep_history=False).record_many(history)
    assert [fast.rating(p).mu for p in full.players] == pytest.approx([full.rating(p).mu for p in full.players], abs=1e-9)
    assert np.all(np.isfinite(full.log_likelihoods))


def test_models_without_uncertainty_refuse_a_sigma() -> None:
    # A TrueSkill-style Rating(mu, sigma) given to an Elo-family model would skew mu - k sigma leaderboards.
    with pytest.raises(ValueError, match=r"'ratings\['a'\]' has sigma=100.0.*Elo keeps no uncertainty"):
        League(Elo(), {"a": Rating(1600.0, 100.0)})
    with pytest.raises(ValueError, match="keeps no uncertainty"):
        PlackettLuce().rate(Match.ffa(["a", "b"]), {"a": Rating(1600.0, 1.0)})


def test_record_of_something_else_is_a_match_error() -> None:
    with pytest.raises(podium.MatchError, match="'match' must be a podium.Match"):
        League(Elo()).record([["a"], ["b"]])  # type: ignore[arg-type]


@pytest.mark.parametrize("model", [PlackettLuce(), podium.Thurstone(), podium.TrueSkill(drift=0.3, tau=0.1)],
                         ids=["plackett-luce", "thurstone", "trueskill-drift"])
def test_continuing_from_saved_states_equals_one_replay(model) -> None:
    # The league server's path: each match rated from its players' saved states (mu, sigma, games, last
    # time) in a fresh League must give exactly what one replay of the whole history gives.
    sim = podium.simulate(40, 600, teams=3, seed=11)
    matches = [Match(m.teams, m.ranks, m.weights, time=float(i), id=m.id) for i, m in enumerate(sim.matches)]
    whole = League(model)
    whole.record_many(matches)
    saved: dict[str, podium.PlayerState] = {}
    for match in matches:
        step = League(model, keep_history=False)
        step.set_states({p: saved[p] for p in match.players if p in saved})
        step.record(match)
        saved.update(step.states(match.players))
    def key(states: dict[str, podium.PlayerState]) -> dict[str, tuple[float, float, int, float]]:
        return {p: (s.mu, s.sigma, s.games, -1.0 if math.isnan(s.last_time) else s.last_time) for p, s in states.items()}

    assert key(saved) == key(whole.states())  # bit for bit: same kernel, same numbers
    assert all(s.games == whole.games(p) for p, s in saved.items())
    someone = matches[0].players[0]
    if isinstance(model, podium.TrueSkill):  # the time of the player's last match, for drift
        assert saved[someone].last_time == max(i for i, m in enumerate(matches) if someone in m.players)


def test_slots_give_each_players_rating_after_each_match() -> None:
    league = League(podium.TrueSkill())
    matches = [Match([["a"], ["b"]]), Match([["b"], ["c"], ["a"]]), Match([["c"], ["a"]])]
    league.record_many(matches)
    match, player, mu, sigma = league.slots(1)
    assert match.tolist() == [1, 1, 1, 2, 2] and player == ["b", "c", "a", "c", "a"]
    assert (mu[-1], sigma[-1]) == (league.rating("a").mu, league.rating("a").sigma)
    trajectory = league.trajectory("c")
    assert mu[[1, 3]].tolist() == trajectory.mu.tolist()
    with pytest.raises(ValueError, match="keep_history"):
        League(podium.TrueSkill(), keep_history=False).slots()


def test_set_states_validates() -> None:
    with pytest.raises(TypeError, match="PlayerState"):
        League(Elo()).set_states({"a": Rating(1500.0)})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="sigma"):
        League(Elo()).set_states({"a": podium.PlayerState(1500.0, 3.0, 0, math.nan)})


@pytest.mark.parametrize("model, unit", [(Elo(), math.pi ** 2 / 6), (PlackettLuce(), math.pi ** 2 / 6),
                                         (podium.Thurstone(), 1.0),
                                         (podium.Thurstone(density="logistic"), math.pi ** 2 / 3)])
def test_quality_of_models_without_uncertainty(model, unit) -> None:
    # Closed form for two one-player teams at distance d (in units of the performance scale) and noise
    # variance v per team: exp(-d^2 / (4 v)) -- eq. 7 of the TrueSkill paper with sigma = 0.
    a, b = Rating(1700.0), Rating(1500.0)
    scale = model.scale
    d = (a.mu - b.mu) / scale
    q = model.quality([["a"], ["b"]], {"a": a, "b": b})
    assert q == pytest.approx(math.exp(-d * d / (4 * unit)), rel=1e-12)
    assert model.quality([["a"], ["b"]], {}) == pytest.approx(1.0)
