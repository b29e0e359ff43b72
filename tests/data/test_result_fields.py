"""What a result says beyond the order (issue 31) in the long form: ``score``, ``higher_is_better``, ``advantage``
and ``match_weight`` go through every reader and writer (JSONL, CSV, Parquet, Arrow, pandas, polars, the scanner)
and come back exactly; bad values are named; a history without them is written byte for byte as before."""

from __future__ import annotations

import csv
import io
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import podium
from podium import Match, MatchError, Matches
from podium.data.match import MAX_VALUE

from ..strategies import a_match, player_ids

ARRAYS = ("match_start", "team_start", "team_rank", "player", "weight", "time")
RESULTS = ("score", "higher_is_better", "advantage", "match_weight")
FIELDS = ("scores", "higher_is_better", "advantage", "weight")
OLD_HEADER = "match,team,player,rank,weight,time"

# ids the CSV long form keeps as they are (non-empty, no surrounding whitespace, no carriage return)
CSV_ID = player_ids(5)
SCORE = st.none() | st.integers(-1000, 1000) | st.floats(-MAX_VALUE, MAX_VALUE)
GRADED = st.integers(-3, 3) | st.floats(-1e6, 1e6)  # a graded advantage (booleans: home or not)
MATCH_WEIGHT = st.sampled_from([1.0, 2.0, 0.5]) | st.floats(1e-6, 1e6)


def tables_or_skip() -> tuple[object, object, object]:
    return pytest.importorskip("pyarrow"), pytest.importorskip("pandas"), pytest.importorskip("polars")


def arrow_or_skip() -> object:
    return pytest.importorskip("pyarrow")


# -- histories -------------------------------------------------------------------------------------------------

@st.composite
def a_result(draw, base: Match, fields: frozenset[str], id_: str) -> Match:
    """``base`` (teams, partial play, time) with what a result says drawn from ``fields``."""
    n = len(base.teams)
    keywords: dict[str, object] = {}
    ranks: list[int | None] | None = list(base.ranks)
    if "scores" in fields and draw(st.booleans()):
        scores = draw(st.lists(SCORE, min_size=n, max_size=n))
        keywords["scores"] = scores
        lower = "higher_is_better" in fields and any(s is not None for s in scores) and draw(st.booleans())
        if lower:
            keywords["higher_is_better"] = False
        if draw(st.booleans()):
            ranks = None  # from the scores
        else:  # ranks that agree with the scores: equal scores ranked apart or not (a shoot-out), non-finishers
            known = sorted({float(s) for s in scores if s is not None}, reverse=not lower)
            place = {s: 2 * r for r, s in enumerate(known)}
            ranks = []
            for s in scores:
                if s is None:  # (a team without a score may rank anywhere)
                    ranks.append(draw(st.none() | st.integers(0, 2 * n)))
                else:
                    ranks.append(draw(st.none() | st.integers(0, 1).map(lambda b, s=s: place[float(s)] + b)))
    if "advantage" in fields and draw(st.booleans()):
        keywords["advantage"] = draw(st.lists(st.booleans(), min_size=n, max_size=n)
                                     | st.lists(GRADED, min_size=n, max_size=n))
    if "weight" in fields and draw(st.booleans()):
        keywords["weight"] = draw(MATCH_WEIGHT)
    return Match(base.teams, ranks, base.weights, time=base.time, id=id_, **keywords)


@st.composite
def a_history(draw, fields: frozenset[str] = frozenset(FIELDS), max_size: int = 8) -> list[Match]:
    kind = draw(st.sampled_from(["none", "number", "date", "datetime"]))
    pool = draw(st.lists(CSV_ID, min_size=6, max_size=10, unique=True))
    bases = draw(st.lists(a_match(CSV_ID, kind, pool), max_size=max_size))
    ids = draw(st.lists(CSV_ID, min_size=len(bases), max_size=len(bases), unique=True))
    return [draw(a_result(base, fields, id_)) for base, id_ in zip(bases, ids)]


def assert_same(back: Matches, original: Matches, how: str = "") -> None:
    """The same history: the same matches, arrays, optional columns (None where the original has none)."""
    assert list(back) == list(original), how
    for name in ARRAYS + RESULTS:
        x, y = getattr(back, name), getattr(original, name)
        if y is None:
            assert x is None, (how, name)
            continue
        assert x is not None and x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True), (how, name)
    assert list(back.players) == list(original.players), how
    assert list(back.ids) == list(original.ids), how
    assert back.time_is_date == original.time_is_date, how


def every_format(matches: Matches, folder: Path) -> dict[str, Matches]:
    """The history written and read back each way there is (the table ways where their libraries are)."""
    ways = {}
    for name in ("h.jsonl", "h.jsonl.gz", "h.csv", "h.csv.gz"):
        podium.write_matches(matches, folder / name)
        ways[name] = podium.read_matches(folder / name)
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return ways
    podium.write_matches(matches, folder / "h.parquet")
    ways["h.parquet"] = podium.read_matches(folder / "h.parquet")
    ways["arrow"] = Matches.from_arrow(matches.to_arrow())
    try:
        import pandas  # noqa: F401
        ways["pandas"] = Matches.from_pandas(matches.to_pandas())
    except ImportError:
        pass
    try:
        import polars  # noqa: F401
        ways["polars"] = Matches.from_polars(matches.to_polars())
    except ImportError:
        pass
    return ways


def examples() -> list[Match]:
    return [
        Match([["ann"], ["bob", "cy"]], scores=[3, 1], advantage=[True, False], time="2024-03-01", id="g1"),
        Match([["bob"], ["ann"], ["dee"]], scores=[61.5, None, 58.25], higher_is_better=False, weight=2.5,
              time="2024-03-02", id="g2"),
        Match([["cy"], ["dee"]], ranks=[0, 0], time="2024-03-03", id="g3"),
        Match([["ann"], ["dee"]], ranks=[1, 0], scores=[2, 2], advantage=[0.25, -0.5], weights=[[0.5], [1.0]],
              id="g4"),  # a draw on the scores, decided (a shoot-out)
    ]


# -- round trips -----------------------------------------------------------------------------------------------

CASES = {"none": frozenset(), **{f: frozenset({f}) for f in FIELDS}, "all": frozenset(FIELDS)}


@pytest.mark.parametrize("fields", list(CASES.values()), ids=list(CASES))
@settings(max_examples=40)
@given(data=st.data())
def test_every_format_round_trips_exactly(fields: frozenset[str], data: st.DataObject) -> None:
    history = data.draw(a_history(fields))
    original = Matches.from_matches(history)  # (times in their canonical form: what every format writes)
    said = lambda m: (m.teams, m.ranks, m.weights, m.id, m.scores, m.higher_is_better, m.advantage, m.weight)  # noqa: E731
    assert [said(m) for m in original] == [said(m) for m in history]
    if "scores" not in fields:
        assert original.score is None and original.higher_is_better is None
    if "advantage" not in fields:
        assert original.advantage is None
    if "weight" not in fields:
        assert original.match_weight is None
    with tempfile.TemporaryDirectory() as tmp:
        for how, back in every_format(original, Path(tmp)).items():
            assert_same(back, original, how)
        if not fields:  # the header of before
            assert (Path(tmp) / "h.csv").read_bytes().decode("utf-8").split("\r\n")[0] == OLD_HEADER


def test_the_examples_round_trip_and_carry_every_column(tmp_path: Path) -> None:
    original = Matches.from_matches(examples())
    assert all(getattr(original, name) is not None for name in RESULTS)
    ways = every_format(original, tmp_path)
    assert len(ways) >= 4
    for how, back in ways.items():
        assert_same(back, original, how)
    text = (tmp_path / "h.csv").read_text(encoding="utf-8").splitlines()
    assert text[0] == OLD_HEADER + ",score,higher_is_better,advantage,match_weight"
    assert text[1:4] == ["g1,0,ann,0,1.0,2024-03-01,3,true,1,1", "g1,1,bob,1,1.0,2024-03-01,1,true,0,1",
                         "g1,1,cy,1,1.0,2024-03-01,1,true,0,1"]
    assert text[5] == "g2,1,ann,,1.0,2024-03-02,,false,0,2.5"  # no score, did not finish


def test_only_the_columns_a_history_has_are_written(tmp_path: Path) -> None:
    for keywords, column in (({"scores": [1, 0]}, "score"), ({"advantage": [1, 0]}, "advantage"),
                             ({"weight": 3}, "match_weight")):
        path = tmp_path / f"{column}.csv"
        podium.write_matches([Match([["a"], ["b"]], id="x", **keywords)], path)
        assert path.read_text(encoding="utf-8").splitlines()[0] == f"{OLD_HEADER},{column}"
    path = tmp_path / "both.csv"
    podium.write_matches([Match([["a"], ["b"]], id="x", scores=[1, 2], higher_is_better=False)], path)
    assert path.read_text(encoding="utf-8").splitlines()[0] == f"{OLD_HEADER},score,higher_is_better"
    pa, _, _ = tables_or_skip()
    table = Matches.from_matches([Match([["a"], ["b"]], id="x", weight=0.5)]).to_arrow()
    assert table.column_names == ["match", "team", "player", "rank", "weight", "time", "match_weight"]
    table = Matches.from_matches(examples()).to_arrow()
    assert table.schema.field("score").type == pa.float64() and table.schema.field("higher_is_better").type == pa.bool_()
    assert table.column("score").null_count == 3  # ann in g2 and g3's two teams have no score: NaN -> null
    frame = Matches.from_matches(examples()).to_pandas()
    assert str(frame["higher_is_better"].dtype) == "bool" and str(frame["score"].dtype) == "float64"


# -- the scanner ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".jsonl.gz"])
@settings(max_examples=25)
@given(history=a_history(max_size=12), batch=st.integers(1, 5))
def test_scanned_batches_are_the_history(suffix: str, history: list[Match], batch: int) -> None:
    if suffix == ".parquet":
        arrow_or_skip()
    original = Matches.from_matches(history)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"h{suffix}"
        podium.write_matches(original, path)
        batches = list(podium.scan_matches(path, batch_size=batch))
    assert sum(len(b) for b in batches) == len(original)
    start = 0
    for part in batches:  # each batch carries the columns its matches need
        expected = original[start:start + len(part)]
        assert list(part) == list(expected)
        if expected.score is not None and not np.all(np.isnan(expected.score)):
            assert part.score is not None
        start += len(part)
    if batches:
        assert_same(Matches.concat(batches), original, suffix)


def test_a_large_parquet_history_scans_with_its_columns(tmp_path: Path) -> None:
    arrow_or_skip()
    original = scored_simulation(3000)
    podium.write_matches(original, tmp_path / "h.parquet")
    batches = list(podium.scan_matches(tmp_path / "h.parquet", batch_size=700))
    assert [len(b) for b in batches] == [700] * 4 + [200]
    assert all(b.score is not None and b.advantage is not None and b.match_weight is not None for b in batches)
    assert_same(Matches.concat(batches), original)
    assert_same(podium.read_matches(tmp_path / "h.parquet"), original)


def scored_simulation(n: int) -> Matches:
    """A simulated history of three teams of two, given scores that agree with its ranks, advantages and weights."""
    sim = podium.simulate(80, n, teams=3, team_size=2, draw_probability=0.2, seed=11).matches
    rng = np.random.default_rng(5)
    matches = []
    for j, m in enumerate(sim):
        scores = [None if r is None or (j % 7 == 0 and r > 0) else float(10 - 3 * r) for r in m.ranks]
        lower = j % 5 == 0 and any(s is not None for s in scores)
        if lower:
            scores = [None if s is None else -s for s in scores]
        matches.append(Match(m.teams, m.ranks, m.weights, time=m.time, id=m.id, scores=scores,
                             higher_is_better=not lower, advantage=[1, 0, 0] if j % 2 else None,
                             weight=float(rng.choice([1.0, 0.5, 2.0]))))
    return Matches.from_matches(matches)


# -- the fast reader -------------------------------------------------------------------------------------------

def test_the_fast_reader_takes_the_new_columns_and_reads_what_the_general_one_reads() -> None:
    pa = arrow_or_skip()
    from podium.data import longform
    from podium.data.tables import _from_arrow

    for matches in (scored_simulation(1500), Matches.from_matches(examples()[:3])):
        table = matches.to_arrow()
        fast = longform.fast(table, "t")
        assert fast is not None, "the fast reader should take a table with the new columns"
        general = _from_arrow(table, "t", None)
        for name in ARRAYS + RESULTS:
            x, y = getattr(fast, name), getattr(general, name)
            assert (x is None) == (y is None) and (x is None or np.array_equal(x, y, equal_nan=True)), name
        assert_same(Matches.from_arrow(table), matches)
    # without rank: both rank by the score where a match has one, by the order of the rows where it has none
    no_rank = pa.table({"match": ["m", "m", "m", "n", "n"], "team": [0, 1, 2, 0, 1], "player": list("abcab"),
                        "score": [1.0, 5.0, None, None, None]})
    fast, general = longform.fast(no_rank, "t"), _from_arrow(no_rank, "t", None)
    assert fast is not None
    np.testing.assert_array_equal(fast.team_rank, [1, 0, -1, 0, 1])
    np.testing.assert_array_equal(general.team_rank, fast.team_rank)


@settings(max_examples=30)
@given(history=a_history())
def test_the_fast_and_general_readers_agree_on_random_histories(history: list[Match]) -> None:
    arrow_or_skip()
    from podium.data import longform
    from podium.data.tables import _from_arrow

    table = Matches.from_matches(history).to_arrow()
    fast = longform.fast(table, "t")
    if not history:
        return
    assert fast is not None
    general = _from_arrow(table, "t", None)
    for name in ARRAYS + RESULTS:
        x, y = getattr(fast, name), getattr(general, name)
        assert (x is None) == (y is None) and (x is None or np.array_equal(x, y, equal_nan=True)), name


def test_ranks_from_scores_and_contradictions_match_the_match_rules() -> None:
    """The vectorised rules of the table readers against :class:`Match`'s, match by match."""
    arrow_or_skip()  # (podium.data.tables needs no pyarrow for these, but is the table readers' module)
    from podium.data.match import check_ranks_agree, ranks_from_scores
    from podium.data.results import contradicting, ranks_by_score

    rng = np.random.default_rng(1)
    sizes = rng.integers(2, 6, 3000)
    match_start = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    score = rng.integers(0, 4, match_start[-1]).astype(float)
    score[rng.random(len(score)) < 0.2] = np.nan
    rank = rng.integers(-1, 4, match_start[-1]).astype(np.int64)
    sign = np.where(rng.random(len(sizes)) < 0.3, -1.0, 1.0)
    derived = ranks_by_score(match_start, score, sign)
    bad = set(contradicting(match_start, rank, score, sign).tolist())
    for m in range(len(sizes)):
        t0, t1 = match_start[m], match_start[m + 1]
        scores = tuple(None if np.isnan(x) else x for x in score[t0:t1].tolist())
        expected = ranks_from_scores(scores, bool(sign[m] > 0))
        assert [None if r < 0 else r for r in derived[t0:t1].tolist()] == list(expected)
        try:
            check_ranks_agree(tuple(None if r < 0 else r for r in rank[t0:t1].tolist()), scores, bool(sign[m] > 0))
        except MatchError:
            assert m in bad
        else:
            assert m not in bad
    assert 0 < len(bad) < len(sizes)


# -- histories without the new fields: as before ---------------------------------------------------------------

def two_matches() -> list[Match]:
    return [Match([["ann"], ["bob", "cy"]], ranks=[1, 0], time="2024-03-01", id="g1"),
            Match([["cy"], ["ann"]], ranks=[0, None], weights=[[0.5], [1.0]], id="g2")]


def test_a_history_without_them_writes_the_csv_it_wrote_before(tmp_path: Path) -> None:
    original = Matches.from_matches(two_matches())
    assert all(getattr(original, name) is None for name in RESULTS)
    podium.write_matches(original, tmp_path / "h.csv")
    expected = ("match,team,player,rank,weight,time\r\n"
                "g1,0,ann,1,1.0,2024-03-01\r\n"
                "g1,1,bob,0,1.0,2024-03-01\r\n"
                "g1,1,cy,0,1.0,2024-03-01\r\n"
                "g2,0,cy,0,0.5,\r\n"
                "g2,1,ann,,1.0,\r\n")
    assert (tmp_path / "h.csv").read_bytes() == expected.encode("utf-8")
    back = podium.read_matches(tmp_path / "h.csv")
    assert_same(back, original)


def test_a_history_without_them_writes_the_parquet_it_wrote_before(tmp_path: Path) -> None:
    pa = arrow_or_skip()
    import pyarrow.parquet as pq

    original = Matches.from_matches(two_matches())
    podium.write_matches(original, tmp_path / "h.parquet")
    by_hand = pa.table({
        "match": pa.array(["g1", "g1", "g1", "g2", "g2"], pa.string()),
        "team": pa.array([0, 1, 1, 0, 1], pa.int64()),
        "player": pa.array(["ann", "bob", "cy", "cy", "ann"], pa.string()),
        "rank": pa.array([1, 0, 0, 0, None], pa.int64()),
        "weight": pa.array([1.0, 1.0, 1.0, 0.5, 1.0], pa.float64()),
        "time": pa.array(["2024-03-01"] * 3 + [None] * 2, pa.string()),
    })
    assert original.to_arrow().equals(by_hand)
    pq.write_table(by_hand, tmp_path / "by_hand.parquet")
    assert (tmp_path / "h.parquet").read_bytes() == (tmp_path / "by_hand.parquet").read_bytes()
    assert_same(podium.read_matches(tmp_path / "h.parquet"), original)


def test_a_history_without_them_reads_as_before() -> None:
    tables_or_skip()
    sim = podium.simulate(50, 400, teams=3, team_size=2, seed=2).matches
    for back in (Matches.from_arrow(sim.to_arrow()), Matches.from_pandas(sim.to_pandas())):
        assert all(getattr(back, name) is None for name in RESULTS)
        for name in ARRAYS:
            if name != "player":  # (players numbered in order of first appearance: compare their ids)
                assert np.array_equal(getattr(back, name), getattr(sim, name), equal_nan=True), name
        assert [back.players[p] for p in back.player] == [sim.players[p] for p in sim.player]
        assert list(back) == list(sim)


# -- hand-made files and tables ----------------------------------------------------------------------------------

def read_csv_text(text: str, tmp_path: Path) -> Matches:
    path = tmp_path / "hand.csv"
    path.write_text(text, encoding="utf-8")
    return podium.read_matches(path)


def test_hand_made_csv_defaults_and_spellings(tmp_path: Path) -> None:
    back = read_csv_text(
        "match,team,player,score,higher_is_better,advantage,match_weight\n"
        "m1,x,a,2,,true,\n"            # no rank column: ranked by the scores
        "m1,y,b,5,,false,\n"
        "m2,x,a,61.5,FALSE,,2\n"       # lower is better
        "m2,y,c,58,False,,2\n"
        "m2,z,b,,false,,2\n"           # no score: did not finish
        "m3,x,c,,,,\n"                 # no score at all: teams in the order written
        "m3,y,a,,,,\n", tmp_path)
    assert list(back) == [
        Match([["a"], ["b"]], scores=[2, 5], advantage=[1, 0], id="m1"),
        Match([["a"], ["c"], ["b"]], scores=[61.5, 58, None], higher_is_better=False, weight=2, id="m2"),
        Match([["c"], ["a"]], id="m3"),
    ]
    assert [m.ranks for m in back] == [(1, 0), (1, 0, None), (0, 1)]


def test_a_column_that_says_nothing_reads_as_none(tmp_path: Path) -> None:
    back = read_csv_text("match,team,player,rank,score,higher_is_better,advantage,match_weight\n"
                         "m,0,a,0,,true,0,1\nm,1,b,1,,,,\n", tmp_path)
    assert all(getattr(back, name) is None for name in RESULTS)
    pa, pd, pl = tables_or_skip()
    table = pa.table({"match": ["m", "m"], "team": [0, 1], "player": ["a", "b"], "rank": [0, 1],
                      "score": pa.array([None, None], pa.float64()), "higher_is_better": [True, None],
                      "advantage": [0.0, None], "match_weight": [1, None]})
    for back in (Matches.from_arrow(table), Matches.from_pandas(table.to_pandas()),
                 Matches.from_polars(pl.from_arrow(table))):
        assert all(getattr(back, name) is None for name in RESULTS)
        assert list(back) == [Match([["a"], ["b"]], id="m")]


def test_hand_made_tables_take_integers_and_booleans() -> None:
    pa, pd, pl = tables_or_skip()
    frame = pd.DataFrame({"match": [7, 7, 8, 8], "team": ["home", "away", "home", "away"],
                          "player": ["a", "b", "b", "a"], "score": [2, 1, 0, 0], "advantage": [True, False] * 2,
                          "match_weight": [1, 1, 3, 3]})
    expected = [Match([["a"], ["b"]], scores=[2, 1], advantage=[1, 0], id="7"),
                Match([["b"], ["a"]], scores=[0, 0], advantage=[1, 0], weight=3, id="8")]
    assert list(Matches.from_pandas(frame)) == expected
    assert list(Matches.from_polars(pl.from_pandas(frame))) == expected
    with_nan = frame.assign(score=[2.0, np.nan, np.nan, np.nan])
    assert [m.scores for m in Matches.from_pandas(with_nan)] == [(2.0, None), None]


# -- bad values ------------------------------------------------------------------------------------------------

CSV_HEAD = "match,team,player,rank,weight,time,score,higher_is_better,advantage,match_weight\n"
GOOD_ROWS = "m1,0,x,0,,,1,,,\nm1,1,y,1,,,0,,,\n"
BAD_CSV = [
    # (name, rows after the good match, line, words)
    ("score not a number", "m2,0,a,0,,,lots,,,\nm2,1,b,1,,,0,,,\n", 4, ["'score'", "'lots'"]),
    ("score infinite", "m2,0,a,0,,,inf,,,\nm2,1,b,1,,,0,,,\n", 4, ["'score'", "'inf'"]),
    ("score nan", "m2,0,a,0,,,nan,,,\nm2,1,b,1,,,0,,,\n", 4, ["'score'", "'nan'"]),
    ("advantage not a number", "m2,0,a,0,,,,,home,\nm2,1,b,1,,,,,,\n", 4, ["'advantage'", "'home'"]),
    ("advantage infinite", "m2,0,a,0,,,,,-inf,\nm2,1,b,1,,,,,,\n", 4, ["'advantage'", "'-inf'"]),
    ("bad boolean", "m2,0,a,0,,,1,yes,,\nm2,1,b,1,,,0,yes,,\n", 4, ["'higher_is_better'", "'yes'"]),
    ("match weight zero", "m2,0,a,0,,,,,,0\nm2,1,b,1,,,,,,0\n", 4, ["'match_weight'", "'0'"]),
    ("match weight negative", "m2,0,a,0,,,,,,-2\nm2,1,b,1,,,,,,-2\n", 4, ["'match_weight'", "'-2'"]),
    ("match weight infinite", "m2,0,a,0,,,,,,inf\nm2,1,b,1,,,,,,inf\n", 4, ["'match_weight'", "'inf'"]),
    ("match weight not a number", "m2,0,a,0,,,,,,big\nm2,1,b,1,,,,,,big\n", 4, ["'match_weight'", "'big'"]),
    ("score differs within a team", "m2,0,a,0,,,3,,,\nm2,0,c,0,,,4,,,\nm2,1,b,1,,,0,,,\n", 5,
     ["'score' differs within team '0'", "'m2'", "3 and 4"]),
    ("score missing on one row of a team", "m2,0,a,0,,,3,,,\nm2,0,c,0,,,,,,\nm2,1,b,1,,,0,,,\n", 5,
     ["'score' differs within team '0'", "'m2'", "3 and empty"]),
    ("advantage differs within a team", "m2,0,a,0,,,,,1,\nm2,0,c,0,,,,,0,\nm2,1,b,1,,,,,,\n", 5,
     ["'advantage' differs within team '0'", "'m2'"]),
    ("higher_is_better differs within a match", "m2,0,a,0,,,1,false,,\nm2,1,b,1,,,2,true,,\n", 5,
     ["'higher_is_better' differs within match 'm2'", "false and true"]),
    ("match weight differs within a match", "m2,0,a,0,,,,,,2\nm2,1,b,1,,,,,,3\n", 5,
     ["'match_weight' differs within match 'm2'", "2 and 3"]),
    ("ranks contradict scores", "m2,0,a,0,,,1,,,\nm2,1,b,1,,,5,,,\n", 4, ["'ranks' contradict 'scores'", "'m2'"]),
    ("lower is better without a score", "m2,0,a,0,,,,false,,\nm2,1,b,1,,,,false,,\n", 4,
     ["'higher_is_better'", "no 'scores'", "'m2'"]),
]


@pytest.mark.parametrize(("rows", "line", "words"), [c[1:] for c in BAD_CSV], ids=[c[0] for c in BAD_CSV])
def test_bad_csv_values_name_the_field_line_and_value(rows: str, line: int, words: list[str], tmp_path: Path) -> None:
    with pytest.raises(MatchError) as caught:
        read_csv_text(CSV_HEAD + GOOD_ROWS + rows, tmp_path)
    message = str(caught.value)
    assert f"line {line}" in message, message
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"


def test_scanning_a_bad_csv_names_the_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(CSV_HEAD + GOOD_ROWS + "m2,0,a,0,,,lots,,,\nm2,1,b,1,,,0,,,\n", encoding="utf-8")
    with pytest.raises(MatchError, match="'score' must be a number of magnitude at most 1e\\+15 or empty.*'lots'"):
        list(podium.scan_matches(path, batch_size=1))


GOOD_TABLE = {"match": ["g1", "g1", "g2", "g2", "g2"], "team": [0, 1, 0, 1, 1], "player": ["a", "b", "a", "c", "d"],
              "rank": [0, 1, 1, 0, 0], "score": [2.0, 1.0, 0.0, 3.0, 3.0], "higher_is_better": [True] * 5,
              "advantage": [1.0, 0.0, 0.0, 0.5, 0.5], "match_weight": [1.0, 1.0, 2.0, 2.0, 2.0]}


def table_with(**changes: object) -> object:
    pa = arrow_or_skip()
    return pa.table({**GOOD_TABLE, **changes})


BAD_TABLES = [
    ("score infinite", {"score": [2.0, float("inf"), 0.0, 3.0, 3.0]}, ["row 1", "'score'", "inf", "'g1'"]),
    ("advantage nan", {"advantage": [1.0, float("nan"), 0.0, 0.5, 0.5]}, ["row 1", "'advantage'", "nan"]),
    ("match weight zero", {"match_weight": [1.0, 1.0, 0.0, 0.0, 0.0]}, ["row 2", "'match_weight'", "0.0", "'g2'"]),
    ("match weight negative", {"match_weight": [-1.0, -1.0, 2.0, 2.0, 2.0]}, ["row 0", "'match_weight'", "-1.0"]),
    ("score differs within a team", {"score": [2.0, 1.0, 0.0, 3.0, 4.0]},
     ["row 4", "'score' differs within the team", "4.0 here, 3.0", "row 3", "'g2'"]),
    ("score null on one row of a team", {"score": [2.0, 1.0, 0.0, 3.0, None]},
     ["row 4", "'score' differs within the team", "null here"]),
    ("advantage differs within a team", {"advantage": [1.0, 0.0, 0.0, 0.5, 1.0]},
     ["row 4", "'advantage' differs within the team"]),
    ("higher_is_better differs within a match", {"higher_is_better": [True, False, True, True, True]},
     ["row 1", "'higher_is_better' differs within the match", "false here, true"]),
    ("match weight differs within a match", {"match_weight": [1.0, 1.0, 2.0, 2.0, 3.0]},
     ["row 4", "'match_weight' differs within the match", "'g2'"]),
    ("ranks contradict scores", {"score": [1.0, 2.0, 0.0, 3.0, 3.0]}, ["row 0", "'ranks' contradict 'scores'", "'g1'"]),
    ("lower is better without a score", {"score": [None] * 5, "higher_is_better": [False, False, True, True, True]},
     ["row 0", "'higher_is_better' is false", "no 'score'"]),
]


@pytest.mark.parametrize(("changes", "words"), [c[1:] for c in BAD_TABLES], ids=[c[0] for c in BAD_TABLES])
def test_bad_table_values_name_the_field_and_row(changes: dict[str, object], words: list[str], tmp_path: Path) -> None:
    table = table_with(**changes)
    import pyarrow.parquet as pq

    pq.write_table(table, tmp_path / "bad.parquet")
    for read in (lambda: Matches.from_arrow(table), lambda: podium.read_matches(tmp_path / "bad.parquet")):
        with pytest.raises(MatchError) as caught:
            read()
        for word in words:
            assert word in str(caught.value), f"{word!r} not in {str(caught.value)!r}"
    with pytest.raises(MatchError) as caught:
        list(podium.scan_matches(tmp_path / "bad.parquet", batch_size=1))
    assert words[1] in str(caught.value)
    with pytest.warns(UserWarning, match="skipped 1 malformed match"):
        kept = Matches.from_arrow(table, errors="skip")
    assert len(kept) == 1


def test_columns_of_the_wrong_type_are_named() -> None:
    pa, pd, _ = tables_or_skip()
    for column, values in (("score", ["1", "2", "0", "3", "3"]), ("higher_is_better", [1, 1, 1, 1, 1]),
                           ("advantage", ["home", "", "", "", ""]), ("match_weight", [True] * 5)):
        with pytest.raises(MatchError, match=f"column '{column}' must hold"):
            Matches.from_arrow(table_with(**{column: values}))
    with pytest.raises(MatchError, match="column 'score'"):
        Matches.from_pandas(pd.DataFrame({**GOOD_TABLE, "score": [1, "two", 0, 3, 3]}))


def test_the_good_table_reads() -> None:
    arrow_or_skip()
    back = Matches.from_arrow(table_with())
    assert list(back) == [Match([["a"], ["b"]], scores=[2, 1], advantage=[1, 0], id="g1"),
                          Match([["a"], ["c", "d"]], ranks=[1, 0], scores=[0, 3], advantage=[0, 0.5], weight=2,
                                id="g2")]


def test_csv_reader_and_writer_agree_with_the_csv_module(tmp_path: Path) -> None:
    """Cells that need quoting (ids with commas) stay in their columns with the new columns after them."""
    matches = [Match([["a,b"], ["c"]], scores=[1.5, None], id='x"y'), Match([["c"], ["a,b"]], weight=2, id="z")]
    podium.write_matches(matches, tmp_path / "q.csv")
    rows = list(csv.reader(io.StringIO((tmp_path / "q.csv").read_text(encoding="utf-8"))))
    assert rows[1] == ['x"y', "0", "a,b", "0", "1.0", "", "1.5", "1"]
    assert list(podium.read_matches(tmp_path / "q.csv")) == matches
