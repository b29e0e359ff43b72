"""A model added the way docs/design.md's "Where to make a change" says: a class and a kernel, nothing else.

This file stands in for the two files a new model touches: ``kernels/<name>.py`` (the compiled replay below,
:func:`replay_mean_elo`) and ``models/<name>.py`` (:class:`MeanElo`).  It imports only what those files may import
(the data, ordering, kernels and models layers, the model contract in ``models/base.py``); the League, ``evaluate``,
``fit`` and ``rate`` then take the new model without a line changed anywhere else.  The model is a throwaway:
pairwise logistic Elo on each team's *mean* rating (not podium's weighted sum), the summed pair gradients divided by
the number of opponents.  Its replay through the engine is checked against a plain Python loop over the matches.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

import podium
from podium.data.matches import Matches
from podium.data.rating import Rating
from podium.kernels.common import History, State, state_rows
from podium.models.base import Model
from podium.ordering import log_win_probabilities
from podium.ordering.numerics import jit

SCALE = 400.0 / math.log(10.0)


# -- kernels/mean_elo.py -----------------------------------------------------------------------------------------
@jit
def replay_mean_elo(k: float, scale: float, match_start: NDArray[np.int64], team_start: NDArray[np.int64],
                    team_rank: NDArray[np.int64], rows: NDArray[np.int64], mu: NDArray[np.float64],
                    games: NDArray[np.int64], history: NDArray[np.float64], loglik: NDArray[np.float64]) -> None:
    """Every pair of teams a logistic game between the teams' mean ratings; a team's step ``k`` times its summed
    pair gradient ``S - P`` over ``n - 1``, added to each member; ``loglik`` the composite pair log-likelihood."""
    for m in range(len(match_start) - 1):
        t0, t1 = match_start[m], match_start[m + 1]
        n = t1 - t0
        strength = np.empty(n)
        for t in range(t0, t1):
            total = 0.0
            for s in range(team_start[t], team_start[t + 1]):
                total += mu[rows[s]]
            strength[t - t0] = total / (team_start[t + 1] - team_start[t])
        step = np.zeros(n)
        ll = 0.0
        for a in range(n):
            for b in range(a + 1, n):
                ra, rb = team_rank[t0 + a], team_rank[t0 + b]
                if ra < 0 and rb < 0:
                    continue  # two non-finishers: unordered
                if ra == rb:
                    outcome = 0.5
                elif rb < 0 or (ra >= 0 and ra < rb):
                    outcome = 1.0
                else:
                    outcome = 0.0
                p = 1.0 / (1.0 + math.exp(-(strength[a] - strength[b]) / scale))
                ll += outcome * math.log(p) + (1.0 - outcome) * math.log1p(-p)
                step[a] += outcome - p
                step[b] -= outcome - p
        loglik[m] = ll
        for t in range(t0, t1):
            for s in range(team_start[t], team_start[t + 1]):
                mu[rows[s]] += k * step[t - t0] / (n - 1)
                games[rows[s]] += 1
                history[s] = mu[rows[s]]


# -- models/mean_elo.py ------------------------------------------------------------------------------------------
class MeanElo(Model):
    """Pairwise logistic Elo on the teams' mean ratings (a throwaway model: see the module docstring)."""

    _fit_space = {"k": "positive"}
    _fit_default = ("k",)

    def __init__(self, *, k: float = 32.0, initial: float = 1500.0) -> None:
        self.k = k
        self.initial = initial
        self._positive("k", k)
        self._finite("initial", initial)

    @property
    def prior(self) -> Rating:
        return Rating(float(self.initial), 0.0)

    def _replay(self, matches: Matches, slot_index: NDArray[np.int64], state: State,
                history: History | None, loglik: NDArray[np.float64] | None = None) -> None:
        hist = history.mu if history is not None else np.empty(len(matches.player))
        ll = loglik if loglik is not None else np.empty(len(matches))
        replay_mean_elo(float(self.k), SCALE, matches.match_start, matches.team_start, matches.team_rank,
                        state_rows(matches, slot_index), state.mu, state.games, hist, ll)
        if history is not None:
            history.sigma[:] = 0.0

    def _strengths(self, packed: Matches, mu: NDArray[np.float64]) -> NDArray[np.float64]:
        sizes = np.diff(packed.team_start)
        return np.add.reduceat(mu[packed.player], packed.team_start[:-1]) / sizes / SCALE

    def _predictive(self, packed: Matches, mu: NDArray[np.float64], sigma: NDArray[np.float64]
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64], str, float]:
        # logistic pairs are differences of Gumbel performances (Plackett-Luce in the victory order)
        strength = self._strengths(packed, mu)
        return strength, np.ones(len(strength)), "gumbel", 0.0

    def _log_win(self, packed: Matches, mu: NDArray[np.float64], sigma: NDArray[np.float64]) -> NDArray[np.float64]:
        return log_win_probabilities(self._strengths(packed, mu), density="gumbel")


# -- the checks ----------------------------------------------------------------------------------------------------
def python_replay(matches: list[podium.Match], k: float, initial: float) -> dict[str, float]:
    """The same math over Match objects in plain Python: what the engine's replay must equal."""
    mu: dict[str, float] = {}
    for match in matches:
        strength = [sum(mu.get(p, initial) for p in team) / len(team) for team in match.teams]
        ranks = [-1 if r is None else r for r in match.ranks]
        n = len(match.teams)
        step = [0.0] * n
        for a in range(n):
            for b in range(a + 1, n):
                if ranks[a] < 0 and ranks[b] < 0:
                    continue
                outcome = 0.5 if ranks[a] == ranks[b] else 1.0 if (ranks[b] < 0 or 0 <= ranks[a] < ranks[b]) else 0.0
                p = 1.0 / (1.0 + math.exp(-(strength[a] - strength[b]) / SCALE))
                step[a] += outcome - p
                step[b] -= outcome - p
        before = dict(mu)
        for t, team in enumerate(match.teams):
            for p in team:
                mu[p] = before.get(p, initial) + k * step[t] / (n - 1)
    return mu


@pytest.fixture(scope="module")
def history() -> podium.Matches:
    return podium.simulate(players=60, matches=600, teams=3, team_size=(1, 2, 3), draw_probability=0.05,
                           seed=3).matches


def test_the_engine_replays_it_as_the_plain_loop_does(history: podium.Matches) -> None:
    league = podium.League(MeanElo(k=24.0))
    league.record_many(history)
    expected = python_replay(list(history), 24.0, 1500.0)
    got = {name: rating.mu for name, rating in league.ratings.items()}
    assert got.keys() == expected.keys()
    assert max(abs(got[p] - expected[p]) for p in got) < 1e-9
    # a strong player rises: the model learns (the simulation's skills are real)
    assert max(got.values()) - min(got.values()) > 100.0


def test_rate_evaluate_and_fit_take_it_unchanged(history: podium.Matches) -> None:
    model = MeanElo()
    match = podium.Match([["a", "b"], ["c"]], ranks=[0, 1])
    new = model.rate(match, {})
    assert new["a"].mu == new["b"].mu > 1500.0 > new["c"].mu
    win = model.win_probabilities([["a"], ["c"], ["d"]], {"a": Rating(1600.0)})
    assert sum(win) == pytest.approx(1.0) and win[0] > win[1] == pytest.approx(win[2])
    cut = int(0.7 * len(history))
    report = podium.evaluate(history, {"mean": model, "pairwise": podium.PairwiseElo()}, start=cut)
    error = report["mean"]["pair_error"]
    assert 0.0 < error < 0.45  # better than a coin on a history with real skills
    fitted = podium.fit(MeanElo, history, params=["k"])
    assert isinstance(fitted.model, MeanElo) and 0.0 < fitted.model.k < math.inf


def test_it_needs_no_other_file() -> None:
    # what a new model's two files may import: the layers at and below models (docs/design.md, "Layers and files")
    tree = ast.parse(Path(__file__).read_text())
    modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
               and node.module.startswith("podium.")}
    assert modules and all(m.split(".")[1] in ("data", "ordering", "kernels", "models") for m in modules), modules
