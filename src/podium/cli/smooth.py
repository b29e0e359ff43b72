"""``podium smooth``: a history smoothed by TrueSkill Through Time, its leaderboard at a time, the
trajectories as CSV and a figure of the leaders'."""

from __future__ import annotations

import math
import sys
import time
import warnings
from pathlib import Path
from typing import Annotated

import numpy as np
import typer
from rich.markup import escape
from rich.table import Table

from ..data.match import MatchError, format_time, parse_time
from .common import _load, app, console, notes


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
    from ..models import TrueSkillThroughTime

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
        from ..evaluation import plot as plots

        try:
            plots.trajectories(result, [row.player for row in rows[:5]], k=k, x="time", path=plot)
        except (ValueError, OSError) as error:  # e.g. an image format matplotlib does not write
            notes.print(f"[red]error:[/red] could not write the figure to {plot}: {error}")
            raise typer.Exit(1) from None
        console.print(f"figure written to {plot}")

