"""TrueSkill Through Time's compiled sweeps (Dangauthier et al. 2007): the history's skill variables, the first
pass read off TrueSkill's online replay, the backward and forward sweeps over batches with each match re-rated
from its players' cavities, the extrapolation of a geometric tail, and leave-one-out evidence (the model and
its messages are described in :mod:`podium.models.through_time`; the level correction is
:mod:`podium.kernels.levels`).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from ..ordering.numerics import jit
from .common import match_slots, most_players, most_teams
from .ep import ORDERED, team_log_outcome
from .trueskill import (SIGMA_MAX, condition, match_workspace, outcome_messages, rate_teams, skill_var, team_priors,
                        two_teams)

__all__ = ["MATCH_TOLERANCE", "MATCH_ITERATIONS", "permute", "structure", "forget", "from_filter", "sweep",
           "extrapolate", "chain_messages", "leave_one_out", "first_draw", "outcome_priors"]

# Expectation propagation inside one match of three or more teams: tighter than TrueSkill's default, so that a
# match's messages are settled well below the smoother's own tolerance.
MATCH_TOLERANCE = 1e-9
MATCH_ITERATIONS = 100


# -- the history's structure --------------------------------------------------------------------------------
@jit
def permute(match_start: NDArray[np.int64], team_start: NDArray[np.int64], team_rank: NDArray[np.int64],
             player: NDArray[np.int64], weight: NDArray[np.float64], order: NDArray[np.int64]
             ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64],
                        NDArray[np.float64], NDArray[np.int64]]:
    """The matches in ``order``, as new CSR arrays, and each new team's index in the history as given (to
    reorder per-team columns: advantages, scores)."""
    n = len(order)
    ms = np.empty(n + 1, dtype=np.int64)
    ts = np.empty(len(team_start), dtype=np.int64)
    tr = np.empty(len(team_rank), dtype=np.int64)
    pl = np.empty(len(player), dtype=np.int64)
    wt = np.empty(len(weight))
    tix = np.empty(len(team_rank), dtype=np.int64)
    ms[0] = 0
    ts[0] = 0
    t = 0
    p = 0
    for j in range(n):
        m = order[j]
        for u in range(match_start[m], match_start[m + 1]):
            tr[t] = team_rank[u]
            tix[t] = u
            for q in range(team_start[u], team_start[u + 1]):
                pl[p] = player[q]
                wt[p] = weight[q]
                p += 1
            t += 1
            ts[t] = p
        ms[j + 1] = t
    return ms, ts, tr, pl, wt, tix


@jit
def structure(match_start: NDArray[np.int64], team_start: NDArray[np.int64], player: NDArray[np.int64],
               time: NDArray[np.float64], n_players: int
               ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64],
                          NDArray[np.float64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Batches and skill variables of a history sorted by time.

    A batch is a run of matches with equal ``time``; a skill variable is one player in one batch.  Returns
    ``slot_sv`` (each player slot's skill variable), ``sv_player``, ``sv_prev``, ``sv_next`` (the same player's
    skill variable in their previous / next batch, -1 if none), ``sv_time``, ``batch_start`` (first match of
    each batch, and the number of matches), ``sv_batch_start`` (first skill variable of each batch) and
    ``sv_match`` (the first match of each skill variable).  Skill variables are numbered batch by batch.
    """
    n_m = len(match_start) - 1
    n_slots = len(player)
    slot_sv = np.empty(n_slots, dtype=np.int64)
    sv_player = np.empty(n_slots, dtype=np.int64)
    sv_prev = np.empty(n_slots, dtype=np.int64)
    sv_time = np.empty(n_slots)
    sv_match = np.empty(n_slots, dtype=np.int64)
    last_sv = np.full(n_players, -1, dtype=np.int64)
    last_batch = np.full(n_players, -1, dtype=np.int64)
    batch_start = np.empty(n_m + 1, dtype=np.int64)
    sv_batch_start = np.empty(n_m + 1, dtype=np.int64)
    b = 0
    k = 0
    for m in range(n_m):
        if m == 0 or time[m] != time[m - 1]:
            batch_start[b] = m
            sv_batch_start[b] = k
            b += 1
        for p in range(team_start[match_start[m]], team_start[match_start[m + 1]]):
            i = player[p]
            if last_batch[i] != b - 1:
                sv_player[k] = i
                sv_prev[k] = last_sv[i]
                sv_time[k] = time[m]
                sv_match[k] = m
                last_sv[i] = k
                last_batch[i] = b - 1
                k += 1
            slot_sv[p] = last_sv[i]
    batch_start[b] = n_m
    sv_batch_start[b] = k
    sv_next = np.full(k, -1, dtype=np.int64)
    for j in range(k):
        if sv_prev[j] >= 0:
            sv_next[sv_prev[j]] = j
    return (slot_sv, sv_player[:k].copy(), sv_prev[:k].copy(), sv_next, sv_time[:k].copy(),
            batch_start[:b + 1].copy(), sv_batch_start[:b + 1].copy(), sv_match[:k].copy())


# -- Gaussian messages in natural parameters ----------------------------------------------------------------
@jit
def forget(p: float, t: float, q: float) -> tuple[float, float]:
    """A message ``(pi, tau)`` widened by the random walk's variance ``q`` (uninformative stays uninformative)."""
    if p <= 0.0 or q <= 0.0:
        return (p, t) if p > 0.0 else (0.0, 0.0)
    v = min(1.0 / p + q, SIGMA_MAX * SIGMA_MAX)
    return 1.0 / v, (t / p) / v


@jit
def _others(lik: float, msg: float, single: bool) -> float:
    """A skill's likelihood without one match's message: 0 exactly when that match is its only one (a prior of
    sigma 1e20 has precision 1e-40, far below the rounding of ``lik - msg``)."""
    return 0.0 if single else lik - msg


@jit
def _replaced(lik: float, old: float, new: float, single: bool) -> float:
    """A skill's likelihood after one match's message changes from ``old`` to ``new`` (exactly ``new`` when it is
    the skill's only match, so that :func:`_others` stays exact)."""
    return new if single else lik + (new - old)


@jit
def _cavity(fwd_p: float, fwd_t: float, bwd_p: float, bwd_t: float, lik_p: float, lik_t: float, msg_p: float,
            msg_t: float, single: bool) -> tuple[float, float]:
    """A match's cavity for one player, ``(mean, variance)``: the skill's posterior (forward, backward and
    likelihood messages) without that match's own message."""
    cp = fwd_p + bwd_p + _others(lik_p, msg_p, single)
    return (fwd_t + bwd_t + _others(lik_t, msg_t, single)) / cp, 1.0 / cp


@jit
def _divide(mean: float, var: float, cav_mean: float, cav_var: float) -> tuple[float, float]:
    """The message ``(pi, tau)`` that takes the cavity ``N(cav_mean, cav_var)`` to the belief ``N(mean, var)``
    (their quotient); its precision is at least 0, as a truncation never widens a belief (only rounding
    could make it negative)."""
    cp = 1.0 / cav_var
    return max(1.0 / var - cp, 0.0), mean / var - cav_mean * cp


@jit
def _renew(lik_p: float, lik_t: float, msg_p: float, msg_t: float, single: bool, mean: float, var: float,
           cav_mean: float, cav_var: float) -> tuple[float, float, float, float]:
    """A skill's likelihood ``(pi, tau)`` and a match's message to it, ``(lik_p', lik_t', msg_p', msg_t')``, after the
    match has moved the skill's belief from its cavity ``N(cav_mean, cav_var)`` to ``N(mean, var)``: the new
    message is their quotient (:func:`_divide`) and replaces the old one in the likelihood (:func:`_replaced`)."""
    # Scalars in and out: a helper passed the four arrays cost the sweep 5% in reference counting.
    mp, mt = _divide(mean, var, cav_mean, cav_var)
    return _replaced(lik_p, msg_p, mp, single), _replaced(lik_t, msg_t, mt, single), mp, mt


# -- the first pass: TrueSkill's online replay --------------------------------------------------------------
@jit
def outcome_priors(team_start: NDArray[np.int64], t0: int, n: int, row: NDArray[np.int64],
                   weight: NDArray[np.float64], mu: NDArray[np.float64], var: NDArray[np.float64], p0: int,
                   beta2: float, offset: NDArray[np.float64], outcome_var: float, tm: NDArray[np.float64],
                   tv: NDArray[np.float64], size: NDArray[np.float64]) -> None:
    """The teams' predictive performances of a match, as TrueSkill predicts an outcome: :func:`team_priors`,
    plus each team's advantage ``offset[t0 + t]`` (empty: none) and, when the model reads margins, half the
    margin noise's variance ``outcome_var`` (the outcome is the sign of the observed score difference)."""
    team_priors(team_start, t0, n, row, weight, mu, var, p0, beta2, 0.0, tm, tv, size)
    if len(offset) > 0:
        for t in range(n):
            tm[t] += offset[t0 + t]
    if outcome_var > 0.0:
        for t in range(n):
            tv[t] += outcome_var


@jit
def from_filter(match_start: NDArray[np.int64], team_start: NDArray[np.int64], team_rank: NDArray[np.int64],
                 player: NDArray[np.int64], weight: NDArray[np.float64], time: NDArray[np.float64],
                 slot_sv: NDArray[np.int64], hist_mu: NDArray[np.float64], hist_sigma: NDArray[np.float64],
                 n_players: int, mu0: float, sigma0: float, gamma2: float, beta2: float, margin: float,
                 fwd_p: NDArray[np.float64], fwd_t: NDArray[np.float64], lik_p: NDArray[np.float64],
                 lik_t: NDArray[np.float64], msg_p: NDArray[np.float64], msg_t: NDArray[np.float64],
                 loglik: NDArray[np.float64], offset: NDArray[np.float64], outcome_var: float) -> None:
    """The messages of an online TrueSkill replay (``hist_mu, hist_sigma``: every slot's rating after its match).

    Each slot's cavity is the rating the replay brought to it (the prior, the rating after the same player's
    previous match, widened by :func:`skill_var` across batches, exactly as the replay did); its message is
    the rating after the match divided by that cavity; ``loglik[m]`` is ``log P(outcome)`` under the cavities
    (:func:`outcome_priors`: with the teams' advantages ``offset``, empty for none, and the margin noise's
    ``outcome_var``).
    """
    last_slot = np.full(n_players, -1, dtype=np.int64)
    last_time = np.full(n_players, np.nan)
    width = most_teams(match_start)
    tm, tv, size = np.empty(width), np.empty(width), np.empty(width)
    cav_mu = np.empty(len(player))
    cav_var = np.empty(most_players(match_start, team_start))
    ident = np.arange(len(player))
    lik_p[:] = 0.0
    lik_t[:] = 0.0
    for m in range(len(match_start) - 1):
        t0, n, p0, p1 = match_slots(match_start, team_start, m)
        for p in range(p0, p1):
            i = player[p]
            q = last_slot[i]
            k = slot_sv[p]
            if q < 0:
                cm, cv = mu0, skill_var(sigma0, 0.0, gamma2, time[m], last_time[i])
            else:
                cm, cv = hist_mu[q], skill_var(hist_sigma[q], 0.0, gamma2, time[m], last_time[i])
            if q < 0 or slot_sv[q] != k:
                fwd_p[k] = 1.0 / cv
                fwd_t[k] = cm / cv
            cav_mu[p] = cm
            cav_var[p - p0] = cv
        outcome_priors(team_start, t0, n, ident, weight, cav_mu, cav_var, p0, beta2, offset, outcome_var, tm, tv,
                       size)
        loglik[m] = team_log_outcome(tm[:n], tv[:n], team_rank[t0:t0 + n], size[:n], margin, ORDERED)
        for p in range(p0, p1):
            i = player[p]
            k = slot_sv[p]
            mp, mt = _divide(hist_mu[p], hist_sigma[p] ** 2, cav_mu[p], cav_var[p - p0])
            msg_p[p] = mp
            msg_t[p] = mt
            lik_p[k] += mp
            lik_t[k] += mt
            last_slot[i] = p
            last_time[i] = time[m]


# -- smoothing sweeps ---------------------------------------------------------------------------------------
@jit
def _update_match(m: int, match_start: NDArray[np.int64], team_start: NDArray[np.int64],
                  team_rank: NDArray[np.int64], weight: NDArray[np.float64], slot_sv: NDArray[np.int64],
                  single: NDArray[np.bool_], fwd_p: NDArray[np.float64], fwd_t: NDArray[np.float64],
                  bwd_p: NDArray[np.float64], bwd_t: NDArray[np.float64], lik_p: NDArray[np.float64],
                  lik_t: NDArray[np.float64],
                  msg_p: NDArray[np.float64], msg_t: NDArray[np.float64], beta2: float, margin: float,
                  ident: NDArray[np.int64], cav_mu: NDArray[np.float64], cav_var: NDArray[np.float64],
                  tm: NDArray[np.float64], tv: NDArray[np.float64], size: NDArray[np.float64],
                  pi: NDArray[np.float64], tau_msg: NDArray[np.float64], order: NDArray[np.int64],
                  starts: NDArray[np.int64], iw: NDArray[np.int64], fw: NDArray[np.float64],
                  new_mu: NDArray[np.float64], new_var: NDArray[np.float64], offset: NDArray[np.float64],
                  match_weight: NDArray[np.float64], score: NDArray[np.float64], margin_scale: float,
                  noise2: float) -> int:
    """Re-rate match ``m`` (three or more teams; :func:`sweep` rates two itself) from its players' cavities and
    replace its messages; return how many EP runs missed their tolerance.  ``offset``, ``match_weight`` and
    ``score`` (each empty: none) are :func:`~podium.kernels.trueskill.replay_trueskill`'s."""
    t0, n, p0, p1 = match_slots(match_start, team_start, m)
    for p in range(p0, p1):
        k = slot_sv[p]
        cav_mu[p], cav_var[p - p0] = _cavity(fwd_p[k], fwd_t[k], bwd_p[k], bwd_t[k], lik_p[k], lik_t[k], msg_p[p],
                                             msg_t[p], single[k])
    # (taken before the call: numba cannot compile conditional expressions among many arguments)
    offsets = offset[t0:t0 + n] if len(offset) > 0 else offset
    evidence = match_weight[m] if len(match_weight) > 0 else 1.0
    scores = score[t0:t0 + n] if len(score) > 0 else score
    bad = rate_teams(team_start, t0, n, ident, weight, cav_mu, cav_var, p0, team_rank[t0:t0 + n], beta2, 0.0, margin,
                     MATCH_TOLERANCE, MATCH_ITERATIONS, tm, tv, size, pi, tau_msg, order, starts, iw, fw,
                     new_mu, new_var, ORDERED, offsets, evidence, scores, margin_scale, noise2)
    for p in range(p0, p1):
        k = slot_sv[p]
        lik_p[k], lik_t[k], msg_p[p], msg_t[p] = _renew(lik_p[k], lik_t[k], msg_p[p], msg_t[p], single[k],
                                                        cav_mu[p] + new_mu[p - p0], new_var[p - p0], cav_mu[p],
                                                        cav_var[p - p0])
    return bad


@jit
def sweep(match_start: NDArray[np.int64], team_start: NDArray[np.int64], team_rank: NDArray[np.int64],
           weight: NDArray[np.float64], slot_sv: NDArray[np.int64], single: NDArray[np.bool_],
           sv_prev: NDArray[np.int64], sv_next: NDArray[np.int64], sv_time: NDArray[np.float64],
           batch_start: NDArray[np.int64],
           sv_batch_start: NDArray[np.int64], prior_p: float, prior_t: float, gamma2: float,
           fwd_p: NDArray[np.float64], fwd_t: NDArray[np.float64], bwd_p: NDArray[np.float64],
           bwd_t: NDArray[np.float64], lik_p: NDArray[np.float64], lik_t: NDArray[np.float64],
           msg_p: NDArray[np.float64], msg_t: NDArray[np.float64], beta2: float, margin: float,
           unconverged: NDArray[np.int64], offset: NDArray[np.float64], match_weight: NDArray[np.float64],
           score: NDArray[np.float64], margin_scale: float, noise2: float) -> float:
    """One backward and one forward sweep over the batches; return the largest move of a posterior.

    What a result says beyond the order is read as :func:`~podium.kernels.trueskill.replay_trueskill` reads it
    (each empty: none): ``offset[t]``, the team's advantage added to its performance mean; ``match_weight[m]``,
    the power of the match's likelihood; ``score[t]`` (signed, NaN: none) with ``margin_scale > 0``, the scores
    as Gaussian observations of the performances (noise ``noise2`` on a difference) in place of the order.

    Backward, from the second-last batch to the first: each skill variable's backward message is renewed from
    the same player's next skill variable, then the batch's matches are re-rated.  Forward, from the second batch
    to the last: the forward messages are renewed from the previous skill variables, then the matches re-rated.
    The move is ``max(|d mu|, |d sigma|)`` of a skill variable's posterior over its batch's update (the reference
    implementation's convergence test).  A history of one batch re-rates that batch once.
    """
    n_batches = len(batch_start) - 1
    players = most_players(match_start, team_start)
    tm, tv, size, pi, tau_msg, order, starts, iw, fw, new_mu, new_var = match_workspace(most_teams(match_start),
                                                                                        players)
    ident = np.arange(len(slot_sv))
    cav_mu = np.empty(len(slot_sv))
    cav_var = np.empty(players)
    most = 0
    for b in range(n_batches):
        most = max(most, sv_batch_start[b + 1] - sv_batch_start[b])
    old_mu = np.empty(most)
    old_sd = np.empty(most)
    has_offset = len(offset) > 0
    has_weight = len(match_weight) > 0
    has_score = len(score) > 0 and margin_scale > 0.0
    step = 0.0
    for half in range(2):
        if n_batches == 1:
            if half == 1:
                break
            first, last, inc = 0, 1, 1
        elif half == 0:
            first, last, inc = n_batches - 2, -1, -1
        else:
            first, last, inc = 1, n_batches, 1
        for b in range(first, last, inc):
            k0, k1 = sv_batch_start[b], sv_batch_start[b + 1]
            for k in range(k0, k1):
                p = fwd_p[k] + bwd_p[k] + lik_p[k]
                old_mu[k - k0] = (fwd_t[k] + bwd_t[k] + lik_t[k]) / p
                old_sd[k - k0] = 1.0 / math.sqrt(p)
                if n_batches == 1:
                    continue
                if half == 0:
                    j = sv_next[k]
                    if j >= 0:
                        bwd_p[k], bwd_t[k] = forget(lik_p[j] + bwd_p[j], lik_t[j] + bwd_t[j],
                                                     gamma2 * (sv_time[j] - sv_time[k]))
                    else:
                        bwd_p[k] = bwd_t[k] = 0.0
                else:
                    j = sv_prev[k]
                    if j >= 0:
                        fwd_p[k], fwd_t[k] = forget(fwd_p[j] + lik_p[j], fwd_t[j] + lik_t[j],
                                                     gamma2 * (sv_time[k] - sv_time[j]))
                    else:
                        fwd_p[k], fwd_t[k] = prior_p, prior_t
            for m in range(batch_start[b], batch_start[b + 1]):
                t0 = match_start[m]
                if match_start[m + 1] - t0 == 2:
                    # Two teams: the operations of rate_teams for two teams (team sums in the same order,
                    # two_teams, outcome_messages, condition), so the same numbers, written in this loop: a call
                    # passing rate_teams its twenty arrays cost ten times a duel's arithmetic.
                    q0, mid, q1 = team_start[t0], team_start[t0 + 1], team_start[t0 + 2]
                    tm0 = tv0 = tm1 = tv1 = 0.0
                    for q in range(q0, q1):
                        kk = slot_sv[q]
                        mq, vq = _cavity(fwd_p[kk], fwd_t[kk], bwd_p[kk], bwd_t[kk], lik_p[kk], lik_t[kk], msg_p[q],
                                         msg_t[q], single[kk])
                        cav_mu[q] = mq
                        cav_var[q - q0] = vq
                        wq = weight[q]
                        if q < mid:
                            tm0 += wq * mq
                            tv0 += wq * wq * (vq + beta2)
                        else:
                            tm1 += wq * mq
                            tv1 += wq * wq * (vq + beta2)
                    if has_offset:
                        tm0 += offset[t0]
                        tm1 += offset[t0 + 1]
                    y0 = score[t0] if has_score else math.nan
                    y1 = score[t0 + 1] if has_score else math.nan
                    pi0 = ta0 = pi1 = ta1 = 0.0
                    win, kind, eps = two_teams(team_rank[t0], team_rank[t0 + 1], margin, float(q1 - q0))
                    if win == 0:
                        pi0, ta0, pi1, ta1 = outcome_messages(kind, eps, tm0, tv0, tm1, tv1, y0, y1, margin_scale,
                                                              noise2)
                    elif win == 1:
                        pi1, ta1, pi0, ta0 = outcome_messages(kind, eps, tm1, tv1, tm0, tv0, y1, y0, margin_scale,
                                                              noise2)
                    if has_weight:
                        e = match_weight[m]
                        pi0, ta0, pi1, ta1 = pi0 * e, ta0 * e, pi1 * e, ta1 * e
                    for q in range(q0, q1):
                        kk = slot_sv[q]
                        vq = cav_var[q - q0]
                        mq = cav_mu[q]
                        if q < mid:
                            dm, nv = condition(pi0, ta0, tm0, tv0, weight[q], vq)
                        else:
                            dm, nv = condition(pi1, ta1, tm1, tv1, weight[q], vq)
                        lik_p[kk], lik_t[kk], msg_p[q], msg_t[q] = _renew(lik_p[kk], lik_t[kk], msg_p[q], msg_t[q],
                                                                          single[kk], mq + dm, nv, mq, vq)
                    continue
                unconverged[0] += _update_match(m, match_start, team_start, team_rank, weight, slot_sv, single,
                                                fwd_p, fwd_t, bwd_p, bwd_t, lik_p, lik_t, msg_p, msg_t, beta2,
                                                margin, ident, cav_mu, cav_var, tm, tv, size, pi, tau_msg, order,
                                                starts, iw, fw, new_mu, new_var, offset, match_weight, score,
                                                margin_scale, noise2)
            for k in range(k0, k1):
                p = fwd_p[k] + bwd_p[k] + lik_p[k]
                moved = max(abs((fwd_t[k] + bwd_t[k] + lik_t[k]) / p - old_mu[k - k0]),
                            abs(1.0 / math.sqrt(p) - old_sd[k - k0]))
                if not moved <= step:  # a NaN too (max would drop it)
                    step = moved
                    if moved != moved:
                        return moved
    return step


@jit
def extrapolate(slot_sv: NDArray[np.int64], omega: float, prev_p: NDArray[np.float64],
                 prev_t: NDArray[np.float64], msg_p: NDArray[np.float64], msg_t: NDArray[np.float64],
                 lik_p: NDArray[np.float64], lik_t: NDArray[np.float64]) -> None:
    """Step every match's messages ``omega`` times their last sweep's change further (``prev`` -> ``msg``),
    keep precisions non-negative, and sum them again into each skill's likelihood."""
    lik_p[:] = 0.0
    lik_t[:] = 0.0
    for p in range(len(slot_sv)):
        mp = max(msg_p[p] + omega * (msg_p[p] - prev_p[p]), 0.0)
        mt = msg_t[p] + omega * (msg_t[p] - prev_t[p])
        msg_p[p] = mp
        msg_t[p] = mt
        k = slot_sv[p]
        lik_p[k] += mp
        lik_t[k] += mt


@jit
def chain_messages(sv_prev: NDArray[np.int64], sv_next: NDArray[np.int64], sv_time: NDArray[np.float64],
                    prior_p: float, prior_t: float, gamma2: float, fwd_p: NDArray[np.float64],
                    fwd_t: NDArray[np.float64], bwd_p: NDArray[np.float64], bwd_t: NDArray[np.float64],
                    lik_p: NDArray[np.float64], lik_t: NDArray[np.float64]) -> None:
    """Every skill variable's forward and backward messages from the likelihoods as they stand (the exact
    Gaussian chain: skill variables are numbered in time order, so one pass each way)."""
    for k in range(len(sv_prev)):
        j = sv_prev[k]
        if j < 0:
            fwd_p[k], fwd_t[k] = prior_p, prior_t
        else:
            fwd_p[k], fwd_t[k] = forget(fwd_p[j] + lik_p[j], fwd_t[j] + lik_t[j],
                                         gamma2 * (sv_time[k] - sv_time[j]))
    for k in range(len(sv_prev) - 1, -1, -1):
        j = sv_next[k]
        if j < 0:
            bwd_p[k] = bwd_t[k] = 0.0
        else:
            bwd_p[k], bwd_t[k] = forget(lik_p[j] + bwd_p[j], lik_t[j] + bwd_t[j],
                                         gamma2 * (sv_time[j] - sv_time[k]))


# -- leave-one-out predictions -----------------------------------------------------------------------------
@jit
def leave_one_out(match_start: NDArray[np.int64], team_start: NDArray[np.int64], team_rank: NDArray[np.int64],
                   weight: NDArray[np.float64], slot_sv: NDArray[np.int64], single: NDArray[np.bool_],
                   fwd_p: NDArray[np.float64], fwd_t: NDArray[np.float64], bwd_p: NDArray[np.float64],
                   bwd_t: NDArray[np.float64], lik_p: NDArray[np.float64], lik_t: NDArray[np.float64],
                   msg_p: NDArray[np.float64], msg_t: NDArray[np.float64], beta2: float, margin: float,
                   out: NDArray[np.float64], offset: NDArray[np.float64], outcome_var: float) -> None:
    """``out[m] = log P(outcome_m)`` under match ``m``'s cavities: its players' posteriors without that match
    (EP's leave-one-out predictive; Opper & Winther 2000), predicted as :func:`outcome_priors` does."""
    width = most_teams(match_start)
    tm, tv, size = np.empty(width), np.empty(width), np.empty(width)
    cav_mu = np.empty(len(slot_sv))
    cav_var = np.empty(most_players(match_start, team_start))
    ident = np.arange(len(slot_sv))
    for m in range(len(match_start) - 1):
        t0, n, p0, p1 = match_slots(match_start, team_start, m)
        for p in range(p0, p1):
            k = slot_sv[p]
            cav_mu[p], cav_var[p - p0] = _cavity(fwd_p[k], fwd_t[k], bwd_p[k], bwd_t[k], lik_p[k], lik_t[k],
                                                 msg_p[p], msg_t[p], single[k])
        outcome_priors(team_start, t0, n, ident, weight, cav_mu, cav_var, p0, beta2, offset, outcome_var, tm, tv,
                       size)
        out[m] = team_log_outcome(tm[:n], tv[:n], team_rank[t0:t0 + n], size[:n], margin, ORDERED)


@jit
def first_draw(match_start: NDArray[np.int64], team_rank: NDArray[np.int64]) -> int:
    """The first match in which two finishers share a rank (-1 if none)."""
    for m in range(len(match_start) - 1):
        for i in range(match_start[m], match_start[m + 1]):
            if team_rank[i] < 0:
                continue
            for j in range(i + 1, match_start[m + 1]):
                if team_rank[j] == team_rank[i]:
                    return m
    return -1
