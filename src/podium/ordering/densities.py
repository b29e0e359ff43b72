"""The standardized noise densities of :mod:`podium.ordering`, compiled, in log space.

A competitor performs ``X = m + s e`` with ``e`` of one of four densities: Gaussian (Thurstone, TrueSkill),
maximum-type Gumbel (Plackett-Luce in the victory order, McFadden 1974), logistic, or skew-normal
(Azzalini 1985, shape ``alpha``).  Codes are used inside the compiled kernels; :data:`DENSITIES` names
them for the public API.
"""

from __future__ import annotations

import math

import numpy as np

from .numerics import inv_mills, jit, log1mexp, log_ndtr, norm_logpdf

__all__ = ["DENSITIES", "GAUSSIAN", "GUMBEL", "LOGISTIC", "SKEW_NORMAL", "log_cdf_diff", "logcdf", "logpdf",
           "log_reverse_hazard", "logsf", "score", "score_slope", "shape_info"]

GAUSSIAN, GUMBEL, LOGISTIC, SKEW_NORMAL = 0, 1, 2, 3
DENSITIES = ("gaussian", "gumbel", "logistic", "skew_normal")


_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_LN2 = math.log(2.0)
LOG_FLOOR = -1e300  # log densities below this are 0 to every purpose; keeps arithmetic free of inf - inf
_EULER = 0.5772156649015329


@jit
def logpdf(kind: int, shape: float, z: float) -> float:
    """``log f(z)`` of the standardized noise density."""
    if kind == GAUSSIAN:
        return -0.5 * z * z - _LOG_SQRT_2PI
    if kind == GUMBEL:  # the maximum-type Gumbel, f = exp(-z - e^-z): Plackett-Luce in the victory order
        if z < -700.0:
            return LOG_FLOOR
        return -z - math.exp(-z)
    if kind == LOGISTIC:
        t = abs(z)
        return -t - 2.0 * math.log1p(math.exp(-t))
    # skew-normal (Azzalini 1985): f = 2 phi(z) Phi(shape z)
    return _LN2 - 0.5 * z * z - _LOG_SQRT_2PI + log_ndtr(shape * z)


@jit
def logcdf(kind: int, shape: float, z: float) -> float:
    """``log F(z)``; not used for the skew-normal, whose distribution function is integrated on the grid."""
    if kind == GAUSSIAN:
        return log_ndtr(z)
    if kind == GUMBEL:
        if z < -700.0:
            return LOG_FLOOR
        return -math.exp(-z)
    if z >= 0.0:  # logistic
        return -math.log1p(math.exp(-z))
    return z - math.log1p(math.exp(z))


@jit
def log_reverse_hazard(kind: int, shape: float, z: float) -> float:
    """``log(f(z) / F(z))`` for the densities with a closed-form distribution function, without forming
    either: the force with which a non-finisher's ``F`` pulls the performance above it.

    Gaussian ``log(phi/Phi)`` (:func:`podium.ordering.numerics.inv_mills`, finite in both tails); Gumbel (maximum
    type, ``F = exp(-e^-z)``, ``f = e^-z F``) exactly ``-z``, where ``log f - log F`` would subtract two
    numbers of size ``e^-z`` and lose everything below a few hundred; logistic ``log(1 - F(z))``.
    """
    if kind == GAUSSIAN:
        return math.log(inv_mills(z))
    if kind == GUMBEL:
        return -z
    if kind == LOGISTIC:
        return logcdf(kind, shape, -z)
    return np.nan  # the skew-normal's F is integrated on the grid (no closed form)


@jit
def score(kind: int, shape: float, z: float) -> float:
    """``psi(z) = -d log f / dz``: ``d log f((x - m)/s) / dm = psi(z) / s``."""
    if kind == GAUSSIAN:
        return z
    if kind == GUMBEL:
        return 1.0 - math.exp(min(-z, 700.0))
    if kind == LOGISTIC:
        return math.tanh(0.5 * z)
    t = shape * z
    return z - shape * math.exp(norm_logpdf(t) - log_ndtr(t))


@jit
def shape_info(kind: int, shape: float) -> tuple[float, float, float, float, float]:
    """``(mean, sd, reach below, reach above, sharpness)`` of the standardized density.

    The reaches are where the log-density has fallen by about 34 from its peak (the grid covers them; the
    Gumbel's lower one by 85, where its double-exponential rise no longer troubles the end corrections);
    the sharpness is the narrowest width of the log-density's curvature there, relative to ``s``.
    """
    if kind == GAUSSIAN:
        return 0.0, 1.0, 8.3, 8.3, 1.0
    if kind == GUMBEL:
        return _EULER, math.pi / math.sqrt(6.0), 4.5, 35.0, 0.4
    if kind == LOGISTIC:
        return 0.0, math.pi / math.sqrt(3.0), 35.0, 35.0, 1.0
    delta = shape / math.sqrt(1.0 + shape * shape)
    mean = delta * math.sqrt(2.0 / math.pi)
    return mean, math.sqrt(1.0 - mean * mean), 8.3, 8.3, 1.0 / max(1.0, abs(shape))


# -- cumulative integrals in log space ---------------------------------------------------------------------
@jit
def logsf_gumbel(z: float) -> float:
    """``log(1 - F(z))`` of the maximum-type Gumbel, ``log(1 - exp(-e^-z))``."""
    if z < -700.0:
        return 0.0
    x = math.exp(-z)
    if x < 1e-10:
        return -z - 0.5 * x
    return log1mexp(x)



@jit
def logsf(kind: int, shape: float, z: float) -> float:
    """``log(1 - F(z))`` for the densities with a closed-form distribution function."""
    if kind == GUMBEL:
        return logsf_gumbel(z)
    return logcdf(kind, shape, -z)  # Gaussian and logistic are symmetric


@jit
def score_slope(kind: int, shape: float, z: float) -> float:
    """``psi'(z) = -(log f)''(z)``, used with :func:`_score` for ``f''/f = psi^2 - psi'``."""
    if kind == GAUSSIAN:
        return 1.0
    if kind == GUMBEL:
        return math.exp(min(-z, 700.0))
    if kind == LOGISTIC:
        t = math.tanh(0.5 * z)
        return 0.5 * (1.0 - t * t)
    t = shape * z  # skew-normal: psi = z - shape r(t), r = phi/Phi(t), r' = -r (t + r)
    r = math.exp(norm_logpdf(t) - log_ndtr(t))
    return 1.0 + shape * shape * r * (t + r)


@jit
def log_cdf_diff(kind: int, shape: float, hi: float, width: float) -> float:
    """``log(F(hi) - F(hi - width))`` for ``width >= 0``, with no cancellation for tiny widths.

    The width is passed apart from ``hi`` so that a margin of ``1e-12`` next to a location of ``1e4`` is
    not rounded away.  Below ``width = 1e-4`` the midpoint rule with its first correction,
    ``width f(c) (1 + width^2 (psi(c)^2 - psi'(c)) / 24)`` (``c`` the midpoint, ``f''/f = psi^2 - psi'``),
    exact to ``O(width^5)`` relative; above, the difference of the two distribution functions taken on
    the side where neither is close to 1.
    """
    if width <= 0.0:
        return -np.inf
    lo = hi - width
    mid = hi - 0.5 * width
    if width < 1e-4:
        psi = score(kind, shape, mid)
        corr = width * width * (psi * psi - score_slope(kind, shape, mid)) / 24.0
        return math.log(width) + logpdf(kind, shape, mid) + math.log1p(corr)
    if mid > 0.0 and kind != SKEW_NORMAL:  # upper side: 1 - F does not round to 0 there
        top = logsf(kind, shape, lo)
        return top + log1mexp(top - logsf(kind, shape, hi)) if top > logsf(kind, shape, hi) else -np.inf
    top = logcdf(kind, shape, hi)
    low = logcdf(kind, shape, lo)
    return top + log1mexp(top - low) if top > low else -np.inf
