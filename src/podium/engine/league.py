"""A population's ratings, held in arrays, and the generic replay engine that updates them.

The engine knows no model by name.  It maps a history's players to rows of the population's state, keeps what
a replay writes (history, log-likelihoods) and hands the model its columnar matches through the kernels
interface (``Model._new_state``, ``Model._replay``, ``Model._deferred_log_likelihoods``; ``docs/design.md``,
"The kernels layer"): each model's compiled kernel, the same one its single-match ``rate`` runs, walks
:class:`podium.Matches` (``match_start``, ``team_start``, ``team_rank``, ``player``, ``weight``), computing a
match's updates from the ratings before it and applying them together.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, compress
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from ..jit import adaptive, small
from ..data.ids import stored_form
from ..data.longform import Lookup
from ..data.match import Match, MatchError
from ..data.matches import Matches
from ..data.names import NameIndex, enlarge, grown
from ..data.rating import LeaderboardRow, Rating, leaderboard_rows
from ..data.readahead import read_ahead
from ..data.strings import Strings
from ..kernels.common import History, most_teams
from ..models.base import Model
from ..ordering.numerics import jit
from .components import Components, UnionFind
from .union_find import JoinBehind

__all__ = ["League", "LeaderboardRow", "PlayerState", "Trajectory"]

_CHUNK = 65536  # matches per compiled call when a progress bar is shown


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
        self._players = NameIndex()  # player id -> state row, compactly (podium.data.names)
        self._source: Sequence[str] | None = None
        self._source_rows = np.zeros(0, dtype=np.int64)
        self._state = model._new_state(np.empty(0), np.empty(0))
        self._n_matches = 0
        self._hist: list[_Batch] = []
        self._keeps_sigma = model.prior.sigma != 0.0  # models whose prior has sigma 0 never have another
        # each batch's log-likelihoods, or (for models that defer them) the function that computes them
        self._loglik: list[NDArray[np.float64] | Callable[[], NDArray[np.float64]]] = []
        self._linked = UnionFind()  # who is connected to whom through the recorded matches, by state row
        self._join_behind: JoinBehind | None = None  # while streaming: the union-find joins on a thread of its own
        for name, rating in (ratings or {}).items():
            if not isinstance(name, str):
                raise TypeError(f"'ratings' must map player ids (str) to podium.Rating. Got the key {name!r}.")
            model._check_rating(name, rating)
            row = self._add_player(name)
            self._grow()
            self._state.mu[row], self._state.sigma[row] = rating.mu, rating.sigma

    # -- growth ------------------------------------------------------------------------------------
    def _rows(self, packed: Matches) -> NDArray[np.int64]:
        """State rows of the history's player list, adding the players who play in it at the prior.

        The mapping is cached per player list: the chunks and slices of one history share theirs, so
        replaying a long history in chunks hashes no player id twice.  Players of the list who do not play
        in ``packed`` are not added.

        The names go to the compiled index in one call: a fresh league's are appended (unhashed until a name is
        looked up); an Arrow-backed player list (:class:`podium.data.strings.Strings`) is read without a ``str``.
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
            wanted: Sequence[str] = names
            if len(missing) < len(names):
                wanted = names.take(missing) if isinstance(names, Strings) else list(compress(names, unmapped.tolist()))
            if len(self._players) == 0:  # a fresh league: every new player is new to it, no id to look up
                self._players.extend_new(wanted)
                rows[missing] = np.arange(len(missing))
            else:
                rows[missing] = self._players.rows(wanted)
            self._grow()
        return rows

    def _add_player(self, name: str) -> int:
        return self._players.add(name)

    def _grow(self) -> None:
        """Extend the state arrays (by :func:`podium.data.names.grown`, in place where they can) to hold every known
        player, new ones at the prior."""
        st = self._state
        n = len(self._players)
        if n > len(st.mu):  # by half or a quarter, not doubling: at ten million players the state is hundreds of MB
            size = max(n, grown(len(st.mu)))
            prior = self.model.prior
            enlarge(st, "mu", size, prior.mu)  # in place where it can: not the old and the new at once
            enlarge(st, "sigma", size, prior.sigma)
            enlarge(st, "games", size, 0)
            enlarge(st, "last_time", size, np.nan)
            enlarge(st, "extra", size, self.model._extra_prior)
            if self._join_behind is None:  # (else the joining thread grows it)
                self._linked.grow(len(st.mu))

    # -- recording ------------------------------------------------------------------------------------
    def record(self, match: Match) -> dict[str, Rating]:
        """Rate one match and return the new ratings of its players."""
        if not isinstance(match, Match):
            raise MatchError(f"'match' must be a podium.Match. Got {type(match).__name__}: {match!r:.80}.")
        self.model._check_team_count(len(match.teams))
        with small(teams=len(match.teams)):
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
        ahead = getattr(matches, "_read_ahead", None)
        if ahead is not None and not isinstance(matches, Matches):  # podium.scan_matches: read while replaying
            batches, finish = ahead(self._players)
            self._record_ahead(batches, progress)
            finish()
            return self
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
            adaptive(len(packed), lambda a, b: self._replay(packed if (a, b) == (0, len(packed)) else packed[a:b]),
                     teams=int(packed.n_teams.max()) if len(packed) else 0)
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

    def _record_ahead(self, batches: Iterator[tuple[Matches, Lookup | None]], progress: bool) -> None:
        """Replay batches while the next one is read on another thread (pyarrow and the compiled kernels release
        the GIL, so that reading, mapping the players and replaying keep two cores busy).  Each batch comes with its
        players' rows in this league's index where the reader looked them up (:func:`podium.scan_matches`)."""
        def prepare(item: tuple[Matches, Lookup | None]) -> tuple[Matches, Lookup | None]:
            self._check_team_counts(item[0])
            return item

        prepared: Generator[tuple[Matches, Lookup | None], None, None] = read_ahead(batches, prepare)
        self._join_behind = JoinBehind(self._linked)
        failed = False
        bar: Any = None
        committed = len(self._players)  # names after the players of the batch being replayed, if read with them
        replayed = hinted = False
        try:
            if progress:
                from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

                bar = Progress(SpinnerColumn(), TextColumn("rating {task.completed:,} matches"), TimeElapsedColumn(),
                               transient=True)
                bar.start()
                task = bar.add_task("replay", total=None)
            for batch, lookup in prepared:
                if lookup is not None:
                    committed, hinted = lookup.known, True
                replayed = True
                self._replay(batch, lookup)
                if bar is not None:
                    bar.advance(task, len(batch))
        except BaseException:
            failed = True
            prepared.close()  # the reader has stopped: forget the players it added for batches not replayed
            if hinted or not replayed:
                self._players.truncate(committed)
                self._source = None
            raise
        finally:
            prepared.close()
            joined, self._join_behind = self._join_behind, None
            joined.close(check=not failed)
            self._linked.grow(len(self._state.mu))
            if bar is not None:
                bar.stop()

    def _check_team_counts(self, packed: Matches) -> None:
        if self.model._max_teams is not None and len(packed):
            # Two teams per match on average is two in every match (each has at least two); else one pass.
            widest = 2 if len(packed.team_rank) == 2 * len(packed) else most_teams(packed.match_start)
            if widest > self.model._max_teams:
                self.model._check_team_count(widest)

    def _replay(self, packed: Matches, lookup: Lookup | None = None) -> None:
        if lookup is None:
            rows = self._rows(packed)
        else:  # looked up in this league's index as the batch was read
            self._grow()
            rows = lookup.rows
        if self._join_behind is not None:
            self._join_behind.put(packed, rows, len(self._state.mu))
        else:
            self._linked.link(packed, rows)
        if not self.keep_history:
            self.model._replay(packed, rows, self._state, None, None)
            self._n_matches += len(packed)
            return
        n_slots = len(packed.player)
        history = History(0)
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
        st = self._state
        if players is None:
            names, rows = self._players.to_list(), np.arange(len(self._players))
        else:
            asked = [stored_form(p) for p in players if isinstance(p, str)]
            found = self._players.rows(asked, add=False) if asked else np.zeros(0, dtype=np.int64)
            names, rows = [p for p, r in zip(asked, found.tolist()) if r >= 0], found[found >= 0]
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
        history = History(0)
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
        return match_.astype(np.int64), self._players.names(rows_.astype(np.int64)), mu_.astype(float), sigma_.astype(float)

    # -- reading -----------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._players)

    def __contains__(self, player: object) -> bool:
        return player in self._players

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
        return self._players.to_list()

    def rating(self, player: str) -> Rating:
        """A player's current rating (the prior for a player never seen)."""
        row = self._players.get(player)
        if row is None:
            return self.model.prior
        return Rating(float(self._state.mu[row]), float(self._state.sigma[row]))

    def games(self, player: str) -> int:
        """How many recorded matches a player took part in."""
        row = self._players.get(player)
        return 0 if row is None else int(self._state.games[row])

    @property
    def ratings(self) -> dict[str, Rating]:
        """Every player's current rating."""
        n = len(self._players)
        mu, sigma = self._state.mu[:n].tolist(), self._state.sigma[:n].tolist()
        return {name: Rating(m, s) for name, m, s in zip(self._players.to_list(), mu, sigma)}

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
        n = len(self._players)
        labels, _ = self._linked.labels(n)
        return leaderboard_rows(self._players.names, self._state.mu[:n], self._state.sigma[:n], self._state.games[:n],
                                k, top, min_games, labels == 0, connected_only)

    def components(self) -> Components:
        """The connected components of the recorded matches (a union-find the league keeps as it records; the
        latest batch is joined on the first read after its replay, so that a replay does not pay for it).

        Every player the league knows has a component; one given a rating or state but in no recorded match
        is alone in theirs (the league knows only the matches it recorded).  Labels run from the largest
        component; among components of one size, the one with the player the league saw first comes first.
        No groups or thin links: the league keeps no matches to count (see :func:`podium.components`).
        """
        n = len(self._players)
        labels, sizes = self._linked.labels(n)
        return Components(self._players.to_list(), labels, sizes)

    def trajectory(self, player: str) -> Trajectory:
        """The player's rating after each of their matches (needs ``keep_history=True``)."""
        if not self.keep_history:
            raise ValueError("This League was created with keep_history=False; it keeps no trajectories.")
        row = self._players.get(player)
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
