"""Trajectory planning between two configurations: a probabilistic roadmap (collision-free
nodes sampled in parallel, k-nearest edges checked in parallel, Dijkstra on the host)
gives an initial path, which is resampled to ``H + 1`` waypoints and refined by the
whole-trajectory Levenberg-Marquardt of :mod:`sorogym.planning._trajectory` with the start
and goal held fixed. The straight line (``robot.interpolate``) is refined alongside it as a
second candidate; the better feasible result is returned.

Distances between configurations are Euclidean in the robot's tendon features (tendon
lengths for PCC robots: the bending vectors and lengths, free of the azimuth's wrap and of
its singularity at zero bend; ``q`` otherwise). Edges and trajectories are checked for
collisions at ``edge_samples`` points per edge / ``check_samples`` points between
consecutive waypoints.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra

from ._models import robot_clearance
from ._trajectory import (
    TrajectoryCosts,
    TrajectoryResult,
    _Problem,
    optimize_trajectory,
    trajectory_figures,
)


class Roadmap(NamedTuple):
    """A roadmap of ``N`` nodes with up to ``k`` edges each."""

    nodes: Array  # (N, n) collision-free configurations
    features: Array  # (N, f) tendon features of the nodes
    neighbors: np.ndarray  # (N, k) node indices
    edge_length: np.ndarray  # (N, k) feature-space length, inf where the edge collides


def _clearance_fn(robot, obstacles):
    return lambda q: robot_clearance(robot, obstacles, q)


def _edge_clearance(robot, obstacles, samples: int):
    """``(q0, q1) -> smallest clearance at `samples` points along the interpolation``."""
    clearance = _clearance_fn(robot, obstacles)
    fractions = jnp.linspace(0.0, 1.0, samples)

    def edge(q0, q1):
        return jnp.min(jax.vmap(lambda s: clearance(robot.interpolate(q0, q1, s.astype(q0.dtype))))(fractions))

    return edge


@eqx.filter_jit
def _clearances(robot, obstacles, qs: Array) -> Array:
    """Smallest clearance of each configuration ``(B, n) -> (B,)``."""
    return jax.vmap(_clearance_fn(robot, obstacles))(qs)


@eqx.filter_jit
def _edge_clearances(robot, obstacles, starts: Array, ends: Array, samples: int) -> Array:
    """Smallest clearance along the edges from ``starts[i]`` ``(Q, n)`` to ``ends[i, j]``
    ``(Q, k, n)``: ``(Q, k)``."""
    edge = _edge_clearance(robot, obstacles, samples)
    return jax.vmap(jax.vmap(edge, (None, 0)), (0, 0))(starts, ends)


@eqx.filter_jit
def _interpolate_batch(robot, q0s: Array, q1s: Array, fractions: Array) -> Array:
    return jax.vmap(robot.interpolate)(q0s, q1s, fractions)


@eqx.filter_jit
def _rate_features_batch(robot, qs: Array) -> Array:
    return jax.vmap(robot.rate_features)(qs)


@eqx.filter_jit
def _continuous_batch(robot, Qs: Array) -> Array:
    return jax.vmap(robot.unwrap)(Qs)


def sample_free(
    robot, key: Array, count: int, obstacles=None, margin: float = 0.0, max_rounds: int = 50, dtype=jnp.float64
) -> Array:
    """``count`` configurations uniform in the bounds with clearance >= ``margin``
    (rejection sampling in batches of ``2 count``); raises if the free space is too small
    to find them in ``max_rounds`` batches."""
    found, total = [], 0
    for _ in range(max_rounds):
        key, sub = jax.random.split(key)
        qs = robot.sample(sub, 2 * count, dtype)
        keep = qs[np.asarray(_clearances(robot, obstacles, qs)) >= margin]
        found.append(keep)
        total += keep.shape[0]
        if total >= count:
            return jnp.concatenate(found)[:count]
    raise RuntimeError(
        f"sample_free: only {total} of {count} configurations with clearance >= {margin} m in "
        f"{max_rounds} rounds of {2 * count} samples; the obstacles leave too little free space"
    )


def build_roadmap(
    robot, key: Array, obstacles=None, num_nodes: int = 512, k: int = 8, edge_samples: int = 8, margin: float = 0.0
) -> Roadmap:
    """Sample ``num_nodes`` collision-free nodes (clearance >= ``margin``) and connect each
    to its ``k`` nearest neighbours (feature space) by edges that stay collision-free at
    ``edge_samples`` interpolated points."""
    if num_nodes < 2 or not 1 <= k < num_nodes or edge_samples < 2:
        raise ValueError(
            f"build_roadmap: need num_nodes >= 2, 1 <= k < num_nodes and edge_samples >= 2, got "
            f"{num_nodes}, {k}, {edge_samples}"
        )
    nodes = sample_free(robot, key, num_nodes, obstacles, margin)
    features = _rate_features_batch(robot, nodes)
    neighbors, lengths = _connect(
        robot, obstacles, nodes, features, nodes, features, k, edge_samples, margin, exclude_self=True
    )
    return Roadmap(nodes, features, neighbors, lengths)


def _connect(robot, obstacles, queries, query_features, nodes, features, k, edge_samples, margin, exclude_self=False):
    """The ``k`` nearest nodes of every query and the lengths of the edges to them (inf if
    an edge collides). Host arrays ``(Q, k)``."""
    d = jnp.linalg.norm(query_features[:, None, :] - features[None, :, :], axis=-1)
    if exclude_self:
        d = d + jnp.diag(jnp.full(d.shape[0], jnp.inf, d.dtype))
    neighbors = jnp.argsort(d, axis=1)[:, :k]
    clear = _edge_clearances(robot, obstacles, queries, nodes[neighbors], edge_samples)
    lengths = jnp.take_along_axis(d, neighbors, axis=1)
    lengths = jnp.where(clear >= margin, lengths, jnp.inf)
    return np.asarray(neighbors), np.asarray(lengths)


def roadmap_path(
    robot,
    roadmap: Roadmap,
    start: Array,
    goal: Array,
    obstacles=None,
    k: int = 8,
    edge_samples: int = 8,
    margin: float = 0.0,
) -> Array | None:
    """The shortest roadmap path ``(P, n)`` from ``start`` to ``goal`` (both included), or
    ``None`` if the roadmap does not connect them."""
    N = roadmap.nodes.shape[0]
    ends = jnp.stack([start, goal])
    end_features = _rate_features_batch(robot, ends)
    nb, ln = _connect(robot, obstacles, ends, end_features, roadmap.nodes, roadmap.features, k, edge_samples, margin)
    rows = [np.repeat(np.arange(N), roadmap.neighbors.shape[1]), np.repeat([N, N + 1], k)]
    cols = [roadmap.neighbors.reshape(-1), nb.reshape(-1)]
    vals = [roadmap.edge_length.reshape(-1), ln.reshape(-1)]
    r, c, v = (np.concatenate(x) for x in (rows, cols, vals))
    ok = np.isfinite(v)
    v = np.maximum(v[ok], 1e-12)  # zero-length edges would vanish from the sparse graph
    graph = csr_matrix((v, (r[ok], c[ok])), shape=(N + 2, N + 2))
    dist, pred = dijkstra(graph, directed=False, indices=N, return_predecessors=True)
    if not np.isfinite(dist[N + 1]):
        return None
    order, i = [], N + 1
    while i != N:
        order.append(i)
        i = pred[i]
    order.append(N)
    all_nodes = jnp.concatenate([roadmap.nodes, ends])
    return all_nodes[np.asarray(order[::-1])]


def resample_path(robot, path: Array, num: int) -> Array:
    """``num`` configurations equally spaced (feature-space length) along the piecewise
    interpolation through ``path`` ``(P, n)``; first and last are the path's ends."""
    feats = _rate_features_batch(robot, path)
    seg = np.asarray(jnp.linalg.norm(jnp.diff(feats, axis=0), axis=-1))
    s = np.concatenate([[0.0], np.cumsum(seg)])
    u = np.linspace(0.0, s[-1], num)
    index = np.clip(np.searchsorted(s, u, side="right") - 1, 0, len(seg) - 1)
    frac = np.where(seg[index] > 0, (u - s[index]) / np.where(seg[index] > 0, seg[index], 1.0), 0.0)
    frac = np.clip(frac, 0.0, 1.0)
    Q = _interpolate_batch(robot, path[index], path[index + 1], jnp.asarray(frac, path.dtype))
    return Q.at[0].set(path[0]).at[-1].set(path[-1])


def linear_path(robot, start: Array, goal: Array, num: int) -> Array:
    """``num`` configurations on ``robot.interpolate`` from ``start`` to ``goal``."""
    s = jnp.linspace(0.0, 1.0, num, dtype=start.dtype)
    Q = _interpolate_batch(
        robot, jnp.broadcast_to(start, (num, start.shape[0])), jnp.broadcast_to(goal, (num, goal.shape[0])), s
    )
    return Q.at[0].set(start).at[-1].set(goal)


@dataclasses.dataclass(frozen=True)
class PlanResult:
    """A planned trajectory: the figures of the returned candidate, whether it is feasible,
    and which initialisation it came from."""

    trajectory: TrajectoryResult
    success: bool  # collision-free (densely checked) and within the tendon-rate limits
    initialization: str  # "roadmap" or "linear"
    dense_clearance: float  # smallest clearance between waypoints [m]
    roadmap_found: bool  # whether the roadmap connected start and goal


def default_planning_costs(dt: float = 0.1) -> TrajectoryCosts:
    """Shortest end-effector path (squared displacements) with the obstacle hinge (weight
    100, 1 cm margin) and tendon speeds limited to 0.3 m/s (hinge weight 1e3)."""
    return TrajectoryCosts(dt=dt, tracking=0.0, path_length=1.0, max_tendon_speed=0.3, margin=0.01)


def make_trajectory_refiner(
    robot, obstacles=None, costs: TrajectoryCosts | None = None, iterations: int = 50, check_samples: int = 4
):
    """A jitted ``refine(Q0s) -> (TrajectoryResult batched over candidates, dense clearance
    (C,))`` for candidate trajectories ``(C, H + 1, n)`` sharing their start and goal."""
    costs = default_planning_costs() if costs is None else costs
    edge = _edge_clearance(robot, obstacles, check_samples + 2)

    def refine_one(Q0):
        problem = _Problem(robot, obstacles, None, False, costs)
        fixed = jnp.zeros((Q0.shape[0],), bool).at[0].set(True).at[-1].set(True)
        Q, cost = optimize_trajectory(problem, Q0, iterations, fixed)
        dense = jnp.min(jax.vmap(edge)(Q[:-1], Q[1:]))
        return trajectory_figures(problem, Q, cost), dense

    return jax.jit(jax.vmap(refine_one)), costs


def plan_trajectory(
    robot,
    start,
    goal,
    obstacles=None,
    roadmap: Roadmap | None = None,
    horizon: int = 32,
    costs: TrajectoryCosts | None = None,
    iterations: int = 50,
    k: int = 8,
    edge_samples: int = 8,
    refiner=None,
) -> PlanResult:
    """Plan a ``horizon + 1``-waypoint trajectory from ``start`` to ``goal`` (module
    docstring). ``roadmap``: from :func:`build_roadmap` (without one, only the straight line
    is refined). ``refiner``: a :func:`make_trajectory_refiner` result to reuse across
    queries (built from ``costs`` and ``iterations`` otherwise)."""
    start, goal = jnp.asarray(start), jnp.asarray(goal)
    if start.shape != (robot.dim,) or goal.shape != (robot.dim,):
        raise ValueError(f"start/goal: need shape ({robot.dim},), got {start.shape} and {goal.shape}")
    if not (bool(robot.in_bounds(start)) and bool(robot.in_bounds(goal))):
        raise ValueError("start/goal: outside the robot's bounds")
    refine, costs = refiner if refiner is not None else make_trajectory_refiner(robot, obstacles, costs, iterations)
    if float(jnp.min(_clearances(robot, obstacles, jnp.stack([start, goal])))) < 0.0:
        raise ValueError("start/goal: in collision with the obstacles")
    num = horizon + 1
    candidates, names = [linear_path(robot, start, goal, num)], ["linear"]
    path = None
    if roadmap is not None:
        path = roadmap_path(robot, roadmap, start, goal, obstacles, k, edge_samples, costs.margin)
        if path is not None:
            candidates.insert(0, resample_path(robot, path, num))
            names.insert(0, "roadmap")
    # unwrapping keeps the start and may shift the goal's azimuths by whole turns (the same pose)
    Q0s = _continuous_batch(robot, jnp.stack(candidates))
    results, dense = refine(Q0s)
    limit = costs.max_tendon_speed * (1 + 1e-2)
    feasible = (np.asarray(dense) >= 0.0) & (np.asarray(results.max_tendon_speed) <= limit)
    score = np.where(feasible, np.asarray(results.cost), np.inf)
    best = int(np.argmin(score)) if feasible.any() else int(np.argmin(np.asarray(results.cost)))
    pick = jax.tree_util.tree_map(lambda x: np.asarray(x)[best], results)
    return PlanResult(pick, bool(feasible[best]), names[best], float(dense[best]), path is not None)
