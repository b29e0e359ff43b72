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

The validation of requests and the conversion of rows are in :mod:`podium.server.records`, the streamed
replays of the log (void, correct, rebuild) in :mod:`podium.server.replay`, predictions and balanced teams in
:mod:`podium.server.teams`; their public names are here too.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import time as clock
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, bindparam, func, insert, or_, select, update
from sqlalchemy.engine import Connection, Engine

from ..data.ids import stored_form
from ..data.match import Match, MatchError, parse_time
from ..data.matches import Matches
from ..engine.league import League
from ..models import MODELS, Model
from .bulk import insert_history, read_states, write_states
from .db import (extra_to_bytes, history, leagues, lock_league, matches, nan_to_null, ratings, read_transaction, tokens,
                 write_transaction)
from .records import (LeagueInfo, StoreError, TimeKind, _cached_model, _dump, _iso, _match_out, _match_row, _out,
                      _same, _to_match, check_players, get_league, parse_record)
from .replay import Difference, REPLAY_CHUNK, _replay_from, log_chunks, rebuild
from .smoothing import check_option, mark_stale
from .teams import balance, predict

__all__ = [
    "ROLES", "StoreError", "LeagueInfo", "TokenInfo", "create_token", "list_tokens", "revoke_token", "find_token", "make_model", "create_league",
    "get_league", "list_leagues", "parse_record", "Report", "prepare_report", "report_match", "record_reports", "approve_match", "reject_match", "void_match",
    "correct_match", "get_match", "pending_matches", "leaderboard", "player_page", "predict", "balance",
    "rebuild", "Difference", "log_chunks", "REPLAY_CHUNK", "check_players",
]

ROLES = ("reporter", "moderator", "admin")  # each role may do everything the ones before it may
LEAGUE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


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


def create_league(engine: Engine, name: Any, model: Any, params: Any, moderated: Any, smoothing: Any = False
                  ) -> LeagueInfo:
    """Create a league; every refusal (422, 409 for a name taken) names its field and stores nothing.

    ``smoothing`` keeps nightly smoothed ratings beside the live ones (:mod:`podium.server.smoothing`): only
    for a model the smoother takes (TrueSkill).
    """
    if not isinstance(name, str) or not LEAGUE_NAME.fullmatch(name):
        raise StoreError(422, "name", "'name' must be 1-64 characters of a-z, 0-9, '-' and '_', starting with a "
                                      f"letter or digit. Got {name!r:.80}.")
    if not isinstance(moderated, bool):
        raise StoreError(422, "moderated", f"'moderated' must be true or false. Got {moderated!r:.80}.")
    if not isinstance(smoothing, bool):
        raise StoreError(422, "smoothing", f"'smoothing' must be true or false. Got {smoothing!r:.80}.")
    instance = make_model(model, params)
    check_option(smoothing, model, instance)
    with write_transaction(engine) as conn:
        if conn.execute(select(leagues.c.id).where(leagues.c.name == name)).first() is not None:
            raise StoreError(409, "name", f"'name': a league called {name!r} already exists.")
        # The full parameter set, defaults included, so a league keeps its model if a default ever changes.
        full = json.dumps(instance.get_params(), sort_keys=True)
        conn.execute(insert(leagues).values(name=name, model=model, params=full,
                                            moderated=moderated, created=clock.time(), smoothing=smoothing))
        return get_league(conn, name)
    raise AssertionError("unreachable")  # pragma: no cover


def list_leagues(conn: Connection) -> list[dict[str, Any]]:
    counts: dict[int, int] = dict(conn.execute(select(matches.c.league_id, func.count()).where(matches.c.status == "recorded")
                               .group_by(matches.c.league_id)).all())
    players: dict[int, int] = dict(conn.execute(select(ratings.c.league_id, func.count()).group_by(ratings.c.league_id)).all())
    out = []
    for row in conn.execute(select(leagues).order_by(leagues.c.name)):
        out.append({"name": row.name, "model": row.model, "moderated": bool(row.moderated),
                    "matches": int(counts.get(row.id, 0)), "players": int(players.get(row.id, 0))})
    return out


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
        times = TimeKind(conn, league.id)
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
            try:
                times.check(match)
            except StoreError as error:
                results[i] = error
                continue
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
            times.save(conn)
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


def _apply(conn: Connection, league: LeagueInfo, log: Sequence[Match], last: int | None
           ) -> tuple[int, list[list[dict[str, Any]]]]:
    """Append ``log`` to the league's approved log, rating each match in order, and store the ratings.

    ``last`` is the seq at the end of the log (None if it is empty), read under the lock.  Returns
    the seq of its first match and, for each match, each player's rating before and after it.  The caller
    writes the matches' own rows with those seqs, in the same transaction.

    The matches are rated in one :meth:`League.record_slots` (each in order, as a replay of the log rates
    them) and their players' rows read and written in bulk (:mod:`podium.server.bulk`): a statement per
    table, not per player, so that a round of 10,000 players is a handful of statements.
    """
    first = 0 if last is None else int(last) + 1
    everyone = list(dict.fromkeys(p for match in log for p in match.players))
    before = read_states(conn, league.id, everyone)
    population = League(league.model, keep_history=False)
    population.set_states(before)
    slot_match, slot_player, mu, sigma = population.record_slots(Matches.from_matches(log))
    prior = league.model.prior
    current = {p: (s.mu, s.sigma) for p, s in before.items()}
    matches_of_slots = slot_match.tolist()
    mus, sigmas = mu.tolist(), sigma.tolist()
    changes: list[list[dict[str, Any]]] = [[] for _ in log]
    for k, p, a, b in zip(matches_of_slots, slot_player, mus, sigmas):
        was = current.get(p, (prior.mu, prior.sigma))
        current[p] = (a, b)
        changes[k].append({"player": p, "before": {"mu": was[0], "sigma": was[1]}, "after": {"mu": a, "sigma": b}})
    final = population.states(everyone)
    write_states(conn, league.id, [(p, s.mu, s.sigma, s.games, nan_to_null(s.last_time), extra_to_bytes(s.extra))
                                   for p, s in final.items()])
    insert_history(conn, league.id, slot_player, [first + k for k in matches_of_slots], mus, sigmas)
    return first, changes


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
    at a time: :func:`podium.server.replay._replay_from`)."""
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
    ``chunk`` matches at a time: :func:`podium.server.replay._replay_from`)."""
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
        times = TimeKind(conn, league.id)
        times.check(match)
        times.save(conn)
        conn.execute(update(matches).where(matches.c.id == row.id)
                     .values(record=_dump(canonical), time=nan_to_null(parse_time(match.time))))
        if row.status == "recorded":
            _replay_from(conn, league, int(row.seq), _to_match(row.record).players, chunk=chunk)
            mark_stale(conn, league.id)  # the log changed, its length and last seq did not
        return _match_out(conn, league, conn.execute(select(matches).where(matches.c.id == row.id)).one())
    raise AssertionError("unreachable")  # pragma: no cover


# -- reads ---------------------------------------------------------------------------------------------------
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
    player = stored_form(player)  # ids are stored in NFC: a decomposed "é" in the URL finds its player
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
