"""The table of fixed-step schemes an environment or a rollout may run by name."""

from __future__ import annotations

from collections.abc import Callable

from ._overdamped import overdamped_step
from ._solvers import linear_trapezoid_step, trapezoid_predictor_corrector_step
from ._variational import variational_midpoint_step

#: The fixed-step schemes an environment may run (``config.integrator``), each
#: ``(model, y, applied_force, h, line_load=None, line_load_iterations=0, theta=0.5) -> y_next``.
FIXED_STEP_SCHEMES: dict[str, Callable] = {
    "trapezoid": linear_trapezoid_step,
    "trapezoid_pc": trapezoid_predictor_corrector_step,
    "variational": variational_midpoint_step,
    "overdamped": overdamped_step,
}
