"""Probabilities of orderings of independent performances: the heart of the Gaussian multiplayer Elo.

Competitor ``i`` performs ``X_i = m_i + s_i e_i`` with independent noise ``e_i`` of a fixed one-dimensional
density: Gaussian (the Thurstonian model of the multiplayer-Elo note, section 3.3, and TrueSkill's
predictive model), maximum-type Gumbel (Plackett-Luce in the victory order), logistic, or skew-normal.
This module gives, for any number of competitors,

* :func:`log_order` -- ``log P(observed outcome)`` with draws and non-finishers, and its gradient with
  respect to every ``m_i`` and ``s_i`` (the note's recursion, density after density, in log space, with a
  backward sweep over the same grid for the gradient);
* :func:`rank_probabilities` -- ``P(competitor i finishes in place k)``;
* :func:`log_win_probabilities` -- ``log P(competitor i performs best)``.

How: :func:`log_outcome` turns ranks into stages (places, drawn groups, non-finishers) and hands them to
:func:`podium.ordering.chain.order_log_prob`: a strict order of Gaussian performances goes first to the fast tier
:func:`podium.ordering.gauss_chain.gauss_order_log_prob` (one uniform lattice, linear space), and everything it
cannot vouch for to the note's recursion on windows placed by expectation propagation, over a graded lattice, with
a self-check that refines until every stage's posterior integrates to 1;
place and win probabilities integrate over a lattice graded to the competitors' own spreads
(:func:`_prior_lattice`).  Both use :func:`podium.ordering.lattice.cumulate`, the trapezoid rule with
Euler-Maclaurin corrections in log space, so an upset with ``log P = -20000`` is as accurate as a likely
outcome.  The tests check about 1e-9 in ``log P`` against closed forms, mpmath, brute force and Monte Carlo.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from .densities import DENSITIES, GAUSSIAN, GUMBEL, LOGISTIC, SKEW_NORMAL
from .frame import CHAIN_SCALE_SPAN
from .luce import ELIMINATION, VICTORY, plackett_luce_log_win
from .numerics import first_invalid
from .outcome import log_outcome, log_win, log_win_pair, place_probabilities, rank_groups, tie_member, tie_turn

# the validating functions, and what the kernels call: log_outcome with its density codes, pair and rank helpers
__all__ = ["CHAIN_SCALE_SPAN", "DENSITIES", "GAUSSIAN", "GUMBEL", "LOGISTIC", "SKEW_NORMAL", "density_code", "log_order",
           "log_outcome", "log_win_pair", "log_win_probabilities", "rank_groups", "rank_probabilities", "tie_member", "tie_turn"]


# -- the public, validating layer -------------------------------------------------------------------------------
def density_code(density: str, shape: float = 0.0) -> int:
    """The kernel code of a density name; raises ``ValueError`` naming the choices."""
    if density not in DENSITIES:
        raise ValueError(f"'density' must be one of {DENSITIES}. Got {density!r} instead.")
    if not isinstance(shape, (int, float)) or isinstance(shape, bool) or not math.isfinite(shape):
        raise ValueError(f"'shape' must be a finite float. Got {shape!r} instead.")
    return DENSITIES.index(density)


def _arrays(m: Sequence[float] | NDArray[np.float64], s: Sequence[float] | NDArray[np.float64] | None,
            ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    # (An array is used as given: the kernels only read it.  A game server calls this once per match.)
    loc = m if type(m) is np.ndarray and m.dtype == np.float64 and m.ndim == 1 else np.array(m, dtype=np.float64, ndmin=1)
    if s is None:
        scale = np.ones(len(loc))
    else:
        scale = s if type(s) is np.ndarray and s.dtype == np.float64 else np.array(s, dtype=np.float64, ndmin=1)
    if loc.ndim != 1 or len(loc) < 1:
        raise ValueError(f"'m' must be a non-empty sequence of floats. Got {m!r:.80}.")
    if scale.shape != loc.shape:
        raise ValueError(f"'s' must have one scale per competitor ({len(loc)}). Got {s!r:.80}.")
    invalid = first_invalid(loc, scale)
    if invalid == 1:
        raise ValueError(f"'m' must be finite. Got {m!r:.80}.")
    if invalid == 2:
        raise ValueError(f"'s' must be positive and finite. Got {s!r:.80}.")
    return loc, scale


def log_order(
    m: Sequence[float] | NDArray[np.float64], s: Sequence[float] | NDArray[np.float64] | None = None,
    rank: Sequence[int | None] | None = None, *, density: str = "gaussian", shape: float = 0.0,
    margin: float = 0.0, size: Sequence[float] | None = None, gradient: bool = False, precision: float = 1.0,
) -> float | tuple[float, NDArray[np.float64], NDArray[np.float64]]:
    """``log P(observed outcome)`` for independent performances ``X_i = m_i + s_i e_i``.

    Parameters
    ----------
    m, s : sequences of float
        Locations and scales (default 1) of the competitors' performances.
    rank : sequence of int or None, optional
        ``0`` is best; equal ranks are a draw; ``None`` (or a negative rank) did not finish: below every
        finisher, unordered among themselves.  Default: the order given, winner first.
    density : {"gaussian", "gumbel", "logistic", "skew_normal"}
        The noise density (``shape`` is the skew-normal's ``alpha``).
    margin, size : float, sequence of float
        TrueSkill's draw margin: ``X_a - X_b > margin sqrt(size_a + size_b)`` for a win, and a draw when
        every member of a group lies within that margin below its best.  With ``margin = 0`` (default) a
        draw is the average over the orders of the drawn group (see :func:`log_outcome`).
    gradient : bool
        Also return ``d log P / d m`` and ``d log P / d s`` (not with ``margin > 0`` and a draw).
    precision : float
        Grid refinement; the error falls as ``precision ** -8`` from about 1e-9 at 1.
    """
    loc, scale = _arrays(m, s)
    n = len(loc)
    kind = density_code(density, shape)
    if rank is None:
        ranks = np.arange(n, dtype=np.int64)
    else:
        if len(rank) != n:
            raise ValueError(f"'rank' must have one entry per competitor ({n}). Got {rank!r:.80}.")
        try:
            ranks = np.array(rank, dtype=np.int64)
        except TypeError:  # (None: did not finish)
            ranks = np.array([-1 if r is None else int(r) for r in rank], dtype=np.int64)
    sizes = np.ones(n) if size is None else np.array(size, dtype=np.float64)
    if margin < 0 or not math.isfinite(margin):
        raise ValueError(f"'margin' must be a non-negative float. Got {margin!r} instead.")
    if kind == SKEW_NORMAL and margin > 0:
        raise ValueError("'margin' needs a density with a closed-form distribution function, not 'skew_normal'.")
    if kind != GAUSSIAN and n > 1 and scale.max() > CHAIN_SCALE_SPAN * scale.min():
        raise ValueError(f"'s' spans a factor of {scale.max() / scale.min():.3g}; the ordering chain of the {density!r} "
                         f"density takes scales within a factor of {CHAIN_SCALE_SPAN:g} of each other (the Gaussian's, "
                         "rank_probabilities and log_win_probabilities take any).")
    if gradient and margin > 0 and len(np.unique(fin := ranks[ranks >= 0])) < len(fin):
        raise ValueError("'gradient' is not available for draws in the draw-margin model (margin > 0).")
    gl = np.zeros(n)
    gs = np.zeros(n)
    value = log_outcome(loc, scale, kind, float(shape), ranks, sizes, float(margin), gradient, gl, gs,
                        float(precision))
    return (value, gl, gs) if gradient else value


def rank_probabilities(m: Sequence[float] | NDArray[np.float64], s: Sequence[float] | NDArray[np.float64] | None = None,
                       *, density: str = "gaussian", shape: float = 0.0, reverse: bool = False,
                       precision: float = 1.0) -> NDArray[np.float64]:
    """``P[i, k] = P(competitor i finishes in place k)``, place 0 best; rows and columns sum to 1.

    ``reverse``: the places of the performances' reversed order (lowest performance first), which with
    the Gumbel density is Plackett-Luce's elimination order.
    """
    loc, scale = _arrays(m, s)
    kind = density_code(density, shape)
    out = np.empty((len(loc), len(loc)))
    if len(loc) == 1:
        out[0, 0] = 1.0
        return out
    if reverse:  # the places of -X; a reflected density is the same one with negated locations when symmetric
        if kind in (GUMBEL, SKEW_NORMAL):
            raise ValueError("'reverse' needs a symmetric density; use the reflected model's locations.")
        place_probabilities(-loc, scale, kind, float(shape), out, float(precision))
    else:
        place_probabilities(loc, scale, kind, float(shape), out, float(precision))
    return out


def log_win_probabilities(s: NDArray[np.float64], *, density: str = "gaussian", order: str = "victory",
                          scale: NDArray[np.float64] | None = None, shape: float = 0.0) -> NDArray[np.float64]:
    """``log P(competitor i performs best)`` for locations ``s`` (natural units).

    Gumbel noise is Plackett-Luce: ``softmax(s)`` in the victory order (McFadden 1974), the exact
    censored-group integral of :func:`podium.ordering.luce.censored_block` in the elimination
    order.  Other densities integrate ``f_i prod_{j != i} F_j`` on the grid (:func:`log_win`).  ``scale``: the
    performances' scales (default 1); Gumbel noise with one scale for all is Plackett-Luce in ``s / scale``, in either
    order; the elimination order is defined for nothing else (a ValueError names ``order``).
    """
    loc = np.ascontiguousarray(s, dtype=np.float64)
    out = np.empty(len(loc))
    kind = density_code(density, shape)
    if order not in ("victory", "elimination"):
        raise ValueError(f"'order' must be 'victory' or 'elimination'. Got {order!r}.")
    sd = None if scale is None else np.ascontiguousarray(scale, dtype=np.float64)
    if kind == GUMBEL and (sd is None or (len(sd) and bool(np.all(sd == sd[0])))):
        # Plackett-Luce in its utilities loc / scale, less the largest (no digits lost to a common offset)
        utility = loc if sd is None else (loc - loc.max()) / sd[0] if len(loc) else loc
        plackett_luce_log_win(utility, len(loc), VICTORY if order == "victory" else ELIMINATION, out)
        return out
    if order != "victory":
        raise ValueError("'order' = 'elimination' is Plackett-Luce's (Gumbel noise with one scale for every "
                         f"competitor); got density={density!r} with scales {scale!r:.80}.")
    sd = np.ones(len(loc)) if sd is None else sd
    if len(loc) == 2:
        out[0], out[1] = log_win_pair(kind, float(shape), loc[0], sd[0], loc[1], sd[1])
        return out
    log_win(loc, sd, kind, float(shape), out, 1.0)
    return out
