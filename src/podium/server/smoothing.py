"""Smoothed ratings beside the live ones: a league's approved log smoothed by TrueSkill Through Time, nightly.

A league whose ``smoothing`` option is on keeps, besides its live (filtered) ratings, every player's skill as
:meth:`podium.TrueSkillThroughTime.smooth` estimates it from the whole approved log: each match informs the
ratings of its players before and after it, so the smoothed ratings are what the whole history says of each
player at the log's last time.  They are stored in the ``smoothed`` table with when they were computed and the
log they were computed from (its length and last seq), and recomputed when that log changes:

* :func:`smooth_league` reads the log (as the replays do: :func:`podium.server.replay.log_chunks`), smooths it
  outside any transaction (reports go on meanwhile), then replaces the league's stored smoothed ratings in one
  short transaction holding the league's write lock.  It does nothing if the log is the one of the stored
  ratings.  ``podium league smooth NAME`` runs it (from cron, or by hand).
* :class:`Scheduler` is each server process's background thread: every ``Settings.smoothing_interval``
  seconds (and when it starts) it smooths the smoothing leagues whose log changed.  Server processes sharing a
  database each run one; a league is computed by the process that *claims* it first (:func:`claim`: a
  conditional UPDATE of ``leagues.smoothing_started`` whose row count says who won), at most once per interval.

Only TrueSkill leagues may smooth (:func:`smoother`): the smoother is TrueSkill's factor graph through time.
Their parameters map onto it as :attr:`podium.TrueSkillThroughTime.filter` shows (the smoother's first pass is
``TrueSkill(tau=0, drift=gamma, center=False)``): ``sigma``, ``beta``, ``draw_probability``, ``advantage``,
``margin_scale`` and ``margin_noise`` as they are; the random walk ``gamma`` is the league's ``drift`` (per
unit of time: a day when the matches carry dates); TrueSkill's ``tau``, a step per game played, has no
counterpart in a random walk through time and is left out (a league without ``drift`` gets skills constant in
time: each player's skill given every match).  The smoother sums a team's skills as they are (the paper's
``sum w s``); TrueSkill measures them from ``mu - newcomer`` when ``center`` is on (its default), so skills are
smoothed on that origin (the smoother's ``mu`` is the league's less it) and the origin is added back: the
same model, on the same scale.  Only ``update="ordered"`` (TrueSkill's default) is the smoother's factor of
a match of three or more teams; leagues with another update may not smooth.

The smoother needs every match's time or none: a log whose matches have times smooths on them (in time
order), one where some have none is smoothed in log order, each match one step of the clock.
"""

from __future__ import annotations

import logging
import math
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import and_, delete, func, insert, or_, select, update
from sqlalchemy.engine import Connection, Engine

from ..data.match import MatchError
from ..data.matches import Matches
from ..models import Model, TrueSkill, TrueSkillThroughTime
from .db import leagues, read_transaction, smoothed, write_transaction
from .records import LeagueInfo, StoreError, _iso, get_league
from .replay import REPLAY_CHUNK, log_chunks, log_key

__all__ = ["Smoother", "SmoothRun", "Scheduler", "smoother", "check_option", "set_smoothing", "smooth_league",
           "claim", "stored_key", "mark_stale", "smoothed_board", "smoothed_for", "CLAIM_SLACK"]

logger = logging.getLogger(__name__)

# A claim stands for (1 - CLAIM_SLACK) of an interval: a process's own next tick comes a whole interval later by
# its timer, but is compared on the wall clock, which may have stepped back a little since (NTP) and must not
# cost the league a whole interval.  Two claims of a league are still at least 0.95 intervals apart.
CLAIM_SLACK = 0.05
# A stale mark (:func:`mark_stale`) in place of the last seq: a correction changed the log without changing its
# length or its last seq, so the stored key matches no log any more.
STALE = -2
_ROWS_PER_STATEMENT = 10_000

Progress = Callable[[str, int, int | None], None]  # (stage, done, total): "log" in matches, then "smooth"


# -- the model -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Smoother:
    """The smoother of a league's model: ``model`` smooths the log on a scale whose zero is ``origin``, which is
    added back to every smoothed mean."""

    model: TrueSkillThroughTime
    origin: float

    def describe(self) -> dict[str, Any]:
        """The smoother's parameters and origin, as the API shows them."""
        params = self.model.get_params()
        return {"model": "trueskill-through-time", "params": params, "origin": self.origin}


def smoother(model_name: str, model: Model) -> Smoother:
    """The :class:`podium.TrueSkillThroughTime` of a league's model (see the module docstring for the mapping).

    Raises
    ------
    StoreError
        422 naming ``smoothing`` for a model the smoother cannot take (not TrueSkill, or TrueSkill with an
        ``update`` other than ``"ordered"``).
    """
    if model_name != "trueskill" or not isinstance(model, TrueSkill):
        raise StoreError(422, "smoothing", "'smoothing' needs a TrueSkill league (the smoother is TrueSkill Through "
                                           f"Time, TrueSkill's factor graph through time); this league's model is "
                                           f"{model_name!r:.40}. Got smoothing=true.")
    if model.update != "ordered":
        raise StoreError(422, "smoothing", "'smoothing' needs TrueSkill's update='ordered' (the smoother's factor of "
                                           "a match of three or more teams); this league's params.update is "
                                           f"{model.update!r}. Got smoothing=true.")
    origin = (float(model.mu) if model.center else 0.0) - float(model.newcomer)
    try:
        built = TrueSkillThroughTime(mu=float(model.mu) - origin, sigma=float(model.sigma), beta=float(model.beta),
                                     gamma=float(model.drift), draw_probability=float(model.draw_probability),
                                     advantage=model.advantage, margin_scale=model.margin_scale,
                                     margin_noise=model.margin_noise)
    except (TypeError, ValueError) as error:
        raise StoreError(422, "smoothing", f"'smoothing': the smoother does not take this league's parameters "
                                           f"({error}). Got smoothing=true.") from None
    return Smoother(built, origin)


def check_option(value: Any, model_name: str, model: Model) -> bool:
    """``value`` as the ``smoothing`` option of a league of ``model``; 422 naming ``smoothing`` if it is not a
    bool, or is true for a model the smoother cannot take."""
    if not isinstance(value, bool):
        raise StoreError(422, "smoothing", f"'smoothing' must be true or false. Got {value!r:.80}.")
    if value:
        smoother(model_name, model)
    return value


def set_smoothing(engine: Engine, name: str, value: Any) -> LeagueInfo:
    """Turn league ``name``'s ``smoothing`` option on or off (an admin's change); return the league.

    Turning it off deletes the league's smoothed ratings (and its claim, so that turning it on again lets the
    next tick of any process smooth at once).  Turning it on computes nothing: the next tick (or ``podium league
    smooth``) does.
    """
    with read_transaction(engine) as conn:
        league = get_league(conn, name)
    check_option(value, league.model_name, league.model)
    with write_transaction(engine, league.id) as conn:
        conn.execute(update(leagues).where(leagues.c.id == league.id).values(smoothing=value, smoothing_started=None))
        if not value:
            conn.execute(delete(smoothed).where(smoothed.c.league_id == league.id))
        return get_league(conn, name)
    raise AssertionError("unreachable")  # pragma: no cover


# -- the log's key ---------------------------------------------------------------------------------------------
def stored_key(conn: Connection, league_id: int) -> tuple[int, int, float] | None:
    """The log key the stored smoothed ratings were computed from, and when (None if there are none)."""
    row = conn.execute(select(smoothed.c.log_count, smoothed.c.log_last_seq, smoothed.c.computed)
                       .where(smoothed.c.league_id == league_id).limit(1)).first()
    return None if row is None else (int(row.log_count), int(row.log_last_seq), float(row.computed))


def mark_stale(conn: Connection, league_id: int) -> None:
    """Mark the league's smoothed ratings stale (a correction: the log changed, its key did not): the next
    smoothing recomputes them; until then they are shown as they are, not up to date."""
    conn.execute(update(smoothed).where(smoothed.c.league_id == league_id).values(log_last_seq=STALE))


def _changed(engine: Engine, league_id: int) -> bool:
    with read_transaction(engine) as conn:
        stored = stored_key(conn, league_id)
        current = log_key(conn, league_id)
    if stored is None:
        return current[0] > 0
    return stored[:2] != current


# -- smoothing a league ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SmoothRun:
    """What :func:`smooth_league` did: ``status`` is ``"smoothed"`` (ratings written), ``"unchanged"`` (the stored
    ones are of this log), ``"empty"`` (no approved match: any stored ratings deleted) or ``"off"`` (the option was
    turned off meanwhile; nothing written)."""

    league: str
    status: str
    matches: int
    players: int
    seconds: float

    @property
    def computed(self) -> bool:
        return self.status == "smoothed"


def smooth_league(engine: Engine, name: str, *, chunk: int = REPLAY_CHUNK, force: bool = False,
                  progress: Progress | None = None, clock: Callable[[], float] = time.time,
                  tolerance: float = 1e-6, max_iterations: int = 100) -> SmoothRun:
    """Smooth league ``name``'s approved log and replace its stored smoothed ratings (one transaction).

    Parameters
    ----------
    engine : Engine
        The league's database.
    name : str
        The league; its ``smoothing`` option must be on.
    chunk : int
        Matches read from the database at a time (the smoother then needs the whole log in memory).
    force : bool
        Recompute even if the stored smoothed ratings are of the current log.
    progress : callable, optional
        ``progress("log", matches read, log length)`` while the log is read, ``progress("smooth", 0, None)``
        when smoothing starts and ``progress("smooth", 1, 1)`` when it is done.
    clock : callable
        The time recorded as ``computed`` (seconds since 1970).
    tolerance, max_iterations : float, int
        :meth:`podium.TrueSkillThroughTime.smooth`'s; a ``ConvergenceWarning`` is logged, not raised.

    Raises
    ------
    StoreError
        404 for an unknown league, 409 naming ``smoothing`` when its option is off, 422 naming ``smoothing`` when
        the smoother refuses the log (a draw under ``draw_probability=0``, times of two kinds).
    """
    start = time.perf_counter()
    with read_transaction(engine) as conn:
        league = get_league(conn, name)
        if not league.smoothing:
            raise StoreError(409, "smoothing", f"League {name!r} keeps no smoothed ratings: its 'smoothing' option is "
                                               "off (an admin turns it on).")
        model = smoother(league.model_name, league.model)
        current = log_key(conn, league.id)
        stored = stored_key(conn, league.id)
        if not force and stored is not None and stored[:2] == current:
            return SmoothRun(name, "unchanged", current[0], 0, time.perf_counter() - start)
        parts: list[Matches] = []
        count, last = 0, -1
        for seqs, packed in log_chunks(conn, league, chunk):
            parts.append(packed)
            count, last = count + len(seqs), seqs[-1]
            if progress is not None:
                progress("log", count, max(count, current[0]))
    # The key is that of the matches read (one statement: one snapshot of the log, whatever was recorded since).
    if count == 0:
        status = _store(engine, league, [], (0, -1), clock(), force)
        return SmoothRun(name, "empty" if status == "smoothed" else status, 0, 0, time.perf_counter() - start)
    if progress is not None:
        progress("smooth", 0, None)
    rows = _smooth(model, parts, tolerance, max_iterations, name)
    if progress is not None:
        progress("smooth", 1, 1)
    status = _store(engine, league, rows, (count, last), clock(), force)
    return SmoothRun(name, status, count, len(rows), time.perf_counter() - start)


def _smooth(model: Smoother, parts: Sequence[Matches], tolerance: float, max_iterations: int, name: str
            ) -> list[tuple[str, float, float, int, bool]]:
    """Every player's smoothed skill at the log's last time: (player, mu, sigma, games, connected)."""
    try:
        log = Matches.concat(parts)
        unknown = np.isnan(log.time)
        if unknown.any() and not unknown.all():  # the smoother takes all times or none: the log's order then
            log.time = np.full(len(log), np.nan)
            log.time_is_date = False
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = model.model.smooth(log, tolerance=tolerance, max_iterations=max_iterations)
    except (MatchError, ValueError, FloatingPointError) as error:
        raise StoreError(422, "smoothing", f"League {name!r}: the smoother refused the approved log: {error}") from None
    for warning in caught:
        logger.warning("smoothing league %r: %s", name, warning.message)
    return [(row.player, row.mu + model.origin, row.sigma, int(row.games), bool(row.connected))
            for row in result.leaderboard(k=0.0)]


def _store(engine: Engine, league: LeagueInfo, rows: list[tuple[str, float, float, int, bool]],
           key: tuple[int, int], now: float, force: bool) -> str:
    """Replace the league's smoothed ratings by ``rows`` computed from the log ``key``, in one transaction."""
    with write_transaction(engine, league.id) as conn:
        on = conn.execute(select(leagues.c.smoothing).where(leagues.c.id == league.id)).scalar()
        if not on:
            return "off"
        stored = stored_key(conn, league.id)
        if not force and stored is not None and stored[:2] == key:
            return "unchanged"  # another process wrote the same log's meanwhile
        conn.execute(delete(smoothed).where(smoothed.c.league_id == league.id))
        values = [{"league_id": league.id, "player": p, "mu": mu, "sigma": sigma, "games": games,
                   "connected": connected, "computed": now, "log_count": key[0], "log_last_seq": key[1]}
                  for p, mu, sigma, games, connected in rows]
        for first in range(0, len(values), _ROWS_PER_STATEMENT):
            conn.execute(insert(smoothed), values[first:first + _ROWS_PER_STATEMENT])
    return "smoothed"


# -- reading -------------------------------------------------------------------------------------------------
def smoothed_board(conn: Connection, league: LeagueInfo, *, k: float = 3.0, limit: int = 50, offset: int = 0
                   ) -> dict[str, Any]:
    """The smoothed leaderboard by ``mu - k sigma`` (ties by name), with when it was computed and from what.

    Raises
    ------
    StoreError
        404 naming ``smoothing`` when the league's option is off, ``smoothed`` when nothing was computed yet.
    """
    if not league.smoothing:
        raise StoreError(404, "smoothing", f"League {league.name!r} keeps no smoothed ratings: its 'smoothing' "
                                           "option is off (an admin turns it on: PATCH /api/v1/leagues/"
                                           f"{league.name} with {{\"smoothing\": true}}).")
    stored = stored_key(conn, league.id)
    if stored is None:
        raise StoreError(404, "smoothed", f"League {league.name!r} has no smoothed ratings yet: the server computes "
                                          "them every smoothing_interval seconds once the league has matches, or "
                                          f"'podium league smooth {league.name}' does now.")
    where = smoothed.c.league_id == league.id
    score = (smoothed.c.mu - k * smoothed.c.sigma).label("score")
    total = conn.execute(select(func.count()).select_from(smoothed).where(where)).scalar_one()
    rows = conn.execute(select(smoothed.c.player, smoothed.c.mu, smoothed.c.sigma, smoothed.c.games,
                               smoothed.c.connected, score).where(where)
                        .order_by(score.desc(), smoothed.c.player).limit(limit).offset(offset)).all()
    return {"league": league.name, "computed": _iso(stored[2]), "matches": stored[0],
            "up_to_date": stored[:2] == log_key(conn, league.id), "k": k, "total": int(total), "offset": offset,
            "limit": limit, "smoother": smoother(league.model_name, league.model).describe(),
            "rows": [{"rank": offset + i + 1, "player": r.player, "mu": float(r.mu), "sigma": float(r.sigma),
                      "score": float(r.mu) - k * float(r.sigma), "games": int(r.games), "connected": bool(r.connected)}
                     for i, r in enumerate(rows)]}


def smoothed_for(conn: Connection, league: LeagueInfo, players: Sequence[str]) -> dict[str, Any] | None:
    """The smoothed ratings of ``players`` (those the last smoothing rated) for the league's page, with when they
    were computed; None if the league keeps none."""
    if not league.smoothing:
        return None
    stored = stored_key(conn, league.id)
    if stored is None:
        return None
    found = {r.player: {"mu": float(r.mu), "sigma": float(r.sigma)} for r in conn.execute(
        select(smoothed.c.player, smoothed.c.mu, smoothed.c.sigma).where(and_(
            smoothed.c.league_id == league.id, smoothed.c.player.in_(list(players)))))} if players else {}
    return {"computed": _iso(stored[2]), "matches": stored[0], "up_to_date": stored[:2] == log_key(conn, league.id),
            "ratings": found}


# -- the scheduler ---------------------------------------------------------------------------------------------
def claim(engine: Engine, league_id: int, now: float, interval: float) -> bool:
    """Claim league ``league_id``'s smoothing for this interval; True for the one caller that gets it.

    One conditional UPDATE: ``smoothing_started`` becomes ``now`` where the option is on and the last claim is
    older than the interval (less :data:`CLAIM_SLACK`).  The database lets one such UPDATE through at a time (SQLite:
    the writers' lock; PostgreSQL: the row's lock, after which a waiting UPDATE re-reads the row and finds it
    claimed), so of any number of processes claiming at once exactly one sees a row count of 1.
    """
    with write_transaction(engine) as conn:
        result = conn.execute(update(leagues).where(and_(
            leagues.c.id == league_id, leagues.c.smoothing.is_(True),
            or_(leagues.c.smoothing_started.is_(None),
                leagues.c.smoothing_started <= now - interval * (1.0 - CLAIM_SLACK))))
            .values(smoothing_started=now))
        return result.rowcount == 1
    raise AssertionError("unreachable")  # pragma: no cover


class Scheduler:
    """A server process's background smoothing: a thread that calls :meth:`tick` when it starts and then every
    ``interval`` seconds until :meth:`stop`.

    Parameters
    ----------
    engine : Engine
        The server's database.
    interval : float
        Seconds between two ticks (``Settings.smoothing_interval``), > 0.
    chunk : int
        Matches read at a time (``Settings.replay_chunk``).
    clock : callable
        Wall-clock seconds since 1970 (the claims compare across processes).
    """

    def __init__(self, engine: Engine, interval: float, *, chunk: int = REPLAY_CHUNK,
                 clock: Callable[[], float] = time.time) -> None:
        if isinstance(interval, bool) or not isinstance(interval, (int, float)) or not 0 < interval < math.inf:
            raise ValueError(f"'interval' must be a number of seconds > 0. Got {interval!r:.80}.")
        self.engine = engine
        self.interval = float(interval)
        self.chunk = chunk
        self.clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def tick(self, now: float | None = None) -> list[str]:
        """Smooth each league with the option on whose log changed and whose claim this process wins; return their
        names.  A league that fails is logged and left to the next interval; the others go on."""
        now = self.clock() if now is None else now
        with read_transaction(self.engine) as conn:
            due = conn.execute(select(leagues.c.id, leagues.c.name).where(leagues.c.smoothing.is_(True))
                               .order_by(leagues.c.name)).all()
        done = []
        for league_id, name in due:
            if self._stop.is_set():
                break
            try:
                if not _changed(self.engine, league_id) or not claim(self.engine, league_id, now, self.interval):
                    continue
                run = smooth_league(self.engine, name, chunk=self.chunk, clock=self.clock)
                if run.computed:
                    done.append(name)
                logger.info("smoothing league %r: %s (%d matches, %d players, %.2f s)", name, run.status,
                            run.matches, run.players, run.seconds)
            except Exception:  # one league's failure (a bug, a refused log, the database) must not stop the others
                logger.exception("smoothing league %r failed; it is tried again next interval", name)
        return done

    def start(self) -> None:
        """Start the thread (its first tick at once)."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(self._stop,), name="podium-smoothing", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 60.0) -> None:
        """Ask the thread to stop and wait for it (at most ``timeout`` seconds: a smoothing in progress finishes,
        the leagues after it wait for the next start)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                logger.warning("the smoothing thread is still smoothing after %.0f s; leaving it behind", timeout)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                self.tick()
            except Exception:  # the list of leagues could not be read (the database away): try again next time
                logger.exception("the smoothing tick failed")
            if stop.wait(self.interval):
                return
