"""Speed of podium.components and of a League's components, on the shared histories.

What is measured
----------------
For each history in ``../shared/data`` (skipped when absent), read with ``errors="skip"``:

* ``podium.components(matches)`` at its defaults (``thin=5, min_size=10``): components, groups and thin
  links, the best of ``--repeats`` runs after one run that loads the compiled kernels;
* a League's replay (``League(Elo() or PlackettLuce(), keep_history=False).record_many(matches)``), and
  then its first ``league.components()``, which joins the replayed batch (the League defers that to the
  first read, so the replay itself does not pay it): the best of ``--repeats`` fresh leagues.

Run ``.venv/bin/python benchmarks/components.py`` (a few seconds).
"""

from __future__ import annotations

import os as _os

_os.environ.setdefault("PODIUM_JIT", "compiled")  # the compiled speed: warm-up calls compile, timed ones do not

import argparse
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import podium

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def best(repeats: int, run: Callable[[], object]) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"{'history':20s} {'matches':>9s} {'players':>8s} {'comps':>6s} {'links':>5s} "
          f"{'components()':>13s} {'replay':>9s} {'+ components':>13s}")
    for path in sorted(DATA.glob("*/matches.jsonl.gz")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            matches = podium.read_matches(path, errors="skip")
        found = podium.components(matches)  # loads the compiled kernels
        seconds = best(args.repeats, lambda: podium.components(matches))
        model = podium.Elo() if int(matches.n_teams.max()) == 2 else podium.PlackettLuce()
        podium.League(model, keep_history=False).record_many(matches[:16]).components()
        replay = read = float("inf")
        for _ in range(args.repeats):
            league = podium.League(model, keep_history=False)
            start = time.perf_counter()
            league.record_many(matches)
            middle = time.perf_counter()
            league.components()
            end = time.perf_counter()
            replay, read = min(replay, middle - start), min(read, end - middle)
        print(f"{path.parent.name:20s} {len(matches):9,d} {found.n_players:8,d} {found.n_components:6,d} "
              f"{len(found.thin_links):5d} {1000 * seconds:10.1f} ms {1000 * replay:6.1f} ms {1000 * read:10.1f} ms")


if __name__ == "__main__":
    main()
