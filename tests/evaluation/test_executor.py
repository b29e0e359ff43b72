"""``fit(..., executor=)`` and ``evaluate(..., executor=)``: the same results on threads, processes and a cluster."""

from __future__ import annotations

import math
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest

import podium
from podium.evaluation.fit import FitResult

from ..shared import load

FIT_MODELS: list[Any] = [podium.Elo, podium.TrueSkill, podium.PlackettLuce]


def _same_fit(a: FitResult, b: FitResult) -> None:
    assert type(a.model) is type(b.model)
    assert a.params == b.params
    assert a.model.get_params() == b.model.get_params()
    assert a.score == b.score
    assert a.train_score == b.train_score
    assert a.evaluations == b.evaluations
    assert a.split == b.split


def _same_report(a: podium.Report, b: podium.Report) -> None:
    assert list(a.scores) == list(b.scores)
    for name in a.scores:
        for key, value in a.scores[name].items():
            if key != "seconds":
                assert value == b.scores[name][key] or (math.isnan(value) and math.isnan(b.scores[name][key])), key
    assert a.challenged.keys() == b.challenged.keys()
    for name in a.challenged:
        np.testing.assert_array_equal(list(a.challenged[name].values()), list(b.challenged[name].values()))


class _Counting(ThreadPoolExecutor):
    """A thread pool that counts the tasks it is given."""

    def __init__(self) -> None:
        super().__init__(max_workers=2)
        self.tasks = 0

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.tasks += 1
        return super().submit(fn, *args, **kwargs)


@pytest.fixture(scope="module")
def chess() -> podium.Matches:
    return load("chess_worldcup")


def test_a_bad_executor_is_a_type_error_naming_the_parameter(chess: podium.Matches) -> None:
    small = chess[:50]
    with pytest.raises(TypeError, match="'executor' must be a concurrent.futures.Executor"):
        podium.fit(podium.Elo, small, executor=4)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="'executor'"):
        podium.fit([podium.Elo], small, executor="threads")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="'executor' must be a concurrent.futures.Executor"):
        podium.evaluate(small, {"elo": podium.Elo()}, executor=ThreadPoolExecutor)  # type: ignore[arg-type]


def test_a_list_of_models_is_fitted_each_as_alone(chess: podium.Matches) -> None:
    alone = [podium.fit(m, chess) for m in FIT_MODELS]
    together = podium.fit(FIT_MODELS, chess)
    assert isinstance(together, list) and len(together) == 3
    for a, b in zip(alone, together):
        _same_fit(a, b)
    with pytest.raises(ValueError, match="empty list"):
        podium.fit([], chess)
    with pytest.raises(TypeError, match="'model' must be a podium model"):
        podium.fit([podium.Elo, "elo"], chess)  # type: ignore[list-item]


@pytest.mark.parametrize("cls", [podium.TrueSkill, podium.Elo, podium.TrueSkillThroughTime])
def test_one_model_sends_its_independent_replays_ahead_and_finds_the_same_fit(chess: podium.Matches,
                                                                             cls: Any) -> None:
    without = podium.fit(cls, chess)
    with _Counting() as executor:
        with_executor = podium.fit(cls, chess, executor=executor)
    _same_fit(without, with_executor)  # (the same number of evaluations: what was sent ahead was used)
    n_params = len(with_executor.params)
    # The starting point, and Nelder-Mead's initial simplex when there are several parameters.
    assert executor.tasks == 1 + (n_params + 1 if n_params > 1 else 0)


def test_a_budget_smaller_than_the_simplex_sends_only_what_the_search_uses(chess: podium.Matches) -> None:
    without = podium.fit(podium.TrueSkill, chess, max_evaluations=2)
    with _Counting() as executor:
        with_executor = podium.fit(podium.TrueSkill, chess, max_evaluations=2, executor=executor)
    _same_fit(without, with_executor)
    assert executor.tasks == 1 + 2


def test_a_failing_task_raises_its_error(chess: podium.Matches) -> None:
    mahjong = load("riichi_mahjong")  # four-player games: Elo rates two teams
    with ThreadPoolExecutor(2) as executor:
        with pytest.raises(podium.MatchError, match="Elo rates two teams"):
            podium.fit([podium.PlackettLuce, podium.Elo], mahjong, executor=executor)
        with pytest.raises(podium.MatchError, match="Elo rates two teams"):
            podium.evaluate(mahjong, {"pl": podium.PlackettLuce(), "elo": podium.Elo()}, executor=executor)
    with pytest.raises(TypeError, match="model instances"):
        podium.evaluate(chess, {"elo": podium.Elo}, executor=ThreadPoolExecutor(1))


@pytest.mark.parametrize("kind", ["threads", "processes"])
def test_evaluate_on_an_executor_equals_without(chess: podium.Matches, kind: str) -> None:
    models = {"elo": podium.Elo(k=16.0), "trueskill": podium.TrueSkill(), "pl": podium.PlackettLuce(k=12.0),
              "ttt": podium.TrueSkillThroughTime()}
    without = podium.evaluate(chess, models, min_games=2, start=100)
    executor: Executor = ThreadPoolExecutor(2) if kind == "threads" else ProcessPoolExecutor(2)
    with executor:
        with_executor = podium.evaluate(chess, models, min_games=2, start=100, executor=executor)
    _same_report(without, with_executor)
    assert without["trueskill"]["pair_error"] < 0.5  # the comparison is of real figures, not of two NaNs


def test_fit_of_three_models_on_a_local_cluster_equals_without(chess: podium.Matches) -> None:
    distributed = pytest.importorskip("distributed")
    without = podium.fit(FIT_MODELS, chess)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  timeout="60s") as cluster, distributed.Client(cluster, timeout="60s") as client:
        executor = client.get_executor()
        on_cluster = podium.fit(FIT_MODELS, chess, executor=executor)
        one = podium.fit(podium.TrueSkill, chess, executor=executor)  # the simplex's replays on the workers
        report = podium.evaluate(chess, {"elo": podium.Elo(), "ts": podium.TrueSkill()}, executor=executor)
    for a, b in zip(without, on_cluster):
        _same_fit(a, b)
    _same_fit(without[1], one)
    _same_report(podium.evaluate(chess, {"elo": podium.Elo(), "ts": podium.TrueSkill()}), report)
