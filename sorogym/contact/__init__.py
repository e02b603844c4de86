"""Contact between robots and their surroundings (world frame, SI units).

* :class:`ContactLaw` (``_laws.py``): compliant normal force and regularised, optionally
  anisotropic Coulomb friction per contact point.
* :class:`GroundPlane`, :class:`Heightfield` (:func:`terrain`), sphere, box, capsule and
  cylinder obstacles (``_geometry.py``): static surfaces by signed distance and normal.
* :func:`probe_model`, :func:`probe_bodies`, :func:`probe_link`, :func:`surface_contact`
  (``_ground.py``): probe points of a rod, of tree bodies or of a link against a surface,
  point forces as generalized forces.
* :class:`ResistiveForceTheory`, :class:`MorisonDrag`, :class:`Buoyancy`,
  :func:`fluid_force`, :func:`added_mass_matrix` (``_fluids.py``): fluid forces per unit
  length on a rod's backbone (viscous and quadratic drag in a uniform current, buoyancy)
  and the added-mass matrix.
* :class:`RigidObject`, :func:`probe_object`, :func:`object_contact` (``_objects.py``):
  rigid objects (sphere, box, capsule, cylinder) as free bodies of a tree, touching robots,
  the ground and each other.
* :func:`rod_pair_contact`, :class:`ArmPairContact` (``_rod_pairs.py``): contact between
  two rods (branches of a tree, or two robots) through the capsule chain of one rod's probe
  points; the arms of a :class:`~sorogym.PlanarArms` in a scene, implicitly.
* :class:`GroundFriction`, :class:`LineDrag` (``_line_loads.py``): forces per unit length
  along a rod evaluated on its own quadrature points (:data:`sorogym.models.LineLoad`) and
  stepped linearly implicitly: a rod lying on flat ground under its weight (snakes and
  crawlers on the planar floating rod), fluid drag.
* :func:`rounded_box_distance`, :func:`body_penetration`, :class:`BodyContact`
  (``_planar_bodies.py``): a planar robot touching the rigid bodies of a
  :class:`~sorogym.PlanarScene` (discs, rectangles and stadiums as rounded rectangles);
  :class:`FloorContact`, the floor of a scene in the vertical plane under the robot and the
  bodies; :class:`NormalContactLoad`, the implicit normal contact the scene contacts share.
* :func:`sphere_obstacles`, :func:`rod_obstacle_contact` (``_obstacles.py``): obstacles
  pressing on a rod with one penalty force each at its deepest point (the contact-force
  proxy of the SoRoMoX safety case, ``ContactSafeReaching-v0``).
"""

from __future__ import annotations

from ._fluids import Buoyancy, MorisonDrag, ResistiveForceTheory, added_mass_matrix, backbone_quadrature, fluid_force
from ._geometry import (
    TERRAINS,
    BoxObstacle,
    CapsuleObstacle,
    CylinderObstacle,
    GroundPlane,
    Heightfield,
    SphereObstacle,
    penetration,
    terrain,
)
from ._ground import (
    Probe,
    cross_section_radius,
    generalized_force,
    on_surface,
    probe_bodies,
    probe_link,
    probe_model,
    surface_contact,
)
from ._laws import ContactLaw
from ._line_loads import GroundFriction, LineDrag
from ._objects import SHAPES, RigidObject, check_separation, object_contact, probe_object
from ._obstacles import deepest_point_forces, obstacle_depths, rod_obstacle_contact, sphere_obstacles
from ._planar_bodies import BodyContact, FloorContact, NormalContactLoad, body_penetration, rounded_box_distance
from ._rod_pairs import ArmPairContact, closest_on_chain, rod_pair_contact

__all__ = [
    "SHAPES",
    "TERRAINS",
    "BoxObstacle",
    "Buoyancy",
    "CapsuleObstacle",
    "ContactLaw",
    "FloorContact",
    "CylinderObstacle",
    "GroundFriction",
    "GroundPlane",
    "Heightfield",
    "LineDrag",
    "MorisonDrag",
    "Probe",
    "RigidObject",
    "ResistiveForceTheory",
    "SphereObstacle",
    "added_mass_matrix",
    "backbone_quadrature",
    "check_separation",
    "closest_on_chain",
    "cross_section_radius",
    "deepest_point_forces",
    "fluid_force",
    "generalized_force",
    "object_contact",
    "obstacle_depths",
    "on_surface",
    "penetration",
    "probe_bodies",
    "probe_link",
    "probe_model",
    "probe_object",
    "rod_obstacle_contact",
    "rod_pair_contact",
    "ArmPairContact",
    "NormalContactLoad",
    "sphere_obstacles",
    "BodyContact",
    "body_penetration",
    "rounded_box_distance",
    "surface_contact",
    "terrain",
]
