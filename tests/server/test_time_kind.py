"""A league reads time one way, so that its log always replays; on SQLite and PostgreSQL.

An outside fuzz found that a league accepted ``"time": 1700000100`` and then ``"time": "2024-02-01"``, after which
void, correct, audit, rebuild, export and import all failed ("'time' mixes numbers and dates").  The first timed
match now fixes the league's reading of time (numbers or dates); a report, a correction or an imported line of
the other kind is refused by name (422, ``time``) with nothing stored, and every operation on the league goes on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, text
from typer.testing import CliRunner

from podium.cli import app as cli
from podium.server import db
from podium.server.backup import BackupError, export_league, import_league
from podium.server.db import make_engine
from podium.server.settings import database_url

from .conftest import auth, upgrade_to
from .test_api import LEAGUES, create_league, report, snapshot

runner = CliRunner()


def _kind(app: Any, league: str) -> str | None:
    with app.state.engine.connect() as conn:
        return conn.execute(select(db.leagues.c.time_kind).where(db.leagues.c.name == league)).scalar_one()


@pytest.mark.parametrize("first, other", [(1700000100, "2024-02-01"), ("2024-02-01", 1700000100),
                                          ("2024-02-01T10:00:00Z", 19754.5)])
@pytest.mark.parametrize("moderated", [False, True])
def test_a_report_of_the_other_kind_of_time_is_refused_and_the_league_goes_on(
        client: Any, app: Any, tokens: dict[str, str], db_url: str, tmp_path: Path, first: Any, other: Any,
        moderated: bool) -> None:
    create_league(client, tokens, "t", "trueskill", moderated=moderated)
    status = 202 if moderated else 201
    report(client, tokens["reporter"], "t", {"id": "untimed", "teams": [["a"], ["b"]]}, expect=status)
    assert _kind(app, "t") is None  # no time yet: either kind may come
    report(client, tokens["reporter"], "t", {"id": "t1", "teams": [["a"], ["b"]], "time": first}, expect=status)
    assert _kind(app, "t") == ("date" if isinstance(first, str) else "number")
    before = snapshot(app)
    out = report(client, tokens["reporter"], "t", {"id": "t2", "teams": [["b"], ["c"]], "time": other}, expect=422)
    assert out.json()["field"] == "time" and repr(other)[:20] in out.json()["detail"], out.json()
    assert snapshot(app) == before  # nothing stored
    report(client, tokens["reporter"], "t", {"id": "t3", "teams": [["b"], ["c"]], "time": first}, expect=status)
    mod = auth(tokens["moderator"])
    if moderated:
        for match_id in ("untimed", "t1", "t3"):
            assert client.post(f"{LEAGUES}/t/matches/{match_id}/approve", headers=mod).status_code == 200
    # a correction of the other kind is refused too; of the same kind it replays
    out = client.put(f"{LEAGUES}/t/matches/t3", json={"teams": [["c"], ["b"]], "time": other}, headers=mod)
    assert out.status_code == 422 and out.json()["field"] == "time", out.text
    out = client.put(f"{LEAGUES}/t/matches/t3", json={"teams": [["c"], ["b"]], "time": first}, headers=mod)
    assert out.status_code == 200, out.text
    assert client.post(f"{LEAGUES}/t/matches/t1/void", headers=mod).status_code == 200
    assert client.get(f"{LEAGUES}/t/audit", headers=mod).status_code == 200
    # rebuild and an export that imports
    result = runner.invoke(cli, ["league", "rebuild", "t", "--check", "--db", db_url])
    assert result.exit_code == 0, result.output
    path = tmp_path / "t.jsonl"
    export_league(app.state.engine, "t", path)
    name, counts = import_league(app.state.engine, path, name="t-copy")
    assert counts["recorded"] == 2 and counts["voided"] == 1
    assert _kind(app, "t-copy") == _kind(app, "t")
    out = report(client, tokens["reporter"], "t-copy", {"teams": [["a"], ["c"]], "time": other}, expect=422)
    assert out.json()["field"] == "time"


def test_a_batch_cannot_mix_the_kinds_either(app: Any, tokens: dict[str, str]) -> None:
    """Reports written in one group commit are checked against each other, not only against the stored log."""
    from podium.server import store

    league = store.create_league(app.state.engine, "batch", "elo", {}, False)
    reports = [store.prepare_report(league, {"id": f"m{i}", "teams": [["a"], ["b"]], "time": t}, tokens["reporter"], 64)
               for i, t in enumerate(["2024-01-01", 5, "2024-01-03"])]
    results = store.record_reports(app.state.engine, league, reports)
    assert [r.status if isinstance(r, store.StoreError) else r[0] for r in results] == [201, 422, 201]
    assert isinstance(results[1], store.StoreError) and results[1].field == "time"


def test_an_export_that_mixes_the_kinds_is_refused_naming_its_line(app: Any, tokens: dict[str, str],
                                                                  tmp_path: Path) -> None:
    from podium.server import store

    store.create_league(app.state.engine, "src", "elo", {}, False)
    path = tmp_path / "src.jsonl"
    export_league(app.state.engine, "src", path)
    header = path.read_text().splitlines()[0]
    lines = [json.dumps({"id": f"m{i}", "teams": [["a"], ["b"]], "time": t,
                         "meta": {"podium": {"status": "recorded", "seq": i, "reported": 1.0, "decided": 1.0}}})
             for i, t in enumerate([3, 4, "2024-01-01"])]
    path.write_text("\n".join([header] + lines) + "\n")
    with pytest.raises(BackupError, match=r"line 4: 'time': this league's matches give their times as numbers"):
        import_league(app.state.engine, path, name="mixed")
    with app.state.engine.connect() as conn:
        assert conn.execute(select(db.leagues.c.id).where(db.leagues.c.name == "mixed")).first() is None


@pytest.mark.stored_ratings_differ  # (its matches are written straight into the tables, without their ratings)
def test_the_migration_gives_existing_leagues_the_kind_of_their_first_timed_match(db_url: str) -> None:
    """A database at the revision before the column: its leagues take the kind of their first timed pending or
    recorded match (a rejected one does not count), or none."""
    engine = make_engine(database_url(db_url))
    try:
        upgrade_to(engine, "0003")
        with engine.begin() as conn:
            for i, name in enumerate(["dates", "numbers", "untimed"]):
                conn.execute(text("INSERT INTO leagues (id, name, model, params, moderated, created, smoothing) "
                                  "VALUES (:id, :name, 'elo', '{}', true, 0, false)"), {"id": i + 1, "name": name})
            rows = [(1, "r", "rejected", 5.0, 5), (1, "a", "pending", 19000.0, "2022-01-08"),
                    (2, "b", "recorded", 7.0, 7), (3, "c", "recorded", None, None)]
            for k, (league, match_id, status, when, given) in enumerate(rows):
                record = {"id": match_id, "teams": [["x"], ["y"]], "ranks": [0, 1], "time": given}
                conn.execute(text("INSERT INTO matches (league_id, match_id, seq, status, record, time, reported) "
                                  "VALUES (:league, :id, :seq, :status, :record, :time, 0)"),
                             {"league": league, "id": match_id, "seq": k if status == "recorded" else None,
                              "status": status, "record": json.dumps(record), "time": when})
        upgrade_to(engine, "head")
        with engine.connect() as conn:
            kinds = dict(conn.execute(select(db.leagues.c.name, db.leagues.c.time_kind)).all())
        assert kinds == {"dates": "date", "numbers": "number", "untimed": None}
    finally:
        engine.dispose()
