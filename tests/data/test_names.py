"""The compact player index (podium.data.names), the fast long-form reader (podium.data.longform) and streaming a Parquet
history into a League: the same names, columns and ratings as the plain ways, to the bit."""

from __future__ import annotations

import random
import warnings
from pathlib import Path

import numpy as np
import pytest

import podium
from podium import League, Match, Matches, MatchError
from podium.data.names import NameIndex, _find_or_add, _hash, distinct, encode, enlarge
from podium.data.strings import Strings
from ..shared import SHARED

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")



def random_names(n: int, seed: int) -> list[str]:
    """Distinct names of every kind: empty, one byte, non-ASCII (2-4 UTF-8 bytes), NUL, a lone surrogate, long."""
    rng = random.Random(seed)
    alphabet = "ab\u00e9\u4e2d\U0001f600\x00 z"
    found = {"", "\x00", "a", "\ud800", "x" * 300}
    while len(found) < n:
        found.add("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8))))
    names = sorted(found)
    rng.shuffle(names)
    return names


def test_the_index_numbers_names_as_a_dict_does() -> None:
    names = random_names(20_000, seed=1)
    index, want = NameIndex(), {}  # type: ignore[var-annotated]
    rng = random.Random(2)
    for start in range(0, len(names), 2500):
        batch = names[start:start + 2500] + rng.sample(names[:start + 1], min(start + 1, 300))  # new and known
        rows = index.rows(batch)
        assert rows.tolist() == [want.setdefault(name, len(want)) for name in batch]
    assert len(index) == len(want)
    assert index.to_list() == list(want)
    assert list(index) == list(want)
    some = rng.sample(names, 500)
    assert index.names([want[n] for n in some]) == some
    assert all(index.get(n) == want[n] and n in index for n in some)
    assert index.get("not one of them") is None and "not one of them" not in index and 3 not in index  # type: ignore[operator]
    assert index.rows(["not one of them", names[0]], add=False).tolist() == [-1, want[names[0]]]
    assert len(index) == len(want)


def test_names_looked_up_from_arrow_buffers_without_str() -> None:
    names = [n for n in random_names(5000, seed=3) if n != "\ud800"]  # (which Arrow cannot hold)
    index = NameIndex()
    index.extend_new(names[:1000])  # a fresh league's first batch: appended, hashed on the first lookup
    reference = dict(zip(names[:1000], range(1000)))  # a dict numbering names in the order first seen
    for kind in (pa.string(), pa.large_string()):
        array = pa.array(names[::-1] + ["new one"], type=kind).slice(7, 3000)  # an offset into the buffers
        expected = [reference.setdefault(n, len(reference)) for n in array.to_pylist()]
        assert index.rows(Strings(array)).tolist() == expected
    assert index.to_list()[:1000] == names[:1000]


def test_names_whose_hash_tags_agree_are_told_apart_by_their_bytes() -> None:
    """Two names with the same 23-bit tag and the same home slot of a 16-slot table, so that the second probes
    through the first and only their bytes tell them apart."""
    tags: dict[tuple[int, int], str] = {}
    pair = None
    for i in range(2_000_000):
        name = f"n{i}"
        data = np.frombuffer(name.encode(), dtype=np.uint8)
        h = int(_hash(data, 0, len(data)))
        tag = (h >> 41, h & 15)
        if tag in tags:
            pair = (tags[tag], name)
            break
        tags[tag] = name
    assert pair is not None
    names = [pair[0], "x", "y", pair[1], pair[0], pair[1], "x"]
    data, offsets = encode(names)
    table = np.full(16, -1, dtype=np.int64)
    store, store_offsets = np.zeros(64, np.uint8), np.zeros(16, np.int64)
    out = np.empty(len(names), np.int64)
    done, n = _find_or_add(table, store, store_offsets, 0, 8, data, offsets, 0, len(names), True, out)
    assert (done, n) == (len(names), 4)
    assert out.tolist() == [0, 1, 2, 3, 0, 3, 1]
    new_data, new_offsets = encode(["a new name"])
    done, n = _find_or_add(table, store, store_offsets, 4, 4, new_data, new_offsets, 0, 1, True, out)  # at its limit
    assert (done, n) == (0, 4)  # nothing added: the caller grows the table and goes on
    done, n = _find_or_add(table, store, store_offsets, 4, 8, new_data, new_offsets, 0, 1, True, out)
    assert (done, n) == (1, 5) and out[0] == 4


def test_a_full_table_grows_and_truncate_forgets_the_latest() -> None:
    names = random_names(3000, seed=4)
    index = NameIndex()
    index.rows(names[:2000])
    index.truncate(1500)
    assert len(index) == 1500 and index.to_list() == names[:1500]
    assert index.get(names[1700]) is None and index.get(names[1400]) == 1400
    assert index.rows(names[1400:3000]).tolist() == list(range(1400, 3000))
    fresh = NameIndex()
    fresh.extend_new(names[:100])
    fresh.truncate(50)  # unhashed names
    assert fresh.rows(names[:120]).tolist() == list(range(120))


def test_distinct_numbers_as_arrow_dictionary_encode() -> None:
    rng = np.random.default_rng(5)
    names = [n for n in random_names(3000, seed=5) if n != "\ud800"]
    picks = [names[i] for i in rng.integers(0, len(names), 20_000)]
    for kind in (pa.string(), pa.large_string()):
        array = pa.array(picks, type=kind).slice(11)
        codes, first = distinct(*Strings(array).buffers())
        encoded = array.dictionary_encode()
        assert codes.tolist() == encoded.indices.to_pylist()
        assert array.take(pa.array(first)).to_pylist() == encoded.dictionary.to_pylist()


def test_strings_is_a_read_only_list_of_str() -> None:
    values = ["a", "b\u00e9", "", "c"]
    s = Strings(pa.array(values))
    assert s == values and list(s) == values and len(s) == 4 and s[1] == values[1] and s[-1] == "c"
    assert s[1:3] == values[1:3] and isinstance(s[1:3], Strings) and s[np.int64(2)] == ""
    assert "c" in s and s.index("c") == 3 and s.take([3, 0]) == ["c", "a"]
    with pytest.raises(IndexError):
        s[4]


def test_enlarge_keeps_what_was_there() -> None:
    class Holder:
        pass

    h = Holder()
    h.a = np.arange(5.0)  # type: ignore[attr-defined]
    view = h.a[:2]  # type: ignore[attr-defined]  (referred to: grown by a copy)
    enlarge(h, "a", 8, -1.0)
    assert h.a.tolist() == [0, 1, 2, 3, 4, -1, -1, -1] and view.tolist() == [0, 1]  # type: ignore[attr-defined]
    h.b = np.zeros((3, 2))  # type: ignore[attr-defined]
    enlarge(h, "b", 5, np.array([7.0, 8.0]))
    assert h.b.tolist() == [[0, 0]] * 3 + [[7, 8]] * 2  # type: ignore[attr-defined]


# -- the fast reader against the general one ---------------------------------------------------------------

def histories() -> list[Matches]:
    sims = [podium.simulate(300, 2000, seed=1).matches,
            podium.simulate(200, 1500, teams=4, team_size=2, draw_probability=0.1, seed=2).matches,
            Matches.from_matches([podium.Match([[f"p{(3 * i) % 40}"], [f"p{(3 * i + 1) % 40}", f"p{(3 * i + 2) % 40}"],
                                                 [f"q{i % 7}"]], [1, 0, None] if i % 4 else None,
                                                time=f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}" if i % 9 else None,
                                                id=f"g{i}")
                                  for i in range(300)])]
    weighted = sims[0][:300]
    weighted = Matches(weighted.match_start, weighted.team_start, weighted.team_rank, weighted.player,
                       np.where(np.arange(len(weighted.weight)) % 3 == 0, 0.5, 1.0), weighted.time, weighted.players,
                       weighted.ids)
    return [*sims, weighted]


@pytest.mark.parametrize("which", range(4))
def test_the_fast_reader_reads_what_the_general_one_reads(which: int) -> None:
    from podium.data import longform
    from podium.data.tables import _from_arrow

    matches = histories()[which]
    table = matches.to_arrow()
    fast = longform.fast(table, "t")
    assert fast is not None
    general = _from_arrow(table, "t", None)
    for field in ("match_start", "team_start", "team_rank", "player", "weight", "time"):
        np.testing.assert_array_equal(getattr(fast, field), getattr(general, field))
    assert list(fast.players) == list(general.players) and list(fast.ids) == list(general.ids)
    assert fast.time_is_date == general.time_is_date
    lazy = longform.fast(table, "t", lazy=True)
    assert lazy is not None and isinstance(lazy.players, Strings) and lazy.players == list(general.players)
    index = NameIndex()
    index.rows(list(general.players)[::7])  # some known already
    before = index.to_list()
    with_index, checked, lookup = longform.complete(table, longform.prepare(table, "t"), "t", None, lazy=True,
                                                    index=index)
    assert checked and with_index.players == list(general.players)
    np.testing.assert_array_equal(with_index.player, general.player)
    assert lookup is not None and lookup.known == len(index) > len(before)
    assert index.names(lookup.rows) == list(general.players) and index.to_list()[:len(before)] == before
    # the general reader (a table the fast way declines) looks the players up the same way
    again = NameIndex()
    read, checked, lookup = longform.complete(table, None, "t", None, lazy=True, index=again)
    assert not checked and lookup is not None and again.names(lookup.rows) == list(general.players)


def test_the_fast_reader_leaves_a_bad_table_to_the_general_one() -> None:
    from podium.data import longform
    from podium.data.tables import _from_arrow

    table = histories()[0].to_arrow()
    player = table.column("player").to_pylist()
    player[5] = player[4]  # a player twice in a match
    bad = table.set_column(table.column_names.index("player"), "player", pa.array(player))
    index = NameIndex()
    index.rows(["someone"])
    with pytest.raises(MatchError, match="appears more than once"):  # the general reader names the problem
        longform.complete(bad, longform.prepare(bad, "t"), "t", None, lazy=True, index=index)
    assert index.to_list() == ["someone"]  # what the fast way added, forgotten
    with pytest.raises(MatchError, match="appears more than once"):
        Matches.from_arrow(bad)
    def small(ids: list[str]) -> object:
        return pa.table({"match": ids, "team": [0, 1] * (len(ids) // 2), "player": list("abcdef")[:len(ids)]})

    again = small(["m1", "m1", "m2", "m2", "m1", "m1"])  # an id back for a later match: three matches, fast too
    fast, general = longform.fast(again, "t"), _from_arrow(again, "t", None)
    assert fast is not None and list(fast.ids) == list(general.ids) == ["m1", "m2", "m1"]
    for field in ("match_start", "team_start", "team_rank", "player"):
        np.testing.assert_array_equal(getattr(fast, field), getattr(general, field))
    assert list(fast.players) == list(general.players)
    huge = pa.table({"match": ["m", "m"], "team": pa.array([2 ** 63 + 5, 1], pa.uint64()), "player": ["a", "b"]})
    assert longform.fast(huge, "t") is None  # team ids past int64: the general reader's, not a crash
    assert list(Matches.from_arrow(huge)) == [Match([["a"], ["b"]], id="m")]
    unsorted = longform.fast(small(["m9", "m9", "m10", "m10", "a", "a"]), "t")  # distinct, though not in order
    assert unsorted is not None and list(unsorted.ids) == ["m9", "m10", "a"]
    assert longform.fast(small(["m1", "m1", "m1", "m1"]), "t") is None  # a team back after another


# -- streaming into a League ------------------------------------------------------------------------------

def shared_histories() -> list[Path]:
    if not SHARED.is_dir():
        return []
    return sorted(SHARED.glob("*/matches.jsonl.gz"))


@pytest.mark.parametrize("path", shared_histories() or [None], ids=lambda p: p.parent.name if p else "absent")
def test_streaming_a_shared_history_from_parquet_rates_as_in_memory(tmp_path: Path, path: Path | None) -> None:
    if path is None:
        pytest.skip("../shared/data is absent")
    with warnings.catch_warnings():  # (some of the shared files have malformed records)
        warnings.simplefilter("ignore")
        matches = podium.read_matches(path, errors="skip")
    parquet = tmp_path / "h.parquet"
    podium.write_matches(matches, parquet)
    model = podium.Elo() if max(np.diff(matches.match_start)) == 2 and len(matches.player) == len(matches.team_rank) \
        else podium.TrueSkill()
    whole = League(model, keep_history=False).record_many(matches)
    streamed = League(model, keep_history=False).record_many(podium.scan_matches(parquet, batch_size=777))
    assert streamed.players == whole.players and streamed.n_matches == whole.n_matches
    want, got = whole.states(), streamed.states()
    assert [(s.mu, s.sigma, s.games) for s in got.values()] == [(s.mu, s.sigma, s.games) for s in want.values()]
    assert streamed.leaderboard(top=10) == whole.leaderboard(top=10) == whole.leaderboard()[:10]
    assert streamed.leaderboard(min_games=3) == whole.leaderboard(min_games=3)


def test_streaming_a_simulated_parquet_history_equals_the_whole(tmp_path: Path) -> None:
    matches = podium.simulate(5000, 20_000, seed=7).matches
    parquet = tmp_path / "h.parquet"
    podium.write_matches(matches, parquet)
    for batch in (1, 999, 50_000):
        whole = League(podium.Elo(), keep_history=True).record_many(matches)
        streamed = League(podium.Elo(), keep_history=True).record_many(podium.scan_matches(parquet, batch_size=batch))
        assert sorted(streamed.players) == sorted(whole.players)  # (simulate lists its players by number)
        assert streamed.ratings == whole.ratings
        np.testing.assert_array_equal(streamed.log_likelihoods, whole.log_likelihoods)
        who = matches.players[17]
        np.testing.assert_array_equal(streamed.trajectory(who).mu, whole.trajectory(who).mu)
        if batch == 999:
            for x, y in zip(streamed.slots(4000), whole.slots(4000)):
                assert list(x) == list(y)


def test_a_bad_batch_stops_the_stream_after_the_batches_before_it(tmp_path: Path) -> None:
    table = podium.simulate(400, 3000, seed=8).matches.to_arrow()
    matches = Matches.from_arrow(table)  # its players in order of first appearance, as a stream adds them
    player = table.column("player").to_pylist()
    row = 2 * 2100  # the first row of match 2100: its two players the same
    player[row + 1] = player[row]
    parquet = tmp_path / "bad.parquet"
    pq.write_table(table.set_column(table.column_names.index("player"), "player", pa.array(player)), parquet)
    league = League(podium.Elo(), keep_history=False)
    with pytest.raises(MatchError, match="appears more than once"):
        league.record_many(podium.scan_matches(parquet, batch_size=500))
    assert league.n_matches == 2000
    reference = League(podium.Elo(), keep_history=False).record_many(matches[:2000])
    assert league.players == reference.players and league.ratings == reference.ratings
    league.record_many(matches[2000:2100])  # the league goes on, its index whole
    assert league.players == reference.record_many(matches[2000:2100]).players
    assert all(league.rating(p) == reference.rating(p) for p in reference.players)
    with pytest.warns(UserWarning, match="skipped 1 malformed"):
        skipped = League(podium.Elo(), keep_history=False).record_many(
            podium.scan_matches(parquet, batch_size=500, errors="skip"))
    assert skipped.n_matches == len(matches) - 1


def test_leaderboard_top_reads_only_the_names_it_shows() -> None:
    league = League(podium.Elo(), keep_history=False)
    league.record_many(podium.simulate(3000, 9000, seed=9).matches)
    for top in (0, 1, 5, 2999, 3000, 5000):
        assert league.leaderboard(top=top) == league.leaderboard()[:top]
    tied = League(podium.Elo(), {f"p{i}": podium.Rating(1000.0) for i in (5, 3, 9, 1, 7)})
    assert [r.player for r in tied.leaderboard(top=3)] == ["p1", "p3", "p5"]


def test_a_batch_the_model_refuses_leaves_out_the_players_read_ahead(tmp_path: Path) -> None:
    """The reader maps a batch's players before the League checks it: when the check fails, the players of the
    batches not replayed are forgotten, as if the League had read one batch at a time."""
    games = list(Matches.from_arrow(podium.simulate(400, 3000, seed=8).matches.to_arrow()))
    games[2100] = podium.Match([["new 1"], ["new 2"], ["new 3"]], id=games[2100].id)  # three teams: not for Elo
    parquet = tmp_path / "three.parquet"
    podium.write_matches(Matches.from_matches(games), parquet)
    league = League(podium.Elo(), keep_history=False)
    with pytest.raises(ValueError):
        league.record_many(podium.scan_matches(parquet, batch_size=500))
    reference = League(podium.Elo(), keep_history=False).record_many(Matches.from_matches(games[:2000]))
    assert league.n_matches == 2000 and league.players == reference.players and "new 1" not in league
    league.record(podium.Match([["new 1"], ["someone"]]))
    assert league.players == reference.players + ["new 1", "someone"] and league.games("new 1") == 1


def test_a_tuple_of_names_is_names() -> None:
    index = NameIndex()
    index.extend_new(("c", "d"))
    assert index.rows(("a", "c", "x", "y")).tolist() == [2, 0, 3, 4] and index.to_list() == ["c", "d", "a", "x", "y"]


def test_a_fresh_index_keeps_its_first_names_as_given_until_they_are_read() -> None:
    index = NameIndex()
    names = ["b", "é", "a"]
    index.extend_new(names)
    names.append("later")  # the index copied the list
    assert len(index) == 3 and index.to_list() == ["b", "é", "a"] and "later" not in index
    assert index.get("é") == 1
    assert index.rows(["a", "new"]).tolist() == [2, 3]
    assert index.names([3, 0]) == ["new", "b"]
    index.truncate(1)
    assert index.to_list() == ["b"] and index.get("a") is None
