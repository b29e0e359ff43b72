"""Long-form tables: Arrow, pandas, polars and Parquet give back the history they were given (issue 18, part 2)."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import podium
from podium import Match, MatchError, Matches
from ..shared import SHARED as DATA

pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")

SHARED = ["atp_doubles", "atp_singles", "chess_worldcup", "f1_races", "intl_football", "nascar2002",
          "racetime_maprando", "riichi_mahjong"]
ARRAYS = ("match_start", "team_start", "team_rank", "player", "weight", "time")


def load(folder: str) -> Matches:
    path = DATA / folder / "matches.jsonl.gz"
    if not path.exists():
        pytest.skip(f"{path} is not present (the real data sets live in ../shared/data)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return podium.read_matches(path, errors="skip")


def assert_identical(a: Matches, b: Matches) -> None:
    for name in ARRAYS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True), name
    assert a.players == b.players
    assert a.ids == b.ids
    assert a.time_is_date == b.time_is_date
    assert a.has_weights == b.has_weights


def all_round_trips(matches: Matches, tmp_path: Path) -> dict[str, Matches]:
    """Every way through a table and back, each starting from ``matches``."""
    podium.write_matches(matches, tmp_path / "h.parquet")
    podium.write_matches(podium.read_matches(tmp_path / "h.parquet"), tmp_path / "back.jsonl.gz")
    ways = {}
    if "" not in matches.players:  # (CSV reads an empty cell as missing: atp_doubles has a player without an id)
        podium.write_matches(matches, tmp_path / "h.csv.gz")
        ways["csv"] = podium.read_matches(tmp_path / "h.csv.gz")
    return ways | {
        "arrow": Matches.from_arrow(matches.to_arrow()),
        "pandas": Matches.from_pandas(matches.to_pandas()),
        "polars": Matches.from_polars(matches.to_polars()),
        "parquet": podium.read_matches(tmp_path / "h.parquet"),
        "parquet->jsonl": podium.read_matches(tmp_path / "back.jsonl.gz"),
        "arrow->pandas->polars": Matches.from_polars(pl.from_pandas(Matches.from_arrow(matches.to_arrow()).to_pandas())),
    }


def canonical(matches: Matches, tmp_path: Path) -> Matches:
    """What JSONL makes of a history (players numbered in order of appearance, meta dropped)."""
    podium.write_matches(matches, tmp_path / "c.jsonl")
    back = podium.read_matches(tmp_path / "c.jsonl")
    back.meta = None
    return back


def simulated(dates: bool) -> Matches:
    sim = podium.simulate(40, 300, teams=3, team_size=2, draw_probability=0.3, seed=7).matches
    rank = sim.team_rank.copy()
    rank[::5] = -1                                  # did not finish
    weight = sim.weight.copy()
    weight[::7] = 0.5                               # partial play
    time = sim.time * 0.37 + (19000.0 if dates else -3.0)
    time[::11] = np.nan                             # unknown
    return Matches(sim.match_start, sim.team_start, rank, sim.player, weight, time, sim.players, sim.ids,
                   time_is_date=dates)


# -- round trips ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("folder", SHARED)
def test_every_shared_history_round_trips(folder: str, tmp_path: Path) -> None:
    matches = load(folder)
    matches.meta = None
    for how, back in all_round_trips(matches, tmp_path).items():
        assert_identical(back, matches), how


@pytest.mark.parametrize("dates", [True, False])
def test_simulated_histories_round_trip(dates: bool, tmp_path: Path) -> None:
    original = simulated(dates)
    assert np.any(original.team_rank < 0) and original.has_weights and np.any(np.isnan(original.time))
    draws = [m for m in original if len({r for r in m.ranks if r is not None}) < sum(r is not None for r in m.ranks)]
    assert draws, "the simulation should hold draws"
    expected = canonical(original, tmp_path)
    assert list(expected) == list(original)
    for how, back in all_round_trips(original, tmp_path).items():
        assert_identical(back, expected), how
        assert list(back) == list(original), how


def test_examples_round_trip_exactly(tmp_path: Path) -> None:
    matches = [
        Match([["ann"], ["bob", "cy"], ["dee"]], ranks=[0, 1, None], time="2024-03-01", id="g1"),
        Match([["bob"], ["dee"]], ranks=[0, 0], weights=[[0.5], [1.0]], time="2024-03-02T18:03:05.590000Z", id="g2"),
        Match([["cy"], ["eve"], ["ann"], ["bob"]], ranks=[None, 1, 0, None], id="g3"),
    ]
    podium.write_matches(matches, tmp_path / "h.parquet")
    assert list(podium.read_matches(tmp_path / "h.parquet")) == matches
    table = Matches.from_matches(matches).to_arrow()
    assert table.column_names == ["match", "team", "player", "rank", "weight", "time"]
    assert table.slice(0, 4).to_pylist() == [
        {"match": "g1", "team": 0, "player": "ann", "rank": 0, "weight": 1.0, "time": "2024-03-01"},
        {"match": "g1", "team": 1, "player": "bob", "rank": 1, "weight": 1.0, "time": "2024-03-01"},
        {"match": "g1", "team": 1, "player": "cy", "rank": 1, "weight": 1.0, "time": "2024-03-01"},
        {"match": "g1", "team": 2, "player": "dee", "rank": None, "weight": 1.0, "time": "2024-03-01"},
    ]
    frame = Matches.from_matches(matches).to_pandas()
    assert str(frame["rank"].dtype) == "Int64" and frame["rank"].isna().sum() == 3


def test_numeric_times_stay_numbers_and_missing_ids_get_positions(tmp_path: Path) -> None:
    matches = [Match([["a"], ["b"]], time=0), Match([["b"], ["a"]], time=1.5), Match([["a"], ["b"]], time=None)]
    podium.write_matches(matches, tmp_path / "h.parquet")
    back = podium.read_matches(tmp_path / "h.parquet")
    assert [m.time for m in back] == [0, 1.5, None]
    assert back.ids == ["0", "1", "2"] and not back.time_is_date


def test_an_empty_history_round_trips(tmp_path: Path) -> None:
    empty = Matches.from_matches([])
    podium.write_matches(empty, tmp_path / "e.parquet")
    assert len(podium.read_matches(tmp_path / "e.parquet")) == 0
    assert len(Matches.from_pandas(empty.to_pandas())) == 0
    assert len(Matches.from_polars(empty.to_polars())) == 0


def test_hand_made_tables_read_like_the_csv_long_form(tmp_path: Path) -> None:
    """Teams interleaved, string team ids, integer match ids, no rank column, dates as timestamps."""
    rows = {"match": [7, 7, 7, 8, 8], "team": ["x", "y", "x", "b", "a"], "player": ["ann", "bob", "cy", "bob", "ann"]}
    back = Matches.from_pandas(pd.DataFrame(rows))
    assert [m.teams for m in back] == [(("ann", "cy"), ("bob",)), (("bob",), ("ann",))]
    assert [m.ranks for m in back] == [(0, 1), (0, 1)] and back.ids == ["7", "8"]
    stamped = pd.DataFrame({**rows, "rank": [1.0, 0.0, 1.0, np.nan, 0.0],
                            "time": pd.to_datetime(["2024-03-01T12:00"] * 3 + ["2024-03-02"] * 2, format="ISO8601")})
    back = Matches.from_pandas(stamped)
    assert back.time_is_date and [m.time for m in back] == ["2024-03-01T12:00:00Z", "2024-03-02"]
    assert [m.ranks for m in back] == [(1, 0), (None, 0)]
    path = tmp_path / "same.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    assert_identical(podium.read_matches(path), Matches.from_pandas(pd.DataFrame(rows)))


# -- malformed tables ------------------------------------------------------------------------------------

GOOD = {"match": ["g1", "g1", "g2", "g2"], "team": [0, 1, 0, 1], "player": ["a", "b", "a", "c"],
        "rank": [0, 1, 1, 0], "weight": [1.0, 0.5, 1.0, 1.0], "time": ["2024-01-01"] * 2 + ["2024-01-02"] * 2}


def with_(**changes: object) -> object:
    table = {k: v for k, v in GOOD.items() if k not in changes or changes[k] is not None}
    table.update({k: v for k, v in changes.items() if v is not None})
    return pa.table(table)


BAD = [
    ("missing player column", with_(player=None), ["missing ['player']"]),
    ("rank of strings", with_(rank=["0", "1", "1", "0"]), ["'rank'", "type string"]),
    ("weight of strings", with_(weight=["1", "1", "1", "1"]), ["'weight'", "type string"]),
    ("player of floats", with_(player=[1.0, 2.0, 1.0, 3.0]), ["'player'", "type double"]),
    ("time of booleans", with_(time=[True] * 4), ["'time'", "type bool"]),
    ("a player twice", with_(player=["a", "b", "c", "c"]), ["row 3", "'player' 'c'", "'g2'"]),
    ("rank differs in a team", pa.table({"match": ["g1"] * 3, "team": [0, 1, 0], "player": ["a", "b", "c"],
                                         "rank": [0, 1, None]}), ["row 2", "'rank' differs", "null here, 0", "'g1'"]),
    ("one team", with_(team=[0, 1, 5, 5]), ["row 2", "at least two teams", "'g2'"]),
    ("negative rank", with_(rank=[0, 1, -3, 0]), ["row 2", "'rank'", "-3"]),
    ("weight above 1", with_(weight=[1.0, 1.5, 1.0, 1.0]), ["row 1", "'weight'", "1.5"]),
    ("time differs in a match", with_(time=["2024-01-01", "2024-01-03", "2024-01-02", "2024-01-02"]),
     ["row 1", "'time' differs", "'g1'"]),
    ("not a date", with_(time=["2024-01-01", "2024-01-01", "soon", "soon"]), ["row 2", "'time'", "'soon'"]),
    ("null player", with_(player=["a", None, "a", "c"]), ["row 1", "'player' is null"]),
    ("null match", with_(match=["g1", None, "g2", "g2"]), ["row 1", "'match' is null"]),
    ("rows not contiguous", with_(match=["g1", "g2", "g1", "g2"]), ["row 0", "'g1'", "at least two teams", "contiguous"]),
    ("fractional rank", with_(rank=[0.0, 1.5, 1.0, 0.0]), ["row 1", "'rank'", "1.5"]),
]


def test_an_id_may_come_back_for_a_later_match_but_not_for_the_next() -> None:
    # atp_doubles repeats twelve ids twelve matches apart: the long form reads a match as a run of rows
    matches = Matches.from_matches([Match([["a"], ["b"]], id="g"), Match([["c"], ["d"]], id="h"),
                                    Match([["a"], ["c", "e"]], ranks=[1, 0], id="g")])
    back = Matches.from_arrow(matches.to_arrow())
    assert list(back) == list(matches)
    with pytest.raises(MatchError, match="matches 1 and 2 are both 'h'"):
        Matches.from_matches([Match([["a"], ["b"]], id="g"), Match([["c"], ["d"]], id="h"),
                              Match([["a"], ["c"]], id="h")]).to_arrow()


@pytest.mark.parametrize(("table", "words"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_malformed_tables_name_the_column_and_row(table: object, words: list[str]) -> None:
    with pytest.raises(MatchError) as caught:
        Matches.from_arrow(table)
    for word in words:
        assert word in str(caught.value)


def test_skip_leaves_out_only_the_bad_matches() -> None:
    table = with_(player=["a", "b", "c", "c"])
    with pytest.warns(UserWarning, match="skipped 1 malformed match"):
        back = Matches.from_arrow(table, errors="skip")
    assert back.ids == ["g1"] and list(back)[0].weights == ((1.0,), (0.5,))


def test_a_parquet_file_is_checked_like_a_table(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    pq.write_table(with_(player=["a", "b", "c", "c"]), tmp_path / "bad.parquet")
    with pytest.raises(MatchError, match=r"bad\.parquet, row 3"):
        podium.read_matches(tmp_path / "bad.parquet")
    (tmp_path / "junk.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(MatchError, match=r"junk\.parquet: not a readable Parquet file"):
        podium.read_matches(tmp_path / "junk.parquet")


def test_pandas_columns_pyarrow_cannot_read_are_named() -> None:
    frame = pd.DataFrame({**GOOD, "rank": [0, "first", 1, 0]})
    with pytest.raises(MatchError, match="column 'rank'"):
        Matches.from_pandas(frame)


# -- lazy imports, CLI ---------------------------------------------------------------------------------------

def test_import_podium_does_not_import_the_table_libraries() -> None:
    code = "import sys, podium; print([m for m in ('pyarrow', 'pandas', 'polars') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_missing_pyarrow_says_what_to_install() -> None:
    code = ("import sys; sys.modules['pyarrow'] = None; import podium\n"
            "try:\n    podium.Matches.from_matches([]).to_arrow()\nexcept ImportError as e:\n    print(e)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "pip install podium[tables]" in out


def test_cli_rates_and_checks_a_parquet_history(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from podium.cli import app

    path = tmp_path / "season.parquet"
    runner = CliRunner()
    result = runner.invoke(app, ["simulate", "--out", str(path), "--players", "30", "--matches", "400", "--seed", "3"])
    assert result.exit_code == 0, result.output
    assert len(podium.read_matches(path)) == 400
    for command in (["rate", str(path), "--top", "3"], ["check", str(path)]):
        result = runner.invoke(app, command)
        assert result.exit_code == 0, result.output
    assert "400 matches" in runner.invoke(app, ["rate", str(path)]).output
