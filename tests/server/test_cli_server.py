"""The league server's commands (token create, league create/list/rebuild, serve) through typer's runner.

Tokens and leagues made on the command line are checked against the API of a server on the same database;
``league rebuild`` runs on SQLite and PostgreSQL (the ``db_url`` fixture).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update
from typer.testing import CliRunner

import podium
from podium.cli import app as cli
from podium.server import Settings, create_app, db

from .conftest import auth

runner = CliRunner()


def invoke(*args: str) -> Any:
    return runner.invoke(cli, list(args))


def server(url: str) -> Any:
    from fastapi.testclient import TestClient

    return TestClient(create_app(Settings(db=url)))


@pytest.fixture
def sqlite_db(tmp_path: Path) -> Iterator[str]:
    yield str(tmp_path / "cli.db")


@pytest.fixture(autouse=True)
def dispose_cli_engines(cli_engines: None) -> None:
    """Every command's engine closed after its test (conftest's cli_engines)."""


def test_token_create_prints_a_token_the_server_accepts(sqlite_db: str) -> None:
    tokens = {}
    for role in ("admin", "reporter"):
        result = invoke("token", "create", "--role", role, "--db", sqlite_db, "--label", f"{role} for tests")
        assert result.exit_code == 0, result.output
        tokens[role] = result.output.strip()
        assert tokens[role].startswith("pod_") and len(tokens[role]) > 40 and "\n" not in tokens[role]
    assert tokens["admin"] != tokens["reporter"]
    with server(sqlite_db) as client:
        created = client.post("/api/v1/leagues", json={"name": "cli", "model": "elo"}, headers=auth(tokens["admin"]))
        assert created.status_code == 201, created.text
        # the role is the one asked for: a reporter may report, not create leagues
        assert client.post("/api/v1/leagues", json={"name": "no", "model": "elo"},
                           headers=auth(tokens["reporter"])).status_code == 403
        assert client.post("/api/v1/leagues/cli/matches", json={"teams": [["a"], ["b"]]},
                           headers=auth(tokens["reporter"])).status_code == 201
        assert client.post("/api/v1/leagues", json={"name": "no", "model": "elo"},
                           headers=auth("pod_made_up")).status_code == 401
        engine = client.app.state.engine
        with engine.connect() as conn:
            rows = conn.execute(select(db.tokens.c.role, db.tokens.c.label, db.tokens.c.digest)).all()
        engine.dispose()
    assert sorted((r.role, r.label) for r in rows) == [("admin", "admin for tests"), ("reporter", "reporter for tests")]
    assert not any(t in r.digest for r in rows for t in tokens.values())  # only digests are stored


def test_token_list_and_revoke(sqlite_db: str) -> None:
    made = {}
    for role, label in (("admin", "ops"), ("reporter", "scorer at table 3")):
        made[role] = invoke("token", "create", "--role", role, "--db", sqlite_db, "--label", label).output.strip()
    listed = invoke("token", "list", "--db", sqlite_db)
    assert listed.exit_code == 0, listed.output
    assert "ops" in listed.output and "scorer at table 3" in listed.output
    assert not any(t in listed.output for t in made.values())  # tokens are never shown again
    with server(sqlite_db) as client:
        assert client.post("/api/v1/leagues", json={"name": "cli", "model": "elo"},
                           headers=auth(made["admin"])).status_code == 201
        match = {"teams": [["a"], ["b"]]}
        assert client.post("/api/v1/leagues/cli/matches", json=match, headers=auth(made["reporter"])).status_code == 201
        engine = client.app.state.engine
        with engine.connect() as conn:
            reporter_id = conn.execute(select(db.tokens.c.id).where(db.tokens.c.role == "reporter")).scalar_one()
        revoked = invoke("token", "revoke", str(reporter_id), "--db", sqlite_db)
        assert revoked.exit_code == 0, revoked.output
        # At once, in the server that was already running: the report is refused and nothing is stored.
        refused = client.post("/api/v1/leagues/cli/matches", json=match, headers=auth(made["reporter"]))
        assert refused.status_code == 401 and refused.json()["field"] == "authorization", refused.text
        assert client.get("/api/v1/leagues/cli").json()["matches"] == 1
        assert client.post("/api/v1/leagues", json={"name": "two", "model": "elo"},
                           headers=auth(made["admin"])).status_code == 201  # the other token still works
        engine.dispose()
    rows = invoke("token", "list", "--db", sqlite_db).output.splitlines()
    assert any("scorer at table 3" in r and "yes" in r for r in rows)
    assert any("ops" in r and "yes" not in r for r in rows)
    missing = invoke("token", "revoke", "999", "--db", sqlite_db)
    assert missing.exit_code == 1 and "999" in missing.output


def test_token_create_refuses_an_unknown_role(sqlite_db: str) -> None:
    result = invoke("token", "create", "--role", "root", "--db", sqlite_db)
    assert result.exit_code != 0
    assert "root" in result.output and "admin" in result.output and "--role" in result.output
    assert "pod_" not in result.output and "Traceback" not in result.output
    assert not Path(sqlite_db).exists()  # refused before the database was touched
    result = invoke("token", "create", "--db", sqlite_db)
    assert result.exit_code != 0 and "--role" in result.output


def test_league_create_and_list(sqlite_db: str) -> None:
    result = invoke("league", "create", "ladder", "--model", "trueskill:beta=4", "--db", sqlite_db)
    assert result.exit_code == 0, result.output
    assert "ladder" in result.output and "created" in result.output
    result = invoke("league", "create", "queue", "--model", "plackett_luce:order=elimination,k=20", "--moderated",
                    "--db", sqlite_db)
    assert result.exit_code == 0, result.output
    with server(sqlite_db) as client:
        ladder = client.get("/api/v1/leagues/ladder").json()
        assert ladder["model"] == "trueskill" and ladder["moderated"] is False
        assert ladder["params"] == podium.TrueSkill(beta=4.0).get_params()
        queue = client.get("/api/v1/leagues/queue").json()
        assert queue["model"] == "plackett-luce" and queue["moderated"] is True
        assert queue["params"] == podium.PlackettLuce(order="elimination", k=20).get_params()
        from podium.server.store import create_token

        reporter = create_token(client.app.state.engine, "reporter")
        for i in range(3):
            assert client.post("/api/v1/leagues/ladder/matches", json={"teams": [["ann"], ["bob"], [f"c{i}"]]},
                               headers=auth(reporter)).status_code == 201
        client.app.state.engine.dispose()
    result = invoke("league", "list", "--db", sqlite_db)
    assert result.exit_code == 0, result.output
    rows = [[cell.strip() for cell in line.strip().strip("│").split("│")] for line in result.output.splitlines()
            if line.count("│") >= 5]
    # league, model, moderated, players, matches
    assert rows == [["ladder", "trueskill", "", "5", "3"], ["queue", "plackett-luce", "yes", "0", "0"]]


@pytest.mark.parametrize("args, words", [
    (["bad name", "--model", "elo"], ["'name' must be"]),
    (["ladder", "--model", "glicko"], ["unknown model", "glicko"]),
    (["other", "--model", "trueskill:beta=-1"], ["'beta' parameter"]),
    (["other", "--model", "trueskill:bogus=1"], ["bogus"]),
    (["ladder", "--model", "elo"], ["already exists"]),
])
def test_league_create_refusals(sqlite_db: str, args: list[str], words: list[str]) -> None:
    assert invoke("league", "create", "ladder", "--db", sqlite_db).exit_code == 0
    result = invoke("league", "create", *args, "--db", sqlite_db)
    assert result.exit_code != 0
    assert all(w in result.output for w in words), result.output
    assert "Traceback" not in result.output
    listing = invoke("league", "list", "--db", sqlite_db).output
    assert "other" not in listing and "bad name" not in listing and "glicko" not in listing


def test_league_create_blames_the_option_that_was_given(sqlite_db: str) -> None:
    result = invoke("league", "create", "x", "--model", "trueskill:beta=-1", "--db", sqlite_db)
    assert result.exit_code != 0 and "--set" not in result.output and "--model" in result.output


def test_bad_database_urls_are_refused(tmp_path: Path) -> None:
    result = invoke("league", "list", "--db", "mysql://somewhere/db")
    assert result.exit_code != 0 and "--db" in result.output and "Traceback" not in result.output
    result = invoke("league", "list", "--db", str(tmp_path / "no" / "such" / "dir" / "x.db"))
    assert result.exit_code == 1 and "cannot open the database" in result.output


def _seed(url: str, n: int = 30) -> tuple[list[dict[str, Any]], podium.League]:
    """A TrueSkill league 'season' with ``n`` reported matches; returns them and the offline replay."""
    from podium.server.store import create_token

    assert invoke("league", "create", "season", "--model", "trueskill:beta=4", "--db", url).exit_code == 0
    records = [m.to_record() for m in podium.simulate(8, n, teams=3, seed=7).matches]
    with server(url) as client:
        reporter = create_token(client.app.state.engine, "reporter")
        for r in records:
            assert client.post("/api/v1/leagues/season/matches", json=r, headers=auth(reporter)).status_code == 201
        client.app.state.engine.dispose()
    ref = podium.League(podium.TrueSkill(beta=4.0)).record_many(
        [podium.Match(r["teams"], r["ranks"], time=r["time"], id=r["id"]) for r in records])
    return records, ref


def _stored(url: str) -> dict[str, tuple[float, float]]:
    from podium.server.db import make_engine
    from podium.server.settings import database_url

    engine = make_engine(database_url(url))
    with engine.connect() as conn:
        rows = {r.player: (r.mu, r.sigma) for r in conn.execute(select(db.ratings))}
    engine.dispose()
    return rows


def _tamper(url: str, player: str, delta: float) -> None:
    from podium.server.db import make_engine
    from podium.server.settings import database_url

    engine = make_engine(database_url(url))
    with engine.begin() as conn:
        conn.execute(update(db.ratings).where(db.ratings.c.player == player).values(mu=db.ratings.c.mu + delta))
    engine.dispose()


def _agrees(stored: dict[str, tuple[float, float]], ref: podium.League) -> bool:
    return set(stored) == set(ref.players) and all(
        math.isclose(mu, ref.rating(p).mu, rel_tol=0, abs_tol=1e-9)
        and math.isclose(sigma, ref.rating(p).sigma, rel_tol=0, abs_tol=1e-9) for p, (mu, sigma) in stored.items())


def test_league_rebuild_checks_and_repairs(db_url: str) -> None:
    records, ref = _seed(db_url)
    result = invoke("league", "rebuild", "season", "--db", db_url)
    assert result.exit_code == 0, result.output
    assert "replayed 30 matches" in result.output and "agrees" in result.output
    assert _agrees(_stored(db_url), ref)

    victim = records[0]["teams"][0][0]
    _tamper(db_url, victim, 1.25)
    tampered = _stored(db_url)
    assert not _agrees(tampered, ref)
    # --check: the difference is shown, exit 1, nothing written (twice: the first wrote nothing)
    for _ in range(2):
        result = invoke("league", "rebuild", "season", "--check", "--db", db_url)
        assert result.exit_code == 1, result.output
        assert victim in result.output and "ratings" in result.output and "mu" in result.output
        assert "1 stored value(s) differ" in result.output and "nothing written" in result.output
        assert repr(tampered[victim][0]) in result.output and repr(ref.rating(victim).mu) in result.output
        assert _stored(db_url) == tampered
    # a tolerance above the difference: agrees, and writes nothing either
    result = invoke("league", "rebuild", "season", "--check", "--tolerance", "0.1", "--db", db_url)
    assert result.exit_code == 0, result.output
    assert _stored(db_url) == tampered
    # without --check: exit 1 (there was a difference), the replay is written back
    result = invoke("league", "rebuild", "season", "--db", db_url)
    assert result.exit_code == 1 and "replaced by the replay" in result.output
    assert _agrees(_stored(db_url), ref)
    result = invoke("league", "rebuild", "season", "--db", db_url)
    assert result.exit_code == 0 and "agrees" in result.output


def test_league_rebuild_of_an_unknown_league(db_url: str) -> None:
    result = invoke("league", "rebuild", "nope", "--db", db_url)
    assert result.exit_code == 1
    assert "No league called 'nope'" in result.output and "Traceback" not in result.output
    result = invoke("league", "rebuild", "nope", "--check", "--db", db_url)
    assert result.exit_code == 1 and "nope" in result.output


def test_serve_runs_the_app_on_the_database(sqlite_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn
    from fastapi.testclient import TestClient

    calls: list[tuple[Any, dict[str, Any]]] = []
    monkeypatch.setattr(uvicorn, "run", lambda target, **kwargs: calls.append((target, kwargs)))
    result = invoke("serve", "--db", sqlite_db, "--port", "8123", "--max-body", "2000")
    assert result.exit_code == 0, result.output
    [(served, kwargs)] = calls
    assert kwargs["port"] == 8123 and kwargs["host"] == "127.0.0.1"
    assert Path(sqlite_db).exists()  # migrated before serving
    with TestClient(served) as client:
        assert client.get("/api/v1/health").json() == {"status": "ok", "database": "sqlite"}
        assert client.post("/api/v1/leagues/x/predict", content=b"x" * 2001).status_code == 413
    # several workers: the factory reads the settings from the environment
    from podium.server.app import ENVIRONMENT

    for variable in ENVIRONMENT:  # serve sets them all for its workers: unset now, restored after the test
        monkeypatch.setenv(variable, "unset")
        monkeypatch.delenv(variable)
    calls.clear()
    result = invoke("serve", "--db", sqlite_db, "--workers", "2", "--max-body", "3000")
    assert result.exit_code == 0, result.output
    [(target, kwargs)] = calls
    assert target == "podium.server.app:app_from_env" and kwargs["factory"] is True and kwargs["workers"] == 2
    from podium.server.app import app_from_env

    with TestClient(app_from_env()) as client:
        assert client.get("/api/v1/health").status_code == 200
        assert client.post("/api/v1/leagues/x/predict", content=b"x" * 3001).status_code == 413


def test_league_rebuild_shows_its_progress(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rebuild reports the matches replayed so far against the approved log's length (a rich bar on the
    terminal; here the callback it drives)."""
    import contextlib

    import podium.cli.server as commands

    _seed(db_url)
    seen: list[tuple[str, int, int]] = []
    monkeypatch.setattr(commands, "_backup_progress",
                        lambda: (contextlib.nullcontext(), lambda *call: seen.append(call)))
    result = invoke("league", "rebuild", "season", "--db", db_url)
    assert result.exit_code == 0, result.output
    assert seen and seen[-1] == ("rebuild", 30, 30)
    assert all(stage == "rebuild" and total == 30 for stage, _, total in seen)
    assert [done for _, done, _ in seen] == sorted(done for _, done, _ in seen)
