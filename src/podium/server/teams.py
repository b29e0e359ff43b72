"""Teams for a list of players: predictions for given teams (win and place probabilities, match quality) and
balanced teams (:func:`balance`: the split that maximizes match quality), from the league's stored ratings."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy.engine import Connection

from ..data.match import MatchError
from ..data.rating import Rating
from .records import LeagueInfo, StoreError, _check_teams, _states, check_players

__all__ = ["predict", "balance", "PREDICT_MAX_PLAYERS"]

EXHAUSTIVE_SPLITS = 20_000
# Most teams a prediction takes, whatever Settings.max_players says: its place probabilities are a table of
# teams x places (1,000 teams: a million numbers, about 20 MB of JSON; 10,000 would be 100 times that).
PREDICT_MAX_PLAYERS = 1_000


def _ratings_of(conn: Connection, league: LeagueInfo, players: Iterable[str]) -> dict[str, Rating]:
    return {p: Rating(s.mu, s.sigma) for p, s in _states(conn, league.id, players).items()}


def predict(conn: Connection, league: LeagueInfo, teams: Any, max_players: int) -> dict[str, Any]:
    """Win and place probabilities and match quality for ``teams`` (unknown players at the prior); at most
    ``max_players`` players, and never more than :data:`PREDICT_MAX_PLAYERS`."""
    teams = _check_teams(teams, min(max_players, PREDICT_MAX_PLAYERS))
    try:
        league.model._check_team_count(len(teams))
    except MatchError as error:
        raise StoreError(422, "teams", str(error)) from None
    current = _ratings_of(conn, league, (p for t in teams for p in t))
    model = league.model
    return {"teams": teams,
            "win_probabilities": model.win_probabilities(teams, current).tolist(),
            "rank_probabilities": model.rank_probabilities(teams, current).tolist(),
            "quality": model.quality(teams, current),
            "ratings": {p: {"mu": r.mu, "sigma": r.sigma} for p, r in current.items()}}


def balance(conn: Connection, league: LeagueInfo, players: Any, n_teams: Any, max_players: int) -> dict[str, Any]:
    """Split ``players`` into ``n_teams`` teams of equal size (within one) maximizing match quality.

    Every split is tried when there are at most ``EXHAUSTIVE_SPLITS`` (team order does not count: 16 players
    in two teams is 6,435), so the answer is the best split.  Beyond that the problem is a number partition
    (NP-hard), and the answer is the best found: a snake draft by rating improved by swapping pairs of players
    between teams until no swap helps (``"method": "local search"`` says so).
    """
    if isinstance(n_teams, bool) or not isinstance(n_teams, int) or n_teams < 2:
        raise StoreError(422, "teams", f"'teams' must be an integer >= 2. Got {n_teams!r:.80}.")
    players = check_players(players, min(max_players, 200))
    if len(players) < n_teams:
        raise StoreError(422, "players", f"'players' must hold at least {n_teams} players. Got {players!r:.80}.")
    try:
        league.model._check_team_count(n_teams)
    except MatchError as error:
        raise StoreError(422, "teams", str(error)) from None
    current = _ratings_of(conn, league, players)
    model = league.model

    def quality(split: Sequence[Sequence[str]]) -> float:
        return model.quality(split, current)

    sizes = [len(players) // n_teams + (1 if i < len(players) % n_teams else 0) for i in range(n_teams)]
    best: list[list[str]] | None = None
    method = "exhaustive"
    if _count_splits(sizes) <= EXHAUSTIVE_SPLITS:
        best_q = -1.0
        for split in _splits(list(players), sizes):
            q = quality(split)
            if q > best_q:
                best, best_q = split, q
    else:
        method = "local search"
        prior = model.prior
        order = sorted(players, key=lambda p: -current.get(p, prior).mu)
        teams: list[list[str]] = [[] for _ in sizes]
        for i, p in enumerate(order):  # snake draft
            lap, pos = divmod(i, n_teams)
            teams[pos if lap % 2 == 0 else n_teams - 1 - pos].append(p)
        best_q = quality(teams)
        improved = True
        while improved:
            improved = False
            for a, b in itertools.combinations(range(n_teams), 2):
                for i in range(len(teams[a])):
                    for j in range(len(teams[b])):
                        teams[a][i], teams[b][j] = teams[b][j], teams[a][i]
                        q = quality(teams)
                        if q > best_q + 1e-12:
                            best_q, improved = q, True
                        else:
                            teams[a][i], teams[b][j] = teams[b][j], teams[a][i]
        best = teams
    assert best is not None
    return {"teams": best, "quality": best_q, "method": method,
            "win_probabilities": model.win_probabilities(best, current).tolist()}


def _count_splits(sizes: Sequence[int]) -> int:
    total, n = 1, sum(sizes)
    for s in sizes:
        total *= math.comb(n, s)
        n -= s
    for s in set(sizes):  # teams of equal size are interchangeable
        total //= math.factorial(sizes.count(s))
    return total


def _splits(players: list[str], sizes: Sequence[int]) -> Iterable[list[list[str]]]:
    """Every split of ``players`` into teams of ``sizes`` (equal sizes adjacent), each split once: teams of
    equal size are interchangeable, so their members are chosen together and then split with the first
    player pinned to the first of them."""
    if not sizes:
        yield []
        return
    size = sizes[0]
    run = len(sizes) - len([s for s in sizes if s != size])
    rest = [s for s in sizes if s != size]
    for chosen in itertools.combinations(range(len(players)), size * run):
        pick = set(chosen)
        group = [players[i] for i in chosen]
        remaining = [players[i] for i in range(len(players)) if i not in pick]
        for teams in _equal_splits(group, size, run):
            for tail in _splits(remaining, rest):
                yield teams + tail


def _equal_splits(group: list[str], size: int, run: int) -> Iterable[list[list[str]]]:
    if run == 1:
        yield [group]
        return
    head, others = group[0], group[1:]
    for chosen in itertools.combinations(range(len(others)), size - 1):
        pick = set(chosen)
        team = [head] + [others[i] for i in chosen]
        for tail in _equal_splits([others[i] for i in range(len(others)) if i not in pick], size, run - 1):
            yield [team] + tail
