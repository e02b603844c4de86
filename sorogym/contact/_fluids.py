"""Fluid forces on slender bodies: resistive force theory (RFT) along a rod's backbone.

Per unit length of backbone, world frame, SI units. With the backbone's unit tangent ``t``
and the velocity of the backbone point relative to a uniform current ``U``,
``w = v - U`` [m/s], the drag per unit length [N/m] is::

    f = -(c_t (w . t) t + c_n (w - (w . t) t))

with the tangential and normal drag coefficients ``c_t`` and ``c_n`` [N s/m^2] (for a
slender filament in a viscous fluid, ``c_n`` is about twice ``c_t``; their ratio is what
makes undulation propel a swimmer). The total force is the integral over the backbone,
evaluated with Gauss-Legendre points per segment (:func:`backbone_quadrature`): exact for
the drag on a straight rod in rigid motion, whose integrand is linear in ``s``.
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ._ground import Probe, generalized_force
from ._laws import _checked


class ResistiveForceTheory(eqx.Module):
    """Linear anisotropic drag per unit length of backbone (module docstring).

    Args:
        tangential: ``c_t`` [N s/m^2] (non-negative).
        normal: ``c_n`` [N s/m^2] (non-negative).
        current: ``(3,)`` uniform flow velocity [m/s] (world frame).
        dtype: floating dtype of the parameters.

    Raises ``ValueError`` naming the field for negative or non-finite values.
    """

    tangential: Float[Array, ""]
    normal: Float[Array, ""]
    current: Float[Array, " 3"]

    def __init__(self, tangential, normal, current=(0.0, 0.0, 0.0), dtype=None):
        dtype = dtype or jnp.result_type(float)
        self.tangential = _checked("tangential", tangential, dtype, shape=())
        self.normal = _checked("normal", normal, dtype, shape=())
        flow = jnp.asarray(current, dtype)
        if flow.shape != (3,) or not np.all(np.isfinite(np.asarray(flow))):
            raise ValueError(f"current: a finite 3-vector [m/s], got {current!r}")
        self.current = flow

    def line_forces(self, velocities: Float[Array, "P 3"], tangents: Float[Array, "P 3"]) -> Float[Array, "P 3"]:
        """Drag per unit length ``(P, 3)`` [N/m] at backbone points moving at ``velocities``
        ``(P, 3)`` [m/s] with unit tangents ``(P, 3)``."""
        w = velocities - self.current
        along = jnp.sum(w * tangents, axis=-1, keepdims=True) * tangents
        return -(self.tangential * along + self.normal * (w - along))


def backbone_quadrature(lengths, points_per_segment: int = 3, dtype=None) -> tuple[Array, Array]:
    """Gauss-Legendre abscissae ``s`` ``(N k,)`` [m] and weights ``(N k,)`` [m] along a
    backbone of segments ``lengths`` ``(N,)`` [m], ``k`` points per segment (exact for
    polynomials of degree ``2 k - 1`` in ``s`` on each segment)."""
    lengths = np.asarray(lengths, float).reshape(-1)
    if points_per_segment < 1:
        raise ValueError(f"points_per_segment: at least 1, got {points_per_segment}")
    x, w = np.polynomial.legendre.leggauss(points_per_segment)
    starts = np.concatenate([[0.0], np.cumsum(lengths)[:-1]])
    s = (starts[:, None] + 0.5 * (x[None, :] + 1.0) * lengths[:, None]).ravel()
    weights = (0.5 * w[None, :] * lengths[:, None]).ravel()
    dtype = dtype or jnp.result_type(float)
    return jnp.asarray(s, dtype), jnp.asarray(weights, dtype)


def fluid_force(rft: ResistiveForceTheory, probe: Probe, weights: Float[Array, " P"]) -> tuple[Array, Array]:
    """``(generalized force (n,), point forces (P, 3) [N])`` of the drag on the backbone
    probed at quadrature points with ``weights`` ``(P,)`` [m] (:func:`backbone_quadrature`)."""
    forces = rft.line_forces(probe.velocities, probe.axes) * weights[:, None]
    return generalized_force(probe, forces), forces


__all__ = ["ResistiveForceTheory", "backbone_quadrature", "fluid_force"]
