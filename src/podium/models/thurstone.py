"""The Gaussian (Thurstonian) multiplayer Elo (multiplayer-Elo note, section 3.3).

Player ``i`` with rating ``r_i`` (rating points) performs ``X_i ~ N((r_i - initial) / scale, 1)`` in natural
units; a team performs the partial-play weighted sum of its members' performances,
``N(sum w (r - initial) / scale, sum w^2)`` (with ``spread``: variance ``1 + spread (sum w^2 - 1)``).
The outcome's log-likelihood has no closed form: :func:`podium.ordering.log_outcome` integrates it density
after density in log space and gives its gradient by a backward sweep.  A match moves member ``i`` of team
``t`` by ``k(r_i) * w_i * d log P / d m_t`` rating points -- the Elo family's convention, so that ``k`` is
in rating points per unit of natural gradient.

Options from the note's reference implementation for race communities: ``k`` may be a list of
``(rating, k)`` knots, interpolated linearly between them (constant beyond the ends), so that new or low
players move faster; ``floor`` keeps every rating at or above a minimum.  Other noise densities
(``"gumbel"``, ``"logistic"``, ``"skew_normal"`` with ``shape``) replace the Gaussian; a team then keeps the
same density, located at the weighted sum with the scale ``sqrt(sum w^2)`` (exact for the Gaussian only).

Draws are the average over the orders of the drawn group of the log-likelihood (as Plackett-Luce; for two
teams half a win and half a loss); non-finishers are censored below every finisher.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..data.matches import Matches
from ..data.rating import Rating
from ..kernels.common import History, State, signed_scores, state_rows
from ..kernels.thurstone import replay_thurstone, team_performances
from ..ordering import DENSITIES, density_code
from .base import Model, fit_start, typical_margin
from .context import ByContext

__all__ = ["Thurstone"]


class Thurstone(Model):
    """The Gaussian multiplayer Elo: a gradient step on the exact ordering likelihood.

    Parameters
    ----------
    k : float or sequence of (rating, k) pairs, default 32
        Rating points per unit of natural-units gradient; knots give a rating-dependent rate, linear
        between them and constant beyond.
    initial : float, default 1500
        A new player's rating.
    scale : float, default 400 / ln 10
        Rating points per natural unit (the performance noise has unit scale): ``Thurstone()`` uses chess
        Elo's points.
    density : {"gaussian", "gumbel", "logistic", "skew_normal"}
        The performance noise; ``shape`` is the skew-normal's ``alpha``.
    floor : float, optional
        No rating falls below it.
    precision : float, default 1
        Grid refinement of the likelihood (error about ``1e-9 * precision ** -8`` in ``log P``).
    spread : float, default 1
        A team's performance variance is ``1 + spread (sum w^2 - 1)``: 1 is the sum of its members'
        performances, 0 a team as noisy as one player.  Ratings are measured from ``initial``, so teams of
        newcomers are even whatever their sizes.
    provisional : float, default 0
        Newcomers' larger steps, ``k (1 + provisional / (n + 1))`` after ``n`` matches in a
        :class:`podium.League` (see :class:`podium.Elo`).
    advantage : float, default 0
        Rating points added to a team's strength per unit of its recorded advantage (see :class:`podium.Elo`).
    margin_scale : float or None, default None
        Natural units of performance per point of score: with it, the scores of a match whose teams all scored are
        observations, each team's ``margin_scale * y = loc + c + N(0, margin_noise^2 / 2)`` with a shift ``c``
        common to the match (a two-team difference ``margin_scale * dy ~ N(dloc, margin_noise^2)``), whose
        log-likelihood's gradient (:func:`podium.kernels.thurstone.score_gradient`) replaces the order's in the step (``docs/design.md``, "What a result says").  None: the order alone.  Fitted with
        ``margin_noise`` by :func:`podium.fit` on a history with scores.
    newcomer : float, default 0
        What a new player adds to its team's strength, in rating points (see :class:`podium.Elo`).
    margin_noise : float, default 2
        That observation's standard deviation, in natural units.  Reading margins, predictions add
        ``margin_noise^2 / 2`` to each team's performance variance (an outcome is the sign of the observed margin).

    A match's ``weight`` (its importance) multiplies its step.

    Notes
    -----
    Multiplayer-Elo note, section 3.3: ``X_i ~ N(r_i / scale, 1)``, update ``k * d log P / d r``.  For two
    players this is the Gaussian Elo with the gradient update.
    """

    # Hyperparameters, set by _init_params in __init__ (declared for the type checker).
    k: float | Sequence[tuple[float, float]]
    initial: float
    scale: float
    spread: float
    provisional: float
    density: str
    shape: float
    floor: float | None
    precision: float

    advantage: float | ByContext
    margin_scale: float | None
    margin_noise: float
    newcomer: float

    _fit_space = {"k": "positive", "spread": "non_negative", "provisional": "non_negative", "scale": "positive",
                  "advantage": "real", "margin_scale": "positive", "margin_noise": "positive", "newcomer": "real"}
    _fit_default = ("k", "spread", "provisional", "advantage", "margin_scale", "margin_noise", "newcomer")

    def _fit_unit(self, name: str) -> float:
        return float(self.scale) if name in ("advantage", "newcomer") else 1.0

    def _fit_prepare(self, matches: Matches, names: Sequence[str]) -> Any:
        """Margins start from one score point worth one unit of performance over the history's mean absolute score
        difference of two-team matches."""
        if "margin_scale" not in names or self.margin_scale is not None or matches.score is None:
            return self
        return type(self)(**{**self.get_params(), "margin_scale": 1.0 / typical_margin(matches)})

    def _fit_start(self, name: str) -> float:
        if name == "k" and not isinstance(self.k, (int, float)):
            raise ValueError(f"podium.fit chooses one constant 'k' for Thurstone; this model has knots {self.k!r}.")
        return fit_start(self, name)

    def __init__(
        self, *, k: float | Sequence[tuple[float, float]] = 32.0, initial: float = 1500.0,
        scale: float = 400.0 / math.log(10.0), density: str = "gaussian", shape: float = 0.0,
        floor: float | None = None, precision: float = 1.0, spread: float = 1.0, provisional: float = 0.0,
        advantage: float | ByContext = 0.0, margin_scale: float | None = None, margin_noise: float = 2.0,
        newcomer: float = 0.0,
    ) -> None:
        self._kx, self._ky = self._knots(k)  # k first: a constant or knots, checked by _knots
        self._init_params(k=(k, None), initial=(initial, "finite"), scale=(scale, "positive"),
                          spread=(spread, "non_negative"), provisional=(provisional, "non_negative"),
                          density=(density, DENSITIES), shape=(shape, "finite"), floor=(floor, "finite or None"),
                          precision=(precision, "positive"), advantage=(advantage, "advantage"),
                          margin_scale=(margin_scale, "positive or None"), margin_noise=(margin_noise, "positive"),
                          newcomer=(newcomer, "finite"))
        self._density_kind = density_code(density, shape)
        self._prior = Rating(float(initial), 0.0)

    @property
    def prior(self) -> Rating:
        return self._prior

    def _knots(self, k: Any) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        if isinstance(k, (int, float)) and not isinstance(k, bool):
            return np.array([0.0]), np.array([self._positive("k", k)])
        try:
            pairs = [(float(a), float(b)) for a, b in k]
        except (TypeError, ValueError):
            raise ValueError(
                f"The 'k' parameter of Thurstone must be a positive float or a list of (rating, k) pairs. "
                f"Got {k!r} instead.") from None
        kx = np.array([a for a, _ in pairs])
        ky = np.array([b for _, b in pairs])
        if (len(pairs) == 0 or not np.all(np.isfinite(kx)) or not np.all(np.isfinite(ky)) or np.any(ky <= 0)
                or np.any(np.diff(kx) <= 0)):
            raise ValueError(
                "The 'k' parameter of Thurstone must be a positive float or a non-empty list of (rating, k) "
                f"pairs with increasing ratings and positive k. Got {k!r} instead.")
        return kx, ky

    def get_params(self) -> dict[str, Any]:
        params = super().get_params()
        if not isinstance(params["k"], (int, float)):
            params["k"] = tuple(tuple(p) for p in params["k"])
        return params

    def _replay(self, matches: Matches, slot_index: NDArray[np.int64], state: State,
                history: History | None, loglik: NDArray[np.float64] | None = None) -> None:
        rows = state_rows(matches, slot_index)
        hist = history.mu if history is not None else np.empty(len(matches.player))
        ll = loglik if loglik is not None else np.empty(len(matches))
        floor = -np.inf if self.floor is None else float(self.floor)
        replay_thurstone(
            self._density_kind, float(self.shape), self._kx, self._ky, float(self.scale),
            self._origin(float(self.initial)), float(self.spread), float(self.provisional), floor,
            float(self.precision),
            matches.match_start, matches.team_start, matches.team_rank, rows, matches.weight,
            state.mu, state.games, hist, ll, self._offsets(matches),
            matches.match_weight if matches.match_weight is not None else np.empty(0),
            signed_scores(matches) if self.margin_scale is not None else np.empty(0),
            0.0 if self.margin_scale is None else float(self.margin_scale), float(self.margin_noise) ** 2,
        )
        if history is not None:
            history.sigma[:] = 0.0

    def _team_noise(self, packed: Matches, mu: NDArray[np.float64], sigma: NDArray[np.float64]
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        n = len(packed.team_rank)
        loc, sc = np.empty(n), np.empty(n)
        team_performances(packed.team_start, 0, n, packed.player, packed.weight, mu, 1.0 / self.scale,
                           self._origin(float(self.initial)), float(self.spread), loc, sc)
        offset = self._offsets(packed)
        if self.margin_scale is not None:  # as the replay's: an outcome is the sign of the observed margin
            sc = np.sqrt(sc * sc + 0.5 * float(self.margin_noise) ** 2)
        return (loc + offset / float(self.scale) if len(offset) else loc), sc

    def _predictive(self, packed: Matches, mu: NDArray[np.float64], sigma: NDArray[np.float64]
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64], str, float]:
        loc, sc = self._team_noise(packed, mu, sigma)
        return loc, sc, str(self.density), float(self.shape)

    def _log_win(self, packed: Matches, mu: NDArray[np.float64], sigma: NDArray[np.float64]) -> NDArray[np.float64]:
        from ..ordering import log_win_probabilities

        loc, sc = self._team_noise(packed, mu, sigma)
        return log_win_probabilities(loc, density=self.density, scale=sc, shape=float(self.shape))
