"""Glicko-2 replay throughput: podium's ``League(Glicko2())`` against the ``glicko2`` package (2.1.0).

What is measured (run: ``.venv/bin/python benchmarks/glicko.py``; about a minute)
-----------------------------------------------------------------------------------
One simulated one-on-one history (``podium.simulate``, ``--players`` players, ``--matches`` matches, seed 1,
10 % draws), rated twice:

* **one match per period** (no times): podium ``League(Glicko2(), keep_history=False).record_many(matches)``
  against the package updating both players of each match, in order, from their ratings before it
  (``Player.update_player([r], [rd], [s])``);
* **rating periods** of 50 matches (``time = index // 50``, ``Glicko2(period=1)``): the package collects each
  period's games per player and updates every player who played once at the period's end, from the ratings
  at its start (players who sat out get ``did_not_compete``).

numba's compilation is excluded by a warm-up replay of a few matches; each figure is the median of
``--repeats`` runs; the package rates the first ``--peer-matches`` matches (its speed does not depend on how
far into the history it is).  Target (issue 16): podium at least 100x the package.  Printed, never asserted.
"""

from __future__ import annotations

import os as _os

_os.environ.setdefault("PODIUM_JIT", "compiled")  # the compiled speed: warm-up calls compile, timed ones do not

import argparse
import statistics
import time
from collections import defaultdict
from collections.abc import Callable

import numpy as np

import podium

TARGET = 100.0


def median_rate(run: Callable[[], int], repeats: int) -> float:
    times, count = [], 0
    for _ in range(repeats):
        began = time.perf_counter()
        count = run()
        times.append(time.perf_counter() - began)
    return count / statistics.median(times)


def plain(matches: podium.Matches, n: int) -> list[tuple[str, str, float]]:
    """The first ``n`` duels as (first player, second player, first player's score)."""
    out = []
    for i in range(min(n, len(matches))):
        match = matches[i]
        (a,), (b,) = match.teams
        ra, rb = match.ranks
        out.append((a, b, 0.5 if ra == rb else (1.0 if ra < rb else 0.0)))
    return out


def package_instant(games: list[tuple[str, str, float]]) -> int:
    import glicko2

    players: dict[str, glicko2.Player] = defaultdict(glicko2.Player)
    for a, b, s in games:
        pa, pb = players[a], players[b]
        ra, da, rb, db = pa.getRating(), pa.getRd(), pb.getRating(), pb.getRd()
        pa.update_player([rb], [db], [s])
        pb.update_player([ra], [da], [1.0 - s])
    return len(games)


def package_periods(games: list[tuple[str, str, float]], length: int) -> int:
    import glicko2

    players: dict[str, glicko2.Player] = defaultdict(glicko2.Player)
    for start in range(0, len(games), length):
        period: dict[str, tuple[list[float], list[float], list[float]]] = defaultdict(lambda: ([], [], []))
        for a, b, s in games[start:start + length]:
            pa, pb = players[a], players[b]
            for me, other, score in ((a, pb, s), (b, pa, 1.0 - s)):
                ratings, rds, scores = period[me]
                ratings.append(other.getRating())
                rds.append(other.getRd())
                scores.append(score)
        for name, player in players.items():
            if name in period:
                player.update_player(*period[name])
            else:
                player.did_not_compete()
    return len(games)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=2000)
    parser.add_argument("--matches", type=int, default=1_000_000)
    parser.add_argument("--peer-matches", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    from importlib.metadata import version

    sim = podium.simulate(args.players, args.matches, draw_probability=0.1, seed=1)
    m = sim.matches
    untimed = podium.Matches(m.match_start, m.team_start, m.team_rank, m.player, m.weight, np.full(len(m), np.nan),
                             m.players)
    timed = podium.Matches(untimed.match_start, untimed.team_start, untimed.team_rank, untimed.player,
                           untimed.weight, (np.arange(len(untimed)) // 50).astype(float), untimed.players)
    games = plain(untimed, args.peer_matches)
    print(f"glicko2 {version('glicko2')}, {args.players} players; podium over {args.matches:,} matches, the package "
          f"over {len(games):,}; medians of {args.repeats} runs\n")
    print(f"{'scenario':<26} {'podium matches/s':>17} {'glicko2 matches/s':>18} {'ratio':>8}  target {TARGET:.0f}x")
    for label, model, history, peer in (
        ("one match per period", podium.Glicko2(), untimed, lambda: package_instant(games)),
        ("periods of 50 matches", podium.Glicko2(period=1.0), timed, lambda: package_periods(games, 50)),
    ):
        podium.League(model, keep_history=False).record_many(history[:16])  # compile or load the kernel

        def ours(model: podium.Glicko2 = model, history: podium.Matches = history) -> int:
            podium.League(model, keep_history=False).record_many(history)
            return len(history)

        mine = median_rate(ours, args.repeats)
        theirs = median_rate(peer, args.repeats)
        ratio = mine / theirs
        print(f"{label:<26} {mine:17,.0f} {theirs:18,.0f} {ratio:7.0f}x  {'met' if ratio >= TARGET else 'MISSED'}")


if __name__ == "__main__":
    main()
