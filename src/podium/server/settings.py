"""The league server's settings: one frozen value handed to :func:`podium.server.create_app`."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Settings", "ENVIRONMENT", "settings_from_env", "database_url", "SWITCH_INTERVAL", "MAX_PLAYERS", "MAX_BODY_BYTES", "SMOOTHING_INTERVAL"]


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

# The largest match a server takes by default: a programming-contest round (Codeforces' rounds have had over
# 30,000 registrants, a few thousand rated; 10,000 covers the big rated rounds).  The body limit follows it:
# see Settings.max_body_bytes.
MAX_PLAYERS = 10_000
MAX_BODY_BYTES = 4 * 1024 * 1024

# Seconds between two smoothings of a league that keeps smoothed ratings (see Settings.smoothing_interval): nightly.
SMOOTHING_INTERVAL = 86_400.0


@dataclass(frozen=True)
class Settings:
    """How a server runs.

    Parameters
    ----------
    db : str
        Database URL or SQLite file path (see :func:`database_url`).
    max_body_bytes : int
        Largest request body accepted, in bytes (413 beyond).  It must hold a report of ``max_players`` players.
        As JSON (``json.dumps``, ``", "`` separators) a player of a free-for-all costs its id plus 8 bytes
        (``["id"], ``), a rank up to 7 (``12345, ``) and a weight about 8-25 (``[0.5], `` to a float's 17
        digits): about 53 bytes with a 30-character id, rank and weight, 88 with a 64-character id.  An id
        outside ASCII sent escaped (``\\uXXXX``, ``json.dumps``' default) costs 6 bytes a character: about 200
        bytes with 30 characters.  So 10,000 players take 0.53 MB with 30-character ids, 0.88 MB with
        64-character ones, 1.9 MB with 30-character escaped ones.  The default, 4 MiB, is about 420 bytes a
        player of the default ``max_players``: 10,000 players with ids of up to 64 characters, or of up to 60
        escaped ones, and a ``meta`` besides.  Raise the two together: ``max_body_bytes`` >= 420 x
        ``max_players`` takes any such report; below about 100 x ``max_players``, full-size reports with
        long ids are refused (413) before their players are counted.
    max_players : int
        Most players in one reported or corrected match (a 422 naming ``teams`` beyond): 10,000 by default, a
        large programming-contest round.  The report path reads and writes a match's players in bulk, so the
        server's own part of a 10,000-player round is about 0.3-0.6 s on SQLite (``benchmarks/
        massive_server.py``, a loaded two-core machine); the model's rating of it takes what the model takes
        (0.2-0.3 s for Plackett-Luce, about 3 s for TrueSkill), the league's write lock held meanwhile.
        Predictions take at most 1,000 teams (:data:`podium.server.teams.PREDICT_MAX_PLAYERS`: their place
        probabilities are a square table) and balanced teams at most 200 players, whatever this is.
    page_size : int
        Default and largest page of the leaderboard.
    busy_timeout : float
        Seconds a SQLite writer waits for a write lock held by a program other than podium's servers
        before giving up (503); podium's own writers queue without a limit (see ``db.py``).
    token_rate : float
        Requests per second, sustained, that one token may make (a bearer token, or the session cookie of a
        signed-in moderator); 0 = no per-token limit.  Beyond it: 429 with ``Retry-After``.
    token_burst : int
        Requests a token may make at once after a quiet spell (the size of its bucket).
    address_rate : float
        Requests per second, sustained, from one client address that carry no token (anonymous reads, the
        sign-in form) or a token this process has not yet seen valid; 0 = no per-address limit.  IPv6
        clients count per /64 network (one host can hold a whole one).
    address_burst : int
        Such requests at once from one address.
    trust_forwarded_host : bool
        Take the site's host for the same-origin check of form posts from ``X-Forwarded-Host`` (set by a
        reverse proxy that rewrites ``Host``) instead of ``Host``.  Off by default: a client could send
        any ``X-Forwarded-Host``; turn it on only behind a proxy that sets it.
    replay_chunk : int
        Matches read from the database and replayed at a time when a void or a correction replays the log
        (and by imports and ``rebuild``): the memory they need is the players' states plus one chunk.
    provisional_games : int
        Players with fewer games are marked provisional on the leaderboard page (their rating has little behind it).
    integrity_max_matches : int
        Longest log (approved matches) for which the leaderboard page lists thin links and the moderators' audit
        page runs :func:`podium.audit`: both need the whole history in memory (a longer league: export it and run
        ``podium check`` / ``podium audit`` on the file).
    smoothing_interval : float
        Seconds between two smoothings of each league whose ``smoothing`` option is on (``smoothing.py``): a
        background thread of each server process looks every ``smoothing_interval`` seconds (and once when it
        starts) and smooths the leagues whose approved log changed since their last smoothing; of several
        processes sharing the database, one computes a given league per interval.  86,400 (nightly) by
        default; 0 turns the thread off (``podium league smooth`` from cron then does the work).

    The limits are kept in memory by each server process: with ``--workers N`` each process has its own
    buckets, so a client whose requests are spread over the processes gets up to N times the limit.
    """

    db: str = "podium.db"
    max_body_bytes: int = MAX_BODY_BYTES
    max_players: int = MAX_PLAYERS
    page_size: int = 50
    busy_timeout: float = 30.0
    token_rate: float = 20.0
    token_burst: int = 200
    address_rate: float = 10.0
    address_burst: int = 100
    trust_forwarded_host: bool = False
    replay_chunk: int = 2_000
    provisional_games: int = 10
    integrity_max_matches: int = 200_000
    smoothing_interval: float = SMOOTHING_INTERVAL

    def __post_init__(self) -> None:
        for name in ("token_rate", "address_rate"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
                raise ValueError(f"'{name}' must be a number of requests per second >= 0 (0 = no limit). "
                                 f"Got {value!r}.")
        value = self.smoothing_interval
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
            raise ValueError(f"'smoothing_interval' must be a number of seconds >= 0 (0 = no background smoothing). "
                             f"Got {value!r}.")
        for name in ("token_burst", "address_burst", "replay_chunk", "integrity_max_matches", "max_body_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"'{name}' must be a whole number >= 1. Got {value!r}.")

        if isinstance(self.max_players, bool) or not isinstance(self.max_players, int) or self.max_players < 2:
            raise ValueError(f"'max_players' must be a whole number >= 2 (a match has two teams). Got {self.max_players!r}.")
        if isinstance(self.provisional_games, bool) or not isinstance(self.provisional_games, int) or self.provisional_games < 0:
            raise ValueError(f"'provisional_games' must be a whole number >= 0. Got {self.provisional_games!r}.")

    @property
    def url(self) -> str:
        return database_url(self.db)


ENVIRONMENT = {
    "PODIUM_DB": "db", "PODIUM_MAX_BODY": "max_body_bytes", "PODIUM_MAX_PLAYERS": "max_players",
    "PODIUM_TOKEN_RATE": "token_rate",
    "PODIUM_TOKEN_BURST": "token_burst", "PODIUM_ADDRESS_RATE": "address_rate",
    "PODIUM_ADDRESS_BURST": "address_burst", "PODIUM_TRUST_FORWARDED_HOST": "trust_forwarded_host",
    "PODIUM_REPLAY_CHUNK": "replay_chunk", "PODIUM_PROVISIONAL_GAMES": "provisional_games",
    "PODIUM_INTEGRITY_MAX_MATCHES": "integrity_max_matches", "PODIUM_SMOOTHING_INTERVAL": "smoothing_interval",
}


def settings_from_env(environ: Mapping[str, str] | None = None) -> Settings:
    """:class:`Settings` from ``PODIUM_*`` environment variables (:data:`ENVIRONMENT`); unset ones keep their
    defaults.  A malformed value raises ``ValueError`` naming the variable."""
    environ = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    for variable, name in ENVIRONMENT.items():
        text = environ.get(variable)
        if text is None:
            continue
        default = getattr(Settings, name)
        try:
            if isinstance(default, bool):
                if text.strip().lower() not in ("1", "true", "yes", "on", "0", "false", "no", "off", ""):
                    raise ValueError
                values[name] = text.strip().lower() in ("1", "true", "yes", "on")
            elif isinstance(default, int):
                values[name] = int(text)
            elif isinstance(default, float):
                values[name] = float(text)
            else:
                values[name] = text
        except ValueError:
            raise ValueError(f"The environment variable {variable} must be "
                             f"{'true or false' if isinstance(default, bool) else type(default).__name__}; "
                             f"got {text[:40]!r}.") from None
    try:
        return Settings(**values)
    except ValueError as error:
        raise ValueError(f"{error} (from the environment: {', '.join(sorted(k for k in ENVIRONMENT if k in environ))})"
                         ) from None
