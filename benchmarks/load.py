"""Load benchmark of the league server: several server processes on one database, concurrent reporting clients.

What is measured
----------------
For each database (a SQLite file; a fresh schema of the PostgreSQL at ``--pg``, dropped afterwards):

1. the schema is migrated, a TrueSkill league ``bench`` (default parameters) and a reporter token are created;
2. ``--servers`` separate ``podium serve --db URL --port P`` processes (one uvicorn worker each) are started
   on that database and waited for (``/api/v1/health``);
3. ``--clients`` client threads (stdlib ``http.client`` keep-alive connections by default; ``--backend httpx``
   for httpx) each report ``--matches`` matches of a pre-generated workload (``podium.simulate``: 1v1,
   2v2 with some partial play, 4-player free-for-alls, draws; unique ids), to the servers in turn.
   "With retries": ``--resend`` of the reports (20 %) are sent twice on purpose, a third each way --
   "race" (the answer is late: sent again to the next server before the first answer is read, so the
   two copies are in flight on two servers at once), "drop" (the connection is closed without reading
   the answer, then the report is sent to the next server) and "repeat" (sent again to another server
   after the acknowledgement) -- and every 503 / connection error / timeout is retried on the next
   server after an exponential backoff.  Every answered request is timed
   (except the first copy of a "race", whose answer is read only after the second copy's);
4. afterwards, with plain SQL: exactly ``clients * matches`` matches recorded, each once, with the content
   sent, at the seq its acknowledgements named; seqs 0..n-1; a history row per player of each match and
   none else; the leaderboard (HTTP) agrees; an offline replay of the log (``podium.League.record_many``
   over the records in seq order) equals every stored mu and sigma to 1e-9; and
   ``podium.server.store.rebuild(..., write=False)`` finds no difference.

Printed per database, side by side: reports per second (every 2xx answer, retries included, over the wall
time of the reporting phase) and distinct matches per second, the p50 and p99 latency of the answered
requests, the re-sends and error retries, where the CPU went during the reporting phase (the server
processes, the clients -- this process --, the ``postgres`` processes, anything else running on the machine,
idle), and whether the checks passed; then the target, 300 reports per second on this (two-core) machine,
and each database's ratio to it.  The load average before the run is printed too: other work on the
machine takes CPU from the servers and shows as "anything else".

Run: ``python benchmarks/load.py`` (both databases; ``--db sqlite`` or ``--db postgresql`` for one).
"""

from __future__ import annotations

import os as _os

_os.environ.setdefault("PODIUM_JIT", "compiled")  # the compiled speed: warm-up calls compile, timed ones do not

import argparse
import os
import shutil
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))

import loadlib  # noqa: E402

TARGET = 300.0  # reports per second (the target on this two-core machine)
PG_URL = os.environ.get("PODIUM_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")


def _pg_reason(url: str) -> str | None:
    try:
        import psycopg

        with psycopg.connect(url, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
        return None
    except Exception as error:  # no server, or no driver
        return f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"


def _cpu_of(pid: int) -> float:
    """CPU seconds (user + system) of process ``pid`` so far (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def _cpu_of_postgres() -> float:
    """CPU seconds of every process called ``postgres`` (its children's, once reaped, included)."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:
            continue
        if text.split("(", 1)[1].rsplit(")", 1)[0] != "postgres":
            continue
        fields = text.rsplit(")", 1)[1].split()
        total += sum(int(v) for v in fields[11:15])
    return total / os.sysconf("SC_CLK_TCK")


def _machine_cpu() -> tuple[float, float]:
    """(busy, idle) CPU seconds of the whole machine so far (Linux /proc/stat)."""
    try:
        values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    except (OSError, ValueError):
        return float("nan"), float("nan")
    tick = os.sysconf("SC_CLK_TCK")
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    return (sum(values[:8]) - idle) / tick, idle / tick


def run_one(kind: str, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """One run on ``kind`` ("sqlite" or "postgresql"): the figures and the checks' problems."""
    schema = None
    if kind == "sqlite":
        url = str(work / "load.db")
    else:
        import psycopg

        schema = f"podium_load_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(args.pg, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{schema}"')
        url = f"{args.pg}{'&' if '?' in args.pg else '?'}options={quote(f'-csearch_path={schema}')}"
    servers: list[loadlib.Server] = []
    try:
        names = ["bench"] if args.leagues == 1 else [f"bench{i}" for i in range(args.leagues)]
        token = loadlib.prepare_database(url, {name: "trueskill" for name in names})
        workload = loadlib.make_workload(args.clients * args.matches, names, players=args.players,
                                         seed=args.seed, prefix=f"{kind[:2]}")
        servers = loadlib.start_servers(url, args.servers, work, prefix=f"{kind}-server")
        for server in servers:  # warm the read paths (the write path is warmed by the server at start-up)
            loadlib.get_json(server.port, f"/api/v1/leagues/{names[0]}/leaderboard?limit=5")
        ports = [s.port for s in servers]
        server_cpu0 = [_cpu_of(s.pid) for s in servers]
        busy0, idle0 = _machine_cpu()
        pg0 = _cpu_of_postgres()
        outcome = loadlib.run_clients(ports, token, workload, args.clients, resend=args.resend, seed=args.seed,
                                      backend=args.backend)
        busy1, idle1 = _machine_cpu()
        pg_cpu = _cpu_of_postgres() - pg0
        server_cpu = sum(_cpu_of(s.pid) - c for s, c in zip(servers, server_cpu0))
        started = time.perf_counter()
        problems, info = loadlib.load_problems(url, workload, outcome, ports[0])
        check_seconds = time.perf_counter() - started
        dead = [s for s in servers if s.proc is not None and s.proc.poll() is not None]
        problems += [f"server on port {s.port} exited with {s.proc.returncode if s.proc else '?'}" for s in dead]
        logged: Counter[str] = Counter()
        for server in servers:
            logged.update(server.exceptions())
        problems += [f"a server logged {n} x {name}" for name, n in logged.items()
                     if name != "starlette.requests.ClientDisconnect"]
        if problems:
            problems.append("server logs:\n" + loadlib.tails(servers, 15))
        wall = outcome.wall
        return {
            "kind": kind, "reports": outcome.accepted, "distinct": len(workload), "wall": wall,
            "rps": outcome.accepted / wall, "mps": len(workload) / wall,
            "p50": loadlib.percentile(outcome.latencies, 0.50) * 1e3,
            "p99": loadlib.percentile(outcome.latencies, 0.99) * 1e3,
            "max": max(outcome.latencies) * 1e3 if outcome.latencies else float("nan"),
            "e2e_p99": loadlib.percentile(outcome.report_latencies, 0.99) * 1e3,
            "sent": outcome.sent, "created": outcome.created, "repeated": outcome.repeated,
            "resends": outcome.resends, "error_retries": outcome.error_retries, "busy": outcome.busy,
            "conn_errors": outcome.connection_errors,
            "server_cpu": server_cpu, "client_cpu": outcome.cpu,
            "pg_cpu": pg_cpu, "other_cpu": (busy1 - busy0) - server_cpu - outcome.cpu - pg_cpu,
            "idle": idle1 - idle0,
            "recorded": info["recorded"], "max_diff": info["max_diff"], "players": info["players"],
            "check_seconds": check_seconds, "problems": problems, "errors": outcome.errors,
            "disconnects": logged["starlette.requests.ClientDisconnect"],
        }
    finally:
        loadlib.stop_all(servers)
        if schema is not None and not args.keep:
            import psycopg

            with psycopg.connect(args.pg, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        elif schema is not None:
            print(f"kept the PostgreSQL schema {schema}")


def _table(results: list[dict[str, Any]]) -> str:
    rows = [
        ("reports/s (2xx answers, retries incl.)", lambda r: f"{r['rps']:.0f}"),
        ("distinct matches/s", lambda r: f"{r['mps']:.0f}"),
        ("latency p50 (ms)", lambda r: f"{r['p50']:.1f}"),
        ("latency p99 (ms)", lambda r: f"{r['p99']:.1f}"),
        ("latency max (ms)", lambda r: f"{r['max']:.1f}"),
        ("report p99, retries incl. (ms)", lambda r: f"{r['e2e_p99']:.1f}"),
        ("wall time (s)", lambda r: f"{r['wall']:.2f}"),
        ("requests sent", lambda r: f"{r['sent']:,}"),
        ("answers 201 / 200", lambda r: f"{r['created']:,} / {r['repeated']:,}"),
        ("deliberate re-sends", lambda r: f"{r['resends']:,}"),
        ("error retries (503s, conn. errors)", lambda r: f"{r['error_retries']:,} ({r['busy']}, {r['conn_errors']})"),
        ("CPU s: servers", lambda r: f"{r['server_cpu']:.1f}"),
        ("CPU s: clients (this process)", lambda r: f"{r['client_cpu']:.1f}"),
        ("CPU s: postgres processes", lambda r: f"{r['pg_cpu']:.1f}"),
        ("CPU s: anything else on the machine", lambda r: f"{r['other_cpu']:.1f}"),
        ("CPU s: idle (all cores)", lambda r: f"{r['idle']:.1f}"),
        ("server CPU ms per request", lambda r: f"{1e3 * r['server_cpu'] / max(1, r['sent']):.2f}"),
        ("server tracebacks: ClientDisconnect", lambda r: f"{r['disconnects']:,}"),
        ("recorded matches", lambda r: f"{r['recorded']:,} of {r['distinct']:,}"),
        ("max |stored - replay|", lambda r: f"{r['max_diff']:.1e}"),
        ("checks (count, dupes, replay, rebuild)", lambda r: "passed" if not r["problems"] else f"FAILED ({len(r['problems'])})"),
        (f"target {TARGET:.0f} reports/s: ratio", lambda r: f"{r['rps'] / TARGET:.2f}x {'met' if r['rps'] >= TARGET else 'NOT met'}"),
    ]
    width = max(len(name) for name, _ in rows)
    cols = [[fmt(r) for _, fmt in rows] for r in results]
    col_width = max([16] + [len(v) for c in cols for v in c] + [len(r["kind"]) for r in results])
    lines = [" " * width + "  " + "  ".join(r["kind"].rjust(col_width) for r in results)]
    for i, (name, _) in enumerate(rows):
        lines.append(name.ljust(width) + "  " + "  ".join(c[i].rjust(col_width) for c in cols))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--servers", type=int, default=4, help="server processes (default 4)")
    parser.add_argument("--clients", type=int, default=16, help="concurrent client threads (default 16)")
    parser.add_argument("--matches", type=int, default=250, help="matches each client reports (default 250)")
    parser.add_argument("--players", type=int, default=200, help="players in the workload (default 200)")
    parser.add_argument("--leagues", type=int, default=1,
                        help="TrueSkill leagues the matches are spread over (default 1; writes to one league are "
                             "serialized, on PostgreSQL by a per-league lock)")
    parser.add_argument("--resend", type=float, default=0.2, help="fraction of reports sent twice (default 0.2)")
    parser.add_argument("--backend", choices=["stdlib", "httpx"], default="stdlib",
                        help="client HTTP library (default: the stdlib's http.client, the cheapest)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pg", default=PG_URL, help=f"PostgreSQL database (default {PG_URL}; PODIUM_TEST_PG)")
    parser.add_argument("--keep", action="store_true", help="keep the databases and server logs")
    args = parser.parse_args(argv)

    kinds = ["sqlite", "postgresql"] if args.db == "both" else [args.db]
    if "postgresql" in kinds:
        reason = _pg_reason(args.pg)
        if reason:
            print(f"PostgreSQL at {args.pg} does not answer ({reason}): only SQLite is measured.")
            kinds.remove("postgresql")
            if not kinds:
                return 1
    print(f"{args.servers} server processes, {args.clients} clients x {args.matches} matches "
          f"({args.clients * args.matches:,} distinct, {args.leagues} league(s)), {args.resend:.0%} re-sent, "
          f"client: {args.backend}, {os.cpu_count()} CPU(s), load average before: {os.getloadavg()[0]:.2f}")
    work = Path(tempfile.mkdtemp(prefix="podium-load-"))
    results = []
    try:
        for kind in kinds:
            print(f"-- {kind} ...", flush=True)
            result = run_one(kind, args, work)
            results.append(result)
            for error, n in result["errors"].most_common(5):
                print(f"   connection error x{n}: {error}")
            for problem in result["problems"][:30]:
                print(f"   PROBLEM: {problem}")
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print()
    print(_table(results))
    return 0 if all(not r["problems"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
