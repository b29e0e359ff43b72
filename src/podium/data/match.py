"""What a match says: :class:`Match` (teams of players, the order they finished in, partial-play weights, when it
was played), the checks that name a bad field, and match times.  Many matches in columnar form are
:class:`podium.Matches` (:mod:`podium.data.matches`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from typing import Any

import numpy as np

__all__ = ["Match", "MatchError", "parse_time", "format_time"]

Time = float | int | str | datetime | date | None

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_SECONDS_PER_DAY = 86400.0


class MatchError(ValueError):
    """A match (or a history of matches) that cannot be what it claims to be.

    The message names the offending field and shows what was received.
    """


def _show(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_errors(errors: str) -> None:
    """The ``errors`` argument of every reader: ``"raise"`` (the first malformed record raises) or ``"skip"``."""
    if errors not in ("raise", "skip"):
        raise ValueError(f"'errors' must be 'raise' or 'skip'. Got {errors!r}.")


def skipped_summary(name: str, skipped: Sequence[str], what: str = "record(s)") -> str:
    """The line a reader warns with when ``errors="skip"`` left something out: how many, and the first three
    reasons (each reader's ``skipped`` list holds one message per record, match or batch left out)."""
    shown = "; ".join(skipped[:3])
    return f"{name}: skipped {len(skipped)} malformed {what}: {shown}{' ...' if len(skipped) > 3 else ''}"


def _is_real(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def _as_float(value: Any) -> float:
    """``float(value)`` for a real number; an int too large for a float becomes inf (then refused as non-finite)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf


def parse_time(value: Time, field_name: str = "time") -> float:
    """Turn a match time into a float for the columnar form.

    Numbers are kept as they are (any unit the user likes); ISO-8601 strings, ``datetime`` and
    ``date`` become days since 1970-01-01 UTC (naive times are read as UTC); ``None`` is NaN.
    """
    if value is None:
        return math.nan
    if _is_real(value):
        number = _as_float(value)
        if not math.isfinite(number):
            raise MatchError(f"'{field_name}' must be a finite number, an ISO-8601 date or null. Got {value!r}.")
        return number
    if isinstance(value, str):
        text = value.strip()
        try:
            parsed = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
        except ValueError:
            raise MatchError(
                f"'{field_name}' must be a number or an ISO-8601 date/time. Got {_show(value)}."
            ) from None
        value = parsed
    if isinstance(value, datetime):
        moment = value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
        return (moment - _EPOCH).total_seconds() / _SECONDS_PER_DAY
    if isinstance(value, date):
        return float((value - _EPOCH.date()).days)
    raise MatchError(f"'{field_name}' must be a number, an ISO-8601 date or null. Got {_show(value)}.")


def _is_date(value: Time) -> bool:
    return isinstance(value, (str, datetime, date))


def format_time(value: float, is_date: bool) -> float | str | None:
    """Inverse of :func:`parse_time` for writing: days back to an ISO-8601 string."""
    if math.isnan(value):
        return None
    if not is_date:
        return int(value) if float(value).is_integer() else float(value)
    seconds = round(value * _SECONDS_PER_DAY, 6)
    moment = _EPOCH + timedelta(seconds=seconds)
    if moment.hour == moment.minute == moment.second == moment.microsecond == 0:
        return moment.date().isoformat()
    return moment.isoformat().replace("+00:00", "Z")


@dataclass(frozen=True, slots=True, init=False)
class Match:
    """One game: teams, how they finished, partial play, time and id.

    Parameters
    ----------
    teams : sequence of sequences of str
        Each team is a non-empty sequence of player ids; a player appears once in a match.
    ranks : sequence of int or None, optional
        One per team, ``0`` best.  Equal ranks are a draw; ``None`` means the team did not finish:
        below every finisher and unordered among the other non-finishers (censored, not drawn).
        Default: the order given, winner first.
    weights : sequence of sequences of float, optional
        Partial play, shaped like ``teams``, each in ``(0, 1]``.  Default 1.
    time : number, ISO-8601 str, datetime or None
        When the match was played.
    id : str, optional
        The match's identifier.

    Raises
    ------
    MatchError
        Fewer than two teams, an empty team, a player twice, ranks of the wrong length or type, a weight
        outside ``(0, 1]``, a non-finite number.  Nothing is coerced.

    Examples
    --------
    >>> Match([["ann"], ["bob", "cy"], ["dee"]], ranks=[0, 1, None]).ranks
    (0, 1, None)
    """

    teams: tuple[tuple[str, ...], ...]
    ranks: tuple[int | None, ...]
    weights: tuple[tuple[float, ...], ...] | None
    time: Time
    id: str | None

    def __init__(
        self,
        teams: Sequence[Sequence[str]],
        ranks: Sequence[int | None] | None = None,
        weights: Sequence[Sequence[float]] | None = None,
        time: Time = None,
        id: str | None = None,
    ) -> None:
        set_ = object.__setattr__
        set_(self, "teams", _check_teams(teams))
        set_(self, "ranks", _check_ranks(ranks, len(self.teams)))
        set_(self, "weights", _check_weights(weights, self.teams))
        parse_time(time)  # validates
        set_(self, "time", time)
        if id is not None and not isinstance(id, str):
            raise MatchError(f"'id' must be a str or None. Got {_show(id)}.")
        set_(self, "id", id)

    @classmethod
    def from_scores(
        cls,
        teams: Sequence[Sequence[str]],
        scores: Sequence[float | None],
        *,
        weights: Sequence[Sequence[float]] | None = None,
        time: Time = None,
        id: str | None = None,
    ) -> Match:
        """A match from scores: higher score finishes ahead, equal scores draw, ``None`` did not finish.

        Examples
        --------
        >>> Match.from_scores([["a"], ["b"], ["c"]], [3, 5, 3]).ranks
        (1, 0, 1)
        """
        teams = _check_teams(teams)
        if isinstance(scores, (str, bytes)) or not isinstance(scores, (Sequence, np.ndarray)):
            raise MatchError(f"'scores' must be a sequence of numbers or None. Got {_show(scores)}.")
        if len(scores) != len(teams):
            raise MatchError(f"'scores' must have one entry per team ({len(teams)}). Got {len(scores)}: {_show(scores)}.")
        finite: list[float] = []
        for i, s in enumerate(scores):
            if s is None:
                continue
            if not _is_real(s) or not math.isfinite(float(s)):
                raise MatchError(f"'scores[{i}]' must be a finite number or None. Got {_show(s)}.")
            finite.append(float(s))
        distinct = sorted(set(finite), reverse=True)
        place = {s: r for r, s in enumerate(distinct)}
        ranks = [None if s is None else place[float(s)] for s in scores]
        return cls(teams, ranks, weights=weights, time=time, id=id)

    @classmethod
    def ffa(cls, players: Sequence[str], *, time: Time = None, id: str | None = None) -> Match:
        """A free-for-all of one-player teams, winner first.

        Examples
        --------
        >>> Match.ffa(["ann", "bob", "cy"]).teams
        (('ann',), ('bob',), ('cy',))
        """
        if isinstance(players, (str, bytes)) or not isinstance(players, Sequence):
            raise MatchError(f"'players' must be a sequence of player ids. Got {_show(players)}.")
        return cls([[p] for p in players], time=time, id=id)

    @property
    def players(self) -> list[str]:
        """Every player of the match, team by team."""
        return [p for team in self.teams for p in team]

    def team_weights(self) -> tuple[tuple[float, ...], ...]:
        """The partial-play weights, with the default 1 filled in."""
        if self.weights is not None:
            return self.weights
        return tuple(tuple(1.0 for _ in team) for team in self.teams)

    def to_record(self) -> dict[str, Any]:
        """The match as a record of podium's JSONL format."""
        record: dict[str, Any] = {
            "id": self.id,
            "time": _record_time(self.time),
            "teams": [list(t) for t in self.teams],
            "ranks": list(self.ranks),
        }
        if self.weights is not None:
            record["weights"] = [list(w) for w in self.weights]
        return record


def _record_time(time: Time) -> float | int | str | None:
    if isinstance(time, datetime):
        return time.isoformat()
    if isinstance(time, date):
        return time.isoformat()
    if isinstance(time, (np.integer, np.floating)):
        return time.item()
    return time


def _check_teams(teams: Any) -> tuple[tuple[str, ...], ...]:
    if isinstance(teams, (str, bytes)) or not isinstance(teams, (Sequence, np.ndarray)):
        raise MatchError(f"'teams' must be a sequence of teams (each a sequence of player ids). Got {_show(teams)}.")
    if len(teams) < 2:
        raise MatchError(f"'teams' must hold at least two teams. Got {len(teams)}: {_show(teams)}.")
    seen: set[str] = set()
    out = []
    for i, team in enumerate(teams):
        if isinstance(team, (str, bytes)) or not isinstance(team, (Sequence, np.ndarray)):
            raise MatchError(f"'teams[{i}]' must be a sequence of player ids. Got {_show(team)}.")
        if len(team) == 0:
            raise MatchError(f"'teams[{i}]' is empty; every team needs at least one player. Got {_show(teams)}.")
        for j, player in enumerate(team):
            if not isinstance(player, str):
                raise MatchError(f"'teams[{i}][{j}]' must be a player id (str). Got {_show(player)}.")
            if player in seen:
                raise MatchError(f"'teams': player {player!r} appears more than once. Got {_show(teams)}.")
            seen.add(player)
        out.append(tuple(team))
    return tuple(out)


def _check_ranks(ranks: Any, n_teams: int) -> tuple[int | None, ...]:
    if ranks is None:
        return tuple(range(n_teams))
    if isinstance(ranks, (str, bytes)) or not isinstance(ranks, (Sequence, np.ndarray)):
        raise MatchError(f"'ranks' must be a sequence of ints or None, one per team. Got {_show(ranks)}.")
    if len(ranks) != n_teams:
        raise MatchError(f"'ranks' must have one entry per team ({n_teams}). Got {len(ranks)}: {_show(ranks)}.")
    out: list[int | None] = []
    for i, r in enumerate(ranks):
        if r is None:
            out.append(None)
            continue
        if isinstance(r, bool) or not isinstance(r, (int, np.integer)):
            raise MatchError(f"'ranks[{i}]' must be a non-negative int or None. Got {_show(r)}.")
        if r < 0:
            raise MatchError(f"'ranks[{i}]' must be >= 0 (0 is best; None = did not finish). Got {r!r}.")
        if r >= 2 ** 62:  # ranks are stored as int64; only their order matters
            raise MatchError(f"'ranks[{i}]' must be below 2**62. Got {_show(r)}.")
        out.append(int(r))
    return tuple(out)


def _check_weights(weights: Any, teams: tuple[tuple[str, ...], ...]) -> tuple[tuple[float, ...], ...] | None:
    if weights is None:
        return None
    if isinstance(weights, (str, bytes)) or not isinstance(weights, (Sequence, np.ndarray)) or len(weights) != len(teams):
        raise MatchError(f"'weights' must be shaped like 'teams' ({len(teams)} teams). Got {_show(weights)}.")
    out = []
    for i, (team, ws) in enumerate(zip(teams, weights)):
        if isinstance(ws, (str, bytes)) or not isinstance(ws, (Sequence, np.ndarray)) or len(ws) != len(team):
            raise MatchError(f"'weights[{i}]' must have one weight per player of teams[{i}] ({len(team)}). Got {_show(ws)}.")
        row = []
        for j, w in enumerate(ws):
            if not _is_real(w) or not (0.0 < _as_float(w) <= 1.0):
                raise MatchError(f"'weights[{i}][{j}]' must be a number in (0, 1]. Got {_show(w)}.")
            row.append(float(w))
        out.append(tuple(row))
    if all(w == 1.0 for row in out for w in row):
        return None  # full play everywhere is the default: one representation of it
    return tuple(out)


