"""Spatial PCS arms with straight tendons on a ring around the backbone (the tendon-driven
reaching arms of the environment suite)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ..actuation import Tendons
from ..models import PCS, RodParams, check_positive_fields


def ring_offsets(radius: float, angles_deg) -> np.ndarray:
    """Cross-section offsets ``(m, 2)`` ``[y, z] = radius [cos, sin](angle)`` [m] for each
    angle [deg] (measured from the cross-section's local y axis)."""
    a = np.deg2rad(np.asarray(angles_deg, dtype=float))
    return radius * np.stack([np.cos(a), np.sin(a)], axis=-1)


def tendon_ring_pcs(config, mounting: str, dtype, active_strains=None) -> PCS:
    """A spatial PCS rod with straight tendons on a ring, from a description with the
    attributes ``segment_lengths`` [m], ``radius`` [m], ``density`` [kg/m^3],
    ``young_modulus`` [Pa], ``shear_modulus`` [Pa] or ``poisson_ratio``, per-strain
    ``damping`` ``(6,)`` per unit length, ``gravity`` ``(3,)`` [m/s^2], ``tendon_offset`` [m]
    (inside the cross-section), ``tendon_angles_deg`` and ``tendon_spans`` (segments each
    tendon runs through; ``None``: all). Every segment gets the same damping and tendon
    offsets; ``mounting`` names the base pose (``"upright"``, ``"hanging"``, ``"horizontal"``)."""
    check_positive_fields(config, ("segment_lengths", "radius", "tendon_offset"))
    if config.tendon_offset >= config.radius:
        raise ValueError(f"tendon_offset: must be inside the cross-section (< radius {config.radius})")
    if len(config.damping) != 6:
        raise ValueError(f"damping: expected 6 per-strain coefficients, got {len(config.damping)}")
    N = len(config.segment_lengths)
    elastic = {"young_modulus": config.young_modulus}
    if hasattr(config, "shear_modulus"):
        elastic["shear_modulus"] = config.shear_modulus
    else:
        elastic["poisson_ratio"] = config.poisson_ratio
    params = RodParams.create(
        length=list(config.segment_lengths),
        radius=config.radius,
        density=config.density,
        **elastic,
        damping=np.tile(np.asarray(config.damping), (N, 1)),
        gravity=list(config.gravity),
        mounting=mounting,
        dtype=dtype,
    )
    ring = ring_offsets(config.tendon_offset, config.tendon_angles_deg)  # (m, 2)
    offsets = np.repeat(ring[:, None, :], N, axis=1)
    tendons = Tendons(jnp.asarray(offsets, dtype), spans=config.tendon_spans)
    return PCS(params, active_strains=active_strains, actuation=tendons)
