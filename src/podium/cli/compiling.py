"""``podium compile``: compile podium's kernels ahead (for a container image or a CI cache), with a progress bar."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Annotated

import typer

from .common import app, console


@app.command("compile")
def compile_command(
    only: Annotated[list[str] | None, typer.Option(
        "--only", help="Compile only this work (repeatable): reading, a model's name (e.g. trueskill), smoothing, "
                       "evaluation or audit.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="Print nothing (no progress bar, no summary).")] = False,
) -> None:
    """Compile podium's kernels now, so that no history's first replay waits for numba.

    A single match never waits (it runs interpreted until its kernels are compiled); a history's first replay
    compiles the kernels it needs, or loads them from numba's cache.  Run this in a container image's build or
    a CI cache step: numba caches next to podium's source, or in NUMBA_CACHE_DIR when that is set (needed when
    the installation is read-only).  It takes minutes on one core.
    """
    from .. import jit
    from . import warmup

    if jit.mode() == "interpreted":
        raise typer.BadParameter("kernels are set to run interpreted (PODIUM_JIT=interpreted or NUMBA_DISABLE_JIT=1): "
                                 "there is nothing to compile")
    every = warmup.workloads()
    unknown = [key for key in only or [] if key not in every]
    if unknown:
        raise typer.BadParameter(f"must each be one of {', '.join(every)}; got {', '.join(map(repr, unknown))}",
                                 param_hint="--only")
    work = [every[key] for key in only] if only else list(every.values())
    before = jit.mode()
    jit.set_mode("compiled")  # (the work's small calls too: compiling them is the point)
    try:
        _run(work, quiet)
    finally:
        jit.set_mode(before)


def _run(work: list[tuple[str, Callable[[], None]]], quiet: bool) -> None:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from .. import jit

    began = time.perf_counter()
    if quiet:
        for _, run in work:
            run()
        return
    columns = (TextColumn("compiling {task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("", total=len(work))
        for label, run in work:
            bar.update(task, description=label)
            run()
            bar.advance(task)
    compiled = sum(k.compiled for k in jit.kernels())
    where = os.environ.get("NUMBA_CACHE_DIR") or "__pycache__ beside podium's source"
    console.print(f"{compiled} entry kernels (with the kernels they call) compiled or loaded from the cache in "
                  f"{time.perf_counter() - began:.0f} s; cached in {where}.")
