"""Plackett-Luce closed forms: the ordering probabilities of Gumbel (exponential) performances.

The exponential multiplayer Elo of the multiplayer-Elo note (section 3.2) and the Gumbel density of the ordering
engine both use them: :mod:`podium.ordering` for exact win probabilities, the Elo family's kernels
(:mod:`podium.kernels.elo`) for the gradient step of :class:`podium.PlackettLuce`.

Work in "choice" values ``v``: ``v = s`` for the victory order (the winner is chosen first among all,
then the runner-up among the rest, ...) and ``v = -s`` for the elimination order (the note's version: the
worst is chosen first).  A choice from a remaining set ``R`` picks ``i`` with probability
``exp(v_i) / sum_{j in R} exp(v_j)``, so for a strict order listed in choice order

    log P = sum_i v_i - sum_i log sum_{j >= i} exp(v_j).

Equivalently each team draws ``T_i ~ Exponential(rate = exp(v_i))`` and the smallest ``T`` is chosen
first.  That representation gives two exact pieces:

* **Non-finishers** (censored): "every non-finisher below every finisher, in any order".  In the victory
  order they are chosen last and their order sums out (factor 1).  In the elimination order they are
  chosen first, with probability ``P(max_{i in G} T_i < min_{j in R} T_j)
  = int_0^inf e^{-u} prod_{i in G} (1 - exp(-a_i u)) du``, ``a_i = exp(v_i) / sum_R exp(v_j)``, after
  which the finishers are ordered by Plackett-Luce among themselves (memorylessness).  The integral is
  computed by the trapezoid rule in ``y = log u`` on a grid placed around its log-concave peak; the
  trapezoid rule converges geometrically for such integrands and the test suite checks it against mpmath.
* **Draws**: a group of ``g`` tied teams contributes the *average over the g! orders of the group of the
  log-likelihood* of each order (the geometric mean of their probabilities).  For two teams this is Elo's
  "half a win and half a loss", and it is symmetric in the tied teams by construction.  Averaged over
  orders, the set still to be chosen inside the group is a uniformly random subset ``U`` of each size, so
  the group's term is ``sum_{i in G} v_i - sum_{U != {}} log(A + sum_U exp(v)) / C(g, |U|)`` with ``A`` the
  rest's total, computed exactly for ``g <= 16`` (``2^g`` subsets).  Larger tied groups (which real data
  essentially never has) use Efron's approximation ``log(A + (|U|/g) sum_G exp(v))`` for each size: exact
  when the tied teams have equal ratings, and increasingly off as their ratings spread (one tied team 10
  natural units above sixteen others roughly doubles its step), so the model changes at ``g = 17``.
* **Draws, arithmetic mean** (``ties=ARITHMETIC``): a tied group contributes the log of the *average over its
  g! orders of their probabilities*, ``log P(G is chosen before the rest, in any order) - log g!``.  By
  memorylessness that is the censored integral above with the rest being the groups still to be chosen, so
  it is exact for any ``g`` at ``O(g)`` per quadrature node.  Two teams tied then learn nothing from each
  other (P(either order) = 1), where the geometric mean is Elo's half a win.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from .numerics import jit, log1mexp, logaddexp, logsumexp, x_over_expm1

__all__ = [
    "VICTORY", "ELIMINATION", "GEOMETRIC", "ARITHMETIC", "censored_block", "tied_block", "plackett_luce_gradient",
    "plackett_luce_log_win",
]

VICTORY, ELIMINATION = 0, 1
GEOMETRIC, ARITHMETIC = 0, 1  # a tied group's term: the mean of its orders' log-likelihoods, or of their likelihoods


_MAX_EXACT_TIE = 16


_LINEAR_SPREAD = 600.0  # exp(-600) ~ 1e-261: linear sums of up to 1e6 such terms stay normal numbers


_MAX_CENSOR_NODES = 1 << 17


_DROP = 40.0  # the censoring integral is taken where its log-integrand is within 40 of the peak


@jit
def _log1mexp_exp(z: float) -> float:
    """``log(1 - exp(-e^z))``."""
    if z < -30.0:
        return z - 0.5 * math.exp(z)
    if z > 6.7:
        return 0.0
    return log1mexp(math.exp(z))


@jit
def _g(z: float) -> float:
    """``d/dz log(1 - exp(-e^z)) = x / (e^x - 1)`` at ``x = e^z``."""
    if z > 6.7:
        return 0.0
    return x_over_expm1(math.exp(z))


@jit
def _log_f(y: float, la: NDArray[np.float64], g: int) -> float:
    out = y - math.exp(y)
    for i in range(g):
        out += _log1mexp_exp(la[i] + y)
    return out


@jit
def _slope(y: float, la: NDArray[np.float64], g: int) -> float:
    out = 1.0 - math.exp(y)
    for i in range(g):
        out += _g(la[i] + y)
    return out


@jit
def _node_sum(start: float, h: float, first: int, stride: int, nodes: int, la: NDArray[np.float64], g: int,
              top: float) -> float:
    """``sum_k exp(log f(start + k h) - top)`` over ``k = first, first + stride, ... < nodes``."""
    total = 0.0
    for k in range(first, nodes, stride):
        total += math.exp(_log_f(start + k * h, la, g) - top)
    return total


@jit
def censored_block(
    v: NDArray[np.float64], g: int, log_rest: float, grad: NDArray[np.float64],
) -> float:
    """``log P(every member of G is chosen before any of the rest)`` and its gradient.

    Parameters
    ----------
    v : float64[g]
        Choice values of the group's members.
    log_rest : float
        ``log sum_{j in rest} exp(v_j)``; ``-inf`` when nothing is left (then the probability is 1).
    grad : float64[g] or float64[0]
        Receives ``d log P / d v_i`` for the members; an empty array skips the gradient (two thirds of the work:
        the win probabilities need only the value).  For a rest member ``j`` the derivative is
        ``-exp(v_j - log_rest) * sum(grad)`` (the probability is invariant to a common shift).

    Notes
    -----
    ``P = int e^{-u} prod_i (1 - exp(-a_i u)) du`` with ``a_i = exp(v_i - log_rest)``; with ``u = e^y``
    the log-integrand ``y - e^y + sum_i log(1 - exp(-a_i e^y))`` is concave, its slope
    ``1 - e^y + sum_i x_i/(e^{x_i} - 1)`` (``x_i = a_i e^y``) is positive at ``y = -1`` and negative at
    ``y = log(g + 1) + 1``; the trapezoid grid spans the region within ``_DROP`` of the peak, starting from a
    quarter of the peak's width and halving the step until the integral changes by less than 1e-14.
    """
    want_grad = len(grad) >= g
    if log_rest == -np.inf:
        if want_grad:
            for i in range(g):
                grad[i] = 0.0
        return 0.0
    la = np.empty(g)
    for i in range(g):
        la[i] = v[i] - log_rest
    lo, hi = -1.0, math.log(g + 1.0) + 1.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if _slope(mid, la, g) > 0.0:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12:
            break
    peak_y = 0.5 * (lo + hi)
    peak = _log_f(peak_y, la, g)
    # Width of the peak from the curvature of the log-integrand.
    delta = 1e-4
    curv = (_slope(peak_y - delta, la, g) - _slope(peak_y + delta, la, g)) / (2.0 * delta)
    width = 1.0 / math.sqrt(max(curv, 1e-12))
    # The ends: where the concave log-integrand has fallen by _DROP.
    ends = np.empty(2)
    for side in range(2):
        direction = -1.0 if side == 0 else 1.0
        near, step = peak_y, width
        far = peak_y + direction * step
        while _log_f(far, la, g) > peak - _DROP:
            near = far
            step *= 2.0
            far = peak_y + direction * step
        for _ in range(60):
            mid = 0.5 * (near + far)
            if _log_f(mid, la, g) > peak - _DROP:
                near = mid
            else:
                far = mid
        ends[side] = far
    # Trapezoid rule, halving the step until the integral stops changing (1e-14 relative): the integrand
    # can have a shoulder much sharper than its peak where many factors switch on at once.
    # A halving keeps the old nodes' sum (relative to the peak) and adds the new midpoints.
    span = ends[1] - ends[0]
    nodes = max(int(math.ceil(span / (0.25 * width))), 16) + 1
    h = span / (nodes - 1)
    node_sum = _node_sum(ends[0], h, 0, 1, nodes, la, g, peak)
    log_integral = peak + math.log(node_sum * h)
    while nodes < _MAX_CENSOR_NODES:
        nodes = 2 * nodes - 1
        h *= 0.5
        node_sum += _node_sum(ends[0], h, 1, 2, nodes, la, g, peak)
        finer = peak + math.log(node_sum * h)
        done = abs(finer - log_integral) < 1e-14 * max(1.0, abs(finer))
        log_integral = finer
        if done:
            break
    log_total = log_integral - math.log(h)
    if not want_grad:
        return log_total + math.log(h)
    # Each node's weight once (O(g nodes), not O(g^2 nodes): a tied group of hundreds is a real round's).
    weight = np.empty(nodes)
    for k in range(nodes):
        weight[k] = math.exp(_log_f(ends[0] + k * h, la, g) - log_total)
    for i in range(g):
        acc = 0.0
        for k in range(nodes):
            acc += weight[k] * _g(la[i] + ends[0] + k * h)
        grad[i] = acc
    return log_total + math.log(h)


@jit
def _log_binom(n: int, k: int) -> float:
    return math.lgamma(n + 1.0) - math.lgamma(k + 1.0) - math.lgamma(n - k + 1.0)


@jit
def tied_block(
    v: NDArray[np.float64], g: int, log_rest: float, grad: NDArray[np.float64],
) -> tuple[float, float]:
    """The average over the ``g!`` orders of a tied group of their log-likelihood terms.

    Returns ``(term, log_coef)``: the group's log-likelihood term and the log of the coefficient ``c``
    such that each rest member ``j`` gets ``d term / d v_j = -c exp(v_j)``.  ``grad[:g]`` receives the
    members' derivatives.  Exact subset enumeration for ``g <= 16``; Efron's approximation above (module docstring).
    """
    term = 0.0
    for i in range(g):
        term += v[i]
        grad[i] = 1.0
    coef = -np.inf
    if g <= _MAX_EXACT_TIE:
        full = 1 << g
        log_s = np.empty(full)
        log_s[0] = -np.inf
        size = np.zeros(full, dtype=np.int64)
        for mask in range(1, full):
            low = mask & (-mask)
            bit = 0
            while (1 << bit) != low:
                bit += 1
            prev = mask ^ low
            log_s[mask] = logaddexp(log_s[prev], v[bit])
            size[mask] = size[prev] + 1
            log_w = -_log_binom(g, size[mask])
            l_u = logaddexp(log_rest, log_s[mask])
            term -= math.exp(log_w) * l_u
            coef = logaddexp(coef, log_w - l_u)
            for i in range(g):
                if mask & (1 << i):
                    grad[i] -= math.exp(log_w + v[i] - l_u)
        return term, coef
    log_sg = logsumexp(v, g)
    for k in range(1, g + 1):
        frac = math.log(k / g)
        l_u = logaddexp(log_rest, frac + log_sg)
        term -= l_u
        coef = logaddexp(coef, -l_u)
        for i in range(g):
            grad[i] -= math.exp(frac + v[i] - l_u)
    return term, coef


@jit
def _sort_choice_order(rank: NDArray[np.int64], n: int, order: int, idx: NDArray[np.int64],
                       scratch: NDArray[np.int64]) -> None:
    """Indices in choice order: finishers by rank (best first for victory, worst first for
    elimination), non-finishers last (victory) or first (elimination).  Stable.

    Keys are small integers in every real match, so a counting sort (no data-dependent branches) does the
    work; ``scratch`` holds ``n`` keys and ``2 n + 3`` counters.  Larger rank values fall back to a
    merge sort.
    """
    big = 1
    for i in range(n):
        if rank[i] + 2 > big:
            big = rank[i] + 2
    key = scratch[:n]
    for i in range(n):
        r = rank[i] if rank[i] >= 0 else big  # non-finishers after every finisher
        key[i] = r if order == VICTORY else big - r
    if big > 2 * n + 2:
        sorted_idx = np.argsort(key, kind="mergesort")
        for i in range(n):
            idx[i] = sorted_idx[i]
        return
    count = scratch[n:n + big + 1]
    for k in range(big + 1):
        count[k] = 0
    for i in range(n):
        count[key[i]] += 1
    start = 0
    for k in range(big + 1):
        c = count[k]
        count[k] = start
        start += c
    for i in range(n):
        idx[count[key[i]]] = i
        count[key[i]] += 1


@jit
def plackett_luce_gradient(
    s: NDArray[np.float64], rank: NDArray[np.int64], n: int, order: int, grad: NDArray[np.float64],
    fw: NDArray[np.float64], iw: NDArray[np.int64], want_ll: bool = True, ties: int = GEOMETRIC,
) -> float:
    """Log-likelihood of a match under Plackett-Luce and its gradient with respect to ``s[:n]``.

    ``order`` is ``VICTORY`` or ``ELIMINATION``; non-finishers (``rank = -1``) are censored and ties are
    averaged over their orders, in log-likelihood (``ties=GEOMETRIC``) or likelihood (``ARITHMETIC``), as
    the module docstring derives.  O(n) for strict orders.  ``fw``
    (at least ``7 n + 2`` floats) and ``iw`` (``4 n + 3`` ints) are scratch space, so a replay of strict
    orders allocates nothing (tied and censored groups allocate their own small work arrays).
    ``want_ll=False`` skips the logarithms that only the log-likelihood needs (0 is returned).

    Notes
    -----
    With ``m = max v``, the suffix sums ``S_p = sum_{q >= p} exp(v_q - m)`` and the gradient coefficients
    ``C_p = sum_{q <= p} 1 / S_q`` are kept in linear (shifted) form when the spread of ``v`` is at most
    ``_LINEAR_SPREAD``: no term then underflows or overflows, and each team costs one ``exp`` instead of
    several log-sum-exp steps.  Wider spreads use the same recurrences in log space.
    """
    sign = 1.0 if order == VICTORY else -1.0
    idx = iw[:n]
    _sort_choice_order(rank, n, order, idx, iw[n:4 * n + 3])
    v = fw[:n]                        # choice values in choice order
    suffix = fw[n:2 * n + 1]          # S_p (linear) or log sum_{q >= p} exp(v_q) (log space)
    gv = fw[2 * n + 1:3 * n + 1]      # d log P / d v, in choice order
    coef = fw[3 * n + 1:4 * n + 2]    # coefficient added for every position >= p: gv_j -= c exp(v_j)
    block = fw[4 * n + 2:5 * n + 2]
    bgrad = fw[5 * n + 2:6 * n + 2]
    w = fw[6 * n + 2:7 * n + 2]       # exp(v - m) in linear form
    vmax, vmin = -np.inf, np.inf
    for p in range(n):
        v[p] = sign * s[idx[p]]
        gv[p] = 0.0
        vmax = max(vmax, v[p])
        vmin = min(vmin, v[p])
    linear = vmax - vmin <= _LINEAR_SPREAD
    if linear:
        suffix[n] = 0.0
        for p in range(n - 1, -1, -1):
            w[p] = math.exp(v[p] - vmax)
            suffix[p] = suffix[p + 1] + w[p]
        for p in range(n + 1):
            coef[p] = 0.0
    else:
        suffix[n] = -np.inf
        for p in range(n - 1, -1, -1):
            suffix[p] = logaddexp(suffix[p + 1], v[p])
        for p in range(n + 1):
            coef[p] = -np.inf
    total = 0.0
    p = 0
    while p < n:
        r = rank[idx[p]]
        q = p + 1
        while q < n and rank[idx[q]] == r:
            q += 1
        g = q - p
        if g == 1 and r >= 0:  # one team chosen from the rest
            gv[p] += 1.0
            if linear:
                if want_ll:
                    total += v[p] - vmax - math.log(suffix[p])
                coef[p] += 1.0 / suffix[p]
            else:
                total += v[p] - suffix[p]
                coef[p] = logaddexp(coef[p], -suffix[p])
            p = q
            continue
        if q == n:
            log_rest = -np.inf
        else:
            log_rest = vmax + math.log(suffix[q]) if linear else suffix[q]
        for i in range(g):
            block[i] = v[p + i]
        log_c = -np.inf  # log coefficient for the rest, in unshifted units
        if r < 0 or ties == ARITHMETIC:
            # the non-finishers, or an arithmetic-mean tie: P(the group is chosen before the rest, in any
            # order), the censored integral (0 with nothing left to choose); a tie divides by its g! orders
            total += censored_block(block, g, log_rest, bgrad)
            if r >= 0:
                total -= math.lgamma(g + 1.0)
            mass = 0.0
            for i in range(g):
                gv[p + i] += bgrad[i]
                mass += bgrad[i]
            if q < n and mass > 0.0:
                log_c = math.log(mass) - log_rest
        else:
            term, log_c = tied_block(block, g, log_rest, bgrad)
            total += term
            for i in range(g):
                gv[p + i] += bgrad[i]
        if q < n and log_c > -np.inf:
            if linear:
                coef[q] += math.exp(log_c + vmax)
            else:
                coef[q] = logaddexp(coef[q], log_c)
        p = q
    if linear:
        running = 0.0
        for p in range(n):
            running += coef[p]
            gv[p] -= w[p] * running
            grad[idx[p]] = sign * gv[p]
    else:
        running = -np.inf
        for p in range(n):
            running = logaddexp(running, coef[p])
            if running > -np.inf:
                gv[p] -= math.exp(v[p] + running)
            grad[idx[p]] = sign * gv[p]
    return total


@jit
def plackett_luce_log_win(s: NDArray[np.float64], n: int, order: int, out: NDArray[np.float64]) -> None:
    """``log P(team i is first)`` for each team.

    Victory order: the softmax of ``s``.  Elimination order: the probability that all the others are
    eliminated before ``i``, the censored-group integral with ``G`` = the others and the rest = ``{i}``.  Of two
    teams the first eliminated is ``j`` with probability ``e^-s_j / (e^-s_i + e^-s_j)``, the softmax of ``s``: the
    two orders agree, and the closed form is taken.
    """
    if order == VICTORY or n <= 2:
        total = logsumexp(s, n)
        for i in range(n):
            out[i] = s[i] - total
        return
    others = np.empty(n - 1)
    no_gradient = np.empty(0)
    for i in range(n):
        k = 0
        for j in range(n):
            if j != i:
                others[k] = -s[j]
                k += 1
        out[i] = censored_block(others, n - 1, -s[i], no_gradient)
