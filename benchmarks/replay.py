"""Replay throughput of podium's Elo family and TrueSkill, against openskill and trueskill.

What is measured
----------------
For each of four scenarios -- 1v1 (2 teams of 1), an 8-player free-for-all (8 teams of 1), 4v4 (2 teams
of 4) and 8v8 (2 teams of 8) -- one history of ``--matches`` matches among ``--players`` players is
simulated with ``podium.simulate`` (fixed ``--seed``; no draws).  Then, on that same history:

* **podium**: for each model (``Elo`` and ``Elo(performance="gaussian")`` only where every match has two
  teams; ``PairwiseElo`` and ``PlackettLuce`` in both of their variants, and ``TrueSkill()`` with its
  default parameters, everywhere), the wall-clock time of

      podium.League(model, keep_history=False).record_many(sim.matches)

  i.e. everything a user pays for a replay of an already-packed history: creating the league, indexing
  the players, and the compiled replay itself.  numba compilation (or loading from its on-disk cache) is
  excluded by first replaying a tiny slice of the history with the same model.  The replay is repeated
  ``--repeats`` times, each on a fresh league, and the median time is reported as matches per second.

* **peers**: the first matches of the same history, rated in order with

  - openskill's ``PlackettLuce()`` (``model.rate(teams, ranks=...)``), over the first ``--peer-matches``;
  - trueskill twice, ``TrueSkill(draw_probability=0.0).rate(rating_groups, ranks=...)`` (the Elo family
    has no draws, so neither does its yardstick) and ``TrueSkill()`` with the package's defaults
    (``draw_probability=0.10``, as podium's ``TrueSkill()``; the histories have no draws, so the draw
    margin only changes the arithmetic, not what is computed).  Over the first ``--peer-matches`` too,
    except in the 8-player FFA and 8v8 scenarios, where trueskill manages only about a thousand matches
    per second: there it rates the first ``min(--peer-matches, --trueskill-matches)`` (5,000 by default)
    so that the default run stays within a few minutes.  A peer's speed does not depend on how far into
    the history it is, so the figures remain comparable.

  Each podium ``Match`` is first converted to plain lists (team member ids, ranks; lower is better) and
  every player gets a default rating object -- neither is timed.  The timed loop is what replaying a
  history with the peer costs: look the players' current ratings up, call ``rate``, store the new
  ratings.  It too runs ``--repeats`` times from fresh default ratings, after a tiny untimed pass, and the
  median is reported.

The table gives matches per second and, for every podium model, its speed as a multiple of each peer's.
In the ``x trueskill`` column an Elo-family model is compared with ``TrueSkill(draw_probability=0.0)``
and podium's ``TrueSkill()`` with trueskill's ``TrueSkill()`` (same defaults, draw probability 0.10).

Targets (from the issues)
-------------------------
* every Elo-family model (the six podium models above other than ``TrueSkill``) replays at least 100x as
  many matches per second as openskill, in every scenario;
* 1v1 ``Elo()`` (logistic, the default) replays at least 10,000,000 matches per second;
* podium's ``TrueSkill()`` replays at least 1000x as many matches per second as the trueskill package
  (``TrueSkill()``, its defaults) and at least 100x as many as openskill's ``PlackettLuce``, in every
  scenario;
* 1v1 ``TrueSkill()`` replays at least 5,000,000 matches per second.

Each is reported as met or missed.  Run ``.venv/bin/python benchmarks/replay.py`` (several minutes with
the defaults); ``--json PATH`` also writes the figures as JSON; ``--check`` makes the exit status 1 when
any target is missed.
"""

from __future__ import annotations

import os as _os

_os.environ.setdefault("PODIUM_JIT", "compiled")  # the compiled speed: warm-up calls compile, timed ones do not

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
from typing import Any, Literal, cast

import podium

TARGET_RATIO = 100.0                 # podium Elo family vs openskill, every scenario
TARGET_ELO_1V1 = 10_000_000.0        # matches per second, 1v1 Elo()
TARGET_TS_RATIO_TRUESKILL = 1000.0   # podium TrueSkill() vs trueskill's TrueSkill(), every scenario
TARGET_TS_RATIO_OPENSKILL = 100.0    # podium TrueSkill() vs openskill's PlackettLuce, every scenario
TARGET_TS_1V1 = 5_000_000.0          # matches per second, 1v1 TrueSkill()
WARMUP_MATCHES = 16                  # the slice replayed to compile (or load) numba's kernels

Family = Literal["elo", "trueskill"]


@dataclass(frozen=True)
class Scenario:
    name: str
    teams: int
    team_size: int
    slow_trueskill: bool = False  # trueskill rates at most --trueskill-matches matches here

    @property
    def one_vs_one(self) -> bool:
        return self.teams == 2 and self.team_size == 1


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("1v1", teams=2, team_size=1),
    Scenario("8-player FFA", teams=8, team_size=1, slow_trueskill=True),
    Scenario("4v4", teams=2, team_size=4),
    Scenario("8v8", teams=2, team_size=8, slow_trueskill=True),
)


@dataclass(frozen=True)
class ModelSpec:
    label: str
    make: Callable[[], podium.Model]
    two_teams_only: bool = False
    family: Family = "elo"


MODELS: tuple[ModelSpec, ...] = (
    ModelSpec("Elo", lambda: podium.Elo(), two_teams_only=True),
    ModelSpec("Elo(gaussian)", lambda: podium.Elo(performance="gaussian"), two_teams_only=True),
    ModelSpec("PairwiseElo", lambda: podium.PairwiseElo()),
    ModelSpec("PairwiseElo(gaussian)", lambda: podium.PairwiseElo(performance="gaussian")),
    ModelSpec("PlackettLuce", lambda: podium.PlackettLuce()),
    ModelSpec("PlackettLuce(elimination)", lambda: podium.PlackettLuce(order="elimination")),
    ModelSpec("TrueSkill", lambda: podium.TrueSkill(), family="trueskill"),
)

# The peers, by the key used in the results: openskill's PlackettLuce, trueskill without draws (the Elo
# family's yardstick) and trueskill with its defaults (podium TrueSkill's yardstick).
OPENSKILL, TRUESKILL, TRUESKILL_DEFAULT = "openskill", "trueskill", "trueskill_default"
PEERS = (OPENSKILL, TRUESKILL, TRUESKILL_DEFAULT)
PEER_LABELS = {OPENSKILL: "openskill PlackettLuce", TRUESKILL: "trueskill (draw_probability=0)",
               TRUESKILL_DEFAULT: "trueskill (defaults, draw 0.10)"}
# Which trueskill figure a podium model's "x trueskill" is measured against.
TRUESKILL_PEER: dict[Family, str] = {"elo": TRUESKILL, "trueskill": TRUESKILL_DEFAULT}

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
    family: Family = "elo"
    ratio: dict[str, float] = field(default_factory=dict)  # podium speed / peer speed, by peer key

    @property
    def versus_openskill(self) -> float:
        return self.ratio[OPENSKILL]

    @property
    def versus_trueskill(self) -> float:
        """Speed as a multiple of the trueskill figure this model is compared with (see TRUESKILL_PEER)."""
        return self.ratio[TRUESKILL_PEER[self.family]]

    def as_dict(self) -> dict[str, Any]:
        out = {"model": self.model, "params": self.params, "family": self.family, **super().as_dict(),
               "ratio": self.ratio, "trueskill_peer": TRUESKILL_PEER[self.family]}
        if self.family == "trueskill":
            out["meets_100x_openskill"] = self.versus_openskill >= TARGET_TS_RATIO_OPENSKILL
            out["meets_1000x_trueskill"] = self.versus_trueskill >= TARGET_TS_RATIO_TRUESKILL
        else:
            out["meets_100x_openskill"] = self.versus_openskill >= TARGET_RATIO
        return out


@dataclass
class PeerResult(Timed):
    peer: str = ""
    params: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"peer": self.peer, "params": self.params, **super().as_dict()}


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
    return PodiumResult(len(matches), seconds, model=spec.label, params=repr(model), family=spec.family)


# -- peers -------------------------------------------------------------------------------------------
Rate = Callable[[list[list[Any]], list[int]], Sequence[Sequence[Any]]]


def to_plain(matches: podium.Matches) -> list[PlainMatch]:
    """Each match as (teams of player ids, ranks).  A non-finisher (rank None) is ranked below every
    finisher; the peers have no notion of censoring (simulated histories have none anyway)."""
    plain: list[PlainMatch] = []
    for match in matches:
        last = max((r for r in match.ranks if r is not None), default=-1) + 1
        plain.append(([list(team) for team in match.teams], [last if r is None else r for r in match.ranks]))
    return plain


def replay_peer(rate: Rate, ratings: dict[str, Any], plain: list[PlainMatch]) -> float:
    """Seconds to rate ``plain`` in order: look ratings up, ``rate``, store the new ones."""
    start = time.perf_counter()
    for teams, ranks in plain:
        new = rate([[ratings[p] for p in team] for team in teams], ranks)
        for team, new_team in zip(teams, new):
            for p, rating in zip(team, new_team):
                ratings[p] = rating
    return time.perf_counter() - start


def time_peer(name: str, params: str, rate: Rate, new_rating: Callable[[], Any], plain: list[PlainMatch],
              players: list[str], repeats: int) -> PeerResult:
    """Median over ``repeats`` replays of ``plain``, each from fresh default ratings (made untimed)."""
    replay_peer(rate, {p: new_rating() for p in players}, plain[:WARMUP_MATCHES])
    seconds = [replay_peer(rate, {p: new_rating() for p in players}, plain) for _ in range(repeats)]
    return PeerResult(len(plain), seconds, peer=name, params=params)


def time_openskill(plain: list[PlainMatch], players: list[str], repeats: int) -> PeerResult:
    from openskill.models import PlackettLuce

    model = PlackettLuce()

    def rate(teams: list[list[Any]], ranks: list[int]) -> Sequence[Sequence[Any]]:
        return model.rate(teams, ranks=cast(list[float], ranks))  # ints are valid ranks

    return time_peer(OPENSKILL, f"openskill.models.{model!r}", rate, model.rating, plain, players, repeats)


def time_trueskill(plain: list[PlainMatch], players: list[str], repeats: int, *, defaults: bool) -> PeerResult:
    """trueskill's ``TrueSkill()`` with ``defaults`` (draw probability 0.10), else with no draws."""
    import trueskill

    env = trueskill.TrueSkill() if defaults else trueskill.TrueSkill(draw_probability=0.0)

    def rate(teams: list[list[Any]], ranks: list[int]) -> Sequence[Sequence[Any]]:
        new: Sequence[Sequence[Any]] = env.rate(teams, ranks=ranks)
        return new

    name = TRUESKILL_DEFAULT if defaults else TRUESKILL
    return time_peer(name, repr(env), rate, env.create_rating, plain, players, repeats)


def peer_matches(scenario: Scenario, peer: str, args: argparse.Namespace) -> int:
    """How many of the first matches ``peer`` rates in ``scenario`` (before clipping to the history)."""
    if peer != OPENSKILL and scenario.slow_trueskill:
        return min(cast(int, args.peer_matches), cast(int, args.trueskill_matches))
    return cast(int, args.peer_matches)


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

    plain = to_plain(sim.matches[:max(peer_matches(scenario, peer, args) for peer in PEERS)])
    timers: dict[str, Callable[[list[PlainMatch], list[str], int], PeerResult]] = {
        OPENSKILL: time_openskill,
        TRUESKILL: lambda p, s, r: time_trueskill(p, s, r, defaults=False),
        TRUESKILL_DEFAULT: lambda p, s, r: time_trueskill(p, s, r, defaults=True),
    }
    peers: dict[str, PeerResult] = {}
    for name in PEERS:
        head = plain[:peer_matches(scenario, name, args)]
        seen = sorted({p for teams, _ in head for team in teams for p in team})
        peers[name] = timers[name](head, seen, args.repeats)
        log(f"[{scenario.name}] {PEER_LABELS[name]}: {peers[name].rate:,.0f} matches/s over {len(head):,} matches")

    for result in results:
        result.ratio = {name: result.rate / peer.rate for name, peer in peers.items()}
    return ScenarioResult(scenario, simulate_seconds, results, peers)


# -- targets and report ------------------------------------------------------------------------------
def ratio_target(results: list[ScenarioResult], family: Family, peer: str, target: float) -> dict[str, Any]:
    """Every podium model of ``family`` at least ``target`` times as fast as ``peer``, in every scenario."""
    checked = [(s.scenario.name, r) for s in results for r in s.podium if r.family == family]
    misses = [f"{name} {r.model} ({r.ratio[peer]:,.0f}x)" for name, r in checked if r.ratio[peer] < target]
    return {"target": target, "peer": peer, "met": bool(checked) and not misses, "misses": misses}


def rate_target(results: list[ScenarioResult], model: str, target: float) -> dict[str, Any]:
    """1v1 ``model`` at least ``target`` matches per second."""
    measured = [r.rate for s in results if s.scenario.one_vs_one for r in s.podium if r.model == model]
    return {"target": target, "measured": measured[0] if measured else None,
            "met": bool(measured) and measured[0] >= target}


def targets(results: list[ScenarioResult]) -> dict[str, Any]:
    return {
        "elo_family_100x_openskill": ratio_target(results, "elo", OPENSKILL, TARGET_RATIO),
        "elo_1v1_matches_per_second": rate_target(results, "Elo", TARGET_ELO_1V1),
        "trueskill_1000x_trueskill": ratio_target(results, "trueskill", TRUESKILL_DEFAULT, TARGET_TS_RATIO_TRUESKILL),
        "trueskill_100x_openskill": ratio_target(results, "trueskill", OPENSKILL, TARGET_TS_RATIO_OPENSKILL),
        "trueskill_1v1_matches_per_second": rate_target(results, "TrueSkill", TARGET_TS_1V1),
    }


def met_or_missed(met: bool) -> str:
    return "met" if met else "MISSED"


def row_notes(scenario: Scenario, r: PodiumResult) -> str:
    """The targets that apply to one podium row, each met or MISSED."""
    if r.family == "trueskill":
        notes = [f"{TARGET_TS_RATIO_TRUESKILL:.0f}x trueskill: "
                 + met_or_missed(r.versus_trueskill >= TARGET_TS_RATIO_TRUESKILL),
                 f"{TARGET_TS_RATIO_OPENSKILL:.0f}x openskill: "
                 + met_or_missed(r.versus_openskill >= TARGET_TS_RATIO_OPENSKILL)]
        if scenario.one_vs_one:
            notes.append(f"{TARGET_TS_1V1 / 1e6:.0f}M/s: " + met_or_missed(r.rate >= TARGET_TS_1V1))
    else:
        notes = [f"{TARGET_RATIO:.0f}x openskill: " + met_or_missed(r.versus_openskill >= TARGET_RATIO)]
        if r.model == "Elo" and scenario.one_vs_one:
            notes.append(f"{TARGET_ELO_1V1 / 1e6:.0f}M/s: " + met_or_missed(r.rate >= TARGET_ELO_1V1))
    return ", ".join(notes)


def report(results: list[ScenarioResult], summary: dict[str, Any], args: argparse.Namespace) -> str:
    header = ("scenario", "rater", "matches/s", "x openskill", "x trueskill", "target")
    rows: list[tuple[str, ...]] = []
    for s in results:
        for r in s.podium:
            rows.append((s.scenario.name, f"podium {r.model}", f"{r.rate:,.0f}", f"{r.versus_openskill:,.1f}x",
                         f"{r.versus_trueskill:,.1f}x", row_notes(s.scenario, r)))
        for name, peer in s.peers.items():
            rows.append((s.scenario.name, PEER_LABELS[name], f"{peer.rate:,.0f}", "", "",
                         f"over {peer.matches:,} matches"))
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    right = {2, 3, 4}

    def line(row: tuple[str, ...]) -> str:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
        return "  ".join(cells).rstrip()

    rule = "  ".join("-" * w for w in widths)
    slow = " and ".join(s.name for s in SCENARIOS if s.slow_trueskill)
    capped = min(args.peer_matches, args.trueskill_matches, args.matches)
    out = [f"Replay throughput (median of {args.repeats}): podium over {args.matches:,} matches, peers over "
           f"the first {min(args.peer_matches, args.matches):,} (trueskill over the first {capped:,} in {slow}); "
           f"{args.players:,} players, seed {args.seed}.",
           "x trueskill: Elo-family models vs trueskill TrueSkill(draw_probability=0), podium TrueSkill() vs "
           "trueskill TrueSkill() (defaults, draw_probability=0.10).",
           "", line(header), rule]
    previous = None
    for row in rows:
        if previous is not None and row[0] != previous:
            out.append("")
        out.append(line(row))
        previous = row[0]

    def ratio_line(title: str, entry: dict[str, Any]) -> str:
        return f"Target: {title}: " + ("MET" if entry["met"] else "MISSED by: " + "; ".join(entry["misses"]))

    def rate_line(title: str, entry: dict[str, Any]) -> str:
        measured = "not run" if entry["measured"] is None else f"{entry['measured']:,.0f} matches/s"
        return f"Target: {title}: " + ("MET" if entry["met"] else "MISSED") + f" ({measured})"

    out += ["",
            ratio_line(f"every Elo-family model >= {TARGET_RATIO:.0f}x openskill in every scenario",
                       summary["elo_family_100x_openskill"]),
            rate_line(f"1v1 Elo >= {TARGET_ELO_1V1:,.0f} matches/s", summary["elo_1v1_matches_per_second"]),
            ratio_line(f"TrueSkill >= {TARGET_TS_RATIO_TRUESKILL:.0f}x trueskill (defaults) in every scenario",
                       summary["trueskill_1000x_trueskill"]),
            ratio_line(f"TrueSkill >= {TARGET_TS_RATIO_OPENSKILL:.0f}x openskill in every scenario",
                       summary["trueskill_100x_openskill"]),
            rate_line(f"1v1 TrueSkill >= {TARGET_TS_1V1:,.0f} matches/s", summary["trueskill_1v1_matches_per_second"])]
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
    parser.add_argument("--trueskill-matches", type=positive_int, default=5_000,
                        help="at most this many for trueskill in the 8-player FFA and 8v8 scenarios, where it is "
                             "slowest")
    parser.add_argument("--repeats", type=positive_int, default=3,
                        help="timed replays per model and per peer; the median is reported")
    parser.add_argument("--seed", type=int, default=2024, help="seed of podium.simulate")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON to PATH")
    parser.add_argument("--check", action="store_true", help="exit with status 1 when a target is missed")
    args = parser.parse_args(argv)
    largest = max(s.teams * s.team_size for s in SCENARIOS)
    if args.players < largest:
        parser.error(f"--players must be at least {largest} (the largest scenario has {largest} players per match)")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    before = environment()
    results = [run_scenario(scenario, args) for scenario in SCENARIOS]
    summary = targets(results)
    print(report(results, summary, args))
    if args.json:
        payload = {"config": {k: v for k, v in vars(args).items() if k not in ("json", "check")},
                   "environment": before, "load_average_after": os.getloadavg(),
                   "scenarios": [s.as_dict() for s in results], "targets": summary}
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(payload, fh, indent=2)
            fh.write("\n")
        log(f"wrote {args.json}")
    met = all(entry["met"] for entry in summary.values())
    return 1 if args.check and not met else 0


if __name__ == "__main__":
    sys.exit(main())
