"""Contact between two rods: different branches of a tree (a gripper's fingers, the arms of
a star) or different robots (world frame, SI units).

Positions, velocities and Jacobians may be planar (``(P, 2)``, ``(P, 2, n)``) or spatial
(``(P, 3)``, ``(P, 3, n)``) alike (isotropic friction in the plane).

Rod ``B`` is represented by the capsule chain through its probe points: segment ``j`` joins
``b_j`` and ``b_(j+1)``, its radius interpolated linearly between theirs. Each probe point
``x`` of rod ``A`` (a sphere of radius ``r_a``) finds its closest point on ``B``'s axis,
``c = (1 - t) b_j + t b_(j+1)`` on the nearest segment, and penetrates by

    delta = r_a + r_b(c) - |x - c|          (normal n = (x - c) / |x - c|, from B to A)

The contact law gives the force ``f`` on ``A``'s point; ``-f`` acts on ``B`` at ``c``,
through the interpolated Jacobian ``(1 - t) J_v(b_j) + t J_v(b_(j+1))`` (exact for the
chain, which moves with its nodes), and friction sees the velocity of ``x`` relative to
``c``. Normal forces act along the line through ``x`` and ``c``, so a frictionless contact
conserves linear and angular momentum. Probe ``B`` densely enough that its chain follows
the rod (a few points per segment); the chain cuts the corners of a curved rod by about
``kappa h^2 / 8`` for points ``h`` apart at curvature ``kappa``.
"""

from __future__ import annotations

import jax.numpy as jnp
from jaxtyping import Array, Float

from ._ground import Probe

_TINY = 1e-30


def closest_on_chain(points: Float[Array, "P 3"], chain: Float[Array, "Q 3"]) -> tuple[Array, Array, Array]:
    """For each point, the nearest segment ``j`` ``(P,)`` of the polyline ``chain``, the
    fraction ``t`` ``(P,)`` in ``[0, 1]`` along it and the closest point ``(P, 3)`` [m]."""
    start, edge = chain[:-1], chain[1:] - chain[:-1]  # (Q - 1, 3)
    t = jnp.einsum("pqc,qc->pq", points[:, None, :] - start[None], edge) / jnp.maximum(
        jnp.sum(edge * edge, axis=-1), _TINY
    )
    t = jnp.clip(t, 0.0, 1.0)
    foot = start[None] + t[..., None] * edge[None]  # (P, Q - 1, 3)
    j = jnp.argmin(jnp.sum((points[:, None, :] - foot) ** 2, axis=-1), axis=1)
    rows = jnp.arange(points.shape[0])
    return j, t[rows, j], foot[rows, j]


def rod_pair_contact(law, probe_a: Probe, probe_b: Probe, anisotropic_axes: bool = False):
    """``(generalized force (n,), forces on A's points (P, 3) [N], normal forces (P,) [N],
    depths (P,) [m])`` of rod ``A``'s probe points against the capsule chain of rod ``B``'s
    probe points (module docstring), under ``law`` (a
    :class:`~sorogym.contact.ContactLaw`). Both probes come from the same model (their
    Jacobians share its coordinates); ``A``'s backbone axes are the forward directions of
    an anisotropic law if ``anisotropic_axes``."""
    j, t, c = closest_on_chain(probe_a.positions, probe_b.positions)
    w0, w1 = (1.0 - t)[:, None], t[:, None]
    radius_b = (1.0 - t) * probe_b.radii[j] + t * probe_b.radii[j + 1]
    offset = probe_a.positions - c
    distance = jnp.sqrt(jnp.sum(offset * offset, axis=-1) + _TINY)
    normal = offset / distance[:, None]
    depth = probe_a.radii + radius_b - distance
    velocity_c = w0 * probe_b.velocities[j] + w1 * probe_b.velocities[j + 1]
    J_c = w0[..., None] * probe_b.jacobians[j] + w1[..., None] * probe_b.jacobians[j + 1]
    axes = probe_a.axes if anisotropic_axes else None
    forces, f_n = law.forces(depth, probe_a.velocities - velocity_c, normal, axes)
    tau = jnp.einsum("pcn,pc->n", probe_a.jacobians - J_c, forces)
    return tau, forces, f_n, depth


__all__ = ["closest_on_chain", "rod_pair_contact"]
