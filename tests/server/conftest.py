"""Fixtures for the league server's tests: the same tests run on real SQLite and real PostgreSQL.

PostgreSQL: ``PODIUM_TEST_PG`` (default ``postgresql://postgres@127.0.0.1:5432/test``).  Each test gets its
own schema (dropped afterwards) through the connection's ``search_path``, so tests never see each other's
tables.  Where no server answers, the PostgreSQL cases skip with the reason, unless
``PODIUM_REQUIRE_SERVICES=1`` (set by CI, where a server must be there) turns the skip into a failure.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import quote

import pytest

PG_URL = os.environ.get("PODIUM_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
REQUIRE = os.environ.get("PODIUM_REQUIRE_SERVICES") == "1"
_pg_error: list[str] = []


def _pg_available() -> str | None:
    """None if PostgreSQL answers, else why not (checked once)."""
    if not _pg_error:
        try:
            import psycopg

            with psycopg.connect(PG_URL, connect_timeout=3) as conn:
                conn.execute("SELECT 1")
            _pg_error.append("")
        except Exception as error:  # any failure to connect means: no server here
            _pg_error.append(f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}")
    return _pg_error[0] or None


def skip_or_fail(reason: str) -> None:
    if REQUIRE:
        pytest.fail(f"{reason} (PODIUM_REQUIRE_SERVICES=1: this machine must provide it)")
    pytest.skip(reason)


def pg_schema_url(schema: str) -> str:
    """A PostgreSQL URL whose connections see only ``schema`` (via ``options=-csearch_path=...``)."""
    sep = "&" if "?" in PG_URL else "?"
    return f"{PG_URL}{sep}options={quote(f'-csearch_path={schema}')}"


def check_replayable(url: str) -> None:
    """Every league in the database at ``url`` replays from its approved log to exactly its stored ratings and
    history (``podium league rebuild --check``): whatever a test did through the server, its leagues' logs
    stay replayable."""
    from sqlalchemy import inspect, select

    from podium.server.db import leagues, make_engine
    from podium.server.replay import rebuild
    from podium.server.settings import database_url

    engine = make_engine(database_url(url))
    try:
        if not inspect(engine).has_table("leagues"):
            return
        with engine.connect() as conn:
            names = conn.execute(select(leagues.c.name)).scalars().all()
        for name in names:
            _, differences = rebuild(engine, name, write=False)
            assert not differences, f"league {name!r}: the stored ratings differ from its log's replay: {differences[:3]}"
    finally:
        engine.dispose()


def make_db(kind: str, tmp_path: Path, replayable: bool = False) -> Iterator[str]:
    """A fresh, empty database of ``kind`` ("sqlite" or "postgresql"); yields its URL, then drops it.

    With ``replayable``, every league the test left in it must replay to its stored ratings first
    (:func:`check_replayable`)."""
    if kind == "sqlite":
        url = str(tmp_path / "league.db")
        yield url
        if replayable and (tmp_path / "league.db").exists():
            check_replayable(url)
        return
    reason = _pg_available()
    if reason:
        skip_or_fail(f"PostgreSQL at {PG_URL} did not answer ({reason}); the PostgreSQL case is skipped")
    import psycopg

    schema = f"podium_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield pg_schema_url(schema)
        if replayable:
            check_replayable(pg_schema_url(schema))
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Every test that takes ``db_url`` runs twice: on a SQLite file and on a PostgreSQL schema.  Afterwards every
    league it left must replay to its stored ratings, unless the test is marked ``stored_ratings_differ`` (it
    changes stored ratings behind the server's back on purpose)."""
    yield from make_db(request.param, tmp_path, replayable=request.node.get_closest_marker("stored_ratings_differ") is None)


@pytest.fixture
def engine(db_url: str):  # type: ignore[no-untyped-def]
    """A migrated engine on the test's database (for tests of the store without the app)."""
    from podium.server.db import make_engine, migrate
    from podium.server.settings import database_url

    engine = make_engine(database_url(db_url))
    migrate(engine)
    yield engine
    engine.dispose()


@pytest.fixture
def app(db_url: str):  # type: ignore[no-untyped-def]
    from podium.server import Settings, create_app

    # Rate limits off: these tests post hundreds of requests with one token from one address (the limits'
    # own tests, test_hardening.py, set theirs).
    application = create_app(Settings(db=db_url, token_rate=0, address_rate=0))
    yield application
    application.state.engine.dispose()


@pytest.fixture
def client(app):  # type: ignore[no-untyped-def]
    from fastapi.testclient import TestClient

    with TestClient(app) as test_client:
        yield test_client


@pytest.fixture
def tokens(app) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """One token of each role, as ``Authorization`` headers: ``tokens["admin"]`` etc."""
    from podium.server.store import create_token

    return {role: create_token(app.state.engine, role, f"test {role}") for role in ("admin", "moderator", "reporter")}


def upgrade_to(engine: Any, revision: str) -> None:
    """Migrate a test database to an earlier ``revision`` than the latest (the migration tests write the rows of
    an old schema, then migrate the rest of the way)."""
    from alembic import command
    from alembic.config import Config

    from podium.server import db

    config = Config()
    config.set_main_option("script_location", str(Path(db.__file__).parent / "migrations"))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def load_loadlib() -> ModuleType:
    """``benchmarks/loadlib.py`` (real server processes and clients), shared by the load and crash tests."""
    if "loadlib" not in sys.modules:
        path = Path(__file__).resolve().parents[2] / "benchmarks" / "loadlib.py"
        spec = importlib.util.spec_from_file_location("loadlib", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["loadlib"] = module
        spec.loader.exec_module(module)
    return sys.modules["loadlib"]


@pytest.fixture
def processes(db_url: str) -> Iterator[list[Any]]:
    """Every server process a test starts goes here; all are stopped afterwards (before the database goes)."""
    started: list[Any] = []
    yield started
    load_loadlib().stop_all(started)


@pytest.fixture
def cli_engines(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The commands leave their engine to the end of the process; in one test process, close each one after the
    test (an unclosed PostgreSQL connection is a ResourceWarning, an error under filterwarnings=error)."""
    import podium.server.db as server_db

    made: list[Any] = []
    original = server_db.make_engine

    def tracked(*args: Any, **kwargs: Any) -> Any:
        made.append(original(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(server_db, "make_engine", tracked)
    yield
    for engine in made:
        engine.dispose()
