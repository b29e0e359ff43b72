"""Probabilities of orderings of independent performances.

Team ``i`` performs ``X_i = s_i + e_i`` with independent noise ``e_i`` of a fixed one-dimensional
density.  This module gives ``log P(team i performs best)`` for

* ``density="gumbel"``: Gumbel noise, i.e. Plackett-Luce; in the victory order ``P = softmax(s)``
  (McFadden 1974), in the elimination order the exact censored-group integral of
  :func:`podium.models.plackett_luce.censored_block`;
* ``density="gaussian"``: unit-variance Gaussian noise (the Thurstonian model of the multiplayer-Elo note,
  section 3.3): ``P(i first) = int phi(x - s_i) prod_{j != i} Phi(x - s_j) dx``, by the trapezoid rule in
  log space with a step of 0.05 on a grid from 53 below the best team to 9 above it (at most 1,240 nodes
  whatever the spread); ``Phi((s_1 - s_2)/sqrt 2)`` in closed form for two teams.  Log-probabilities of
  teams that cannot win (below about -700) are bounds, not exact values; the general ordering routine with an
  adaptive grid is issue 4's.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from .numerics import jit, log_ndtr, logsumexp, norm_logpdf

__all__ = ["log_win_probabilities"]

_GRID_STEP = 0.05      # a twentieth of the noise's standard deviation: trapezoid error far below 1e-12
_GRID_REACH = 9.0      # Phi(-9) ~ 1e-19: nothing of any team's mass lies further out
_GRID_BELOW = 53.0     # Phi(-53 / sqrt 2) ~ 1e-307: teams further below the best cannot win


@jit
def _gaussian_log_win(s: NDArray[np.float64], out: NDArray[np.float64]) -> None:
    n = len(s)
    if n == 2:
        d = (s[0] - s[1]) / math.sqrt(2.0)
        out[0] = log_ndtr(d)
        out[1] = log_ndtr(-d)
        return
    # Every team's integrand peaks between its own strength and the best one's, so the grid spans
    # [best - _GRID_BELOW, best + _GRID_REACH]: a team further below the best than that has
    # P(first) < Phi(-_GRID_BELOW / sqrt 2) ~ 1e-305 and gets a log-probability of at most that size.
    best = s.max()
    lo = max(s.min(), best - _GRID_BELOW) - _GRID_REACH
    hi = best + _GRID_REACH
    nodes = int(math.ceil((hi - lo) / _GRID_STEP)) + 1
    h = (hi - lo) / (nodes - 1)
    all_below = np.empty(nodes)
    for k in range(nodes):
        x = lo + k * h
        acc = 0.0
        for j in range(n):
            acc += log_ndtr(x - s[j])
        all_below[k] = acc
    terms = np.empty(nodes)
    for i in range(n):
        for k in range(nodes):
            x = lo + k * h
            terms[k] = norm_logpdf(x - s[i]) + all_below[k] - log_ndtr(x - s[i])
        out[i] = logsumexp(terms, nodes) + math.log(h)


def log_win_probabilities(s: NDArray[np.float64], *, density: str = "gaussian", order: str = "victory") -> NDArray[np.float64]:
    """``log P(team i performs best)`` for team strengths ``s`` (natural units).

    Parameters
    ----------
    s : float64[n]
        Team strengths (locations of the performances).
    density : {"gaussian", "gumbel"}
        The noise density; Gaussian has unit variance, Gumbel unit scale.
    order : {"victory", "elimination"}
        For Gumbel only: which end of the order Plackett-Luce chooses first.
    """
    from .models.plackett_luce import ELIMINATION, VICTORY, plackett_luce_log_win

    s = np.ascontiguousarray(s, dtype=np.float64)
    out = np.empty(len(s))
    if density == "gumbel":
        plackett_luce_log_win(s, len(s), VICTORY if order == "victory" else ELIMINATION, out)
    elif density == "gaussian":
        _gaussian_log_win(s, out)
    else:
        raise ValueError(f"'density' must be 'gaussian' or 'gumbel'. Got {density!r}.")
    return out
