"""The work ``podium compile`` runs to compile podium's kernels ahead: each model's replay of short histories of
duels, free-for-alls with ties and non-finishers, team games, scores and advantages, its single-match calls,
and the readers, leaderboards, evaluation and smoothing around them.

numba compiles a kernel for the argument types of a call, so the way to compile ahead is to make the calls; these
are the ones podium's own paths make.  A history's first replay afterwards loads them from numba's cache.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..data.matches import Matches

__all__ = ["workloads"]


def _histories() -> dict[str, Matches]:
    from ..data.match import Match
    from ..data.matches import Matches
    from ..data.simulate import simulate

    duels = simulate(24, 300, teams=2, team_size=1, draw_probability=0.1, seed=1).matches
    races = simulate(24, 60, teams=6, team_size=1, draw_probability=0.05, seed=2).matches
    teams = simulate(24, 60, teams=2, team_size=3, draw_probability=0.05, seed=3).matches
    odd = [Match([["a"], ["b"], ["c"], ["d"]], ranks=[0, 1, None, 1], time=1.0),
           Match([["a", "b"], ["c", "d"]], scores=[3.0, 1.0], advantage=[1, 0], time=2.0),
           Match([["a"], ["c"]], weights=[[0.5], [1.0]], time=3.0)]
    return {"duels": duels, "races": races, "teams": teams, "odd": Matches.from_matches(odd)}


def _model_work(name: str) -> Callable[[], None]:
    def run() -> None:
        from ..data.rating import Rating
        from ..engine.league import League
        from ..models import MODELS

        model = MODELS[name]()
        for key, history in _histories().items():
            if name in ("elo", "glicko2") and key in ("races", "odd"):
                continue  # two-team models
            league = League(model).record_many(history)
            league.leaderboard(top=5)
        ratings = {p: Rating(model.prior.mu + i, model.prior.sigma) for i, p in enumerate("abcd")}
        from ..data.match import Match

        shapes = [[["a"], ["b"]], [["a", "b"], ["c", "d"]]]
        if name not in ("elo", "glicko2"):
            shapes.append([["a"], ["b"], ["c"], ["d"]])
        for teams in shapes:
            model.rate(Match(teams), ratings)
            model.log_likelihood(Match(teams), ratings)
            model.win_probabilities(teams, ratings)
            model.rank_probabilities(teams, ratings)
            model.quality(teams, ratings)
    return run


def _smoothing() -> None:
    from ..models import TrueSkillThroughTime

    smoothed = TrueSkillThroughTime().smooth(_histories()["duels"])
    smoothed.leaderboard(top=5)


def _evaluation() -> None:
    from ..evaluation.prequential import evaluate
    from ..models import Elo, TrueSkill

    evaluate(_histories()["duels"], {"Elo": Elo(), "TrueSkill": TrueSkill()})


def _auditing() -> None:
    from ..integrity.audit import audit

    audit(_histories()["duels"])


def _reading() -> None:
    from ..data.io import read_matches, write_matches

    history = _histories()["odd"]
    with tempfile.TemporaryDirectory(prefix="podium-compile-") as folder:
        for suffix in (".jsonl", ".csv"):
            path = Path(folder) / f"history{suffix}"
            write_matches(history, path)
            read_matches(path)


def workloads() -> dict[str, tuple[str, Callable[[], None]]]:
    """``{key: (label, run)}`` for each piece of work, in the order ``podium compile`` runs them (``key``: what
    ``podium compile --only`` names it by)."""
    from ..models import MODELS

    return ({"reading": ("reading histories", _reading)}
            | {name: (f"model {name}", _model_work(name)) for name in MODELS}
            | {"smoothing": ("smoothing (TrueSkill Through Time)", _smoothing),
               "evaluation": ("evaluation", _evaluation), "audit": ("audit", _auditing)})
