"""The Elo-MMR paper's two accuracy metrics for contests: pair inversion and rank deviation.

Ebtekar & Liu, "Elo-MMR: A Rating System for Massive Multiplayer Competitions" (WWW 2021), compare rating
systems on ranked contests by two figures, both from the ratings *before* each round.  The definitions here are
those of the paper's reference implementation, ``EbTech/Elo-MMR``: ``multi-skill/src/metrics.rs``
(``pairwise_metric``, ``percentile_distance_metric``, ``compute_metrics_custom``; read at commit ``d250f9ee``,
the version that counts inversions by merge sort), ``multi-skill/src/systems/mod.rs``
(``get_participant_ratings``: who counts) and ``multi-skill/src/experiment_config.rs`` (``Experiment::eval``:
the metrics of a round are computed before the round is rated, from round ``num_rounds_postpone_eval`` on --
podium's ``start``).

**The field.**  The contestants of a round that count are those with at least ``min_rounds`` earlier rounds in
the history (``event_history.len() >= min_history`` before the round; the paper's N = 5).  The others are taken
out of the round altogether: places are renumbered among the contestants that count, and ``n`` is their number.
A round whose remaining field is all one tie group (``n < 2`` included) says nothing about order and does not
count (``outcome_free``).  Each contestant occupies the range of places ``[lo, hi]`` of its tie group (0-based,
among the field).

**Pair inversion** (higher is better).  A pair of the field is *inverted* when the contestant that finished
strictly behind has the strictly higher rating; every other pair (one finished ahead and was rated at least as
high, the two tied in place, or equal ratings) counts as correctly ordered.  Contestant ``i``'s share is the
fraction of its ``n - 1`` opponents with whom it forms a correct pair, and the metric is the mean share over
every counted contestant of every counted round (the reference's ``(weight n, sum 100 (n - 2 inv / (n - 1)))``
summed over rounds and divided)::

    pair_inversion = sum_rounds (n - 2 inv / (n - 1)) / sum_rounds n

**Rank deviation** (lower is better).  The field sorted by rating, highest first, gives each contestant a
predicted place ``i``; equal ratings keep the order of the actual places (the reference's stable sort of a
list in finishing order).  The deviation is the distance from ``i`` to the contestant's range of actual places,
over ``n - 1``, averaged over every counted contestant of every counted round::

    rank_deviation = sum_rounds sum_i dist(i, [lo_i, hi_i]) / (n - 1)  /  sum_rounds n

Both are reported as fractions (the reference prints percentages: multiply by 100).  A perfect predictor scores
1 and 0; ordering a strict round of ``n`` exactly backwards scores 0 and ``n / (2 (n - 1))`` for even ``n``,
``(n + 1) / (2 n)`` for odd ``n`` (every pair inverted; predicted place ``n - 1 - k`` for actual place ``k``):
1 for two contestants, tending to 1/2 for large fields, the largest mean deviation of any order.

**What podium adds.**  The reference rates individuals; here a *contestant* is a team, rated by the model's
own team strength before the match (the location of its predicted performance, ``Model._predictive``: for one
player an increasing function of ``mu``, so individual contests are ordered exactly by ``mu`` as in the
reference), and a team counts when every member has ``min_rounds`` earlier matches.  Non-finishers (rank
``None``) finish below every finisher and are not ordered among themselves, so they occupy the last places
together as one group, as a tie does: no pair among them is inverted and no place in their range is a
deviation.  A rater that is not a podium model has no rating, only pair probabilities: its contestants are
ordered by their mean predicted probability of finishing ahead of each other team of the match.  The
reference's figure over "everyone" leaves out a player's first contest (players it has not seen have no entry),
which is ``min_rounds=1`` here; ``min_rounds=0`` also counts newcomers at the prior.  Elo-MMR's replay skips a
contest that is all one tie without adding it to anyone's history, whereas podium rates and counts every match.

Earlier revisions of the reference differ: ``metrics.rs`` at ``506b12f`` counted a pair as correct only when
the one ahead was rated strictly higher (equal ratings were wrong), and the older ``ranking/src/metrics.rs``
averaged per round, with the midpoint of a tie as the place and ``n^2`` as the divisor.  The merge-sort
revision is followed here because it is the later one; in it a pair rated equal, which has no higher-rated
member to be wrong about, is not an inversion.

Each round costs ``O(n log n)``: two sorts and a Fenwick tree that counts the inversions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..data.matches import Matches
from ..ordering.numerics import jit

__all__ = ["CONTEST_METRICS", "round_metrics"]

#: The Elo-MMR paper's metrics of a :class:`podium.Report`: ``pair_inversion`` (the share of correctly ordered
#: pairs, higher is better) and ``rank_deviation`` (lower is better).
CONTEST_METRICS = ("pair_inversion", "rank_deviation")

_LAST = np.iinfo(np.int64).max  # the sort key of a non-finisher: below every finisher


@jit
def _round_inversions(round_start: NDArray[np.int64], x: NDArray[np.float64]) -> NDArray[np.int64]:
    """Per round ``r`` (the slice ``round_start[r]:round_start[r+1]`` of ``x``): the number of pairs ``p < q``
    with ``x[p] < x[q]`` strictly, counted with a Fenwick tree over the dense ranks of ``x`` (``O(n log n)``)."""
    rounds = len(round_start) - 1
    out = np.zeros(rounds, dtype=np.int64)
    for r in range(rounds):
        s = round_start[r]
        n = round_start[r + 1] - s
        seg = x[s:s + n]
        order = np.argsort(seg, kind="mergesort")
        dense = np.empty(n, dtype=np.int64)
        k = 0
        for i in range(n):
            if i > 0 and seg[order[i]] != seg[order[i - 1]]:
                k += 1
            dense[order[i]] = k + 1  # 1-based for the tree
        size = k + 1
        tree = np.zeros(size + 1, dtype=np.int64)
        inv = 0
        for q in range(n):
            d = dense[q]
            j = d - 1  # earlier entries strictly below x[q]
            while j > 0:
                inv += tree[j]
                j -= j & -j
            j = d
            while j <= size:
                tree[j] += 1
                j += j & -j
        out[r] = inv
    return out


def _layout(rnd: NDArray[np.int64], key: NDArray[np.int64]
            ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """For entries sorted by ``(rnd, key)``: ``(round id 0.., round_start, group id 0.., lo, hi)``, with ``lo`` and
    ``hi`` the first and last place of each entry's group of equal ``key`` within its round."""
    n = len(rnd)
    if n == 0:
        z = np.zeros(0, dtype=np.int64)
        return z, np.zeros(1, dtype=np.int64), z, z, z
    new_round = np.r_[True, rnd[1:] != rnd[:-1]]
    new_group = new_round | np.r_[True, key[1:] != key[:-1]]
    rid = np.cumsum(new_round) - 1
    gid = np.cumsum(new_group) - 1
    pos = np.arange(n, dtype=np.int64)
    round_start = np.r_[pos[new_round], n].astype(np.int64)
    group_start = pos[new_group]
    group_size = np.diff(np.r_[group_start, n])
    lo = group_start[gid] - round_start[rid]
    hi = lo + group_size[gid] - 1
    return rid, round_start, gid, lo, hi


class ContestField:
    """The contestants every model is scored on: for each counted round, the teams with ``min_rounds`` earlier
    matches (every member), in finishing order, with their range of places among them.

    Parameters
    ----------
    matches : Matches
        The history.
    scored : bool[M]
        The matches that may count (``start``, ``min_games``, ``connected_only`` of :func:`podium.evaluate`).
    games : int64[P]
        For each player slot, how many matches its player had played before.
    min_rounds : int
        The least number of earlier matches of every member of a counted team.
    """

    def __init__(self, matches: Matches, scored: NDArray[np.bool_], games: NDArray[np.int64], min_rounds: int) -> None:
        self.min_rounds = min_rounds
        n_teams = len(matches.team_rank)
        team_match = np.repeat(np.arange(len(matches), dtype=np.int64), np.diff(matches.match_start))
        team_games = (np.minimum.reduceat(games, matches.team_start[:-1]) if n_teams
                      else np.zeros(0, dtype=np.int64))
        idx = np.flatnonzero(scored[team_match] & (team_games >= min_rounds))
        rank = matches.team_rank[idx]
        key = np.where(rank < 0, _LAST, rank)
        order = np.lexsort((key, team_match[idx]))
        team, key = idx[order], key[order]
        rid, round_start, gid, _, _ = _layout(team_match[team], key)
        size = np.diff(round_start)
        group_first = np.r_[True, gid[1:] != gid[:-1]] if len(gid) else np.zeros(0, dtype=bool)
        groups = np.bincount(rid[group_first], minlength=len(size))
        informative = (size >= 2) & (groups >= 2)  # not outcome-free
        keep = informative[rid] if len(rid) else np.zeros(0, bool)
        self.team = team[keep]                    # int64[N]: counted teams, by round then place
        self.match = team_match[self.team]        # int64[N]: each one's match
        self.rid, self.round_start, self.gid, self.lo, self.hi = _layout(self.match, key[keep])
        self.size = np.diff(self.round_start)     # int64[R]: n of each counted round

    @property
    def rounds(self) -> int:
        """The number of counted rounds."""
        return len(self.size)

    @property
    def contestants(self) -> int:
        """The number of counted contestants, summed over the counted rounds."""
        return len(self.team)

    def sums(self, strength: NDArray[np.float64] | None) -> ContestSums:
        """Per counted round, the sums over its contestants of their pair-inversion shares and rank deviations,
        from each team's rating ``strength[t]`` before its match (NaN throughout when a rating is not finite)."""
        n = self.size.astype(np.float64)
        if strength is None or not np.all(np.isfinite(x := strength[self.team])):
            nan = np.full(self.rounds, np.nan)
            return ContestSums(n, nan, nan.copy())
        # rank deviation: predicted place = position by rating (highest first), equal ratings in finishing order
        order = np.lexsort((self.lo, -x, self.rid))
        place = np.arange(len(order), dtype=np.int64) - self.round_start[self.rid[order]]
        dist = np.maximum(0, np.maximum(self.lo[order] - place, place - self.hi[order]))
        deviation = np.bincount(self.rid[order], weights=dist.astype(np.float64), minlength=self.rounds) / (n - 1.0)
        # pair inversion: within each place group highest rating first, then count pairs (ahead, behind) with the
        # one behind rated strictly higher
        sequence = np.lexsort((-x, self.gid))
        inversions = _round_inversions(self.round_start, np.ascontiguousarray(x[sequence]))
        correct = n - 2.0 * inversions / (n - 1.0)
        return ContestSums(n, correct, deviation)


@dataclass
class ContestSums:
    """Per counted round: its number of contestants ``n``, and the sums over them of the pair-inversion share and
    of the rank deviation.  A metric is its column's total over ``n``'s."""

    n: NDArray[np.float64]
    correct: NDArray[np.float64]
    deviation: NDArray[np.float64]

    def metric(self, name: str) -> float:
        """``pair_inversion`` or ``rank_deviation`` over all the rounds (NaN with no round)."""
        total = float(np.sum(self.n))
        if total == 0:
            return math.nan
        return float(np.sum(self.correct if name == "pair_inversion" else self.deviation)) / total


def team_strengths_from_pairs(matches: Matches, a: NDArray[np.int64], b: NDArray[np.int64],
                              log_ahead_a: NDArray[np.float64], log_ahead_b: NDArray[np.float64]
                              ) -> NDArray[np.float64]:
    """A rating for each team from pair predictions alone: its mean predicted probability of finishing ahead of
    each other team of its match (NaN where a pair was not predicted), for raters that expose no rating."""
    n_teams = len(matches.team_rank)
    pa, pb = np.exp(log_ahead_a), np.exp(log_ahead_b)
    total = np.bincount(a, weights=pa, minlength=n_teams) + np.bincount(b, weights=pb, minlength=n_teams)
    others = np.repeat(np.diff(matches.match_start) - 1, np.diff(matches.match_start)).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / others


def round_metrics(ratings: Sequence[float] | NDArray[np.float64], ranks: Sequence[int | None]) -> tuple[float, float]:
    """The two metrics of one round: ``(pair_inversion, rank_deviation)``, each the mean over the contestants.

    Parameters
    ----------
    ratings : sequence of float or float64 array
        Each contestant's rating before the round (higher is stronger).
    ranks : sequence of int or None
        Each contestant's finishing rank, 0 best, equal ranks tied, ``None`` a non-finisher (below every
        finisher, the non-finishers together in the last places).

    Returns
    -------
    (float, float)
        See the module docstring; ``(nan, nan)`` for a round without an order (fewer than two contestants, or
        all in one group).

    Examples
    --------
    >>> round_metrics([3.0, 2.0, 1.0], [0, 1, 2])
    (1.0, 0.0)
    >>> round_metrics([1.0, 2.0, 3.0], [0, 1, 2])
    (0.0, 0.6666666666666666)
    """
    x = np.asarray(ratings, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"'ratings' must be a flat sequence of numbers. Got shape {x.shape}.")
    if len(ranks) != len(x):
        raise ValueError(f"'ranks' must have one entry per rating ({len(x)}). Got {len(ranks)}.")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"'ratings' must be finite. Got {ratings!r:.200}.")
    for r in ranks:
        if r is not None and (isinstance(r, bool) or not isinstance(r, (int, np.integer)) or r < 0):
            raise ValueError(f"'ranks' must hold ints >= 0 or None. Got {r!r} in {ranks!r:.200}.")
    n = len(x)
    match_start = np.array([0, n], dtype=np.int64)
    team_start = np.arange(n + 1, dtype=np.int64)
    rank = np.array([-1 if r is None else int(r) for r in ranks], dtype=np.int64)
    packed = Matches(match_start, team_start, rank, np.arange(n, dtype=np.int64), np.ones(n), np.full(1, np.nan),
                     [str(i) for i in range(n)], validate=False)
    field = ContestField(packed, np.ones(1, dtype=bool), np.zeros(n, dtype=np.int64), 0)
    sums = field.sums(x)
    return sums.metric("pair_inversion"), sums.metric("rank_deviation")
