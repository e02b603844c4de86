"""Soft-robot models with the control-ready interface of :class:`SoftRobot`.

Concrete (final) models: :class:`PCS` and :class:`PlanarPCS` (piecewise constant strain),
:class:`GVS` (geometric variable strain), :class:`ArticulatedSoftRobot` (rigid links on
compliant joints), :class:`PlanarStar` (a free hub with soft arms in the plane), :class:`PlanarArms`
(fixed-base arms at fixed mounts in one plane), :class:`PlanarGripper` (soft fingers on a palm on
a vertical lift), :class:`BodyTree` (rigid links and rods in a tree on a fixed or floating
base, the general case of the others; with :class:`LoopClosure` constraints, closed chains and
parallel robots) and :class:`ConcentricTubeRobot` (precurved tubes nested on one centreline).
Named robots built from them live in :mod:`sorogym.robots`.
"""

from ._articulated import ArticulatedSoftRobot as ArticulatedSoftRobot
from ._articulated import ChainParams as ChainParams
from ._base import DynamicalTerms as DynamicalTerms
from ._base import SoftRobot as SoftRobot
from ._concentric import ConcentricTubeRobot as ConcentricTubeRobot
from ._concentric_params import ConcentricTubeParams as ConcentricTubeParams
from ._gvs import GVS as GVS
from ._gvs import GVSParams as GVSParams
from ._gvs_basis import StrainBasis as StrainBasis
from ._joints import Joint as Joint
from ._params import MOUNTING_ROTATIONS as MOUNTING_ROTATIONS
from ._params import RodParams as RodParams
from ._params import check_positive_fields as check_positive_fields
from ._pcs import PCS as PCS
from ._pcs import PlanarPCS as PlanarPCS
from ._planar_arms import PlanarArms as PlanarArms
from ._planar_gripper import PlanarGripper as PlanarGripper
from ._planar_scene import PlanarBodies as PlanarBodies
from ._planar_scene import PlanarScene as PlanarScene
from ._planar_scene import SceneLoad as SceneLoad
from ._planar_scene import SceneParams as SceneParams
from ._planar_star import PlanarStar as PlanarStar
from ._rod import LineLoad as LineLoad
from ._rod import LineLoadTerms as LineLoadTerms
from ._rod import LinePoints as LinePoints
from ._statics import static_equilibrium as static_equilibrium
from ._statics import static_residual as static_residual
from ._strains import PLANAR_STRAINS as PLANAR_STRAINS
from ._strains import SPATIAL_STRAINS as SPATIAL_STRAINS
from ._tree import BodyTree as BodyTree
from ._tree import Cable as Cable
from ._tree import LoopClosure as LoopClosure
from ._tree import Payload as Payload
from ._tree import RigidLink as RigidLink
from ._tree import RodBody as RodBody
from ._tree import TreeParams as TreeParams

__all__ = [
    "SoftRobot",
    "DynamicalTerms",
    "LinePoints",
    "LineLoad",
    "LineLoadTerms",
    "PlanarBodies",
    "PlanarScene",
    "SceneLoad",
    "SceneParams",
    "PCS",
    "PlanarPCS",
    "PlanarArms",
    "PlanarGripper",
    "PlanarStar",
    "GVS",
    "ArticulatedSoftRobot",
    "BodyTree",
    "ConcentricTubeRobot",
    "ConcentricTubeParams",
    "Cable",
    "LoopClosure",
    "TreeParams",
    "RigidLink",
    "RodBody",
    "Payload",
    "Joint",
    "RodParams",
    "GVSParams",
    "ChainParams",
    "StrainBasis",
    "MOUNTING_ROTATIONS",
    "check_positive_fields",
    "SPATIAL_STRAINS",
    "PLANAR_STRAINS",
    "static_equilibrium",
    "static_residual",
]
