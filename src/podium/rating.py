"""The value a model gives a player: a mean and an uncertainty."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

__all__ = ["Rating"]


@dataclass(frozen=True, slots=True)
class Rating:
    """A player's rating: ``mu`` (location) and ``sigma`` (uncertainty, 0 for the Elo family).

    Parameters
    ----------
    mu : float
        The rating in the model's units (rating points for the Elo family).
    sigma : float, default 0
        Standard deviation of the belief about ``mu``; Elo-family models keep no uncertainty.

    Examples
    --------
    >>> Rating(25.0, 25 / 3).conservative(3)
    0.0
    """

    mu: float
    sigma: float = 0.0

    def __post_init__(self) -> None:
        for name in ("mu", "sigma"):
            value = getattr(self, name)
            if type(value) is float and math.isfinite(value):  # the common case, without the ABC check
                continue
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(f"Rating.{name} must be a real number. Got {value!r} instead.")
            if not math.isfinite(value):
                raise ValueError(f"Rating.{name} must be finite. Got {value!r} instead.")
            object.__setattr__(self, name, float(value))
        if self.sigma < 0:
            raise ValueError(f"Rating.sigma must be >= 0. Got {self.sigma!r} instead.")

    def conservative(self, k: float = 3.0) -> float:
        """The conservative skill estimate ``mu - k * sigma``.

        With ``k = 3`` this is the TrueSkill leaderboard value (Herbrich, Minka & Graepel 2007,
        section 5): the player's skill exceeds it with probability about 99.9 %.
        """
        return self.mu - k * self.sigma
