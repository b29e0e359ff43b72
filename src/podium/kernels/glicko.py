"""Glicko-2 numerics: one player's update over one rating period.

Glickman (2001), "Dynamic paired comparison models with stochastic variances", J. Applied Statistics
28(6); the algorithm as in Glickman (2012), "Example of the Glicko-2 system", whose step numbers are used here.
On the Glicko-2 scale (step 2) ``mu = (r - 1500) / 173.7178`` and ``phi = RD / 173.7178``.  Against opponents
``j`` with results ``s_j`` (1, 1/2, 0) in the period:

* step 3: ``g(phi) = 1 / sqrt(1 + 3 phi^2 / pi^2)``, ``E_j = 1 / (1 + exp(-g(phi_j) (mu - mu_j)))``,
  ``v = [sum_j g(phi_j)^2 E_j (1 - E_j)]^-1``;
* step 4: ``Delta = v sum_j g(phi_j) (s_j - E_j)``;
* step 5: ``sigma' = exp(x* / 2)`` with ``x*`` the root of
  ``f(x) = e^x (Delta^2 - phi^2 - v - e^x) / (2 (phi^2 + v + e^x)^2) - (x - a) / tau^2``, ``a = ln sigma^2``,
  found by the Illinois variant of regula falsi to ``|B - A| <= epsilon``;
* step 6: ``phi* = sqrt(phi^2 + sigma'^2)``;
* step 7: ``phi' = 1 / sqrt(1 / phi*^2 + 1 / v)``, ``mu' = mu + phi'^2 sum_j g(phi_j) (s_j - E_j)``;
* a player without games keeps ``mu`` and ``sigma`` and gets ``phi' = sqrt(phi^2 + sigma^2)`` (step 6);
* step 8, left to the caller: ``r' = 173.7178 mu' + 1500``, ``RD' = 173.7178 phi'``.

The caller accumulates ``v_inv = 1 / v`` and ``delta_sum = Delta / v`` over the period's games (computing
``1 - E_j`` as ``expected_score(mu_j, mu, phi_j)`` keeps it accurate for near-certain results).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..ordering.numerics import jit
from .common import logistic_logs, logistic_pairs, match_slots, most_players, most_teams, played
from .elo import MEAN, pair_score

__all__ = ["SCALE", "LARGEST", "glicko_g", "expected_score", "new_volatility", "period_update", "composites",
           "composite_pairs", "replay_glicko2"]
SCALE = 173.7178  # rating points per Glicko-2 unit, 400 / ln 10 as Glickman rounds it
_MAX_STEPS = 10_000  # guards both loops of step 5; ordinary inputs need a handful of steps
_V_INV_FLOOR = 1e-100  # keeps v, Delta and Delta^2 finite (see period_update)
_3_OVER_PI2 = 3.0 / (math.pi * math.pi)


# Rows of new_volatilities' work array: inputs phi^2, sigma^2, v, Delta^2; the note's a, A, B, f_A, f_B and the
# exponentials of A and B; the answer sigma'.
_PHI2, _SIGMA2, _V, _DELTA2, _A, _XA, _XB, _FA, _FB, _EA, _EB, _OUT = range(12)


# -- the model: rating periods, teams and free-for-alls -------------------------------------------------------
# Columns of a player's row of State.extra: the volatility shown; the open rating period (NaN: none, so the next
# match opens one); the period's start (mu0, phi0 on the Glicko-2 scale, sigma0) and its sums v_inv, delta_sum; the
# player's last timed period (NaN: none), from which the periods sat out are counted across untimed matches.
VOL, OPEN, MU0, PHI0, VOL0, V_INV, DELTA, LAST = range(8)


@jit
def glicko_g(phi: float) -> float:
    """``g(phi) = 1 / sqrt(1 + 3 phi^2 / pi^2)``: how much an opponent's uncertainty damps the game (step 3); of a
    float or, elementwise, of an array."""
    return 1.0 / np.sqrt(1.0 + _3_OVER_PI2 * phi * phi)


@jit
def expected_score(mu: float, mu_j: float, phi_j: float) -> float:
    """``E = 1 / (1 + exp(-g(phi_j) (mu - mu_j)))`` (step 3), with no overflow for any ``mu - mu_j``."""
    return _sigmoids(glicko_g(phi_j) * (mu - mu_j))[0]


@jit
def _sigmoids(z: float) -> tuple[float, float]:
    """``(1 / (1 + e^-z), 1 / (1 + e^z))`` from one exponential of ``-|z|`` (which cannot overflow), each
    accurate to its last bits, so that ``1 - E`` of a near-certain result keeps its digits."""
    e = math.exp(-abs(z))
    big = 1.0 / (1.0 + e)
    small = e * big
    return (big, small) if z >= 0.0 else (small, big)


@jit
def _scaled_f_at(x: float, ex: float, a: float, delta2: float, q: float, tau2: float) -> float:
    """``tau^2 f(x)`` given ``ex = e^x``, written ``tau^2 e^x / (2s) (Delta^2 / s - 1) - (x - a)`` for
    ``s = q + e^x``.  The positive factor ``tau^2`` changes neither the signs nor the Illinois iterates
    (the secant step is scale-free) but keeps a tiny ``tau`` finite; ``s^2`` is never formed, and one division
    (``1 / s``) serves both quotients."""
    inv = 1.0 / (q + ex)
    return tau2 * (0.5 * ex * inv) * (delta2 * inv - 1.0) - (x - a)


@jit
def new_volatility(phi: float, sigma: float, v: float, delta: float, tau: float, epsilon: float) -> float:
    """Step 5: ``sigma' = exp(A / 2)`` where the Illinois algorithm leaves ``A`` within ``epsilon`` of the
    root of Glickman's ``f`` (module docstring); one player's :func:`new_volatilities`.

    Steps 5.1-5.5 of the note: ``A = a = ln sigma^2``; ``B = ln(Delta^2 - phi^2 - v)`` if
    ``Delta^2 > phi^2 + v``, else ``B = a - k tau`` for the first ``k = 1, 2, ...`` with ``f(a - k tau) >= 0``;
    then ``C = A + (A - B) f_A / (f_B - f_A)``; if ``f_C f_B <= 0`` then ``A, f_A = B, f_B`` else
    ``f_A = f_A / 2``; ``B, f_B = C, f_C``; while ``|B - A| > epsilon``.  Expects finite ``sigma > 0``,
    ``v > 0`` and finite ``Delta^2`` and ``phi^2 + v``.  The ``k`` search stops after 10,000 steps (ordinary
    inputs need a few, a ``tau`` below the spacing of floats near ``a`` more): then ``B = a - tau^2``, where
    ``f > 0`` since ``f(x) >= -1/2 + (a - x) / tau^2`` in this branch, or ``sigma`` (to rounding) if
    ``a - tau^2`` rounds to ``a``.
    """
    work = np.empty((_WORK, 1))
    work[_PHI2, 0], work[_SIGMA2, 0], work[_V, 0], work[_DELTA2, 0] = phi * phi, sigma * sigma, v, delta * delta
    new_volatilities(1, tau, epsilon, work)
    return work[_OUT, 0]
_WORK = 12


@jit
def new_volatilities(n: int, tau: float, epsilon: float, work: NDArray[np.float64]) -> None:
    """Step 5 for ``n`` players at once: :func:`new_volatility` of ``work[_PHI2 .. _DELTA2, i]`` into
    ``work[_OUT, i]``, with each player's iterates exactly those of solving it alone.

    The players advance in lockstep, one Illinois step each per round: their chains of dependent steps
    (an exponential and two divisions a step) are independent, so the processor overlaps them, and the
    players of a match cost little more than one.  Each ``f`` is computed once (the bracket's last value is
    ``f_B``); ``e^A`` rides along with ``A`` (``e^a = sigma^2``; the answer is ``sqrt(e^A)``, not ``exp(A/2)``);
    the first bracket's ``e^(a - tau) = sigma^2 e^-tau``, whose ``e^-tau`` does not wait for the logarithm.
    """
    tau = abs(tau)
    tau2 = tau * tau
    shrink = math.exp(-tau)
    for i in range(n):
        sigma2, delta2 = work[_SIGMA2, i], work[_DELTA2, i]
        q = work[_PHI2, i] + work[_V, i]
        a = math.log(sigma2)
        if delta2 > q:
            eb = delta2 - q
            b = math.log(eb)
        else:
            b = a - tau
            eb = sigma2 * shrink
            fb = _scaled_f_at(b, eb, a, delta2, q, tau2)
            k = 1
            while k < _MAX_STEPS and fb < 0.0:
                k += 1
                b = a - k * tau
                eb = math.exp(b)
                fb = _scaled_f_at(b, eb, a, delta2, q, tau2)
            if fb < 0.0:
                b = a - tau2
                eb = math.exp(b)
        work[_A, i], work[_XA, i], work[_XB, i], work[_EA, i], work[_EB, i] = a, a, b, sigma2, eb
        work[_FA, i] = _scaled_f_at(a, sigma2, a, delta2, q, tau2)
        work[_FB, i] = _scaled_f_at(b, eb, a, delta2, q, tau2)
    steps = 0
    active = n
    while active > 0 and steps < _MAX_STEPS:
        active = 0
        for i in range(n):
            x_a, x_b, fa, fb = work[_XA, i], work[_XB, i], work[_FA, i], work[_FB, i]
            if not (abs(x_b - x_a) > epsilon and fb != fa):
                continue
            active += 1
            a, delta2 = work[_A, i], work[_DELTA2, i]
            c = x_a + (x_a - x_b) * fa / (fb - fa)
            ec = math.exp(c)
            fc = _scaled_f_at(c, ec, a, delta2, work[_PHI2, i] + work[_V, i], tau2)
            if fc * fb <= 0.0:
                work[_XA, i], work[_FA, i], work[_EA, i] = x_b, fb, work[_EB, i]
            else:
                work[_FA, i] = 0.5 * fa  # Illinois: halve the stale end so that it, too, moves
            work[_XB, i], work[_FB, i], work[_EB, i] = c, fc, ec
        steps += 1
    for i in range(n):
        work[_OUT, i] = math.sqrt(work[_EA, i])


@jit
def _period_sums(v_inv: float, delta_sum: float) -> tuple[float, float, float]:
    """``(v_inv, v, Delta)`` of steps 3-4 from the period's sums, ``v_inv`` raised to at least 1e-100
    (:func:`period_update`)."""
    v_inv = max(v_inv, _V_INV_FLOOR)
    v = 1.0 / v_inv
    return v_inv, v, v * delta_sum


@jit
def _period_end(mu: float, phi: float, sigma_new: float, v_inv: float, delta_sum: float) -> tuple[float, float]:
    """Steps 6-7: ``(mu', phi')`` from the new volatility."""
    phi_star2 = phi * phi + sigma_new * sigma_new
    # phi' = 1 / sqrt(1/phi*^2 + 1/v), written so that neither a tiny phi* nor a tiny v_inv overflows.
    phi_new = math.sqrt(phi_star2 / (1.0 + phi_star2 * v_inv))
    return mu + phi_new * phi_new * delta_sum, phi_new


@jit
def period_update(mu: float, phi: float, sigma: float, v_inv: float, delta_sum: float, tau: float,
                  epsilon: float) -> tuple[float, float, float]:
    """A player's ``(mu', phi', sigma')`` after a rating period (steps 3-7), from the period's sums
    ``v_inv = sum_j g(phi_j)^2 E_j (1 - E_j)`` and ``delta_sum = sum_j g(phi_j) (s_j - E_j)``.

    ``v_inv <= 0`` means no games: ``(mu, sqrt(phi^2 + sigma^2), sigma)``, ``delta_sum`` ignored.  A tiny
    positive ``v_inv`` (opponents of enormous RD, near-certain results) makes ``v = 1 / v_inv`` and
    ``Delta = delta_sum / v_inv`` huge; it is raised to at least 1e-100 so that they and ``Delta^2`` stay
    finite.  As ``v_inv -> 0`` the update tends to ``phi' = phi*`` and ``mu' = mu + phi*^2 delta_sum`` (the
    expected result of a near-certain game: the no-games update; its upset: ``mu`` moves by ``phi*^2 g``
    toward the winner), with ``sigma'`` from the root next to ``a`` of ``e^x delta_sum^2 / 2 = (x - a) / tau^2``,
    which exists when ``e sigma^2 tau^2 delta_sum^2 <= 2``.  Beyond that, the root step 5 finds lies near
    ``ln Delta^2``: ``sigma'`` and the move of ``mu`` grow like ``1 / v_inv`` (Glicko-2 has no bound), up to
    about 1e100.
    """
    if v_inv <= 0.0:
        return mu, math.sqrt(phi * phi + sigma * sigma), sigma
    v_inv, v, delta = _period_sums(v_inv, delta_sum)
    sigma_new = new_volatility(phi, sigma, v, delta, tau, epsilon)
    mu_new, phi_new = _period_end(mu, phi, sigma_new, v_inv, delta_sum)
    return mu_new, phi_new, sigma_new
LARGEST = 1e100  # rd and volatility: their squares, and sums of them, stay finite
_DECIDED = 1e-300  # the least a decided game adds to v_inv: an upset whose E (1 - E) underflows still counts


@jit
def composites(team_start: NDArray[np.int64], t0: int, n: int, weight: NDArray[np.float64],
                mu: NDArray[np.float64], phi: NDArray[np.float64], p0: int, cm: NDArray[np.float64],
                cv: NDArray[np.float64]) -> None:
    """Each team as one composite player: the weighted mean of its members' ``mu`` and the variance of that mean,
    ``sum w^2 phi^2 / (sum w)^2`` (``mu[p - p0]``, ``phi[p - p0]`` per player slot ``p`` of teams ``t0 .. t0 + n``).
    A one-player team is its player."""
    for t in range(n):
        a = 0.0
        b = 0.0
        c = 0.0
        for p in range(team_start[t0 + t], team_start[t0 + t + 1]):
            w = weight[p]
            a += w * mu[p - p0]
            b += w * w * phi[p - p0] * phi[p - p0]
            c += w
        cm[t] = a / c
        cv[t] = b / (c * c)


@jit
def _pair_logit(cm_a: Any, cv_a: Any, cm_b: Any, cv_b: Any) -> Any:  # floats, or float64 arrays elementwise
    """``z = g(sqrt(phi_a^2 + phi_b^2)) (mu_a - mu_b)`` of composite ``a`` against composite ``b``, Glicko's expected
    score of two rated players being ``E = 1 / (1 + e^-z)`` (Glickman 1999, eq. 16's form); of floats or,
    elementwise, of arrays."""
    return glicko_g(np.sqrt(cv_a + cv_b)) * (cm_a - cm_b)


@jit
def _pair_logs(cm_a: float, cv_a: float, cm_b: float, cv_b: float) -> tuple[float, float]:
    """``(log E, log(1 - E))`` of composite ``a`` against composite ``b`` (:func:`_pair_logit`)."""
    return logistic_logs(_pair_logit(cm_a, cv_a, cm_b, cv_b))


@jit
def _pair_log_likelihood(cm: NDArray[np.float64], cv: NDArray[np.float64], rank: NDArray[np.int64], n: int,
                         combine: int) -> float:
    """The sum over decided pairs of teams of ``S log E + (1 - S) log(1 - E)`` (:func:`_pair_logs`), divided by
    ``n - 1`` with ``combine = MEAN`` (the games each team played)."""
    total = 0.0
    for a in range(n):
        for b in range(a + 1, n):
            score = pair_score(rank[a], rank[b])
            if score < 0.0:
                continue
            ahead, behind = _pair_logs(cm[a], cv[a], cm[b], cv[b])
            if score > 0.0:
                total += score * ahead
            if score < 1.0:
                total += (1.0 - score) * behind
    return total / (n - 1) if combine == MEAN and n > 2 else total


@jit
def composite_pairs(cm: NDArray[np.float64], cv: NDArray[np.float64], a: NDArray[np.int64], b: NDArray[np.int64]
           ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """:func:`_pair_logs` of each pair of composites ``a[k], b[k]``."""
    return logistic_pairs(_pair_logit(cm[a], cv[a], cm[b], cv[b]))


@jit
def replay_glicko2(
    match_start: NDArray[np.int64], team_start: NDArray[np.int64], team_rank: NDArray[np.int64],
    row: NDArray[np.int64], weight: NDArray[np.float64], time: NDArray[np.float64],
    mu: NDArray[np.float64], sigma: NDArray[np.float64], games: NDArray[np.int64], last_time: NDArray[np.float64],
    extra: NDArray[np.float64], hist_mu: NDArray[np.float64], hist_sigma: NDArray[np.float64],
    loglik: NDArray[np.float64], tau: float, epsilon: float, period: float, combine: int,
    offset: NDArray[np.float64] = np.empty(0), match_weight: NDArray[np.float64] = np.empty(0),
) -> None:
    """Replay a history under :class:`Glicko2`, in place (``mu``, ``sigma``: rating and RD in rating points, as shown).

    A match in a new rating period for a player first closes the player's open one: what is shown becomes the
    period's start, and each whole period since the player's last timed one adds ``sigma^2`` to ``phi^2`` (step 6
    for a player who did not compete).  Then every pair of teams is one game between composites
    (:func:`composites`, from the period's start values), whose terms each member adds, times its partial-play
    weight, to its period sums; the rating shown is :func:`period_update` of the start and the sums so far -- the
    end of the period if it ended now, with the growth of a period sat out while no game of it is decided (two
    non-finishers play none).  ``period <= 0``, or a match without time, is a period of its own for each of its
    players (it closes an open period and leaves the count of periods sat out to the timed ones).
    ``loglik[m]`` is :func:`_pair_log_likelihood` of the ratings shown before the match (what a prediction then
    uses: as TrueSkill's, without the dynamics the update adds, here the growth of the periods sat out); empty
    ``hist_mu`` or ``loglik`` are not written.

    ``offset[t]`` (rating points; empty: none) is added to team ``t``'s composite rating (its advantage), and a
    match's games count ``match_weight[m]`` times in the period sums (its importance; empty: once).
    """
    has_offset = len(offset) > 0
    has_weight = len(match_weight) > 0
    keep = len(hist_mu) > 0
    want_ll = len(loglik) > 0
    width = most_teams(match_start)
    cm, cv, gs, tv, td = np.empty(width), np.empty(width), np.empty(width), np.empty(width), np.empty(width)
    players = most_players(match_start, team_start)
    smu = np.empty(players)
    sphi = np.empty(players)
    work = np.empty((_WORK, players))
    for m in range(len(match_start) - 1):
        t0, n, p0, p1 = match_slots(match_start, team_start, m)
        rank = team_rank[t0:t0 + n]
        now = time[m]
        here = np.floor(now / period) if period > 0.0 and now == now else math.nan  # a float: no int64 saturation
        if want_ll:
            for p in range(p0, p1):
                smu[p - p0] = (mu[row[p]] - 1500.0) / SCALE
                sphi[p - p0] = sigma[row[p]] / SCALE
            composites(team_start, t0, n, weight, smu, sphi, p0, cm, cv)
            for t in range(n if has_offset else 0):
                cm[t] += offset[t0 + t] / SCALE
            loglik[m] = _pair_log_likelihood(cm, cv, rank, n, combine)
        for p in range(p0, p1):
            r = row[p]
            if not extra[r, OPEN] == here:  # a new period for this player (always, when either is NaN)
                last = extra[r, LAST]
                idle = here - last - 1.0 if here == here and last == last else 0.0
                if here == here:
                    extra[r, LAST] = here
                vol = extra[r, VOL]
                phi = sigma[r] / SCALE
                extra[r, MU0] = (mu[r] - 1500.0) / SCALE
                extra[r, PHI0] = math.sqrt(phi * phi + max(idle, 0.0) * vol * vol)
                extra[r, VOL0] = vol
                extra[r, V_INV] = 0.0
                extra[r, DELTA] = 0.0
                extra[r, OPEN] = here
            smu[p - p0] = extra[r, MU0]
            sphi[p - p0] = extra[r, PHI0]
        composites(team_start, t0, n, weight, smu, sphi, p0, cm, cv)
        for t in range(n if has_offset else 0):
            cm[t] += offset[t0 + t] / SCALE
        for b in range(n):
            gs[b] = glicko_g(math.sqrt(cv[b]))
        for a in range(n):
            tv[a] = 0.0
            td[a] = 0.0
            for b in range(n):
                score = pair_score(rank[a], rank[b]) if a != b else -1.0
                if score < 0.0:
                    continue
                g = gs[b]
                ea, eb = _sigmoids(g * (cm[a] - cm[b]))  # E and 1 - E, each to its last bits
                tv[a] += max(g * g * ea * eb, _DECIDED)
                td[a] += g * (score * eb - (1.0 - score) * ea)  # g (S - E), exact for S = 0, 1/2, 1
            if combine == MEAN and n > 2:
                tv[a] /= n - 1
                td[a] /= n - 1
            if has_weight:
                tv[a] *= match_weight[m]
                td[a] *= match_weight[m]
        # Step 5 for every player of the match at once (new_volatilities), between steps 3-4 and 6-7.
        solving = 0
        for t in range(n):
            for p in range(team_start[t0 + t], team_start[t0 + t + 1]):
                r = row[p]
                w = weight[p]
                extra[r, V_INV] += w * tv[t]
                extra[r, DELTA] += w * td[t]
                if extra[r, V_INV] > 0.0:  # else no decided game yet in this period: nothing to solve
                    _, v, delta = _period_sums(extra[r, V_INV], extra[r, DELTA])
                    phi0, vol0 = extra[r, PHI0], extra[r, VOL0]
                    work[_PHI2, solving], work[_SIGMA2, solving] = phi0 * phi0, vol0 * vol0
                    work[_V, solving], work[_DELTA2, solving] = v, delta * delta
                    solving += 1
        new_volatilities(solving, tau, epsilon, work)
        solving = 0
        for p in range(p0, p1):
            r = row[p]
            new_mu, new_phi, new_vol = extra[r, MU0], extra[r, PHI0], extra[r, VOL0]
            if extra[r, V_INV] > 0.0:
                new_vol = work[_OUT, solving]
                solving += 1
                v_inv, _, _ = _period_sums(extra[r, V_INV], extra[r, DELTA])
                new_mu, new_phi = _period_end(new_mu, new_phi, new_vol, v_inv, extra[r, DELTA])
            else:  # no decided game in the period so far: it is one the player sat out (period_update's rule)
                new_phi = math.sqrt(new_phi * new_phi + new_vol * new_vol)
            mu[r] = 1500.0 + SCALE * new_mu
            sigma[r] = SCALE * new_phi
            extra[r, VOL] = new_vol
            played(r, now, games, last_time)
            if keep:
                hist_mu[p] = mu[r]
                hist_sigma[p] = sigma[r]
