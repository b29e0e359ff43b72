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

import os as _os

_os.environ.setdefault("PODIUM_JIT", "compiled")  # the compiled speed: warm-up calls compile, timed ones do not

import math
import time
import warnings
from pathlib import Path

import podium


MODELS = {
    "PlackettLuce": lambda: podium.PlackettLuce(), "PairwiseElo": lambda: podium.PairwiseElo(),
    "Elo(gaussian)": lambda: podium.Elo(performance="gaussian"), "Thurstone": lambda: podium.Thurstone(),
    "TrueSkill": lambda: podium.TrueSkill(), "Glicko2": lambda: podium.Glicko2(),
    "before: PlackettLuce spread=0": lambda: podium.PlackettLuce(spread=0.0),
    "before: TrueSkill center=False": lambda: podium.TrueSkill(center=False),
}


def histories(data: Path | None = None) -> dict[str, podium.Matches]:
    """The simulated histories (5 v 5, 8 v 8, 4 v 3 with parties) and ``atp_doubles`` where the data is here."""
    out = {}
    for sizes in ((5, 5), (8, 8), (4, 3)):
        sim = podium.simulate(300, 15_000, teams=2, team_size=sizes, parties=0.6, party_size=3, seed=7)
        out[f"{sizes[0]} v {sizes[1]}, parties of 3 lead 60 % of teams"] = sim.matches
    data = data or Path(__file__).resolve().parents[2] / "shared" / "data"
    doubles = data / "atp_doubles" / "matches.jsonl.gz"
    if doubles.exists():
        out["atp_doubles (shared data)"] = podium.read_matches(doubles)
    return out


Row = tuple[dict[str, float], dict[str, float], float]  # default report, fitted report, seconds


def measure(m: podium.Matches, split: float = 0.7) -> dict[str, Row]:
    """Each model's held-out report at its defaults and fitted (``podium.fit`` on the first ``split``)."""
    cut = int(split * len(m))
    rows = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", podium.ConvergenceWarning)
        for name, make in MODELS.items():
            t = time.perf_counter()
            model = make()
            given = podium.evaluate(m, {name: model}, start=cut)[name]
            fitted = podium.fit(model, m, split=split).report[type(model).__name__]
            rows[name] = (given, fitted, time.perf_counter() - t)
    return rows


def markdown(label: str, rows: dict[str, Row]) -> list[str]:
    """One history's table: pair log loss and calibration error at the defaults and fitted, and the fitted loss
    minus fitted TrueSkill's."""
    reference = rows["TrueSkill"][1]["pair_log_loss"]
    lines = [f"**{label}**", "", "| model | default pair log loss | ECE | fitted pair log loss | ECE | "
             "fitted − TrueSkill fitted |", "|---|---|---|---|---|---|"]
    for name, (given, fitted, _) in rows.items():
        lines.append(f"| {name} | {given['pair_log_loss']:.4f} | {given['calibration_error']:.4f} | "
                     f"{fitted['pair_log_loss']:.4f} | {fitted['calibration_error']:.4f} | "
                     f"{fitted['pair_log_loss'] - reference:+.4f} |")
    return lines


def main() -> None:
    print(f"log 2 = {math.log(2):.4f} (a coin flip's pair log loss)")
    found = histories()
    for label, m in found.items():
        rows = measure(m)
        reference = rows["TrueSkill"][1]["pair_log_loss"]
        print(f"\n{label}")
        print(f"  {'model':<30} {'default LL':>10} {'ECE':>7} {'fitted LL':>10} {'ECE':>7} {'- TrueSkill':>11} "
              f"{'seconds':>8}")
        for name, (given, fitted, seconds) in rows.items():
            print(f"  {name:<30} {given['pair_log_loss']:10.4f} {given['calibration_error']:7.4f} "
                  f"{fitted['pair_log_loss']:10.4f} {fitted['calibration_error']:7.4f} "
                  f"{fitted['pair_log_loss'] - reference:+11.4f} {seconds:8.1f}", flush=True)
    if not any(label.startswith("atp_doubles") for label in found):
        print("\n../shared/data/atp_doubles is not here: the real team history is left out")


if __name__ == "__main__":
    main()
