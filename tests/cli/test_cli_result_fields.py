"""The command line reads what a result says beyond the order (issue 31): scores, advantage and match weight."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

import podium
from podium import Match
from podium.cli import app

runner = CliRunner()


def _history(path: Path) -> list[Match]:
    """Duels with goals and a home side: the home team 100 Elo points stronger than its rating."""
    rng = np.random.default_rng(3)
    skill = rng.normal(0.0, 150.0, 30)
    matches = []
    for m in range(3000):
        a, b = rng.choice(30, 2, replace=False)
        p = 1.0 / (1.0 + 10.0 ** (-(skill[a] + 100.0 - skill[b]) / 400.0))
        goals = [int(rng.poisson(1.0 + 2.0 * p)), int(rng.poisson(1.0 + 2.0 * (1.0 - p)))]
        matches.append(Match([[f"t{a}"], [f"t{b}"]], scores=goals, advantage=[1, 0], weight=1.0 + (m % 3 == 0),
                             time=float(m)))
    podium.write_matches(matches, path)
    return matches


def test_fit_finds_the_home_advantage_and_the_margin(tmp_path: Path) -> None:
    history = tmp_path / "football.jsonl"
    _history(history)
    result = runner.invoke(app, ["fit", str(history), "--model", "elo"])
    assert result.exit_code == 0, result.output
    fitted = {m.group(1): float(m.group(3)) for m in re.finditer(r"│ (\w+)\s+│\s+(\S+) │\s+(\S+) │", result.output)}
    assert 40.0 < fitted["advantage"] < 200.0
    assert "margin_power" in fitted


def test_rate_reads_the_fields_with_the_model_set_to_use_them(tmp_path: Path) -> None:
    history = tmp_path / "football.jsonl"
    matches = _history(history)
    result = runner.invoke(app, ["rate", str(history), "--model", "elo", "--set", "advantage=100", "--set",
                                 "margin=eloratings", "--top", "3"])
    assert result.exit_code == 0, result.output
    league = podium.League(podium.Elo(advantage=100.0, margin="eloratings")).record_many(matches)
    plain = podium.League(podium.Elo()).record_many(matches)
    best = league.leaderboard(top=1)[0]
    assert re.search(rf"│ 1 │ {best.player}\s+│ {best.mu:.1f} │", result.output)
    assert f"{best.mu:.1f}" != f"{plain.rating(best.player).mu:.1f}"  # the fields moved the ratings
