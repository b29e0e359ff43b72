"""Memory of a void on a league of a million matches: the league server's replay streams the log.

What is measured
----------------
1. A SQLite league (``--model``, default TrueSkill) of ``--matches`` reported duels among ``--players``
   players is built fast: the match rows are inserted directly in bulk (``sqlite3.executemany``), then the
   ratings and every history row are computed by the server's own streamed replay
   (``podium.server.replay._replay_from`` from seq 0), so the league is what reporting those matches would
   have stored.
2. The real server runs as a subprocess (``python -m podium.cli serve``, one uvicorn worker: the process
   started is the server) with its default settings but the rate limits (off: one client sends everything).
3. A moderator voids match number ``--void`` (near the start: nearly the whole log is replayed and its
   history rewritten) through the API, while a thread polls the server's resident memory
   (``/proc/PID/status`` ``VmRSS``); the kernel's high-water mark ``VmHWM`` is read at the end.
4. Checked: the match is voided, the history has one row per player of each remaining match, and the peak
   stays under ``--limit-mb`` (300 MB): the exit status is 1 otherwise.
5. For comparison (``--no-compare`` skips it), the replay as it was before streaming -- the whole approved
   log read at once, replayed keeping every player's history, all history rows built and inserted in one
   statement -- runs on the same database in a separate process (rolled back), its peak memory and time
   measured the same way.

Printed: the matches and players, the server's resident memory before the void and its peak, the time the
void took (the request), and the old replay's peak and time.

Run: ``python benchmarks/void_memory.py`` (a few minutes on two cores; ``--matches 100000`` for a quick look).
"""

from __future__ import annotations

import os as _os

_os.environ.setdefault("PODIUM_JIT", "compiled")  # the compiled speed: warm-up calls compile, timed ones do not

import argparse
import http.client
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HOST = "127.0.0.1"


def status_kb(pid: int, field: str) -> int:
    """A ``/proc/PID/status`` field in kB (VmRSS: resident now; VmHWM: the peak)."""
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def request(port: int, method: str, path: str, token: str | None = None, timeout: float = 30.0) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        conn.request(method, path, headers={"Authorization": f"Bearer {token}"} if token else {})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


# -- the league -----------------------------------------------------------------------------------------------
def build(path: Path, model: str, n_matches: int, n_players: int, seed: int) -> tuple[int, float]:
    """Create the league and its matches, ratings and history; return (players, seconds)."""
    import numpy as np

    from podium.server import replay, store
    from podium.server.db import make_engine, migrate, write_transaction
    from podium.server.settings import database_url

    start = time.perf_counter()
    engine = make_engine(database_url(str(path)))
    migrate(engine)
    league = store.create_league(engine, "big", model, {}, False)
    engine.dispose()
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n_players, n_matches)
    b = (a + rng.integers(1, n_players, n_matches)) % n_players  # never a player against themself
    first = rng.random(n_matches) < 0.5
    now = time.time()

    def rows() -> Any:
        for i, (x, y, w) in enumerate(zip(a.tolist(), b.tolist(), first.tolist())):
            match_id = f"m{i:07d}"
            record = {"id": match_id, "ranks": [0, 1] if w else [1, 0], "teams": [[f"p{x:05d}"], [f"p{y:05d}"]],
                      "time": i}
            yield (league.id, match_id, i, "recorded", json.dumps(record, sort_keys=True, separators=(",", ":")),
                   float(i), now, None, now, None)

    with sqlite3.connect(path) as conn:
        conn.executemany("INSERT INTO matches (league_id, match_id, seq, status, record, time, reported, reporter, "
                         "decided, decider) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows())
    conn.close()
    print(f"  {n_matches:,} match rows inserted in {time.perf_counter() - start:.1f} s", flush=True)
    engine = make_engine(database_url(str(path)))
    try:
        with write_transaction(engine, league.id) as conn:
            replay._replay_from(conn, league, 0)
    finally:
        engine.dispose()
    return len(set(a.tolist()) | set(b.tolist())), time.perf_counter() - start


def moderator(path: Path) -> str:
    from podium.server import store
    from podium.server.db import make_engine
    from podium.server.settings import database_url

    engine = make_engine(database_url(str(path)))
    try:
        return store.create_token(engine, "moderator", "void benchmark")
    finally:
        engine.dispose()


def history_rows(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        count = int(conn.execute("SELECT count(*) FROM history").fetchone()[0])
    conn.close()
    return count


# -- the server -----------------------------------------------------------------------------------------------
class Peak(threading.Thread):
    """Polls a process's resident memory until stopped; ``peak`` is the largest seen (kB)."""

    def __init__(self, pid: int, every: float = 0.02) -> None:
        super().__init__(daemon=True)
        self.pid, self.every, self.peak = pid, every, 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            try:
                self.peak = max(self.peak, status_kb(self.pid, "VmRSS"))
            except (OSError, KeyError):
                return
            self.done.wait(self.every)


def serve_and_void(path: Path, token: str, match_id: str, log: Path) -> dict[str, Any]:
    port = free_port()
    command = [sys.executable, "-m", "podium.cli", "serve", "--db", str(path), "--host", HOST, "--port", str(port),
               "--token-rate", "0", "--address-rate", "0"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the server exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
            try:
                if request(port, "GET", "/api/v1/health", timeout=2)[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server did not answer in 120 s:\n{log.read_text()[-3000:]}")
            time.sleep(0.1)
        status, body = request(port, "GET", "/api/v1/leagues/big")
        assert status == 200, body
        before = status_kb(proc.pid, "VmRSS")
        poll = Peak(proc.pid)
        poll.start()
        start = time.perf_counter()
        status, body = request(port, "POST", f"/api/v1/leagues/big/matches/{match_id}/void", token, timeout=3600)
        seconds = time.perf_counter() - start
        poll.done.set()
        poll.join()
        hwm = status_kb(proc.pid, "VmHWM")
        if status != 200:
            raise RuntimeError(f"the void failed: {status} {body[:500]!r}")
        answer = json.loads(body)
        return {"status": answer["status"], "before_kb": before, "peak_kb": max(hwm, poll.peak),
                "polled_kb": poll.peak, "seconds": seconds}
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


# -- the replay as it was before streaming (for comparison) -------------------------------------------------
def old_replay(path: Path, seq: int) -> None:
    """The whole-log replay that void and correct ran before (``_log`` + ``_replayed`` + ``_replay_from``),
    in a transaction rolled back; prints its peak memory (kB) and time as JSON."""
    import numpy as np
    from sqlalchemy import and_, delete, insert, select

    from podium.engine.league import League
    from podium.data.matches import Packer
    from podium.server import replay, store
    from podium.server.db import history, make_engine, matches
    from podium.server.settings import database_url

    engine = make_engine(database_url(str(path)))
    start = time.perf_counter()
    with engine.connect() as conn:
        transaction = conn.begin()
        league = store.get_league(conn, "big")
        rows = conn.execute(select(matches.c.seq, matches.c.record)
                            .where(and_(matches.c.league_id == league.id, matches.c.status == "recorded"))
                            .order_by(matches.c.seq)).all()
        packer = Packer()
        for row in rows:
            data = json.loads(row.record)
            packer.add(data["teams"], data.get("ranks"), data.get("weights"), data.get("time"), data.get("id"), None)
        seqs = [int(r.seq) for r in rows]
        population = League(league.model, keep_history=True)
        population.record_many(packer.build())
        first = int(np.searchsorted(np.asarray(seqs, dtype=np.int64), seq))
        slot_match, slot_player, mu, sigma = population.slots(first)
        conn.execute(delete(history).where(and_(history.c.league_id == league.id, history.c.seq >= seq)))
        conn.execute(insert(history), [{"league_id": league.id, "player": p, "seq": seqs[m], "mu": a, "sigma": b}
                                       for m, p, a, b in zip(slot_match.tolist(), slot_player, mu.tolist(),
                                                             sigma.tolist())])
        replay._write_states(conn, league, population, set(slot_player))
        transaction.rollback()
    engine.dispose()
    print(json.dumps({"peak_kb": status_kb(os.getpid(), "VmHWM"), "seconds": time.perf_counter() - start}))


def run_old(path: Path, seq: int) -> dict[str, Any]:
    out = subprocess.run([sys.executable, __file__, "--old-replay", str(path), "--void", str(seq)],
                         capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=1_000_000)
    parser.add_argument("--players", type=int, default=20_000)
    parser.add_argument("--model", default="trueskill")
    parser.add_argument("--void", type=int, default=10, help="The seq of the match voided (near the start).")
    parser.add_argument("--limit-mb", type=float, default=300.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-compare", action="store_true", help="Skip the old whole-log replay.")
    parser.add_argument("--old-replay", metavar="DB", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.old_replay:
        old_replay(Path(args.old_replay), args.void)
        return 0

    with tempfile.TemporaryDirectory(prefix="podium-void-") as folder:
        path = Path(folder) / "big.db"
        print(f"building a {args.model} league of {args.matches:,} duels among {args.players:,} players ...", flush=True)
        players, seconds = build(path, args.model, args.matches, args.players, args.seed)
        print(f"  built (ratings and {history_rows(path):,} history rows) in {seconds:.1f} s; "
              f"database {path.stat().st_size / 2**20:,.0f} MB", flush=True)
        token = moderator(path)
        match_id = f"m{args.void:07d}"
        print(f"voiding match {match_id} (seq {args.void}) through the server ...", flush=True)
        void = serve_and_void(path, token, match_id, Path(folder) / "server.log")
        rows = history_rows(path)
        ok = void["status"] == "voided" and rows == 2 * (args.matches - 1)
        peak_mb, before_mb = void["peak_kb"] / 1024, void["before_kb"] / 1024
        print()
        print(f"matches                 {args.matches:>12,}  ({players:,} players, model {args.model})")
        print(f"server RSS before void  {before_mb:>12,.1f} MB")
        print(f"server peak RSS (HWM)   {peak_mb:>12,.1f} MB   limit {args.limit_mb:,.0f} MB: "
              f"{'ok' if peak_mb < args.limit_mb else 'OVER'}")
        print(f"void request            {void['seconds']:>12,.1f} s    ({args.matches - args.void - 1:,} matches "
              f"replayed with history, {args.void} without)")
        print(f"history rows afterwards {rows:>12,}     ({'as expected' if ok else 'WRONG'}: 2 per remaining match)")
        if not args.no_compare:
            print("the whole-log replay as before (separate process, rolled back) ...", flush=True)
            old = run_old(path, args.void)
            print(f"old replay peak RSS     {old['peak_kb'] / 1024:>12,.1f} MB")
            print(f"old replay time         {old['seconds']:>12,.1f} s")
        return 0 if ok and peak_mb < args.limit_mb else 1


if __name__ == "__main__":
    sys.exit(main())
