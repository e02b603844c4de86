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

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from ._ground import Probe
from ._planar_bodies import NormalContactLoad

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


class ArmPairContact(NormalContactLoad):
    """Compliant contact between two arms of a :class:`~sorogym.PlanarScene`
    whose robot is a :class:`~sorogym.PlanarArms`, as an implicit load of the scene
    (:class:`~sorogym.contact.NormalContactLoad`: Hunt-Crossley normal force, depth looked
    ahead by ``lookahead`` [s], regularised Coulomb friction ``friction``, 0 by default).

    Arm ``arms[0]`` is probed at the abscissae ``s_ps`` ``(P,)`` [m] as discs of ``radii``
    ``(P,)`` [m]; arm ``arms[1]`` is the capsule chain through its points at the same
    abscissae and radii (module docstring: the chain starts at its last point before the
    root, so include ``s = 0`` or a point near it to cover the whole arm). The normal force
    acts on arm ``arms[0]``'s point along the line from its closest point on the chain, and
    its opposite on the chain there, so it does no net work on the pair: an undamped,
    frictionless contact stores ``k/2 delta^2`` per point and gives it back.
    """

    arms: tuple[int, int] = eqx.field(static=True)

    def __init__(
        self, arms, s_ps, radii, stiffness, damping=0.0, lookahead=0.0, friction=0.0, slip_velocity=1e-3, dtype=None
    ):

        dtype = dtype or jnp.result_type(float)
        a, b = (int(k) for k in arms)
        if a == b or min(a, b) < 0:
            raise ValueError(f"arms: expected two different arm indices, got {arms}")
        self.arms = (a, b)
        self._set_probes(s_ps, radii, dtype)
        if self.s_ps.shape[0] < 2:
            raise ValueError("s_ps: the chain needs at least two points")
        self._set_law(stiffness, damping, lookahead, friction, slip_velocity, dtype)

    def contact_rows(self, scene, q: Float[Array, " n"]) -> tuple[Array, Array, Array]:
        """``(depths (P,) [m], J_n (P, n), J_t (P, n))`` at ``q``: each of arm
        ``arms[0]``'s points' overlap with the other arm's chain and the rows mapping ``qd``
        to their separation speed along the normal and sliding speed along the tangent
        [m/s]."""
        arms, n_r = scene.robot, scene.robot_dofs
        if max(self.arms) >= arms.num_arms:
            raise ValueError(f"arms: {self.arms} for a robot of {arms.num_arms} arms")
        q_r = q[:n_r]
        positions, _, J = arms.backbone_points(q_r, jnp.zeros_like(q_r), self.s_ps.astype(q.dtype))
        a, b = self.arms
        j, t, foot = closest_on_chain(positions[a], positions[b])
        radii = self.radii.astype(q.dtype)
        offset = positions[a] - foot
        distance = jnp.sqrt(jnp.sum(offset * offset, axis=-1) + _TINY)
        normal = offset / distance[:, None]
        depth = radii + (1.0 - t) * radii[j] + t * radii[j + 1] - distance
        J_foot = (1.0 - t)[:, None, None] * J[b][j] + t[:, None, None] * J[b][j + 1]
        relative = J[a] - J_foot  # (P, 2, n_r)
        tangent = jnp.stack([-normal[:, 1], normal[:, 0]], -1)
        padded = jnp.zeros((depth.shape[0], q.shape[0]), q.dtype)
        J_n = padded.at[:, :n_r].set(jnp.einsum("pc,pcn->pn", normal, relative))
        J_t = padded.at[:, :n_r].set(jnp.einsum("pc,pcn->pn", tangent, relative))
        return depth, J_n, J_t


__all__ = ["ArmPairContact", "closest_on_chain", "rod_pair_contact"]
