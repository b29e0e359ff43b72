"""The probability of an observed order of independent performances, and its gradient: the chain engine.

Competitor ``i`` performs ``X_i = loc_i + scale_i e_i`` (noise density from :mod:`podium.ordering.densities`).  For
stages ``0 > 1 > ... > G-1`` (best first; a stage is one competitor, or a group drawn in TrueSkill's margin
model) above a set of unordered non-finishers, the multiplayer-Elo note's recursion (section 3.3) is

    C_G(x) = prod_d F_d(x),    C_g(x) = int_{-inf}^x q_g(y) C_(g+1)(y) dy,    P = C_0(inf),

and the backward functions ``D_g(x) = int_x^inf q_g(y) D_(g-1)(y) dy`` (``D_(-1) = 1``) give the posterior
density of stage ``g``'s performance, ``q_g D_(g-1) C_(g+1) / P``, and with it the gradient.

**Where each integral is taken** (:mod:`podium.ordering.windows`).  A Gaussian expectation-propagation pass over the
chain (each density moment-matched) estimates every stage's posterior mean and spread; stage ``g`` is
integrated only over its *window* (that estimate +- a reach, stretched to meet the neighbouring stages'
windows) on a graded lattice (:mod:`podium.ordering.lattice`) whose spacing follows the posterior spreads.  Below its
window ``C_g`` is taken as 0 and above it as its last value; the error this makes in ``P`` is at most the
posterior mass of the stages outside their windows (``int_(y < lo) q_(g+1) C_(g+2) D_g <= ...``), so the
windows only need to hold the *posterior*, which is narrow in a crowded field and sits where an upset is
decided.  Space between clusters of windows (a spread of ``1e6`` scales) holds no nodes.

**Self-check.**  Every stage's posterior must integrate to 1; with exact arithmetic it does.  The
deviation bounds the combined quadrature and truncation error, and the windows' edges must hold
negligible posterior density.  Either failing refines the step or widens the window and repeats (at most
:data:`MAX_ROUNDS` rounds).  A skew-normal non-finisher's distribution function, integrated on the lattice,
is no part of that check (the posterior is built with it): its error under the last stage's posterior is
estimated from the step and its density's log-slope there, and where too large a finer window is laid there
(a far upset: issue 32).  Non-finishers with a closed-form distribution function are exact at any distance
(no window).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from .densities import (GAUSSIAN, LOG_FLOOR, SKEW_NORMAL, log_cdf_diff, log_reverse_hazard, logcdf, logpdf,
                        score, shape_info)
from .gauss_chain import gauss_order_log_prob
from .lattice import MASS_NOISE, build_lattice, cumulate, integrate, node_range
from .numerics import inv_mills, jit, log_ndtr, logsumexp
from .windows import LEVEL, PRIOR_REACH, REACH, _ep_chain, _isotonic_mode, _pooled_mode, _reach, _tail_edge

__all__ = ["order_log_prob", "shift_by_links", "MAX_ROUNDS"]

THETA = 0.2          # step / posterior spread (about 1e-10 in log P for Gaussian races; tests measure it)
THETA_SLOPE = 0.25   # step * the log-slope of a stage's density where its posterior sits (upsets are steep;
                     # 0.4 left 5.9e-9 in log P over 20-30 stages, 0.25 7.3e-10)
MASS_TOL = 1e-9      # |posterior mass - 1| accepted (the quadrature and truncation error indicator)
EDGE_TOL = 1e-13     # posterior density times spread allowed at a window's edge
MAX_ROUNDS = 16
F_ERR = 1e-7         # a skew-normal non-finisher's F integrated at h lambda: relative error below F_ERR (h lambda)^8
F_TOL = 1e-10        # its posterior-weighted estimate accepted
SUPPORT = 1e-10      # the last stage's posterior support for F's finer window: density above this of its peak


@jit
def _stage_logq(kind: int, shape: float, loc: NDArray[np.float64], scale: NDArray[np.float64],
                members: NDArray[np.int64], a: int, b: int, x: float, tie_margin: float,
                size: NDArray[np.float64], terms: NDArray[np.float64]) -> float:
    """Log-density of a stage's best performance at ``x``: one competitor's density, or for a group drawn
    in the margin model ``sum_b f_b(x) prod_{j != b} P(x - eps_bj < X_j < x)``,
    ``eps_bj = tie_margin sqrt(size_b + size_j)`` (the differences from :func:`log_cdf_diff`, exact for
    margins down to 1e-300)."""
    if b - a == 1:
        i = members[a]
        return logpdf(kind, shape, (x - loc[i]) / scale[i]) - math.log(scale[i])
    for u in range(a, b):
        i = members[u]
        acc = logpdf(kind, shape, (x - loc[i]) / scale[i]) - math.log(scale[i])
        for v in range(a, b):
            if v != u:
                j = members[v]
                e = tie_margin * math.sqrt(size[i] + size[j])
                acc += log_cdf_diff(kind, shape, (x - loc[j]) / scale[j], e / scale[j])
        terms[u - a] = acc
    return max(logsumexp(terms, b - a), LOG_FLOOR)


@jit
def _lookup_up(vals: NDArray[np.float64], off: int, s: int, e: int, j: int) -> float:
    """A forward function (``log C``) of a stage whose window is nodes ``s..e`` at node ``j``: 0 below
    the window (``-inf``), its last value above."""
    if j < s:
        return -np.inf
    if j > e:
        return vals[off + e - s]
    return vals[off + j - s]


@jit
def _lookup_down(vals: NDArray[np.float64], off: int, s: int, e: int, j: int) -> float:
    """A backward function (``log D``): its first value below the window, 0 (``-inf``) above."""
    if j > e:
        return -np.inf
    if j < s:
        return vals[off]
    return vals[off + j - s]


@jit
def shift_by_links(loc: NDArray[np.float64], stage_start: NDArray[np.int64], members: NDArray[np.int64],
                   stages: int, link: NDArray[np.float64], dnf: NDArray[np.int64],
                   n_dnf: int) -> NDArray[np.float64]:
    """Locations with the margins between stages made shifts: ``X_g > X_(g+1) + e  <=>  X_g + c_g >
    X_(g+1) + c_(g+1)``, ``c_(g+1) = c_g + e`` (the non-finishers take the last stage's shift)."""
    shifted = loc.copy()
    shift = 0.0
    for g in range(stages):
        for u in range(stage_start[g], stage_start[g + 1]):
            shifted[members[u]] = loc[members[u]] + shift
        if g + 1 < stages:
            shift += link[g]
    for t in range(n_dnf):
        shifted[dnf[t]] = loc[dnf[t]] + shift
    return shifted


@jit
def order_log_prob(
    loc: NDArray[np.float64], scale: NDArray[np.float64], kind: int, shape: float,
    stage_start: NDArray[np.int64], members: NDArray[np.int64], stages: int,
    link: NDArray[np.float64], tie_margin: float, size: NDArray[np.float64],
    dnf: NDArray[np.int64], n_dnf: int,
    want_grad: bool, grad_loc: NDArray[np.float64], grad_scale: NDArray[np.float64], precision: float,
    fast: bool = True,
) -> float:
    """``log P(observed outcome)`` for independent performances ``X_i = loc_i + scale_i e_i``, and with
    ``want_grad`` its gradient with respect to every ``loc_i`` and ``scale_i`` (added into the arrays).

    The outcome: ``stages`` groups, best first, ``members[stage_start[g]:stage_start[g + 1]]``, then the
    non-finishers ``dnf[:n_dnf]``.  A stage of one competitor is a place in a strict order; between
    consecutive stages the better stage's best performance exceeds the next one's by ``link[g]`` (0
    without a draw margin).  A stage of several competitors is a draw in TrueSkill's margin model: every
    member within ``tie_margin * sqrt(size_i + size_j)`` below the group's best ``i``.  Non-finishers
    lie below the last stage's best, in any order.  The gradient needs stages of one competitor.

    The method is the module's: windows from expectation propagation, the recursion on a graded lattice,
    a backward sweep for the posterior densities (``d log P / d loc_i = int post_i psi(z)/s_i``,
    ``d log P / d scale_i = int post_i (z psi(z) - 1)/s_i``, a non-finisher's from ``f_d / F_d`` under
    the last stage's posterior), and the self-check that repeats with a finer step or wider windows.
    ``precision`` divides the step.  With ``fast`` (the default) a strict order of more than two Gaussian
    performances goes first to the fast tier (:func:`podium.ordering.gauss_chain.gauss_order_log_prob`, draw
    margins between places made location shifts), and here only when it declines.
    """
    if stages == 0:
        return 0.0
    n_fin = stage_start[stages]
    if kind == GAUSSIAN and n_fin == stages and stages + n_dnf == 2:
        # two Gaussian performances, one above the other: log Phi((m_a - m_b - e) / sqrt(s_a^2 + s_b^2))
        a = members[0]
        b = members[1] if stages == 2 else dnf[0]
        e = link[0] if stages == 2 else 0.0
        sd = math.sqrt(scale[a] * scale[a] + scale[b] * scale[b])
        t = (loc[a] - loc[b] - e) / sd
        if want_grad:
            r = inv_mills(t) / sd
            grad_loc[a] += r
            grad_loc[b] -= r
            grad_scale[a] -= r * t * scale[a] / sd
            grad_scale[b] -= r * t * scale[b] / sd
        return log_ndtr(t)
    shifted = shift_by_links(loc, stage_start, members, stages, link, dnf, n_dnf)
    if fast and kind == GAUSSIAN and n_fin == stages:
        out = gauss_order_log_prob(shifted, scale, members, stages, dnf, n_dnf, want_grad, grad_loc, grad_scale,
                                   precision)
        if not math.isnan(out):
            return out
    dmean, dsd, _, _, sharp = shape_info(kind, shape)
    closed_cdf = kind != SKEW_NORMAL
    # moment-matched priors of the stages (a drawn group: its best member's) and the non-finishers
    n_var = stages + n_dnf
    m0 = np.empty(n_var)
    v0 = np.empty(n_var)
    for g in range(stages):
        best = -np.inf
        var = 0.0
        for u in range(stage_start[g], stage_start[g + 1]):
            i = members[u]
            best = max(best, shifted[i] + dmean * scale[i])
            var = max(var, (dsd * scale[i]) ** 2)
        m0[g] = best
        v0[g] = var
    for t in range(n_dnf):
        d = dnf[t]
        m0[stages + t] = shifted[d] + dmean * scale[d]
        v0[stages + t] = (dsd * scale[d]) ** 2
    pmean = np.empty(n_var)
    psd = np.empty(n_var)
    tilt = np.empty(n_var)
    _ep_chain(m0, v0, stages, n_dnf, pmean, psd, tilt)
    if kind != GAUSSIAN:
        # expectation propagation matches moments, which misplaces an upset between exponential tails
        # (with Gumbel noise it is decided near the stronger competitor): centre on the order's mode
        seq = np.empty(n_var, dtype=np.int64)
        for g in range(stages):
            seq[g] = members[stage_start[g]]
        for t in range(n_dnf):
            seq[stages + t] = dnf[t]
        mode = np.empty(n_var)
        set_lo = np.empty(n_var)
        set_hi = np.empty(n_var)
        _isotonic_mode(kind, shape, shifted, scale, seq, stages, n_dnf if closed_cdf else 0, mode, set_lo, set_hi)
        for t in range(n_dnf):  # a non-finisher below the last finisher: its own mode, capped there
            d = dnf[t]
            mode[stages + t] = min(_pooled_mode(kind, shape, shifted, scale, seq, stages + t, stages + t + 1, 0, 0),
                                   mode[stages - 1])
        for k in range(n_var):
            pmean[k] = mode[k]
            tilt[k] = 0.0
        for k in range(n_var):  # as offsets from the centre (0: no extent beyond the spread's)
            set_lo[k] = set_lo[k] - pmean[k] if k < stages else 0.0
            set_hi[k] = set_hi[k] - pmean[k] if k < stages else 0.0
    else:
        set_lo = np.zeros(n_var)
        set_hi = np.zeros(n_var)
    below, above = _reach(kind)
    # how steeply each stage's density (the best member's) falls where the posterior puts it
    for g in range(stages):
        for u in range(stage_start[g], stage_start[g + 1]):
            i = members[u]
            tilt[g] = max(tilt[g], abs(score(kind, shape, (pmean[g] - shifted[i]) / scale[i])) / scale[i])
    for t in range(n_dnf):
        d = dnf[t]
        tilt[stages + t] = max(tilt[stages + t],
                               abs(score(kind, shape, (pmean[stages + t] - shifted[d]) / scale[d])) / scale[d])
    widen_lo = np.ones(n_var)
    widen_hi = np.ones(n_var)
    theta = THETA * sharp / precision
    n_win = stages + (0 if closed_cdf else n_dnf)
    # closed-form non-finishers get no window of their own, but their distribution functions are factors
    # of the last stage's integrand: where one rises inside that window, the lattice resolves its scale (and
    # a skew-normal one's, integrated on it, wherever it has mass below the last stage's range: see below)
    n_feat = n_dnf
    feat_lo = np.full(max(n_dnf, 1), np.inf)
    # a skew-normal non-finisher's F where the last stage's posterior lies, found too coarse by the check
    # after the backward sweep: a window of the step its density's log-slope there needs (see below)
    fine_lo = np.full(max(n_dnf, 1), np.inf)
    fine_hi = np.full(max(n_dnf, 1), -np.inf)
    fine_step = np.full(max(n_dnf, 1), np.inf)
    _, _, dnf_below, dnf_above, _ = shape_info(kind, shape)
    w_lo = np.empty(n_win + 2 * n_feat)
    w_hi = np.empty(n_win + 2 * n_feat)
    w_step = np.empty(n_win + 2 * n_feat)
    terms = np.empty(max(n_fin, 1))
    log_p = 0.0
    for rnd in range(MAX_ROUNDS):
        for k in range(n_win):
            w_lo[k] = pmean[k] + min(set_lo[k], -below * widen_lo[k] * psd[k])
            w_hi[k] = pmean[k] + max(set_hi[k], above * widen_hi[k] * psd[k])
            w_step[k] = theta * psd[k] / dsd
            if tilt[k] > 0.0:
                w_step[k] = min(w_step[k], THETA_SLOPE / precision / tilt[k])
        # nothing caps the top stage from above, nor the last one from below without non-finishers: the
        # posterior's tail there is the prior's
        w_hi[0] = max(w_hi[0], m0[0] + PRIOR_REACH * above / REACH * widen_hi[0] * math.sqrt(v0[0]))
        top_last = w_hi[stages - 1] if stages == 1 else max(w_hi[stages - 1], w_hi[stages - 2])
        if n_dnf == 0:
            last = stages - 1
            w_lo[last] = min(w_lo[last], m0[last] - PRIOR_REACH * below / REACH * widen_lo[last] * math.sqrt(v0[last]))
        n_all = n_win
        for t in range(n_feat):
            d = dnf[t]
            if closed_cdf:
                lo = max(shifted[d] - dnf_below * scale[d], w_lo[stages - 1])
                hi = min(shifted[d] + dnf_above * scale[d], w_hi[stages - 1])
            else:
                # a skew-normal non-finisher's F is integrated on the lattice from the start of its range, and
                # nothing accrues across a gap of the lattice: its mass below and above its window (a Gaussian
                # tail, of a negative shape below or of a positive one above, is wider than the window's spreads:
                # F lost 3.6e-5 below, 1e-7 above) is covered, on its own scale, to where f has fallen e^-LEVEL
                # (_tail_edge) below the last stage's centre (about where its posterior starts: the non-finishers
                # push it only up) or the mean, and above the mean (F is near 1/2 or more there)
                centre = shifted[d] + dmean * scale[d]
                lo = _tail_edge(kind, shape, shifted[d], scale[d], min(pmean[stages - 1], centre), -1.0)
                hi = min(_tail_edge(kind, shape, shifted[d], scale[d], centre, 1.0), top_last)
                feat_lo[t] = lo
            if lo < hi:
                w_lo[n_all] = lo
                w_hi[n_all] = hi
                w_step[n_all] = theta * scale[d]
                n_all += 1
            if fine_lo[t] < fine_hi[t]:
                w_lo[n_all] = fine_lo[t]
                w_hi[n_all] = fine_hi[t]
                w_step[n_all] = fine_step[t]
                n_all += 1
        x, gap = build_lattice(w_lo, w_hi, w_step, n_all)
        while len(x) == 0:  # beyond the node budget: coarser, never wrong by an infinity
            for k in range(n_all):
                w_step[k] *= 4.0
            x, gap = build_lattice(w_lo, w_hi, w_step, n_all)
        # each stage's node range: its window stretched to the neighbours' (see the module docstring)
        s_idx = np.empty(n_win, dtype=np.int64)
        e_idx = np.empty(n_win, dtype=np.int64)
        for g in range(stages):
            lo = w_lo[g]
            hi = w_hi[g]
            if g + 1 < stages:
                lo = min(lo, w_lo[g + 1])
            elif not closed_cdf:
                for t in range(n_dnf):
                    lo = min(lo, w_lo[stages + t])
            if g > 0:
                hi = max(hi, w_hi[g - 1])
            s_idx[g], e_idx[g] = node_range(x, lo, hi)
        for t in range(n_win - stages):
            # a skew-normal non-finisher's F is a factor of the last stage's integrand over that stage's whole
            # range, which the stretch above may carry past its window: F is integrated up to the range's end
            # (ending it at the window's, the lookup held F at its value there, and a finisher pushed above
            # its window by the non-finishers below lost most of its posterior: 3.35 in log P, issue 32)
            s_idx[stages + t], e_idx[stages + t] = node_range(x, min(w_lo[stages + t], feat_lo[t]), w_hi[stages - 1])
            e_idx[stages + t] = max(e_idx[stages + t], e_idx[stages - 1])
        off = np.empty(n_win + 1, dtype=np.int64)
        off[0] = 0
        for k in range(n_win):
            off[k + 1] = off[k] + e_idx[k] - s_idx[k] + 1
        cum = np.empty(off[n_win])          # log C of every stage over its range (then skew-normal F_d)
        lq = np.empty(off[stages])          # log q of every stage over its range
        lnext = np.empty(off[stages])       # log C of the stage below (or of the non-finishers) there
        work = np.empty(len(x))
        wgap = np.empty(len(x))
        res = np.empty(len(x))
        # numeric distribution functions of skew-normal non-finishers
        for t in range(n_win - stages):
            k = stages + t
            d = dnf[t]
            cnt = e_idx[k] - s_idx[k] + 1
            for j in range(cnt):
                jj = s_idx[k] + j
                work[j] = logpdf(kind, shape, (x[jj] - shifted[d]) / scale[d]) - math.log(scale[d])
                wgap[j] = gap[jj]
            cumulate(work, wgap, cnt, res)
            for j in range(cnt):
                cum[off[k] + j] = res[j]
        # forward sweep from the bottom
        for g in range(stages - 1, -1, -1):
            cnt = e_idx[g] - s_idx[g] + 1
            for j in range(cnt):
                jj = s_idx[g] + j
                xj = x[jj]
                q = _stage_logq(kind, shape, shifted, scale, members, stage_start[g], stage_start[g + 1], xj,
                                tie_margin, size, terms)
                lq[off[g] + j] = q
                if g + 1 < stages:
                    nxt = _lookup_up(cum, off[g + 1], s_idx[g + 1], e_idx[g + 1], jj)
                else:
                    nxt = 0.0
                    for t in range(n_dnf):
                        d = dnf[t]
                        if closed_cdf:
                            nxt += logcdf(kind, shape, (xj - shifted[d]) / scale[d])
                        else:
                            k = stages + t
                            nxt += _lookup_up(cum, off[k], s_idx[k], e_idx[k], jj)
                lnext[off[g] + j] = nxt
                work[j] = q + nxt
                wgap[j] = gap[jj]
            cumulate(work, wgap, cnt, res)
            for j in range(cnt):
                cum[off[g] + j] = res[j]
        log_p = cum[off[0] + e_idx[0] - s_idx[0]]
        if not (log_p > LOG_FLOOR):
            return log_p
        # backward sweep from the top: log D of every stage, posterior masses, edge densities
        dcum = np.empty(off[stages])
        worst = 0.0
        retry = False
        refine = False
        want_lo = np.full(max(n_dnf, 1), np.inf)
        want_hi = np.full(max(n_dnf, 1), -np.inf)
        want_step = np.full(max(n_dnf, 1), np.inf)
        for g in range(stages):
            cnt = e_idx[g] - s_idx[g] + 1
            for j in range(cnt):
                jj = s_idx[g] + j
                prev = 0.0 if g == 0 else _lookup_down(dcum, off[g - 1], s_idx[g - 1], e_idx[g - 1], jj)
                work[cnt - 1 - j] = lq[off[g] + j] + prev
                if j < cnt - 1:
                    wgap[cnt - 2 - j] = gap[jj]
            wgap[cnt - 1] = 0.0
            cumulate(work, wgap, cnt, res)
            for j in range(cnt):
                dcum[off[g] + j] = res[cnt - 1 - j]
            # posterior of stage g over its range
            for j in range(cnt):
                jj = s_idx[g] + j
                prev = 0.0 if g == 0 else _lookup_down(dcum, off[g - 1], s_idx[g - 1], e_idx[g - 1], jj)
                lp = lq[off[g] + j] + prev + lnext[off[g] + j] - log_p
                res[j] = math.exp(lp) if lp > -745.0 else 0.0
                wgap[j] = gap[jj]
            mass = integrate(res, wgap, cnt)
            worst = max(worst, abs(mass - 1.0))
            if g == stages - 1 and not closed_cdf:
                # the non-finishers' F, integrated on the lattice, is a factor of this posterior but no part of
                # the mass check (the posterior is built with the same F): where the posterior lies, the step
                # must follow each one's density, steep there when the last stage is far above it (a finisher
                # 100 sd above a shape-3 non-finisher: log f's slope 90, step 0.032, F 2e-4 high, and log P)
                # the error estimate: the posterior-weighted relative error of each F (F_ERR (h lambda)^8, lambda
                # the log-slope of f at the node; the far case above gave 2e-4, 4e-7, 1.7e-8 at h lambda = 2.9,
                # 1.45, 0.97); above its bound, a window (_fine_window) over the posterior's support
                peak = 0.0
                for j in range(cnt):
                    peak = max(peak, res[j])
                jl = -1
                jh = -1
                for j in range(cnt):
                    if res[j] > SUPPORT * peak:
                        if jl < 0:
                            jl = j
                        jh = j
                for t in range(n_dnf):
                    d = dnf[t]
                    err = 0.0
                    for j in range(jl, jh):
                        jj = s_idx[g] + j
                        lam = -score(kind, shape, (x[jj] - shifted[d]) / scale[d]) / scale[d]
                        if lam > 0.0:
                            err += res[j] * gap[jj] * F_ERR * (gap[jj] * lam) ** 8
                    if err > F_TOL:  # (err > 0: f rises at the support's foot, so the step is finite)
                        need = _fine_window(kind, shape, shifted[d], scale[d], x[s_idx[g] + jl], x[s_idx[g] + jh],
                                            precision)
                        want_lo[t] = need[0]
                        want_hi[t] = need[1]
                        want_step[t] = need[2]
                        refine = True
            # edges: the posterior density there times a spread bounds the mass beyond
            # twice the reach, or one more reach beyond the range's end (which may be stretched past the window)
            if res[0] * psd[g] / REACH > EDGE_TOL:
                widen_lo[g] = max(2.0 * widen_lo[g], (pmean[g] - x[s_idx[g]]) / (below * psd[g]) + 1.0)
                retry = True
            if res[cnt - 1] * psd[g] / REACH > EDGE_TOL:
                widen_hi[g] = max(2.0 * widen_hi[g], (x[e_idx[g]] - pmean[g]) / (above * psd[g]) + 1.0)
                retry = True
            # a gap between clusters inside the range (no nodes there): the posterior must be negligible
            # at both its sides, or the window is stretched across it (a flat posterior, exponential tails)
            for j in range(cnt - 1):
                jj = s_idx[g] + j
                if gap[jj] == 0.0 and max(res[j], res[j + 1]) * psd[g] / REACH > EDGE_TOL:
                    if x[jj] < pmean[g]:
                        widen_lo[g] = max(widen_lo[g], 1.001 * (pmean[g] - x[jj]) / (below * psd[g]))
                    else:
                        widen_hi[g] = max(widen_hi[g], 1.001 * (x[jj + 1] - pmean[g]) / (above * psd[g]))
                    retry = True
        if worst > MASS_TOL + MASS_NOISE * abs(log_p) and not retry:
            theta *= 0.6
            retry = True
        if refine and not retry:  # (once the posterior is inside its range: its support is known)
            for t in range(n_dnf):
                if want_step[t] < np.inf:
                    fine_lo[t] = want_lo[t]
                    fine_hi[t] = want_hi[t]
                    fine_step[t] = want_step[t]
            retry = True
        if retry and rnd + 1 < MAX_ROUNDS:
            continue
        if want_grad:
            _gradient(shifted, scale, kind, shape, stage_start, members, stages, dnf, n_dnf, closed_cdf, x, gap,
                      s_idx, e_idx, off, cum, dcum, lq, lnext, log_p, grad_loc, grad_scale)
        return log_p
    return log_p


@jit
def _fine_window(kind: int, shape: float, loc: float, scale: float, lo: float, hi: float,
                 precision: float) -> tuple[float, float, float]:
    """``(lo', hi, step)``: where and how finely a non-finisher's ``F`` must be integrated for the last stage's
    posterior on ``[lo, hi]``.  ``F(x)`` is made of ``f`` within about ``1 / lambda`` below ``x``, ``lambda`` the
    log-slope of ``f`` there (rising below its mode; ``F(a) / F(x) <= e^(-lambda (x - a))`` for a log-concave
    ``f``), so the window reaches :data:`LEVEL` of those below ``lo``, and the step is :data:`THETA_SLOPE` over the
    steepest slope in it (at its foot: the slope falls toward the mode).  Above the mode ``F`` is mostly made of
    its bulk and any step fine for the density will do: step ``inf``."""
    lam = -score(kind, shape, (lo - loc) / scale) / scale
    if not lam > 0.0:
        return lo, hi, np.inf
    foot = lo - LEVEL / lam
    lam = -score(kind, shape, (foot - loc) / scale) / scale
    return foot, hi, THETA_SLOPE / precision / lam


@jit
def _gradient(shifted: NDArray[np.float64], scale: NDArray[np.float64], kind: int, shape: float,
              stage_start: NDArray[np.int64], members: NDArray[np.int64], stages: int,
              dnf: NDArray[np.int64], n_dnf: int, closed_cdf: bool, x: NDArray[np.float64],
              gap: NDArray[np.float64], s_idx: NDArray[np.int64], e_idx: NDArray[np.int64],
              off: NDArray[np.int64], cum: NDArray[np.float64], dcum: NDArray[np.float64],
              lq: NDArray[np.float64], lnext: NDArray[np.float64], log_p: float, grad_loc: NDArray[np.float64],
              grad_scale: NDArray[np.float64]) -> None:
    """Add ``d log P / d loc`` and ``d log P / d scale`` from the posterior densities of the sweeps."""
    n = len(x)
    fm = np.empty(n)
    fs = np.empty(n)
    wgap = np.empty(n)
    post = np.empty(n)
    for g in range(stages):
        i = members[stage_start[g]]
        s = scale[i]
        cnt = e_idx[g] - s_idx[g] + 1
        for j in range(cnt):
            jj = s_idx[g] + j
            prev = 0.0 if g == 0 else _lookup_down(dcum, off[g - 1], s_idx[g - 1], e_idx[g - 1], jj)
            nxt = lnext[off[g] + j]
            lp = lq[off[g] + j] + prev + nxt - log_p
            w = math.exp(lp) if lp > -745.0 else 0.0
            post[j] = w
            if w > 0.0:
                z = (x[jj] - shifted[i]) / s
                psi = score(kind, shape, z)
                fm[j] = w * psi / s
                fs[j] = w * (z * psi - 1.0) / s
            else:  # (and psi, which overflows far in a Gumbel's lower tail, is never multiplied by 0)
                fm[j] = 0.0
                fs[j] = 0.0
            wgap[j] = gap[jj]
        # divided by the posterior's computed mass (1 up to the quadrature error, which then cancels
        # between the stages: the location gradient sums to 0 even where log P is -1e11)
        mass = integrate(post, wgap, cnt)
        grad_loc[i] += integrate(fm, wgap, cnt) / mass
        grad_scale[i] += integrate(fs, wgap, cnt) / mass
        if g == stages - 1:
            for t in range(n_dnf):
                d = dnf[t]
                sd = scale[d]
                for j in range(cnt):
                    jj = s_idx[g] + j
                    z = (x[jj] - shifted[d]) / sd
                    rho = 0.0
                    if post[j] > 0.0:
                        if closed_cdf:  # f/F from its own form: log f - log F cancels in a Gumbel's lower tail
                            rho = math.exp(min(log_reverse_hazard(kind, shape, z), 700.0)) / sd
                        else:
                            lf = _lookup_up(cum, off[stages + t], s_idx[stages + t], e_idx[stages + t], jj)
                            if lf > LOG_FLOOR:
                                rho = math.exp(logpdf(kind, shape, z) - math.log(sd) - lf)
                    fm[j] = -post[j] * rho
                    fs[j] = -post[j] * rho * z
                grad_loc[d] += integrate(fm, wgap, cnt) / mass
                grad_scale[d] += integrate(fs, wgap, cnt) / mass
