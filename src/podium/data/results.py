"""What a result says beyond the order, in the long form (``docs/design.md``, "What a result says"): the optional
columns ``score``, ``higher_is_better``, ``advantage`` and ``match_weight`` read from a table, checked (the same
within a team or match, ranks that agree with the scores) and cut into :class:`podium.Matches`' per-team and
per-match arrays, and the vectorized rank rules they need (:func:`contradicting`, :func:`ranks_by_score`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .arrow import _column, _nulls, _numbers, _pyarrow
from .match import MAX_MATCH_WEIGHT, MAX_VALUE, MatchError, _show, check_ranks_agree

__all__ = ["RESULT_COLUMNS", "Problem", "contradicting", "contradiction", "ranks_by_score"]

RESULT_COLUMNS = ("score", "higher_is_better", "advantage", "match_weight")  # optional, after the long form's six
#: A reader's problem: the rows it concerns and the message for one of them.
Problem = tuple[NDArray[np.int64], Callable[[int], str]]


def _result_rows(table: Any, name: str, present: list[str], problems: list[Problem],
                 label: Callable[[int], str]) -> dict[str, NDArray[Any] | None] | None:
    """Each row's ``score`` (NaN: none), ``higher_is_better``, ``advantage`` and ``match_weight`` (None for a column
    the table lacks), or None when it has none of them.  A value that is not one is a problem (read as the
    default); a column of the wrong type raises :class:`MatchError`."""
    if not any(column in present for column in RESULT_COLUMNS):
        return None
    pa = _pyarrow()
    rows: dict[str, NDArray[Any] | None] = dict.fromkeys(RESULT_COLUMNS)

    def numeric(column: str, what: str, booleans: bool = False) -> tuple[Any, NDArray[np.float64]] | None:
        if column not in present:
            return None
        col = _column(table, column, name)
        kind = col.type
        if not (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_null(kind)
                or (booleans and pa.types.is_boolean(kind))):
            raise MatchError(f"{name}: column {column!r} must hold {what}. Got type {table.schema.field(column).type}.")
        values = _numbers(col) if len(col) else np.zeros(0)
        return col, values

    found = numeric("score", "numbers (null = no score)")
    if found is not None:
        score = given_score = found[1]
        far = np.abs(given_score) > MAX_VALUE  # (NaN is no score)
        bad = np.flatnonzero(far)
        if len(bad):
            problems.append((bad, lambda row: f"{label(row)}: 'score' must be a number of magnitude at most "
                                              f"{MAX_VALUE:g} or null (no score). Got {float(given_score[row])!r}."))
            score = np.where(far, np.nan, given_score)  # (the message reads given_score)
        rows["score"] = score
    for column, default, what, positive in (
            ("advantage", 0.0, "numbers or booleans (null = 0)", False),
            ("match_weight", 1.0, "positive numbers (null = 1)", True)):
        found = numeric(column, what, booleans=not positive)
        if found is None:
            continue
        col, given = found
        values = np.where(_nulls(col), default, given) if col.null_count or pa.types.is_null(col.type) else given
        valid = ((values >= 1.0 / MAX_MATCH_WEIGHT) & (values <= MAX_MATCH_WEIGHT) if positive
                 else np.abs(values) <= MAX_VALUE)
        if not np.all(valid):
            bad = np.flatnonzero(~valid)
            must = (f"a number from {1 / MAX_MATCH_WEIGHT:g} to {MAX_MATCH_WEIGHT:g}" if positive
                    else f"a number of magnitude at most {MAX_VALUE:g}, a boolean")
            problems.append((bad, _not_a_value(label, column, must, given)))
            values = np.where(valid, values, default)
        rows[column] = values
    if "higher_is_better" in present:
        col = _column(table, "higher_is_better", name)
        if not (pa.types.is_boolean(col.type) or pa.types.is_null(col.type)):
            raise MatchError(f"{name}: column 'higher_is_better' must hold booleans (null = true). "
                             f"Got type {table.schema.field('higher_is_better').type}.")
        if pa.types.is_null(col.type):
            rows["higher_is_better"] = np.ones(len(col), dtype=bool)
        else:
            rows["higher_is_better"] = np.asarray(col.fill_null(True).to_numpy(zero_copy_only=False), dtype=bool)
    return rows


def _not_a_value(label: Callable[[int], str], column: str, must: str, given: NDArray[np.float64]
                 ) -> Callable[[int], str]:
    return lambda row: f"{label(row)}: {column!r} must be {must} or null. Got {float(given[row])!r}."


def _results(rows: dict[str, NDArray[Any] | None], team_head: NDArray[np.int64], row_head: NDArray[np.int64],
             run_start: NDArray[np.int64], run_of_row: NDArray[np.int64], match_start: NDArray[np.int64],
             team_rank: NDArray[np.int64], ranks_given: bool, problems: list[Problem], label: Callable[[int], str]
             ) -> tuple[NDArray[np.int64], dict[str, Any]]:
    """The team ranks and the :class:`Columns` keywords of what a result says, from :func:`_result_rows`' values:
    ``team_head`` each team's first row, ``row_head`` each row's team's first row.  A value that differs within its
    team (score, advantage) or match (higher_is_better, match_weight), higher_is_better false in a match without a
    score, and given ranks that contradict the scores are problems.  Without given ranks a match with a score ranks
    its teams by it (:func:`podium.data.match.ranks_from_scores`).  A column that says nothing is None."""
    def differs(column: str, values: NDArray[Any], heads: NDArray[np.int64], within: str) -> None:
        head = values[heads]
        same = (values == head) | (np.isnan(values) & np.isnan(head)) if values.dtype.kind == "f" else values == head
        if np.all(same):
            return
        show = lambda x: ("null" if isinstance(x, float) and math.isnan(x)  # noqa: E731
                          else str(x).lower() if isinstance(x, bool) else _show(x))
        problems.append((np.flatnonzero(~same), lambda row: (
            f"{label(row)}: {column!r} differs within the {within}: {show(values[row].item())} here, "
            f"{show(values[heads[row]].item())} on the {within}'s first row (row {int(heads[row])}).")))

    match_head = run_start[run_of_row] if len(run_start) else np.zeros(0, dtype=np.int64)
    out: dict[str, Any] = {}
    for column in RESULT_COLUMNS:
        values = rows[column]
        if values is None:
            out[column] = None
            continue
        per_team = column in ("score", "advantage")
        differs(column, values, row_head if per_team else match_head, "team" if per_team else "match")
        out[column] = values[team_head] if per_team else values[run_start]
    n_matches = len(match_start) - 1
    team_match = np.repeat(np.arange(n_matches, dtype=np.int64), np.diff(match_start))
    score, better = out["score"], out["higher_is_better"]
    scored = np.zeros(n_matches, dtype=bool)  # whether the match has a score
    if score is not None:
        scored = np.bincount(team_match, weights=~np.isnan(score), minlength=n_matches) > 0
    if better is not None and not np.all(better | scored):
        orphan = np.flatnonzero(~better & ~scored)
        problems.append((run_start[orphan], lambda row: f"{label(row)}: 'higher_is_better' is false but the match "
                                                        "has no 'score' for it to apply to."))
    if score is not None and np.any(scored):
        sign = np.where(better, 1.0, -1.0) if better is not None else np.ones(n_matches)
        if ranks_given:
            bad = contradicting(match_start, team_rank, score, sign)
            if len(bad):
                problems.append((run_start[bad], _contradiction(match_start, team_rank, score, sign, run_of_row,
                                                                label)))
        else:
            from_scores = ranks_by_score(match_start, score, sign)
            team_rank = np.where(scored[team_match], from_scores, team_rank)
    # one representation of "says nothing": None, as podium.Matches built from records has it
    if score is not None and np.all(np.isnan(score)):
        out["score"] = None
    if better is not None and np.all(better):
        out["higher_is_better"] = None
    if out["advantage"] is not None and np.all(out["advantage"] == 0.0):
        out["advantage"] = None
    if out["match_weight"] is not None and np.all(out["match_weight"] == 1.0):
        out["match_weight"] = None
    return team_rank, out


def contradiction(match_start: NDArray[np.int64], team_rank: NDArray[np.int64], score: NDArray[np.float64],
                  sign: NDArray[np.float64], m: int) -> str:
    """What :func:`podium.data.match.check_ranks_agree` says of match ``m``, one that :func:`contradicting` found."""
    t0, t1 = int(match_start[m]), int(match_start[m + 1])
    scores = tuple(None if math.isnan(x) else x for x in score[t0:t1].tolist())
    ranks = tuple(None if r < 0 else r for r in team_rank[t0:t1].tolist())
    try:
        check_ranks_agree(ranks, scores, bool(sign[m] > 0))
    except MatchError as error:
        return str(error)
    return "'ranks' contradict 'scores'."  # (not reached for a match contradicting() found)


def _contradiction(match_start: NDArray[np.int64], team_rank: NDArray[np.int64], score: NDArray[np.float64],
                   sign: NDArray[np.float64], run_of_row: NDArray[np.int64], label: Callable[[int], str]
                   ) -> Callable[[int], str]:
    return lambda row: f"{label(row)}: {contradiction(match_start, team_rank, score, sign, int(run_of_row[row]))}"


def contradicting(match_start: NDArray[np.int64], team_rank: NDArray[np.int64], score: NDArray[np.float64],
                  sign: NDArray[np.float64]) -> NDArray[np.int64]:
    """The matches whose ranks put a team with a strictly better score strictly behind one with a worse score
    (``sign`` per match: 1 where higher is better, -1 where lower is; NaN scores and rank -1 take no part), as
    :func:`podium.data.match.check_ranks_agree` refuses them, without a Python loop."""
    n_matches = len(match_start) - 1
    team_match = np.repeat(np.arange(n_matches, dtype=np.int64), np.diff(match_start))
    known = np.flatnonzero((team_rank >= 0) & ~np.isnan(score))
    if len(known) < 2:
        return np.zeros(0, dtype=np.int64)
    m = team_match[known]
    s = sign[m] * score[known]
    by = np.lexsort((-s, m))  # each match's teams, best score first
    m, s, r = m[by], s[by], team_rank[known][by]
    _, code = np.unique(r, return_inverse=True)
    code = code.reshape(-1).astype(np.int64) + 1
    stride = np.int64(code.max() + 1)
    running = np.maximum.accumulate(m * stride + code)  # the worst rank so far, within the match
    n = len(m)
    group = np.ones(n, dtype=bool)  # the first team of a run with one score in one match
    group[1:] = (m[1:] != m[:-1]) | (s[1:] != s[:-1])
    start = np.maximum.accumulate(np.where(group, np.arange(n), 0))
    before = start - 1  # the last team with a strictly better score (if of the same match)
    valid = before >= 0
    valid[valid] = m[before[valid]] == m[valid]
    worse = np.zeros(n, dtype=bool)
    worse[valid] = running[before[valid]] - m[valid] * stride > code[valid]
    return np.unique(m[worse])


def ranks_by_score(match_start: NDArray[np.int64], score: NDArray[np.float64], sign: NDArray[np.float64]
                   ) -> NDArray[np.int64]:
    """Dense ranks within each match from the scores, best first (``sign`` per match as in :func:`contradicting`),
    -1 for a team without a score: :func:`podium.data.match.ranks_from_scores`, without a Python loop."""
    n_matches = len(match_start) - 1
    team_match = np.repeat(np.arange(n_matches, dtype=np.int64), np.diff(match_start))
    ranks = np.full(len(score), -1, dtype=np.int64)
    known = np.flatnonzero(~np.isnan(score))
    if not len(known):
        return ranks
    m = team_match[known]
    s = sign[m] * score[known]
    by = np.lexsort((-s, m))
    m, s = m[by], s[by]
    new = np.ones(len(m), dtype=bool)
    new[1:] = (m[1:] != m[:-1]) | (s[1:] != s[:-1])
    first = np.ones(len(m), dtype=bool)
    first[1:] = m[1:] != m[:-1]
    count = np.cumsum(new) - 1
    base = np.maximum.accumulate(np.where(first, count, 0))
    ranks[known[by]] = count - base
    return ranks
