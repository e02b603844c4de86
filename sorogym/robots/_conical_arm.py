"""Named robots of the paper's case studies, built from the general models.

* :func:`conical_tendon_arm`: the tendon-driven conical arm of the static-equilibrium
  identification study (App. D-A): base radius 15.4 mm, tip radius 4.8 mm, length 360 mm,
  two straight tendons ending 305 mm from the base at 30 and 150 degrees in the
  cross-section; two GVS links split at the tendons' end (linear bending, constant torsion
  and elongation on the first; constant bending on the second); four markers
  (Table VII).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ..actuation import Tendons
from ..models import GVS, GVSParams, StrainBasis

CONICAL_ARM_LENGTH = 0.360  # m
CONICAL_ARM_BASE_RADIUS = 0.0154  # m
CONICAL_ARM_TIP_RADIUS = 0.0048  # m
CONICAL_ARM_TENDON_END = 0.305  # m from the base
CONICAL_ARM_TENDON_ANGLES = (30.0, 150.0)  # degrees from the cross-section's y axis
# Markers (Table VII): arc length [m] and offset (y, z) from the backbone [m] in the
# cross-section frame; the last sits 8 mm beyond the tip on the backbone's axis.
CONICAL_ARM_MARKERS = ((0.1291, (0.0, 0.025)), (0.2195, (0.0, -0.021)), (0.2800, (0.0, 0.020)), (0.3680, (0.0, 0.0)))


def conical_tendon_arm(
    young_modulus: float = 0.315e6,
    poisson_ratio: float = 0.45,
    density: float = 1320.0,
    damping: float = 0.0,
    tendon_offset: float = 0.005,
    mounting: str = "hanging",
    dtype=None,
) -> GVS:
    """The conical tendon-driven arm as a 2-link :class:`GVS` (``n = 8``, ``m = 2``).

    Defaults: the material identified in the paper (E 0.315 MPa, nu 0.45, rho 1320 kg/m^3)
    and a hanging mounting. The paper gives neither the tendons' distance from the backbone
    nor the mounting; ``tendon_offset`` [m] (5 mm keeps both tendons inside the section
    up to their end, where the radius is 6.4 mm) and ``mounting`` set them.
    """
    L, L1 = CONICAL_ARM_LENGTH, CONICAL_ARM_TENDON_END
    r0, r2 = CONICAL_ARM_BASE_RADIUS, CONICAL_ARM_TIP_RADIUS
    r1 = r0 + (r2 - r0) * L1 / L
    params = GVSParams.create(
        length=[L1, L - L1],
        radius=[r0, r1],
        tip_radius=[r1, r2],
        density=density,
        young_modulus=young_modulus,
        poisson_ratio=poisson_ratio,
        damping=damping,
        mounting=mounting,
        dtype=dtype,
    )
    angles = np.deg2rad(np.asarray(CONICAL_ARM_TENDON_ANGLES))
    yz = tendon_offset * np.stack([np.cos(angles), np.sin(angles)], axis=-1)  # (m, 2)
    tendons = Tendons(np.repeat(yz[:, None, :], 2, axis=1), spans=(1, 1))
    bases = (StrainBasis.create(("kx", "ky", "kz", "sx"), {"ky": 1, "kz": 1}), StrainBasis.create("pcc", 0))
    return GVS(params, bases, actuation=tendons)


def conical_arm_markers(model: GVS, q: Float[Array, " n"]) -> Float[Array, "4 3"]:
    """World positions [m] of the four markers of :data:`CONICAL_ARM_MARKERS` (a marker
    past the tip is carried by the tip frame)."""
    L = model.total_length
    s = jnp.asarray([m[0] for m in CONICAL_ARM_MARKERS], q.dtype)
    offsets = jnp.asarray([(0.0, *m[1]) for m in CONICAL_ARM_MARKERS], q.dtype)
    offsets = offsets.at[:, 0].add(jnp.maximum(s - L, 0.0))
    poses = model.forward_kinematics_batched(q, jnp.minimum(s, L))
    return poses[:, :3, 3] + jnp.einsum("pij,pj->pi", poses[:, :3, :3], offsets)
