"""sorogym: soft continuum robot models and RL environments on a differentiable JAX core.

``import sorogym`` loads the core only (no brax, flax or Gymnasium); :mod:`~sorogym.env`,
:mod:`~sorogym.envs`, :mod:`~sorogym.agents`, :func:`make` and :func:`registry` load on first
use. Once Gymnasium is imported, the suite is registered with it through string entry points
(``gymnasium.make("sorogym/TendonTracking-v0")``).
"""

import importlib

import wrapt

from . import actuation, lie, models, robots, sim
from .actuation import ArticulatedTendons, GeneralizedActuation, McKibbenMuscles, PulleyTendons, Tendons
from .models import (
    GVS,
    PCS,
    ArticulatedSoftRobot,
    BodyTree,
    Cable,
    ChainParams,
    ConcentricTubeParams,
    ConcentricTubeRobot,
    GVSParams,
    Joint,
    LoopClosure,
    Payload,
    PlanarArms,
    PlanarGripper,
    PlanarPCS,
    PlanarScene,
    PlanarStar,
    RigidLink,
    RodBody,
    RodParams,
    SoftRobot,
    StrainBasis,
)

__version__ = "0.1.0"

# the suite's catalogue is import-light: registering it loads no env module
wrapt.register_post_import_hook(
    lambda gymnasium: importlib.import_module(f"{__name__}.envs").register_with_gymnasium(gymnasium), "gymnasium"
)


def __getattr__(name: str):
    # the layers above the core (brax, flax, Gymnasium) load on first use
    if name in ("env", "envs", "agents"):
        return importlib.import_module(f"{__name__}.{name}")
    if name in ("make", "registry"):
        return getattr(importlib.import_module(f"{__name__}.env"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "actuation",
    "lie",
    "models",
    "sim",
    "env",
    "envs",
    "make",
    "registry",
    "GeneralizedActuation",
    "Tendons",
    "PCS",
    "GVS",
    "GVSParams",
    "StrainBasis",
    "PlanarPCS",
    "PlanarScene",
    "PlanarArms",
    "PlanarGripper",
    "PlanarStar",
    "RodParams",
    "SoftRobot",
    "ArticulatedSoftRobot",
    "ChainParams",
    "BodyTree",
    "ConcentricTubeRobot",
    "ConcentricTubeParams",
    "Cable",
    "LoopClosure",
    "RigidLink",
    "RodBody",
    "Payload",
    "Joint",
    "ArticulatedTendons",
    "PulleyTendons",
    "McKibbenMuscles",
    "robots",
]
