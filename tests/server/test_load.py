"""The load test, small: several real server processes on one database, concurrent clients with retries.

The same machinery as ``benchmarks/load.py`` (``benchmarks/loadlib.py``), with 2 server processes and 4
clients x 30 matches over two leagues (TrueSkill and Plackett-Luce), on SQLite and on PostgreSQL.  Afterwards
every report is recorded exactly once with the content sent (retries -- including two copies in flight on
two servers at once -- recognized, not duplicated), every acknowledgement named the stored seq, the log's
seqs are 0..n-1 with a history row per player of each match, the leaderboard agrees, an offline replay of
the log equals the stored ratings to 1e-9 and ``rebuild`` finds no difference.  No timing is asserted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .conftest import load_loadlib

loadlib = load_loadlib()

SERVERS, CLIENTS, MATCHES = 2, 4, 30
LEAGUES = {"ts": "trueskill", "pl": "plackett-luce"}


def test_concurrent_reports_with_retries_are_recorded_once_and_replay_exactly(
        db_url: str, tmp_path: Path, processes: list[Any]) -> None:
    token = loadlib.prepare_database(db_url, LEAGUES)
    workload = loadlib.make_workload(CLIENTS * MATCHES, list(LEAGUES), players=40, seed=7, prefix="t")
    servers = loadlib.start_servers(db_url, SERVERS, tmp_path)
    processes.extend(servers)
    ports = [s.port for s in servers]

    outcome = loadlib.run_clients(ports, token, workload, CLIENTS, resend=0.3, seed=7)
    problems, info = loadlib.load_problems(db_url, workload, outcome, ports[1])
    logs = loadlib.tails(servers)

    assert not problems, "\n".join(problems[:40]) + "\n" + logs
    assert info["recorded"] == CLIENTS * MATCHES
    assert info["max_diff"] <= 1e-9
    # The retries happened and the servers recognized them: every deliberate re-send or error retry shows
    # up as a 200, never as a second 201.
    assert outcome.resends > 0 and outcome.repeated > 0, outcome
    assert outcome.created <= CLIENTS * MATCHES
    assert outcome.accepted == outcome.created + outcome.repeated
    assert set(outcome.acked) == {r.id for r in workload}
    assert not outcome.failures and not outcome.seq_conflicts, outcome.failures + outcome.seq_conflicts
    for server in servers:
        assert server.proc.poll() is None, f"a server exited:\n{server.tail()}"
        # Tracebacks of ClientDisconnect (a "dropped" re-send: the client hung up before the server read
        # the body; nothing is stored) are tolerated; nothing else may be logged.
        assert not server.unexpected_exceptions(), server.tail(80)
