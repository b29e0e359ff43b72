"""The league server's OpenAPI schema, written to say what the server does.

FastAPI's generated schema describes FastAPI's defaults, not this server: its 422 body is an array of
validation errors, it knows nothing of the statuses the handlers raise (:class:`StoreError`), the middleware
(413, 429) or the database (503), and it declares no authentication.  :func:`install` replaces the app's
``openapi()`` by one that starts from FastAPI's paths and parameters and then states, for every operation,
every status it can answer with its body (the one error body, :data:`ERROR_SCHEMA`, for every refusal), the
role its bearer token needs, and the shape of its success.  The table :data:`OPERATIONS` is the one place that
says so; a test compares it with what the server answers.

It also makes Starlette's own refusals (an unknown path, a method a path does not have) use the error body,
with an ``Allow`` header that lists every method of the path (Starlette's router names the first route's only).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

__all__ = ["ERROR_SCHEMA", "OPERATIONS", "Operation", "install", "allowed_methods"]

#: The body of every refusal: a message and the name of the field, parameter or part of the request at fault.
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["detail", "field"], "additionalProperties": False,
    "properties": {"detail": {"type": "string", "description": "What is wrong, for a person."},
                   "field": {"type": "string", "description": "The field or parameter at fault (or 'body', "
                                                              "'authorization', 'rate', 'database', ...)."}}}

BEARER = "bearer"

# What each refusal means; an operation's own wording (Operation.notes) takes precedence.
MEANING = {
    400: "The body is not JSON (or is empty).",
    401: "No bearer token, or an unknown or revoked one.",
    403: "The token's role is too weak for this operation.",
    404: "No such league (or match, or player; the field says which).",
    405: "The path does not have this method; Allow lists the ones it has.",
    409: "Conflicts with what is stored; nothing was written.",
    413: "The body is larger than the server's limit.",
    422: "A field of the body or a query parameter is refused; the field names it.",
    429: "Too many requests from this token or address; retry after Retry-After seconds.",
    503: "The database is busy (or the server is stopping); retry.",
}
# Every operation reads the database and passes the rate limiter.
COMMON = (429, 503)
# Every operation with a JSON body: it may not parse, may be too large, may hold a refused field.
BODY = (400, 413, 422)

_NUMBER = {"type": "number"}
_RATING = {"type": "object", "required": ["mu", "sigma"], "properties": {"mu": _NUMBER, "sigma": _NUMBER}}
_LEAGUE = {"type": "object", "required": ["name", "model", "params", "moderated", "smoothing", "prior"],
           "properties": {"name": {"type": "string"}, "model": {"type": "string"}, "params": {"type": "object"},
                          "moderated": {"type": "boolean"}, "smoothing": {"type": "boolean"}, "prior": _RATING,
                          "matches": {"type": "integer"}, "players": {"type": "integer"}}}
_MATCH = {"type": "object", "required": ["id", "league", "status", "seq", "record", "reported", "decided"],
          "properties": {"id": {"type": "string"}, "league": {"type": "string"},
                         "status": {"type": "string", "enum": ["pending", "recorded", "rejected", "voided"]},
                         "seq": {"type": ["integer", "null"]}, "record": {"type": "object"},
                         "reported": {"type": "string"}, "decided": {"type": ["string", "null"]},
                         "ratings": {"type": "array", "items": {"type": "object"}}}}
_ROW = {"type": "object", "required": ["rank", "player", "mu", "sigma", "score", "games"],
        "properties": {"rank": {"type": "integer"}, "player": {"type": "string"}, "mu": _NUMBER, "sigma": _NUMBER,
                       "score": _NUMBER, "games": {"type": "integer"}}}
_PAGE = {"total": {"type": "integer"}, "offset": {"type": "integer"}, "limit": {"type": "integer"}}


def _object(required: list[str], properties: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"type": "object", "required": required, "properties": properties or {}}


#: The success bodies, as components (``#/components/schemas/<name>``).
SCHEMAS: dict[str, dict[str, Any]] = {
    "Error": ERROR_SCHEMA,
    "League": _LEAGUE,
    "Leagues": _object(["leagues"], {"leagues": {"type": "array", "items": _object(
        ["name", "model", "moderated", "matches", "players"])}}),
    "Match": _MATCH,
    "RecentMatches": _object(["league", "matches"], {"league": {"type": "string"}, "matches": {
        "type": "array", "items": _object(["id", "seq", "record", "decided"])}}),
    "PendingMatches": _object(["league", "total", "offset", "limit", "matches"],
                              {"league": {"type": "string"}, **_PAGE, "matches": {"type": "array", "items": _MATCH}}),
    "Audit": _object([]),
    "Leaderboard": _object(["league", "total", "offset", "limit", "rows"],
                           {"league": {"type": "string"}, **_PAGE, "rows": {"type": "array", "items": _ROW}}),
    "Smoothed": _object(["league", "rows"], {"league": {"type": "string"}, "rows": {"type": "array"}}),
    "Player": _object(["league", "player", "rating", "games", "history"],
                      {"league": {"type": "string"}, "player": {"type": "string"}, "games": {"type": "integer"},
                       "history": {"type": "array"}, "rating": {"type": "object"}}),
    "Prediction": _object(["teams", "win_probabilities"],
                          {"teams": {"type": "array"}, "win_probabilities": {"type": "array", "items": _NUMBER}}),
    "Balance": _object(["teams", "quality"], {"teams": {"type": "array"}, "quality": _NUMBER}),
    "Token": _object(["token", "role"], {"token": {"type": "string"}, "role": {"type": "string"}}),
    "Health": _object(["status", "database"], {"status": {"type": "string"}, "database": {"type": "string"}}),
}


@dataclass(frozen=True)
class Operation:
    """What one operation answers.

    Attributes
    ----------
    success : dict
        Each success status and its body's component name (:data:`SCHEMAS`) with a description.
    errors : tuple of int
        The refusals it can answer beyond :data:`COMMON` (and :data:`BODY` when ``body``).
    role : str or None
        The role its token needs (None: no token).
    body : bool
        Whether it takes a JSON body.
    notes : dict
        Wording of its own for some refusals.
    """

    success: dict[int, tuple[str, str]]
    errors: tuple[int, ...] = ()
    role: str | None = None
    body: bool = False
    notes: dict[int, str] = field(default_factory=dict)

    def statuses(self) -> list[int]:
        """Every status this operation can answer."""
        errors = set(self.errors) | set(COMMON) | (set(BODY) if self.body else set())
        if self.role is not None:
            errors |= {401, 403} if self.role != "reporter" else {401}  # (every token may report)
        return sorted(set(self.success) | errors)


_LEAGUE_PATH = "/api/v1/leagues/{name}"
_MATCH_PATH = _LEAGUE_PATH + "/matches/{match_id}"
_QUERY = (404, 422)  # a league's reads: an unknown league, a query parameter out of range
_DECIDE = {409: "The match is not in a state this applies to (the field says which)."}

#: Every operation of the API by (method, path).
OPERATIONS: dict[tuple[str, str], Operation] = {
    ("get", "/api/v1/leagues"): Operation({200: ("Leagues", "Every league, with its counts.")}),
    ("post", "/api/v1/leagues"): Operation({201: ("League", "The league created.")}, (409,), "admin", True,
                                           {409: "A league of this name exists."}),
    ("get", _LEAGUE_PATH): Operation({200: ("League", "The league, with its counts.")}, (404,)),
    ("patch", _LEAGUE_PATH): Operation({200: ("League", "The league as changed.")}, (404,), "admin", True,
                                       {422: "The field is refused, or the league's model has no smoothing."}),
    ("post", _LEAGUE_PATH + "/matches"): Operation(
        {200: ("Match", "A retry of a match already reported (same id, same content)."),
         201: ("Match", "Recorded, with the ratings it changed."),
         202: ("Match", "Stored as pending: the league is moderated.")},
        (404, 409), "reporter", True, {409: "The id belongs to a different match."}),
    ("get", _LEAGUE_PATH + "/matches"): Operation({200: ("RecentMatches", "The latest recorded matches.")}, _QUERY),
    ("get", _LEAGUE_PATH + "/pending"): Operation({200: ("PendingMatches", "A page of the pending matches.")},
                                                  _QUERY, "moderator"),
    ("get", _LEAGUE_PATH + "/audit"): Operation(
        {200: ("Audit", "The flags with their evidence.")}, _QUERY, "moderator",
        notes={422: "The league is too small or too large for the audit."}),
    ("get", _MATCH_PATH): Operation({200: ("Match", "The match.")}, (404,)),
    ("put", _MATCH_PATH): Operation({200: ("Match", "The match as corrected (the league replayed).")},
                                    (404, 409), "moderator", True, _DECIDE),
    ("post", _MATCH_PATH + "/approve"): Operation({200: ("Match", "Recorded (again: a no-op).")}, (404, 409),
                                                  "moderator", notes=_DECIDE),
    ("post", _MATCH_PATH + "/reject"): Operation({200: ("Match", "Rejected.")}, (404, 409), "moderator",
                                                 notes=_DECIDE),
    ("post", _MATCH_PATH + "/void"): Operation({200: ("Match", "Voided (the league replayed).")}, (404, 409),
                                               "moderator", notes=_DECIDE),
    ("get", _LEAGUE_PATH + "/leaderboard"): Operation({200: ("Leaderboard", "A page of the leaderboard.")}, _QUERY),
    ("get", _LEAGUE_PATH + "/smoothed"): Operation(
        {200: ("Smoothed", "A page of the smoothed leaderboard.")}, _QUERY,
        notes={404: "No such league, its smoothing option is off, or nothing was computed yet (the field says "
                    "which)."}),
    ("get", _LEAGUE_PATH + "/players/{player}"): Operation({200: ("Player", "The player's rating and history.")},
                                                           _QUERY),
    ("post", _LEAGUE_PATH + "/predict"): Operation({200: ("Prediction", "Win and rank probabilities.")}, (404,),
                                                   body=True),
    ("post", _LEAGUE_PATH + "/balance"): Operation({200: ("Balance", "The fairest split into teams.")}, (404,),
                                                   body=True),
    ("post", "/api/v1/tokens"): Operation({201: ("Token", "The new token (shown once).")}, (), "admin", True),
    ("get", "/api/v1/health"): Operation({200: ("Health", "The server and its database answer.")}),
}

_HEADERS = {
    401: {"WWW-Authenticate": {"schema": {"type": "string"}, "description": "Bearer"}},
    429: {"Retry-After": {"schema": {"type": "string"}, "description": "Seconds to wait."}},
    503: {"Retry-After": {"schema": {"type": "string"}, "description": "Seconds to wait."}},
}


def _json(schema: str) -> dict[str, Any]:
    return {"application/json": {"schema": {"$ref": f"#/components/schemas/{schema}"}}}


def _responses(op: Operation) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for status in op.statuses():
        if status in op.success:
            schema, description = op.success[status]
            out[str(status)] = {"description": description, "content": _json(schema)}
            continue
        answer: dict[str, Any] = {"description": op.notes.get(status, MEANING[status]), "content": _json("Error")}
        if status in _HEADERS:
            answer["headers"] = _HEADERS[status]
        if status == 401 and op.role is not None:
            answer["description"] += f" (This needs a {op.role} token.)"
        out[str(status)] = answer
    return out


def build_schema(app: FastAPI) -> dict[str, Any]:
    """The app's OpenAPI schema: FastAPI's paths and parameters with :data:`OPERATIONS`' answers and security."""
    schema = get_openapi(title=app.title, version=app.version, routes=app.routes, description=app.description)
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            op = OPERATIONS.get((method, path))
            if op is None:
                raise RuntimeError(f"{method.upper()} {path} is not described in podium.server.openapi.OPERATIONS.")
            operation["responses"] = _responses(op)
            if op.role is not None:
                operation["security"] = [{BEARER: []}]
                operation["description"] = (operation.get("description", "") +
                                            f"\n\nNeeds a token of the {op.role} role (or a stronger one).").strip()
    _add_links(schema)
    components = schema.setdefault("components", {})
    components["schemas"] = dict(SCHEMAS)  # (FastAPI's validation error schemas describe no answer of this server)
    components["securitySchemes"] = {BEARER: {
        "type": "http", "scheme": "bearer",
        "description": "A token from 'podium token create' or POST /api/v1/tokens: Authorization: Bearer pod_..."}}
    return schema


def _add_links(schema: dict[str, Any]) -> None:
    """OpenAPI links from what creates a league or a match to what reads or changes it (clients and stateful
    testing follow them)."""
    targets: dict[str, list[str]] = {"league": [], "match": []}
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            if path.startswith(_MATCH_PATH):
                targets["match"].append(operation["operationId"])
            elif path.startswith(_LEAGUE_PATH) and "{" not in path[len(_LEAGUE_PATH):]:
                targets["league"].append(operation["operationId"])
    sources = {("post", "/api/v1/leagues"): ("league", ("201",)),
               ("post", _LEAGUE_PATH + "/matches"): ("match", ("200", "201", "202"))}
    for (method, path), (kind, statuses) in sources.items():
        parameters = ({"name": "$response.body#/name"} if kind == "league" else
                      {"name": "$request.path.name", "match_id": "$response.body#/id"})
        links = {operation_id: {"operationId": operation_id, "parameters": parameters}
                 for operation_id in targets[kind]}
        for status in statuses:
            schema["paths"][path][method]["responses"][status]["links"] = links


def allowed_methods(app: FastAPI, scope: dict[str, Any]) -> list[str]:
    """Every method the request's path has, over all routes (HEAD with GET, as Starlette answers it)."""
    methods: set[str] = set()
    for route in app.router.routes:
        route_methods = getattr(route, "methods", None)
        if route_methods and route.matches(scope)[0] != Match.NONE:
            methods |= set(route_methods)
    return sorted(methods)


def install(app: FastAPI) -> None:
    """Serve :func:`build_schema` as the app's OpenAPI schema (built once), and answer Starlette's own refusals
    with the error body (under ``/api/``) and a complete ``Allow`` header."""
    built: list[dict[str, Any]] = []

    def openapi() -> dict[str, Any]:
        if not built:
            built.append(build_schema(app))
        return built[0]

    app.openapi = openapi  # type: ignore[method-assign]

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, error: StarletteHTTPException) -> Response:
        headers = dict(error.headers or {})
        if error.status_code == 405:
            headers["Allow"] = ", ".join(allowed_methods(app, dict(request.scope)))
        if not request.url.path.startswith("/api/"):
            return await http_exception_handler(request, StarletteHTTPException(error.status_code, error.detail,
                                                                                headers))
        field = {404: "path", 405: "method"}.get(error.status_code, "request")
        return JSONResponse({"detail": str(error.detail), "field": field}, error.status_code, headers=headers)
