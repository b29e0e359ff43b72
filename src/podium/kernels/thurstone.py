"""The Thurstonian multiplayer Elo's replay (:class:`podium.Thurstone`): a gradient step on the exact ordering
likelihood of :func:`podium.ordering.log_outcome`, with a two-team match as a closed-form Gaussian pair.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from ..ordering import GAUSSIAN, log_outcome
from ..ordering.numerics import jit
from .common import all_scored, match_spread, most_teams, provisional_factor, team_sums
from .elo import GAUSSIAN as ELO_GAUSSIAN
from .elo import GRADIENT, pair_outcome, pair_score

__all__ = ["replay_thurstone", "team_performances"]


_SQRT2 = math.sqrt(2.0)


@jit
def _k_at(r: float, kx: NDArray[np.float64], ky: NDArray[np.float64]) -> float:
    """The learning rate at rating ``r``: piecewise linear through the knots, constant beyond them."""
    if len(kx) == 1 or r <= kx[0]:
        return ky[0]
    last = len(kx) - 1
    if r >= kx[last]:
        return ky[last]
    j = 0
    while kx[j + 1] < r:
        j += 1
    t = (r - kx[j]) / (kx[j + 1] - kx[j])
    return ky[j] + t * (ky[j + 1] - ky[j])


@jit
def team_performances(team_start: NDArray[np.int64], t0: int, n: int, row: NDArray[np.int64],
                weight: NDArray[np.float64], mu: NDArray[np.float64], inv_scale: float, initial: float,
                spread: float, loc: NDArray[np.float64], sc: NDArray[np.float64]) -> None:  # noqa: E128
    """Teams ``t0 .. t0 + n``: performance location ``sum w (r - initial) / scale`` and scale
    ``sqrt(1 + spread (sum w^2 - 1))`` (``sqrt(sum w^2)`` at the default ``spread = 1``)."""
    for t in range(n):
        strength, v = team_sums(team_start, t0 + t, row, weight, mu, initial)
        loc[t] = strength * inv_scale
        sc[t] = match_spread(spread, v)


@jit
def score_gradient(loc: NDArray[np.float64], y: NDArray[np.float64], n: int, margin_scale: float, noise2: float,
                   grad: NDArray[np.float64]) -> None:
    """``grad[t]``: the derivative with respect to ``loc[t]`` of the scores' log-likelihood when each team's score in
    natural units is its strength plus a shift common to the match plus its own noise,
    ``margin_scale * y_t = loc_t + c + e_t``, ``e_t ~ N(0, noise2 / 2)``, ``c`` flat (integrated out): with
    ``r_t = margin_scale * y_t - loc_t``, ``grad[t] = (r_t - mean r) / (noise2 / 2)``.  For two teams this is
    ``(margin_scale * (y_0 - y_1) - (loc_0 - loc_1)) / noise2``, the gradient of ``log N(margin_scale dy; dloc,
    noise2)``: a difference of two scores has noise ``noise2``, as in :class:`podium.TrueSkill`."""
    mean = 0.0
    for t in range(n):
        mean += margin_scale * y[t] - loc[t]
    mean /= n
    for t in range(n):
        grad[t] = (margin_scale * y[t] - loc[t] - mean) / (0.5 * noise2)


@jit
def replay_thurstone(
    kind: int, shape: float, kx: NDArray[np.float64], ky: NDArray[np.float64], scale: float, initial: float,
    spread: float, provisional: float, floor: float, precision: float, match_start: NDArray[np.int64],
    team_start: NDArray[np.int64],
    team_rank: NDArray[np.int64], row: NDArray[np.int64], weight: NDArray[np.float64],
    mu: NDArray[np.float64], games: NDArray[np.int64], hist_mu: NDArray[np.float64],
    loglik: NDArray[np.float64], offset: NDArray[np.float64] = np.empty(0),
    match_weight: NDArray[np.float64] = np.empty(0), score: NDArray[np.float64] = np.empty(0),
    margin_scale: float = 0.0, margin_noise2: float = 1.0,
) -> None:
    """Replay a history under :class:`Thurstone`, in place (same arrays as the Elo family's replay).

    What a result says beyond the order (each empty or 0: not used, the plain arithmetic to the bit): ``offset[t]``
    rating points are added to team ``t``'s strength; the step is multiplied by ``match_weight[m]``; a match whose
    teams all have a ``score`` (signed so that higher is better) steps along the gradient of the scores' Gaussian
    log-likelihood (:func:`score_gradient`) instead of the order's (a function of the scores; ``loglik`` stays the
    order's: what a prediction is scored on).
    """
    has_offset = len(offset) > 0
    has_weight = len(match_weight) > 0
    has_score = len(score) > 0 and margin_scale > 0.0
    width = most_teams(match_start)
    loc = np.empty(width)
    sc = np.empty(width)
    size = np.ones(width)
    gl = np.empty(width)
    gs = np.empty(width)
    inv = 1.0 / scale
    for m in range(len(match_start) - 1):
        t0 = match_start[m]
        n = match_start[m + 1] - t0
        rank = team_rank[t0:t0 + n]
        team_performances(team_start, t0, n, row, weight, mu, inv, initial, spread, loc, sc)
        if has_offset:
            for t in range(n):
                loc[t] += offset[t0 + t] * inv
        if margin_scale > 0.0:  # an outcome is the sign of the observed margin, its noise included
            for t in range(n):
                sc[t] = math.sqrt(sc[t] * sc[t] + 0.5 * margin_noise2)
        gl[:n] = 0.0
        gs[:n] = 0.0
        if n == 2 and kind == GAUSSIAN:
            # Two teams: the Gaussian Elo game (its formula in elo.py has unit scales, sqrt 2 together),
            # rescaled to these teams' scales: z = (m_0 - m_1) / sqrt(s_0^2 + s_1^2).
            outcome = pair_score(rank[0], rank[1])
            if outcome < 0.0:
                loglik[m], gl[0] = 0.0, 0.0
            else:
                unit = _SQRT2 / math.sqrt(sc[0] * sc[0] + sc[1] * sc[1])
                loglik[m], g = pair_outcome((loc[0] - loc[1]) * unit, outcome, ELO_GAUSSIAN, GRADIENT, True)
                gl[0] = g * unit
            gl[1] = -gl[0]
        else:
            loglik[m] = log_outcome(loc[:n], sc[:n], kind, shape, rank, size[:n], 0.0, True, gl, gs, precision)
        if has_score and all_scored(score, t0, n):
            # the scores' Gaussian likelihood replaces the order's (a function of the scores) in the step
            score_gradient(loc, score[t0:t0 + n], n, margin_scale, margin_noise2, gl)
        v = match_weight[m] if has_weight else 1.0
        for t in range(n):
            for p in range(team_start[t0 + t], team_start[t0 + t + 1]):
                r = row[p]
                step = _k_at(mu[r], kx, ky) * weight[p] * gl[t] * provisional_factor(provisional, games[r])
                if has_weight:
                    step *= v
                mu[r] = max(mu[r] + step, floor)
                games[r] += 1
                hist_mu[p] = mu[r]
