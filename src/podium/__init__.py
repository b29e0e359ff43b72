"""podium: ratings from games with any number of players and teams.

The Elo family (two-team Elo, pairwise Elo, Plackett-Luce), the Thurstonian multiplayer Elo, TrueSkill and Glicko-2, a compiled replay engine over columnar
match histories, and the tools around them.  ``import podium`` compiles nothing: numba compiles each
kernel on first use and caches it on disk.
"""

import sys as _sys

# the public names, from their layers (docs/design.md, "Layers and files")
from .data.io import read_matches, write_matches
from .data.match import Match, MatchError
from .data.matches import Matches
from .data.rating import LeaderboardRow, Rating
from .data.scan import scan_matches
from .data.simulate import AbuseSimulation, Simulation, simulate, simulate_abuse
from .engine.components import Components, ThinLink, components
from .engine.league import League, PlayerState, Trajectory
from .evaluation import plot
from .evaluation.fit import FitResult, FitWarning, fit
from .evaluation.prequential import Report, evaluate
from .integrity.audit import Audit, Flag, audit
from .models import (ByContext, ConvergenceWarning, Elo, EloMMR, Glicko2, Model, PairwiseElo, PlackettLuce, Smoothed, SmoothTrajectory, Thurstone,
                     TrueSkill, TrueSkillThroughTime)

# ``podium.plot`` is documented as a module of its own: the same module object as podium.evaluation.plot
# (matplotlib is imported only when a figure is drawn)
_sys.modules[f"{__name__}.plot"] = plot

__all__ = [
    "AbuseSimulation", "Audit", "Flag", "audit", "scan_matches", "simulate_abuse",
    "ByContext", "ConvergenceWarning", "Elo", "EloMMR", "FitResult", "FitWarning", "Glicko2", "League", "LeaderboardRow", "Match", "MatchError", "Matches", "Model", "PairwiseElo", "PlayerState",
    "PlackettLuce", "Rating", "Report", "Simulation", "Smoothed", "SmoothTrajectory", "Thurstone", "Trajectory", "TrueSkill",
    "TrueSkillThroughTime", "evaluate", "fit", "read_matches", "simulate", "write_matches",
    "Components", "ThinLink", "components",
]

__version__ = "0.1.0"
