"""TrueSkill's compiled kernels: a match's team priors with dynamics, the two-team update in closed form, a
free-for-all through :mod:`podium.kernels.ep`, the messages down to the players, the replay of a history,
exact log-likelihoods and match quality (the factor graph is drawn in :mod:`podium.models.trueskill`).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from ..ordering import tie_turn
from ..ordering.moment_chain import order_moments
from ..ordering.numerics import DRAW, WIN, jit, tilted_messages
from .common import all_scored, match_slots, most_players, most_teams, played, team_sums
from .ep import (CHAIN, EXACT, ORDERED, canonical_order, expectation_propagation, team_log_outcome,
                 tie_rotations, WARM_FACTOR)

__all__ = ["SIGMA_MAX", "team_priors", "condition", "two_teams", "apply_messages", "skill_var", "match_workspace", "rate_teams", "exact_messages",
           "replay_trueskill", "history_log_likelihoods", "log_match_quality", "log_qualities"]


# The largest standard deviation (of a rating, or of the model's sigma, beta, tau, drift) TrueSkill accepts: its
# square, and sums of a few thousand such squares, stay finite floats.  Variances grown by dynamics are capped at
# its square, so no rating leaves the range.
SIGMA_MAX = 1e150


_VAR_MAX = SIGMA_MAX * SIGMA_MAX


@jit
def team_priors(team_start: NDArray[np.int64], t0: int, n: int, row: NDArray[np.int64],
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

    Finishers draw (``DRAW``) or win (``WIN``) with the margin ``margin * sqrt(players)`` of the two teams'
    ``players``; a finisher beats a non-finisher as it would beat a finisher (``WIN``, the margin too), so that
    not finishing never rates better than losing (with ``d > 0`` the non-finisher lost less: 20.79 against a
    loser's 20.60 in a duel of newcomers).
    """
    if r0 < 0 and r1 < 0:
        return -1, 0, 0.0
    better = 0 if (r1 < 0 or (r0 >= 0 and r0 <= r1)) else 1
    return better, DRAW if r0 == r1 else WIN, margin * math.sqrt(players)


@jit
def margin_messages(ma: float, va: float, mb: float, vb: float, z: float, noise2: float
                    ) -> tuple[float, float, float, float]:
    """Messages ``(pi_a, tau_a, pi_b, tau_b)`` of a two-team match whose margin was observed: the scores say the
    performance difference ``d = t_a - t_b`` is ``z`` (the score difference in skill units) up to Gaussian noise
    of variance ``noise2`` (``docs/design.md``, "What a result says"; the margin as a Gaussian observation of the
    performance difference, as TrueSkill 2 and TrueSkill Through Time's second version use scores).

    The order is then a function of the scores, so the factor ``N(z; d, noise2)`` is the whole likelihood, and it is
    Gaussian: the update is exact (no truncation, no moment matching).  Through ``t_a = d + t_b`` it reaches ``a``
    as ``N(mb + z, vb + noise2)``, and ``b`` through ``t_b = t_a - d`` as ``N(ma - z, va + noise2)``, cavities
    ``t_a ~ N(ma, va)``, ``t_b ~ N(mb, vb)``.
    """
    pa = 1.0 / (vb + noise2)
    pb = 1.0 / (va + noise2)
    return pa, pa * (mb + z), pb, pb * (ma - z)


@jit
def score_messages(tm: NDArray[np.float64], tv: NDArray[np.float64], z: NDArray[np.float64], n: int,
                   noise2: float, pi: NDArray[np.float64], tau: NDArray[np.float64]) -> None:
    """Messages ``(pi[t], tau[t])`` of a match of ``n`` teams that all have scores: each team's score in skill units
    is its performance plus a shift common to the match plus its own noise, ``z_t = t_t + c + e_t``,
    ``e_t ~ N(0, noise2 / 2)`` (so that a two-team difference has the noise ``noise2`` of :func:`margin_messages`,
    which this is for ``n = 2``), ``c`` unknown (flat): only differences of scores say anything, so points, goals
    and race times need no zero.  The order is a function of the scores, so this is the whole likelihood, and it
    is Gaussian: the exact posterior of each team's performance, in ``O(n)``.

    With cavities ``t_t ~ N(tm_t, tv_t)``, ``w_t = t_t + e_t ~ N(tm_t, s_t)``, ``s_t = tv_t + noise2 / 2``, and
    ``z_t = w_t + c``: ``c ~ N(sum (z_t - tm_t)/s_t / sum 1/s_t, 1 / sum 1/s_t)``; then ``t_t``'s posterior mean is
    ``tm_t + g_t (z_t - E c - tm_t)`` and its variance ``tv_t noise2 / (2 s_t) + g_t^2 Var c``, ``g_t = tv_t / s_t``.
    The message is the posterior over the cavity: ``pi = 1/v' - 1/tv``, ``tau = m'/v' - tm/tv``.
    """
    half = 0.5 * noise2
    a = 0.0
    b = 0.0
    for t in range(n):
        s = tv[t] + half
        a += 1.0 / s
        b += (z[t] - tm[t]) / s
    shift = b / a
    shift_var = 1.0 / a
    for t in range(n):
        s = tv[t] + half
        g = tv[t] / s
        post_m = tm[t] + g * (z[t] - shift - tm[t])
        post_v = tv[t] * half / s + g * g * shift_var
        pi[t] = max(1.0 / post_v - 1.0 / tv[t], 0.0)
        tau[t] = post_m / post_v - tm[t] / tv[t]


@jit
def outcome_messages(kind: int, eps: float, ma: float, va: float, mb: float, vb: float, ya: float, yb: float,
                     margin_scale: float, noise2: float) -> tuple[float, float, float, float]:
    """The messages of one comparison of ``a`` (better) and ``b``: :func:`margin_messages` when the model reads
    margins (``margin_scale > 0``) and both teams have a score (``ya``, ``yb``: signed so that higher is better;
    NaN: none), else :func:`~podium.ordering.numerics.tilted_messages` (the order alone)."""
    if margin_scale > 0.0 and ya == ya and yb == yb:
        return margin_messages(ma, va, mb, vb, margin_scale * (ya - yb), noise2)
    return tilted_messages(kind, eps, ma, va, mb, vb)


@jit
def apply_messages(team_start: NDArray[np.int64], t0: int, n: int, row: NDArray[np.int64],
                    weight: NDArray[np.float64], var: NDArray[np.float64], p0: int, tm: NDArray[np.float64],
                    tv: NDArray[np.float64], pi: NDArray[np.float64], tau: NDArray[np.float64],
                    d_mu: NDArray[np.float64], new_var: NDArray[np.float64]) -> None:
    """Pass each team's message ``(pi, tau)`` down to its players.

    Gaussian conditioning through the sum and performance factors: with the team's prior ``N(m, v)``,
    ``mu_j += w_j var_j (tau - pi m) / (1 + pi v)`` and
    ``var_j' = var_j (1 + pi (v - w_j^2 var_j)) / (1 + pi v)``.  ``d_mu`` receives the mean's change and
    ``new_var`` the new variance.  Per player this is :func:`condition`'s formula with the team's gain computed
    once (calling :func:`condition` per player halved the replay of 2 v 2 histories, 10.8 to 5.4 M matches/s).
    """
    for t in range(n):
        denom = 1.0 + pi[t] * tv[t]
        gain = (tau[t] - pi[t] * tm[t]) / denom
        for p in range(team_start[t0 + t], team_start[t0 + t + 1]):
            w = weight[p]
            v = var[p - p0]
            d_mu[p - p0] = w * v * gain
            new_var[p - p0] = v * (1.0 + pi[t] * (tv[t] - w * w * v)) / denom


@jit
def skill_var(sigma: float, tau2: float, drift2: float, now: float, last: float) -> float:
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
    pi, tau_msg`` (per team), ``order, starts`` (:func:`canonical_order`), ``iw, fw``
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
    new_var: NDArray[np.float64], update: int = ORDERED, offset: NDArray[np.float64] = np.empty(0),
    evidence: float = 1.0, score: NDArray[np.float64] = np.empty(0), margin_scale: float = 0.0,
    noise2: float = 0.0,
) -> int:
    """The update of a match of three or more teams: each player's change of mean and new variance.

    ``offset[t]`` (empty: none) is added to team ``t``'s performance mean (its advantage), and the messages are
    raised to the power ``evidence`` (the match's weight: a tempered likelihood, whose Gaussian messages scale in
    their natural parameters).  When the model reads margins (``margin_scale > 0``) and every team has a score
    (``score[t]``, signed so that higher is better; NaN: none), the scores' Gaussian likelihood
    (:func:`score_messages`, noise ``noise2`` on a difference) replaces the order's: exact in one step.

    ``update``: :data:`~podium.kernels.ep.ORDERED`, expectation propagation on the chain of places, each only
    ordered (``d > 0``), a tied group in each of its rotations; :data:`~podium.kernels.ep.CHAIN`, the paper's
    chain, every place beyond the draw margin and ties drawn; :data:`~podium.kernels.ep.EXACT`, the
    assumed-density update of :func:`exact_messages` (places ordered, a tied group within the margin).

    Player slot ``p`` of the match (teams ``t0 .. t0 + n``) has mean ``mu[row[p]]`` and variance ``var[p - p0]``
    (dynamics already added); ``new_mu[p - p0]`` receives the change of its mean and ``new_var[p - p0]`` its
    new variance.  The teams' priors (:func:`team_priors`), :func:`expectation_propagation` once per chain of
    the tied groups, and the messages passed down to the players (:func:`apply_messages`), averaged over the
    chains.  :func:`replay_trueskill` and TrueSkill Through Time's smoother call it; both rate two teams in
    their own loops with the same functions (``team_priors``' sums, :func:`two_teams`,
    :func:`tilted_messages`, :func:`condition`): a call passing these twenty arrays costs ~250 ns, ten times a
    duel's arithmetic.  The rest are workspaces (:func:`match_workspace`).  Returns how many EP runs missed
    ``tolerance``.
    """
    team_priors(team_start, t0, n, row, weight, mu, var, p0, beta2, center, tm, tv, size)
    for t in range(len(offset)):
        tm[t] += offset[t]
    if margin_scale > 0.0 and len(score) > 0 and all_scored(score, 0, n):
        zs = fw[0]  # the scores in skill units (EP's workspace is free: no EP runs)
        for t in range(n):
            zs[t] = margin_scale * score[t]
        score_messages(tm, tv, zs, n, noise2, pi, tau_msg)
        temper(pi, tau_msg, n, evidence)
        apply_messages(team_start, t0, n, row, weight, var, p0, tm, tv, pi, tau_msg, new_mu, new_var)
        return 0
    if update == EXACT:
        ok = exact_messages(tm[:n], tv[:n], rank, size[:n], margin, pi, tau_msg, fw[0], fw[1])
        temper(pi, tau_msg, n, evidence)
        apply_messages(team_start, t0, n, row, weight, var, p0, tm, tv, pi, tau_msg, new_mu, new_var)
        return 0 if ok else 1
    unconverged = 0
    groups, finishers = canonical_order(tm[:n], tv[:n], rank, size[:n], order, starts)
    runs, span = tie_rotations(starts, groups)
    # A tied group's likelihood is the geometric mean over its orders (as podium.ordering's): each run's
    # Gaussian approximation of it to the power 1/runs, i.e. the runs' messages averaged in natural parameters.
    # So the messages stay precisions >= 0, and no variance grows.
    sum_pi = np.zeros(n if runs > 1 else 0)
    sum_tau = np.zeros(n if runs > 1 else 0)
    tol = tolerance
    for r in range(runs):
        turn, reflect = tie_turn(r, runs, span)
        if expectation_propagation(tm[:n], tv[:n], rank, size[:n], margin, tol, max_iterations, order, starts,
                                   groups, finishers, turn, pi, tau_msg, iw, fw, update == CHAIN, r > 0,
                                   reflect) < 0:
            unconverged += 1
        if update == ORDERED:
            tol = tolerance * WARM_FACTOR
        if runs > 1:
            for t in range(n):
                sum_pi[t] += pi[t]
                sum_tau[t] += tau_msg[t]
    if runs > 1:
        for t in range(n):
            pi[t] = sum_pi[t] / runs
            tau_msg[t] = sum_tau[t] / runs
    if runs < span:
        _share_among_equals(tm, tv, size, order, starts, groups, pi, tau_msg)
    temper(pi, tau_msg, n, evidence)
    apply_messages(team_start, t0, n, row, weight, var, p0, tm, tv, pi, tau_msg, new_mu, new_var)
    return unconverged


@jit
def temper(pi: NDArray[np.float64], tau: NDArray[np.float64], n: int, evidence: float) -> None:
    """Raise the teams' messages to the power ``evidence`` (a match's weight): ``(pi, tau) *= evidence``, the
    Gaussian approximation of the likelihood to that power (1: unchanged)."""
    if evidence != 1.0:
        for t in range(n):
            pi[t] *= evidence
            tau[t] *= evidence


@jit
def _share_among_equals(tm: NDArray[np.float64], tv: NDArray[np.float64], size: NDArray[np.float64],
                        order: NDArray[np.int64], starts: NDArray[np.int64], groups: int, pi: NDArray[np.float64],
                        tau: NDArray[np.float64]) -> None:
    """Average the messages of tied teams with equal priors and sizes (neighbours in the canonical order).

    With fewer runs than rotations (a group beyond :data:`~podium.kernels.ep.MAX_ROTATIONS`) each team visits
    its own sample of the group's places, so interchangeable teams would get slightly different messages (a
    spread of 0.5 among 5,000 newcomers tied last); the model's posterior treats them alike, and so does this.
    """
    for g in range(groups):
        a = starts[g]
        while a < starts[g + 1]:
            b = a + 1
            first = order[a]
            while (b < starts[g + 1] and tm[order[b]] == tm[first] and tv[order[b]] == tv[first]
                   and size[order[b]] == size[first]):
                b += 1
            if b - a > 1:
                p = 0.0
                t = 0.0
                for k in range(a, b):
                    p += pi[order[k]]
                    t += tau[order[k]]
                for k in range(a, b):
                    pi[order[k]] = p / (b - a)
                    tau[order[k]] = t / (b - a)
            a = b


@jit
def exact_messages(tm: NDArray[np.float64], tv: NDArray[np.float64], rank: NDArray[np.int64],
                   size: NDArray[np.float64], margin: float, pi: NDArray[np.float64], tau_msg: NDArray[np.float64],
                   post_mean: NDArray[np.float64], post_var: NDArray[np.float64]) -> bool:
    """Each team's message ``(pi, tau)`` of the assumed-density update: the Gaussian whose product with the
    team's prior ``N(tm, tv)`` has the exact posterior's mean ``m'`` and variance ``v'`` of its performance
    given the outcome (:func:`podium.ordering.moment_chain.order_moments`: places ordered, a tied group within the
    draw margin below its best, non-finishers below the last finisher), ``pi = 1/v' - 1/tv`` and
    ``tau = m'/v' - tm/tv``; passed down to the players (:func:`apply_messages`) it gives each player the
    exact posterior's mean and variance of its skill (Gaussian conditioning through the team sum).  The
    posterior of a performance under an ordering likelihood is never wider than its prior (the likelihood is
    log-concave: Prekopa's theorem, and Brascamp-Lieb), so ``pi >= 0`` up to rounding, which is clipped.
    Returns False when the moments failed their self-check: the messages are then zero (the prior kept).
    ``post_mean`` receives the posterior means less ``tm[0]``."""
    n = len(tm)
    # The moments move with a common shift of the means: taken about one team's mean, whose differences from the
    # others are exact nearby (a field of three at 1e20 raised ZeroDivisionError on the grid's rounded nodes).
    ref = tm[0]
    loc = tm - ref
    scale = np.empty(n)
    for t in range(n):
        scale[t] = math.sqrt(tv[t])
    _, ok = order_moments(loc, scale, rank, size, margin, False, post_mean[:n], post_var[:n])
    for t in range(n):
        if not ok:
            pi[t] = tau_msg[t] = 0.0
            continue
        v = post_var[t]
        if not v > 0.0:
            v = tv[t] * 1e-12
        p = max(1.0 / v - 1.0 / tv[t], 0.0)
        pi[t] = p
        # tau - pi tm = (m' - tm)(1 + pi tv) / tv: the mean's move exact even where pi was clipped
        tau_msg[t] = p * tm[t] + (post_mean[t] - loc[t]) * (1.0 + p * tv[t]) / tv[t]
    return ok


@jit
def replay_trueskill(
    match_start: NDArray[np.int64], team_start: NDArray[np.int64], team_rank: NDArray[np.int64],
    row: NDArray[np.int64], weight: NDArray[np.float64], time: NDArray[np.float64],
    mu: NDArray[np.float64], sigma: NDArray[np.float64], games: NDArray[np.int64], last_time: NDArray[np.float64],
    hist_mu: NDArray[np.float64], hist_sigma: NDArray[np.float64], loglik: NDArray[np.float64],
    beta: float, tau: float, drift: float, margin: float, tolerance: float, max_iterations: int, center: float,
    update: int = ORDERED, offset: NDArray[np.float64] = np.empty(0), match_weight: NDArray[np.float64] = np.empty(0),
    score: NDArray[np.float64] = np.empty(0), margin_scale: float = 0.0, margin_noise2: float = 0.0,
) -> int:
    """Replay a history under TrueSkill, in place; return how many matches did not converge.

    What a result says beyond the order (each empty or 0: not used, and the plain arithmetic to the bit):
    ``offset[t]`` is added to team ``t``'s performance mean (its advantage in skill units); ``match_weight[m]``
    tempers match ``m``'s messages (:func:`temper`); ``score[t]`` (signed so that higher is better, NaN: none)
    with ``margin_scale > 0`` makes the scores of a match whose teams all scored Gaussian observations of the
    performances (:func:`margin_messages` for two teams, :func:`score_messages` for more; noise ``margin_noise2``
    on a difference) in place of its order.

    ``update``: how matches of three or more teams are compared (:func:`rate_teams`).

    Team performances are measured from ``center`` (:func:`team_priors`).

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
    players = most_players(match_start, team_start)
    tm, tv, size, pi, tau_msg, order, starts, iw, fw, new_mu, new_var = match_workspace(most_teams(match_start),
                                                                                        players)
    var = np.empty(players)
    beta2, tau2, drift2 = beta * beta, tau * tau, drift * drift
    has_offset = len(offset) > 0
    has_weight = len(match_weight) > 0
    has_score = len(score) > 0 and margin_scale > 0.0
    # Reading margins, an outcome is the sign of the observed score difference, noise and all: the predictive
    # spread of a difference grows by margin_noise2, half of it on each team.
    outcome_var = 0.5 * margin_noise2 if margin_scale > 0.0 else 0.0
    unconverged = 0
    for m in range(len(match_start) - 1):
        t0, n, p0, p1 = match_slots(match_start, team_start, m)
        rank = team_rank[t0:t0 + n]
        now = time[m]
        evidence = match_weight[m] if has_weight else 1.0
        ya = score[t0] if has_score else math.nan
        yb = score[t0 + 1] if has_score else math.nan
        if n == 2 and p1 - p0 == 2:
            # A duel: the same arithmetic as the team path below (bit for bit), in scalars.
            ra, rb = row[p0], row[p0 + 1]
            wa, wb = weight[p0], weight[p0 + 1]
            if want_ll:
                tm[0], tm[1] = wa * (mu[ra] - center), wb * (mu[rb] - center)
                if has_offset:
                    tm[0] += offset[t0]
                    tm[1] += offset[t0 + 1]
                tv[0] = wa * wa * (sigma[ra] ** 2 + beta2)
                tv[1] = wb * wb * (sigma[rb] ** 2 + beta2)
                if outcome_var > 0.0:
                    tv[0] += outcome_var
                    tv[1] += outcome_var
                size[0] = size[1] = 1.0
                loglik[m] = team_log_outcome(tm[:2], tv[:2], rank, size[:2], margin, update)
            va = skill_var(sigma[ra], tau2, drift2, now, last_time[ra])
            vb = skill_var(sigma[rb], tau2, drift2, now, last_time[rb])
            ma, mb = wa * (mu[ra] - center), wb * (mu[rb] - center)
            if has_offset:
                ma += offset[t0]
                mb += offset[t0 + 1]
            tva, tvb = wa * wa * (va + beta2), wb * wb * (vb + beta2)
            pa = ta = pb = tb = 0.0
            win, kind, eps = two_teams(rank[0], rank[1], margin, 2.0)
            if win == 0:
                pa, ta, pb, tb = outcome_messages(kind, eps, ma, tva, mb, tvb, ya, yb, margin_scale, margin_noise2)
            elif win == 1:
                pb, tb, pa, ta = outcome_messages(kind, eps, mb, tvb, ma, tva, yb, ya, margin_scale, margin_noise2)
            if has_weight:
                pa, ta, pb, tb = pa * evidence, ta * evidence, pb * evidence, tb * evidence
            denom = 1.0 + pa * tva
            mu[ra] += wa * va * ((ta - pa * ma) / denom)
            sigma[ra] = math.sqrt(va * (1.0 + pa * (tva - wa * wa * va)) / denom)
            denom = 1.0 + pb * tvb
            mu[rb] += wb * vb * ((tb - pb * mb) / denom)
            sigma[rb] = math.sqrt(vb * (1.0 + pb * (tvb - wb * wb * vb)) / denom)
            played(ra, now, games, last_time)
            played(rb, now, games, last_time)
            if keep:
                hist_mu[p0], hist_sigma[p0] = mu[ra], sigma[ra]
                hist_mu[p0 + 1], hist_sigma[p0 + 1] = mu[rb], sigma[rb]
            continue
        if want_ll:
            for p in range(p0, p1):
                var[p - p0] = sigma[row[p]] ** 2
            team_priors(team_start, t0, n, row, weight, mu, var, p0, beta2, center, tm, tv, size)
            if has_offset:
                for t in range(n):
                    tm[t] += offset[t0 + t]
            for t in range(n if outcome_var > 0.0 else 0):
                tv[t] += outcome_var
            loglik[m] = team_log_outcome(tm[:n], tv[:n], rank, size[:n], margin, update)
        for p in range(p0, p1):
            r = row[p]
            var[p - p0] = skill_var(sigma[r], tau2, drift2, now, last_time[r])
        if n == 2:  # one comparison, exact in one step: rate_teams's two-team case, kept in the loop for speed
            team_priors(team_start, t0, n, row, weight, mu, var, p0, beta2, center, tm, tv, size)
            if has_offset:
                tm[0] += offset[t0]
                tm[1] += offset[t0 + 1]
            pi[0] = pi[1] = tau_msg[0] = tau_msg[1] = 0.0
            win, kind, eps = two_teams(rank[0], rank[1], margin, size[0] + size[1])
            if win >= 0:
                lose = 1 - win
                y_win, y_lose = (ya, yb) if win == 0 else (yb, ya)
                pi[win], tau_msg[win], pi[lose], tau_msg[lose] = outcome_messages(
                    kind, eps, tm[win], tv[win], tm[lose], tv[lose], y_win, y_lose, margin_scale, margin_noise2)
            temper(pi, tau_msg, 2, evidence)
            apply_messages(team_start, t0, n, row, weight, var, p0, tm, tv, pi, tau_msg, new_mu, new_var)
        else:
            # (slices taken before the call: numba cannot compile conditional expressions among many arguments)
            offsets = offset[t0:t0 + n] if has_offset else offset
            scores = score[t0:t0 + n] if has_score else score
            unconverged += rate_teams(team_start, t0, n, row, weight, mu, var, p0, rank, beta2, center, margin,
                                      tolerance, max_iterations, tm, tv, size, pi, tau_msg, order, starts, iw, fw,
                                      new_mu, new_var, update, offsets, evidence, scores, margin_scale, margin_noise2)
        for p in range(p0, p1):
            r = row[p]
            mu[r] += new_mu[p - p0]
            sigma[r] = math.sqrt(new_var[p - p0])
            played(r, now, games, last_time)
            if keep:
                hist_mu[p] = mu[r]
                hist_sigma[p] = sigma[r]
    return unconverged


@jit
def history_log_likelihoods(
    match_start: NDArray[np.int64], team_start: NDArray[np.int64], team_rank: NDArray[np.int64],
    row: NDArray[np.int64], weight: NDArray[np.float64], start_mu: NDArray[np.float64],
    start_sigma: NDArray[np.float64], hist_mu: NDArray[np.float64], hist_sigma: NDArray[np.float64],
    n_rows: int, beta2: float, margin: float, center: float, out: NDArray[np.float64], update: int = ORDERED,
    offset: NDArray[np.float64] = np.empty(0), outcome_var: float = 0.0,
) -> None:
    """Each match's log-likelihood from a replay's history, as :func:`replay_trueskill` would have written it
    (``offset``: the teams' advantages; ``outcome_var``: the variance each team's predictive performance gains
    when the model reads margins).

    The rating a player brought to slot ``p`` is the one written after that player's previous slot of the
    batch, or ``start_mu/start_sigma[p]`` (the state when the batch began) for a first appearance; from it
    the team priors and :func:`team_log_outcome` are exactly the replay's (same operations, same order), so
    deferring gives the same numbers bit for bit.
    """
    last = np.full(n_rows, -1, dtype=np.int64)
    before_mu = np.empty(len(row))  # indexed by slot, as the history is
    before_var = np.empty(len(row))
    ident = np.arange(len(row))
    width = most_teams(match_start)
    tm, tv, size = np.empty(width), np.empty(width), np.empty(width)
    for m in range(len(match_start) - 1):
        t0, n, p0, p1 = match_slots(match_start, team_start, m)
        for p in range(p0, p1):
            q = last[row[p]]
            if q >= 0:
                before_mu[p] = hist_mu[q]
                before_var[p] = hist_sigma[q] ** 2
            else:
                before_mu[p] = start_mu[p]
                before_var[p] = start_sigma[p] ** 2
        team_priors(team_start, t0, n, ident, weight, before_mu, before_var[p0:], p0, beta2, center, tm, tv, size)
        for t in range(n if len(offset) else 0):
            tm[t] += offset[t0 + t]
        for t in range(n if outcome_var > 0.0 else 0):
            tv[t] += outcome_var
        out[m] = team_log_outcome(tm[:n], tv[:n], team_rank[t0:t0 + n], size[:n], margin, update)
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
                  center: float, out: NDArray[np.float64], offset: NDArray[np.float64] = np.empty(0)) -> None:
    """``out[m]`` = :func:`log_match_quality` of match ``m`` (``row[p]``: the rating row of player slot ``p``;
    ``offset[t]``: team ``t``'s advantage, empty: none)."""
    width = most_teams(match_start)
    tm, skill, noise = np.empty(width), np.empty(width), np.empty(width)
    for m in range(len(match_start) - 1):
        t0 = match_start[m]
        n = match_start[m + 1] - t0
        for t in range(n):
            tm[t], w2 = team_sums(team_start, t0 + t, row, weight, mu, center)
            if len(offset):
                tm[t] += offset[t0 + t]
            noise[t] = beta2 * w2
            c = 0.0
            for p in range(team_start[t0 + t], team_start[t0 + t + 1]):
                c += weight[p] * weight[p] * sigma[row[p]] ** 2
            skill[t] = c
        out[m] = log_match_quality(tm[:n], skill[:n], noise[:n])
