"""Integrators and rollouts (diffrax solvers, kick-drift Euler, the fast env integrator, the
variational integrator, the overdamped scheme)."""

from ._overdamped import absolute_stiffness as absolute_stiffness
from ._overdamped import overdamped_step as overdamped_step
from ._overdamped import overdamped_vector_field as overdamped_vector_field
from ._rollout import Trajectory as Trajectory
from ._rollout import integrate_fixed as integrate_fixed
from ._rollout import rollout_closed_loop_to as rollout_closed_loop_to
from ._rollout import rollout_discrete_closed_loop_to as rollout_discrete_closed_loop_to
from ._rollout import rollout_to as rollout_to
from ._schemes import FIXED_STEP_SCHEMES as FIXED_STEP_SCHEMES
from ._schemes import scheme_vector_field as scheme_vector_field
from ._solvers import AppliedForce as AppliedForce
from ._solvers import LinearTrapezoid as LinearTrapezoid
from ._solvers import SemiImplicitEuler as SemiImplicitEuler
from ._solvers import actuation_applied_force as actuation_applied_force
from ._solvers import linear_trapezoid_step as linear_trapezoid_step
from ._solvers import semi_implicit_euler_step as semi_implicit_euler_step
from ._solvers import trapezoid_midpoint_step as trapezoid_midpoint_step
from ._solvers import trapezoid_predictor_corrector_step as trapezoid_predictor_corrector_step
from ._variational import VariationalMidpoint as VariationalMidpoint
from ._variational import variational_midpoint_step as variational_midpoint_step

__all__ = [
    "Trajectory",
    "integrate_fixed",
    "rollout_to",
    "rollout_closed_loop_to",
    "rollout_discrete_closed_loop_to",
    "LinearTrapezoid",
    "SemiImplicitEuler",
    "VariationalMidpoint",
    "variational_midpoint_step",
    "linear_trapezoid_step",
    "semi_implicit_euler_step",
    "trapezoid_predictor_corrector_step",
    "trapezoid_midpoint_step",
    "FIXED_STEP_SCHEMES",
    "overdamped_step",
    "overdamped_vector_field",
    "scheme_vector_field",
    "absolute_stiffness",
    "AppliedForce",
    "actuation_applied_force",
]
