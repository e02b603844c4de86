"""Group operations shared by the spatial (SE(3)) and planar (SE(2)) PCS kernels.

Poses are carried as ``(R, p)`` pairs (``R``: ``(k, k)`` rotation, ``p``: ``(k,)``
position, ``k = 3`` spatial, ``2`` planar); twists and wrenches as ``d``-vectors,
angular first (``d = 6`` spatial, ``3`` planar).
"""

from __future__ import annotations

import jax.numpy as jnp
from jaxtyping import Array

from ..lie import se2, se3, so3


class SpatialOps:
    """SE(3) operations on ``(R, p)`` pairs and 6-vectors ``[w, v]``."""

    dim = 6
    pos_dim = 3

    @staticmethod
    def exp(X: Array) -> tuple[Array, Array]:
        return se3.exp_rp(X)

    @staticmethod
    def tangent(X: Array) -> Array:
        return se3.tangent_map(X)

    @staticmethod
    def adjoint_inverse(R: Array, p: Array) -> Array:
        """Matrix of ``Ad_(R,p)^-1``: parent-frame twist -> body-frame twist."""
        Rt = R.T
        top = jnp.concatenate([Rt, jnp.zeros_like(Rt)], axis=1)
        bottom = jnp.concatenate([-Rt @ so3.hat(p), Rt], axis=1)
        return jnp.concatenate([top, bottom], axis=0)

    @staticmethod
    def rotation_blocks(R: Array) -> Array:
        """``blockdiag(R, R)``: body twist -> twist with world-frame components."""
        Z = jnp.zeros_like(R)
        return jnp.concatenate(
            [jnp.concatenate([R, Z], axis=1), jnp.concatenate([Z, R], axis=1)], axis=0
        )

    @staticmethod
    def bracket(a: Array, b: Array) -> Array:
        return se3.bracket(a, b)

    @staticmethod
    def coad_apply(eta: Array, m: Array) -> Array:
        """``ad_eta^T m`` for a momentum/wrench ``m = [m_w, m_v]``."""
        w, v = eta[:3], eta[3:]
        mw, mv = m[:3], m[3:]
        return jnp.concatenate([jnp.cross(mw, w) + jnp.cross(mv, v), jnp.cross(mv, w)])

    @staticmethod
    def body_force_wrench(R: Array, f_world: Array) -> Array:
        """Body-frame wrench of a force ``f_world`` (world frame) acting at the backbone."""
        return jnp.concatenate([jnp.zeros_like(f_world), R.T @ f_world])

    @staticmethod
    def base_rotation(param: Array) -> Array:
        return param

    @staticmethod
    def pose_matrix(R: Array, p: Array) -> Array:
        return se3.from_rotation_translation(R, p)


class PlanarOps:
    """SE(2) operations on ``(R, p)`` pairs and 3-vectors ``[w, vx, vy]``."""

    dim = 3
    pos_dim = 2

    @staticmethod
    def exp(X: Array) -> tuple[Array, Array]:
        theta, p = se2.exp_angle_translation(X)
        return se2.rotation(theta).astype(p.dtype), p

    @staticmethod
    def tangent(X: Array) -> Array:
        return se2.tangent_map(X)

    @staticmethod
    def adjoint_inverse(R: Array, p: Array) -> Array:
        """``Ad_(R,p)^-1 x = [w, R^T (v + w J p)]`` with ``J p = [-py, px]``."""
        Rt = R.T
        col = Rt @ jnp.stack([-p[1], p[0]])
        top = jnp.zeros((1, 3), R.dtype).at[0, 0].set(1.0)
        return jnp.concatenate([top, jnp.concatenate([col[:, None], Rt], axis=1)], axis=0)

    @staticmethod
    def rotation_blocks(R: Array) -> Array:
        top = jnp.zeros((1, 3), R.dtype).at[0, 0].set(1.0)
        bottom = jnp.concatenate([jnp.zeros((2, 1), R.dtype), R], axis=1)
        return jnp.concatenate([top, bottom], axis=0)

    @staticmethod
    def bracket(a: Array, b: Array) -> Array:
        return se2.bracket(a, b)

    @staticmethod
    def coad_apply(eta: Array, m: Array) -> Array:
        """``ad_eta^T m`` with ``ad_eta = [[0, 0, 0], [vy, 0, -w], [-vx, w, 0]]``."""
        w, vx, vy = eta[0], eta[1], eta[2]
        return jnp.stack([vy * m[1] - vx * m[2], w * m[2], -w * m[1]])

    @staticmethod
    def body_force_wrench(R: Array, f_world: Array) -> Array:
        return jnp.concatenate([jnp.zeros((1,), f_world.dtype), R.T @ f_world])

    @staticmethod
    def base_rotation(param: Array) -> Array:
        return se2.rotation(param).astype(param.dtype)

    @staticmethod
    def pose_matrix(R: Array, p: Array) -> Array:
        top = jnp.concatenate([R, p[:, None]], axis=1)
        bottom = jnp.zeros((1, 3), R.dtype).at[0, 2].set(1.0)
        return jnp.concatenate([top, bottom], axis=0)
