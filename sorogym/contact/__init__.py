"""Contact between robots and their surroundings (world frame, SI units).

* :class:`ContactLaw` (``_laws.py``): compliant normal force and regularised, optionally
  anisotropic Coulomb friction per contact point.
* :class:`GroundPlane`, :class:`Heightfield` (:func:`terrain`), sphere, box, capsule and
  cylinder obstacles (``_geometry.py``): static surfaces by signed distance and normal.
* :func:`probe_model`, :func:`probe_bodies`, :func:`probe_link`, :func:`surface_contact`
  (``_ground.py``): probe points of a rod, of tree bodies or of a link against a surface,
  point forces as generalized forces.
* :class:`ResistiveForceTheory`, :class:`MorisonDrag`, :class:`Buoyancy`,
  :func:`fluid_force`, :func:`added_mass_matrix` (``_fluids.py``): fluid forces per unit
  length on a rod's backbone (viscous and quadratic drag in a uniform current, buoyancy)
  and the added-mass matrix.
* Below: frictionless sphere obstacles on a spatial rod (the contact-safe reaching task).

Obstacles are spheres (centres ``(k, 3)`` [m], radii ``(k,)`` [m]). The robot is probed
at ``P`` backbone points ``s_ps`` with its cross-section radius there, so a clearance is the
gap between the robot's surface and an obstacle's surface:

    d_ij = |p(s_i) - c_j| - (r_j + r_robot(s_i))          (negative: penetration)

Penalty contact (stiffness ``k`` [N/m]): obstacle ``j`` pushes on the robot with a force of
magnitude ``F_j = k * max_i max(-d_ij, 0)`` (the deepest penetration, the contact-force
proxy of the SoRoMoX safety case study), distributed over the penetrating points in
proportion to their penetration and directed along the outward normals
``(p_i - c_j) / |p_i - c_j|``. The resultant magnitude does not depend on how densely the
backbone is sampled. The point forces act on the robot as external forces through the
linear rows of the inertial-frame Jacobians: ``tau_ext = sum_i J_v(s_i)^T f_i``.
"""

from __future__ import annotations

import jax.numpy as jnp
from jaxtyping import Array, Float

from ._fluids import Buoyancy, MorisonDrag, ResistiveForceTheory, added_mass_matrix, backbone_quadrature, fluid_force
from ._geometry import (
    TERRAINS,
    BoxObstacle,
    CapsuleObstacle,
    CylinderObstacle,
    GroundPlane,
    Heightfield,
    SphereObstacle,
    penetration,
    terrain,
)
from ._ground import (
    Probe,
    cross_section_radius,
    generalized_force,
    probe_bodies,
    probe_link,
    probe_model,
    surface_contact,
)
from ._laws import ContactLaw

_TINY = 1e-12


def sphere_clearances(
    points: Float[Array, "P 3"],
    robot_radius: Float[Array, " P"],
    centers: Float[Array, "k 3"],
    radii: Float[Array, " k"],
) -> Float[Array, "P k"]:
    """Surface-to-surface clearances ``d_ij`` [m] (negative when penetrating)."""
    diff = points[:, None, :] - centers[None, :, :]
    dist = jnp.sqrt(jnp.sum(diff**2, axis=-1) + _TINY**2)
    return dist - (radii[None, :] + robot_radius[:, None])


def penalty_contact_forces(points, robot_radius, centers, radii, stiffness) -> tuple[Array, Array, Array]:
    """Point forces on the backbone ``(P, 3)`` [N], per-obstacle force magnitudes ``(k,)``
    [N] and the clearances ``(P, k)`` [m] (see module docstring)."""
    d = sphere_clearances(points, robot_radius, centers, radii)
    pen = jnp.maximum(-d, 0.0)
    magnitude = stiffness * jnp.max(pen, axis=0)  # (k,)
    share = pen / jnp.maximum(jnp.sum(pen, axis=0, keepdims=True), _TINY)  # (P, k)
    diff = points[:, None, :] - centers[None, :, :]
    normal = diff / jnp.sqrt(jnp.sum(diff**2, axis=-1, keepdims=True) + _TINY**2)
    forces = jnp.einsum("pk,k,pkc->pc", share, magnitude, normal)
    return forces, magnitude, d


def backbone_probe(model, q, s_ps) -> tuple[Array, Array, Array]:
    """World positions ``(P, 3)``, cross-section radii ``(P,)`` and inertial Jacobians
    ``(P, 6, n)`` of the backbone points ``s_ps`` of a spatial PCS model."""
    J = model.jacobian_batched(q, s_ps, frame="inertial")
    pts = model.backbone_positions(q, s_ps)
    seg = model.locate(jnp.asarray(s_ps, q.dtype))[0]
    return pts, model.params.radius[seg], J


def contact_generalized_force(model, q, s_ps, centers, radii, stiffness) -> tuple[Array, Array, Array]:
    """``(tau_ext (n,), per-obstacle force magnitudes (k,), clearances (P, k))`` of penalty
    contact between the spheres and the robot probed at ``s_ps``."""
    pts, r, J = backbone_probe(model, q, s_ps)
    forces, magnitude, d = penalty_contact_forces(pts, r, centers, radii, stiffness)
    tau = jnp.einsum("pcn,pc->n", J[:, 3:, :], forces)
    return tau, magnitude, d


__all__ = [
    "TERRAINS",
    "BoxObstacle",
    "Buoyancy",
    "CapsuleObstacle",
    "ContactLaw",
    "CylinderObstacle",
    "GroundPlane",
    "Heightfield",
    "MorisonDrag",
    "Probe",
    "ResistiveForceTheory",
    "SphereObstacle",
    "added_mass_matrix",
    "backbone_probe",
    "backbone_quadrature",
    "contact_generalized_force",
    "cross_section_radius",
    "fluid_force",
    "generalized_force",
    "penalty_contact_forces",
    "penetration",
    "probe_bodies",
    "probe_link",
    "probe_model",
    "sphere_clearances",
    "surface_contact",
    "terrain",
]
