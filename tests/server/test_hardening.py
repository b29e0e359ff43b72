"""Rate limits (per token and per client address, 429 with Retry-After), the strict same-origin check of form
posts, the self-hosted API docs, and the server settings from the environment and the command line.

The rate limiter's clock is injected (``create_app(..., clock=...)``): waiting is moving the clock, never
sleeping.  On SQLite and PostgreSQL where a database is involved.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from typer.testing import CliRunner

from podium.server import Settings, create_app, db
from podium.server.app import settings_from_env
from podium.server.ratelimit import Buckets, client_key
from podium.server.store import create_token

from .conftest import auth

LEAGUES = "/api/v1/leagues"


class Clock:
    """A monotonic clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _app(db_url: str, clock: Clock, **limits: Any) -> Any:
    return create_app(Settings(db=db_url, **limits), clock=clock)


@pytest.fixture
def limited(db_url: str) -> Iterator[tuple[Any, Clock]]:
    clock = Clock()
    app = _app(db_url, clock, token_rate=1.0, token_burst=3, address_rate=0)
    yield app, clock
    app.state.engine.dispose()


def _league(app: Any) -> dict[str, str]:
    from podium.server.store import create_league

    create_league(app.state.engine, "rated", "elo", {}, False)
    return {role: create_token(app.state.engine, role, role) for role in ("reporter", "moderator")}


def _matches(app: Any) -> int:
    with app.state.engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(db.matches)).scalar_one())


def _refused(response: Any, who: str) -> int:
    """Check a 429: Retry-After in whole seconds >= 1, the JSON error naming the rate; return Retry-After."""
    assert response.status_code == 429, response.text
    retry = response.headers["retry-after"]
    assert re.fullmatch(r"[1-9][0-9]*", retry), retry
    body = response.json()
    assert body["field"] == "rate" and who in body["detail"] and f"retry in {retry} s" in body["detail"], body
    return int(retry)


# -- per token ------------------------------------------------------------------------------------------------
def test_a_token_past_its_burst_waits_while_other_tokens_go_on(limited: tuple[Any, Clock]) -> None:
    app, clock = limited
    tokens = _league(app)
    other = create_token(app.state.engine, "reporter", "other")
    with TestClient(app) as client:
        def post(token: str, i: int) -> Any:
            who = "other" if token == other else "limited"
            return client.post(f"{LEAGUES}/rated/matches", json={"id": f"{who}-{i}", "teams": [["a"], ["b"]]},
                               headers=auth(token))

        for i in range(3):  # the burst
            assert post(tokens["reporter"], i).status_code == 201
        stored = _matches(app)
        wait = _refused(post(tokens["reporter"], 3), "this token")
        assert wait == 1 and _matches(app) == stored  # refused before anything was read or written
        # other tokens are not slowed down by it, for writes and reads alike
        for i in range(3):
            assert post(other, i).status_code == 201
        assert client.get(f"{LEAGUES}/rated/pending", headers=auth(tokens["moderator"])).status_code == 200
        # the limited one waits Retry-After and goes on, at the sustained rate
        clock.now += wait - 0.5
        _refused(post(tokens["reporter"], 3), "this token")
        clock.now += 0.5
        assert post(tokens["reporter"], 3).status_code == 201
        _refused(post(tokens["reporter"], 4), "this token")
        clock.now += 10  # a quiet spell refills the burst, no more
        assert [post(tokens["reporter"], 10 + i).status_code for i in range(4)] == [201, 201, 201, 429]
        # the session cookie of the pages is a token too
        client.cookies.set("podium_token", tokens["moderator"])
        statuses = [client.get("/").status_code for _ in range(4)]
        assert statuses == [200, 200, 200, 429]
        page = client.get("/")
        assert page.status_code == 429 and "text/html" in page.headers["content-type"]
        assert "Too many requests" in page.text and int(page.headers["retry-after"]) >= 1


# -- per address ----------------------------------------------------------------------------------------------
def test_an_address_past_its_burst_waits_while_other_addresses_and_known_tokens_go_on(db_url: str) -> None:
    clock = Clock()
    app = _app(db_url, clock, token_rate=0, address_rate=0.5, address_burst=3)
    try:
        tokens = _league(app)
        with TestClient(app, client=("203.0.113.7", 50000)) as client, \
                TestClient(app, client=("198.51.100.2", 50000)) as elsewhere:
            # a token's first request counts for its address until the token has been seen valid
            assert client.get(f"{LEAGUES}/rated", headers=auth(tokens["reporter"])).status_code == 200
            assert [client.get(f"{LEAGUES}/rated").status_code for _ in range(3)] == [200, 200, 429]
            wait = _refused(client.get(f"{LEAGUES}/rated/leaderboard"), "this address")
            assert wait == 2  # one request per 2 s
            # the sign-in form is limited too (HTML for the pages)
            login = client.post("/login", data={"token": "x"}, headers={"Origin": "http://testserver"})
            assert login.status_code == 429 and int(login.headers["retry-after"]) == 2
            # another address is not slowed down
            assert [elsewhere.get(f"{LEAGUES}/rated").status_code for _ in range(3)] == [200, 200, 200]
            # a token already seen valid is not charged to its address: it goes on (no per-token limit here)
            for i in range(5):
                response = client.post(f"{LEAGUES}/rated/matches", json={"teams": [["a"], ["b"]]},
                                       headers=auth(tokens["reporter"]))
                assert response.status_code == 201, response.text
            # made-up tokens do not get around the address's limit (nor reach the application)
            stored = _matches(app)
            for i in range(3):
                _refused(client.post(f"{LEAGUES}/rated/matches", json={"teams": [["a"], ["b"]]},
                                     headers=auth(f"pod_made-up-{i}")), "this address")
            assert _matches(app) == stored
            # after Retry-After the address goes on
            clock.now += wait
            assert client.get(f"{LEAGUES}/rated").status_code == 200
            _refused(client.get(f"{LEAGUES}/rated"), "this address")
            # a made-up token, when the address has room, is answered 401 (and still counted for the address)
            clock.now += 2
            response = client.post(f"{LEAGUES}/rated/matches", json={"teams": [["a"], ["b"]]},
                                   headers=auth("pod_made-up"))
            assert response.status_code == 401
            _refused(client.get(f"{LEAGUES}/rated"), "this address")
    finally:
        app.state.engine.dispose()


def test_a_revoked_token_counts_for_its_address_again(db_url: str) -> None:
    from podium.server.store import revoke_token

    clock = Clock()
    app = _app(db_url, clock, token_rate=0, address_rate=1.0, address_burst=2)
    try:
        tokens = _league(app)
        with TestClient(app) as client:
            ok = client.get(f"{LEAGUES}/rated/pending", headers=auth(tokens["moderator"]))
            assert ok.status_code == 200  # seen valid: one request charged to the address
            with app.state.engine.connect() as conn:
                token_id = conn.execute(select(db.tokens.c.id).where(db.tokens.c.label == "moderator")).scalar_one()
            assert revoke_token(app.state.engine, token_id)
            assert client.get(f"{LEAGUES}/rated/pending", headers=auth(tokens["moderator"])).status_code == 401
            # forgotten as valid: its next request is charged to the address, which has one request left
            assert client.get(f"{LEAGUES}/rated/pending", headers=auth(tokens["moderator"])).status_code == 401
            _refused(client.get(f"{LEAGUES}/rated/pending", headers=auth(tokens["moderator"])), "this address")
    finally:
        app.state.engine.dispose()


def test_buckets_refill_and_forget_idle_clients() -> None:
    # (a cap far above what idle-forgetting leaves, so that only the forgetting can bound the count below)
    buckets = Buckets(rate=2.0, burst=4, max_entries=1_000_000)
    assert [buckets.take("a", 0.0) for _ in range(4)] == [0.0] * 4
    assert buckets.take("a", 0.0) == pytest.approx(0.5)  # one request per 0.5 s
    assert buckets.take("a", 0.5) == 0.0 and buckets.take("a", 0.5) == pytest.approx(0.5)
    # a refused request costs nothing: waiting the time given is enough
    assert buckets.take("a", 0.75) == pytest.approx(0.25) and buckets.take("a", 1.0) == 0.0
    # many clients, each seen once, 1 ms apart: the buckets of those idle for burst / rate = 2 s are forgotten,
    # so about 2 s x 1,000 clients/s remain of 20,000
    for i in range(20_000):
        buckets.take(f"client-{i}", 10.0 + i / 1000)
        assert len(buckets) <= 2 * 1000 + 2
    assert 1_000 <= len(buckets) <= 2_002
    # never more than max_entries
    crowd = Buckets(rate=1.0, burst=100, max_entries=50)
    for i in range(500):
        crowd.take(f"c{i}", 0.0)
    assert len(crowd) == 50
    # unlimited buckets only remember known tokens, and forget them when idle
    known = Buckets(rate=0.0, burst=1)
    known.mark("t", True, 0.0)
    assert known.known("t") and known.take("t", 1.0) == 0.0 and known.take("t", 1.0) == 0.0
    known.mark("made-up", False, 1.0)
    assert not known.known("made-up") and len(known) == 1
    known.take("other", 5000.0)
    assert not known.known("t")


def test_client_addresses_ipv6_by_network() -> None:
    def key(host: str) -> str:
        return client_key({"client": (host, 1)})

    assert key("203.0.113.7") == "203.0.113.7"
    assert key("2001:db8:1:2:aaaa::1") == key("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    assert key("2001:db8:1:3::1") != key("2001:db8:1:2::1")
    assert key("::ffff:203.0.113.7") == "203.0.113.7"
    assert key("testclient") == "testclient" and client_key({}) == "unknown"


def test_static_docs_files_are_not_limited(db_url: str) -> None:
    clock = Clock()
    app = _app(db_url, clock, token_rate=0, address_rate=1.0, address_burst=1)
    try:
        with TestClient(app) as client:
            assert client.get("/api/v1/docs").status_code == 200
            for _ in range(3):
                assert client.get("/api/v1/docs/static/swagger-ui.css").status_code == 200
            assert client.get("/api/v1/openapi.json").status_code == 429
    finally:
        app.state.engine.dispose()


# -- settings -------------------------------------------------------------------------------------------------
def test_settings_refuse_bad_limits_naming_them() -> None:
    for kwargs, name in (({"token_rate": -1}, "token_rate"), ({"address_rate": float("inf")}, "address_rate"),
                         ({"token_burst": 0}, "token_burst"), ({"address_burst": 2.5}, "address_burst"),
                         ({"replay_chunk": 0}, "replay_chunk"), ({"token_rate": True}, "token_rate")):
        with pytest.raises(ValueError, match=f"'{name}'"):
            Settings(**kwargs)
    assert Settings().token_rate > 0 and Settings().address_rate > 0  # on by default


def test_settings_from_the_environment() -> None:
    settings = settings_from_env({"PODIUM_DB": "x.db", "PODIUM_TOKEN_RATE": "2.5", "PODIUM_TOKEN_BURST": "7",
                                  "PODIUM_ADDRESS_RATE": "0", "PODIUM_ADDRESS_BURST": "9",
                                  "PODIUM_TRUST_FORWARDED_HOST": "true", "PODIUM_REPLAY_CHUNK": "500",
                                  "PODIUM_MAX_BODY": "1000"})
    assert (settings.db, settings.token_rate, settings.token_burst, settings.address_rate, settings.address_burst,
            settings.trust_forwarded_host, settings.replay_chunk, settings.max_body_bytes) == (
        "x.db", 2.5, 7, 0.0, 9, True, 500, 1000)
    assert settings_from_env({}) == Settings()
    with pytest.raises(ValueError, match="PODIUM_TOKEN_RATE must be float; got 'fast'"):
        settings_from_env({"PODIUM_TOKEN_RATE": "fast"})
    with pytest.raises(ValueError, match="PODIUM_TRUST_FORWARDED_HOST must be true or false"):
        settings_from_env({"PODIUM_TRUST_FORWARDED_HOST": "maybe"})
    with pytest.raises(ValueError, match="'token_burst'.*PODIUM_TOKEN_BURST"):
        settings_from_env({"PODIUM_TOKEN_BURST": "0"})


def test_serve_passes_the_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    from podium.cli import app as cli

    calls: list[tuple[Any, dict[str, Any]]] = []
    monkeypatch.setattr(uvicorn, "run", lambda target, **kwargs: calls.append((target, kwargs)))
    from podium.server.app import ENVIRONMENT

    for variable in ENVIRONMENT:  # unset now, and restored after the test (serve sets them for its workers)
        monkeypatch.setenv(variable, "unset")
        monkeypatch.delenv(variable)
    runner = CliRunner()
    database = str(tmp_path / "serve.db")
    result = runner.invoke(cli, ["serve", "--db", database, "--token-rate", "3", "--token-burst", "4",
                                 "--address-rate", "0", "--trust-forwarded-host", "--replay-chunk", "123"])
    assert result.exit_code == 0, result.output
    [(served, _)] = calls
    settings = served.state.settings
    assert (settings.token_rate, settings.token_burst, settings.address_rate, settings.trust_forwarded_host,
            settings.replay_chunk) == (3.0, 4, 0.0, True, 123)
    served.state.engine.dispose()
    # the defaults are Settings'; the environment sets them too
    calls.clear()
    monkeypatch.setenv("PODIUM_ADDRESS_BURST", "17")
    result = runner.invoke(cli, ["serve", "--db", database])
    assert result.exit_code == 0, result.output
    settings = calls[0][0].state.settings
    assert settings == Settings(db=database, address_burst=17)
    calls[0][0].state.engine.dispose()
    # settings with no option come from the environment for one process too (as app_from_env reads them)
    calls.clear()
    monkeypatch.setenv("PODIUM_INTEGRITY_MAX_MATCHES", "5")
    monkeypatch.setenv("PODIUM_PROVISIONAL_GAMES", "3")
    result = runner.invoke(cli, ["serve", "--db", database])
    assert result.exit_code == 0, result.output
    settings = calls[0][0].state.settings
    assert (settings.integrity_max_matches, settings.provisional_games, settings.address_burst) == (5, 3, 17)
    calls[0][0].state.engine.dispose()
    # several workers: each reads them from the environment
    calls.clear()
    result = runner.invoke(cli, ["serve", "--db", database, "--workers", "2", "--token-rate", "5"])
    assert result.exit_code == 0, result.output
    settings = settings_from_env()
    assert (settings.db, settings.token_rate, settings.address_burst) == (database, 5.0, 17)
    # a bad limit is refused before anything starts
    calls.clear()
    result = runner.invoke(cli, ["serve", "--db", database, "--token-burst", "0"])
    assert result.exit_code != 0 and "token_burst" in result.output and not calls


# -- same origin ----------------------------------------------------------------------------------------------
SITE = "http://testserver"


@pytest.fixture
def site(app: Any) -> Iterator[tuple[Any, TestClient, dict[str, str]]]:
    from podium.server.store import create_league

    tokens = {role: create_token(app.state.engine, role, role) for role in ("moderator", "reporter")}
    league = create_league(app.state.engine, "queue", "elo", {}, True)
    from podium.server.store import report_match

    report_match(app.state.engine, league, {"id": "q1", "teams": [["a"], ["b"]]}, tokens["reporter"], 1000)
    with TestClient(app) as client:
        yield app, client, tokens


def _snapshot(app: Any) -> Any:
    with app.state.engine.connect() as conn:
        return {t.name: sorted(map(tuple, conn.execute(select(t))), key=repr) for t in (db.matches, db.ratings)}


def test_sign_in_needs_a_sign_it_came_from_this_site(site: tuple[Any, TestClient, dict[str, str]]) -> None:
    _, client, tokens = site
    form = {"token": tokens["moderator"], "next": "/leagues/queue/pending"}
    for headers, field in (({}, "neither an Origin nor a Referer"),
                           ({"Origin": "https://evil.example"}, "not from 'https://evil.example'"),
                           ({"Origin": "null"}, "'Origin: null'"),
                           ({"Origin": "http://testserver.evil.example"}, "testserver.evil.example"),
                           ({"Origin": "ftp://testserver"}, "ftp://testserver"),
                           ({"Referer": "https://evil.example/leagues"}, "came from 'https://evil.example/leagues'"),
                           ({"Referer": "http://user@testserver/login"}, "user@testserver"),
                           # Origin decides when both are sent
                           ({"Origin": "https://evil.example", "Referer": f"{SITE}/login"}, "evil.example")):
        response = client.post("/login", data=form, headers=headers, follow_redirects=False)
        assert response.status_code == 403, headers
        assert "set-cookie" not in response.headers and field.replace("'", "&#39;") in response.text, (headers, response.text)
    # the browser's own: an Origin of this site, or without one a Referer on this site
    for headers in ({"Origin": SITE}, {"Referer": f"{SITE}/login?next=/x"}, {"Origin": "HTTP://TestServer"},
                    {"Origin": "http://testserver:80"}):
        response = client.post("/login", data=form, headers=headers, follow_redirects=False)
        assert response.status_code == 303 and "podium_token=" in response.headers["set-cookie"], headers


def test_a_decision_without_origin_or_referer_changes_nothing(site: tuple[Any, TestClient, dict[str, str]]) -> None:
    from podium.server.pages import _csrf

    app, client, tokens = site
    client.cookies.set("podium_token", tokens["moderator"])
    csrf = _csrf(tokens["moderator"])
    before = _snapshot(app)
    for headers in ({}, {"Origin": "https://evil.example"}, {"Origin": "null"}, {"Referer": "https://evil.example/"}):
        response = client.post("/leagues/queue/pending/q1/approve", data={"csrf": csrf}, headers=headers,
                               follow_redirects=False)
        assert response.status_code == 403, headers
    assert _snapshot(app) == before
    assert client.post("/logout", follow_redirects=False).status_code == 403  # no forced sign-out either
    # a Referer on this site is enough
    response = client.post("/leagues/queue/pending/q1/approve", data={"csrf": csrf},
                           headers={"Referer": f"{SITE}/leagues/queue/pending"}, follow_redirects=False)
    assert response.status_code == 303
    assert client.get(f"{LEAGUES}/queue/matches/q1").json()["status"] == "recorded"
    response = client.post("/logout", headers={"Origin": SITE}, follow_redirects=False)
    assert response.status_code == 303 and "max-age=0" in response.headers["set-cookie"].lower()


def test_behind_a_proxy_the_forwarded_host_counts_only_when_trusted(db_url: str) -> None:
    token_settings = {"token_rate": 0, "address_rate": 0}
    headers = {"Host": "127.0.0.1:8000", "X-Forwarded-Host": "ratings.example", "Origin": "https://ratings.example"}
    for trusted, status in ((False, 403), (True, 303)):
        app = create_app(Settings(db=db_url, trust_forwarded_host=trusted, **token_settings))
        try:
            token = create_token(app.state.engine, "moderator", "m")
            with TestClient(app) as client:
                response = client.post("/login", data={"token": token}, headers=headers, follow_redirects=False)
                assert response.status_code == status, response.text
                # a proxy that passes Host through needs nothing
                passed = {"Host": "ratings.example", "Origin": "https://ratings.example"}
                assert client.post("/login", data={"token": token}, headers=passed,
                                   follow_redirects=False).status_code == 303
                # https's default port written out in Host is the same site
                passed = {"Host": "ratings.example:443", "Origin": "https://ratings.example"}
                assert client.post("/login", data={"token": token}, headers=passed,
                                   follow_redirects=False).status_code == 303
        finally:
            app.state.engine.dispose()


# -- the API docs ---------------------------------------------------------------------------------------------
def test_the_docs_page_names_only_files_of_this_server(client: TestClient) -> None:
    page = client.get("/api/v1/docs")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    urls = re.findall(r'(?:href|src)="([^"]+)"', page.text) + re.findall(r"url: '([^']+)'", page.text)
    assert urls and all(u.startswith("/api/v1/") for u in urls), urls
    assert "//" not in "".join(urls) and "cdn" not in page.text
    assert '"validatorUrl": null' in page.text  # no badge fetched from swagger.io
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200 and len(response.content) > 500, url
    assert "javascript" in client.get("/api/v1/docs/static/swagger-ui-bundle.js").headers["content-type"]
    assert client.get("/api/v1/docs/static/nope.js").status_code == 404
    assert "/api/v1/docs" not in client.get("/api/v1/openapi.json").json()["paths"]
