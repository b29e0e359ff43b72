"""What a single public call costs beyond its compiled kernel (issue 32): a game server calls these one match at a time.

For races of n = 2, 6 and 20 one-player teams, the median of ``--repeats`` timings of ``--calls`` calls each (after
one warm-up call, so nothing compiles in the timing), side by side:

* ``podium.ordering.log_order(m, s, rank, gradient=True)`` against its kernel ``ordering.outcome.log_outcome`` on
  prepared arrays;
* ``podium.ordering.rank_probabilities(m, s)`` against ``ordering.outcome.place_probabilities``;
* for TrueSkill and PlackettLuce: ``model.rate(match, ratings)``, ``model.win_probabilities(teams, ratings)`` and
  ``model.quality(teams, ratings)`` against the model's own compiled step on an already packed match (``_replay``,
  ``_log_win``, ``_log_qualities`` or the quality of ``_predictive``), which is what the public call adds checking,
  packing and unpacking to.

The target is the public call within 1.5x of its kernel for n <= 20.  A second table sets the same public calls
beside the peers' (the ``trueskill`` package's ``rate`` and ``quality``, openskill's Plackett-Luce ``rate`` and
``predict_win``) on the same fields, where they are installed.  The machine is shared: read the ratios.

    python benchmarks/overhead.py [--repeats 7] [--calls 2000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

# The compiled calls, as a long-lived server makes them once its kernels are compiled (a new process's first calls run
# interpreted: benchmarks/startup.py times those).
os.environ.setdefault("PODIUM_JIT", "compiled")

import numba  # noqa: E402
import numpy as np  # noqa: E402

import podium  # noqa: E402
from podium import Match, Rating  # noqa: E402
from podium.data.rating import ratings_of
from podium.ordering import log_order, rank_probabilities
from podium.ordering.outcome import log_outcome, place_probabilities


def _median_us(call: Callable[[], Any], calls: int, repeats: int) -> float:
    call()
    runs = []
    for _ in range(repeats):
        began = time.perf_counter()
        for _ in range(calls):
            call()
        runs.append((time.perf_counter() - began) / calls * 1e6)
    return statistics.median(runs)


def _rows(n: int, calls: int, repeats: int) -> list[tuple[str, float, float]]:
    rng = np.random.default_rng(n)
    m, s = rng.normal(0.0, 1.0, n), np.exp(rng.normal(0.0, 0.2, n))
    rank_list: list[int | None] = list(range(n))
    rank, size = np.arange(n, dtype=np.int64), np.ones(n)
    gl, gs, places = np.zeros(n), np.zeros(n), np.empty((n, n))
    rows = [
        ("log_order + gradient", _median_us(lambda: log_order(m, s, rank_list, gradient=True), calls, repeats),
         _median_us(lambda: log_outcome(m, s, 0, 0.0, rank, size, 0.0, True, gl, gs, 1.0), calls, repeats)),
        ("ordering.rank_probabilities", _median_us(lambda: rank_probabilities(m, s), calls, repeats),
         _median_us(lambda: place_probabilities(m, s, 0, 0.0, places, 1.0), calls, repeats)),
    ]
    teams = [[f"p{i}"] for i in range(n)]
    match = Match(teams)
    for model in (podium.TrueSkill(), podium.PlackettLuce()):
        name = type(model).__name__
        prior = model.prior
        ratings = {t[0]: Rating(prior.mu + 3.0 * float(rng.normal()), prior.sigma) for t in teams}
        packed, mu, sigma = model._pack(match, ratings)
        slots = np.arange(len(mu))

        def replay(model: Any = model, packed: Any = packed, mu: Any = mu, sigma: Any = sigma, slots: Any = slots
                   ) -> None:
            model._replay(packed, slots, model._new_state(mu, sigma), None)

        rows.append((f"{name}.rate", _median_us(lambda: model.rate(match, ratings), calls, repeats),
                     _median_us(replay, calls, repeats)))
        rows.append((f"{name}.win_probabilities",
                     _median_us(lambda: model.win_probabilities(teams, ratings), calls, repeats),
                     _median_us(lambda: model._log_win(packed, mu, sigma), calls, repeats)))
        if isinstance(model, podium.TrueSkill):
            kernel = _median_us(lambda: model._log_qualities(packed, mu, sigma), calls, repeats)
        else:
            kernel = _median_us(lambda: model._predictive(packed, mu, sigma), calls, repeats)
        rows.append((f"{name}.quality", _median_us(lambda: model.quality(teams, ratings), calls, repeats), kernel))
    return rows


def _peer_rows(n: int, calls: int, repeats: int) -> list[tuple[str, float, float]]:
    """(call, podium us, peer us) for the calls a peer has; none for a peer that is not installed."""
    rng = np.random.default_rng(n)
    teams = [[f"p{i}"] for i in range(n)]
    rows = []
    try:
        import trueskill
    except ImportError:
        trueskill = None
    if trueskill is not None:
        model = podium.TrueSkill()
        ratings = {t[0]: Rating(25.0 + 3.0 * float(rng.normal()), 25.0 / 3.0) for t in teams}
        env = trueskill.TrueSkill(draw_probability=model.draw_probability)
        groups = [(env.create_rating(ratings[t[0]].mu, ratings[t[0]].sigma),) for t in teams]
        match = Match(teams)
        rows.append(("TrueSkill.rate | trueskill.rate", _median_us(lambda: model.rate(match, ratings), calls, repeats),
                     _median_us(lambda: env.rate(groups), calls, repeats)))
        rows.append(("TrueSkill.quality | trueskill.quality",
                     _median_us(lambda: model.quality(teams, ratings), calls, repeats),
                     _median_us(lambda: env.quality(groups), calls, repeats)))
    try:
        from openskill.models import PlackettLuce as OpenPL
    except ImportError:
        return rows
    model = podium.PlackettLuce()
    ratings = {t[0]: Rating(1500.0 + 200.0 * float(rng.normal())) for t in teams}
    open_model = OpenPL()
    open_teams = [[open_model.rating(25.0 + 3.0 * float(rng.normal()))] for _ in teams]
    match = Match(teams)
    rows.append(("PlackettLuce.rate | openskill rate", _median_us(lambda: model.rate(match, ratings), calls, repeats),
                 _median_us(lambda: open_model.rate(open_teams), calls, repeats)))
    rows.append(("PlackettLuce.win_probabilities | openskill predict_win",
                 _median_us(lambda: model.win_probabilities(teams, ratings), calls, repeats),
                 _median_us(lambda: open_model.predict_win(open_teams), calls, repeats)))
    return rows


@numba.njit
def _touch(mu: np.ndarray, sigma: np.ndarray) -> float:
    return mu[0] + sigma[0]


def _floor_us(n: int, calls: int, repeats: int) -> float:
    """What any call that takes names and Ratings pays before and after its kernel, at the least: ``n`` Ratings
    read from a dict into two arrays, one compiled call that does nothing, ``n`` Ratings made (checked at once, as
    :func:`podium.data.rating.ratings_of` does) into a dict.  The public calls' budget beside a kernel of ``k`` us is ``0.5 k``."""
    ratings = {f"p{i}": Rating(25.0 + i, 8.0) for i in range(n)}
    names = list(ratings)

    def call() -> dict[str, Rating]:
        given = [ratings[name] for name in names]
        mu, sigma = np.array([r.mu for r in given]), np.array([r.sigma for r in given])
        _touch(mu, sigma)
        return ratings_of(names, mu.tolist(), sigma.tolist())

    return _median_us(call, calls, repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    print(f"{'call':32} {'n':>3} {'public us':>10} {'kernel us':>10} {'ratio':>6}")
    ratios = []
    for n in (2, 6, 20):
        for name, public, kernel in _rows(n, args.calls, args.repeats):
            ratios.append(public / kernel)
            flag = "" if public <= 1.5 * kernel else "  (above 1.5x)"
            print(f"{name:32} {n:>3} {public:10.2f} {kernel:10.2f} {public / kernel:6.2f}{flag}", flush=True)
    print(f"median ratio {statistics.median(ratios):.2f}; {sum(r <= 1.5 for r in ratios)} of {len(ratios)} within 1.5x")
    print("the least a call through names and Ratings pays besides its kernel (dict -> arrays -> a compiled no-op "
          "-> Ratings): " + ", ".join(f"n = {n}: {_floor_us(n, args.calls, args.repeats):.2f} us" for n in (2, 6, 20)))
    print(f"\n{'podium call | peer call':54} {'n':>3} {'podium us':>10} {'peer us':>10} {'peer/podium':>11}")
    for n in (2, 6, 20):
        for name, ours, theirs in _peer_rows(n, max(args.calls // 10, 20), args.repeats):
            print(f"{name:54} {n:>3} {ours:10.2f} {theirs:10.2f} {theirs / ours:11.1f}", flush=True)


if __name__ == "__main__":
    main()
