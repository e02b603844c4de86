"""The table of fixed-step schemes an environment or a rollout may run by name."""

from __future__ import annotations

from collections.abc import Callable

from ._overdamped import overdamped_step, overdamped_vector_field
from ._solvers import linear_trapezoid_step, trapezoid_midpoint_step, trapezoid_predictor_corrector_step
from ._variational import variational_midpoint_step

#: The fixed-step schemes an environment may run (``config.integrator``), each
#: ``(model, y, applied_force, h, line_load=None, line_load_iterations=0, theta=0.5) -> y_next``.
FIXED_STEP_SCHEMES: dict[str, Callable] = {
    "trapezoid": linear_trapezoid_step,
    "trapezoid_pc": trapezoid_predictor_corrector_step,
    "trapezoid_midpoint": trapezoid_midpoint_step,
    "variational": variational_midpoint_step,
    "overdamped": overdamped_step,
}


def scheme_vector_field(name: str) -> Callable:
    """The continuous dynamics ``(model, t, y, actuation_args) -> dy/dt`` that the fixed-step
    scheme ``name`` discretises, for reference solutions: the overdamped flow for
    ``"overdamped"``, the full equation of motion
    (:meth:`~sorogym.models.SoftRobot.forward_dynamics`) for the others."""
    if name not in FIXED_STEP_SCHEMES:
        raise ValueError(f"scheme: unknown {name!r}; use one of {tuple(FIXED_STEP_SCHEMES)}")
    if name == "overdamped":
        return overdamped_vector_field
    return lambda model, t, y, actuation_args=(): model.forward_dynamics(t, y, actuation_args)
