"""Speed of the ordering engine and of what stands on it, before and after, in one run (issue 14).

What is measured (medians of ``--repeats`` runs; the machine is shared, so read the ratios):

1. ``log P`` + gradient of one race (``podium.ordering.log_outcome``, Gaussian, ratings N(0, 1), the order
   drawn from the model) for n = 2, 6, 20, 100, 1,000 players: **after** (this checkout) and **before** (the
   engine of commit ``--before``, default a089499, exported with ``git archive`` into a temporary directory
   and run in a subprocess with its own numba cache, so the two never share compiled code).
   Targets: n = 6 <= 20 us, n = 100 <= 0.5 ms, n = 1,000 <= 20 ms.
2. ``podium.evaluate`` of ``Thurstone()`` and ``TrueSkill()`` on a simulated history of ``--matches``
   free-for-alls of 2-12 players (target >= 100,000 matches/s each).
3. TrueSkill 8-player free-for-all replay, ``League(TrueSkill(), keep_history=False).record_many``, beside the
   ``trueskill`` package and openskill's ``PlackettLuce`` on the first ``--peer-matches`` of the same history
   (targets: >= 1 M matches/s, >= 1,000x trueskill, >= 60x openskill).
4. 1 v 1 ``Elo(k=0.1, initial=0, scale=1)`` (the C loop's logistic Elo in natural units, eta = 0.1) and ``TrueSkill()`` replays as a fraction of the plain C loop
   ``../shared/bench/limit.c`` (built with ``cc -O2``; run with the same number of matches and players in
   the same run; target >= 1/3).
5. ``League(model)`` at its defaults (history and log-likelihoods kept) against ``keep_history=False``, for
   every model on 1 v 1 and 8-player free-for-all histories (target: within 2x); beside it, recording and then
   reading ``log_likelihoods`` (TrueSkill computes them on that first read).

    python benchmarks/ordering.py [--quick] [--json FILE]
"""

from __future__ import annotations

import os as _os

_os.environ.setdefault("PODIUM_JIT", "compiled")  # the compiled speed: warm-up calls compile, timed ones do not

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
LIMIT_C = ROOT.parent / "shared" / "bench" / "limit.c"
SIZES = (2, 6, 20, 100, 1000)
TARGETS = {6: 20e-6, 100: 0.5e-3, 1000: 20e-3}

# Runs in a subprocess (for "before") or in this one ("after"): median seconds per log P + gradient call.
_RACE_TIMER = r"""
import json, statistics, sys, time
import numpy as np
from podium.ordering.numerics import jit
from podium.ordering import GAUSSIAN, log_outcome

@jit
def _many(loc, scale, rank, reps):
    n = len(loc)
    size = np.ones(n)
    gl = np.zeros(n)
    gs = np.zeros(n)
    acc = 0.0
    for _ in range(reps):
        acc += log_outcome(loc, scale, GAUSSIAN, 0.0, rank, size, 0.0, True, gl, gs, 1.0)
    return acc

def race_times(sizes, repeats, budget):
    rng = np.random.default_rng(0)
    out = {}
    for n in sizes:
        times = []
        for _ in range(repeats):
            loc = rng.normal(size=n)
            perf = loc + rng.normal(size=n)
            rank = np.empty(n, dtype=np.int64)
            rank[np.argsort(-perf)] = np.arange(n)
            t = time.perf_counter()
            _many(loc, np.ones(n), rank, 1)  # compile (first size) and warm up
            first = time.perf_counter() - t
            reps = max(1, min(2000, int(budget / max(first, 1e-7))))
            t = time.perf_counter()
            _many(loc, np.ones(n), rank, reps)
            times.append((time.perf_counter() - t) / reps)
        out[n] = statistics.median(times)
    return out

if __name__ == "__main__":
    sizes, repeats, budget = json.loads(sys.argv[1])
    print(json.dumps(race_times(sizes, repeats, budget)))
"""


def _median_time(fn: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _race_times_in(src: Path | None, sizes: tuple[int, ...], repeats: int, budget: float, cache: Path) -> dict[int, float]:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    if src is not None:
        env["PYTHONPATH"] = str(src)
    script = cache / "race_timer.py"
    script.write_text(_RACE_TIMER)
    out = subprocess.run([sys.executable, str(script), json.dumps([list(sizes), repeats, budget])], env=env,
                         check=True, capture_output=True, text=True, cwd=cache)
    return {int(k): v for k, v in json.loads(out.stdout.strip().splitlines()[-1]).items()}


def ordering_section(args: argparse.Namespace, tmp: Path, report: dict[str, Any]) -> None:
    sizes = SIZES if not args.quick else (2, 6, 20, 100)
    old_src = tmp / "before"
    old_src.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.before, "src"], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(old_src)], input=archive.stdout, check=True)
    (tmp / "cache_before").mkdir()
    (tmp / "cache_after").mkdir()
    before = _race_times_in(old_src / "src", sizes, args.repeats, args.budget, tmp / "cache_before")
    after = _race_times_in(None, sizes, args.repeats, args.budget, tmp / "cache_after")
    print("\n1. log P + gradient of one race, Gaussian, order drawn from the model (median per call)")
    print(f"{'players':>8} {'before ' + args.before:>16} {'after':>12} {'speed-up':>9} {'target':>10}")
    for n in sizes:
        target = TARGETS.get(n)
        flag = "" if target is None else ("met" if after[n] <= target else "MISSED")
        tgt = "" if target is None else f"{target * 1e6:.0f} us"
        print(f"{n:>8} {before[n] * 1e6:>13.1f} us {after[n] * 1e6:>9.1f} us {before[n] / after[n]:>8.1f}x "
              f"{tgt:>10} {flag}")
    report["ordering"] = {"before": before, "after": after}


def _ffa_history(n_matches: int, n_players: int, low: int, high: int, seed: int) -> Any:
    import podium

    rng = np.random.default_rng(seed)
    skill = rng.normal(0.0, 1.0, n_players)
    matches = []
    for _ in range(n_matches):
        k = int(rng.integers(low, high + 1))
        who = rng.choice(n_players, size=k, replace=False)
        perf = skill[who] + rng.normal(0.0, 1.0, k)
        matches.append(podium.Match([[f"p{int(i)}"] for i in who[np.argsort(-perf)]]))
    return podium.Matches.from_matches(matches)


def evaluate_section(args: argparse.Namespace, report: dict[str, Any]) -> None:
    import podium

    history = _ffa_history(args.matches, 2000, 2, 12, 1)
    print(f"\n2. evaluate() on {len(history):,} simulated free-for-alls of 2-12 players (target >= 100,000 matches/s)")
    report["evaluate"] = {}
    for name, model in (("Thurstone()", podium.Thurstone()), ("TrueSkill()", podium.TrueSkill()),
                        ("PlackettLuce()", podium.PlackettLuce())):
        podium.evaluate(history[:50], {name: model})  # compile
        t = _median_time(lambda: podium.evaluate(history, {name: model}), max(1, args.repeats // 5))
        rate = len(history) / t
        flag = "" if name.startswith("Plackett") else ("met" if rate >= 1e5 else "MISSED")
        print(f"   {name:<16} {t:8.2f} s  {rate:>12,.0f} matches/s  {flag}")
        report["evaluate"][name] = rate


def _peer_ffa_rate(history: Any, n: int) -> tuple[float, float]:
    import openskill.models
    import trueskill

    teams_list = []
    for m in range(min(n, len(history))):
        t0, t1 = history.match_start[m], history.match_start[m + 1]
        teams_list.append([[history.players[history.player[p]] for p in range(history.team_start[t],
                                                                               history.team_start[t + 1])]
                           for t in range(t0, t1)])
    env = trueskill.TrueSkill(draw_probability=0.10)
    ratings: dict[str, Any] = {}

    def run_ts() -> None:
        ratings.clear()
        for teams in teams_list:
            groups = [{p: ratings.get(p) or env.create_rating() for p in team} for team in teams]
            for group in env.rate(groups, ranks=list(range(len(teams)))):
                ratings.update(group)

    pl = openskill.models.PlackettLuce()
    orat: dict[str, Any] = {}

    def run_os() -> None:
        orat.clear()
        for teams in teams_list:
            groups = [[orat.get(p) or pl.rating(name=p) for p in team] for team in teams]
            for team, group in zip(teams, pl.rate(groups, ranks=list(range(len(teams))))):
                for p, r in zip(team, group):
                    orat[p] = r

    return len(teams_list) / _median_time(run_ts, 3), len(teams_list) / _median_time(run_os, 3)


def trueskill_ffa_section(args: argparse.Namespace, report: dict[str, Any]) -> None:
    import podium

    history = _ffa_history(args.matches, 10_000, 8, 8, 2)
    model = podium.TrueSkill()
    podium.League(model, keep_history=False).record_many(history[:20])
    t = _median_time(lambda: podium.League(model, keep_history=False).record_many(history), args.repeats)
    rate = len(history) / t
    ts_rate, os_rate = _peer_ffa_rate(history, args.peer_matches)
    print(f"\n3. TrueSkill 8-player free-for-all replay ({len(history):,} matches)")
    print(f"   podium     {rate:>12,.0f} matches/s  (target >= 1,000,000: {'met' if rate >= 1e6 else 'MISSED'})")
    print(f"   trueskill  {ts_rate:>12,.0f} matches/s  podium is {rate / ts_rate:,.0f}x "
          f"(target >= 1,000x: {'met' if rate >= 1000 * ts_rate else 'MISSED'})")
    print(f"   openskill  {os_rate:>12,.0f} matches/s  podium is {rate / os_rate:,.0f}x "
          f"(target >= 60x: {'met' if rate >= 60 * os_rate else 'MISSED'})")
    report["trueskill_ffa"] = {"podium": rate, "trueskill": ts_rate, "openskill": os_rate}


def _c_floor(n_matches: int, n_players: int, tmp: Path) -> dict[str, float] | None:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None or not LIMIT_C.exists():
        return None
    exe = tmp / "floor"
    subprocess.run([cc, "-O2", "-o", str(exe), str(LIMIT_C), "-lm"], check=True)
    out = subprocess.run([str(exe), str(n_matches), str(n_players)], check=True, capture_output=True, text=True).stdout
    rates = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[2] == "ns/match":
            rates[parts[0]] = float(parts[3])
    return rates


def one_v_one_section(args: argparse.Namespace, tmp: Path, report: dict[str, Any]) -> None:
    import podium

    n_matches = 2_000_000 if args.quick else 20_000_000
    n_players = 100_000
    rng = np.random.default_rng(3)
    a = rng.integers(0, n_players, n_matches)
    b = (a + rng.integers(1, n_players, n_matches)) % n_players  # never a itself
    player = np.empty(2 * n_matches, dtype=np.int64)
    player[0::2], player[1::2] = a, b
    history = podium.Matches.from_arrays(
        np.arange(0, 2 * n_matches + 1, 2), np.arange(2 * n_matches + 1), np.tile([0, 1], n_matches), player,
        np.ones(2 * n_matches), players=[f"p{i}" for i in range(n_players)])
    floor = _c_floor(n_matches, n_players, tmp)
    print(f"\n4. 1 v 1 replay ({n_matches:,} matches, {n_players:,} players) against ../shared/bench/limit.c")
    report["one_v_one"] = {}
    for name, model, key in (("Elo(k=0.1, initial=0, scale=1)", podium.Elo(k=0.1, initial=0.0, scale=1.0), "elo_1v1"),
                             ("TrueSkill()", podium.TrueSkill(), "trueskill_1v1")):
        podium.League(model, keep_history=False).record_many(history[:20])
        t = _median_time(lambda: podium.League(model, keep_history=False).record_many(history), 3)
        rate = n_matches / t
        if floor is None or key not in floor:
            print(f"   {name:<22} {rate:>12,.0f} matches/s  (no C compiler or limit.c: no floor)")
            continue
        frac = rate / floor[key]
        print(f"   {name:<22} {rate:>12,.0f} matches/s  C loop {floor[key]:>12,.0f}/s  = {frac:.2f} of it "
              f"(target >= 1/3: {'met' if frac >= 1 / 3 else 'MISSED'})")
        report["one_v_one"][name] = {"podium": rate, "c": floor[key]}


def history_section(args: argparse.Namespace, report: dict[str, Any]) -> None:
    import podium

    n = 200_000 if args.quick else 1_000_000
    duels = podium.simulate(10_000, n, seed=4).matches
    ffa = podium.simulate(10_000, n // 8, teams=8, seed=5).matches
    models = {"Elo()": podium.Elo(), "PairwiseElo()": podium.PairwiseElo(), "PlackettLuce()": podium.PlackettLuce(),
              "Thurstone()": podium.Thurstone(), "TrueSkill()": podium.TrueSkill()}
    print("\n5. League(model) at its defaults (history and log-likelihoods kept) against keep_history=False "
          "(target: within 2x)")
    report["history"] = {}
    for scenario, history in (("1v1", duels), ("8-player FFA", ffa)):
        for name, model in models.items():
            if name == "Elo()" and scenario != "1v1":
                continue
            part = history if name != "Thurstone()" else history[: len(history) // 20]
            podium.League(model).record_many(part[:20])
            fast = _median_time(lambda: podium.League(model, keep_history=False).record_many(part), 3)
            kept = _median_time(lambda: podium.League(model).record_many(part), 3)
            # TrueSkill defers its log-likelihoods to the first read: time that too, so nothing hides.
            read = _median_time(lambda: podium.League(model).record_many(part).log_likelihoods, 3)
            ratio = kept / fast
            print(f"   {scenario:<13} {name:<15} {len(part) / fast:>12,.0f} vs {len(part) / kept:>12,.0f} matches/s: "
                  f"{ratio:.2f}x  {'met' if ratio <= 2 else 'MISSED'}   (recorded and log-likelihoods read: "
                  f"{len(part) / read:,.0f}/s, {read / fast:.2f}x)")
            report["history"][f"{scenario} {name}"] = {"recorded": ratio, "read": read / fast}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller histories, no n = 1,000 race (a smoke run)")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--budget", type=float, default=0.2, help="seconds per timed batch of one race")
    parser.add_argument("--matches", type=int, default=100_000)
    parser.add_argument("--peer-matches", type=int, default=2_000)
    parser.add_argument("--before", default="a089499", help="the commit whose engine is 'before'")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    if args.quick:
        args.repeats, args.matches, args.peer_matches, args.budget = 3, 5_000, 200, 0.02
    report: dict[str, Any] = {}
    with warnings.catch_warnings(), tempfile.TemporaryDirectory() as tmp_name:
        warnings.simplefilter("ignore")
        tmp = Path(tmp_name)
        ordering_section(args, tmp, report)
        evaluate_section(args, report)
        trueskill_ffa_section(args, report)
        one_v_one_section(args, tmp, report)
        history_section(args, report)
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
