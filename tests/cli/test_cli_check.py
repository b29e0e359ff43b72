"""``podium check``: components, thin links and provisional players of a history, through typer's runner.

The history is built so that every figure is known by construction: two scenes (round robins played five
times) joined by two bridge matches and by a traveller who played two matches on each side; a pair who met
once, apart from everyone.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from podium.cli import app

runner = CliRunner()


def write_history(path: Path) -> None:
    records = []
    for scene in ("abcde", "vwxyz"):
        for round_ in range(5):
            records += [{"id": f"{scene[0]}{round_}-{a}{b}", "teams": [[a], [b]]}
                        for a, b in itertools.combinations(scene, 2)]
    records += [{"id": "bridge1", "teams": [["a"], ["v"]]}, {"id": "bridge2", "teams": [["b"], ["w"]]}]
    records += [{"id": f"t{i + 1}", "teams": [["t"], [p]]} for i, p in enumerate("cxdy")]
    records += [{"id": "apart", "teams": [["p"], ["q"]], "ranks": [0, 0]}]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def table_rows(output: str, title: str) -> list[list[str]]:
    """The body lines of the rich table under ``title``, split into cells."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if title in line)
    rows = []
    for line in lines[start + 1:]:
        if line.startswith("└"):
            break
        if line.startswith("│"):
            rows.append([cell.strip() for cell in line.strip("│").split("│")])
    return rows


@pytest.fixture()
def history(tmp_path: Path) -> Path:
    path = tmp_path / "scenes.jsonl"
    write_history(path)
    return path


def test_check_reports_components_thin_links_and_provisional_players(history: Path) -> None:
    result = runner.invoke(app, ["check", str(history), "--thin", "5", "--min-size", "5", "--provisional", "5"])
    assert result.exit_code == 0, result.output
    out = result.output
    # 11 players in the scenes and the traveller, 2 apart: 100 scene matches + 2 bridges + 4 of the traveller's.
    assert "13 players in 2 components; the largest holds 11 (84.6%)" in out
    rows = table_rows(out, "13 players in 2 components")
    assert rows[0] == ["0", "11", "84.6%", "106", "a, b, c"]  # a-d, v-y played 21 matches, e and z 20
    assert rows[1] == ["1", "2", "15.4%", "1", "p, q"]
    # The scenes are groups of 5; four matches separate them (two bridges, two routes through the traveller),
    # and the four nearest the second scene are the bridges and the traveller's matches against it.
    link = table_rows(out, "thin links: groups of 5+ players connected through fewer than 5 matches")
    assert link[0][0] == "0" and link[0][1] == "0 (5 players)" and link[1][1] == "1 (5 players)"
    assert link[0][3:6] == ["4", "2", "bridge1, bridge2, t2, t4"]
    assert link[0][2].startswith("a, b") and link[1][2].startswith("v, w")
    provisional = table_rows(out, "provisional players (fewer than 5 games): 3 of 13 (23.1%)")
    assert provisional == [["1", "2", "p, q"], ["4", "1", "t"]]


def test_check_with_a_lower_threshold_finds_no_thin_link(history: Path) -> None:
    result = runner.invoke(app, ["check", str(history), "--thin", "4", "--min-size", "5"])
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "No thin links: 2 groups of 5+ players, and every two of them in one component are connected " \
           "through at least 4 matches." in flat
    # By default (fewer than 10 games) the traveller and the pair apart are the provisional players.
    assert "provisional players (fewer than 10 games): 3 of 13" in flat


@pytest.mark.parametrize("option", ["--thin", "--min-size", "--provisional"])
def test_check_refuses_a_bad_option_by_name(history: Path, option: str) -> None:
    result = runner.invoke(app, ["check", str(history), option, "0"])
    assert result.exit_code == 2
    assert f"Invalid value for {option}: must be an int >= 1, got 0" in " ".join(result.output.split())


def test_check_stops_at_a_malformed_record_unless_told_to_skip(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"teams": [["a"], ["b"]]}) + "\n" + json.dumps({"teams": [["a"], ["a"]]}) + "\n")
    result = runner.invoke(app, ["check", str(path)])
    assert result.exit_code == 1 and "more than once" in result.output
    result = runner.invoke(app, ["check", str(path), "--skip-invalid"])
    assert result.exit_code == 0, result.output
    assert "2 players in 1 component; the largest holds 2 (100.0%)" in result.output


def test_rate_marks_and_evaluate_drops_the_unconnected(tmp_path) -> None:
    """c and d never met anyone of the a-b-e group: `podium rate` marks them, `podium evaluate --connected-only`
    counts only the two a-b games played after a and b first met (the others joined players not yet connected)."""
    import podium
    from typer.testing import CliRunner

    from podium.cli import app

    games = [podium.Match([["a"], ["b"]], [0, 1]) for _ in range(3)]
    games += [podium.Match([["c"], ["d"]], [0, 1]), podium.Match([["e"], ["a"]], [0, 1])]
    path = tmp_path / "two.jsonl"
    podium.write_matches(games, path)
    out = CliRunner().invoke(app, ["rate", str(path), "--model", "elo"])
    assert out.exit_code == 0, out.output
    assert "c †" in out.output and "d †" in out.output and "a †" not in out.output and "e †" not in out.output
    out = CliRunner().invoke(app, ["evaluate", str(path), "--model", "elo", "--connected-only", "--json"])
    assert out.exit_code == 0, out.output
    import json

    data = json.loads(out.output)
    assert data["dropped_pairs"] == 3 and data["models"]["elo"]["pairs"] == 2
