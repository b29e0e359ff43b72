"""Speed and memory of ``TrueSkillThroughTime.smooth`` on a real history, beside the ``trueskillthroughtime`` package.

What is measured (on ``../shared/data/atp_singles``, read with ``podium.read_matches(path, errors="skip")``;
times are days, so a batch is one tournament's start date):

1. **podium against the reference**, on the first 5,000 and the first 20,000 matches of the file: the same
   work on both sides, i.e. the first (filtering) pass and then ``--sweeps`` (10) backward+forward sweeps.

   * podium: ``TrueSkillThroughTime(draw_probability=0.0).smooth(history, max_iterations=10,
     tolerance=1e-300)`` (the tolerance must be positive; 1e-300 is never reached, so all 10 sweeps run).
     numba compilation is excluded by a first smooth of a 50-match slice; the median of ``--repeats`` (3)
     runs is reported.  Its level correction (see ``TrueSkillThroughTime._level``) stays on, as a user gets
     it: it costs a little per sweep, so podium does slightly *more* work per sweep than the reference.
   * reference: ``trueskillthroughtime`` (pure Python) ``History(composition, results, times, mu=0, sigma=6,
     beta=1, gamma=0.03, p_draw=0.0)`` (its construction is the first pass) followed by
     ``h.convergence(epsilon=-1, iterations=10, verbose=False)`` (a negative epsilon, so all 10 sweeps
     run), timed once (about 15 s for 20,000 matches).  The podium history is converted to the reference's
     lists beforehand, untimed: teams of player names, results ``len(teams) - rank`` (higher is better),
     times in days.  Both sort the matches stably by time, so they see the same batches in the same order.

   Both sides use no draw margin (the reference's default ``p_draw=0``; atp_singles has no draws), so they
   compute the same model.  Printed: matches per second (matches / wall time of pass + sweeps) and podium's
   speed as a multiple of the reference's (target >= 100x).

   As a sanity check, on the 5,000-match history the largest difference of a posterior mean and standard
   deviation between the two (every player at every batch they played in: ``Smoothed.trajectory`` against
   ``History.learning_curves``), once with podium's level correction on (the timed runs: the two then differ,
   since the correction moves the whole field's level where plain sweeps creep) and once with it and the
   extrapolation switched off (``_correct_level = _accelerate = False``: the reference's algorithm; they still
   differ by ~1e-6, the error of
   the reference's own approximate ``erfc``), and once more against the reference run with ``math.erfc`` in
   place of its approximation (untimed): that difference should be at rounding level.  Also each side's
   ``log_evidence`` in the reference's sense (the sum of each match's probability given all other matches:
   podium's ``Smoothed.loo_log_likelihood``).

2. **The whole history to convergence** (193,538 matches), ``TrueSkillThroughTime()`` with its defaults and
   ``smooth``'s default tolerance 1e-6: wall time (median of ``--repeats``), sweeps, whether it converged,
   log evidence; target <= 2 s.  And the split: ``smooth(history, max_iterations=0)`` (the first pass alone,
   with the set-up and the final evidence and result that every call pays) against the rest (the sweeps and
   level corrections: total minus first pass).

3. **Memory per player-appearance**: the peak traced memory of one more such ``smooth()`` call, measured with
   ``tracemalloc`` (numpy's and numba's array allocations are both traced) started after the history was
   read, so the input ``Matches`` is excluded, divided by the number of player slots ``len(history.player)``
   (one per player per match); target <= 200 bytes.  Also what the returned ``Smoothed`` keeps.

4. **Accuracy on simulated drifting skills** (``podium.simulate(..., skill_drift=...)``; the truth at each
   appearance is ``Simulation.slot_skills``): RMSE and Spearman correlation of the smoothed skills, of the
   online filter at the same evidence-fitted parameters, and of TrueSkill fitted by its log-likelihood.

The level correction solves its knot system with ``np.linalg.solve`` (OpenBLAS, threaded by default): on a
machine whose other cores are busy, OpenBLAS's threads then wait on each other and a sweep can take several times
longer.  The header line says what ``OPENBLAS_NUM_THREADS`` was; set it to 1 for figures that do not depend on
what else is running.

``--quick`` (a smoke run in seconds): the reference on the first 2,000 matches only, and a 20,000-match slice
instead of the whole history in 2 and 3.  Figures are printed, never asserted.  If ``../shared/data`` is
absent the benchmark says so and exits cleanly.

    .venv/bin/python benchmarks/smooth.py [--quick] [--repeats 3] [--sweeps 10] [--json FILE]
"""

from __future__ import annotations

import os as _os

_os.environ.setdefault("PODIUM_JIT", "compiled")  # the compiled speed: warm-up calls compile, timed ones do not

import argparse
import json
import math
import os
import statistics
import sys
import time
import tracemalloc
import warnings
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
HISTORY = DATA / "atp_singles" / "matches.jsonl.gz"

TARGET_RATIO = 100.0        # podium vs trueskillthroughtime, same sweeps
TARGET_SECONDS = 2.0        # the whole atp_singles history to convergence
TARGET_BYTES = 200.0        # peak memory of smooth() per player slot
NEVER = 1e-300              # a tolerance no sweep reaches: run all max_iterations sweeps
WARMUP_MATCHES = 50


def met(ok: bool) -> str:
    return "met" if ok else "MISSED"


def median_time(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """Median wall time of ``repeats`` calls, and the last call's result."""
    times = []
    out = None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def to_reference(history: Any) -> tuple[list[list[list[str]]], list[list[float]], list[float]]:
    """The history as the reference's lists: teams of player names, scores (higher is better), times."""
    names = history.players
    ms, ts, tr, pl = history.match_start, history.team_start, history.team_rank, history.player
    composition, results = [], []
    for m in range(len(history)):
        teams = range(ms[m], ms[m + 1])
        composition.append([[names[pl[q]] for q in range(ts[u], ts[u + 1])] for u in teams])
        results.append([float(len(teams) - int(tr[u])) for u in teams])
    return composition, results, [float(t) for t in history.time]


def run_reference(plain: tuple[Any, Any, Any], sweeps: int) -> tuple[float, float, Any]:
    """The reference's first pass and ``sweeps`` sweeps: (first-pass seconds, total seconds, History)."""
    import trueskillthroughtime as ttt

    composition, results, times = plain
    t = time.perf_counter()
    h = ttt.History(composition, results, times, mu=0.0, sigma=6.0, beta=1.0, gamma=0.03, p_draw=0.0)
    first = time.perf_counter() - t
    _, done = h.convergence(epsilon=-1.0, iterations=sweeps, verbose=False)
    total = time.perf_counter() - t
    if done != sweeps:
        print(f"   note: the reference ran {done} sweeps, not {sweeps}")
    return first, total, h


def differences(smoothed: Any, h: Any) -> tuple[float, float, int]:
    """Largest |mu| and |sigma| difference over every player's batches, and how many were compared."""
    d_mu = d_sigma = 0.0
    n = 0
    for name, curve in h.learning_curves().items():
        traj = smoothed.trajectory(name)
        t_ref = np.array([t for t, _ in curve])
        if len(t_ref) != len(traj.time) or not np.array_equal(t_ref, np.asarray(traj.time)):
            print(f"   note: {name}'s batches differ ({len(t_ref)} in the reference, {len(traj.time)} in podium)")
            return math.nan, math.nan, n
        mu_ref = np.array([g.mu for _, g in curve])
        sd_ref = np.array([g.sigma for _, g in curve])
        d_mu = max(d_mu, float(np.abs(np.asarray(traj.mu) - mu_ref).max()))
        d_sigma = max(d_sigma, float(np.abs(np.asarray(traj.sigma) - sd_ref).max()))
        n += len(t_ref)
    return d_mu, d_sigma, n


def versus_reference(history: Any, args: argparse.Namespace, report: dict[str, Any]) -> None:
    import podium

    sizes = (2_000,) if args.quick else (5_000, 20_000)
    sweeps = args.sweeps
    model = podium.TrueSkillThroughTime(draw_probability=0.0)
    model.smooth(history[:WARMUP_MATCHES], max_iterations=sweeps, tolerance=NEVER)  # compile
    print(f"\n1. podium against trueskillthroughtime {version('trueskillthroughtime')}: the first pass + {sweeps} "
          f"sweeps, the first matches of atp_singles (draw probability 0 on both sides)")
    print(f"   podium: median of {args.repeats} runs, level correction on; reference: one run")
    head = (f"   {'matches':>8} {'players':>8} {'batches':>8} {'podium s':>9} {'podium /s':>12} {'ref s':>8} "
            f"{'ref /s':>9} {'ref pass s':>10} {'podium x':>9}  target >= {TARGET_RATIO:.0f}x")
    print(head)
    report["versus_reference"] = []
    check = None
    for n in sizes:
        part = history[:n]
        plain = to_reference(part)
        t_podium, res = median_time(lambda: model.smooth(part, max_iterations=sweeps, tolerance=NEVER), args.repeats)
        if res.iterations != sweeps:
            print(f"   note: podium ran {res.iterations} sweeps, not {sweeps}")
        first, t_ref, h = run_reference(plain, sweeps)
        players = len({p for teams in plain[0] for team in teams for p in team})
        ratio = t_ref / t_podium
        print(f"   {n:>8,} {players:>8,} {len(h.batches):>8,} {t_podium:>9.4f} {n / t_podium:>12,.0f} {t_ref:>8.2f} "
              f"{n / t_ref:>9,.0f} {first:>10.2f} {ratio:>8,.0f}x  {met(ratio >= TARGET_RATIO)}")
        report["versus_reference"].append({"matches": n, "players": players, "batches": len(h.batches),
                                           "sweeps": sweeps, "podium_seconds": t_podium,
                                           "reference_seconds": t_ref, "reference_first_pass_seconds": first,
                                           "ratio": ratio})
        if check is None:
            check = (n, part, res, h)
    assert check is not None
    n, part, res, h = check
    plain_model = podium.TrueSkillThroughTime(draw_probability=0.0)
    plain_model._correct_level = False  # the reference's algorithm: no level correction, no extrapolation
    plain_model._accelerate = False
    res_plain = plain_model.smooth(part, max_iterations=sweeps, tolerance=NEVER)
    print(f"\n   Sanity check on the first {n:,} matches, after the first pass + {sweeps} sweeps on both sides: the "
          "largest difference of a posterior")
    print(f"   {'podium':<30} {'max |d mu|':>11} {'max |d sigma|':>14} {'compared':>9} {'loo log-lik':>13}")
    out = {}
    for label, r in (("level correction on (timed)", res), ("plain sweeps", res_plain)):
        d_mu, d_sigma, count = differences(r, h)
        print(f"   {label:<30} {d_mu:>11.3g} {d_sigma:>14.3g} {count:>9,} {r.loo_log_likelihood:>13.6f}")
        out[label] = {"mu": d_mu, "sigma": d_sigma, "compared": count, "loo": r.loo_log_likelihood}
    ref_loo = h.log_evidence()
    print(f"   {'reference History.log_evidence()':<30} {'':>11} {'':>14} {'':>9} {ref_loo:>13.6f}")
    # The reference's erfc is a Chebyshev fit (relative error ~1e-7); with math.erfc in its place it computes
    # what podium computes, so this row isolates the algorithm from that approximation (untimed).
    import trueskillthroughtime as ttt

    approx_erfc = ttt.erfc
    ttt.erfc = math.erfc
    try:
        _, _, h_exact = run_reference(to_reference(part), sweeps)
    finally:
        ttt.erfc = approx_erfc
    d_mu, d_sigma, count = differences(res_plain, h_exact)
    label = "off; reference's erfc exact"
    print(f"   {label:<30} {d_mu:>11.3g} {d_sigma:>14.3g} {count:>9,} {h_exact.log_evidence():>13.6f} (reference)")
    out[label] = {"mu": d_mu, "sigma": d_sigma, "compared": count, "reference_loo": h_exact.log_evidence()}
    print("   With the correction on the two differ by design: it moves the whole field's level at once, where the "
          "reference's sweeps creep")
    print("   towards it.  Off, they differ only by the reference's approximate erfc.  The leave-one-out sums differ "
          "as well because the")
    print("   reference's is summed from each match's probability when it was last updated, during its last sweep, "
          "and podium's from the final state")
    print("   (they agree once both have converged).")
    report["sanity"] = {"matches": n, **out, "reference_loo": ref_loo}


def whole_history(history: Any, args: argparse.Namespace, report: dict[str, Any]) -> None:
    import podium

    model = podium.TrueSkillThroughTime()
    model.smooth(history[:WARMUP_MATCHES])  # compile (already done by section 1, unless it was skipped)
    what = "a 20,000-match slice of" if args.quick else "the whole"
    print(f"\n2. {what} atp_singles history to convergence: {len(history):,} matches, TrueSkillThroughTime() "
          f"defaults, tolerance 1e-6 (median of {args.repeats})")
    total, res = median_time(lambda: model.smooth(history), args.repeats)
    first, _ = median_time(lambda: model.smooth(history, max_iterations=0), args.repeats)
    rest = total - first
    per = rest / res.iterations if res.iterations else math.nan
    print(f"   wall time      {total:8.3f} s  ({len(history) / total:,.0f} matches/s)   "
          f"target <= {TARGET_SECONDS:g} s: {met(total <= TARGET_SECONDS)}")
    print(f"   sweeps         {res.iterations:8d}    converged: {res.converged}, last step {res.step:.3g}")
    print(f"   log evidence   {res.log_evidence:14.4f}   (leave-one-out log-likelihood: {res.loo_log_likelihood:.4f})")
    print(f"   split          first pass alone (max_iterations=0) {first:.3f} s = {first / total:.0%};  the rest "
          f"{rest:.3f} s = {rest / total:.0%} ({per * 1e3:.1f} ms a sweep)")
    report["whole"] = {"matches": len(history), "seconds": total, "iterations": res.iterations,
                       "converged": res.converged, "step": res.step, "log_evidence": res.log_evidence,
                       "loo_log_likelihood": res.loo_log_likelihood, "first_pass_seconds": first,
                       "rest_seconds": rest}


def memory(history: Any, args: argparse.Namespace, report: dict[str, Any]) -> None:
    import podium

    model = podium.TrueSkillThroughTime()
    slots = len(history.player)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        res = model.smooth(history)
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    per_peak = (peak - base) / slots
    per_kept = (current - base) / slots
    print(f"\n3. Memory of smooth() on those {len(history):,} matches ({slots:,} player slots), tracemalloc, input "
          "excluded")
    print(f"   peak           {(peak - base) / 2**20:8.1f} MiB = {per_peak:6.1f} bytes a player slot   target <= "
          f"{TARGET_BYTES:.0f}: {met(per_peak <= TARGET_BYTES)}")
    print(f"   kept           {(current - base) / 2**20:8.1f} MiB = {per_kept:6.1f} bytes a player slot   (the "
          f"returned Smoothed, {res.iterations} sweeps)")
    report["memory"] = {"slots": slots, "peak_bytes": peak - base, "kept_bytes": current - base,
                        "peak_per_slot": per_peak, "kept_per_slot": per_kept}


def accuracy(args: argparse.Namespace, report: dict[str, Any]) -> None:
    """Simulated drifting skills (``podium.simulate(skill_drift=...)``, the truth at every appearance in
    ``Simulation.slot_skills``): the smoothed trajectories against the online filter at the same fitted
    parameters (the smoother's first pass, ``TrueSkill(tau=0, drift=gamma)``), and against TrueSkill fitted
    by its own held-out log-likelihood.  Error in the truth's units (the model's skill divided by its
    ``beta``), after removing the common shift that no rating system can see; Spearman rank correlation."""
    import podium
    from scipy.stats import spearmanr

    print("\n4. Accuracy on simulated drifting skills (one match per time; estimates at each appearance)")
    print(f"   {'history':<40} {'estimate':<32} {'RMSE':>7} {'Spearman':>9}")
    rows = []
    for players, n, drift in ((100, 5_000, 0.05), (300, 40_000, 0.02), (300, 40_000, 0.1)):
        if args.quick and n > 5_000:
            continue
        sim = podium.simulate(players, n, skill_drift=drift, seed=11)
        fitted = podium.fit(podium.TrueSkillThroughTime(draw_probability=0.0), sim.matches, split=1.0).model
        names = np.array(sim.matches.players)[sim.matches.player]
        order = np.argsort(names, kind="stable")  # each player's appearances, in time order

        def at_slots(smoothed: Any) -> np.ndarray:
            est = np.empty(len(names))
            est[order] = smoothed._columns()["mu"]  # one batch per appearance, players sorted, times ascending
            return est

        league = podium.League(podium.fit(podium.TrueSkill, sim.matches, metric="log_likelihood").model)
        league.record_many(sim.matches)
        ts_est = np.empty(len(names))
        for name in sim.matches.players:
            ts_est[names == name] = league.trajectory(name).mu
        estimates = (("smoothed (TTT, evidence-fitted)", at_slots(fitted.smooth(sim.matches)), fitted.beta),
                     ("online, same parameters", at_slots(fitted.smooth(sim.matches, max_iterations=0)), fitted.beta),
                     ("TrueSkill, fitted by log-lik.", ts_est, league.model.beta))
        label = f"{players} players, {n:,} matches, drift {drift}"
        for what, est, beta in estimates:
            err = est / beta - sim.slot_skills
            rmse = float(np.sqrt(np.mean((err - err.mean()) ** 2)))
            rho = float(spearmanr(est, sim.slot_skills)[0])
            print(f"   {label:<40} {what:<32} {rmse:7.3f} {rho:9.3f}")
            rows.append({"history": label, "estimate": what, "rmse": rmse, "spearman": rho})
            label = ""
    report["accuracy"] = rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2,000 matches for the reference, a 20,000-match "
                                                             "slice for the rest (a smoke run)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sweeps", type=int, default=10, help="sweeps after the first pass, in section 1")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    if not HISTORY.exists():
        print(f"skipped: {HISTORY} is absent (the real histories live in ../shared/data next to the checkout)")
        return
    import podium

    t = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        history = podium.read_matches(HISTORY, errors="skip")
    read = time.perf_counter() - t
    skipped = [str(w.message) for w in caught if "skipped" in str(w.message)]
    print(f"atp_singles: {len(history):,} matches, {len(history.players):,} players, {len(history.player):,} player "
          f"slots, read in {read:.1f} s" + (f" ({skipped[0].split(': ')[1].split(':')[0]})" if skipped else ""))
    print(f"podium {version('podium')}, numpy {np.__version__}, Python {sys.version.split()[0]}, "
          f"{os.cpu_count()} cores, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}")
    report: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", podium.ConvergenceWarning)  # max_iterations sweeps on purpose
        versus_reference(history, args, report)
        rest = history[:20_000] if args.quick else history
        whole_history(rest, args, report)
        memory(rest, args, report)
        accuracy(args, report)
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
