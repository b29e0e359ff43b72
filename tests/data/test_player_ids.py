"""The player-id rule (podium.data.ids), applied alike by Match, Matches, every reader and a League's lookups.

An outside review found ids that impersonate: ``ann\\u202egnp.exe`` (a right-to-left override), ``ann\\u200b``
(shows as ``ann``), and a composed and a decomposed "é" as two players.  The rule: a non-empty string of printable
characters (:meth:`str.isprintable`, Unicode's general categories) without a space at either end, in NFC.  The
reference for each class below is Unicode's own category of the character (``unicodedata.category``), not the code.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import podium
from podium import Match, MatchError, Matches
from podium.data.ids import arrow_ids_valid, check_player_id

from ..strategies import PRINTABLE

# One id of each class the rule refuses, with the category Unicode gives its odd character.
REFUSED = {
    "right-to-left override": ("ann\u202egnp.exe", "Cf"),
    "zero-width space": ("ann\u200b", "Cf"),
    "zero-width joiner": ("a\u200db", "Cf"),
    "byte-order mark": ("\ufeffann", "Cf"),
    "tag character": ("ann\U000e0041", "Cf"),
    "line separator": ("ann\u2028lee", "Zl"),
    "paragraph separator": ("ann\u2029", "Zp"),
    "no-break space": ("ann\u00a0lee", "Zs"),
    "control": ("ann\x07", "Cc"),
    "delete": ("ann\x7f", "Cc"),
    "newline": ("ann\nlee", "Cc"),
    "private use": ("ann\ue000", "Co"),
    "surrogate": ("ann\ud800", "Cs"),
    "noncharacter": ("ann\ufdd0", "Cn"),
    "noncharacter at a plane's end": ("ann\U0001fffe", "Cn"),
    "unassigned": ("ann\U000e0080", "Cn"),
}
EDGES = {"empty": "", "leading space": " ann", "trailing space": "ann ", "only a space": " "}
ACCEPTED = ["ann", "ann lee", "José", "Łukasz", "李小龍", "ñandú", "Ελένη", "محمد", "😀", "a.b_c-d:9", "O'Brien"]
DECOMPOSED, COMPOSED = "Jose\u0301", "Jos\u00e9"


@pytest.mark.parametrize("kind", sorted(REFUSED))
def test_the_category_of_each_refused_class(kind: str) -> None:
    """The table's classes are what Unicode says they are (a check on the test's own premises)."""
    player, category = REFUSED[kind]
    odd = [c for c in player if not ("a" <= c <= "z" or c in ".ngpe")]
    assert unicodedata.category(odd[0]) == category


@pytest.mark.parametrize("player", [p for p, _ in REFUSED.values()] + list(EDGES.values()),
                         ids=sorted(REFUSED, key=list(REFUSED).index) + list(EDGES))
def test_match_refuses_each_class_naming_the_slot(player: str) -> None:
    with pytest.raises(MatchError, match=r"'teams\[1\]\[0\]' must be a player id"):
        Match([["bob"], [player]])
    with pytest.raises(MatchError, match=r"'teams\[0\]\[1\]'"):  # the slow path too (a team of two)
        Match([["bob", player], ["cy"]])


@pytest.mark.parametrize("player", ACCEPTED)
def test_ordinary_ids_of_every_script_are_kept(player: str) -> None:
    assert Match([[player], ["bob"]]).teams[0] == (player,)


def test_ids_that_differ_only_by_normalization_are_one_player() -> None:
    assert DECOMPOSED != COMPOSED and unicodedata.normalize("NFC", DECOMPOSED) == COMPOSED
    assert Match([[DECOMPOSED], ["bob"]]).teams[0] == (COMPOSED,)
    with pytest.raises(MatchError, match="appears more than once"):
        Match([[DECOMPOSED], [COMPOSED]])
    matches = Matches.from_matches([Match([[DECOMPOSED], ["b"]]), Match([[COMPOSED], ["b"]])])
    assert matches.players == [COMPOSED, "b"]
    league = podium.League(podium.Elo())
    league.record_many(matches)
    assert len(league) == 2 and DECOMPOSED in league and COMPOSED in league
    assert league.rating(DECOMPOSED) == league.rating(COMPOSED) != podium.Elo().prior
    assert league.games(DECOMPOSED) == 2
    assert list(league.states([DECOMPOSED])) == [COMPOSED]


def test_from_arrays_normalizes_and_refuses_like_match() -> None:
    def arrays(players: list[str]) -> Matches:
        return Matches([0, 2], [0, 1, 2], [0, 1], [0, 1], [1.0, 1.0], [0.0], players)

    assert arrays([DECOMPOSED, "b"]).players == [COMPOSED, "b"]
    with pytest.raises(MatchError, match=r"'players\[1\]' must be a player id"):
        arrays(["a", "ann\u200b"])
    with pytest.raises(MatchError, match="each player id once"):
        arrays([DECOMPOSED, COMPOSED])


def _record(teams: list[list[str]], **more: object) -> str:
    return json.dumps({"teams": teams, "ranks": list(range(len(teams))), **more}) + "\n"


@pytest.mark.parametrize("player", ["ann\u200b", "ann\u202egnp.exe", " ann", "", "ann\u2028"])
@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_every_reader_refuses_a_bad_id_or_skips_its_match(tmp_path: Path, player: str, suffix: str) -> None:
    if suffix == ".csv" and player == "":
        pytest.skip("the CSV long form reads an empty cell as a missing player (its own message, test_io.py)")
    good = Matches.from_matches([Match([["a"], ["b"]], id="m1"), Match([["b"], ["c"]], id="m3")])
    table = good.to_arrow()
    bad_rows = pa.table({"match": ["m2", "m2"], "team": [0, 1], "player": ["a", player], "rank": [0, 1],
                         "weight": [1.0, 1.0], "time": pa.array([None, None], pa.float64())})
    both = pa.concat_tables([table.slice(0, 2), bad_rows.cast(table.schema), table.slice(2)])
    path = tmp_path / f"h{suffix}"
    if suffix == ".jsonl":
        path.write_text(_record([["a"], ["b"]], id="m1") + _record([["a"], [player]], id="m2")
                        + _record([["b"], ["c"]], id="m3"))
    elif suffix == ".csv":
        import pyarrow.csv as pacsv

        pacsv.write_csv(both, path)
    else:
        import pyarrow.parquet as pq

        pq.write_table(both, path)
    with pytest.raises(MatchError, match="player id"):
        podium.read_matches(path)
    with pytest.warns(UserWarning, match="player id"):
        assert podium.read_matches(path, errors="skip").ids == ["m1", "m3"]
    with pytest.raises(MatchError, match="player id"):
        Matches.from_arrow(both)
    with pytest.warns(UserWarning, match="player id"):
        assert Matches.from_arrow(both, errors="skip").ids == ["m1", "m3"]
    with pytest.warns(UserWarning, match="player id"):
        scanned = [m for batch in podium.scan_matches(path, errors="skip") for m in batch]
    assert [m.id for m in scanned] == ["m1", "m3"]


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_every_reader_makes_decomposed_and_composed_one_player(tmp_path: Path, suffix: str) -> None:
    matches = [Match([["a"], [COMPOSED]], id="m1"), Match([["a"], ["b"]], id="m2")]
    table = Matches.from_matches(matches).to_arrow()
    decomposed = table.set_column(2, "player", pa.array(["a", DECOMPOSED, "a", "b"], table.schema.field("player").type))
    decomposed = decomposed.set_column(0, "match", pa.array(["m0", "m0", "m0b", "m0b"], table.schema.field("match").type))
    path = tmp_path / f"h{suffix}"
    if suffix == ".jsonl":
        path.write_text(_record([["a"], [DECOMPOSED]], id="m0") + _record([["a"], [COMPOSED]], id="m1"))
    elif suffix == ".csv":
        import pyarrow.csv as pacsv

        pacsv.write_csv(pa.concat_tables([decomposed.slice(0, 2), table]), path)
    else:
        import pyarrow.parquet as pq

        pq.write_table(pa.concat_tables([decomposed.slice(0, 2), table]), path)
    read = podium.read_matches(path)
    assert COMPOSED in read.players and DECOMPOSED not in read.players
    assert len(read.players) == len(set(read.players))
    assert Matches.from_arrow(decomposed).players == ["a", COMPOSED, "b"]


def test_arrow_check_agrees_with_the_rule() -> None:
    for player in ACCEPTED + [p for p, _ in REFUSED.values()] + list(EDGES.values()):
        if "\ud800" in player:
            continue  # (Arrow holds UTF-8 only: no lone surrogate reaches it)
        if "\ud800" in player:
            continue  # (Arrow holds UTF-8 only: no lone surrogate reaches it)
        expected = unicodedata.is_normalized("NFC", player) and _valid(player)
        assert arrow_ids_valid(pa.array(["bob", player], pa.large_string())) == expected, player
    assert not arrow_ids_valid(pa.array([DECOMPOSED], pa.large_string()))  # (not in its stored form)
    assert arrow_ids_valid(pa.array([1, 2], pa.int64()))


def _valid(player: str) -> bool:
    try:
        check_player_id(player, "p")
    except MatchError:
        return False
    return True


@settings(max_examples=300)
@given(st.text(PRINTABLE, min_size=1, max_size=6))
def test_a_printable_id_is_kept_in_nfc(text: str) -> None:
    normal = unicodedata.normalize("NFC", text)
    if normal.strip(" ") != normal or not normal:
        with pytest.raises(MatchError, match="space at one end|empty"):
            check_player_id(text, "p")
        return
    assert check_player_id(text, "p") == normal
    assert Match([[text], ["b" if normal == "a" else "a"]]).teams[0] == (normal,)


@settings(max_examples=300)
@given(st.text(PRINTABLE, min_size=1, max_size=3), st.characters(categories=("Cc", "Cf", "Co", "Cn", "Zl", "Zp")),
       st.text(PRINTABLE, min_size=1, max_size=3))
def test_a_character_of_the_refused_categories_anywhere_is_refused(head: str, odd: str, tail: str) -> None:
    with pytest.raises(MatchError, match=f"U\\+{ord(odd):04X}|player id"):
        check_player_id(f"x{head}{odd}{tail}x", "p")


def test_the_jsonl_record_of_a_normalized_match_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    podium.write_matches(Matches.from_matches([Match([[DECOMPOSED], ["b"]])]), path)
    assert COMPOSED in path.read_text(encoding="utf-8")
    assert podium.read_matches(path).players == [COMPOSED, "b"]
