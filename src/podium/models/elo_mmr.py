"""Elo-MMR (Ebtekar & Liu, WWW 2021): the model class.

The round's update is described on :class:`EloMMR`; its numerics and the replay are :mod:`podium.kernels.elo_mmr`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..data.matches import Matches
from ..data.rating import Rating
from ..kernels.common import History, State, state_rows
from ..kernels.elo_mmr import TANH_MULTIPLIER, extra_prior, match_log_likelihoods, pair_predictions, replay_elo_mmr
from ..ordering import CHAIN_SCALE_SPAN, log_win_probabilities
from .base import Model
from .context import ByContext

__all__ = ["EloMMR"]

_VARIANTS = ("mmr", "mmr-fast")
_SIGMA_MIN = 1e-30  # a rating's Gaussian factor has precision 1 / sigma^2, and the chain its scale beside the others'
_SIGMA_MAX = 1e30  # performance scales hypot(sigma, sigma_perf) then stay well within the logistic chain's span
_ALL = 2 ** 62  # "every term": the exact variant's subsample


class EloMMR(Model):
    r"""Elo-MMR (Ebtekar & Liu 2021): Bayesian ratings for massive free-for-alls, robust to one bad round.

    Each round estimates every competitor's performance from the round's standings alone (the paper's performance
    estimation), then takes the new rating as a robust (logistic) average of the player's past performances, older
    ones weighing less (its belief update), after a pseudodiffusion that lets the skill move between rounds (its skill
    evolution).  The numbers are those of the authors' implementation as ``elo-mmr-py`` 2.0.0 runs it (its ``mmr`` and
    ``mmr-fast`` systems; tests compare every player of the codeforces_early history to 1e-6).  With ``w =
    weight_limit`` (times
    ``noob_delay[k]`` in a player's ``k``-th round):

    .. math::

        \sigma_{perf}^2 = (1 + 1/w)\,\sigma_L^2 + d/w, \qquad
        \sigma_{drift}^2 = w\,\sigma_L^2 + d\,\Delta t / 86400

    (``sigma_L = sig_limit``, ``d = drift_per_day``, ``Delta t`` seconds since the player's last round).  The
    diffusion widens ``sigma`` to ``sigma' = hypot(sigma, sigma_drift)`` and moves a fraction ``1 - rho^kappa`` of
    the history's weight into a Gaussian factor at the current ``mu`` (``rho = (sigma / sigma')^2``, ``kappa =
    transfer_speed``).  Each competitor ``j`` enters the round as the logistic term of standard deviation
    ``s_j = hypot(sigma'_j, sigma_perf)``; competitor ``i``'s performance ``p_i`` is the zero of

    .. math::

        \sum_{j \succ i} (v_j(x) - w_j) + \sum_{j \prec i} (v_j(x) + w_j) + \sum_{j \sim i} 2 v_j(x) = 0,
        \qquad v_j(x) = -w_j \tanh\!\big(\tfrac{w_j}{2} (x - \mu_j)\big), \quad w_j = \frac{\pi}{\sqrt 3\, s_j}

    (``j ~ i``: tied, ``i`` itself included; ``split_ties`` counts a tie as half a win and half a loss, ``v_j``
    once).  The new ``mu`` is the zero of ``(x - m_0) / s_0^2 + sum_k w_k tanh(w_k (x - p_k) / 2)`` over the
    Gaussian factor ``N(m_0, s_0^2)`` and the kept performances (each factor's ``w_k`` shrunk by every diffusion
    since), and ``1/sigma^2 = 1/sigma'^2 + 1/sigma_perf^2``.

    Parameters
    ----------
    mu, sigma : float, default 1500, 350
        A new player's rating and its uncertainty (the reference's ``mu_noob``, ``sig_noob``).
    weight_limit : float, default 0.2
        The weight ``w`` of a round: how much of a rating one round can move, in the limit of a long history.
    sig_limit : float, default 80
        ``sigma_L``: the uncertainty a player who plays often tends to.
    drift_per_day : float, default 0
        Variance added per day between a player's rounds (and, divided by ``w``, to ``sigma_perf^2``).
        :attr:`podium.Match.time` is in **seconds** for this model (ISO dates are converted); a match without a
        time adds none, as a player's first.
    split_ties : bool, default False
        Count a tie as half a win and half a loss instead of the paper's tie term.
    noob_delay : sequence of float, default ()
        Multipliers of ``w`` in a player's first rounds (``noob_delay[k]`` in its ``k``-th; 1 after), kept as a tuple.
    transfer_speed : float, default 1
        ``kappa`` of the pseudo-diffusion (the reference's logistic variant ``Logistic(1)``); ``math.inf`` collapses
        the history into one Gaussian at every round, ``0`` only shrinks its weights.
    variant : {"mmr", "mmr-fast"}, default "mmr"
        The reference's two systems.  ``"mmr"``: every competitor enters every equation (competitors whose ``mu`` and
        ``s`` round to the same multiple of 1e-5 enter as one term at their mean, as the reference's).
        ``"mmr-fast"``: the buckets are 2 rating points wide, each competitor's equation takes only the terms nearest
        its ``mu`` (by bucket; 50 each side of it, 101 in all, as the reference's ``subsample_size = 100``), and a
        player keeps at most 100 past performances.
    subsample_size, subsample_bucket : int, float, optional
        The variant's ``subsample_size`` (all terms, 100) and bucket width (1e-5, 2), if given otherwise.
    history : int, optional
        The most past performances kept per player; beyond it the oldest is folded into the Gaussian factor,
        keeping its weight (the reference's rule, which ``mmr-fast`` applies at 100).  Default: 100 for both
        variants.  ``mmr`` keeps all in the reference, but an old performance's weight shrinks at every round: on
        codeforces_early (players of up to 89 rounds) keeping 40 moves final ratings by at most 2e-4 and keeping 20 by
        0.15 (measured; about 1e-12 at 100, extrapolated).  Each kept performance costs three numbers of
        :attr:`podium.PlayerState.extra`.
    advantage : float, default 0
        Rating points added to a team's term per unit of its recorded advantage (:attr:`podium.Match.advantage`),
        taken off the performance its members observe; fitted by :func:`podium.fit` where a history records
        advantages.  A match's ``weight`` divides the variance of the performances it observes; EloMMR reads no
        margins (its rounds are ranks).
    newcomer : float, default 0
        What a new player adds to its team's term (see :class:`podium.Elo`): the term is ``mu + sum_i w_i (mu_i -
        mu + newcomer)``, less ``newcomer`` (the same for every team).

    Notes
    -----
    Teams (the reference rates individuals only): a team is one competitor whose term is ``initial + sum_i w_i (mu_i
    - initial)`` with variance ``sum_i w_i^2 s_i^2`` (``w_i`` the partial-play weights), so that teams of newcomers are
    even whatever their sizes; its performance ``p`` is shared out as each member's expected performance given the
    team's, ``mu_i + w_i s_i^2 / sum_k w_k^2 s_k^2 (p - m_T)``, which each member then averages into its own history.
    Non-finishers (rank ``None``) are below every finisher and unordered among themselves: a non-finisher's equation
    has every finisher ahead, itself as a tie, and no term for the other non-finishers.  A round in which no team is
    known to be ahead of another (all tied) changes nothing, as in the reference.  Roots are sought in
    ``mu -+ 7500 max(sigma / 350, sig_limit / 80)`` (the reference's ``(-6000, 9000)`` at the defaults).

    Predictions: team performances are independent logistics of mean ``m_T`` and standard deviation
    ``sd_T = sqrt(sum_i w_i^2 (sigma_i^2 + sigma_drift^2 + sigma_perf^2))`` with the defaults' ``w`` and no time
    drift: what the round's terms would be.  A pair of teams is the paper's logistic term,
    ``P(a ahead of b) = 1 / (1 + exp(-pi (m_a - m_b) / (sqrt(3) hypot(sd_a, sd_b))))``, and ``log_likelihood`` the
    pairwise composite one: the sum over pairs of teams of the log-probability of their order (a tie, the mean of
    both orders'; two non-finishers, nothing), divided by ``n - 1`` for ``n > 2`` teams (as :class:`Glicko2`'s), the
    exact ``log P`` for two.  (The exact probability of a whole order of logistics took 91 s for a 411-player round
    in the ordering engine.)  A :class:`podium.League` computes the log-likelihoods only when they are read.

    Examples
    --------
    >>> import podium
    >>> new = podium.EloMMR().rate(podium.Match([["ann"], ["bob"]]), {})
    >>> round(new["ann"].mu, 1), round(new["ann"].sigma, 1)
    (1629.4, 171.2)
    """

    # Hyperparameters, set by _init_params in __init__ (declared for the type checker).
    mu: float
    sigma: float
    weight_limit: float
    sig_limit: float
    drift_per_day: float
    split_ties: bool
    noob_delay: Sequence[float]
    transfer_speed: float
    variant: str
    subsample_size: int | None
    subsample_bucket: float | None
    history: int | None
    advantage: float | ByContext
    newcomer: float

    _sigma_max = _SIGMA_MAX
    _sigma_min = _SIGMA_MIN
    _sigma_max_why = (f"its Gaussian factor's precision 1 / sigma^2 must be finite, and the logistic ordering chain "
                      f"takes scales within {CHAIN_SCALE_SPAN:g} of each other")
    _fit_space = {"weight_limit": "positive", "sig_limit": "positive", "sigma": "positive", "advantage": "real",
                  "newcomer": "real"}
    _fit_default = ("weight_limit", "sig_limit", "advantage", "newcomer")

    def _fit_unit(self, name: str) -> float:
        return float(self.sig_limit) if name in ("advantage", "newcomer") else 1.0

    def __init__(self, *, mu: float = 1500.0, sigma: float = 350.0, weight_limit: float = 0.2, sig_limit: float = 80.0,
                 drift_per_day: float = 0.0, split_ties: bool = False, noob_delay: Sequence[float] = (),
                 transfer_speed: float = 1.0, variant: str = "mmr", subsample_size: int | None = None,
                 subsample_bucket: float | None = None, history: int | None = None, advantage: float | ByContext = 0.0,
                 newcomer: float = 0.0) -> None:
        # The rest are checked below: their own messages, and defaults that hang on variant.
        self._init_params(mu=(mu, "finite"), sigma=(sigma, "positive"), weight_limit=(weight_limit, "positive"),
                          sig_limit=(sig_limit, "positive"), drift_per_day=(drift_per_day, "non_negative"),
                          split_ties=(split_ties, None), noob_delay=(noob_delay, None),
                          transfer_speed=(transfer_speed, None), variant=(variant, None),
                          subsample_size=(subsample_size, None), subsample_bucket=(subsample_bucket, None),
                          history=(history, None), advantage=(advantage, "advantage"),
                          newcomer=(newcomer, "finite"))
        if not _SIGMA_MIN <= sigma <= _SIGMA_MAX:
            raise ValueError(f"The 'sigma' parameter of EloMMR must be from {_SIGMA_MIN:g} to {_SIGMA_MAX:g} ({self._sigma_max_why}). "
                             f"Got {sigma!r} instead.")
        if not isinstance(split_ties, bool):
            raise ValueError(f"The 'split_ties' parameter of EloMMR must be a bool. Got {split_ties!r:.80} instead.")
        self._noob_delay = self._delays(noob_delay)
        if transfer_speed != math.inf:
            self._non_negative("transfer_speed", transfer_speed)
        fast = self._choice("variant", variant, _VARIANTS) == 1
        self._size = (100 if fast else _ALL) if subsample_size is None else self._positive_int("subsample_size",
                                                                                             subsample_size)
        self._width = (2.0 if fast else 1e-5) if subsample_bucket is None else self._positive("subsample_bucket",
                                                                                            subsample_bucket)
        self._history = 100 if history is None else self._positive_int("history", history)
        if self._history > 100_000:
            raise ValueError(f"The 'history' parameter of EloMMR must be at most 100000 (each player keeps three "
                             f"numbers per performance). Got {history!r} instead.")
        scale = max(float(sigma) / 350.0, float(sig_limit) / 80.0)
        self._bounds = (float(mu) - 7500.0 * scale, float(mu) + 7500.0 * scale)
        self._tol = 1e-4 * float(sig_limit)
        self._prior = Rating(float(mu), float(sigma))

    def _delays(self, value: Any) -> NDArray[np.float64]:
        ok = isinstance(value, (tuple, list)) and all(
            not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v) and v > 0 for v in value)
        if not ok:
            raise ValueError(f"The 'noob_delay' parameter of EloMMR must be a sequence of positive floats. "
                             f"Got {value!r:.80} instead.")
        self.noob_delay = tuple(float(v) for v in value)
        return np.array(self.noob_delay, dtype=np.float64)

    @property
    def prior(self) -> Rating:
        return self._prior

    @property
    def _extra_prior(self) -> NDArray[np.float64]:
        return extra_prior(self._history)

    def _fit_informed(self, name: str, matches: Matches) -> bool:
        if name == "drift_per_day":
            return bool(np.isfinite(matches.time).any())
        return super()._fit_informed(name, matches)  # (an advantage only where one is recorded, ...)

    # -- the engine ----------------------------------------------------------------------------------
    def _replay(self, matches: Matches, slot_index: NDArray[np.int64], state: State,
                history: History | None, loglik: NDArray[np.float64] | None = None) -> None:
        nothing = np.empty(0)
        rows = state_rows(matches, slot_index)
        pre_mu, pre_sigma = (np.empty(len(rows)), np.empty(len(rows))) if loglik is not None else (nothing, nothing)
        time = matches.time * 86400.0 if matches.time_is_date else matches.time
        lo, hi = self._bounds
        replay_elo_mmr(
            matches.match_start, matches.team_start, matches.team_rank, rows, matches.weight, time,
            state.mu, state.sigma, state.games, state.last_time, state.extra,
            history.mu if history is not None else nothing, history.sigma if history is not None else nothing,
            pre_mu, pre_sigma, self._origin(float(self.mu)), float(self.weight_limit), float(self.sig_limit),
            float(self.drift_per_day), self._noob_delay, float(self.transfer_speed), self.split_ties, self._size,
            self._width, self._history, lo, hi, self._tol, self._offsets(matches),
            matches.match_weight if matches.match_weight is not None else nothing,
        )
        if loglik is not None:
            self._log_likelihoods(matches, pre_mu, pre_sigma, loglik)

    def _noise(self) -> float:
        """``sigma_drift^2 + sigma_perf^2`` of a round at the default weight, without time drift."""
        w, sl2 = float(self.weight_limit), float(self.sig_limit) ** 2
        return (w + 1.0 + 1.0 / w) * sl2 + float(self.drift_per_day) / w

    def _log_likelihoods(self, matches: Matches, mu: NDArray[np.float64], sigma: NDArray[np.float64],
                         out: NDArray[np.float64]) -> None:
        """Each match's ``log P(order)`` from its slots' ratings before it (``mu``, ``sigma`` per slot)."""
        loc, sd = self._team_predictive(matches, mu, sigma)
        match_log_likelihoods(matches.match_start, matches.team_rank, loc, sd, out)

    def _deferred_log_likelihoods(self, matches: Matches, slot_index: NDArray[np.int64], state: State,
                                  history: History) -> Callable[[], NDArray[np.float64]]:
        """Exact ordering probabilities of fields of hundreds cost far more than the round's update: computed when
        read, from the ratings of the batch's players now and the replay's history."""
        rows = state_rows(matches, slot_index).copy()
        start_mu, start_sigma = state.mu[rows], state.sigma[rows]

        def compute() -> NDArray[np.float64]:
            # each slot's rating before its match: its player's after the previous slot, or from before the batch
            order = np.argsort(rows, kind="stable")
            again = np.r_[False, rows[order][1:] == rows[order][:-1]]
            earlier = np.r_[0, order[:-1]][again]
            mu, sigma = start_mu.copy(), start_sigma.copy()
            mu[order[again]], sigma[order[again]] = history.mu[earlier], history.sigma[earlier]
            out = np.empty(len(matches))
            self._log_likelihoods(matches, mu, sigma, out)
            return out

        return compute

    def _team_predictive(self, packed: Matches, mu: NDArray[np.float64], sigma: NDArray[np.float64]
                         ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Each team's predictive mean and standard deviation (the Notes), from ratings per player slot."""
        if len(packed.weight) == 0:
            return np.zeros(0), np.zeros(0)
        w, initial, starts = packed.weight, self._origin(float(self.mu)), packed.team_start[:-1]
        loc = initial + np.add.reduceat(w * (mu - initial), starts)
        offset = self._offsets(packed)
        if len(offset):
            loc = loc + offset
        return loc, np.sqrt(np.add.reduceat(w * w * (sigma * sigma + self._noise()), starts))

    def _predictive(self, packed: Matches, mu: NDArray[np.float64], sigma: NDArray[np.float64]
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64], str, float]:
        loc, sd = self._team_predictive(packed, mu[packed.player], sigma[packed.player])
        return loc, sd / TANH_MULTIPLIER, "logistic", 0.0

    def _pair_predictions(self, packed: Matches, mu: NDArray[np.float64], sigma: NDArray[np.float64],
                          a: NDArray[np.int64], b: NDArray[np.int64]
                          ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        loc, sd = self._team_predictive(packed, mu[packed.player], sigma[packed.player])
        return pair_predictions(loc, sd, a, b)

    def _skill_dynamics(self) -> tuple[float, float]:
        # w sigma_L^2 before each round, drift_per_day per day of the time in seconds
        return float(self.weight_limit) * float(self.sig_limit) ** 2, float(self.drift_per_day) / 86400.0

    def _log_win(self, packed: Matches, mu: NDArray[np.float64], sigma: NDArray[np.float64]) -> NDArray[np.float64]:
        loc, scale, density, _ = self._predictive(packed, mu, sigma)
        return log_win_probabilities(loc, density=density, scale=scale)

