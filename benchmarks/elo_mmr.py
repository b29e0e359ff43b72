"""Elo-MMR on codeforces_early: podium's ``EloMMR`` against ``elo-mmr-py`` 2.0.0 (the authors' Rust implementation).

What is measured: the wall-clock time of replaying the whole history (150 rounds, 85,678 placings, 12,281
players), round ``i`` at ``86400 (i + 1)`` seconds, in each system's two variants, ``mmr`` and ``mmr-fast``:

* podium: ``podium.League(EloMMR(variant=...), keep_history=False).record_many(matches)`` (the packed history read
  once beforehand; numba's compilation or cache load excluded by a first replay of a few rounds);
* elo-mmr-py: ``elo_mmr_py.rate_latest(contests, variant)`` (the ``Contest`` objects built once beforehand); it runs
  its rounds on every core (rayon), podium on one.

Each is repeated ``--repeats`` times, alternating, and the medians are printed with the largest differences of the
final ``mu`` and ``sigma`` between the two.  Run: ``python benchmarks/elo_mmr.py [--repeats 5]``.
"""

from __future__ import annotations

import os as _os

_os.environ.setdefault("PODIUM_JIT", "compiled")  # the compiled speed: warm-up calls compile, timed ones do not

import argparse
import statistics
import time
from pathlib import Path

import podium

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "codeforces_early" / "matches.jsonl.gz"


def main() -> None:
    import elo_mmr_py as em

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    raw = podium.read_matches(DATA)
    matches = podium.Matches.from_matches([podium.Match(m.teams, m.ranks, time=86400.0 * (i + 1))
                                           for i, m in enumerate(raw)])
    contests = []
    for i, match in enumerate(raw):
        ranks = [-1 if r is None else r for r in match.ranks]  # (codeforces_early has no None)
        order = sorted(range(len(ranks)), key=lambda t: ranks[t])
        first: dict[int, int] = {}
        last: dict[int, int] = {}
        for k, t in enumerate(order):
            first.setdefault(ranks[t], k)
            last[ranks[t]] = k
        contests.append(em.Contest([(match.teams[t][0], first[ranks[t]], last[ranks[t]]) for t in order],
                                   name=str(i), time_seconds=86400 * (i + 1)))
    for variant in ("mmr", "mmr-fast"):
        model = podium.EloMMR(variant=variant)
        podium.League(model, keep_history=False).record_many(matches[:5])  # compile / load the cache
        ours, theirs = [], []
        for _ in range(args.repeats):
            began = time.perf_counter()
            league = podium.League(model, keep_history=False)
            league.record_many(matches)
            ours.append(time.perf_counter() - began)
            began = time.perf_counter()
            reference = em.rate_latest(contests, variant)
            theirs.append(time.perf_counter() - began)
        states = league.states()
        d_mu = max(abs(states[p].mu - r.mu) for p, r in reference.items())
        d_sigma = max(abs(states[p].sigma - r.sig) for p, r in reference.items())
        print(f"{variant:9s} podium {statistics.median(ours):6.3f} s   elo-mmr-py {statistics.median(theirs):6.3f} s   "
              f"(medians of {args.repeats})   max |d mu| {d_mu:.2e}   max |d sigma| {d_sigma:.2e}")


if __name__ == "__main__":
    main()
