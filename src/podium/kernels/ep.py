"""Expectation propagation on the comparison layer of TrueSkill's factor graph (Herbrich, Minka & Graepel 2007,
Table 1), for a match of any number of teams: the chain of neighbours sorted by rank, tied groups in a
canonical order averaged over its rotations, non-finishers compared one-sidedly with the last finisher (the
factor graph and the reasons are in :mod:`podium.models.trueskill`).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from ..ordering import GAUSSIAN, log_outcome, rank_groups, tie_member
from ..ordering.moment_chain import order_moments
from ..ordering.numerics import BELOW, DRAW, WIN, comparison_message, jit, log_ndtr, log_ndtr_diff, truncate

__all__ = ["CHAIN", "ORDERED", "EXACT", "MAX_ROTATIONS", "WARM_FACTOR", "tie_rotations",
           "expectation_propagation", "team_log_outcome", "canonical_order"]


_UNDAMPED = 20  # sweeps before expectation propagation damps its updates
MAX_ROTATIONS = 16  # chains a tied match is averaged over at most (8 evenly spaced rotations and their reflections beyond)
WARM_FACTOR = 1e3  # each rotation after the first (ORDERED) starts from the last one's messages and stops at this
                   # times the tolerance: a chain's sweeps contract by about 100 each, so stopping when a sweep moves
                   # no belief by 1e-3 (TrueSkill's default 1e-6 times this) leaves about 1e-5. Measured on 30 fields
                   # of 50-300 players (means sd 15, tied groups of up to 100, 5 % non-finishers) against every run
                   # converged to 1e-6: within 1e-5 of a posterior spread; codeforces_early 3.69 s -> 2.81 s. A fixed
                   # single warm sweep was off by up to 0.65 of a spread there (the test's widest case catches it).
                   # A factor, not a floor, so that a caller asking for a tighter tolerance (TrueSkillThroughTime's
                   # 1e-9 per match) gets every run tighter too.

# How a match of three or more teams is compared (TrueSkill's ``update``): the paper's chain, every place
# beyond the draw margin; places only ordered (``d > 0``), a tied group as its orders; the exact moments.
CHAIN, ORDERED, EXACT = 0, 1, 2


# -- one match --------------------------------------------------------------------------------------
@jit
def _down(kind: int, eps: float, ma: float, va: float, mb: float, vb: float) -> tuple[float, float]:
    """The message ``(pi_b, tau_b)`` of one comparison to its worse team ``b``: half of :func:`tilted_messages`.

    Same cavities and the same arithmetic, for a schedule that needs only one direction at a time.
    """
    sd = math.sqrt(va + vb)
    shift, var_factor = truncate(kind, ma - mb, sd, eps)
    return comparison_message(mb, vb, va, var_factor, -(shift / sd))


@jit
def _up(kind: int, eps: float, ma: float, va: float, mb: float, vb: float) -> tuple[float, float]:
    """The message ``(pi_a, tau_a)`` of one comparison to its better team ``a``: the other half of
    :func:`tilted_messages`."""
    sd = math.sqrt(va + vb)
    shift, var_factor = truncate(kind, ma - mb, sd, eps)
    return comparison_message(ma, va, vb, var_factor, shift / sd)


@jit
def _damped(new: tuple[float, float], old_p: float, old_t: float, step: float) -> tuple[float, float]:
    """A message ``step`` of the way from ``(old_p, old_t)`` to ``new``, in natural parameters (same fixed points)."""
    if step < 1.0:
        return old_p + step * (new[0] - old_p), old_t + step * (new[1] - old_t)
    return new


@jit
def _moved(dp: float, dt: float, p: float, t: float) -> float:
    """How far a message's change ``(dp, dt)`` moves the belief it enters, natural parameters ``(p, t)``.

    The precision's relative change plus the mean's move in the belief's standard deviations,
    ``|dp| / p + |dt - m dp| sqrt(1/p)`` with ``m = t / p`` (``dm = (dt - m dp) / p``): dimensionless, so it
    stays above rounding noise whatever the ratings' scale.
    """
    return abs(dp) / p + abs(dt - t / p * dp) / math.sqrt(p)


@jit
def _before(rank: NDArray[np.int64], tm: NDArray[np.float64], tv: NDArray[np.float64], size: NDArray[np.float64],
            u: int, t: int) -> bool:
    """Whether team ``u`` sorts before team ``t``: by rank (non-finishers last), then mean, variance, size."""
    ru = rank[u] if rank[u] >= 0 else np.iinfo(np.int64).max
    rt = rank[t] if rank[t] >= 0 else np.iinfo(np.int64).max
    if ru != rt:
        return ru < rt
    if tm[u] != tm[t]:
        return tm[u] < tm[t]
    if tv[u] != tv[t]:
        return tv[u] < tv[t]
    return size[u] <= size[t]


@jit
def canonical_order(tm: NDArray[np.float64], tv: NDArray[np.float64], rank: NDArray[np.int64],
                     size: NDArray[np.float64], order: NDArray[np.int64], starts: NDArray[np.int64]) -> tuple[int, int]:
    """Sort the teams into ``order``: by rank (non-finishers last), a tied group by (mean, variance, size).

    The order inside a tied group is what the chain of comparisons would otherwise take from the listing;
    sorting by the teams' own priors makes it independent of the listing (teams with equal keys are
    interchangeable).  Writes the group starts among the finishers into ``starts`` and returns the
    number of groups and of finishers.  Insertion sort: linear for a match listed in finishing order.
    """
    n = len(tm)
    for k in range(n):
        j = k - 1
        while j >= 0 and not _before(rank, tm, tv, size, order[j], k):
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = k
    return rank_groups(rank, order, starts)


@jit
def tie_rotations(starts: NDArray[np.int64], groups: int) -> tuple[int, int]:
    """``(runs, span)``: a match is averaged over ``runs`` chains, run ``r`` rotating every tied group by the
    turn of :func:`podium.ordering.tie_turn` ``(r, runs, span)`` modulo its size, reflected in its second half.

    ``span`` is the lcm of the tied groups' sizes if at most 60, else the largest group's size; ``runs`` is
    ``span`` up to 16 (:data:`MAX_ROTATIONS`).  Over ``span`` runs every tied team holds every place of its
    group's chain equally often, so tied teams with equal priors get identical updates (when ``span <= 16``);
    beyond 16 the runs are 8 evenly spaced rotations, each also reflected (:func:`podium.ordering.tie_turn`, as
    :func:`podium.ordering.log_outcome`'s beyond 32), so a group of 798 costs 16 runs of expectation
    propagation, not 798.  Why 16, not the ordering engine's 32: each run is a whole chain, and on
    codeforces_early 16 runs gave the same pair inversion as 64 (0.7456 against 0.7457) in a quarter of the
    time (4.4 s against 18.4 s).  The runs after the first stop sooner (:data:`WARM_FACTOR`).
    """
    span = 1
    biggest = 1
    for g in range(groups):
        size = starts[g + 1] - starts[g]
        biggest = max(biggest, size)
    for g in range(groups):
        size = starts[g + 1] - starts[g]
        a, b = span, size
        while b:
            a, b = b, a % b
        span = span // a * size
        if span > 60:
            span = biggest
            break
    return min(span, MAX_ROTATIONS), span


@jit
def expectation_propagation(
    tm: NDArray[np.float64], tv: NDArray[np.float64], rank: NDArray[np.int64], size: NDArray[np.float64],
    margin: float, tolerance: float, max_iterations: int, order: NDArray[np.int64], starts: NDArray[np.int64],
    groups: int, finishers: int, rotation: int, pi: NDArray[np.float64], tau: NDArray[np.float64],
    iw: NDArray[np.int64], fw: NDArray[np.float64], links: bool = True, warm: bool = False, reflect: bool = False,
) -> int:
    """Run EP on the comparison layer of one match; write each team's total message into ``pi, tau``.

    ``tm, tv``: the teams' prior performance means and variances; ``rank``: -1 = did not finish;
    ``size``: players per team (for the draw margin ``margin * sqrt(n1 + n2)``); ``order, starts,
    groups, finishers`` from :func:`canonical_order`; ``rotation, reflect``: which chain of the tied groups
    (:func:`tie_rotations`, :func:`podium.ordering.tie_turn`); ``iw, fw``: workspaces of at least 2 and 11 rows of ``len(tm)`` entries.
    ``links``: the paper's chain (a win ``d > eps``, a tie a draw factor ``|d| <= eps``); without, every
    neighbour of the chain is only ordered, ``d > 0``, a tied group's members in this rotation's order
    (:data:`ORDERED`).  ``warm``: start from the messages the last call left in ``fw`` (the same match in
    another rotation: the same fixed points, in about half the sweeps) instead of from none.

    The comparisons form a tree: the chain of finishers ``c_0, ..., c_{F-1}`` (win factors between groups,
    draw factors inside a group) and each non-finisher below the chain's last team ``L = c_{F-1}``.  On a
    chain, EP's messages are those of a forward-backward recursion (Heskes & Zoeter 2002; the paper's
    schedule, Table 1, sweeps the same way): with ``alpha_k`` the belief about ``t_{c_k}`` from its prior and
    the comparisons above it, and ``beta_k`` from its prior and those below,

        alpha_{k+1} = prior_{k+1} * down_k(alpha_k, beta_{k+1}),    beta_k = prior_k * up_k(alpha_k, beta_{k+1}),

    where ``down_k, up_k`` are comparison ``k``'s moment-matched messages (:func:`_down`, :func:`_up`) with
    the cavities ``alpha_k`` and ``beta_{k+1}``; ``beta_L`` is ``L``'s prior times the non-finishers'
    messages, each computed with the cavity of ``L`` without it.  A sweep runs the forward recursion down
    the chain with the ``beta`` of the previous sweep, then the non-finishers, then the backward recursion
    with the fresh ``alpha``; each comparison is moment-matched once per direction, computing only the
    message that direction needs (half of :func:`tilted_messages`).  The fixed point is that of EP on the
    factor graph (every comparison's messages moment-match its cavities); on a chain of eight the
    sweeps contract by about 100 each, so 4-5 sweeps reach ``tolerance = 1e-6``.  A sweep's change is the
    largest :func:`_moved` of any message relative to the belief it enters (``alpha_{k+1}``, ``beta_k``
    or ``L``'s marginal; never larger than relative to the team's marginal, so the test is at least as
    strict).  Sweeps beyond ``_UNDAMPED`` take half steps in natural parameters (same fixed points), for
    the matches whose scales differ so much (standard deviations 1e-2 and 1e3 in one free-for-all) that
    undamped EP cycles.  Returns the number of sweeps, or -1 when ``max_iterations`` sweeps did not bring
    the largest change below ``tolerance``.
    """
    n = len(tm)
    pi[:n] = 0.0
    tau[:n] = 0.0
    if finishers == 0:
        return 0
    chain, kind = iw[0], iw[1]
    eps, p0, t0 = fw[0], fw[1], fw[2]
    a_p, a_t, b_p, b_t = fw[3], fw[4], fw[5], fw[6]  # alpha_k, beta_k in natural parameters
    d_p, d_t, u_p, u_t = fw[7], fw[8], fw[9], fw[10]  # down_k (to c_{k+1}), up_k (to c_k); u at k >= F: to L
    for g in range(groups):
        a, b = starts[g], starts[g + 1]
        for k in range(a, b):
            chain[k] = order[a + tie_member(k - a, b - a, rotation, reflect)]
    for k in range(finishers, n):
        chain[k] = order[k]
    last = finishers - 1
    star_p = 0.0  # the non-finishers' messages to L, summed
    star_t = 0.0
    for k in range(n):
        t = chain[k]
        p0[k] = 1.0 / tv[t]
        t0[k] = tm[t] / tv[t]
        if not warm:
            d_p[k] = d_t[k] = u_p[k] = u_t[k] = 0.0
        elif k >= finishers:
            star_p += u_p[k]
            star_t += u_t[k]
    for k in range(n):  # alpha_k: the prior and the message from above; beta_k: from below
        a_p[k] = p0[k] + (d_p[k - 1] if 0 < k <= last else 0.0)
        a_t[k] = t0[k] + (d_t[k - 1] if 0 < k <= last else 0.0)
        b_p[k] = p0[k] + (u_p[k] if k < last else star_p if k == last else 0.0)
        b_t[k] = t0[k] + (u_t[k] if k < last else star_t if k == last else 0.0)
    for c in range(last):
        if links:
            kind[c] = DRAW if rank[chain[c]] == rank[chain[c + 1]] else WIN
            eps[c] = margin * math.sqrt(size[chain[c]] + size[chain[c + 1]])
        else:
            kind[c] = WIN
            eps[c] = 0.0
    sweeps = -1
    step = 1.0
    for sweep in range(max_iterations):
        if sweep == _UNDAMPED:
            step = 0.5
        delta = 0.0
        for c in range(last):  # forward: alpha_{c+1} from alpha_c and the last beta_{c+1}
            va = 1.0 / a_p[c]
            vb = 1.0 / b_p[c + 1]
            mp, mt = _damped(_down(kind[c], eps[c], a_t[c] * va, va, b_t[c + 1] * vb, vb), d_p[c], d_t[c], step)
            p = p0[c + 1] + mp
            t = t0[c + 1] + mt
            # measured on the team's marginal (the message from below included), as the old schedule was
            delta = max(delta, _moved(mp - d_p[c], mt - d_t[c], p + b_p[c + 1] - p0[c + 1], t + b_t[c + 1] - t0[c + 1]))
            d_p[c], d_t[c], a_p[c + 1], a_t[c + 1] = mp, mt, p, t
        if n > finishers:  # non-finishers: I(t_L - t_u > 0), with L's cavity without that comparison
            for k in range(finishers, n):
                cp = a_p[last] + star_p - u_p[k]
                ct = a_t[last] + star_t - u_t[k]
                va = 1.0 / cp
                vb = 1.0 / p0[k]
                mp, mt = _damped(_up(BELOW, 0.0, ct * va, va, t0[k] * vb, vb), u_p[k], u_t[k], step)
                delta = max(delta, _moved(mp - u_p[k], mt - u_t[k], cp + mp, ct + mt))
                star_p += mp - u_p[k]
                star_t += mt - u_t[k]
                u_p[k], u_t[k] = mp, mt
            b_p[last] = p0[last] + star_p
            b_t[last] = t0[last] + star_t
        for c in range(last - 1, -1, -1):  # backward: beta_c from the fresh alpha_c and beta_{c+1}
            va = 1.0 / a_p[c]
            vb = 1.0 / b_p[c + 1]
            mp, mt = _damped(_up(kind[c], eps[c], a_t[c] * va, va, b_t[c + 1] * vb, vb), u_p[c], u_t[c], step)
            p = p0[c] + mp
            t = t0[c] + mt
            delta = max(delta, _moved(mp - u_p[c], mt - u_t[c], p + a_p[c] - p0[c], t + a_t[c] - t0[c]))
            u_p[c], u_t[c], b_p[c], b_t[c] = mp, mt, p, t
        if delta < tolerance or n == 2:  # a single comparison is exact in one step
            sweeps = sweep + 1
            break
    # Each team's total message: from the comparison above it and from those below it.
    for k in range(finishers):
        p = 0.0
        t = 0.0
        if k > 0:
            p += d_p[k - 1]
            t += d_t[k - 1]
        if k < last:
            p += u_p[k]
            t += u_t[k]
        pi[chain[k]] = p
        tau[chain[k]] = t
    pi[chain[last]] += star_p
    tau[chain[last]] += star_t
    for k in range(finishers, n):
        cp = a_p[last] + star_p - u_p[k]
        va = 1.0 / cp
        vb = 1.0 / p0[k]
        pi[chain[k]], tau[chain[k]] = _down(BELOW, 0.0, (a_t[last] + star_t - u_t[k]) * va, va, t0[k] * vb, vb)
    return sweeps


@jit
def team_log_outcome(tm: NDArray[np.float64], tv: NDArray[np.float64], rank: NDArray[np.int64],
                     size: NDArray[np.float64], margin: float, update: int = ORDERED) -> float:
    """``log P(outcome)`` under independent team performances ``N(tm, tv)`` with the draw margin.

    Two teams, whatever ``update``: the paper's closed forms, a win ``d > eps``, a draw ``|d| <= eps``, and a
    non-finisher beaten as by a loss (``d > eps``: not finishing is never better than losing).  Three or more
    teams, by ``update``: :data:`CHAIN`, the paper's model (a win is a difference beyond the margin);
    :data:`ORDERED`, places only ordered and a tied group the geometric mean over its orders
    (:func:`podium.ordering.log_outcome` without a margin, as :class:`podium.Thurstone`); :data:`EXACT`, places
    ordered and a tied group within the margin below its best (:func:`podium.ordering.moment_chain.order_moments`; NaN
    where its self-check failed)."""
    n = len(tm)
    if n == 2:
        r0, r1 = rank[0], rank[1]
        if r0 < 0 and r1 < 0:
            return 0.0
        sd = math.sqrt(tv[0] + tv[1])
        d = (tm[0] - tm[1]) / sd
        e = margin * math.sqrt(size[0] + size[1]) / sd
        if r0 == r1:
            return log_ndtr_diff(e - d, -e - d)
        return log_ndtr(d - e if (r1 < 0 or (r0 >= 0 and r0 < r1)) else -d - e)
    grad = np.empty(0)
    if update == ORDERED:
        return log_outcome(tm, np.sqrt(tv), GAUSSIAN, 0.0, rank, size, 0.0, False, grad, grad, 1.0)
    if margin == 0.0:  # without a margin a draw has probability 0 in these models
        for i in range(n):
            for j in range(i + 1, n):
                if rank[i] >= 0 and rank[i] == rank[j]:
                    return -np.inf
    if update == EXACT:
        tied = False
        for i in range(n):
            for j in range(i + 1, n):
                tied = tied or (rank[i] >= 0 and rank[i] == rank[j])
        if tied:
            pm = np.empty(n)
            pv = np.empty(n)
            lp, ok = order_moments(tm, np.sqrt(tv), rank, size, margin, False, pm, pv)
            return lp if ok else np.nan
        return log_outcome(tm, np.sqrt(tv), GAUSSIAN, 0.0, rank, size, 0.0, False, grad, grad, 1.0)
    return log_outcome(tm, np.sqrt(tv), GAUSSIAN, 0.0, rank, size, margin, False, grad, grad, 1.0)
