"""The README's library example runs as written (with its history file simulated) and says what it shows."""

from __future__ import annotations

import math
import re
from pathlib import Path

import podium

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_library_example_runs(tmp_path: Path, monkeypatch) -> None:
    text = README.read_text(encoding="utf-8")
    code = re.search(r"## The library\s+```python\n(.*?)```", text, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    podium.write_matches(podium.simulate(30, 300, teams=4, seed=1).matches, "games.jsonl.gz")
    names: dict = {}
    exec(compile(code, "README.md", "exec"), names)
    assert (round(names["new"]["ann"].mu, 2), round(names["new"]["bob"].mu, 2)) == (1221.23, 1478.77)
    # The comment beside it: log(2!/4!) for two finishers and two non-finishers among four new players.
    assert math.isclose(names["pl"].log_likelihood(names["race"], {}), math.log(2 / 24), rel_tol=1e-12)
    # TrueSkill: the non-finishers (dee, eve) did not gain, the winner did.
    after = names["after"]
    assert after["dee"].mu < 25.0 and after["eve"].mu < 25.0 < after["cy"].mu


def test_readme_whole_history_example_says_what_it_shows(tmp_path: Path, monkeypatch) -> None:
    """The TrueSkill Through Time section runs on the real football history and its comments are what it gives."""
    data = Path(__file__).resolve().parents[2] / "shared" / "data" / "intl_football" / "matches.jsonl.gz"
    if not data.exists():
        import pytest

        pytest.skip(f"{data} is not present (the real data sets live in ../shared/data)")
    text = README.read_text(encoding="utf-8")
    code = re.search(r"## Whole-history ratings.*?```python\n(.*?)```", text, re.S).group(1)
    code = code.replace("../shared/data/intl_football/matches.jsonl.gz", str(data))
    monkeypatch.chdir(tmp_path)
    names: dict = {}
    exec(compile(code, "README.md", "exec"), names)
    params = names["fitted"].params
    assert (round(params["beta"], 2), round(params["gamma"], 3), round(params["draw_probability"], 2)) == (
        5.13, 0.050, 0.29)
    smoothed = names["smoothed"]
    assert smoothed.converged and smoothed.iterations == 27
    assert round(smoothed.log_evidence, 1) == -46328.8
    top = smoothed.leaderboard(at="1954-07-01", top=3)
    assert [r.player for r in top] == ["Hungary", "Argentina", "Brazil"]
    assert (round(top[0].mu, 1), round(top[0].sigma, 1)) == (19.4, 1.2)
    top = smoothed.leaderboard(at="2010-07-01", top=3)
    assert [r.player for r in top] == ["Spain", "Brazil", "Netherlands"]
    assert (tmp_path / "football.png").stat().st_size > 10_000
