"""Named body trees on a fixed or rail-mounted base: the soft :func:`gripper`, the
:func:`two_arm_platform`, the soft cart-pole :func:`cart_arm` and the cable-driven
:func:`spacer_arm` (conventions and materials: the :mod:`sorogym.robots` docstring and
``_trees.py``).
"""

from __future__ import annotations

import numpy as np

from ..models import MOUNTING_ROTATIONS, BodyTree, Joint, Payload, RigidLink, RodBody
from ._articulated import _non_negative, _pose, _positive
from ._trees import GRAVITY, TendonArm, _count, _rot_z, box_inertia, disc_inertia

GRIPPER_FINGER = TendonArm(
    segment_lengths=(0.05, 0.05),
    radius=0.008,
    young_modulus=6e5,
    tendon_offset=0.006,
    tendon_angles_deg=(270.0, 90.0),
)
GRIPPER_PALM = {"radius": 0.04, "thickness": 0.02, "mass": 0.12}  # m, m, kg


def gripper(
    num_fingers: int = 3,
    finger: TendonArm = GRIPPER_FINGER,
    wrist: str = "revolute",
    wrist_damping: float = 0.005,
    height: float = 0.3,
    palm_radius: float = GRIPPER_PALM["radius"],
    palm_thickness: float = GRIPPER_PALM["thickness"],
    palm_mass: float = GRIPPER_PALM["mass"],
    extra_bodies=(),
    dtype=None,
) -> BodyTree:
    """A soft gripper: a rigid palm disc (radius 40 mm, thickness 20 mm, 120 g) hanging
    level from a fixed wrist at ``(0, 0, height)`` [m], with ``num_fingers`` identical soft
    fingers (:data:`GRIPPER_FINGER`: two 50 mm segments of radius 8 mm, ``E`` 0.6 MPa,
    bending only) pointing down (world -z) from the rim of the palm's underside, evenly
    spaced (finger ``k`` at the angle ``2 pi k / num_fingers`` from world +x).

    ``wrist="revolute"``: the palm turns about world z (``q_0`` [rad], damper
    ``wrist_damping`` [N m s/rad], no spring) driven by a torque motor, the last input;
    ``"fixed"``: the palm is rigidly mounted. ``n = nq = 4 num_fingers (+ 1)``,
    ``m = 2 num_fingers (+ 1)``. Palm frame: the wrist, at the centre of the palm's top
    face, local z up. Finger frames: local x down, local z radially outwards. Tendons per
    finger (offset 6 mm): 0 on the inner side (closes the finger towards the axis), 1 on the
    outer side (opens it). ``extra_bodies``: more bodies of the tree, declared after the
    fingers, e.g. an object to grasp (``RigidObject(...).link()`` of :mod:`sorogym.contact`).
    """
    n_fingers = _count("num_fingers", num_fingers)
    if wrist not in ("revolute", "fixed"):
        raise ValueError(f"wrist: unknown {wrist!r}; use 'revolute' or 'fixed'")
    R, t = _positive("palm_radius", palm_radius), _positive("palm_thickness", palm_thickness)
    m = _positive("palm_mass", palm_mass)
    joint = Joint.revolute((0.0, 0.0, 1.0), damping=_non_negative("wrist_damping", wrist_damping))
    palm = RigidLink(
        "palm",
        mass=m,
        com=(0.0, 0.0, -0.5 * t),
        inertia=disc_inertia(m, R, t),
        joint=joint if wrist == "revolute" else Joint.fixed(),
        offset=_pose(translation=(0.0, 0.0, _positive("height", height))),
    )
    rod = finger.pcs(dtype)
    fingers = []
    for k in range(n_fingers):
        Rz = _rot_z(2.0 * np.pi * k / n_fingers)
        offset = _pose(Rz @ MOUNTING_ROTATIONS["hanging"], Rz @ (R - finger.radius, 0.0, -t))
        fingers.append(RodBody(f"finger{k}", rod, parent="palm", offset=offset))
    motors = [("palm", 0)] if wrist == "revolute" else []
    return BodyTree([palm, *fingers, *extra_bodies], gravity=GRAVITY, motors=motors, dtype=dtype)


PLATFORM_ARM = TendonArm(segment_lengths=(0.1, 0.1), radius=0.012, young_modulus=1e6, tendon_offset=0.009)
PLATFORM_SIZE = (0.3, 0.2, 0.03)  # m, edge lengths along x, y, z


def _slider(name: str, mass: float, size, base: str, height: float, damping: float) -> RigidLink:
    """A rigid box (frame at its top face's centre) on a fixed or x-prismatic base."""
    if base not in ("fixed", "prismatic"):
        raise ValueError(f"base: unknown {base!r}; use 'fixed' or 'prismatic'")
    joint = Joint.prismatic((1.0, 0.0, 0.0), damping=_non_negative("rail_damping", damping))
    return RigidLink(
        name,
        mass=_positive(f"{name}_mass", mass),
        com=(0.0, 0.0, -0.5 * size[2]),
        inertia=box_inertia(mass, size),
        joint=joint if base == "prismatic" else Joint.fixed(),
        offset=_pose(translation=(0.0, 0.0, _positive("height", height))),
    )


def two_arm_platform(
    arm: TendonArm = PLATFORM_ARM,
    base: str = "prismatic",
    arm_spacing: float = 0.12,
    platform_size=PLATFORM_SIZE,
    platform_mass: float = 0.8,
    height: float = 0.05,
    rail_damping: float = 2.0,
    dtype=None,
) -> BodyTree:
    """Two identical upright soft arms (:data:`PLATFORM_ARM`: two 100 mm segments of radius
    12 mm, ``E`` 1 MPa, bending only, 97 g each) on a rigid platform (a box of
    ``platform_size`` 0.3 x 0.2 x 0.03 m, 0.8 kg) whose top face is ``height`` [m] above the
    ground. The arms stand on the top face at ``y = +/- arm_spacing / 2`` [m] (bodies
    ``"left"``, ``"right"``).

    ``base="prismatic"``: the platform slides along world x on a rail (``q_0`` [m], damper
    ``rail_damping`` [N s/m]) pushed by a force motor [N], the last input (``n = nq = 9``,
    ``m = 9``); ``"fixed"``: it is fixed (``n = 8``, ``m = 8``). Platform frame: top-face centre,
    axes along the world's. Arm frames: local x up, local z along world -x. Tendons per arm
    (offset 9 mm): 0 at +y (bends the arm towards +y), 1 at world -x, 2 at -y, 3 at +x.
    """
    spacing = _positive("arm_spacing", arm_spacing)
    size = tuple(_positive("platform_size", v) for v in platform_size)
    platform = _slider("platform", platform_mass, size, base, height, rail_damping)
    rod = arm.pcs(dtype)
    upright = MOUNTING_ROTATIONS["upright"]
    sides = (("left", 0.5 * spacing), ("right", -0.5 * spacing))
    arms = [RodBody(name, rod, parent="platform", offset=_pose(upright, (0.0, y, 0.0))) for name, y in sides]
    motors = [("platform", 0)] if base == "prismatic" else []
    return BodyTree([platform, *arms], gravity=GRAVITY, motors=motors, dtype=dtype)


CART_ARM = TendonArm(segment_lengths=(0.08, 0.08), radius=0.01, young_modulus=1e6, tendon_offset=0.007)
CART_SIZE = (0.16, 0.12, 0.05)  # m


def cart_arm(
    arm: TendonArm = CART_ARM,
    cart_size=CART_SIZE,
    cart_mass: float = 0.5,
    rail_damping: float = 1.0,
    dtype=None,
) -> BodyTree:
    """A soft cart-pole: an upright soft arm (:data:`CART_ARM`: two 80 mm segments of radius
    10 mm, ``E`` 1 MPa, bending only, 54 g) standing on a rigid cart (a box of ``cart_size``
    0.16 x 0.12 x 0.05 m, 0.5 kg, resting on the ground) that slides along world x
    (``q_0`` [m], damper ``rail_damping`` [N s/m]), pushed by a force motor.
    ``n = nq = 5``, ``m = 4 + 1`` (tendons, then the cart force [N]).

    Bodies ``"cart"`` (frame at the top face's centre) and ``"arm"`` (local x up, local z
    along world -x). Tendons (offset 7 mm): 0 at +y, 1 at world -x, 2 at -y, 3 at +x.
    """
    size = tuple(_positive("cart_size", v) for v in cart_size)
    cart = _slider("cart", cart_mass, size, "prismatic", size[2], rail_damping)
    pole = RodBody("arm", arm.pcs(dtype), parent="cart", offset=_pose(MOUNTING_ROTATIONS["upright"]))
    return BodyTree([cart, pole], gravity=GRAVITY, motors=[("cart", 0)], dtype=dtype)


SPACER_SECTION = TendonArm(
    segment_lengths=(0.08,),
    radius=0.006,
    young_modulus=1e6,
    viscosity=1e4,
    tendon_offset=0.012,
    tendon_angles_deg=(0.0, 120.0, 240.0),
)
SPACER_DISC = {"radius": 0.016, "thickness": 0.004, "mass": 0.006}  # m, m, kg


def spacer_arm(
    num_sections: int = 3,
    section: TendonArm = SPACER_SECTION,
    spacer_radius: float = SPACER_DISC["radius"],
    spacer_thickness: float = SPACER_DISC["thickness"],
    spacer_mass: float = SPACER_DISC["mass"],
    tip_mass: float = 0.0,
    height: float = 0.4,
    dtype=None,
) -> BodyTree:
    """A cable-driven continuum arm hanging from a fixed base at ``(0, 0, height)`` [m]:
    ``num_sections`` soft sections (:data:`SPACER_SECTION`: one 80 mm constant-curvature
    segment, a silicone core of radius 6 mm, ``E`` 1 MPa), each followed by a rigid spacer
    disc (radius 16 mm, 4 mm thick, 6 g; a thin plate at the section's tip, fixed to it).
    Bodies: ``"section0"``, ``"spacer0"``, ``"section1"``, ... (section ``k + 1`` starts on
    spacer ``k``). ``n = nq = 2 num_sections``, ``m = 3 num_sections``.

    Cables: three per section at 12 mm from the backbone (through the spacers' holes, outside
    the core), 120 deg apart, each anchored on the section's own base and tip spacer (the
    sections are actuated independently; a cable that ends further out would also bend the
    proximal sections, which the rod bodies' own actuators cannot express). Frames: every
    section's and spacer's local x axis along the backbone (world -z when straight).
    ``tip_mass`` [kg] > 0 adds a point load 10 mm beyond the last spacer, on the backbone axis.
    """
    n = _count("num_sections", num_sections)
    r, t = _positive("spacer_radius", spacer_radius), _positive("spacer_thickness", spacer_thickness)
    m, z0 = _positive("spacer_mass", spacer_mass), _positive("height", height)
    rod = section.pcs(dtype)
    # spacer inertia: a disc whose axis is the backbone (local x)
    I_disc = disc_inertia(m, r, t)[[2, 0, 1]][:, [2, 0, 1]]
    bodies = []
    for k in range(n):
        if k == 0:  # hanging from the base
            parent, offset = None, _pose(MOUNTING_ROTATIONS["hanging"], (0.0, 0.0, z0))
        else:  # on the far face of the previous spacer
            parent, offset = f"spacer{k - 1}", _pose(translation=(t, 0.0, 0.0))
        bodies.append(RodBody(f"section{k}", rod, parent=parent, offset=offset))
        spacer = RigidLink(f"spacer{k}", m, (0.5 * t, 0.0, 0.0), I_disc, parent=f"section{k}", at=section.length)
        bodies.append(spacer)
    payloads = []
    if _non_negative("tip_mass", tip_mass) > 0:
        payloads.append(Payload(f"spacer{n - 1}", float(tip_mass), position=(t + 0.01, 0.0, 0.0)))
    return BodyTree(bodies, gravity=GRAVITY, payloads=payloads, tip=f"spacer{n - 1}", dtype=dtype)


__all__ = [
    "gripper",
    "two_arm_platform",
    "cart_arm",
    "spacer_arm",
    "GRIPPER_FINGER",
    "GRIPPER_PALM",
    "PLATFORM_ARM",
    "PLATFORM_SIZE",
    "CART_ARM",
    "CART_SIZE",
    "SPACER_SECTION",
    "SPACER_DISC",
]
