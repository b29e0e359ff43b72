"""Query integers out of range get 422 naming the parameter, on SQLite and PostgreSQL.

An outside fuzz sent ``offset=2**63`` and the like: the driver's overflow answered 500.  Every offset and count
now lies in ``[0, QUERY_MAX]`` (a signed 32-bit integer), and a value beyond answers 422 with the parameter's name,
while the largest taken value is answered (an empty page).
"""

from __future__ import annotations

from typing import Any

import pytest

from podium.server.app import QUERY_MAX

from .conftest import auth
from .test_api import LEAGUES, create_league, report

# (path below the league, parameter, whether the read needs a moderator's token)
READS = [("leaderboard", "offset", False), ("leaderboard", "min_games", False), ("leaderboard", "limit", False),
         ("matches", "limit", False), ("pending", "offset", True), ("pending", "limit", True),
         ("players/a", "recent", False)]


@pytest.mark.parametrize("path, parameter, moderator", READS)
@pytest.mark.parametrize("value", [2**31, 2**63, 2**64 + 1, 10**40, -1, -(2**63) - 1])
def test_an_out_of_range_query_integer_is_refused_by_name(client: Any, tokens: dict[str, str], path: str,
                                                          parameter: str, moderator: bool, value: int) -> None:
    create_league(client, tokens, "q", "elo")
    report(client, tokens["reporter"], "q", {"id": "m1", "teams": [["a"], ["b"]]})
    headers = auth(tokens["moderator"]) if moderator else {}
    answer = client.get(f"{LEAGUES}/q/{path}", params={parameter: value}, headers=headers)
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == parameter and str(value) in answer.json()["detail"]


@pytest.mark.parametrize("path, parameter, moderator", [r for r in READS if r[1] in ("offset", "min_games")])
def test_the_largest_offset_or_count_is_answered(client: Any, tokens: dict[str, str], path: str, parameter: str,
                                                  moderator: bool) -> None:
    create_league(client, tokens, "q", "elo")
    report(client, tokens["reporter"], "q", {"id": "m1", "teams": [["a"], ["b"]]})
    headers = auth(tokens["moderator"]) if moderator else {}
    answer = client.get(f"{LEAGUES}/q/{path}", params={parameter: QUERY_MAX}, headers=headers)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body.get("rows", body.get("matches")) == []
