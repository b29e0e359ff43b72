"""Probabilities of orderings of independent performances.

Team ``i`` performs ``X_i = s_i + e_i`` with independent noise ``e_i`` of a fixed one-dimensional
density.  This module gives ``log P(team i performs best)`` for

* ``density="gumbel"``: Gumbel noise, i.e. Plackett-Luce; in the victory order ``P = softmax(s)``
  (McFadden 1974), in the elimination order the exact censored-group integral of
  :func:`podium.models.plackett_luce.censored_block`;
* ``density="gaussian"``: unit-variance Gaussian noise (the Thurstonian model of the multiplayer-Elo note,
  section 3.3): ``P(i first) = int phi(x - s_i) prod_{j != i} Phi(x - s_j) dx``, by the trapezoid rule in
  log space on a grid that spans every team (``Phi((s_1 - s_2)/sqrt 2)`` in closed form for two teams).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from .numerics import jit, log_ndtr, logsumexp, norm_logpdf

__all__ = ["log_win_probabilities"]

_GRID_STEP = 0.05      # a twentieth of the noise's standard deviation: trapezoid error far below 1e-12
_GRID_REACH = 9.0      # Phi(-9) ~ 1e-19: nothing of any team's mass lies further out
_MAX_NODES = 400_000


@jit
def _gaussian_log_win(s: NDArray[np.float64], out: NDArray[np.float64]) -> None:
    n = len(s)
    if n == 2:
        d = (s[0] - s[1]) / math.sqrt(2.0)
        out[0] = log_ndtr(d)
        out[1] = log_ndtr(-d)
        return
    lo, hi = s.min() - _GRID_REACH, s.max() + _GRID_REACH
    nodes = int(math.ceil((hi - lo) / _GRID_STEP)) + 1
    if nodes > _MAX_NODES:
        nodes = _MAX_NODES
    h = (hi - lo) / (nodes - 1)
    terms = np.empty((n, nodes))
    for k in range(nodes):
        x = lo + k * h
        all_below = 0.0
        for j in range(n):
            all_below += log_ndtr(x - s[j])
        for i in range(n):
            terms[i, k] = norm_logpdf(x - s[i]) + all_below - log_ndtr(x - s[i])
    for i in range(n):
        out[i] = logsumexp(terms[i], nodes) + math.log(h)


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
