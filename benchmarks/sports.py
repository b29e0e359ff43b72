"""What a result says beyond the order (issue 31): scores, home/White advantage and match importance on real
sports histories, podium's models fitted without and with them, and the published sports Elo systems beside them.

The shared histories (``../shared/data/<name>/matches.jsonl.gz``) keep scores, venues and tournaments in each
record's ``meta`` only.  The converters here (:func:`intl_football`, :func:`atp_singles`, :func:`chess_worldcup`,
:func:`riichi_mahjong`) read them into ``podium.Matches``' optional columns (``score``, ``advantage``,
``match_weight``), rebuilding the history read by ``podium.read_matches`` with the ``Matches`` constructor:

* **intl_football**: ``score`` = ``meta.score`` (goals, in team order); ``advantage`` ``[1, 0]`` when
  ``meta.neutral == "FALSE"`` (the first team at home), else none; optionally ``match_weight`` =
  ``football_k(meta.tournament) / 40`` (eloratings.net's tournament weights, :mod:`sports_peers`).
* **atp_singles**: ``score`` = games won by each side, summed over the sets of ``meta.score`` (written from the
  winner's side, "6-4 3-6 6-1"; a tiebreak mark "7-6(5)" counts the set's games, 7 and 6; a match tiebreak
  "[10-7]" played instead of a deciding set counts as a set won 1-0).  A match that did not finish (``RET``,
  ``W/O``, ``DEF``, ``ABD``, "Played and abandoned") or whose score does not parse ("UNK", "6-36-3", "6-6?")
  gets no scores: a retirement's partial score is *dropped*, not kept (it measures how far the match had
  gone, not by how much the winner was better).  No advantage.
* **chess_worldcup**: ``advantage`` ``[1, 0]`` in every game (White is listed first).  No scores.
* **riichi_mahjong**: ``score`` = ``meta.scores`` (points), four players.  No advantage.

Ranks must not contradict the scores (``podium.Matches`` refuses a team ranked behind one it outscored): where
the real data do (a tennis player can win the match with fewer games than the loser), that match's scores are
dropped and the drops counted and printed.

Part 1, **intl_football**, the last 30 % held out (file order): the published systems of
``benchmarks/sports_peers.py`` (eloratings.net with K 40 and with tournament K; FiveThirtyEight's NFL and NBA Elo)
against podium's Elo, PairwiseElo, PlackettLuce, TrueSkill, Glicko2 and Thurstone, each fitted by
``podium.fit(cls, history)`` (its default parameters, on the first 70 %) on the history (a) with the order only,
(b) with scores and home advantage, (c) with these and the tournament weights.  The peers' pair log loss and pair
error are computed from their pre-match probabilities over exactly the pairs ``podium.evaluate`` scores (the
decided held-out matches: draws are left out), checked pair by pair.  A consistency row runs podium's
``Elo(k=40, advantage=100, margin="eloratings")`` on (b), which must give the eloratings.net K 40 row's figures,
and the same on (c) against the tournament-K row (podium's match weight multiplies the step, K = 40 x K/40).

Part 2, **atp_singles**, **chess_worldcup**, **riichi_mahjong**: each podium model (Elo, or PairwiseElo on the
four-player mahjong, PlackettLuce, TrueSkill, Glicko2, Thurstone) fitted without and with the information, the
held-out pair log loss and pair error and the difference (with - without) with its standard error (pairs
clustered by match: ``podium.Report.difference``'s formula).  A model that cannot rate a history is skipped with
the reason.  A fit whose default budget (``podium.fit``'s ``max_evaluations``) would take longer than
``--fit-budget`` seconds (120: one replay of the search, timed from ``podium.fit`` with 0 and 2 evaluations,
times that budget) is given fewer evaluations (at least 12), and the output says so; each fit runs in a forked
process, killed and reported as a timeout after four times the budget.

Figures are printed, never asserted (except the consistency check, which is printed as agreeing or not).  Run
``.venv/bin/python benchmarks/sports.py`` (a few minutes on two cores, most of it ``atp_singles`` and numba's
compilation); ``--quick`` runs only the intl_football rows of the peers and podium's Elo (a smoke check, seconds);
``--datasets`` and ``--models`` restrict the run.  Without ``../shared/data`` it says so and stops.
"""

from __future__ import annotations

import os as _os

_os.environ.setdefault("PODIUM_JIT", "compiled")  # the compiled speed: warm-up calls compile, timed ones do not

import argparse
import math
import multiprocessing
import re
import subprocess
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import podium

sys.path.insert(0, str(Path(__file__).resolve().parent))  # sports_peers.py, run as a script or imported
from sports_peers import eloratings, fivethirtyeight, football_k  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
SPLIT = 0.7
FIT_BUDGET = 120.0      # seconds a fit may take: above, fewer evaluations (and the output says so)
MIN_EVALUATIONS = 12    # the fewest replays a fit is ever given
FIT_LIMIT = 4.0         # x the fit budget: a probe and fit still running then is killed and reported
LEVEL = 1e-5            # a difference in pair log loss this small is "level", neither better nor worse
DATASETS = ("intl_football", "atp_singles", "chess_worldcup", "riichi_mahjong")
MODELS: dict[str, type] = {
    "Elo": podium.Elo, "PairwiseElo": podium.PairwiseElo, "PlackettLuce": podium.PlackettLuce,
    "TrueSkill": podium.TrueSkill, "Glicko2": podium.Glicko2, "Thurstone": podium.Thurstone,
}


# ---------------------------------------------------------------------------------------------------------------
# converters: meta -> the optional columns
# ---------------------------------------------------------------------------------------------------------------
@dataclass
class Converted:
    """A history with the new columns, and what the conversion counted (printed as is)."""

    matches: podium.Matches
    counts: dict[str, int] = field(default_factory=dict)


def load(name: str, data: Path = DATA) -> podium.Matches:
    """``podium.read_matches`` of a shared history, malformed records skipped (atp_singles has three)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return podium.read_matches(data / name / "matches.jsonl.gz", errors="skip")


def rebuild(m: podium.Matches, **extras: Any) -> podium.Matches:
    """The same history built anew by the ``Matches`` constructor (validated) with the optional columns given;
    without any, the history of the order alone."""
    return podium.Matches(m.match_start, m.team_start, m.team_rank, m.player, m.weight, m.time, m.players, m.ids,
                          m.meta, time_is_date=m.time_is_date, has_weights=m.has_weights, **extras)


def bare(m: podium.Matches) -> podium.Matches:
    """The history without scores, advantages or match weights (what podium saw before issue 31)."""
    return rebuild(m)


def contradicting(m: podium.Matches, score: np.ndarray, higher_is_better: np.ndarray | None = None) -> np.ndarray:
    """Per match: whether a team ranked strictly behind another has a strictly better score (both known; NaN
    scores and non-finishers say nothing), the check ``podium.Matches`` makes.  Equal scores may be ranked apart."""
    n = len(m)
    ms, rank = m.match_start, m.team_rank
    sign = np.ones(n) if higher_is_better is None else np.where(higher_is_better, 1.0, -1.0)
    per = np.diff(ms)
    bad = np.zeros(n, dtype=bool)
    duels = np.flatnonzero(per == 2)
    a, b = ms[duels], ms[duels] + 1
    sa, sb = sign[duels] * score[a], sign[duels] * score[b]
    known = (rank[a] >= 0) & (rank[b] >= 0)
    bad[duels] = known & (((sa > sb) & (rank[a] > rank[b])) | ((sb > sa) & (rank[b] > rank[a])))
    for j in np.flatnonzero(per > 2).tolist():
        t0, t1 = int(ms[j]), int(ms[j + 1])
        s, r = sign[j] * score[t0:t1], rank[t0:t1]
        ok = ~np.isnan(s) & (r >= 0)
        s, r = s[ok], r[ok]
        bad[j] = bool(np.any((s[:, None] > s[None, :]) & (r[:, None] > r[None, :])))
    return bad


def _drop_contradictions(m: podium.Matches, score: np.ndarray, counts: dict[str, int]) -> np.ndarray:
    """``score`` with the scores of every match whose ranks contradict them set to NaN (counted)."""
    bad = contradicting(m, score)
    counts["scores dropped: ranks contradict them"] = int(bad.sum())
    out = score.copy()
    out[np.repeat(bad, np.diff(m.match_start))] = np.nan
    return out


def _metas(m: podium.Matches) -> list[dict[str, Any]]:
    return [x or {} for x in m.meta] if m.meta is not None else [{} for _ in range(len(m))]


def intl_football(m: podium.Matches, *, weights: bool = False) -> Converted:
    """Goals as scores, the home side's advantage, and (``weights=True``) eloratings.net's tournament weight
    ``football_k(tournament) / 40`` as the match weight."""
    counts: Counter[str] = Counter()
    n_teams = len(m.team_rank)
    score = np.full(n_teams, np.nan)
    advantage = np.zeros(n_teams)
    match_weight = np.ones(len(m))
    for j, meta in enumerate(_metas(m)):
        t0 = int(m.match_start[j])
        goals = meta.get("score")
        if m.match_start[j + 1] - t0 == 2 and isinstance(goals, list) and len(goals) == 2 \
                and all(isinstance(g, (int, float)) for g in goals):
            score[t0:t0 + 2] = goals
        else:
            counts["no scores: meta.score missing or not two numbers"] += 1
        neutral = meta.get("neutral")
        if neutral == "FALSE":
            advantage[t0] = 1.0
            counts["first team at home (advantage [1, 0])"] += 1
        elif neutral != "TRUE":
            counts["meta.neutral missing: taken as neutral"] += 1
        match_weight[j] = football_k(str(meta.get("tournament", ""))) / 40.0
    if weights:
        for k, c in sorted(Counter(match_weight.tolist()).items()):
            counts[f"match weight {k:g} (K {40 * k:g})"] = c
    score = _drop_contradictions(m, score, counts)
    return Converted(rebuild(m, score=score, advantage=advantage, match_weight=match_weight if weights else None),
                     dict(counts))


_SET = re.compile(r"(\d+)-(\d+)(?:\(\d+\))?")     # "6-4", "7-6(5)": the set's games
_MATCH_TIEBREAK = re.compile(r"\[(\d+)-(\d+)\]")   # "[10-7]": a match tiebreak instead of a deciding set
_UNFINISHED = (("RET", "retired"), ("W/O", "walkover"), ("WO", "walkover"), ("DEF", "default"),
               ("ABD", "abandoned"), ("ABANDONED", "abandoned"))


def tennis_games(text: Any) -> tuple[float, float] | str:
    """Games won by (winner, loser) from a score written from the winner's side, or why there are none.

    ``"6-4 3-6 7-6(5)"`` -> ``(16, 16)``; a match tiebreak ``"[10-7]"`` counts as a set won 1-0.  ``"retired"``,
    ``"walkover"``, ``"default"``, ``"abandoned"`` for a match that did not finish (its partial score dropped),
    ``"unparseable"`` otherwise ("UNK", "6-36-3", "6-6?"), ``"empty"`` for no score.
    """
    if not isinstance(text, str) or not text.strip():
        return "empty"
    tokens = text.split()
    for token in tokens:
        upper = token.upper().rstrip(".")
        for mark, reason in _UNFINISHED:
            if upper == mark or (mark == "RET" and upper.startswith("RET")):
                return reason
    won = lost = 0.0
    for token in tokens:
        if s := _SET.fullmatch(token):
            won, lost = won + int(s.group(1)), lost + int(s.group(2))
        elif t := _MATCH_TIEBREAK.fullmatch(token):
            a, b = int(t.group(1)), int(t.group(2))
            if a == b:
                return "unparseable"
            won, lost = won + (a > b), lost + (b > a)
        else:
            return "unparseable"
    return won, lost


def atp_singles(m: podium.Matches) -> Converted:
    """Games won by each player as scores (see :func:`tennis_games`); no advantage."""
    counts: Counter[str] = Counter()
    score = np.full(len(m.team_rank), np.nan)
    for j, meta in enumerate(_metas(m)):
        t0 = int(m.match_start[j])
        games = tennis_games(meta.get("score"))
        if isinstance(games, str):
            counts[f"no scores: {games}"] += 1
            continue
        r0, r1 = int(m.team_rank[t0]), int(m.team_rank[t0 + 1])
        if r0 == r1 or min(r0, r1) < 0:
            counts["no scores: no winner in the ranks"] += 1
            continue
        winner = t0 if (r0 < r1) else t0 + 1  # meta.score is from the winner's side
        score[winner], score[2 * t0 + 1 - winner] = games
    score = _drop_contradictions(m, score, counts)
    counts["scores kept"] = int(np.count_nonzero(~np.isnan(score[m.match_start[:-1]])))
    return Converted(rebuild(m, score=score), dict(counts))


def chess_worldcup(m: podium.Matches) -> Converted:
    """White's advantage, ``[1, 0]`` in every game (White listed first); no scores."""
    advantage = np.zeros(len(m.team_rank))
    advantage[m.match_start[:-1]] = 1.0
    return Converted(rebuild(m, advantage=advantage), {"games with White's advantage [1, 0]": len(m)})


def riichi_mahjong(m: podium.Matches) -> Converted:
    """Each player's points as scores; no advantage."""
    counts: Counter[str] = Counter()
    score = np.full(len(m.team_rank), np.nan)
    for j, meta in enumerate(_metas(m)):
        t0, t1 = int(m.match_start[j]), int(m.match_start[j + 1])
        points = meta.get("scores")
        if isinstance(points, list) and len(points) == t1 - t0:
            score[t0:t1] = [np.nan if p is None else float(p) for p in points]
        else:
            counts["no scores: meta.scores missing or of the wrong length"] += 1
    score = _drop_contradictions(m, score, counts)
    return Converted(rebuild(m, score=score), dict(counts))


CONVERTERS: dict[str, Callable[[podium.Matches], Converted]] = {
    "atp_singles": atp_singles, "chess_worldcup": chess_worldcup, "riichi_mahjong": riichi_mahjong,
}
INFORMATION = {"atp_singles": "games won", "chess_worldcup": "White's advantage", "riichi_mahjong": "points"}


# ---------------------------------------------------------------------------------------------------------------
# fitting and scoring
# ---------------------------------------------------------------------------------------------------------------
@dataclass
class Row:
    """One model on one history: held-out figures, per-pair values, fitted parameters, notes."""

    label: str
    loss: float = math.nan
    error: float = math.nan
    pairs: int = 0
    loss_values: np.ndarray | None = None    # per counted pair, in history order
    error_values: np.ndarray | None = None
    params: dict[str, float] = field(default_factory=dict)
    seconds: float = math.nan
    evaluations: int = 0                     # replays of the fit's search
    note: str = ""
    skipped: str = ""                        # why the model did not run


def decided_pairs(m: podium.Matches, start: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The pairs ``podium.evaluate`` scores from match ``start`` on, in its order (by match, then team ``a < b``):
    each pair's match, first and second team, and whether the first finished ahead.  Decided: different ranks, or
    a finisher and a non-finisher."""
    ms, rank = m.match_start, m.team_rank
    match, first, second = [], [], []
    per = np.diff(ms)
    for size in np.unique(per[start:]).tolist():
        ii, jj = np.triu_indices(size, 1)
        which = np.flatnonzero(per == size)
        which = which[which >= start]
        match.append(np.repeat(which, len(ii)))
        first.append((ms[which][:, None] + ii[None, :]).ravel())
        second.append((ms[which][:, None] + jj[None, :]).ravel())
    match_a, a, b = (np.concatenate(x) if x else np.zeros(0, np.int64) for x in (match, first, second))
    order = np.lexsort((b, a, match_a))
    match_a, a, b = match_a[order], a[order], b[order]
    ra, rb = rank[a], rank[b]
    decided = (ra != rb) & ((ra >= 0) | (rb >= 0))
    ahead = (ra >= 0) & ((rb < 0) | (ra < rb))
    return match_a[decided], a[decided], b[decided], ahead[decided]


def paired_difference(x: np.ndarray | None, y: np.ndarray | None, cluster: np.ndarray) -> tuple[float, float]:
    """``mean(x - y)`` over the same pairs and its standard error with pairs clustered by match (the formula of
    ``podium.Report.difference``)."""
    if x is None or y is None:
        raise ValueError("no per-pair values: the row did not run")
    per = np.asarray(x, float) - np.asarray(y, float)
    _, inverse, counts = np.unique(cluster, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=per)
    n, k = float(len(per)), len(sums)
    if n == 0:
        return math.nan, math.nan
    d = float(per.sum()) / n
    d = 0.0 if abs(d) < 1e-15 else d  # the same predictions: no "-0.00000"
    if k < 2:
        return d, math.nan
    return d, math.sqrt(k / (k - 1) * float(np.sum((sums - counts * d) ** 2))) / n


def from_report(label: str, report: Any, name: str) -> Row:
    return Row(label, loss=float(report[name]["pair_log_loss"]), error=float(report[name]["pair_error"]),
               pairs=int(report.pairs), loss_values=report.pair_values(name, "pair_log_loss"),
               error_values=report.pair_values(name, "pair_error"))


def from_probabilities(label: str, p_match: np.ndarray, pair_match: np.ndarray, ahead: np.ndarray) -> Row:
    """A peer's row from its probability that the first team finishes ahead in each match (two-team matches:
    one pair each), scored exactly as ``podium.evaluate`` scores a pair."""
    p = np.asarray(p_match, float)[pair_match]
    p_win = np.where(ahead, p, 1.0 - p)
    loss = -np.log(p_win)
    error = (p_win < 0.5) + 0.5 * (p_win == 0.5)
    return Row(label, loss=float(loss.mean()), error=float(error.mean()), pairs=len(p), loss_values=loss,
               error_values=error.astype(float))


def default_names(cls: type, m: podium.Matches) -> list[str]:
    """The parameters ``podium.fit(cls, m)`` chooses by default (those this history can inform)."""
    model = cls()
    return [n for n in cls._fit_default if model._fit_informed(n, m)]  # type: ignore[attr-defined]


def timed_replay(cls: type, m: podium.Matches, budget: float) -> float:
    """About the seconds one replay of ``podium.fit(cls, m)``'s search costs: ``podium.fit`` with
    ``max_evaluations=0`` (the start's replay and the held-out scoring: an upper bound) and, only when that bound
    says the default budget might not fit in ``budget`` seconds, ``podium.fit`` with 2 less that, over 2.  After a
    fit of the first few hundred matches, which compiles; raises what the model raises on this history."""
    probe = min(len(m), 300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        podium.fit(cls, m[:probe], max_evaluations=0)
        began = time.perf_counter()
        podium.fit(cls, m, split=SPLIT, max_evaluations=0)
        zero = time.perf_counter() - began
        if zero * most_evaluations(cls, m) <= budget:
            return zero
        began = time.perf_counter()
        podium.fit(cls, m, split=SPLIT, max_evaluations=2)
        two = time.perf_counter() - began
    return max((two - zero) / 2.0, zero / 20.0)


def most_evaluations(cls: type, m: podium.Matches) -> int:
    """``podium.fit``'s default ``max_evaluations`` for the parameters it fits by default on ``m``."""
    names = default_names(cls, m)
    return 40 if len(names) == 1 else 80 * len(names)


def fit_row(label: str, cls: type, m: podium.Matches, budget: float) -> Row:
    """:func:`fit_row_here` in a forked process, killed after ``FIT_LIMIT x budget`` seconds (a model whose replays
    have become very slow on a history must not stop the benchmark)."""
    limit = FIT_LIMIT * budget
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)

    def target() -> None:
        try:
            send.send(fit_row_here(label, cls, m, budget))
        except BaseException as e:  # reported, not raised
            send.send(Row(label, skipped="raised " + _reason(e)))

    began = time.perf_counter()
    process = ctx.Process(target=target, daemon=True)
    process.start()
    row = receive.recv() if receive.poll(limit) else None
    process.kill()
    process.join()
    if row is None:
        return Row(label, skipped=f"timeout: the probe and the fit took over {limit:.0f} s (killed)",
                   seconds=time.perf_counter() - began)
    return row


def fit_row_here(label: str, cls: type, m: podium.Matches, budget: float) -> Row:
    """``podium.fit(cls, m)`` at its default parameters (fewer evaluations if the default would exceed
    ``budget`` seconds), scored on the held-out part by the fit's own ``podium.evaluate``."""
    cut = int(round(SPLIT * len(m)))
    try:
        replay = timed_replay(cls, m, budget)
    except Exception as e:  # the model cannot rate this history
        return Row(label, skipped=_reason(e))
    default = most_evaluations(cls, m)
    max_evaluations, note = None, ""
    if replay * default > budget:
        max_evaluations = max(MIN_EVALUATIONS, int(budget / replay))
        note = (f"max_evaluations {max_evaluations} instead of {default} (one replay ~{replay:.2f} s: "
                f"the default would take ~{replay * default / 60:.1f} min)")
    began = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", podium.ConvergenceWarning)
            result = podium.fit(cls, m, split=SPLIT, max_evaluations=max_evaluations)
    except Exception as e:
        return Row(label, skipped="fit raised " + _reason(e))
    assert result.split == cut, (result.split, cut)
    row = from_report(label, result.report, cls.__name__)
    row.params, row.seconds, row.note = dict(result.params), time.perf_counter() - began, note
    row.evaluations = result.evaluations
    if not row.note and result.evaluations >= default:
        row.note = f"used its whole budget ({result.evaluations} replays)"
    return row


def _reason(e: BaseException) -> str:
    """An exception as one line of a table: its name and the start of its message."""
    return f"{type(e).__name__}: {' '.join(str(e).split())[:160]}"


def fmt_params(params: dict[str, float]) -> str:
    short = {"provisional": "prov", "advantage": "adv", "margin_power": "mpow", "draw_probability": "draw",
             "margin_autocorrelation": "mauto"}
    return ", ".join(f"{short.get(k, k)} {v:.3g}" for k, v in params.items())


def markdown(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(header)]
    print("| " + " | ".join(str(h).ljust(w) for h, w in zip(header, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print("| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |", flush=True)


def _bold(text: str, best: bool) -> str:
    return f"**{text}**" if best else text


def _print_counts(title: str, counts: dict[str, int]) -> None:
    print(f"  {title}: " + ("; ".join(f"{k}: {v:,}" for k, v in counts.items()) if counts else "nothing to count"))


# ---------------------------------------------------------------------------------------------------------------
# part 1: international football against the published systems
# ---------------------------------------------------------------------------------------------------------------
def football(data: Path, models: Sequence[str], budget: float, quick: bool) -> None:
    raw = load("intl_football", data)
    n = len(raw)
    cut = int(round(SPLIT * n))
    plain = bare(raw)
    scored = intl_football(raw)
    weighted = intl_football(raw, weights=True)
    print(f"\n## intl_football: {n:,} matches, {len(raw.players)} teams; fitted on the first {cut:,}, "
          f"scored on the last {n - cut:,} (30 %, file order)")
    _print_counts("converter (scores, home)", scored.counts)
    _print_counts("converter (+ weights)", {k: v for k, v in weighted.counts.items() if k.startswith("match weight")})

    pair_match, a, _, ahead = decided_pairs(plain, cut)
    ms = raw.match_start[:-1]
    first = [raw.players[p] for p in raw.player[raw.team_start[ms]]]
    second = [raw.players[p] for p in raw.player[raw.team_start[ms + 1]]]
    metas = _metas(raw)
    goals = np.array([x["score"] for x in metas], dtype=float)
    home = [x.get("neutral") == "FALSE" for x in metas]
    tournament_k = [football_k(str(x.get("tournament", ""))) for x in metas]
    g1, g2 = goals[:, 0].tolist(), goals[:, 1].tolist()
    assert np.array_equal(a, raw.match_start[pair_match]), "two-team matches: one pair each, the first team first"

    def peer(label: str, p_first: np.ndarray) -> Row:
        return from_probabilities(label, p_first, pair_match, ahead)

    peers = [
        peer("eloratings.net, K 40 (home 100, goal index)", eloratings(first, second, g1, g2, home, 40.0)),
        peer("eloratings.net, tournament K", eloratings(first, second, g1, g2, home, tournament_k)),
        peer("538 NFL Elo (K 20, home 65)", fivethirtyeight(first, second, g1, g2, home, sport="nfl")),
        peer("538 NBA Elo (K 20, home 100)", fivethirtyeight(first, second, g1, g2, home, sport="nba")),
    ]

    # consistency: podium's Elo with eloratings.net's constants must reproduce the peer, pair by pair
    checks = []
    elo_40 = "podium Elo(k=40, advantage=100, margin='eloratings')"
    for label, history, twin in ((f"{elo_40}, (b): = K 40 row", scored.matches, peers[0]),
                                 (f"{elo_40}, (c): = tournament-K row", weighted.matches, peers[1])):
        name = "check"
        report = podium.evaluate(history, {name: podium.Elo(k=40.0, advantage=100.0, margin="eloratings")},
                                 start=cut)
        row = from_report(label, report, name)
        p_podium, won = report.pair_predictions(name)
        assert twin.loss_values is not None
        p_twin = np.exp(-twin.loss_values)  # P(actual winner)
        p_twin_first = np.where(ahead, p_twin, 1.0 - p_twin)
        same_pairs = row.pairs == twin.pairs and np.array_equal(won, ahead)
        gap = float(np.max(np.abs(p_podium - p_twin_first))) if same_pairs else math.inf
        agree = same_pairs and gap < 1e-9 and abs(row.loss - twin.loss) < 1e-9 and abs(row.error - twin.error) < 1e-12
        row.note = (f"{'AGREES' if agree else 'DISAGREES'} with the peer: same {row.pairs:,} pairs "
                    f"{'yes' if same_pairs else 'NO'}, max |dp| {gap:.1e}")
        checks.append(row)

    variants = {"(a) order only": plain, "(b) + scores, home": scored.matches,
                "(c) + scores, home, tournament weight": weighted.matches}
    fitted: list[Row] = []
    chosen = ["Elo"] if quick else [x for x in models if x in MODELS]
    for model in chosen:
        for variant, history in variants.items():
            row = fit_row(f"{model} fitted, {variant}", MODELS[model], history, budget)
            fitted.append(row)
            status = row.skipped or f"log loss {row.loss:.4f}, error {row.error:.4f}, {row.seconds:.0f} s"
            print(f"  ... {row.label}: {status}", flush=True)
    if not quick:  # podium's Elo with the published margin tables (k, provisional, advantage fitted)
        for margin in ("eloratings", "fivethirtyeight"):
            for variant in ("(b) + scores, home", "(c) + scores, home, tournament weight"):
                row = fit_margin_row(f"Elo(margin='{margin}') fitted, {variant}", margin, variants[variant], budget)
                fitted.append(row)
                print(f"  ... {row.label}: {row.skipped or f'log loss {row.loss:.4f}'}", flush=True)

    rows = [r for r in peers + fitted if not r.skipped]
    for r in rows:
        assert r.pairs == peers[0].pairs, (r.label, r.pairs, peers[0].pairs)
    best_loss = min(r.loss for r in rows)
    best_error = min(r.error for r in rows)
    reference = min(peers[:2], key=lambda r: r.loss)  # eloratings.net's better row, by log loss
    print(f"\n{peers[0].pairs:,} decided pairs scored (draws left out), the same for every row; "
          f"Δ = row − {reference.label} (se: pairs clustered by match); **bold** = best")
    table = []
    for r in peers + checks + fitted:
        if r.skipped:
            table.append([r.label, "—", "—", "", "", r.skipped])
            continue
        d_loss, se_loss = paired_difference(r.loss_values, reference.loss_values, pair_match)
        d_err, se_err = paired_difference(r.error_values, reference.error_values, pair_match)
        is_check = r in checks
        table.append([
            r.label, _bold(f"{r.loss:.4f}", not is_check and r.loss == best_loss),
            _bold(f"{r.error:.4f}", not is_check and r.error == best_error),
            f"{d_loss:+.5f} ± {se_loss:.5f}", f"{d_err:+.4f} ± {se_err:.4f}",
            "; ".join(x for x in (fmt_params(r.params), f"{r.seconds:.0f} s, {r.evaluations} replays"
                                  if r.evaluations else "", r.note) if x)])
    markdown(["system", "pair log loss", "pair error", "Δ log loss", "Δ error", "fitted params; fit time; notes"],
             table)

    elo_net = peers[:2]
    ours = [r for r in fitted if not r.skipped]
    if ours:
        best_ll = min(ours, key=lambda r: r.loss)
        best_er = min(ours, key=lambda r: r.error)
        net_ll = min(elo_net, key=lambda r: r.loss)
        net_er = min(elo_net, key=lambda r: r.error)
        both = best_ll.loss < net_ll.loss and best_er.error < net_er.error
        one_row = [r for r in ours if r.loss < net_ll.loss and r.error < net_er.error]
        print(f"\npodium's best vs eloratings.net's best: log loss {best_ll.loss:.4f} ({best_ll.label}) vs "
              f"{net_ll.loss:.4f} ({net_ll.label}); error {best_er.error:.4f} ({best_er.label}) vs {net_er.error:.4f} "
              f"({net_er.label})")
        print(f"podium's best beats eloratings.net's best in both metrics: {'YES' if both else 'NO'}"
              + (f"; one podium row beats both: {one_row[0].label}" if one_row else
                 "; no single podium row beats eloratings.net's best in both"))
    worse = []
    by_model: dict[str, dict[str, Row]] = {}
    for r in fitted:
        model, _, variant = r.label.partition(" fitted, ")
        by_model.setdefault(model, {})[variant[:3]] = r
    for model, got in by_model.items():  # (b) and (c) against (a), (c) against (b): the same model, fitted
        for key, base_key in (("(b)", "(a)"), ("(c)", "(a)"), ("(c)", "(b)")):
            richer, base = got.get(key), got.get(base_key)
            if richer is None or base is None or richer.skipped or base.skipped:
                continue
            d, se = paired_difference(richer.loss_values, base.loss_values, pair_match)
            if d > LEVEL:
                worse.append(f"{model} {key} − {base_key} {d:+.5f} ± {se:.5f}")
    d, se = paired_difference(peers[1].loss_values, peers[0].loss_values, pair_match)
    print(f"tournament K − K 40, eloratings.net: {d:+.5f} ± {se:.5f}")
    print("pair log loss worse with more information (same model, fitted; (b) or (c) − (a), (c) − (b)): "
          + (", ".join(worse) if worse else "none"))


def fit_margin_row(label: str, margin: str, m: podium.Matches, budget: float) -> Row:
    """``podium.fit`` of an ``Elo(margin=...)`` instance (its default parameters: ``margin_power`` only informs
    the "power" form)."""
    cut = int(round(SPLIT * len(m)))
    began = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", podium.ConvergenceWarning)
        result = podium.fit(podium.Elo(margin=margin), m, split=SPLIT)
    assert result.split == cut
    row = from_report(label, result.report, "Elo")
    row.params, row.seconds, row.evaluations = dict(result.params), time.perf_counter() - began, result.evaluations
    return row


# ---------------------------------------------------------------------------------------------------------------
# part 2: the other histories, without and with the information
# ---------------------------------------------------------------------------------------------------------------
def other(name: str, data: Path, models: Sequence[str], budget: float, skipped: list[str]
          ) -> list[tuple[str, str, float, float]]:
    raw = load(name, data)
    n = len(raw)
    cut = int(round(SPLIT * n))
    converted = CONVERTERS[name](raw)
    plain = bare(raw)
    print(f"\n## {name}: {n:,} matches, {len(raw.players):,} players, up to {int(raw.n_teams.max())} per match; "
          f"information: {INFORMATION[name]}; fitted on the first {cut:,}, scored on the last {n - cut:,}")
    _print_counts("converter", converted.counts)
    pair_match, *_ = decided_pairs(plain, cut)
    two = int(raw.n_teams.max()) == 2
    chosen = [x for x in models if x in MODELS and not (x == ("PairwiseElo" if two else "Elo"))]
    table: list[list[str]] = []
    summary: list[tuple[str, str, float, float]] = []
    for model in chosen:
        without = fit_row(model, MODELS[model], plain, budget)
        print(f"  ... {model}, order only: {without.skipped or f'{without.loss:.4f}, {without.seconds:.0f} s'}",
              flush=True)
        with_info = fit_row(model, MODELS[model], converted.matches, budget)
        print(f"  ... {model}, + {INFORMATION[name]}: "
              f"{with_info.skipped or f'{with_info.loss:.4f}, {with_info.seconds:.0f} s'}", flush=True)
        if without.skipped or with_info.skipped:
            cells = []
            for r in (without, with_info):
                cells += (["skipped", "—", "—"] if r.skipped else
                          [fmt_params(r.params), f"{r.loss:.4f}", f"{r.error:.4f}"])
            table.append([model, *cells, "", "", "; ".join(f"{tag}: {r.skipped}" for tag, r in
                                                            (("without", without), ("with", with_info)) if r.skipped)])
            skipped.append(f"{name} {model}")
            continue
        for r in (without, with_info):
            assert r.pairs == len(pair_match), (r.label, r.pairs, len(pair_match))
        d_loss, se_loss = paired_difference(with_info.loss_values, without.loss_values, pair_match)
        d_err, se_err = paired_difference(with_info.error_values, without.error_values, pair_match)
        summary.append((name, model, d_loss, se_loss))
        notes = "; ".join(f"{tag}: {r.note}" for tag, r in (("without", without), ("with", with_info)) if r.note)
        table.append([model, fmt_params(without.params), f"{without.loss:.4f}", f"{without.error:.4f}",
                      fmt_params(with_info.params), f"{with_info.loss:.4f}", f"{with_info.error:.4f}",
                      f"{d_loss:+.5f} ± {se_loss:.5f}", f"{d_err:+.4f} ± {se_err:.4f}",
                      "; ".join(x for x in (f"{without.seconds:.0f} s + {with_info.seconds:.0f} s, "
                                            f"{without.evaluations} + {with_info.evaluations} replays", notes) if x)])
    print(f"\n{len(pair_match):,} decided pairs scored; Δ = with − without (negative: the information helps; "
          f"se: pairs clustered by match)")
    markdown(["model", "params, order only", "log loss", "error", f"params, + {INFORMATION[name]}", "log loss",
              "error", "Δ log loss", "Δ error", "fit time; notes"], table)
    return summary


# ---------------------------------------------------------------------------------------------------------------
def _revision() -> str:
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "src"], capture_output=True,
                               text=True, check=True).stdout.strip()
        return head + (" with uncommitted changes in src/" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the shared histories (default ../shared/data)")
    parser.add_argument("--datasets", help=f"comma-separated, among {', '.join(DATASETS)} (default: all)")
    parser.add_argument("--models", help=f"comma-separated, among {', '.join(MODELS)} (default: all)")
    parser.add_argument("--fit-budget", type=float, default=FIT_BUDGET,
                        help="seconds a fit may take before it is given fewer evaluations (default %(default)s)")
    parser.add_argument("--quick", action="store_true", help="only intl_football: the peers and podium's Elo")
    args = parser.parse_args()
    names = list(DATASETS) if not args.datasets else [s.strip() for s in args.datasets.split(",") if s.strip()]
    models = list(MODELS) if not args.models else [s.strip() for s in args.models.split(",") if s.strip()]
    for bad, allowed, what in ((set(names) - set(DATASETS), DATASETS, "data set"), (set(models) - set(MODELS), MODELS,
                                                                                     "model")):
        if bad:
            parser.error(f"unknown {what} {sorted(bad)}; choose among {list(allowed)}")
    if args.quick:
        names = ["intl_football"]
    missing = [x for x in names if not (args.data / x / "matches.jsonl.gz").exists()]
    if not args.data.exists() or len(missing) == len(names):
        print(f"{args.data} is not here (or holds none of {names}): nothing to measure")
        return
    print(f"podium {podium.__version__} at {_revision()}; split {SPLIT}; fit budget {args.fit_budget:g} s"
          + ("; --quick: intl_football, Elo only" if args.quick else ""))
    began = time.perf_counter()
    summary: list[tuple[str, str, float, float]] = []
    skipped: list[str] = []  # part 2 cells left out (a side that raised or timed out)
    for name in names:
        if name in missing:
            print(f"\n## {name}: {args.data / name} is not here: left out")
            continue
        if name == "intl_football":
            football(args.data, models, args.fit_budget, args.quick)
        else:
            summary += other(name, args.data, models, args.fit_budget, skipped)
    if summary:
        d = np.array([x[2] for x in summary])
        worse = [x for x in summary if x[2] > LEVEL]
        print(f"\nPart 2 over {len(summary)} model × history cells: median Δ pair log loss {np.median(d):+.5f} "
              f"(with − without); better in {int(np.sum(d < -LEVEL))}, level (|Δ| <= {LEVEL:g}) in "
              f"{int(np.sum(np.abs(d) <= LEVEL))}, worse in {len(worse)}"
              + (": " + ", ".join(f"{a} {b} {c:+.5f} ± {e:.5f}" for a, b, c, e in worse) if worse else ""))
    if skipped:
        print(f"Part 2 cells without a difference (a side skipped: see its table): {', '.join(skipped)}")
    print(f"\n{(time.perf_counter() - began) / 60:.1f} min")


if __name__ == "__main__":
    main()
