"""Hypothesis strategies shared by the tests: random valid matches."""

from __future__ import annotations

import unicodedata
from datetime import datetime

from hypothesis import strategies as st

from podium import Match
from podium.data.match import MAX_TIME, MIN_WEIGHT

# Printable characters by Unicode's general categories (no Other, no Separator but the ASCII space): the player-id
# rule (podium.data.ids) written from the categories, not from the code it checks.
PRINTABLE = st.characters(exclude_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs")) | st.just(" ")


def player_ids(max_size: int = 4) -> st.SearchStrategy[str]:
    """Valid player ids in their stored form: printable, no space at either end, in NFC."""
    return (st.text(PRINTABLE, min_size=1, max_size=max_size).map(lambda s: unicodedata.normalize("NFC", s))
            .filter(lambda s: s != "" and s.strip(" ") == s))


PLAYER_IDS = player_ids()


@st.composite
def a_match(draw, ids=PLAYER_IDS, time_kind: str = "none", pool: list[str] | None = None) -> Match:
    """A valid Match with draws, non-finishers and partial play; players from ``pool`` when it is big enough."""
    n = draw(st.integers(2, 5))
    sizes = draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
    total = sum(sizes)
    players = draw(st.permutations(pool))[:total] if pool is not None and len(pool) >= total else draw(
        st.lists(ids, min_size=total, max_size=total, unique=True))
    teams, k = [], 0
    for s in sizes:
        teams.append(players[k:k + s])
        k += s
    ranks = draw(st.lists(st.none() | st.integers(0, n - 1), min_size=n, max_size=n))
    weights = None
    if draw(st.booleans()):
        weights = [draw(st.lists(st.floats(MIN_WEIGHT, 1), min_size=s, max_size=s)) for s in sizes]
    if time_kind == "number":
        time = draw(st.none() | st.integers(-10**12, 10**12) | st.floats(-MAX_TIME, MAX_TIME, exclude_min=True, exclude_max=True))
    elif time_kind == "date":
        time = draw(st.none() | st.dates().map(lambda d: d.isoformat()))
    elif time_kind == "datetime":
        # Days since 1970 as float64 resolve a microsecond only up to about the 2040s, so stay within 1900-2035.
        time = draw(st.none() | st.datetimes(datetime(1900, 1, 1), datetime(2035, 12, 31)).map(lambda d: d.isoformat() + "Z"))
    else:
        time = None
    return Match(teams, ranks, weights, time=time, id=draw(st.none() | ids))
