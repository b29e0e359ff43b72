"""The Elo family's compiled kernels: two-team outcomes and their gradients, the pairwise and Plackett-Luce
gradients of a free-for-all, and the family's replay (the math of :mod:`podium.models.elo` and
:mod:`podium.models.plackett_luce`; the closed forms of Plackett-Luce are :mod:`podium.ordering.luce`).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from ..jit import kernel
from ..ordering.luce import ARITHMETIC, plackett_luce_gradient
from ..ordering.numerics import inv_mills, jit, log_ndtr, ndtr
from .common import match_spread, most_teams, provisional_factor, team_sums

__all__ = ["LOGISTIC", "GAUSSIAN", "GRADIENT", "CLASSIC", "SUM", "MEAN", "PAIRWISE", "PLACKETT_LUCE", "NO_MARGIN",
           "POWER", "ELORATINGS", "FIVETHIRTYEIGHT", "MARGIN_FORMS", "pair_score", "pair_outcome", "margin_factor",
           "pairwise_gradient", "spread_pairs", "replay_likelihood"]

_SQRT2 = math.sqrt(2.0)
LOGISTIC, GAUSSIAN = 0, 1  # pair performance densities
GRADIENT, CLASSIC = 0, 1  # pair updates
SUM, MEAN = 0, 1  # how a free-for-all combines its pairs
PAIRWISE, PLACKETT_LUCE = 0, 1  # the family's kinds (LikelihoodModel._kind)
NO_MARGIN, POWER, ELORATINGS, FIVETHIRTYEIGHT = 0, 1, 2, 3  # margin-of-victory multipliers (margin_factor)
MARGIN_FORMS = ("none", "power", "eloratings", "fivethirtyeight")  # their names, in code order


@jit
def pair_score(ra: int, rb: int) -> float:
    """``S`` of the first of two teams with ranks ``ra, rb`` (``-1`` = did not finish): 1 ahead, 0 behind,
    1/2 drawn; ``-1`` when both did not finish (the pair says nothing)."""
    if ra < 0 and rb < 0:
        return -1.0
    if ra == rb:
        return 0.5
    if rb < 0 or (ra >= 0 and ra < rb):
        return 1.0
    return 0.0


@jit
def margin_factor(form: int, power: float, autocorrelation: float, margin: float, lead: float) -> float:
    """The margin-of-victory multiplier ``G`` of a pair's step (``docs/design.md``, "What a result says").

    ``margin`` is the absolute score difference of the pair (NaN when either has no score: ``G = 1``), ``lead``
    the winner's strength minus the loser's before the match in natural units (0 for a draw).  With
    ``n = max(margin, 1)``::

        power             G = n ** power                                 (fitted; 0 is the plain step)
        eloratings        G = 1, 1.5, 1.75, 1.75 + (n - 3) / 8          for n < 2, < 3, < 4, >= 4
        fivethirtyeight   G = ln(n + 1) / ln 2

    each divided by ``1 + autocorrelation * lead`` (kept above 1/4).  The eloratings.net table is that of the
    World Football Elo Ratings (eloratings.net, "About"); the logarithm and the divisor are FiveThirtyEight's
    NFL multiplier ``ln(PD + 1) * 2.2 / (0.001 * dElo + 2.2)`` (Silver, "How our NFL predictions work"), whose
    divisor is ``1 + lead * 400 / (2200 ln 10)`` in natural units: autocorrelation 0.0790.  Dividing by ``ln 2``
    makes a one-point win the plain step.  The divisor damps the favourite's big wins, which a rating that
    already expects them would otherwise inflate (the autocorrelation FiveThirtyEight corrects).
    """
    if form == NO_MARGIN or margin != margin:
        return 1.0
    n = max(margin, 1.0)
    if form == POWER:
        g = 1.0 if power == 0.0 else n ** power
    elif form == ELORATINGS:
        g = 1.0 if n < 2.0 else (1.5 if n < 3.0 else (1.75 if n < 4.0 else 1.75 + (n - 3.0) / 8.0))
    else:
        g = math.log(n + 1.0) / math.log(2.0)
    if autocorrelation != 0.0:
        g /= max(1.0 + autocorrelation * lead, 0.25)
    return g


@jit
def _pair_margin(form: int, power: float, autocorrelation: float, score: NDArray[np.float64], ta: int, tb: int,
                 outcome: float, d: float) -> float:
    """:func:`margin_factor` of teams ``ta, tb`` (``outcome``: ``pair_score`` of ``ta``; ``d``: ``s_a - s_b``);
    1 without scores."""
    if len(score) == 0:
        return 1.0
    lead = d if outcome == 1.0 else (-d if outcome == 0.0 else 0.0)
    return margin_factor(form, power, autocorrelation, abs(score[ta] - score[tb]), lead)


@jit
def _log1p_unit(e: float) -> float:
    """``log(1 + e)`` for ``0 <= e <= 1``, within 2 ulp (measured against mpmath; glibc's ``log1p`` is within
    1), from one ``log`` and one division, which a replay computes in about half the time of ``log1p``.

    ``u = 1 + e`` is rounded, but ``u - 1`` is exact, so ``e / (u - 1)`` corrects ``log(u)`` for that
    rounding (Goldberg, "What every computer scientist should know about floating-point arithmetic",
    1991, theorem 4).
    """
    u = 1.0 + e
    return e if u == 1.0 else math.log(u) * (e / (u - 1.0))


@jit
def pair_outcome(d: float, score: float, performance: int, update: int, want_ll: bool,
                 e: float = -1.0) -> tuple[float, float]:
    """Log-likelihood and update of one two-team game for the team ahead-by-``d``.

    Parameters
    ----------
    d : float
        ``s1 - s2`` in natural units.
    score : float
        ``S``: 1 if team 1 finished ahead, 0 if behind, 0.5 for a draw.
    performance, update : int
        ``LOGISTIC``/``GAUSSIAN`` and ``GRADIENT``/``CLASSIC``.
    want_ll : bool
        Compute the log-likelihood (else 0 is returned for it, and a replay saves its logarithms).
    e : float, optional
        ``exp(-|d|)`` when the caller has it already (logistic only); computed when negative.

    Returns
    -------
    (log L, g) : the game's log-likelihood and team 1's update direction (team 2's is ``-g``).
    """
    ll = 0.0
    if performance == LOGISTIC:
        # One exp (and one logarithm for the likelihood): with e = exp(-|d|), sigmoid(|d|) = 1/(1+e).
        if e < 0.0:
            e = math.exp(-abs(d))
        p = 1.0 / (1.0 + e) if d >= 0.0 else e / (1.0 + e)
        if want_ll:
            # log sigmoid(d) = min(d, 0) - log1p(e), log sigmoid(-d) = -max(d, 0) - log1p(e): min and max
            # instead of a branch on the sign of d, which a replay mispredicts half the time.
            l1p = _log1p_unit(e)
            ll = score * (min(d, 0.0) - l1p) + (1.0 - score) * (-max(d, 0.0) - l1p)
        return ll, score - p
    z = d / _SQRT2
    if want_ll:
        if score > 0.0:
            ll += score * log_ndtr(z)
        if score < 1.0:
            ll += (1.0 - score) * log_ndtr(-z)
    if update == CLASSIC:
        return ll, score - ndtr(z)
    g = 0.0
    if score > 0.0:
        g += score * inv_mills(z)
    if score < 1.0:
        g -= (1.0 - score) * inv_mills(-z)
    return ll, g / _SQRT2


@jit
def pairwise_gradient(
    s: NDArray[np.float64], rank: NDArray[np.int64], n: int,
    performance: int, update: int, combine: int, grad: NDArray[np.float64], x: NDArray[np.float64],
    want_ll: bool = True, score: NDArray[np.float64] = np.empty(0), margin: int = NO_MARGIN, power: float = 0.0,
    autocorrelation: float = 0.0,
) -> float:
    """Pairwise Elo over ``n`` teams: every pair as a two-team game (note, section 3.1).

    A pair with different ranks is a win for the better one; a finisher beats a non-finisher
    (``rank = -1``); equal ranks draw; two non-finishers contribute nothing.  ``combine = MEAN``
    divides the sum by ``n - 1``, the number of opponents, which keeps the updates zero-sum.
    Writes ``dL/ds`` into ``grad[:n]`` and returns the (composite) log-likelihood; ``x`` is scratch space
    for ``n`` floats.  With the teams' ``score`` (else empty), each pair's term of the update is multiplied by
    its :func:`margin_factor` (race times, points: the margin of each pair); the log-likelihood is not.
    """
    # Logistic pairs need exp(-|s_a - s_b|) = min(x_a, x_b) / max(x_a, x_b) with x = exp(s - max s):
    # n exponentials instead of n(n-1)/2, exact while the spread keeps every x a normal number.
    hoist = False
    if performance == LOGISTIC and n > 2:
        top, bottom = s[0], s[0]
        for a in range(1, n):
            top, bottom = max(top, s[a]), min(bottom, s[a])
        hoist = top - bottom <= 600.0
        if hoist:
            for a in range(n):
                x[a] = math.exp(s[a] - top)
    for a in range(n):
        grad[a] = 0.0
    total = 0.0
    for a in range(n):
        ra = rank[a]
        for b in range(a + 1, n):
            outcome = pair_score(ra, rank[b])
            if outcome < 0.0:
                continue
            e = min(x[a], x[b]) / max(x[a], x[b]) if hoist else -1.0
            ll, g = pair_outcome(s[a] - s[b], outcome, performance, update, want_ll, e)
            if margin != NO_MARGIN:
                g *= _pair_margin(margin, power, autocorrelation, score, a, b, outcome, s[a] - s[b])
            total += ll
            grad[a] += g
            grad[b] -= g
    if combine == MEAN and n > 2:
        inv = 1.0 / (n - 1)
        for a in range(n):
            grad[a] *= inv
        total *= inv
    return total


@jit
def spread_pairs(performance: int, s: NDArray[np.float64], square_weights: NDArray[np.float64], spread: float,
                 a: NDArray[np.int64], b: NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``log P(a[k] ahead of b[k])`` and the reverse for each pair of teams, each as the replay's own two-team game
    (:func:`pair_outcome` of the strength difference over the pair's :func:`podium.kernels.common.match_spread`)."""
    la = np.empty(len(a))
    lb = np.empty(len(a))
    for k in range(len(a)):
        d = (s[a[k]] - s[b[k]]) / match_spread(spread, 0.5 * (square_weights[a[k]] + square_weights[b[k]]))
        la[k] = pair_outcome(d, 1.0, performance, GRADIENT, True)[0]
        lb[k] = pair_outcome(d, 0.0, performance, GRADIENT, True)[0]
    return la, lb


@jit
def _family_gradient(kind: int, a: int, b: int, c: int, s: NDArray[np.float64], rank: NDArray[np.int64],
                     n: int, grad: NDArray[np.float64], fw: NDArray[np.float64], iw: NDArray[np.int64],
                     want_ll: bool, score: NDArray[np.float64], margin: int, power: float,
                     autocorrelation: float) -> float:
    if kind == PAIRWISE:
        return pairwise_gradient(s, rank, n, a, b, c, grad, fw, want_ll, score, margin, power, autocorrelation)
    return plackett_luce_gradient(s, rank, n, a, grad, fw, iw, want_ll, b)


@kernel(cache=True, nogil=True, inline="always")
def _duel_loop(
    pair_performance: int, pair_update: int, k: float, inv_scale: float, initial: float, spread: float,
    provisional: float,
    team_rank: NDArray[np.int64], row: NDArray[np.int64], weight: NDArray[np.float64],
    mu: NDArray[np.float64], games: NDArray[np.int64], hist_mu: NDArray[np.float64], loglik: NDArray[np.float64],
    want_ll: bool, want_hist: bool, extras: bool, offset: NDArray[np.float64], match_weight: NDArray[np.float64],
    score: NDArray[np.float64], margin: int, power: float, autocorrelation: float,
) -> None:
    """:func:`replay_likelihood` for a history of one-player duels (team ``t`` is slot ``t``, match ``m``
    is teams ``2m, 2m + 1``): the same arithmetic in the same order, without the per-team loops and the
    reads of ``match_start`` and ``team_start`` that a duel does not need.  ``extras`` False (passed as a constant)
    compiles the loop without the advantage, weight and margin branches: the plain replay's speed."""
    has_offset = extras and len(offset) > 0
    has_weight = extras and len(match_weight) > 0
    margin = margin if extras else NO_MARGIN
    for m in range(len(team_rank) // 2):
        pa = 2 * m
        pb = pa + 1
        ra, rb = row[pa], row[pb]
        wa, wb = weight[pa], weight[pb]
        # 0.0 + w * (mu - initial) is team_sums' sum of one member, kept so the result is the same to
        # the bit; the spread is 1 for full-weight players (no square root in a chess replay).
        shrink = 1.0
        if (wa != 1.0 or wb != 1.0) and spread != 0.0:
            shrink = 1.0 / match_spread(spread, 0.5 * (wa * wa + wb * wb))
        inv = inv_scale * shrink
        if has_offset:
            d = (0.0 + wa * (mu[ra] - initial) + offset[pa]) * inv - (0.0 + wb * (mu[rb] - initial) + offset[pb]) * inv
        else:
            d = (0.0 + wa * (mu[ra] - initial)) * inv - (0.0 + wb * (mu[rb] - initial)) * inv
        outcome = pair_score(team_rank[pa], team_rank[pb])
        if outcome < 0.0:
            ll, g = 0.0, 0.0
        else:
            ll, g = pair_outcome(d, outcome, pair_performance, pair_update, want_ll)
        if want_ll:
            loglik[m] = ll
        step = k * g * shrink
        if has_weight:
            step *= match_weight[m]
        if margin != NO_MARGIN:
            step *= _pair_margin(margin, power, autocorrelation, score, pa, pb, outcome, d)
        mu[ra] += step * wa * provisional_factor(provisional, games[ra])
        games[ra] += 1
        if want_hist:
            hist_mu[pa] = mu[ra]
        mu[rb] += -step * wb * provisional_factor(provisional, games[rb])
        games[rb] += 1
        if want_hist:
            hist_mu[pb] = mu[rb]


@jit
def replay_likelihood(
    kind: int, a: int, b: int, c: int, k: float, scale: float, initial: float, spread: float, provisional: float,
    match_start: NDArray[np.int64], team_start: NDArray[np.int64], team_rank: NDArray[np.int64],
    row: NDArray[np.int64], weight: NDArray[np.float64],
    mu: NDArray[np.float64], games: NDArray[np.int64], hist_mu: NDArray[np.float64], loglik: NDArray[np.float64],
    want_ll: bool, want_hist: bool = True, offset: NDArray[np.float64] = np.empty(0),
    match_weight: NDArray[np.float64] = np.empty(0), score: NDArray[np.float64] = np.empty(0),
    margin: int = NO_MARGIN, power: float = 0.0, autocorrelation: float = 0.0,
) -> None:
    """Replay a history under an Elo-family model, in place.

    For each match: team strengths ``s_t = (sum_i w_i (mu_i - initial) + offset_t) / (scale * c)`` with the
    match's spread ``c`` (:func:`match_spread`) and ``offset_t`` the team's advantage in rating points (the
    model's ``advantage`` times the team's; empty: none); the kernel gives the log-likelihood and ``dL/ds_t``;
    member ``i`` moves by ``k * v * G * w_i * dL/ds_t / c`` (the chain rule, in the family's convention that
    ``k`` absorbs ``scale``), times :func:`provisional_factor` of the matches it has played, with ``v`` the
    match's weight (``match_weight``; empty: 1) and ``G`` the pair's :func:`margin_factor` from the teams'
    ``score`` (pairwise kinds only; empty: 1).  ``row[p]`` is the state row of player
    slot ``p``; ``hist_mu[p]`` receives that player's rating after the match (only with ``want_hist``),
    ``loglik[m]`` the match's log-likelihood under the ratings before it (only with ``want_ll``: without
    it the kernels also skip the logarithms that only the log-likelihood needs).  An array that is not
    written may be empty.  Without offsets, match weights and margins the arithmetic is the plain replay's,
    to the bit.
    """
    n_matches = len(match_start) - 1
    inv_scale = 1.0 / scale
    pair_performance, pair_update = (a, b) if kind == PAIRWISE else (LOGISTIC, GRADIENT)
    if kind != PAIRWISE or len(score) == 0:
        margin = NO_MARGIN  # Plackett-Luce's likelihood is of the order alone
    has_offset = len(offset) > 0
    has_weight = len(match_weight) > 0
    # Every match has at least two teams and every team at least one player (Matches' invariants), so
    # 2 teams per match and 1 player per team on average means exactly that everywhere: one-player duels.
    # Plackett-Luce's arithmetic-mean ties make a two-team draw uninformative (P(either order) = 1), which
    # is not a two-team Elo game: such draws go through the Plackett-Luce kernel.
    pair_draws = not (kind == PLACKETT_LUCE and b == ARITHMETIC)
    if pair_draws and n_matches > 0 and len(team_rank) == 2 * n_matches and len(row) == len(team_rank):
        # The logistic model's options passed as constants: the compiler then drops the branches (Gaussian math,
        # unwanted writes, the result fields when there are none) from the inlined loop, which makes it about a
        # third faster.
        extras = has_offset or has_weight or margin != NO_MARGIN
        if pair_performance != LOGISTIC or extras:
            _duel_loop(pair_performance, pair_update, k, inv_scale, initial, spread, provisional, team_rank, row,
                       weight, mu, games, hist_mu, loglik, want_ll, want_hist, extras, offset, match_weight, score,
                       margin, power, autocorrelation)
        elif want_ll and want_hist:
            _duel_loop(LOGISTIC, GRADIENT, k, inv_scale, initial, spread, provisional, team_rank, row, weight, mu,
                       games, hist_mu, loglik, True, True, False, offset, match_weight, score, margin, power,
                       autocorrelation)
        elif want_ll:
            _duel_loop(LOGISTIC, GRADIENT, k, inv_scale, initial, spread, provisional, team_rank, row, weight, mu,
                       games, hist_mu, loglik, True, False, False, offset, match_weight, score, margin, power,
                       autocorrelation)
        elif want_hist:
            _duel_loop(LOGISTIC, GRADIENT, k, inv_scale, initial, spread, provisional, team_rank, row, weight, mu,
                       games, hist_mu, loglik, False, True, False, offset, match_weight, score, margin, power,
                       autocorrelation)
        else:
            _duel_loop(LOGISTIC, GRADIENT, k, inv_scale, initial, spread, provisional, team_rank, row, weight, mu,
                       games, hist_mu, loglik, False, False, False, offset, match_weight, score, margin, power,
                       autocorrelation)
        return
    width = most_teams(match_start)
    s = np.empty(width)
    grad = np.empty(width)
    fw = np.empty(7 * width + 2)
    iw = np.empty(4 * width + 3, dtype=np.int64)
    for m in range(n_matches):
        t0 = match_start[m]
        n = match_start[m + 1] - t0
        square = 0.0
        for t in range(n):
            s[t], q = team_sums(team_start, t0 + t, row, weight, mu, initial)
            if has_offset:
                s[t] += offset[t0 + t]
            square += q
        shrink = 1.0 if spread == 0.0 else 1.0 / match_spread(spread, square / n)
        inv = inv_scale * shrink
        for t in range(n):
            s[t] *= inv
        outcome = pair_score(team_rank[t0], team_rank[t0 + 1]) if n == 2 else -1.0
        match_score = score[t0:t0 + n] if margin != NO_MARGIN else score
        if n == 2 and (pair_draws or outcome != 0.5):
            # Two teams: every model of the family is one two-team Elo game (Plackett-Luce in either
            # order is logistic Elo, draws and non-finishers included), so call it directly.
            if outcome < 0.0:
                ll, grad[0] = 0.0, 0.0
            else:
                ll, grad[0] = pair_outcome(s[0] - s[1], outcome, pair_performance, pair_update, want_ll)
                if margin != NO_MARGIN:
                    grad[0] *= _pair_margin(margin, power, autocorrelation, match_score, 0, 1, outcome, s[0] - s[1])
            grad[1] = -grad[0]
        else:
            ll = _family_gradient(kind, a, b, c, s, team_rank[t0:t0 + n], n, grad, fw, iw, want_ll, match_score,
                                  margin, power, autocorrelation)
        if want_ll:
            loglik[m] = ll
        for t in range(n):
            step = k * grad[t] * shrink
            if has_weight:
                step *= match_weight[m]
            for p in range(team_start[t0 + t], team_start[t0 + t + 1]):
                r = row[p]
                mu[r] += step * weight[p] * provisional_factor(provisional, games[r])
                games[r] += 1
                if want_hist:
                    hist_mu[p] = mu[r]
