"""What a match says: :class:`Match` (teams of players, the order they finished in, partial-play weights, when it
was played), the checks that name a bad field, and match times.  Many matches in columnar form are
:class:`podium.Matches` (:mod:`podium.data.matches`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from typing import Any

import numpy as np

from .ids import MatchError, check_player_id, plain_ids

__all__ = ["Match", "MatchError", "parse_time", "format_time", "is_date_time", "MIN_WEIGHT", "MAX_MATCH_WEIGHT", "MAX_VALUE",
           "MAX_TIME", "MAX_MU", "plain_number", "RECORD_KEYS"]

#: The keys of a match record (podium's JSONL format and the league server's stored record).
RECORD_KEYS = frozenset({"id", "time", "teams", "ranks", "weights", "meta", "scores", "higher_is_better", "advantage",
                         "weight"})

Time = float | int | str | datetime | date | None

# The limits of a record's numbers, within which every model's arithmetic stays finite (a rating of any model
# stays a finite float for any match the record format accepts; docs/design.md, "What a match says").  Each is
# far beyond real use: a partial-play weight below a millionth, a match counted a million times, a score or an
# edge of 10^15, a time past a signed 64-bit count (nanoseconds since 1970 fit) say nothing a real match says.
#: The least partial-play weight: weights lie in ``[MIN_WEIGHT, 1]``.
MIN_WEIGHT = 1e-6
#: A match's importance (``weight``) lies in ``[1 / MAX_MATCH_WEIGHT, MAX_MATCH_WEIGHT]``.
MAX_MATCH_WEIGHT = 1e6
#: The largest magnitude of a score or an advantage.
MAX_VALUE = 1e15
#: The largest magnitude of a numeric time (2^63).
MAX_TIME = 2.0 ** 63
#: The largest magnitude of a starting rating's ``mu`` a model takes: squares and differences of such are finite.
MAX_MU = 1e150

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_SECONDS_PER_DAY = 86400.0


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
        if not abs(number) < MAX_TIME:  # (NaN too)
            raise MatchError(f"'{field_name}' must be a number of magnitude below 2**63, an ISO-8601 date or null. "
                             f"Got {_show(value)}.")
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


def is_date_time(value: Time) -> bool:
    """Whether a match time is a date (an ISO-8601 string, ``datetime`` or ``date``) rather than a number."""
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
        Each team is a non-empty sequence of player ids; a player appears once in a match.  An id is a non-empty
        string of printable characters without a space at either end, kept in Unicode's NFC (ids that differ only
        by normalization are one player; :mod:`podium.data.ids`).
    ranks : sequence of int or None, optional
        One per team, ``0`` best.  Equal ranks are a draw; ``None`` means the team did not finish:
        below every finisher and unordered among the other non-finishers (censored, not drawn).
        Default: the order given, winner first.
    weights : sequence of sequences of float, optional
        Partial play, shaped like ``teams``, each in ``[1e-6, 1]`` (:data:`MIN_WEIGHT`).  Default 1.
    time : number, ISO-8601 str, datetime or None
        When the match was played: a number in any unit, of magnitude below 2**63 (:data:`MAX_TIME`), or a date.
    id : str, optional
        The match's identifier.
    scores : sequence of float or None, optional
        What each team scored (goals, points, games won, a race time; magnitude at most 1e15, :data:`MAX_VALUE`),
        ``None`` for a team without one.  Without
        ``ranks`` the ranks follow from them (better score ahead, equal scores drawn, ``None`` did not finish);
        with ``ranks`` a strictly better score may not rank strictly worse (a shoot-out may break a draw).  The
        models that read margins use them (``docs/design.md``, "What a result says").
    higher_is_better : bool, default True
        Whether a higher score is better (False for race times); only with ``scores``.
    advantage : sequence of float or bool, optional
        Each team's structural edge: 1 (or True) for the home side, White, the higher seed; 0 for none; any
        value of magnitude at most 1e15 (:data:`MAX_VALUE`) for a graded edge.  A model adds its fitted
        ``advantage`` times this to the team's strength.
    weight : float, default 1
        The match's importance, from 1e-6 to 1e6 (:data:`MAX_MATCH_WEIGHT`): the factor by which the models scale
        what they learn from it (the step of the Elo family, the evidence of the Bayesian models).  Not partial
        play (that is ``weights``).
    meta : dict, optional
        Anything else about the match (``{"surface": "Clay", "league": "Serie A"}``), the JSONL record's
        ``meta``: kept as given, and read by a model whose advantage is a :class:`podium.ByContext` (one advantage
        per context).

    Raises
    ------
    MatchError
        Fewer than two teams, an empty team, a player id that breaks the rule, a player twice, ranks of the
        wrong length or type, a number outside its limits (a weight outside ``[1e-6, 1]``, a match weight
        outside ``[1e-6, 1e6]``, a score or advantage beyond 1e15, a time beyond 2**63, anything non-finite:
        within these every model's ratings stay finite), scores or advantages not one per team, ranks that
        contradict the scores.  Nothing is coerced but player ids to NFC.

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
    scores: tuple[float | None, ...] | None
    higher_is_better: bool
    advantage: tuple[float, ...] | None
    weight: float
    meta: dict[str, Any] | None = field(hash=False)

    def __init__(
        self,
        teams: Sequence[Sequence[str]],
        ranks: Sequence[int | None] | None = None,
        weights: Sequence[Sequence[float]] | None = None,
        time: Time = None,
        id: str | None = None,
        *,
        scores: Sequence[float | None] | None = None,
        higher_is_better: bool = True,
        advantage: Sequence[float | bool] | None = None,
        weight: float = 1.0,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        set_ = object.__setattr__
        set_(self, "teams", _check_teams(teams))
        n = len(self.teams)
        ranks_t, scores_t, better = check_outcome(ranks, scores, higher_is_better, n)
        set_(self, "ranks", ranks_t)
        set_(self, "scores", scores_t)
        set_(self, "higher_is_better", better)
        set_(self, "weights", _check_weights(weights, self.teams))
        parse_time(time)  # validates
        set_(self, "time", time)
        if id is not None and not isinstance(id, str):
            raise MatchError(f"'id' must be a str or None. Got {_show(id)}.")
        set_(self, "id", id)
        set_(self, "advantage", check_advantage(advantage, n))
        set_(self, "weight", check_match_weight(weight))
        set_(self, "meta", _check_meta(meta))

    @classmethod
    def from_scores(
        cls,
        teams: Sequence[Sequence[str]],
        scores: Sequence[float | None],
        *,
        weights: Sequence[Sequence[float]] | None = None,
        time: Time = None,
        id: str | None = None,
        higher_is_better: bool = True,
        advantage: Sequence[float | bool] | None = None,
        weight: float = 1.0,
    ) -> Match:
        """A match from scores: the better score finishes ahead, equal scores draw, ``None`` did not finish.

        The match keeps its scores (:attr:`scores`), for the models that read margins.

        Examples
        --------
        >>> Match.from_scores([["a"], ["b"], ["c"]], [3, 5, 3]).ranks
        (1, 0, 1)
        >>> Match.from_scores([["a"], ["b"]], [61.5, 58.25], higher_is_better=False).ranks
        (1, 0)
        """
        if scores is None:
            raise MatchError("'scores' must be a sequence of numbers or None, one per team. Got None.")
        return cls(teams, weights=weights, time=time, id=id, scores=scores, higher_is_better=higher_is_better,
                   advantage=advantage, weight=weight)

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
        if self.scores is not None:
            record["scores"] = [plain_number(s) for s in self.scores]
            if not self.higher_is_better:
                record["higher_is_better"] = False
        if self.advantage is not None:
            record["advantage"] = [plain_number(a) for a in self.advantage]
        if self.weight != 1.0:
            record["weight"] = plain_number(self.weight)
        if self.meta is not None:
            record["meta"] = dict(self.meta)
        return record


def plain_number(value: float | None) -> float | int | None:
    """A stored float as a record writes (and the server shows) it: integral values as ints (goals read back as
    they were written), others as they are."""
    if value is None:
        return None
    return int(value) if float(value).is_integer() and abs(value) < 2 ** 53 else float(value)


def _record_time(time: Time) -> float | int | str | None:
    if isinstance(time, datetime):
        return time.isoformat()
    if isinstance(time, date):
        return time.isoformat()
    if isinstance(time, (np.integer, np.floating)):
        return time.item()
    return time


def _check_meta(meta: Any) -> dict[str, Any] | None:
    if meta is None:
        return None
    if not isinstance(meta, Mapping) or not all(isinstance(k, str) for k in meta):
        raise MatchError(f"'meta' must be a mapping with string keys, or None. Got {_show(meta)}.")
    return dict(meta)


def _check_teams(teams: Any) -> tuple[tuple[str, ...], ...]:
    if type(teams) is list or type(teams) is tuple:  # the common case checked at once (a prediction's whole cost)
        out = tuple([tuple(team) for team in teams if type(team) is list or type(team) is tuple])
        players = [p for team in out for p in team]
        if len(out) == len(teams) >= 2 and all(out) and plain_ids(players) and len(set(players)) == len(players):
            return out
    return _check_teams_each(teams)


def _check_teams_each(teams: Any) -> tuple[tuple[str, ...], ...]:
    """:func:`_check_teams` team by team and player by player, for the error that names the one at fault."""
    if isinstance(teams, (str, bytes)) or not isinstance(teams, (Sequence, np.ndarray)):
        raise MatchError(f"'teams' must be a sequence of teams (each a sequence of player ids). Got {_show(teams)}.")
    if len(teams) < 2:
        raise MatchError(f"'teams' must hold at least two teams. Got {len(teams)}: {_show(teams)}.")
    seen: set[str] = set()
    out = []
    for i, team in enumerate(teams):
        if type(team) is not list and type(team) is not tuple and (  # (the common cases, without the ABC check)
                isinstance(team, (str, bytes)) or not isinstance(team, (Sequence, np.ndarray))):
            raise MatchError(f"'teams[{i}]' must be a sequence of player ids. Got {_show(team)}.")
        if len(team) == 0:
            raise MatchError(f"'teams[{i}]' is empty; every team needs at least one player. Got {_show(teams)}.")
        ids = tuple(check_player_id(player, f"teams[{i}][{j}]") for j, player in enumerate(team))
        for player in ids:
            if player in seen:  # (after normalization: ids that differ only by it are one player)
                raise MatchError(f"'teams': player {player!r} appears more than once. Got {_show(teams)}.")
            seen.add(player)
        out.append(ids)
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
            if not _is_real(w) or not (MIN_WEIGHT <= _as_float(w) <= 1.0):
                raise MatchError(f"'weights[{i}][{j}]' must be a number in [{MIN_WEIGHT:g}, 1]. Got {_show(w)}.")
            row.append(float(w))
        out.append(tuple(row))
    if all(w == 1.0 for row in out for w in row):
        return None  # full play everywhere is the default: one representation of it
    return tuple(out)


def check_scores(scores: Any, n_teams: int) -> tuple[float | None, ...] | None:
    """``scores`` checked: one finite float or None per team (:class:`Match` stores None for all None)."""
    if scores is None:
        return None
    if isinstance(scores, (str, bytes)) or not isinstance(scores, (Sequence, np.ndarray)):
        raise MatchError(f"'scores' must be a sequence of numbers or None, one per team. Got {_show(scores)}.")
    if len(scores) != n_teams:
        raise MatchError(f"'scores' must have one entry per team ({n_teams}). Got {len(scores)}: {_show(scores)}.")
    out: list[float | None] = []
    for i, s in enumerate(scores):
        if s is None:
            out.append(None)
            continue
        if not _is_real(s) or not abs(_as_float(s)) <= MAX_VALUE:
            raise MatchError(f"'scores[{i}]' must be a number of magnitude at most {MAX_VALUE:g}, or None. "
                             f"Got {_show(s)}.")
        out.append(float(s))
    return tuple(out)


def check_outcome(ranks: Any, scores: Any, higher_is_better: Any, n_teams: int
                  ) -> tuple[tuple[int | None, ...], tuple[float | None, ...] | None, bool]:
    """A match's ``(ranks, scores, higher_is_better)`` checked: ranks from the scores when none are given, given
    ranks that agree with them; all-None scores stored as None (one representation of "no scores")."""
    checked = check_scores(scores, n_teams)
    better = check_higher_is_better(higher_is_better)
    if ranks is None and checked is not None:
        ranks_t = ranks_from_scores(checked, better)
    else:
        ranks_t = _check_ranks(ranks, n_teams)
        check_ranks_agree(ranks_t, checked, better)
    if checked is not None and all(x is None for x in checked):
        checked = None
    if checked is None and not better:
        raise MatchError("'higher_is_better' is false but the match has no 'scores' for it to apply to.")
    return ranks_t, checked, better


def check_higher_is_better(value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise MatchError(f"'higher_is_better' must be true or false. Got {_show(value)}.")
    return bool(value)


def ranks_from_scores(scores: tuple[float | None, ...], higher_is_better: bool) -> tuple[int | None, ...]:
    """Dense ranks from scores: the best score 0, equal scores equal ranks, None (no score) did not finish."""
    distinct = sorted({s for s in scores if s is not None}, reverse=higher_is_better)
    place = {s: r for r, s in enumerate(distinct)}
    return tuple(None if s is None else place[s] for s in scores)


def check_ranks_agree(ranks: tuple[int | None, ...], scores: tuple[float | None, ...] | None,
                      higher_is_better: bool) -> None:
    """Refuse ranks that put a team with a strictly better score strictly behind one with a worse score (equal
    scores may be ranked apart: a shoot-out or a tie-break decides)."""
    if scores is None:
        return
    sign = 1.0 if higher_is_better else -1.0
    known = [(sign * s, r, i) for i, (s, r) in enumerate(zip(scores, ranks)) if s is not None and r is not None]
    for sa, ra, i in known:
        for sb, rb, j in known:
            if sa > sb and ra > rb:
                raise MatchError(f"'ranks' contradict 'scores': team {i} scored {scores[i]!r} and team {j} "
                                 f"{scores[j]!r} ({'higher' if higher_is_better else 'lower'} is better), "
                                 f"but ranks are {ra} and {rb}.")


def check_advantage(advantage: Any, n_teams: int) -> tuple[float, ...] | None:
    """``advantage`` as stored: one finite float per team (True is 1); None when every team has none."""
    if advantage is None:
        return None
    if isinstance(advantage, (str, bytes)) or not isinstance(advantage, (Sequence, np.ndarray)):
        raise MatchError(f"'advantage' must be a sequence of numbers or booleans, one per team. Got {_show(advantage)}.")
    if len(advantage) != n_teams:
        raise MatchError(f"'advantage' must have one entry per team ({n_teams}). Got {len(advantage)}: "
                         f"{_show(advantage)}.")
    out = []
    for i, a in enumerate(advantage):
        if isinstance(a, (bool, np.bool_)):
            out.append(1.0 if a else 0.0)
        elif _is_real(a) and abs(_as_float(a)) <= MAX_VALUE:
            out.append(float(a))
        else:
            raise MatchError(f"'advantage[{i}]' must be a number of magnitude at most {MAX_VALUE:g}, or a boolean. "
                             f"Got {_show(a)}.")
    return None if all(a == 0.0 for a in out) else tuple(out)


def check_match_weight(weight: Any) -> float:
    """A match's importance: a number in ``[1 / MAX_MATCH_WEIGHT, MAX_MATCH_WEIGHT]``."""
    if not _is_real(weight) or not (1.0 / MAX_MATCH_WEIGHT <= _as_float(weight) <= MAX_MATCH_WEIGHT):
        raise MatchError(f"'weight' (the match's importance) must be a number from {1 / MAX_MATCH_WEIGHT:g} to "
                         f"{MAX_MATCH_WEIGHT:g}. Got {_show(weight)}.")
    return float(weight)
