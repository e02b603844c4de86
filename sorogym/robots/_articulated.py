"""Named articulated soft robots: the soft pendulum and a UMArm-like McKibben arm.

* :func:`soft_pendulum`: a soft rod hanging from a free pivot, discretised into rigid links
  joined by elastic joints; swings in the world x-z plane.
* :func:`umarm`: a serial chain of universal-joint modules, each bent by four McKibben
  muscles, after the UMArm of Zuo, Han, Li, Jamal and Bruder ("UMArm: Untethered, Modular,
  Portable, Soft Pneumatic Arm", arXiv:2505.11476).

Both are :class:`~sorogym.models.ArticulatedSoftRobot` instances: every model query
(dynamics, Jacobians, statics, integrators) works on them unchanged. Frames: the link
frames' local x axis runs along the body (the backbone convention of the rod models), and
the named mountings put it along world -z (``"hanging"``) or +z (``"upright"``).
"""

from __future__ import annotations

import math

import numpy as np
from jaxtyping import Array, Float

from ..actuation import ArticulatedTendons, GeneralizedActuation, McKibbenMuscles
from ..models import MOUNTING_ROTATIONS, ArticulatedSoftRobot, ChainParams

# -- soft pendulum ----------------------------------------------------------------------

SILICONE_YOUNG_MODULUS = 1.0e6  # Pa, a soft silicone rubber (the default pendulum's material)
SILICONE_RETARDATION_TIME = 5.0e-3  # s, Kelvin-Voigt d = tau k of the default joint dampers
# Torque bound [N m] for the default pendulum's inputs (module docstring of soft_pendulum:
# 0.44 of the largest torque a quasi-static lift needs, 1.13 N m: reaching upright takes pumping).
SOFT_PENDULUM_MAX_TORQUE = 0.5
SOFT_PENDULUM_ACTUATIONS = ("base_torque", "tendons", "joint_torques")


def _positive(name: str, value) -> float:
    value = float(value)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name}: must be positive and finite, got {value}")
    return value


def _non_negative(name: str, value) -> float:
    value = float(value)
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"{name}: must be >= 0 and finite, got {value}")
    return value


def _pose(rotation=None, translation=(0.0, 0.0, 0.0)) -> np.ndarray:
    T = np.eye(4)
    if rotation is not None:
        T[:3, :3] = rotation
    T[:3, 3] = translation
    return T


def _cylinder_inertia(mass: float, radius: float, length: float) -> np.ndarray:
    """Solid cylinder along the local x axis, about its centre [kg m^2]."""
    transverse = mass * (3.0 * radius**2 + length**2) / 12.0
    return np.diag([0.5 * mass * radius**2, transverse, transverse])


def soft_pendulum_rod_stiffness(
    num_links: int = 4, length: float = 0.5, radius: float = 0.02, young_modulus: float = SILICONE_YOUNG_MODULUS
) -> float:
    """Joint stiffness [N m/rad] that lumps the bending stiffness of a solid rod into
    ``num_links`` links: ``E I / (L / n)`` with ``I = pi r^4 / 4``."""
    return young_modulus * math.pi * radius**4 / 4.0 / (length / num_links)


def soft_pendulum(
    num_links: int = 4,
    length: float = 0.5,
    mass: float = 0.5,
    radius: float = 0.02,
    stiffness: float | None = None,
    damping: float | None = None,
    actuation: str = "base_torque",
    tendon_offset: float | None = None,
    dtype=None,
) -> ArticulatedSoftRobot:
    """A soft pendulum: a soft rod of ``length`` [m], ``mass`` [kg] and ``radius`` [m]
    hanging from a free pivot, as ``num_links`` equal rigid links (uniform solid cylinders,
    the mass split equally) joined by elastic joints.

    Geometry: the pivot sits at the world origin; all joints are revolute about the world y
    axis (``q_i`` [rad], link ``i`` relative to link ``i - 1``), so the pendulum swings in the
    x-z plane; gravity is ``(0, 0, -9.81)``. At ``q = 0`` it hangs straight down (the link
    frames' x axes along -z); positive ``q_0`` swings it towards -x. Joint 0 is the pivot:
    no spring (any rest angle is free), damper ``damping``. Joints ``1 .. n-1`` lump the rod's
    bending: spring ``stiffness`` and damper ``damping``. The frame ``s = n`` (last link)
    sits one link length before the tip (:func:`soft_pendulum_tip`).

    Defaults (silicone-like rod, ``E = 1 MPa``): ``stiffness = E I / (L / n)`` with
    ``I = pi r^4 / 4`` (:func:`soft_pendulum_rod_stiffness`; 1.005 N m/rad for the default
    4 links of 0.125 m, radius 20 mm) and ``damping = tau k_rod`` with a Kelvin-Voigt
    retardation time ``tau = 5 ms`` (5.03e-3 N m s/rad). Linearised about the hanging rest,
    the swinging mode then has a period of 1.16 s and 1.0 % damping ratio, the three bending
    modes periods of 0.24, 0.086 and 0.048 s and damping ratios of 6, 17 and 31 %.

    Actuation:

    * ``"base_torque"`` (``m = 1``): a torque [N m] at the pivot.
    * ``"joint_torques"`` (``m = n``): a torque at every joint.
    * ``"tendons"`` (``m = 2``): two antagonistic :class:`~sorogym.actuation.ArticulatedTendons`
      at ``+/- tendon_offset`` [m] (default: ``radius``) along the world x axis (the link
      frames' z axis): anchored on the base at the pivot's height, through the middle of
      every link, ending at the tip. Tendon 0 runs on the +x side and swings the pendulum
      towards +x (negative ``q``); tendon 1 the opposite. Inputs: tensions [N]. Via-points
      are points, not wrapping surfaces: the routing is meant for moderate swings
      (``|q_0| < pi / 2``).

    Input bound (:data:`SOFT_PENDULUM_MAX_TORQUE` = 0.5 N m per torque, or
    ``0.5 / tendon_offset`` = 25 N per tendon by default): holding the default pendulum still
    at a pivot angle ``q_0`` (the soft joints at their static equilibrium) takes a pivot
    torque that peaks at 1.13 N m near ``q_0 = 1.94`` rad (a rigid rod: ``m g L / 2 = 1.226``
    N m at ``pi / 2``; the sagging soft body lowers and shifts the peak). Within the bound a
    quasi-static lift stops at ``q_0 = 0.56`` rad (32 deg), so the upright configuration
    (``q_0 = pi``, a zero-torque equilibrium, unstable) can only be reached by pumping
    energy into the swing: from rest, the feedback ``tau = 0.5 sign(qd_0)`` (RK4, 1 ms)
    brings the tip above the pivot after 2.3 s and within 0.1 m of the top after 4.4 s.

    Raises:
        ValueError: naming the argument, for ``num_links < 1``, non-positive ``length``,
            ``mass``, ``radius`` or ``tendon_offset``, negative ``stiffness`` or ``damping``,
            or an unknown ``actuation``.
    """
    if int(num_links) != num_links or int(num_links) < 1:
        raise ValueError(f"num_links: must be an integer >= 1, got {num_links}")
    n = int(num_links)
    L, m, r = _positive("length", length), _positive("mass", mass), _positive("radius", radius)
    if actuation not in SOFT_PENDULUM_ACTUATIONS:
        raise ValueError(f"actuation: unknown {actuation!r}; use one of {SOFT_PENDULUM_ACTUATIONS}")
    k_rod = soft_pendulum_rod_stiffness(n, L, r)
    k = k_rod if stiffness is None else _non_negative("stiffness", stiffness)
    d = SILICONE_RETARDATION_TIME * k_rod if damping is None else _non_negative("damping", damping)
    offset = r if tendon_offset is None else _positive("tendon_offset", tendon_offset)

    ell, m_link = L / n, m / n
    transforms = np.stack([np.eye(4)] + [_pose(translation=(ell, 0.0, 0.0))] * (n - 1))
    params = ChainParams.create(
        joint_axes=np.tile([0.0, 1.0, 0.0, 0.0, 0.0, 0.0], (n, 1)),
        parent_to_joint=transforms,
        mass=np.full(n, m_link),
        com=np.tile([ell / 2, 0.0, 0.0], (n, 1)),
        inertia=np.tile(_cylinder_inertia(m_link, r, ell), (n, 1, 1)),
        stiffness=np.r_[0.0, np.full(n - 1, k)],
        damping=d,
        gravity=(0.0, 0.0, -9.81),
        base_pose=_pose(MOUNTING_ROTATIONS["hanging"]),
        dtype=dtype,
    )
    if actuation == "base_torque":
        act = GeneralizedActuation(indices=(0,))
    elif actuation == "joint_torques":
        act = GeneralizedActuation()
    else:
        # the link frames' z axis is world x at q = 0; the base frame's z axis is world x too
        routes = []
        for side in (1.0, -1.0):
            z = side * offset
            route = [(-1, (0.0, 0.0, z))] + [(i, (ell / 2, 0.0, z)) for i in range(n)] + [(n - 1, (ell, 0.0, z))]
            routes.append(route)
        act = ArticulatedTendons(routes)
    return ArticulatedSoftRobot(params, act)


def soft_pendulum_tip(model: ArticulatedSoftRobot, q: Float[Array, " n"]) -> Float[Array, "3"]:
    """World position [m] of the free end of a :func:`soft_pendulum` (twice the last link's
    centre of mass along its axis: uniform links)."""
    pose = model.forward_kinematics(q, model.num_dofs)
    return pose[:3, 3] + pose[:3, :3] @ (2.0 * model.params.com[-1])


# -- UMArm-like McKibben arm -------------------------------------------------------------

# Facts from the UMArm paper (arXiv:2505.11476) and soromox's UMArm model: 24 independently
# pressurised McKibben muscles on a rigid 12-DoF spine (6 universal joints, 4 muscles per
# joint), 1.15 kg in all. Everything else below is a plausible value, not a published one.
UMARM_NUM_MODULES = 6
UMARM_MASS = 1.15  # kg, the whole arm
UMARM_MODULE_LENGTH = 0.12  # m (assumed)
UMARM_MUSCLE_OFFSET = 0.025  # m, muscle axis from the spine axis (assumed)
UMARM_MUSCLE_RADIUS = 0.006  # m, resting inner radius r0 (assumed)
UMARM_BRAID_ANGLE = math.radians(25.0)  # resting braid angle (assumed)
UMARM_MAX_PRESSURE = 100.0e3  # Pa gauge, input-bound suggestion (assumed; soromox's examples use 48-100 kPa)
UMARM_MOUNTINGS = ("hanging", "upright", "horizontal")


def umarm(
    num_modules: int = UMARM_NUM_MODULES,
    module_length: float = UMARM_MODULE_LENGTH,
    mass: float = UMARM_MASS,
    muscle_offset: float = UMARM_MUSCLE_OFFSET,
    muscle_radius: float = UMARM_MUSCLE_RADIUS,
    braid_angle: float = UMARM_BRAID_ANGLE,
    stiffness: float = 0.5,
    damping: float = 0.05,
    mounting: str = "hanging",
    dtype=None,
) -> ArticulatedSoftRobot:
    """A UMArm-like McKibben arm: ``num_modules`` modules in series, each a universal joint
    (two revolute joints through one point, about the local y axis then the local z axis)
    followed by a rigid spine link of ``module_length`` [m] along local x, bent by four
    McKibben muscles around the spine. ``n = 2 num_modules`` joints [rad],
    ``m = 4 num_modules`` muscle pressures [Pa].

    Modules: joint ``2 i`` carries a small cross link (5 % of the module mass, the
    universal joint's spider), joint ``2 i + 1`` the spine link (95 %, a solid cylinder of
    radius ``muscle_offset + muscle_radius`` standing in for spine, plates and muscles).
    Module ``i``'s muscles run straight from the previous spine link (the base for module 0),
    half a module length before the joint, to the module's own spine link, half a module
    length after it, at ``muscle_offset`` [m] from the axis in the directions local
    ``+y, +z, -y, -z`` (muscles ``4 i .. 4 i + 3``); they rest (contraction 0) in the
    straight arm, so equal pressures exert no torque there but stiffen the joint. Muscle
    law: :class:`~sorogym.actuation.McKibbenMuscles` with resting radius ``muscle_radius``
    and braid angle ``braid_angle`` (Chou-Hannaford, ``k = 1``): at 100 kPa and zero
    contraction one muscle pulls with 92.7 N, 2.32 N m about its joint with the defaults.

    Joints: spring ``stiffness`` [N m/rad] (the muscles' passive rubber) and damper
    ``damping`` [N m s/rad] on every joint. Mounting (base at the world origin):
    ``"hanging"`` (spine along world -z), ``"upright"`` (+z; unstable under gravity at low
    muscle pressure) or ``"horizontal"`` (+x).

    Published facts (arXiv:2505.11476 and soromox's UMArm model): 24 muscles on a 12-DoF
    spine of six universal joints, four muscles per joint, 1.15 kg. Assumed (plausible, not
    published): module length 0.12 m (0.72 m arm), muscle offset 25 mm, resting muscle
    radius 6 mm, braid angle 25 deg, joint stiffness 0.5 N m/rad and damping
    0.05 N m s/rad, and the input bound :data:`UMARM_MAX_PRESSURE` (100 kPa).

    Raises:
        ValueError: naming the argument, for ``num_modules < 1``, non-positive lengths,
            mass or radii, a braid angle outside ``(0, 54.7 deg)``, negative ``stiffness``
            or ``damping``, or an unknown ``mounting``.
    """
    if int(num_modules) != num_modules or int(num_modules) < 1:
        raise ValueError(f"num_modules: must be an integer >= 1, got {num_modules}")
    N = int(num_modules)
    ell, m = _positive("module_length", module_length), _positive("mass", mass)
    rho, r0 = _positive("muscle_offset", muscle_offset), _positive("muscle_radius", muscle_radius)
    k, d = _non_negative("stiffness", stiffness), _non_negative("damping", damping)
    if mounting not in UMARM_MOUNTINGS:
        raise ValueError(f"mounting: unknown {mounting!r}; use one of {UMARM_MOUNTINGS}")
    m_module = m / N
    m_cross, m_spine = 0.05 * m_module, 0.95 * m_module
    r_cross = 0.25 * rho

    axes, transforms, masses, coms, inertias = [], [], [], [], []
    for i in range(N):
        # joint 2i: about local y at the module's base (the previous spine link's end)
        axes += [[0.0, 1.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]]
        transforms += [_pose(translation=(ell if i > 0 else 0.0, 0.0, 0.0)), np.eye(4)]
        masses += [m_cross, m_spine]
        coms += [[0.0, 0.0, 0.0], [ell / 2, 0.0, 0.0]]
        inertias += [np.eye(3) * 0.4 * m_cross * r_cross**2, _cylinder_inertia(m_spine, rho + r0, ell)]
    params = ChainParams.create(
        joint_axes=np.array(axes),
        parent_to_joint=np.array(transforms),
        mass=np.array(masses),
        com=np.array(coms),
        inertia=np.array(inertias),
        stiffness=k,
        damping=d,
        gravity=(0.0, 0.0, -9.81),
        base_pose=_pose(MOUNTING_ROTATIONS[mounting]),
        dtype=dtype,
    )
    directions = [(0.0, 1.0, 0.0), (0.0, 0.0, 1.0), (0.0, -1.0, 0.0), (0.0, 0.0, -1.0)]
    routes = []
    for i in range(N):
        # fixed end: on the previous spine link (link 2i - 1) at x = ell/2, or on the base at x = -ell/2
        parent, x_fixed = (2 * i - 1, ell / 2) if i > 0 else (-1, -ell / 2)
        for e in directions:
            offset = rho * np.asarray(e)
            routes.append([(parent, offset + (x_fixed, 0.0, 0.0)), (2 * i + 1, offset + (ell / 2, 0.0, 0.0))])
    muscles = McKibbenMuscles(ArticulatedTendons(routes), radius=r0, braid_angle=braid_angle)
    return ArticulatedSoftRobot(params, muscles)


__all__ = [
    "soft_pendulum",
    "soft_pendulum_tip",
    "soft_pendulum_rod_stiffness",
    "umarm",
    "SOFT_PENDULUM_MAX_TORQUE",
    "UMARM_MAX_PRESSURE",
    "SILICONE_YOUNG_MODULUS",
]
