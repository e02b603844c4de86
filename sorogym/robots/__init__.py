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
from ._tendon_ring import ring_offsets, tendon_ring_pcs

__all__ = [
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
]
