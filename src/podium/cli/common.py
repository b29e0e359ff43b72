"""What the ``podium`` commands share: the Typer ``app`` they register on, the consoles, building a model from
its command-line name and settings, reading a history with its warnings, and the leaderboard table."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..data.io import read_matches
from ..data.match import MatchError
from ..data.matches import Matches
from ..engine.league import League
from ..models import MODELS, TrueSkillThroughTime

#: Whole-history smoothers by command-line name: models that ``podium evaluate`` and ``podium fit`` take beside the
#: filters of :data:`podium.models.MODELS` (a smoother rates no match as it comes, so ``rate`` and leagues do not).
SMOOTHERS: dict[str, type[TrueSkillThroughTime]] = {"trueskill-through-time": TrueSkillThroughTime}

__all__ = ["SMOOTHERS", "app", "console", "notes", "make_model", "parse_model_spec", "reading"]

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


def make_model(name: str, settings: list[str] | None = None, *, smoothers: bool = False) -> Any:
    """Build a model from its command-line name and ``param=value`` settings: a filter of :data:`MODELS`, or with
    ``smoothers`` also one of :data:`SMOOTHERS`."""
    key = name.lower().replace("_", "-")
    known: dict[str, Any] = {**MODELS, **SMOOTHERS} if smoothers else dict(MODELS)
    if key not in known:
        raise typer.BadParameter(f"unknown model {name!r}; choose from {', '.join(known)}", param_hint="--model")
    params: dict[str, Any] = {}
    for item in settings or []:
        if "=" not in item:
            raise typer.BadParameter(f"expected param=value, got {item!r}", param_hint="--set")
        param, value = item.split("=", 1)
        params[param.strip()] = _parse_value(value.strip())
    try:
        return known[key](**params)
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


@contextmanager
def reading(skip_invalid: bool) -> Iterator[None]:
    """Around reading (and rating) a history: its warnings printed as notes; a malformed history or a bad value an
    error message (with a hint at ``--skip-invalid``) and exit status 1."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            yield
        for warning in caught:
            notes.print(f"[yellow]warning:[/yellow] {warning.message}")
    except (MatchError, ValueError) as error:
        console.print(f"[red]error:[/red] {error}")
        if isinstance(error, MatchError) and not skip_invalid:
            console.print("(--skip-invalid leaves malformed records out and uses the rest)")
        raise typer.Exit(1) from None


def _load(file: Path, skip_invalid: bool, at_least: int = 0) -> Matches:
    """Read a history, showing progress and warnings; exit with a message on bad input."""
    with reading(skip_invalid):
        matches = read_matches(file, errors="skip" if skip_invalid else "raise", progress=True)
    if len(matches) < at_least:
        console.print(f"[red]error:[/red] {file} holds {len(matches)} match(es); at least {at_least} are needed.")
        raise typer.Exit(1)
    return matches


def parse_model_spec(spec: str, *, smoothers: bool = False) -> tuple[str, Any]:
    """``name`` or ``name:param=value,param=value`` -> (the spec as a label, the model; a filter, or with
    ``smoothers`` also a whole-history smoother)."""
    name, _, settings = spec.partition(":")
    items = [item for item in settings.split(",") if item.strip()] if settings else []
    try:
        return spec, make_model(name.strip(), items, smoothers=smoothers)
    except typer.BadParameter as error:
        raise typer.BadParameter(f"{spec!r}: {error.message}", param_hint="--model") from None

