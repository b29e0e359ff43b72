"""podium: ratings from games with any number of players and teams.

The Elo family (two-team Elo, pairwise Elo, Plackett-Luce), the Thurstonian multiplayer Elo, TrueSkill and Glicko-2, a compiled replay engine over columnar
match histories, and the tools around them.  ``import podium`` compiles nothing: numba compiles each
kernel on first use and caches it on disk.
"""

from .audit import Audit, Flag, audit
from .components import Components, ThinLink, components
from .evaluate import Report, evaluate
from .fit import FitResult, fit
from .io import read_matches, write_matches
from .league import League, PlayerState, Trajectory
from .match import Match, MatchError
from .matches import Matches
from .models import (ConvergenceWarning, Elo, EloMMR, Glicko2, Model, PairwiseElo, PlackettLuce, Smoothed, SmoothTrajectory, Thurstone,
                     TrueSkill, TrueSkillThroughTime)
from .rating import LeaderboardRow, Rating
from .scan import scan_matches
from .simulate import AbuseSimulation, Simulation, simulate, simulate_abuse

__all__ = [
    "AbuseSimulation", "Audit", "Flag", "audit", "scan_matches", "simulate_abuse",
    "ConvergenceWarning", "Elo", "EloMMR", "FitResult", "Glicko2", "League", "LeaderboardRow", "Match", "MatchError", "Matches", "Model", "PairwiseElo", "PlayerState",
    "PlackettLuce", "Rating", "Report", "Simulation", "Smoothed", "SmoothTrajectory", "Thurstone", "Trajectory", "TrueSkill",
    "TrueSkillThroughTime", "evaluate", "fit", "read_matches", "simulate", "write_matches",
    "Components", "ThinLink", "components",
]

__version__ = "0.1.0"
