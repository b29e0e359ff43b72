"""The OpenAPI schema says what the server does: targeted requests to every operation get statuses the schema
declares for it, every refusal has the declared error body, writes declare the bearer scheme, every pattern is
anchored, and a method a path does not have is answered 405 with ``Allow`` listing the ones it has."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .conftest import auth

API = "/api/v1"
L = f"{API}/leagues"
BAD_JSON = {"content": b"{not json", "headers": {"Content-Type": "application/json"}}
MATCH = {"teams": [["ann"], ["bob"]], "time": 1}


@pytest.fixture
def schema(client: Any) -> dict[str, Any]:
    response = client.get(f"{API}/openapi.json")
    assert response.status_code == 200
    return response.json()


@pytest.fixture
def seeded(client: Any, tokens: dict[str, str]) -> dict[str, str]:
    """An Elo league 'chess' with matches m1 and m2 recorded, a moderated TrueSkill league 'club' (smoothing on)
    with p1 and p2 pending."""
    admin = auth(tokens["admin"])
    for body in ({"name": "chess", "model": "elo"},
                 {"name": "club", "model": "trueskill", "moderated": True, "smoothing": True}):
        assert client.post(L, json=body, headers=admin).status_code == 201
    for league, match_id in (("chess", "m1"), ("chess", "m2"), ("club", "p1"), ("club", "p2")):
        assert client.post(f"{L}/{league}/matches", json={**MATCH, "id": match_id}, headers=admin).status_code in (201, 202)
    return tokens


def operation_of(schema: dict[str, Any], method: str, url: str) -> tuple[str, dict[str, Any]]:
    """The schema's path template and operation that ``method url`` reaches."""
    parts = url.split("?")[0].strip("/").split("/")
    for template, methods in schema["paths"].items():
        pieces = template.strip("/").split("/")
        if len(pieces) == len(parts) and all(p.startswith("{") or p == q for p, q in zip(pieces, parts)):
            if method.lower() in methods:
                return template, methods[method.lower()]
    raise AssertionError(f"{method} {url}: no operation in the schema")


def check_error(body: Any, schema: dict[str, Any]) -> None:
    """``body`` is an instance of the schema's Error component."""
    error = schema["components"]["schemas"]["Error"]
    assert error["type"] == "object" and sorted(error["required"]) == ["detail", "field"]
    assert error.get("additionalProperties") is False
    assert isinstance(body, dict) and sorted(body) == ["detail", "field"], body
    assert all(isinstance(body[key], str) and error["properties"][key]["type"] == "string" for key in body)


def check_answer(schema: dict[str, Any], response: Any, expect: int) -> None:
    method, url = response.request.method, response.request.url.path
    assert response.status_code == expect, f"{method} {url}: {response.status_code} {response.text[:300]}"
    template, operation = operation_of(schema, method, url)
    declared = operation["responses"]
    assert str(expect) in declared, f"{method} {template} answers {expect}, declares {sorted(declared)}"
    content = declared[str(expect)]["content"]["application/json"]["schema"]["$ref"]
    if expect >= 400:
        assert content == "#/components/schemas/Error"
        check_error(response.json(), schema)
    else:
        assert content != "#/components/schemas/Error"
        assert isinstance(response.json(), dict)


# (method, path, role (None: no token; "bad": an unknown token), request kwargs, expected status), in order:
# some change what later ones see.
CASES: list[tuple[str, str, str | None, dict[str, Any], int]] = [
    ("GET", L, None, {}, 200),
    ("POST", L, None, {"json": {"name": "x", "model": "elo"}}, 401),
    ("POST", L, "bad", {"json": {"name": "x", "model": "elo"}}, 401),
    ("POST", L, "moderator", {"json": {"name": "x", "model": "elo"}}, 403),
    ("POST", L, "admin", BAD_JSON, 400),
    ("POST", L, "admin", {"json": {"name": "chess", "model": "elo"}}, 409),
    ("POST", L, "admin", {"json": {"name": "x"}}, 422),
    ("POST", L, "admin", {"json": {"name": "x", "model": "elo"}}, 201),
    ("GET", f"{L}/chess", None, {}, 200),
    ("GET", f"{L}/nope", None, {}, 404),
    ("PATCH", f"{L}/club", None, {"json": {"smoothing": False}}, 401),
    ("PATCH", f"{L}/club", "moderator", {"json": {"smoothing": False}}, 403),
    ("PATCH", f"{L}/club", "admin", BAD_JSON, 400),
    ("PATCH", f"{L}/chess", "admin", {"json": {"smoothing": True}}, 422),
    ("PATCH", f"{L}/nope", "admin", {"json": {"smoothing": True}}, 404),
    ("PATCH", f"{L}/club", "admin", {"json": {"smoothing": True}}, 200),
    ("POST", f"{L}/chess/matches", None, {"json": MATCH}, 401),
    ("POST", f"{L}/chess/matches", "bad", {"json": MATCH}, 401),
    ("POST", f"{L}/chess/matches", "reporter", BAD_JSON, 400),
    ("POST", f"{L}/chess/matches", "reporter", {"json": {"teams": [["ann"]]}}, 422),
    ("POST", f"{L}/nope/matches", "reporter", {"json": MATCH}, 404),
    ("POST", f"{L}/chess/matches", "reporter", {"json": {**MATCH, "id": "m3"}}, 201),
    ("POST", f"{L}/chess/matches", "reporter", {"json": {**MATCH, "id": "m3"}}, 200),
    ("POST", f"{L}/chess/matches", "reporter", {"json": {**MATCH, "id": "m3", "time": 2}}, 409),
    ("POST", f"{L}/club/matches", "reporter", {"json": {**MATCH, "id": "p3"}}, 202),
    ("GET", f"{L}/chess/matches", None, {}, 200),
    ("GET", f"{L}/chess/matches?limit=0", None, {}, 422),
    ("GET", f"{L}/nope/matches", None, {}, 404),
    ("GET", f"{L}/club/pending", None, {}, 401),
    ("GET", f"{L}/club/pending", "reporter", {}, 403),
    ("GET", f"{L}/club/pending?offset=-1", "moderator", {}, 422),
    ("GET", f"{L}/nope/pending", "moderator", {}, 404),
    ("GET", f"{L}/club/pending", "moderator", {}, 200),
    ("GET", f"{L}/chess/audit", None, {}, 401),
    ("GET", f"{L}/chess/audit", "reporter", {}, 403),
    ("GET", f"{L}/nope/audit", "moderator", {}, 404),
    ("GET", f"{L}/chess/audit", "moderator", {}, 200),
    ("GET", f"{L}/club/audit", "moderator", {}, 422),  # (no match recorded: too small to audit)
    ("GET", f"{L}/chess/matches/m1", None, {}, 200),
    ("GET", f"{L}/chess/matches/zz", None, {}, 404),
    ("POST", f"{L}/club/matches/p1/approve", None, {}, 401),
    ("POST", f"{L}/club/matches/p1/approve", "reporter", {}, 403),
    ("POST", f"{L}/club/matches/zz/approve", "moderator", {}, 404),
    ("POST", f"{L}/club/matches/p1/approve", "moderator", {}, 200),
    ("POST", f"{L}/club/matches/p1/approve", "moderator", {}, 200),
    ("POST", f"{L}/club/matches/p1/reject", "moderator", {}, 409),
    ("POST", f"{L}/club/matches/p2/reject", None, {}, 401),
    ("POST", f"{L}/club/matches/p2/reject", "reporter", {}, 403),
    ("POST", f"{L}/nope/matches/p2/reject", "moderator", {}, 404),
    ("POST", f"{L}/club/matches/p2/reject", "moderator", {}, 200),
    ("POST", f"{L}/club/matches/p2/approve", "moderator", {}, 409),
    ("POST", f"{L}/chess/matches/m2/void", None, {}, 401),
    ("POST", f"{L}/chess/matches/m2/void", "reporter", {}, 403),
    ("POST", f"{L}/chess/matches/zz/void", "moderator", {}, 404),
    ("POST", f"{L}/chess/matches/m2/void", "moderator", {}, 200),
    ("POST", f"{L}/chess/matches/m2/void", "moderator", {}, 409),
    ("PUT", f"{L}/chess/matches/m1", None, {"json": MATCH}, 401),
    ("PUT", f"{L}/chess/matches/m1", "reporter", {"json": MATCH}, 403),
    ("PUT", f"{L}/chess/matches/m1", "moderator", BAD_JSON, 400),
    ("PUT", f"{L}/chess/matches/m1", "moderator", {"json": {"teams": 3}}, 422),
    ("PUT", f"{L}/chess/matches/zz", "moderator", {"json": MATCH}, 404),
    ("PUT", f"{L}/chess/matches/m2", "moderator", {"json": MATCH}, 409),  # (voided above)
    ("PUT", f"{L}/chess/matches/m1", "moderator", {"json": {"teams": [["bob"], ["ann"]], "time": 1}}, 200),
    ("GET", f"{L}/chess/leaderboard", None, {}, 200),
    ("GET", f"{L}/chess/leaderboard?k=11", None, {}, 422),
    ("GET", f"{L}/nope/leaderboard", None, {}, 404),
    ("GET", f"{L}/club/smoothed", None, {}, 404),  # (nothing computed yet)
    ("GET", f"{L}/chess/smoothed?k=-1", None, {}, 422),
    ("GET", f"{L}/chess/players/ann", None, {}, 200),
    ("GET", f"{L}/chess/players/zed", None, {}, 404),
    ("GET", f"{L}/chess/players/ann?recent=1000", None, {}, 422),
    ("POST", f"{L}/chess/predict", None, {"json": {"players": ["ann", "bob"]}}, 200),
    ("POST", f"{L}/chess/predict", None, BAD_JSON, 400),
    ("POST", f"{L}/chess/predict", None, {"json": {"players": ["ann"]}}, 422),
    ("POST", f"{L}/nope/predict", None, {"json": {"players": ["ann", "bob"]}}, 404),
    ("POST", f"{L}/chess/balance", None, {"json": {"players": ["ann", "bob"]}}, 200),
    ("POST", f"{L}/chess/balance", None, BAD_JSON, 400),
    ("POST", f"{L}/chess/balance", None, {"json": {"players": "ann"}}, 422),
    ("POST", f"{L}/nope/balance", None, {"json": {"players": ["ann", "bob"]}}, 404),
    ("POST", f"{API}/tokens", None, {"json": {"role": "reporter"}}, 401),
    ("POST", f"{API}/tokens", "moderator", {"json": {"role": "reporter"}}, 403),
    ("POST", f"{API}/tokens", "admin", BAD_JSON, 400),
    ("POST", f"{API}/tokens", "admin", {"json": {"role": "king"}}, 422),
    ("POST", f"{API}/tokens", "admin", {"json": {"role": "reporter"}}, 201),
    ("GET", f"{API}/health", None, {}, 200),
]


def test_every_operation_declares_what_it_answers(client: Any, seeded: dict[str, str], schema: dict[str, Any]) -> None:
    for method, url, role, kwargs, expect in CASES:
        kwargs = dict(kwargs)
        token = {None: None, "bad": "pod_unknown"}.get(role, seeded.get(role or ""))
        if token is not None:
            kwargs["headers"] = {**kwargs.get("headers", {}), **auth(token)}
        check_answer(schema, client.request(method, url, **kwargs), expect)
    reached = {(method.lower(), operation_of(schema, method, url)[0]) for method, url, *_ in CASES}
    declared = {(method, path) for path, methods in schema["paths"].items() for method in methods}
    assert reached == declared, f"operations without a targeted request: {declared - reached}"


def test_oversized_body_is_413_as_declared(client: Any, seeded: dict[str, str], schema: dict[str, Any]) -> None:
    limit = client.app.state.settings.max_body_bytes
    big = {"teams": [["ann"], ["bob"]], "meta": {"pad": "x" * (limit + 1)}}
    for url in (f"{L}/chess/matches", f"{L}/chess/predict", f"{API}/tokens"):
        check_answer(schema, client.post(url, json=big, headers=auth(seeded["admin"])), 413)


@pytest.fixture
def limited(db_url: str) -> Iterator[Any]:
    from fastapi.testclient import TestClient

    from podium.server import Settings, create_app

    app = create_app(Settings(db=db_url, token_rate=1, token_burst=1, address_rate=1, address_burst=1),
                     clock=lambda: 0.0)
    with TestClient(app) as test_client:
        yield test_client
    app.state.engine.dispose()


def test_rate_limited_requests_are_429_as_declared(limited: Any) -> None:
    from podium.server.store import create_token

    schema = limited.get(f"{API}/openapi.json").json()  # (spends the address's one request)
    token = create_token(limited.app.state.engine, "admin", "limited")
    check_answer(schema, limited.get(L), 429)
    check_answer(schema, limited.post(f"{API}/tokens", json={"role": "reporter"}, headers=auth(token)), 429)
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            assert "429" in operation["responses"] and "Retry-After" in operation["responses"]["429"]["headers"]


def test_security_scheme_and_roles(schema: dict[str, Any]) -> None:
    assert schema["components"]["securitySchemes"] == {"bearer": {
        "type": "http", "scheme": "bearer", "description": schema["components"]["securitySchemes"]["bearer"]["description"]}}
    needs = {("post", "/api/v1/leagues"): "admin", ("patch", "/api/v1/leagues/{name}"): "admin",
             ("post", "/api/v1/tokens"): "admin", ("post", "/api/v1/leagues/{name}/matches"): "reporter",
             **{(method, f"/api/v1/leagues/{{name}}{tail}"): "moderator" for method, tail in [
                 ("get", "/pending"), ("get", "/audit"), ("put", "/matches/{match_id}"),
                 ("post", "/matches/{match_id}/approve"), ("post", "/matches/{match_id}/reject"),
                 ("post", "/matches/{match_id}/void")]}}
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            role = needs.get((method, path))
            if role is None:
                assert "security" not in operation, (method, path)
                assert "401" not in operation["responses"], (method, path)
            else:
                assert operation["security"] == [{"bearer": []}], (method, path)
                assert f"the {role} role" in operation["description"], (method, path)
                assert "401" in operation["responses"], (method, path)
    assert "HTTPValidationError" not in str(schema) and "ValidationError" not in schema["components"]["schemas"]


def test_every_pattern_is_anchored(schema: dict[str, Any]) -> None:
    patterns: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("pattern"), str):
                patterns.append(node["pattern"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    assert len(patterns) >= 3  # the league name, a match id, the leaderboard's order
    assert all(p.startswith("^") and p.endswith("$") for p in patterns), patterns


@pytest.mark.parametrize("method", ["OPTIONS", "DELETE", "PUT", "POST"])
def test_a_method_the_path_lacks_is_405_with_every_method_allowed(client: Any, seeded: dict[str, str],
                                                                  schema: dict[str, Any], method: str) -> None:
    for url, template in ((f"{L}/chess", "/api/v1/leagues/{name}"), (L, "/api/v1/leagues"),
                          (f"{L}/chess/matches/m1", "/api/v1/leagues/{name}/matches/{match_id}")):
        methods = sorted(m.upper() for m in schema["paths"][template])
        if method in methods:
            continue
        response = client.request(method, url, headers=auth(seeded["admin"]))
        assert response.status_code == 405, (method, url, response.text)
        assert response.headers["allow"] == ", ".join(methods), (method, url)
        check_error(response.json(), schema)
    assert client.options(f"{L}/chess").headers["allow"] == "GET, PATCH"


def test_an_unknown_api_path_is_404_with_the_error_body(client: Any, schema: dict[str, Any]) -> None:
    response = client.get(f"{API}/nothing")
    assert response.status_code == 404
    check_error(response.json(), schema)
