"""The frame the ordering engine computes in, and the clusters it splits a field into when competitors are far apart.

Every ordering probability is unchanged by a common shift of the locations and a common positive factor on locations,
scales and draw margin; the grids of :mod:`podium.ordering.outcome` lose digits when locations are far from 0 beside
the scales, or the scales far apart, so they work in :func:`unit_frame` when :func:`framed` says the input is not in
such a frame already.  Competitors whose prior windows do not overlap (:func:`clusters`) are computed apart, each
cluster in its own frame.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from .densities import shape_info
from .numerics import jit

__all__ = ["CHAIN_SCALE_SPAN", "clusters", "clusters_in_order", "framed", "prior_windows", "unit_frame"]


# The chain (podium.ordering.outcome.log_outcome) of densities other than the Gaussian takes scales within this factor
# of each other: its mode search and windows overflow beyond about 1e50 (measured: logistic and Gumbel races with one
# scale 1e60 or 1e70 times the others' took seconds and returned -1e5 or raised).  The prior lattice (log_win,
# place_probabilities) and the Gaussian chain take any scales.
CHAIN_SCALE_SPAN = 1e40


@jit
def unit_frame(loc: NDArray[np.float64], scale: NDArray[np.float64]
               ) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    """The same performances in the frame where the grids lose no digits: ``((loc - c) / k, scale / k, k)``.

    Every ordering probability is unchanged by a common shift of the locations and by a common positive factor on
    locations, scales and draw margin, so the frame changes no result.  ``c`` is one competitor's own location (the
    median's), whose difference from every location near it is exact (Sterbenz); ``k`` the power of two nearest the
    geometric mean of the smallest and largest scales, exact to divide by, so that densities of scales 1e300 apart
    stay finite (the narrower's density, squared, overflowed at 1e154 from the wider's).  Without it the lattice's
    nodes ``x = lo + t h`` were rounded to the spacing of the locations' floats: races at 1e6 with scales 1e-6 lost
    5e-7 of ``log P``, fields at 1e20 with unit scales gave every win probability as 0, and scales of 2^300 lost 1e-3
    (squares near overflow).
    """
    n = len(loc)
    ref = loc[np.argsort(loc)[n // 2]] if n else 0.0
    low = np.inf
    top = 0.0
    for i in range(n):
        low = min(low, scale[i])
        top = max(top, scale[i])
    k = 2.0 ** round(0.5 * (math.log2(low) + math.log2(top))) if 0.0 < low and top < np.inf else 1.0
    return (loc - ref) / k, scale / k, k


@jit
def framed(loc: NDArray[np.float64], scale: NDArray[np.float64]) -> bool:
    """Whether the performances are in a frame where the grids lose no digits already: every location within 2^16
    of the smallest scale from 0 (a node then errs by 2^-36 of its spacing at most) and the scales within 2^100 of 1
    and of each other.  Then :func:`unit_frame` would change only rounding, and is skipped (it cost a two-player
    race 0.5 of its 0.8 us)."""
    low = np.inf
    top = 0.0
    far = 0.0
    for i in range(len(loc)):
        low = min(low, scale[i])
        top = max(top, scale[i])
        far = max(far, abs(loc[i]))
    return far <= 65536.0 * low and 2.0 ** -100 <= low and top <= 2.0 ** 100 and top <= 2.0 ** 100 * low


@jit
def clusters_in_order(rank: NDArray[np.int64], cluster: NDArray[np.int64], count: int) -> bool:
    """Whether every member of each cluster (:func:`clusters`, 0 the lowest) finished below every member of the
    cluster above it: a non-finisher is below every finisher, two non-finishers unordered, a tie across clusters not
    in order."""
    none = np.iinfo(np.int64).max
    best = np.full(count, none)
    worst = np.full(count, -1)
    for i in range(len(rank)):
        r = rank[i] if rank[i] >= 0 else none
        best[cluster[i]] = min(best[cluster[i]], r)
        worst[cluster[i]] = max(worst[cluster[i]], r)
    for c in range(count - 1):  # cluster c below cluster c + 1
        if worst[c + 1] == none:
            if best[c] != none:
                return False
        elif best[c] <= worst[c + 1]:
            return False
    return True


@jit
def prior_windows(loc: NDArray[np.float64], scale: NDArray[np.float64], kind: int, shape: float
                  ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Each competitor's window over its whole mass, ``loc - below * scale`` to ``loc + above * scale`` (the
    density's reaches, :func:`podium.ordering.densities.shape_info`): where the prior lattice lays its nodes."""
    _, _, below, above, _ = shape_info(kind, shape)
    return loc - below * scale, loc + above * scale


@jit
def clusters(loc: NDArray[np.float64], scale: NDArray[np.float64], kind: int, shape: float
             ) -> tuple[NDArray[np.int64], int]:
    """Each competitor's cluster (0 the lowest) and their count: the union of the :func:`prior_windows` as disjoint
    intervals.  Between two clusters the lattice holds no nodes, so a competitor's performance is taken as never
    passing into another cluster either way; apart, each keeps its own digits."""
    n = len(loc)
    lo, hi = prior_windows(loc, scale, kind, shape)
    order = np.argsort(lo, kind="mergesort")
    cluster = np.empty(n, dtype=np.int64)
    count = 0
    reach = -np.inf
    for t in range(n):
        i = order[t]
        if t == 0 or lo[i] > reach:
            count += 1
            reach = -np.inf
        cluster[i] = count - 1
        reach = max(reach, hi[i])
    return cluster, count
