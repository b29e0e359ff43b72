"""The command line: simulate, rate and demo, through typer's runner."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import podium
from podium.cli import app

runner = CliRunner()


def test_simulate_then_rate(tmp_path: Path) -> None:
    history = tmp_path / "season.jsonl.gz"
    result = runner.invoke(app, ["simulate", "--players", "30", "--matches", "500", "--teams", "4", "--seed", "1",
                                 "--out", str(history), "--skills", str(tmp_path / "skills.csv")])
    assert result.exit_code == 0, result.output
    out = tmp_path / "ratings.csv"
    result = runner.invoke(app, ["rate", str(history), "--model", "plackett-luce", "--set", "k=16",
                                 "--set", "order=elimination", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "order='elimination'" in result.output and "k=16" in result.output
    with open(out) as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 30
    assert [float(r["mu"]) for r in rows] == sorted((float(r["mu"]) for r in rows), reverse=True)


def test_rate_reports_bad_model_parameters_and_bad_files(tmp_path: Path) -> None:
    history = tmp_path / "h.jsonl"
    history.write_text(json.dumps({"teams": [["a"], ["b"]], "ranks": [0, 1]}) + "\n"
                       + json.dumps({"teams": [["a"], ["a"]]}) + "\n")
    result = runner.invoke(app, ["rate", str(history), "--model", "elo"])
    assert result.exit_code == 1
    assert "line 2" in result.output and "more than once" in result.output
    result = runner.invoke(app, ["rate", str(history), "--model", "elo", "--set", "k=-3"])
    assert result.exit_code != 0 and "'k' parameter" in result.output
    result = runner.invoke(app, ["rate", str(history), "--model", "glicko"])
    assert result.exit_code != 0 and "unknown model" in result.output


def test_elo_on_a_free_for_all_points_to_the_multiplayer_models(tmp_path: Path) -> None:
    history = tmp_path / "ffa.jsonl"
    history.write_text(json.dumps({"teams": [["a"], ["b"], ["c"]]}) + "\n")
    result = runner.invoke(app, ["rate", str(history), "--model", "elo"])
    assert result.exit_code == 1 and "PlackettLuce" in result.output


def test_demo_shows_every_family_an_evaluation_smoothing_and_an_audit() -> None:
    result = runner.invoke(app, ["demo", "--players", "60", "--matches", "4000"])
    assert result.exit_code == 0, result.output
    assert "rank correlation" in result.output
    for family in ("Elo", "PairwiseElo", "PlackettLuce", "Thurstone", "TrueSkill", "Glicko2", "EloMMR"):
        assert f"│ {family} " in result.output, family
    assert "3. Evaluation" in result.output and "TrueSkill (fitted)" in result.output and "pair error" in result.output
    assert "4. Smoothing" in result.output and "smoothed 0.9" in result.output
    assert "5. Audit" in result.output and "flag(s); injected: one-sided pair:" in result.output


def test_demo_compiles_its_later_sections_in_a_child_and_leaves_none_behind(monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess
    import sys

    from podium.cli import rating

    children: list[subprocess.Popen[bytes]] = []
    asked: list[list[str]] = []

    def start(work: list[str]) -> subprocess.Popen[bytes]:
        asked.append(work)  # a child that would outlive the demo if it were not stopped
        children.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]))
        return children[0]

    monkeypatch.setattr(rating, "_compile_ahead", start)
    from podium import jit

    cold_budget = jit.COLD_BUDGET
    result = runner.invoke(app, ["demo", "--players", "20", "--matches", "400"])
    assert result.exit_code == 0, result.output
    assert asked == [["evaluation", "smoothing", "audit"]]
    assert children[0].poll() is not None  # stopped and reaped when the demo ended
    assert jit.COLD_BUDGET == cold_budget  # (0 during the demo, whose seasons compile: put back)


def test_compile_ahead_starts_podium_compile_of_known_work_only(monkeypatch: pytest.MonkeyPatch) -> None:
    from podium import jit
    from podium.cli import rating

    monkeypatch.setattr(jit, "_mode", "auto")
    result = runner.invoke(app, ["compile", "--only", "reading", "--quiet"])
    assert result.exit_code == 0, result.output
    assert result.output == ""
    assert jit.mode() == "auto"  # left as it was found (the work ran compiled)
    result = runner.invoke(app, ["compile", "--only", "reading", "--only", "chess"])
    assert result.exit_code == 2
    assert "--only" in result.output and "'chess'" in result.output and "trueskill" in result.output
    monkeypatch.setattr(jit, "_mode", "interpreted")
    assert rating._compile_ahead(["audit"]) is None  # nothing to compile: no child


def test_skip_invalid_rates_the_rest(tmp_path: Path) -> None:
    history = tmp_path / "h.jsonl"
    history.write_text(json.dumps({"teams": [["a"], ["b"]], "ranks": [0, 1]}) + "\n"
                       + json.dumps({"teams": [["a"], ["a"]]}) + "\n")
    result = runner.invoke(app, ["rate", str(history), "--model", "elo", "--skip-invalid"])
    assert result.exit_code == 0, result.output
    assert "skipped 1 malformed record" in result.output
    assert "1 matches, 2 players" in result.output


def test_unknown_file_extension_is_a_clear_error(tmp_path: Path) -> None:
    history = tmp_path / "games.txt"
    history.write_text("hello\n")
    result = runner.invoke(app, ["rate", str(history)])
    assert result.exit_code == 1
    assert "Cannot tell the format" in result.output and "Traceback" not in result.output


def test_rate_with_trueskill_ranks_by_the_conservative_score(tmp_path: Path) -> None:
    history = tmp_path / "season.jsonl"
    result = runner.invoke(app, ["simulate", "--players", "20", "--matches", "300", "--teams", "3", "--seed", "2",
                                 "--out", str(history)])
    assert result.exit_code == 0, result.output
    out = tmp_path / "ratings.csv"
    result = runner.invoke(app, ["rate", str(history), "--model", "trueskill", "--set", "beta=3.5",
                                 "--set", "draw_probability=0.05", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "TrueSkill(" in result.output and "beta=3.5" in result.output and "mu - 3 sigma" in result.output
    with open(out) as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 20
    scores = [float(r["mu"]) - 3 * float(r["sigma"]) for r in rows]
    assert scores == sorted(scores, reverse=True)
    result = runner.invoke(app, ["rate", str(history), "--model", "trueskill", "--set", "draw_probability=1.5"])
    assert result.exit_code != 0 and "draw_probability" in result.output


def test_rate_with_glicko2_and_rating_periods(tmp_path: Path) -> None:
    history = tmp_path / "season.jsonl"
    result = runner.invoke(app, ["simulate", "--players", "16", "--matches", "200", "--seed", "4", "--out", str(history)])
    assert result.exit_code == 0, result.output
    out = tmp_path / "ratings.csv"
    result = runner.invoke(app, ["rate", str(history), "--model", "glicko2", "--set", "period=10", "--set", "tau=0.4",
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "Glicko2(" in result.output and "period=10" in result.output
    with open(out) as handle:
        rows = {r["player"]: r for r in csv.DictReader(handle)}
    league = podium.League(podium.Glicko2(period=10, tau=0.4)).record_many(podium.read_matches(history))
    assert set(rows) == set(league.players)
    for player, row in rows.items():
        assert float(row["mu"]) == pytest.approx(league.rating(player).mu, rel=1e-12)
        assert float(row["sigma"]) == pytest.approx(league.rating(player).sigma, rel=1e-12)
    result = runner.invoke(app, ["rate", str(history), "--model", "glicko2", "--set", "period=0"])
    assert result.exit_code != 0 and "'period' parameter of Glicko2" in result.output
