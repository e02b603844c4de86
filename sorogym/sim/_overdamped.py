"""The overdamped (inertia-free) fixed-step scheme: quasi-static motion through folds.

Where inertia is negligible against damping and elasticity (slow drives, thin tubes, a
robot in tissue or a viscous medium), the equation of motion reduces to the first-order
gradient flow of the potential energy in the metric of the damping matrix,

    D qd = f(q),    f(q) = A u + tau_ext - K(q) - G(q),

whose stable rest points are the static equilibria and which passes a fold (a snap) by
sliding down the energy, the way a slowly driven, heavily damped structure does. One step
of size ``h`` is the linearly implicit theta-method on the elasticity,

    (D / h + theta |S|) dq = f(q),    q+ = retract(q, dq),    qd+ = dq / h,

with ``S`` the tangent stiffness (:meth:`~sorogym.models.SoftRobot.tangent_stiffness`) and
``|S| = V |Lambda| V^T`` its absolute value (eigenvalues replaced by their moduli). Where
``S`` is positive definite (every stable state) this is one Newton iteration of the
implicit step, so with ``h`` long against the relaxation times ``D / S`` a few steps land
on the equilibrium; along a direction of negative curvature (past a fold) ``|S|`` keeps
the step a bounded descent of the energy, of length ``|f| / (d / h + |lambda|)``, instead
of the ascent or blow-up that Newton's method with ``S`` itself would take (the
saddle-free Newton step of nonconvex optimisation). The energy of the unforced flow
decreases at every step that resolves it.

Requirements: ``D`` positive definite on every coordinate (each coordinate relaxes at a
finite rate); gravity is taken explicitly (its stiffness is not in ``|S|``). Line loads and
closed chains are not supported (a ``ValueError``). Cost per step: one evaluation of the
elastic force and its tangent stiffness, a symmetric eigendecomposition and a Cholesky
solve; the mass matrix is never formed.
"""

from __future__ import annotations

import jax.numpy as jnp
from jaxtyping import Array

from ..models import SoftRobot
from ..models._linalg import spd_solve
from ._solvers import AppliedForce


def absolute_stiffness(S: Array) -> Array:
    """``|S| = V |Lambda| V^T`` ``(n, n)`` of the symmetric part of ``S``: the positive
    semi-definite matrix with ``S``'s eigenvectors and the moduli of its eigenvalues."""
    w, V = jnp.linalg.eigh(0.5 * (S + S.T))
    return (V * jnp.abs(w)) @ V.T


def overdamped_step(
    model: SoftRobot,
    y: Array,
    applied_force: AppliedForce,
    h,
    line_load=None,
    line_load_iterations: int = 0,
    theta: float = 1.0,
) -> Array:
    """One step of size ``h`` [s] of the overdamped scheme (module docstring) from
    ``y = [q, qd]`` (``qd`` is not used: the flow has no inertia); returns ``[q+, dq / h]``.

    ``applied_force(q, qd)`` is evaluated once, at ``y``. ``theta`` in [1/2, 1] weighs the
    step's end in the elasticity: 1 (backward Euler, the default of this scheme) lands on
    the equilibrium in one step once ``h`` is long against the relaxation times, 1/2 is the
    trapezoidal rule (second order, for time-accurate relaxation). ``line_load`` and closed
    chains raise ``ValueError``; ``line_load_iterations`` is accepted for the scheme table's
    signature."""
    if line_load is not None:
        raise ValueError("line_load: the overdamped scheme takes no line loads (use 'trapezoid')")
    if model.num_constraints:
        raise ValueError(
            f"model: the overdamped scheme does not support closed chains ({model.num_constraints} constraint rows)"
        )
    q, v = model.split_state(y)
    f = applied_force(q, v) - model.elastic_force(q) - model.gravitational_force(q)
    W = model.damping_matrix() / h + theta * absolute_stiffness(model.tangent_stiffness(q))
    dq = spd_solve(W, f)
    return model.pack_state(model.retract(q, dq), dq / h)


def overdamped_vector_field(model: SoftRobot, t, y: Array, actuation_args: tuple = ()) -> Array:
    """``dy/dt`` of the continuous overdamped flow the scheme discretises, with the signature
    of :meth:`~sorogym.models.SoftRobot.forward_dynamics` (``actuation_args``: ``()``,
    ``(u,)`` or ``(u, tau_ext)``): ``dq/dt`` is the configuration rate of
    ``v = D^-1 f(q)``; the velocity part of ``y`` has no dynamics (its rate is zero). The
    reference an adaptive ODE solver integrates to check the scheme."""
    q, _ = model.split_state(model.project_state(y))
    f = model.generalized_force(q, *actuation_args) - model.elastic_force(q) - model.gravitational_force(q)
    v = spd_solve(model.damping_matrix(), f)
    return jnp.concatenate([model.configuration_rate(q, v), jnp.zeros_like(v)])
