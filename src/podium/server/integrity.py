"""A league's integrity, for its pages: who is connected to whom (:mod:`podium.engine.components`) and what
:func:`podium.audit` flags, computed from the approved log and kept per process until the log changes.

Connectivity is kept incrementally: a union-find over the league's players, to which the matches recorded
since the last look are added (a chunk at a time, from the log's server-side cursor).  A log that lost
matches (a void) is read again from the start, and so is one older than ``REFRESH`` seconds (a correction
keeps the log's length and last position, and may have changed who played).  Thin links and the audit need
the whole history at once; they are computed for logs of at most ``Settings.integrity_max_matches`` matches
and cached on the same terms.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy.engine import Connection

from ..data.matches import Matches
from ..engine.components import UnionFind, components
from . import replay, store

__all__ = ["Connectivity", "audit_report", "connectivity", "league_audit", "thin_links"]

REFRESH = 600.0  # seconds after which a cached view is rebuilt from the whole log


@dataclass
class Connectivity:
    """The components of a league's approved log, as far as ``last_seq`` (``count`` matches)."""

    count: int = 0
    last_seq: int = -1
    built: float = 0.0
    index: dict[str, int] = field(default_factory=dict)
    links: UnionFind = field(default_factory=UnionFind)

    def add(self, packed: Matches) -> None:
        rows = np.array([self.index.setdefault(p, len(self.index)) for p in packed.players], dtype=np.int64)
        self.links.grow(len(self.index))
        self.links.link(packed, rows)

    def labels(self) -> tuple[dict[str, int], np.ndarray]:
        """Each player's component (0 the largest) and the component sizes, largest first."""
        labels, sizes = self.links.labels(len(self.index))
        return {p: int(labels[i]) for p, i in self.index.items()}, sizes


_lock = threading.Lock()
# Keyed by the database and the league: one process may serve (or test) several databases.
_cache: dict[tuple[str, int, str], Connectivity] = {}
_whole: dict[tuple[str, int, str, str], tuple[tuple[int, int], float, Any]] = {}


def _key(conn: Connection, league: store.LeagueInfo) -> tuple[str, int, str]:
    return conn.engine.url.render_as_string(hide_password=True), league.id, league.name


def connectivity(conn: Connection, league: store.LeagueInfo, *, now: float | None = None) -> Connectivity:
    """The league's components, brought up to date with its approved log."""
    now = time.time() if now is None else now
    count, last = replay.log_key(conn, league.id)
    with _lock:
        cached = _cache.get(_key(conn, league))
    if cached is not None and (cached.count, cached.last_seq) == (count, last) and now - cached.built < REFRESH:
        return cached
    if cached is None or count < cached.count or last < cached.last_seq or now - cached.built >= REFRESH:
        fresh, since = Connectivity(built=now), -1
    else:  # matches were recorded since: add them
        fresh, since = cached, cached.last_seq
    added = 0
    for seqs, packed in replay.log_chunks(conn, league, since=since):
        fresh.add(packed)
        added += len(seqs)
    fresh.count = (0 if fresh is not cached else cached.count) + added
    fresh.last_seq = last
    if fresh.count != count:  # the log changed under us in a way appending cannot explain: read it whole
        fresh = Connectivity(built=now)
        for seqs, packed in replay.log_chunks(conn, league):
            fresh.add(packed)
            fresh.count += len(seqs)
        fresh.last_seq = last
    with _lock:
        _cache[_key(conn, league)] = fresh
    return fresh


def _whole_log(conn: Connection, league: store.LeagueInfo) -> Matches:
    return Matches.concat([packed for _, packed in replay.log_chunks(conn, league)])


def _cached(conn: Connection, league: store.LeagueInfo, what: str, limit: int, compute: Any,
            now: float | None = None) -> Any:
    """``compute(whole log)``, cached per league until its log changes; ``None`` for logs over ``limit``."""
    now = time.time() if now is None else now
    key = replay.log_key(conn, league.id)
    if key[0] > limit:
        return None
    with _lock:
        hit = _whole.get((*_key(conn, league), what))
    if hit is not None and hit[0] == key and now - hit[1] < REFRESH:
        return hit[2]
    value = compute(_whole_log(conn, league))
    with _lock:
        _whole[(*_key(conn, league), what)] = (key, now, value)
    return value


def thin_links(conn: Connection, league: store.LeagueInfo, limit: int) -> list[dict[str, Any]] | None:
    """The thin links of the league's log (:func:`podium.components` at its defaults), or ``None`` if the log
    has more than ``limit`` matches."""
    def compute(log: Matches) -> list[dict[str, Any]]:
        found = components(log)
        return [{"sizes": link.sizes, "examples": link.examples, "count": len(link.matches), "direct": link.direct,
                 "matches": [log.ids[j] for j in link.matches.tolist()]} for link in found.thin_links]
    return _cached(conn, league, "thin", limit, compute)


def league_audit(conn: Connection, league: store.LeagueInfo, limit: int) -> Any:
    """:func:`podium.audit` of the league's log at its defaults (TrueSkill fitted to it), or ``None`` if the
    log has more than ``limit`` matches, or more meetings of two opponents than the audit takes (contests of
    thousands)."""
    from ..integrity.audit import MAX_MEETINGS, meetings_held, audit

    def run(log: Matches) -> Any:
        return audit(log) if len(log) >= 2 and meetings_held(log) <= MAX_MEETINGS else None

    return _cached(conn, league, "audit", limit, run)


def audit_report(conn: Connection, league: store.LeagueInfo, limit: int) -> dict[str, Any]:
    """The API's answer: the league's audit (:func:`league_audit`) with each flag's evidence, or a 422 naming why
    there is none."""
    from ..integrity.audit import MAX_MEETINGS

    result = league_audit(conn, league, limit)
    if result is None:
        raise store.StoreError(422, "league", f"The audit runs on leagues of 2 to {limit:,} matches "
                                              f"(integrity_max_matches) holding at most {MAX_MEETINGS:,} meetings "
                                              "of two opponents; export the league and run 'podium audit' on the "
                                              "file (or a part of it).")
    return {"league": league.name, "model": result.model, "alpha": result.alpha, "tests": result.tests,
            "flags": [{"kind": f.kind, "players": list(f.players), "p_value": f.p_value,
                       "adjusted": f.adjusted, "matches": list(f.match_ids), "evidence": f.evidence,
                       "details": f.details} for f in result.flags]}
