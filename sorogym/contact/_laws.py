"""A compliant contact law with regularised, optionally anisotropic Coulomb friction.

Per contact point, world frame, SI units. With the penetration depth ``delta`` [m] (positive
when the surfaces overlap), its rate ``delta_dot`` [m/s] and the point's velocity ``v``
[m/s] relative to the surface whose outward unit normal is ``n``:

* **Normal force** (Hunt-Crossley form, linear in the depth)::

      f_n = max(k delta (1 + d delta_dot), 0)   for delta > 0,   0 otherwise

  ``k`` [N/m] the stiffness, ``d`` [s/m] the damping per unit approach speed. The force is
  continuous at contact onset (no impulse, finite derivatives) and never pulls. A body of
  weight ``W`` at rest on one point sinks by ``W / k``.

* **Friction** (regularised Coulomb). The tangential velocity ``v_t = v - (v . n) n`` is
  replaced by the smooth unit vector ``u = v_t / sqrt(|v_t|^2 + eps^2)`` (``eps`` [m/s] the
  slip velocity): ``|f_t| = mu f_n`` once the point slides faster than a few ``eps``, and
  below a friction limit the point creeps at a speed of order ``eps`` instead of sticking
  exactly (``v = eps r / sqrt(1 - r^2)`` for a tangential load ``r mu f_n``, ``r < 1``).
  Isotropic: ``f_t = -mu f_n u``. Anisotropic (snakes, inchworms, scales): with a unit
  direction ``a`` per point (a rod's local axis, tip-ward), projected on the tangent plane
  as ``t`` and with ``l = n x t``::

      f_t = -f_n (mu_a(u . t) (u . t) t + mu_lateral (u . l) l),
      mu_a = mu_backward + (mu_forward - mu_backward) (1 + tanh(v_t . t / eps)) / 2

  so a point sliding along ``+a`` feels ``mu_forward``, along ``-a`` ``mu_backward`` and
  sideways ``mu_lateral``.
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

_TINY = 1e-30


def _checked(name: str, value, dtype, *, positive: bool = False, shape=None) -> Array:
    """``value`` as an array of ``dtype``, validated when concrete: finite, non-negative
    (or positive), of ``shape`` if given; ``ValueError`` naming ``name`` otherwise."""
    array = jnp.asarray(value, dtype)
    if shape is not None and array.shape != shape:
        raise ValueError(f"{name}: expected shape {shape}, got {array.shape}")
    try:
        concrete = np.asarray(array)
    except Exception:  # traced: checked where it was concrete
        return array
    if not np.all(np.isfinite(concrete)):
        raise ValueError(f"{name}: must be finite, got {concrete}")
    if positive and not np.all(concrete > 0):
        raise ValueError(f"{name}: must be positive, got {concrete}")
    if not np.all(concrete >= 0):
        raise ValueError(f"{name}: must be non-negative, got {concrete}")
    return array


class ContactLaw(eqx.Module):
    """Compliant normal force and regularised Coulomb friction (module docstring).

    Args:
        stiffness: ``k`` [N/m] per contact point (positive).
        damping: ``d`` [s/m], the Hunt-Crossley damping per unit approach speed.
        friction: one coefficient (isotropic) or ``(mu_forward, mu_backward, mu_lateral)``
            (anisotropic along a direction given per point).
        slip_velocity: ``eps`` [m/s] (positive), the regularisation of the stick-slip
            transition.
        dtype: floating dtype of the parameters (default: JAX's default float).

    Every field is an array leaf: a vmapped batch of laws randomises contact per env
    without recompiling. Raises ``ValueError`` naming the field for negative or non-finite
    values, a non-positive stiffness or slip velocity, or a friction of another length.
    """

    stiffness: Float[Array, ""]
    damping: Float[Array, ""]
    friction: Float[Array, " 3"]  # [forward, backward, lateral]
    slip_velocity: Float[Array, ""]
    anisotropic: bool = eqx.field(static=True)

    def __init__(self, stiffness, damping=0.0, friction=0.0, slip_velocity=1e-3, dtype=None):
        dtype = dtype or jnp.result_type(float)
        self.stiffness = _checked("stiffness", stiffness, dtype, positive=True, shape=())
        self.damping = _checked("damping", damping, dtype, shape=())
        mu = jnp.asarray(friction, dtype)
        if mu.shape not in ((), (3,)):
            raise ValueError(
                f"friction: one coefficient or (mu_forward, mu_backward, mu_lateral), got shape {mu.shape}"
            )
        self.anisotropic = mu.shape == (3,)
        self.friction = _checked("friction", jnp.broadcast_to(mu, (3,)), dtype)
        self.slip_velocity = _checked("slip_velocity", slip_velocity, dtype, positive=True, shape=())

    def normal_force(self, depth: Float[Array, " P"], depth_rate: Float[Array, " P"]) -> Float[Array, " P"]:
        """``f_n`` ``(P,)`` [N] of penetration depths ``(P,)`` [m] and their rates [m/s]."""
        depth = jnp.maximum(depth, 0.0)
        return jnp.maximum(self.stiffness * depth * (1.0 + self.damping * depth_rate), 0.0)

    def friction_force(
        self,
        normal_force: Float[Array, " P"],
        velocity: Float[Array, "P 3"],
        normal: Float[Array, "P 3"],
        axis: Float[Array, "P 3"] | None = None,
    ) -> Float[Array, "P 3"]:
        """Friction forces ``(P, 3)`` [N] on points moving at ``velocity`` ``(P, 3)`` [m/s]
        over surfaces with unit normals ``normal`` ``(P, 3)``; ``axis`` ``(P, 3)`` (any
        length) the forward direction of an anisotropic law."""
        eps = self.slip_velocity
        v_t = velocity - jnp.sum(velocity * normal, axis=-1, keepdims=True) * normal
        u = v_t / jnp.sqrt(jnp.sum(v_t * v_t, axis=-1, keepdims=True) + eps * eps)
        if not self.anisotropic:
            return -(self.friction[0] * normal_force)[:, None] * u
        if axis is None:
            raise ValueError("axis: an anisotropic contact law needs a forward direction per point")
        t = axis - jnp.sum(axis * normal, axis=-1, keepdims=True) * normal
        t = t / jnp.sqrt(jnp.sum(t * t, axis=-1, keepdims=True) + _TINY)
        lateral = jnp.cross(normal, t)
        u_a, u_l = jnp.sum(u * t, axis=-1), jnp.sum(u * lateral, axis=-1)
        forward = 0.5 * (1.0 + jnp.tanh(jnp.sum(v_t * t, axis=-1) / eps))
        mu_f, mu_b, mu_l = self.friction[0], self.friction[1], self.friction[2]
        mu_a = mu_b + (mu_f - mu_b) * forward
        return -normal_force[:, None] * ((mu_a * u_a)[:, None] * t + (mu_l * u_l)[:, None] * lateral)

    def forces(
        self,
        depth: Float[Array, " P"],
        velocity: Float[Array, "P 3"],
        normal: Float[Array, "P 3"],
        axis: Float[Array, "P 3"] | None = None,
    ) -> tuple[Float[Array, "P 3"], Float[Array, " P"]]:
        """``(total contact forces (P, 3) [N] on the points, normal forces (P,) [N])``:
        the depth rate is ``-(v . n)`` (approaching a surface deepens the contact)."""
        f_n = self.normal_force(depth, -jnp.sum(velocity * normal, axis=-1))
        return f_n[:, None] * normal + self.friction_force(f_n, velocity, normal, axis), f_n
