"""Singularity-safe trigonometric coefficients of the Lie-group closed forms.

Every closed form on SO(3), SE(3) and SE(2) used here is a combination of three even
functions of the rotation angle ``theta``::

    a(theta) = sin(theta) / theta
    b(theta) = (1 - cos(theta)) / theta**2
    c(theta) = (theta - sin(theta)) / theta**3

They are removable singularities at ``theta = 0``. We evaluate them as functions of
``rho = theta**2`` (so no square root is needed for the branch test nor for the
Taylor branch) with a *safe branch*: for ``rho`` below a threshold the closed form is never
evaluated at the singular input; it is given a substituted, harmless argument, and a
Taylor polynomial in ``rho`` supplies the value. The selection uses ``jnp.where`` on
already-safe operands, which is the form of a true conditional that stays correct under
``vmap`` (where ``lax.cond`` degenerates to a select of both branches) and under forward-
and reverse-mode AD: no NaN or infinity is produced in either branch, so none can leak
into a gradient.

The threshold ``theta < 1`` is chosen so that both branches are accurate in float32 and
float64: the Taylor polynomial (nine terms) has a truncation error below 1e-17 for
``rho <= 1``, and above it the closed forms lose at most ~1e-14 (x64) to cancellation,
including in their first two derivatives.
"""

from __future__ import annotations

import math

import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float

# Branch threshold on rho = theta**2.
RHO_SWITCH = 1.0
_NUM_TAYLOR_TERMS = 9


def _taylor(rho: Array, first_factorial: int) -> Array:
    """sum_k (-1)^k rho^k / (2k + first_factorial)!, by Horner's rule."""
    coeffs = [
        (-1.0) ** k / math.factorial(2 * k + first_factorial)
        for k in range(_NUM_TAYLOR_TERMS)
    ]
    out = jnp.full_like(rho, coeffs[-1])
    for c in reversed(coeffs[:-1]):
        out = out * rho + c
    return out


def _safe(rho: Array) -> tuple[Array, Array, Array]:
    """Return (is_small, theta_safe, rho_safe) with the singular inputs replaced."""
    small = rho < RHO_SWITCH
    rho_safe = jnp.where(small, 2.0 * RHO_SWITCH, rho)
    return small, jnp.sqrt(rho_safe), rho_safe


def sinc_a(rho: Float[ArrayLike, "*b"]) -> Float[Array, "*b"]:
    """``sin(theta)/theta`` as a function of ``rho = theta**2`` (dimensionless)."""
    rho = jnp.asarray(rho)
    small, th, _ = _safe(rho)
    return jnp.where(small, _taylor(rho, 1), jnp.sin(th) / th)


def cosc_b(rho: Float[ArrayLike, "*b"]) -> Float[Array, "*b"]:
    """``(1 - cos(theta))/theta**2`` as a function of ``rho = theta**2``."""
    rho = jnp.asarray(rho)
    small, th, r = _safe(rho)
    return jnp.where(small, _taylor(rho, 2), (1.0 - jnp.cos(th)) / r)


def sinc_c(rho: Float[ArrayLike, "*b"]) -> Float[Array, "*b"]:
    """``(theta - sin(theta))/theta**3`` as a function of ``rho = theta**2``."""
    rho = jnp.asarray(rho)
    small, th, r = _safe(rho)
    return jnp.where(small, _taylor(rho, 3), (th - jnp.sin(th)) / (r * th))


def safe_norm(x: Float[ArrayLike, "*b n"], axis: int = -1) -> Float[Array, "*b"]:
    """Euclidean norm whose value and gradient are finite (zero) at ``x = 0``."""
    x = jnp.asarray(x)
    sq = jnp.sum(x * x, axis=axis)
    zero = sq <= 0.0
    return jnp.where(zero, 0.0, jnp.sqrt(jnp.where(zero, 1.0, sq)))
