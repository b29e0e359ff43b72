"""League export and import: a whole league as one JSONL file (gzip if its name ends in ``.gz``).

The file is podium's record format (``podium.data.io``), so ``podium rate export.jsonl`` rates exactly the
league's approved log.  Line 1 is a header::

    {"podium_league": {"format": 1, "name": ..., "model": ..., "params": {...}, "moderated": ...,
                       "smoothing": ..., "created": <seconds since 1970>, "exported": <ISO time>, "podium": <version>,
                       "matches": {"recorded": n, "pending": n, "rejected": n, "voided": n}}}

then one line per stored match: the recorded ones first, in log order (seq), then the pending, rejected
and voided ones in the order they were reported.  Each line is the stored record (with what it says beyond
the order of finish, where it says it: ``scores``, ``higher_is_better``, ``advantage``, ``weight``, written as
stored and read back through the report path's checks, so an import stores the same bytes and replays the
same ratings) with the server's bookkeeping under ``meta["podium"]``::

    {"status": "recorded" | "pending" | "rejected" | "voided", "seq": n (recorded and voided matches),
     "reported": <seconds since 1970>, "decided": <seconds> | null,
     "reporter": {"id": n, "label": ...} | null, "decider": {"id": n, "label": ...} | null}

Tokens are credentials and are never exported (their digests neither): the reporter and decider are named
by the token's id and label in the exporting database, for the record; an import leaves them empty, as
the importing database has its own tokens.  A match whose own ``meta`` already had a ``"podium"`` key
keeps it, nested: ``meta["podium"]["user"]``, put back where it was on import.

Import creates the league (refusing a name that exists), inserts every match with its status, seq and
times, and replays the ratings and history from the log (streamed: :func:`podium.server.replay._replay_from`),
all in one transaction: a malformed line (the message names the file, the line and the field) leaves the
database as it was.  Both directions stream: the memory needed is one chunk of matches and the players'
states, whatever the league's size.  Re-importing an export gives the same ratings, history, statuses, ids,
seqs and times as the exported league.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import os
import time as clock
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from sqlalchemy import and_, func, insert, select
from sqlalchemy.engine import Connection, Engine

from ..data.match import RECORD_KEYS, MatchError, parse_time
from ..models import MODELS
from . import replay, store
from .db import leagues, lock_league, matches, nan_to_null, read_transaction, tokens, write_transaction
from .records import TimeKind
from .settings import MAX_PLAYERS
from .smoothing import check_option
from .store import LEAGUE_NAME, REPLAY_CHUNK, StoreError

__all__ = ["FORMAT", "BackupError", "export_league", "import_league"]

FORMAT = 1
STATUSES = ("recorded", "pending", "rejected", "voided")
_PODIUM_KEYS = {"status", "seq", "reported", "decided", "reporter", "decider", "user"}
_IDS_PER_QUERY = 1000

Progress = Callable[[str, int, int], None]  # (stage, done, total): "write"/"rate" in matches, "read" in bytes


class BackupError(ValueError):
    """A league that cannot be exported or a file that cannot be imported; nothing was written."""


# -- export ---------------------------------------------------------------------------------------------------
def export_league(engine: Engine, name: str, path: str | os.PathLike[str], *, chunk: int = REPLAY_CHUNK,
                  progress: Progress | None = None) -> dict[str, int]:
    """Write league ``name`` to ``path`` (JSONL; gzip if the name ends in ``.gz``); return its match counts.

    One read transaction (a consistent snapshot, writers go on), the matches streamed ``chunk`` at a time.
    The file is written under a temporary name and renamed when complete, so a failed export leaves no
    partial file behind.  ``progress("write", done, total)`` follows the matches written.
    """
    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    with read_transaction(engine) as conn:
        league = store.get_league(conn, name)
        counts = {status: 0 for status in STATUSES}
        counts.update({status: int(n) for status, n in conn.execute(
            select(matches.c.status, func.count()).where(matches.c.league_id == league.id)
            .group_by(matches.c.status))})
        created = conn.execute(select(leagues.c.created).where(leagues.c.id == league.id)).scalar_one()
        labels = {int(r.id): r.label for r in conn.execute(select(tokens.c.id, tokens.c.label))}
        from .. import __version__

        header = {"podium_league": {
            "format": FORMAT, "name": league.name, "model": league.model_name, "params": league.model.get_params(),
            "moderated": league.moderated, "smoothing": league.smoothing, "created": float(created),
            "exported": datetime.now(timezone.utc).isoformat(timespec="seconds"), "podium": __version__,
            "matches": counts}}
        total = sum(counts.values())
        done = 0
        try:
            with _open_write(partial, compress=path.name.lower().endswith(".gz")) as out:
                out.write(json.dumps(header, sort_keys=True, ensure_ascii=False) + "\n")
                for rows in _stored(conn, league, chunk):
                    out.write("".join(_export_line(row, labels) for row in rows))
                    done += len(rows)
                    if progress is not None:
                        progress("write", done, total)
            os.replace(partial, path)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
    return counts


def _stored(conn: Connection, league: store.LeagueInfo, chunk: int) -> Iterator[Sequence[Any]]:
    """The league's matches, ``chunk`` rows at a time: the log in order, then the others as reported."""
    columns = (matches.c.match_id, matches.c.seq, matches.c.status, matches.c.record, matches.c.reported,
               matches.c.reporter, matches.c.decided, matches.c.decider)
    where = matches.c.league_id == league.id
    for statement in (select(*columns).where(and_(where, matches.c.status == "recorded")).order_by(matches.c.seq),
                      select(*columns).where(and_(where, matches.c.status != "recorded")).order_by(matches.c.id)):
        result = conn.execute(statement.execution_options(yield_per=chunk))
        try:
            yield from result.partitions()
        finally:
            result.close()


def _export_line(row: Any, labels: dict[int, str]) -> str:
    record = json.loads(row.record)
    meta = dict(record.get("meta") or {})
    podium: dict[str, Any] = {"status": row.status}
    if row.seq is not None:
        podium["seq"] = int(row.seq)
    podium["reported"] = float(row.reported)
    podium["decided"] = None if row.decided is None else float(row.decided)
    for key, token in (("reporter", row.reporter), ("decider", row.decider)):
        podium[key] = None if token is None else {"id": int(token), "label": labels.get(int(token), "")}
    if "podium" in meta:  # the match's own meta.podium, kept (and restored on import)
        podium["user"] = meta["podium"]
    meta["podium"] = podium
    record["meta"] = meta
    return json.dumps(record, sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n"


def _open_write(path: Path, compress: bool) -> IO[str]:
    if compress:
        return io.TextIOWrapper(gzip.open(path, "wb", compresslevel=6), encoding="utf-8", newline="\n")
    return open(path, "w", encoding="utf-8", newline="\n")


# -- import ---------------------------------------------------------------------------------------------------
def import_league(engine: Engine, path: str | os.PathLike[str], *, name: str | None = None, max_players: int = MAX_PLAYERS,
                  chunk: int = REPLAY_CHUNK, progress: Progress | None = None) -> tuple[str, dict[str, int]]:
    """Create a league from an export (see the module docstring); return its name and match counts by status.

    Parameters
    ----------
    engine : Engine
        The database to import into (migrated).
    path : path-like
        The export: JSONL, gzip or not (told by its first bytes).
    name : str, optional
        The league's name here (default: the exported league's).
    max_players : int
        Most players in one match (the server's ``Settings.max_players``; its default by default, so that
        an export of a league with rounds of 10,000 players imports).
    chunk : int
        Matches read, checked and inserted at a time (and replayed at a time afterwards).
    progress : callable, optional
        ``progress("read", bytes, file size)`` while inserting, then ``progress("rate", matches, log size)``.

    Raises
    ------
    BackupError
        For a malformed file (naming the file, the line and the field) or a league that exists already;
        nothing is written.
    """
    path = Path(path)
    size = path.stat().st_size
    with open(path, "rb") as raw, _open_read(raw) as text:  # (a GzipFile leaves its file open: both closed)
        lines = _lines(path.name, text)
        header, league_name = _read_header(path.name, next(lines, None), name)
        with write_transaction(engine) as conn:
            if conn.execute(select(leagues.c.id).where(leagues.c.name == league_name)).first() is not None:
                raise BackupError(f"{path.name}: a league called {league_name!r} already exists here; import it "
                                  "under another name (--name) or into another database.")
            model = header["model"]
            params = json.dumps(store.make_model(model, header["params"]).get_params(), sort_keys=True)
            conn.execute(insert(leagues).values(name=league_name, model=model, params=params,
                                                moderated=header["moderated"], created=header["created"],
                                                smoothing=header["smoothing"]))
            league = store.get_league(conn, league_name)
            lock_league(conn, league.id)
            counts = {status: 0 for status in STATUSES}
            state = _ImportState(TimeKind(conn, league.id))
            batch: list[tuple[int, dict[str, Any]]] = []
            for number, line in lines:
                if not line.strip():
                    continue
                row = _import_row(path.name, number, line, league, max_players, state)
                counts[row["status"]] += 1
                batch.append((number, row))
                if len(batch) >= chunk:
                    _insert(conn, path.name, league, batch)
                    batch = []
                    if progress is not None:
                        progress("read", raw.tell(), size)
            _insert(conn, path.name, league, batch)
            state.times.save(conn)
            if progress is not None:
                progress("read", size, size)
            expected = header.get("matches")
            if isinstance(expected, dict):
                for status in STATUSES:
                    if status in expected and expected[status] != counts[status]:
                        raise BackupError(f"{path.name}: the header ('podium_league.matches.{status}') says "
                                          f"{expected[status]!r} {status} matches; the file holds {counts[status]} "
                                          "(is it cut short?).")
            replayed = 0

            def rated(n: int) -> None:
                nonlocal replayed
                replayed += n
                if progress is not None:
                    progress("rate", replayed, counts["recorded"])

            replay._replay_from(conn, league, 0, chunk=chunk, progress=rated)
    return league_name, counts


class _ImportState:
    """What the checks of one import carry from line to line: the last seq of the log so far, the reading of time."""

    def __init__(self, times: TimeKind) -> None:
        self.last_seq: int | None = None
        self.last_line = 0
        self.times = times  # the league's one reading of time, fixed by its first timed match


def _open_read(raw: IO[bytes]) -> IO[str]:
    magic = raw.read(2)
    raw.seek(0)
    binary: IO[bytes] = gzip.GzipFile(fileobj=raw, mode="rb") if magic == b"\x1f\x8b" else raw  # type: ignore[assignment]
    return io.TextIOWrapper(binary, encoding="utf-8", newline=None)


def _lines(file: str, text: IO[str]) -> Iterator[tuple[int, str]]:
    """The file's numbered lines; damaged data is a :class:`BackupError` naming where it is."""
    number = 0
    try:
        for number, line in enumerate(text, start=1):
            yield number, line
    except UnicodeDecodeError:
        raise BackupError(f"{file}, line {number + 1}: not UTF-8 text; a league export is JSONL (or gzipped "
                          "JSONL).") from None
    except (OSError, EOFError) as error:  # gzip.BadGzipFile is an OSError; a cut-short stream an EOFError
        raise BackupError(f"{file}, after line {number}: the gzip data is damaged or cut short ({error}).") from None


def _where(file: str, number: int) -> str:
    return f"{file}, line {number}"


def _load(file: str, number: int, line: str) -> Any:
    try:
        return json.loads(line)
    except (ValueError, RecursionError) as error:
        raise BackupError(f"{_where(file, number)}: not valid JSON ({str(error)[:200]}).") from None


def _read_header(file: str, first: tuple[int, str] | None, name: str | None) -> tuple[dict[str, Any], str]:
    if first is None:
        raise BackupError(f"{file}: the file is empty; a league export starts with its header line.")
    number, line = first
    data = _load(file, number, line)
    if not isinstance(data, dict) or list(data) != ["podium_league"] or not isinstance(data["podium_league"], dict):
        raise BackupError(f"{file}, line 1: a league export starts with its header "
                          f"{{\"podium_league\": {{...}}}}. Got {line.strip()[:80]!r}.")
    header = data["podium_league"]
    where = f"{file}, line 1"
    if header.get("format") != FORMAT:
        raise BackupError(f"{where}: 'podium_league.format' must be {FORMAT} (the format this podium reads). "
                          f"Got {header.get('format')!r:.40}.")
    league_name = header.get("name") if name is None else name
    if not isinstance(league_name, str) or not LEAGUE_NAME.fullmatch(league_name):
        field = "podium_league.name" if name is None else "--name"
        raise BackupError(f"{where if name is None else file}: '{field}' must be 1-64 characters of a-z, 0-9, '-' "
                          f"and '_', starting with a letter or digit. Got {league_name!r:.80}.")
    model = header.get("model")
    if not isinstance(model, str) or model not in MODELS:
        raise BackupError(f"{where}: 'podium_league.model' must be one of {', '.join(MODELS)}. Got {model!r:.80}.")
    try:
        store.make_model(model, header.get("params", {}))
    except StoreError as error:
        raise BackupError(f"{where}: 'podium_league.{error.field}': {error.message}") from None
    moderated = header.get("moderated", False)
    if not isinstance(moderated, bool):
        raise BackupError(f"{where}: 'podium_league.moderated' must be true or false. Got {moderated!r:.80}.")
    smoothing = header.get("smoothing", False)  # (exports from before the option have none: off)
    try:
        check_option(smoothing, model, store.make_model(model, header.get("params", {})))
    except StoreError as error:
        raise BackupError(f"{where}: 'podium_league.smoothing': {error.message}") from None
    created = header.get("created", clock.time())
    if not _number(created):
        raise BackupError(f"{where}: 'podium_league.created' must be a time in seconds since 1970. Got {created!r:.80}.")
    return {**header, "params": header.get("params", {}), "moderated": moderated, "smoothing": smoothing,
            "created": float(created)}, league_name


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _import_row(file: str, number: int, line: str, league: store.LeagueInfo, max_players: int,
                state: _ImportState) -> dict[str, Any]:
    """One line of the export, checked, as a row of ``matches`` (refusals name the line and the field)."""
    where = _where(file, number)
    record = _load(file, number, line)
    if not isinstance(record, dict):
        raise BackupError(f"{where}: a match record must be a JSON object. Got {line.strip()[:80]!r}.")
    unknown = sorted(set(record) - RECORD_KEYS)
    if unknown:
        raise BackupError(f"{where}: unknown field(s) {unknown}; a record has {sorted(RECORD_KEYS)}.")
    meta = record.get("meta")
    if not isinstance(meta, dict) or not isinstance(meta.get("podium"), dict):
        raise BackupError(f"{where}: 'meta.podium' (the server's bookkeeping: status, seq, times) is missing or "
                          f"not an object; is this a league export? Got meta = {meta!r:.80}.")
    meta = dict(meta)
    podium = meta.pop("podium")
    unknown = sorted(set(podium) - _PODIUM_KEYS)
    if unknown:
        raise BackupError(f"{where}: unknown field(s) {['meta.podium.' + k for k in unknown]}; 'meta.podium' has "
                          f"{sorted(_PODIUM_KEYS)}.")
    status = podium.get("status")
    if status not in STATUSES:
        raise BackupError(f"{where}: 'meta.podium.status' must be one of {', '.join(STATUSES)}. Got {status!r:.80}.")
    seq = podium.get("seq")
    if status in ("pending", "rejected"):
        if seq is not None:
            raise BackupError(f"{where}: 'meta.podium.seq' must be null for a {status} match (it was never in the "
                              f"log). Got {seq!r:.80}.")
    elif (seq is not None or status == "recorded") and (isinstance(seq, bool) or not isinstance(seq, int) or seq < 0):
        # (a voided match keeps the seq it had, so that no later match takes it)
        raise BackupError(f"{where}: 'meta.podium.seq' (the match's place in the log) must be a whole number "
                          f">= 0 for a {status} match. Got {seq!r:.80}.")
    if status == "recorded":
        if state.last_seq is not None and seq <= state.last_seq:
            raise BackupError(f"{where}: the recorded matches must come in log order; 'meta.podium.seq' {seq} "
                              f"follows {state.last_seq} (line {state.last_line}).")
        state.last_seq, state.last_line = seq, number
    reported = podium.get("reported", clock.time())
    if not _number(reported):
        raise BackupError(f"{where}: 'meta.podium.reported' must be a time in seconds since 1970. Got {reported!r:.80}.")
    decided = podium.get("decided")
    if decided is not None and not _number(decided):
        raise BackupError(f"{where}: 'meta.podium.decided' must be a time in seconds since 1970 or null. "
                          f"Got {decided!r:.80}.")
    if "user" in podium:
        meta["podium"] = podium["user"]
    body = {k: v for k, v in record.items() if k != "meta"} | ({"meta": meta} if meta else {})
    if "id" not in body:
        raise BackupError(f"{where}: 'id' is missing; every exported match has its id.")
    try:
        match, canonical = store.parse_record(body, max_players)
        league.model._check_team_count(len(match.teams))
        match_time = nan_to_null(parse_time(match.time))
        if status in ("pending", "recorded"):
            state.times.check(match)
    except StoreError as error:
        raise BackupError(f"{where}: {error.message}") from None
    except MatchError as error:
        raise BackupError(f"{where}: {error}") from None
    return {"league_id": league.id, "match_id": match.id, "seq": seq, "status": status,
            "record": store._dump(canonical), "time": match_time, "reported": float(reported), "reporter": None,
            "decided": None if decided is None else float(decided), "decider": None}


def _insert(conn: Connection, file: str, league: store.LeagueInfo, batch: list[tuple[int, dict[str, Any]]]) -> None:
    """Insert a chunk of rows after checking that no id and no seq is taken (in the chunk or before it)."""
    if not batch:
        return
    for key, column, what in (("match_id", matches.c.match_id, "id"), ("seq", matches.c.seq, "meta.podium.seq")):
        lines: dict[Any, int] = {}
        for number, row in batch:
            value = row[key]
            if value is None:
                continue
            if value in lines:
                raise BackupError(f"{_where(file, number)}: '{what}' {value!r} is already used by line {lines[value]}.")
            lines[value] = number
        values = list(lines)
        for start in range(0, len(values), _IDS_PER_QUERY):
            taken = conn.execute(select(column).where(and_(
                matches.c.league_id == league.id, column.in_(values[start:start + _IDS_PER_QUERY])))).first()
            if taken is not None:
                raise BackupError(f"{_where(file, lines[taken[0]])}: '{what}' {taken[0]!r} is already used by an "
                                  "earlier line.")
    conn.execute(insert(matches), [row for _, row in batch])
