"""podium.audit on simulated histories, honest and abused, and on the shared real histories: writes docs/audit.md.

    python benchmarks/audit.py            # about ten minutes on two cores
    python benchmarks/audit.py --quick    # a fifth of the histories, to try it

Honest histories come from podium.simulate (duels, uneven schedules, parties in 2 v 2, six-player free-for-alls,
drifting skills); abused ones from podium.simulate_abuse (win trading, throwaway farming, sandbagging, each
injected into an honest season).  The audit runs at its defaults (TrueSkill fitted to the history,
alpha = 0.01).  An honest history "raises a flag" when any flag at all is raised in it; an injected abuser is
"flagged" when a flag of its kind names it.
"""

from __future__ import annotations

import os as _os

_os.environ.setdefault("PODIUM_JIT", "compiled")  # the compiled speed: warm-up calls compile, timed ones do not

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import beta

import podium

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
KINDS = ("one-sided pair", "farming", "sandbagging")

HONEST = [
    ("duels: 60 players, 5,000 one-on-one games", {"players": 60, "matches": 5000}),
    ("uneven schedules (activity 1: the busiest tenth play ~7x the median)", {"players": 60, "matches": 5000, "activity": 1.0}),
    ("2 v 2 with parties (half the teams a fixed pair)", {"players": 120, "matches": 4000, "teams": 2, "team_size": 2, "parties": 0.5}),
    ("six-player free-for-alls", {"players": 40, "matches": 1500, "teams": 6}),
    ("drifting skills (0.05 per game)", {"players": 60, "matches": 5000, "skill_drift": 0.05}),
]
ABUSED = [
    ("defaults (40 trades; 10 accounts x 4 games; a dive of 50)", {}),
    ("2 v 2 seasons with parties, same abuse", {"teams": 2, "team_size": 2, "parties": 0.5, "players": 120}),
]
POWER = [("trades", [10, 20, 30, 40]), ("accounts", [2, 4, 6, 8, 10]), ("dive", [20, 30, 40, 50, 60])]


def upper95(k: int, n: int) -> float:
    """Clopper-Pearson 95% upper bound on a rate seen k times in n."""
    return 1.0 if k == n else float(beta.ppf(0.975, k + 1, n - k))


def honest(n: int) -> list[str]:
    rows = ["| honest season | histories | with any flag | rate (95% upper) | seconds per audit |", "|---|---|---|---|---|"]
    all_flagged = 0
    for label, season in HONEST:
        flagged, seconds = 0, []
        for seed in range(n):
            matches = podium.simulate(seed=10_000 + seed, **season).matches
            t0 = time.perf_counter()
            flagged += bool(len(podium.audit(matches)))
            seconds.append(time.perf_counter() - t0)
        rows.append(f"| {label} | {n} | {flagged} | {flagged / n:.1%} ({upper95(flagged, n):.1%}) | {np.median(seconds):.2f} |")
        print(rows[-1], flush=True)
        all_flagged += flagged
    total = n * len(HONEST)
    rows.append(f"| **all** | {total} | {all_flagged} | {all_flagged / total:.1%} ({upper95(all_flagged, total):.1%}) | |")
    return rows


def abused(season: dict[str, Any], n: int, **abuse: Any) -> tuple[dict[str, tuple[int, int]], str, int]:
    """Per kind (flagged, injected); honest players flagged (and how many of them shared the evidence games with
    an abuser as its teammate); histories."""
    counts = {kind: [0, 0] for kind in KINDS}
    false = mates = 0
    for seed in range(n):
        players = season.get("players", 60)
        rest = {k: v for k, v in season.items() if k != "players"}
        sim = podium.simulate_abuse(players, rest.pop("matches", 5000), seed=seed, **abuse, **rest)
        result = podium.audit(sim.matches)
        abusers = {p for cases in sim.abusers.values() for case in cases for p in case}
        honest = [f for f in result if not set(f.players) & abusers]
        false += len(honest)
        mates += sum(1 for f in honest if set(f.details.get("teammates", {})) & abusers)
        for kind in KINDS:
            for case in sim.abusers[kind]:
                counts[kind][1] += 1
                counts[kind][0] += any(case[0] in f.players for f in result.of_kind(kind))
    return {k: (v[0], v[1]) for k, v in counts.items()}, f"{false}" + (f" ({mates} an abuser's teammate)" if mates else ""), n


def real() -> list[str]:
    if not DATA.is_dir():
        return ["(../shared/data is absent here)"]
    rows = ["| history | matches | pairs / farmers / windows tested | flags | seconds (fit + audit) |", "|---|---|---|---|---|"]
    for folder in sorted(DATA.iterdir()):
        path = folder / "matches.jsonl.gz"
        if not path.exists():
            continue
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            matches = podium.read_matches(path, errors="skip")
        t0 = time.perf_counter()
        try:
            result = podium.audit(matches)
        except ValueError as error:  # (a history too large for the audit's memory says so)
            rows.append(f"| {folder.name} | {len(matches):,} | refused: {error} | | |")
            print(rows[-1], flush=True)
            continue
        seconds = time.perf_counter() - t0
        tests = " / ".join(f"{result.tests[k]:,}" for k in KINDS)
        flags = "; ".join(f"{f.kind}: {', '.join(f.players[:3])}" for f in result.flags) or "none"
        rows.append(f"| {folder.name} | {len(matches):,} | {tests} | {flags} | {seconds:.1f} |")
        print(rows[-1], flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "audit.md")
    args = parser.parse_args()
    scale = 5 if args.quick else 1
    began = time.perf_counter()
    podium.audit(podium.simulate(20, 200, seed=0).matches)  # compile outside the timings

    out = ["# Abuse signals: what `podium.audit` flags, measured", "",
           "Generated by `python benchmarks/audit.py` (`.venv/bin/python benchmarks/audit.py`); "
           f"{'quick run, ' if args.quick else ''}audits at their defaults (TrueSkill fitted to each history by "
           "`podium.fit`, alpha = 0.01). The tests and their statistics are described in `podium.audit`'s "
           "docstring and the README.", ""]
    out += ["## Honest histories", "",
            "alpha = 0.01 is the family-wise error rate: the chance that an honest history raises any flag at all, "
            "when the model's probabilities are right. Seeds 10,000 on.", ""]
    out += honest(100 // scale)
    out += ["", "## Injected abuse", "",
            "Each history is an honest season with one case of each kind injected (`podium.simulate_abuse`, whose "
            "docstring documents the generators): a booster throwing 40 games to a weaker beneficiary (each as "
            "arranged with probability 0.95), a farmer below the 80th skill percentile beating 10 new accounts of "
            "4 games each, and a player above the median skill throwing 50 consecutive games after its tenth "
            "(its team last) and then playing honestly. In team games a sandbagger's team loses with it: a flag on an "
            "honest teammate names the sandbagger as the teammate who shared the games.", "",
            "| season | histories | win trading | farming | sandbagging | all abusers | honest players flagged |",
            "|---|---|---|---|---|---|---|"]
    for label, season in ABUSED:
        counts, false, n = abused(season, 60 // scale)
        total = sum(c[0] for c in counts.values()), sum(c[1] for c in counts.values())
        cells = " | ".join(f"{c[0]}/{c[1]} ({c[0] / c[1]:.0%})" for c in counts.values())
        out.append(f"| {label} | {n} | {cells} | {total[0]}/{total[1]} ({total[0] / total[1]:.0%}) | {false} |")
        print(out[-1], flush=True)
    out += ["", "## Farmers at any skill", "",
            "The scenario of issue 32: 400 players' 6,000 honest duels, ten farmers drawn from every skill (the top "
            "ones' wins over newcomers are what the model expects), each fed four wins by each of five new accounts "
            "that play nobody else, at random moments (`simulate_abuse(400, 6000, farming=10, accounts=5, "
            "account_games=4, throw=1, farmer_quantile=1)`).", "",
            "| histories | farmers flagged | honest players flagged |", "|---|---|---|"]
    counts, false, n = abused({"players": 400, "matches": 6000}, 20 // scale, win_trading=0, farming=10,
                              sandbagging=0, accounts=5, account_games=4, throw=1.0, farmer_quantile=1.0)
    out.append(f"| {n} | {counts['farming'][0]}/{counts['farming'][1]} "
               f"({counts['farming'][0] / counts['farming'][1]:.0%}) | {false} |")
    print(out[-1], flush=True)
    out += ["", "## Power against the amount of abuse", "",
            "Duels (60 players, 5,000 games), one case of each kind, all else at the defaults; the share of injected "
            "abusers of the varied kind that is flagged.", ""]
    for name, values in POWER:
        kind = {"trades": "one-sided pair", "accounts": "farming", "dive": "sandbagging"}[name]
        cells = []
        for value in values:
            counts, _, _ = abused({}, 30 // scale, **{name: value})
            cells.append(f"{name} = {value}: {counts[kind][0]}/{counts[kind][1]}")
        out.append(f"- {kind}: " + "; ".join(cells))
        print(out[-1], flush=True)
    out += ["", "What limits it: a game thrown to a far stronger player and a weak player losing a run of games are "
            "what the model expects, and leave little trace (the generators draw their abusers where the abuse gains "
            "something); a farmer at the top beating newcomers is found by their schedules (accounts that play "
            "nobody else), not by its wins, and needs at least three such accounts. The tests measure each rating from the player's other "
            "games and integrate over its uncertainty, which is what keeps honest histories quiet, and what a short "
            "burst of abuse cannot overcome.", "",
            "## The shared real histories", "",
            "No flag is expected; any flag is worth a look (which of them are real abuse, nobody knows).", ""]
    out += real()
    out += ["", f"Total time {time.perf_counter() - began:.0f} s."]
    args.out.write_text("\n".join(out) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
