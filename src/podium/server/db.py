"""The league server's tables (SQLAlchemy Core), its engines and its write transactions.

Schema (created by the Alembic migrations in ``migrations/``, which are the only thing that changes it)::

    leagues   id, name (unique), model, params (JSON), moderated, created, smoothing (keeps nightly smoothed
              ratings), smoothing_started (when a server process last claimed its smoothing: see smoothing.py)
    tokens    id, digest (SHA-256 of the token, unique), role, label, created, revoked
    matches   id, league_id, match_id (client's or generated; unique per league), seq (position in the
              approved log; NULL unless recorded), status (recorded | pending | rejected | voided),
              record (the podium JSONL record, canonical JSON), time (float; NaN as NULL), reported,
              reporter, decided, decider
    ratings   league_id, player, mu, sigma, games, last_time, extra: the state after the whole approved log
              (extra: what the model keeps besides, :attr:`podium.PlayerState.extra`, as little-endian
              float64 bytes, exact with its NaNs; NULL for models that keep nothing more)
    history   league_id, player, seq, mu, sigma: each player's rating after each recorded match
    smoothed  league_id, player, mu, sigma, games, connected, computed, log_count, log_last_seq: a smoothing
              league's ratings smoothed by TrueSkill Through Time over the whole approved log, with when they
              were computed and the log they were computed from (its length and last seq; log_count -1 once a
              correction made them stale).  Replaced whole by :func:`podium.server.smoothing.smooth_league`.

The approved log (``status = 'recorded'`` ordered by ``seq``) is the source of truth; ``ratings`` and
``history`` are derived from it and ``podium league rebuild`` recomputes them; so is ``smoothed``, which
``podium league smooth`` recomputes.

Writes to a league are serialized: on SQLite by ``BEGIN IMMEDIATE`` (one writer per database), on
PostgreSQL by ``pg_advisory_xact_lock`` on the league's id, held to commit.

On SQLite, podium's writers first queue on an exclusive ``flock`` of ``<database>-podium.lock`` (and,
within a process, on a thread lock): SQLite's own busy handler polls with sleeps of up to 100 ms, which
under load left the CPU idle while writers slept and gave p99 latencies over a second; a kernel lock
wakes the next writer the moment the previous one commits.  Like PostgreSQL's advisory lock, the queue
has no time limit: a writer waits for the writers ahead of it however long they take (a ``rebuild`` of
a large league, say).  ``BEGIN IMMEDIATE`` still guards against writers that do not take the file lock
(another program on the same database); those are waited for up to ``busy_timeout``, then the request
gets 503 "busy; retry".
"""

from __future__ import annotations

import math
import os
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import (Boolean, Column, Float, ForeignKey, Index, Integer, LargeBinary, MetaData, String, Table, Text,
                        UniqueConstraint, create_engine, event, false, text)
from sqlalchemy.engine import Connection, Engine

__all__ = ["metadata", "leagues", "tokens", "matches", "ratings", "history", "smoothed", "make_engine", "migrate",
           "write_transaction", "read_transaction", "lock_league", "nan_to_null", "null_to_nan"]

metadata = MetaData()

leagues = Table(
    "leagues", metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(64), nullable=False, unique=True),
    Column("model", String(32), nullable=False),
    Column("params", Text, nullable=False),
    Column("moderated", Boolean, nullable=False),
    Column("created", Float, nullable=False),
    Column("smoothing", Boolean, nullable=False, server_default=false()),
    Column("smoothing_started", Float, nullable=True),
    # How the league's matches give their times, fixed by the first that has one: "number" or "date" (ISO-8601).
    # One reading per league, so that its log always replays (a history cannot order numbers beside dates).
    Column("time_kind", String(8), nullable=True),
)

tokens = Table(
    "tokens", metadata,
    Column("id", Integer, primary_key=True),
    Column("digest", String(64), nullable=False, unique=True),
    Column("role", String(16), nullable=False),
    Column("label", String(200), nullable=False),
    Column("created", Float, nullable=False),
    Column("revoked", Boolean, nullable=False),
)

matches = Table(
    "matches", metadata,
    Column("id", Integer, primary_key=True),
    Column("league_id", Integer, ForeignKey("leagues.id"), nullable=False),
    Column("match_id", String(64), nullable=False),
    Column("seq", Integer, nullable=True),
    Column("status", String(16), nullable=False),
    Column("record", Text, nullable=False),
    Column("time", Float(precision=53), nullable=True),
    Column("reported", Float, nullable=False),
    Column("reporter", Integer, ForeignKey("tokens.id"), nullable=True),
    Column("decided", Float, nullable=True),
    Column("decider", Integer, ForeignKey("tokens.id"), nullable=True),
    UniqueConstraint("league_id", "match_id", name="uq_matches_league_match"),
    UniqueConstraint("league_id", "seq", name="uq_matches_league_seq"),
    Index("ix_matches_league_status", "league_id", "status", "id"),
)

ratings = Table(
    "ratings", metadata,
    Column("league_id", Integer, ForeignKey("leagues.id"), primary_key=True),
    Column("player", String(64), primary_key=True),
    Column("mu", Float(precision=53), nullable=False),
    Column("sigma", Float(precision=53), nullable=False),
    Column("games", Integer, nullable=False),
    Column("last_time", Float(precision=53), nullable=True),
    Column("extra", LargeBinary, nullable=True),
)

history = Table(
    "history", metadata,
    Column("league_id", Integer, ForeignKey("leagues.id"), primary_key=True),
    Column("player", String(64), primary_key=True),
    Column("seq", Integer, primary_key=True),
    Column("mu", Float(precision=53), nullable=False),
    Column("sigma", Float(precision=53), nullable=False),
    Index("ix_history_league_seq", "league_id", "seq"),
)

smoothed = Table(
    "smoothed", metadata,
    Column("league_id", Integer, ForeignKey("leagues.id"), primary_key=True),
    Column("player", String(64), primary_key=True),
    Column("mu", Float(precision=53), nullable=False),
    Column("sigma", Float(precision=53), nullable=False),
    Column("games", Integer, nullable=False),
    Column("connected", Boolean, nullable=False),
    Column("computed", Float, nullable=False),
    Column("log_count", Integer, nullable=False),
    Column("log_last_seq", Integer, nullable=False),
)


def nan_to_null(value: float) -> float | None:
    return None if value != value else value


def null_to_nan(value: float | None) -> float:
    return math.nan if value is None else float(value)


def extra_to_bytes(extra: tuple[float, ...]) -> bytes | None:
    """:attr:`podium.PlayerState.extra` as stored: little-endian float64 bytes (exact, NaN included), NULL if empty."""
    return struct.pack(f"<{len(extra)}d", *extra) if extra else None


def bytes_to_extra(value: bytes | None) -> tuple[float, ...]:
    """The inverse of :func:`extra_to_bytes`."""
    return struct.unpack(f"<{len(value) // 8}d", value) if value else ()


def make_engine(url: str, busy_timeout: float = 30.0) -> Engine:
    """An engine for ``url``; SQLite gets WAL, a busy timeout and explicit (deferred or immediate) BEGINs.

    pysqlite's own transaction handling is turned off so that SQLAlchemy's ``begin`` event can issue
    ``BEGIN IMMEDIATE`` for writers (:func:`write_transaction`): taking the write lock at the start means
    a writer never reads a state another writer is about to change.  ``synchronous=NORMAL`` under WAL
    keeps every committed transaction through a crash of the process (not of the machine).
    """
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": busy_timeout},
                               pool_size=8, max_overflow=16)

        @event.listens_for(engine, "connect")
        def _connect(dbapi_connection: Any, _: Any) -> None:
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _begin(connection: Connection) -> None:
            mode = "IMMEDIATE" if connection.get_execution_options().get("podium_write") else "DEFERRED"
            connection.exec_driver_sql(f"BEGIN {mode}")

        return engine
    return create_engine(url, pool_size=8, max_overflow=16, pool_pre_ping=True)


def migrate(engine: Engine) -> None:
    """Bring the database's schema to the newest migration (Alembic ``upgrade head``)."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


class _WriterQueue:
    """The SQLite writers' queue for one database file: a thread lock, then ``flock`` on a lock file.

    ``flock`` locks belong to an open file description, so the threads of a process share one descriptor
    behind a thread lock; the kernel releases the lock if the process dies.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._thread = threading.Lock()
        self._fd: int | None = None

    @contextmanager
    def hold(self) -> Iterator[None]:
        import fcntl

        with self._thread:
            if self._fd is None:
                self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(self._fd, fcntl.LOCK_UN)


_queues: dict[str, _WriterQueue] = {}
_queues_lock = threading.Lock()


def _writer_queue(engine: Engine) -> _WriterQueue | None:
    """The queue of ``engine``'s SQLite file (None for PostgreSQL, in-memory SQLite, or without ``fcntl``)."""
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:" or os.name != "posix":
        return None
    path = os.path.abspath(database) + "-podium.lock"
    with _queues_lock:
        return _queues.setdefault(path, _WriterQueue(path))


@contextmanager
def write_transaction(engine: Engine, league_id: int | None = None) -> Iterator[Connection]:
    """A transaction holding the write lock of ``league_id`` (or, on SQLite, of the whole database)."""
    queue = _writer_queue(engine)
    if queue is None:
        with _transaction(engine, league_id) as connection:
            yield connection
    else:
        with queue.hold(), _transaction(engine, league_id) as connection:
            yield connection


@contextmanager
def _transaction(engine: Engine, league_id: int | None) -> Iterator[Connection]:
    with engine.connect().execution_options(podium_write=True) as connection:
        with connection.begin():
            if league_id is not None:
                lock_league(connection, league_id)
            yield connection


def lock_league(connection: Connection, league_id: int) -> None:
    """Take ``league_id``'s write lock for the rest of the transaction (PostgreSQL; on SQLite a write
    transaction already holds the database's).  A writer may read what needs no lock first."""
    if connection.dialect.name == "postgresql":
        # Advisory locks are one key space per database, shared by every schema and application:
        # the key hashes the schema's name with the league's id, so that two podium deployments
        # in different schemas of one database do not wait on each other's leagues.
        connection.execute(_LOCK, {"league": str(league_id)})


_LOCK = text("SELECT pg_advisory_xact_lock(hashtextextended('podium-league:' || current_schema() || ':' || :league, 0))")


@contextmanager
def read_transaction(engine: Engine) -> Iterator[Connection]:
    """A read-only transaction (one consistent snapshot for the reads of a request)."""
    with engine.connect() as connection:
        with connection.begin():
            yield connection

