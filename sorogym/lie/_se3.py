"""SE(3) with twists ordered angular first: ``xi = [w, v]`` (w in rad, v in m, or per metre
for strains).

Poses are 4x4 homogeneous matrices ``g = [[R, p], [0, 1]]`` mapping body-frame points to
the parent frame. Conventions:

* ``hat(xi) = [[[w]x, v], [0, 0]]``;
* ``adjoint(g) = [[R, 0], [[p]x R, R]]`` maps body twists to parent twists;
* ``ad(xi) = [[[w]x, 0], [[v]x, [w]x]]`` (the Lie bracket ``ad(a) b = [a, b]``);
  ``coad(xi) = ad(xi).T``;
* ``tangent_map(X) = sum_k (-1)^k ad(X)^k / (k+1)!``: for ``g(t) = exp(X(t))`` the body
  twist is ``g^-1 dg/dt = tangent_map(X) dX/dt``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float

from . import _so3 as so3
from ._coefficients import cosc_b, sinc_a, sinc_c


def hat(xi: Float[ArrayLike, "6"]) -> Float[Array, "4 4"]:
    """4x4 matrix of the twist ``xi = [w, v]``."""
    xi = jnp.asarray(xi)
    top = jnp.concatenate([so3.hat(xi[:3]), xi[3:, None]], axis=1)
    return jnp.concatenate([top, jnp.zeros((1, 4), xi.dtype)], axis=0)


def vee(X: Float[ArrayLike, "4 4"]) -> Float[Array, "6"]:
    """Inverse of :func:`hat`."""
    X = jnp.asarray(X)
    return jnp.concatenate([so3.vee(X[:3, :3]), X[:3, 3]])


def from_rotation_translation(R: Float[ArrayLike, "3 3"], p: Float[ArrayLike, "3"]) -> Float[Array, "4 4"]:
    """Homogeneous matrix from a rotation and a translation."""
    R, p = jnp.asarray(R), jnp.asarray(p)
    top = jnp.concatenate([R, p[:, None]], axis=1)
    bottom = jnp.zeros((1, 4), R.dtype).at[0, 3].set(1.0)
    return jnp.concatenate([top, bottom], axis=0)


def exp_rp(xi: Float[ArrayLike, "6"]) -> tuple[Float[Array, "3 3"], Float[Array, "3"]]:
    """Rotation and translation of ``exp(hat(xi))``: ``R = exp([w]x)``, ``p = V(w) v``
    with ``V = I + b [w]x + c [w]x^2``."""
    xi = jnp.asarray(xi)
    w, v = xi[:3], xi[3:]
    rho = jnp.dot(w, w)
    W = so3.hat(w)
    W2 = W @ W
    a, b, c = sinc_a(rho), cosc_b(rho), sinc_c(rho)
    eye = jnp.eye(3, dtype=xi.dtype)
    R = eye + a * W + b * W2
    p = v + b * (W @ v) + c * (W2 @ v)
    return R, p


def exp(xi: Float[ArrayLike, "6"]) -> Float[Array, "4 4"]:
    """Group exponential ``exp(hat(xi))`` as a 4x4 matrix."""
    return from_rotation_translation(*exp_rp(xi))


def _inv_left_jacobian_coefficient(rho: Array) -> Array:
    """``(1 - (theta/2) cot(theta/2)) / theta^2`` safely, as a function of ``rho``."""
    # Taylor: sum_n |B_2n| rho^(n-1) / (2n)!  (Bernoulli numbers).
    coeffs = [1 / 12, 1 / 720, 1 / 30240, 1 / 1209600, 1 / 47900160, 5.2841901e-10]
    small = rho < 0.1
    r = jnp.where(small, 1.0, rho)
    closed = (1.0 - sinc_a(r) / (2.0 * cosc_b(r))) / r
    series = jnp.full_like(rho, coeffs[-1])
    for cf in reversed(coeffs[:-1]):
        series = series * rho + cf
    return jnp.where(small, series, closed)


def log(g: Float[ArrayLike, "4 4"]) -> Float[Array, "6"]:
    """Twist ``xi`` with ``exp(xi) == g`` (rotation part with ``|w| <= pi``)."""
    g = jnp.asarray(g)
    w = so3.log(g[:3, :3])
    W = so3.hat(w)
    rho = jnp.dot(w, w)
    p = g[:3, 3]
    v = p - 0.5 * (W @ p) + _inv_left_jacobian_coefficient(rho) * (W @ (W @ p))
    return jnp.concatenate([w, v])


def inverse(g: Float[ArrayLike, "4 4"]) -> Float[Array, "4 4"]:
    """Group inverse ``[[R^T, -R^T p], [0, 1]]``."""
    g = jnp.asarray(g)
    R, p = g[:3, :3], g[:3, 3]
    return from_rotation_translation(R.T, -R.T @ p)


def _blocks(A, B, C, D):
    return jnp.concatenate([jnp.concatenate([A, B], axis=1), jnp.concatenate([C, D], axis=1)], axis=0)


def adjoint(g: Float[ArrayLike, "4 4"]) -> Float[Array, "6 6"]:
    """``Ad_g = [[R, 0], [[p]x R, R]]``: body twist -> parent-frame twist."""
    g = jnp.asarray(g)
    R, p = g[:3, :3], g[:3, 3]
    Z = jnp.zeros_like(R)
    return _blocks(R, Z, so3.hat(p) @ R, R)


def adjoint_inverse(g: Float[ArrayLike, "4 4"]) -> Float[Array, "6 6"]:
    """``Ad_g^-1 = Ad_(g^-1) = [[R^T, 0], [-R^T [p]x, R^T]]``."""
    g = jnp.asarray(g)
    R, p = g[:3, :3], g[:3, 3]
    Rt = R.T
    return _blocks(Rt, jnp.zeros_like(R), -Rt @ so3.hat(p), Rt)


def coadjoint(g: Float[ArrayLike, "4 4"]) -> Float[Array, "6 6"]:
    """``Ad*_g = Ad_(g^-1)^T = [[R, [p]x R], [0, R]]``: body wrench -> parent wrench."""
    g = jnp.asarray(g)
    R, p = g[:3, :3], g[:3, 3]
    return _blocks(R, so3.hat(p) @ R, jnp.zeros_like(R), R)


def ad(xi: Float[ArrayLike, "6"]) -> Float[Array, "6 6"]:
    """Lie-algebra adjoint ``ad_xi = [[[w]x, 0], [[v]x, [w]x]]``."""
    xi = jnp.asarray(xi)
    W, V = so3.hat(xi[:3]), so3.hat(xi[3:])
    return _blocks(W, jnp.zeros_like(W), V, W)


def coad(xi: Float[ArrayLike, "6"]) -> Float[Array, "6 6"]:
    """``ad_xi^T`` (acts on wrenches; ``-coad(eta) M eta`` is the gyroscopic wrench)."""
    return ad(xi).T


def bracket(a: Float[ArrayLike, "6"], b: Float[ArrayLike, "6"]) -> Float[Array, "6"]:
    """Lie bracket ``ad_a b = [wa x wb, wa x vb - wb x va]`` without forming ``ad``."""
    a, b = jnp.asarray(a), jnp.asarray(b)
    wa, va, wb, vb = a[:3], a[3:], b[:3], b[3:]
    return jnp.concatenate([jnp.cross(wa, wb), jnp.cross(wa, vb) + jnp.cross(va, wb)])


def _so3_tangent(w: Array) -> Array:
    """SO(3) block ``I - b [w]x + c [w]x^2`` of the tangent map."""
    rho = jnp.dot(w, w)
    W = so3.hat(w)
    eye = jnp.eye(3, dtype=W.dtype)
    return eye - cosc_b(rho) * W + sinc_c(rho) * (W @ W)


def tangent_map(X: Float[ArrayLike, "6"]) -> Float[Array, "6 6"]:
    """Tangent map ``T(X) = sum_k (-1)^k ad_X^k / (k+1)!`` of the exponential.

    ``ad_X`` has the dual-number structure ``[[W, 0], [V, W]]``, so every analytic
    function of it is ``[[f(W), 0], [Df(W)[V], f(W)]]``: the lower-left block is the
    directional derivative of the SO(3) block along ``v``, evaluated by forward-mode AD.
    """
    X = jnp.asarray(X)
    Tw, Tvw = jax.jvp(_so3_tangent, (X[:3],), (X[3:],))
    return _blocks(Tw, jnp.zeros_like(Tw), Tvw, Tw)


def tangent_map_derivative(X: Float[ArrayLike, "6"], X_dot: Float[ArrayLike, "6"]) -> Float[Array, "6 6"]:
    """Time derivative ``dT(X(t))/dt`` along ``dX/dt = X_dot``."""
    return jax.jvp(tangent_map, (jnp.asarray(X),), (jnp.asarray(X_dot),))[1]
