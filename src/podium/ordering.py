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

The grid is uniform and chosen from the competitors (:func:`_design`): it covers every competitor's mass
where the observed order puts it, and its step follows the narrowest integrand and the steepest slope the
order forces, for about 1e-9 in ``log P`` (the tests check this against closed forms, mpmath, brute force
and Monte Carlo).  Cumulative integrals are the trapezoid rule with Euler-Maclaurin end corrections
(:func:`_cumulate`), whole-line integrals the plain trapezoid rule; everything runs in log space, so an
upset with ``log P = -20000`` is as accurate as a likely outcome.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from .numerics import jit, log1mexp, log_ndtr, log_ndtr_diff, logaddexp, logsumexp, norm_logpdf

__all__ = ["DENSITIES", "log_order", "rank_probabilities", "log_win_probabilities"]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_LN2 = math.log(2.0)


# -- performance densities -------------------------------------------------------------------------------
# Standardized noise e with density f; a competitor performs X = m + s e.  Codes are used inside the
# compiled kernels; DENSITIES names them for the public API.
GAUSSIAN, GUMBEL, LOGISTIC, SKEW_NORMAL = 0, 1, 2, 3
DENSITIES = ("gaussian", "gumbel", "logistic", "skew_normal")
_LOG_FLOOR = -1e300  # log densities below this are 0 to every purpose; keeps arithmetic free of inf - inf
_EULER = 0.5772156649015329


@jit
def _logpdf(kind: int, shape: float, z: float) -> float:
    """``log f(z)`` of the standardized noise density."""
    if kind == GAUSSIAN:
        return -0.5 * z * z - _LOG_SQRT_2PI
    if kind == GUMBEL:  # the maximum-type Gumbel, f = exp(-z - e^-z): Plackett-Luce in the victory order
        if z < -700.0:
            return _LOG_FLOOR
        return -z - math.exp(-z)
    if kind == LOGISTIC:
        t = abs(z)
        return -t - 2.0 * math.log1p(math.exp(-t))
    # skew-normal (Azzalini 1985): f = 2 phi(z) Phi(shape z)
    return _LN2 - 0.5 * z * z - _LOG_SQRT_2PI + log_ndtr(shape * z)


@jit
def _logcdf(kind: int, shape: float, z: float) -> float:
    """``log F(z)``; not used for the skew-normal, whose distribution function is integrated on the grid."""
    if kind == GAUSSIAN:
        return log_ndtr(z)
    if kind == GUMBEL:
        if z < -700.0:
            return _LOG_FLOOR
        return -math.exp(-z)
    if z >= 0.0:  # logistic
        return -math.log1p(math.exp(-z))
    return z - math.log1p(math.exp(z))


@jit
def _score(kind: int, shape: float, z: float) -> float:
    """``psi(z) = -d log f / dz``: ``d log f((x - m)/s) / dm = psi(z) / s``."""
    if kind == GAUSSIAN:
        return z
    if kind == GUMBEL:
        return 1.0 - math.exp(min(-z, 700.0))
    if kind == LOGISTIC:
        return math.tanh(0.5 * z)
    t = shape * z
    return z - shape * math.exp(norm_logpdf(t) - log_ndtr(t))


@jit
def _shape_info(kind: int, shape: float) -> tuple[float, float, float, float, float]:
    """``(mean, sd, reach below, reach above, sharpness)`` of the standardized density.

    The reaches are where the log-density has fallen by about 34 from its peak (the grid covers them);
    the sharpness is the narrowest width of the log-density's curvature there, relative to ``s``.
    """
    if kind == GAUSSIAN:
        return 0.0, 1.0, 8.3, 8.3, 1.0
    if kind == GUMBEL:
        return _EULER, math.pi / math.sqrt(6.0), 3.6, 35.0, 0.4
    if kind == LOGISTIC:
        return 0.0, math.pi / math.sqrt(3.0), 35.0, 35.0, 1.0
    delta = shape / math.sqrt(1.0 + shape * shape)
    mean = delta * math.sqrt(2.0 / math.pi)
    return mean, math.sqrt(1.0 - mean * mean), 8.3, 8.3, 1.0 / max(1.0, abs(shape))


# -- cumulative integrals in log space ---------------------------------------------------------------------
# Central 7-point finite-difference weights for the first five derivatives (rows 1..5) at the middle node.
def _fd_weights() -> NDArray[np.float64]:
    k = np.arange(-3, 4, dtype=np.float64)
    v = np.array([k ** p / math.factorial(p) for p in range(7)])
    return np.linalg.solve(v, np.eye(7))[:, 1:6].T.copy()


_FD = _fd_weights()


@jit
def _k_exp(z: float) -> float:
    """``coth(z/2)/2 - 1/z``: the trapezoid rule's exact excess for ``int_{-inf}^x e^{lambda t} dt``,
    ``z = lambda h`` (the Euler-Maclaurin series ``z/12 - z^3/720 + ...`` summed)."""
    if abs(z) < 0.5:
        z2 = z * z
        return z * (1.0 / 12.0 - z2 * (1.0 / 720.0 - z2 * (1.0 / 30240.0 - z2 / 1209600.0)))
    return 0.5 / math.tanh(0.5 * z) - 1.0 / z


@jit
def _cumulate(a: NDArray[np.float64], n: int, h: float, rev: bool, out: NDArray[np.float64]) -> None:
    """``out[j] = log int_{-inf}^{x_j} exp(a(x)) dx`` from the log-integrand ``a`` on a uniform grid
    (``rev``: ``int_{x_j}^{inf}``, sweeping from the right).

    The trapezoid rule with the Euler-Maclaurin end corrections at ``x_j`` (the far end contributes
    nothing):  ``int = T_j - h^2/12 u' + h^4/720 u''' - h^6/30240 u^(5)``, error ``O(h^8)``.  The
    derivatives of ``u = e^a`` come from those of ``a`` (central 7-point differences, accurate enough
    for each term's order); the part of the series that is a pure exponential, ``u h K(h a')``, is summed
    in closed form so that a steep integrand (``h |a'|`` up to about 2) stays accurate, and where the
    slope is steeper still only that exponential part is applied (the exact answer for an exponential,
    and always positive).  The running sum is kept in linear space relative to a scale ``E`` that is
    raised whenever the integrand outgrows it, so nothing overflows or underflows.
    """
    e_scale = -np.inf
    total = 0.0
    sgn = -1.0 if rev else 1.0
    for t in range(n):
        j = n - 1 - t if rev else t
        aj = max(a[j], _LOG_FLOOR)
        if aj > e_scale:
            new = aj + 30.0
            total = 0.0 if e_scale == -np.inf else total * math.exp(e_scale - new)
            e_scale = new
        u = math.exp(aj - e_scale)
        trap = h * (total + 0.5 * u)
        g = trap
        if u * h > 1e-17 * trap and 3 <= j and j + 3 < n:
            l1 = 0.0
            l2 = 0.0
            l3 = 0.0
            l4 = 0.0
            l5 = 0.0
            for k in range(7):
                v = a[j + k - 3]
                l1 += _FD[0, k] * v
                l2 += _FD[1, k] * v
                l3 += _FD[2, k] * v
                l4 += _FD[3, k] * v
                l5 += _FD[4, k] * v
            l1 *= sgn / h
            l2 /= h * h
            l3 *= sgn / (h * h * h)
            h4 = h * h * h * h
            l4 /= h4
            l5 *= sgn / (h4 * h)
            z = l1 * h
            corr = h * _k_exp(z)
            if abs(z) <= 2.0:
                mixed3 = l3 + 3.0 * l1 * l2
                mixed5 = (l5 + 5.0 * l1 * l4 + 10.0 * l2 * l3 + 10.0 * l1 * l1 * l3 + 15.0 * l1 * l2 * l2
                          + 10.0 * l1 * l1 * l1 * l2)
                g2 = trap - u * (corr - h4 / 720.0 * mixed3 + h4 * h * h / 30240.0 * mixed5)
                g = g2 if g2 > 0.0 else trap - u * corr
            else:
                g = trap - u * corr
        out[j] = e_scale + math.log(g) if g > 0.0 else _LOG_FLOOR
        total += u


# -- the grid ---------------------------------------------------------------------------------------------
# Step rules (calibrated against closed forms and mpmath in tests/test_ordering.py for about 1e-9 in log P):
_THETA_WIDTH = 0.4   # step / narrowest integrand width (a competitor's width / sqrt(competitors overlapping))
_THETA_CROWD = 0.75  # step * crowding slope (competitors within one width / that width)
_THETA_SLOPE = 0.2   # step * steepest log-slope the order forces (the largest isotonic multiplier)
_MAX_NODES = 1 << 17
_MAX_CELLS = 1 << 24  # stages x nodes stored by the forward pass (128 MB)


@jit
def _isotonic(c: NDArray[np.float64], w: NDArray[np.float64], n: int,
              value: NDArray[np.float64], start: NDArray[np.int64]) -> float:
    """Weighted isotonic regression of ``c`` under ``x_0 >= x_1 >= ...`` (pool adjacent violators).

    Writes each element's fitted value into ``value`` and returns the largest Lagrange multiplier of the
    order constraints, ``max |sum_{j <= i in its block} w_j (c_j - v)|``: the log-slope, per unit of
    performance, with which the observed order tilts the integrands where its mass lies.
    """
    sw = np.empty(n)
    swc = np.empty(n)
    blocks = 0
    for i in range(n):
        start[blocks] = i
        sw[blocks] = w[i]
        swc[blocks] = w[i] * c[i]
        blocks += 1
        while blocks > 1 and swc[blocks - 2] / sw[blocks - 2] < swc[blocks - 1] / sw[blocks - 1]:
            sw[blocks - 2] += sw[blocks - 1]
            swc[blocks - 2] += swc[blocks - 1]
            blocks -= 1
    start[blocks] = n
    tilt = 0.0
    for b in range(blocks):
        v = swc[b] / sw[b]
        acc = 0.0
        for i in range(start[b], start[b + 1]):
            value[i] = v
            acc += w[i] * (c[i] - v)
            tilt = max(tilt, abs(acc))
    return tilt


@jit
def _design(loc: NDArray[np.float64], scale: NDArray[np.float64], kind: int, shape: float,
            seq: NDArray[np.int64], n: int, precision: float) -> tuple[float, float, int]:
    """``(lo, h, nodes)`` of the uniform grid for competitors listed best first in ``seq[:n]``.

    Each competitor's mass (its location +- the density's reach) is covered around where the observed
    order puts it -- its value in the isotonic regression of the means under the order, so that an upset
    is integrated where the performances actually meet -- and the step is the smaller of
    ``_THETA_WIDTH`` times the narrowest integrand width (a competitor's width over the square root of
    the number of competitors whose mass overlaps its own) and ``_THETA_SLOPE`` over the steepest
    log-slope the order forces, divided by ``precision`` (1 for about 1e-9 in ``log P``; the error
    scales as the eighth power of the step).
    """
    mean, sd, below, above, sharp = _shape_info(kind, shape)
    c = np.empty(n)
    w = np.empty(n)
    for k in range(n):
        i = seq[k]
        c[k] = loc[i] + mean * scale[i]
        w[k] = 1.0 / (sd * scale[i]) ** 2
    value = np.empty(n)
    start = np.empty(n + 1, dtype=np.int64)
    tilt = _isotonic(c, w, n, value, start)
    lo = np.inf
    hi = -np.inf
    for k in range(n):
        i = seq[k]
        shift = value[k] - c[k]
        lo = min(lo, loc[i] + shift - below * scale[i])
        hi = max(hi, loc[i] + shift + above * scale[i])
    # the narrowest width: competitor k's over sqrt(how many overlap it), by a sweep over sorted values
    order = np.argsort(value)
    s_max = 0.0
    for k in range(n):
        s_max = max(s_max, scale[seq[k]])
    h = np.inf
    for width, theta, power in ((3.0, _THETA_WIDTH, 0.5), (1.0, _THETA_CROWD, 1.0)):
        reach = width * sd * s_max
        left = 0
        right = 0
        for t in range(n):
            k = order[t]
            while value[order[left]] < value[k] - reach:
                left += 1
            while right < n and value[order[right]] <= value[k] + reach:
                right += 1
            h = min(h, theta * sharp * scale[seq[k]] / (right - left) ** power)
    if tilt > 0.0:
        h = min(h, _THETA_SLOPE / tilt)
    h /= precision
    nodes = int(math.ceil((hi - lo) / h)) + 1
    cap = min(_MAX_NODES, _MAX_CELLS // max(n, 1))
    if nodes > cap:  # accuracy degrades gracefully (a coarser step), never into inf or nan
        nodes = cap
    nodes = max(nodes, 16)
    h = (hi - lo) / (nodes - 1)
    return lo, h, nodes


# -- the ordering likelihood --------------------------------------------------------------------------------
@jit
def _stage_logq(kind: int, shape: float, loc: NDArray[np.float64], scale: NDArray[np.float64],
                members: NDArray[np.int64], a: int, b: int, x: float, tie_margin: float,
                size: NDArray[np.float64], terms: NDArray[np.float64]) -> float:
    """Log-density of a stage's best performance at ``x``: one competitor's density, or for a tied
    group (draw-margin model) ``sum_b f_b(x) prod_{j != b} P(x - eps_bj < X_j < x)``."""
    if b - a == 1:
        i = members[a]
        return _logpdf(kind, shape, (x - loc[i]) / scale[i]) - math.log(scale[i])
    for u in range(a, b):
        i = members[u]
        acc = _logpdf(kind, shape, (x - loc[i]) / scale[i]) - math.log(scale[i])
        for v in range(a, b):
            if v != u:
                j = members[v]
                e = tie_margin * math.sqrt(size[i] + size[j])
                hi = (x - loc[j]) / scale[j]
                lo = (x - e - loc[j]) / scale[j]
                if kind == GAUSSIAN:
                    acc += log_ndtr_diff(hi, lo)
                else:
                    top = _logcdf(kind, shape, hi)
                    acc += top + log1mexp(top - _logcdf(kind, shape, lo)) if hi > lo else -np.inf
        terms[u - a] = acc
    return max(logsumexp(terms, b - a), _LOG_FLOOR)


@jit
def _logsf_gumbel(z: float) -> float:
    """``log(1 - F(z))`` of the maximum-type Gumbel, ``log(1 - exp(-e^-z))``."""
    if z < -700.0:
        return 0.0
    x = math.exp(-z)
    if x < 1e-10:
        return -z - 0.5 * x
    return log1mexp(x)


@jit
def _log_cdf_on_grid(kind: int, shape: float, m: float, s: float, lo: float, h: float, nodes: int,
                     upper: bool, work: NDArray[np.float64], out: NDArray[np.float64]) -> None:
    """``log F((x - m)/s)`` (``upper``: ``log(1 - F)``) at the grid nodes; in closed form where the
    density has one, else integrated on the grid like every other stage."""
    if kind != SKEW_NORMAL:
        for j in range(nodes):
            z = (lo + j * h - m) / s
            if not upper:
                out[j] = _logcdf(kind, shape, z)
            elif kind == GUMBEL:
                out[j] = _logsf_gumbel(z)
            else:  # symmetric densities
                out[j] = _logcdf(kind, shape, -z)
        return
    for j in range(nodes):
        work[j] = _logpdf(kind, shape, (lo + j * h - m) / s) - math.log(s)
    _cumulate(work, nodes, h, upper, out)


@jit
def order_log_prob(
    loc: NDArray[np.float64], scale: NDArray[np.float64], kind: int, shape: float,
    stage_start: NDArray[np.int64], members: NDArray[np.int64], stages: int,
    link: NDArray[np.float64], tie_margin: float, size: NDArray[np.float64],
    dnf: NDArray[np.int64], n_dnf: int,
    want_grad: bool, grad_loc: NDArray[np.float64], grad_scale: NDArray[np.float64], precision: float,
) -> float:
    """``log P(observed outcome)`` for independent performances ``X_i = loc_i + scale_i e_i``, and with
    ``want_grad`` its gradient with respect to every ``loc_i`` and ``scale_i`` (added into the arrays).

    The outcome: ``stages`` groups, best first, ``members[stage_start[g]:stage_start[g + 1]]``, then the
    non-finishers ``dnf[:n_dnf]``.  A stage of one competitor is a place in a strict order; between
    consecutive stages the better stage's best performance exceeds the next one's by ``link[g]`` (0
    without a draw margin).  A stage of several competitors is a draw in TrueSkill's margin model: every
    member within ``tie_margin * sqrt(size_i + size_j)`` below the group's best ``i``.  Non-finishers
    lie below the last stage's best, in any order: a product of distribution functions, censored, not
    ordered.

    The multiplayer-Elo note's recursion, in log space: from the bottom,
    ``C_{g}(x) = int_{-inf}^x q_g(y) C_{g+1}(y) dy`` with ``q_g`` the stage's (best) density and
    ``C_{last+1} = prod_dnf F_d``, and ``P = C_0(inf)``; margins shift the lower stages' locations.  For
    the gradient a backward sweep from the top builds ``D_g(x) = int_x^inf q_g(y) D_{g-1}(y) dy``, and
    ``d log P / d loc_i = (1/P) int q_i(x) psi(z) / s_i D_{g-1}(x) C_{g+1}(x) dx`` (``psi = -f'/f``),
    ``d log P / d scale_i`` the same with ``(z psi(z) - 1) / s_i``, and for a non-finisher ``d`` the
    derivative of ``log F_d`` inside the last stage's integral.  Whole-line integrals use the trapezoid
    rule, which converges geometrically for these smooth integrands; the cumulative ones
    :func:`_cumulate`.  The gradient needs stages of one competitor (no drawn groups).
    """
    n_fin = stage_start[stages]
    if stages == 0:
        return 0.0
    # margins are location shifts: X_g > X_{g+1} + e  <=>  X_g + c_g > X_{g+1} + c_{g+1}, c_{g+1} = c_g + e
    n_all = len(loc)
    shifted = loc.copy()
    shift = 0.0
    for g in range(stages):
        for u in range(stage_start[g], stage_start[g + 1]):
            shifted[members[u]] = loc[members[u]] + shift
        if g + 1 < stages:
            shift += link[g]
    for t in range(n_dnf):
        shifted[dnf[t]] = loc[dnf[t]] + shift
    seq = np.empty(n_fin + n_dnf, dtype=np.int64)
    for k in range(n_fin):
        seq[k] = members[k]
    for t in range(n_dnf):
        seq[n_fin + t] = dnf[t]
    lo, h, nodes = _design(shifted, scale, kind, shape, seq, n_fin + n_dnf, precision)
    # the non-finishers' joint distribution function
    base = np.zeros(nodes)
    work = np.empty(nodes)
    dnf_cdf = np.empty((n_dnf, nodes))
    for t in range(n_dnf):
        d = dnf[t]
        _log_cdf_on_grid(kind, shape, shifted[d], scale[d], lo, h, nodes, False, work, dnf_cdf[t])
        for j in range(nodes):
            base[j] += dnf_cdf[t, j]
    # forward sweep from the bottom, keeping every stage's log C for the backward sweep
    cum = np.empty((stages + 1, nodes))
    cum[stages] = base
    terms = np.empty(max(n_all, 1))
    a = np.empty(nodes)
    for g in range(stages - 1, -1, -1):
        below = cum[g + 1]
        for j in range(nodes):
            a[j] = _stage_logq(kind, shape, shifted, scale, members, stage_start[g], stage_start[g + 1],
                               lo + j * h, tie_margin, size, terms) + below[j]
        _cumulate(a, nodes, h, False, cum[g])
    log_p = cum[0, nodes - 1]
    if not want_grad:
        return log_p
    # backward sweep from the top with the gradient integrals
    upper = np.zeros(nodes)
    nxt = np.empty(nodes)
    for g in range(stages):
        i = members[stage_start[g]]
        s = scale[i]
        below = cum[g + 1]
        dm = 0.0
        ds = 0.0
        for j in range(nodes):
            z = (lo + j * h - shifted[i]) / s
            lq = _logpdf(kind, shape, z) - math.log(s)
            a[j] = lq + upper[j]
            wgt = math.exp(a[j] + below[j] - log_p) * h
            work[j] = wgt
            psi = _score(kind, shape, z)
            dm += wgt * psi
            ds += wgt * (z * psi - 1.0)
        grad_loc[i] += dm / s
        grad_scale[i] += ds / s
        if g == stages - 1:
            for t in range(n_dnf):
                d = dnf[t]
                sd = scale[d]
                dm = 0.0
                ds = 0.0
                for j in range(nodes):
                    if work[j] > 0.0:
                        z = (lo + j * h - shifted[d]) / sd
                        rho = math.exp(_logpdf(kind, shape, z) - math.log(sd) - dnf_cdf[t, j])
                        dm -= work[j] * rho
                        ds -= work[j] * rho * z
                grad_loc[d] += dm
                grad_scale[d] += ds
        else:
            _cumulate(a, nodes, h, True, nxt)
            upper, nxt = nxt, upper
    return log_p


# -- outcomes given as ranks ----------------------------------------------------------------------------------
_MAX_ORDERS = 120  # drawn groups are averaged over at most this many orders (all of them when they fit)


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
def _finish_order(rank: NDArray[np.int64]) -> NDArray[np.int64]:
    """Indices sorted by rank (stable), non-finishers (negative rank) last."""
    key = np.empty(len(rank), dtype=np.int64)
    for i in range(len(rank)):
        key[i] = rank[i] if rank[i] >= 0 else np.iinfo(np.int64).max
    return np.argsort(key, kind="mergesort")


@jit
def _permute(members: NDArray[np.int64], a: int, k: int, code: int, source: NDArray[np.int64]) -> None:
    """Write the ``code``-th permutation (factorial number system) of ``source[:k]`` into ``members[a:a+k]``."""
    pool = source[:k].copy()
    left = k
    for pos in range(k):
        f = 1
        for t in range(2, left):
            f *= t
        idx = code // f
        code -= idx * f
        members[a + pos] = pool[idx]
        for t in range(idx, left - 1):
            pool[t] = pool[t + 1]
        left -= 1


@jit
def log_outcome(
    loc: NDArray[np.float64], scale: NDArray[np.float64], kind: int, shape: float,
    rank: NDArray[np.int64], size: NDArray[np.float64], margin: float,
    want_grad: bool, grad_loc: NDArray[np.float64], grad_scale: NDArray[np.float64], precision: float,
) -> float:
    """``log P(outcome given by ranks)`` (``rank < 0``: did not finish), and its gradient.

    Draws: with ``margin > 0`` the draw-margin model of :func:`order_log_prob` (links between rank
    groups ``margin * sqrt(size_a + size_b)`` for the largest team of each group, as TrueSkill; no
    gradient).  With ``margin == 0`` a drawn group contributes the average over the orders of the group
    of the log-likelihood (the geometric mean of their probabilities, as :class:`podium.PlackettLuce`):
    every order when the product of the groups' factorials is at most 120, else the cyclic rotations of
    every group in step.  The gradient (``margin == 0``) is the average of the orders' gradients.
    """
    n = len(loc)
    order = _finish_order(rank)
    starts = np.empty(n + 1, dtype=np.int64)
    groups, finishers = rank_groups(rank, order, starts)
    n_dnf = n - finishers
    dnf = np.empty(max(n_dnf, 1), dtype=np.int64)
    for t in range(n_dnf):
        dnf[t] = order[finishers + t]
    if finishers == 0:
        return 0.0
    if margin > 0.0:
        link = np.zeros(max(groups, 1))
        for g in range(groups - 1):
            big_a = 0.0
            for k in range(starts[g], starts[g + 1]):
                big_a = max(big_a, size[order[k]])
            big_b = 0.0
            for k in range(starts[g + 1], starts[g + 2]):
                big_b = max(big_b, size[order[k]])
            link[g] = margin * math.sqrt(big_a + big_b)
        return order_log_prob(loc, scale, kind, shape, starts[:groups + 1].copy(), order[:finishers].copy(),
                              groups, link, margin, size, dnf, n_dnf, want_grad and groups == finishers,
                              grad_loc, grad_scale, precision)
    # no margin: stages of one competitor; drawn groups averaged over their orders
    stage_start = np.arange(finishers + 1)
    link = np.zeros(max(finishers, 1))
    members = order[:finishers].copy()
    total = 1
    biggest = 1
    for g in range(groups):
        k = starts[g + 1] - starts[g]
        biggest = max(biggest, k)
        f = 1
        for t in range(2, k + 1):
            f *= t
        total = min(total * f, _MAX_ORDERS + 1)
    exhaustive = total <= _MAX_ORDERS
    runs = total if exhaustive else biggest
    gl = np.zeros(n)
    gsc = np.zeros(n)
    acc = 0.0
    for r in range(runs):
        code = r
        for g in range(groups):
            a = starts[g]
            k = starts[g + 1] - a
            if k == 1:
                continue
            source = order[a:a + k].copy()
            if exhaustive:
                f = 1
                for t in range(2, k + 1):
                    f *= t
                _permute(members, a, k, code % f, source)
                code //= f
            else:
                for t in range(k):
                    members[a + t] = source[(t + r) % k]
        acc += order_log_prob(loc, scale, kind, shape, stage_start, members, finishers, link, 0.0, size,
                              dnf, n_dnf, want_grad, gl, gsc, precision)
    if want_grad:
        for i in range(n):
            grad_loc[i] += gl[i] / runs
            grad_scale[i] += gsc[i] / runs
    return acc / runs


# -- places and wins -------------------------------------------------------------------------------------------
@jit
def place_probabilities(loc: NDArray[np.float64], scale: NDArray[np.float64], kind: int, shape: float,
                        out: NDArray[np.float64], precision: float) -> None:
    """``out[i, k] = P(competitor i finishes in place k)`` (place 0 is best) for independent performances.

    ``P(i in place k) = int f_i(x) P(exactly k of the others above x) dx``: at each grid node the
    count of competitors above ``x`` is a Poisson-binomial variable, built by the usual recursion over
    competitors and with ``i`` removed by dividing its factor out in the stable direction; the outer
    integral is the trapezoid rule on the grid of :func:`_design`, geometric in accuracy for these smooth
    integrands.  Rows and columns sum to 1 up to that accuracy.
    """
    n = len(loc)
    mean, _, _, _, _ = _shape_info(kind, shape)
    seq = np.argsort(-(loc + mean * scale))  # any consistent order: no pooling, every mass covered
    lo, h, nodes = _design(loc, scale, kind, shape, seq, n, precision)
    upper = np.empty((n, nodes))
    work = np.empty(nodes)
    for i in range(n):
        _log_cdf_on_grid(kind, shape, loc[i], scale[i], lo, h, nodes, True, work, upper[i])
    out[:, :] = 0.0
    count = np.empty(n + 1)
    rest = np.empty(n)
    for j in range(nodes):
        x = lo + j * h
        count[:] = 0.0
        count[0] = 1.0
        for i in range(n):
            p = math.exp(upper[i, j])
            for k in range(i + 1, 0, -1):
                count[k] = count[k] * (1.0 - p) + count[k - 1] * p
            count[0] *= 1.0 - p
        for i in range(n):
            dens = math.exp(_logpdf(kind, shape, (x - loc[i]) / scale[i]) - math.log(scale[i])) * h
            if dens == 0.0:
                continue
            p = math.exp(upper[i, j])
            if p <= 0.5:  # divide (1 - p + p z) out from the bottom
                prev = 0.0
                for k in range(n):
                    prev = (count[k] - p * prev) / (1.0 - p)
                    rest[k] = max(prev, 0.0)
            else:  # from the top
                nxt = 0.0
                for k in range(n - 1, -1, -1):
                    nxt = (count[k + 1] - (1.0 - p) * nxt) / p
                    rest[k] = max(nxt, 0.0)
            for k in range(n):
                out[i, k] += dens * rest[k]


@jit
def log_win(loc: NDArray[np.float64], scale: NDArray[np.float64], kind: int, shape: float,
            out: NDArray[np.float64], precision: float) -> None:
    """``out[i] = log P(competitor i performs best)`` = ``log int f_i(x) prod_{j != i} F_j(x) dx``, by the
    trapezoid rule in log space on the grid of :func:`_design`."""
    n = len(loc)
    mean, _, _, _, _ = _shape_info(kind, shape)
    seq = np.argsort(-(loc + mean * scale))
    lo, h, nodes = _design(loc, scale, kind, shape, seq, n, precision)
    below = np.empty((n, nodes))
    work = np.empty(nodes)
    total = np.zeros(nodes)
    for i in range(n):
        _log_cdf_on_grid(kind, shape, loc[i], scale[i], lo, h, nodes, False, work, below[i])
        for j in range(nodes):
            total[j] += below[i, j]
    for i in range(n):
        for j in range(nodes):
            work[j] = (_logpdf(kind, shape, (lo + j * h - loc[i]) / scale[i]) - math.log(scale[i])
                       + total[j] - below[i, j])
        out[i] = logsumexp(work, nodes) + math.log(h)



@jit
def log_win_pair(kind: int, shape: float, la: float, sa: float, lb: float, sb: float) -> tuple[float, float]:
    """``(log P(X_a > X_b), log P(X_b > X_a))`` for two independent performances ``X = l + s e``.

    Closed forms where they exist: Gaussian ``log Phi(+-(l_a - l_b) / sqrt(s_a^2 + s_b^2))``; Gumbel with equal
    scales the logistic ``-log(1 + exp(-+(l_a - l_b) / s))`` (the difference of two Gumbels, McFadden 1974);
    otherwise the ordering likelihood of each order (:func:`log_outcome`), whose grid follows the upset
    where the two performances meet.  Equal locations and scales give two equal values exactly.
    """
    if kind == GAUSSIAN:
        d = (la - lb) / math.sqrt(sa * sa + sb * sb)
        return log_ndtr(d), log_ndtr(-d)
    if kind == GUMBEL and sa == sb:
        z = (la - lb) / sa
        return _logcdf(LOGISTIC, 0.0, z), _logcdf(LOGISTIC, 0.0, -z)
    loc = np.array([la, lb])
    scale = np.array([sa, sb])
    size = np.ones(2)
    none = np.empty(0)
    ahead = log_outcome(loc, scale, kind, shape, np.array([0, 1]), size, 0.0, False, none, none, 1.0)
    behind = log_outcome(loc, scale, kind, shape, np.array([1, 0]), size, 0.0, False, none, none, 1.0)
    total = logaddexp(ahead, behind)  # 1 to about 1e-11; normalized so the two are a distribution exactly
    return ahead - total, behind - total


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
    loc = np.array(m, dtype=np.float64, ndmin=1)
    scale = np.ones(len(loc)) if s is None else np.array(s, dtype=np.float64, ndmin=1)
    if loc.ndim != 1 or len(loc) < 1:
        raise ValueError(f"'m' must be a non-empty sequence of floats. Got {m!r:.80}.")
    if scale.shape != loc.shape:
        raise ValueError(f"'s' must have one scale per competitor ({len(loc)}). Got {s!r:.80}.")
    if not np.all(np.isfinite(loc)):
        raise ValueError(f"'m' must be finite. Got {m!r:.80}.")
    if not np.all(np.isfinite(scale) & (scale > 0)):
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
        ranks = np.array([-1 if r is None else int(r) for r in rank], dtype=np.int64)
    sizes = np.ones(n) if size is None else np.array(size, dtype=np.float64)
    if margin < 0 or not math.isfinite(margin):
        raise ValueError(f"'margin' must be a non-negative float. Got {margin!r} instead.")
    if kind == SKEW_NORMAL and margin > 0:
        raise ValueError("'margin' needs a density with a closed-form distribution function, not 'skew_normal'.")
    fin = ranks[ranks >= 0]
    if gradient and margin > 0 and len(np.unique(fin)) < len(fin):
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
    censored-group integral of :func:`podium.models.plackett_luce.censored_block` in the elimination
    order.  Other densities integrate ``f_i prod_{j != i} F_j`` on the grid (:func:`log_win`).
    """
    from .models.plackett_luce import ELIMINATION, VICTORY, plackett_luce_log_win

    loc = np.ascontiguousarray(s, dtype=np.float64)
    out = np.empty(len(loc))
    kind = density_code(density, shape)
    if kind == GUMBEL and scale is None:
        plackett_luce_log_win(loc, len(loc), VICTORY if order == "victory" else ELIMINATION, out)
        return out
    sd = np.ones(len(loc)) if scale is None else np.ascontiguousarray(scale, dtype=np.float64)
    if len(loc) == 2:
        out[0], out[1] = log_win_pair(kind, float(shape), loc[0], sd[0], loc[1], sd[1])
        return out
    log_win(loc, sd, kind, float(shape), out, 1.0)
    return out
