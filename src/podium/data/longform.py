"""The long form read fast: a table already in the shape podium writes goes to :class:`podium.Matches` columns
by a few compiled passes over its Arrow buffers, no sort and no Python object per row.

:meth:`podium.Matches.from_arrow` calls :func:`fast`, and :func:`podium.scan_matches` :func:`prepare` and
:func:`complete`, on two threads.  The fast way takes a table in the common
shape: ``match`` strings (or integers) without nulls, ``team`` integers and ``player`` strings without nulls,
each team's rows together within its match, numeric ``rank``, ``weight``, ``time`` (or ISO-8601 strings for
``time``) and, where the table has them, ``score``, ``higher_is_better``, ``advantage`` and ``match_weight`` (read
and checked by the general reader's own vectorised code), every value valid; a match is a run of rows sharing an
id, as in the general reader.  Anything else, and any table with a problem, is read by
:func:`podium.data.tables.from_arrow`'s general code, which finds and names the problem (or skips the match): the
fast way only ever accepts a table the general one reads without a complaint, and gives the same columns (checked
by ``tests/data/test_names.py`` and ``tests/data/test_result_fields.py``).

With ``lazy=True`` the player and match ids stay in Arrow (:class:`podium.data.strings.Strings`), for a League to map
through its compiled name index without making a ``str`` of them.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from ..jit import kernel
from .ids import arrow_ids_valid
from .match import MatchError
from .names import NameIndex, distinct
from .strings import Strings
from .arrow import _column, _pyarrow
from .results import Problem, _result_rows, _results
from .tables import Columns, _from_arrow, _ranks, _times, _weights, run_starts

__all__ = ["Lookup", "Prepared", "complete", "fast", "prepare"]

_jit = kernel(cache=True, nogil=True)
_PAIRWISE = 32  # up to this many teams (rows) a match, distinct teams (players) are checked pair by pair


@_jit
def _distinct(values: NDArray[np.int64]) -> bool:
    n = len(values)
    if n <= _PAIRWISE:
        for i in range(n):
            for j in range(i + 1, n):
                if values[i] == values[j]:
                    return False
        return True
    ordered = np.sort(values)
    for i in range(1, n):
        if ordered[i] == ordered[i - 1]:
            return False
    return True


@_jit
def _structure(run_start: NDArray[np.int64], team: NDArray[np.int64], rank: NDArray[np.int64],
               time: NDArray[np.float64]
               ) -> tuple[bool, NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """``match_start``, ``team_start`` and ``team_rank`` of rows whose teams are runs within their match; False
    (and empty arrays) where the rows are not so, or a match breaks a rule: a team that comes back after
    another, fewer than two teams, a rank or a time that differs within a team or a match.  (A player twice:
    :func:`_players_apart`.)"""
    n_rows = len(team)
    n_matches = len(run_start)
    team_start = np.empty(n_rows + 1, dtype=np.int64)
    match_start = np.empty(n_matches + 1, dtype=np.int64)
    team_rank = np.empty(n_rows, dtype=np.int64)
    nothing = np.zeros(0, dtype=np.int64)
    heads = np.empty(64, dtype=np.int64)  # scratch: a match's team ids
    n_teams = 0
    for m in range(n_matches):
        r0 = run_start[m]
        r1 = run_start[m + 1] if m + 1 < n_matches else n_rows
        match_start[m] = n_teams
        t0 = n_teams
        when = time[r0]
        if r1 - r0 == 2 and team[r0] != team[r0 + 1]:  # a duel, the common case: two teams of one
            if not (time[r0 + 1] == when or (np.isnan(when) and np.isnan(time[r0 + 1]))):
                return False, nothing, nothing, nothing
            team_start[n_teams], team_start[n_teams + 1] = r0, r0 + 1
            team_rank[n_teams], team_rank[n_teams + 1] = rank[r0], rank[r0 + 1]
            n_teams += 2
            continue
        for r in range(r0, r1):
            if r == r0 or team[r] != team[r - 1]:
                team_start[n_teams] = r
                team_rank[n_teams] = rank[r]
                n_teams += 1
            elif rank[r] != rank[r - 1]:
                return False, nothing, nothing, nothing
            if time[r] != when and not (np.isnan(time[r]) and np.isnan(when)):
                return False, nothing, nothing, nothing
        if n_teams - t0 < 2:
            return False, nothing, nothing, nothing
        if n_teams - t0 > len(heads):
            heads = np.empty(2 * (n_teams - t0), dtype=np.int64)
        for t in range(t0, n_teams):
            heads[t - t0] = team[team_start[t]]
        if not _distinct(heads[:n_teams - t0]):
            return False, nothing, nothing, nothing
    match_start[n_matches] = n_teams
    team_start[n_teams] = n_rows
    return True, match_start, team_start[:n_teams + 1].copy(), team_rank[:n_teams].copy()


@_jit
def _players_apart(run_start: NDArray[np.int64], player: NDArray[np.int64]) -> bool:
    """Whether no match has a player twice (``player``: one number a row, the same for the same player)."""
    n_rows = len(player)
    n_matches = len(run_start)
    scratch = np.empty(64, dtype=np.int64)
    for m in range(n_matches):
        r0 = run_start[m]
        r1 = run_start[m + 1] if m + 1 < n_matches else n_rows
        if r1 - r0 == 2:
            if player[r0] == player[r0 + 1]:
                return False
            continue
        if r1 - r0 > len(scratch):
            scratch = np.empty(2 * (r1 - r0), dtype=np.int64)
        for r in range(r0, r1):
            scratch[r - r0] = player[r]
        if not _distinct(scratch[:r1 - r0]):
            return False
    return True


class Prepared(NamedTuple):
    """A table read but for its players (:func:`prepare`): what :func:`complete` needs to finish it."""

    table: Any
    name: str
    run_start: NDArray[np.int64]
    players: Strings   # one a row
    columns: Columns   # all but the players (``player`` empty, ``players`` none yet), the match ids as Strings


class Lookup(NamedTuple):
    """A batch's players looked up in a League's name index as the batch was read (:func:`complete`)."""

    rows: NDArray[np.int64]  # the index row of each entry of the batch's player list
    known: int               # the index's size after them: what the League keeps if it replays this batch


def complete(table: Any, prepared: Prepared | None, name: str, skipped: list[str] | None, *, lazy: bool = False,
             index: NameIndex | None = None) -> tuple[Columns, bool, Lookup | None]:
    """The columns of the long-form ``table`` that :func:`prepare` read (None: not in the fast way's shape; then
    as :func:`podium.data.tables.from_arrow` reads it, problems appended to ``skipped`` when given, raised otherwise),
    whether the fast way read it (and so checked everything :class:`podium.Matches` would), and with ``index`` (and
    ``lazy``) the players' rows in it, looked up as they are read (new ones added) for the League that owns the
    index: the only part that touches it.  Player and match ids as :class:`Strings` with ``lazy``."""
    if prepared is not None:
        found_fast = _players(prepared, lazy, index)
        if found_fast is not None:
            return found_fast[0], True, found_fast[1]
    found = _from_arrow(table, name, skipped)
    lookup = None
    if lazy:
        pa = _pyarrow()
        players = Strings(pa.array(list(found.players), type=pa.large_string()))
        if index is not None:
            lookup = Lookup(index.rows(players), len(index))
        found = found._replace(players=players, ids=Strings(pa.array(list(found.ids), type=pa.large_string()))
                               if all(i is not None for i in found.ids) else found.ids)
    return found, False, lookup


def fast(table: Any, name: str, lazy: bool = False) -> Columns | None:
    """The fast way, or None where the general code must read the table."""
    prepared = prepare(table, name)
    found = _players(prepared, lazy, None) if prepared is not None else None
    return found[0] if found is not None else None


def _players(prepared: Prepared, lazy: bool, index: NameIndex | None) -> tuple[Columns, Lookup | None] | None:
    """The players of a prepared table: numbered in order of first appearance, each match's distinct (and their
    rows in ``index`` where given, with ``lazy``)."""
    player_ids, run_start, columns = prepared.players, prepared.run_start, prepared.columns
    lookup = None
    if index is not None and lazy:  # one probe of the league's index a slot, which numbers the batch's players too
        known = len(index)
        slot_rows = index.rows(player_ids)
        if not _players_apart(run_start, slot_rows):
            index.truncate(known)  # the general code reads it, and looks its players up
            return None
        pcode, first_row, rows = index.dense(slot_rows)
        lookup = Lookup(rows, len(index))
    else:
        pcode, first_row = distinct(*player_ids.buffers())  # in order of first appearance: the slot order here
        if not _players_apart(run_start, pcode):
            return None
    players: Any = player_ids.take(first_row)
    if not players.holds_integers and not arrow_ids_valid(players.array):  # the general code normalizes them, or names the id at fault
        if index is not None and lookup is not None:
            index.truncate(known)
        return None
    ids: Any = columns.ids
    if not lazy:
        players, ids = players.to_list(), ids.to_list()
    return columns._replace(player=pcode, players=players, ids=ids), lookup


def _unnamed(row: int) -> str:
    return ""  # (the fast way never reports a problem: it hands the table to the general reader)


def prepare(table: Any, name: str, run_start: NDArray[np.int64] | None = None) -> Prepared | None:
    """All of the fast way but the players (which need no index), or None where the general code must read the
    table.  ``run_start``: the rows where the match id changes, if known."""
    pa = _pyarrow()
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    if not isinstance(table, pa.Table) or table.num_rows == 0:
        return None
    present = list(table.column_names)
    if len(set(present)) != len(present) or not {"match", "team", "player"} <= set(present):
        return None
    try:
        match_col, team_col, player_col = (_column(table, c, name) for c in ("match", "team", "player"))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, MatchError):
        return None
    if not ((pa.types.is_large_string(match_col.type) or pa.types.is_integer(match_col.type))
            and pa.types.is_integer(team_col.type)
            and not (pa.types.is_unsigned_integer(team_col.type) and team_col.type.bit_width == 64)
            and (pa.types.is_large_string(player_col.type) or pa.types.is_integer(player_col.type))):
        return None  # (team ids past 2**63: the general code)
    if match_col.null_count or team_col.null_count or player_col.null_count:
        return None
    if pa.types.is_uint64(match_col.type) and Strings(match_col).integers is None:
        match_col = match_col.cast(pa.large_string())  # (ids past 2**63: as their digits)
    if run_start is None or len(run_start) == 0 or run_start[0] != 0:
        run_start = run_starts(match_col)
    team = np.asarray(team_col.cast(pa.int64()).to_numpy(zero_copy_only=False), dtype=np.int64)
    player_ids = Strings(player_col)
    n_rows = table.num_rows

    # the general reader's column readers: any problem, and the general reader reads the table (and names it)
    problems: list[Problem] = []
    try:
        rank = _ranks(table, name, present, problems, _unnamed)
        weight = _weights(table, name, present, problems, _unnamed)
        time_row, is_date = _times(table, name, present, problems, _unnamed)
        result_rows = _result_rows(table, name, present, problems, _unnamed)  # None: no score, advantage...
    except MatchError:
        return None
    if problems:
        return None

    ok, match_start, team_start, team_rank = _structure(
        run_start, team, rank if rank is not None else np.zeros(n_rows, dtype=np.int64), time_row)
    if not ok:
        return None
    if rank is None:  # teams finish in the order they appear
        team_of = np.repeat(np.arange(len(run_start), dtype=np.int64), np.diff(match_start))
        team_rank = np.arange(len(team_rank), dtype=np.int64) - match_start[team_of]
    extras: dict[str, Any] = {}
    if result_rows is not None:  # rows in team order already: a team's first row is its start
        team_head = team_start[:-1]
        row_head = np.repeat(team_head, np.diff(team_start))
        run_of_row = np.repeat(np.arange(len(run_start), dtype=np.int64), np.diff(np.r_[run_start, n_rows]))
        team_rank, extras = _results(result_rows, team_head, row_head, run_start, run_of_row, match_start, team_rank,
                                     rank is not None, problems, _unnamed)
        if problems:
            return None
    return Prepared(table, name, run_start, player_ids,
                    Columns(match_start, team_start, team_rank, np.empty(0, dtype=np.int64), np.ascontiguousarray(weight),
                            time_row[run_start], [], Strings(match_col.take(pa.array(run_start))), is_date, **extras))
