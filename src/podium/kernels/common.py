"""What every model's compiled kernels share: the population's state arrays and a match's team sums.

The kernels layer sits between the ordering engine and the models: :mod:`podium.kernels.elo` (the Elo family,
Plackett-Luce included), :mod:`~podium.kernels.thurstone`, :mod:`~podium.kernels.trueskill` (with
:mod:`~podium.kernels.ep`), :mod:`~podium.kernels.glicko` and :mod:`~podium.kernels.through_time` (with
:mod:`~podium.kernels.levels`).  A model class hands its kernel to the engine through ``Model._replay``
(``docs/design.md``, "The kernels layer"); no kernel imports a model or the engine.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from ..data.matches import Matches
from ..ordering.densities import LOGISTIC, logcdf
from ..ordering.numerics import jit

__all__ = ["State", "History", "most_teams", "most_players", "match_slots", "played", "team_sums", "team_strengths",
           "team_offsets", "signed_scores", "all_scored",
           "provisional_factor", "match_spread", "logistic_logs", "logistic_pairs", "state_rows"]


@jit
def most_teams(match_start: NDArray[np.int64]) -> int:
    """The largest number of teams in one match (at least 2): the size of a replay's scratch arrays."""
    width = 2
    for m in range(len(match_start) - 1):
        width = max(width, match_start[m + 1] - match_start[m])
    return width


@jit
def most_players(match_start: NDArray[np.int64], team_start: NDArray[np.int64]) -> int:
    """The largest number of player slots in one match (at least 1): the size of per-player scratch arrays."""
    players = 1
    for m in range(len(match_start) - 1):
        players = max(players, team_start[match_start[m + 1]] - team_start[match_start[m]])
    return players


@jit
def match_slots(match_start: NDArray[np.int64], team_start: NDArray[np.int64], m: int) -> tuple[int, int, int, int]:
    """Match ``m``'s first team ``t0``, its number of teams ``n`` and its player slots ``p0 .. p1``."""
    t0 = match_start[m]
    n = match_start[m + 1] - t0
    return t0, n, team_start[t0], team_start[t0 + n]


@jit
def played(r: int, now: float, games: NDArray[np.int64], last_time: NDArray[np.float64]) -> None:
    """The player of state row ``r`` has played a match at ``now``: one game more, and ``now`` its last time
    (unless NaN)."""
    # The caller writes the history: with mu, sigma and the history's two arrays passed too, this was not
    # inlined, and a TrueSkill duel replay took 80% longer.
    games[r] += 1
    if now == now:
        last_time[r] = now


@jit
def team_sums(team_start: NDArray[np.int64], t: int, row: NDArray[np.int64], weight: NDArray[np.float64],
              mu: NDArray[np.float64], initial: float) -> tuple[float, float]:
    """Team ``t``'s strength, the partial-play weighted sum ``sum_i w_i (mu_i - initial)`` of its members, and
    ``sum_i w_i^2`` (what its performance's variance grows with), in one pass.

    Measured from a new player's rating, so that a team of newcomers has strength 0 whatever its size: with
    the plain sum, a 4-player team of 1500s stands 1500 points above a 3-player one before anyone has played.
    """
    acc = 0.0
    square = 0.0
    for p in range(team_start[t], team_start[t + 1]):
        w = weight[p]
        acc += w * (mu[row[p]] - initial)
        square += w * w
    return acc, square


@jit
def provisional_factor(provisional: float, games: int) -> float:
    """How much more a player who has played ``games`` matches moves than an established one:
    ``1 + provisional / (games + 1)`` (1 without ``provisional``).

    A constant step must choose between settling newcomers quickly and not chasing noise once ratings are
    known (chess federations give a new player a larger K for its first games for the same reason); a step
    falling like ``1 / (games + 1)`` towards ``k`` is the shape of a Bayesian learner's gain as its
    uncertainty shrinks.  On simulated 8 v 8 with parties, fitting ``k`` and ``spread`` alone gave ``k = 43`` and a
    held-out calibration error of 0.031; fitting ``provisional`` with them, ``k = 12``, ``provisional = 7.4`` and 0.024
    (``podium.fit`` at its default budget; ``benchmarks/teams.py``).
    """
    return 1.0 if provisional == 0.0 else 1.0 + provisional / (games + 1.0)


@jit
def match_spread(spread: float, mean_square_weight: float) -> float:
    """The factor ``c = sqrt(1 + spread * (N - 1))`` by which a team game's performance differences spread.

    ``N`` is the match's mean over teams of ``sum_i w_i^2``: a team performs the weighted sum of its members'
    performances, so with ``spread = 1`` the noise of a difference of two ``n``-player teams is ``sqrt(n)``
    times a duel's (TrueSkill's ``n beta^2``, exact for Gaussian performances); ``spread = 0`` keeps one
    duel's noise for any team size (the plain Elo of the multiplayer-Elo note).  ``c = 1`` for one-player
    teams.  Clamped at ``1e-12`` so that a spread that would shrink the noise to nothing stays finite.
    """
    if spread == 1.0:  # the sum of performances, without the rounding of 1 + (N - 1)
        return math.sqrt(mean_square_weight)
    return math.sqrt(max(1.0 + spread * (mean_square_weight - 1.0), 1e-12))


@jit
def logistic_logs(z: float) -> tuple[float, float]:
    """``(log sigma(z), log sigma(-z))``, ``sigma(z) = 1 / (1 + e^-z)``: the log-probabilities of both orders of a
    pair whose difference is logistic, ``z`` its location over its scale."""
    return logcdf(LOGISTIC, 0.0, z), logcdf(LOGISTIC, 0.0, -z)


@jit
def logistic_pairs(z: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """:func:`logistic_logs` of each pair's ``z[k]``, as two arrays."""
    ahead = np.empty(len(z))
    behind = np.empty(len(z))
    for k in range(len(z)):
        ahead[k], behind[k] = logistic_logs(z[k])
    return ahead, behind


@jit
def _is_identity(index: NDArray[np.int64]) -> bool:
    # (compiled: numpy's comparison with an arange costs a single-match rate a quarter of its time)
    for i in range(len(index)):
        if index[i] != i:
            return False
    return True


def state_rows(matches: Matches, slot_index: NDArray[np.int64]) -> NDArray[np.int64]:
    """The state row of each player slot of ``matches``; no gather when ``slot_index`` is the identity."""
    if len(slot_index) == len(matches.players) and _is_identity(slot_index):
        return matches.player
    return slot_index[matches.player]


class State:
    """A population's ratings in arrays (rows = players).

    ``extra`` holds what a model keeps beyond a rating, one row per player (:attr:`Model._extra_prior` gives a
    new player's row; Glicko-2's volatility and open rating period); it has no columns for the other models.
    """

    __slots__ = ("mu", "sigma", "games", "last_time", "extra")  # last_time: for TrueSkill's drift (issue 3)

    def __init__(self, mu: NDArray[np.float64], sigma: NDArray[np.float64],
                 extra: NDArray[np.float64] | None = None) -> None:
        self.mu = mu
        self.sigma = sigma
        self.games = np.zeros(len(mu), dtype=np.int64)
        self.last_time = np.full(len(mu), np.nan)
        self.extra = np.zeros((len(mu), 0)) if extra is None else extra


class History:
    """Where a replay writes each player slot's rating after its match."""

    __slots__ = ("mu", "sigma")

    def __init__(self, n_slots: int) -> None:
        self.mu = np.empty(n_slots)
        self.sigma = np.empty(n_slots)


@jit
def _team_strengths(team_start: NDArray[np.int64], row: NDArray[np.int64], weight: NDArray[np.float64],
                    mu: NDArray[np.float64], initial: float) -> NDArray[np.float64]:
    out = np.empty(len(team_start) - 1)
    for t in range(len(out)):
        out[t] = team_sums(team_start, t, row, weight, mu, initial)[0]
    return out


def team_offsets(matches: Matches, advantage: float,
                 per_match: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """Each team's advantage in rating units, ``advantage * matches.advantage[t]`` (``docs/design.md``, "What a
    result says"): what a model adds to the team's strength.  ``per_match[m]``, when given, is each match's own
    value in place of ``advantage`` (one per context: :class:`podium.ByContext`).  Empty (the kernels' "none",
    which keeps their plain arithmetic to the bit) when the history records no advantage or every value is 0."""
    if matches.advantage is None:
        return np.empty(0)
    if per_match is not None:
        if not per_match.any():
            return np.empty(0)
        return np.repeat(per_match, np.diff(matches.match_start)) * matches.advantage
    if advantage == 0.0:
        return np.empty(0)
    return advantage * matches.advantage


def signed_scores(matches: Matches) -> NDArray[np.float64]:
    """Each team's score, negated in the matches where lower is better (so that a higher signed score is always
    better; NaN: none): what the kernels that read margins take.  Empty when the history records no scores."""
    if matches.score is None:
        return np.empty(0)
    if matches.higher_is_better is None:
        return matches.score
    sign = np.where(matches.higher_is_better, 1.0, -1.0)
    return matches.score * np.repeat(sign, np.diff(matches.match_start))


@jit
def all_scored(score: NDArray[np.float64], t0: int, n: int) -> bool:
    """Whether every team ``t0 .. t0 + n`` of a match has a score (``score`` NaN: none): when the models that read
    scores read them in place of the order."""
    for t in range(t0, t0 + n):
        if score[t] != score[t]:
            return False
    return True


def team_strengths(matches: Matches, mu: NDArray[np.float64], initial: float = 0.0,
                   offset: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """Partial-play weighted sums of ``mu - initial`` over each team of ``matches`` (player indices into ``mu``),
    plus each team's advantage ``offset[t]`` (:func:`team_offsets`; None or empty: none)."""
    sums = _team_strengths(matches.team_start, matches.player, matches.weight, mu, initial)
    return sums + offset if offset is not None and len(offset) else sums
