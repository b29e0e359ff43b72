"""Elo-MMR numerics: a round's performances from its standings, and the robust average of a player's history.

Ebtekar & Liu (2021), "Elo-MMR: A Rating System for Massive Multiplayer Competitions", WWW '21 (arXiv 2101.00400),
its three steps named by their titles there; constants and order of operations as in the authors' implementation
(EbTech/Elo-MMR ``multi-skill``: ``systems/elo_mmr.rs``, ``systems/common/player.rs``), which ``elo-mmr-py`` 2.0.0
runs.  A round, for each competitor (``w`` its weight, ``sigma_L = sig_limit``, ``d = drift_per_day``):

* ``w = weight_limit * noob_delay[k]`` (``k`` earlier rounds; 1 past the list), ``sigma_perf^2 = (1 + 1/w)
  sigma_L^2 + d / w``, ``sigma_drift^2 = w sigma_L^2 + d dt / 86400`` (``dt`` seconds since the player's last round);
* skill evolution (pseudodiffusion, transfer speed ``kappa``): ``sigma' = hypot(sigma, sigma_drift)``, ``rho =
  (sigma / sigma')^2``, ``t = rho^kappa``; the Gaussian factor ``N(m_0, s_0^2)`` becomes the weight ``rho (t / s_0^2 +
  (1 - t)(1 / s_0^2 + sum_k W_k))`` at ``(t m_0 / s_0^2 + (1 - t)(1 / s_0^2 + sum_k W_k) mu) / (...)`` (``W_k`` the
  logistic factors' weights), each of which is multiplied by ``t rho`` (``kappa = inf``: one Gaussian at ``mu``);
* performance estimation: competitor ``j`` is the logistic term of standard deviation ``s_j = hypot(sigma'_j,
  sigma_perf)``, ``w_out = pi / (sqrt(3) s_j)``, ``w_arg = w_out / 2``; ``p_i`` is the zero of the decreasing
  ``sum_{j ahead} (v_j - w_out_j) + sum_{j behind} (v_j + w_out_j) + sum_{j tied} 2 v_j``, ``v_j(x) = -w_out_j
  tanh(w_arg_j (x - mu_j))``, ``i`` itself among the tied (``split_ties``: a tie is ``v_j`` once);
* belief update: the factor ``(p_i, w_arg, w_out)`` of ``sigma_perf`` joins the history; the new ``mu`` is the zero
  of the increasing ``(x - m_0) / s_0^2 + sum_k w_out_k tanh(w_arg_k (x - p_k))``, ``sigma^-2 = sigma'^-2 +
  sigma_perf^-2``.

The reference merges competitors whose ``mu`` and ``s`` round to the same multiple of ``subsample_bucket`` into one
term at their running mean (1e-5 exact, 2 for ``mmr-fast``); ``mmr-fast`` also takes for each competitor only the
``subsample_size`` (100) terms nearest its ``mu`` and keeps that many factors, folding the oldest into the Gaussian
one (weight ``2 w_arg w_out / (pi^2/3)``).  Roots lie in ``[lo, hi]`` (the reference's ``(-6000, 9000)``); Halley's
method on a bracket stops at a step of ``tol``, whose cube is what is left (the reference's Newton runs to the last
bit; the roots agree to about 1e-12 of a rating).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..ordering.numerics import jit
from .common import logistic_logs, logistic_pairs, match_slots, most_players, most_teams, played

__all__ = ["TANH_MULTIPLIER", "NORMAL_MU", "NORMAL_SIG", "COUNT", "HEAD", "FACTORS", "extra_prior",
           "replay_elo_mmr", "pair_log_probabilities", "pair_predictions", "match_log_likelihoods"]

TANH_MULTIPLIER = math.pi / 1.7320508075688772  # pi / sqrt(3): a logistic of standard deviation s has scale s / this
_WEIGHT_UNIT = 2.0 / (TANH_MULTIPLIER * TANH_MULTIPLIER)  # a factor's Gaussian weight is w_arg w_out times this
_SECONDS_PER_DAY = 86400.0
_NOT_FINISHED = 1 << 62  # the order key of a non-finisher: below every finisher
_MAX_STEPS = 200

# Columns of a player's row of State.extra: the Gaussian factor (mean, standard deviation; NaN: none yet, the
# rating itself is), the number of logistic factors kept and the ring position of the oldest, then the factors,
# (mu, w_arg, w_out) each.
NORMAL_MU, NORMAL_SIG, COUNT, HEAD, FACTORS = range(5)


def extra_prior(history: int) -> NDArray[np.float64]:
    """A new player's row: no Gaussian factor yet (it is the rating when first played), no logistic factors."""
    row = np.zeros(FACTORS + 3 * history)
    row[NORMAL_MU] = math.nan
    row[NORMAL_SIG] = math.nan
    return row


@jit
def _bucket(a: float, width: float) -> int:
    """The reference's bucket, ``(a / width).round() as i32``: half away from zero, saturating at the i32 limits."""
    q = a / width
    if q != q:
        return 0
    r = float(np.trunc(q))
    if abs(q - r) >= 0.5:
        r += 1.0 if q > 0.0 else -1.0
    return int(min(max(r, -2147483648.0), 2147483647.0))


@jit
def _tanh(z: float) -> float:
    """``tanh z`` as ``1 - 2 / (e^(2z) + 1)``: to within 2e-16 absolute (what the sums need), at half the cost of
    the library's (one exponential; ``e^(2z)`` overflowing to infinity gives 1)."""
    return 1.0 - 2.0 / (math.exp(2.0 * z) + 1.0)


@jit
def _rating_root(x: float, lo: float, hi: float, nmu: float, nw: float, extra: NDArray[np.float64], r: int,
                 head: int, count: int, cap: int, tol: float) -> float:
    """The zero of ``nw (x - nmu) + sum_k w_out_k tanh(w_arg_k (x - mu_k))`` (increasing) in ``[lo, hi]``, by Halley's
    method from ``x`` on a bracket (a bisection whenever a step leaves it)."""
    x = min(max(x, lo), hi)
    for _ in range(_MAX_STEPS):
        f, f1, f2 = nw * (x - nmu), nw, 0.0
        for k in range(count):
            c = FACTORS + 3 * ((head + k) % cap)
            a = extra[r, c + 1]
            b = extra[r, c + 2]
            t = _tanh((x - extra[r, c]) * a)
            s = 1.0 - t * t
            f += b * t
            f1 += b * a * s
            f2 -= 2.0 * b * a * a * t * s
        if f > 0.0:
            hi = x
        elif f < 0.0:
            lo = x
        else:
            return x
        x, done = _halley(x, f, f1, f2, lo, hi, tol)
        if done:
            return x
    return x


@jit
def _halley(x: float, f: float, f1: float, f2: float, lo: float, hi: float, tol: float) -> tuple[float, bool]:
    """One Halley step from ``x`` (Newton's where Halley's denominator is not positive), a bisection of ``[lo, hi]``
    if it leaves it; and whether to stop: a Halley step of at most ``tol`` (its cube is what is left) or a bracket
    down to the spacing of floats."""
    den = 2.0 * f1 * f1 - f * f2
    step = -2.0 * f * f1 / den if den > 0.0 else (-f / f1 if f1 != 0.0 else math.inf)
    new = x + step
    if f1 != 0.0 and lo < new < hi:  # (f1 is 0 where every term is flat to the last bit: far outside the field)
        return new, abs(step) <= tol
    # a bisection: done only when the bracket is down to the spacing of floats
    return 0.5 * (lo + hi), hi - lo <= 4e-16 * max(abs(lo), abs(hi), 1.0)


@jit
def _tie_sums(x: float, terms: NDArray[np.int64], counts: NDArray[np.float64], a: int, b: int,
              mu: NDArray[np.float64], arg: NDArray[np.float64], out: NDArray[np.float64]
              ) -> tuple[float, float, float]:
    """``sum counts_k v_{terms_k}(x)`` and its two derivatives over ``k`` in ``[a, b)``."""
    e, e1, e2 = 0.0, 0.0, 0.0
    for k in range(a, b):
        j = terms[k]
        c = counts[k] * out[j]
        ar = arg[j]
        t = _tanh((x - mu[j]) * ar)
        s = 1.0 - t * t
        e -= c * t
        e1 -= c * ar * s
        e2 += 2.0 * c * ar * ar * t * s
    return e, e1, e2


@jit
def _solve_query(at: NDArray[np.float64], n: int, mu: NDArray[np.float64], arg: NDArray[np.float64],
                 out: NDArray[np.float64], coef: NDArray[np.float64], terms: NDArray[np.int64],
                 counts: NDArray[np.float64], a: int, b: int, constant: float, lo: float, hi: float, tol: float,
                 fresh: bool) -> float:
    """The zero of the decreasing ``constant + sum_{j<n} coef_j v_j / w_out_j + sum_{a<=k<b} counts_k v_{terms_k}``
    (``coef_j``: the term's multiplicity in the equation times ``w_out_j``), by Halley's method on a bracket in
    ``[lo, hi]``, from ``at[0]`` if ``fresh``, else from one Halley step off the previous query's last point ``at[0]``,
    where the shared sum and its first two derivatives ``at[1:4]`` are known.  ``at`` is left at the last point
    evaluated, with the shared sum there (without ``constant`` and the ``counts`` terms)."""
    x = min(max(at[0], lo), hi)
    if not fresh:  # the shared sum is known at at[0]: only this query's own terms are summed for the first step
        e, e1, e2 = _tie_sums(x, terms, counts, a, b, mu, arg, out)
        if at[2] + e1 < 0.0:
            x, _ = _halley(x, at[1] + e + constant, at[2] + e1, at[3] + e2, lo, hi, tol)
    for _ in range(_MAX_STEPS):
        g, g1, g2 = 0.0, 0.0, 0.0
        for j in range(n):
            ar = arg[j]
            t = _tanh((x - mu[j]) * ar)
            s = 1.0 - t * t
            c = coef[j]
            g -= c * t
            g1 -= c * ar * s
            g2 += 2.0 * c * ar * ar * t * s
        at[0], at[1], at[2], at[3] = x, g, g1, g2
        e, e1, e2 = _tie_sums(x, terms, counts, a, b, mu, arg, out)
        f = g + e + constant
        if f > 0.0:
            lo = x
        elif f < 0.0:
            hi = x
        else:
            return x
        x, done = _halley(x, f, g1 + e1, g2 + e2, lo, hi, tol)
        if done:
            return x
    return x


@jit
def _diffuse(extra: NDArray[np.float64], r: int, cap: int, noise: float, kappa: float,
             mu: NDArray[np.float64], sigma: NDArray[np.float64]) -> None:
    """Section 5.1's pseudo-diffusion of player ``r`` by ``noise`` (the module docstring), in place."""
    old = sigma[r]
    new = math.hypot(old, noise)
    sigma[r] = new
    if kappa == math.inf:  # the history collapses into one Gaussian
        extra[r, NORMAL_MU], extra[r, NORMAL_SIG], extra[r, COUNT], extra[r, HEAD] = mu[r], new, 0.0, 0.0
        return
    count = int(extra[r, COUNT])
    head = int(extra[r, HEAD])
    decay = (old / new) ** 2
    transfer = decay ** kappa
    ns = extra[r, NORMAL_SIG]
    wn = 1.0 / (ns * ns)
    logistic = 0.0
    for k in range(count):
        c = FACTORS + 3 * ((head + k) % cap)
        logistic += extra[r, c + 1] * extra[r, c + 2] * _WEIGHT_UNIT
    kept = transfer * wn
    moved = (1.0 - transfer) * (wn + logistic)
    total = kept + moved
    extra[r, NORMAL_MU] = (kept * extra[r, NORMAL_MU] + moved * mu[r]) / total
    extra[r, NORMAL_SIG] = math.sqrt(1.0 / (decay * total))
    shrink = transfer * decay
    for k in range(count):
        extra[r, FACTORS + 3 * ((head + k) % cap) + 2] *= shrink


@jit
def _observe(extra: NDArray[np.float64], r: int, cap: int, perf: float, sig_perf: float,
             mu: NDArray[np.float64], sigma: NDArray[np.float64], lo: float, hi: float, tol: float) -> None:
    """Player ``r`` adds the performance ``perf`` (standard deviation ``sig_perf``) to its history, the oldest factor
    folded into the Gaussian one first when ``cap`` are kept; its new rating is the robust average (section 4)."""
    count = int(extra[r, COUNT])
    head = int(extra[r, HEAD])
    nmu = extra[r, NORMAL_MU]
    ns = extra[r, NORMAL_SIG]
    if count >= cap:  # keeps the total weight (the reference's choice)
        c = FACTORS + 3 * head
        wn = 1.0 / (ns * ns)
        wl = extra[r, c + 1] * extra[r, c + 2] * _WEIGHT_UNIT
        nmu = (wn * nmu + wl * extra[r, c]) / (wn + wl)
        ns = math.sqrt(1.0 / (wn + wl))
        head = (head + 1) % cap
        count -= 1
        extra[r, NORMAL_MU] = nmu
        extra[r, NORMAL_SIG] = ns
    c = FACTORS + 3 * ((head + count) % cap)
    w = TANH_MULTIPLIER / sig_perf
    extra[r, c] = perf
    extra[r, c + 1] = w * 0.5
    extra[r, c + 2] = w
    count += 1
    extra[r, COUNT] = count
    extra[r, HEAD] = head
    mu[r] = _rating_root(mu[r], lo, hi, nmu, 1.0 / (ns * ns), extra, r, head, count, cap, tol)
    s = sigma[r]
    sigma[r] = math.sqrt(1.0 / (1.0 / (s * s) + 1.0 / (sig_perf * sig_perf)))


@jit
def _window(jb: NDArray[np.int64], n_terms: int, centre: int, size: int) -> tuple[int, int]:
    """The reference's subsample: the terms (by bucketed ``mu``) around the first whose bucket is at least ``centre``,
    ``size // 2`` each side of it (``size + 1`` in all for an even ``size``), the rest from the side that has more."""
    a = 0
    b = n_terms
    while a < b:  # lower bound of centre in the sorted jb
        c = (a + b) // 2
        if jb[c] < centre:
            a = c + 1
        else:
            b = c
    beg = a
    end = a + 1
    grow = (max(size - (end - beg), 0) + 1) // 2
    beg = max(beg - grow, 0)
    end = min(n_terms, end + grow)
    grow = max(size - (end - beg), 0)
    beg = max(beg - grow, 0)
    end = min(n_terms, end + grow)
    return beg, end


@jit
def _informative(team_rank: NDArray[np.int64], t0: int, n: int) -> bool:
    """Whether some team is known to be ahead of another: two finishers apart, or a finisher and a non-finisher.
    The reference ignores a round without (all tied): no player changes, not even its clock."""
    ranks = team_rank[t0:t0 + n]
    finished = ranks[ranks >= 0]
    return len(finished) > 0 and (len(finished) < n or finished.min() != finished.max())


@jit
def _team_terms(team_start: NDArray[np.int64], t0: int, n: int, row: NDArray[np.int64],
                weight: NDArray[np.float64], mu: NDArray[np.float64], sigma: NDArray[np.float64],
                sp: NDArray[np.float64], p0: int, initial: float, tmu: NDArray[np.float64],
                tsig: NDArray[np.float64], tvar: NDArray[np.float64]) -> None:
    """Each team's term: ``initial + sum_i w_i (mu_i - initial)`` and ``sqrt(sum_i w_i^2 (sigma_i^2 + sigma_perf_i^2))``
    (``tvar`` the variance); a lone player of weight 1 is ``(mu, hypot(sigma, sigma_perf))``, as the reference's."""
    for t in range(n):
        a = team_start[t0 + t]
        b = team_start[t0 + t + 1]
        loc = initial
        var = 0.0
        for p in range(a, b):
            s = sigma[row[p]]
            w = weight[p]
            loc += w * (mu[row[p]] - initial)
            var += w * w * (s * s + sp[p - p0] * sp[p - p0])
        tvar[t] = var
        tmu[t] = mu[row[a]] if b - a == 1 and weight[a] == 1.0 else loc
        tsig[t] = math.hypot(sigma[row[a]], sp[a - p0]) if b - a == 1 and weight[a] == 1.0 else math.sqrt(var)


@jit
def _merge(n: int, tmu: NDArray[np.float64], tsig: NDArray[np.float64], tkey: NDArray[np.int64], width: float,
           term_of: NDArray[np.int64], jmu: NDArray[np.float64], jsig: NDArray[np.float64], jm: NDArray[np.float64],
           jmfin: NDArray[np.float64], jstart: NDArray[np.int64], jkeys: NDArray[np.int64],
           jb: NDArray[np.int64]) -> int:
    """The reference's terms: teams sorted by (bucket of mu, bucket of sigma, place), runs of equal buckets merged
    into one term at their running mean; returns the number of terms, with each term's members' places in order."""
    bmu = np.empty(n, dtype=np.int64)
    bsig = np.empty(n, dtype=np.int64)
    for t in range(n):
        bmu[t] = _bucket(tmu[t], width)
        bsig[t] = _bucket(tsig[t], width)
    order = np.argsort(tkey[:n], kind="mergesort")
    order = order[np.argsort(bsig[order], kind="mergesort")]
    order = order[np.argsort(bmu[order], kind="mergesort")]
    n_terms = 0
    for k in range(n):
        t = order[k]
        # the reference compares with the merged term so far (its running mean), not the previous team
        if n_terms > 0 and _bucket(jmu[n_terms - 1], width) == bmu[t] and _bucket(jsig[n_terms - 1], width) == bsig[t]:
            j = n_terms - 1
            size = jm[j]
            jmu[j] = (size * jmu[j] + tmu[t]) / (size + 1.0)
            jsig[j] = (size * jsig[j] + tsig[t]) / (size + 1.0)
            jm[j] = size + 1.0
        else:
            j = n_terms
            n_terms += 1
            jmu[j] = tmu[t]
            jsig[j] = tsig[t]
            jm[j] = 1.0
            jmfin[j] = 0.0
            jstart[j] = k
        if tkey[t] != _NOT_FINISHED:
            jmfin[j] += 1.0
        term_of[t] = j
        jkeys[k] = tkey[t]
    jstart[n_terms] = n
    for j in range(n_terms):
        jb[j] = _bucket(jmu[j], width)
    return n_terms


@jit
def _exact_performances(n: int, tkey: NDArray[np.int64], term_of: NDArray[np.int64], tmu: NDArray[np.float64],
                        n_terms: int, jmu: NDArray[np.float64], jarg: NDArray[np.float64], jout: NDArray[np.float64],
                        jm: NDArray[np.float64], jmfin: NDArray[np.float64], split: bool, lo: float, hi: float,
                        tol: float, coef: NDArray[np.float64], gterms: NDArray[np.int64],
                        gcounts: NDArray[np.float64], at: NDArray[np.float64], perf: NDArray[np.float64]) -> None:
    """Every team's performance against the whole field.

    A team's equation depends on the team only through its place: it is the field's shared sum
    ``sum_j m_j v_j(x)`` (``m_j`` the term's members), plus ``v_j`` once more for each member of the team's tied
    group (unless ``split``), plus ``sum_j w_out_j (#members of j behind - #ahead)``.  So one root per place, found
    best place first, each started by one Halley step from the previous place's last point (where the shared sum
    is known); a non-finisher's is its own: the finishers' sum, all of them ahead, and its own term as a tie.
    """
    order = np.argsort(tkey[:n], kind="mergesort")
    total, finished = 0.0, 0.0
    for t in range(n):
        total += jout[term_of[t]]
        if tkey[t] != _NOT_FINISHED:
            finished += jout[term_of[t]]
    for j in range(n_terms):
        coef[j] = jm[j] * jout[j]
    ahead = 0.0
    k = 0
    fresh = True
    while k < n and tkey[order[k]] != _NOT_FINISHED:
        e = k
        while e < n and tkey[order[e]] == tkey[order[k]]:
            e += 1
        same = 0.0
        for q in range(k, e):
            same += jout[term_of[order[q]]]
        g = 0
        if not split:
            ids = np.sort(term_of[order[k:e]])
            for q in range(e - k):
                if g > 0 and gterms[g - 1] == ids[q]:
                    gcounts[g - 1] += 1.0
                else:
                    gterms[g] = ids[q]
                    gcounts[g] = 1.0
                    g += 1
        if fresh:
            at[0] = tmu[order[k]]
        x = _solve_query(at, n_terms, jmu, jarg, jout, coef, gterms, gcounts, 0, g, (total - ahead - same) - ahead,
                         lo, hi, tol, fresh)
        fresh = False
        for q in range(k, e):
            perf[order[q]] = x
        ahead += same
        k = e
    if k == n:
        return
    for j in range(n_terms):
        coef[j] = jmfin[j] * jout[j]
    rest = order[k:]
    rest = rest[np.argsort(term_of[rest], kind="mergesort")]
    fresh = True
    q = 0
    while q < len(rest):
        j = term_of[rest[q]]
        e = q
        while e < len(rest) and term_of[rest[e]] == j:
            e += 1
        gterms[0] = j
        gcounts[0] = 1.0 if split else 2.0
        if fresh:
            at[0] = jmu[j]
        x = _solve_query(at, n_terms, jmu, jarg, jout, coef, gterms, gcounts, 0, 1, -finished, lo, hi, tol, fresh)
        fresh = False
        for s in range(q, e):
            perf[rest[s]] = x
        q = e


@jit
def _fast_performances(n: int, tkey: NDArray[np.int64], term_of: NDArray[np.int64], tmu: NDArray[np.float64],
                       n_terms: int, jmu: NDArray[np.float64], jarg: NDArray[np.float64], jout: NDArray[np.float64],
                       jmfin: NDArray[np.float64], jstart: NDArray[np.int64], jkeys: NDArray[np.int64],
                       jb: NDArray[np.int64], split: bool, size: int, width: float, lo: float, hi: float, tol: float,
                       lmu: NDArray[np.float64], larg: NDArray[np.float64], lcoef: NDArray[np.float64],
                       lterms: NDArray[np.int64], at: NDArray[np.float64], perf: NDArray[np.float64]) -> None:
    """``mmr-fast``: each team's performance against the ``size`` terms nearest its ``mu`` (:func:`_window`)."""
    tie = 1.0 if split else 2.0
    for t in range(n):
        beg, end = _window(jb, n_terms, _bucket(tmu[t], width), size)
        key = tkey[t]
        constant = 0.0
        m = 0
        for j in range(beg, end):
            if key == _NOT_FINISHED:
                behind = 0.0
                ahead = jmfin[j]
                a = ahead + (tie if j == term_of[t] else 0.0)
            else:
                a0 = jstart[j]
                a1 = jstart[j + 1]
                lo_k = a0 + np.searchsorted(jkeys[a0:a1], key, side="left")
                hi_k = a0 + np.searchsorted(jkeys[a0:a1], key, side="right")
                ahead = float(lo_k - a0)
                behind = float(a1 - hi_k)
                a = ahead + behind + tie * (hi_k - lo_k)
            constant += jout[j] * (behind - ahead)
            lmu[m] = jmu[j]
            larg[m] = jarg[j]
            lcoef[m] = a * jout[j]
            m += 1
        # start where one logistic of the window's mean place and width would put the zero
        total, centre, slope = 0.0, 0.0, 0.0
        for k in range(m):
            total += lcoef[k]
            centre += lcoef[k] * lmu[k]
            slope += lcoef[k] * larg[k]
        x = tmu[t]
        if total > 0.0:
            x = (centre + math.atanh(min(max(constant / total, -0.999999), 0.999999)) * total * total / slope) / total
        at[0] = x
        perf[t] = _solve_query(at, m, lmu, larg, larg, lcoef, lterms, lmu, 0, 0, constant, lo, hi, tol, True)


@jit
def replay_elo_mmr(
    match_start: NDArray[np.int64], team_start: NDArray[np.int64], team_rank: NDArray[np.int64],
    row: NDArray[np.int64], weight: NDArray[np.float64], time: NDArray[np.float64],
    mu: NDArray[np.float64], sigma: NDArray[np.float64], games: NDArray[np.int64], last_time: NDArray[np.float64],
    extra: NDArray[np.float64], hist_mu: NDArray[np.float64], hist_sigma: NDArray[np.float64],
    pre_mu: NDArray[np.float64], pre_sigma: NDArray[np.float64], initial: float, weight_limit: float,
    sig_limit: float, drift_per_day: float, noob_delay: NDArray[np.float64], kappa: float, split: bool,
    size: int, width: float, cap: int, lo: float, hi: float, tol: float,
    offset: NDArray[np.float64] = np.empty(0), match_weight: NDArray[np.float64] = np.empty(0),
) -> None:
    """Replay a history under :class:`podium.EloMMR`, in place; ``time`` in seconds.

    ``offset[t]`` (empty: none) is added to team ``t``'s term and taken off its members' observed performance (an
    advantage); ``match_weight[m]`` (empty: 1) divides the observed performances' variance (a match's evidence).

    Each round: every player's weight, ``sigma_perf`` and diffusion (:func:`_diffuse`), each team's term
    (:func:`_team_terms`), the reference's merged terms (:func:`_merge`), each team's performance
    (:func:`_exact_performances`, or :func:`_fast_performances` when ``size`` is below the number of terms), then
    each member's update (:func:`_observe`).  A team's performance ``p`` is shared out as each member's expected
    performance given the team's, ``mu_i + w_i v_i / sum_k w_k^2 v_k (p - m)`` with ``v_i = sigma_i^2 +
    sigma_perf_i^2`` and ``m`` the team's term (a lone player's is ``p``).  ``pre_mu`` / ``pre_sigma`` (if not empty)
    get each slot's rating before its match, ``hist_mu`` / ``hist_sigma`` after; a round in which no team is
    known to be ahead of another changes nothing (:func:`_informative`).
    """
    keep = len(hist_mu) > 0
    keep_pre = len(pre_mu) > 0
    teams = most_teams(match_start)
    players = most_players(match_start, team_start)
    # per team, per term, per term of a window (up to size + 1 terms: the reference's takes size // 2 each side)
    tmu, tsig, tvar, perf, jmu, jsig, jarg, jout, jm, jmfin, coef, gcounts, lmu, larg, lcoef = np.empty((15, teams + 1))
    tkey, term_of, jstart, jkeys, jb, gterms = np.empty((6, teams + 1), dtype=np.int64)
    sp = np.empty(players)
    at = np.empty(4)
    sl2 = sig_limit * sig_limit
    has_offset, has_weight = len(offset) > 0, len(match_weight) > 0
    for m in range(len(match_start) - 1):
        t0, n, p0, p1 = match_slots(match_start, team_start, m)
        now = time[m]
        if keep_pre:
            for p in range(p0, p1):
                pre_mu[p] = mu[row[p]]
                pre_sigma[p] = sigma[row[p]]
        if not _informative(team_rank, t0, n):
            if keep:
                for p in range(p0, p1):
                    hist_mu[p] = mu[row[p]]
                    hist_sigma[p] = sigma[row[p]]
            continue
        for p in range(p0, p1):
            r = row[p]
            if extra[r, NORMAL_SIG] != extra[r, NORMAL_SIG]:  # first round: the rating is the Gaussian factor
                extra[r, NORMAL_MU], extra[r, NORMAL_SIG], extra[r, COUNT], extra[r, HEAD] = mu[r], sigma[r], 0.0, 0.0
            k = games[r]
            w = weight_limit * (noob_delay[k] if k < len(noob_delay) else 1.0)
            sp[p - p0] = math.sqrt((1.0 + 1.0 / w) * sl2 + drift_per_day / w)
            dt = now - last_time[r] if now == now and last_time[r] == last_time[r] else 0.0
            _diffuse(extra, r, cap, math.sqrt(w * sl2 + drift_per_day * max(dt, 0.0) / _SECONDS_PER_DAY), kappa,
                     mu, sigma)
        _team_terms(team_start, t0, n, row, weight, mu, sigma, sp, p0, initial, tmu, tsig, tvar)
        for t in range(n):
            tmu[t] += offset[t0 + t] if has_offset else 0.0  # (+ 0.0 leaves a finite float as it was)
            tkey[t] = team_rank[t0 + t] if team_rank[t0 + t] >= 0 else _NOT_FINISHED
        n_terms = _merge(n, tmu, tsig, tkey, width, term_of, jmu, jsig, jm, jmfin, jstart, jkeys, jb)
        for j in range(n_terms):
            w = TANH_MULTIPLIER / jsig[j]
            jarg[j] = w * 0.5
            jout[j] = w
        if size >= n_terms:
            _exact_performances(n, tkey, term_of, tmu, n_terms, jmu, jarg, jout, jm, jmfin, split, lo, hi, tol,
                                coef, gterms, gcounts, at, perf)
        else:
            _fast_performances(n, tkey, term_of, tmu, n_terms, jmu, jarg, jout, jmfin, jstart, jkeys, jb, split,
                               size, width, lo, hi, tol, lmu, larg, lcoef, gterms, at, perf)
        evidence = 1.0 / math.sqrt(match_weight[m]) if has_weight else 1.0
        for t in range(n):
            a = team_start[t0 + t]
            b = team_start[t0 + t + 1]
            if b - a == 1 and weight[a] == 1.0:
                own = perf[t] - offset[t0 + t] if has_offset else perf[t]
                _observe(extra, row[a], cap, own, sp[a - p0] * evidence, mu, sigma, lo, hi, tol)  # (x 1.0 is exact)
                continue
            surprise = (perf[t] - tmu[t]) / tvar[t]
            for p in range(a, b):
                r = row[p]
                s = sigma[r]
                share = weight[p] * (s * s + sp[p - p0] * sp[p - p0]) * surprise
                _observe(extra, r, cap, mu[r] + share, sp[p - p0] * evidence, mu, sigma, lo, hi, tol)
        for p in range(p0, p1):
            r = row[p]
            played(r, now, games, last_time)
            if keep:
                hist_mu[p] = mu[r]
                hist_sigma[p] = sigma[r]


@jit
def _pair_logit(la: Any, sa: Any, lb: Any, sb: Any) -> Any:  # floats, or float64 arrays elementwise
    """``z = (la - lb) pi / (sqrt(3) hypot(sa, sb))``: the difference of performances of means ``la``, ``lb`` and
    standard deviations ``sa``, ``sb``, taken as a logistic of standard deviation ``hypot(sa, sb)``, over its scale;
    of floats or, elementwise, of arrays."""
    return (la - lb) * TANH_MULTIPLIER / np.hypot(sa, sb)


@jit
def pair_log_probabilities(la: float, sa: float, lb: float, sb: float) -> tuple[float, float]:
    """``(log P(a ahead of b), log P(b ahead of a))`` for performances of means ``la``, ``lb`` and standard deviations
    ``sa``, ``sb`` (:func:`_pair_logit`; the paper's logistic terms: ``P = (1 + tanh(w_arg (la - lb))) / 2``)."""
    return logistic_logs(_pair_logit(la, sa, lb, sb))


@jit
def match_log_likelihoods(match_start: NDArray[np.int64], team_rank: NDArray[np.int64], loc: NDArray[np.float64],
                          sd: NDArray[np.float64], out: NDArray[np.float64]) -> None:
    """``out[m]``: match ``m``'s pairwise composite log-likelihood, the sum over pairs of teams of
    :func:`pair_log_probabilities` of their order (a tie: the mean of both orders'; two non-finishers: nothing),
    divided by ``n - 1`` for ``n > 2`` teams (each team's pairs count as one game, as Glicko-2's ``combine="mean"``);
    for two teams ``log P(outcome)``.  Per team ``loc``, ``sd``."""
    for m in range(len(match_start) - 1):
        a0 = match_start[m]
        n = match_start[m + 1] - a0
        total = 0.0
        for a in range(a0, a0 + n):
            for b in range(a + 1, a0 + n):
                ra = team_rank[a] if team_rank[a] >= 0 else _NOT_FINISHED
                rb = team_rank[b] if team_rank[b] >= 0 else _NOT_FINISHED
                if ra == _NOT_FINISHED and rb == _NOT_FINISHED:
                    continue
                ahead, behind = pair_log_probabilities(loc[a], sd[a], loc[b], sd[b])
                total += ahead if ra < rb else (behind if rb < ra else 0.5 * (ahead + behind))
        out[m] = total / (n - 1) if n > 2 else total


@jit
def pair_predictions(loc: NDArray[np.float64], sd: NDArray[np.float64], a: NDArray[np.int64], b: NDArray[np.int64]
                     ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """:func:`pair_log_probabilities` of each pair of teams ``a[k], b[k]``."""
    return logistic_pairs(_pair_logit(loc[a], sd[a], loc[b], sd[b]))
