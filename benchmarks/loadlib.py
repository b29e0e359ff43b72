"""Shared machinery of the league server's load benchmark (``benchmarks/load.py``) and its tests
(``tests/server/test_load.py``, ``tests/server/test_crash.py``).

* :class:`Server` -- one real ``podium serve`` process (``python -m podium.cli serve``, a single uvicorn
  worker: the process started *is* the uvicorn server, so ``os.kill(server.pid, SIGKILL)`` kills it), its
  output in a log file whose tail goes into error messages.
* :func:`prepare_database` -- migrate, create the leagues and a reporter token (the store's functions, as
  ``podium league create`` / ``podium token create`` do).
* :func:`make_workload` -- pre-generated match records with unique ids, JSON bodies encoded once.
* :func:`run_clients` -- concurrent reporting threads with retries: deliberate re-sends (two copies in
  flight at once, a connection dropped before the answer, a report repeated after its acknowledgement;
  see :class:`Reporter`) and retries of 503 / connection errors /
  timeouts with exponential backoff.  Every answered request is timed (but the first copy of a "race").
* :func:`inspect_database`, :func:`integrity_problems`, :func:`replay_problems`, :func:`load_problems` --
  what must hold afterwards, each returning a list of problems (empty = all good), read straight from the
  tables with SQL and replayed offline with :class:`podium.League`, independently of the server's code.
"""

from __future__ import annotations

import os as _os

_os.environ.setdefault("PODIUM_JIT", "compiled")  # the compiled speed: warm-up calls compile, timed ones do not

import http.client
import json
import math
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HOST = "127.0.0.1"
REPORT_PATH = "/api/v1/leagues/{league}/matches"


# -- server processes ----------------------------------------------------------------------------------------
def podium_command() -> list[str]:
    """The ``podium`` command line of this interpreter (``python -m podium.cli``: no wrapper process)."""
    return [sys.executable, "-m", "podium.cli"]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


class ServerError(RuntimeError):
    pass


class Server:
    """A ``podium serve --db URL --port P`` process whose stdout and stderr go to ``log``."""

    def __init__(self, db: str, log: Path, port: int | None = None) -> None:
        self.db = db
        self.log = Path(log)
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def start(self) -> Server:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        # One token and one address post everything here: what is measured is the server, not its rate
        # limits, which are off unless the environment sets them.
        env.setdefault("PODIUM_TOKEN_RATE", "0")
        env.setdefault("PODIUM_ADDRESS_RATE", "0")
        with open(self.log, "ab") as out:
            out.write(f"--- start: podium serve --db {self.db} --port {self.port}\n".encode())
            out.flush()
            self.proc = subprocess.Popen(podium_command() + ["serve", "--db", self.db, "--host", HOST,
                                                             "--port", str(self.port)],
                                         stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         env=env, start_new_session=True)
        return self

    def wait_ready(self, timeout: float = 90.0) -> Server:
        """Wait until ``/api/v1/health`` answers 200; raise (with the log's tail) if the process dies first."""
        deadline = time.monotonic() + timeout
        while True:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise ServerError(f"server on port {self.port} exited with {self.proc.returncode} before it was "
                                  f"ready:\n{self.tail()}")
            try:
                status, _, _ = request(self.port, "GET", "/api/v1/health", timeout=2.0)
                if status == 200:
                    return self
            except (OSError, http.client.HTTPException):
                pass
            if time.monotonic() > deadline:
                raise ServerError(f"server on port {self.port} not ready after {timeout:.0f} s:\n{self.tail()}")
            time.sleep(0.05)

    def answers(self) -> bool:
        try:
            request(self.port, "GET", "/api/v1/health", timeout=2.0)
            return True
        except (OSError, http.client.HTTPException):
            return False

    def kill(self) -> int:
        """SIGKILL the server process itself; return its exit status (``-9``)."""
        assert self.proc is not None
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        return self.proc.wait(30)

    def stop(self) -> None:
        """Terminate (SIGTERM, then SIGKILL after 10 s) if still running; idempotent."""
        if self.proc is None or self.proc.poll() is not None:
            if self.proc is not None:
                self.proc.wait()
            return
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)

    def exceptions(self) -> Counter[str]:
        """The exceptions whose tracebacks the server logged, by their last line (``module.Class: message``)."""
        found: Counter[str] = Counter()
        inside = False
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return found
        for line in text.splitlines():
            if line.startswith("Traceback (most recent call last):"):
                inside = True
            elif inside and line and not line[0].isspace() and not line.startswith(("During handling", "The above")):
                found[line.strip()[:200]] += 1
                inside = False
        return found

    def unexpected_exceptions(self) -> Counter[str]:
        """Logged exceptions other than ``starlette.requests.ClientDisconnect`` (a client that hung up
        before its request body was read: nothing was stored; the server logs it as an error)."""
        return Counter({k: v for k, v in self.exceptions().items() if k != "starlette.requests.ClientDisconnect"})

    def tail(self, lines: int = 40) -> str:
        try:
            text = self.log.read_text(errors="replace")
        except OSError as error:
            return f"(no log: {error})"
        return f"[{self.log}]\n" + "\n".join(text.splitlines()[-lines:])


def start_servers(db: str, n: int, log_dir: Path, prefix: str = "server") -> list[Server]:
    """Start ``n`` server processes on ``db`` together, then wait for each; stop them all on failure."""
    servers = [Server(db, Path(log_dir) / f"{prefix}{i}.log") for i in range(n)]
    try:
        for server in servers:
            server.start()
        for server in servers:
            server.wait_ready()
    except BaseException:
        stop_all(servers)
        raise
    return servers


def stop_all(servers: Iterable[Server]) -> None:
    for server in servers:
        server.stop()


def tails(servers: Iterable[Server], lines: int = 30) -> str:
    return "\n".join(server.tail(lines) for server in servers)


# -- HTTP ----------------------------------------------------------------------------------------------------
def request(port: int, method: str, path: str, body: bytes | None = None, headers: Mapping[str, str] | None = None,
            timeout: float = 30.0) -> tuple[int, bytes, http.client.HTTPResponse]:
    """One request on a fresh connection: ``(status, body, response)``."""
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        conn.request(method, path, body, dict(headers or {}))
        response = conn.getresponse()
        return response.status, response.read(), response
    finally:
        conn.close()


def get_json(port: int, path: str) -> Any:
    status, body, _ = request(port, "GET", path)
    if status != 200:
        raise ServerError(f"GET {path} on port {port}: {status} {body[:300]!r}")
    return json.loads(body)


# -- the database --------------------------------------------------------------------------------------------
def engine_for(db: str) -> Any:
    from podium.server.db import make_engine
    from podium.server.settings import database_url

    return make_engine(database_url(db))


def prepare_database(db: str, leagues: Mapping[str, str]) -> str:
    """Migrate ``db``, create ``leagues`` (name -> model, default parameters) and return a reporter token."""
    from podium.server import store
    from podium.server.db import migrate

    engine = engine_for(db)
    try:
        migrate(engine)
        for name, model in leagues.items():
            store.create_league(engine, name, model, {}, False)
        return store.create_token(engine, "reporter", "load test")
    finally:
        engine.dispose()


# -- the workload --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Report:
    league: str
    id: str
    record: dict[str, Any]
    body: bytes  # the JSON body, encoded once

    @property
    def players(self) -> list[str]:
        return [p for team in self.record["teams"] for p in team]


def make_workload(n: int, leagues: Sequence[str], *, players: int = 200, seed: int = 0, prefix: str = "m"
                  ) -> list[Report]:
    """``n`` match records with unique ids, spread over ``leagues`` in turn.

    A mix from ``podium.simulate``: half 1v1, a quarter 2v2 (some with partial play), a quarter 4-player
    free-for-alls; draws possible.  ``time`` is the match's position in the workload, so that reports that
    overtake each other store times out of order (the log's order is the order of recording).
    """
    import podium

    kinds = [(2, 1), (2, 1), (2, 2), (4, 1)]
    sims = [iter(podium.simulate(players, n // len(kinds) + 1, teams=t, team_size=s, draw_probability=0.1,
                                 seed=seed * 10 + i).matches) for i, (t, s) in enumerate(kinds)]
    rng = random.Random(seed)
    out = []
    for i in range(n):
        which = i % len(kinds)
        match = next(sims[which])
        match_id = f"{prefix}-{i:05d}"
        record: dict[str, Any] = {"id": match_id, "time": i, "teams": [list(t) for t in match.teams],
                                  "ranks": list(match.ranks)}
        if which == 2 and rng.random() < 0.25:
            record["weights"] = [[1.0, 0.5], [1.0, 1.0]]
        league = leagues[i % len(leagues)]
        out.append(Report(league, match_id, record, json.dumps(record).encode()))
    return out


# -- clients -------------------------------------------------------------------------------------------------
class _Conn:
    """A keep-alive connection to one server: the stdlib's http.client (cheap) or httpx."""

    def __init__(self, port: int, timeout: float, backend: str) -> None:
        self.port, self.timeout, self.backend = port, timeout, backend
        self.conn: Any = None

    def post(self, path: str, body: bytes, headers: Mapping[str, str]) -> tuple[int, bytes, str | None]:
        if self.backend == "httpx":
            import httpx

            if self.conn is None:
                self.conn = httpx.Client(base_url=f"http://{HOST}:{self.port}", timeout=self.timeout)
            try:
                response = self.conn.post(path, content=body, headers=headers)
            except httpx.TransportError as error:
                self.close()
                raise ConnectionError(f"{type(error).__name__}: {error}") from None
            return response.status_code, response.content, response.headers.get("retry-after")
        if self.conn is None:
            self.conn = http.client.HTTPConnection(HOST, self.port, timeout=self.timeout)
        try:
            self.conn.request("POST", path, body, headers)
            response = self.conn.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException):
            self.close()
            raise
        if response.will_close:
            self.close()
        return response.status, data, response.getheader("Retry-After")

    def send_and_drop(self, path: str, body: bytes, headers: Mapping[str, str]) -> None:
        """Send a request and close the connection without reading the answer (a response lost in flight)."""
        conn = http.client.HTTPConnection(HOST, self.port, timeout=self.timeout)
        try:
            conn.request("POST", path, body, headers)
        finally:
            conn.close()

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


@dataclass
class Outcome:
    """What the clients saw."""

    sent: int = 0                # HTTP requests sent (every attempt, lost ones included)
    accepted: int = 0            # 2xx responses read (retries included)
    created: int = 0             # 201 responses
    repeated: int = 0            # 200 responses (retries the server recognized)
    resends: int = 0             # deliberate re-sends (lost response, repeat after acknowledgement)
    error_retries: int = 0       # retries after 503, a connection error or a timeout
    busy: int = 0                # 503 responses
    connection_errors: int = 0
    latencies: list[float] = field(default_factory=list)         # seconds per answered request
    report_latencies: list[float] = field(default_factory=list)  # first send to acknowledgement, retries included
    acked: dict[str, int] = field(default_factory=dict)          # match id -> seq in its (first) 2xx answer
    seq_conflicts: list[str] = field(default_factory=list)       # an id answered with two different seqs
    unacked: list[str] = field(default_factory=list)             # reports that never got a 2xx
    attempted: set[str] = field(default_factory=set)             # ids of which at least one request was sent
    failures: list[str] = field(default_factory=list)            # unexpected answers
    statuses: Counter[int] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)        # connection errors and timeouts, by kind
    wall: float = 0.0
    cpu: float = 0.0             # CPU seconds of this (client) process during the run

    def merge(self, other: Outcome) -> None:
        for name in ("sent", "accepted", "created", "repeated", "resends", "error_retries", "busy",
                     "connection_errors"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.latencies += other.latencies
        self.report_latencies += other.report_latencies
        for match_id, seq in other.acked.items():
            if match_id in self.acked and self.acked[match_id] != seq:
                self.seq_conflicts.append(f"{match_id}: seq {self.acked[match_id]} and {seq}")
            self.acked.setdefault(match_id, seq)
        self.seq_conflicts += other.seq_conflicts
        self.unacked += other.unacked
        self.attempted |= other.attempted
        self.failures += other.failures
        self.statuses.update(other.statuses)
        self.errors.update(other.errors)


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-quantile (0..1) by the nearest-rank method; NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


class Reporter:
    """One client: reports its matches one after the other, to the servers in turn, with retries.

    ``resend`` of the reports (chosen at random) are sent twice on purpose, a third each way: "race" (the
    answer is late: the report is sent again to the next server before the first answer is read, so that
    the two copies are in flight on two servers at once; both answers are then read), "drop" (the
    connection is closed without reading the answer, as by a client that gave up; then sent again to the
    next server) and "repeat" (sent again to the next server after the acknowledgement).  A 503, a
    connection error or a timeout is retried on the next server after an exponential backoff (10 ms
    doubling, jittered, at most the server's Retry-After) until ``give_up`` seconds have passed.
    """

    def __init__(self, ports: Sequence[int], token: str, *, resend: float = 0.2, seed: int = 0,
                 backend: str = "stdlib", timeout: float = 30.0, give_up: float = 120.0,
                 stop_on_error: bool = False) -> None:
        self.ports = list(ports)
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        self.resend = resend
        self.rng = random.Random(seed)
        self.conns = [_Conn(port, timeout, backend) for port in self.ports]
        self.give_up = give_up
        self.stop_on_error = stop_on_error  # crash tests: a dead server ends the stream
        self.out = Outcome()
        self.stopped = False

    def close(self) -> None:
        for conn in self.conns:
            conn.close()

    def _ack(self, report: Report, status: int, data: bytes) -> None:
        out = self.out
        out.accepted += 1
        if status == 201:
            out.created += 1
        else:
            out.repeated += 1
        try:
            answer = json.loads(data)
            seq = answer["seq"]
            ok = answer["id"] == report.id and answer["status"] == "recorded" and isinstance(seq, int)
        except (ValueError, KeyError, TypeError):
            ok, seq = False, None
        if not ok:
            out.failures.append(f"{report.id}: {status} with an unexpected body {data[:200]!r}")
            return
        previous = out.acked.setdefault(report.id, seq)
        if previous != seq:
            out.seq_conflicts.append(f"{report.id}: seq {previous} and {seq}")

    def deliver(self, report: Report, server: int, *, on_ack: Callable[[Report], None] | None = None) -> bool:
        """Send until a 2xx (True) or a refusal / giving up / a dead server with ``stop_on_error`` (False)."""
        out = self.out
        path = REPORT_PATH.format(league=report.league)
        start = time.perf_counter()
        delay = 0.01
        out.attempted.add(report.id)
        while True:
            conn = self.conns[server % len(self.conns)]
            out.sent += 1
            sent_at = time.perf_counter()
            try:
                status, data, retry_after = conn.post(path, report.body, self.headers)
            except (OSError, http.client.HTTPException) as error:
                if self._cut_off(error):
                    return False
                reason = f"{type(error).__name__}: {error}"
                status, data, retry_after = -1, reason.encode(), None
            else:
                now = time.perf_counter()
                out.latencies.append(now - sent_at)
                out.statuses[status] += 1
                if status in (200, 201):
                    out.report_latencies.append(now - start)
                    self._ack(report, status, data)
                    if on_ack is not None:
                        on_ack(report)
                    return True
                if status == 503:
                    out.busy += 1
                else:
                    out.failures.append(f"{report.id}: {status} {data[:300]!r}")
                    return False
            if time.perf_counter() - start > self.give_up:
                out.failures.append(f"{report.id}: gave up after {self.give_up:.0f} s (last: {status} {data[:200]!r})")
                return False
            out.error_retries += 1
            cap = float(retry_after) if retry_after and retry_after.isdigit() else 1.0
            time.sleep(min(delay, cap) * (0.5 + self.rng.random()))
            delay *= 2
            server += 1

    def _cut_off(self, error: Exception) -> bool:
        """Count a connection error; True if this client stops at the first one (``stop_on_error``)."""
        self.out.connection_errors += 1
        self.out.errors[f"{type(error).__name__}: {error}"[:120]] += 1
        if self.stop_on_error:
            self.stopped = True
        return self.stop_on_error

    def race(self, report: Report, server: int, on_ack: Callable[[Report], None] | None) -> bool:
        """Send ``report`` to ``server`` and, before reading that answer, deliver it to the next server;
        then read the first answer too (one of the two must be 201, the other 200)."""
        out = self.out
        first = http.client.HTTPConnection(HOST, self.ports[server % len(self.ports)], timeout=self.conns[0].timeout)
        try:
            out.sent += 1
            out.attempted.add(report.id)
            try:
                first.request("POST", REPORT_PATH.format(league=report.league), report.body, self.headers)
            except (OSError, http.client.HTTPException) as error:
                if self._cut_off(error):
                    return False
            delivered = self.deliver(report, server + 1, on_ack=on_ack)
            try:
                response = first.getresponse()
                data = response.read()
            except (OSError, http.client.HTTPException) as error:
                out.connection_errors += 1
                out.errors[f"{type(error).__name__}: {error}"[:120]] += 1
                return delivered
            # Not timed: the answer waited for the second delivery before it was read.
            out.statuses[response.status] += 1
            if response.status in (200, 201):
                self._ack(report, response.status, data)
                if on_ack is not None:
                    on_ack(report)
                return True
            if response.status != 503:
                out.failures.append(f"{report.id}: {response.status} {data[:300]!r}")
            return delivered
        finally:
            first.close()

    def run(self, reports: Sequence[Report], first_server: int = 0,
            on_ack: Callable[[Report], None] | None = None) -> Outcome:
        for i, report in enumerate(reports):
            if self.stopped:
                self.out.unacked.append(report.id)
                continue
            server = first_server + i
            mode = None
            if self.rng.random() < self.resend:
                mode = self.rng.choice(["race", "drop", "repeat"])
            if mode == "race":
                self.out.resends += 1
                if not self.race(report, server, on_ack):
                    self.out.unacked.append(report.id)
                continue
            if mode == "drop":
                self.out.sent += 1
                self.out.attempted.add(report.id)
                self.out.resends += 1
                try:
                    self.conns[server % len(self.conns)].send_and_drop(REPORT_PATH.format(league=report.league),
                                                                      report.body, self.headers)
                except OSError:
                    pass
                server += 1
            if not self.deliver(report, server, on_ack=on_ack):
                self.out.unacked.append(report.id)
                continue
            if mode == "repeat" and not self.stopped:
                self.out.resends += 1
                self.deliver(report, server + 1, on_ack=on_ack)
        return self.out


def run_clients(ports: Sequence[int], token: str, workload: Sequence[Report], clients: int, *,
                resend: float = 0.2, seed: int = 0, backend: str = "stdlib",
                on_ack: Callable[[Report], None] | None = None, stop_on_error: bool = False) -> Outcome:
    """``clients`` threads, client ``c`` reporting ``workload[c::clients]`` starting at server ``c``."""
    reporters = [Reporter(ports, token, resend=resend, seed=seed * 1000 + c, backend=backend,
                          stop_on_error=stop_on_error) for c in range(clients)]
    threads = [threading.Thread(target=r.run, args=(workload[c::clients], c, on_ack), name=f"client{c}", daemon=True)
               for c, r in enumerate(reporters)]
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    total = Outcome(wall=time.perf_counter() - wall0, cpu=time.process_time() - cpu0)
    for reporter in reporters:
        reporter.close()
        total.merge(reporter.out)
    return total


# -- what is stored ------------------------------------------------------------------------------------------
@dataclass
class Stored:
    """One league's rows, read with plain SQL."""

    league_id: int
    model: str
    params: dict[str, Any]
    matches: list[dict[str, Any]]                       # every row: match_id, seq, status, record (parsed)
    ratings: dict[str, tuple[float, float, int, float | None]]
    history: dict[tuple[str, int], tuple[float, float]]


def inspect_database(db: str) -> dict[str, Stored]:
    from sqlalchemy import text

    engine = engine_for(db)
    try:
        with engine.connect() as conn, conn.begin():
            out: dict[str, Stored] = {}
            for lid, name, model, params in conn.execute(text("SELECT id, name, model, params FROM leagues")):
                rows = [{"match_id": r[0], "seq": r[1], "status": r[2], "record": json.loads(r[3])}
                        for r in conn.execute(text("SELECT match_id, seq, status, record FROM matches "
                                                   "WHERE league_id = :l ORDER BY id"), {"l": lid})]
                ratings = {r[0]: (float(r[1]), float(r[2]), int(r[3]), None if r[4] is None else float(r[4]))
                           for r in conn.execute(text("SELECT player, mu, sigma, games, last_time FROM ratings "
                                                      "WHERE league_id = :l"), {"l": lid})}
                history = {(r[0], int(r[1])): (float(r[2]), float(r[3]))
                           for r in conn.execute(text("SELECT player, seq, mu, sigma FROM history "
                                                      "WHERE league_id = :l"), {"l": lid})}
                out[name] = Stored(lid, model, json.loads(params), rows, ratings, history)
            return out
    finally:
        engine.dispose()


def _players(record: Mapping[str, Any]) -> list[str]:
    return [p for team in record["teams"] for p in team]


def integrity_problems(stored: Mapping[str, Stored]) -> list[str]:
    """Every match row is recorded, with a seq; the seqs of a league are 0..n-1; every recorded match has a
    history row for each of its players at its seq and nothing else has one; every player of a recorded
    match has a ratings row, whose ``games`` counts their history rows."""
    problems = []
    for name, league in stored.items():
        recorded = [m for m in league.matches if m["status"] == "recorded"]
        for m in league.matches:
            if m["status"] != "recorded" or m["seq"] is None:
                problems.append(f"{name}: match {m['match_id']} is {m['status']} with seq {m['seq']}")
        ids = Counter(m["match_id"] for m in league.matches)
        problems += [f"{name}: id {i} stored {k} times" for i, k in ids.items() if k > 1]
        seqs = sorted(m["seq"] for m in recorded if m["seq"] is not None)
        if seqs != list(range(len(seqs))):
            problems.append(f"{name}: the recorded seqs are not 0..{len(seqs) - 1} (first {seqs[:10]}...)")
        want = {(p, m["seq"]) for m in recorded for p in _players(m["record"])}
        missing = sorted(want - set(league.history))
        extra = sorted(set(league.history) - want)
        if missing:
            problems.append(f"{name}: {len(missing)} history row(s) missing, e.g. {missing[:5]}")
        if extra:
            problems.append(f"{name}: {len(extra)} history row(s) of no recorded match, e.g. {extra[:5]}")
        games = Counter(p for m in recorded for p in _players(m["record"]))
        for player in sorted(set(games) | set(league.ratings)):
            row = league.ratings.get(player)
            if row is None:
                problems.append(f"{name}: player {player} played {games[player]} match(es) but has no rating")
            elif row[2] != games[player]:
                problems.append(f"{name}: player {player} has games={row[2]}, but {games[player]} recorded match(es)")
    return problems


def replay_problems(stored: Mapping[str, Stored], tolerance: float = 1e-9) -> tuple[list[str], float]:
    """Replay each league's log (recorded, by seq) offline; compare with the ``ratings`` table.

    Returns the problems and the largest absolute difference of a mu or sigma.
    """
    import podium
    from podium.models import MODELS

    problems: list[str] = []
    worst = 0.0
    for name, league in stored.items():
        log = sorted((m for m in league.matches if m["status"] == "recorded"), key=lambda m: m["seq"])
        population = podium.League(MODELS[league.model](**league.params), keep_history=False)
        population.record_many([podium.Match(r["teams"], r.get("ranks"), r.get("weights"), r.get("time"), r.get("id"))
                                for r in (m["record"] for m in log)])
        replayed = population.states()
        if set(replayed) != set(league.ratings):
            problems.append(f"{name}: players differ: only stored {sorted(set(league.ratings) - set(replayed))[:5]}, "
                            f"only replayed {sorted(set(replayed) - set(league.ratings))[:5]}")
        for player in sorted(set(replayed) & set(league.ratings)):
            mu, sigma, games, last = league.ratings[player]
            state = replayed[player]
            for column, a, b in (("mu", mu, state.mu), ("sigma", sigma, state.sigma)):
                worst = max(worst, abs(a - b))
                if not abs(a - b) <= tolerance:
                    problems.append(f"{name}: {player} {column} stored {a!r}, replayed {b!r} (|diff| {abs(a - b):.3g})")
            if games != state.games:
                problems.append(f"{name}: {player} games stored {games}, replayed {state.games}")
            want_last = None if state.last_time != state.last_time else state.last_time
            if last != want_last:
                problems.append(f"{name}: {player} last_time stored {last!r}, replayed {want_last!r}")
    return problems, worst


def rebuild_problems(db: str, leagues: Iterable[str]) -> list[str]:
    """``podium.server.store.rebuild(engine, league, write=False)`` finds no difference."""
    from podium.server.store import rebuild

    problems = []
    engine = engine_for(db)
    try:
        for name in leagues:
            n, diffs = rebuild(engine, name, write=False)
            problems += [f"{name}: rebuild of {n} matches: {d}" for d in diffs[:10]]
    finally:
        engine.dispose()
    return problems


def leaderboard_problems(port: int, stored: Mapping[str, Stored]) -> list[str]:
    """The public leaderboard of each league counts its recorded matches and shows the stored ratings."""
    problems = []
    for name, league in stored.items():
        board = get_json(port, f"/api/v1/leagues/{name}/leaderboard?limit=1000&by=mu")
        recorded = sum(m["status"] == "recorded" for m in league.matches)
        if board["matches"] != recorded:
            problems.append(f"{name}: the leaderboard says {board['matches']} matches, the table has {recorded}")
        if board["total"] != len(league.ratings):
            problems.append(f"{name}: the leaderboard has {board['total']} players, the table {len(league.ratings)}")
        for row in board["rows"]:
            mu, sigma, games, _ = league.ratings.get(row["player"], (math.nan, math.nan, -1, None))
            if (row["mu"], row["sigma"], row["games"]) != (mu, sigma, games):
                problems.append(f"{name}: leaderboard row {row} differs from the table ({mu}, {sigma}, {games})")
    return problems


def load_problems(db: str, workload: Sequence[Report], outcome: Outcome, port: int
                  ) -> tuple[list[str], dict[str, Any]]:
    """Everything a load run must leave behind: each reported match recorded exactly once with the content
    sent, every acknowledgement's seq the stored one, integrity, leaderboard, offline replay, ``rebuild``."""
    problems = [f"client: {f}" for f in outcome.failures[:20]]
    problems += [f"client: {i} never acknowledged" for i in outcome.unacked[:20]]
    problems += [f"client: two seqs for {c}" for c in outcome.seq_conflicts[:20]]
    stored = inspect_database(db)
    sent = {(r.league, r.id): r.record for r in workload}
    rows = {(name, m["match_id"]): m for name, league in stored.items() for m in league.matches}
    recorded = sum(m["status"] == "recorded" for m in rows.values())
    if recorded != len(sent) or len(rows) != len(sent):
        problems.append(f"{recorded} recorded matches ({len(rows)} rows) for {len(sent)} distinct reports")
    for key, record in sent.items():
        row = rows.get(key)
        if row is None:
            problems.append(f"{key[0]}: {key[1]} is missing")
        elif row["record"] != record:
            problems.append(f"{key[0]}: {key[1]} stored as {row['record']}, sent {record}")
        elif key[1] in outcome.acked and outcome.acked[key[1]] != row["seq"]:
            problems.append(f"{key[0]}: {key[1]} acknowledged with seq {outcome.acked[key[1]]}, stored at {row['seq']}")
    problems += [f"{k[0]}: {k[1]} stored but never reported" for k in sorted(set(rows) - set(sent))[:20]]
    if outcome.created > len(sent):
        problems.append(f"{outcome.created} answers 201 (created) for {len(sent)} distinct reports")
    problems += integrity_problems(stored)
    problems += leaderboard_problems(port, stored)
    replay, worst = replay_problems(stored)
    problems += replay
    problems += rebuild_problems(db, stored)
    return problems, {"recorded": recorded, "max_diff": worst, "players": sum(len(s.ratings) for s in stored.values())}
