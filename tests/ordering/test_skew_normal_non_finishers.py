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
  tail, wider than the density's spread) left out up to 3.6e-5 of ``F``.

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
