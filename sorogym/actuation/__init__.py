"""Actuation models mapping actuator commands to generalized forces ``A(q) effort(u)``."""

from ._tendons import GeneralizedActuation as GeneralizedActuation
from ._tendons import Tendons as Tendons

__all__ = ["GeneralizedActuation", "Tendons"]
