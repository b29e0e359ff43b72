"""The two-team Elo and its pairwise generalization (multiplayer-Elo note, sections 2 and 3.1).

Ratings ``r`` are in rating points; the math runs in natural units ``rho = (r - initial) / scale``.  A
team performs the partial-play weighted sum of its members' performances, so its strength is the weighted
sum of their ``rho`` and the noise of a difference grows with the teams: strengths are divided by the
match's spread ``c = sqrt(1 + spread (N - 1))``, ``N`` the mean over teams of ``sum w^2``
(:func:`podium.models.base.match_spread`; ``c = 1`` for one-player teams, ``sqrt(n)`` for ``n`` v ``n`` at
the default ``spread = 1``, as TrueSkill's ``n beta^2``).  For two teams with strengths ``s1, s2`` and
``d = s1 - s2`` the probability that team 1 finishes ahead is

* logistic (the note's exponential Elo): ``P = 1 / (1 + exp(-d))``; with ``scale = 400 / ln 10`` this is
  chess Elo's ``E = 1 / (1 + 10**(-(r1 - r2) / 400))``;
* gaussian (performances ``X_i ~ N(s_i, 1)``): ``P = Phi(d / sqrt 2)``.

The match log-likelihood is ``S log P + (1 - S) log(1 - P)`` with ``S = 1, 0, 1/2`` for a win, loss or draw
(a draw is half a win and half a loss).  Its derivative with respect to ``s1`` is the ``gradient``
update: ``S - P`` for the logistic model and ``(S phi(z)/Phi(z) - (1-S) phi(z)/Phi(-z)) / sqrt 2`` with
``z = d / sqrt 2`` for the Gaussian one (unbounded in an upset).  The ``classic`` update is ``S - P``
with the model's ``P`` (bounded by 1).  A team's update is ``k * gradient``, shared to member ``i`` by
the chain rule: ``Delta r_i = k * w_i * dL/ds / c``.

Why the spread: with each member moving by ``k`` and strengths summed over ``n`` players, a team game is
``n`` times as sure and moves a team's strength ``n`` times as far as a duel, which makes the plain
multiplayer Elo overconfident in team games (pair log loss above a coin flip's on 5 v 5 and 8 v 8 with
parties; ``python benchmarks/teams.py``).  Measuring strengths from ``initial`` keeps uneven teams fair: the
plain sum puts a team of four newcomers 1500 points above a team of three.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from ..numerics import inv_mills, jit, log_ndtr, ndtr
from .base import LikelihoodModel, match_spread

__all__ = ["Elo", "PairwiseElo"]

_SQRT2 = math.sqrt(2.0)
LOGISTIC, GAUSSIAN = 0, 1
GRADIENT, CLASSIC = 0, 1
SUM, MEAN = 0, 1


@jit
def pair_score(ra: int, rb: int) -> float:
    """``S`` of the first of two teams with ranks ``ra, rb`` (``-1`` = did not finish): 1 ahead, 0 behind,
    1/2 drawn; ``-1`` when both did not finish (the pair says nothing)."""
    if ra < 0 and rb < 0:
        return -1.0
    if ra == rb:
        return 0.5
    if rb < 0 or (ra >= 0 and ra < rb):
        return 1.0
    return 0.0


@jit
def _log1p_unit(e: float) -> float:
    """``log(1 + e)`` for ``0 <= e <= 1``, within 2 ulp (measured against mpmath; glibc's ``log1p`` is within
    1), from one ``log`` and one division, which a replay computes in about half the time of ``log1p``.

    ``u = 1 + e`` is rounded, but ``u - 1`` is exact, so ``e / (u - 1)`` corrects ``log(u)`` for that
    rounding (Goldberg, "What every computer scientist should know about floating-point arithmetic",
    1991, theorem 4).
    """
    u = 1.0 + e
    return e if u == 1.0 else math.log(u) * (e / (u - 1.0))


@jit
def pair_outcome(d: float, score: float, performance: int, update: int, want_ll: bool,
                 e: float = -1.0) -> tuple[float, float]:
    """Log-likelihood and update of one two-team game for the team ahead-by-``d``.

    Parameters
    ----------
    d : float
        ``s1 - s2`` in natural units.
    score : float
        ``S``: 1 if team 1 finished ahead, 0 if behind, 0.5 for a draw.
    performance, update : int
        ``LOGISTIC``/``GAUSSIAN`` and ``GRADIENT``/``CLASSIC``.
    want_ll : bool
        Compute the log-likelihood (else 0 is returned for it, and a replay saves its logarithms).
    e : float, optional
        ``exp(-|d|)`` when the caller has it already (logistic only); computed when negative.

    Returns
    -------
    (log L, g) : the game's log-likelihood and team 1's update direction (team 2's is ``-g``).
    """
    ll = 0.0
    if performance == LOGISTIC:
        # One exp (and one logarithm for the likelihood): with e = exp(-|d|), sigmoid(|d|) = 1/(1+e).
        if e < 0.0:
            e = math.exp(-abs(d))
        p = 1.0 / (1.0 + e) if d >= 0.0 else e / (1.0 + e)
        if want_ll:
            # log sigmoid(d) = min(d, 0) - log1p(e), log sigmoid(-d) = -max(d, 0) - log1p(e): min and max
            # instead of a branch on the sign of d, which a replay mispredicts half the time.
            l1p = _log1p_unit(e)
            ll = score * (min(d, 0.0) - l1p) + (1.0 - score) * (-max(d, 0.0) - l1p)
        return ll, score - p
    z = d / _SQRT2
    if want_ll:
        if score > 0.0:
            ll += score * log_ndtr(z)
        if score < 1.0:
            ll += (1.0 - score) * log_ndtr(-z)
    if update == CLASSIC:
        return ll, score - ndtr(z)
    g = 0.0
    if score > 0.0:
        g += score * inv_mills(z)
    if score < 1.0:
        g -= (1.0 - score) * inv_mills(-z)
    return ll, g / _SQRT2


@jit
def pairwise_gradient(
    s: NDArray[np.float64], rank: NDArray[np.int64], n: int,
    performance: int, update: int, combine: int, grad: NDArray[np.float64], x: NDArray[np.float64],
    want_ll: bool = True,
) -> float:
    """Pairwise Elo over ``n`` teams: every pair as a two-team game (note, section 3.1).

    A pair with different ranks is a win for the better one; a finisher beats a non-finisher
    (``rank = -1``); equal ranks draw; two non-finishers contribute nothing.  ``combine = MEAN``
    divides the sum by ``n - 1``, the number of opponents, which keeps the updates zero-sum.
    Writes ``dL/ds`` into ``grad[:n]`` and returns the (composite) log-likelihood; ``x`` is scratch space
    for ``n`` floats.
    """
    # Logistic pairs need exp(-|s_a - s_b|) = min(x_a, x_b) / max(x_a, x_b) with x = exp(s - max s):
    # n exponentials instead of n(n-1)/2, exact while the spread keeps every x a normal number.
    hoist = False
    if performance == LOGISTIC and n > 2:
        top, bottom = s[0], s[0]
        for a in range(1, n):
            top, bottom = max(top, s[a]), min(bottom, s[a])
        hoist = top - bottom <= 600.0
        if hoist:
            for a in range(n):
                x[a] = math.exp(s[a] - top)
    for a in range(n):
        grad[a] = 0.0
    total = 0.0
    for a in range(n):
        ra = rank[a]
        for b in range(a + 1, n):
            score = pair_score(ra, rank[b])
            if score < 0.0:
                continue
            e = min(x[a], x[b]) / max(x[a], x[b]) if hoist else -1.0
            ll, g = pair_outcome(s[a] - s[b], score, performance, update, want_ll, e)
            total += ll
            grad[a] += g
            grad[b] -= g
    if combine == MEAN and n > 2:
        inv = 1.0 / (n - 1)
        for a in range(n):
            grad[a] *= inv
        total *= inv
    return total


@jit
def spread_pairs(performance: int, s: NDArray[np.float64], square_weights: NDArray[np.float64], spread: float,
                 a: NDArray[np.int64], b: NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``log P(a[k] ahead of b[k])`` and the reverse for each pair of teams, each as the replay's own two-team game
    (:func:`pair_outcome` of the strength difference over the pair's :func:`podium.models.base.match_spread`)."""
    la = np.empty(len(a))
    lb = np.empty(len(a))
    for k in range(len(a)):
        d = (s[a[k]] - s[b[k]]) / match_spread(spread, 0.5 * (square_weights[a[k]] + square_weights[b[k]]))
        la[k] = pair_outcome(d, 1.0, performance, GRADIENT, True)[0]
        lb[k] = pair_outcome(d, 0.0, performance, GRADIENT, True)[0]
    return la, lb


class _PairwiseBase(LikelihoodModel):
    """Shared constructor of :class:`Elo` and :class:`PairwiseElo`."""

    _kind = 0

    def __init__(
        self, *, k: float = 32.0, initial: float = 1500.0, scale: float = 400.0 / math.log(10.0),
        performance: str = "logistic", update: str = "gradient", combine: str = "sum", spread: float = 1.0,
        provisional: float = 0.0,
    ) -> None:
        self.performance = performance
        self.update = update
        if type(self) is not Elo:  # Elo has two teams, for which "sum" and "mean" agree
            self.combine = combine
        super().__init__(k=k, initial=initial, scale=scale, spread=spread, provisional=provisional)
        self._int_params = (
            self._choice("performance", performance, ("logistic", "gaussian")),
            self._choice("update", update, ("gradient", "classic")),
            self._choice("combine", combine, ("sum", "mean")),
        )

    def _win_spec(self) -> tuple[str, str]:
        # Logistic pairs are differences of Gumbel performances: Plackett-Luce in the victory order.
        return ("gumbel" if self.performance == "logistic" else "gaussian"), "victory"


class Elo(_PairwiseBase):
    """Two-team Elo, logistic or Gaussian, learnt by the likelihood gradient or the classic update.

    ``P(team 1 ahead) = 1 / (1 + exp(-(s1 - s2)))`` (logistic) or ``Phi((s1 - s2) / sqrt 2)``
    (Gaussian), with ``s`` the partial-play weighted sum of members' ratings divided by ``scale``.
    The update of member ``i`` is ``k * w_i * dL/ds`` (multiplayer-Elo note, section 2); a draw
    counts as half a win and half a loss; a finisher beats a non-finisher.

    Parameters
    ----------
    k : float, default 32
        Step size in rating points.
    initial : float, default 1500
        Rating of a new player.
    scale : float, default 400 / ln 10
        Rating points per natural unit: ``Elo()`` is chess Elo.  ``scale=1, initial=0, k=eta`` gives the
        note's formulas literally.
    performance : {"logistic", "gaussian"}
    update : {"gradient", "classic"}
        ``gradient``: the derivative of the match log-likelihood (``S - E`` for logistic, the unbounded
        ``phi/Phi`` form for Gaussian); ``classic``: ``S - E`` with the model's ``E``.
    spread : float, default 1
        How the noise of a team game grows with the teams: strengths are divided by
        ``sqrt(1 + spread (N - 1))``, ``N`` the mean over both teams of ``sum w^2`` (the number of players of
        a full-weight team).  1: a team performs the sum of its members' performances; 0: any team game is
        as noisy as a duel (the note's plain Elo).  No effect on one-on-one games.
    provisional : float, default 0
        A player's step is ``k (1 + provisional / (n + 1))`` after ``n`` matches in a :class:`podium.League`
        (:func:`podium.models.base.provisional_factor`): newcomers settle faster.  The single-match methods see
        every player as new (a :class:`podium.Rating` carries no game count).

    Examples
    --------
    >>> from podium import Elo, Match, Rating
    >>> new = Elo(k=25).rate(Match([["a"], ["b"]]), {"a": Rating(1200), "b": Rating(1500)})
    >>> round(new["a"].mu, 2), round(new["b"].mu, 2)
    (1221.23, 1478.77)
    """

    def __init__(
        self, *, k: float = 32.0, initial: float = 1500.0, scale: float = 400.0 / math.log(10.0),
        performance: str = "logistic", update: str = "gradient", spread: float = 1.0, provisional: float = 0.0,
    ) -> None:
        super().__init__(k=k, initial=initial, scale=scale, performance=performance, update=update, spread=spread,
                         provisional=provisional)

    _max_teams = 2


class PairwiseElo(_PairwiseBase):
    """Elo for any number of teams: every pair of teams as a two-team Elo game (note, section 3.1).

    Pairs with different ranks are a win and a loss, drawn pairs a draw, a finisher beats a
    non-finisher, two non-finishers contribute nothing.  ``combine="sum"`` adds the pair updates;
    ``combine="mean"`` divides them by ``n - 1`` (the number of opponents), so a free-for-all moves a
    rating about as much as one game.  The log-likelihood is the composite (pairwise) one whose gradient
    is the update: for more than two teams it is not the probability of the whole order.

    ``win_probabilities`` uses the multi-team model whose pairs are this model: Gumbel performances
    (Plackett-Luce, victory order) for logistic, ``N(s_i, 1)`` performances for Gaussian.

    Parameters
    ----------
    k, initial, scale, performance, update, spread, provisional
        As for :class:`Elo` (``N`` is the mean over all the match's teams).
    combine : {"sum", "mean"}
    """

    def __init__(
        self, *, k: float = 32.0, initial: float = 1500.0, scale: float = 400.0 / math.log(10.0),
        performance: str = "logistic", update: str = "gradient", combine: str = "sum", spread: float = 1.0,
        provisional: float = 0.0,
    ) -> None:
        super().__init__(k=k, initial=initial, scale=scale, performance=performance, update=update, combine=combine,
                         spread=spread, provisional=provisional)
