"""Group commit: concurrent reports to one league are written a batch per transaction.

``store.record_reports`` is checked against the one-report-at-a-time answers (the same statuses, the same
refusals, ratings equal to an offline replay to 1e-9), with everything a batch can hold at once: new
matches, a retry of a stored match, a retry of a match earlier in the same batch, an id reused for a
different match, unknown and revoked tokens and a token without the reporter role.  The server's
``_GroupCommit`` is checked to put the reports that arrive while a batch is written into the next batch, to
confine an unexpected failure to the report that causes it, to answer the rest of a batch whose first request
was cancelled, never to write a committed batch twice, to fail a batch on a busy database at once (not report
by report), and to queue SQLite writers behind podium's writer ahead without a time limit.  On SQLite and
PostgreSQL (the SQLite-only cases say so).
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select, update
from sqlalchemy.exc import OperationalError, TimeoutError as PoolTimeout

import podium
from podium.server import store
from podium.server.app import _GroupCommit
from podium.server.db import (make_engine, matches as matches_table, migrate, read_transaction, tokens as tokens_table,
                              write_transaction)
from podium.server.settings import database_url

from .conftest import auth

TOL = 1e-9




def _league(engine: Any, name: str = "g", moderated: bool = False) -> store.LeagueInfo:
    return store.create_league(engine, name, "trueskill", {}, moderated)


def _offline(records: list[dict[str, Any]]) -> podium.League:
    league = podium.League(podium.TrueSkill())
    for r in records:
        league.record(podium.Match(r["teams"], r.get("ranks")))
    return league


def test_a_batch_answers_like_one_report_at_a_time(engine: Any) -> None:
    league = _league(engine)
    reporter = store.create_token(engine, "reporter")
    moderator = store.create_token(engine, "moderator")
    revoked = store.create_token(engine, "reporter", "revoked-one")
    with write_transaction(engine) as conn:
        conn.execute(update(tokens_table).values(revoked=True).where(tokens_table.c.label == "revoked-one"))
    first = {"id": "m1", "teams": [["a"], ["b"]], "ranks": [0, 1]}
    store.report_match(engine, league, first, reporter, 1000)  # stored before the batch

    records = [
        {"id": "m2", "teams": [["a", "c"], ["b", "d"]], "ranks": [1, 0]},   # 0: new
        first,                                                              # 1: retry of a stored match
        {"id": "m3", "teams": [["c"], ["d"], ["e"]], "ranks": [0, 0, 1]},   # 2: new
        {"id": "m2", "teams": [["a", "c"], ["b", "d"]], "ranks": [1, 0]},   # 3: retry of 0, in this batch
        {"id": "m2", "teams": [["a"], ["d"]], "ranks": [0, 1]},             # 4: m2's id, another match
        {"id": "m1", "teams": [["a"], ["b"]], "ranks": [1, 0]},             # 5: m1's id, another result
        {"id": "m4", "teams": [["e"], ["a"]], "ranks": [0, 1]},             # 6: unknown token
        {"id": "m5", "teams": [["e"], ["a"]], "ranks": [0, 1]},             # 7: revoked token
        {"teams": [["b"], ["e"]], "ranks": [None, 0]},                      # 8: new, no id, moderator's token
        {"id": "m6", "teams": [["d"], ["a"]], "ranks": [0, 1]},             # 9: new, a verified TokenInfo
    ]
    with read_transaction(engine) as conn:
        verified = store.find_token(conn, reporter)
    assert verified is not None
    tokens: list[Any] = [reporter] * 6 + ["pod_unknown", revoked, moderator, verified]
    batch = [store.prepare_report(league, r, t, 1000) for r, t in zip(records, tokens)]
    results = store.record_reports(engine, league, batch)

    statuses = [r.status if isinstance(r, store.StoreError) else r[0] for r in results]
    assert statuses == [201, 200, 201, 200, 409, 409, 401, 401, 201, 201]
    fields = {i: r.field for i, r in enumerate(results) if isinstance(r, store.StoreError)}
    assert fields == {4: "id", 5: "id", 6: "authorization", 7: "authorization"}
    answers = {i: r[1] for i, r in enumerate(results) if not isinstance(r, store.StoreError)}
    assert [answers[i]["seq"] for i in (0, 2, 8, 9)] == [1, 2, 3, 4]  # in the batch's order, after m1 (seq 0)
    assert answers[3] == answers[0]
    assert answers[1]["seq"] == 0 and answers[1]["id"] == "m1"

    # The stored log and ratings are what reporting one at a time gives.
    recorded = [first, records[0], records[2], records[8], records[9]]
    replay = _offline(recorded)
    with read_transaction(engine) as conn:
        board = store.leaderboard(conn, league, k=0.0, by="mu", limit=100, offset=0, min_games=0)
        assert board["matches"] == 5
        for row in board["rows"]:
            want = replay.rating(row["player"])
            assert abs(row["mu"] - want.mu) <= TOL and abs(row["sigma"] - want.sigma) <= TOL, row
        for i in (0, 2, 8, 9):  # the answers' before/after are the stored history
            assert store.get_match(conn, league, answers[i]["id"])["ratings"] == answers[i]["ratings"]
    assert store.rebuild(engine, "g", write=False)[1] == []

    # A batch that only refuses writes nothing.
    before = store.record_reports(engine, league, [store.prepare_report(league, records[4], reporter, 1000)])
    assert isinstance(before[0], store.StoreError) and before[0].status == 409
    with read_transaction(engine) as conn:
        assert store.leaderboard(conn, league, k=0.0, by="mu", limit=0, offset=0, min_games=0)["matches"] == 5


def test_a_moderated_batch_waits_for_approval(engine: Any) -> None:
    league = _league(engine, "mod", moderated=True)
    reporter = store.create_token(engine, "reporter")
    batch = [store.prepare_report(league, {"id": f"p{i}", "teams": [["a"], [f"b{i}"]]}, reporter, 1000)
             for i in range(3)]
    results = store.record_reports(engine, league, batch + batch[:1])
    assert [r[0] for r in results] == [202, 202, 202, 200]  # type: ignore[index]
    assert all(r[1]["status"] == "pending" and r[1]["seq"] is None for r in results)  # type: ignore[index]


def _run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def _first_then_the_rest(engine: Any, league: store.LeagueInfo, reporter: str, records: list[dict[str, Any]],
                         batches: list[Any]) -> list[Any]:
    """Submit ``records[0]``; once its batch is being written (``batches``, filled by a spy on
    ``record_reports``, is not empty), submit the rest at once.  The answers (or exceptions), in order."""

    async def go() -> list[Any]:
        writer = _GroupCommit(engine, league)
        first = asyncio.create_task(writer.submit(store.prepare_report(league, records[0], reporter, 1000)))
        while not batches:
            await asyncio.sleep(0.001)
        rest = await asyncio.gather(*(writer.submit(store.prepare_report(league, r, reporter, 1000))
                                      for r in records[1:]), return_exceptions=True)
        return [await first, *rest]

    return _run(go())


def test_reports_that_arrive_during_a_write_go_in_the_next_batch(engine: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    league = _league(engine)
    reporter = store.create_token(engine, "reporter")
    sizes: list[int] = []
    real = store.record_reports

    def spy(engine_: Any, league_: Any, reports: Any) -> Any:
        sizes.append(len(reports))
        return real(engine_, league_, reports)

    monkeypatch.setattr(store, "record_reports", spy)
    records = [{"id": f"r{i}", "teams": [[f"p{i % 7}"], [f"p{(i + 3) % 7}"]], "ranks": [0, 1]} for i in range(12)]
    records.append(records[5])  # a retry while the first copy waits in the same batch

    answers = _first_then_the_rest(engine, league, reporter, records, sizes)
    # The first report is written alone (nothing else had arrived); the twelve that arrived meanwhile are
    # written together.
    assert sizes == [1, 12]
    assert [a[0] for a in answers] == [201] * 12 + [200]
    assert [a[1]["seq"] for a in answers[:12]] == list(range(12))
    assert answers[12][1] == answers[5][1]
    replay = _offline(records[:12])
    with read_transaction(engine) as conn:
        for name, rating in replay.ratings.items():
            got = store.player_page(conn, league, name, k=0.0)["rating"]
            assert abs(got["mu"] - rating.mu) <= TOL and abs(got["sigma"] - rating.sigma) <= TOL


def test_a_failing_batch_is_retried_report_by_report(engine: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    league = _league(engine)
    reporter = store.create_token(engine, "reporter")
    real = store.record_reports
    calls: list[list[str]] = []

    def flaky(engine_: Any, league_: Any, reports: Any) -> Any:
        calls.append([r.match.id for r in reports])
        if any(r.match.id == "bad" for r in reports):
            raise RuntimeError("boom")
        return real(engine_, league_, reports)

    monkeypatch.setattr(store, "record_reports", flaky)
    ids = ["a0", "a1", "bad", "a2"]
    records = [{"id": i, "teams": [[f"x{i}"], ["y"]]} for i in ids]

    answers = _first_then_the_rest(engine, league, reporter, records, calls)
    assert calls == [["a0"], ["a1", "bad", "a2"], ["a1"], ["bad"], ["a2"]]
    assert isinstance(answers[2], RuntimeError)
    assert [answers[i][0] for i in (0, 1, 3)] == [201, 201, 201]
    with read_transaction(engine) as conn:
        assert store.leaderboard(conn, league, k=0.0, by="mu", limit=0, offset=0, min_games=0)["matches"] == 3


def _count(engine: Any, league: store.LeagueInfo) -> int:
    with read_transaction(engine) as conn:
        return int(conn.execute(select(func.count()).select_from(matches_table)
                                .where(matches_table.c.league_id == league.id)).scalar_one())


# -- a request cancelled while its batch is written leaves the rest of the batch their answers ---------------
def test_a_cancelled_batch_writer_does_not_strand_the_rest_of_its_batch(engine: Any, monkeypatch: pytest.MonkeyPatch
                                                                        ) -> None:
    """The request that holds the league's asyncio lock is cancelled (its client went away) while its batch is
    being written: the other requests of that batch must still get their answers."""
    league = _league(engine)
    reporter = store.create_token(engine, "reporter")
    real = store.record_reports
    writing_a = threading.Event()
    empty_batches: list[int] = []

    def slow(engine_: Any, league_: Any, reports: Any) -> Any:
        if not reports:
            empty_batches.append(1)
        if any(r.match.id == "a" for r in reports):
            writing_a.set()
        time.sleep(0.3)
        return real(engine_, league_, reports)

    monkeypatch.setattr(store, "record_reports", slow)

    def rep(match_id: str) -> store.Report:
        return store.prepare_report(league, {"id": match_id, "teams": [[f"x{match_id}"], ["y"]]}, reporter, 1000)

    async def go() -> Any:
        writer = _GroupCommit(engine, league)
        z = asyncio.create_task(writer.submit(rep("z")))  # holds the lock: a and b queue behind it
        await asyncio.sleep(0.05)
        a = asyncio.create_task(writer.submit(rep("a")))
        b = asyncio.create_task(writer.submit(rep("b")))
        await z
        while not writing_a.is_set():  # a now holds the lock and writes [a, b]
            await asyncio.sleep(0.01)
        a.cancel()  # a's client went away
        try:
            outcome = await asyncio.wait_for(b, 3)
        except asyncio.TimeoutError:
            outcome = "b never answered"
        await asyncio.sleep(0.5)  # let the worker threads finish
        return outcome

    outcome = asyncio.run(go())
    assert isinstance(outcome, tuple) and outcome[0] == 201, (
        f"{outcome!r}; meanwhile the lock holder wrote {len(empty_batches)} empty batches "
        f"(b's report was taken out of the queue by the cancelled writer: b loops on record_reports([]))")


# -- a committed batch is never written again -------------------------------------------------------------------
def test_a_failure_after_the_commit_does_not_write_the_batch_twice(engine: Any, monkeypatch: pytest.MonkeyPatch
                                                                    ) -> None:
    """record_reports commits, then reads the answers to retries of stored matches in a second transaction.
    If that read fails (a pool timeout, a dropped connection), the committed batch must not be written again
    (the match without an id would be stored twice, the new ones answered 200 "retry")."""
    league = _league(engine)
    reporter = store.create_token(engine, "reporter")
    stored = {"id": "m1", "teams": [["a"], ["b"]], "ranks": [0, 1]}
    store.report_match(engine, league, stored, reporter, 1000)
    real_read = store.read_transaction
    failures = [PoolTimeout("QueuePool limit of size 8 overflow 16 reached, connection timed out")]

    def flaky_read(engine_: Any) -> Any:
        if failures:
            raise failures.pop()
        return real_read(engine_)

    monkeypatch.setattr(store, "read_transaction", flaky_read)
    records = [
        {"id": "first", "teams": [["p"], ["q"]]},   # written alone (nothing else queued yet)
        stored,                                     # batch 2: a retry of a stored match (read after the commit)
        {"teams": [["c"], ["d"]]},                  # batch 2: new, no id
        {"id": "n1", "teams": [["e"], ["f"]]},      # batch 2: new
    ]

    async def go() -> list[Any]:
        writer = _GroupCommit(engine, league)
        return await asyncio.gather(*(writer.submit(store.prepare_report(league, r, reporter, 1000))
                                      for r in records), return_exceptions=True)

    answers = asyncio.run(go())
    statuses = [a.status if isinstance(a, store.StoreError) else a if isinstance(a, Exception) else a[0]
                for a in answers]
    # Written once; the retry whose answer could not be read back is asked to retry (503), and does get it.
    assert (_count(engine, league), statuses) == (4, [201, 503, 201, 201])
    assert answers[1].field == "database"
    assert store.report_match(engine, league, stored, reporter, 1000)[0] == 200


# -- SQLite: a database busy with another program fails a batch in one busy_timeout ------------------------------
@pytest.fixture
def sqlite_league(tmp_path: Path) -> Any:
    """A SQLite file with a TrueSkill league and a reporter token, whose engine waits 0.25 s when busy:
    ``(engine, path, league, reporter, busy_timeout)``."""
    path = tmp_path / "league.db"
    busy = 0.25
    engine = make_engine(database_url(str(path)), busy_timeout=busy)
    migrate(engine)
    yield engine, path, _league(engine), store.create_token(engine, "reporter"), busy
    engine.dispose()


def test_a_busy_sqlite_database_fails_a_batch_in_one_busy_timeout(sqlite_league: Any) -> None:
    """Another program holds SQLite's write lock: the batch fails once, after busy_timeout, and every report
    of it is refused (503 "busy; retry"); it is not retried report by report (the k-th report would wait
    k + 1 busy timeouts)."""
    engine, path, league, reporter, busy = sqlite_league
    other = sqlite3.connect(str(path), isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another program writing (it does not know podium's flock)
    try:
        async def go() -> tuple[list[Any], float]:
            writer = _GroupCommit(engine, league)
            start = time.monotonic()
            answers = await asyncio.gather(*(writer.submit(store.prepare_report(
                league, {"id": f"r{i}", "teams": [[f"p{i}"], ["q"]]}, reporter, 1000)) for i in range(8)),
                return_exceptions=True)
            return answers, time.monotonic() - start

        answers, elapsed = asyncio.run(go())
    finally:
        other.rollback()
        other.close()
    assert all(isinstance(a, OperationalError) for a in answers), answers
    assert elapsed < 4 * busy, f"8 reports refused as busy after {elapsed:.2f} s (busy_timeout {busy} s)"


# -- SQLite: podium's writers queue behind each other without a time limit, like PostgreSQL's lock -------------
def test_a_sqlite_writer_waits_for_the_podium_writer_ahead(sqlite_league: Any) -> None:
    """A podium writer holds the database (a long ``podium league rebuild``, another server process's batch):
    the report waits for it, longer than busy_timeout (which bounds only waits for other programs), then is
    written."""
    engine, path, league, reporter, busy = sqlite_league
    holding, release = threading.Event(), threading.Event()

    def long_writer() -> None:
        other = make_engine(database_url(str(path)), busy_timeout=busy)  # another podium process, say
        try:
            with write_transaction(other, league.id):
                holding.set()
                release.wait(10)
        finally:
            other.dispose()

    thread = threading.Thread(target=long_writer)
    thread.start()
    holding.wait(5)
    timer = threading.Timer(4 * busy, release.set)
    timer.start()
    start = time.monotonic()
    try:
        status = store.report_match(engine, league, {"id": "r", "teams": [["a"], ["b"]]}, reporter, 1000)[0]
        elapsed = time.monotonic() - start
    finally:
        release.set()
        timer.cancel()
        thread.join()
    assert status == 201
    assert elapsed >= 3.5 * busy, f"the report did not wait for the writer ahead ({elapsed:.2f} s)"


# -- HTTP: a report's token is checked in its write transaction ----------------------------------------------
def test_a_report_with_a_bad_token_stores_nothing(client: Any, tokens: dict[str, str]) -> None:
    """The token of a report is checked inside the transaction that would write it (one query fewer): a valid
    body with an unknown token is 401; an invalid one gets the body's 422 first (documented in app.py), and a
    request without a token is refused before its body is read."""
    created = client.post("/api/v1/leagues", json={"name": "open", "model": "elo"}, headers=auth(tokens["admin"]))
    assert created.status_code == 201, created.text
    good = {"id": "m", "teams": [["a"], ["b"]]}
    response = client.post("/api/v1/leagues/open/matches", json=good, headers=auth("pod_not_a_token"))
    assert (response.status_code, response.json()["field"]) == (401, "authorization"), response.text
    response = client.post("/api/v1/leagues/open/matches", json={"teams": [["a"]]}, headers=auth("pod_not_a_token"))
    assert (response.status_code, response.json()["field"]) == (422, "teams"), response.text
    response = client.post("/api/v1/leagues/open/matches", content=b"not json")
    assert (response.status_code, response.json()["field"]) == (401, "authorization"), response.text
    assert client.get("/api/v1/leagues/open").json()["matches"] == 0
    assert client.post("/api/v1/leagues/open/matches", json=good, headers=auth(tokens["reporter"])).status_code == 201
