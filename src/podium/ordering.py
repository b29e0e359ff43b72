"""Probabilities of orderings of independent performances.

Team ``i`` performs ``X_i = m_i + s_i e_i`` with independent noise ``e_i`` of a fixed one-dimensional
density.  This module gives

* ``log P(team i performs best)`` (:func:`log_win_probabilities`) for

  - ``density="gumbel"``: Gumbel noise, i.e. Plackett-Luce; in the victory order ``P = softmax(m)``
    (McFadden 1974), in the elimination order the exact censored-group integral of
    :func:`podium.models.plackett_luce.censored_block`;
  - ``density="gaussian"``: Gaussian noise with scales ``s_i`` (the Thurstonian model of the
    multiplayer-Elo note, section 3.3, and TrueSkill's predictive model):
    ``P(i first) = int phi_i(x) prod_{j != i} Phi_j(x) dx`` by the trapezoid rule in log space on a
    uniform grid with a step of a quarter of the smallest scale.  For a smooth integrand that decays
    on both sides the trapezoid rule on the whole line converges geometrically (its error is of order
    ``exp(-2 pi^2 s^2 / h^2)``, below 1e-100 here), so the result is exact to rounding -- as long as the
    grid stays under 200,000 nodes; when the range divided by the smallest scale needs more (scales 1e4
    apart) the step grows and the result is wrong (a known bug, ``tests/test_ordering.py``, for issue 4);
    ``Phi((m_1 - m_2)/sqrt(s_1^2 + s_2^2))`` in closed form for two teams;

* ``log P(observed outcome)`` for Gaussian performances (:func:`gaussian_log_order`), with draws through a
  draw margin and non-finishers censored, by integrating density after density on a grid (below).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from .numerics import jit, log_ndtr, log_ndtr_diff, logaddexp, logsumexp, norm_logpdf

__all__ = ["log_win_probabilities", "gaussian_log_order"]

_WIN_STEPS = 4.0       # grid nodes per smallest scale for win probabilities
_WIN_REACH = 12.0      # phi(12) ~ 1e-32: no team's mass lies further out than this
_WIN_BELOW = 40.0      # below the strongest team's m - 40 s everybody else's Phi product is < 1e-300
_ORDER_STEPS = 8.0     # grid nodes per smallest scale for ordering likelihoods
_MAX_NODES = 200_000


@jit
def gaussian_log_win(m: NDArray[np.float64], s: NDArray[np.float64], out: NDArray[np.float64]) -> None:
    """``log P(X_i > X_j for all j)`` for independent ``X_i ~ N(m_i, s_i^2)``, written into ``out``."""
    n = len(m)
    if n == 2:
        d = (m[0] - m[1]) / math.sqrt(s[0] * s[0] + s[1] * s[1])
        out[0] = log_ndtr(d)
        out[1] = log_ndtr(-d)
        return
    # Nobody's integrand has mass outside [max_i(m_i - 40 s_i), max_i(m_i + 12 s_i)]: below the left end
    # the product of the others' distribution functions underflows, right of the right end every density
    # does.  A team entirely below the left end gets the tail of its integrand there, a lower bound.
    lo = np.inf
    hi = -np.inf
    floor = -np.inf
    s_min = np.inf
    for i in range(n):
        lo = min(lo, m[i] - _WIN_REACH * s[i])
        hi = max(hi, m[i] + _WIN_REACH * s[i])
        floor = max(floor, m[i] - _WIN_BELOW * s[i])
        s_min = min(s_min, s[i])
    lo = max(lo, floor)
    nodes = int(min(math.ceil((hi - lo) / s_min * _WIN_STEPS), _MAX_NODES)) + 1
    h = (hi - lo) / (nodes - 1)
    all_below = np.zeros(nodes)
    for k in range(nodes):
        x = lo + k * h
        for j in range(n):
            all_below[k] += log_ndtr((x - m[j]) / s[j])
    terms = np.empty(nodes)
    for i in range(n):
        for k in range(nodes):
            z = (lo + k * h - m[i]) / s[i]
            terms[k] = norm_logpdf(z) - math.log(s[i]) + all_below[k] - log_ndtr(z)
        out[i] = logsumexp(terms, nodes) + math.log(h)


# -- ordering likelihood on a grid ---------------------------------------------------------------------
# Gauss-Legendre points on [0, 1] for the panel integrals, and the 6-point Lagrange stencil weights.
_GLX, _GLW = np.polynomial.legendre.leggauss(6)
_PANEL_X = 0.5 * (_GLX + 1.0)
_PANEL_W = 0.5 * _GLW
_STENCIL = 6
_LAGRANGE_DENOM = np.array([1.0 / math.prod(j - k for k in range(_STENCIL) if k != j) for j in range(_STENCIL)])


@jit
def _interp(ell: NDArray[np.float64], j0: int, x: float) -> float:
    """The degree-5 polynomial through ``ell[j0 .. j0+5]`` at ``x`` (in node units, relative to ``j0``)."""
    acc = 0.0
    for j in range(_STENCIL):
        w = _LAGRANGE_DENOM[j]
        for k in range(_STENCIL):
            if k != j:
                w *= x - k
        acc += w * ell[j0 + j]
    return acc


@jit
def _log_panel(ell: NDArray[np.float64], i: int, theta: float, h: float) -> float:
    """``log int_{x_i}^{x_i + theta h} exp(ell(x)) dx`` for ``ell`` interpolated from its node values.

    ``ell`` is interpolated by the degree-5 polynomial through the six nodes around the panel (shifted
    inwards at the ends of the grid; error ``O(h^6 ell^(6))``) and integrated by 6-point Gauss-Legendre,
    on sub-panels when ``ell`` changes by more than 4 across the panel.  Working with ``ell`` rather than
    ``exp(ell)`` keeps the relative accuracy in the tails, where ``exp(ell)`` spans hundreds of orders of
    magnitude.
    """
    n = len(ell)
    j0 = min(max(i - 2, 0), n - _STENCIL)
    top = max(ell[i], ell[min(i + 1, n - 1)])
    change = abs(ell[min(i + 1, n - 1)] - ell[i]) * theta
    parts = max(1, int(math.ceil(change / 4.0)))
    width = theta / parts
    total = 0.0
    for p in range(parts):
        for k in range(len(_PANEL_X)):
            x = i - j0 + (p + _PANEL_X[k]) * width
            total += _PANEL_W[k] * math.exp(_interp(ell, j0, x) - top)
    if total <= 0.0:
        return -np.inf
    return top + math.log(total * width * h)


@jit
def _cumulative(ell: NDArray[np.float64], h: float, out: NDArray[np.float64]) -> None:
    """``out[i] = log int_{-inf}^{x_i} exp(ell)``; left of the grid ``exp(ell)`` is taken as exponential."""
    n = len(ell)
    slope = (ell[1] - ell[0]) / h
    out[0] = ell[0] - math.log(slope) if slope > 1.0 / h else ell[0] + math.log(h)
    for i in range(n - 1):
        out[i + 1] = logaddexp(out[i], _log_panel(ell, i, 1.0, h))


@jit
def _shifted(ell: NDArray[np.float64], cum: NDArray[np.float64], lo: float, h: float, y: float) -> float:
    """``log int_{-inf}^{y} exp(ell)`` at any ``y``, from the cumulative values at the nodes."""
    n = len(ell)
    u = (y - lo) / h
    if u <= 0.0:
        slope = max((ell[1] - ell[0]) / h, 0.0)
        return cum[0] + slope * (y - lo)
    if u >= n - 1:
        return cum[n - 1]
    i = int(u)
    theta = u - i
    if theta == 0.0:
        return cum[i]
    return logaddexp(cum[i], _log_panel(ell, i, theta, h))


@jit
def rank_groups(rank: NDArray[np.int64], order: NDArray[np.int64], starts: NDArray[np.int64]) -> tuple[int, int]:
    """Group boundaries of the finishers, given ``order`` sorted by rank with non-finishers (-1) last.

    Writes the start of each group of equal rank into ``starts`` (then the number of finishers) and
    returns ``(groups, finishers)``.
    """
    finishers = 0
    for i in range(len(rank)):
        if rank[i] >= 0:
            finishers += 1
    groups = 0
    for k in range(finishers):
        if k == 0 or rank[order[k]] != rank[order[k - 1]]:
            starts[groups] = k
            groups += 1
    starts[groups] = finishers
    return groups, finishers


@jit
def gaussian_log_order(
    m: NDArray[np.float64], s: NDArray[np.float64], rank: NDArray[np.int64], size: NDArray[np.float64],
    margin: float,
) -> float:
    """``log P(observed outcome)`` for independent team performances ``X_i ~ N(m_i, s_i^2)``.

    The outcome: teams grouped by rank (``rank[i] = -1``: did not finish).  With the draw margin
    ``eps_ij = margin * sqrt(size_i + size_j)`` (TrueSkill paper, section 4.1) the event is

    * **wins**: between consecutive rank groups, the best performance of the better group exceeds the best
      of the next by more than ``eps`` (for two single teams: ``X_a - X_b > eps_ab``, so an outcome
      without draws is the exact chain ``X_1 - X_2 > eps_12, X_2 - X_3 > eps_23, ...``);
    * **draws**: every member of a tied group lies within ``eps_ij`` below the group's best member ``i``
      (for two teams exactly ``|X_a - X_b| <= eps_ab``); between a tied group and its neighbours the
      margin is the one for the largest team of each group;
    * **non-finishers**: all below the best member of the last group of finishers, in any order (a
      product of distribution functions: censored, not ordered, no margin).

    Computed as the multiplayer-Elo note does, density after density from the bottom of the order, in
    log space: ``C_m(x) = int_{-inf}^x q_m(z) B(z) dz`` with ``B`` the non-finishers' joint distribution
    function and ``q_k`` the density of group ``k``'s best member with the group's draw condition, then
    ``C_k(x) = int_{-inf}^x q_k(z) C_{k+1}(z - eps) dz`` and ``P = C_1(inf)``.  The grid is uniform, 8
    nodes per smallest scale over every team's ``m +- 12 s`` (widened by the margins); each panel is
    integrated by 6-point Gauss-Legendre of the degree-5 interpolant of the log-integrand, which keeps the
    relative accuracy in the tails: about 1e-9 in ``log P`` for two or three rank groups, growing with
    their number (2.6e-8 for 8) (checked against mpmath in the tests).  Returns ``-inf`` for a draw when the
    margin is 0.  Known bugs, kept as strict xfails in ``tests/test_ordering.py`` for issue 4's adaptive
    grid: scales 1e3 or more apart make the panel subdivision, and so the run time, unbounded; a margin
    below the rounding unit of the grid coordinates gives NaN.
    """
    n = len(m)
    order = np.argsort(np.where(rank < 0, np.iinfo(np.int64).max, rank), kind="mergesort")
    starts = np.empty(n + 1, dtype=np.int64)
    groups, finishers = rank_groups(rank, order, starts)
    if finishers == 0:
        return 0.0
    # margins: pairs inside groups, and links between consecutive groups
    link = np.zeros(max(groups - 1, 1))
    reach = 0.0
    for g in range(groups):
        a, b = starts[g], starts[g + 1]
        if b - a > 1:
            if margin <= 0.0:
                return -np.inf  # a draw has probability 0 without a margin
            big = 0.0
            for k in range(a, b):
                big = max(big, size[order[k]])
            reach += margin * math.sqrt(2.0 * big)
        if g + 1 < groups:
            big_a = 0.0
            for k in range(a, b):
                big_a = max(big_a, size[order[k]])
            big_b = 0.0
            for k in range(b, starts[g + 2]):
                big_b = max(big_b, size[order[k]])
            link[g] = margin * math.sqrt(big_a + big_b)
            reach += link[g]
    lo = np.inf
    hi = -np.inf
    s_min = np.inf
    for i in range(n):
        lo = min(lo, m[i] - _WIN_REACH * s[i])
        hi = max(hi, m[i] + _WIN_REACH * s[i])
        s_min = min(s_min, s[i])
    lo -= reach
    hi += reach
    nodes = int(min(math.ceil((hi - lo) / s_min * _ORDER_STEPS), _MAX_NODES)) + 1
    nodes = max(nodes, _STENCIL)
    h = (hi - lo) / (nodes - 1)
    base = np.zeros(nodes)  # the non-finishers' log B(x) = sum_j log Phi((x - m_j)/s_j), 0 if none
    for j in range(finishers, n):
        t = order[j]
        for k in range(nodes):
            base[k] += log_ndtr((lo + k * h - m[t]) / s[t])
    ell = np.empty(nodes)       # log-integrand of the current group
    cum = np.empty(nodes)       # its cumulative integral
    below_ell = np.empty(nodes)  # the same two for the group below
    below_cum = np.empty(nodes)
    terms = np.empty(n)
    for g in range(groups - 1, -1, -1):
        a, b = starts[g], starts[g + 1]
        for k in range(nodes):
            x = lo + k * h
            below = base[k] if g == groups - 1 else _shifted(below_ell, below_cum, lo, h, x - link[g])
            if b - a == 1:
                t = order[a]
                q = norm_logpdf((x - m[t]) / s[t]) - math.log(s[t])
            else:
                for u in range(a, b):
                    i = order[u]
                    acc = norm_logpdf((x - m[i]) / s[i]) - math.log(s[i])
                    for v in range(a, b):
                        if v != u:
                            j = order[v]
                            e = margin * math.sqrt(size[i] + size[j])
                            acc += log_ndtr_diff((x - m[j]) / s[j], (x - e - m[j]) / s[j])
                    terms[u - a] = acc
                q = logsumexp(terms, b - a)
            ell[k] = q + below
        _cumulative(ell, h, cum)
        ell, below_ell = below_ell, ell
        cum, below_cum = below_cum, cum
    return below_cum[nodes - 1]


def log_win_probabilities(s: NDArray[np.float64], *, density: str = "gaussian", order: str = "victory",
                          scale: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """``log P(team i performs best)`` for team strengths ``s`` (natural units).

    Parameters
    ----------
    s : float64[n]
        Team strengths (locations of the performances).
    density : {"gaussian", "gumbel"}
        The noise density; Gaussian has unit variance, Gumbel unit scale.
    order : {"victory", "elimination"}
        For Gumbel only: which end of the order Plackett-Luce chooses first.
    scale : float64[n], optional
        Gaussian only: each team's standard deviation (default 1).
    """
    from .models.plackett_luce import ELIMINATION, VICTORY, plackett_luce_log_win

    s = np.ascontiguousarray(s, dtype=np.float64)
    out = np.empty(len(s))
    if density == "gumbel":
        plackett_luce_log_win(s, len(s), VICTORY if order == "victory" else ELIMINATION, out)
    elif density == "gaussian":
        sd = np.ones(len(s)) if scale is None else np.ascontiguousarray(scale, dtype=np.float64)
        gaussian_log_win(s, sd, out)
    else:
        raise ValueError(f"'density' must be 'gaussian' or 'gumbel'. Got {density!r}.")
    return out
