"""Rigid-soft composites of the Lie-group framework's case studies, on the body tree.

* :func:`cable_driven_arm`: a tapered soft rod cut into sections by rigid triangular plates,
  with three cables through the plates' vertices (its Table 6, Figs. 19-20).
"""

from __future__ import annotations

import numpy as np

from ..models import GVS, MOUNTING_ROTATIONS, BodyTree, Cable, GVSParams, RigidLink, RodBody, StrainBasis
from ._articulated import _pose, _positive
from ._trees import _count

#: Table 6 of the source: the tapered rod of the cable-driven arm.
CABLE_ARM_ROD = {
    "length": 1.0,  # m
    "base_radius": 0.04,  # m
    "tip_radius": 0.02,  # m
    "young_modulus": 1.0e6,  # Pa
    "poisson_ratio": 0.45,
    "viscosity": 10.0,  # Pa s
}
#: Not in the source (it gives no plate or material density): a silicone rod and 5 mm
#: acrylic-like triangular plates whose vertices sit 1.5 base radii from the backbone.
CABLE_ARM_PLATE = {"circumradius": 0.06, "thickness": 0.005, "mass": 0.03}  # m, m, kg
CABLE_ARM_DENSITY = 1070.0  # kg/m^3
#: The three cables' angles [deg] in the plates, from the plate's local y axis towards z.
CABLE_ARM_CABLE_ANGLES = (90.0, 210.0, 330.0)


def triangle_plate_inertia(mass: float, circumradius: float, thickness: float) -> np.ndarray:
    """``(3, 3)`` inertia [kg m^2] of a uniform equilateral triangular plate about its
    centroid, its normal along local x: ``m R^2 / 4`` about the normal and ``m R^2 / 8``
    (plus the thickness term ``m t^2 / 12``) about any in-plane axis (``R`` the
    circumradius, side ``R sqrt 3``)."""
    normal = mass * circumradius**2 / 4.0
    in_plane = mass * circumradius**2 / 8.0 + mass * thickness**2 / 12.0
    return np.diag([normal, in_plane, in_plane])


def cable_driven_arm(
    num_sections: int = 5,
    length: float = CABLE_ARM_ROD["length"],
    base_radius: float = CABLE_ARM_ROD["base_radius"],
    tip_radius: float = CABLE_ARM_ROD["tip_radius"],
    young_modulus: float = CABLE_ARM_ROD["young_modulus"],
    poisson_ratio: float = CABLE_ARM_ROD["poisson_ratio"],
    viscosity: float = CABLE_ARM_ROD["viscosity"],
    density: float = CABLE_ARM_DENSITY,
    plate_circumradius: float = CABLE_ARM_PLATE["circumradius"],
    plate_thickness: float = CABLE_ARM_PLATE["thickness"],
    plate_mass: float = CABLE_ARM_PLATE["mass"],
    bending_order: int = 1,
    gravity=(0.0, 0.0, -9.81),
    mounting: str = "hanging",
    dtype=None,
) -> BodyTree:
    """The cable-driven soft manipulator of the source's Table 6 (Figs. 19-20).

    A tapered soft rod (``length`` 1 m, radius 4 cm at the base to 2 cm at the tip, ``E``
    1 MPa, Poisson's ratio 0.45, Kelvin-Voigt viscosity 10 Pa s) cut into
    ``num_sections`` equal sections; each section is a one-link :class:`~sorogym.models.GVS`
    rod (bending polynomial of ``bending_order`` in both directions, constant torsion and
    elongation, no shear: ``n = 2 (bending_order + 1) + 2`` per section) ending on a rigid
    equilateral triangular plate (``plate_circumradius`` 6 cm, 5 mm thick, 30 g; not in the
    source), on which the next section starts. The rod's radius decreases linearly along
    the whole arm. Bodies: ``"section0"``, ``"plate0"``, ``"section1"``, ... (local x along
    the backbone).

    Three cables (``"cable0"`` ... ``"cable2"``) run parallel to the straight backbone
    through the plates' vertices at :data:`CABLE_ARM_CABLE_ANGLES` (``plate_circumradius``
    from the axis), from the base plate (fixed to the world at the mount) to the last plate:
    between adjacent plates each spans a straight line, pulling their vertices together
    (:class:`~sorogym.models.Cable`). Inputs ``u`` ``(3,)``: the cable tensions [N] (pull
    only). ``mounting``: the base frame as for the rods (``"hanging"``: backbone along
    world -z from the origin; ``"horizontal"``: along world +x); ``gravity`` [m/s^2] in the
    world frame (the source does not say; ``(0, 0, 0)`` for its shape study).
    """
    n_sections = _count("num_sections", num_sections)
    L = _positive("length", length)
    r0, r1 = _positive("base_radius", base_radius), _positive("tip_radius", tip_radius)
    R_plate, t = _positive("plate_circumradius", plate_circumradius), _positive("plate_thickness", plate_thickness)
    m_plate = _positive("plate_mass", plate_mass)
    if R_plate <= max(r0, r1):
        raise ValueError(f"plate_circumradius: {R_plate} m must exceed the rod's radius {max(r0, r1)} m (cable holes)")
    if mounting not in MOUNTING_ROTATIONS:
        raise ValueError(f"mounting: unknown {mounting!r}; use one of {tuple(MOUNTING_ROTATIONS)}")
    if not (isinstance(bending_order, (int, np.integer)) and bending_order >= 0):
        raise ValueError(f"bending_order: must be an integer >= 0, got {bending_order!r}")
    order = int(bending_order)
    basis = StrainBasis.create(("kx", "ky", "kz", "sx"), {"ky": order, "kz": order})
    ell = L / n_sections
    radii = r0 + (r1 - r0) * np.arange(n_sections + 1) / n_sections
    inertia = triangle_plate_inertia(m_plate, R_plate, t)
    bodies = []
    for k in range(n_sections):
        params = GVSParams.create(
            length=[ell],
            radius=[radii[k]],
            tip_radius=[radii[k + 1]],
            density=_positive("density", density),
            young_modulus=_positive("young_modulus", young_modulus),
            poisson_ratio=poisson_ratio,
            damping=viscosity,
            mounting="horizontal",
            dtype=dtype,
        )
        parent, offset = (
            (None, _pose(MOUNTING_ROTATIONS[mounting]))
            if k == 0
            else (f"plate{k - 1}", _pose(translation=(t, 0.0, 0.0)))
        )
        bodies.append(RodBody(f"section{k}", GVS(params, basis), parent=parent, offset=offset, actuated=False))
        bodies.append(RigidLink(f"plate{k}", m_plate, (0.5 * t, 0.0, 0.0), inertia, parent=f"section{k}", at=ell))
    angles = np.deg2rad(np.asarray(CABLE_ARM_CABLE_ANGLES))
    vertices = [np.array([0.0, R_plate * np.cos(a), R_plate * np.sin(a)]) for a in angles]
    base = MOUNTING_ROTATIONS[mounting]
    cables = []
    for c, v in enumerate(vertices):
        via = [(None, None, base @ v)]  # the base plate, fixed to the world at the mount
        via += [(f"plate{k}", None, v + np.array([0.5 * t, 0.0, 0.0])) for k in range(n_sections)]
        cables.append(Cable(via, name=f"cable{c}"))
    return BodyTree(bodies, gravity=gravity, tip=f"plate{n_sections - 1}", cables=cables, dtype=dtype)


__all__ = [
    "cable_driven_arm",
    "triangle_plate_inertia",
    "CABLE_ARM_ROD",
    "CABLE_ARM_PLATE",
    "CABLE_ARM_DENSITY",
    "CABLE_ARM_CABLE_ANGLES",
]
