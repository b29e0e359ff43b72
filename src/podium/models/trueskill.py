"""TrueSkill: Bayesian skill ratings by expectation propagation (Herbrich, Minka & Graepel 2007).

The factor graph of one match (the paper's Fig. 1), for teams sorted by rank::

    skill s_j      N(mu_j, sigma_j^2 + tau^2 + drift^2 * elapsed)          prior with dynamics
      |
    performance    p_j ~ N(s_j, beta^2)
      |
    team t_i       t_i = sum_j w_j p_j                                      partial play
      |
    difference     d = t_a - t_b   for compared teams a (better) and b
      |
    truncation     two teams: I(d > eps) win, I(|d| <= eps) draw (a non-finisher beaten as by a loss);
                   more teams (update="ordered", the default): I(d > 0) between neighbours of the chain

Below the truncation layer the graph is a tree of Gaussian factors, so its messages are exact: before the
comparisons, team ``i`` performs ``t_i ~ N(sum_j w_j mu_j, sum_j w_j^2 (sigma_j^2 + beta^2))``
independently of the others.  Expectation propagation then runs only on the comparison layer: each
truncation factor's message to its two teams is refined, in turn, by moment matching against the
truncated Gaussian (``V`` and ``W`` of :func:`podium.ordering.numerics.truncate_above` and
:func:`podium.ordering.numerics.truncate_between`), sweeping forwards and backwards over the comparisons until the
largest change of any message is below ``tolerance`` (the paper's schedule, Table 1).  Messages are held
in natural parameters (precision ``pi``, precision-adjusted mean ``tau``) so that products and quotients
of Gaussians are sums and differences.  Finally each team's total message is passed down the tree to its
players: with the team message ``(pi, tau)`` and the team's prior ``N(m, v)``,

    mu_j    += w_j sigma_j^2 (tau - pi m) / (1 + pi v)
    sigma_j^2 = sigma_j^2 (1 + pi (v - w_j^2 sigma_j^2)) / (1 + pi v)

(Gaussian conditioning through the sum and noise factors; written so that nothing cancels).

Which pairs of teams are compared (always a tree, so EP behaves as in the paper):

* the finishers form the paper's chain of neighbours, sorted by rank.  Under the default ``update="ordered"``
  every neighbour is only ordered, ``I(d > 0)``; under the paper's ``update="chain"`` a win factor ``I(d >
  eps)`` between teams of different rank and a draw factor between tied teams, which spreads a field of ``n``
  over ``(n - 1) eps`` (the class's ``update`` says how far);
* a tied group of three or more would make the chain depend on the order the teams are listed in.  The group
  is put in a canonical order (by the teams' own prior mean, variance, size) and run in each rotation of that
  order (:func:`podium.kernels.ep.tie_rotations`: all up to 16, beyond 8 evenly spaced and each reflected); the runs' messages are
  averaged in natural parameters (``"ordered"``: the geometric mean of the likelihoods of the group's orders,
  as :mod:`podium.ordering`'s), so permuting the teams of a match, ties included, changes nobody's result and
  tied players with equal priors get identical updates.  (Comparing every pair of a tied group instead gives
  a graph with loops on which EP converges to marginals far too precise: each team of a three-way tie ends
  with variance ~2 where ~29 is right.)
* non-finishers (``rank=None``): each is compared one-sidedly, ``I(d > 0)``, with the chain's last finisher,
  never with a draw factor and never with each other (two teams: as a loss).  So a non-finisher's mean can
  only fall and it cannot gain from a match it did not finish.

The draw margin of a compared pair with ``n1 + n2`` players is ``eps = Phi^-1((p + 1)/2) sqrt(n1 + n2) beta``
(section 4.1: ``p = 2 Phi(eps / (sqrt(n1 + n2) beta)) - 1``).

Two teams, the common case, need no iteration: one moment-matching step is exact, and the compiled
replay takes that path directly.
"""

from __future__ import annotations

import math
import statistics
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..jit import small_work
from ..data.match import Match
from ..data.matches import Matches
from ..data.rating import Rating
from ..kernels.common import History, State, signed_scores, state_rows
from ..kernels.ep import CHAIN, EXACT, ORDERED, team_log_outcome
from ..kernels.trueskill import SIGMA_MAX, history_log_likelihoods, log_qualities, replay_trueskill, team_priors
from ..ordering import log_win_probabilities
from .base import Model, has_draws, typical_margin
from .context import ByContext

__all__ = ["TrueSkill", "ConvergenceWarning"]

_UPDATES = {"ordered": ORDERED, "exact": EXACT, "chain": CHAIN}  # TrueSkill(update=...) to the kernels' code


class ConvergenceWarning(UserWarning):
    """Expectation propagation reached ``max_iterations`` before its messages settled to ``tolerance``."""


class GaussianMargins:
    """What TrueSkill and TrueSkill Through Time share to read advantages and scores (``advantage``,
    ``margin_scale``, ``margin_noise``, in skill units; :class:`TrueSkill` documents them): the noise, the
    predictive variance it adds, and where :func:`podium.fit` starts them."""

    beta: float
    margin_scale: float | None
    margin_noise: float | None

    def _fit_unit(self, name: str) -> float:
        return float(self.beta) if name in ("advantage", "newcomer") else 1.0

    def _fit_prepare(self, matches: Matches, names: Sequence[str]) -> Any:
        """Margins start from one score point worth a typical two-team difference over ``2 beta`` (the mean
        absolute score difference of the history's two-team matches), the noise at ``2 beta``."""
        if not any(n in names for n in ("margin_scale", "margin_noise")) or matches.score is None:
            return self
        params = self.get_params()  # type: ignore[attr-defined]
        if params["margin_scale"] is None:
            params["margin_scale"] = 2.0 * float(self.beta) / typical_margin(matches)
        if params["margin_noise"] is None:
            params["margin_noise"] = 2.0 * float(self.beta)
        return type(self)(**params)

    @property
    def _margin_noise2(self) -> float:
        """The margin observation's noise variance (``margin_noise``, or ``2 beta``, squared)."""
        noise = 2.0 * float(self.beta) if self.margin_noise is None else float(self.margin_noise)
        return noise * noise

    @property
    def _outcome_var(self) -> float:
        """What each team's predictive performance variance gains when the model reads margins: half the margin
        noise's (an outcome is then the sign of the observed score difference, noise and all); 0 otherwise."""
        return 0.5 * self._margin_noise2 if self.margin_scale is not None else 0.0


class TrueSkill(GaussianMargins, Model):
    """TrueSkill (Herbrich, Minka & Graepel 2007): skills with uncertainty, learnt by expectation propagation.

    Parameters
    ----------
    mu : float, default 25
        Mean of a new player's skill.
    sigma : float, default 25/3
        Standard deviation of a new player's skill.
    beta : float, default 25/6
        Standard deviation of a performance around the skill (the paper's ``beta``).
    tau : float, default 25/300
        Dynamics: ``tau^2`` is added to each player's variance before every match.
    draw_probability : float, default 0.10
        Probability of a draw between two equal one-player teams; sets the draw margin
        ``eps = Phi^-1((p + 1)/2) sqrt(n1 + n2) beta`` for teams of ``n1`` and ``n2`` players.
    drift : float, default 0
        Dynamics in time: ``drift^2`` per unit of ``Match.time`` since the player's last match is added to
        the variance (only in a :class:`podium.League`, which knows when each player last played).
    tolerance : float, default 1e-6
        Expectation propagation stops when no message moves its team's marginal by more than this: the
        mean's move in the marginal's standard deviations plus the precision's relative change.  A tied
        match's rotations after the first start from the last one's messages and stop at 1,000 times this
        (their average within about 1e-5 of a spread of every run converged, at the default).
    max_iterations : int, default 100
        Most forward-backward sweeps per match; reaching it gives a :class:`ConvergenceWarning`.
    center : bool, default True
        Measure skills from ``mu`` in a team's performance, ``sum w (s - mu)``: a team of newcomers then
        performs like any other team of newcomers whatever its size.  ``False`` is the paper's literal
        ``sum w s`` (and the ``trueskill`` package's), under which a team of four newcomers is expected to beat
        a team of three by ``mu`` points (25 = 6 beta): pair log loss 0.89, worse than a coin flip, on 4 v 3
        with parties (``python benchmarks/teams.py``); on other histories the sum predicts better.  The two agree
        whenever the teams' weights sum alike (equal sizes, duels, free-for-alls).
    newcomer : float, default 0
        Added to every member's mean in a team's sum, ``sum w (s - mu + newcomer)`` with ``center``: what a newcomer
        adds to its team's performance, from 0 (centred) to ``mu`` (the paper's sum; ``center=False`` is the same
        as ``newcomer=mu``).  :func:`podium.fit` fits it on a history whose teams' sizes differ (docs/design.md,
        "Teams").
    update : {"ordered", "exact", "chain"}, default "ordered"
        How a match of three or more teams updates (two teams are the paper's closed form whatever it is).
        ``"ordered"``: expectation propagation on the chain of places, each place only *ordered* (``d > 0``),
        a tied group as its orders (the likelihood the geometric mean over the group's rotations and their
        reflections, at most 16 runs, as :class:`Thurstone`'s (32): their messages averaged in natural
        parameters), non-finishers below the last finisher; the draw margin is then only the two-team draw.  Against the exact posterior of that likelihood
        (:func:`podium.ordering.moment_chain.order_moments`) the means agree within 1e-3 of a posterior spread and the
        spreads within 0.2 % for fields of 3 to 10,000 (``tests/ordering/test_moment_chain.py``), at the cost of a
        few sweeps of the chain (10,000 places in 0.08 s).  ``"exact"``: the assumed-density filter with the
        exact moments themselves (:func:`podium.kernels.trueskill.exact_messages`; a tied group within the
        draw margin below its best), 100 times slower.  ``"chain"``: the paper's expectation propagation,
        where every win needs ``d > eps`` and tied neighbours draw.  That chain separates a field of ``n`` by
        at least ``(n - 1) eps`` of performance: its winner from the prior goes to 62.3 among 100 players (the
        ``trueskill`` package's 62.28), 156 among 434 and 322 among 1,000, where the posterior with ordered
        places is 43.7, 47.3 and 49.2.  The exact moments of the chain's own likelihood also give 62.28 for
        100 players, so the runaway is the margin between every pair of neighbours (the model), not
        expectation propagation; it is kept for agreement with the paper and the ``trueskill`` package.
    advantage : float, default 0
        Added to a team's performance mean per unit of the advantage its match records
        (:attr:`podium.Match.advantage`: 1 for the home side, White), in skill units.  Fitted by :func:`podium.fit`
        on a history that records advantages.
    margin_scale : float or None, default None
        Skill units per point of score: with it, the scores of a match whose teams all scored are observations of
        their performances, each ``margin_scale * y = t + c + N(0, margin_noise^2 / 2)`` with a shift ``c`` common to
        the match (only differences count: points and race times need no zero), so that a two-team difference is
        ``margin_scale * dy ~ N(t_a - t_b, margin_noise^2)``.  They replace the order (a function of the scores) as
        the match's likelihood: an exact Gaussian update (:func:`podium.kernels.trueskill.margin_messages`,
        :func:`~podium.kernels.trueskill.score_messages`; TrueSkill 2 and TrueSkill Through Time's second version
        use scores the same way).  None: the order alone.  Fitted with ``margin_noise`` by :func:`podium.fit` on a
        history with scores.
    margin_noise : float or None, default None
        The observation's standard deviation in skill units; None: ``2 beta``.  Reading margins, an outcome is the
        sign of the observed score difference, noise and all, so predictions add ``margin_noise^2 / 2`` to each
        team's performance variance (without it the fitted advantage and scale come out about 10 % short on
        simulated histories: the predictions would be too sure).

    A match's ``weight`` (its importance) tempers its likelihood: the messages are raised to that power.

    Notes
    -----
    A two-team draw uses the draw margin; a non-finisher of two teams is beaten as by a loss, of more teams
    compared one-sidedly with the last finishers (never a draw factor), so its mean never rises.  Ties are
    symmetric: permuting the teams of a match changes nobody's result.
    Predictions (:meth:`win_probabilities`, :meth:`log_likelihood`, :meth:`quality`) use the predictive
    model of the ratings as given, team performances ``N(sum w (mu_i - mu), sum w^2 (sigma^2 + beta^2))``, without the
    dynamics of the next update.

    Examples
    --------
    >>> import podium
    >>> ts = podium.TrueSkill()
    >>> new = ts.rate(podium.Match([["ann"], ["bob"]]), {})
    >>> round(new["ann"].mu, 3), round(new["ann"].sigma, 3)
    (29.396, 7.171)
    """

    # Hyperparameters, set by _init_params in __init__ (declared for the type checker).
    mu: float
    sigma: float
    beta: float
    tau: float
    draw_probability: float
    drift: float
    tolerance: float
    max_iterations: int

    _fit_space = {"beta": "positive", "tau": "non_negative", "sigma": "positive", "draw_probability": "probability",
                  "drift": "non_negative", "advantage": "real", "margin_scale": "positive", "margin_noise": "positive",
                  "newcomer": "real"}
    # sigma is left out by default: with mu fixed, scaling sigma, beta, tau and drift together changes no
    # prediction, so fitting all four has a flat direction; beta and tau relative to sigma are what matter.
    _fit_default = ("beta", "tau", "draw_probability", "advantage", "margin_scale", "margin_noise", "newcomer")
    advantage: float | ByContext
    margin_scale: float | None
    margin_noise: float | None
    newcomer: float

    def _fit_informed(self, name: str, matches: Matches) -> bool:
        # With update="ordered" a match of three or more teams has no draw margin (a tied group is its orders), so
        # only two-team draws inform the draw probability; a contest's ties would only make fit score its costly
        # exact orderings for nothing.
        if name == "draw_probability":
            return has_draws(matches, two_teams=self.update == "ordered")
        return super()._fit_informed(name, matches)

    def _fit_start(self, name: str) -> float:
        if name == "drift" and self.drift == 0:
            return max(float(self.tau), float(self.sigma) / 100.0)  # per unit of time; a small nonzero start
        if name == "tau" and self.tau == 0:
            return float(self.sigma) / 100.0
        return self._fit_value(name)

    _sigma_max = SIGMA_MAX
    _sigma_max_why = "its square must stay a finite float"

    def __init__(
        self, *, mu: float = 25.0, sigma: float = 25.0 / 3.0, beta: float = 25.0 / 6.0, tau: float = 25.0 / 300.0,
        draw_probability: float = 0.10, drift: float = 0.0, tolerance: float = 1e-6, max_iterations: int = 100,
        center: bool = True, update: str = "ordered", advantage: float | ByContext = 0.0, margin_scale: float | None = None,
        margin_noise: float | None = None, newcomer: float = 0.0,
    ) -> None:
        self._init_params(mu=(mu, "finite"), sigma=(sigma, "positive"), beta=(beta, "positive"),
                          tau=(tau, "non_negative"), draw_probability=(draw_probability, "probability"),
                          drift=(drift, "non_negative"), tolerance=(tolerance, "positive"),
                          max_iterations=(max_iterations, "positive_int"))
        if not isinstance(center, bool):
            raise ValueError(f"The 'center' parameter of TrueSkill must be True or False. Got {center!r:.80} instead.")
        self.center = center
        self._choice("update", update, tuple(_UPDATES))
        self.update = update
        self._update = _UPDATES[update]
        self._init_params(advantage=(advantage, "advantage"), margin_scale=(margin_scale, "positive or None"),
                          margin_noise=(margin_noise, "positive or None"), newcomer=(newcomer, "finite"))
        self._center = self._origin(float(mu) if center else 0.0)
        for name in ("sigma", "beta", "tau", "drift"):
            value = getattr(self, name)
            if value > SIGMA_MAX:
                raise ValueError(f"The {name!r} parameter of TrueSkill must be at most {SIGMA_MAX:g} (its square must "
                                 f"stay a finite float). Got {value!r} instead.")
        self._prior = Rating(float(mu), float(sigma))
        # eps / (sqrt(n1 + n2) beta) = Phi^-1((p + 1) / 2)   (paper, section 4.1)
        self._margin = statistics.NormalDist().inv_cdf((draw_probability + 1.0) / 2.0) * float(beta)

    @property
    def prior(self) -> Rating:
        return self._prior

    def draw_margin(self, players: int = 2) -> float:
        """The draw margin ``eps`` for a comparison of two teams with ``players`` players in all."""
        return self._margin * math.sqrt(players)

    # -- the engine ----------------------------------------------------------------------------------
    def _replay(self, matches: Matches, slot_index: NDArray[np.int64], state: State,
                history: History | None, loglik: NDArray[np.float64] | None = None) -> None:
        n_matches = len(matches)
        rows = state_rows(matches, slot_index)
        nothing = np.empty(0)  # what the kernel neither computes nor writes
        unconverged = replay_trueskill(
            matches.match_start, matches.team_start, matches.team_rank, rows, matches.weight, matches.time,
            state.mu, state.sigma, state.games, state.last_time,
            history.mu if history is not None else nothing, history.sigma if history is not None else nothing,
            loglik if loglik is not None else nothing,
            float(self.beta), float(self.tau), float(self.drift), self._margin, float(self.tolerance),
            int(self.max_iterations), self._center, self._update, self._offsets(matches),
            matches.match_weight if matches.match_weight is not None else nothing,
            signed_scores(matches) if self.margin_scale is not None else nothing,
            0.0 if self.margin_scale is None else float(self.margin_scale), self._margin_noise2,
        )
        if unconverged and self.update == "exact":
            warnings.warn(
                f"TrueSkill: the exact posterior moments failed their self-check in {unconverged} of {n_matches} "
                "matches (fields of thousands of distinct places); those players keep their ratings before the "
                "match (with dynamics).", ConvergenceWarning, stacklevel=3)
        elif unconverged:
            warnings.warn(
                f"TrueSkill: expectation propagation did not reach tolerance={self.tolerance!r} within "
                f"max_iterations={self.max_iterations!r} sweeps in {unconverged} of {n_matches} matches; "
                "their updates use the last sweep.", ConvergenceWarning, stacklevel=3)

    def _deferred_log_likelihoods(self, matches: Matches, slot_index: NDArray[np.int64], state: State,
                                  history: History) -> Callable[[], NDArray[np.float64]]:
        """The log-likelihoods, computed when read: each is an exact ordering probability
        (:func:`podium.ordering.log_outcome`), several times the cost of the update itself in free-for-alls.
        What they need besides the history is the state of the batch's players now (one gather)."""
        rows = state_rows(matches, slot_index).copy()  # the league's mapping grows as players arrive
        start_mu, start_sigma = state.mu[rows], state.sigma[rows]
        n_rows, beta2, margin, center = len(state.mu), float(self.beta) ** 2, self._margin, self._center
        update = self._update
        offset = self._offsets(matches)
        outcome_var = self._outcome_var

        def compute() -> NDArray[np.float64]:
            out = np.empty(len(matches))
            if len(matches):
                history_log_likelihoods(matches.match_start, matches.team_start, matches.team_rank, rows,
                                        matches.weight, start_mu, start_sigma, history.mu, history.sigma,
                                        n_rows, beta2, margin, center, out, update, offset, outcome_var)
            return out

        return compute

    def _team_predictive(self, packed: Matches, mu: NDArray[np.float64], sigma: NDArray[np.float64]
                         ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        n = len(packed.team_rank)
        tm, tv, size = np.empty(n), np.empty(n), np.empty(n)
        team_priors(packed.team_start, 0, n, packed.player, packed.weight, mu, sigma[packed.player] ** 2, 0,
                     float(self.beta) ** 2, self._center, tm, tv, size)
        offset = self._offsets(packed)
        return (tm + offset if len(offset) else tm), (tv + self._outcome_var if self._outcome_var else tv), size

    def _predictive(self, packed: Matches, mu: NDArray[np.float64], sigma: NDArray[np.float64]
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64], str, float]:
        tm, tv, _ = self._team_predictive(packed, mu, sigma)
        return tm, np.sqrt(tv), "gaussian", 0.0

    def _skill_dynamics(self) -> tuple[float, float]:
        # tau^2 before each of a player's matches, drift^2 per unit of time (the module docstring's dynamics)
        return float(self.tau) ** 2, float(self.drift) ** 2

    def _log_win(self, packed: Matches, mu: NDArray[np.float64], sigma: NDArray[np.float64]) -> NDArray[np.float64]:
        tm, tv, _ = self._team_predictive(packed, mu, sigma)
        return log_win_probabilities(tm, scale=np.sqrt(tv))

    # -- predictions -------------------------------------------------------------------------------------
    @small_work
    def log_likelihood(self, match: Match, ratings: Mapping[str, Rating]) -> float:
        """``log P(the match's outcome | ratings before it)`` under the predictive model.

        Team performances are independent ``N(sum w mu, sum w^2 (sigma^2 + beta^2))``.  Two teams: a win is
        a performance higher by more than the draw margin, a draw ``|X_a - X_b| <= eps``.  More teams, by
        ``update`` (:func:`podium.kernels.ep.team_log_outcome`): ``"ordered"``, the exact probability of the
        order, a tied group the geometric mean over its orders (as :class:`Thurstone`'s); ``"chain"``, the
        chain ``X_1 - X_2 > eps_12 > ...``, a tied group within the margin below its best; ``"exact"``, places
        ordered, ties as ``"chain"``'s.  Non-finishers are below the last finishers in any order.  See
        :func:`podium.ordering.log_outcome`.
        """
        packed, mu, sigma = self._pack(match, ratings)
        tm, tv, size = self._team_predictive(packed, mu, sigma)
        return float(team_log_outcome(tm, tv, packed.team_rank, size, self._margin, self._update))

    @small_work
    def quality(self, teams: Sequence[Sequence[str]], ratings: Mapping[str, Rating],
                weights: Sequence[Sequence[float]] | None = None,
                advantage: Sequence[float | bool] | None = None, context: str | None = None) -> float:
        """Match quality: the probability of a draw relative to the highest possible (paper, eq. 7).

        For ``n`` teams with ``A`` the ``(n - 1) x players`` matrix of weighted differences between
        consecutive teams (row ``k``: ``+w`` for team ``k``, ``-w`` for team ``k+1``), ``mu`` and
        ``Sigma = diag(sigma^2)`` the players' ratings::

            quality = sqrt(det(beta^2 A A^T) / det(beta^2 A A^T + A Sigma A^T))
                      * exp(-1/2 mu^T A^T (beta^2 A A^T + A Sigma A^T)^-1 A mu)

        i.e. the density of all consecutive differences at zero, relative to the same density with
        ``Sigma = 0`` and equal means (the generalization of eq. 7 in Moserware's "The Math Behind
        TrueSkill").  It is computed in ``O(n)`` by :func:`log_match_quality`, without matrices.  For two
        one-player teams it is ``sqrt(2 beta^2 / c^2) exp(-(mu_1 - mu_2)^2 / (2 c^2))``,
        ``c^2 = 2 beta^2 + sigma_1^2 + sigma_2^2``.
        """
        packed, mu, sigma = self._pack_teams(teams, ratings, weights, advantage, context)
        return math.exp(self._log_qualities(packed, mu, sigma)[0])

    def _log_qualities(self, packed: Matches, mu: NDArray[np.float64], sigma: NDArray[np.float64]
                       ) -> NDArray[np.float64]:
        """``log quality`` of every match of ``packed`` (players index ``mu`` and ``sigma``)."""
        out = np.empty(len(packed))
        log_qualities(packed.match_start, packed.team_start, packed.player, packed.weight, mu, sigma,
                      float(self.beta) ** 2, self._center, out, self._offsets(packed))
        return out
