"""Named body trees: floating, branched and rigid-soft composite robots
(:class:`~sorogym.models.BodyTree`). This module: the conventions, the soft parts
(:class:`TendonArm`) and the floating robots; the fixed-base and rail-mounted ones are in
:mod:`sorogym.robots._tree_composites`.

* :func:`inchworm`: one tendon-driven soft body on a free joint, lying on the ground.
* :func:`brittle_star`: a free rigid disc with ``num_arms`` identical tendon-driven arms.
* :func:`gripper`: a rigid palm on a motorised wrist with identical tendon-driven fingers.
* :func:`two_arm_platform`: two identical tendon-driven arms on a rigid platform (fixed, or
  on a motorised prismatic rail).
* :func:`cart_arm`: an upright tendon-driven arm on a motorised cart (a soft cart-pole).
* :func:`spacer_arm`: a cable-driven continuum arm, soft sections between rigid spacer discs.

Conventions: world frame z up, gravity ``(0, 0, -9.81)`` m/s^2, the ground plane ``z = 0``
(a reference for placement and drawing only: the trees have no contact model). Every soft
part is a :class:`TendonArm`, a spatial :class:`~sorogym.models.PCS` rod whose backbone
leaves its body frame along the local x axis (``mounting="horizontal"``); the robots orient it
through the body's ``offset``. Tendon ``j`` sits at the cross-section angle
``tendon_angles_deg[j]`` measured from the section's local y axis towards its local z axis,
and pulling it bends the rod towards that side. Identical soft parts of a robot share one
structure, so the tree batches them (one rod evaluation per group).

Inputs ``u``: every rod body's tendon tensions [N] (bodies in declaration order, tendons in
:class:`TendonArm` order; tendons only pull), then the joint motors (a force [N] or a torque
[N m]). Materials: silicone rubber (``E`` 0.3-1 MPa, ``rho`` 1070 kg/m^3, ``nu`` 0.5) with
Kelvin-Voigt damping of retardation time ``tau = 3 eta / E`` (:data:`RETARDATION_TIME`,
10 ms; 30 ms for the spacer arm's thin cores).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..actuation import Tendons
from ..models import PCS, BodyTree, Joint, RigidLink, RodBody, RodParams
from ._articulated import _non_negative, _pose, _positive
from ._tendon_ring import ring_offsets

SILICONE_DENSITY = 1070.0  # kg/m^3
RETARDATION_TIME = 0.01  # s, tau = 3 eta / E of the default soft parts
GRAVITY = (0.0, 0.0, -9.81)  # m/s^2


def _viscosity(young_modulus: float) -> float:
    """Kelvin-Voigt viscosity [Pa s] with the retardation time :data:`RETARDATION_TIME`."""
    return young_modulus * RETARDATION_TIME / 3.0


@dataclasses.dataclass(frozen=True)
class TendonArm:
    """A tendon-driven silicone rod: a spatial :class:`~sorogym.models.PCS` with straight
    tendons on a ring around the backbone (every tendon runs base to tip).

    Attributes:
        segment_lengths: ``(N,)`` segment lengths [m].
        radius: cross-section radius [m].
        young_modulus: Young's modulus ``E`` [Pa].
        viscosity: Kelvin-Voigt viscosity ``eta`` [Pa s] (``None``: ``E tau / 3`` with
            ``tau`` = :data:`RETARDATION_TIME`).
        density: [kg/m^3].
        poisson_ratio: [-] (``G = E / (2 (1 + nu))``).
        strains: active strains of every segment (a preset of
            :class:`~sorogym.models.PCS`: ``"pcc"``, ``"bending_elongation"``, ...).
        tendon_offset: distance [m] of the tendons from the backbone (may exceed ``radius``
            where spacer discs route the cables).
        tendon_angles_deg: angle [deg] of each tendon in the cross-section, from the local y
            axis towards the local z axis.
    """

    segment_lengths: tuple[float, ...] = (0.06, 0.06)
    radius: float = 0.008
    young_modulus: float = 5e5
    viscosity: float | None = None
    density: float = SILICONE_DENSITY
    poisson_ratio: float = 0.5
    strains: str = "pcc"
    tendon_offset: float = 0.006
    tendon_angles_deg: tuple[float, ...] = (0.0, 90.0, 180.0, 270.0)

    @property
    def length(self) -> float:
        """Total length [m]."""
        return float(sum(self.segment_lengths))

    @property
    def num_tendons(self) -> int:
        return len(self.tendon_angles_deg)

    def pcs(self, dtype=None) -> PCS:
        """The rod (backbone along its body frame's x axis; the tree's gravity applies)."""
        for name in ("segment_lengths", "radius", "young_modulus", "density", "tendon_offset"):
            _positive_all(name, getattr(self, name))
        if not self.tendon_angles_deg:
            raise ValueError("tendon_angles_deg: a tendon-driven arm needs at least one tendon")
        E = float(self.young_modulus)
        eta = _viscosity(E) if self.viscosity is None else _non_negative("viscosity", self.viscosity)
        params = RodParams.create(
            length=list(self.segment_lengths),
            radius=self.radius,
            density=self.density,
            young_modulus=E,
            poisson_ratio=self.poisson_ratio,
            damping=eta,
            gravity=GRAVITY,
            mounting="horizontal",
            dtype=dtype,
        )
        ring = ring_offsets(self.tendon_offset, self.tendon_angles_deg)  # (m, 2)
        offsets = np.repeat(ring[:, None, :], len(self.segment_lengths), axis=1)
        return PCS(params, active_strains=self.strains, actuation=Tendons(offsets))


def _positive_all(name: str, value) -> None:
    for v in np.atleast_1d(np.asarray(value, dtype=float)):
        _positive(name, v)


def _count(name: str, value) -> int:
    if int(value) != value or int(value) < 1:
        raise ValueError(f"{name}: must be an integer >= 1, got {value}")
    return int(value)


def _rot_z(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def disc_inertia(mass: float, radius: float, thickness: float) -> np.ndarray:
    """Solid disc with its axis along the local z axis, about its centre [kg m^2]."""
    transverse = mass * (3.0 * radius**2 + thickness**2) / 12.0
    return np.diag([transverse, transverse, 0.5 * mass * radius**2])


def box_inertia(mass: float, size) -> np.ndarray:
    """Solid box of edge lengths ``size`` ``(3,)`` [m] along the local axes, about its centre."""
    x, y, z = (float(v) for v in size)
    return mass / 12.0 * np.diag([y**2 + z**2, x**2 + z**2, x**2 + y**2])


# -- floating robots -------------------------------------------------------------------------

INCHWORM_BODY = TendonArm(
    segment_lengths=(0.04, 0.04, 0.04, 0.04),
    radius=0.01,
    young_modulus=3e5,
    tendon_offset=0.007,
    tendon_angles_deg=(270.0, 90.0, 0.0, 180.0),
)


def inchworm(body: TendonArm = INCHWORM_BODY, clearance: float = 0.001, dtype=None) -> BodyTree:
    """A floating inchworm: one tendon-driven soft body (:data:`INCHWORM_BODY`: four 40 mm
    segments of radius 10 mm, ``E`` 0.3 MPa, bending only, ``n = 6 + 8 = 14``, ``nq = 15``;
    54 g) on a free joint.

    At the neutral configuration the body lies straight along world +x, centred on the origin,
    its lowest fibre ``clearance`` [m] above the ground: the free joint's position is
    ``(-L / 2, 0, radius + clearance)``. Body frame: local x along the backbone, local z up.
    Tendons (``m = 4``, offset 7 mm): 0 underneath (pulling it arches the body, the
    inchworm's stroke), 1 on top, 2 on the left (+y: steers left), 3 on the right.
    """
    _non_negative("clearance", clearance)
    worm = RodBody(
        "body",
        body.pcs(dtype),
        joint=Joint.free(position=(-0.5 * body.length, 0.0, body.radius + clearance)),
    )
    return BodyTree([worm], gravity=GRAVITY, dtype=dtype)


BRITTLE_STAR_ARM = TendonArm(segment_lengths=(0.06, 0.06), radius=0.007, young_modulus=5e5, tendon_offset=0.005)
BRITTLE_STAR_HUB = {"radius": 0.03, "thickness": 0.014, "mass": 0.04}  # m, m, kg


def brittle_star(
    num_arms: int = 5,
    arm: TendonArm = BRITTLE_STAR_ARM,
    hub_radius: float = BRITTLE_STAR_HUB["radius"],
    hub_thickness: float = BRITTLE_STAR_HUB["thickness"],
    hub_mass: float = BRITTLE_STAR_HUB["mass"],
    height: float | None = None,
    dtype=None,
) -> BodyTree:
    """A brittle star: a free rigid disc (``hub_radius`` 30 mm, ``hub_thickness`` 14 mm,
    ``hub_mass`` 40 g) with ``num_arms`` identical soft arms (:data:`BRITTLE_STAR_ARM`: two
    60 mm segments of radius 7 mm, ``E`` 0.5 MPa, bending only, 20 g each) spaced evenly in
    its mid-plane. ``n = 6 + 4 num_arms``, ``nq = 7 + 4 num_arms``, ``m = 4 num_arms``
    (bodies: ``"hub"``, then ``"arm0"`` ...; the arms form one batched group).

    The hub's frame sits at its centre, local z along the disc's axis; at the neutral
    configuration it is level, ``height`` [m] above the ground (default: the disc rests on
    the ground, ``hub_thickness / 2``), and arm ``k`` leaves the rim radially at the angle
    ``2 pi k / num_arms`` from world +x. Arm frames: local x radial, local z up. Tendons per
    arm (offset 5 mm): 0 at local +y (curls the arm counter-clockwise seen from above), 1 on
    top (lifts it), 2 at -y, 3 underneath (presses it down: the stroke that lifts the disc).
    """
    n_arms = _count("num_arms", num_arms)
    R, t = _positive("hub_radius", hub_radius), _positive("hub_thickness", hub_thickness)
    m = _positive("hub_mass", hub_mass)
    z0 = 0.5 * t if height is None else _positive("height", height)
    hub = RigidLink("hub", mass=m, inertia=disc_inertia(m, R, t), joint=Joint.free(position=(0.0, 0.0, z0)))
    rod = arm.pcs(dtype)
    arms = []
    for k in range(n_arms):
        Rz = _rot_z(2.0 * np.pi * k / n_arms)
        arms.append(RodBody(f"arm{k}", rod, parent="hub", offset=_pose(Rz, Rz @ (R, 0.0, 0.0))))
    return BodyTree([hub, *arms], gravity=GRAVITY, dtype=dtype)


__all__ = [
    "TendonArm",
    "inchworm",
    "brittle_star",
    "disc_inertia",
    "box_inertia",
    "INCHWORM_BODY",
    "BRITTLE_STAR_ARM",
    "BRITTLE_STAR_HUB",
    "RETARDATION_TIME",
]
