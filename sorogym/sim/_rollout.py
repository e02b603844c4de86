"""Open-loop, continuous closed-loop and sampled-data (zero-order hold) rollouts on diffrax.

All rollouts integrate ``model.forward_dynamics`` over ``y = [q, qd]`` with any
``diffrax.AbstractSolver`` (default :class:`diffrax.Tsit5`) at a fixed ``solver_dt``
unless an adaptive ``stepsize_controller`` is given, and save at ``save_ts`` (or every
``save_dt``). With fixed steps (no controller, or ``diffrax.ConstantStepSize()``) the solve
is split at the save times (steps restart at each of them, so a save time is always a
step's end point); with an adaptive controller it is one solve that interpolates at the
save times.
"""

from __future__ import annotations

from collections.abc import Callable

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ..models import SoftRobot


class Trajectory(eqx.Module):
    """A saved rollout: times ``ts`` ``(T,)`` [s], states ``ys`` ``(T, s)`` (the model's
    ``[q, qd, auxiliary]``, projected onto the configuration manifold), and for
    sampled-data rollouts the held inputs ``us`` ``(T, m)`` (else ``None``)."""

    ts: Float[Array, " T"]
    ys: Float[Array, "T s"]
    us: Array | None = None
    zs: Array | None = None

    def split(self, model: SoftRobot | None = None) -> tuple[Array, Array]:
        """``(q_ts (T, nq), qd_ts (T, n))`` by ``model.split_state``; without a model the
        state is taken as ``[q, qd]`` halves (vector-space models only)."""
        if model is not None:
            return model.split_state(self.ys)
        n = self.ys.shape[-1] // 2
        return self.ys[:, :n], self.ys[:, n:]


def _save_times(t0, t1, save_dt, save_ts, dtype):
    if save_ts is not None:
        return jnp.asarray(save_ts, dtype)
    if save_dt is None:
        return jnp.asarray([t1], dtype)
    num = int(round((t1 - t0) / save_dt)) + 1
    return jnp.asarray(np.linspace(t0, t0 + (num - 1) * save_dt, num), dtype)


def _check_save_times(ts: Array, t0: float, t1: float) -> None:
    """Save times must be ascending within ``[t0, t1]`` (checked when they are concrete)."""
    if isinstance(ts, jax.core.Tracer):
        return
    v = np.asarray(ts)
    if v.ndim != 1 or v.size == 0:
        raise ValueError(f"save_ts: expected a non-empty 1-D array of times, got shape {v.shape}")
    eps = 1e-9 * max(1.0, abs(t1 - t0))
    if np.any(np.diff(v) < 0) or v[0] < t0 - eps or v[-1] > t1 + eps:
        raise ValueError(f"save_ts: times must be ascending within [t0, t1] = [{t0}, {t1}]")


def _solve_between_saves(term, solver, y0, t0, args, solver_dt, ts, max_steps):
    """Fixed steps, one diffrax solve per interval between consecutive save times (under
    ``lax.scan``, steps restart at each save time): the state at a save time is a step's
    end point, and no step pays for a save-time search or dense interpolation, which in
    one solve with ``SaveAt(ts=...)`` cost about a quarter of a Tsit5 beam rollout."""
    bounds = jnp.concatenate([jnp.asarray([t0], ts.dtype), ts])

    def interval(y, ab):
        sol = diffrax.diffeqsolve(
            term,
            solver,
            t0=ab[0],
            t1=ab[1],
            dt0=solver_dt,
            y0=y,
            args=args,
            saveat=diffrax.SaveAt(t1=True),
            stepsize_controller=diffrax.ConstantStepSize(),
            max_steps=max_steps,
        )
        y_end = jax.tree.map(lambda x: x[-1], sol.ys)
        return y_end, y_end

    _, ys = jax.lax.scan(interval, y0, (bounds[:-1], bounds[1:]))
    return ts, ys


def _solve(vector_field, y0, t0, t1, args, solver, solver_dt, ts, stepsize_controller, max_steps):
    solver = diffrax.Tsit5() if solver is None else solver
    _check_save_times(ts, t0, t1)
    if stepsize_controller is None or isinstance(stepsize_controller, diffrax.ConstantStepSize):
        if max_steps is None:
            max_steps = int(np.ceil((t1 - t0) / solver_dt)) + 2
        return _solve_between_saves(diffrax.ODETerm(vector_field), solver, y0, t0, args, solver_dt, ts, max_steps)
    if max_steps is None:
        max_steps = max(int(np.ceil((t1 - t0) / solver_dt)) + 2, 4096)
    sol = diffrax.diffeqsolve(
        diffrax.ODETerm(vector_field),
        solver,
        t0=t0,
        t1=t1,
        dt0=solver_dt,
        y0=y0,
        args=args,
        saveat=diffrax.SaveAt(ts=ts),
        stepsize_controller=stepsize_controller,
        max_steps=max_steps,
    )
    return sol.ts, sol.ys


def rollout_to(
    model: SoftRobot,
    y0: Float[Array, " s"],
    t1: float,
    u: Array | Callable | None = None,
    tau_ext: Array | None = None,
    *,
    t0: float = 0.0,
    solver: diffrax.AbstractSolver | None = None,
    solver_dt: float = 1e-4,
    save_dt: float | None = None,
    save_ts: Array | None = None,
    stepsize_controller=None,
    max_steps: int | None = None,
) -> Trajectory:
    """Open-loop rollout from ``y0`` at ``t0`` to ``t1`` [s].

    ``u`` is a constant input ``(m,)``, a function ``u(t)``, or ``None`` (no actuation);
    ``tau_ext`` a constant external generalized force ``(n,)``. Solver-aware solvers
    (:class:`~sorogym.sim.SemiImplicitEuler`, :class:`~sorogym.sim.LinearTrapezoid`)
    receive the actuation tuple as ``args``.
    """
    y0 = jnp.asarray(y0)
    ts = _save_times(t0, t1, save_dt, save_ts, y0.dtype)
    m = model.num_actuators
    if u is None:
        u_fn = lambda t: jnp.zeros((m,), y0.dtype)  # noqa: E731
    elif callable(u):
        u_fn = u
    else:
        u_const = jnp.asarray(u, y0.dtype)
        u_fn = lambda t: u_const  # noqa: E731
    tau = jnp.zeros((model.num_dofs,), y0.dtype) if tau_ext is None else jnp.asarray(tau_ext, y0.dtype)

    if callable(u) and isinstance(solver, _model_solvers()):
        raise ValueError("u: model-aware fixed-step solvers need a constant input; use a constant u")

    def vf(t, y, args):
        return model.forward_dynamics(t, y, (u_fn(t), tau))

    ts, ys = _solve(vf, y0, t0, t1, (u_fn(t0), tau), solver, solver_dt, ts, stepsize_controller, max_steps)
    return Trajectory(ts=ts, ys=jax.vmap(model.project_state)(ys))


def _model_solvers():
    from ._solvers import LinearTrapezoid, SemiImplicitEuler

    return (LinearTrapezoid, SemiImplicitEuler)


def rollout_closed_loop_to(
    model: SoftRobot,
    y0: Float[Array, " s"],
    controller: Callable,
    t1: float,
    z0=None,
    *,
    t0: float = 0.0,
    solver: diffrax.AbstractSolver | None = None,
    solver_dt: float = 1e-4,
    save_dt: float | None = None,
    save_ts: Array | None = None,
    stepsize_controller=None,
    max_steps: int | None = None,
) -> Trajectory:
    """Continuous closed loop: the controller is evaluated inside the vector field.

    ``controller(t, y) -> u`` when ``z0`` is ``None``; otherwise
    ``controller(t, y, z) -> (u, z_dot)`` and the controller state ``z`` (any pytree) is
    integrated with the plant and returned in ``Trajectory.zs``.
    """
    y0 = jnp.asarray(y0)
    ts = _save_times(t0, t1, save_dt, save_ts, y0.dtype)
    if isinstance(solver, _model_solvers()):
        raise ValueError("solver: use a diffrax solver (e.g. Tsit5) for continuous closed loops")
    if z0 is None:

        def vf(t, y, args):
            return model.forward_dynamics(t, y, (controller(t, y),))

        ts, ys = _solve(vf, y0, t0, t1, None, solver, solver_dt, ts, stepsize_controller, max_steps)
        return Trajectory(ts=ts, ys=jax.vmap(model.project_state)(ys))

    def vf_aug(t, state, args):
        y, z = state
        u, z_dot = controller(t, y, z)
        return model.forward_dynamics(t, y, (u,)), z_dot

    ts, (ys, zs) = _solve(vf_aug, (y0, z0), t0, t1, None, solver, solver_dt, ts, stepsize_controller, max_steps)
    return Trajectory(ts=ts, ys=jax.vmap(model.project_state)(ys), zs=zs)


def rollout_discrete_closed_loop_to(
    model: SoftRobot,
    y0: Float[Array, " s"],
    controller: Callable,
    t1: float,
    control_dt: float,
    z0=None,
    *,
    t0: float = 0.0,
    solver: diffrax.AbstractSolver | None = None,
    solver_dt: float = 1e-4,
) -> Trajectory:
    """Sampled-data closed loop with zero-order hold.

    Every ``control_dt`` [s] the controller is sampled (``controller(t, y) -> u``, or with
    ``z0``: ``controller(t, y, z) -> (u, z_dot)`` and ``z`` advanced by forward Euler at
    the sampling instant); ``u`` is held while the plant is integrated with ``solver`` at
    ``solver_dt``. Saves the state at every sampling instant (``T = K + 1`` rows for
    ``K = (t1 - t0) / control_dt`` periods) and the held inputs (last row repeats).
    """
    y0 = jnp.asarray(y0)
    num_periods = int(round((t1 - t0) / control_dt))
    if num_periods < 1:
        raise ValueError(f"control_dt: must be <= t1 - t0, got {control_dt} for a {t1 - t0} s horizon")
    substeps = max(1, int(round(control_dt / solver_dt)))
    h = control_dt / substeps
    solver = diffrax.Tsit5() if solver is None else solver
    has_state = z0 is not None

    def period(carry, k):
        y, z = carry
        t = t0 + k * control_dt
        if has_state:
            u, z_dot = controller(t, y, z)
            z_next = jax.tree.map(lambda a, b: a + control_dt * b, z, z_dot)
        else:
            u, z_next = controller(t, y), z
        args = (u,)
        term = diffrax.ODETerm(lambda t_, y_, a: model.forward_dynamics(t_, y_, a))
        state = solver.init(term, t, t + h, y, args)

        def sub(c, j):
            y_, st = c
            ta = t + j * h
            y_next, _, _, st, _ = solver.step(term, ta, ta + h, y_, args, st, False)
            return (y_next, st), None

        (y_end, _), _ = jax.lax.scan(sub, (y, state), jnp.arange(substeps, dtype=y0.dtype))
        return (model.project_state(y_end), z_next), (y, u, z)

    ks = jnp.arange(num_periods, dtype=y0.dtype)
    (y_last, z_last), (ys, us, zs) = jax.lax.scan(period, (y0, z0), ks)
    ys = jnp.concatenate([ys, y_last[None]], axis=0)
    us = jnp.concatenate([us, us[-1:]], axis=0)
    if has_state:
        zs = jax.tree.map(lambda a, b: jnp.concatenate([a, b[None]], axis=0), zs, z_last)
    ts = t0 + control_dt * jnp.arange(num_periods + 1, dtype=y0.dtype)
    return Trajectory(ts=ts, ys=ys, us=us, zs=zs if has_state else None)


def integrate_fixed(step_fn: Callable, model: SoftRobot, y0: Array, args: tuple, dt: float, num_steps: int) -> Array:
    """Apply ``step_fn(model, t, y, args, dt)`` ``num_steps`` times in a ``lax.scan``
    (input held); returns the final state. The environments' physics step."""

    def body(y, _):
        return step_fn(model, 0.0, y, args, dt), None

    y, _ = jax.lax.scan(body, y0, None, length=num_steps)
    return y
