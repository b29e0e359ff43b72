"""Team games and calibration: the measurement behind issue 16's team aggregation (run: ``python benchmarks/teams.py``).

Simulated histories with parties (``podium.simulate(..., parties=0.6, party_size=3)``: fixed groups of three
lead a team 60 % of the time) and equal or uneven teams (5 v 5, 8 v 8, 4 v 3), 300 players, 15,000 matches,
and the shared team history ``atp_doubles`` (2 v 2, where ``../shared/data`` is present).  For each model, at
its defaults and fitted (``podium.fit`` on the first 70 %, its default budget), the held-out pair log loss and
expected calibration error (``Report[...]["calibration_error"]``), and the fitted loss's excess over fitted
TrueSkill's.  The rows marked "before" are the aggregation podium had until issue 16, still reachable:
``spread=0`` (a team game as noisy as a duel, each member moving by ``k``) and ``TrueSkill(center=False)`` (the
paper's literal sum of skills, under which a bigger team of newcomers is the favourite).  Figures printed,
never asserted; about five minutes.
"""

from __future__ import annotations

import math
import time
import warnings
from pathlib import Path
from typing import Any

import podium


def table(label: str, m: podium.Matches, models: dict[str, Any], split: float = 0.7) -> None:
    print(f"\n{label}")
    print(f"  {'model':<28} {'default LL':>10} {'ECE':>7} {'fitted LL':>10} {'ECE':>7} {'- TrueSkill':>11} {'seconds':>8}")
    cut = int(split * len(m))
    rows = {}
    for name, model in models.items():
        t = time.perf_counter()
        given = podium.evaluate(m, {name: model}, start=cut)[name]
        fitted = podium.fit(model, m, split=split).report[type(model).__name__]
        rows[name] = (given, fitted, time.perf_counter() - t)
    reference = rows["TrueSkill"][1]["pair_log_loss"]
    for name, (given, fitted, seconds) in rows.items():
        print(f"  {name:<28} {given['pair_log_loss']:10.4f} {given['calibration_error']:7.4f} "
              f"{fitted['pair_log_loss']:10.4f} {fitted['calibration_error']:7.4f} "
              f"{fitted['pair_log_loss'] - reference:+11.4f} {seconds:8.1f}", flush=True)


def main() -> None:
    warnings.simplefilter("ignore", podium.ConvergenceWarning)
    models = {
        "PlackettLuce": podium.PlackettLuce(), "PairwiseElo": podium.PairwiseElo(),
        "Elo(gaussian)": podium.Elo(performance="gaussian"), "Thurstone": podium.Thurstone(),
        "TrueSkill": podium.TrueSkill(), "Glicko2": podium.Glicko2(),
        "before: PlackettLuce spread=0": podium.PlackettLuce(spread=0.0),
        "before: TrueSkill center=False": podium.TrueSkill(center=False),
    }
    print(f"log 2 = {math.log(2):.4f} (a coin flip's pair log loss)")
    for sizes in ((5, 5), (8, 8), (4, 3)):
        sim = podium.simulate(300, 15_000, teams=2, team_size=sizes, parties=0.6, party_size=3, seed=7)
        table(f"{sizes[0]} v {sizes[1]}, parties of 3 lead 60 % of teams", sim.matches, models)
    doubles = Path(__file__).resolve().parents[2] / "shared" / "data" / "atp_doubles"
    files = sorted(doubles.glob("*.jsonl*")) if doubles.is_dir() else []
    if files:
        table("atp_doubles (shared data)", podium.read_matches(files[0]), models)
    else:
        print("\n../shared/data/atp_doubles is not here: the real team history is left out")


if __name__ == "__main__":
    main()
