"""Obstacles pressing on a rod: one penalty force per obstacle at the rod's deepest point.

The contact-force proxy of the SoRoMoX safety case study, on the surfaces of
:mod:`sorogym.contact._geometry`. The rod is probed at ``P`` backbone points, each a sphere
of the local cross-section radius; ``delta_ij`` [m] is the penetration of point ``i`` into
obstacle ``j`` (:func:`~sorogym.contact.penetration`, positive when overlapping). Obstacle
``j`` pushes with the force magnitude

    F_j = k max_i max(delta_ij, 0)          [N], stiffness k [N/m]

shared among the penetrating points in proportion to their penetration and directed along
the obstacle's outward normals there, so the resultant does not depend on how densely the
backbone is sampled. The point forces act through the transposed Jacobians of the probe
points (:meth:`~sorogym.PCS.point_force_map`). The law is frictionless and has no damping:
use :class:`~sorogym.contact.ContactLaw` per point where friction or dissipation matters.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ._geometry import SphereObstacle, _traced, penetration
from ._ground import cross_section_radius

_TINY = 1e-12


def sphere_obstacles(centers: Float[Array, "k 3"], radii: Float[Array, " k"], dtype=None) -> SphereObstacle:
    """``k`` spheres as one :class:`~sorogym.contact.SphereObstacle` with a leading batch
    axis (centres ``(k, 3)`` [m], radii ``(k,)`` [m]; ``dtype`` defaults to theirs, so a
    float32 env keeps float32 obstacles when float64 is enabled); ``ValueError`` naming
    the field for a wrong shape, a non-finite centre or a non-positive radius (checked when
    concrete)."""
    if not _traced((centers, radii)):
        c, r = np.asarray(centers, float), np.asarray(radii, float)
        if c.ndim != 2 or c.shape[1] != 3 or not np.all(np.isfinite(c)):
            raise ValueError(f"centers: finite (k, 3) positions [m], got shape {c.shape}")
        if r.shape != c.shape[:1] or not np.all(np.isfinite(r)) or not np.all(r > 0):
            raise ValueError(f"radii: one finite positive radius [m] per centre, got {radii!r}")
    centers, radii = jnp.asarray(centers), jnp.asarray(radii)
    if dtype is None:
        given = jnp.result_type(centers, radii)
        dtype = given if jnp.issubdtype(given, jnp.floating) else jnp.result_type(float)
    return jax.vmap(lambda c, r: SphereObstacle(c, r, dtype))(centers, radii)


def obstacle_depths(obstacles, positions: Float[Array, "P 3"], radii: Float[Array, " P"]) -> tuple[Array, Array]:
    """``(depths (P, k) [m], outward normals (P, k, 3))`` of probe spheres against a batch
    of ``k`` obstacles of one kind (stacked along a leading axis, e.g.
    :func:`sphere_obstacles`)."""
    depth, normal = jax.vmap(lambda o: penetration(o, positions, radii))(obstacles)
    return depth.T, jnp.moveaxis(normal, 0, 1)


def deepest_point_forces(
    depths: Float[Array, "P k"], normals: Float[Array, "P k 3"], stiffness
) -> tuple[Float[Array, "P 3"], Float[Array, " k"]]:
    """``(point forces (P, 3) [N], force magnitude per obstacle (k,) [N])`` of the
    deepest-point penalty (module docstring) with stiffness ``k`` [N/m]."""
    pen = jnp.maximum(depths, 0.0)
    magnitude = stiffness * jnp.max(pen, axis=0)
    share = pen / jnp.maximum(jnp.sum(pen, axis=0, keepdims=True), _TINY)
    weight = share * magnitude  # (P, k); the sum over the k obstacles unrolled (no batched dot)
    return sum(weight[:, j, None] * normals[:, j] for j in range(normals.shape[1])), magnitude


def rod_obstacle_contact(model, q: Float[Array, " n"], s_ps, obstacles, stiffness) -> tuple[Array, Array, Array]:
    """``(generalized force (n,), force magnitude per obstacle (k,) [N], depths (P, k) [m])``
    of the deepest-point penalty between a serial rod probed at the abscissae ``s_ps``
    ``(P,)`` [m] and a batch of obstacles."""
    s_ps = jnp.asarray(s_ps, q.dtype)
    positions, apply = model.point_force_map(q, s_ps)
    depths, normals = obstacle_depths(obstacles, positions, cross_section_radius(model, s_ps))
    forces, magnitude = deepest_point_forces(depths, normals, stiffness)
    return apply(forces), magnitude, depths


__all__ = ["deepest_point_forces", "obstacle_depths", "rod_obstacle_contact", "sphere_obstacles"]
