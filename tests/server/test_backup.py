"""``podium league export`` / ``podium league import`` (``podium.server.backup``), on SQLite and PostgreSQL.

Moderated leagues of the Elo family, TrueSkill and Glicko-2 (rating periods) with recorded, corrected,
pending, rejected and voided matches are exported and imported into a fresh database of the same kind: the
league's settings, every match's id, seq, status, record, time and reported / decided times, every rating
(mu, sigma, games, time of the last match, the model's extra state) and every history row must come back
(ratings to 1e-12).  ``podium.data.io.read_matches`` of the export must be the approved log, and rate to the
stored ratings.  Malformed files are refused with the line and the field named, and nothing written.
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import select
from typer.testing import CliRunner

import podium
from podium.cli import app as cli
from podium.data.io import read_matches
from podium.server import db, store
from podium.server.backup import BackupError, export_league, import_league
from podium.server.db import make_engine, migrate, read_transaction
from podium.server.settings import database_url

from .conftest import make_db

runner = CliRunner()
TOL = 1e-12
LEAGUES = {"duels": ("elo", {"k": 20.0}), "ffa": ("trueskill", {}), "periods": ("glicko2", {"period": 7.0})}


def _engine(url: str) -> Any:
    engine = make_engine(database_url(url))
    migrate(engine)
    return engine


@pytest.fixture
def source(db_url: str) -> Iterator[Any]:
    engine = _engine(db_url)
    yield engine
    engine.dispose()


@pytest.fixture
def target(db_url: str, tmp_path: Path) -> Iterator[tuple[str, Any]]:
    """A second, empty database of the same kind as ``db_url``."""
    kind = "postgresql" if db_url.startswith("postgres") else "sqlite"
    databases = make_db(kind, tmp_path / "target")
    (tmp_path / "target").mkdir()
    url = next(databases)
    engine = _engine(url)
    try:
        yield url, engine
    finally:
        engine.dispose()
        next(databases, None)


def _token(engine: Any, role: str, label: str) -> store.TokenInfo:
    raw = store.create_token(engine, role, label)
    with read_transaction(engine) as conn:
        found = store.find_token(conn, raw)
    assert found is not None
    return found


def _build(engine: Any, name: str, model: str, params: dict[str, Any], seed: int) -> None:
    """A moderated league: 40 matches reported, 30 approved, 2 rejected, 2 voided, 1 corrected, the rest pending;
    one match's own meta has a "podium" key."""
    league = store.create_league(engine, name, model, params, True)
    reporter, moderator = _token(engine, "reporter", "bot"), _token(engine, "moderator", "mod")
    teams = 2 if model == "elo" else 3
    sim = podium.simulate(16, 40, teams=teams, team_size=1 if teams == 3 else 2, draw_probability=0.1, seed=seed)
    records = []
    for i, match in enumerate(sim.matches):
        record = match.to_record() | {"id": f"{name}-{i:03d}", "time": f"2024-{1 + i // 28:02d}-{1 + i % 28:02d}"}
        if i == 4:
            record["meta"] = {"podium": {"status": "voided", "note": "the user's own"}, "venue": "Åre"}
        if i == 6 and teams == 2:
            record["weights"] = [[1.0, 0.5], [1.0, 1.0]]
        records.append(record)
        assert store.report_match(engine, league, record, reporter, 1000)[0] == 202
    for record in records[:30]:
        store.approve_match(engine, league, record["id"], moderator)
    for record in records[30:32]:
        store.reject_match(engine, league, record["id"], moderator)
    for record in (records[2], records[20]):
        store.void_match(engine, league, record["id"], moderator)
    fixed = {"teams": records[10]["teams"][::-1], "time": records[10]["time"], "meta": {"fixed": True}}
    store.correct_match(engine, league, records[10]["id"], fixed, moderator, 1000)


def _league_rows(engine: Any, name: str) -> dict[str, Any]:
    with read_transaction(engine) as conn:
        league = conn.execute(select(db.leagues).where(db.leagues.c.name == name)).one()
        rows = conn.execute(select(db.matches).where(db.matches.c.league_id == league.id)).all()
        rates = conn.execute(select(db.ratings).where(db.ratings.c.league_id == league.id)).all()
        hist = conn.execute(select(db.history).where(db.history.c.league_id == league.id)).all()
    return {"league": league, "matches": {r.match_id: r for r in rows}, "ratings": {r.player: r for r in rates},
            "history": {(r.player, r.seq): r for r in hist}}


def _close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return abs(a - b) <= TOL * max(1.0, abs(b))


def _assert_same_league(a: dict[str, Any], b: dict[str, Any]) -> None:
    la, lb = a["league"], b["league"]
    assert (la.model, json.loads(la.params), la.moderated, la.created) == (lb.model, json.loads(lb.params),
                                                                           lb.moderated, lb.created)
    assert a["matches"].keys() == b["matches"].keys()
    for match_id, x in a["matches"].items():
        y = b["matches"][match_id]
        assert (x.seq, x.status, x.record, x.time, x.reported, x.decided) == (
            y.seq, y.status, y.record, y.time, y.reported, y.decided), match_id
        assert y.reporter is None and y.decider is None  # tokens are not exported
    assert a["ratings"].keys() == b["ratings"].keys() and a["ratings"]
    for player, x in a["ratings"].items():
        y = b["ratings"][player]
        assert all(_close(getattr(x, c), getattr(y, c)) for c in ("mu", "sigma", "last_time")), player
        assert x.games == y.games
        ex, ey = db.bytes_to_extra(x.extra), db.bytes_to_extra(y.extra)
        assert len(ex) == len(ey) and all((math.isnan(p) and math.isnan(q)) or _close(p, q) for p, q in zip(ex, ey))
    assert a["history"].keys() == b["history"].keys() and a["history"]
    assert all(_close(x.mu, b["history"][k].mu) and _close(x.sigma, b["history"][k].sigma)
               for k, x in a["history"].items())


def _approved_log(engine: Any, name: str) -> list[dict[str, Any]]:
    with read_transaction(engine) as conn:
        league = store.get_league(conn, name)
        rows = conn.execute(select(db.matches.c.record).where(
            (db.matches.c.league_id == league.id) & (db.matches.c.status == "recorded")).order_by(db.matches.c.seq))
        return [json.loads(r.record) for r in rows]


def test_export_import_round_trip(source: Any, target: tuple[str, Any], db_url: str, tmp_path: Path) -> None:
    for seed, (name, (model, params)) in enumerate(LEAGUES.items()):
        _build(source, name, model, params, seed)
    statuses: dict[str, set[str]] = {}
    for name in LEAGUES:
        path = tmp_path / f"{name}.jsonl{'.gz' if name == 'ffa' else ''}"
        # the command line for one league, the functions for the others
        if name == "ffa":
            result = runner.invoke(cli, ["league", "export", name, "--db", db_url, "-o", str(path)])
            assert result.exit_code == 0, result.output
            assert "30 recorded" not in result.output and "28 recorded" in result.output  # 30 approved, 2 voided
            assert path.read_bytes()[:2] == b"\x1f\x8b"
            result = runner.invoke(cli, ["league", "import", str(path), "--db", target[0]])
            assert result.exit_code == 0, result.output
            assert "league 'ffa' imported" in result.output
        else:
            counts = export_league(source, name, path, chunk=7)
            assert counts == {"recorded": 28, "pending": 8, "rejected": 2, "voided": 2}
            assert import_league(target[1], path, chunk=5) == (name, counts)
        original, copy = _league_rows(source, name), _league_rows(target[1], name)
        _assert_same_league(original, copy)
        statuses[name] = {r.status for r in copy["matches"].values()}
        # the user's own meta.podium is kept, nested in the export and back in place after the import
        mine = copy["matches"][f"{name}-004"]
        assert json.loads(mine.record)["meta"] == {"podium": {"status": "voided", "note": "the user's own"}, "venue": "Åre"}
        # read_matches of the export is the approved log (pending, rejected, voided and the header skipped)
        log = _approved_log(source, name)
        read = read_matches(path)
        assert list(read.ids) == [r["id"] for r in log]
        # (the export's meta, the server's status under "podium", is the reader's too: compared above)
        assert [{k: v for k, v in m.to_record().items() if k != "meta"} for m in read] == [
            podium.Match(r["teams"], r.get("ranks"), r.get("weights"), r.get("time"), r["id"]).to_record() for r in log]
        assert all(m.meta is not None and m.meta["podium"]["status"] == "recorded" for m in read)
        assert f"{name}-004" in read.ids  # its user meta says "voided", but the server's says recorded
        # ... and rates to the stored ratings
        league = podium.League(podium.models.MODELS[LEAGUES[name][0]](**LEAGUES[name][1])).record_many(read)
        for player, row in copy["ratings"].items():
            assert _close(row.mu, league.rating(player).mu) and _close(row.sigma, league.rating(player).sigma)
    assert all(s == {"recorded", "pending", "rejected", "voided"} for s in statuses.values())
    # the imported league goes on: a pending match approved there is rated from the imported states
    with read_transaction(target[1]) as conn:
        periods = store.get_league(conn, "periods")
    moderator = _token(target[1], "moderator", "there")
    status, out = store.approve_match(target[1], periods, "periods-039", moderator)
    assert status == 200 and out["status"] == "recorded" and out["seq"] == 30
    assert store.rebuild(target[1], "periods", write=False)[1] == []
    # the export file's lines: header first, then the log in seq order, then the rest in report order
    lines = (tmp_path / "duels.jsonl").read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])["podium_league"]
    assert header["format"] == 1 and header["name"] == "duels" and header["model"] == "elo"
    assert header["params"]["k"] == 20.0 and header["moderated"] is True
    exported = [json.loads(line) for line in lines[1:]]
    bookkeeping = [r["meta"]["podium"] for r in exported]
    assert [b["status"] for b in bookkeeping[:28]] == ["recorded"] * 28
    assert [b["seq"] for b in bookkeeping[:28]] == sorted(b["seq"] for b in bookkeeping[:28])
    assert {b["status"] for b in bookkeeping[28:]} == {"pending", "rejected", "voided"}
    assert [r["id"] for r in exported[28:]] == sorted(r["id"] for r in exported[28:])  # in report order
    assert all(b["reporter"]["label"] == "bot" and (b["decider"] is None) == (b["status"] == "pending")
               for b in bookkeeping)
    assert not any("digest" in line or "pod_" in line for line in lines)


def test_a_league_is_imported_under_another_name_and_never_over_one(source: Any, db_url: str, tmp_path: Path) -> None:
    _build(source, "duels", "elo", {"k": 20.0}, 1)
    path = tmp_path / "duels.jsonl"
    export_league(source, "duels", path)
    before = _snapshot(source)
    with pytest.raises(BackupError, match="a league called 'duels' already exists"):
        import_league(source, path)
    assert _snapshot(source) == before
    result = runner.invoke(cli, ["league", "import", str(path), "--db", db_url, "--name", "duels-copy"])
    assert result.exit_code == 0, result.output
    original, copy = _league_rows(source, "duels"), _league_rows(source, "duels-copy")
    _assert_same_league(original, copy)
    result = runner.invoke(cli, ["league", "import", str(path), "--db", db_url, "--name", "Bad Name"])
    assert result.exit_code == 1 and "'--name'" in result.output and "'Bad Name'" in result.output
    result = runner.invoke(cli, ["league", "export", "nope", "--db", db_url, "-o", str(tmp_path / "x.jsonl")])
    assert result.exit_code == 1 and "No league called 'nope'" in result.output
    assert not (tmp_path / "x.jsonl").exists() and not (tmp_path / "x.jsonl.partial").exists()


def _snapshot(engine: Any) -> dict[str, list[tuple[Any, ...]]]:
    with engine.connect() as conn:
        return {table.name: sorted((tuple(row) for row in conn.execute(select(table))), key=repr)
                for table in (db.leagues, db.matches, db.ratings, db.history)}


def _edit(lines: list[str], number: int, change: Any) -> list[str]:
    out = list(lines)
    data = json.loads(out[number - 1])
    change(data)
    out[number - 1] = json.dumps(data)
    return out


def _set(path: str, value: Any) -> Any:
    def change(data: dict[str, Any]) -> None:
        *keys, last = path.split(".")
        for key in keys:
            data = data[key]
        if value is _DELETE:
            del data[last]
        else:
            data[last] = value
    return change


_DELETE = object()


def test_malformed_exports_are_refused_naming_line_and_field(source: Any, tmp_path: Path) -> None:
    _build(source, "src", "trueskill", {}, 3)
    good = tmp_path / "good.jsonl"
    export_league(source, "src", good)
    lines = good.read_text(encoding="utf-8").splitlines()
    target = _engine(str(tmp_path / "empty.db")) if source.dialect.name == "sqlite" else source
    try:
        before = _snapshot(target)
        n = len(lines)
        cases: list[tuple[list[str], str]] = [
            ([], "the file is empty"),
            (["{not json"] + lines[1:], "line 1: not valid JSON"),
            (lines[1:], "line 1: a league export starts with its header"),
            (_edit(lines, 1, _set("podium_league.format", 2)), "'podium_league.format' must be 1"),
            (_edit(lines, 1, _set("podium_league.model", "chess")), "'podium_league.model' must be one of"),
            (_edit(lines, 1, _set("podium_league.params", {"beta": -1})), "line 1: 'podium_league.params.beta'"),
            (_edit(lines, 1, _set("podium_league.name", "A B")), "'podium_league.name' must be 1-64 characters"),
            (lines[:3] + ["[1, 2]"] + lines[4:], "line 4: a match record must be a JSON object"),
            (lines[:5] + ['{"teams": [["a"], ["b"]], "id": "x"'] + lines[6:], "line 6: not valid JSON"),
            (_edit(lines, 3, _set("meta", _DELETE)), "line 3: 'meta.podium'"),
            (_edit(lines, 3, _set("meta.podium.status", "approved")), "line 3: 'meta.podium.status' must be one of"),
            (_edit(lines, 3, _set("meta.podium.seq", "2")), "line 3: 'meta.podium.seq'"),
            (_edit(lines, 3, _set("meta.podium.reported", "yesterday")), "line 3: 'meta.podium.reported'"),
            (_edit(lines, 3, _set("meta.podium.owner", 1)), "line 3: unknown field(s) ['meta.podium.owner']"),
            (_edit(lines, 3, _set("winner", "a")), "line 3: unknown field(s) ['winner']"),
            (_edit(lines, 3, _set("teams", [["a"], ["<b>"], ["c"]])), "line 3: 'teams[1][0]'"),
            (_edit(lines, 4, _set("id", json.loads(lines[2])["id"])), "line 4: 'id' "),
            (_edit(lines, 4, _set("meta.podium.seq", 0)), "line 4: the recorded matches must come in log order"),
            (_edit(lines, n, _set("meta.podium.seq", 3)), f"line {n}: 'meta.podium.seq' must be null"),
            (lines[:-1], "says 8 pending matches; the file holds 7"),
        ]
        for content, message in cases:
            bad = tmp_path / "bad.jsonl"
            bad.write_text("\n".join(content) + ("\n" if content else ""), encoding="utf-8")
            with pytest.raises(BackupError) as raised:
                import_league(target, bad, name=None if "podium_league.name" in message else "copy")
                pytest.fail(f"not refused: {message}")
            assert message in str(raised.value), (message, str(raised.value))
            assert str(raised.value).startswith("bad.jsonl"), str(raised.value)
            assert _snapshot(target) == before, message
        # damaged gzip: named, nothing written
        damaged = tmp_path / "bad.jsonl.gz"
        data = gzip.compress("\n".join(lines).encode())
        damaged.write_bytes(data[: len(data) // 2])
        with pytest.raises(BackupError, match="damaged or cut short"):
            import_league(target, damaged, name="copy")
        assert _snapshot(target) == before
        # through the command line: the message, and no traceback
        bad = tmp_path / "bad.jsonl"
        bad.write_text("\n".join(_edit(lines, 3, _set("meta.podium.status", "approved"))), encoding="utf-8")
        url = str(tmp_path / "empty.db") if source.dialect.name == "sqlite" else None
        if url is not None:
            result = runner.invoke(cli, ["league", "import", str(bad), "--db", url, "--name", "copy"])
            assert result.exit_code == 1 and "line 3" in result.output and "meta.podium.status" in result.output
            assert "Traceback" not in result.output and "nothing was imported" in result.output
            assert _snapshot(target) == before
    finally:
        if target is not source:
            target.dispose()


def test_a_plain_history_reads_as_before_and_an_export_header_only_on_line_one(tmp_path: Path) -> None:
    plain = tmp_path / "plain.jsonl"
    plain.write_text('{"teams": [["a"], ["b"]], "meta": {"podium": {"round": 2}}}\n'
                     '{"teams": [["b"], ["c"]], "meta": {"podium": {"status": "recorded"}}}\n'
                     '{"teams": [["c"], ["a"]], "meta": {"podium": {"status": "voided"}}}\n', encoding="utf-8")
    assert [m.teams for m in read_matches(plain)] == [(("a",), ("b",)), (("b",), ("c",))]
    misplaced = tmp_path / "misplaced.jsonl"
    misplaced.write_text('{"teams": [["a"], ["b"]]}\n{"podium_league": {"format": 1}}\n', encoding="utf-8")
    with pytest.raises(podium.MatchError, match=r"line 2: unknown field\(s\) \['podium_league'\]"):
        read_matches(misplaced)
    assert np.isnan(read_matches(plain).time).all()
