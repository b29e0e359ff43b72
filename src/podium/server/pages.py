"""Server-rendered pages: leagues, a league's leaderboard (with who is comparable with whom), a player
(rating-history chart), a match, and the moderators' pending queue and audit.  Jinja2 with autoescaping, so every player id and league name is escaped; the
chart is inline SVG drawn here, so the pages need no JavaScript and no build step.

Moderators sign in with their token (``/login``); it is kept in an HttpOnly, SameSite=Strict cookie and every
form that writes carries a CSRF value derived from it.  Every form post (sign in, sign out, a decision) must
also show it comes from a page of this site (:func:`same_origin`).
"""

from __future__ import annotations

import hashlib
import hmac
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from fastapi import FastAPI, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader, select_autoescape
from sqlalchemy.engine import Engine

from ..data.match import plain_number
from ..integrity.audit import MAX_MEETINGS
from . import integrity, smoothing, store
from .db import read_transaction
from .settings import Settings
from .store import StoreError, TokenInfo

__all__ = ["add_pages", "error_page", "rating_chart", "same_origin"]

COOKIE = "podium_token"
_env = Environment(loader=FileSystemLoader(Path(__file__).parent / "templates"),
                   autoescape=select_autoescape(default=True, default_for_string=True))
_env.filters["url"] = lambda value: quote(str(value), safe="")


def _fmt(value: float, digits: int = 1) -> str:
    return f"{value:,.{digits}f}"


_env.filters["num"] = _fmt


def render(template: str, code: int = 200, **context: Any) -> HTMLResponse:
    return HTMLResponse(_env.get_template(template).render(**context), code)


def error_page(request: Request, status: int, message: str) -> HTMLResponse:
    user = None
    token = request.cookies.get(COOKIE)
    if token:
        with read_transaction(request.app.state.engine) as conn:
            user = store.find_token(conn, token)
    return render("error.html", status, title="Not found" if status == 404 else "Error", status=status,
                  message=message, user=user)


def _local(target: str) -> str:
    """``target`` if it is a path on this site, else ``/`` (no open redirect: browsers read ``/\\`` as ``//``)."""
    if target.startswith("/") and not target.startswith("//") and "\\" not in target and "\n" not in target:
        return target
    return "/"


_DEFAULT_PORTS = {"http": ":80", "https": ":443"}


def _on_site(url: str, host: str) -> bool:
    """Is ``url`` (an Origin or a Referer) an http(s) address on ``host`` (the site's ``host[:port]``)?"""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc.lower()
    except ValueError:  # e.g. an unbalanced "[" in the host
        return False
    if parts.scheme not in _DEFAULT_PORTS or not netloc or "@" in netloc:
        return False
    port = _DEFAULT_PORTS[parts.scheme]  # browsers leave the default port out; a Host header may not
    return netloc.removesuffix(port) == host.lower().removesuffix(port)


def same_origin(request: Request, trust_forwarded_host: bool = False) -> None:
    """Refuse a form post that does not show it was sent from a page of this site (login CSRF, forced
    sign-out, a forged decision): its ``Origin`` must be this site, or, without one, its ``Referer`` must be
    on this site.  ``Origin: null`` (a sandboxed frame, a redirect through another site) is refused, and so
    is a post with neither header (browsers send ``Origin`` with every POST).

    "This site" is the ``Host`` header: a reverse proxy must pass it through (nginx: ``proxy_set_header Host
    $host``), or set ``X-Forwarded-Host``, which counts only with ``trust_forwarded_host`` (a client could send
    any).  The scheme is not compared: a proxy that ends TLS talks plain HTTP to the server.
    """
    host = request.headers.get("host", "")
    if trust_forwarded_host:
        host = request.headers.get("x-forwarded-host", "").split(",")[0].strip() or host
    origin = request.headers.get("origin")
    if origin is not None:
        if origin.strip() == "null":
            raise StoreError(403, "origin", "This form must be sent from a page of this site; the browser sent "
                                            "'Origin: null' (a sandboxed page or a redirect from another site).")
        if not _on_site(origin.strip(), host):
            raise StoreError(403, "origin", f"This form must be sent from a page of this site ({host[:80]!r}), "
                                            f"not from {origin[:80]!r}.")
        return
    referer = request.headers.get("referer")
    if referer is None:
        raise StoreError(403, "origin", "This form must be sent from a page of this site, and the request has "
                                        "neither an Origin nor a Referer header to show it.")
    if not _on_site(referer.strip(), host):
        raise StoreError(403, "referer", f"This form must be sent from a page of this site ({host[:80]!r}); "
                                         f"the request came from {referer[:80]!r}.")


def _csrf(token: str) -> str:
    return hmac.new(token.encode(), b"podium-csrf", hashlib.sha256).hexdigest()


def rating_chart(history: list[dict[str, Any]], k: float, width: int = 720, height: int = 260, first: int = 1
                 ) -> dict[str, Any]:
    """Coordinates of an SVG chart of ``mu`` after each match with the band ``mu +- k sigma``.

    x is the match number in the player's career (even spacing reads better than time for bursty play);
    the y range covers the band with 5 % padding and gets about five round-numbered grid lines.  ``first`` is
    the career number of the first match shown (the history may be the tail of a long career).
    """
    left, right, top, bottom = 56, 12, 12, 28
    w, h = width - left - right, height - top - bottom
    n = len(history)
    if n == 0:
        return {"width": width, "height": height, "empty": True}
    mu = [p["mu"] for p in history]
    lo = [p["mu"] - k * p["sigma"] for p in history]
    hi = [p["mu"] + k * p["sigma"] for p in history]
    y0, y1 = min(lo), max(hi)
    if y1 - y0 < 1e-9:
        y0, y1 = y0 - 1.0, y1 + 1.0
    pad = 0.05 * (y1 - y0)
    y0, y1 = y0 - pad, y1 + pad

    def x(i: int) -> float:
        return left + (w * i / (n - 1) if n > 1 else w / 2)

    def y(v: float) -> float:
        return top + h * (y1 - v) / (y1 - y0)

    line = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(mu))
    band = " ".join([f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(hi)]
                    + [f"{x(i):.1f},{y(v):.1f}" for i, v in reversed(list(enumerate(lo)))])
    raw = (y1 - y0) / 5
    step = 10 ** math.floor(math.log10(raw))
    step *= next(m for m in (1, 2, 2.5, 5, 10) if m * step >= raw)
    ticks = []
    v = math.ceil(y0 / step) * step
    while v <= y1:
        ticks.append({"y": round(y(v), 1), "label": f"{v:,.{0 if step >= 1 else 2}f}"})
        v += step
    xticks = sorted({0, n - 1, *(round(i * (n - 1) / 4) for i in range(1, 4))})
    return {"width": width, "height": height, "empty": False, "line": line, "band": band if k > 0 else "",
            "ticks": ticks, "left": left, "right": width - right, "top": top, "bottom": height - bottom,
            "xticks": [{"x": round(x(i), 1), "label": i + first} for i in xticks],
            "last": {"x": round(x(n - 1), 1), "y": round(y(mu[-1]), 1)}}


def _shown(value: Any) -> str:
    """A score, an advantage or a weight of a stored record as a record writes it (:func:`plain_number`): goals
    "2", a race time "61.5"; an advantage given as true is 1."""
    return str(plain_number(float(value)))


def _per_team(record: dict[str, Any], key: str, n: int) -> list[Any]:
    values = record.get(key)
    return list(values) if isinstance(values, list) and len(values) == n else [None] * n


def _describe(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The teams of a record in finishing order, for display: each team's players, place, and, where the record
    has them, its score (``score``: the text shown, None without) and advantage (``advantage``: the text of a
    non-zero one, else None)."""
    teams = record["teams"]
    ranks = record.get("ranks") or list(range(len(teams)))
    scores, edges = _per_team(record, "scores", len(teams)), _per_team(record, "advantage", len(teams))
    rows = [{"players": team, "rank": rank, "team": i,
             "score": None if score is None else _shown(score),
             "advantage": None if not edge else _shown(edge)}
            for i, (team, rank, score, edge) in enumerate(zip(teams, ranks, scores, edges))]
    rows.sort(key=lambda r: (r["rank"] is None, r["rank"] if r["rank"] is not None else 0))
    for row in rows:
        row["place"] = "DNF" if row["rank"] is None else str(row["rank"] + 1)
    return rows


def _result(record: dict[str, Any]) -> dict[str, Any]:
    """What a record says beyond the order of finish, for display (every value None for a record without it):
    ``score``, the scores in team order ("2 – 1"; "DNF" for a team without one that did not finish, "—" for
    another without one), with ``lower`` when a lower score is better (race times); ``advantage``, whether a
    team has one (each team's is in :func:`_describe`); ``weight``, the match's importance when it is not 1."""
    teams = record["teams"]
    scores = record.get("scores")
    ranks = record.get("ranks") or list(range(len(teams)))
    score = None
    if isinstance(scores, list) and len(scores) == len(teams):
        score = " – ".join(_shown(s) if s is not None else "DNF" if r is None else "—" for s, r in zip(scores, ranks))
    weight = record.get("weight")
    return {"score": score, "lower": score is not None and record.get("higher_is_better") is False,
            "advantage": any(_per_team(record, "advantage", len(teams))),
            "weight": None if weight is None or weight == 1 else _shown(weight)}


_env.globals["describe"] = _describe
_env.globals["result"] = _result


def _to_login(request: Request) -> Response:
    """A moderators' page asked for by someone else: to the sign-in form, and back here after."""
    return RedirectResponse(f"/login?next={quote(str(request.url.path))}", 303)


def add_pages(app: FastAPI, engine: Engine, settings: Settings) -> None:
    def user_of(request: Request) -> TokenInfo | None:
        token = request.cookies.get(COOKIE)
        if not token:
            return None
        with read_transaction(engine) as conn:
            return store.find_token(conn, token)

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def home(request: Request) -> Response:
        with read_transaction(engine) as conn:
            leagues = store.list_leagues(conn)
        return render("home.html", title="Leagues", leagues=leagues, user=user_of(request))

    @app.get("/leagues/{name}", response_class=HTMLResponse, include_in_schema=False)
    def league_page(request: Request, name: str, page: int = Query(1, ge=1, le=100000),
                    by: str = Query("conservative", pattern="^(conservative|mu)$")) -> Response:
        size = settings.page_size
        with read_transaction(engine) as conn:
            league = store.get_league(conn, name)
            board = store.leaderboard(conn, league, k=3.0, by=by, limit=size, offset=(page - 1) * size, min_games=0)
            recent = store.recent_matches(conn, league, 8)
            n_pending = store.pending_matches(conn, league, 1, 0)["total"] if league.moderated else 0
            labels, sizes = integrity.connectivity(conn, league).labels()
            links = integrity.thin_links(conn, league, settings.integrity_max_matches)
            smooth = smoothing.smoothed_for(conn, league, [row["player"] for row in board["rows"]])
        for row in board["rows"]:  # players in no recorded match (given a rating) are alone
            row["connected"] = labels.get(row["player"], -1) == 0 and len(sizes) > 0
            row["provisional"] = row["games"] < settings.provisional_games
        largest = int(sizes[0]) if len(sizes) else 0
        comparability = {"components": len(sizes), "largest": largest, "outside": board["total"] - largest,
                         "links": links, "provisional_games": settings.provisional_games}
        pages = max(1, math.ceil(board["total"] / size))
        return render("league.html", title=league.name, league=league.to_dict(), board=board, recent=recent,
                      page=page, pages=pages, by=by, uncertain=league.model.prior.sigma > 0,
                      n_pending=n_pending, comparability=comparability, smooth=smooth, user=user_of(request))

    def moderator_page(request: Request, name: str, template: str, title: str,
                       read: Callable[[Any, Any], dict[str, Any]]) -> Response:
        """A moderators' page: the sign-in form for anyone else; else ``template`` with the league and what
        ``read(connection, league)`` gives, read in the same transaction."""
        user = user_of(request)
        if user is None or not user.allows("moderator"):
            return _to_login(request)
        with read_transaction(engine) as conn:
            league = store.get_league(conn, name)
            shown = read(conn, league)
        return render(template, title=f"{title} · {league.name}", league=league.to_dict(), user=user, **shown)

    @app.get("/leagues/{name}/audit", response_class=HTMLResponse, include_in_schema=False)
    def audit_page(request: Request, name: str) -> Response:
        return moderator_page(request, name, "audit.html", "Audit", lambda conn, league: {
            "result": integrity.league_audit(conn, league, settings.integrity_max_matches),
            "limit": settings.integrity_max_matches, "meetings": MAX_MEETINGS})

    @app.get("/leagues/{name}/players/{player}", response_class=HTMLResponse, include_in_schema=False)
    def player_page(request: Request, name: str, player: str) -> Response:
        with read_transaction(engine) as conn:
            league = store.get_league(conn, name)
            info = store.player_page(conn, league, player, k=3.0, recent=15)
        uncertain = league.model.prior.sigma > 0
        chart = rating_chart(info["history"], 3.0 if uncertain else 0.0,
                             first=info["games"] - len(info["history"]) + 1)
        return render("player.html", title=f"{player} · {league.name}", league=league.to_dict(), info=info,
                      chart=chart, uncertain=uncertain, user=user_of(request))

    @app.get("/leagues/{name}/matches/{match_id}", response_class=HTMLResponse, include_in_schema=False)
    def match_page(request: Request, name: str, match_id: str) -> Response:
        with read_transaction(engine) as conn:
            league = store.get_league(conn, name)
            match = store.get_match(conn, league, match_id)
        return render("match.html", title=f"Match {match_id}", league=league.to_dict(), match=match,
                      uncertain=league.model.prior.sigma > 0, user=user_of(request))

    @app.get("/leagues/{name}/pending", response_class=HTMLResponse, include_in_schema=False)
    def pending_page(request: Request, name: str) -> Response:
        token = request.cookies.get(COOKIE, "")
        return moderator_page(request, name, "pending.html", "Pending", lambda conn, league: {
            "queue": store.pending_matches(conn, league, 200, 0), "csrf": _csrf(token)})

    @app.post("/leagues/{name}/pending/{match_id}/{action}", include_in_schema=False)
    def decide(request: Request, name: str, match_id: str, action: str, csrf: str = Form("")) -> Response:
        same_origin(request, settings.trust_forwarded_host)
        user = user_of(request)
        token = request.cookies.get(COOKIE, "")
        if user is None or not user.allows("moderator"):
            raise StoreError(403, "authorization", "Sign in as a moderator to decide pending matches.")
        if not hmac.compare_digest(csrf, _csrf(token)):
            raise StoreError(403, "csrf", "The form is stale or was not sent by this site; reload the page.")
        with read_transaction(engine) as conn:
            league = store.get_league(conn, name)
        if action == "approve":
            store.approve_match(engine, league, match_id, user)
        elif action == "reject":
            store.reject_match(engine, league, match_id, user)
        else:
            raise StoreError(404, "action", f"No action {action!r:.40}.")
        return RedirectResponse(f"/leagues/{quote(name)}/pending", 303)

    @app.get("/login", response_class=HTMLResponse, include_in_schema=False)
    def login_form(request: Request, next: str = "/") -> Response:
        return render("login.html", title="Sign in", next=_local(next), error=None,
                      user=user_of(request))

    @app.post("/login", include_in_schema=False)
    def login(request: Request, token: str = Form(""), next: str = Form("/")) -> Response:
        same_origin(request, settings.trust_forwarded_host)
        with read_transaction(engine) as conn:
            user = store.find_token(conn, token.strip())
        target = _local(next)
        if user is None:
            return render("login.html", 401, title="Sign in", next=target, error="That token is unknown or revoked.",
                          user=None)
        response = RedirectResponse(target, 303)
        response.set_cookie(COOKIE, token.strip(), httponly=True, samesite="strict", max_age=30 * 86400)
        return response

    @app.post("/logout", include_in_schema=False)
    def logout(request: Request) -> Response:
        same_origin(request, settings.trust_forwarded_host)
        response = RedirectResponse("/", 303)
        response.delete_cookie(COOKIE)
        return response
