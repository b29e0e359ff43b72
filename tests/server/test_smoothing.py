"""Nightly smoothed ratings (``podium.server.smoothing``), on real SQLite and real PostgreSQL.

The reference is the library itself: ``podium.TrueSkillThroughTime(...)`` built from the league's TrueSkill
parameters as the server documents it (gamma = drift; the smoother's ``mu`` the league's less the origin a
TrueSkill team's sum measures skills from, added back after) and smoothed over the same approved matches
gives the ratings the server must store (to 1e-9).  The scheduler is driven tick by tick with the times it is
given; "several processes" are several engines on one database.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import select, text
from typer.testing import CliRunner

import podium
from podium.server import Settings, create_app, db, smoothing
from podium.server.settings import database_url
from podium.server.store import create_token

from .conftest import auth, upgrade_to

LEAGUES = "/api/v1/leagues"
TOL = 1e-9
DAY = 86_400.0


# -- helpers ----------------------------------------------------------------------------------------------------
@pytest.fixture
def app(db_url: str) -> Iterator[Any]:
    """The app without its background thread (the tests tick the scheduler themselves) and without rate limits."""
    application = create_app(Settings(db=db_url, token_rate=0, address_rate=0, smoothing_interval=0))
    yield application
    application.state.engine.dispose()


def create(client: Any, tokens: dict[str, str], name: str, model: str = "trueskill", params: dict[str, Any] | None = None,
           expect: int = 201, **options: Any) -> Any:
    body: dict[str, Any] = {"name": name, "model": model, **options}
    if params is not None:
        body["params"] = params
    response = client.post(LEAGUES, json=body, headers=auth(tokens["admin"]))
    assert response.status_code == expect, response.text
    return response.json()


def report(client: Any, tokens: dict[str, str], league: str, records: list[dict[str, Any]]) -> None:
    for record in records:
        response = client.post(f"{LEAGUES}/{league}/matches", json=record, headers=auth(tokens["reporter"]))
        assert response.status_code == 201, response.text


def team_records(n: int, seed: int, *, times: str = "all", prefix: str = "m") -> list[dict[str, Any]]:
    """Matches of 2-3 teams of 1-3 players (teams of unequal sizes, so the origin of a team's sum matters), some
    two-team draws, some matches sharing a time (one batch); ``times`` "all", "none" or "some"."""
    rng = np.random.default_rng(seed)
    records = []
    clock = 0.0
    for i in range(n):
        n_teams = int(rng.integers(2, 4))
        sizes = [int(rng.integers(1, 4)) for _ in range(n_teams)]
        chosen = rng.permutation(14)[:sum(sizes)]
        teams, at = [], 0
        for size in sizes:
            teams.append([f"p{int(j):02d}" for j in chosen[at:at + size]])
            at += size
        ranks = [int(r) for r in rng.permutation(n_teams)]
        if n_teams == 2 and rng.random() < 0.15:
            ranks = [0, 0]
        clock += float(rng.integers(0, 3))  # 0: the same time as the last match
        record: dict[str, Any] = {"id": f"{prefix}{i}", "teams": teams, "ranks": ranks}
        if times == "all" or (times == "some" and i % 2 == 0):
            record["time"] = clock
        records.append(record)
    return records


def to_match(record: dict[str, Any]) -> podium.Match:
    return podium.Match(record["teams"], record.get("ranks"), time=record.get("time"), id=record["id"])


def smoothed_rows(client: Any, league: str, **params: Any) -> dict[str, Any]:
    response = client.get(f"{LEAGUES}/{league}/smoothed", params={"limit": 1000, **params})
    assert response.status_code == 200, response.text
    return response.json()


def snapshot(app: Any) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table (to prove that a refused request stored nothing)."""
    with app.state.engine.connect() as conn:
        return {table.name: sorted((tuple(row) for row in conn.execute(select(table))), key=repr)
                for table in (db.leagues, db.tokens, db.matches, db.ratings, db.history, db.smoothed)}


def stored(engine: Any, league: str) -> dict[str, tuple[Any, ...]]:
    with engine.connect() as conn:
        league_id = conn.execute(select(db.leagues.c.id).where(db.leagues.c.name == league)).scalar_one()
        return {r.player: tuple(r) for r in conn.execute(select(db.smoothed).where(db.smoothed.c.league_id == league_id))}


# -- the option -------------------------------------------------------------------------------------------------
def test_the_option_at_creation_and_later(client: Any, app: Any, tokens: dict[str, str]) -> None:
    assert create(client, tokens, "plain")["smoothing"] is False
    assert create(client, tokens, "smooth", smoothing=True)["smoothing"] is True
    assert create(client, tokens, "elo", "elo")["smoothing"] is False
    assert client.get(f"{LEAGUES}/smooth").json()["smoothing"] is True
    assert client.get(f"{LEAGUES}/plain").json()["smoothing"] is False
    # an admin turns it on and off later
    changed = client.patch(f"{LEAGUES}/plain", json={"smoothing": True}, headers=auth(tokens["admin"]))
    assert changed.status_code == 200 and changed.json()["smoothing"] is True, changed.text
    assert client.get(f"{LEAGUES}/plain").json()["smoothing"] is True
    report(client, tokens, "plain", team_records(6, seed=1))
    assert smoothing.smooth_league(app.state.engine, "plain").computed
    assert len(stored(app.state.engine, "plain")) > 0
    off = client.patch(f"{LEAGUES}/plain", json={"smoothing": False}, headers=auth(tokens["admin"]))
    assert off.status_code == 200 and off.json()["smoothing"] is False
    assert stored(app.state.engine, "plain") == {}  # off: the smoothed ratings go
    # only an admin may
    for role in ("reporter", "moderator"):
        refused = client.patch(f"{LEAGUES}/plain", json={"smoothing": True}, headers=auth(tokens[role]))
        assert refused.status_code == 403 and refused.json()["field"] == "authorization"
    assert client.patch(f"{LEAGUES}/plain", json={"smoothing": True}).status_code == 401
    assert client.get(f"{LEAGUES}/plain").json()["smoothing"] is False


CREATE_REFUSALS: list[tuple[dict[str, Any], str]] = [
    ({"name": "x", "model": "trueskill", "smoothing": "yes"}, "'yes'"),
    ({"name": "x", "model": "trueskill", "smoothing": 1}, "1"),
    ({"name": "x", "model": "trueskill", "smoothing": None}, "None"),
    ({"name": "x", "model": "trueskill", "smoothing": [True]}, "[True]"),
    ({"name": "x", "model": "elo", "smoothing": True}, "'elo'"),
    ({"name": "x", "model": "glicko2", "smoothing": True}, "'glicko2'"),
    ({"name": "x", "model": "plackett-luce", "smoothing": True}, "'plackett-luce'"),
    ({"name": "x", "model": "trueskill", "params": {"update": "chain"}, "smoothing": True}, "'chain'"),
    ({"name": "x", "model": "trueskill", "params": {"update": "exact"}, "smoothing": True}, "'exact'"),
]


@pytest.mark.parametrize("body, shown", CREATE_REFUSALS)
def test_a_bad_value_or_an_unsuitable_model_is_refused_at_creation(client: Any, app: Any, tokens: dict[str, str],
                                                                   body: dict[str, Any], shown: str) -> None:
    before = snapshot(app)
    response = client.post(LEAGUES, json=body, headers=auth(tokens["admin"]))
    out = response.json()
    assert response.status_code == 422 and out["field"] == "smoothing", out
    assert "'smoothing'" in out["detail"] and shown in out["detail"], out
    assert snapshot(app) == before and client.get(LEAGUES).json()["leagues"] == []


def test_a_bad_value_or_an_unsuitable_model_is_refused_later(client: Any, app: Any, tokens: dict[str, str]) -> None:
    create(client, tokens, "ts")
    create(client, tokens, "elo", "elo")
    create(client, tokens, "chain", params={"update": "chain"})
    before = snapshot(app)
    for league, value, shown in (("ts", "yes", "'yes'"), ("ts", 0, "Got 0"), ("ts", None, "Got None"),
                                 ("elo", True, "'elo'"), ("chain", True, "'chain'")):
        response = client.patch(f"{LEAGUES}/{league}", json={"smoothing": value}, headers=auth(tokens["admin"]))
        out = response.json()
        assert response.status_code == 422 and out["field"] == "smoothing", (league, value, out)
        assert "'smoothing'" in out["detail"] and shown in out["detail"], (league, value, out)
    assert snapshot(app) == before
    # turning it off is always allowed (a no-op here)
    assert client.patch(f"{LEAGUES}/elo", json={"smoothing": False}, headers=auth(tokens["admin"])).status_code == 200


def test_changing_a_league_names_what_is_wrong(client: Any, tokens: dict[str, str]) -> None:
    create(client, tokens, "ts")
    admin = auth(tokens["admin"])
    for body, status, field in ((b'{"smoothing": true, "colour": "red"}', 422, "colour"), (b'{}', 422, "smoothing"),
                                (b'[true]', 422, "body"), (b'{"smoothing": ', 400, "body")):
        response = client.patch(f"{LEAGUES}/ts", content=body, headers=admin)
        assert response.status_code == status and response.json()["field"] == field, (body, response.text)
    missing = client.patch(f"{LEAGUES}/nope", json={"smoothing": True}, headers=admin)
    assert missing.status_code == 404 and missing.json()["field"] == "league"
    assert client.get(f"{LEAGUES}/ts").json()["smoothing"] is False


# -- the computation --------------------------------------------------------------------------------------------
# (league params, the reference smoother's parameters, the origin added back): written out here, not taken from
# the server's mapping.
MAPPINGS: list[tuple[str, dict[str, Any], dict[str, Any], float]] = [
    ("centred", {"beta": 4.0, "drift": 0.05, "draw_probability": 0.05},
     {"mu": 0.0, "sigma": 25.0 / 3.0, "beta": 4.0, "gamma": 0.05, "draw_probability": 0.05}, 25.0),
    ("paper-sum", {"mu": 10.0, "sigma": 3.0, "beta": 1.5, "drift": 0.2, "center": False, "tau": 0.3},
     {"mu": 10.0, "sigma": 3.0, "beta": 1.5, "gamma": 0.2, "draw_probability": 0.1}, 0.0),
    ("newcomer", {"drift": 0.1, "newcomer": 2.0},
     {"mu": 2.0, "sigma": 25.0 / 3.0, "beta": 25.0 / 6.0, "gamma": 0.1, "draw_probability": 0.1}, 23.0),
]


@pytest.mark.parametrize("case, params, reference, origin", MAPPINGS, ids=[m[0] for m in MAPPINGS])
def test_stored_smoothed_ratings_are_the_librarys(client: Any, app: Any, tokens: dict[str, str], case: str,
                                                  params: dict[str, Any], reference: dict[str, Any],
                                                  origin: float) -> None:
    create(client, tokens, "season", params=params, smoothing=True)
    records = team_records(40, seed=3)
    report(client, tokens, "season", records)
    voided = records[7]
    assert client.post(f"{LEAGUES}/season/matches/{voided['id']}/void", headers=auth(tokens["moderator"])).status_code == 200
    approved = [r for r in records if r is not voided]

    def check(log: list[dict[str, Any]]) -> None:
        # (a ConvergenceWarning would fail the test: filterwarnings = error)
        want = podium.TrueSkillThroughTime(**reference).smooth([to_match(r) for r in log]).leaderboard(k=3.0)
        got = smoothed_rows(client, "season")
        assert got["matches"] == len(log) and got["total"] == len(want) and got["up_to_date"] is True
        assert [r["player"] for r in got["rows"]] == [w.player for w in want]
        for row, w in zip(got["rows"], want):
            assert abs(row["mu"] - (w.mu + origin)) <= TOL and abs(row["sigma"] - w.sigma) <= TOL, (row, w)
            assert abs(row["score"] - (w.score + origin)) <= TOL
            assert row["games"] == w.games and row["connected"] == w.connected and row["rank"] == w.rank
        assert got["smoother"]["params"] == podium.TrueSkillThroughTime(**reference).get_params()
        assert got["smoother"]["origin"] == origin

    run = smoothing.smooth_league(app.state.engine, "season")
    assert run.computed and run.matches == len(approved) and run.players == 14
    check(approved)
    # a correction keeps the log's length and last seq: the stored ratings are marked stale and recomputed
    fixed = dict(records[3], ranks=list(reversed(records[3]["ranks"])))
    assert client.put(f"{LEAGUES}/season/matches/{fixed['id']}", json=fixed,
                      headers=auth(tokens["moderator"])).status_code == 200
    assert smoothed_rows(client, "season")["up_to_date"] is False
    assert smoothing.smooth_league(app.state.engine, "season").computed
    check([fixed if r is records[3] else r for r in approved])


@pytest.mark.parametrize("times", ["none", "some"])
def test_a_log_without_every_time_is_smoothed_in_log_order(client: Any, app: Any, tokens: dict[str, str],
                                                           times: str) -> None:
    create(client, tokens, "season", params={"drift": 0.05}, smoothing=True)
    records = team_records(30, seed=5, times=times)
    report(client, tokens, "season", records)
    assert smoothing.smooth_league(app.state.engine, "season").computed
    untimed = [podium.Match(r["teams"], r["ranks"], id=r["id"]) for r in records]
    want = podium.TrueSkillThroughTime(mu=0.0, sigma=25.0 / 3.0, beta=25.0 / 6.0, gamma=0.05).smooth(untimed).ratings()
    got = {r["player"]: r for r in smoothed_rows(client, "season")["rows"]}
    assert set(got) == set(want)
    assert all(abs(got[p]["mu"] - (w.mu + 25.0)) <= TOL and abs(got[p]["sigma"] - w.sigma) <= TOL
               for p, w in want.items())


def test_the_mapping_is_the_leagues_model() -> None:
    """The smoother's first pass (no sweep) with the server's mapping rates a history as the league's own TrueSkill
    does without ``tau`` (the one parameter it leaves out): the same model, on the same scale, teams of unequal
    sizes included (where the origin matters)."""
    records = team_records(50, seed=11)
    for params in ({"beta": 4.0, "drift": 0.05}, {"center": False, "mu": 3.0, "drift": 0.1},
                   {"newcomer": 1.5, "drift": 0.02, "draw_probability": 0.2}):
        league_model = podium.TrueSkill(**params)
        mapped = smoothing.smoother("trueskill", league_model)
        first = mapped.model.smooth([to_match(r) for r in records], max_iterations=0)
        # (the smoother's inner expectation propagation stops at its own tolerance: the live model's here)
        inner = {"tolerance": mapped.model.filter.tolerance, "max_iterations": mapped.model.filter.max_iterations}
        live = podium.League(podium.TrueSkill(**{**params, "tau": 0.0, **inner})).record_many(
            [to_match(r) for r in records])
        worst = max(abs(first.trajectory(p).mu[-1] + mapped.origin - live.rating(p).mu) for p in live.players)
        assert worst < 1e-9, (params, worst)


def test_smoothing_does_nothing_when_the_log_has_not_changed(app: Any, client: Any, tokens: dict[str, str]) -> None:
    create(client, tokens, "season", smoothing=True)
    assert smoothing.smooth_league(app.state.engine, "season").status == "empty"
    report(client, tokens, "season", team_records(10, seed=2))
    ticks = iter([1000.0, 2000.0])  # (a run that finds nothing to do records no time)
    first = smoothing.smooth_league(app.state.engine, "season", clock=lambda: next(ticks))
    assert first.status == "smoothed"
    before = stored(app.state.engine, "season")
    assert {row[6] for row in before.values()} == {1000.0}  # computed
    again = smoothing.smooth_league(app.state.engine, "season", clock=lambda: next(ticks))
    assert again.status == "unchanged" and stored(app.state.engine, "season") == before
    forced = smoothing.smooth_league(app.state.engine, "season", force=True, clock=lambda: next(ticks))
    assert forced.status == "smoothed" and {row[6] for row in stored(app.state.engine, "season").values()} == {2000.0}


# -- the scheduler ----------------------------------------------------------------------------------------------
@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Each league's calls of smooth_league by the scheduler."""
    calls: dict[str, int] = {}
    original = smoothing.smooth_league

    def counting(engine: Any, name: str, **kwargs: Any) -> Any:
        calls[name] = calls.get(name, 0) + 1
        return original(engine, name, **kwargs)

    monkeypatch.setattr(smoothing, "smooth_league", counting)
    return calls


def test_a_tick_smooths_each_changed_league_once(client: Any, app: Any, tokens: dict[str, str],
                                                 counted: dict[str, int]) -> None:
    for name in ("one", "two"):
        create(client, tokens, name, smoothing=True)
    create(client, tokens, "live-only")
    create(client, tokens, "empty", smoothing=True)
    for name, seed in (("one", 1), ("two", 2), ("live-only", 3)):
        report(client, tokens, name, team_records(12, seed=seed, prefix=name))
    scheduler = smoothing.Scheduler(app.state.engine, DAY)
    t0 = 1_000_000.0
    assert scheduler.tick(now=t0) == ["one", "two"]
    assert counted == {"one": 1, "two": 1}
    first = {name: stored(app.state.engine, name) for name in ("one", "two", "live-only", "empty")}
    assert len(first["one"]) > 0 and len(first["two"]) > 0 and first["live-only"] == {} and first["empty"] == {}
    # a new match in "one": not within the interval of its last claim (another process may have it) ...
    report(client, tokens, "one", [{"id": "late", "teams": [["p00"], ["late-comer"]]}])
    assert smoothed_rows(client, "one")["up_to_date"] is False
    assert scheduler.tick(now=t0 + 0.5 * DAY) == [] and counted == {"one": 1, "two": 1}
    # ... but at the next interval's tick, which recomputes it (and only it)
    assert scheduler.tick(now=t0 + DAY) == ["one"]
    assert counted == {"one": 2, "two": 1}
    now = smoothed_rows(client, "one")
    assert now["up_to_date"] is True and now["matches"] == 13 and "late-comer" in {r["player"] for r in now["rows"]}
    assert stored(app.state.engine, "two") == first["two"]
    # an interval later, no new match anywhere: nothing is computed, nothing written
    before = {name: stored(app.state.engine, name) for name in first}
    assert scheduler.tick(now=t0 + 2 * DAY) == []
    assert counted == {"one": 2, "two": 1}
    assert {name: stored(app.state.engine, name) for name in first} == before


def test_one_claim_per_interval(client: Any, app: Any, tokens: dict[str, str]) -> None:
    create(client, tokens, "one", smoothing=True)
    create(client, tokens, "off")
    with app.state.engine.connect() as conn:
        ids = dict(conn.execute(select(db.leagues.c.name, db.leagues.c.id)).all())
    engine = app.state.engine
    t0 = 5_000_000.0
    assert smoothing.claim(engine, ids["one"], t0, DAY)
    assert not smoothing.claim(engine, ids["one"], t0, DAY)
    assert not smoothing.claim(engine, ids["one"], t0 + 0.5 * DAY, DAY)
    assert smoothing.claim(engine, ids["one"], t0 + DAY, DAY)
    assert not smoothing.claim(engine, ids["off"], t0, DAY)  # the option off: nobody computes it


def test_errors_in_one_league_leave_the_others(client: Any, app: Any, tokens: dict[str, str],
                                               monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    for name in ("bad", "good"):
        create(client, tokens, name, smoothing=True)
        report(client, tokens, name, team_records(8, seed=4, prefix=name))
    original = smoothing.smooth_league

    def failing(engine: Any, name: str, **kwargs: Any) -> Any:
        if name == "bad":
            raise RuntimeError("a bug in the smoother")
        return original(engine, name, **kwargs)

    monkeypatch.setattr(smoothing, "smooth_league", failing)
    scheduler = smoothing.Scheduler(app.state.engine, DAY)
    with caplog.at_level(logging.ERROR, logger="podium.server.smoothing"):
        assert scheduler.tick(now=1e6) == ["good"]
    failed = [r for r in caplog.records if "'bad'" in r.getMessage()]
    assert failed and failed[0].exc_info is not None and "a bug in the smoother" in str(failed[0].exc_info[1])
    assert stored(app.state.engine, "bad") == {} and len(stored(app.state.engine, "good")) > 0
    # the failed league is tried again in the next interval
    monkeypatch.setattr(smoothing, "smooth_league", original)
    assert scheduler.tick(now=1e6 + DAY) == ["bad"]


def test_two_processes_ticking_at_once_compute_a_league_once(db_url: str, client: Any, app: Any,
                                                             tokens: dict[str, str], counted: dict[str, int],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    create(client, tokens, "one", smoothing=True)
    report(client, tokens, "one", team_records(10, seed=6))
    counting = smoothing.smooth_league

    def slow(engine: Any, name: str, **kwargs: Any) -> Any:
        time.sleep(0.5)  # long enough for the other process to find the log changed too
        return counting(engine, name, **kwargs)

    monkeypatch.setattr(smoothing, "smooth_league", slow)
    engines = [db.make_engine(database_url(db_url)) for _ in range(2)]
    try:
        schedulers = [smoothing.Scheduler(engine, DAY) for engine in engines]
        start = threading.Barrier(2)
        results: list[list[str]] = [[], []]

        def run(i: int) -> None:
            start.wait()
            results[i] = schedulers[i].tick(now=7e6)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert sorted(results[0] + results[1]) == ["one"] and counted == {"one": 1}
        # many claimants of one league at once, interval after interval: one winner each time
        with engines[0].connect() as conn:
            league_id = conn.execute(select(db.leagues.c.id).where(db.leagues.c.name == "one")).scalar_one()
        for round_ in range(1, 4):
            wins: list[bool] = []
            gate = threading.Barrier(4)

            def grab(engine: Any, when: float = 7e6 + round_ * DAY) -> None:
                gate.wait()
                wins.append(smoothing.claim(engine, league_id, when, DAY))

            claimants = [threading.Thread(target=grab, args=(engines[i % 2],)) for i in range(4)]
            for thread in claimants:
                thread.start()
            for thread in claimants:
                thread.join(60)
            assert sorted(wins) == [False, False, False, True], (round_, wins)
    finally:
        for engine in engines:
            engine.dispose()


def test_the_app_runs_the_scheduler_in_the_background(db_url: str) -> None:
    from fastapi.testclient import TestClient

    without = create_app(Settings(db=db_url, smoothing_interval=0))
    assert without.state.smoothing is None
    without.state.engine.dispose()
    application = create_app(Settings(db=db_url, token_rate=0, address_rate=0, smoothing_interval=0.2))
    try:
        scheduler = application.state.smoothing
        assert scheduler is not None and not scheduler.running
        tokens = {role: create_token(application.state.engine, role) for role in ("admin", "reporter")}
        with TestClient(application) as client:
            assert scheduler.running
            create(client, tokens, "bg", smoothing=True)
            report(client, tokens, "bg", team_records(6, seed=8))
            deadline = time.monotonic() + 60
            while client.get(f"{LEAGUES}/bg/smoothed").status_code != 200 and time.monotonic() < deadline:
                time.sleep(0.1)
            assert smoothed_rows(client, "bg")["matches"] == 6
        assert not scheduler.running  # stopped with the app
    finally:
        application.state.engine.dispose()


def test_the_interval_setting() -> None:
    from podium.server.app import settings_from_env

    assert Settings().smoothing_interval == 86_400
    assert settings_from_env({"PODIUM_SMOOTHING_INTERVAL": "3600"}).smoothing_interval == 3600.0
    assert settings_from_env({"PODIUM_SMOOTHING_INTERVAL": "0"}).smoothing_interval == 0.0
    for bad in (-1.0, math.nan, math.inf, True, "1"):
        with pytest.raises(ValueError, match="'smoothing_interval'.*Got"):
            Settings(smoothing_interval=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="PODIUM_SMOOTHING_INTERVAL"):
        settings_from_env({"PODIUM_SMOOTHING_INTERVAL": "nightly"})


# -- reading ------------------------------------------------------------------------------------------------------
def test_the_smoothed_leaderboard_and_its_404s(client: Any, app: Any, tokens: dict[str, str]) -> None:
    missing = client.get(f"{LEAGUES}/nope/smoothed")
    assert missing.status_code == 404 and missing.json()["field"] == "league"
    create(client, tokens, "live")
    report(client, tokens, "live", team_records(5, seed=9))
    off = client.get(f"{LEAGUES}/live/smoothed")
    assert off.status_code == 404 and off.json()["field"] == "smoothing" and "off" in off.json()["detail"]
    create(client, tokens, "season", smoothing=True)
    empty = client.get(f"{LEAGUES}/season/smoothed")
    assert empty.status_code == 404 and empty.json()["field"] == "smoothed" and "yet" in empty.json()["detail"]
    assert "podium league smooth season" in empty.json()["detail"]
    report(client, tokens, "season", team_records(20, seed=10))
    assert client.get(f"{LEAGUES}/season/smoothed").status_code == 404  # not computed yet
    smoothing.smooth_league(app.state.engine, "season")
    board = smoothed_rows(client, "season")
    assert board["league"] == "season" and board["matches"] == 20 and board["up_to_date"] is True
    assert board["computed"] is not None and board["computed"][:4].isdigit()
    scores = [r["score"] for r in board["rows"]]
    assert scores == sorted(scores, reverse=True) and [r["rank"] for r in board["rows"]] == list(range(1, 15))
    assert all(abs(r["score"] - (r["mu"] - 3 * r["sigma"])) <= 1e-12 for r in board["rows"])
    # by mu (k=0), a page of it
    by_mu = smoothed_rows(client, "season", k=0, limit=3, offset=2)
    everyone = sorted(board["rows"], key=lambda r: (-r["mu"], r["player"]))
    assert [r["player"] for r in by_mu["rows"]] == [r["player"] for r in everyone[2:5]]
    assert [r["rank"] for r in by_mu["rows"]] == [3, 4, 5] and by_mu["total"] == 14
    bad = client.get(f"{LEAGUES}/season/smoothed", params={"k": -1})
    assert bad.status_code == 422 and bad.json()["field"] == "k"
    # turned off: 404 again, and the stored ratings are gone
    client.patch(f"{LEAGUES}/season", json={"smoothing": False}, headers=auth(tokens["admin"]))
    gone = client.get(f"{LEAGUES}/season/smoothed")
    assert gone.status_code == 404 and gone.json()["field"] == "smoothing"


def test_the_league_page_shows_the_smoothed_rating(client: Any, app: Any, tokens: dict[str, str]) -> None:
    create(client, tokens, "season", smoothing=True)
    report(client, tokens, "season", team_records(20, seed=12))
    page = client.get("/leagues/season").text
    assert "smoothed-note" not in page and 'class="num smoothed"' not in page  # nothing computed yet
    smoothing.smooth_league(app.state.engine, "season")
    page = client.get("/leagues/season").text
    assert 'id="smoothed-note"' in page and "from 20 matches" in page
    assert page.count('<td class="num smoothed">') == 14
    top = smoothed_rows(client, "season", k=3)["rows"]
    for row in top:
        assert f"{row['score']:,.2f}" in page
    by_mu = client.get("/leagues/season", params={"by": "mu"}).text
    assert all(f"{row['mu']:,.2f}" in by_mu for row in top)
    report(client, tokens, "season", [{"id": "x", "teams": [["p00"], ["p01"]]}])
    assert "the log has changed since" in client.get("/leagues/season").text
    # a league without the option: no column
    create(client, tokens, "live")
    report(client, tokens, "live", team_records(3, seed=13))
    assert "smoothed" not in client.get("/leagues/live").text.lower()


def test_export_and_import_keep_the_option(client: Any, app: Any, tokens: dict[str, str], tmp_path: Path) -> None:
    from podium.server.backup import BackupError, export_league, import_league

    create(client, tokens, "season", smoothing=True)
    report(client, tokens, "season", team_records(5, seed=14))
    export_league(app.state.engine, "season", tmp_path / "season.jsonl")
    import_league(app.state.engine, tmp_path / "season.jsonl", name="copy")
    assert client.get(f"{LEAGUES}/copy").json()["smoothing"] is True
    lines = (tmp_path / "season.jsonl").read_text().splitlines()
    lines[0] = lines[0].replace('"model": "trueskill"', '"model": "elo"').replace('"params": {', '"params": {"k": 20}, "x": {')
    (tmp_path / "bad.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(BackupError, match="smoothing.*'elo'"):
        import_league(app.state.engine, tmp_path / "bad.jsonl", name="bad")


# -- the command line ---------------------------------------------------------------------------------------------
runner = CliRunner()


def invoke(*args: str) -> Any:
    from podium.cli import app as cli

    return runner.invoke(cli, list(args))


def test_the_commands(db_url: str, client: Any, app: Any, tokens: dict[str, str], cli_engines: None,
                      monkeypatch: pytest.MonkeyPatch) -> None:
    import contextlib

    import podium.cli.server as commands

    created = invoke("league", "create", "cron", "--model", "trueskill:drift=0.05", "--smoothing", "--db", db_url)
    assert created.exit_code == 0 and "smoothing" in created.output, created.output
    assert client.get(f"{LEAGUES}/cron").json()["smoothing"] is True
    refused = invoke("league", "create", "elo", "--model", "elo", "--smoothing", "--db", db_url)
    assert refused.exit_code == 1 and "'smoothing'" in refused.output and "'elo'" in refused.output, refused.output
    assert "Traceback" not in refused.output and client.get(f"{LEAGUES}/elo").status_code == 404
    assert invoke("league", "create", "live", "--model", "elo", "--db", db_url).exit_code == 0
    refused = invoke("league", "set", "live", "--smoothing", "--db", db_url)
    assert refused.exit_code == 1 and "'smoothing'" in refused.output and "'elo'" in refused.output
    assert invoke("league", "set", "live", "--db", db_url).exit_code != 0  # nothing to change
    # smooth now: off is an error; on, it computes, then has nothing to do until the log changes
    off = invoke("league", "smooth", "live", "--db", db_url)
    assert off.exit_code == 1 and "option is off" in off.output
    report(client, tokens, "cron", team_records(25, seed=15))
    seen: list[tuple[str, int, int | None]] = []
    monkeypatch.setattr(commands, "_backup_progress", lambda: (contextlib.nullcontext(), lambda *call: seen.append(call)))
    done = invoke("league", "smooth", "cron", "--db", db_url)
    assert done.exit_code == 0 and "smoothed: 25 matches, 14 players" in done.output, done.output
    assert ("log", 25, 25) in seen and ("smooth", 0, None) in seen and seen[-1] == ("smooth", 1, 1)
    want = podium.TrueSkillThroughTime(mu=0.0, sigma=25 / 3, beta=25 / 6, gamma=0.05).smooth(
        [to_match(r) for r in team_records(25, seed=15)]).ratings()
    got = {r["player"]: r for r in smoothed_rows(client, "cron")["rows"]}
    assert all(abs(got[p]["mu"] - (w.mu + 25.0)) <= TOL for p, w in want.items()) and set(got) == set(want)
    again = invoke("league", "smooth", "cron", "--db", db_url)
    assert again.exit_code == 0 and "nothing to do" in again.output
    forced = invoke("league", "smooth", "cron", "--force", "--db", db_url)
    assert forced.exit_code == 0 and "smoothed: 25 matches" in forced.output
    unknown = invoke("league", "smooth", "nope", "--db", db_url)
    assert unknown.exit_code == 1 and "No league called 'nope'" in unknown.output
    # set: off, then on again
    assert invoke("league", "set", "cron", "--no-smoothing", "--db", db_url).exit_code == 0
    assert client.get(f"{LEAGUES}/cron/smoothed").json()["field"] == "smoothing"
    turned = invoke("league", "set", "cron", "--smoothing", "--db", db_url)
    assert turned.exit_code == 0 and "smoothing on" in turned.output
    assert client.get(f"{LEAGUES}/cron").json()["smoothing"] is True


# -- the migration --------------------------------------------------------------------------------------------------
@pytest.mark.stored_ratings_differ  # (its rows are written straight into the tables of an old revision)
def test_a_database_from_migration_0002_gains_the_option_off(db_url: str) -> None:
    from podium.server.store import get_league

    engine = db.make_engine(database_url(db_url))
    try:
        upgrade_to(engine, "0002")
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO leagues (name, model, params, moderated, created) "
                              "VALUES ('old', 'trueskill', '{}', true, 12.5)"))
            league_id = conn.execute(text("SELECT id FROM leagues")).scalar_one()
            conn.execute(text("INSERT INTO ratings (league_id, player, mu, sigma, games, last_time) "
                              f"VALUES ({league_id}, 'ann', 27.5, 6.0, 3, NULL)"))
            assert "smoothing" not in [c for c in conn.execute(text("SELECT * FROM leagues")).keys()]
        db.migrate(engine)
        with engine.connect() as conn:
            row = conn.execute(select(db.leagues)).one()
            assert (row.name, row.model, bool(row.moderated), row.created) == ("old", "trueskill", True, 12.5)
            assert row.smoothing is False and row.smoothing_started is None
            assert conn.execute(select(db.ratings.c.player, db.ratings.c.mu)).all() == [("ann", 27.5)]
            assert conn.execute(select(db.smoothed)).all() == []
            assert get_league(conn, "old").smoothing is False
            version = conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one()
        assert version == "0004"  # (head)
        # the upgraded league may turn the option on and smooth
        assert smoothing.set_smoothing(engine, "old", True).smoothing is True
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO matches (league_id, match_id, seq, status, record, reported) VALUES "
                              f"({league_id}, 'a', 0, 'recorded', '{{\"teams\":[[\"ann\"],[\"bob\"]]}}', 0)"))
        assert smoothing.smooth_league(engine, "old").computed
    finally:
        engine.dispose()
