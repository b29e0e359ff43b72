"""What the league server stores, and how it is checked and converted; the store's operations are in store.py.

:class:`StoreError` (a refusal with its HTTP status and field); the validation of what clients send (match
records, player ids, lists of players and teams); and the conversion between the tables' rows and what the
library and the API use: a league's row as :class:`LeagueInfo`, a stored record as a :class:`podium.Match`,
the ``ratings`` rows as :class:`podium.PlayerState` (read and written in bulk: :mod:`podium.server.bulk`), a
stored match as the API shows it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from sqlalchemy import and_, func, select, update
from sqlalchemy.engine import Connection

from ..data.ids import check_player_id
from ..data.match import (MAX_MATCH_WEIGHT, MAX_TIME, MAX_VALUE, MIN_WEIGHT, RECORD_KEYS, Match, MatchError,
                          is_date_time)
from ..engine.league import PlayerState
from ..models import MODELS, Model
from .bulk import read_states
from .db import history, leagues, matches

__all__ = ["StoreError", "LeagueInfo", "get_league", "check_player", "check_players", "parse_record",
           "record_match", "request_schema", "PLAYER_SCHEMA", "TEAMS_SCHEMA", "MATCH_SCHEMA", "TimeKind"]

MATCH_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")
# Player ids are shown in pages and used in URLs: no markup, no path separators, no control characters.
_BAD_NAME = re.compile(r"[<>&\"`;/\\]")
MAX_NAME = 64
MAX_META_DEPTH = 16


class StoreError(Exception):
    """A request the server refuses: ``status`` is the HTTP status, ``field`` the offending field."""

    def __init__(self, status: int, field: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.field = field
        self.message = message


# -- leagues -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LeagueInfo:
    id: int
    name: str
    model_name: str
    params: dict[str, Any]
    moderated: bool
    model: Model = field(compare=False)
    smoothing: bool = False  # keeps smoothed ratings (smoothing.py); an admin may change it, unlike the rest

    def to_dict(self) -> dict[str, Any]:
        prior = self.model.prior
        return {"name": self.name, "model": self.model_name, "params": self.model.get_params(),
                "moderated": self.moderated, "smoothing": self.smoothing, "prior": {"mu": prior.mu, "sigma": prior.sigma}}


@lru_cache(maxsize=256)
def _cached_model(name: str, params_json: str) -> Model:
    return MODELS[name](**json.loads(params_json))


def get_league(conn: Connection, name: str) -> LeagueInfo:
    row = conn.execute(select(leagues).where(leagues.c.name == name)).first()
    if row is None:
        raise StoreError(404, "league", f"No league called {name!r:.80}.")
    params = json.loads(row.params)
    return LeagueInfo(row.id, row.name, row.model, params, bool(row.moderated), _cached_model(row.model, row.params),
                      bool(row.smoothing))


# -- match records -------------------------------------------------------------------------------------------
def check_player(name: Any, where: str) -> str:
    """A reported player id in its stored form (NFC), or a 422 naming ``where``.

    The library's rule first (:mod:`podium.data.ids`: printable characters, no space at either end, in NFC), then
    what pages and URLs need: at most :data:`MAX_NAME` characters, not only dots, no markup, quotes, ``;`` or
    slashes.
    """
    try:
        name = check_player_id(name, where)
    except MatchError as error:
        raise StoreError(422, where, str(error)) from None
    if len(name) > MAX_NAME:
        raise StoreError(422, where, f"'{where}' must be 1-{MAX_NAME} characters. Got {len(name)}: {name!r:.80}.")
    if name.strip(".") == "":
        raise StoreError(422, where, f"'{where}' may not be only dots (it would be a relative path). Got {name!r:.80}.")
    bad = _BAD_NAME.search(name)
    if bad:
        raise StoreError(422, where, f"'{where}' may not contain {bad.group()!r} (no markup, quotes, ';' or "
                                     f"slashes). Got {name!r:.80}.")
    return name


def parse_record(record: Any, max_players: int) -> tuple[Match, dict[str, Any]]:
    """Validate a reported match record; return the Match and its canonical record (what is stored).

    The library's :class:`Match` checks the structure (and names the field), what the result says beyond the
    order of finish included (``scores``, ``higher_is_better``, ``advantage``, ``weight``: stored only where
    they say something, so a record without them is stored as before); this adds what a public server needs:
    bounded sizes, safe player ids, a well-formed client id.
    """
    if not isinstance(record, dict):
        raise StoreError(422, "body", f"A match must be a JSON object. Got {record!r:.80}.")
    unknown = sorted(set(record) - RECORD_KEYS)
    if unknown:
        raise StoreError(422, unknown[0], f"Unknown field(s) {unknown}; a match has {sorted(RECORD_KEYS)}.")
    if "teams" not in record:
        raise StoreError(422, "teams", "The field 'teams' is missing.")
    teams = record["teams"]
    if isinstance(teams, list):
        size = sum(len(t) if isinstance(t, list) else 1 for t in teams)
        if size > max_players or len(teams) > max_players:
            raise StoreError(422, "teams", f"'teams': at most {max_players} players in one match (the server's "
                                           f"max_players). Got {size}.")
        record = dict(record, teams=[[check_player(player, f"teams[{i}][{j}]") for j, player in enumerate(team)]
                                     if isinstance(team, list) else team for i, team in enumerate(teams)])
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
        match = record_match(record, match_id)
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


class TimeKind:
    """A league's one reading of time (``leagues.time_kind``), checked against each match a write stores.

    A history orders its matches by time, and numbers cannot be ordered beside dates: the league's first timed
    match fixes whether its times are numbers (any unit) or dates (ISO-8601), and a later match that gives its
    time the other way is refused (422, ``time``) before anything is stored, so that every operation on the log
    (void, correct, audit, rebuild, export and import) can replay it.  Made under the league's write lock;
    :meth:`save` stores a kind the write fixed.
    """

    def __init__(self, conn: Connection, league_id: int) -> None:
        self.league_id = league_id
        self.stored: str | None = conn.execute(select(leagues.c.time_kind).where(leagues.c.id == league_id)).scalar_one()
        self.kind = self.stored

    def check(self, match: Match) -> None:
        """Refuse ``match`` (a :class:`StoreError`) if its time is of the other kind; else fix the kind if unset."""
        if match.time is None:
            return
        kind = "date" if is_date_time(match.time) else "number"
        if self.kind is None:
            self.kind = kind
        elif kind != self.kind:
            given = "dates (ISO-8601)" if self.kind == "date" else "numbers"
            raise StoreError(422, "time", f"'time': this league's matches give their times as {given}, and a "
                                          f"league reads time one way (its log must replay in order). Got "
                                          f"{match.time!r:.80}.")

    def save(self, conn: Connection) -> None:
        if self.kind != self.stored:
            conn.execute(update(leagues).where(leagues.c.id == self.league_id).values(time_kind=self.kind))
            self.stored = self.kind


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


def _check_teams(teams: Any, max_players: int, field_name: str = "teams") -> list[list[str]]:
    if not isinstance(teams, list) or len(teams) < 2:
        raise StoreError(422, field_name, f"'{field_name}' must be a list of at least two teams. Got {teams!r:.80}.")
    size = sum(len(t) if isinstance(t, list) else 1 for t in teams)
    if size > max_players:
        raise StoreError(422, field_name, f"'{field_name}': at most {max_players} players. Got {size}.")
    seen: set[str] = set()
    out = []
    for i, team in enumerate(teams):
        if not isinstance(team, list) or not team:
            raise StoreError(422, f"{field_name}[{i}]", f"'{field_name}[{i}]' must be a non-empty list of players. Got {team!r:.80}.")
        out.append([check_player(p, f"{field_name}[{i}][{j}]") for j, p in enumerate(team)])
        for p in out[-1]:
            if p in seen:
                raise StoreError(422, field_name, f"'{field_name}': player {p!r} appears more than once.")
            seen.add(p)
    return out


def check_players(players: Any, max_players: int, field_name: str = "players") -> list[str]:
    """A list of distinct, valid player ids (errors name ``players[i]``)."""
    if not isinstance(players, list):
        raise StoreError(422, field_name, f"'{field_name}' must be a list of player ids. Got {players!r:.80}.")
    if len(players) > max_players:
        raise StoreError(422, field_name, f"'{field_name}': at most {max_players} players. Got {len(players)}.")
    players = [check_player(p, f"{field_name}[{i}]") for i, p in enumerate(players)]
    if len(set(players)) != len(players):
        seen: set[str] = set()
        twice = next(p for p in players if p in seen or seen.add(p))  # type: ignore[func-returns-value]
        raise StoreError(422, field_name, f"'{field_name}': player {twice!r} appears more than once.")
    return players


# -- rows ----------------------------------------------------------------------------------------------------
def _states(conn: Connection, league_id: int, players: Iterable[str]) -> dict[str, PlayerState]:
    """The stored states of those of ``players`` the league knows (one statement: :mod:`podium.server.bulk`)."""
    return read_states(conn, league_id, list(players))


def _match_row(conn: Connection, league: LeagueInfo, match_id: str) -> Any:
    row = conn.execute(select(matches).where(and_(matches.c.league_id == league.id,
                                                  matches.c.match_id == match_id))).first()
    if row is None:
        raise StoreError(404, "match", f"No match {match_id!r:.80} in league {league.name!r}.")
    return row


def record_match(data: Mapping[str, Any], match_id: Any = None) -> Match:
    """The :class:`podium.Match` of a record (a client's or a stored one), with what it says beyond the order of
    finish (``scores``, ``higher_is_better``, ``advantage``, ``weight``): checked as :func:`podium.read_matches`
    checks them, defaults where a key is absent.  ``match_id`` defaults to the record's ``id``."""
    return Match(data["teams"], data.get("ranks"), data.get("weights"), data.get("time"),
                 data.get("id") if match_id is None else match_id, scores=data.get("scores"),
                 higher_is_better=data.get("higher_is_better", True), advantage=data.get("advantage"),
                 weight=data.get("weight", 1.0))


def _to_match(record: str) -> Match:
    return record_match(json.loads(record))


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
    """Each player's rating just before match ``seq`` (the prior if it was their first).

    The players are those of the recorded match ``seq``, found by its own history rows (not sent as a list:
    a round of 10,000 players would be a statement of 10,000 parameters, beyond SQLite's limit at 32,767).
    """
    own = select(history.c.player).where(and_(history.c.league_id == league.id, history.c.seq == seq))
    last = (select(history.c.player, func.max(history.c.seq).label("seq"))
            .where(and_(history.c.league_id == league.id, history.c.player.in_(own), history.c.seq < seq))
            .group_by(history.c.player).subquery())
    rows = conn.execute(select(history.c.player, history.c.mu, history.c.sigma).join(
        last, and_(history.c.player == last.c.player, history.c.seq == last.c.seq))
        .where(history.c.league_id == league.id))
    prior = league.model.prior
    out = {p: (prior.mu, prior.sigma) for p in players}
    out.update({r.player: (float(r.mu), float(r.sigma)) for r in rows})
    return out


def request_schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """An OpenAPI request body (the handlers parse JSON themselves, so that every message names its field)."""
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": {
        "type": "object", "additionalProperties": False, "properties": properties, "required": required}}}}}


# A player id's rule (podium.data.ids) is not a regular expression: the description states it.
PLAYER_SCHEMA = {"type": "string", "minLength": 1, "maxLength": MAX_NAME, "description": (
    f"A player id: 1 to {MAX_NAME} printable characters (Python's str.isprintable), without a space at either end or any of "
    "< > & \" ` ; / \\, not only dots, compared in Unicode's NFC.")}
TEAMS_SCHEMA = {"type": "array", "minItems": 2, "items": {"type": "array", "minItems": 1, "items": PLAYER_SCHEMA}}
# The record format's limits (podium.data.match) where a schema can state them; the rest (ranks as long as teams,
# one kind of time per league, ...) the server checks and answers 422 naming the field.
_VALUE = {"type": "number", "minimum": -MAX_VALUE, "maximum": MAX_VALUE}
MATCH_SCHEMA = request_schema({
    "id": {"type": "string", "pattern": f"^{MATCH_ID.pattern}$",
           "description": "Client-chosen id: retrying a report with the same id is idempotent."},
    "teams": TEAMS_SCHEMA,
    "ranks": {"type": "array", "items": {"type": ["integer", "null"], "minimum": 0},
              "description": "0 best; null = did not finish."},
    "weights": {"type": "array", "items": {"type": "array", "items": {
        "type": "number", "minimum": MIN_WEIGHT, "maximum": 1}}, "description": "Partial play, per player"},
    "time": {"type": ["string", "number", "null"], "exclusiveMinimum": -MAX_TIME, "exclusiveMaximum": MAX_TIME,
             "description": "A number (any unit) or an ISO-8601 date/time; a league takes one kind"},
    "meta": {"type": "object"},
    # What a result says beyond the order (docs/design.md); the record's checks are podium.Match's.
    "scores": {"type": "array", "items": {"type": ["number", "null"], "minimum": -MAX_VALUE, "maximum": MAX_VALUE},
               "description": "Each team's score; null: none"},
    "higher_is_better": {"type": "boolean", "default": True, "description": "False for race times"},
    "advantage": {"type": "array", "items": {"type": ["number", "boolean"], "minimum": -MAX_VALUE,
                                             "maximum": MAX_VALUE}, "description": "1 or true: home side"},
    "weight": {"type": "number", "minimum": MIN_WEIGHT, "maximum": MAX_MATCH_WEIGHT, "default": 1,
               "description": "The match's importance"},
}, ["teams"])
