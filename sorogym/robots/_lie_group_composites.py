"""Rigid-soft composites of the Lie-group framework's case studies, on the body tree.

* :func:`cable_driven_arm`: a tapered soft rod cut into sections by rigid triangular plates,
  with three cables through the plates' vertices (its Table 6, Figs. 19-20).
* :func:`cable_driven_finger`: rigid bones joined by leaf-spring soft joints whose natural
  shape is a cubic B-spline of five control points, flexed and extended by two cables
  through the bones (its Table 9, Figs. 28-30).
"""

from __future__ import annotations

import numpy as np
from scipy.interpolate import BSpline

from ..models import GVS, MOUNTING_ROTATIONS, BodyTree, Cable, GVSParams, RigidLink, RodBody, StrainBasis
from ..models._gvs_basis import clamped_knots
from ._articulated import _pose, _positive
from ._trees import _count, box_inertia

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


def _bending_order(value) -> int:
    if not (isinstance(value, (int, np.integer)) and value >= 0):
        raise ValueError(f"bending_order: must be an integer >= 0, got {value!r}")
    return int(value)


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
    order = _bending_order(bending_order)
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


#: Table 9 of the source: the soft joints' rectangular section and modulus. The rest is
#: not in the source: a stiff polymer (Poisson's ratio 0.4, 1300 kg/m^3) and a little
#: Kelvin-Voigt viscosity.
FINGER_JOINT = {
    "thickness": 1.0e-3,  # m, along the joint's local z (the flexion direction)
    "width": 20.0e-3,  # m, along local y
    "young_modulus": 5.0e9,  # Pa
    "poisson_ratio": 0.4,
    "density": 1300.0,  # kg/m^3
    "viscosity": 1.0e3,  # Pa s
}
#: The two natural shapes of the soft joints (Fig. 30's labels 1 and 2), as the five
#: control points [m] of a clamped uniform cubic B-spline in the joint's x-z plane, starting
#: at the parent bone's end along its axis. The source does not list its control points:
#: shape 1 is straight (16 mm), shape 2 curls towards the palm (-z) by about 34 degrees.
FINGER_JOINT_SHAPES = {
    1: ((0.0, 0.0), (4.0e-3, 0.0), (8.0e-3, 0.0), (12.0e-3, 0.0), (16.0e-3, 0.0)),
    2: ((0.0, 0.0), (4.0e-3, 0.0), (8.0e-3, -0.8e-3), (11.7e-3, -2.4e-3), (15.0e-3, -4.6e-3)),
}
#: Not in the source: bones of a human index finger's proportions (proximal, middle,
#: distal phalanx) as PLA-like boxes 20 mm wide and 12 mm high.
FINGER_BONE_LENGTHS = (0.040, 0.025, 0.020)  # m
FINGER_BONE_SECTION = (0.020, 0.012)  # m: width (local y), height (local z)
FINGER_BONE_DENSITY = 1240.0  # kg/m^3
#: Distance [m] of the two cables from the joints' neutral plane: the flexor on the palmar
#: side (-z), the extensor on the dorsal side (+z).
FINGER_CABLE_OFFSET = 0.005


def joint_natural_shape(control_points, num_links: int, samples: int = 2001) -> dict:
    """The natural shape of a soft joint from the five control points ``(5, 2)`` [m] (x along
    the parent bone, z towards the back of the finger) of a clamped uniform cubic B-spline:
    ``length`` [m] (its arc length), ``start_angle`` [rad] (of the first tangent from x
    towards z) and ``curvature`` ``(num_links,)`` [1/m]: the rest bending strain ``ky`` of
    ``num_links`` links of equal arc length, each turning the frame by the curve's exact
    tangent turn over its span (``ky > 0`` turns x towards -z), so link ends keep the
    spline's tangents. ``curve`` ``(samples, 2)`` [m], ``arc_length`` ``(samples,)`` [m] and
    ``tangent_angle`` ``(samples,)`` [rad] sample the curve at uniform spline parameters."""
    P = np.asarray(control_points, dtype=float)
    if P.shape != (5, 2) or not np.all(np.isfinite(P)):
        raise ValueError(f"joint_shapes: expected five finite (x, z) control points, got shape {P.shape}")
    spline = BSpline(clamped_knots(5, 3), P, 3)
    u = np.linspace(0.0, 1.0, samples)
    curve, tangent = spline(u), spline.derivative()(u)
    speed = np.linalg.norm(tangent, axis=1)
    if np.min(speed) < 1e-9 * max(np.max(speed), 1e-300):
        raise ValueError("joint_shapes: the control points give a curve with a cusp (repeated points)")
    s = np.concatenate([[0.0], np.cumsum(0.5 * (speed[1:] + speed[:-1]) * np.diff(u))])
    angle = np.unwrap(np.arctan2(tangent[:, 1], tangent[:, 0]))
    ends = np.interp(np.linspace(0.0, s[-1], num_links + 1), s, angle)
    ell = s[-1] / num_links
    return dict(
        length=s[-1],
        start_angle=angle[0],
        curvature=-np.diff(ends) / ell,
        curve=curve,
        arc_length=s,
        tangent_angle=angle,
    )


def cable_driven_finger(
    joint_shapes=(1, 1, 1),
    bone_lengths=FINGER_BONE_LENGTHS,
    thickness: float = FINGER_JOINT["thickness"],
    width: float = FINGER_JOINT["width"],
    young_modulus: float = FINGER_JOINT["young_modulus"],
    poisson_ratio: float = FINGER_JOINT["poisson_ratio"],
    density: float = FINGER_JOINT["density"],
    viscosity: float = FINGER_JOINT["viscosity"],
    cable_offset: float = FINGER_CABLE_OFFSET,
    links_per_joint: int = 4,
    bending_order: int = 1,
    gravity=(0.0, 0.0, -9.81),
    dtype=None,
) -> BodyTree:
    """The cable-driven finger of the source's Table 9 (Figs. 28-30): rigid bones joined by
    soft joints, flexed by cables.

    Bodies, from the base (the world origin, finger along world +x, palm towards -z):
    ``"joint0"``, ``"bone0"``, ``"joint1"``, ``"bone1"``, ... Each soft joint is a GVS leaf
    spring of rectangular section (``thickness`` 1 mm along its local z, ``width`` 20 mm,
    ``E`` 5 GPa: Table 9) whose natural shape is a cubic B-spline of five control points
    (:func:`joint_natural_shape`): ``joint_shapes`` gives, per joint, a key of
    :data:`FINGER_JOINT_SHAPES` (1 straight, 2 curled) or five ``(x, z)`` control points [m].
    A joint is ``links_per_joint`` links of equal arc length, each with the rest curvature
    of its span of the spline, bending in both directions with polynomials of
    ``bending_order`` and constant torsion (``n = links_per_joint (2 bending_order + 3)``
    per joint; the leaf is inextensible and unsheared). Each bone is a
    rigid box (:data:`FINGER_BONE_SECTION`, :data:`FINGER_BONE_DENSITY`) of
    ``bone_lengths`` [m] starting at its joint's end, along the joint's end tangent; the
    next joint starts at the bone's far end.

    Two cables run through holes in the bones at ``cable_offset`` [m] from the joints'
    neutral plane, from the base to the last bone's tip, straight across every joint:
    ``"flexor"`` on the palmar side (-z; pulling curls the finger) and ``"extensor"`` on the
    back (+z). Inputs ``u`` ``(2,)``: their tensions [N] (pull only). The fingertip is
    ``(bone_lengths[-1], 0, 0)`` in the last bone's frame (``tree.tip`` is that bone).
    """
    shapes = tuple(joint_shapes)
    if not shapes:
        raise ValueError("joint_shapes: at least one joint")
    bones = tuple(_positive("bone_lengths", b) for b in bone_lengths)
    if len(bones) != len(shapes):
        raise ValueError(f"bone_lengths: expected one per joint ({len(shapes)}), got {len(bones)}")
    t, w = _positive("thickness", thickness), _positive("width", width)
    d = _positive("cable_offset", cable_offset)
    bone_width, bone_height = FINGER_BONE_SECTION
    if not (0.5 * t < d < 0.5 * bone_height):
        raise ValueError(
            f"cable_offset: {d} m must lie between the joint's half thickness {0.5 * t} m and the bone's "
            f"half height {0.5 * bone_height} m (the cable runs through the bones)"
        )
    links = _count("links_per_joint", links_per_joint)
    order = _bending_order(bending_order)
    basis = StrainBasis.create(("kx", "ky", "kz"), {"ky": order, "kz": order})
    bodies = []
    for k, shape in enumerate(shapes):
        points = shape if isinstance(shape, (tuple, list, np.ndarray)) else FINGER_JOINT_SHAPES.get(shape)
        if points is None:
            raise ValueError(
                f"joint_shapes[{k}]: unknown shape {shape!r}; use one of {tuple(FINGER_JOINT_SHAPES)} or five "
                "(x, z) control points"
            )
        natural = joint_natural_shape(points, links)
        reference = np.zeros((links, 6))
        reference[:, 1], reference[:, 3] = natural["curvature"], 1.0
        params = GVSParams.create(
            length=np.full(links, natural["length"] / links),
            radius=0.5 * t,
            width=w,
            thickness=t,
            density=_positive("density", density),
            young_modulus=_positive("young_modulus", young_modulus),
            poisson_ratio=poisson_ratio,
            damping=viscosity,
            reference_strain=reference,
            mounting="horizontal",
            dtype=dtype,
        )
        turn = _pose(_rotation_about_y(-natural["start_angle"]))
        if k == 0:
            parent, offset = None, turn
        else:
            parent, offset = f"bone{k - 1}", _pose(translation=(bones[k - 1], 0.0, 0.0)) @ turn
        bodies.append(RodBody(f"joint{k}", GVS(params, basis), parent=parent, offset=offset, actuated=False))
        mass = FINGER_BONE_DENSITY * bones[k] * bone_width * bone_height
        inertia = box_inertia(mass, (bones[k], bone_width, bone_height))
        bodies.append(
            RigidLink(f"bone{k}", mass, (0.5 * bones[k], 0.0, 0.0), inertia, parent=f"joint{k}", at=natural["length"])
        )
    cables = []
    for name, side in (("flexor", -1.0), ("extensor", 1.0)):
        hole = np.array([0.0, 0.0, side * d])
        via = [(None, None, hole)]
        for k, length in enumerate(bones):
            via += [(f"bone{k}", None, hole), (f"bone{k}", None, hole + np.array([length, 0.0, 0.0]))]
        cables.append(Cable(via, name=name))
    return BodyTree(bodies, gravity=gravity, tip=f"bone{len(shapes) - 1}", cables=cables, dtype=dtype)


def _rotation_about_y(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


__all__ = [
    "cable_driven_arm",
    "cable_driven_finger",
    "joint_natural_shape",
    "FINGER_JOINT",
    "FINGER_JOINT_SHAPES",
    "FINGER_BONE_LENGTHS",
    "FINGER_BONE_SECTION",
    "FINGER_BONE_DENSITY",
    "FINGER_CABLE_OFFSET",
    "triangle_plate_inertia",
    "CABLE_ARM_ROD",
    "CABLE_ARM_PLATE",
    "CABLE_ARM_DENSITY",
    "CABLE_ARM_CABLE_ANGLES",
]
