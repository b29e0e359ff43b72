"""The leave-out replay behind :func:`podium.audit`, and the blocks of tested games it predicts.

Every test has the same shape: a set ``S`` of games whose results are suspected, and the probability of
results at least as one-sided as those observed when each game in ``S`` is predicted from the players'
**other** games.  A replay that includes ``S`` is useless here: after a friend has thrown ten games, the model
already expects the eleventh.  So the suspected games of every candidate are taken out of one replay of the
history (:meth:`_Replay.without`), and each is predicted from its players' ratings without them
(:class:`_Ablated`): the rating after the player's last kept game before it or, for models that say how a
skill moves (TrueSkill's ``tau`` and ``drift``) and where it is more precise, the rating after all the
player's kept games, its variance widened by those dynamics for every game and unit of time in between.

A rating is an estimate, and one player's error plays in all its tested games at once: the tests condition
on the tested players' skills (``mu + sigma z``, one ``z`` per player for all its tested games, shared by the
teammates and opponents who recur beside it) and average over ``z`` by Gauss-Hermite quadrature
(:class:`_Block`).  Treating the games as independent given the ratings made honest histories raise flags.

The replay is :mod:`podium.evaluation.replay`'s (its structure, its replay from the prior, its pair
probabilities), so that the audit and the evaluation read the same predictions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from ..data.matches import Matches
from ..evaluation.replay import pair_structure, ratings_before, replay_model, slot_view, Structure, pair_log_probabilities
from ..models.base import Model
from ..ordering.numerics import jit


@jit
def _before_kept(player: NDArray[np.int64], match_of_slot: NDArray[np.int64], kept_match: NDArray[np.bool_],
                 after_mu: NDArray[np.float64], after_sigma: NDArray[np.float64], time: NDArray[np.float64],
                 prior_mu: float, prior_sigma: float
                 ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64], NDArray[np.float64]]:
    """Each slot's rating before its match from the kept matches only: its player's rating after their last
    kept match before this one (``after_*`` is read at kept slots), or the prior; how many of the player's
    games since that one were taken out; and that match's time (NaN: none, or untimed)."""
    n_players = 0
    for p in range(len(player)):
        n_players = max(n_players, player[p] + 1)
    last = np.full(n_players, -1, dtype=np.int64)
    skipped = np.zeros(n_players, dtype=np.int64)
    mu = np.empty(len(player))
    sigma = np.empty(len(player))
    since = np.empty(len(player), dtype=np.int64)
    when = np.empty(len(player))
    for p in range(len(player)):
        i = player[p]
        q = last[i]
        if q < 0:
            mu[p], sigma[p], when[p] = prior_mu, prior_sigma, np.nan
        else:
            mu[p], sigma[p], when[p] = after_mu[q], after_sigma[q], time[match_of_slot[q]]
        since[p] = skipped[i]
        if kept_match[match_of_slot[p]]:  # a player appears once per match, so this is read by later matches only
            last[i] = p
            skipped[i] = 0
        else:
            skipped[i] += 1
    return mu, sigma, since, when


@jit
def _expand(pair_start: NDArray[np.int64], a: NDArray[np.int64], b: NDArray[np.int64],
            outcome: NDArray[np.int64], p_a: NDArray[np.float64], team_start: NDArray[np.int64],
            player: NDArray[np.int64], wanted: NDArray[np.bool_]
            ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.bool_], NDArray[np.float64]]:
    """Every decided meeting of two players on opposite teams of a wanted match: ``(match, x, y, x won, P(x
    ahead | decided))``, with ``x < y``."""
    total = 0
    for m in range(len(pair_start) - 1):
        if wanted[m]:
            for k in range(pair_start[m], pair_start[m + 1]):
                if outcome[k] != 0:
                    total += (team_start[a[k] + 1] - team_start[a[k]]) * (team_start[b[k] + 1] - team_start[b[k]])
    match = np.empty(total, dtype=np.int64)
    x = np.empty(total, dtype=np.int64)
    y = np.empty(total, dtype=np.int64)
    won = np.empty(total, dtype=np.bool_)
    prob = np.empty(total)
    n = 0
    for m in range(len(pair_start) - 1):
        if not wanted[m]:
            continue
        for k in range(pair_start[m], pair_start[m + 1]):
            if outcome[k] == 0:
                continue
            for i in range(team_start[a[k]], team_start[a[k] + 1]):
                for j in range(team_start[b[k]], team_start[b[k] + 1]):
                    pi, pj = player[i], player[j]
                    match[n] = m
                    if pi < pj:
                        x[n], y[n], won[n], prob[n] = pi, pj, outcome[k] > 0, p_a[k]
                    else:
                        x[n], y[n], won[n], prob[n] = pj, pi, outcome[k] < 0, 1.0 - p_a[k]
                    n += 1
    return match, x, y, won, prob


class _Replay(Structure):
    """One replay of a history: its structure (the pairs, each slot's previous slot and games before), each
    slot's rating before its match (``mu``, ``sigma``) and after it (``after_*``), and every meeting's
    prediction."""

    def __init__(self, model: Model, matches: Matches) -> None:
        super().__init__(matches, 0, 0)
        self.model = model
        self.match_of_slot = np.repeat(np.repeat(np.arange(len(matches)), np.diff(matches.match_start)),
                                       np.diff(matches.team_start))
        history, _ = replay_model(model, matches)
        self.after_mu, self.after_sigma = history.mu, history.sigma
        self.mu, self.sigma = ratings_before(model, self, history)
        self.p_a = self._p_ahead(self.mu, self.sigma)

    def _p_ahead(self, mu: NDArray[np.float64], sigma: NDArray[np.float64]) -> NDArray[np.float64]:
        """Per team pair, ``P(a ahead of b | the order of a and b is decided)`` (draws set aside)."""
        if len(self.a) == 0:
            return np.zeros(0)
        la, lb = pair_log_probabilities(self.model, self.slot_view, mu, sigma, self.a, self.b)
        return _decided(la, lb)

    def meetings(self, wanted: NDArray[np.bool_], p_a: NDArray[np.float64] | None = None
                 ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.bool_], NDArray[np.float64]]:
        return _expand(self.pair_start, self.a, self.b, self.outcome, self.p_a if p_a is None else p_a,
                       self.matches.team_start, self.matches.player, wanted)

    def without(self, removed: NDArray[np.bool_]) -> _Ablated:
        """The ratings from the matches not ``removed`` (the kept matches replayed alone)."""
        kept = np.flatnonzero(~removed)
        after_mu = np.zeros(len(self.matches.player))
        after_sigma = np.zeros(len(self.matches.player))
        slots = self.matches.slots_of(kept)
        history, state = replay_model(self.model, self.matches.take(kept))
        after_mu[slots], after_sigma[slots] = history.mu, history.sigma
        prior = self.model.prior
        mu, sigma, since, when = _before_kept(self.matches.player, self.match_of_slot, ~removed, after_mu,
                                              after_sigma, self.matches.time, float(prior.mu), float(prior.sigma))
        return _Ablated(self, mu, sigma, since, when, state.mu, state.sigma, state.last_time)


class _Ablated:
    """Ratings from a history with some matches taken out, and the skill they give a player at any of its games.

    ``mu, sigma``: each slot's rating before its match from the kept matches before it; ``since``: how many of
    the player's games since its last kept one were taken out; ``when``: that kept match's time.  ``end_*``:
    each player's rating after all its kept matches.
    """

    def __init__(self, r: _Replay, mu: NDArray[np.float64], sigma: NDArray[np.float64], since: NDArray[np.int64],
                 when: NDArray[np.float64], end_mu: NDArray[np.float64], end_sigma: NDArray[np.float64],
                 end_time: NDArray[np.float64]) -> None:
        self.r = r
        self.mu, self.sigma, self.since, self.when = mu, sigma, since, when
        self.end_mu, self.end_sigma, self.end_time = end_mu, end_sigma, end_time
        self.dynamics = r.model._skill_dynamics()
        self.total = np.bincount(r.matches.player, minlength=len(r.matches.players))

    def skill(self, slots: NDArray[np.int64], anchor: NDArray[np.int64] | None = None
              ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The skill of each slot's player at that slot's match, from its other games.

        The player's rating after its last kept game before the ``anchor`` slot's match (default: the slot's
        own), or, where it is more precise, its rating after all its kept games.  Where the model says how a skill
        moves (TrueSkill's ``tau`` per game and ``drift`` per unit of time), the variance grows by that much for
        every game (kept or taken out) and unit of time between the rating and this match: a history's end rating
        is a filter, not a smoother, so it is used whole or not at all.
        """
        anchor = slots if anchor is None else anchor
        mu, var = self.mu[anchor].copy(), self.sigma[anchor] ** 2
        if self.dynamics is None:
            return mu, np.sqrt(var)
        per_game, per_time = self.dynamics
        r = self.r
        times = r.matches.time[r.match_of_slot[slots]]
        # Games between the rating's last kept game (the anchor's, `since` games back) and this one.
        rated = r.games[anchor] - self.since[anchor] - 1
        gap = np.abs(r.games[slots] - rated) - (rated < r.games[slots])
        elapsed = np.nan_to_num(np.abs(times - self.when[anchor]))
        var = var + per_game * np.maximum(gap, 0) + per_time * elapsed
        player = r.matches.player[slots]
        later = self.total[player] - r.games[slots] - 1  # every later game, kept or not
        after = np.nan_to_num(np.maximum(self.end_time[player] - times, 0.0))
        end_var = self.end_sigma[player] ** 2 + per_game * later + per_time * after
        better = end_var < var
        return np.where(better, self.end_mu[player], mu), np.sqrt(np.where(better, end_var, var))


def _decided(la: NDArray[np.float64], lb: NDArray[np.float64]) -> NDArray[np.float64]:
    """``P(a ahead | the order of a and b is decided)`` from ``log P(a ahead)`` and ``log P(b ahead)``."""
    with np.errstate(over="ignore", invalid="ignore"):
        p = 1.0 / (1.0 + np.exp(lb - la))
    return np.where(np.isnan(p), 0.5, p)


def _nodes(k: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Gauss-Hermite nodes and weights for the expectation over a standard normal."""
    z, w = np.polynomial.hermite_e.hermegauss(k)
    return z, w / w.sum()


class _Block:
    """A few matches predicted from given ratings, again with some players' skills set to fixed values.

    Ratings from other games are estimates: a player's skill is ``N(mu, sigma^2)`` to the model, and that one
    uncertain skill plays in every tested game, so the games are not independent given the ratings (a player
    whose rating overstates it loses more of them at once).  The tests therefore condition on the tested
    players' skills, ``mu + sigma z`` in each of their games for a common ``z`` (the error of a rating persists
    from game to game), and average over ``z`` by Gauss-Hermite quadrature.  Players who recur in the tested games
    beside them (a fixed partner, the same opponents) share that error too: a tested player's recurring teammates
    take its ``z`` (:meth:`recurring`), and the tests give recurring opponents a ``z`` of their own; one ``z`` for
    several players makes their errors move together, which spreads the outcomes at least as much as
    independent errors would.  Players met once keep their uncertainty in the model's prediction, as in any game.
    """

    def __init__(self, r: _Replay, ms: NDArray[np.int64], ab: _Ablated, focal: Sequence[int],
                 anchor: int | None = None) -> None:
        self.model = r.model
        self.ms = ms
        self.sub = r.matches.take(ms)
        slots = r.matches.slots_of(ms)
        self.mu, self.sigma = ab.mu[slots].copy(), ab.sigma[slots].copy()
        for player in focal:  # the tested players at their skill from all their other games (_Ablated.skill)
            at = np.flatnonzero(self.sub.player == player)
            self.mu[at], self.sigma[at] = ab.skill(slots[at], None if anchor is None else np.full(len(at), anchor))
        self.pair_start, self.a, self.b, self.outcome = pair_structure(self.sub.match_start, self.sub.team_rank)
        self.team_of_slot = np.repeat(np.arange(len(self.sub.team_rank)), np.diff(self.sub.team_start))
        self.match_of_team = np.repeat(np.arange(len(ms)), np.diff(self.sub.match_start))
        self.pair_match = np.repeat(np.arange(len(ms)), np.diff(self.pair_start))

    def _teams_of(self, players: Sequence[int]) -> NDArray[np.bool_]:
        has = np.zeros(len(self.sub.team_rank), dtype=np.bool_)
        has[self.team_of_slot[np.isin(self.sub.player, np.asarray(players, dtype=np.int64))]] = True
        return has

    def side(self, *players: int) -> NDArray[np.int64]:
        """Per team pair: +1 if any of ``players`` is in team ``a``, -1 if in team ``b``, 0 if in neither."""
        has = self._teams_of(players).astype(np.int64)
        return has[self.a] - has[self.b]

    def recurring(self, players: Sequence[int], *, opponents: bool = False) -> list[int]:
        """The other players on a team with any of ``players`` (with ``opponents``: on a team facing one) in at
        least two of the block's matches."""
        own = self._teams_of(players)
        if opponents:
            in_match = np.zeros(len(self.ms), dtype=np.bool_)
            in_match[self.match_of_team[own]] = True
            own = in_match[self.match_of_team] & ~own
        slot_ok = own[self.team_of_slot] & ~np.isin(self.sub.player, np.asarray(players, dtype=np.int64))
        found, counts = np.unique(self.sub.player[slot_ok], return_counts=True)
        return [int(p) for p in found[counts >= 2]]

    def probs(self, configs: Sequence[dict[int, float]], groups: Mapping[int, Sequence[int]] | None = None
              ) -> NDArray[np.float64]:
        """``P(a ahead | decided)`` per team pair (columns) for each configuration (rows) of ``{key: z}``: the
        players of ``groups[key]`` (default: the player ``key`` alone) at skill ``mu + sigma z``, with no
        uncertainty left."""
        groups = groups or {}
        n, slots = len(self.ms), len(self.sub.player)
        where = {key: np.flatnonzero(np.isin(self.sub.player, np.asarray(groups.get(key, (key,)), dtype=np.int64)))
                 for key in (configs[0] if configs else {})}
        tiled = self.sub.take(np.tile(np.arange(n), len(configs)))
        mu, sigma = np.tile(self.mu, len(configs)), np.tile(self.sigma, len(configs))
        for c, config in enumerate(configs):
            for key, z in config.items():
                at = c * slots + where[key]
                mu[at] += sigma[at] * z
                sigma[at] = 0.0
        _, a, b, _ = pair_structure(tiled.match_start, tiled.team_rank)
        la, lb = pair_log_probabilities(self.model, slot_view(tiled), mu, sigma, a, b)
        return _decided(la, lb).reshape(len(configs), -1)

