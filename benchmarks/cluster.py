"""``podium.fit`` of three models on one shared history, here and on a 2-worker dask ``LocalCluster``.

What is measured
----------------
One real history (``../shared/data/<name>/matches.jsonl.gz``, default ``atp_singles``; read with
``errors="skip"``) and three models at their defaults: ``Elo`` (``PairwiseElo`` where a match has more than
two teams), ``TrueSkill`` and ``PlackettLuce``.

* **here** -- ``podium.fit([a, b, c], matches)``: the three fits one after the other in this process, after a
  warm-up fit on a slice of the history (so numba's compilation is not counted);
* **cluster** -- the same call with ``executor=client.get_executor()`` on ``LocalCluster(n_workers=2,
  threads_per_worker=1, processes=True)``: one task per model, each carrying the whole history.  The cluster's
  start and a warm-up of its workers (the same small fit on each, through ``Client.run``) are timed apart
  from the fit; the speed-up is printed for the fit alone and with the warm-up.
* **one model** -- ``podium.fit(TrueSkill, matches)`` here and with the cluster's executor, where only the
  starting point and Nelder-Mead's initial simplex (five replays) are sent ahead; the rest of the search is
  sequential by nature.  Also on a ``ThreadPoolExecutor`` with as many threads as workers, which sends
  nothing (podium's kernels release the GIL).

The results with and without the cluster must be equal (hyperparameters, held-out and training scores,
number of replays): the script says so and exits with status 1 if not.  Nothing is asserted about speed:
the figures depend on the machine (a 2-core machine shares its cores between the workers and this process)
and on the history (one task per model: the longest fit bounds the speed-up, and each task pickles the
history, about 160 bytes a match).  dask's nanny starts its workers with ``MALLOC_TRIM_THRESHOLD_=65536``,
which makes podium's replays 2-3 times slower there (every replay allocates and frees large arrays); the
cluster is started without it (``distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_: None``) unless
``--keep-malloc-trim`` is given.

Run ``.venv/bin/python benchmarks/cluster.py`` (about a minute); ``--dataset NAME`` picks another
history, ``--workers N`` another cluster size.
"""

from __future__ import annotations

import os as _os

_os.environ.setdefault("PODIUM_JIT", "compiled")  # the compiled speed: warm-up calls compile, timed ones do not

import argparse
import pickle
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any


import podium  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def _warm_up() -> None:
    """A small fit of each model, so that numba's kernels are compiled (or loaded from its cache)."""
    sim = podium.simulate(50, 300, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        podium.fit([podium.Elo, podium.PairwiseElo, podium.TrueSkill, podium.PlackettLuce], sim.matches,
                   max_evaluations=3)


def _same(a: podium.FitResult, b: podium.FitResult) -> bool:
    return (a.params == b.params and a.score == b.score and a.train_score == b.train_score
            and a.evaluations == b.evaluations)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--dataset", default="atp_singles", help="a folder of ../shared/data (default atp_singles)")
    parser.add_argument("--workers", type=int, default=2, help="LocalCluster workers (default 2)")
    parser.add_argument("--keep-malloc-trim", action="store_true",
                        help="keep dask's MALLOC_TRIM_THRESHOLD_=65536 in the workers (slower replays)")
    args = parser.parse_args(argv)
    try:
        import dask
        from dask.distributed import Client, LocalCluster
    except ImportError:
        print("dask.distributed is not installed: pip install 'dask[distributed]'", file=sys.stderr)
        return 2
    path = DATA / args.dataset / "matches.jsonl.gz"
    if not path.exists():
        print(f"{path} is not present", file=sys.stderr)
        return 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        matches = podium.read_matches(path, errors="skip")
    first: Any = podium.PairwiseElo if int(matches.n_teams.max()) > 2 else podium.Elo
    models: list[Any] = [first, podium.TrueSkill, podium.PlackettLuce]
    print(f"{args.dataset}: {len(matches):,} matches, {len(matches.players):,} players, "
          f"pickled {len(pickle.dumps(matches)) / 1e6:.1f} MB; models {[m.__name__ for m in models]}")

    _warm_up()
    began = time.perf_counter()
    here = podium.fit(models, matches)
    here_seconds = time.perf_counter() - began
    began = time.perf_counter()
    one_here = podium.fit(podium.TrueSkill, matches)
    one_here_seconds = time.perf_counter() - began
    with ThreadPoolExecutor(args.workers) as threads:
        began = time.perf_counter()
        one_threads = podium.fit(podium.TrueSkill, matches, executor=threads)
        one_threads_seconds = time.perf_counter() - began

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # dask's "large object in task graph" for the history
        # dask's nanny starts workers with MALLOC_TRIM_THRESHOLD_=65536, which makes podium's replays (large
        # arrays allocated and freed per replay) 2-3 times slower in a worker; None leaves glibc's default.
        trim = None if args.keep_malloc_trim else {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}
        began = time.perf_counter()
        with dask.config.set(trim or {}), LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None,
                          timeout="120s") as cluster, Client(cluster, timeout="120s") as client:
            start_seconds = time.perf_counter() - began
            began = time.perf_counter()
            client.run(_warm_up)
            warm_seconds = time.perf_counter() - began
            executor = client.get_executor()
            began = time.perf_counter()
            there = podium.fit(models, matches, executor=executor)
            there_seconds = time.perf_counter() - began
            began = time.perf_counter()
            one_there = podium.fit(podium.TrueSkill, matches, executor=executor)
            one_there_seconds = time.perf_counter() - began

    print(f"\n{'':28}{'here':>10}{'cluster':>10}{'speed-up':>10}")
    for a, b in zip(here, there):
        print(f"  {type(a.model).__name__:26}{a.seconds:>9.2f}s{b.seconds:>9.2f}s   (each fit's own time)")
    print(f"{'three fits':28}{here_seconds:>9.2f}s{there_seconds:>9.2f}s{here_seconds / there_seconds:>9.2f}x")
    print(f"{'  with the workers warm-up':28}{'':>10}{there_seconds + warm_seconds:>9.2f}s"
          f"{here_seconds / (there_seconds + warm_seconds):>9.2f}x")
    print(f"{'one TrueSkill fit':28}{one_here_seconds:>9.2f}s{one_there_seconds:>9.2f}s"
          f"{one_here_seconds / one_there_seconds:>9.2f}x")
    print(f"{'  on a thread pool instead':28}{'':>10}{one_threads_seconds:>9.2f}s"
          f"{one_here_seconds / one_threads_seconds:>9.2f}x")
    print(f"(cluster start {start_seconds:.2f}s, workers' warm-up {warm_seconds:.2f}s, not in the fits)")

    equal = all(_same(a, b) for a, b in zip(here, there)) and _same(one_here, one_there) and _same(one_here, one_threads)
    print("\nresults with and without the cluster are " + ("equal" if equal else "DIFFERENT"))
    for r in here:
        print(f"  {type(r.model).__name__:14} score {r.score:.6f}  " + ", ".join(f"{k}={v:.4g}" for k, v in r.params.items()))
    return 0 if equal else 1


if __name__ == "__main__":
    sys.exit(main())
