"""The three-tube concentric tube robot of the Lie-group framework's Table 7."""

from __future__ import annotations

from ..models import ConcentricTubeParams, ConcentricTubeRobot

#: Table 7 (tubes innermost first: lengths [m], outer radii [m], E [Pa], Poisson's ratio,
#: precurvature [1/m]) and the values the table leaves open: nitinol's density
#: [kg/m^3]; bores equal to the next inner tube's outer radius (the innermost a solid
#: wire); each tube precurved along its whole length; 0.1 m of straight tube between each
#: drive and the plate; Kelvin-Voigt viscosity [Pa s]; no gravity.
CONCENTRIC_TUBES = {
    "length": (0.6, 0.4, 0.05),
    "outer_radius": (2.5e-3, 5e-3, 50e-3),
    "young_modulus": (2e9, 2e9, 10e9),
    "poisson_ratio": 0.45,
    "precurvature": (6.0, 4.0, 0.0),
    "density": 6450.0,
    "transmission_length": 0.1,
    "damping": 2e6,
    "gravity": (0.0, 0.0, 0.0),
}


def concentric_tube_robot(
    rotation=(0.0, 0.0, 0.0),
    translation=(0.0, 0.0, 0.0),
    bending_order: int = 2,
    twist_order: int = 3,
    num_gauss_points: int = 4,
    dtype=None,
    **overrides,
) -> ConcentricTubeRobot:
    """The three-tube robot of Table 7 (:data:`CONCENTRIC_TUBES`; any of its keys, or another
    :meth:`ConcentricTubeParams.create` argument such as ``curved_length``, may be overridden):
    a 0.6 m wire precurved at 6 1/m inside a 0.4 m tube precurved at 4 1/m, both through a
    short stiff straight outer tube (0.05 m, 50 mm radius) held by the base, upright (the
    backbone leaves the plate along world +z). ``rotation`` and ``translation`` [rad, m] are
    the drives (tubes innermost first); the discretisation arguments are those of
    :class:`~sorogym.models.ConcentricTubeRobot`."""
    args = dict(CONCENTRIC_TUBES)
    args.update(overrides)
    params = ConcentricTubeParams.create(rotation=rotation, translation=translation, dtype=dtype, **args)
    return ConcentricTubeRobot(params, bending_order, twist_order, num_gauss_points)
