"""The interpreted kernels compute what the compiled ones do, to the last bit (``podium.jit``): a league whose first
matches were rated interpreted and later ones compiled must replay to exactly its stored ratings either way.

Each example runs the same public calls twice in this process, once with every kernel interpreted and once
compiled (``podium.jit.set_mode``), and compares the floats bit for bit.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import podium
from podium import League, Match, Rating, jit

from .strategies import a_match

POOL = [f"p{i}" for i in range(12)]

MODELS: dict[str, Callable[[], podium.Model]] = {
    "Elo": podium.Elo,
    "Elo gaussian": lambda: podium.Elo(performance="gaussian"),
    "PairwiseElo": podium.PairwiseElo,
    "PlackettLuce": podium.PlackettLuce,
    "PlackettLuce elimination": lambda: podium.PlackettLuce(order="elimination"),
    "Thurstone": podium.Thurstone,
    "TrueSkill": podium.TrueSkill,
    "TrueSkill exact": lambda: podium.TrueSkill(update="exact"),
    "Glicko2": podium.Glicko2,
    "EloMMR": podium.EloMMR,
}
TWO_TEAMS = {"Elo", "Elo gaussian", "Glicko2"}
SLOW = {"TrueSkill exact"}


@contextmanager
def mode(value: str) -> Iterator[None]:
    before = jit.mode()
    jit.set_mode(value)
    try:
        yield
    finally:
        jit.set_mode(before)


def both(call: Callable[[], Any]) -> tuple[Any, Any]:
    with mode("interpreted"):
        interpreted = call()
    with mode("compiled"):
        compiled = call()
    return interpreted, compiled


def bits(value: Any) -> list[Any]:
    """The floats (and labels) of a result, flattened, with nan equal to itself."""
    if isinstance(value, dict):
        return [x for key in sorted(value) for x in [key, *bits(value[key])]]
    if isinstance(value, Rating):
        return [*bits(value.mu), *bits(value.sigma)]
    if isinstance(value, (list, tuple, np.ndarray)):
        return [x for v in value for x in bits(v)]
    if isinstance(value, float) and math.isnan(value):
        return ["nan"]
    return [value]


def ratings_for(model: podium.Model, draw: st.DrawFn, players: list[str]) -> dict[str, Rating]:
    prior = model.prior
    out = {}
    for p in players:
        if draw(st.booleans()):
            mu = prior.mu + draw(st.floats(-4, 4)) * max(prior.sigma, 100.0 if prior.sigma == 0 else prior.sigma)
            sigma = prior.sigma * draw(st.floats(0.2, 1.5)) if prior.sigma else 0.0
            out[p] = Rating(mu, sigma)
    return out


@pytest.mark.parametrize("name", list(MODELS))
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_single_match_calls_are_the_same_interpreted_and_compiled(name: str, data: st.DataObject) -> None:
    model = MODELS[name]()
    match = data.draw(a_match(pool=POOL))
    if name in SLOW and len(match.teams) > 3:  # (exact orderings take seconds a call interpreted past three teams)
        match = Match(match.teams[:3], ranks=list(match.ranks)[:3] if match.ranks else None,
                      weights=list(match.weights)[:3] if match.weights else None)
    if name in TWO_TEAMS:
        match = Match(match.teams[:2], ranks=list(match.ranks)[:2] if match.ranks else None,
                      weights=list(match.weights)[:2] if match.weights else None)
    ratings = ratings_for(model, data.draw, match.players)
    teams = [list(t) for t in match.teams]
    for label, call in [("rate", lambda: model.rate(match, ratings)),
                        ("log_likelihood", lambda: model.log_likelihood(match, ratings)),
                        ("win_probabilities", lambda: model.win_probabilities(teams, ratings)),
                        ("quality", lambda: model.quality(teams, ratings))]:
        try:
            interpreted, compiled = both(call)
        except (ValueError, podium.MatchError):  # refused alike (the model's own check, before any kernel)
            continue
        assert bits(interpreted) == bits(compiled), (name, label, match)


@pytest.mark.parametrize("name", list(MODELS))
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_league_replays_the_same_interpreted_and_compiled(name: str, data: st.DataObject) -> None:
    matches = data.draw(st.lists(a_match(pool=POOL), min_size=1, max_size=30))
    if name in SLOW:  # (a tenth of a second a match interpreted: fewer and smaller)
        matches = [Match(m.teams[:3], ranks=list(m.ranks)[:3] if m.ranks else None) for m in matches[:6]]
    if name in TWO_TEAMS:
        matches = [Match(m.teams[:2], ranks=list(m.ranks)[:2] if m.ranks else None) for m in matches]
    matches = [Match(m.teams, m.ranks, m.weights, time=float(t)) for t, m in enumerate(matches)]

    def replay() -> Any:
        league = League(MODELS[name]()).record_many(matches)
        return [league.ratings, list(league.log_likelihoods), [r.player for r in league.leaderboard()]]

    interpreted, compiled = both(replay)
    assert bits(interpreted) == bits(compiled), name


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(matches=st.lists(a_match(pool=POOL), min_size=2, max_size=25))
def test_smoothing_is_the_same_interpreted_and_compiled(matches: list[Match]) -> None:
    matches = [Match(m.teams, [r if r is not None else len(m.teams) for r in m.ranks] if m.ranks else None,
                     time=float(t // 3)) for t, m in enumerate(matches)]

    def smooth() -> Any:
        with warnings.catch_warnings():  # (a random history may not converge: the same sweeps either way)
            warnings.simplefilter("ignore", podium.ConvergenceWarning)
            return podium.TrueSkillThroughTime().smooth(matches).ratings()

    interpreted, compiled = both(smooth)
    assert bits(interpreted) == bits(compiled)


def test_integer_and_real_powers_follow_numba() -> None:
    numba = pytest.importorskip("numba")
    from podium.jit.ieee import power

    compiled = numba.njit(lambda a, b: a ** b)
    rng = np.random.default_rng(5)
    for a in [*rng.normal(0, 3, 200).tolist(), 0.0, -0.0, 1e200, -1e-200, math.inf, math.nan]:
        for b in [0, 1, 2, 3, 5, 8, 100, -1, -2, -3, -100, 70000, 0.5, 2.0, -1.5, 1e10]:
            try:
                want = compiled(a, b)
            except ZeroDivisionError:
                with pytest.raises(ZeroDivisionError):
                    power(a, b)
                continue
            assert bits(power(a, b)) == bits(want), (a, b)
    for a, b in [(3, 5), (-3, 3), (7, 40), (2, 63), (2, -1), (1, -5), (-1, -3), (-1, -4), (0, 0)]:
        assert power(a, b) == compiled(a, b), (a, b)
