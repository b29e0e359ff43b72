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
