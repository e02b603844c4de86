"""SE(2) with twists ordered angular first: ``xi = [w, vx, vy]``.

Poses are 3x3 homogeneous matrices ``g = [[R, p], [0, 1]]``; the planar twist is the
restriction of the spatial one to ``[wz, vx, vy]`` (motion in the x-y plane). Conventions
mirror :mod:`sorogym.lie.se3`: ``adjoint(g)`` maps body twists to the parent frame,
``ad(xi) b = [xi, b]``, ``tangent_map(X) = sum_k (-1)^k ad_X^k / (k+1)!``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float

from ._coefficients import cosc_b, sinc_a, sinc_c


def rotation(theta: Float[ArrayLike, ""]) -> Float[Array, "2 2"]:
    """Planar rotation matrix by ``theta`` (rad)."""
    c, s = jnp.cos(theta), jnp.sin(theta)
    return jnp.stack([jnp.stack([c, -s]), jnp.stack([s, c])])


def hat(xi: Float[ArrayLike, "3"]) -> Float[Array, "3 3"]:
    """3x3 matrix of the planar twist ``xi = [w, vx, vy]``."""
    xi = jnp.asarray(xi)
    w, vx, vy = xi[0], xi[1], xi[2]
    z = jnp.zeros_like(w)
    return jnp.stack([jnp.stack([z, -w, vx]), jnp.stack([w, z, vy]), jnp.stack([z, z, z])])


def vee(X: Float[ArrayLike, "3 3"]) -> Float[Array, "3"]:
    """Inverse of :func:`hat`."""
    X = jnp.asarray(X)
    return jnp.stack([X[1, 0], X[0, 2], X[1, 2]])


def from_angle_translation(theta: Float[ArrayLike, ""], p: Float[ArrayLike, "2"]) -> Float[Array, "3 3"]:
    """Homogeneous matrix of a planar pose."""
    p = jnp.asarray(p)
    R = rotation(theta).astype(p.dtype)
    top = jnp.concatenate([R, p[:, None]], axis=1)
    bottom = jnp.zeros((1, 3), p.dtype).at[0, 2].set(1.0)
    return jnp.concatenate([top, bottom], axis=0)


def exp_angle_translation(
    xi: Float[ArrayLike, "3"],
) -> tuple[Float[Array, ""], Float[Array, "2"]]:
    """Angle ``theta = w`` and translation ``p = [[a, -w b], [w b, a]] v`` of
    ``exp(hat(xi))`` with ``a = sin(w)/w``, ``b = (1 - cos(w))/w^2``."""
    xi = jnp.asarray(xi)
    w, vx, vy = xi[0], xi[1], xi[2]
    rho = w * w
    a, wb = sinc_a(rho), w * cosc_b(rho)
    return w, jnp.stack([a * vx - wb * vy, wb * vx + a * vy])


def exp(xi: Float[ArrayLike, "3"]) -> Float[Array, "3 3"]:
    """Group exponential as a 3x3 matrix."""
    return from_angle_translation(*exp_angle_translation(xi))


def log(g: Float[ArrayLike, "3 3"]) -> Float[Array, "3"]:
    """Twist ``xi`` with ``exp(xi) == g`` and ``|w| <= pi``."""
    g = jnp.asarray(g)
    w = jnp.arctan2(g[1, 0], g[0, 0])
    rho = w * w
    a, b = sinc_a(rho), cosc_b(rho)
    px, py = g[0, 2], g[1, 2]
    scale = 1.0 / (2.0 * b)
    return jnp.stack([w, scale * (a * px + w * b * py), scale * (-w * b * px + a * py)])


def inverse(g: Float[ArrayLike, "3 3"]) -> Float[Array, "3 3"]:
    """Group inverse."""
    g = jnp.asarray(g)
    R, p = g[:2, :2], g[:2, 2]
    top = jnp.concatenate([R.T, (-R.T @ p)[:, None]], axis=1)
    return jnp.concatenate([top, g[2:, :]], axis=0)


def adjoint(g: Float[ArrayLike, "3 3"]) -> Float[Array, "3 3"]:
    """``Ad_g = [[1, 0], [[py, -px]^T, R]]``: body twist -> parent-frame twist."""
    g = jnp.asarray(g)
    R, p = g[:2, :2], g[:2, 2]
    col = jnp.stack([p[1], -p[0]])
    top = jnp.zeros((1, 3), g.dtype).at[0, 0].set(1.0)
    return jnp.concatenate([top, jnp.concatenate([col[:, None], R], axis=1)], axis=0)


def adjoint_inverse(g: Float[ArrayLike, "3 3"]) -> Float[Array, "3 3"]:
    """``Ad_g^-1 = Ad_(g^-1)``."""
    return adjoint(inverse(g))


def coadjoint(g: Float[ArrayLike, "3 3"]) -> Float[Array, "3 3"]:
    """``Ad*_g = Ad_(g^-1)^T``: body wrench ``[m, fx, fy]`` -> parent-frame wrench."""
    return adjoint_inverse(g).T


def ad(xi: Float[ArrayLike, "3"]) -> Float[Array, "3 3"]:
    """``ad_xi = [[0, 0, 0], [vy, 0, -w], [-vx, w, 0]]``."""
    xi = jnp.asarray(xi)
    w, vx, vy = xi[0], xi[1], xi[2]
    z = jnp.zeros_like(w)
    return jnp.stack([jnp.stack([z, z, z]), jnp.stack([vy, z, -w]), jnp.stack([-vx, w, z])])


def coad(xi: Float[ArrayLike, "3"]) -> Float[Array, "3 3"]:
    """``ad_xi^T``."""
    return ad(xi).T


def bracket(a: Float[ArrayLike, "3"], b: Float[ArrayLike, "3"]) -> Float[Array, "3"]:
    """Lie bracket ``[a, b] = ad_a b``."""
    a, b = jnp.asarray(a), jnp.asarray(b)
    return jnp.stack([jnp.zeros_like(a[0]), a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def tangent_map(X: Float[ArrayLike, "3"]) -> Float[Array, "3 3"]:
    """``T(X) = sum_k (-1)^k ad_X^k / (k+1)! = [[1, 0], [b J v + w c v, [[a, w b], [-w b, a]]]]``
    with ``J = [[0, -1], [1, 0]]``; body twist of ``exp(X(t))`` is ``T(X) dX/dt``."""
    X = jnp.asarray(X)
    w, vx, vy = X[0], X[1], X[2]
    rho = w * w
    a, b, c = sinc_a(rho), cosc_b(rho), sinc_c(rho)
    wb, wc = w * b, w * c
    one, z = jnp.ones_like(w), jnp.zeros_like(w)
    return jnp.stack(
        [
            jnp.stack([one, z, z]),
            jnp.stack([-b * vy + wc * vx, a, wb]),
            jnp.stack([b * vx + wc * vy, -wb, a]),
        ]
    )


def tangent_map_derivative(X: Float[ArrayLike, "3"], X_dot: Float[ArrayLike, "3"]) -> Float[Array, "3 3"]:
    """Time derivative ``dT(X(t))/dt`` along ``dX/dt = X_dot``."""
    return jax.jvp(tangent_map, (jnp.asarray(X),), (jnp.asarray(X_dot),))[1]
