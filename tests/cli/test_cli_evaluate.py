"""The ``evaluate`` and ``fit`` commands, through typer's runner, checked against the library calls."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import podium
from podium.cli import app

runner = CliRunner()

METRICS = ("pair_error", "pair_log_loss", "log_likelihood")
ALL_MODELS = ["elo", "pairwise-elo", "plackett-luce", "thurstone", "trueskill", "glicko2", "elo-mmr"]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


# -- histories --------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def duel_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "duels.jsonl"
    podium.write_matches(podium.simulate(30, 300, seed=11).matches, path)
    return path


@pytest.fixture(scope="module")
def ffa_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "three.jsonl"
    podium.write_matches(podium.simulate(30, 200, teams=3, seed=12).matches, path)
    return path


@pytest.fixture(scope="module")
def duels(duel_file: Path) -> podium.Matches:
    return podium.read_matches(duel_file)


# -- helpers ----------------------------------------------------------------------------------------------------
def _run(*args: Any) -> Any:
    return runner.invoke(app, [str(a) for a in args])


def _ok(*args: Any) -> Any:
    result = _run(*args)
    assert result.exit_code == 0, result.output
    assert result.exception is None
    return result


def _json(*args: Any) -> dict[str, Any]:
    return json.loads(_ok(*args, "--json").stdout)


def _flat(text: str) -> str:
    """The output without rich's box characters and line wrapping, for looking up messages."""
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", text).split())


def _rows(output: str) -> dict[str, list[str]]:
    """A rich table's body rows: first cell -> the other cells."""
    rows = {}
    for line in output.splitlines():
        if line.startswith("│"):
            cells = [c.strip() for c in line.strip("│").split("│")]
            rows[cells[0]] = cells[1:]
    return rows


def _assert_same_report(data: dict[str, Any], report: podium.Report) -> None:
    """The CLI's JSON against the library's report: every figure but the timings."""
    expected = report.to_dict()
    for key in ("matches", "pairs", "players", "total_matches", "start", "challenge", "min_games"):
        assert data[key] == expected[key], key
    assert list(data["models"]) == list(expected["models"])
    for name, row in expected["models"].items():
        for metric in METRICS:
            if row[metric] is None:
                assert data["models"][name][metric] is None
            else:
                assert data["models"][name][metric] == pytest.approx(row[metric], rel=1e-12, abs=1e-12)
        assert data["models"][name]["pairs"] == row["pairs"]
        assert data["models"][name]["matches"] == row["matches"]
    assert list(data["challenged"]) == list(expected["challenged"])
    for a, row in expected["challenged"].items():
        assert list(data["challenged"][a]) == list(row)
        for b, value in row.items():
            assert data["challenged"][a][b] == (None if value is None else pytest.approx(value, abs=1e-12))


def _assert_exits_with(result: Any, code: int | None, *needles: str) -> None:
    """A clean exit (no traceback) with a message naming the problem."""
    if code is None:
        assert result.exit_code != 0
    else:
        assert result.exit_code == code
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    flat = _flat(result.output)
    for needle in needles:
        assert needle in flat, (needle, result.output)
    assert "Traceback" not in result.output


# -- evaluate: tables and JSON ----------------------------------------------------------------------------------
def test_evaluate_prints_a_table_of_both_models_matching_the_library(duel_file: Path,
                                                                     duels: podium.Matches) -> None:
    result = _ok("evaluate", duel_file, "--model", "trueskill", "--model", "elo")
    report = podium.evaluate(duels, {"trueskill": podium.TrueSkill(), "elo": podium.Elo()})
    rows = _rows(result.output)
    assert "all 300 matches" in result.output
    for name in ("trueskill", "elo"):
        assert rows[name][:4] == [format(report[name][m], ".4f") for m in (*METRICS, "calibration_error")]
    assert "challenged" in result.output and "[1] trueskill" in result.output and "[2] elo" in result.output
    for j, a in enumerate(["trueskill", "elo"]):
        assert rows[f"[{j + 1}] {a}"] == [format(report.challenged[a][b], ".3f") for b in ("trueskill", "elo")]


def test_evaluate_json_equals_the_library(duel_file: Path) -> None:
    data = _json("evaluate", duel_file, "--model", "trueskill", "--model", "elo")
    assert {"models", "matches", "pairs", "challenged", "fitted"} <= set(data)
    assert data["fitted"] == {}
    report = podium.evaluate(podium.read_matches(duel_file), {"trueskill": podium.TrueSkill(), "elo": podium.Elo()})
    _assert_same_report(data, report)
    assert data["matches"] == 300 and data["start"] == 0 and data["pairs"] == report.pairs > 0


def test_evaluate_passes_min_games_and_challenge_through(duel_file: Path, duels: podium.Matches) -> None:
    data = _json("evaluate", duel_file, "--model", "trueskill", "--model", "elo", "--min-games", "3",
                 "--challenge", "0.5")
    report = podium.evaluate(duels, {"trueskill": podium.TrueSkill(), "elo": podium.Elo()}, min_games=3,
                             challenge=0.5)
    _assert_same_report(data, report)
    assert data["min_games"] == 3 and data["challenge"] == 0.5
    default = podium.evaluate(duels, {"trueskill": podium.TrueSkill(), "elo": podium.Elo()})
    assert data["matches"] < default.matches  # the first games of each player are left out
    table = _ok("evaluate", duel_file, "--model", "elo", "--model", "trueskill", "--challenge", "0.5").output
    assert "on the 50% of matches" in table


def test_evaluate_rejects_a_negative_min_games(duel_file: Path) -> None:
    result = _run("evaluate", duel_file, "--model", "elo", "--min-games", "-1")
    _assert_exits_with(result, None, "--min-games")


@pytest.mark.parametrize("challenge", ["0", "1.5"])
def test_evaluate_rejects_a_challenge_outside_0_1(duel_file: Path, challenge: str) -> None:
    result = _run("evaluate", duel_file, "--model", "elo", "--challenge", challenge)
    _assert_exits_with(result, 1, "'challenge'", challenge)


# -- evaluate --fit ---------------------------------------------------------------------------------------------
def test_evaluate_fit_reports_the_fitted_models_on_the_held_out_part(duel_file: Path,
                                                                     duels: podium.Matches) -> None:
    data = _json("evaluate", duel_file, "--model", "trueskill", "--model", "elo", "--fit")
    assert list(data["models"]) == ["trueskill", "elo", "trueskill (fitted)", "elo (fitted)"]
    assert data["start"] == round(0.7 * len(duels)) == 210
    assert data["total_matches"] == 300 and data["matches"] == 90
    assert set(data["fitted"]) == {"trueskill", "elo"}
    assert set(data["fitted"]["trueskill"]) == {"beta", "tau"}  # (no draws here to inform a draw probability)
    assert set(data["fitted"]["elo"]) == {"k", "provisional"}
    for label, model in (("trueskill", podium.TrueSkill()), ("elo", podium.Elo())):
        result = podium.fit(model, duels)
        assert result.split == data["start"]
        assert data["fitted"][label] == pytest.approx(result.params, rel=1e-12)
        for metric in METRICS:
            assert data["models"][f"{label} (fitted)"][metric] == pytest.approx(
                result.report[type(model).__name__][metric], rel=1e-12)
    # the models as given are scored on the same held-out part
    given = podium.evaluate(duels, {"trueskill": podium.TrueSkill()}, start=210)
    assert data["models"]["trueskill"]["pair_log_loss"] == pytest.approx(given["trueskill"]["pair_log_loss"],
                                                                          rel=1e-12)


def test_evaluate_fit_split(duel_file: Path, duels: podium.Matches) -> None:
    data = _json("evaluate", duel_file, "--model", "elo", "--fit", "--split", "0.5")
    assert data["start"] == round(0.5 * len(duels)) == 150
    assert data["matches"] == 150
    assert data["fitted"]["elo"] == pytest.approx(podium.fit(podium.Elo(), duels, split=0.5).params, rel=1e-12)
    table = _ok("evaluate", duel_file, "--model", "elo", "--fit", "--split", "0.5").output
    assert "fitted on the first 150" in table and "elo fitted: k=" in table
    result = _run("evaluate", duel_file, "--model", "elo", "--fit", "--split", "1.5")
    _assert_exits_with(result, None, "--split")


# -- evaluate --plot --------------------------------------------------------------------------------------------
def test_evaluate_plot_writes_a_png(duel_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.png"
    result = _ok("evaluate", duel_file, "--model", "trueskill", "--model", "elo", "--plot", out)
    assert "figure written to" in result.output
    data = out.read_bytes()
    assert data[:8] == PNG_MAGIC and len(data) > 10_000


def test_evaluate_plot_with_json_keeps_stdout_json(duel_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "fig.png"
    data = _json("evaluate", duel_file, "--model", "elo", "--plot", out)
    assert list(data["models"]) == ["elo"]
    assert out.read_bytes()[:8] == PNG_MAGIC


def test_evaluate_plot_when_nothing_is_scored(duel_file: Path, tmp_path: Path) -> None:
    result = _run("evaluate", duel_file, "--model", "elo", "--min-games", "1000", "--plot", tmp_path / "x.png")
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)


# -- model specs ------------------------------------------------------------------------------------------------
def test_model_specs_reach_the_models(duel_file: Path, duels: podium.Matches) -> None:
    data = _json("evaluate", duel_file, "--model", "thurstone:k=10", "--model", "trueskill:beta=3,tau=0.1")
    assert list(data["models"]) == ["thurstone:k=10", "trueskill:beta=3,tau=0.1"]
    report = podium.evaluate(duels, {"thurstone:k=10": podium.Thurstone(k=10),
                                     "trueskill:beta=3,tau=0.1": podium.TrueSkill(beta=3, tau=0.1)})
    _assert_same_report(data, report)
    defaults = podium.evaluate(duels, {"thurstone": podium.Thurstone(), "trueskill": podium.TrueSkill()})
    assert data["models"]["thurstone:k=10"]["pair_log_loss"] != defaults["thurstone"]["pair_log_loss"]
    assert data["models"]["trueskill:beta=3,tau=0.1"]["pair_log_loss"] != defaults["trueskill"]["pair_log_loss"]


def test_parse_model_spec() -> None:
    from podium.cli import parse_model_spec

    label, model = parse_model_spec("trueskill:beta=3,tau=0.1")
    assert label == "trueskill:beta=3,tau=0.1"
    assert isinstance(model, podium.TrueSkill) and model.beta == 3 and model.tau == 0.1
    label, model = parse_model_spec("plackett-luce:k=16,order=elimination")
    assert isinstance(model, podium.PlackettLuce) and model.k == 16 and model.order == "elimination"
    label, model = parse_model_spec("elo")
    assert label == "elo" and isinstance(model, podium.Elo) and model.k == 32


def test_an_unknown_model_is_named(duel_file: Path) -> None:
    result = _run("evaluate", duel_file, "--model", "glicko")
    _assert_exits_with(result, None, "unknown model 'glicko'", "--model")


@pytest.mark.parametrize(("spec", "needles"), [
    ("elo:k=-1", ("'elo:k=-1'", "'k' parameter", "positive")),
    ("elo:k", ("expected param=value",)),
    ("trueskill:draw_probability=1.5", ("draw_probability",)),
    ("elo:bogus=1", ("bogus",)),
])
def test_a_bad_model_parameter_is_named(duel_file: Path, spec: str, needles: tuple[str, ...]) -> None:
    result = _run("evaluate", duel_file, "--model", spec)
    _assert_exits_with(result, None, *needles)


def test_elo_on_a_free_for_all_is_refused(ffa_file: Path) -> None:
    result = _run("evaluate", ffa_file, "--model", "elo")
    _assert_exits_with(result, 1, "Elo rates two teams", "got 3", "PlackettLuce")
    result = _run("evaluate", ffa_file, "--model", "elo", "--fit")
    _assert_exits_with(result, 1, "Elo rates two teams")


def test_a_single_match_is_not_enough(tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({"teams": [["a"], ["b"]], "ranks": [0, 1]}) + "\n")
    for command in ("evaluate", "fit"):
        result = _run(command, path)
        _assert_exits_with(result, 1, "1 match(es)", "at least 2")


def _with_a_malformed_record(duel_file: Path, tmp_path: Path) -> Path:
    lines = duel_file.read_text().splitlines()
    lines.insert(5, json.dumps({"teams": [["a"], ["a"]]}))
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_malformed_record_stops_unless_skipped(duel_file: Path, tmp_path: Path) -> None:
    path = _with_a_malformed_record(duel_file, tmp_path)
    result = _run("evaluate", path, "--model", "elo")
    _assert_exits_with(result, 1, "line 6", "more than once", "--skip-invalid")
    result = _ok("evaluate", path, "--model", "elo", "--skip-invalid")
    assert "skipped 1 malformed record" in _flat(result.output)
    assert "all 300 matches" in result.output
    report = podium.evaluate(podium.read_matches(duel_file), {"elo": podium.Elo()})
    assert _rows(result.output)["elo"][:3] == [format(report["elo"][m], ".4f") for m in METRICS]
    result = _run("fit", path, "--model", "elo")
    _assert_exits_with(result, 1, "line 6")
    assert "held-out" in _ok("fit", path, "--model", "elo", "--skip-invalid").output


def test_json_with_skip_invalid_is_still_json(duel_file: Path, tmp_path: Path) -> None:
    path = _with_a_malformed_record(duel_file, tmp_path)
    result = _ok("evaluate", path, "--model", "elo", "--skip-invalid", "--json")
    data = json.loads(result.stdout)
    assert data["total_matches"] == 300


# -- default models ---------------------------------------------------------------------------------------------
def test_default_models_on_a_two_team_history(duel_file: Path, duels: podium.Matches) -> None:
    data = _json("evaluate", duel_file)
    assert list(data["models"]) == ALL_MODELS
    report = podium.evaluate(duels, {name: podium.models.MODELS[name]() for name in ALL_MODELS})
    _assert_same_report(data, report)


def test_default_models_on_a_three_team_history_leave_elo_out(ffa_file: Path) -> None:
    data = _json("evaluate", ffa_file)
    assert list(data["models"]) == ALL_MODELS[1:]
    assert data["pairs"] == 3 * 200  # no draws: every pair of every match is decided
    result = _ok("evaluate", ffa_file)
    assert "plackett-luce" in result.output and "│ elo " not in result.output


# -- fit --------------------------------------------------------------------------------------------------------
def test_fit_prints_the_parameters_and_the_held_out_score(duel_file: Path, duels: podium.Matches) -> None:
    result = _ok("fit", duel_file, "--model", "trueskill")
    fitted = podium.fit(podium.TrueSkill(), duels)
    rows = _rows(result.output)
    assert f"fitted on matches 1-{fitted.split}, scored on {fitted.split + 1}-300" in result.output
    assert set(fitted.params) == {"beta", "tau"}  # (no draws: no draw probability)
    for name, value in fitted.params.items():
        assert rows[name] == [format(float(getattr(podium.TrueSkill(), name)), ".6g"), format(value, ".6g")]
    given = podium.evaluate(duels, {"given": podium.TrueSkill()}, start=fitted.split)
    assert rows["held-out pair_log_loss"] == [format(given["given"]["pair_log_loss"], ".5f"),
                                              format(fitted.score, ".5f")]
    assert rows["training pair_log_loss"][1] == format(fitted.train_score, ".5f")
    assert f"{fitted.evaluations} replays" in result.output


def test_fit_only_the_named_parameter(duel_file: Path, duels: podium.Matches) -> None:
    result = _ok("fit", duel_file, "--model", "trueskill", "--param", "beta")
    fitted = podium.fit(podium.TrueSkill(), duels, params=["beta"])
    rows = _rows(result.output)
    assert rows["beta"][1] == format(fitted.params["beta"], ".6g")
    assert "tau" not in rows and "draw_probability" not in rows
    assert rows["held-out pair_log_loss"][1] == format(fitted.score, ".5f")


def test_fit_with_fixed_settings_in_the_spec(duel_file: Path, duels: podium.Matches) -> None:
    result = _ok("fit", duel_file, "--model", "trueskill:draw_probability=0.01", "--param", "beta")
    fitted = podium.fit(podium.TrueSkill(draw_probability=0.01), duels, params=["beta"])
    rows = _rows(result.output)
    assert rows["beta"][1] == format(fitted.params["beta"], ".6g")
    assert rows["held-out pair_log_loss"][1] == format(fitted.score, ".5f")


def test_fit_on_the_log_likelihood(duel_file: Path, duels: podium.Matches) -> None:
    result = _ok("fit", duel_file, "--model", "elo", "--metric", "log_likelihood")
    fitted = podium.fit(podium.Elo(), duels, metric="log_likelihood")
    rows = _rows(result.output)
    assert rows["k"][1] == format(fitted.params["k"], ".6g")
    assert rows["held-out log_likelihood"][1] == format(fitted.score, ".5f")
    assert "held-out pair_log_loss" not in rows


def test_fit_split(duel_file: Path, duels: podium.Matches) -> None:
    result = _ok("fit", duel_file, "--model", "elo", "--split", "0.5")
    fitted = podium.fit(podium.Elo(), duels, split=0.5)
    assert "fitted on matches 1-150, scored on 151-300" in result.output
    assert _rows(result.output)["held-out pair_log_loss"][1] == format(fitted.score, ".5f")


@pytest.mark.parametrize(("args", "needles"), [
    (["--metric", "bogus"], ("'metric'", "'bogus'")),
    (["--param", "bogus"], ("cannot fit 'bogus'",)),
    (["--param", "k"], ("cannot fit 'k'",)),
    (["--split", "1.5"], ("'split'",)),
])
def test_fit_reports_bad_options(duel_file: Path, args: list[str], needles: tuple[str, ...]) -> None:
    result = _run("fit", duel_file, "--model", "trueskill", *args)
    _assert_exits_with(result, 1, *needles)


# -- the smoother on the command line (issue 32) -------------------------------------------------------------------
def test_evaluate_takes_the_smoother(duel_file: Path, duels: podium.Matches) -> None:
    """``--model trueskill-through-time``: its evidence per match in the log-likelihood column, beside a filter, as
    :func:`podium.evaluate` reports it; with ``--fit``, fitted by its evidence."""
    data = _json("evaluate", duel_file, "--model", "trueskill-through-time:gamma=0.01", "--model", "trueskill")
    report = podium.evaluate(duels, {"trueskill-through-time:gamma=0.01": podium.TrueSkillThroughTime(gamma=0.01),
                                     "trueskill": podium.TrueSkill()})
    _assert_same_report(data, report)
    fitted = _json("evaluate", duel_file, "--model", "trueskill-through-time", "--fit")
    result = podium.fit(podium.TrueSkillThroughTime, duels)
    assert fitted["fitted"]["trueskill-through-time"] == pytest.approx(result.params, rel=1e-12)


def test_fit_takes_the_smoother(duel_file: Path, duels: podium.Matches) -> None:
    result = _ok("fit", duel_file, "--model", "trueskill-through-time")
    fitted = podium.fit(podium.TrueSkillThroughTime(), duels)
    rows = _rows(result.output)
    for name, value in fitted.params.items():
        assert rows[name][1] == format(value, ".6g")
    assert rows["held-out log_likelihood"][1] == format(fitted.score, ".5f")
    assert rows["training log_evidence"][1] == format(fitted.train_score, ".5f")
    bad = _run("fit", duel_file, "--model", "trueskill-throughtime")
    assert bad.exit_code != 0 and "trueskill-through-time" in _flat(bad.output)
