"""Probe points of a robot, their contact with a surface, and the mapping of point forces
to generalized forces.

A probe point is a point of the robot (a rod's backbone point with its cross-section radius,
a link frame with the radius of a sphere around it) with its world position ``p`` [m],
velocity ``v`` [m/s] and the linear rows of its inertial-frame Jacobian ``J_v`` ``(3, n)``
(``v = J_v qd``). A point force ``f`` [N] acting there is the generalized force
``J_v^T f``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ._geometry import penetration


class Probe(NamedTuple):
    """Probe points of a robot at one state: ``positions`` ``(P, 3)`` [m], ``velocities``
    ``(P, 3)`` [m/s], ``radii`` ``(P,)`` [m], ``jacobians`` ``(P, 3, n)`` (linear rows of
    the inertial-frame Jacobians) and ``axes`` ``(P, 3)`` (unit backbone tangents, the
    forward direction of anisotropic friction); ``spins`` ``(P, 3)`` [rad/s] and
    ``angular_jacobians`` ``(P, 3, n)``, the world angular velocities of the probes' frames
    and their Jacobian rows, let a force act on a probe's surface (:func:`surface_contact`
    with ``at_surface``)."""

    positions: Array
    velocities: Array
    radii: Array
    jacobians: Array
    axes: Array
    spins: Array | None = None
    angular_jacobians: Array | None = None


def probe_model(model, q, qd, s_ps, body=None, radius=None) -> Probe:
    """Probe points at the abscissae ``s_ps`` ``(P,)`` [m] of a rod model (serial
    ``PCS``/``GVS``) or of one body of a :class:`~sorogym.BodyTree` (``body``: a rod body,
    or a rigid link, probed at its frame for every ``s``). The radius is ``radius`` [m]
    (scalar or ``(P,)``) if given, else the rod's cross-section radius at each point (linear
    along a conical GVS link), zero for a link."""
    s_ps = jnp.asarray(s_ps, q.dtype)
    extra = {} if body is None else {"body": body}
    poses, J_full = model.pose_and_jacobian_batched(q, s_ps, frame="inertial", **extra)  # one kinematics pass
    J, J_w = J_full[:, 3:, :], J_full[:, :3, :]  # (P, 3, n) each
    rod = model if body is None else _rod_or_none(model, body)
    if radius is not None:
        radii = jnp.broadcast_to(jnp.asarray(radius, q.dtype), s_ps.shape)
    else:
        radii = jnp.zeros(s_ps.shape, q.dtype) if rod is None else cross_section_radius(rod, s_ps)
    return Probe(poses[:, :3, 3], J @ qd, radii, J, poses[:, :3, 0], J_w @ qd, J_w)


def probe_bodies(tree, q, qd, bodies, s_ps, radius=0.0) -> Probe:
    """Probe points on several bodies of a :class:`~sorogym.BodyTree` in one pass: point
    ``k`` at the abscissa ``s_ps[k]`` [m] of ``bodies[k]`` (the points on the arms of a star
    are evaluated together, :meth:`~sorogym.BodyTree.poses_and_jacobians`). Rod points
    carry their cross-section radius, link frames ``radius`` [m]."""
    s_ps = jnp.asarray(s_ps, q.dtype).reshape(-1)
    poses, J_full = tree.poses_and_jacobians(q, bodies, s_ps, frame="inertial")
    J, J_w = J_full[:, 3:, :], J_full[:, :3, :]
    radii = jnp.broadcast_to(jnp.asarray(radius, q.dtype), s_ps.shape)
    names = [tree.body_names[tree.body_index(b)] for b in bodies]
    for name in dict.fromkeys(names):  # each rod body once (static)
        rod = _rod_or_none(tree, name)
        if rod is not None:
            k = np.flatnonzero(np.asarray(names) == name)
            radii = radii.at[k].set(cross_section_radius(rod, s_ps[k]))
    return Probe(poses[:, :3, 3], J @ qd, radii, J, poses[:, :3, 0], J_w @ qd, J_w)


def offset_jacobians(J_v: Array, J_w: Array, arms: Float[Array, "P 3"]) -> Float[Array, "P 3 n"]:
    """Linear Jacobian rows ``(P, 3, n)`` of points at world-frame lever arms ``arms``
    ``(P, 3)`` [m] from frames with linear and angular rows ``J_v``, ``J_w`` (``(3, n)``
    for one frame or ``(P, 3, n)``): ``J_v - [arm]x J_w`` (``v + w x arm``)."""
    if J_v.ndim == 2:  # one frame for every point
        J_v, J_w = J_v[None], J_w[None]
    return J_v - jnp.cross(arms[:, :, None], J_w, axisa=1, axisb=1, axisc=1)


def probe_link(tree, q, qd, body, offsets, radius=0.0) -> Probe:
    """Probe points fixed to a rigid link of a :class:`~sorogym.BodyTree` at ``offsets``
    ``(P, 3)`` [m] in the link frame (a box's corners, a foot), spheres of ``radius`` [m]:
    ``p_i = p + R r_i``, ``J_v(i) = J_v - [R r_i]x J_w``; the axes are the link's x axis."""
    offsets = jnp.asarray(offsets, q.dtype).reshape(-1, 3)
    pose, J = tree.pose_and_jacobian(q, 0.0, frame="inertial", body=body)  # (4, 4), (6, n)
    arms = offsets @ pose[:3, :3].T  # (P, 3) world-frame lever arms R r_i
    J_v = offset_jacobians(J[3:], J[:3], arms)
    radii = jnp.broadcast_to(jnp.asarray(radius, q.dtype), offsets.shape[:1])
    axes = jnp.broadcast_to(pose[:3, 0], offsets.shape)
    J_w = jnp.broadcast_to(J[:3], J_v.shape)
    return Probe(pose[:3, 3] + arms, J_v @ qd, radii, J_v, axes, J_w @ qd, J_w)


def cross_section_radius(rod, s: Float[Array, " P"]) -> Float[Array, " P"]:
    """Cross-section radius ``(P,)`` [m] of a rod model at the abscissae ``s`` [m]."""
    seg, local = rod.locate(s)
    base = rod.params.radius[seg]
    tip = getattr(rod.params, "tip_radius", None)
    if tip is None:
        return base
    return base + (tip[seg] - base) * local / rod.params.length[seg]


def _rod_or_none(tree, body):
    try:
        return tree.rod(body)
    except ValueError:  # a rigid link
        return None


def generalized_force(probe: Probe, forces: Float[Array, "P 3"]) -> Float[Array, " n"]:
    """``sum_i J_v(i)^T f_i`` ``(n,)`` of point forces ``(P, 3)`` [N] (world frame)."""
    return jnp.einsum("pcn,pc->n", probe.jacobians, forces)


def on_surface(probe: Probe, normals: Float[Array, "P 3"]) -> Probe:
    """The probe moved from each sphere's centre to its surface point facing along
    ``-normals`` ``(P, 3)`` (the point that touches a surface with those outward normals):
    ``x - r n``, with velocity ``v - r w x n`` and Jacobian rows ``J_v + r [n]x J_w``, so a
    force there also turns the probe's frame (a ball rolls). Needs the probe's spins."""
    if probe.spins is None or probe.angular_jacobians is None:
        raise ValueError("probe: a force on the probe's surface needs its spins and angular Jacobians")
    arms = -probe.radii[:, None] * normals  # (P, 3), centre -> contact point
    J = offset_jacobians(probe.jacobians, probe.angular_jacobians, arms)
    velocities = probe.velocities + jnp.cross(probe.spins, arms)
    return probe._replace(positions=probe.positions + arms, velocities=velocities, jacobians=J)


def surface_contact(surface, law, probe: Probe, anisotropic_axes: bool = True, at_surface: bool = False):
    """``(generalized force (n,), point forces (P, 3) [N], normal forces (P,) [N], depths
    (P,) [m])`` of the probe points against a surface (:mod:`sorogym.contact._geometry`:
    the ground, terrain, an obstacle) under ``law`` (a
    :class:`~sorogym.contact.ContactLaw`); the probe's backbone axes are the forward
    directions of an anisotropic law. The force acts at each probe sphere's centre, or with
    ``at_surface`` at its point of contact (:func:`on_surface`: friction then turns the
    probe, so a ball or a rod rolls instead of sliding)."""
    depth, normals = penetration(surface, probe.positions, probe.radii)
    if at_surface:
        probe = on_surface(probe, normals)
    axes = probe.axes if anisotropic_axes else None
    forces, f_n = law.forces(depth, probe.velocities, normals, axes)
    return generalized_force(probe, forces), forces, f_n, depth


__all__ = [
    "Probe",
    "on_surface",
    "cross_section_radius",
    "generalized_force",
    "surface_contact",
    "probe_link",
    "probe_model",
]
