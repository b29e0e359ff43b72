"""The value a model gives a player (a mean and an uncertainty), and a leaderboard's rows."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["Rating", "LeaderboardRow", "leaderboard_rows", "ratings_of"]


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


_new = object.__new__
_set_mu = Rating.__dict__["mu"].__set__  # the slots' own setters: past the frozen __setattr__ and __post_init__
_set_sigma = Rating.__dict__["sigma"].__set__


def _made(mu: float, sigma: float) -> Rating:
    rating = _new(Rating)
    _set_mu(rating, mu)
    _set_sigma(rating, sigma)
    return rating


def ratings_of(players: Sequence[str], mu: list[float], sigma: list[float]) -> dict[str, Rating]:
    """``{player: Rating(mu, sigma)}`` from a kernel's results (``tolist`` floats, one per player): the lists
    checked at once (floats, finite, ``sigma >= 0``) instead of rating by rating, which costs a single-match call
    (``Model.rate``) half its time at twenty players; anything else goes through :class:`Rating`, whose error
    names the value."""
    if not len(players) == len(mu) == len(sigma):
        raise ValueError(f"'mu' and 'sigma' must hold one value per player ({len(players)}). Got {len(mu)} and "
                         f"{len(sigma)}.")
    if (players and set(map(type, mu)) | set(map(type, sigma)) == {float} and math.isfinite(sum(mu) + sum(sigma))
            and min(sigma) >= 0.0):
        return dict(zip(players, map(_made, mu, sigma)))
    return dict(zip(players, map(Rating, mu, sigma)))


@dataclass(frozen=True)
class LeaderboardRow:
    """One line of a leaderboard.

    ``connected`` is whether the player is in the largest component of the recorded matches
    (:meth:`League.components`): only such players' ratings are comparable with the leaders'.
    """

    rank: int
    player: str
    mu: float
    sigma: float
    score: float
    games: int
    connected: bool = True


def leaderboard_rows(names: Sequence[str] | Callable[[NDArray[np.int64]], list[str]], mu: NDArray[np.float64],
                     sigma: NDArray[np.float64], games: NDArray[np.int64], k: float, top: int | None, min_games: int,
                     connected: NDArray[np.bool_] | None = None, connected_only: bool = False) -> list[LeaderboardRow]:
    """Players sorted by ``mu - k sigma`` (ties by name), those with fewer than ``min_games`` left out (and,
    with ``connected_only``, those not ``connected``), the first ``top`` kept: the rows of
    :meth:`League.leaderboard` and of a smoothed history's :meth:`podium.Smoothed.leaderboard`.  ``connected``
    (per player; default everyone) fills :attr:`LeaderboardRow.connected`.

    ``names`` is the players' names, or a function giving the names of an array of players: then only the players
    who can make the table are named (those scoring at least the ``top``-th best, ties included), so that the top
    of ten million players needs a few names, not all (a League's compiled name index).
    """
    if top is not None and (isinstance(top, bool) or not isinstance(top, numbers.Integral) or top < 0):
        raise ValueError(f"'top' must be an int >= 0 or None. Got {top!r:.80}.")
    score = mu - k * sigma
    linked = np.ones(len(mu), dtype=np.bool_) if connected is None else connected
    keep = np.flatnonzero((games >= min_games) & (linked if connected_only else True))
    if top is not None and 0 <= top < len(keep):
        cut = np.partition(-score[keep], top)[top] if top else -np.inf
        if not np.isnan(cut):
            keep = keep[~(-score[keep] > cut)]
    kept = names(keep) if callable(names) else [names[r] for r in keep.tolist()]
    by_rank = np.lexsort((np.array(kept, dtype=object) if len(kept) else keep, -score[keep]))
    if top is not None:
        by_rank = by_rank[:top]
    return [LeaderboardRow(i + 1, kept[j], float(mu[keep[j]]), float(sigma[keep[j]]), float(score[keep[j]]),
                           int(games[keep[j]]), bool(linked[keep[j]])) for i, j in enumerate(by_rank.tolist())]
