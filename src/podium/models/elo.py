"""The two-team Elo and its pairwise generalization (multiplayer-Elo note, sections 2 and 3.1).

Ratings ``r`` are in rating points; the math runs in natural units ``rho = (r - initial) / scale``.  A
team performs the partial-play weighted sum of its members' performances, so its strength is the weighted
sum of their ``rho`` and the noise of a difference grows with the teams: strengths are divided by the
match's spread ``c = sqrt(1 + spread (N - 1))``, ``N`` the mean over teams of ``sum w^2``
(:func:`podium.kernels.common.match_spread`; ``c = 1`` for one-player teams, ``sqrt(n)`` for ``n`` v ``n`` at
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

from ..kernels.elo import MARGIN_FORMS, PAIRWISE
from .base import LikelihoodModel
from .context import ByContext

__all__ = ["Elo", "PairwiseElo"]


class _PairwiseBase(LikelihoodModel):
    """Shared constructor of :class:`Elo` and :class:`PairwiseElo`."""

    _kind = PAIRWISE
    _fit_space = {**LikelihoodModel._fit_space, "margin_power": "non_negative",
                  "margin_autocorrelation": "non_negative"}
    _fit_default = (*LikelihoodModel._fit_default, "margin_power")
    margin: str
    margin_power: float
    margin_autocorrelation: float | None

    def __init__(
        self, *, k: float = 32.0, initial: float = 1500.0, scale: float = 400.0 / math.log(10.0),
        performance: str = "logistic", update: str = "gradient", combine: str = "sum", spread: float = 1.0,
        provisional: float = 0.0, advantage: float | ByContext = 0.0, margin: str = "power", margin_power: float = 0.0,
        margin_autocorrelation: float | None = None, newcomer: float = 0.0,
    ) -> None:
        self.performance = performance
        self.update = update
        if type(self) is not Elo:  # Elo has two teams, for which "sum" and "mean" agree
            self.combine = combine
        super().__init__(k=k, initial=initial, scale=scale, spread=spread, provisional=provisional,
                         advantage=advantage, newcomer=newcomer)
        self._int_params = (
            self._choice("performance", performance, ("logistic", "gaussian")),
            self._choice("update", update, ("gradient", "classic")),
            self._choice("combine", combine, ("sum", "mean")),
        )
        self._init_params(margin=(margin, MARGIN_FORMS), margin_power=(margin_power, "non_negative"),
                          margin_autocorrelation=(margin_autocorrelation, "non_negative or None"))

    def _margin(self) -> tuple[int, float, float]:
        own = 400.0 / (2200.0 * math.log(10.0)) if self.margin == "fivethirtyeight" else 0.0
        autocorrelation = own if self.margin_autocorrelation is None else float(self.margin_autocorrelation)
        return MARGIN_FORMS.index(self.margin), float(self.margin_power), autocorrelation

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
        (:func:`podium.kernels.common.provisional_factor`): newcomers settle faster.  The single-match methods see
        every player as new (a :class:`podium.Rating` carries no game count).
    advantage : float, default 0
        Rating points added to a team's strength per unit of the advantage its match records
        (:attr:`podium.Match.advantage`: 1 for the home side, White).  Fitted by :func:`podium.fit` on a history
        that records advantages (about 100 in international football, as eloratings.net's).
    margin : {"power", "eloratings", "fivethirtyeight", "none"}, default "power"
        How the score difference ``m`` of a pair scales its step (:attr:`podium.Match.scores`; nothing without
        scores): ``max(m, 1) ** margin_power`` (fitted), eloratings.net's goal-difference table, or
        FiveThirtyEight's ``ln(m + 1) / ln 2``, each over ``1 + margin_autocorrelation * lead``
        (:func:`podium.kernels.elo.margin_factor`).  The prediction is the model's as before: margins teach the
        ratings, they are not predicted.
    margin_power : float, default 0
        The exponent of the "power" form; 0 (the default) is the plain step, and :func:`podium.fit` fits it on a
        history with scores.
    margin_autocorrelation : float or None, default None
        The divisor's slope per natural unit of the winner's lead; None: the form's own (FiveThirtyEight's
        0.0790, that is ``2.2 / (0.001 dElo + 2.2)``, else 0).
    newcomer : float, default 0
        What a new player adds to its team's strength, in rating points: a team's strength is
        ``sum_i w_i (r_i - initial + newcomer)``.  0 measures ratings from a newcomer's (a team of newcomers is
        even with any other, whatever its size); ``initial`` is the literal sum (a team of four newcomers
        ``initial`` points above a team of three).  It matters only where teams' sizes differ, and which is right
        depends on the game (docs/design.md, "Teams"): :func:`podium.fit` fits it on such a history.

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
        advantage: float | ByContext = 0.0, margin: str = "power", margin_power: float = 0.0,
        margin_autocorrelation: float | None = None, newcomer: float = 0.0,
    ) -> None:
        super().__init__(k=k, initial=initial, scale=scale, performance=performance, update=update, spread=spread,
                         provisional=provisional, advantage=advantage, margin=margin, margin_power=margin_power,
                         margin_autocorrelation=margin_autocorrelation, newcomer=newcomer)

    _max_teams = 2


class PairwiseElo(_PairwiseBase):
    """Elo for any number of teams: every pair of teams as a two-team Elo game (note, section 3.1).

    Pairs with different ranks are a win and a loss, drawn pairs a draw, a finisher beats a
    non-finisher, two non-finishers contribute nothing.  ``combine="mean"`` (the default) divides the summed
    pair updates by ``n - 1`` (the number of opponents), so a free-for-all moves a rating about as much as one
    game; ``combine="sum"`` adds them, the note's literal version, whose step grows with the field.  The
    log-likelihood is the composite (pairwise) one whose gradient is the update: for more than two teams it is
    not the probability of the whole order.

    ``win_probabilities`` uses the multi-team model whose pairs are this model: Gumbel performances
    (Plackett-Luce, victory order) for logistic, ``N(s_i, 1)`` performances for Gaussian.

    Parameters
    ----------
    k, initial, scale, performance, update, spread, provisional, advantage, margin, margin_power, \
    margin_autocorrelation, newcomer
        As for :class:`Elo` (``N`` is the mean over all the match's teams; each pair's margin is the difference of
        its two scores: race times, points).
    combine : {"mean", "sum"}, default "mean"
        For two teams the two agree.  In a field of ``n`` the pairs are ``n - 1`` views of one performance, not
        ``n - 1`` games, so the sum over-reacts as fields grow: held out (last 30 %) on every shared multiplayer
        history the mean predicts better, e.g. pair log loss 0.637 against 1.138 on ``nascar2002`` and 0.562
        against 0.666 on ``f1_races``, and the Elo-MMR paper's pair inversion on ``codeforces_early`` is 0.723
        against 0.653 (``benchmarks/massive.py``).  Leagues rated with the former default need ``combine="sum"``.
    """

    def __init__(
        self, *, k: float = 32.0, initial: float = 1500.0, scale: float = 400.0 / math.log(10.0),
        performance: str = "logistic", update: str = "gradient", combine: str = "mean", spread: float = 1.0,
        provisional: float = 0.0, advantage: float | ByContext = 0.0, margin: str = "power", margin_power: float = 0.0,
        margin_autocorrelation: float | None = None, newcomer: float = 0.0,
    ) -> None:
        super().__init__(k=k, initial=initial, scale=scale, performance=performance, update=update, combine=combine,
                         spread=spread, provisional=provisional, advantage=advantage, margin=margin,
                         margin_power=margin_power, margin_autocorrelation=margin_autocorrelation, newcomer=newcomer)
