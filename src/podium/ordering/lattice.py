"""Graded lattices and log-space integration on them: the quadrature under :mod:`podium.ordering`.

A *lattice* is a sorted set of nodes made of *runs*: stretches of equal spacing.  It is built from
*windows* ``[lo_i, hi_i]`` (where competitor ``i``'s posterior mass lies) and the step each window needs
(``h_i``); inside a window the spacing is at most ``h_i``, and between windows of different needs it
changes by factors of two, at least :data:`MIN_RUN` nodes per spacing (a graded mesh), so that a wide
competitor next to a narrow one costs ``O(log(ratio))`` extra nodes instead of a global fine step.
Space that no window covers holds no nodes at all: clusters far apart (a spread of ``1e6`` scales) cost
nothing in between.

On a run of spacing ``h`` the integral of a smooth ``u`` is the trapezoid rule with its Euler-Maclaurin
end corrections (``O(h^8)``)::

    int_a^b u = T(a, b) - [E(b) - E(a)],   E(x) = h^2/12 u'(x) - h^4/720 u'''(x) + h^6/30240 u^(5)(x).

The derivatives come from 7-point finite differences of ``log u`` (shifted toward the inside of a run at
its ends), and the part of ``E`` that is a pure exponential, ``u h K(h (log u)')`` with
``K(z) = coth(z/2)/2 - 1/z``, is summed in closed form, so a steep integrand (an upset, a tail) is as
accurate as a flat one.  Cumulative integrals are kept in log space relative to a running scale, so
nothing under- or overflows.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from .densities import LOG_FLOOR as _LOG_FLOOR  # one floor for every log-space quantity
from .numerics import jit

__all__ = ["MIN_RUN", "build_lattice", "cumulate", "integrate", "node_range", "node_weights"]

MIN_RUN = 16          # nodes per spacing before the spacing may double again (grading)
MAX_NODES = 1 << 23   # a lattice larger than this is refused: the caller coarsens instead
MASS_NOISE = 1e-13   # a posterior mass's tolerance grows by this times |log P|: the rounding of log-densities of
                     # that size, which no finer lattice removes (every engine's self-check)


def _fd_table() -> NDArray[np.float64]:
    """``W[c + 3, d - 1, k]``: weight of node ``j + c - 3 + k`` in the ``d``-th derivative at node ``j``
    (``d = 1..5``), for the 7-point stencil shifted by ``c`` in ``-3..3`` (0 is central)."""
    out = np.empty((7, 5, 7))
    for c in range(-3, 4):
        k = np.arange(c - 3, c + 4, dtype=np.float64)
        v = np.array([k ** p / math.factorial(p) for p in range(7)])
        out[c + 3] = np.linalg.solve(v, np.eye(7))[:, 1:6].T
    return out


_FD = _fd_table()


@jit
def _k_exp(z: float) -> float:
    """``coth(z/2)/2 - 1/z``: the trapezoid rule's exact excess for ``int_{-inf}^x e^{lambda t} dt`` per
    ``h e^{lambda x}``, ``z = lambda h`` (the Euler-Maclaurin series ``z/12 - z^3/720 + ...`` summed)."""
    if abs(z) < 1.0:  # the Bernoulli series; its terms shrink by (z / 2 pi)^2, the first left out < 1e-11
        z2 = z * z
        return z * (1.0 / 12.0 - z2 * (1.0 / 720.0 - z2 * (1.0 / 30240.0 - z2 * (
            1.0 / 1209600.0 - z2 * (1.0 / 47900160.0 - z2 * (691.0 / 1307674368000.0))))))
    return 0.5 / math.tanh(0.5 * z) - 1.0 / z


@jit
def node_range(x: NDArray[np.float64], lo: float, hi: float) -> tuple[int, int]:
    """``(s, e)``: the nodes ``s..e`` that cover ``[lo, hi]`` (the last node at or below ``lo`` to the
    first at or above ``hi``, clipped to the lattice)."""
    n = len(x)
    s = int(np.searchsorted(x, lo, side="right")) - 1
    e = int(np.searchsorted(x, hi, side="left"))
    return max(s, 0), min(e, n - 1)


@jit
def build_lattice(lo: NDArray[np.float64], hi: NDArray[np.float64], step: NDArray[np.float64],
                  m: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Nodes covering the union of the windows ``[lo_i, hi_i]`` (``i < m``) and each node's spacing to
    the next (0 where a cluster ends, so that no integral spans a gap).

    Inside window ``i`` the spacing is at most ``step_i``; outside every window there are no nodes.  The
    spacing is ``h0 2^k`` (``h0`` the smallest step) and grows by at most one power of two every
    :data:`MIN_RUN` nodes: at distance ``d`` from window ``i`` the spacing may reach
    ``step_i 2^floor(log2(1 + d / (MIN_RUN step_i)))``.
    """
    h0 = np.inf
    for i in range(m):
        h0 = min(h0, step[i])
    order = np.argsort(lo[:m], kind="mergesort")
    uniform = True
    for i in range(m):
        if step[i] >= 2.0 * h0:
            uniform = False
    # clusters: the union of the windows, as sorted disjoint intervals
    c_lo = np.empty(m)
    c_hi = np.empty(m)
    clusters = 0
    for t in range(m):
        i = order[t]
        if clusters > 0 and lo[i] <= c_hi[clusters - 1]:
            c_hi[clusters - 1] = max(c_hi[clusters - 1], hi[i])
        else:
            c_lo[clusters] = lo[i]
            c_hi[clusters] = hi[i]
            clusters += 1
    # count, then fill (the walk is deterministic)
    total = 0
    for phase in range(2):
        if phase == 1:
            x = np.empty(total)
            gap = np.empty(total)
        j = 0
        for c in range(clusters):
            a = c_lo[c]
            b = c_hi[c]
            if uniform:
                cnt = int(math.ceil((b - a) / h0)) + 1
                if phase == 1:
                    for t in range(cnt):
                        x[j + t] = a + t * h0
                        gap[j + t] = h0
                    gap[j + cnt - 1] = 0.0
                j += cnt
                if j > MAX_NODES:
                    return np.empty(0), np.empty(0)
                continue
            pos = a
            level = -1
            since = 0
            first = j
            while True:
                # the largest power-of-two spacing every window allows over the next stretch
                allowed = np.inf
                for i in range(m):
                    d = 0.0
                    if lo[i] > pos:
                        d = lo[i] - pos
                    elif hi[i] < pos:
                        d = pos - hi[i]
                    g = step[i] * 2.0 ** math.floor(math.log2(1.0 + d / (MIN_RUN * step[i])))
                    allowed = min(allowed, g)
                want = int(math.floor(math.log2(allowed / h0) + 1e-12))
                if level < 0 or want < level:
                    level = want
                    since = 0
                elif want > level and since >= MIN_RUN:
                    level += 1
                    since = 0
                h = h0 * 2.0 ** level
                if phase == 1:
                    x[j] = pos
                    gap[j] = h
                j += 1
                since += 1
                if j - first > MAX_NODES:
                    return np.empty(0), np.empty(0)
                if pos >= b:
                    break
                pos += h
            if phase == 1:
                gap[j - 1] = 0.0
        total = j
    return x, gap


@jit
def _stencil_ok(a: NDArray[np.float64], j: int, lo: int, hi: int, c: int) -> bool:
    """Whether the 7 values of the stencil around ``j`` (shift ``c``) exist and are resolved: all
    finite and within ``e^60`` of ``a[j]`` (otherwise the integrand is a cliff the step cannot follow)."""
    for k in range(7):
        t = j + c - 3 + k
        if t < lo or t > hi:
            return False
        v = a[t]
        if not (v > a[j] - 60.0 and v < a[j] + 60.0):
            return False
    return True


@jit
def _correction(a: NDArray[np.float64], j: int, lo: int, hi: int, h: float, sgn: float) -> float:
    """``E(x_j) / u_j`` on a run of spacing ``h`` whose nodes are ``lo..hi``; ``a = log u``; ``sgn = -1``
    for an integral taken from the right (the derivatives change sign)."""
    if h == 0.0:
        return 0.0
    c = 0
    if j - 3 < lo:
        c = lo - (j - 3)
    elif j + 3 > hi:
        c = hi - (j + 3)
    if c < -3 or c > 3 or not _stencil_ok(a, j, lo, hi, c):
        # too short a run or a cliff: the exponential part with a two-point slope, if any
        if j + 1 <= hi and a[j + 1] > _LOG_FLOOR and a[j] > _LOG_FLOOR:
            z = sgn * (a[j + 1] - a[j])
        elif j - 1 >= lo and a[j - 1] > _LOG_FLOOR and a[j] > _LOG_FLOOR:
            z = sgn * (a[j] - a[j - 1])
        else:
            return 0.0
        return h * _k_exp(z)
    l1 = 0.0
    l2 = 0.0
    l3 = 0.0
    l4 = 0.0
    l5 = 0.0
    w = _FD[c + 3]
    for k in range(7):
        v = a[j + c - 3 + k] - a[j]
        l1 += w[0, k] * v
        l2 += w[1, k] * v
        l3 += w[2, k] * v
        l4 += w[3, k] * v
        l5 += w[4, k] * v
    z = sgn * l1
    corr = h * _k_exp(z)
    if abs(z) > 2.0:
        return corr
    # In units of the step (the stencil sums are h^k times the k-th derivative of log u): h^3 u'''/u and h^5 u^(5)/u
    # less their pure-exponential parts (z^3, z^5), which corr already holds.  No power of h is formed: with steps
    # of 1e-155 (scales 1e154 apart) h^4 underflowed to 0 and the division by it raised.
    l3 *= sgn
    l5 *= sgn
    mixed3 = l3 + 3.0 * z * l2
    mixed5 = l5 + 5.0 * z * l4 + 10.0 * l2 * l3 + 10.0 * z * z * l3 + 15.0 * z * l2 * l2 + 10.0 * z * z * z * l2
    return corr - h / 720.0 * mixed3 + h / 30240.0 * mixed5


@jit
def cumulate(a: NDArray[np.float64], g: NDArray[np.float64], n: int, out: NDArray[np.float64]) -> None:
    """``out[t] = log int_{x_0}^{x_t} exp(a)`` for ``t < n``, nodes with spacings ``g[t] = x_(t+1) - x_t``.

    Run by run (a run: equal spacings): the trapezoid sum from the run's first node ``p`` plus the
    integral up to ``p``, less the Euler-Maclaurin corrections at both ends (:func:`_correction`).  Sums
    are linear relative to a scale raised whenever the integrand outgrows it.  Where the corrections
    would make a value non-positive (a cliff the step cannot follow) the trapezoid value stands.  For an
    integral from the right, pass the arrays reversed (the rule is the same in ``y = -x``).
    """
    scale = -np.inf
    base = 0.0     # integral up to the run's first node, relative to scale
    run = 0.0      # trapezoid sum over the run so far (first node halved), relative to scale
    u0 = 0.0       # the run's first integrand value and its correction E / u
    e0 = 0.0
    p = 0
    q = 0
    h = 0.0
    out[0] = _LOG_FLOOR
    for t in range(n):
        at = max(a[t], _LOG_FLOOR)
        if at > scale - 1.0:  # keep the running sums below e relative to the scale
            new = at + 30.0
            if scale != -np.inf:
                f = math.exp(scale - new)
                base *= f
                run *= f
                u0 *= f
            scale = new
        u = math.exp(at - scale)
        if t == q:  # a run starts here (or the sweep does)
            if t > 0 and h == 0.0:
                out[t] = scale + math.log(base) if base > 0.0 else _LOG_FLOOR
            elif t > 0:
                run += u
                total = base + h * (run - 0.5 * u) - u * _correction(a, t, p, q, h, 1.0) + u0 * e0
                if not total > 0.0:
                    total = base + h * (run - 0.5 * u)
                base = total
                out[t] = scale + math.log(total) if total > 0.0 else _LOG_FLOOR
            if t == n - 1:
                break
            p = t
            q = t + 1
            h = g[t]
            while q < n - 1 and g[q] == h:
                q += 1
            run = 0.5 * u
            u0 = u
            e0 = _correction(a, t, p, q, h, 1.0)
            continue
        run += u
        if h == 0.0:  # a gap between clusters: nothing accrues
            out[t] = scale + math.log(base) if base > 0.0 else _LOG_FLOOR
            continue
        trap = base + h * (run - 0.5 * u) + u0 * e0
        # the end correction is of the order of this node's share: skip it where that is below rounding
        total = trap - u * _correction(a, t, p, q, h, 1.0) if u * h > 1e-17 * trap else trap
        if not total > 0.0:
            total = base + h * (run - 0.5 * u)
        out[t] = scale + math.log(total) if total > 0.0 else _LOG_FLOOR


@jit
def node_weights(g: NDArray[np.float64], n: int, w: NDArray[np.float64]) -> None:
    """Quadrature weights ``w[:n]`` with ``int_{x_0}^{x_(n-1)} f ~ sum_j w_j f_j`` for a smooth ``f``.

    Per run the trapezoid rule less the Euler-Maclaurin end corrections
    ``h^2/12 f' - h^4/720 f^(3) + h^6/30240 f^(5)``, the derivatives from 7-point differences shifted inside
    the run at its ends (a linear rule, so it is a set of weights; runs shorter than 7 nodes keep the plain
    trapezoid rule).  Exact for polynomials of degree 6 on every run, so a graded lattice loses nothing
    where its spacing doubles.
    """
    for j in range(n):
        w[j] = 0.0
    p = 0
    while p < n - 1:
        h = g[p]
        q = p + 1
        while q < n - 1 and g[q] == h:
            q += 1
        if h == 0.0:
            p = q
            continue
        w[p] += 0.5 * h
        w[q] += 0.5 * h
        for t in range(p + 1, q):
            w[t] += h
        if q - p >= 6:
            for end in range(2):
                j = q if end == 1 else p
                c = 0
                if j - 3 < p:
                    c = p - (j - 3)
                elif j + 3 > q:
                    c = q - (j + 3)
                fd = _FD[c + 3]
                sign = 1.0 if end == 0 else -1.0
                for k in range(7):
                    w[j + c - 3 + k] += sign * h * (fd[0, k] / 12.0 - fd[2, k] / 720.0 + fd[4, k] / 30240.0)
        p = q


@jit
def integrate(f: NDArray[np.float64], g: NDArray[np.float64], n: int) -> float:
    """``int_{x_0}^{x_(n-1)} f`` for a smooth ``f`` given in linear space (it may change sign), with the
    weights of :func:`node_weights`."""
    w = np.empty(n)
    node_weights(g, n, w)
    total = 0.0
    for j in range(n):
        total += w[j] * f[j]
    return total
