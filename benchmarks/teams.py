"""Team games and calibration: the measurement behind issue 16's team aggregation (run: ``python benchmarks/teams.py``).

Simulated histories with parties (``podium.simulate(..., parties=0.6, party_size=3)``: fixed groups of three
lead a team 60 % of the time) and equal or uneven teams (5 v 5, 8 v 8, 4 v 3), 300 players, 15,000 matches.
For each model, at its defaults and fitted (``podium.fit`` on the first 70 %, at most 30 replays), the held-out
pair log loss and expected calibration error (``Report[...]["calibration_error"]``).  Variants that need no
code change: ``initial=0`` / ``mu=0`` (team strength is the sum of ratings, so an offset scale such as Elo's 1500
or TrueSkill's 25 makes the larger of two uneven teams look far stronger) and partial-play weights ``1/n``
(team strength = mean rating, each member's step divided by the team's size).  Figures printed, never asserted;
about four minutes.
"""

from __future__ import annotations

import math
import time
import warnings
from typing import Any

import numpy as np

import podium


def mean_weights(m: podium.Matches) -> podium.Matches:
    """The same matches with every player's weight 1 / (team size): team strength = the members' mean."""
    sizes = np.diff(m.team_start)
    return podium.Matches(m.match_start, m.team_start, m.team_rank, m.player, np.repeat(1.0 / sizes, sizes), m.time,
                          m.players)


def table(label: str, m: podium.Matches, models: dict[str, Any], split: float = 0.7) -> None:
    print(f"\n{label}")
    print(f"  {'model':<26} {'default LL':>10} {'ECE':>7} {'fitted LL':>10} {'ECE':>7} {'seconds':>8}")
    cut = int(split * len(m))
    for name, model in models.items():
        t = time.perf_counter()
        given = podium.evaluate(m, {name: model}, start=cut)[name]
        fitted = podium.fit(model, m, split=split, max_evaluations=30).report[type(model).__name__]
        print(f"  {name:<26} {given['pair_log_loss']:10.4f} {given['calibration_error']:7.4f} "
              f"{fitted['pair_log_loss']:10.4f} {fitted['calibration_error']:7.4f} {time.perf_counter() - t:8.1f}",
              flush=True)


def main() -> None:
    warnings.simplefilter("ignore", podium.ConvergenceWarning)
    models = {
        "PlackettLuce": podium.PlackettLuce(), "PlackettLuce spread=0": podium.PlackettLuce(spread=0.0),
        "PairwiseElo": podium.PairwiseElo(), "Elo gaussian": podium.Elo(performance="gaussian"),
        "Thurstone": podium.Thurstone(), "TrueSkill": podium.TrueSkill(), "TrueSkill mu=0": podium.TrueSkill(mu=0.0),
    }
    print(f"log 2 = {math.log(2):.4f} (a coin flip's pair log loss)")
    for sizes in ((5, 5), (8, 8), (4, 3)):
        sim = podium.simulate(300, 15_000, teams=2, team_size=sizes, parties=0.6, party_size=3, seed=7)
        table(f"{sizes[0]} v {sizes[1]}, parties of 3 lead 60 % of teams", sim.matches, models)


if __name__ == "__main__":
    main()
