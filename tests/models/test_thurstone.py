"""The Gaussian multiplayer Elo, :class:`podium.Thurstone`.

References: the ordering gradient of :func:`podium.ordering.log_order` (itself checked against mpmath,
closed forms and finite differences in test_ordering.py) times ``k``; the two-player Gaussian Elo with the
gradient update (an independent closed-form implementation); the brief's 6-digit reference gradient
0.846284 for three equal players; symmetry (permuting teams); sign facts (a non-finisher is below every
finisher, so its likelihood can only grow by lowering it).
"""

from __future__ import annotations

import csv
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import podium
from podium import Match, Rating, Thurstone
from podium.cli import app
from podium.ordering import log_order
from ..shared import SHARED as DATA

G3 = 0.846284  # d log P / d m_1 for three equal unit Gaussians finishing 1 > 2 > 3 (brief; mpmath in test_ordering)


def test_three_player_ffa_moves_by_the_ordering_gradient() -> None:
    model = Thurstone(scale=1.0, initial=0.0, k=1.0)
    new = model.rate(Match.ffa(["a", "b", "c"]), {})
    _, gm, _ = log_order([0.0, 0.0, 0.0], gradient=True)
    moves = [new[p].mu for p in "abc"]
    np.testing.assert_allclose(moves, gm, rtol=0, atol=1e-12)
    np.testing.assert_allclose(moves, [G3, 0.0, -G3], rtol=0, atol=1e-6)
    assert all(new[p].sigma == 0.0 for p in "abc")


def test_k_scale_and_knots() -> None:
    # the model's convention: k rating points per unit of natural-units gradient, whatever the scale
    new = Thurstone(k=32.0).rate(Match.ffa(["a", "b", "c"]), {})
    np.testing.assert_allclose([new[p].mu - 1500.0 for p in "abc"], [32 * G3, 0.0, -32 * G3], atol=32e-6)
    # knots (-1, 2), (1, 1): k(0) = 1.5 by linear interpolation
    new = Thurstone(scale=1.0, initial=0.0, k=[(-1.0, 2.0), (1.0, 1.0)]).rate(Match.ffa(["a", "b", "c"]), {})
    np.testing.assert_allclose([new[p].mu for p in "abc"], [1.5 * G3, 0.0, -1.5 * G3], atol=1.5e-6)
    # beyond the ends k is constant: at rating 5 (k = 1) and -5 (k = 2)
    start = {"a": Rating(5.0), "b": Rating(5.0), "c": Rating(5.0)}
    new = Thurstone(scale=1.0, k=[(-1.0, 2.0), (1.0, 1.0)]).rate(Match.ffa(["a", "b", "c"]), start)
    assert new["a"].mu - 5.0 == pytest.approx(G3, abs=1e-6)
    start = {p: Rating(-5.0) for p in "abc"}
    new = Thurstone(scale=1.0, k=[(-1.0, 2.0), (1.0, 1.0)]).rate(Match.ffa(["a", "b", "c"]), start)
    assert new["a"].mu + 5.0 == pytest.approx(2 * G3, abs=2e-6)


def test_floor_is_respected() -> None:
    model = Thurstone(scale=1.0, initial=0.0, k=1.0, floor=-0.5)
    new = model.rate(Match.ffa(["a", "b", "c"]), {})
    assert new["c"].mu == -0.5           # would be -0.846 without the floor
    assert new["a"].mu == pytest.approx(G3, abs=1e-6)
    league = podium.League(model).record_many([Match.ffa(["a", "b", "c"])] * 30)
    assert min(r.mu for r in league.ratings.values()) >= -0.5


@pytest.mark.parametrize("n_teams", [2, 3])
def test_team_members_move_by_k_w_gradient(n_teams: int) -> None:
    teams = [["a", "b"], ["c"], ["d", "e"]][:n_teams]
    weights = [[1.0, 0.5], [0.8], [1.0, 1.0]][:n_teams]
    ratings = {"a": Rating(0.3), "b": Rating(-0.2), "c": Rating(0.1), "d": Rating(0.0), "e": Rating(0.4)}
    ranks = [1, 0, 2][:n_teams]
    k = 0.7
    new = Thurstone(scale=1.0, initial=0.0, k=k).rate(Match(teams, ranks=ranks, weights=weights), ratings)
    # team strength: loc = sum w r, scale = sqrt(sum w^2)
    loc = [sum(w * ratings[p].mu for p, w in zip(t, ws)) for t, ws in zip(teams, weights)]
    sc = [math.sqrt(sum(w * w for w in ws)) for ws in weights]
    _, gm, _ = log_order(loc, sc, ranks, gradient=True)
    for t, ws, g in zip(teams, weights, gm):
        for p, w in zip(t, ws):
            assert new[p].mu - ratings[p].mu == pytest.approx(k * w * g, rel=1e-9, abs=1e-12)
    if n_teams == 2:  # closed form: d/dm_0 log Phi(d/sd) = phi/Phi/sd, team 1 won
        sd = math.hypot(*sc)
        z = (loc[1] - loc[0]) / sd
        mills = math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi) / (0.5 * math.erfc(-z / math.sqrt(2)))
        assert new["c"].mu - 0.1 == pytest.approx(k * 0.8 * mills / sd, rel=1e-9)


def random_two_player_history(seed: int, n: int = 120) -> list[Match]:
    rng = np.random.default_rng(seed)
    players = [f"p{i}" for i in range(6)]
    out = []
    for _ in range(n):
        a, b = rng.choice(len(players), 2, replace=False)
        u = rng.uniform()
        ranks = [0, 0] if u < 0.2 else ([0, 1] if u < 0.6 else [1, 0])
        out.append(Match([[players[a]], [players[b]]], ranks=ranks))
    return out


@pytest.mark.parametrize("k, initial, scale", [(32.0, 1500.0, 400.0 / math.log(10.0)), (0.4, 0.0, 1.0)])
def test_two_players_is_gaussian_elo(k: float, initial: float, scale: float) -> None:
    matches = random_two_player_history(3)
    assert any(m.ranks[0] == m.ranks[1] for m in matches)  # includes draws
    t = podium.League(Thurstone(k=k, initial=initial, scale=scale)).record_many(matches)
    e = podium.League(podium.Elo(k=k, initial=initial, scale=scale, performance="gaussian",
                                 update="gradient")).record_many(matches)
    for p in e.players:
        assert t.rating(p).mu == pytest.approx(e.rating(p).mu, rel=0, abs=1e-9 * max(1.0, abs(initial)))
    np.testing.assert_allclose(t.log_likelihoods, e.log_likelihoods, rtol=0, atol=1e-9)


def test_log_likelihood_is_log_order_of_team_strengths_and_league_agrees() -> None:
    model = Thurstone(scale=100.0, k=20.0, initial=0.0)
    rng = np.random.default_rng(9)
    players = [f"p{i}" for i in range(8)]
    matches = []
    for _ in range(25):
        n = int(rng.integers(3, 6))
        chosen = list(rng.choice(players, n, replace=False))
        ranks: list[int | None] = [int(r) for r in rng.permutation(n)]
        if rng.uniform() < 0.5:
            ranks[int(rng.integers(n))] = None
        if rng.uniform() < 0.3:
            ranks[0] = ranks[1] if ranks[1] is not None else 0
        matches.append(Match([[p] for p in chosen], ranks=ranks))
    ratings: dict[str, Rating] = {}
    per_match = []
    for match in matches:
        ll = model.log_likelihood(match, ratings)
        loc = [ratings.get(t[0], Rating(0.0)).mu / 100.0 for t in match.teams]
        assert ll == pytest.approx(log_order(loc, None, list(match.ranks)), rel=1e-12, abs=1e-12)
        per_match.append(ll)
        ratings.update(model.rate(match, ratings))
    league = podium.League(model).record_many(matches)
    np.testing.assert_allclose(league.log_likelihoods, per_match, rtol=1e-12, atol=1e-12)
    for p, r in ratings.items():
        assert league.rating(p).mu == pytest.approx(r.mu, abs=1e-9)


def test_win_probabilities_are_rank_probabilities_column_zero() -> None:
    model = Thurstone()
    ratings = {"a": Rating(1600.0), "b": Rating(1450.0), "c": Rating(1500.0), "d": Rating(1720.0)}
    teams = [["a"], ["b", "c"], ["d"]]
    weights = [[1.0], [0.6, 0.6], [1.0]]
    w = model.win_probabilities(teams, ratings, weights=weights)
    p = model.rank_probabilities(teams, ratings, weights=weights)
    assert w.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(p[:, 0], w, rtol=0, atol=1e-9)
    np.testing.assert_allclose(p.sum(axis=0), 1.0, atol=1e-9)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-9)
    # P(team wins) = exp(log_order with the others non-finishers): the winner above all, unordered below
    loc = [100.0 / model.scale, 0.6 * (-50.0 + 0.0) / model.scale, 220.0 / model.scale]  # from initial 1500
    sc = [1.0, math.sqrt(0.72), 1.0]
    for i in range(3):
        rank = [None] * 3
        rank[i] = 0
        assert w[i] == pytest.approx(math.exp(log_order(loc, sc, rank)), abs=1e-9)


@pytest.mark.parametrize("kwargs, name", [
    ({"k": -1.0}, "'k'"),
    ({"k": [(1.0, 2.0), (0.0, 1.0)]}, "'k'"),
    ({"density": "cauchy"}, "density"),
    ({"scale": 0.0}, "scale"),
    ({"floor": float("nan")}, "floor"),
])
def test_bad_parameters_raise(kwargs: dict[str, object], name: str) -> None:
    with pytest.raises(ValueError, match=name):
        Thurstone(**kwargs)  # type: ignore[arg-type]


def test_permuting_the_teams_gives_the_same_ratings() -> None:
    rng = np.random.default_rng(4)
    model = Thurstone(k=24.0)
    ratings = {f"p{i}": Rating(float(1500 + 150 * rng.standard_normal())) for i in range(7)}
    teams = [["p0", "p1"], ["p2"], ["p3", "p4"], ["p5"], ["p6"]]
    weights = [[1.0, 0.7], [1.0], [0.5, 1.0], [1.0], [0.9]]
    ranks = [2, 0, None, 1, 2]
    base = model.rate(Match(teams, ranks=ranks, weights=weights), ratings)
    for _ in range(4):
        perm = rng.permutation(len(teams))
        new = model.rate(Match([teams[i] for i in perm], ranks=[ranks[i] for i in perm],
                               weights=[weights[i] for i in perm]), ratings)
        for p in base:
            assert new[p].mu == pytest.approx(base[p].mu, abs=1e-9)


def test_a_non_finisher_never_gains() -> None:
    rng = np.random.default_rng(77)
    model = Thurstone(k=32.0)
    for _ in range(200):
        n = int(rng.integers(2, 7))
        names = [f"p{i}" for i in range(n)]
        ratings = {p: Rating(float(1500 + 300 * rng.standard_normal())) for p in names}
        ranks: list[int | None] = [int(r) for r in rng.integers(0, n, n)]
        out = rng.uniform(size=n) < 0.4
        out[int(rng.integers(n))] = False  # at least one finisher
        ranks = [None if o else r for o, r in zip(out, ranks)]
        new = model.rate(Match([[p] for p in names], ranks=ranks), ratings)
        for p, r in zip(names, ranks):
            assert math.isfinite(new[p].mu)
            if r is None:
                assert new[p].mu <= ratings[p].mu


def test_real_data_racetime_maprando() -> None:
    path = DATA / "racetime_maprando" / "matches.jsonl.gz"
    if not path.exists():
        pytest.skip(f"{path} is not present")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        matches = podium.read_matches(path, errors="skip")
    league = podium.League(Thurstone()).record_many(matches)
    ll = league.log_likelihoods
    assert len(ll) == len(matches)
    assert np.all(np.isfinite(ll))
    assert all(math.isfinite(r.mu) for r in league.ratings.values())
    half = len(ll) // 2
    # uniform-order baseline: log P of each match under equal ratings (log_order with all m = 0)
    blank = np.array([Thurstone().log_likelihood(m, {}) for m in matches[half:]])
    print(f"racetime_maprando: {len(ll)} matches, mean log-likelihood second half {ll[half:].mean():.4f}, "
          f"equal ratings {blank.mean():.4f}")


def test_cli_rate_with_thurstone(tmp_path: Path) -> None:
    runner = CliRunner()
    history = tmp_path / "season.jsonl"
    result = runner.invoke(app, ["simulate", "--players", "20", "--matches", "200", "--teams", "4", "--seed", "3",
                                 "--out", str(history)])
    assert result.exit_code == 0, result.output
    out = tmp_path / "ratings.csv"
    result = runner.invoke(app, ["rate", str(history), "--model", "thurstone", "--set", "k=16", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "Thurstone(" in result.output and "k=16" in result.output
    with open(out) as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 20
    mus = [float(r["mu"]) for r in rows]
    assert all(math.isfinite(v) for v in mus) and mus == sorted(mus, reverse=True)
    bad = tmp_path / "h.jsonl"
    bad.write_text(json.dumps({"teams": [["a"], ["b"], ["c"]]}) + "\n")
    result = runner.invoke(app, ["rate", str(bad), "--model", "thurstone", "--set", "k=-3"])
    assert result.exit_code != 0 and "'k' parameter" in result.output


def test_provisional_steps_fall_with_games_played() -> None:
    # Player i's step is k(r) (1 + provisional / (n_i + 1)) after n_i matches: a League's replay by hand.
    model, plain = Thurstone(k=30.0, provisional=2.0), Thurstone(k=30.0)
    matches = [Match.ffa(["a", "b", "c"]), Match([["a"], ["b"]], ranks=[1, 0]), Match([["a", "c"], ["b"]])]
    league = podium.League(model).record_many(matches)
    ratings: dict[str, Rating] = {}
    games: dict[str, int] = {}
    for match in matches:
        before = {p: ratings.get(p, model.prior) for p in match.players}
        step = plain.rate(match, before)
        for p in match.players:
            factor = 1.0 + 2.0 / (games.get(p, 0) + 1.0)
            ratings[p] = Rating(before[p].mu + factor * (step[p].mu - before[p].mu))
            games[p] = games.get(p, 0) + 1
    for p, r in ratings.items():
        assert league.rating(p).mu == pytest.approx(r.mu, rel=1e-13)
