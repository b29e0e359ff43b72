"""Start-up: the first call in a new process, from a fresh install and warm, beside trueskill and openskill.

Each measurement is one new Python process that times, from before ``import podium`` to after the call, what a
script waits for.  "Fresh install" is a copy of podium's source that no process has run (no ``.pyc``, no numba
cache: numba caches next to the source); "warm" is the same copy's next processes (the median of ``--repeat``).
The peers are timed the same way, warm (an installed package has its ``.pyc``).  ``PODIUM_JIT=compiled`` (numba's
own behaviour: every kernel compiled, or loaded from the cache, before its first call) is timed warm beside it with
``--compiled``, and also fresh with ``--compiled-fresh`` (minutes: the whole compile).

Run: ``python benchmarks/startup.py [--repeat 5] [--markdown]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent / "src" / "podium"

DUELS = """
import random
rng = random.Random(1)
history = [Match([[f"p{rng.randrange(50)}"], [f"q{rng.randrange(50)}"]], time=t) for t in range(500)]
"""

# name -> the timed code after ``import podium``
CASES: dict[str, str] = {
    "import podium": "",
    "Elo().rate, a duel": "podium.Elo().rate(podium.Match([['a'], ['b']]), {})",
    "TrueSkill().rate, a duel": "podium.TrueSkill().rate(podium.Match([['a'], ['b']]), {})",
    "PlackettLuce().rate, 3 players": "podium.PlackettLuce().rate(podium.Match([['a'], ['b'], ['c']]), {})",
    "Thurstone().rate, 3 players": "podium.Thurstone().rate(podium.Match([['a'], ['b'], ['c']]), {})",
    "Glicko2().rate, a duel": "podium.Glicko2().rate(podium.Match([['a'], ['b']]), {})",
    "EloMMR().rate, a duel": "podium.EloMMR().rate(podium.Match([['a'], ['b']]), {})",
    "TrueSkill().win_probabilities, 3 teams": "podium.TrueSkill().win_probabilities([['a'], ['b'], ['c']], {})",
    "League(Elo()).record_many, 500 duels": "from podium import Match" + DUELS
                                             + "podium.League(podium.Elo()).record_many(history)",
    "League(TrueSkill()).record_many, 500 duels": "from podium import Match" + DUELS
                                                   + "podium.League(podium.TrueSkill()).record_many(history)",
    "TrueSkillThroughTime().smooth, 200 duels": "from podium import Match" + DUELS
                                                 + "podium.TrueSkillThroughTime().smooth(history[:200])",
}

PEERS: dict[str, str] = {
    "trueskill 0.4.5: import, rate_1vs1": "import trueskill\ntrueskill.rate_1vs1(trueskill.Rating(), trueskill.Rating())",
    "openskill: import, PlackettLuce rate, 3 players": (
        "from openskill.models import PlackettLuce\nm = PlackettLuce()\n"
        "m.rate([[m.rating()], [m.rating()], [m.rating()]])"),
}

PROBE = """
import time
_t0 = time.perf_counter()
{body}
print("SECONDS", time.perf_counter() - _t0)
"""


def timed(body: str, env: dict[str, str]) -> float:
    """Seconds from the first line of ``body`` to its last, in a new process."""
    done = subprocess.run([sys.executable, "-c", PROBE.format(body=body)], capture_output=True, text=True, env=env,
                          timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return float([line for line in done.stdout.splitlines() if line.startswith("SECONDS")][-1].split()[1])


def process_seconds(env: dict[str, str]) -> float:
    """Wall seconds of a whole ``python -c pass`` process: the interpreter's start, before any script line."""
    began = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True, env=env)
    return time.perf_counter() - began


def fresh_copy(root: Path) -> Path:
    """A copy of podium's source that no process has run: no ``__pycache__``, so no ``.pyc`` and no numba cache."""
    target = root / "src"
    shutil.copytree(SOURCE, target / "podium", ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    return target


def environment(src: Path | None, jit: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "NUMBA_CACHE_DIR",
                                                              "NUMBA_DISABLE_JIT", "PODIUM_JIT")}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    env["PODIUM_JIT"] = jit
    return env


def measure(body: str, jit: str, repeat: int, fresh: bool) -> tuple[float | None, float]:
    """(fresh install, warm median) seconds of ``body`` with podium's kernels in mode ``jit``."""
    with tempfile.TemporaryDirectory(prefix="podium-startup-") as root:
        src = fresh_copy(Path(root))
        env = environment(src, jit)
        first = timed(body, env) if fresh else None
        if not fresh:
            timed(body, env)  # (fills the .pyc and, compiled, numba's cache)
        warm = statistics.median(timed(body, env) for _ in range(repeat))
    return first, warm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="warm processes per case (the median is shown)")
    parser.add_argument("--compiled", action="store_true", help="also time PODIUM_JIT=compiled, warm")
    parser.add_argument("--compiled-fresh", action="store_true", help="and fresh (minutes)")
    parser.add_argument("--markdown", action="store_true", help="print the table as markdown")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()

    rows = []
    for name, call in CASES.items():
        body = "import podium\n" + call
        fresh, warm = measure(body, "auto", args.repeat, fresh=True)
        row = {"case": name, "fresh": fresh, "warm": warm}
        if args.compiled or args.compiled_fresh:
            row["compiled_fresh"], row["compiled_warm"] = measure(body, "compiled", args.repeat,
                                                                  fresh=args.compiled_fresh)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    peers = []
    for name, body in PEERS.items():
        env = environment(None, "auto")
        timed(body, env)
        peers.append({"case": name, "warm": statistics.median(timed(body, env) for _ in range(args.repeat))})
    bare = statistics.median(process_seconds(environment(None, "auto")) for _ in range(args.repeat))

    def s(x: float | None) -> str:
        return "" if x is None else (f"{x * 1e3:.0f} ms" if x < 1.0 else f"{x:.2f} s")

    compiled = args.compiled or args.compiled_fresh
    head = ["first call in a new process", "fresh install", "warm"]
    if compiled:
        head += ["PODIUM_JIT=compiled, fresh", "PODIUM_JIT=compiled, warm"]
    table = [head]
    for r in rows:
        line = [r["case"], s(r["fresh"]), s(r["warm"])]
        if compiled:
            line += [s(r.get("compiled_fresh")) or "not run", s(r["compiled_warm"])]
        table.append(line)
    for p in peers:
        table.append([p["case"], "", s(p["warm"])] + (["", ""] if compiled else []))
    if args.markdown:
        print("| " + " | ".join(table[0]) + " |")
        print("|" + "---|" * len(table[0]))
        for line in table[1:]:
            print("| " + " | ".join(line) + " |")
    else:
        widths = [max(len(line[i]) for line in table) for i in range(len(head))]
        for line in table:
            print("  ".join(cell.ljust(w) for cell, w in zip(line, widths)))
    print(f"\nmedians of {args.repeat} warm processes; a bare `python -c pass` process takes {s(bare)} more than "
          "these figures (the interpreter's own start).  Machine: shared, noisy; compare within one run.")
    if args.json:
        args.json.write_text(json.dumps({"podium": rows, "peers": peers, "bare": bare}, indent=1))


if __name__ == "__main__":
    main()
