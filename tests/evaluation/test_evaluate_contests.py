"""The Elo-MMR paper's contest metrics (``podium.evaluation.contests``): pair inversion and rank deviation.

The reference is EbTech/Elo-MMR's ``multi-skill/src/metrics.rs`` (commit d250f9ee: ``pairwise_metric``,
``percentile_distance_metric``) with ``systems/mod.rs``'s ``get_participant_ratings`` (who counts) and
``experiment_config.rs``'s ``Experiment::eval`` (metrics before the round is rated).  ``brute_round`` below writes
those definitions out pair by pair, ``O(n^2)``, and everything fast is checked against it.
"""

from __future__ import annotations

import json
import math
import time
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import podium
from podium import Match
from podium.evaluation.prequential import CONTEST_METRICS
from podium.evaluation.contests import round_metrics

from ..strategies import a_match
from ..shared import SHARED as DATA



# -- the definitions, pair by pair ------------------------------------------------------------------------------
def brute_round(x: Sequence[float], ranks: Sequence[int | None]) -> tuple[float, float, int] | None:
    """``(sum of pair-inversion shares, sum of rank deviations, n)`` of one round's field, or None when the round
    has no order (fewer than two, or one group).  Non-finishers share the last places as one group."""
    n = len(x)
    key = [math.inf if r is None else r for r in ranks]
    if n < 2 or len(set(key)) < 2:
        return None
    lo = [sum(k < key[i] for k in key) for i in range(n)]
    hi = [lo[i] + sum(k == key[i] for k in key) - 1 for i in range(n)]
    shares = 0.0
    for i in range(n):
        # inverted: the one that finished strictly behind is rated strictly higher
        bad = sum(1 for j in range(n) if j != i and ((key[i] < key[j] and x[i] < x[j]) or (key[j] < key[i] and x[j] < x[i])))
        shares += (n - 1 - bad) / (n - 1)
    predicted = sorted(range(n), key=lambda i: (-x[i], lo[i], i))  # by rating, equal ratings in finishing order
    deviation = sum(max(0, lo[i] - place, place - hi[i]) for place, i in enumerate(predicted)) / (n - 1)
    return shares, deviation, n


def brute_history(matches: Sequence[Match], model: podium.PlackettLuce, start: int, min_rounds: int
                  ) -> tuple[float, float, int, int]:
    """``(pair_inversion, rank_deviation, rounds, contestants)`` by replaying ``model.rate`` match by match: a team's
    rating is ``sum w (mu - initial)`` (Plackett-Luce's team strength, up to a positive factor), and a team counts
    when every member played ``min_rounds`` earlier matches."""
    prior = model.prior
    ratings: dict[str, podium.Rating] = {}
    games: Counter[str] = Counter()
    correct = deviation = 0.0
    total = rounds = 0
    for i, match in enumerate(matches):
        before = {p: ratings[p] for p in match.players if p in ratings}
        if i >= start:
            weights = match.team_weights()
            keep = [t for t, team in enumerate(match.teams) if all(games[p] >= min_rounds for p in team)]
            x = [sum(w * (before.get(p, prior).mu - prior.mu) for p, w in zip(match.teams[t], weights[t])) for t in keep]
            got = brute_round(x, [match.ranks[t] for t in keep])
            if got is not None:
                correct, deviation, total, rounds = correct + got[0], deviation + got[1], total + got[2], rounds + 1
        ratings.update(model.rate(match, before))
        games.update(match.players)
    if total == 0:
        return math.nan, math.nan, 0, 0
    return correct / total, deviation / total, rounds, total


def close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


# -- one round ----------------------------------------------------------------------------------------------------
def test_a_perfect_predictor_scores_all_pairs_and_no_deviation() -> None:
    assert round_metrics([5.0, 4.0, 3.0, 2.0, 1.0], [0, 1, 2, 3, 4]) == (1.0, 0.0)
    # ties in place are never inversions, and any order within them is no deviation
    assert round_metrics([5.0, 3.0, 4.0, 1.0], [0, 1, 1, 2]) == (1.0, 0.0)


@pytest.mark.parametrize("n", [2, 3, 4, 7, 10])
def test_a_reversed_predictor_inverts_every_pair(n: int) -> None:
    """Every pair inverted: share 0.  Predicted place n-1-k for place k: sum |n-1-2k| is n^2/2 (even n) or
    (n^2-1)/2 (odd n), so the mean over n-1 is n/(2(n-1)) or (n+1)/(2n): 1 for two players, -> 1/2."""
    inversion, deviation = round_metrics(list(range(n)), list(range(n)))
    assert inversion == 0.0
    assert deviation == pytest.approx(n / (2 * (n - 1)) if n % 2 == 0 else (n + 1) / (2 * n))


def test_hand_checked_round() -> None:
    """Ratings 1, 3, 2 finishing 0, 1, 2: the winner is rated below both others (2 inversions), 1-2 is right.
    Shares 0/2, 1/2, 1/2 -> 1/3.  By rating the places are 1, 2, 0 against 0, 1, 2: distances 1+1+2 = 4, over
    n-1 = 2 and n = 3 -> 2/3."""
    inversion, deviation = round_metrics([1.0, 3.0, 2.0], [0, 1, 2])
    assert inversion == pytest.approx(1 / 3) and deviation == pytest.approx(2 / 3)


def test_equal_ratings_are_not_inversions() -> None:
    """metrics.rs merges with ``>=``: a pair rated equal is ordered correctly, whatever the finish, and the
    stable sort keeps equal ratings in finishing order (no deviation)."""
    assert round_metrics([1.0, 1.0, 1.0], [0, 1, 2]) == (1.0, 0.0)
    assert round_metrics([2.0, 2.0, 3.0], [0, 1, 2]) == pytest.approx((1 / 3, 2 / 3))


def test_non_finishers_share_the_last_places() -> None:
    """A finisher rated 1 ahead of two non-finishers rated 2 and 3: two inversions (shares 0, 1/2, 1/2 -> 1/3);
    the non-finishers' order is unknown, so their pair counts as correct.  By rating: the 3 at place 0 against
    its range [1, 2] (1), the 2 at 1 (0), the finisher at 2 against 0 (2): 3 / 2 / 3 = 1/2."""
    assert round_metrics([1.0, 2.0, 3.0], [0, None, None]) == pytest.approx((1 / 3, 1 / 2))
    assert round_metrics([3.0, 2.0, 1.0], [0, None, None]) == (1.0, 0.0)


def test_a_round_without_an_order_is_nan() -> None:
    for ratings, ranks in (([1.0], [0]), ([1.0, 2.0], [0, 0]), ([1.0, 2.0, 3.0], [None, None, None]), ([], [])):
        inversion, deviation = round_metrics(ratings, ranks)
        assert math.isnan(inversion) and math.isnan(deviation)


def test_round_metrics_names_bad_input() -> None:
    with pytest.raises(ValueError, match="'ranks' must have one entry per rating"):
        round_metrics([1.0, 2.0], [0])
    with pytest.raises(ValueError, match="'ratings' must be finite"):
        round_metrics([1.0, math.nan], [0, 1])
    with pytest.raises(ValueError, match=r"'ranks' must hold ints >= 0 or None. Got -1"):
        round_metrics([1.0, 2.0], [0, -1])
    with pytest.raises(ValueError, match=r"'ranks' must hold ints >= 0 or None. Got 0.5"):
        round_metrics([1.0, 2.0], [0, 0.5])  # type: ignore[list-item]


@settings(max_examples=300)
@given(st.data())
def test_round_metrics_match_the_pairwise_definitions(data: st.DataObject) -> None:
    """Random rounds with ties in place and in rating (ratings from a few values) and non-finishers."""
    n = data.draw(st.integers(0, 40))
    values = data.draw(st.integers(1, 6))
    x = data.draw(st.lists(st.integers(0, values).map(float), min_size=n, max_size=n))
    ranks = data.draw(st.lists(st.none() | st.integers(0, max(n // 2, 1)), min_size=n, max_size=n))
    got = round_metrics(x, ranks)
    expected = brute_round(x, ranks)
    if expected is None:
        assert math.isnan(got[0]) and math.isnan(got[1])
    else:
        shares, deviation, count = expected
        assert got == pytest.approx((shares / count, deviation / count), rel=1e-12, abs=1e-12)


def test_a_field_of_a_million_is_fast() -> None:
    """O(n log n): a million contestants with heavy ties in a few seconds (pairwise, 5e11 pairs, it would not end)."""
    rng = np.random.default_rng(1)
    n = 1_000_000
    skill = rng.normal(size=n)
    ranks = np.argsort(np.argsort(-(skill + rng.normal(size=n)))) // 50  # tie groups of 50
    round_metrics(skill[:10], [int(r) for r in ranks[:10]])  # compile first
    began = time.perf_counter()
    inversion, deviation = round_metrics(skill, [int(r) for r in ranks])
    assert time.perf_counter() - began < 20.0
    assert 0.6 < inversion < 0.9 and 0.05 < deviation < 0.3  # a noisy but informative ordering


# -- whole histories through podium.evaluate ------------------------------------------------------------------------
@st.composite
def a_history(draw: Any) -> list[Match]:
    """Matches among a small pool, so that players come back: teams, draws, non-finishers, partial play."""
    pool = [f"p{i}" for i in range(draw(st.integers(4, 9)))]
    history = draw(st.lists(a_match(pool=pool), min_size=1, max_size=14))
    # weights of at least 1/20: subnormal weights (5e-324) make Plackett-Luce's replay divide by zero, a model
    # matter that is not these metrics'
    return [Match(m.teams, m.ranks, None if m.weights is None else [[max(w, 0.05) for w in ws] for ws in m.weights])
            for m in history]


@settings(max_examples=60)
@given(a_history(), st.integers(0, 3), st.integers(0, 4))
def test_evaluate_matches_the_definitions_on_random_histories(history: list[Match], min_rounds: int, start: int) -> None:
    start = min(start, len(history))
    model = podium.PlackettLuce()
    report = podium.evaluate(history, {"pl": model}, min_rounds=min_rounds, start=start)
    inversion, deviation, rounds, contestants = brute_history(history, model, start, min_rounds)
    assert (report.rounds, report.contestants) == (rounds, contestants)
    assert close(report["pl"]["pair_inversion"], inversion)
    assert close(report["pl"]["rank_deviation"], deviation)


class Fixed:
    """A rater that never learns: each player's rating is a fixed skill (teams: the sum); Bradley-Terry pairs."""

    def __init__(self, skill: Mapping[str, float]) -> None:
        self.skill = skill

    def rate(self, match: Match, ratings: Mapping[str, Any]) -> dict[str, float]:
        return {p: self.skill[p] for p in match.players}

    def win_probabilities(self, teams: Sequence[Sequence[str]], ratings: Mapping[str, Any],
                          weights: Any = None) -> list[float]:
        a, b = (sum(self.skill[p] for p in team) for team in teams)
        p = 1.0 / (1.0 + math.exp(b - a))
        return [p, 1.0 - p]


def test_min_rounds_counts_earlier_rounds_only() -> None:
    """Five rounds of a, b, c (a finishes first, rated lowest), then a round with the newcomer d, then d again.
    With min_rounds=5 the first five rounds count nobody (0..4 earlier rounds), round 6 counts a, b, c and not d
    (0 earlier), round 7 again a, b, c (d has 1).  With the fixed skills a=1 < b=2 < c=3 and the finish a, b, c,
    d, every counted round is the reversed 3-field: share 0, deviation (n+1)/(2n) = 2/3."""
    skill = {"a": 1.0, "b": 2.0, "c": 3.0, "d": 10.0}
    history = [Match.ffa(["a", "b", "c"]) for _ in range(5)] + [Match.ffa(["a", "b", "c", "d"])] * 2
    report = podium.evaluate(history, {"fixed": Fixed(skill)}, min_rounds=5)
    assert (report.rounds, report.contestants, report.min_rounds) == (2, 6, 5)
    assert report["fixed"]["pair_inversion"] == 0.0
    assert report["fixed"]["rank_deviation"] == pytest.approx(2 / 3)
    # min_rounds=0: all seven rounds, d (rated highest, finished last) in the last two
    everyone = podium.evaluate(history, {"fixed": Fixed(skill)}, min_rounds=0)
    assert (everyone.rounds, everyone.contestants) == (7, 5 * 3 + 2 * 4)
    assert everyone["fixed"]["pair_inversion"] == 0.0
    # start=6 scores only the last round
    late = podium.evaluate(history, {"fixed": Fixed(skill)}, min_rounds=5, start=6)
    assert (late.rounds, late.contestants) == (1, 3)


def test_teams_count_when_every_member_has_the_rounds() -> None:
    """Teams are contestants, rated by the model's team strength.  After two duels of x and y, the 2 v 1 v 1
    match [x, new] / [y] / [z] counts only [y] with min_rounds=1 (x's partner and z are new): one contestant,
    no order, no round; with min_rounds=0 all three teams count."""
    history = [Match([["x"], ["y"]]), Match([["y"], ["x"]]), Match([["x", "new"], ["y"], ["z"]])]
    one = podium.evaluate(history, {"pl": podium.PlackettLuce()}, min_rounds=1)
    assert (one.rounds, one.contestants) == (1, 2)  # only the second duel: x and y, each with one earlier match
    zero = podium.evaluate(history, {"pl": podium.PlackettLuce()}, min_rounds=0)
    assert (zero.rounds, zero.contestants) == (3, 2 + 2 + 3)
    inversion, deviation, _, _ = brute_history(history, podium.PlackettLuce(), 0, 0)
    assert zero["pl"]["pair_inversion"] == pytest.approx(inversion) and zero["pl"]["rank_deviation"] == pytest.approx(deviation)


def test_a_rater_is_ordered_by_its_predicted_chances() -> None:
    """A rater without ratings: its teams ordered by mean predicted probability of finishing ahead; with fixed
    distinct skills that is the skills' order, so a finish in skill order is perfect."""
    skill = {f"p{i}": float(i) for i in range(6)}
    history = [Match.ffa([f"p{i}" for i in range(5, -1, -1)])] * 3
    report = podium.evaluate(history, {"fixed": Fixed(skill)}, min_rounds=0)
    assert report["fixed"]["pair_inversion"] == 1.0 and report["fixed"]["rank_deviation"] == 0.0


def test_the_report_carries_the_contest_metrics() -> None:
    sim = podium.simulate(40, 300, seed=3, teams=6)
    report = podium.evaluate(sim.matches, {"pl": podium.PlackettLuce(), "ts": podium.TrueSkill(),
                                           "smooth": podium.TrueSkillThroughTime()}, min_rounds=2)
    for name in ("pl", "ts"):
        assert 0.5 < report[name]["pair_inversion"] <= 1.0 and 0.0 <= report[name]["rank_deviation"] < 0.5
    assert all(math.isnan(report["smooth"][m]) for m in CONTEST_METRICS)  # no rating before a match
    data = report.to_dict()
    assert (data["min_rounds"], data["rounds"], data["contestants"]) == (2, report.rounds, report.contestants)
    assert data["models"]["pl"]["pair_inversion"] == report["pl"]["pair_inversion"]
    assert data["models"]["smooth"]["rank_deviation"] is None
    text = str(report)
    assert "pair inv. %" in text and "with ≥ 2 earlier matches" in " ".join(text.split()) and f"{100 * report['pl']['pair_inversion']:.2f}" in text
    pd = pytest.importorskip("pandas")
    frame = report.to_frame()
    assert isinstance(frame, pd.DataFrame) and frame.loc["ts", "rank_deviation"] == report["ts"]["rank_deviation"]


def test_difference_of_contest_metrics() -> None:
    """The difference is of the means; its standard error clusters the contestants by round and is 0 against
    itself."""
    sim = podium.simulate(60, 200, seed=5, teams=8)
    report = podium.evaluate(sim.matches, {"pl": podium.PlackettLuce(), "ts": podium.TrueSkill()}, min_rounds=1)
    for metric in CONTEST_METRICS:
        d, se = report.difference("pl", "ts", metric)
        assert d == pytest.approx(report["pl"][metric] - report["ts"][metric], abs=1e-12)
        assert 0.0 < se < 0.1
        assert report.difference("pl", "pl", metric) == (0.0, 0.0)
    with pytest.raises(ValueError, match="'metric' must be one of"):
        report.difference("pl", "ts", "rank_inversion")


def test_min_rounds_is_checked() -> None:
    for bad in (-1, 1.5, True, "5"):
        with pytest.raises(ValueError, match=f"'min_rounds' must be an int >= 0. Got {bad!r}"):
            podium.evaluate([Match.ffa(["a", "b"])], {"pl": podium.PlackettLuce()}, min_rounds=bad)  # type: ignore[arg-type]


# -- the real thing: Codeforces rounds 1-150 ------------------------------------------------------------------------
def codeforces() -> podium.Matches:
    path = DATA / "codeforces_early" / "matches.jsonl.gz"
    if not path.exists():
        pytest.skip(f"{path} is not present (the real data sets live in ../shared/data)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return podium.read_matches(path)


def test_codeforces_early_against_the_definitions() -> None:
    """Plackett-Luce (the victory order, the default when the figures below were taken) on Codeforces rounds 1-150, rounds after the first 15 (the reference's
    ``num_rounds_postpone_eval``), contestants with 5 earlier rounds: evaluate's figures equal the pairwise
    definitions applied to ``model.rate`` replayed round by round (numpy, O(n^2) a round)."""
    matches = codeforces()
    model = podium.PlackettLuce(order="victory")
    report = podium.evaluate(matches, {"pl": model}, start=15, min_rounds=5)
    ratings: dict[str, podium.Rating] = {}
    games: Counter[str] = Counter()
    correct = deviation = 0.0
    total = rounds = 0
    for i, match in enumerate(matches):
        before = {p: ratings[p] for p in match.players if p in ratings}
        if i >= 15:
            keep = [t for t, team in enumerate(match.teams) if games[team[0]] >= 5]
            x = np.array([before[match.teams[t][0]].mu for t in keep])
            key = np.array([math.inf if match.ranks[t] is None else match.ranks[t] for t in keep])
            n = len(x)
            if n >= 2 and len(np.unique(key)) >= 2:
                ahead = key[:, None] < key[None, :]
                inverted = ahead & (x[:, None] < x[None, :])
                bad = inverted.sum(axis=1) + inverted.sum(axis=0)
                correct += float(np.sum((n - 1 - bad) / (n - 1)))
                lo = (key[None, :] < key[:, None]).sum(axis=1)
                hi = lo + (key[None, :] == key[:, None]).sum(axis=1) - 1
                order = np.lexsort((lo, -x))
                place = np.empty(n, dtype=np.int64)
                place[order] = np.arange(n)
                deviation += float(np.sum(np.maximum(0, np.maximum(lo - place, place - hi)))) / (n - 1)
                total += n
                rounds += 1
        ratings.update(model.rate(match, before))
        games.update(match.players)
    assert (report.rounds, report.contestants) == (rounds, total)
    assert report["pl"]["pair_inversion"] == pytest.approx(correct / total, rel=1e-12)
    assert report["pl"]["rank_deviation"] == pytest.approx(deviation / total, rel=1e-12)
    # The figures themselves (podium at commit 42ccd3a, equal to the pairwise sums above), to set beside the
    # Elo-MMR paper's table: 71.45 % of pairs ordered correctly, 19.58 % mean rank deviation, over 45,703
    # contestants with 5 earlier rounds in the 135 rounds after the first 15.
    assert (report.rounds, report.contestants) == (135, 45_703)
    assert report["pl"]["pair_inversion"] == pytest.approx(0.7144898774372338, rel=1e-9)
    assert report["pl"]["rank_deviation"] == pytest.approx(0.1958078555756532, rel=1e-9)


# -- the command line -----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ffa_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("contests") / "ffa.jsonl"
    podium.write_matches(podium.simulate(30, 120, teams=6, seed=7).matches, path)
    return path


def test_cli_evaluate_shows_the_contest_metrics(ffa_file: Path) -> None:
    """``podium evaluate --start --min-rounds``: the table's two percent columns and the JSON equal the library's."""
    from typer.testing import CliRunner

    from podium.cli import app

    runner = CliRunner()
    args = ["evaluate", str(ffa_file), "--model", "plackett-luce", "--start", "20", "--min-rounds", "3"]
    report = podium.evaluate(podium.read_matches(ffa_file), {"plackett-luce": podium.PlackettLuce()}, start=20,
                             min_rounds=3)
    table = runner.invoke(app, args)
    assert table.exit_code == 0, table.output
    row = next(line for line in table.output.splitlines() if line.startswith("│ plackett-luce"))
    cells = [c.strip() for c in row.strip("│").split("│")]
    assert cells[5:7] == [f"{100 * report['plackett-luce'][m]:.2f}" for m in CONTEST_METRICS]
    assert "matches 21-120 of 120" in table.output
    assert f"over {report.contestants:,} contestants with ≥ 3 earlier matches in {report.rounds:,} rounds" in " ".join(
        table.output.split())
    data = json.loads(runner.invoke(app, [*args, "--json"]).stdout)
    assert (data["start"], data["min_rounds"], data["rounds"], data["contestants"]) == (
        20, 3, report.rounds, report.contestants)
    for m in CONTEST_METRICS:
        assert data["models"]["plackett-luce"][m] == report["plackett-luce"][m]


@pytest.mark.parametrize(("option", "value"), [("--min-rounds", "-1"), ("--start", "-1"), ("--start", "121")])
def test_cli_evaluate_names_a_bad_option(ffa_file: Path, option: str, value: str) -> None:
    from typer.testing import CliRunner

    from podium.cli import app

    result = CliRunner().invoke(app, ["evaluate", str(ffa_file), "--model", "plackett-luce", option, value])
    assert result.exit_code != 0 and option in result.output and value in result.output
    assert "Traceback" not in result.output
