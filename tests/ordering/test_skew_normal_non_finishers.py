"""Skew-normal non-finishers (``log_order(..., density="skew_normal")`` with ``rank`` None): issue 32.

A skew-normal non-finisher's distribution function has no closed form in the engine; it is integrated on the
lattice, and it used to be wrong in two ways:

* it was integrated only up to the top of the last finisher's window, while the last finisher's node range is
  stretched up to the window of the finisher above; beyond, the lookup held ``F`` at its last value.  When the
  non-finishers push the last finisher above its window (its window is centred on its own mode, which ignores
  them) most of its posterior lay there: two tied finishers above six non-finishers (shape 3) came out at
  -11.98 instead of -10.3057, one of the two orders 3.35 too low, and exchangeable non-finishers got different
  derivatives;
* it was integrated from the bottom of the non-finisher's window, which with a negative shape (a Gaussian lower
  tail, wider than the density's spread) left out up to 3.6e-5 of ``F``;
* far upsets: a finisher far above a non-finisher (100 sd, shape 3) has its posterior where the non-finisher's
  density is steep (log-slope 90 at 91 sd above the finisher), and the lattice's step there (0.032, set by the
  posterior spread) was too coarse for ``F``'s integral: ``log F`` 2e-4 high at the posterior, ``log P``
  -4554.921088 against -4554.9212872 (3.5e-5 with shape -3, 5.4e-8 at 20 sd, 1.1e-6 with shape 10, 1.5e-4 at
  1000 sd).  The mass check could not see it (the posterior is built with the same ``F``); the engine now
  estimates ``F``'s error under the last stage's posterior and refines the step there.

References are independent of the engine:

* exact: ``k`` exchangeable performances, one (or two, in order) above the rest: ``1/k`` (``1/(k (k - 1))``);
* mpmath (30-40 digits) one-dimensional integrals over the last finisher's performance ``y``:
  ``P = int f_b(y) prod_(a above) (1 - F_a(y)) prod_(d non-finisher) F_d(y) dy`` with the skew-normal
  ``f(z) = 2 phi(z) Phi(alpha z)`` and ``F(z) = Phi(z) - 2 T(z, alpha)`` (Owen's T by ``mp.quad`` of
  ``exp(-z^2 (1 + x^2) / 2) / (1 + x^2) / (2 pi)`` over ``[0, alpha]``), ``mp.quad`` over the whole line or a
  range (about ``[-12, 8]``) beyond which the integrand is below e^-30 of its peak, with breakpoints about
  every half unit where the mass is.  They took minutes, so the values are written here.  scipy's ``quad`` of
  ``scipy.stats.skewnorm`` agrees to 1e-13 on the shape-3 cases (but is off by up to 3e-9 where its Owen's T
  cancels, in the upper tail of a negative shape).  A tie (margin 0) is the mean of ``log P`` over the tied
  group's orders (``log_outcome``).
* the far upsets (``FAR``): the same integral, mpmath at 25 digits, with ``F`` (and ``1 - F``) by ``mp.quad`` of
  the density itself from the tail (``int_{-inf}^z f`` below the mean, ``1 - int_z^inf f`` above): in the deep
  lower tail of a positive shape ``Phi(z) - 2 T(z, alpha)`` cancels (``F(-5)`` at shape 3 is 2e-58 against
  ``Phi(-5)`` 3e-7); where the Owen's T form does not cancel the two agree to 25 digits.  The outer integral is
  the trapezoid rule (exponentially convergent for this analytic integrand) about its peak, found by golden
  section, to where the integrand is e^-60 below it; steps of 1/3 and 1/5 of the peak's width agree to 1e-14
  (1.4e-11 for the shape-10 case at 100 sd, which then agreed with a step of 1/8 of the width).  The script
  reproduces ``CASES``' ``[0, 1, -0.5]`` value to all 25 digits.  Shapes 3 and -3 agree at 100 and 1000 sd
  to 6e-15: ``X_0 - X_1`` of two independent performances of one shape is symmetric, and the third
  competitor (0.5) barely matters there; at 20 sd it does, and they differ by 2e-4.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from podium.ordering import log_order

# m, s (None: 1), rank, shape, mpmath log P
CASES = [
    # the issue's case: two tied finishers (-2 and 0) above six non-finishers; mean of the two orders'
    # -10.6572935909068251271990691617 (0 above 7) and -9.95417599377870217060222708491 (7 above 0)
    ([-2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0], None, [0, None, None, None, None, None, None, 0], 3.0,
     -10.3057347923427636489006481233),
    ([-2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0], None, [0, None, None, None, None, None, None, 1], 3.0,
     -10.6572935909068251271990691617),
    ([-2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0], None, [1, None, None, None, None, None, None, 0], 3.0,
     -9.95417599377870217060222708491),
    # one finisher above two non-finishers
    ([0.0, 1.0, -0.5], None, [0, None, None], 3.0, -2.05732409743003631572393817904),
    ([-1.0, 0.0, 0.5], None, [0, None, None], 3.0, -3.36155938127384676298280009107),
    # negative shapes (the lower tail of F)
    ([-2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0], None, [0, None, None, None, None, None, None, 1], -3.0,
     -19.76487626027755034244885699636776873025),
    ([0.0, -3.0, 0.5, 4.0], [1.0, 1.0, 0.3, 5.0], [1, 0, None, None], -2.0,
     -30.07457511556577028614449734684531417365),
    ([-2.0, 0.0, 0.5, 1.0], None, [0, None, None, None], -10.0, -15.43967769375016753987780413162761079236),
]

# a non-finisher 20, 100, 1000 sd above the finisher (and one at 0.5), shapes 3, -3, 10; two finishers above
# two non-finishers; m, rank, shape, mpmath log P (25 digits)
FAR = [
    ([0.0, 20.0, 0.5], [0, None, None], 3.0, -188.0770272107296983091917),
    ([0.0, 20.0, 0.5], [0, None, None], -3.0, -188.0772301486520953200355),
    ([0.0, 20.0, 0.5], [0, None, None], 10.0, -204.4725329376636334640739),
    ([0.0, 100.0, 0.5], [0, None, None], 3.0, -4554.921287173488730523072),
    ([0.0, 100.0, 0.5], [0, None, None], -3.0, -4554.921287173482867428258),
    ([0.0, 100.0, 0.5], [0, None, None], 10.0, -4960.622967398175691951632),
    ([0.0, 1000.0, 0.5], [0, None, None], 3.0, -454559.5259978348678583415),
    ([0.0, 1000.0, 0.5], [0, None, None], -3.0, -454559.5259978348678052058),
    ([0.0, 1000.0, 0.5], [0, None, None], 10.0, -495112.2865593994060494804),
    ([0.0, -1.0, 100.0, 0.5], [0, 1, None, None], 3.0, -8432.505138840584947879913),
    ([0.0, -1.0, 100.0, 0.5], [0, 1, None, None], -3.0, -4828.905777696661385505244),
]


@pytest.mark.parametrize("m, rank, shape, expected", FAR)
def test_far_upsets_match_mpmath(m: list[float], rank: list[int | None], shape: float, expected: float) -> None:
    """Errors before the fix: 5.4e-8, 2.4e-10, 4e-12; 2e-4, 3.5e-5, 1.1e-6; 1.5e-4, 1.9e-5, 1e-4; 5.9e-8,
    1.7e-9.  The tolerance grows by 1e-13 |log P| (the rounding of log-densities of that size)."""
    value = log_order(m, None, rank, density="skew_normal", shape=shape)
    assert value == pytest.approx(expected, abs=1e-9 + 1e-13 * abs(expected))


@pytest.mark.parametrize("m, s, rank, shape, expected", CASES)
def test_log_p_matches_mpmath(m: list[float], s: list[float] | None, rank: list[int | None], shape: float,
                              expected: float) -> None:
    assert log_order(m, s, rank, density="skew_normal", shape=shape) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("shape", [-10.0, -3.0, 3.0, 10.0])
@pytest.mark.parametrize("finishers", [1, 2])
def test_exchangeable_performances(shape: float, finishers: int) -> None:
    k = 8
    rank: list[int | None] = [None] * k
    for t in range(finishers):
        rank[t] = t
    expected = -math.log(k) if finishers == 1 else -math.log(k * (k - 1))
    assert log_order(np.zeros(k), None, rank, density="skew_normal", shape=shape) == pytest.approx(expected, abs=1e-9)


def test_refining_the_grid_does_not_move_the_issue_case() -> None:
    m = [-2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0]
    rank: list[int | None] = [0, None, None, None, None, None, None, 0]
    coarse = log_order(m, None, rank, density="skew_normal", shape=3.0)
    fine = log_order(m, None, rank, density="skew_normal", shape=3.0, precision=4.0)
    assert fine == pytest.approx(coarse, abs=1e-9)


def test_the_gradient_sums_to_zero_and_matches_differences() -> None:
    """A common shift leaves an order unchanged (the partials summed to 7.3 before the fix)."""
    m = np.array([-2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0])
    rank: list[int | None] = [0, None, None, None, None, None, None, 0]
    _, dm, _ = log_order(m, None, rank, density="skew_normal", shape=3.0, gradient=True)
    assert abs(dm.sum()) < 1e-8 * np.abs(dm).max()
    h = 1e-4
    for i in (0, 1, 6, 7):
        up, down = m.copy(), m.copy()
        up[i] += h
        down[i] -= h
        numeric = (log_order(up, None, rank, density="skew_normal", shape=3.0)
                   - log_order(down, None, rank, density="skew_normal", shape=3.0)) / (2 * h)
        assert numeric == pytest.approx(dm[i], abs=1e-6)
