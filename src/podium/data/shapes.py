"""One match packed for a single public call (``Model.rate``, ``win_probabilities``, ``quality``), its structure
shared between calls of the same shape.

A game server calls these one match at a time, and most of its matches are plain (no partial play, time, scores,
advantage, weight or meta) and of a few shapes (two teams of five, an eight-player race).  The columnar arrays of
such a match (``match_start``, ``team_start``, ``team_rank``, ``player``, ``weight``, ``time``) depend only on its
team sizes and ranks, so they are built once per shape and shared: what a call then pays is its players' names.

The shared arrays are never written: the packed match lives only inside the call that made it, and no kernel
writes to a history's columns (``tests/data/test_shapes.py`` checks every model's public calls against that).  A
match that is not plain is packed afresh by :meth:`podium.Matches.of_match`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from .match import Match, _check_teams
from .matches import Matches

__all__ = ["packed_match", "packed_teams"]

Shape = tuple[tuple[int, ...], tuple[int | None, ...]]
Arrays = tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.float64],
               NDArray[np.float64]]

_SHAPES: dict[Shape, Arrays] = {}
_MAX_SHAPES = 4096  # beyond this many distinct shapes, new ones are built per call and not kept


def _arrays(shape: Shape) -> Arrays:
    arrays = _SHAPES.get(shape)
    if arrays is None:
        sizes, ranks = shape
        n = sum(sizes)
        arrays = (np.array((0, len(sizes)), dtype=np.int64), np.cumsum((0, *sizes), dtype=np.int64),
                  np.array([-1 if r is None else r for r in ranks], dtype=np.int64), np.arange(n, dtype=np.int64),
                  np.ones(n), np.full(1, np.nan))
        if len(_SHAPES) < _MAX_SHAPES:
            _SHAPES[shape] = arrays
    return arrays


def _plain(teams: tuple[tuple[str, ...], ...], ranks: tuple[int | None, ...], id: str | None) -> Matches:
    out = Matches.__new__(Matches)
    (out.match_start, out.team_start, out.team_rank, out.player, out.weight,
     out.time) = _arrays((tuple(map(len, teams)), ranks))
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
