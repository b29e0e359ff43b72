"""TrueSkill: Bayesian skill ratings by expectation propagation (Herbrich, Minka & Graepel 2007).

The factor graph of one match (the paper's Fig. 1), for teams sorted by rank::

    skill s_j      N(mu_j, sigma_j^2 + tau^2 + drift^2 * elapsed)          prior with dynamics
      |
    performance    p_j ~ N(s_j, beta^2)
      |
    team t_i       t_i = sum_j w_j p_j                                      partial play
      |
    difference     d = t_a - t_b   for compared teams a (better) and b
      |
    truncation     I(d > eps)  win,   I(|d| <= eps)  draw,   I(d > 0)  non-finisher b below finisher a

Below the truncation layer the graph is a tree of Gaussian factors, so its messages are exact: before the
comparisons, team ``i`` performs ``t_i ~ N(sum_j w_j mu_j, sum_j w_j^2 (sigma_j^2 + beta^2))``
independently of the others.  Expectation propagation then runs only on the comparison layer: each
truncation factor's message to its two teams is refined, in turn, by moment matching against the
truncated Gaussian (``V`` and ``W`` of :func:`podium.numerics.truncate_above` and
:func:`podium.numerics.truncate_between`), sweeping forwards and backwards over the comparisons until the
largest change of any message is below ``tolerance`` (the paper's schedule, Table 1).  Messages are held
in natural parameters (precision ``pi``, precision-adjusted mean ``tau``) so that products and quotients
of Gaussians are sums and differences.  Finally each team's total message is passed down the tree to its
players: with the team message ``(pi, tau)`` and the team's prior ``N(m, v)``,

    mu_j    += w_j sigma_j^2 (tau - pi m) / (1 + pi v)
    sigma_j^2 = sigma_j^2 (1 + pi (v - w_j^2 sigma_j^2)) / (1 + pi v)

(Gaussian conditioning through the sum and noise factors; written so that nothing cancels).

Which pairs of teams are compared (always a tree, so EP behaves as in the paper):

* the finishers form the paper's chain of neighbours, sorted by rank: a win factor between consecutive
  teams of different rank, a draw factor between consecutive tied teams;
* a tied group of three or more would make the chain depend on the order the teams are listed in (the
  middle team is constrained twice).  The group is put in a canonical order (by the teams' own prior
  mean, variance, size) and the update is averaged over the rotations of that order
  (:func:`tie_rotations`), so permuting the teams of a match, ties included, changes nobody's result and
  tied players with equal priors get identical updates.  (Comparing every pair of a tied group instead
  gives a graph with loops on which EP converges to marginals far too precise: each team of a three-way
  tie ends with variance ~2 where ~29 is right.)
* non-finishers (``rank=None``): each is compared one-sidedly, ``I(d > 0)`` with no draw margin, with the
  chain's last finisher, never with a draw factor and never with each other.  So a non-finisher's mean
  can only fall and it cannot gain from a match it did not finish.

The draw margin of a compared pair with ``n1 + n2`` players is ``eps = Phi^-1((p + 1)/2) sqrt(n1 + n2) beta``
(section 4.1: ``p = 2 Phi(eps / (sqrt(n1 + n2) beta)) - 1``).

Two teams, the common case, need no iteration: one moment-matching step is exact, and the compiled
replay takes that path directly.
"""

from __future__ import annotations

import math
import statistics
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from ..match import Match, Matches
from ..numerics import jit, log_ndtr, log_ndtr_diff, truncate_above, truncate_between
from ..ordering import GAUSSIAN, log_outcome, log_win_probabilities, rank_groups
from ..rating import Rating
from .base import Model, _History, _State, _state_rows, most_teams

__all__ = ["TrueSkill", "ConvergenceWarning"]

WIN, DRAW, BELOW = 0, 1, 2  # truncation factors: d > eps, |d| <= eps, d > 0 (non-finisher below)
_UNDAMPED = 20  # sweeps before expectation propagation damps its updates


class ConvergenceWarning(UserWarning):
    """Expectation propagation reached ``max_iterations`` before its messages settled to ``tolerance``."""


# -- one match --------------------------------------------------------------------------------------
@jit
def _truncate(kind: int, mean: float, sd: float, eps: float) -> tuple[float, float]:
    """Standardized mean shift and variance factor of ``d ~ N(mean, sd^2)`` under the factor ``kind``."""
    if kind == DRAW:
        return truncate_between((-eps - mean) / sd, (eps - mean) / sd)
    return truncate_above((mean - eps) / sd)


@jit
def _tilted_messages(kind: int, eps: float, ma: float, va: float, mb: float, vb: float
                     ) -> tuple[float, float, float, float]:
    """Messages ``(pi_a, tau_a, pi_b, tau_b)`` from one comparison of teams ``a`` (better) and ``b``.

    With cavities ``t_a ~ N(ma, va)``, ``t_b ~ N(mb, vb)`` and ``d = t_a - t_b ~ N(ma - mb, v)``, moment
    matching against the truncation gives ``t_a`` the mean ``ma + va V / sqrt v`` and the variance
    ``va (1 - va W / v)`` (paper, Table 1).  The message that turns the cavity into that marginal has
    precision ``W / (vb + va (1 - W))`` and precision-adjusted mean ``ma pi + (V / sqrt v)(1 + va pi)``;
    written this way nothing cancels, even when ``W -> 1`` in an upset.  ``b`` mirrors it with ``-V``.
    """
    v = va + vb
    sd = math.sqrt(v)
    shift, var_factor = _truncate(kind, ma - mb, sd, eps)
    w = 1.0 - var_factor
    step = shift / sd
    npa = max(w / (vb + va * var_factor), 0.0)
    npb = max(w / (va + vb * var_factor), 0.0)
    return npa, ma * npa + step * (1.0 + va * npa), npb, mb * npb - step * (1.0 + vb * npb)


@jit
def _update_factor(c: int, fa: NDArray[np.int64], fb: NDArray[np.int64], fkind: NDArray[np.int64],
                   feps: NDArray[np.float64], msg: NDArray[np.float64], prior: NDArray[np.float64],
                   pi: NDArray[np.float64], tau: NDArray[np.float64], step_size: float) -> float:
    """Refine comparison ``c``'s messages to its teams; return the largest change, relative to the teams.

    ``msg[:, c] = (pi_a, tau_a, pi_b, tau_b)``: the factor's current messages to team ``a`` (better) and ``b``.
    ``pi, tau``: each team's total message from all comparisons (its marginal is the prior times it);
    ``prior[:, t] = (1/v, m/v)`` for team ``t``'s prior ``N(m, v)``.
    The change is measured on the teams' new marginals: the mean's move in standard deviations plus
    the precision's relative change, a dimensionless number.  ``step_size < 1`` damps the update: the new messages are that convex
    combination of the old and the moment-matched ones, in natural parameters (same fixed points).
    """
    a, b = fa[c], fb[c]
    # cavities: prior times every other comparison's message, in moments
    cpa = prior[0, a] + pi[a] - msg[0, c]
    cta = prior[1, a] + tau[a] - msg[1, c]
    cpb = prior[0, b] + pi[b] - msg[2, c]
    ctb = prior[1, b] + tau[b] - msg[3, c]
    va, vb = 1.0 / cpa, 1.0 / cpb
    npa, nta, npb, ntb = _tilted_messages(fkind[c], feps[c], cta * va, va, ctb * vb, vb)
    if step_size < 1.0:
        npa = msg[0, c] + step_size * (npa - msg[0, c])
        nta = msg[1, c] + step_size * (nta - msg[1, c])
        npb = msg[2, c] + step_size * (npb - msg[2, c])
        ntb = msg[3, c] + step_size * (ntb - msg[3, c])
    dpa, dta = npa - msg[0, c], nta - msg[1, c]
    dpb, dtb = npb - msg[2, c], ntb - msg[3, c]
    pi[a] += dpa
    tau[a] += dta
    pi[b] += dpb
    tau[b] += dtb
    msg[0, c], msg[1, c], msg[2, c], msg[3, c] = npa, nta, npb, ntb
    # The change, relative to the new marginals N(m, 1/P): |dP| / P + |dm| sqrt(P), with
    # dm = (d tau - m dP) / P.  Scale-free, so it stays above rounding noise whatever the ratings' size.
    pa_new = prior[0, a] + pi[a]
    pb_new = prior[0, b] + pi[b]
    ma_new = (prior[1, a] + tau[a]) / pa_new
    mb_new = (prior[1, b] + tau[b]) / pb_new
    return max(abs(dpa) / pa_new + abs(dta - ma_new * dpa) / math.sqrt(pa_new),
               abs(dpb) / pb_new + abs(dtb - mb_new * dpb) / math.sqrt(pb_new))


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
def _canonical_order(tm: NDArray[np.float64], tv: NDArray[np.float64], rank: NDArray[np.int64],
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
def tie_rotations(starts: NDArray[np.int64], groups: int) -> int:
    """How many chains a match is averaged over: the lcm of its tied groups' sizes (if at most 60).

    In run ``r`` a tied group of ``g`` teams is chained in its canonical order rotated by ``r mod g``; over
    ``lcm`` runs every tied team holds every place of its group's chain equally often, so tied teams with
    equal priors get identical updates.  Beyond 60 the runs are the largest group's size.
    """
    runs = 1
    biggest = 1
    for g in range(groups):
        size = starts[g + 1] - starts[g]
        biggest = max(biggest, size)
        a, b = runs, size
        while b:
            a, b = b, a % b
        runs = runs // a * size
        if runs > 60:
            return biggest
    return runs


@jit
def expectation_propagation(
    tm: NDArray[np.float64], tv: NDArray[np.float64], rank: NDArray[np.int64], size: NDArray[np.float64],
    margin: float, tolerance: float, max_iterations: int, order: NDArray[np.int64], starts: NDArray[np.int64],
    groups: int, finishers: int, rotation: int, pi: NDArray[np.float64], tau: NDArray[np.float64],
    iw: NDArray[np.int64], fw: NDArray[np.float64],
) -> int:
    """Run EP on the comparison layer of one match; write each team's total message into ``pi, tau``.

    ``tm, tv``: the teams' prior performance means and variances; ``rank``: -1 = did not finish;
    ``size``: players per team (for the draw margin ``margin * sqrt(n1 + n2)``); ``order, starts,
    groups, finishers`` from :func:`_canonical_order`; ``rotation``: which chain of the tied groups (see
    :func:`tie_rotations`).  The comparisons are a tree: the chain of finishers (win factors between
    groups, draw factors inside a group) and each non-finisher below the chain's last team.  Returns the
    number of sweeps, or -1 when ``max_iterations`` sweeps did not bring the largest change below
    ``tolerance``.
    """
    n = len(tm)
    pi[:n] = 0.0
    tau[:n] = 0.0
    if finishers == 0:
        return 0
    chain, fa, fb, fkind = iw[0], iw[1], iw[2], iw[3]  # workspaces of at least n entries
    feps = fw[0]
    msg = fw[1:5]
    prior = fw[5:7]
    for t in range(n):
        prior[0, t] = 1.0 / tv[t]
        prior[1, t] = tm[t] / tv[t]
    for g in range(groups):
        a, b = starts[g], starts[g + 1]
        for k in range(a, b):
            chain[k] = order[a + (k - a + rotation) % (b - a)]
    count = n - 1
    for c in range(finishers - 1):
        fa[c], fb[c] = chain[c], chain[c + 1]
        fkind[c] = DRAW if rank[fa[c]] == rank[fb[c]] else WIN
        feps[c] = margin * math.sqrt(size[fa[c]] + size[fb[c]])
    for c in range(finishers - 1, count):  # non-finishers below the last finisher, no margin
        fa[c], fb[c], fkind[c], feps[c] = chain[finishers - 1], order[c + 1], BELOW, 0.0
    if count == 0:
        return 0
    msg[:, :count] = 0.0
    if count == 1:
        _update_factor(0, fa, fb, fkind, feps, msg, prior, pi, tau, 1.0)  # exact in one step
        return 1
    # The paper's schedule: sweep down the chain and back up until the messages settle; the
    # non-finishers hang off the chain's end, so they are refreshed on every pass through it.
    # Undamped EP on a chain settles in a handful of sweeps; with wildly different scales (standard
    # deviations 1e-2 and 1e3 in one free-for-all) it can cycle, so sweeps beyond _UNDAMPED take half
    # steps.  Such matches can need a few hundred sweeps.
    step_size = 1.0
    for sweep in range(max_iterations):
        if sweep == _UNDAMPED:
            step_size = 0.5
        delta = 0.0
        for c in range(count):
            delta = max(delta, _update_factor(c, fa, fb, fkind, feps, msg, prior, pi, tau, step_size))
        for c in range(count - 2, 0, -1):
            delta = max(delta, _update_factor(c, fa, fb, fkind, feps, msg, prior, pi, tau, step_size))
        if delta < tolerance:
            return sweep + 1
    return -1


@jit
def _log_outcome(tm: NDArray[np.float64], tv: NDArray[np.float64], rank: NDArray[np.int64],
                 size: NDArray[np.float64], margin: float) -> float:
    """``log P(outcome)`` under independent team performances ``N(tm, tv)`` with the draw margin."""
    n = len(tm)
    if n == 2:
        r0, r1 = rank[0], rank[1]
        if r0 < 0 and r1 < 0:
            return 0.0
        sd = math.sqrt(tv[0] + tv[1])
        d = (tm[0] - tm[1]) / sd
        if r0 < 0 or r1 < 0:
            return log_ndtr(d if r1 < 0 else -d)
        e = margin * math.sqrt(size[0] + size[1]) / sd
        if r0 == r1:
            return log_ndtr_diff(e - d, -e - d)
        return log_ndtr(d - e if r0 < r1 else -d - e)
    if margin == 0.0:  # without a margin a draw has probability 0 in TrueSkill's model
        for i in range(n):
            for j in range(i + 1, n):
                if rank[i] >= 0 and rank[i] == rank[j]:
                    return -np.inf
    grad = np.empty(0)
    return log_outcome(tm, np.sqrt(tv), GAUSSIAN, 0.0, rank, size, margin, False, grad, grad, 1.0)


@jit
def _team_priors(team_start: NDArray[np.int64], t0: int, n: int, row: NDArray[np.int64],
                 weight: NDArray[np.float64], mu: NDArray[np.float64], var: NDArray[np.float64], p0: int,
                 beta2: float, tm: NDArray[np.float64], tv: NDArray[np.float64], size: NDArray[np.float64]) -> None:
    """Team performance means and variances: ``sum w mu`` and ``sum w^2 (var + beta^2)``.

    ``var[p - p0]`` holds the variance of player slot ``p`` (after dynamics, or before for predictions).
    """
    for t in range(n):
        m = 0.0
        v = 0.0
        for p in range(team_start[t0 + t], team_start[t0 + t + 1]):
            w = weight[p]
            m += w * mu[row[p]]
            v += w * w * (var[p - p0] + beta2)
        tm[t] = m
        tv[t] = v
        size[t] = team_start[t0 + t + 1] - team_start[t0 + t]


@jit
def _apply_messages(team_start: NDArray[np.int64], t0: int, n: int, row: NDArray[np.int64],
                    weight: NDArray[np.float64], var: NDArray[np.float64], p0: int, tm: NDArray[np.float64],
                    tv: NDArray[np.float64], pi: NDArray[np.float64], tau: NDArray[np.float64],
                    d_mu: NDArray[np.float64], new_var: NDArray[np.float64], share: float) -> None:
    """Pass each team's message ``(pi, tau)`` down to its players; add ``share`` of the result.

    Gaussian conditioning through the sum and performance factors: with the team's prior ``N(m, v)``,
    ``mu_j += w_j var_j (tau - pi m) / (1 + pi v)`` and
    ``var_j' = var_j (1 + pi (v - w_j^2 var_j)) / (1 + pi v)``.  ``d_mu`` receives the mean's change and
    ``new_var`` the new variance, both weighted by ``share`` (a run's weight when averaging runs).
    """
    for t in range(n):
        denom = 1.0 + pi[t] * tv[t]
        gain = (tau[t] - pi[t] * tm[t]) / denom
        for p in range(team_start[t0 + t], team_start[t0 + t + 1]):
            w = weight[p]
            v = var[p - p0]
            if share == 1.0:
                d_mu[p - p0] = w * v * gain
                new_var[p - p0] = v * (1.0 + pi[t] * (tv[t] - w * w * v)) / denom
            else:
                d_mu[p - p0] += share * w * v * gain
                new_var[p - p0] += share * v * (1.0 + pi[t] * (tv[t] - w * w * v)) / denom


@jit
def replay_trueskill(
    match_start: NDArray[np.int64], team_start: NDArray[np.int64], team_rank: NDArray[np.int64],
    row: NDArray[np.int64], weight: NDArray[np.float64], time: NDArray[np.float64],
    mu: NDArray[np.float64], sigma: NDArray[np.float64], games: NDArray[np.int64], last_time: NDArray[np.float64],
    hist_mu: NDArray[np.float64], hist_sigma: NDArray[np.float64], loglik: NDArray[np.float64], want_ll: bool,
    beta: float, tau: float, drift: float, margin: float, tolerance: float, max_iterations: int,
) -> int:
    """Replay a history under TrueSkill, in place; return how many matches did not converge.

    ``row[p]`` is the state row of player slot ``p``; ``hist_mu/hist_sigma[p]`` receive that player's
    rating after the match and ``loglik[m]`` the match's log-likelihood under the ratings before it (the
    predictive model of :meth:`TrueSkill.log_likelihood`, without dynamics; zeros unless ``want_ll``).
    """
    n_matches = len(match_start) - 1
    width = 2
    players = 1
    for m in range(n_matches):
        width = max(width, match_start[m + 1] - match_start[m])
        players = max(players, team_start[match_start[m + 1]] - team_start[match_start[m]])
    tm = np.empty(width)
    tv = np.empty(width)
    size = np.empty(width)
    pi = np.empty(width)
    tau_msg = np.empty(width)
    var = np.empty(players)
    new_mu = np.empty(players)
    new_var = np.empty(players)
    order = np.empty(width, dtype=np.int64)
    starts = np.empty(width + 1, dtype=np.int64)
    iw = np.empty((4, width), dtype=np.int64)
    fw = np.empty((7, width))
    beta2, tau2, drift2 = beta * beta, tau * tau, drift * drift
    unconverged = 0
    for m in range(n_matches):
        t0 = match_start[m]
        n = match_start[m + 1] - t0
        p0 = team_start[t0]
        p1 = team_start[t0 + n]
        rank = team_rank[t0:t0 + n]
        now = time[m]
        if want_ll:
            for p in range(p0, p1):
                var[p - p0] = sigma[row[p]] ** 2
            _team_priors(team_start, t0, n, row, weight, mu, var, p0, beta2, tm, tv, size)
            loglik[m] = _log_outcome(tm[:n], tv[:n], rank, size[:n], margin)
        else:
            loglik[m] = 0.0
        # dynamics: tau^2 per match, drift^2 per unit of time since the player's last match
        for p in range(p0, p1):
            r = row[p]
            v = sigma[r] ** 2 + tau2
            if drift2 > 0.0 and now == now and last_time[r] == last_time[r] and now > last_time[r]:
                v += drift2 * (now - last_time[r])
            var[p - p0] = v
        _team_priors(team_start, t0, n, row, weight, mu, var, p0, beta2, tm, tv, size)
        if n == 2:
            # One comparison: a single moment-matching step is the exact EP answer; skip the general path.
            r0, r1 = rank[0], rank[1]
            pi[0] = pi[1] = tau_msg[0] = tau_msg[1] = 0.0
            if r0 >= 0 or r1 >= 0:
                win = 0 if (r1 < 0 or (r0 >= 0 and r0 <= r1)) else 1
                lose = 1 - win
                if r0 < 0 or r1 < 0:
                    kind, eps = BELOW, 0.0
                else:
                    kind = DRAW if r0 == r1 else WIN
                    eps = margin * math.sqrt(size[0] + size[1])
                pi[win], tau_msg[win], pi[lose], tau_msg[lose] = _tilted_messages(
                    kind, eps, tm[win], tv[win], tm[lose], tv[lose])
            _apply_messages(team_start, t0, n, row, weight, var, p0, tm, tv, pi, tau_msg, new_mu, new_var, 1.0)
        else:
            groups, finishers = _canonical_order(tm[:n], tv[:n], rank, size[:n], order, starts)
            runs = tie_rotations(starts, groups)
            new_mu[:p1 - p0] = 0.0
            new_var[:p1 - p0] = 0.0
            for r in range(runs):
                if expectation_propagation(tm[:n], tv[:n], rank, size[:n], margin, tolerance, max_iterations,
                                           order, starts, groups, finishers, r, pi, tau_msg, iw, fw) < 0:
                    unconverged += 1
                _apply_messages(team_start, t0, n, row, weight, var, p0, tm, tv, pi, tau_msg, new_mu, new_var,
                                1.0 / runs)
        for p in range(p0, p1):
            r = row[p]
            mu[r] += new_mu[p - p0]
            sigma[r] = math.sqrt(new_var[p - p0])
            games[r] += 1
            if now == now:
                last_time[r] = now
            hist_mu[p] = mu[r]
            hist_sigma[p] = sigma[r]
    return unconverged


@jit
def log_match_quality(tm: NDArray[np.float64], skill_var: NDArray[np.float64], noise_var: NDArray[np.float64]
                      ) -> float:
    """``log`` of TrueSkill's match quality (paper, eq. 7, for ``n`` teams) from team-level sums.

    Team ``i`` has mean ``tm_i = sum w mu``, skill variance ``c_i = sum w^2 sigma^2`` and performance-noise
    variance ``b_i = beta^2 sum w^2``; let ``v_i = b_i + c_i``.  With ``D`` the ``(n-1) x n`` matrix of
    consecutive differences, the matrices of eq. 7 are ``D diag(x) D^T`` (``x = b`` or ``v``), whose
    determinant is ``prod_i x_i * sum_i 1/x_i`` (Cauchy-Binet: the spanning trees of a path), and
    ``(D tm)^T (D diag(v) D^T)^-1 (D tm) = sum_i (tm_i - m)^2 / v_i`` with ``m`` the ``1/v``-weighted mean of
    ``tm`` (the exponent of the density of all differences at zero).  So::

        log quality = 1/2 (sum log b_i + log sum 1/b_i - sum log v_i - log sum 1/v_i) - 1/2 sum (tm_i - m)^2 / v_i

    in ``O(n)``, independent of the order of the teams.
    """
    n = len(tm)
    log_b = 0.0
    inv_b = 0.0
    log_v = 0.0
    inv_v = 0.0
    wm = 0.0
    for i in range(n):
        # A partial-play weight below ~1e-162 makes w^2 underflow to 0; such a team is all but absent, and a
        # floor of 1e-300 keeps the formula finite instead of dividing by zero.
        b = max(noise_var[i], 1e-300)
        v = max(noise_var[i] + skill_var[i], 1e-300)
        log_b += math.log(b)
        inv_b += 1.0 / b
        log_v += math.log(v)
        inv_v += 1.0 / v
        wm += tm[i] / v
    wm /= inv_v
    q = 0.0
    for i in range(n):
        q += (tm[i] - wm) ** 2 / max(noise_var[i] + skill_var[i], 1e-300)
    return 0.5 * (log_b + math.log(inv_b) - log_v - math.log(inv_v)) - 0.5 * q


@jit
def log_qualities(match_start: NDArray[np.int64], team_start: NDArray[np.int64], row: NDArray[np.int64],
                  weight: NDArray[np.float64], mu: NDArray[np.float64], sigma: NDArray[np.float64], beta2: float,
                  out: NDArray[np.float64]) -> None:
    """``out[m]`` = :func:`log_match_quality` of match ``m`` (``row[p]``: the rating row of player slot ``p``)."""
    width = most_teams(match_start)
    tm = np.empty(width)
    skill = np.empty(width)
    noise = np.empty(width)
    for m in range(len(match_start) - 1):
        t0 = match_start[m]
        n = match_start[m + 1] - t0
        for t in range(n):
            a = 0.0
            c = 0.0
            w2 = 0.0
            for p in range(team_start[t0 + t], team_start[t0 + t + 1]):
                w = weight[p]
                a += w * mu[row[p]]
                c += w * w * sigma[row[p]] ** 2
                w2 += w * w
            tm[t] = a
            skill[t] = c
            noise[t] = beta2 * w2
        out[m] = log_match_quality(tm[:n], skill[:n], noise[:n])


class TrueSkill(Model):
    """TrueSkill (Herbrich, Minka & Graepel 2007): skills with uncertainty, learnt by expectation propagation.

    Parameters
    ----------
    mu : float, default 25
        Mean of a new player's skill.
    sigma : float, default 25/3
        Standard deviation of a new player's skill.
    beta : float, default 25/6
        Standard deviation of a performance around the skill (the paper's ``beta``).
    tau : float, default 25/300
        Dynamics: ``tau^2`` is added to each player's variance before every match.
    draw_probability : float, default 0.10
        Probability of a draw between two equal one-player teams; sets the draw margin
        ``eps = Phi^-1((p + 1)/2) sqrt(n1 + n2) beta`` for teams of ``n1`` and ``n2`` players.
    drift : float, default 0
        Dynamics in time: ``drift^2`` per unit of ``Match.time`` since the player's last match is added to
        the variance (only in a :class:`podium.League`, which knows when each player last played).
    tolerance : float, default 1e-6
        Expectation propagation stops when no message moves its team's marginal by more than this: the
        mean's move in the marginal's standard deviations plus the precision's relative change.
    max_iterations : int, default 100
        Most forward-backward sweeps per match; reaching it gives a :class:`ConvergenceWarning`.

    Notes
    -----
    Draws use the draw margin; non-finishers are compared one-sidedly with the last finishers (never a
    draw factor), so their means never rise.  Ties are symmetric: all pairs of a tied group are compared.
    Predictions (:meth:`win_probabilities`, :meth:`log_likelihood`, :meth:`quality`) use the predictive
    model of the ratings as given, team performances ``N(sum w mu, sum w^2 (sigma^2 + beta^2))``, without the
    dynamics of the next update.

    Examples
    --------
    >>> import podium
    >>> ts = podium.TrueSkill()
    >>> new = ts.rate(podium.Match([["ann"], ["bob"]]), {})
    >>> round(new["ann"].mu, 3), round(new["ann"].sigma, 3)
    (29.396, 7.171)
    """

    _fit_space = {"beta": "positive", "tau": "positive", "sigma": "positive", "draw_probability": "probability",
                  "drift": "positive"}
    # sigma is left out by default: with mu fixed, scaling sigma, beta, tau and drift together changes no
    # prediction, so fitting all four has a flat direction; beta and tau relative to sigma are what matter.
    _fit_default = ("beta", "tau", "draw_probability")

    def _fit_start(self, name: str) -> float:
        if name == "drift" and self.drift == 0:
            return max(float(self.tau), float(self.sigma) / 100.0)  # per unit of time; a small nonzero start
        if name == "tau" and self.tau == 0:
            return float(self.sigma) / 100.0
        return float(getattr(self, name))

    def __init__(
        self, *, mu: float = 25.0, sigma: float = 25.0 / 3.0, beta: float = 25.0 / 6.0, tau: float = 25.0 / 300.0,
        draw_probability: float = 0.10, drift: float = 0.0, tolerance: float = 1e-6, max_iterations: int = 100,
    ) -> None:
        self.mu = mu
        self.sigma = sigma
        self.beta = beta
        self.tau = tau
        self.draw_probability = draw_probability
        self.drift = drift
        self.tolerance = tolerance
        self.max_iterations = max_iterations
        self._finite("mu", mu)
        self._positive("sigma", sigma)
        self._positive("beta", beta)
        self._non_negative("tau", tau)
        self._non_negative("drift", drift)
        self._positive("tolerance", tolerance)
        self._probability("draw_probability", draw_probability)
        self._positive_int("max_iterations", max_iterations)
        self._prior = Rating(float(mu), float(sigma))
        # eps / (sqrt(n1 + n2) beta) = Phi^-1((p + 1) / 2)   (paper, section 4.1)
        self._margin = statistics.NormalDist().inv_cdf((draw_probability + 1.0) / 2.0) * float(beta)

    @property
    def prior(self) -> Rating:
        return self._prior

    def draw_margin(self, players: int = 2) -> float:
        """The draw margin ``eps`` for a comparison of two teams with ``players`` players in all."""
        return self._margin * math.sqrt(players)

    # -- the engine ----------------------------------------------------------------------------------
    def _replay(self, matches: Matches, slot_index: NDArray[np.int64], state: _State,
                history: _History | None, loglik: NDArray[np.float64] | None = None) -> None:
        n_slots, n_matches = len(matches.player), len(matches)
        rows = _state_rows(matches, slot_index)
        hist_mu = history.mu if history is not None else np.empty(n_slots)
        hist_sigma = history.sigma if history is not None else np.empty(n_slots)
        ll = loglik if loglik is not None else np.empty(n_matches)
        unconverged = replay_trueskill(
            matches.match_start, matches.team_start, matches.team_rank, rows, matches.weight, matches.time,
            state.mu, state.sigma, state.games, state.last_time, hist_mu, hist_sigma, ll, loglik is not None,
            float(self.beta), float(self.tau), float(self.drift), self._margin, float(self.tolerance),
            int(self.max_iterations),
        )
        if unconverged:
            warnings.warn(
                f"TrueSkill: expectation propagation did not reach tolerance={self.tolerance!r} within "
                f"max_iterations={self.max_iterations!r} sweeps in {unconverged} of {n_matches} matches; "
                "their updates use the last sweep.", ConvergenceWarning, stacklevel=3)

    def _team_predictive(self, packed: Matches, mu: NDArray[np.float64], sigma: NDArray[np.float64]
                         ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        n = len(packed.team_rank)
        tm, tv, size = np.empty(n), np.empty(n), np.empty(n)
        _team_priors(packed.team_start, 0, n, packed.player, packed.weight, mu, sigma[packed.player] ** 2, 0,
                     float(self.beta) ** 2, tm, tv, size)
        return tm, tv, size

    def _predictive(self, packed: Matches, mu: NDArray[np.float64], sigma: NDArray[np.float64]
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64], str, float]:
        tm, tv, _ = self._team_predictive(packed, mu, sigma)
        return tm, np.sqrt(tv), "gaussian", 0.0

    def _log_win(self, packed: Matches, mu: NDArray[np.float64], sigma: NDArray[np.float64]) -> NDArray[np.float64]:
        tm, tv, _ = self._team_predictive(packed, mu, sigma)
        return log_win_probabilities(tm, scale=np.sqrt(tv))

    # -- predictions -------------------------------------------------------------------------------------
    def log_likelihood(self, match: Match, ratings: Mapping[str, Rating]) -> float:
        """``log P(the match's outcome | ratings before it)`` under the predictive model.

        Team performances are independent ``N(sum w mu, sum w^2 (sigma^2 + beta^2))``.  A win is a
        performance higher by more than the draw margin; an outcome without draws has the exact
        probability of the chain ``X_1 - X_2 > eps_12 > ...``; non-finishers are below the last
        finishers in any order; a tied group is the event that all its members lie within the margin
        below its best member (exact, ``|X_a - X_b| <= eps``, for two teams).  See
        :func:`podium.ordering.log_outcome`.
        """
        packed, mu, sigma = self._pack(match, ratings)
        tm, tv, size = self._team_predictive(packed, mu, sigma)
        return float(_log_outcome(tm, tv, packed.team_rank, size, self._margin))

    def quality(self, teams: Sequence[Sequence[str]], ratings: Mapping[str, Rating],
                weights: Sequence[Sequence[float]] | None = None) -> float:
        """Match quality: the probability of a draw relative to the highest possible (paper, eq. 7).

        For ``n`` teams with ``A`` the ``(n - 1) x players`` matrix of weighted differences between
        consecutive teams (row ``k``: ``+w`` for team ``k``, ``-w`` for team ``k+1``), ``mu`` and
        ``Sigma = diag(sigma^2)`` the players' ratings::

            quality = sqrt(det(beta^2 A A^T) / det(beta^2 A A^T + A Sigma A^T))
                      * exp(-1/2 mu^T A^T (beta^2 A A^T + A Sigma A^T)^-1 A mu)

        i.e. the density of all consecutive differences at zero, relative to the same density with
        ``Sigma = 0`` and equal means (the generalization of eq. 7 in Moserware's "The Math Behind
        TrueSkill").  It is computed in ``O(n)`` by :func:`log_match_quality`, without matrices.  For two
        one-player teams it is ``sqrt(2 beta^2 / c^2) exp(-(mu_1 - mu_2)^2 / (2 c^2))``,
        ``c^2 = 2 beta^2 + sigma_1^2 + sigma_2^2``.
        """
        packed, mu, sigma = self._pack(Match(teams, weights=weights), ratings)
        return float(np.exp(self._log_qualities(packed, mu, sigma)[0]))

    def _log_qualities(self, packed: Matches, mu: NDArray[np.float64], sigma: NDArray[np.float64]
                       ) -> NDArray[np.float64]:
        """``log quality`` of every match of ``packed`` (players index ``mu`` and ``sigma``)."""
        out = np.empty(len(packed))
        log_qualities(packed.match_start, packed.team_start, packed.player, packed.weight, mu, sigma,
                      float(self.beta) ** 2, out)
        return out
