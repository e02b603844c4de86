"""Model-based control: the control-affine split of the dynamics, half-space projections,
high-order CLF/CBF controllers and quasi-static tendon-space control (see each module's
docstring)."""

from ._affine import ControlAffine, SecondOrderOutput, control_affine_dynamics, second_order_output
from ._clf_cbf import (
    SecondOrderGains,
    clf_cbf_control,
    contact_barrier,
    second_order_halfspace,
    tip_distance,
)
from ._projection import project_halfspace, project_halfspace_box
from ._quasi_static import (
    bounded_least_squares_step,
    quasi_static_tension_control,
    static_equilibrium,
    static_tip_sensitivity,
)

__all__ = [
    "ControlAffine", "SecondOrderOutput", "control_affine_dynamics", "second_order_output",
    "SecondOrderGains", "clf_cbf_control", "second_order_halfspace", "contact_barrier", "tip_distance",
    "project_halfspace", "project_halfspace_box",
    "bounded_least_squares_step", "quasi_static_tension_control", "static_equilibrium",
    "static_tip_sensitivity",
]
