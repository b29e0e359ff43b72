"""Void and correct replay the log streamed from the database, chunk by chunk (``podium.server.replay._replay_from``).

The reference is the library replaying the whole resulting log in one go, keeping every player's history
(``podium.League(model).record_many(log)``): after voids and corrections with a chunk size far below the
log's length (so that the replay crosses many chunks, the changed match in the middle of one), every stored
rating -- mu, sigma, games, time of the last match and the model's extra state (Glicko-2's volatility and
open rating period, which must carry from chunk to chunk) -- and every history row must equal it exactly.
``League.record_slots``, the library's part of it, is checked against ``League.slots`` the same way.  On
SQLite and PostgreSQL.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from sqlalchemy import select

import podium
from podium.server import db, store
from podium.server.db import read_transaction

CHUNK = 97  # far below the leagues' length: every replay crosses tens of chunks

MODELS: dict[str, tuple[str, dict[str, Any]]] = {
    "elo": ("elo", {"k": 24.0}),
    "trueskill": ("trueskill", {}),
    "glicko2": ("glicko2", {"period": 3.0}),
    "plackett-luce": ("plackett-luce", {}),
}


def _records(n: int, teams: int, seed: int) -> list[dict[str, Any]]:
    """``n`` matches among 60 players with times (so that Glicko-2's periods and TrueSkill's drift count)."""
    sim = podium.simulate(60, n, teams=teams, draw_probability=0.1, seed=seed).matches
    out = []
    for i, match in enumerate(sim):
        record = match.to_record()
        record["id"] = f"m{i:05d}"
        record["time"] = i * 0.25  # four matches per unit of time: Glicko-2 periods of 12 matches
        out.append(record)
    return out


def _to_match(record: dict[str, Any]) -> podium.Match:
    return podium.Match(record["teams"], record.get("ranks"), record.get("weights"), record.get("time"),
                        record.get("id"))


# -- the library: League.record_slots ------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(MODELS))
def test_record_slots_chunk_by_chunk_equals_one_replay_with_history(name: str) -> None:
    model = podium.models.MODELS[MODELS[name][0]](**MODELS[name][1])
    packed = podium.Matches.from_matches([_to_match(r) for r in _records(600, 2 if name == "elo" else 3, seed=5)])
    whole = podium.League(model).record_many(packed)
    streamed = podium.League(model, keep_history=False)
    parts: list[Any] = []
    for start in range(0, len(packed), CHUNK):
        parts.append(streamed.record_slots(packed[start:start + CHUNK]))
        assert streamed.n_matches == min(start + CHUNK, len(packed))
    match = np.concatenate([p[0] for p in parts])
    players = [q for p in parts for q in p[1]]
    mu, sigma = np.concatenate([p[2] for p in parts]), np.concatenate([p[3] for p in parts])
    ref = whole.slots(0)
    assert np.array_equal(match, ref[0]) and players == ref[1]
    assert np.array_equal(mu, ref[2]) and np.array_equal(sigma, ref[3])
    assert streamed.states() == whole.states() or _same_states(streamed.states(), whole.states())
    with pytest.raises(ValueError, match="keeps no history"):
        streamed.slots()
    # a league that keeps history keeps the chunk's too, and returns the same
    keeping = podium.League(model)
    keeping.record_many(packed[:CHUNK])
    tail = keeping.record_slots(packed[CHUNK:])
    assert np.array_equal(tail[2], ref[2][ref[0] >= CHUNK]) and tail[1] == [p for m, p in zip(ref[0], ref[1]) if m >= CHUNK]
    assert np.array_equal(keeping.trajectory(ref[1][0]).mu, whole.trajectory(ref[1][0]).mu)
    # an empty chunk changes nothing
    empty = streamed.record_slots([])
    assert len(empty[0]) == 0 and empty[1] == [] and streamed.n_matches == len(packed)


def _same_states(a: dict[str, podium.PlayerState], b: dict[str, podium.PlayerState]) -> bool:
    """Equal to the bit, NaN (no time yet, a closed period) equal to NaN."""
    return a.keys() == b.keys() and all(np.array_equal(np.array(a[p][:4] + a[p].extra, dtype=float),
                                                       np.array(b[p][:4] + b[p].extra, dtype=float), equal_nan=True)
                                        for p in a)


def test_record_slots_checks_the_team_count() -> None:
    league = podium.League(podium.Elo(), keep_history=False)
    with pytest.raises(podium.MatchError, match="team"):
        league.record_slots([podium.Match([["a"], ["b"], ["c"]])])
    assert league.n_matches == 0 and len(league) == 0


# -- the server: void and correct -----------------------------------------------------------------------------


def _stored(engine: Any, league: store.LeagueInfo) -> tuple[dict[str, Any], dict[tuple[str, int], tuple[float, float]], list[int]]:
    with read_transaction(engine) as conn:
        rates = {r.player: r for r in conn.execute(select(db.ratings).where(db.ratings.c.league_id == league.id))}
        hist = {(r.player, int(r.seq)): (r.mu, r.sigma)
                for r in conn.execute(select(db.history).where(db.history.c.league_id == league.id))}
        seqs = [int(s) for s in conn.execute(select(db.matches.c.seq).where(
            (db.matches.c.league_id == league.id) & (db.matches.c.status == "recorded")).order_by(db.matches.c.seq)).scalars()]
    return rates, hist, seqs


def _assert_equals_whole_replay(engine: Any, league: store.LeagueInfo, log: list[dict[str, Any]]) -> None:
    """Every stored rating and history row equals the one-go replay of ``log`` with history, to the bit."""
    ref = podium.League(league.model).record_many([_to_match(r) for r in log])
    rates, hist, seqs = _stored(engine, league)
    assert len(seqs) == len(log)
    states = ref.states()
    assert set(rates) == set(states)
    for player, row in rates.items():
        s = states[player]
        assert (row.mu, row.sigma, row.games) == (s.mu, s.sigma, s.games), player
        assert (row.last_time is None and math.isnan(s.last_time)) or row.last_time == s.last_time, player
        kept = db.bytes_to_extra(row.extra)
        assert np.array_equal(np.array(kept, dtype=float), np.array(s.extra, dtype=float), equal_nan=True), player
    match, players, mu, sigma = ref.slots(0)
    want = {(p, seqs[m]): (a, b) for m, p, a, b in zip(match.tolist(), players, mu.tolist(), sigma.tolist())}
    assert hist == want


@pytest.mark.parametrize("name", ["trueskill", "glicko2", "elo"])
def test_void_and_correct_streamed_in_small_chunks_equal_a_whole_replay(engine: Any, name: str) -> None:
    model_name, params = MODELS[name]
    league = store.create_league(engine, "long", model_name, params, False)
    reporter = store.create_token(engine, "reporter")
    moderator_token = store.create_token(engine, "moderator")
    with read_transaction(engine) as conn:
        reporter_info = store.find_token(conn, reporter)
        moderator = store.find_token(conn, moderator_token)
    assert reporter_info is not None and moderator is not None
    log = _records(3000, 2 if name == "elo" else 3, seed=17)
    for start in range(0, len(log), 500):
        results = store.record_reports(engine, league, [store.prepare_report(league, r, reporter_info, 1000)
                                                        for r in log[start:start + 500]])
        assert all(not isinstance(r, store.StoreError) and r[0] == 201 for r in results)
    _assert_equals_whole_replay(engine, league, log)

    # void a match near the start, in the middle of a chunk: the whole tail is replayed across ~30 chunks
    store.void_match(engine, league, log[150]["id"], moderator, chunk=CHUNK)
    del log[150]
    _assert_equals_whole_replay(engine, league, log)
    # correct a match further on: another result, and a newcomer in place of a player
    target = log[1234]
    fixed = {"teams": [[target["teams"][0][0]], ["newcomer"]] + [list(t) for t in target["teams"][2:]],
             "ranks": list(range(len(target["teams"])))[::-1], "time": target["time"]}
    store.correct_match(engine, league, target["id"], fixed, moderator, 1000, chunk=CHUNK)
    log[1234] = fixed | {"id": target["id"]}
    _assert_equals_whole_replay(engine, league, log)
    # void the first match and the last one (the chunk boundaries of the replay's range)
    for index in (0, -1):
        store.void_match(engine, league, log[index]["id"], moderator, chunk=CHUNK)
        del log[index]
        _assert_equals_whole_replay(engine, league, log)
    # rebuild, streamed too, finds nothing to change
    assert store.rebuild(engine, "long", write=False, chunk=CHUNK) == (len(log), [])


def test_the_log_is_read_a_chunk_at_a_time(engine: Any) -> None:
    league = store.create_league(engine, "chunks", "elo", {}, False)
    reporter = store.create_token(engine, "reporter")
    records = _records(250, 2, seed=3)
    store.record_reports(engine, league, [store.prepare_report(league, r, reporter, 1000) for r in records])
    with read_transaction(engine) as conn:
        chunks = list(store.log_chunks(conn, league, 64))
    assert [len(seqs) for seqs, _ in chunks] == [64, 64, 64, 58]
    assert [s for seqs, _ in chunks for s in seqs] == list(range(250))
    assert [m for _, packed in chunks for m in packed.ids] == [r["id"] for r in records]
