"""The server applies the library's player-id rule (podium.data.ids) at every door; on SQLite and PostgreSQL.

A report, a correction, a prediction and a balance refuse an id of each class (422 naming the slot, nothing
stored); a composed and a decomposed "é" are one player in reports, reads and URLs.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest

from .conftest import auth
from .test_api import LEAGUES, create_league, report, snapshot
from ..data.test_player_ids import COMPOSED, DECOMPOSED, EDGES, REFUSED

BAD = {**{kind: player for kind, (player, _) in REFUSED.items() if kind != "surrogate"}, **EDGES}
# (a lone surrogate cannot travel in JSON's UTF-8: the body parser refuses it first, by name too)


@pytest.mark.parametrize("kind", sorted(BAD))
def test_every_door_refuses_each_class_by_name(client: Any, app: Any, tokens: dict[str, str], kind: str) -> None:
    create_league(client, tokens, "ids", "trueskill")
    report(client, tokens["reporter"], "ids", {"id": "m1", "teams": [["a"], ["b"]]})
    before = snapshot(app)
    player = BAD[kind]
    answer = report(client, tokens["reporter"], "ids", {"id": "m2", "teams": [["a"], [player]]}, expect=422)
    assert answer.json()["field"] == "teams[1][0]", answer.text
    corrected = client.put(f"{LEAGUES}/ids/matches/m1", json={"teams": [[player], ["b"]]},
                           headers=auth(tokens["moderator"]))
    assert corrected.status_code == 422 and corrected.json()["field"] == "teams[0][0]", corrected.text
    predicted = client.post(f"{LEAGUES}/ids/predict", json={"players": ["a", player]})
    assert predicted.status_code == 422 and predicted.json()["field"] == "players[1]", predicted.text
    balanced = client.post(f"{LEAGUES}/ids/balance", json={"players": ["a", "b", "c", player]})
    assert balanced.status_code == 422 and balanced.json()["field"] == "players[3]", balanced.text
    assert snapshot(app) == before


def test_a_composed_and_a_decomposed_name_are_one_player(client: Any, tokens: dict[str, str]) -> None:
    create_league(client, tokens, "ids", "elo")
    report(client, tokens["reporter"], "ids", {"id": "m1", "teams": [[DECOMPOSED], ["b"]]})
    report(client, tokens["reporter"], "ids", {"id": "m2", "teams": [[COMPOSED], ["b"]]})
    rows = client.get(f"{LEAGUES}/ids/leaderboard").json()["rows"]
    assert sorted(r["player"] for r in rows) == sorted([COMPOSED, "b"])
    for name in (DECOMPOSED, COMPOSED):
        page = client.get(f"{LEAGUES}/ids/players/{quote(name)}")
        assert page.status_code == 200 and page.json()["player"] == COMPOSED and page.json()["games"] == 2
        assert client.get(f"/leagues/ids/players/{quote(name)}").status_code == 200
    stored = client.get(f"{LEAGUES}/ids/matches/m1").json()
    assert stored["record"]["teams"] == [[COMPOSED], ["b"]]
    twice = report(client, tokens["reporter"], "ids", {"id": "m3", "teams": [[DECOMPOSED], [COMPOSED]]}, expect=422)
    assert twice.json()["field"] == "teams"
    predicted = client.post(f"{LEAGUES}/ids/predict", json={"players": [DECOMPOSED, "b"]})
    assert predicted.status_code == 200 and predicted.json()["teams"] == [[COMPOSED], ["b"]]
    assert client.post(f"{LEAGUES}/ids/predict", json={"players": [DECOMPOSED, COMPOSED]}).status_code == 422
    balanced = client.post(f"{LEAGUES}/ids/balance", json={"players": [DECOMPOSED, "b", "c", "d"]})
    assert balanced.status_code == 200 and COMPOSED in str(balanced.json()["teams"]), balanced.text
