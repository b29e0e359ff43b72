"""Every model keeps every rating finite for any match the record format accepts.

The record format's numbers have limits (:data:`podium.data.match.MIN_WEIGHT`, ``MAX_MATCH_WEIGHT``, ``MAX_VALUE``,
``MAX_TIME``; a starting rating's ``|mu|`` up to :data:`podium.models.base.MAX_MU` and its ``sigma`` within the
model's own bounds).  Hypothesis drives every numeric field (partial-play weights, match weights, scores,
advantages, times, starting ratings) to and past them, with arbitrary floats besides: a match is either refused by
a :class:`MatchError` (or, for a rating, a ``ValueError``) that names the field, or every model rates it, alone
and in a replay of several, to finite ratings, and TrueSkill Through Time smooths the replay to finite ones.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import podium
from podium import League, Match, MatchError, Rating
from podium.data.match import MAX_MATCH_WEIGHT, MAX_TIME, MAX_VALUE, MIN_WEIGHT
from podium.models.base import MAX_MU

HUGE = 1.7976931348623157e308


def _around(*limits: float) -> list[float]:
    """Each limit, the floats next to it on either side, and the same negated."""
    out = []
    for x in limits:
        for v in (x, np.nextafter(x, math.inf), np.nextafter(x, -math.inf)):
            out += [float(v), -float(v)]
    return out


def _numbers(low: float, high: float, *limits: float) -> st.SearchStrategy[float]:
    """The limits and their neighbours, extreme floats, any float, and (half the time) any float within
    ``[low, high]``, the range accepted."""
    edges = _around(low, high, *limits) + [0.0, 1.0, 5e-324, 1e-300, 1e300, HUGE, -HUGE, math.inf, -math.inf, math.nan]
    return st.one_of(st.sampled_from(edges), st.floats(allow_nan=True, allow_infinity=True), st.floats(low, high),
                     st.floats(low, high))


WEIGHTS = _numbers(MIN_WEIGHT, 1.0)
MATCH_WEIGHTS = _numbers(1.0 / MAX_MATCH_WEIGHT, MAX_MATCH_WEIGHT)
VALUES = _numbers(-MAX_VALUE, MAX_VALUE, 1e6)
TIMES = _numbers(-MAX_TIME, MAX_TIME, 1e15)
MUS = _numbers(-MAX_MU, MAX_MU, 1e100)
SIGMAS = _numbers(0.0, 1e150, 1e30, 1e100, 1.0)


def _models() -> dict[str, podium.Model]:
    """Every model, with what reads the extreme fields switched on (advantages, margins, dynamics in time)."""
    return {
        "Elo": podium.Elo(advantage=100.0, margin_power=1.0),
        "Elo classic": podium.Elo(update="classic", performance="gaussian", margin="fivethirtyeight"),
        "PairwiseElo": podium.PairwiseElo(advantage=100.0, margin_power=2.0),
        "PlackettLuce": podium.PlackettLuce(advantage=100.0),
        "Thurstone": podium.Thurstone(advantage=100.0, margin_scale=1.0),
        "TrueSkill": podium.TrueSkill(advantage=1.0, margin_scale=1.0, drift=1.0),
        "TrueSkill exact": podium.TrueSkill(update="exact", tau=0.0, drift=2.0),
        "Glicko2": podium.Glicko2(period=1.0, advantage=50.0),
        "EloMMR": podium.EloMMR(drift_per_day=1.0, advantage=50.0),
    }


MODELS = _models()
# The exact ordering engine integrates a far upset among three or more teams slowly (seconds at 1e8 rating points
# apart, a minute at 1e12: docs/design.md, "Numerical contract"), finitely all the same; these models' properties
# run on two teams so that the suite stays quick.
TWO_TEAMS = {"Thurstone", "TrueSkill exact"}
FIELD = re.compile(r"'(weights\[\d\]\[\d\]|weight|scores\[\d\]|advantage\[\d\]|time)'")


@st.composite
def records(draw: st.DrawFn) -> dict[str, Any]:
    """A match record of two or three teams whose numeric fields are drawn from the extremes."""
    n = draw(st.integers(2, 3))
    sizes = [draw(st.integers(1, 2)) for _ in range(n)]
    teams = [[f"p{t}{i}" for i in range(k)] for t, k in enumerate(sizes)]
    record: dict[str, Any] = {"teams": teams}
    if draw(st.booleans()):
        record["weights"] = [[draw(WEIGHTS) for _ in team] for team in teams]
    if draw(st.booleans()):
        record["weight"] = draw(MATCH_WEIGHTS)
    if draw(st.booleans()):
        record["scores"] = [draw(VALUES) for _ in teams]
    if draw(st.booleans()):
        record["advantage"] = [draw(VALUES) for _ in teams]
    if draw(st.booleans()):
        record["time"] = draw(TIMES)
    return record


def _match(record: dict[str, Any], **changes: Any) -> Match | None:
    """The record's Match, or None where it is refused by a MatchError naming one of the record's fields."""
    try:
        return Match(**(record | changes))
    except MatchError as error:
        found = FIELD.search(str(error))
        assert found is not None, f"the error names no field: {error}"
        assert found.group(1).split("[")[0] in record or found.group(1) == "time", (str(error), record)
        return None


def _finite(ratings: dict[str, Rating]) -> bool:
    return all(math.isfinite(r.mu) and math.isfinite(r.sigma) for r in ratings.values())


@pytest.mark.parametrize("name", list(MODELS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(record=records(), later=TIMES)
def test_every_accepted_match_rates_to_finite_ratings(name: str, record: dict[str, Any], later: float) -> None:
    model = MODELS[name]
    match = _match(record)
    if match is None:
        return
    if len(match.teams) > (2 if name in TWO_TEAMS else model._max_teams or 3):
        return
    assert _finite(model.rate(match, {})), (name, record)
    # A replay: the same match again, later (or at an extreme time), three times over.
    second = _match(record, time=later) if "time" in record else match
    if second is None:
        return
    league = League(model).record_many([match, second, match] if "time" not in record else [match, second])
    assert _finite(league.ratings), (name, record, later)
    assert all(math.isfinite(x) for row in league.leaderboard() for x in (row.mu, row.sigma, row.score))


@pytest.mark.parametrize("name", list(MODELS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mu=st.lists(MUS, min_size=2, max_size=2), sigma=st.lists(SIGMAS, min_size=2, max_size=2),
       record=records())
def test_starting_ratings_within_the_model_s_bounds_rate_to_finite_ratings(
        name: str, mu: list[float], sigma: list[float], record: dict[str, Any]) -> None:
    model = MODELS[name]
    match = _match(record)
    if match is None or len(match.teams) > (2 if name in TWO_TEAMS else model._max_teams or 3):
        return
    try:
        given_ratings = {team[0]: Rating(m, s if model.prior.sigma else 0.0)
                         for team, m, s in zip(match.teams, mu, sigma)}
    except ValueError as error:  # Rating itself refuses what is not finite
        assert "Rating.mu" in str(error) or "Rating.sigma" in str(error)
        return
    try:
        out = model.rate(match, given_ratings)
    except ValueError as error:
        assert re.search(r"'ratings\['p\d0'\]' has (mu|sigma)=", str(error)), str(error)
        bad = [r for r in given_ratings.values()
               if abs(r.mu) > model._mu_max or not model._sigma_min <= r.sigma <= model._sigma_max]
        assert bad, f"refused ratings within the bounds: {error}"
        return
    assert _finite(out), (name, given_ratings, record)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=records(), second=records(), at=st.lists(TIMES, min_size=2, max_size=2))
def test_a_smoothed_history_of_accepted_matches_is_finite(first: dict[str, Any], second: dict[str, Any],
                                                          at: list[float]) -> None:
    matches = [_match(first, time=at[0]), _match(second, time=at[1])]
    if None in matches:
        return
    smoothed = podium.TrueSkillThroughTime(advantage=1.0).smooth(matches)
    assert all(math.isfinite(row.mu) and math.isfinite(row.sigma) for row in smoothed.leaderboard())


@pytest.mark.parametrize("field, record", [
    ("weights[0][0]", {"weights": [[MIN_WEIGHT / 2], [1.0]]}),
    ("weights[1][0]", {"weights": [[1.0], [5e-324]]}),
    ("weight", {"weight": 1e308}),
    ("weight", {"weight": MAX_MATCH_WEIGHT * 2}),
    ("weight", {"weight": 1e-300}),
    ("scores[0]", {"scores": [1e308, 0.0]}),
    ("advantage[1]", {"advantage": [0.0, -1e16]}),
    ("time", {"time": 1e308}),
    ("time", {"time": -MAX_TIME}),
])
def test_the_limits_are_refused_by_name(field: str, record: dict[str, Any]) -> None:
    """The outside fuzz's report (a match weight of 1e308 stored infinite ratings) and each limit just past it."""
    with pytest.raises(MatchError, match=re.escape(f"'{field}'")):
        Match([["a"], ["b"]], **record)


@pytest.mark.parametrize("record", [
    {"weights": [[MIN_WEIGHT], [1.0]]}, {"weight": MAX_MATCH_WEIGHT}, {"weight": 1 / MAX_MATCH_WEIGHT},
    {"scores": [MAX_VALUE, -MAX_VALUE]}, {"advantage": [MAX_VALUE, -MAX_VALUE]}, {"time": np.nextafter(MAX_TIME, 0)},
])
@pytest.mark.parametrize("name", list(MODELS))
def test_each_limit_itself_rates_to_finite_ratings_over_many_matches(name: str, record: dict[str, Any]) -> None:
    """At each limit, 200 matches of the same two players (the largest steps, compounded) stay finite."""
    model = MODELS[name]
    one = Match([["a"], ["b"]], **record)
    league = League(model).record_many([one] * 200)
    assert _finite(league.ratings)
    ratings = {"a": Rating(MAX_MU, min(model._sigma_max, 1e30) if model.prior.sigma else 0.0),
               "b": Rating(-MAX_MU, min(model._sigma_max, 1e30) if model.prior.sigma else 0.0)}
    assert _finite(model.rate(one, ratings))
