"""Task pieces shared by the tendon-driven reaching envs (pure functions)."""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from sorogym.robots import ring_offsets, tendon_ring_pcs  # noqa: F401  (re-used by the reaching envs)
from sorogym.control import clf_cbf_control, equilibrium_from_rest, quasi_static_tension_control, tip_distance


def tip_kinematics(model, q, qd):
    """Tip pose ``(4, 4)`` and tip velocity ``(3,)`` [m/s] (world frame), one kinematics pass."""
    pose, J = model.pose_and_jacobian(q, model.total_length)
    return pose, (J @ qd)[3:]


def tip_position_velocity(model, q, qd):
    """World position [m] and velocity [m/s] of the robot's tip."""
    pose, vel = tip_kinematics(model, q, qd)
    return pose[:3, 3], vel


def tip_axis(model, q):
    """Unit direction of the backbone tangent at the tip (the tip frame's local x axis),
    world frame."""
    return axis_of_pose(model.forward_kinematics(q, model.total_length))


def axis_of_pose(pose):
    """Unit local x axis (the backbone tangent) of a ``(4, 4)`` pose."""
    return pose[:3, 0] / jnp.linalg.norm(pose[:3, 0])


def axis_angle_between(a, b):
    """Angle [rad] in [0, pi] between unit vectors ``a`` and ``b`` (``atan2`` form: accurate
    near 0 and pi, unlike ``arccos`` of the dot product)."""
    return jnp.arctan2(jnp.linalg.norm(jnp.cross(a, b)), jnp.dot(a, b))


def tensions_from_action(action, max_tension):
    """Absolute tendon tensions [N] from actions in [-1, 1]: ``max_tension (a + 1) / 2``."""
    return 0.5 * max_tension * (action + 1.0)


def action_from_tensions(u, max_tension):
    """The inverse of :func:`tensions_from_action`: ``2 u / max_tension - 1``."""
    return 2.0 * u / max_tension - 1.0


def reaching_terms(tip, goal, tensions, success_radius: float, max_tension: float):
    """Goal distance ``d`` [m] and the reaching reward terms ``distance = -d``,
    ``success = [d < success_radius]``, ``effort = -mean((u / max_tension)^2)``."""
    d = jnp.linalg.norm(tip - goal)
    terms = {
        "distance": -d,
        "success": (d < success_radius).astype(d.dtype),
        "effort": -jnp.mean((tensions / max_tension) ** 2),
    }
    return d, terms


def check_positive_fields(config, names) -> None:
    for name in names:
        value = getattr(config, name)
        values = np.atleast_1d(np.asarray(value, dtype=float))
        if not (np.all(np.isfinite(values)) and np.all(values > 0)):
            raise ValueError(f"{name}: must be positive and finite, got {value!r}")


#: Equilibria are solved in batches of this many tension vectors (the last one padded), so
#: every bank size, and every robot with the same structure, reuses one compiled solve.
_EQUILIBRIUM_BATCH = 64


def _equilibrium_batch(model, tensions, iterations: int, ramp: int):
    """``(q, tip, tip axis, relative residual)`` of the continuation equilibrium under each
    row of ``tensions`` ``(b, m)``."""
    import jax

    n, dtype = model.num_dofs, tensions.dtype

    def solve(u):
        q = equilibrium_from_rest(model, u, iterations, ramp)
        zero = jnp.zeros(n, dtype)
        scale = jnp.linalg.norm(model.actuation_force(zero, u)) + jnp.linalg.norm(model.gravitational_force(zero)) + 1e-6
        pose = model.forward_kinematics(q, model.total_length)
        residual = model.actuation_force(q, u) - model.potential_force(q)
        return q, pose[:3, 3], pose[:3, 0], jnp.linalg.norm(residual) / scale

    return jax.vmap(solve)(tensions)


#: compiled once per model structure and batch shape (the model is a traced argument)
_equilibrium_batch_jit = eqx.filter_jit(_equilibrium_batch)


def _solve_equilibria(model, tensions, iterations: int, ramp: int):
    """:func:`_equilibrium_batch` over ``tensions`` ``(g, m)`` in fixed-size batches through
    one jitted function taking the model as an argument: compiled once per model structure
    and batch shape, not once per bank."""
    import jax

    g, b = tensions.shape[0], _EQUILIBRIUM_BATCH
    padded = jnp.concatenate([tensions, jnp.zeros((-g % b, tensions.shape[1]), tensions.dtype)])
    parts = [_equilibrium_batch_jit(model, padded[i:i + b], iterations, ramp) for i in range(0, padded.shape[0], b)]
    return jax.tree_util.tree_map(lambda *xs: jnp.concatenate(xs)[:g], *parts)


def equilibrium_goal_bank(model, key, num_goals: int, max_tension: float, iterations: int = 40,
                          ramp: int = 20, tol: float = 1e-6, activation: float = 0.5):
    """Feasible goals: tip poses of static equilibria under random admissible tensions. Each
    tension vector activates a random subset of tendons (each with probability
    ``activation``) with tensions uniform in [0, max_tension]; the equilibrium
    ``A(q) u = G(q) + K q`` is followed from the rest shape by Newton's method while the
    tensions ramp up over ``ramp`` iterations (continuation keeps the branch connected to the
    unloaded robot). Samples whose residual stays above ``tol`` times the load scale are
    discarded.

    Returns ``(tips, axes, q, tensions)``: tip positions ``(g, 3)`` [m], unit tip axes
    ``(g, 3)`` (the backbone tangent at the tip, world frame), configurations ``(g, n)`` and
    tensions ``(g, m)`` [N].
    """
    import jax

    m = model.num_actuators
    k1, k2 = jax.random.split(key)
    dtype = model.params.length.dtype
    active = jax.random.bernoulli(k1, activation, (num_goals, m))
    tensions = active * jax.random.uniform(k2, (num_goals, m), dtype, 0.0, max_tension)

    q, tips, axes, rel = _solve_equilibria(model, tensions, iterations, ramp)
    ok = np.asarray((rel < tol) & jnp.all(jnp.isfinite(tips), axis=-1))
    if not ok.any():
        raise RuntimeError("equilibrium_goal_bank: no equilibrium converged")
    axes = np.asarray(axes)[ok]
    axes = axes / np.linalg.norm(axes, axis=-1, keepdims=True)
    return np.asarray(tips)[ok], axes, np.asarray(q)[ok], np.asarray(tensions)[ok]


def workspace_goal_bank(model, key, num_goals: int, max_tension: float, tolerance: float = 1e-3,
                        box_samples: int = 256, box_padding: float = 0.1, batch: int = 128):
    """Feasible goals spread uniformly over the reachable workspace (the static inverse
    problem of :mod:`sorogym.planning` as a rejection sampler).

    The box is the bounding box of ``box_samples`` equilibria under random tensions
    (:func:`equilibrium_goal_bank`), grown by ``box_padding`` of its size on every side;
    candidate positions uniform in it are kept when tensions in ``[0, max_tension]``
    exist whose equilibrium (verified from rest by Newton continuation) reaches them
    within ``tolerance`` [m] (:func:`sorogym.planning.sample_reachable_targets`). The goal is
    the tip of that verified equilibrium, so every goal is exactly reachable.

    Returns ``(tips, axes, q, tensions, acceptance)``, as :func:`equilibrium_goal_bank`
    plus the fraction of candidates accepted.
    """
    import jax

    from sorogym.planning import make_static_inverse_solver, sample_reachable_targets

    k_box, k_goals = jax.random.split(key)
    tips, *_ = equilibrium_goal_bank(model, k_box, box_samples, max_tension, iterations=25, ramp=10)
    lo, hi = tips.min(axis=0), tips.max(axis=0)
    pad = box_padding * (hi - lo) + 1e-6
    # few seeds suffice: with more tendons than target coordinates the problem is redundant
    solve = make_static_inverse_solver(model, 0.0, max_tension, tolerance=tolerance, num_seeds=8, num_best=2,
                                       coarse_iterations=10, fine_iterations=40, points=1)
    result, acceptance = sample_reachable_targets(solve, lo - pad, hi + pad, k_goals, num_goals, batch=batch,
                                                  dtype=model.params.length.dtype)
    poses = jax.jit(jax.vmap(lambda q: model.forward_kinematics(q, model.total_length)))(jnp.asarray(result.q))
    poses = np.asarray(poses)
    axes = poses[:, :3, 0] / np.linalg.norm(poses[:, :3, 0], axis=-1, keepdims=True)
    return poses[:, :3, 3], axes, np.asarray(result.q), np.asarray(result.tensions), acceptance


GOAL_SAMPLINGS = ("equilibrium", "workspace")
_GOAL_BANKS: dict = {}


def cached_goal_bank(robot_key, model, num_goals: int, max_tension: float, seed: int = 0,
                     sampling: str = "equilibrium", activation: float = 0.5) -> np.ndarray:
    """Goals ``(g, 6 + n)`` = ``[tip position (3) [m], unit tip axis (3), configuration (n)]``
    from :func:`equilibrium_goal_bank` (``sampling="equilibrium"``: random tensions) or
    :func:`workspace_goal_bank` (``"workspace"``: uniform over the reachable workspace by
    static inverse kinematics), memoised per ``robot_key`` (a hashable description of
    everything the equilibria depend on) so env instances of one robot share the work.
    ``activation``: the probability that a tendon pulls in an equilibrium sample."""
    if sampling not in GOAL_SAMPLINGS:
        raise ValueError(f"goal_sampling: expected one of {GOAL_SAMPLINGS}, got {sampling!r}")
    key = (robot_key, int(num_goals), float(max_tension), int(seed), sampling, float(activation))
    if key not in _GOAL_BANKS:
        import jax

        if sampling == "workspace":
            tips, axes, q, _, _ = workspace_goal_bank(model, jax.random.PRNGKey(seed), num_goals, max_tension)
        else:
            tips, axes, q, _ = equilibrium_goal_bank(model, jax.random.PRNGKey(seed), num_goals, max_tension,
                                                     iterations=25, ramp=10, activation=activation)
        _GOAL_BANKS[key] = np.concatenate([tips, axes, q], axis=-1)
    return _GOAL_BANKS[key]


def robot_key(config, names) -> tuple:
    """Hashable tuple of the config fields that define a robot (for :func:`cached_goal_bank`)."""
    return tuple((n, getattr(config, n)) for n in names) + (("dtype", getattr(config, "dtype", "float32")),)


def sample_goal(key, bank, centers=None, radii=None, clearance: float = 0.0):
    """A row drawn uniformly from ``bank`` ``(g, k)`` whose first three columns are goal
    positions [m], avoiding goals within ``radii + clearance`` of any obstacle centre (if
    every goal is blocked, any goal may be drawn)."""
    import jax

    bank = jnp.asarray(bank)
    if centers is None:
        return bank[jax.random.randint(key, (), 0, bank.shape[0])]
    dist = jnp.linalg.norm(bank[:, None, :3] - centers[None, :, :], axis=-1)
    free = jnp.all(dist > radii[None, :] + clearance, axis=-1)
    logits = jnp.where(free | ~jnp.any(free), 0.0, -jnp.inf)
    return bank[jax.random.categorical(key, logits)]


def tension_box(model, max_tension: float, dtype):
    """``(lower, upper)`` tension bounds ``(m,)`` [N]: ``[0, max_tension]`` per tendon."""
    m = model.num_actuators
    return jnp.zeros(m, dtype), jnp.full(m, max_tension, dtype)


def quasi_static_tensions(model, ps, target, max_tension: float, gain: float, max_step: float | None = None):
    """Tendon tensions ``(m,)`` [N] in ``[0, max_tension]`` after one quasi-static step
    (:func:`sorogym.control.quasi_static_tension_control`) towards ``target`` ``(3,)`` [m]
    from the physics state ``ps``, changing each tension by at most ``max_step``."""
    lower, upper = tension_box(model, max_tension, ps.q.dtype)
    return quasi_static_tension_control(model, ps.q, ps.u, target, lower, upper, gain, max_step=max_step)


def clf_tensions(model, ps, target, max_tension: float, clf_gains, cbf=None, cbf_gains=None, tau_ext=None):
    """Tendon tensions ``(m,)`` [N] in ``[0, max_tension]`` from the sequential-projection
    HOCLF(+HOCBF) controller (:func:`sorogym.control.clf_cbf_control`) driving the tip to
    ``target(t) -> (3,)`` [m] from the physics state ``ps``."""
    y = jnp.concatenate([ps.q, ps.qd])
    bounds = tension_box(model, max_tension, y.dtype)
    u, _ = clf_cbf_control(model, ps.t, y, tip_distance(model, target), clf_gains, cbf, cbf_gains,
                           bounds=bounds, tau_ext=tau_ext)
    return u
