"""``podium serve``, ``podium token`` and ``podium league``: the league server, its bearer tokens and its leagues
(create, set, list, rebuild, smooth, export, import).  The server's modules are imported when a command runs, so the
other commands work without the server's dependencies."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from .common import app, console, make_model, notes

DB_HELP = "Database: a SQLite file (default podium.db here) or postgresql://user@host/db."
token_app = typer.Typer(no_args_is_help=True, help="Bearer tokens for the league server.")
league_app = typer.Typer(no_args_is_help=True, help="Leagues on the league server's database.")
app.add_typer(token_app, name="token")
app.add_typer(league_app, name="league")


def _engine(db: str | None) -> Any:
    try:
        from ..server.db import make_engine, migrate
        from ..server.settings import database_url
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


@contextmanager
def _database(db: str | None) -> Iterator[Any]:
    """The database's engine for one command, disposed after; a :class:`podium.server.store.StoreError` the command
    meets (no such league, a name taken) is its error message, exit 1."""
    engine = _engine(db)
    from ..server.store import StoreError

    try:
        yield engine
    except StoreError as error:
        console.print(f"[red]error:[/red] {error.message}")
        raise typer.Exit(1) from None
    finally:
        engine.dispose()


def _read(db: str | None, query: Callable[[Any], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """``query(connection)`` in one read transaction."""
    from ..server.db import read_transaction

    with _database(db) as engine, read_transaction(engine) as conn:
        return query(conn)


@app.command()
def serve(
    db: Annotated[str | None, typer.Option("--db", help=DB_HELP)] = None,
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    workers: Annotated[int, typer.Option(help="Server processes sharing the database.")] = 1,
    # Unset options take the PODIUM_* environment variable, else Settings' default (given in each help); the
    # settings without an option (PODIUM_PROVISIONAL_GAMES, PODIUM_INTEGRITY_MAX_MATCHES) come the same way.
    max_body: Annotated[int | None, typer.Option("--max-body", help=(
        "Largest request body, in bytes (4 MiB: a report of 10,000 players with ids of up to 64 characters; "
        "about 420 bytes a player of --max-players)."))] = None,
    max_players: Annotated[int | None, typer.Option("--max-players", help=(
        "Most players in one reported match (10,000); raise --max-body with it."))] = None,
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
    smoothing_interval: Annotated[float | None, typer.Option("--smoothing-interval", help=(
        "Seconds between two smoothings of the leagues with the smoothing option whose log changed "
        "(86,400: nightly); 0 = none in the background (podium league smooth from cron)."))] = None,
) -> None:
    """Run the league server (JSON API under /api/v1, pages at /).

    Each server process keeps its own rate-limit buckets: with --workers N a client can get up to N times
    the limits.
    """
    import dataclasses
    import os

    import uvicorn

    from ..server import create_app
    from ..server.settings import ENVIRONMENT, settings_from_env
    from ..server.settings import SWITCH_INTERVAL

    given: dict[str, Any] = {
        "db": db, "max_body_bytes": max_body, "max_players": max_players, "token_rate": token_rate, "token_burst": token_burst,
        "address_rate": address_rate, "address_burst": address_burst, "trust_forwarded_host": trust_forwarded_host,
        "replay_chunk": replay_chunk, "smoothing_interval": smoothing_interval}
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
    from ..server.store import ROLES, create_token

    if role not in ROLES:
        raise typer.BadParameter(f"must be one of {', '.join(ROLES)}; got {role!r}", param_hint="--role")
    with _database(db) as engine:
        print(create_token(engine, role, label))


@token_app.command("list")
def token_list(db: Annotated[str | None, typer.Option("--db", help=DB_HELP)] = None) -> None:
    """List the tokens: id, role, label, created, revoked (the tokens themselves are not stored)."""
    from ..server.store import list_tokens

    rows = _read(db, list_tokens)
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
    from ..server.store import revoke_token

    with _database(db) as engine:
        found = revoke_token(engine, token_id)
    if not found:
        notes.print(f"[red]error:[/red] no token with id {token_id} (see podium token list).")
        raise typer.Exit(1)
    notes.print(f"token {token_id} revoked")


@league_app.command("create")
def league_create(
    name: Annotated[str, typer.Argument(help="The league's name (a-z, 0-9, '-', '_').")],
    model: Annotated[str, typer.Option("--model", "-m", help="NAME or NAME:param=value,...")] = "trueskill",
    moderated: Annotated[bool, typer.Option("--moderated", help="Hold reported matches until a moderator approves them.")] = False,
    smoothing: Annotated[bool, typer.Option("--smoothing", help=(
        "Keep nightly smoothed ratings (TrueSkill Through Time over the whole log) beside the live ones: "
        "TrueSkill leagues."))] = False,
    db: Annotated[str | None, typer.Option("--db", help=DB_HELP)] = None,
) -> None:
    """Create a league (as the database's owner: no token needed)."""
    from ..server.store import create_league

    model_name, _, settings = model.partition(":")
    try:
        built = make_model(model_name.strip(), [item for item in settings.split(",") if item.strip()])
    except typer.BadParameter as error:
        raise typer.BadParameter(f"{model!r}: {error.message}", param_hint="--model") from None
    key = model_name.strip().lower().replace("_", "-")
    with _database(db) as engine:
        league = create_league(engine, name, key, built.get_params(), moderated, smoothing)
    shown = ", ".join(word for word, on in (("moderated", moderated), ("smoothing", smoothing)) if on)
    console.print(f"league {league.name!r} created: {league.model!r}{f' ({shown})' if shown else ''}")


@league_app.command("set")
def league_set(
    name: Annotated[str, typer.Argument(help="The league.")],
    smoothing: Annotated[bool | None, typer.Option("--smoothing/--no-smoothing", help=(
        "Keep nightly smoothed ratings beside the live ones (TrueSkill leagues), or stop (their smoothed "
        "ratings are deleted)."))] = None,
    db: Annotated[str | None, typer.Option("--db", help=DB_HELP)] = None,
) -> None:
    """Change a league's options (as the database's owner: no token needed)."""
    from ..server.smoothing import set_smoothing

    if smoothing is None:
        raise typer.BadParameter("give the option to change: --smoothing or --no-smoothing", param_hint="--smoothing")
    with _database(db) as engine:
        league = set_smoothing(engine, name, smoothing)
    console.print(f"league {league.name!r}: smoothing {'on' if league.smoothing else 'off'}")


@league_app.command("smooth")
def league_smooth(
    name: Annotated[str, typer.Argument(help="The league (its smoothing option on).")],
    db: Annotated[str | None, typer.Option("--db", help=DB_HELP)] = None,
    force: Annotated[bool, typer.Option("--force", help="Recompute even if the log has not changed.")] = False,
) -> None:
    """Smooth a league's approved log now (TrueSkill Through Time) and store its smoothed ratings.

    What the server does every smoothing interval, for cron (serve --smoothing-interval 0); nothing is done if
    the log has not changed since the last smoothing.
    """
    from ..server.smoothing import smooth_league

    bar, update = _backup_progress()
    with _database(db) as engine:
        with bar:
            run = smooth_league(engine, name, force=force, progress=update)
    if run.status == "smoothed":
        console.print(f"league {name!r} smoothed: {run.matches:,} matches, {run.players:,} players "
                      f"({run.seconds:.2f} s)")
    elif run.status == "unchanged":
        console.print(f"league {name!r}: the smoothed ratings are of the current log ({run.matches:,} matches); "
                      "nothing to do (--force recomputes)")
    elif run.status == "empty":
        console.print(f"league {name!r}: no approved matches to smooth")
    else:
        console.print(f"[red]error:[/red] league {name!r}: the smoothing option was turned off meanwhile; "
                      "nothing stored")
        raise typer.Exit(1)


@league_app.command("list")
def league_list(db: Annotated[str | None, typer.Option("--db", help=DB_HELP)] = None) -> None:
    """List the leagues with their players and matches."""
    from ..server.store import list_leagues

    rows = _read(db, list_leagues)
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
    from ..server.store import list_leagues, rebuild

    start = time.perf_counter()
    bar, update = _backup_progress()
    with _database(db) as engine:
        with engine.connect() as conn:  # the bar's total: the approved log (an unknown league fails in rebuild)
            total = next((row["matches"] for row in list_leagues(conn) if row["name"] == name), 0)
        done = 0

        def replayed(size: int) -> None:
            nonlocal done
            done += size
            update("rebuild", done, total)

        with bar:
            n, diffs = rebuild(engine, name, write=not check, tolerance=tolerance, progress=replayed)
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
    """A rich progress bar for league export, import, rebuild and smooth, with the callback ``update(stage, done,
    total)`` (a total of None: a bar that pulses, for a stage whose length is not known)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                   console=notes, transient=True)
    tasks: dict[str, Any] = {}
    names = {"write": "writing matches", "read": "reading (bytes)", "rate": "rating the log",
             "rebuild": "replaying the log", "log": "reading the log", "smooth": "smoothing"}

    def update(stage: str, done: int, total: int | None) -> None:
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
    from ..server.backup import export_league

    if not out.parent.is_dir():
        console.print(f"[red]error:[/red] --out: the folder {str(out.parent)!r} does not exist.")
        raise typer.Exit(1)
    start = time.perf_counter()
    bar, update = _backup_progress()
    with _database(db) as engine:
        try:
            with bar:
                counts = export_league(engine, name, out, progress=update)
        except OSError as error:
            console.print(f"[red]error:[/red] could not write {out}: {error}")
            raise typer.Exit(1) from None
    shown = ", ".join(f"{n:,} {status}" for status, n in counts.items() if n)
    console.print(f"league {name!r} exported to {out}: {shown or 'no matches'} ({time.perf_counter() - start:.2f} s)")


@league_app.command("import")
def league_import(
    file: Annotated[Path, typer.Argument(help="A league export (.jsonl or .jsonl.gz).", exists=True, dir_okay=False)],
    db: Annotated[str | None, typer.Option("--db", help=DB_HELP)] = None,
    name: Annotated[str | None, typer.Option("--name", help="The league's name here (default: the exported one).")] = None,
) -> None:
    """Create a league from an export: its matches with their statuses, its ratings replayed (one transaction)."""
    from ..server.backup import BackupError, import_league

    start = time.perf_counter()
    bar, update = _backup_progress()
    with _database(db) as engine:
        try:
            with bar:
                imported, counts = import_league(engine, file, name=name, progress=update)
        except BackupError as error:
            console.print(f"[red]error:[/red] {error}")
            console.print("(nothing was imported)")
            raise typer.Exit(1) from None
    shown = ", ".join(f"{n:,} {status}" for status, n in counts.items() if n)
    console.print(f"league {imported!r} imported from {file}: {shown or 'no matches'}; ratings replayed "
                  f"({time.perf_counter() - start:.2f} s)")

