"""Soft-robot models with the control-ready interface of :class:`SoftRobot`."""

from ._articulated import ArticulatedSoftRobot as ArticulatedSoftRobot
from ._articulated import ChainParams as ChainParams
from ._base import SoftRobot as SoftRobot
from ._params import MOUNTING_ROTATIONS as MOUNTING_ROTATIONS
from ._params import RodParams as RodParams
from ._pcs import PCS as PCS
from ._pcs import PlanarPCS as PlanarPCS
from ._strains import PLANAR_STRAINS as PLANAR_STRAINS
from ._statics import static_equilibrium as static_equilibrium
from ._statics import static_residual as static_residual
from ._strains import SPATIAL_STRAINS as SPATIAL_STRAINS

__all__ = ["MOUNTING_ROTATIONS", "SoftRobot", "ArticulatedSoftRobot", "ChainParams", "RodParams", "PCS", "PlanarPCS", "SPATIAL_STRAINS", "PLANAR_STRAINS",
           "static_equilibrium", "static_residual"]
from ._gvs import GVS as GVS
from ._gvs import GVSParams as GVSParams
from ._gvs_basis import StrainBasis as StrainBasis
__all__ += ["GVS", "GVSParams", "StrainBasis"]
