"""The league server's JSON API and pages, on real SQLite and real PostgreSQL (every test runs on both).

Reference values come from the library itself: the same matches replayed offline by
``podium.League(model).record_many(...)`` give the ratings, histories, predictions and match qualities the
server must serve (to 1e-9).  Refused requests are checked to store nothing by comparing every row of the
server's tables before and after.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

import numpy as np
import pytest
from sqlalchemy import select, text, update

import podium
from podium.server import db
from podium.server.store import rebuild

from .conftest import auth, upgrade_to

# -- helpers ----------------------------------------------------------------------------------------------

TOL = 1e-9
LEAGUES = "/api/v1/leagues"


def close(a: float, b: float, tol: float = TOL) -> bool:
    """Equal to ``tol``, absolutely (Elo-scale ratings of ~1500 too: the server runs the same kernel on the same
    numbers, so anything beyond rounding is a difference)."""
    return abs(a - b) <= tol


def create_league(client: Any, tokens: dict[str, str], name: str, model: str, params: dict[str, Any] | None = None,
                  moderated: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name, "model": model, "moderated": moderated}
    if params is not None:
        body["params"] = params
    response = client.post(LEAGUES, json=body, headers=auth(tokens["admin"]))
    assert response.status_code == 201, response.text
    return response.json()


def report(client: Any, token: str, league: str, record: Any, expect: int | None = 201) -> Any:
    response = client.post(f"{LEAGUES}/{league}/matches", json=record, headers=auth(token))
    if expect is not None:
        assert response.status_code == expect, response.text
    return response


def to_match(record: dict[str, Any]) -> podium.Match:
    return podium.Match(record["teams"], record.get("ranks"), record.get("weights"), record.get("time"), record.get("id"))


def offline(model: podium.Model, records: Sequence[dict[str, Any]]) -> podium.League:
    """The reference: the library replaying the same log in one go."""
    return podium.League(model).record_many([to_match(r) for r in records])


def snapshot(app: Any) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table the server writes (to prove that a refused request stored nothing)."""
    with app.state.engine.connect() as conn:
        return {table.name: sorted((tuple(row) for row in conn.execute(select(table))), key=repr)
                for table in (db.leagues, db.tokens, db.matches, db.ratings, db.history)}


def count(app: Any, table: Any) -> int:
    with app.state.engine.connect() as conn:
        return len(conn.execute(select(table)).all())


def leaderboard(client: Any, league: str, **params: Any) -> dict[str, Any]:
    response = client.get(f"{LEAGUES}/{league}/leaderboard", params={"limit": 1000, **params})
    assert response.status_code == 200, response.text
    return response.json()


def player_url(league: str, player: str) -> str:
    return f"{LEAGUES}/{league}/players/{quote(player, safe='')}"


def assert_matches_offline(client: Any, app: Any, league: str, model: podium.Model,
                           records: Sequence[dict[str, Any]], *, check_players: bool = True) -> podium.League:
    """The server's leaderboard, stored states, player pages and rebuild all agree with the offline replay."""
    ref = offline(model, records)
    # the leaderboard: same players, same order (conservative score, ties by name), same numbers
    board = leaderboard(client, league)
    want = ref.leaderboard(k=3.0)
    assert board["total"] == len(want) and board["matches"] == len(records)
    assert [r["player"] for r in board["rows"]] == [w.player for w in want]
    for row, w in zip(board["rows"], want):
        assert close(row["mu"], w.mu) and close(row["sigma"], w.sigma), (row, w)
        assert close(row["score"], w.score) and row["games"] == w.games and row["rank"] == w.rank
    by_mu = leaderboard(client, league, by="mu")
    assert [r["player"] for r in by_mu["rows"]] == [w.player for w in ref.leaderboard(k=0.0)]
    # the stored states, including what the next match continues from (games, time of the last match)
    states = ref.states()
    with app.state.engine.connect() as conn:
        league_id = conn.execute(select(db.leagues.c.id).where(db.leagues.c.name == league)).scalar_one()
        rows = conn.execute(select(db.ratings).where(db.ratings.c.league_id == league_id)).all()
    assert {r.player for r in rows} == set(states)
    for r in rows:
        s = states[r.player]
        assert close(r.mu, s.mu) and close(r.sigma, s.sigma) and r.games == s.games
        assert (r.last_time is None and math.isnan(s.last_time)) or close(r.last_time, s.last_time)
        # what the model keeps besides (Glicko-2's volatility and open period), bit for bit
        assert db.bytes_to_extra(r.extra) == s.extra or np.array_equal(db.bytes_to_extra(r.extra), s.extra,
                                                                         equal_nan=True)
    if check_players:
        ids = [r["id"] for r in records]
        for rank, w in enumerate(want, 1):
            # (recent <= games: see test_recent_matches_of_a_player_with_few_games for the default of 10)
            page = client.get(player_url(league, w.player), params={"recent": min(10, w.games)}).json()
            assert page["player"] == w.player and page["rank"] == rank and page["games"] == w.games
            assert close(page["rating"]["mu"], w.mu) and close(page["rating"]["sigma"], w.sigma)
            assert close(page["rating"]["conservative"], w.score)
            trajectory = ref.trajectory(w.player)
            history = page["history"]
            assert [h["match"] for h in history] == [ids[i] for i in trajectory.match.tolist()]
            assert all(close(h["mu"], m) and close(h["sigma"], s)
                       for h, m, s in zip(history, trajectory.mu.tolist(), trajectory.sigma.tolist()))
            recent = page["recent"]
            assert len(recent) == min(10, w.games)
            assert [m["id"] for m in recent] == [h["match"] for h in history[::-1][:10]]
            assert [m["record"]["teams"] for m in recent] == [records[ids.index(m["id"])]["teams"] for m in recent]
            assert [m["after"]["mu"] for m in recent] == [h["mu"] for h in history[::-1][:10]]
    assert rebuild(app.state.engine, league, write=False) == (len(records), [])
    return ref


def sim_records(players: int, matches: int, *, teams: int = 3, team_size: int = 1, draw_probability: float = 0.0,
                seed: int) -> list[dict[str, Any]]:
    return [m.to_record() for m in podium.simulate(players, matches, teams=teams, team_size=team_size,
                                                   draw_probability=draw_probability, seed=seed).matches]


# -- leagues --------------------------------------------------------------------------------------------------

def test_health_and_openapi(client: Any, app: Any) -> None:
    health = client.get("/api/v1/health")
    assert health.status_code == 200 and health.json() == {"status": "ok", "database": app.state.engine.dialect.name}
    schema = client.get("/api/v1/openapi.json").json()
    assert "/api/v1/leagues/{name}/matches" in schema["paths"]


def test_create_league_for_every_model(client: Any, tokens: dict[str, str]) -> None:
    specs: dict[str, dict[str, Any]] = {"elo": {"k": 24}, "pairwise-elo": {}, "plackett-luce": {"order": "elimination"},
             "thurstone": {"k": [[0, 40], [10, 20]]}, "trueskill": {"beta": 4.0, "draw_probability": 0.05},
             "glicko2": {"tau": 0.4, "period": 7.0}}
    for i, (model, params) in enumerate(specs.items()):
        out = create_league(client, tokens, f"l{i}-{model}", model, params, moderated=i % 2 == 1)
        library = podium.models.MODELS[model](**params)
        # every parameter is stored, defaults included
        assert out["params"] == json.loads(json.dumps(library.get_params()))
        assert out["model"] == model and out["moderated"] == (i % 2 == 1)
        assert out["prior"] == {"mu": library.prior.mu, "sigma": library.prior.sigma}
        got = client.get(f"{LEAGUES}/l{i}-{model}").json()
        assert got["params"] == out["params"] and got["matches"] == 0 and got["players"] == 0
    listing = client.get(LEAGUES).json()["leagues"]
    assert [row["name"] for row in listing] == sorted(f"l{i}-{m}" for i, m in enumerate(specs))
    assert all(row["matches"] == 0 and row["players"] == 0 for row in listing)
    # the model's parameters are the league's: a report is rated with k=24, not the default
    report(client, tokens["reporter"], "l0-elo", {"teams": [["a"], ["b"]]})
    board = leaderboard(client, "l0-elo")["rows"]
    ref = podium.League(podium.Elo(k=24)).record(podium.Match([["a"], ["b"]]))
    assert [(r["player"], r["mu"]) for r in board] == [("a", ref["a"].mu), ("b", ref["b"].mu)]


CREATE_REFUSALS: list[tuple[bytes, int, str]] = [
    (b'{"name": "ok", "model": "trueskill", "params": {"beta": -1}}', 422, "params.beta"),
    (b'{"name": "ok", "model": "trueskill", "params": {"beta": "x"}}', 422, "params.beta"),
    (b'{"name": "ok", "model": "trueskill", "params": {"beta": true}}', 422, "params.beta"),
    (b'{"name": "ok", "model": "trueskill", "params": {"draw_probability": 1.5}}', 422, "params.draw_probability"),
    (b'{"name": "ok", "model": "plackett-luce", "params": {"order": "bogus"}}', 422, "params.order"),
    (b'{"name": "ok", "model": "thurstone", "params": {"k": [[0, 40], [10]]}}', 422, "params.k"),
    (b'{"name": "ok", "model": "trueskill", "params": {"max_iterations": 2.5}}', 422, "params.max_iterations"),
    (b'{"name": "ok", "model": "trueskill", "params": {"bogus": 1}}', 422, "params"),
    (b'{"name": "ok", "model": "trueskill", "params": [1]}', 422, "params"),
    (b'{"name": "ok", "model": "glicko"}', 422, "model"),
    (b'{"name": "ok", "model": "glicko2", "params": {"period": 0}}', 422, "params.period"),
    (b'{"name": "ok", "model": 5}', 422, "model"),
    (b'{"name": "Upper", "model": "elo"}', 422, "name"),
    (b'{"name": "-dash", "model": "elo"}', 422, "name"),
    (b'{"name": "", "model": "elo"}', 422, "name"),
    (b'{"name": "a/b", "model": "elo"}', 422, "name"),
    (b'{"name": "' + b"x" * 65 + b'", "model": "elo"}', 422, "name"),
    (b'{"name": 7, "model": "elo"}', 422, "name"),
    (b'{"name": "ok", "model": "elo", "moderated": 1}', 422, "moderated"),
    (b'{"name": "ok", "model": "elo", "colour": "red"}', 422, "colour"),
    (b'{"model": "elo"}', 422, "name"),
    (b'{"name": "ok"}', 422, "model"),
    (b'["ok", "elo"]', 422, "body"),
    (b'{"name": "ok", "model": ', 400, "body"),
    (b'', 400, "body"),
    (b'{"name": "taken", "model": "elo"}', 409, "name"),
]


def test_create_league_refusals_name_the_field_and_store_nothing(client: Any, app: Any, tokens: dict[str, str]) -> None:
    create_league(client, tokens, "taken", "trueskill")
    before = snapshot(app)
    problems = []
    for body, status, field in CREATE_REFUSALS:
        response = client.post(LEAGUES, content=body, headers=auth(tokens["admin"]))
        out = response.json()
        named = field == "body" or field.split(".")[-1] in out.get("detail", "")
        if response.status_code != status or out.get("field") != field or not named:
            problems.append((body[:60], response.status_code, out))
    assert not problems
    assert snapshot(app) == before
    assert [row["name"] for row in client.get(LEAGUES).json()["leagues"]] == ["taken"]


def test_non_finite_league_parameter_names_the_parameter(client: Any, app: Any, tokens: dict[str, str]) -> None:
    before = snapshot(app)
    for raw in (b"NaN", b"Infinity", b"-Infinity"):
        response = client.post(LEAGUES, content=b'{"name": "ok", "model": "trueskill", "params": {"beta": ' + raw + b"}}",
                               headers=auth(tokens["admin"]))
        assert response.status_code == 422
        assert snapshot(app) == before
        assert response.json()["field"] == "params.beta", response.json()


def test_huge_integer_league_parameter_is_a_422(app: Any, tokens: dict[str, str]) -> None:
    from fastapi.testclient import TestClient

    before = snapshot(app)
    with TestClient(app, raise_server_exceptions=False) as client:
        response = client.post(LEAGUES, content=b'{"name": "ok", "model": "trueskill", "params": {"beta": 1'
                               + b"0" * 400 + b"}}", headers=auth(tokens["admin"]))
    assert snapshot(app) == before
    assert response.status_code == 422 and response.json()["field"] == "params.beta", response.text


def test_a_league_that_is_created_can_be_played(app: Any, tokens: dict[str, str]) -> None:
    from fastapi.testclient import TestClient

    with TestClient(app, raise_server_exceptions=False) as client:
        created = client.post(LEAGUES, json={"name": "big", "model": "trueskill", "params": {"max_iterations": 10 ** 30}},
                              headers=auth(tokens["admin"]))
        if created.status_code == 422:
            assert created.json()["field"] == "params.max_iterations"
            return
        assert created.status_code == 201
        response = client.post(f"{LEAGUES}/big/matches", json={"teams": [["a"], ["b"]]}, headers=auth(tokens["reporter"]))
        assert response.status_code == 201, response.text


# -- roles and tokens -----------------------------------------------------------------------------------------

def test_roles_guard_every_write_and_reads_are_public(client: Any, app: Any, tokens: dict[str, str]) -> None:
    create_league(client, tokens, "open", "trueskill")
    create_league(client, tokens, "mod", "trueskill", moderated=True)
    report(client, tokens["reporter"], "open", {"id": "r1", "teams": [["a"], ["b"]]})
    report(client, tokens["reporter"], "mod", {"id": "p1", "teams": [["a"], ["b"]]}, 202)
    match = {"teams": [["c"], ["d"]]}
    writes: list[tuple[str, str, dict[str, Any] | None, str]] = [
        ("POST", LEAGUES, {"name": "new", "model": "elo"}, "admin"),
        ("POST", "/api/v1/tokens", {"role": "reporter"}, "admin"),
        ("POST", f"{LEAGUES}/open/matches", match, "reporter"),
        ("POST", f"{LEAGUES}/mod/matches/p1/approve", None, "moderator"),
        ("POST", f"{LEAGUES}/mod/matches/p1/reject", None, "moderator"),
        ("POST", f"{LEAGUES}/open/matches/r1/void", None, "moderator"),
        ("PUT", f"{LEAGUES}/open/matches/r1", {"teams": [["b"], ["a"]]}, "moderator"),
        ("GET", f"{LEAGUES}/mod/pending", None, "moderator"),
    ]
    from podium.server.store import create_token

    revoked = create_token(app.state.engine, "admin", "revoked")
    with app.state.engine.begin() as conn:
        conn.execute(update(db.tokens).where(db.tokens.c.label == "revoked").values(revoked=True))
    before = snapshot(app)
    for method, url, body, role in writes:
        kwargs: dict[str, Any] = {} if body is None else {"json": body}
        for headers in ({}, auth("pod_not_a_token"), auth(revoked), {"Authorization": "Basic abc"},
                        {"Authorization": "Bearer "}):
            response = client.request(method, url, headers=headers, **kwargs)
            assert response.status_code == 401, (method, url, headers, response.text)
            assert response.json()["field"] == "authorization"
            assert response.headers["www-authenticate"] == "Bearer"
        roles = ("reporter", "moderator", "admin")
        for too_low in roles[: roles.index(role)]:
            response = client.request(method, url, headers=auth(tokens[too_low]), **kwargs)
            assert response.status_code == 403, (method, url, too_low, response.text)
            assert response.json()["field"] == "authorization" and role in response.json()["detail"]
    assert snapshot(app) == before
    # reads need no token
    for url in (f"{LEAGUES}", f"{LEAGUES}/open", f"{LEAGUES}/open/leaderboard", f"{LEAGUES}/open/players/a",
                f"{LEAGUES}/open/matches", f"{LEAGUES}/open/matches/r1", "/", "/leagues/open", "/leagues/open/players/a"):
        assert client.get(url).status_code == 200, url
    assert client.post(f"{LEAGUES}/open/predict", json={"players": ["a", "b"]}).status_code == 200
    assert client.post(f"{LEAGUES}/open/balance", json={"players": ["a", "b"]}).status_code == 200
    # a higher role may do what a lower one may: an admin reports, moderates and reads the queue
    report(client, tokens["admin"], "open", match)
    assert client.get(f"{LEAGUES}/mod/pending", headers=auth(tokens["admin"])).json()["total"] == 1
    assert client.post(f"{LEAGUES}/mod/matches/p1/approve", headers=auth(tokens["admin"])).status_code == 200


def test_admin_creates_tokens_that_work(client: Any, app: Any, tokens: dict[str, str]) -> None:
    create_league(client, tokens, "lg", "elo")
    response = client.post("/api/v1/tokens", json={"role": "reporter", "label": "bot"}, headers=auth(tokens["admin"]))
    assert response.status_code == 201 and response.json()["role"] == "reporter"
    new = response.json()["token"]
    assert new.startswith("pod_") and new not in json.dumps(snapshot(app), default=str)  # only its digest is stored
    report(client, new, "lg", {"teams": [["a"], ["b"]]})
    assert client.post(f"{LEAGUES}", json={"name": "x", "model": "elo"}, headers=auth(new)).status_code == 403
    before = snapshot(app)
    for body, field in (({"role": "root"}, "role"), ({"role": "admin", "label": 5}, "label"), ({}, "role"),
                        ({"role": "admin", "scope": "all"}, "scope")):
        response = client.post("/api/v1/tokens", json=body, headers=auth(tokens["admin"]))
        assert response.status_code == 422 and response.json()["field"] == field, response.text
    assert snapshot(app) == before


# -- matches: recording and the offline replay ----------------------------------------------------------------

def _vary(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Give some simulated matches partial play, a team that did not finish, and ISO dates for times."""
    out = []
    for i, r in enumerate(records):
        r = dict(r)
        if i % 7 == 3:
            r["weights"] = [[0.5 if (j + k) % 2 == 0 else 1.0 for k in range(len(team))] for j, team in enumerate(r["teams"])]
        if i % 9 == 4:
            r["ranks"] = [None if rank == max(r["ranks"]) else rank for rank in r["ranks"]]
        out.append(r)
    return out


REPLAYS = [
    pytest.param("trueskill", {"beta": 4.0}, podium.TrueSkill(beta=4.0),
                 dict(players=24, matches=200, team_size=2, draw_probability=0.1, seed=11), id="trueskill"),
    pytest.param("plackett-luce", {"order": "elimination"}, podium.PlackettLuce(order="elimination"),
                 dict(players=20, matches=150, seed=12), id="plackett-luce"),
    pytest.param("thurstone", {}, podium.Thurstone(), dict(players=20, matches=150, draw_probability=0.1, seed=13),
                 id="thurstone"),
    pytest.param("trueskill", {"drift": 0.3}, podium.TrueSkill(drift=0.3),
                 dict(players=12, matches=50, seed=14), id="trueskill-drift"),
    pytest.param("glicko2", {"period": 7.0}, podium.Glicko2(period=7.0),
                 dict(players=12, matches=80, team_size=2, draw_probability=0.1, seed=15), id="glicko2-periods"),
]


@pytest.mark.parametrize("model_name, params, model, sim", REPLAYS)
def test_recorded_matches_equal_the_offline_replay(client: Any, app: Any, tokens: dict[str, str], model_name: str,
                                                   params: dict[str, Any], model: podium.Model, sim: dict[str, Any]) -> None:
    create_league(client, tokens, "season", model_name, params)
    sim = dict(sim)
    records = _vary(sim_records(sim.pop("players"), sim.pop("matches"), **sim))
    if "drift" in params or "period" in params:  # times as ISO dates, days apart: drift, rating periods of a week
        records = [r | {"time": f"2024-{1 + i // 28:02d}-{1 + i % 28:02d}"} for i, r in enumerate(records)]
    responses = [report(client, tokens["reporter"], "season", r).json() for r in records]
    ref = assert_matches_offline(client, app, "season", model, records)
    # each report's answer shows the ratings before and after that match, as the replay had them
    slots = ref.slots(0)
    after = {(m, p): (a, s) for m, p, a, s in zip(slots[0].tolist(), slots[1], slots[2].tolist(), slots[3].tolist())}
    last: dict[str, tuple[float, float]] = {}
    prior = (model.prior.mu, model.prior.sigma)
    for i, (record, out) in enumerate(zip(records, responses)):
        assert out["status"] == "recorded" and out["seq"] == i and out["id"] == record["id"]
        assert out["record"]["teams"] == record["teams"]
        assert [r["player"] for r in out["ratings"]] == [p for team in record["teams"] for p in team]
        for r in out["ratings"]:
            want = after[(i, r["player"])]
            assert close(r["after"]["mu"], want[0]) and close(r["after"]["sigma"], want[1])
            before = last.get(r["player"], prior)
            assert close(r["before"]["mu"], before[0]) and close(r["before"]["sigma"], before[1])
            last[r["player"]] = want
    # GET of one match is the same as the report's answer
    middle = len(records) // 3
    assert client.get(f"{LEAGUES}/season/matches/{records[middle]['id']}").json() == responses[middle]
    recent = client.get(f"{LEAGUES}/season/matches", params={"limit": 5}).json()["matches"]
    assert [m["id"] for m in recent] == [r["id"] for r in records[::-1][:5]]
    listing = client.get(LEAGUES).json()["leagues"]
    assert listing == [{"name": "season", "model": model_name, "moderated": False, "matches": len(records),
                        "players": len(ref.players)}]


def test_leaderboard_parameters(client: Any, tokens: dict[str, str]) -> None:
    create_league(client, tokens, "lb", "trueskill")
    records = sim_records(15, 40, teams=2, seed=3) + [{"id": "late", "teams": [["newcomer"], ["p00000"]]}]
    # exact ties: three players who each beat a newcomer once, two who drew their only match
    ties: list[dict[str, Any]] = [{"id": f"tie{i}", "teams": [[winner], [f"loser{i}"]]}
                                  for i, winner in enumerate(["tie-b", "Tie-Z", "tie-a"])]
    ties.append({"id": "draw", "teams": [["zz"], ["ZZ"]], "ranks": [0, 0]})
    for r in records:
        report(client, tokens["reporter"], "lb", r)
    ref = offline(podium.TrueSkill(), records)
    # ties are broken by name, as the library does (code point order: "Tie-Z" < "tie-a")
    for r in ties:
        report(client, tokens["reporter"], "lb", r)
    tied = offline(podium.TrueSkill(), records + ties)
    assert tied.rating("tie-a") == tied.rating("tie-b") == tied.rating("Tie-Z") and tied.rating("zz") == tied.rating("ZZ")
    for k in (0.0, 3.0):
        want = [w.player for w in tied.leaderboard(k=k)]
        assert [r["player"] for r in leaderboard(client, "lb", k=k)["rows"]] == want
        assert want.index("Tie-Z") + 1 == want.index("tie-a") == want.index("tie-b") - 1
        for name in ("Tie-Z", "tie-a", "tie-b", "ZZ", "zz", "loser0", "loser2"):
            assert client.get(player_url("lb", name), params={"k": k}).json()["rank"] == want.index(name) + 1
    for r in ties:
        assert client.post(f"{LEAGUES}/lb/matches/{r['id']}/void", headers=auth(tokens["moderator"])).status_code == 200
    full = leaderboard(client, "lb")["rows"]
    # pages of 4 put together are the whole board, ranks continuing across pages
    pages = [leaderboard(client, "lb", limit=4, offset=o)["rows"] for o in range(0, 20, 4)]
    assert [r for page in pages for r in page] == full
    assert [r["rank"] for r in full] == list(range(1, 17))
    # k: the conservative score mu - k sigma
    for k in (0.0, 1.5, 3.0):
        board = leaderboard(client, "lb", k=k)
        assert board["k"] == k and [r["player"] for r in board["rows"]] == [w.player for w in ref.leaderboard(k=k)]
    assert leaderboard(client, "lb", by="mu", k=2.0)["k"] == 0.0
    # min_games leaves out the newcomer (1 game) and counts only the rest
    board = leaderboard(client, "lb", min_games=2)
    assert board["total"] == len(ref.leaderboard(min_games=2)) == 15
    assert "newcomer" not in [r["player"] for r in board["rows"]]
    assert leaderboard(client, "lb", limit=0)["rows"] == [] and leaderboard(client, "lb", limit=0)["total"] == 16
    # the player's rank follows k too
    player = ref.leaderboard(k=1.0)[4].player
    assert client.get(player_url("lb", player), params={"k": 1.0}).json()["rank"] == 5
    for params, field in (({"by": "score"}, "by"), ({"k": -1}, "k"), ({"k": "nan"}, "k"), ({"k": "inf"}, "k"),
                          ({"k": "x"}, "k"), ({"limit": -1}, "limit"), ({"limit": 1001}, "limit"),
                          ({"offset": -1}, "offset"), ({"min_games": "many"}, "min_games")):
        response = client.get(f"{LEAGUES}/lb/leaderboard", params=params)
        assert response.status_code == 422 and response.json()["field"] == field, (params, response.text)
        assert field in response.json()["detail"]
    for url, field in ((f"{LEAGUES}/nope/leaderboard", "league"), (f"{LEAGUES}/lb/players/ghost", "player"),
                       (f"{LEAGUES}/lb/matches/ghost", "match"), (f"{LEAGUES}/nope", "league")):
        response = client.get(url)
        assert response.status_code == 404 and response.json()["field"] == field, url


def test_recent_matches_can_be_limited(client: Any, tokens: dict[str, str]) -> None:
    create_league(client, tokens, "rc", "elo")
    records = [{"id": f"g{i}", "teams": [["a"], [f"b{i}"]]} for i in range(14)]
    for r in records:
        report(client, tokens["reporter"], "rc", r)
    for n, want in ((0, []), (1, ["g13"]), (10, [f"g{i}" for i in range(13, 3, -1)]),
                    (14, [f"g{i}" for i in range(13, -1, -1)])):
        page = client.get(player_url("rc", "a"), params={"recent": n}).json()
        assert [m["id"] for m in page["recent"]] == want and len(page["history"]) == 14
    assert [m["id"] for m in client.get(player_url("rc", "a")).json()["recent"]] == [f"g{i}" for i in range(13, 3, -1)]
    for bad in (-1, 101, "x"):
        response = client.get(player_url("rc", "a"), params={"recent": bad})
        assert response.status_code == 422 and response.json()["field"] == "recent"


def test_recent_matches_of_a_player_with_few_games(client: Any, tokens: dict[str, str]) -> None:
    create_league(client, tokens, "few", "elo")
    for i in range(6):
        report(client, tokens["reporter"], "few", {"id": f"g{i}", "teams": [["a"], [f"b{i}"]]})
    page = client.get(player_url("few", "a")).json()
    assert [m["id"] for m in page["recent"]] == ["g5", "g4", "g3", "g2", "g1", "g0"]
    html = client.get("/leagues/few/players/a").text
    assert all(f"/leagues/few/matches/g{i}" in html for i in range(6))


# -- idempotent retries ---------------------------------------------------------------------------------------

def test_retries_with_the_same_id_are_idempotent(client: Any, app: Any, tokens: dict[str, str]) -> None:
    create_league(client, tokens, "idem", "plackett-luce")
    create_league(client, tokens, "other", "plackett-luce")
    reporter = tokens["reporter"]
    record = {"id": "game-1", "teams": [["a"], ["b"], ["c"]], "ranks": [1, 0, 2], "time": "2024-05-01T12:00:00Z"}
    first = report(client, reporter, "idem", record).json()
    before = snapshot(app)
    # the same report again: 200 with the stored match, and nothing new
    again = report(client, reporter, "idem", record, 200).json()
    assert again == first
    # the same content spelt differently (explicit full weights) is the same match
    assert report(client, reporter, "idem", record | {"weights": [[1], [1.0], [1]]}, 200).json() == first
    assert snapshot(app) == before
    # different content under that id: 409, nothing written
    for changed in ({"ranks": [0, 1, 2]}, {"teams": [["a"], ["b"], ["d"]]}, {"time": "2024-05-02"}, {"meta": {"x": 1}}):
        response = report(client, reporter, "idem", record | changed, 409)
        assert response.json()["field"] == "id" and "game-1" in response.json()["detail"]
    assert snapshot(app) == before
    # ids are per league
    assert report(client, reporter, "other", record).json()["seq"] == 0
    # a report without an id gets one; it can be fetched by it, and a second such report is a second match
    generated = report(client, reporter, "idem", {"teams": [["a"], ["b"]]}).json()
    assert client.get(f"{LEAGUES}/idem/matches/{generated['id']}").json() == generated
    assert report(client, reporter, "idem", {"teams": [["a"], ["b"]]}).json()["id"] != generated["id"]
    records: list[dict[str, Any]] = [record, {"teams": [["a"], ["b"]]}, {"teams": [["a"], ["b"]]}]
    assert_matches_offline(client, app, "idem", podium.PlackettLuce(), [r | {"id": f"x{i}"} for i, r in enumerate(records)],
                           check_players=False)


# -- moderation -----------------------------------------------------------------------------------------------

def test_moderated_league_records_only_what_is_approved_in_approval_order(client: Any, app: Any,
                                                                           tokens: dict[str, str]) -> None:
    create_league(client, tokens, "mod", "trueskill", {"beta": 4.0}, moderated=True)
    mod, reporter = auth(tokens["moderator"]), tokens["reporter"]
    records = sim_records(8, 12, teams=3, seed=5)
    for r in records:
        out = report(client, reporter, "mod", r, 202).json()
        assert out["status"] == "pending" and out["seq"] is None and "ratings" not in out
    assert report(client, reporter, "mod", records[0], 200).json()["status"] == "pending"  # a retry
    assert leaderboard(client, "mod")["rows"] == [] and count(app, db.ratings) == 0 and count(app, db.history) == 0
    queue = client.get(f"{LEAGUES}/mod/pending", headers=mod).json()
    assert queue["total"] == 12 and [m["id"] for m in queue["matches"]] == [r["id"] for r in records]
    page = client.get(f"{LEAGUES}/mod/pending", params={"limit": 5, "offset": 10}, headers=mod).json()
    assert [m["id"] for m in page["matches"]] == [records[10]["id"], records[11]["id"]]
    # approve in an order of the moderator's choosing; that order is the log
    order = [7, 2, 9, 0, 11, 4, 5]
    for n, i in enumerate(order):
        out = client.post(f"{LEAGUES}/mod/matches/{records[i]['id']}/approve", headers=mod)
        assert out.status_code == 200 and out.json()["status"] == "recorded" and out.json()["seq"] == n
    for i in (1, 3):
        out = client.post(f"{LEAGUES}/mod/matches/{records[i]['id']}/reject", headers=mod)
        assert out.status_code == 200 and out.json()["status"] == "rejected"
    approved = [records[i] for i in order]
    assert_matches_offline(client, app, "mod", podium.TrueSkill(beta=4.0), approved)
    before = snapshot(app)
    # approving again is a no-op; what is decided cannot be decided the other way
    again = client.post(f"{LEAGUES}/mod/matches/{records[7]['id']}/approve", headers=mod)
    assert again.status_code == 200 and again.json()["seq"] == 0
    for action, i in (("approve", 1), ("reject", 1), ("reject", 7), ("void", 6)):
        response = client.post(f"{LEAGUES}/mod/matches/{records[i]['id']}/{action}", headers=mod)
        assert response.status_code == 409 and response.json()["field"] == "status", (action, i, response.text)
    for action in ("approve", "reject", "void"):
        response = client.post(f"{LEAGUES}/mod/matches/nope/{action}", headers=mod)
        assert response.status_code == 404 and response.json()["field"] == "match"
    assert client.post(f"{LEAGUES}/nope/matches/x/approve", headers=mod).status_code == 404
    assert snapshot(app) == before
    assert client.get(f"{LEAGUES}/mod/pending", headers=mod).json()["total"] == 3
    # a pending match can be corrected before it is approved; the approved version is the corrected one
    fixed = {"teams": records[6]["teams"], "ranks": [0, 0, 1]}
    out = client.put(f"{LEAGUES}/mod/matches/{records[6]['id']}", json=fixed, headers=mod)
    assert out.status_code == 200 and out.json()["status"] == "pending" and out.json()["record"]["ranks"] == [0, 0, 1]
    assert client.post(f"{LEAGUES}/mod/matches/{records[6]['id']}/approve", headers=mod).status_code == 200
    # (the correction sent no time, so the corrected match has none)
    assert_matches_offline(client, app, "mod", podium.TrueSkill(beta=4.0), approved + [fixed | {"id": records[6]["id"]}])


# -- void and correct -----------------------------------------------------------------------------------------

def test_void_and_correct_replay_from_the_changed_match(client: Any, app: Any, tokens: dict[str, str]) -> None:
    model = podium.TrueSkill(beta=4.0)
    create_league(client, tokens, "vc", "trueskill", {"beta": 4.0})
    mod = auth(tokens["moderator"])
    records = sim_records(10, 50, teams=3, seed=21)
    records.insert(30, {"id": "solo", "time": 29.5, "teams": [["ghost"], ["p00001"]], "ranks": [0, 1]})
    for r in records:
        report(client, tokens["reporter"], "vc", r)
    log = [dict(r) for r in records]
    assert_matches_offline(client, app, "vc", model, log, check_players=False)

    # void a match in the middle
    out = client.post(f"{LEAGUES}/vc/matches/{log[10]['id']}/void", headers=mod)
    assert out.status_code == 200 and out.json()["status"] == "voided" and "ratings" not in out.json()
    voided = log.pop(10)
    assert_matches_offline(client, app, "vc", model, log)
    assert client.get(f"{LEAGUES}/vc/matches/{voided['id']}").json()["status"] == "voided"
    assert client.get(f"{LEAGUES}/vc/matches/{log[10]['id']}").json()["ratings"][0]["before"] is not None

    # correct a match: other result, one player replaced by a newcomer
    target = log[20]
    corrected = {"teams": [[target["teams"][0][0]], ["newbie"], [target["teams"][2][0]]], "ranks": [2, 0, 1],
                 "time": target["time"]}
    out = client.put(f"{LEAGUES}/vc/matches/{target['id']}", json=corrected, headers=mod)
    assert out.status_code == 200, out.text
    assert out.json()["record"]["teams"] == corrected["teams"] and out.json()["seq"] == records.index(target)
    log[20] = corrected | {"id": target["id"]}
    ref = assert_matches_offline(client, app, "vc", model, log)
    assert "newbie" in ref.players and target["teams"][1][0] in ref.players

    # correct the match that was ghost's only one: ghost leaves the league
    solo = log.index(next(r for r in log if r["id"] == "solo"))
    log[solo] = {"id": "solo", "time": 29.5, "teams": [["p00002"], ["p00001"]], "ranks": [1, 0]}
    assert client.put(f"{LEAGUES}/vc/matches/solo", json=log[solo], headers=mod).status_code == 200
    assert_matches_offline(client, app, "vc", model, log)
    assert client.get(f"{LEAGUES}/vc/players/ghost").status_code == 404

    # void a match that was a player's only one: that player leaves the league
    report(client, tokens["reporter"], "vc", {"id": "once", "teams": [["p00005"], ["visitor"]], "time": 99})
    assert client.get(f"{LEAGUES}/vc/players/visitor").status_code == 200
    assert client.post(f"{LEAGUES}/vc/matches/once/void", headers=mod).status_code == 200
    assert client.get(f"{LEAGUES}/vc/players/visitor").status_code == 404
    assert_matches_offline(client, app, "vc", model, log)

    # void the newest match, then report another: it goes to the end of the log
    assert client.post(f"{LEAGUES}/vc/matches/{log[-1]['id']}/void", headers=mod).status_code == 200
    log.pop()
    new = {"id": "after-void", "teams": [["p00003"], ["newbie"], ["p00004"]], "time": 100}
    report(client, tokens["reporter"], "vc", new)
    log.append(new)
    assert_matches_offline(client, app, "vc", model, log)

    # refusals change nothing
    before = snapshot(app)
    for method, url, body, status, field in (
        ("POST", f"{LEAGUES}/vc/matches/{voided['id']}/void", None, 409, "status"),
        ("PUT", f"{LEAGUES}/vc/matches/{voided['id']}", {"teams": [["a"], ["b"]]}, 409, "status"),
        ("PUT", f"{LEAGUES}/vc/matches/{log[5]['id']}", {"id": "other", "teams": [["a"], ["b"]]}, 422, "id"),
        ("PUT", f"{LEAGUES}/vc/matches/{log[5]['id']}", {"teams": [["a"], ["a"]]}, 422, "teams"),
        ("PUT", f"{LEAGUES}/vc/matches/{log[5]['id']}", {"teams": [["a"], ["<b>"]]}, 422, "teams[1][0]"),
        ("PUT", f"{LEAGUES}/vc/matches/{log[5]['id']}", {"teams": [["a"], ["b"]], "ranks": [0]}, 422, "ranks"),
        ("PUT", f"{LEAGUES}/vc/matches/{log[5]['id']}", {"teams": [["a"], ["b"]], "winner": "a"}, 422, "winner"),
        ("PUT", f"{LEAGUES}/vc/matches/nope", {"teams": [["a"], ["b"]]}, 404, "match"),
        ("POST", f"{LEAGUES}/vc/matches/nope/void", None, 404, "match"),
    ):
        response = client.request(method, url, headers=mod, **({} if body is None else {"json": body}))
        assert response.status_code == status and response.json()["field"] == field, (url, body, response.text)
    response = client.put(f"{LEAGUES}/vc/matches/{log[5]['id']}", content=b"{", headers=mod)
    assert response.status_code == 400 and response.json()["field"] == "body"
    assert snapshot(app) == before
    # a retry of the original report of a corrected match is now a different match
    report(client, tokens["reporter"], "vc", target, 409)
    # void everything: the league is empty again
    for r in log:
        assert client.post(f"{LEAGUES}/vc/matches/{r['id']}/void", headers=mod).status_code == 200
    assert count(app, db.ratings) == 0 and count(app, db.history) == 0
    assert leaderboard(client, "vc")["rows"] == [] and rebuild(app.state.engine, "vc", write=False) == (0, [])


def test_rebuild_finds_and_repairs_tampered_ratings(client: Any, app: Any, tokens: dict[str, str]) -> None:
    model = podium.Thurstone()
    create_league(client, tokens, "tamper", "thurstone")
    records = sim_records(8, 30, teams=3, seed=31)
    for r in records:
        report(client, tokens["reporter"], "tamper", r)
    engine = app.state.engine
    assert rebuild(engine, "tamper", write=False) == (30, [])
    victim = records[0]["teams"][0][0]
    with engine.begin() as conn:
        conn.execute(update(db.ratings).where(db.ratings.c.player == victim).values(mu=db.ratings.c.mu + 0.5))
        conn.execute(text("UPDATE history SET sigma = sigma + 1 WHERE seq = 3"))
    n, diffs = rebuild(engine, "tamper", write=False)
    assert n == 30
    assert [(d.table, d.player, d.column) for d in diffs if d.table == "ratings"] == [("ratings", victim, "mu")]
    stored = next(d for d in diffs if d.table == "ratings")
    assert stored.stored is not None and stored.replayed is not None
    assert close(stored.stored - stored.replayed, 0.5, 1e-6)
    history_diffs = [d for d in diffs if d.table == "history"]
    assert {(d.player, d.seq, d.column) for d in history_diffs} == {(p, 3, "sigma") for t in records[3]["teams"] for p in t}
    # write=False wrote nothing: the tampered value is still served
    tampered = {r["player"]: r["mu"] for r in leaderboard(client, "tamper")["rows"]}
    assert close(tampered[victim], offline(model, records).rating(victim).mu + 0.5, 1e-6)
    assert rebuild(engine, "tamper", write=False)[1] == diffs
    # a tolerance above the tampering hides it
    assert rebuild(engine, "tamper", write=False, tolerance=1.0) == (30, [])
    # write=True puts the replay back
    assert rebuild(engine, "tamper")[1] == diffs
    assert_matches_offline(client, app, "tamper", model, records)
    # a deleted row and a stray row are differences too
    with engine.begin() as conn:
        conn.execute(db.ratings.delete().where(db.ratings.c.player == victim))
        league_id = conn.execute(select(db.leagues.c.id)).scalar_one()
        conn.execute(db.ratings.insert().values(league_id=league_id, player="stray", mu=1.0, sigma=0.0, games=1))
    diffs = rebuild(engine, "tamper", write=False)[1]
    timed = not math.isnan(offline(model, records).states()[victim].last_time)
    assert {(d.player, d.column) for d in diffs} == {(victim, c) for c in ("mu", "sigma", "games")} | {
        ("stray", c) for c in ("mu", "sigma", "games")} | ({(victim, "last_time")} if timed else set())
    rebuild(engine, "tamper")
    assert_matches_offline(client, app, "tamper", model, records, check_players=False)
    with pytest.raises(Exception, match="No league"):
        rebuild(engine, "nope")


def test_rebuild_checks_what_glicko2_keeps_besides_the_rating(client: Any, app: Any, tokens: dict[str, str]) -> None:
    model = podium.Glicko2(period=7.0)
    create_league(client, tokens, "periods", "glicko2", {"period": 7.0})
    records = [r | {"time": f"2024-{1 + i // 28:02d}-{1 + i % 28:02d}"} for i, r in enumerate(sim_records(8, 40, seed=32))]
    for r in records:
        report(client, tokens["reporter"], "periods", r)
    engine = app.state.engine
    assert rebuild(engine, "periods", write=False) == (40, [])
    victim = records[-1]["teams"][0][0]  # in the open period: its start and sums are stored too
    state = offline(model, records).states([victim])[victim]
    assert not math.isnan(state.extra[1])
    tampered = (0.07,) + state.extra[1:]
    with engine.begin() as conn:
        conn.execute(update(db.ratings).where(db.ratings.c.player == victim).values(extra=db.extra_to_bytes(tampered)))
    assert [(d.player, d.column, d.stored, d.replayed) for d in rebuild(engine, "periods", write=False)[1]] == [
        (victim, "extra[0]", 0.07, state.extra[0])]
    rebuild(engine, "periods")
    assert_matches_offline(client, app, "periods", model, records)


# -- refused reports ------------------------------------------------------------------------------------------

_MANY = json.dumps({"teams": [[f"p{i:05d}"] for i in range(10_000)]}).encode()
BAD_REPORTS: list[tuple[bytes, int, str]] = [
    (b'{"teams": [["a"], ["b"]', 400, "body"),
    (b"", 400, "body"),
    (b"   ", 400, "body"),
    (b'{"teams": [["\xff"], ["b"]]}', 400, "body"),
    (b"[" * 100_000 + b"]" * 100_000, 400, "body"),
    (b'[["a"], ["b"]]', 422, "body"),
    (b'"teams"', 422, "body"),
    (b'{"teams": [["a"], ["b"]], "winner": "a"}', 422, "winner"),
    (b'{"ranks": [0, 1]}', 422, "teams"),
    (b'{"teams": "a vs b"}', 422, "teams"),
    (b'{"teams": {"a": 1}}', 422, "teams"),
    (b'{"teams": [["a"]]}', 422, "teams"),
    (b'{"teams": []}', 422, "teams"),
    (b'{"teams": [["a"], []]}', 422, "teams[1]"),
    (b'{"teams": ["a", ["b"]]}', 422, "teams[0]"),
    (b'{"teams": [["a"], [5]]}', 422, "teams[1][0]"),
    (b'{"teams": [["a"], [null]]}', 422, "teams[1][0]"),
    (b'{"teams": [["a"], [NaN]]}', 422, "teams[1][0]"),
    (b'{"teams": [["a", "a"], ["b"]]}', 422, "teams"),
    (b'{"teams": [["a"], ["b"], ["a"]]}', 422, "teams"),
    (_MANY, 422, "teams"),
    (b'{"teams": [["<script>alert(1)</script>"], ["b"]]}', 422, "teams[0][0]"),
    (b'{"teams": [["a"], ["x\'; DROP TABLE matches; --"]]}', 422, "teams[1][0]"),
    (b'{"teams": [["a"], ["Robert\\"); DROP TABLE ratings;--"]]}', 422, "teams[1][0]"),
    (b'{"teams": [["a&amp;b"], ["b"]]}', 422, "teams[0][0]"),
    (b'{"teams": [["a/b"], ["b"]]}', 422, "teams[0][0]"),
    (b'{"teams": [["a\\u0000b"], ["b"]]}', 422, "teams[0][0]"),
    (b'{"teams": [["a\\nb"], ["b"]]}', 422, "teams[0][0]"),
    (b'{"teams": [[""], ["b"]]}', 422, "teams[0][0]"),
    (b'{"teams": [[" a"], ["b"]]}', 422, "teams[0][0]"),
    (b'{"teams": [["' + b"x" * 65 + b'"], ["b"]]}', 422, "teams[0][0]"),
    (b'{"teams": [["a"], ["b"]], "ranks": [0]}', 422, "ranks"),
    (b'{"teams": [["a"], ["b"]], "ranks": "0,1"}', 422, "ranks"),
    (b'{"teams": [["a"], ["b"]], "ranks": [0, "1"]}', 422, "ranks[1]"),
    (b'{"teams": [["a"], ["b"]], "ranks": [0, 1.5]}', 422, "ranks[1]"),
    (b'{"teams": [["a"], ["b"]], "ranks": [0, -1]}', 422, "ranks[1]"),
    (b'{"teams": [["a"], ["b"]], "ranks": [true, 0]}', 422, "ranks[0]"),
    (b'{"teams": [["a"], ["b"]], "ranks": [NaN, 0]}', 422, "ranks[0]"),
    (b'{"teams": [["a"], ["b"]], "ranks": [0, Infinity]}', 422, "ranks[1]"),
    (b'{"teams": [["a"], ["b"]], "weights": [[1]]}', 422, "weights"),
    (b'{"teams": [["a"], ["b"]], "weights": [[1], [1, 1]]}', 422, "weights[1]"),
    (b'{"teams": [["a"], ["b"]], "weights": [[0], [1]]}', 422, "weights[0][0]"),
    (b'{"teams": [["a"], ["b"]], "weights": [[1.5], [1]]}', 422, "weights[0][0]"),
    (b'{"teams": [["a"], ["b"]], "weights": [["1"], [1]]}', 422, "weights[0][0]"),
    (b'{"teams": [["a"], ["b"]], "weights": [[NaN], [1]]}', 422, "weights[0][0]"),
    (b'{"teams": [["a"], ["b"]], "weights": [[1], [Infinity]]}', 422, "weights[1][0]"),
    (b'{"teams": [["a"], ["b"]], "weights": [[-Infinity], [1]]}', 422, "weights[0][0]"),
    (b'{"teams": [["a"], ["b"]], "time": NaN}', 422, "time"),
    (b'{"teams": [["a"], ["b"]], "time": Infinity}', 422, "time"),
    (b'{"teams": [["a"], ["b"]], "time": -Infinity}', 422, "time"),
    (b'{"teams": [["a"], ["b"]], "time": "yesterday"}', 422, "time"),
    (b'{"teams": [["a"], ["b"]], "time": {}}', 422, "time"),
    (b'{"teams": [["a"], ["b"]], "time": true}', 422, "time"),
    (b'{"teams": [["a"], ["b"]], "id": 5}', 422, "id"),
    (b'{"teams": [["a"], ["b"]], "id": ""}', 422, "id"),
    (b'{"teams": [["a"], ["b"]], "id": "a b"}', 422, "id"),
    (b'{"teams": [["a"], ["b"]], "id": "<x>"}', 422, "id"),
    (b'{"teams": [["a"], ["b"]], "id": "' + b"i" * 65 + b'"}', 422, "id"),
    (b'{"teams": [["a"], ["b"]], "meta": [1]}', 422, "meta"),
    (b'{"teams": [["a"], ["b"]], "meta": {"x": NaN}}', 422, "meta"),
    (b'{"teams": [["a"], ["b"], ["c"]]}', 422, "teams"),  # the league is Elo: two teams
]


def test_bad_reports_are_refused_naming_the_field_and_store_nothing(client: Any, app: Any, tokens: dict[str, str]) -> None:
    create_league(client, tokens, "strict", "elo")
    report(client, tokens["reporter"], "strict", {"id": "ok", "teams": [["a"], ["b"]]})
    before = snapshot(app)
    board = leaderboard(client, "strict")
    problems = []
    for body, status, field in BAD_REPORTS:
        assert len(body) <= app.state.settings.max_body_bytes
        response = client.post(f"{LEAGUES}/strict/matches", content=body, headers=auth(tokens["reporter"]))
        out = response.json()
        named = field == "body" or field.split("[")[0] in out.get("detail", "")
        if response.status_code != status or out.get("field") != field or not named:
            problems.append((body[:70], response.status_code, out))
    assert not problems
    assert snapshot(app) == before
    assert leaderboard(client, "strict") == board
    assert count(app, db.matches) == 1


def test_oversized_bodies_are_refused_with_413(client: Any, app: Any, tokens: dict[str, str]) -> None:
    create_league(client, tokens, "big", "trueskill")
    before = snapshot(app)
    limit = app.state.settings.max_body_bytes
    padding = {"teams": [["a"], ["b"]], "meta": {"pad": "x" * (limit + 10)}}
    headers = auth(tokens["reporter"])
    for url in (f"{LEAGUES}/big/matches", f"{LEAGUES}/big/predict", f"{LEAGUES}/big/balance"):
        response = client.post(url, json=padding, headers=headers)
        assert response.status_code == 413 and response.json()["field"] == "body"
        assert str(limit) in response.json()["detail"]

    with _raw_client(app) as lenient:  # (see test_a_streamed_oversized_body_gets_one_response)
        response = lenient.post(f"{LEAGUES}/big/matches", content=_chunks(limit), headers=headers)
    assert response.status_code == 413 and response.json()["field"] == "body"
    assert snapshot(app) == before
    # just under the limit is fine
    ok = {"teams": [["a"], ["b"]], "meta": {"pad": "x" * (limit - 200)}}
    assert report(client, tokens["reporter"], "big", ok).json()["record"]["meta"] == ok["meta"]


def _chunks(limit: int) -> Iterator[bytes]:
    """A body over ``limit`` bytes sent without Content-Length: the limit must apply while reading."""
    yield b'{"teams": [["a"], ["b"]], "meta": {"pad": "'
    for _ in range(limit // 4096 + 2):
        yield b"x" * 4096
    yield b'"}}'


def test_a_streamed_oversized_body_gets_one_response(app: Any, tokens: dict[str, str], client: Any) -> None:
    import asyncio

    create_league(client, tokens, "big", "trueskill")
    pieces = list(_chunks(app.state.settings.max_body_bytes))
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if pieces:
            return {"type": "http.request", "body": pieces.pop(0), "more_body": bool(pieces)}
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": f"{LEAGUES}/big/matches", "raw_path": f"{LEAGUES}/big/matches".encode(), "query_string": b"",
             "root_path": "", "headers": [(b"host", b"testserver"), (b"transfer-encoding", b"chunked"),
                                          (b"authorization", f"Bearer {tokens['reporter']}".encode())],
             "client": ("testclient", 50000), "server": ("testserver", 80)}
    asyncio.run(app(scope, receive, send))
    starts = [m for m in sent if m["type"] == "http.response.start"]
    assert [m["status"] for m in starts] == [413]


def _raw_client(app: Any) -> Any:
    from fastapi.testclient import TestClient

    return TestClient(app, raise_server_exceptions=False)


@pytest.mark.parametrize("body, field", [
    pytest.param(b'{"teams": [["a"], ["b"]], "ranks": [0, 99999999999999999999]}', "ranks[1]", id="rank-over-int64"),
    pytest.param(b'{"teams": [["a"], ["b"]], "time": 1' + b"0" * 400 + b"}", "time", id="time-over-float"),
    pytest.param(b'{"teams": [["a"], ["b"]], "weights": [[1], [1' + b"0" * 400 + b"]]}", "weights[1][0]",
                 id="weight-over-float"),
    pytest.param(b'{"teams": [["a"], ["b"]], "ranks": [0, 1' + b"0" * 5000 + b"]}", "body", id="int-over-4300-digits"),
    pytest.param(b'{"teams": [["\\ud800"], ["b"]]}', "teams[0][0]", id="lone-surrogate"),
])
def test_numbers_and_strings_the_database_cannot_hold_are_422(app: Any, tokens: dict[str, str], body: bytes,
                                                              field: str) -> None:
    with _raw_client(app) as client:
        create_league(client, tokens, "edge", "elo")
        before = snapshot(app)
        response = client.post(f"{LEAGUES}/edge/matches", content=body, headers=auth(tokens["reporter"]))
        assert snapshot(app) == before
        assert 400 <= response.status_code < 500 and response.json()["field"] == field, response.text


def test_a_pending_match_can_be_approved(app: Any, tokens: dict[str, str]) -> None:
    with _raw_client(app) as client:
        create_league(client, tokens, "q", "elo", moderated=True)
        response = client.post(f"{LEAGUES}/q/matches", content=b'{"id": "m", "teams": [["a"], ["b"]], "ranks": [0, '
                               b'99999999999999999999]}', headers=auth(tokens["reporter"]))
        if response.status_code == 422:  # refused up front: fine
            return
        approved = client.post(f"{LEAGUES}/q/matches/m/approve", headers=auth(tokens["moderator"]))
        assert approved.status_code == 200, approved.text


def test_a_stored_match_never_breaks_the_reads(app: Any, tokens: dict[str, str]) -> None:
    depth = 900
    body = b'{"id": "deep", "teams": [["a"], ["b"]], "meta": ' + b'{"a":' * depth + b"1" + b"}" * depth + b"}"
    with _raw_client(app) as client:
        create_league(client, tokens, "deep", "elo")
        response = client.post(f"{LEAGUES}/deep/matches", content=body, headers=auth(tokens["reporter"]))
        if response.status_code == 422:  # refused up front: fine
            assert response.json()["field"] == "meta"
            return
        assert response.status_code == 201
        for url in (f"{LEAGUES}/deep/matches", f"{LEAGUES}/deep/matches/deep", f"{LEAGUES}/deep/players/a"):
            assert client.get(url).status_code == 200, url


# -- names ------------------------------------------------------------------------------------------------------

# (no '%' in these: Starlette's TestClient decodes the path twice, which a real server does not)
FINE_NAMES = ["O'Brien", "José", "a b", "名前", "what?", "#1", "d'Artagnan-Ü", "x.y"]


def test_fine_names_round_trip_and_are_escaped_in_pages(client: Any, app: Any, tokens: dict[str, str]) -> None:
    create_league(client, tokens, "names", "plackett-luce")
    records = [{"id": f"n{i}", "teams": [[a], [b]]} for i, (a, b) in enumerate(zip(FINE_NAMES, FINE_NAMES[1:] + FINE_NAMES[:1]))]
    for r in records:
        report(client, tokens["reporter"], "names", r)
    ref = assert_matches_offline(client, app, "names", podium.PlackettLuce(), records)
    assert set(ref.players) == set(FINE_NAMES)
    with app.state.engine.connect() as conn:
        assert set(conn.execute(select(db.ratings.c.player)).scalars()) == set(FINE_NAMES)
    league_page = client.get("/leagues/names")
    assert league_page.status_code == 200 and league_page.headers["content-type"].startswith("text/html")
    html = league_page.text
    assert "O&#39;Brien" in html and "O'Brien" not in html and "d&#39;Artagnan-Ü" in html
    assert "José" in html and "名前" in html
    assert _no_raw_apostrophe_in_attributes(html)
    links = re.findall(r'href="(/leagues/names/players/[^"]*)"', html)
    assert "/leagues/names/players/O%27Brien" in links and "/leagues/names/players/Jos%C3%A9" in links
    assert "/leagues/names/players/a%20b" in links and "/leagues/names/players/what%3F" in links
    # every player link leads to that player's page, which shows the name escaped and the chart
    for name in FINE_NAMES:
        href = f"/leagues/names/players/{quote(name, safe='')}"
        assert href in links
        page = client.get(urljoin("http://testserver/leagues/names", href))
        assert page.status_code == 200, name
        escaped = name.replace("'", "&#39;")
        assert f'<h1 id="player-name">{escaped}</h1>' in page.text
        assert "<svg" in page.text and 'id="rating-chart"' in page.text
        assert name.replace("'", "&#39;") in page.text and ("'" not in name or name not in page.text)
        assert _no_raw_apostrophe_in_attributes(page.text)
    match_page = client.get("/leagues/names/matches/n0")
    assert match_page.status_code == 200 and "O&#39;Brien" in match_page.text and "O'Brien" not in match_page.text


def _no_raw_apostrophe_in_attributes(html: str) -> bool:
    """No attribute value written in double quotes holds a name with a raw apostrophe."""
    return not any("Brien" in v or "Artagnan" in v for v in re.findall(r'="([^"]*\'[^"]*)"', html))


def test_every_player_link_reaches_the_player(client: Any, tokens: dict[str, str]) -> None:
    create_league(client, tokens, "dots", "elo")
    response = report(client, tokens["reporter"], "dots", {"teams": [[".."], ["."]]}, None)
    if response.status_code == 422:  # refused up front: fine
        return
    html = client.get("/leagues/dots").text
    for href in re.findall(r'href="(/leagues/dots/players/[^"]*)"', html):
        resolved = urlsplit(urljoin("http://testserver/leagues/dots", href)).path
        assert resolved.startswith("/leagues/dots/players/"), (href, resolved)


# -- predictions and balanced teams ----------------------------------------------------------------------------

def test_predict_equals_the_library(client: Any, tokens: dict[str, str]) -> None:
    model = podium.TrueSkill(beta=4.0)
    create_league(client, tokens, "pr", "trueskill", {"beta": 4.0})
    records = sim_records(12, 60, teams=3, team_size=1, seed=41)
    for r in records:
        report(client, tokens["reporter"], "pr", r)
    ratings = offline(model, records).ratings
    for teams in ([["p00000", "p00001"], ["p00002", "p00003"], ["p00004"]], [["p00005"], ["stranger"]],
                  [["p00006"], ["p00007"], ["p00008"], ["p00009"]]):
        out = client.post(f"{LEAGUES}/pr/predict", json={"teams": teams}).json()
        win = model.win_probabilities(teams, ratings)
        ranks = model.rank_probabilities(teams, ratings)
        assert out["teams"] == teams
        assert all(close(a, b) for a, b in zip(out["win_probabilities"], win.tolist()))
        assert all(close(a, b) for row, want in zip(out["rank_probabilities"], ranks.tolist()) for a, b in zip(row, want))
        assert close(out["quality"], model.quality(teams, ratings))
        assert close(sum(out["win_probabilities"]), 1.0)
        for p, r in out["ratings"].items():
            assert close(r["mu"], ratings[p].mu) and close(r["sigma"], ratings[p].sigma)
        assert "stranger" not in out["ratings"]  # unknown players are predicted at the prior
    by_players = client.post(f"{LEAGUES}/pr/predict", json={"players": ["p00001", "p00002", "p00003"]}).json()
    assert by_players == client.post(f"{LEAGUES}/pr/predict", json={"teams": [["p00001"], ["p00002"], ["p00003"]]}).json()
    assert leaderboard(client, "pr")["matches"] == 60  # a prediction records nothing
    for body, field in (({"teams": [["a"]]}, "teams"), ({"teams": [["a"], []]}, "teams[1]"),
                        ({"teams": [["a"], ["a"]]}, "teams"), ({"teams": "ab"}, "teams"),
                        ({"teams": [["a"], [3]]}, "teams[1][0]"), ({"teams": [["a"], ["<b>"]]}, "teams[1][0]"),
                        ({"teams": [["a"], ["b"]], "players": ["a", "b"]}, "teams"), ({}, "teams"),
                        ({"players": "ab"}, "players"), ({"teams": [["a"], ["b"]], "k": 2}, "k"),
                        ({"teams": [[f"q{i}"] for i in range(1001)]}, "teams")):
        response = client.post(f"{LEAGUES}/pr/predict", json=body)
        assert response.status_code == 422 and response.json()["field"] == field, (body, response.text)
    assert client.post(f"{LEAGUES}/pr/predict", content=b'{"teams": [["a"], [NaN]]}').json()["field"] == "teams[1][0]"
    assert client.post(f"{LEAGUES}/pr/predict", content=b"{").status_code == 400
    assert client.post(f"{LEAGUES}/nope/predict", json={"players": ["a", "b"]}).status_code == 404


def test_predict_by_players_names_the_players_field(client: Any, tokens: dict[str, str]) -> None:
    create_league(client, tokens, "pp", "trueskill")
    for players in (["a", "a"], ["a"], ["a", 3], ["a", "<b>"]):
        response = client.post(f"{LEAGUES}/pp/predict", json={"players": players})
        assert response.status_code == 422
        assert response.json()["field"].startswith("players"), response.json()


def brute_force_best(model: podium.Model, ratings: dict[str, podium.Rating], players: list[str],
                     n_teams: int) -> tuple[float, list[list[list[str]]]]:
    """The best quality over every split of ``players`` into ``n_teams`` teams of equal size, and the splits that
    reach it: every assignment of team labels, each split counted once (teams as a set of sets)."""
    size = len(players) // n_teams
    seen: dict[frozenset[frozenset[str]], float] = {}
    labels = [t for t in range(n_teams) for _ in range(size)]
    for assignment in set(itertools.permutations(labels)):
        teams = [[p for p, a in zip(players, assignment) if a == t] for t in range(n_teams)]
        key = frozenset(frozenset(t) for t in teams)
        if key not in seen:
            seen[key] = model.quality(teams, ratings)
    best = max(seen.values())
    return best, [[sorted(t) for t in key] for key, q in seen.items() if q >= best - 1e-12]


@pytest.mark.parametrize("model_name, model", [("trueskill", podium.TrueSkill(beta=4.0)),
                                                ("plackett-luce", podium.PlackettLuce())], ids=["trueskill", "plackett-luce"])
def test_balance_maximizes_quality_over_every_split(client: Any, tokens: dict[str, str], model_name: str,
                                                    model: podium.Model) -> None:
    params = model.get_params()
    create_league(client, tokens, "bal", model_name, json.loads(json.dumps(params)))
    records = sim_records(12, 40, teams=2, seed=51)
    for r in records:
        report(client, tokens["reporter"], "bal", r)
    ratings = offline(model, records).ratings
    cases = [([f"p{i:05d}" for i in range(8)], 2), ([f"p{i:05d}" for i in range(3, 9)], 3),
             ([f"p{i:05d}" for i in range(9)], 3), ([f"p{i:05d}" for i in range(4, 10)] + ["stranger", "new"], 4)]
    for players, n_teams in cases:
        out = client.post(f"{LEAGUES}/bal/balance", json={"players": players, "teams": n_teams})
        assert out.status_code == 200, out.text
        got = out.json()
        teams = got["teams"]
        assert len(teams) == n_teams and {len(t) for t in teams} == {len(players) // n_teams}
        assert sorted(p for t in teams for p in t) == sorted(players)
        best, optimal = brute_force_best(model, {p: r for p, r in ratings.items()}, players, n_teams)
        assert close(got["quality"], model.quality(teams, ratings), 1e-12)
        assert close(got["quality"], best, 1e-12), (got["quality"], best)
        assert sorted(sorted(t) for t in teams) in [sorted(s) for s in optimal]
        assert all(close(a, b) for a, b in zip(got["win_probabilities"], model.win_probabilities(teams, ratings).tolist()))
    # the default is two teams
    two = client.post(f"{LEAGUES}/bal/balance", json={"players": [f"p{i:05d}" for i in range(4)]}).json()
    assert len(two["teams"]) == 2
    for body, field in (({"players": ["a", "b"], "teams": 1}, "teams"), ({"players": ["a", "b"], "teams": "2"}, "teams"),
                        ({"players": ["a", "b"], "teams": True}, "teams"), ({"players": ["a", "b"], "teams": 2.0}, "teams"),
                        ({"players": ["a"]}, "players"), ({"players": "ab"}, "players"), ({"teams": 2}, "players"),
                        ({"players": ["a", "a", "b", "c"]}, "players"), ({"players": ["a", "<b>"]}, "players[1]"),
                        ({"players": [f"q{i}" for i in range(201)]}, "players"),
                        ({"players": ["a", "b"], "size": 1}, "size")):
        response = client.post(f"{LEAGUES}/bal/balance", json=body)
        assert response.status_code == 422 and response.json()["field"] == field, (body, response.text)


def test_balance_is_optimal_for_sixteen_players(client: Any, tokens: dict[str, str]) -> None:
    model = podium.TrueSkill(beta=4.0)
    create_league(client, tokens, "b16", "trueskill", {"beta": 4.0})
    records = sim_records(16, 30, teams=2, seed=1)
    for r in records:
        report(client, tokens["reporter"], "b16", r)
    ratings = offline(model, records).ratings
    players = [f"p{i:05d}" for i in range(16)]
    got = client.post(f"{LEAGUES}/b16/balance", json={"players": players, "teams": 2}).json()
    best = max(model.quality([[players[0], *c], [p for p in players[1:] if p not in c]], ratings)
               for c in itertools.combinations(players[1:], 7))
    assert got["quality"] >= best - 1e-12, (got["quality"], best)


# -- pages ------------------------------------------------------------------------------------------------------

def test_pages_show_leagues_players_and_matches(client: Any, app: Any, tokens: dict[str, str]) -> None:
    create_league(client, tokens, "alpha", "trueskill")
    create_league(client, tokens, "beta-league", "elo")
    records = sim_records(6, 12, teams=2, seed=61)
    for r in records:
        report(client, tokens["reporter"], "alpha", r)
    home = client.get("/")
    assert home.status_code == 200 and "text/html" in home.headers["content-type"]
    assert 'href="/leagues/alpha"' in home.text and 'href="/leagues/beta-league"' in home.text
    page = client.get("/leagues/alpha")
    assert page.status_code == 200
    order = [r["player"] for r in leaderboard(client, "alpha")["rows"]]
    table = page.text[page.text.index("<table"):]
    table = table[:table.index("</table>")]
    positions = [table.index(f'/leagues/alpha/players/{p}"') for p in order]
    assert positions == sorted(positions)  # the leaderboard in its order
    assert client.get("/leagues/alpha", params={"by": "mu"}).status_code == 200
    assert client.get("/leagues/beta-league").status_code == 200  # an empty league
    player = client.get("/leagues/alpha/players/p00000")
    assert player.status_code == 200 and "<svg" in player.text and 'id="rating-chart"' in player.text
    assert "<polyline" in player.text
    match = client.get(f"/leagues/alpha/matches/{records[3]['id']}")
    assert match.status_code == 200
    assert all(p in match.text for t in records[3]["teams"] for p in t)
    for url in ("/leagues/nope", "/leagues/alpha/players/ghost", "/leagues/alpha/matches/ghost",
                "/leagues/nope/players/p00000"):
        response = client.get(url)
        assert response.status_code == 404 and "text/html" in response.headers["content-type"], url
        assert "<html" in response.text
    assert "&#39;nope&#39;" in client.get("/leagues/nope").text


def test_pending_page_login_and_form_approval(client: Any, app: Any, tokens: dict[str, str]) -> None:
    model = podium.TrueSkill()
    client.headers["Origin"] = "http://testserver"  # what a browser sends with a form posted from this site
    create_league(client, tokens, "queue", "trueskill", moderated=True)
    records = [{"id": f"q{i}", "teams": [[f"a{i}"], [f"b{i}"]]} for i in range(3)]
    for r in records:
        report(client, tokens["reporter"], "queue", r, 202)
    assert 'href="/leagues/queue/pending"' in client.get("/leagues/queue").text
    # not signed in, or signed in below moderator: to the login page
    response = client.get("/leagues/queue/pending", follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/login?next=/leagues/queue/pending"
    assert client.get("/login", params={"next": "/leagues/queue/pending"}).status_code == 200
    client.cookies.set("podium_token", tokens["reporter"])
    assert client.get("/leagues/queue/pending", follow_redirects=False).status_code == 303
    client.cookies.clear()
    # a wrong token does not sign in
    response = client.post("/login", data={"token": "pod_wrong", "next": "/leagues/queue/pending"}, follow_redirects=False)
    assert response.status_code == 401 and "podium_token" not in response.headers.get("set-cookie", "")
    # a moderator token does, into an HttpOnly SameSite=Strict cookie, and goes where it was asked to
    response = client.post("/login", data={"token": tokens["moderator"], "next": "/leagues/queue/pending"},
                           follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/leagues/queue/pending"
    cookie = response.headers["set-cookie"].lower()
    assert "podium_token=" in cookie and "httponly" in cookie and "samesite=strict" in cookie
    page = client.get("/leagues/queue/pending")
    assert page.status_code == 200 and all(f'data-match="{r["id"]}"' in page.text for r in records)
    csrf = set(re.findall(r'name="csrf" value="([0-9a-f]+)"', page.text))
    assert len(csrf) == 1
    token = csrf.pop()
    before = snapshot(app)
    # without the CSRF value, or with another, or from another site, nothing is decided
    for data in ({}, {"csrf": "0" * 64}):
        response = client.post("/leagues/queue/pending/q1/approve", data=data, follow_redirects=False)
        assert response.status_code == 403
    response = client.post("/leagues/queue/pending/q1/approve", data={"csrf": token}, follow_redirects=False,
                           headers={"Origin": "https://evil.example"})
    assert response.status_code == 403
    client.cookies.clear()
    response = client.post("/leagues/queue/pending/q1/approve", data={"csrf": token}, follow_redirects=False)
    assert response.status_code == 403
    assert snapshot(app) == before
    client.post("/login", data={"token": tokens["moderator"]}, follow_redirects=False)
    # approve one and reject one through the forms
    response = client.post("/leagues/queue/pending/q1/approve", data={"csrf": token}, follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/leagues/queue/pending"
    response = client.post("/leagues/queue/pending/q0/reject", data={"csrf": token}, follow_redirects=False)
    assert response.status_code == 303
    assert client.post("/leagues/queue/pending/q2/delete", data={"csrf": token}, follow_redirects=False).status_code == 404
    assert client.post("/leagues/queue/pending/q1/reject", data={"csrf": token}, follow_redirects=False).status_code == 409
    assert client.get(f"{LEAGUES}/queue/matches/q1").json()["status"] == "recorded"
    assert client.get(f"{LEAGUES}/queue/matches/q0").json()["status"] == "rejected"
    assert_matches_offline(client, app, "queue", model, [records[1]])
    page = client.get("/leagues/queue/pending")
    assert 'data-match="q2"' in page.text and 'data-match="q1"' not in page.text
    # sign out
    response = client.post("/logout", follow_redirects=False)
    assert response.status_code == 303
    assert "podium_token=" in response.headers["set-cookie"] and "max-age=0" in response.headers["set-cookie"].lower()
    client.cookies.clear()
    assert client.get("/leagues/queue/pending", follow_redirects=False).status_code == 303


def test_login_redirects_only_within_the_site(client: Any, tokens: dict[str, str]) -> None:
    client.headers["Origin"] = "http://testserver"
    # a sign-in form posted from another site is refused (login CSRF); from this site it is fine
    response = client.post("/login", data={"token": tokens["moderator"]}, headers={"Origin": "https://evil.example"},
                           follow_redirects=False)
    assert response.status_code == 403 and "set-cookie" not in response.headers
    response = client.post("/login", data={"token": tokens["moderator"]}, headers={"Origin": "http://testserver"},
                           follow_redirects=False)
    assert response.status_code == 303 and "podium_token=" in response.headers["set-cookie"]
    for target, expected in (("/leagues", "/leagues"), ("//evil.example", "/"), ("https://evil.example", "/"),
                             ("evil.example", "/")):
        response = client.post("/login", data={"token": tokens["moderator"], "next": target}, follow_redirects=False)
        assert response.status_code == 303 and response.headers["location"] == expected, target


def test_login_does_not_redirect_to_a_backslash_host(client: Any, tokens: dict[str, str]) -> None:
    client.headers["Origin"] = "http://testserver"
    response = client.post("/login", data={"token": tokens["moderator"], "next": "/\\evil.example"}, follow_redirects=False)
    assert response.status_code == 303
    assert "evil.example" not in response.headers["location"]


# -- schema migrations ----------------------------------------------------------------------------------------
@pytest.mark.stored_ratings_differ  # (its rows are written straight into the tables of an old revision)
def test_a_league_from_before_migration_0002_keeps_its_ratings_and_plays_on(db_url: str) -> None:
    """Migration 0002 adds ``ratings.extra`` (NULL for the rows already there); the old league's states load
    with no extra state and its next match is rated from them."""
    from fastapi.testclient import TestClient

    from podium.server import Settings, create_app
    from podium.server.settings import database_url
    from podium.server.store import create_token, get_league

    engine = db.make_engine(database_url(db_url))
    upgrade_to(engine, "0001")
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO leagues (name, model, params, moderated, created) "
                          "VALUES ('old', 'elo', '{\"k\": 20.0}', false, 0)"))
        league_id = conn.execute(text("SELECT id FROM leagues")).scalar_one()
        conn.execute(text("INSERT INTO ratings (league_id, player, mu, sigma, games, last_time) "
                          f"VALUES ({league_id}, 'ann', 1530.0, 0.0, 3, NULL)"))
    db.migrate(engine)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT extra FROM ratings")).scalar_one() is None
        league = get_league(conn, "old")
    population = podium.League(league.model)
    population.set_states({"ann": podium.PlayerState(1530.0, 0.0, 3, math.nan)})
    expected = population.record(podium.Match([["ann"], ["bob"]]))
    engine.dispose()
    app = create_app(Settings(db=db_url))
    try:
        token = create_token(app.state.engine, "reporter", "after the migration")
        with TestClient(app) as client:
            out = report(client, token, "old", {"teams": [["ann"], ["bob"]]}).json()
        after = {r["player"]: r["after"]["mu"] for r in out["ratings"]}
        assert after == {"ann": expected["ann"].mu, "bob": expected["bob"].mu}
    finally:
        app.state.engine.dispose()
