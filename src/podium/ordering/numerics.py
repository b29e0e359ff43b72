"""Tail-safe special functions, compiled with numba and shared by every model.

Everything that can underflow is computed in log space: ``log Phi`` uses ``erfc`` down to
``z = -37`` and the Laplace continued fraction for the Mills ratio below; ``log(1 - exp(-x))``
switches between ``expm1`` and ``log1p`` at ``ln 2`` (Maechler 2012, "Accurately computing
log(1 - exp(-|a|))"); log-sum-exp shifts by the maximum.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from ..jit import kernel

__all__ = [
    "log_ndtr", "ndtr", "norm_logpdf", "inv_mills", "log1mexp", "logaddexp", "logsumexp",
    "x_over_expm1", "log_ndtr_diff", "truncate_above", "truncate_between", "truncate", "tilted_messages",
    "comparison_message", "truncated_moments",
    "WIN", "DRAW", "BELOW",
]

_SQRT2 = math.sqrt(2.0)
WIN, DRAW, BELOW = 0, 1, 2  # truncation factors: d > eps, |d| <= eps, d > 0 (non-finisher below)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_LN2 = math.log(2.0)

jit = kernel(cache=True, fastmath=False, nogil=True)


@jit
def norm_logpdf(z: float) -> float:
    """``log phi(z)`` of the standard normal density."""
    return -0.5 * z * z - _LOG_SQRT_2PI


@jit
def _mills_fraction(x: float) -> tuple[float, float]:
    """The tails ``(c1, c2)`` of Laplace's continued fraction for the Mills ratio, ``x >= 5``.

    ``R(x) = (1 - Phi(x)) / phi(x) = 1/(x + c1)``, ``c1 = 1/(x + c2)``, ``c2 = 2/(x + 3/(x + ...))``
    (Abramowitz & Stegun 26.2.14), evaluated backwards from 80 terms: at ``x >= 5`` the truncation error
    is below 1e-17 relative.  The tails themselves give the truncated-Gaussian moments without
    cancellation (see :func:`truncate_above`).
    """
    tail = 0.0
    for k in range(80, 1, -1):
        tail = k / (x + tail)
    return 1.0 / (x + tail), tail


@jit
def _mills_ratio_tail(x: float) -> float:
    """Mills ratio ``R(x) = (1 - Phi(x)) / phi(x)`` for ``x >= 5``."""
    c1, _ = _mills_fraction(x)
    return 1.0 / (x + c1)


@jit
def log_ndtr(z: float) -> float:
    """``log Phi(z)``, accurate to a few ulp for every finite ``z``.

    For ``z > -37`` it is ``log(erfc(-z/sqrt 2)/2)`` (``log1p`` of the upper tail for ``z > 5``);
    below, ``log phi(z) + log R(-z)`` with the Mills ratio ``R`` from its continued fraction.
    """
    if z > 5.0:
        return math.log1p(-0.5 * math.erfc(z / _SQRT2))
    if z > -37.0:
        return math.log(0.5 * math.erfc(-z / _SQRT2))
    return norm_logpdf(z) + math.log(_mills_ratio_tail(-z))


@jit
def ndtr(z: float) -> float:
    """``Phi(z)``, the standard normal distribution function."""
    return 0.5 * math.erfc(-z / _SQRT2)


@jit
def inv_mills(z: float) -> float:
    """``phi(z) / Phi(z)``, finite for every finite ``z`` (about ``-z`` as ``z -> -inf``).

    Direct quotient while ``Phi(z) >= Phi(-37) ~ 6e-300`` is a normal number; the continued fraction below.
    """
    if z < -37.0:
        return 1.0 / _mills_ratio_tail(-z)
    return math.exp(-0.5 * z * z) / (_SQRT_2PI * ndtr(z))


@jit
def log1mexp(x: float) -> float:
    """``log(1 - exp(-x))`` for ``x > 0`` without cancellation (Maechler 2012)."""
    if x <= _LN2:
        return math.log(-math.expm1(-x))
    return math.log1p(-math.exp(-x))


@jit
def x_over_expm1(x: float) -> float:
    """``x / (exp(x) - 1)``, the derivative of ``log(1 - exp(-e^z))`` with respect to ``z`` at ``x = e^z``."""
    if x < 1e-8:
        return 1.0 - 0.5 * x
    if x > 700.0:  # expm1 would overflow (an exception in plain Python); x e^-x is the same to 1e-300
        return x * math.exp(-x)
    return x / math.expm1(x)


@jit
def logaddexp(a: float, b: float) -> float:
    """``log(exp(a) + exp(b))``; ``-inf`` is the identity."""
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    if a > b:
        return a + math.log1p(math.exp(b - a))
    return b + math.log1p(math.exp(a - b))


@jit
def logsumexp(x: NDArray[np.float64], n: int) -> float:
    """``log sum_{i<n} exp(x_i)`` over the first ``n`` entries, shifted by their maximum."""
    m = -np.inf
    for i in range(n):
        if x[i] > m:
            m = x[i]
    if m == -np.inf:
        return m
    total = 0.0
    for i in range(n):
        total += math.exp(x[i] - m)
    return m + math.log(total)


@jit
def normalized(log_w: NDArray[np.float64]) -> NDArray[np.float64]:
    """``exp(log_w_i) / sum_j exp(log_w_j)``, shifted by the largest so that no weight overflows nor do all
    underflow, and divided by the sum of the shifted weights (not shifted by the log-sum, whose rounding at
    ``|log_w| ~ 1e15`` would scale every entry): the entries sum to 1.  One compiled call, which for a handful of
    entries costs less than numpy's three."""
    n = len(log_w)
    top = -np.inf
    for i in range(n):
        top = max(top, log_w[i])
    out = np.empty(n)
    total = 0.0
    for i in range(n):
        out[i] = math.exp(log_w[i] - top)
        total += out[i]
    for i in range(n):
        out[i] /= total
    return out


@jit
def first_invalid(m: NDArray[np.float64], s: NDArray[np.float64]) -> int:
    """0 when every location ``m`` is finite and every scale ``s`` positive and finite; else 1 (a location) or 2 (a
    scale): the public functions' input check in one compiled pass (numpy's reductions cost a microsecond each)."""
    for x in m:
        if not math.isfinite(x):
            return 1
    for x in s:
        if not (x > 0.0 and math.isfinite(x)):
            return 2
    return 0


@jit
def log_ndtr_diff(b: float, a: float) -> float:
    """``log(Phi(b) - Phi(a))`` for ``b >= a``, accurate in both tails and for narrow intervals.

    Reflected so that the interval lies mostly below zero, then ``log Phi(b) + log(1 - Phi(a)/Phi(b))``;
    an interval narrower than 1e-3 standard deviations (and 1e-3 / |midpoint|) uses
    ``(b - a) phi(m) (1 + (b - a)^2 (m^2 - 1) / 24)``, the midpoint rule with its first correction.
    """
    if b <= a:
        return -np.inf
    if a + b > 0.0:  # Phi(b) - Phi(a) = Phi(-a) - Phi(-b): keep the interval on the lower side
        a, b = -b, -a
    width = b - a
    mid = 0.5 * (a + b)
    if width < 1e-3 and width * abs(mid) < 1e-3:
        return math.log(width) + norm_logpdf(mid) + math.log1p(width * width * (mid * mid - 1.0) / 24.0)
    lb = log_ndtr(b)
    return lb + log1mexp(lb - log_ndtr(a))


@jit
def truncate_above(t: float) -> tuple[float, float]:
    """Mean and variance of a standard normal truncated to ``(-t, inf)``, shifted: ``(V(t), 1 - W(t))``.

    These are TrueSkill's win functions (Herbrich, Minka & Graepel 2007, eq. 4 and Table 1):
    ``V(t) = phi(t)/Phi(t)`` and ``W(t) = V(t) (V(t) + t)``; if ``d ~ N(m, v)`` is conditioned on
    ``d > eps`` with ``t = (m - eps)/sqrt(v)``, its mean becomes ``m + sqrt(v) V`` and its variance
    ``v (1 - W)``.  ``1 - W`` is returned directly because it is the variance factor and, in an upset
    (``t -> -inf``), ``W -> 1``.  Below ``t = -5`` both come from the continued fraction of
    :func:`_mills_fraction` with ``x = -t``: ``V = x + c1``, ``V + t = c1`` and
    ``1 - W = c1 (c2 - c1)``, free of cancellation (so a 1,000-point upset still gives exact updates).
    """
    if t >= -5.0:
        v = inv_mills(t)
        return v, 1.0 - v * (v + t)
    c1, c2 = _mills_fraction(-t)
    return c1 - t, c1 * (c2 - c1)


# 16-point Gauss-Legendre rule on [0, 1] for the narrow truncated moments below.
_GL_X, _GL_W = np.polynomial.legendre.leggauss(16)
_GL16_X = 0.5 * (_GL_X + 1.0)
_GL16_W = 0.5 * _GL_W


@jit
def truncate_between(alpha: float, beta: float) -> tuple[float, float]:
    """Mean and variance of a standard normal truncated to ``[alpha, beta]`` (TrueSkill's draw ``V, 1 - W``).

    Herbrich, Minka & Graepel (2007), Table 1, draw case: if ``d ~ N(m, v)`` is conditioned on
    ``|d| <= eps`` then with ``alpha = (-eps - m)/sqrt v`` and ``beta = (eps - m)/sqrt v`` the mean of ``d``
    becomes ``m + sqrt(v) * mean`` and its variance ``v * variance``.  The moments are

    * from the continued fraction of the one-sided case when the far end carries less than ``e^-40`` of
      the mass (``alpha >= 5`` and ``alpha (beta - alpha) > 40`` after reflecting to ``alpha + beta >= 0``);
    * by composite 16-point Gauss-Legendre with central second moments when the interval is narrower
      than one standard deviation (the closed form would cancel: the variance is then ``~width^2/12``);
    * by the closed form ``mean = (phi(a) - phi(b))/Z``,
      ``variance = 1 + (a phi(a) - b phi(b))/Z - mean^2`` with ``log Z`` from :func:`log_ndtr_diff`
      otherwise.
    """
    sign = 1.0
    if alpha + beta < 0.0:  # reflect: the mass then sits nearest alpha
        alpha, beta = -beta, -alpha
        sign = -1.0
    width = beta - alpha
    if alpha >= 5.0 and alpha * width > 40.0:
        c1, c2 = _mills_fraction(alpha)
        return sign * (alpha + c1), c1 * (c2 - c1)
    if width <= 1.0:
        # y = u - alpha in [0, width] with density proportional to exp(-alpha y - y^2 / 2).
        panels = max(1, int(math.ceil(abs(alpha) * width / 8.0)))
        step = width / panels
        total = 0.0
        first = 0.0
        for p in range(panels):
            for k in range(16):
                y = (p + _GL16_X[k]) * step
                g = _GL16_W[k] * math.exp(-alpha * y - 0.5 * y * y)
                total += g
                first += g * y
        mean_y = first / total
        second = 0.0
        for p in range(panels):
            for k in range(16):
                y = (p + _GL16_X[k]) * step
                dy = y - mean_y
                second += _GL16_W[k] * math.exp(-alpha * y - 0.5 * y * y) * dy * dy
        return sign * (alpha + mean_y), second / total
    log_z = log_ndtr_diff(beta, alpha)
    pa = math.exp(norm_logpdf(alpha) - log_z)
    pb = math.exp(norm_logpdf(beta) - log_z)
    mean = pa - pb
    var = 1.0 + alpha * pa - beta * pb - mean * mean
    return sign * mean, max(var, 0.0)


# -- one comparison of two Gaussian performances (TrueSkill's factor; the ordering engine's windows) --------
@jit
def truncate(kind: int, mean: float, sd: float, eps: float) -> tuple[float, float]:
    """Standardized mean shift and variance factor of ``d ~ N(mean, sd^2)`` under the factor ``kind``."""
    if kind == DRAW:
        return truncate_between((-eps - mean) / sd, (eps - mean) / sd)
    return truncate_above((mean - eps) / sd)


@jit
def comparison_message(m: float, v: float, v_other: float, var_factor: float, step: float) -> tuple[float, float]:
    """The message ``(pi, tau)`` one comparison sends to one of its two teams, from that team's cavity
    ``N(m, v)``, the other's variance ``v_other``, the truncation's variance factor ``1 - W`` and
    ``step = +-V / sqrt(v + v_other)`` (``+`` for the better team).

    Moment matching gives the team the mean ``m + v step`` and the variance ``v (1 - v W / (v + v_other))``
    (Herbrich, Minka & Graepel 2007, Table 1); the message that turns the cavity into it has precision
    ``W / (v_other + v (1 - W))`` and precision-adjusted mean ``m pi + step (1 + v pi)``.  Written this way
    nothing cancels, even when ``W -> 1`` in an upset.
    """
    pi = max((1.0 - var_factor) / (v_other + v * var_factor), 0.0)
    return pi, m * pi + step * (1.0 + v * pi)


@jit
def tilted_messages(kind: int, eps: float, ma: float, va: float, mb: float, vb: float
                    ) -> tuple[float, float, float, float]:
    """Messages ``(pi_a, tau_a, pi_b, tau_b)`` from one comparison of teams ``a`` (better) and ``b``, with
    cavities ``t_a ~ N(ma, va)``, ``t_b ~ N(mb, vb)``: :func:`comparison_message` for each, from one
    truncation of ``d = t_a - t_b``."""
    sd = math.sqrt(va + vb)
    shift, var_factor = truncate(kind, ma - mb, sd, eps)
    step = shift / sd
    pa, ta = comparison_message(ma, va, vb, var_factor, step)
    pb, tb = comparison_message(mb, vb, va, var_factor, -step)
    return pa, ta, pb, tb


@jit
def truncated_moments(m: float, s: float, a: float, b: float) -> tuple[float, float]:
    """Mean and variance of ``N(m, s^2)`` truncated to ``(a, b)`` (``a = -inf`` allowed), ``a < b``.

    With ``alpha = (a - m)/s``, ``beta = (b - m)/s`` and ``Z = Phi(beta) - Phi(alpha)``:
    ``E = m + s (phi(alpha) - phi(beta)) / Z``, ``Var = s^2 [1 + (alpha phi(alpha) - beta phi(beta)) / Z -
    ((phi(alpha) - phi(beta)) / Z)^2]`` (Johnson, Kotz & Balakrishnan 1994, 13.10).  Taken on the side where
    ``Phi`` is not close to 1, through the inverse Mills ratio ``phi/Phi`` and ``r = Phi(alpha)/Phi(beta)``
    (no cancellation in ``Z``); a narrow interval, where the density is nearly exponential, by 16-point
    Gauss-Legendre quadrature.
    """
    al = (a - m) / s
    be = (b - m) / s
    if al > -1e300 and be - al < 1.0:
        # narrow: Gauss-Legendre on the log-density relative to its value at the midpoint
        c = 0.5 * (al + be)
        hw = 0.5 * (be - al)
        s0 = s1 = s2 = 0.0
        for k in range(16):
            t = hw * _GL_X[k]
            z = c + t
            w = _GL_W[k] * math.exp(-0.5 * (z * z - c * c))
            s0 += w
            s1 += w * t
            s2 += w * t * t
        mean = s1 / s0
        return m + s * (c + mean), s * s * max(s2 / s0 - mean * mean, 0.0)
    flip = al > -1e300 and al + be > 0.0
    if flip:  # reflect so that the interval lies on the lower side, where Phi is small but exact
        al, be = -be, -al
    lb = inv_mills(be)                      # phi(beta) / Phi(beta)
    if al > -1e300:
        r = math.exp(log_ndtr(al) - log_ndtr(be))
        la = inv_mills(al) * r              # phi(alpha) / Phi(beta)
        ta = al * la
    else:
        r = la = ta = 0.0
    e1 = (la - lb) / (1.0 - r)              # E[z]
    e2 = 1.0 + (ta - be * lb) / (1.0 - r)   # E[z^2]
    var = max(e2 - e1 * e1, 0.0)
    if flip:
        e1 = -e1
    return m + s * e1, s * s * var
