"""podium's models: one file per family; ``base`` holds the shared contract."""

from .base import LikelihoodModel, Model
from .elo import Elo, PairwiseElo
from .plackett_luce import PlackettLuce

__all__ = ["Model", "LikelihoodModel", "Elo", "PairwiseElo", "PlackettLuce"]
