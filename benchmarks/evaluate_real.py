"""podium's models against the trueskill package and openskill on every real data set: docs/evaluation.md.

What is measured
----------------
For every data set in ``../shared/data/<name>/matches.jsonl.gz`` (read with ``errors="skip"``: malformed
records are left out and counted), the history is split in time order: the first 70 % is the *training*
part, the last 30 % the *held-out* part.

* podium's models at their defaults: ``Elo()`` (only where every match has two teams), ``PairwiseElo()``,
  ``PlackettLuce()``, ``Thurstone()``, ``TrueSkill()``, ``Glicko2()`` (one match per rating period),
  ``EloMMR()`` (the Elo-MMR paper's ``mmr``);
* the same models *fitted*: ``podium.fit(model, matches, split=0.7)`` chooses ``k`` and, on histories with
  team games, ``spread`` (the Elo family and Thurstone), ``beta``, ``tau``, ``draw_probability`` and, where the
  matches have times, ``drift`` (TrueSkill), or ``tau`` and, where the matches have times, the rating
  ``period`` (Glicko2), or ``weight_limit`` and ``sig_limit`` (EloMMR) by minimizing the pair log loss on the
  training part only;
* the peers at their defaults, through small adapters with podium's ``rate`` / ``win_probabilities``
  interface: the ``trueskill`` package's ``TrueSkill()`` (win probability of two teams from its ratings,
  ``Phi((sum mu_a - sum mu_b) / sqrt(n beta^2 + sum sigma^2))``, the package's own model; quality by its
  ``quality``) and openskill's ``PlackettLuce()`` (``predict_win``).  Neither peer can say "did not finish":
  their adapters give every non-finisher of a match the same last rank (a tie), the closest they have.

Every model rates the whole history in order, predicting each match from the ratings before it
(``podium.evaluate(..., start=cut)``); only the held-out matches are scored, so every column of every table
is on the same matches, which the fitted models never saw.  Tables: one per metric, rows = data sets,
columns = models; the best value in each row is bold.  Times are wall-clock on this machine.  Besides the
TrueSkill paper's pair metrics, every table set has the Elo-MMR paper's contest metrics (``pair_inversion``,
``rank_deviation``: :mod:`podium.evaluation.contests`) on the same held-out matches, counting contestants with at
least 5 earlier matches (``podium.evaluate``'s ``min_rounds=5``).

What is left out, and said so in the document (never hidden): before anything else, each podium model at its
defaults replays the training part once, as ``podium.evaluate`` does (a forked process, ``REPLAY_LIMIT``
seconds).  A model that raises there (the exception's name is reported) or does not finish in time is left out
of that data set, defaults and fitted.  A model is fitted only when that replay's time times the most replays
its fit may take (``podium.fit``'s ``max_evaluations``: 40 for one parameter, 80 per parameter for several)
stays within ``FIT_BUDGET`` seconds.  The peers are run only on histories of at most ``PEER_PAIRS`` pairs of
teams: they predict every pair with a Python call (the document gives the pairs and, from this run's other
data sets, the time per pair).  What these limits leave out is listed in the document's "What did not run";
on 2026-11-27 that was most of ``codeforces_early`` (150 rounds of up to 1,896 players: 34 million pairs; no fits,
no peers, TrueSkill over the limit) and EloMMR's fit on ``atp_singles``.

Run ``.venv/bin/python benchmarks/evaluate_real.py`` (about ten minutes: the peers are pure Python);
``--datasets a,b`` restricts it, ``--out PATH`` writes elsewhere (default ``docs/evaluation.md``, plus a
figure beside it).
"""

from __future__ import annotations

import os as _os

_os.environ.setdefault("PODIUM_JIT", "compiled")  # the compiled speed: warm-up calls compile, timed ones do not

import argparse
import math
import multiprocessing
import platform
import sys
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import podium
from podium.evaluation.prequential import Report

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/teams.py, run as a script or imported
from teams import histories as team_histories  # noqa: E402
from teams import markdown as team_markdown  # noqa: E402
from teams import measure as team_measure  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SPLIT = 0.7
REPLAY_LIMIT = 60.0      # seconds: one evaluation of the training part by a model at its defaults
FIT_BUDGET = 120.0       # seconds: that evaluation's time x the most replays the fit may take
PEER_PAIRS = 2_000_000   # the peers are run on histories of at most this many pairs of teams
BASE = ["Elo", "PairwiseElo", "PlackettLuce", "Thurstone", "TrueSkill", "Glicko2", "EloMMR"]
METRIC_TITLES = {
    "pair_log_loss": "Pair log loss (lower is better)",
    "pair_error": "Pair error: the TrueSkill paper's prediction error (lower is better)",
    "calibration_error": "Expected calibration error of the pair probabilities (lower is better): each decided pair "
                         "from both sides, ten bins, the count-weighted mean |predicted - observed|; an "
                         "overconfident model shows here even where its pair error is good",
    "log_likelihood": "Log-likelihood per match (higher is better). Only TrueSkill's gives draws a probability of "
                      "their own (the draw margin); the Elo family scores a draw as half a win and half a loss, "
                      "and PairwiseElo's is its pairwise composite likelihood, so compare within a family",
    "pair_inversion": "Pair inversion: the Elo-MMR paper's share of correctly ordered pairs (higher is better): "
                      "contestants ordered by their ratings before the match, those with at least 5 earlier matches, "
                      "a pair rated equal or tied in place counts as correct (`podium.evaluation.contests`); the peers, "
                      "which expose no rating here, by their mean pair probability",
    "rank_deviation": "Rank deviation: the Elo-MMR paper's mean distance from a contestant's place predicted by "
                      "rating to its actual range of places, over n − 1 (lower is better); same contestants",
}


# -- adapters for the peers ------------------------------------------------------------------------------------
def _last_ranks(ranks: Sequence[int | None]) -> list[int]:
    """Ranks for libraries without non-finishers: every non-finisher ties for last."""
    last = max((r for r in ranks if r is not None), default=-1) + 1
    return [last if r is None else r for r in ranks]


class TrueSkillPackage:
    """The ``trueskill`` package (sublee) at its defaults behind podium's rater interface."""

    name = "trueskill pkg"

    def __init__(self) -> None:
        import trueskill

        self.env = trueskill.TrueSkill()
        self.failures = 0

    def _groups(self, teams: Sequence[Sequence[str]], ratings: Mapping[str, Any]) -> list[dict[str, Any]]:
        return [{p: ratings.get(p) or self.env.create_rating() for p in team} for team in teams]

    def rate(self, match: podium.Match, ratings: Mapping[str, Any]) -> dict[str, Any]:
        groups = self._groups(match.teams, ratings)
        try:
            new = self.env.rate(groups, ranks=_last_ranks(match.ranks), weights=match.weights)
        except (FloatingPointError, ValueError, ZeroDivisionError):
            self.failures += 1  # the package raises in some extreme upsets; keep the ratings as they were
            return {}
        return {p: r for group in new for p, r in group.items()}

    def win_probabilities(self, teams: Sequence[Sequence[str]], ratings: Mapping[str, Any],
                          weights: Any = None) -> list[float]:
        a, b = self._groups(teams, ratings)
        d = sum(r.mu for r in a.values()) - sum(r.mu for r in b.values())
        var = (len(a) + len(b)) * self.env.beta ** 2 + sum(r.sigma ** 2 for g in (a, b) for r in g.values())
        p = self.env.cdf(d / math.sqrt(var))
        return [p, 1.0 - p]

    def quality(self, teams: Sequence[Sequence[str]], ratings: Mapping[str, Any], weights: Any = None) -> float:
        return float(self.env.quality([list(g.values()) for g in self._groups(teams, ratings)], weights=weights))


class OpenSkillPlackettLuce:
    """openskill's ``PlackettLuce()`` at its defaults behind podium's rater interface."""

    name = "openskill PL"

    def __init__(self) -> None:
        from openskill.models import PlackettLuce

        self.model = PlackettLuce()

    def _teams(self, teams: Sequence[Sequence[str]], ratings: Mapping[str, Any]) -> list[list[Any]]:
        return [[ratings.get(p) or self.model.rating(name=p) for p in team] for team in teams]

    def rate(self, match: podium.Match, ratings: Mapping[str, Any]) -> dict[str, Any]:
        teams = self._teams(match.teams, ratings)
        weights = [list(w) for w in match.weights] if match.weights is not None else None
        new = self.model.rate(teams, ranks=[r + 1 for r in _last_ranks(match.ranks)], weights=weights)
        return {p: r for team, rated in zip(match.teams, new) for p, r in zip(team, rated)}

    def win_probabilities(self, teams: Sequence[Sequence[str]], ratings: Mapping[str, Any],
                          weights: Any = None) -> list[float]:
        return list(self.model.predict_win(self._teams(teams, ratings)))


# -- one data set -------------------------------------------------------------------------------------------------
def podium_defaults(matches: podium.Matches) -> dict[str, podium.Model]:
    models: dict[str, podium.Model] = {}
    if int(matches.n_teams.max()) == 2:
        models["Elo"] = podium.Elo()
    models.update(PairwiseElo=podium.PairwiseElo(), PlackettLuce=podium.PlackettLuce(),
                  Thurstone=podium.Thurstone(), TrueSkill=podium.TrueSkill(), Glicko2=podium.Glicko2(),
                  EloMMR=podium.EloMMR())
    return models


def fit_params(model: podium.Model, matches: podium.Matches) -> list[str] | None:
    """The hyperparameters fitted (None: the model's own choice, ``podium.fit``'s default)."""
    if isinstance(model, podium.TrueSkill):
        return ["beta", "tau", "draw_probability"] + (["drift"] if bool(np.isfinite(matches.time).any()) else [])
    return None


def most_replays(model: podium.Model, matches: podium.Matches) -> int:
    """The most replays ``podium.fit`` may take: its default ``max_evaluations`` for the parameters it fits."""
    names = fit_params(model, matches)
    if names is None:  # as podium.fit chooses: the defaults this history can inform
        names = [n for n in type(model)._fit_default if model._fit_informed(n, matches)]
    return 40 if len(names) == 1 else 80 * len(names)


def probe(model: podium.Model, matches: podium.Matches, cut: int, limit: float) -> tuple[float | None, str | None]:
    """``(seconds, None)`` for one ``podium.evaluate`` of the training part ``matches[:cut]`` (what each replay of
    a fit costs; after an untimed one of the first 10 matches, which compiles), or ``(None, what happened)``: the exception's name and message, or a timeout.  Run in a forked
    process, killed after ``limit`` seconds."""
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)

    def target() -> None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                podium.evaluate(matches[:min(cut, 10)], {"m": model})  # compile, or load numba's cache: not timed
                began = time.perf_counter()
                podium.evaluate(matches[:cut], {"m": model})
            send.send((time.perf_counter() - began, None))
        except BaseException as e:  # reported, not raised: the document says what happened
            send.send((None, f"{type(e).__name__}: {e}"))

    process = ctx.Process(target=target, daemon=True)
    process.start()
    if receive.poll(limit):
        seconds, error = receive.recv()
    else:
        seconds, error = None, f"timeout: one evaluation of the training part took over {limit:g} s"
    process.kill()
    process.join()
    return seconds, error


def run(name: str, path: Path, peer_seconds_per_pair: Sequence[Mapping[str, float]] = ()) -> dict[str, Any]:
    began = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        matches = podium.read_matches(path, errors="skip")
    skipped = sum("skipped" in str(w.message) for w in caught)
    skipped_records = 0
    for w in caught:
        text = str(w.message)
        if "skipped" in text:
            skipped_records += int(text.split("skipped ")[1].split(" ")[0])
    load = time.perf_counter() - began
    cut = int(round(SPLIT * len(matches)))
    sizes = np.diff(matches.match_start)
    total_pairs = int(np.sum(sizes * (sizes - 1) // 2))
    defaults = podium_defaults(matches)
    missing: dict[str, str] = {}  # column -> what happened, in full
    probes: dict[str, float] = {}
    for label, model in list(defaults.items()):
        seconds, error = probe(model, matches, cut, REPLAY_LIMIT)
        if error is not None:
            missing[label] = missing[f"{label} fitted"] = error
            del defaults[label]
        else:
            probes[label] = float(seconds)  # type: ignore[arg-type]
    fitted: dict[str, Any] = {}
    fit_info: dict[str, Any] = {}
    for label, model in defaults.items():
        bound = most_replays(model, matches)
        if probes[label] * bound > FIT_BUDGET:
            missing[f"{label} fitted"] = (f"not fitted: one evaluation of the training part took {probes[label]:.1f} s "
                                          f"and the fit may take {bound} ({probes[label] * bound / 60:.0f} min, "
                                          f"over the {FIT_BUDGET:g} s allowed)")
            continue
        t = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", podium.ConvergenceWarning)
                result = podium.fit(model, matches, params=fit_params(model, matches), split=SPLIT)
        except Exception as e:  # reported in the document
            missing[f"{label} fitted"] = f"the fit raised {type(e).__name__}: {e}"
            continue
        fit_info[label] = {"params": result.params, "seconds": time.perf_counter() - t,
                           "evaluations": result.evaluations, "train": result.train_score, "model": result.model}
        fitted[f"{label} fitted"] = result.model
        assert result.split == cut
    peers: dict[str, Any] = {}
    if total_pairs <= PEER_PAIRS:
        peers = {"trueskill pkg": TrueSkillPackage(), "openskill PL": OpenSkillPlackettLuce()}
    else:
        for peer in ("trueskill pkg", "openskill PL"):
            per_pair = [x[peer] for x in peer_seconds_per_pair if peer in x]
            estimate = (f"; at this run's median {1e6 * float(np.median(per_pair)):.0f} µs a pair on the other data "
                        f"sets, about {float(np.median(per_pair)) * total_pairs / 60:.0f} min" if per_pair else "")
            missing[peer] = (f"not run: {total_pairs:,} pairs of teams (limit {PEER_PAIRS:,}), each predicted by a "
                             f"Python call{estimate}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", podium.ConvergenceWarning)
        t = time.perf_counter()
        report = podium.evaluate(matches, {**defaults, **fitted, **peers}, start=cut)
        evaluate_seconds = time.perf_counter() - t
    out = {"matches_data": matches, "cut": cut}
    return out | {
        "name": name, "matches": len(matches), "held_out": len(matches) - cut, "players": len(matches.players),
        "skipped": skipped_records if skipped else 0, "report": report, "fit": fit_info,
        "load_seconds": load, "evaluate_seconds": evaluate_seconds,
        "peer_failures": peers["trueskill pkg"].failures if peers else 0,
        "max_teams": int(matches.n_teams.max()), "missing": missing, "pairs": total_pairs,
        "largest": int(sizes.max()),
        "peer_seconds_per_pair": {p: report.scores[p]["seconds"] / total_pairs for p in peers},
    }


# -- the document --------------------------------------------------------------------------------------------------
def _cell(value: float, best: bool, digits: int = 4) -> str:
    if math.isinf(value):  # a pair that happened was predicted with probability 0
        return "∞" if value > 0 else "−∞"
    if not math.isfinite(value):
        return "—"
    text = f"{value:.{digits}f}"
    return f"**{text}**" if best else text


def _columns(results: Sequence[dict[str, Any]]) -> list[str]:
    present = {name for r in results for name in [*r["report"].models, *r["missing"]]}
    order = BASE + [f"{n} fitted" for n in BASE] + ["trueskill pkg", "openskill PL"]
    return [n for n in order if n in present]


def _short(reason: str) -> str:
    """A table cell for a column that did not run: the exception's name, "timeout", "not fitted" or "not run"."""
    if reason.startswith("timeout"):
        return "*timeout*"
    if reason.startswith("not fitted"):
        return "*not fitted*"
    if reason.startswith("not run"):
        return "*not run*"
    if reason.startswith("the fit raised "):
        return f"*fit: {reason.removeprefix('the fit raised ').split(':')[0]}*"
    return f"*{reason.split(':')[0]}*"


def metric_table(results: Sequence[dict[str, Any]], metric: str) -> list[str]:
    columns = _columns(results)
    header = ["data set"] + [c.replace(" fitted", " **(fitted)**") for c in columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    higher = metric in ("log_likelihood", "pair_inversion")
    for r in results:
        report: Report = r["report"]
        values = [report.scores[c][metric] if c in report.scores else math.nan for c in columns]
        comparable = [v for c, v in zip(columns, values) if math.isfinite(v) and not c.startswith("PairwiseElo")
                      or (metric != "log_likelihood" and math.isfinite(v))]
        best = (max(comparable) if higher else min(comparable)) if comparable else math.nan
        if metric == "log_likelihood":  # log-likelihoods of different families measure different things: no winner
            best = math.nan
        cells = [_short(r["missing"][c]) if c in r["missing"] else _cell(v, v == best) for c, v in zip(columns, values)]
        lines.append("| " + " | ".join([r["name"]] + cells) + " |")
    return lines


def verdict_lines(results: Sequence[dict[str, Any]]) -> list[str]:
    lines = ["| data set | best fitted TrueSkill / Thurstone | its pair log loss | trueskill pkg | openskill PL | "
             "beats both | difference from the better peer ± standard error |", "|---|---|---|---|---|---|---|"]
    for r in results:
        report: Report = r["report"]
        s = report.scores
        candidates = [n for n in ("TrueSkill fitted", "Thurstone fitted") if n in s]
        peers = [n for n in ("trueskill pkg", "openskill PL") if n in s]
        if not candidates or len(peers) < 2:
            lines.append(f"| {r['name']} | " + " | ".join(
                [", ".join(candidates).replace(" fitted", "") or "neither ran (below)", "—",
                 *(f"{s[p]['pair_log_loss']:.4f}" if p in s else _short(r["missing"].get(p, "not run"))
                   for p in ("trueskill pkg", "openskill PL")), "—", "—"]) + " |")
            continue
        ours = min(candidates, key=lambda n: s[n]["pair_log_loss"])
        peer = min(peers, key=lambda n: s[n]["pair_log_loss"])
        mine, ts, os_ = s[ours]["pair_log_loss"], s["trueskill pkg"]["pair_log_loss"], s["openskill PL"]["pair_log_loss"]
        diff, se = report.difference(ours, peer, "pair_log_loss")
        lines.append(f"| {r['name']} | {ours.replace(' fitted', '')} | {mine:.4f} | {ts:.4f} | {os_:.4f} | "
                     f"{'yes' if mine < ts and mine < os_ else '**no**'} | {diff:+.4f} ± {se:.4f} ({peer}) |")
    return lines


def sensitivity(r: dict[str, Any], label: str) -> tuple[float, float, float, float, int]:
    """How well the training part pins the fitted model down.  Over a grid of every fitted hyperparameter
    halved, kept and doubled (a probability kept below 0.95), all combinations: the training and held-out
    pair log loss of the fitted point, and of the grid point the held-out part likes best."""
    model = r["fit"][label]["model"]
    params = r["fit"][label]["params"]
    matches, cut = r["matches_data"], r["cut"]
    train, held = [], []
    grid: list[dict[str, float]] = [{}]
    for name, value in params.items():
        factors = [0.5, 1.0, 2.0]
        grid = [g | {name: min(value * f, 0.95) if name == "draw_probability" else value * f}
                for g in grid for f in factors]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", podium.ConvergenceWarning)
        for g in grid:
            candidate = type(model)(**(model.get_params() | g))
            train.append(podium.evaluate(matches[:cut], {"m": candidate})["m"]["pair_log_loss"])
            held.append(podium.evaluate(matches, {"m": candidate}, start=cut)["m"]["pair_log_loss"])
    centre = grid.index({name: (min(v, 0.95) if name == "draw_probability" else v) for name, v in params.items()})
    best = int(np.argmin(held))
    return train[centre], held[centre], train[best], held[best], len(grid)


def shortfall_lines(results: Sequence[dict[str, Any]]) -> list[str]:
    """Why, where fitted TrueSkill / Thurstone does not beat both peers."""
    lines: list[str] = []
    for r in results:
        report: Report = r["report"]
        s = report.scores
        candidates = [n for n in ("TrueSkill fitted", "Thurstone fitted") if n in s]
        peers = [n for n in ("trueskill pkg", "openskill PL") if n in s]
        if not candidates or not peers:
            continue
        ours = min(candidates, key=lambda n: s[n]["pair_log_loss"])
        peer = min(peers, key=lambda n: s[n]["pair_log_loss"])
        if s[ours]["pair_log_loss"] < s[peer]["pair_log_loss"]:
            continue
        diff, se = report.difference(ours, peer, "pair_log_loss")
        fit_train, fit_held, best_train, best_held, n = sensitivity(r, ours.replace(" fitted", ""))
        verdict = ("not a difference this held-out part can resolve" if abs(diff) < 2 * se
                   else "a real shortfall")
        lines.append(
            f"**{r['name']}**: {peer} is ahead by {diff:.4f} ± {se:.4f} ({diff / se:.1f} standard errors, on "
            f"{report.pairs:,} decided held-out pairs): {verdict}. Halving, keeping and doubling each of the "
            f"fitted {ours.replace(' fitted', '')}'s hyperparameters ({n} combinations), the one the held-out "
            f"part likes best scores {best_held:.4f} there (the fit: {fit_held:.4f}), and on the training part "
            f"{best_train:.4f} against the fit's {fit_train:.4f}: "
            + ("the training part points away from it, so no fit on the training part alone would choose it."
               if best_train > fit_train else "the search stopped short of it, a failure of the fit."))
    return lines


def write(results: Sequence[dict[str, Any]], out: Path, seconds: float,
          teams: dict[str, dict[str, Any]] | None = None) -> None:
    lines = [
        "# Evaluation on real data",
        "",
        "Generated by `.venv/bin/python benchmarks/evaluate_real.py` (see its docstring for the method) on "
        f"{platform.machine()} / Python {platform.python_version()}, numpy {np.__version__}, in {seconds / 60:.1f} "
        "minutes. Do not edit by hand.",
        "",
        "**Every figure is on the held-out part: the last 30 % of each history, in time order.** Every model "
        "rates the whole history in order and predicts each match from the ratings before it; the *(fitted)* "
        "columns chose their hyperparameters with `podium.fit` on the first 70 % only and never saw the part "
        "scored here. The other columns use their defaults. `trueskill pkg` is the `trueskill` package "
        "(0.4.5), `openskill PL` is openskill's `PlackettLuce` (defaults for both); neither knows "
        "non-finishers, so their adapters rank all non-finishers of a match as tied for last.",
        "",
        "Metrics (TrueSkill paper, section 5, for any number of teams): for every pair of teams of a match "
        "whose order is decided (different ranks, or a finisher and a non-finisher), the model's probability "
        "that each finishes ahead of the other, from the two teams alone. *Pair error* counts the pairs where "
        "the favourite finished behind (a tied prediction counts 1/2); *pair log loss* is the mean of "
        "-log p of the team that finished ahead. Draws and pairs of non-finishers do not count.",
        "",
        "## Does fitted TrueSkill or Thurstone beat both peers?",
        "",
        *verdict_lines(results),
        "",
        "The difference is the fitted model's held-out pair log loss minus the better peer's, on the same pairs; "
        "its standard error treats matches as independent (`Report.difference`).",
        "",
    ]
    shortfalls = shortfall_lines(results)
    if shortfalls:
        lines += ["Where it does not:", ""] + [f"- {line}" for line in shortfalls] + [""]
    for metric in ("pair_log_loss", "pair_error", "calibration_error", "log_likelihood"):
        lines += [f"## {METRIC_TITLES[metric]}", "", *metric_table(results, metric), ""]
    lines += ["## The Elo-MMR paper's contest metrics", "",
              "Ebtekar & Liu (2021) score rating systems on contests by two figures from the ratings before each "
              "round; here on the same held-out matches as above, contestants with at least 5 earlier matches "
              "(the paper's N = 5; `podium.evaluate(..., min_rounds=5)`). In a two-team history pair inversion "
              "is the share of decided-or-tied pairs the higher-rated team did not lose. `benchmarks/massive.py` "
              "(README, *Massive contests*) applies the paper's own protocol (rounds from the 16th on) to "
              "codeforces_early and to simulated fields of up to 10,000 beside elo-mmr-py's systems.", ""]
    for metric in ("pair_inversion", "rank_deviation"):
        lines += [f"### {METRIC_TITLES[metric]}", "", *metric_table(results, metric), ""]
    if any(r["missing"] for r in results):
        lines += ["## What did not run", "",
                  f"Each podium model first evaluates the training part once at its defaults, in a process of its "
                  f"own stopped after {REPLAY_LIMIT:g} s; a model that raises or is stopped there is left out of "
                  f"the data set. A model is fitted when that time, times the most replays its fit may take, is "
                  f"within {FIT_BUDGET:g} s. The peers run on histories of at most {PEER_PAIRS:,} pairs of teams. "
                  "What these rules left out in this run, as it happened:", ""]
        for r in results:
            for column, reason in r["missing"].items():
                lines.append(f"- {r['name']} ({r['matches']:,} matches, up to {r['largest']:,} teams, "
                             f"{r['pairs']:,} pairs), **{column}**: {reason}")
        lines.append("")
    lines += ["## The data and the time taken", "",
              "| data set | matches (held out) | players | most teams in a match | records skipped | "
              "fitting, all models | evaluating, all models and peers |", "|---|---|---|---|---|---|---|"]
    for r in results:
        fit_s = sum(f["seconds"] for f in r["fit"].values())
        lines.append(f"| {r['name']} | {r['matches']:,} ({r['held_out']:,}) | {r['players']:,} | {r['max_teams']} | "
                     f"{r['skipped']:,} | {fit_s:.1f} s | {r['evaluate_seconds']:.1f} s |")
    lines += ["", "Seconds per model (evaluation of the whole history; the peers' include their Python loop):", "",
              "| data set | " + " | ".join(_columns(results)) + " |", "|" + "---|" * (len(_columns(results)) + 1)]
    for r in results:
        s = r["report"].scores
        lines.append(f"| {r['name']} | " + " | ".join(
            f"{s[c]['seconds']:.2f}" if c in s else (_short(r["missing"][c]) if c in r["missing"] else "—")
            for c in _columns(results)) + " |")
    lines += ["", "## Fitted hyperparameters", "", "| data set | model | fitted | replays | seconds | "
              "training pair log loss |", "|---|---|---|---|---|---|"]
    for r in results:
        for label, f in r["fit"].items():
            params = ", ".join(f"{k} = {v:.4g}" for k, v in f["params"].items())
            lines.append(f"| {r['name']} | {label} | {params} | {f['evaluations']} | {f['seconds']:.1f} | "
                         f"{f['train']:.4f} |")
    certain = [(r["name"], n, int(np.sum(np.isinf(r["report"].pair_values(n)))), r["report"].pairs)
               for r in results for n in r["report"].models]
    certain = [c for c in certain if c[2]]
    if certain:
        lines += ["", "∞: a model gave probability 0 to a pair order that then happened (its log loss is "
                  "infinite): " + "; ".join(f"{m} on {d}, {k} of {n:,} pairs" for d, m, k, n in certain) + ". "
                  "openskill's smallest win probabilities are 0 and multiples of 2^-54 (5.55e-17), the rounding of "
                  "1 - p in floating point: it loses the tail that podium keeps in log space."]
    failures = [r for r in results if r["peer_failures"]]
    if failures:
        lines += ["", "The trueskill package raised an error (and kept the ratings) in: " + ", ".join(
            f"{r['name']} ({r['peer_failures']} matches)" for r in failures) + "."]
    lines += ["", f"![held-out pair log loss per data set]({out.with_suffix('.png').name})", ""]
    if teams:
        lines += ["## Team games", "",
                  "From `benchmarks/teams.py` (its docstring has the method): simulated histories in which fixed "
                  "parties of three lead 60 % of the teams, equal and uneven teams, and the shared team history "
                  "`atp_doubles`; each model at its defaults and fitted on the first 70 %, scored on the rest. "
                  "A coin flip's pair log loss is log 2 = 0.6931. The two *before* rows are the team aggregation "
                  "podium had until issue 16, still reachable by their parameters: the note's plain Elo "
                  "(`spread=0`: a team game as noisy as a duel) and the paper's literal sum of skills "
                  "(`center=False`: the bigger of two teams of newcomers is the favourite).", ""]
        for label, rows in teams.items():
            lines += [*team_markdown(label, rows), ""]
    out.write_text("\n".join(lines), encoding="utf-8")


def figure(results: Sequence[dict[str, Any]], path: Path) -> None:
    from podium.evaluation import plot

    reports = {r["name"]: r["report"] for r in results}
    fig = plot.comparison(reports, "pair_log_loss", models=_columns(results))
    fig.set_size_inches(14, 4.5)
    fig.savefig(path, dpi=100)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--datasets", help="comma-separated folder names (default: all)")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "docs" / "evaluation.md")
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        print(f"no data at {args.data}; the real data sets live in ../shared/data beside the checkout")
        return 1
    names = args.datasets.split(",") if args.datasets else sorted(
        p.name for p in args.data.iterdir() if (p / "matches.jsonl.gz").exists())
    began = time.perf_counter()
    results: list[dict[str, Any]] = []
    for name in names:
        t = time.perf_counter()
        result = run(name, args.data / name / "matches.jsonl.gz", [r["peer_seconds_per_pair"] for r in results])
        results.append(result)
        s = result["report"].scores
        print(f"{name}: {result['matches']:,} matches in {time.perf_counter() - t:.1f} s; held-out pair log loss "
              + ", ".join(f"{k} {v['pair_log_loss']:.4f}" for k, v in s.items())
              + "".join(f"\n  {k}: {v}" for k, v in result["missing"].items()), flush=True)
    team_rows: dict[str, dict[str, Any]] = {}
    if not args.datasets:  # the whole document: with the team-games study (benchmarks/teams.py)
        for label, m in team_histories(args.data).items():
            t = time.perf_counter()
            team_rows[label] = team_measure(m)
            print(f"team games, {label}: {time.perf_counter() - t:.1f} s", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write(results, args.out, time.perf_counter() - began, team_rows)
    figure(results, args.out.with_suffix(".png"))
    print(f"wrote {args.out} and {args.out.with_suffix('.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
