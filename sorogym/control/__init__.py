"""Model-based control: references, configuration-space controllers, the control-affine
split of the dynamics, half-space projections, high-order CLF/CBF controllers and
quasi-static tendon-space control (see each module's docstring).

The controller contract: a controller maps the time ``t`` [s], the plant state
``y = [q, qd]`` ``(2n,)`` and its own state ``z`` (a pytree, from ``initial_state()``) to
``(u, dz/dt)``; it runs inside :func:`sorogym.sim.rollout_closed_loop_to` (continuous) and
:func:`sorogym.sim.rollout_discrete_closed_loop_to` (zero-order hold).
"""

from ._actuation_space import ACTUATION_COMPENSATIONS, ActuationSpaceController, ActuationSpaceDynamics
from ._affine import ControlAffine, SecondOrderOutput, control_affine_dynamics, second_order_output
from ._clf_cbf import (
    SecondOrderGains,
    clf_cbf_control,
    contact_barrier,
    second_order_halfspace,
    tip_distance,
)
from ._configuration import COMPENSATIONS, ConfigurationController, PIDGains, check_full_actuation, saturate
from ._operational import ImpedanceController, OperationalSpaceDynamics, SynergisticController, matched_impedance_gains
from ._projection import project_halfspace, project_halfspace_box
from ._quasi_static import (
    bounded_least_squares_step,
    equilibrium_from_rest,
    quasi_static_tension_control,
    static_drive_sensitivity,
    static_equilibrium,
    static_tip_sensitivity,
)
from ._reference import (
    ConstantReference,
    FunctionReference,
    PoseReference,
    Reference,
    ReferenceSample,
    SampledReference,
    pose_error,
)

__all__ = [
    "Reference",
    "ReferenceSample",
    "FunctionReference",
    "ConstantReference",
    "SampledReference",
    "PoseReference",
    "pose_error",
    "COMPENSATIONS",
    "ConfigurationController",
    "PIDGains",
    "check_full_actuation",
    "saturate",
    "OperationalSpaceDynamics",
    "ImpedanceController",
    "SynergisticController",
    "matched_impedance_gains",
    "ActuationSpaceDynamics",
    "ActuationSpaceController",
    "ACTUATION_COMPENSATIONS",
    "ControlAffine",
    "SecondOrderOutput",
    "control_affine_dynamics",
    "second_order_output",
    "SecondOrderGains",
    "clf_cbf_control",
    "second_order_halfspace",
    "contact_barrier",
    "tip_distance",
    "project_halfspace",
    "project_halfspace_box",
    "bounded_least_squares_step",
    "quasi_static_tension_control",
    "static_drive_sensitivity",
    "static_equilibrium",
    "equilibrium_from_rest",
    "static_tip_sensitivity",
]
