"""Where the chain engine integrates: the windows of every stage's posterior.

Moved out of :mod:`podium.ordering.chain` (issue 18), unchanged: Gaussian expectation propagation over the chain
of comparisons (:func:`_ep_chain`, TrueSkill's win factor; also the fast tier's windows,
:mod:`podium.ordering.gauss_chain`), the order's mode by pool-adjacent-violators with each block at its joint mode
(:func:`_isotonic_mode`, :func:`_pooled_mode`) for the Gumbel and logistic densities, where a pooled
block's joint log-density falls :data:`LEVEL` below its peak (:func:`_level_edge`), and the windows'
reach in posterior spreads (:func:`_reach`, :data:`REACH`, :data:`PRIOR_REACH`).  The method is the
section "The ordering engine" of docs/design.md.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from .densities import GUMBEL, LOGISTIC, log_reverse_hazard, logcdf, logpdf, score
from .numerics import WIN, jit, tilted_messages

REACH = 7.5          # window half-width in posterior spreads (Gaussian tails: e^-28)
PRIOR_REACH = 9.0    # the same for the prior's tail at the chain's ends (its density there is divided by P)
LEVEL = 36.0         # a pooled block's window: where its joint log-density is this far below its peak
EP_SWEEPS = 3        # expectation propagation's sweeps for the windows, then more until settled:
EP_SETTLED = 0.05    # means within this many spreads, spreads within this relative change, of the last sweep's
EP_MAX_SWEEPS = 64


@jit
def _reach(kind: int) -> tuple[float, float]:
    """Window reach below and above the posterior mean, in posterior spreads, for each density's tails."""
    if kind == LOGISTIC:
        return 20.0, 20.0
    if kind == GUMBEL:  # maximum type: double-exponential lower tail, exponential upper tail
        return REACH, 28.0
    return REACH, REACH


@jit
def _factor_ends(k: int, stages: int) -> tuple[int, int]:
    """The two variables of the chain's comparison ``k``: stages ``k > k + 1``, then the last stage above
    each non-finisher."""
    if k < stages - 1:
        return k, k + 1
    return stages - 1, stages + (k - (stages - 1))


@jit
def _ep_chain(m0: NDArray[np.float64], v0: NDArray[np.float64], stages: int, n_dnf: int,
              mean: NDArray[np.float64], sd: NDArray[np.float64], slope: NDArray[np.float64]) -> None:
    """Gaussian expectation propagation for ``x_0 > x_1 > ... > x_(stages-1) > each of the rest``.

    ``m0, v0`` are the moment-matched priors of the stages then the non-finishers; writes the approximate
    posterior means and standard deviations, and for each variable the steepest log-slope of a factor's
    message at its posterior mean (the force with which the observed order holds it there: the
    Lagrange multiplier of an active order constraint, large in a long chain of upsets).  Each factor ``x_a > x_b`` is TrueSkill's win factor
    (Herbrich, Minka & Graepel 2007, eq. 4, messages of :func:`podium.ordering.numerics.tilted_messages`);
    at least three sweeps down and up the chain, then more until the beliefs settle (at most 64).  Used
    only to place the integration windows.
    """
    n = stages + n_dnf
    prec = np.empty(n)
    tau = np.empty(n)
    for i in range(n):
        prec[i] = 1.0 / v0[i]
        tau[i] = m0[i] / v0[i]
    factors = stages - 1 + n_dnf
    msg = np.zeros((max(factors, 1), 4))  # (pi_a, tau_a, pi_b, tau_b)
    last_mean = np.empty(n)
    last_prec = np.empty(n)
    for sweep in range(EP_MAX_SWEEPS):
        if sweep >= EP_SWEEPS:
            # settled when no mean moved by EP_SETTLED of its spread and no spread by that fraction: a prior
            # spread 1e7 times its neighbours' shrinks only about 7-fold a sweep, and three sweeps left it
            # windows 1e4 spreads wide, far from the mass
            moved = 0.0
            for i in range(n):
                moved = max(moved, abs(tau[i] / prec[i] - last_mean[i]) * math.sqrt(prec[i]),
                            abs(math.log(prec[i] / last_prec[i])))
            if not moved > EP_SETTLED:
                break
        for i in range(n):
            last_mean[i] = tau[i] / prec[i]
            last_prec[i] = prec[i]
        for step in range(2 * factors):
            k = step if step < factors else 2 * factors - 1 - step
            if sweep > 0 and step == 0:
                continue
            a, b = _factor_ends(k, stages)
            pca = prec[a] - msg[k, 0]
            tca = tau[a] - msg[k, 1]
            pcb = prec[b] - msg[k, 2]
            tcb = tau[b] - msg[k, 3]
            if not (pca > 0.0 and pcb > 0.0):
                continue
            va = 1.0 / pca
            vb = 1.0 / pcb
            # the cancellation-free messages: with a prior spread 1e7 times its neighbours' (W -> 1) the
            # marginal-variance form va (1 - va W / v) rounds to 0 and the update used to be skipped
            new_pa, new_ta, new_pb, new_tb = tilted_messages(WIN, 0.0, tca * va, va, tcb * vb, vb)
            prec[a] += new_pa - msg[k, 0]
            tau[a] += new_ta - msg[k, 1]
            prec[b] += new_pb - msg[k, 2]
            tau[b] += new_tb - msg[k, 3]
            msg[k, 0] = new_pa
            msg[k, 1] = new_ta
            msg[k, 2] = new_pb
            msg[k, 3] = new_tb
    for i in range(n):
        mean[i] = tau[i] / prec[i]
        sd[i] = 1.0 / math.sqrt(prec[i])
        slope[i] = 0.0
    for k in range(factors):
        a, b = _factor_ends(k, stages)
        slope[a] = max(slope[a], abs(msg[k, 1] - msg[k, 0] * mean[a]))
        slope[b] = max(slope[b], abs(msg[k, 3] - msg[k, 2] * mean[b]))


@jit
def _pooled_mode(kind: int, shape: float, loc: NDArray[np.float64], scale: NDArray[np.float64],
                 idx: NDArray[np.int64], a: int, b: int, c: int, e: int) -> float:
    """The ``v`` maximizing ``sum_{t in a..b-1} log f((v - loc_i)/scale_i) + sum_{t in c..e-1} log F(...)``,
    ``i = idx[t]`` (the second sum: non-finishers below ``v``): the root of ``sum psi(z_i)/scale_i -
    sum f(z_i)/(F(z_i) scale_i)`` (increasing in ``v`` for log-concave densities), by bisection on a
    bracket grown from the members' locations."""
    lo = np.inf
    hi = -np.inf
    for t in range(a, b):
        i = idx[t]
        lo = min(lo, loc[i] - 40.0 * scale[i])
        hi = max(hi, loc[i] + 40.0 * scale[i])
    for t in range(c, e):
        i = idx[t]
        hi = max(hi, loc[i] + 40.0 * scale[i])
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        f = 0.0
        for t in range(a, b):
            i = idx[t]
            f += score(kind, shape, (mid - loc[i]) / scale[i]) / scale[i]
        for t in range(c, e):
            i = idx[t]
            z = (mid - loc[i]) / scale[i]
            f -= math.exp(min(log_reverse_hazard(kind, shape, z), 700.0)) / scale[i]
        if f > 0.0:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


@jit
def _isotonic_mode(kind: int, shape: float, loc: NDArray[np.float64], scale: NDArray[np.float64],
                   seq: NDArray[np.int64], n: int, n_below: int, value: NDArray[np.float64],
                   set_lo: NDArray[np.float64], set_hi: NDArray[np.float64]) -> None:
    """The most likely performances under the order ``x_seq[0] >= x_seq[1] >= ... >= x_seq[n-1]``, with
    the competitors ``seq[n:n + n_below]`` somewhere below the last (pool adjacent violators with each
    block at its joint mode, :func:`_pooled_mode`; the non-finishers enter through their distribution
    functions): where an upset is decided.  For the Gaussian it is the weighted isotonic regression of
    the means.  ``set_lo, set_hi`` receive, for the members of a pooled block, where the block's joint
    log-density is :data:`LEVEL` below its peak (else the mode): the posterior's extent when it is flat."""
    start = np.empty(n + 1, dtype=np.int64)
    val = np.empty(n)
    blocks = 0
    for k in range(n):
        start[blocks] = k
        tail = n_below if k + 1 == n else 0
        val[blocks] = _pooled_mode(kind, shape, loc, scale, seq, k, k + 1, n, n + tail)
        blocks += 1
        while blocks > 1 and val[blocks - 2] < val[blocks - 1]:
            blocks -= 1
            val[blocks - 1] = _pooled_mode(kind, shape, loc, scale, seq, start[blocks - 1], k + 1, n, n + tail)
    start[blocks] = n
    for bk in range(blocks):
        a, b = start[bk], start[bk + 1]
        lo = hi = val[bk]
        if b - a > 1 and (kind == LOGISTIC or kind == GUMBEL):
            # pooled: with exponential tails the joint density can be flat far beyond a spread
            tail = n_below if b == n else 0
            lo = _level_edge(kind, shape, loc, scale, seq, a, b, n, n + tail, val[bk], -1.0)
            hi = _level_edge(kind, shape, loc, scale, seq, a, b, n, n + tail, val[bk], 1.0)
        for k in range(a, b):
            value[k] = val[bk]
            set_lo[k] = lo
            set_hi[k] = hi


@jit
def _pooled_log(kind: int, shape: float, loc: NDArray[np.float64], scale: NDArray[np.float64],
                idx: NDArray[np.int64], a: int, b: int, c: int, e: int, v: float) -> float:
    """The objective :func:`_pooled_mode` maximizes, at ``v``."""
    out = 0.0
    for t in range(a, b):
        i = idx[t]
        out += logpdf(kind, shape, (v - loc[i]) / scale[i]) - math.log(scale[i])
    for t in range(c, e):
        i = idx[t]
        out += logcdf(kind, shape, (v - loc[i]) / scale[i])
    return out


@jit
def _level_edge(kind: int, shape: float, loc: NDArray[np.float64], scale: NDArray[np.float64],
                idx: NDArray[np.int64], a: int, b: int, c: int, e: int, mode: float, side: float) -> float:
    """Where, on ``side`` (-1 below, +1 above) of ``mode``, a pooled block's joint log-density has fallen
    :data:`LEVEL` below its value at the mode: doubling steps out, then bisection."""
    target = _pooled_log(kind, shape, loc, scale, idx, a, b, c, e, mode) - LEVEL
    step = np.inf
    for t in range(a, b):
        step = min(step, scale[idx[t]])
    inside = mode
    outside = mode + side * step
    for _ in range(2100):
        if not (_pooled_log(kind, shape, loc, scale, idx, a, b, c, e, outside) > target):
            break
        inside = outside
        step *= 2.0
        outside = mode + side * step
    for _ in range(60):
        mid = 0.5 * (inside + outside)
        if mid == inside or mid == outside:
            break
        if _pooled_log(kind, shape, loc, scale, idx, a, b, c, e, mid) > target:
            inside = mid
        else:
            outside = mid
    return outside


@jit
def _tail_edge(kind: int, shape: float, loc: float, scale: float, b: float, side: float) -> float:
    """A point beyond ``b`` on ``side`` (-1 below, +1 above) with ``log f`` there :data:`LEVEL` below its value at
    ``b`` (doubling steps out from ``b``, then bisection).  For a log-concave density ``F(a) / F(b) <= f(a) / f(b)``
    below ``b`` (``f / F`` falls) and ``(1 - F(a)) / (1 - F(b)) <= f(a) / f(b)`` above (``f / (1 - F)`` rises): a
    distribution function integrated from (or to) ``a`` misses at most ``e^-LEVEL`` of ``F(b)`` (of ``1 - F(b)``)."""
    target = logpdf(kind, shape, (b - loc) / scale) - LEVEL
    step = scale
    inside = b
    outside = b + side * step
    for _ in range(200):
        if not (logpdf(kind, shape, (outside - loc) / scale) > target):
            break
        inside = outside
        step *= 2.0
        outside = b + side * step
    for _ in range(60):
        mid = 0.5 * (inside + outside)
        if mid == inside or mid == outside:
            break
        if logpdf(kind, shape, (mid - loc) / scale) > target:
            inside = mid
        else:
            outside = mid
    return outside


@jit
def lay_windows(lo: NDArray[np.float64], hi: NDArray[np.float64], count: int, h: float, min_span: int,
                budget: int) -> tuple[float, NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], int, bool]:
    """Windows ``[lo_g, hi_g]`` (``g < count``) laid on one lattice ``x0 + t h``, ``x0`` the lowest window's start:
    ``(x0, s_idx, e_idx, off, widest, ok)``.  Window ``g`` is the nodes ``s_idx[g] .. e_idx[g]`` (at least
    ``min_span + 1`` of them, for the end stencils), held at ``off[g]:off[g + 1]`` of one array of all windows'
    nodes; ``widest`` is the most nodes of one window; ``ok`` is False once the nodes pass ``budget`` (the
    caller declines or coarsens).  The ordering engine's tiers all lay their windows so."""
    x0 = lo[0]
    for g in range(count):
        x0 = min(x0, lo[g])
    s_idx = np.empty(count, dtype=np.int64)
    e_idx = np.empty(count, dtype=np.int64)
    off = np.empty(count + 1, dtype=np.int64)
    off[0] = 0
    widest = 0
    for g in range(count):
        s_idx[g] = int(math.floor((lo[g] - x0) / h))
        e_idx[g] = max(int(math.ceil((hi[g] - x0) / h)), s_idx[g] + min_span)
        off[g + 1] = off[g] + e_idx[g] - s_idx[g] + 1
        widest = max(widest, e_idx[g] - s_idx[g] + 1)
        if off[g + 1] > budget:
            return x0, s_idx, e_idx, off, widest, False
    return x0, s_idx, e_idx, off, widest, True
