"""What a newcomer adds to its team (issue 32): ``newcomer`` in every model that sums teams, from 0 (the centred sum)
to the prior mean (the paper's literal sum), fitted by ``fit`` where teams' sizes differ."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import podium
from podium import Match, Rating
from podium.models.base import has_draws, has_uneven_teams

SUMMING = [podium.Elo, podium.PairwiseElo, podium.PlackettLuce, podium.Thurstone, podium.TrueSkill, podium.EloMMR]
FOUR_THREE = Match([["a", "b", "c", "d"], ["e", "f", "g"]], ranks=[1, 0])


def _ratings(start: float, step: float, sigma: float = 0.0) -> dict[str, Rating]:
    return {p: Rating(start + step * i, sigma) for i, p in enumerate("abcdefg")}


def test_trueskill_literal_sum_is_newcomer_at_mu() -> None:
    """``center=False`` (the paper's ``sum w s``) is ``newcomer = mu`` with centring: the same update and prediction."""
    r = _ratings(20.0, 1.5, 4.0)
    literal, shifted = podium.TrueSkill(center=False), podium.TrueSkill(newcomer=25.0)
    a, b = literal.rate(FOUR_THREE, r), shifted.rate(FOUR_THREE, r)
    assert max(abs(a[p].mu - b[p].mu) + abs(a[p].sigma - b[p].sigma) for p in a) < 1e-12
    np.testing.assert_allclose(literal.win_probabilities(FOUR_THREE.teams, r),
                               shifted.win_probabilities(FOUR_THREE.teams, r), rtol=0, atol=1e-14)
    # ... and the centred model differs here (4 v 3), but not in an even game.
    assert abs(podium.TrueSkill().win_probabilities(FOUR_THREE.teams, r)[0]
               - shifted.win_probabilities(FOUR_THREE.teams, r)[0]) > 0.1
    even = Match([["a", "b"], ["c", "d"]])
    np.testing.assert_allclose(podium.TrueSkill(newcomer=7.0).win_probabilities(even.teams, r),
                               podium.TrueSkill().win_probabilities(even.teams, r), rtol=0, atol=1e-14)


def test_elo_team_strength_gains_newcomer_per_player() -> None:
    """Elo's two-team probability is ``1 / (1 + exp(-(s1 - s2)))`` with ``s = sum (r - initial + newcomer) / (scale
    c)`` (closed form: ``c = sqrt(1 + spread (N - 1))``, ``N`` the mean team size)."""
    r = _ratings(1480.0, 10.0)
    model = podium.Elo(newcomer=120.0)
    scale, c = float(model.scale), math.sqrt(1.0 + (3.5 - 1.0))
    s1 = sum(r[p].mu - 1500.0 + 120.0 for p in "abcd") / (scale * c)
    s2 = sum(r[p].mu - 1500.0 + 120.0 for p in "efg") / (scale * c)
    expected = 1.0 / (1.0 + math.exp(-(s1 - s2)))
    assert model.win_probabilities(FOUR_THREE.teams, r)[0] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("cls", SUMMING)
def test_newcomer_favours_the_larger_team_and_only_in_uneven_games(cls: type) -> None:
    r = _ratings(float(cls().prior.mu), 0.0, float(cls().prior.sigma))
    base = cls().win_probabilities(FOUR_THREE.teams, r)[0]
    assert base == pytest.approx(0.5, abs=1e-9)  # newcomers' teams are even whatever their sizes
    unit = {"TrueSkill": 4.0, "EloMMR": 80.0}.get(cls.__name__, 170.0)
    more = cls(newcomer=unit).win_probabilities(FOUR_THREE.teams, r)[0]
    less = cls(newcomer=-unit).win_probabilities(FOUR_THREE.teams, r)[0]
    assert less < base < more
    even = Match([["a", "b"], ["c", "d"]])
    np.testing.assert_allclose(cls(newcomer=unit).win_probabilities(even.teams, r),
                               cls().win_probabilities(even.teams, r), rtol=0, atol=1e-12)
    # The replay reads it too: the larger team's win moves its members less when it was expected.
    after = cls(newcomer=unit).rate(Match(FOUR_THREE.teams), r)
    plain = cls().rate(Match(FOUR_THREE.teams), r)
    assert after["a"].mu - r["a"].mu < plain["a"].mu - r["a"].mu


def test_which_histories_inform_newcomer_and_draws() -> None:
    even = podium.simulate(30, 50, team_size=2, seed=1).matches
    uneven = podium.simulate(30, 50, team_size=(3, 2), seed=1).matches
    assert not has_uneven_teams(even) and has_uneven_teams(uneven)
    weighted = podium.Matches.from_matches([Match([["a", "b"], ["c", "d"]], weights=[[1, 0.5], [1, 1]])])
    assert has_uneven_teams(weighted)
    assert not has_draws(even) and has_draws(podium.simulate(30, 200, draw_probability=0.3, seed=1).matches)
    # Non-finishers are unordered, not drawn.
    assert not has_draws(podium.Matches.from_matches([Match([["a"], ["b"], ["c"]], ranks=[0, None, None])]))
    assert "newcomer" in podium.fit(podium.Elo, uneven, max_evaluations=0).params
    assert "newcomer" not in podium.fit(podium.Elo, even, max_evaluations=0).params


@pytest.mark.parametrize("mean", [0.0, 1.0])
def test_fit_finds_what_a_newcomer_adds(mean: float) -> None:
    """Histories of 4 v 3 simulated under either truth (skills centred on 0: a newcomer adds nothing; skills around 1
    performance unit: the literal sum): the fitted TrueSkill's ``newcomer / beta`` (its performance units) is near
    the truth, and held out it predicts no worse than the better of the centred and the literal sum."""
    sim = podium.simulate(300, 6000, team_size=(4, 3), skill_mean=mean, seed=11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", podium.ConvergenceWarning)
        result = podium.fit(podium.TrueSkill(tau=0.0), sim.matches, params=["beta", "newcomer"])
    found = result.params["newcomer"] / result.params["beta"]
    assert abs(found - mean) < 0.25, result.params
    cut = result.split
    report = podium.evaluate(sim.matches, {"centred": podium.TrueSkill(tau=0.0, beta=result.params["beta"]),
                                           "sum": podium.TrueSkill(tau=0.0, beta=result.params["beta"], center=False),
                                           "fitted": result.model}, start=cut)
    best = min(report["centred"]["pair_log_loss"], report["sum"]["pair_log_loss"])
    assert report["fitted"]["pair_log_loss"] <= best + 2e-3
