"""One match packed for a single public call (``Model.rate``, ``win_probabilities``, ``quality``), its structure
shared between calls of the same shape.

A game server calls these one match at a time, and most of its matches are plain (no partial play, time, scores,
advantage, weight or meta) and of a few shapes (two teams of five, an eight-player race).  The columnar arrays of
such a match (``match_start``, ``team_start``, ``player``, ``weight``, ``time``) depend only on its team sizes, so
they are built once per shape (fields of up to 64 players, the latest 1,024 shapes) and shared: what a call then
pays is its players' names and ranks.

The shared arrays are never written: the packed match lives only inside the call that made it, and no kernel
writes to a history's columns (``Model._replay``'s contract; ``tests/data/test_shapes.py`` checks every model's
public calls against it).  They are not made read-only, which would compile every kernel again for read-only
arrays.  A
match that is not plain is packed afresh by :meth:`podium.Matches.of_match`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from .match import Match, _check_teams
from .matches import Matches

__all__ = ["packed_match", "packed_teams"]

Shape = tuple[int, ...]  # the team sizes
Arrays = tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.float64], NDArray[np.float64]]

_SHAPES: dict[Shape, Arrays] = {}
_MAX_SHAPES = 1024  # the most shapes kept; beyond, the oldest kept is dropped for the new one
_MAX_PLAYERS = 64   # a larger field is packed afresh: its arrays cost little beside its kernel, and kept they would


def _arrays(sizes: Shape) -> Arrays:
    """``(match_start, team_start, player, weight, time)`` of a plain match with these team sizes."""
    arrays = _SHAPES.get(sizes)
    if arrays is None:
        n = sum(sizes)
        arrays = (np.array((0, len(sizes)), dtype=np.int64), np.cumsum((0, *sizes), dtype=np.int64),
                  np.arange(n, dtype=np.int64), np.ones(n), np.full(1, np.nan))
        if n <= _MAX_PLAYERS:
            if len(_SHAPES) >= _MAX_SHAPES:
                _SHAPES.pop(next(iter(_SHAPES)), None)  # (another thread may have dropped it first)
            _SHAPES[sizes] = arrays
    return arrays


def _plain(teams: tuple[tuple[str, ...], ...], ranks: tuple[int | None, ...], id: str | None) -> Matches:
    out = Matches.__new__(Matches)
    out.match_start, out.team_start, out.player, out.weight, out.time = _arrays(tuple(map(len, teams)))
    # (the ranks per call: keyed by them, free-for-alls listed in join order would make every match a shape)
    out.team_rank = np.array([-1 if r is None else r for r in ranks], dtype=np.int64)
    out.players = [p for team in teams for p in team]
    out.ids = [id]
    out.meta = out.score = out.higher_is_better = out.advantage = out.match_weight = None
    out.time_is_date = out.has_weights = False
    return out


def packed_match(match: Match) -> Matches:
    """``match`` packed as :meth:`podium.Matches.of_match` packs it; a plain match shares its shape's arrays."""
    if (match.weights is None and match.time is None and match.scores is None and match.advantage is None
            and match.weight == 1.0 and match.meta is None):
        return _plain(match.teams, match.ranks, match.id)
    return Matches.of_match(match)


def packed_teams(teams: Sequence[Sequence[str]]) -> Matches:
    """What ``Matches.of_match(Match(teams))`` packs (the teams checked as :class:`Match` checks them, in the given
    order), without building the match: the path of the predictions."""
    checked = _check_teams(teams)
    return _plain(checked, tuple(range(len(checked))), None)
