"""The ``podium`` command: rate a history, smooth it, simulate one, or run the demo."""

from __future__ import annotations

import csv
import json
import math
import sys
import time
import warnings
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .io import read_matches, write_matches
from .league import League
from .match import MatchError, Matches, format_time, parse_time
from .models import MODELS, Model
from .simulate import simulate

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Ratings from games with any number of players and teams.")
# Outside a terminal (pipes, CI logs) rich would wrap tables at 80 columns; the evaluation tables need more.
console = Console(width=None if sys.stdout.isatty() else 120, soft_wrap=True)
notes = Console(stderr=True, soft_wrap=True)  # warnings: kept off stdout, which may carry JSON


def _parse_value(text: str) -> Any:
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def make_model(name: str, settings: list[str] | None = None) -> Model:
    """Build a model from its command-line name and ``param=value`` settings."""
    key = name.lower().replace("_", "-")
    if key not in MODELS:
        raise typer.BadParameter(f"unknown model {name!r}; choose from {', '.join(MODELS)}", param_hint="--model")
    params: dict[str, Any] = {}
    for item in settings or []:
        if "=" not in item:
            raise typer.BadParameter(f"expected param=value, got {item!r}", param_hint="--set")
        param, value = item.split("=", 1)
        params[param.strip()] = _parse_value(value.strip())
    try:
        return MODELS[key](**params)
    except (TypeError, ValueError) as error:
        raise typer.BadParameter(str(error), param_hint="--set") from None


def _leaderboard_table(league: League, top: int, k: float, title: str, truth: dict[str, float] | None = None) -> Table:
    table = Table(title=title)
    table.add_column("#", justify="right")
    table.add_column("player")
    table.add_column("rating" if league.model.prior.sigma == 0 else "mu", justify="right")
    if league.model.prior.sigma > 0:
        table.add_column("sigma", justify="right")
        table.add_column(f"mu - {k:g} sigma", justify="right")
    table.add_column("games", justify="right")
    if truth is not None:
        table.add_column("true skill rank", justify="right")
        true_rank = {p: i + 1 for i, p in enumerate(sorted(truth, key=truth.__getitem__, reverse=True))}
    rows = league.leaderboard(k=k, top=top)
    if not all(row.connected for row in rows):
        table.caption = "† never connected to the largest group of players (podium check): not comparable with it"
    for row in rows:
        cells = [str(row.rank), escape(row.player) + ("" if row.connected else " †"), f"{row.mu:.1f}"]
        if league.model.prior.sigma > 0:
            cells += [f"{row.sigma:.2f}", f"{row.score:.2f}"]
        cells.append(str(row.games))
        if truth is not None:
            cells.append(str(true_rank[row.player]))
        table.add_row(*cells)
    return table


def _load(file: Path, skip_invalid: bool, at_least: int = 0) -> Matches:
    """Read a history, showing progress and warnings; exit with a message on bad input."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            matches = read_matches(file, errors="skip" if skip_invalid else "raise", progress=True)
        for warning in caught:
            notes.print(f"[yellow]warning:[/yellow] {warning.message}")
    except (MatchError, ValueError) as error:
        console.print(f"[red]error:[/red] {error}")
        if isinstance(error, MatchError):
            console.print("(--skip-invalid leaves malformed records out and uses the rest)")
        raise typer.Exit(1) from None
    if len(matches) < at_least:
        console.print(f"[red]error:[/red] {file} holds {len(matches)} match(es); at least {at_least} are needed.")
        raise typer.Exit(1)
    return matches


def parse_model_spec(spec: str) -> tuple[str, Model]:
    """``name`` or ``name:param=value,param=value`` -> (the spec as a label, the model)."""
    name, _, settings = spec.partition(":")
    items = [item for item in settings.split(",") if item.strip()] if settings else []
    try:
        return spec, make_model(name.strip(), items)
    except typer.BadParameter as error:
        raise typer.BadParameter(f"{spec!r}: {error.message}", param_hint="--model") from None


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
    from .scan import scan_matches

    rating_model = make_model(model, set_)
    league = League(rating_model, keep_history=False)
    start = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            league.record_many(scan_matches(file, batch_size=100_000, errors="skip" if skip_invalid else "raise",
                                            progress=True))
        for warning in caught:
            notes.print(f"[yellow]warning:[/yellow] {warning.message}")
    except (MatchError, ValueError) as error:
        console.print(f"[red]error:[/red] {error}")
        if isinstance(error, MatchError):
            console.print("(--skip-invalid leaves malformed records out and uses the rest)")
        raise typer.Exit(1) from None
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


def _season(title: str, sim_matches: Matches, truth: dict[str, float], models: dict[str, Model], show: str) -> None:
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
    players: Annotated[int, typer.Option(help="Players in each simulated season.")] = 500,
    matches: Annotated[int, typer.Option(help="Matches in each simulated season.")] = 50_000,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 2026,
) -> None:
    """Simulate seasons with known skills, rate them with every model, and compare."""
    from .models import Elo, PairwiseElo, PlackettLuce

    console.rule("[bold]podium demo")
    console.print(f"Simulating two seasons of {matches:,} matches among {players:,} players with known skills "
                  "(Gaussian performances around each player's true skill; numba compiles on the first run).\n")
    duel = simulate(players, matches, teams=2, team_size=1, draw_probability=0.1, seed=seed)
    _season("Duels (1 v 1, 10% draws between equals)", duel.matches, duel.skills, {
        "Elo": Elo(), "Elo gaussian": Elo(performance="gaussian"),
        "Elo gaussian classic": Elo(performance="gaussian", update="classic"),
        "PlackettLuce": PlackettLuce(),
    }, show="Elo")
    race = simulate(players, matches // 4, teams=8, team_size=1, draw_probability=0.02, seed=seed + 1)
    _season("Free-for-alls (8 players)", race.matches, race.skills, {
        "PairwiseElo sum": PairwiseElo(k=8), "PairwiseElo mean": PairwiseElo(),
        "PairwiseElo gaussian": PairwiseElo(k=8, performance="gaussian"),
        "PlackettLuce victory": PlackettLuce(), "PlackettLuce elimination": PlackettLuce(order="elimination"),
    }, show="PlackettLuce victory")
    console.print("Rank correlation: Spearman's rho between final ratings and true skills (1 = perfect).\n"
                  "Mean log-likelihood: each match predicted from the ratings before it (PairwiseElo: the pairwise "
                  "composite likelihood).")


def _default_models(matches: Matches) -> list[str]:
    names = [n for n in MODELS if n != "elo"] if int(matches.n_teams.max()) > 2 else list(MODELS)
    return names


@app.command("evaluate")
def evaluate_command(
    file: Annotated[Path, typer.Argument(help="Match history: .jsonl[.gz], .csv[.gz] or .parquet.", exists=True, dir_okay=False)],
    model: Annotated[list[str] | None, typer.Option(
        "--model", "-m", help="A model, NAME or NAME:param=value,... (repeatable; default: every model that fits the data).")] = None,
    fit_: Annotated[bool, typer.Option("--fit", help="Also fit each model on the first --split of the history; "
                                                     "then everything is scored on the rest.")] = False,
    split: Annotated[float, typer.Option(help="Training fraction for --fit.")] = 0.7,
    min_games: Annotated[int, typer.Option("--min-games", help="Score only matches whose players all had this many earlier matches.")] = 0,
    connected_only: Annotated[bool, typer.Option("--connected-only", help="Score only pairs whose players were all connected before the match (podium check).")] = False,
    challenge: Annotated[float, typer.Option(help="Fraction of tightest matches for the challenged comparison.")] = 0.2,
    json_: Annotated[bool, typer.Option("--json", help="Print the report as JSON instead of tables.")] = False,
    plot: Annotated[Path | None, typer.Option("--plot", help="Write a figure (comparison, calibration, trajectories) to this file.")] = None,
    skip_invalid: Annotated[bool, typer.Option("--skip-invalid", help="Leave out malformed records (with a warning).")] = False,
) -> None:
    """Predict every match from the ratings before it and compare models (TrueSkill paper, section 5)."""
    from .evaluate import evaluate
    from .fit import fit

    specs = model or []
    matches = _load(file, skip_invalid, at_least=2)
    models = dict(parse_model_spec(spec) for spec in (specs or _default_models(matches)))
    if min_games < 0:
        raise typer.BadParameter(f"must be >= 0, got {min_games}", param_hint="--min-games")
    start = 0
    fitted: dict[str, dict[str, float]] = {}
    try:
        if fit_:
            if not 0.0 < split < 1.0:
                raise typer.BadParameter(f"must be in (0, 1), got {split}", param_hint="--split")
            for label, m in list(models.items()):
                if not type(m)._fit_space:
                    continue
                with console.status(f"fitting {label}"):
                    result = fit(m, matches, split=split, min_games=min_games)
                assert isinstance(result.model, Model)  # the command line evaluates filters
                models[f"{label} (fitted)"] = result.model
                fitted[label] = result.params
                start = result.split
        with console.status("evaluating"):
            report = evaluate(matches, models, min_games=min_games, challenge=challenge, start=start,
                              connected_only=connected_only)
    except (MatchError, ValueError) as error:
        console.print(f"[red]error:[/red] {error}")
        raise typer.Exit(1) from None
    if json_:
        data = report.to_dict()
        data["fitted"] = fitted
        typer.echo(json.dumps(data, indent=2))
    else:
        where = (f"held-out part: matches {start + 1:,}-{len(matches):,} of {len(matches):,} (fitted on the first "
                 f"{start:,})" if start else f"all {len(matches):,} matches")
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

    from . import plot as plots

    fig = Figure(figsize=(16, 4.8), layout="constrained")
    ax1, ax2, ax3 = fig.subplots(1, 3, width_ratios=[1.2, 1, 1.4])
    plots.comparison(report, "pair_log_loss", ax=ax1)
    ax1.set_title("pair log loss")
    plots.calibration(report, ax=ax2)
    name, first = next(iter(models.items()))
    league = League(first)
    league.record_many(matches)
    plots.trajectories(league, ax=ax3, top=5)
    ax3.set_title(f"{name}: top 5 trajectories")
    fig.savefig(path, dpi=110)


@app.command("fit")
def fit_command(
    file: Annotated[Path, typer.Argument(help="Match history: .jsonl[.gz], .csv[.gz] or .parquet.", exists=True, dir_okay=False)],
    model: Annotated[str, typer.Option("--model", "-m", help="NAME or NAME:param=value,... (the fixed settings).")] = "trueskill",
    param: Annotated[list[str] | None, typer.Option("--param", "-p", help="A hyperparameter to fit (repeatable; default: the model's usual ones).")] = None,
    metric: Annotated[str, typer.Option(help="pair_log_loss, pair_error or log_likelihood.")] = "pair_log_loss",
    split: Annotated[float, typer.Option(help="Fraction of the history, in time order, to fit on.")] = 0.7,
    min_games: Annotated[int, typer.Option("--min-games", help="Score only matches whose players all had this many earlier matches.")] = 0,
    skip_invalid: Annotated[bool, typer.Option("--skip-invalid", help="Leave out malformed records (with a warning).")] = False,
) -> None:
    """Fit a model's hyperparameters on the first part of a history and score it on the rest."""
    from .evaluate import evaluate
    from .fit import fit

    label, base = parse_model_spec(model)
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
        table.add_row(name, f"{float(getattr(base, name)):.6g}", f"{value:.6g}")
    table.add_row(f"held-out {metric}", f"{before['given'][metric]:.5f}", f"[bold]{result.score:.5f}[/bold]")
    table.add_row(f"training {metric}", "", f"{result.train_score:.5f}")
    console.print(table)
    console.print(f"{result.evaluations} replays of the training part, {result.seconds:.1f} s")


def _examples(names: list[str], players: np.ndarray, games: np.ndarray, k: int = 3) -> str:
    """The ``k`` players with the most games (ties to the first seen), as escaped rich text."""
    order = np.lexsort((players, -games[players]))[:k]
    return ", ".join(escape(names[i]) for i in players[order].tolist())


def _match_list(matches: Matches, which: np.ndarray, k: int = 8) -> str:
    """Matches by id where they have one, else by index (0-based, as in the library), at most ``k``."""
    shown = [matches.ids[j] or f"#{j}" for j in which[:k].tolist()]
    return ", ".join(escape(m) for m in shown) + (f", … ({len(which) - k} more)" if len(which) > k else "")


@app.command("check")
def check_command(
    file: Annotated[Path, typer.Argument(help="Match history: .jsonl[.gz], .csv[.gz] or .parquet.", exists=True, dir_okay=False)],
    thin: Annotated[int, typer.Option("--thin", help="Report large groups connected through fewer than THIN "
                                                          "matches (groups: the finest partition in which any two "
                                                          "share fewer than THIN matches).")] = 5,
    min_size: Annotated[int, typer.Option("--min-size", help="Players a group needs for its thin links "
                                                                   "to be reported.")] = 10,
    provisional: Annotated[int, typer.Option("--provisional", help="Players with fewer games than this are "
                                                                         "provisional.")] = 10,
    skip_invalid: Annotated[bool, typer.Option("--skip-invalid", help="Leave out malformed records (with a warning).")] = False,
) -> None:
    """Check what a history's ratings can compare: its components, the thin links inside them, provisional players.

    Ratings are comparable only within a connected component (players who met, directly or through others);
    two large groups joined by a few matches are compared through those few alone.
    """
    from .components import components

    for option, value in (("--thin", thin), ("--min-size", min_size), ("--provisional", provisional)):
        if value < 1:
            raise typer.BadParameter(f"must be an int >= 1, got {value}", param_hint=option)
    matches = _load(file, skip_invalid)
    start = time.perf_counter()
    found = components(matches, thin=thin, min_size=min_size)
    elapsed = time.perf_counter() - start
    names = matches.players
    games = np.bincount(matches.player, minlength=len(names))
    n = found.n_players
    slot0 = matches.team_start[matches.match_start[:-1]]
    per_component = np.bincount(found.labels[matches.player[slot0]], minlength=found.n_components) \
        if len(matches) else np.zeros(0, np.int64)
    shown = 10
    table = Table(title=f"{file.name}: {n:,} players in {found.n_components:,} component"
                        f"{'' if found.n_components == 1 else 's'}"
                        + (f"; the largest holds {int(found.sizes[0]):,} ({found.share:.1%})" if n else ""))
    for column in ("component", "players", "share", "matches", "most games"):
        table.add_column(column, justify="left" if column == "most games" else "right")
    members = np.argsort(found.labels, kind="stable")
    bounds = np.searchsorted(found.labels[members], np.arange(found.n_components + 1))
    for c in range(min(found.n_components, shown)):
        table.add_row(str(c), f"{int(found.sizes[c]):,}", f"{found.sizes[c] / n:.1%}", f"{int(per_component[c]):,}",
                      _examples(names, members[bounds[c]:bounds[c + 1]], games))
    if found.n_components > shown:
        rest = found.sizes[shown:]
        table.add_row(f"{found.n_components - shown:,} more", f"{int(rest.sum()):,}", f"{rest.sum() / n:.1%}",
                      f"{int(per_component[shown:].sum()):,}", f"{int(rest.max()):,} players or fewer each")
    console.print(table)

    assert found.group_sizes is not None  # podium.components always finds the groups
    large = int(np.count_nonzero(found.group_sizes >= min_size))
    if found.thin_links:
        links = Table(title=f"thin links: groups of {min_size}+ players connected through fewer than {thin} matches")
        for column in ("component", "groups", "most games", "matches", "direct", "separating matches (id or #index)"):
            links.add_column(column, justify="right" if column in ("component", "matches", "direct") else "left")
        for link in found.thin_links:
            links.add_row(str(link.component),
                          "\n".join(f"{g} ({size:,} players)" for g, size in zip(link.groups, link.sizes)),
                          "\n".join(", ".join(map(escape, names_)) for names_ in link.examples),
                          str(link.count), str(link.direct), _match_list(matches, link.matches))
        console.print(links)
    else:
        console.print(f"No thin links: {large:,} group{'' if large == 1 else 's'} of {min_size}+ players"
                      + (", and every two of them in one component are connected through at least "
                         f"{thin} matches." if large > 1 else "."))

    few = np.flatnonzero((games < provisional) & (found.labels >= 0))
    counts = Table(title=f"provisional players (fewer than {provisional} games): {len(few):,} of {n:,}"
                         + (f" ({len(few) / n:.1%})" if n else ""))
    for column in ("games", "players", "first seen"):
        counts.add_column(column, justify="left" if column == "first seen" else "right")
    for g in range(1, provisional):
        who = few[games[few] == g]
        if len(who):
            counts.add_row(str(g), f"{len(who):,}", ", ".join(escape(names[i]) for i in who[:3].tolist())
                           + (", …" if len(who) > 3 else ""))
    console.print(counts)
    console.print(f"{len(matches):,} matches; components, groups and links found in {elapsed * 1000:.1f} ms")


def _parse_at(text: str, is_date: bool) -> float:
    """``--at``: a number on the history's time axis, or (when its times are dates) an ISO-8601 date."""
    try:
        value = float(text)
    except ValueError:
        if not is_date:
            raise typer.BadParameter(f"this history's times are numbers (match indices when it has none), so --at "
                                     f"must be a number; got {text!r}", param_hint="--at") from None
        try:
            value = parse_time(text, "--at")
        except MatchError as error:
            raise typer.BadParameter(str(error), param_hint="--at") from None
    if not math.isfinite(value):
        raise typer.BadParameter(f"must be a finite time; got {text!r}", param_hint="--at")
    return value


@app.command("audit")
def audit_command(
    file: Annotated[Path, typer.Argument(help="Match history: .jsonl[.gz], .csv[.gz] or .parquet.", exists=True, dir_okay=False)],
    model: Annotated[str | None, typer.Option("--model", "-m", help="NAME or NAME:param=value,... (default: TrueSkill fitted to the history).")] = None,
    alpha: Annotated[float, typer.Option(help="Family-wise error rate: the chance of any flag in an honest history.")] = 0.01,
    min_meetings: Annotated[int, typer.Option("--min-meetings", help="Decided meetings a pair needs to be tested.")] = 8,
    new_games: Annotated[int, typer.Option("--new-games", help="Most games of an account counted as a throwaway.")] = 10,
    json_out: Annotated[bool, typer.Option("--json", help="Print the flags as JSON instead of a table.")] = False,
    skip_invalid: Annotated[bool, typer.Option("--skip-invalid", help="Leave out malformed records (with a warning).")] = False,
) -> None:
    """Flag win trading, throwaway farming and sandbagging: results too improbable under the model's predictions."""
    from .audit import audit

    matches = _load(file, skip_invalid, at_least=2)
    base = parse_model_spec(model)[1] if model else None
    try:
        with console.status(f"auditing {len(matches):,} matches" + ("" if model else " (fitting TrueSkill first)")), \
                warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            result = audit(matches, base, alpha=alpha, min_meetings=min_meetings, new_games=new_games)
        for warning in caught:
            notes.print(f"[yellow]warning:[/yellow] {warning.message}")
    except (MatchError, ValueError) as error:
        console.print(f"[red]error:[/red] {error}")
        raise typer.Exit(1) from None
    if json_out:
        console.print_json(json.dumps({
            "model": result.model, "alpha": result.alpha, "tests": result.tests,
            "flags": [{"kind": f.kind, "players": list(f.players), "p_value": f.p_value, "adjusted": f.adjusted,
                       "matches": [m if m is not None else j for m, j in zip(f.match_ids, f.matches)],
                       "evidence": f.evidence, "details": f.details} for f in result.flags]}))
        return
    if result.flags:
        console.print(result.table())
    tested = ", ".join(f"{n:,} {kind}" for kind, n in result.tests.items())
    console.print(f"{len(result.flags)} flag(s) at alpha = {alpha:g}; tested {tested}; model {escape(result.model)}")


@app.command("smooth")
def smooth_command(
    file: Annotated[Path, typer.Argument(help="Match history: .jsonl[.gz], .csv[.gz] or .parquet.", exists=True, dir_okay=False)],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write every player's smoothed skill at each of their batches "
                                                             "(player, time, match, mu, sigma) to this CSV.")] = None,
    plot: Annotated[Path | None, typer.Option("--plot", help="Write a figure of the leaders' smoothed trajectories "
                                                          "(the top 5, or --top if fewer) to this file.")] = None,
    top: Annotated[int, typer.Option(help="Rows of the leaderboard to show.", min=1)] = 20,
    k: Annotated[float, typer.Option("--k", help="Leaderboard by mu - K * sigma; the figure's band is mu ± K sigma.")] = 3.0,
    at: Annotated[str | None, typer.Option("--at", help="The leaderboard at this time: a number on the history's time axis "
                                                     "(the match index if it has no times; days since 1970 if its "
                                                     "times are dates) or an ISO-8601 date.  Default: its last time.")] = None,
    mu: Annotated[float, typer.Option(help="A new player's mean skill.")] = 0.0,
    sigma: Annotated[float, typer.Option(help="A new player's skill standard deviation.")] = 6.0,
    beta: Annotated[float, typer.Option(help="Standard deviation of a performance around the skill.")] = 1.0,
    gamma: Annotated[float, typer.Option(help="Random walk of skills: variance GAMMA^2 per unit of time (per day when "
                                               "times are dates).")] = 0.03,
    draw_probability: Annotated[float, typer.Option(help="Draw probability of two equal players.")] = 0.1,
    tolerance: Annotated[float, typer.Option(help="Stop when a sweep moves no posterior mean or sd by this much.")] = 1e-6,
    max_iterations: Annotated[int, typer.Option("--max-iterations", min=0,
                                                help="Most backward-forward sweeps (0: the filtering pass only).")] = 100,
    skip_invalid: Annotated[bool, typer.Option("--skip-invalid", help="Leave out malformed records (with a warning).")] = False,
) -> None:
    """Smooth a history with TrueSkill Through Time (every match informs every rating, earlier and later)."""
    from .models import TrueSkillThroughTime

    try:
        model = TrueSkillThroughTime(mu=mu, sigma=sigma, beta=beta, gamma=gamma, draw_probability=draw_probability)
    except (TypeError, ValueError) as error:
        raise typer.BadParameter(str(error)) from None
    if not (math.isfinite(tolerance) and tolerance > 0):
        raise typer.BadParameter(f"must be a positive number; got {tolerance!r}", param_hint="--tolerance")
    if out is not None:
        suffixes = [s.lower() for s in out.suffixes]
        if suffixes[-1:] == [".parquet"]:
            console.print(f"[red]error:[/red] writing Parquet is not supported yet ({out}); give --out a .csv name.")
            raise typer.Exit(1)
        if suffixes[-1:] == [".gz"]:
            console.print(f"[red]error:[/red] the trajectories are written as plain CSV, not compressed ({out}); "
                          "give --out a .csv name.")
            raise typer.Exit(1)
    for path, option in ((out, "--out"), (plot, "--plot")):
        if path is not None and not path.parent.is_dir():
            console.print(f"[red]error:[/red] {option}: the folder {str(path.parent)!r} does not exist.")
            raise typer.Exit(1)
    if plot is not None and not plot.suffix:
        plot = plot.with_name(plot.name + ".png")  # what matplotlib would write; say so
    if plot is not None:
        from matplotlib.backend_bases import FigureCanvasBase

        formats = FigureCanvasBase.get_supported_filetypes()
        if plot.suffix[1:].lower() not in formats:
            console.print(f"[red]error:[/red] --plot: cannot write a {plot.suffix!r} figure; use one of "
                          f"{', '.join('.' + f for f in sorted(formats))}.")
            raise typer.Exit(1)
    matches = _load(file, skip_invalid, at_least=1)
    when = None if at is None else _parse_at(at, matches.time_is_date)
    start = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)  # podium's ConvergenceWarning among them
            result = model.smooth(matches, tolerance=tolerance, max_iterations=max_iterations,
                                  progress=sys.stdout.isatty())
    except (MatchError, ValueError) as error:
        console.print(f"[red]error:[/red] {error}")
        raise typer.Exit(1) from None
    elapsed = time.perf_counter() - start
    for warning in caught:
        notes.print(f"[yellow]warning:[/yellow] {warning.message}")
    rows = result.leaderboard(at=when, k=k, top=top)
    shown = when if when is not None else result.end
    place = f"{'match ' if np.isnan(matches.time).all() else ''}{format_time(shown, result.time_is_date)}"
    table = Table(title=f"{model!r}: smoothed skill at {place}{' (the end)' if when is None else ''}")
    table.add_column("#", justify="right")
    table.add_column("player")
    for column in ("mu", "sigma", f"mu - {k:g} sigma", "games"):
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(str(row.rank), escape(row.player), f"{row.mu:.3f}", f"{row.sigma:.3f}", f"{row.score:.3f}",
                      str(row.games))
    console.print(table)
    if not rows:
        notes.print(f"[yellow]warning:[/yellow] no player had played by --at {at}.")
    n = result.matches
    state = "converged" if result.converged else (
        "filtering pass only" if max_iterations == 0 else f"not converged, last step {result.step:.2g}")
    evidence = f"log evidence {result.log_evidence:,.2f} ({result.log_evidence / n:.4f} per match)"
    sweeps = f"{result.iterations} iteration{'' if result.iterations == 1 else 's'}"
    console.print(f"{n:,} matches, {len(result.players):,} players, {sweeps} ({state}); {evidence}; {elapsed:.2f} s")
    if out is not None:
        try:
            result.write_csv(out)
        except OSError as error:
            console.print(f"[red]error:[/red] could not write the trajectories to {out}: {error}")
            raise typer.Exit(1) from None
        console.print(f"trajectories written to {out}")
    if plot is not None:
        from . import plot as plots

        try:
            plots.trajectories(result, [row.player for row in rows[:5]], k=k, x="time", path=plot)
        except (ValueError, OSError) as error:  # e.g. an image format matplotlib does not write
            notes.print(f"[red]error:[/red] could not write the figure to {plot}: {error}")
            raise typer.Exit(1) from None
        console.print(f"figure written to {plot}")


# -- the league server ----------------------------------------------------------------------------------------
DB_HELP = "Database: a SQLite file (default podium.db here) or postgresql://user@host/db."
token_app = typer.Typer(no_args_is_help=True, help="Bearer tokens for the league server.")
league_app = typer.Typer(no_args_is_help=True, help="Leagues on the league server's database.")
app.add_typer(token_app, name="token")
app.add_typer(league_app, name="league")


def _engine(db: str | None) -> Any:
    try:
        from .server.db import make_engine, migrate
        from .server.settings import database_url
    except ImportError as error:  # pragma: no cover - the server extra is missing
        console.print(f"[red]error:[/red] the league server needs its dependencies: pip install 'podium[server]' ({error})")
        raise typer.Exit(1) from None
    try:
        engine = make_engine(database_url(db))
        migrate(engine)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--db") from None
    except Exception as error:  # a database that does not answer: say which, without a traceback
        console.print(f"[red]error:[/red] cannot open the database {db or 'podium.db'!r}: {str(error).splitlines()[0]}")
        raise typer.Exit(1) from None
    return engine


@app.command()
def serve(
    db: Annotated[str | None, typer.Option("--db", help=DB_HELP)] = None,
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    workers: Annotated[int, typer.Option(help="Server processes sharing the database.")] = 1,
    # Unset options take the PODIUM_* environment variable, else Settings' default (given in each help); the
    # settings without an option (PODIUM_PROVISIONAL_GAMES, PODIUM_INTEGRITY_MAX_MATCHES) come the same way.
    max_body: Annotated[int | None, typer.Option("--max-body", help="Largest request body, in bytes (256 KiB).")] = None,
    token_rate: Annotated[float | None, typer.Option("--token-rate", help=(
        "Requests per second, sustained, per token (bearer or session); 0 = no limit (20)."))] = None,
    token_burst: Annotated[int | None, typer.Option("--token-burst", help=(
        "Requests a token may make at once (200)."))] = None,
    address_rate: Annotated[float | None, typer.Option("--address-rate", help=(
        "Requests per second, sustained, per client address without a token; 0 = no limit (10)."))] = None,
    address_burst: Annotated[int | None, typer.Option("--address-burst", help=(
        "Such requests at once from one address (100)."))] = None,
    trust_forwarded_host: Annotated[bool | None, typer.Option("--trust-forwarded-host", help=(
        "Check form posts against X-Forwarded-Host (only behind a proxy that sets it)."))] = None,
    replay_chunk: Annotated[int | None, typer.Option("--replay-chunk", help=(
        "Matches per chunk when a void or correction replays the log (2,000)."))] = None,
) -> None:
    """Run the league server (JSON API under /api/v1, pages at /).

    Each server process keeps its own rate-limit buckets: with --workers N a client can get up to N times
    the limits.
    """
    import dataclasses
    import os

    import uvicorn

    from .server import create_app
    from .server.app import ENVIRONMENT, settings_from_env
    from .server.settings import SWITCH_INTERVAL

    given: dict[str, Any] = {
        "db": db, "max_body_bytes": max_body, "token_rate": token_rate, "token_burst": token_burst,
        "address_rate": address_rate, "address_burst": address_burst, "trust_forwarded_host": trust_forwarded_host,
        "replay_chunk": replay_chunk}
    try:  # the environment's settings (app_from_env's very ones), with the options given over them
        settings = dataclasses.replace(settings_from_env(), **{k: v for k, v in given.items() if v is not None})
    except ValueError as error:
        raise typer.BadParameter(str(error)) from None
    engine = _engine(settings.db)  # migrate once, before any worker starts
    engine.dispose()
    sys.setswitchinterval(SWITCH_INTERVAL)
    notes.print(f"podium league server on http://{host}:{port}/ ({settings.url.split('://')[0]}, {workers} worker(s))")
    if workers > 1:  # the workers build their settings from the environment (app_from_env): all of them
        for variable, name in ENVIRONMENT.items():
            value = getattr(settings, name)
            os.environ[variable] = value if isinstance(value, str) else str(int(value) if isinstance(value, bool) else value)
        uvicorn.run("podium.server.app:app_from_env", factory=True, host=host, port=port, workers=workers,
                    log_level="warning")
    else:
        uvicorn.run(create_app(settings, migrate_db=False), host=host, port=port, log_level="warning")


@token_app.command("create")
def token_create(
    role: Annotated[str, typer.Option(help="admin, moderator or reporter.")],
    db: Annotated[str | None, typer.Option("--db", help=DB_HELP)] = None,
    label: Annotated[str, typer.Option(help="Who or what the token is for.")] = "",
) -> None:
    """Create a token and print it (only its hash is stored: keep it)."""
    from .server.store import ROLES, create_token

    if role not in ROLES:
        raise typer.BadParameter(f"must be one of {', '.join(ROLES)}; got {role!r}", param_hint="--role")
    engine = _engine(db)
    try:
        print(create_token(engine, role, label))
    finally:
        engine.dispose()


@token_app.command("list")
def token_list(db: Annotated[str | None, typer.Option("--db", help=DB_HELP)] = None) -> None:
    """List the tokens: id, role, label, created, revoked (the tokens themselves are not stored)."""
    from .server.db import read_transaction
    from .server.store import list_tokens

    engine = _engine(db)
    try:
        with read_transaction(engine) as conn:
            rows = list_tokens(conn)
    finally:
        engine.dispose()
    table = Table("id", "role", "label", "created", "revoked")
    for row in rows:
        table.add_row(str(row["id"]), row["role"], row["label"], row["created"] or "", "yes" if row["revoked"] else "")
    console.print(table)


@token_app.command("revoke")
def token_revoke(
    token_id: Annotated[int, typer.Argument(metavar="ID", help="The token's id (podium token list).")],
    db: Annotated[str | None, typer.Option("--db", help=DB_HELP)] = None,
) -> None:
    """Revoke a token: every request with it is refused from now on."""
    from .server.store import revoke_token

    engine = _engine(db)
    try:
        found = revoke_token(engine, token_id)
    finally:
        engine.dispose()
    if not found:
        notes.print(f"[red]error:[/red] no token with id {token_id} (see podium token list).")
        raise typer.Exit(1)
    notes.print(f"token {token_id} revoked")


@league_app.command("create")
def league_create(
    name: Annotated[str, typer.Argument(help="The league's name (a-z, 0-9, '-', '_').")],
    model: Annotated[str, typer.Option("--model", "-m", help="NAME or NAME:param=value,...")] = "trueskill",
    moderated: Annotated[bool, typer.Option("--moderated", help="Hold reported matches until a moderator approves them.")] = False,
    db: Annotated[str | None, typer.Option("--db", help=DB_HELP)] = None,
) -> None:
    """Create a league (as the database's owner: no token needed)."""
    from .server.store import StoreError, create_league

    model_name, _, settings = model.partition(":")
    try:
        built = make_model(model_name.strip(), [item for item in settings.split(",") if item.strip()])
    except typer.BadParameter as error:
        raise typer.BadParameter(f"{model!r}: {error.message}", param_hint="--model") from None
    key = model_name.strip().lower().replace("_", "-")
    engine = _engine(db)
    try:
        league = create_league(engine, name, key, built.get_params(), moderated)
    except StoreError as error:
        console.print(f"[red]error:[/red] {error.message}")
        raise typer.Exit(1) from None
    finally:
        engine.dispose()
    console.print(f"league {league.name!r} created: {league.model!r}{' (moderated)' if moderated else ''}")


@league_app.command("list")
def league_list(db: Annotated[str | None, typer.Option("--db", help=DB_HELP)] = None) -> None:
    """List the leagues with their players and matches."""
    from .server.db import read_transaction
    from .server.store import list_leagues

    engine = _engine(db)
    try:
        with read_transaction(engine) as conn:
            rows = list_leagues(conn)
    finally:
        engine.dispose()
    table = Table()
    for column in ("league", "model", "moderated", "players", "matches"):
        table.add_column(column)
    for row in rows:
        table.add_row(row["name"], row["model"], "yes" if row["moderated"] else "", str(row["players"]), str(row["matches"]))
    console.print(table)


@league_app.command("rebuild")
def league_rebuild(
    name: Annotated[str, typer.Argument(help="The league.")],
    db: Annotated[str | None, typer.Option("--db", help=DB_HELP)] = None,
    check: Annotated[bool, typer.Option("--check", help="Only compare; write nothing.")] = False,
    tolerance: Annotated[float, typer.Option(help="Largest difference (absolute, relative above 1) that counts as equal.")] = 1e-9,
) -> None:
    """Recompute every rating from the league's match log; exit 1 if a stored value differed."""
    from .server.store import StoreError, rebuild

    engine = _engine(db)
    start = time.perf_counter()
    try:
        n, diffs = rebuild(engine, name, write=not check, tolerance=tolerance)
    except StoreError as error:
        console.print(f"[red]error:[/red] {error.message}")
        raise typer.Exit(1) from None
    finally:
        engine.dispose()
    elapsed = time.perf_counter() - start
    if not diffs:
        console.print(f"{name}: replayed {n:,} matches in {elapsed:.2f} s; every stored rating agrees.")
        return
    table = Table(title=f"{name}: {len(diffs)} stored value(s) differ from the replay of {n:,} matches")
    for column in ("table", "player", "match #", "column", "stored", "replayed"):
        table.add_column(column)
    for d in diffs[:30]:
        table.add_row(d.table, d.player, "" if d.seq is None else str(d.seq + 1), d.column, repr(d.stored), repr(d.replayed))
    console.print(table)
    console.print("(nothing written: --check)" if check else "The stored ratings were replaced by the replay.")
    raise typer.Exit(1)


def _backup_progress() -> Any:
    """A rich progress bar for league export and import, with the callback podium.server.backup calls."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                   console=notes, transient=True)
    tasks: dict[str, Any] = {}
    names = {"write": "writing matches", "read": "reading (bytes)", "rate": "rating the log"}

    def update(stage: str, done: int, total: int) -> None:
        if stage not in tasks:
            tasks[stage] = bar.add_task(names.get(stage, stage), total=total)
        bar.update(tasks[stage], completed=done, total=total)

    return bar, update


@league_app.command("export")
def league_export(
    name: Annotated[str, typer.Argument(help="The league.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="The file to write: .jsonl, or .jsonl.gz to compress.",
                                      dir_okay=False)],
    db: Annotated[str | None, typer.Option("--db", help=DB_HELP)] = None,
) -> None:
    """Write a league (settings, every match with its status, in log order) to a JSONL file.

    `podium rate FILE` rates exactly the league's approved log; `podium league import FILE` re-creates the
    league.  Tokens are not exported.
    """
    from .server.backup import export_league
    from .server.store import StoreError

    if not out.parent.is_dir():
        console.print(f"[red]error:[/red] --out: the folder {str(out.parent)!r} does not exist.")
        raise typer.Exit(1)
    engine = _engine(db)
    start = time.perf_counter()
    bar, update = _backup_progress()
    try:
        with bar:
            counts = export_league(engine, name, out, progress=update)
    except StoreError as error:
        console.print(f"[red]error:[/red] {error.message}")
        raise typer.Exit(1) from None
    except OSError as error:
        console.print(f"[red]error:[/red] could not write {out}: {error}")
        raise typer.Exit(1) from None
    finally:
        engine.dispose()
    shown = ", ".join(f"{n:,} {status}" for status, n in counts.items() if n)
    console.print(f"league {name!r} exported to {out}: {shown or 'no matches'} ({time.perf_counter() - start:.2f} s)")


@league_app.command("import")
def league_import(
    file: Annotated[Path, typer.Argument(help="A league export (.jsonl or .jsonl.gz).", exists=True, dir_okay=False)],
    db: Annotated[str | None, typer.Option("--db", help=DB_HELP)] = None,
    name: Annotated[str | None, typer.Option("--name", help="The league's name here (default: the exported one).")] = None,
) -> None:
    """Create a league from an export: its matches with their statuses, its ratings replayed (one transaction)."""
    from .server.backup import BackupError, import_league

    engine = _engine(db)
    start = time.perf_counter()
    bar, update = _backup_progress()
    try:
        with bar:
            imported, counts = import_league(engine, file, name=name, progress=update)
    except BackupError as error:
        console.print(f"[red]error:[/red] {error}")
        console.print("(nothing was imported)")
        raise typer.Exit(1) from None
    finally:
        engine.dispose()
    shown = ", ".join(f"{n:,} {status}" for status, n in counts.items() if n)
    console.print(f"league {imported!r} imported from {file}: {shown or 'no matches'}; ratings replayed "
                  f"({time.perf_counter() - start:.2f} s)")


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
