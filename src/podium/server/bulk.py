"""The per-player rows of a rated match read and written in bulk: a 10,000-player round is a few statements.

Written through the database driver (``exec_driver_sql``) instead of SQLAlchemy's executemany, which builds a
parameter dict per row in Python (about 14 µs a row: 0.3 s of a 10,000-player report went there):

- SQLite (in process): one ``executemany`` per table, the driver's C loop over tuples; the states are read
  with the names passed as one JSON array (``json_each``), so no statement has one parameter per player
  (SQLite takes at most 32,766).
- PostgreSQL (over the network): one statement per table, the columns sent as arrays and taken apart by
  ``unnest`` in the server, so a round is one round trip per table whatever its size (a statement may have at
  most 65,535 parameters; this one has a handful).  Each array goes as the text of an array literal
  (:func:`_pg_array`), which PostgreSQL's C parser reads: psycopg's adaptation of a Python list takes about
  25 ms per 10,000 values, 0.2 s of a 10,000-player report, against 2-4 ms for the text.  Floats go as their
  ``repr``, which reads back as the same double.

The statements name the tables of :mod:`podium.server.db` (a change of schema changes them too).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any
from sqlalchemy.engine import Connection

from ..engine.league import PlayerState
from .db import bytes_to_extra, null_to_nan

__all__ = ["read_states", "write_states", "insert_history"]

_COLUMNS = "player, mu, sigma, games, last_time, extra"
_SET = "mu = excluded.mu, sigma = excluded.sigma, games = excluded.games, last_time = excluded.last_time, extra = excluded.extra"

_SQLITE = {
    "read": f"SELECT {_COLUMNS} FROM ratings WHERE league_id = ? AND player IN (SELECT value FROM json_each(?))",
    "states": f"INSERT INTO ratings (league_id, {_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?) "
              f"ON CONFLICT (league_id, player) DO UPDATE SET {_SET}",
    "history": "INSERT INTO history (league_id, player, seq, mu, sigma) VALUES (?, ?, ?, ?, ?)",
}
_POSTGRESQL = {
    "read": f"SELECT {_COLUMNS} FROM ratings WHERE league_id = %s AND player = ANY(%s::text[])",
    "states": f"INSERT INTO ratings (league_id, {_COLUMNS}) "
              "SELECT %s, * FROM unnest(%s::text[], %s::float8[], %s::float8[], %s::int8[], %s::float8[], %s::bytea[]) "
              f"ON CONFLICT (league_id, player) DO UPDATE SET {_SET}",
    "history": "INSERT INTO history (league_id, player, seq, mu, sigma) "
               "SELECT %s, * FROM unnest(%s::text[], %s::int8[], %s::float8[], %s::float8[])",
}


def _pg_array(values: Sequence[Any]) -> str:
    """A PostgreSQL array literal of ``values`` (str, int, float, bytes or None), for a ``%s::TYPE[]`` cast.

    Strings are quoted with their backslashes and double quotes escaped; bytes are bytea's hex form; None is
    NULL; floats are their ``repr`` (the shortest text that reads back as the same double; NaN and the
    infinities as PostgreSQL spells them).
    """
    parts = []
    for value in values:
        if value is None:
            parts.append("NULL")
        elif isinstance(value, str):
            parts.append('"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"')
        elif isinstance(value, bytes):
            parts.append('"\\\\x' + value.hex() + '"')
        elif isinstance(value, float) and not math.isfinite(value):
            parts.append("NaN" if value != value else ("Infinity" if value > 0 else "-Infinity"))
        else:
            parts.append(repr(value))
    return "{" + ",".join(parts) + "}"


def read_states(conn: Connection, league_id: int, players: Sequence[str]) -> dict[str, PlayerState]:
    """The stored states of those of ``players`` the league knows (one statement, any number of players)."""
    if not players:
        return {}
    if conn.dialect.name == "postgresql":
        rows = conn.exec_driver_sql(_POSTGRESQL["read"], (league_id, _pg_array(players)))
    else:
        rows = conn.exec_driver_sql(_SQLITE["read"], (league_id, json.dumps(list(players))))
    return {player: PlayerState(float(mu), float(sigma), int(games), null_to_nan(last), bytes_to_extra(extra))
            for player, mu, sigma, games, last, extra in rows}


def write_states(conn: Connection, league_id: int, rows: Sequence[tuple[str, float, float, int, float | None, bytes | None]]
                 ) -> None:
    """Insert or update the ``ratings`` rows ``(player, mu, sigma, games, last_time, extra)`` (NaN as None)."""
    if not rows:
        return
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql(_POSTGRESQL["states"], (league_id, *(_pg_array(column) for column in zip(*rows))))
    else:
        conn.exec_driver_sql(_SQLITE["states"], [(league_id, *row) for row in rows])


def insert_history(conn: Connection, league_id: int, players: Sequence[str], seqs: Sequence[int],
                   mu: Sequence[float], sigma: Sequence[float]) -> None:
    """Insert ``history`` rows, one per player and match: the four sequences are its columns."""
    if not players:
        return
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql(_POSTGRESQL["history"], (league_id, *(_pg_array(column) for column in (players, seqs, mu, sigma))))
    else:
        conn.exec_driver_sql(_SQLITE["history"], list(zip([league_id] * len(players), players, seqs, mu, sigma)))
