"""Rigid objects: free bodies of a :class:`~sorogym.BodyTree` with a primitive shape, in
contact with robots, the ground and each other (world frame, SI units).

An object is a rigid link on a free joint (:meth:`RigidObject.link`, mass and inertia from
its size and density) whose shape is a signed-distance function in the link frame (the
obstacle classes of :mod:`sorogym.contact._geometry` placed at the origin) together with a
set of contact points fixed to the link (:meth:`RigidObject.contact_points`: a sphere's
centre with its radius, a capsule's two end centres with its radius, a box's eight corners,
a cylinder's rims). Objects, robots and the ground all meet through probe points:

* an object on the ground or an obstacle: its contact points (:func:`probe_object`) against
  the surface, :func:`~sorogym.contact.surface_contact`;
* a robot or another object touching object ``B``: the probe points of the one against
  ``B``'s posed shape, :func:`object_contact`. The point force ``f`` acts on the probe
  point and ``-f`` on ``B`` at the probe's projection ``c`` onto ``B``'s surface, both
  through their Jacobians (``J_v(c) = J_v - [c - p]x J_w`` for ``B``'s frame at ``p``); the
  friction law sees the velocity of the probe point relative to ``B``'s material point at
  ``c``.

The two application points lie on the contact normal, so normal forces are equal and
opposite along one line and conserve linear and angular momentum; friction acts at the
probe's centre on one side and at ``c`` on the other, a couple of lever arm ``|x - c|``
(the probe's radius) that real surfaces would not have, unless the probe's force is put on
its surface (``at_surface``), which leaves a lever arm of the depth.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ..models import Joint, RigidLink
from ._geometry import BoxObstacle, CapsuleObstacle, CylinderObstacle, SphereObstacle, penetration
from ._ground import Probe, offset_jacobians, on_surface, probe_link

#: shape names and their sizes [m]
SHAPES = {
    "sphere": ("radius",),
    "box": ("half_x", "half_y", "half_z"),
    "capsule": ("radius", "half_length"),
    "cylinder": ("radius", "half_length"),
}
_RIM_POINTS = 8  # contact points per rim of a cylinder


@dataclasses.dataclass(frozen=True)
class RigidObject:
    """A rigid object of uniform ``density`` [kg/m^3] (``name`` the tree body's name).

    ``shape`` and ``size`` [m]: ``"sphere"`` ``(radius,)``, ``"box"`` ``(half_x, half_y,
    half_z)``, ``"capsule"`` ``(radius, half_length)`` and ``"cylinder"`` ``(radius,
    half_length)`` with the axis along the link's z. ``position`` ``(3,)`` [m] and
    ``quaternion`` ``(w, x, y, z)`` are the free joint's neutral pose (the object's initial
    placement in ``BodyTree.neutral_configuration``).

    Raises ``ValueError`` naming the object and field for an empty name, an unknown shape,
    a size of the wrong length or not finite and positive, or a density not finite and
    positive.
    """

    name: str
    shape: str
    size: tuple
    density: float
    position: tuple = (0.0, 0.0, 0.0)
    quaternion: tuple = (1.0, 0.0, 0.0, 0.0)

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name: a non-empty string, got {self.name!r}")
        if self.shape not in SHAPES:
            raise ValueError(f"object {self.name!r}: shape: unknown {self.shape!r}; choose from {sorted(SHAPES)}")
        size = np.asarray(self.size, float).reshape(-1)
        fields = SHAPES[self.shape]
        if size.shape != (len(fields),) or not np.all(np.isfinite(size)) or not np.all(size > 0):
            raise ValueError(
                f"object {self.name!r}: size: a {self.shape} takes {len(fields)} finite positive values "
                f"{fields} [m], got {self.size!r}"
            )
        object.__setattr__(self, "size", tuple(float(x) for x in size))
        density = float(self.density)
        if not np.isfinite(density) or density <= 0:
            raise ValueError(f"object {self.name!r}: density: a finite positive value [kg/m^3], got {self.density!r}")

    def mass_properties(self) -> tuple[float, np.ndarray]:
        """``(mass [kg], inertia (3, 3) [kg m^2] about the centre, link axes)``, closed forms."""
        rho = float(self.density)
        if self.shape == "sphere":
            (r,) = self.size
            m = rho * 4.0 / 3.0 * np.pi * r**3
            return m, 0.4 * m * r * r * np.eye(3)
        if self.shape == "box":
            a, b, c = (2 * x for x in self.size)
            m = rho * a * b * c
            return m, m / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
        r, h = self.size
        m_cyl = rho * np.pi * r * r * 2 * h
        axial, lateral = 0.5 * m_cyl * r * r, m_cyl * (3 * r * r + 4 * h * h) / 12.0
        if self.shape == "capsule":  # two hemispheres, each about the capsule's centre
            m_half = rho * 2.0 / 3.0 * np.pi * r**3
            axial += 2 * m_half * 0.4 * r * r
            lateral += 2 * m_half * (0.4 * r * r + h * h + 0.75 * h * r)
            return m_cyl + 2 * m_half, np.diag([lateral, lateral, axial])
        return m_cyl, np.diag([lateral, lateral, axial])

    def link(self) -> RigidLink:
        """The object as a :class:`~sorogym.RigidLink` on a free joint (a root of the tree)."""
        mass, inertia = self.mass_properties()
        return RigidLink(self.name, mass, (0.0, 0.0, 0.0), inertia, joint=Joint.free(self.position, self.quaternion))

    def surface(self, dtype=None):
        """The shape as a surface in the link frame (an obstacle at the origin)."""
        origin = (0.0, 0.0, 0.0)
        if self.shape == "sphere":
            return SphereObstacle(origin, self.size[0], dtype)
        if self.shape == "box":
            return BoxObstacle(origin, self.size, dtype=dtype)
        r, h = self.size
        if self.shape == "capsule":
            return CapsuleObstacle((0.0, 0.0, -h), (0.0, 0.0, h), r, dtype)
        return CylinderObstacle(origin, (0.0, 0.0, 1.0), r, h, dtype)

    def contact_points(self) -> tuple[np.ndarray, np.ndarray]:
        """``(offsets (K, 3) [m] in the link frame, radii (K,) [m])`` of the points that
        touch other surfaces (module docstring)."""
        if self.shape == "sphere":
            return np.zeros((1, 3)), np.array([self.size[0]])
        if self.shape == "box":
            signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], float)
            return signs * np.asarray(self.size), np.zeros(8)
        r, h = self.size
        if self.shape == "capsule":
            return np.array([[0.0, 0.0, -h], [0.0, 0.0, h]]), np.array([r, r])
        angles = 2 * np.pi * np.arange(_RIM_POINTS) / _RIM_POINTS
        ring = np.stack([r * np.cos(angles), r * np.sin(angles), np.zeros(_RIM_POINTS)], axis=-1)
        rims = np.concatenate([ring + [0.0, 0.0, -h], ring + [0.0, 0.0, h]])
        return rims, np.zeros(2 * _RIM_POINTS)


def probe_object(tree, q, qd, obj: RigidObject) -> Probe:
    """The object's contact points (:meth:`RigidObject.contact_points`) as a :class:`Probe`."""
    offsets, radii = obj.contact_points()
    probe = probe_link(tree, q, qd, obj.name, jnp.asarray(offsets, q.dtype))
    return probe._replace(radii=jnp.asarray(radii, q.dtype))


def object_contact(
    tree, q, qd, obj: RigidObject, law, probe: Probe, anisotropic_axes: bool = True, at_surface: bool = False
):
    """Contact of the probe points (a robot's, or another object's :func:`probe_object`)
    with the object ``obj`` of ``tree`` under ``law``: ``(generalized force (n,), forces on
    the probe points (P, 3) [N] (``-`` of each acts on ``obj``), normal forces (P,) [N],
    depths (P,) [m])`` (module docstring). With ``at_surface`` the force acts on each probe
    at its point of contact (:func:`~sorogym.contact.on_surface`) instead of its centre, so
    friction turns the probe and the couple between the two sides shrinks to the depth."""
    pose, J = tree.pose_and_jacobian(q, 0.0, frame="inertial", body=obj.name)
    R, p = pose[:3, :3], pose[:3, 3]
    local = (probe.positions - p) @ R  # R^T (x - p), (P, 3)
    depth, normal_local = penetration(obj.surface(q.dtype), local, probe.radii)
    normal = normal_local @ R.T
    distance = probe.radii - depth
    arms = probe.positions - p - distance[:, None] * normal  # c - p, the surface point below each probe
    J_c = offset_jacobians(J[3:], J[:3], arms)  # (P, 3, n), the object's material points at c
    if at_surface:
        probe = on_surface(probe, normal)
    relative = probe.velocities - J_c @ qd
    axes = probe.axes if anisotropic_axes else None
    forces, f_n = law.forces(depth, relative, normal, axes)
    tau = jnp.einsum("pcn,pc->n", probe.jacobians - J_c, forces)
    return tau, forces, f_n, depth


def check_separation(tree, q: Float[Array, " nq"], objects, tolerance: float = 1e-4) -> None:
    """Raise ``ValueError`` naming both objects when the contact points of one penetrate
    another by more than ``tolerance`` [m] at the configuration ``q`` (objects placed
    inside each other at the start of a scene)."""
    q = jnp.asarray(q)
    qd = jnp.zeros(tree.num_dofs, q.dtype)
    for a in objects:
        probe = probe_object(tree, q, qd, a)
        for b in objects:
            if a is b:
                continue
            pose = tree.forward_kinematics(q, 0.0, body=b.name)
            local = (probe.positions - pose[:3, 3]) @ pose[:3, :3]
            depth = float(jnp.max(penetration(b.surface(q.dtype), local, probe.radii)[0]))
            if depth > tolerance:
                raise ValueError(
                    f"objects {a.name!r} and {b.name!r}: initially interpenetrating by {depth:.3g} m "
                    f"(tolerance {tolerance:g} m); move them apart"
                )


__all__ = ["SHAPES", "RigidObject", "check_separation", "object_contact", "probe_object"]
