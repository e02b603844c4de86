"""Static equilibria of any model: ``G(q) + K(q) = A(q) u + tau_ext``, differentiable.

The solve runs in two stages:

1. *Continuation* (no gradients): every load, gravity included, is raised linearly from
   zero over ``ramp_steps`` stages with a few Newton steps each, solving
   ``K(q) + lam (G(q) - A(q) u - tau_ext) = 0`` for ``lam = 1/(S+1), 2/(S+1), ...``
   (``G`` is linear in the gravity vector). This keeps the iterate on the equilibrium branch
   connected to the unloaded robot (large loads from rest send plain Newton to far,
   unstable roots).
2. *Root find* at the full load with optimistix's Newton solver and its implicit adjoint:
   the derivative of the solution ``q*`` with respect to anything the residual depends on
   (``u``, ``tau_ext`` and every physical parameter of the model) comes from the implicit
   function theorem, ``dq*/dtheta = -(dr/dq)^-1 dr/dtheta``, in forward and reverse mode,
   without differentiating through the iterations.

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
import optimistix as optx
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


def _check_loads(model, u, tau_ext, q0):
    n, m = model.num_dofs, model.num_actuators
    if model.num_positions != n:
        raise ValueError(
            f"{type(model).__name__}: static_equilibrium solves on vector-space configurations; this model has "
            f"{model.num_positions} configuration entries for {n} velocities (free or spherical joints)"
        )
    floats = [x for x in jax.tree.leaves(model) if eqx.is_inexact_array(x)]
    dtype = floats[0].dtype if floats else jnp.result_type(float)
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
    rtol: float = 1e-10,
    atol: float = 1e-12,
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
        rtol, atol: optimistix Newton tolerances on the iterate (max norm); the residual
            at convergence is then far below them (quadratic convergence).
        max_steps: Newton steps of the final root find.
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
    point_wrenches = _check_point_wrenches(model, point_wrenches, u.dtype)
    if int(ramp_steps) < 0 or int(newton_per_step) < 1:
        raise ValueError(f"need ramp_steps >= 0 and newton_per_step >= 1, got {ramp_steps}, {newton_per_step}")
    frozen = jax.lax.stop_gradient((eqx.filter(model, eqx.is_array), u, tau_ext, point_wrenches))
    model_ng = eqx.combine(frozen[0], model)

    n, c = model.num_dofs, model.num_constraints

    def newton(x, scale):
        """One Newton step on the stage residual, backtracked (step 1, 1/2, 1/4, 1/8: the
        first that lowers the residual norm) so that no step jumps to another branch."""

        def stage_residual(x_):
            q_ = x_[:n]
            loads = (
                model_ng.gravitational_force(q_)
                - model_ng.actuation_force(q_, frozen[1])
                - frozen[2]
                - _point_wrench_force(model_ng, q_, frozen[3])
            )
            return _with_closures(model_ng, x_, model_ng.elastic_force(q_) + scale * loads)

        def both(q_):
            r = stage_residual(q_)
            return r, r

        J, r = jax.jacfwd(both, has_aux=True)(x)
        step = jnp.linalg.solve(J, r)
        alphas = jnp.asarray([1.0, 0.5, 0.25, 0.125], x.dtype)
        norms = jax.vmap(lambda a: jnp.sum(stage_residual(x - a * step) ** 2))(alphas)
        better = norms < jnp.sum(r**2)
        alpha = jnp.where(jnp.any(better), alphas[jnp.argmax(better)], alphas[-1])
        return x - alpha * step

    def stage(k, x):
        scale = (k + 1.0) / (ramp_steps + 1.0)
        return jax.lax.fori_loop(0, newton_per_step, lambda _, x_: newton(x_, scale), x)

    x0 = jnp.concatenate([jax.lax.stop_gradient(q0), jnp.zeros((c,), q0.dtype)])
    x_start = jax.lax.fori_loop(0, int(ramp_steps), stage, x0)

    def residual(x, args):
        model_, u_, tau_, wrenches_ = args
        return _with_closures(model_, x, static_residual(model_, x[:n], u_, tau_, wrenches_))

    sol = optx.root_find(
        residual,
        optx.Newton(rtol=rtol, atol=atol),
        x_start,
        args=(model, u, tau_ext, point_wrenches),
        max_steps=max_steps,
        adjoint=optx.ImplicitAdjoint(),
        throw=throw,
    )
    q, lam = sol.value[:n], sol.value[n:]
    return (q, lam) if return_multipliers else q


def _with_closures(model, x: Array, r: Array) -> Array:
    """The KKT residual ``[r - G_c^T lam; phi]`` of ``x = [q, lam]`` (``r`` itself for
    models without closures)."""
    n = model.num_dofs
    if not model.num_constraints:
        return r
    phi, G = model.constraint_terms(x[:n])
    return jnp.concatenate([r - G.T @ x[n:], phi])
