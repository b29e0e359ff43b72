"""Reading and writing match histories: JSONL (optionally gzip), the CSV long form and Parquet.

JSONL: one object per line, in the order played (DESIGN.md, "Input format")::

    {"id": str, "time": ISO-8601 | number | null, "teams": [[player, ...], ...],
     "ranks": [int | null, ...], "weights": [[w, ...], ...] (optional), "meta": {...} (optional),
     "scores": [number | null, ...], "higher_is_better": bool, "advantage": [number | bool, ...],
     "weight": number (all optional: docs/design.md, "What a result says")}

CSV long form: one row per player, columns ``match, team, player, rank, weight, time`` (``rank`` empty =
did not finish, ``weight`` empty = 1), and optionally what a result says beyond the order (docs/design.md,
"What a result says"): ``score`` (the team's, on each of its rows; empty = none), ``higher_is_better`` (the
match's, ``true`` or ``false`` on each of its rows; empty = true), ``advantage`` (the team's; a number, ``true``
= 1 or ``false`` = 0; empty = 0) and ``match_weight`` (the match's importance, positive; empty = 1).  Without a
``rank`` column a match with a score ranks its teams by it.  A score or advantage that differs within a team,
or a higher_is_better or match_weight that differs within a match, is an error naming the line and the match.
The writer adds each of these columns, in that order after ``time``, only when the history has it, so a
history without them is written as before they existed.  A malformed line raises :class:`MatchError` with
its line number; nothing half-read is returned.  A UTF-8 byte-order mark and CRLF line ends are accepted; a
gzip file that ends early raises :class:`MatchError` naming the last line read.

Parquet (``.parquet``, needs pyarrow: ``pip install podium[tables]``) holds the same long form as a table
(:mod:`podium.data.tables`): ``rank`` a nullable integer, ``weight`` a float, ``time`` an ISO-8601 string for dates
or a float; ``score`` a float (null = none), ``higher_is_better`` a boolean, ``advantage`` and ``match_weight``
floats, each only where the history has it.  Parquet does not keep ``meta``.

League exports (``podium league export``) are JSONL too, read as the league's approved log: their first
line, a header object ``{"podium_league": {...}}``, is skipped, and so is every record whose
``meta.podium.status`` is there and is not ``"recorded"`` (pending, rejected and voided matches).
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import math
import os
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any


from .match import (MAX_MATCH_WEIGHT, MAX_TIME, MAX_VALUE, MIN_WEIGHT, RECORD_KEYS, Match, MatchError, check_errors,
                    format_time, plain_number, skipped_summary)
from .matches import Matches, Packer
from .results import RESULT_COLUMNS

__all__ = ["read_matches", "write_matches"]

_CSV_COLUMNS = ("match", "team", "player", "rank", "weight", "time")


def _open_text(path: Path, mode: str) -> IO[str]:
    """Open a history as text; for reading, a leading byte-order mark is dropped and gzip errors are reported."""
    if mode == "r":
        with open(path, "rb") as probe:
            zipped = probe.read(2) == b"\x1f\x8b"
        inner = (gzip.open(path, "rt", encoding="utf-8-sig", newline="") if zipped
                 else open(path, "r", encoding="utf-8-sig", newline=""))
        return _Guarded(inner, str(path))  # type: ignore[return-value]
    if path.suffix == ".gz":
        return gzip.open(path, mode + "t", encoding="utf-8", newline="")  # type: ignore[return-value]
    return open(path, mode, encoding="utf-8", newline="")


class _Guarded(io.TextIOBase):
    """A text file read line by line that reports a truncated or corrupt file as a :class:`MatchError`.

    Without it a gzip stream that ends early raises a bare ``EOFError`` (and undecodable bytes a
    ``UnicodeDecodeError``) with no file name and no line.
    """

    def __init__(self, inner: IO[str], name: str) -> None:
        super().__init__()
        self._inner = inner
        self._name = name
        self.buffer = getattr(inner, "buffer", None)  # for progress bars: the bytes read so far
        self.lines = 0
        self.last = ""

    def readable(self) -> bool:
        return True

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        try:
            line = self._inner.readline(-1 if size is None else size)
        except (EOFError, zlib.error, gzip.BadGzipFile) as error:
            raise MatchError(f"{self._name}: the file is truncated or corrupt ({error}); {self._where()}.") from None
        except UnicodeDecodeError as error:
            raise MatchError(f"{self._name}, line {self.lines + 1}: not valid UTF-8 ({error}).") from None
        if line:
            self.lines += 1
            self.last = line
        return line

    def read(self, size: int | None = -1) -> str:
        return "".join(iter(self.readline, "")) if size is None or size < 0 else self.readline(size)

    def _where(self) -> str:
        if not self.lines:
            return "no complete line could be read"
        return f"the last line read was line {self.lines}: {self.last.rstrip()[:80]!r}"

    def close(self) -> None:
        self._inner.close()
        super().close()


def _raw_position(handle: IO[str]) -> int:
    """Bytes of the file on disk read so far (the compressed position for gzip), for progress bars."""
    buffer = getattr(handle, "buffer", None)
    raw = getattr(buffer, "fileobj", None) or getattr(buffer, "raw", None)
    try:
        return int(raw.tell()) if raw is not None else 0
    except (OSError, ValueError):
        return 0


class _Progress:
    """A rich progress bar over the bytes of a file, or nothing."""

    def __init__(self, path: Path, handle: IO[str], enabled: bool) -> None:
        self.handle = handle
        self.bar: Any = None
        if enabled:
            from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

            self.bar = Progress(TextColumn("reading"), BarColumn(), DownloadColumn(), TimeRemainingColumn(), transient=True)
            self.task = self.bar.add_task("read", total=path.stat().st_size)
            self.bar.start()

    def update(self) -> None:
        if self.bar is not None:
            self.bar.update(self.task, completed=_raw_position(self.handle))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _format_of(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes if s.lower() != ".gz"]
    last = suffixes[-1] if suffixes else ""
    if last in (".jsonl", ".json", ".ndjson"):
        return "jsonl"
    if last == ".csv":
        return "csv"
    if last == ".parquet":
        if path.suffix.lower() == ".gz":
            raise ValueError(f"{str(path)!r}: Parquet compresses inside the file; drop the .gz.")
        return "parquet"
    raise ValueError(f"Cannot tell the format of {str(path)!r}: use .jsonl or .csv (optionally .gz), or .parquet.")


def read_matches(path: str | os.PathLike[str], *, errors: str = "raise", progress: bool = False) -> Matches:
    """Read a match history: JSONL (``.jsonl``, optionally ``.gz``), the CSV long form (``.csv``) or Parquet.

    Parameters
    ----------
    path : path-like
    errors : {"raise", "skip"}
        ``"raise"``: the first malformed record raises and nothing is returned.  ``"skip"``: malformed
        records are left out, and a ``UserWarning`` says how many and quotes the first reasons (for real
        data with, say, a player listed in two teams of one match).
    progress : bool, default False
        Show a progress bar (rich) while reading (JSONL and CSV).

    Raises
    ------
    MatchError
        For a malformed line (or Parquet row), naming the line (row) number and the field; for a gzip
        file that ends early, naming the last line read.  Nothing is returned.
    ImportError
        For Parquet without pyarrow (``pip install podium[tables]``).
    """
    check_errors(errors)
    path = Path(path)
    kind = _format_of(path)
    if kind == "parquet":
        return _read_parquet(path, errors)
    skipped: list[str] = []
    with _open_text(path, "r") as handle:
        bar = _Progress(path, handle, progress)
        try:
            if kind == "jsonl":
                matches = _read_jsonl(handle, str(path), skipped if errors == "skip" else None, bar)
            else:
                matches = _read_csv(handle, str(path), skipped if errors == "skip" else None)
        finally:
            bar.close()
    if skipped:
        import warnings

        warnings.warn(skipped_summary(str(path), skipped), UserWarning, stacklevel=2)
    return matches


def _read_jsonl(handle: Iterable[str], name: str, skipped: list[str] | None = None,
                bar: _Progress | None = None) -> Matches:
    return next(_jsonl_batches(handle, name, skipped, bar, None))


def _jsonl_batches(handle: Iterable[str], name: str, skipped: list[str] | None, bar: _Progress | None,
                   batch_size: int | None) -> Iterator[Matches]:
    """The records of ``handle`` packed ``batch_size`` matches at a time (``None``: all of them, in one)."""
    builder = Packer()
    for number, line in enumerate(handle, start=1):
        if bar is not None and number % 8192 == 0:
            bar.update()
        try:
            _parse_record(builder, line, number, name)
        except MatchError as error:
            if skipped is None:
                raise
            skipped.append(str(error))
            continue
        if batch_size is not None and len(builder.ids) >= batch_size:
            yield _built(builder, name)
            builder = Packer()
    if builder.ids or batch_size is None:
        yield _built(builder, name)


def _built(builder: Packer, name: str) -> Matches:
    try:
        return builder.build()
    except MatchError as error:
        raise MatchError(f"{name}: {error}") from None


def _parse_record(builder: Packer, line: str, number: int, name: str) -> None:
    """Validate one JSONL line and add it to ``builder`` (whole, or not at all)."""
    if not line.strip():
        return
    try:
        record = json.loads(line, parse_constant=_constant)
    except (json.JSONDecodeError, ValueError) as error:
        raise MatchError(f"{name}, line {number}: not valid JSON ({error}).") from None
    if not isinstance(record, dict):
        raise MatchError(f"{name}, line {number}: a match record must be a JSON object. Got {line.strip()[:80]!r}.")
    if number == 1 and list(record) == ["podium_league"]:
        return  # a league export's header
    meta = record.get("meta")
    podium = meta.get("podium") if isinstance(meta, dict) else None
    if isinstance(podium, dict) and podium.get("status", "recorded") != "recorded":
        return  # a league export's match that is not in the approved log
    unknown = set(record) - RECORD_KEYS
    if unknown:
        raise MatchError(f"{name}, line {number}: unknown field(s) {sorted(unknown)}; a record has {sorted(RECORD_KEYS)}.")
    if "teams" not in record:
        raise MatchError(f"{name}, line {number}: the field 'teams' is missing.")
    try:
        if "meta" in record and ("NaN" in line or "Infinity" in line):
            _check_meta_finite(record["meta"])
        builder.add(record["teams"], record.get("ranks"), record.get("weights"), record.get("time"),
                    record.get("id"), record.get("meta"), record.get("scores"), record.get("higher_is_better", True),
                    record.get("advantage"), record.get("weight", 1.0))
    except MatchError as error:
        raise MatchError(f"{name}, line {number}: {error}") from None


def _constant(token: str) -> float:
    # NaN and +-Infinity reach the field checks, which name the field that holds them.
    return float(token.replace("Infinity", "inf"))


def _check_meta_finite(value: Any, where: str = "meta") -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise MatchError(f"'{where}' holds a non-finite number ({value!r}); JSON has no NaN or Infinity.")
    if isinstance(value, dict):
        for key, item in value.items():
            _check_meta_finite(item, f"{where}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_meta_finite(item, f"{where}[{i}]")


def _read_parquet(path: Path, errors: str) -> Matches:
    from .arrow import _pyarrow

    pa = _pyarrow()
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as error:
        raise MatchError(f"{path}: not a readable Parquet file ({error}).") from None
    return Matches.from_arrow(table, errors=errors, name=str(path))


def _read_csv(handle: Iterable[str], name: str, skipped: list[str] | None = None) -> Matches:
    """The long form: one row per player; a match is a run of rows sharing an id, a team's rows share a rank
    (and a score and an advantage), a match's rows a time (and higher_is_better and match_weight).

    Player and match ids are kept exactly as written (no whitespace is stripped); a file without a
    ``rank`` column lists teams winner first, or in the order of their scores in a match with a score.
    """
    reader = csv.reader(handle)
    header = next(reader, None)
    if header is None:
        return Packer().build()
    header = [h.strip() for h in header]
    missing = {"match", "team", "player"} - set(header)
    if missing:
        raise MatchError(f"{name}, line 1: the CSV header must have columns {list(_CSV_COLUMNS)}; missing {sorted(missing)}. Got {header}.")
    col = {h: i for i, h in enumerate(header)}
    has_rank = "rank" in col
    # score, higher_is_better, advantage, match_weight (without them, rows read as before they existed)
    read_results = _csv_results(col, name) if any(c in col for c in RESULT_COLUMNS) else None
    builder = Packer()
    seen: set[str] = set()
    group: dict[str, Any] | None = None

    def flush(group: dict[str, Any]) -> None:
        weights = list(group["weights"].values())
        has_w = any(w != 1.0 for ws in weights for w in ws)
        try:
            # (without the optional columns: no scores, higher is better, no advantage, weight 1, as a record's;
            # a match whose score cells are all empty has no scores, so it keeps the order its rows give)
            scores = list(group["scores"].values()) if read_results is not None else []
            builder.add(list(group["teams"].values()), list(group["ranks"].values()) if has_rank else None,
                        weights if has_w else None, group["time"], group["id"], None,
                        scores if any(x is not None for x in scores) else None,
                        group.get("higher_is_better", True),
                        list(group["advantage"].values()) if read_results is not None else None,
                        group.get("match_weight", 1.0))
        except MatchError as error:
            message = f"{name}, line {group['line']} (match {group['id']!r}): {error}"
            if group["again"]:
                message += " (an id seen again after another match starts a new match: are its rows contiguous?)"
            if skipped is None:
                raise MatchError(message) from None
            skipped.append(message)

    for number, row in enumerate(reader, start=2):
        if not row or all(not c.strip() for c in row):
            continue
        try:
            record = _csv_row(row, header, col, number, name)
            results = read_results(row, number) if read_results is not None else None
        except MatchError as error:
            if skipped is None:
                raise
            skipped.append(str(error))
            continue
        match_id, team_id, player, rank, weight, time = record
        if group is None or group["id"] != match_id:
            if group is not None:
                flush(group)
            # A match is a run of rows sharing an id; an id may come back for another match (real exports repeat
            # them: atp_doubles has twelve), so a history with repeated ids round-trips.
            group = {"id": match_id, "teams": {}, "ranks": {}, "weights": {}, "time": time, "line": number,
                     "again": match_id in seen}
            if results is not None:
                group.update(scores={}, advantage={}, higher_is_better=results[1], match_weight=results[3])
            seen.add(match_id)
        if group["time"] != time:
            raise MatchError(f"{name}, line {number}: 'time' differs within match {match_id!r}: {group['time']!r} and {time!r}.")
        if team_id in group["ranks"] and group["ranks"][team_id] != rank:
            raise MatchError(f"{name}, line {number}: 'rank' differs within team {team_id!r} of match {match_id!r}.")
        if results is not None:
            score, better, advantage, match_weight = results
            if better != group["higher_is_better"] or match_weight != group["match_weight"]:
                field, value = ("higher_is_better", better) if better != group["higher_is_better"] \
                    else ("match_weight", match_weight)
                raise MatchError(f"{name}, line {number}: {field!r} differs within match {match_id!r}: "
                                 f"{_csv_text(group[field])} and {_csv_text(value)}.")
            scores, advantages = group["scores"], group["advantage"]
            if team_id not in scores:
                scores[team_id], advantages[team_id] = score, advantage
            elif scores[team_id] != score or advantages[team_id] != advantage:
                field, was, here = ("score", scores[team_id], score) if scores[team_id] != score \
                    else ("advantage", advantages[team_id], advantage)
                raise MatchError(f"{name}, line {number}: {field!r} differs within team {team_id!r} of match "
                                 f"{match_id!r}: {_csv_text(was) or 'empty'} and {_csv_text(here) or 'empty'}.")
        group["ranks"][team_id] = rank
        group["teams"].setdefault(team_id, []).append(player)
        group["weights"].setdefault(team_id, []).append(weight)
    if group is not None:
        flush(group)
    return builder.build()


def _csv_row(row: list[str], header: list[str], col: dict[str, int], number: int, name: str) -> tuple[Any, ...]:
    if len(row) != len(header):
        raise MatchError(f"{name}, line {number}: expected {len(header)} columns, got {len(row)}: {row!r:.80}.")
    exact = lambda key: row[col[key]] if key in col else ""  # noqa: E731  ids are kept verbatim
    match_id, team_id, player = exact("match"), exact("team"), exact("player")
    if not match_id or not team_id or not player:
        raise MatchError(f"{name}, line {number}: 'match', 'team' and 'player' must be non-empty. Got {row!r:.80}.")
    rank_text, weight_text, time_text = (exact(k).strip() for k in ("rank", "weight", "time"))
    try:
        rank = None if rank_text == "" else int(rank_text)
    except ValueError:
        raise MatchError(f"{name}, line {number}: 'rank' must be an integer or empty. Got {rank_text!r}.") from None
    try:
        weight = 1.0 if weight_text == "" else float(weight_text)
    except ValueError:
        raise MatchError(f"{name}, line {number}: 'weight' must be a number in [{MIN_WEIGHT:g}, 1] or empty. "
                         f"Got {weight_text!r}.") from None
    time: Any = None
    if time_text:
        try:
            time = float(time_text)
        except ValueError:
            time = time_text
        if isinstance(time, float) and not abs(time) < MAX_TIME:
            raise MatchError(f"{name}, line {number}: 'time' must be a number of magnitude below 2**63 or an "
                             f"ISO-8601 date. Got {time_text!r}.")
    return match_id, team_id, player, rank, weight, time


def _csv_results(col: dict[str, int], name: str) -> Callable[[list[str], int], tuple[float | None, bool, float, float]]:
    """What reads a row's ``score`` (None: none), ``higher_is_better``, ``advantage`` and ``match_weight``:
    defaults where the column is absent or the cell empty (:func:`_csv_row` has checked the row's length).  A
    cell's text is parsed once per file (the values repeat: ``true``, ``0``, the usual scores), then looked up."""
    caches: tuple[dict[str, Any], ...] = ({}, {}, {}, {})
    si, bi, ai, wi = (col.get(column) for column in RESULT_COLUMNS)
    sc, bc, ac, wc = caches

    def parse(k: int, text: str, number: int) -> Any:
        value = _csv_result(RESULT_COLUMNS[k], text.strip(), f"{name}, line {number}")
        if len(caches[k]) < 65536:
            caches[k][text] = value
        return value

    def read(row: list[str], number: int) -> tuple[float | None, bool, float, float]:
        score = None if si is None else sc[row[si]] if row[si] in sc else parse(0, row[si], number)
        better = True if bi is None else bc[row[bi]] if row[bi] in bc else parse(1, row[bi], number)
        advantage = 0.0 if ai is None else ac[row[ai]] if row[ai] in ac else parse(2, row[ai], number)
        weight = 1.0 if wi is None else wc[row[wi]] if row[wi] in wc else parse(3, row[wi], number)
        return score, better, advantage, weight

    return read


def _csv_result(column: str, text: str, where: str) -> float | bool | None:
    """One cell of an optional column (stripped), checked: ``where`` names the file and line for the message."""
    if column == "higher_is_better":
        lowered = text.lower()
        if lowered not in ("", "true", "false"):
            raise MatchError(f"{where}: 'higher_is_better' must be true, false or empty (true). Got {text!r}.")
        return lowered != "false"
    if text == "":
        return {"score": None, "advantage": 0.0, "match_weight": 1.0}[column]
    if column == "advantage" and text.lower() in ("true", "false"):
        return 1.0 if text.lower() == "true" else 0.0
    must = {"score": f"a number of magnitude at most {MAX_VALUE:g} or empty (no score)",
            "advantage": f"a number of magnitude at most {MAX_VALUE:g}, true, false or empty (0)",
            "match_weight": f"a number from {1 / MAX_MATCH_WEIGHT:g} to {MAX_MATCH_WEIGHT:g} or empty (1)"}[column]
    try:
        value = float(text)
    except ValueError:
        raise MatchError(f"{where}: {column!r} must be {must}. Got {text!r}.") from None
    if (not abs(value) <= MAX_VALUE if column != "match_weight"
            else not 1.0 / MAX_MATCH_WEIGHT <= value <= MAX_MATCH_WEIGHT):
        raise MatchError(f"{where}: {column!r} must be {must}. Got {text!r}.")
    return value


def _csv_text(value: float | bool | None) -> str:
    """A value of the optional columns as the CSV long form writes it: empty for no score, true/false, numbers
    as in JSONL (an integral one without its ``.0``)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(plain_number(value))


def _records(matches: Matches) -> Iterator[dict[str, Any]]:
    for j, match in enumerate(matches):
        record = match.to_record()
        if matches.meta is not None and matches.meta[j] is not None:
            record["meta"] = matches.meta[j]
        yield record


def write_matches(matches: Matches | Iterable[Match], path: str | os.PathLike[str]) -> None:
    """Write a history as JSONL, the CSV long form or Parquet, chosen by the file name (``.gz`` compresses).

    Parquet (``.parquet``) holds the long form of :func:`podium.data.tables.to_arrow` and drops ``meta``; like the
    CSV long form it needs every match id to be distinct (a match without an id gets its position).
    """
    packed = matches if isinstance(matches, Matches) else Matches.from_matches(matches)
    path = Path(path)
    kind = _format_of(path)
    if kind == "parquet":
        from .arrow import _pyarrow
        from .tables import to_arrow

        _pyarrow()
        import pyarrow.parquet as pq

        pq.write_table(to_arrow(packed), path)
        return
    buffer = io.StringIO()
    if kind == "jsonl":
        for record in _records(packed):
            buffer.write(json.dumps(record, separators=(",", ":"), ensure_ascii=False))
            buffer.write("\n")
    else:
        # RFC 4180 line ends, so a field holding "\r" is quoted too.
        writer = csv.writer(buffer, lineterminator="\r\n")
        results = [c for c in RESULT_COLUMNS if getattr(packed, c) is not None]  # only the columns it has
        writer.writerow(_CSV_COLUMNS + tuple(results))
        written = [m_id if m_id is not None else str(j) for j, m_id in enumerate(packed.ids)]
        dup = next((j for j in range(1, len(written)) if written[j] == written[j - 1]), None)
        if dup is not None:
            raise MatchError(f"'id': matches {dup - 1} and {dup} are both {written[dup]!r}; in the CSV long form a match "
                             "is a run of rows sharing an id, so two matches in a row need two ids.")
        if "" in packed.players:
            raise MatchError("'teams': the CSV long form cannot hold an empty player id (it reads as a missing cell); use JSONL.")
        for j, match in enumerate(packed):
            match_id = written[j]
            t = format_time(float(packed.time[j]), packed.time_is_date) if not math.isnan(packed.time[j]) else None
            t0 = int(packed.match_start[j])
            for i, (team, rank, ws) in enumerate(zip(match.teams, match.ranks, match.team_weights())):
                tail = [_csv_text(_result_value(packed, c, j, t0 + i)) for c in results]
                for p, w in zip(team, ws):
                    writer.writerow([match_id, i, p, "" if rank is None else rank, w, "" if t is None else t, *tail])
    with _open_text(path, "w") as handle:
        handle.write(buffer.getvalue())


def _result_value(matches: Matches, column: str, match: int, team: int) -> float | bool:
    """The value of an optional column for a team (``score``, ``advantage``) or its match (the others)."""
    values = getattr(matches, column)
    if column in ("score", "advantage"):
        return float(values[team])
    return bool(values[match]) if column == "higher_is_better" else float(values[match])
