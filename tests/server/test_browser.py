"""The league server's pages in a real headless browser: Debian's ``chromium`` driven by Playwright.

The browser is the system's (``PODIUM_CHROMIUM``, else ``chromium`` / ``chromium-browser`` on the PATH),
never one downloaded by Playwright; without it these tests skip, or fail under
``PODIUM_REQUIRE_SERVICES=1``.  One browser serves the whole module; each database kind (SQLite and
PostgreSQL) gets one live server (uvicorn in a thread) over a league built once:

* ``thursday`` -- TrueSkill, 12 players, 60 matches: duels, 2-vs-2 and four-player free-for-alls, some with
  a team that did not finish; one player is called ``O'Brien``.
* ``friday-cup`` -- Elo, moderated: two approved matches and three pending ones.

The API docs (Swagger UI) must render with every request to another origin blocked: podium serves their files.

Full-page screenshots of every page go to ``PODIUM_ARTIFACTS`` (else ``test-artifacts/browser/`` in the
repository; the PostgreSQL run writes into a ``postgresql/`` folder there).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import numpy as np
import pytest

from .conftest import make_db, skip_or_fail

LEAGUE = "thursday"
CUP = "friday-cup"
PLAYERS = ["Ada", "Björn", "Chen Wei", "Dara", "Elif", "Farah", "Goran", "Hana", "Ilse", "Jonas", "Kofi", "O'Brien"]
CUP_PLAYERS = ["Mira", "Nils", "Oskar", "Pia", "Rosa", "Sven"]
DESKTOP = {"width": 1280, "height": 800}
MOBILE = {"width": 390, "height": 844}
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
NUMBER = re.compile(r"^-?\d{1,3}(,\d{3})*\.\d+$")  # "1,512.3", "25.04", "-3.17"


# -- the browser -----------------------------------------------------------------------------------------
def _chromium() -> str:
    configured = os.environ.get("PODIUM_CHROMIUM")
    if configured:
        if not (os.path.isfile(configured) and os.access(configured, os.X_OK)):
            skip_or_fail(f"PODIUM_CHROMIUM={configured!r} is not an executable file")
        return configured
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        skip_or_fail("Debian's chromium is not installed (apt-get install chromium)")
    assert found is not None
    return found


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = _chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        skip_or_fail("the Python package playwright is not installed (pip install -e '.[dev]')")
    playwright = sync_playwright().start()
    try:
        chromium = playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()
    finally:
        playwright.stop()


# -- the site: data, a live server, screenshots ----------------------------------------------------------
@dataclass
class Site:
    kind: str
    base: str
    tokens: dict[str, str]
    pending: list[str]  # ids of the pending matches of CUP, in report order
    artifacts: Path

    def api(self, path: str, token: str | None = None) -> Any:
        request = urllib.request.Request(self.base + "/api/v1" + path)
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.load(response)

    def html(self, path: str) -> str:
        """The page's source as the server sent it (the DOM re-serializes, so escaping is checked here)."""
        with urllib.request.urlopen(self.base + path, timeout=30) as response:
            body: bytes = response.read()
        return body.decode("utf-8")

    def screenshot(self, page: Any, name: str) -> Path:
        path = self.artifacts / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        assert path.stat().st_size > 5000, f"{path} looks empty"
        return path


def _artifacts(kind: str) -> Path:
    root = os.environ.get("PODIUM_ARTIFACTS")
    base = Path(root) if root else Path(__file__).resolve().parents[2] / "test-artifacts" / "browser"
    path = base if kind == "sqlite" else base / kind
    path.mkdir(parents=True, exist_ok=True)
    return path


def _season() -> list[dict[str, Any]]:
    """60 simulated TrueSkill matches over PLAYERS: duels (some drawn), 2-vs-2, and four-player
    free-for-alls of which every third has a player who did not finish."""
    from podium import simulate

    duels = simulate(PLAYERS, 30, draw_probability=0.1, seed=11).matches
    pairs = simulate(PLAYERS, 18, teams=2, team_size=2, seed=12).matches
    ffas = simulate(PLAYERS, 12, teams=4, seed=13).matches
    records = []
    for i, match in enumerate(ffas):
        record = match.to_record()
        if i % 3 == 0:
            ranks = record["ranks"]
            ranks[ranks.index(max(ranks))] = None
        records.append(record)
    records += [m.to_record() for m in duels] + [m.to_record() for m in pairs]
    order = np.random.default_rng(14).permutation(len(records))
    season = []
    for n, i in enumerate(order):
        record = {key: value for key, value in records[i].items() if key not in ("id", "time")}
        season.append(record | {"id": f"t{n + 1:03d}", "time": 1_740_000_000 + n * 86_400})
    return season


def _build(engine: Any) -> tuple[dict[str, str], list[str]]:
    from podium.server import store

    tokens = {role: store.create_token(engine, role, f"browser {role}") for role in ("admin", "moderator", "reporter")}
    with engine.connect() as conn:
        reporter = store.find_token(conn, tokens["reporter"])
        moderator = store.find_token(conn, tokens["moderator"])
    assert reporter is not None and moderator is not None
    league = store.create_league(engine, LEAGUE, "trueskill", {}, False)
    for record in _season():
        status, _ = store.report_match(engine, league, record, reporter, 1000)
        assert status == 201
    cup = store.create_league(engine, CUP, "elo", {}, True)
    mira, nils, oskar, pia, rosa, sven = CUP_PLAYERS
    cup_matches = [
        ("c1", [[mira], [nils]], [0, 1]),
        ("c2", [[oskar, pia], [rosa, sven]], [1, 0]),
        # Pending.  "Quinn" plays only in the first one, so approving it puts a new player on the board.
        ("c3", [["Quinn"], [mira]], [0, 1]),
        ("c4", [[nils, oskar], [pia, rosa]], [0, 0]),
        ("c5", [[sven], [mira]], [1, 0]),
    ]
    for match_id, teams, ranks in cup_matches:
        status, _ = store.report_match(engine, cup, {"id": match_id, "teams": teams, "ranks": ranks}, reporter, 1000)
        assert status == 202
    for match_id in ("c1", "c2"):
        store.approve_match(engine, cup, match_id, moderator)
    return tokens, ["c3", "c4", "c5"]


def _free_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def site(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """A live server over a freshly built database of each kind, shared by the module's tests."""
    import uvicorn

    from podium.server import Settings, create_app

    kind = request.param
    databases = make_db(kind, tmp_path_factory.mktemp(f"browser-{kind}"))
    url = next(databases)
    try:
        app = create_app(Settings(db=url, token_rate=0, address_rate=0))  # every request comes from 127.0.0.1
        tokens, pending = _build(app.state.engine)
        sock = _free_socket()
        port = sock.getsockname()[1]
        # ws="none": the pages need no websockets, and importing them could warn.
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", ws="none",
                                               lifespan="on"))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name=f"uvicorn-{kind}", daemon=True)
        thread.start()
        deadline = time.monotonic() + 60
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                server.should_exit = True
                pytest.fail(f"the server on port {port} did not start")
            time.sleep(0.02)
        try:
            yield Site(kind, f"http://127.0.0.1:{port}", tokens, pending, _artifacts(kind))
        finally:
            server.should_exit = True
            thread.join(timeout=15)
            sock.close()
            app.state.engine.dispose()
            assert not thread.is_alive(), "the server thread did not stop"
    finally:
        next(databases, None)  # runs make_db's clean-up: drops the PostgreSQL schema


@pytest.fixture
def page(browser: Any, site: Site) -> Iterator[Any]:
    """A fresh browser context (no cookies) at 1280x800."""
    context = browser.new_context(viewport=DESKTOP, base_url=site.base, locale="en-US")
    context.set_default_timeout(15_000)
    try:
        yield context.new_page()
    finally:
        context.close()


def _cells(row: Any) -> dict[str, str]:
    """A leaderboard row's cells by their class (mu, sigma, score, rating, games)."""
    out = {}
    for cell in row.locator("td").all():
        text = cell.inner_text().strip()
        for name in (cell.get_attribute("class") or "").split():
            out[name] = text
    return out


def _points(attribute: str | None) -> list[tuple[float, float]]:
    assert attribute, "the SVG shape has no points"
    pairs = attribute.split()
    return [(float(x), float(y)) for x, y in (pair.split(",") for pair in pairs)]


def _fits(page: Any) -> None:
    """Neither the page nor any of its tables scrolls sideways."""
    widths = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], f"{page.url} is {widths[0]}px wide in a {widths[1]}px window"
    overflowing = page.evaluate("""() => [...document.querySelectorAll('.table-wrap')]
        .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.querySelector('table')?.id || '?')""")
    assert not overflowing, f"tables wider than the screen on {page.url}: {overflowing}"


# -- the tests -------------------------------------------------------------------------------------------
def test_home_and_leaderboard(page: Any, site: Site) -> None:
    from playwright.sync_api import expect

    page.goto("/")
    expect(page).to_have_title(re.compile("Leagues"))
    listed = {row["name"]: row for row in site.api("/leagues")["leagues"]}
    assert set(listed) == {LEAGUE, CUP}
    cards = page.locator("a.league-card")
    expect(cards.locator(".league-name")).to_have_text(sorted(listed))
    for name, info in listed.items():
        card = cards.filter(has=page.locator(".league-name", has_text=re.compile(f"^{re.escape(name)}$")))
        expect(card).to_have_count(1)
        assert card.get_attribute("href") == f"/leagues/{name}"
        expect(card.locator(".players")).to_have_text(str(info["players"]))
        expect(card.locator(".matches")).to_have_text(str(info["matches"]))
        expect(card.locator(".pill", has_text="moderated")).to_have_count(1 if info["moderated"] else 0)
    site.screenshot(page, "home")

    cards.filter(has_text=LEAGUE).click()
    page.wait_for_url(f"**/leagues/{LEAGUE}")
    expect(page.locator("h1")).to_have_text(LEAGUE)
    api = site.api(f"/leagues/{LEAGUE}/leaderboard")
    assert api["total"] == len(PLAYERS) and api["matches"] == 60
    rows = page.locator("#leaderboard tbody tr")
    expect(rows).to_have_count(len(api["rows"]))
    assert page.locator("#leaderboard a.player").all_inner_texts() == [r["player"] for r in api["rows"]]
    for row, want in zip(rows.all(), api["rows"]):
        cells = _cells(row)
        assert cells["rank"] == str(want["rank"])
        for column, digits in (("mu", 2), ("sigma", 2), ("score", 2)):
            assert cells[column] == f"{want[column]:,.{digits}f}", (want["player"], column, cells)
            assert NUMBER.match(cells[column]), cells[column]
        assert cells["games"] == str(want["games"])
    # The stat cards agree with the API.
    expect(page.locator("#stat-players")).to_have_text(str(api["total"]))
    expect(page.locator("#stat-matches")).to_have_text(str(api["matches"]))
    site.screenshot(page, "leaderboard")

    # The other ordering: by mu.
    page.get_by_role("link", name="By μ", exact=True).click()
    page.wait_for_url("**by=mu**")
    by_mu = site.api(f"/leagues/{LEAGUE}/leaderboard?by=mu")
    expect(page.locator("#leaderboard a.player")).to_have_text([r["player"] for r in by_mu["rows"]])


def test_follow_a_player(page: Any, site: Site) -> None:
    from playwright.sync_api import expect

    page.goto(f"/leagues/{LEAGUE}")
    board = site.api(f"/leagues/{LEAGUE}/leaderboard")["rows"]
    chosen = board[1]  # the runner-up
    link = page.locator("#leaderboard a.player").nth(1)
    expect(link).to_have_text(chosen["player"])
    link.click()
    page.wait_for_url(f"**/leagues/{LEAGUE}/players/**")
    api = site.api(f"/leagues/{LEAGUE}/players/{quote(chosen['player'], safe='')}")

    expect(page.locator("#player-name")).to_have_text(chosen["player"])
    expect(page.locator("#player-rank")).to_have_text(f"#{api['rank']}")
    assert api["rank"] == chosen["rank"] == 2
    expect(page.locator("#player-games")).to_have_text(str(api["games"]))

    chart = page.locator("svg#rating-chart")
    expect(chart).to_be_visible()
    box = chart.bounding_box()
    assert box is not None and box["width"] > 600 and box["height"] > 150
    line = _points(chart.locator("polyline.mu").get_attribute("points"))
    assert len(line) == len(api["history"]) == api["games"] > 1
    xs = [x for x, _ in line]
    assert xs == sorted(xs) and len(set(xs)) == len(xs)  # one point per match, left to right
    band = chart.locator("polygon.band")
    expect(band).to_have_count(1)  # TrueSkill has an uncertainty band
    assert len(_points(band.get_attribute("points"))) == 2 * len(api["history"])
    # The line ends at the player's current mu, inside the band.
    last_x, last_y = line[-1]
    upper = _points(band.get_attribute("points"))[len(line) - 1]
    lower = _points(band.get_attribute("points"))[len(line)]
    assert upper[0] == last_x == lower[0] and upper[1] < last_y < lower[1]

    recent = page.locator("#recent tbody tr")
    expect(recent).to_have_count(min(15, api["games"]))
    expect(recent.first.locator("b")).to_have_text(chosen["player"])
    site.screenshot(page, "player")

    # A match from the player's list opens its page, which links back to the player.
    recent.first.locator("a").first.click()
    page.wait_for_url(f"**/leagues/{LEAGUE}/matches/**")
    expect(page.get_by_role("link", name=chosen["player"], exact=True).first).to_be_visible()
    site.screenshot(page, "match")


def test_moderator_approves_a_pending_match(page: Any, site: Site, browser: Any) -> None:
    from playwright.sync_api import expect

    from podium.server.pages import _csrf

    pending_path = f"/leagues/{CUP}/pending"
    moderator, reporter = site.tokens["moderator"], site.tokens["reporter"]
    first, *rest = site.pending
    assert "Quinn" not in [r["player"] for r in site.api(f"/leagues/{CUP}/leaderboard")["rows"]]

    # Not signed in: the queue sends the visitor to the sign-in form, which brings them back.
    page.goto(pending_path)
    page.wait_for_url("**/login?next=**")
    assert parse_qs(urlsplit(page.url).query)["next"] == [pending_path]
    expect(page.locator("h1")).to_have_text("Sign in")
    site.screenshot(page, "login")

    page.locator("input[name=token]").fill("pod_not-a-token")
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator(".error")).to_contain_text("unknown or revoked")
    site.screenshot(page, "login-error")

    page.locator("input[name=token]").fill(moderator)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"**{pending_path}")
    expect(page.locator("header .user")).to_contain_text("moderator")

    rows = page.locator("#pending tr[data-match]")
    queue = site.api(f"/leagues/{CUP}/pending", moderator)
    assert [m["id"] for m in queue["matches"]] == site.pending
    expect(rows).to_have_count(len(site.pending))
    assert [r.get_attribute("data-match") for r in rows.all()] == site.pending
    expect(page.locator(f'tr[data-match="{first}"]')).to_contain_text("Quinn")
    site.screenshot(page, "pending-before")

    # A form without the page's CSRF value is refused, and nothing changes.
    action = f"{pending_path}/{first}/approve"
    submit = """([action, csrf]) => {
        const form = document.createElement('form'); form.method = 'post'; form.action = action;
        const input = document.createElement('input'); input.type = 'hidden'; input.name = 'csrf'; input.value = csrf;
        form.appendChild(input); document.body.appendChild(form); form.submit(); }"""
    with page.expect_response(lambda r: r.url.endswith(action)) as refused:
        page.evaluate(submit, [action, "forged"])
    assert refused.value.status == 403
    expect(page.locator("h1")).to_contain_text("403")
    assert site.api(f"/leagues/{CUP}/matches/{first}")["status"] == "pending"

    page.goto(pending_path)
    page.locator(f'tr[data-match="{first}"] button.approve').click()
    expect(page.locator(f'tr[data-match="{first}"]')).to_have_count(0)
    page.wait_for_url(f"**{pending_path}")
    assert [r.get_attribute("data-match") for r in rows.all()] == rest
    site.screenshot(page, "pending-after")

    approved = site.api(f"/leagues/{CUP}/matches/{first}")
    assert approved["status"] == "recorded" and approved["seq"] == 2
    board = site.api(f"/leagues/{CUP}/leaderboard")
    on_board = {r["player"] for r in board["rows"]}
    assert {p for team in approved["record"]["teams"] for p in team} <= on_board and "Quinn" in on_board
    assert board["matches"] == 3
    assert [m["id"] for m in site.api(f"/leagues/{CUP}/pending", moderator)["matches"]] == rest

    # Rejecting takes a match out of the queue without recording it.
    page.locator(f'tr[data-match="{rest[-1]}"] button.reject').click()
    expect(page.locator(f'tr[data-match="{rest[-1]}"]')).to_have_count(0)
    assert site.api(f"/leagues/{CUP}/matches/{rest[-1]}")["status"] == "rejected"
    assert site.api(f"/leagues/{CUP}/leaderboard")["matches"] == 3

    # The league page (Elo: one rating column, thousands separated) shows the new player and the queue.
    page.goto(f"/leagues/{CUP}")
    expect(page.locator("#leaderboard a.player")).to_have_text([r["player"] for r in board["rows"]])
    expect(page.locator("#leaderboard a.player", has_text="Quinn")).to_be_visible()
    ratings = page.locator("#leaderboard td.rating").all_inner_texts()
    assert ratings and all(NUMBER.match(r) and "," in r for r in ratings), ratings
    assert ratings == [f"{r['mu']:,.1f}" for r in board["rows"]]
    expect(page.locator("a.pending-link")).to_contain_text("1 pending")
    site.screenshot(page, "league-moderated")

    # A reporter's token signs in, but the queue is not theirs: back to the sign-in form, and a forged
    # decision (with the CSRF value their own cookie would give) is refused.
    context = browser.new_context(viewport=DESKTOP, base_url=site.base)
    try:
        other = context.new_page()
        other.goto(f"/login?next={quote(pending_path, safe='')}")
        other.locator("input[name=token]").fill(reporter)
        other.get_by_role("button", name="Sign in").click()
        other.wait_for_url("**/login?next=**")
        expect(other.locator("header .user")).to_contain_text("reporter")
        expect(other.locator("#pending")).to_have_count(0)
        expect(other.locator(".notice")).to_contain_text("reporter")
        site.screenshot(other, "login-reporter")
        target = f"{pending_path}/{rest[0]}/approve"
        with other.expect_response(lambda r: r.url.endswith(target)) as refused:
            other.evaluate(submit, [target, _csrf(reporter)])
        assert refused.value.status == 403
        expect(other.locator("h1")).to_contain_text("403")
        assert site.api(f"/leagues/{CUP}/matches/{rest[0]}")["status"] == "pending"
    finally:
        context.close()


def test_apostrophe_in_a_player_name(page: Any, site: Site) -> None:
    from playwright.sync_api import expect

    name = "O'Brien"
    escaped = "O&#39;Brien"
    path = f"/leagues/{LEAGUE}/players/O%27Brien"
    league_html = site.html(f"/leagues/{LEAGUE}")
    assert f'href="{path}"' in league_html and f">{escaped}</a>" in league_html
    assert name not in league_html  # every occurrence is escaped
    player_html = site.html(path)
    assert f'<h1 id="player-name">{escaped}</h1>' in player_html and name not in player_html

    page.goto(f"/leagues/{LEAGUE}")
    link = page.locator("#leaderboard a.player", has_text=name)
    expect(link).to_have_count(1)
    assert link.get_attribute("href") == path
    link.click()
    page.wait_for_url(f"**{path}")
    expect(page.locator("#player-name")).to_have_text(name)
    expect(page).to_have_title(re.compile("^O'Brien · "))
    assert name in (page.locator("#rating-chart").get_attribute("aria-label") or "")
    api = site.api(f"/leagues/{LEAGUE}/players/O%27Brien")
    assert api["player"] == name and api["games"] > 0
    expect(page.locator("#player-rank")).to_have_text(f"#{api['rank']}")
    site.screenshot(page, "player-apostrophe")


def test_pages_fit_a_phone(browser: Any, site: Site) -> None:
    from playwright.sync_api import expect

    context = browser.new_context(viewport=MOBILE, base_url=site.base, is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        page.goto("/")
        _fits(page)
        page.goto(f"/leagues/{LEAGUE}")
        expect(page.locator("#leaderboard a.player")).to_have_count(len(PLAYERS))
        _fits(page)
        site.screenshot(page, "leaderboard-mobile")
        page.locator("#leaderboard a.player").first.click()
        page.wait_for_url(f"**/leagues/{LEAGUE}/players/**")
        expect(page.locator("#rating-chart")).to_be_visible()
        box = page.locator("#rating-chart").bounding_box()
        assert box is not None and box["width"] <= MOBILE["width"]
        _fits(page)
        site.screenshot(page, "player-mobile")
        page.goto(f"/leagues/{LEAGUE}/matches/t001")
        _fits(page)
        page.goto(f"/login?next=/leagues/{CUP}/pending")
        _fits(page)
        page.locator("input[name=token]").fill(site.tokens["moderator"])
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(f"**/leagues/{CUP}/pending")
        expect(page.locator("#pending tr[data-match]").first).to_be_visible()
        _fits(page)
        site.screenshot(page, "pending-mobile")
    finally:
        context.close()


def test_api_docs_load_from_this_server_alone(page: Any, site: Site) -> None:
    """Swagger UI renders the API with every request to another origin blocked: its script, styles and icon are
    served by podium, and nothing else is fetched."""
    from playwright.sync_api import expect

    served: list[str] = []
    elsewhere: list[str] = []

    def only_this_server(route: Any) -> None:
        url = route.request.url
        if url.startswith(site.base + "/"):
            served.append(url)
            route.continue_()
        else:
            elsewhere.append(url)
            route.abort()

    page.route("**/*", only_this_server)
    page.goto("/api/v1/docs")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("podium league server")
    report = page.locator(".opblock-post .opblock-summary-path", has_text="/api/v1/leagues/{name}/matches").first
    expect(report).to_be_visible()
    report.click()  # an operation opens, with its request body's schema
    expect(page.locator(".opblock.is-open .opblock-section-request-body").first).to_be_visible()
    assert page.locator(".opblock").count() >= 15
    expect(page.locator(".swagger-ui .errors-wrapper")).to_have_count(0)
    page.wait_for_load_state("networkidle")
    assert elsewhere == [], elsewhere
    paths = {urlsplit(url).path for url in served}
    assert {"/api/v1/docs", "/api/v1/docs/static/swagger-ui-bundle.js", "/api/v1/docs/static/swagger-ui.css",
            "/api/v1/openapi.json"} <= paths, paths
    site.screenshot(page, "api-docs")
