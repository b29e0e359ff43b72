"""``podium smooth``: TrueSkill Through Time from the command line, checked against ``smooth`` called directly."""

from __future__ import annotations

import csv
import datetime as dt
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import podium
from podium.cli import app
from podium.data.match import format_time, parse_time

runner = CliRunner()
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _table(output: str) -> list[list[str]]:
    """The body rows of the (one) rich table in ``output``, as lists of stripped cells."""
    return [[cell.strip() for cell in line.split("│")[1:-1]] for line in output.splitlines() if line.startswith("│")]


@pytest.fixture(scope="module")
def batched(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[podium.Match]]:
    """Duels among 24 players, three matches per time (a batch), so some players play twice in one batch."""
    sim = podium.simulate(24, 360, seed=3)
    matches = [podium.Match(m.teams, m.ranks, time=j // 3) for j, m in enumerate(sim.matches)]
    path = tmp_path_factory.mktemp("smooth") / "batched.jsonl"
    podium.write_matches(matches, path)
    return path, matches


@pytest.fixture(scope="module")
def dated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[podium.Match]]:
    """Duels with dates: four matches a day from 2020-02-27 (across a leap day)."""
    sim = podium.simulate(15, 200, seed=4)
    start = dt.date(2020, 2, 27)
    matches = [podium.Match(m.teams, m.ranks, time=start + dt.timedelta(days=j // 4)) for j, m in enumerate(sim.matches)]
    path = tmp_path_factory.mktemp("smooth") / "dated.csv"
    podium.write_matches(matches, path)
    return path, matches


def _smoothed(path: Path, **params: float) -> podium.Smoothed:
    return podium.TrueSkillThroughTime(**params).smooth(podium.read_matches(path))


def _games(matches: list[podium.Match], player: str, until: float) -> int:
    """Matches the player played at or before ``until`` (the history's own time axis), counted by hand."""
    return sum(1 for m in matches if parse_time(m.time) <= until and any(player in t for t in m.teams))


# -- the table ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("k", [3.0, 0.0])
def test_the_table_is_the_leaderboard_of_smooth(batched: tuple[Path, list[podium.Match]], k: float) -> None:
    path, matches = batched
    result = runner.invoke(app, ["smooth", str(path), "--top", "5", "--k", f"{k:g}"])
    assert result.exit_code == 0, result.output
    smoothed = _smoothed(path)
    expected = smoothed.leaderboard(k=k, top=5)
    other = smoothed.leaderboard(k=3.0 - k, top=5)
    assert [r.player for r in expected] != [r.player for r in other]  # k decides the order on this history
    rows = _table(result.output)
    assert [row[1] for row in rows] == [r.player for r in expected]
    assert rows[0][:2] == ["1", expected[0].player]
    end = max(parse_time(m.time) for m in matches)
    for row, lb in zip(rows, expected):
        assert row[0] == str(lb.rank)
        assert row[2:5] == [f"{lb.mu:.3f}", f"{lb.sigma:.3f}", f"{lb.mu - k * lb.sigma:.3f}"]
        # games: matches played, counted from the history by hand, and the leaderboard's own count
        assert row[5] == str(_games(matches, lb.player, end)) == str(lb.games)
        assert len(row) == 6
    assert any(int(row[5]) > len(smoothed.trajectory(row[1]).time) for row in rows)  # twice in a batch
    assert f"mu - {k:g} sigma" in result.output and "(the end)" in result.output


def test_the_table_at_an_earlier_time(batched: tuple[Path, list[podium.Match]]) -> None:
    path, matches = batched
    result = runner.invoke(app, ["smooth", str(path), "--top", "6", "--at", "60.5"])
    assert result.exit_code == 0, result.output
    smoothed = _smoothed(path)
    expected = smoothed.leaderboard(at=60.5, top=6)
    assert [r.player for r in expected] != [r.player for r in smoothed.leaderboard(top=6)]
    rows = _table(result.output)
    assert [row[1] for row in rows] == [r.player for r in expected]
    for row, lb in zip(rows, expected):
        assert row[2] == f"{lb.mu:.3f}" and row[3] == f"{lb.sigma:.3f}"
        assert row[5] == str(_games(matches, lb.player, 60.5)) == str(lb.games)
        assert int(row[5]) < _games(matches, lb.player, 1e9)  # they played on after 60.5
    assert "(the end)" not in result.output


def test_the_table_of_a_dated_history_at_a_date(dated: tuple[Path, list[podium.Match]]) -> None:
    path, matches = dated
    result = runner.invoke(app, ["smooth", str(path), "--top", "4", "--at", "2020-03-10"])
    assert result.exit_code == 0, result.output
    smoothed = _smoothed(path)
    assert smoothed.time_is_date
    expected = smoothed.leaderboard(at="2020-03-10", top=4)
    assert [row[1] for row in _table(result.output)] == [r.player for r in expected]
    assert "2020-03-10" in result.output
    result = runner.invoke(app, ["smooth", str(path), "--top", "4"])
    assert result.exit_code == 0, result.output
    assert [row[1] for row in _table(result.output)] == [r.player for r in smoothed.leaderboard(top=4)]
    assert "at 2020-04-16 (the end)" in result.output  # 200 matches, 4 a day: day 49 after 2020-02-27 (leap)
    assert dt.date(2020, 2, 27) + dt.timedelta(days=49) == dt.date(2020, 4, 16)


def test_model_options_reach_the_model(batched: tuple[Path, list[podium.Match]]) -> None:
    path, _ = batched
    params = {"mu": 25.0, "sigma": 8.0, "beta": 4.0, "gamma": 0.1, "draw_probability": 0.05}
    args = ["--mu", "25", "--sigma", "8", "--beta", "4", "--gamma", "0.1", "--draw-probability", "0.05"]
    result = runner.invoke(app, ["smooth", str(path), "--top", "3", *args])
    assert result.exit_code == 0, result.output
    assert repr(podium.TrueSkillThroughTime(**params)) in result.output
    expected = _smoothed(path, **params).leaderboard(top=3)
    assert expected[0].mu > 20  # on the mu = 25 scale, unlike the default's
    assert [row[2] for row in _table(result.output)] == [f"{r.mu:.3f}" for r in expected]


def test_the_summary_line(batched: tuple[Path, list[podium.Match]]) -> None:
    path, _ = batched
    result = runner.invoke(app, ["smooth", str(path), "--top", "1"])
    assert result.exit_code == 0, result.output
    smoothed = _smoothed(path)
    n = smoothed.matches
    assert n == 360 and smoothed.converged and smoothed.iterations > 1
    assert f"360 matches, 24 players, {smoothed.iterations} iterations (converged)" in result.output
    assert (f"log evidence {smoothed.log_evidence:,.2f} ({smoothed.log_evidence / n:.4f} per match)"
            in result.output)


def test_an_unconverged_run_says_so(batched: tuple[Path, list[podium.Match]]) -> None:
    path, _ = batched
    result = runner.invoke(app, ["smooth", str(path), "--top", "2", "--max-iterations", "1"])
    assert result.exit_code == 0, result.output
    assert "1 iteration (not converged, last step" in result.output
    assert "warning:" in result.output and "max_iterations=1" in result.output
    result = runner.invoke(app, ["smooth", str(path), "--top", "2", "--max-iterations", "0"])
    assert result.exit_code == 0, result.output
    assert "0 iterations (filtering pass only)" in result.output


# -- the trajectories CSV --------------------------------------------------------------------------------------------
def _read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames or []), list(reader)


def test_out_writes_one_row_per_player_and_batch(batched: tuple[Path, list[podium.Match]], tmp_path: Path) -> None:
    path, matches = batched
    out = tmp_path / "trajectories.csv"
    result = runner.invoke(app, ["smooth", str(path), "--top", "3", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert f"trajectories written to {out}" in result.output
    columns, rows = _read_csv(out)
    assert columns == ["player", "time", "match", "mu", "sigma"]
    pairs = {(r["player"], r["time"]) for r in rows}
    assert len(pairs) == len(rows)  # one row per (player, batch) ...
    slots = sum(len(t) for m in matches for t in m.teams)
    assert len(rows) < slots  # ... not one per match played: some played twice in a batch
    assert pairs == {(p, str(format_time(parse_time(m.time), False))) for m in matches for t in m.teams for p in t}
    smoothed = _smoothed(path)
    assert len(rows) == sum(len(smoothed.trajectory(p).mu) for p in smoothed.players)
    for player in smoothed.players:
        mine = [r for r in rows if r["player"] == player]
        tr = smoothed.trajectory(player)
        np.testing.assert_array_equal([float(r["time"]) for r in mine], tr.time)
        np.testing.assert_array_equal([int(r["match"]) for r in mine], tr.match)
        np.testing.assert_array_equal([float(r["mu"]) for r in mine], tr.mu)
        np.testing.assert_array_equal([float(r["sigma"]) for r in mine], tr.sigma)


def test_out_writes_dates_as_dates(dated: tuple[Path, list[podium.Match]], tmp_path: Path) -> None:
    path, _ = dated
    out = tmp_path / "trajectories.csv"
    result = runner.invoke(app, ["smooth", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    _, rows = _read_csv(out)
    smoothed = _smoothed(path)
    tr = smoothed.trajectory(rows[0]["player"])
    mine = [r for r in rows if r["player"] == tr.player]
    assert [r["time"] for r in mine] == [format_time(float(t), True) for t in tr.time]
    assert all(len(r["time"]) == 10 and r["time"].startswith("2020-") for r in rows)
    assert "2020-02-29" in {r["time"] for r in rows}
    np.testing.assert_array_equal([float(r["mu"]) for r in mine], tr.mu)


def test_parquet_is_refused_before_any_work(batched: tuple[Path, list[podium.Match]], tmp_path: Path) -> None:
    path, _ = batched
    out = tmp_path / "trajectories.parquet"
    result = runner.invoke(app, ["smooth", str(path), "--out", str(out)])
    assert result.exit_code == 1
    assert "Parquet is not supported yet" in result.output and "Traceback" not in result.output
    assert not out.exists() and "┏" not in result.output  # nothing smoothed, no table
    result = runner.invoke(app, ["smooth", str(path), "--out", str(tmp_path / "t.csv.gz")])
    assert result.exit_code == 1 and "plain CSV" in result.output


# -- the figure -------------------------------------------------------------------------------------------------------
def test_plot_writes_a_png(batched: tuple[Path, list[podium.Match]], tmp_path: Path) -> None:
    path, _ = batched
    out = tmp_path / "trajectories.png"
    result = runner.invoke(app, ["smooth", str(path), "--top", "3", "--plot", str(out)])
    assert result.exit_code == 0, result.output
    assert f"figure written to {out}" in result.output
    data = out.read_bytes()
    assert data[:8] == PNG_MAGIC and len(data) > 10_000


def test_plot_in_an_unknown_format_is_refused_before_any_work(batched: tuple[Path, list[podium.Match]],
                                                              tmp_path: Path) -> None:
    path, _ = batched
    out = tmp_path / "trajectories.xyz"
    result = runner.invoke(app, ["smooth", str(path), "--plot", str(out)])
    assert result.exit_code == 1
    assert "cannot write a '.xyz' figure" in result.output and ".png" in result.output
    assert not out.exists() and "┏" not in result.output
    result = runner.invoke(app, ["smooth", str(path), "--plot", str(tmp_path / "no" / "such" / "folder.png")])
    assert result.exit_code == 1 and "does not exist" in result.output


# -- bad input ---------------------------------------------------------------------------------------------------------
def test_a_missing_file() -> None:
    assert not Path("nowhere.jsonl").exists()
    result = runner.invoke(app, ["smooth", "nowhere.jsonl"])  # a short name: the message box does not wrap it
    assert result.exit_code == 2
    assert "does not exist" in result.output and "Traceback" not in result.output


def test_mixed_known_and_unknown_times_is_a_one_line_error(tmp_path: Path) -> None:
    history = tmp_path / "mixed.jsonl"
    history.write_text(json.dumps({"teams": [["a"], ["b"]], "time": "2020-01-01"}) + "\n"
                       + json.dumps({"teams": [["b"], ["c"]]}) + "\n")
    result = runner.invoke(app, ["smooth", str(history)])
    assert result.exit_code == 1
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "all times or none" in errors[0]
    assert "Traceback" not in result.output and "┏" not in result.output


def test_malformed_records_stop_unless_skipped(tmp_path: Path) -> None:
    history = tmp_path / "h.jsonl"
    history.write_text(json.dumps({"teams": [["a"], ["b"]], "ranks": [0, 1]}) + "\n"
                       + json.dumps({"teams": [["a"], ["a"]]}) + "\n"
                       + json.dumps({"teams": [["b"], ["c"]], "ranks": [1, 0]}) + "\n")
    result = runner.invoke(app, ["smooth", str(history)])
    assert result.exit_code == 1
    assert "line 2" in result.output and "--skip-invalid" in result.output
    result = runner.invoke(app, ["smooth", str(history), "--skip-invalid"])
    assert result.exit_code == 0, result.output
    assert "skipped 1 malformed record" in result.output
    assert "2 matches, 3 players" in result.output
    assert {row[1] for row in _table(result.output)} == {"a", "b", "c"}


def test_an_empty_history_is_refused(tmp_path: Path) -> None:
    history = tmp_path / "empty.jsonl"
    history.write_text("")
    result = runner.invoke(app, ["smooth", str(history)])
    assert result.exit_code == 1
    assert "holds 0 match(es)" in result.output and "Traceback" not in result.output


def test_bad_options(batched: tuple[Path, list[podium.Match]]) -> None:
    path, _ = batched
    result = runner.invoke(app, ["smooth", str(path), "--sigma", "-1"])
    assert result.exit_code == 2 and "'sigma'" in result.output
    result = runner.invoke(app, ["smooth", str(path), "--draw-probability", "1.5"])
    assert result.exit_code == 2 and "draw_probability" in result.output
    result = runner.invoke(app, ["smooth", str(path), "--tolerance", "0"])
    assert result.exit_code == 2 and "--tolerance" in result.output
    result = runner.invoke(app, ["smooth", str(path), "--max-iterations", "-1"])
    assert result.exit_code == 2
    result = runner.invoke(app, ["smooth", str(path), "--at", "2020-01-01"])  # the history's times are numbers
    assert result.exit_code == 2 and "--at" in result.output and "must be a number" in result.output
    result = runner.invoke(app, ["smooth", str(path), "--at", "nan"])
    assert result.exit_code == 2 and "finite" in result.output
    for result in (runner.invoke(app, ["smooth", str(path), "--sigma", "-1"]),
                   runner.invoke(app, ["smooth", str(path), "--at", "nan"])):
        assert "Traceback" not in result.output


def test_at_before_every_match_warns(batched: tuple[Path, list[podium.Match]]) -> None:
    path, _ = batched
    result = runner.invoke(app, ["smooth", str(path), "--at", "-5"])
    assert result.exit_code == 0, result.output
    assert _table(result.output) == []
    assert "no player had played by --at -5" in result.output
