"""Drawn groups with margin 0 in ``podium.ordering.log_outcome``: big groups (regressions) and real data.

References: brute force (the strict orders' log-likelihoods from :func:`podium.ordering.log_order`, averaged as
the documented rule says), and the shift invariance of a location model (the location gradient sums to 0).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import podium
from podium.ordering import log_order
from podium.ordering.outcome import _capped_factorial
from ..shared import SHARED

CODEFORCES = SHARED / "codeforces_early" / "matches.jsonl.gz"


@pytest.mark.parametrize("k, expected", [(0, 1), (1, 1), (5, 120), (6, 720), (7, 721), (21, 721), (66, 721),
                                         (1000, 721)])
def test_capped_factorial_saturates_instead_of_wrapping(k: int, expected: int) -> None:
    # 21! > 2^63 wraps to a negative int64 and 66! (64 factors of 2) to exactly 0: both must read "more than 720"
    assert _capped_factorial(k, 720) == expected


def documented_runs(biggest: int) -> list[tuple[int, bool]]:
    """The rule for groups whose orders exceed 720: every cyclic rotation when the biggest group has at most 32
    members, else 16 rotations ``floor(j biggest / 16)``, each also reflected: ``(turn, reflected)`` a run."""
    if biggest <= 32:
        return [(r, False) for r in range(biggest)]
    return [(j * biggest // 16, reflected) for reflected in (False, True) for j in range(16)]


def rotations_mean(m: np.ndarray, rank: list[int], runs: list[tuple[int, bool]] | None = None
                   ) -> tuple[float, np.ndarray]:
    """Brute force of the rule: the mean over the runs (``documented_runs`` unless given) of every group's
    chain in step (rotated by ``turn``, read backwards when reflected), each a strict order, of log P and of its
    location gradient."""
    levels = sorted(set(rank))
    groups = [[i for i, r in enumerate(rank) if r == lv] for lv in levels]
    biggest = max(len(g) for g in groups)
    values, grads = [], []
    for r, reflected in runs if runs is not None else documented_runs(biggest):
        strict = [0] * len(rank)
        place = 0
        for g in groups:
            k = len(g)
            for t in range(k):
                strict[g[(k - 1 - t + r) % k if reflected else (t + r) % k]] = place
                place += 1
        v, gl, _ = log_order(m, rank=strict, gradient=True)
        values.append(v)
        grads.append(gl)
    return float(np.mean(values)), np.mean(grads, axis=0)


@pytest.mark.parametrize("k", [21, 40, 70, 150])
def test_big_tied_group_is_not_lost_to_integer_overflow(k: int) -> None:
    # codeforces_early's round 8 (434 players, 70 tied at one place) raised ZeroDivisionError, and a tie of
    # 21..65 returned log P = -0.0 with a zero gradient: the count of orders k! overflowed int64
    rng = np.random.default_rng(k)
    n = k + 4
    m = rng.normal(0.0, 1.0, n)
    rank = [0, 1] + [2] * k + [3, 4]
    value, gl, _ = log_order(m, rank=rank, gradient=True)
    ref, ref_gl = rotations_mean(m, rank)
    assert math.isfinite(value) and value < -10.0  # log P of a k-way tie is far below 0
    assert value == pytest.approx(ref, abs=1e-9)
    np.testing.assert_allclose(gl, ref_gl, rtol=0, atol=1e-9)
    assert abs(gl.sum()) < 1e-8  # shift invariance
    assert np.abs(gl).max() > 0.1


@pytest.mark.parametrize("k", [33, 70, 150, 616])
def test_reflected_runs_put_every_member_at_the_middle_of_its_group_on_average(k: int) -> None:
    # The reason for reflections: over rotations alone a member's mean place is off the middle by up to k/32
    # places (a sawtooth over the members); with every rotation also reflected it is (k - 1) / 2 for everyone,
    # as over all k! orders.
    from podium.ordering import tie_member, tie_turn

    places = np.zeros(k)
    runs = 32
    for r in range(runs):
        turn, reflect = tie_turn(r, runs, k)
        for t in range(k):
            places[tie_member(t, k, turn, reflect)] += t / runs
    np.testing.assert_allclose(places, (k - 1) / 2, rtol=0, atol=1e-9)
    rotated = np.zeros(k)
    for j in range(runs):
        for t in range(k):
            rotated[(t + j * k // runs) % k] += t / runs
    assert np.abs(rotated - (k - 1) / 2).max() > 0.25  # what rotations alone would give


def test_reflected_runs_are_closer_to_every_rotation_than_twice_as_many_rotations() -> None:
    # 150 tied among 160 with spread ratings: the mean over all 150 rotations and their reflections (300 strict
    # orders) is the reference; the 32 runs of the rule are nearer to it, in log P and in the gradient, than the
    # 64 evenly spaced rotations that were the rule before.
    rng = np.random.default_rng(29)
    rank = [0] * 5 + [5] * 150 + [6, 7, 8, 9, 10]
    m = rng.normal(0.0, 1.0, len(rank))
    ref, ref_gl = rotations_mean(m, rank, [(r, f) for f in (False, True) for r in range(150)])
    value, gl, _ = log_order(m, rank=rank, gradient=True)
    old, old_gl = rotations_mean(m, rank, [(j * 150 // 64, False) for j in range(64)])
    assert abs(value - ref) < abs(old - ref)
    assert np.abs(gl - ref_gl).max() < np.abs(old_gl - ref_gl).max()
    assert np.sqrt(np.mean((gl - ref_gl) ** 2)) < np.sqrt(np.mean((old_gl - ref_gl) ** 2))


def test_two_big_groups_whose_orders_overflow_together() -> None:
    # 3! * 20! > 2^63 although 20! alone fits: the product must saturate as well
    rng = np.random.default_rng(3)
    rank = [0] * 3 + [1] * 20 + [2]
    m = rng.normal(0.0, 1.0, len(rank))
    value = log_order(m, rank=rank)
    assert value == pytest.approx(rotations_mean(m, rank)[0], abs=1e-9)


def test_small_groups_still_use_every_order() -> None:
    # 2! * 3! = 12 orders: the exhaustive branch, brute force over the 12 strict orders
    m = np.array([0.3, -0.1, 0.8, 0.0, -0.6, 0.2])
    rank = [0, 0, 1, 1, 1, 2]
    values = []
    for a in itertools.permutations([0, 1]):
        for b in itertools.permutations([2, 3, 4]):
            strict = [0] * 6
            for place, i in enumerate([*a, *b, 5]):
                strict[i] = place
            values.append(log_order(m, rank=strict))
    assert log_order(m, rank=rank) == pytest.approx(float(np.mean(values)), abs=1e-12)


def read_rounds(count: int) -> list[podium.Match]:
    if not CODEFORCES.exists():
        pytest.skip(f"{CODEFORCES} is not present")
    return list(itertools.islice(podium.read_matches(str(CODEFORCES)), count))


def test_thurstone_rates_codeforces_round_8() -> None:
    # the round that raised: 434 players, 70 tied at one place; every player's rating must move
    matches = read_rounds(8)
    league = podium.League(podium.Thurstone())
    league.record_many(matches[:7])
    last = matches[7]
    before = {t[0]: league.ratings[t[0]].mu if t[0] in league.ratings else None for t in last.teams}
    league.record(last)
    after = league.ratings
    moved = [after[p].mu != mu for p, mu in before.items()]
    assert all(math.isfinite(after[p].mu) for p in before)
    assert sum(moved) >= len(before) - 1  # a newcomer at the initial rating and exactly mid-field may not move
