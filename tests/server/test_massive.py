"""Massive rounds: a programming-contest round of 10,000 players, with ties, through the league server.

On real SQLite and real PostgreSQL (``db_url``), for the default league model (TrueSkill, ``podium league
create``'s default) and a free-for-all model (Plackett-Luce).  Reference values come from the library: the
same rounds replayed by ``podium.League(model).record_many(...)`` give the ratings the server must serve (to
1e-9: the server runs the same kernel on the same numbers).  The limits (``max_players``, ``max_body_bytes``)
are settings, from ``Settings``, the environment and ``podium serve``'s options.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from sqlalchemy import func, select

import podium
from podium.models import MODELS
from podium.server import Settings, create_app, db
from podium.server.app import settings_from_env
from podium.server.store import rebuild

from .conftest import auth

LEAGUES = "/api/v1/leagues"
N = 10_000
TOL = 1e-9


def handle(i: int) -> str:
    """A 30-character player id, as contest handles go."""
    return f"contestant-{i:06d}-handle-xyzwv"


def tie_ranks(n: int) -> list[int]:
    """Ranks in tie groups of 1, 1, 2, 4, ... 64, 64, ... players, the last group half the field (those who
    solved nothing); a group shares the rank of its first place."""
    sizes: list[int] = []
    left, size = n - n // 2, 1
    while left > 0:
        sizes.append(min(size, left))
        left -= sizes[-1]
        size = min(size * 2, 64) if len(sizes) > 1 else 1
    sizes.append(n - sum(sizes))
    ranks: list[int] = []
    for size in sizes:
        ranks += [len(ranks)] * size
    return ranks


def contest_round(match_id: str, shift: int, n: int = N) -> dict[str, Any]:
    """``n`` single-player teams finishing in tie groups; ``shift`` rotates who finishes where."""
    return {"id": match_id, "teams": [[handle((i + shift) % n)] for i in range(n)], "ranks": tie_ranks(n)}


def to_match(record: dict[str, Any]) -> podium.Match:
    return podium.Match(record["teams"], record.get("ranks"), record.get("weights"), record.get("time"), record.get("id"))


def board(client: Any, league: str) -> tuple[dict[str, Any], dict[str, tuple[float, float, int]]]:
    """The whole leaderboard by mu (pages of 1,000): its first page's header and every row by player."""
    rows: dict[str, tuple[float, float, int]] = {}
    first: dict[str, Any] = {}
    offset = 0
    while True:
        page = client.get(f"{LEAGUES}/{league}/leaderboard", params={"by": "mu", "limit": 1000, "offset": offset})
        assert page.status_code == 200, page.text
        body = page.json()
        first = first or body
        rows.update({r["player"]: (r["mu"], r["sigma"], r["games"]) for r in body["rows"]})
        if len(body["rows"]) < 1000:
            return first, rows
        offset += 1000


def count(app: Any, table: Any) -> int:
    with app.state.engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(table)).scalar_one())


def check_state(client: Any, app: Any, league: str, model: podium.Model, log: Sequence[dict[str, Any]]) -> None:
    """The leaderboard holds every player of ``log`` rated as the library rates ``log``, and the history one
    row per player and match."""
    reference = podium.League(model).record_many([to_match(r) for r in log])
    header, rows = board(client, league)
    assert header["total"] == N and len(rows) == N and header["matches"] == len(log)
    worst = max(max(abs(mu - reference.rating(p).mu), abs(sigma - reference.rating(p).sigma))
                for p, (mu, sigma, _) in rows.items())
    assert worst <= TOL, worst
    assert {games for _, _, games in rows.values()} == {len(log)}
    assert count(app, db.history) == N * len(log)


def check_order(rows: dict[str, tuple[float, float, int]], record: dict[str, Any]) -> None:
    """Ratings after one round from the prior follow its finishing order: equal within a tie group, each group
    strictly above the next."""
    groups: dict[int, list[float]] = {}
    for team, rank in zip(record["teams"], record["ranks"]):
        groups.setdefault(rank, []).append(rows[team[0]][0])
    ordered = [groups[rank] for rank in sorted(groups)]
    assert len(ordered) > 10 and max(len(g) for g in ordered) == N // 2
    for group in ordered:
        assert max(group) - min(group) <= TOL, (min(group), max(group))
    for better, worse in zip(ordered, ordered[1:]):
        assert min(better) > max(worse), (min(better), max(worse))


@pytest.mark.parametrize("model_name", ["trueskill", "plackett-luce"])
def test_a_contest_round_of_ten_thousand_is_rated_voided_and_rebuilt(
        client: Any, app: Any, tokens: dict[str, str], model_name: str) -> None:
    assert app.state.settings.max_players >= N  # the defaults take it: the app is built with Settings' own
    created = client.post(LEAGUES, json={"name": "contest", "model": model_name}, headers=auth(tokens["admin"]))
    assert created.status_code == 201, created.text
    model = MODELS[model_name](**created.json()["params"])
    first, second = contest_round("round-1", 0), contest_round("round-2", N // 3)

    answer = client.post(f"{LEAGUES}/contest/matches", json=first, headers=auth(tokens["reporter"]))
    assert answer.status_code == 201, answer.text
    changes = answer.json()["ratings"]
    assert len(changes) == N and [c["player"] for c in changes] == [t[0] for t in first["teams"]]
    assert all(c["before"] == {"mu": model.prior.mu, "sigma": model.prior.sigma} for c in changes)
    check_state(client, app, "contest", model, [first])

    # the second round: the same players, known now (their states read, updated, written back)
    answer = client.post(f"{LEAGUES}/contest/matches", json=second, headers=auth(tokens["reporter"]))
    assert answer.status_code == 201, answer.text
    check_state(client, app, "contest", model, [first, second])
    shown = client.get(f"{LEAGUES}/contest/matches/round-2").json()["ratings"]
    after_first = {c["player"]: c["after"] for c in changes}
    assert len(shown) == N and all(c["before"] == after_first[c["player"]] for c in shown)

    # void the first: the league is the second round alone, rated from the prior
    voided = client.post(f"{LEAGUES}/contest/matches/round-1/void", headers=auth(tokens["moderator"]))
    assert voided.status_code == 200 and voided.json()["status"] == "voided", voided.text
    check_state(client, app, "contest", model, [second])

    # a rebuild replays the log and finds every stored value as the replay has it (and writes nothing)
    before = board(client, "contest")
    assert rebuild(app.state.engine, "contest") == (1, [])
    assert board(client, "contest") == before
    check_state(client, app, "contest", model, [second])
    assert count(app, db.matches) == 2


@pytest.mark.parametrize("model_name", ["trueskill", "plackett-luce"])
def test_a_round_from_the_prior_rates_in_its_finishing_order(client: Any, tokens: dict[str, str], model_name: str
                                                             ) -> None:
    created = client.post(LEAGUES, json={"name": "order", "model": model_name}, headers=auth(tokens["admin"]))
    assert created.status_code == 201, created.text
    record = contest_round("round-1", 7)
    assert client.post(f"{LEAGUES}/order/matches", json=record, headers=auth(tokens["reporter"])).status_code == 201
    check_order(board(client, "order")[1], record)


def test_more_players_than_the_setting_are_refused_naming_the_count(db_url: str) -> None:
    from fastapi.testclient import TestClient

    from podium.server.store import create_token

    for limit in (50, Settings().max_players):
        application = create_app(Settings(db=db_url, max_players=limit, token_rate=0, address_rate=0))
        try:
            with TestClient(application) as client:
                admin = create_token(application.state.engine, "admin")
                reporter = create_token(application.state.engine, "reporter")
                name = f"capped-{limit}"
                assert client.post(LEAGUES, json={"name": name, "model": "plackett-luce"},
                                   headers=auth(admin)).status_code == 201
                stored = (count(application, db.matches), count(application, db.ratings), count(application, db.history))
                over = {"teams": [[f"p{i}"] for i in range(limit + 1)]}
                response = client.post(f"{LEAGUES}/{name}/matches", json=over, headers=auth(reporter))
                assert response.status_code == 422, response.text
                out = response.json()
                assert out["field"] == "teams" and f"at most {limit} players" in out["detail"]
                assert f"Got {limit + 1}." in out["detail"]
                assert (count(application, db.matches), count(application, db.ratings),
                        count(application, db.history)) == stored  # nothing stored
                if limit == 50:  # the limit itself is taken
                    exact = {"teams": [[f"p{i}"] for i in range(limit)]}
                    assert client.post(f"{LEAGUES}/{name}/matches", json=exact,
                                       headers=auth(reporter)).status_code == 201
                    assert count(application, db.ratings) == stored[1] + limit
        finally:
            application.state.engine.dispose()


def test_the_default_body_limit_holds_a_full_round_with_long_ids() -> None:
    settings = Settings()
    n = settings.max_players
    ranks = list(range(n))
    weights = [[0.1 + 0.2 * (i % 3)] for i in range(n)]  # 0.30000000000000004: a float's full 17 digits
    for make in (handle, lambda i: f"{i:06d}" * 10 + "abcd",  # 30 and 64 characters
                 lambda i: f"игрок-{i:06d}-" + "ж" * 17):  # 30 characters outside ASCII, sent \u-escaped
        record = {"id": "round-1", "teams": [[make(i)] for i in range(n)], "ranks": ranks, "weights": weights,
                  "meta": {"contest": "x" * 1000}}
        assert len(make(0)) in (30, 64)
        assert len(json.dumps(record).encode()) <= settings.max_body_bytes


def test_the_limits_are_settings_from_the_environment() -> None:
    settings = settings_from_env({"PODIUM_MAX_PLAYERS": "20000", "PODIUM_MAX_BODY": "8400000"})
    assert (settings.max_players, settings.max_body_bytes) == (20_000, 8_400_000)
    assert settings_from_env({}).max_players == Settings().max_players >= 10_000
    for variable, value, name in (("PODIUM_MAX_PLAYERS", "1", "max_players"), ("PODIUM_MAX_BODY", "0", "max_body_bytes")):
        with pytest.raises(ValueError, match=f"'{name}'.*Got {value}.*{variable}"):
            settings_from_env({variable: value})
    with pytest.raises(ValueError, match="PODIUM_MAX_PLAYERS must be int; got 'many'"):
        settings_from_env({"PODIUM_MAX_PLAYERS": "many"})
    for bad in (True, 2.5, 1):
        with pytest.raises(ValueError, match=f"'max_players'.*Got {bad!r}"):
            Settings(max_players=bad)  # type: ignore[arg-type]


def test_serve_takes_the_limits_as_options(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn
    from typer.testing import CliRunner

    from podium.cli import app as cli
    from podium.server.app import ENVIRONMENT

    calls: list[tuple[Any, dict[str, Any]]] = []
    monkeypatch.setattr(uvicorn, "run", lambda target, **kwargs: calls.append((target, kwargs)))
    for variable in ENVIRONMENT:  # serve sets them for its workers: unset now, restored after the test
        monkeypatch.setenv(variable, "unset")
        monkeypatch.delenv(variable)
    path = str(tmp_path / "league.db")
    result = CliRunner().invoke(cli, ["serve", "--db", path, "--max-players", "20000", "--max-body", "8400000"])
    assert result.exit_code == 0, result.output
    [(served, _)] = calls
    assert (served.state.settings.max_players, served.state.settings.max_body_bytes) == (20_000, 8_400_000)
    served.state.engine.dispose()
    calls.clear()
    result = CliRunner().invoke(cli, ["serve", "--db", path, "--workers", "2", "--max-players", "30000"])
    assert result.exit_code == 0, result.output
    import os

    assert os.environ["PODIUM_MAX_PLAYERS"] == "30000"  # what the workers' app_from_env reads
    assert settings_from_env().max_players == 30_000
    result = CliRunner().invoke(cli, ["serve", "--db", path, "--max-players", "1"])
    assert result.exit_code != 0 and "max_players" in result.output and "Got 1" in result.output
