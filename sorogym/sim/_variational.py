"""A variational (discrete Euler-Lagrange) integrator: symplectic, momentum-conserving and
without energy drift.

The step follows the discrete Lagrangian of the midpoint rule,
``L_d(q_k, q_k+1) = h L(q_mid, v)`` with ``v = (q_k+1 - q_k) / h`` and ``q_mid = q_k + h v / 2``,
``L(q, v) = v^T M(q) v / 2 - U(q)`` (``U``: gravity plus elasticity). The forced discrete
Euler-Lagrange equations in position-momentum form (Marsden and West's variational
integrators, with the discrete forces ``h F / 2`` at each end of the step) are

    p_k   = M(q_mid) v - h/2 [dL/dq(q_mid, v) + F(q_mid, v)]      (solved for v),
    p_k+1 = M(q_mid) v + h/2 [dL/dq(q_mid, v) + F(q_mid, v)] = 2 M(q_mid) v - p_k,

with ``dL/dq = d/dq (v^T M v / 2) - G - K`` and ``F = A u + tau_ext - D v`` (plus a line load). The state
keeps the model's ``[q, qd]`` contract through the Legendre map ``p = M(q) qd`` at the step's
ends. Without forces the map ``(q_k, p_k) -> (q_k+1, p_k+1)`` is symplectic, conserves
the momentum of every symmetry of ``L`` exactly (a free body's linear momentum) and keeps
the energy error bounded (second order in ``h``, no secular drift, on any horizon where
the motion stays regular); it is time-reversible. Damping enters as a force, so the energy
decays at the physical rate.

Cost per step: a Cholesky factorisation and a few passes of the model's dynamics in
forward mode (:func:`variational_midpoint_step`); several times
:func:`~sorogym.sim.linear_trapezoid_step`, which the environments keep. It is the scheme
for long conservative simulations and for energy-based analysis.

On Lie groups (free and spherical joints, ``model.num_positions > model.num_dofs``) the
same discrete Lagrangian is taken along the model's retraction: ``q_k+1 = retract(q_k, h v)``,
``q_mid = retract(q_k, h v / 2)``, with ``v`` the (body-frame) velocity, and variations
``retract(q_k, eta)``. The discrete Euler-Lagrange equations then carry the retraction's
right Jacobian ``J(x)`` (``retract(q, x + e y) = retract(retract(q, x), e J(x) y)`` to first
order) and its adjoint ``Ad(x)`` (``retract(retract(q, e eta), x) = retract(retract(q, x),
e Ad(x) eta)``), both obtained from ``retract`` by forward-mode AD (:func:`retraction_maps`):

    mu_k+1 = J(h v)^-T [pi + h/2 J(h v/2)^T f],    mu_k = Ad(h v)^T mu_k+1 - h Ad(h v/2)^T f,

with ``pi = M(q_mid) v``, ``f = dL/dq(q_mid, v) + F`` (the configuration derivative along
the retraction) and ``mu = M qd`` at the step's ends. On vector spaces ``J = Ad = I`` and
the equations are those above. (A Lie-group variational integrator in the sense of the
Hamilton-Pontryagin integrators on Lie groups; the configuration stays on the group by
construction.)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jaxtyping import Array

from ..models import SoftRobot
from ..models._linalg import spd_solve
from ._solvers import AppliedForce, _FixedStepSolver, actuation_applied_force

#: Iterations at most per step (a step that needs more returns a non-finite state).
MAX_ITERATIONS = 30


def retraction_maps(model: SoftRobot, q: Array, x: Array) -> tuple[Array, Array]:
    """``(J(x), Ad(x))`` ``(n, n)`` of the model's retraction at ``q`` (module docstring):
    with ``P`` the tangent map of ``z -> retract(retract(q, x), z)`` at 0 (``(nq, n)``, full
    column rank), ``J = P^+ d/dx retract(q, x)`` and ``Ad = P^+ d/de retract(retract(q, e), x)``.
    Identities on vector-space coordinates; the SO(3) / SE(3) right Jacobian and inverse
    adjoint of the increment on spherical and free joints."""
    end = model.retract(q, x)
    zero = jnp.zeros_like(x)
    P = jax.jacfwd(lambda z: model.retract(end, z))(zero)
    along = jax.jacfwd(lambda y: model.retract(q, y))(x)
    moved = jax.jacfwd(lambda e: model.retract(model.retract(q, e), x))(zero)
    PtP = P.T @ P
    return jnp.linalg.solve(PtP, P.T @ along), jnp.linalg.solve(PtP, P.T @ moved)


def iteration_tolerances(dtype) -> tuple[float, float]:
    """``(tol, floor)`` of the step's iteration on ``v``: it stops when the update is below
    ``tol = eps^(3/4)`` of ``max |v|`` (1.8e-12 in float64, 6.5e-6 in float32), or below
    ``floor = sqrt(eps)`` of it and no longer halving (the rounding noise of a stiff rod's
    solve, where a tighter stop would run the iterations to their limit)."""
    eps = float(jnp.finfo(dtype).eps)
    return eps**0.75, eps**0.5


def variational_midpoint_step(
    model: SoftRobot,
    y: Array,
    applied_force: AppliedForce,
    h,
    line_load=None,
    line_load_iterations: int = 0,
    theta: float = 0.5,
) -> Array:
    """One step of size ``h`` [s] of the midpoint variational integrator (module docstring)
    from ``y = [q, qd]``: the same signature as the other entries of
    :data:`~sorogym.sim.FIXED_STEP_SCHEMES`. ``applied_force(q, qd)`` and an optional
    ``line_load`` are evaluated at the step's midpoint and mean velocity. ``theta`` must be
    1/2 (the scheme is symmetric) and ``line_load_iterations`` is unused (the load is
    inside the solve). On Lie groups the configuration moves along ``model.retract``.

    The momentum equation is solved for ``v`` by a simplified Newton iteration with the
    fixed matrix ``W = M(q_k) + h/2 D + h^2/4 dK/dq(q_k)``, the trapezoidal schemes' own
    iteration matrix (factored once per step; the exact Jacobian adds terms of order
    ``h |v| dM/dq`` and ``h^2 dG/dq``, so the iteration contracts by about that factor per
    pass). Each pass costs one forward-mode pass of ``dynamical_terms`` in the direction
    ``v``, which gives ``M``, ``C v``, ``G`` and ``dM/dq . v``, hence the configuration
    derivative of the kinetic energy ``d/dq (v^T M v) / 2 = (dM/dq . v) v - C v`` without
    reverse-mode AD. A step that does not converge within :data:`MAX_ITERATIONS` returns a
    non-finite state (an environment ends the episode)."""
    del line_load_iterations
    if model.num_constraints:
        raise TypeError(
            f"{type(model).__name__} has {model.num_constraints} closure constraints: the variational scheme does "
            "not take constraints; use 'trapezoid', 'trapezoid_pc' or a diffrax solver"
        )
    if not isinstance(theta, jax.core.Tracer) and float(theta) != 0.5:
        raise ValueError(f"theta: the variational scheme is the symmetric midpoint rule (theta = 0.5), got {theta}")
    on_group = model.num_positions != model.num_dofs
    q, qd = model.split_state(y)
    M0 = model.inertia_matrix(q)
    p = M0 @ qd
    D = model.damping_matrix()

    def retract_or_add(x):
        return model.retract(q, x) if on_group else q + x

    dK = model.tangent_stiffness(q)
    W = jax.scipy.linalg.cho_factor(M0 + (0.5 * h) * D + (0.25 * h * h) * dK)

    def kinetic_derivative(mid, v):
        """``(M, G, d/dq (v^T M v) / 2)`` at the midpoint (on a group the derivative is
        along the retraction, by reverse-mode AD)."""
        if not on_group:
            (M, cor, grav), (dM, _, _) = jax.jvp(lambda x: model.dynamical_terms(x, v), (mid,), (v,))
            return M, grav, dM @ v - cor
        M, _, grav = model.dynamical_terms(mid, v)
        dT = jax.grad(lambda e: 0.5 * v @ (model.inertia_matrix(model.retract(mid, e)) @ v))(jnp.zeros_like(v))
        return M, grav, dT

    def momenta(v):
        """``(mu_k+1, R(v))``: the momentum at the step's end and the residual of the
        momentum equation at the (body) velocity ``v``."""
        mid = retract_or_add((0.5 * h) * v)
        M, grav, dT = kinetic_derivative(mid, v)
        f = applied_force(mid, v) - D @ v - model.elastic_force(mid) - grav + dT
        if line_load is not None:
            f = f + model.inertia_bias_and_line_load_map(mid, v, line_load)[2](v).force
        pi = M @ v
        if not on_group:
            end = pi + (0.5 * h) * f
            return end, end - h * f - p
        J, Ad = retraction_maps(model, q, h * v)
        J_half, Ad_half = retraction_maps(model, q, (0.5 * h) * v)
        end = jnp.linalg.solve(J.T, pi + (0.5 * h) * (J_half.T @ f))
        return end, Ad.T @ end - h * (Ad_half.T @ f) - p

    tol, floor = iteration_tolerances(y.dtype)

    def update(v):
        end, r = momenta(v)
        return jax.scipy.linalg.cho_solve(W, r), end

    def unfinished(carry):
        v, dv, _, previous, k = carry
        size, scale = jnp.max(jnp.abs(dv)), jnp.max(jnp.abs(v))
        stalled = (size < floor * scale) & (size > 0.5 * previous)
        return (k < MAX_ITERATIONS) & (size > tol * scale) & ~stalled

    def iterate(carry):
        v, dv, _, _, k = carry
        v = v - dv
        dv_next, end = update(v)
        return v, dv_next, end, jnp.max(jnp.abs(dv)), k + 1

    dv0, end0 = update(qd)
    inf = jnp.asarray(jnp.inf, y.dtype)
    v, dv, end, _, k = jax.lax.while_loop(unfinished, iterate, (qd, dv0, end0, inf, 0))
    failed = unfinished((v, dv, end, inf, 0)) & (k >= MAX_ITERATIONS)
    v = jnp.where(failed, jnp.nan, v)
    q_next = retract_or_add(h * v)
    qd_next = spd_solve(model.inertia_matrix(q_next), end)
    return model.pack_state(q_next, qd_next)


class VariationalMidpoint(_FixedStepSolver):
    """The midpoint variational integrator (:func:`variational_midpoint_step`) as a
    fixed-step diffrax solver; ``args`` is the actuation tuple ``()``, ``(u,)`` or
    ``(u, tau_ext)`` of ``model.forward_dynamics``. Second order."""

    def order(self, terms):
        return 2

    def _advance(self, t0, y0, args, h):
        return variational_midpoint_step(self.model, y0, actuation_applied_force(self.model, args), h)
