"""Named robots and the paper's set-ups, built from the general models.

* The conical tendon-driven GVS arm of the identification study (App. D-A):
  :func:`conical_tendon_arm`, its markers :func:`conical_arm_markers`.
* Articulated robots: the soft pendulum (:func:`soft_pendulum`, :func:`soft_pendulum_tip`)
  and a UMArm-like McKibben arm (:func:`umarm`).
* The control case studies (section V-C, App. D-C): the fully actuated arm
  :func:`case_study_pcs`, the strain benchmark (:data:`STRAIN_SETPOINTS`,
  :func:`strain_benchmark_reference`) and the figure-eight pose
  (:func:`figure_eight_reference`).
* Tendon-ring PCS arms of the reaching environments: :func:`tendon_ring_pcs`,
  :func:`ring_offsets`.
* Body trees (:class:`~sorogym.models.BodyTree`) of tendon-driven soft parts
  (:class:`TendonArm`): the floating :func:`inchworm` and :func:`brittle_star`, the
  :func:`gripper`, the :func:`two_arm_platform`, the soft cart-pole :func:`cart_arm` and the
  cable-driven :func:`spacer_arm`.
* The :func:`parallel_continuum_robot`: soft rods on insertion drives between a fixed base
  and a rigid platform, a closed chain (:class:`~sorogym.models.LoopClosure`); the
  :func:`chiral_structure`: rings of soft rods clamped between stacked floating plates.
* The :func:`cable_driven_arm` (Table 6 of the Lie-group framework): a tapered GVS rod cut by
  rigid triangular plates, three :class:`~sorogym.models.Cable` tendons through their vertices;
  the :func:`cable_driven_finger` (Table 9): rigid bones joined by leaf-spring GVS joints of
  rectangular section whose natural shape is a cubic B-spline, a flexor and an extensor cable.
* The three-tube :func:`concentric_tube_robot` (:data:`CONCENTRIC_TUBES`, Table 7 of the
  Lie-group framework): precurved tubes nested on one centreline.
* The soft :func:`snake` (:class:`SnakeBody`) and :func:`crawler` (:class:`CrawlerBody`):
  planar floating-base PCS rods lying on the ground, the snake bent segment by segment, the
  crawler's segments bending and stretching (:func:`slope_gravity` for inclined ground).

Body-tree conventions: world z up, gravity ``(0, 0, -9.81)`` m/s^2, the ground plane
``z = 0`` a reference for placement and drawing only (no contact model). Every soft part is
a :class:`TendonArm` (a spatial PCS rod whose backbone leaves its body frame along the local
x axis), tendon ``j`` at the cross-section angle ``tendon_angles_deg[j]`` from the local y
axis towards the local z axis, bending the rod towards its side when pulled. Inputs ``u``:
the rod bodies' tendon tensions [N] in declaration order, then the joint motors (force [N]
or torque [N m]). Silicone (``E`` 0.3-1 MPa, 1070 kg/m^3, ``nu`` 0.5) with Kelvin-Voigt
damping of retardation time ``tau = 3 eta / E`` = :data:`RETARDATION_TIME` (10 ms; 30 ms
for the spacer arm's thin cores). Linearised about the neutral configuration (defaults;
brittle star with two arms, spacer arm with two sections): the slowest elastic mode, its
damping ratio, and the fastest pole (which bounds an explicit integrator's step):

================  ===============  =========  ============
robot              slowest mode     damping    fastest pole
================  ===============  =========  ============
inchworm           11.7 Hz          37 %       4300 1/s
brittle_star       3.7 Hz           12 %       410 1/s
gripper            5.9 Hz           16 %       1100 1/s
two_arm_platform   2.3 Hz           10 %       170 1/s
cart_arm           3.1 Hz           12 %       340 1/s
spacer_arm         2.0 Hz           8 %        74 1/s
================  ===============  =========  ============
"""

from ._articulated import (
    SOFT_PENDULUM_ACTUATIONS,
    SOFT_PENDULUM_MAX_TORQUE,
    UMARM_MAX_PRESSURE,
    UMARM_MOUNTINGS,
    soft_pendulum,
    soft_pendulum_rod_stiffness,
    soft_pendulum_tip,
    umarm,
)
from ._case_studies import (
    CASE_STUDY_ROD,
    CASE_STUDY_VISCOSITY,
    FIGURE_EIGHT_AMPLITUDES,
    REGULATION_END,
    STRAIN_SETPOINTS,
    TRACKING_END,
    case_study_pcs,
    figure_eight_pose,
    figure_eight_reference,
    strain_benchmark_q,
    strain_benchmark_reference,
)
from ._concentric import CONCENTRIC_TUBES, concentric_tube_robot
from ._conical_arm import (
    CONICAL_ARM_BASE_RADIUS,
    CONICAL_ARM_LENGTH,
    CONICAL_ARM_MARKERS,
    CONICAL_ARM_TENDON_ANGLES,
    CONICAL_ARM_TENDON_END,
    CONICAL_ARM_TIP_RADIUS,
    conical_arm_markers,
    conical_tendon_arm,
)
from ._ground_crawlers import (
    BrittleStarBody,
    CrawlerBody,
    SnakeBody,
    crawler,
    planar_brittle_star,
    slope_gravity,
    snake,
)
from ._lie_group_composites import (
    CABLE_ARM_CABLE_ANGLES,
    CABLE_ARM_DENSITY,
    CABLE_ARM_PLATE,
    CABLE_ARM_ROD,
    FINGER_BONE_DENSITY,
    FINGER_BONE_LENGTHS,
    FINGER_BONE_SECTION,
    FINGER_CABLE_OFFSET,
    FINGER_JOINT,
    FINGER_JOINT_SHAPES,
    cable_driven_arm,
    cable_driven_finger,
    joint_natural_shape,
    triangle_plate_inertia,
)
from ._parallel import CHIRAL_STRUCTURE, PARALLEL_ROBOT, chiral_structure, parallel_continuum_robot
from ._tendon_ring import ring_offsets, tendon_ring_pcs
from ._tree_composites import (
    CART_ARM,
    CART_SIZE,
    GRIPPER_FINGER,
    GRIPPER_PALM,
    PLATFORM_ARM,
    PLATFORM_SIZE,
    SPACER_DISC,
    SPACER_SECTION,
    cart_arm,
    gripper,
    spacer_arm,
    two_arm_platform,
)
from ._trees import (
    BRITTLE_STAR_ARM,
    BRITTLE_STAR_HUB,
    INCHWORM_BODY,
    RETARDATION_TIME,
    TendonArm,
    box_inertia,
    brittle_star,
    disc_inertia,
    inchworm,
)

__all__ = [
    "CONCENTRIC_TUBES",
    "concentric_tube_robot",
    "BrittleStarBody",
    "planar_brittle_star",
    "soft_pendulum",
    "soft_pendulum_tip",
    "soft_pendulum_rod_stiffness",
    "umarm",
    "SOFT_PENDULUM_MAX_TORQUE",
    "SOFT_PENDULUM_ACTUATIONS",
    "UMARM_MAX_PRESSURE",
    "UMARM_MOUNTINGS",
    "case_study_pcs",
    "CASE_STUDY_ROD",
    "CASE_STUDY_VISCOSITY",
    "STRAIN_SETPOINTS",
    "REGULATION_END",
    "TRACKING_END",
    "strain_benchmark_q",
    "strain_benchmark_reference",
    "FIGURE_EIGHT_AMPLITUDES",
    "figure_eight_pose",
    "figure_eight_reference",
    "conical_tendon_arm",
    "conical_arm_markers",
    "CONICAL_ARM_LENGTH",
    "CONICAL_ARM_BASE_RADIUS",
    "CONICAL_ARM_TIP_RADIUS",
    "CONICAL_ARM_TENDON_END",
    "CONICAL_ARM_TENDON_ANGLES",
    "CONICAL_ARM_MARKERS",
    "ring_offsets",
    "tendon_ring_pcs",
    "TendonArm",
    "inchworm",
    "snake",
    "SnakeBody",
    "crawler",
    "CrawlerBody",
    "slope_gravity",
    "brittle_star",
    "gripper",
    "two_arm_platform",
    "cart_arm",
    "spacer_arm",
    "disc_inertia",
    "box_inertia",
    "INCHWORM_BODY",
    "BRITTLE_STAR_ARM",
    "GRIPPER_FINGER",
    "PLATFORM_ARM",
    "CART_ARM",
    "SPACER_SECTION",
    "RETARDATION_TIME",
    "BRITTLE_STAR_HUB",
    "GRIPPER_PALM",
    "PLATFORM_SIZE",
    "CART_SIZE",
    "SPACER_DISC",
    "parallel_continuum_robot",
    "PARALLEL_ROBOT",
    "chiral_structure",
    "CHIRAL_STRUCTURE",
    "cable_driven_arm",
    "triangle_plate_inertia",
    "CABLE_ARM_ROD",
    "CABLE_ARM_PLATE",
    "CABLE_ARM_DENSITY",
    "CABLE_ARM_CABLE_ANGLES",
    "cable_driven_finger",
    "joint_natural_shape",
    "FINGER_JOINT",
    "FINGER_JOINT_SHAPES",
    "FINGER_BONE_LENGTHS",
    "FINGER_BONE_SECTION",
    "FINGER_BONE_DENSITY",
    "FINGER_CABLE_OFFSET",
]
