"""Batched inverse kinematics: projected Levenberg-Marquardt on penalised least squares,
run from many seeds at once and refined by a two-stage beam search.

Residual of a configuration ``q`` for a target pose ``T*`` (or position ``p*``)::

    r(q) = [ log(T(q)^-1 T*)  (6,)          pose targets: SE(3) log, angular first
             (or p(q) - p*)   (3,)          position targets
             c(q)                           the model's constraint_residual (often empty)
             sqrt(w_c) max(margin - min_s c_ks(q), 0)   for every backbone point k ]

with ``c_ks`` the signed clearance between point ``k`` (grown by the robot radius) and
obstacle ``s`` (a sphere or box; one row per point, for its nearest obstacle: 27 times
fewer rows than one per pair in the 27-sphere lattice, and the same minimisers while
obstacles do not overlap). Box bounds are not penalised but enforced exactly: each step is projected onto them
(azimuths wrapped). The solver minimises ``|r|^2 / 2`` by damped Gauss-Newton steps
``(J^T J + lam diag(J^T J) + lam eps I) dq = -J^T r`` with ``J`` from forward-mode AD,
with variables held on a bound they push against left out of the step (active set),
accepting a step only if it lowers the cost (then ``lam /= 3``, else ``lam *= 10``), so the
cost never increases and a non-finite trial is rejected like any other bad step.

Beam search (per target): ``num_seeds`` configurations uniform in the bounds (with
obstacles: the least penetrating ``num_seeds`` of ``4 num_seeds`` draws), each
improved by ``coarse_iterations`` steps; the ``num_best`` lowest-cost ones are refined by
``fine_iterations`` more; the lowest-cost result is returned. Everything is ``vmap``-ped
over seeds and targets and compiled once per solver (:func:`make_ik_solver`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jaxtyping import Array

from sorogym.lie import se3

from ._models import robot_clearance

#: per-target status codes of :class:`IKResult`
SUCCESS, NOT_REACHED, IN_COLLISION, TARGET_IN_OBSTACLE = 0, 1, 2, 3
STATUS_NAMES = {
    SUCCESS: "success",
    NOT_REACHED: "not reached",
    IN_COLLISION: "in collision",
    TARGET_IN_OBSTACLE: "target in obstacle",
}


class IKResult(NamedTuple):
    """Solutions of a batch of ``B`` targets (leading axis ``B``)."""

    q: Array  # (B, n) best configuration found
    error: Array  # (B,) pose error |log(T(q)^-1 T*)| (pose targets) or position error [m]
    position_error: Array  # (B,) [m]
    clearance: Array  # (B,) smallest obstacle clearance of the robot [m] (inf without obstacles)
    status: Array  # (B,) int: SUCCESS, NOT_REACHED, IN_COLLISION or TARGET_IN_OBSTACLE

    def status_names(self) -> list[str]:
        return [STATUS_NAMES[int(s)] for s in jax.device_get(self.status)]


def with_value(fn: Callable) -> Callable:
    """``x -> (fn(x), fn(x))`` from one evaluation: with ``jax.jacfwd(..., has_aux=True)``
    it gives the Jacobian and the value in one forward-mode pass."""

    def both(x):
        y = fn(x)
        return y, y

    return both


def levenberg_marquardt(
    residual: Callable[[Array], Array],
    project: Callable[[Array], Array],
    q0: Array,
    iterations: int,
    damping: float = 1e-3,
    bounds: tuple[Array, Array] | None = None,
) -> tuple[Array, Array]:
    """``iterations`` projected LM steps from ``q0`` ``(n,)``; returns ``(q, cost)`` with
    ``cost = |residual(q)|^2 / 2``. The cost is non-increasing; see the module docstring.

    With ``bounds = (lower, upper)``, variables sitting on a bound whose gradient points
    out of the box are held fixed for the step (an active set): the step of the others is
    then not spoiled by clipping a component that only pushes against its bound."""

    def cost_of(q):
        r = residual(q)
        return 0.5 * jnp.dot(r, r)

    def step(carry, _):
        q, lam, cost = carry
        J, r = jax.jacfwd(with_value(residual), has_aux=True)(q)  # Jacobian and value in one pass
        H = J.T @ J
        g = J.T @ r
        eye = jnp.eye(q.shape[0], dtype=q.dtype)
        A = H + lam * (jnp.diag(jnp.diag(H)) + 1e-9 * eye)
        if bounds is not None:
            lower, upper = bounds
            fixed = ((q <= lower) & (g > 0)) | ((q >= upper) & (g < 0))
            A = jnp.where(fixed[:, None] | fixed[None, :], eye, A)
            g = jnp.where(fixed, 0.0, g)
        dq = -jnp.linalg.solve(A, g)
        trial = project(q + dq)
        trial_cost = cost_of(trial)
        better = jnp.isfinite(trial_cost) & (trial_cost < cost)
        q = jnp.where(better, trial, q)
        cost = jnp.where(better, trial_cost, cost)
        lam = jnp.clip(jnp.where(better, lam / 3.0, lam * 10.0), 1e-12, 1e12)
        return (q, lam, cost), None

    q0 = project(q0)
    init = (q0, jnp.asarray(damping, q0.dtype), cost_of(q0))
    (q, _, cost), _ = jax.lax.scan(step, init, None, length=iterations)
    return q, cost


def target_error(robot, q, target, position_only: bool) -> Array:
    T = robot.end_pose(q)
    if position_only:
        return T[:3, 3] - target
    return se3.log(se3.inverse(T) @ target)


def ik_residual(
    robot,
    q: Array,
    target: Array,
    obstacles=None,
    position_only: bool = False,
    margin: float = 0.0,
    collision_weight: float = 100.0,
) -> Array:
    """The residual of the module docstring for one configuration and one target
    (``(4, 4)`` pose or ``(3,)`` position)."""
    parts = [target_error(robot, q, target, position_only), robot.constraint_residual(q)]
    if obstacles is not None and obstacles.count:
        c = obstacles.clearance(robot.backbone_points(q), robot.radius)
        parts.append(jnp.sqrt(collision_weight) * jnp.maximum(margin - jnp.min(c, axis=-1), 0.0))
    return jnp.concatenate(parts)


def make_ik_solver(
    robot,
    obstacles=None,
    position_only: bool = False,
    num_seeds: int = 128,
    num_best: int = 8,
    coarse_iterations: int = 40,
    fine_iterations: int = 160,
    tolerance: float = 1e-2,
    margin: float = 0.0,
    collision_weight: float = 100.0,
) -> Callable[[Array, Array], IKResult]:
    """A jitted ``solve(targets, key) -> IKResult`` for a batch of targets ``(B, 4, 4)``
    (poses) or ``(B, 3)`` (positions, ``position_only=True``).

    ``tolerance``: success threshold on the error (the pose error ``|log(T^-1 T*)|``, or
    the position error [m]). ``margin`` [m]: clearance the collision penalty asks for
    beyond the robot radius; success requires a clearance >= 0 (no penetration).
    """
    if not 1 <= num_best <= num_seeds:
        raise ValueError(f"num_best: must lie in [1, num_seeds={num_seeds}], got {num_best}")
    if min(coarse_iterations, fine_iterations) < 0 or tolerance <= 0:
        raise ValueError("iterations must be >= 0 and tolerance > 0")

    def residual_for(target):
        return lambda q: ik_residual(robot, q, target, obstacles, position_only, margin, collision_weight)

    def min_clearance(q):
        return robot_clearance(robot, obstacles, q)

    def solve_one(target, key):
        res = residual_for(target)
        if obstacles is not None and obstacles.count:
            # draw 4x the seeds and keep the least penetrating (collision-free ones first)
            candidates = robot.sample(key, 4 * num_seeds, target.dtype)
            penetration = jax.vmap(lambda q: jnp.maximum(-min_clearance(q), 0.0))(candidates)
            seeds = candidates[jnp.argsort(penetration)[:num_seeds]]
        else:
            seeds = robot.sample(key, num_seeds, target.dtype)
        box = tuple(b.astype(target.dtype) for b in robot.bounds())
        q, cost = jax.vmap(lambda q0: levenberg_marquardt(res, robot.project, q0, coarse_iterations, bounds=box))(seeds)
        best = jnp.argsort(jnp.where(jnp.isfinite(cost), cost, jnp.inf))[:num_best]
        q, cost = jax.vmap(lambda q0: levenberg_marquardt(res, robot.project, q0, fine_iterations, bounds=box))(q[best])
        q = q[jnp.argmin(jnp.where(jnp.isfinite(cost), cost, jnp.inf))]
        e = target_error(robot, q, target, position_only)
        pos = robot.end_pose(q)[:3, 3]
        goal = target if position_only else target[:3, 3]
        clearance = min_clearance(q)
        error = jnp.linalg.norm(e)
        target_blocked = jnp.asarray(False)
        if obstacles is not None and obstacles.count:
            target_blocked = jnp.min(obstacles.clearance(goal[None], 0.0)) < 0.0
        status = jnp.where(
            target_blocked,
            TARGET_IN_OBSTACLE,
            jnp.where(clearance < 0.0, IN_COLLISION, jnp.where(error < tolerance, SUCCESS, NOT_REACHED)),
        )
        return IKResult(q, error, jnp.linalg.norm(pos - goal), clearance, status.astype(jnp.int32))

    @jax.jit
    def solve(targets, key):
        keys = jax.random.split(key, targets.shape[0])
        return jax.vmap(solve_one)(targets, keys)

    return solve


def solve_ik(robot, targets, key=None, **options) -> IKResult:
    """One-shot :func:`make_ik_solver` (compiles each call; build the solver once to reuse it)."""
    key = jax.random.PRNGKey(0) if key is None else key
    targets = jnp.asarray(targets)
    position_only = options.pop("position_only", targets.ndim == 2 and targets.shape[-1] == 3)
    return make_ik_solver(robot, position_only=position_only, **options)(targets, key)
