"""What a match record says beyond the order of finish (issue 31): ``scores``, ``higher_is_better``,
``advantage`` and ``weight``, through the league server, on real SQLite and real PostgreSQL (every test runs
on both, as in test_api.py).

The server must accept them with the library's checks (a bad value is a 422 naming the field and what was
sent, and stores nothing), keep them in the canonical record, return them in its JSON, show them in its
pages, and hand them to the rating engine on every path that rates: a report, an approval, a void or a
correction (the streamed replay), a rebuild, an import.  The ratings are compared with ``podium.League``
replaying the same ``podium.Match`` objects with the league's own model, to the bit (the Elo family's
kernel on the same numbers), not with numbers written down here: they stay right as the models learn to use
the fields.  Whether a model uses a field or not, what reaches the engine is checked directly too (the
``engine`` fixture's record of every match the engine replays).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import select

import podium
from podium.data.matches import Matches
from podium.engine.league import League
from podium.models import MODELS
from podium.server import db, store
from podium.server.backup import BackupError, export_league, import_league
from podium.server.replay import log_chunks

from .conftest import auth

LEAGUES = "/api/v1/leagues"
FIELDS = ("scores", "higher_is_better", "advantage", "weight")


# -- helpers ----------------------------------------------------------------------------------------------

def elo_params() -> dict[str, Any]:
    """The Elo league's parameters: a home advantage and a margin-of-victory multiplier where the model has
    them (so that the advantages and scores move the ratings); a model without them ignores the fields, and
    the tests still check that they reach the engine."""
    params: dict[str, Any] = {"k": 24.0}
    known = podium.Elo().get_params()
    for name, value in (("advantage", 35.0), ("margin_power", 0.5)):
        if name in known:
            params[name] = value
    return params


def create_league(client: Any, tokens: dict[str, str], name: str, model: str = "elo",
                  params: dict[str, Any] | None = None, moderated: bool = False) -> podium.Model:
    """Create the league; return the library's model with the league's full parameters (its very model)."""
    body = {"name": name, "model": model, "params": elo_params() if params is None else params,
            "moderated": moderated}
    response = client.post(LEAGUES, json=body, headers=auth(tokens["admin"]))
    assert response.status_code == 201, response.text
    return MODELS[model](**response.json()["params"])


def report(client: Any, token: str, league: str, record: Any, expect: int = 201) -> dict[str, Any]:
    response = client.post(f"{LEAGUES}/{league}/matches", json=record, headers=auth(token))
    assert response.status_code == expect, response.text
    return response.json()


def to_match(record: dict[str, Any]) -> podium.Match:
    """The library's Match of a client's record (built here, not by the server's code)."""
    extra = {key: record[key] for key in FIELDS if key in record}
    return podium.Match(record["teams"], record.get("ranks"), record.get("weights"), record.get("time"),
                        record.get("id"), **extra)


def canonical(record: dict[str, Any]) -> dict[str, Any]:
    """What the server stores for a client's record: the Match's own record (and the record's meta)."""
    out = to_match(record).to_record()
    if record.get("meta"):
        out["meta"] = record["meta"]
    return out


def result_of(match: podium.Match) -> tuple[Any, ...]:
    return (match.teams, match.ranks, match.scores, match.higher_is_better, match.advantage, match.weight)


def league_id(app: Any, name: str) -> int:
    with app.state.engine.connect() as conn:
        return conn.execute(select(db.leagues.c.id).where(db.leagues.c.name == name)).scalar_one()


def stored_records(app: Any, name: str) -> dict[str, str]:
    """Each match id's stored record, as the bytes stored."""
    with app.state.engine.connect() as conn:
        rows = conn.execute(select(db.matches.c.match_id, db.matches.c.record)
                            .where(db.matches.c.league_id == league_id(app, name))).all()
    return {r.match_id: r.record for r in rows}


def snapshot(app: Any) -> dict[str, list[tuple[Any, ...]]]:
    with app.state.engine.connect() as conn:
        return {table.name: sorted((tuple(row) for row in conn.execute(select(table))), key=repr)
                for table in (db.leagues, db.tokens, db.matches, db.ratings, db.history)}


def assert_rated_like_the_library(app: Any, name: str, model: podium.Model, log: Sequence[dict[str, Any]]) -> None:
    """The league's stored ratings and history are those of ``podium.League(model)`` replaying ``log``, to
    the bit; a rebuild with no tolerance finds nothing to change."""
    ref = podium.League(model).record_many([to_match(r) for r in log])
    states = ref.states()
    ids = [r["id"] for r in log]
    with app.state.engine.connect() as conn:
        lid = league_id(app, name)
        rows = conn.execute(select(db.ratings).where(db.ratings.c.league_id == lid)).all()
        seqs = {r.match_id: r.seq for r in conn.execute(select(db.matches.c.match_id, db.matches.c.seq)
                                                       .where(db.matches.c.league_id == lid))}
        hist = conn.execute(select(db.history).where(db.history.c.league_id == lid)).all()
    assert {r.player for r in rows} == set(states)
    for r in rows:
        s = states[r.player]
        assert (r.mu, r.sigma, r.games) == (s.mu, s.sigma, s.games), r.player
        assert (r.last_time is None and math.isnan(s.last_time)) or r.last_time == s.last_time
    want = {}
    for player in states:
        t = ref.trajectory(player)
        for m, mu, sigma in zip(t.match.tolist(), t.mu.tolist(), t.sigma.tolist()):
            want[(player, seqs[ids[m]])] = (mu, sigma)
    assert {(h.player, h.seq): (h.mu, h.sigma) for h in hist} == want
    assert store.rebuild(app.state.engine, name, write=False, tolerance=0.0) == (len(log), [])


@pytest.fixture
def engine_saw(monkeypatch: pytest.MonkeyPatch) -> dict[str, tuple[Any, ...]]:
    """Each match id's result (teams, ranks, scores, higher_is_better, advantage, weight) as the rating engine
    last received it (``League.record_slots`` and ``League.record_many``: the report path, the replays)."""
    seen: dict[str, tuple[Any, ...]] = {}
    slots, many = League.record_slots, League.record_many

    def note(matches: Any) -> None:
        if isinstance(matches, Matches):
            for match in matches:
                seen[str(match.id)] = result_of(match)

    def record_slots(self: League, matches: Any, *args: Any, **kwargs: Any) -> Any:
        note(matches)
        return slots(self, matches, *args, **kwargs)

    def record_many(self: League, matches: Any, *args: Any, **kwargs: Any) -> Any:
        note(matches)
        return many(self, matches, *args, **kwargs)

    monkeypatch.setattr(League, "record_slots", record_slots)
    monkeypatch.setattr(League, "record_many", record_many)
    return seen


# Duels that say more than who won: goals with a home side, a weighty match, race times (lower is better), a
# draw decided by a shoot-out, a draw, graded advantages, a team without a score, the defaults written out.
RESULTS: list[dict[str, Any]] = [
    {"id": "r01", "time": 1, "teams": [["ann"], ["bob"]], "scores": [2, 1], "advantage": [True, False]},
    {"id": "r02", "time": 2, "teams": [["cy"], ["dee"]], "scores": [0, 3], "weight": 2.5},
    {"id": "r03", "time": 3, "teams": [["ann"], ["cy"]], "ranks": [1, 0]},
    {"id": "r04", "time": 4, "teams": [["bob"], ["dee"]], "scores": [61.5, 58.25], "higher_is_better": False},
    {"id": "r05", "time": 5, "teams": [["dee"], ["ann"]], "scores": [1, 1], "ranks": [1, 0], "advantage": [0, 1]},
    {"id": "r06", "time": 6, "teams": [["bob"], ["cy"]], "scores": [1.0, 1.0]},
    {"id": "r07", "time": 7, "teams": [["cy"], ["ann"]], "advantage": [0.5, -0.5], "weight": 0.25},
    {"id": "r08", "time": 8, "teams": [["ann"], ["dee"]], "scores": [3, None]},
    {"id": "r09", "time": 9, "teams": [["bob"], ["ann"]], "scores": [4, 0], "advantage": [False, True], "weight": 3},
    {"id": "r10", "time": 10, "teams": [["dee"], ["cy"]], "ranks": [0, 1], "scores": None, "advantage": [0, 0],
     "weight": 1.0, "higher_is_better": True},
]


def random_results(n: int, seed: int, players: int = 8) -> list[dict[str, Any]]:
    """``n`` duels with goals, home sides and weights drawn at random (ranks from the scores)."""
    rng = np.random.default_rng(seed)
    names = [f"q{i:02d}" for i in range(players)]
    out = []
    for i in range(n):
        a, b = rng.choice(players, 2, replace=False).tolist()
        record: dict[str, Any] = {"id": f"x{seed}-{i:03d}", "time": 100 + i, "teams": [[names[a]], [names[b]]],
                                  "scores": rng.poisson(1.4, 2).tolist()}
        home = int(rng.integers(3))
        if home < 2:
            record["advantage"] = [home == 0, home == 1]
        weight = float(rng.choice([1.0, 1.0, 2.0, 0.5, 1.75]))
        if weight != 1.0:
            record["weight"] = weight
        out.append(record)
    return out


# -- reports ------------------------------------------------------------------------------------------------

def test_reported_fields_are_stored_returned_and_rated_as_the_library_rates_them(
        client: Any, app: Any, tokens: dict[str, str], engine_saw: dict[str, tuple[Any, ...]]) -> None:
    model = create_league(client, tokens, "cup")
    log = RESULTS + random_results(60, seed=7)
    for record in log:
        out = report(client, tokens["reporter"], "cup", record)
        # the answer: the canonical record, the fields in it where they say something
        assert out["record"] == canonical(record), record
    stored = stored_records(app, "cup")
    for record in log:
        want = canonical(record)
        assert stored[record["id"]] == json.dumps(want, sort_keys=True, separators=(",", ":")), record["id"]
    # the defaults, written out or not, store nothing (one representation of "nothing more to say")
    r10 = json.loads(stored["r10"])
    assert not set(FIELDS) & set(r10) and json.loads(stored["r03"]).keys() == r10.keys()
    r01, r04, r06, r08 = (json.loads(stored[i]) for i in ("r01", "r04", "r06", "r08"))
    assert (r01["scores"], r01["ranks"], r01["advantage"], "weight" in r01) == ([2, 1], [0, 1], [1, 0], False)
    assert (r04["scores"], r04["higher_is_better"], r04["ranks"]) == ([61.5, 58.25], False, [1, 0])
    assert (r06["scores"], r06["ranks"]) == ([1, 1], [0, 0])  # a draw; 1.0 is stored as 1
    assert (r08["scores"], r08["ranks"]) == ([3, None], [0, None])
    assert json.loads(stored["r02"])["weight"] == 2.5 and json.loads(stored["r07"])["advantage"] == [0.5, -0.5]

    # the engine was given every field of every match, as the library's Match has it
    assert engine_saw == {r["id"]: result_of(to_match(r)) for r in log}
    assert_rated_like_the_library(app, "cup", model, log)
    leaderboard = client.get(f"{LEAGUES}/cup/leaderboard", params={"limit": 1000}).json()
    ref = podium.League(model).record_many([to_match(r) for r in log])
    assert [(r["player"], r["mu"]) for r in leaderboard["rows"]] == [(w.player, w.mu) for w in ref.leaderboard(k=3.0)]

    # every JSON answer that returns a match has the fields where the match has them
    for record in RESULTS:
        got = client.get(f"{LEAGUES}/cup/matches/{record['id']}").json()
        assert got["record"] == canonical(record) and got["status"] == "recorded"
    recent = client.get(f"{LEAGUES}/cup/matches", params={"limit": 200}).json()["matches"]
    assert {m["id"]: m["record"] for m in recent} == {r["id"]: canonical(r) for r in log}
    page = client.get(f"{LEAGUES}/cup/players/ann", params={"recent": 100}).json()
    by_id = {r["id"]: r for r in log}
    assert page["recent"] and all(m["record"] == canonical(by_id[m["id"]]) for m in page["recent"])
    assert page["recent"][-1]["record"]["advantage"] == [1, 0]  # ann's first match: r01, at home

    # a retry is the same match whether the defaults and the numbers' types are written as sent or as stored
    again = {**RESULTS[0], "scores": [2.0, 1.0], "advantage": [1, 0], "weight": 1}
    assert report(client, tokens["reporter"], "cup", again, 200)["record"] == canonical(RESULTS[0])
    report(client, tokens["reporter"], "cup", {**RESULTS[0], "scores": [3, 1]}, 409)
    report(client, tokens["reporter"], "cup", {**RESULTS[0], "weight": 2}, 409)


def test_a_batch_of_reports_with_and_without_the_fields_is_rated_in_order(
        client: Any, app: Any, tokens: dict[str, str], engine_saw: dict[str, tuple[Any, ...]]) -> None:
    """The group commit rates a batch in one replay: matches with and without the fields side by side."""
    model = create_league(client, tokens, "batch")
    with app.state.engine.connect() as conn:
        league = store.get_league(conn, "batch")
    reporter = tokens["reporter"]
    log = random_results(12, seed=3) + [{"id": "plain-1", "time": 200, "teams": [["q01"], ["q02"]]}] + RESULTS[:5]
    reports = [store.prepare_report(league, record, reporter, 100) for record in log]
    results = store.record_reports(app.state.engine, league, reports)
    assert [r[0] for r in results] == [201] * len(log)  # type: ignore[index]
    assert [r[1]["record"] for r in results] == [canonical(r) for r in log]  # type: ignore[index]
    assert engine_saw == {r["id"]: result_of(to_match(r)) for r in log}
    assert_rated_like_the_library(app, "batch", model, log)


BAD_VALUES: list[tuple[dict[str, Any] | bytes, str, str]] = [
    # (the report's extra keys or its whole body, the field named, what the message shows was received)
    ({"scores": [1]}, "scores", "[1]"),
    ({"scores": "2-1"}, "scores", "'2-1'"),
    ({"scores": {"home": 2}}, "scores", "{'home': 2}"),
    ({"scores": [1, "2"]}, "scores[1]", "'2'"),
    ({"scores": [1, True]}, "scores[1]", "True"),
    ({"scores": [[1], 2]}, "scores[0]", "[1]"),
    (b'{"teams": [["a"], ["b"]], "scores": [1, NaN]}', "scores[1]", "nan"),
    (b'{"teams": [["a"], ["b"]], "scores": [Infinity, 1]}', "scores[0]", "inf"),
    (b'{"teams": [["a"], ["b"]], "scores": [1, 1e999]}', "scores[1]", "inf"),
    ({"scores": [2, 1], "ranks": [1, 0]}, "ranks", "ranks are 1 and 0"),
    ({"scores": [2, 1], "higher_is_better": "no"}, "higher_is_better", "'no'"),
    ({"scores": [2, 1], "higher_is_better": 0}, "higher_is_better", "0"),
    ({"scores": [2, 1], "higher_is_better": None}, "higher_is_better", "None"),
    ({"higher_is_better": False}, "higher_is_better", "no 'scores'"),
    ({"advantage": [1]}, "advantage", "[1]"),
    ({"advantage": [1, 0, 0]}, "advantage", "[1, 0, 0]"),
    ({"advantage": "home"}, "advantage", "'home'"),
    ({"advantage": [1, "away"]}, "advantage[1]", "'away'"),
    ({"advantage": [None, 1]}, "advantage[0]", "None"),
    (b'{"teams": [["a"], ["b"]], "advantage": [0, -Infinity]}', "advantage[1]", "-inf"),
    ({"weight": 0}, "weight", "Got 0."),
    ({"weight": -2}, "weight", "Got -2."),
    ({"weight": "2"}, "weight", "Got '2'."),
    ({"weight": True}, "weight", "Got True."),
    ({"weight": None}, "weight", "Got None."),
    ({"weight": [2]}, "weight", "Got [2]."),
    (b'{"teams": [["a"], ["b"]], "weight": NaN}', "weight", "Got nan."),
    (b'{"teams": [["a"], ["b"]], "weight": Infinity}', "weight", "Got inf."),
    (b'{"teams": [["a"], ["b"]], "weight": 1' + b"0" * 400 + b"}", "weight", "Got 1000"),
    ({"score": [2, 1]}, "score", "Unknown field"),
]


def test_bad_values_are_refused_naming_the_field_and_what_was_sent(client: Any, app: Any,
                                                                   tokens: dict[str, str]) -> None:
    create_league(client, tokens, "strict")
    report(client, tokens["reporter"], "strict", RESULTS[0])
    before = snapshot(app)
    problems = []
    for bad, field, shown in BAD_VALUES:
        body = bad if isinstance(bad, bytes) else json.dumps({"teams": [["a"], ["b"]], **bad}).encode()
        for method, url, token in (("POST", f"{LEAGUES}/strict/matches", "reporter"),
                                   ("PUT", f"{LEAGUES}/strict/matches/r01", "moderator")):  # a correction
            response = client.request(method, url, content=body, headers=auth(tokens[token]))
            out = response.json()
            detail = out.get("detail", "")
            if (response.status_code != 422 or out.get("field") != field or f"'{field.split('[')[0]}" not in detail
                    or shown not in detail):
                problems.append((method, body[:80], response.status_code, out))
    assert not problems
    assert snapshot(app) == before


# -- moderation, void, correct ------------------------------------------------------------------------------

def test_a_pending_match_keeps_its_fields_and_is_rated_with_them_when_approved(
        client: Any, app: Any, tokens: dict[str, str], engine_saw: dict[str, tuple[Any, ...]]) -> None:
    model = create_league(client, tokens, "held", moderated=True)
    for record in RESULTS[:4]:
        out = report(client, tokens["reporter"], "held", record, 202)
        assert out["record"] == canonical(record) and out["status"] == "pending"
    queue = client.get(f"{LEAGUES}/held/pending", headers=auth(tokens["moderator"])).json()
    assert [m["record"] for m in queue["matches"]] == [canonical(r) for r in RESULTS[:4]]
    assert engine_saw == {}
    order = [RESULTS[3], RESULTS[0], RESULTS[1]]  # approved in this order: the log's
    for record in order:
        out = client.post(f"{LEAGUES}/held/matches/{record['id']}/approve", headers=auth(tokens["moderator"]))
        assert out.status_code == 200 and out.json()["record"] == canonical(record)
    assert engine_saw == {r["id"]: result_of(to_match(r)) for r in order}
    assert_rated_like_the_library(app, "held", model, order)


def test_void_and_correct_replay_with_the_fields(client: Any, app: Any, tokens: dict[str, str],
                                                  engine_saw: dict[str, tuple[Any, ...]]) -> None:
    model = create_league(client, tokens, "vc")
    mod = auth(tokens["moderator"])
    log = RESULTS + random_results(30, seed=11)
    for record in log:
        report(client, tokens["reporter"], "vc", record)
    assert_rated_like_the_library(app, "vc", model, log)

    # void a match with scores, an advantage and a weight: the log after it is replayed with its fields
    engine_saw.clear()
    out = client.post(f"{LEAGUES}/vc/matches/r09/void", headers=mod)
    assert out.status_code == 200 and out.json()["status"] == "voided"
    assert out.json()["record"] == canonical(RESULTS[8])  # a voided match keeps its record
    log = [r for r in log if r["id"] != "r09"]
    assert engine_saw == {r["id"]: result_of(to_match(r)) for r in log}  # the whole log, replayed
    assert_rated_like_the_library(app, "vc", model, log)

    # correct a match's scores: the other side won, at home, a match that counts double
    engine_saw.clear()
    fixed = {"teams": [["cy"], ["dee"]], "scores": [4, 2], "advantage": [1, 0], "weight": 2, "time": 2}
    out = client.put(f"{LEAGUES}/vc/matches/r02", json=fixed, headers=mod)
    assert out.status_code == 200, out.text
    assert out.json()["record"] == canonical(fixed | {"id": "r02"}) and out.json()["record"]["ranks"] == [0, 1]
    log = [fixed | {"id": "r02"} if r["id"] == "r02" else r for r in log]
    assert engine_saw == {r["id"]: result_of(to_match(r)) for r in log}
    assert_rated_like_the_library(app, "vc", model, log)

    # race times corrected into goals, a plain match given scores, a scored match made plain again
    corrections = {
        "r04": {"teams": [["bob"], ["dee"]], "scores": [59.75, 58.25], "higher_is_better": False, "time": 4},
        "r03": {"teams": [["ann"], ["cy"]], "scores": [1, 1], "ranks": [0, 1], "advantage": [0.25, 0], "time": 3},
        "r01": {"teams": [["ann"], ["bob"]], "ranks": [1, 0], "time": 1},
    }
    with app.state.engine.connect() as conn:
        league = store.get_league(conn, "vc")
    for match_id, body in corrections.items():
        store.correct_match(app.state.engine, league, match_id, body, store.TokenInfo(0, "moderator", "t"), 100,
                            chunk=7)  # streamed in chunks of 7 matches
        log = [body | {"id": match_id} if r["id"] == match_id else r for r in log]
        assert_rated_like_the_library(app, "vc", model, log)
    plain = json.loads(stored_records(app, "vc")["r01"])
    assert plain == {"id": "r01", "ranks": [1, 0], "teams": [["ann"], ["bob"]], "time": 1}
    assert client.get(f"{LEAGUES}/vc/matches/r03").json()["record"]["advantage"] == [0.25, 0]

    # the log as the replays read it, chunk by chunk: every field of every match
    with app.state.engine.connect() as conn:
        chunks = list(log_chunks(conn, league, 5))
    assert [result_of(m) for _, packed in chunks for m in packed] == [result_of(to_match(r)) for r in log]
    assert [m.id for _, packed in chunks for m in packed] == [r["id"] for r in log]


# -- export and import ----------------------------------------------------------------------------------------

def test_export_and_import_round_trip_the_fields_exactly(client: Any, app: Any, tokens: dict[str, str],
                                                          tmp_path: Path,
                                                          engine_saw: dict[str, tuple[Any, ...]]) -> None:
    model = create_league(client, tokens, "home", moderated=True)
    log = RESULTS + random_results(25, seed=5)
    for record in log:
        report(client, tokens["reporter"], "home", record, 202)
    for record in log[:-3]:
        assert client.post(f"{LEAGUES}/home/matches/{record['id']}/approve",
                           headers=auth(tokens["moderator"])).status_code == 200
    assert client.post(f"{LEAGUES}/home/matches/r05/void", headers=auth(tokens["moderator"])).status_code == 200
    assert client.post(f"{LEAGUES}/home/matches/{log[-1]['id']}/reject",
                       headers=auth(tokens["moderator"])).status_code == 200
    engine = app.state.engine
    first = tmp_path / "home.jsonl"
    export_league(engine, "home", first)
    lines = first.read_text(encoding="utf-8").splitlines()
    exported = {json.loads(line)["id"]: json.loads(line) for line in lines[1:]}
    for record in log:  # each line: the stored record (with its fields) and the bookkeeping
        line = exported[record["id"]]
        assert {k: v for k, v in line.items() if k != "meta"} == canonical(record)

    engine_saw.clear()
    import_league(engine, first, name="away")
    approved = [r for r in log[:-3] if r["id"] != "r05"]
    assert engine_saw == {r["id"]: result_of(to_match(r)) for r in approved}  # the import's replay
    # the same bytes stored, the same statuses and seqs, the same ratings (to the bit)
    with engine.connect() as conn:
        rows = {name: {r.match_id: (r.record, r.seq, r.status, r.time, r.reported, r.decided) for r in conn.execute(
            select(db.matches).where(db.matches.c.league_id == league_id(app, name)))} for name in ("home", "away")}
    assert rows["home"] == rows["away"]
    assert_rated_like_the_library(app, "away", model, approved)
    assert_rated_like_the_library(app, "home", model, approved)
    # and exported again, the same lines (but for the header, and the tokens, which an import leaves empty)
    second = tmp_path / "away.jsonl"
    export_league(engine, "away", second)
    again = second.read_text(encoding="utf-8").splitlines()

    def without_tokens(line: str) -> dict[str, Any]:
        data = json.loads(line)
        data["meta"]["podium"].pop("reporter")
        data["meta"]["podium"].pop("decider")
        return data
    assert [without_tokens(line) for line in again[1:]] == [without_tokens(line) for line in lines[1:]]
    # `podium rate` reads the export with the fields: the approved log, as the league rated it
    read = podium.read_matches(first)
    assert [result_of(m) for m in read] == [result_of(to_match(r)) for r in approved]


def test_an_import_refuses_a_bad_value_naming_the_line_and_the_field(client: Any, app: Any, tokens: dict[str, str],
                                                                      tmp_path: Path) -> None:
    create_league(client, tokens, "src")
    for record in RESULTS[:3]:
        report(client, tokens["reporter"], "src", record)
    good = tmp_path / "src.jsonl"
    export_league(app.state.engine, "src", good)
    lines = good.read_text(encoding="utf-8").splitlines()
    before = snapshot(app)
    for key, value, field in (("scores", [2, "1"], "scores[1]"), ("weight", -1, "weight"),
                              ("advantage", [1], "advantage"), ("higher_is_better", "yes", "higher_is_better")):
        data = json.loads(lines[2])
        data[key] = value
        path = tmp_path / f"bad-{key}.jsonl"
        path.write_text("\n".join([lines[0], lines[1], json.dumps(data), *lines[3:]]) + "\n", encoding="utf-8")
        with pytest.raises(BackupError, match=re.escape(f"bad-{key}.jsonl, line 3: '{field}'")):
            import_league(app.state.engine, path, name="copy")
    assert snapshot(app) == before


# -- matches without the fields -------------------------------------------------------------------------------

# The canonical records of matches without the fields, byte for byte as the server stored them before issue 31.
PLAIN: list[tuple[dict[str, Any], str]] = [
    ({"id": "m0", "teams": [["p1"], ["p2"]], "ranks": [1, 0], "time": 0},
     '{"id":"m0","ranks":[1,0],"teams":[["p1"],["p2"]],"time":0}'),
    ({"id": "m1", "teams": [["p3"], ["p4"]]}, '{"id":"m1","ranks":[0,1],"teams":[["p3"],["p4"]],"time":null}'),
    ({"id": "m2", "teams": [["p1", "p5"], ["p2", "p6"]], "ranks": [0, 0], "weights": [[1, 0.5], [1.0, 1.0]],
      "time": 2.5, "meta": {"venue": "Åre"}},
     '{"id":"m2","meta":{"venue":"\\u00c5re"},"ranks":[0,0],"teams":[["p1","p5"],["p2","p6"]],"time":2.5,'
     '"weights":[[1.0,0.5],[1.0,1.0]]}'),
]


def test_matches_without_the_fields_are_stored_and_rated_as_before(client: Any, app: Any, tokens: dict[str, str]
                                                                   ) -> None:
    model = create_league(client, tokens, "old", "trueskill", {})
    for record, stored in PLAIN:
        out = report(client, tokens["reporter"], "old", record)
        assert not set(FIELDS) & set(out["record"])
        assert stored_records(app, "old")[record["id"]] == stored
    assert_rated_like_the_library(app, "old", model, [r for r, _ in PLAIN])
    page = client.get("/leagues/old/matches/m1").text
    assert 'id="match-score"' not in page and "adv." not in page and "weight " not in page
    assert '<th class="num">Score</th>' not in page


# -- pages ------------------------------------------------------------------------------------------------------

def _result_table(html: str) -> str:
    start = html.index("<h2>Result</h2>")
    return html[start:html.index("</table>", start)]


def test_pages_show_the_score_the_advantage_and_the_weight(client: Any, app: Any, tokens: dict[str, str]) -> None:
    create_league(client, tokens, "show")
    for record in RESULTS:
        report(client, tokens["reporter"], "show", record)
    # goals in team order, the home side marked, the weight shown
    page = client.get("/leagues/show/matches/r09").text
    assert '<b class="score">4 – 0</b>' in page and "lower is better" not in page
    table = _result_table(page)
    assert table.index(">bob</a>") < table.index(">ann</a>")  # in finishing order below
    assert 'adv. 1</span>' in table and table.index(">ann</a>") < table.index("adv. 1")
    assert '<td class="num score">4</td>' in table and '<td class="num score">0</td>' in table
    assert 'id="match-weight"' in page and "weight 3</span>" in page
    # race times as given, lower is better: the winner is the second team
    page = client.get("/leagues/show/matches/r04").text
    assert '<b class="score">61.5 – 58.25</b>' in page and "(lower is better)" in page
    table = _result_table(page)
    assert table.index(">dee</a>") < table.index(">bob</a>") and "adv." not in table
    assert 'id="match-weight"' not in page
    # a draw won on a shoot-out; graded advantages; a team without a score; a weight below 1
    assert '<b class="score">1 – 1</b>' in client.get("/leagues/show/matches/r05").text
    page = client.get("/leagues/show/matches/r07").text
    assert "adv. 0.5" in page and "adv. -0.5" in page and "weight 0.25" in page and 'id="match-score"' not in page
    page = client.get("/leagues/show/matches/r08").text
    assert '<b class="score">3 – DNF</b>' in page and '<td class="num score">—</td>' in page
    # the defaults written out show nothing
    page = client.get("/leagues/show/matches/r10").text
    assert 'id="match-score"' not in page and "adv." not in page and 'id="match-weight"' not in page
    # the lists: the league's recent matches, a player's, show each team's score
    league = client.get("/leagues/show").text
    recent = league[league.index("Recent matches"):]
    assert '<b class="score">4</b>' in recent and "weight 3" in recent and "adv. 1" in recent
    player = client.get("/leagues/show/players/ann").text
    assert '<b class="score">2</b>' in player and "weight 0.25" in player


def test_the_pending_page_shows_the_score(client: Any, app: Any, tokens: dict[str, str]) -> None:
    create_league(client, tokens, "queue", moderated=True)
    report(client, tokens["reporter"], "queue", RESULTS[8], 202)
    client.cookies.set("podium_token", tokens["moderator"])
    page = client.get("/leagues/queue/pending")
    assert page.status_code == 200 and 'data-match="r09"' in page.text
    assert '<b class="score">4</b>' in page.text and "adv. 1" in page.text and "weight 3" in page.text
