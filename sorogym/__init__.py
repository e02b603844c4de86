"""sorogym: soft continuum robot models and RL environments on a differentiable JAX core."""

from . import actuation, lie, models, sim
from .actuation import GeneralizedActuation, Tendons
from .models import PCS, PlanarPCS, RodParams, SoftRobot

__version__ = "0.1.0"

__all__ = [
    "actuation", "lie", "models", "sim",
    "GeneralizedActuation", "Tendons", "PCS", "PlanarPCS", "RodParams", "SoftRobot",
]
