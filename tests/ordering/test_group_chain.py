"""Ties exactly (podium.ordering.group_chain): the probability that each drawn group fills its places in any order.

References: the sum over every order of the groups of the strict orders' probabilities, each from the
ordering engine (podium.ordering.log_outcome, tested against mpmath and closed forms in test_ordering.py and
test_gauss_chain.py) at four times its default precision, and its gradient the probability-weighted mean of
theirs (the gradient of a log-sum); for equal competitors the closed form: every assignment of places is
equally likely, so groups of sizes ``k_g`` fill their places in any order with probability
``prod k_g! / n!`` and the mean over their orders is ``1 / n!``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.special import logsumexp

from podium.ordering.group_chain import group_order_log_prob
from podium.ordering import GAUSSIAN, log_outcome


def engine(loc, scale, groups, dnf, precision=1.0):
    n = len(loc)
    members = np.array([i for g in groups for i in g], dtype=np.int64)
    starts = np.cumsum([0] + [len(g) for g in groups]).astype(np.int64)
    d = np.array(dnf if dnf else [0], dtype=np.int64)
    gl, gs = np.zeros(n), np.zeros(n)
    lp = group_order_log_prob(loc, scale, starts, members, len(groups), d, len(dnf), True, gl, gs, precision)
    return lp, gl, gs


def over_orders(loc, scale, groups, dnf):
    """log of the mean over the groups' orders of P(order), and its gradient, from the strict orders."""
    n = len(loc)
    logs, gls, gss = [], [], []
    for perm in itertools.product(*[itertools.permutations(g) for g in groups]):
        rank = np.full(n, -1, dtype=np.int64)
        for place, i in enumerate(i for g in perm for i in g):
            rank[i] = place
        gl, gs = np.zeros(n), np.zeros(n)
        logs.append(log_outcome(loc, scale, GAUSSIAN, 0.0, rank, np.ones(n), 0.0, True, gl, gs, 4.0))
        gls.append(gl)
        gss.append(gs)
    logs = np.array(logs)
    total = logsumexp(logs)
    w = np.exp(logs - total)
    mean = total - sum(math.lgamma(len(g) + 1) for g in groups)
    return mean, w @ np.array(gls), w @ np.array(gss)


CASES = [
    ([[0, 1], [2]], []),                      # a tied pair above one
    ([[0], [1, 2], [3]], []),                 # a pair between two places
    ([[0], [1, 2, 3]], []),                   # a tied last place
    ([[0, 1, 2], [3, 4]], []),                # two groups in a row
    ([[0], [1, 2], [3]], [4, 5]),             # with non-finishers
    ([[0, 1]], [2]),                          # a tied pair above a non-finisher
    ([[0], [1, 2, 3, 4], [5]], []),           # four tied between two places
    ([[0, 1], [2, 3], [4, 5]], [6]),          # three pairs in a row and a non-finisher
]


@pytest.mark.parametrize("groups, dnf", CASES)
def test_the_groups_any_order_is_the_sum_over_their_orders(groups, dnf):
    rng = np.random.default_rng(len(groups) * 10 + len(dnf))
    n = sum(len(g) for g in groups) + len(dnf)
    for _ in range(3):  # upsets included: locations spread over 1.5 scales, scales over e^(+-0.4)
        loc = rng.normal(0.0, 1.5, n)
        scale = np.exp(rng.normal(0.0, 0.4, n))
        lp, gl, gs = engine(loc, scale, groups, dnf)
        ref, rgl, rgs = over_orders(loc, scale, groups, dnf)
        assert lp == pytest.approx(ref, abs=5e-9)
        np.testing.assert_allclose(gl, rgl, atol=2e-8)
        np.testing.assert_allclose(gs, rgs, atol=2e-8)


def test_the_mean_over_orders_is_not_the_mean_of_log_likelihoods():
    # a tied pair of unequal competitors: the arithmetic mean exceeds the geometric mean of
    # podium.ordering.log_outcome's rank ties (Jensen), strictly
    loc = np.array([1.0, -1.0, 0.0])
    scale = np.ones(3)
    lp, _, _ = engine(loc, scale, [[0, 1], [2]], [])
    rank = np.array([0, 0, 1], dtype=np.int64)
    geometric = log_outcome(loc, scale, GAUSSIAN, 0.0, rank, np.ones(3), 0.0, False, np.zeros(3), np.zeros(3), 1.0)
    assert lp > geometric + 1e-3


@pytest.mark.parametrize("sizes", [
    [20, 20, 20],                              # three big groups
    [1] * 20 + [2] * 10 + [1] * 20,            # ten tied pairs in a crowd (steep forward functions)
    [1] * 50 + [100] + [1] * 50,               # half the field tied in the middle
])
def test_a_crowd_in_groups_is_one_order_in_n_factorial(sizes):
    n = sum(sizes)
    groups, at = [], 0
    for k in sizes:
        groups.append(list(range(at, at + k)))
        at += k
    lp, gl, _ = engine(np.zeros(n), np.ones(n), groups, [])
    assert lp == pytest.approx(-math.lgamma(n + 1), abs=1e-8)
    assert abs(gl.sum()) < 1e-6          # a common shift of every location changes nothing
    assert gl[0] > 0.0 > gl[-1]          # the first place pulls up, the last down
