"""podium.evaluation.plot: calibration bins against a hand computation, and the figures' contents (no pyplot state)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure

import podium
from podium.evaluation import plot

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _assert_png(path: Path) -> None:
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC
    assert len(data) > 1000


def _new_ax() -> Any:
    return Figure().add_subplot()


# -- shared histories ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def long_report() -> podium.Report:
    """A long two-player history with Gaussian performances (noise sd 1, skill sd 1, no draws) and:
    a TrueSkill whose prior, beta and draw model are exactly the simulation's; the default-scale TrueSkill
    (prior twice as wide as the noise: mis-specified); a Gaussian Elo on the simulation's scale."""
    sim = podium.simulate(60, 2000, seed=2)
    return podium.evaluate(sim.matches, {
        "trueskill exact": podium.TrueSkill(mu=0.0, sigma=1.0, beta=1.0, tau=0.0, draw_probability=0.0),
        "trueskill default": podium.TrueSkill(),
        "elo gaussian": podium.Elo(performance="gaussian", update="gradient", scale=1.0, initial=0.0, k=0.2),
    })


@pytest.fixture(scope="module")
def duel_report() -> podium.Report:
    sim = podium.simulate(30, 300, seed=5)
    return podium.evaluate(sim.matches, {"elo": podium.Elo(), "trueskill": podium.TrueSkill(),
                                         "plackett-luce": podium.PlackettLuce()})


@pytest.fixture(scope="module")
def ffa_report() -> podium.Report:
    sim = podium.simulate(30, 200, teams=3, seed=6)
    return podium.evaluate(sim.matches, {"trueskill": podium.TrueSkill(), "plackett-luce": podium.PlackettLuce()})


@pytest.fixture(scope="module")
def duel_matches() -> list[podium.Match]:
    """Duels with times that are not the match indices, ending with a newcomer who beats the leaders three
    times: the highest mu, but not among the first by mu - 3 sigma (the leaderboard's ``k`` matters)."""
    sim = podium.simulate(25, 300, seed=8)
    matches = [podium.Match(m.teams, m.ranks, time=1000.0 + 7.5 * j) for j, m in enumerate(sim.matches)]
    leaders = [row.player for row in podium.League(podium.TrueSkill()).record_many(matches).leaderboard(k=0, top=3)]
    return matches + [podium.Match([["newcomer"], [leaders[i]]], [0, 1], time=4000.0 + i) for i in range(3)]


@pytest.fixture(scope="module")
def ts_league(duel_matches: podium.Matches) -> podium.League:
    return podium.League(podium.TrueSkill()).record_many(duel_matches)


@pytest.fixture(scope="module")
def elo_league(duel_matches: podium.Matches) -> podium.League:
    return podium.League(podium.Elo()).record_many(duel_matches)


# -- calibration_bins ----------------------------------------------------------------------------------------
def _bins_by_hand(p: np.ndarray, won: np.ndarray, bins: int) -> tuple[list[float], list[float], list[int]]:
    total = [0.0] * bins
    wins = [0.0] * bins
    count = [0] * bins
    for prob, w in zip(p.tolist(), won.tolist()):
        j = min(math.floor(prob * bins), bins - 1)
        total[j] += prob
        wins[j] += 1.0 if w else 0.0
        count[j] += 1
    keep = [j for j in range(bins) if count[j]]
    return [total[j] / count[j] for j in keep], [wins[j] / count[j] for j in keep], [count[j] for j in keep]


@pytest.mark.parametrize("bins", [1, 3, 10, 17])
def test_calibration_bins_equal_a_hand_computation(long_report: podium.Report, bins: int) -> None:
    for name in long_report.models:
        p, won = long_report.pair_predictions(name)
        assert len(p) == len(won) == long_report.pairs
        assert np.all((p >= 0) & (p <= 1))
        pred, obs, count = plot.calibration_bins(long_report, name, bins)
        # every pair from both sides: (p, finished ahead) and (1 - p, finished behind)
        hand_pred, hand_obs, hand_count = _bins_by_hand(np.concatenate([p, 1 - p]), np.concatenate([won, ~won]), bins)
        assert count.tolist() == hand_count
        np.testing.assert_allclose(pred, hand_pred, rtol=1e-12, atol=0)
        np.testing.assert_allclose(obs, hand_obs, rtol=1e-12, atol=0)
        assert int(count.sum()) == 2 * long_report.pairs
        assert np.all(count > 0)
        # equal-width bins: each bin's mean lies in its bin, and the bins come in increasing order
        assert np.all(np.diff(pred) > 0)


def test_the_diagram_does_not_depend_on_the_listing_order(long_report: podium.Report) -> None:
    # One bin holds both sides of every pair: predicted and observed are 1/2 exactly.
    pred, obs, count = plot.calibration_bins(long_report, "elo gaussian", 1)
    assert count.tolist() == [2 * long_report.pairs]
    assert pred[0] == pytest.approx(0.5, rel=1e-12) and obs[0] == 0.5
    # Listing the winner first (as many files do) gives the same diagram as the order simulate chose.
    sim = podium.simulate(60, 1500, seed=5)
    winner_first = [podium.Match(sorted(m.teams, key=lambda t: m.ranks[m.teams.index(t)]), [0, 1]) for m in sim.matches]
    as_is = podium.evaluate(sim.matches, {"ts": podium.TrueSkill()})
    sorted_ = podium.evaluate(winner_first, {"ts": podium.TrueSkill()})
    for a, b in zip(plot.calibration_bins(as_is, "ts", 10), plot.calibration_bins(sorted_, "ts", 10)):
        np.testing.assert_allclose(a, b, rtol=1e-9)


def test_calibration_bins_edges() -> None:
    """0 goes to the first bin, 1 to the last, a probability on an inner edge to the bin above it."""
    probs = np.array([0.0, 0.25, 0.5, 0.5, 0.74, 1.0])
    won = np.array([False, True, True, False, True, True])

    class Stub:  # calibration_bins reads only pair_predictions
        def pair_predictions(self, name: str) -> tuple[np.ndarray, np.ndarray]:
            assert name == "m"
            return probs, won

    pred, obs, count = plot.calibration_bins(Stub(), "m", 4)  # type: ignore[arg-type]
    # the pairs and their mirror images (1 - p, not won): 0, 0 | 0.25, 0.26 | 0.5 x4, 0.74 | 0.75, 1, 1
    assert count.tolist() == [2, 2, 5, 3]
    np.testing.assert_allclose(pred, [0.0, 0.255, (4 * 0.5 + 0.74) / 5, 2.75 / 3])
    np.testing.assert_allclose(obs, [0.0, 0.5, 3 / 5, 2 / 3])


@pytest.mark.parametrize("bins", [0, -1, 2.5, True, "10", None])
def test_calibration_bins_rejects_bad_bins(duel_report: podium.Report, bins: object) -> None:
    with pytest.raises(ValueError, match="'bins'"):
        plot.calibration_bins(duel_report, "elo", bins)  # type: ignore[arg-type]


def _z_scores(report: podium.Report, name: str, at_least: int = 100) -> np.ndarray:
    pred, obs, count = plot.calibration_bins(report, name, 10)
    keep = count >= at_least
    assert keep.sum() >= 8  # most bins are well populated on this history
    return (obs[keep] - pred[keep]) / np.sqrt(pred[keep] * (1 - pred[keep]) / count[keep])


def test_a_well_specified_trueskill_is_calibrated(long_report: podium.Report) -> None:
    """TrueSkill with the simulation's own prior N(0, 1), beta = 1, no dynamics and no draws is the Bayesian
    model of the data: in every well-populated bin the observed frequency lies within a few binomial standard
    errors of the mean prediction (over 30 seeds the largest |z| was 2.8, and sum z^2 averaged 9.4 for about
    10 bins), and sum z^2 stays below the 0.1% tail of chi^2 with 10 degrees of freedom (29.6)."""
    z = _z_scores(long_report, "trueskill exact")
    assert np.max(np.abs(z)) < 3.5
    assert np.sum(z ** 2) < 29.6


def test_the_calibration_check_has_power(long_report: podium.Report) -> None:
    """The same check rejects the default-scale TrueSkill (prior sd twice the performance noise, while the
    simulation's skills spread as much as the noise): it is overconfident at both ends."""
    z = _z_scores(long_report, "trueskill default")
    assert np.sum(z ** 2) > 29.6
    pred, obs, count = plot.calibration_bins(long_report, "trueskill default", 10)
    assert obs[0] > pred[0] and obs[-1] < pred[-1]  # too extreme: the outcomes are less certain than said


# -- trajectories ----------------------------------------------------------------------------------------------
def test_trajectories_returns_a_figure_and_writes_a_png(ts_league: podium.League, tmp_path: Path) -> None:
    fig = plot.trajectories(ts_league)
    assert isinstance(fig, Figure)
    out = tmp_path / "traj.png"
    fig2 = plot.trajectories(ts_league, path=out)
    assert isinstance(fig2, Figure) and fig2 is not fig
    _assert_png(out)
    out_str = tmp_path / "traj2.png"
    plot.trajectories(ts_league, path=str(out_str))
    _assert_png(out_str)


@pytest.mark.parametrize("league_name", ["ts_league", "elo_league"])
def test_trajectories_draws_one_line_per_player_with_its_ratings(league_name: str, request: pytest.FixtureRequest
                                                                 ) -> None:
    league = request.getfixturevalue(league_name)
    players = league.players[3:7]
    ax = _new_ax()
    fig = plot.trajectories(league, players, ax=ax)
    assert fig is ax.figure
    lines = ax.get_lines()
    assert len(lines) == len(players)
    for line, player in zip(lines, players):
        tr = league.trajectory(player)
        assert line.get_label() == player
        assert len(tr.mu) == league.games(player) > 0
        np.testing.assert_array_equal(line.get_ydata(), tr.mu)
        np.testing.assert_array_equal(line.get_xdata(), tr.match)


def test_trajectories_by_time(ts_league: podium.League) -> None:
    ax = _new_ax()
    players = ts_league.players[:2]
    plot.trajectories(ts_league, players, x="time", ax=ax)
    for line, player in zip(ax.get_lines(), players):
        tr = ts_league.trajectory(player)
        assert not np.any(np.isnan(tr.time)) and not np.array_equal(tr.time, tr.match)
        np.testing.assert_array_equal(line.get_xdata(), tr.time)
    assert ax.get_xlabel() == "time"


def test_trueskill_trajectories_have_bands_and_elo_none(ts_league: podium.League, elo_league: podium.League
                                                        ) -> None:
    players = ts_league.players[:3]
    ax = _new_ax()
    plot.trajectories(ts_league, players, k=2.0, ax=ax)
    bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(bands) == len(players)
    for band, player in zip(bands, players):
        tr = ts_league.trajectory(player)
        ys = np.concatenate([np.asarray(path.vertices)[:, 1] for path in band.get_paths()])
        assert ys.max() == pytest.approx(float(np.max(tr.mu + 2.0 * tr.sigma)), rel=1e-9)
        assert ys.min() == pytest.approx(float(np.min(tr.mu - 2.0 * tr.sigma)), rel=1e-9)
    ax = _new_ax()
    plot.trajectories(elo_league, elo_league.players[:3], ax=ax)
    assert len(ax.get_lines()) == 3
    assert not [c for c in ax.collections if isinstance(c, PolyCollection)]


@pytest.mark.parametrize(("k", "top"), [(3.0, 5), (0.0, 2)])
def test_trajectories_default_players_are_the_top_of_the_leaderboard(ts_league: podium.League, k: float,
                                                                     top: int) -> None:
    ax = _new_ax()
    plot.trajectories(ts_league, k=k, top=top, ax=ax)
    expected = [row.player for row in ts_league.leaderboard(k=k, top=top)]
    assert expected != [row.player for row in ts_league.leaderboard(k=3.0 - k, top=top)]  # k decides the order
    assert [line.get_label() for line in ax.get_lines()] == expected
    for line, player in zip(ax.get_lines(), expected):
        np.testing.assert_array_equal(line.get_ydata(), ts_league.trajectory(player).mu)


def test_trajectories_default_is_top_five_by_mu_minus_three_sigma(ts_league: podium.League) -> None:
    ax = _new_ax()
    plot.trajectories(ts_league, ax=ax)
    expected = [row.player for row in ts_league.leaderboard(k=3, top=5)]
    assert len(expected) == 5
    assert [line.get_label() for line in ax.get_lines()] == expected


def test_trajectories_rejects_an_unknown_axis(ts_league: podium.League) -> None:
    with pytest.raises(ValueError, match="'x'"):
        plot.trajectories(ts_league, x="bogus")


# -- calibration -------------------------------------------------------------------------------------------------
def test_calibration_draws_the_bins_of_every_model(duel_report: podium.Report, tmp_path: Path) -> None:
    ax = _new_ax()
    fig = plot.calibration(duel_report, bins=5, ax=ax)
    assert fig is ax.figure
    lines = ax.get_lines()
    assert len(lines) == 1 + len(duel_report.models)  # the diagonal, then one per model
    np.testing.assert_array_equal(lines[0].get_xdata(), [0, 1])
    np.testing.assert_array_equal(lines[0].get_ydata(), [0, 1])
    bars = [b for b in ax.figure.axes if b is not ax][0].patches  # the counts, on the twin axis
    k = 0
    for line, name in zip(lines[1:], duel_report.models):
        pred, obs, count = plot.calibration_bins(duel_report, name, 5)
        assert line.get_label() == f"{name} (ECE {duel_report[name]['calibration_error']:.3f})"
        np.testing.assert_array_equal(line.get_xdata(), pred)
        np.testing.assert_array_equal(line.get_ydata(), obs)
        assert [bar.get_height() for bar in bars[k:k + len(count)]] == list(count)
        k += len(count)
    assert k == len(bars)
    out = tmp_path / "cal.png"
    fig = plot.calibration(duel_report, ["trueskill"], path=out)
    assert isinstance(fig, Figure)
    _assert_png(out)
    assert [line.get_label() for line in fig.axes[0].get_lines()] == [
        "perfect", f"trueskill (ECE {duel_report['trueskill']['calibration_error']:.3f})"]


def test_calibration_rejects_zero_bins(duel_report: podium.Report) -> None:
    with pytest.raises(ValueError, match="'bins'"):
        plot.calibration(duel_report, bins=0)


def test_calibration_of_a_report_without_pairs() -> None:
    sim = podium.simulate(20, 100, seed=3)
    report = podium.evaluate(sim.matches, {"elo": podium.Elo()}, min_games=1000)
    assert report.pairs == 0
    assert isinstance(plot.comparison(report), Figure)
    fig = plot.calibration(report)
    assert isinstance(fig, Figure)


# -- comparison --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("metric", ["pair_error", "pair_log_loss", "log_likelihood"])
def test_comparison_bars_are_the_report_values(duel_report: podium.Report, metric: str) -> None:
    ax = _new_ax()
    fig = plot.comparison(duel_report, metric, ax=ax)
    assert fig is ax.figure
    bars = ax.patches
    assert len(bars) == len(duel_report.models)
    heights = [bar.get_height() for bar in bars]
    assert heights == [duel_report[n][metric] for n in duel_report.models]
    assert [t.get_text() for t in ax.get_xticklabels()] == duel_report.models


def test_comparison_of_chosen_models_in_their_order(duel_report: podium.Report) -> None:
    ax = _new_ax()
    plot.comparison(duel_report, "pair_error", models=["trueskill", "elo"], ax=ax)
    assert [bar.get_height() for bar in ax.patches] == [duel_report["trueskill"]["pair_error"],
                                                       duel_report["elo"]["pair_error"]]


def test_comparison_of_several_reports_is_grouped(duel_report: podium.Report, ffa_report: podium.Report,
                                                  tmp_path: Path) -> None:
    groups = {"duels": duel_report, "three teams": ffa_report}
    ax = _new_ax()
    fig = plot.comparison(groups, "pair_log_loss", ax=ax)
    assert fig is ax.figure
    names = ["elo", "trueskill", "plackett-luce"]  # every model, in order of first appearance
    assert len(ax.containers) == len(names)
    assert len(ax.patches) == len(names) * len(groups)
    for container, name in zip(ax.containers, names):
        assert container.get_label() == name
        heights = [bar.get_height() for bar in container]
        expected = [r[name]["pair_log_loss"] if name in r.scores else math.nan for r in groups.values()]
        np.testing.assert_array_equal(heights, expected)  # elo did not play the three-team history: NaN
        centers = [bar.get_x() + bar.get_width() / 2 for bar in container]
        assert np.all(np.diff(centers) > 0)
    assert math.isnan(ax.containers[0][1].get_height())
    assert [t.get_text() for t in ax.get_xticklabels()] == list(groups)
    out = tmp_path / "cmp.png"
    fig = plot.comparison(groups, "pair_error", path=out)
    assert isinstance(fig, Figure)
    _assert_png(out)


def test_comparison_writes_a_png(duel_report: podium.Report, tmp_path: Path) -> None:
    out = tmp_path / "single.png"
    fig = plot.comparison(duel_report, path=out)
    assert isinstance(fig, Figure)
    _assert_png(out)


def test_comparison_rejects_an_unknown_metric(duel_report: podium.Report) -> None:
    with pytest.raises(ValueError, match="'metric'"):
        plot.comparison(duel_report, "accuracy")
    with pytest.raises(ValueError, match="'metric'"):
        plot.comparison({"a": duel_report}, "pairs")


# -- no pyplot ---------------------------------------------------------------------------------------------------
def test_no_pyplot_figures_are_left_behind(duel_report: podium.Report, ts_league: podium.League,
                                           tmp_path: Path) -> None:
    import matplotlib.pyplot as plt

    plt.close("all")
    assert plt.get_fignums() == []
    plot.trajectories(ts_league, path=tmp_path / "a.png")
    plot.calibration(duel_report, path=tmp_path / "b.png")
    plot.comparison(duel_report, path=tmp_path / "c.png")
    plot.comparison({"x": duel_report, "y": duel_report})
    plot.calibration_bins(duel_report, "elo", 4)
    assert plt.get_fignums() == []
