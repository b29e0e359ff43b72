"""The ordering engine's compiled outcomes: ranks to stages, ``log P`` of an outcome, place and win probabilities.

:func:`log_outcome` turns ranks into stages (places, drawn groups averaged over their orders or rotations
(:func:`tie_turn`), non-finishers) and hands them to :func:`podium.ordering.chain.order_log_prob`, which gives a
strict order of Gaussian performances first to the fast tier :func:`podium.ordering.gauss_chain.gauss_order_log_prob`
and adapts where that cannot vouch for its answer.  Place and win probabilities integrate over a lattice graded to
the competitors' own spreads (:func:`_prior_lattice`).  The validating public face is
:mod:`podium.ordering`; the kernels call these functions directly.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from .chain import order_log_prob
from .densities import GAUSSIAN, GUMBEL, LOGISTIC, SKEW_NORMAL, logcdf, logpdf, logsf, shape_info
from .frame import CHAIN_SCALE_SPAN, clusters, clusters_in_order, framed, prior_windows, unit_frame
from .lattice import build_lattice, cumulate, node_weights
from .numerics import jit, log_ndtr, logaddexp


# -- outcomes given as ranks ----------------------------------------------------------------------------------
_MAX_ORDERS = 720  # drawn groups are averaged over at most this many orders (all of them when they fit)
_MAX_ROTATIONS = 32  # else over this many chains: 16 cyclic rotations, evenly spaced, each also reflected (tie_turn)


@jit
def tie_turn(r: int, runs: int, span: int) -> tuple[int, bool]:
    """Run ``r`` of ``runs`` over tied groups of up to ``span`` orders' rotations: ``(turn, reflect)``.

    Every rotation when ``runs >= span``.  Fewer runs than rotations (``runs`` even) take ``runs / 2`` evenly
    spaced rotations, ``turn = floor(j span / (runs / 2))``, first as they are and then each reflected (the
    group's chain read backwards, :func:`tie_member`).  Why reflections: with rotations alone a member's places
    are ``i, i + span/R, ...``, whose mean is off the group's middle by up to ``span / 2R`` places (a sawtooth
    over the members); a reflected run puts it at ``k - 1 - p`` for every ``p``, so every member's mean place is
    the group's middle exactly, as over all the group's orders (antithetic pairs).  Measured against the mean
    over every rotation and its reflection: on codeforces_early's rounds 7, 40 and 104 (70, 21, 616 tied;
    stand-in ratings N(0, 1) seeded by the round) Thurstone's location gradient from 16 rotations reflected
    (32 chains) is within 0.012, 0.004, 0.021 of it (rms 0.002, 0.0004, 0.002), where 64 rotations were within
    0.023, 0.010, 0.020 (rms 0.004, 0.001, 0.009), and log P within 0.03 where they were off by up to 0.43;
    TrueSkill's ordered update from 8 rotations reflected (16 runs) is within 0.002-0.024 of a posterior spread
    of it on four fields of 60-400 with groups of 12-200, where 16 rotations were within 0.016-0.049.
    """
    if runs >= span:
        return r, False
    if runs < 2 or runs % 2:
        raise ValueError("tie_turn: fewer runs than rotations must be an even number of at least 2")
    half = runs // 2
    return (r % half) * span // half, r >= half


@jit
def tie_member(t: int, k: int, turn: int, reflect: bool) -> int:
    """Which of a tied group's ``k`` members (in its canonical order) holds place ``t`` of the group's chain
    in a run with ``(turn, reflect)`` of :func:`tie_turn`."""
    if reflect:
        return (k - 1 - t + turn) % k
    return (t + turn) % k


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
def _capped_factorial(k: int, cap: int) -> int:
    """``k!`` when it is at most ``cap``, else ``cap + 1``.

    Saturating, because the orders of a drawn group are only counted to decide whether all of them fit:
    ``k!`` itself wraps around in int64 from ``k = 21`` (``21! > 2^63``) and is exactly 0 from ``k = 66``
    (``66!`` holds 64 factors of 2), which once made a tie of 21 to 65 a log-likelihood of 0 with no
    gradient and a tie of 66 or more a division by zero.
    """
    f = 1
    for t in range(2, k + 1):
        f *= t
        if f > cap:
            return cap + 1
    return f


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
    """``log P(outcome given by ranks)`` (``rank < 0``: did not finish), and its gradient (added to ``grad_loc`` and
    ``grad_scale``), computed in the :func:`unit_frame` of the performances by :func:`_log_outcome`."""
    if framed(loc, scale):
        return _log_outcome(loc, scale, kind, shape, rank, size, margin, want_grad, grad_loc, grad_scale, precision)
    unit_loc, unit_scale, _ = unit_frame(loc, scale)
    cluster, count = clusters(unit_loc, unit_scale, kind, shape)
    if count == 1 or not clusters_in_order(rank, cluster, count):
        return _in_frame(loc, scale, kind, shape, rank, size, margin, want_grad, grad_loc, grad_scale, precision)
    # Clusters far apart finishing in their order: log P is the sum of each cluster's own (a passing between
    # clusters is beyond the windows' reach, as on one lattice), each in its own frame from the given locations.
    # On one frame a favourite 1e16 scales ahead got log P = +0.02 (Gumbel) and at 1e18 -1e300.
    total = 0.0
    for c in range(count):
        members = np.flatnonzero(cluster == c)
        g = len(members)
        if g == 1:
            continue
        sub_gl = np.zeros(g)
        sub_gs = np.zeros(g)
        total += _in_frame(loc[members], scale[members], kind, shape, rank[members], size[members], margin,
                           want_grad, sub_gl, sub_gs, precision)
        if want_grad:
            for a in range(g):
                grad_loc[members[a]] += sub_gl[a]
                grad_scale[members[a]] += sub_gs[a]
    return total


@jit
def _in_frame(
    loc: NDArray[np.float64], scale: NDArray[np.float64], kind: int, shape: float,
    rank: NDArray[np.int64], size: NDArray[np.float64], margin: float,
    want_grad: bool, grad_loc: NDArray[np.float64], grad_scale: NDArray[np.float64], precision: float,
) -> float:
    """:func:`_log_outcome` in the performances' :func:`unit_frame`, its gradient taken back to the given units."""
    unit_loc, unit_scale, k = unit_frame(loc, scale)
    if not want_grad:
        return _log_outcome(unit_loc, unit_scale, kind, shape, rank, size, margin / k, False, grad_loc, grad_scale,
                            precision)
    n = len(loc)
    gl = np.zeros(n)
    gs = np.zeros(n)
    value = _log_outcome(unit_loc, unit_scale, kind, shape, rank, size, margin / k, True, gl, gs, precision)
    for i in range(n):  # d/dm = (d/dm') / k, and the same for the scales
        grad_loc[i] += gl[i] / k
        grad_scale[i] += gs[i] / k
    return value


@jit
def _log_outcome(
    loc: NDArray[np.float64], scale: NDArray[np.float64], kind: int, shape: float,
    rank: NDArray[np.int64], size: NDArray[np.float64], margin: float,
    want_grad: bool, grad_loc: NDArray[np.float64], grad_scale: NDArray[np.float64], precision: float,
) -> float:
    """``log P(outcome given by ranks)`` (``rank < 0``: did not finish), and its gradient.

    Draws: with ``margin > 0`` the draw-margin model of :func:`order_log_prob` (links between rank
    groups ``margin * sqrt(size_a + size_b)`` for the largest team of each group, as TrueSkill; no
    gradient).  With ``margin == 0`` a drawn group contributes the average over the orders of the group
    of the log-likelihood (the geometric mean of their probabilities, as :class:`podium.PlackettLuce`):
    every order when the product of the groups' factorials is at most 720 (a group of six), else the cyclic rotations of
    every group in step: every rotation when the biggest group has at most 32 members, else 16 evenly spaced
    rotations each also reflected (:func:`tie_turn`), so a group of 798 costs 32 chain evaluations, not 798.
    The gradient (``margin == 0``) is the average of the orders' gradients.
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
        gl = np.zeros(n)
        gsc = np.zeros(n)
        grad = want_grad and groups == finishers
        value = order_log_prob(loc, scale, kind, shape, starts[:groups + 1].copy(), order[:finishers].copy(),
                               groups, link, margin, size, dnf, n_dnf, grad, gl, gsc, precision)
        if grad:
            if kind != SKEW_NORMAL:  # (a fixed margin is not scaled with the performances: translation only)
                _invariant_gradient(loc, scale, gl, gsc, False)
            for i in range(n):
                grad_loc[i] += gl[i]
                grad_scale[i] += gsc[i]
        return value
    # no margin: stages of one competitor; drawn groups averaged over their orders
    stage_start = np.arange(finishers + 1)
    link = np.zeros(max(finishers, 1))
    members = order[:finishers].copy()
    total = 1
    biggest = 1
    for g in range(groups):
        k = starts[g + 1] - starts[g]
        biggest = max(biggest, k)
        total = min(total * _capped_factorial(k, _MAX_ORDERS), _MAX_ORDERS + 1)
    exhaustive = total <= _MAX_ORDERS
    runs = total if exhaustive else min(biggest, _MAX_ROTATIONS)
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
                turn, reflect = tie_turn(r, runs, biggest)
                for t in range(k):
                    members[a + t] = source[tie_member(t, k, turn, reflect)]
        acc += order_log_prob(loc, scale, kind, shape, stage_start, members, finishers, link, 0.0, size,
                              dnf, n_dnf, want_grad, gl, gsc, precision)
    if want_grad:
        if kind != SKEW_NORMAL:
            _invariant_gradient(loc, scale, gl, gsc, True)
        for i in range(n):
            grad_loc[i] += gl[i] / runs
            grad_scale[i] += gsc[i] / runs
    return acc / runs


@jit
def _invariant_gradient(loc: NDArray[np.float64], scale: NDArray[np.float64], gl: NDArray[np.float64],
                        gs: NDArray[np.float64], scaled: bool) -> None:
    """Correct a computed gradient ``(gl, gs)`` of ``log P(order)`` to what the exact one satisfies, in place.

    An order of ``X_i = m_i + s_i e_i`` is unchanged by a common shift of the locations and, without a fixed draw
    margin (``scaled``), by a common positive factor on locations and scales; so the exact gradient has
    ``sum_i dm_i = 0`` and ``sum_i m_i dm_i + s_i ds_i = 0``.  The first is restored by taking the mean out of
    ``dm`` (its orthogonal projection, which can only shrink ``dm``'s error); the second by moving ``ds`` along
    ``s``, never ``dm``: an orthogonal projection of ``(dm, ds)`` together would carry the scale gradient's error,
    largest in far tails, into the locations that the models' updates step along (it broke Thurstone's
    monotonicity with a skew-normal density).  The invariants then hold to rounding (they were off by 2e-9 and 3e-8
    of the largest term; issue 32).

    Not for the skew-normal: its distribution function is integrated on the grid, and with non-finishers its
    ``log P`` was not shift-invariant (a tie of two finishers above six non-finishers moved by 7.3 per unit of
    common shift; fixed in :mod:`podium.ordering.chain`, issue 32, where the partials now sum to 1e-11);
    correcting the gradient of a wrong value to an invariance it does not have would only hide that, and
    whether to correct it now is untested.
    """
    n = len(loc)
    for i in range(n):
        if not (math.isfinite(gl[i]) and math.isfinite(gs[i])):
            return  # (an infinite term has no correction; left as computed, for the caller to see)
    mean = 0.0
    for i in range(n):
        mean += gl[i]
    mean /= n
    for i in range(n):
        gl[i] -= mean
    if not scaled:
        return
    # sum m dm no longer depends on where the locations are centred (sum dm = 0 up to rounding): centre them, so
    # that large locations cost no digits.
    centre = 0.0
    for i in range(n):
        centre += loc[i]
    centre /= n
    residual = ss = 0.0
    for i in range(n):
        residual += (loc[i] - centre) * gl[i] + scale[i] * gs[i]
        ss += scale[i] * scale[i]
    for i in range(n):
        gs[i] -= residual / ss * scale[i]


# -- places and wins -------------------------------------------------------------------------------------------
_THETA_WIDTH = 0.3   # step / (a competitor's width / sqrt(competitors overlapping it))
_THETA_CROWD = 0.75  # step * crowding slope (competitors within one width / that width)


@jit
def _prior_lattice(loc: NDArray[np.float64], scale: NDArray[np.float64], kind: int, shape: float,
                   precision: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The lattice for integrals over every competitor's whole mass (no order observed): each competitor's
    window is its location +- the density's reach, its step the smaller of ``_THETA_WIDTH`` times its
    width over the square root of the competitors whose mass overlaps it and ``_THETA_CROWD`` times its
    width over the competitors within one width of it (a crowded field makes the count of competitors
    above ``x`` change fast), divided by ``precision``."""
    n = len(loc)
    mean, sd, _, _, sharp = shape_info(kind, shape)
    lo, hi = prior_windows(loc, scale, kind, shape)
    step = np.empty(n)
    for i in range(n):
        c = loc[i] + mean * scale[i]
        wide = 0
        near = 0
        for j in range(n):
            d = abs(loc[j] + mean * scale[j] - c)
            if d <= 3.0 * sd * max(scale[i], scale[j]):
                wide += 1
            if d <= sd * max(scale[i], scale[j]):
                near += 1
        step[i] = min(_THETA_WIDTH * sharp * scale[i] / math.sqrt(wide),
                      _THETA_CROWD * sharp * scale[i] / near) / precision
    # one spacing unless the scales are far apart: the node-weight sums below are then spectrally exact
    smallest = step.min()
    if step.max() < 64.0 * smallest:
        step[:] = smallest
    else:
        # graded: where the spacing doubles, the end corrections' finite differences err by about
        # (h / width)^6 of a run's integral; an eighth of the step keeps that near 1e-13
        step[:] *= 0.125
    return build_lattice(lo, hi, step, n)


@jit
def _log_cdf_on_lattice(kind: int, shape: float, m: float, s: float, x: NDArray[np.float64],
                        gap: NDArray[np.float64], upper: bool, work: NDArray[np.float64],
                        out: NDArray[np.float64]) -> None:
    """``log F((x - m)/s)`` (``upper``: ``log(1 - F)``) at the nodes; in closed form where the density has
    one, else integrated on the lattice like every other stage."""
    n = len(x)
    if kind != SKEW_NORMAL:
        for j in range(n):
            z = (x[j] - m) / s
            out[j] = logsf(kind, shape, z) if upper else logcdf(kind, shape, z)
        return
    rg = np.empty(n)
    if upper:
        for j in range(n):
            work[n - 1 - j] = logpdf(kind, shape, (x[j] - m) / s) - math.log(s)
            rg[j] = gap[n - 2 - j] if j < n - 1 else 0.0
        tmp = np.empty(n)
        cumulate(work, rg, n, tmp)
        for j in range(n):
            out[j] = tmp[n - 1 - j]
        return
    for j in range(n):
        work[j] = logpdf(kind, shape, (x[j] - m) / s) - math.log(s)
    cumulate(work, gap, n, out)


@jit
def place_probabilities(loc: NDArray[np.float64], scale: NDArray[np.float64], kind: int, shape: float,
                        out: NDArray[np.float64], precision: float) -> None:
    """``out[i, k] = P(competitor i finishes in place k)`` (place 0 is best) for independent performances.

    ``P(i in place k) = int f_i(x) P(exactly k of the others above x) dx``: at each node the count of
    competitors above ``x`` is a Poisson-binomial variable, built by the usual recursion over competitors
    and with ``i`` removed by dividing its factor out in the stable direction; the outer integral uses the
    weights of :func:`podium.ordering.lattice.node_weights` on the lattice of :func:`_prior_lattice` (the trapezoid
    rule with end corrections on every run of equal spacing).  Rows and columns sum to 1 up to that accuracy.
    Computed in the performances' :func:`unit_frame`, each cluster of :func:`podium.ordering.frame.clusters` on its
    own (competitors whose windows lie wholly above another's take the places above it).
    """
    n = len(loc)
    frame_loc, frame_scale = loc, scale
    if not framed(loc, scale):
        frame_loc, frame_scale, _ = unit_frame(loc, scale)
    cluster, count = clusters(frame_loc, frame_scale, kind, shape)
    if count == 1:
        _place_lattice(frame_loc, frame_scale, kind, shape, out, precision)
        return
    out[:, :] = 0.0
    place = n
    for c in range(count):  # the lowest cluster first: it takes the last places
        members = np.flatnonzero(cluster == c)
        g = len(members)
        place -= g
        if g == 1:
            out[members[0], place] = 1.0
            continue
        sub_loc, sub_scale, _ = unit_frame(loc[members], scale[members])  # (from the given locations: all digits)
        sub = np.empty((g, g))
        _place_lattice(sub_loc, sub_scale, kind, shape, sub, precision)
        for a in range(g):
            for b in range(g):
                out[members[a], place + b] = sub[a, b]


@jit
def _place_lattice(loc: NDArray[np.float64], scale: NDArray[np.float64], kind: int, shape: float,
                   out: NDArray[np.float64], precision: float) -> None:
    """:func:`place_probabilities` on one lattice for all (in a frame where it loses no digits)."""
    n = len(loc)
    x, gap = _prior_lattice(loc, scale, kind, shape, precision)
    nodes = len(x)
    upper = np.empty((n, nodes))
    work = np.empty(nodes)
    for i in range(n):
        _log_cdf_on_lattice(kind, shape, loc[i], scale[i], x, gap, True, work, upper[i])
    out[:, :] = 0.0
    count = np.empty(n + 1)
    rest = np.empty(n)
    weights = np.empty(nodes)
    node_weights(gap, nodes, weights)
    for j in range(nodes):
        weight = weights[j]
        if weight == 0.0:
            continue
        count[:] = 0.0
        count[0] = 1.0
        for i in range(n):
            p = math.exp(upper[i, j])
            for k in range(i + 1, 0, -1):
                count[k] = count[k] * (1.0 - p) + count[k - 1] * p
            count[0] *= 1.0 - p
        for i in range(n):
            dens = math.exp(logpdf(kind, shape, (x[j] - loc[i]) / scale[i]) - math.log(scale[i])) * weight
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
    """``out[i] = log P(competitor i performs best)`` = ``log int f_i(x) prod_{j != i} F_j(x) dx``, in log
    space on the lattice of :func:`_prior_lattice` (:func:`podium.ordering.lattice.cumulate`'s last value), in the
    performances' :func:`unit_frame`.  Competitors whose windows lie wholly above every other's
    (:func:`podium.ordering.frame.clusters`) are integrated apart, in their own frame: on one lattice a field 1e15
    scales ahead lost 6e-4 of its winner's probability (its nodes rounded to the spacing of its location's floats)
    and at 1e17 gave it log P = 1.9.  The others' values, from the one lattice, are then probabilities that
    underflow, and only bounds in log space.
    """
    frame_loc, frame_scale = loc, scale
    if not framed(loc, scale):
        frame_loc, frame_scale, _ = unit_frame(loc, scale)
    _log_win_lattice(frame_loc, frame_scale, kind, shape, out, precision)
    cluster, count = clusters(frame_loc, frame_scale, kind, shape)
    if count == 1:
        return
    top = np.flatnonzero(cluster == count - 1)
    if len(top) == 1:
        out[top[0]] = 0.0
        return
    sub_loc, sub_scale, _ = unit_frame(loc[top], scale[top])  # (from the given locations: all their digits)
    sub = np.empty(len(top))
    _log_win_lattice(sub_loc, sub_scale, kind, shape, sub, precision)
    for a in range(len(top)):
        out[top[a]] = sub[a]


@jit
def _log_win_lattice(loc: NDArray[np.float64], scale: NDArray[np.float64], kind: int, shape: float,
                     out: NDArray[np.float64], precision: float) -> None:
    """:func:`log_win` on one lattice for all."""
    n = len(loc)
    x, gap = _prior_lattice(loc, scale, kind, shape, precision)
    nodes = len(x)
    below = np.empty((n, nodes))
    work = np.empty(nodes)
    res = np.empty(nodes)
    total = np.zeros(nodes)
    # log F floored so that n of them sum to a finite total: far below a narrow competitor (scales 1e154 apart)
    # log F overflowed to -inf, and total - below[i] became inf - inf = NaN there.  e^floor is 0 all the same.
    floor = -1e300 / n
    for i in range(n):
        _log_cdf_on_lattice(kind, shape, loc[i], scale[i], x, gap, False, work, below[i])
        for j in range(nodes):
            below[i, j] = max(below[i, j], floor)
            total[j] += below[i, j]
    for i in range(n):
        for j in range(nodes):
            work[j] = (logpdf(kind, shape, (x[j] - loc[i]) / scale[i]) - math.log(scale[i])
                       + total[j] - below[i, j])
        cumulate(work, gap, nodes, res)
        out[i] = res[nodes - 1]


@jit
def log_win_pair(kind: int, shape: float, la: float, sa: float, lb: float, sb: float) -> tuple[float, float]:
    """``(log P(X_a > X_b), log P(X_b > X_a))`` for two independent performances ``X = l + s e``.

    Closed forms where they exist: Gaussian ``log Phi(+-(l_a - l_b) / sqrt(s_a^2 + s_b^2))``; Gumbel with equal
    scales the logistic ``-log(1 + exp(-+(l_a - l_b) / s))`` (the difference of two Gumbels, McFadden 1974);
    otherwise the ordering likelihood of each order (:func:`log_outcome`), whose grid follows the upset
    where the two performances meet, or for scales more than :data:`CHAIN_SCALE_SPAN` apart :func:`log_win`.  Equal
    locations and scales give two equal values exactly.
    """
    if kind == GAUSSIAN:
        d = (la - lb) / math.hypot(sa, sb)  # (hypot: the squares of scales past 1e154 overflow)
        return log_ndtr(d), log_ndtr(-d)
    if kind == GUMBEL and sa == sb:
        z = (la - lb) / sa
        return logcdf(LOGISTIC, 0.0, z), logcdf(LOGISTIC, 0.0, -z)
    loc = np.array([la, lb])
    scale = np.array([sa, sb])
    if max(sa, sb) > CHAIN_SCALE_SPAN * min(sa, sb):  # beyond the chain's span: the prior lattice takes any
        both = np.empty(2)
        log_win(loc, scale, kind, shape, both, 1.0)
        total = logaddexp(both[0], both[1])
        return both[0] - total, both[1] - total
    size = np.ones(2)
    none = np.empty(0)
    ahead = log_outcome(loc, scale, kind, shape, np.array([0, 1]), size, 0.0, False, none, none, 1.0)
    behind = log_outcome(loc, scale, kind, shape, np.array([1, 0]), size, 0.0, False, none, none, 1.0)
    total = logaddexp(ahead, behind)  # 1 to about 1e-11; normalized so the two are a distribution exactly
    return ahead - total, behind - total
