"""SO(3): skew-symmetric maps, exponential and logarithm (Rodrigues form).

Rotation vectors ``w`` are in radians (or rad/m for curvatures); rotation matrices map
body-frame vectors to the parent frame.
"""

from __future__ import annotations

import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float

from ._coefficients import cosc_b, safe_norm, sinc_a


def hat(w: Float[ArrayLike, "*b 3"]) -> Float[Array, "*b 3 3"]:
    """Skew-symmetric matrix ``[w]x`` with ``hat(w) @ x == cross(w, x)``."""
    w = jnp.asarray(w)
    z = jnp.zeros_like(w[..., 0])
    wx, wy, wz = w[..., 0], w[..., 1], w[..., 2]
    return jnp.stack(
        [
            jnp.stack([z, -wz, wy], axis=-1),
            jnp.stack([wz, z, -wx], axis=-1),
            jnp.stack([-wy, wx, z], axis=-1),
        ],
        axis=-2,
    )


def vee(W: Float[ArrayLike, "*b 3 3"]) -> Float[Array, "*b 3"]:
    """Inverse of :func:`hat` (reads the lower-triangular entries)."""
    W = jnp.asarray(W)
    return jnp.stack([W[..., 2, 1], W[..., 0, 2], W[..., 1, 0]], axis=-1)


def exp(w: Float[ArrayLike, "3"]) -> Float[Array, "3 3"]:
    """Rotation matrix ``exp([w]x) = I + a [w]x + b [w]x^2`` (Rodrigues)."""
    w = jnp.asarray(w)
    rho = jnp.dot(w, w)
    W = hat(w)
    eye = jnp.eye(3, dtype=W.dtype)
    return eye + sinc_a(rho) * W + cosc_b(rho) * (W @ W)


def log(R: Float[ArrayLike, "3 3"]) -> Float[Array, "3"]:
    """Rotation vector ``w`` with ``exp(w) == R`` and ``|w| <= pi``.

    Uses ``theta = atan2(sin, cos)``, the skew part away from ``theta = pi`` and the
    symmetric part near it; finite values and gradients at the identity.
    """
    R = jnp.asarray(R)
    skew = 0.5 * vee(R - R.T)  # = sin(theta) * axis
    sin_t = safe_norm(skew)
    cos_t = 0.5 * (jnp.trace(R) - 1.0)
    theta = jnp.arctan2(sin_t, cos_t)
    # Regular branch: w = skew / a(theta), a = sin(theta)/theta; fine up to near pi.
    near_pi = theta > 3.0
    theta_reg = jnp.where(near_pi, 0.0, theta)
    w_regular = skew / sinc_a(theta_reg * theta_reg)
    # Near pi: axis from the symmetric part (R + I)/2 = cos I + (1 - cos) n n^T... use
    # B = (R + R^T)/2 - cos I = (1 - cos) n n^T; take the column with largest diagonal.
    eye = jnp.eye(3, dtype=R.dtype)
    Bsym = 0.5 * (R + R.T) - jnp.where(near_pi, cos_t, 0.0) * eye
    k = jnp.argmax(jnp.diagonal(Bsym))
    col = Bsym[:, k]
    col_norm = jnp.where(near_pi, safe_norm(col), 1.0)
    axis = col / jnp.where(col_norm > 0.0, col_norm, 1.0)
    # Fix the sign of the axis with the skew part (sin(theta) * axis).
    sign = jnp.where(jnp.dot(axis, skew) < 0.0, -1.0, 1.0)
    w_pi = sign * theta * axis
    return jnp.where(near_pi, w_pi, w_regular)
