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

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float

# Branch threshold on rho = theta**2.
RHO_SWITCH = 1.0
_NUM_TAYLOR_TERMS = 9


def _taylor(rho: Array, first_factorial: int) -> Array:
    """sum_k (-1)^k rho^k / (2k + first_factorial)!, by Horner's rule."""
    coeffs = [(-1.0) ** k / math.factorial(2 * k + first_factorial) for k in range(_NUM_TAYLOR_TERMS)]
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


def _series_coefficients(first_factorial: int) -> tuple[list[float], list[float], list[float]]:
    """Coefficients (ascending powers of ``rho``) of ``sum_k (-1)^k rho^k / (2k + f)!``
    and of its first two derivatives."""
    c = [(-1.0) ** k / math.factorial(2 * k + first_factorial) for k in range(_TABLE_TERMS)]
    d1 = [k * c[k] for k in range(1, _TABLE_TERMS)]
    d2 = [k * (k - 1) * c[k] for k in range(2, _TABLE_TERMS)]
    return c, d1, d2


def _horner(coeffs, x: Array) -> Array:
    """``sum_k coeffs[k] x^k`` by Horner's rule (``coeffs`` broadcast against ``x``)."""
    out = coeffs[-1] * jnp.ones_like(x)
    for cf in reversed(coeffs[:-1]):
        out = out * x + cf
    return out


def _closed_form_coefficients() -> np.ndarray:
    """The rows of :func:`coefficient_table` above the switch as polynomials in ``1/rho``:
    ``(9, 3, 4)`` coefficients of ``(sin(theta)/theta) rho^-k``, ``cos(theta) rho^-k`` and
    ``rho^-k``, obtained by running the recurrences ``a = sin(theta)/theta``,
    ``b = (1 - cos)/rho``, ``c = (1 - a)/rho``, ``a' = (cos - a)/(2 rho)``,
    ``b' = (a - 2b)/(2 rho)``, ``c' = -(a' + c)/rho``, ``a'' = -(a/2 + 3a')/(2 rho)``,
    ``b'' = (a' - 4b')/(2 rho)``, ``c'' = -(a'' + 2c')/rho`` on coefficient arrays (a division
    by ``rho`` shifts the powers by one)."""
    K = 4

    def basis(j):
        out = np.zeros((3, K))
        out[j, 0] = 1.0
        return out

    def over_rho(x):
        return np.concatenate([np.zeros((3, 1)), x[:, :-1]], axis=1)

    a, cos, one = basis(0), basis(1), basis(2)
    b = over_rho(one - cos)
    c = over_rho(one - a)
    a1 = over_rho(cos - a) / 2
    b1 = over_rho(a - 2 * b) / 2
    c1 = -over_rho(a1 + c)
    a2 = -over_rho(0.5 * a + 3 * a1) / 2
    b2 = over_rho(a1 - 4 * b1) / 2
    c2 = -over_rho(a2 + 2 * c1)
    return np.stack([a, b, c, a1, b1, c1, a2, b2, c2])


def _series_table() -> np.ndarray:
    """``(9, terms)`` Taylor coefficients of the table's rows (ascending powers of rho)."""
    rows = [_series_coefficients(f)[d] for d in range(3) for f in (1, 2, 3)]
    width = max(len(x) for x in rows)
    return np.asarray([x + [0.0] * (width - len(x)) for x in rows])


_CLOSED_FORM_COEFFICIENTS = _closed_form_coefficients()  # (9, 3, 4)
_SERIES_COEFFICIENTS = _series_table()  # (9, 12)
# Both as the columns of one (3 * 4 + 12, 9) array: the table reads them from one constant.
_PACKED_COEFFICIENTS = np.concatenate(
    [_CLOSED_FORM_COEFFICIENTS.transpose(2, 1, 0).reshape(-1, 9), _SERIES_COEFFICIENTS.T]
)


def _table_from_basis(rho: Array, small: Array, inv: Array, sin_over_theta: Array, cos_theta: Array) -> Array:
    """The table from ``rho``, the branch mask, ``1/rho`` (safe) and the closed forms'
    basis functions (finite, possibly meaningless, where ``small``)."""
    col = (slice(None),) + (None,) * rho.ndim  # a (9,) coefficient broadcast against rho
    # The barrier also takes rho: tied to the state, the packed constant stays a constant
    # of a loop body instead of being hoisted out as a loop-carried buffer (see
    # coefficient_table).
    packed, rho = jax.lax.optimization_barrier((jnp.asarray(_PACKED_COEFFICIENTS, rho.dtype), rho))
    K = _CLOSED_FORM_COEFFICIENTS.shape[2]
    basis = (sin_over_theta, cos_theta, jnp.ones_like(inv))
    closed, power = 0.0, jnp.ones_like(inv)
    for k in range(K):
        for j, f in enumerate(basis):
            if np.any(_CLOSED_FORM_COEFFICIENTS[:, j, k]):
                closed = closed + packed[3 * k + j][col] * (f * power)
        power = power * inv
    series = _horner([packed[3 * K + i][col] for i in range(_SERIES_COEFFICIENTS.shape[1])], rho)
    return jnp.where(small, series, closed)


def _safe_inverse(rho: Array) -> tuple[Array, Array, Array]:
    """``(small, r, 1/r)`` with ``r`` = ``rho`` above the switch and a harmless substitute below."""
    small = rho < TABLE_RHO_SWITCH
    r = jnp.where(small, 2.0 * TABLE_RHO_SWITCH, rho)
    return small, r, 1.0 / r


def coefficient_table(rho: Float[ArrayLike, "*b"]) -> Float[Array, "9 ..."]:
    """Rows ``[a, b, c, a', b', c', a'', b'', c'']`` (derivatives with respect to
    ``rho = theta**2``) of the three coefficients, with the same safe-branch construction as
    the scalar functions.

    Evaluated as one elementwise expression over the row axis, with row-wise constant
    coefficients: polynomials in ``1/rho`` of ``sin(theta)/theta``, ``cos(theta)`` and 1
    above the switch (:func:`_closed_form_coefficients`), Horner in ``rho`` below. XLA:CPU
    emits one loop for the whole table after a ``sqrt``, ``sin``, ``cos`` and reciprocal per
    entry (rows computed one by one, with divisions, cost a kernel each). The coefficients
    are read from one constant array behind an optimization barrier: XLA otherwise folds
    every slice of it into a constant of its own, and on XLA:CPU every constant array of a
    program adds to the time of each call (about 0.3 us each, measured). The barrier holds
    the constant together with ``rho``: a barrier on the constant alone is loop-invariant,
    and XLA hoists it out of ``while`` bodies into the loop state, which made a planar
    2-segment Tsit5 rollout 1.3x slower (measured side by side)."""
    rho = jnp.asarray(rho)
    small, r, inv = _safe_inverse(rho)
    th = jnp.sqrt(r)
    return _table_from_basis(rho, small, inv, jnp.sin(th) * (th * inv), jnp.cos(th))


def coefficient_table_of_angle(theta: Float[ArrayLike, "*b"]) -> Float[Array, "9 ..."]:
    """:func:`coefficient_table` at ``rho = theta**2`` from a signed angle ``theta`` (the
    coefficients are even in ``theta``): no square root, and ``sin(theta)``, ``cos(theta)``
    are the ones a planar rotation by ``theta`` computes anyway (XLA shares them)."""
    theta = jnp.asarray(theta)
    rho = theta * theta
    small, _, inv = _safe_inverse(rho)
    return _table_from_basis(rho, small, inv, jnp.sin(theta) * (theta * inv), jnp.cos(theta))
