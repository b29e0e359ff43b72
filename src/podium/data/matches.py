"""Many matches in the compact columnar form the replay engine consumes (``docs/design.md``, "Speed")::

    match_start[M+1]  -> team_start[T+1] -> player[P], weight[P]
    team_rank[T]      rank of each team, -1 = did not finish
    time[M]           float (NaN = unknown); ISO dates become days since 1970-01-01

and, only in a history that has them (else None): ``score[T]`` (NaN = none), ``higher_is_better[M]``,
``advantage[T]`` and ``match_weight[M]`` (what a result says beyond the order: ``docs/design.md``,
"What a result says"),

and the packer that builds it from records.  One :class:`podium.Match` is :mod:`podium.data.match`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, cast, overload

import numpy as np
from numpy.typing import NDArray

from . import longform, results, tables
from .ids import check_player_id, plain_ids
from .match import (Match, MatchError, Time, _check_teams, _check_weights, _show, check_advantage,
                    check_errors, check_match_weight, check_outcome, format_time, is_date_time, parse_time,
                    MAX_MATCH_WEIGHT, MAX_TIME, MAX_VALUE, MIN_WEIGHT)
from .strings import Strings

__all__ = ["Matches"]


def _ranges(starts: NDArray[np.int64], stops: NDArray[np.int64]) -> NDArray[np.int64]:
    """``concatenate([arange(a, b) for a, b in zip(starts, stops)])`` without a Python loop."""
    lengths = stops - starts
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.r_[0, np.cumsum(lengths)[:-1]]
    return np.repeat(starts - offsets, lengths) + np.arange(total, dtype=np.int64)


def _joined_extras(parts: Sequence[Matches]) -> dict[str, Any]:
    """The optional columns of histories joined in order (:meth:`Matches.concat`): a column any part has, with
    the others' defaults (NaN score, higher is better, no advantage, weight 1) where a part has none."""
    out: dict[str, Any] = {}
    for name, per_team, fill, dtype in (("score", True, np.nan, np.float64), ("higher_is_better", False, True, bool),
                                        ("advantage", True, 0.0, np.float64), ("match_weight", False, 1.0, np.float64)):
        if all(getattr(part, name) is None for part in parts):
            out[name] = None
            continue
        out[name] = np.concatenate([
            getattr(part, name) if getattr(part, name) is not None
            else np.full(len(part.team_rank) if per_team else len(part), fill, dtype=dtype)
            for part in parts])
    return out


class Matches(Sequence[Match]):
    """Many matches in columnar, CSR-style arrays: the form the replay engine consumes.

    ``len``, indexing and iteration give :class:`Match` objects; slicing gives a ``Matches``.
    Build one with :meth:`from_matches` (a list of ``Match``), :meth:`from_arrays`,
    :func:`podium.read_matches` or :func:`podium.simulate`.

    Attributes
    ----------
    match_start : int64[M+1]
        Team ``t`` belongs to match ``m`` when ``match_start[m] <= t < match_start[m+1]``.
    team_start : int64[T+1]
        Player slot ``p`` belongs to team ``t`` when ``team_start[t] <= p < team_start[t+1]``.
    team_rank : int64[T]
        Rank of each team; ``-1`` = did not finish.
    player : int64[P]
        Dense index into :attr:`players`.
    weight : float64[P]
        Partial-play weight of each player slot.
    time : float64[M]
        Match time as a float (NaN unknown); see :func:`parse_time`.
    players : list of str
        Player ids; ``players[player[p]]`` is the id in slot ``p``.  A batch of :func:`podium.scan_matches`
        read from Parquet keeps them in Arrow: a :class:`podium.data.strings.Strings`, a read-only list of ``str``.
    ids : list of (str or None)
        Match ids (a :class:`podium.data.strings.Strings` too in such a batch).
    time_is_date : bool
        Whether :attr:`time` holds days since 1970 parsed from dates (written back as ISO-8601).
    score : float64[T] or None
        Each team's score (NaN: none); None when no match of the history has scores.
    higher_is_better : bool[M] or None
        Whether a higher score is better, per match; None when it is everywhere.
    advantage : float64[T] or None
        Each team's advantage (home, first move); None when no team has one.
    match_weight : float64[M] or None
        Each match's importance; None when every match weighs 1.
    """

    __slots__ = (
        "match_start", "team_start", "team_rank", "player", "weight", "time",
        "players", "ids", "meta", "time_is_date", "has_weights",
        "score", "higher_is_better", "advantage", "match_weight",
    )

    def __init__(
        self,
        match_start: NDArray[np.int64],
        team_start: NDArray[np.int64],
        team_rank: NDArray[np.int64],
        player: NDArray[np.int64],
        weight: NDArray[np.float64],
        time: NDArray[np.float64],
        players: Sequence[str],
        ids: Sequence[str | None] | None = None,
        meta: list[dict[str, Any] | None] | None = None,
        *,
        time_is_date: bool = False,
        has_weights: bool | None = None,
        validate: bool = True,
        score: NDArray[np.float64] | None = None,
        higher_is_better: NDArray[np.bool_] | None = None,
        advantage: NDArray[np.float64] | None = None,
        match_weight: NDArray[np.float64] | None = None,
    ) -> None:
        self.match_start = np.ascontiguousarray(match_start, dtype=np.int64)
        self.team_start = np.ascontiguousarray(team_start, dtype=np.int64)
        self.team_rank = np.ascontiguousarray(team_rank, dtype=np.int64)
        self.player = np.ascontiguousarray(player, dtype=np.int64)
        self.weight = np.ascontiguousarray(weight, dtype=np.float64)
        self.time = np.ascontiguousarray(time, dtype=np.float64)
        # Slices share their history's player list (the League caches its mapping per list object).
        # A Strings (ids kept in Arrow: podium.scan_matches) stays one, a read-only list that a League maps
        # without making the str.
        self.players: list[str] = cast(list[str], players) if isinstance(players, (list, Strings)) else list(players)
        n = len(self.match_start) - 1
        self.ids: list[str | None] = (cast(list[str | None], ids) if isinstance(ids, Strings) else list(ids)) \
            if ids is not None else [None] * n
        self.meta = list(meta) if meta is not None else None
        self.time_is_date = bool(time_is_date)
        self.has_weights = bool(np.any(self.weight != 1.0)) if has_weights is None else has_weights
        self.score = None if score is None else np.ascontiguousarray(score, dtype=np.float64)
        self.higher_is_better = None if higher_is_better is None else np.ascontiguousarray(higher_is_better, dtype=bool)
        self.advantage = None if advantage is None else np.ascontiguousarray(advantage, dtype=np.float64)
        self.match_weight = None if match_weight is None else np.ascontiguousarray(match_weight, dtype=np.float64)
        if validate:
            self._validate()

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_arrays(
        cls,
        match_start: Any,
        team_start: Any,
        team_rank: Any,
        player: Any,
        weight: Any = None,
        time: Any = None,
        players: Sequence[str] | None = None,
        ids: Sequence[str | None] | None = None,
        *,
        time_is_date: bool = False,
        score: Any = None,
        higher_is_better: Any = None,
        advantage: Any = None,
        match_weight: Any = None,
    ) -> Matches:
        """Build from the columnar arrays themselves (validated; integer arrays must hold integers).  The optional
        columns (:attr:`score`, :attr:`higher_is_better`, :attr:`advantage`, :attr:`match_weight`) may be given
        too."""
        for field_name, values in (("match_start", match_start), ("team_start", team_start),
                                   ("team_rank", team_rank), ("player", player)):
            arr = np.asarray(values)
            if arr.size and not np.issubdtype(arr.dtype, np.integer):
                raise MatchError(f"'{field_name}' must be an array of integers. Got dtype {arr.dtype}: {_show(arr.tolist())}.")
        player = np.asarray(player, dtype=np.int64)
        n_matches = len(match_start) - 1
        if weight is None:
            weight = np.ones(len(player))
        if time is None:
            time = np.full(n_matches, np.nan)
        if players is None:
            players = [str(i) for i in range(int(player.max()) + 1 if len(player) else 0)]
        return cls(match_start, team_start, team_rank, player, weight, time, list(players),
                   list(ids) if ids is not None else None, time_is_date=time_is_date, score=score,
                   higher_is_better=higher_is_better, advantage=advantage, match_weight=match_weight)

    @classmethod
    def from_matches(cls, matches: Iterable[Match]) -> Matches:
        """Pack a sequence of :class:`Match` objects.

        Raises
        ------
        MatchError
            If an element is not a ``Match``, or if numeric times and dates are mixed.
        """
        if isinstance(matches, Matches):
            return matches
        packer = Packer()
        for m, match in enumerate(matches):
            if not isinstance(match, Match):
                raise MatchError(f"matches[{m}] must be a podium.Match. Got {_show(match)}.")
            packer.append(match.teams, match.ranks, match.weights, match.time, match.id, match.meta, match.scores,
                          match.higher_is_better, match.advantage, match.weight)
        return packer.build()

    @classmethod
    def of_match(cls, match: Match) -> Matches:
        """One match packed, as :meth:`from_matches` packs it, without the builder: the path of the single-match
        public calls (``rate``, ``win_probabilities``, ``quality``), where a game server pays it on every call.

        A match's players are distinct (:class:`Match` checks it), so they are numbered in order of appearance.
        """
        teams, weights, when, scores, advantage = match.teams, match.weights, match.time, match.scores, match.advantage
        players = [p for team in teams for p in team]
        team_start = [0]
        for team in teams:
            team_start.append(team_start[-1] + len(team))
        # Every field as __init__ would set it from the builder's arrays (validate=False), without its copies.
        out = cls.__new__(cls)
        out.match_start = np.array((0, len(teams)), dtype=np.int64)
        out.team_start = np.array(team_start, dtype=np.int64)
        out.team_rank = np.array([-1 if r is None else r for r in match.ranks], dtype=np.int64)
        out.player = np.arange(len(players), dtype=np.int64)
        out.weight = np.ones(len(players)) if weights is None else np.array(
            [w for team in weights for w in team], dtype=np.float64)
        out.time = np.array((parse_time(when),), dtype=np.float64)
        out.players = players
        out.ids = [match.id]
        out.meta = None if match.meta is None else [match.meta]
        out.time_is_date = when is not None and is_date_time(when)
        out.has_weights = weights is not None
        out.score = None if scores is None else np.array([math.nan if x is None else x for x in scores], dtype=np.float64)
        out.higher_is_better = None if match.higher_is_better else np.zeros(1, dtype=bool)
        out.advantage = None if advantage is None else np.array(advantage, dtype=np.float64)
        out.match_weight = None if match.weight == 1.0 else np.array((match.weight,), dtype=np.float64)
        return out

    @classmethod
    def concat(cls, parts: Sequence[Matches]) -> Matches:
        """Join histories in order, merging their player lists."""
        index: dict[str, int] = {}
        ms, ts, tr, pl, wt, tm = [np.zeros(1, np.int64)], [np.zeros(1, np.int64)], [], [], [], []
        ids: list[str | None] = []
        meta: list[dict[str, Any] | None] = []
        has_meta = any(part.meta is not None for part in parts)
        t_off = p_off = 0
        dates = {part.time_is_date for part in parts if len(part) and not np.all(np.isnan(part.time))}
        if len(dates) > 1:
            raise MatchError("'time' mixes numbers and dates across the histories being joined.")
        for part in parts:
            remap = np.array([index.setdefault(p, len(index)) for p in part.players], dtype=np.int64)
            ms.append(part.match_start[1:] + t_off)
            ts.append(part.team_start[1:] + p_off)
            tr.append(part.team_rank)
            pl.append(remap[part.player] if len(part.player) else part.player)
            wt.append(part.weight)
            tm.append(part.time)
            ids.extend(part.ids)
            meta.extend(part.meta if part.meta is not None else [None] * len(part))
            t_off += len(part.team_rank)
            p_off += len(part.player)
        return cls(np.concatenate(ms), np.concatenate(ts), np.concatenate(tr) if tr else np.zeros(0, np.int64),
                   np.concatenate(pl) if pl else np.zeros(0, np.int64), np.concatenate(wt) if wt else np.zeros(0),
                   np.concatenate(tm) if tm else np.zeros(0), list(index), ids, meta if has_meta else None,
                   time_is_date=dates == {True}, validate=False, **_joined_extras(parts))

    def _validate(self) -> None:
        ms, ts = self.match_start, self.team_start
        n_teams, n_slots = len(self.team_rank), len(self.player)
        if len(ms) < 1 or ms[0] != 0 or ms[-1] != n_teams:
            raise MatchError(f"'match_start' must start at 0 and end at the number of teams ({n_teams}). Got {_show(ms.tolist())}.")
        if len(ts) != n_teams + 1 or ts[0] != 0 or ts[-1] != n_slots:
            raise MatchError(f"'team_start' must have {n_teams + 1} entries from 0 to {n_slots}. Got {_show(ts.tolist())}.")
        teams_per = np.diff(ms)
        if np.any(teams_per < 2):
            m = int(np.argmax(teams_per < 2))
            raise MatchError(f"match {m}: 'teams' must hold at least two teams. Got {int(teams_per[m])}.")
        sizes = np.diff(ts)
        if np.any(sizes < 1):
            t = int(np.argmax(sizes < 1))
            raise MatchError(f"team {t}: every team needs at least one player (empty team in 'team_start').")
        if np.any(self.team_rank < -1):
            t = int(np.argmax(self.team_rank < -1))
            raise MatchError(f"team {t}: 'team_rank' must be >= 0 or -1 (did not finish). Got {int(self.team_rank[t])}.")
        if len(self.weight) != n_slots:
            raise MatchError(f"'weight' must have one entry per player slot ({n_slots}). Got {len(self.weight)}.")
        bad = ~((self.weight >= MIN_WEIGHT) & (self.weight <= 1.0))
        if np.any(bad):
            p = int(np.argmax(bad))
            raise MatchError(f"player slot {p}: 'weight' must be in [{MIN_WEIGHT:g}, 1]. Got {float(self.weight[p])!r}.")
        if len(self.time) != len(ms) - 1:
            raise MatchError(f"'time' must have one entry per match ({len(ms) - 1}). Got {len(self.time)}.")
        if np.any(np.abs(self.time) >= MAX_TIME):
            m = int(np.argmax(np.abs(self.time) >= MAX_TIME))
            raise MatchError(f"match {m}: 'time' must be of magnitude below 2**63, or NaN (unknown). "
                             f"Got {float(self.time[m])!r}.")
        if n_slots and (self.player.min() < 0 or self.player.max() >= len(self.players)):
            raise MatchError(f"'player' indices must lie in [0, {len(self.players)}).")
        if not plain_ids(self.players):
            self.players = [check_player_id(p, f"players[{i}]") for i, p in enumerate(self.players)]
        if len(set(self.players)) != len(self.players):
            raise MatchError("'players' must list each player id once (ids equal in NFC are one).")
        if len(self.ids) != len(ms) - 1:
            raise MatchError(f"'ids' must have one entry per match ({len(ms) - 1}). Got {len(self.ids)}.")
        self._validate_extras()
        # A player twice in one match: sort (match, player) pairs and look for neighbours that agree.
        if n_slots:
            team_of_slot = np.repeat(np.arange(n_teams), sizes)
            match_of_slot = np.repeat(np.arange(len(ms) - 1), teams_per)[team_of_slot]
            key = match_of_slot * np.int64(len(self.players) + 1) + self.player
            order = np.argsort(key, kind="stable")
            same = key[order][1:] == key[order][:-1]
            if np.any(same):
                slot = int(order[1:][same][0])
                m = int(match_of_slot[slot])
                raise MatchError(f"match {m}: 'teams': player {self.players[self.player[slot]]!r} appears more than once.")

    def _validate_extras(self) -> None:
        """The optional columns: their lengths, finite values, positive match weights, and ranks that do not
        contradict the scores (:func:`podium.data.match.check_ranks_agree`)."""
        n_teams, n_matches = len(self.team_rank), len(self)
        for field_name, values, size in (("score", self.score, n_teams), ("higher_is_better", self.higher_is_better, n_matches),
                                         ("advantage", self.advantage, n_teams), ("match_weight", self.match_weight, n_matches)):
            if values is not None and len(values) != size:
                raise MatchError(f"'{field_name}' must have one entry per {'team' if size == n_teams else 'match'} "
                                 f"({size}). Got {len(values)}.")
        if self.score is not None and np.any(np.abs(self.score) > MAX_VALUE):
            t = int(np.argmax(np.abs(self.score) > MAX_VALUE))
            raise MatchError(f"team {t}: 'score' must be of magnitude at most {MAX_VALUE:g}, or NaN (none). "
                             f"Got {float(self.score[t])!r}.")
        if self.advantage is not None and not np.all(np.abs(self.advantage) <= MAX_VALUE):
            t = int(np.argmax(~(np.abs(self.advantage) <= MAX_VALUE)))
            raise MatchError(f"team {t}: 'advantage' must be of magnitude at most {MAX_VALUE:g}. "
                             f"Got {float(self.advantage[t])!r}.")
        if self.match_weight is not None:
            bad = ~((self.match_weight >= 1.0 / MAX_MATCH_WEIGHT) & (self.match_weight <= MAX_MATCH_WEIGHT))
            if np.any(bad):
                m = int(np.argmax(bad))
                raise MatchError(f"match {m}: 'weight' (the match's importance) must be a number from "
                                 f"{1 / MAX_MATCH_WEIGHT:g} to {MAX_MATCH_WEIGHT:g}. Got {float(self.match_weight[m])!r}.")
        if self.score is None:
            if self.higher_is_better is not None and not np.all(self.higher_is_better):
                m = int(np.argmin(self.higher_is_better))
                raise MatchError(f"match {m}: 'higher_is_better' is false but the match has no 'scores' for it to "
                                 "apply to.")
            return
        sign = np.ones(n_matches) if self.higher_is_better is None else np.where(self.higher_is_better, 1.0, -1.0)
        if self.higher_is_better is not None and n_matches:
            # every match has two teams or more (checked above), so reduceat sees no empty run
            scored = np.add.reduceat((~np.isnan(self.score)).astype(np.int64), self.match_start[:-1]) > 0
            lost = np.flatnonzero(~self.higher_is_better & ~scored)
            if len(lost):
                raise MatchError(f"match {int(lost[0])}: 'higher_is_better' is false but the match has no 'scores' "
                                 "for it to apply to.")
        contradicted = results.contradicting(self.match_start, self.team_rank, self.score, sign)
        if len(contradicted):
            m = int(contradicted[0])
            raise MatchError(f"match {m}: {results.contradiction(self.match_start, self.team_rank, self.score, sign, m)}")

    # -- sequence protocol --------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.match_start) - 1

    @overload
    def __getitem__(self, i: int) -> Match: ...
    @overload
    def __getitem__(self, i: slice) -> Matches: ...

    def __getitem__(self, i: int | slice) -> Match | Matches:
        n = len(self)
        if isinstance(i, slice):
            start, stop, step = i.indices(n)
            if step != 1:
                raise ValueError("Matches supports only contiguous slices (step 1).")
            stop = max(stop, start)
            t0, t1 = int(self.match_start[start]), int(self.match_start[stop])
            p0, p1 = int(self.team_start[t0]), int(self.team_start[t1])
            return Matches(
                self.match_start[start:stop + 1] - t0, self.team_start[t0:t1 + 1] - p0, self.team_rank[t0:t1],
                self.player[p0:p1], self.weight[p0:p1], self.time[start:stop], self.players, self.ids[start:stop],
                self.meta[start:stop] if self.meta is not None else None,
                time_is_date=self.time_is_date, has_weights=self.has_weights, validate=False,
                **self.extras(slice(t0, t1), slice(start, stop)),
            )
        if isinstance(i, (int, np.integer)) and not isinstance(i, bool):
            j = int(i) + n if i < 0 else int(i)
            if not 0 <= j < n:
                raise IndexError(f"match index {i} out of range for {n} matches")
            return self._match(j)
        raise TypeError(f"Matches indices must be int or slice, not {type(i).__name__}")

    def take(self, indices: Any) -> Matches:
        """The matches at ``indices`` (integers, in the order given) as a history of their own.

        The result shares this history's player list; its slot ``q`` is this history's slot
        ``self.slots_of(indices)[q]``.
        """
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        n = len(self)
        if len(idx) and (int(idx.min()) < -n or int(idx.max()) >= n):
            raise IndexError(f"'indices' must lie in [{-n}, {n}) for {n} matches. Got {_show(idx.tolist())}.")
        idx = np.where(idx < 0, idx + n, idx)
        teams = _ranges(self.match_start[idx], self.match_start[idx + 1])
        slots = _ranges(self.team_start[teams], self.team_start[teams + 1])
        n_teams = self.match_start[idx + 1] - self.match_start[idx]
        n_slots = self.team_start[teams + 1] - self.team_start[teams]
        ids = [self.ids[j] for j in idx.tolist()]
        meta = [self.meta[j] for j in idx.tolist()] if self.meta is not None else None
        return Matches(np.r_[0, np.cumsum(n_teams)], np.r_[0, np.cumsum(n_slots)], self.team_rank[teams],
                       self.player[slots], self.weight[slots], self.time[idx], self.players, ids, meta,
                       time_is_date=self.time_is_date, has_weights=self.has_weights, validate=False,
                       **self.extras(teams, idx))

    def extras(self, teams: Any = slice(None), matches: Any = slice(None)) -> dict[str, Any]:
        """The optional columns (:attr:`score`, :attr:`higher_is_better`, :attr:`advantage`, :attr:`match_weight`)
        of the teams ``teams`` and matches ``matches`` (indices or slices), as keyword arguments of the
        constructor: what a view of this history passes on."""
        return {
            "score": None if self.score is None else self.score[teams],
            "higher_is_better": None if self.higher_is_better is None else self.higher_is_better[matches],
            "advantage": None if self.advantage is None else self.advantage[teams],
            "match_weight": None if self.match_weight is None else self.match_weight[matches],
        }

    def slots_of(self, indices: Any) -> NDArray[np.int64]:
        """The player slots of the matches at ``indices``, in the order :meth:`take` lays them out."""
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        idx = np.where(idx < 0, idx + len(self), idx)
        teams = _ranges(self.match_start[idx], self.match_start[idx + 1])
        return _ranges(self.team_start[teams], self.team_start[teams + 1])

    def __iter__(self) -> Iterator[Match]:
        for j in range(len(self)):
            yield self._match(j)

    def _match(self, j: int) -> Match:
        t0, t1 = int(self.match_start[j]), int(self.match_start[j + 1])
        teams, weights, ranks = [], [], []
        for t in range(t0, t1):
            p0, p1 = int(self.team_start[t]), int(self.team_start[t + 1])
            teams.append([self.players[k] for k in self.player[p0:p1]])
            weights.append(self.weight[p0:p1].tolist())
            r = int(self.team_rank[t])
            ranks.append(None if r < 0 else r)
        when = float(self.time[j])
        time = format_time(when, self.time_is_date) if not math.isnan(when) else None
        has_w = self.has_weights and any(w != 1.0 for ws in weights for w in ws)
        scores = None
        if self.score is not None:
            scores = [None if math.isnan(x) else x for x in self.score[t0:t1].tolist()]
        return Match(teams, ranks, weights if has_w else None, time=time, id=self.ids[j], scores=scores,
                     higher_is_better=True if scores is None or self.higher_is_better is None
                     else bool(self.higher_is_better[j]),
                     advantage=None if self.advantage is None else self.advantage[t0:t1].tolist(),
                     weight=1.0 if self.match_weight is None else float(self.match_weight[j]),
                     meta=None if self.meta is None else self.meta[j])

    def __repr__(self) -> str:
        return f"Matches({len(self)} matches, {len(self.players)} players)"

    @property
    def n_teams(self) -> NDArray[np.int64]:
        """Number of teams in each match."""
        return np.diff(self.match_start)

    # -- long-form tables: podium.data.tables (pyarrow, pandas, polars imported on first use) --------------
    @classmethod
    def _of(cls, columns: tables.Columns, validate: bool = True) -> Matches:
        return cls(*columns[:8], time_is_date=columns.time_is_date, validate=validate, score=columns.score,
                   higher_is_better=columns.higher_is_better, advantage=columns.advantage,
                   match_weight=columns.match_weight)

    @classmethod
    def from_arrow(cls, table: Any, *, errors: str = "raise", name: str = "table") -> Matches:
        """Read the long form from a ``pyarrow.Table`` (``name``: what messages call it); see
        :func:`podium.data.tables.from_arrow`."""
        check_errors(errors)
        fast = longform.fast(table, name)  # the common shape, read without a sort (podium.data.longform)
        if fast is not None:
            return cls._of(fast, validate=False)
        return cls._of(tables.from_arrow(table, errors=errors, name=name))

    @classmethod
    def from_pandas(cls, df: Any, *, errors: str = "raise") -> Matches:
        """Read the long form from a ``pandas.DataFrame``; see :func:`podium.data.tables.from_pandas`."""
        return cls._of(tables.from_pandas(df, errors=errors))

    @classmethod
    def from_polars(cls, df: Any, *, errors: str = "raise") -> Matches:
        """Read the long form from a ``polars.DataFrame``; see :func:`podium.data.tables.from_polars`."""
        return cls._of(tables.from_polars(df, errors=errors))

    def to_arrow(self) -> Any:
        """The long form as a ``pyarrow.Table``; see :func:`podium.data.tables.to_arrow`."""
        return tables.to_arrow(self)

    def to_pandas(self) -> Any:
        """The long form as a ``pandas.DataFrame``; see :func:`podium.data.tables.to_pandas`."""
        return tables.to_pandas(self)

    def to_polars(self) -> Any:
        """The long form as a ``polars.DataFrame``; see :func:`podium.data.tables.to_polars`."""
        return tables.to_polars(self)


class Packer:
    """Accumulates matches straight into the columnar lists of :class:`Matches`.

    ``add`` validates raw fields (as read from a file); ``append`` takes fields a ``Match`` has already
    validated.  Either adds a match whole or not at all.
    """

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.match_start = [0]
        self.team_start = [0]
        self.team_rank: list[int] = []
        self.player: list[int] = []
        self.weight: list[float] = []
        self.time: list[float] = []
        self.ids: list[str | None] = []
        self.meta: list[dict[str, Any] | None] = []
        self.kinds: set[bool] = set()
        self.has_weights = False
        # The optional columns, filled in (with the earlier matches' defaults) from the first match that has one.
        self.score: list[float] | None = None
        self.higher_is_better: list[bool] | None = None
        self.advantage: list[float] | None = None
        self.match_weight: list[float] | None = None

    def add(self, teams: Any, ranks: Any, weights: Any, time: Any, id_: Any, meta: Any, scores: Any = None,
            higher_is_better: Any = True, advantage: Any = None, weight: Any = 1.0) -> None:
        teams_t = _check_teams(teams)
        n = len(teams_t)
        ranks_t, scores_t, better = check_outcome(ranks, scores, higher_is_better, n)
        weights_t = _check_weights(weights, teams_t)
        advantage_t = check_advantage(advantage, n)
        weight_f = check_match_weight(weight)
        parse_time(time)
        if id_ is not None and not isinstance(id_, str):
            raise MatchError(f"'id' must be a string or null. Got {_show(id_)}.")
        if meta is not None and not isinstance(meta, dict):
            raise MatchError(f"'meta' must be an object. Got {_show(meta)}.")
        self.append(teams_t, ranks_t, weights_t, time, id_, meta, scores_t, better, advantage_t, weight_f)

    def append(self, teams: tuple[tuple[str, ...], ...], ranks: tuple[int | None, ...],
               weights: tuple[tuple[float, ...], ...] | None, time: Time, id_: str | None,
               meta: dict[str, Any] | None, scores: tuple[float | None, ...] | None = None,
               higher_is_better: bool = True, advantage: tuple[float, ...] | None = None,
               weight: float = 1.0) -> None:
        when = parse_time(time)
        if time is not None:
            self.kinds.add(is_date_time(time))
        self.has_weights |= weights is not None
        n_teams_before, n_matches_before = len(self.team_rank), len(self.time)
        for i, (team, rank) in enumerate(zip(teams, ranks)):
            for j, p in enumerate(team):
                self.player.append(self.index.setdefault(p, len(self.index)))
                self.weight.append(weights[i][j] if weights is not None else 1.0)
            self.team_start.append(len(self.player))
            self.team_rank.append(-1 if rank is None else rank)
        self.match_start.append(len(self.team_rank))
        self.time.append(when)
        self.ids.append(id_)
        self.meta.append(meta)
        if scores is not None and self.score is None:
            self.score = [math.nan] * n_teams_before
        if self.score is not None:
            self.score.extend([math.nan if x is None else x for x in scores] if scores is not None
                              else [math.nan] * len(teams))
        if not higher_is_better and self.higher_is_better is None:
            self.higher_is_better = [True] * n_matches_before
        if self.higher_is_better is not None:
            self.higher_is_better.append(higher_is_better)
        if advantage is not None and self.advantage is None:
            self.advantage = [0.0] * n_teams_before
        if self.advantage is not None:
            self.advantage.extend(advantage if advantage is not None else [0.0] * len(teams))
        if weight != 1.0 and self.match_weight is None:
            self.match_weight = [1.0] * n_matches_before
        if self.match_weight is not None:
            self.match_weight.append(weight)

    def build(self) -> Matches:
        if len(self.kinds) > 1:
            raise MatchError("'time' mixes numbers and dates across matches; use one kind for a whole history.")
        has_meta = any(m is not None for m in self.meta)
        return Matches(
            np.array(self.match_start, dtype=np.int64), np.array(self.team_start, dtype=np.int64),
            np.array(self.team_rank, dtype=np.int64), np.array(self.player, dtype=np.int64),
            np.array(self.weight, dtype=np.float64), np.array(self.time, dtype=np.float64),
            list(self.index), self.ids, self.meta if has_meta else None,
            time_is_date=self.kinds == {True}, has_weights=self.has_weights, validate=False,
            score=None if self.score is None else np.array(self.score, dtype=np.float64),
            higher_is_better=None if self.higher_is_better is None else np.array(self.higher_is_better, dtype=bool),
            advantage=None if self.advantage is None else np.array(self.advantage, dtype=np.float64),
            match_weight=None if self.match_weight is None else np.array(self.match_weight, dtype=np.float64),
        )
