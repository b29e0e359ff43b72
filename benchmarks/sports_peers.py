"""Three published sports Elo systems, written from their descriptions, to run side by side with podium.

* :func:`eloratings`: the World Football Elo Ratings (eloratings.net), with :func:`football_k` for the
  weight of each tournament;
* :func:`fivethirtyeight`: FiveThirtyEight's NFL and NBA Elo (margin-of-victory multiplier with the
  "autocorrelation" correction), with an optional between-season regression to the mean.

Each function replays a history of two-team matches in the order given and returns, for every match, the
probability that the *first* team finishes ahead, computed from the ratings *before* that match (the
expected result ``W_e``: for these systems it is also the expected score, draws counting one half).  Team
ids are strings; ratings live in a dict; no dependency beyond numpy.  Written from the descriptions cited in
each docstring, not from anyone's code.

Sources
-------
* eloratings.net, "About the World Football Elo Ratings", https://www.eloratings.net/about, and Wikipedia,
  "World Football Elo Ratings", https://en.wikipedia.org/wiki/World_Football_Elo_Ratings
* FiveThirtyEight, "How Our NFL Predictions Work",
  https://fivethirtyeight.com/methodology/how-our-nfl-predictions-work/, and "Introducing NFL Elo Ratings"
  (2014), https://fivethirtyeight.com/features/introducing-nfl-elo-ratings/; the handling of ties is that of
  FiveThirtyEight's published NFL Elo script, https://github.com/fivethirtyeight/nfl-elo-game (forecast.py).
* FiveThirtyEight, "How We Calculate NBA Elo Ratings" (2015),
  https://fivethirtyeight.com/features/how-we-calculate-nba-elo-ratings/, and "How Our NBA Predictions Work",
  https://fivethirtyeight.com/methodology/how-our-nba-predictions-work/

Run ``.venv/bin/python benchmarks/sports_peers.py`` (a few seconds): a self-check on three hand-computed
matches, then the pair log loss and pair error of each system on the last 30 % of
``../shared/data/intl_football/matches.jsonl.gz`` (file order), next to the figures quoted in the issue.
"""

from __future__ import annotations

import os as _os

_os.environ.setdefault("PODIUM_JIT", "compiled")  # the compiled speed: warm-up calls compile, timed ones do not

import gzip
import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "intl_football" / "matches.jsonl.gz"

# --------------------------------------------------------------------------------------------------------
# eloratings.net: tournament weights
# --------------------------------------------------------------------------------------------------------

#: K = 60: the World Cup finals.
K60 = frozenset({"FIFA World Cup"})
#: K = 50: the confederations' championship finals (with the predecessors of CONCACAF's: the CONCACAF
#: Championship 1963-89, the CCCF Championship 1941-61 and the NAFC Championship 1947-49, each the
#: championship of a confederation of its day) and the major intercontinental tournaments: the
#: Confederations Cup, the CONMEBOL-UEFA Cup of Champions (Artemio Franchi Trophy / Finalissima), the
#: Mundialito (Copa de Oro de Campeones Mundiales 1980-81) and the Olympic Games (in this history only
#: 1908-1928, the world championship before the World Cup).
K50 = frozenset({
    "UEFA Euro", "Copa América", "African Cup of Nations", "AFC Asian Cup", "Gold Cup",
    "CONCACAF Championship", "CCCF Championship", "NAFC Championship", "Oceania Nations Cup",
    "Confederations Cup", "CONMEBOL–UEFA Cup of Champions", "Mundialito", "Olympic Games",
})
#: K = 40 besides qualifiers: the Nations Leagues.
K40 = frozenset({"UEFA Nations League", "CONCACAF Nations League"})
QUALIFICATION = " qualification"


def football_k(tournament: str) -> float:
    """eloratings.net's weight K of a match, from its tournament's name.

    The description (https://www.eloratings.net/about; https://en.wikipedia.org/wiki/World_Football_Elo_Ratings)
    gives five weights: 60 for World Cup finals; 50 for continental championship finals and major
    intercontinental tournaments; 40 for World Cup and continental qualifiers and major tournaments; 30 for
    all other tournaments; 20 for friendly matches.  It names no tournament beyond these classes, so the
    202 names of ``intl_football`` (martj42/international_results) are mapped by this rule:

    * **60**: ``"FIFA World Cup"`` (exactly: "Viva World Cup", "CONIFA World Football Cup" are not it);
    * **50**: the names in :data:`K50`: the six confederations' championships ("UEFA Euro", "Copa América",
      "African Cup of Nations", "AFC Asian Cup", "Gold Cup", "Oceania Nations Cup") and the earlier
      championships of CONCACAF and its predecessor confederations ("CONCACAF Championship",
      "CCCF Championship", "NAFC Championship"); the major intercontinental tournaments "Confederations
      Cup", "CONMEBOL–UEFA Cup of Champions", "Mundialito" and "Olympic Games" (1908-1928 only here);
    * **40**: the Nations Leagues (:data:`K40`) and every ``"<X> qualification"`` whose ``X`` weighs 40 or
      more (World Cup, continental championship and Nations League qualifiers);
    * **20**: a name containing "friendly" (only ``"Friendly"`` here);
    * **30**: everything else: sub-continental and regional cups (Gulf Cup, COSAFA Cup, AFF Championship,
      British Home Championship, ...), multi-sport games (Asian Games, Pacific Games, ...), invitational
      tournaments (Kirin Cup, King's Cup, FIFA Series, Intercontinental Cup (India), ...), non-FIFA
      tournaments (CONIFA, Island Games, ...) and the qualifiers of any of these (``"CFU Caribbean Cup
      qualification"`` is 30, not 40: it qualifies for a 30 tournament).  Unknown names are 30.

    Parameters
    ----------
    tournament : str
        The tournament's name, as in ``meta.tournament``.

    Returns
    -------
    float
        K: 60, 50, 40, 30 or 20.
    """
    name = tournament.strip()
    if name.endswith(QUALIFICATION):
        base = football_k(name[: -len(QUALIFICATION)])
        return 40.0 if base >= 40.0 else base
    if name in K60:
        return 60.0
    if name in K50:
        return 50.0
    if name in K40:
        return 40.0
    if "friendly" in name.lower():
        return 20.0
    return 30.0


# --------------------------------------------------------------------------------------------------------
# shared pieces
# --------------------------------------------------------------------------------------------------------


def expected(dr: float) -> float:
    """Elo's expected result ``W_e = 1 / (10^(-dr/400) + 1)`` of the side ``dr`` rating points ahead."""
    return 1.0 / (10.0 ** (-dr / 400.0) + 1.0)


def _columns(
    first: Sequence, second: Sequence, *numbers: Sequence | np.ndarray
) -> tuple[list[str], list[str], list[np.ndarray]]:
    """Team ids as ``str`` and the numeric columns as float arrays, checked to have one entry per match."""
    a = [str(t) for t in first]
    b = [str(t) for t in second]
    cols = [np.asarray(c, dtype=float).reshape(-1) for c in numbers]
    n = len(a)
    if len(b) != n or any(len(c) != n for c in cols):
        lengths = [len(a), len(b)] + [len(c) for c in cols]
        raise ValueError(f"every argument needs one entry per match: lengths {lengths}")
    return a, b, cols


def goal_multiplier(n: float) -> float:
    """eloratings.net's goal-difference index G of a match won by ``n`` goals (0 for a draw).

    ``G = 1`` for ``n <= 1``, ``1.5`` for ``n = 2``, ``1.75`` for ``n = 3``, ``1.75 + (n - 3)/8`` for ``n >= 4``.
    """
    if n <= 1:
        return 1.0
    if n <= 2:
        return 1.5
    if n <= 3:
        return 1.75
    return 1.75 + (n - 3.0) / 8.0


# --------------------------------------------------------------------------------------------------------
# eloratings.net
# --------------------------------------------------------------------------------------------------------


def eloratings(
    first: Sequence[str],
    second: Sequence[str],
    goals_first: Sequence[float],
    goals_second: Sequence[float],
    home_first: Sequence[bool],
    k_match: Sequence[float] | np.ndarray | float,
    *,
    home: float = 100.0,
    initial: float = 1500.0,
    margin: bool = True,
) -> np.ndarray:
    """World Football Elo Ratings (eloratings.net): P(first team wins) before each match.

    From "About the World Football Elo Ratings", https://www.eloratings.net/about (the same formulas on
    https://en.wikipedia.org/wiki/World_Football_Elo_Ratings).  Before a match between teams rated
    ``R_1`` and ``R_2``, the first team's expected result is

    .. math:: W_e = \\frac{1}{10^{-d_r/400} + 1}, \\qquad d_r = R_1 - R_2 + H \\cdot \\mathrm{home}_1

    ("dr equals the difference in ratings plus 100 points for a team playing at home": ``H = home``).  After
    it, with ``W`` = 1 (first team won), 0.5 (draw) or 0 (lost) and ``N`` the goal difference,

    .. math:: R_1' = R_1 + K G (W - W_e), \\qquad R_2' = R_2 - K G (W - W_e),

    .. math:: G = 1 \\;(N \\le 1), \\quad 1.5 \\;(N = 2), \\quad 1.75 \\;(N = 3), \\quad 1.75 + (N - 3)/8 \\;(N \\ge 4)

    ("K is then adjusted for the goal difference in the game. It is increased by half if a game is won by two
    goals, by 3/4 if a game is won by three goals, and by 3/4 + (N-3)/8 if the game is won by four or more
    goals").  ``K`` is the match's weight (:func:`football_k`).  The update is zero-sum, as the same
    formula applied from the second team's side (``W`` and ``W_e`` replaced by ``1 - W`` and ``1 - W_e``)
    gives the opposite change.

    Interpretations: a team's first rating is ``initial`` (the description does not say how new teams
    start); only the first team can be at home (this history's ``neutral == "FALSE"`` means the first team
    is at home; pass the teams the other way round otherwise).

    Parameters
    ----------
    first, second : sequence of str
        The two teams of each match (ids are converted with ``str``).
    goals_first, goals_second : sequence of float
        Each team's goals.
    home_first : sequence of bool
        Whether the first team played at home (a non-neutral ground).
    k_match : sequence of float, or float
        Each match's weight K (one number: the same K for every match).
    home : float
        Home advantage in rating points, added to the home side's rating difference.  ``0`` turns it off.
    initial : float
        A team's rating before its first match.
    margin : bool
        Multiply K by the goal-difference index G (``False``: ``G = 1`` always, plain Elo).

    Returns
    -------
    numpy.ndarray
        ``W_e`` of the first team before each match, shape ``(n,)``.
    """
    n = len(first)
    ks = np.asarray(k_match, dtype=float)
    if ks.ndim == 0:
        ks = np.full(n, float(ks))
    a, b, (g1, g2, at_home, k) = _columns(first, second, goals_first, goals_second, home_first, ks)
    ratings: dict[str, float] = {}
    out = np.empty(len(a))
    for i in range(len(a)):
        r1 = ratings.get(a[i], initial)
        r2 = ratings.get(b[i], initial)
        we = expected(r1 - r2 + (home if at_home[i] else 0.0))
        out[i] = we
        diff = g1[i] - g2[i]
        w = 1.0 if diff > 0 else (0.0 if diff < 0 else 0.5)
        g = goal_multiplier(abs(diff)) if margin else 1.0
        change = k[i] * g * (w - we)
        ratings[a[i]] = r1 + change
        ratings[b[i]] = r2 - change
    return out


# --------------------------------------------------------------------------------------------------------
# FiveThirtyEight
# --------------------------------------------------------------------------------------------------------

#: FiveThirtyEight's constants per sport: K, home advantage (Elo points), between-season regression
#: (the share of the distance to ``revert_to`` removed when a team's season changes).
FIVETHIRTYEIGHT = {
    "nfl": {"k": 20.0, "home": 65.0, "revert": 1.0 / 3.0},
    "nba": {"k": 20.0, "home": 100.0, "revert": 0.25},
}


def nfl_multiplier(margin: float, winner_diff: float | None) -> float:
    """FiveThirtyEight's NFL margin-of-victory multiplier.

    ``ln(|PD| + 1) * 2.2 / (winner_diff * 0.001 + 2.2)``; for a tie (``winner_diff is None``) FiveThirtyEight's
    published script uses ``ln(2) * 2.2`` (``|PD|`` raised to 1 and the denominator replaced by 1).
    """
    if winner_diff is None:
        return math.log(2.0) * 2.2
    return math.log(abs(margin) + 1.0) * 2.2 / _positive(winner_diff * 0.001 + 2.2, winner_diff)


def nba_multiplier(margin: float, winner_diff: float | None) -> float:
    """FiveThirtyEight's NBA margin-of-victory multiplier.

    ``(|MOV| + 3)^0.8 / (7.5 + 0.006 * winner_diff)``; for a tie (``winner_diff is None``; the NBA has none and
    the description is silent) ``winner_diff`` is taken as 0: ``3^0.8 / 7.5``.
    """
    if winner_diff is None:
        winner_diff = 0.0
    return (abs(margin) + 3.0) ** 0.8 / _positive(7.5 + 0.006 * winner_diff, winner_diff)


def _positive(denominator: float, winner_diff: float) -> float:
    """The autocorrelation denominator, which must stay positive (an underdog by 2,200 (NFL) or 1,250 (NBA)
    points winning would flip the multiplier's sign; the descriptions never meet it, and neither does the
    football history: the largest upset there is about 600 points)."""
    if denominator <= 0.0:
        raise ValueError(
            f"margin-of-victory denominator {denominator:.3g} <= 0 (winner's Elo difference {winner_diff:.0f})"
        )
    return denominator


def fivethirtyeight(
    first: Sequence[str],
    second: Sequence[str],
    points_first: Sequence[float],
    points_second: Sequence[float],
    home_first: Sequence[bool],
    *,
    sport: str = "nfl",
    k: float | None = None,
    home: float | None = None,
    initial: float = 1500.0,
    season: Sequence | None = None,
    revert: float | None = None,
    revert_to: float = 1505.0,
) -> np.ndarray:
    """FiveThirtyEight's NFL or NBA Elo: P(first team wins) before each match.

    Win probability (both sports; "How Our NFL Predictions Work",
    https://fivethirtyeight.com/methodology/how-our-nfl-predictions-work/):

    .. math:: P_1 = \\frac{1}{10^{-\\mathrm{ELODIFF}/400} + 1}, \\qquad
              \\mathrm{ELODIFF} = R_1 - R_2 + H \\cdot \\mathrm{home}_1

    ("ELODIFF is Team A's rating minus Team B's rating, plus or minus a home-field adjustment of 65 points,
    depending on who was at home").  Update, zero-sum, with ``W`` = 1, 0.5 or 0 for the first team:

    .. math:: R_1' = R_1 + K M (W - P_1), \\qquad R_2' = R_2 - K M (W - P_1)

    where ``M`` is the margin-of-victory multiplier, with ``D_w`` the *winner's* ELODIFF (``ELODIFF`` if the
    first team won, ``-ELODIFF`` if the second did; it includes the home advantage, as FiveThirtyEight's
    NBA description says, "accounting for home-court advantage. Elo_diff should be negative in games won by
    the underdog", and its published NFL script computes):

    * ``sport="nfl"`` (K = 20, H = 65): "Margin of Victory Multiplier = LN(ABS(PD)+1) *
      (2.2/((ELOW-ELOL)*.001+2.2))", i.e.

      .. math:: M = \\ln(|PD| + 1) \\cdot \\frac{2.2}{0.001\\,D_w + 2.2};

      a tie has ``M = 2.2 ln 2`` (FiveThirtyEight's published NFL script, nfl-elo-game/forecast.py, takes
      ``max(|PD|, 1)`` and a denominator of 1 for a tie; the prose does not say);
    * ``sport="nba"`` (K = 20, H = 100; "How We Calculate NBA Elo Ratings",
      https://fivethirtyeight.com/features/how-we-calculate-nba-elo-ratings/): "Take a team's margin of
      victory, add 3 points and then take the result to the power of 0.8. Divide the result by ...
      7.5 + .006*(elo_diff)", i.e.

      .. math:: M = \\frac{(|MOV| + 3)^{0.8}}{7.5 + 0.006\\,D_w};

      a tie (the NBA has none; the description is silent) takes ``D_w = 0``: ``M = 3^{0.8}/7.5``.

    Between seasons (only if ``season`` is given): when a team plays its first match of a new season, its
    rating moves ``revert`` of the way to ``revert_to``: ``R <- revert_to + (1 - revert)(R - revert_to)``
    (NFL: a third, to 1505: "a team retains 2/3 of its previous season's rating", in the words of
    FiveThirtyEight's NFL script; NBA: a quarter, i.e. 75 % kept, to 1505, as recalled from the NBA
    description, whose sentence was not among the stored pages searched for this module: pass ``revert``
    to be sure).  Off by default: the football history this module is benchmarked on has no seasons.

    Left out: the current model's travel distance, rest days, quarterback and playoff adjustments (the
    NFL's home advantage of "roughly 48 points" since 2022 is a rolling 10-year average plus 4 points per
    1,000 miles travelled; the constant 65 is the one of the long-standing description and script).  A new
    team starts at ``initial`` (FiveThirtyEight started expansion teams at 1300; not modelled).

    Parameters
    ----------
    first, second : sequence of str
        The two teams of each match.
    points_first, points_second : sequence of float
        Each team's points (goals for football).
    home_first : sequence of bool
        Whether the first team played at home.
    sport : {"nfl", "nba"}
        Which multiplier and default constants.
    k, home : float, optional
        K and home advantage; ``None``: the sport's (20 and 65, or 20 and 100).
    initial : float
        A team's rating before its first match.
    season : sequence, optional
        Each match's season label (any hashable); ``None``: no regression between seasons.
    revert : float, optional
        Share of the distance to ``revert_to`` removed at a new season; ``None``: the sport's (1/3, 1/4).
    revert_to : float
        The mean ratings regress to (1505, FiveThirtyEight's).

    Returns
    -------
    numpy.ndarray
        ``P_1`` before each match, shape ``(n,)``.
    """
    if sport not in FIVETHIRTYEIGHT:
        raise ValueError(f"sport must be one of {sorted(FIVETHIRTYEIGHT)}, not {sport!r}")
    const = FIVETHIRTYEIGHT[sport]
    k = const["k"] if k is None else float(k)
    home = const["home"] if home is None else float(home)
    revert = const["revert"] if revert is None else float(revert)
    multiplier = nfl_multiplier if sport == "nfl" else nba_multiplier
    a, b, (p1, p2, at_home) = _columns(first, second, points_first, points_second, home_first)
    seasons = None if season is None else list(season)
    if seasons is not None and len(seasons) != len(a):
        raise ValueError(f"season needs one entry per match: {len(seasons)} for {len(a)} matches")
    ratings: dict[str, float] = {}
    last_season: dict[str, object] = {}
    out = np.empty(len(a))
    for i in range(len(a)):
        if seasons is not None:
            for team in (a[i], b[i]):
                if team in ratings and last_season[team] != seasons[i]:
                    ratings[team] = revert_to + (1.0 - revert) * (ratings[team] - revert_to)
                last_season[team] = seasons[i]
        r1 = ratings.get(a[i], initial)
        r2 = ratings.get(b[i], initial)
        elodiff = r1 - r2 + (home if at_home[i] else 0.0)
        p = expected(elodiff)
        out[i] = p
        diff = p1[i] - p2[i]
        if diff > 0:
            w, winner_diff = 1.0, elodiff
        elif diff < 0:
            w, winner_diff = 0.0, -elodiff
        else:
            w, winner_diff = 0.5, None
        change = k * multiplier(diff, winner_diff) * (w - p)
        ratings[a[i]] = r1 + change
        ratings[b[i]] = r2 - change
    return out


# --------------------------------------------------------------------------------------------------------
# benchmark on the international football history
# --------------------------------------------------------------------------------------------------------


def pair_scores(
    p_first: np.ndarray, goals_first: np.ndarray, goals_second: np.ndarray, start: int
) -> tuple[float, float, int]:
    """Pair log loss and pair error of ``p_first`` on the decided matches from index ``start`` on.

    Log loss: mean of ``-ln P(actual winner)``; error: share of matches with ``P(actual winner) < 0.5``, a
    ``P`` of exactly 0.5 counting one half.  Draws are left out.  Returns ``(log loss, error, matches)``.
    """
    p = np.asarray(p_first, dtype=float)[start:]
    d = (np.asarray(goals_first, dtype=float) - np.asarray(goals_second, dtype=float))[start:]
    decided = d != 0
    p_winner = np.where(d > 0, p, 1.0 - p)[decided]
    loss = float(np.mean(-np.log(p_winner)))
    error = float(np.mean((p_winner < 0.5) + 0.5 * (p_winner == 0.5)))
    return loss, error, int(decided.sum())


def _close(got: np.ndarray, want: Sequence[float], what: str) -> None:
    if not np.allclose(got, want, rtol=0.0, atol=1e-6):
        raise AssertionError(f"{what}: got {np.round(got, 7).tolist()}, expected {list(want)}")


def _self_check() -> None:
    """Three small matches per system, checked against numbers worked out by hand from the formulas.

    (Worked with a calculator, i.e. a few lines of arithmetic written apart from this module's code.)
    Teams A, B, C start at 1500; ``E(d) = 1/(10^(-d/400) + 1)``.

    eloratings (home 100):
      1. A (home) 3-0 B, K 40:  dr = 100, We = E(100) = 0.6400650; G = 1.75;
         change = 40 * 1.75 * (1 - 0.6400650) = 25.195450 -> A 1525.195450, B 1474.804550.
      2. B 1-1 C (neutral), K 20:  dr = -25.195450, We = 0.4638043; G = 1;
         change = 20 * (0.5 - 0.4638043) = 0.7239148 -> B 1475.528465, C 1499.276085.
      3. C (home) 1-5 A, K 60:  dr = 1499.276085 - 1525.195450 + 100 = 74.080635, We = 0.6050238.
      Plain (home 0, G = 1, K 40): match 1 We = 0.5, change 40 * 0.5 = 20 -> A 1520, B 1480;
      match 2 dr = 1480 - 1500 = -20, We = E(-20) = 0.4712494.

    fivethirtyeight, NFL (K 20, home 65); matches A (home) 21-14 B, B 10-10 A (neutral), C (home) 0-3 B:
      1. ELODIFF = 65, P = E(65) = 0.5924662; M = ln 8 * 2.2/(0.065 + 2.2) = 2.0197666;
         change = 20 * 2.0197666 * (1 - 0.5924662) = 16.462462 -> A 1516.462462, B 1483.537538.
      2. ELODIFF = -32.924924, P = 0.4527586; tie: M = 2.2 ln 2 = 1.5249238;
         change = 20 * 1.5249238 * (0.5 - 0.4527586) = 1.4407920 -> B 1484.978330, A 1515.021670.
      3. ELODIFF = 1500 - 1484.978330 + 65 = 80.021670, P = 0.6131664.

    fivethirtyeight, NBA (K 20, home 100), the same matches:
      1. ELODIFF = 100, P = 0.6400650; M = (7 + 3)^0.8 / (7.5 + 0.006 * 100) = 6.3095734 / 8.1 = 0.7789597;
         change = 20 * 0.7789597 * (1 - 0.6400650) = 5.607497 -> A 1505.607497, B 1494.392503.
      2. ELODIFF = -11.214994, P = 0.4838659; tie: M = 3^0.8 / 7.5 = 0.3210966;
         change = 20 * 0.3210966 * (0.5 - 0.4838659) = 0.1036119 -> B 1494.496115.
      3. ELODIFF = 1500 - 1494.496115 + 100 = 105.503885, P = 0.6473313.

    NFL with seasons [1, 2] for the first two matches: before match 2, B 1483.537538 -> 1505 + (2/3)(-21.462462)
    = 1490.691692 and A 1516.462462 -> 1512.641641; P = E(1490.691692 - 1512.641641) = 0.4684534.
    """
    _close(np.array([football_k(t) for t in ("FIFA World Cup", "UEFA Euro qualification", "Friendly", "Gulf Cup",
                                            "Copa América", "CFU Caribbean Cup qualification", "UEFA Nations League")]),
           [60, 40, 20, 30, 50, 30, 40], "football_k")
    teams1, teams2 = ["A", "B", "C"], ["B", "C", "A"]
    _close(eloratings(teams1, teams2, [3, 1, 1], [0, 1, 5], [True, False, True], [40, 20, 60]),
           [0.6400650, 0.4638043, 0.6050238], "eloratings")
    _close(eloratings(teams1, teams2, [3, 1, 1], [0, 1, 5], [True, False, True], 40, home=0.0, margin=False)[:2],
           [0.5, 0.4712494], "eloratings, plain")
    teams1, teams2 = ["A", "B", "C"], ["B", "A", "B"]
    args = (teams1, teams2, [21, 10, 0], [14, 10, 3], [True, False, True])
    _close(fivethirtyeight(*args, sport="nfl"), [0.5924662, 0.4527586, 0.6131664], "538 NFL")
    _close(fivethirtyeight(*args, sport="nba"), [0.6400650, 0.4838659, 0.6473313], "538 NBA")
    p = fivethirtyeight(teams1[:2], teams2[:2], [21, 10], [14, 10], [True, False], season=[1, 2])
    _close(p[1:], [0.4684534], "538 NFL, season regression")


def load(path: Path) -> dict[str, list]:
    """The columns of the football history: teams, goals, home, tournament, in file order."""
    cols: dict[str, list] = {"first": [], "second": [], "g1": [], "g2": [], "home": [], "tournament": []}
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            m = json.loads(line)
            (t1,), (t2,) = m["teams"]
            meta = m["meta"]
            cols["first"].append(t1)
            cols["second"].append(t2)
            cols["g1"].append(meta["score"][0])
            cols["g2"].append(meta["score"][1])
            cols["home"].append(meta["neutral"] == "FALSE")
            cols["tournament"].append(meta["tournament"])
    return cols


def main() -> None:
    _self_check()
    print("self-check: eloratings, 538 NFL and NBA agree with the hand-computed matches")
    if not DATA.exists():
        print(f"{DATA} not found: no benchmark")
        return
    c = load(DATA)
    n = len(c["first"])
    start = int(0.7 * n)
    teams = (c["first"], c["second"], c["g1"], c["g2"], c["home"])
    tournament_k = [football_k(t) for t in c["tournament"]]
    rows = [
        ("plain Elo, K 40 (home 0, G = 1)", eloratings(*teams, 40.0, home=0.0, margin=False), (0.504, 0.246)),
        ("+ home 100", eloratings(*teams, 40.0, home=100.0, margin=False), (0.478, 0.231)),
        ("+ goal-difference G (K 40)", eloratings(*teams, 40.0, home=100.0, margin=True), (0.467, 0.226)),
        ("eloratings.net (tournament K)", eloratings(*teams, tournament_k), None),
        ("538 NFL (K 20, home 65)", fivethirtyeight(*teams, sport="nfl"), None),
        ("538 NBA (K 20, home 100)", fivethirtyeight(*teams, sport="nba"), None),
    ]
    print(f"\n{DATA.parent.name}: {n} matches, scored from match {start} (last 30 %, file order)")
    header = f"| {'system':<32} | log loss | error  | issue: log loss | issue: error |"
    print(header)
    print("|" + "|".join("-" * (len(s)) for s in header.split("|")[1:-1]) + "|")
    for name, p, quoted in rows:
        loss, error, decided = pair_scores(p, np.asarray(c["g1"]), np.asarray(c["g2"]), start)
        q_loss, q_err = ("", "") if quoted is None else (f"{quoted[0]:.3f}", f"{100 * quoted[1]:.1f} %")
        print(f"| {name:<32} | {loss:8.4f} | {100 * error:4.1f} % | {q_loss:>15} | {q_err:>12} |")
    print(f"({decided} decided matches scored; draws left out)")


if __name__ == "__main__":
    main()
