"""podium's replay speed against another checkout of podium: what a refactor costs, in one run.

``benchmarks/replay.py``'s podium timings (the same scenarios, models and histories: ``podium.simulate`` with the
same seed, ``League(model, keep_history=False).record_many``, compilation excluded) for two source trees, this
checkout's ``src`` and ``BASELINE`` (another checkout's ``src``, e.g. from ``git worktree add /tmp/base HEAD~1``),
each timed in a fresh process with its tree first on ``PYTHONPATH``, the trees alternating ``--rounds`` times so
that the machine's drift falls on both.  The table gives each tree's median matches per second and their ratio
(this checkout / baseline: below 1 is a slowdown); the last line, the median ratio over every figure.

Usage: ``python benchmarks/replay_baseline.py /tmp/base/src [--rounds 2] [--matches 300000] [--players 30000]``
"""

from __future__ import annotations

import os as _os

_os.environ.setdefault("PODIUM_JIT", "compiled")  # the compiled speed: warm-up calls compile, timed ones do not

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"

# Run inside each process: replay.py's own timing of every podium model in every scenario (no peers).
PROBE = """
import json, sys
sys.path.insert(0, {here!r})
import podium
import replay
out = {{"podium": podium.__file__}}
for scenario in replay.SCENARIOS:
    sim = podium.simulate({players}, {matches}, teams=scenario.teams, team_size=scenario.team_size, seed={seed})
    for spec in replay.MODELS:
        if spec.two_teams_only and scenario.teams != 2:
            continue
        out[scenario.name + " | " + spec.label] = replay.time_podium(spec, sim.matches, {repeats}).rate
print(json.dumps(out))
"""


def measure(tree: Path, args: argparse.Namespace) -> dict[str, float]:
    code = PROBE.format(here=str(HERE), players=args.players, matches=args.matches, seed=args.seed,
                        repeats=args.repeats)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
    out = json.loads(done.stdout.strip().splitlines()[-1])
    where = Path(out.pop("podium")).resolve()
    if not where.is_relative_to(tree.resolve()):
        raise SystemExit(f"the process imported podium from {where}, not from {tree}")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("baseline", type=Path, help="the other checkout's src directory")
    parser.add_argument("--rounds", type=int, default=2, help="times each tree is measured, alternately")
    parser.add_argument("--matches", type=int, default=300_000)
    parser.add_argument("--players", type=int, default=30_000)
    parser.add_argument("--repeats", type=int, default=3, help="timed replays per model in each process (median)")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()
    if not (args.baseline / "podium" / "__init__.py").is_file():
        parser.error(f"{args.baseline} holds no podium package")
    runs: dict[str, list[dict[str, float]]] = {"baseline": [], "this": []}
    for r in range(args.rounds):
        for name, tree in (("baseline", args.baseline), ("this", SRC)):
            print(f"round {r + 1}/{args.rounds}: {name} ({tree})", file=sys.stderr, flush=True)
            runs[name].append(measure(tree, args))
    ratios = []
    print(f"{'scenario | model':<52} {'baseline /s':>13} {'this /s':>13} {'ratio':>7}")
    for key in runs["this"][0]:
        base = statistics.median(run[key] for run in runs["baseline"])
        this = statistics.median(run[key] for run in runs["this"])
        ratios.append(this / base)
        print(f"{key:<52} {base:>13,.0f} {this:>13,.0f} {this / base:>7.2f}")
    print(f"median ratio over {len(ratios)} figures: {statistics.median(ratios):.2f} "
          f"(range {min(ratios):.2f}-{max(ratios):.2f}); {args.rounds} rounds, {args.matches:,} matches")
    return 0


if __name__ == "__main__":
    sys.exit(main())
