"""Rods between plates, closed by loop closures (:class:`~sorogym.models.LoopClosure`) on
the body tree: the parallel continuum robot and the chiral structure.

Layout of one ring (world z up): rod ``k`` leaves its base plate (or the plane ``z = 0``) at
``radius (cos a_k, sin a_k, 0)`` in the plate's frame, ``a_k = 2 pi k / num_rods``, along +z;
the next rigid plate (a disc, frame at its centre, world-aligned at rest) hangs from the tip
of rod 0 and the other rods' tips are clamped to it at the same angles. At rest the rods are
straight and parallel (the neutral configuration is assembled).
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
    n_rods = _ring_size(num_rods)
    L, r = _positive("rod_length", rod_length), _positive("radius", radius)
    material = (rod_radius, density, young_modulus, poisson_ratio, retardation_time)
    rod = _upright_rod(L, rod_segments, *material, "bending_torsion", dtype)
    drive = Joint.prismatic(
        (0.0, 0.0, 1.0),
        stiffness=_positive("insertion_stiffness", insertion_stiffness),
        damping=_non_negative("insertion_damping", insertion_damping),
    )
    m = _positive("platform_mass", platform_mass)
    plate = (m, disc_inertia(m, r, _positive("platform_thickness", platform_thickness)))
    names = [f"rod{k}" for k in range(n_rods)]
    bodies, closures = _ring(rod, L, r, names, None, drive, "platform", plate, [f"clamp{k}" for k in range(n_rods)])
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


def _ring_size(num_rods) -> int:
    """``num_rods`` checked: a ring of at least two rods."""
    n = _count("num_rods", num_rods)
    if n < 2:
        raise ValueError(f"num_rods: a ring needs at least 2 rods, got {num_rods}")
    return n


def _upright_rod(length, segments, radius, density, young_modulus, poisson_ratio, retardation_time, strains, dtype):
    """A PCS rod of ``segments`` equal segments growing along +z (``upright``), with the
    ``strains`` preset and Kelvin-Voigt damping of ``retardation_time`` [s]."""
    segments = _count("rod_segments", segments)
    E = _positive("young_modulus", young_modulus)
    params = RodParams.create(
        length=[length / segments] * segments,
        radius=_positive("rod_radius", radius),
        density=_positive("density", density),
        young_modulus=E,
        poisson_ratio=poisson_ratio,
        damping=E * _non_negative("retardation_time", retardation_time) / 3.0,
        mounting="upright",
        dtype=dtype,
    )
    return PCS(params, active_strains=strains)


def _ring(rod, length, radius, names, parent, joint, plate_name, plate, clamp_names):
    """One ring of rods ``names`` on ``joint``s from the frame of ``parent`` (``None``: the
    world) and the plate ``plate_name`` (``(mass, inertia)``) on rod 0's tip, the other
    tips clamped to it (layout: module docstring). Returns ``(bodies, closures)``."""
    n = len(names)
    angles = 2.0 * np.pi * np.arange(n) / n
    rims = np.stack([radius * np.cos(angles), radius * np.sin(angles), np.zeros(n)], axis=1)
    bodies = [
        RodBody(name, rod, parent=parent, joint=joint, offset=_pose(translation=rim), actuated=False)
        for name, rim in zip(names, rims, strict=True)
    ]
    up = np.asarray(MOUNTING_ROTATIONS["upright"])  # rod tip frame -> plate frame, straight rods
    mass, inertia = plate
    bodies.append(
        RigidLink(
            plate_name, mass=mass, inertia=inertia, parent=names[0], at=length, offset=_pose(up.T, up.T @ -rims[0])
        )
    )
    closures = [
        LoopClosure("fixed", plate_name, names[k], offset_a=_pose(up, rims[k]), name=clamp_names[k])
        for k in range(1, n)
    ]
    return bodies, closures


#: Defaults of :func:`chiral_structure`: the rods of the paper's Table 8 (0.8 m, radius
#: 4 cm, ``E`` 0.1 MPa, Poisson ratio 0.45); the plates, densities and damping are ours [SI].
CHIRAL_STRUCTURE = {
    "rod_length": 0.8,
    "rod_radius": 0.04,
    "young_modulus": 1.0e5,
    "poisson_ratio": 0.45,
    "density": 1100.0,
    "radius": 0.2,
    "plate_mass": 0.5,
    "plate_thickness": 0.02,
    "retardation_time": 0.05,
}


def chiral_structure(
    num_rods: int = 4,
    num_tiers: int = 2,
    rod_length: float = CHIRAL_STRUCTURE["rod_length"],
    rod_radius: float = CHIRAL_STRUCTURE["rod_radius"],
    young_modulus: float = CHIRAL_STRUCTURE["young_modulus"],
    poisson_ratio: float = CHIRAL_STRUCTURE["poisson_ratio"],
    density: float = CHIRAL_STRUCTURE["density"],
    radius: float = CHIRAL_STRUCTURE["radius"],
    plate_mass: float = CHIRAL_STRUCTURE["plate_mass"],
    plate_thickness: float = CHIRAL_STRUCTURE["plate_thickness"],
    retardation_time: float = CHIRAL_STRUCTURE["retardation_time"],
    rod_segments: int = 3,
    constraint_frequency: float = 20.0,
    dtype=None,
) -> BodyTree:
    """The chiral structure of stacked plates (the paper's Figs. 25 and 27): ``num_tiers``
    rings of ``num_rods`` straight vertical rods, each ring clamped between two rigid
    horizontal discs of ``radius`` [m] (rods at that radius); the bottom ring stands on
    the ground (``z = 0``, clamped), the plates ``plate1 ... plate<num_tiers>`` float, the
    top one is the tree's ``tip``. A torque about the vertical on the top plate twists the
    rods into a chiral state; a compression then bends, twists and shortens them at once.

    Rods: PCS with ``rod_segments`` segments of constant bending, torsion and extension
    (``no_shear``: Euler-Bernoulli rods that shorten), Kelvin-Voigt damping of
    ``retardation_time`` [s]. No actuators (load it with ``point_wrenches`` on the tip or
    ``tau_ext``). Coordinates: ``4 rod_segments`` strains per rod; ``c = 6 num_tiers
    (num_rods - 1)`` closure equations. Defaults (:data:`CHIRAL_STRUCTURE`): Table 8's rods,
    0.5 kg plates of radius 0.2 m, 4 rods per ring, 2 rings.
    """
    n_rods, tiers = _ring_size(num_rods), _count("num_tiers", num_tiers)
    L, r = _positive("rod_length", rod_length), _positive("radius", radius)
    material = (rod_radius, density, young_modulus, poisson_ratio, retardation_time)
    rod = _upright_rod(L, rod_segments, *material, "no_shear", dtype)
    m = _positive("plate_mass", plate_mass)
    plate = (m, disc_inertia(m, r, _positive("plate_thickness", plate_thickness)))
    bodies, closures, parent = [], [], None
    for t in range(tiers):
        names = [f"tier{t}_rod{k}" for k in range(n_rods)]
        clamps = [f"plate{t + 1}_clamp{k}" for k in range(n_rods)]
        ring, ring_closures = _ring(rod, L, r, names, parent, Joint.fixed(), f"plate{t + 1}", plate, clamps)
        bodies += ring
        closures += ring_closures
        parent = f"plate{t + 1}"
    return BodyTree(
        bodies,
        gravity=GRAVITY,
        tip=parent,
        dtype=dtype,
        constraints=closures,
        constraint_frequency=constraint_frequency,
    )
