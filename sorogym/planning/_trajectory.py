"""Whole-trajectory optimisation: Levenberg-Marquardt on penalised least squares over a
discrete joint trajectory ``Q = [q_0, ..., q_H]`` ``(H + 1, n)``, with the normal equations
assembled from their block-banded structure and solved densely (Cholesky-class cost
``O((H n)^3)``, one solve per iteration).

The cost is ``|r(Q)|^2 / 2`` over these residual groups (weights ``w`` from
:class:`TrajectoryCosts`):

* per waypoint: ``sqrt(w_track)`` times the target error (SE(3) log or position, as in
  :func:`~sorogym.planning.ik_residual`) and the obstacle-clearance hinge
  ``sqrt(w_coll) max(margin - c, 0)``;
* finite differences of *features* of the waypoints, each ``(f_{t+1} - f_t) / dt`` or
  ``(f_{t+2} - 2 f_{t+1} + f_t) / dt^2``:

  - tendon speed and acceleration, quadratic (smoothness) and as hinges above the limits
    ``max_tendon_speed`` [m/s] / ``max_tendon_acceleration`` [m/s^2]; the tendon features
    are ``robot.tendon_lengths(q)`` where the robot has them, else ``q``;
  - the end-effector displacement ``p(q_{t+1}) - p(q_t)`` (path length, squared);
  - the configuration difference ``q_{t+1} - q_t``.

Every difference residual couples at most three consecutive waypoints, so ``J^T J`` is
block-pentadiagonal: it is built from per-waypoint feature Jacobians (forward-mode AD,
``vmap``-ped over waypoints) without ever forming ``J``. :func:`normal_equations` returns
``(cost, gradient, J^T J)``; the tests check it against AD of the explicitly stacked
residual. Waypoints listed as fixed (trajectory planning: start and goal) do not move.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ._ik import ik_residual, levenberg_marquardt, make_ik_solver, target_error, with_value
from ._models import robot_clearance


@dataclasses.dataclass(frozen=True)
class TrajectoryCosts:
    """Weights and limits of a trajectory problem (see module docstring). Units: ``dt`` [s],
    speeds [m/s], accelerations [m/s^2]; ``inf`` disables a limit, a zero weight a term."""

    dt: float = 0.05
    tracking: float = 1.0
    path_length: float = 0.0
    configuration_smoothness: float = 0.0
    tendon_velocity: float = 0.0
    tendon_acceleration: float = 0.0
    max_tendon_speed: float = float("inf")
    max_tendon_acceleration: float = float("inf")
    limit_weight: float = 1e3
    collision_weight: float = 100.0
    margin: float = 0.0

    def __post_init__(self):
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if not isinstance(v, (int, float)) or np.isnan(v) or v < 0:
                raise ValueError(f"TrajectoryCosts.{f.name}: must be a number >= 0, got {v!r}")
        if not (np.isfinite(self.dt) and self.dt > 0):
            raise ValueError(f"TrajectoryCosts.dt: must be finite and > 0, got {self.dt}")
        for name in ("max_tendon_speed", "max_tendon_acceleration"):
            if getattr(self, name) == 0:
                raise ValueError(f"TrajectoryCosts.{name}: must be > 0 (inf for no limit)")


class TrajectoryResult(NamedTuple):
    """An optimised trajectory and its figures."""

    q: Array  # (H + 1, n) waypoints
    cost: Array  # () final penalised cost
    tracking_error: Array  # (H + 1,) target error per waypoint (zeros without targets)
    position_error: Array  # (H + 1,) end-effector position error [m] (zeros without targets)
    clearance: Array  # () smallest obstacle clearance over the waypoints [m] (inf without obstacles)
    max_tendon_speed: Array  # () largest |d tendon / dt| [m/s] (finite differences)
    max_tendon_acceleration: Array  # () largest |d^2 tendon / dt^2| [m/s^2]
    path_length: Array  # () end-effector path length [m] (sum of waypoint distances)


def _stencil(order: int, dt: float) -> np.ndarray:
    return np.array([-1.0, 1.0]) / dt if order == 1 else np.array([1.0, -2.0, 1.0]) / dt**2


def _differences(values: Array, stencil: np.ndarray) -> Array:
    """``(H + 1 - s + 1, k)`` stencil differences of ``values`` ``(H + 1, k)``."""
    s = len(stencil)
    rows = values.shape[0] - s + 1
    return sum(c * values[a : a + rows] for a, c in enumerate(stencil))


def _hinge(r: Array, limit: float) -> Array:
    return jnp.sign(r) * jnp.maximum(jnp.abs(r) - limit, 0.0)


class _Problem(NamedTuple):
    """What one trajectory problem needs besides ``Q``: the robot, obstacles, targets."""

    robot: object
    obstacles: object
    targets: Array | None  # (H + 1, 4, 4) or (H + 1, 3) or None
    position_only: bool
    costs: TrajectoryCosts


def _waypoint_residual(p: _Problem, q: Array, target: Array | None) -> Array:
    """Tracking and collision residual of one waypoint (weights included)."""
    c = p.costs
    if target is None:
        if p.obstacles is None or not p.obstacles.count:
            return jnp.zeros((0,), q.dtype)
        clearance = p.obstacles.clearance(p.robot.backbone_points(q), p.robot.radius)
        return jnp.sqrt(c.collision_weight) * jnp.maximum(c.margin - jnp.min(clearance, axis=-1), 0.0)
    r = ik_residual(p.robot, q, target, p.obstacles, p.position_only, c.margin, c.collision_weight)
    k = 3 if p.position_only else 6
    return jnp.concatenate([jnp.sqrt(c.tracking) * r[:k], r[k:]])


def _features(p: _Problem, q: Array, target: Array | None):
    return (_waypoint_residual(p, q, target), p.robot.rate_features(q), p.robot.end_pose(q)[:3, 3], q)


def _difference_terms(p: _Problem):
    """``(feature index, stencil, weight, limit or None)`` of every active difference group."""
    c = p.costs
    terms = []
    if c.tendon_velocity > 0:
        terms.append((1, _stencil(1, c.dt), c.tendon_velocity, None))
    if c.tendon_acceleration > 0:
        terms.append((1, _stencil(2, c.dt), c.tendon_acceleration, None))
    if np.isfinite(c.max_tendon_speed):
        terms.append((1, _stencil(1, c.dt), c.limit_weight, c.max_tendon_speed))
    if np.isfinite(c.max_tendon_acceleration):
        terms.append((1, _stencil(2, c.dt), c.limit_weight, c.max_tendon_acceleration))
    if c.path_length > 0:
        terms.append((2, np.array([-1.0, 1.0]), c.path_length, None))
    if c.configuration_smoothness > 0:
        terms.append((3, np.array([-1.0, 1.0]), c.configuration_smoothness, None))
    return terms


def _map_targets(fn, Q, targets):
    if targets is None:
        return jax.vmap(lambda q: fn(q, None))(Q)
    return jax.vmap(fn)(Q, targets)


def trajectory_cost(p: _Problem, Q: Float[Array, "T n"]) -> Array:
    """The penalised cost ``|r(Q)|^2 / 2`` of the module docstring."""
    feats = _map_targets(lambda q, t: _features(p, q, t), Q, p.targets)
    cost = 0.5 * jnp.sum(feats[0] ** 2)
    for index, stencil, weight, limit in _difference_terms(p):
        r = _differences(feats[index], stencil)
        e = r if limit is None else _hinge(r, limit)
        cost = cost + 0.5 * weight * jnp.sum(e**2)
    return cost


def normal_equations(p: _Problem, Q: Float[Array, "T n"]) -> tuple[Array, Array, Array]:
    """``(cost, g, A)``: the cost, its gradient ``J^T r`` ``(T n,)`` and the Gauss-Newton
    matrix ``J^T J`` ``(T n, T n)`` (``T = H + 1``, waypoint-major ordering)."""
    T, n = Q.shape
    # features and their Jacobians from one forward-mode pass (the value rides as aux)
    jacs, feats = _map_targets(
        lambda q, t: jax.jacfwd(with_value(lambda q_: _features(p, q_, t)), has_aux=True)(q), Q, p.targets
    )
    r0, J0 = feats[0], jacs[0]  # (T, m), (T, m, n)
    cost = 0.5 * jnp.sum(r0**2)
    grad = jnp.einsum("tmn,tm->tn", J0, r0)
    blocks = {0: jnp.einsum("tmi,tmj->tij", J0, J0)}  # offset -> (T - offset, n, n)
    for index, stencil, weight, limit in _difference_terms(p):
        f, F = feats[index], jacs[index]  # (T, k), (T, k, n)
        r = _differences(f, stencil)
        if limit is None:
            e, W = r, jnp.full_like(r, weight)
        else:
            e = _hinge(r, limit)
            W = weight * (jnp.abs(r) > limit).astype(r.dtype)
        cost = cost + 0.5 * jnp.sum(W * e**2)
        rows = r.shape[0]
        We = W * e
        for a, ca in enumerate(stencil):
            grad = grad.at[a : a + rows].add(ca * jnp.einsum("tkn,tk->tn", F[a : a + rows], We))
            for b, cb in enumerate(stencil):
                if b < a:
                    continue
                # couples waypoints (t + a, t + b): stored by offset b - a at row t + a (the
                # transposed block is added at assembly)
                B = ca * cb * jnp.einsum("tki,tk,tkj->tij", F[a : a + rows], W, F[b : b + rows])
                stored = blocks.get(b - a, jnp.zeros((T - (b - a), n, n), Q.dtype))
                blocks[b - a] = stored.at[a : a + rows].add(B)
    A = jnp.zeros((T, n, T, n), Q.dtype)
    idx = jnp.arange(T)
    for offset, B in blocks.items():
        i = idx[: T - offset]
        if offset == 0:
            A = A.at[i, :, i, :].add(B)
        else:
            A = A.at[i, :, i + offset, :].add(B)
            A = A.at[i + offset, :, i, :].add(jnp.swapaxes(B, -1, -2))
    return cost, grad.reshape(-1), A.reshape(T * n, T * n)


def optimize_trajectory(
    p: _Problem, Q0: Float[Array, "T n"], iterations: int, fixed: Array | None = None, damping: float = 1e-3
) -> tuple[Array, Array]:
    """``iterations`` LM steps on the whole trajectory from ``Q0``; waypoints with
    ``fixed[t]`` stay put. Steps are clipped to the robot's bounds (azimuths are not
    wrapped: a trajectory's azimuths stay continuous), and variables on a bound they push
    against sit the step out (active set, as in
    :func:`~sorogym.planning.levenberg_marquardt`). Returns ``(Q, cost)``; the cost is
    non-increasing."""
    T, n = Q0.shape
    lower, upper = p.robot.bounds()
    lower, upper = lower.astype(Q0.dtype), upper.astype(Q0.dtype)
    free = jnp.ones((T,), bool) if fixed is None else ~jnp.asarray(fixed, bool)
    free_flat = jnp.repeat(free, n)
    lower_flat, upper_flat = jnp.tile(lower, T), jnp.tile(upper, T)
    eye = jnp.eye(T * n, dtype=Q0.dtype)

    def step(carry, _):
        Q, lam, cost = carry
        _, g, A = normal_equations(p, Q)
        # active set: fixed waypoints and variables on a bound they push against stay put
        q_flat = Q.reshape(-1)
        pushing = ((q_flat <= lower_flat) & (g > 0)) | ((q_flat >= upper_flat) & (g < 0))
        moving = free_flat & ~pushing
        A = A + lam * (jnp.diag(jnp.diag(A)) + 1e-9 * eye)
        A = jnp.where(moving[:, None] & moving[None, :], A, eye)
        dQ = -jnp.linalg.solve(A, jnp.where(moving, g, 0.0)).reshape(T, n)
        trial = jnp.clip(Q + dQ, lower, upper)
        trial = jnp.where(free[:, None], trial, Q)
        trial_cost = trajectory_cost(p, trial)
        better = jnp.isfinite(trial_cost) & (trial_cost < cost)
        Q = jnp.where(better, trial, Q)
        cost = jnp.where(better, trial_cost, cost)
        lam = jnp.clip(jnp.where(better, lam / 3.0, lam * 10.0), 1e-12, 1e12)
        return (Q, lam, cost), None

    Q0 = jnp.where(free[:, None], jnp.clip(Q0, lower, upper), Q0)
    init = (Q0, jnp.asarray(damping, Q0.dtype), trajectory_cost(p, Q0))
    (Q, _, cost), _ = jax.lax.scan(step, init, None, length=iterations)
    return Q, cost


def trajectory_figures(p: _Problem, Q: Array, cost: Array) -> TrajectoryResult:
    """The :class:`TrajectoryResult` of an optimised ``Q``."""
    robot, c = p.robot, p.costs
    T = Q.shape[0]
    tips = jax.vmap(robot.end_pose)(Q)
    if p.targets is None:
        err = pos_err = jnp.zeros((T,), Q.dtype)
    else:
        err = jnp.linalg.norm(jax.vmap(lambda q, t: target_error(robot, q, t, p.position_only))(Q, p.targets), axis=-1)
        goal = p.targets if p.position_only else p.targets[:, :3, 3]
        pos_err = jnp.linalg.norm(tips[:, :3, 3] - goal, axis=-1)
    clearance = jnp.min(jax.vmap(lambda q: robot_clearance(robot, p.obstacles, q))(Q))
    ell = jax.vmap(robot.rate_features)(Q)
    speed = jnp.max(jnp.abs(_differences(ell, _stencil(1, c.dt)))) if T > 1 else jnp.zeros((), Q.dtype)
    accel = jnp.max(jnp.abs(_differences(ell, _stencil(2, c.dt)))) if T > 2 else jnp.zeros((), Q.dtype)
    length = jnp.sum(jnp.linalg.norm(jnp.diff(tips[:, :3, 3], axis=0), axis=-1))
    return TrajectoryResult(Q, cost, err, pos_err, clearance, speed, accel, length)


def make_path_follower(
    robot,
    obstacles=None,
    position_only: bool = False,
    costs: TrajectoryCosts | None = None,
    warm_iterations: int = 30,
    refine_iterations: int = 30,
    tolerance: float = 1e-2,
    **ik_options,
):
    """A jitted ``follow(references, key) -> TrajectoryResult`` for a reference path of
    ``T`` poses ``(T, 4, 4)`` (or positions ``(T, 3)`` with ``position_only``).

    Initialisation (per-waypoint IK): waypoint 0 by the beam search of
    :func:`~sorogym.planning.make_ik_solver` (``ik_options``), every later waypoint by
    ``warm_iterations`` LM steps from the previous solution, falling back to the beam search
    where the warm start misses ``tolerance``. Refinement: ``refine_iterations`` LM steps on
    the whole trajectory with ``costs`` (default: tracking plus light tendon smoothness and
    the obstacle hinge, see :func:`default_following_costs`).
    """
    costs = default_following_costs() if costs is None else costs
    ik = make_ik_solver(
        robot,
        obstacles=obstacles,
        position_only=position_only,
        tolerance=tolerance,
        margin=costs.margin,
        collision_weight=costs.collision_weight,
        **ik_options,
    )

    def follow(references, key):
        problem = _Problem(robot, obstacles, references, position_only, costs)
        keys = jax.random.split(key, references.shape[0])

        def residual_for(target):
            return lambda q: ik_residual(
                robot, q, target, obstacles, position_only, costs.margin, costs.collision_weight
            )

        first = ik(references[:1], keys[0])

        def chain(q_prev, inputs):
            target, k = inputs
            q, cost = levenberg_marquardt(residual_for(target), robot.project, q_prev, warm_iterations)
            missed = cost > 0.5 * tolerance**2
            q = jax.lax.cond(missed, lambda: ik(target[None], k).q[0], lambda: q)
            return q, q

        _, Q = jax.lax.scan(chain, first.q[0], (references[1:], keys[1:]))
        Q0 = robot.unwrap(jnp.concatenate([first.q, Q], axis=0))
        Q, cost = optimize_trajectory(problem, Q0, refine_iterations)
        return trajectory_figures(problem, Q, cost)

    return jax.jit(follow)


def default_following_costs(dt: float = 0.05) -> TrajectoryCosts:
    """Path-following weights: tracking (1 per squared rad or m), tendon speed and
    acceleration smoothing small enough to cost well under a millimetre of tracking on paths
    of 1-2 cm per waypoint, obstacle hinge weight 100 with a 1 cm margin."""
    return TrajectoryCosts(dt=dt, tracking=1.0, tendon_velocity=1e-5, tendon_acceleration=1e-9, margin=0.01)
