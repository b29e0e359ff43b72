"""The league pages' integrity views: who is comparable with whom on the leaderboard (against podium.components
on the same log), kept up to date as matches are recorded and voided, and the moderators' audit page and API
(against podium.audit on the same log)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import podium
from podium.server import integrity, store
from podium.server.db import read_transaction

from .conftest import auth
from .test_api import create_league, report

LEAGUES = "/api/v1/leagues"


def record_all(app: Any, name: str, records: list[dict[str, Any]]) -> None:
    """Record many matches at once through the server's own batch writer."""
    engine = app.state.engine
    with read_transaction(engine) as conn:
        league = store.get_league(conn, name)
    token = store.create_token(engine, "reporter", "bulk")
    for start in range(0, len(records), 500):
        batch = [store.prepare_report(league, r, token, 1000) for r in records[start:start + 500]]
        for status, _ in store.record_reports(engine, league, batch):
            assert status == 201


def scenes() -> list[dict[str, Any]]:
    """Two scenes of 12 players, each playing among themselves, joined by two matches; and a pair apart."""
    rng = np.random.default_rng(5)
    out = []
    for j in range(400):
        scene = "a" if j % 2 else "b"
        x, y = rng.choice(12, 2, replace=False)
        out.append({"id": f"m{j}", "teams": [[f"{scene}{x}"], [f"{scene}{y}"]], "ranks": [0, 1]})
        if j in (100, 300):
            out.append({"id": f"bridge{j}", "teams": [["a0"], ["b0"]], "ranks": [0, 1]})
    out.append({"id": "apart", "teams": [["loner1"], ["loner2"]], "ranks": [0, 1]})
    return out


def rows_of(page: str) -> dict[str, str]:
    """Each leaderboard row's player cell, by player."""
    table = page[page.index('<table id="leaderboard"'):]
    table = table[:table.index("</table>")]
    cells = {}
    for row in table.split("<tr")[2:]:
        name = row.split('/players/')[1].split('"')[0]
        cells[name] = row
    return cells


def test_leaderboard_page_shows_components_thin_links_and_provisional(client: Any, app: Any,
                                                                     tokens: dict[str, str]) -> None:
    create_league(client, tokens, "scenes", "elo")
    records = scenes()
    record_all(app, "scenes", records)
    found = podium.components([podium.Match(r["teams"], r["ranks"], id=r["id"]) for r in records])
    assert found.n_components == 2 and len(found.thin_links) == 1
    page = client.get("/leagues/scenes", params={"page": 1})
    assert page.status_code == 200
    rows = rows_of(page.text)
    assert "†" in rows["loner1"] and "†" in rows["loner2"]
    assert all("†" not in rows[p] for p in rows if not p.startswith("loner"))
    assert 'class="pill provisional"' in rows["loner1"] and 'class="pill provisional"' not in rows["a3"]
    text = page.text[page.text.index('id="comparability"'):]
    assert "2 players in 1 group that never met the largest group (24 players)" in text
    assert "12 players" in text and "separated by 2 matches" in text
    assert "bridge100" in text and "bridge300" in text

    # A match joining the loners to the rest is added to the cached components (no rebuild).
    with read_transaction(app.state.engine) as conn:
        league = store.get_league(conn, "scenes")
        before = integrity._cache[integrity._key(conn, league)]
    report(client, tokens["reporter"], "scenes", {"id": "meet", "teams": [["loner1"], ["a1"]], "ranks": [0, 1]})
    rows = rows_of(client.get("/leagues/scenes").text)
    assert "†" not in rows["loner1"] and "†" not in rows["loner2"]
    with read_transaction(app.state.engine) as conn:
        assert integrity._cache[integrity._key(conn, league)] is before and before.count == len(records) + 1
    # Voiding it reads the log again: the loners are apart once more.
    response = client.post(f"{LEAGUES}/scenes/matches/meet/void", headers=auth(tokens["moderator"]))
    assert response.status_code == 200, response.text
    rows = rows_of(client.get("/leagues/scenes").text)
    assert "†" in rows["loner1"]
    with read_transaction(app.state.engine) as conn:
        assert integrity._cache[integrity._key(conn, league)] is not before


def test_one_component_says_so(client: Any, app: Any, tokens: dict[str, str]) -> None:
    create_league(client, tokens, "one", "trueskill")
    record_all(app, "one", [m.to_record() for m in podium.simulate(8, 60, seed=3).matches])
    page = client.get("/leagues/one").text
    assert "all ratings are comparable" in page and "†" not in rows_of(page).values().__str__()


def test_audit_page_and_api_show_what_podium_audit_flags(client: Any, app: Any, tokens: dict[str, str]) -> None:
    sim = podium.simulate_abuse(30, 1200, farming=0, sandbagging=0, seed=3)
    (beneficiary, booster), = sim.abusers["one-sided pair"]
    create_league(client, tokens, "traded", "elo")
    record_all(app, "traded", [m.to_record() for m in sim.matches])
    want = podium.audit(sim.matches)
    assert [f.players for f in want] == [(beneficiary, booster)]

    # Moderators only: others are sent to sign in, or refused by the API.
    response = client.get("/leagues/traded/audit", follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/login?next=/leagues/traded/audit"
    assert client.get(f"{LEAGUES}/traded/audit", headers=auth(tokens["reporter"])).status_code == 403
    assert client.get(f"{LEAGUES}/traded/audit").status_code == 401

    data = client.get(f"{LEAGUES}/traded/audit", headers=auth(tokens["moderator"])).json()
    assert [tuple(f["players"]) for f in data["flags"]] == [(beneficiary, booster)]
    assert data["flags"][0]["adjusted"] == pytest.approx(want.flags[0].adjusted, rel=1e-9)
    assert data["flags"][0]["matches"] == [sim.matches.ids[j] for j in want.flags[0].matches]
    assert data["tests"] == want.tests

    client.cookies.set("podium_token", tokens["moderator"])
    page = client.get("/leagues/traded/audit")
    assert page.status_code == 200
    table = page.text[page.text.index('<table id="audit"'):]
    assert "one-sided pair" in table and beneficiary in table and booster in table
    assert want.flags[0].evidence in table
    assert 'href="/leagues/traded/audit"' in client.get("/leagues/traded").text  # linked for moderators
    client.cookies.clear()
    assert 'href="/leagues/traded/audit"' not in client.get("/leagues/traded").text


def test_integrity_views_have_a_size_limit(tmp_path: Any) -> None:
    from fastapi.testclient import TestClient

    from podium.server import Settings, create_app

    application = create_app(Settings(db=str(tmp_path / "l.db"), token_rate=0, address_rate=0,
                                      integrity_max_matches=10))
    engine = application.state.engine
    admin = store.create_token(engine, "admin", "a")
    moderator = store.create_token(engine, "moderator", "m")
    with TestClient(application) as client:
        assert client.post(LEAGUES, json={"name": "big", "model": "elo"}, headers=auth(admin)).status_code == 201
        record_all(application, "big", [m.to_record() for m in podium.simulate(8, 30, seed=1).matches])
        page = client.get("/leagues/big").text
        assert "Thin links are not computed for logs this long" in page
        response = client.get(f"{LEAGUES}/big/audit", headers=auth(moderator))
        assert response.status_code == 422 and response.json()["field"] == "league"
        assert "10 matches" in response.json()["detail"]
    engine.dispose()
