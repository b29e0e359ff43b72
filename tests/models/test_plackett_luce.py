"""Plackett-Luce: the note's reference gradients, exact censoring and the tie model.

References: the multiplayer-Elo note (section 3.2) for four equal players; closed forms (``d!/n!``);
brute force over permutations written in plain Python below; mpmath quadrature for the censoring
integral; Monte Carlo of the exponential race for win probabilities.
"""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest

from podium import Match, PlackettLuce, Rating
from podium.ordering.luce import censored_block

NATURAL = {"scale": 1.0, "initial": 0.0, "k": 1.0}


def gradients(model: PlackettLuce, match: Match, ratings: dict[str, Rating] | None = None) -> list[float]:
    ratings = ratings or {}
    new = model.rate(match, ratings)
    return [new[p].mu - ratings.get(p, Rating(0.0)).mu for p in match.players]


def test_four_equal_players_elimination_and_victory() -> None:
    # Note, section 3.2: [13/12, 1/12, -5/12, -3/4] (elimination); reversed scale: [3/4, 5/12, -1/12, -13/12].
    match = Match.ffa(["a", "b", "c", "d"])
    assert gradients(PlackettLuce(order="elimination", **NATURAL), match) == pytest.approx([13 / 12, 1 / 12, -5 / 12, -3 / 4])
    assert gradients(PlackettLuce(order="victory", **NATURAL), match) == pytest.approx([3 / 4, 5 / 12, -1 / 12, -13 / 12])


def strict_log_p(v_in_choice_order: list[float]) -> float:
    """log P of a strict order listed in choice order: sum_i v_i - log sum_{j >= i} exp(v_j)."""
    v = v_in_choice_order
    return sum(v[i] - math.log(sum(math.exp(x) for x in v[i:])) for i in range(len(v)))


def brute_log_p(s: dict[str, float], match: Match, order: str, ties: str = "geometric") -> float:
    """The model's likelihood by enumeration: average over tied groups' orders of log P (``ties="geometric"``)
    or of P (``"arithmetic"``), and the sum of P over the orders of the non-finishers (placed below every
    finisher)."""
    sign = 1.0 if order == "victory" else -1.0
    finish = sorted({r for r in match.ranks if r is not None})
    groups = [[t[0] for t, r in zip(match.teams, match.ranks) if r == rank] for rank in finish]
    dnf = [t[0] for t, r in zip(match.teams, match.ranks) if r is None]
    total = 0.0
    likelihoods = []
    tie_orders = list(itertools.product(*[list(itertools.permutations(g)) for g in groups]))
    for tie_order in tie_orders:
        finishers = [p for g in tie_order for p in g]  # best first
        prob = 0.0
        for dnf_order in itertools.permutations(dnf):
            best_first = finishers + list(dnf_order)
            choice = best_first if order == "victory" else best_first[::-1]
            prob += math.exp(strict_log_p([sign * s[p] for p in choice]))
        total += math.log(prob)
        likelihoods.append(prob)
    if ties == "arithmetic":
        return math.log(sum(likelihoods) / len(tie_orders))
    return total / len(tie_orders)


CASES = [
    ([0, 1, 2, 3, 4], [0.3, -0.5, 1.2, 0.0, -0.8]),
    ([0, 1, None, None], [0.1, -0.4, 0.9, -1.3]),
    ([1, 0, None, None, None], [0.5, 1.0, -0.2, 2.0, -1.0]),
    ([0, 0, 1, 2], [0.2, -0.7, 0.4, 1.1]),
    ([2, 0, 0, 0, 1], [0.9, -0.3, 0.4, 0.0, -1.2]),
    ([0, 1, 1, None, None], [0.6, -0.1, 0.8, 1.5, -0.4]),
    ([0, 0], [1.3, -0.2]),
    ([None, 0, None], [2.5, -3.0, 1.0]),
]


@pytest.mark.parametrize("ties", ["geometric", "arithmetic"])
@pytest.mark.parametrize("order", ["victory", "elimination"])
@pytest.mark.parametrize("ranks,values", CASES)
def test_log_likelihood_equals_brute_force(order: str, ties: str, ranks: list, values: list[float]) -> None:
    names = [f"p{i}" for i in range(len(ranks))]
    s = dict(zip(names, values))
    match = Match([[p] for p in names], ranks=ranks)
    model = PlackettLuce(order=order, ties=ties, **NATURAL)
    got = model.log_likelihood(match, {p: Rating(v) for p, v in s.items()})
    assert got == pytest.approx(brute_log_p(s, match, order, ties), rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("ties", ["geometric", "arithmetic"])
@pytest.mark.parametrize("order", ["victory", "elimination"])
@pytest.mark.parametrize("ranks,values", CASES)
def test_gradient_equals_central_differences(order: str, ties: str, ranks: list, values: list[float]) -> None:
    names = [f"p{i}" for i in range(len(ranks))]
    match = Match([[p] for p in names], ranks=ranks)
    model = PlackettLuce(order=order, ties=ties, **NATURAL)
    ratings = {p: Rating(v) for p, v in zip(names, values)}
    grad = gradients(model, match, ratings)
    h = 1e-5
    for i, p in enumerate(names):
        up = dict(ratings, **{p: Rating(values[i] + h)})
        down = dict(ratings, **{p: Rating(values[i] - h)})
        fd = (model.log_likelihood(match, up) - model.log_likelihood(match, down)) / (2 * h)
        assert grad[i] == pytest.approx(fd, abs=1e-7)
    assert sum(grad) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("n,d", [(2, 1), (4, 1), (5, 3), (10, 4), (33, 20), (12, 11)])
@pytest.mark.parametrize("order", ["victory", "elimination"])
def test_d_non_finishers_among_n_equal_players_have_likelihood_d_factorial_over_n_factorial(n: int, d: int, order: str) -> None:
    match = Match([[f"p{i}"] for i in range(n)], ranks=list(range(n - d)) + [None] * d)
    got = PlackettLuce(order=order, **NATURAL).log_likelihood(match, {})
    assert got == pytest.approx(math.lgamma(d + 1) - math.lgamma(n + 1), rel=1e-11)


@pytest.mark.parametrize("order", ["victory", "elimination"])
@pytest.mark.parametrize("groups", [[150] + [1] * 50, [1] * 20 + [400, 300] + [1] * 30, [17] * 6, [2] * 40])
def test_arithmetic_ties_of_equal_players_any_size_have_likelihood_one_over_n_factorial(order: str, groups: list[int]) -> None:
    # Equal players: each group fills its places with probability prod g! / n! and the mean over the groups'
    # orders divides by prod g!, so log P = -log n! for every layout (closed form), also past 16 tied, where
    # the geometric mean uses Efron's approximation.
    ranks = [r for r, g in enumerate(groups) for _ in range(g)]
    match = Match([[f"p{i}"] for i in range(len(ranks))], ranks=ranks)
    model = PlackettLuce(order=order, ties="arithmetic", **NATURAL)
    assert model.log_likelihood(match, {}) == pytest.approx(-math.lgamma(len(ranks) + 1), rel=1e-11)
    # Nothing to learn about equal players from where their groups finished relative to each other's sizes:
    # the step sums to zero, and tied players move together.
    grad = gradients(model, match)
    assert sum(grad) == pytest.approx(0.0, abs=1e-9)
    start = 0
    for g in groups:
        assert max(grad[start:start + g]) - min(grad[start:start + g]) < 1e-9
        start += g


def test_arithmetic_draw_of_two_teams_teaches_nothing_and_geometric_is_half_a_win() -> None:
    # Two teams tied: P(either order) = 1 under the arithmetic mean, so no step; the geometric mean is Elo's
    # half a win and half a loss, which moves the weaker team up.
    match = Match([["a"], ["b"]], ranks=[0, 0])
    ratings = {"a": Rating(1.0), "b": Rating(-1.0)}
    assert gradients(PlackettLuce(ties="arithmetic", **NATURAL), match, ratings) == pytest.approx([0.0, 0.0], abs=1e-12)
    p = 1.0 / (1.0 + math.exp(-2.0))
    assert gradients(PlackettLuce(ties="geometric", **NATURAL), match, ratings) == pytest.approx([0.5 - p, p - 0.5])


@pytest.mark.parametrize("values,rest", [
    ([0.0], 0.0), ([-2.0, 1.0, 0.5], 0.3), ([-30.0, -25.0], 4.0), ([12.0, 9.0, 15.0], -3.0), ([0.0] * 8, 2.0),
])
def test_censored_integral_against_mpmath(values: list[float], rest: float) -> None:
    # P = int_0^inf e^{-u} prod_i (1 - exp(-a_i u)) du, a_i = exp(v_i - log_rest), by mpmath.quad at 30 digits.
    mpmath.mp.dps = 30
    a = [mpmath.e ** (mpmath.mpf(v) - rest) for v in values]
    f = lambda u: mpmath.e ** (-u) * mpmath.fprod(1 - mpmath.e ** (-ai * u) for ai in a)  # noqa: E731
    reference = mpmath.log(mpmath.quad(f, [0, 1e-12, 1e-6, 1e-3, 0.1, 1, 10, 100, mpmath.inf]))
    grad = np.empty(len(values))
    got = censored_block(np.array(values), len(values), rest, grad)
    assert got == pytest.approx(float(reference), rel=1e-10)
    # The gradient: d log P / d v_i by mpmath's numerical derivative of the same reference.
    for i in range(min(len(values), 3)):
        def log_p(x, i=i):
            b = list(a)
            b[i] = mpmath.e ** (x - rest)
            return mpmath.log(mpmath.quad(lambda u: mpmath.e ** (-u) * mpmath.fprod(1 - mpmath.e ** (-bi * u) for bi in b),
                                          [0, 1e-12, 1e-6, 1e-3, 0.1, 1, 10, 100, mpmath.inf]))
        assert grad[i] == pytest.approx(float(mpmath.diff(log_p, values[i])), rel=1e-7, abs=1e-12)


def test_loser_and_winner_bounds_under_elimination() -> None:
    # Note: the loser's update lies in [-eta, 0], the winner's in [0, (n-1) eta].
    rng = np.random.default_rng(3)
    model = PlackettLuce(order="elimination", **NATURAL)
    for _ in range(200):
        n = int(rng.integers(2, 12))
        values = rng.normal(scale=3.0, size=n)
        names = [f"p{i}" for i in range(n)]
        ratings = {p: Rating(float(v)) for p, v in zip(names, values)}
        g = gradients(model, Match.ffa(names), ratings)
        assert -1.0 - 1e-12 <= g[-1] <= 0.0
        assert 0.0 <= g[0] <= n - 1 + 1e-12


def test_two_player_plackett_luce_is_logistic_elo_including_draws() -> None:
    from podium import Elo

    for order in ("victory", "elimination"):
        for ranks in ([0, 1], [1, 0], [0, 0], [0, None]):
            match = Match([["a"], ["b"]], ranks=ranks)
            ratings = {"a": Rating(1620.0), "b": Rating(1480.0)}
            mine, elo = PlackettLuce(order=order).rate(match, ratings), Elo().rate(match, ratings)
            assert [mine[p].mu for p in "ab"] == pytest.approx([elo[p].mu for p in "ab"], abs=1e-10)
            assert PlackettLuce(order=order).log_likelihood(match, ratings) == pytest.approx(Elo().log_likelihood(match, ratings))


def test_large_tied_group_is_symmetric_and_finite() -> None:
    # 20 tied teams exceed the exact subset enumeration; the mean-field average must stay symmetric.
    names = [f"p{i}" for i in range(22)]
    match = Match([[p] for p in names], ranks=[0] + [1] * 20 + [2])
    g = gradients(PlackettLuce(**NATURAL), match)
    assert np.all(np.isfinite(g))
    assert np.ptp(g[1:21]) < 1e-12
    assert sum(g) == pytest.approx(0.0, abs=1e-10)


@pytest.mark.parametrize("gap", [0.0, 0.7, -3.0, 40.0])
def test_two_teams_elimination_win_is_the_logistic(gap: float) -> None:
    """Of two, the winner under elimination is the one not eliminated first, with probability
    ``e^-s_j / (e^-s_i + e^-s_j) = 1 / (1 + e^-(s_i - s_j))``: the closed form the public call takes, and what the
    censored-group integral it skips gives."""
    ratings = {"a": Rating(gap), "b": Rating(0.0)}
    p = PlackettLuce(order="elimination", **NATURAL).win_probabilities([["a"], ["b"]], ratings)
    want = float(1 / (1 + mpmath.exp(-gap)))
    assert p[0] == pytest.approx(want, rel=1e-12) and p[0] + p[1] == pytest.approx(1.0, abs=1e-15)
    integral = censored_block(np.array([-0.0]), 1, -gap, np.empty(1))
    assert integral == pytest.approx(math.log(want), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("order", ["victory", "elimination"])
def test_win_probabilities_monte_carlo(order: str) -> None:
    # Exponential race: T_i ~ Exp(rate exp(v_i)), v = s (victory) or -s (elimination); the first chosen
    # (victory) or the last chosen (elimination) wins. 400,000 races: standard error < 8e-4.
    s = np.array([0.5, -0.2, 0.0, 1.0, -1.5])
    ratings = {f"p{i}": Rating(float(v)) for i, v in enumerate(s)}
    p = PlackettLuce(order=order, **NATURAL).win_probabilities([[f"p{i}"] for i in range(5)], ratings)
    rng = np.random.default_rng(11)
    sign = 1.0 if order == "victory" else -1.0
    t = rng.exponential(size=(400_000, 5)) / np.exp(sign * s)
    winners = np.argmin(t, axis=1) if order == "victory" else np.argmax(t, axis=1)
    freq = np.bincount(winners, minlength=5) / 400_000
    assert p == pytest.approx(freq, abs=4e-3)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    if order == "victory":
        assert p == pytest.approx(np.exp(s) / np.exp(s).sum(), rel=1e-12)


def test_extreme_ratings_stay_finite() -> None:
    names = [f"p{i}" for i in range(6)]
    values = [1e6, -1e6, 3e5, 0.0, -7e5, 2.0]
    for order in ("victory", "elimination"):
        model = PlackettLuce(order=order)
        for ranks in ([5, 0, 1, 2, 3, 4], [None, 0, 0, 1, None, 2], [0, 1, 2, 3, None, None]):
            match = Match([[p] for p in names], ranks=ranks)
            ratings = {p: Rating(v) for p, v in zip(names, values)}
            new = model.rate(match, ratings)
            assert all(math.isfinite(r.mu) for r in new.values())
            assert math.isfinite(model.log_likelihood(match, ratings))
            assert np.all(np.isfinite(model.win_probabilities([[p] for p in names], ratings)))


@pytest.mark.parametrize("order", ["victory", "elimination"])
@pytest.mark.parametrize("spread", [590.0, 700.0, 5000.0])
def test_wide_spreads_against_mpmath(order: str, spread: float) -> None:
    # Spreads beyond 600 natural units take the log-space path; mpmath at 50 digits gives the reference
    # log-likelihood of an upset and its gradient (by mpmath.diff).
    mpmath.mp.dps = 50
    values = [0.0, 0.37 * spread, spread, 0.81 * spread]
    ranks = [0, 2, 3, 1]  # the weakest wins
    names = [f"p{i}" for i in range(4)]
    sign = 1 if order == "victory" else -1

    def reference(vals):
        best_first = sorted(range(4), key=lambda i: ranks[i])
        choice = best_first if order == "victory" else best_first[::-1]
        v = [sign * vals[i] for i in choice]
        return mpmath.fsum(v[k] - mpmath.log(mpmath.fsum(mpmath.e ** x for x in v[k:])) for k in range(4))

    model = PlackettLuce(order=order, **NATURAL)
    match = Match([[p] for p in names], ranks=ranks)
    ratings = {p: Rating(v) for p, v in zip(names, values)}
    ref = reference([mpmath.mpf(v) for v in values])
    assert model.log_likelihood(match, ratings) == pytest.approx(float(ref), rel=1e-12)
    grad = gradients(model, match, ratings)
    for i in range(4):
        d = mpmath.diff(lambda x, i=i: reference([x if j == i else mpmath.mpf(values[j]) for j in range(4)]), values[i])
        assert grad[i] == pytest.approx(float(d), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("n,value", [(1000, 6.0), (300, 10.0), (40, -3.0), (200, 0.0)])
def test_censored_integral_closed_form_for_equal_rates(n: int, value: float) -> None:
    # n group members of rate a = e^value against a rest of total rate 1: by memorylessness the next
    # choice comes from the group with probability m a / (m a + 1) while m members remain, so
    # log P = sum_{m=1}^{n} log(m a / (m a + 1)); every member's derivative is the same by symmetry,
    # d log P / d value = sum_m 1 / (m a + 1) / n each.
    a = math.exp(value)
    exact = sum(math.log(m * a / (m * a + 1.0)) for m in range(1, n + 1))
    d_exact = sum(1.0 / (m * a + 1.0) for m in range(1, n + 1)) / n
    grad = np.empty(n)
    got = censored_block(np.full(n, value), n, 0.0, grad)
    assert got == pytest.approx(exact, rel=1e-11)
    assert grad == pytest.approx(np.full(n, d_exact), rel=1e-9)
