"""``podium rate``, ``simulate``, ``demo``, ``evaluate`` and ``fit``: rating a history, simulating one, and
comparing and fitting models on it."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer
from rich.table import Table

from ..data.io import write_matches
from ..data.match import MatchError
from ..data.matches import Matches
from ..data.simulate import simulate
from ..engine.league import League
from ..models import MODELS, Model
from .common import _leaderboard_table, _load, app, console, make_model, notes, parse_model_spec, reading


@app.command()
def rate(
    file: Annotated[Path, typer.Argument(help="Match history: .jsonl[.gz], .csv[.gz] or .parquet.", exists=True, dir_okay=False)],
    model: Annotated[str, typer.Option("--model", "-m", help=f"One of: {', '.join(MODELS)}.")] = "plackett-luce",
    set_: Annotated[list[str] | None, typer.Option("--set", help="A model parameter, param=value (repeatable).")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write every player's rating to this CSV.")] = None,
    top: Annotated[int, typer.Option(help="Rows of the leaderboard to show.")] = 20,
    sigmas: Annotated[float, typer.Option("--sigmas", help="Leaderboard by mu - SIGMAS * sigma (models with uncertainty).")] = 3.0,
    skip_invalid: Annotated[bool, typer.Option("--skip-invalid", help="Leave out malformed records (with a warning) instead of stopping.")] = False,
) -> None:
    """Rate a match history and show the leaderboard (the history is read and rated a batch at a time, so it may
    be larger than memory)."""
    from ..data.scan import scan_matches

    rating_model = make_model(model, set_)
    league = League(rating_model, keep_history=False)
    start = time.perf_counter()
    with reading(skip_invalid):
        league.record_many(scan_matches(file, batch_size=100_000, errors="skip" if skip_invalid else "raise",
                                        progress=True))
    elapsed = time.perf_counter() - start
    console.print(_leaderboard_table(league, top, sigmas, f"{rating_model!r}"))
    console.print(f"{league.n_matches:,} matches, {len(league):,} players, rated in {elapsed:.2f} s")
    if out is not None:
        with open(out, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["rank", "player", "mu", "sigma", "score", "games"])
            for row in league.leaderboard(k=sigmas):
                writer.writerow([row.rank, row.player, repr(row.mu), repr(row.sigma), repr(row.score), row.games])
        console.print(f"ratings written to {out}")


@app.command("simulate")
def simulate_command(
    out: Annotated[Path, typer.Option("--out", "-o", help="Where to write the history (.jsonl[.gz], .csv[.gz] or .parquet).")],
    players: Annotated[int, typer.Option(help="Number of players.")] = 1000,
    matches: Annotated[int, typer.Option(help="Number of matches.")] = 10000,
    teams: Annotated[int, typer.Option(help="Teams per match.")] = 2,
    team_size: Annotated[int, typer.Option(help="Players per team.")] = 1,
    draw_probability: Annotated[float, typer.Option(help="Draw probability of two equal teams.")] = 0.0,
    seed: Annotated[int | None, typer.Option(help="Random seed.")] = None,
    skills: Annotated[Path | None, typer.Option(help="Also write the true skills to this CSV.")] = None,
) -> None:
    """Simulate a season with known skills and write it out."""
    try:
        sim = simulate(players, matches, teams=teams, team_size=team_size, draw_probability=draw_probability, seed=seed)
    except ValueError as error:
        raise typer.BadParameter(str(error)) from None
    write_matches(sim.matches, out)
    console.print(f"{matches:,} matches among {players:,} players written to {out}")
    if skills is not None:
        with open(skills, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["player", "skill"])
            writer.writerows(sim.skills.items())


def _season(title: str, sim_matches: Matches, truth: dict[str, float], models: dict[str, Model],
            show: str | None) -> None:
    from scipy.stats import spearmanr  # imported here: scipy.stats would cost every `podium serve` ~50 MB

    table = Table(title=title)
    for column, justify in (("model", "left"), ("rank correlation with true skill", "right"),
                            ("mean log-likelihood", "right"), ("matches / s", "right")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    shown = None
    for name, model in models.items():
        League(model).record_many(sim_matches[:64])  # compile (or load the compiled cache) outside the timing
        league = League(model)
        start = time.perf_counter()
        league.record_many(sim_matches)
        elapsed = time.perf_counter() - start
        ratings = league.ratings
        names = list(ratings)
        rho = float(spearmanr([ratings[p].mu for p in names], [truth[p] for p in names]).statistic)
        ll = league.log_likelihoods
        table.add_row(name, f"{rho:.3f}", f"{float(np.mean(ll)):.4f}", f"{len(sim_matches) / elapsed:,.0f}")
        if name == show:
            shown = league
    if shown is not None:
        console.print(_leaderboard_table(shown, 10, 3.0, f"{title}: top 10 by {show}", truth))
    console.print(table)


@app.command()
def demo(
    players: Annotated[int, typer.Option(help="Players in each simulated season.")] = 400,
    matches: Annotated[int, typer.Option(help="Matches in the season of duels (the others are smaller).")] = 20_000,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 2026,
) -> None:
    """Every model family on simulated seasons with known skills, an evaluation, smoothing and an audit."""
    import warnings

    if players < 16 or matches < 100:
        raise typer.BadParameter("the demo needs at least 16 players and 100 matches")
    from .. import jit

    helper = _compile_ahead(["evaluation", "smoothing", "audit"])
    cold_budget, jit.COLD_BUDGET = jit.COLD_BUDGET, 0.0  # the demo shows compiled speeds: its seasons compile
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # a demo of defaults: convergence notes are for real work
            _demo(players, matches, seed)
    finally:
        jit.COLD_BUDGET = cold_budget
        if helper is not None:
            helper.kill()
            helper.wait()


def _compile_ahead(work: list[str]) -> subprocess.Popen[bytes] | None:
    """On a machine with a second core, ``podium compile --only`` of ``work`` in a child process: the demo's later
    sections then load their kernels from numba's cache instead of compiling them after the first sections
    (a fresh install's demo takes a quarter less time; with the cache warm the child loads and exits)."""
    from .. import jit

    if jit.mode() == "interpreted" or (os.cpu_count() or 1) < 2:
        return None
    options = [arg for key in work for arg in ("--only", key)]
    return subprocess.Popen([sys.executable, "-m", "podium.cli", "compile", *options, "--quiet"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _demo(players: int, matches: int, seed: int) -> None:
    from ..data.simulate import simulate_abuse
    from ..evaluation.fit import fit
    from ..evaluation.prequential import evaluate
    from ..integrity.audit import audit
    from ..models import EloMMR, Elo, Glicko2, PairwiseElo, PlackettLuce, Thurstone, TrueSkill, TrueSkillThroughTime

    console.rule("[bold]podium demo")
    console.print(f"Simulated seasons among {players:,} players with known skills (Gaussian performances around each "
                  "player's true skill); numba compiles podium's kernels on the first run and caches them.\n")
    duel = simulate(players, matches, teams=2, team_size=1, draw_probability=0.1, seed=seed)
    _season(f"1. Duels: {matches:,} one-on-one games, 10% draws between equals", duel.matches, duel.skills, {
        "Elo": Elo(), "Elo gaussian": Elo(performance="gaussian"), "Glicko2": Glicko2(), "TrueSkill": TrueSkill(),
        "EloMMR": EloMMR(),
    }, show="TrueSkill")
    race = simulate(players, matches // 8, teams=8, team_size=1, draw_probability=0.02, seed=seed + 1)
    _season(f"2. Free-for-alls: {len(race.matches):,} races of 8", race.matches, race.skills, {
        "PairwiseElo": PairwiseElo(), "PlackettLuce": PlackettLuce(), "Thurstone": Thurstone(),
        "TrueSkill": TrueSkill(), "EloMMR": EloMMR(),
    }, show=None)

    console.rule("3. Evaluation: each game predicted from the ratings before it")
    with console.status("fitting TrueSkill on the first 70 % of the duels"):
        fitted = fit(TrueSkill, duel.matches)
    cut = fitted.split
    report = evaluate(duel.matches, {"Elo": Elo(), "Glicko2": Glicko2(), "TrueSkill": TrueSkill(),
                                     "TrueSkill (fitted)": fitted.model}, start=cut)
    console.print(report.table(title=f"Duels {cut + 1:,}-{len(duel.matches):,} (held out; TrueSkill fitted on the rest: "
                                     + ", ".join(f"{k} {v:.3g}" for k, v in fitted.params.items()) + ")"))

    console.rule("4. Smoothing: every game informs every rating (TrueSkill Through Time)")
    from scipy.stats import spearmanr

    with console.status("fitting TrueSkill Through Time by its evidence and smoothing the season of duels"):
        began = time.perf_counter()
        smoother = fit(TrueSkillThroughTime, duel.matches, split=1.0).model
        assert isinstance(smoother, TrueSkillThroughTime)
        smoothed = smoother.smooth(duel.matches)
        seconds = time.perf_counter() - began
    final = smoothed.ratings()
    league = League(TrueSkill())
    league.record_many(duel.matches)
    online = league.ratings
    names = list(duel.skills)
    truth = [duel.skills[p] for p in names]
    console.print(f"rank correlation with true skill: smoothed {spearmanr([final[p].mu for p in names], truth).statistic:.3f}"
                  f", TrueSkill online {spearmanr([online[p].mu for p in names], truth).statistic:.3f} "
                  f"(beta {float(smoother.beta):.3g}, gamma {float(smoother.gamma):.3g} fitted; {smoothed.iterations} "
                  f"sweeps; {seconds:.1f} s)\n")

    console.rule("5. Audit: abuse injected into an honest season")
    # (a smaller scene whose players have the games a sandbagger needs: 2 x 25 thrown and honest ones around them)
    scene = max(16, players // 4)
    abused = simulate_abuse(scene, max(matches // 4, 50 * scene), win_trading=2, farming=2, sandbagging=1, dive=25,
                            seed=seed + 2)
    with console.status("auditing (TrueSkill fitted to the history first)"):
        flags = audit(abused.matches)
    if flags.flags:
        console.print(flags.table())
    injected = {kind: [" & ".join(case[:2]) if kind == "one-sided pair" else case[0] for case in cases]
                for kind, cases in abused.abusers.items()}
    console.print(f"{len(flags.flags)} flag(s); injected: " + "; ".join(
        f"{kind}: {', '.join(who)}" for kind, who in injected.items() if who))
    console.print("\nRank correlation: Spearman's rho between final ratings and true skills (1 = perfect). "
                  "Mean log-likelihood: each match predicted from the ratings before it (PairwiseElo: the pairwise "
                  "composite likelihood).  Next: `podium evaluate`, `podium fit`, `podium audit` and `podium serve` "
                  "on your own history (README).")


def _default_models(matches: Matches) -> list[str]:
    names = [n for n in MODELS if n != "elo"] if int(matches.n_teams.max()) > 2 else list(MODELS)
    return names


@app.command("evaluate")
def evaluate_command(
    file: Annotated[Path, typer.Argument(help="Match history: .jsonl[.gz], .csv[.gz] or .parquet.", exists=True, dir_okay=False)],
    model: Annotated[list[str] | None, typer.Option(
        "--model", "-m", help="A model, NAME or NAME:param=value,... (repeatable; default: every model that fits the data); "
                              "NAME is a filter or trueskill-through-time (the smoother).")] = None,
    fit_: Annotated[bool, typer.Option("--fit", help="Also fit each model on the first --split of the history; "
                                                     "then everything is scored on the rest.")] = False,
    split: Annotated[float, typer.Option(help="Training fraction for --fit.")] = 0.7,
    min_games: Annotated[int, typer.Option("--min-games", help="Score only matches whose players all had this many earlier matches.")] = 0,
    connected_only: Annotated[bool, typer.Option("--connected-only", help="Score only pairs whose players were all connected before the match (podium check).")] = False,
    challenge: Annotated[float, typer.Option(help="Fraction of tightest matches for the challenged comparison.")] = 0.2,
    json_: Annotated[bool, typer.Option("--json", help="Print the report as JSON instead of tables.")] = False,
    plot: Annotated[Path | None, typer.Option("--plot", help="Write a figure (comparison, calibration, trajectories) to this file.")] = None,
    skip_invalid: Annotated[bool, typer.Option("--skip-invalid", help="Leave out malformed records (with a warning).")] = False,
    start: Annotated[int, typer.Option("--start", help="Score only matches from this index on (the earlier ones are rated, "
                                                       "a burn-in); with --fit, the later of this and the split.")] = 0,
    min_rounds: Annotated[int, typer.Option("--min-rounds", help="Pair inversion and rank deviation (the Elo-MMR paper's) "
                                                                 "count contestants with this many earlier matches.")] = 5,
) -> None:
    """Predict every match from the ratings before it and compare models (TrueSkill paper, section 5; pair
    inversion and rank deviation: Elo-MMR paper, Ebtekar & Liu 2021)."""
    from ..evaluation.prequential import evaluate
    from ..evaluation.fit import fit

    specs = model or []
    matches = _load(file, skip_invalid, at_least=2)
    models = dict(parse_model_spec(spec, smoothers=True) for spec in (specs or _default_models(matches)))
    if min_games < 0:
        raise typer.BadParameter(f"must be >= 0, got {min_games}", param_hint="--min-games")
    if min_rounds < 0:
        raise typer.BadParameter(f"must be >= 0, got {min_rounds}", param_hint="--min-rounds")
    if not 0 <= start <= len(matches):
        raise typer.BadParameter(f"must be in [0, {len(matches)}] (the number of matches), got {start}",
                                 param_hint="--start")
    fitted: dict[str, dict[str, float]] = {}
    trained = 0  # the matches the fitted models were fitted on
    try:
        if fit_:
            if not 0.0 < split < 1.0:
                raise typer.BadParameter(f"must be in (0, 1), got {split}", param_hint="--split")
            for label, m in list(models.items()):
                if not type(m)._fit_space:
                    continue
                with console.status(f"fitting {label}"):
                    result = fit(m, matches, split=split, min_games=min_games)
                models[f"{label} (fitted)"] = result.model
                fitted[label] = result.params
                trained = result.split
                start = max(start, trained)
        with console.status("evaluating"):
            report = evaluate(matches, models, min_games=min_games, challenge=challenge, start=start,
                              connected_only=connected_only, min_rounds=min_rounds)
    except (MatchError, ValueError) as error:
        console.print(f"[red]error:[/red] {error}")
        raise typer.Exit(1) from None
    if json_:
        data = report.to_dict()
        data["fitted"] = fitted
        typer.echo(json.dumps(data, indent=2))
    else:
        where = (f"held-out part: matches {start + 1:,}-{len(matches):,} of {len(matches):,} (fitted on the first "
                 f"{trained:,})" if trained else f"matches {start + 1:,}-{len(matches):,} of {len(matches):,}" if start
                 else f"all {len(matches):,} matches")
        if connected_only:
            where += (f"; connected only: {report.dropped_pairs:,} pairs and {report.dropped_matches:,} matches "
                      "left out")
        console.print(report.table(title=f"{file.name}: {where}"))
        if len(models) > 1:
            console.print(report.challenged_table())
        for label, params in fitted.items():
            console.print(f"{label} fitted: " + ", ".join(f"{k}={v:.4g}" for k, v in params.items()))
    if plot is not None:
        try:
            _evaluation_figure(report, matches, models, plot)
        except (ValueError, OSError) as error:  # e.g. an image format matplotlib does not write
            notes.print(f"[red]error:[/red] could not write the figure to {plot}: {error}")
            raise typer.Exit(1) from None
        if not json_:
            console.print(f"figure written to {plot}")


def _evaluation_figure(report: Any, matches: Matches, models: dict[str, Model], path: Path) -> None:
    from matplotlib.figure import Figure

    from ..evaluation import plot as plots

    fig = Figure(figsize=(16, 4.8), layout="constrained")
    ax1, ax2, ax3 = fig.subplots(1, 3, width_ratios=[1.2, 1, 1.4])
    plots.comparison(report, "pair_log_loss", ax=ax1)
    ax1.set_title("pair log loss")
    plots.calibration(report, ax=ax2)
    name, first = next(iter(models.items()))
    if isinstance(first, Model):
        league = League(first)
        league.record_many(matches)
        plots.trajectories(league, ax=ax3, top=5)
    else:  # a smoother's trajectories are its smoothed ratings
        plots.trajectories(first.smooth(matches), ax=ax3, top=5)
    ax3.set_title(f"{name}: top 5 trajectories")
    fig.savefig(path, dpi=110)


@app.command("fit")
def fit_command(
    file: Annotated[Path, typer.Argument(help="Match history: .jsonl[.gz], .csv[.gz] or .parquet.", exists=True, dir_okay=False)],
    model: Annotated[str, typer.Option("--model", "-m", help="NAME or NAME:param=value,... (the fixed settings); NAME may be "
                                                             "trueskill-through-time (fitted by its evidence).")] = "trueskill",
    param: Annotated[list[str] | None, typer.Option("--param", "-p", help="A hyperparameter to fit (repeatable; default: the model's usual ones).")] = None,
    metric: Annotated[str | None, typer.Option(help="pair_log_loss, pair_error or log_likelihood (default: log_likelihood "
                                                    "where a draw probability is fitted, else pair_log_loss).")] = None,
    split: Annotated[float, typer.Option(help="Fraction of the history, in time order, to fit on.")] = 0.7,
    min_games: Annotated[int, typer.Option("--min-games", help="Score only matches whose players all had this many earlier matches.")] = 0,
    skip_invalid: Annotated[bool, typer.Option("--skip-invalid", help="Leave out malformed records (with a warning).")] = False,
) -> None:
    """Fit a model's hyperparameters on the first part of a history and score it on the rest."""
    from ..evaluation.prequential import evaluate
    from ..evaluation.fit import fit

    label, base = parse_model_spec(model, smoothers=True)
    matches = _load(file, skip_invalid, at_least=2)
    try:
        with console.status(f"fitting {label} on the first {split:.0%} of {len(matches):,} matches"):
            result = fit(base, matches, params=param, metric=metric, split=split, min_games=min_games)
            before = evaluate(matches, {"given": base}, min_games=min_games, start=result.split)
    except (MatchError, ValueError) as error:
        console.print(f"[red]error:[/red] {error}")
        raise typer.Exit(1) from None
    table = Table(title=f"{type(base).__name__} fitted on matches 1-{result.split:,}, scored on "
                        f"{result.split + 1:,}-{len(matches):,}")
    table.add_column("parameter")
    table.add_column("given", justify="right")
    table.add_column("fitted", justify="right")
    for name, value in result.params.items():
        table.add_row(name, f"{base._fit_value(name):.6g}", f"{value:.6g}" + (" (at a bound)" if name in result.at_bound
                                                                             else ""))
    metric = result.metric
    # (a smoother is fitted by its evidence and scored held out by log P(held-out | training) per match)
    held_out = "log_likelihood" if metric == "log_evidence" else metric
    table.add_row(f"held-out {held_out}", f"{before['given'][held_out]:.5f}", f"[bold]{result.score:.5f}[/bold]")
    table.add_row(f"training {metric}", "", f"{result.train_score:.5f}")
    console.print(table)
    console.print(f"{result.evaluations} replays of the training part, {result.seconds:.1f} s")

