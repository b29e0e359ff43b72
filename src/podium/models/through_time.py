"""TrueSkill Through Time: whole-history smoothing of TrueSkill (Dangauthier, Herbrich, Minka & Graepel 2007;
Landfried & Mocskos 2021-2025).

Every podium filter rates a match from the games before it.  TrueSkill Through Time treats the whole history as
one factor graph and lets every game inform every estimate, earlier and later:

* each player has one skill variable per *batch* (the matches played at one ``time``);
* between a player's consecutive batches the skill follows a Gaussian random walk,
  ``s_k ~ N(s_{k-1}, gamma^2 (t_k - t_{k-1}))``; a new player's first skill is ``N(mu, sigma^2)``;
* each match is TrueSkill's factor graph under its default ``update="ordered"``
  (:func:`podium.kernels.trueskill.rate_teams`: teams, partial play, two-team draws by margin, places of more
  teams only ordered with tied groups as their orders, non-finishers censored below the finishers).

Inference is expectation propagation.  Each skill variable ``k`` holds three Gaussian messages in natural
parameters (precision ``pi``, precision-adjusted mean ``tau``): ``forward`` from its past (the prior, or the
previous posterior without its backward message, widened by ``gamma^2`` times the elapsed time), ``backward``
from its future (the next skill's likelihood and backward message, widened the same way), and ``likelihood``,
the product of its matches' messages.  A match is updated from its players' *cavities* (posterior divided by
that match's own message); its new messages replace the old.  The schedule is the reference implementation's:
a first forward pass (which is exactly :class:`podium.TrueSkill`'s online replay with ``tau = 0`` and
``drift = gamma``, run by the same kernel), then backward and forward sweeps over the batches, each batch's
matches updated once per visit, until no posterior mean or standard deviation moves by ``tolerance``.

Evidence (:attr:`Smoothed.log_evidence`) is ``log P(all outcomes)`` by the chain rule,
``sum_m log P(outcome_m | matches before m)``, each factor the probability of the outcome under the players'
beliefs from the first pass (the reference package's ``log_evidence()`` before ``convergence()``).  It is the
model's marginal likelihood (estimated: each belief is projected on a Gaussian, as TrueSkill does), which
smoothing does not change (it refines the skills, not the probability of the data); it is what a filter's
summed log-likelihood is, so the two compare per match (TrueSkill's own log-likelihood leaves out the dynamics
of the coming update, so it is lower than this first pass's at the same parameters whenever ``gamma > 0``).
EP's fixed point offers another estimate (Minka 2001), but with beliefs factorized over players it drops the
correlation between opponents' skills: on small histories integrated exactly it was further from the truth
than the chain rule in 11 of 12 cases (docs/design.md), so podium does not report it.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..jit import SMALL, cached, small, small_work
from ..data.match import Match
from ..data.matches import Matches
from ..data.rating import Rating, leaderboard_rows
from ..kernels.common import signed_scores
from ..kernels.ep import ORDERED
from ..kernels.levels import (LEVEL_KNOTS, hat_weights, level_constant, level_system, shift_invariant, shift_levels,
                              solve_spd)
from ..kernels.through_time import (MATCH_ITERATIONS, MATCH_TOLERANCE, chain_messages, extrapolate, first_draw, forget,
                                    from_filter, leave_one_out, permute, structure, sweep)
from ..kernels.trueskill import SIGMA_MAX, replay_trueskill
from .base import Hyperparameters
from .context import ByContext
from .trueskill import ConvergenceWarning, GaussianMargins, TrueSkill

__all__ = ["TrueSkillThroughTime", "Smoothed"]

# The largest prior standard deviation (see TrueSkillThroughTime.__init__).
SIGMA_MAX_SMOOTH = 1e100


# -- the result ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class SmoothTrajectory:
    """A player's smoothed skill at each batch they played in.

    ``match`` is the index (in the history as given) of the player's first match of that batch, ``time`` the
    batch's time, ``mu`` and ``sigma`` the posterior given the whole history.
    """

    player: str
    match: NDArray[np.int64]
    time: NDArray[np.float64]
    mu: NDArray[np.float64]
    sigma: NDArray[np.float64]


class Smoothed:
    """The result of :meth:`TrueSkillThroughTime.smooth`: every player's skill through time, given all matches.

    Attributes
    ----------
    log_evidence : float
        ``log P(all outcomes)``, the model's marginal likelihood, estimated by the chain rule: ``sum_m
        log P(outcome_m | matches before m)`` with each belief projected on a Gaussian (see the module
        docstring).  What :func:`podium.fit` maximizes with ``metric="log_evidence"``; comparable with a
        filter's summed log-likelihood.
    match_log_evidence : float64 array
        Its terms, ``log P(outcome_m | matches before m)``, in the history's order.
    loo_log_likelihood : float
        ``sum_m log P(outcome_m | all other matches)`` under the converged cavities (what the reference
        package's ``History.log_evidence()`` returns after ``convergence()``; it uses each match's future too,
        so it is not a probability of the history).
    iterations : int
        Backward-forward sweeps run after the first pass.
    step : float
        The largest move of a posterior mean or standard deviation in the last sweep.
    converged : bool
        Whether ``step`` fell below the tolerance.
    matches : int
        How many matches were smoothed.
    """

    def __init__(self, model: TrueSkillThroughTime, players: list[str], time_is_date: bool,
                 sv_player: NDArray[np.int64], sv_time: NDArray[np.float64], sv_match: NDArray[np.int64],
                 sv_games: NDArray[np.int64], sv_prev: NDArray[np.int64], sv_next: NDArray[np.int64],
                 fwd: NDArray[np.float64], bwd: NDArray[np.float64], lik: NDArray[np.float64],
                 match_log_evidence: NDArray[np.float64], loo_log_likelihood: float, iterations: int, step: float,
                 converged: bool, matches: int,
                 posterior: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None,
                 links: tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]] | None = None
                 ) -> None:
        self.model = model
        self.players = players
        self.time_is_date = time_is_date
        self.match_log_evidence = match_log_evidence
        self.log_evidence = float(match_log_evidence.sum())
        self.loo_log_likelihood = loo_log_likelihood
        self.iterations = iterations
        self.step = step
        self.converged = converged
        self.matches = matches
        self._links = links  # (match_start, team_start, player, time) in time order: who met whom, and when
        # Skill variables grouped by player (stable, so each player's are in time order).
        by_player = np.argsort(sv_player, kind="stable")
        self._order = by_player
        self._start = np.searchsorted(sv_player[by_player], np.arange(len(players) + 1))
        self._player = sv_player
        self._time = sv_time
        self._match = sv_match
        self._games = sv_games
        self._prev = sv_prev
        self._next = sv_next
        self._fwd = fwd  # (2, K): pi and tau of each message
        self._bwd = bwd
        self._lik = lik
        if posterior is None:
            p = fwd[0] + bwd[0] + lik[0]
            self._mu = (fwd[1] + bwd[1] + lik[1]) / p
            self._sigma = 1.0 / np.sqrt(p)
        else:  # the first pass alone: the online replay's ratings, as it wrote them
            self._mu, self._sigma = posterior
        self._index = {name: i for i, name in enumerate(players)}

    def __repr__(self) -> str:
        return (f"Smoothed({self.matches} matches, {len(self.players)} players, log_evidence={self.log_evidence:.6g}, "
                f"iterations={self.iterations}, converged={self.converged})")

    def _rows(self, player: str) -> NDArray[np.int64]:
        if not isinstance(player, str) or player not in self._index:
            raise KeyError(f"'player': {player!r:.80} played no match of this history.")
        i = self._index[player]
        return self._order[self._start[i]:self._start[i + 1]]

    def trajectory(self, player: str) -> SmoothTrajectory:
        """The player's smoothed skill at each batch (time) they played in."""
        rows = self._rows(player)
        return SmoothTrajectory(player, self._match[rows].copy(), self._time[rows].copy(), self._mu[rows].copy(),
                                self._sigma[rows].copy())

    @small_work
    def ratings(self, at: float | str | None = None) -> dict[str, Rating]:
        """Everyone's smoothed skill at time ``at`` (default: the history's last time), given all matches.

        Between two of a player's batches ``t_1 < at < t_2`` the skill is the random walk's bridge: the forward
        belief after ``t_1`` widened by ``gamma^2 (at - t_1)`` times the backward message from ``t_2`` widened
        by ``gamma^2 (t_2 - at)`` (exact for the Gaussian walk); after the last batch, the last posterior widened
        by ``gamma^2 (at - t_last)``.  Players whose first match is after ``at`` are left out.  ``at`` is a
        number on the history's time axis, or a date or ISO-8601 string when its times are dates.
        """
        when = self._when(at)
        gamma2 = float(self.model.gamma) ** 2
        out: dict[str, Rating] = {}
        for i, name in enumerate(self.players):
            rows = self._order[self._start[i]:self._start[i + 1]]
            times = self._time[rows]
            j = int(np.searchsorted(times, when, side="right")) - 1
            if j < 0:
                continue
            k = rows[j]
            if times[j] == when:
                out[name] = Rating(float(self._mu[k]), float(self._sigma[k]))
                continue
            fp, ft = forget(self._fwd[0, k] + self._lik[0, k], self._fwd[1, k] + self._lik[1, k],
                             gamma2 * (when - times[j]))
            n = self._next[k]
            bp = bt = 0.0
            if n >= 0 and self.iterations > 0:  # the first pass alone looks at no later match
                bp, bt = forget(self._lik[0, n] + self._bwd[0, n], self._lik[1, n] + self._bwd[1, n],
                                 gamma2 * (self._time[n] - when))
            p = fp + bp
            out[name] = Rating(float((ft + bt) / p), float(1.0 / math.sqrt(p)))
        return out

    @property
    def end(self) -> float:
        """The history's last time (the match index of its last match when it has no times): ``at``'s default."""
        return float(self._time.max())

    def _when(self, at: float | str | None) -> float:
        if at is None:
            return self.end
        from ..data.match import parse_time

        if not self.time_is_date and not isinstance(at, (int, float, np.integer, np.floating)):
            raise ValueError(f"'at' must be a number: this history's times are numbers (or match indices), not "
                             f"dates. Got {at!r:.80}.")
        value = parse_time(at, "at")
        if value != value:
            raise ValueError(f"'at' must be a time on the history's axis. Got {at!r:.80}.")
        return value

    def leaderboard(self, k: float = 3.0, *, at: float | str | None = None, top: int | None = None,
                    min_games: int = 0, connected_only: bool = False) -> list[Any]:
        """Players sorted by ``mu - k sigma`` of their smoothed skill at ``at`` (see :meth:`ratings`).

        ``games`` in each row counts the matches the player had played by ``at``; ``min_games`` leaves out
        players with fewer.  ``connected`` says whether the player is in the largest component of the matches
        played by ``at`` (as :meth:`podium.League.leaderboard`'s: a rating outside it is not comparable with the
        leaders'); ``connected_only`` leaves out the others.
        """
        if not isinstance(connected_only, bool):
            raise TypeError(f"'connected_only' must be a bool. Got {connected_only!r:.80}.")
        when = self._when(at)
        ratings = self.ratings(at)
        names = list(ratings)
        games = np.empty(len(names), dtype=np.int64)
        for j, name in enumerate(names):
            rows = self._rows(name)
            games[j] = self._games[rows[self._time[rows] <= when]].sum()
        linked = self._connected(when)
        connected = None if linked is None else np.array([linked[self._index[n]] for n in names], dtype=np.bool_)
        return leaderboard_rows(names, np.array([ratings[n].mu for n in names]),
                                np.array([ratings[n].sigma for n in names]), games, k, top, min_games, connected,
                                connected_only)

    def _connected(self, when: float) -> NDArray[np.bool_] | None:
        """Per player, whether it is in the largest component of the matches played by ``when`` (ties: the component
        of the lowest player index), as :meth:`podium.League.leaderboard` says of a league's matches; None when the
        smoother kept no matches."""
        if self._links is None:
            return None
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components

        ms, ts, pl, st = self._links
        n = len(self.players)
        cut = int(np.searchsorted(st, when, side="right"))  # the matches played by `when` (time order)
        slots = int(ts[ms[cut]])
        # Players and matches as one graph (player i, match n + m): a player's component is its match partners'.
        team = np.repeat(np.arange(int(ms[cut])), np.diff(ts[:int(ms[cut]) + 1]))
        match = np.repeat(np.arange(cut), np.diff(ms[:cut + 1]))[team] if slots else np.zeros(0, np.int64)
        graph = coo_matrix((np.ones(slots), (pl[:slots], n + match)), shape=(n + cut, n + cut))
        _, labels = connected_components(graph, directed=False)
        played = np.zeros(n, dtype=np.bool_)
        played[pl[:slots]] = True
        if not played.any():
            return played
        sizes = np.bincount(labels[:n][played], minlength=int(labels.max()) + 1)
        biggest = np.flatnonzero(sizes == sizes.max())
        first = min(int(np.flatnonzero(played & (labels[:n] == b))[0]) for b in biggest)
        return played & (labels[:n] == labels[first])

    def to_frame(self) -> Any:
        """A pandas ``DataFrame``, one row per player and batch: ``player, time, match, mu, sigma`` (pandas
        must be installed; times that are dates become timestamps)."""
        import pandas as pd

        frame = pd.DataFrame(self._columns())
        if self.time_is_date:
            frame["time"] = pd.to_datetime(frame["time"], unit="D")
        return frame

    def _columns(self) -> dict[str, Any]:
        rows = self._order
        return {"player": np.array(self.players, dtype=object)[self._player[rows]], "time": self._time[rows],
                "match": self._match[rows], "mu": self._mu[rows], "sigma": self._sigma[rows]}

    def write_csv(self, path: Any) -> None:
        """The trajectories as CSV (:meth:`to_frame`'s columns; dates as ISO-8601), without pandas."""
        import csv

        from ..data.match import format_time

        cols = self._columns()
        with open(path, "w", newline="", encoding="utf-8") as fh:
            out = csv.writer(fh)
            out.writerow(["player", "time", "match", "mu", "sigma"])
            for name, t, m, mu, sd in zip(cols["player"], cols["time"], cols["match"], cols["mu"], cols["sigma"]):
                out.writerow([name, format_time(float(t), self.time_is_date), int(m), repr(float(mu)),
                              repr(float(sd))])


# -- the model ------------------------------------------------------------------------------------------------
class TrueSkillThroughTime(GaussianMargins, Hyperparameters):
    """TrueSkill Through Time: TrueSkill smoothed over the whole history (Dangauthier et al. 2007).

    Parameters
    ----------
    mu, sigma : float, default 0 and 6
        A new player's skill ``N(mu, sigma^2)`` (the reference package's scale: ``beta = 1``).
    beta : float, default 1
        Standard deviation of a performance around the skill.
    gamma : float, default 0.03
        The random walk of skills: variance ``gamma^2`` per unit of time between a player's batches.  Without
        times (every ``Match.time`` unknown) each match is its own batch at time = its index in the history.
    draw_probability : float, default 0.10
        Probability of a draw between two equal one-player teams; the draw margin is TrueSkill's,
        ``Phi^-1((p + 1)/2) sqrt(n1 + n2) beta``.  With 0, a history with a draw is refused.
    advantage, margin_scale, margin_noise : float, float or None, float or None
        What a result says beyond the order, read as :class:`podium.TrueSkill` reads it (its docstring gives the
        equations): the advantage a match records adds ``advantage`` to the team's performance mean; with
        ``margin_scale`` the scores of a match whose teams all scored are Gaussian observations of their
        performances in place of the order; a match's ``weight`` raises its likelihood to that power, in the
        first pass and in every sweep alike.  All fitted by :func:`podium.fit` where the history records them.

    Notes
    -----
    A match's factor graph, non-finishers included, is :class:`podium.TrueSkill`'s (the same compiled code).
    :meth:`smooth` with ``max_iterations=0`` runs only the first, filtering pass: on a history with times its
    ratings are those of ``TrueSkill(mu=mu, sigma=sigma, beta=beta, tau=0, drift=gamma, center=False, ...)``
    replayed in time order (without times the smoother's clock is the match index, which TrueSkill's ``drift``
    does not see; the reference package instead adds ``gamma^2`` once per appearance).  Where a match has a
    tied group of three or more teams, TrueSkill's rotation average is used (the reference package chains such a
    group in the order listed).
    """

    # Hyperparameters, set by _init_params in __init__ (declared for the type checker).
    mu: float
    sigma: float
    beta: float
    gamma: float
    draw_probability: float
    advantage: float | ByContext
    margin_scale: float | None
    margin_noise: float | None

    _fit_space = {"beta": "positive", "gamma": "non_negative", "sigma": "positive", "draw_probability": "probability",
                  "advantage": "real", "margin_scale": "positive", "margin_noise": "positive"}
    _fit_default = ("beta", "gamma", "draw_probability", "advantage", "margin_scale", "margin_noise")

    def _fit_start(self, name: str) -> float:
        if name == "gamma" and self.gamma == 0:
            return float(self.sigma) / 200.0
        return self._fit_value(name)

    def __init__(self, *, mu: float = 0.0, sigma: float = 6.0, beta: float = 1.0, gamma: float = 0.03,
                 draw_probability: float = 0.10, advantage: float | ByContext = 0.0, margin_scale: float | None = None,
                 margin_noise: float | None = None) -> None:
        self._init_params(mu=(mu, "finite"), sigma=(sigma, "positive"), beta=(beta, "positive"),
                          gamma=(gamma, "non_negative"), draw_probability=(draw_probability, "probability"),
                          advantage=(advantage, "advantage"), margin_scale=(margin_scale, "positive or None"),
                          margin_noise=(margin_noise, "positive or None"))
        for name in ("sigma", "beta", "gamma"):
            # sigma's square inverted is the priors' precision, on which the field's level rests: at 1e150 it is
            # 1e-300, at the edge of the floats, and the sweeps lose the level.
            limit = SIGMA_MAX_SMOOTH if name == "sigma" else SIGMA_MAX
            if getattr(self, name) > limit:
                raise ValueError(f"The {name!r} parameter of TrueSkillThroughTime must be at most {limit:g}. "
                                 f"Got {getattr(self, name)!r} instead.")
        self._filter = TrueSkill(mu=float(mu), sigma=float(sigma), beta=float(beta), tau=0.0, drift=float(gamma),
                                 draw_probability=float(draw_probability), tolerance=MATCH_TOLERANCE,
                                 max_iterations=MATCH_ITERATIONS, center=False, advantage=advantage,
                                 margin_scale=margin_scale, margin_noise=margin_noise)

    @property
    def filter(self) -> TrueSkill:
        """The online model of the first pass: ``TrueSkill(..., tau=0, drift=gamma, center=False)`` with the same
        factors (the smoother sums teams as the paper does; with ``mu = 0``, its default, the two sums agree)."""
        return self._filter

    def smooth(self, matches: Matches | Iterable[Match], *, tolerance: float = 1e-6, max_iterations: int = 100,
               progress: bool = False) -> Smoothed:
        """Smooth a history: expectation propagation over all its matches, until no posterior moves.

        Parameters
        ----------
        matches : Matches or iterable of Match
            The history; matches are taken in time order (stable: equal times keep their order and form one
            batch).  Times must be all known or all unknown.
        tolerance : float, default 1e-6
            Stop when a backward-forward sweep moves no posterior mean or standard deviation by this much.
        max_iterations : int, default 100
            Most sweeps after the first pass (0: the first, filtering pass only).  Reaching it without
            converging gives a :class:`podium.ConvergenceWarning`.
        progress : bool
            Show a progress bar (rich) of the sweeps.
        """
        packed = matches if isinstance(matches, Matches) else Matches.from_matches(list(matches))
        # Each sweep visits every player of every match: interpreted up to ~500 duels (about 20 ms a duel), unless
        # the kernels load from numba's cache, which beats that from ~50 duels (importing numba and loading).
        items = 20 * len(packed.player)
        if SMALL // 5 < items <= SMALL and cached(from_filter, sweep, leave_one_out):
            items = SMALL + 1
        with small(items):
            return self._smooth(packed, tolerance, max_iterations, progress)

    def _smooth(self, packed: Matches, tolerance: float, max_iterations: int, progress: bool) -> Smoothed:
        tol = self._positive("tolerance", tolerance)
        if isinstance(max_iterations, bool) or not isinstance(max_iterations, int) or max_iterations < 0:
            raise ValueError(f"'max_iterations' must be a non-negative int. Got {max_iterations!r:.80}.")
        n_m = len(packed)
        if n_m == 0:
            raise ValueError("'matches' is empty: there is no history to smooth.")
        time = np.asarray(packed.time, dtype=np.float64)
        unknown = np.isnan(time)
        if unknown.any() and not unknown.all():
            first = int(np.flatnonzero(unknown)[0])
            raise ValueError(f"'time': {int(unknown.sum())} of {n_m} matches have no time (the first is match "
                             f"{first}); TrueSkillThroughTime needs all times or none.")
        if unknown.all():
            time = np.arange(n_m, dtype=np.float64)
        if not np.isfinite(time).all():
            bad = int(np.flatnonzero(~np.isfinite(time))[0])
            raise ValueError(f"'time' of match {bad} is {time[bad]!r}; times must be finite.")
        if self.draw_probability == 0.0:
            self._refuse_draws(packed)
        order = np.argsort(time, kind="stable")
        ms, ts, tr, pl, wt, tix = permute(packed.match_start, packed.team_start, packed.team_rank, packed.player,
                                          packed.weight, order)
        # What a result says beyond the order, in the smoothed order (each empty: none).
        f = self._filter
        offset = self._offsets(packed)
        offset = offset[tix] if len(offset) else offset
        evidence = packed.match_weight[order] if packed.match_weight is not None else np.empty(0)
        score = signed_scores(packed) if self.margin_scale is not None else np.empty(0)
        score = score[tix] if len(score) else score
        scale = 0.0 if self.margin_scale is None else float(self.margin_scale)
        noise2 = self._margin_noise2
        outcome_var = self._outcome_var
        st = time[order]
        n_players = len(packed.players)
        slot_sv, sv_player, sv_prev, sv_next, sv_time, batch_start, sv_batch_start, sv_match = structure(
            ms, ts, pl, st, n_players)
        k = len(sv_player)
        sv_games = np.bincount(slot_sv, minlength=k)  # matches of each skill variable
        single = sv_games == 1  # a skill with one match: its cavity is exact
        # The first pass: TrueSkill's online replay, by its own kernel.
        mu = np.full(n_players, float(self.mu))
        sd = np.full(n_players, float(self.sigma))
        hist_mu = np.empty(len(pl))
        hist_sd = np.empty(len(pl))
        bad = replay_trueskill(ms, ts, tr, pl, wt, st, mu, sd, np.zeros(n_players, dtype=np.int64),
                               np.full(n_players, np.nan), hist_mu, hist_sd, np.empty(0), float(self.beta), 0.0,
                               float(self.gamma), f._margin, MATCH_TOLERANCE, MATCH_ITERATIONS, 0.0, ORDERED, offset,
                               evidence, score, scale, noise2)
        fwd = np.empty((2, k))
        bwd = np.zeros((2, k))
        lik = np.empty((2, k))
        msg = np.empty((2, len(pl)))
        online = np.empty(n_m)
        gamma2 = float(self.gamma) ** 2
        beta2 = float(self.beta) ** 2
        from_filter(ms, ts, tr, pl, wt, st, slot_sv, hist_mu, hist_sd, n_players, float(self.mu),
                     float(self.sigma), gamma2, beta2, f._margin, fwd[0], fwd[1], lik[0], lik[1], msg[0], msg[1],
                     online, offset, outcome_var)
        filtered = None
        if max_iterations == 0:  # the first pass's posteriors are the replay's ratings themselves
            last = np.full(k, -1, dtype=np.int64)
            np.maximum.at(last, slot_sv, np.arange(len(pl)))
            filtered = (hist_mu[last], hist_sd[last])
        del hist_mu, hist_sd
        prior_p = 1.0 / float(self.sigma) ** 2
        prior_t = float(self.mu) * prior_p
        unconverged = np.zeros(1, dtype=np.int64)
        unconverged[0] = bad
        invariant = shift_invariant(ms, ts, wt, tr, score, evidence)
        batch_time = sv_time[sv_batch_start[:-1]]
        picks = np.linspace(0, len(batch_time) - 1, min(len(batch_time), LEVEL_KNOTS)).round().astype(np.int64)
        knots = batch_time[:1] if gamma2 == 0.0 else np.unique(batch_time[picks])
        hats = hat_weights(sv_time, knots)
        step = math.inf
        done = 0
        bar = None
        if progress and max_iterations > 0:
            from rich.progress import Progress

            bar = Progress(transient=True)
            bar.start()
            task = bar.add_task("smoothing", total=max_iterations)
        steps: list[float] = []
        prev = None
        last_jump = 0
        try:
            for done in range(1, max_iterations + 1):
                step = sweep(ms, ts, tr, wt, slot_sv, single, sv_prev, sv_next, sv_time, batch_start,
                              sv_batch_start, prior_p, prior_t, gamma2, fwd[0], fwd[1], bwd[0], bwd[1], lik[0],
                              lik[1], msg[0], msg[1], beta2, f._margin, unconverged, offset, evidence, score, scale,
                              noise2)
                if self._correct_level:
                    self._level(ms, ts, invariant, hats, len(knots), slot_sv, sv_prev, sv_next, sv_time, prior_p, prior_t,
                                gamma2, fwd, bwd, lik, msg)
                if bar is not None:
                    bar.update(task, advance=1, description=f"smoothing (step {step:.2e})")
                if not step >= tol:  # NaN would stop here too, and is raised below
                    break
                if self._accelerate and done < max_iterations:  # a jump no sweep checks would be returned
                    # Lyusternik-Aitken: when the sweeps shrink the step by a settled ratio r, the rest of the way
                    # is about r / (1 - r) times the last change; jump there (then three sweeps to re-measure r).
                    steps.append(step)
                    if prev is not None and len(steps) - last_jump >= 3:
                        r1, r2 = steps[-1] / steps[-2], steps[-2] / steps[-3]
                        if 0.2 < r1 < 0.995 and abs(r1 - r2) < (0.05 if r1 < 0.9 else 0.01) * r1:
                            extrapolate(slot_sv, r1 / (1.0 - r1), prev[0], prev[1], msg[0], msg[1], lik[0],
                                         lik[1])
                            chain_messages(sv_prev, sv_next, sv_time, prior_p, prior_t, gamma2, fwd[0], fwd[1],
                                            bwd[0], bwd[1], lik[0], lik[1])
                            last_jump = len(steps)
                    if prev is None:
                        prev = msg.copy()
                    else:
                        prev[:] = msg
            else:
                done = max_iterations
        finally:
            if bar is not None:
                bar.stop()
        if max_iterations == 0:
            done = 0
        converged = max_iterations > 0 and step < tol
        if step != step:
            raise FloatingPointError("TrueSkillThroughTime: a posterior became NaN while smoothing; please report the "
                                     "history and parameters (it is a bug).")
        if max_iterations > 0 and not converged:
            warnings.warn(f"TrueSkillThroughTime: the posteriors still moved by {step:.3g} after max_iterations="
                          f"{max_iterations} sweeps (tolerance={tol!r}).", ConvergenceWarning, stacklevel=2)
        if unconverged[0]:
            warnings.warn(f"TrueSkillThroughTime: expectation propagation inside a match missed tolerance="
                          f"{MATCH_TOLERANCE!r} within {MATCH_ITERATIONS} sweeps {int(unconverged[0])} times; those "
                          "updates use the last sweep.", ConvergenceWarning, stacklevel=2)
        loo = np.empty(n_m)
        leave_one_out(ms, ts, tr, wt, slot_sv, single, fwd[0], fwd[1], bwd[0], bwd[1], lik[0], lik[1], msg[0],
                       msg[1], beta2, f._margin, loo, offset, outcome_var)
        chain = np.empty(n_m)
        chain[order] = online  # back to the history's order
        return Smoothed(self, packed.players, packed.time_is_date and not unknown.all(), sv_player, sv_time,
                        order[sv_match], sv_games, sv_prev, sv_next, fwd, bwd, lik, chain, float(loo.sum()), done,
                        float(step) if max_iterations > 0 else math.nan, converged, n_m, filtered, (ms, ts, pl, st))

    _correct_level = True  # switches for tests and benchmarks that compare with the reference's plain sweeps
    _accelerate = True

    def _level(self, ms: NDArray[np.int64], ts: NDArray[np.int64], invariant: NDArray[np.bool_],
               hats: tuple[NDArray[np.int64], NDArray[np.float64]], g: int, slot_sv: NDArray[np.int64], sv_prev: NDArray[np.int64],
               sv_next: NDArray[np.int64], sv_time: NDArray[np.float64], prior_p: float, prior_t: float,
               gamma2: float, fwd: NDArray[np.float64], bwd: NDArray[np.float64], lik: NDArray[np.float64],
               msg: NDArray[np.float64]) -> None:
        """Move the whole field's level at once, where EP's local updates would take hundreds of sweeps.

        A match compares players of one batch, so adding ``c(t)`` to every skill at time ``t`` (and moving each
        match's messages with it) changes no match's fit when its teams' total weights are equal (any match
        between single players of full weight); only the new players' priors and the random walk fix the level.
        Local updates move that level by a small fraction per sweep (on ``atp_singles`` the field's level in 2020
        still fell by 0.02 a sweep after 64 sweeps).  This step takes the ``c`` of a
        piecewise-linear form over :data:`LEVEL_KNOTS` batch times that minimizes the prior and walk terms at the
        current posterior means (:func:`level_system`; a quadratic, solved exactly; the messages of matches
        between teams of unequal weight enter it as fixed observations), moves the other messages by it and
        recomputes the chain messages.  A fixed point of the sweeps is one of this step too (``c = 0``).
        """
        mu = np.asarray((fwd[1] + bwd[1] + lik[1]) / (fwd[0] + bwd[0] + lik[0]), dtype=np.float64)
        a = np.empty((g, g))
        rhs = np.empty(g)
        hat_b, hat_u = hats
        level_system(ms, ts, invariant, slot_sv, sv_prev, sv_time, mu, msg[0], msg[1], hat_b, hat_u, float(self.mu),
                      prior_p, gamma2, a, rhs)
        x = solve_spd(a, rhs)
        c = x[0] + 0.0 * hat_u if g == 1 else (1.0 - hat_u) * x[hat_b] + hat_u * x[np.minimum(hat_b + 1, g - 1)]
        # Then the common level exactly: it is the direction the walk does not see, whose curvature (the
        # priors' precisions) a Cholesky pivot can lose beside the walk's (sigma 1e6 against gamma 0.1).
        c += level_constant(ms, ts, invariant, slot_sv, sv_prev, mu, msg[0], msg[1], c, float(self.mu), prior_p)
        if not np.all(np.isfinite(c)):
            return
        shift_levels(ms, ts, invariant, slot_sv, c, lik[1], msg[0], msg[1])
        chain_messages(sv_prev, sv_next, sv_time, prior_p, prior_t, gamma2, fwd[0], fwd[1], bwd[0], bwd[1],
                        lik[0], lik[1])

    @staticmethod
    def _refuse_draws(packed: Matches) -> None:
        m = first_draw(packed.match_start, packed.team_rank)
        if m >= 0:
            raise ValueError(f"match {m} has a draw, which has probability 0 with 'draw_probability' = 0; give "
                             "TrueSkillThroughTime a positive draw_probability.")
