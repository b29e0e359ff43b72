"""benchmarks/evaluate_real.py, the generator of docs/evaluation.md, runs and writes what the README promises.

Run on two small real data sets (skipped where ../shared/data is absent) into a temporary file; the figures it
writes are checked against podium.evaluate run here on the same data.
"""

from __future__ import annotations

import importlib.util
import re
import sys

import pytest

import podium
from ..shared import ROOT

DATA = ROOT.parent / "shared" / "data"
NAMES = ["chess_worldcup", "riichi_mahjong"]


def _module():
    spec = importlib.util.spec_from_file_location("evaluate_real", ROOT / "benchmarks" / "evaluate_real.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["evaluate_real"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> str:
    if not all((DATA / n / "matches.jsonl.gz").exists() for n in NAMES):
        pytest.skip(f"the real data sets are not at {DATA}")
    out = tmp_path_factory.mktemp("docs") / "evaluation.md"
    assert _module().main(["--datasets", ",".join(NAMES), "--out", str(out)]) == 0
    assert out.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return out.read_text(encoding="utf-8")


def _row(document: str, title: str, name: str) -> list[str]:
    section = document.split(f"## {title}", 1)[1].split("\n## ", 1)[0]
    header = next(line for line in section.splitlines() if line.startswith("| data set"))
    row = next(line for line in section.splitlines() if line.startswith(f"| {name} |"))
    cells = [c.strip().strip("*") for c in row.strip("|").split("|")]
    columns = [c.strip().replace(" **(fitted)**", " fitted") for c in header.strip("|").split("|")]
    return [f"{c}={v}" for c, v in zip(columns, cells)]


def test_every_metric_table_has_every_model_and_data_set(document: str) -> None:
    for title in ("Pair log loss", "Pair error", "Log-likelihood per match"):
        for name in NAMES:
            cells = dict(c.split("=", 1) for c in _row(document, title, name))
            for model in ("PlackettLuce", "TrueSkill", "Thurstone fitted", "TrueSkill fitted", "trueskill pkg",
                          "openskill PL"):
                assert model in cells, (title, name, model)
    assert "held-out" in document and "(fitted)" in document


def test_the_default_columns_equal_podium_evaluate_on_the_held_out_part(document: str) -> None:
    # The document's default-model figures are podium.evaluate's with start = round(0.7 M), recomputed here.
    for name in NAMES:
        matches = podium.read_matches(DATA / name / "matches.jsonl.gz", errors="skip")
        cut = round(0.7 * len(matches))
        report = podium.evaluate(matches, {"PlackettLuce": podium.PlackettLuce(), "TrueSkill": podium.TrueSkill()},
                                 start=cut)
        cells = dict(c.split("=", 1) for c in _row(document, "Pair log loss", name))
        for model in ("PlackettLuce", "TrueSkill"):
            assert float(cells[model]) == pytest.approx(report[model]["pair_log_loss"], abs=5e-5)
        held = re.search(rf"\| {name} \| ([\d,]+) \(([\d,]+)\)", document)
        assert held is not None
        assert int(held.group(1).replace(",", "")) == len(matches)
        assert int(held.group(2).replace(",", "")) == len(matches) - cut


def test_the_verdict_row_agrees_with_the_table(document: str) -> None:
    for name in NAMES:
        cells = dict(c.split("=", 1) for c in _row(document, "Pair log loss", name))
        verdict = next(line for line in document.splitlines() if line.startswith(f"| {name} | T"))
        parts = [p.strip().strip("*") for p in verdict.strip("|").split("|")]
        ours = float(cells[f"{parts[1]} fitted"])
        assert float(parts[2]) == pytest.approx(ours, abs=1e-4)
        beats = ours < float(cells["trueskill pkg"]) and ours < float(cells["openskill PL"])
        assert parts[5] == ("yes" if beats else "no")


def test_the_team_games_table_is_each_models_held_out_report(monkeypatch: pytest.MonkeyPatch) -> None:
    """benchmarks/teams.py's table (the "Team games" section of docs/evaluation.md) on a small history: every
    model's row holds its held-out default and fitted figures, and the last column is the fitted loss minus
    fitted TrueSkill's."""
    _module()  # puts benchmarks/ on the path
    import teams

    models = {name: teams.MODELS[name] for name in ("PlackettLuce", "TrueSkill", "Glicko2")}  # three: seconds
    monkeypatch.setattr(teams, "MODELS", models)
    m = podium.simulate(30, 300, teams=2, team_size=(3, 2), parties=0.5, party_size=2, seed=3).matches
    rows = teams.measure(m)
    lines = teams.markdown("small", rows)
    assert [line.split("|")[1].strip() for line in lines[4:]] == list(models)
    cut = int(0.7 * len(m))
    given = podium.evaluate(m, {"x": podium.PlackettLuce()}, start=cut)["x"]
    cells = [c.strip() for c in lines[4].strip("|").split("|")]
    assert float(cells[1]) == pytest.approx(given["pair_log_loss"], abs=5e-5)
    assert float(cells[2]) == pytest.approx(given["calibration_error"], abs=5e-5)
    reference = rows["TrueSkill"][1]["pair_log_loss"]
    assert float(cells[5]) == pytest.approx(rows["PlackettLuce"][1]["pair_log_loss"] - reference, abs=5e-5)
