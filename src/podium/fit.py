"""Hyperparameter fitting: choose a model's hyperparameters on the first part of a history, score the rest.

The objective is a metric of :func:`podium.evaluate` (default ``pair_log_loss``) over the first ``split`` of
the history in time order, computed by the compiled replay.  Parameters are optimized in an unconstrained
space -- ``log`` for positive ones, ``logit`` for probabilities -- by scipy: bounded Brent for one
parameter, Nelder-Mead for several (the objective is a replay, so it has no cheap gradient, and Nelder-Mead
needs none).  The held-out part is touched once, after the search, to score the chosen model: every match
is still predicted from the ratings before it, so the fitted model rates the training part and then
predicts the rest match by match.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import minimize, minimize_scalar

from .evaluate import Report, _as_matches, _check_count, _check_metric, _score, _Structure, evaluate
from .match import Match, Matches
from .models.base import Model
from .models.trueskill import ConvergenceWarning

__all__ = ["FitResult", "fit"]


@dataclass(frozen=True)
class FitResult:
    """What :func:`fit` found.

    Attributes
    ----------
    model : Model
        The model with the fitted hyperparameters (the others as given).
    score : float
        The metric on the held-out part (matches ``split`` onwards), never seen by the search.
    train_score : float
        The metric on the training part at the optimum.
    params : dict of str to float
        The fitted hyperparameters.
    metric : str
    split : int
        Index of the first held-out match.
    evaluations : int
        Replays of the training part the search ran.
    seconds : float
        Time taken, search and held-out scoring.
    report : Report
        :func:`evaluate` of the fitted model on the held-out part (every metric).
    """

    model: Model
    score: float
    train_score: float
    params: dict[str, float]
    metric: str
    split: int
    evaluations: int
    seconds: float
    report: Report

    def __iter__(self) -> Any:  # ``model, score = podium.fit(...)``
        return iter((self.model, self.score))


def _to_free(domain: str, value: float) -> float:
    if domain == "probability":
        value = min(max(value, 1e-6), 1.0 - 1e-6)
        return math.log(value / (1.0 - value))
    return math.log(value)


def _from_free(domain: str, x: float) -> float:
    if domain == "probability":
        return 1.0 / (1.0 + math.exp(-x)) if x > -700 else 0.0
    return math.exp(min(x, 700.0))


def fit(
    model: type[Model] | Model,
    matches: Matches | Iterable[Match],
    *,
    params: Sequence[str] | None = None,
    metric: str = "pair_log_loss",
    split: float = 0.7,
    min_games: int = 0,
    max_evaluations: int | None = None,
) -> FitResult:
    """Choose hyperparameters by minimizing a prequential metric on the first part of a history.

    Parameters
    ----------
    model : podium model class or instance
        What to fit: a class starts from its defaults; an instance starts from its values and keeps those
        it is not asked to fit.
    matches : Matches or iterable of Match
        The history, in the order played.
    params : sequence of str, optional
        The hyperparameters to fit.  TrueSkill: any of ``beta``, ``tau``, ``sigma``, ``draw_probability``,
        ``drift`` (default ``beta``, ``tau``, ``draw_probability``; ``sigma`` is left fixed because scaling
        ``sigma``, ``beta``, ``tau`` and ``drift`` together changes no prediction).  The Elo family and
        Thurstone: ``k``.
    metric : {"pair_log_loss", "pair_error", "log_likelihood"}
        What to optimize (the log-likelihood is maximized).  ``pair_error`` is a step function of the
        parameters, which Nelder-Mead handles only roughly; it is better as a report than a target.  The
        pair metrics ignore drawn pairs, so under them TrueSkill's ``draw_probability`` becomes the margin
        that best predicts decided pairs, not the rate of draws; ``log_likelihood`` fits the rate of draws.
    split : float in (0, 1)
        The fraction of the history, in time order, to fit on; the rest is held out.
    min_games : int
        Score only matches in which every player had played at least this many earlier matches.
    max_evaluations : int, optional
        At most this many replays of the training part during the search (default 40 for one parameter, 80
        per parameter otherwise); ``0`` keeps the starting point.

    Returns
    -------
    FitResult
        The fitted model, its held-out score and the search's details (``model, score = fit(...)`` works).

    Examples
    --------
    >>> import podium
    >>> sim = podium.simulate(200, 5000, seed=3)
    >>> result = podium.fit(podium.Elo, sim.matches)
    >>> result.params["k"] > 0
    True
    """
    began = time.perf_counter()
    base = model() if isinstance(model, type) and issubclass(model, Model) else model
    if not isinstance(base, Model):
        raise TypeError(f"'model' must be a podium model class or instance. Got {model!r:.80}.")
    cls = type(base)
    space = cls._fit_space
    names = list(cls._fit_default if params is None else params)
    if isinstance(params, str) or not names:
        raise ValueError(f"'params' must be a non-empty list of names among {list(space)}. Got {params!r}.")
    for name in names:
        if name not in space:
            raise ValueError(f"{cls.__name__} cannot fit {name!r}; 'params' must be among {list(space)}.")
    if len(set(names)) != len(names):
        raise ValueError(f"'params' names a parameter twice: {names!r}.")
    metric = _check_metric(metric)
    if isinstance(split, bool) or not isinstance(split, (int, float)) or not 0.0 < split < 1.0:
        raise ValueError(f"'split' must be a float in (0, 1). Got {split!r} instead.")
    min_games = _check_count("min_games", min_games)
    packed = _as_matches(matches)
    cut = int(round(split * len(packed)))
    if cut < 1 or cut >= len(packed):
        raise ValueError(f"'split' = {split!r} of {len(packed)} matches leaves no training or no held-out match.")
    if max_evaluations is None:
        max_evaluations = 40 if len(names) == 1 else 80 * len(names)
    max_evaluations = _check_count("max_evaluations", max_evaluations)

    train = _Structure(packed[:cut], 0, min_games)  # the search sees only this slice
    scored = int(train.scored.sum()) if metric == "log_likelihood" else int(train.counted.sum())
    if scored == 0:
        raise ValueError(
            f"Nothing to fit on: the first {cut} matches ('split' = {split!r}) have no "
            f"{'scored match' if metric == 'log_likelihood' else 'decided pair'} with 'min_games' = {min_games}.")
    fixed = base.get_params()
    domains = [space[n] for n in names]
    x0 = np.array([_to_free(d, base._fit_start(n)) for n, d in zip(names, domains)])
    evaluations = 0
    best_seen: list[Any] = [x0, math.inf]  # the search stops at the budget and keeps the best point so far

    def build(x: Sequence[float] | np.ndarray) -> Model:
        values = {n: _from_free(d, float(v)) for n, d, v in zip(names, domains, x)}
        return cls(**{**fixed, **values})

    def objective(x: Any) -> float:
        nonlocal evaluations
        if evaluations >= max_evaluations:
            raise _Budget
        evaluations += 1
        point = np.atleast_1d(np.asarray(x, dtype=float)).copy()
        try:
            candidate = build(point)
        except ValueError:  # outside the model's domain (e.g. a probability rounded to 1)
            return math.inf
        value = _score(candidate, train, metric)
        value = value if math.isfinite(value) else math.inf
        if value < best_seen[1]:
            best_seen[:] = [point, value]
        return value

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # a rare unconverged match moves the search little
        try:
            _search(objective, x0, domains, max_evaluations)
        except _Budget:
            pass
    # The search's best point; the model as given if nothing beat it (or the budget was 0).
    fitted, train_value = build(best_seen[0]), float(best_seen[1])
    start_value = _score(base, train, metric)
    if not start_value >= train_value:
        fitted, train_value = base, start_value
    report = evaluate(packed, {cls.__name__: fitted}, min_games=min_games, start=cut)
    sign = -1.0 if metric == "log_likelihood" else 1.0
    return FitResult(
        model=fitted, score=report[cls.__name__][metric], train_score=sign * train_value,
        params={n: float(getattr(fitted, n)) for n in names}, metric=metric, split=cut,
        evaluations=evaluations, seconds=time.perf_counter() - began, report=report,
    )


class _Budget(Exception):
    """The search used its ``max_evaluations``."""


def _search(objective: Any, x0: np.ndarray, domains: list[str], max_evaluations: int) -> None:
    """Minimize ``objective`` from ``x0`` (free coordinates); the objective keeps its best point."""
    if len(x0) == 1:
        minimize_scalar(objective, bounds=(x0[0] - 10.0, x0[0] + 6.0), method="bounded",
                        options={"xatol": 1e-3, "maxiter": max_evaluations})
    else:
        # Bounds keep a parameter the data does not constrain (tau on a history of luck, a draw
        # probability without draws) from wandering to 1e-70 while the search spends its budget there.
        bounds = [(-12.0, 12.0) if d == "probability" else (x - 10.0, x + 6.0) for d, x in zip(domains, x0)]
        x0 = np.clip(x0, [lo for lo, _ in bounds], [hi for _, hi in bounds])  # a draw probability of 0 starts at -12
        simplex = np.vstack([x0] + [x0 + 0.7 * e for e in np.eye(len(x0))])
        minimize(objective, x0, method="Nelder-Mead", bounds=bounds,
                 options={"initial_simplex": simplex, "xatol": 1e-2, "fatol": 1e-6, "maxfev": max_evaluations})

