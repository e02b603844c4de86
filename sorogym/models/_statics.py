"""Static equilibria of any model: ``G(q) + K(q) = A(q) u + tau_ext``, differentiable.

The solve runs in one Newton loop, in two stages:

1. *Continuation*: every load, gravity included, is raised linearly from zero over
   ``ramp_steps`` stages with a few Newton steps each, solving
   ``K(q) + lam (G(q) - A(q) u - tau_ext) = 0`` for ``lam = 1/(S+1), 2/(S+1), ...``
   (``G`` is linear in the gravity vector). This keeps the iterate on the equilibrium branch
   connected to the unloaded robot (large loads from rest send plain Newton to far,
   unstable roots).
2. *Newton at the full load* until the step falls below ``atol + rtol |q|``.

Every step is backtracked (the first of 1, 1/2, 1/4, 1/8 that lowers the residual norm).
Both stages share one traced residual and Jacobian (the compiled program stays small), and
the loop is wrapped in :func:`jax.lax.custom_root`: the derivative of the solution ``q*``
with respect to anything the residual depends on (``u``, ``tau_ext`` and every physical
parameter of the model) comes from the implicit function theorem,
``dq*/dtheta = -(dr/dq)^-1 dr/dtheta``, in forward and reverse mode, without differentiating
through the iterations.

Closed chains (models with :attr:`~sorogym.models.SoftRobot.num_constraints` ``c > 0``):
the unknowns are ``(q, lam)`` ``(n + c,)`` and the residual the KKT system
``[G(q) + K(q) - A u - tau_ext - G_c(q)^T lam; phi(q)]`` with the closure equations ``phi``
and their Jacobian ``G_c``; the continuation and the root find run on it unchanged, and
``lam`` (the closure wrenches) is returned on request.

Dead loads at points of a rod (``point_wrenches``: world-frame wrenches of fixed direction
at arc lengths ``s``) add ``-sum_i J(q, s_i)^T w_i`` to the residual, with ``J`` the
inertial-frame twist Jacobian: a configuration-dependent generalized force, unlike
``tau_ext``.

Shapes: ``q`` ``(n,)``, ``u`` ``(m,)``, ``tau_ext`` ``(n,)``; SI units of the model.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float


def static_residual(
    model,
    q: Float[Array, " n"],
    u: Float[Array, " m"],
    tau_ext: Float[Array, " n"] | None = None,
    point_wrenches: tuple[Array, Array] | None = None,
) -> Float[Array, " n"]:
    """``G(q) + K(q) - A(q) u - tau_ext - sum_i J(q, s_i)^T w_i`` ``(n,)`` [generalized
    force]: zero at a static equilibrium under the efforts ``u``, the external generalized
    force ``tau_ext`` and the dead loads ``point_wrenches = (s (p,), w (p, d))`` (world-frame
    ``[moment, force]`` at arc lengths ``s`` of a rod)."""
    r = model.potential_force(q) - model.actuation_force(q, u) - _point_wrench_force(model, q, point_wrenches)
    return r if tau_ext is None else r - tau_ext


def _point_wrench_force(model, q, point_wrenches) -> Array:
    """``sum_i J(q, s_i)^T w_i`` ``(n,)`` of the dead loads ``(s (p,), w (p, d))`` (0 without)."""
    if point_wrenches is None:
        return jnp.zeros_like(q)
    s_ps, wrenches = point_wrenches
    return jnp.einsum("pdn,pd->n", model.jacobian_batched(q, s_ps), wrenches)


def _check_point_wrenches(model, point_wrenches, dtype):
    if point_wrenches is None:
        return None
    if not hasattr(model, "jacobian_batched"):
        raise TypeError(f"point_wrenches: {type(model).__name__} has no arc-length Jacobians (rods only)")
    s_ps, wrenches = (jnp.asarray(x, dtype) for x in point_wrenches)
    d = 3 if getattr(model, "planar", False) else 6
    if s_ps.ndim != 1 or wrenches.shape != (s_ps.shape[0], d):
        raise ValueError(
            f"point_wrenches: expected (s (p,), wrenches (p, {d})), got shapes {s_ps.shape} and {wrenches.shape}"
        )
    return s_ps, wrenches


def _float_type(model):
    """The float type of the model's parameters (JAX's default without any)."""
    floats = [x for x in jax.tree.leaves(model) if eqx.is_inexact_array(x)]
    return floats[0].dtype if floats else jnp.result_type(float)


def _check_loads(model, u, tau_ext, q0):
    n, m = model.num_dofs, model.num_actuators
    if model.num_positions != n:
        raise ValueError(
            f"{type(model).__name__}: static_equilibrium solves on vector-space configurations; this model has "
            f"{model.num_positions} configuration entries for {n} velocities (free or spherical joints)"
        )
    dtype = _float_type(model)
    u = jnp.zeros((m,), dtype) if u is None else jnp.asarray(u)
    tau_ext = jnp.zeros((n,), u.dtype) if tau_ext is None else jnp.asarray(tau_ext)
    q0 = jnp.zeros((n,), u.dtype) if q0 is None else jnp.asarray(q0)
    for name, value, size in (("u", u, m), ("tau_ext", tau_ext, n), ("q0", q0, n)):
        if value.shape != (size,):
            raise ValueError(f"{name}: expected shape ({size},), got {value.shape}")
    return u, tau_ext, q0


def static_equilibrium(
    model,
    u: Float[Array, " m"] | None = None,
    tau_ext: Float[Array, " n"] | None = None,
    *,
    q0: Float[Array, " n"] | None = None,
    ramp_steps: int = 8,
    newton_per_step: int = 3,
    rtol: float | None = None,
    atol: float | None = None,
    max_steps: int = 64,
    throw: bool = True,
    point_wrenches: tuple[Array, Array] | None = None,
    return_multipliers: bool = False,
) -> Float[Array, " n"] | tuple[Float[Array, " n"], Float[Array, " c"]]:
    """The configuration ``q*`` ``(n,)`` with ``G(q*) + K(q*) = A(q*) u + tau_ext``
    (``+ sum_i J(q*, s_i)^T w_i`` with ``point_wrenches``).

    Args:
        model: any :class:`~sorogym.models.SoftRobot`.
        u: actuator efforts ``(m,)`` (default zeros).
        tau_ext: external generalized force ``(n,)`` (default zeros).
        q0: start of the continuation ``(n,)`` (default the reference configuration
            ``q = 0``, where the unloaded robot rests).
        ramp_steps: continuation stages (``0``: Newton at the full load from ``q0``).
        newton_per_step: Newton steps per continuation stage.
        rtol, atol: tolerances on the full-load Newton step (max norm, relative to the
            iterate); the residual at convergence is then far below them (quadratic
            convergence). Default by the model's float type: ``1e-10, 1e-12`` in float64,
            ``1e-5, 1e-7`` in float32 (whose rounding the float64 values are below).
        max_steps: Newton steps at the full load.
        throw: raise (a runtime error, also under ``jit``) when the root find does not
            converge; ``False`` returns the last iterate.
        point_wrenches: dead loads on a rod, ``(s (p,) [m], w (p, d))`` with ``w`` the
            world-frame ``[moment, force]`` at each arc length (``d`` = 3 planar: ``[m_z,
            f_x, f_y]``; 6 spatial), raised with the other loads.
        return_multipliers: also return the closure multipliers ``lam`` ``(c,)`` of a
            closed chain (the generalized closure force is ``G_c^T lam``).

    Returns:
        ``q*`` (or ``(q*, lam)``), differentiable (implicit function theorem) with respect
        to ``u``, ``tau_ext`` and the model's parameters.
    """
    u, tau_ext, q0 = _check_loads(model, u, tau_ext, q0)
    double = jnp.finfo(_float_type(model)).bits >= 64
    rtol = (1e-10 if double else 1e-5) if rtol is None else rtol
    atol = (1e-12 if double else 1e-7) if atol is None else atol
    point_wrenches = _check_point_wrenches(model, point_wrenches, u.dtype)
    if int(ramp_steps) < 0 or int(newton_per_step) < 1:
        raise ValueError(f"need ramp_steps >= 0 and newton_per_step >= 1, got {ramp_steps}, {newton_per_step}")
    frozen = jax.lax.stop_gradient((eqx.filter(model, eqx.is_array), u, tau_ext, point_wrenches))
    model_ng = eqx.combine(frozen[0], model)
    n, c = model.num_dofs, model.num_constraints
    ramp, per_stage = int(ramp_steps), int(newton_per_step)

    def stage_residual(x, scale):
        """The residual with the loads (everything but the elastic force) times ``scale``."""
        q = x[:n]
        loads = (
            model_ng.gravitational_force(q)
            - model_ng.actuation_force(q, frozen[1])
            - frozen[2]
            - _point_wrench_force(model_ng, q, frozen[3])
        )
        return _with_closures(model_ng, x, model_ng.elastic_force(q) + scale * loads)

    def newton(x, scale):
        """One Newton step on the stage residual, backtracked (step 1, 1/2, 1/4, 1/8: the
        first that lowers the residual norm) so that no step jumps to another branch;
        returns the new iterate and the full Newton step."""

        def both(x_):
            r = stage_residual(x_, scale)
            return r, r

        J, r = jax.jacfwd(both, has_aux=True)(x)
        step = jnp.linalg.solve(J, r)
        start = jnp.sum(r**2)

        def halve(_, carry):
            alpha, done = carry
            better = jnp.sum(stage_residual(x - alpha * step, scale) ** 2) < start
            return jnp.where(done | better, alpha, 0.5 * alpha), done | better

        alpha, _ = jax.lax.fori_loop(0, 3, halve, (jnp.ones((), x.dtype), jnp.zeros((), bool)))
        return x - alpha * step, step

    def solve(_, x_init):
        """Continuation (``ramp * per_stage`` steps at rising load) then Newton at the full
        load until the step is below ``atol + rtol |x|`` (max norm) or ``max_steps``: one
        loop, one traced residual and Jacobian for both stages. Returns the iterate and
        the last step in units of the tolerance (converged: ``<= 1``)."""

        def keep_going(carry):
            _, k, size = carry
            return (k < ramp * per_stage) | ((k < ramp * per_stage + max_steps) & ~(size <= 1.0))

        def body(carry):
            x, k, _ = carry
            scale = jnp.minimum((k // per_stage + 1.0) / (ramp + 1.0), 1.0)
            x_new, step = newton(x, scale)
            size = jnp.max(jnp.abs(step) / (atol + rtol * jnp.abs(x_new)), initial=0.0)
            return x_new, k + 1, jnp.where(scale < 1.0, jnp.inf, size)  # converged at the full load only

        x, _, size = jax.lax.while_loop(
            keep_going, body, (x_init, jnp.zeros((), int), jnp.asarray(jnp.inf, x_init.dtype))
        )
        return x, size  # (a float: custom_root's rule gives its auxiliary output float tangents)

    def residual(x):
        """The full residual, differentiable in everything it closes over."""
        return _with_closures(model, x, static_residual(model, x[:n], u, tau_ext, point_wrenches))

    def tangent_solve(linear, rhs):
        return jnp.linalg.solve(jax.jacfwd(linear)(jnp.zeros_like(rhs)), rhs)

    x0 = jnp.concatenate([jax.lax.stop_gradient(q0), jnp.zeros((c,), q0.dtype)])
    x, size = jax.lax.custom_root(residual, x0, solve, tangent_solve, has_aux=True)
    if throw:
        x = eqx.error_if(
            x,
            ~(jax.lax.stop_gradient(size) <= 1.0),
            f"static_equilibrium: Newton did not converge in max_steps={max_steps} steps",
        )
    q, lam = x[:n], x[n:]
    return (q, lam) if return_multipliers else q


def _with_closures(model, x: Array, r: Array) -> Array:
    """The KKT residual ``[r - G_c^T lam; phi]`` of ``x = [q, lam]`` (``r`` itself for
    models without closures)."""
    n = model.num_dofs
    if not model.num_constraints:
        return r
    phi, G = model.constraint_terms(x[:n])
    return jnp.concatenate([r - G.T @ x[n:], phi])
