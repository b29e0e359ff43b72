"""The approved log replayed from the database: streamed a chunk at a time, for a void, a correction, an import
(:func:`_replay_from`) and :func:`rebuild`, which compares every stored rating with the replay.

Memory is the players' states plus one chunk of the log (:func:`log_chunks`, a server-side cursor), whatever
the log's length; the same compiled kernel replays the same matches in the same order as a replay of the
whole log in one go, so the results are the same to the bit.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import and_, delete, func, select
from sqlalchemy.engine import Connection, Engine

from ..data.matches import Matches, Packer
from ..engine.league import League
from .bulk import insert_history, write_states
from .db import bytes_to_extra, extra_to_bytes, history, matches, nan_to_null, ratings, write_transaction
from .records import LeagueInfo, get_league

__all__ = ["REPLAY_CHUNK", "log_chunks", "log_key", "Difference", "rebuild"]

REPLAY_CHUNK = 2_000  # matches per chunk when the log is replayed (Settings.replay_chunk)

# Players per IN list (SQLite takes 32,766 parameters, PostgreSQL 65,535) and per bulk upsert: a round of
# 10,000 players voided is one statement of each.
_NAMES_PER_STATEMENT = 10_000


def log_key(conn: Connection, league_id: int) -> tuple[int, int]:
    """The approved log's length and last seq (-1 if empty): what changes when a match is recorded or voided (a
    correction changes neither: its readers mark what they derived stale)."""
    count, last = conn.execute(select(func.count(), func.max(matches.c.seq)).where(
        and_(matches.c.league_id == league_id, matches.c.status == "recorded"))).one()
    return int(count), -1 if last is None else int(last)


def log_chunks(conn: Connection, league: LeagueInfo, chunk: int = REPLAY_CHUNK, *, since: int = -1
               ) -> Iterator[tuple[list[int], Matches]]:
    """The approved log in order (from the first match after seq ``since``), ``chunk`` matches at a time: each
    chunk's seqs and its matches (columnar, with the stored match ids, and what a record says beyond the order
    of finish: its scores, which way they count, its advantages and its weight, as the report path rates them).

    The rows come through a server-side cursor (PostgreSQL; SQLite's cursor steps through the table as rows
    are fetched), so one chunk of them is in memory at a time, however long the log.  The connection may
    run other statements between chunks (the replay writes history as it goes).
    """
    statement = (select(matches.c.seq, matches.c.record, matches.c.match_id)
                 .where(and_(matches.c.league_id == league.id, matches.c.status == "recorded",
                             matches.c.seq > since))
                 .order_by(matches.c.seq).execution_options(yield_per=chunk))
    result = conn.execute(statement)
    try:
        for rows in result.partitions():
            packer = Packer()
            for row in rows:
                data = json.loads(row.record)
                packer.add(data["teams"], data.get("ranks"), data.get("weights"), data.get("time"), row.match_id,
                           None, data.get("scores"), data.get("higher_is_better", True), data.get("advantage"),
                           data.get("weight", 1.0))
            yield [int(row.seq) for row in rows], packer.build()
    finally:
        result.close()


def _insert_history(conn: Connection, league: LeagueInfo, seqs: Sequence[int], first: int,
                    slots: tuple[Any, list[str], Any, Any]) -> None:
    """Insert the history rows of a chunk replayed by :meth:`League.record_slots` (``first``: the league's match
    count before it; ``seqs``: the chunk's seqs), in bulk (:func:`podium.server.bulk.insert_history`)."""
    slot_match, slot_player, mu, sigma = slots
    insert_history(conn, league.id, slot_player, [seqs[m - first] for m in slot_match.tolist()], mu.tolist(),
                   sigma.tolist())


def _replay_from(conn: Connection, league: LeagueInfo, seq: int, also: Iterable[str] = (), *,
                 chunk: int = REPLAY_CHUNK, progress: Callable[[int], None] | None = None) -> int:
    """Recompute the ratings after a change at ``seq`` (a void, a correction; an import replays from 0).

    The log is streamed and replayed a chunk at a time: the matches before ``seq`` only move the players'
    states (their history is unchanged), and from ``seq`` on each chunk's history rows are written and
    dropped before the next chunk is read; the states of the players of the replayed part (and of ``also``,
    the players of the match as it was, who may have left the league) are written at the end.  Memory: the
    players' states and one chunk, whatever the length of the log.  The same compiled kernel replays the same
    matches in the same order as a replay of the whole log in one go, so the results are the same to the bit.

    Returns the number of matches in the log; ``progress`` is told each chunk's size.
    """
    population = League(league.model, keep_history=False)
    affected = set(also)
    done = seq - 1  # the history up to this seq is right (or rewritten already)

    def clear(upto: int | None) -> None:
        # The old history is deleted a range of seqs at a time, just before the range is rewritten: one
        # DELETE of the whole tail would make SQLite collect every row id to delete in memory first.
        where = [history.c.league_id == league.id, history.c.seq > done]
        conn.execute(delete(history).where(and_(*where, *([] if upto is None else [history.c.seq <= upto]))))

    for seqs, packed in log_chunks(conn, league, chunk):
        split = 0 if seqs[0] >= seq else int(np.searchsorted(np.asarray(seqs, dtype=np.int64), seq))
        if split:
            population.record_many(packed[:split] if split < len(seqs) else packed)
        if split < len(seqs):
            clear(seqs[-1])
            done = seqs[-1]
            first = population.n_matches
            slots = population.record_slots(packed[split:] if split else packed)
            _insert_history(conn, league, seqs[split:], first, slots)
            affected.update(slots[1])
        if progress is not None:
            progress(len(seqs))
    clear(None)  # beyond the log's end (the match voided was its last)
    _write_states(conn, league, population, affected)
    return population.n_matches


def _write_states(conn: Connection, league: LeagueInfo, population: League, players: Iterable[str]) -> None:
    """Store the states of ``players`` from ``population``; those it does not know leave the table."""
    names = sorted(players)
    for start in range(0, len(names), _NAMES_PER_STATEMENT):
        part = names[start:start + _NAMES_PER_STATEMENT]
        states = population.states(part)
        gone = [p for p in part if p not in states]
        if gone:
            conn.execute(delete(ratings).where(and_(ratings.c.league_id == league.id, ratings.c.player.in_(gone))))
        write_states(conn, league.id, [(p, s.mu, s.sigma, s.games, nan_to_null(s.last_time), extra_to_bytes(s.extra))
                                       for p, s in states.items()])


@dataclass(frozen=True)
class Difference:
    """One stored value that the replay of the log does not reproduce."""

    table: str
    player: str
    seq: int | None
    column: str
    stored: float | None
    replayed: float | None


def rebuild(engine: Engine, league_name: str, *, write: bool = True, tolerance: float = 1e-9,
            chunk: int = REPLAY_CHUNK, progress: Callable[[int], None] | None = None
            ) -> tuple[int, list[Difference]]:
    """Replay the league's approved log and compare every stored rating and history row with it.

    Returns ``(matches replayed, differences)`` (the ratings' first, by player; then the history's, by player
    and seq); with ``write`` the replayed values replace the stored ones (in the same locked transaction).
    Values within ``tolerance`` (absolute, or relative for large magnitudes) count as equal.  The log is
    streamed a chunk at a time (see :func:`_replay_from`), each chunk's history compared with the stored rows
    of its range of seqs, so the memory needed is the players' states, one chunk and the differences found.
    ``progress`` is told each chunk's size.
    """
    with engine.connect() as probe:
        league = get_league(probe, league_name)
    with write_transaction(engine, league.id) as conn:
        def differs(a: float | None, b: float | None) -> bool:
            if a is None or b is None:
                return a is not b
            return not abs(a - b) <= tolerance * max(1.0, abs(b))

        def compare(want: dict[tuple[str, int], tuple[float, float]], *where: Any) -> list[Difference]:
            """The history differences within ``where`` (a range of seqs); rewrite the range if asked."""
            condition = and_(history.c.league_id == league.id, *where)
            have = {(r.player, int(r.seq)): (float(r.mu), float(r.sigma))
                    for r in conn.execute(select(history.c.player, history.c.seq, history.c.mu, history.c.sigma)
                                          .where(condition))}
            found = []
            for key in set(want) | set(have):
                a2, b2 = have.get(key), want.get(key)
                for i, column in enumerate(("mu", "sigma")):
                    a = None if a2 is None else a2[i]
                    b = None if b2 is None else b2[i]
                    if differs(a, b):
                        found.append(Difference("history", key[0], key[1], column, a, b))
            if write and found:
                conn.execute(delete(history).where(condition))
                if want:
                    keys, values = list(want), list(want.values())
                    insert_history(conn, league.id, [p for p, _ in keys], [q for _, q in keys],
                                   [a for a, _ in values], [b for _, b in values])
            return found

        population = League(league.model, keep_history=False)
        history_diffs: list[Difference] = []
        last: int | None = None  # the last seq of the chunks compared so far
        for seqs, packed in log_chunks(conn, league, chunk):
            first = population.n_matches
            slot_match, slot_player, mu, sigma = population.record_slots(packed)
            want = {(p, seqs[m - first]): (a, b)
                    for m, p, a, b in zip(slot_match.tolist(), slot_player, mu.tolist(), sigma.tolist())}
            history_diffs += compare(want, history.c.seq <= seqs[-1], *([] if last is None else [history.c.seq > last]))
            last = seqs[-1]
            if progress is not None:
                progress(len(seqs))
        # history rows beyond the log (or in an empty log): all stray
        history_diffs += compare({}, *([] if last is None else [history.c.seq > last]))

        diffs: list[Difference] = []
        stored = {r.player: r for r in conn.execute(select(ratings).where(ratings.c.league_id == league.id))}
        replayed = population.states()
        for player in sorted(set(stored) | set(replayed)):
            row, state = stored.get(player), replayed.get(player)
            for column in ("mu", "sigma", "games", "last_time"):
                a = None if row is None else getattr(row, column)
                b = None if state is None else nan_to_null(getattr(state, column))
                if differs(None if a is None else float(a), None if b is None else float(b)):
                    diffs.append(Difference("ratings", player, None, column, a, b))
            kept = () if row is None else bytes_to_extra(row.extra)
            wanted = () if state is None else state.extra
            for i in range(max(len(kept), len(wanted))):  # a model's extra state; NaN (an open period's) = NULL
                a = nan_to_null(kept[i]) if i < len(kept) else None
                b = nan_to_null(wanted[i]) if i < len(wanted) else None
                if differs(a, b):
                    diffs.append(Difference("ratings", player, None, f"extra[{i}]", a, b))
        history_diffs.sort(key=lambda d: (d.player, d.seq, d.column != "mu"))
        diffs += history_diffs
        if write and diffs:
            _write_states(conn, league, population, set(stored) | set(replayed))
        return population.n_matches, diffs
    raise AssertionError("unreachable")  # pragma: no cover

