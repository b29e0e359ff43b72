"""fit scores every outcome it fits a parameter for (issue 32): with ``draw_probability`` among the parameters, the
default objective is the outcome log-likelihood, draws included; a parameter left at a bound of its range is said
(``FitResult.at_bound`` and a :class:`podium.FitWarning`)."""

from __future__ import annotations

import warnings

import pytest

import podium
from podium.evaluation.fit import FitWarning


def _draw_heavy() -> podium.Matches:
    """A small history with about 45 % draws (simulated: TrueSkill's draw margin between equal players)."""
    return podium.simulate(40, 500, draw_probability=0.45, skill_sd=0.7, seed=5).matches


def test_draws_are_fitted_by_the_outcome_likelihood() -> None:
    matches = _draw_heavy()
    with warnings.catch_warnings():
        warnings.simplefilter("error", FitWarning)  # the default fit of this history needs no warning
        result = podium.fit(podium.TrueSkill, matches)
    assert result.metric == "log_likelihood" and "draw_probability" in result.params
    assert result.at_bound == ()
    assert 0.2 < result.params["draw_probability"] < 0.7, result.params
    # Held out, no worse than the defaults in either the outcome log-likelihood or the pair error.
    default = podium.evaluate(matches, {"d": podium.TrueSkill()}, start=result.split)["d"]
    assert result.report["TrueSkill"]["log_likelihood"] >= default["log_likelihood"] - 1e-9
    assert result.report["TrueSkill"]["pair_error"] <= default["pair_error"] + 0.02


def test_a_history_without_draws_does_not_fit_a_draw_probability() -> None:
    matches = podium.simulate(40, 300, seed=2).matches
    result = podium.fit(podium.TrueSkill, matches, max_evaluations=5)
    assert "draw_probability" not in result.params and result.metric == "pair_log_loss"


def test_a_parameter_at_a_bound_is_said() -> None:
    """Asked to fit a draw probability where nothing was drawn, the likelihood takes it to 0: the search's floor,
    which the result names and a FitWarning says."""
    matches = podium.simulate(40, 300, seed=2).matches
    with pytest.warns(FitWarning, match="draw_probability"):
        result = podium.fit(podium.TrueSkill, matches, params=["draw_probability"], metric="log_likelihood")
    assert result.at_bound == ("draw_probability",)
    assert result.params["draw_probability"] < 1e-4
    # An interior optimum is not flagged.
    with warnings.catch_warnings():
        warnings.simplefilter("error", FitWarning)
        inner = podium.fit(podium.Elo, matches, params=["k"])
    assert inner.at_bound == ()


@pytest.mark.parametrize("folder", ["chess_worldcup", "riichi_mahjong", "intl_football"])
def test_on_real_histories_with_draws_the_fit_beats_the_defaults(folder: str) -> None:
    """The shared histories with draws (chess 50 %, football 23 %, mahjong's rare ties): TrueSkill's default fit,
    draws in the objective where they inform it, predicts the held-out 30 % no worse than the defaults in pair error and outcome
    log-likelihood, with no parameter at a bound (measured: chess 0.374 against 0.415 and -0.982 against -1.757;
    football 0.245 against 0.256 and -0.904 against -1.027)."""
    from ..shared import load

    matches = load(folder)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", podium.ConvergenceWarning)
        result = podium.fit(podium.TrueSkill, matches)
    # Mahjong's ties are among four players, where TrueSkill's ordered update has no draw margin: nothing there
    # informs the draw probability, so fit leaves it (and the costly orderings) out.
    two_team = folder != "riichi_mahjong"
    assert ("draw_probability" in result.params) == two_team and result.at_bound == ()
    assert result.metric == ("log_likelihood" if two_team else "pair_log_loss")
    default = podium.evaluate(matches, {"d": podium.TrueSkill()}, start=result.split)["d"]
    fitted = result.report["TrueSkill"]
    assert fitted["pair_error"] <= default["pair_error"] and fitted["log_likelihood"] >= default["log_likelihood"]
