"""Planning views of the simulation models, and obstacles (spheres, oriented boxes and
unions of them).

A *planning model* subclasses :class:`PlanningModel`, the interface the solvers use:
``dim``, ``bounds()``, ``project(q)``, ``in_bounds(q)``, ``sample(key, num)``,
``interpolate(q0, q1, s)``, ``end_pose(q)`` (4x4, world frame), ``backbone_points(q)``
``(P, 3)`` and ``radius`` [m], with defaults for ``constraint_residual(q)`` (extra residuals
the solvers append; none), ``rate_features(q)`` (what the trajectory rate terms act on;
``q``) and ``unwrap(Q)`` (periodic coordinates made continuous along a trajectory; the
identity). :class:`~sorogym.planning.PCCRobot` is the PCC parametrisation of tendon-driven
robots; :class:`PCSPlanningModel` gives a spatial PCS model (the robot an environment
simulates) that interface in its own strain coordinates.

An *obstacle set* has ``count`` and ``clearance(points, inflate) -> (P, count)``: the
signed distance [m] from each point to each obstacle grown by ``inflate`` (negative
inside). :class:`Spheres`, :class:`Boxes` and their union :class:`Obstacles` provide it.
"""

import abc
from typing import final

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ..models import PCS


class PlanningModel(eqx.Module):
    """Abstract robot as the planners see it (module docstring)."""

    radius: eqx.AbstractVar[float]

    @property
    @abc.abstractmethod
    def dim(self) -> int:
        """Number of configuration variables."""

    @abc.abstractmethod
    def bounds(self) -> tuple[Array, Array]:
        """``(lower, upper)`` box bounds ``(dim,)`` of the configuration."""

    @abc.abstractmethod
    def project(self, q: Float[Array, " n"]) -> Float[Array, " n"]:
        """``q`` projected onto the bounds."""

    @abc.abstractmethod
    def in_bounds(self, q: Float[Array, " n"], tol: float = 1e-9) -> Array:
        """Whether ``q`` lies within the bounds (scalar bool)."""

    @abc.abstractmethod
    def sample(self, key: Array, num: int, dtype=None) -> Float[Array, "num n"]:
        """``num`` configurations drawn uniformly within the bounds."""

    @abc.abstractmethod
    def interpolate(self, q0: Float[Array, " n"], q1: Float[Array, " n"], s) -> Float[Array, " n"]:
        """The configuration a fraction ``s`` in [0, 1] of the way from ``q0`` to ``q1``."""

    @abc.abstractmethod
    def end_pose(self, q: Float[Array, " n"]) -> Float[Array, "4 4"]:
        """End-effector pose in the world frame."""

    @abc.abstractmethod
    def backbone_points(self, q: Float[Array, " n"]) -> Float[Array, "P 3"]:
        """Collision points [m] along the backbone, world frame."""

    def constraint_residual(self, q: Float[Array, " n"]) -> Float[Array, " c"]:
        """Extra residuals the solvers drive to zero (``(0,)``: none)."""
        return jnp.zeros((0,), q.dtype)

    def rate_features(self, q: Float[Array, " n"]) -> Float[Array, " k"]:
        """The quantities whose rates the trajectory costs penalise (``q`` itself)."""
        return q

    def unwrap(self, Q: Float[Array, "T n"]) -> Float[Array, "T n"]:
        """``Q`` with periodic coordinates made continuous along a trajectory (no change)."""
        return Q


@final
class PCSPlanningModel(PlanningModel):
    """A spatial :class:`~sorogym.models.PCS` model seen by the planners: configuration =
    its active strain coordinates ``q`` ``(n,)``, box-bounded by ``lower``/``upper``
    (``(n,)``, finite), end effector = the tip frame, collision points = ``points`` backbone
    points spread evenly over the length (tip included), radius = the largest segment
    radius."""

    model: eqx.Module
    lower: Array
    upper: Array
    arc_lengths: Array
    radius: float = eqx.field(static=True)

    def __init__(self, model, lower, upper, points: int = 20):
        if not isinstance(model, PCS):
            raise ValueError("PCSPlanningModel: needs a spatial PCS model (planar models have no SE(3) pose)")
        n = model.num_dofs
        lower, upper = np.asarray(lower, float), np.asarray(upper, float)
        lower, upper = np.broadcast_to(lower, (n,)).copy(), np.broadcast_to(upper, (n,)).copy()
        if not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper)) and np.all(lower < upper)):
            raise ValueError(f"lower/upper: need finite bounds with lower < upper for all {n} coordinates")
        if int(points) < 1:
            raise ValueError(f"points: must be >= 1, got {points}")
        self.model = model
        dtype = model.params.length.dtype
        self.lower, self.upper = jnp.asarray(lower, dtype), jnp.asarray(upper, dtype)
        total = float(np.sum(np.asarray(model.params.length)))
        self.arc_lengths = jnp.asarray(np.linspace(total / points, total, points), dtype)
        self.radius = float(np.max(np.asarray(model.params.radius)))

    @property
    def dim(self) -> int:
        return self.model.num_dofs

    def bounds(self) -> tuple[Array, Array]:
        return self.lower, self.upper

    def project(self, q: Float[Array, " n"]) -> Float[Array, " n"]:
        return jnp.clip(q, self.lower.astype(q.dtype), self.upper.astype(q.dtype))

    def in_bounds(self, q: Float[Array, " n"], tol: float = 1e-9) -> Array:
        return jnp.all((q >= self.lower - tol) & (q <= self.upper + tol))

    def sample(self, key: Array, num: int, dtype=None) -> Float[Array, "num n"]:
        dtype = dtype or self.lower.dtype
        return jax.random.uniform(key, (num, self.dim), dtype, self.lower.astype(dtype), self.upper.astype(dtype))

    def interpolate(self, q0: Float[Array, " n"], q1: Float[Array, " n"], s) -> Float[Array, " n"]:
        """Straight-line interpolation in strain coordinates (``s`` in [0, 1])."""
        return (1 - s) * q0 + s * q1

    def end_pose(self, q: Float[Array, " n"]) -> Float[Array, "4 4"]:
        return self.model.forward_kinematics(q, self.arc_lengths[-1].astype(q.dtype))

    def backbone_points(self, q: Float[Array, " n"]) -> Float[Array, "P 3"]:
        return self.model.backbone_positions(q, self.arc_lengths.astype(q.dtype))


def robot_clearance(robot, obstacles, q: Float[Array, " n"]) -> Float[Array, ""]:
    """Smallest clearance [m] between the robot at ``q`` (backbone points grown by its
    radius) and the obstacles; ``inf`` without obstacles."""
    if obstacles is None or not obstacles.count:
        return jnp.asarray(jnp.inf, q.dtype)
    return jnp.min(obstacles.clearance(robot.backbone_points(q), robot.radius))


class Spheres(eqx.Module):
    """Spherical obstacles: ``centers`` ``(S, 3)`` [m] and ``radii`` ``(S,)`` [m]."""

    centers: Array
    radii: Array

    def __init__(self, centers, radii):
        centers = np.asarray(centers, float).reshape(-1, 3)
        radii = np.broadcast_to(np.asarray(radii, float), (centers.shape[0],)).copy()
        if not (np.all(np.isfinite(centers)) and np.all(np.isfinite(radii)) and np.all(radii > 0)):
            raise ValueError("Spheres: centers must be finite and radii finite and positive")
        self.centers, self.radii = jnp.asarray(centers), jnp.asarray(radii)

    @property
    def count(self) -> int:
        return int(self.centers.shape[0])

    def clearance(self, points: Float[Array, "P 3"], inflate: float = 0.0) -> Float[Array, "P S"]:
        """Signed distance [m] from each point to each sphere's surface grown by
        ``inflate`` (e.g. the robot radius); negative inside."""
        from sorogym.contact import obstacle_depths, sphere_obstacles

        inflate = jnp.full(points.shape[:1], inflate, points.dtype)
        spheres = sphere_obstacles(self.centers.astype(points.dtype), self.radii.astype(points.dtype))
        return -obstacle_depths(spheres, points, inflate)[0]

    @classmethod
    def random(
        cls,
        rng: np.random.Generator,
        count: int = 27,
        half: float = 1.5,
        radii=(0.15, 0.30),
        base_clearance: float = 0.3,
    ) -> "Spheres":
        """``count`` spheres with radii uniform in ``radii`` [m] and centres uniform in the
        cube ``[-half, half]^3`` [m] around the base, redrawn while a sphere comes within
        ``base_clearance`` of the base (CR-Solver's random scenes: 27 spheres, radii
        0.15-0.30 m, a 3 m cube)."""
        if count < 1 or half <= 0 or not 0 < radii[0] <= radii[1] or base_clearance < 0:
            raise ValueError("Spheres.random: need count >= 1, half > 0, 0 < radii[0] <= radii[1], base_clearance >= 0")
        centers, rs = [], []
        for _ in range(1000 * count):
            if len(centers) == count:
                break
            c, r = rng.uniform(-half, half, 3), rng.uniform(*radii)
            if np.linalg.norm(c) > r + base_clearance:
                centers.append(c)
                rs.append(r)
        else:
            raise RuntimeError("Spheres.random: could not place the spheres clear of the base")
        return cls(np.array(centers), np.array(rs))

    @classmethod
    def lattice(cls, shape=(3, 3, 3), spacing=(0.8, 0.8, 1.0), radius: float = 0.2, origin=(0.0, 0.0, 0.0)):
        """A regular lattice of equal spheres centred on ``origin`` (the 27-sphere case:
        ``shape=(3, 3, 3)``, spacing 0.8/0.8/1.0 m, radius 0.2 m)."""
        axes = [(np.arange(k) - (k - 1) / 2) * s for k, s in zip(shape, spacing)]
        grid = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, 3) + np.asarray(origin)
        return cls(grid, radius)


def _safe_norm(x: Float[Array, "... 3"]) -> Float[Array, "..."]:
    """Euclidean norm over the last axis with a zero (not NaN) gradient at the origin."""
    sq = jnp.sum(x**2, axis=-1)
    positive = sq > 0
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, sq, 1.0)), 0.0)


class Boxes(eqx.Module):
    """Oriented cuboid obstacles: ``centers`` ``(B, 3)`` [m], ``half_extents`` ``(B, 3)``
    [m] along the box's own axes, and ``rotations`` ``(B, 3, 3)`` (columns = the box axes
    in the world frame; identity when omitted). The clearance is the exact signed distance
    to the box surface (negative inside: minus the depth to the nearest face)."""

    centers: Array
    half_extents: Array
    rotations: Array

    def __init__(self, centers, half_extents, rotations=None):
        centers = np.asarray(centers, float).reshape(-1, 3)
        b = centers.shape[0]
        half = np.broadcast_to(np.asarray(half_extents, float), (b, 3)).copy()
        if rotations is None:
            rot = np.broadcast_to(np.eye(3), (b, 3, 3)).copy()
        else:
            rot = np.broadcast_to(np.asarray(rotations, float), (b, 3, 3)).copy()
        if not (np.all(np.isfinite(centers)) and np.all(np.isfinite(half)) and np.all(half > 0)):
            raise ValueError("Boxes: centers must be finite and half_extents finite and positive")
        if not (
            np.all(np.isfinite(rot))
            and np.allclose(np.einsum("bji,bjk->bik", rot, rot), np.eye(3), atol=1e-6)
            and np.allclose(np.linalg.det(rot), 1.0, atol=1e-6)
        ):
            raise ValueError("Boxes: rotations must be proper rotation matrices (orthonormal, det +1)")
        self.centers, self.half_extents, self.rotations = jnp.asarray(centers), jnp.asarray(half), jnp.asarray(rot)

    @property
    def count(self) -> int:
        return int(self.centers.shape[0])

    def clearance(self, points: Float[Array, "P 3"], inflate: float = 0.0) -> Float[Array, "P B"]:
        """Signed distance [m] from each point to each box grown by ``inflate``."""
        dtype = points.dtype
        diff = points[:, None, :] - self.centers.astype(dtype)[None]  # (P, B, 3)
        local = jnp.einsum("bji,pbj->pbi", self.rotations.astype(dtype), diff)  # box frame
        excess = jnp.abs(local) - self.half_extents.astype(dtype)[None]
        outside = _safe_norm(jnp.maximum(excess, 0.0))
        inside = jnp.minimum(jnp.max(excess, axis=-1), 0.0)
        return outside + inside - inflate


class Obstacles(eqx.Module):
    """The union of obstacle sets (e.g. ``Obstacles(Spheres(...), Boxes(...))``): its
    clearance columns are those of each set, in order."""

    parts: tuple

    def __init__(self, *parts):
        if not parts or not all(hasattr(p, "clearance") and hasattr(p, "count") for p in parts):
            raise ValueError("Obstacles: give one or more obstacle sets (Spheres, Boxes, ...)")
        self.parts = tuple(parts)

    @property
    def count(self) -> int:
        return sum(p.count for p in self.parts)

    def clearance(self, points: Float[Array, "P 3"], inflate: float = 0.0) -> Float[Array, "P K"]:
        return jnp.concatenate([p.clearance(points, inflate) for p in self.parts], axis=-1)
