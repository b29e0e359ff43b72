"""Ties exactly: the probability that each drawn group fills its places in any order (Gaussian performances).

A drawn group ``G`` of ``k`` competitors between the places above and below it is the event that all of
``G`` perform below everyone placed above and above everyone placed below, in any order among themselves.
The *arithmetic* mean over the group's ``k!`` orders is that probability over ``k!`` (issue 29; the
geometric mean of :func:`podium.ordering.log_outcome` averages log-likelihoods instead).  With each stage's
chain variable the best performance of its group, ``x_g = max_(i in G_g) X_i``, the event for consecutive
groups ``G_0 > G_1 > ...`` is ``min G_g > x_(g+1)``, and the variables' joint density is a chain

    p(x_0, x_1, ...) = prod_g K_g(x_g, x_(g+1)),
    K_g(x, y) = d/dx prod_(j in G_g) (F_j(x) - F_j(y)) = prod_j Delta_j * S,   S = sum_j f_j(x) / Delta_j,

(``Delta_j = F_j(x) - F_j(y)``; a strict stage's kernel is ``f_i(x)``).  The bottom *block* -- the
non-finishers, or without them the last group -- has no one below it: its best has the closed-form density
``u_B(x) = d/dx prod_(j in B) F_j(x)``.  The forward recursion carries each stage's density,

    u_g(x) = int_(y < x) K_g(x, y) u_(g+1)(y) dy      (strict: u_g = f_i C_(g+1), C the cumulative of u),

the backward one the probability of everything above, ``D_0 = 1``,
``D_(g+1)(y) = int_(x > y) K_g(x, y) D_g(x) dx``, and ``P = int u_0``; every stage's posterior
``u_g D_g / P`` integrates to 1, which is the self-check.  The gradient is the score identity for a
Gaussian performance, ``d log P / d m_i = E[(X_i - m_i) / s_i^2 | outcome]`` (and ``d/ds_i`` with
``((X_i - m_i)^2 / s_i^2 - 1) / s_i``): given ``x_g = x, x_(g+1) = y`` a member is the group's best with
probability ``f_i(x) / (Delta_i S)`` and otherwise a Gaussian truncated to ``(y, x)``, whose moments are
closed forms (``int_y^x (t - m) / s^2 f = f(y) - f(x)``).  This is the design of docs/design.md, section
"Ties exactly".

How: one uniform lattice in log space, each stage on a window placed by expectation propagation on a
proxy strict chain (each group's members by location; the group's best is its top member's window), as
the fast tier (:mod:`podium.ordering.gauss_chain`).  A strict stage's cumulative is :func:`podium.ordering.lattice.cumulate`
(the corrected trapezoid rule); a group's inner integral is the trapezoid rule with the Euler-Maclaurin
correction at the diagonal ``y = x`` from 7 one-sided differences, fitted to the exponential part of the
integrand (:func:`_diagonal`; the integrand vanishes there like ``(x - y)^(k - 1)``), its far end in the
window's negligible tail.  After an attempt whose window ends held mass, every window also covers the
posterior that attempt measured.  ``O(k M^2)`` a group for ``M`` nodes a window.  It answers only when
every stage's posterior mass is 1 within :data:`MASS_TOL` and no window end holds posterior mass above
:data:`EDGE_TOL` (else a window end widens or the step refines, :data:`ROUNDS` attempts); otherwise NaN.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from .densities import GAUSSIAN, log_reverse_hazard, logpdf
from .gauss_rule import _SCRATCH, Z_CAP, _fitted_stencil
from .lattice import MASS_NOISE, cumulate, integrate
from .numerics import jit, log1mexp, log_ndtr
from .windows import REACH, _ep_chain, lay_windows

__all__ = ["group_order_log_prob"]

ROUNDS = 8           # attempts (a failing window end widens, a failing mass refines the step)
THETA = 0.12         # step / the narrowest stage's posterior spread (as the fast tier)
PULL = 1.0           # step * the neighbours' pull (as the fast tier)
SLOPE = 0.4          # step * the log-slope of a member's own density at its posterior (an upset is steep; as the
                     # fast tier): without it an upset (log P = -33) passed the mass check 1.6e-6 off
REFINE = 0.6         # the step's factor after a mass failure
STEEP = 0.9          # after a mass failure with a capped diagonal fit, the step that brings it this far under the cap
RETRY_REACH = 10.0   # after a window end held mass, every window covers the measured posterior +- this many spreads
MASS_TOL = 1e-9      # |posterior mass - 1| accepted at every stage (the adaptive engine's)
EDGE_TOL = 1e-11     # posterior mass allowed beyond a window end (density there times the posterior spread)
WORK_BUDGET = 4e8    # member-node-pairs of one attempt's group kernels; beyond, NaN (no answer)
NODE_BUDGET = 2_000_000  # nodes over all windows
_FLOOR = -1e300
_LOG_HALF = -math.log(2.0)


@jit
def _log_delta(lfx: float, lsx: float, lfy: float, lsy: float) -> float:
    """``log(F(x) - F(y))`` for ``x > y`` from ``log F`` and ``log(1 - F)`` at both, from the side where
    the difference does not cancel: :func:`podium.ordering.numerics.log_ndtr_diff`'s formula, taken from the tables
    (each member's ``log F`` once a node, not twice a node pair)."""
    if lfx < _LOG_HALF:
        d = lfx - lfy
        return lfx + log1mexp(d) if d > 0.0 else _FLOOR
    d = lsy - lsx
    return lsy + log1mexp(d) if d > 0.0 else _FLOOR


@jit
def _member_tables(loc: NDArray[np.float64], scale: NDArray[np.float64], idx: NDArray[np.int64], a: int, b: int,
                   x0: float, h: float, s_idx: NDArray[np.int64], e_idx: NDArray[np.int64], g: int
                   ) -> tuple[int, NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """``(s0, log f_j, log F_j, log(1 - F_j))`` of members ``idx[a:b]`` (rows) at the global nodes of stages
    ``g`` and ``g + 1`` (``s0`` the first; the columns)."""
    s0 = min(s_idx[g], s_idx[g + 1])
    span = max(e_idx[g], e_idx[g + 1]) - s0 + 1
    lf = np.empty((b - a, span))
    lF = np.empty((b - a, span))
    lS = np.empty((b - a, span))
    for r in range(b - a):
        i = idx[a + r]
        m = loc[i]
        s = scale[i]
        ls = math.log(s)
        for t in range(span):
            z = (x0 + (s0 + t) * h - m) / s
            lf[r, t] = logpdf(GAUSSIAN, 0.0, z) - ls
            lF[r, t] = log_ndtr(z)
            lS[r, t] = log_ndtr(-z)
    return s0, lf, lF, lS


@jit
def _kernel(lf: NDArray[np.float64], lF: NDArray[np.float64], lS: NDArray[np.float64], tx: int, ty: int,
            dls: NDArray[np.float64]) -> tuple[float, float]:
    """A group's kernel at columns ``tx > ty`` of its tables: ``(log prod_j Delta_j, S = sum_j f_j(x) /
    Delta_j)``, so ``K = prod Delta S``; each ``log Delta_j`` into ``dls``."""
    lp = 0.0
    ssum = 0.0
    for r in range(lf.shape[0]):
        dl = _log_delta(lF[r, tx], lS[r, tx], lF[r, ty], lS[r, ty])
        dls[r] = dl
        lp += dl
        ssum += math.exp(lf[r, tx] - dl)
    return lp, ssum


@jit
def _row_integral(row: NDArray[np.float64], cnt: int, d0: int, dd: int, diag: NDArray[np.float64], big: float,
                  h: float) -> float:
    """``log`` of the corrected trapezoid sum of ``exp(row[:cnt])`` (``big`` their largest), node ``j`` at
    distance ``d0 + dd j`` from the diagonal (:func:`_diagonal`'s weights within 6 of it)."""
    acc = 0.0
    for j in range(cnt):
        d = d0 + dd * j
        w = diag[d] if d < 7 else 1.0
        acc += w * math.exp(row[j] - big)
    return big + math.log(h * acc) if acc > 0.0 else _FLOOR


@jit
def _block_density(loc: NDArray[np.float64], scale: NDArray[np.float64], idx: NDArray[np.int64], a: int, b: int,
                   x0: float, h: float, s0: int, cnt: int, out: NDArray[np.float64]) -> None:
    """``log d/dx prod_j F_j(x)`` (the density of the best of members ``idx[a:b]``, no one below them) at
    global nodes ``s0 .. s0 + cnt - 1``."""
    for t in range(cnt):
        x = x0 + (s0 + t) * h
        acc = 0.0
        big = -np.inf
        for r in range(a, b):
            i = idx[r]
            z = (x - loc[i]) / scale[i]
            acc += log_ndtr(z)
            big = max(big, log_reverse_hazard(GAUSSIAN, 0.0, z) - math.log(scale[i]))
        tot = 0.0  # sum_j f_j / F_j, relative to its largest term
        for r in range(a, b):
            i = idx[r]
            tot += math.exp(log_reverse_hazard(GAUSSIAN, 0.0, (x - loc[i]) / scale[i]) - math.log(scale[i]) - big)
        out[t] = acc + big + math.log(tot)


@jit
def _diagonal(la: NDArray[np.float64], off: int, s: int, e: int, t: int, side: int, sten: NDArray[np.float64],
              scratch: NDArray[np.float64], out: NDArray[np.float64]) -> float:
    """Trapezoid weights (over ``h``) by distance ``d = 0..6`` from the diagonal node ``t``, with the
    Euler-Maclaurin end correction there fitted to the exponential part of the integrand: the log-slope of
    the other stage's function ``la`` (its window ``s..e``) at ``t`` (:func:`podium.ordering.gauss_rule._fitted_stencil`).
    ``side = 1``: the diagonal is the integral's upper end (the forward ``y`` integral, ``la = log u``);
    ``-1``: its lower end (the backward ``x`` integral, ``la = log D``), the rule mirrored.  A crowded
    field's forward functions rise by about ``n phi / Phi`` per unit, too steep for the polynomial correction
    (a crowd of 60 with ten tied pairs came out 5e-6 off while passing the mass check).  Returns ``|z|``
    before the fit's cap :data:`podium.ordering.gauss_rule.Z_CAP`: beyond it the correction is not the fitted one, and
    the step must shrink."""
    raw = 0.0
    if t - 1 >= s and t + 1 <= e:
        a = la[off + t - 1 - s]
        b = la[off + t + 1 - s]
        if a > _FLOOR and b > _FLOOR:
            raw = 0.5 * (b - a)
    z = min(max(raw, -Z_CAP), Z_CAP)
    _fitted_stencil(z if side > 0 else -z, sten, scratch)
    for d in range(7):
        out[d] = 1.0 - sten[0, 6 - d]
    out[0] -= 0.5
    return abs(raw)


@jit
def _lookup(arr: NDArray[np.float64], off: int, s: int, e: int, t: int, below: float, above: float) -> float:
    """A stage's value at global node ``t``: ``below`` under its window, ``above`` over it."""
    if t < s:
        return below
    if t > e:
        return above
    return arr[off + t - s]


@jit
def _block_grad(loc: NDArray[np.float64], scale: NDArray[np.float64], idx: NDArray[np.int64], a: int, b: int,
                x: float, w: float, gl: NDArray[np.float64], gs: NDArray[np.float64]) -> None:
    """Add ``w`` times ``E[(X_i - m_i)/s_i^2 | best = x]`` (and the scale's score) for members ``idx[a:b]`` of
    a block with no one below: the best with probability ``A_i / S`` (``A_i = f_i(x)/F_i(x)``), else below
    ``x``, where the scores' means are ``-f_i(x)/F_i(x)`` and ``-(x - m_i) f_i(x) / (s_i F_i(x))``."""
    tot = 0.0
    for r in range(a, b):
        i = idx[r]
        tot += math.exp(log_reverse_hazard(GAUSSIAN, 0.0, (x - loc[i]) / scale[i]) - math.log(scale[i]))
    if not tot > 0.0:
        return
    for r in range(a, b):
        i = idx[r]
        s = scale[i]
        z = (x - loc[i]) / s
        ai = math.exp(log_reverse_hazard(GAUSSIAN, 0.0, z) - math.log(s))
        rest = tot - ai
        gl[i] += w * (ai * z / s - rest * ai) / tot
        gs[i] += w * (ai * (z * z - 1.0) / s - rest * ai * z) / tot


@jit
def _sweep(loc: NDArray[np.float64], scale: NDArray[np.float64], idx: NDArray[np.int64],
           st: NDArray[np.int64], ns: int, lo: NDArray[np.float64], hi: NDArray[np.float64], h: float,
           want_grad: bool, gl: NDArray[np.float64], gs: NDArray[np.float64], post_mean: NDArray[np.float64],
           post_sd: NDArray[np.float64], edge: NDArray[np.int64], steep: NDArray[np.float64]) -> tuple[int, float]:
    """One attempt: ``(status, log P)``, status 0 (ok), 1 (a window end held mass: ``edge[g]`` bit 1 the
    lower end, bit 2 the upper), 2 (a stage's mass is off), 3 (over budget or no finite value); ``steep[0]``
    receives the largest ``|z|`` of the diagonal corrections (:func:`_diagonal`) at nodes where a posterior
    holds mass (elsewhere an error weighs nothing).

    Stages ``g < ns``: members ``idx[st[g]:st[g+1]]``; the last stage is the bottom block (its
    closed-form density).  Windows ``[lo_g, hi_g]`` on the lattice ``x0 + t h``."""
    x0, s_idx, e_idx, off, _, laid = lay_windows(lo, hi, ns, h, 8, NODE_BUDGET)
    if not laid:
        return 3, np.nan
    work = 0.0
    for g in range(ns - 1):
        k = st[g + 1] - st[g]
        if k > 1:
            work += k * float(e_idx[g] - s_idx[g] + 1) * float(e_idx[g + 1] - s_idx[g + 1] + 1)
    if work > WORK_BUDGET:
        return 3, np.nan
    total = off[ns]
    lu = np.empty(total)   # log u_g
    lc = np.empty(total)   # log C_g (cumulative of u_g on its window)
    ld = np.empty(total)   # log D_g
    zr = np.zeros(total)   # |z| of the diagonal corrections at each node, before the cap
    widest = 0
    for g in range(ns):
        widest = max(widest, e_idx[g] - s_idx[g] + 1)
    gap = np.full(widest + 1, h)
    tmp = np.empty(widest + 1)
    tmp2 = np.empty(widest + 1)
    row = np.empty(widest + 1)
    diag = np.empty(7)                 # corrected weights (over h) by distance 0..6 from the diagonal
    sten = np.empty((7, 7))
    scratch = np.empty(_SCRATCH)
    steep[0] = 0.0
    last = ns - 1
    # forward, bottom up
    _block_density(loc, scale, idx, st[last], st[last + 1], x0, h, s_idx[last], e_idx[last] - s_idx[last] + 1,
                   lu[off[last]:off[last + 1]])
    for g in range(last, -1, -1):
        cnt = e_idx[g] - s_idx[g] + 1
        if g < last:
            k = st[g + 1] - st[g]
            nx = g + 1
            if k == 1:
                i = idx[st[g]]
                m = loc[i]
                s = scale[i]
                ls = math.log(s)
                top = lc[off[nx + 1] - 1]
                for t in range(cnt):
                    gt = s_idx[g] + t
                    z = (x0 + gt * h - m) / s
                    c = _lookup(lc, off[nx], s_idx[nx], e_idx[nx], gt, _FLOOR, top)
                    lu[off[g] + t] = logpdf(GAUSSIAN, 0.0, z) - ls + c
            else:
                s0, lf, lF, lS = _member_tables(loc, scale, idx, st[g], st[g + 1], x0, h, s_idx, e_idx, g)
                dls = np.empty(k)
                for t in range(cnt):
                    gt = s_idx[g] + t
                    tx = gt - s0
                    ya = s_idx[nx]
                    yb = min(e_idx[nx], gt - 1)
                    big = -np.inf
                    for y in range(ya, yb + 1):
                        lp, ssum = _kernel(lf, lF, lS, tx, y - s0, dls)
                        v = lp + math.log(ssum) + lu[off[nx] + y - s_idx[nx]] if ssum > 0.0 else _FLOOR
                        row[y - ya] = v
                        big = max(big, v)
                    if yb < ya or not big > _FLOOR:
                        lu[off[g] + t] = _FLOOR
                        continue
                    zr[off[g] + t] = _diagonal(lu, off[nx], s_idx[nx], e_idx[nx], gt, 1, sten, scratch, diag)
                    lu[off[g] + t] = _row_integral(row, yb - ya + 1, gt - ya, -1, diag, big, h)
        cumulate(lu[off[g]:off[g + 1]], gap, cnt, lc[off[g]:off[g + 1]])
    log_p = lc[off[1] - 1]
    if not (abs(log_p) < 1e300):
        return 3, np.nan
    # backward, top down, with the posteriors' checks and the gradient
    ok = 0
    for t in range(e_idx[0] - s_idx[0] + 1):
        ld[t] = 0.0
    for g in range(ns):
        cnt = e_idx[g] - s_idx[g] + 1
        # this stage's posterior: mass, moments, ends
        post = tmp[:cnt]
        for t in range(cnt):
            v = lu[off[g] + t] + ld[off[g] + t] - log_p
            post[t] = math.exp(v) if v > -745.0 else 0.0
        mass = integrate(post, gap, cnt)
        for t in range(cnt):
            tmp2[t] = post[t] * (x0 + (s_idx[g] + t) * h)
        mean = integrate(tmp2[:cnt], gap, cnt) / mass
        for t in range(cnt):
            xt = x0 + (s_idx[g] + t) * h - mean
            tmp2[t] = post[t] * xt * xt
        var = integrate(tmp2[:cnt], gap, cnt) / mass
        sd = math.sqrt(max(var, 0.0))
        post_sd[g] = sd
        post_mean[g] = mean
        # a window end holding mass is the first thing to mend (it can also be why a mass is off)
        edge[g] = 0
        if post[0] * sd > EDGE_TOL:
            edge[g] |= 1
        if post[cnt - 1] * sd > EDGE_TOL:
            edge[g] |= 2
        for t in range(cnt):  # the steepest diagonal fit where this stage's posterior holds mass
            if post[t] * sd > EDGE_TOL:
                steep[0] = max(steep[0], zr[off[g] + t])
        if edge[g] != 0:
            ok = 1
        elif ok == 0 and not abs(mass - 1.0) <= MASS_TOL + MASS_NOISE * abs(log_p):
            ok = 2
        if g == last:
            if want_grad and ok == 0:
                for t in range(cnt):
                    if post[t] > 0.0:
                        _block_grad(loc, scale, idx, st[g], st[g + 1], x0 + (s_idx[g] + t) * h,
                                    h * post[t] / mass, gl, gs)
            break
        k = st[g + 1] - st[g]
        nx = g + 1
        cnx = e_idx[nx] - s_idx[nx] + 1
        if k == 1:
            i = idx[st[g]]
            m = loc[i]
            s = scale[i]
            if want_grad:
                gl[i] += (mean - m) / (s * s)
                gs[i] += ((var + (mean - m) ** 2) / (s * s) - 1.0) / s
            # D_(g+1)(y) = int_(x > y) f_i D_g: the cumulative from the top of g's window
            ls = math.log(s)
            for t in range(cnt):
                z = (x0 + (s_idx[g] + cnt - 1 - t) * h - m) / s
                row[t] = logpdf(GAUSSIAN, 0.0, z) - ls + ld[off[g] + cnt - 1 - t]
            cumulate(row[:cnt], gap, cnt, tmp2[:cnt])
            full = tmp2[cnt - 1]
            for t in range(cnx):
                y = s_idx[nx] + t
                if y < s_idx[g]:
                    ld[off[nx] + t] = full
                elif y > e_idx[g]:
                    ld[off[nx] + t] = _FLOOR
                else:
                    ld[off[nx] + t] = tmp2[e_idx[g] - y]
            continue
        # a group: D_(g+1)(y) = sum over x > y of w K(x, y) D_g(x), and the members' gradient
        s0, lf, lF, lS = _member_tables(loc, scale, idx, st[g], st[g + 1], x0, h, s_idx, e_idx, g)
        dls = np.empty(k)
        for t in range(cnx):
            y = s_idx[nx] + t
            ty = y - s0
            zr[off[nx] + t] = max(zr[off[nx] + t], _diagonal(ld, off[g], s_idx[g], e_idx[g], y, -1, sten, scratch,
                                                             diag))
            xa = max(s_idx[g], y + 1)
            xb = e_idx[g]
            big = -np.inf
            luy = lu[off[nx] + t]
            yv = x0 + y * h
            for x in range(xa, xb + 1):
                tx = x - s0
                lp, ssum = _kernel(lf, lF, lS, tx, ty, dls)
                ldx = ld[off[g] + x - s_idx[g]]
                v = lp + math.log(ssum) + ldx if ssum > 0.0 else _FLOOR
                row[x - xa] = v
                big = max(big, v)
                if want_grad and ok == 0:
                    d = x - y
                    w = (diag[d] if d < 7 else 1.0) * h * h  # dx dy
                    pw = lp + ldx + luy - log_p
                    if pw > -745.0:
                        pw = w * math.exp(pw)
                        xv = x0 + x * h
                        # the truncated Gaussian's score moments (the closed form of numerics.truncated_moments,
                        # Johnson, Kotz & Balakrishnan 13.10) from the tables' Delta, which it would recompute
                        for r in range(k):
                            i = idx[st[g] + r]
                            sc = scale[i]
                            m = loc[i]
                            ai = math.exp(lf[r, tx] - dls[r])
                            rest = ssum - ai
                            fy = math.exp(lf[r, ty] - dls[r])
                            zx = (xv - m) / sc
                            zy = (yv - m) / sc
                            gl[i] += pw * (ai * zx / sc + rest * (fy - ai))
                            gs[i] += pw * (ai * (zx * zx - 1.0) / sc + rest * (zy * fy - zx * ai))
            if xb < xa or not big > _FLOOR:
                ld[off[nx] + t] = _FLOOR
                continue
            ld[off[nx] + t] = _row_integral(row, xb - xa + 1, xa - y, 1, diag, big, h)
    return ok, log_p


@jit
def group_order_log_prob(loc: NDArray[np.float64], scale: NDArray[np.float64], stage_start: NDArray[np.int64],
                         members: NDArray[np.int64], stages: int, dnf: NDArray[np.int64], n_dnf: int,
                         want_grad: bool, grad_loc: NDArray[np.float64], grad_scale: NDArray[np.float64],
                         precision: float) -> float:
    """``log P(every group fills its places in any order, the groups in order, non-finishers below)``.

    Gaussian performances ``loc_i + scale_i e``.  Stage ``g`` is the group ``members[stage_start[g] :
    stage_start[g + 1]]`` (best first); ``dnf[:n_dnf]`` did not finish (below every finisher, unordered).
    Returns the arithmetic mean over the groups' orders, ``log P(event) - sum_g log k_g!``, and adds its
    ``d / d loc`` and ``d / d scale`` when ``want_grad``.  NaN when the self-check fails in :data:`ROUNDS`
    attempts or the work passes its budget (the caller then has another way).
    """
    n_fin = stage_start[stages]
    ns = stages + 1 if n_dnf > 0 else stages
    # the engine's stages: members sorted by location within each group (the proxy strict chain's order)
    idx = np.empty(n_fin + n_dnf, dtype=np.int64)
    st = np.empty(ns + 1, dtype=np.int64)
    for g in range(stages):
        a = stage_start[g]
        b = stage_start[g + 1]
        st[g] = a
        seg = members[a:b].copy()
        keys = np.empty(b - a)
        for r in range(b - a):
            keys[r] = -loc[seg[r]]
        order = np.argsort(keys, kind="mergesort")
        for r in range(b - a):
            idx[a + r] = seg[order[r]]
    for t in range(n_dnf):
        idx[n_fin + t] = dnf[t]
    st[stages] = n_fin
    if n_dnf > 0:
        st[ns] = n_fin + n_dnf
    # windows from expectation propagation on the proxy strict chain
    n_var = n_fin + n_dnf
    m0 = np.empty(n_var)
    v0 = np.empty(n_var)
    for r in range(n_var):
        m0[r] = loc[idx[r]]
        v0[r] = scale[idx[r]] ** 2
    pm = np.empty(n_var)
    psd = np.empty(n_var)
    slope = np.empty(n_var)
    _ep_chain(m0, v0, n_fin, n_dnf, pm, psd, slope)
    lo = np.empty(ns)
    hi = np.empty(ns)
    narrow = np.inf
    for r in range(n_fin):
        steep = abs(pm[r] - m0[r]) / v0[r]
        if steep > 0.0:
            narrow = min(narrow, SLOPE / steep)
    for g in range(ns):
        if g < stages:
            p = st[g]
            lo[g] = pm[p] - REACH * psd[p]
            hi[g] = pm[p] + REACH * psd[p]
            narrow = min(narrow, THETA * psd[p])
            if slope[p] > 0.0:
                narrow = min(narrow, PULL / slope[p])
        else:  # the non-finishers' best: the union of their windows, below the last finisher's top
            lo[g] = np.inf
            hi[g] = -np.inf
            for r in range(n_fin, n_var):
                lo[g] = min(lo[g], pm[r] - REACH * psd[r])
                hi[g] = max(hi[g], pm[r] + REACH * psd[r])
                narrow = min(narrow, THETA * psd[r])
            hi[g] = min(hi[g], hi[g - 1])
            lo[g] = min(lo[g], hi[g] - REACH * psd[n_fin])
    h = narrow / precision
    if not (h > 0.0 and math.isfinite(h)):
        return np.nan
    gl = np.zeros(len(loc))
    gs = np.zeros(len(loc))
    post_sd = np.empty(ns)
    post_mean = np.empty(ns)
    edge = np.zeros(ns, dtype=np.int64)
    steep = np.zeros(1)
    for attempt in range(ROUNDS):
        gl[:] = 0.0
        gs[:] = 0.0
        status, log_p = _sweep(loc, scale, idx, st, ns, lo, hi, h, want_grad, gl, gs, post_mean, post_sd, edge, steep)
        if status == 0:
            if want_grad:
                for i in range(len(loc)):
                    grad_loc[i] += gl[i]
                    grad_scale[i] += gs[i]
            for g in range(stages):
                log_p -= math.lgamma(stage_start[g + 1] - stage_start[g] + 1.0)
            return log_p
        if status == 3:
            return np.nan
        if status == 1:
            # every window also covers the posterior this attempt measured (a proxy chain that orders a big
            # group pins its neighbours too tightly: widening one failing end an attempt ran out of rounds)
            for g in range(ns):
                width = hi[g] - lo[g]
                if edge[g] & 1:
                    lo[g] -= 0.5 * width
                if edge[g] & 2:
                    hi[g] += 0.5 * width
                if math.isfinite(post_mean[g]) and post_sd[g] > 0.0:
                    lo[g] = min(lo[g], post_mean[g] - RETRY_REACH * post_sd[g])
                    hi[g] = max(hi[g], post_mean[g] + RETRY_REACH * post_sd[g])
        elif steep[0] > Z_CAP:  # the diagonal's exponential part was steeper than the fit takes: step to it
            h *= min(REFINE, STEEP * Z_CAP / steep[0])
        else:
            h *= REFINE
    return np.nan
