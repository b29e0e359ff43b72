"""Abuse signals: results that a model's own predictions say are too improbable to be honest play.

The note on generalizing Elo (section 4) names how people game a rating system: feeding a friend wins (or
trading them), farming rating from throwaway accounts, and sandbagging (losing on purpose to meet weaker
opponents, then climbing back).  :func:`audit` tests a history for each, with a p-value under the model's own
probabilities and one multiple-testing correction over every pair, player and window it looked at.

Every test has the same shape: a set ``S`` of games whose results are suspected, and the probability of
results at least as one-sided as those observed when each game in ``S`` is predicted from the players'
**other** games (a replay that includes ``S`` already expects the next thrown game), with each tested player's
skill integrated over its uncertainty (:mod:`podium.integrity.replay` says how and why).  The three tests, one-sided
pairs (win trading, feeding), farming and sandbagging, are defined in :mod:`podium.integrity.signals`.

Pairs and windows are screened on the ordinary replay's residuals, farming candidates by their schedule; only
those that pass are computed (the most suspicious first, up to ``budget`` of the history taken out), but the
correction counts every hypothesis of every kind (each eligible pair, each farmer candidate, each window
scanned), so the screen costs power, never validity.  Each kind gets an equal share of ``alpha`` and Holm's
step-down within it (a weighted Bonferroni-Holm), which holds the chance of any false flag in an honest
history at ``alpha`` when the model's probabilities are right.  Models without uncertainty in their ratings
(the Elo family) treat a rating from a few games as exact, and their p-values are too small there: the
default is TrueSkill fitted to the history.  docs/audit.md measures all of it on simulated histories, honest
and abused (:func:`podium.simulate_abuse`).

This module holds :func:`audit`, its results and the correction; the leave-out replay and its blocks of games
are :mod:`podium.integrity.replay`, the three tests :mod:`podium.integrity.signals`, the tail probabilities and Holm's
adjustment :mod:`podium.integrity.tails`.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..data.match import Match
from ..data.matches import Matches
from ..models.base import Model
from .replay import _Replay
from .signals import _farming_tests, _pair_tests, _sandbag_tests, _Test
from .tails import holm

__all__ = ["Audit", "Flag", "audit"]

KINDS = ("one-sided pair", "farming", "sandbagging")
MAX_MEETINGS = 5_000_000  # audit's default limit: its tests hold every meeting of two opponents in memory


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


# -- the correction -----------------------------------------------------------------------------------------
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


def meetings_held(matches: Matches) -> int:
    """Pairs of players on opposing teams, summed over the matches: ``((sum s)^2 - sum s^2) / 2`` per match for
    its team sizes ``s``."""
    if len(matches) == 0:
        return 0
    sizes = np.diff(matches.team_start).astype(np.float64)
    starts = matches.match_start[:-1]
    total = np.add.reduceat(sizes, starts)
    return int(np.sum((total * total - np.add.reduceat(sizes * sizes, starts)) / 2.0))


# -- the public function -----------------------------------------------------------------------------------
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
    max_meetings: int = MAX_MEETINGS,
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
        Least share of a satellite's games that were against its farmer, and of its decided meetings with the
        farmer that it lost.
    min_satellites : int
        Satellites a player needs to be flagged for farming (every player met by that many new accounts counts
        as a hypothesis).
    windows : sequence of int
        Lengths (in games) of the windows scanned for sandbagging.
    established : int
        Games a player needs before a window: a rating to fall from.
    budget : float in (0, 1]
        Most matches, as a share of the history, taken out for each kind of test (the most suspicious first):
        ratings from a history with most of it taken out would predict nothing.
    max_meetings : int
        Most meetings (two players on opposing teams of one match) the history may hold: every test works on
        them, in memory (a few hundred bytes each), and a history of contests of thousands holds tens of
        millions.  A larger history is refused before anything is computed: audit a part of it (a slice of a
        :class:`podium.Matches`), or raise the limit where the memory is there.

    Returns
    -------
    Audit
        The flags, most significant first, and the number of hypotheses of each kind.
    """
    from ..evaluation.fit import fit
    from ..models.trueskill import TrueSkill

    packed = matches if isinstance(matches, Matches) else Matches.from_matches(matches)
    if isinstance(max_meetings, bool) or not isinstance(max_meetings, (int, np.integer)) or max_meetings < 1:
        raise ValueError(f"'max_meetings' must be an int >= 1. Got {max_meetings!r}.")
    held = meetings_held(packed)
    if held > max_meetings:
        teams = int(np.diff(packed.match_start).max())
        raise ValueError(f"'matches' hold {held:,} meetings of two opponents (the largest match has {teams:,} teams), "
                         f"more than max_meetings={int(max_meetings):,}: the audit's tests keep every meeting in "
                         "memory (a few hundred bytes each). Audit a part of the history (a slice of its "
                         "Matches), or raise max_meetings where the memory is there.")
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
