"""Exact posterior moments of Gaussian performances given an observed order: TrueSkill's assumed-density update.

Competitor ``i`` performs ``X_i ~ N(m_i, s_i^2)``, independently.  The outcome is the one of
:func:`podium.ordering.log_outcome` with a draw margin ``e > 0`` (TrueSkill's): stages best first, a stage
one competitor or a drawn group, the best performance of each stage above the next stage's best by the link
``e sqrt(size_a + size_b)``, every member of a drawn group within ``e sqrt(size_i + size_j)`` below the group's
best ``i``, and the non-finishers below the last stage's best in any order.  This module computes ``log P`` of
that outcome and, for every competitor, the exact posterior mean and variance of ``X_i`` given it.  With them
TrueSkill's update is the assumed-density filter of Minka (2001) with the *exact* match likelihood: every
player's posterior is the Gaussian with the exact posterior's mean and variance.

**Why not the paper's update.**  On TrueSkill's chain of differences (Herbrich et al. 2007, fig. 1) every win
is a difference beyond the draw margin, so a field of ``n`` is spread over at least ``(n - 1) e`` of
performance: the winner of ``n`` newcomers from ``N(25, 8.33^2)`` goes to 62 (100 players), 156 (434) and
322 (1,000).  That is the model, not expectation propagation: this module's exact posterior of the same
likelihood (``links=True``) also gives 62.28 for 100 players.  With places only ordered (``links=False``, the
update of ``TrueSkill(update="exact")``) the exact posterior mean grows like ``sqrt(2 log n)``: 43.7, 47.3,
49.2.  Finishing better in a strict order never lowers an exact posterior mean (a likelihood-ratio ordering);
moving into a drawn group can, by a little (tests/models/test_monotone.py has the examples): the margin draw model
lets the group's level fall.

**The recursion** is the multiplayer-Elo note's (section 3.3), on the stages' best performances ``x_g``:

    C_G(x) = prod_d Phi((x - m_d)/s_d),   C_g(x) = int_(-inf)^x q_g C_(g+1),   P = C_0(inf),
    D_(-1) = 1,   D_g(x) = int_x^inf q_g D_(g-1),   posterior of x_g: q_g D_(g-1) C_(g+1) / P,

with links made location shifts, ``q_g`` one competitor's density or, for a drawn group,
``sum_b f_b(x) prod_(j != b) [F_j(x) - F_j(x - e_bj)]``.  Given ``x_g = x``, a group member is the best with
probability ``f_b prod_(j != b) Delta_bj / q_g`` and otherwise a Gaussian truncated to ``(x - e_bj, x)``; a
non-finisher given the last stage's ``x`` is a Gaussian truncated above at ``x``.  The moments of those
truncated Gaussians are closed forms, mixed over the stage's posterior.

**How it is integrated.**  One uniform lattice for all stages (every stage's nodes are its neighbours'
nodes), each stage on its own window of it, in linear space with one log-scale per stage and sweep; the
cumulative integrals are the trapezoid rule less its Euler-Maclaurin corrections ``h^2/12 (u'(b) - u'(a))`` and
``-h^4/720 (u'''(b) - u'''(a))`` with five-point differences (``O(h^6)``).  The windows are found by the sweeps themselves: a first
attempt on a coarse lattice over the whole range places every stage's posterior within a step, then each
attempt centres the windows at the measured means, ``+-`` :data:`REACH` measured spreads (at least a half step
of the attempt before), with the step :data:`THETA` times the narrowest measured spread.  An attempt is
accepted when every stage's posterior integrates to 1 within :data:`MASS_TOL` (the error indicator of the
quadrature and the truncation), no window end holds posterior density, and its step resolved the spreads it
measured; otherwise at most :data:`ATTEMPTS` attempts.  When none is accepted, :func:`order_moments` says so
and the caller keeps the prior (:class:`podium.ConvergenceWarning`).

**Limits, measured.**  The mass check cannot see an error that the forward and backward sweeps share, so the
rule and its step were measured against exact order statistics: the winner of 1,000 newcomers is within 1e-7 of
its quadrature value (a corrected trapezoid rule in linear space at 0.06 spreads left 0.037).  Time on a loaded
two-core machine: 1,000 places 0.4 s, 4,000 places 4-5 s, 10,000 places 16 s, 10,000 with a tie group of half
the field 19 s (eight attempts widen the big group's window one end at a time).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from .densities import GAUSSIAN, log_cdf_diff
from .numerics import jit, log_ndtr, logsumexp, truncated_moments
from .outcome import _finish_order, rank_groups
from .windows import lay_windows

__all__ = ["order_moments"]

THETA = 0.1          # lattice step / the narrowest posterior spread
STEEP = 2.5          # largest change of log C or log D between neighbouring nodes where a posterior holds mass:
                     # crowded fields (log C rises by about n phi/Phi per unit) need it; at 2.0 the winner of 1,000
                     # newcomers is within 1e-7 of its quadrature value
REACH = 9.0          # a window is the measured mean +- this many measured spreads
COARSE_NODES = 600_000  # nodes of the first, coarse attempt (all stages over the whole range), and
COARSE_MIN, COARSE_MAX = 240, 4000  # its nodes per stage within these
MASS_TOL = 1e-8      # |posterior mass - 1| accepted, plus 1e-13 |log P| (rounding)
EDGE_TOL = 1e-12     # posterior density x spread allowed at a window's end
ATTEMPTS = 16
QUANTILE_STAGES = 64  # from this many stages the first windows are the field's quantiles, not a coarse attempt
QUANTILE_NODES = 512  # the lattice on which the expected count above x is tabulated
NODE_CAP = 30_000_000  # stage-nodes of one attempt at most
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


@jit
def _log_q(loc: NDArray[np.float64], scale: NDArray[np.float64], members: NDArray[np.int64], a: int, b: int,
           geps: float, margin: float, size: NDArray[np.float64], x: float, terms: NDArray[np.float64]) -> float:
    """``log q_g(x)`` of the stage ``members[a:b]``.  For a group also ``terms[u - a] = log(f_u prod_(j != u)
    Delta_uj)``, ``Delta_uj = F_j(x) - F_j(x - e_uj)``, up to a common constant: with one margin ``geps >= 0``
    for every pair (equal sizes) in ``O(k)`` as ``log f_u - log Delta_u`` (the product over all added to the
    result), else pair by pair with ``e_uj = margin sqrt(size_u + size_j)``."""
    if b - a == 1:
        i = members[a]
        z = (x - loc[i]) / scale[i]
        return -0.5 * z * z - math.log(scale[i]) - _LOG_SQRT_2PI
    if geps >= 0.0:
        total = 0.0
        for u in range(a, b):
            i = members[u]
            z = (x - loc[i]) / scale[i]
            ld = log_cdf_diff(GAUSSIAN, 0.0, z, geps / scale[i])
            total += ld
            terms[u - a] = -0.5 * z * z - math.log(scale[i]) - _LOG_SQRT_2PI - ld
        return total + logsumexp(terms, b - a)
    for u in range(a, b):
        i = members[u]
        z = (x - loc[i]) / scale[i]
        acc = -0.5 * z * z - math.log(scale[i]) - _LOG_SQRT_2PI
        for v in range(a, b):
            if v != u:
                j = members[v]
                e = margin * math.sqrt(size[i] + size[j])
                acc += log_cdf_diff(GAUSSIAN, 0.0, (x - loc[j]) / scale[j], e / scale[j])
        terms[u - a] = acc
    return logsumexp(terms, b - a)


@jit
def _log_slope(l: NDArray[np.float64], k: int, n: int, h: float) -> float:
    """The derivative of the log-values ``l[:n]`` at node ``k``: the five-point central difference where its
    nodes are finite, else the widest finite one-sided or central difference (0 with no finite neighbour)."""
    if k >= 2 and k <= n - 3:
        a, b, c, d = l[k - 2], l[k - 1], l[k + 1], l[k + 2]
        if a > -np.inf and b > -np.inf and c > -np.inf and d > -np.inf:
            return (a - 8.0 * b + 8.0 * c - d) / (12.0 * h)
    if k >= 1 and k <= n - 2 and l[k - 1] > -np.inf and l[k + 1] > -np.inf:
        return (l[k + 1] - l[k - 1]) / (2.0 * h)
    if k <= n - 3 and l[k + 1] > -np.inf and l[k + 2] > -np.inf:
        return (-3.0 * l[k] + 4.0 * l[k + 1] - l[k + 2]) / (2.0 * h)
    if k >= 2 and l[k - 1] > -np.inf and l[k - 2] > -np.inf:
        return (3.0 * l[k] - 4.0 * l[k - 1] + l[k - 2]) / (2.0 * h)
    if k <= n - 2 and l[k + 1] > -np.inf:
        return (l[k + 1] - l[k]) / h
    if k >= 1 and l[k - 1] > -np.inf:
        return (l[k] - l[k - 1]) / h
    return 0.0


_GL4_T = np.array([0.06943184420297371, 0.33000947820757187, 0.6699905217924281, 0.9305681557970262])
_GL4_W = np.array([0.17392742256872692, 0.3260725774312731, 0.3260725774312731, 0.17392742256872692])


@jit
def _cumulate(l: NDArray[np.float64], n: int, h: float, out: NDArray[np.float64], reverse: bool,
              slope: NDArray[np.float64]) -> float:
    """Cumulative integral of ``exp(l[:n])`` (``l`` the log-values, at most 0; from the first node, or from the
    last with ``reverse``; ``slope`` is scratch); returns the whole integral.

    On each step the log-value is the cubic Hermite interpolant of the values and their slopes (five-point
    differences), integrated by four-point Gauss-Legendre: the error follows the smoothness of ``log u``, not of
    ``u``, so the steep forward functions of a crowded field (``log C`` rising by ``n phi/Phi`` per unit of
    performance: thousands of nats over a posterior's spread among 10,000 players) are integrated as exactly as a
    flat one.  A step with a value of 0 (outside a neighbour's window) is a trapezoid."""
    for k in range(n):
        slope[k] = _log_slope(l, k, n, h) if l[k] > -np.inf else 0.0
    acc = 0.0
    out[n - 1 if reverse else 0] = 0.0
    for m in range(1, n):
        j = n - 1 - m if reverse else m - 1  # the step from node j to node j + 1
        a, b = l[j], l[j + 1]
        if a > -np.inf and b > -np.inf:
            da, db = slope[j] * h, slope[j + 1] * h
            step = 0.0
            for q in range(4):
                t = _GL4_T[q]
                t2 = t * t
                t3 = t2 * t
                v = ((2.0 * t3 - 3.0 * t2 + 1.0) * a + (t3 - 2.0 * t2 + t) * da + (-2.0 * t3 + 3.0 * t2) * b
                     + (t3 - t2) * db)
                step += _GL4_W[q] * math.exp(min(v, 700.0))
            step *= h
        else:
            step = 0.5 * h * ((math.exp(a) if a > -np.inf else 0.0) + (math.exp(b) if b > -np.inf else 0.0))
        acc += step
        out[n - 1 - m if reverse else m] = acc
    return acc


@jit
def _log_cumulative(u: NDArray[np.float64], n: int, h: float, cum: NDArray[np.float64], reverse: bool,
                    scratch: NDArray[np.float64], out: NDArray[np.float64], at: int) -> float:
    """One stage's forward (or with ``reverse`` backward) function from its integrand's log-values ``u[:n]``
    (overwritten): ``out[at + j]`` receives its log relative to its whole integral, and the log of that whole
    is returned (NaN where the integrand vanishes on the window)."""
    top = -np.inf
    for j in range(n):
        top = max(top, u[j])
    if not top > -np.inf:
        return np.nan
    for j in range(n):
        u[j] -= top
    whole = _cumulate(u, n, h, cum, reverse, scratch)
    if not whole > 0.0:
        return np.nan
    for j in range(n):
        out[at + j] = math.log(cum[j] / whole) if cum[j] > 0.0 else -np.inf
    return math.log(whole) + top


@jit
def _attempt(loc: NDArray[np.float64], scale: NDArray[np.float64], members: NDArray[np.int64],
             start: NDArray[np.int64], stages: int, geps: NDArray[np.float64], margin: float,
             size: NDArray[np.float64], dnf: NDArray[np.int64], n_dnf: int,
             lo: NDArray[np.float64], hi: NDArray[np.float64], h: float, pmean: NDArray[np.float64],
             psd: NDArray[np.float64], edge_lo: NDArray[np.bool_], edge_hi: NDArray[np.bool_],
             post_mean: NDArray[np.float64], post_var: NDArray[np.float64],
             steep: NDArray[np.float64]) -> tuple[float, float]:
    """One attempt with windows ``[lo_g, hi_g]`` and step ``h``: ``(log P, worst |mass - 1|)`` (``nan`` when
    it cannot be taken); writes each stage's posterior mean and spread into ``pmean, psd``, which window ends
    held density into ``edge_lo, edge_hi``, and every competitor's posterior moments; ``steep[0]`` receives the
    largest change of ``log C`` or ``log D`` from one node to the next where a posterior holds mass."""
    x0, s_idx, e_idx, off, _, laid = lay_windows(lo, hi, stages, h, 6, NODE_CAP)
    if not laid:
        return np.nan, np.nan
    total = off[stages]
    lq = np.empty(total)
    lc = np.empty(total)   # log C_g relative to C_g(inf)
    ld = np.empty(total)   # log D_g relative to D_g(-inf)
    cs = np.zeros(stages + 1)  # log C_g(inf); cs[stages] unused (C_G is computed at the nodes)
    ds = np.zeros(stages + 1)  # ds[g + 1] = log D_g(-inf); ds[0] = 0 (D_(-1) = 1)
    widest = 0
    biggest = 1
    for g in range(stages):
        widest = max(widest, e_idx[g] - s_idx[g] + 1)
        biggest = max(biggest, start[g + 1] - start[g])
    u = np.empty(widest)
    cum = np.empty(widest)
    scratch = np.empty(widest)
    terms = np.empty(biggest)
    for g in range(stages):
        for j in range(e_idx[g] - s_idx[g] + 1):
            x = x0 + (s_idx[g] + j) * h
            lq[off[g] + j] = _log_q(loc, scale, members, start[g], start[g + 1], geps[g], margin, size, x,
                                     terms)
    # forward: C_g on stage g's window, from the bottom
    for g in range(stages - 1, -1, -1):
        n = e_idx[g] - s_idx[g] + 1
        for j in range(n):
            J = s_idx[g] + j
            below = _log_below(lc, off, s_idx, e_idx, g, stages, J, x0 + J * h, loc, scale, dnf, n_dnf)
            u[j] = lq[off[g] + j] + below
        scale_g = _log_cumulative(u, n, h, cum, False, scratch, lc, off[g])
        if scale_g != scale_g:
            return np.nan, np.nan
        cs[g] = scale_g + (cs[g + 1] if g < stages - 1 else 0.0)
    log_p = cs[0]
    # backward: D_g from the top
    for g in range(stages):
        n = e_idx[g] - s_idx[g] + 1
        for j in range(n):
            u[j] = lq[off[g] + j] + (_log_d_at(ld, off, s_idx, e_idx, g - 1, s_idx[g] + j) if g > 0 else 0.0)
        scale_g = _log_cumulative(u, n, h, cum, True, scratch, ld, off[g])
        if scale_g != scale_g:
            return np.nan, np.nan
        ds[g + 1] = scale_g + ds[g]
    # posteriors, their moments, mass and edges
    worst = 0.0
    w = u
    bl = np.empty(widest)
    ab = np.empty(widest)
    steep[0] = 0.0
    for g in range(stages):
        n = e_idx[g] - s_idx[g] + 1
        scale_c = cs[g + 1] if g < stages - 1 else 0.0
        top = -np.inf
        for j in range(n):
            J = s_idx[g] + j
            below = _log_below(lc, off, s_idx, e_idx, g, stages, J, x0 + J * h, loc, scale, dnf, n_dnf)
            above = _log_d_at(ld, off, s_idx, e_idx, g - 1, J) if g > 0 else 0.0
            v = lq[off[g] + j] + below + above
            w[j] = v
            bl[j] = below
            ab[j] = above
            top = max(top, v)
        s0 = 0.0
        for j in range(n):
            w[j] = math.exp(w[j] - top)
            s0 += w[j] * (0.5 if j == 0 or j == n - 1 else 1.0)
            if j > 0 and w[j] > 1e-12 and w[j - 1] > 1e-12:
                steep[0] = max(steep[0], abs(bl[j] - bl[j - 1]), abs(ab[j] - ab[j - 1]))
        mass = math.exp(math.log(s0 * h) + top + scale_c + ds[g] - log_p)
        worst = max(worst, abs(mass - 1.0))
        xa = x0 + s_idx[g] * h
        s1 = s2 = 0.0
        for j in range(n):
            y = j * h
            s1 += w[j] * y
            s2 += w[j] * y * y
        # (the end nodes' half weights are below the tolerance wherever the edges pass)
        tot = 0.0
        for j in range(n):
            tot += w[j]
        mean = s1 / tot
        var = max(s2 / tot - mean * mean, 0.0)
        pmean[g] = xa + mean
        psd[g] = math.sqrt(var)
        edge_lo[g] = w[0] / tot * (psd[g] / h + 1.0) > EDGE_TOL
        edge_hi[g] = w[n - 1] / tot * (psd[g] / h + 1.0) > EDGE_TOL
        _member_moments(loc, scale, members, start[g], start[g + 1], geps[g], margin, size, w, n, xa, h, tot,
                        terms, post_mean, post_var)
        if g == stages - 1:
            for t in range(n_dnf):
                d = dnf[t]
                e1 = e2 = 0.0
                for j in range(n):
                    if w[j] > 0.0:
                        mt, vt = truncated_moments(loc[d], scale[d], -np.inf, xa + j * h)
                        e1 += w[j] * mt
                        e2 += w[j] * (vt + mt * mt)
                post_mean[d] = e1 / tot
                post_var[d] = max(e2 / tot - (e1 / tot) ** 2, 0.0)
    return log_p, worst


@jit
def _log_below(lc: NDArray[np.float64], off: NDArray[np.int64], s_idx: NDArray[np.int64], e_idx: NDArray[np.int64],
               g: int, stages: int, J: int, x: float, loc: NDArray[np.float64], scale: NDArray[np.float64],
               dnf: NDArray[np.int64], n_dnf: int) -> float:
    """``log C_(g+1)`` at global node ``J`` (at ``x``): the next stage's forward function, or below the last
    stage the non-finishers' ``sum_d log Phi((x - m_d)/s_d)``."""
    if g < stages - 1:
        return _log_c_at(lc, off, s_idx, e_idx, g + 1, J)
    below = 0.0
    for t in range(n_dnf):
        d = dnf[t]
        below += log_ndtr((x - loc[d]) / scale[d])
    return below


@jit
def _log_c_at(lc: NDArray[np.float64], off: NDArray[np.int64], s_idx: NDArray[np.int64], e_idx: NDArray[np.int64],
              g: int, J: int) -> float:
    """``log C_g`` (relative to ``C_g(inf)``) at global node ``J``: ``-inf`` below the window, 0 above it."""
    if J < s_idx[g]:
        return -np.inf
    if J > e_idx[g]:
        return 0.0
    return lc[off[g] + J - s_idx[g]]


@jit
def _log_d_at(ld: NDArray[np.float64], off: NDArray[np.int64], s_idx: NDArray[np.int64], e_idx: NDArray[np.int64],
              g: int, J: int) -> float:
    """``log D_g`` (relative to ``D_g(-inf)``) at global node ``J``: 0 below the window, ``-inf`` above it."""
    if J > e_idx[g]:
        return -np.inf
    if J < s_idx[g]:
        return 0.0
    return ld[off[g] + J - s_idx[g]]


@jit
def _member_moments(loc: NDArray[np.float64], scale: NDArray[np.float64], members: NDArray[np.int64], a: int,
                    b: int, geps: float, margin: float, size: NDArray[np.float64], w: NDArray[np.float64], n: int,
                    xa: float, h: float, tot: float, terms: NDArray[np.float64],
                    post_mean: NDArray[np.float64], post_var: NDArray[np.float64]) -> None:
    """Each member's posterior mean and variance from its stage's posterior weights ``w`` (summing to
    ``tot``): the stage's own moments for one competitor; for a group, given the best ``x`` a member is the
    best with probability ``pi_u(x)`` and else a Gaussian truncated to ``(x - e, x)``."""
    if b - a == 1:
        s1 = s2 = 0.0
        for j in range(n):
            t = j * h
            s1 += w[j] * t
            s2 += w[j] * t * t
        mean = s1 / tot
        post_mean[members[a]] = xa + mean
        post_var[members[a]] = max(s2 / tot - mean * mean, 0.0)
        return
    k = b - a
    e1 = np.zeros(k)
    e2 = np.zeros(k)
    for j in range(n):
        if w[j] <= 0.0:
            continue
        x = xa + j * h
        wt = w[j] / tot
        _log_q(loc, scale, members, a, b, geps, margin, size, x, terms)
        norm = logsumexp(terms, k)
        for u in range(k):
            i = members[a + u]
            if geps >= 0.0:
                pi_best = math.exp(terms[u] - norm)
                mt, vt = truncated_moments(loc[i], scale[i], x - geps, x)
                e1[u] += wt * (pi_best * x + (1.0 - pi_best) * mt)
                e2[u] += wt * (pi_best * x * x + (1.0 - pi_best) * (vt + mt * mt))
            else:
                for v in range(k):
                    pv = math.exp(terms[v] - norm)
                    if v == u:
                        e1[u] += wt * pv * x
                        e2[u] += wt * pv * x * x
                    else:
                        mt, vt = truncated_moments(loc[i], scale[i], x - margin * math.sqrt(size[members[a + v]] + size[i]), x)
                        e1[u] += wt * pv * mt
                        e2[u] += wt * pv * (vt + mt * mt)
    for u in range(k):
        i = members[a + u]
        post_mean[i] = e1[u]
        post_var[i] = max(e2[u] - e1[u] * e1[u], 0.0)


@jit
def _quantile_windows(loc: NDArray[np.float64], scale: NDArray[np.float64], start: NDArray[np.int64], stages: int,
                      lo_all: float, hi_all: float, lo: NDArray[np.float64], hi: NDArray[np.float64]) -> float:
    """First windows of a large field, and their step: stage ``g``'s best sits near the ``x`` above which
    ``start[g] + 1/2`` performances are expected, ``N(x) = sum_i Phi((loc_i - x)/scale_i)`` (a sample
    quantile), with the spread of that order statistic, ``sqrt(c (n - c) / n) / |N'(x)|`` (Cramer 1946,
    28.6), widened to reach its neighbours' estimates.  ``N`` is tabulated on a lattice and inverted by
    interpolation; the edge checks of the attempts widen what this misses."""
    n = len(loc)
    k = QUANTILE_NODES
    grid = np.empty(k)
    count = np.zeros(k)
    for j in range(k):
        grid[j] = lo_all + (hi_all - lo_all) * j / (k - 1)
    for i in range(n):
        for j in range(k):
            z = (loc[i] - grid[j]) / scale[i]
            if z > 9.0:
                count[j] += 1.0
            elif z > -9.0:
                count[j] += 0.5 * math.erfc(-z / math.sqrt(2.0))
    centre = np.empty(stages)
    spread = np.empty(stages)
    j = k - 2
    for g in range(stages):  # best first: down the grid, where the count above grows
        c = start[g] + 0.5
        while j > 0 and count[j] < c:
            j -= 1
        slope = (count[j] - count[j + 1]) / (grid[j + 1] - grid[j])
        t = (count[j] - c) / slope if slope > 0.0 else 0.0
        centre[g] = grid[j] + min(max(t, 0.0), grid[j + 1] - grid[j])
        spread[g] = math.sqrt(c * max(n - c, 0.5) / n) / max(slope, 1e-300)
    narrow = np.inf
    for g in range(stages):
        below = centre[g] - centre[g + 1] if g + 1 < stages else 0.0
        above = centre[g - 1] - centre[g] if g > 0 else 0.0
        width = max(spread[g], below, above)
        lo[g] = centre[g] - REACH * width
        hi[g] = centre[g] + REACH * width
        narrow = min(narrow, width)
    return THETA * narrow


@jit
def order_moments(loc: NDArray[np.float64], scale: NDArray[np.float64], rank: NDArray[np.int64],
                  size: NDArray[np.float64], margin: float, links: bool, post_mean: NDArray[np.float64],
                  post_var: NDArray[np.float64]) -> tuple[float, bool]:
    """``log P(outcome)`` and every competitor's exact posterior mean and variance of its performance.

    Parameters
    ----------
    loc, scale : performances ``X_i ~ N(loc_i, scale_i^2)``.
    rank : the outcome, 0 best, equal ranks a draw, ``-1`` did not finish.
    size : players per team (the margins grow as ``sqrt(size_a + size_b)``, as TrueSkill's).
    margin : the per-player draw margin ``e > 0`` (a draw needs it).
    links : whether places are separated by the margin too (TrueSkill's paper: a win is ``d > e``), or only
        ordered (``d > 0``; the margin then only defines a draw).
    post_mean, post_var : receive ``E[X_i | outcome]`` and ``Var[X_i | outcome]``.

    Returns
    -------
    (log P, ok) : ``ok`` is false when no attempt passed the self-check (the module's docstring); the
    moments are then those of the last attempt and should not be used.
    """
    n = len(loc)
    order = _finish_order(rank)
    starts = np.empty(n + 1, dtype=np.int64)
    stages, finishers = rank_groups(rank, order, starts)
    n_dnf = n - finishers
    for i in range(n):
        post_mean[i] = loc[i]
        post_var[i] = scale[i] * scale[i]
    if stages == 0 or n < 2:
        return 0.0, True
    members = order[:finishers].copy()
    dnf = order[finishers:].copy()
    start = starts[:stages + 1].copy()
    # links as location shifts: stage g's performances are measured plus the links above it
    shift = np.zeros(n)
    geps = np.empty(stages)
    acc = 0.0
    for g in range(stages):
        big = 0.0
        equal = True
        for k in range(start[g], start[g + 1]):
            big = max(big, size[members[k]])
            equal = equal and size[members[k]] == size[members[start[g]]]
        if start[g + 1] - start[g] > 1 and not margin > 0.0:
            return np.nan, False
        geps[g] = margin * math.sqrt(2.0 * size[members[start[g]]]) if equal else -1.0
        if g > 0 and links:
            prev = 0.0
            for k in range(start[g - 1], start[g]):
                prev = max(prev, size[members[k]])
            acc += margin * math.sqrt(prev + big)
        for k in range(start[g], start[g + 1]):
            shift[members[k]] = acc
    for t in range(n_dnf):
        shift[dnf[t]] = acc
    sloc = np.empty(n)
    for i in range(n):
        sloc[i] = loc[i] + shift[i]
    lo_all = np.inf
    hi_all = -np.inf
    for i in range(n):
        lo_all = min(lo_all, sloc[i] - REACH * scale[i])
        hi_all = max(hi_all, sloc[i] + REACH * scale[i])
    lo = np.full(stages, lo_all)
    hi = np.full(stages, hi_all)
    nodes = min(max(COARSE_NODES // stages, COARSE_MIN), COARSE_MAX)
    h = (hi_all - lo_all) / nodes
    first = 0
    if stages >= QUANTILE_STAGES:
        h = _quantile_windows(sloc, scale, start, stages, lo_all, hi_all, lo, hi)
        first = 1
    pmean = np.empty(stages)
    psd = np.empty(stages)
    edge_lo = np.zeros(stages, dtype=np.bool_)
    edge_hi = np.zeros(stages, dtype=np.bool_)
    widen_lo = np.ones(stages)
    widen_hi = np.ones(stages)
    log_p = np.nan
    steep = np.zeros(1)
    h_cap = np.inf  # the step that the steepness measured so far allows (kept: otherwise the steps alternate)
    for attempt in range(ATTEMPTS):
        log_p, worst = _attempt(sloc, scale, members, start, stages, geps, margin, size, dnf, n_dnf, lo, hi, h,
                                pmean, psd, edge_lo, edge_hi, post_mean, post_var, steep)
        if log_p != log_p:
            if attempt == 0 and first == 0:  # the coarse lattice missed a narrow stage: a finer one
                h *= 0.25
                continue
            return np.nan, False
        measured = attempt >= 1 - first  # the coarse attempt's spreads are at least its step, not measured
        narrow = np.inf
        floor = np.inf  # the narrowest spread, counted at least half a step (an unresolved one is about that)
        finite = True
        for g in range(stages):
            finite = finite and psd[g] == psd[g] and pmean[g] == pmean[g]
            narrow = min(narrow, psd[g])
            floor = min(floor, max(psd[g], 0.5 * h))
        resolved = h <= 1.5 * THETA * narrow and steep[0] <= STEEP
        edges = False
        for g in range(stages):
            edges = edges or edge_lo[g] or edge_hi[g]
        if measured and resolved and not edges and worst <= MASS_TOL + 1e-13 * abs(log_p):
            for i in range(n):
                post_mean[i] -= shift[i]
            return log_p, True
        if measured and (worst > 1e-3 or not finite):
            # windows that cut the posteriors short: what was measured in them is not trusted; the same
            # centres, the ends that held density (or all, if none said so) three times as far out
            for g in range(stages):
                centre = 0.5 * (lo[g] + hi[g])
                wl = 3.0 if edge_lo[g] or not edges else 1.0
                wh = 3.0 if edge_hi[g] or not edges else 1.0
                lo[g] = centre - (centre - lo[g]) * wl
                hi[g] = centre + (hi[g] - centre) * wh
            if steep[0] > STEEP:
                h_cap = min(h_cap, 0.8 * h * STEEP / steep[0])
                h = min(h, h_cap)
            continue
        # next windows: the measured posteriors, at least half this step wide, widened where an edge held mass
        for g in range(stages):
            spread = max(psd[g], 0.5 * h)
            if edge_lo[g] and measured:
                widen_lo[g] *= 3.0
            if edge_hi[g] and measured:
                widen_hi[g] *= 3.0
            lo[g] = pmean[g] - REACH * spread * widen_lo[g]
            hi[g] = pmean[g] + REACH * spread * widen_hi[g]
        h_next = THETA * floor
        if steep[0] > STEEP:  # log C or log D changes too fast from node to node for the rule
            h_cap = min(h_cap, 0.8 * h * STEEP / steep[0])
        h_next = min(h_next, h_cap)
        if measured and resolved and not edges:  # only the mass failed: a finer step
            h_next = min(h_next, 0.6 * h)
        h = h_next
    return log_p, False
