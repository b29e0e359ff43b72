"""Abuse signals: results that a model's own predictions say are too improbable to be honest play.

The note on generalizing Elo (section 4) names how people game a rating system: feeding a friend wins (or
trading them), farming rating from throwaway accounts, and sandbagging (losing on purpose to meet weaker
opponents, then climbing back).  :func:`audit` tests a history for each, with a p-value under the model's own
probabilities and one multiple-testing correction over every pair, player and window it looked at.

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

- **One-sided pair** (win trading, feeding): two players who met on opposite sides in at least
  ``min_meetings`` decided games.  ``W`` = the first's wins, a Poisson-binomial given the skills; the p-value
  is two-sided, ``2 min(P(W >= w), P(W <= w))``.
- **Farming**: a player ``x`` with at least ``min_satellites`` *satellites*: accounts with between 2 and
  ``new_games`` games in all, at least ``satellite_share`` of them against ``x`` (a game against several
  opposing teams counts a share against each: a race is not a game against every rival in it).  The p-value
  is ``P(W >= w)`` for ``x``'s wins over its satellites; satellites that played ``x`` together are taken as
  one, each game once.  A satellite with nothing else to its name is predicted at the prior, as a new
  account is.
- **Sandbagging**: a window of a player's consecutive games (lengths ``windows``, starting at multiples of a
  quarter of the length, after its first ``established`` games) in which it scored far below what its rating
  from its other games predicts (the games before the window and the ``2 L`` after it), followed by a rise:
  within those ``2 L`` games its rating (the model's, as replayed) regains at least a third of what it lost
  in the window.  A game's score is the share of decided opponents beaten; the p-value is the exact
  Poisson-binomial lower tail where each game has one opponent, else Hoeffding's bound for bounded
  independent scores, ``exp(-L KL(mean score || mean p))`` (Hoeffding 1963, Theorem 1), averaged over the
  skills.

Pairs and windows are screened on the ordinary replay's residuals, farming candidates by their schedule; only
those that pass are computed (the most suspicious first, up to ``budget`` of the history taken out), but the
correction counts every hypothesis of every kind (each eligible pair, each farmer candidate, each window
scanned), so the screen costs power, never validity.  Each kind gets an equal share of ``alpha`` and Holm's
step-down within it (a weighted Bonferroni-Holm), which holds the chance of any false flag in an honest
history at ``alpha`` when the model's probabilities are right.  Models without uncertainty in their ratings
(the Elo family) treat a rating from a few games as exact, and their p-values are too small there: the
default is TrueSkill fitted to the history.  docs/audit.md measures all of it on simulated histories, honest
and abused (:func:`podium.simulate_abuse`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .evaluate import _pair_structure, _slot_history, pair_log_probabilities
from .match import Match, Matches
from .models.base import Model, _History
from .numerics import jit

__all__ = ["Audit", "Flag", "audit"]

KINDS = ("one-sided pair", "farming", "sandbagging")
PAIR_NODES = 12  # Gauss-Hermite nodes per integrated skill (see _Block): two skills for a pair,
FARM_NODES = 10  # the farmer's and each satellite's,
SAND_NODES = 24  # the sandbagger's


@dataclass(frozen=True)
class Flag:
    """One suspicion, with the evidence behind it.

    Attributes
    ----------
    kind : str
        ``"one-sided pair"``, ``"farming"`` or ``"sandbagging"``.
    players : tuple of str
        Who: the pair (the one who won the more first), the farmer then its satellites, or the sandbagger.
    p_value : float
        Probability of results at least as extreme under the model's predictions from the other games.
    adjusted : float
        ``p_value`` after the audit's correction for every hypothesis it considered (:attr:`Audit.tests`):
        Holm's within each kind, each kind given an equal share of ``alpha``.
    matches : tuple of int
        Indices (in the audited history) of the matches that are the evidence.
    match_ids : tuple of (str or None)
        Their ids.
    evidence : str
        The evidence in one sentence.
    details : dict
        The numbers behind it (``games``, ``wins``, ``expected`` and kind-specific ones).
    """

    kind: str
    players: tuple[str, ...]
    p_value: float
    adjusted: float
    matches: tuple[int, ...]
    match_ids: tuple[str | None, ...]
    evidence: str
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Audit:
    """The result of :func:`audit`: the flags raised, most significant first, and what was tested."""

    flags: list[Flag]
    tests: dict[str, int]
    alpha: float
    model: str

    def __len__(self) -> int:
        return len(self.flags)

    def __iter__(self) -> Any:
        return iter(self.flags)

    @property
    def players(self) -> set[str]:
        """Every player named by a flag."""
        return {p for f in self.flags for p in f.players}

    def of_kind(self, kind: str) -> list[Flag]:
        """The flags of one kind."""
        if kind not in KINDS:
            raise ValueError(f"'kind' must be one of {KINDS}. Got {kind!r}.")
        return [f for f in self.flags if f.kind == kind]

    def to_frame(self) -> Any:
        """The flags as a pandas DataFrame (one row per flag)."""
        import pandas as pd

        return pd.DataFrame([{"kind": f.kind, "players": ", ".join(f.players), "p_value": f.p_value,
                              "adjusted": f.adjusted, "matches": len(f.matches), "evidence": f.evidence}
                             for f in self.flags])

    def table(self, title: str | None = None) -> Any:
        """The flags as a rich Table."""
        from rich.table import Table

        tested = ", ".join(f"{n:,} {kind}" for kind, n in self.tests.items())
        table = Table(title=title or f"Audit: {len(self.flags)} flag(s) at alpha = {self.alpha:g}",
                      caption=f"tested: {tested}; p-values adjusted by Holm within each kind, alpha split equally")
        for name, justify in (("kind", "left"), ("players", "left"), ("adjusted p", "right"), ("evidence", "left")):
            table.add_column(name, justify=justify)  # type: ignore[arg-type]
        for f in self.flags:
            shown = ", ".join(f.players[:4]) + (f" (+{len(f.players) - 4})" if len(f.players) > 4 else "")
            table.add_row(f.kind, shown, f"{f.adjusted:.2e}", f.evidence)
        return table

    def __str__(self) -> str:
        lines = [f"{len(self.flags)} flag(s) at alpha = {self.alpha:g} ({self.model})"]
        lines += [f"- {f.kind}: {', '.join(f.players)} (adjusted p = {f.adjusted:.2e}): {f.evidence}" for f in self.flags]
        return "\n".join(lines)


# -- tail probabilities ------------------------------------------------------------------------------------
def poisson_binomial_pmf(p: NDArray[np.float64]) -> NDArray[np.float64]:
    """``P(W = j)``, ``j = 0..n``, for ``W`` the number of successes of independent Bernoulli(``p_i``); for a 2-D
    ``p``, one distribution per row.

    The convolution recursion ``f_k(j) = f_{k-1}(j) (1 - p_k) + f_{k-1}(j - 1) p_k`` (exact, ``O(n^2)``; every
    term is a product of probabilities, so nothing cancels).
    """
    rows = np.clip(np.atleast_2d(np.asarray(p, dtype=np.float64)), 0.0, 1.0)
    f = _pmf_rows(np.ascontiguousarray(rows))
    return f[0] if np.ndim(p) == 1 else f


@jit
def _pmf_rows(p: NDArray[np.float64]) -> NDArray[np.float64]:
    rows, n = p.shape
    f = np.zeros((rows, n + 1))
    for r in range(rows):
        f[r, 0] = 1.0
        for k in range(n):
            pk = p[r, k]
            for j in range(k + 1, 0, -1):
                f[r, j] = f[r, j] * (1.0 - pk) + f[r, j - 1] * pk
            f[r, 0] *= 1.0 - pk
    return f


def tails(pmf: NDArray[np.float64], w: int) -> tuple[float, float]:
    """``(P(W >= w), P(W <= w))`` from the distribution ``pmf`` of ``W``."""
    return float(min(1.0, pmf[w:].sum())), float(min(1.0, pmf[:w + 1].sum()))


def poisson_binomial_tails(p: NDArray[np.float64], w: int) -> tuple[float, float]:
    """``(P(W >= w), P(W <= w))`` for ``W`` a sum of independent Bernoulli(``p_i``) (:func:`poisson_binomial_pmf`)."""
    return tails(poisson_binomial_pmf(p), w)


def hoeffding_lower(score: NDArray[np.float64], p: NDArray[np.float64]) -> float:
    """Hoeffding's bound on ``P(mean score <= observed)`` for independent scores in [0, 1] with means ``p``.

    ``exp(-n KL(s || p))`` with ``s`` the observed mean score and ``p`` the mean of the means, when ``s < p``
    (Hoeffding 1963, Theorem 1, which holds for unequal means through their average); 1 otherwise.
    """
    n = len(score)
    if n == 0:
        return 1.0
    return math.exp(_kl_log_tail(float(np.mean(score)), float(np.mean(p)), n))


def holm(p_values: Sequence[float], total: int) -> NDArray[np.float64]:
    """Holm's step-down adjustment of ``p_values`` among ``total`` hypotheses (the others at p = 1).

    The ``i``-th smallest becomes ``max_{j <= i} min(1, (total - j) p_(j))`` (Holm 1979); hypotheses that were
    screened out sort last with p = 1 and so change nothing for those listed.
    """
    p = np.asarray(p_values, dtype=np.float64)
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (total - np.arange(len(p))) * p[order])
    adjusted = np.empty(len(p))
    adjusted[order] = np.maximum.accumulate(scaled) if len(p) else scaled
    return adjusted


def _adjust(tests: Sequence[_Test], counts: dict[str, int]) -> NDArray[np.float64]:
    """Holm within each kind, each kind given an equal share of ``alpha`` (the kinds with any hypothesis).

    A weighted Bonferroni split followed by Holm's step-down in each part holds the family-wise error over all
    the hypotheses at ``alpha``; a plain Holm over all of them would let the thousands of sandbagging windows
    of a long history drown the handful of pairs.
    """
    active = max(1, sum(1 for n in counts.values() if n > 0))
    adjusted = np.ones(len(tests))
    for kind, n in counts.items():
        at = [i for i, t in enumerate(tests) if t.kind == kind]
        if at:
            adjusted[at] = np.minimum(1.0, active * holm([tests[i].p_value for i in at], max(n, len(at))))
    return adjusted


# -- the replay and its predictions ------------------------------------------------------------------------
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


class _Replay:
    """One replay of a history: each slot's rating before its match, after it, and every meeting's prediction."""

    def __init__(self, model: Model, matches: Matches) -> None:
        self.model = model
        self.matches = matches
        n_players = len(matches.players)
        self.match_of_slot = np.repeat(np.repeat(np.arange(len(matches)), np.diff(matches.match_start)),
                                       np.diff(matches.team_start))
        self.pair_start, self.a, self.b, self.outcome = _pair_structure(matches.match_start, matches.team_rank)
        self.slot_view = Matches(matches.match_start, matches.team_start, matches.team_rank,
                                 np.arange(len(matches.player)), matches.weight, matches.time, matches.players,
                                 validate=False, has_weights=matches.has_weights)
        self.after_mu, self.after_sigma, _ = self._replay(matches)
        prev, self.games_before = _slot_history(matches.player, n_players)
        prior = model.prior
        first = prev < 0
        self.mu = np.where(first, prior.mu, self.after_mu[np.maximum(prev, 0)])
        self.sigma = np.where(first, prior.sigma, self.after_sigma[np.maximum(prev, 0)])
        self.p_a = self._p_ahead(self.mu, self.sigma)

    def _replay(self, matches: Matches) -> tuple[NDArray[np.float64], NDArray[np.float64], Any]:
        n_players = len(matches.players)
        if len(matches):
            self.model._check_team_count(int(matches.n_teams.max()))
        prior = self.model.prior
        state = self.model._new_state(np.full(n_players, prior.mu), np.full(n_players, prior.sigma))
        history = _History(len(matches.player))
        self.model._replay(matches, np.arange(n_players), state, history, None)
        return history.mu, history.sigma, state

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
        after_mu[slots], after_sigma[slots], state = self._replay(self.matches.take(kept))
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
        rated = r.games_before[anchor] - self.since[anchor] - 1
        gap = np.abs(r.games_before[slots] - rated) - (rated < r.games_before[slots])
        elapsed = np.nan_to_num(np.abs(times - self.when[anchor]))
        var = var + per_game * np.maximum(gap, 0) + per_time * elapsed
        player = r.matches.player[slots]
        later = self.total[player] - r.games_before[slots] - 1  # every later game, kept or not
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
        self.pair_start, self.a, self.b, self.outcome = _pair_structure(self.sub.match_start, self.sub.team_rank)
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
        _, a, b, _ = _pair_structure(tiled.match_start, tiled.team_rank)
        view = Matches(tiled.match_start, tiled.team_start, tiled.team_rank, np.arange(len(tiled.player)),
                       tiled.weight, tiled.time, tiled.players, validate=False, has_weights=tiled.has_weights)
        la, lb = pair_log_probabilities(self.model, view, mu, sigma, a, b)
        return _decided(la, lb).reshape(len(configs), -1)


# -- the three tests ---------------------------------------------------------------------------------------
@dataclass
class _Test:
    kind: str
    players: tuple[str, ...]
    p_value: float
    matches: NDArray[np.int64]
    evidence: str
    details: dict[str, Any]


def _group(keys: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """``(order, starts, unique keys)``: ``keys[order]`` sorted, each run of one key from ``starts[i]``."""
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]]) if len(keys) else np.zeros(0, np.int64)
    return order, starts, sorted_keys[starts]


def _pair_tests(r: _Replay, min_meetings: int, budget: int) -> tuple[list[_Test], int]:
    names = r.matches.players
    n_players = len(names)
    everything = np.ones(len(r.matches), dtype=bool)
    match, x, y, outcome, prob = r.meetings(everything)
    key = x * n_players + y
    order, starts, keys = _group(key)
    counts = np.diff(np.r_[starts, len(key)])
    won = np.add.reduceat(outcome[order].astype(np.float64), starts) if len(key) else np.zeros(0)
    expected = np.add.reduceat(prob[order], starts) if len(key) else np.zeros(0)
    var = np.add.reduceat(prob[order] * (1.0 - prob[order]), starts) if len(key) else np.zeros(0)
    eligible = counts >= min_meetings
    n_tests = int(eligible.sum())
    if n_tests == 0:
        return [], 0
    # Screen on the ordinary replay: far from its predictions, or nearly all one way (which the replay, having
    # learnt from the same games, may already expect).
    z = np.abs(won - expected) / np.sqrt(np.maximum(var, 1e-12))
    lopsided = np.minimum(won, counts - won) <= 0.15 * counts
    score = np.where(eligible & ((z >= 2.0) | lopsided), z + 10.0 * lopsided, -1.0)
    chosen: list[int] = []
    removed = np.zeros(len(r.matches), dtype=bool)
    for g in np.argsort(-score, kind="stable"):
        if score[g] < 0:
            break
        ms = np.unique(match[order[starts[g]:starts[g] + counts[g]]])
        if chosen and int(removed.sum()) + len(ms) > budget:  # (the most suspicious is always tested)
            continue
        chosen.append(int(g))
        removed[ms] = True
    if not chosen:
        return [], n_tests
    ab = r.without(removed)
    z, w = _nodes(PAIR_NODES)
    weights = np.outer(w, w).ravel()
    tests = []
    for g in chosen:
        first, second = int(keys[g] // n_players), int(keys[g] % n_players)
        ms = np.unique(match[order[starts[g]:starts[g] + counts[g]]])
        block = _Block(r, ms, ab, (first, second))
        s1, s2 = block.side(first), block.side(second)
        items = np.flatnonzero((s1 * s2 == -1) & (block.outcome != 0))
        wins = int(np.sum(block.outcome[items] * s1[items] > 0))
        mates1 = [p for p in block.recurring([first]) if p != second]
        mates2 = [p for p in block.recurring([second]) if p not in (first, *mates1)]
        groups = {first: [first, *mates1], second: [second, *mates2]}
        p = block.probs([{first: float(a), second: float(b)} for a in z for b in z], groups)[:, items]
        p = np.where(s1[items] > 0, p, 1.0 - p)  # P(first's side ahead), per skill pair and meeting
        pmf = weights @ poisson_binomial_pmf(p)
        upper, lower = tails(pmf, wins)
        n, mean_wins = len(items), float(weights @ p.sum(axis=1))
        if wins < n - wins:  # name the one who won the more first
            first, second, wins, mean_wins = second, first, n - wins, n - mean_wins
        tests.append(_Test(
            "one-sided pair", (names[first], names[second]), min(1.0, 2.0 * min(upper, lower)), ms,
            f"{names[first]} beat {names[second]} in {wins} of {n} decided meetings; their ratings from their other "
            f"games expected {mean_wins:.1f}",
            {"games": n, "wins": wins, "expected": mean_wins}))
    return tests, n_tests


@jit
def _opponent_mass(match_start: NDArray[np.int64], team_start: NDArray[np.int64], player: NDArray[np.int64],
                   account: NDArray[np.bool_]) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
    """For each match of each ``account`` player and each opponent in it: ``(account, opponent, 1 / opposing
    teams)``.  A match counts 1 in all, shared among the opposing teams: a one-on-one game is wholly against the
    opponent (as a two-team game is against each of the other team's players), a 20-car race one nineteenth
    against each rival, so that meeting one player in every race of a field does not make the races "against" it."""
    total = 0
    for m in range(len(match_start) - 1):
        for t in range(match_start[m], match_start[m + 1]):
            for p in range(team_start[t], team_start[t + 1]):
                if account[player[p]]:
                    total += team_start[match_start[m + 1]] - team_start[match_start[m]] - (team_start[t + 1] - team_start[t])
    who = np.empty(total, dtype=np.int64)
    opp = np.empty(total, dtype=np.int64)
    mass = np.empty(total)
    n = 0
    for m in range(len(match_start) - 1):
        share = 1.0 / max(1, match_start[m + 1] - match_start[m] - 1)
        for t in range(match_start[m], match_start[m + 1]):
            for p in range(team_start[t], team_start[t + 1]):
                if not account[player[p]]:
                    continue
                for u in range(match_start[m], match_start[m + 1]):
                    if u == t:
                        continue
                    for q in range(team_start[u], team_start[u + 1]):
                        who[n], opp[n], mass[n] = player[p], player[q], share
                        n += 1
    return who, opp, mass


def _clusters(match: NDArray[np.int64], x: NDArray[np.int64], y: NDArray[np.int64], farmer: int,
              satellites: Sequence[int]) -> list[list[int]]:
    """The farmer's satellites grouped by the matches against the farmer they share (linked transitively)."""
    parent = {s: s for s in satellites}

    def root(s: int) -> int:
        while parent[s] != s:
            s = parent[s]
        return s

    against = ((x == farmer) & np.isin(y, satellites)) | ((y == farmer) & np.isin(x, satellites))
    first_in: dict[int, int] = {}
    for m, a, b in zip(match[against].tolist(), x[against].tolist(), y[against].tolist()):
        sat = b if a == farmer else a
        if m in first_in:
            parent[root(sat)] = root(first_in[m])
        else:
            first_in[m] = sat
    out: dict[int, list[int]] = {}
    for sat in satellites:
        out.setdefault(root(sat), []).append(sat)
    return list(out.values())


def _farming_tests(r: _Replay, new_games: int, share: float, min_satellites: int, budget: int
                   ) -> tuple[list[_Test], int]:
    names = r.matches.players
    n_players = len(names)
    games = np.bincount(r.matches.player, minlength=n_players)
    everything = np.ones(len(r.matches), dtype=bool)
    match, x, y, won, prob = r.meetings(everything)
    # How much of each new account's play was against each opponent (whatever the outcome).
    account_of, opponent_of, mass = _opponent_mass(r.matches.match_start, r.matches.team_start, r.matches.player,
                                                   (games >= 2) & (games <= new_games))
    order, starts, pair_keys = _group(account_of * n_players + opponent_of)
    met = np.add.reduceat(mass[order], starts) if len(order) else np.zeros(0)
    account, opponent = pair_keys // n_players, pair_keys % n_players
    satellite = met >= share * games[account] - 1e-9
    farmers, n_sat = np.unique(opponent[satellite], return_counts=True)
    candidates = farmers[n_sat >= min_satellites]
    if len(candidates) == 0:
        return [], 0
    sat_of: dict[int, set[int]] = {int(f): set() for f in candidates}
    for acc, f in zip(account[satellite].tolist(), opponent[satellite].tolist()):
        if f in sat_of:
            sat_of[f].add(acc)
    # The farmer's meetings with its satellites, taken out of one replay for all farmers.
    removed = np.zeros(len(r.matches), dtype=bool)
    chosen: list[int] = []
    for f in sorted(sat_of, key=lambda f: -len(sat_of[f])):
        sats = np.fromiter(sat_of[f], dtype=np.int64)
        sel = ((x == f) & np.isin(y, sats)) | ((y == f) & np.isin(x, sats))
        ms = np.unique(match[sel])
        if chosen and int(removed.sum()) + len(ms) > budget:
            continue
        removed[ms] = True
        chosen.append(f)
    if not chosen:
        return [], len(candidates)
    ab = r.without(removed)
    z, w = _nodes(FARM_NODES)
    tests = []
    for f in chosen:
        satellites = sorted(sat_of[f])
        # Satellites that played the farmer in the same match (two accounts as a team) share those games: they are
        # taken together, each such cluster once per match, with one skill error for the cluster.  Given the
        # farmer's skill the clusters' results are independent: each cluster's distribution averages over its
        # own skill, and they convolve; then average over the farmer's skill.
        pmf_at = [np.ones(1) for _ in z]
        wins = n = 0
        expected = 0.0
        evidence = []
        for cluster in _clusters(match, x, y, f, satellites):
            ms = np.unique(match[((x == f) & np.isin(y, cluster)) | ((y == f) & np.isin(x, cluster))])
            evidence.append(ms)
            block = _Block(r, ms, ab, (f, *cluster))
            sf, ss = block.side(f), block.side(*cluster)
            items = np.flatnonzero((sf * ss == -1) & (block.outcome != 0))
            wins += int(np.sum(block.outcome[items] * sf[items] > 0))
            n += len(items)
            mates = [p for p in block.recurring([f]) if p not in cluster]
            theirs = [p for p in block.recurring(cluster) if p != f and p not in mates]
            groups = {f: [f, *mates], -1: [*cluster, *theirs]}
            p = block.probs([{f: float(a), -1: float(b)} for a in z for b in z], groups)[:, items]
            p = np.where(sf[items] > 0, p, 1.0 - p).reshape(len(z), len(z), len(items))
            expected += float(np.einsum("k,j,kj->", w, w, p.sum(axis=2)))
            for k in range(len(z)):
                own = w @ poisson_binomial_pmf(p[k])
                pmf_at[k] = np.convolve(pmf_at[k], own)
        pmf = np.sum([wk * pk for wk, pk in zip(w, pmf_at)], axis=0)
        sat_names = [names[i] for i in satellites]
        tests.append(_Test(
            "farming", (names[f], *sorted(sat_names)), tails(pmf, wins)[0], np.unique(np.concatenate(evidence)),
            f"{len(sat_names)} accounts with at most {new_games} games, mostly against {names[f]}, lost {wins} of {n} "
            f"decided meetings to {names[f]}; ratings from other games expected {expected:.1f} losses",
            {"games": n, "wins": wins, "expected": expected, "satellites": len(sat_names)}))
    return tests, len(candidates)


def _player_games(r: _Replay, match: NDArray[np.int64], x: NDArray[np.int64], y: NDArray[np.int64],
                  won: NDArray[np.bool_], prob: NDArray[np.float64]
                  ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]:
    """Per (player, match) with a decided meeting, in order of player then match: ``(player, match, score =
    share of decided opponents beaten, mean predicted, starts of each player's run)``."""
    n_matches = len(r.matches)
    who = np.r_[x, y]
    m = np.r_[match, match]
    score = np.r_[won, ~won].astype(np.float64)
    p = np.r_[prob, 1.0 - prob]
    key = who * (n_matches + 1) + m
    order, starts, keys = _group(key)
    counts = np.diff(np.r_[starts, len(key)]).astype(np.float64)
    s = np.add.reduceat(score[order], starts) / counts if len(key) else np.zeros(0)
    q = np.add.reduceat(p[order], starts) / counts if len(key) else np.zeros(0)
    player = keys // (n_matches + 1)
    game_match = keys % (n_matches + 1)
    runs = np.flatnonzero(np.r_[True, player[1:] != player[:-1]]) if len(player) else np.zeros(0, np.int64)
    return player, game_match, s, q, runs


@jit
def _kl_log_tail(s: float, q: float, n: int) -> float:
    """``log`` of Hoeffding's bound ``exp(-n KL(s || q))`` on a mean score of ``s`` or less when its mean is ``q``."""
    if s >= q:
        return 0.0
    q = min(max(q, 1e-300), 1.0 - 1e-16)
    kl = 0.0
    if s > 0:
        kl += s * np.log(s / q)
    if s < 1:
        kl += (1.0 - s) * np.log((1.0 - s) / (1.0 - q))
    return -n * kl


@jit
def _scan(runs: NDArray[np.int64], ends: NDArray[np.int64], s: NDArray[np.float64], q: NDArray[np.float64],
          mu_before: NDArray[np.float64], mu_after: NDArray[np.float64], windows: NDArray[np.int64],
          established: int) -> tuple[NDArray[np.float64], NDArray[np.int64], int]:
    """For each player and window length, the most suspicious window by the ordinary replay (the least bound on
    its score, among windows followed by a rise and starting after the player's first ``established`` games):
    ``(log bound, first game)`` of shape (players, lengths) (first -1: none), and the number of windows."""
    n_runs = len(runs)
    best = np.zeros((n_runs, len(windows)))
    first = np.full((n_runs, len(windows)), -1, dtype=np.int64)
    scanned = 0
    for r in range(n_runs):
        a, z = runs[r], ends[r]
        n = z - a
        for w in range(len(windows)):
            L = windows[w]
            step = max(1, L // 4)
            last_start = n - L - min(L, 5)  # room for a rise of at least min(L, 5) games after the window
            # Sandbagging is a fall from an established rating: a newcomer's first games fall from the prior, which
            # says nothing of the player (a weak beginner's first losses would look like a dive).
            i = (established + step - 1) // step * step
            while i <= last_start:
                scanned += 1
                tot_s = 0.0
                tot_q = 0.0
                for g in range(a + i, a + i + L):
                    tot_s += s[g]
                    tot_q += q[g]
                low = mu_after[a + i + L - 1]
                drop = mu_before[a + i] - low
                peak = low
                for g in range(a + i + L, min(z, a + i + 3 * L)):
                    peak = max(peak, mu_after[g])
                if drop > 0 and peak - low >= drop / 3.0:
                    bound = _kl_log_tail(tot_s / L, tot_q / L, L)
                    if bound < best[r, w]:
                        best[r, w], first[r, w] = bound, i
                i += step
    return best, first, scanned


def _teammates(r: _Replay, ms: NDArray[np.int64], who: int) -> list[tuple[int, int]]:
    """The players on ``who``'s team in at least half of the matches ``ms``, with how many, most first."""
    sub = r.matches.take(ms)
    team_of_slot = np.repeat(np.arange(len(sub.team_rank)), np.diff(sub.team_start))
    own = np.zeros(len(sub.team_rank), dtype=bool)
    own[team_of_slot[sub.player == who]] = True
    mates = sub.player[own[team_of_slot] & (sub.player != who)]
    found, counts = np.unique(mates, return_counts=True)
    keep = np.argsort(-counts, kind="stable")
    return [(int(found[i]), int(counts[i])) for i in keep if 2 * counts[i] >= len(ms)]


def _window_test(r: _Replay, ab: _Ablated, ms: NDArray[np.int64], who: int, ref: int, z: NDArray[np.float64],
                 w: NDArray[np.float64]) -> tuple[float, float, float]:
    """``(P(a score this low), score, expected score)`` for ``who``'s games ``ms``, its skill from the rating at
    slot ``ref`` (with its recurring teammates' errors) integrated over ``z``.

    Where each game has one opponent, opponents met more than once in the window each have a skill error of their
    own, shared by their games: given ``who``'s skill, the games against different opponents are independent,
    so each such opponent's games are averaged over its error and convolved with the rest (the exact
    Poisson-binomial tail).  In fields (several opponents a game) the score is a share, and Hoeffding's bound is
    averaged over one error shared by all the recurring opponents, which spreads the outcomes at least as much.
    """
    block = _Block(r, ms, ab, (who,), anchor=ref)
    side = block.side(who)
    items = np.flatnonzero((side != 0) & (block.outcome != 0))
    success = block.outcome[items] * side[items] > 0
    game = block.pair_match[items]
    per_game = np.bincount(game, minlength=len(ms)).astype(np.float64)
    mates = block.recurring([who])
    rivals = [p for p in block.recurring([who], opponents=True) if p not in mates]
    own = {who: [who, *mates]}
    if not np.all(per_game == 1):
        score = np.bincount(game, success.astype(np.float64), len(ms)) / per_game
        if rivals:
            u, v = _nodes(PAIR_NODES)
            configs, weights = [{who: float(a), -1: float(b)} for a in z for b in u], np.outer(w, v).ravel()
        else:
            configs, weights = [{who: float(a)} for a in z], w
        p = block.probs(configs, own | {-1: rivals})[:, items]
        q = np.array([np.bincount(game, row, len(ms)) / per_game
                      for row in np.where(side[items] > 0, p, 1.0 - p)])
        p_value = float(sum(wk * hoeffding_lower(score, row) for wk, row in zip(weights, q)))
        return p_value, float(score.sum()), float(weights @ q.sum(axis=1))
    # One opponent a game: group the games by the recurring opponents they share.
    teams = block.sub.team_start
    opposing = np.where(side[items] > 0, block.b[items], block.a[items])
    rival_of = {p: i for i, p in enumerate(rivals)}
    parent = list(range(len(rivals)))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    first_rival = np.full(len(items), -1)
    for k, t in enumerate(opposing.tolist()):
        met = [rival_of[p] for p in block.sub.player[teams[t]:teams[t + 1]].tolist() if p in rival_of]
        for i in met[1:]:
            parent[root(i)] = root(met[0])
        first_rival[k] = met[0] if met else -1
    cluster = np.array([root(i) if i >= 0 else -1 for i in first_rival.tolist()], dtype=np.int64)
    base = block.probs([{who: float(a)} for a in z], own)[:, items]
    base = np.where(side[items] > 0, base, 1.0 - base)
    alone = cluster < 0
    pmf_at = list(poisson_binomial_pmf(base[:, alone]))
    expected = base[:, alone].sum(axis=1)
    u, v = _nodes(PAIR_NODES)
    for c in np.unique(cluster[~alone]).tolist():
        at = cluster == c
        sub = _Block(r, ms[game[at]], ab, (who,), anchor=ref)
        sub_side = sub.side(who)
        sub_items = np.flatnonzero((sub_side != 0) & (sub.outcome != 0))
        players = [p for p in rivals if root(rival_of[p]) == c]
        p = sub.probs([{who: float(a), -1: float(b)} for a in z for b in u], own | {-1: players})[:, sub_items]
        p = np.where(sub_side[sub_items] > 0, p, 1.0 - p).reshape(len(z), len(u), len(sub_items))
        for k in range(len(z)):
            pmf_at[k] = np.convolve(pmf_at[k], v @ poisson_binomial_pmf(p[k]))
        expected = expected + p.sum(axis=2) @ v
    pmf = np.sum([wk * pk for wk, pk in zip(w, pmf_at)], axis=0)
    wins = int(success.sum())
    return tails(pmf, wins)[1], float(wins), float(w @ expected)


def _sandbag_tests(r: _Replay, windows: Sequence[int], established: int, budget: int, screen: float = 0.2
                   ) -> tuple[list[_Test], int]:
    names = r.matches.players
    n_matches = len(r.matches)
    everything = np.ones(n_matches, dtype=bool)
    match, x, y, won, prob = r.meetings(everything)
    player, game_match, s, q, runs = _player_games(r, match, x, y, won, prob)
    ends = np.r_[runs[1:], len(player)].astype(np.int64)
    # Each game's slot, to read the player's rating (ordinary replay) before and after it.
    slot_key = r.matches.player * (n_matches + 1) + r.match_of_slot
    slot_order = np.argsort(slot_key, kind="stable")
    slot = slot_order[np.searchsorted(slot_key[slot_order], player * (n_matches + 1) + game_match)]
    lengths = np.asarray(windows, dtype=np.int64)
    best, first, n_tests = _scan(runs.astype(np.int64), ends, s, q, r.mu[slot], r.after_mu[slot], lengths, established)
    # Each player's candidate windows (the best of each length that passes the screen), most suspicious players
    # first.  All of a player's candidates come out of the replay together.
    best = np.where(best <= math.log(screen), best, 0.0)
    order = np.argsort(best.min(axis=1), kind="stable") if len(best) else np.zeros(0, np.int64)
    removed = np.zeros(n_matches, dtype=bool)
    chosen: list[tuple[int, list[tuple[int, int]]]] = []
    for c in order.tolist():
        wins = [(int(runs[c] + first[c, w]), int(lengths[w])) for w in range(len(lengths)) if best[c, w] < 0]
        if not wins:
            break
        ms = np.unique(np.concatenate([game_match[g0:g0 + L] for g0, L in wins]))
        if chosen and int(removed.sum()) + len(ms) > budget:
            continue
        removed[ms] = True
        chosen.append((c, wins))
    if not chosen:
        return [], n_tests
    ab = r.without(removed)
    z, w = _nodes(SAND_NODES)
    tests = []
    for c, wins in chosen:
        who = int(player[runs[c]])
        found: tuple[float, int, int, float, float] | None = None
        for g0, L in wins:  # the player's most significant window
            # The skill the window is measured against: the player's rating from its games before the window and
            # the rise after it (the window's games taken out), read at the end of the rise.
            ref = int(slot[min(int(ends[c]) - 1, g0 + 3 * L)])
            p_value, got, expected = _window_test(r, ab, game_match[g0:g0 + L], who, ref, z, w)
            if found is None or p_value < found[0]:
                found = (p_value, g0, L, got, expected)
        assert found is not None
        p_value, g0, L, got, expected = found
        before = float(r.mu[slot[g0]])
        low = float(r.after_mu[slot[g0 + L - 1]])
        rise_end = min(int(ends[c]), g0 + 3 * L)
        peak = float(r.after_mu[slot[g0 + L:rise_end]].max()) if rise_end > g0 + L else low
        # In team games the results are the team's: name whoever shared most of these games, who may be the one
        # who threw them.
        partners = _teammates(r, game_match[g0:g0 + L], who)
        shared = "".join(f"; with {names[m]} in {n} of them" for m, n in partners)
        tests.append(_Test(
            "sandbagging", (names[who],), p_value, game_match[g0:g0 + L],
            f"{names[who]} scored {got:.1f} in {L} games where its rating from its other games expected {expected:.1f}; its "
            f"rating fell {before - low:.3g} and regained {peak - low:.3g} within {rise_end - g0 - L} games{shared}",
            {"games": L, "wins": got, "expected": expected, "drop": before - low, "regained": peak - low,
             "teammates": {names[m]: n for m, n in partners}}))
    return tests, n_tests


def audit(
    matches: Matches | Iterable[Match],
    model: Model | None = None,
    *,
    alpha: float = 0.01,
    min_meetings: int = 8,
    new_games: int = 10,
    satellite_share: float = 0.75,
    min_satellites: int = 3,
    windows: Sequence[int] = (16, 24, 32, 48, 64, 96),
    established: int = 10,
    budget: float = 0.2,
) -> Audit:
    """Flag results that the model's own predictions make too improbable to be honest play.

    Three tests (the module docstring gives their statistics): one-sided results between the same pair (win
    trading, feeding), throwaway accounts that lose to one player (farming), and a run of games far below a
    player's rating followed by a rise (sandbagging).  Each p-value is computed from predictions that leave the
    suspected games out, integrated over the uncertainty of the ratings; they are adjusted by Holm's method
    within each kind, ``alpha`` split equally among the kinds, counting every hypothesis considered.

    Parameters
    ----------
    matches : Matches or iterable of Match
        The history, in the order played.
    model : Model, optional
        The model whose probabilities define honest play.  Default: TrueSkill (whose predictions carry each
        rating's uncertainty) fitted to this history by :func:`podium.fit` (the suspected games included, which
        costs power, not validity); a model more confident than the games are (TrueSkill's defaults on a
        history noisier than they assume) makes honest upsets look thrown.  A model without uncertainty (the
        Elo family) gets a warning: it treats ratings from a few games as exact.
    alpha : float in (0, 1)
        Family-wise error rate: a flag is raised when its Holm-adjusted p-value is at most ``alpha``.
    min_meetings : int
        Decided meetings a pair needs to be tested.
    new_games : int
        Most games an account may have in all to be a farmer's satellite.
    satellite_share : float in (0, 1]
        Least share of a satellite's games that were against its farmer.
    min_satellites : int
        Satellites a player needs to be tested for farming.
    windows : sequence of int
        Lengths (in games) of the windows scanned for sandbagging.
    established : int
        Games a player needs before a window: a rating to fall from.
    budget : float in (0, 1]
        Most matches, as a share of the history, taken out for each kind of test (the most suspicious first):
        ratings from a history with most of it taken out would predict nothing.

    Returns
    -------
    Audit
        The flags, most significant first, and the number of hypotheses of each kind.
    """
    from .fit import fit
    from .models.trueskill import TrueSkill

    packed = matches if isinstance(matches, Matches) else Matches.from_matches(matches)
    if model is None:
        # Honest play is what a model that fits this history predicts: TrueSkill's defaults assume one scale
        # of performance noise, and a model more confident than the games are would call every upset a throw.
        try:
            fitted = fit(TrueSkill(), packed).model
            model = fitted if isinstance(fitted, Model) else TrueSkill()
        except ValueError:  # too short a history to hold any out
            model = TrueSkill()
    if not isinstance(model, Model):
        raise TypeError(f"'model' must be a podium model (Elo, TrueSkill, ...). Got {type(model).__name__}: {model!r:.80}.")
    if not model.prior.sigma > 0:
        warnings.warn(f"{type(model).__name__} keeps no uncertainty in its ratings: the audit takes a rating from a "
                      "few games, or a new account's prior, as exact, and its p-values are too small there. "
                      "TrueSkill or Glicko-2 account for it (the default is TrueSkill fitted to the history).",
                      UserWarning, stacklevel=2)
    if isinstance(alpha, bool) or not (isinstance(alpha, (int, float)) and 0.0 < alpha < 1.0):
        raise ValueError(f"'alpha' must be in (0, 1). Got {alpha!r}.")
    checks: tuple[tuple[str, Any, int], ...] = (("min_meetings", min_meetings, 2), ("new_games", new_games, 2),
                                                ("min_satellites", min_satellites, 1), ("established", established, 0))
    for name, value, low in checks:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"'{name}' must be an int >= {low}. Got {value!r}.")
    for name, value in (("satellite_share", satellite_share), ("budget", budget)):
        if isinstance(value, bool) or not (isinstance(value, (int, float)) and 0.0 < value <= 1.0):
            raise ValueError(f"'{name}' must be in (0, 1]. Got {value!r}.")
    windows = list(windows)
    if not windows or any(isinstance(w, bool) or not isinstance(w, (int, np.integer)) or w < 2 for w in windows):
        raise ValueError(f"'windows' must be a non-empty sequence of ints >= 2. Got {windows!r}.")
    r = _Replay(model, packed)
    limit = max(1, int(budget * len(packed)))
    pairs, n_pairs = _pair_tests(r, int(min_meetings), limit)
    farms, n_farms = _farming_tests(r, int(new_games), float(satellite_share), int(min_satellites), limit)
    sands, n_sands = _sandbag_tests(r, sorted(set(int(w) for w in windows)), int(established), limit)
    tests = pairs + farms + sands
    counts = {"one-sided pair": n_pairs, "farming": n_farms, "sandbagging": n_sands}
    adjusted = _adjust(tests, counts)
    flags = [Flag(t.kind, t.players, t.p_value, float(adj), tuple(int(m) for m in t.matches),
                  tuple(packed.ids[int(m)] for m in t.matches), t.evidence, t.details)
             for t, adj in zip(tests, adjusted) if adj <= alpha]
    flags.sort(key=lambda f: (f.adjusted, f.kind, f.players))
    return Audit(flags, counts, float(alpha), repr(model))
