"""podium.fit, simulate(skill_drift), TrueSkill's O(n) match quality and ordering.log_win_pair.

* fit recovers the hyperparameters a history was simulated with (tolerances measured over many seeds, see
  the comments), never reads the held-out part, and reports scores consistent with podium.evaluate;
* simulate's random walk has the documented variance and leaves the drift-free history unchanged;
* TrueSkill.quality equals the matrix formula it documents and the trueskill package;
* log_win_pair equals closed forms, mpmath and quadratures.

"""

from __future__ import annotations

import hashlib
import importlib
import itertools
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import mpmath as mp
import numpy as np
import pytest
import trueskill
from numpy.typing import NDArray
from scipy import integrate, stats

import podium
from podium import Elo, Matches, Rating, Thurstone, TrueSkill
from podium.kernels.trueskill import log_match_quality
from podium.ordering import log_win_pair
from podium.ordering.densities import GAUSSIAN, GUMBEL, LOGISTIC, SKEW_NORMAL

fit_module = importlib.import_module("podium.evaluation.fit")  # the module (``podium.fit`` is the function)


def with_ranks(matches: Matches, team_rank: NDArray[np.int64]) -> Matches:
    """The same history with other ranks."""
    return Matches(matches.match_start, matches.team_start, team_rank, matches.player, matches.weight,
                   matches.time, matches.players, matches.ids, has_weights=matches.has_weights)


def train_metric(model: Any, matches: Matches, cut: int, metric: str, min_games: int = 0) -> float:
    """The metric of ``model`` on the first ``cut`` matches, by podium.evaluate."""
    return podium.evaluate(matches[:cut], {"m": model}, min_games=min_games)["m"][metric]


# -- 1. recovering the simulated hyperparameters ---------------------------------------------------------------
# podium.simulate: skills N(0, S^2), performance noise sd 1, each player's skill moves by N(0, D^2) before
# each of their matches.  With TrueSkill(mu=0, sigma=S) fixed, that is TrueSkill's own model with beta = 1 and
# tau = D (and, with draws, the same draw margin: simulate's eps = sqrt(2) Phi^-1((1 + p) / 2) for two
# one-player teams is TrueSkill's with beta = 1).
#
# Tolerances, from fits of 300 players / 30,000 matches (21,000 training), params=["beta", "tau"]:
#   S=1,   D=0.05, seeds 0-19: beta 0.929..1.137, tau/D 0.80..1.23
#   S=1,   D=0.08, seeds 0-19: beta 0.921..1.143, tau/D 0.85..1.21
#   S=1,   D=0.1,  seeds 0-19: beta 0.928..1.134, tau/D 0.87..1.21
#   S=0.5, D=0.05, seeds 0-9:  beta 0.900..1.103, tau/D 0.78..1.19
#   S=2,   D=0.05, seeds 0-9:  beta 0.960..1.121, tau/D 0.83..1.15
#   (1000 players / 150,000 matches, 4 seeds: beta 0.95..1.07, tau/D 0.93..1.09: no sign of a bias.)
# Starting from the defaults (beta 25/6, tau 25/300), from (0.25, 0.5) or from (4, 0.005) gives the same
# fit to +-0.005 (the search converges; the spread is the data's).  So beta within 15% of 1 (sd of the fits
# about 0.055: 2.7 sd) and tau within a factor 1.4 of D (sd of log(tau/D) about 0.11: 3 sd).  Neither start
# passes these by itself: beta 25/6 is 4.2x the truth, tau 25/300 is 1.67 D, 0.5 is 10 D.
BETA_REL = 0.15
TAU_FACTOR = 1.4
S_DRIFT = 0.05


@pytest.mark.parametrize(("skill_sd", "seed"), [(1.0, 0), (1.0, 1), (1.0, 2), (2.0, 3)])
@pytest.mark.parametrize("start", [{}, {"beta": 0.25, "tau": 0.5}], ids=["default-start", "far-start"])
def test_fit_recovers_trueskill_beta_and_tau(skill_sd: float, seed: int, start: dict[str, Any]) -> None:
    sim = podium.simulate(300, 30_000, skill_sd=skill_sd, skill_drift=S_DRIFT, seed=seed)
    base = TrueSkill(mu=0.0, sigma=skill_sd, draw_probability=0.0, **start)
    result = podium.fit(base, sim.matches, params=["beta", "tau"])
    assert result.params["beta"] == pytest.approx(1.0, rel=BETA_REL)
    assert 1 / TAU_FACTOR < result.params["tau"] / S_DRIFT < TAU_FACTOR
    kept = result.model.get_params()
    assert kept["sigma"] == skill_sd and kept["mu"] == 0.0 and kept["draw_probability"] == 0.0


def test_fit_by_log_likelihood_recovers_the_draw_probability_too() -> None:
    # Draws with p = 0.2; all three default params by the log-likelihood (the only metric that sees draws).
    # Seeds 0-19: beta 0.936..1.128, tau/D 0.82..1.24, draw_probability 0.1944..0.2074.
    for seed in (0, 1):
        sim = podium.simulate(300, 30_000, skill_sd=1.0, skill_drift=S_DRIFT, draw_probability=0.2, seed=seed)
        result = podium.fit(TrueSkill(mu=0.0, sigma=1.0), sim.matches, metric="log_likelihood")
        assert set(result.params) == {"beta", "tau", "draw_probability"}
        assert result.params["beta"] == pytest.approx(1.0, rel=BETA_REL)
        assert 1 / TAU_FACTOR < result.params["tau"] / S_DRIFT < TAU_FACTOR
        assert result.params["draw_probability"] == pytest.approx(0.2, abs=0.02)  # start 0.10


def test_pair_log_loss_and_log_likelihood_agree_on_two_player_matches_without_draws() -> None:
    # One decided pair per match: the match log-likelihood is log p of the winner, so the two objectives are
    # the same function and the searches take the same path.
    sim = podium.simulate(200, 8_000, skill_drift=S_DRIFT, seed=4)
    base = TrueSkill(mu=0.0, sigma=1.0, draw_probability=0.0)
    by_loss = podium.fit(base, sim.matches, params=["beta", "tau"])
    by_lik = podium.fit(base, sim.matches, params=["beta", "tau"], metric="log_likelihood")
    assert by_lik.train_score == pytest.approx(-by_loss.train_score, rel=1e-12)
    assert by_lik.params == pytest.approx(by_loss.params, rel=1e-9)
    assert by_lik.score == pytest.approx(-by_loss.score, rel=1e-12)


@pytest.mark.parametrize("cls", [Elo, Thurstone])
def test_fitted_k_is_a_minimum_of_the_training_loss(cls: type) -> None:
    sim = podium.simulate(300, 30_000, skill_drift=S_DRIFT, seed=0)
    result = podium.fit(cls, sim.matches, params=["k"])  # one parameter: bounded Brent
    k = result.params["k"]
    assert math.isfinite(k) and k > 0
    at_k = train_metric(cls(k=k), sim.matches, result.split, "pair_log_loss")
    assert at_k == result.train_score
    # Measured (Elo): k/10 0.606, k/2 0.534, k 0.524, 2k 0.536, 10k 0.840.  Brent stops at 1e-3 in log k, so
    # +-5% (a loss about 1e-4 higher) must already be worse.
    for factor in (0.1, 0.95, 1.05, 10.0):
        assert train_metric(cls(k=k * factor), sim.matches, result.split, "pair_log_loss") > at_k


# -- 2. the held-out part is never read ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def history() -> Matches:
    return podium.simulate(200, 6_000, skill_drift=S_DRIFT, seed=21).matches


def test_held_out_outcomes_do_not_change_the_fit(history: Matches) -> None:
    cut = round(0.7 * len(history))
    first_held_team = int(history.match_start[cut])
    reversed_ranks = history.team_rank.copy()
    reversed_ranks[first_held_team:] = 1 - reversed_ranks[first_held_team:]          # every result upset
    random_ranks = history.team_rank.copy()
    coin = np.random.default_rng(0).integers(0, 2, size=len(history) - cut)
    random_ranks[first_held_team::2], random_ranks[first_held_team + 1::2] = coin, 1 - coin
    variants = [history, with_ranks(history, reversed_ranks), with_ranks(history, random_ranks)]
    for model, params in ((TrueSkill(mu=0.0, sigma=1.0, draw_probability=0.0), ["beta", "tau"]), (Elo(), ["k"])):
        fits = [podium.fit(model, m, params=params) for m in variants]
        for other in fits[1:]:
            assert other.split == fits[0].split == cut
            assert other.params == fits[0].params
            assert other.train_score == fits[0].train_score
            assert other.evaluations == fits[0].evaluations
        # ... while the held-out scores see the outcomes: the upsets cost far more than the real results
        # (measured: TrueSkill 0.55 / 1.1 / 0.71, Elo 0.55 / 0.83 / 0.70 for real / upsets / coin flips).
        assert fits[1].score > fits[0].score + 0.2
        assert fits[2].score > fits[0].score + 0.05
        assert fits[0].score < math.log(2) < fits[1].score


def test_held_out_players_and_matches_do_not_change_the_fit(history: Matches) -> None:
    # Replace the held-out part by an unrelated season of other players (same length, so the same cut):
    # the player list and the arrays beyond the cut differ, the fit must not.
    cut = round(0.7 * len(history))
    strangers = podium.simulate([f"q{i}" for i in range(50)], len(history) - cut, teams=3, seed=5).matches
    mixed = Matches.concat([history[:cut], strangers])
    assert len(mixed.players) == len(history.players) + 50
    model = TrueSkill(mu=0.0, sigma=1.0, draw_probability=0.0)
    a = podium.fit(model, history, params=["beta", "tau"])
    b = podium.fit(model, mixed, params=["beta", "tau"])
    assert (a.split, a.params, a.train_score) == (b.split, b.params, b.train_score)
    assert a.score != b.score


def test_the_search_only_replays_the_training_slice(history: Matches, monkeypatch: pytest.MonkeyPatch) -> None:
    # White-box: every objective evaluation goes through evaluate._score with fit's training structure; the
    # held-out part is only seen by the one podium.evaluate call after the search.
    cut = round(0.7 * len(history))
    seen: list[Matches] = []
    evaluate_calls: list[dict[str, Any]] = []
    real_score, real_evaluate = fit_module._score, fit_module.evaluate

    def spy_score(model: Any, s: Any, metric: str) -> float:
        seen.append(s.matches)
        return real_score(model, s, metric)

    def spy_evaluate(matches: Any, models: Any, **kw: Any) -> Any:
        evaluate_calls.append(kw)
        return real_evaluate(matches, models, **kw)

    monkeypatch.setattr(fit_module, "_score", spy_score)
    monkeypatch.setattr(fit_module, "evaluate", spy_evaluate)
    result = podium.fit(TrueSkill(mu=0.0, sigma=1.0, draw_probability=0.0), history, params=["beta", "tau"])
    assert len(seen) == result.evaluations + 1      # the search, then the start once more (fit keeps the better)
    teams_cut = int(history.match_start[cut])
    for m in seen:
        assert len(m) == cut
        np.testing.assert_array_equal(m.team_rank, history.team_rank[:teams_cut])
        np.testing.assert_array_equal(m.player, history.player[:int(history.team_start[teams_cut])])
    assert evaluate_calls == [{"min_games": 0, "start": cut}]


# -- 3. what the result reports ------------------------------------------------------------------------------
@pytest.mark.parametrize(("metric", "min_games", "split"), [
    ("pair_log_loss", 0, 0.7), ("log_likelihood", 3, 0.5), ("pair_error", 0, 0.33),
])
def test_result_is_consistent_with_evaluate(history: Matches, metric: str, min_games: int, split: float) -> None:
    base = TrueSkill(mu=0.0, sigma=2.0, draw_probability=0.0, tolerance=1e-7)
    result = podium.fit(base, history, params=["beta", "tau"], metric=metric, split=split, min_games=min_games)
    assert result.split == round(split * len(history))
    assert result.metric == metric
    held = podium.evaluate(history, {"m": result.model}, start=result.split, min_games=min_games)["m"]
    assert result.score == held[metric]
    assert result.report["TrueSkill"][metric] == held[metric]
    assert result.report.start == result.split
    assert result.train_score == train_metric(result.model, history, result.split, metric, min_games)
    start = train_metric(base, history, result.split, metric, min_games)
    # beta 25/6 is far from the optimum: the search must have found better (the log-likelihood is maximized)
    if metric == "log_likelihood":
        assert result.train_score > start
    else:
        assert result.train_score < start
    model, score = result
    assert model is result.model and score == result.score
    # the instance's other hyperparameters are kept
    kept = {k: v for k, v in base.get_params().items() if k not in ("beta", "tau")}
    assert {k: v for k, v in result.model.get_params().items() if k not in ("beta", "tau")} == kept
    assert result.params == {"beta": result.model.beta, "tau": result.model.tau}
    assert result.evaluations > 0 and result.seconds > 0


def test_fit_keeps_an_elo_instances_other_parameters(history: Matches) -> None:
    base = Elo(initial=1000.0, scale=100.0, k=5.0)
    result = podium.fit(base, history)
    assert set(result.params) == {"k", "provisional"}  # one-on-one games: the team spread is left out
    kept = result.model.get_params()
    assert {**kept, "k": 5.0, "provisional": 0.0} == base.get_params()   # initial 1000, scale 100, performance, update
    assert result.params["k"] != 5.0 and result.params["provisional"] > 0


def test_fit_falls_back_to_the_start_when_nothing_beats_it(history: Matches) -> None:
    optimum = podium.fit(Elo, history, params=["k"]).params["k"]
    base = Elo(k=optimum)
    # one golden-section step of the bounded search lands at k/14 or so, far worse: the start is returned
    result = podium.fit(base, history, params=["k"], max_evaluations=1)
    assert result.model is base
    assert result.params == {"k": optimum}
    assert result.train_score == train_metric(base, history, result.split, "pair_log_loss")


@pytest.mark.parametrize("max_evaluations", [0, 1])
def test_max_evaluations_bounds_the_search(history: Matches, max_evaluations: int) -> None:
    assert podium.fit(Elo, history, max_evaluations=max_evaluations).evaluations <= max_evaluations


def test_max_evaluations_bounds_the_nelder_mead_search(history: Matches) -> None:
    for n in (0, 1, 5):
        assert podium.fit(TrueSkill, history, max_evaluations=n).evaluations == n


# -- 4. validation -------------------------------------------------------------------------------------------
TS_NAMES = (r"\['beta', 'tau', 'sigma', 'draw_probability', 'drift', 'advantage', 'margin_scale', 'margin_noise', "
            r"'newcomer'\]")


@pytest.mark.parametrize(("kwargs", "pattern"), [
    ({"params": ["beta", "nope"]}, rf"TrueSkill cannot fit 'nope'; 'params' must be among {TS_NAMES}"),
    ({"params": "beta"}, rf"'params' must be a non-empty list of names among {TS_NAMES}. Got 'beta'"),
    ({"params": []}, r"'params' must be a non-empty list"),
    ({"params": ["tau", "beta", "tau"]}, r"'params' names a parameter twice"),
    ({"metric": "auc"}, r"'metric' must be one of \('pair_error', 'pair_log_loss', 'log_likelihood'\)"),
    ({"split": 0}, r"'split' must be a float in \(0, 1\). Got 0 "),
    ({"split": 1}, r"'split' must be a float in \(0, 1\). Got 1 "),
    ({"split": 1.5}, r"'split' must be a float in \(0, 1\)"),
    ({"split": -0.2}, r"'split' must be a float in \(0, 1\)"),
    ({"split": True}, r"'split' must be a float in \(0, 1\). Got True"),
    ({"split": float("nan")}, r"'split' must be a float in \(0, 1\)"),
    ({"split": "0.7"}, r"'split' must be a float in \(0, 1\)"),
    ({"max_evaluations": -1}, r"'max_evaluations' must be an int >= 0. Got -1"),
    ({"max_evaluations": 2.5}, r"'max_evaluations' must be an int >= 0"),
    ({"max_evaluations": True}, r"'max_evaluations' must be an int >= 0"),
    ({"min_games": -1}, r"'min_games' must be an int >= 0"),
])
def test_fit_validation(kwargs: dict[str, Any], pattern: str) -> None:
    matches = podium.simulate(10, 20, seed=1).matches
    with pytest.raises(ValueError, match=pattern):
        podium.fit(TrueSkill, matches, **kwargs)


def test_fit_lists_the_elo_parameters() -> None:
    matches = podium.simulate(10, 20, seed=1).matches
    with pytest.raises(ValueError, match=r"Elo cannot fit 'beta'; 'params' must be among \['k', 'spread', 'provisional', 'scale', 'advantage', "
                       r"'newcomer', 'margin_power', 'margin_autocorrelation'\]"):
        podium.fit(Elo, matches, params=["beta"])


@pytest.mark.parametrize("split", [0.8, 0.75, 0.2, 0.25])
def test_split_must_leave_training_and_held_out_matches(split: float) -> None:
    # two matches: round(split * 2) is 2 (0.8, and 0.75 = 1.5 rounds to even) or 0 (0.2, 0.25)
    matches = podium.simulate(4, 2, seed=1).matches
    with pytest.raises(ValueError, match=rf"'split' = {split} of 2 matches leaves no training or no held-out"):
        podium.fit(Elo, matches, split=split)
    assert podium.fit(Elo, matches, split=0.5).split == 1  # the one split that works


@pytest.mark.parametrize("model", ["TrueSkill", dict, trueskill.TrueSkill(), Rating(0.0, 1.0), None])
def test_fit_refuses_what_is_not_a_podium_model(model: Any) -> None:
    matches = podium.simulate(10, 20, seed=1).matches
    with pytest.raises(TypeError, match=r"'model' must be a podium model class or instance"):
        podium.fit(model, matches)


def test_fit_refuses_thurstone_with_knots() -> None:
    matches = podium.simulate(10, 20, seed=1).matches
    knotted = Thurstone(k=[(1400.0, 40.0), (1600.0, 20.0)])
    with pytest.raises(ValueError, match=r"one constant 'k' for Thurstone; this model has knots \[\(1400.0, 40.0\)"):
        podium.fit(knotted, matches)


def test_fit_accepts_a_list_of_match_objects() -> None:
    sim = podium.simulate(30, 400, seed=2)
    packed = podium.fit(Elo, sim.matches)
    listed = podium.fit(Elo, list(sim.matches))
    assert (listed.params, listed.score, listed.split) == (packed.params, packed.score, packed.split)


# -- 5. simulate(skill_drift) ---------------------------------------------------------------------------------
def fingerprint(matches: Matches) -> str:
    digest = hashlib.sha256()
    for a in (matches.match_start, matches.team_start, matches.team_rank, matches.player):
        digest.update(np.asarray(a, dtype="<i8").tobytes())
    return digest.hexdigest()


# Computed with src/podium/simulate.py of commit cb00da2 (before skill_drift existed): sha256 of the int64
# match_start, team_start, team_rank and player arrays, the sum of the skills and one skill.
BEFORE_DRIFT = [
    ((40, 500), {"seed": 11},
     "94238403afb1bd65e7cf487fe62ccd205e62db143428258e01b7c143d95a2bda", -3.2724572256273388, -0.5103070767876675),
    ((60, 300), {"teams": 3, "team_size": 2, "draw_probability": 0.2, "skill_sd": 1.5, "seed": 5},
     "3954666dcd4b62ee509a9cd242b1a776a2f810c9dc0ab4f71e22c162edb3d05e", -19.335651887106497, 0.6306678570982822),
    ((5000, 200), {"teams": 4, "seed": 2},  # > 4096 players: the other line-up path
     "00a7b5f3e29d8930b385a532f95ab34087b9887381a1fe798a73e11ce2b427fd", 0.011328713377549038, -2.4414673826398556),
]


@pytest.mark.parametrize(("size", "kwargs", "digest", "skill_sum", "skill_3"), BEFORE_DRIFT)
@pytest.mark.parametrize("drift", [None, 0.0, 0])
def test_no_drift_is_the_history_from_before_skill_drift(size: tuple[int, int], kwargs: dict[str, Any], digest: str,
                                                         skill_sum: float, skill_3: float, drift: float | None) -> None:
    extra: dict[str, Any] = {} if drift is None else {"skill_drift": drift}
    sim = podium.simulate(size[0], size[1], **kwargs, **extra)
    assert fingerprint(sim.matches) == digest
    assert sum(sim.skills.values()) == pytest.approx(skill_sum, rel=1e-12)
    assert sim.skills["p00003"] == skill_3


def test_drift_is_deterministic_per_seed_and_keeps_the_line_ups() -> None:
    a = podium.simulate(50, 2_000, teams=3, skill_drift=0.2, seed=8)
    b = podium.simulate(50, 2_000, teams=3, skill_drift=0.2, seed=8)
    c = podium.simulate(50, 2_000, teams=3, skill_drift=0.2, seed=9)
    still = podium.simulate(50, 2_000, teams=3, seed=8)
    assert fingerprint(a.matches) == fingerprint(b.matches) and a.skills == b.skills
    assert fingerprint(a.matches) != fingerprint(c.matches)
    # skills and line-ups are drawn before the steps: the same players meet, with other results and skills
    np.testing.assert_array_equal(a.matches.player, still.matches.player)
    assert not np.array_equal(a.matches.team_rank, still.matches.team_rank)
    assert a.skills != still.skills


def test_drift_is_a_random_walk_of_one_step_per_match() -> None:
    players, matches, drift, seed = 5_000, 12_500, 0.3, 0
    sim = podium.simulate(players, matches, skill_drift=drift, seed=seed)
    # the initial skills are the generator's first draws (simulate draws them before anything else)
    initial = np.random.default_rng(seed).normal(0.0, 1.0, size=players)
    final = np.array([sim.skills[p] for p in sim.matches.players])
    games = np.bincount(sim.matches.player, minlength=players)
    played = games > 0
    # players who never played keep their skill exactly
    assert (~played).sum() > 10
    np.testing.assert_array_equal(final[~played], initial[~played])
    # final - initial ~ N(0, G D^2) for a player with G matches: z^2 = (final - initial)^2 / (G D^2) has mean 1
    # and sd sqrt(2).  Seeds 0-4 gave 0.999, 0.990, 1.000, 0.975, 0.996 (standard error 0.020).  G - 1 steps
    # (no step before the first match) would give about 1.25 (G is about 5).
    z2 = (final - initial)[played] ** 2 / (games[played] * drift**2)
    assert abs(z2.mean() - 1.0) < 4 * math.sqrt(2.0 / played.sum())


def test_performances_follow_the_drifted_skills() -> None:
    # With the walk's total spread (sd sqrt(50) * 0.3 = 2.1) as big as the skills', the last matches are
    # predicted better by the final skills than by the initial ones (seeds 0-4 of the 5,000-player run:
    # 0.78/0.71, 0.77/0.72, 0.79/0.74, 0.77/0.72, 0.77/0.72 of the last 10% of matches).
    players, matches, seed = 500, 12_500, 3
    sim = podium.simulate(players, matches, skill_drift=0.3, seed=seed)
    initial = np.random.default_rng(seed).normal(0.0, 1.0, size=players)
    final = np.array([sim.skills[p] for p in sim.matches.players])
    late = slice(int(0.9 * matches), matches)
    pair = sim.matches.player.reshape(matches, 2)[late]
    first_won = (sim.matches.team_rank.reshape(matches, 2)[late, 0] == 0)
    right_final = np.mean((final[pair[:, 0]] > final[pair[:, 1]]) == first_won)
    right_initial = np.mean((initial[pair[:, 0]] > initial[pair[:, 1]]) == first_won)
    assert right_final > right_initial + 0.05


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf"), "0.1", None])
def test_simulate_refuses_bad_skill_drift(bad: Any) -> None:
    with pytest.raises(ValueError, match=r"'skill_drift' must be a finite number >= 0"):
        podium.simulate(10, 5, skill_drift=bad)


@pytest.mark.parametrize("bad", [True, False])
def test_simulate_refuses_bool_skill_drift(bad: bool) -> None:
    with pytest.raises(ValueError, match=r"'skill_drift'"):
        podium.simulate(10, 5, skill_drift=bad)


# -- 6. TrueSkill match quality ------------------------------------------------------------------------------
def matrix_log_quality(mus: Sequence[Sequence[float]], sigmas: Sequence[Sequence[float]],
                       weights: Sequence[Sequence[float]], beta: float) -> float:
    """The documented formula with matrices (TrueSkill.quality's docstring; Moserware, "The Math Behind
    TrueSkill", eq. for n teams): A is (n-1) x players, row k = +w for team k, -w for team k+1;
    quality = sqrt(det(b^2 A A^T) / det(b^2 A A^T + A S A^T)) exp(-1/2 mu^T A^T (b^2 A A^T + A S A^T)^-1 A mu)."""
    n = len(mus)
    sizes = [len(t) for t in mus]
    offset = np.concatenate([[0], np.cumsum(sizes)])
    a = np.zeros((n - 1, offset[-1]))
    for k in range(n - 1):
        a[k, offset[k]:offset[k + 1]] = weights[k]
        a[k, offset[k + 1]:offset[k + 2]] = -np.asarray(weights[k + 1])
    mu = np.concatenate([np.asarray(t, float) for t in mus])
    var = np.concatenate([np.asarray(t, float) ** 2 for t in sigmas])
    noise = beta**2 * a @ a.T
    total = noise + (a * var) @ a.T
    sign_n, logdet_n = np.linalg.slogdet(noise)
    sign_t, logdet_t = np.linalg.slogdet(total)
    assert sign_n > 0 and sign_t > 0
    d = a @ mu
    return 0.5 * (logdet_n - logdet_t) - 0.5 * float(d @ np.linalg.solve(total, d))


def random_match(rng: np.random.Generator, weighted: bool) -> tuple[list[list[str]], dict[str, Rating],
                                                                     list[list[float]]]:
    n = int(rng.integers(2, 9))
    teams = [[f"t{i}p{j}" for j in range(int(rng.integers(1, 5)))] for i in range(n)]
    ratings = {p: Rating(float(rng.normal(25.0, 4.0)), float(rng.uniform(0.5, 9.0))) for t in teams for p in t}
    weights = [[float(rng.uniform(0.05, 1.0)) if weighted else 1.0 for _ in t] for t in teams]
    return teams, ratings, weights


def test_quality_equals_the_matrix_formula() -> None:
    rng = np.random.default_rng(12)
    for case in range(300):
        model = TrueSkill(beta=float(rng.uniform(0.5, 8.0)), center=False)  # eq. 7's literal team sums
        teams, ratings, weights = random_match(rng, weighted=case % 2 == 1)
        expected = matrix_log_quality([[ratings[p].mu for p in t] for t in teams],
                                      [[ratings[p].sigma for p in t] for t in teams], weights, model.beta)
        got = model.quality(teams, ratings, weights)
        assert got == pytest.approx(math.exp(expected), rel=1e-10), (teams, ratings, weights)


def test_quality_does_not_depend_on_the_order_of_the_teams() -> None:
    rng = np.random.default_rng(13)
    for _ in range(40):
        teams, ratings, weights = random_match(rng, weighted=True)
        q = TrueSkill().quality(teams, ratings, weights)
        for _ in range(3):
            order = rng.permutation(len(teams))
            assert TrueSkill().quality([teams[i] for i in order], ratings,
                                       [weights[i] for i in order]) == pytest.approx(q, rel=1e-12)


def test_quality_matches_the_trueskill_package() -> None:
    rng = np.random.default_rng(14)
    for case in range(60):
        beta = float(rng.uniform(1.0, 6.0))
        model = TrueSkill(beta=beta, tau=0.5, draw_probability=0.2, center=False)  # the package's team sums
        env = trueskill.TrueSkill(mu=25.0, sigma=25.0 / 3.0, beta=beta, tau=0.5, draw_probability=0.2)
        teams, ratings, weights = random_match(rng, weighted=case % 3 == 2)
        groups = [tuple(env.create_rating(ratings[p].mu, ratings[p].sigma) for p in t) for t in teams]
        expected = env.quality(groups, weights=weights)  # trueskill 0.4.5: the same matrix formula, weighted A
        assert model.quality(teams, ratings, weights) == pytest.approx(expected, rel=1e-9)


def test_quality_of_a_thousand_teams() -> None:
    rng = np.random.default_rng(15)
    n = 1000
    teams = [[f"p{i}"] for i in range(n)]
    # Close ratings with small uncertainty: the quality is representable (about 0.27 here).
    model = TrueSkill(mu=0.0, sigma=0.05, beta=1.0)
    ratings = {t[0]: Rating(float(rng.normal(0.0, 0.01)), float(rng.uniform(0.03, 0.07))) for t in teams}
    q = model.quality(teams, ratings)
    expected = matrix_log_quality([[ratings[t[0]].mu] for t in teams], [[ratings[t[0]].sigma] for t in teams],
                                  [[1.0]] * n, 1.0)
    assert math.isfinite(q) and 0.0 < q <= 1.0
    assert q == pytest.approx(math.exp(expected), rel=1e-9)
    # Default ratings: the quality itself, (beta^2 / (beta^2 + sigma^2))^(999/2) ~ 1e-349, is below the
    # doubles, but its log stays finite and exact (the matrix form by slogdet agrees).
    tm = np.zeros(n)
    skill = np.full(n, (25.0 / 3.0) ** 2)
    noise = np.full(n, (25.0 / 6.0) ** 2)
    log_q = log_match_quality(tm, skill, noise)
    closed = 0.5 * (n - 1) * math.log(noise[0] / (noise[0] + skill[0]))  # equal teams: no exponent term
    assert math.isfinite(log_q) and log_q == pytest.approx(closed, rel=1e-12)
    assert log_q == pytest.approx(matrix_log_quality([[0.0]] * n, [[25.0 / 3.0]] * n, [[1.0]] * n, 25.0 / 6.0),
                                  rel=1e-10)
    assert TrueSkill().quality(teams, {}) == 0.0  # underflow of ~1e-349, not an overflow or NaN


# -- 7. ordering.log_win_pair --------------------------------------------------------------------------------
PAIRS = [(0.3, 1.0, -0.2, 1.7), (2.0, 0.5, 0.0, 2.0), (-1.5, 2.0, 1.0, 0.7), (0.0, 1.0, 0.0, 1.3),
         (1.0, 0.7, -0.5, 1.2), (-3.0, 0.5, 0.75, 0.35), (-6.0, 1.0, 0.0, 1.5), (5.0, 0.3, 0.0, 2.0)]


def mp_log_ndtr(d: float) -> float:
    """log Phi(d) at 30 digits (mpmath): log1p(-Phi(-d)) for d > 0, where Phi(d) rounds to 1."""
    with mp.workdps(30):
        x = mp.mpf(d)
        return float(mp.log1p(-mp.ncdf(-x)) if d > 0 else mp.log(mp.ncdf(x)))


@pytest.mark.parametrize(("la", "sa", "lb", "sb"), PAIRS + [(40.0, 1.0, 0.0, 1.0), (0.0, 0.5, 400.0, 0.5),
                                                            (1131.4, 1.0, 0.0, 1.0), (-3.0, 1e-3, 0.0, 1e3)])
def test_gaussian_pair_is_the_normal_cdf(la: float, sa: float, lb: float, sb: float) -> None:
    # X_a - X_b ~ N(la - lb, sa^2 + sb^2): log Phi(+-d).  Reference mpmath; log_ndtr (and scipy's
    # norm.logcdf) are 1e-13 relative in the far upper tail (d = 28: 7e-14 each).
    d = (la - lb) / math.hypot(sa, sb)
    got = log_win_pair(GAUSSIAN, 0.0, la, sa, lb, sb)
    assert got[0] == pytest.approx(mp_log_ndtr(d), rel=1e-12, abs=1e-300)
    assert got[1] == pytest.approx(mp_log_ndtr(-d), rel=1e-12, abs=1e-300)
    assert got[0] == pytest.approx(float(stats.norm.logcdf(d)), rel=1e-12, abs=1e-300)


def mp_log_logistic(z: float) -> float:
    """log(1 / (1 + exp(-z))) at 50 digits (mpmath)."""
    with mp.workdps(50):
        return float(-mp.log1p(mp.exp(-mp.mpf(z))))


@pytest.mark.parametrize("z", [0.0, 0.5, -3.0, 40.0, -40.0, 800.0, -800.0, 1e4, -1e4])
@pytest.mark.parametrize("s", [1.0, 0.25, 7.0])
def test_gumbel_equal_scales_is_logistic(z: float, s: float) -> None:
    # Difference of two max-Gumbels of scale s: logistic of scale s (McFadden 1974); reference mpmath
    la, lb = 0.3 + z * s, 0.3
    got = log_win_pair(GUMBEL, 0.0, la, s, lb, s)
    zz = (la - lb) / s
    assert got[0] == pytest.approx(mp_log_logistic(zz), rel=1e-13, abs=1e-300)
    assert got[1] == pytest.approx(mp_log_logistic(-zz), rel=1e-13, abs=1e-300)
    assert all(math.isfinite(v) and v <= 0.0 for v in got)


def _log_pdf_cdf(kind: int, shape: float) -> tuple[Callable[[float], float], Callable[[float], float]]:
    """Standardized log density and log distribution function (Gumbel max-type f = exp(-z - e^-z))."""
    if kind == GUMBEL:
        return (lambda z: -z - math.exp(-z) if z > -700 else -math.inf,
                lambda z: -math.exp(-z) if z > -700 else -math.inf)
    if kind == LOGISTIC:
        return (lambda z: -abs(z) - 2.0 * math.log1p(math.exp(-abs(z))),
                lambda z: -math.log1p(math.exp(-z)) if z >= 0 else z - math.log1p(math.exp(z)))
    dist = stats.skewnorm(shape)
    return (lambda z: float(dist.logpdf(z)), lambda z: float(dist.logcdf(z)))


def quad_log_win(kind: int, shape: float, la: float, sa: float, lb: float, sb: float) -> float:
    """log P(X_a > X_b) = log int f_a(x) F_b(x) dx by scipy.integrate.quad (relative tolerance 1e-13)."""
    log_pdf, log_cdf = _log_pdf_cdf(kind, shape)
    def integrand(x: float) -> float:
        return math.exp(log_pdf((x - la) / sa) - math.log(sa) + log_cdf((x - lb) / sb))
    lo, hi = min(la - 40 * sa, lb - 40 * sb), max(la + 60 * sa, lb + 60 * sb)
    points = sorted({la - sa, la, la + sa, lb - sb, lb, lb + sb})
    value, _ = integrate.quad(integrand, lo, hi, points=points, epsabs=0.0, epsrel=1e-13, limit=1000)
    return math.log(value)


KINDS = [("gumbel", GUMBEL, 0.0), ("logistic", LOGISTIC, 0.0), ("skew3", SKEW_NORMAL, 3.0),
         ("skew-1.5", SKEW_NORMAL, -1.5)]
QUAD_CASES = [pytest.param(kind, shape, *pair, id=f"{name}-{pair}") for name, kind, shape in KINDS for pair in PAIRS
              # skew-normal upsets are test_skew_normal_pair_in_the_tail
              if not (kind == SKEW_NORMAL and pair[0] < -2.0)]


@pytest.mark.parametrize(("kind", "shape", "la", "sa", "lb", "sb"), QUAD_CASES)
def test_pair_matches_quadrature(kind: int, shape: float, la: float, sa: float, lb: float, sb: float) -> None:
    got = log_win_pair(kind, shape, la, sa, lb, sb)
    assert got[0] == pytest.approx(quad_log_win(kind, shape, la, sa, lb, sb), abs=1e-7)
    assert got[1] == pytest.approx(quad_log_win(kind, shape, lb, sb, la, sa), abs=1e-7)
    # each order is an ordering likelihood on its own grid, accurate to about 1e-9 in log P (podium.ordering's
    # target; measured up to 6e-12 here); skew-normal's distribution function is itself integrated on the grid
    assert math.exp(got[0]) + math.exp(got[1]) == pytest.approx(1.0, abs=1e-8 if kind == SKEW_NORMAL else 1e-9)
    assert log_win_pair(kind, shape, lb, sb, la, sa) == (got[1], got[0])  # swapping swaps the answers


# log P(X_a > X_b) for skew-normal performances: mpmath at 20 digits, int f_a(x) F_b(x) dx with
# F(z) = Phi(z) - 2 T(z, alpha) (Owen's T by mp.quad); podium.ordering.log_order([la, lb], [sa, sb],
# density="skew_normal", shape=alpha) agrees with every value to 5e-11.
SKEW_TAIL = [
    (-1.5, (-6.0, 1.0, 0.0, 1.0), -17.361085393662883),   # log_win_pair: -17.361081169 (error 4.2e-6)
    (-1.5, (-3.0, 0.5, 0.75, 0.35), -39.949555969052135),  # log_win_pair: -39.949462076 (error 9.4e-5)
    (3.0, (-6.0, 1.0, 0.0, 1.0), -20.315700307445756),     # log_win_pair: -20.315698915 (error 1.4e-6)
]


@pytest.mark.parametrize(("shape", "pair", "reference"), SKEW_TAIL)
def test_skew_normal_pair_agrees_with_log_order(shape: float, pair: tuple[float, ...], reference: float) -> None:
    la, sa, lb, sb = pair
    assert podium.ordering.log_order([la, lb], [sa, sb], density="skew_normal", shape=shape) == pytest.approx(
        reference, abs=1e-9)


@pytest.mark.parametrize(("shape", "pair", "reference"), SKEW_TAIL)
def test_skew_normal_pair_in_the_tail(shape: float, pair: tuple[float, ...], reference: float) -> None:
    la, sa, lb, sb = pair
    assert log_win_pair(SKEW_NORMAL, shape, la, sa, lb, sb)[0] == pytest.approx(reference, abs=1e-7)


@pytest.mark.parametrize(("kind", "shape"), [(GAUSSIAN, 0.0), (GUMBEL, 0.0), (LOGISTIC, 0.0), (SKEW_NORMAL, 2.0),
                                             (SKEW_NORMAL, -4.0)])
def test_equal_competitors_get_exactly_equal_values(kind: int, shape: float) -> None:
    rng = np.random.default_rng(16)
    for loc, scale in itertools.islice(zip(rng.normal(0, 100, 20), np.exp(rng.normal(0, 2, 20))), 20):
        a, b = log_win_pair(kind, shape, float(loc), float(scale), float(loc), float(scale))
        assert a == b
        assert a == pytest.approx(-math.log(2.0), abs=1e-8)


def test_fit_refuses_a_training_part_with_nothing_to_score() -> None:
    sim = podium.simulate(50, 400, seed=2)
    with pytest.raises(ValueError, match="'min_games'"):
        podium.fit(podium.TrueSkill, sim.matches, min_games=10**6)


def test_fit_starts_from_a_draw_probability_of_zero_without_warnings() -> None:
    # pytest turns warnings into errors: scipy's "initial guess is not within the bounds" would fail this
    # (no draws in this history: the draw probability stays at the search's floor, which fit says, and nothing else)
    sim = podium.simulate(80, 2000, seed=4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = podium.fit(podium.TrueSkill(draw_probability=0.0), sim.matches, metric="pair_log_loss",
                            params=["beta", "tau", "draw_probability"])
    assert [(w.category, "draw_probability" in str(w.message)) for w in caught] == [(podium.FitWarning, True)]
    assert result.at_bound == ("draw_probability",)
    assert result.train_score <= podium.evaluate(sim.matches[:result.split], {"m": podium.TrueSkill(
        draw_probability=0.0)})["m"]["pair_log_loss"] + 1e-12


def test_fit_tunes_the_team_spread_only_where_there_are_teams(history: Matches) -> None:
    # One-on-one games: the spread changes no prediction, so the default search leaves it out.
    assert set(podium.fit(Elo, history).params) == {"k", "provisional"}
    teams = podium.simulate(120, 1500, teams=2, team_size=(4, 3), parties=0.5, party_size=2, seed=3).matches
    result = podium.fit(podium.PlackettLuce, teams)
    assert set(result.params) == {"k", "spread", "provisional", "newcomer"}  # (newcomer: the teams' sizes differ)
    # the search moved the spread and found a point better on the training part than the defaults
    assert result.params["spread"] != 1.0
    assert result.train_score < podium.fit(podium.PlackettLuce, teams, max_evaluations=0).train_score - 1e-4
