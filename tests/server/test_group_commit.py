"""Group commit: concurrent reports to one league are written a batch per transaction.

``store.record_reports`` is checked against the one-report-at-a-time answers (the same statuses, the same
refusals, ratings equal to an offline replay to 1e-9), with everything a batch can hold at once: new
matches, a retry of a stored match, a retry of a match earlier in the same batch, an id reused for a
different match, unknown and revoked tokens and a token without the reporter role.  The server's
``_GroupCommit`` is checked to put the reports that arrive while a batch is written into the next batch, and
to confine an unexpected failure to the report that causes it.  On SQLite and PostgreSQL.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from sqlalchemy import update

import podium
from podium.server import store
from podium.server.app import _GroupCommit
from podium.server.db import make_engine, migrate, read_transaction, tokens as tokens_table, write_transaction
from podium.server.settings import database_url

TOL = 1e-9


@pytest.fixture
def engine(db_url: str) -> Any:
    engine = make_engine(database_url(db_url))
    migrate(engine)
    yield engine
    engine.dispose()


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

    async def go() -> list[Any]:
        writer = _GroupCommit(engine, league)
        return await asyncio.gather(*(writer.submit(store.prepare_report(league, r, reporter, 1000))
                                      for r in records))

    answers = _run(go())
    # The first report is written alone (nothing else had arrived); the twelve that queued behind it meanwhile
    # are written together.
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

    async def go() -> list[Any]:
        writer = _GroupCommit(engine, league)
        return await asyncio.gather(*(writer.submit(store.prepare_report(league, r, reporter, 1000))
                                      for r in records), return_exceptions=True)

    answers = _run(go())
    assert calls == [["a0"], ["a1", "bad", "a2"], ["a1"], ["bad"], ["a2"]]
    assert isinstance(answers[2], RuntimeError)
    assert [answers[i][0] for i in (0, 1, 3)] == [201, 201, 201]
    with read_transaction(engine) as conn:
        assert store.leaderboard(conn, league, k=0.0, by="mu", limit=0, offset=0, min_games=0)["matches"] == 3
