"""podium.evaluation.plot.trajectories of a TrueSkill Through Time result: lines through the smoothed means, mu +- k sigma
bands, dates drawn as dates, and the leaderboard's top by default."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure

import podium
from podium.evaluation import plot

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _new_ax() -> Any:
    return Figure().add_subplot()


def _bands(ax: Any) -> list[PolyCollection]:
    return [c for c in ax.collections if isinstance(c, PolyCollection)]


def _vertices(band: PolyCollection) -> np.ndarray:
    return np.concatenate([np.asarray(path.vertices) for path in band.get_paths()])


@pytest.fixture(scope="module")
def smoothed() -> podium.Smoothed:
    """Duels at times that are not the match indices (three matches a batch), then a newcomer who beats three
    leaders: high mu but a wide sigma, so the leaderboard's k changes who is on top."""
    sim = podium.simulate(24, 360, seed=3)
    matches = [podium.Match(m.teams, m.ranks, time=100.0 + 2.5 * (j // 3)) for j, m in enumerate(sim.matches)]
    first = podium.TrueSkillThroughTime().smooth(matches)
    leaders = [row.player for row in first.leaderboard(k=0, top=3)]
    matches += [podium.Match([["newcomer"], [leaders[i]]], [0, 1], time=500.0) for i in range(3)]
    return podium.TrueSkillThroughTime().smooth(matches)


@pytest.fixture(scope="module")
def dated() -> podium.Smoothed:
    sim = podium.simulate(12, 150, seed=4)
    start = dt.datetime(2021, 6, 1, 12, 0)
    return podium.TrueSkillThroughTime(gamma=0.1).smooth(
        [podium.Match(m.teams, m.ranks, time=start + dt.timedelta(days=j // 5)) for j, m in enumerate(sim.matches)])


def test_one_line_per_player_through_the_smoothed_means(smoothed: podium.Smoothed) -> None:
    players = smoothed.players[2:6]
    ax = _new_ax()
    fig = plot.trajectories(smoothed, players, ax=ax)
    assert fig is ax.figure
    lines = ax.get_lines()
    assert len(lines) == len(players)
    for line, player in zip(lines, players):
        tr = smoothed.trajectory(player)
        assert line.get_label() == player
        assert len(tr.mu) > 5
        np.testing.assert_array_equal(line.get_ydata(), tr.mu)
        np.testing.assert_array_equal(line.get_xdata(), tr.match)
        assert line.get_drawstyle() == "default"  # a line through the points, not steps
    assert ax.get_xlabel() == "match"
    assert "smoothed" in ax.get_title() and "TrueSkillThroughTime" in ax.get_title()


def test_x_time_draws_the_batch_times(smoothed: podium.Smoothed) -> None:
    players = smoothed.players[:3]
    ax = _new_ax()
    plot.trajectories(smoothed, players, x="time", ax=ax)
    for line, player in zip(ax.get_lines(), players):
        tr = smoothed.trajectory(player)
        assert not np.array_equal(tr.time, tr.match)
        np.testing.assert_array_equal(line.get_xdata(), tr.time)
    assert ax.get_xlabel() == "time"


@pytest.mark.parametrize("k", [3.0, 2.0, 0.5])
def test_the_bands_span_mu_plus_minus_k_sigma(smoothed: podium.Smoothed, k: float) -> None:
    players = smoothed.players[:4]
    ax = _new_ax()
    plot.trajectories(smoothed, players, k=k, x="time", ax=ax)
    bands = _bands(ax)
    assert len(bands) == len(players)
    for band, line, player in zip(bands, ax.get_lines(), players):
        tr = smoothed.trajectory(player)
        vertices = _vertices(band)
        for edge in (tr.mu + k * tr.sigma, tr.mu - k * tr.sigma):  # every point of both edges is a vertex
            for x, y in zip(tr.time, edge):
                assert np.min(np.hypot(vertices[:, 0] - x, vertices[:, 1] - y)) < 1e-9
        assert vertices[:, 1].max() == pytest.approx(float(np.max(tr.mu + k * tr.sigma)), rel=1e-12)
        assert vertices[:, 1].min() == pytest.approx(float(np.min(tr.mu - k * tr.sigma)), rel=1e-12)
        assert vertices[:, 0].min() == tr.time[0] and vertices[:, 0].max() == tr.time[-1]
        np.testing.assert_allclose(np.asarray(band.get_facecolor())[0, :3], np.asarray(_rgb(line.get_color())))
    assert f"mu ± {k:g} sigma" in ax.get_ylabel()


def _rgb(color: Any) -> tuple[float, float, float]:
    from matplotlib.colors import to_rgb

    return to_rgb(color)


@pytest.mark.parametrize(("k", "top"), [(3.0, 5), (0.0, 3)])
def test_default_players_are_the_top_of_the_leaderboard(smoothed: podium.Smoothed, k: float, top: int) -> None:
    ax = _new_ax()
    plot.trajectories(smoothed, k=k, top=top, ax=ax)
    expected = [row.player for row in smoothed.leaderboard(k=k, top=top)]
    assert expected != [row.player for row in smoothed.leaderboard(k=3.0 - k, top=top)]  # k decides the order
    assert (expected[0] == "newcomer") == (k == 0.0)  # the highest mu, not the highest mu - 3 sigma
    assert [line.get_label() for line in ax.get_lines()] == expected
    for line, player in zip(ax.get_lines(), expected):
        np.testing.assert_array_equal(line.get_ydata(), smoothed.trajectory(player).mu)


def test_the_default_is_the_top_five_by_mu_minus_three_sigma(smoothed: podium.Smoothed, tmp_path: Path) -> None:
    out = tmp_path / "smooth.png"
    fig = plot.trajectories(smoothed, path=out)
    assert isinstance(fig, Figure)
    expected = [row.player for row in smoothed.leaderboard(k=3, top=5)]
    assert len(expected) == 5
    assert [line.get_label() for line in fig.axes[0].get_lines()] == expected
    data = out.read_bytes()
    assert data[:8] == PNG_MAGIC and len(data) > 1000


def test_a_single_batch_is_drawn_as_a_point(smoothed: podium.Smoothed) -> None:
    ax = _new_ax()
    plot.trajectories(smoothed, ["newcomer", smoothed.players[0]], ax=ax)
    newcomer, other = ax.get_lines()
    assert len(smoothed.trajectory("newcomer").mu) == 1  # three matches, one batch
    assert newcomer.get_marker() == "o" and other.get_marker() in ("None", None, "")


def test_dates_are_drawn_as_dates(dated: podium.Smoothed) -> None:
    import matplotlib.dates as mdates

    assert dated.time_is_date
    players = dated.players[:3]
    ax = _new_ax()
    plot.trajectories(dated, players, x="time", k=2.0, ax=ax)
    assert ax.get_xlabel() == "date"
    for line, band, player in zip(ax.get_lines(), _bands(ax), players):
        tr = dated.trajectory(player)
        xs = np.asarray(line.get_xdata())
        assert np.issubdtype(xs.dtype, np.datetime64)
        days = (xs - np.datetime64("1970-01-01T00:00:00")) / np.timedelta64(1, "D")
        np.testing.assert_allclose(days, tr.time, rtol=0, atol=1e-9)
        assert str(xs[0].astype("datetime64[m]")).endswith("T12:00")  # noon, as given, not midnight
        vertices = _vertices(band)  # matplotlib's date numbers
        np.testing.assert_allclose(np.sort(np.unique(vertices[:, 0])), mdates.date2num(xs), rtol=0, atol=1e-9)
        assert vertices[:, 1].max() == pytest.approx(float(np.max(tr.mu + 2.0 * tr.sigma)), rel=1e-12)
    fig = ax.figure
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert labels and not any(label.replace(".", "").replace("−", "").isdigit() for label in labels)
    # x="match" still draws the match index
    ax = _new_ax()
    plot.trajectories(dated, players[:1], ax=ax)
    np.testing.assert_array_equal(ax.get_lines()[0].get_xdata(), dated.trajectory(players[0]).match)


def test_unknown_times_are_the_match_index(tmp_path: Path) -> None:
    sim = podium.simulate(8, 60, seed=9)
    smoothed = podium.TrueSkillThroughTime().smooth([podium.Match(m.teams, m.ranks) for m in sim.matches])
    assert not smoothed.time_is_date
    ax = _new_ax()
    plot.trajectories(smoothed, smoothed.players[:2], x="time", ax=ax)
    for line, player in zip(ax.get_lines(), smoothed.players[:2]):
        tr = smoothed.trajectory(player)
        np.testing.assert_array_equal(line.get_xdata(), tr.match)
        np.testing.assert_array_equal(tr.time, tr.match)


def test_errors(smoothed: podium.Smoothed) -> None:
    with pytest.raises(ValueError, match="'x'"):
        plot.trajectories(smoothed, x="date")
    with pytest.raises(KeyError, match="nobody"):
        plot.trajectories(smoothed, ["nobody"])


def test_a_league_still_draws_steps() -> None:
    sim = podium.simulate(10, 80, seed=1)
    league = podium.League(podium.TrueSkill()).record_many(sim.matches)
    ax = _new_ax()
    plot.trajectories(league, league.players[:2], ax=ax)
    assert [line.get_drawstyle() for line in ax.get_lines()] == ["steps-post", "steps-post"]
    assert "rating trajectories" in ax.get_title()


def test_no_pyplot_figures_are_left_behind(smoothed: podium.Smoothed, tmp_path: Path) -> None:
    import matplotlib.pyplot as plt

    plt.close("all")
    plot.trajectories(smoothed, path=tmp_path / "a.png")
    plot.trajectories(smoothed, x="time")
    assert plt.get_fignums() == []
