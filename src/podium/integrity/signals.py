"""The three tests of :func:`podium.audit`: one-sided pairs, farming and sandbagging, each a list of p-values and
the number of hypotheses it considered (for the correction).

- **One-sided pair** (win trading, feeding): two players who met on opposite sides in at least
  ``min_meetings`` decided games.  ``W`` = the first's wins, a Poisson-binomial given the skills; the p-value
  is two-sided, ``2 min(P(W >= w), P(W <= w))``.
- **Farming**: a player ``x`` and the new accounts that met it (between 2 and ``new_games`` games in all).  An
  account *fell* to ``x`` when at least ``satellite_share`` of its games were against ``x`` (a game against
  several opposing teams counts a share against each: a race is not a game against every rival in it) and it
  lost at least that share of its decided meetings with ``x``: a career that is a handful of losses to one
  player.  Under honest play an account falls with probability ``P(Bin(g - 1, rho) >= ceil(share g) - 1)``
  (its schedule) times the chance of those losses (its results, given the skills), where ``rho`` is how often
  ``x``'s other opponents met it again in their next game (Laplace's rule, ``(repeats + 1) / (games + 2)``: a
  two-legged tie or a series repeats a pairing, random matchmaking seldom does).  ``S``, the number of accounts
  that fell, is Poisson-binomial given ``x``'s skill; the p-value is ``P(S >= s)`` averaged over it, tested
  where ``s >= min_satellites``.  A strong player's wins over newcomers are what the model expects; newcomers
  who play nobody else are not, which is what finds farming at any skill.  Accounts that played ``x`` together
  (two as a team) are taken as one, each game once.  An account with nothing else to its name is predicted at
  the prior, as a new account is.
- **Sandbagging**: a window of a player's consecutive games (lengths ``windows``, starting at multiples of a
  quarter of the length, after its first ``established`` games) in which it scored far below what its rating
  from its other games predicts (the games before the window and the ``2 L`` after it), followed by a rise:
  within those ``2 L`` games its rating (the model's, as replayed) regains at least a third of what it lost
  in the window.  A game's score is the share of decided opponents beaten; the p-value is the exact
  Poisson-binomial lower tail where each game has one opponent, else Hoeffding's bound for bounded
  independent scores, ``exp(-L KL(mean score || mean p))`` (Hoeffding 1963, Theorem 1), averaged over the
  skills.

Pairs and windows are screened on the ordinary replay's residuals, farming candidates by their schedule; only
those that pass are computed (the most suspicious first, up to ``budget`` of the history taken out), with
predictions from the leave-out replay (:mod:`podium.integrity.replay`) and the tails of :mod:`podium.integrity.tails`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..engine.union_find import UnionFind
from ..ordering.numerics import jit
from .replay import _Ablated, _Block, _nodes, _Replay
from .tails import _kl_log_tail, hoeffding_lower, poisson_binomial_pmf, poisson_binomial_tails, tails

PAIR_NODES = 12  # Gauss-Hermite nodes per integrated skill (see _Block): two skills for a pair,
FARM_NODES = 10  # the farmer's and each satellite's,
SAND_NODES = 24  # the sandbagger's


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
    """The farmer's satellites grouped by the matches against the farmer they share (linked transitively), each
    group in the order of ``satellites`` and the groups in the order of their first."""
    index = {s: i for i, s in enumerate(satellites)}
    linked = UnionFind(len(satellites))
    against = ((x == farmer) & np.isin(y, satellites)) | ((y == farmer) & np.isin(x, satellites))
    first_in: dict[int, int] = {}
    for m, a, b in zip(match[against].tolist(), x[against].tolist(), y[against].tolist()):
        sat = index[b if a == farmer else a]
        if m in first_in:
            linked.union(first_in[m], sat)
        else:
            first_in[m] = sat
    out: dict[int, list[int]] = {}
    for i, sat in enumerate(satellites):
        out.setdefault(linked.find(i), []).append(sat)
    return list(out.values())


@jit
def _next_meetings(match_start: NDArray[np.int64], team_start: NDArray[np.int64], player: NDArray[np.int64],
                   counted: NDArray[np.bool_], target: NDArray[np.bool_]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """For each ``target`` player ``f``: ``(n_f, again_f)``, the games of ``counted`` players against ``f`` that
    the player followed with another game, and how many of those next games were against ``f`` again.

    This is how often ``f``'s schedule repeats a pairing at once (a two-legged tie, a series, a ladder that
    pairs the same two again), measured on its opponents' next games, not on ``f``'s own (a farmer's own
    next games are its satellites')."""
    n_players = len(counted)
    n = np.zeros(n_players, dtype=np.int64)
    again = np.zeros(n_players, dtype=np.int64)
    team_of = np.empty(len(player), dtype=np.int64)
    for t in range(len(team_start) - 1):
        for q in range(team_start[t], team_start[t + 1]):
            team_of[q] = t
    following = np.full(n_players, -1, dtype=np.int64)  # each player's next match, walking back from the end
    for m in range(len(match_start) - 2, -1, -1):
        first, last = team_start[match_start[m]], team_start[match_start[m + 1]]
        for p in range(first, last):
            o = player[p]
            nxt = following[o]
            if not counted[o] or nxt < 0:
                continue
            n_first, n_last = team_start[match_start[nxt]], team_start[match_start[nxt + 1]]
            own_next = -1
            for q in range(n_first, n_last):
                if player[q] == o:
                    own_next = team_of[q]
            for q in range(first, last):
                f = player[q]
                if team_of[q] == team_of[p] or not target[f]:
                    continue
                n[f] += 1
                for u in range(n_first, n_last):
                    if player[u] == f and team_of[u] != own_next:
                        again[f] += 1
                        break
        for p in range(first, last):
            following[player[p]] = m
    return n, again


def _schedule_chance(games: int, share: float, rate: float) -> float:
    """``P(Bin(games - 1, rate) >= ceil(share games) - 1)``: the chance that an account which met a player plays
    at least ``share`` of its ``games`` against it, when each of its other games is against it with probability
    ``rate`` (the player's repeat rate, :func:`_next_meetings`)."""
    return poisson_binomial_tails(np.full(games - 1, rate), max(0, math.ceil(share * games - 1e-9) - 1))[0]


def _farming_tests(r: _Replay, new_games: int, share: float, min_satellites: int, budget: int
                   ) -> tuple[list[_Test], int]:
    names = r.matches.players
    n_players = len(names)
    games = np.bincount(r.matches.player, minlength=n_players)
    everything = np.ones(len(r.matches), dtype=bool)
    match, x, y, won, prob = r.meetings(everything)
    # An account can be a satellite only if its games could hold `share` of them against one player: a game
    # counts at most 1 / (opposing teams) against anyone (in a contest of thousands, nothing like a game).  Only
    # those accounts' meetings are gathered, and only players met by them are hypotheses.
    ms_, ts_ = r.matches.match_start, r.matches.team_start
    per_match = 1.0 / np.maximum(1, np.diff(ms_) - 1)
    most = np.bincount(r.matches.player, weights=np.repeat(per_match, np.diff(ts_[ms_])), minlength=n_players)
    possible = (games >= 2) & (games <= new_games) & (most >= share * games - 1e-9)
    # How much of each such account's play was against each opponent (whatever the outcome).
    account_of, opponent_of, mass = _opponent_mass(ms_, ts_, r.matches.player, possible)
    order, starts, pair_keys = _group(account_of * n_players + opponent_of)
    met = np.add.reduceat(mass[order], starts) if len(order) else np.zeros(0)
    account, opponent = pair_keys // n_players, pair_keys % n_players
    satellite = met >= share * games[account] - 1e-9
    # Every player met by min_satellites such accounts is a hypothesis (only such a player can have that many
    # satellites); the ones with that many satellites are computed.
    n_hypotheses = int(np.sum(np.bincount(opponent, minlength=n_players) >= min_satellites))
    farmers, n_sat = np.unique(opponent[satellite], return_counts=True)
    candidates = farmers[n_sat >= min_satellites]
    if len(candidates) == 0:
        return [], n_hypotheses
    sat_of: dict[int, set[int]] = {int(f): set() for f in candidates}
    met_of: dict[int, set[int]] = {int(f): set() for f in candidates}
    for acc, f, is_sat in zip(account.tolist(), opponent.tolist(), satellite.tolist()):
        if f in sat_of:
            met_of[f].add(acc)
            if is_sat:
                sat_of[f].add(acc)
    target = np.zeros(n_players, dtype=np.bool_)
    target[candidates] = True
    seen, again = _next_meetings(r.matches.match_start, r.matches.team_start, r.matches.player,
                                 games > new_games, target)
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
        return [], n_hypotheses
    ab = r.without(removed)
    z, w = _nodes(FARM_NODES)
    tests = []
    for f in chosen:
        rate = (int(again[f]) + 1.0) / (int(seen[f]) + 2.0)  # (Laplace's rule: a player seen little repeats more)
        # Units: the new accounts that met f, those that played it in the same match (two accounts as a team)
        # taken together, each such match once.  A unit "fell" when it is a satellite (its schedule, at least
        # `share` against f) and lost at least `share` of its decided meetings with f.  Given f's skill the
        # units are independent, each falling with probability (schedule chance) x (chance of those losses,
        # averaged over the unit's skill); the number fallen is Poisson-binomial; then average over f's skill.
        fall = np.ones((len(z), 0))
        fallen: list[list[int]] = []
        evidence = []
        wins = n = 0
        expected = 0.0
        for unit in _clusters(match, x, y, f, sorted(met_of[f])):
            chance = min(1.0, sum(_schedule_chance(int(games[a]), share, rate) for a in unit))
            results = np.ones(len(z))  # (no satellite, or no decided meeting: the schedule's chance alone)
            if sat_of[f] & set(unit):
                ms = np.unique(match[((x == f) & np.isin(y, unit)) | ((y == f) & np.isin(x, unit))])
                block = _Block(r, ms, ab, (f, *unit))
                sf, su = block.side(f), block.side(*unit)
                items = np.flatnonzero((sf * su == -1) & (block.outcome != 0))
                if len(items):
                    lost = int(np.sum(block.outcome[items] * sf[items] > 0))
                    need = math.ceil(share * len(items) - 1e-9)
                    mates = [p for p in block.recurring([f]) if p not in unit]
                    theirs = [p for p in block.recurring(unit) if p != f and p not in mates]
                    groups = {f: [f, *mates], -1: [*unit, *theirs]}
                    p = block.probs([{f: float(a), -1: float(b)} for a in z for b in z], groups)[:, items]
                    p = np.where(sf[items] > 0, p, 1.0 - p)  # P(f ahead), per skill pair and meeting
                    upper = poisson_binomial_pmf(p)[:, need:].sum(axis=1).reshape(len(z), len(z))
                    results = upper @ w
                    if lost >= need:
                        fallen.append(unit)
                        evidence.append(ms)
                        wins += lost
                        n += len(items)
                        expected += float(w @ p.sum(axis=1).reshape(len(z), len(z)) @ w)
            fall = np.column_stack([fall, chance * results])
        s = len(fallen)
        p_value = 1.0
        if s >= min_satellites:  # (fewer is not flagged: what a moderator would look at is several)
            p_value = float(min(1.0, w @ poisson_binomial_pmf(fall)[:, s:].sum(axis=1)))
        if not fallen:
            continue
        expected_units = float(w @ fall.sum(axis=1))
        sat_names = sorted(names[a] for unit in fallen for a in unit)
        tests.append(_Test(
            "farming", (names[f], *sat_names), p_value, np.unique(np.concatenate(evidence)),
            f"{len(sat_names)} accounts with at most {new_games} games played at least {share:.0%} of them against "
            f"{names[f]} and lost {wins} of their {n} decided meetings with it; {names[f]}'s other opponents met it "
            f"again in their next game {rate:.1%} of the time, and with ratings from other games "
            f"{expected_units:.2g} such accounts were expected ({expected:.1f} of those losses)",
            {"games": n, "wins": wins, "expected": expected, "satellites": len(sat_names),
             "accounts_met": len(met_of[f]), "expected_satellites": expected_units, "repeat_rate": rate}))
    return tests, n_hypotheses


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
    linked = UnionFind(len(rivals))  # the clusters are convolved in the order of their roots
    first_rival = np.full(len(items), -1)
    for k, t in enumerate(opposing.tolist()):
        met = [rival_of[p] for p in block.sub.player[teams[t]:teams[t + 1]].tolist() if p in rival_of]
        for i in met[1:]:
            linked.union(met[0], i)
        first_rival[k] = met[0] if met else -1
    cluster = np.array([linked.find(i) if i >= 0 else -1 for i in first_rival.tolist()], dtype=np.int64)
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
        players = [p for p in rivals if linked.find(rival_of[p]) == c]
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
