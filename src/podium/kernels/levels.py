"""The level correction of whole-history smoothing (:class:`podium.TrueSkillThroughTime`): the piecewise-linear
common shift ``c(t)`` over at most :data:`LEVEL_KNOTS` batch times that minimizes the prior and walk terms at
the current means, solved by a dense Cholesky in numba (``docs/design.md``, "Level correction", says why).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from ..ordering.numerics import jit
from .common import all_scored

__all__ = ["LEVEL_KNOTS", "hat_weights", "shift_invariant", "level_system", "level_constant", "shift_levels",
           "solve_spd"]

# Knots of the level correction (see :meth:`TrueSkillThroughTime._level`): at most this many batch times.
LEVEL_KNOTS = 256


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
def hat_weights(sv_time: NDArray[np.float64], knots: NDArray[np.float64]
                ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """:func:`_basis` at every skill variable's time, once per history (the times do not change)."""
    b = np.empty(len(sv_time), dtype=np.int64)
    u = np.empty(len(sv_time))
    for k in range(len(sv_time)):
        b[k], u[k] = _basis(sv_time[k], knots)
    return b, u


@jit
def shift_invariant(match_start: NDArray[np.int64], team_start: NDArray[np.int64],
                     weight: NDArray[np.float64], team_rank: NDArray[np.int64],
                     score: NDArray[np.float64], match_weight: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Whether each match's messages move with its players when all their skills move by one amount, so that the
    level step may shift them: its teams' total weights are equal (then every difference of team performances
    stays as it was), and its update is one factor's projection.

    A match of three or more teams with a tied group (two equal ranks, non-finishers too) is rated by the average of
    its group's orders (:func:`~podium.kernels.trueskill.rate_teams`); each order's messages pull the players'
    level by nothing at their own posterior (the order depends on differences only), but their average does not,
    at the averaged posterior, so a level step that moved them along would undo part of every sweep and the two
    would cycle (measured: a 48-match history still moved by 0.12 after 3,000 sweeps).  Such a match enters the
    level step as fixed observations, unless the model reads its scores (``score``, signed, NaN: none; empty:
    scores not read) and every team has one: the scores' Gaussian likelihood is then the whole factor.  So does a
    match whose weight (``match_weight[m]``; empty: none) is not 1: its messages are a projection's to that power,
    which pulls by nothing at the untempered posterior only."""
    out = np.empty(len(match_start) - 1, dtype=np.bool_)
    for m in range(len(match_start) - 1):
        first = 0.0
        ok = True
        t0, t1 = match_start[m], match_start[m + 1]
        if len(match_weight) > 0 and match_weight[m] != 1.0:
            ok = False
        elif t1 - t0 >= 3 and not (len(score) > 0 and all_scored(score, t0, t1 - t0)):
            for t in range(t0, t1):
                for u in range(t + 1, t1):
                    if team_rank[t] == team_rank[u]:
                        ok = False
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
def level_system(match_start: NDArray[np.int64], team_start: NDArray[np.int64], invariant: NDArray[np.bool_],
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
def level_constant(match_start: NDArray[np.int64], team_start: NDArray[np.int64], invariant: NDArray[np.bool_],
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
def shift_levels(match_start: NDArray[np.int64], team_start: NDArray[np.int64], invariant: NDArray[np.bool_],
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
def solve_spd(a: NDArray[np.float64], rhs: NDArray[np.float64]) -> NDArray[np.float64]:
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
