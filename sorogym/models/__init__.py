"""Soft-robot models with the control-ready interface of :class:`SoftRobot`."""

from ._articulated import ArticulatedSoftRobot as ArticulatedSoftRobot
from ._articulated import ChainParams as ChainParams
from ._base import SoftRobot as SoftRobot
from ._params import RodParams as RodParams
from ._pcs import PCS as PCS
from ._pcs import PlanarPCS as PlanarPCS
from ._strains import PLANAR_STRAINS as PLANAR_STRAINS
from ._statics import static_equilibrium as static_equilibrium
from ._statics import static_residual as static_residual
from ._strains import SPATIAL_STRAINS as SPATIAL_STRAINS

__all__ = ["SoftRobot", "ArticulatedSoftRobot", "ChainParams", "RodParams", "PCS", "PlanarPCS", "SPATIAL_STRAINS", "PLANAR_STRAINS",
           "static_equilibrium", "static_residual"]
from ._gvs import GVS as GVS
from ._gvs import GVSParams as GVSParams
from ._gvs_basis import StrainBasis as StrainBasis
__all__ += ["GVS", "GVSParams", "StrainBasis"]
from ._instances import conical_arm_markers as conical_arm_markers
from ._instances import conical_tendon_arm as conical_tendon_arm
__all__ += ["conical_tendon_arm", "conical_arm_markers"]
from ._articulated_instances import SOFT_PENDULUM_MAX_TORQUE as SOFT_PENDULUM_MAX_TORQUE
from ._articulated_instances import UMARM_MAX_PRESSURE as UMARM_MAX_PRESSURE
from ._articulated_instances import soft_pendulum as soft_pendulum
from ._articulated_instances import soft_pendulum_tip as soft_pendulum_tip
from ._articulated_instances import umarm as umarm
__all__ += ["soft_pendulum", "soft_pendulum_tip", "umarm", "SOFT_PENDULUM_MAX_TORQUE", "UMARM_MAX_PRESSURE"]
