"""podium.simulate: shapes, reproducibility, line-ups, draws, strength, argument checks.

The model under test is simulate's docstring: skills ~ N(0, skill_sd^2); each player performs skill + N(0, 1);
a team performs the sum of its members; adjacent teams draw when their performances differ by at most the
margin that gives ``draw_probability`` for two equal teams.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import ndtr

import podium
from podium import Matches, Simulation


def _ranks(sim: Simulation, teams: int) -> np.ndarray:
    return sim.matches.team_rank.reshape(-1, teams)


def _lineups(sim: Simulation, teams: int, team_size: int) -> np.ndarray:
    return sim.matches.player.reshape(len(sim.matches), teams, team_size)


# -- shapes ---------------------------------------------------------------------------------------

def test_shapes_and_fields():
    sim = podium.simulate(30, 200, teams=3, team_size=2, seed=0)
    ms = sim.matches
    assert isinstance(sim, Simulation) and isinstance(ms, Matches)
    assert len(ms) == 200
    assert ms.n_teams.tolist() == [3] * 200
    assert np.diff(ms.team_start).tolist() == [2] * 600
    assert len(ms.player) == 1200 and len(ms.weight) == 1200
    assert np.all(ms.weight == 1.0) and not ms.has_weights
    assert ms.players == [f"p{i:05d}" for i in range(30)]  # docstring: named p00000, p00001, ...
    assert set(sim.skills) == set(ms.players) and len(sim.skills) == 30
    assert all(isinstance(v, float) and math.isfinite(v) for v in sim.skills.values())
    assert ms.time.tolist() == list(range(200))  # docstring: time = match number
    assert ms.ids == [f"m{j}" for j in range(200)]
    ranks = _ranks(sim, 3)
    assert ranks.min() >= 0  # everyone finishes
    assert np.all(ranks.min(axis=1) == 0)  # someone wins every match
    # The arrays are a valid columnar history (the constructor validates them).
    Matches(ms.match_start, ms.team_start, ms.team_rank, ms.player, ms.weight, ms.time, ms.players, ms.ids)
    # And every element is a Match that validates.
    assert all(len(m.teams) == 3 for m in ms)


def test_named_players_and_zero_matches():
    sim = podium.simulate(["ann", "bob", "cy"], 10, seed=1)
    assert sim.matches.players == ["ann", "bob", "cy"]
    assert set(sim.skills) == {"ann", "bob", "cy"}
    empty = podium.simulate(5, 0, seed=1)
    assert len(empty.matches) == 0 and list(empty.matches) == []


def test_skill_spread_follows_skill_sd():
    # skills ~ N(0, skill_sd^2): with 4,000 players the sample sd is within 5 % of skill_sd
    # (the sd of a sample sd is about skill_sd / sqrt(2 n) = 1.1 %, so 5 % is over 4 standard errors).
    sim = podium.simulate(4000, 1, skill_sd=2.5, seed=3)
    assert np.std(list(sim.skills.values())) == pytest.approx(2.5, rel=0.05)
    flat = podium.simulate(50, 1, skill_sd=0, seed=3)
    assert set(flat.skills.values()) == {0.0}


# -- reproducibility ------------------------------------------------------------------------------

def _same(a: Simulation, b: Simulation) -> bool:
    x, y = a.matches, b.matches
    return (a.skills == b.skills and x.players == y.players
            and all(np.array_equal(getattr(x, f), getattr(y, f))
                    for f in ("match_start", "team_start", "team_rank", "player", "weight", "time")))


def test_same_seed_same_season_different_seed_different_season():
    kw = dict(teams=4, team_size=2, draw_probability=0.2)
    assert _same(podium.simulate(40, 300, seed=7, **kw), podium.simulate(40, 300, seed=7, **kw))
    assert not _same(podium.simulate(40, 300, seed=7, **kw), podium.simulate(40, 300, seed=8, **kw))


# -- line-ups -------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("players", "teams", "team_size"),
    [
        (4, 2, 2),       # every player in every match (k == number of players)
        (7, 3, 2),
        (100, 5, 4),
        (5000, 4, 3),    # more than 4,096 players: the draw-and-redraw path
    ],
)
def test_every_player_distinct_within_a_match(players, teams, team_size):
    sim = podium.simulate(players, 2000, teams=teams, team_size=team_size, seed=11)
    lineup = sim.matches.player.reshape(2000, teams * team_size)
    srt = np.sort(lineup, axis=1)
    assert not np.any(srt[:, 1:] == srt[:, :-1])
    assert lineup.min() >= 0 and lineup.max() < players


def test_line_ups_use_the_whole_population():
    # Players are chosen uniformly: each of 20 players appears in 2/20 of 5,000 1-v-1 matches, i.e. 500 times
    # on average with binomial sd sqrt(5000 * 0.1 * 0.9) = 21; 500 +- 6 sd = [374, 626].
    sim = podium.simulate(20, 5000, seed=5)
    counts = np.bincount(sim.matches.player, minlength=20)
    assert counts.min() >= 374 and counts.max() <= 626


# -- draws ----------------------------------------------------------------------------------------

N_DRAW = 20_000


@pytest.mark.parametrize("team_size", [1, 2, 3])
@pytest.mark.parametrize("p", [0.1, 0.3])
def test_draw_rate_for_equal_teams(p, team_size):
    # With skill_sd = 0 every two-team match is between equal teams, so each is a draw with probability p
    # exactly (the margin is chosen so that P(|X1 - X2| <= eps) = p; X1 - X2 ~ N(0, 2 * team_size)).  The draw
    # count is then Binomial(N, p): the observed rate has sd sqrt(p (1 - p) / N) = 0.0032 for p = 0.3 and
    # N = 20,000.  Allow 4.5 sd (a false alarm about once in 150,000 seeds).  Team sizes 2 and 3 check
    # that the margin scales with the team's performance variance.
    sim = podium.simulate(50, N_DRAW, team_size=team_size, skill_sd=0.0, draw_probability=p, seed=2024 + team_size)
    ranks = _ranks(sim, 2)
    rate = float(np.mean(ranks[:, 0] == ranks[:, 1]))
    tolerance = 4.5 * math.sqrt(p * (1 - p) / N_DRAW)
    assert abs(rate - p) <= tolerance, (rate, p, tolerance)


@pytest.mark.parametrize(("teams", "team_size", "skill_sd"), [(2, 1, 0.0), (2, 3, 1.0), (5, 1, 0.0), (4, 2, 2.0)])
def test_no_draws_when_draw_probability_is_zero(teams, team_size, skill_sd):
    sim = podium.simulate(40, 5000, teams=teams, team_size=team_size, skill_sd=skill_sd, draw_probability=0.0, seed=9)
    ranks = _ranks(sim, teams)
    # Every match is a strict order: its ranks are exactly 0 .. teams-1.
    assert np.array_equal(np.sort(ranks, axis=1), np.tile(np.arange(teams), (len(ranks), 1)))


def test_draws_with_many_teams_keep_a_winner_and_an_order():
    sim = podium.simulate(40, 3000, teams=5, skill_sd=0.0, draw_probability=0.5, seed=4)
    ranks = _ranks(sim, 5)
    assert np.all(ranks.min(axis=1) == 0)
    tied = np.array([len(set(r)) < 5 for r in ranks.tolist()])
    # Two equal teams draw with probability 0.5; neighbours in the finishing order are closer than a random
    # pair, so each of the 4 adjacent gaps is a draw with probability above 0.5 and most matches hold a tie.
    assert tied.mean() > 0.5


# -- strength -------------------------------------------------------------------------------------

@pytest.mark.parametrize("team_size", [1, 2])
def test_stronger_side_wins_as_often_as_the_model_says(team_size):
    # Team performance = sum of member skills + N(0, team_size) noise for each side, so the stronger side
    # (skill sum difference d > 0) wins with probability Phi(d / sqrt(2 * team_size)).  The number of wins is
    # a sum of independent Bernoullis with mean sum(p) and variance sum(p (1 - p)); allow 4.5 sd.
    n = 20_000
    sim = podium.simulate(200, n, team_size=team_size, skill_sd=1.0, seed=31 + team_size)
    skill = np.array([sim.skills[p] for p in sim.matches.players])
    sums = skill[_lineups(sim, 2, team_size)].sum(axis=2)    # (n, 2)
    ranks = _ranks(sim, 2)
    stronger = np.argmax(sums, axis=1)
    d = np.abs(sums[:, 0] - sums[:, 1])
    p = ndtr(d / math.sqrt(2 * team_size))
    wins = ranks[np.arange(n), stronger] == 0
    assert wins.mean() > 0.6  # the stronger side clearly wins more often
    assert abs(wins.sum() - p.sum()) <= 4.5 * math.sqrt(np.sum(p * (1 - p)))


def test_strongest_wins_free_for_alls_more_often_than_chance():
    sim = podium.simulate(30, 5000, teams=6, skill_sd=1.0, seed=21)
    skill = np.array([sim.skills[p] for p in sim.matches.players])
    lineup = _lineups(sim, 6, 1)[:, :, 0]
    best = np.argmax(skill[lineup], axis=1)
    won = _ranks(sim, 6)[np.arange(5000), best] == 0
    assert won.mean() > 2 / 6  # chance is 1/6


# -- bad arguments --------------------------------------------------------------------------------

BAD = [
    (dict(matches=-1), "matches"),
    (dict(matches=2.0), "matches"),
    (dict(matches=True), "matches"),
    (dict(teams=1), "teams"),
    (dict(teams=2.0), "teams"),
    (dict(team_size=0), "team_size"),
    (dict(team_size=1.5), "team_size"),
    (dict(draw_probability=-0.1), "draw_probability"),
    (dict(draw_probability=1.0), "draw_probability"),
    (dict(draw_probability=math.nan), "draw_probability"),
    (dict(draw_probability="0.1"), "draw_probability"),
    (dict(skill_sd=-1.0), "skill_sd"),
    (dict(skill_sd=math.inf), "skill_sd"),
    (dict(skill_sd=math.nan), "skill_sd"),
    (dict(players=1), "players"),
    (dict(players=3, teams=2, team_size=2), "players"),
    (dict(players=["a", "b", "a"]), "players"),
    (dict(players=["a"]), "players"),
]


@pytest.mark.parametrize(("kwargs", "name"), BAD, ids=[",".join(f"{k}={v!r}" for k, v in b[0].items()) for b in BAD])
def test_bad_arguments_raise_value_error_naming_the_argument(kwargs, name):
    args = dict(players=10, matches=5)
    args.update(kwargs)
    with pytest.raises(ValueError, match=f"'{name}'"):
        podium.simulate(**args)


def test_numpy_integers_are_accepted_for_counts():
    sim = podium.simulate(np.int64(20), np.int64(30), teams=np.int64(3), seed=1)
    assert len(sim.matches) == 30 and len(sim.skills) == 20


def test_uneven_teams_and_parties() -> None:
    sim = podium.simulate(100, 500, teams=2, team_size=(4, 3), seed=4)
    m = sim.matches
    sizes = np.diff(m.team_start)
    assert np.array_equal(sizes, np.tile([4, 3], 500))
    for match in m[:50]:
        assert len(set(match.players)) == 7
    # Every team of two is a whole party when parties = 1: at most 50 distinct teams among 100 players.
    duos = podium.simulate(100, 2000, teams=2, team_size=2, parties=1.0, seed=5).matches
    teams = {tuple(sorted(t)) for match in duos for t in match.teams}
    assert len(teams) <= 50
    assert all(len(set(match.players)) == 4 for match in duos)
    # Half the time: a party's pair shares a team far more often than two random players do.
    half = podium.simulate(60, 3000, teams=2, team_size=3, parties=0.5, party_size=2, seed=6).matches
    together: dict[tuple[str, str], int] = {}
    for match in half:
        for team in match.teams:
            for i, a in enumerate(team):
                for b in team[i + 1:]:
                    key = (min(a, b), max(a, b))
                    together[key] = together.get(key, 0) + 1
    counts = np.array(sorted(together.values(), reverse=True))
    assert counts[:30].min() > 10 * np.median(counts)  # the 30 parties stand out
    # The truth at every appearance is the player's skill (no drift here).
    assert np.array_equal(sim.slot_skills, np.array([sim.skills[m.players[i]] for i in m.player]))


@pytest.mark.parametrize("kwargs,field", [({"team_size": (4, 3, 2)}, "team_size"), ({"team_size": (4, 0)}, "team_size"),
                                          ({"parties": 1.5}, "parties"), ({"party_size": 1}, "party_size")])
def test_simulate_refuses_bad_structure(kwargs: dict, field: str) -> None:
    with pytest.raises(ValueError, match=f"'{field}'"):
        podium.simulate(20, 10, **kwargs)
