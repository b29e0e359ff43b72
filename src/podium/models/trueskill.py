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
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..match import Match, Matches
from ..numerics import (BELOW, DRAW, WIN, comparison_message, jit, log_ndtr, log_ndtr_diff, tilted_messages,
                        truncate)
from ..ordering import GAUSSIAN, log_outcome, log_win_probabilities, rank_groups
from ..rating import Rating
from .base import Model, _History, _State, _state_rows, most_players, most_teams

__all__ = ["TrueSkill", "ConvergenceWarning"]

_UNDAMPED = 20  # sweeps before expectation propagation damps its updates
# The largest standard deviation (of a rating, or of the model's sigma, beta, tau, drift) TrueSkill accepts: its
# square, and sums of a few thousand such squares, stay finite floats.  Variances grown by dynamics are capped at
# its square, so no rating leaves the range.
SIGMA_MAX = 1e150
_VAR_MAX = SIGMA_MAX * SIGMA_MAX


class ConvergenceWarning(UserWarning):
    """Expectation propagation reached ``max_iterations`` before its messages settled to ``tolerance``."""


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
    :func:`tie_rotations`); ``iw, fw``: workspaces of at least 2 and 11 rows of ``len(tm)`` entries.

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
            chain[k] = order[a + (k - a + rotation) % (b - a)]
    for k in range(finishers, n):
        chain[k] = order[k]
    for k in range(n):
        t = chain[k]
        p0[k] = 1.0 / tv[t]
        t0[k] = tm[t] / tv[t]
        a_p[k] = b_p[k] = p0[k]
        a_t[k] = b_t[k] = t0[k]
        d_p[k] = d_t[k] = u_p[k] = u_t[k] = 0.0
    last = finishers - 1
    for c in range(last):
        kind[c] = DRAW if rank[chain[c]] == rank[chain[c + 1]] else WIN
        eps[c] = margin * math.sqrt(size[chain[c]] + size[chain[c + 1]])
    star_p = 0.0  # the non-finishers' messages to L, summed
    star_t = 0.0
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
                 beta2: float, center: float, tm: NDArray[np.float64], tv: NDArray[np.float64],
                 size: NDArray[np.float64]) -> None:
    """Team performance means and variances: ``sum w (mu - center)`` and ``sum w^2 (var + beta^2)``.

    ``center`` is the prior mean for :class:`TrueSkill` (skills measured from a newcomer's, so that teams of
    newcomers are even whatever their sizes) and 0 for the paper's literal sum.

    ``var[p - p0]`` holds the variance of player slot ``p`` (after dynamics, or before for predictions).
    """
    for t in range(n):
        m = 0.0
        v = 0.0
        for p in range(team_start[t0 + t], team_start[t0 + t + 1]):
            w = weight[p]
            m += w * (mu[row[p]] - center)
            v += w * w * (var[p - p0] + beta2)
        tm[t] = m
        tv[t] = v
        size[t] = team_start[t0 + t + 1] - team_start[t0 + t]


@jit
def condition(pi: float, tau: float, tm: float, tv: float, w: float, v: float) -> tuple[float, float]:
    """One player's change of mean and new variance from its team's message ``(pi, tau)``.

    Gaussian conditioning through the sum and performance factors: with the team's prior ``N(tm, tv)`` and the
    player's weight ``w`` and variance ``v``, ``d mu = w v (tau - pi tm) / (1 + pi tv)`` and
    ``v' = v (1 + pi (tv - w^2 v)) / (1 + pi tv)`` (written so that nothing cancels).
    """
    denom = 1.0 + pi * tv
    return w * v * ((tau - pi * tm) / denom), v * (1.0 + pi * (tv - w * w * v)) / denom


@jit
def two_teams(r0: int, r1: int, margin: float, players: float) -> tuple[int, int, float]:
    """The one comparison of a two-team match: ``(better, kind, eps)``, with ``better`` the index (0 or 1) of the
    team compared as the better one, or ``(-1, 0, 0)`` when neither finished (nothing to compare).

    A non-finisher is below a finisher (``BELOW``, no margin); finishers draw (``DRAW``) or win (``WIN``) with
    the margin ``margin * sqrt(players)`` of the two teams' ``players``.
    """
    if r0 < 0 and r1 < 0:
        return -1, 0, 0.0
    better = 0 if (r1 < 0 or (r0 >= 0 and r0 <= r1)) else 1
    if r0 < 0 or r1 < 0:
        return better, BELOW, 0.0
    return better, DRAW if r0 == r1 else WIN, margin * math.sqrt(players)


@jit
def _apply_messages(team_start: NDArray[np.int64], t0: int, n: int, row: NDArray[np.int64],
                    weight: NDArray[np.float64], var: NDArray[np.float64], p0: int, tm: NDArray[np.float64],
                    tv: NDArray[np.float64], pi: NDArray[np.float64], tau: NDArray[np.float64],
                    d_mu: NDArray[np.float64], new_var: NDArray[np.float64], share: float) -> None:
    """Pass each team's message ``(pi, tau)`` down to its players; add ``share`` of the result.

    Gaussian conditioning through the sum and performance factors: with the team's prior ``N(m, v)``,
    ``mu_j += w_j var_j (tau - pi m) / (1 + pi v)`` and
    ``var_j' = var_j (1 + pi (v - w_j^2 var_j)) / (1 + pi v)``.  ``d_mu`` receives the mean's change and
    ``new_var`` the new variance, both weighted by ``share`` (a run's weight when averaging runs).  Per player
    this is :func:`condition`'s formula with the team's gain computed once (calling :func:`condition` per player
    halved the replay of 2 v 2 histories, 10.8 to 5.4 M matches/s).
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
def _skill_var(sigma: float, tau2: float, drift2: float, now: float, last: float) -> float:
    """A player's skill variance going into a match: ``sigma^2 + tau^2`` plus ``drift^2`` per unit of time since
    the player's last match (when both times are known), capped at ``SIGMA_MAX^2`` so that ``sigma`` stays in the
    range every kernel handles."""
    v = sigma ** 2 + tau2
    if drift2 > 0.0 and now == now and last == last and now > last:
        v += drift2 * (now - last)
    return min(v, _VAR_MAX)


@jit
def match_workspace(width: int, players: int) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64],
                                                        NDArray[np.float64], NDArray[np.float64], NDArray[np.int64],
                                                        NDArray[np.int64], NDArray[np.int64], NDArray[np.float64],
                                                        NDArray[np.float64], NDArray[np.float64]]:
    """Scratch arrays for rating matches of up to ``width`` teams and ``players`` player slots: ``tm, tv, size,
    pi, tau_msg`` (per team), ``order, starts`` (:func:`_canonical_order`), ``iw, fw``
    (:func:`expectation_propagation`), ``new_mu, new_var`` (per player)."""
    return (np.empty(width), np.empty(width), np.empty(width), np.empty(width), np.empty(width),
            np.empty(width, dtype=np.int64), np.empty(width + 1, dtype=np.int64), np.empty((2, width), dtype=np.int64),
            np.empty((11, width)), np.empty(players), np.empty(players))


@jit
def rate_teams(
    team_start: NDArray[np.int64], t0: int, n: int, row: NDArray[np.int64], weight: NDArray[np.float64],
    mu: NDArray[np.float64], var: NDArray[np.float64], p0: int, rank: NDArray[np.int64], beta2: float, center: float,
    margin: float, tolerance: float, max_iterations: int, tm: NDArray[np.float64], tv: NDArray[np.float64],
    size: NDArray[np.float64], pi: NDArray[np.float64], tau_msg: NDArray[np.float64], order: NDArray[np.int64],
    starts: NDArray[np.int64], iw: NDArray[np.int64], fw: NDArray[np.float64], new_mu: NDArray[np.float64],
    new_var: NDArray[np.float64],
) -> int:
    """The update of a match of three or more teams: each player's change of mean and new variance.

    Player slot ``p`` of the match (teams ``t0 .. t0 + n``) has mean ``mu[row[p]]`` and variance ``var[p - p0]``
    (dynamics already added); ``new_mu[p - p0]`` receives the change of its mean and ``new_var[p - p0]`` its
    new variance.  The teams' priors (:func:`_team_priors`), :func:`expectation_propagation` once per chain of
    the tied groups, and the messages passed down to the players (:func:`_apply_messages`), averaged over the
    chains.  :func:`replay_trueskill` and TrueSkill Through Time's smoother call it; both rate two teams in
    their own loops with the same functions (``_team_priors``' sums, :func:`two_teams`,
    :func:`tilted_messages`, :func:`condition`): a call passing these twenty arrays costs ~250 ns, ten times a
    duel's arithmetic.  The rest are workspaces (:func:`match_workspace`).  Returns how many EP runs missed
    ``tolerance``.
    """
    _team_priors(team_start, t0, n, row, weight, mu, var, p0, beta2, center, tm, tv, size)
    unconverged = 0
    groups, finishers = _canonical_order(tm[:n], tv[:n], rank, size[:n], order, starts)
    runs = tie_rotations(starts, groups)
    if runs > 1:
        players = team_start[t0 + n] - p0
        new_mu[:players] = 0.0
        new_var[:players] = 0.0
    for r in range(runs):
        if expectation_propagation(tm[:n], tv[:n], rank, size[:n], margin, tolerance, max_iterations,
                                   order, starts, groups, finishers, r, pi, tau_msg, iw, fw) < 0:
            unconverged += 1
        _apply_messages(team_start, t0, n, row, weight, var, p0, tm, tv, pi, tau_msg, new_mu, new_var,
                        1.0 / runs)
    return unconverged


@jit
def replay_trueskill(
    match_start: NDArray[np.int64], team_start: NDArray[np.int64], team_rank: NDArray[np.int64],
    row: NDArray[np.int64], weight: NDArray[np.float64], time: NDArray[np.float64],
    mu: NDArray[np.float64], sigma: NDArray[np.float64], games: NDArray[np.int64], last_time: NDArray[np.float64],
    hist_mu: NDArray[np.float64], hist_sigma: NDArray[np.float64], loglik: NDArray[np.float64],
    beta: float, tau: float, drift: float, margin: float, tolerance: float, max_iterations: int, center: float,
) -> int:
    """Replay a history under TrueSkill, in place; return how many matches did not converge.

    Team performances are measured from ``center`` (:func:`_team_priors`).

    ``row[p]`` is the state row of player slot ``p``; ``hist_mu/hist_sigma[p]`` receive that player's
    rating after the match and ``loglik[m]`` the match's log-likelihood under the ratings before it (the
    predictive model of :meth:`TrueSkill.log_likelihood`, without dynamics).  Empty ``hist_mu`` or
    ``loglik`` arrays mean "not wanted": nothing is computed or written for them.

    Two teams need no iteration (one moment-matching step is the exact EP answer): a duel of one player
    each runs in scalars, larger teams through the team sums; more teams run :func:`expectation_propagation`
    once per chain of their tied groups (:func:`tie_rotations`), averaging the players' posteriors.
    """
    keep = len(hist_mu) > 0
    want_ll = len(loglik) > 0
    n_matches = len(match_start) - 1
    players = most_players(match_start, team_start)
    tm, tv, size, pi, tau_msg, order, starts, iw, fw, new_mu, new_var = match_workspace(most_teams(match_start),
                                                                                        players)
    var = np.empty(players)
    beta2, tau2, drift2 = beta * beta, tau * tau, drift * drift
    unconverged = 0
    for m in range(n_matches):
        t0 = match_start[m]
        n = match_start[m + 1] - t0
        p0 = team_start[t0]
        p1 = team_start[t0 + n]
        rank = team_rank[t0:t0 + n]
        now = time[m]
        if n == 2 and p1 - p0 == 2:
            # A duel: the same arithmetic as the team path below (bit for bit), in scalars.
            ra, rb = row[p0], row[p0 + 1]
            wa, wb = weight[p0], weight[p0 + 1]
            if want_ll:
                tm[0], tm[1] = wa * (mu[ra] - center), wb * (mu[rb] - center)
                tv[0] = wa * wa * (sigma[ra] ** 2 + beta2)
                tv[1] = wb * wb * (sigma[rb] ** 2 + beta2)
                size[0] = size[1] = 1.0
                loglik[m] = _log_outcome(tm[:2], tv[:2], rank, size[:2], margin)
            va = _skill_var(sigma[ra], tau2, drift2, now, last_time[ra])
            vb = _skill_var(sigma[rb], tau2, drift2, now, last_time[rb])
            ma, mb = wa * (mu[ra] - center), wb * (mu[rb] - center)
            tva, tvb = wa * wa * (va + beta2), wb * wb * (vb + beta2)
            pa = ta = pb = tb = 0.0
            r0, r1 = rank[0], rank[1]
            if r0 >= 0 or r1 >= 0:
                if r0 < 0 or r1 < 0:
                    kind, eps = BELOW, 0.0
                else:
                    kind = DRAW if r0 == r1 else WIN
                    eps = margin * math.sqrt(2.0)
                if r1 < 0 or (r0 >= 0 and r0 <= r1):
                    pa, ta, pb, tb = tilted_messages(kind, eps, ma, tva, mb, tvb)
                else:
                    pb, tb, pa, ta = tilted_messages(kind, eps, mb, tvb, ma, tva)
            denom = 1.0 + pa * tva
            mu[ra] += wa * va * ((ta - pa * ma) / denom)
            sigma[ra] = math.sqrt(va * (1.0 + pa * (tva - wa * wa * va)) / denom)
            denom = 1.0 + pb * tvb
            mu[rb] += wb * vb * ((tb - pb * mb) / denom)
            sigma[rb] = math.sqrt(vb * (1.0 + pb * (tvb - wb * wb * vb)) / denom)
            games[ra] += 1
            games[rb] += 1
            if now == now:
                last_time[ra] = last_time[rb] = now
            if keep:
                hist_mu[p0], hist_sigma[p0] = mu[ra], sigma[ra]
                hist_mu[p0 + 1], hist_sigma[p0 + 1] = mu[rb], sigma[rb]
            continue
        if want_ll:
            for p in range(p0, p1):
                var[p - p0] = sigma[row[p]] ** 2
            _team_priors(team_start, t0, n, row, weight, mu, var, p0, beta2, center, tm, tv, size)
            loglik[m] = _log_outcome(tm[:n], tv[:n], rank, size[:n], margin)
        for p in range(p0, p1):
            r = row[p]
            var[p - p0] = _skill_var(sigma[r], tau2, drift2, now, last_time[r])
        if n == 2:  # one comparison, exact in one step: rate_teams's two-team case, kept in the loop for speed
            _team_priors(team_start, t0, n, row, weight, mu, var, p0, beta2, center, tm, tv, size)
            pi[0] = pi[1] = tau_msg[0] = tau_msg[1] = 0.0
            win, kind, eps = two_teams(rank[0], rank[1], margin, size[0] + size[1])
            if win >= 0:
                lose = 1 - win
                pi[win], tau_msg[win], pi[lose], tau_msg[lose] = tilted_messages(
                    kind, eps, tm[win], tv[win], tm[lose], tv[lose])
            _apply_messages(team_start, t0, n, row, weight, var, p0, tm, tv, pi, tau_msg, new_mu, new_var, 1.0)
        else:
            unconverged += rate_teams(team_start, t0, n, row, weight, mu, var, p0, rank, beta2, center, margin,
                                      tolerance, max_iterations, tm, tv, size, pi, tau_msg, order, starts, iw, fw,
                                      new_mu, new_var)
        for p in range(p0, p1):
            r = row[p]
            mu[r] += new_mu[p - p0]
            sigma[r] = math.sqrt(new_var[p - p0])
            games[r] += 1
            if now == now:
                last_time[r] = now
            if keep:
                hist_mu[p] = mu[r]
                hist_sigma[p] = sigma[r]
    return unconverged


@jit
def history_log_likelihoods(
    match_start: NDArray[np.int64], team_start: NDArray[np.int64], team_rank: NDArray[np.int64],
    row: NDArray[np.int64], weight: NDArray[np.float64], start_mu: NDArray[np.float64],
    start_sigma: NDArray[np.float64], hist_mu: NDArray[np.float64], hist_sigma: NDArray[np.float64],
    n_rows: int, beta2: float, margin: float, center: float, out: NDArray[np.float64],
) -> None:
    """Each match's log-likelihood from a replay's history, as :func:`replay_trueskill` would have written it.

    The rating a player brought to slot ``p`` is the one written after that player's previous slot of the
    batch, or ``start_mu/start_sigma[p]`` (the state when the batch began) for a first appearance; from it
    the team priors and :func:`_log_outcome` are exactly the replay's (same operations, same order), so
    deferring gives the same numbers bit for bit.
    """
    last = np.full(n_rows, -1, dtype=np.int64)
    before_mu = np.empty(len(row))  # indexed by slot, as the history is
    before_var = np.empty(len(row))
    ident = np.arange(len(row))
    width = most_teams(match_start)
    tm = np.empty(width)
    tv = np.empty(width)
    size = np.empty(width)
    for m in range(len(match_start) - 1):
        t0 = match_start[m]
        n = match_start[m + 1] - t0
        p0 = team_start[t0]
        p1 = team_start[t0 + n]
        for p in range(p0, p1):
            q = last[row[p]]
            if q >= 0:
                before_mu[p] = hist_mu[q]
                before_var[p] = hist_sigma[q] ** 2
            else:
                before_mu[p] = start_mu[p]
                before_var[p] = start_sigma[p] ** 2
        _team_priors(team_start, t0, n, ident, weight, before_mu, before_var[p0:], p0, beta2, center, tm, tv, size)
        out[m] = _log_outcome(tm[:n], tv[:n], team_rank[t0:t0 + n], size[:n], margin)
        for p in range(p0, p1):
            last[row[p]] = p


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
                  center: float, out: NDArray[np.float64]) -> None:
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
                a += w * (mu[row[p]] - center)
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
    center : bool, default True
        Measure skills from ``mu`` in a team's performance, ``sum w (s - mu)``: a team of newcomers then
        performs like any other team of newcomers whatever its size.  ``False`` is the paper's literal
        ``sum w s`` (and the ``trueskill`` package's), under which a team of four newcomers is expected to beat
        a team of three by ``mu`` points (25 = 6 beta): pair log loss 0.89, worse than a coin flip, on 4 v 3
        with parties (``python benchmarks/teams.py``).  The two agree whenever the teams' weights sum alike
        (equal sizes, duels, free-for-alls).

    Notes
    -----
    Draws use the draw margin; non-finishers are compared one-sidedly with the last finishers (never a
    draw factor), so their means never rise.  Ties are symmetric: all pairs of a tied group are compared.
    Predictions (:meth:`win_probabilities`, :meth:`log_likelihood`, :meth:`quality`) use the predictive
    model of the ratings as given, team performances ``N(sum w (mu_i - mu), sum w^2 (sigma^2 + beta^2))``, without the
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
        center: bool = True,
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
        if not isinstance(center, bool):
            raise ValueError(f"The 'center' parameter of TrueSkill must be True or False. Got {center!r:.80} instead.")
        self.center = center
        self._center = float(mu) if center else 0.0
        for name in ("sigma", "beta", "tau", "drift"):
            value = getattr(self, name)
            if value > SIGMA_MAX:
                raise ValueError(f"The {name!r} parameter of TrueSkill must be at most {SIGMA_MAX:g} (its square must "
                                 f"stay a finite float). Got {value!r} instead.")
        self._prior = Rating(float(mu), float(sigma))
        # eps / (sqrt(n1 + n2) beta) = Phi^-1((p + 1) / 2)   (paper, section 4.1)
        self._margin = statistics.NormalDist().inv_cdf((draw_probability + 1.0) / 2.0) * float(beta)

    @property
    def prior(self) -> Rating:
        return self._prior

    def _check_rating(self, name: str, rating: Any) -> Rating:
        rating = super()._check_rating(name, rating)
        if rating.sigma > SIGMA_MAX:
            raise ValueError(f"'ratings[{name!r}]' has sigma={rating.sigma!r}; TrueSkill accepts sigma from 0 to "
                             f"{SIGMA_MAX:g} (its square must stay a finite float).")
        return rating

    def draw_margin(self, players: int = 2) -> float:
        """The draw margin ``eps`` for a comparison of two teams with ``players`` players in all."""
        return self._margin * math.sqrt(players)

    # -- the engine ----------------------------------------------------------------------------------
    def _replay(self, matches: Matches, slot_index: NDArray[np.int64], state: _State,
                history: _History | None, loglik: NDArray[np.float64] | None = None) -> None:
        n_matches = len(matches)
        rows = _state_rows(matches, slot_index)
        nothing = np.empty(0)  # what the kernel neither computes nor writes
        unconverged = replay_trueskill(
            matches.match_start, matches.team_start, matches.team_rank, rows, matches.weight, matches.time,
            state.mu, state.sigma, state.games, state.last_time,
            history.mu if history is not None else nothing, history.sigma if history is not None else nothing,
            loglik if loglik is not None else nothing,
            float(self.beta), float(self.tau), float(self.drift), self._margin, float(self.tolerance),
            int(self.max_iterations), self._center,
        )
        if unconverged:
            warnings.warn(
                f"TrueSkill: expectation propagation did not reach tolerance={self.tolerance!r} within "
                f"max_iterations={self.max_iterations!r} sweeps in {unconverged} of {n_matches} matches; "
                "their updates use the last sweep.", ConvergenceWarning, stacklevel=3)

    def _deferred_log_likelihoods(self, matches: Matches, slot_index: NDArray[np.int64], state: _State,
                                  history: _History) -> Callable[[], NDArray[np.float64]]:
        """The log-likelihoods, computed when read: each is an exact ordering probability
        (:func:`podium.ordering.log_outcome`), several times the cost of the update itself in free-for-alls.
        What they need besides the history is the state of the batch's players now (one gather)."""
        rows = _state_rows(matches, slot_index).copy()  # the league's mapping grows as players arrive
        start_mu, start_sigma = state.mu[rows], state.sigma[rows]
        n_rows, beta2, margin, center = len(state.mu), float(self.beta) ** 2, self._margin, self._center

        def compute() -> NDArray[np.float64]:
            out = np.empty(len(matches))
            if len(matches):
                history_log_likelihoods(matches.match_start, matches.team_start, matches.team_rank, rows,
                                        matches.weight, start_mu, start_sigma, history.mu, history.sigma,
                                        n_rows, beta2, margin, center, out)
            return out

        return compute

    def _team_predictive(self, packed: Matches, mu: NDArray[np.float64], sigma: NDArray[np.float64]
                         ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        n = len(packed.team_rank)
        tm, tv, size = np.empty(n), np.empty(n), np.empty(n)
        _team_priors(packed.team_start, 0, n, packed.player, packed.weight, mu, sigma[packed.player] ** 2, 0,
                     float(self.beta) ** 2, self._center, tm, tv, size)
        return tm, tv, size

    def _predictive(self, packed: Matches, mu: NDArray[np.float64], sigma: NDArray[np.float64]
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64], str, float]:
        tm, tv, _ = self._team_predictive(packed, mu, sigma)
        return tm, np.sqrt(tv), "gaussian", 0.0

    def _skill_dynamics(self) -> tuple[float, float]:
        # tau^2 before each of a player's matches, drift^2 per unit of time (the module docstring's dynamics)
        return float(self.tau) ** 2, float(self.drift) ** 2

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
                      float(self.beta) ** 2, self._center, out)
        return out
