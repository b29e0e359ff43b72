"""What the league server does, as functions over a database: no HTTP here.

Every write runs in :func:`podium.server.db.write_transaction` and holds the league's write lock (taken
at the start, or by :func:`podium.server.db.lock_league` after reads that need none), so the checks it
makes (does this id exist? is this match pending?) still hold when it commits.  Reports are written in
batches (:func:`record_reports`: the server's group commit), each match rated in order.  A recorded match
and the rating update it causes are written in the same transaction: after a crash either both are there
or neither is.

Ratings are computed by the library: the players' saved states (:class:`podium.PlayerState`) go into a
:class:`podium.League`, the match is recorded, the new states come back.  That is the same compiled kernel,
on the same numbers, as an offline replay of the log, so the stored ratings equal the replay exactly.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import secrets
import time as clock
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
from sqlalchemy import and_, bindparam, delete, func, insert, or_, select, update
from sqlalchemy.dialects import postgresql as postgresql_dialect
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.engine import Connection, Engine

from ..league import League, PlayerState
from ..match import Match, MatchError, Matches, _Packer, parse_time
from ..models import MODELS, Model
from ..rating import Rating
from .db import (bytes_to_extra, extra_to_bytes, history, leagues, lock_league, matches, nan_to_null, null_to_nan,
                 ratings, read_transaction, tokens, write_transaction)

__all__ = [
    "ROLES", "StoreError", "LeagueInfo", "TokenInfo", "create_token", "list_tokens", "revoke_token", "find_token", "make_model", "create_league",
    "get_league", "list_leagues", "parse_record", "Report", "prepare_report", "report_match", "record_reports", "approve_match", "reject_match", "void_match",
    "correct_match", "get_match", "pending_matches", "leaderboard", "player_page", "predict", "balance",
    "rebuild", "Difference", "log_chunks", "REPLAY_CHUNK",
]

EXHAUSTIVE_SPLITS = 20_000
ROLES = ("reporter", "moderator", "admin")  # each role may do everything the ones before it may
LEAGUE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
MATCH_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")
# Player ids are shown in pages and used in URLs: no markup, no path separators, no control characters.
_BAD_NAME = re.compile(r"[\x00-\x1f\x7f<>&\"`;/\\]")
MAX_NAME = 64
MAX_META_DEPTH = 16
REPLAY_CHUNK = 2_000  # matches per chunk when the log is replayed (Settings.replay_chunk)


class StoreError(Exception):
    """A request the server refuses: ``status`` is the HTTP status, ``field`` the offending field."""

    def __init__(self, status: int, field: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.field = field
        self.message = message


# -- tokens --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TokenInfo:
    id: int
    role: str
    label: str

    def allows(self, role: str) -> bool:
        return ROLES.index(self.role) >= ROLES.index(role)


def _digest(token: str) -> str:
    # Tokens are 256 random bits, so one SHA-256 is enough: nothing to brute-force, no salt needed.
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def create_token(engine: Engine, role: str, label: str = "") -> str:
    """Store a new token's digest with ``role`` and return the token (shown once, never stored)."""
    if role not in ROLES:
        raise StoreError(422, "role", f"'role' must be one of {', '.join(ROLES)}. Got {role!r}.")
    token = "pod_" + secrets.token_urlsafe(32)
    with engine.begin() as conn:
        conn.execute(insert(tokens).values(digest=_digest(token), role=role, label=label[:200],
                                           created=clock.time(), revoked=False))
    return token


def list_tokens(conn: Connection) -> list[dict[str, Any]]:
    """Every token's id, role, label, creation time and whether it is revoked (never the token)."""
    rows = conn.execute(select(tokens.c.id, tokens.c.role, tokens.c.label, tokens.c.created, tokens.c.revoked)
                        .order_by(tokens.c.id))
    return [{"id": r.id, "role": r.role, "label": r.label, "created": _iso(r.created), "revoked": bool(r.revoked)}
            for r in rows]


def revoke_token(engine: Engine, token_id: int) -> bool:
    """Revoke token ``token_id`` (it stops working at once); False if there is no such token."""
    with engine.begin() as conn:
        return conn.execute(update(tokens).where(tokens.c.id == token_id).values(revoked=True)).rowcount == 1


def find_token(conn: Connection, token: str) -> TokenInfo | None:
    """The token's role, or None for an unknown or revoked token."""
    row = conn.execute(select(tokens.c.id, tokens.c.role, tokens.c.label, tokens.c.revoked)
                       .where(tokens.c.digest == _digest(token))).first()
    if row is None or row.revoked:
        return None
    return TokenInfo(row.id, row.role, row.label)


# -- leagues -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LeagueInfo:
    id: int
    name: str
    model_name: str
    params: dict[str, Any]
    moderated: bool
    model: Model = field(compare=False)

    def to_dict(self) -> dict[str, Any]:
        prior = self.model.prior
        return {"name": self.name, "model": self.model_name, "params": self.model.get_params(),
                "moderated": self.moderated, "prior": {"mu": prior.mu, "sigma": prior.sigma}}


@lru_cache(maxsize=256)
def _cached_model(name: str, params_json: str) -> Model:
    return MODELS[name](**json.loads(params_json))


def make_model(name: Any, params: Any) -> Model:
    """The model a league asks for, validated by the model's own constructor (messages name the field)."""
    if not isinstance(name, str) or name not in MODELS:
        raise StoreError(422, "model", f"'model' must be one of {', '.join(MODELS)}. Got {name!r:.80}.")
    if not isinstance(params, dict):
        raise StoreError(422, "params", f"'params' must be an object of the model's parameters. Got {params!r:.80}.")
    try:
        MODELS[name](**params)  # the model's own validation first, so that its message names the parameter
        return _cached_model(name, json.dumps(params, sort_keys=True, allow_nan=False))
    except TypeError as error:  # an unknown keyword, or a type json cannot hold
        raise StoreError(422, "params", f"'params': {error}") from None
    except ValueError as error:
        text = str(error)
        found = re.search(r"'(\w+)' parameter", text)
        where = f"params.{found.group(1)}" if found else "params"
        raise StoreError(422, where, f"'{where}': {text}") from None


def create_league(engine: Engine, name: Any, model: Any, params: Any, moderated: Any) -> LeagueInfo:
    if not isinstance(name, str) or not LEAGUE_NAME.fullmatch(name):
        raise StoreError(422, "name", "'name' must be 1-64 characters of a-z, 0-9, '-' and '_', starting with a "
                                      f"letter or digit. Got {name!r:.80}.")
    if not isinstance(moderated, bool):
        raise StoreError(422, "moderated", f"'moderated' must be true or false. Got {moderated!r:.80}.")
    instance = make_model(model, params)
    with write_transaction(engine) as conn:
        if conn.execute(select(leagues.c.id).where(leagues.c.name == name)).first() is not None:
            raise StoreError(409, "name", f"'name': a league called {name!r} already exists.")
        # The full parameter set, defaults included, so a league keeps its model if a default ever changes.
        full = json.dumps(instance.get_params(), sort_keys=True)
        conn.execute(insert(leagues).values(name=name, model=model, params=full,
                                            moderated=moderated, created=clock.time()))
        return get_league(conn, name)
    raise AssertionError("unreachable")  # pragma: no cover


def get_league(conn: Connection, name: str) -> LeagueInfo:
    row = conn.execute(select(leagues).where(leagues.c.name == name)).first()
    if row is None:
        raise StoreError(404, "league", f"No league called {name!r:.80}.")
    params = json.loads(row.params)
    return LeagueInfo(row.id, row.name, row.model, params, bool(row.moderated), _cached_model(row.model, row.params))


def list_leagues(conn: Connection) -> list[dict[str, Any]]:
    counts: dict[int, int] = dict(conn.execute(select(matches.c.league_id, func.count()).where(matches.c.status == "recorded")
                               .group_by(matches.c.league_id)).all())
    players: dict[int, int] = dict(conn.execute(select(ratings.c.league_id, func.count()).group_by(ratings.c.league_id)).all())
    out = []
    for row in conn.execute(select(leagues).order_by(leagues.c.name)):
        out.append({"name": row.name, "model": row.model, "moderated": bool(row.moderated),
                    "matches": int(counts.get(row.id, 0)), "players": int(players.get(row.id, 0))})
    return out


# -- match records -------------------------------------------------------------------------------------------
def check_player(name: Any, where: str) -> str:
    if not isinstance(name, str):
        raise StoreError(422, where, f"'{where}' must be a player id (a string). Got {name!r:.80}.")
    if not name or len(name) > MAX_NAME or name != name.strip():
        raise StoreError(422, where, f"'{where}' must be 1-{MAX_NAME} characters without leading or trailing "
                                     f"spaces. Got {name!r:.80}.")
    if name.strip(".") == "":
        raise StoreError(422, where, f"'{where}' may not be only dots (it would be a relative path). Got {name!r:.80}.")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise StoreError(422, where, f"'{where}' is not valid Unicode text (a lone surrogate). Got {name!r:.80}.") from None
    bad = _BAD_NAME.search(name)
    if bad:
        raise StoreError(422, where, f"'{where}' may not contain {bad.group()!r} (no markup, quotes, ';', "
                                     f"slashes or control characters). Got {name!r:.80}.")
    return name


def parse_record(record: Any, max_players: int) -> tuple[Match, dict[str, Any]]:
    """Validate a reported match record; return the Match and its canonical record (what is stored).

    The library's :class:`Match` checks the structure (and names the field); this adds what a public
    server needs: bounded sizes, safe player ids, a well-formed client id.
    """
    if not isinstance(record, dict):
        raise StoreError(422, "body", f"A match must be a JSON object. Got {record!r:.80}.")
    allowed = {"id", "time", "teams", "ranks", "weights", "meta"}
    unknown = sorted(set(record) - allowed)
    if unknown:
        raise StoreError(422, unknown[0], f"Unknown field(s) {unknown}; a match has {sorted(allowed)}.")
    if "teams" not in record:
        raise StoreError(422, "teams", "The field 'teams' is missing.")
    teams = record["teams"]
    if isinstance(teams, list):
        size = sum(len(t) if isinstance(t, list) else 1 for t in teams)
        if size > max_players or len(teams) > max_players:
            raise StoreError(422, "teams", f"'teams': at most {max_players} players in one match. Got {size}.")
        for i, team in enumerate(teams):
            if isinstance(team, list):
                for j, player in enumerate(team):
                    check_player(player, f"teams[{i}][{j}]")
    match_id = record.get("id")
    if match_id is not None and (not isinstance(match_id, str) or not MATCH_ID.fullmatch(match_id)):
        raise StoreError(422, "id", "'id' must be 1-64 characters of A-Z, a-z, 0-9, '.', '_', ':' and '-', "
                                    f"starting with a letter or digit. Got {match_id!r:.80}.")
    meta = record.get("meta")
    if meta is not None and not isinstance(meta, dict):
        raise StoreError(422, "meta", f"'meta' must be an object. Got {meta!r:.80}.")
    if meta is not None and _depth(meta) > MAX_META_DEPTH:
        raise StoreError(422, "meta", f"'meta' may nest at most {MAX_META_DEPTH} levels deep.")
    try:
        match = Match(teams, record.get("ranks"), record.get("weights"), record.get("time"), match_id)
    except MatchError as error:
        text = str(error)
        found = re.match(r"'([\w\[\]]+)'", text)
        raise StoreError(422, found.group(1) if found else "body", text) from None
    canonical = match.to_record()
    if meta:
        try:
            json.dumps(meta, allow_nan=False)
        except ValueError:
            raise StoreError(422, "meta", "'meta' may not hold NaN or infinite numbers.") from None
        canonical["meta"] = meta
    return match, canonical


def _depth(value: Any) -> int:
    """How deeply lists and objects nest in ``value`` (iteratively: no recursion limit to hit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, level)
            if level <= MAX_META_DEPTH:
                stack.extend((child, level + 1) for child in item)
    return deepest


def _dump(record: Mapping[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _same(stored: str, record: Mapping[str, Any]) -> bool:
    """Is ``record`` the stored one (ignoring the id the server filled in)?"""
    return json.loads(stored) | {"id": None} == dict(record) | {"id": None}


# -- writes ---------------------------------------------------------------------------------------------------
# The report path's statements, built once: building a SQLAlchemy statement on every call cost more CPU than
# running it.  (Parameters are bound at execution.)
_LAST = (select(func.max(matches.c.seq)).where(matches.c.league_id == bindparam("league"))).scalar_subquery()
# The stored matches with the given ids, and the match at the end of the log (whose seq is the largest of all
# the rows): one query instead of two, inside the lock.
_FIND_MATCHES = select(matches).where(and_(matches.c.league_id == bindparam("league"), or_(
    matches.c.match_id.in_(bindparam("ids", expanding=True)), matches.c.seq == _LAST)))
_FIND_TOKENS = (select(tokens.c.id, tokens.c.role, tokens.c.label, tokens.c.revoked, tokens.c.digest)
                .where(tokens.c.digest.in_(bindparam("digests", expanding=True))))
_LAST_SEQ = select(func.max(matches.c.seq)).where(matches.c.league_id == bindparam("league"))
_STATES = (select(ratings.c.player, ratings.c.mu, ratings.c.sigma, ratings.c.games, ratings.c.last_time,
                  ratings.c.extra)
           .where(and_(ratings.c.league_id == bindparam("league"),
                       ratings.c.player.in_(bindparam("players", expanding=True)))))


def _upsert_states(dialect: Any) -> Any:
    """``INSERT ... ON CONFLICT (league_id, player) DO UPDATE`` of ``ratings`` (SQLite and PostgreSQL say
    it alike; SQLAlchemy builds it per dialect): one statement for the new and the known players."""
    statement = dialect.insert(ratings)
    return statement.on_conflict_do_update(
        index_elements=[ratings.c.league_id, ratings.c.player],
        set_={c: statement.excluded[c] for c in ("mu", "sigma", "games", "last_time", "extra")})


_UPSERT_STATES = {"sqlite": _upsert_states(sqlite_dialect), "postgresql": _upsert_states(postgresql_dialect)}
_RECORD_PENDING = (update(matches).where(matches.c.id == bindparam("pk"))
                   .values(seq=bindparam("seq"), status="recorded", decided=bindparam("now"),
                           decider=bindparam("decider")))



@dataclass(frozen=True)
class Report:
    """A parsed report waiting to be written (:func:`prepare_report`).

    ``token`` is the reporter's verified :class:`TokenInfo`, or the bearer token as sent, which
    :func:`record_reports` then checks inside its transaction (saving the server a query per report).
    """

    match: Match
    canonical: dict[str, Any]
    token: TokenInfo | str


def prepare_report(league: LeagueInfo, record: Any, token: TokenInfo | str, max_players: int) -> Report:
    """Validate a reported match for ``league`` (no database needed); raise :class:`StoreError` naming the field."""
    match, canonical = parse_record(record, max_players)
    try:
        league.model._check_team_count(len(match.teams))
    except MatchError as error:
        raise StoreError(422, "teams", str(error)) from None
    return Report(match, canonical, token)


def report_match(engine: Engine, league: LeagueInfo, record: Any, token: TokenInfo | str, max_players: int
                 ) -> tuple[int, dict[str, Any]]:
    """Store a reported match: ``(201, match)`` recorded, ``(202, match)`` pending, ``(200, match)`` a retry."""
    result = record_reports(engine, league, [prepare_report(league, record, token, max_players)])[0]
    if isinstance(result, StoreError):
        raise result
    return result


def record_reports(engine: Engine, league: LeagueInfo, reports: Sequence[Report]
                   ) -> list[tuple[int, dict[str, Any]] | StoreError]:
    """Write ``reports`` to ``league`` in one transaction, in order; each gets its answer or its refusal.

    The answer is ``(201, match)`` for a recorded match, ``(202, match)`` for one left pending in a
    moderated league, ``(200, match)`` for a retry of one already stored (same id and content, earlier
    or earlier in ``reports``); the refusals are 401/403 for a token that is unknown, revoked or not a
    reporter's, 409 for an id already used by a different match.  A refused report writes nothing and
    does not affect the others.  The answers are built from what is written (reading it back would cost
    queries).  Batching concurrent reports into one transaction ("group commit") is what lets several
    server processes share one league's write lock at a few hundred reports per second: the lock, the
    reads and the commit are paid once per batch, and each match is still rated in order, by the same
    kernel as a replay.
    """
    results: list[tuple[int, dict[str, Any]] | StoreError | None] = [None] * len(reports)
    retried: dict[int, Any] = {}  # report -> the stored row it repeats (answered after the commit)
    with write_transaction(engine) as conn:
        # Other processes wait while this one holds the league's lock: what needs no lock is read first,
        # and the answers to retries of stored matches (two more queries each) are read after the commit.
        raw = {r.token for r in reports if isinstance(r.token, str)}
        found: dict[str, TokenInfo] = {}
        if raw:
            by_digest = {_digest(t): t for t in raw}
            for hit in conn.execute(_FIND_TOKENS, {"digests": list(by_digest)}):
                if not hit.revoked:
                    found[by_digest[hit.digest]] = TokenInfo(hit.id, hit.role, hit.label)
        lock_league(conn, league.id)
        ids = [r.match.id for r in reports if r.match.id is not None]
        found_rows = conn.execute(_FIND_MATCHES, {"league": league.id, "ids": ids}).all()
        wanted = set(ids)
        stored = {m.match_id: m for m in found_rows if m.match_id in wanted}
        last = max((m.seq for m in found_rows if m.seq is not None), default=None)
        new: dict[str, int] = {}  # match id -> index in ``rows`` (reported earlier in this batch)
        rows: list[dict[str, Any]] = []
        owners: list[int] = []  # the report each row answers
        now = clock.time()
        for i, report in enumerate(reports):
            token = report.token if isinstance(report.token, TokenInfo) else found.get(report.token)
            if token is None:
                results[i] = StoreError(401, "authorization", "The bearer token is unknown or revoked.")
                continue
            if not token.allows("reporter"):
                results[i] = StoreError(403, "authorization", f"This needs the reporter role; the token has {token.role}.")
                continue
            match, canonical = report.match, report.canonical
            if match.id is not None and (match.id in stored or match.id in new):
                same = (_same(stored[match.id].record, canonical) if match.id in stored
                        else _same(rows[new[match.id]]["record"], canonical))
                if not same:
                    results[i] = StoreError(409, "id", f"'id': a different match with id {match.id!r} was already "
                                                       "reported to this league.")
                elif match.id in stored:
                    retried[i] = stored[match.id]
                continue  # a retry within the batch: answered below, from the first copy's row
            match_id = match.id or uuid.uuid4().hex[:20]
            new[match_id] = len(rows)
            rows.append({"league_id": league.id, "match_id": match_id, "seq": None, "status": "pending",
                         "record": _dump(canonical | {"id": match_id}), "time": nan_to_null(parse_time(match.time)),
                         "reported": now, "reporter": token.id, "decided": None, "decider": None})
            owners.append(i)
        changes: list[list[dict[str, Any]] | None] = [None] * len(rows)
        if rows and not league.moderated:
            first, changes = _apply(conn, league, [reports[i].match for i in owners], last)  # type: ignore[assignment]
            for k, row in enumerate(rows):
                row |= {"seq": first + k, "status": "recorded", "decided": now, "decider": row["reporter"]}
        if rows:
            conn.execute(insert(matches), rows)
        outs = [_out(league, row, json.loads(row["record"]), change) for row, change in zip(rows, changes)]
        for k, i in enumerate(owners):
            results[i] = (201 if changes[k] is not None else 202, outs[k])
        for i, report in enumerate(reports):  # retries of a report earlier in this batch
            if results[i] is None and i not in retried:
                results[i] = (200, outs[new[report.match.id]])  # type: ignore[index]
    if retried:
        # The batch is committed: whatever happens now must not fail it (a caller retrying it would
        # write its reports without an id twice).  A retry whose answer cannot be read is asked to retry.
        try:
            with read_transaction(engine) as conn:
                for i, row in retried.items():
                    results[i] = (200, _match_out(conn, league, row))
        except Exception:
            for i in retried:
                if results[i] is None:
                    results[i] = StoreError(503, "database", "The match is stored, but reading it back failed; "
                                                             "retry to get it.")
    assert all(r is not None for r in results)
    return results  # type: ignore[return-value]


def _states(conn: Connection, league_id: int, players: Iterable[str]) -> dict[str, PlayerState]:
    rows = conn.execute(_STATES, {"league": league_id, "players": list(players)})
    return {r.player: PlayerState(float(r.mu), float(r.sigma), int(r.games), null_to_nan(r.last_time),
                                  bytes_to_extra(r.extra)) for r in rows}


def _apply(conn: Connection, league: LeagueInfo, log: Sequence[Match], last: int | None
           ) -> tuple[int, list[list[dict[str, Any]]]]:
    """Append ``log`` to the league's approved log, rating each match in order, and store the ratings.

    ``last`` is the seq at the end of the log (None if it is empty), read under the lock.  Returns
    the seq of its first match and, for each match, each player's rating before and after it.  The caller
    writes the matches' own rows with those seqs, in the same transaction.
    """
    first = 0 if last is None else int(last) + 1
    everyone = list(dict.fromkeys(p for match in log for p in match.players))
    before = _states(conn, league.id, everyone)
    population = League(league.model, keep_history=False)
    population.set_states(before)
    prior = league.model.prior
    current = {p: (s.mu, s.sigma) for p, s in before.items()}
    history_rows: list[dict[str, Any]] = []
    changes = []
    for k, match in enumerate(log):
        players = match.players
        population.record(match)
        after = population.states(players)
        change = []
        for p in players:
            was = current.get(p, (prior.mu, prior.sigma))
            now = after[p]
            current[p] = (now.mu, now.sigma)
            change.append({"player": p, "before": {"mu": was[0], "sigma": was[1]},
                           "after": {"mu": now.mu, "sigma": now.sigma}})
            history_rows.append({"league_id": league.id, "player": p, "seq": first + k, "mu": now.mu,
                                 "sigma": now.sigma})
        changes.append(change)
    final = population.states(everyone)
    conn.execute(_UPSERT_STATES[conn.dialect.name], [
        {"league_id": league.id, "player": p, "mu": s.mu, "sigma": s.sigma, "games": s.games,
         "last_time": nan_to_null(s.last_time), "extra": extra_to_bytes(s.extra)} for p, s in final.items()])
    conn.execute(insert(history), history_rows)
    return first, changes


def _match_row(conn: Connection, league: LeagueInfo, match_id: str) -> Any:
    row = conn.execute(select(matches).where(and_(matches.c.league_id == league.id,
                                                  matches.c.match_id == match_id))).first()
    if row is None:
        raise StoreError(404, "match", f"No match {match_id!r:.80} in league {league.name!r}.")
    return row


def approve_match(engine: Engine, league: LeagueInfo, match_id: str, token: TokenInfo) -> tuple[int, dict[str, Any]]:
    """Record a pending match (200); approving it again is a no-op that returns it (200)."""
    with write_transaction(engine, league.id) as conn:
        row = _match_row(conn, league, match_id)
        if row.status == "recorded":
            return 200, _match_out(conn, league, row)
        if row.status != "pending":
            raise StoreError(409, "status", f"Match {match_id!r} is {row.status}; only pending matches can be approved.")
        now = clock.time()
        seq, changes = _apply(conn, league, [_to_match(row.record)],
                              conn.execute(_LAST_SEQ, {"league": league.id}).scalar())
        conn.execute(_RECORD_PENDING, {"pk": row.id, "seq": seq, "now": now, "decider": token.id})
        done = row._asdict() | {"seq": seq, "status": "recorded", "decided": now, "decider": token.id}
        return 200, _out(league, done, json.loads(row.record), changes[0])
    raise AssertionError("unreachable")  # pragma: no cover


def reject_match(engine: Engine, league: LeagueInfo, match_id: str, token: TokenInfo) -> dict[str, Any]:
    """Refuse a pending match: it stays stored (its id stays taken) but never counts."""
    return _decide(engine, league, match_id, token, "pending", "rejected")


def void_match(engine: Engine, league: LeagueInfo, match_id: str, token: TokenInfo, *, chunk: int = REPLAY_CHUNK
               ) -> dict[str, Any]:
    """Take a recorded match out of the log and replay the league from its place (streamed, ``chunk`` matches
    at a time: :func:`_replay_from`)."""
    return _decide(engine, league, match_id, token, "recorded", "voided", chunk)


def _decide(engine: Engine, league: LeagueInfo, match_id: str, token: TokenInfo, was: str, becomes: str,
            chunk: int = REPLAY_CHUNK) -> dict[str, Any]:
    with write_transaction(engine, league.id) as conn:
        row = _match_row(conn, league, match_id)
        if row.status != was:
            raise StoreError(409, "status", f"Match {match_id!r} is {row.status}; only {was} matches can be {becomes}.")
        conn.execute(update(matches).where(matches.c.id == row.id)
                     .values(status=becomes, decided=clock.time(), decider=token.id))
        if was == "recorded":
            _replay_from(conn, league, int(row.seq), _to_match(row.record).players, chunk=chunk)
        return _match_out(conn, league, conn.execute(select(matches).where(matches.c.id == row.id)).one())
    raise AssertionError("unreachable")  # pragma: no cover


def correct_match(engine: Engine, league: LeagueInfo, match_id: str, record: Any, token: TokenInfo,
                  max_players: int, *, chunk: int = REPLAY_CHUNK) -> dict[str, Any]:
    """Replace a match's result (keeping its place in the log) and replay the league from there (streamed,
    ``chunk`` matches at a time: :func:`_replay_from`)."""
    if isinstance(record, dict) and record.get("id") not in (None, match_id):
        raise StoreError(422, "id", f"'id' must be the corrected match's id {match_id!r} or left out. Got {record['id']!r:.80}.")
    match, canonical = parse_record(record, max_players)
    try:
        league.model._check_team_count(len(match.teams))
    except MatchError as error:
        raise StoreError(422, "teams", str(error)) from None
    canonical["id"] = match_id
    with write_transaction(engine, league.id) as conn:
        row = _match_row(conn, league, match_id)
        if row.status not in ("recorded", "pending"):
            raise StoreError(409, "status", f"Match {match_id!r} is {row.status}; it cannot be corrected.")
        conn.execute(update(matches).where(matches.c.id == row.id)
                     .values(record=_dump(canonical), time=nan_to_null(parse_time(match.time))))
        if row.status == "recorded":
            _replay_from(conn, league, int(row.seq), _to_match(row.record).players, chunk=chunk)
        return _match_out(conn, league, conn.execute(select(matches).where(matches.c.id == row.id)).one())
    raise AssertionError("unreachable")  # pragma: no cover


def _to_match(record: str) -> Match:
    data = json.loads(record)
    return Match(data["teams"], data.get("ranks"), data.get("weights"), data.get("time"), data.get("id"))


_NAMES_PER_STATEMENT = 1000  # players per IN list or upsert (SQLite takes 32,766 parameters, PostgreSQL 65,535)


def log_chunks(conn: Connection, league: LeagueInfo, chunk: int = REPLAY_CHUNK, *, since: int = -1
               ) -> Iterator[tuple[list[int], Matches]]:
    """The approved log in order (from the first match after seq ``since``), ``chunk`` matches at a time: each
    chunk's seqs and its matches (columnar, with the stored match ids).

    The rows come through a server-side cursor (PostgreSQL; SQLite's cursor steps through the table as rows
    are fetched), so one chunk of them is in memory at a time, however long the log.  The connection may
    run other statements between chunks (the replay writes history as it goes).
    """
    statement = (select(matches.c.seq, matches.c.record, matches.c.match_id)
                 .where(and_(matches.c.league_id == league.id, matches.c.status == "recorded",
                             matches.c.seq > since))
                 .order_by(matches.c.seq).execution_options(yield_per=chunk))
    result = conn.execute(statement)
    try:
        for rows in result.partitions():
            packer = _Packer()
            for row in rows:
                data = json.loads(row.record)
                packer.add(data["teams"], data.get("ranks"), data.get("weights"), data.get("time"), row.match_id,
                           None)
            yield [int(row.seq) for row in rows], packer.build()
    finally:
        result.close()


def _history_rows(league: LeagueInfo, seqs: Sequence[int], first: int, slots: tuple[Any, list[str], Any, Any]
                  ) -> list[dict[str, Any]]:
    """History rows of a chunk replayed by :meth:`League.record_slots` (``first``: the league's match count
    before it; ``seqs``: the chunk's seqs)."""
    slot_match, slot_player, mu, sigma = slots
    return [{"league_id": league.id, "player": p, "seq": seqs[m - first], "mu": a, "sigma": b}
            for m, p, a, b in zip(slot_match.tolist(), slot_player, mu.tolist(), sigma.tolist())]


def _replay_from(conn: Connection, league: LeagueInfo, seq: int, also: Iterable[str] = (), *,
                 chunk: int = REPLAY_CHUNK, progress: Callable[[int], None] | None = None) -> int:
    """Recompute the ratings after a change at ``seq`` (a void, a correction; an import replays from 0).

    The log is streamed and replayed a chunk at a time: the matches before ``seq`` only move the players'
    states (their history is unchanged), and from ``seq`` on each chunk's history rows are written and
    dropped before the next chunk is read; the states of the players of the replayed part (and of ``also``,
    the players of the match as it was, who may have left the league) are written at the end.  Memory: the
    players' states and one chunk, whatever the length of the log.  The same compiled kernel replays the same
    matches in the same order as a replay of the whole log in one go, so the results are the same to the bit.

    Returns the number of matches in the log; ``progress`` is told each chunk's size.
    """
    population = League(league.model, keep_history=False)
    affected = set(also)
    done = seq - 1  # the history up to this seq is right (or rewritten already)

    def clear(upto: int | None) -> None:
        # The old history is deleted a range of seqs at a time, just before the range is rewritten: one
        # DELETE of the whole tail would make SQLite collect every row id to delete in memory first.
        where = [history.c.league_id == league.id, history.c.seq > done]
        conn.execute(delete(history).where(and_(*where, *([] if upto is None else [history.c.seq <= upto]))))

    for seqs, packed in log_chunks(conn, league, chunk):
        split = 0 if seqs[0] >= seq else int(np.searchsorted(np.asarray(seqs, dtype=np.int64), seq))
        if split:
            population.record_many(packed[:split] if split < len(seqs) else packed)
        if split < len(seqs):
            clear(seqs[-1])
            done = seqs[-1]
            first = population.n_matches
            slots = population.record_slots(packed[split:] if split else packed)
            conn.execute(insert(history), _history_rows(league, seqs[split:], first, slots))
            affected.update(slots[1])
        if progress is not None:
            progress(len(seqs))
    clear(None)  # beyond the log's end (the match voided was its last)
    _write_states(conn, league, population, affected)
    return population.n_matches


def _write_states(conn: Connection, league: LeagueInfo, population: League, players: Iterable[str]) -> None:
    """Store the states of ``players`` from ``population``; those it does not know leave the table."""
    names = sorted(players)
    upsert = _UPSERT_STATES[conn.dialect.name]
    for start in range(0, len(names), _NAMES_PER_STATEMENT):
        part = names[start:start + _NAMES_PER_STATEMENT]
        states = population.states(part)
        gone = [p for p in part if p not in states]
        if gone:
            conn.execute(delete(ratings).where(and_(ratings.c.league_id == league.id, ratings.c.player.in_(gone))))
        if states:
            conn.execute(upsert, [{"league_id": league.id, "player": p, "mu": s.mu, "sigma": s.sigma,
                                   "games": s.games, "last_time": nan_to_null(s.last_time),
                                   "extra": extra_to_bytes(s.extra)} for p, s in states.items()])


@dataclass(frozen=True)
class Difference:
    """One stored value that the replay of the log does not reproduce."""

    table: str
    player: str
    seq: int | None
    column: str
    stored: float | None
    replayed: float | None


def rebuild(engine: Engine, league_name: str, *, write: bool = True, tolerance: float = 1e-9,
            chunk: int = REPLAY_CHUNK, progress: Callable[[int], None] | None = None
            ) -> tuple[int, list[Difference]]:
    """Replay the league's approved log and compare every stored rating and history row with it.

    Returns ``(matches replayed, differences)`` (the ratings' first, by player; then the history's, by player
    and seq); with ``write`` the replayed values replace the stored ones (in the same locked transaction).
    Values within ``tolerance`` (absolute, or relative for large magnitudes) count as equal.  The log is
    streamed a chunk at a time (see :func:`_replay_from`), each chunk's history compared with the stored rows
    of its range of seqs, so the memory needed is the players' states, one chunk and the differences found.
    ``progress`` is told each chunk's size.
    """
    with engine.connect() as probe:
        league = get_league(probe, league_name)
    with write_transaction(engine, league.id) as conn:
        def differs(a: float | None, b: float | None) -> bool:
            if a is None or b is None:
                return a is not b
            return not abs(a - b) <= tolerance * max(1.0, abs(b))

        def compare(want: dict[tuple[str, int], tuple[float, float]], *where: Any) -> list[Difference]:
            """The history differences within ``where`` (a range of seqs); rewrite the range if asked."""
            condition = and_(history.c.league_id == league.id, *where)
            have = {(r.player, int(r.seq)): (float(r.mu), float(r.sigma))
                    for r in conn.execute(select(history.c.player, history.c.seq, history.c.mu, history.c.sigma)
                                          .where(condition))}
            found = []
            for key in set(want) | set(have):
                a2, b2 = have.get(key), want.get(key)
                for i, column in enumerate(("mu", "sigma")):
                    a = None if a2 is None else a2[i]
                    b = None if b2 is None else b2[i]
                    if differs(a, b):
                        found.append(Difference("history", key[0], key[1], column, a, b))
            if write and found:
                conn.execute(delete(history).where(condition))
                if want:
                    conn.execute(insert(history), [{"league_id": league.id, "player": p, "seq": q, "mu": a,
                                                    "sigma": b} for (p, q), (a, b) in want.items()])
            return found

        population = League(league.model, keep_history=False)
        history_diffs: list[Difference] = []
        last: int | None = None  # the last seq of the chunks compared so far
        for seqs, packed in log_chunks(conn, league, chunk):
            first = population.n_matches
            slot_match, slot_player, mu, sigma = population.record_slots(packed)
            want = {(p, seqs[m - first]): (a, b)
                    for m, p, a, b in zip(slot_match.tolist(), slot_player, mu.tolist(), sigma.tolist())}
            history_diffs += compare(want, history.c.seq <= seqs[-1], *([] if last is None else [history.c.seq > last]))
            last = seqs[-1]
            if progress is not None:
                progress(len(seqs))
        # history rows beyond the log (or in an empty log): all stray
        history_diffs += compare({}, *([] if last is None else [history.c.seq > last]))

        diffs: list[Difference] = []
        stored = {r.player: r for r in conn.execute(select(ratings).where(ratings.c.league_id == league.id))}
        replayed = population.states()
        for player in sorted(set(stored) | set(replayed)):
            row, state = stored.get(player), replayed.get(player)
            for column in ("mu", "sigma", "games", "last_time"):
                a = None if row is None else getattr(row, column)
                b = None if state is None else nan_to_null(getattr(state, column))
                if differs(None if a is None else float(a), None if b is None else float(b)):
                    diffs.append(Difference("ratings", player, None, column, a, b))
            kept = () if row is None else bytes_to_extra(row.extra)
            wanted = () if state is None else state.extra
            for i in range(max(len(kept), len(wanted))):  # a model's extra state; NaN (an open period's) = NULL
                a = nan_to_null(kept[i]) if i < len(kept) else None
                b = nan_to_null(wanted[i]) if i < len(wanted) else None
                if differs(a, b):
                    diffs.append(Difference("ratings", player, None, f"extra[{i}]", a, b))
        history_diffs.sort(key=lambda d: (d.player, d.seq, d.column != "mu"))
        diffs += history_diffs
        if write and diffs:
            _write_states(conn, league, population, set(stored) | set(replayed))
        return population.n_matches, diffs
    raise AssertionError("unreachable")  # pragma: no cover


# -- reads ---------------------------------------------------------------------------------------------------
def _iso(t: float | None) -> str | None:
    if t is None:
        return None
    from datetime import datetime, timezone

    return datetime.fromtimestamp(t, tz=timezone.utc).isoformat(timespec="seconds")


def _match_out(conn: Connection, league: LeagueInfo, row: Any) -> dict[str, Any]:
    """A stored match as the API shows it, with each player's rating before and after it if recorded."""
    record = json.loads(row.record)
    changes = None
    if row.status == "recorded":
        players = [p for team in record["teams"] for p in team]
        after = {r.player: (float(r.mu), float(r.sigma)) for r in conn.execute(
            select(history.c.player, history.c.mu, history.c.sigma)
            .where(and_(history.c.league_id == league.id, history.c.seq == row.seq)))}
        prev = _before(conn, league, players, int(row.seq))
        changes = [{"player": p, "before": {"mu": prev[p][0], "sigma": prev[p][1]},
                    "after": {"mu": after[p][0], "sigma": after[p][1]}} for p in players if p in after]
    return _out(league, row._asdict(), record, changes)


def _out(league: LeagueInfo, row: Mapping[str, Any], record: dict[str, Any],
         changes: list[dict[str, Any]] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"id": row["match_id"], "league": league.name, "status": row["status"], "seq": row["seq"],
                           "record": record, "reported": _iso(row["reported"]), "decided": _iso(row["decided"])}
    if changes is not None:
        out["ratings"] = changes
    return out


def _before(conn: Connection, league: LeagueInfo, players: Sequence[str], seq: int) -> dict[str, tuple[float, float]]:
    """Each player's rating just before match ``seq`` (the prior if it was their first)."""
    last = (select(history.c.player, func.max(history.c.seq).label("seq"))
            .where(and_(history.c.league_id == league.id, history.c.player.in_(list(players)), history.c.seq < seq))
            .group_by(history.c.player).subquery())
    rows = conn.execute(select(history.c.player, history.c.mu, history.c.sigma).join(
        last, and_(history.c.player == last.c.player, history.c.seq == last.c.seq))
        .where(history.c.league_id == league.id))
    prior = league.model.prior
    out = {p: (prior.mu, prior.sigma) for p in players}
    out.update({r.player: (float(r.mu), float(r.sigma)) for r in rows})
    return out


def get_match(conn: Connection, league: LeagueInfo, match_id: str) -> dict[str, Any]:
    return _match_out(conn, league, _match_row(conn, league, match_id))


def pending_matches(conn: Connection, league: LeagueInfo, limit: int, offset: int) -> dict[str, Any]:
    where = and_(matches.c.league_id == league.id, matches.c.status == "pending")
    total = conn.execute(select(func.count()).select_from(matches).where(where)).scalar_one()
    rows = conn.execute(select(matches).where(where).order_by(matches.c.id).limit(limit).offset(offset)).all()
    return {"league": league.name, "total": int(total), "offset": offset, "limit": limit,
            "matches": [_match_out(conn, league, r) for r in rows]}


def recent_matches(conn: Connection, league: LeagueInfo, limit: int) -> list[dict[str, Any]]:
    rows = conn.execute(select(matches).where(and_(matches.c.league_id == league.id, matches.c.status == "recorded"))
                        .order_by(matches.c.seq.desc()).limit(limit)).all()
    return [{"id": r.match_id, "seq": r.seq, "record": json.loads(r.record), "decided": _iso(r.decided)} for r in rows]


def leaderboard(conn: Connection, league: LeagueInfo, *, k: float, by: str, limit: int, offset: int,
                min_games: int) -> dict[str, Any]:
    """Players by ``mu - k sigma`` (``by="conservative"``) or by ``mu``, best first, ties by name."""
    kk = 0.0 if by == "mu" else k
    score = (ratings.c.mu - kk * ratings.c.sigma).label("score")
    where = and_(ratings.c.league_id == league.id, ratings.c.games >= min_games)
    total = conn.execute(select(func.count()).select_from(ratings).where(where)).scalar_one()
    rows = conn.execute(select(ratings.c.player, ratings.c.mu, ratings.c.sigma, ratings.c.games, score).where(where)
                        .order_by(score.desc(), ratings.c.player).limit(limit).offset(offset)).all()
    n_matches = conn.execute(select(func.count()).select_from(matches).where(
        and_(matches.c.league_id == league.id, matches.c.status == "recorded"))).scalar_one()
    return {"league": league.name, "by": by, "k": kk, "total": int(total), "offset": offset, "limit": limit,
            "matches": int(n_matches),
            "rows": [{"rank": offset + i + 1, "player": r.player, "mu": float(r.mu), "sigma": float(r.sigma),
                      "score": float(r.mu) - kk * float(r.sigma), "games": int(r.games)} for i, r in enumerate(rows)]}


def player_page(conn: Connection, league: LeagueInfo, player: str, *, k: float, recent: int = 10,
                points: int = 2000) -> dict[str, Any]:
    row = conn.execute(select(ratings).where(and_(ratings.c.league_id == league.id, ratings.c.player == player))).first()
    if row is None:
        raise StoreError(404, "player", f"No player {player!r:.80} in league {league.name!r}.")
    score = float(row.mu) - k * float(row.sigma)
    better = conn.execute(select(func.count()).select_from(ratings).where(and_(
        ratings.c.league_id == league.id,
        (ratings.c.mu - k * ratings.c.sigma > score)
        | and_(ratings.c.mu - k * ratings.c.sigma == score, ratings.c.player < player)))).scalar_one()
    hist = conn.execute(select(history.c.seq, history.c.mu, history.c.sigma, matches.c.match_id, matches.c.time)
                        .join(matches, and_(matches.c.league_id == history.c.league_id, matches.c.seq == history.c.seq))
                        .where(and_(history.c.league_id == league.id, history.c.player == player))
                        .order_by(history.c.seq.desc()).limit(points)).all()[::-1]
    recent_rows = hist[max(0, len(hist) - recent):][::-1] if recent else []
    records = {r.match_id: json.loads(r.record) for r in conn.execute(
        select(matches.c.match_id, matches.c.record).where(and_(
            matches.c.league_id == league.id, matches.c.match_id.in_([h.match_id for h in recent_rows]))))}
    return {
        "league": league.name, "player": player, "rank": int(better) + 1, "k": k,
        "rating": {"mu": float(row.mu), "sigma": float(row.sigma), "conservative": score},
        "games": int(row.games),
        "history": [{"seq": h.seq, "match": h.match_id, "time": h.time, "mu": float(h.mu), "sigma": float(h.sigma)}
                    for h in hist],
        "recent": [{"id": h.match_id, "seq": h.seq, "record": records[h.match_id],
                    "after": {"mu": float(h.mu), "sigma": float(h.sigma)}} for h in recent_rows],
    }


def _check_teams(teams: Any, max_players: int, field_name: str = "teams") -> list[list[str]]:
    if not isinstance(teams, list) or len(teams) < 2:
        raise StoreError(422, field_name, f"'{field_name}' must be a list of at least two teams. Got {teams!r:.80}.")
    size = sum(len(t) if isinstance(t, list) else 1 for t in teams)
    if size > max_players:
        raise StoreError(422, field_name, f"'{field_name}': at most {max_players} players. Got {size}.")
    seen: set[str] = set()
    for i, team in enumerate(teams):
        if not isinstance(team, list) or not team:
            raise StoreError(422, f"{field_name}[{i}]", f"'{field_name}[{i}]' must be a non-empty list of players. Got {team!r:.80}.")
        for j, p in enumerate(team):
            check_player(p, f"{field_name}[{i}][{j}]")
            if p in seen:
                raise StoreError(422, field_name, f"'{field_name}': player {p!r} appears more than once.")
            seen.add(p)
    return teams


def _ratings_of(conn: Connection, league: LeagueInfo, players: Iterable[str]) -> dict[str, Rating]:
    return {p: Rating(s.mu, s.sigma) for p, s in _states(conn, league.id, players).items()}


def check_players(players: Any, max_players: int, field_name: str = "players") -> list[str]:
    """A list of distinct, valid player ids (errors name ``players[i]``)."""
    if not isinstance(players, list):
        raise StoreError(422, field_name, f"'{field_name}' must be a list of player ids. Got {players!r:.80}.")
    if len(players) > max_players:
        raise StoreError(422, field_name, f"'{field_name}': at most {max_players} players. Got {len(players)}.")
    for i, p in enumerate(players):
        check_player(p, f"{field_name}[{i}]")
    if len(set(players)) != len(players):
        twice = next(p for p in players if players.count(p) > 1)
        raise StoreError(422, field_name, f"'{field_name}': player {twice!r} appears more than once.")
    return players


def predict(conn: Connection, league: LeagueInfo, teams: Any, max_players: int) -> dict[str, Any]:
    """Win and place probabilities and match quality for ``teams`` (unknown players at the prior)."""
    teams = _check_teams(teams, max_players)
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
    check_players(players, min(max_players, 200))
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
