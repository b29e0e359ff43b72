"""How long the league server takes to store and rate a 10,000-player round with ties, per model.

What is measured
----------------
For each model the server offers that rates free-for-alls (``podium.models.MODELS``; Elo rates two teams and
is skipped), on SQLite and, if it answers, PostgreSQL (``PODIUM_TEST_PG``, default
``postgresql://postgres@127.0.0.1:5432/test``, in a schema of its own dropped afterwards):

1. A fresh league on the real app (``create_app``, rate limits off), driven in process through
   ``fastapi.testclient.TestClient``: the whole request is timed, JSON body in, JSON answer (every player's
   rating before and after) out.
2. ``new``: a round of ``--players`` players none of whom the league knows (30-character handles), finishing
   in tie groups (1, 1, 2, 4, ... 64, 64, ... players sharing a rank, the last group half the field: the
   players who solved nothing).  ``known``: a second round of the same players in another order, so their
   stored states are read, put into the League and updated.
3. The time of each request is split by wrapping, for the run only: the model's own rating of the match (its
   compiled ``_replay``, what a model author owns); the library's ``League`` bookkeeping around it
   (``set_states``, ``record_slots`` less the model, ``states``: per-player Python in ``podium.engine.league``); and the
   rest, which is the server's own (JSON, validation, the group commit, the reads and writes, the commit, the
   answer).

Printed: per model and database, the medians over ``--repeat`` runs of each part (seconds), and whether the
server's own part is within ``--target`` (1 s).

Run: ``python benchmarks/massive_server.py`` (a few minutes on two cores); ``--models plackett-luce`` for one.
"""

from __future__ import annotations

import os as _os

_os.environ.setdefault("PODIUM_JIT", "compiled")  # the compiled speed: warm-up calls compile, timed ones do not

import argparse
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote

PG_URL = os.environ.get("PODIUM_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")


def tie_ranks(n: int) -> list[int]:
    """Ranks of ``n`` players in tie groups of 1, 1, 2, 4, ... 64, 64, ... players, the last half the field."""
    sizes: list[int] = []
    left, size = n - n // 2, 1
    while left > 0:
        sizes.append(min(size, left))
        left -= sizes[-1]
        size = min(size * 2, 64) if len(sizes) > 1 else 1
    sizes.append(n - sum(sizes))
    ranks: list[int] = []
    for size in sizes:
        ranks += [len(ranks)] * size  # a tie group shares the rank of its first place (competition ranking)
    return ranks


def handle(i: int) -> str:
    """A 30-character player id."""
    return f"contestant-{i:06d}-handle-xyzwv"


def round_record(n: int, match_id: str, shift: int) -> dict[str, Any]:
    """A round of ``n`` single-player teams with tie groups; ``shift`` rotates who finishes where."""
    players = [handle((i + shift) % n) for i in range(n)]
    return {"id": match_id, "teams": [[p] for p in players], "ranks": tie_ranks(n)}


class Timer:
    """Seconds spent in the wrapped functions, by bucket, while wrapped."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}

    @contextmanager
    def wrap(self, owner: Any, name: str, bucket: str, minus: str | None = None) -> Iterator[None]:
        """Time ``owner.name`` into ``bucket`` (less what ``minus`` collected meanwhile) while in the block."""
        original = getattr(owner, name)
        present = name in vars(owner)

        def timed(*args: Any, **kwargs: Any) -> Any:
            inner = self.spent.get(minus, 0.0) if minus else 0.0
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                took = time.perf_counter() - start
                if minus:
                    took -= self.spent.get(minus, 0.0) - inner
                self.spent[bucket] = self.spent.get(bucket, 0.0) + took

        setattr(owner, name, timed)
        try:
            yield
        finally:
            if present:
                setattr(owner, name, original)
            else:
                delattr(owner, name)


@contextmanager
def database(kind: str) -> Iterator[str | None]:
    """A fresh database URL of ``kind``, or None if PostgreSQL does not answer."""
    if kind == "sqlite":
        with tempfile.TemporaryDirectory() as folder:
            yield os.path.join(folder, "massive.db")
        return
    try:
        import psycopg

        with psycopg.connect(PG_URL, autocommit=True, connect_timeout=3) as conn:
            schema = f"podium_bench_{uuid.uuid4().hex[:12]}"
            conn.execute(f'CREATE SCHEMA "{schema}"')
    except Exception as error:  # no server here
        print(f"PostgreSQL at {PG_URL} did not answer ({type(error).__name__}); skipped")
        yield None
        return
    sep = "&" if "?" in PG_URL else "?"
    try:
        yield f"{PG_URL}{sep}options={quote(f'-csearch_path={schema}')}"
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def run(kind: str, url: str, models: list[str], n: int, repeat: int) -> list[dict[str, Any]]:
    import json

    from fastapi.testclient import TestClient

    import podium
    from podium.models import MODELS
    from podium.server import Settings, create_app
    from podium.server.store import create_token

    app = create_app(Settings(db=url, token_rate=0, address_rate=0))
    out = []
    with TestClient(app) as client:
        admin = {"Authorization": f"Bearer {create_token(app.state.engine, 'admin')}"}
        reporter = {"Authorization": f"Bearer {create_token(app.state.engine, 'reporter')}"}
        bodies = {stage: json.dumps(round_record(n, stage, shift)).encode()
                  for stage, shift in (("new", 0), ("known", n // 3))}
        for name in models:
            cls = MODELS[name]
            samples: dict[str, dict[str, list[float]]] = {stage: {} for stage in bodies}
            failed = None
            for i in range(repeat):
                league = f"{name}-{i}"
                response = client.post("/api/v1/leagues", json={"name": league, "model": name}, headers=admin)
                assert response.status_code == 201, response.text
                for stage, body in bodies.items():
                    timer = Timer()
                    with timer.wrap(cls, "_replay", "rating"), \
                            timer.wrap(podium.League, "set_states", "league"), \
                            timer.wrap(podium.League, "states", "league"), \
                            timer.wrap(podium.League, "record_slots", "league", minus="rating"):
                        start = time.perf_counter()
                        try:
                            response = client.post(f"/api/v1/leagues/{league}/matches", content=body,
                                                   headers=reporter | {"Content-Type": "application/json"})
                        except Exception as error:  # the TestClient re-raises the server's exceptions
                            failed = f"{type(error).__name__}: {error}"
                            break
                        total = time.perf_counter() - start
                    if response.status_code != 201:
                        failed = f"HTTP {response.status_code}: {response.text[:200]}"
                        break
                    assert len(response.json()["ratings"]) == n
                    parts = {"total": total, "rating": timer.spent.get("rating", 0.0),
                             "league": timer.spent.get("league", 0.0)}
                    parts["server"] = total - parts["rating"] - parts["league"]
                    for part, value in parts.items():
                        samples[stage].setdefault(part, []).append(value)
                if failed:
                    break
            for stage in bodies:
                row = {"db": kind, "model": name, "round": stage, "failed": failed,
                       **{part: statistics.median(values) for part, values in samples[stage].items()}}
                out.append(row)
    app.state.engine.dispose()
    return out


def main(argv: list[str] | None = None) -> None:
    from podium.models import MODELS

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--models", nargs="*", default=None, help="Default: every model that rates free-for-alls.")
    parser.add_argument("--db", nargs="*", default=["sqlite", "postgresql"], choices=["sqlite", "postgresql"])
    parser.add_argument("--target", type=float, default=1.0, help="Seconds the server's own part may take.")
    args = parser.parse_args(argv)
    models = args.models or [name for name, cls in MODELS.items() if getattr(cls, "_max_teams", None) is None]
    skipped = sorted(set(MODELS) - set(models))
    print(f"{args.players:,}-player rounds with tie groups up to half the field; medians of {args.repeat} runs; "
          f"seconds. Not run: {', '.join(skipped) or 'none'}.")
    header = f"{'db':10} {'model':15} {'round':6} {'total':>7} {'server':>7} {'league':>7} {'model':>7}  server <= target"
    print(header)
    for kind in args.db:
        with database(kind) as url:
            if url is None:
                continue
            for row in run(kind, url, models, args.players, args.repeat):
                if row["failed"] and "total" not in row:
                    print(f"{row['db']:10} {row['model']:15} {row['round']:6} failed: {row['failed']}")
                    continue
                verdict = "yes" if row["server"] <= args.target else "NO"
                print(f"{row['db']:10} {row['model']:15} {row['round']:6} {row['total']:7.3f} {row['server']:7.3f} "
                      f"{row['league']:7.3f} {row['rating']:7.3f}  {verdict}"
                      + (f"  (then failed: {row['failed']})" if row["failed"] else ""), flush=True)


if __name__ == "__main__":
    main()
