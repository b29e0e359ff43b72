"""Invariants of every Elo-family model, as Hypothesis properties (DESIGN.md, "Tests").

* updates are zero-sum for one-player teams;
* listing the teams in another order changes no player's result;
* a non-finisher never gains; a winner never loses for a win;
* the single-match path and the replay engine (``League.record_many``) agree to 1e-12.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from podium import Elo, League, Match, PairwiseElo, PlackettLuce, Rating

MODELS = [
    PairwiseElo(), PairwiseElo(combine="mean"), PairwiseElo(performance="gaussian"),
    PairwiseElo(performance="gaussian", update="classic"), PairwiseElo(update="classic"),
    PlackettLuce(), PlackettLuce(order="elimination"),
]
TWO_TEAM = [Elo(), Elo(performance="gaussian"), Elo(performance="gaussian", update="classic")]

rating_values = st.floats(min_value=500.0, max_value=2500.0, allow_nan=False)


@st.composite
def ffa(draw, max_teams: int = 8, allow_dnf: bool = True, allow_ties: bool = True):
    n = draw(st.integers(2, max_teams))
    if allow_ties:
        ranks = draw(st.lists(st.integers(0, n - 1), min_size=n, max_size=n))
    else:
        ranks = draw(st.permutations(list(range(n))))
    if allow_dnf:
        dnf = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        ranks = [None if d else r for r, d in zip(ranks, dnf)]
    names = [f"p{i}" for i in range(n)]
    values = draw(st.lists(rating_values, min_size=n, max_size=n))
    return Match([[p] for p in names], ranks=ranks), {p: Rating(v) for p, v in zip(names, values)}


def deltas(model, match, ratings) -> dict[str, float]:
    new = model.rate(match, ratings)
    return {p: new[p].mu - ratings[p].mu for p in match.players}


@settings(max_examples=60, deadline=None)
@given(case=ffa(), data=st.data())
def test_zero_sum_and_order_invariance(case, data) -> None:
    match, ratings = case
    perm = data.draw(st.permutations(list(range(len(match.teams)))))
    shuffled = Match([match.teams[i] for i in perm], ranks=[match.ranks[i] for i in perm])
    for model in MODELS:
        d = deltas(model, match, ratings)
        assert abs(sum(d.values())) <= 1e-9 * max(1.0, max(abs(x) for x in d.values()))
        e = deltas(model, shuffled, ratings)
        for p in d:
            assert math.isclose(d[p], e[p], rel_tol=1e-9, abs_tol=1e-9)
        assert math.isclose(model.log_likelihood(match, ratings), model.log_likelihood(shuffled, ratings),
                            rel_tol=1e-9, abs_tol=1e-9)


@settings(max_examples=60, deadline=None)
@given(case=ffa())
def test_non_finishers_never_gain_and_winners_never_lose(case) -> None:
    match, ratings = case
    best = min((r for r in match.ranks if r is not None), default=None)
    for model in MODELS:
        d = deltas(model, match, ratings)
        for team, rank in zip(match.teams, match.ranks):
            if rank is None:
                assert d[team[0]] <= 1e-12
            elif rank == best and match.ranks.count(best) == 1:
                assert d[team[0]] >= -1e-12


@settings(max_examples=40, deadline=None)
@given(r1=rating_values, r2=rating_values, outcome=st.sampled_from([[0, 1], [1, 0], [0, 0], [0, None]]))
def test_two_team_elo_properties(r1: float, r2: float, outcome) -> None:
    match = Match([["a"], ["b"]], ranks=outcome)
    ratings = {"a": Rating(r1), "b": Rating(r2)}
    for model in TWO_TEAM:
        d = deltas(model, match, ratings)
        assert abs(d["a"] + d["b"]) <= 1e-9
        if outcome in ([0, 1], [0, None]):
            assert d["a"] >= 0.0 >= d["b"]


@st.composite
def histories(draw):
    n_players = draw(st.integers(3, 12))
    names = [f"q{i}" for i in range(n_players)]
    matches = []
    for _ in range(draw(st.integers(1, 25))):
        k = draw(st.integers(2, min(6, n_players)))
        chosen = draw(st.permutations(names))[:k]
        size = draw(st.integers(1, max(1, k // 2)))
        teams = [chosen[i:i + size] for i in range(0, k - size + 1, size)]
        if len(teams) < 2:
            teams = [[p] for p in chosen]
        ranks = draw(st.lists(st.one_of(st.none(), st.integers(0, len(teams))), min_size=len(teams), max_size=len(teams)))
        weights = draw(st.one_of(st.none(), st.just([[draw(st.floats(0.1, 1.0)) for _ in t] for t in teams])))
        matches.append(Match(teams, ranks=ranks, weights=weights))
    return matches


@settings(max_examples=40, deadline=None)
@given(history=histories())
def test_single_match_path_and_replay_agree(history) -> None:
    for model in MODELS:
        ratings: dict[str, Rating] = {}
        for match in history:
            ratings.update(model.rate(match, ratings))
        league = League(model).record_many(history)
        for p, r in ratings.items():
            assert math.isclose(league.rating(p).mu, r.mu, rel_tol=1e-12, abs_tol=1e-9)
        step = League(model)
        for match in history:
            step.record(match)
        assert np.allclose(step.log_likelihoods, league.log_likelihoods, rtol=1e-12, atol=1e-12)
