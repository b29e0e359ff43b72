"""Ratings far from the origin and uncertainties far apart, through the models' public calls.

A field at 2^50 with ratings a few hundred apart (exact in floats) must predict what the same field at 0 predicts: the
models that hand the ordering engine their ratings as locations (TrueSkill, Elo-MMR) gave the wrong winner at 1e20
before the engine computed in its own frame.  Elo-MMR's win probabilities with one sigma of 1e154 hung; its sigma is now
bounded where its logistic chain stays exact, and at the bound the prediction is the limit (the far wider performance
is above the other with probability 1/2).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import podium
from podium import Rating

TEAMS = [["a"], ["b"], ["c"]]


@pytest.mark.parametrize("model", [podium.TrueSkill(), podium.EloMMR()], ids=lambda m: type(m).__name__)
def test_a_far_field_predicts_what_the_same_field_at_the_origin_does(model: podium.Model) -> None:
    unit = 4.0 if model.prior.mu < 100 else 200.0
    spread = {"a": 1.5 * unit, "b": 0.0, "c": -unit}
    sigma = model.prior.sigma

    def predict(offset: float) -> np.ndarray:
        ratings = {k: Rating(offset + v, sigma) for k, v in spread.items()}
        return model.win_probabilities(TEAMS, ratings)

    at_origin = predict(0.0)
    assert at_origin[0] > at_origin[1] > at_origin[2]
    for offset in (2.0 ** 40, 2.0 ** 50):
        np.testing.assert_allclose(predict(offset), at_origin, rtol=1e-9)


def test_elo_mmr_bounds_sigma_by_name_and_takes_the_limit_at_the_bound() -> None:
    model = podium.EloMMR()
    with pytest.raises(ValueError, match=r"'ratings\['a'\]' has sigma=1e\+31; EloMMR accepts sigma from 1e-30 to 1e\+30"):
        model.win_probabilities([["a"], ["b"]], {"a": Rating(10.0, 1e31)})
    with pytest.raises(ValueError, match="The 'sigma' parameter of EloMMR must be from 1e-30 to 1e\\+30"):
        podium.EloMMR(sigma=1e31)
    wide = {"a": Rating(1510.0, 1e30), "b": Rating(1500.0, 350.0)}
    np.testing.assert_allclose(model.win_probabilities([["a"], ["b"]], wide), [0.5, 0.5], rtol=1e-9)
    three = model.win_probabilities([["a"], ["b"], ["c"]], {**wide, "c": Rating(1700.0, 350.0)})
    # the wide one first with probability 1/2; otherwise the other two's own pair prediction
    pair = model.win_probabilities([["b"], ["c"]], {"b": wide["b"], "c": Rating(1700.0, 350.0)})
    np.testing.assert_allclose(three, [0.5, 0.5 * pair[0], 0.5 * pair[1]], rtol=1e-8)


def test_trueskill_exact_rates_a_field_far_from_the_origin_as_at_it() -> None:
    # the exact moments were taken on a grid at the teams' means: three equal players at 1e20 raised ZeroDivisionError
    model = podium.TrueSkill(update="exact")
    match = podium.Match([["a"], ["b"], ["c"]], ranks=[0, 1, None])
    uneven = {"a": (1.0, 3.0), "b": (0.0, 4.0), "c": (-2.0, 2.0)}
    equal = {"a": (0.0, 1.0), "b": (0.0, 1.0), "c": (0.0, 1.0)}
    for field, offset in ((uneven, 2.0 ** 30), (equal, 1e20)):  # (offset + the uneven means exact at 2^30)
        at_origin = model.rate(match, {k: Rating(m, s) for k, (m, s) in field.items()})
        far = model.rate(match, {k: Rating(offset + m, s) for k, (m, s) in field.items()})
        for name, rating in far.items():
            assert rating.mu == pytest.approx(offset + at_origin[name].mu, rel=0.0, abs=4.0 * math.ulp(offset))
            assert rating.sigma == pytest.approx(at_origin[name].sigma, rel=1e-9)
