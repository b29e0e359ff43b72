"""Massive contests: podium's models and elo-mmr-py's systems on fields of hundreds to 10,000, side by side.

What is measured
----------------
Each *history* is a sequence of rounds, each round one free-for-all of individual contestants with ranks
(equal ranks are ties):

* ``codeforces_early``: ``../shared/data/codeforces_early/matches.jsonl.gz`` (150 Codeforces rounds);
* ``sim-1k`` and ``sim-10k``: simulated here (``podium.simulate`` draws a fixed number of teams per match, so
  these are drawn directly).  Every player of a pool has a latent skill ``N(0, 1)``; each round draws its field
  size uniformly (``sim-1k``: 100 to 1,000 of a pool of 3,000, 80 rounds; ``sim-10k``: 1,000 to 10,000 of a pool
  of 15,000, 40 rounds, one round of exactly 10,000) and its players uniformly from the pool; each performs
  ``skill + N(0, 1)``, and the score is the performance rounded to a multiple of a step drawn per round,
  log-uniformly between 0.02 and 1.9 (at 1.9 the middle score holds about half the field: big tie groups).
  Seeded: the same histories on every run.

Round ``i`` (0-based) happens at ``86400 (i + 1)`` seconds, as in ``benchmarks/elo_mmr.py`` (EloMMR and
elo-mmr-py read time in seconds; the other podium models ignore time at their defaults);
``TrueSkillThroughTime``, whose ``gamma`` is per unit of time, gets the round's day ``i + 1``.

The systems, each at its defaults:

* podium: ``PairwiseElo``, ``PlackettLuce``, ``Thurstone``, ``TrueSkill`` (expectation propagation on the
  chain), ``TrueSkill(update="exact")``, ``Glicko2``, ``EloMMR`` (``mmr``, ``mmr-fast``) and
  ``TrueSkillThroughTime`` (a smoother: its time is measured, but it predicts nothing before a round, so it has
  no contest metrics).  ``Elo`` rates two teams only (a free-for-all raises ``MatchError``) and is left out.
* elo-mmr-py 2.0.0 (the Elo-MMR authors' Rust code): every system its API names (``SUPPORTED_SYSTEMS``):
  ``mmr``, ``mmr-fast``, ``mmr-simple``, ``mmx``, ``mmx-fast``, ``cfsys`` (Codeforces), ``tcsys`` (TopCoder),
  ``trueskill``, ``glicko``, ``bar``; ``mu_noob`` 1500 and ``sig_noob`` 350 (its defaults).

Accuracy (the Elo-MMR paper's protocol): **pair inversion** (the share of correctly ordered pairs, higher is
better) and **rank deviation** (lower is better), both from :func:`podium.evaluation.contests.round_metrics`, the
code behind ``podium.evaluate``'s contest metrics, given every system's ratings *before* each round: rounds
from the 16th on (the first 15 are rated, not scored), contestants with at least 5 earlier rounds (the others
are taken out of the round).  podium's rating before a round is the player's ``mu`` after its previous round
(``League.slots``; for one player the model's strength is an increasing function of ``mu``); elo-mmr-py's is
``PlayerRating.mu`` of an incremental ``Rater`` read before each round is added.

Speed: the wall-clock time of rating the whole history, the median of ``--repeat`` runs: podium
``League(model, keep_history=False).record_many(matches)`` on the packed history (numba's compilation or cache
load excluded by a warm-up on a small history of the same shape), elo-mmr-py ``rate_latest(contests, system)``
(the ``Contest`` objects built beforehand).  elo-mmr-py runs the players of a round on every core (rayon),
podium on one.  The metrics come from a separate, untimed replay.

Every run of a system on a history (the timing runs, then the metrics) is a subprocess with ``--timeout``
seconds: a crash, an exception or a timeout is printed as what happened (``ZeroDivisionError``, ``timeout >
300 s``) and the run goes on; after a failed timing run the system's remaining runs on that history are not
started.  Subprocesses run one at a time (the machine is shared).

Run ``.venv/bin/python benchmarks/massive.py [--repeat 3] [--timeout 300] [--markdown]``; ``--histories`` and
``--systems`` (comma-separated, names as printed) restrict it.
"""

from __future__ import annotations

import os as _os

_os.environ.setdefault("PODIUM_JIT", "compiled")  # the compiled speed: warm-up calls compile, timed ones do not

import argparse
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np

import podium
from podium.evaluation.contests import round_metrics

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "codeforces_early" / "matches.jsonl.gz"
DAY = 86400
FIRST_SCORED = 15     # rounds 0..14 are rated, not scored (the paper's protocol)
MIN_ROUNDS = 5        # a contestant counts with at least this many earlier rounds

PODIUM_SYSTEMS: dict[str, Any] = {
    "PairwiseElo": lambda: podium.PairwiseElo(),
    "PlackettLuce": lambda: podium.PlackettLuce(),
    "PlackettLuce(arithmetic)": lambda: podium.PlackettLuce(ties="arithmetic"),
    "Thurstone": lambda: podium.Thurstone(),
    "TrueSkill": lambda: podium.TrueSkill(),
    "TrueSkill(exact)": lambda: podium.TrueSkill(update="exact"),
    "TrueSkill(chain)": lambda: podium.TrueSkill(update="chain"),
    "Glicko2": lambda: podium.Glicko2(),
    "EloMMR mmr": lambda: podium.EloMMR(variant="mmr"),
    "EloMMR mmr-fast": lambda: podium.EloMMR(variant="mmr-fast"),
    "TrueSkillThroughTime": lambda: podium.TrueSkillThroughTime(),
}
EMP_SYSTEMS = ("mmr", "mmr-fast", "mmr-simple", "mmx", "mmx-fast", "cfsys", "tcsys", "trueskill", "glicko", "bar")
SYSTEMS = [f"podium {n}" for n in PODIUM_SYSTEMS] + [f"elo-mmr-py {n}" for n in EMP_SYSTEMS]
HISTORIES = ("codeforces_early", "sim-1k", "sim-10k")
SIMULATIONS = {  # name: (pool, rounds, smallest field, largest field, seed)
    "sim-1k": (3_000, 80, 100, 1_000, 1),
    "sim-10k": (15_000, 40, 1_000, 10_000, 2),
}


# -- the histories ----------------------------------------------------------------------------------------------
@dataclass
class History:
    """A history of rounds: each round's contestants (player names) and ranks (0 best, equal = tied)."""

    name: str
    rounds: list[tuple[list[str], list[int]]]

    def matches(self, unit: float = DAY) -> podium.Matches:
        """podium's packed history, round ``i`` at ``unit * (i + 1)``."""
        return podium.Matches.from_matches(
            [podium.Match([[p] for p in names], ranks=ranks, time=unit * (i + 1))
             for i, (names, ranks) in enumerate(self.rounds)])

    def contests(self) -> list[Any]:
        """elo-mmr-py's contests: standings ``(name, lo, hi)`` in finishing order, ``lo..hi`` the places of the tie
        group (0-based), round ``i`` at ``86400 (i + 1)`` seconds."""
        import elo_mmr_py as em

        out = []
        for i, (names, ranks) in enumerate(self.rounds):
            order = sorted(range(len(ranks)), key=lambda t: ranks[t])
            first: dict[int, int] = {}
            last: dict[int, int] = {}
            for k, t in enumerate(order):
                first.setdefault(ranks[t], k)
                last[ranks[t]] = k
            out.append(em.Contest([(names[t], first[ranks[t]], last[ranks[t]]) for t in order],
                                  name=str(i), time_seconds=DAY * (i + 1)))
        return out

    def describe(self) -> dict[str, Any]:
        """Rounds, placings, players, the largest field, the largest tie group (as a share of its field), and the
        contestants the metrics count."""
        sizes = [len(r[0]) for r in self.rounds]
        largest_tie = max(np.bincount(np.asarray(ranks)).max() / len(ranks) for _, ranks in self.rounds)
        seen: dict[str, int] = {}
        counted = 0
        for i, (names, _) in enumerate(self.rounds):
            if i >= FIRST_SCORED:
                counted += sum(seen.get(p, 0) >= MIN_ROUNDS for p in names)
            for p in names:
                seen[p] = seen.get(p, 0) + 1
        return {"rounds": len(self.rounds), "placings": sum(sizes), "players": len(seen), "largest field": max(sizes),
                "median field": int(statistics.median(sizes)), "largest tie group": float(largest_tie),
                "counted contestants": counted}


def _dense_ranks(score: np.ndarray) -> list[int]:
    """Ranks from scores, higher better: 0 for the best score, equal scores share a rank, no gaps."""
    distinct = np.unique(score)[::-1]
    return np.searchsorted(-distinct, -score).tolist()


def simulated(name: str) -> History:
    """A simulated history (see the module docstring): latent skills, Gaussian performances, rounded scores."""
    pool, n_rounds, lo, hi, seed = SIMULATIONS[name]
    rng = np.random.default_rng(seed)
    skill = rng.normal(size=pool)
    names = np.array([f"s{i:05d}" for i in range(pool)])
    rounds = []
    for i in range(n_rounds):
        n = hi if i == n_rounds // 2 else int(rng.integers(lo, hi + 1))
        who = rng.choice(pool, size=n, replace=False)
        step = math.exp(rng.uniform(math.log(0.02), math.log(1.9)))
        score = np.round((skill[who] + rng.normal(size=n)) / step)
        rounds.append((names[who].tolist(), _dense_ranks(score)))
    return History(name, rounds)


def codeforces() -> History:
    """codeforces_early as rounds of individuals (its matches are free-for-alls of one-player teams)."""
    raw = podium.read_matches(DATA)
    rounds = []
    for m in raw:
        if any(len(t) != 1 for t in m.teams) or any(r is None for r in m.ranks):
            raise ValueError("codeforces_early was expected to hold individual, finished placings only")
        rounds.append(([t[0] for t in m.teams], [int(r) for r in m.ranks]))  # type: ignore[arg-type]
    return History("codeforces_early", rounds)


def load(name: str) -> History:
    return codeforces() if name == "codeforces_early" else simulated(name)


# -- the metrics, the same code for every system ------------------------------------------------------------------
def contest_metrics(history: History, before: Sequence[dict[str, float]]) -> dict[str, float]:
    """Pair inversion and rank deviation over rounds ``FIRST_SCORED..`` and contestants with ``MIN_ROUNDS`` earlier
    rounds, from ``before[i]``: each contestant's rating before round ``i``.  Each round's means from
    :func:`round_metrics` are weighted by its number of counted contestants, as ``podium.evaluate`` does."""
    seen: dict[str, int] = {}
    total = correct = deviation = 0.0
    rounds = 0
    for i, (names, ranks) in enumerate(history.rounds):
        if i >= FIRST_SCORED:
            keep = [k for k, p in enumerate(names) if seen.get(p, 0) >= MIN_ROUNDS]
            ratings = [before[i][names[k]] for k in keep]
            pi, rd = round_metrics(ratings, [ranks[k] for k in keep])
            if math.isfinite(pi):
                total += len(keep)
                correct += pi * len(keep)
                deviation += rd * len(keep)
                rounds += 1
        for p in names:
            seen[p] = seen.get(p, 0) + 1
    return {"pair_inversion": correct / total, "rank_deviation": deviation / total, "rounds": rounds,
            "contestants": int(total)}


def _podium_before(history: History, model: podium.Model, matches: podium.Matches) -> list[dict[str, float]]:
    """Each round's contestants' ``mu`` before it: after their previous round (``League.slots``), or the prior."""
    league = podium.League(model)
    league.record_many(matches)
    match, player, mu, _ = league.slots()
    prior = model.prior.mu
    last: dict[str, float] = {}
    out: list[dict[str, float]] = [{} for _ in history.rounds]
    for m, p, x in zip(match.tolist(), player, mu.tolist()):
        out[m][p] = last.get(p, prior)
        last[p] = x
    return out


def _emp_before(history: History, system: str, contests: Sequence[Any]) -> list[dict[str, float]]:
    """Each round's contestants' ``mu`` before it, from elo-mmr-py's incremental ``Rater`` (newcomers: ``mu_noob``)."""
    import elo_mmr_py as em

    rater = em.Rater(cast(Any, system))  # a name of SUPPORTED_SYSTEMS
    out = []
    for (names, _), contest in zip(history.rounds, contests):
        snapshot = rater.ratings
        out.append({p: (snapshot[p].mu if p in snapshot else rater.mu_noob) for p in names})
        rater.add(contest)
    return out


# -- one run of one system on one history (a subprocess) -------------------------------------------------------------
def _warm_up(model: Any) -> None:
    """Compile (or load from numba's cache) the model's kernels on a small free-for-all history with ties."""
    rng = np.random.default_rng(0)
    rounds = [([f"w{j}" for j in who], _dense_ranks(np.round(rng.normal(size=30) / 0.5)))
              for who in (rng.choice(60, size=30, replace=False) for _ in range(8))]
    small = History("warm-up", rounds)
    if isinstance(model, podium.TrueSkillThroughTime):
        model.smooth(small.matches(1.0))
    else:
        podium.League(model, keep_history=False).record_many(small.matches())
        podium.League(model).record_many(small.matches())


def worker(history_name: str, system: str, task: str) -> dict[str, Any]:
    """Run ``task`` (``time``: one timed whole-history rating; ``metrics``: the contest metrics) of ``system`` on
    ``history_name``; the result is printed as one JSON line."""
    history = load(history_name)
    caught: list[warnings.WarningMessage] = []
    out: dict[str, Any] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if system.startswith("podium "):
            model = PODIUM_SYSTEMS[system.removeprefix("podium ")]()
            smoother = isinstance(model, podium.TrueSkillThroughTime)
            matches = history.matches(1.0 if smoother else DAY)
            _warm_up(model)
            if task == "time":
                began = time.perf_counter()
                if smoother:
                    model.smooth(matches)
                else:
                    podium.League(model, keep_history=False).record_many(matches)
                out["seconds"] = time.perf_counter() - began
            elif smoother:
                out["not_applicable"] = "smoother"
            else:
                out.update(contest_metrics(history, _podium_before(history, model, matches)))
        else:
            import elo_mmr_py as em

            name = system.removeprefix("elo-mmr-py ")
            contests = history.contests()
            if task == "time":
                began = time.perf_counter()
                em.rate_latest(contests, cast(Any, name))
                out["seconds"] = time.perf_counter() - began
            else:
                out.update(contest_metrics(history, _emp_before(history, name, contests)))
    kinds = sorted({w.category.__name__ for w in caught})
    if kinds:
        out["warnings"] = {k: sum(w.category.__name__ == k for w in caught) for k in kinds}
    return out


def run_task(history: str, system: str, task: str, timeout: float) -> dict[str, Any]:
    """One task in a subprocess of its own (its own process group, killed whole on a timeout): the worker's JSON,
    or ``{"failed": what happened}``."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", history, system, task]
    began = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return {"failed": f"timeout > {timeout:g} s"}
    wall = time.perf_counter() - began
    for line in reversed(stdout.splitlines()):
        if line.startswith("RESULT "):
            return json.loads(line.removeprefix("RESULT ")) | {"process_seconds": wall}
    if proc.returncode < 0:
        return {"failed": f"killed by {signal.Signals(-proc.returncode).name}"}
    last = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    error = last[-1] if last else f"exit status {proc.returncode}"
    return {"failed": error.split(":")[0].strip() or error, "detail": error[:300]}


# -- the whole run ------------------------------------------------------------------------------------------------
@dataclass
class Row:
    """One system on one history: its timings (seconds), metrics, and what went wrong."""

    system: str
    seconds: list[float] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    failed: str | None = None
    metrics_failed: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds) if self.seconds else math.nan


def measure(history: str, systems: Sequence[str], repeat: int, timeout: float) -> list[Row]:
    rows = []
    for system in systems:
        row = Row(system)
        for _ in range(repeat):
            result = run_task(history, system, "time", timeout)
            if "failed" in result:
                row.failed = result["failed"]
                if "detail" in result:
                    row.notes.append(result["detail"])
                break
            row.seconds.append(result["seconds"])
            for kind, count in result.get("warnings", {}).items():
                note = f"{kind} x{count}"
                if note not in row.notes:
                    row.notes.append(note)
        if row.failed is None:
            result = run_task(history, system, "metrics", timeout)
            if "failed" in result:
                row.metrics_failed = result["failed"]
                if "detail" in result:
                    row.notes.append("metrics: " + result["detail"])
            elif "not_applicable" in result:
                row.metrics_failed = "n/a (smoother)"
            else:
                row.metrics = result
        rows.append(row)
        if row.failed:
            done = row.failed
        elif row.metrics:
            done = (f"{row.median:.3f} s; pair inversion {row.metrics['pair_inversion']:.4f}, rank deviation "
                    f"{row.metrics['rank_deviation']:.4f}")
        else:
            done = f"{row.median:.3f} s; {row.metrics_failed}"
        print(f"  {history}: {system}: {done}" + (f"  [{'; '.join(row.notes)}]" if row.notes else ""),
              file=sys.stderr, flush=True)
    return rows


def _cells(row: Row, reference: float) -> list[str]:
    """The cells of one row: pair inversion, rank deviation, median seconds, time over the reference's."""
    if row.failed:
        return [row.failed, row.failed, row.failed, "—"]
    if row.metrics:
        pi, rd = f"{row.metrics['pair_inversion']:.4f}", f"{row.metrics['rank_deviation']:.4f}"
    else:
        pi = rd = row.metrics_failed or "—"
    spread = f" ({min(row.seconds):.3g}–{max(row.seconds):.3g})" if len(row.seconds) > 1 else ""
    ratio = f"{row.median / reference:.3g}×" if math.isfinite(reference) else "—"
    return [pi, rd, f"{row.median:.3g}{spread}", ratio]


HEADER = ["system", "pair inversion ↑", "rank deviation ↓", "seconds (median)", "time / elo-mmr-py mmr"]


def table_rows(rows: Sequence[Row]) -> list[list[str]]:
    ref = next((r.median for r in rows if r.system == "elo-mmr-py mmr" and not r.failed), math.nan)
    return [[r.system, *_cells(r, ref)] for r in rows]


def markdown(name: str, info: dict[str, Any], rows: Sequence[Row], repeat: int) -> list[str]:
    lines = [f"**{name}**: {info['rounds']} rounds, {info['placings']:,} placings, {info['players']:,} players, "
             f"fields up to {info['largest field']:,} (median {info['median field']:,}), the largest tie group "
             f"{100 * info['largest tie group']:.0f} % of its field; {info['counted contestants']:,} contestants "
             f"counted. Seconds: median of {repeat}" + (" (range)" if repeat > 1 else "") + ".", "",
             "| " + " | ".join(HEADER) + " |", "|---|" + "---:|" * (len(HEADER) - 1)]
    lines += ["| " + " | ".join(cells) + " |" for cells in table_rows(rows)]
    notes = [f"{r.system}: {'; '.join(r.notes)}" for r in rows if r.notes]
    if notes:
        lines += ["", "Notes: " + " · ".join(notes)]
    return lines


def show(name: str, info: dict[str, Any], rows: Sequence[Row], repeat: int) -> None:
    title = (f"{name}: {info['rounds']} rounds, {info['placings']:,} placings, {info['players']:,} players, largest "
             f"field {info['largest field']:,}, largest tie group {100 * info['largest tie group']:.0f} %; "
             f"seconds = median of {repeat}")
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        print(title)
        for cells in [HEADER, *table_rows(rows)]:
            print("  ".join(f"{c:>22}" if i else f"{c:<34}" for i, c in enumerate(cells)))
    else:
        table = Table(title=title)
        for i, h in enumerate(HEADER):
            table.add_column(h, justify="left" if i == 0 else "right")
        for cells in table_rows(rows):
            table.add_row(*cells)
        Console(width=160).print(table)
    for r in rows:
        if r.notes:
            print(f"  note: {r.system}: {'; '.join(r.notes)}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per system and history (median)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds allowed to each run of a system")
    parser.add_argument("--histories", default=",".join(HISTORIES))
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--markdown", action="store_true", help="also print the tables as Markdown")
    parser.add_argument("--worker", nargs=3, metavar=("HISTORY", "SYSTEM", "TASK"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print("RESULT " + json.dumps(worker(*args.worker)), flush=True)
        return 0
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = [s for s in systems if s not in SYSTEMS]
    if unknown:
        parser.error(f"unknown systems {unknown}; known: {SYSTEMS}")
    import elo_mmr_py as em

    here = Path(__file__).resolve().parent
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=here).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "../src"], capture_output=True, text=True,
                           cwd=here).stdout.split()[1::2]
    head += f" + uncommitted {', '.join(dirty)}" if dirty else ""
    print(f"podium {podium.__version__} (git {head or '?'}), elo-mmr-py {em.__version__}, Python "
          f"{sys.version.split()[0]}, {os.cpu_count()} cores; {time.strftime('%Y-%m-%d %H:%M')}", flush=True)
    out = []
    for name in [h.strip() for h in args.histories.split(",") if h.strip()]:
        info = load(name).describe()
        began = time.perf_counter()
        rows = measure(name, systems, args.repeat, args.timeout)
        print(f"{name}: {time.perf_counter() - began:.0f} s", file=sys.stderr, flush=True)
        show(name, info, rows, args.repeat)
        out.append(markdown(name, info, rows, args.repeat))
    if args.markdown:
        print()
        for lines in out:
            print("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
