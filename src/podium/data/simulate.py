"""Simulated seasons with known skills, for demos, tests and benchmarks."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .match import Match
from .matches import Matches

__all__ = ["AbuseSimulation", "Simulation", "simulate", "simulate_abuse"]


@dataclass(frozen=True)
class Simulation:
    """A simulated history and the truth behind it.

    Attributes
    ----------
    matches : Matches
        The matches, in the order played (``time`` = match number).
    skills : dict of str to float
        The true skill of each player, in natural units (performance noise has standard deviation 1); with
        ``skill_drift``, after their last match.
    slot_skills : float64 array, optional
        The true skill of the player in each player slot of :attr:`matches` at that match (``matches.player``'s
        order): the truth a smoother's trajectories are scored against.
    """

    matches: Matches
    skills: dict[str, float]
    slot_skills: NDArray[np.float64] | None = None


def _check_ints(fields: Sequence[tuple[str, Any, int]]) -> None:
    """Each ``(name, value, least)``: an int (not a bool) of at least ``least``, else ``ValueError`` naming it."""
    for name, value, low in fields:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
            raise ValueError(f"'{name}' must be an int >= {low}. Got {value!r}.")


def _draw_margin(draw_probability: float, team_size: float) -> float:
    """The margin ``eps`` with ``P(|X_1 - X_2| <= eps) = draw_probability`` for two equal teams.

    Team performance is the sum of ``team_size`` unit-variance performances, so ``X_1 - X_2`` has
    variance ``2 * team_size`` and ``draw_probability = 2 Phi(eps / sqrt(2 n)) - 1`` (TrueSkill paper, 4.1).
    """
    from scipy.special import ndtri  # here: scipy costs every import of podium a quarter of a second

    return math.sqrt(2.0 * team_size) * float(ndtri((1.0 + draw_probability) / 2.0))


def _lineups(rng: np.random.Generator, n_players: int, n_matches: int, k: int,
             rate: NDArray[np.float64] | None = None) -> NDArray[np.int64]:
    """``k`` distinct players for each match, uniformly at random, or in proportion to ``rate`` (each place
    goes to a player not yet chosen with probability proportional to its rate: the least ``-log(u) / rate``,
    an exponential race)."""
    if n_players <= 4096:
        out = np.empty((n_matches, k), dtype=np.int64)
        chunk = max(1, 2_000_000 // n_players)
        for start in range(0, n_matches, chunk):
            stop = min(n_matches, start + chunk)
            keys = rng.random((stop - start, n_players))
            if rate is not None:
                keys = -np.log(keys) / rate
            out[start:stop] = np.argpartition(keys, k - 1, axis=1)[:, :k] if k < n_players else np.argsort(keys, axis=1)
        # argpartition leaves the k chosen in no particular order; shuffle so team order is random.
        return rng.permuted(out, axis=1)
    def draw(rows: int) -> NDArray[np.int64]:
        if rate is None:
            return rng.integers(0, n_players, size=(rows, k), dtype=np.int64)
        return rng.choice(n_players, size=(rows, k), p=rate / rate.sum())

    out = draw(n_matches)
    while True:
        srt = np.sort(out, axis=1)
        bad = np.flatnonzero(np.any(srt[:, 1:] == srt[:, :-1], axis=1))
        if len(bad) == 0:
            return out
        out[bad] = draw(len(bad))


def _party_lineups(rng: np.random.Generator, n_players: int, n_matches: int, sizes: list[int], parties: float,
                   party_size: int, rate: NDArray[np.float64] | None = None) -> NDArray[np.int64]:
    """Line-ups in which each team of at least ``party_size`` players is led, with probability ``parties``, by one
    of the fixed parties (the players split once, in a random order, into groups of ``party_size``)."""
    groups = rng.permutation(n_players)[:n_players // party_size * party_size].reshape(-1, party_size)
    k = sum(sizes)
    out = np.empty((n_matches, k), dtype=np.int64)
    starts = np.r_[0, np.cumsum(sizes)]
    led = rng.random((n_matches, len(sizes))) < parties
    for m in range(n_matches):
        used: set[int] = set()
        row = out[m]
        free: list[int] = []
        for t, size in enumerate(sizes):
            if led[m, t] and size >= party_size and len(groups):
                for _ in range(8):  # a party none of whose players is already in the match
                    group = groups[rng.integers(len(groups))]
                    if not used.intersection(group.tolist()):
                        break
                else:
                    group = None
                if group is not None:
                    row[starts[t]:starts[t] + party_size] = group
                    used.update(group.tolist())
                    free.extend(range(starts[t] + party_size, starts[t + 1]))
                    continue
            free.extend(range(starts[t], starts[t + 1]))
        while free:  # the other places: players drawn at random, none twice in the match
            pick = int(rng.integers(n_players)) if rate is None else int(rng.choice(n_players, p=rate / rate.sum()))
            if pick not in used:
                used.add(pick)
                row[free.pop()] = pick
    return out


def simulate(
    players: int | Sequence[str],
    matches: int,
    *,
    teams: int = 2,
    team_size: int | Sequence[int] = 1,
    draw_probability: float = 0.0,
    skill_sd: float = 1.0,
    skill_drift: float = 0.0,
    parties: float = 0.0,
    party_size: int = 2,
    activity: float = 0.0,
    skill_mean: float = 0.0,
    seed: int | None = None,
) -> Simulation:
    """Simulate a season: random line-ups, Gaussian performances around true skills.

    Each player's true skill is drawn from ``N(skill_mean, skill_sd**2)``.  In each match ``teams * team_size``
    distinct players are chosen uniformly; each performs ``skill + N(0, 1)``; a team performs the sum of
    its members.  Teams finish in order of performance; two teams adjacent in that order draw when their
    performances differ by at most the margin that gives ``draw_probability`` for two equal teams (the
    TrueSkill paper's draw model between adjacent ranks).  Draws chain: in a many-team match, teams within a
    margin of their neighbours share a rank, so more teams tie than ``draw_probability`` alone suggests.

    Parameters
    ----------
    players : int or sequence of str
        How many players (named ``p00000``, ``p00001``, ...) or their names.
    matches : int
        How many matches.
    teams : int
        Teams per match.
    team_size : int or sequence of int
        Players per team, or each team's own number (``(4, 3)``: four against three; its length is ``teams``).
        A team performs the sum of its members' performances; skills are centred on 0, so the size of a team
        alone favours neither side (a model that sums ratings on an offset scale, such as Elo's 1500, sees the
        larger team as far stronger).  With uneven teams the draw margin is that of two teams of the mean size.
    draw_probability : float in [0, 1)
        Probability that two equal teams draw.
    skill_sd : float
        Spread of the true skills, in units of one player's performance noise.
    skill_drift : float
        Dynamics: before each of a player's matches their skill moves by ``N(0, skill_drift**2)`` (TrueSkill's
        ``tau`` in these units).  :attr:`Simulation.skills` then holds the skills after the last match.
    parties : float in [0, 1]
        Players who queue together: the players are split once into fixed parties of ``party_size`` (in a
        random order), and each team of at least ``party_size`` players is, with this probability, led by a
        whole party (one not already in the match), the rest of its places drawn at random.  0 (the default)
        leaves every line-up random, with the same random numbers as before this option existed.
    party_size : int
        Players per party (at least 2).
    activity : float
        Uneven schedules: each player's rate of play is ``exp(activity * N(0, 1))`` (drawn once), and the places
        of a match go to players in proportion to their rates (``activity = 1``: the busiest tenth play about
        seven times as often as the median player).  0 (the default) draws line-ups uniformly, with the same
        random numbers as before this option existed.
    skill_mean : float
        The mean of the true skills: what a player adds to its team's performance on average, so that in uneven
        team games (``team_size=(4, 3)``) a larger team of average players is ``skill_mean`` per extra player ahead
        (TrueSkill's literal sum of skills around ``mu``); 0 (the default) makes the team size alone favour no one.
        It changes no one-on-one or even-team outcome.
    seed : int, optional
        Seed for ``numpy.random.default_rng``.
    """
    if isinstance(players, bool) or isinstance(players, (str, bytes)):
        raise ValueError(f"'players' must be a number of players or a sequence of player ids. Got {players!r}.")
    if isinstance(players, (int, np.integer)):
        names = [f"p{i:05d}" for i in range(int(players))]
    else:
        names = list(players)
    sizes_given = not isinstance(team_size, (bool, numbers.Integral))
    _check_ints((("matches", matches, 0), ("teams", teams, 2), ("party_size", party_size, 2)) + (
        () if sizes_given else (("team_size", team_size, 1),)))
    matches, teams, party_size = int(matches), int(teams), int(party_size)
    if sizes_given:
        try:
            sizes: list[int | None] = [int(x) if isinstance(x, numbers.Integral) and not isinstance(x, bool)
                                       and int(x) >= 1 else None for x in team_size]  # type: ignore[union-attr]
        except TypeError:
            sizes = [None]
        if len(sizes) != teams or None in sizes:
            raise ValueError(f"'team_size' must be an int >= 1 or one int >= 1 per team ({teams} teams). "
                             f"Got {team_size!r}.")
        size_list = [int(x) for x in sizes if x is not None]
    else:
        size_list = [int(team_size)] * teams  # type: ignore[arg-type]
    k = sum(size_list)
    if len(names) < k or len(set(names)) != len(names):
        raise ValueError(f"'players' must be at least {k} distinct players (the players of one match). "
                         f"Got {len(names)}.")
    if isinstance(parties, bool) or not (isinstance(parties, (int, float)) and 0.0 <= parties <= 1.0):
        raise ValueError(f"'parties' must be a probability in [0, 1]. Got {parties!r}.")
    if not (isinstance(draw_probability, (int, float)) and 0.0 <= draw_probability < 1.0):
        raise ValueError(f"'draw_probability' must be in [0, 1). Got {draw_probability!r}.")
    if isinstance(skill_sd, bool) or not (isinstance(skill_sd, (int, float)) and skill_sd >= 0 and math.isfinite(skill_sd)):
        raise ValueError(f"'skill_sd' must be a finite number >= 0. Got {skill_sd!r}.")
    if isinstance(skill_drift, bool) or not (
            isinstance(skill_drift, (int, float)) and skill_drift >= 0 and math.isfinite(skill_drift)):
        raise ValueError(f"'skill_drift' must be a finite number >= 0. Got {skill_drift!r}.")
    if isinstance(activity, bool) or not (isinstance(activity, (int, float)) and activity >= 0 and math.isfinite(activity)):
        raise ValueError(f"'activity' must be a finite number >= 0. Got {activity!r}.")
    if isinstance(skill_mean, bool) or not (isinstance(skill_mean, (int, float)) and math.isfinite(skill_mean)):
        raise ValueError(f"'skill_mean' must be a finite number. Got {skill_mean!r}.")
    rng = np.random.default_rng(seed)
    skill = rng.normal(0.0, skill_sd, size=len(names)) + float(skill_mean)
    rate = np.exp(activity * rng.normal(size=len(names))) if activity > 0 else None
    if parties > 0:
        lineup = _party_lineups(rng, len(names), matches, size_list, float(parties), party_size, rate)
    else:
        lineup = _lineups(rng, len(names), matches, k, rate)                 # (M, players of one match)
    if skill_drift > 0:
        # Each player's skill at a slot is its start plus the running sum of its own steps so far.
        flat = lineup.reshape(-1)
        by_player = np.argsort(flat, kind="stable")
        steps = rng.normal(0.0, skill_drift, size=len(flat))[by_player]
        total = np.cumsum(steps)
        first = np.r_[True, flat[by_player][1:] != flat[by_player][:-1]]
        before_group = np.where(first, total - steps, 0.0)
        group_start = np.maximum.accumulate(np.where(first, np.arange(len(flat)), 0))
        walked = total - before_group[group_start]
        at_slot = np.empty(len(flat))
        at_slot[by_player] = skill[flat[by_player]] + walked
        perf = at_slot.reshape(lineup.shape) + rng.normal(size=lineup.shape)
        skill = skill.copy()
        last = np.r_[first[1:], True]
        skill[flat[by_player][last]] = at_slot[by_player][last]
    else:
        at_slot = skill[lineup].reshape(-1)
        perf = skill[lineup] + rng.normal(size=lineup.shape)
    team_of_slot = np.repeat(np.arange(teams), size_list)
    team_perf = np.zeros((matches, teams))
    np.add.at(team_perf.T, team_of_slot, perf.T)                       # (M, teams): members' sums
    order = np.argsort(-team_perf, axis=1, kind="stable")
    ranked = np.take_along_axis(team_perf, order, axis=1)
    eps = _draw_margin(draw_probability, k / teams) if draw_probability > 0 else -1.0
    step = (ranked[:, :-1] - ranked[:, 1:]) > eps
    sorted_rank = np.concatenate([np.zeros((matches, 1), np.int64), np.cumsum(step, axis=1)], axis=1)
    rank = np.empty_like(sorted_rank)
    np.put_along_axis(rank, order, sorted_rank, axis=1)
    packed = Matches(
        np.arange(matches + 1, dtype=np.int64) * teams,
        np.r_[0, np.cumsum(np.tile(size_list, matches))].astype(np.int64),
        rank.reshape(-1), lineup.reshape(-1), np.ones(matches * k), np.arange(matches, dtype=np.float64),
        names, [f"m{j}" for j in range(matches)], validate=False, has_weights=False,
    )
    return Simulation(packed, dict(zip(names, skill.tolist())), at_slot)


@dataclass(frozen=True)
class AbuseSimulation:
    """An honest simulated season with abuse injected (:func:`simulate_abuse`), and who did what.

    Attributes
    ----------
    matches : Matches
        The history, honest and abusive matches together in the order played (``time`` = match number).
    skills : dict of str to float
        True skills (the throwaway accounts' too, though they never play honestly).
    abusers : dict of str to list of tuple of str
        For each kind (``"one-sided pair"``, ``"farming"``, ``"sandbagging"``), each injected case's players:
        ``(beneficiary, booster)``, ``(farmer, account, ...)`` or ``(sandbagger,)``.
    abuse_matches : dict of str to list of list of int
        For each kind, each case's matches (indices into :attr:`matches`).
    """

    matches: Matches
    skills: dict[str, float]
    abusers: dict[str, list[tuple[str, ...]]]
    abuse_matches: dict[str, list[list[int]]]


def simulate_abuse(
    players: int,
    matches: int,
    *,
    win_trading: int = 1,
    farming: int = 1,
    sandbagging: int = 1,
    trades: int = 40,
    accounts: int = 10,
    account_games: int = 4,
    dive: int = 50,
    throw: float = 0.95,
    farmer_quantile: float = 0.8,
    sandbagger_quantile: float = 0.5,
    seed: int | None = None,
    **season: Any,
) -> AbuseSimulation:
    """An honest season (:func:`simulate`) with three kinds of abuse injected, for testing :func:`podium.audit`.

    Each case uses its own players, drawn at random from the honest ones (none in two cases):

    - **Win trading** (``win_trading`` cases): of two players drawn at random, the stronger, the *booster*, throws
      ``trades`` one-on-one games to the weaker, the *beneficiary*, played at random moments of the season among
      their honest games; each goes to the beneficiary with probability ``throw`` (the booster does not always
      manage to lose convincingly), else to the booster.  (Games thrown to a far stronger player are the wins
      the model expects of it: they leave no trace, and gain it little.)
    - **Farming** (``farming`` cases): a *farmer*, drawn from the players below the ``farmer_quantile`` of true
      skill (a player at the top gains little from beating newcomers, and the model expects those wins: such
      farming leaves no trace in results), creates ``accounts`` new accounts; each plays ``account_games``
      one-on-one games against the farmer in a burst at a random moment and nothing else, losing each with
      probability ``throw``.
    - **Sandbagging** (``sandbagging`` cases): an established player (at least ``2 * dive + 10`` honest games)
      whose true skill is above the ``sandbagger_quantile`` (a weak player's throws are the losses the model
      expects of it, and cost it little rating) throws ``dive`` consecutive ones, starting after its tenth game and leaving at least ``dive`` after: in
      each, with probability ``throw``, its team finishes last (alone); then it plays honestly again, and its
      rating climbs back.

    Parameters
    ----------
    players, matches : int
        Honest players and honest matches (:func:`simulate`).
    win_trading, farming, sandbagging : int
        Cases of each kind.
    trades : int
        Games thrown by each booster.
    accounts, account_games : int
        Throwaway accounts per farmer, and games each plays.
    dive : int
        Games thrown by each sandbagger.
    throw : float in (0, 1]
        Probability that a thrown game goes as arranged.
    farmer_quantile : float in (0, 1]
        Farmers are drawn from the players whose true skill is below this quantile.
    sandbagger_quantile : float in [0, 1)
        Sandbaggers are drawn from the players whose true skill is above this quantile.
    seed : int, optional
        Seed (the honest season uses it too).
    **season
        Passed to :func:`simulate` (``teams``, ``team_size``, ``draw_probability``, ``skill_sd``, ``activity``,
        ``parties``...).
    """
    _check_ints((("players", players, 2), ("matches", matches, 0), ("win_trading", win_trading, 0),
                 ("farming", farming, 0), ("sandbagging", sandbagging, 0), ("trades", trades, 1),
                 ("accounts", accounts, 1), ("account_games", account_games, 1), ("dive", dive, 1)))
    for label, prob in (("throw", throw), ("farmer_quantile", farmer_quantile)):
        if isinstance(prob, bool) or not (isinstance(prob, (int, float)) and 0.0 < prob <= 1.0):
            raise ValueError(f"'{label}' must be in (0, 1]. Got {prob!r}.")
    if isinstance(sandbagger_quantile, bool) or not (
            isinstance(sandbagger_quantile, (int, float)) and 0.0 <= sandbagger_quantile < 1.0):
        raise ValueError(f"'sandbagger_quantile' must be in [0, 1). Got {sandbagger_quantile!r}.")
    if "players" in season or "matches" in season:
        raise ValueError("Give 'players' and 'matches' once.")
    honest = simulate(int(players), int(matches), seed=seed, **season)
    rng = np.random.default_rng(None if seed is None else [int(seed), 1])
    base = honest.matches
    names = list(base.players)
    skills = dict(honest.skills)
    if 2 * win_trading + farming + sandbagging > len(names):
        raise ValueError(f"{2 * win_trading + farming + sandbagging} abusers do not fit among {len(names)} players.")
    # Records: (position, teams, ranks, case); honest matches at integer positions, abuse between them.
    records: list[tuple[float, list[list[str]], list[int], tuple[str, int] | None]] = [
        (float(j), [list(t) for t in m.teams], [int(r) if r is not None else -1 for r in m.ranks], None)
        for j, m in enumerate(base)]
    free = list(rng.permutation(len(names)))
    abusers: dict[str, list[tuple[str, ...]]] = {"one-sided pair": [], "farming": [], "sandbagging": []}
    games_of: dict[str, list[int]] = {}
    for j, m in enumerate(base):
        for p in m.players:
            games_of.setdefault(p, []).append(j)

    def duel(winner: str, loser: str, at: float, case: tuple[str, int]) -> None:
        records.append((at, [[winner], [loser]], [0, 1], case))

    for c in range(win_trading):
        beneficiary, booster = sorted((names[free.pop()], names[free.pop()]), key=lambda p: skills[p])
        abusers["one-sided pair"].append((beneficiary, booster))
        for at in rng.uniform(0, len(base), size=trades):
            won = rng.random() < throw
            duel(beneficiary if won else booster, booster if won else beneficiary, float(at), ("one-sided pair", c))
    order = sorted(free, key=lambda i: skills[names[i]])
    below = {i for i in order[:max(1, int(farmer_quantile * len(order)))]}
    next_id = len(names)
    for c in range(farming):
        pool = [i for i in free if i in below]
        if not pool:
            raise ValueError(f"No player below the farmer_quantile ({farmer_quantile}) is left for farming case {c}; "
                             "give more players or fewer cases.")
        farmer = names[pool[int(rng.integers(len(pool)))]]
        free.remove(names.index(farmer))
        made = []
        for _ in range(accounts):
            account = f"p{next_id:05d}"
            next_id += 1
            skills[account] = float(rng.normal(0.0, float(season.get("skill_sd", 1.0))))
            made.append(account)
            start = float(rng.uniform(0, len(base)))
            for g in range(account_games):
                won = rng.random() < throw
                duel(farmer if won else account, account if won else farmer, start + 0.01 * (g + 1), ("farming", c))
        abusers["farming"].append((farmer, *made))
    thrown: dict[int, tuple[str, int]] = {}
    strong = {i for i in order[int(sandbagger_quantile * len(order)):]}
    for c in range(sandbagging):
        pool = [i for i in free if len(games_of.get(names[i], ())) >= 2 * dive + 10 and i in strong]
        if not pool:
            raise ValueError(f"No honest player above the sandbagger_quantile has the {2 * dive + 10} games a "
                             "sandbagger needs; give more matches.")
        for _ in range(100):  # a dive that shares no game with another sandbagger's
            who = names[pool[int(rng.integers(len(pool)))]]
            career = games_of[who]
            first = int(rng.integers(10, len(career) - 2 * dive + 1))
            if not set(career[first:first + dive]) & set(thrown):
                break
        else:
            raise ValueError(f"Found no dive for sandbagging case {c} apart from the others'; give more matches.")
        free.remove(names.index(who))
        for j in career[first:first + dive]:
            thrown[j] = (who, c)
        abusers["sandbagging"].append((who,))
    out: list[tuple[float, list[list[str]], list[int], tuple[str, int] | None]] = []
    for at, teams, ranks, case in records:
        if case is None and int(at) in thrown:
            who, c = thrown[int(at)]
            case = ("sandbagging", c)
            if rng.random() < throw:  # its team last, alone; the others keep their order
                t = next(i for i, team in enumerate(teams) if who in team)
                worst = max(ranks)
                ranks = [r if i != t else worst + 1 for i, r in enumerate(ranks)]
                ranks = [int(x) for x in np.unique(ranks, return_inverse=True)[1]]
        out.append((at, teams, ranks, case))
    out.sort(key=lambda rec: rec[0])
    packed = Matches.from_matches(
        Match(teams, [r if r >= 0 else None for r in ranks], time=j, id=f"m{j}")
        for j, (_, teams, ranks, _) in enumerate(out))
    abuse_matches: dict[str, list[list[int]]] = {kind: [[] for _ in cases] for kind, cases in abusers.items()}
    for j, rec in enumerate(out):
        if rec[3] is not None:
            abuse_matches[rec[3][0]][rec[3][1]].append(j)
    return AbuseSimulation(packed, skills, abusers, abuse_matches)
