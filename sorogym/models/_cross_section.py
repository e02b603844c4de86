"""Cross-section laws of the rod models (PCS and GVS): solid circles and, for GVS links,
solid rectangles.

A circle of radius ``r`` has area ``A = pi r^2``, second moments ``I = pi r^4 / 4`` and
polar moment ``J = pi r^4 / 2``, which is also its torsion constant. Ordered like the strain
(spatial ``[kx, ky, kz, sx, sy, sz]``, planar ``[k, sx, sy]``), per unit length:

* mass: ``rho [J, I, I, A, A, A]`` (planar ``rho [I, A, A]``);
* Hookean stiffness: ``[G J, E I, E I, E A, G A, G A]`` (planar ``[E I, E A, G A]``);
* Kelvin-Voigt damping for a shear viscosity ``eta`` [Pa s]: ``eta [J, 3 I, 3 I, 3 A, A, A]``
  (planar ``eta [3 I, 3 A, A]``): bending and stretching see the extensional viscosity
  ``3 eta`` of an incompressible material (Trouton's ratio), torsion and shear ``eta``.

A rectangle of ``width`` ``w`` along the section's local y and ``thickness`` ``t`` along its
local z (a leaf spring: bending about y, ``ky``, is the soft direction when ``t < w``) has
``A = w t``, ``I_y = w t^3 / 12``, ``I_z = t w^3 / 12``. Its rotational inertia about the
centreline is the polar moment ``I_y + I_z``, but its torsional stiffness is Saint-Venant's
torsion constant, smaller: ``J_t = a b^3 (1/3 - 0.21 (b/a) (1 - (b/a)^4 / 12))`` with
``a = max(w, t)``, ``b = min(w, t)`` (Roark's approximation: within 0.5 % of the series
solution for every aspect ratio; ``a b^3 / 3`` for a thin strip). Mass moments
``[I_y + I_z, I_y, I_z, A, A, A]``, stiffness (and damping) moments
``[J_t, I_y, I_z, A, A, A]``. Shear uses the full area, like the circle (no shear
correction factor).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

#: Viscosity multipliers per strain component (Trouton's ratio on bending and stretching).
VISCOUS_FACTORS = {
    False: np.array([1.0, 3.0, 3.0, 3.0, 1.0, 1.0]),
    True: np.array([3.0, 3.0, 1.0]),
}


def section_moments(radius: Float[Array, "..."], planar: bool) -> Float[Array, "... d"]:
    """``(..., d)`` cross-section moments ordered like the strain: ``[J, I, I, A, A, A]``
    (spatial) or ``[I, A, A]`` (planar) [m^4, m^2]."""
    A = jnp.pi * radius**2
    I = jnp.pi * radius**4 / 4.0  # noqa: E741 (the second moment's usual name)
    if planar:
        return jnp.stack([I, A, A], axis=-1)
    return jnp.stack([2.0 * I, I, I, A, A, A], axis=-1)


def rectangle_moments(
    width: Float[Array, "..."], thickness: Float[Array, "..."]
) -> tuple[Float[Array, "... 6"], Float[Array, "... 6"]]:
    """Spatial moments of a solid rectangle (module docstring), ordered like the strain:
    ``(mass_moments, stiffness_moments)``, each ``(..., 6)`` [m^4, m^2]:
    ``[I_y + I_z, I_y, I_z, A, A, A]`` and ``[J_t, I_y, I_z, A, A, A]``; ``width`` [m] along
    the local y axis, ``thickness`` [m] along z."""
    w, t = jnp.asarray(width), jnp.asarray(thickness)
    A = w * t
    Iy, Iz = w * t**3 / 12.0, t * w**3 / 12.0
    a, b = jnp.maximum(w, t), jnp.minimum(w, t)
    ratio = b / a
    Jt = a * b**3 * (1.0 / 3.0 - 0.21 * ratio * (1.0 - ratio**4 / 12.0))
    mass = jnp.stack([Iy + Iz, Iy, Iz, A, A, A], axis=-1)
    return mass, jnp.stack([Jt, Iy, Iz, A, A, A], axis=-1)


def elastic_moduli(
    young_modulus: Float[Array, "..."], shear_modulus: Float[Array, "..."], planar: bool
) -> Float[Array, "... d"]:
    """``(..., d)`` moduli [Pa] that multiply :func:`section_moments` into the stiffness per
    unit length: ``[G, E, E, E, G, G]`` (spatial) or ``[E, E, G]`` (planar)."""
    E, G = young_modulus, shear_modulus
    if planar:
        return jnp.stack([E, E, G], axis=-1)
    return jnp.stack([G, E, E, E, G, G], axis=-1)
