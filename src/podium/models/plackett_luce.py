"""Plackett-Luce: the exponential multiplayer Elo (multiplayer-Elo note, section 3.2).

The model class; its closed forms (non-finishers censored exactly, draws as the mean over the tied group's
orders) are in :mod:`podium.luce`, and its replay is the Elo family's (:mod:`podium.kernels.elo`).
"""

from __future__ import annotations

import math

from ..kernels.elo import PLACKETT_LUCE
from .base import LikelihoodModel

__all__ = ["PlackettLuce"]


class PlackettLuce(LikelihoodModel):
    """The exponential multiplayer Elo: a gradient step on the Plackett-Luce log-likelihood.

    ``order="elimination"`` is the note's version (section 3.2): listing teams worst first,
    ``log P = sum_i (-s_i) - sum_i log sum_{j >= i} exp(-s_j)``.  ``order="victory"`` reverses the scale:
    the winner is chosen first, ``log P = sum_i s_i - sum_i log sum_{j >= i} exp(s_j)`` listing the winner
    first.  For two teams both equal logistic Elo.  Non-finishers are censored exactly and a draw is the
    average over the tied group's orders of the log-likelihood (see :mod:`podium.luce`).

    Parameters
    ----------
    k : float, default 32
        Step size in rating points; the update of member ``i`` is ``k * w_i * dL/ds``.
    initial : float, default 1500
    scale : float, default 400 / ln 10
        Rating points per natural unit.
    spread : float, default 1
        Strengths ``sum w (r - initial) / scale`` are divided by ``sqrt(1 + spread (N - 1))``, ``N`` the mean
        over the match's teams of ``sum w^2``: a team performs the sum of its members' performances (see
        :class:`podium.Elo`).  No effect on free-for-alls of single players.
    provisional : float, default 0
        Newcomers' larger steps, ``k (1 + provisional / (n + 1))`` after ``n`` matches (see :class:`podium.Elo`).
    order : {"victory", "elimination"}, default "victory"
        The default is the victory order: a race is read from the front, as its results are usually reported,
        and non-finishers then cost nothing to censor.  The note's own version is ``"elimination"``; the two
        agree for two teams and differ in how much a free-for-all's top and bottom places weigh.
    """

    _kind = PLACKETT_LUCE

    def __init__(
        self, *, k: float = 32.0, initial: float = 1500.0, scale: float = 400.0 / math.log(10.0),
        order: str = "victory", spread: float = 1.0, provisional: float = 0.0,
    ) -> None:
        self.order = order
        super().__init__(k=k, initial=initial, scale=scale, spread=spread, provisional=provisional)
        self._int_params = (self._choice("order", order, ("victory", "elimination")), 0, 0)

    def _win_spec(self) -> tuple[str, str]:
        return "gumbel", self.order
