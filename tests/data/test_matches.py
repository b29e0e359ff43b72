"""The columnar ``Matches``: packing Match objects into CSR arrays and back, from_arrays validation, concat.

Layout under test (DESIGN.md, "Speed"): ``match_start[M+1]`` into teams, ``team_start[T+1]`` into player
slots, ``team_rank[T]`` (-1 = did not finish), ``player[P]`` (dense index), ``weight[P]``, ``time[M]``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from podium import Match, MatchError, Matches
from podium.data.match import parse_time

from ..strategies import PLAYER_IDS, a_match

# -- strategies -----------------------------------------------------------------------------------



@st.composite
def a_history(draw, min_size: int = 0, max_size: int = 12) -> list[Match]:
    kind = draw(st.sampled_from(["none", "number", "date"]))
    pool = draw(st.lists(PLAYER_IDS, min_size=6, max_size=12, unique=True))
    return draw(st.lists(a_match(PLAYER_IDS, kind, pool), min_size=min_size, max_size=max_size))


def same(a: Match, b: Match) -> bool:
    """Same match: teams, ranks, effective weights, id and the same instant (times are normalised)."""
    ta = math.nan if a.time is None else parse_time(a.time)
    tb = math.nan if b.time is None else parse_time(b.time)
    same_time = (math.isnan(ta) and math.isnan(tb)) or ta == tb
    return (a.teams, a.ranks, a.team_weights(), a.id) == (b.teams, b.ranks, b.team_weights(), b.id) and same_time


# -- from_matches ---------------------------------------------------------------------------------

def _examples() -> list[Match]:
    # Times in the form Matches gives back (date-only at midnight, 'Z' otherwise), so `==` applies.
    return [
        Match([["ann"], ["bob", "cy"], ["dee"]], ranks=[0, 1, None], time="2024-03-01", id="g1"),
        Match([["bob"], ["dee"]], ranks=[0, 0], weights=[[0.5], [1.0]], time="2024-03-02T18:03:05.590000Z", id="g2"),
        Match([["cy"], ["eve"], ["ann"], ["bob"]], ranks=[None, 1, 0, None], time=None, id=None),
        Match([["eve", "ann"], ["dee", "cy"]], ranks=[1, 0], weights=[[0.25, 1.0], [1.0, 0.75]], time="2024-03-04"),
    ]


def test_columnar_layout_by_hand():
    ms = Matches.from_matches(_examples())
    assert ms.match_start.tolist() == [0, 3, 5, 9, 11]
    assert ms.team_start.tolist() == [0, 1, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14]
    assert ms.team_rank.tolist() == [0, 1, -1, 0, 0, -1, 1, 0, -1, 1, 0]
    assert ms.players == ["ann", "bob", "cy", "dee", "eve"]  # order of first appearance
    assert ms.player.tolist() == [0, 1, 2, 3, 1, 3, 2, 4, 0, 1, 4, 0, 3, 2]
    assert ms.weight.tolist() == [1, 1, 1, 1, 0.5, 1, 1, 1, 1, 1, 0.25, 1, 1, 0.75]
    assert ms.ids == ["g1", "g2", None, None]
    assert ms.time_is_date
    # Dates become days since 1970-01-01: 2024-03-01 is day 19783 (datetime.date(2024, 3, 1).toordinal() - 719163).
    assert ms.time[0] == 19783.0
    assert math.isnan(ms.time[2])
    assert ms.n_teams.tolist() == [3, 2, 4, 2]
    for arr in (ms.match_start, ms.team_start, ms.team_rank, ms.player):
        assert arr.dtype == np.int64
    assert ms.weight.dtype == np.float64 and ms.time.dtype == np.float64


def test_round_trip_indexing_iteration_and_len():
    originals = _examples()
    ms = Matches.from_matches(originals)
    assert len(ms) == 4
    assert [ms[i] for i in range(4)] == originals
    assert [ms[-i] for i in range(1, 5)] == originals[::-1]
    assert list(ms) == originals
    assert ms[np.int64(1)] == originals[1]


@pytest.mark.parametrize(("start", "stop"), [(0, 4), (1, 3), (2, 2), (3, 4), (-2, None), (None, -1), (-10, 10), (3, 1)])
def test_slicing_gives_matches_equal_to_the_originals(start, stop):
    originals = _examples()
    part = Matches.from_matches(originals)[start:stop]
    assert isinstance(part, Matches)
    assert len(part) == len(originals[start:stop])
    assert list(part) == originals[start:stop]
    assert part.ids == [m.id for m in originals[start:stop]]


def test_index_errors():
    ms = Matches.from_matches(_examples())
    for bad in (4, -5, 100):
        with pytest.raises(IndexError):
            ms[bad]
    for bad in (1.0, "1", True):
        with pytest.raises(TypeError):
            ms[bad]  # type: ignore[index]
    with pytest.raises(ValueError):
        ms[::2]


def test_empty_history():
    ms = Matches.from_matches([])
    assert len(ms) == 0 and list(ms) == [] and ms.players == []
    assert ms.match_start.tolist() == [0]


def test_numeric_times_and_datetimes():
    ms = Matches.from_matches([Match([["a"], ["b"]], time=3), Match([["b"], ["a"]], time=4.5)])
    assert not ms.time_is_date
    assert ms[0].time == 3 and ms[1].time == 4.5
    ms = Matches.from_matches([Match([["a"], ["b"]], time="2024-03-01T12:00:00+02:00")])
    assert ms.time[0] == 19783.0 + 10 / 24  # 10:00 UTC on 2024-03-01, in days
    assert ms[0].time == "2024-03-01T10:00:00Z"


def test_from_matches_rejects_mixed_time_kinds_and_non_matches():
    with pytest.raises(MatchError, match="'time'"):
        Matches.from_matches([Match([["a"], ["b"]], time=3), Match([["a"], ["b"]], time="2024-01-01")])
    with pytest.raises(MatchError, match=r"matches\[1\]"):
        Matches.from_matches([Match([["a"], ["b"]]), [["a"], ["b"]]])  # type: ignore[list-item]


def test_from_matches_of_matches_is_identity():
    ms = Matches.from_matches(_examples())
    assert Matches.from_matches(ms) is ms


@given(a_history())
def test_round_trip_property(history):
    ms = Matches.from_matches(history)
    assert len(ms) == len(history)
    assert all(same(a, b) for a, b in zip(ms, history))
    assert all(same(ms[-i], history[-i]) for i in range(1, len(history) + 1))
    assert len(ms.player) == sum(len(m.players) for m in history)
    assert (ms.team_rank == -1).sum() == sum(r is None for m in history for r in m.ranks)


@given(a_history(), st.integers(-15, 15), st.integers(-15, 15))
def test_slice_property(history, start, stop):
    ms = Matches.from_matches(history)
    part = ms[start:stop]
    expected = history[start:stop]
    assert len(part) == len(expected)
    assert all(same(a, b) for a, b in zip(part, expected))
    # A slice is itself a valid columnar history.
    Matches(part.match_start, part.team_start, part.team_rank, part.player, part.weight, part.time,
            part.players, part.ids, time_is_date=part.time_is_date)


# -- from_arrays ----------------------------------------------------------------------------------

def test_from_arrays_builds_the_documented_layout():
    # Two matches: (a vs b,c) with b,c winning; (a, b, c) free-for-all with c not finishing.
    ms = Matches.from_arrays(
        match_start=[0, 2, 5], team_start=[0, 1, 3, 4, 5, 6], team_rank=[1, 0, 0, 1, -1],
        player=[0, 1, 2, 0, 1, 2], weight=[1, 0.5, 1, 1, 1, 1], time=[1.0, 2.0],
        players=["a", "b", "c"], ids=["x", "y"],
    )
    assert list(ms) == [
        Match([["a"], ["b", "c"]], ranks=[1, 0], weights=[[1], [0.5, 1]], time=1, id="x"),
        Match([["a"], ["b"], ["c"]], ranks=[0, 1, None], time=2, id="y"),
    ]


def test_from_arrays_defaults():
    ms = Matches.from_arrays([0, 2], [0, 1, 2], [0, 1], [0, 1])
    assert ms.players == ["0", "1"]
    assert ms.weight.tolist() == [1.0, 1.0]
    assert list(ms) == [Match([["0"], ["1"]])]


BAD_ARRAYS = [
    # (name, kwargs, words that must appear in the message)
    ("player twice in one match",
     dict(match_start=[0, 2], team_start=[0, 1, 2], team_rank=[0, 1], player=[0, 0], players=["a"]),
     ["match 0", "'teams'", "'a'"]),
    ("player twice within a team of the second match",
     dict(match_start=[0, 2, 4], team_start=[0, 1, 2, 4, 5], team_rank=[0, 1, 0, 1], player=[0, 1, 2, 2, 0],
          players=["a", "b", "c"]),
     ["match 1", "'c'"]),
    ("one team", dict(match_start=[0, 1], team_start=[0, 2], team_rank=[0], player=[0, 1]), ["match 0", "'teams'", "Got 1"]),
    ("fewer than two teams in the second match",
     dict(match_start=[0, 2, 3], team_start=[0, 1, 2, 3], team_rank=[0, 1, 0], player=[0, 1, 0]),
     ["match 1", "'teams'"]),
    ("empty team", dict(match_start=[0, 2], team_start=[0, 1, 1], team_rank=[0, 1], player=[0]), ["team 1"]),
    ("weight zero", dict(match_start=[0, 2], team_start=[0, 1, 2], team_rank=[0, 1], player=[0, 1], weight=[1, 0]),
     ["'weight'", "Got 0.0"]),
    ("weight above one", dict(match_start=[0, 2], team_start=[0, 1, 2], team_rank=[0, 1], player=[0, 1], weight=[1.5, 1]),
     ["'weight'", "Got 1.5"]),
    ("weight negative", dict(match_start=[0, 2], team_start=[0, 1, 2], team_rank=[0, 1], player=[0, 1], weight=[1, -0.5]),
     ["'weight'", "Got -0.5"]),
    ("weight nan", dict(match_start=[0, 2], team_start=[0, 1, 2], team_rank=[0, 1], player=[0, 1], weight=[np.nan, 1]),
     ["'weight'", "Got nan"]),
    ("rank below -1", dict(match_start=[0, 2], team_start=[0, 1, 2], team_rank=[0, -2], player=[0, 1]), ["'team_rank'", "-2"]),
    ("time inf", dict(match_start=[0, 2], team_start=[0, 1, 2], team_rank=[0, 1], player=[0, 1], time=[np.inf]), ["'time'"]),
    ("time wrong length", dict(match_start=[0, 2], team_start=[0, 1, 2], team_rank=[0, 1], player=[0, 1], time=[1.0, 2.0]),
     ["'time'"]),
    ("player index out of range",
     dict(match_start=[0, 2], team_start=[0, 1, 2], team_rank=[0, 1], player=[0, 3], players=["a", "b"]), ["'player'"]),
    ("ids wrong length", dict(match_start=[0, 2], team_start=[0, 1, 2], team_rank=[0, 1], player=[0, 1], ids=["x", "y"]),
     ["'ids'"]),
    ("team_start does not end at the slots",
     dict(match_start=[0, 2], team_start=[0, 1, 3], team_rank=[0, 1], player=[0, 1]), ["'team_start'"]),
    ("match_start does not start at zero",
     dict(match_start=[1, 2], team_start=[0, 1, 2], team_rank=[0, 1], player=[0, 1]), ["'match_start'"]),
]


@pytest.mark.parametrize(("kwargs", "words"), [c[1:] for c in BAD_ARRAYS], ids=[c[0] for c in BAD_ARRAYS])
def test_from_arrays_rejects(kwargs, words):
    with pytest.raises(MatchError) as info:
        Matches.from_arrays(**kwargs)
    for word in words:
        assert word in str(info.value), f"{word!r} not in {str(info.value)!r}"


@pytest.mark.parametrize("weight", [[0.5], [1.0, 1.0, 0.5]], ids=["too short", "too long"])
def test_from_arrays_rejects_weight_of_the_wrong_length(weight):
    # weight[P] has one entry per player slot (DESIGN.md, "Speed").  A short array would be read out of
    # bounds by the compiled engine; a long one silently misaligns.
    with pytest.raises(MatchError, match="'weight'"):
        Matches.from_arrays([0, 2], [0, 1, 2], [0, 1], [0, 1], weight=weight)


def test_from_arrays_rejects_duplicate_player_names():
    # Two slots of one match with distinct indices but the same name are the same player twice.
    with pytest.raises(MatchError, match="'players'|'a'"):
        Matches.from_arrays([0, 2], [0, 1, 2], [0, 1], [0, 1], players=["a", "a"])


def test_from_arrays_rejects_non_string_player_names():
    with pytest.raises(MatchError, match=r"'players\[0\]' must be a player id \(str\)"):
        Matches.from_arrays([0, 2], [0, 1, 2], [0, 1], [0, 1], players=[1, 2])  # type: ignore[list-item]


# -- concat ---------------------------------------------------------------------------------------

def test_concat_joins_in_order_and_merges_players():
    a = Matches.from_matches([Match([["x"], ["y"]], time=1, id="1"), Match([["y"], ["z"]], time=2, id="2")])
    b = Matches.from_matches([Match([["w"], ["z"], ["x"]], ranks=[0, None, 1], weights=[[0.5], [1], [1]], time=3, id="3")])
    c = Matches.concat([a, b])
    assert c.players == ["x", "y", "z", "w"]
    assert c.ids == ["1", "2", "3"]
    assert c.time.tolist() == [1.0, 2.0, 3.0]
    assert list(c) == list(a) + list(b)
    # The same player keeps one index across parts.
    assert c.player[c.team_start[c.match_start[2]]:].tolist() == [3, 2, 0]


def test_concat_of_nothing_and_of_empty_parts():
    assert len(Matches.concat([])) == 0
    a = Matches.from_matches(_examples())
    c = Matches.concat([Matches.from_matches([]), a, a[2:2]])
    assert list(c) == list(a)


def test_concat_rejects_mixed_time_kinds():
    a = Matches.from_matches([Match([["x"], ["y"]], time=1)])
    b = Matches.from_matches([Match([["x"], ["y"]], time="2024-01-01")])
    with pytest.raises(MatchError, match="'time'"):
        Matches.concat([a, b])
    # A part with no times at all mixes with anything.
    none = Matches.from_matches([Match([["x"], ["y"]])])
    assert Matches.concat([none, b]).time_is_date
    assert not Matches.concat([a, none]).time_is_date


def test_concat_keeps_meta():
    # meta[M] travels with a history (read_matches fills it; slicing keeps it), so joining keeps it too.
    a = Matches.from_matches(_examples()[:2])
    a.meta = [{"venue": "x"}, None]
    b = Matches.from_matches(_examples()[2:])
    b.meta = [None, {"venue": "y"}]
    c = Matches.concat([a, b])
    assert c.meta == [{"venue": "x"}, None, None, {"venue": "y"}]


@settings(max_examples=50)
@given(a_history(), st.data())
def test_concat_of_pieces_gives_back_the_whole(history, data):
    ms = Matches.from_matches(history)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(history)), max_size=3)))
    bounds = [0, *cuts, len(history)]
    pieces = [ms[i:j] for i, j in zip(bounds, bounds[1:])]
    joined = Matches.concat(pieces)
    assert len(joined) == len(history)
    assert all(same(a, b) for a, b in zip(joined, history))
    assert joined.time_is_date == ms.time_is_date or np.all(np.isnan(ms.time))


@pytest.mark.parametrize("field", ["team_rank", "player"])
def test_from_arrays_refuses_float_arrays_instead_of_truncating(field):
    arrays = {"match_start": [0, 2], "team_start": [0, 1, 2], "team_rank": [0, 1], "player": [0, 1]}
    arrays[field] = [0.5, 1.7]
    with pytest.raises(MatchError, match=f"'{field}' must be an array of integers"):
        Matches.from_arrays(**arrays)


@settings(max_examples=150, deadline=None)
@given(a_match(time_kind="date") | a_match(time_kind="number"), st.data())
def test_of_match_packs_as_from_matches_does(match: Match, data: st.DataObject) -> None:
    """The single-match path of the public calls gives every field the builder gives (the result fields, meta
    and time kinds included)."""
    n = len(match.teams)
    extra = data.draw(st.fixed_dictionaries({}, optional={
        "scores": st.lists(st.none() | st.integers(-5, 5), min_size=n, max_size=n),
        "advantage": st.lists(st.sampled_from([0.0, 1.0, -0.5]), min_size=n, max_size=n),
        "weight": st.sampled_from([1.0, 2.5]), "higher_is_better": st.booleans(),
        "meta": st.just({"league": "x"})}))
    if "scores" not in extra or all(x is None for x in extra["scores"]):
        extra.pop("higher_is_better", None)  # (it says which way scores point)
    if "scores" in extra:  # ranks then follow from the scores
        match = Match(match.teams, None, match.weights, match.time, match.id, **extra)
    else:
        match = Match(match.teams, match.ranks, match.weights, match.time, match.id, **extra)
    assert_same_packing(Matches.of_match(match), Matches.from_matches([match]))


def assert_same_packing(one: Matches, want: Matches) -> None:
    """Every field of two packed histories equal, arrays in dtype and shape too."""
    for name in Matches.__slots__:
        got, expected = getattr(one, name), getattr(want, name)
        if isinstance(expected, np.ndarray):
            assert got.dtype == expected.dtype and got.shape == expected.shape, name
            np.testing.assert_array_equal(got, expected, err_msg=name)
        else:
            assert got == expected, name
