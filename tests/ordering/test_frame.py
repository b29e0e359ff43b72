"""Far locations and far-apart scales (:func:`podium.ordering.outcome.unit_frame`): an ordering probability is unchanged
by a common shift of the locations and a common positive factor on locations and scales, and the engine must not lose
digits to either.  Before the frame, races at 1e6 with scales 1e-6 lost 5e-7 of ``log P``, at 1e100 1e-3, win
probabilities of a field at 1e20 with unit scales were all 0, and a competitor 1e154 times wider than the others raised
ZeroDivisionError (or, through Elo-MMR, hung).

References: the same call at the origin with unit scales (the invariance is exact; those values are checked against
mpmath in ``test_ordering.py``), and for a competitor infinitely wider than the rest the closed-form limit: it finishes
above every other with probability ``1 - F(0)`` and below every other with ``F(0)`` (``F`` its standardized
distribution function at its location over its scale, which is 0 in the limit), the others' order among themselves
unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from podium.ordering import CHAIN_SCALE_SPAN, log_order, log_win_probabilities, rank_probabilities

D = np.array([1.0, 0.0, -0.5, 2.0])  # locations at the origin, in units of the scale
RANKS: list[int | None] = [2, 0, None, 1]
DENSITIES = [("gaussian", 0.0), ("gumbel", 0.0), ("logistic", 0.0), ("skew_normal", 2.0)]
# F(0) of each standardized density: 1/2; exp(-exp(0)) (Gumbel, the maximum's); 1/2; 1/2 - arctan(alpha)/pi
# (skew-normal: Phi(0) - 2 T(0, alpha), Owen's T(0, a) = arctan(a) / (2 pi)).
F0 = {"gaussian": 0.5, "gumbel": math.exp(-1.0), "logistic": 0.5, "skew_normal": 0.5 - math.atan(2.0) / math.pi}


def _calls(density: str, shape: float) -> dict[str, Callable[[np.ndarray, np.ndarray], object]]:
    calls: dict[str, Callable[[np.ndarray, np.ndarray], object]] = {
        "log_order": lambda m, s: log_order(m, s, RANKS, density=density, shape=shape),
        "log_order pair": lambda m, s: log_order(m[:2], s[:2], [1, 0], density=density, shape=shape),
        "log_win_probabilities": lambda m, s: log_win_probabilities(m, density=density, scale=s, shape=shape),
        "log_win_probabilities pair": lambda m, s: log_win_probabilities(m[:2], density=density, scale=s[:2],
                                                                         shape=shape),
    }
    if density != "skew_normal":
        calls["rank_probabilities"] = lambda m, s: rank_probabilities(m, s, density=density, shape=shape)
    return calls


# (offset, scale): the scale a power of two at least 2^-40 of the offset, so that offset + d * scale is exact
FRAMES = [(1e6, 2.0 ** -20), (1e12, 2.0 ** 0), (1e20, 2.0 ** 27), (1e100, 2.0 ** 293), (0.0, 2.0 ** 300),
          (0.0, 2.0 ** -300)]


@pytest.mark.parametrize("density, shape", DENSITIES)
@pytest.mark.parametrize("offset, scale", FRAMES)
def test_a_common_shift_and_scale_change_nothing(density: str, shape: float, offset: float, scale: float) -> None:
    ones = np.ones(len(D))
    for name, call in _calls(density, shape).items():
        at_origin = np.asarray(call(D, ones))
        far = np.asarray(call(offset + D * scale, ones * scale))
        assert np.all(np.isfinite(far)), name
        np.testing.assert_allclose(far, at_origin, rtol=1e-11, atol=1e-11, err_msg=name)


@pytest.mark.parametrize("density, shape", DENSITIES)
@pytest.mark.parametrize("wide", [1e80, 1e154, 1e300])
def test_a_far_wider_competitor_takes_its_limit(density: str, shape: float, wide: float) -> None:
    scale = np.array([wide, 1.0, 1.0, 1.0])
    f0 = F0[density]
    rest = np.exp(log_win_probabilities(D[1:], density=density, shape=shape))
    win = np.exp(log_win_probabilities(D, density=density, scale=scale, shape=shape))
    np.testing.assert_allclose(win, np.concatenate([[1.0 - f0], f0 * rest]), rtol=1e-9)
    pair = np.exp(log_win_probabilities(D[:2], density=density, scale=scale[:2], shape=shape))
    np.testing.assert_allclose(pair, [1.0 - f0, f0], rtol=1e-9)
    if density == "skew_normal":
        return
    places = rank_probabilities(D, scale, density=density, shape=shape)
    rest_places = rank_probabilities(D[1:], density=density, shape=shape)
    expected = np.zeros((4, 4))
    expected[0, 0], expected[0, 3] = 1.0 - f0, f0
    expected[1:, 1:] += (1.0 - f0) * rest_places  # the wide one first: the rest one place down
    expected[1:, :3] += f0 * rest_places          # the wide one last
    np.testing.assert_allclose(places, expected, atol=1e-10)


@pytest.mark.parametrize("wide", [1e80, 1e154, 1e300])
def test_the_gaussian_chain_takes_any_scales(wide: float) -> None:
    # second of two: below the other with probability F(0) = 1/2
    assert log_order([1.0, 0.0], [wide, 1.0], [1, 0]) == pytest.approx(math.log(0.5), abs=1e-10)


@pytest.mark.parametrize("density", ["gumbel", "logistic", "skew_normal"])
def test_other_chains_refuse_scales_beyond_their_span_by_name(density: str) -> None:
    with pytest.raises(ValueError, match="'s' spans a factor of 1e\\+41"):
        log_order([1.0, 0.0], [1e41, 1.0], [1, 0], density=density, shape=1.0)
    # within the span the limit holds
    assert log_order([1.0, 0.0], [CHAIN_SCALE_SPAN, 1.0], [1, 0], density=density, shape=0.0) == pytest.approx(
        math.log(F0[density] if density != "skew_normal" else 0.5), abs=1e-9)


def test_the_elimination_order_with_scales() -> None:
    loc = np.array([3.0, 1.0, -2.0, 0.5])
    for order in ("victory", "elimination"):
        scaled = log_win_probabilities(loc, density="gumbel", order=order, scale=np.full(4, 2.0))
        np.testing.assert_allclose(scaled, log_win_probabilities(loc / 2.0, density="gumbel", order=order),
                                   rtol=1e-13, atol=1e-13)
    # the two orders differ (they were silently the same when scales were given)
    assert not np.allclose(log_win_probabilities(loc, density="gumbel", order="victory", scale=np.ones(4)),
                           log_win_probabilities(loc, density="gumbel", order="elimination", scale=np.ones(4)))
    with pytest.raises(ValueError, match="'order' = 'elimination'"):
        log_win_probabilities(loc, density="gumbel", order="elimination", scale=np.array([1.0, 2.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match="'order' = 'elimination'"):
        log_win_probabilities(loc, density="gaussian", order="elimination")
    with pytest.raises(ValueError, match="'order' must be 'victory' or 'elimination'. Got 'last'"):
        log_win_probabilities(loc, order="last")


@pytest.mark.parametrize("density, shape", DENSITIES)
@pytest.mark.parametrize("ahead", [1e3, 1e9, 1e15, 2.0 ** 52])  # (ahead + 1 exact)
def test_fields_far_apart_keep_each_cluster_s_digits(density: str, shape: float, ahead: float) -> None:
    # two pairs `ahead` scales apart: the top pair takes places 0-1 and the win as on its own; on one lattice a top
    # pair 1e15 ahead lost 6e-4 of its probabilities (and at 1e17 its log P came out positive)
    m = np.array([0.5, ahead, 0.0, ahead + 1.0])
    top, bottom = m[[1, 3]], m[[0, 2]]
    pair_win = log_win_probabilities(top - ahead, density=density, shape=shape)
    win = log_win_probabilities(m, density=density, scale=np.ones(4), shape=shape)
    # (a pair's win comes from its chain, the field's from the lattice: each within 1e-10)
    np.testing.assert_allclose(win[[1, 3]], pair_win, rtol=1e-9, atol=1e-9)
    assert np.all(win[[0, 2]] < -700.0)
    if density == "gaussian":  # the pair's closed form: Phi(1 / sqrt 2)
        assert math.exp(pair_win[1]) == pytest.approx(0.5 * (1.0 + math.erf(0.5)), rel=1e-12)
    if density == "skew_normal":
        return
    places = rank_probabilities(m, density=density, shape=shape)
    expected = np.zeros((4, 4))
    expected[np.ix_([1, 3], [0, 1])] = rank_probabilities(top - ahead, density=density, shape=shape)
    expected[np.ix_([0, 2], [2, 3])] = rank_probabilities(bottom, density=density, shape=shape)
    np.testing.assert_allclose(places, expected, atol=1e-11)


@pytest.mark.parametrize("density, shape", DENSITIES)
@pytest.mark.parametrize("behind", [1e12, 1e16, 1e18, 1e100])
def test_a_far_favourite_winning_is_certain(density: str, shape: float, behind: float) -> None:
    # log(1 - P(upset)), P(upset) below exp(-1e20): 0 in floats (it was +0.02 at 1e16 and -1e300 at 1e18, Gumbel)
    assert log_order([0.0, -behind], density=density, shape=shape) == pytest.approx(0.0, abs=1e-15)


def test_an_upset_across_clusters_takes_its_closed_form() -> None:
    # Gumbel performances: the difference is logistic, log P(b above a) = log sigmoid(-1e16) = -1e16 (McFadden 1974)
    assert log_order([0.0, -1e16], rank=[1, 0], density="gumbel") == pytest.approx(-1e16, rel=1e-12)
    # Gaussian: log Phi(-1e16 / sqrt 2) = -1e32 / 4 - log(1e16 / sqrt 2 * sqrt(2 pi)) to leading order
    assert log_order([0.0, -1e16], rank=[1, 0]) == pytest.approx(-2.5e31, rel=1e-12)


@pytest.mark.parametrize("density, shape", DENSITIES)
def test_far_clusters_in_order_are_each_their_own_race(density: str, shape: float) -> None:
    m = np.array([0.5, 1e16, 0.0, 1e16 + 2.0])  # (1e16 + 2 exact)
    value, gl, gs = log_order(m, np.ones(4), [3, 1, None, 0], density=density, shape=shape, gradient=True)
    top, top_gl, top_gs = log_order([0.0, 2.0], [1.0, 1.0], [1, 0], density=density, shape=shape, gradient=True)
    low, low_gl, low_gs = log_order([0.5, 0.0], [1.0, 1.0], [0, None], density=density, shape=shape, gradient=True)
    assert value == pytest.approx(top + low, rel=1e-12)
    np.testing.assert_allclose(gl[[1, 3, 0, 2]], np.concatenate([top_gl, low_gl]), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(gs[[1, 3, 0, 2]], np.concatenate([top_gs, low_gs]), rtol=1e-10, atol=1e-14)
