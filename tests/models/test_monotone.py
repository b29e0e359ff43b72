"""Monotonicity of every model (issue 29, part 3): finishing higher never gives a lower new rating.

The Elo-MMR paper's incentive compatibility: a player's new mean (``mu``) after a match is not lower when it
finished one place higher, everything else equal.  Two moves of one player (:class:`Field`):

* **one place up** -- a player tied with others either splits off the tie, alone just above it, or merges into
  the tied group above; a player alone at its place merges into the group above; a non-finisher becomes the last
  finisher, alone;
* **swap** -- the player and one player of the place directly above exchange places (a non-finisher and a last
  finisher); the one moved down must then not gain either.

Fields of 2 to 2,000 players with tie groups, non-finishers and random prior ratings (and deviations), on every
option that changes how a match updates.  Fields up to 24 players are drawn value by value (Hypothesis shrinks
them to a minimal example); bigger ones from a drawn seed.  ``mu`` may fall by at most ``1e-9`` relative (the
rounding of a rating of about 1500 or 25).  Known failures are written down as explicit examples, ``xfail``
with the numbers.

Monotone in every search: Elo (two players), PairwiseElo, PlackettLuce, Thurstone (every density), TrueSkill's
default update (``"ordered"``, both draw probabilities), Glicko2 and EloMMR, with every option listed in
``CASES``; TrueSkillThroughTime's one-match history (it has no per-match update) is tested alone.  Not monotone:
TrueSkill's ``"chain"`` (the paper's: finishing last behind a tie, ``d > eps``, rates below not finishing,
``d > 0``) and ``"exact"`` (a move up into a tie group can lower the mean, at the default draw probability in a
field of 19, and in a strict order of 6 at a wide draw margin: the margin draw model lets a group's level fall);
their searches keep what holds, swaps of neighbours in strict orders.  Thurstone's densities other
than the Gaussian take seconds a match beyond 40 players (minutes at 2,000), so their fields stay small.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import podium
from podium import Match, Rating

RANK = int | None
EXPLICIT = 24  # fields up to this size are drawn value by value


# -- the fields ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Field:
    """A match of one-player teams ``p0 .. p{n-1}`` and the players' priors in units of the model.

    ``z``: each prior mean, in the model's natural units (Elo family: ``scale``; TrueSkill, Glicko-2, Elo-MMR: the
    prior's sigma) from the newcomer's; ``u``: each prior deviation as a fraction of the newcomer's.  ``mover``
    moves; ``split`` chooses between splitting off a tie and merging into the group above; ``above`` picks the
    partner of a swap among the place directly above (modulo its size).
    """

    ranks: tuple[RANK, ...]
    z: tuple[float, ...]
    u: tuple[float, ...]
    mover: int
    split: bool = False
    above: int = 0

    @property
    def n(self) -> int:
        return len(self.ranks)

    def _places(self) -> list[int]:
        return sorted({r for r in self.ranks if r is not None})

    def _group_above(self) -> list[int]:
        """The players of the nearest better place than the mover's (the last finishers for a non-finisher)."""
        r = self.ranks[self.mover]
        better = [p for p in self._places() if r is None or p < r]
        if not better:
            return []
        return [i for i, q in enumerate(self.ranks) if q == better[-1]]

    def can_move_up(self) -> bool:
        r = self.ranks[self.mover]
        return r is None or bool(self._group_above()) or self.ranks.count(r) > 1

    def up(self) -> tuple[RANK, ...]:
        """The ranks with the mover one place up (doubled ranks leave room for a split)."""
        ranks = [None if r is None else 2 * r + 2 for r in self.ranks]
        i, r, above = self.mover, ranks[self.mover], self._group_above()
        if r is None:
            ranks[i] = max((q for q in ranks if q is not None), default=0) + 1
        elif ranks.count(r) > 1 and (self.split or not above):
            ranks[i] = r - 1
        else:
            ranks[i] = ranks[above[0]]
        return tuple(ranks)

    def swap_partner(self) -> int | None:
        above = self._group_above()
        return above[self.above % len(above)] if above else None

    def swapped(self) -> tuple[RANK, ...]:
        j = self.swap_partner()
        assert j is not None
        ranks = list(self.ranks)
        ranks[self.mover], ranks[j] = ranks[j], ranks[self.mover]
        return tuple(ranks)


@st.composite
def a_field(draw: Any, min_n: int = 2, max_n: int = EXPLICIT, swap: bool = False, finisher: bool = False,
            ties: bool = True, dnf: bool = True) -> Field:
    """A field of ``min_n`` to ``max_n`` players with ties (few places or many) and non-finishers, and a mover who
    can move up (``swap``: who has a place above it; ``finisher``: who finished).  ``ties=False``: distinct
    places (a move up is then a merge into the place above); ``dnf=False``: no non-finishers."""
    n = draw(st.integers(min_n, max_n))
    places = draw(st.integers(1, n)) if ties else n
    if n <= EXPLICIT:
        ranks = draw(st.permutations(range(n)) if not ties else
                     st.lists(st.none() | st.integers(0, places - 1) if dnf else st.integers(0, places - 1),
                              min_size=n, max_size=n))
        if not ties and dnf:
            ranks = [None if d else r for r, d in zip(ranks, draw(st.lists(st.booleans(), min_size=n, max_size=n)))]
        z = draw(st.lists(st.floats(-3.0, 3.0), min_size=n, max_size=n))
        u = draw(st.lists(st.floats(0.05, 1.0), min_size=n, max_size=n))
    else:
        out = draw(st.sampled_from([0.0, 0.02, 0.2])) if dnf else 0.0
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        drawn = rng.integers(0, places, n) if ties else rng.permutation(n)
        ranks = [None if d else int(r) for r, d in zip(drawn, rng.random(n) < out)]
        z = np.clip(rng.normal(0.0, 1.2, n), -3.0, 3.0).tolist()
        u = rng.uniform(0.05, 1.0, n).tolist()

    def movers() -> list[int]:
        return [i for i in range(n) if not (finisher and ranks[i] is None) and (
            Field(tuple(ranks), (), (), i).swap_partner() is not None if swap
            else Field(tuple(ranks), (), (), i).can_move_up())]

    if not movers():  # no finisher, or all tied first (or one alone first, without non-finishers as movers)
        top = min((r for r in ranks if r is not None), default=0)
        ranks[0], ranks[1] = top, top + 1
    choices = movers()
    mover = choices[draw(st.integers(0, len(choices) - 1))]
    return Field(tuple(ranks), tuple(z), tuple(u), mover, split=draw(st.booleans()), above=draw(st.integers(0, n)))


# -- the models ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    """A model with one combination of its options, and how a field's ``z`` and ``u`` become its priors."""

    name: str
    make: Callable[[], Any]
    mean_unit: float  # rating points per unit of z
    max_n: int = 2_000  # the biggest field in the default run

    def priors(self, model: Any, field: Field) -> dict[str, Rating]:
        prior = model.prior
        return {f"p{i}": Rating(prior.mu + self.mean_unit * z, prior.sigma * u)
                for i, (z, u) in enumerate(zip(field.z, field.u))}


ELO_UNIT = 400.0 / math.log(10.0)

PAIRWISE = [Case(f"PairwiseElo-{c}-{p}-{u}",
                 lambda c=c, p=p, u=u: podium.PairwiseElo(combine=c, performance=p, update=u), ELO_UNIT)
            for c in ("sum", "mean") for p in ("logistic", "gaussian") for u in ("gradient", "classic")]
PLACKETT_LUCE = [Case(f"PlackettLuce-{o}-{t}", lambda o=o, t=t: podium.PlackettLuce(order=o, ties=t), ELO_UNIT)
                 for o in ("victory", "elimination") for t in ("geometric", "arithmetic")]
THURSTONE = [
    Case("Thurstone-gaussian", podium.Thurstone, ELO_UNIT, max_n=300),
    Case("Thurstone-gaussian-knots-floor", lambda: podium.Thurstone(k=[(1200.0, 48.0), (1800.0, 16.0)], floor=1100.0),
         ELO_UNIT, max_n=300),
    Case("Thurstone-gumbel", lambda: podium.Thurstone(density="gumbel"), ELO_UNIT, max_n=40),
    Case("Thurstone-logistic", lambda: podium.Thurstone(density="logistic"), ELO_UNIT, max_n=40),
    Case("Thurstone-skew_normal+3", lambda: podium.Thurstone(density="skew_normal", shape=3.0), ELO_UNIT, max_n=40),
    Case("Thurstone-skew_normal-3", lambda: podium.Thurstone(density="skew_normal", shape=-3.0), ELO_UNIT, max_n=40),
]
TRUESKILL = [Case(f"TrueSkill-{u}-draw{p}", lambda u=u, p=p: podium.TrueSkill(update=u, draw_probability=p), 25.0 / 3.0)
             for u in ("chain", "exact") for p in (0.1, 0.4)]
ORDERED = [Case(f"TrueSkill-ordered-draw{p}", lambda p=p: podium.TrueSkill(draw_probability=p), 25.0 / 3.0)
           for p in (0.1, 0.4)]
GLICKO = [Case(f"Glicko2-{c}", lambda c=c: podium.Glicko2(combine=c), 350.0) for c in ("mean", "sum")]
ELO_MMR = [Case(f"EloMMR-{v}{'-split_ties' if s else ''}", lambda v=v, s=s: podium.EloMMR(variant=v, split_ties=s),
                350.0) for v in ("mmr", "mmr-fast") for s in (False, True)]
ELO = [Case(f"Elo-{p}-{u}", lambda p=p, u=u: podium.Elo(performance=p, update=u), ELO_UNIT)
       for p in ("logistic", "gaussian") for u in ("gradient", "classic")]

CASES = {c.name: c for c in PAIRWISE + PLACKETT_LUCE + THURSTONE + ORDERED + TRUESKILL + GLICKO + ELO_MMR + ELO}


def new_mu(case: Case, field: Field, ranks: Sequence[RANK]) -> list[float]:
    model = case.make()
    ids = [f"p{i}" for i in range(field.n)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = model.rate(Match([[p] for p in ids], ranks=list(ranks)), case.priors(model, field))
    return [new[p].mu for p in ids]


def not_lower(after: float, before: float) -> bool:
    return after >= before - 1e-9 * max(1.0, abs(before))


def check_up(case: Case, field: Field) -> None:
    i = field.mover
    before, after = new_mu(case, field, field.ranks)[i], new_mu(case, field, field.up())[i]
    assert not_lower(after, before), (
        f"{case.name}: p{i} one place up ({field.ranks[i]} -> {field.up()[i]} of {field.up()}) gets mu {after!r}, "
        f"below {before!r}")


def check_swap(case: Case, field: Field) -> None:
    i, j = field.mover, field.swap_partner()
    assert j is not None
    before, after = new_mu(case, field, field.ranks), new_mu(case, field, field.swapped())
    assert not_lower(after[i], before[i]), (
        f"{case.name}: p{i} swapped up with p{j} ({field.ranks[i]} <-> {field.ranks[j]}) gets mu {after[i]!r}, "
        f"below {before[i]!r}")
    assert not_lower(before[j], after[j]), (
        f"{case.name}: p{j} swapped down with p{i} ({field.ranks[j]} <-> {field.ranks[i]}) gets mu {after[j]!r}, "
        f"above {before[j]!r}")


def seeded_field(n: int, places: int, out: float, seed: int, swap: bool = False) -> Field:
    """A field of ``n`` players drawn as :func:`a_field` draws a big one, its mover the first who can move."""
    rng = np.random.default_rng(seed)
    ranks = tuple(None if d else int(r) for r, d in zip(rng.integers(0, places, n), rng.random(n) < out))
    z = tuple(np.clip(rng.normal(0.0, 1.2, n), -3.0, 3.0).tolist())
    u = tuple(rng.uniform(0.05, 1.0, n).tolist())
    mover = int(rng.integers(0, n))
    while not (Field(ranks, z, u, mover).swap_partner() is not None if swap
               else Field(ranks, z, u, mover).can_move_up()):
        mover += 1
    return Field(ranks, z, u, mover, split=bool(rng.integers(0, 2)), above=int(rng.integers(0, n)))


# -- the searches -------------------------------------------------------------------------------------------
# Every option that changes how a match updates.  TrueSkill's "chain" and "exact" updates are not monotone: their
# searches are the strict orders below, their failures the explicit examples at the end.
MONOTONE = [c for c in CASES.values() if c not in TRUESKILL]
TWO_PLAYERS = {c.name for c in ELO}
SLOW_THURSTONE = {c.name for c in THURSTONE if c.max_n < 100}  # minutes beyond 40 players (issue 29)
CHECKS = {"up": check_up, "swap": check_swap}


def small_max(case: Case) -> int:
    return 2 if case.name in TWO_PLAYERS else 8 if case.name in SLOW_THURSTONE else EXPLICIT


def ids(cases: Sequence[Case]) -> list[str]:
    return [c.name for c in cases]


@pytest.mark.parametrize("kind", ["up", "swap"])
@pytest.mark.parametrize("case", MONOTONE, ids=ids(MONOTONE))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_monotone_small_fields(case: Case, kind: str, data: st.DataObject) -> None:
    """Fields of 2 to 24 players (Elo: 2; Thurstone's non-Gaussian densities: 8), drawn value by value."""
    CHECKS[kind](case, data.draw(a_field(2, small_max(case), swap=kind == "swap")))


BIG = [c for c in MONOTONE if c.name not in TWO_PLAYERS]


@pytest.mark.parametrize("kind", ["up", "swap"])
@pytest.mark.parametrize("case", BIG, ids=ids(BIG))
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_monotone_big_fields(case: Case, kind: str, data: st.DataObject) -> None:
    """Fields of 25 players up to 2,000 (Thurstone: 300 Gaussian, 40 with the other densities), from seeds."""
    CHECKS[kind](case, data.draw(a_field(EXPLICIT + 1, case.max_n, swap=kind == "swap")))


THOUSANDS = [c for c in BIG if c.max_n >= 2_000]


@pytest.mark.parametrize("kind", ["up", "swap"])
@pytest.mark.parametrize("case", THOUSANDS, ids=ids(THOUSANDS))
def test_monotone_two_thousand(case: Case, kind: str) -> None:
    """A massive contest: 2,000 players in 300 places (tie groups of about 7) and 2 % non-finishers."""
    CHECKS[kind](case, seeded_field(2_000, 300, 0.02, 29, swap=kind == "swap"))


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["up", "swap"])
@pytest.mark.parametrize("case", MONOTONE, ids=ids(MONOTONE))
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_monotone_small_fields_search(case: Case, kind: str, data: st.DataObject) -> None:
    CHECKS[kind](case, data.draw(a_field(2, small_max(case) * (2 if case.name in SLOW_THURSTONE else 1),
                                         swap=kind == "swap")))


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["up", "swap"])
@pytest.mark.parametrize("case", BIG, ids=ids(BIG))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_monotone_big_fields_search(case: Case, kind: str, data: st.DataObject) -> None:
    CHECKS[kind](case, data.draw(a_field(EXPLICIT + 1, case.max_n * (2 if case.name in SLOW_THURSTONE else 1),
                                         swap=kind == "swap")))


# -- TrueSkill: swaps in strict orders ------------------------------------------------------------------------
@pytest.mark.parametrize("case", TRUESKILL, ids=ids(TRUESKILL))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_trueskill_swap_in_strict_orders(case: Case, data: st.DataObject) -> None:
    """Without draws, two neighbours exchanging places (a non-finisher and the last finisher included) is monotone
    under the "chain" and "exact" updates: 2 to 24 players, and 25 to 500."""
    big = data.draw(st.integers(0, 3)) == 0
    low, high = (EXPLICIT + 1, 500) if big else (2, EXPLICIT)
    check_swap(case, data.draw(a_field(low, high, swap=True, ties=False)))


# -- known failures: minimal examples -------------------------------------------------------------------------
def known(name: str, field: Field, kind: str, reason: str) -> Any:
    return pytest.param(CASES[name], field, kind, id=f"{name}-{kind}-{field.n}",
                        marks=pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason))


NOT_MONOTONE = [
    # The paper's chain: a non-finisher (d > 0 below the last finisher) loses less than a last place (d > eps).
    known("TrueSkill-chain-draw0.1", Field((None, 0, 0), (0.0, 0.0, 0.0), (1.0, 1.0, 1.0), 0), "up",
          "three newcomers: not finishing below two tied 20.1448, finishing last behind them 19.8907 (chain, draw 0.1)"),
    # The exact update with its default draw probability: 19 players, no non-finisher; the seventh, alone, draws
    # with the two sixth (found in an 80-player field, players removed while it still failed).
    known("TrueSkill-exact-draw0.1",
          Field((6, 11, 13, 11, 8, 10, 5, 1, 14, 13, 5, 7, 4, 2, 12, 10, 0, 3, 9),
                (0.7, 0.4, 0.1, 0.5, 0.0, 0.7, -1.6, -0.9, -0.9, -0.2, -0.7, 0.3, -0.7, -1.3, -1.0, 1.6, 0.1, -1.4,
                 0.0),
                (0.5, 0.1, 0.7, 0.2, 0.9, 0.9, 1.0, 0.7, 0.4, 0.2, 0.3, 0.7, 0.4, 0.7, 0.5, 0.5, 1.0, 0.2, 0.5), 0),
          "up", "19 players, no non-finisher: seventh alone 27.94112, tied sixth 27.93965 (exact, draw 0.1)"),
    # A strict order: a move up into a tie with the place above, at a wide draw margin.
    known("TrueSkill-exact-draw0.4",
          Field((0, 1, 2, 3, 4, 5), (0.0,) * 5 + (2.0,), (1.0, 1.0, 0.5, 0.5, 1.0, 0.25), 2),
          "up", "6 players in a strict order: third 28.4565, tied second 28.4418 (exact, draw 0.4)"),
    known("TrueSkill-exact-draw0.4",
          Field((0, 1) + (None,) * 8 + (0,), (0.0, -3.0) + (0.0,) * 6 + (2.0, 0.0, 0.0),
                (1.0, 0.5) + (1.0,) * 6 + (0.25, 1.0, 1.0), 1),
          "swap", "11 players, 8 non-finishers: second 14.7366, swapped with one of the two tied first 14.7183 "
          "(exact, draw 0.4)"),
]


@pytest.mark.parametrize(("case", "field", "kind"), NOT_MONOTONE)
def test_not_monotone(case: Case, field: Field, kind: str) -> None:
    CHECKS[kind](case, field)


@pytest.mark.parametrize("update", ["ordered", "chain", "exact"])
def test_a_duel_non_finisher_is_a_loser(update: str) -> None:
    """Two teams: not finishing rates as losing, not better (it was 20.7945 against a loser's 20.6042 while the
    non-finisher's comparison had no draw margin)."""
    model = podium.TrueSkill(update=update)
    out = model.rate(Match([["a"], ["b"]], [0, None]), {})
    lost = model.rate(Match([["a"], ["b"]], [0, 1]), {})
    assert out["b"] == lost["b"] and out["a"] == lost["a"]
    assert lost["b"].mu == pytest.approx(20.604, abs=1e-3)  # the paper's loser (Moserware's calculator)


def test_through_time_one_match() -> None:
    """TrueSkillThroughTime has no per-match update with given priors; a history of one match is TrueSkill's
    (``tau = 0``) from equal priors: a non-finisher of a duel smooths as its loser does, and a field's places in
    order."""
    model = podium.TrueSkillThroughTime()
    out = model.smooth([Match([["a"], ["b"]], [0, None])]).ratings()["b"].mu
    last = model.smooth([Match([["a"], ["b"]], [0, 1])]).ratings()["b"].mu
    assert last == pytest.approx(out, abs=1e-12)
    field = model.smooth([Match.ffa([f"p{i}" for i in range(50)])]).ratings()
    mus = [field[f"p{i}"].mu for i in range(50)]
    assert all(a > b for a, b in zip(mus, mus[1:]))
