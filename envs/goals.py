"""Feasible goals of the tendon-driven reaching envs (rod models): tip poses of static
equilibria under admissible tensions, memoised per robot, and goal sampling among obstacles."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from sorogym.control import equilibrium_from_rest

#: Equilibria are solved in batches of this many tension vectors (the last one padded), so
#: every bank size, and every robot with the same structure, reuses one compiled solve.
_EQUILIBRIUM_BATCH = 64


def _equilibrium_batch(model, tensions, iterations: int, ramp: int):
    """``(q, tip, tip axis, relative residual)`` of the continuation equilibrium under each
    row of ``tensions`` ``(b, m)``."""
    n, dtype = model.num_dofs, tensions.dtype

    def solve(u):
        q = equilibrium_from_rest(model, u, iterations, ramp)
        zero = jnp.zeros(n, dtype)
        scale = (
            jnp.linalg.norm(model.actuation_force(zero, u)) + jnp.linalg.norm(model.gravitational_force(zero)) + 1e-6
        )
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
    g, b = tensions.shape[0], _EQUILIBRIUM_BATCH
    padded = jnp.concatenate([tensions, jnp.zeros((-g % b, tensions.shape[1]), tensions.dtype)])
    parts = [_equilibrium_batch_jit(model, padded[i : i + b], iterations, ramp) for i in range(0, padded.shape[0], b)]
    return jax.tree_util.tree_map(lambda *xs: jnp.concatenate(xs)[:g], *parts)


def equilibrium_goal_bank(
    model,
    key,
    num_goals: int,
    max_tension: float,
    iterations: int = 40,
    ramp: int = 20,
    tol: float = 1e-6,
    activation: float = 0.5,
):
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


def workspace_goal_bank(
    model,
    key,
    num_goals: int,
    max_tension: float,
    tolerance: float = 1e-3,
    box_samples: int = 256,
    box_padding: float = 0.1,
    batch: int = 128,
):
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
    from sorogym.planning import make_static_inverse_solver, sample_reachable_targets

    k_box, k_goals = jax.random.split(key)
    tips, *_ = equilibrium_goal_bank(model, k_box, box_samples, max_tension, iterations=25, ramp=10)
    lo, hi = tips.min(axis=0), tips.max(axis=0)
    pad = box_padding * (hi - lo) + 1e-6
    # few seeds suffice: with more tendons than target coordinates the problem is redundant
    solve = make_static_inverse_solver(
        model,
        0.0,
        max_tension,
        tolerance=tolerance,
        num_seeds=8,
        num_best=2,
        coarse_iterations=10,
        fine_iterations=40,
        points=1,
    )
    result, acceptance = sample_reachable_targets(
        solve, lo - pad, hi + pad, k_goals, num_goals, batch=batch, dtype=model.params.length.dtype
    )
    poses = jax.jit(jax.vmap(lambda q: model.forward_kinematics(q, model.total_length)))(jnp.asarray(result.q))
    poses = np.asarray(poses)
    axes = poses[:, :3, 0] / np.linalg.norm(poses[:, :3, 0], axis=-1, keepdims=True)
    return poses[:, :3, 3], axes, np.asarray(result.q), np.asarray(result.tensions), acceptance


#: the ``goal_sampling`` choices of :func:`cached_goal_bank`
GOAL_SAMPLINGS = ("equilibrium", "workspace")
_GOAL_BANKS: dict = {}


def cached_goal_bank(
    robot_key,
    model,
    num_goals: int,
    max_tension: float,
    seed: int = 0,
    sampling: str = "equilibrium",
    activation: float = 0.5,
) -> np.ndarray:
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
        if sampling == "workspace":
            tips, axes, q, _, _ = workspace_goal_bank(model, jax.random.PRNGKey(seed), num_goals, max_tension)
        else:
            tips, axes, q, _ = equilibrium_goal_bank(
                model, jax.random.PRNGKey(seed), num_goals, max_tension, iterations=25, ramp=10, activation=activation
            )
        _GOAL_BANKS[key] = np.concatenate([tips, axes, q], axis=-1)
    return _GOAL_BANKS[key]


def robot_key(config, names) -> tuple:
    """Hashable tuple of the config fields that define a robot (for :func:`cached_goal_bank`)."""
    return tuple((n, getattr(config, n)) for n in names) + (("dtype", config.dtype),)


def sample_goal(key, bank, centers=None, radii=None, clearance: float = 0.0):
    """A row drawn uniformly from ``bank`` ``(g, k)`` whose first three columns are goal
    positions [m], avoiding goals within ``radii + clearance`` of any obstacle centre (if
    every goal is blocked, any goal may be drawn)."""
    bank = jnp.asarray(bank)
    if centers is None:
        return bank[jax.random.randint(key, (), 0, bank.shape[0])]
    dist = jnp.linalg.norm(bank[:, None, :3] - centers[None, :, :], axis=-1)
    free = jnp.all(dist > radii[None, :] + clearance, axis=-1)
    logits = jnp.where(free | ~jnp.any(free), 0.0, -jnp.inf)
    return bank[jax.random.categorical(key, logits)]
