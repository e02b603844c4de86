"""Fluid forces on slender bodies, per unit length of a rod's backbone (world frame, SI).

A fluid law gives a force per unit length [N/m] at backbone points (a :class:`Probe`:
positions, velocities ``v``, cross-section radii ``r`` and unit tangents ``t``); the total
is the integral over the backbone, evaluated with Gauss-Legendre points per segment
(:func:`backbone_quadrature`) and mapped to a generalized force by :func:`fluid_force`,
which sums several laws. With ``w = v - U`` the velocity relative to a uniform, steady
current ``U`` [m/s], ``w_t = (w . t) t`` its tangential and ``w_n = w - w_t`` its normal
part:

* :class:`ResistiveForceTheory` (viscous, linear)::

      f = -(c_t w_t + c_n w_n)

  ``c_t``, ``c_n`` [N s/m^2]; for a slender filament ``c_n`` is about twice ``c_t``, and
  their ratio is what makes undulation propel a swimmer.
* :class:`MorisonDrag` (inertial, quadratic) on a cylinder of diameter ``2 r``::

      f = -1/2 rho C_n (2 r) |w_n| w_n - 1/2 rho C_t (2 pi r) |w_t| w_t

  ``rho`` [kg/m^3], ``C_n`` and ``C_t`` dimensionless: the normal drag coefficient on the
  projected area, the tangential (skin-friction) coefficient on the wetted perimeter.
* :class:`Buoyancy`: ``f = -rho pi r^2 g``, the weight of the displaced fluid reversed
  (fully submerged backbone, acting on the cross-section's centroid; the end caps and any
  free surface are ignored).

Added mass is an inertia, not a force: :func:`added_mass_matrix` gives the generalized
matrix ``M_a(q)`` to add to the model's ``M(q)``.

Quadrature: ``k`` points per segment integrate polynomials of degree ``2 k - 1`` exactly.
On a straight rod in rigid motion the drag integrand is linear (RFT) or quadratic (Morison)
in ``s`` and the buoyancy constant, so two points per segment give them exactly.
"""

from __future__ import annotations

from collections.abc import Sequence

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ..lie import safe_norm
from ._geometry import _vector
from ._ground import Probe, generalized_force
from ._laws import _checked


def _split(w: Float[Array, "P 3"], t: Float[Array, "P 3"]) -> tuple[Array, Array]:
    """``(w . t (P,), w_n (P, 3))``: axial component and normal part of ``w``."""
    along = jnp.sum(w * t, axis=-1)
    return along, w - along[:, None] * t


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
        self.current = _vector("current", current, 3, dtype)

    def line_forces(self, velocities: Float[Array, "P 3"], tangents: Float[Array, "P 3"]) -> Float[Array, "P 3"]:
        """Drag per unit length ``(P, 3)`` [N/m] at backbone points moving at ``velocities``
        ``(P, 3)`` [m/s] with unit tangents ``(P, 3)``."""
        along, normal = _split(velocities - self.current, tangents)
        return -(self.tangential * along[:, None] * tangents + self.normal * normal)

    def per_length(self, probe: Probe) -> Float[Array, "P 3"]:
        """Drag per unit length ``(P, 3)`` [N/m] at the probe points."""
        return self.line_forces(probe.velocities, probe.axes)


class MorisonDrag(eqx.Module):
    """Quadratic drag per unit length on a cylinder of the probe's local radius (module
    docstring): ``-1/2 rho C_n (2 r) |w_n| w_n`` normal to the backbone, ``-1/2 rho C_t
    (2 pi r) |w_t| w_t`` along it.

    ``|w| w`` is continuously differentiable with a zero Jacobian at ``w = 0``, and the norm
    is evaluated so that its gradient there is finite (zero): no regularisation, the closed
    forms hold exactly.

    Args:
        density: ``rho`` [kg/m^3] of the fluid (non-negative).
        normal_coefficient: ``C_n`` (dimensionless, non-negative), on the projected area
            ``2 r`` per unit length (about 1 for a cylinder in cross-flow at moderate
            Reynolds numbers).
        tangential_coefficient: ``C_t`` (dimensionless, non-negative), on the wetted
            perimeter ``2 pi r`` per unit length.
        current: ``(3,)`` uniform flow velocity [m/s] (world frame).
        dtype: floating dtype of the parameters.

    Raises ``ValueError`` naming the field for negative or non-finite values.
    """

    density: Float[Array, ""]
    normal_coefficient: Float[Array, ""]
    tangential_coefficient: Float[Array, ""]
    current: Float[Array, " 3"]

    def __init__(self, density, normal_coefficient, tangential_coefficient=0.0, current=(0.0, 0.0, 0.0), dtype=None):
        dtype = dtype or jnp.result_type(float)
        self.density = _checked("density", density, dtype, shape=())
        self.normal_coefficient = _checked("normal_coefficient", normal_coefficient, dtype, shape=())
        self.tangential_coefficient = _checked("tangential_coefficient", tangential_coefficient, dtype, shape=())
        self.current = _vector("current", current, 3, dtype)

    def line_forces(
        self, velocities: Float[Array, "P 3"], tangents: Float[Array, "P 3"], radii: Float[Array, " P"]
    ) -> Float[Array, "P 3"]:
        """Drag per unit length ``(P, 3)`` [N/m] at backbone points moving at ``velocities``
        ``(P, 3)`` [m/s] with unit tangents ``(P, 3)`` and radii ``(P,)`` [m]."""
        along, normal = _split(velocities - self.current, tangents)
        normal_part = self.normal_coefficient * safe_norm(normal)[:, None] * normal
        axial_part = (jnp.pi * self.tangential_coefficient * jnp.abs(along) * along)[:, None] * tangents
        return -(self.density * radii)[:, None] * (normal_part + axial_part)

    def per_length(self, probe: Probe) -> Float[Array, "P 3"]:
        """Drag per unit length ``(P, 3)`` [N/m] at the probe points."""
        return self.line_forces(probe.velocities, probe.axes, probe.radii)


class Buoyancy(eqx.Module):
    """Buoyancy per unit length ``-rho pi r^2 g`` [N/m] of a fully submerged backbone of
    local radius ``r`` (module docstring).

    Args:
        density: ``rho`` [kg/m^3] of the fluid (non-negative).
        gravity: ``(3,)`` gravitational acceleration [m/s^2] in the world frame: pass the
            model's (``model.params.gravity``) so buoyancy opposes its weight.
        dtype: floating dtype of the parameters.

    Raises ``ValueError`` naming the field for a negative or non-finite density or a
    gravity that is not a finite 3-vector.
    """

    density: Float[Array, ""]
    gravity: Float[Array, " 3"]

    def __init__(self, density, gravity=(0.0, 0.0, -9.81), dtype=None):
        dtype = dtype or jnp.result_type(float)
        self.density = _checked("density", density, dtype, shape=())
        self.gravity = _vector("gravity", gravity, 3, dtype)

    def line_forces(self, radii: Float[Array, " P"]) -> Float[Array, "P 3"]:
        """Buoyancy per unit length ``(P, 3)`` [N/m] of cross-sections of radii ``(P,)`` [m]."""
        return -(self.density * jnp.pi * radii**2)[:, None] * self.gravity

    def per_length(self, probe: Probe) -> Float[Array, "P 3"]:
        """Buoyancy per unit length ``(P, 3)`` [N/m] at the probe points."""
        return self.line_forces(probe.radii)


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


def fluid_force(laws, probe: Probe, weights: Float[Array, " P"]) -> tuple[Array, Array]:
    """``(generalized force (n,), point forces (P, 3) [N])`` of one fluid law or the sum of
    a sequence of them (:class:`ResistiveForceTheory`, :class:`MorisonDrag`,
    :class:`Buoyancy`: anything with ``per_length(probe) -> (P, 3)`` [N/m]) on the backbone
    probed at quadrature points with ``weights`` ``(P,)`` [m] (:func:`backbone_quadrature`).
    Raises ``ValueError`` for an empty sequence."""
    laws = tuple(laws) if isinstance(laws, Sequence) else (laws,)
    if not laws:
        raise ValueError("laws: expected a fluid law or a non-empty sequence of them")
    per_length = laws[0].per_length(probe)
    for law in laws[1:]:
        per_length = per_length + law.per_length(probe)
    forces = per_length * weights[:, None]
    return generalized_force(probe, forces), forces


def added_mass_matrix(probe: Probe, weights: Float[Array, " P"], density, coefficient=1.0) -> Float[Array, "n n"]:
    """Generalized added-mass matrix ``(n, n)`` of the backbone probed at quadrature points
    with ``weights`` ``(P,)`` [m] (:func:`backbone_quadrature`)::

        M_a(q) = sum_k w_k J_v,k^T (C_a rho pi r_k^2 (I - t_k t_k^T)) J_v,k

    (per unit length, the fluid accelerated with the cross-section's normal motion; none
    along the axis). ``density`` ``rho`` [kg/m^3], ``coefficient`` ``C_a`` (dimensionless,
    1 for a circular cylinder in potential flow); symmetric positive semi-definite,
    [kg], [kg m], [kg m^2] entries as the coordinates require.

    Use: the hydrodynamic force ``-M_a(q) qdd`` moves to the left-hand side, so the
    accelerations solve ``(M(q) + M_a(q)) qdd = tau - C(q, qd) qd - ...``. The models and
    the fixed-step integrators take ``M`` from the model and know nothing of it; solve that
    system yourself (or integrate with your own step). Left out: the velocity-dependent
    part of the fluid's inertial force (``J_v' qd`` and the rotation of the normal
    projector), small for slow motions.

    Raises ``ValueError`` naming ``density`` or ``coefficient`` when negative or non-finite.
    """
    dtype = probe.jacobians.dtype
    rho = _checked("density", density, dtype, shape=())
    c_a = _checked("coefficient", coefficient, dtype, shape=())
    t = probe.axes
    normal_rows = probe.jacobians - t[:, :, None] * jnp.einsum("pc,pcn->pn", t, probe.jacobians)[:, None, :]
    per_point = c_a * rho * jnp.pi * probe.radii**2 * weights  # (P,) [kg]
    return jnp.einsum("p,pcn,pcm->nm", per_point, normal_rows, normal_rows)


__all__ = [
    "Buoyancy",
    "MorisonDrag",
    "ResistiveForceTheory",
    "added_mass_matrix",
    "backbone_quadrature",
    "fluid_force",
]
