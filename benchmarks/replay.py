"""Replay throughput of podium's Elo family, against openskill and trueskill.

What is measured
----------------
For each of three scenarios -- 1v1 (2 teams of 1), an 8-player free-for-all (8 teams of 1) and 4v4
(2 teams of 4) -- one history of ``--matches`` matches among ``--players`` players is simulated with
``podium.simulate`` (fixed ``--seed``; no draws).  Then, on that same history:

* **podium**: for each model (``Elo`` and ``Elo(performance="gaussian")`` only where every match has two
  teams; ``PairwiseElo`` and ``PlackettLuce`` in both of their variants everywhere), the wall-clock time of

      podium.League(model, keep_history=False).record_many(sim.matches)

  i.e. everything a user pays for a replay of an already-packed history: creating the league, indexing
  the players, and the compiled replay itself.  numba compilation (or loading from its on-disk cache) is
  excluded by first replaying a tiny slice of the history with the same model.  The replay is repeated
  ``--repeats`` times, each on a fresh league, and the median time is reported as matches per second.

* **peers**: the first ``--peer-matches`` matches of the same history, rated in order with openskill's
  ``PlackettLuce`` (``model.rate(teams, ranks=...)``) and with trueskill
  (``TrueSkill(draw_probability=0.0).rate(rating_groups, ranks=...)``).  Each podium ``Match`` is first
  converted to plain lists (team member ids, ranks; lower is better) and every player gets a default
  rating object -- neither is timed.  The timed loop is what replaying a history with the peer costs:
  look the players' current ratings up, call ``rate``, store the new ratings.  It too runs ``--repeats``
  times from fresh default ratings, after a tiny untimed pass, and the median is reported.

The table gives matches per second and, for every podium model, its speed as a multiple of each peer's.

Targets (from the issue)
------------------------
* every Elo-family model (all six podium models above) replays at least 100x as many matches per second
  as openskill, in every scenario;
* 1v1 ``Elo()`` (logistic, the default) replays at least 10,000,000 matches per second.

Run ``.venv/bin/python benchmarks/replay.py`` (several minutes with the defaults); ``--json PATH`` also
writes the figures as JSON; ``--check`` makes the exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import version
from typing import Any, cast

import podium

TARGET_RATIO = 100.0            # podium Elo family vs openskill, every scenario
TARGET_ELO_1V1 = 10_000_000.0   # matches per second, 1v1 Elo()
WARMUP_MATCHES = 16             # the slice replayed to compile (or load) numba's kernels


@dataclass(frozen=True)
class Scenario:
    name: str
    teams: int
    team_size: int


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("1v1", teams=2, team_size=1),
    Scenario("8-player FFA", teams=8, team_size=1),
    Scenario("4v4", teams=2, team_size=4),
)


@dataclass(frozen=True)
class ModelSpec:
    label: str
    make: Callable[[], podium.Model]
    two_teams_only: bool = False


MODELS: tuple[ModelSpec, ...] = (
    ModelSpec("Elo", lambda: podium.Elo(), two_teams_only=True),
    ModelSpec("Elo(gaussian)", lambda: podium.Elo(performance="gaussian"), two_teams_only=True),
    ModelSpec("PairwiseElo", lambda: podium.PairwiseElo()),
    ModelSpec("PairwiseElo(gaussian)", lambda: podium.PairwiseElo(performance="gaussian")),
    ModelSpec("PlackettLuce", lambda: podium.PlackettLuce()),
    ModelSpec("PlackettLuce(elimination)", lambda: podium.PlackettLuce(order="elimination")),
)

PEERS = ("openskill", "trueskill")

# A match in the peers' form: team member ids, and one rank per team (lower is better).
PlainMatch = tuple[list[list[str]], list[int]]


@dataclass
class Timed:
    """Repeated timings of one rater over ``matches`` matches."""

    matches: int
    seconds: list[float]

    @property
    def median_seconds(self) -> float:
        return statistics.median(self.seconds)

    @property
    def rate(self) -> float:
        return self.matches / self.median_seconds

    def as_dict(self) -> dict[str, Any]:
        return {"matches": self.matches, "seconds": self.seconds,
                "median_seconds": self.median_seconds, "matches_per_second": self.rate}


@dataclass
class PodiumResult(Timed):
    model: str = ""
    params: str = ""
    ratio: dict[str, float] = field(default_factory=dict)  # podium speed / peer speed

    def as_dict(self) -> dict[str, Any]:
        return {"model": self.model, "params": self.params, **super().as_dict(),
                "ratio": self.ratio, "meets_100x_openskill": self.ratio.get("openskill", 0.0) >= TARGET_RATIO}


@dataclass
class PeerResult(Timed):
    peer: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"peer": self.peer, **super().as_dict()}


@dataclass
class ScenarioResult:
    scenario: Scenario
    simulate_seconds: float
    podium: list[PodiumResult]
    peers: dict[str, PeerResult]

    def as_dict(self) -> dict[str, Any]:
        return {"scenario": self.scenario.name, "teams": self.scenario.teams, "team_size": self.scenario.team_size,
                "simulate_seconds": self.simulate_seconds, "podium": [r.as_dict() for r in self.podium],
                "peers": {name: r.as_dict() for name, r in self.peers.items()}}


def log(message: str) -> None:
    """Progress goes to stderr, so stdout holds only the report."""
    print(message, file=sys.stderr, flush=True)


# -- podium ------------------------------------------------------------------------------------------
def time_podium(spec: ModelSpec, matches: podium.Matches, repeats: int) -> PodiumResult:
    """Median over ``repeats`` fresh leagues of one ``record_many`` over the whole history."""
    model = spec.make()
    podium.League(model, keep_history=False).record_many(matches[:WARMUP_MATCHES])  # compile / load cache
    seconds: list[float] = []
    for _ in range(repeats):
        start = time.perf_counter()
        podium.League(model, keep_history=False).record_many(matches)
        seconds.append(time.perf_counter() - start)
    return PodiumResult(len(matches), seconds, model=spec.label, params=repr(model))


# -- peers -------------------------------------------------------------------------------------------
def to_plain(matches: podium.Matches) -> list[PlainMatch]:
    """Each match as (teams of player ids, ranks).  A non-finisher (rank None) is ranked below every
    finisher; the peers have no notion of censoring (simulated histories have none anyway)."""
    plain: list[PlainMatch] = []
    for match in matches:
        last = max((r for r in match.ranks if r is not None), default=-1) + 1
        plain.append(([list(team) for team in match.teams], [last if r is None else r for r in match.ranks]))
    return plain


def replay_peer(rate: Callable[[list[list[Any]], list[int]], Sequence[Sequence[Any]]],
                ratings: dict[str, Any], plain: list[PlainMatch]) -> float:
    """Seconds to rate ``plain`` in order: look ratings up, ``rate``, store the new ones."""
    start = time.perf_counter()
    for teams, ranks in plain:
        new = rate([[ratings[p] for p in team] for team in teams], ranks)
        for team, new_team in zip(teams, new):
            for p, rating in zip(team, new_team):
                ratings[p] = rating
    return time.perf_counter() - start


def time_peer(name: str, rate: Callable[[list[list[Any]], list[int]], Sequence[Sequence[Any]]],
              new_rating: Callable[[], Any], plain: list[PlainMatch], players: list[str], repeats: int) -> PeerResult:
    """Median over ``repeats`` replays of ``plain``, each from fresh default ratings (made untimed)."""
    replay_peer(rate, {p: new_rating() for p in players}, plain[:WARMUP_MATCHES])
    seconds = [replay_peer(rate, {p: new_rating() for p in players}, plain) for _ in range(repeats)]
    return PeerResult(len(plain), seconds, peer=name)


def time_openskill(plain: list[PlainMatch], players: list[str], repeats: int) -> PeerResult:
    from openskill.models import PlackettLuce

    model = PlackettLuce()

    def rate(teams: list[list[Any]], ranks: list[int]) -> Sequence[Sequence[Any]]:
        return model.rate(teams, ranks=cast(list[float], ranks))  # ints are valid ranks

    return time_peer("openskill", rate, model.rating, plain, players, repeats)


def time_trueskill(plain: list[PlainMatch], players: list[str], repeats: int) -> PeerResult:
    import trueskill

    env = trueskill.TrueSkill(draw_probability=0.0)

    def rate(teams: list[list[Any]], ranks: list[int]) -> Sequence[Sequence[Any]]:
        new: Sequence[Sequence[Any]] = env.rate(teams, ranks=ranks)
        return new

    return time_peer("trueskill", rate, env.create_rating, plain, players, repeats)


# -- one scenario ------------------------------------------------------------------------------------
def run_scenario(scenario: Scenario, args: argparse.Namespace) -> ScenarioResult:
    log(f"[{scenario.name}] simulating {args.matches:,} matches among {args.players:,} players")
    start = time.perf_counter()
    sim = podium.simulate(args.players, args.matches, teams=scenario.teams, team_size=scenario.team_size,
                          seed=args.seed)
    simulate_seconds = time.perf_counter() - start

    results: list[PodiumResult] = []
    for spec in MODELS:
        if spec.two_teams_only and scenario.teams != 2:
            continue
        result = time_podium(spec, sim.matches, args.repeats)
        log(f"[{scenario.name}] podium {spec.label}: {result.rate:,.0f} matches/s")
        results.append(result)

    head = sim.matches[:min(args.peer_matches, len(sim.matches))]
    plain = to_plain(head)
    seen = sorted({p for teams, _ in plain for team in teams for p in team})
    peers: dict[str, PeerResult] = {}
    for name, timer in (("openskill", time_openskill), ("trueskill", time_trueskill)):
        peers[name] = timer(plain, seen, args.repeats)
        log(f"[{scenario.name}] {name}: {peers[name].rate:,.0f} matches/s over {len(plain):,} matches")

    for result in results:
        result.ratio = {name: result.rate / peer.rate for name, peer in peers.items()}
    return ScenarioResult(scenario, simulate_seconds, results, peers)


# -- targets and report ------------------------------------------------------------------------------
def targets(results: list[ScenarioResult]) -> dict[str, Any]:
    misses = [f"{s.scenario.name} {r.model} ({r.ratio['openskill']:,.0f}x)"
              for s in results for r in s.podium if r.ratio["openskill"] < TARGET_RATIO]
    elo_1v1 = [r.rate for s in results if s.scenario.teams == 2 and s.scenario.team_size == 1
               for r in s.podium if r.model == "Elo"]
    return {
        "elo_family_100x_openskill": {"target": TARGET_RATIO, "met": not misses, "misses": misses},
        "elo_1v1_matches_per_second": {"target": TARGET_ELO_1V1, "measured": elo_1v1[0] if elo_1v1 else None,
                                       "met": bool(elo_1v1) and elo_1v1[0] >= TARGET_ELO_1V1},
    }


def report(results: list[ScenarioResult], summary: dict[str, Any], args: argparse.Namespace) -> str:
    header = ("scenario", "rater", "matches/s", "x openskill", "x trueskill", "target")
    rows: list[tuple[str, ...]] = []
    for s in results:
        for r in s.podium:
            notes = ["100x: " + ("met" if r.ratio["openskill"] >= TARGET_RATIO else "MISSED")]
            if r.model == "Elo" and s.scenario.teams == 2 and s.scenario.team_size == 1:
                notes.append("10M/s: " + ("met" if r.rate >= TARGET_ELO_1V1 else "MISSED"))
            rows.append((s.scenario.name, f"podium {r.model}", f"{r.rate:,.0f}", f"{r.ratio['openskill']:,.1f}x",
                         f"{r.ratio['trueskill']:,.1f}x", ", ".join(notes)))
        for name, peer in s.peers.items():
            label = "openskill PlackettLuce" if name == "openskill" else "trueskill"
            rows.append((s.scenario.name, label, f"{peer.rate:,.0f}", "", "", ""))
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    right = {2, 3, 4}

    def line(row: tuple[str, ...]) -> str:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
        return "  ".join(cells).rstrip()

    rule = "  ".join("-" * w for w in widths)
    out = [f"Replay throughput (median of {args.repeats}): podium over {args.matches:,} matches, peers over "
           f"the first {min(args.peer_matches, args.matches):,}; {args.players:,} players, seed {args.seed}.",
           "", line(header), rule]
    previous = None
    for row in rows:
        if previous is not None and row[0] != previous:
            out.append("")
        out.append(line(row))
        previous = row[0]
    ratio, elo = summary["elo_family_100x_openskill"], summary["elo_1v1_matches_per_second"]
    out += ["", f"Target: every Elo-family model >= {TARGET_RATIO:.0f}x openskill in every scenario: "
            + ("MET" if ratio["met"] else "NOT MET, missed by: " + "; ".join(ratio["misses"]))]
    measured = "not run" if elo["measured"] is None else f"{elo['measured']:,.0f} matches/s"
    out.append(f"Target: 1v1 Elo >= {TARGET_ELO_1V1:,.0f} matches/s: " + ("MET" if elo["met"] else "NOT MET")
               + f" ({measured})")
    return "\n".join(out)


def podium_source() -> dict[str, Any]:
    """The git commit of the podium being measured, and whether its working tree differs from it."""
    where = os.path.dirname(os.path.abspath(podium.__file__))

    def git(*command: str) -> str:
        done = subprocess.run(["git", *command], cwd=where, capture_output=True, text=True, timeout=10, check=True)
        return done.stdout.strip()

    try:
        return {"commit": git("rev-parse", "HEAD"), "dirty": bool(git("status", "--porcelain", "--", "."))}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def environment() -> dict[str, Any]:
    packages = {name: version(name) for name in ("podium", "numpy", "numba", "openskill", "trueskill")}
    return {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
            "load_average": os.getloadavg(), "packages": packages, "podium_source": podium_source()}


def positive_int(text: str) -> int:
    value = int(text.replace("_", "").replace(",", ""))
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--matches", type=positive_int, default=1_000_000, help="matches per simulated history")
    parser.add_argument("--players", type=positive_int, default=100_000, help="players in each history")
    parser.add_argument("--peer-matches", type=positive_int, default=20_000,
                        help="how many of the first matches openskill and trueskill rate")
    parser.add_argument("--repeats", type=positive_int, default=3,
                        help="timed replays per model and per peer; the median is reported")
    parser.add_argument("--seed", type=int, default=2024, help="seed of podium.simulate")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON to PATH")
    parser.add_argument("--check", action="store_true", help="exit with status 1 when a target is missed")
    args = parser.parse_args(argv)
    if args.players < 8:
        parser.error("--players must be at least 8 (the largest scenario has 8 players per match)")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    before = environment()
    results = [run_scenario(scenario, args) for scenario in SCENARIOS]
    summary = targets(results)
    print(report(results, summary, args))
    if args.json:
        payload = {"config": {k: v for k, v in vars(args).items() if k not in ("json", "check")},
                   "environment": before, "load_average_after": os.getloadavg(), "scenarios": [s.as_dict() for s in results], "targets": summary}
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(payload, fh, indent=2)
            fh.write("\n")
        log(f"wrote {args.json}")
    met = summary["elo_family_100x_openskill"]["met"] and summary["elo_1v1_matches_per_second"]["met"]
    return 1 if args.check and not met else 0


if __name__ == "__main__":
    sys.exit(main())
