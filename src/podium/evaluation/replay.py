"""The prequential replay behind :func:`podium.evaluate`: a history's structure, shared by every model, and each
model's predictions over it, every match predicted from the ratings before it.

Predictions use the ratings as they stand before the match, as ``model.win_probabilities(teams, ratings)``
does: TrueSkill's dynamics (``tau``, ``drift``) are added only when the match is rated.

podium's models are evaluated by their compiled replay: one pass rates the history and keeps every player's
rating after each match, the ratings before each match are read off that, and the pair probabilities are
computed in one compiled loop -- seconds for 200,000 matches.  Any other object with podium's
``rate(match, ratings)`` and ``win_probabilities(teams, ratings)`` (and optionally ``log_likelihood`` and
``quality``) is evaluated match by match in Python, which is how other libraries are compared side by side.
A whole-history smoother (:class:`podium.TrueSkillThroughTime`) gives its evidence per match instead.

The structure, the replay from the prior and :func:`pair_log_probabilities` also serve :func:`podium.audit`
(:mod:`podium.integrity.replay`).  The metrics and the report are :mod:`podium.evaluation.prequential`'s.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from ..data.match import Match
from ..data.matches import Matches
from ..engine.union_find import connected_before
from ..kernels.common import History, State
from ..models.base import Model
from ..models.through_time import TrueSkillThroughTime
from ..ordering import density_code, log_win_pair
from ..ordering.numerics import jit
from .contests import team_strengths_from_pairs

__all__ = ["Rater", "pair_log_probabilities"]


@runtime_checkable
class Rater(Protocol):
    """What :func:`evaluate` needs of a model that is not a podium model (an adapter for another library).

    ``ratings`` maps the players seen so far to whatever rating objects the rater uses; players missing from
    it are new.  ``log_likelihood(match, ratings)`` and ``quality(teams, ratings[, weights])`` are used when
    present (``weights`` is passed only for matches with partial play).
    """

    def rate(self, match: Match, ratings: Mapping[str, Any]) -> Mapping[str, Any]: ...

    def win_probabilities(self, teams: Sequence[Sequence[str]], ratings: Mapping[str, Any],
                          weights: Sequence[Sequence[float]] | None = None) -> Sequence[float]: ...


# -- the history's structure, shared by every model ---------------------------------------------------------
@jit
def _slot_history(player: NDArray[np.int64], n_players: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """For each player slot: the slot of the same player's previous match (-1 if none), and how many
    matches that player had played before."""
    prev = np.empty(len(player), dtype=np.int64)
    games = np.empty(len(player), dtype=np.int64)
    last = np.full(n_players, -1, dtype=np.int64)
    count = np.zeros(n_players, dtype=np.int64)
    for p in range(len(player)):
        i = player[p]
        prev[p] = last[i]
        games[p] = count[i]
        last[i] = p
        count[i] += 1
    return prev, games


@jit
def pair_structure(match_start: NDArray[np.int64], team_rank: NDArray[np.int64]
                    ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Every pair ``a < b`` of teams of every match, grouped by match: ``(pair_start[M+1], a, b, outcome)``.

    ``outcome`` is ``+1`` when ``a`` finished ahead of ``b`` (a lower rank, or ``a`` finished and ``b`` did
    not), ``-1`` when ``b`` did, and ``0`` when the order is not decided (a draw, or two non-finishers).
    """
    n_matches = len(match_start) - 1
    pair_start = np.empty(n_matches + 1, dtype=np.int64)
    pair_start[0] = 0
    for m in range(n_matches):
        n = match_start[m + 1] - match_start[m]
        pair_start[m + 1] = pair_start[m] + n * (n - 1) // 2
    total = pair_start[n_matches]
    a = np.empty(total, dtype=np.int64)
    b = np.empty(total, dtype=np.int64)
    outcome = np.empty(total, dtype=np.int64)
    k = 0
    for m in range(n_matches):
        for i in range(match_start[m], match_start[m + 1]):
            for j in range(i + 1, match_start[m + 1]):
                ri, rj = team_rank[i], team_rank[j]
                if ri >= 0 and rj >= 0:
                    o = 1 if ri < rj else (-1 if rj < ri else 0)
                elif ri >= 0:
                    o = 1
                elif rj >= 0:
                    o = -1
                else:
                    o = 0
                a[k], b[k], outcome[k] = i, j, o
                k += 1
    return pair_start, a, b, outcome


@jit
def _pair_log_probs(kind: int, shape: float, loc: NDArray[np.float64], scale: NDArray[np.float64],
                    a: NDArray[np.int64], b: NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``log P(team a ahead of team b)`` and ``log P(b ahead of a)`` for every pair, from the teams'
    independent predictive performances (:func:`podium.ordering.log_win_pair`)."""
    la = np.empty(len(a))
    lb = np.empty(len(a))
    for k in range(len(a)):
        la[k], lb[k] = log_win_pair(kind, shape, loc[a[k]], scale[a[k]], loc[b[k]], scale[b[k]])
    return la, lb


def slot_view(matches: Matches) -> Matches:
    """The same history with one player per slot, to read per-slot ratings (slot ``p``'s player is ``p``)."""
    return Matches(matches.match_start, matches.team_start, matches.team_rank, np.arange(len(matches.player)),
                   matches.weight, matches.time, matches.players, matches.ids, matches.meta, validate=False,
                   has_weights=matches.has_weights,
                   **matches.extras())


class Structure:
    """What every model's evaluation shares: the pairs, each slot's previous slot (``prev``) and how many matches
    its player had played before (``games``), the scored matches.

    ``scored`` matches count in the log-likelihood, ``counted`` pairs in the pair metrics; with
    ``connected_only`` a pair counts only when every player of both teams was in one component before the
    match, and a match only when all of its players were (:func:`podium.engine.components.connected_before`).
    """

    def __init__(self, matches: Matches, start: int, min_games: int, connected_only: bool = False) -> None:
        self.matches = matches
        self.start = start
        n_players = len(matches.players)
        self.prev, self.games = _slot_history(matches.player, n_players)
        self.pair_start, self.a, self.b, self.outcome = pair_structure(matches.match_start, matches.team_rank)
        n = len(matches)
        slots = matches.team_start[matches.match_start]
        fewest = np.minimum.reduceat(self.games, slots[:-1]) if n else np.zeros(0, np.int64)
        chosen = (np.arange(n) >= start) & (fewest >= min_games)
        self.pair_match = np.repeat(np.arange(n), np.diff(self.pair_start))
        candidates = (self.outcome != 0) & chosen[self.pair_match]
        if connected_only:
            pair_ok, match_ok = connected_before(matches.match_start, matches.team_start, matches.player, n_players)
        else:
            pair_ok, match_ok = np.ones(len(self.a), dtype=bool), np.ones(n, dtype=bool)
        self.scored = chosen & match_ok
        self.counted = candidates & pair_ok
        self.dropped_pairs = int(np.count_nonzero(candidates & ~pair_ok))  # decided pairs left out as unconnected
        self.dropped_matches = int(np.count_nonzero(chosen & ~match_ok))
        decided = np.zeros(n, dtype=bool)
        decided[self.pair_match[self.counted]] = True
        self.eligible = decided  # matches with at least one counted pair
        self.predicted = self.scored | decided  # what a match-by-match rater must predict
        self.slot_view = slot_view(matches)


# -- each model's predictions ---------------------------------------------------------------------------------
@dataclass
class _Predictions:
    """One model's predictions over a history."""

    log_ahead_a: NDArray[np.float64]          # log P(a ahead of b), per pair
    log_ahead_b: NDArray[np.float64]          # log P(b ahead of a)
    log_likelihood: NDArray[np.float64] | None  # per match, None where the model defines none
    tightness: NDArray[np.float64] | None     # per match, higher = tighter: log quality, or the favourite's
    #                                           probability of losing (only its order within a model matters)
    seconds: float
    pairs: bool = True                        # False: a smoother, which predicts no pair before its match
    evidence: float | None = None             # a smoother's log evidence per scored match (see _predict_smoother)
    strength: NDArray[np.float64] | None = None  # per team, its rating before the match (the contest metrics)


# -- the replay -------------------------------------------------------------------------------------------------
def replay_model(model: Model, matches: Matches, loglik: NDArray[np.float64] | None = None) -> tuple[History, State]:
    """Replay ``matches`` from the prior: each slot's rating after its match, and every player's state after
    the last; each match's log-likelihood is written into ``loglik`` if given."""
    n_players = len(matches.players)
    if len(matches):
        model._check_team_count(int(matches.n_teams.max()))
    prior = model.prior
    state = model._new_state(np.full(n_players, prior.mu), np.full(n_players, prior.sigma))
    history = History(len(matches.player))
    model._replay(matches, np.arange(n_players), state, history, loglik)
    return history, state


def ratings_before(model: Model, s: Structure, history: History
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Each slot's rating before its match, from the replay ``history`` of ``s.matches``: its player's after
    the previous match, or the prior."""
    prior = model.prior
    first = s.prev < 0
    mu = np.where(first, prior.mu, history.mu[s.prev])
    sigma = np.where(first, prior.sigma, history.sigma[s.prev])
    return mu, sigma


def pair_log_probabilities(model: Model, slot_view: Matches, mu: NDArray[np.float64], sigma: NDArray[np.float64],
                           a: NDArray[np.int64], b: NDArray[np.int64]
                           ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(log P(team a[k] ahead of b[k]), log P(b[k] ahead of a[k]))`` for each pair, each as a two-team match of
    its own, from each slot's rating ``mu[p], sigma[p]`` (``slot_view``: one player per slot, see :class:`Structure`).

    The model's own pair probability where it has one (a spread or deviation shared by the pair), else that of
    the teams' independent predictive performances (:func:`podium.ordering.log_win_pair`).  Evaluation's pair
    metrics and :func:`podium.audit`'s tests both read their probabilities here.
    """
    pairs = model._pair_predictions(slot_view, mu, sigma, a, b)
    if pairs is None:
        loc, scale, density, shape = model._predictive(slot_view, mu, sigma)
        # Two teams alone: Plackett-Luce's elimination order agrees with its victory order.
        kind = density_code(density.removesuffix("-elimination"), shape)
        pairs = _pair_log_probs(kind, float(shape), loc, scale, a, b)
    return pairs


def _predict_podium(model: Model, s: Structure, want_ll: bool, want_tight: bool,
                    want_strength: bool = False) -> _Predictions:
    began = time.perf_counter()
    loglik = np.empty(len(s.matches)) if want_ll else None
    history, _ = replay_model(model, s.matches, loglik)
    mu, sigma = ratings_before(model, s, history)
    la, lb = pair_log_probabilities(model, s.slot_view, mu, sigma, s.a, s.b)
    tight = None
    if want_tight:
        log_quality = getattr(model, "_log_qualities", None)
        # Ranked in log space: a 200-team field's quality underflows exp to 0 and would tie every match.
        tight = log_quality(s.slot_view, mu, sigma) if log_quality is not None else _uncertainty(s, la, lb)
    # A team's rating for the contest metrics: the location of its predicted performance (for one player an
    # increasing function of mu), the model's own account of a team's strength.
    strength = model._predictive(s.slot_view, mu, sigma)[0] if want_strength else None
    return _Predictions(la, lb, loglik, tight, time.perf_counter() - began, strength=strength)


def _uncertainty(s: Structure, la: NDArray[np.float64], lb: NDArray[np.float64]) -> NDArray[np.float64]:
    """Per match, the mean over its pairs of the probability that the predicted favourite loses."""
    if len(la) == 0:
        return np.zeros(len(s.matches))
    upset = np.exp(np.minimum(la, lb))
    return np.add.reduceat(upset, s.pair_start[:-1]) / np.diff(s.pair_start)


def _predict_rater(rater: Any, s: Structure, want_ll: bool, want_tight: bool,
                   want_strength: bool = False) -> _Predictions:
    """Evaluate a duck-typed :class:`Rater` match by match (for other libraries)."""
    began = time.perf_counter()
    matches = s.matches
    la = np.empty(len(s.a))
    lb = np.empty(len(s.a))
    log_lik = getattr(rater, "log_likelihood", None) if want_ll else None
    quality = getattr(rater, "quality", None) if want_tight else None
    loglik = np.empty(len(matches))
    qual = np.empty(len(matches))
    ratings: dict[str, Any] = {}
    la[:] = np.nan
    lb[:] = np.nan
    loglik[:] = np.nan
    qual[:] = np.nan
    for m, match in enumerate(matches):
        before = {p: ratings[p] for p in match.players if p in ratings}
        if not s.predicted[m]:  # rated, not predicted: a peer's predictions cost as much as its updates
            ratings.update(rater.rate(match, before))
            continue
        t0 = int(matches.match_start[m])
        weights = match.team_weights()
        for k in range(int(s.pair_start[m]), int(s.pair_start[m + 1])):
            i, j = int(s.a[k]) - t0, int(s.b[k]) - t0
            pair_weights = [weights[i], weights[j]] if match.weights is not None else None
            p = rater.win_probabilities([match.teams[i], match.teams[j]], before, pair_weights)
            if not (0.0 <= p[0] <= 1.0 and 0.0 <= p[1] <= 1.0):
                raise ValueError(f"{type(rater).__name__}.win_probabilities gave {list(p)!r} for match {m}; "
                                 "probabilities must lie in [0, 1].")
            la[k] = math.log(p[0]) if p[0] > 0 else -np.inf
            lb[k] = math.log(p[1]) if p[1] > 0 else -np.inf
        if log_lik is not None:
            loglik[m] = log_lik(match, before)
        if quality is not None:  # with the match's partial-play weights when it has them
            qual[m] = quality(match.teams, before) if match.weights is None else quality(match.teams, before, match.weights)
        ratings.update(rater.rate(match, before))
    tight = qual if quality is not None else (_uncertainty(s, la, lb) if want_tight else None)
    # no rating to read: each team's mean predicted probability of finishing ahead of the others
    strength = team_strengths_from_pairs(matches, s.a, s.b, la, lb) if want_strength else None
    return _Predictions(la, lb, loglik if log_lik is not None else None, tight, time.perf_counter() - began,
                        strength=strength)


def _predict_smoother(model: TrueSkillThroughTime, s: Structure) -> _Predictions:
    """A whole-history smoother's score: its log evidence per match of the scored part.

    The evidence's chain-rule terms ``log P(outcome_m | matches before m)`` (:attr:`Smoothed.match_log_evidence`)
    averaged over the matches from ``start`` on: with ``start = 0`` that is ``log P(all outcomes)`` per match,
    otherwise ``log P(outcomes from start on | outcomes before)`` per match, the held-out score of
    :func:`podium.fit`.  A smoother uses every match to estimate every skill, so it makes no prediction before
    a match: its pair metrics are NaN.  ``min_games`` does not apply.  The terms are summed from ``start`` in
    the history's order, so the history should be in time order (as every evaluation assumes).
    """
    began = time.perf_counter()
    matches, start = s.matches, s.start
    terms = model.smooth(matches, max_iterations=0).match_log_evidence[start:] if len(matches) else np.zeros(0)
    nan = np.full(len(s.a), np.nan)
    return _Predictions(nan, nan, None, None, time.perf_counter() - began, pairs=False, evidence=_mean(terms))


def _mean(x: NDArray[np.float64]) -> float:
    return float(np.mean(x)) if len(x) else math.nan


def _check_model(model: Any) -> None:
    """A TypeError unless ``model`` is a podium model instance, a smoother or a :class:`Rater`."""
    if isinstance(model, type):
        raise TypeError(f"'models' values must be model instances; got the class {model.__name__}. "
                        f"Pass {model.__name__}() instead.")
    if not isinstance(model, (Model, TrueSkillThroughTime, Rater)):
        raise TypeError(
            f"'models' values must be podium models or objects with rate(match, ratings) and "
            f"win_probabilities(teams, ratings). Got {type(model).__name__}: {model!r:.80}.")


def _predict(model: Any, s: Structure, want_ll: bool = True, want_tight: bool = True,
             want_strength: bool = False) -> _Predictions:
    """One model's predictions over ``s``: pair probabilities always, the per-match log-likelihoods, the
    tightness of each match and each team's rating before its match (:mod:`podium.evaluation.contests`) when
    wanted (a smoother has no rating before a match)."""
    _check_model(model)
    if isinstance(model, Model):
        return _predict_podium(model, s, want_ll, want_tight, want_strength)
    if isinstance(model, TrueSkillThroughTime):
        return _predict_smoother(model, s)
    return _predict_rater(model, s, want_ll, want_tight, want_strength)

