"""The ordering engine's fast tier: Gaussian performances in a strict order, on one uniform lattice.

Most outcomes podium meets are strict orders of Gaussian performances (Thurstone, TrueSkill), with or
without non-finishers.  For them the recursion of :mod:`podium.ordering.chain`,

    C_G(x) = prod_d Phi((x - m_d)/s_d),   C_g(x) = int_{-inf}^x q_g C_(g+1),   P = C_0(inf),
    D_g(x) = int_x^inf q_g D_(g-1)   (D_(-1) = 1),   posterior of stage g = q_g D_(g-1) C_(g+1) / P,

is taken on the same expectation-propagation windows, but on **one uniform lattice** (the finest step any
window needs) and in **linear space** with one log-scale per stage and sweep.  Both choices make the
inner loop cheap: every stage's nodes are nodes of its neighbours (no interpolation, no graded runs),
the cumulative integral at a node is the trapezoid sum less the Euler-Maclaurin end correction
(:mod:`podium.ordering.gauss_rule`), ``E = h K(h d/dx) u`` with ``K(w) = coth(w/2)/2 - 1/w``, taken for
``u = e^(lambda x) v``:

    E(x_t) = h e^(lambda x_t) sum_(k=0..6) K^(k)(z)/k! h^k v^(k)(x_t),   z = lambda h   (O(h^8) in v),

``lambda`` the log-slope of ``u`` where the stage's posterior sits (so an upset's steep integrand is as
accurate as a flat one) and the derivatives of ``v`` from 7-point differences: one 7x7 stencil per stage
and sweep, then 7 multiply-adds per node.  The Gaussian density comes from its ratio recurrence (an
exponential every 32 nodes), so a node costs a few nanoseconds instead of the adaptive engine's logs
and exponentials.

It is a *tier*, not a second engine: it answers only when the same self-check as :mod:`podium.ordering.chain`
passes (every stage's posterior integrates to 1 within ``MASS_TOL_FAST + MASS_NOISE |log P|`` and holds
negligible density at its window's ends) and when the lattice fits its node budget.  Otherwise (extreme
spreads or scale ratios, an upset so steep that linear scaling underflows, a numeric failure) it returns
NaN and :func:`podium.ordering.log_outcome` asks :func:`podium.ordering.chain.order_log_prob`, which adapts.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from .gauss_rule import _SCRATCH, _cumulate_down, _cumulate_up, _end_weights
from .lattice import MASS_NOISE
from .numerics import inv_mills, jit, log_ndtr
from .windows import PRIOR_REACH, REACH, _ep_chain, lay_windows

__all__ = ["gauss_order_log_prob", "NODE_BUDGET"]

OK, EDGE, MASS, HARD = 0, 1, 2, 3  # outcomes of one attempt
ROUNDS = 4           # attempts before the adaptive engine takes over
THETA = 0.12         # step / posterior spread, and
SLOPE = 0.4          # step * log-slope of a stage's own density at its posterior (an upset is steep).
                     # Measured on 600 random races (2-40 competitors, scales e^N(0,1), upsets, non-finishers)
                     # against the adaptive engine at 6x its precision, worst |error| in log P:
                     # (0.2, 0.4) 1.6e-9 with the neighbours' pull in the slope too; (0.15, 0.4) 1.6e-9;
                     # (0.12, 0.4) 2.7e-10
PULL = 1.0           # step * the neighbours' pull (expectation propagation's steepest message slope at the
                     # posterior, windows._ep_chain's ``slope``).  Without it a crowd was integrated too coarsely
                     # and passed the mass check: n equal competitors (P = 1/n!) came out 1.4e-4 off at 1,000,
                     # and from about 1,800 the attempts failed to the adaptive engine (10 s a chain at 2,000, 220 s
                     # at 10,000).  With it: within 1e-9 up to 5,000 (0.17 s); at 2.0, off by 1e-4..8e-3 again.
WIDEN = 1.5          # a window whose end held posterior density grows by this factor (or past that end)
NODE_BUDGET = 1000   # stage-nodes allowed per stage (plus NODE_FLOOR) before the adaptive engine takes over
NODE_FLOOR = 4096
DNF_REACH = 8.3      # a non-finisher's distribution function rises within this many of its scales
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
MASS_TOL_FAST = 1e-10  # |posterior mass - 1| accepted here (the adaptive engine accepts 1e-9): typical races
                       # land at 1e-12..1e-14, and a crowded one whose steep stages drift beyond is left to it
EDGE_STAGE = 1e-11   # posterior mass allowed beyond one end of one window (see _sweep)
TRUNC_TOL = 3e-10    # and beyond all of them: log P is then within about this of the untruncated value
RESTART = 32         # nodes between exact exponentials in the density's ratio recurrence
_TINY = 1e-250       # linear values below this (relative to their sweep's scale) would lose precision


@jit
def _fit_node(x: float, x0: float, h: float, s: int, n: int) -> int:
    """The node of a range (first global index ``s``, ``n`` nodes) nearest ``x``, kept off its ends."""
    return min(max(int(round((x - x0) / h)) - s, 1), n - 2)


@jit
def _sweep(loc: NDArray[np.float64], scale: NDArray[np.float64], members: NDArray[np.int64], stages: int,
           dnf: NDArray[np.int64], n_dnf: int, lo: NDArray[np.float64], hi: NDArray[np.float64], h: float,
           pmean: NDArray[np.float64], psd: NDArray[np.float64], widen_lo: NDArray[np.float64],
           widen_hi: NDArray[np.float64], want_grad: bool, grad_loc: NDArray[np.float64],
           grad_scale: NDArray[np.float64], post_mean: NDArray[np.float64],
           post_sd: NDArray[np.float64]) -> tuple[int, float]:
    """One attempt on the ranges ``[lo_g, hi_g]`` with step ``h``: ``(status, log P)``; the gradient is
    added only when the status is :data:`OK` (an edge failure widens ``widen_lo/hi`` for the next round).
    ``post_mean, post_sd`` receive each stage's posterior mean and spread as this attempt measured them.

    Each sweep visits a stage's nodes in as few passes as the recursion allows (the density, the integrand
    and its maximum in one; the cumulative integral in another), and the cumulative integrals are kept
    unnormalized with their reciprocal scale, which their reader applies."""
    n_var = stages + n_dnf
    last = stages - 1
    x0 = lo[0]
    top = hi[0]
    for g in range(stages):
        x0 = min(x0, lo[g])
        top = max(top, hi[g])
    if not (h > 0.0 and (top - x0) / h < 1e12):
        return HARD, np.nan
    x0, s_idx, e_idx, off, widest, laid = lay_windows(lo, hi, stages, h, 7, NODE_FLOOR + NODE_BUDGET * stages)
    if not laid:
        return HARD, np.nan
    total = off[stages]
    # One allocation a length, cut into rows.  On all windows' nodes: q_g over its largest value on the window;
    # the forward integrand q_g C_(g+1), relative to exp(qs_g + cs_(g+1)); C_g times inv_c[g], relative to its
    # last value; D_g times inv_d[g], relative to its first.  On one window: C_G on the last one, relative to
    # exp(cs_G); D_(g-1) at g's nodes; the integrand of D_g.  Per stage: log of q_g's largest value on its window
    # (qs); log D_g's scale (ds); the reciprocal scales; the densities at the window ends.  cs: log of C_g's last
    # value, accumulated (log C_g at the top of its window).  Per competitor: the gradient.
    nodes = np.empty((4, total))
    ql, u, cl, dl = nodes[0], nodes[1], nodes[2], nodes[3]
    window = np.empty((3, widest))
    nx, work, vd = window[0], window[1], window[2]
    per_stage = np.empty((6, stages))
    qs, ds, inv_c, inv_d, end_lo, end_hi = (per_stage[0], per_stage[1], per_stage[2], per_stage[3], per_stage[4],
                                            per_stage[5])
    cs = np.empty(stages + 1)
    grad = np.empty((2, n_var))
    gl, gs = grad[0], grad[1]
    dev = np.empty(14)
    sten = np.empty((7, 7))
    scratch = np.empty(_SCRATCH)
    # the non-finishers' joint distribution function on the last window
    cnt = e_idx[last] - s_idx[last] + 1
    cs[stages] = 0.0
    if n_dnf > 0:
        big = -np.inf
        for j in range(cnt):
            xj = x0 + (s_idx[last] + j) * h
            acc = 0.0
            for t in range(n_dnf):
                d = dnf[t]
                acc += log_ndtr((xj - loc[d]) / scale[d])
            work[j] = acc
            big = max(big, acc)
        if not big > -1e300:
            return HARD, np.nan
        cs[stages] = big
        for j in range(cnt):
            nx[j] = math.exp(work[j] - big)
    else:
        for j in range(cnt):
            nx[j] = 1.0
    # forward sweep, bottom up: u = q_g C_(g+1) at g's nodes, C_g its cumulative integral
    for g in range(last, -1, -1):
        i = members[g]
        s = scale[i]
        cnt = e_idx[g] - s_idx[g] + 1
        base = off[g]
        # q_g peaks at loc_i, or at the window's end nearest it
        xa = x0 + s_idx[g] * h
        xb = x0 + e_idx[g] * h
        xm = min(max(loc[i], xa), xb)
        zm = (xm - loc[i]) / s
        qs[g] = -0.5 * zm * zm - _LOG_SQRT_2PI - math.log(s)
        # C_(g+1) is 0 below its window and saturated above it
        ja = 0 if g == last else min(max(s_idx[g + 1] - s_idx[g], 0), cnt)
        jb = cnt if g == last else min(max(e_idx[g + 1] - s_idx[g] + 1, 0), cnt)
        nb = 0 if g == last else off[g + 1] + s_idx[g] - s_idx[g + 1]  # C_(g+1) at g's node j: cl[nb + j]
        inv = 1.0 if g == last else inv_c[g + 1]
        # exp(-z^2/2) by its ratio recurrence (q_(j+1) / q_j = e^(-(z_j d + d^2/2)), the ratio itself falling
        # by e^(-d^2)), restarted exactly every RESTART nodes so that rounding cannot build up
        d = h / s
        shrink = math.exp(-d * d)
        umax = 0.0
        q = 0.0
        ratio = 0.0
        for j in range(cnt):
            if j % RESTART == 0:
                z = (x0 + (s_idx[g] + j) * h - loc[i]) / s
                q = math.exp(-0.5 * (z * z - zm * zm))
                ratio = math.exp(-(z * d + 0.5 * d * d))
            else:
                q *= ratio
                ratio *= shrink
            if q < _TINY:  # no denormals: this far down the density is 0 to every purpose
                q = 0.0
            ql[base + j] = q
            if g == last:
                nxt = nx[j]
            elif j < ja:
                nxt = 0.0
            elif j >= jb:
                nxt = 1.0
            else:
                nxt = cl[nb + j] * inv
            v = q * nxt
            u[base + j] = v
            umax = max(umax, v)
        if not umax > _TINY:
            return HARD, np.nan
        tot = _cumulate_up(u, base, cnt, h, cl, _fit_node(pmean[g], x0, h, s_idx[g], cnt), sten, scratch)
        if not tot > 0.0:
            return HARD, np.nan
        inv_c[g] = 1.0 / tot
        cs[g] = qs[g] + cs[g + 1] + math.log(tot)
    log_p = cs[0]
    if not math.isfinite(log_p):
        return HARD, np.nan
    # backward sweep, top down, with each stage's posterior checked (and its gradient taken) on the way
    tol = MASS_TOL_FAST + MASS_NOISE * abs(log_p)
    status = OK
    beyond = 0.0
    for g in range(stages):
        i = members[g]
        s = scale[i]
        cnt = e_idx[g] - s_idx[g] + 1
        base = off[g]
        prev_s = 0.0 if g == 0 else ds[g - 1]
        # posterior q D C / P at g's nodes: u D relative to exp(qs + cs_(g+1) + ds_(g-1))
        k_post = qs[g] + cs[g + 1] + prev_s - log_p
        if not (k_post < 700.0 and k_post > -700.0):
            return HARD, np.nan
        kp = math.exp(k_post)
        # D_(g-1) is 1 below its window and 0 above it
        ja = 0 if g == 0 else min(max(s_idx[g - 1] - s_idx[g], 0), cnt)
        jb = cnt if g == 0 else min(max(e_idx[g - 1] - s_idx[g] + 1, 0), cnt)
        nb = 0 if g == 0 else off[g - 1] + s_idx[g] - s_idx[g - 1]
        inv = 1.0 if g == 0 else inv_d[g - 1]
        xa = x0 + s_idx[g] * h
        z0 = (xa - loc[i]) / s
        dz = h / s
        vmax = 0.0
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        for j in range(cnt):
            if g == 0 or j < ja:
                prev = 1.0
            elif j >= jb:
                prev = 0.0
            else:
                prev = dl[nb + j] * inv
            work[j] = prev
            v = ql[base + j] * prev
            vd[j] = v
            vmax = max(vmax, v)
            p = u[base + j] * prev
            z = z0 + j * dz
            a0 += p
            a1 += p * z
            a2 += p * z * z
        if not vmax > _TINY:
            return HARD, np.nan
        # the corrected trapezoid weights: h, less their deviations at the ends
        mass = h * a0
        m1 = h * a1
        m2 = h * a2
        _end_weights(cnt, h, dev)
        for k in range(14):
            j = k if k < 7 else cnt - 14 + k
            p = dev[k] * u[base + j] * work[j]
            z = z0 + j * dz
            mass += p
            m1 += p * z
            m2 += p * z * z
        mass *= kp
        m1 *= kp
        m2 *= kp
        first = u[base] * work[0] * kp
        end = u[base + cnt - 1] * work[cnt - 1] * kp
        # the window's ends must hold negligible posterior density (times a spread: about the mass beyond,
        # which bounds the truncation error in P); judged after the sweep
        end_lo[g] = first * psd[g] / REACH
        end_hi[g] = end * psd[g] / REACH
        beyond += end_lo[g] + end_hi[g]
        if not abs(mass - 1.0) <= tol:
            status = MASS
        post_mean[g] = loc[i] + s * (m1 / mass)
        post_sd[g] = s * math.sqrt(max(m2 / mass - (m1 / mass) ** 2, 0.0))
        if want_grad:
            # d log P / d loc_i = E_post[z] / s, d log P / d scale_i = E_post[z^2 - 1] / s (divided by the
            # computed mass, so that its error cancels between stages)
            gl[g] = m1 / mass / s
            gs[g] = (m2 / mass - 1.0) / s
            if g == last:
                _dnf_gradient(loc, scale, dnf, n_dnf, u, base, work, cnt, xa, h, kp, mass, dev,
                              gl[stages:], gs[stages:])
        if g < last:  # D_g over g's window, relative to its first value
            tot = _cumulate_down(vd, cnt, h, dl, base, _fit_node(pmean[g], x0, h, s_idx[g], cnt), sten,
                                 scratch)
            if not tot > 0.0:
                return HARD, np.nan
            inv_d[g] = 1.0 / tot
            ds[g] = qs[g] + prev_s + math.log(tot)
    # at most EDGE_STAGE beyond any end and TRUNC_TOL beyond all; otherwise every end holding more than its
    # share of TRUNC_TOL is widened for the next round
    worst_end = 0.0
    for g in range(stages):
        worst_end = max(worst_end, end_lo[g], end_hi[g])
    if worst_end > EDGE_STAGE or beyond > TRUNC_TOL:
        share = 0.5 * TRUNC_TOL / stages
        for g in range(stages):
            xa = x0 + s_idx[g] * h
            if end_lo[g] > share:
                widen_lo[g] = max(WIDEN * widen_lo[g], (pmean[g] - xa) / (REACH * psd[g]) + 1.0)
            if end_hi[g] > share:
                widen_hi[g] = max(WIDEN * widen_hi[g], (x0 + e_idx[g] * h - pmean[g]) / (REACH * psd[g]) + 1.0)
        return EDGE, log_p
    if status != OK:
        return status, log_p
    if want_grad:
        for g in range(stages):
            grad_loc[members[g]] += gl[g]
            grad_scale[members[g]] += gs[g]
        for t in range(n_dnf):
            grad_loc[dnf[t]] += gl[stages + t]
            grad_scale[dnf[t]] += gs[stages + t]
    return OK, log_p


@jit
def _dnf_gradient(loc: NDArray[np.float64], scale: NDArray[np.float64], dnf: NDArray[np.int64], n_dnf: int,
                  u: NDArray[np.float64], base: int, work: NDArray[np.float64], cnt: int, xa: float, h: float,
                  kp: float, mass: float, dev: NDArray[np.float64], gl: NDArray[np.float64],
                  gs: NDArray[np.float64]) -> None:
    """The non-finishers' gradient: ``d log P / d loc_d = -E_post[f_d/F_d]``, ``d log P / d scale_d =
    -E_post[z_d f_d/F_d]`` over the last stage's posterior (``u work kp`` on its nodes, weights ``h`` plus
    ``dev`` at the ends), divided by its computed mass."""
    for t in range(n_dnf):
        d = dnf[t]
        sd = scale[d]
        a1 = 0.0
        a2 = 0.0
        for j in range(cnt):
            wj = h
            if j < 7:
                wj += dev[j]
            if j >= cnt - 7:
                wj += dev[j - (cnt - 14)]
            zd = (xa + j * h - loc[d]) / sd
            rho = inv_mills(zd) / sd  # f_d / F_d
            wp = wj * u[base + j] * work[j] * kp * rho
            a1 += wp
            a2 += wp * zd
        gl[t] = -a1 / mass
        gs[t] = -a2 / mass


@jit
def gauss_order_log_prob(
    loc: NDArray[np.float64], scale: NDArray[np.float64], members: NDArray[np.int64], stages: int,
    dnf: NDArray[np.int64], n_dnf: int, want_grad: bool,
    grad_loc: NDArray[np.float64], grad_scale: NDArray[np.float64], precision: float,
) -> float:
    """``log P(X_(members[0]) > ... > X_(members[stages-1]) > every X_(dnf[t]))`` for independent
    Gaussian ``X_i ~ N(loc_i, scale_i^2)``, and with ``want_grad`` its gradient (added into the arrays),
    or NaN (nothing added) when this tier cannot vouch for the answer (see the module docstring).

    ``loc`` must already carry any draw-margin shifts (:func:`podium.ordering.chain.order_log_prob` applies them).
    Windows as :mod:`podium.ordering.chain` places them; up to :data:`ROUNDS` attempts, each widening the ends that
    held posterior density or refining the step when a posterior's mass was off.
    """
    n_var = stages + n_dnf
    if stages == 0 or n_var < 2:
        return 0.0
    buf = np.empty(5 * n_var + 8 * stages)  # one allocation, cut into views
    m0 = buf[:n_var]
    v0 = buf[n_var:2 * n_var]
    pmean = buf[2 * n_var:3 * n_var]
    psd = buf[3 * n_var:4 * n_var]
    tilt = buf[4 * n_var:5 * n_var]
    at = 5 * n_var
    widen_lo = buf[at:at + stages]
    widen_hi = buf[at + stages:at + 2 * stages]
    lo = buf[at + 2 * stages:at + 3 * stages]
    hi = buf[at + 3 * stages:at + 4 * stages]
    lo0 = buf[at + 4 * stages:at + 5 * stages]
    hi0 = buf[at + 5 * stages:at + 6 * stages]
    post_mean = buf[at + 6 * stages:at + 7 * stages]
    post_sd = buf[at + 7 * stages:at + 8 * stages]
    for g in range(stages):
        widen_lo[g] = 1.0
        widen_hi[g] = 1.0
    for g in range(stages):
        i = members[g]
        m0[g] = loc[i]
        v0[g] = scale[i] * scale[i]
    for t in range(n_dnf):
        d = dnf[t]
        m0[stages + t] = loc[d]
        v0[stages + t] = scale[d] * scale[d]
    _ep_chain(m0, v0, stages, n_dnf, pmean, psd, tilt)
    last = stages - 1
    h = _common_step(loc, scale, members, stages, pmean, psd, tilt, precision)
    if not h > 0.0:
        return np.nan
    recentred = False
    for rnd in range(ROUNDS):
        for g in range(stages):
            lo0[g] = pmean[g] - REACH * widen_lo[g] * psd[g]
            hi0[g] = pmean[g] + REACH * widen_hi[g] * psd[g]
        hi0[0] = max(hi0[0], m0[0] + PRIOR_REACH * widen_hi[0] * math.sqrt(v0[0]))
        if n_dnf == 0:
            lo0[last] = min(lo0[last], m0[last] - PRIOR_REACH * widen_lo[last] * math.sqrt(v0[last]))
        step = h
        for t in range(n_dnf):  # a non-finisher's distribution function rising inside the last window
            d = dnf[t]
            if loc[d] - DNF_REACH * scale[d] < hi0[last] and loc[d] + DNF_REACH * scale[d] > lo0[last]:
                step = min(step, THETA * scale[d] / precision)
        # a stage's posterior reaches into its neighbours' windows (its upper tail is bounded by the stage
        # above, whose own upper tail may be the prior's): each range is stretched to meet them
        for g in range(stages):
            lo[g] = min(lo0[g], lo0[g + 1]) if g + 1 < stages else lo0[g]
            hi[g] = max(hi0[g], hi0[g - 1]) if g > 0 else hi0[g]
        status, log_p = _sweep(loc, scale, members, stages, dnf, n_dnf, lo, hi, step, pmean, psd, widen_lo,
                               widen_hi, want_grad, grad_loc, grad_scale, post_mean, post_sd)
        if status == OK:
            return log_p
        if status == HARD:
            return np.nan
        # In a long crowded chain, expectation propagation's few sweeps leave the middle's means several
        # spreads from the truth (3-4 in a 1,000-player race), so the rule's slopes are fitted where the
        # mass is not: once, the windows move to the posteriors this attempt measured; else a mass failure
        # takes a finer step (an edge failure has widened its ends already).
        if not recentred and _misplaced(pmean, psd, post_mean, post_sd, stages):
            recentred = True
            for g in range(stages):
                pmean[g] = post_mean[g]
                psd[g] = post_sd[g]
                widen_lo[g] = widen_hi[g] = 1.0
            h = _common_step(loc, scale, members, stages, pmean, psd, tilt, precision)
            if not h > 0.0:
                return np.nan
        elif status == MASS:
            h *= 0.6
    return np.nan


@jit
def _common_step(loc: NDArray[np.float64], scale: NDArray[np.float64], members: NDArray[np.int64], stages: int,
                 pmean: NDArray[np.float64], psd: NDArray[np.float64], tilt: NDArray[np.float64],
                 precision: float) -> float:
    """The one step every window allows (NaN if a posterior is degenerate): :data:`THETA` times the
    narrowest spread, at most :data:`SLOPE` over the slope of a stage's own density at its posterior, and at
    most :data:`PULL` over the pull of its neighbours there (``tilt``)."""
    h = np.inf
    for g in range(stages):
        i = members[g]
        if not (psd[g] > 0.0 and math.isfinite(pmean[g])):
            return np.nan
        step = THETA * psd[g]
        # the slope of the stage's own density where its posterior sits (an upset); the pull of the
        # neighbours (expectation propagation's force) is the exponential part the fitted rule takes exactly,
        # but in a crowd its curvature is not: it bounds the step too
        t = abs(pmean[g] - loc[i]) / (scale[i] * scale[i])
        if t > 0.0:
            step = min(step, SLOPE / t)
        if tilt[g] > 0.0:
            step = min(step, PULL / tilt[g])
        h = min(h, step / precision)
    return h


@jit
def _misplaced(pmean: NDArray[np.float64], psd: NDArray[np.float64], post_mean: NDArray[np.float64],
               post_sd: NDArray[np.float64], stages: int) -> bool:
    """Whether some measured posterior lies half a spread or more from its window's centre, or is a
    quarter wider or narrower than the window assumed (and every measurement is usable)."""
    off = False
    for g in range(stages):
        if not (post_sd[g] > 0.0 and math.isfinite(post_mean[g])):
            return False
        if abs(post_mean[g] - pmean[g]) > 0.5 * psd[g] or abs(math.log(post_sd[g] / psd[g])) > 0.22:
            off = True
    return off
