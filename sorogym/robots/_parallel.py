"""The parallel continuum robot: soft rods between a fixed base and a moving platform,
closed by loop closures (:class:`~sorogym.models.LoopClosure`) on the body tree.

Layout (world z up): rod ``k`` leaves the base plane ``z = 0`` at
``radius (cos a_k, sin a_k, 0)``, ``a_k = 2 pi k / num_rods``, along +z on a prismatic
insertion joint; the rigid platform (a disc, frame at its centre, world-aligned at rest)
hangs from the tip of rod 0 and the other rods' tips are clamped to it at the same angles.
At rest the rods are straight and parallel (the neutral configuration is assembled).
"""

from __future__ import annotations

import numpy as np

from ..models import MOUNTING_ROTATIONS, PCS, BodyTree, Joint, LoopClosure, RigidLink, RodBody, RodParams
from ._articulated import _non_negative, _pose, _positive
from ._trees import GRAVITY, _count, disc_inertia

#: Defaults of :func:`parallel_continuum_robot` (PEEK-like polymer rods) [SI].
PARALLEL_ROBOT = {
    "rod_length": 0.25,
    "rod_radius": 0.0015,
    "young_modulus": 1.5e9,
    "density": 1300.0,
    "poisson_ratio": 0.4,
    "radius": 0.04,
    "platform_mass": 0.03,
    "platform_thickness": 0.005,
    "insertion_stiffness": 2000.0,
    "insertion_damping": 4.0,
    "retardation_time": 0.01,
}


def parallel_continuum_robot(
    num_rods: int = 3,
    rod_length: float = PARALLEL_ROBOT["rod_length"],
    rod_radius: float = PARALLEL_ROBOT["rod_radius"],
    young_modulus: float = PARALLEL_ROBOT["young_modulus"],
    density: float = PARALLEL_ROBOT["density"],
    poisson_ratio: float = PARALLEL_ROBOT["poisson_ratio"],
    radius: float = PARALLEL_ROBOT["radius"],
    platform_mass: float = PARALLEL_ROBOT["platform_mass"],
    platform_thickness: float = PARALLEL_ROBOT["platform_thickness"],
    insertion_stiffness: float = PARALLEL_ROBOT["insertion_stiffness"],
    insertion_damping: float = PARALLEL_ROBOT["insertion_damping"],
    retardation_time: float = PARALLEL_ROBOT["retardation_time"],
    rod_segments: int = 4,
    constraint_frequency: float = 20.0,
    dtype=None,
) -> BodyTree:
    """A parallel continuum robot of ``num_rods`` (>= 2; 3 and 6 are the usual designs)
    inextensible Kirchhoff rods (PCS, ``rod_segments`` segments of constant bending and
    torsion) between a fixed base and a rigid platform disc of ``platform_mass`` [kg] and
    the attachment ``radius`` [m] (layout: module docstring). Small lateral loads bend the
    rods as clamped-guided beams; ``N`` constant-curvature segments give that deflection
    times ``1 - 1/N^2`` (the segment means of the exact linear curvature).

    Actuation: each rod slides through the base on a prismatic joint along world z, a drive
    of stiffness ``insertion_stiffness`` [N/m] and damping ``insertion_damping`` [N s/m]
    with a force motor: input ``u_k`` [N] pushes rod ``k`` in by ``u_k /
    insertion_stiffness`` [m] against no load (a series-elastic linear drive; a position
    setpoint ``d`` is ``u = insertion_stiffness d``). Rods: Kelvin-Voigt damping of
    retardation time ``retardation_time`` [s].

    Coordinates: per rod its insertion [m] then ``3 rod_segments`` strains;
    ``c = 6 (num_rods - 1)`` closure equations (fixed clamps). Defaults
    (:data:`PARALLEL_ROBOT`): 0.25 m rods of radius 1.5 mm, ``E`` 1.5 GPa, 30 g platform,
    attachment radius 40 mm.
    """
    n_rods = _count("num_rods", num_rods)
    if n_rods < 2:
        raise ValueError(f"num_rods: a parallel robot needs at least 2 rods, got {num_rods}")
    L = _positive("rod_length", rod_length)
    r = _positive("radius", radius)
    segments = _count("rod_segments", rod_segments)
    E = _positive("young_modulus", young_modulus)
    params = RodParams.create(
        length=[L / segments] * segments,
        radius=_positive("rod_radius", rod_radius),
        density=_positive("density", density),
        young_modulus=E,
        poisson_ratio=poisson_ratio,
        damping=E * _non_negative("retardation_time", retardation_time) / 3.0,
        mounting="upright",
        dtype=dtype,
    )
    rod = PCS(params, active_strains="bending_torsion")
    drive = Joint.prismatic(
        (0.0, 0.0, 1.0),
        stiffness=_positive("insertion_stiffness", insertion_stiffness),
        damping=_non_negative("insertion_damping", insertion_damping),
    )
    angles = 2.0 * np.pi * np.arange(n_rods) / n_rods
    rims = np.stack([r * np.cos(angles), r * np.sin(angles), np.zeros(n_rods)], axis=1)
    bodies = [
        RodBody(f"rod{k}", rod, joint=drive, offset=_pose(translation=rims[k]), actuated=False) for k in range(n_rods)
    ]
    up = np.asarray(MOUNTING_ROTATIONS["upright"])  # rod tip frame -> world, straight rods
    m = _positive("platform_mass", platform_mass)
    t = _positive("platform_thickness", platform_thickness)
    bodies.append(
        RigidLink(
            "platform",
            mass=m,
            inertia=disc_inertia(m, r, t),
            parent="rod0",
            at=L,
            offset=_pose(up.T, up.T @ -rims[0]),
        )
    )
    closures = [
        LoopClosure("fixed", "platform", f"rod{k}", offset_a=_pose(up, rims[k]), name=f"clamp{k}")
        for k in range(1, n_rods)
    ]
    motors = [(f"rod{k}", 0) for k in range(n_rods)]
    return BodyTree(
        bodies,
        gravity=GRAVITY,
        motors=motors,
        tip="platform",
        dtype=dtype,
        constraints=closures,
        constraint_frequency=constraint_frequency,
    )
