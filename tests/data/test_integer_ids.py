"""Integer player ids (a column of numeric account ids): the ids are the integers' decimal digits, and a League's
index maps the integers themselves (podium.data.decimal_ids: a direct array while they are dense, then a hash table),
which must agree with the names added as strings, both ways, through truncation and the move from one map to the
other.  The reference is a dict numbering names in the order first seen, and the same history with its ids
written as strings."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import podium
from podium import League, Matches
from podium.data import decimal_ids
from podium.data.names import NameIndex
from podium.data.strings import Strings

pa = pytest.importorskip("pyarrow")


# -- the index -------------------------------------------------------------------------------------------------
TEXT = ["ann", "0", "7", "12", "007", "-3", "-0", "-03", "+4", " 5", "1e3", "123456789012345678901", "99999999999", "12x",
        "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809"]
EDGES = [-2 ** 63, 2 ** 63 - 1, -3, 99_999_999_999, 10 ** 18, 1234567890123456789]
INTEGER_TYPES = [pa.int64(), pa.int32(), pa.uint16(), pa.uint64(), pa.int8()]

ops = st.one_of(
    st.tuples(st.just("text"), st.lists(st.sampled_from(TEXT) | st.integers(0, 40).map(str), max_size=12)),
    st.tuples(st.just("ints"), st.lists(st.integers(0, 40), max_size=12), st.sampled_from(INTEGER_TYPES)),
    st.tuples(st.just("ints"), st.lists(st.integers(-5, 40) | st.sampled_from(EDGES), max_size=6),
              st.just(pa.int64())),  # negatives, and ids as far apart as int64 goes
    st.tuples(st.just("probe"), st.lists(st.integers(0, 60), max_size=6)),
    st.tuples(st.just("truncate"), st.integers(0, 60)),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(ops, max_size=14), st.booleans())
def test_integers_and_their_digits_are_one_player(script: list[tuple], fresh_list: bool) -> None:
    index, want = NameIndex(), {}  # type: ignore[var-annotated]
    if fresh_list:  # a fresh League's first names: appended unhashed
        index.extend_new(["5", "ann", "05"])
        want = {"5": 0, "ann": 1, "05": 2}
    for op in script:
        if op[0] == "text":
            assert index.rows(op[1]).tolist() == [want.setdefault(x, len(want)) for x in op[1]]
        elif op[0] == "ints":
            values = [v for v in op[1] if v >= 0 or op[2] in (pa.int64(), pa.int32(), pa.int8())]
            values = [v for v in values if v < 2 ** (op[2].bit_width - (0 if "uint" in str(op[2]) else 1))]
            held = Strings(pa.array(values, type=op[2]))
            assert held.to_list() == [str(v) for v in values]
            assert index.rows(held).tolist() == [want.setdefault(str(v), len(want)) for v in values]
        elif op[0] == "probe":  # without adding, by integer and by text
            held = Strings(pa.array(op[1], type=pa.int64()))
            expect = [want.get(str(v), -1) for v in op[1]]
            assert index.rows(held, add=False).tolist() == expect
            assert [index.get(str(v)) for v in op[1]] == [None if e < 0 else e for e in expect]
        else:
            n = min(op[1], len(want))
            index.truncate(n)
            want = {k: r for k, r in want.items() if r < n}
        assert len(index) == len(want)
    assert index.to_list() == list(want)


def test_dense_ids_then_a_sparse_one_move_every_id_to_the_hash_table() -> None:
    index = NameIndex()
    assert index.rows(Strings(pa.array([5, 2, 5, 9]))).tolist() == [0, 1, 0, 2] and index._row_of is not None
    assert index.rows(["7", "x"]).tolist() == [3, 4]  # by text: entered in the direct array at the next lookup
    assert index.rows(Strings(pa.array([7, 2 ** 40, 9]))).tolist() == [3, 5, 2]
    assert index._row_of is None and index._int_count == 5  # 5, 2, 9, 7 and 2**40 ("x" is no integer)
    index.truncate(4)
    assert index.rows(Strings(pa.array([2 ** 40, 7, 5])), add=False).tolist() == [-1, 3, 0]


def test_sparse_64_bit_ids_and_their_digits_are_one_player() -> None:
    steam = [76561197960265728 + k * 7919 for k in range(5)]  # ids far from 0 and from each other
    index = NameIndex()
    assert index.rows(Strings(pa.array(steam[:3], type=pa.uint64()))).tolist() == [0, 1, 2]
    assert index._row_of is None  # (ids this sparse: the hash table)
    assert index.rows([str(steam[1]), str(steam[4]), "ann"]).tolist() == [1, 3, 4]  # by text: the same players
    assert index.rows(Strings(pa.array([steam[4], steam[3], -1, steam[0]]))).tolist() == [3, 5, 6, 0]
    index.truncate(5)  # forgets steam[3] and -1 (rows 5, 6) from both tables
    assert index.rows(Strings(pa.array([-1, steam[3]])), add=False).tolist() == [-1, -1]
    assert index.get(str(steam[3])) is None and index.to_list()[3:] == [str(steam[4]), "ann"]
    big = Strings(pa.array([2 ** 63 + 5], type=pa.uint64()))  # past int64: by its digits
    assert big.integers is None and index.rows(big).tolist() == [5] and index.get(str(2 ** 63 + 5)) == 5


def test_digits_and_parse_are_inverse() -> None:
    values = np.array([0, 7, 10, 99, 100, 123456789, 10 ** 17, 10 ** 18 - 1, 2 ** 63 - 1, -1, -10, -2 ** 63],
                      dtype=np.int64)
    data, offsets = decimal_ids.digits(values)
    assert [data[a:b].tobytes().decode() for a, b in zip(offsets[:-1], offsets[1:])] == [str(v) for v in values]
    found, ok = decimal_ids.parse(data, offsets, 0, len(values))
    assert found.tolist() == values.tolist() and ok.all()
    bad = ["", "01", "-0", "-", "+1", "1 ", "9" * 19, str(2 ** 63), str(-2 ** 63 - 1), "1" * 20, "x"]
    encoded = [s.encode() for s in bad]
    off = np.r_[0, np.cumsum([len(e) for e in encoded])].astype(np.int64)
    assert not decimal_ids.parse(np.frombuffer(b"".join(encoded), np.uint8), off, 0, len(bad))[1].any()


# -- tables and streaming --------------------------------------------------------------------------------------
def numbered(table: object, kind: object = None) -> object:
    """``table`` with its player ids ``p<k>`` as the integers ``k`` (as ``kind``, int64 by default)."""
    column = table.column("player")  # type: ignore[attr-defined]
    numbers = pa.array([int(p[1:]) for p in column.to_pylist()], type=kind or pa.int64())
    return table.set_column(table.column_names.index("player"), "player", numbers)  # type: ignore[attr-defined]


def same(a: Matches, b: Matches) -> bool:
    """The same matches (ids, teams, ranks, weights, times) and the same player list."""
    return list(a) == list(b) and list(a.players) == list(b.players) and len(a) > 0


def simulated(n_players: int, n_matches: int, seed: int) -> object:
    matches = podium.simulate(n_players, n_matches, seed=seed).matches  # players "p0", "p1", ...
    return Matches.from_arrow(matches.to_arrow()).to_arrow()


@pytest.mark.parametrize("kind", [pa.int64(), pa.uint32(), pa.int16()])
def test_an_integer_player_column_reads_as_its_digits(kind: object) -> None:
    table = simulated(300, 500, seed=2)
    as_text = table.set_column(table.column_names.index("player"), "player",
                               pa.array([str(int(p[1:])) for p in table.column("player").to_pylist()]))
    got = Matches.from_arrow(numbered(table, kind))
    assert same(got, Matches.from_arrow(as_text))
    # The general reader (a team column of strings is not the fast path's shape) reads the same.
    general = numbered(table, kind).set_column(table.column_names.index("team"), "team",
                                                pa.array([str(t) for t in table.column("team").to_pylist()]))
    assert same(Matches.from_arrow(general), got)


def test_streaming_integer_ids_rates_as_their_digits(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    table = simulated(3000, 4000, seed=5)
    as_text, as_int = tmp_path / "text.parquet", tmp_path / "int.parquet"
    pq.write_table(table.set_column(table.column_names.index("player"), "player",
                                    pa.array([str(int(p[1:])) for p in table.column("player").to_pylist()])), as_text)
    pq.write_table(numbered(table), as_int)
    for batch in (1, 777, 10_000):
        # A league that knew two of the players by text before: the integers find them.
        known = {"17": podium.Rating(1700.0), "3": podium.Rating(1400.0)}
        text = League(podium.Elo(), known, keep_history=True).record_many(podium.scan_matches(as_text, batch_size=batch))
        ints = League(podium.Elo(), known, keep_history=True).record_many(podium.scan_matches(as_int, batch_size=batch))
        assert ints.players == text.players and ints.n_matches == text.n_matches == 4000
        assert ints.ratings == text.ratings
        np.testing.assert_array_equal(ints.log_likelihoods, text.log_likelihoods)
        assert ints.leaderboard(top=5) == text.leaderboard(top=5)
        assert ints.games("17") == text.games("17") > 0
        assert ints._players._row_of is not None and len(ints._players._row_of) > 0  # (the direct array: dense ids)
        assert text._players._row_of is not None and len(text._players._row_of) == 0
        # The components, joined on a thread of their own while streaming, as a league given the whole history.
        whole = League(podium.Elo(), known).record_many(Matches.from_arrow(numbered(table)))
        mine, theirs = ints.components(), whole.components()
        assert mine.sizes.tolist() == theirs.sizes.tolist()
        assert {p: mine.component_of(p) for p in whole.players} == {p: theirs.component_of(p) for p in whole.players}


def test_a_refused_batch_of_integer_ids_leaves_out_the_players_read_ahead(tmp_path: Path) -> None:
    """As with ids of text (tests/data/test_names.py): the players the reader mapped for batches not replayed are
    forgotten by the map too, so that they come back as new players at the end."""
    import pyarrow.parquet as pq

    table = numbered(simulated(20_000, 3000, seed=8))
    games = list(Matches.from_arrow(table))  # ids "0", "1", ...
    games[2100] = podium.Match([["9001"], ["9002"], ["9003"]], id=games[2100].id)  # three teams: not for Elo
    rows = Matches.from_matches(games).to_arrow()
    parquet = tmp_path / "three.parquet"
    pq.write_table(numbered(rows.set_column(rows.column_names.index("player"), "player",
                                            pa.array(["p" + p for p in rows.column("player").to_pylist()]))), parquet)
    league = League(podium.Elo(), keep_history=False)
    with pytest.raises(ValueError):
        league.record_many(podium.scan_matches(parquet, batch_size=500))
    reference = League(podium.Elo(), keep_history=False).record_many(Matches.from_matches(games[:2000]))
    assert league.n_matches == 2000 and league.players == reference.players and "9001" not in league
    late = [p for p in Matches.from_matches(games[2000:2100]).players if p not in reference]
    assert late and all(p not in league for p in late)
    league.record(podium.Match([["9001"], [late[0]]]))
    assert league.players == reference.players + ["9001", late[0]] and league.games(late[0]) == 1


@pytest.mark.parametrize("kind", [pa.int64(), pa.uint64(), pa.int32()])
def test_an_integer_match_column_reads_as_its_digits(kind: object) -> None:
    table = simulated(200, 400, seed=4)
    numbers = [int(m[1:]) % 150 for m in table.column("match").to_pylist()]  # ids come back for later matches
    if kind == pa.uint64():
        numbers = [2 ** 63 + n if n % 2 else n for n in numbers]  # some past int64: read as their digits
    runs = [n for i, n in enumerate(numbers) if i == 0 or numbers[i - 1] != n]
    assert len(runs) == 400 and len(set(runs)) < 400  # (a run a match, ids reused)
    position = table.column_names.index("match")
    got = Matches.from_arrow(table.set_column(position, "match", pa.array(numbers, type=kind)))
    want = Matches.from_arrow(table.set_column(position, "match", pa.array([str(n) for n in numbers])))
    assert same(got, want) and [m.id for m in got] == [str(n) for n in runs]
    if kind == pa.int64():  # read by the fast way, which holds the ids as integers
        from podium.data import longform

        assert longform.fast(table.set_column(position, "match", pa.array(numbers, type=kind)), "t") is not None
