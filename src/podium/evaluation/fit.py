"""Hyperparameter fitting: choose a model's hyperparameters on the first part of a history, score the rest.

A whole-history smoother (:class:`podium.TrueSkillThroughTime`) is fitted by its evidence instead
(``metric="log_evidence"``): ``log P(outcomes)`` of the training part, maximized; the held-out score is
``log P(held-out outcomes | training outcomes)`` per match, the smoother's counterpart of a filter's held-out
mean log-likelihood.

The objective is a metric of :func:`podium.evaluate` (default ``pair_log_loss``) over the first ``split`` of
the history in time order, computed by the compiled replay.  Parameters are optimized in an unconstrained
space -- ``log`` for positive ones, ``logit`` for probabilities -- by scipy: bounded Brent for one
parameter, Nelder-Mead for several (the objective is a replay, so it has no cheap gradient, and Nelder-Mead
needs none).  The held-out part is touched once, after the search, to score the chosen model: every match
is still predicted from the ratings before it, so the fitted model rates the training part and then
predicts the rest match by match.

With an ``executor`` (any :class:`concurrent.futures.Executor`, such as a cluster's
``dask.distributed.Client(...).get_executor()``) the work is spread without changing the result: a list of
models is fitted one model per task, and a single model's search sends the replays it can run at once --
the starting point's and, for Nelder-Mead, the initial simplex's -- as tasks, then continues in order,
taking those values when the search asks for them.  The search makes the same decisions on the same
values, so the fit is the same as without an executor.
"""

from __future__ import annotations

import functools
import math
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from typing import Any, Union, overload

import numpy as np

from ..data.match import Match
from ..data.matches import Matches
from ..models.base import Model, split_fit_name
from ..models.through_time import TrueSkillThroughTime
from ..models.trueskill import ConvergenceWarning
from .prequential import (Report, _as_matches, _check_count, _check_executor, _check_metric, _gather, _score, Structure,
                       evaluate)

__all__ = ["FitResult", "FitWarning", "fit"]


class FitWarning(UserWarning):
    """:func:`podium.fit` chose a hyperparameter at a bound of its search range (:attr:`FitResult.at_bound`): the
    history pushes it to a limit (a draw probability of 0 or 1, no dynamics) or does not determine it."""


@dataclass(frozen=True)
class FitResult:
    """What :func:`fit` found.

    Attributes
    ----------
    model : Model or TrueSkillThroughTime
        The model with the fitted hyperparameters (the others as given).
    score : float
        The metric on the held-out part (matches ``split`` onwards), never seen by the search; for
        ``log_evidence``, ``log P(held-out outcomes | training outcomes)`` per held-out match.
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
    at_bound : tuple of str
        The fitted hyperparameters the search left at a bound of its range (each also a :class:`FitWarning`):
        worth a look before the model is used, since a limit (a draw probability near 1, a ``tau`` of 1e-6) is
        more often a flat or misread direction than the history's answer.
    """

    model: Model | TrueSkillThroughTime
    score: float
    train_score: float
    params: dict[str, float]
    metric: str
    split: int
    evaluations: int
    seconds: float
    report: Report
    at_bound: tuple[str, ...] = ()

    def __iter__(self) -> Any:  # ``model, score = podium.fit(...)``
        return iter((self.model, self.score))


def _to_free(domain: str, value: float, unit: float = 1.0) -> float:
    """A hyperparameter in the search's free coordinates: logit of a probability, log of a positive value,
    ``asinh(value / unit)`` of a real one (an advantage: linear near 0 in steps of the model's ``unit``, either
    sign, logarithmic far out)."""
    if domain == "probability":
        value = min(max(value, 1e-6), 1.0 - 1e-6)
        return math.log(value / (1.0 - value))
    if domain == "real":
        return math.asinh(value / unit)
    return math.log(value)


def _from_free(domain: str, x: float, unit: float = 1.0) -> float:
    if domain == "probability":
        return 1.0 / (1.0 + math.exp(-x)) if x > -700 else 0.0
    if domain == "real":
        return unit * math.sinh(min(max(x, -700.0), 700.0))
    return math.exp(min(x, 700.0))


#: What :func:`fit` fits: a podium model class (from its defaults) or instance (from its values).
FitModel = Union[type[Model], Model, type[TrueSkillThroughTime], TrueSkillThroughTime]


@overload
def fit(model: FitModel, matches: Matches | Iterable[Match], *, params: Sequence[str] | None = ...,
        metric: str | None = ..., split: float = ..., min_games: int = ..., max_evaluations: int | None = ...,
        executor: Executor | None = ...) -> FitResult: ...


@overload
def fit(model: list[FitModel] | tuple[FitModel, ...], matches: Matches | Iterable[Match], *,
        params: Sequence[str] | None = ..., metric: str | None = ..., split: float = ..., min_games: int = ...,
        max_evaluations: int | None = ..., executor: Executor | None = ...) -> list[FitResult]: ...


def fit(
    model: FitModel | list[FitModel] | tuple[FitModel, ...],
    matches: Matches | Iterable[Match],
    *,
    params: Sequence[str] | None = None,
    metric: str | None = None,
    split: float = 0.7,
    min_games: int = 0,
    max_evaluations: int | None = None,
    executor: Executor | None = None,
) -> FitResult | list[FitResult]:
    """Choose hyperparameters by minimizing a prequential metric on the first part of a history.

    Parameters
    ----------
    model : podium model class or instance, or a list or tuple of them
        What to fit: a class starts from its defaults; an instance starts from its values and keeps those
        it is not asked to fit.  Several models are each fitted on the history as if alone, with the same
        other arguments (so ``params`` must suit every one of them; the default usually does), and a list of
        results is returned in their order.
    matches : Matches or iterable of Match
        The history, in the order played.
    params : sequence of str, optional
        The hyperparameters to fit.  TrueSkill: any of ``beta``, ``tau``, ``sigma``, ``draw_probability``,
        ``drift``, ``advantage``, ``margin_scale``, ``margin_noise``, ``newcomer`` (default ``beta``, ``tau`` and each
        of the others the history informs: ``draw_probability`` where two teams drew, ``newcomer`` where teams'
        sizes differ, the advantage and margins where recorded; ``sigma`` is left fixed because scaling ``sigma``,
        ``beta``, ``tau`` and ``drift`` together changes no prediction).  The Elo family and Thurstone: ``k``,
        ``spread``, ``provisional``, ``scale``, ``advantage``, ``newcomer`` and the margin's parameters (default
        ``k``, ``provisional`` and, where the history informs them, ``spread``, ``advantage``, ``newcomer`` and the
        margin's; ``scale`` trades off exactly against ``k``).  Glicko2: ``tau``, ``period``, ``rd``,
        ``volatility`` (default ``tau``, ``rd`` and, when the matches have times, ``period``, started at the median
        time between a player's matches).  TrueSkillThroughTime: any of ``beta``, ``gamma``, ``sigma``,
        ``draw_probability`` and the fields' (default ``beta``, ``gamma`` and, where the history has draws,
        ``draw_probability``).
    metric : {"pair_log_loss", "pair_error", "log_likelihood", "log_evidence"}
        What to optimize (the log-likelihood and the evidence are maximized); default ``log_likelihood`` for a
        filter when ``draw_probability`` is among the parameters, else ``pair_log_loss``, and ``log_evidence``, the
        only one it has, for TrueSkillThroughTime.  ``pair_error`` is a step function of the parameters, which
        Nelder-Mead handles only roughly; it is better as a report than a target.  The pair metrics ignore drawn
        pairs, so under them TrueSkill's ``draw_probability`` is free to run (to 0.99999 with ``beta`` 30 on a
        real team history with 31 % draws); ``log_likelihood`` scores every outcome, draws included.
    split : float in (0, 1)
        The fraction of the history, in time order, to fit on; the rest is held out.  With
        ``metric="log_evidence"`` it may be 1: the evidence needs no held-out part (``score`` is then NaN).
    min_games : int
        Score only matches in which every player had played at least this many earlier matches.
    max_evaluations : int, optional
        At most this many replays of the training part during the search (default 40 for one parameter, 80
        per parameter otherwise); ``0`` keeps the starting point.
    executor : concurrent.futures.Executor, optional
        Where to run the replays (a ``ThreadPoolExecutor``, a ``ProcessPoolExecutor``, or a cluster's:
        ``dask.distributed.Client(...).get_executor()``).  With several models, each model's whole fit is one
        task, which carries the history (once per model).  With one model, the replays the search can run
        at once are tasks: the starting point and, when several parameters are fitted, Nelder-Mead's initial
        simplex (one replay each, each carrying the training part); the rest of the search runs here, in
        order, since each of its steps depends on the last.  Either way the result is the one found without
        an executor (the same values at the same steps: podium's replays are deterministic), but for
        ``seconds``.  A process or cluster executor pickles the models and the history; each worker process
        compiles podium's kernels on first use (or loads numba's cache), a cost a short fit can notice.

    Returns
    -------
    FitResult or list of FitResult
        The fitted model, its held-out score and the search's details (``model, score = fit(...)`` works);
        a list of them, in order, when ``model`` is a list or tuple.

    Warns
    -----
    FitWarning
        When the search leaves a parameter at a bound of its range (:attr:`FitResult.at_bound`); a non-negative one
        (``tau``, ``provisional``, ``spread``, ...) that runs to its floor is set to 0, the model without it, and
        not flagged.

    Examples
    --------
    >>> import podium
    >>> sim = podium.simulate(200, 5000, seed=3)
    >>> result = podium.fit(podium.Elo, sim.matches)
    >>> result.params["k"] > 0
    True
    >>> [r.model.__class__.__name__ for r in podium.fit([podium.Elo, podium.PlackettLuce], sim.matches)]
    ['Elo', 'PlackettLuce']
    """
    began = time.perf_counter()
    executor = _check_executor(executor)
    if isinstance(model, (list, tuple)):
        return _fit_many(list(model), matches, executor, params=params, metric=metric, split=split,
                         min_games=min_games, max_evaluations=max_evaluations)
    if not _fittable(model):
        raise TypeError(f"'model' must be a podium model class or instance, or a list of them. Got {model!r:.80}.")
    base = model() if isinstance(model, type) else model
    smoother = isinstance(base, TrueSkillThroughTime)
    chosen = metric
    if metric is None:
        metric = "log_evidence" if smoother else "pair_log_loss"
    if smoother and metric != "log_evidence":
        raise ValueError(f"TrueSkillThroughTime is fitted by metric='log_evidence' (a smoother predicts nothing "
                         f"before a match). Got {metric!r}.")
    if not smoother and metric == "log_evidence":
        raise ValueError("metric='log_evidence' is for whole-history smoothers; a filter's evidence is its summed "
                         "prequential log-likelihood: use metric='log_likelihood'.")
    cls = type(base)
    space = cls._fit_space
    names = list(cls._fit_default if params is None else params)
    if isinstance(params, str) or not names:
        raise ValueError(f"'params' must be a non-empty list of names among {list(space)}. Got {params!r}.")
    for name in names:
        if not isinstance(name, str) or not base._fit_known(name):
            raise ValueError(f"{cls.__name__} cannot fit {name!r}; 'params' must be among {list(space)} (and "
                             "'advantage[context]' for a podium.ByContext advantage).")
    if len(set(names)) != len(names):
        raise ValueError(f"'params' names a parameter twice: {names!r}.")
    if not smoother:
        metric = _check_metric(metric)
    whole = smoother and split == 1
    if isinstance(split, bool) or not isinstance(split, (int, float)) or not (0.0 < split < 1.0 or whole):
        raise ValueError(f"'split' must be a float in (0, 1){' or 1' if smoother else ''}. Got {split!r} instead.")
    min_games = _check_count("min_games", min_games)
    packed = _as_matches(matches)
    cut = int(round(split * len(packed)))
    if cut < 1 or (cut >= len(packed) and not whole):
        raise ValueError(f"'split' = {split!r} of {len(packed)} matches leaves no training or no held-out match.")
    if params is None:  # leave out what this history cannot inform (a team spread in one-on-one games)
        names = base._fit_expand([n for n in names if base._fit_informed(n, packed)], packed[:cut])
    if chosen is None and "draw_probability" in names and not smoother:
        # The pair metrics score decided pairs only: a draw probability searched under them is free to run to 1
        # (on a real team history with 31 % draws it went to 0.99999 with beta 30).  Score every outcome.
        metric = "log_likelihood"
    base = base._fit_prepare(packed, names)
    if max_evaluations is None:
        max_evaluations = 40 if len(names) == 1 else 80 * len(names)
    max_evaluations = _check_count("max_evaluations", max_evaluations)

    if isinstance(base, TrueSkillThroughTime):
        return _fit_smoother(base, packed, names, cut, max_evaluations, began, executor)
    filt: Model = base
    train = Structure(packed[:cut], 0, min_games)  # the search sees only this slice
    scored = int(train.scored.sum()) if metric == "log_likelihood" else int(train.counted.sum())
    if scored == 0:
        raise ValueError(
            f"Nothing to fit on: the first {cut} matches ('split' = {split!r}) have no "
            f"{'scored match' if metric == 'log_likelihood' else 'decided pair'} with 'min_games' = {min_games}.")
    score = functools.partial(_score, s=train, metric=metric)  # picklable, for a process executor
    fitted, train_value, evaluations, at_bound = _optimize(filt, names, score, max_evaluations, executor)
    report = evaluate(packed, {cls.__name__: fitted}, min_games=min_games, start=cut)
    sign = -1.0 if metric == "log_likelihood" else 1.0
    return _result(fitted, report[cls.__name__][metric], sign * train_value, names, metric, cut, evaluations,
                   began, report, at_bound)


def _result(fitted: Any, score: float, train_score: float, names: list[str], metric: str, cut: int, evaluations: int,
            began: float, report: Report, at_bound: tuple[str, ...]) -> FitResult:
    """The :class:`FitResult`, with a :class:`FitWarning` for each parameter left at a bound of its range."""
    params = {n: fitted._fit_value(n) for n in names}
    if at_bound:
        found = ", ".join(f"{n} = {params[n]:.6g}" for n in at_bound)
        warnings.warn(FitWarning(
            f"podium.fit left {found} of {type(fitted).__name__} at a bound of the search range: the history pushes "
            f"{'it' if len(at_bound) == 1 else 'them'} to a limit or does not determine "
            f"{'it' if len(at_bound) == 1 else 'them'} (FitResult.at_bound). Check the value, or fix it and fit the "
            "rest ('params')."), stacklevel=3)
    return FitResult(model=fitted, score=score, train_score=train_score, params=params, metric=metric, split=cut,
                     evaluations=evaluations, seconds=time.perf_counter() - began, report=report, at_bound=at_bound)


def _fittable(model: Any) -> bool:
    """Whether :func:`fit` can fit ``model``: a filter or the smoother, as a class or an instance."""
    kinds = (Model, TrueSkillThroughTime)
    return isinstance(model, kinds) or (isinstance(model, type) and issubclass(model, kinds))


def _fit_many(models: list[Any], matches: Matches | Iterable[Match], executor: Executor | None,
              **options: Any) -> list[FitResult]:
    """:func:`fit` of each of ``models`` on ``matches`` with the same ``options``: one task per model with an
    executor (each task fits its model alone, without an executor), else one after the other."""
    if not models:
        raise ValueError("'model' is an empty list; give at least one podium model class or instance.")
    for m in models:
        if not _fittable(m):
            raise TypeError(f"'model' must be a podium model class or instance, or a list of them. "
                            f"Got {m!r:.80} in the list.")
    packed = _as_matches(matches)  # packed once, and what a task carries
    if executor is None:
        return [fit(m, packed, **options) for m in models]
    return _gather([executor.submit(_fit_one, m, packed, options) for m in models])


def _fit_one(model: FitModel, matches: Matches, options: dict[str, Any]) -> FitResult:
    """One model's :func:`fit`, as an executor's task."""
    return fit(model, matches, **options)


def _quiet_score(score: Callable[[Any], float], model: Any) -> float:
    """``score(model)`` without ConvergenceWarnings, as an executor's task (the search ignores them too)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return score(model)


def _optimize(base: Any, names: list[str], score: Callable[[Any], float], max_evaluations: int,
              executor: Executor | None = None) -> tuple[Any, float, int, tuple[str, ...]]:
    """Minimize ``score(model)`` over the hyperparameters ``names`` of ``base`` (the others kept): the search's best
    point, or ``base`` itself if nothing beat it (or the budget was 0); its score; how many models were scored; the
    names the best point left at a bound of the search's box (:func:`_at_bound`; none when ``base`` is kept).

    With an ``executor``, the points the search will evaluate first regardless of their values (the initial
    simplex, :func:`_first_points`) and ``base`` are scored as its tasks first; the search then takes those
    values in its own order, so its decisions, and the result, are the same as without one."""
    cls = type(base)
    domains = [cls._fit_space[split_fit_name(n)[0]] for n in names]
    units = [base._fit_unit(split_fit_name(n)[0]) for n in names]
    x0 = np.array([_to_free(d, base._fit_start(n), u) for n, d, u in zip(names, domains, units)])
    evaluations = 0
    best_seen: list[Any] = [x0, math.inf]  # the search stops at the budget and keeps the best point so far

    def build(x: Sequence[float] | np.ndarray) -> Any:
        return cls(**base._fit_params({n: _from_free(d, float(v), u) for n, d, v, u in zip(names, domains, x, units)}))

    ahead: dict[bytes, Future[float]] = {}  # scores sent ahead to the executor, by the point's bytes
    start_future: Future[float] | None = None
    if executor is not None:
        start_future = executor.submit(_quiet_score, score, base)
        for point in _first_points(x0, domains)[:max_evaluations]:
            try:
                candidate = build(point)
            except ValueError:  # the search scores it as inf without a replay
                continue
            ahead.setdefault(point.tobytes(), executor.submit(_quiet_score, score, candidate))

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
        sent = ahead.pop(point.tobytes(), None)
        value = sent.result() if sent is not None else score(candidate)
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
        except BaseException:
            for f in [*ahead.values(), *([start_future] if start_future is not None else [])]:
                f.cancel()
            raise
        fitted, value = build(best_seen[0]), float(best_seen[1])
        start = start_future.result() if start_future is not None else score(base)
        if not start >= value:
            return base, start, evaluations, ()
        edges = _at_bound(names, best_seen[0], x0, domains)
        # A non-negative parameter at the floor (no dynamics, no provisional steps) is the model without it, a value
        # of its range rather than a bound: take 0 itself where it scores no worse, and do not flag it.
        floor = {n: 0.0 for n, side in edges if side < 0 and cls._fit_space[split_fit_name(n)[0]] == "non_negative"}
        if floor:
            values = {n: _from_free(d, float(v), u) for n, d, v, u in zip(names, domains, best_seen[0], units)}
            try:
                zero = cls(**base._fit_params({**values, **floor}))
            except ValueError:  # a model that does not take 0 after all keeps the search's point
                zero = None
            if zero is not None:
                evaluations += 1
                at_zero = score(zero)
                if at_zero <= value:
                    fitted, value = zero, at_zero
    return fitted, value, evaluations, tuple(n for n, _ in edges if n not in floor)


def _at_bound(names: list[str], x: np.ndarray, x0: np.ndarray, domains: list[str]) -> list[tuple[str, int]]:
    """The names whose free coordinate in ``x`` is within 5 % of the box's width of a bound of :func:`_bounds`
    (logit 11.4 of 12: a probability of 0.99999; a positive value within a factor 2.2 of its floor), each with -1
    for the lower bound and +1 for the upper."""
    box = _bounds(x0, domains)
    return [(n, -1 if v - lo < hi - v else 1) for n, v, (lo, hi) in zip(names, x, box)
            if min(v - lo, hi - v) < 0.05 * (hi - lo)]


def _negative_evidence(candidate: TrueSkillThroughTime, train: Matches) -> float:
    """Minus the smoother's log evidence per match of ``train`` (the first pass gives it)."""
    return -candidate.smooth(train, max_iterations=0).log_evidence / len(train)


def _fit_smoother(base: TrueSkillThroughTime, packed: Matches, names: list[str], cut: int, max_evaluations: int,
                  began: float, executor: Executor | None = None) -> FitResult:
    """Maximize the smoother's log evidence per match of the first ``cut`` matches over ``names``."""
    score = functools.partial(_negative_evidence, train=packed[:cut])  # picklable, for a process executor
    fitted, train_value, evaluations, at_bound = _optimize(base, names, score, max_evaluations, executor)
    name = type(base).__name__
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        report = evaluate(packed, {name: fitted}, start=cut)
    return _result(fitted, report[name]["log_likelihood"], -train_value, names, "log_evidence", cut, evaluations,
                   began, report, at_bound)


class _Budget(Exception):
    """The search used its ``max_evaluations``."""


def _bounds(x0: np.ndarray, domains: list[str]) -> list[tuple[float, float]]:
    """Nelder-Mead's box in free coordinates.  Bounds keep a parameter the data does not constrain (tau on a
    history of luck, a draw probability without draws) from wandering to 1e-70 while the search spends its
    budget there."""
    return [(-12.0, 12.0) if d == "probability" else ((-8.0, 8.0) if d == "real" else (x - 10.0, x + 6.0))
            for d, x in zip(domains, x0)]


def _simplex(x0: np.ndarray, bounds: list[tuple[float, float]]) -> tuple[np.ndarray, np.ndarray]:
    """The starting point clipped to the box (a draw probability of 0 starts at -12) and the initial simplex."""
    x0 = np.clip(x0, [lo for lo, _ in bounds], [hi for _, hi in bounds])
    return x0, np.vstack([x0] + [x0 + 0.7 * e for e in np.eye(len(x0))])


def _first_points(x0: np.ndarray, domains: list[str]) -> list[np.ndarray]:
    """The points :func:`_search` evaluates first whatever their values, as it will pass them: Nelder-Mead's
    initial simplex after scipy's treatment of bounds (a vertex above its upper bound reflected into the box,
    then clipped); none for one parameter (bounded Brent's points each depend on the last).  A point that
    differs from the search's is merely scored twice: the search replays it itself."""
    if len(x0) == 1:
        return []
    bounds = _bounds(x0, domains)
    lower, upper = np.array([lo for lo, _ in bounds]), np.array([hi for _, hi in bounds])
    sim = _simplex(x0, bounds)[1]
    sim = np.clip(np.where(sim > upper, 2 * upper - sim, sim), lower, upper)
    return [np.array(row, dtype=float) for row in sim]


def _search(objective: Any, x0: np.ndarray, domains: list[str], max_evaluations: int) -> None:
    """Minimize ``objective`` from ``x0`` (free coordinates); the objective keeps its best point."""
    from scipy.optimize import minimize, minimize_scalar  # here: scipy.optimize is a third of a second to import

    if len(x0) == 1:
        minimize_scalar(objective, bounds=_bounds(x0, domains)[0], method="bounded",
                        options={"xatol": 1e-3, "maxiter": max_evaluations})
    else:
        bounds = _bounds(x0, domains)
        x0, simplex = _simplex(x0, bounds)
        minimize(objective, x0, method="Nelder-Mead", bounds=bounds,
                 options={"initial_simplex": simplex, "xatol": 1e-2, "fatol": 1e-6, "maxfev": max_evaluations})

