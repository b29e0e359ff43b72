"""``podium check`` and ``podium audit``: what a history's ratings can compare (components, thin links,
provisional players), and results too improbable to be honest (win trading, farming, sandbagging)."""

from __future__ import annotations

import json
import time
import warnings
from pathlib import Path
from typing import Annotated

import numpy as np
import typer
from rich.markup import escape
from rich.table import Table

from ..data.match import MatchError
from ..data.matches import Matches
from .common import _load, app, console, notes, parse_model_spec


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
    from ..engine.components import components

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
    from ..integrity.audit import audit

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

