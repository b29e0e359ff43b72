"""The league server's settings: one frozen value handed to :func:`podium.server.create_app`."""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["Settings", "database_url", "SWITCH_INTERVAL"]


def database_url(url: str | None) -> str:
    """The SQLAlchemy URL for ``url``: a path or ``sqlite:///...`` for SQLite, ``postgresql://...`` for PostgreSQL.

    ``None`` is ``podium.db`` in the working directory.  PostgreSQL URLs are pinned to the psycopg (3)
    driver, which SQLAlchemy would otherwise take to mean psycopg2.
    """
    if not url:
        url = "podium.db"
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    if url.startswith(("sqlite:", "postgresql+")):
        return url
    if "://" in url:
        raise ValueError(f"'--db' must be a file path, sqlite:///PATH or postgresql://...; got {url!r}.")
    return "sqlite:///" + os.path.abspath(url)


# A server process hands the GIL between its threads every millisecond instead of Python's default 5:
# the thread writing a batch (holding the league's write lock, which the other processes wait for) would
# otherwise wait up to 5 ms for the event loop after each database round trip.
SWITCH_INTERVAL = 0.001


@dataclass(frozen=True)
class Settings:
    """How a server runs.

    Parameters
    ----------
    db : str
        Database URL or SQLite file path (see :func:`database_url`).
    max_body_bytes : int
        Largest request body accepted (413 beyond).
    max_players : int
        Most players in one reported match (the numerical contract covers 1,000 teams).
    page_size : int
        Default and largest page of the leaderboard.
    busy_timeout : float
        Seconds a SQLite writer waits for a write lock held by a program other than podium's servers
        before giving up (503); podium's own writers queue without a limit (see ``db.py``).
    """

    db: str = "podium.db"
    max_body_bytes: int = 256 * 1024
    max_players: int = 1000
    page_size: int = 50
    busy_timeout: float = 30.0

    @property
    def url(self) -> str:
        return database_url(self.db)
