"""Player ids: one rule, applied by :class:`podium.Match`, every reader of matches and the league server alike.

A player id is a non-empty string of printable characters without a space at either end, compared in Unicode's
normal form NFC: ids that differ only by normalization (a composed and a decomposed "é") are one player, kept in
NFC.  Printable is Python's :meth:`str.isprintable`: no code point of the categories "Other" (control, format,
surrogate, private use, unassigned, which holds the noncharacters) or "Separator" but the ASCII space.  So the
right-to-left override (``ann\\u202egnp.exe``), zero-width characters (``ann\\u200b`` shows as ``ann``), the
byte-order mark, the line separator U+2028, tag characters and a non-breaking space are refused: on a leaderboard
each lets one player pass for another.  (Unassigned means unassigned in the Unicode version of the running
Python: Unicode 14.0 in Python 3.11, 15.0 in 3.12.)
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["MatchError", "arrow_ids_valid", "check_player_id", "checked_codes", "id_problem", "plain_ids", "stored_form"]


class MatchError(ValueError):
    """A match (or a history of matches) that cannot be what it claims to be.

    The message names the offending field and shows what was received.
    """


def plain_ids(players: Sequence[Any]) -> bool:
    """Whether every entry is a player id already in its stored form that needs no look at its characters:
    printable ASCII (which is in NFC), not empty, no space at either end.  The common case, checked at C speed
    on the ids joined by ``|`` (an id holding ``|`` beside a space, or at an end, takes the slow way: a false
    alarm costs time, never a wrong answer); anything else goes through :func:`check_player_id` one by one."""
    try:
        joined = "|".join(players)
    except TypeError:  # (not all str)
        return False
    return (joined.isascii() and joined.isprintable() and joined[:1] not in ("", " ", "|")
            and joined[-1] not in (" ", "|") and " |" not in joined and "| " not in joined and "||" not in joined)


def stored_form(player: str) -> str:
    """``player`` in NFC, the form ids are kept in: the key a lookup by id asks for (ASCII is NFC already)."""
    return player if player.isascii() else unicodedata.normalize("NFC", player)


def id_problem(player: str) -> str | None:
    """What breaks the player-id rule in ``player`` (a str already in NFC), or None when it is a valid id."""
    if not player:
        return "is empty"
    if player[0] == " " or player[-1] == " ":
        return "has a space at one end"
    if not player.isprintable():
        at = next(i for i, c in enumerate(player) if not c.isprintable())
        code = ord(player[at])
        return (f"holds U+{code:04X} ({unicodedata.name(player[at], 'unnamed')}, category "
                f"{unicodedata.category(player[at])}) at {at}: ids are printable characters")
    return None


def check_player_id(player: Any, where: str) -> str:
    """``player`` in NFC, or a :class:`MatchError` naming ``where`` (the field) and the rule it breaks.

    Examples
    --------
    >>> check_player_id("Jose\\u0301", "teams[0][0]") == "Jos\\u00e9"
    True
    >>> check_player_id("ann\\u200b", "teams[0][0]")
    Traceback (most recent call last):
    ...
    podium.data.ids.MatchError: 'teams[0][0]' must be a player id: 'ann\\u200b' holds U+200B (ZERO WIDTH SPACE, category Cf) at 3: ids are printable characters.
    """
    if type(player) is not str:
        if not isinstance(player, str):
            raise MatchError(f"'{where}' must be a player id (str). Got {_show(player)}.")
        player = str(player)
    player = stored_form(player)
    problem = id_problem(player)
    if problem is not None:
        raise MatchError(f"'{where}' must be a player id: {_show(player)} {problem}.")
    return player


def checked_codes(codes: NDArray[np.int64], values: list[Any]
                  ) -> tuple[NDArray[np.int64], list[Any], dict[int, str]]:
    """Dictionary-coded player ids (``codes`` into the distinct ``values``; -1 null) by the rule: the values in
    NFC, those equal in NFC one code, and what breaks the rule in each bad value by its (new) code."""
    if plain_ids(values):
        return codes, values, {}
    normal = [stored_form(v) if type(v) is str else v for v in values]
    merged = list(dict.fromkeys(normal))
    if len(merged) < len(values):
        position = {v: i for i, v in enumerate(merged)}
        remap = np.array([position[v] for v in normal], dtype=np.int64)
        codes = np.where(codes >= 0, remap[np.maximum(codes, 0)], codes)
    problems = {}
    for code, value in enumerate(merged):
        problem = id_problem(value) if type(value) is str else "is not a string"
        if problem is not None:
            problems[code] = problem
    return codes, merged, problems


def arrow_ids_valid(array: Any) -> bool:
    """Whether every entry of a pyarrow string array is a valid id in its stored form (NFC), checked by Arrow's
    compute kernels without a ``str`` an entry but for the entries beyond ASCII."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if len(array) == 0 or pa.types.is_integer(array.type):  # (an integer id is its decimal digits)
        return True
    if pc.min(pc.binary_length(array)).as_py() == 0:
        return False
    edges = pc.or_(pc.starts_with(array, " "), pc.ends_with(array, " "))
    if pc.any(edges).as_py():
        return False
    ascii_ = pc.string_is_ascii(array)
    plain = pc.and_(ascii_, pc.ascii_is_printable(array))
    if pc.all(plain).as_py():
        return True
    if not pc.all(pc.or_(plain, pc.invert(ascii_))).as_py():
        return False  # an ASCII id with a control character
    return all(unicodedata.is_normalized("NFC", v) and id_problem(v) is None
               for v in array.filter(pc.invert(ascii_)).to_pylist())


def _show(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
