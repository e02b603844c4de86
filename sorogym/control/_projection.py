"""Euclidean projections onto half-spaces of the control space, with and without bounds.

A high-order CLF or CBF condition on control-affine dynamics is one affine inequality in
``u``: a half-space ``{u : w . u >= beta}`` or ``{u : w . u <= beta}``. Its Euclidean
projection has the closed form (SoRoMoX eqs. 52 and 54)::

    >=:  P(v) = v + max(0, beta - w . v) / |w|^2 w
    <=:  P(v) = v - max(0, w . v - beta) / |w|^2 w

Actuators such as tendons also have a box ``lower <= u <= upper`` (a tendon only pulls).
The projection onto half-space and box together is ``u(l) = clip(v + l w, lower, upper)``
for the smallest multiplier ``l >= 0`` that satisfies the inequality (``w . u(l)`` is
non-decreasing in ``l``), found by bisection. When the intersection is empty the result is
the box point that comes closest to satisfying the inequality.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

_SENSES = (">=", "<=")


def _check_sense(sense: str) -> float:
    if sense not in _SENSES:
        raise ValueError(f"sense: expected one of {_SENSES}, got {sense!r}")
    return 1.0 if sense == ">=" else -1.0


def project_halfspace(v: Float[Array, " m"], w: Float[Array, " m"], beta, sense: str = ">=") -> Float[Array, " m"]:
    """Project ``v`` onto ``{u : w . u >= beta}`` (``sense=">="``, eq. 52) or
    ``{u : w . u <= beta}`` (``"<="``, eq. 54). A zero ``w`` leaves ``v`` unchanged."""
    sign = _check_sense(sense)
    w_s, beta_s = sign * w, sign * beta
    norm2 = w_s @ w_s
    violation = jnp.maximum(0.0, beta_s - w_s @ v)
    step = jnp.where(norm2 > 0, violation / jnp.where(norm2 > 0, norm2, 1.0), 0.0)
    return v + step * w_s


def project_halfspace_box(
    v: Float[Array, " m"],
    w: Float[Array, " m"],
    beta,
    lower: Float[Array, " m"],
    upper: Float[Array, " m"],
    sense: str = ">=",
    iterations: int = 60,
) -> Float[Array, " m"]:
    """Project ``v`` onto ``{u : w . u (sense) beta, lower <= u <= upper}`` (see the module
    docstring); ``iterations`` bisection steps on the multiplier (60 reach float64
    resolution for any bracket)."""
    sign = _check_sense(sense)
    w_s, beta_s = sign * w, sign * beta
    lower = jnp.broadcast_to(lower, v.shape)
    upper = jnp.broadcast_to(upper, v.shape)

    def point(lam):
        return jnp.clip(v + lam * w_s, lower, upper)

    # a multiplier large enough to saturate every component with w != 0
    safe_w = jnp.where(w_s != 0, w_s, 1.0)
    reach = jnp.where(w_s != 0, jnp.maximum(jnp.abs((upper - v) / safe_w), jnp.abs((lower - v) / safe_w)), 0.0)
    lam_hi = jnp.max(reach) + 1.0

    def bisect(_, bracket):
        lo, hi = bracket
        mid = 0.5 * (lo + hi)
        ok = w_s @ point(mid) >= beta_s
        return jnp.where(ok, lo, mid), jnp.where(ok, mid, hi)

    _, lam = jax.lax.fori_loop(0, iterations, bisect, (jnp.zeros_like(lam_hi), lam_hi))
    return jnp.where(w_s @ point(0.0) >= beta_s, point(0.0), point(lam))
