"""sorogym: soft continuum robot models and RL environments on a differentiable JAX core.

Importing the package registers every environment of the suite with Gymnasium
(``gymnasium.make("sorogym/TendonTracking-v0")``) and with brax.
"""

from . import actuation, lie, models, sim
from .actuation import ArticulatedTendons, GeneralizedActuation, McKibbenMuscles, PulleyTendons, Tendons
from .models import GVS, PCS, ArticulatedSoftRobot, ChainParams, GVSParams, PlanarPCS, RodParams, SoftRobot, StrainBasis
from . import robots
from . import env  # noqa: E402  (after the core: envs build on it)
from .env import make, registry
from . import envs  # noqa: E402,F401  (the suite registers itself)

env.register_everywhere()

__version__ = "0.1.0"

__all__ = [
    "actuation", "lie", "models", "sim", "env", "envs", "make", "registry",
    "GeneralizedActuation", "Tendons", "PCS", "GVS", "GVSParams", "StrainBasis", "PlanarPCS", "RodParams", "SoftRobot",
    "ArticulatedSoftRobot", "ChainParams", "ArticulatedTendons", "PulleyTendons", "McKibbenMuscles", "robots",
]
