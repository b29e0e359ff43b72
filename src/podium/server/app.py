"""The league server's FastAPI application, built by :func:`create_app` (nothing is created at import).

JSON API under ``/api/v1`` (OpenAPI schema at ``/api/v1/openapi.json``, docs at ``/api/v1/docs``) and
server-rendered pages (``pages.py``).  Reads are public; every write names the role it needs and checks the
bearer token (``Authorization: Bearer pod_...``).  Every refusal is ``{"detail": message, "field": name}``
with a 4xx status, and nothing is stored from a refused request.  Requests are rate-limited per token and
per client address (``ratelimit.py``).  The API docs page is Swagger UI served from podium itself (its
files come with the ``fastapi-offline`` package): the page loads nothing from other sites.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError, OperationalError, SQLAlchemyError

from . import smoothing, store
from .db import make_engine, migrate, read_transaction
from .ratelimit import RateLimit
from .openapi import install as install_openapi
from .records import MATCH_SCHEMA, PLAYER_SCHEMA, TEAMS_SCHEMA, request_schema
from .settings import ENVIRONMENT, SWITCH_INTERVAL, Settings, settings_from_env  # (the environment: re-exported)
from .store import StoreError, TokenInfo
from .teams import PREDICT_MAX_PLAYERS

__all__ = ["create_app", "app_from_env", "settings_from_env", "ENVIRONMENT"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

#: The largest offset or count a query parameter takes: a signed 32-bit integer, which every database binds,
#: compares and adds to without overflow (a larger one answered 500 from the driver).
QUERY_MAX = 2**31 - 1


class BodyLimit:
    """Refuse request bodies over ``limit`` bytes with 413, by Content-Length or while streaming."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for key, value in scope.get("headers", []):
            if key == b"content-length":
                try:
                    size = int(value)
                except ValueError:
                    size = -1
                if size < 0 or size > self.limit:
                    await _send_json(send, 413, "body", f"The request body may be at most {self.limit} bytes; "
                                                        f"Content-Length says {value.decode('latin-1')[:20]}.")
                    return
        seen = 0
        started = False

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _TooLarge()
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited, tracking_send)
        except _TooLarge:
            if not started:
                await _send_json(send, 413, "body", f"The request body may be at most {self.limit} bytes.")


class _TooLarge(Exception):
    pass


class _GroupCommit:
    """The reports of one league that wait for its writer, written a batch per transaction.

    Each report joins the league's queue and waits for its answer; one writer task per league writes
    everything queued so far (:func:`store.record_reports`) while the queue is not empty, so the reports
    that arrive while a batch is being written go together in the next one.  A lone report is written at
    once; under load the lock, reads and commit of a league are paid once per batch.  The writer belongs
    to no request: a request cancelled while it waits (its client gone, a server shutting down) leaves
    the others' answers to come.  A batch that fails on something other than the database (a bug one
    report's content triggers) is retried report by report, so that the failure reaches only that
    report; a database failure (busy, connection lost) fails the batch, which was not written, and its
    clients retry.
    """

    MAX_BATCH = 256

    def __init__(self, engine: Engine, league: store.LeagueInfo) -> None:
        self.engine = engine
        self.league = league
        self.queue: list[tuple[store.Report, asyncio.Future[Any]]] = []
        self.writer: asyncio.Task[None] | None = None

    async def submit(self, report: store.Report) -> tuple[int, dict[str, Any]]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self.queue.append((report, future))
        # (A writer that is still running sees this report: it looks at the queue again after each batch,
        # and nothing else runs between its last look and its end.)
        if self.writer is None or self.writer.done():
            self.writer = loop.create_task(self._drain())
        result = await future
        if isinstance(result, StoreError):
            raise result
        return result

    async def _drain(self) -> None:
        batch: list[tuple[store.Report, asyncio.Future[Any]]] = []
        try:
            while self.queue:
                batch, self.queue = self.queue[:self.MAX_BATCH], self.queue[self.MAX_BATCH:]
                await self._write(batch)
        finally:  # cancelled (the server stopping): nobody may wait for ever
            for _, future in batch + self.queue:
                _settle(future, error=StoreError(503, "server", "The server stopped before this report was "
                                                                "written; retry."))

    async def _write(self, batch: list[tuple[store.Report, asyncio.Future[Any]]]) -> None:
        try:
            results = await run_in_threadpool(store.record_reports, self.engine, self.league, [r for r, _ in batch])
        except (SQLAlchemyError, OSError) as error:  # the database's failure, not a report's: nothing was written
            for _, future in batch:
                _settle(future, error=error)
            return
        except Exception as error:
            if len(batch) == 1:
                _settle(batch[0][1], error=error)
                return
            for one in batch:
                await self._write([one])
            return
        for (_, future), result in zip(batch, results):
            _settle(future, result)


def _settle(future: asyncio.Future[Any], result: Any = None, error: BaseException | None = None) -> None:
    if not future.done():  # (a request whose client went away may have been cancelled)
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)


async def _send_json(send: Send, status: int, field: str, message: str) -> None:
    body = json.dumps({"detail": message, "field": field}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def _json_constant(token: str) -> float:
    # NaN and Infinity are not JSON; let them through as floats so that the field check that meets one
    # names its field ("'weights[0][1]' must be a number in (0, 1]. Got nan.").
    return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[token]


async def json_body(request: Request) -> Any:
    """The request's JSON body; 400 naming the position if it does not parse."""
    raw = await request.body()
    if not raw.strip():
        raise StoreError(400, "body", "The request needs a JSON body.")
    try:
        return json.loads(raw, parse_constant=_json_constant)
    except ValueError as error:  # JSONDecodeError, bad UTF-8, an integer beyond Python's digit limit
        raise StoreError(400, "body", f"The request body is not valid JSON ({str(error)[:200]}).") from None
    except RecursionError:
        raise StoreError(400, "body", "The request body nests too deeply.") from None


def _fields(body: Any, allowed: set[str], required: set[str]) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise StoreError(422, "body", f"The body must be a JSON object. Got {body!r:.80}.")
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise StoreError(422, unknown[0], f"Unknown field(s) {unknown}; expected {sorted(allowed)}.")
    for name in sorted(required):
        if name not in body:
            raise StoreError(422, name, f"The field {name!r} is missing.")
    return body


DOCS = "/api/v1/docs"
DOCS_STATIC = DOCS + "/static"


def _swagger_files() -> str:
    """The folder of Swagger UI's files as the ``fastapi-offline`` package ships them (a server dependency)."""
    from importlib.util import find_spec

    spec = find_spec("fastapi_offline")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("The league server needs the package fastapi-offline (Swagger UI's files for the API "
                          "docs): pip install 'podium[server]'.")
    return str(Path(list(spec.submodule_search_locations)[0]) / "static")


def create_app(settings: Settings | None = None, *, engine: Engine | None = None, migrate_db: bool = True,
               clock: Callable[[], float] = time.monotonic) -> FastAPI:
    """Build the league server for ``settings`` (a database engine is made and migrated to the newest schema).

    Parameters
    ----------
    settings : Settings, optional
        Default: ``Settings()``.
    engine : Engine, optional
        A database engine to use instead of one made from ``settings.db``.
    migrate_db : bool, default True
        Bring the schema to the newest migration first.
    clock : callable, default time.monotonic
        The rate limiter's clock, in seconds (tests inject one instead of sleeping).
    """
    settings = settings or Settings()
    engine = engine if engine is not None else make_engine(settings.url, settings.busy_timeout)
    if migrate_db:
        migrate(engine)

    # Nightly smoothed ratings (smoothing.py): a background thread per process, started and stopped with the app.
    scheduler = (smoothing.Scheduler(engine, settings.smoothing_interval, chunk=settings.replay_chunk)
                 if settings.smoothing_interval > 0 else None)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> Any:
        await run_in_threadpool(_warm_up, engine)
        if scheduler is not None:
            scheduler.start()
        try:
            yield
        finally:
            if scheduler is not None:
                await run_in_threadpool(scheduler.stop)
            engine.dispose()

    app = FastAPI(title="podium league server", version="1", lifespan=lifespan, openapi_url="/api/v1/openapi.json",
                  docs_url=None, redoc_url=None)
    app.state.settings = settings
    app.state.engine = engine
    app.state.smoothing = scheduler

    @app.exception_handler(StoreError)
    async def _store_error(request: Request, error: StoreError) -> Response:
        headers = {"WWW-Authenticate": "Bearer"} if error.status == 401 else None
        if request.url.path.startswith("/api/"):
            return JSONResponse({"detail": error.message, "field": error.field}, error.status, headers=headers)
        from .pages import error_page

        return error_page(request, error.status, error.message)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        # Query and path parameters (bodies are parsed by the handlers): one message naming the parameter.
        first = error.errors()[0]
        name = ".".join(str(part) for part in first["loc"][1:]) or str(first["loc"][0])
        got = first.get("input")
        return JSONResponse({"detail": f"'{name}' ({first['loc'][0]}): {first['msg']}. Got {got!r:.80}.",
                             "field": name}, 422)

    @app.exception_handler(OperationalError)
    async def _busy(request: Request, error: OperationalError) -> JSONResponse:
        if "locked" in str(error.orig) or "busy" in str(error.orig):
            return JSONResponse({"detail": "The database is busy; retry.", "field": "database"}, 503,
                                headers={"Retry-After": "1"})
        raise error

    @app.exception_handler(IntegrityError)
    async def _conflict(request: Request, error: IntegrityError) -> JSONResponse:
        return JSONResponse({"detail": "Conflicts with what is stored; nothing was written.", "field": "body"}, 409)

    def token_of(request: Request) -> TokenInfo | None:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if not header or scheme.lower() != "bearer" or not token.strip():
            return None
        with read_transaction(engine) as conn:
            return store.find_token(conn, token.strip())

    def bearer_token(request: Request, role: str) -> str:
        """The request's bearer token (not yet checked); 401 if there is none."""
        header = request.headers.get("authorization")
        if not header:
            raise StoreError(401, "authorization", f"This needs a {role} token: 'Authorization: Bearer <token>'.")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise StoreError(401, "authorization", "The bearer token is unknown or revoked.")
        return token.strip()

    def require(role: str) -> Callable[[Request], TokenInfo]:
        def check(request: Request) -> TokenInfo:
            bearer_token(request, role)
            found = token_of(request)
            if found is None:
                raise StoreError(401, "authorization", "The bearer token is unknown or revoked.")
            if not found.allows(role):
                raise StoreError(403, "authorization", f"This needs the {role} role; the token has {found.role}.")
            return found
        return check

    app.state.require = require

    known: dict[str, store.LeagueInfo] = {}
    writers: dict[int, _GroupCommit] = {}

    def league_of(name: str) -> store.LeagueInfo:
        # A league's model never changes once created (nor does the league go away), so the writers remember it:
        # one query fewer per report (its smoothing option may change: that is read where it is used).  Unknown
        # names are asked every time (another process may have created the league).
        league = known.get(name)
        if league is None:
            with read_transaction(engine) as conn:
                league = known[name] = store.get_league(conn, name)
        return league

    # -- leagues -----------------------------------------------------------------------------------------
    @app.get("/api/v1/leagues", tags=["leagues"])
    def list_leagues() -> Any:
        with read_transaction(engine) as conn:
            return {"leagues": store.list_leagues(conn)}

    @app.post("/api/v1/leagues", status_code=201, tags=["leagues"], openapi_extra=request_schema({
        "name": {"type": "string", "pattern": f"^{store.LEAGUE_NAME.pattern}$"},
        "model": {"type": "string", "enum": sorted(store.MODELS)},
        "params": {"type": "object"}, "moderated": {"type": "boolean"}, "smoothing": {"type": "boolean"}},
        ["name", "model"]))
    async def create_league(request: Request, token: TokenInfo = Depends(require("admin"))) -> Any:
        body = _fields(await json_body(request), {"name", "model", "params", "moderated", "smoothing"},
                       {"name", "model"})
        league = await run_in_threadpool(store.create_league, engine, body["name"], body["model"],
                                         body.get("params", {}), body.get("moderated", False),
                                         body.get("smoothing", False))
        return league.to_dict()

    @app.patch("/api/v1/leagues/{name}", tags=["leagues"], openapi_extra=request_schema(
        {"smoothing": {"type": "boolean", "description": "Keep nightly smoothed ratings (TrueSkill leagues)."}},
        ["smoothing"]))
    async def change_league(name: str, request: Request, token: TokenInfo = Depends(require("admin"))) -> Any:
        """Change a league's options: ``smoothing`` (off deletes its smoothed ratings)."""
        body = _fields(await json_body(request), {"smoothing"}, {"smoothing"})
        league = await run_in_threadpool(smoothing.set_smoothing, engine, name, body["smoothing"])
        return league.to_dict()

    @app.get("/api/v1/leagues/{name}", tags=["leagues"])
    def get_league(name: str) -> Any:
        with read_transaction(engine) as conn:
            league = store.get_league(conn, name)
            board = store.leaderboard(conn, league, k=0.0, by="mu", limit=0, offset=0, min_games=0)
            return league.to_dict() | {"matches": board["matches"], "players": board["total"]}

    # -- matches -----------------------------------------------------------------------------------------
    @app.post("/api/v1/leagues/{name}/matches", tags=["matches"], status_code=201, openapi_extra=MATCH_SCHEMA)
    async def report(name: str, request: Request) -> Any:
        # The token is checked inside the write transaction (one query fewer per report), so a bad token
        # with a bad body (or an unknown league, which reads show anyway) gets the body's 4xx; a request
        # without a token is refused before anything is read, and a bad token never stores anything.
        bearer = bearer_token(request, "reporter")
        body = await json_body(request)
        league = known.get(name)
        if league is None:
            league = await run_in_threadpool(league_of, name)
        writer = writers.get(league.id)
        if writer is None:
            writer = writers[league.id] = _GroupCommit(engine, league)
        status, out = await writer.submit(store.prepare_report(league, body, bearer, settings.max_players))
        return JSONResponse(out, status)

    @app.get("/api/v1/leagues/{name}/matches", tags=["matches"])
    def recent(name: str, limit: int = Query(20, ge=1, le=200)) -> Any:
        with read_transaction(engine) as conn:
            league = store.get_league(conn, name)
            return {"league": name, "matches": store.recent_matches(conn, league, limit)}

    @app.get("/api/v1/leagues/{name}/pending", tags=["matches"])
    def pending(name: str, limit: int = Query(50, ge=1, le=500), offset: int = Query(0, ge=0, le=QUERY_MAX),
                token: TokenInfo = Depends(require("moderator"))) -> Any:
        with read_transaction(engine) as conn:
            return store.pending_matches(conn, store.get_league(conn, name), limit, offset)

    @app.get("/api/v1/leagues/{name}/audit", tags=["matches"])
    def audit(name: str, token: TokenInfo = Depends(require("moderator"))) -> Any:
        """:func:`podium.audit` of the approved log (TrueSkill fitted to it): flags with their evidence."""
        from . import integrity

        with read_transaction(engine) as conn:
            return integrity.audit_report(conn, store.get_league(conn, name), settings.integrity_max_matches)

    @app.get("/api/v1/leagues/{name}/matches/{match_id}", tags=["matches"])
    def get_match(name: str, match_id: str) -> Any:
        with read_transaction(engine) as conn:
            return store.get_match(conn, store.get_league(conn, name), match_id)

    @app.post("/api/v1/leagues/{name}/matches/{match_id}/approve", tags=["matches"])
    def approve(name: str, match_id: str, token: TokenInfo = Depends(require("moderator"))) -> Any:
        status, out = store.approve_match(engine, league_of(name), match_id, token)
        return JSONResponse(out, status)

    @app.post("/api/v1/leagues/{name}/matches/{match_id}/reject", tags=["matches"])
    def reject(name: str, match_id: str, token: TokenInfo = Depends(require("moderator"))) -> Any:
        return store.reject_match(engine, league_of(name), match_id, token)

    @app.post("/api/v1/leagues/{name}/matches/{match_id}/void", tags=["matches"])
    def void(name: str, match_id: str, token: TokenInfo = Depends(require("moderator"))) -> Any:
        return store.void_match(engine, league_of(name), match_id, token, chunk=settings.replay_chunk)

    @app.put("/api/v1/leagues/{name}/matches/{match_id}", tags=["matches"], openapi_extra=MATCH_SCHEMA)
    async def correct(name: str, match_id: str, request: Request, token: TokenInfo = Depends(require("moderator"))) -> Any:
        body = await json_body(request)
        return await run_in_threadpool(
            lambda: store.correct_match(engine, league_of(name), match_id, body, token, settings.max_players,
                                        chunk=settings.replay_chunk))

    # -- reads -------------------------------------------------------------------------------------------
    @app.get("/api/v1/leagues/{name}/leaderboard", tags=["ratings"])
    def leaderboard(name: str, by: str = Query("conservative", pattern="^(conservative|mu)$"),
                    k: float = Query(3.0, ge=0, le=10), limit: int = Query(settings.page_size, ge=0, le=1000),
                    offset: int = Query(0, ge=0, le=QUERY_MAX), min_games: int = Query(0, ge=0, le=QUERY_MAX)) -> Any:
        with read_transaction(engine) as conn:
            return store.leaderboard(conn, store.get_league(conn, name), k=k, by=by, limit=limit, offset=offset,
                                     min_games=min_games)

    @app.get("/api/v1/leagues/{name}/smoothed", tags=["ratings"])
    def smoothed(name: str, k: float = Query(3.0, ge=0, le=10), limit: int = Query(settings.page_size, ge=0, le=1000),
                 offset: int = Query(0, ge=0, le=QUERY_MAX)) -> Any:
        """The league's smoothed leaderboard (TrueSkill Through Time over the approved log) by ``mu - k sigma``,
        with when it was computed, from how many matches, and whether matches were recorded since."""
        with read_transaction(engine) as conn:
            return smoothing.smoothed_board(conn, store.get_league(conn, name), k=k, limit=limit, offset=offset)

    @app.get("/api/v1/leagues/{name}/players/{player}", tags=["ratings"])
    def player(name: str, player: str, k: float = Query(3.0, ge=0, le=10), recent: int = Query(10, ge=0, le=100)) -> Any:
        with read_transaction(engine) as conn:
            return store.player_page(conn, store.get_league(conn, name), player, k=k, recent=recent)

    @app.post("/api/v1/leagues/{name}/predict", tags=["ratings"], openapi_extra=request_schema(
        {"teams": TEAMS_SCHEMA, "players": {"type": "array", "items": PLAYER_SCHEMA}}, []))
    async def predict(name: str, request: Request) -> Any:
        body = _fields(await json_body(request), {"teams", "players"}, set())
        if ("teams" in body) == ("players" in body):
            raise StoreError(422, "teams", "Give either 'teams' (a list of teams) or 'players' (one player per team).")
        teams = body.get("teams")
        if "players" in body:
            players = store.check_players(body["players"], min(settings.max_players, PREDICT_MAX_PLAYERS))
            if len(players) < 2:
                raise StoreError(422, "players", f"'players' must hold at least two players. Got {players!r:.80}.")
            teams = [[p] for p in players]
        def run() -> Any:
            with read_transaction(engine) as conn:
                return store.predict(conn, store.get_league(conn, name), teams, settings.max_players)
        return await run_in_threadpool(run)

    @app.post("/api/v1/leagues/{name}/balance", tags=["ratings"], openapi_extra=request_schema(
        {"players": {"type": "array", "items": PLAYER_SCHEMA}, "teams": {"type": "integer", "minimum": 2}},
        ["players"]))
    async def balance(name: str, request: Request) -> Any:
        body = _fields(await json_body(request), {"players", "teams"}, {"players"})

        def run() -> Any:
            with read_transaction(engine) as conn:
                return store.balance(conn, store.get_league(conn, name), body["players"], body.get("teams", 2),
                                     settings.max_players)
        return await run_in_threadpool(run)

    # -- tokens ------------------------------------------------------------------------------------------
    @app.post("/api/v1/tokens", status_code=201, tags=["tokens"], openapi_extra=request_schema(
        {"role": {"type": "string", "enum": list(store.ROLES)}, "label": {"type": "string"}}, ["role"]))
    async def new_token(request: Request, token: TokenInfo = Depends(require("admin"))) -> Any:
        body = _fields(await json_body(request), {"role", "label"}, {"role"})
        label = body.get("label", "")
        if not isinstance(label, str):
            raise StoreError(422, "label", f"'label' must be a string. Got {label!r:.80}.")
        return {"token": await run_in_threadpool(store.create_token, engine, body["role"], label), "role": body["role"]}

    @app.get("/api/v1/health", tags=["server"])
    def health() -> Any:
        with read_transaction(engine) as conn:
            conn.exec_driver_sql("SELECT 1")
        return {"status": "ok", "database": engine.dialect.name}

    # -- API docs: Swagger UI, its files served from here (no CDN) ----------------------------------------
    app.mount(DOCS_STATIC, StaticFiles(directory=_swagger_files()), name="docs-static")

    @app.get(DOCS, include_in_schema=False)
    def docs(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        # validatorUrl None: Swagger UI would otherwise show a badge fetched from swagger.io.
        return get_swagger_ui_html(openapi_url=f"{root}{app.openapi_url}", title=f"{app.title} - API docs",
                                   swagger_js_url=f"{root}{DOCS_STATIC}/swagger-ui-bundle.js",
                                   swagger_css_url=f"{root}{DOCS_STATIC}/swagger-ui.css",
                                   swagger_favicon_url=f"{root}{DOCS_STATIC}/favicon.png",
                                   swagger_ui_parameters={"validatorUrl": None})

    from .pages import add_pages, render

    add_pages(app, engine, settings)
    install_openapi(app)  # (the statuses, bodies and security of every operation above: openapi.py)
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
    if settings.token_rate > 0 or settings.address_rate > 0:
        async def verify(token: str) -> bool:
            def look() -> bool:
                with read_transaction(engine) as conn:
                    return store.find_token(conn, token) is not None
            return await run_in_threadpool(look)

        def html(status: int, message: str) -> bytes:
            return bytes(render("error.html", status, title="Too many requests", status=status, message=message,
                                user=None).body)

        # Outermost: a refused request costs no body read, no query.
        app.add_middleware(RateLimit, token_rate=settings.token_rate, token_burst=settings.token_burst,
                           address_rate=settings.address_rate, address_burst=settings.address_burst,
                           verify=verify, clock=clock, html=html, exempt=(DOCS_STATIC + "/",))
    return app


def _warm_up(engine: Engine) -> None:
    """Load (or compile) the rating kernels of every league's model before the first report arrives."""
    from ..engine.league import League
    from ..data.match import Match

    with read_transaction(engine) as conn:
        names = [row["name"] for row in store.list_leagues(conn)]
        models = {store.get_league(conn, name).model for name in names}
    for model in models:
        League(model, keep_history=False).record(Match([["a"], ["b"]]))


# Settings read from the environment by app_from_env (and, for the limits, by ``podium serve``'s options).
def app_from_env() -> FastAPI:
    """The app for ``uvicorn --factory`` (several worker processes): settings from ``PODIUM_DB`` and friends
    (:data:`ENVIRONMENT`).

    Migrations are left to the parent (``podium serve`` runs them once before starting workers).
    """
    import sys

    sys.setswitchinterval(SWITCH_INTERVAL)
    return create_app(settings_from_env(), migrate_db=False)
