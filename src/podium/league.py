"""A population's ratings, held in arrays, and the compiled replay engine that updates them.

The engine walks the columnar form of :class:`podium.Matches` (``match_start``, ``team_start``,
``team_rank``, ``player``, ``weight``) and calls, for each match, the same compiled kernel that a model's
single-match ``rate`` runs.  The updates of a match are computed from the ratings before it and applied
together.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import chain, compress
from typing import Any, NamedTuple

import numba as nb
import numpy as np
from numpy.typing import NDArray

from .components import Components, UnionFind
from .match import Match, MatchError, Matches
from .models.base import Model, _History, _State, match_spread, most_teams, provisional_factor, team_sums
from .models.elo import GRADIENT, LOGISTIC, pair_outcome, pair_score, pairwise_gradient
from .models.plackett_luce import plackett_luce_gradient
from .numerics import jit
from .rating import Rating

__all__ = ["League", "LeaderboardRow", "PlayerState", "Trajectory", "replay_likelihood", "team_strengths"]

PAIRWISE, PLACKETT_LUCE = 0, 1
_CHUNK = 65536  # matches per compiled call when a progress bar is shown


@jit
def _family_gradient(kind: int, a: int, b: int, c: int, s: NDArray[np.float64], rank: NDArray[np.int64],
                     n: int, grad: NDArray[np.float64], fw: NDArray[np.float64], iw: NDArray[np.int64],
                     want_ll: bool) -> float:
    if kind == PAIRWISE:
        return pairwise_gradient(s, rank, n, a, b, c, grad, fw, want_ll)
    return plackett_luce_gradient(s, rank, n, a, grad, fw, iw, want_ll)


@nb.njit(cache=True, nogil=True, inline="always")
def _duel_loop(
    pair_performance: int, pair_update: int, k: float, inv_scale: float, initial: float, spread: float,
    provisional: float,
    team_rank: NDArray[np.int64], row: NDArray[np.int64], weight: NDArray[np.float64],
    mu: NDArray[np.float64], games: NDArray[np.int64], hist_mu: NDArray[np.float64], loglik: NDArray[np.float64],
    want_ll: bool, want_hist: bool,
) -> None:
    """:func:`replay_likelihood` for a history of one-player duels (team ``t`` is slot ``t``, match ``m``
    is teams ``2m, 2m + 1``): the same arithmetic in the same order, without the per-team loops and the
    reads of ``match_start`` and ``team_start`` that a duel does not need."""
    for m in range(len(team_rank) // 2):
        pa = 2 * m
        pb = pa + 1
        ra, rb = row[pa], row[pb]
        wa, wb = weight[pa], weight[pb]
        # 0.0 + w * (mu - initial) is team_sums' sum of one member, kept so the result is the same to
        # the bit; the spread is 1 for full-weight players (no square root in a chess replay).
        shrink = 1.0
        if (wa != 1.0 or wb != 1.0) and spread != 0.0:
            shrink = 1.0 / match_spread(spread, 0.5 * (wa * wa + wb * wb))
        inv = inv_scale * shrink
        d = (0.0 + wa * (mu[ra] - initial)) * inv - (0.0 + wb * (mu[rb] - initial)) * inv
        score = pair_score(team_rank[pa], team_rank[pb])
        if score < 0.0:
            ll, g = 0.0, 0.0
        else:
            ll, g = pair_outcome(d, score, pair_performance, pair_update, want_ll)
        if want_ll:
            loglik[m] = ll
        step = k * g * shrink
        mu[ra] += step * wa * provisional_factor(provisional, games[ra])
        games[ra] += 1
        if want_hist:
            hist_mu[pa] = mu[ra]
        mu[rb] += -step * wb * provisional_factor(provisional, games[rb])
        games[rb] += 1
        if want_hist:
            hist_mu[pb] = mu[rb]


@jit
def _replay_duels(
    pair_performance: int, pair_update: int, k: float, inv_scale: float, initial: float, spread: float,
    provisional: float,
    team_rank: NDArray[np.int64], row: NDArray[np.int64], weight: NDArray[np.float64],
    mu: NDArray[np.float64], games: NDArray[np.int64], hist_mu: NDArray[np.float64], loglik: NDArray[np.float64],
    want_ll: bool, want_hist: bool,
) -> None:
    """:func:`_duel_loop`, with the logistic model's options passed as constants: the compiler then drops
    the branches (Gaussian math, unwanted writes) from the loop, which makes it about a third faster."""
    if pair_performance != LOGISTIC:
        _duel_loop(pair_performance, pair_update, k, inv_scale, initial, spread, provisional, team_rank, row, weight,
                   mu, games, hist_mu, loglik, want_ll, want_hist)
    elif want_ll and want_hist:
        _duel_loop(LOGISTIC, GRADIENT, k, inv_scale, initial, spread, provisional, team_rank, row, weight, mu, games,
                   hist_mu, loglik, True, True)
    elif want_ll:
        _duel_loop(LOGISTIC, GRADIENT, k, inv_scale, initial, spread, provisional, team_rank, row, weight, mu, games,
                   hist_mu, loglik, True, False)
    elif want_hist:
        _duel_loop(LOGISTIC, GRADIENT, k, inv_scale, initial, spread, provisional, team_rank, row, weight, mu, games,
                   hist_mu, loglik, False, True)
    else:
        _duel_loop(LOGISTIC, GRADIENT, k, inv_scale, initial, spread, provisional, team_rank, row, weight, mu, games,
                   hist_mu, loglik, False, False)


@jit
def replay_likelihood(
    kind: int, a: int, b: int, c: int, k: float, scale: float, initial: float, spread: float, provisional: float,
    match_start: NDArray[np.int64], team_start: NDArray[np.int64], team_rank: NDArray[np.int64],
    row: NDArray[np.int64], weight: NDArray[np.float64],
    mu: NDArray[np.float64], games: NDArray[np.int64], hist_mu: NDArray[np.float64], loglik: NDArray[np.float64],
    want_ll: bool, want_hist: bool = True,
) -> None:
    """Replay a history under an Elo-family model, in place.

    For each match: team strengths ``s_t = sum_i w_i (mu_i - initial) / (scale * c)`` with the match's spread
    ``c`` (:func:`match_spread`); the kernel gives the log-likelihood and ``dL/ds_t``; member ``i`` moves by
    ``k * w_i * dL/ds_t / c`` (the chain rule, in the family's convention that ``k`` absorbs ``scale``), times
    :func:`provisional_factor` of the matches it has played.  ``row[p]`` is the state row of player
    slot ``p``; ``hist_mu[p]`` receives that player's rating after the match (only with ``want_hist``),
    ``loglik[m]`` the match's log-likelihood under the ratings before it (only with ``want_ll``: without
    it the kernels also skip the logarithms that only the log-likelihood needs).  An array that is not
    written may be empty.
    """
    n_matches = len(match_start) - 1
    inv_scale = 1.0 / scale
    pair_performance, pair_update = (a, b) if kind == PAIRWISE else (LOGISTIC, GRADIENT)
    # Every match has at least two teams and every team at least one player (Matches' invariants), so
    # 2 teams per match and 1 player per team on average means exactly that everywhere: one-player duels.
    if n_matches > 0 and len(team_rank) == 2 * n_matches and len(row) == len(team_rank):
        _replay_duels(pair_performance, pair_update, k, inv_scale, initial, spread, provisional, team_rank, row,
                      weight, mu, games, hist_mu, loglik, want_ll, want_hist)
        return
    width = most_teams(match_start)
    s = np.empty(width)
    grad = np.empty(width)
    fw = np.empty(7 * width + 2)
    iw = np.empty(4 * width + 3, dtype=np.int64)
    for m in range(n_matches):
        t0 = match_start[m]
        n = match_start[m + 1] - t0
        square = 0.0
        for t in range(n):
            s[t], q = team_sums(team_start, t0 + t, row, weight, mu, initial)
            square += q
        shrink = 1.0 if spread == 0.0 else 1.0 / match_spread(spread, square / n)
        inv = inv_scale * shrink
        for t in range(n):
            s[t] *= inv
        if n == 2:
            # Two teams: every model of the family is one two-team Elo game (Plackett-Luce in either
            # order is logistic Elo, draws and non-finishers included), so call it directly.
            score = pair_score(team_rank[t0], team_rank[t0 + 1])
            if score < 0.0:
                ll, grad[0] = 0.0, 0.0
            else:
                ll, grad[0] = pair_outcome(s[0] - s[1], score, pair_performance, pair_update, want_ll)
            grad[1] = -grad[0]
        else:
            ll = _family_gradient(kind, a, b, c, s, team_rank[t0:t0 + n], n, grad, fw, iw, want_ll)
        if want_ll:
            loglik[m] = ll
        for t in range(n):
            step = k * grad[t] * shrink
            for p in range(team_start[t0 + t], team_start[t0 + t + 1]):
                r = row[p]
                mu[r] += step * weight[p] * provisional_factor(provisional, games[r])
                games[r] += 1
                if want_hist:
                    hist_mu[p] = mu[r]


@jit
def _players_used(player: NDArray[np.int64], n_players: int) -> NDArray[np.bool_]:
    """Which of ``n_players`` player indices occur in ``player``; stops reading once every one has."""
    used = np.zeros(n_players, dtype=np.bool_)
    left = n_players
    for p in range(len(player)):
        i = player[p]
        if not used[i]:
            used[i] = True
            left -= 1
            if left == 0:
                break
    return used


@jit
def _team_strengths(team_start: NDArray[np.int64], row: NDArray[np.int64], weight: NDArray[np.float64],
                    mu: NDArray[np.float64], initial: float) -> NDArray[np.float64]:
    out = np.empty(len(team_start) - 1)
    for t in range(len(out)):
        out[t] = team_sums(team_start, t, row, weight, mu, initial)[0]
    return out


def team_strengths(matches: Matches, mu: NDArray[np.float64], initial: float = 0.0) -> NDArray[np.float64]:
    """Partial-play weighted sums of ``mu - initial`` over each team of ``matches`` (player indices into ``mu``)."""
    return _team_strengths(matches.team_start, matches.player, matches.weight, mu, initial)


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


def leaderboard_rows(names: list[str], mu: NDArray[np.float64], sigma: NDArray[np.float64],
                     games: NDArray[np.int64], k: float, top: int | None, min_games: int,
                     connected: NDArray[np.bool_] | None = None, connected_only: bool = False) -> list[LeaderboardRow]:
    """Players sorted by ``mu - k sigma`` (ties by name), those with fewer than ``min_games`` left out (and,
    with ``connected_only``, those not ``connected``), the first ``top`` kept: the rows of
    :meth:`League.leaderboard` and of a smoothed history's :meth:`podium.Smoothed.leaderboard`.  ``connected``
    (per player; default everyone) fills :attr:`LeaderboardRow.connected`."""
    score = mu - k * sigma
    linked = np.ones(len(names), dtype=np.bool_) if connected is None else connected
    keep = np.flatnonzero((games >= min_games) & (linked if connected_only else True))
    order = keep[np.lexsort((np.array(names, dtype=object)[keep] if len(names) else keep, -score[keep]))]
    if top is not None:
        order = order[:top]
    return [LeaderboardRow(i + 1, names[r], float(mu[r]), float(sigma[r]), float(score[r]), int(games[r]),
                           bool(linked[r])) for i, r in enumerate(order)]


class PlayerState(NamedTuple):
    """Everything a model keeps about one player between matches.

    ``games`` counts recorded matches; ``last_time`` is the time of the player's last match with a known
    time (NaN if none), which TrueSkill's ``drift`` needs; ``extra`` what the model keeps besides (Glicko-2's
    volatility and open rating period; empty for the other models, and a new player's when not given).
    Saving these and restoring them with :meth:`League.set_states` continues a population exactly where it
    stopped (the league server keeps them in its database).
    """

    mu: float
    sigma: float
    games: int
    last_time: float
    extra: tuple[float, ...] = ()


@dataclass(frozen=True)
class Trajectory:
    """A player's rating after each of their matches, in the order recorded.

    ``match`` is the index of the match in everything the league recorded; ``time`` its time (NaN unknown).
    """

    player: str
    match: NDArray[np.int64]
    time: NDArray[np.float64]
    mu: NDArray[np.float64]
    sigma: NDArray[np.float64]


class _Batch(NamedTuple):
    """The history of one replayed batch of matches, kept as the batch's own arrays.

    Only ``mu`` (and ``sigma`` for models with uncertainty) is new memory; which player and match each
    slot belongs to is read from the batch's arrays (shared with the caller's :class:`Matches`, which
    podium never modifies) when a trajectory or the slots are asked for, not computed for every replay.
    """

    offset: int                        # the batch's first match, counted over everything recorded
    names_rows: NDArray[np.int64]      # state row of each entry of the batch's player list (-1: not in it)
    player: NDArray[np.int64]          # Matches.player, .team_start, .match_start, .time of the batch
    team_start: NDArray[np.int64]
    match_start: NDArray[np.int64]
    time: NDArray[np.float64]
    mu: NDArray[np.float64]            # each slot's rating after its match
    sigma: NDArray[np.float64] | None  # None: the model keeps no uncertainty (zeros)

    def matches_of(self, slots: NDArray[np.int64]) -> NDArray[np.int64]:
        """The batch-local match of each (sorted) slot."""
        team = np.searchsorted(self.team_start, slots, side="right") - 1
        return np.searchsorted(self.match_start, team, side="right") - 1

    def sigma_at(self, slots: NDArray[np.int64] | slice) -> NDArray[np.float64]:
        return np.zeros(len(self.mu[slots])) if self.sigma is None else self.sigma[slots]


def _zeros_sink(n: int) -> NDArray[np.float64]:
    """``n`` writable zeros in one float: what a model without uncertainty writes its sigmas into, for free."""
    return np.lib.stride_tricks.as_strided(np.zeros(1), shape=(n,), strides=(0,))


class League:
    """A whole population rated by one model, its state held in arrays.

    Parameters
    ----------
    model : Model
        Any podium model.
    ratings : mapping of str to Rating, optional
        Starting ratings; everyone else starts at ``model.prior``.
    keep_history : bool, default True
        Keep every player's rating after each match (for :meth:`trajectory`: 8 bytes per player slot, 16
        for models with uncertainty) and each match's log-likelihood (:attr:`log_likelihoods`).  The
        league then holds on to the arrays of the :class:`Matches` it records (to know whose ratings
        those are).  ``False`` is the fastest replay: final ratings only.

    Examples
    --------
    >>> import podium
    >>> league = podium.League(podium.PlackettLuce())
    >>> _ = league.record(podium.Match.ffa(["ann", "bob", "cy"]))
    >>> [row.player for row in league.leaderboard()]
    ['ann', 'bob', 'cy']
    """

    def __init__(self, model: Model, ratings: Mapping[str, Rating] | None = None, *, keep_history: bool = True) -> None:
        if not isinstance(model, Model):
            raise TypeError(f"'model' must be a podium model. Got {model!r:.80}.")
        self.model = model
        self.keep_history = keep_history
        self._index_cache: dict[str, int] | None = None
        self._source: list[str] | None = None
        self._source_rows = np.zeros(0, dtype=np.int64)
        self._names: list[str] = []
        self._state = model._new_state(np.empty(0), np.empty(0))
        self._n_matches = 0
        self._hist: list[_Batch] = []
        self._keeps_sigma = model.prior.sigma != 0.0  # models whose prior has sigma 0 never have another
        # each batch's log-likelihoods, or (for models that defer them) the function that computes them
        self._loglik: list[NDArray[np.float64] | Callable[[], NDArray[np.float64]]] = []
        self._linked = UnionFind()  # who is connected to whom through the recorded matches, by state row
        for name, rating in (ratings or {}).items():
            if not isinstance(name, str):
                raise TypeError(f"'ratings' must map player ids (str) to podium.Rating. Got the key {name!r}.")
            model._check_rating(name, rating)
            row = self._add_player(name)
            self._grow()
            self._state.mu[row], self._state.sigma[row] = rating.mu, rating.sigma

    # -- growth ------------------------------------------------------------------------------------
    @property
    def _index(self) -> dict[str, int]:
        """Player id -> state row, built on first use (a replay of a fresh league does not need it)."""
        if self._index_cache is None or len(self._index_cache) != len(self._names):
            self._index_cache = dict(zip(self._names, range(len(self._names))))
        return self._index_cache

    def _rows(self, packed: Matches) -> NDArray[np.int64]:
        """State rows of the history's player list, adding the players who play in it at the prior.

        The mapping is cached per player list: the chunks and slices of one history share theirs, so
        replaying a long history in chunks hashes no player id twice.  Players of the list who do not play
        in ``packed`` are not added.
        """
        names = packed.players
        if self._source is not names or len(self._source_rows) > len(names):
            self._source = names
            self._source_rows = np.full(len(names), -1, dtype=np.int64)
        elif len(self._source_rows) < len(names):  # the same list, grown at its end: keep what is mapped
            self._source_rows = np.r_[self._source_rows, np.full(len(names) - len(self._source_rows), -1, np.int64)]
        rows = self._source_rows
        if len(packed.player) == 0:
            return rows
        unmapped = _players_used(packed.player, len(names)) & (rows < 0)
        missing = np.flatnonzero(unmapped)
        if len(missing):
            if not self._names:  # a fresh league: every new player is new to it, no id to look up
                self._names = list(names) if len(missing) == len(names) else list(compress(names, unmapped.tolist()))
                rows[missing] = np.arange(len(missing))
            else:
                index, known = self._index, self._names
                found = []
                for name in compress(names, unmapped.tolist()):
                    row = index.get(name)
                    if row is None:
                        row = index[name] = len(known)
                        known.append(name)
                    found.append(row)
                rows[missing] = found
            self._grow()
        return rows

    def _add_player(self, name: str) -> int:
        index = self._index
        row = index.get(name)
        if row is None:
            row = index[name] = len(self._names)
            self._names.append(name)
        return row

    def _grow(self) -> None:
        """Extend the state arrays (by doubling) to hold every known player, new ones at the prior."""
        st = self._state
        n = len(self._names)
        if n > len(st.mu):
            grow = max(n, 2 * len(st.mu)) - len(st.mu)
            prior = self.model.prior
            st.mu = np.concatenate([st.mu, np.full(grow, prior.mu)])
            st.sigma = np.concatenate([st.sigma, np.full(grow, prior.sigma)])
            st.games = np.concatenate([st.games, np.zeros(grow, np.int64)])
            st.last_time = np.concatenate([st.last_time, np.full(grow, np.nan)])
            st.extra = np.concatenate([st.extra, np.tile(self.model._extra_prior, (grow, 1))])
            self._linked.grow(len(st.mu))

    # -- recording ------------------------------------------------------------------------------------
    def record(self, match: Match) -> dict[str, Rating]:
        """Rate one match and return the new ratings of its players."""
        if not isinstance(match, Match):
            raise MatchError(f"'match' must be a podium.Match. Got {type(match).__name__}: {match!r:.80}.")
        self.model._check_team_count(len(match.teams))
        packed = Matches.from_matches([match])
        self._replay(packed)
        return {p: self.rating(p) for p in packed.players}

    def record_many(self, matches: Matches | Iterable[Match] | Iterable[Matches], progress: bool = False) -> League:
        """Rate a whole history in order with the compiled replay engine.

        Parameters
        ----------
        matches : Matches, iterable of Match, or iterable of Matches
            The history; or its batches in order (:func:`podium.scan_matches`), replayed as they come, so that
            only one is held at a time (with ``keep_history=False`` memory is the players' state and a batch).
        progress : bool
            Show a progress bar (rich) while replaying.
        """
        if not isinstance(matches, Matches):
            items: Iterator[Any] = iter(matches)
            first = next(items, None)
            if first is None:
                return self
            if isinstance(first, Matches):  # batches (podium.scan_matches): replayed as they come
                return self._record_batches(chain([first], items), progress)
            matches = Matches.from_matches(chain([first], items))
        packed = matches
        self._check_team_counts(packed)
        if not progress or len(packed) <= _CHUNK:
            self._replay(packed)
            return self
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        columns = (TextColumn("rating"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
        with Progress(*columns, transient=True) as bar:
            task = bar.add_task("replay", total=len(packed))
            for start in range(0, len(packed), _CHUNK):
                chunk = packed[start:start + _CHUNK]
                self._replay(chunk)
                bar.advance(task, len(chunk))
        return self

    def _record_batches(self, batches: Iterator[Matches], progress: bool) -> League:
        """Replay an iterator of histories in order, holding one at a time (``record_many`` of batches)."""
        if not progress:
            for batch in batches:
                if not isinstance(batch, Matches):
                    raise TypeError(f"'matches' mixes Matches batches with {type(batch).__name__}; give batches only.")
                self._check_team_counts(batch)
                self._replay(batch)
            return self
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        with Progress(SpinnerColumn(), TextColumn("rating {task.completed:,} matches"), TimeElapsedColumn(),
                      transient=True) as bar:
            task = bar.add_task("replay", total=None)
            for batch in batches:
                if not isinstance(batch, Matches):
                    raise TypeError(f"'matches' mixes Matches batches with {type(batch).__name__}; give batches only.")
                self._check_team_counts(batch)
                self._replay(batch)
                bar.advance(task, len(batch))
        return self

    def _check_team_counts(self, packed: Matches) -> None:
        if self.model._max_teams is not None and len(packed):
            # Two teams per match on average is two in every match (each has at least two); else one pass.
            widest = 2 if len(packed.team_rank) == 2 * len(packed) else most_teams(packed.match_start)
            if widest > self.model._max_teams:
                self.model._check_team_count(widest)

    def _replay(self, packed: Matches) -> None:
        rows = self._rows(packed)
        self._linked.link(packed, rows)
        if not self.keep_history:
            self.model._replay(packed, rows, self._state, None, None)
            self._n_matches += len(packed)
            return
        n_slots = len(packed.player)
        history = _History(0)
        history.mu = np.empty(n_slots)
        history.sigma = np.empty(n_slots) if self._keeps_sigma else _zeros_sink(n_slots)
        deferred = self.model._deferred_log_likelihoods(packed, rows, self._state, history)
        if deferred is None:
            loglik = np.empty(len(packed))
            self.model._replay(packed, rows, self._state, history, loglik)
            self._loglik.append(loglik)
        else:
            self.model._replay(packed, rows, self._state, history, None)
            self._loglik.append(deferred)
        if n_slots:
            self._hist.append(_Batch(self._n_matches, rows, packed.player, packed.team_start, packed.match_start,
                                     packed.time, history.mu, history.sigma if self._keeps_sigma else None))
        self._n_matches += len(packed)

    def set_states(self, states: Mapping[str, PlayerState]) -> None:
        """Put players in the given states (adding them if new), e.g. to continue from a saved population."""
        for name, state in states.items():
            if not isinstance(name, str) or not isinstance(state, PlayerState):
                raise TypeError(f"'states' must map player ids (str) to podium.PlayerState. Got {name!r}: {state!r:.80}.")
            self.model._check_rating(name, Rating(state.mu, state.sigma))
            width = len(self.model._extra_prior)
            if len(state.extra) not in (0, width):
                raise ValueError(f"'states[{name!r}].extra' must hold {width} numbers for {type(self.model).__name__} "
                                 f"(or none, for a new player's). Got {state.extra!r:.80}.")
            row = self._add_player(name)
            self._grow()
            st = self._state
            st.mu[row], st.sigma[row], st.games[row], st.last_time[row] = state.mu, state.sigma, state.games, state.last_time
            st.extra[row] = state.extra if len(state.extra) else self.model._extra_prior

    def states(self, players: Iterable[str] | None = None) -> dict[str, PlayerState]:
        """The full state of the given players (default: everyone seen); unknown players are left out."""
        st, index = self._state, self._index
        names = self._names if players is None else [p for p in players if p in index]
        rows = [index[p] for p in names]
        mu, sigma = st.mu[rows].tolist(), st.sigma[rows].tolist()
        games, last = st.games[rows].tolist(), st.last_time[rows].tolist()
        if st.extra.shape[1] == 0:
            return {p: PlayerState(*values) for p, *values in zip(names, mu, sigma, games, last)}
        extra = [tuple(e) for e in st.extra[rows].tolist()]
        return {p: PlayerState(*values) for p, *values in zip(names, mu, sigma, games, last, extra)}

    def slots(self, start: int = 0) -> tuple[NDArray[np.int64], list[str], NDArray[np.float64], NDArray[np.float64]]:
        """Every player's rating after each match from match ``start`` on (needs ``keep_history=True``).

        Returns ``(match, player, mu, sigma)``, one entry per player of each match, in the order recorded;
        ``match`` indexes everything the league recorded.
        """
        if not self.keep_history:
            raise ValueError("This League was created with keep_history=False; it keeps no history.")
        return self._slots_of(self._hist, start)

    def record_slots(self, matches: Matches | Iterable[Match]
                     ) -> tuple[NDArray[np.int64], list[str], NDArray[np.float64], NDArray[np.float64]]:
        """Rate ``matches`` in order (as :meth:`record_many`) and return every player's rating after each of them.

        The return is that of :meth:`slots` for these matches (``match`` counts everything the league
        recorded).  A league with ``keep_history=False`` keeps none of it: replaying a long history chunk by
        chunk this way needs memory for the players' states and one chunk only (the league server's void and
        correct do so).  A league that keeps history keeps this chunk's too.
        """
        packed = matches if isinstance(matches, Matches) else Matches.from_matches(matches)
        first = self._n_matches
        if self.keep_history or len(packed) == 0:
            self.record_many(packed)
            return self.slots(first) if self.keep_history else self._slots_of([], 0)
        self._check_team_counts(packed)
        rows = self._rows(packed)
        self._linked.link(packed, rows)
        n_slots = len(packed.player)
        history = _History(0)
        history.mu = np.empty(n_slots)
        history.sigma = np.empty(n_slots) if self._keeps_sigma else _zeros_sink(n_slots)
        self.model._replay(packed, rows, self._state, history, None)
        self._n_matches += len(packed)
        batch = _Batch(first, rows, packed.player, packed.team_start, packed.match_start, packed.time, history.mu,
                       history.sigma if self._keeps_sigma else None)
        return self._slots_of([batch], first)

    def _slots_of(self, batches: Iterable[_Batch], start: int
                  ) -> tuple[NDArray[np.int64], list[str], NDArray[np.float64], NDArray[np.float64]]:
        parts: list[list[NDArray[Any]]] = [[], [], [], []]
        for batch in batches:
            first = max(start - batch.offset, 0)  # the batch's first match to report
            n_matches = len(batch.match_start) - 1
            if first >= n_matches:
                continue
            t0 = batch.match_start[first]
            p0 = batch.team_start[t0]
            teams_per = np.diff(batch.match_start[first:])
            team_match = np.repeat(np.arange(first, n_matches), teams_per)
            slot_match = np.repeat(team_match, np.diff(batch.team_start[t0:]))
            for part, arr in zip(parts, (slot_match + batch.offset, batch.names_rows[batch.player[p0:]],
                                         batch.mu[p0:], batch.sigma_at(slice(p0, None)))):
                part.append(arr)
        match_, rows_, mu_, sigma_ = (np.concatenate(p) if p else np.zeros(0) for p in parts)
        names = self._names
        return match_.astype(np.int64), [names[r] for r in rows_.astype(np.int64).tolist()], mu_.astype(float), sigma_.astype(float)

    # -- reading -----------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, player: object) -> bool:
        return player in self._index

    @property
    def n_matches(self) -> int:
        """How many matches the league has recorded."""
        return self._n_matches

    @property
    def log_likelihoods(self) -> NDArray[np.float64]:
        """Each recorded match's log-likelihood under the ratings just before it (prequential).

        Models whose log-likelihood costs more than their update (TrueSkill) compute them on the first read
        after recording, from the kept history: recording stays at the speed of the updates.
        """
        if not self.keep_history:
            raise ValueError("This League was created with keep_history=False; it keeps no log-likelihoods.")
        parts = [part() if callable(part) else part for part in self._loglik]  # deferred ones computed now
        whole = np.concatenate(parts) if parts else np.zeros(0)
        self._loglik = [whole] if parts else []
        return whole.copy()

    @property
    def players(self) -> list[str]:
        """Every player seen, in order of first appearance."""
        return list(self._names)

    def rating(self, player: str) -> Rating:
        """A player's current rating (the prior for a player never seen)."""
        row = self._index.get(player)
        if row is None:
            return self.model.prior
        return Rating(float(self._state.mu[row]), float(self._state.sigma[row]))

    def games(self, player: str) -> int:
        """How many recorded matches a player took part in."""
        row = self._index.get(player)
        return 0 if row is None else int(self._state.games[row])

    @property
    def ratings(self) -> dict[str, Rating]:
        """Every player's current rating."""
        n = len(self._names)
        mu, sigma = self._state.mu[:n].tolist(), self._state.sigma[:n].tolist()
        return {name: Rating(m, s) for name, m, s in zip(self._names, mu, sigma)}

    def leaderboard(self, k: float = 3.0, *, top: int | None = None, min_games: int = 0,
                    connected_only: bool = False) -> list[LeaderboardRow]:
        """Players sorted by ``mu - k * sigma`` (for the Elo family, ``sigma = 0``: by rating).

        Each row's ``connected`` says whether the player is in the largest component of the recorded matches
        (:meth:`components`); a rating outside it is not comparable with the leaders' (the two groups never
        met, directly or through others).

        Parameters
        ----------
        k : float, default 3
            How many standard deviations to subtract (TrueSkill's conservative leaderboard).
        top : int, optional
            Keep only the first ``top`` rows.
        min_games : int, default 0
            Leave out players with fewer recorded matches.
        connected_only : bool, default False
            Leave out players outside the largest component.
        """
        if not isinstance(connected_only, bool):
            raise TypeError(f"'connected_only' must be a bool. Got {connected_only!r:.80}.")
        n = len(self._names)
        labels, _ = self._linked.labels(n)
        return leaderboard_rows(self._names, self._state.mu[:n], self._state.sigma[:n], self._state.games[:n], k,
                                top, min_games, labels == 0, connected_only)

    def components(self) -> Components:
        """The connected components of the recorded matches (a union-find the league keeps as it records; the
        latest batch is joined on the first read after its replay, so that a replay does not pay for it).

        Every player the league knows has a component; one given a rating or state but in no recorded match
        is alone in theirs (the league knows only the matches it recorded).  Labels run from the largest
        component; among components of one size, the one with the player the league saw first comes first.
        No groups or thin links: the league keeps no matches to count (see :func:`podium.components`).
        """
        n = len(self._names)
        labels, sizes = self._linked.labels(n)
        return Components(list(self._names), labels, sizes)

    def trajectory(self, player: str) -> Trajectory:
        """The player's rating after each of their matches (needs ``keep_history=True``)."""
        if not self.keep_history:
            raise ValueError("This League was created with keep_history=False; it keeps no trajectories.")
        row = self._index.get(player)
        parts: list[list[NDArray[Any]]] = [[], [], [], []]
        if row is not None:
            for batch in self._hist:
                entry = np.flatnonzero(batch.names_rows == row)  # the player's index in the batch's list, if any
                if len(entry) == 0:
                    continue
                slots = np.flatnonzero(batch.player == entry[0])
                match = batch.matches_of(slots)
                for part, arr in zip(parts, (match + batch.offset, batch.time[match], batch.mu[slots],
                                             batch.sigma_at(slots))):
                    part.append(arr)
        cat = [np.concatenate(p) if p else np.zeros(0) for p in parts]
        return Trajectory(player, cat[0].astype(np.int64), cat[1].astype(float), cat[2].astype(float), cat[3].astype(float))

    history = trajectory

    def __repr__(self) -> str:
        return f"League({self.model!r}, {len(self)} players, {self._n_matches} matches)"
