"""podium: ratings from games with any number of players and teams.

The Elo family (two-team Elo, pairwise Elo, Plackett-Luce), the Thurstonian multiplayer Elo, TrueSkill and Glicko-2, a compiled replay engine over columnar
match histories, and the tools around them.  ``import podium`` imports nothing but itself; the kernels run
interpreted for a single match and compiled (by numba, cached on disk) for a history.
"""

from __future__ import annotations

import importlib as _importlib
from typing import TYPE_CHECKING

# Each public name and the module it lives in (docs/design.md, "Layers and files").  They are imported when first
# used (PEP 562), so that ``import podium`` imports nothing else: a command, a server or a script pays only
# for the layers it touches.
_HOMES = {
    "read_matches": "data.io", "write_matches": "data.io",
    "Match": "data.match", "MatchError": "data.match",
    "Matches": "data.matches",
    "LeaderboardRow": "data.rating", "Rating": "data.rating",
    "scan_matches": "data.scan",
    "AbuseSimulation": "data.simulate", "Simulation": "data.simulate", "simulate": "data.simulate",
    "simulate_abuse": "data.simulate",
    "Components": "engine.components", "ThinLink": "engine.components", "components": "engine.components",
    "League": "engine.league", "PlayerState": "engine.league", "Trajectory": "engine.league",
    "FitResult": "evaluation.fit", "FitWarning": "evaluation.fit", "fit": "evaluation.fit",
    "Report": "evaluation.prequential", "evaluate": "evaluation.prequential",
    "Audit": "integrity.audit", "Flag": "integrity.audit", "audit": "integrity.audit",
    **{name: "models" for name in ("ByContext", "ConvergenceWarning", "Elo", "EloMMR", "Glicko2", "Model",
                                   "PairwiseElo", "PlackettLuce", "Smoothed", "SmoothTrajectory", "Thurstone",
                                   "TrueSkill", "TrueSkillThroughTime")},
}

if TYPE_CHECKING:  # the same names for type checkers and editors
    from .data.io import read_matches, write_matches
    from .data.match import Match, MatchError
    from .data.matches import Matches
    from .data.rating import LeaderboardRow, Rating
    from .data.scan import scan_matches
    from .data.simulate import AbuseSimulation, Simulation, simulate, simulate_abuse
    from .engine.components import Components, ThinLink, components
    from .engine.league import League, PlayerState, Trajectory
    from .evaluation.fit import FitResult, FitWarning, fit
    from .evaluation.prequential import Report, evaluate
    from .integrity.audit import Audit, Flag, audit
    from .models import (ByContext, ConvergenceWarning, Elo, EloMMR, Glicko2, Model, PairwiseElo, PlackettLuce,
                         Smoothed, SmoothTrajectory, Thurstone, TrueSkill, TrueSkillThroughTime)


def _lazy_plot() -> object:
    """``podium.plot``: the module :mod:`podium.evaluation.plot` itself (importable under both names), loaded when
    first used (it imports the engine and the models; matplotlib only when a figure is drawn)."""
    import importlib.util
    import sys

    name = f"{__name__}.evaluation.plot"
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.loader is not None
        spec.loader = importlib.util.LazyLoader(spec.loader)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        sys.modules[f"{__name__}.evaluation"].plot = module  # type: ignore[attr-defined]
    sys.modules[f"{__name__}.plot"] = module
    return module


plot = _lazy_plot()


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # found once; later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "AbuseSimulation", "Audit", "Flag", "audit", "scan_matches", "simulate_abuse",
    "ByContext", "ConvergenceWarning", "Elo", "EloMMR", "FitResult", "FitWarning", "Glicko2", "League", "LeaderboardRow", "Match", "MatchError", "Matches", "Model", "PairwiseElo", "PlayerState",
    "PlackettLuce", "Rating", "Report", "Simulation", "Smoothed", "SmoothTrajectory", "Thurstone", "Trajectory", "TrueSkill",
    "TrueSkillThroughTime", "evaluate", "fit", "read_matches", "simulate", "write_matches",
    "Components", "ThinLink", "components",
]

__version__ = "0.1.0"
