"""podium's models: one file per family; ``base`` holds the shared contract."""

from .base import LikelihoodModel, Model
from .context import ByContext
from .elo import Elo, PairwiseElo
from .elo_mmr import EloMMR
from .glicko import Glicko2
from .plackett_luce import PlackettLuce
from .through_time import Smoothed, SmoothTrajectory, TrueSkillThroughTime
from .thurstone import Thurstone
from .trueskill import ConvergenceWarning, TrueSkill

__all__ = ["ByContext", "Model", "LikelihoodModel", "Elo", "PairwiseElo", "PlackettLuce", "Thurstone", "TrueSkill", "ConvergenceWarning", "MODELS",
           "TrueSkillThroughTime", "Smoothed", "SmoothTrajectory", "Glicko2", "EloMMR"]

#: Command-line names of the models.
MODELS: dict[str, type[Model]] = {
    "elo": Elo,
    "pairwise-elo": PairwiseElo,
    "plackett-luce": PlackettLuce,
    "thurstone": Thurstone,
    "trueskill": TrueSkill,
    "glicko2": Glicko2,
    "elo-mmr": EloMMR,
}
