"""Quasi-static tendon-space control: move the tip by changing the static equilibrium.

When a robot settles within one control period (heavily damped tendon arms at 10-20 Hz),
its tip is, to first order, a function of the actuator efforts alone: the equilibrium
``G(q) + K(q) = A(q) u`` defines ``q*(u)`` and the tip ``x(q*(u))``. Differentiating the
equilibrium condition gives the static sensitivity of the tip position to the efforts::

    dx/du = J_v(q) (d/dq [G + K - A(q) u])^-1 A(q)          (3, m)

The controller takes one damped least-squares step on this linearisation per control
period, from the equilibrium of the current efforts, correcting a fraction ``gain`` of the
tip error, under actuator bounds (tendons
only pull) and an optional per-step rate limit. The bounded least-squares problem is solved
by projected Newton iterations on the active set (``dx/du`` is badly conditioned: elongation
is far stiffer than bending, which defeats plain projected gradients).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ..models import SoftRobot
from ..models import static_residual as _static_residual


def _newton_step(model, q: Array, u: Array) -> Array:
    """One Newton step on :func:`_static_residual` (residual and Jacobian from one pass)."""

    def both(q_):
        r = _static_residual(model, q_, u)
        return r, r

    J, r = jax.jacfwd(both, has_aux=True)(q)
    return q - jnp.linalg.solve(J, r)


def static_equilibrium(model, q: Float[Array, " n"], u: Float[Array, " m"], iterations: int = 6) -> Float[Array, " n"]:
    """Newton iterations from ``q`` on ``G(q) + K(q) = A(q) u``: the configuration the robot
    settles to under the held efforts ``u`` (the nearest equilibrium to ``q``)."""
    return jax.lax.fori_loop(0, iterations, lambda _, q_: _newton_step(model, q_, u), q)


def equilibrium_from_rest(model, u: Float[Array, " m"], iterations: int = 25, ramp: int = 10) -> Float[Array, " n"]:
    """The equilibrium ``G(q) + K(q) = A(q) u`` on the branch connected to the unloaded
    robot: Newton iterations from ``q = 0`` while the efforts ramp linearly from 0 to ``u``
    over the first ``ramp`` iterations (continuation), ``iterations`` in all.

    Differentiable in ``u`` by the implicit function theorem: the Newton loop runs without
    gradients and one final Newton step from its result carries ``dq/du = (d/dq [G + K -
    A u])^-1 A`` (exact once the loop has converged)."""
    if not 1 <= ramp <= iterations:
        raise ValueError(f"need 1 <= ramp <= iterations, got ramp={ramp}, iterations={iterations}")
    u_fixed = jax.lax.stop_gradient(u)

    def body(k, q_):
        return _newton_step(model, q_, u_fixed * jnp.minimum(1.0, (k + 1.0) / ramp))

    q = jax.lax.stop_gradient(jax.lax.fori_loop(0, iterations, body, jnp.zeros(model.num_dofs, u.dtype)))
    # the final step: Jacobian at the converged point, residual carrying the dependence on u
    J = jax.jacfwd(lambda q_: _static_residual(model, q_, u_fixed))(q)
    return q - jnp.linalg.solve(J, _static_residual(model, q, u))


def static_tip_sensitivity(model, q: Float[Array, " n"], u: Float[Array, " m"]) -> tuple[Array, Array]:
    """Tip position ``(3,)`` [m] at ``q`` and its static sensitivity to the efforts
    ``dx/du`` ``(3, m)`` [m per effort unit], linearised about the equilibrium through
    ``q`` under ``u`` (see module docstring)."""
    stiffness = jax.jacfwd(lambda q_: _static_residual(model, q_, u))(q)
    A = model.actuation_matrix(q)
    pose, J = model.pose_and_jacobian(q, model.total_length)
    dq_du = jnp.linalg.solve(stiffness, A)
    return pose[:-1, -1], J[-pose.shape[0] + 1 :] @ dq_du


def static_drive_sensitivity(
    drive: Callable[[Array], SoftRobot],
    q: Float[Array, " n"],
    p: Float[Array, " k"],
    point: Callable[[SoftRobot, Array], Array],
) -> tuple[Array, Array]:
    """A point ``x`` ``(3,)`` [m] of the robot at ``q`` and its static sensitivity ``dx/dp``
    ``(3, k)`` to drives ``p`` that set parameters of the model rather than forces (a
    concentric tube robot's tube rotations [rad] and insertions [m]).

    ``drive(p)`` is the robot with its drives at ``p``, ``point(model, q)`` the point (the tip).
    About the equilibrium through ``q``, ``r(q, p) = G + K - A u = 0`` (no efforts) gives
    ``dq/dp = -(dr/dq)^-1 dr/dp``, so ``dx/dp = dx/dq dq/dp + dx/dp|_q`` (the drives also
    move the point directly, as an insertion does the tip)."""

    def residual(q_, p_):
        model = drive(p_)
        return _static_residual(model, q_, jnp.zeros((model.num_actuators,), q_.dtype))

    dq_dp = -jnp.linalg.solve(jax.jacfwd(residual, 0)(q, p), jax.jacfwd(residual, 1)(q, p))
    x = point(drive(p), q)
    dx_dq = jax.jacfwd(lambda q_: point(drive(p), q_))(q)
    dx_dp = jax.jacfwd(lambda p_: point(drive(p_), q))(p)
    return x, dx_dq @ dq_dp + dx_dp


def bounded_least_squares_step(
    S: Float[Array, "k m"],
    e: Float[Array, " k"],
    u: Float[Array, " m"],
    lower: Float[Array, " m"],
    upper: Float[Array, " m"],
    damping: float = 1e-6,
    max_step: float | None = None,
    iterations: int = 12,
) -> Float[Array, " m"]:
    """``u + du`` with ``du`` minimising ``|S du - e|^2 + damping |du|^2`` subject to
    ``lower <= u + du <= upper`` and, if given, ``|du_i| <= max_step``, by projected Newton
    iterations on the active set (exact once the active set is right; ``m`` is small)."""
    lo, hi = lower - u, upper - u
    if max_step is not None:
        lo, hi = jnp.maximum(lo, -max_step), jnp.minimum(hi, max_step)
    m = S.shape[1]
    eye = jnp.eye(m, dtype=S.dtype)
    H = S.T @ S + damping * eye
    g = S.T @ e

    def newton(_, du):
        # active set: components at a bound whose gradient pushes them outwards stay fixed;
        # the free ones solve the equality-constrained problem exactly
        grad = H @ du - g
        fixed = ((du <= lo) & (grad > 0)) | ((du >= hi) & (grad < 0))
        free = ~fixed
        A = jnp.where(free[:, None], jnp.where(free[None, :], H, 0.0), eye)
        rhs = jnp.where(free, g - H @ jnp.where(fixed, du, 0.0), du)
        return jnp.clip(jnp.linalg.solve(A, rhs), lo, hi)

    du = jax.lax.fori_loop(0, iterations, newton, jnp.clip(jnp.zeros_like(u), lo, hi))
    return u + du


def quasi_static_tension_control(
    model,
    q: Float[Array, " n"],
    u: Float[Array, " m"],
    target: Float[Array, " 3"],
    lower: Float[Array, " m"],
    upper: Float[Array, " m"],
    gain: float = 0.8,
    damping: float = 1e-6,
    max_step: float | None = None,
    settle_iterations: int = 6,
) -> Float[Array, " m"]:
    """New efforts ``(m,)`` that move the equilibrium tip a fraction ``gain`` of the way
    to ``target`` [m] (one bounded damped least-squares step).

    The step starts from the equilibrium under the current efforts ``u`` (found by
    ``settle_iterations`` Newton steps from the measured ``q``), not from the measured tip:
    a robot still swinging after the last change would otherwise feed its transient back
    into the next step."""
    q_eq = static_equilibrium(model, q, u, settle_iterations)
    x, S = static_tip_sensitivity(model, q_eq, u)
    return bounded_least_squares_step(S, gain * (target - x), u, lower, upper, damping, max_step)
