"""The fast tier's quadrature: the corrected trapezoid rule on a uniform lattice, in linear space.

Moved out of :mod:`podium.ordering.gauss_chain` (issue 18), unchanged: the cumulative integrals of one stage's
values, forwards (:func:`_cumulate_up`) and backwards (:func:`_cumulate_down`), as the trapezoid sum less
the Euler-Maclaurin end correction ``h K(h d/dx) u``, ``K(w) = coth(w/2)/2 - 1/w``, expanded about the
exponential part of ``u = e^(lambda x) v`` (:func:`_fitted_stencil`, from the Bernoulli-number Taylor
coefficients of ``K``, :func:`_k_series`, and 7-point differences, :func:`_fd7`); and the corrected
weights at a lattice's two ends, as deviations from ``h`` (:func:`_end_weights`, the unfitted correction).
The method is the section "The fast tier" of docs/design.md and the docstring of :mod:`podium.ordering.gauss_chain`.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from .numerics import jit


def _fd7() -> NDArray[np.float64]:
    """``F[c + 3, d, k]``: weight of node ``j + c - 3 + k`` in ``h^d`` times the ``d``-th derivative at node
    ``j`` (``d = 0..6``), for the 7-point stencil shifted by ``c`` in ``-3..3``."""
    out = np.empty((7, 7, 7))
    for c in range(-3, 4):
        k = np.arange(c - 3, c + 4, dtype=np.float64)
        v = np.array([k ** p / math.factorial(p) for p in range(7)])
        out[c + 3] = np.linalg.solve(v, np.eye(7)).T
    return out


def _k_series(terms: int = 16) -> NDArray[np.float64]:
    """Taylor coefficients of ``K(w) = coth(w/2)/2 - 1/w = sum_n B_(2n) w^(2n-1) / (2n)!`` (index: power)."""
    from fractions import Fraction
    b: list[Fraction] = [Fraction(1)]
    for m in range(1, 2 * terms + 1):  # Bernoulli numbers (B_1 = -1/2)
        acc = Fraction(0)
        for j in range(m):
            acc += math.comb(m + 1, j) * b[j]
        b.append(-acc / (m + 1))
    out = np.zeros(2 * terms)
    for n in range(1, terms + 1):
        out[2 * n - 1] = float(b[2 * n] / math.factorial(2 * n))
    return out


_F7 = _fd7()
_KS = _k_series()
_BINOM = np.array([[float(math.comb(n, k)) for k in range(7)] for n in range(len(_KS))])
_F7K = np.ascontiguousarray(_F7.transpose(1, 0, 2).reshape(7, 49))  # [k, c * 7 + m]
_PLAIN = _F7[:, 1, :] / 12.0 - _F7[:, 3, :] / 720.0 + _F7[:, 5, :] / 30240.0  # the stencil at z = 0
Z_CAP = 1.5          # |step * fitted slope| kept below this (K's Taylor terms, from 16 series terms, to rounding)


_SCRATCH = len(_KS) + 7 + 13  # what _fitted_stencil needs besides the stencil itself


@jit
def _fitted_stencil(z: float, sten: NDArray[np.float64], scratch: NDArray[np.float64]) -> None:
    """``sten[c + 3, m]``: ``E(x_j) = h sum_m sten[c + 3, m] u_(j + c - 3 + m)``, the Euler-Maclaurin end
    correction of ``int u`` for ``u = e^(lambda x) v`` with ``v`` smooth, ``z = lambda h``, for the stencil
    shifted by ``c`` in ``-3..3``.

    The correction is ``h K(h d/dx) u`` with ``K(w) = coth(w/2)/2 - 1/w = sum B_2n w^(2n-1)/(2n)!``, and
    ``d/dx (e^(lambda x) v) = e^(lambda x) (lambda + d/dx) v``, so ``E = h e^(lambda x) sum_k K^(k)(z)/k!
    h^k v^(k)``: the closed form for the exponential part (as :func:`podium.ordering.lattice._k_exp`) and the usual
    terms for ``v``, whose derivatives (to the 6th) come from 7-point differences of
    ``v_m = u_m e^(-lambda x_m)``.  At ``z = 0`` it is the plain ``h^2/12 u' - h^4/720 u^(3) + h^6/30240 u^(5)``.
    """
    nk = len(_KS)
    zp = scratch[:nk]
    ck = scratch[nk:nk + 7]  # K^(k)(z) / k!
    ez = scratch[nk + 7:nk + 20]  # e^(-z d), d = -6..6
    zp[0] = 1.0
    for n in range(1, nk):
        zp[n] = zp[n - 1] * z
    for k in range(7):
        ck[k] = 0.0
    for n in range(1, nk, 2):
        for k in range(min(n, 6) + 1):
            ck[k] += _KS[n] * _BINOM[n, k] * zp[n - k]
    ez[6] = 1.0
    e1 = math.exp(-z)
    for d in range(1, 7):
        ez[6 + d] = ez[5 + d] * e1
        ez[6 - d] = ez[7 - d] / e1
    flat = sten.reshape(49)
    for cm in range(49):
        flat[cm] = ck[0] * _F7K[0, cm]
    for k in range(1, 7):  # 49 independent sums, k outermost (vectorizes)
        ckk = ck[k]
        for cm in range(49):
            flat[cm] += ckk * _F7K[k, cm]
    for c in range(7):
        for m in range(7):
            sten[c, m] *= ez[c + m]


@jit
def _shift(t: int, n: int) -> int:
    """The stencil shift that keeps nodes ``t - 3 + c .. t + 3 + c`` inside ``0..n-1`` (``n >= 7``)."""
    if t < 3:
        return 3 - t
    if t > n - 4:
        return n - 4 - t
    return 0


@jit
def _slope_at(u: NDArray[np.float64], base: int, j: int) -> float:
    """``h`` times the log-slope of ``u`` at node ``j`` (central difference; 0 where ``u`` is not positive
    on both sides), capped at :data:`Z_CAP`."""
    a = u[base + j - 1]
    b = u[base + j + 1]
    if not (a > 0.0 and b > 0.0):
        return 0.0
    return min(max(0.5 * math.log(b / a), -Z_CAP), Z_CAP)


@jit
def _correction(u: NDArray[np.float64], base: int, t: int, n: int, sten: NDArray[np.float64]) -> float:
    """``E(x_t) / h`` of the values ``u[base:base + n]`` at their node ``t``."""
    c = _shift(t, n)
    s = 0.0
    first = base + t + c - 3
    for k in range(7):
        s += sten[c + 3, k] * u[first + k]
    return s


@jit
def _cumulate_up(u: NDArray[np.float64], base: int, n: int, h: float, out: NDArray[np.float64],
                 at: int, sten: NDArray[np.float64], scratch: NDArray[np.float64]) -> float:
    """``out[base + t] = int_(x_0)^(x_t) u`` (corrected trapezoid) for ``t < n``; returns the last value
    (the reader divides by it).

    The end corrections are fitted (:func:`_fitted_stencil`, into the scratch ``sten``) to the log-slope
    of ``u`` at node ``at``: where the stage's posterior sits, so that an upset (a steep integrand there)
    is as accurate as a flat race.
    """
    _fitted_stencil(_slope_at(u, base, at), sten, scratch)
    e0 = _correction(u, base, 0, n, sten)
    s0, s1, s2, s3, s4, s5, s6 = sten[3, 0], sten[3, 1], sten[3, 2], sten[3, 3], sten[3, 4], sten[3, 5], sten[3, 6]
    run = 0.5 * u[base]
    out[base] = 0.0
    for t in range(1, n):
        ut = u[base + t]
        run += ut
        if t >= 3 and t <= n - 4:  # the unshifted stencil, in registers
            j = base + t - 3
            corr = (s0 * u[j] + s1 * u[j + 1] + s2 * u[j + 2] + s3 * u[j + 3] + s4 * u[j + 4] + s5 * u[j + 5]
                    + s6 * u[j + 6])
        else:
            corr = _correction(u, base, t, n, sten)
        v = h * (run - 0.5 * ut + e0 - corr)
        if not v > 0.0:  # a cliff the step cannot follow: the plain trapezoid value stands
            v = h * (run - 0.5 * ut)
        out[base + t] = v
    return out[base + n - 1]


@jit
def _cumulate_down(u: NDArray[np.float64], n: int, h: float, out: NDArray[np.float64], base: int,
                   at: int, sten: NDArray[np.float64], scratch: NDArray[np.float64]) -> float:
    """``out[base + t] = int_(x_t)^(x_(n-1)) u`` (``u[:n]``); returns the first value (the reader divides
    by it): the rule of :func:`_cumulate_up` in ``y = -x`` (the stencil mirrored, the slope's sign turned)."""
    _fitted_stencil(-_slope_at(u, 0, at), sten, scratch)
    e0 = _correction_down(u, n - 1, n, sten)
    s0, s1, s2, s3, s4, s5, s6 = sten[3, 0], sten[3, 1], sten[3, 2], sten[3, 3], sten[3, 4], sten[3, 5], sten[3, 6]
    run = 0.5 * u[n - 1]
    out[base + n - 1] = 0.0
    for t in range(n - 2, -1, -1):
        ut = u[t]
        run += ut
        if t >= 3 and t <= n - 4:
            corr = (s0 * u[t + 3] + s1 * u[t + 2] + s2 * u[t + 1] + s3 * u[t] + s4 * u[t - 1] + s5 * u[t - 2]
                    + s6 * u[t - 3])
        else:
            corr = _correction_down(u, t, n, sten)
        v = h * (run - 0.5 * ut + e0 - corr)
        if not v > 0.0:
            v = h * (run - 0.5 * ut)
        out[base + t] = v
    return out[base]


@jit
def _correction_down(u: NDArray[np.float64], t: int, n: int, sten: NDArray[np.float64]) -> float:
    """:func:`_correction` for the integral from the right: node ``t`` is node ``n - 1 - t`` of the
    reversed values ``u[n - 1 - k]``."""
    r = n - 1 - t
    c = _shift(r, n)
    s = 0.0
    first = n - 1 - (r + c - 3)
    for k in range(7):
        s += sten[c + 3, k] * u[first - k]
    return s


@jit
def _end_weights(n: int, h: float, dev: NDArray[np.float64]) -> None:
    """``dev[k]``: the corrected trapezoid weight less ``h`` at node ``k`` (``k < 7``) and at node
    ``n - 7 + (k - 7)`` (``7 <= k < 14``), the two ends of ``n >= 8`` equally spaced nodes (where the ends'
    seven nodes overlap, a node's deviation is the sum of its two entries)."""
    for k in range(14):
        dev[k] = 0.0
    dev[0] = -0.5 * h
    dev[13] = -0.5 * h
    for k in range(7):
        dev[k] += h * _PLAIN[6, k]      # stencil shifted by +3 at node 0
        dev[7 + k] -= h * _PLAIN[0, k]  # and by -3 at node n - 1
