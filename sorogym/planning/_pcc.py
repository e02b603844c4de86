"""The piecewise-constant-curvature (PCC) parametrisation of tendon-driven continuum robots
used for planning: per segment the bending angle ``theta`` [rad], the azimuth ``phi``
[rad] of the bending plane and, for extensible robots, the arc length ``L`` [m].

Segment ``i`` maps its base frame to its tip frame by the rotation
``Rz(phi) Ry(theta) Rz(-phi)`` and the translation ``(L / theta) [cos(phi) (1 - cos(theta)),
sin(phi) (1 - cos(theta)), sin(theta)]`` (backbone along the local +z axis; straight for
``theta = 0``). This is the constant-strain exponential ``exp([theta a, L e_z])`` with the
bending axis ``a = (-sin(phi), cos(phi), 0)``, which is how it is evaluated here: smooth in
``theta`` through zero, with finite gradients everywhere.

Tendons: ``m`` per segment at angles ``alpha_j = 2 pi j / m`` and distance ``r_c`` from the
backbone; over segment ``i`` tendon ``j`` has length ``L_i - r_c theta_i cos(alpha_j - phi_i)``.
"""

from __future__ import annotations

from typing import final

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from sorogym.lie import se3

from ._models import PlanningModel


def _per_segment(name: str, value, n: int) -> np.ndarray:
    arr = np.broadcast_to(np.asarray(value, dtype=float), (n,)).copy()
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"{name}: must be finite and positive, got {value}")
    return arr


@final
class PCCRobot(PlanningModel):
    """A PCC continuum robot for kinematic planning.

    Configuration ``q``: ``(2 N,)`` = ``[theta_1, phi_1, ..., theta_N, phi_N]``, or with
    ``extensible=True`` ``(3 N,)`` = ``[theta_1, phi_1, L_1, ...]``. Bounds: ``theta`` in
    ``[0, max_bend]``; ``phi`` is periodic (kept in ``[0, 2 pi)``); ``L`` in
    ``length_range * length``. The base frame is the world frame; the backbone starts along
    +z.

    Args:
        num_segments: ``N``.
        length: nominal segment arc lengths [m] (scalar or ``(N,)``).
        radius: robot (cross-section) radius [m], used for obstacle clearance.
        extensible: whether the arc lengths are configuration variables.
        length_range: ``(low, high)`` factors of the nominal length (extensible robots).
        max_bend: largest bending angle per segment [rad].
        tendon_radius: tendon distance ``r_c`` from the backbone [m].
        tendons_per_segment: ``m``.
        points_per_segment: backbone points per segment for collision checking.
    """

    length: Array
    radius: float = eqx.field(static=True)
    num_segments: int = eqx.field(static=True)
    extensible: bool = eqx.field(static=True)
    length_range: tuple[float, float] = eqx.field(static=True)
    max_bend: float = eqx.field(static=True)
    tendon_radius: float = eqx.field(static=True)
    tendons_per_segment: int = eqx.field(static=True)
    points_per_segment: int = eqx.field(static=True)

    def __init__(
        self,
        num_segments: int,
        length=1.0,
        radius: float = 0.1,
        extensible: bool = False,
        length_range: tuple[float, float] = (0.5, 1.5),
        max_bend: float = np.pi,
        tendon_radius: float | None = None,
        tendons_per_segment: int = 3,
        points_per_segment: int = 10,
    ):
        if int(num_segments) < 1:
            raise ValueError(f"num_segments: must be >= 1, got {num_segments}")
        self.num_segments = int(num_segments)
        self.length = jnp.asarray(_per_segment("length", length, self.num_segments))
        if not (np.isfinite(radius) and radius >= 0):
            raise ValueError(f"radius: must be finite and >= 0, got {radius}")
        self.radius = float(radius)
        lo, hi = (float(v) for v in length_range)
        if not 0 < lo <= 1.0 <= hi < np.inf:
            raise ValueError(f"length_range: need 0 < low <= 1 <= high, got {length_range}")
        self.extensible, self.length_range = bool(extensible), (lo, hi)
        if not 0 < max_bend <= 2 * np.pi:
            raise ValueError(f"max_bend: must lie in (0, 2 pi], got {max_bend}")
        self.max_bend = float(max_bend)
        self.tendon_radius = float(radius if tendon_radius is None else tendon_radius)
        if not (np.isfinite(self.tendon_radius) and self.tendon_radius > 0):
            raise ValueError(f"tendon_radius: must be finite and positive, got {tendon_radius}")
        if int(tendons_per_segment) < 1 or int(points_per_segment) < 1:
            raise ValueError("tendons_per_segment and points_per_segment must be >= 1")
        self.tendons_per_segment, self.points_per_segment = int(tendons_per_segment), int(points_per_segment)

    # -- configuration space ----------------------------------------------------------

    @property
    def vars_per_segment(self) -> int:
        return 3 if self.extensible else 2

    @property
    def dim(self) -> int:
        """Number of configuration variables."""
        return self.vars_per_segment * self.num_segments

    def segment_parameters(self, q: Float[Array, " n"]) -> tuple[Array, Array, Array]:
        """``(theta, phi, L)``, each ``(N,)``."""
        v = q.reshape(self.num_segments, self.vars_per_segment)
        L = v[:, 2] if self.extensible else self.length.astype(q.dtype)
        return v[:, 0], v[:, 1], L

    def bounds(self) -> tuple[Array, Array]:
        """``(lower, upper)`` ``(n,)``; the azimuths are unbounded (periodic)."""
        lo = [0.0, -jnp.inf] + ([self.length_range[0]] if self.extensible else [])
        hi = [self.max_bend, jnp.inf] + ([self.length_range[1]] if self.extensible else [])
        lower = jnp.tile(jnp.asarray(lo), (self.num_segments, 1))
        upper = jnp.tile(jnp.asarray(hi), (self.num_segments, 1))
        if self.extensible:
            lower = lower.at[:, 2].multiply(self.length)
            upper = upper.at[:, 2].multiply(self.length)
        return lower.reshape(-1), upper.reshape(-1)

    def project(self, q: Float[Array, " n"]) -> Float[Array, " n"]:
        """Clip to the bounds and wrap the azimuths into ``[0, 2 pi)``."""
        lower, upper = self.bounds()
        q = jnp.clip(q, lower.astype(q.dtype), upper.astype(q.dtype))
        v = q.reshape(self.num_segments, self.vars_per_segment)
        return v.at[:, 1].set(jnp.mod(v[:, 1], 2 * jnp.pi)).reshape(-1)

    def in_bounds(self, q: Float[Array, " n"], tol: float = 1e-9) -> Array:
        lower, upper = self.bounds()
        return jnp.all((q >= lower - tol) & (q <= upper + tol))

    def sample(self, key: Array, num: int, dtype=None) -> Float[Array, "num n"]:
        """``num`` configurations uniform in the bounds (azimuths uniform in ``[0, 2 pi)``)."""
        dtype = dtype or self.length.dtype
        lower, upper = self.bounds()
        lower = jnp.where(jnp.isfinite(lower), lower, 0.0).astype(dtype)
        upper = jnp.where(jnp.isfinite(upper), upper, 2 * jnp.pi).astype(dtype)
        return jax.random.uniform(key, (num, self.dim), dtype, lower, upper)

    def unwrap(self, Q: Float[Array, "T n"]) -> Float[Array, "T n"]:
        """A trajectory ``Q`` with the azimuths unwrapped along axis 0 (no jumps of 2 pi)."""
        v = Q.reshape(Q.shape[0], self.num_segments, self.vars_per_segment)
        return v.at[:, :, 1].set(jnp.unwrap(v[:, :, 1], axis=0)).reshape(Q.shape)

    def interpolate(self, q0: Float[Array, " n"], q1: Float[Array, " n"], s) -> Float[Array, " n"]:
        """The configuration a fraction ``s`` in [0, 1] of the way from ``q0`` to ``q1`` on
        the straight line in the bending-vector coordinates ``theta (cos phi, sin phi)``
        (and ``L``) of every segment: the straight line in tendon-length space, smooth
        through straight segments. Azimuths come out in ``(-pi, pi]``."""
        t0, p0, L0 = self.segment_parameters(q0)
        t1, p1, L1 = self.segment_parameters(q1)
        bx = (1 - s) * t0 * jnp.cos(p0) + s * t1 * jnp.cos(p1)
        by = (1 - s) * t0 * jnp.sin(p0) + s * t1 * jnp.sin(p1)
        theta = jnp.sqrt(bx**2 + by**2 + jnp.finfo(q0.dtype).tiny)
        phi = jnp.where(theta > 1e-12, jnp.arctan2(by, bx), (1 - s) * p0 + s * p1)
        parts = [theta, phi] + ([(1 - s) * L0 + s * L1] if self.extensible else [])
        return jnp.stack(parts, axis=-1).reshape(-1)

    # -- kinematics ---------------------------------------------------------------------

    def _twists(self, q) -> Array:
        """Segment twists ``(N, 6)`` ``[theta a, L e_z]`` (angular first)."""
        theta, phi, L = self.segment_parameters(q)
        zero = jnp.zeros_like(theta)
        return jnp.stack([-theta * jnp.sin(phi), theta * jnp.cos(phi), zero, zero, zero, L], axis=-1)

    def segment_transforms(self, q: Float[Array, " n"]) -> Float[Array, "N 4 4"]:
        """Base-to-tip transform of every segment (in the segment's base frame)."""
        return jax.vmap(se3.exp)(self._twists(q))

    def segment_tip_poses(self, q: Float[Array, " n"]) -> Float[Array, "N 4 4"]:
        """World poses of the segment tips (the last is the end effector)."""

        def chain(T, S):
            T = T @ S
            return T, T

        _, poses = jax.lax.scan(chain, jnp.eye(4, dtype=q.dtype), self.segment_transforms(q))
        return poses

    def end_pose(self, q: Float[Array, " n"]) -> Float[Array, "4 4"]:
        """End-effector pose (4x4) in the world frame."""
        return self.segment_tip_poses(q)[-1]

    def backbone_points(self, q: Float[Array, " n"]) -> Float[Array, "P 3"]:
        """``N * points_per_segment`` backbone points [m]: each segment at local fractions
        ``k / points_per_segment``, ``k = 1..points_per_segment`` (so its tip is included)."""
        twists = self._twists(q)
        tips = self.segment_tip_poses(q)
        bases = jnp.concatenate([jnp.eye(4, dtype=q.dtype)[None], tips[:-1]], axis=0)
        fractions = jnp.arange(1, self.points_per_segment + 1, dtype=q.dtype) / self.points_per_segment

        def segment_points(base, twist):
            local = jax.vmap(lambda f: se3.exp_rp(f * twist)[1])(fractions)  # (k, 3)
            return local @ base[:3, :3].T + base[:3, 3]

        return jax.vmap(segment_points)(bases, twists).reshape(-1, 3)

    # -- tendons ------------------------------------------------------------------------

    def tendon_angles(self) -> Array:
        return 2 * jnp.pi * jnp.arange(self.tendons_per_segment) / self.tendons_per_segment

    def segment_tendon_lengths(self, q: Float[Array, " n"]) -> Float[Array, "N m"]:
        """Length [m] of tendon ``j`` over segment ``i``: ``L_i - r_c theta_i cos(alpha_j - phi_i)``."""
        theta, phi, L = self.segment_parameters(q)
        alpha = self.tendon_angles().astype(q.dtype)
        return L[:, None] - self.tendon_radius * theta[:, None] * jnp.cos(alpha[None, :] - phi[:, None])

    def tendon_lengths(self, q: Float[Array, " n"]) -> Float[Array, "N m"]:
        """Length [m] of the tendons that end at segment ``k`` (row ``k``), routed straight
        through segments ``1..k`` at the same angles: cumulative sums of
        :meth:`segment_tendon_lengths`."""
        return jnp.cumsum(self.segment_tendon_lengths(q), axis=0)

    def rate_features(self, q: Float[Array, " n"]) -> Float[Array, " k"]:
        """The tendon lengths (flattened :meth:`tendon_lengths`, [m]): the trajectory costs
        penalise tendon speeds and accelerations."""
        return self.tendon_lengths(q).reshape(-1)
