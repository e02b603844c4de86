"""Actuation models mapping actuator commands to generalized forces ``A(q) effort(u)``."""

from ._articulated import ArticulatedTendons as ArticulatedTendons
from ._articulated import ChainFrames as ChainFrames
from ._articulated import McKibbenMuscles as McKibbenMuscles
from ._articulated import PulleyTendons as PulleyTendons
from ._articulated import mckibben_force as mckibben_force
from ._articulated import mckibben_max_contraction as mckibben_max_contraction
from ._tendons import GeneralizedActuation as GeneralizedActuation
from ._tendons import Tendons as Tendons

__all__ = ["GeneralizedActuation", "Tendons", "ArticulatedTendons", "PulleyTendons", "McKibbenMuscles", "ChainFrames",
           "mckibben_force", "mckibben_max_contraction"]
