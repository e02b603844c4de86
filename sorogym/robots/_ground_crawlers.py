"""Soft crawlers on the ground, seen from above: planar floating-base PCS rods
(:class:`~sorogym.models.PlanarPCS` with ``floating_base=True``) in the ground plane.

* :func:`snake`: bent segment by segment (lateral undulation).
* :func:`crawler`: each segment bends and stretches (a peristaltic, earthworm-type crawl on
  directional friction, and steering).
* :func:`planar_brittle_star`: a rigid disc with tendon-driven arms bending in the ground
  plane (:class:`~sorogym.models.PlanarStar`), walking by undulating its arms.

The model's plane is the ground (world x-y, z up out of it): the body lies on the ground
along its whole length, so its weight presses it down uniformly and friction
(:class:`~sorogym.contact.GroundFriction`, a line load on the rod's quadrature points)
is the only horizontal force from the ground. In-plane gravity is zero on level ground;
on a slope, the in-plane component goes into the rod's gravity and the normal one into the
friction law (:func:`slope_gravity`).
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import numpy as np

from ..actuation import GeneralizedActuation, Tendons
from ..models import PlanarPCS, PlanarStar, RodParams
from ._articulated import _non_negative, _positive

SNAKE_DENSITY = 1070.0  # kg/m^3, silicone
SNAKE_RETARDATION_TIME = 0.01  # s, tau = 3 eta / E


@dataclasses.dataclass(frozen=True)
class _GroundRodBody:
    """Shared shape of the crawler bodies: ``N`` equal segments of a uniform silicone rod."""

    num_segments: int
    segment_length: float
    radius: float
    young_modulus: float
    density: float
    retardation_time: float

    @property
    def length(self) -> float:
        return float(self.num_segments * self.segment_length)

    @property
    def mass(self) -> float:
        return float(self.density * np.pi * self.radius**2 * self.length)

    @property
    def bending_stiffness(self) -> float:
        """``E I`` [N m^2]."""
        return float(self.young_modulus * np.pi * self.radius**4 / 4.0)

    @property
    def axial_stiffness(self) -> float:
        """``E A`` [N]."""
        return float(self.young_modulus * np.pi * self.radius**2)


@dataclasses.dataclass(frozen=True)
class SnakeBody(_GroundRodBody):
    """A silicone snake body (defaults: six 60 mm segments, radius 12 mm, ``E`` 0.5 MPa,
    174 g, 0.36 m).

    Attributes:
        num_segments: ``N`` constant-curvature segments (each bent by its own actuator).
        segment_length: [m].
        radius: cross-section radius [m].
        young_modulus: ``E`` [Pa].
        density: [kg/m^3].
        retardation_time: Kelvin-Voigt ``tau = 3 eta / E`` [s].
    """

    num_segments: int = 6
    segment_length: float = 0.06
    radius: float = 0.012
    young_modulus: float = 5e5
    density: float = SNAKE_DENSITY
    retardation_time: float = SNAKE_RETARDATION_TIME


def slope_gravity(slope_deg: float, uphill_deg: float = 0.0, g: float = 9.81) -> tuple[np.ndarray, float]:
    """``(in-plane gravity (2,) [m/s^2], normal gravity [m/s^2])`` on ground inclined by
    ``slope_deg`` whose uphill direction makes the angle ``uphill_deg`` with world +x (in the
    ground's own coordinates): ``-g sin(alpha)`` along the uphill direction, ``g cos(alpha)``
    pressing on the ground."""
    alpha, phi = np.deg2rad(slope_deg), np.deg2rad(uphill_deg)
    if not (0.0 <= slope_deg < 90.0):
        raise ValueError(f"slope_deg: must be in [0, 90), got {slope_deg}")
    return -g * np.sin(alpha) * np.array([np.cos(phi), np.sin(phi)]), float(g * np.cos(alpha))


def snake(body: SnakeBody = SnakeBody(), gravity=(0.0, 0.0), dtype=None) -> PlanarPCS:
    """The snake: ``n = 3 + N`` (``q = [theta, x, y, k_0 .. k_N-1]``: the tail's heading
    [rad] and position [m] in the ground plane, then each segment's curvature [1/m]); the
    tail is at ``s = 0``, the head at ``s = N L``. Inputs ``u`` ``(N,)``: the generalized
    force on each segment's curvature (a bending moment times the segment length [N m^2];
    ``u_i = E I L k`` holds segment ``i`` at curvature ``k`` without load).
    ``gravity``: in-plane gravity (zero on level ground, :func:`slope_gravity`)."""
    return _ground_rod(body, ("k",), gravity, dtype)


@dataclasses.dataclass(frozen=True)
class CrawlerBody(_GroundRodBody):
    """A silicone crawler body (defaults: four 50 mm segments, radius 10 mm, ``E`` 0.2 MPa,
    Kelvin-Voigt retardation 50 ms; 0.2 m, 67 g), each segment bending and stretching.

    Attributes as :class:`SnakeBody`.
    """

    num_segments: int = 4
    segment_length: float = 0.05
    radius: float = 0.01
    young_modulus: float = 2e5
    density: float = SNAKE_DENSITY
    retardation_time: float = 0.05


def crawler(body: CrawlerBody = CrawlerBody(), gravity=(0.0, 0.0), dtype=None) -> PlanarPCS:
    """The crawler: ``n = 3 + 2 N`` (``q = [theta, x, y, k_0, e_0, k_1, e_1, ...]``: the
    tail's heading and position, then each segment's curvature [1/m] and axial strain
    ``e`` (0 at rest, negative when shortened)); tail at ``s = 0``, head at ``s = N L``.
    Inputs ``u`` ``(2 N,)``: the generalized forces on the coordinates in that order
    (``E I L k`` holds curvature ``k``, ``E A L e`` holds strain ``e`` without load)."""
    return _ground_rod(body, ("k", "sx"), gravity, dtype)


@dataclasses.dataclass(frozen=True)
class BrittleStarBody(_GroundRodBody):
    """A planar brittle star: a rigid disc (``hub_radius`` 30 mm, ``hub_mass`` 40 g) with
    ``num_arms`` silicone arms of ``num_segments`` bending segments each (defaults: five
    arms of two 60 mm segments, radius 7 mm, ``E`` 0.5 MPa, Kelvin-Voigt retardation 50 ms;
    20 g per arm, 140 g in all), each segment bent by an antagonistic pair of tendons at
    ``tendon_offset`` (5 mm) either side of the backbone.

    Attributes as :class:`SnakeBody` for one arm, plus ``num_arms``, ``hub_radius`` [m],
    ``hub_mass`` [kg] and ``tendon_offset`` [m].
    """

    num_segments: int = 2
    segment_length: float = 0.06
    radius: float = 0.007
    young_modulus: float = 5e5
    density: float = SNAKE_DENSITY
    retardation_time: float = 0.05
    num_arms: int = 5
    hub_radius: float = 0.03
    hub_mass: float = 0.04
    tendon_offset: float = 0.005

    @property
    def total_mass(self) -> float:
        """Hub and arms [kg] (:attr:`mass` is one arm's)."""
        return float(self.hub_mass + self.num_arms * self.mass)


def planar_brittle_star(body: BrittleStarBody = BrittleStarBody(), gravity=(0.0, 0.0), dtype=None) -> PlanarStar:
    """The planar brittle star (:class:`~sorogym.models.PlanarStar`): ``n = 3 + K N``
    (``q = [theta, x, y, k_arm0_0 .. k_arm0_N-1, k_arm1_0, ...]``: the disc's angle and
    centre in the ground plane, then each arm's segment curvatures [1/m], arm ``k`` leaving
    the rim at ``2 pi k / K`` from the disc's x axis). Inputs ``u`` ``(K 2 N,)`` [N]: per
    arm, the tensions of its tendons on the side of local +y (counter-clockwise bending),
    the one anchored at the tip of segment 0 first, then those on the side of -y; a tendon
    anchored at the tip of segment ``j`` bends segments ``0..j``. The disc is a uniform
    disc (polar inertia ``m r^2 / 2``)."""
    if int(body.num_arms) != body.num_arms or body.num_arms < 1:
        raise ValueError(f"num_arms: must be an integer >= 1, got {body.num_arms}")
    for name in ("hub_radius", "hub_mass", "tendon_offset"):
        _positive(name, getattr(body, name))
    if body.tendon_offset >= body.radius:
        raise ValueError(f"tendon_offset: must lie inside the arm's radius {body.radius} m, got {body.tendon_offset}")
    N = int(body.num_segments)
    side = np.full((N, N), body.tendon_offset)
    tendons = Tendons(np.concatenate([side, -side]), spans=tuple(range(1, N + 1)) * 2)
    arm = _ground_rod(body, ("k",), gravity, dtype, actuation=tendons)
    inertia = 0.5 * body.hub_mass * body.hub_radius**2
    return PlanarStar(arm, body.num_arms, body.hub_radius, body.hub_mass, inertia)


def _ground_rod(body, strains, gravity, dtype, actuation=None) -> PlanarPCS:
    """A planar floating PCS rod of ``body`` with ``strains`` active in every segment and
    generalized actuators on all of its strain coordinates."""
    if int(body.num_segments) != body.num_segments or body.num_segments < 1:
        raise ValueError(f"num_segments: must be an integer >= 1, got {body.num_segments}")
    for name in ("segment_length", "radius", "young_modulus", "density"):
        _positive(name, getattr(body, name))
    tau = _non_negative("retardation_time", body.retardation_time)
    N = int(body.num_segments)
    params = RodParams.create(
        length=[body.segment_length] * N,
        radius=body.radius,
        density=body.density,
        young_modulus=body.young_modulus,
        poisson_ratio=0.5,
        damping=body.young_modulus * tau / 3.0,
        gravity=jnp.asarray(gravity),
        planar=True,
        base_rotation=0.0,
        dtype=dtype,
    )
    if actuation is None:
        actuation = GeneralizedActuation(indices=tuple(range(3, 3 + N * len(strains))))
    return PlanarPCS(params, active_strains=strains, actuation=actuation, num_quadrature_points=3, floating_base=True)


__all__ = ["SnakeBody", "CrawlerBody", "BrittleStarBody", "snake", "crawler", "planar_brittle_star", "slope_gravity"]
