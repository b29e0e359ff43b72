"""Speed of the ordering likelihood with its gradient (``podium.ordering``) and of a Thurstone replay.

Prints, for races whose finishing order is drawn from the model (ratings N(0, 1) in natural units), the
median time of one compiled ``log_outcome`` call with the gradient, beside issue 4's targets and the
multiplayer-Elo note's PyTorch reference (about 3 ms for 6 players and 45 ms for 100, as the issue
quotes it; that code is not run here).  Then the whole ``../shared/data/racetime_maprando`` history replayed
with ``Thurstone`` (target: under a second), if the data is present.

    python benchmarks/ordering.py [--repeats N]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

import podium
from podium.numerics import jit
from podium.ordering import GAUSSIAN, log_outcome

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "racetime_maprando" / "matches.jsonl.gz"


@jit
def _many(loc: NDArray[np.float64], scale: NDArray[np.float64], rank: NDArray[np.int64], reps: int,
          precision: float) -> float:
    n = len(loc)
    size = np.ones(n)
    gl = np.zeros(n)
    gs = np.zeros(n)
    acc = 0.0
    for _ in range(reps):
        acc += log_outcome(loc, scale, GAUSSIAN, 0.0, rank, size, 0.0, True, gl, gs, precision)
    return acc


def race_time(n: int, repeats: int, precision: float, seed: int = 0) -> float:
    """Median seconds per likelihood-and-gradient call over ``repeats`` sampled races of ``n`` players."""
    rng = np.random.default_rng(seed)
    reps = max(1, 3000 // n)
    times = []
    for _ in range(repeats):
        loc = rng.normal(size=n)
        perf = loc + rng.normal(size=n)
        rank = np.empty(n, dtype=np.int64)
        rank[np.argsort(-perf)] = np.arange(n)
        _many(loc, np.ones(n), rank, 1, precision)
        t = time.perf_counter()
        _many(loc, np.ones(n), rank, reps, precision)
        times.append((time.perf_counter() - t) / reps)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    print("ordering likelihood + gradient, Gaussian, order drawn from the model (median per call)")
    print(f"{'players':>8} {'precision':>9} {'podium':>12} {'target':>10} {'note (PyTorch)':>15} {'vs note':>8}")
    for n, target, note in ((6, 30e-6, 3e-3), (100, 1e-3, 45e-3)):
        for precision in (1.0, 0.5):
            t = race_time(n, args.repeats, precision)
            flag = "met" if t <= target else "MISSED"
            print(f"{n:>8} {precision:>9} {t * 1e6:>9.1f} us {target * 1e6:>7.0f} us {note * 1e3:>12.0f} ms "
                  f"{note / t:>7.0f}x  {flag}")
    if DATA.exists():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            matches = podium.read_matches(DATA, errors="skip")
        for precision in (1.0, 0.5):
            model = podium.Thurstone(precision=precision)
            podium.League(model, keep_history=False).record_many(matches[:20])  # compile
            times = []
            for _ in range(3):
                t = time.perf_counter()
                podium.League(model, keep_history=False).record_many(matches)
                times.append(time.perf_counter() - t)
            t = statistics.median(times)
            print(f"racetime_maprando: {len(matches)} races replayed with Thurstone(precision={precision}) "
                  f"in {t:.3f} s (target < 1 s: {'met' if t < 1 else 'MISSED'})")
    else:
        print(f"racetime_maprando: {DATA} not found, skipped")


if __name__ == "__main__":
    main()
