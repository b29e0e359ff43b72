"""TrueSkill Through Time: whole-history smoothing of TrueSkill (Dangauthier, Herbrich, Minka & Graepel 2007;
Landfried & Mocskos 2021-2025).

Every podium filter rates a match from the games before it.  TrueSkill Through Time treats the whole history as
one factor graph and lets every game inform every estimate, earlier and later:

* each player has one skill variable per *batch* (the matches played at one ``time``);
* between a player's consecutive batches the skill follows a Gaussian random walk,
  ``s_k ~ N(s_{k-1}, gamma^2 (t_k - t_{k-1}))``; a new player's first skill is ``N(mu, sigma^2)``;
* each match is TrueSkill's factor graph (:func:`podium.models.trueskill.rate_teams`: teams, partial play,
  draws by margin, any number of teams, non-finishers censored below the finishers).

Inference is expectation propagation.  Each skill variable ``k`` holds three Gaussian messages in natural
parameters (precision ``pi``, precision-adjusted mean ``tau``): ``forward`` from its past (the prior, or the
previous posterior without its backward message, widened by ``gamma^2`` times the elapsed time), ``backward``
from its future (the next skill's likelihood and backward message, widened the same way), and ``likelihood``,
the product of its matches' messages.  A match is updated from its players' *cavities* (posterior divided by
that match's own message); its new messages replace the old.  The schedule is the reference implementation's:
a first forward pass (which is exactly :class:`podium.TrueSkill`'s online replay with ``tau = 0`` and
``drift = gamma``, run by the same kernel), then backward and forward sweeps over the batches, each batch's
matches updated once per visit, until no posterior mean or standard deviation moves by ``tolerance``.

Evidence (:attr:`Smoothed.log_evidence`) is ``log P(all outcomes)`` by the chain rule,
``sum_m log P(outcome_m | matches before m)``, each factor the probability of the outcome under the players'
beliefs from the first pass (the reference package's ``log_evidence()`` before ``convergence()``).  It is the
model's marginal likelihood (estimated: each belief is projected on a Gaussian, as TrueSkill does), which
smoothing does not change (it refines the skills, not the probability of the data); it is what a filter's
summed log-likelihood is, so the two compare per match (TrueSkill's own log-likelihood leaves out the dynamics
of the coming update, so it is lower than this first pass's at the same parameters whenever ``gamma > 0``).
EP's fixed point offers another estimate (Minka 2001), but with beliefs factorized over players it drops the
correlation between opponents' skills: on small histories integrated exactly it was further from the truth
than the chain rule in 11 of 12 cases (docs/design.md), so podium does not report it.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..match import Match, Matches
from ..numerics import jit, tilted_messages
from ..rating import Rating
from .base import Hyperparameters, most_players, most_teams
from .trueskill import (SIGMA_MAX, ConvergenceWarning, TrueSkill, _log_outcome, _skill_var, _team_priors,
                        condition, match_workspace, rate_teams, replay_trueskill, two_teams)

__all__ = ["TrueSkillThroughTime", "Smoothed"]

# Expectation propagation inside one match of three or more teams: tighter than TrueSkill's default, so that a
# match's messages are settled well below the smoother's own tolerance.
MATCH_TOLERANCE = 1e-9
MATCH_ITERATIONS = 100
# Knots of the level correction (see :meth:`TrueSkillThroughTime._level`): at most this many batch times.
LEVEL_KNOTS = 256
# The largest prior standard deviation (see TrueSkillThroughTime.__init__).
SIGMA_MAX_SMOOTH = 1e100


# -- the history's structure --------------------------------------------------------------------------------
@jit
def _permute(match_start: NDArray[np.int64], team_start: NDArray[np.int64], team_rank: NDArray[np.int64],
             player: NDArray[np.int64], weight: NDArray[np.float64], order: NDArray[np.int64]
             ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64],
                        NDArray[np.float64]]:
    """The matches in ``order``, as new CSR arrays."""
    n = len(order)
    ms = np.empty(n + 1, dtype=np.int64)
    ts = np.empty(len(team_start), dtype=np.int64)
    tr = np.empty(len(team_rank), dtype=np.int64)
    pl = np.empty(len(player), dtype=np.int64)
    wt = np.empty(len(weight))
    ms[0] = 0
    ts[0] = 0
    t = 0
    p = 0
    for j in range(n):
        m = order[j]
        for u in range(match_start[m], match_start[m + 1]):
            tr[t] = team_rank[u]
            for q in range(team_start[u], team_start[u + 1]):
                pl[p] = player[q]
                wt[p] = weight[q]
                p += 1
            t += 1
            ts[t] = p
        ms[j + 1] = t
    return ms, ts, tr, pl, wt


@jit
def _structure(match_start: NDArray[np.int64], team_start: NDArray[np.int64], player: NDArray[np.int64],
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
def _forget(p: float, t: float, q: float) -> tuple[float, float]:
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


# -- the first pass: TrueSkill's online replay --------------------------------------------------------------
@jit
def _from_filter(match_start: NDArray[np.int64], team_start: NDArray[np.int64], team_rank: NDArray[np.int64],
                 player: NDArray[np.int64], weight: NDArray[np.float64], time: NDArray[np.float64],
                 slot_sv: NDArray[np.int64], hist_mu: NDArray[np.float64], hist_sigma: NDArray[np.float64],
                 n_players: int, mu0: float, sigma0: float, gamma2: float, beta2: float, margin: float,
                 fwd_p: NDArray[np.float64], fwd_t: NDArray[np.float64], lik_p: NDArray[np.float64],
                 lik_t: NDArray[np.float64], msg_p: NDArray[np.float64], msg_t: NDArray[np.float64],
                 loglik: NDArray[np.float64]) -> None:
    """The messages of an online TrueSkill replay (``hist_mu, hist_sigma``: every slot's rating after its match).

    Each slot's cavity is the rating the replay brought to it (the prior, the rating after the same player's
    previous match, widened by :func:`_skill_var` across batches, exactly as the replay did); its message is
    the rating after the match divided by that cavity; ``loglik[m]`` is ``log P(outcome)`` under the cavities.
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
        t0 = match_start[m]
        n = match_start[m + 1] - t0
        p0 = team_start[t0]
        p1 = team_start[t0 + n]
        for p in range(p0, p1):
            i = player[p]
            q = last_slot[i]
            k = slot_sv[p]
            if q < 0:
                cm, cv = mu0, _skill_var(sigma0, 0.0, gamma2, time[m], last_time[i])
            else:
                cm, cv = hist_mu[q], _skill_var(hist_sigma[q], 0.0, gamma2, time[m], last_time[i])
            if q < 0 or slot_sv[q] != k:
                fwd_p[k] = 1.0 / cv
                fwd_t[k] = cm / cv
            cav_mu[p] = cm
            cav_var[p - p0] = cv
        _team_priors(team_start, t0, n, ident, weight, cav_mu, cav_var, p0, beta2, 0.0, tm, tv, size)
        loglik[m] = _log_outcome(tm[:n], tv[:n], team_rank[t0:t0 + n], size[:n], margin)
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
                  new_mu: NDArray[np.float64], new_var: NDArray[np.float64]) -> int:
    """Re-rate match ``m`` (three or more teams; :func:`_sweep` rates two itself) from its players' cavities and
    replace its messages; return how many EP runs missed their tolerance."""
    t0 = match_start[m]
    n = match_start[m + 1] - t0
    p0 = team_start[t0]
    p1 = team_start[t0 + n]
    for p in range(p0, p1):
        k = slot_sv[p]
        cav_mu[p], cav_var[p - p0] = _cavity(fwd_p[k], fwd_t[k], bwd_p[k], bwd_t[k], lik_p[k], lik_t[k], msg_p[p],
                                             msg_t[p], single[k])
    bad = rate_teams(team_start, t0, n, ident, weight, cav_mu, cav_var, p0, team_rank[t0:t0 + n], beta2, 0.0, margin,
                     MATCH_TOLERANCE, MATCH_ITERATIONS, tm, tv, size, pi, tau_msg, order, starts, iw, fw,
                     new_mu, new_var)
    for p in range(p0, p1):
        k = slot_sv[p]
        mp, mt = _divide(cav_mu[p] + new_mu[p - p0], new_var[p - p0], cav_mu[p], cav_var[p - p0])
        lik_p[k] = _replaced(lik_p[k], msg_p[p], mp, single[k])
        lik_t[k] = _replaced(lik_t[k], msg_t[p], mt, single[k])
        msg_p[p] = mp
        msg_t[p] = mt
    return bad


@jit
def _sweep(match_start: NDArray[np.int64], team_start: NDArray[np.int64], team_rank: NDArray[np.int64],
           weight: NDArray[np.float64], slot_sv: NDArray[np.int64], single: NDArray[np.bool_],
           sv_prev: NDArray[np.int64], sv_next: NDArray[np.int64], sv_time: NDArray[np.float64],
           batch_start: NDArray[np.int64],
           sv_batch_start: NDArray[np.int64], prior_p: float, prior_t: float, gamma2: float,
           fwd_p: NDArray[np.float64], fwd_t: NDArray[np.float64], bwd_p: NDArray[np.float64],
           bwd_t: NDArray[np.float64], lik_p: NDArray[np.float64], lik_t: NDArray[np.float64],
           msg_p: NDArray[np.float64], msg_t: NDArray[np.float64], beta2: float, margin: float,
           unconverged: NDArray[np.int64]) -> float:
    """One backward and one forward sweep over the batches; return the largest move of a posterior.

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
                        bwd_p[k], bwd_t[k] = _forget(lik_p[j] + bwd_p[j], lik_t[j] + bwd_t[j],
                                                     gamma2 * (sv_time[j] - sv_time[k]))
                    else:
                        bwd_p[k] = bwd_t[k] = 0.0
                else:
                    j = sv_prev[k]
                    if j >= 0:
                        fwd_p[k], fwd_t[k] = _forget(fwd_p[j] + lik_p[j], fwd_t[j] + lik_t[j],
                                                     gamma2 * (sv_time[k] - sv_time[j]))
                    else:
                        fwd_p[k], fwd_t[k] = prior_p, prior_t
            for m in range(batch_start[b], batch_start[b + 1]):
                t0 = match_start[m]
                if match_start[m + 1] - t0 == 2:
                    # Two teams: the operations of rate_teams for two teams (team sums in the same order,
                    # two_teams, tilted_messages, condition), so the same numbers, written in this loop: a call
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
                    pi0 = ta0 = pi1 = ta1 = 0.0
                    win, kind, eps = two_teams(team_rank[t0], team_rank[t0 + 1], margin, float(q1 - q0))
                    if win == 0:
                        pi0, ta0, pi1, ta1 = tilted_messages(kind, eps, tm0, tv0, tm1, tv1)
                    elif win == 1:
                        pi1, ta1, pi0, ta0 = tilted_messages(kind, eps, tm1, tv1, tm0, tv0)
                    for q in range(q0, q1):
                        kk = slot_sv[q]
                        vq = cav_var[q - q0]
                        mq = cav_mu[q]
                        if q < mid:
                            dm, nv = condition(pi0, ta0, tm0, tv0, weight[q], vq)
                        else:
                            dm, nv = condition(pi1, ta1, tm1, tv1, weight[q], vq)
                        mp, mt = _divide(mq + dm, nv, mq, vq)
                        lik_p[kk] = _replaced(lik_p[kk], msg_p[q], mp, single[kk])
                        lik_t[kk] = _replaced(lik_t[kk], msg_t[q], mt, single[kk])
                        msg_p[q] = mp
                        msg_t[q] = mt
                    continue
                unconverged[0] += _update_match(m, match_start, team_start, team_rank, weight, slot_sv, single,
                                                fwd_p, fwd_t, bwd_p, bwd_t, lik_p, lik_t, msg_p, msg_t, beta2,
                                                margin, ident, cav_mu, cav_var, tm, tv, size, pi, tau_msg, order,
                                                starts, iw, fw, new_mu, new_var)
            for k in range(k0, k1):
                p = fwd_p[k] + bwd_p[k] + lik_p[k]
                moved = max(abs((fwd_t[k] + bwd_t[k] + lik_t[k]) / p - old_mu[k - k0]),
                            abs(1.0 / math.sqrt(p) - old_sd[k - k0]))
                if not moved <= step:  # a NaN too (max would drop it)
                    step = moved
                    if moved != moved:
                        return moved
    return step


# -- the level of the field ----------------------------------------------------------------------------------
@jit
def _basis(t: float, knots: NDArray[np.float64]) -> tuple[int, float]:
    """The hat functions over ``knots`` at time ``t``: ``(j, u)`` means weight ``1 - u`` on knot ``j`` and ``u``
    on knot ``j + 1``."""
    g = len(knots)
    if g == 1 or t <= knots[0]:
        return 0, 0.0
    if t >= knots[g - 1]:
        return g - 2, 1.0
    lo, hi = 0, g - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if knots[mid] <= t:
            lo = mid
        else:
            hi = mid
    return lo, (t - knots[lo]) / (knots[lo + 1] - knots[lo])


@jit
def _hats(sv_time: NDArray[np.float64], knots: NDArray[np.float64]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """:func:`_basis` at every skill variable's time, once per history (the times do not change)."""
    b = np.empty(len(sv_time), dtype=np.int64)
    u = np.empty(len(sv_time))
    for k in range(len(sv_time)):
        b[k], u[k] = _basis(sv_time[k], knots)
    return b, u


@jit
def _shift_invariant(match_start: NDArray[np.int64], team_start: NDArray[np.int64],
                     weight: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Whether each match is unchanged when all its players' skills move by one amount: its teams' total
    weights are equal (then every difference of team performances stays as it was)."""
    out = np.empty(len(match_start) - 1, dtype=np.bool_)
    for m in range(len(match_start) - 1):
        first = 0.0
        ok = True
        for t in range(match_start[m], match_start[m + 1]):
            total = 0.0
            for p in range(team_start[t], team_start[t + 1]):
                total += weight[p]
            if t == match_start[m]:
                first = total
            elif abs(total - first) > 1e-12 * first:
                ok = False
        out[m] = ok
    return out


@jit
def _level_system(match_start: NDArray[np.int64], team_start: NDArray[np.int64], invariant: NDArray[np.bool_],
                  slot_sv: NDArray[np.int64], sv_prev: NDArray[np.int64], sv_time: NDArray[np.float64],
                  mu: NDArray[np.float64], msg_p: NDArray[np.float64], msg_t: NDArray[np.float64],
                  hat_b: NDArray[np.int64], hat_u: NDArray[np.float64], mu0: float, prior_p: float, gamma2: float,
                  a: NDArray[np.float64], rhs: NDArray[np.float64]) -> None:
    """Normal equations of the level correction ``c(t) = sum_j x_j hat_j(t)``: ``a x = rhs`` minimizes

        sum_first prior_p (mu_k + c(t_k) - mu0)^2 / 2
          + sum_walk (mu_k - mu_j + c(t_k) - c(t_j))^2 / (2 gamma^2 (t_k - t_j))
          + sum_{slots p of matches not invariant} pi_p (mu_k + c(t_k) - y_p)^2 / 2

    over the players' first skills, consecutive pairs ``j -> k`` (with ``gamma = 0``, one constant) and, for
    the matches that a common shift would change (teams of unequal total weight), their messages held fixed
    (mean ``y_p``, precision ``pi_p``); the others' messages move with the shift.  At a fixed point of the
    sweeps the gradient at ``c = 0`` vanishes: a shift-invariant match's messages sum to no force along it.
    """
    g = len(rhs)
    a[:, :] = 0.0
    rhs[:] = 0.0
    idx = np.empty(4, dtype=np.int64)
    val = np.empty(4)
    for k in range(len(sv_prev)):
        j = sv_prev[k]
        n = 0
        if j < 0:
            w = prior_p
            r = mu[k] - mu0
        else:
            if gamma2 == 0.0 or g == 1:
                continue
            # Capped: times so close (or gamma so small) that the walk ties them overflow 1 / (gamma^2 dt).
            w = min(1.0 / (gamma2 * (sv_time[k] - sv_time[j])), 1e200)
            r = mu[k] - mu[j]
            b, u = hat_b[j], hat_u[j]
            idx[0], val[0] = b, -(1.0 - u)
            idx[1], val[1] = b + 1, -u
            n = 2
        if g == 1:
            idx[n], val[n] = 0, 1.0
            n += 1
        else:
            b, u = hat_b[k], hat_u[k]
            idx[n], val[n] = b, 1.0 - u
            idx[n + 1], val[n + 1] = b + 1, u
            n += 2
        for x in range(n):
            rhs[idx[x]] -= w * r * val[x]
            for y in range(n):
                a[idx[x], idx[y]] += w * val[x] * val[y]
    for m in range(len(match_start) - 1):
        if invariant[m]:
            continue
        for p in range(team_start[match_start[m]], team_start[match_start[m + 1]]):
            w = msg_p[p]
            if w <= 0.0:
                continue
            k = slot_sv[p]
            r = w * mu[k] - msg_t[p]  # w (mu_k - y_p)
            b, u = hat_b[k], hat_u[k]
            if g == 1:
                rhs[0] -= r
                a[0, 0] += w
            else:
                rhs[b] -= r * (1.0 - u)
                rhs[b + 1] -= r * u
                a[b, b] += w * (1.0 - u) ** 2
                a[b, b + 1] += w * (1.0 - u) * u
                a[b + 1, b] += w * (1.0 - u) * u
                a[b + 1, b + 1] += w * u * u


@jit
def _level_constant(match_start: NDArray[np.int64], team_start: NDArray[np.int64], invariant: NDArray[np.bool_],
                    slot_sv: NDArray[np.int64], sv_prev: NDArray[np.int64], mu: NDArray[np.float64],
                    msg_p: NDArray[np.float64], msg_t: NDArray[np.float64], c: NDArray[np.float64], mu0: float,
                    prior_p: float) -> float:
    """The Newton step along a common shift of the correction (``c``: its value at each skill variable): the
    walk terms do not change along it, so the step is exact, ``-(sum of the priors' and fixed messages'
    gradients) / (sum of their precisions)``, at the means moved by ``c``."""
    grad = 0.0
    curv = 0.0
    for k in range(len(sv_prev)):
        if sv_prev[k] < 0:
            grad += prior_p * (mu[k] + c[k] - mu0)
            curv += prior_p
    for m in range(len(match_start) - 1):
        if invariant[m]:
            continue
        for p in range(team_start[match_start[m]], team_start[match_start[m + 1]]):
            if msg_p[p] <= 0.0:
                continue
            k = slot_sv[p]
            grad += msg_p[p] * (mu[k] + c[k]) - msg_t[p]
            curv += msg_p[p]
    return -grad / curv


@jit
def _shift_levels(match_start: NDArray[np.int64], team_start: NDArray[np.int64], invariant: NDArray[np.bool_],
                  slot_sv: NDArray[np.int64], c: NDArray[np.float64], lik_t: NDArray[np.float64],
                  msg_p: NDArray[np.float64], msg_t: NDArray[np.float64]) -> None:
    """Move the messages of every shift-invariant match by the level correction at its time: a message
    ``(pi, tau)`` for the mean ``tau / pi`` becomes ``(pi, tau + pi c)``, as the match's own update would give
    for players all moved by ``c``."""
    for m in range(len(match_start) - 1):
        if not invariant[m]:
            continue
        for p in range(team_start[match_start[m]], team_start[match_start[m + 1]]):
            k = slot_sv[p]
            msg_t[p] += msg_p[p] * c[k]
            lik_t[k] += msg_p[p] * c[k]


@jit
def _extrapolate(slot_sv: NDArray[np.int64], omega: float, prev_p: NDArray[np.float64],
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
def _solve_spd(a: NDArray[np.float64], rhs: NDArray[np.float64]) -> NDArray[np.float64]:
    """``a^-1 rhs`` for a symmetric positive semi-definite ``a`` (overwritten), by Cholesky: a pivot that is not
    positive (a knot that nothing constrains) gets a zero correction.  In numba rather than LAPACK: a threaded
    BLAS stalls when another process holds a core, and the system is at most ``LEVEL_KNOTS`` wide."""
    g = len(rhs)
    scale = 0.0
    for i in range(g):
        scale = max(scale, a[i, i])
    floor = 1e-12 * max(scale, 1e-300)
    for j in range(g):
        d = a[j, j]
        for k in range(j):
            d -= a[j, k] * a[j, k]
        if d <= floor:
            a[j, j] = 0.0
            for i in range(j + 1, g):
                a[i, j] = 0.0
            continue
        d = math.sqrt(d)
        a[j, j] = d
        for i in range(j + 1, g):
            v = a[i, j]
            for k in range(j):
                v -= a[i, k] * a[j, k]
            a[i, j] = v / d
    x = rhs.copy()
    for i in range(g):  # L y = rhs
        if a[i, i] == 0.0:
            x[i] = 0.0
            continue
        v = x[i]
        for k in range(i):
            v -= a[i, k] * x[k]
        x[i] = v / a[i, i]
    for i in range(g - 1, -1, -1):  # L^T x = y
        if a[i, i] == 0.0:
            x[i] = 0.0
            continue
        v = x[i]
        for k in range(i + 1, g):
            v -= a[k, i] * x[k]
        x[i] = v / a[i, i]
    return x


@jit
def _chain_messages(sv_prev: NDArray[np.int64], sv_next: NDArray[np.int64], sv_time: NDArray[np.float64],
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
            fwd_p[k], fwd_t[k] = _forget(fwd_p[j] + lik_p[j], fwd_t[j] + lik_t[j],
                                         gamma2 * (sv_time[k] - sv_time[j]))
    for k in range(len(sv_prev) - 1, -1, -1):
        j = sv_next[k]
        if j < 0:
            bwd_p[k] = bwd_t[k] = 0.0
        else:
            bwd_p[k], bwd_t[k] = _forget(lik_p[j] + bwd_p[j], lik_t[j] + bwd_t[j],
                                         gamma2 * (sv_time[j] - sv_time[k]))


# -- leave-one-out predictions -----------------------------------------------------------------------------
@jit
def _leave_one_out(match_start: NDArray[np.int64], team_start: NDArray[np.int64], team_rank: NDArray[np.int64],
                   weight: NDArray[np.float64], slot_sv: NDArray[np.int64], single: NDArray[np.bool_],
                   fwd_p: NDArray[np.float64], fwd_t: NDArray[np.float64], bwd_p: NDArray[np.float64],
                   bwd_t: NDArray[np.float64], lik_p: NDArray[np.float64], lik_t: NDArray[np.float64],
                   msg_p: NDArray[np.float64], msg_t: NDArray[np.float64], beta2: float, margin: float,
                   out: NDArray[np.float64]) -> None:
    """``out[m] = log P(outcome_m)`` under match ``m``'s cavities: its players' posteriors without that match
    (EP's leave-one-out predictive; Opper & Winther 2000)."""
    width = most_teams(match_start)
    tm, tv, size = np.empty(width), np.empty(width), np.empty(width)
    cav_mu = np.empty(len(slot_sv))
    cav_var = np.empty(most_players(match_start, team_start))
    ident = np.arange(len(slot_sv))
    for m in range(len(match_start) - 1):
        t0 = match_start[m]
        n = match_start[m + 1] - t0
        p0 = team_start[t0]
        for p in range(p0, team_start[t0 + n]):
            k = slot_sv[p]
            cav_mu[p], cav_var[p - p0] = _cavity(fwd_p[k], fwd_t[k], bwd_p[k], bwd_t[k], lik_p[k], lik_t[k],
                                                 msg_p[p], msg_t[p], single[k])
        _team_priors(team_start, t0, n, ident, weight, cav_mu, cav_var, p0, beta2, 0.0, tm, tv, size)
        out[m] = _log_outcome(tm[:n], tv[:n], team_rank[t0:t0 + n], size[:n], margin)


@jit
def _first_draw(match_start: NDArray[np.int64], team_rank: NDArray[np.int64]) -> int:
    """The first match in which two finishers share a rank (-1 if none)."""
    for m in range(len(match_start) - 1):
        for i in range(match_start[m], match_start[m + 1]):
            if team_rank[i] < 0:
                continue
            for j in range(i + 1, match_start[m + 1]):
                if team_rank[j] == team_rank[i]:
                    return m
    return -1


# -- the result ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class SmoothTrajectory:
    """A player's smoothed skill at each batch they played in.

    ``match`` is the index (in the history as given) of the player's first match of that batch, ``time`` the
    batch's time, ``mu`` and ``sigma`` the posterior given the whole history.
    """

    player: str
    match: NDArray[np.int64]
    time: NDArray[np.float64]
    mu: NDArray[np.float64]
    sigma: NDArray[np.float64]


class Smoothed:
    """The result of :meth:`TrueSkillThroughTime.smooth`: every player's skill through time, given all matches.

    Attributes
    ----------
    log_evidence : float
        ``log P(all outcomes)``, the model's marginal likelihood, estimated by the chain rule: ``sum_m
        log P(outcome_m | matches before m)`` with each belief projected on a Gaussian (see the module
        docstring).  What :func:`podium.fit` maximizes with ``metric="log_evidence"``; comparable with a
        filter's summed log-likelihood.
    match_log_evidence : float64 array
        Its terms, ``log P(outcome_m | matches before m)``, in the history's order.
    loo_log_likelihood : float
        ``sum_m log P(outcome_m | all other matches)`` under the converged cavities (what the reference
        package's ``History.log_evidence()`` returns after ``convergence()``; it uses each match's future too,
        so it is not a probability of the history).
    iterations : int
        Backward-forward sweeps run after the first pass.
    step : float
        The largest move of a posterior mean or standard deviation in the last sweep.
    converged : bool
        Whether ``step`` fell below the tolerance.
    matches : int
        How many matches were smoothed.
    """

    def __init__(self, model: TrueSkillThroughTime, players: list[str], time_is_date: bool,
                 sv_player: NDArray[np.int64], sv_time: NDArray[np.float64], sv_match: NDArray[np.int64],
                 sv_games: NDArray[np.int64], sv_prev: NDArray[np.int64], sv_next: NDArray[np.int64],
                 fwd: NDArray[np.float64], bwd: NDArray[np.float64], lik: NDArray[np.float64],
                 match_log_evidence: NDArray[np.float64], loo_log_likelihood: float, iterations: int, step: float,
                 converged: bool, matches: int,
                 posterior: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None) -> None:
        self.model = model
        self.players = players
        self.time_is_date = time_is_date
        self.match_log_evidence = match_log_evidence
        self.log_evidence = float(match_log_evidence.sum())
        self.loo_log_likelihood = loo_log_likelihood
        self.iterations = iterations
        self.step = step
        self.converged = converged
        self.matches = matches
        # Skill variables grouped by player (stable, so each player's are in time order).
        by_player = np.argsort(sv_player, kind="stable")
        self._order = by_player
        self._start = np.searchsorted(sv_player[by_player], np.arange(len(players) + 1))
        self._player = sv_player
        self._time = sv_time
        self._match = sv_match
        self._games = sv_games
        self._prev = sv_prev
        self._next = sv_next
        self._fwd = fwd  # (2, K): pi and tau of each message
        self._bwd = bwd
        self._lik = lik
        if posterior is None:
            p = fwd[0] + bwd[0] + lik[0]
            self._mu = (fwd[1] + bwd[1] + lik[1]) / p
            self._sigma = 1.0 / np.sqrt(p)
        else:  # the first pass alone: the online replay's ratings, as it wrote them
            self._mu, self._sigma = posterior
        self._index = {name: i for i, name in enumerate(players)}

    def __repr__(self) -> str:
        return (f"Smoothed({self.matches} matches, {len(self.players)} players, log_evidence={self.log_evidence:.6g}, "
                f"iterations={self.iterations}, converged={self.converged})")

    def _rows(self, player: str) -> NDArray[np.int64]:
        if not isinstance(player, str) or player not in self._index:
            raise KeyError(f"'player': {player!r:.80} played no match of this history.")
        i = self._index[player]
        return self._order[self._start[i]:self._start[i + 1]]

    def trajectory(self, player: str) -> SmoothTrajectory:
        """The player's smoothed skill at each batch (time) they played in."""
        rows = self._rows(player)
        return SmoothTrajectory(player, self._match[rows].copy(), self._time[rows].copy(), self._mu[rows].copy(),
                                self._sigma[rows].copy())

    def ratings(self, at: float | str | None = None) -> dict[str, Rating]:
        """Everyone's smoothed skill at time ``at`` (default: the history's last time), given all matches.

        Between two of a player's batches ``t_1 < at < t_2`` the skill is the random walk's bridge: the forward
        belief after ``t_1`` widened by ``gamma^2 (at - t_1)`` times the backward message from ``t_2`` widened
        by ``gamma^2 (t_2 - at)`` (exact for the Gaussian walk); after the last batch, the last posterior widened
        by ``gamma^2 (at - t_last)``.  Players whose first match is after ``at`` are left out.  ``at`` is a
        number on the history's time axis, or a date or ISO-8601 string when its times are dates.
        """
        when = self._when(at)
        gamma2 = float(self.model.gamma) ** 2
        out: dict[str, Rating] = {}
        for i, name in enumerate(self.players):
            rows = self._order[self._start[i]:self._start[i + 1]]
            times = self._time[rows]
            j = int(np.searchsorted(times, when, side="right")) - 1
            if j < 0:
                continue
            k = rows[j]
            if times[j] == when:
                out[name] = Rating(float(self._mu[k]), float(self._sigma[k]))
                continue
            fp, ft = _forget(self._fwd[0, k] + self._lik[0, k], self._fwd[1, k] + self._lik[1, k],
                             gamma2 * (when - times[j]))
            n = self._next[k]
            bp = bt = 0.0
            if n >= 0 and self.iterations > 0:  # the first pass alone looks at no later match
                bp, bt = _forget(self._lik[0, n] + self._bwd[0, n], self._lik[1, n] + self._bwd[1, n],
                                 gamma2 * (self._time[n] - when))
            p = fp + bp
            out[name] = Rating(float((ft + bt) / p), float(1.0 / math.sqrt(p)))
        return out

    @property
    def end(self) -> float:
        """The history's last time (the match index of its last match when it has no times): ``at``'s default."""
        return float(self._time.max())

    def _when(self, at: float | str | None) -> float:
        if at is None:
            return self.end
        from ..match import parse_time

        if not self.time_is_date and not isinstance(at, (int, float, np.integer, np.floating)):
            raise ValueError(f"'at' must be a number: this history's times are numbers (or match indices), not "
                             f"dates. Got {at!r:.80}.")
        value = parse_time(at, "at")
        if value != value:
            raise ValueError(f"'at' must be a time on the history's axis. Got {at!r:.80}.")
        return value

    def leaderboard(self, k: float = 3.0, *, at: float | str | None = None, top: int | None = None,
                    min_games: int = 0) -> list[Any]:
        """Players sorted by ``mu - k sigma`` of their smoothed skill at ``at`` (see :meth:`ratings`).

        ``games`` in each row counts the matches the player had played by ``at``; ``min_games`` leaves out
        players with fewer.
        """
        from ..league import leaderboard_rows

        when = self._when(at)
        ratings = self.ratings(at)
        names = list(ratings)
        games = np.empty(len(names), dtype=np.int64)
        for j, name in enumerate(names):
            rows = self._rows(name)
            games[j] = self._games[rows[self._time[rows] <= when]].sum()
        return leaderboard_rows(names, np.array([ratings[n].mu for n in names]),
                                np.array([ratings[n].sigma for n in names]), games, k, top, min_games)

    def to_frame(self) -> Any:
        """A pandas ``DataFrame``, one row per player and batch: ``player, time, match, mu, sigma`` (pandas
        must be installed; times that are dates become timestamps)."""
        import pandas as pd

        frame = pd.DataFrame(self._columns())
        if self.time_is_date:
            frame["time"] = pd.to_datetime(frame["time"], unit="D")
        return frame

    def _columns(self) -> dict[str, Any]:
        rows = self._order
        return {"player": np.array(self.players, dtype=object)[self._player[rows]], "time": self._time[rows],
                "match": self._match[rows], "mu": self._mu[rows], "sigma": self._sigma[rows]}

    def write_csv(self, path: Any) -> None:
        """The trajectories as CSV (:meth:`to_frame`'s columns; dates as ISO-8601), without pandas."""
        import csv

        from ..match import format_time

        cols = self._columns()
        with open(path, "w", newline="", encoding="utf-8") as fh:
            out = csv.writer(fh)
            out.writerow(["player", "time", "match", "mu", "sigma"])
            for name, t, m, mu, sd in zip(cols["player"], cols["time"], cols["match"], cols["mu"], cols["sigma"]):
                out.writerow([name, format_time(float(t), self.time_is_date), int(m), repr(float(mu)),
                              repr(float(sd))])


# -- the model ------------------------------------------------------------------------------------------------
class TrueSkillThroughTime(Hyperparameters):
    """TrueSkill Through Time: TrueSkill smoothed over the whole history (Dangauthier et al. 2007).

    Parameters
    ----------
    mu, sigma : float, default 0 and 6
        A new player's skill ``N(mu, sigma^2)`` (the reference package's scale: ``beta = 1``).
    beta : float, default 1
        Standard deviation of a performance around the skill.
    gamma : float, default 0.03
        The random walk of skills: variance ``gamma^2`` per unit of time between a player's batches.  Without
        times (every ``Match.time`` unknown) each match is its own batch at time = its index in the history.
    draw_probability : float, default 0.10
        Probability of a draw between two equal one-player teams; the draw margin is TrueSkill's,
        ``Phi^-1((p + 1)/2) sqrt(n1 + n2) beta``.  With 0, a history with a draw is refused.

    Notes
    -----
    A match's factor graph, non-finishers included, is :class:`podium.TrueSkill`'s (the same compiled code).
    :meth:`smooth` with ``max_iterations=0`` runs only the first, filtering pass: on a history with times its
    ratings are those of ``TrueSkill(mu=mu, sigma=sigma, beta=beta, tau=0, drift=gamma, draw_probability=...)``
    replayed in time order (without times the smoother's clock is the match index, which TrueSkill's ``drift``
    does not see; the reference package instead adds ``gamma^2`` once per appearance).  Where a match has a
    tied group of three or more teams, TrueSkill's rotation average is used (the reference package chains such a
    group in the order listed).
    """

    _fit_space = {"beta": "positive", "gamma": "positive", "sigma": "positive", "draw_probability": "probability"}
    _fit_default = ("beta", "gamma")

    def _fit_start(self, name: str) -> float:
        if name == "gamma" and self.gamma == 0:
            return float(self.sigma) / 200.0
        return float(getattr(self, name))

    def __init__(self, *, mu: float = 0.0, sigma: float = 6.0, beta: float = 1.0, gamma: float = 0.03,
                 draw_probability: float = 0.10) -> None:
        self.mu = mu
        self.sigma = sigma
        self.beta = beta
        self.gamma = gamma
        self.draw_probability = draw_probability
        self._finite("mu", mu)
        self._positive("sigma", sigma)
        self._positive("beta", beta)
        self._non_negative("gamma", gamma)
        self._probability("draw_probability", draw_probability)
        for name in ("sigma", "beta", "gamma"):
            # sigma's square inverted is the priors' precision, on which the field's level rests: at 1e150 it is
            # 1e-300, at the edge of the floats, and the sweeps lose the level.
            limit = SIGMA_MAX_SMOOTH if name == "sigma" else SIGMA_MAX
            if getattr(self, name) > limit:
                raise ValueError(f"The {name!r} parameter of TrueSkillThroughTime must be at most {limit:g}. "
                                 f"Got {getattr(self, name)!r} instead.")
        self._filter = TrueSkill(mu=float(mu), sigma=float(sigma), beta=float(beta), tau=0.0, drift=float(gamma),
                                 draw_probability=float(draw_probability), tolerance=MATCH_TOLERANCE,
                                 max_iterations=MATCH_ITERATIONS)

    @property
    def filter(self) -> TrueSkill:
        """The online model of the first pass: ``TrueSkill(..., tau=0, drift=gamma)`` with the same factors."""
        return self._filter

    def smooth(self, matches: Matches | Iterable[Match], *, tolerance: float = 1e-6, max_iterations: int = 100,
               progress: bool = False) -> Smoothed:
        """Smooth a history: expectation propagation over all its matches, until no posterior moves.

        Parameters
        ----------
        matches : Matches or iterable of Match
            The history; matches are taken in time order (stable: equal times keep their order and form one
            batch).  Times must be all known or all unknown.
        tolerance : float, default 1e-6
            Stop when a backward-forward sweep moves no posterior mean or standard deviation by this much.
        max_iterations : int, default 100
            Most sweeps after the first pass (0: the first, filtering pass only).  Reaching it without
            converging gives a :class:`podium.ConvergenceWarning`.
        progress : bool
            Show a progress bar (rich) of the sweeps.
        """
        packed = matches if isinstance(matches, Matches) else Matches.from_matches(list(matches))
        tol = self._positive("tolerance", tolerance)
        if isinstance(max_iterations, bool) or not isinstance(max_iterations, int) or max_iterations < 0:
            raise ValueError(f"'max_iterations' must be a non-negative int. Got {max_iterations!r:.80}.")
        n_m = len(packed)
        if n_m == 0:
            raise ValueError("'matches' is empty: there is no history to smooth.")
        time = np.asarray(packed.time, dtype=np.float64)
        unknown = np.isnan(time)
        if unknown.any() and not unknown.all():
            first = int(np.flatnonzero(unknown)[0])
            raise ValueError(f"'time': {int(unknown.sum())} of {n_m} matches have no time (the first is match "
                             f"{first}); TrueSkillThroughTime needs all times or none.")
        if unknown.all():
            time = np.arange(n_m, dtype=np.float64)
        if not np.isfinite(time).all():
            bad = int(np.flatnonzero(~np.isfinite(time))[0])
            raise ValueError(f"'time' of match {bad} is {time[bad]!r}; times must be finite.")
        if self.draw_probability == 0.0:
            self._refuse_draws(packed)
        order = np.argsort(time, kind="stable")
        ms, ts, tr, pl, wt = _permute(packed.match_start, packed.team_start, packed.team_rank, packed.player,
                                         packed.weight, order)
        st = time[order]
        n_players = len(packed.players)
        slot_sv, sv_player, sv_prev, sv_next, sv_time, batch_start, sv_batch_start, sv_match = _structure(
            ms, ts, pl, st, n_players)
        k = len(sv_player)
        sv_games = np.bincount(slot_sv, minlength=k)  # matches of each skill variable
        single = sv_games == 1  # a skill with one match: its cavity is exact
        # The first pass: TrueSkill's online replay, by its own kernel.
        f = self._filter
        mu = np.full(n_players, float(self.mu))
        sd = np.full(n_players, float(self.sigma))
        hist_mu = np.empty(len(pl))
        hist_sd = np.empty(len(pl))
        bad = replay_trueskill(ms, ts, tr, pl, wt, st, mu, sd, np.zeros(n_players, dtype=np.int64),
                               np.full(n_players, np.nan), hist_mu, hist_sd, np.empty(0), float(self.beta), 0.0,
                               float(self.gamma), f._margin, MATCH_TOLERANCE, MATCH_ITERATIONS, 0.0)
        fwd = np.empty((2, k))
        bwd = np.zeros((2, k))
        lik = np.empty((2, k))
        msg = np.empty((2, len(pl)))
        online = np.empty(n_m)
        gamma2 = float(self.gamma) ** 2
        beta2 = float(self.beta) ** 2
        _from_filter(ms, ts, tr, pl, wt, st, slot_sv, hist_mu, hist_sd, n_players, float(self.mu),
                     float(self.sigma), gamma2, beta2, f._margin, fwd[0], fwd[1], lik[0], lik[1], msg[0], msg[1],
                     online)
        filtered = None
        if max_iterations == 0:  # the first pass's posteriors are the replay's ratings themselves
            last = np.full(k, -1, dtype=np.int64)
            np.maximum.at(last, slot_sv, np.arange(len(pl)))
            filtered = (hist_mu[last], hist_sd[last])
        del hist_mu, hist_sd
        prior_p = 1.0 / float(self.sigma) ** 2
        prior_t = float(self.mu) * prior_p
        unconverged = np.zeros(1, dtype=np.int64)
        unconverged[0] = bad
        invariant = _shift_invariant(ms, ts, wt)
        batch_time = sv_time[sv_batch_start[:-1]]
        picks = np.linspace(0, len(batch_time) - 1, min(len(batch_time), LEVEL_KNOTS)).round().astype(np.int64)
        knots = batch_time[:1] if gamma2 == 0.0 else np.unique(batch_time[picks])
        hats = _hats(sv_time, knots)
        step = math.inf
        done = 0
        bar = None
        if progress and max_iterations > 0:
            from rich.progress import Progress

            bar = Progress(transient=True)
            bar.start()
            task = bar.add_task("smoothing", total=max_iterations)
        steps: list[float] = []
        prev = None
        last_jump = 0
        try:
            for done in range(1, max_iterations + 1):
                step = _sweep(ms, ts, tr, wt, slot_sv, single, sv_prev, sv_next, sv_time, batch_start,
                              sv_batch_start, prior_p, prior_t, gamma2, fwd[0], fwd[1], bwd[0], bwd[1], lik[0],
                              lik[1], msg[0], msg[1], beta2, f._margin, unconverged)
                if self._correct_level:
                    self._level(ms, ts, invariant, hats, len(knots), slot_sv, sv_prev, sv_next, sv_time, prior_p, prior_t,
                                gamma2, fwd, bwd, lik, msg)
                if bar is not None:
                    bar.update(task, advance=1, description=f"smoothing (step {step:.2e})")
                if not step >= tol:  # NaN would stop here too, and is raised below
                    break
                if self._accelerate and done < max_iterations:  # a jump no sweep checks would be returned
                    # Lyusternik-Aitken: when the sweeps shrink the step by a settled ratio r, the rest of the way
                    # is about r / (1 - r) times the last change; jump there (then three sweeps to re-measure r).
                    steps.append(step)
                    if prev is not None and len(steps) - last_jump >= 3:
                        r1, r2 = steps[-1] / steps[-2], steps[-2] / steps[-3]
                        if 0.2 < r1 < 0.995 and abs(r1 - r2) < (0.05 if r1 < 0.9 else 0.01) * r1:
                            _extrapolate(slot_sv, r1 / (1.0 - r1), prev[0], prev[1], msg[0], msg[1], lik[0],
                                         lik[1])
                            _chain_messages(sv_prev, sv_next, sv_time, prior_p, prior_t, gamma2, fwd[0], fwd[1],
                                            bwd[0], bwd[1], lik[0], lik[1])
                            last_jump = len(steps)
                    if prev is None:
                        prev = msg.copy()
                    else:
                        prev[:] = msg
            else:
                done = max_iterations
        finally:
            if bar is not None:
                bar.stop()
        if max_iterations == 0:
            done = 0
        converged = max_iterations > 0 and step < tol
        if step != step:
            raise FloatingPointError("TrueSkillThroughTime: a posterior became NaN while smoothing; please report the "
                                     "history and parameters (it is a bug).")
        if max_iterations > 0 and not converged:
            warnings.warn(f"TrueSkillThroughTime: the posteriors still moved by {step:.3g} after max_iterations="
                          f"{max_iterations} sweeps (tolerance={tol!r}).", ConvergenceWarning, stacklevel=2)
        if unconverged[0]:
            warnings.warn(f"TrueSkillThroughTime: expectation propagation inside a match missed tolerance="
                          f"{MATCH_TOLERANCE!r} within {MATCH_ITERATIONS} sweeps {int(unconverged[0])} times; those "
                          "updates use the last sweep.", ConvergenceWarning, stacklevel=2)
        loo = np.empty(n_m)
        _leave_one_out(ms, ts, tr, wt, slot_sv, single, fwd[0], fwd[1], bwd[0], bwd[1], lik[0], lik[1], msg[0],
                       msg[1], beta2, f._margin, loo)
        chain = np.empty(n_m)
        chain[order] = online  # back to the history's order
        return Smoothed(self, packed.players, packed.time_is_date and not unknown.all(), sv_player, sv_time,
                        order[sv_match], sv_games, sv_prev, sv_next, fwd, bwd, lik, chain, float(loo.sum()), done,
                        float(step) if max_iterations > 0 else math.nan, converged, n_m, filtered)

    _correct_level = True  # switches for tests and benchmarks that compare with the reference's plain sweeps
    _accelerate = True

    def _level(self, ms: NDArray[np.int64], ts: NDArray[np.int64], invariant: NDArray[np.bool_],
               hats: tuple[NDArray[np.int64], NDArray[np.float64]], g: int, slot_sv: NDArray[np.int64], sv_prev: NDArray[np.int64],
               sv_next: NDArray[np.int64], sv_time: NDArray[np.float64], prior_p: float, prior_t: float,
               gamma2: float, fwd: NDArray[np.float64], bwd: NDArray[np.float64], lik: NDArray[np.float64],
               msg: NDArray[np.float64]) -> None:
        """Move the whole field's level at once, where EP's local updates would take hundreds of sweeps.

        A match compares players of one batch, so adding ``c(t)`` to every skill at time ``t`` (and moving each
        match's messages with it) changes no match's fit when its teams' total weights are equal (any match
        between single players of full weight); only the new players' priors and the random walk fix the level.
        Local updates move that level by a small fraction per sweep (on ``atp_singles`` the field's level in 2020
        still fell by 0.02 a sweep after 64 sweeps).  This step takes the ``c`` of a
        piecewise-linear form over :data:`LEVEL_KNOTS` batch times that minimizes the prior and walk terms at the
        current posterior means (:func:`_level_system`; a quadratic, solved exactly; the messages of matches
        between teams of unequal weight enter it as fixed observations), moves the other messages by it and
        recomputes the chain messages.  A fixed point of the sweeps is one of this step too (``c = 0``).
        """
        mu = np.asarray((fwd[1] + bwd[1] + lik[1]) / (fwd[0] + bwd[0] + lik[0]), dtype=np.float64)
        a = np.empty((g, g))
        rhs = np.empty(g)
        hat_b, hat_u = hats
        _level_system(ms, ts, invariant, slot_sv, sv_prev, sv_time, mu, msg[0], msg[1], hat_b, hat_u, float(self.mu),
                      prior_p, gamma2, a, rhs)
        x = _solve_spd(a, rhs)
        c = x[0] + 0.0 * hat_u if g == 1 else (1.0 - hat_u) * x[hat_b] + hat_u * x[np.minimum(hat_b + 1, g - 1)]
        # Then the common level exactly: it is the direction the walk does not see, whose curvature (the
        # priors' precisions) a Cholesky pivot can lose beside the walk's (sigma 1e6 against gamma 0.1).
        c += _level_constant(ms, ts, invariant, slot_sv, sv_prev, mu, msg[0], msg[1], c, float(self.mu), prior_p)
        if not np.all(np.isfinite(c)):
            return
        _shift_levels(ms, ts, invariant, slot_sv, c, lik[1], msg[0], msg[1])
        _chain_messages(sv_prev, sv_next, sv_time, prior_p, prior_t, gamma2, fwd[0], fwd[1], bwd[0], bwd[1],
                        lik[0], lik[1])

    @staticmethod
    def _refuse_draws(packed: Matches) -> None:
        m = _first_draw(packed.match_start, packed.team_rank)
        if m >= 0:
            raise ValueError(f"match {m} has a draw, which has probability 0 with 'draw_probability' = 0; give "
                             "TrueSkillThroughTime a positive draw_probability.")
