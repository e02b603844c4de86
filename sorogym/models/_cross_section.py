"""Cross-section laws of the rod models (PCS and GVS): solid circular sections.

A section of radius ``r`` has area ``A = pi r^2``, second moments ``I = pi r^4 / 4`` and
polar moment ``J = pi r^4 / 2``. Ordered like the strain (spatial
``[kx, ky, kz, sx, sy, sz]``, planar ``[k, sx, sy]``), per unit length:

* mass: ``rho [J, I, I, A, A, A]`` (planar ``rho [I, A, A]``);
* Hookean stiffness: ``[G J, E I, E I, E A, G A, G A]`` (planar ``[E I, E A, G A]``);
* Kelvin-Voigt damping for a shear viscosity ``eta`` [Pa s]: ``eta [J, 3 I, 3 I, 3 A, A, A]``
  (planar ``eta [3 I, 3 A, A]``): bending and stretching see the extensional viscosity
  ``3 eta`` of an incompressible material (Trouton's ratio), torsion and shear ``eta``.
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


def elastic_moduli(
    young_modulus: Float[Array, "..."], shear_modulus: Float[Array, "..."], planar: bool
) -> Float[Array, "... d"]:
    """``(..., d)`` moduli [Pa] that multiply :func:`section_moments` into the stiffness per
    unit length: ``[G, E, E, E, G, G]`` (spatial) or ``[E, E, G]`` (planar)."""
    E, G = young_modulus, shear_modulus
    if planar:
        return jnp.stack([E, E, G], axis=-1)
    return jnp.stack([G, E, E, E, G, G], axis=-1)
