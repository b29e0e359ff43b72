"""Match histories as tables: the long form in Arrow, pandas and polars (and Parquet, through :mod:`podium.data.io`).

The long form is the CSV long form of :func:`podium.read_matches`, one row per player appearance:

=========  ==========================  ==========================================================
column     type                        meaning
=========  ==========================  ==========================================================
match      string (or integer)         the match id; a match is a run of rows sharing it
team       integer (or string)         the team within the match (an id: rows sharing it are a team)
player     string (or integer)         the player id (an integer's id is its decimal digits)
rank       nullable integer            the team's rank, 0 best; null = did not finish
weight     float (null = 1)            partial play, in [1e-6, 1]
time       string, number, date/time   ISO-8601 date, a number, or null (unknown)
=========  ==========================  ==========================================================

and, optionally, what a result says beyond the order (``docs/design.md``, "What a result says"; the columns
``score``, ``higher_is_better``, ``advantage`` and ``match_weight`` of :class:`podium.Matches`):

================  ==================  ==================================================================
column            type                meaning
================  ==================  ==================================================================
score             float (or integer)  the team's score, the same on each of its rows; null (or NaN) = none
higher_is_better  bool                whether a higher score is better, the same on each row of a match;
                                      null = true
advantage         float, int or bool  the team's structural edge (true = 1), the same on each of its rows;
                                      null = 0
match_weight      float (or integer)  the match's importance, positive, the same on each of its rows;
                                      null = 1
================  ==================  ==================================================================

``match``, ``team`` and ``player`` are required; without ``rank`` the teams finish in the order they first
appear (in a match with a ``score``: in the order of the scores, as :class:`podium.Match` ranks them), without
``weight`` everyone plays in full, without ``time`` times are unknown.  Other columns are ignored.  Teams come
in the order they first appear in a match; a team's players in row order.  A malformed table raises
:class:`MatchError` naming the column and the row (rows are counted from 0).  A column that says nothing (no
score anywhere, every match higher-is-better, no advantage, every match weight 1) reads as none, as in JSONL.

Written tables have the six columns, and after them each of the four optional ones that the history has (a
history without them writes the same table as before they existed): ``team`` is the team's index in the match,
``time`` is an ISO-8601 string for a history of dates and a float otherwise, and a match without an id gets its
position (``"0"``, ``"1"``, ...) as id, as in the CSV long form.  An id may come back for a later match (real exports repeat ids),
but two matches in a row with one id cannot be written (their rows would read as one match); ``meta`` is not
kept.

pyarrow (and pandas or polars for their conversions) are imported only when used: ``pip install podium[tables]``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from .ids import checked_codes
from .arrow import _codes, _column, _is_text, _nulls, _numbers, _pyarrow
from .match import MAX_TIME, MIN_WEIGHT, MatchError, _show, check_errors, format_time, skipped_summary
from .results import RESULT_COLUMNS, Problem, _result_rows, _results

__all__ = ["LONG_COLUMNS", "RESULT_COLUMNS", "Columns", "from_arrow", "from_pandas", "from_polars", "to_arrow", "to_pandas", "to_polars"]


class Columns(NamedTuple):
    """A history read from a table, as the arguments of :class:`podium.Matches` (which :meth:`podium.Matches.from_arrow`
    and its siblings build from it): this module stays below the columnar class and knows it only by its fields."""

    match_start: NDArray[np.int64]
    team_start: NDArray[np.int64]
    team_rank: NDArray[np.int64]
    player: NDArray[np.int64]
    weight: NDArray[np.float64]
    time: NDArray[np.float64]
    players: Sequence[Any]             # a list, or a podium.data.strings.Strings (podium.data.longform)
    ids: Sequence[str | None]
    time_is_date: bool
    # What a result says beyond the order (None: the table has none of it), as :class:`podium.Matches` holds it.
    score: NDArray[np.float64] | None = None             # per team, NaN = none
    higher_is_better: NDArray[np.bool_] | None = None    # per match
    advantage: NDArray[np.float64] | None = None         # per team
    match_weight: NDArray[np.float64] | None = None      # per match


LONG_COLUMNS = ("match", "team", "player", "rank", "weight", "time")
_DAY = {"s": 86400.0, "ms": 86400e3, "us": 86400e6, "ns": 86400e9}


# -- writing ----------------------------------------------------------------------------------------

def to_arrow(matches: Any) -> Any:
    """The history as a ``pyarrow.Table`` in the long form (one row per player appearance).

    Parameters
    ----------
    matches : podium.Matches
        (Read by its columns: :meth:`podium.Matches.to_arrow` is the usual way in.)

    Returns
    -------
    pyarrow.Table
        Columns ``match`` (string), ``team`` (int64, the team's index in its match), ``player`` (string),
        ``rank`` (int64, null = did not finish), ``weight`` (float64) and ``time`` (ISO-8601 string for
        dates, float64 for numbers; null = unknown); then, each only where the history has it, ``score``
        (float64, null = none), ``higher_is_better`` (bool), ``advantage`` (float64) and ``match_weight``
        (float64), repeated on every row of their team or match.  ``meta`` is not kept.

    Raises
    ------
    MatchError
        If two matches in a row share an id (a match is a run of rows sharing an id, so their rows would run
        together; an id may come back later, as twelve do in atp_doubles).
    """
    pa = _pyarrow()
    ids = [m_id if m_id is not None else str(j) for j, m_id in enumerate(matches.ids)]
    dup = next((j for j in range(1, len(ids)) if ids[j] == ids[j - 1]), None)
    if dup is not None:
        raise MatchError(f"'ids': matches {dup - 1} and {dup} are both {ids[dup]!r}; in the long form a match is a run "
                         "of rows sharing an id, so two matches in a row need two ids.")
    n_matches, n_teams = len(matches), len(matches.team_rank)
    sizes = np.diff(matches.team_start)
    teams_per = np.diff(matches.match_start)
    team_match = np.repeat(np.arange(n_matches, dtype=np.int64), teams_per)
    slot_team = np.repeat(np.arange(n_teams, dtype=np.int64), sizes)
    slot_match = team_match[slot_team]
    team_index = np.arange(n_teams, dtype=np.int64) - matches.match_start[team_match]
    rank = matches.team_rank[slot_team]
    times = matches.time
    if matches.time_is_date:
        unique, inverse = np.unique(times, return_inverse=True)
        text = [format_time(float(t), True) for t in unique]
        time_column = pa.array(text, type=pa.string()).take(pa.array(inverse.reshape(-1)[slot_match]))
    else:
        slot_time = times[slot_match]
        time_column = pa.array(slot_time, type=pa.float64(), mask=np.isnan(slot_time))
    columns = {
        "match": pa.array(ids, type=pa.string()).take(pa.array(slot_match)),
        "team": pa.array(team_index[slot_team], type=pa.int64()),
        "player": pa.array(matches.players, type=pa.string()).take(pa.array(matches.player)),
        "rank": pa.array(rank, type=pa.int64(), mask=rank < 0),
        "weight": pa.array(matches.weight, type=pa.float64()),
        "time": time_column,
    }
    # What a result says beyond the order: only the columns the history has (without them, the table as before).
    score = getattr(matches, "score", None)
    if score is not None:
        slot_score = score[slot_team]
        columns["score"] = pa.array(slot_score, type=pa.float64(), mask=np.isnan(slot_score))
    higher_is_better = getattr(matches, "higher_is_better", None)
    if higher_is_better is not None:
        columns["higher_is_better"] = pa.array(higher_is_better[slot_match], type=pa.bool_())
    advantage = getattr(matches, "advantage", None)
    if advantage is not None:
        columns["advantage"] = pa.array(advantage[slot_team], type=pa.float64())
    match_weight = getattr(matches, "match_weight", None)
    if match_weight is not None:
        columns["match_weight"] = pa.array(match_weight[slot_match], type=pa.float64())
    return pa.table(columns)


def to_pandas(matches: Any) -> Any:
    """The history as a ``pandas.DataFrame`` in the long form (see :func:`to_arrow`).

    ``team`` and ``rank`` are pandas' nullable ``Int64`` (``<NA>`` = did not finish); ``time`` holds strings
    for dates and floats (NaN = unknown) for numbers.
    """
    pa = _pyarrow()
    import pandas as pd

    return to_arrow(matches).to_pandas(types_mapper={pa.int64(): pd.Int64Dtype()}.get)


def to_polars(matches: Any) -> Any:
    """The history as a ``polars.DataFrame`` in the long form (see :func:`to_arrow`)."""
    import polars as pl

    return pl.from_arrow(to_arrow(matches))


# -- reading ----------------------------------------------------------------------------------------

def from_pandas(df: Any, *, errors: str = "raise") -> Columns:
    """Read a history from a ``pandas.DataFrame`` in the long form (see :func:`from_arrow`).

    NaN in ``rank``, ``weight``, ``time``, ``score``, ``advantage`` or ``match_weight`` counts as missing (did not
    finish, 1, unknown, none, 0, 1); the index is ignored.
    """
    pa = _pyarrow()
    import pandas as pd

    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"'df' must be a pandas.DataFrame. Got {type(df).__name__}.")
    columns: dict[str, Any] = {}
    for column in LONG_COLUMNS + RESULT_COLUMNS:
        if column not in df.columns:
            continue
        try:
            columns[column] = pa.array(df[column], from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as error:
            raise MatchError(f"DataFrame: column {column!r} cannot be read (dtype {df[column].dtype}): {error}") from None
    if not columns:
        return from_arrow(pa.table({name: pa.array([]) for name in df.columns}) if len(df.columns) else pa.table({}),
                          errors=errors, name="DataFrame")
    return from_arrow(pa.table(columns), errors=errors, name="DataFrame")


def from_polars(df: Any, *, errors: str = "raise") -> Columns:
    """Read a history from a ``polars.DataFrame`` in the long form (see :func:`from_arrow`)."""
    import polars as pl

    if not isinstance(df, pl.DataFrame):
        raise TypeError(f"'df' must be a polars.DataFrame. Got {type(df).__name__}.")
    return from_arrow(df.to_arrow(), errors=errors, name="DataFrame")


def from_arrow(table: Any, *, errors: str = "raise", name: str = "table") -> Columns:
    """Read a history from a ``pyarrow.Table`` (or ``RecordBatch``) in the long form.

    Parameters
    ----------
    table : pyarrow.Table or pyarrow.RecordBatch
        Columns ``match``, ``team``, ``player`` and optionally ``rank``, ``weight``, ``time``, ``score``,
        ``higher_is_better``, ``advantage``, ``match_weight`` (module docstring).
    errors : {"raise", "skip"}
        ``"skip"`` leaves out the matches with a bad row (a player twice, a rank, time, score, advantage,
        higher_is_better or match_weight that differs within its team or match, a bad weight, score, advantage
        or match weight, ranks that contradict the scores, fewer than two teams, a null id) and warns how many;
        a missing column and a column of the wrong type always raise.
    name : str
        What the messages call the table (a file name, say).

    Returns
    -------
    Columns
        The arguments of :class:`podium.Matches` (:meth:`podium.Matches.from_arrow` builds it).

    Raises
    ------
    MatchError
        Naming the column and the row (counted from 0) that is wrong and what it holds.
    """
    check_errors(errors)
    skipped: list[str] = []
    matches = _from_arrow(table, name, skipped if errors == "skip" else None)
    if skipped:
        import warnings

        warnings.warn(skipped_summary(name, skipped, "match(es)"), UserWarning, stacklevel=3)
    return matches


def _from_arrow(table: Any, name: str, skipped: list[str] | None) -> Columns:
    pa = _pyarrow()
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    if not isinstance(table, pa.Table):
        raise TypeError(f"'table' must be a pyarrow.Table or RecordBatch. Got {type(table).__name__}.")
    present = list(table.column_names)
    missing = [c for c in ("match", "team", "player") if c not in present]
    if missing:
        raise MatchError(f"{name}: the long form needs columns {list(LONG_COLUMNS)} (rank, weight and time optional); "
                         f"missing {missing}. Got {present}.")
    if len(set(present)) != len(present):
        dup = next(c for c in present if present.count(c) > 1)
        raise MatchError(f"{name}: column {dup!r} appears more than once.")
    n_rows = table.num_rows

    def where(row: int) -> str:
        return f"{name}, row {row}"

    # match: a run of rows sharing an id.
    match_col = _column(table, "match", name)
    if pa.types.is_integer(match_col.type):
        match_col = match_col.cast(pa.large_string())
    elif not _is_text(pa, match_col.type) and not pa.types.is_null(match_col.type):
        raise MatchError(f"{name}: column 'match' must hold strings (match ids) or integers. Got type {table.schema.field('match').type}.")
    match_null = _nulls(match_col)
    if np.any(match_null):
        row = int(np.argmax(match_null))
        raise MatchError(f"{where(row)}: 'match' is null; every row needs its match id.")
    if pa.types.is_null(match_col.type):
        match_col = match_col.cast(pa.large_string())
    mcode, id_values = _codes(match_col)
    run_start = run_starts(match_col)
    n_runs = len(run_start)
    run_of_row = np.repeat(np.arange(n_runs, dtype=np.int64), np.diff(np.r_[run_start, n_rows]))
    run_code = mcode[run_start]
    ids = [id_values[c] for c in run_code.tolist()]
    # A match is a run of rows sharing an id, and an id may come back for another match (real exports repeat them:
    # atp_doubles has twelve).  A malformed run whose id comes back may be a match whose rows are not contiguous.
    recurs = np.bincount(run_code, minlength=len(id_values))[run_code] > 1

    problems: list[Problem] = []

    def label(row: int) -> str:
        run = int(run_of_row[row])
        again = ", whose id comes back after another match: are its rows contiguous?" if recurs[run] else ""
        return f"{where(row)} (match {ids[run]!r}{again})"

    # team and player.
    team_col = _column(table, "team", name)
    if not (pa.types.is_integer(team_col.type) or _is_text(pa, team_col.type) or pa.types.is_null(team_col.type)):
        raise MatchError(f"{name}: column 'team' must hold integers or strings (team ids within a match). "
                         f"Got type {table.schema.field('team').type}.")
    player_col = _column(table, "player", name)
    if pa.types.is_integer(player_col.type):  # numeric account ids: the ids are their decimal digits
        player_col = player_col.cast(pa.large_string())
    if not (_is_text(pa, player_col.type) or pa.types.is_null(player_col.type)):
        raise MatchError(f"{name}: column 'player' must hold strings or integers (player ids). "
                         f"Got type {table.schema.field('player').type}; cast it to strings first.")
    for column, array in (("team", team_col), ("player", player_col)):
        null = np.flatnonzero(_nulls(array))
        if len(null):
            problems.append((null, _null_message(label, column)))
    if pa.types.is_null(team_col.type):
        team_col = team_col.cast(pa.large_string())
    if pa.types.is_null(player_col.type):
        player_col = player_col.cast(pa.large_string())
    tcode, _ = _codes(team_col)
    pcode, player_values, bad_ids = checked_codes(*_codes(player_col))
    for code, problem in bad_ids.items():
        def bad_id(row: int, problem: str = problem) -> str:  # (bound now: the loop moves on)
            return f"{label(row)}: 'player' must be a player id: {_show(player_values[pcode[row]])} {problem}."
        problems.append((np.flatnonzero(pcode == code), bad_id))
    n_t, n_p = max(len(_) + 1, 1), len(player_values) + 1
    tcode = np.where(tcode < 0, n_t - 1, tcode)
    pcode_safe = np.where(pcode < 0, n_p - 1, pcode)

    # A player twice in a match.
    pkey = run_of_row * np.int64(n_p) + pcode_safe
    porder = np.argsort(pkey, kind="stable")
    same = (pkey[porder][1:] == pkey[porder][:-1]) & (pcode[porder][1:] >= 0)
    if np.any(same):
        problems.append((porder[1:][same], lambda row: f"{label(row)}: 'player' {player_values[pcode[row]]!r} "
                                                         "appears more than once in the match."))

    # Group rows into teams: a match's teams in order of first appearance, a team's players in row order.
    key = run_of_row * np.int64(n_t) + tcode
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    order = np.argsort(first[inverse.reshape(-1)], kind="stable")
    sorted_key = key[order]
    team_head = np.ones(n_rows, dtype=bool)
    team_head[1:] = sorted_key[1:] != sorted_key[:-1]
    team_start = np.r_[np.flatnonzero(team_head), n_rows].astype(np.int64)
    team_run = run_of_row[order][team_head]
    match_start = np.searchsorted(team_run, np.arange(n_runs + 1)).astype(np.int64)
    few = np.flatnonzero(np.diff(match_start) < 2)
    if len(few):
        problems.append((run_start[few], lambda row: f"{label(row)}: a match needs at least two teams (distinct "
                                                      "'team' values); this one has one."))
    team_of_sorted = np.cumsum(team_head) - 1

    # rank.
    given_rank = _ranks(table, name, present, problems, label)
    if given_rank is not None:
        rank = given_rank  # (a name of its own, for the message below)
        sorted_rank = rank[order]
        head_rank = sorted_rank[team_start[:-1]][team_of_sorted]
        differs = np.flatnonzero(sorted_rank != head_rank)
        if len(differs):
            row_team_head = np.empty(n_rows, dtype=np.int64)
            row_team_head[order] = order[team_start[:-1]][team_of_sorted]

            def rank_differs(row: int) -> str:
                here, head = int(rank[row]), int(rank[row_team_head[row]])
                return (f"{label(row)}: 'rank' differs within a team: {'null' if here < 0 else here} here, "
                        f"{'null' if head < 0 else head} on the team's first row (row {int(row_team_head[row])}).")
            problems.append((order[differs], rank_differs))
        team_rank = sorted_rank[team_start[:-1]]
    else:
        team_rank = (np.arange(len(team_run), dtype=np.int64) - match_start[team_run]).astype(np.int64)

    weight = _weights(table, name, present, problems, label)

    # time.
    time_row, is_date = _times(table, name, present, problems, label)
    head_time = time_row[run_start][run_of_row]
    differs = np.flatnonzero(~((time_row == head_time) | (np.isnan(time_row) & np.isnan(head_time))))
    if len(differs):
        problems.append((differs, lambda row: f"{label(row)}: 'time' differs within the match: {time_row[row]!r} here, "
                                              f"{time_row[run_start[run_of_row[row]]]!r} on its first row."))

    # what a result says beyond the order (score, higher_is_better, advantage, match_weight), where the table has it
    extras: dict[str, Any] = {}
    result_rows = _result_rows(table, name, present, problems, label)
    if result_rows is not None:
        team_head = order[team_start[:-1]]  # each team's first row (rows of a team keep their order)
        row_head = np.empty(n_rows, dtype=np.int64)
        row_head[order] = team_head[team_of_sorted]
        team_rank, extras = _results(result_rows, team_head, row_head, run_start, run_of_row, match_start, team_rank,
                                     given_rank is not None, problems, label)

    if problems:
        return _raise_or_skip(table, problems, run_of_row, name, skipped)

    # Players in order of first appearance, slot by slot (as the JSONL and CSV readers number them).
    slot_code = pcode[order]
    distinct, first_slot = np.unique(slot_code, return_index=True)
    by_appearance = distinct[np.argsort(first_slot)]
    renumber = np.empty(n_p, dtype=np.int64)
    renumber[by_appearance] = np.arange(len(by_appearance))
    players = [player_values[c] for c in by_appearance.tolist()]
    return Columns(match_start, team_start, team_rank, renumber[slot_code], weight[order], time_row[run_start],
                   players, ids, is_date, **extras)


def _null_message(label: Callable[[int], str], column: str) -> Callable[[int], str]:
    return lambda row: f"{label(row)}: '{column}' is null."


def run_starts(column: Any) -> NDArray[np.int64]:
    """The rows where a match starts: where the id (an Arrow array or chunked array without nulls, of strings or
    integers) differs from the row before.  The one way the readers (this module's, the fast one in
    :mod:`podium.data.longform`) and the scanner find matches: a match is a run of rows sharing an id."""
    import pyarrow.compute as pc

    n = len(column)
    if n < 2:
        return np.zeros(min(1, n), dtype=np.int64)
    changed = pc.not_equal(column.slice(1), column.slice(0, n - 1))
    return np.r_[0, np.flatnonzero(changed.to_numpy(zero_copy_only=False)) + 1].astype(np.int64)


def _ranks(table: Any, name: str, present: list[str], problems: list[Problem],
           label: Callable[[int], str]) -> NDArray[np.int64] | None:
    """Each row's rank (-1: did not finish), or None without a ``rank`` column.  A value that is no rank is a
    problem (read as -1); a column of the wrong type raises :class:`MatchError`."""
    if "rank" not in present:
        return None
    pa = _pyarrow()
    col = _column(table, "rank", name)
    kind = col.type
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_null(kind)):
        raise MatchError(f"{name}: column 'rank' must hold integers (null = did not finish). Got type {table.schema.field('rank').type}.")
    if not pa.types.is_integer(kind):  # whole numbers as floats (NaN or null: did not finish)
        values = _numbers(col)
        bad = np.flatnonzero(~np.isnan(values) & ((values != np.floor(values)) | (values < 0) | (values >= 2.0 ** 62)))
        if len(bad):
            problems.append((bad, lambda row: f"{label(row)}: 'rank' must be a whole number >= 0 or null. "
                                              f"Got {values[row]!r}."))
        return np.where(np.isnan(values) | (values < 0) | (values >= 2.0 ** 62), -1, np.nan_to_num(values)).astype(np.int64)
    if kind.bit_width == 64 and pa.types.is_unsigned_integer(kind):
        raise MatchError(f"{name}: column 'rank' must be signed integers. Got type {table.schema.field('rank').type}.")
    given = np.asarray(col.fill_null(0).cast(pa.int64()).to_numpy(zero_copy_only=False), dtype=np.int64) \
        if len(col) else np.zeros(0, np.int64)
    valid = (given >= 0) & (given < 2 ** 62)
    null = _nulls(col) if col.null_count else None
    bad = np.flatnonzero(~valid if null is None else ~null & ~valid)
    if len(bad):
        problems.append((bad, lambda row: f"{label(row)}: 'rank' must be >= 0 (0 is best; null = did not "
                                          f"finish) and below 2**62. Got {int(given[row])}."))
    if null is None and not len(bad):
        return given
    return np.where(~valid if null is None else null | ~valid, -1, given)


def _weights(table: Any, name: str, present: list[str], problems: list[Problem],
             label: Callable[[int], str]) -> NDArray[np.float64]:
    """Each row's partial-play weight in [MIN_WEIGHT, 1] (1 without a ``weight`` column or where null).  A value outside is
    a problem (read as 1); a column of the wrong type raises :class:`MatchError`."""
    if "weight" not in present:
        return np.ones(table.num_rows)
    pa = _pyarrow()
    col = _column(table, "weight", name)
    if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type) or pa.types.is_null(col.type)):
        raise MatchError(f"{name}: column 'weight' must hold numbers in [{MIN_WEIGHT:g}, 1] (null = 1). Got type {table.schema.field('weight').type}.")
    given = _numbers(col) if len(col) else np.zeros(0)
    weight = np.where(_nulls(col), 1.0, given) if col.null_count or pa.types.is_null(col.type) else given
    valid = (weight >= MIN_WEIGHT) & (weight <= 1.0)
    if not np.all(valid):
        bad = np.flatnonzero(~valid)
        problems.append((bad, lambda row: f"{label(row)}: 'weight' must be a number in [{MIN_WEIGHT:g}, 1] or null. "
                                          f"Got {float(given[row])!r}."))
        weight = np.where(valid, weight, 1.0)  # the message reads given
    return weight


def _times(table: Any, name: str, present: list[str], problems: list[Problem],
           label: Callable[[int], str]) -> tuple[NDArray[np.float64], bool]:
    """Each row's time as a float (days since 1970 for dates; NaN unknown) and whether they are dates."""
    pa = _pyarrow()
    n_rows = table.num_rows
    if "time" not in present:
        return np.full(n_rows, np.nan), False
    col = _column(table, "time", name)
    kind = col.type
    if pa.types.is_null(kind):
        return np.full(n_rows, np.nan), False
    if pa.types.is_integer(kind) or pa.types.is_floating(kind):
        values = _numbers(col)
        far = np.abs(values) >= MAX_TIME  # (NaN is unknown)
        bad = np.flatnonzero(far)
        if len(bad):
            problems.append((bad, lambda row: f"{label(row)}: 'time' must be of magnitude below 2**63. "
                                              f"Got {values[row]!r}."))
            values = np.where(far, np.nan, values)
        return values, False
    if pa.types.is_timestamp(kind):
        raw = col.cast(pa.int64()).to_numpy(zero_copy_only=False).astype(np.float64)
        return np.where(_nulls(col), np.nan, raw / _DAY[kind.unit]), True
    if pa.types.is_date32(kind) or pa.types.is_date64(kind):
        raw = col.cast(pa.timestamp("ms")).cast(pa.int64()).to_numpy(zero_copy_only=False).astype(np.float64)
        return np.where(_nulls(col), np.nan, raw / _DAY["ms"]), True
    if not _is_text(pa, kind):
        raise MatchError(f"{name}: column 'time' must hold ISO-8601 dates (strings), numbers, dates or timestamps. "
                         f"Got type {table.schema.field('time').type}.")
    from .match import parse_time

    codes, texts = _codes(col)
    parsed = np.full(len(texts) + 1, np.nan)
    kinds: dict[bool, int] = {}
    bad_codes: dict[int, str] = {}
    for c, text in enumerate(texts):
        stripped = text.strip()
        if not stripped:
            continue
        try:
            number = float(stripped)
        except ValueError:
            try:
                parsed[c] = parse_time(stripped)
            except MatchError as error:
                bad_codes[c] = str(error)
                continue
            kinds.setdefault(True, c)
        else:
            if not abs(number) < MAX_TIME:
                bad_codes[c] = f"'time' must be of magnitude below 2**63. Got {_show(text)}."
                continue
            parsed[c] = number
            kinds.setdefault(False, c)
    if bad_codes:
        bad = np.flatnonzero(np.isin(codes, list(bad_codes)))
        problems.append((bad, lambda row: f"{label(row)}: {bad_codes[int(codes[row])]}"))
    if len(kinds) > 1:
        row = int(np.argmax(codes == kinds[False])) if kinds[True] < kinds[False] else int(np.argmax(codes == kinds[True]))
        raise MatchError(f"{name}, row {row}: 'time' mixes numbers and dates; use one kind for a whole history. "
                         f"Got {texts[kinds[False]]!r} and {texts[kinds[True]]!r}.")
    return parsed[np.where(codes < 0, len(texts), codes)], kinds.get(True) is not None


def _raise_or_skip(table: Any, problems: list[Problem], run_of_row: NDArray[np.int64], name: str,
                   skipped: list[str] | None) -> Columns:
    """Raise for the first bad row; or (``skipped`` given) leave out every match with a bad row and read the rest."""
    firsts = [(int(rows.min()), message) for rows, message in problems if len(rows)]
    if skipped is None:
        row, message = min(firsts, key=lambda item: item[0])
        raise MatchError(message(row))
    worst: dict[int, tuple[int, Callable[[int], str]]] = {}
    for rows, message in problems:
        for row in rows.tolist():
            run = int(run_of_row[row])
            if run not in worst or row < worst[run][0]:
                worst[run] = (row, message)
    for run in sorted(worst):
        row, message = worst[run]
        skipped.append(message(row))
    keep = ~np.isin(run_of_row, np.array(sorted(worst), dtype=np.int64))
    pa = _pyarrow()
    return _from_arrow(table.filter(pa.array(keep)), name, None)
