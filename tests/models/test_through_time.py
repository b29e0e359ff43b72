"""TrueSkill Through Time: against the reference package, TrueSkill's online replay, exact integrals, and the truth
of simulated drifting skills."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy.special import log_ndtr
from scipy.stats import spearmanr

import podium
from podium import Match, TrueSkillThroughTime
from podium.data.match import MIN_WEIGHT
from ..shared import SHARED

ttt = pytest.importorskip("trueskillthroughtime")


def _history(seed: int, *, players: int = 10, matches: int = 40, teams: tuple[int, int] = (2, 2),
             size: tuple[int, int] = (1, 1), draws: float = 0.0, per_time: int = 3, finishing_order: bool = False
             ) -> tuple[list[Match], list, list, list]:
    """A random history as podium matches and as the reference's (composition, results, times).

    The reference scores teams (higher is better); podium ranks them (0 is best).  ``draws``: the chance that
    a two-team match is drawn.  ``finishing_order`` lists every match's teams best first.
    """
    rng = random.Random(seed)
    ours, comp, results, times = [], [], [], []
    for m in range(matches):
        n, k = rng.randint(*teams), rng.randint(*size)
        who = rng.sample(range(players), n * k)
        lineup = [[f"p{who[i * k + j]}" for j in range(k)] for i in range(n)]
        ranks = list(range(n))
        rng.shuffle(ranks)
        if n == 2 and rng.random() < draws:
            ranks = [0, 0]
        if finishing_order:
            lineup = [t for _, t in sorted(zip(ranks, lineup), key=lambda x: x[0])]
            ranks = sorted(ranks)
        t = float(m // per_time)
        ours.append(Match(lineup, ranks=ranks, time=t))
        comp.append(lineup)
        results.append([float(n - r) for r in ranks])
        times.append(t)
    return ours, comp, results, times


@pytest.fixture
def exact_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference package with an exact ``erfc`` (and its inverse) in place of its 1.2e-7 approximation
    (Numerical Recipes' ``erfcc``), so that what is left of a difference is the algorithms', not the
    approximation's: its first pass then agrees with podium's to rounding."""
    from scipy.special import erfcinv

    monkeypatch.setattr(ttt, "erfc", math.erfc)
    monkeypatch.setattr(ttt, "erfcinv", lambda y: float(erfcinv(y)))


def _worst_difference(result: podium.Smoothed, history: object) -> float:
    worst = 0.0
    for player, curve in history.learning_curves().items():  # type: ignore[attr-defined]
        ours = result.trajectory(player)
        assert list(ours.time) == [t for t, _ in curve]
        for (_, g), mu, sigma in zip(curve, ours.mu, ours.sigma):
            worst = max(worst, abs(g.mu - mu), abs(g.sigma - sigma))
    return worst


REFERENCE_CASES = [
    # seed, gamma, draw probability, history options
    (0, 0.3, 0.0, {}),
    (1, 0.03, 0.0, {}),
    (2, 0.5, 0.0, {"size": (2, 3)}),
    (3, 0.2, 0.25, {"draws": 0.3}),
    (4, 0.3, 0.0, {"teams": (3, 5), "finishing_order": True}),
    (5, 0.3, 0.0, {"teams": (2, 4), "size": (1, 2), "finishing_order": True}),
]


@pytest.mark.parametrize("seed,gamma,p_draw,options", REFERENCE_CASES)
def test_posteriors_and_evidence_match_the_reference_package(seed: int, gamma: float, p_draw: float,
                                                             options: dict, exact_reference: None) -> None:
    """Side by side with trueskillthroughtime 1.1.0: teams, draws, several teams per match, batches.

    First pass: same posteriors to 1e-12 (1e-8 for three or more teams, whose inner EP the reference stops at
    1e-6) and the same evidence to 1e-12 relative.  Converged (both to 1e-10): posteriors within 1e-7; the
    reference needs hundreds of sweeps where podium, with its level correction, needs tens.
    """
    ours, comp, results, times = _history(seed, **options)
    ref = ttt.History(comp, results, times, mu=0.0, sigma=6.0, beta=1.0, gamma=gamma, p_draw=p_draw)
    model = TrueSkillThroughTime(gamma=gamma, draw_probability=p_draw)
    first = model.smooth(ours, max_iterations=0)
    two_teams = options.get("teams", (2, 2))[1] == 2
    assert _worst_difference(first, ref) < (1e-12 if two_teams else 1e-8)
    if two_teams:  # the reference's evidence of three or more teams is an approximation (see below)
        assert first.log_evidence == pytest.approx(ref.log_evidence(), rel=1e-12)
    ref.convergence(epsilon=1e-10, iterations=3000, verbose=False)
    result = model.smooth(ours, tolerance=1e-10, max_iterations=500)
    assert result.converged
    assert _worst_difference(result, ref) < 1e-7
    if two_teams:
        assert result.loo_log_likelihood == pytest.approx(ref.log_evidence(), rel=1e-9)


def test_the_reference_as_packaged_agrees_within_its_erfc() -> None:
    """Without the exact erfc, the package's own numbers: within 1e-5 after the first pass and converged."""
    ours, comp, results, times = _history(7, size=(1, 2))
    ref = ttt.History(comp, results, times, mu=0.0, sigma=6.0, beta=1.0, gamma=0.1, p_draw=0.0)
    model = TrueSkillThroughTime(gamma=0.1, draw_probability=0.0)
    assert _worst_difference(model.smooth(ours, max_iterations=0), ref) < 1e-5
    assert model.smooth(ours, max_iterations=0).log_evidence == pytest.approx(ref.log_evidence(), rel=1e-6)
    ref.convergence(epsilon=1e-9, iterations=3000, verbose=False)
    assert _worst_difference(model.smooth(ours, tolerance=1e-9), ref) < 1e-5


def test_the_reference_answer_depends_on_how_a_free_for_all_is_listed_and_podiums_does_not(
        exact_reference: None) -> None:
    """The documented deliberate difference for three or more teams.

    trueskillthroughtime 1.1.0 (``Game.likelihood_teams``) hands team ``o[e]`` the message of sorted place
    ``o[e]`` instead of sorted place ``e``; when the listing is not its own inverse permutation of the
    finishing order, teams get another team's update (here the winner's rating falls).  podium's answer does
    not depend on the listing.
    """
    P = lambda m, s: ttt.Player(ttt.Gaussian(m, s), 1.0, 0.0)  # noqa: E731
    prior = {"a": (0.0, 6.0), "c": (-1.0, 2.0), "d": (2.0, 1.0)}
    listed = [["a"], ["c"], ["d"]]
    scores = [1.0, 3.0, 2.0]  # c first, d second, a last: listing order is a 3-cycle of it
    game = ttt.Game([[P(*prior[x]) for x in t] for t in listed], scores, 0.0)
    winner_after = game.posteriors()[1][0].mu
    assert winner_after < prior["c"][0]  # the reference lowers the winner
    sorted_game = ttt.Game([[P(*prior["c"])], [P(*prior["d"])], [P(*prior["a"])]], [3.0, 2.0, 1.0], 0.0)
    model = TrueSkillThroughTime(draw_probability=0.0)
    ts_ratings = {k: podium.Rating(*v) for k, v in prior.items()}
    listed_result = model.filter.rate(Match(listed, ranks=[2, 0, 1]), ts_ratings)
    sorted_result = model.filter.rate(Match([["c"], ["d"], ["a"]], ranks=[0, 1, 2]), ts_ratings)
    for name in prior:
        assert listed_result[name] == sorted_result[name]
    assert listed_result["c"].mu == pytest.approx(sorted_game.posteriors()[0][0].mu, abs=1e-6)
    assert listed_result["c"].mu > prior["c"][0]


def _timed_matches(seed: int) -> list[Match]:
    """Batches with repeated players, free-for-alls, teams, partial play, non-finishers and draws."""
    rng = random.Random(seed)
    out = []
    for m in range(120):
        n = rng.choice([2, 2, 3, 4])
        k = rng.choice([1, 1, 2])
        who = rng.sample(range(14), n * k)
        teams = [[f"q{who[i * k + j]}" for j in range(k)] for i in range(n)]
        ranks: list[int | None] = list(range(n))
        rng.shuffle(ranks)
        if rng.random() < 0.2:
            ranks[0] = None
        if rng.random() < 0.2 and n == 2 and None not in ranks:
            ranks = [0, 0]
        weights = [[rng.choice([1.0, 0.5]) for _ in t] for t in teams]
        out.append(Match(teams, ranks=ranks, weights=weights, time=float(m // 4) * 2.5))
    return out


@pytest.mark.parametrize("gamma", [0.0, 0.07])
def test_one_forward_pass_is_trueskills_online_replay_exactly(gamma: float) -> None:
    """With no backward sweeps, the smoother's first pass is ``TrueSkill(tau=0, drift=gamma)`` replayed in time
    order, bit for bit (the same kernel), through partial play, non-finishers, draws and free-for-alls."""
    matches = _timed_matches(3)
    shuffled = matches[:]
    random.Random(1).shuffle(shuffled)  # the smoother sorts by time (stably); the League takes the order given
    model = TrueSkillThroughTime(mu=25.0, sigma=25 / 3, beta=25 / 6, gamma=gamma, draw_probability=0.1)
    result = model.smooth(shuffled, max_iterations=0)
    league = podium.League(podium.TrueSkill(mu=25.0, sigma=25 / 3, beta=25 / 6, tau=0.0, drift=gamma,
                                            draw_probability=0.1, tolerance=1e-9, max_iterations=100,
                                            center=False))  # the smoother keeps the paper's literal team sum
    league.record_many(sorted(shuffled, key=lambda m: m.time))
    for player in league.players:
        online = league.trajectory(player)
        smoothed = result.trajectory(player)
        # The online rating after the player's last match of each batch.
        last = np.r_[online.time[1:] != online.time[:-1], True]
        assert np.array_equal(online.time[last], smoothed.time)
        assert np.array_equal(online.mu[last], smoothed.mu)
        assert np.array_equal(online.sigma[last], smoothed.sigma)


@pytest.mark.parametrize("level,jumps", [(True, True), (True, False), (False, True)])
def test_level_correction_and_extrapolation_reach_the_plain_sweeps_fixed_point(level: bool, jumps: bool) -> None:
    ours, *_ = _history(11, players=8, matches=60, per_time=2)
    model = TrueSkillThroughTime(gamma=0.5, draw_probability=0.0)
    model._correct_level, model._accelerate = level, jumps
    fast = model.smooth(ours, tolerance=1e-11, max_iterations=1000)
    plain = TrueSkillThroughTime(gamma=0.5, draw_probability=0.0)
    plain._correct_level = plain._accelerate = False
    slow = plain.smooth(ours, tolerance=1e-11, max_iterations=5000)
    assert fast.converged and slow.converged
    assert fast.iterations * 3 < slow.iterations
    assert np.max(np.abs(fast._mu - slow._mu)) < 1e-8
    assert np.max(np.abs(fast._sigma - slow._sigma)) < 1e-8


# -- evidence -------------------------------------------------------------------------------------------------
def _two_player_evidence(sigma: float, gamma: float, outcomes: list[tuple[int, int]]) -> float:
    """Exact ``log P(outcomes)`` for two players ``a, b`` (beta = 1) at times 0 and 1, by Gauss-Hermite over
    ``d_0 = s_a - s_b ~ N(0, 2 sigma^2)`` and the walk ``d_1 - d_0 ~ N(0, 2 gamma^2)``."""
    x, w = np.polynomial.hermite_e.hermegauss(120)
    w = w / w.sum()
    d0 = math.sqrt(2.0) * sigma * x[:, None]
    d1 = d0 + math.sqrt(2.0) * gamma * x[None, :]
    log_p = np.zeros((len(x), len(x)))
    for t, o in outcomes:
        log_p = log_p + log_ndtr(o * (d0 if t == 0 else d1) / math.sqrt(2.0))
    return float(np.log(np.sum(w[:, None] * w[None, :] * np.exp(log_p))))


def _duels(outcomes: list[tuple[int, int]]) -> list[Match]:
    return [Match([["a"], ["b"]], ranks=[0, 1] if o > 0 else [1, 0], time=float(t)) for t, o in outcomes]


def test_evidence_is_exact_where_the_chain_rule_is() -> None:
    model = TrueSkillThroughTime(sigma=2.0, beta=1.0, gamma=0.5, draw_probability=0.0)
    # Disjoint matches are independent; each is a coin flip between equal players.
    result = model.smooth([Match([["a"], ["b"]], ranks=[0, 1], time=0.0),
                           Match([["c"], ["d"]], ranks=[1, 0], time=0.0)])
    assert result.log_evidence == pytest.approx(2 * math.log(0.5), abs=1e-14)
    # One match: the probability of its outcome, whatever the smoothing did.
    one = model.smooth(_duels([(0, 1)]))
    assert one.log_evidence == pytest.approx(_two_player_evidence(2.0, 0.5, [(0, 1)]), abs=1e-9)


@pytest.mark.parametrize("sigma,gamma", [(2.0, 0.5), (1.0, 2.0)])
def test_evidence_against_exact_integration(sigma: float, gamma: float) -> None:
    """The chain rule with TrueSkill's Gaussian beliefs is an approximation (each belief is projected on a
    Gaussian); on these two-player histories integrated exactly it is within 5 % (measured: 0.4-4 %, 0.002-0.08
    nats)."""
    model = TrueSkillThroughTime(sigma=sigma, beta=1.0, gamma=gamma, draw_probability=0.0)
    for outcomes in ([(0, 1), (0, 1), (1, -1)], [(0, 1), (1, 1)], [(0, 1), (0, -1), (1, 1), (1, 1)]):
        exact = _two_player_evidence(sigma, gamma, outcomes)
        assert model.smooth(_duels(outcomes)).log_evidence == pytest.approx(exact, rel=0.05)


def test_evidence_does_not_depend_on_smoothing() -> None:
    ours, *_ = _history(12)
    model = TrueSkillThroughTime(gamma=0.2, draw_probability=0.0)
    assert model.smooth(ours, max_iterations=0).log_evidence == model.smooth(ours).log_evidence


# -- the result --------------------------------------------------------------------------------------------------
def test_ratings_between_batches_are_the_walks_bridge() -> None:
    """``ratings(at)`` between two of a player's batches equals the posterior of a skill variable placed at
    ``at`` by a match that tells nothing (a partial-play weight so small its message vanishes)."""
    ours, *_ = _history(13, players=6, matches=30, per_time=2)
    model = TrueSkillThroughTime(gamma=0.4, draw_probability=0.0)
    result = model.smooth(ours, tolerance=1e-12)
    traj = result.trajectory("p1")
    at = 0.5 * (traj.time[1] + traj.time[2])

    def probed(weight: float) -> tuple[float, float]:
        probe = Match([["p1"], ["ghost"]], ranks=[0, 1], weights=[[weight], [1.0]], time=at)
        inside = model.smooth(sorted(ours + [probe], key=lambda m: m.time), tolerance=1e-12).trajectory("p1")
        k = int(np.flatnonzero(inside.time == at)[0])
        return float(inside.mu[k]), float(inside.sigma[k])

    # The least weight the format takes, and twice it: Richardson's extrapolation to weight 0 is off by O(w^2).
    (mu1, sigma1), (mu2, sigma2) = probed(MIN_WEIGHT), probed(2 * MIN_WEIGHT)
    rating = result.ratings(at)["p1"]
    assert rating.mu == pytest.approx(2 * mu1 - mu2, abs=1e-9)
    assert rating.sigma == pytest.approx(2 * sigma1 - sigma2, abs=1e-9)
    # At a batch time it is the trajectory; after the last batch the belief widens by the walk.
    assert result.ratings(traj.time[1])["p1"] == podium.Rating(traj.mu[1], traj.sigma[1])
    later = result.ratings(traj.time[-1] + 100.0)["p1"]
    assert later.mu == pytest.approx(traj.mu[-1], abs=1e-12)
    assert later.sigma == pytest.approx(math.sqrt(traj.sigma[-1] ** 2 + 0.16 * 100.0), rel=1e-12)
    # Players who have not played yet are not rated.
    assert "p1" not in result.ratings(traj.time[0] - 1.0)


def test_leaderboard_and_frame() -> None:
    ours, *_ = _history(14)
    result = TrueSkillThroughTime(gamma=0.2, draw_probability=0.0).smooth(ours)
    board = result.leaderboard(k=3.0)
    ratings = result.ratings()
    scores = [r.mu - 3 * r.sigma for r in ratings.values()]
    assert board[0].score == pytest.approx(max(scores))
    assert [row.rank for row in board] == list(range(1, len(board) + 1))
    assert all(a.score >= b.score for a, b in zip(board, board[1:]))
    assert result.leaderboard(top=3) == board[:3]
    # games: the matches each had played by then (three matches share a time in this history)
    played = {name: sum(name in match.players for match in ours) for name in ratings}
    assert {row.player: row.games for row in board} == played
    at = ours[20].time
    early = {name: sum(name in match.players and match.time <= at for match in ours) for name in ratings}
    assert all(row.games == early[row.player] for row in result.leaderboard(at=at))
    assert result.end == max(match.time for match in ours)
    frame = result.to_frame()
    assert list(frame.columns) == ["player", "time", "match", "mu", "sigma"]
    rows = frame[frame.player == "p3"]
    assert np.array_equal(rows.mu.to_numpy(), result.trajectory("p3").mu)
    # Each batch row names the player's first match of that batch, in the history's order.
    for m, t in zip(rows["match"], rows["time"]):
        assert "p3" in ours[m].players and ours[m].time == t


def test_matches_without_times_are_batches_of_one_at_their_index() -> None:
    matches = [Match([["a"], ["b"]], ranks=[0, 1]), Match([["b"], ["c"]], ranks=[0, 1]),
               Match([["a"], ["c"]], ranks=[1, 0])]
    result = TrueSkillThroughTime(draw_probability=0.0).smooth(matches)
    assert list(result.trajectory("a").time) == [0.0, 2.0]
    assert list(result.trajectory("c").time) == [1.0, 2.0]


# -- accuracy on simulated drifting skills ----------------------------------------------------------------------
def test_smoothing_tracks_drifting_skills_better_than_the_online_filter() -> None:
    """Known drifting skills: the smoothed trajectories are closer to the truth than TrueSkill's online ratings at
    the same (fitted) parameters, in RMSE and in rank correlation.  Figures for larger runs: docs/design.md."""
    sim = podium.simulate(60, 3000, seed=5, skill_drift=0.08)
    fitted = podium.fit(TrueSkillThroughTime(draw_probability=0.0), sim.matches, split=1.0).model
    smooth = fitted.smooth(sim.matches)
    online = fitted.smooth(sim.matches, max_iterations=0)  # the filter at the same parameters
    truth = sim.slot_skills
    m = sim.matches
    names = np.array(m.players)[m.player]
    est_s, est_o = np.empty(len(truth)), np.empty(len(truth))
    for name in m.players:
        slots = np.flatnonzero(names == name)
        est_s[slots] = smooth.trajectory(name).mu  # one match per time: one batch per slot
        est_o[slots] = online.trajectory(name).mu
    # The model's unit is its performance noise beta (the truth's is 1); skills are identified up to a shift.

    def rmse(est: np.ndarray) -> float:
        err = est / fitted.beta - truth
        return math.sqrt(float(np.mean((err - err.mean()) ** 2)))

    assert rmse(est_s) < 0.8 * rmse(est_o)
    assert spearmanr(est_s, truth)[0] > spearmanr(est_o, truth)[0] + 0.02


# -- extremes ---------------------------------------------------------------------------------------------------
def _finite(result: podium.Smoothed) -> None:
    assert np.all(np.isfinite(result._mu)) and np.all(result._sigma > 0) and np.all(np.isfinite(result._sigma))
    assert math.isfinite(result.log_evidence) and math.isfinite(result.loo_log_likelihood)


def test_extreme_histories() -> None:
    model = TrueSkillThroughTime(gamma=0.03, draw_probability=0.1)
    # A huge upset: a player who won 200 matches loses to a newcomer who then loses everything.
    upset = [Match([["champ"], [f"x{i}"]], ranks=[0, 1], time=float(i)) for i in range(200)]
    upset.append(Match([["champ"], ["nobody"]], ranks=[1, 0], time=200.0))
    upset += [Match([["nobody"], [f"y{i}"]], ranks=[1, 0], time=201.0 + i) for i in range(50)]
    _finite(model.smooth(upset))
    # One player in every match, several per batch.
    hub = [Match([["hub"], [f"z{i % 37}"]], ranks=[1, 0] if i % 3 else [0, 1], time=float(i // 5))
           for i in range(500)]
    _finite(model.smooth(hub))
    # Long gaps: gamma * gap far beyond sigma, and a gap of 1e12.
    gaps = [Match([["a"], ["b"]], ranks=[0, 1], time=0.0), Match([["a"], ["b"]], ranks=[1, 0], time=1e6),
            Match([["a"], ["c"]], ranks=[0, 1], time=1e12)]
    result = model.smooth(gaps)
    _finite(result)
    assert result.trajectory("a").sigma[-1] > 1e3
    # Ten thousand matches at one time: one batch.
    rng = np.random.default_rng(0)
    pairs = [rng.choice(300, 2, replace=False) for _ in range(10_000)]
    one_batch = [Match([[f"u{a}"], [f"u{b}"]], ranks=[0, 1] if a < b else [1, 0], time=7.0) for a, b in pairs]
    result = model.smooth(one_batch, max_iterations=1000)  # a perfect order in one batch: ~300 sweeps
    _finite(result)
    assert result.converged
    # Skill follows the index (lower index wins): smoothing recovers the order.
    board = result.leaderboard(k=0.0)
    assert spearmanr([int(r.player[1:]) for r in board], range(len(board)))[0] > 0.95


def test_errors_name_the_field() -> None:
    model = TrueSkillThroughTime(draw_probability=0.0)
    with pytest.raises(ValueError, match="'time'"):
        model.smooth([Match([["a"], ["b"]], ranks=[0, 1], time=1.0), Match([["a"], ["b"]], ranks=[0, 1])])
    with pytest.raises(ValueError, match="draw_probability"):
        model.smooth([Match([["a"], ["b"]], ranks=[0, 0], time=1.0)])
    with pytest.raises(ValueError, match="'gamma'"):
        TrueSkillThroughTime(gamma=-1.0)
    with pytest.raises(ValueError, match="'max_iterations'"):
        model.smooth([Match([["a"], ["b"]], ranks=[0, 1])], max_iterations=-1)
    result = model.smooth([Match([["a"], ["b"]], ranks=[0, 1])])
    with pytest.raises(KeyError, match="zed"):
        result.trajectory("zed")


def test_warns_when_sweeps_run_out() -> None:
    ours, *_ = _history(15)
    with pytest.warns(podium.ConvergenceWarning):
        result = TrueSkillThroughTime(gamma=0.03, draw_probability=0.0).smooth(ours, tolerance=1e-14,
                                                                               max_iterations=2)
    assert not result.converged and result.iterations == 2


# -- fit and evaluate -------------------------------------------------------------------------------------------
def test_fit_maximizes_the_evidence_and_evaluate_reports_it() -> None:
    sim = podium.simulate(60, 1500, seed=8, skill_drift=0.05)
    start = TrueSkillThroughTime(draw_probability=0.0)
    result = podium.fit(start, sim.matches, max_evaluations=30)
    train = sim.matches[:result.split]
    assert result.metric == "log_evidence"
    assert result.model.smooth(train).log_evidence >= start.smooth(train).log_evidence
    assert result.train_score == pytest.approx(result.model.smooth(train).log_evidence / len(train))
    # Held out: log P(later outcomes | earlier ones) per match, the chain rule's later terms.
    full = result.model.smooth(sim.matches, max_iterations=0)
    assert result.score == pytest.approx(np.mean(full.match_log_evidence[result.split:]))
    report = podium.evaluate(sim.matches, {"ttt": result.model, "ts": podium.TrueSkill()})
    assert report["ttt"]["log_likelihood"] == pytest.approx(full.log_evidence / len(sim.matches))
    assert math.isnan(report["ttt"]["pair_error"]) and math.isnan(report["ttt"]["pair_log_loss"])
    assert not math.isnan(report["ts"]["pair_error"])
    assert math.isnan(report.challenged["ttt"]["ts"]) and math.isnan(report.challenged["ts"]["ttt"])
    with pytest.raises(ValueError, match="log_evidence"):
        podium.fit(TrueSkillThroughTime, sim.matches, metric="pair_log_loss")
    with pytest.raises(ValueError, match="log_likelihood"):
        podium.fit(podium.TrueSkill, sim.matches, metric="log_evidence")
    whole = podium.fit(TrueSkillThroughTime(draw_probability=0.0), sim.matches, split=1.0, max_evaluations=5)
    assert whole.split == len(sim.matches) and math.isnan(whole.score)


def test_listing_order_changes_nothing() -> None:
    matches = _timed_matches(9)
    rng = random.Random(4)
    shuffled = []
    for match in matches:
        order = list(range(len(match.teams)))
        rng.shuffle(order)
        shuffled.append(Match([match.teams[i] for i in order], ranks=[match.ranks[i] for i in order],
                              weights=[match.weights[i] for i in order] if match.weights else None, time=match.time))
    model = TrueSkillThroughTime(gamma=0.1)
    a, b = model.smooth(matches, tolerance=1e-10), model.smooth(shuffled, tolerance=1e-10)
    # Uneven teams and partial play (matches a common shift changes) converge with the level correction too.
    assert a.converged and b.converged
    for player in a.players:
        assert np.allclose(a.trajectory(player).mu, b.trajectory(player).mu, atol=1e-9, rtol=0)


def test_the_order_of_matches_within_a_batch_does_not_change_the_fixed_point() -> None:
    """Within a batch the first pass is sequential (as TrueSkill's replay), but the smoothed posteriors are EP's
    fixed point, which does not depend on the order the batch's matches are listed in."""
    matches = _timed_matches(21)
    rng = random.Random(2)
    shuffled = matches[:]
    rng.shuffle(shuffled)  # the smoother sorts by time, stably: each batch keeps this shuffled order
    model = TrueSkillThroughTime(gamma=0.1)
    a = model.smooth(matches, tolerance=1e-11, max_iterations=1000)
    b = model.smooth(shuffled, tolerance=1e-11, max_iterations=1000)
    first_a = model.smooth(matches, max_iterations=0)
    first_b = model.smooth(shuffled, max_iterations=0)
    moved = max(np.max(np.abs(first_a.trajectory(p).mu - first_b.trajectory(p).mu)) for p in a.players)
    assert moved > 1e-3  # the filtering pass does depend on the order
    for player in a.players:
        assert np.allclose(a.trajectory(player).mu, b.trajectory(player).mu, atol=1e-8, rtol=0)
        assert np.allclose(a.trajectory(player).sigma, b.trajectory(player).sigma, atol=1e-8, rtol=0)


def test_a_weakly_pinned_level_is_still_found() -> None:
    """A prior of sigma 1e6-1e100 pins the field's level by precisions down to 1e-200: the level correction's
    common step finds it (a Cholesky pivot alone lost it, and sweeps move it by nothing), tiny walks and times
    1e-310 apart (1 / gamma^2 dt overflows) converge too.  Found by review."""
    ours, *_ = _history(3, players=8, matches=60, per_time=2)
    results = {}
    for sigma in (1e6, 1e8, 1e100):
        result = TrueSkillThroughTime(sigma=sigma, gamma=0.1, draw_probability=0.0).smooth(ours, tolerance=1e-10)
        _finite(result)
        assert result.converged
        results[sigma] = result._mu
    assert np.max(np.abs(results[1e6] - results[1e8])) < 1e-5  # the level's limit as the prior flattens
    assert np.max(np.abs(results[1e8] - results[1e100])) < 1e-5
    with pytest.raises(ValueError, match="'sigma'"):
        TrueSkillThroughTime(sigma=1e101)
    tiny = TrueSkillThroughTime(gamma=1e-155, draw_probability=0.0).smooth(_duels([(0, 1), (1, -1)]) + [
        Match([["a"], ["c"]], ranks=[0, 1], time=2.0)])
    _finite(tiny)
    assert tiny.converged
    close = [Match([["a"], ["b"]], ranks=[0, 1], time=0.0), Match([["a"], ["b"]], ranks=[1, 0], time=1e-310),
             Match([["a"], ["c"]], ranks=[0, 1], time=1.0)]
    result = TrueSkillThroughTime(gamma=1.0, draw_probability=0.0).smooth(close)
    _finite(result)
    assert result.converged


def test_the_filtering_pass_rates_between_batches_from_the_past_only() -> None:
    matches = _duels([(0, 1)]) + [Match([["a"], ["b"]], ranks=[1, 0], time=10.0) for _ in range(5)]
    model = TrueSkillThroughTime(gamma=0.2, draw_probability=0.0)
    online = model.smooth(matches, max_iterations=0)
    first = online.trajectory("a")
    between = online.ratings(at=5.0)["a"]
    assert between.mu == first.mu[0]  # the five losses at time 10 are not seen at time 5
    assert between.sigma == pytest.approx(math.sqrt(first.sigma[0] ** 2 + 0.04 * 5.0), rel=1e-12)
    smoothed = model.smooth(matches).ratings(at=5.0)["a"]
    assert smoothed.mu < between.mu - 0.5  # the smoother does see them
    with pytest.raises(ValueError, match="'at' must be a number"):
        online.ratings(at="2020-01-01")


def test_a_shared_history_side_by_side_with_the_reference(exact_reference: None) -> None:
    """The FIFA-rated chess World Cup games (half of them draws) from ../shared/data: the first pass and five
    plain sweeps (podium's level correction and extrapolation off, the reference's algorithm) give the same
    posteriors, and the same evidence."""

    path = SHARED / "chess_worldcup" / "matches.jsonl.gz"
    if not path.exists():
        pytest.skip(f"{path} is not present (the real data sets live in ../shared/data)")
    history = podium.read_matches(path)
    comp = [[[history.players[p] for p in history.player[history.team_start[t]:history.team_start[t + 1]]]
             for t in range(history.match_start[m], history.match_start[m + 1])] for m in range(len(history))]
    results = [[2.0 - float(r) for r in history.team_rank[history.match_start[m]:history.match_start[m + 1]]]
               for m in range(len(history))]
    ref = ttt.History(comp, results, list(history.time), mu=0.0, sigma=6.0, beta=1.0, gamma=0.03, p_draw=0.45)
    model = TrueSkillThroughTime(gamma=0.03, draw_probability=0.45)
    first = model.smooth(history, max_iterations=0)
    assert _worst_difference(first, ref) < 1e-12
    assert first.log_evidence == pytest.approx(ref.log_evidence(), rel=1e-12)
    ref.convergence(epsilon=-1.0, iterations=5, verbose=False)
    model._correct_level = model._accelerate = False
    with pytest.warns(podium.ConvergenceWarning):
        five = model.smooth(history, tolerance=1e-300, max_iterations=5)
    assert _worst_difference(five, ref) < 1e-10


def test_smoothed_leaderboard_says_who_is_connected() -> None:
    """Two scenes that meet only at the end: before the meeting the smaller is not connected to the larger (the
    league's rule: the largest component of the matches played by then), after it everyone is."""
    scene_a = [Match([[f"a{i % 4}"], [f"a{(i + 1) % 4}"]], time=float(i)) for i in range(8)]
    scene_b = [Match([[f"b{i % 3}"], [f"b{(i + 1) % 3}"]], time=float(i) + 0.5) for i in range(6)]
    bridge = [Match([["a0"], ["b0"]], time=20.0)]
    smoothed = podium.TrueSkillThroughTime().smooth(sorted(scene_a + scene_b, key=lambda m: m.time) + bridge)
    before = {row.player: row.connected for row in smoothed.leaderboard(at=10.0)}
    assert before == {**{f"a{i}": True for i in range(4)}, **{f"b{i}": False for i in range(3)}}
    assert {r.player for r in smoothed.leaderboard(at=10.0, connected_only=True)} == {f"a{i}" for i in range(4)}
    assert all(row.connected for row in smoothed.leaderboard())
    with pytest.raises(TypeError, match="connected_only"):
        smoothed.leaderboard(connected_only="yes")  # type: ignore[arg-type]
