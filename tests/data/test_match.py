"""Match construction and validation, Match.from_scores / Match.ffa, and Rating.

The contract under test is DESIGN.md, "What a match says": bad input raises ``MatchError`` (a ``ValueError``)
whose message names the field and shows what was received; nothing is silently coerced.
"""

from __future__ import annotations

import dataclasses
import math
from datetime import date, datetime, timezone

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import podium
from podium import Match, MatchError, Rating
from podium.data.match import MIN_WEIGHT

from ..strategies import player_ids

NAN, INF = math.nan, math.inf


def _raises_naming(field: str, received: str, call, *args, **kwargs) -> MatchError:
    """Assert ``call`` raises MatchError naming ``field`` and showing ``received`` after 'Got'."""
    with pytest.raises(MatchError) as info:
        call(*args, **kwargs)
    message = str(info.value)
    assert field in message, f"field {field!r} not named in {message!r}"
    assert "Got" in message, f"no received value shown in {message!r}"
    shown = message.split("Got", 1)[1]
    assert received in shown, f"received value {received!r} not shown in {message!r}"
    return info.value


# -- construction ---------------------------------------------------------------------------------

def test_match_error_is_a_value_error():
    assert issubclass(MatchError, ValueError)
    assert podium.MatchError is MatchError


def test_defaults_winner_first_no_weights_no_time_no_id():
    m = Match([["ann"], ["bob", "cy"], ["dee"]])
    assert m.teams == (("ann",), ("bob", "cy"), ("dee",))
    assert m.ranks == (0, 1, 2)  # DESIGN.md: default ranks = the order given, winner first
    assert m.weights is None
    assert m.team_weights() == ((1.0,), (1.0, 1.0), (1.0,))  # DESIGN.md: weights default 1
    assert m.time is None and m.id is None
    assert m.players == ["ann", "bob", "cy", "dee"]


def test_design_example_draws_and_non_finishers_are_kept_as_given():
    # DESIGN.md's own example: ranks [0, 1, None].
    m = Match([["ann"], ["bob", "cy"], ["dee"]], ranks=[0, 1, None])
    assert m.ranks == (0, 1, None)
    draw = Match([["a"], ["b"], ["c"]], ranks=[1, 0, 1])
    assert draw.ranks == (1, 0, 1)
    all_out = Match([["a"], ["b"]], ranks=[None, None])
    assert all_out.ranks == (None, None)


def test_fields_are_stored_as_given_and_frozen():
    m = Match([["a", "b"], ["c"]], ranks=[1, 0], weights=[[0.5, 1], [0.25]], time="2024-03-01", id="g1")
    assert m.weights == ((0.5, 1.0), (0.25,))
    assert m.time == "2024-03-01"
    assert m.id == "g1"
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.ranks = (0, 1)  # type: ignore[misc]


def test_match_does_not_alias_its_inputs():
    teams = [["a"], ["b"]]
    ranks = [0, 1]
    m = Match(teams, ranks)
    teams[0].append("z")
    ranks[0] = 5
    assert m.teams == (("a",), ("b",))
    assert m.ranks == (0, 1)


def test_numpy_inputs_are_accepted_and_ranks_become_python_ints():
    m = Match(np.array([["a"], ["b"]]), ranks=np.array([1, 0]), weights=np.array([[0.5], [1.0]]))
    assert m.ranks == (1, 0)
    assert all(type(r) is int for r in m.ranks)
    assert m.weights == ((0.5,), (1.0,))


@pytest.mark.parametrize(
    "time",
    [0, -3, 12.5, np.float64(7.25), "2024-03-01", "2024-03-01T12:30:00Z", "2024-03-01T12:30:00+02:00",
     datetime(2024, 3, 1, 12, 30, tzinfo=timezone.utc), datetime(2024, 3, 1, 12, 30), date(2024, 3, 1), None],
)
def test_valid_times_are_accepted(time):
    assert Match([["a"], ["b"]], time=time).time == time


# -- every bad input in DESIGN.md's list ----------------------------------------------------------

T3 = [["a"], ["b"], ["c"]]

BAD_MATCHES = [
    # fewer than two teams
    ("no teams", dict(teams=[]), "'teams'", "[]"),
    ("one team", dict(teams=[["a", "b"]]), "'teams'", "[['a', 'b']]"),
    # an empty team
    ("empty team", dict(teams=[["a"], []]), "'teams[1]'", "[['a'], []]"),
    # a player twice, across teams and within a team
    ("player twice across teams", dict(teams=[["a"], ["b", "a"]]), "'teams'", "[['a'], ['b', 'a']]"),
    ("player twice in a team", dict(teams=[["a", "a"], ["b"]]), "'teams'", "[['a', 'a'], ['b']]"),
    # ranks of the wrong length
    ("ranks too short", dict(teams=T3, ranks=[0, 1]), "'ranks'", "[0, 1]"),
    ("ranks too long", dict(teams=T3, ranks=[0, 1, 2, 3]), "'ranks'", "[0, 1, 2, 3]"),
    ("ranks empty", dict(teams=T3, ranks=[]), "'ranks'", "[]"),
    # bool / float / negative / non-int ranks: nothing coerced
    ("rank bool", dict(teams=T3, ranks=[0, True, 2]), "'ranks[1]'", "True"),
    ("rank float", dict(teams=T3, ranks=[0, 1.0, 2]), "'ranks[1]'", "1.0"),
    ("rank nan", dict(teams=T3, ranks=[0, NAN, 2]), "'ranks[1]'", "nan"),
    ("rank negative", dict(teams=T3, ranks=[0, 1, -1]), "'ranks[2]'", "-1"),
    ("rank str", dict(teams=T3, ranks=["0", 1, 2]), "'ranks[0]'", "'0'"),
    ("ranks a str", dict(teams=[["a"], ["b"]], ranks="01"), "'ranks'", "'01'"),
    # a weight outside [1e-6, 1]
    ("weight zero", dict(teams=[["a"], ["b"]], weights=[[0], [1]]), "'weights[0][0]'", "0"),
    ("weight subnormal", dict(teams=[["a"], ["b"]], weights=[[5e-324], [1]]), "'weights[0][0]'", "5e-324"),
    ("weight below the least", dict(teams=[["a"], ["b"]], weights=[[1], [9.99e-7]]), "'weights[1][0]'", "9.99e-07"),
    ("weight negative", dict(teams=[["a"], ["b"]], weights=[[1], [-0.5]]), "'weights[1][0]'", "-0.5"),
    ("weight above one", dict(teams=[["a", "b"], ["c"]], weights=[[1, 1.5], [1]]), "'weights[0][1]'", "1.5"),
    ("weight nan", dict(teams=[["a"], ["b"]], weights=[[NAN], [1]]), "'weights[0][0]'", "nan"),
    ("weight inf", dict(teams=[["a"], ["b"]], weights=[[1], [INF]]), "'weights[1][0]'", "inf"),
    ("weight bool", dict(teams=[["a"], ["b"]], weights=[[True], [1]]), "'weights[0][0]'", "True"),
    ("weight str", dict(teams=[["a"], ["b"]], weights=[["0.5"], [1]]), "'weights[0][0]'", "'0.5'"),
    ("weights wrong team count", dict(teams=T3, weights=[[1], [1]]), "'weights'", "[[1], [1]]"),
    ("weights wrong team size", dict(teams=[["a"], ["b", "c"]], weights=[[1], [1]]), "'weights[1]'", "[1]"),
    # a non-finite time, a time that is not a time
    ("time nan", dict(teams=[["a"], ["b"]], time=NAN), "'time'", "nan"),
    ("time numpy nan", dict(teams=[["a"], ["b"]], time=np.float64("nan")), "'time'", "nan"),
    ("time inf", dict(teams=[["a"], ["b"]], time=INF), "'time'", "inf"),
    ("time -inf", dict(teams=[["a"], ["b"]], time=-INF), "'time'", "-inf"),
    ("time bool", dict(teams=[["a"], ["b"]], time=True), "'time'", "True"),
    ("time not a date", dict(teams=[["a"], ["b"]], time="yesterday"), "'time'", "'yesterday'"),
    # non-string player ids, non-sequence teams
    ("player int", dict(teams=[[1], ["b"]]), "'teams[0][0]'", "1"),
    ("player None", dict(teams=[["a"], [None]]), "'teams[1][0]'", "None"),
    ("player bytes", dict(teams=[["a"], [b"b"]]), "'teams[1][0]'", "b'b'"),
    ("team a str", dict(teams=["ab", "cd"]), "'teams[0]'", "'ab'"),
    ("teams a str", dict(teams="abc"), "'teams'", "'abc'"),
    ("teams None", dict(teams=None), "'teams'", "None"),
    # a non-string id
    ("id int", dict(teams=[["a"], ["b"]], id=7), "'id'", "7"),
]


@pytest.mark.parametrize(("kwargs", "field", "received"), [c[1:] for c in BAD_MATCHES], ids=[c[0] for c in BAD_MATCHES])
def test_bad_match_raises_match_error_naming_field_and_value(kwargs, field, received):
    error = _raises_naming(field, received, Match, **kwargs)
    assert isinstance(error, ValueError)


def test_player_twice_names_the_player():
    with pytest.raises(MatchError, match="'zed'"):
        Match([["a", "zed"], ["b"], ["zed"]])


@given(
    sizes=st.lists(st.integers(1, 4), min_size=2, max_size=6),
    data=st.data(),
)
def test_a_repeated_player_anywhere_is_rejected(sizes, data):
    players = [f"p{i}" for i in range(sum(sizes))]
    teams, k = [], 0
    for s in sizes:
        teams.append(players[k:k + s])
        k += s
    Match(teams)  # distinct players: fine
    victim = data.draw(st.sampled_from(players))
    team = data.draw(st.integers(0, len(teams) - 1))
    pos = data.draw(st.integers(0, len(teams[team])))
    teams[team].insert(pos, victim)
    with pytest.raises(MatchError, match="more than once"):
        Match(teams)


@given(
    sizes=st.lists(st.integers(1, 3), min_size=2, max_size=6),
    data=st.data(),
)
def test_valid_matches_keep_what_they_were_given(sizes, data):
    n = len(sizes)
    players = data.draw(st.lists(player_ids(5), min_size=sum(sizes), max_size=sum(sizes), unique=True))
    teams, k = [], 0
    for s in sizes:
        teams.append(players[k:k + s])
        k += s
    ranks = data.draw(st.lists(st.none() | st.integers(0, n), min_size=n, max_size=n))
    weights = [data.draw(st.lists(st.floats(MIN_WEIGHT, 1), min_size=s, max_size=s)) for s in sizes]
    m = Match(teams, ranks, weights)
    assert m.teams == tuple(tuple(t) for t in teams)
    assert m.ranks == tuple(ranks)
    if all(w == 1.0 for ws in weights for w in ws):
        assert m.weights is None  # full play everywhere has one representation: the default
    else:
        assert m.weights == tuple(tuple(w) for w in weights)
    assert m.team_weights() == tuple(tuple(w) for w in weights)
    assert m.players == players


# -- Match.from_scores ------------------------------------------------------------------------------

def test_from_scores_docstring_example_higher_wins_equal_draws():
    # Higher score finishes ahead; 3 and 3 draw below 5 (DESIGN.md, "What a match says").
    assert Match.from_scores([["a"], ["b"], ["c"]], [3, 5, 3]).ranks == (1, 0, 1)


def test_from_scores_two_teams():
    assert Match.from_scores([["a"], ["b"]], [10, 20]).ranks == (1, 0)
    assert Match.from_scores([["a"], ["b"]], [2.5, -1]).ranks == (0, 1)
    assert Match.from_scores([["a"], ["b"]], [1, 1.0]).ranks == (0, 0)  # int 1 and float 1.0 are equal scores


def test_from_scores_none_did_not_finish():
    m = Match.from_scores([["a"], ["b"], ["c"], ["d"]], [None, 2, 7, None])
    assert m.ranks[0] is None and m.ranks[3] is None
    assert m.ranks[2] < m.ranks[1]
    assert Match.from_scores([["a"], ["b"]], [None, None]).ranks == (None, None)


def test_from_scores_passes_weights_time_id_through():
    m = Match.from_scores([["a", "b"], ["c"]], [1, 0], weights=[[0.5, 1], [1]], time=3, id="x")
    assert m.weights == ((0.5, 1.0), (1.0,))
    assert m.time == 3 and m.id == "x"
    assert m.teams == (("a", "b"), ("c",))


@given(st.lists(st.none() | st.integers(-5, 5) | st.floats(-1e6, 1e6), min_size=2, max_size=8))
def test_from_scores_orders_like_the_scores(scores):
    teams = [[f"p{i}"] for i in range(len(scores))]
    ranks = Match.from_scores(teams, scores).ranks
    for i, (si, ri) in enumerate(zip(scores, ranks)):
        assert (si is None) == (ri is None)
        for sj, rj in zip(scores[i + 1:], ranks[i + 1:]):
            if si is None or sj is None:
                continue
            assert (si > sj) == (ri < rj)
            assert (si == sj) == (ri == rj)


BAD_SCORES = [
    ("score nan", [1, NAN], "'scores[1]'", "nan"),
    ("score inf", [INF, 1], "'scores[0]'", "inf"),
    ("score -inf", [1, -INF], "'scores[1]'", "-inf"),
    ("score str", ["3", 1], "'scores[0]'", "'3'"),
    ("score bool", [True, 1], "'scores[0]'", "True"),
    ("too few scores", [1], "'scores'", "[1]"),
    ("too many scores", [1, 2, 3], "'scores'", "[1, 2, 3]"),
    ("scores a str", "12", "'scores'", "'12'"),
    ("scores None", None, "'scores'", "None"),
]


@pytest.mark.parametrize(("scores", "field", "received"), [c[1:] for c in BAD_SCORES], ids=[c[0] for c in BAD_SCORES])
def test_from_scores_rejects_bad_scores(scores, field, received):
    _raises_naming(field, received, Match.from_scores, [["a"], ["b"]], scores)


def test_from_scores_validates_teams_like_match():
    _raises_naming("'teams'", "[['a'], ['a']]", Match.from_scores, [["a"], ["a"]], [1, 2])
    _raises_naming("'teams'", "[['a']]", Match.from_scores, [["a"]], [1])


def test_from_scores_with_teams_none_raises_match_error():
    # DESIGN.md: bad input raises MatchError naming the field.  (A TypeError from len(None) is a bug.)
    _raises_naming("'teams'", "None", Match.from_scores, None, [1, 2])


# -- Match.ffa -------------------------------------------------------------------------------------

def test_ffa_is_one_player_teams_winner_first():
    m = Match.ffa(["ann", "bob", "cy"], time=5, id="race")
    assert m.teams == (("ann",), ("bob",), ("cy",))
    assert m.ranks == (0, 1, 2)
    assert m.weights is None
    assert m.time == 5 and m.id == "race"
    assert m == Match([["ann"], ["bob"], ["cy"]], time=5, id="race")


@pytest.mark.parametrize(
    ("players", "field", "received"),
    [
        ("abc", "'players'", "'abc'"),
        (None, "'players'", "None"),
        (["a"], "'teams'", "[['a']]"),
        ([], "'teams'", "[]"),
        (["a", "b", "a"], "'teams'", "'a'"),
        (["a", 2], "'teams[1][0]'", "2"),
    ],
)
def test_ffa_rejects_bad_players(players, field, received):
    _raises_naming(field, received, Match.ffa, players)


# -- Rating ---------------------------------------------------------------------------------------

def test_rating_defaults_and_conversion():
    r = Rating(1500)
    assert r.sigma == 0.0  # DESIGN.md: Elo-family models have sigma = 0
    assert type(r.mu) is float and type(r.sigma) is float
    assert Rating(1, 2) == Rating(1.0, 2.0)
    assert hash(Rating(1, 2)) == hash(Rating(1.0, 2.0))


def test_rating_is_frozen():
    r = Rating(25.0, 25 / 3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.mu = 0.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.sigma = 1.0  # type: ignore[misc]


def test_conservative_trueskill_prior_is_zero():
    # TrueSkill paper (Herbrich, Minka & Graepel 2007): prior mu = 25, sigma = 25/3, so mu - 3 sigma = 0.
    assert Rating(25.0, 25 / 3).conservative(3) == pytest.approx(0.0, abs=1e-12)


def test_conservative_hand_values():
    # mu - k * sigma by hand.
    assert Rating(30.0, 2.0).conservative(3) == 24.0
    assert Rating(30.0, 2.0).conservative(0) == 30.0
    assert Rating(30.0, 2.0).conservative(1.5) == 27.0
    assert Rating(1500.0).conservative(3) == 1500.0


@given(
    st.floats(-1e6, 1e6),
    st.floats(0, 1e6),
    st.floats(-10, 10),
)
def test_conservative_is_mu_minus_k_sigma(mu, sigma, k):
    assert Rating(mu, sigma).conservative(k) == mu - k * sigma


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        (dict(mu=NAN), "mu"),
        (dict(mu=INF), "mu"),
        (dict(mu=-INF), "mu"),
        (dict(mu=0.0, sigma=NAN), "sigma"),
        (dict(mu=0.0, sigma=INF), "sigma"),
        (dict(mu=0.0, sigma=-1.0), "sigma"),
        (dict(mu=0.0, sigma=-1e-300), "sigma"),
    ],
)
def test_rating_rejects_non_finite_and_negative_sigma(kwargs, field):
    with pytest.raises(ValueError, match=field):
        Rating(**kwargs)


@pytest.mark.parametrize("value", [True, "25", None])
def test_rating_rejects_non_numbers(value):
    with pytest.raises((TypeError, ValueError), match="mu"):
        Rating(value)  # type: ignore[arg-type]
