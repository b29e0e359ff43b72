"""Crash safety: SIGKILL a real server process in the middle of a stream of reports, restart, check.

One ``podium serve`` process (a single uvicorn worker: the process started is the server itself) gets a
stream of reports from 4 concurrent clients (10 % of them re-sent on purpose).  When the ``kill_after``-th
acknowledgement arrives, a killer thread sends one more report (the "sentinel") whose answer it never reads,
waits until the sentinel is committed (polling the database), waits a few milliseconds more and sends SIGKILL
to the server process: the other clients' reports are in flight at that moment, some inside their write
transaction, some committed but not yet answered.  Then a new server process is started on the same database
and:

* every acknowledged report is stored, recorded, with the content sent, at the seq its answer named,
  with a history row for each of its players and a rating for each;
* every unacknowledged report that was sent is either fully present (as above) or fully absent -- the
  sentinel, committed but never answered, is present; one that was never sent is absent; nothing else is
  stored, no row is left pending;
* the stored ratings equal an offline replay of the log, and ``rebuild(engine, NAME, write=False)`` finds
  no difference.

Three kills on the same database (after 20, 57 and 133 acknowledgements of a stream, then 0, 3 and 7 ms
after the sentinel's commit), each stream starting
with the previous one's unacknowledged reports (the clients retrying after the restart).  At the end every
report that was put in a stream is re-sent once more: all are recorded exactly once (201 for the absent,
200 for the present), the log replays exactly, and ``podium league rebuild NAME --db URL`` (``--check``, then
without) exits 0.  On SQLite and on PostgreSQL.
"""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from sqlalchemy import text

from .conftest import load_loadlib

loadlib = load_loadlib()

LEAGUE = "crash"
KILL_AFTER = (20, 57, 133)
KILL_DELAY = (0.0, 0.003, 0.007)  # seconds after the sentinel is committed
CLIENTS = 4


def _rebuild_cli(db: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(loadlib.podium_command() + ["league", "rebuild", LEAGUE, "--db", db, *extra],
                          capture_output=True, text=True, timeout=300, env=dict(os.environ, COLUMNS="200"))


def _kill(server: Any, db: str, token: str, sentinel: Any, delay: float) -> None:
    """Send ``sentinel`` without ever reading its answer, wait until it is committed, wait ``delay`` more
    (the other clients' reports are in flight meanwhile), then SIGKILL the server process."""
    conn = http.client.HTTPConnection(loadlib.HOST, server.port, timeout=30)
    engine = loadlib.engine_for(db)
    try:
        conn.request("POST", loadlib.REPORT_PATH.format(league=LEAGUE), sentinel.body,
                     {"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        deadline = time.monotonic() + 20
        query = text("SELECT status FROM matches WHERE match_id = :m")
        while time.monotonic() < deadline:  # (if it never comes, the check after the restart says so)
            with engine.connect() as db_conn:
                if db_conn.execute(query, {"m": sentinel.id}).scalar() == "recorded":
                    break
            time.sleep(0.002)
        time.sleep(delay)
    finally:
        os.kill(server.pid, signal.SIGKILL)  # the uvicorn server process itself
        engine.dispose()
        conn.close()


def _check_after_restart(db: str, server: Any, sent: dict[str, Any], acked: dict[str, int],
                         attempted: set[str], context: str) -> None:
    """The database after a crash, seen directly and through the restarted ``server``."""
    stored = loadlib.inspect_database(db)[LEAGUE]
    rows = {m["match_id"]: m for m in stored.matches}
    problems = loadlib.integrity_problems({LEAGUE: stored})

    def complete(match_id: str) -> list[str]:
        row = rows[match_id]
        record = sent[match_id].record
        out = []
        if row["status"] != "recorded" or row["seq"] is None:
            out.append(f"{match_id} is {row['status']} (seq {row['seq']})")
            return out
        if row["record"] != record:
            out.append(f"{match_id} stored as {row['record']}, sent {record}")
        for player in sent[match_id].players:
            if (player, row["seq"]) not in stored.history:
                out.append(f"{match_id}: no history row for {player} at seq {row['seq']}")
            if player not in stored.ratings:
                out.append(f"{match_id}: no rating for {player}")
        return out

    for match_id, seq in acked.items():
        if match_id not in rows:
            problems.append(f"acknowledged {match_id} (seq {seq}) is missing")
            continue
        problems += [f"acknowledged {p}" for p in complete(match_id)]
        if rows[match_id]["seq"] != seq:
            problems.append(f"acknowledged {match_id} answered seq {seq}, stored at {rows[match_id]['seq']}")
    for match_id in sorted(set(sent) - set(acked)):
        if match_id in rows:  # present: then fully (half-present is what must never be seen)
            problems += [f"unacknowledged {p}" for p in complete(match_id)]
            if match_id not in attempted:
                problems.append(f"{match_id} was never sent but is stored")
    problems += [f"{m} is stored but was never reported" for m in sorted(set(rows) - set(sent))]
    replay, _ = loadlib.replay_problems({LEAGUE: stored})
    problems += replay
    # Through the restarted server: every acknowledged match is there, recorded.
    for match_id in sorted(acked):
        answer = loadlib.get_json(server.port, f"/api/v1/leagues/{LEAGUE}/matches/{match_id}")
        if answer["status"] != "recorded" or answer["seq"] != acked[match_id]:
            problems.append(f"GET {match_id}: {answer['status']} seq {answer['seq']}, acknowledged seq {acked[match_id]}")
    board = loadlib.get_json(server.port, f"/api/v1/leagues/{LEAGUE}/leaderboard?limit=1000")
    recorded = sum(m["status"] == "recorded" for m in stored.matches)
    if board["matches"] != recorded:
        problems.append(f"the leaderboard counts {board['matches']} matches; {recorded} are recorded")
    problems += loadlib.rebuild_problems(db, [LEAGUE])  # store.rebuild(write=False): no difference
    assert not problems, f"{context}:\n" + "\n".join(problems[:40]) + "\n" + server.tail()


def test_sigkill_mid_stream_keeps_every_acknowledged_report_and_no_half_report(
        db_url: str, tmp_path: Path, processes: list[Any]) -> None:
    db = db_url
    token = loadlib.prepare_database(db, {LEAGUE: "trueskill"})
    workload = loadlib.make_workload(sum(KILL_AFTER) + 3 * 61, [LEAGUE], players=30, seed=11, prefix="c")
    sent = {r.id: r for r in workload}
    acked: dict[str, int] = {}
    attempted: set[str] = set()
    retry: list[Any] = []  # the previous stream's unacknowledged reports, re-sent first
    fresh = iter(workload)
    streamed: list[Any] = []  # every report put in a stream, once
    server = loadlib.Server(db, tmp_path / "server0.log").start()
    processes.append(server)
    server.wait_ready()

    for cycle, (kill_after, delay) in enumerate(zip(KILL_AFTER, KILL_DELAY)):
        sentinel = next(fresh)
        new = [next(fresh) for _ in range(kill_after + 60)]  # enough to be still streaming at the kill
        streamed += [sentinel] + new
        stream = retry + new
        count = 0
        lock = threading.Lock()
        killer = threading.Thread(target=_kill, args=(server, db, token, sentinel, delay), daemon=True)

        def on_ack(report: Any) -> None:
            nonlocal count
            with lock:
                count += 1
                if count == kill_after:
                    killer.start()

        outcome = loadlib.run_clients([server.port], token, stream, CLIENTS, resend=0.1, seed=cycle,
                                      on_ack=on_ack, stop_on_error=True)
        context = f"cycle {cycle}: SIGKILL after {kill_after} acknowledgements + {delay * 1e3:.0f} ms ({db})"
        assert killer.ident is not None, f"{context}: the stream ended before the kill ({outcome.accepted} answers)"
        killer.join(60)
        assert server.proc.wait(30) == -signal.SIGKILL, f"{context}: {server.proc.returncode}\n{server.tail()}"
        assert not server.answers(), f"{context}: something still answers on port {server.port}"
        assert not outcome.failures and not outcome.seq_conflicts, outcome.failures + outcome.seq_conflicts
        assert outcome.unacked, f"{context}: nothing was left unacknowledged"
        assert outcome.connection_errors > 0, f"{context}: no request was cut off by the kill"
        for match_id, seq in outcome.acked.items():
            assert acked.setdefault(match_id, seq) == seq, f"{context}: {match_id} acknowledged twice, seq {seq}"
        attempted |= outcome.attempted | {sentinel.id}

        server = loadlib.Server(db, tmp_path / f"server{cycle + 1}.log").start()  # the restart
        processes.append(server)
        server.wait_ready()
        _check_after_restart(db, server, sent, acked, attempted, context)
        # The sentinel's answer was never read, but it was committed before the kill: it is all there.
        assert sentinel.id not in acked
        assert sentinel.id in {m["match_id"] for m in loadlib.inspect_database(db)[LEAGUE].matches}, context
        retry = [sentinel] + [sent[m] for m in outcome.unacked]

    # The clients retry what was never acknowledged (and, once more, everything they sent): each report is
    # then recorded exactly once -- 200 for those already stored, 201 for the others.
    present = {m["match_id"] for m in loadlib.inspect_database(db)[LEAGUE].matches}
    outcome = loadlib.run_clients([server.port], token, streamed, CLIENTS, resend=0.0, seed=99)
    assert not outcome.failures and not outcome.unacked, outcome.failures + outcome.unacked
    assert set(outcome.acked) == {r.id for r in streamed}
    assert outcome.created == len(streamed) - len(present), (outcome.created, len(streamed), len(present))
    for match_id, seq in acked.items():
        assert outcome.acked[match_id] == seq, f"{match_id}: acknowledged at seq {seq}, now at {outcome.acked[match_id]}"
    problems, info = loadlib.load_problems(db, streamed, outcome, server.port)
    assert not problems, "\n".join(problems[:40]) + "\n" + server.tail()
    assert info["recorded"] == len(streamed)
    for extra in (["--check"], []):
        result = _rebuild_cli(db, *extra)
        assert result.returncode == 0, f"podium league rebuild {extra}:\n{result.stdout}\n{result.stderr}"
        assert "every stored rating agrees" in result.stdout, result.stdout
    for process in processes:
        assert not process.unexpected_exceptions(), process.tail(80)
