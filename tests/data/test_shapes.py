"""The single-call packing of :mod:`podium.data.shapes`: the same fields as ``Matches.of_match``, the same errors as
``Match``, and shared arrays that no model's public call writes."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import podium
from podium import Match, MatchError, Matches, Rating
from podium.data import shapes
from podium.data.match import _check_teams, _check_teams_each
from podium.data.shapes import packed_match, packed_teams

from ..strategies import a_match
from .test_matches import assert_same_packing


@settings(max_examples=150, deadline=None)
@given(a_match(time_kind="number") | a_match())
def test_packed_match_is_of_match(match: Match) -> None:
    """Plain or not (weights, a time), every field as the fresh packing gives it, twice (the second call reads the
    shape's stored arrays)."""
    shapes._SHAPES.clear()
    assert_same_packing(packed_match(match), Matches.of_match(match))
    assert_same_packing(packed_match(match), Matches.of_match(match))


@settings(max_examples=100, deadline=None)
@given(a_match())
def test_packed_teams_is_the_default_match(match: Match) -> None:
    teams = [list(t) for t in match.teams]
    assert_same_packing(packed_teams(teams), Matches.of_match(Match(teams)))


@pytest.mark.parametrize("teams", [
    [["a"]], [["a"], []], [["a"], ["a"]], [["a"], [3]], "ab", [["a"], "b"], None,
])
def test_packed_teams_refuses_as_match_does(teams: Any) -> None:
    with pytest.raises(MatchError) as want:
        Match(teams)
    with pytest.raises(MatchError) as got:
        packed_teams(teams)
    assert str(got.value) == str(want.value)


def test_the_latest_shapes_are_kept_and_large_fields_not(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shapes, "_SHAPES", {})
    monkeypatch.setattr(shapes, "_MAX_SHAPES", 2)
    for n in range(2, 6):
        packed = packed_teams([[f"p{i}"] for i in range(n)])
        assert packed.team_start.tolist() == list(range(n + 1))
    assert list(shapes._SHAPES) == [(1, 1, 1, 1), (1, 1, 1, 1, 1)]  # the oldest dropped for the newest
    packed = packed_teams([[f"p{i}"] for i in range(shapes._MAX_PLAYERS + 1)])
    assert len(packed.player) == shapes._MAX_PLAYERS + 1 and len(shapes._SHAPES) == 2


def test_ranks_are_not_part_of_the_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    """A free-for-all listed in join order has its ranks in any order: one shape, each call its own ranks."""
    monkeypatch.setattr(shapes, "_SHAPES", {})
    teams = [["a"], ["b"], ["c"]]
    for ranks in ((2, 0, 1), (0, None, 0), (1, 2, 0)):
        assert packed_match(Match(teams, ranks)).team_rank.tolist() == [-1 if r is None else r for r in ranks]
    assert list(shapes._SHAPES) == [(1, 1, 1)]


MODELS = [podium.Elo(), podium.PairwiseElo(), podium.PlackettLuce(), podium.Thurstone(), podium.Glicko2(),
          podium.EloMMR(), podium.TrueSkill(), podium.TrueSkill(update="chain"), podium.TrueSkill(update="exact")]
FIELDS = [  # (team sizes, ranks): ties, non-finishers, uneven teams
    ((1, 1), (1, 0)), ((1, 1), (0, 0)), ((2, 3), (0, 1)), ((1, 1, 1, 1), (2, 0, None, 0)),
    ((1, 2, 1, 3, 1), (0, 1, 1, None, None)),
]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: repr(m)[:40])
def test_no_public_call_writes_the_shared_arrays(model: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every public single-match call of every model, on fields with ties and non-finishers: the stored arrays of
    each shape are unchanged afterwards (a kernel that wrote into them would corrupt every later call)."""
    monkeypatch.setattr(shapes, "_SHAPES", {})
    rng = np.random.default_rng(5)
    prior = model.prior
    for sizes, ranks in FIELDS:
        if model._max_teams is not None and len(sizes) > model._max_teams:
            continue
        names = iter(f"p{i}" for i in range(100))
        teams = [[next(names) for _ in range(k)] for k in sizes]
        ratings = {p: Rating(prior.mu + prior.sigma * float(rng.normal()) if prior.sigma else
                             prior.mu + 200 * float(rng.normal()), prior.sigma) for t in teams for p in t}
        before = model.rate(Match(teams, ranks), ratings)
        model.log_likelihood(Match(teams, ranks), ratings)
        model.win_probabilities(teams, ratings)
        model.rank_probabilities(teams, ratings)
        model.quality(teams, ratings)
        assert shapes._SHAPES  # (the calls went through the cache)
        for shape, arrays in shapes._SHAPES.items():
            for got, fresh in zip(arrays, _fresh(shape)):
                np.testing.assert_array_equal(got, fresh, err_msg=f"{shape}")
        assert model.rate(Match(teams, ranks), ratings) == before  # and the second call agrees with the first


def _fresh(shape: Any) -> Any:
    saved = dict(shapes._SHAPES)
    shapes._SHAPES.clear()
    try:
        return shapes._arrays(shape)
    finally:
        shapes._SHAPES.clear()
        shapes._SHAPES.update(saved)


PLAYER = st.sampled_from(["a", "b", "c", "d"]) | st.integers(0, 2) | st.none()
TEAMS = st.lists(st.lists(PLAYER, max_size=3) | st.tuples(PLAYER, PLAYER) | st.text(max_size=2), max_size=4)


@settings(max_examples=300)
@given(TEAMS | st.tuples(st.lists(PLAYER, max_size=2), st.lists(PLAYER, max_size=2)))
def test_the_fast_check_of_teams_is_the_full_one(teams: Any) -> None:
    """The check at once (lists and tuples of str) accepts exactly what the team-by-team check accepts, with the
    same result; whatever it does not accept goes to the full check, whose error names the culprit."""
    try:
        want = _check_teams_each(teams)
    except MatchError as error:
        with pytest.raises(MatchError) as got:
            _check_teams(teams)
        assert str(got.value) == str(error)
    else:
        assert _check_teams(teams) == want


@pytest.mark.parametrize("log_w", [[-1e16, -1e16], [-1e15, -1e15 - 1.0], [-1e6, -1e6 - 1.0], [0.0, -800.0, 3.0],
                                   [700.0, 710.0]])
def test_win_probabilities_normalize_to_one_at_any_scale(log_w: list[float]) -> None:
    """The shifted weights divided by their sum (shifting by the log-sum instead scaled every entry by its
    rounding: two equal logs of -1e16 came out 1 each)."""
    from podium.ordering.numerics import normalized
    p = normalized(np.array(log_w))
    assert p.sum() == pytest.approx(1.0, abs=4e-16)
    w = np.exp(np.array(log_w) - max(log_w))
    np.testing.assert_allclose(p, w / w.sum(), rtol=1e-15)


def test_ratings_of_checks_what_it_makes() -> None:
    from podium.data.rating import ratings_of
    made = ratings_of(["a", "b"], [1.5, 2.0], [0.0, 3.0])
    assert made == {"a": Rating(1.5, 0.0), "b": Rating(2.0, 3.0)}
    with pytest.raises(TypeError, match="Rating.mu"):
        ratings_of(["a", "b"], [1.0, True], [0.0, 0.0])  # a bool is no rating, as Rating(True) says
    with pytest.raises(ValueError, match="finite"):
        ratings_of(["a"], [math.nan], [1.0])
    with pytest.raises(ValueError, match="sigma"):
        ratings_of(["a"], [1.0], [-1.0])
    with pytest.raises(ValueError, match="one value per player"):
        ratings_of(["a", "b"], [1.0], [0.0])
    assert ratings_of([], [], []) == {}
