"""Actuators: commands ``u`` -> generalized forces ``A(q) effort(u)``, behind one contract.

Every actuator subclasses :class:`Actuation` and reads the model's configuration from the
:class:`ActuationContext` the model provides (:class:`RodContext` for PCS and GVS rods,
:class:`ChainContext` for articulated chains, :class:`CoordinateContext` for
models whose actuators act on coordinates alone, :class:`TreeContext` for body trees, whose
:class:`TreeActuation` places the rods' own actuators and joint motors); no model tests
actuator types.
"""

from ._articulated import ArticulatedTendons as ArticulatedTendons
from ._articulated import McKibbenMuscles as McKibbenMuscles
from ._articulated import PulleyTendons as PulleyTendons
from ._articulated import mckibben_force as mckibben_force
from ._articulated import mckibben_max_contraction as mckibben_max_contraction
from ._base import Actuation as Actuation
from ._base import ActuationContext as ActuationContext
from ._base import ChainContext as ChainContext
from ._base import CoordinateContext as CoordinateContext
from ._base import RodContext as RodContext
from ._tendons import GeneralizedActuation as GeneralizedActuation
from ._tendons import Tendons as Tendons
from ._tree import TreeActuation as TreeActuation
from ._tree import TreeContext as TreeContext

__all__ = [
    "Actuation",
    "ActuationContext",
    "RodContext",
    "ChainContext",
    "CoordinateContext",
    "TreeContext",
    "TreeActuation",
    "GeneralizedActuation",
    "Tendons",
    "ArticulatedTendons",
    "PulleyTendons",
    "McKibbenMuscles",
    "mckibben_force",
    "mckibben_max_contraction",
]
