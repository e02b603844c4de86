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


# -- batched table for the fused kernels ----------------------------------------------

# Below this rho the table uses Taylor polynomials (12 terms, truncation < 1e-17 up to the
# second derivatives); above it the closed forms, whose recurrences lose at most ~1e-12
# (x64) to cancellation in the second derivatives at the switch.
TABLE_RHO_SWITCH = 2.25
_TABLE_TERMS = 12


def _series_rows(rho: Array, first_factorial: int) -> tuple[Array, Array, Array]:
    """Value and first two rho-derivatives of sum_k (-1)^k rho^k / (2k + f)!."""
    c = [(-1.0) ** k / math.factorial(2 * k + first_factorial) for k in range(_TABLE_TERMS)]

    def horner(coeffs):
        out = jnp.full_like(rho, coeffs[-1])
        for cf in reversed(coeffs[:-1]):
            out = out * rho + cf
        return out

    d1 = [k * c[k] for k in range(1, _TABLE_TERMS)]
    d2 = [k * (k - 1) * c[k] for k in range(2, _TABLE_TERMS)]
    return horner(c), horner(d1), horner(d2)


def coefficient_table(rho: Float[ArrayLike, "*b"]) -> Float[Array, "9 *b"]:
    """Rows ``[a, b, c, a', b', c', a'', b'', c'']`` (derivatives with respect to
    ``rho = theta**2``) of the three coefficients, from one ``sin``/``cos``/``sqrt`` per
    entry, with the same safe-branch construction as the scalar functions."""
    rho = jnp.asarray(rho)
    small = rho < TABLE_RHO_SWITCH
    r = jnp.where(small, 2.0 * TABLE_RHO_SWITCH, rho)
    th = jnp.sqrt(r)
    s, co = jnp.sin(th), jnp.cos(th)
    a = s / th
    b = (1.0 - co) / r
    c = (1.0 - a) / r
    a1 = (co - a) / (2.0 * r)
    b1 = (a - 2.0 * b) / (2.0 * r)
    c1 = -(a1 + c) / r
    a2 = -(0.5 * a + 3.0 * a1) / (2.0 * r)
    b2 = (a1 - 4.0 * b1) / (2.0 * r)
    c2 = -(a2 + 2.0 * c1) / r
    closed = jnp.stack([a, b, c, a1, b1, c1, a2, b2, c2])
    (sa, sa1, sa2), (sb, sb1, sb2), (sc, sc1, sc2) = (_series_rows(rho, f) for f in (1, 2, 3))
    series = jnp.stack([sa, sb, sc, sa1, sb1, sc1, sa2, sb2, sc2])
    return jnp.where(small, series, closed)
