"""matplotlib figures: rating trajectories (filtered or smoothed), calibration, model comparison.

Each function draws into ``ax`` when given one (for notebooks and composite figures) and otherwise makes
its own figure; it returns the :class:`matplotlib.figure.Figure` and writes it to ``path`` when given.
Figures are built without ``pyplot``, so nothing here touches a global state or needs a display.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..engine.league import League
from ..models.through_time import Smoothed
from .prequential import METRICS, Report, reliability

__all__ = ["trajectories", "calibration", "comparison", "calibration_bins"]

_EPOCH = np.datetime64("1970-01-01T00:00:00", "us")  # podium's dates are days since this moment (UTC)
_US_PER_DAY = 86_400_000_000

_LABELS = {"pair_error": "pair error", "pair_log_loss": "pair log loss", "log_likelihood": "log-likelihood per match"}


def _axes(ax: Any, size: tuple[float, float]) -> tuple[Any, Any]:
    if ax is not None:
        return ax.figure, ax
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, layout="constrained")
    return fig, fig.add_subplot()


def _finite(x: float) -> float:
    """An infinite metric (a pair predicted with probability 0) draws no bar; matplotlib cannot scale one."""
    return x if math.isfinite(x) else math.nan


def _save(fig: Any, path: str | Path | None) -> None:
    if path is not None:
        fig.savefig(path, dpi=120)


def trajectories(
    league: League | Smoothed, players: Sequence[str] | None = None, *, top: int = 5, k: float = 3.0,
    x: str = "match", ax: Any = None, path: str | Path | None = None,
) -> Any:
    """Rating trajectories with their ``mu +- k sigma`` bands (the TrueSkill paper's convergence figure).

    Parameters
    ----------
    league : League or Smoothed
        A league that kept its history (``keep_history=True``, the default): each player's rating after each
        of their matches, drawn as steps (a filter's rating changes at a match and holds until the next).
        Or the result of :meth:`podium.TrueSkillThroughTime.smooth`: each player's smoothed skill at each batch
        they played in, drawn as a line through those points (the smoothed skill is continuous in time).
    players : sequence of str, optional
        Whom to draw; default the ``top`` of the leaderboard by ``mu - k sigma`` (for a ``Smoothed``, its
        leaderboard at the history's last time).
    top : int, default 5
        How many players to draw when ``players`` is not given.
    k : float, default 3.0
        Width of the band in standard deviations, and the ``k`` of the leaderboard that picks the default
        players (models without uncertainty draw the line alone).
    x : {"match", "time"}
        Horizontal axis: the index of the match (for a ``Smoothed``, of the player's first match of each batch,
        in the history as given), or its time.  A ``Smoothed`` whose times are dates draws them as dates; one
        without times has each match at its index.
    ax : matplotlib Axes, optional
        Draw into these axes; default a new figure.
    path : str or Path, optional
        Also write the figure to this file.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        For an unknown ``x``.
    KeyError
        For a ``Smoothed``, a player in ``players`` who played no match of the history.
    """
    if x not in ("match", "time"):
        raise ValueError(f"'x' must be 'match' or 'time'. Got {x!r} instead.")
    if players is None:
        players = [row.player for row in league.leaderboard(k=k, top=top)]
    fig, ax = _axes(ax, (8.0, 4.5))
    smoothed = isinstance(league, Smoothed)  # a line through the batches, where a filter's rating holds (steps)
    dates = isinstance(league, Smoothed) and x == "time" and league.time_is_date
    for player in players:
        tr = league.trajectory(player)
        xs: Any = tr.match if x == "match" else tr.time
        if dates:  # days since 1970 -> datetime64, which matplotlib shows as dates
            xs = _EPOCH + np.round(tr.time * _US_PER_DAY).astype("timedelta64[us]")
        (line,) = ax.plot(xs, tr.mu, lw=1.4, label=player, drawstyle="default" if smoothed else "steps-post",
                          marker="o" if smoothed and len(tr.mu) == 1 else None)
        if np.any(tr.sigma > 0):
            ax.fill_between(xs, tr.mu - k * tr.sigma, tr.mu + k * tr.sigma, step=None if smoothed else "post",
                            color=line.get_color(), alpha=0.15, lw=0)
    ax.set_xlabel("match" if x == "match" else "date" if dates else "time")
    if isinstance(league, Smoothed):
        ax.set_ylabel(f"smoothed skill (band: mu ± {k:g} sigma)")
        ax.set_title(f"{type(league.model).__name__}: smoothed skill trajectories")
    else:
        ax.set_ylabel(f"rating (band: mu ± {k:g} sigma)" if league.model.prior.sigma > 0 else "rating")
        ax.set_title(f"{type(league.model).__name__}: rating trajectories")
    ax.grid(alpha=0.3)
    if players:
        ax.legend(fontsize="small", loc="best")
    _save(fig, path)
    return fig


def calibration_bins(report: Report, name: str, bins: int = 10
                     ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]:
    """``name``'s pairs in ``report`` grouped by predicted probability: :func:`podium.evaluation.prequential.reliability`
    (``(mean predicted, observed frequency, count)`` per non-empty bin, each pair from both sides)."""
    p_first, won_first = report.pair_predictions(name)
    return reliability(p_first, won_first, bins)


def calibration(
    report: Report, models: Sequence[str] | None = None, *, bins: int = 10, ax: Any = None,
    path: str | Path | None = None,
) -> Any:
    """Predicted against observed pair outcomes (the reliability diagram): a well-calibrated model lies on the
    diagonal.

    Every decided pair of the evaluated matches contributes the model's probability that each team finishes
    ahead and whether it did (:func:`calibration_bins`); the marker area grows with the number of pairs, and
    the counts per bin are drawn as bars on a second axis (right, logarithmic), so a bin's weight is readable.
    The legend gives each model's expected calibration error (``report[name]["calibration_error"]``).
    """
    fig, ax = _axes(ax, (5.5, 5.0))
    ax.plot([0, 1], [0, 1], color="0.6", lw=1, ls="--", label="perfect")
    counts_ax = ax.twinx()
    names = [n for n in (models or report.models) if report[n].get("pairs", 0) and
             math.isfinite(report[n].get("calibration_error", math.nan))]
    width = 1.0 / max(bins, 1) / max(len(names), 1)
    for j, name in enumerate(names):
        pred, obs, count = calibration_bins(report, name, bins)
        ece = report[name].get("calibration_error", math.nan)
        (line,) = ax.plot(pred, obs, marker="o", lw=1.2, label=f"{name} (ECE {ece:.3f})")
        if len(count):  # a report with no decided pairs draws the diagonal alone
            ax.scatter(pred, obs, s=8 + 80 * count / max(count.max(), 1), alpha=0.3, color=line.get_color())
            left = np.floor(np.minimum(pred, 1 - 1e-12) * bins) / bins + j * width
            counts_ax.bar(left, count, width=width, align="edge", color=line.get_color(), alpha=0.25,
                          label=f"{name} pairs")
    counts_ax.set_yscale("log")
    counts_ax.set_ylabel("pairs per bin (bars)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("predicted P(ahead), each pair from both sides")
    ax.set_ylabel("observed frequency")
    ax.set_title(f"calibration ({report.pairs:,} pairs)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", loc="upper left")
    _save(fig, path)
    return fig


def comparison(
    reports: Report | Mapping[str, Report], metric: str = "pair_log_loss", *, models: Sequence[str] | None = None,
    ax: Any = None, path: str | Path | None = None,
) -> Any:
    """A bar chart of one metric per model; given several reports (e.g. one per data set), grouped bars."""
    if metric not in METRICS:
        raise ValueError(f"'metric' must be one of {METRICS}. Got {metric!r} instead.")
    groups = {"": reports} if isinstance(reports, Report) else dict(reports)
    if not groups:
        raise ValueError("'reports' must be a Report or a non-empty mapping of names to reports. Got an empty mapping.")
    names = list(models) if models is not None else list(dict.fromkeys(n for r in groups.values() for n in r.models))
    single = isinstance(reports, Report)
    fig, ax = _axes(ax, (max(5.0, 1.5 + 0.45 * len(names) * len(groups)), 4.0))
    if single:  # one bar per model, named on the axis
        only = groups[""]
        values = [_finite(only.scores[n][metric]) if n in only.scores else math.nan for n in names]
        colors = [f"C{j % 10}" for j in range(len(names))]
        ax.bar(np.arange(len(names)), values, color=colors, width=0.75)
        ax.set_xticks(np.arange(len(names)), names, rotation=35, ha="right", fontsize="small")
    else:
        width = 0.8 / max(len(names), 1)
        for j, name in enumerate(names):
            values = [_finite(r.scores[name][metric]) if name in r.scores else math.nan for r in groups.values()]
            positions = np.arange(len(groups)) + (j - (len(names) - 1) / 2) * width
            ax.bar(positions, values, width=width * 0.95, label=name)
        ax.set_xticks(np.arange(len(groups)), list(groups), rotation=20 if len(groups) > 4 else 0)
        ax.legend(fontsize="small", ncols=min(len(names), 4))
    finite = [v for r in groups.values() for n in names if n in r.scores
              for v in [r.scores[n][metric]] if math.isfinite(v)]
    if single and finite and min(finite) > 0:  # losses sit close together far from 0: show where they differ
        lo, hi = min(finite), max(finite)
        ax.set_ylim(max(0.0, lo - 0.25 * (hi - lo) - 0.02 * hi), hi + 0.1 * (hi - lo) + 0.01 * hi)
    ax.set_ylabel(_LABELS[metric] + (" (higher is better)" if metric == "log_likelihood" else " (lower is better)"))
    ax.grid(axis="y", alpha=0.3)
    _save(fig, path)
    return fig
