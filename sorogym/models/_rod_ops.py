"""Batch-minor group operations shared by the spatial (SE(3)) and planar (SE(2)) kernels.

Layout: every quantity carries a trailing batch axis ``P`` over backbone points, so each
scalar of the computation is a contiguous vector and the arithmetic fuses into a few
vectorised loops on XLA:CPU (tiny per-point matrix products and ``vmap`` over points are
both several times slower there). Shapes:

* strains / twists ``X``: ``(d, P)`` (``d = 6`` spatial ``[w, v]``, ``3`` planar
  ``[w, vx, vy]``; angular first);
* stacks of twists as columns ``x``: ``(d, K, P)`` (e.g. a Jacobian has ``K = n``);
* rotations ``R``: ``(k, k, P)``, positions ``p``: ``(k, P)`` (``k = 3`` or ``2``);
* scalar coefficients: ``(P,)``.

The closed forms are those of :mod:`sorogym.lie`; the tests check them against it.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

from ..lie._coefficients import coefficient_table, coefficient_table_of_angle


def _cross_t(a, b) -> tuple:
    """Cross product of two 3-sequences of arrays (components as separate arrays), returned
    as a 3-tuple, so that chains of products stay elementwise until one final stack."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def pointwise_cross(a: Array, b: Array) -> Array:
    """Cross product along the leading axis, broadcasting over the others."""
    return jnp.stack(_cross_t(a, b))


def prefix_sum(x: Array) -> Array:
    """Cumulative sum along the trailing (point) axis, as one product with a constant
    triangle of ones. ``jnp.cumsum`` lowers to a windowed reduction on XLA:CPU; this is one
    matrix product whatever the leading (batch) axes (3-4 % faster batched steps of the
    conical GVS arm at 1024 envs)."""
    n = x.shape[-1]
    return x @ jnp.asarray(np.triu(np.ones((n, n))), x.dtype)


def _matvec_t(R: Array, x) -> tuple:
    """Components of ``R @ x`` per point: ``R`` ``(k, k, P)``, ``x`` a ``k``-sequence of
    ``(K, P)`` arrays (or an array ``(k, K, P)``); unrolled sums of products."""
    k = R.shape[0]
    return tuple(sum(R[i, j][None] * x[j] for j in range(k)) for i in range(k))


def _rmatvec_t(R: Array, x) -> tuple:
    """Components of ``R^T @ x`` per point (see :func:`_matvec_t`)."""
    k = R.shape[0]
    return tuple(sum(R[j, i][None] * x[j] for j in range(k)) for i in range(k))


def pointwise_matvec(R: Array, x: Array) -> Array:
    """``R @ x`` per point: ``R`` ``(k, k, P)``, ``x`` ``(k, K, P)`` -> ``(k, K, P)``."""
    return jnp.stack(_matvec_t(R, x))


def pointwise_rmatvec(R: Array, x: Array) -> Array:
    """``R^T @ x`` per point (see :func:`pointwise_matvec`)."""
    return jnp.stack(_rmatvec_t(R, x))


def _rows(x: Array, start: int, stop: int, expand: bool = False) -> tuple:
    """Components ``x[start:stop]`` as separate arrays (with a new axis 0 if ``expand``)."""
    return tuple(x[i][None] if expand else x[i] for i in range(start, stop))


def _compose(R0: Array, p0: Array, R1: Array, p1: Array) -> tuple[Array, Array]:
    """``(R0, p0) (R1, p1) = (R0 R1, p0 + R0 p1)`` per point (SE(3) or SE(2))."""
    k = R0.shape[0]
    Rp1 = _matvec_t(R0, _rows(p1, 0, k, expand=True))
    return pointwise_matvec(R0, R1), jnp.stack([p0[i] + Rp1[i][0] for i in range(k)])


def _dot3(a, b) -> Array:
    """``a . b`` over 3 components, unrolled."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@jax.custom_jvp
def _planar_rows_of(w: Array, table: Array) -> tuple[Array, Array, Array]:
    """``(a, b, c)`` of ``table = coefficient_table_of_angle(w)`` for the planar angle ``w``
    (shared; see :func:`_tangent_rows_of`), with a table-based JVP."""
    return tuple(table[:3])


@_planar_rows_of.defjvp
def _planar_rows_of_jvp(primals, tangents):
    (w, table), (dw, _) = primals, tangents
    return tuple(table[:3]), tuple(table[3:6] * (2.0 * w * dw))


# The spatial kernels read table rows through gathers (index arrays), the planar ones
# through slices. A gather is a fusion boundary: the spatial consumers are (6, K, P) arrays,
# and with slices XLA:CPU fused the table's arithmetic into each of them (measured up to
# 1.5x slower in a loop at 4 segments); the planar kernels measured faster with slices.
_EXP_ROWS = (0, 1, 2)


@jax.custom_jvp
def _tangent_rows_of(rho: Array, table: Array) -> Array:
    """Rows ``[b, c, b', c']`` of ``table = coefficient_table(rho)`` (computed once by the
    caller and shared with other users of the same ``rho``). The derivative
    along ``rho`` reads the next rows; ``table``'s own tangent is that same derivative, so
    it is not added again (derivatives of any order stay exact: ``table`` is itself
    differentiable in ``rho``)."""
    return table[jnp.array([1, 2, 4, 5])]


@_tangent_rows_of.defjvp
def _tangent_rows_of_jvp(primals, tangents):
    (_, table), (drho, _) = primals, tangents
    return table[jnp.array([1, 2, 4, 5])], table[jnp.array([4, 5, 7, 8])] * drho


class SpatialOps:
    """SE(3) operations in the batch-minor layout (see module docstring).

    Inside each operation the 3-vector components are kept as separate arrays and stacked
    once at the end: XLA:CPU then fuses each operation into a few loops, where intermediate
    stacks (one per cross product) each became a kernel of their own."""

    dim = 6
    pos_dim = 3

    @staticmethod
    def coefficients(X: Array) -> Array:
        """The coefficient table ``(9, P)`` of :func:`~sorogym.lie.coefficient_table` at
        ``rho = |w|^2`` of ``X`` ``(6, P)``: pass it to :meth:`exp` and
        :meth:`tangent_apply` at the same ``X`` so that the table (a square root, a sine and
        a cosine per point and a few dozen multiply-adds per row) is evaluated once for
        all of them (XLA does not merge the separate evaluations: each became a kernel of
        its own)."""
        w = X[:3]
        return coefficient_table(_dot3(w, w))

    @staticmethod
    def exp(X: Array, table: Array | None = None) -> tuple[Array, Array]:
        """``exp(X) = (R, p)``: ``R = (1 - b rho) I + a [w]x + b w w^T``,
        ``p = v + b w x v + c w x (w x v)``; ``X`` ``(6, P)``; ``table``: optional
        :meth:`coefficients` of ``X``."""
        w, v = X[:3], X[3:]
        rho = _dot3(w, w)
        a, b, c = (coefficient_table(rho) if table is None else table)[jnp.array(_EXP_ROWS)]
        d = 1.0 - b * rho
        aw = a * w
        bww = b * w[:, None, :] * w[None, :, :]
        z = jnp.zeros_like(rho)
        skew = jnp.stack(
            [
                jnp.stack([z, -aw[2], aw[1]]),
                jnp.stack([aw[2], z, -aw[0]]),
                jnp.stack([-aw[1], aw[0], z]),
            ]
        )
        eye = jnp.eye(3, dtype=X.dtype)[:, :, None]
        R = d * eye + skew + bww
        wv = pointwise_cross(w, v)
        return R, v + b * wv + c * pointwise_cross(w, wv)

    compose = staticmethod(_compose)

    @staticmethod
    def adjoint_inverse_apply(R: Array, p: Array, x: Array) -> Array:
        """``Ad_(R,p)^-1 x = [R^T w, R^T (v - p x w)]`` on columns ``x`` ``(6, K, P)``."""
        w, v = x[:3], x[3:]
        return jnp.concatenate([pointwise_rmatvec(R, w), pointwise_rmatvec(R, v - pointwise_cross(p[:, None, :], w))])

    @staticmethod
    def adjoint_apply(R: Array, p: Array, x: Array) -> Array:
        """``Ad_(R,p) x = [R w, R v + p x (R w)]`` on columns ``x`` ``(6, K, P)``."""
        Rw = pointwise_matvec(R, x[:3])
        return jnp.concatenate([Rw, pointwise_matvec(R, x[3:]) + pointwise_cross(p[:, None, :], Rw)])

    @staticmethod
    def tangent_apply(X: Array, x: Array, table: Array | None = None) -> Array:
        """``T(X) x`` with ``T = sum_k (-1)^k ad_X^k / (k+1)!`` in block form
        ``[[Tw, 0], [Tvw, Tw]]``: ``Tw y = y - b w x y + c w x (w x y)`` and ``Tvw`` is
        its derivative along ``v`` (``d rho = 2 w.v``). ``X`` ``(6, P)``, ``x``
        ``(6, K, P)``; ``table``: optional :meth:`coefficients` of ``X`` (derivatives in
        ``X`` stay exact with it)."""
        w, v = _rows(X, 0, 3), _rows(X, 3, 6)
        rho = _dot3(w, w)
        drho = 2.0 * _dot3(w, v)
        b, c, b1, c1 = _tangent_rows_of(rho, coefficient_table(rho) if table is None else table)
        db, dc = (b1 * drho)[None], (c1 * drho)[None]
        b, c = b[None], c[None]
        xw, xv = _rows(x, 0, 3), _rows(x, 3, 6)
        wc, vc = [wi[None] for wi in w], [vi[None] for vi in v]
        w_xw = _cross_t(wc, xw)
        ww_xw = _cross_t(wc, w_xw)
        v_xw = _cross_t(vc, xw)
        v_w_xw = _cross_t(vc, w_xw)
        w_v_xw = _cross_t(wc, v_xw)
        w_xv = _cross_t(wc, xv)
        ww_xv = _cross_t(wc, w_xv)
        top = [xw[i] - b * w_xw[i] + c * ww_xw[i] for i in range(3)]
        bottom = [
            -db * w_xw[i]
            - b * v_xw[i]
            + dc * ww_xw[i]
            + c * (v_w_xw[i] + w_v_xw[i])
            + xv[i]
            - b * w_xv[i]
            + c * ww_xv[i]
            for i in range(3)
        ]
        return jnp.stack(top + bottom)

    @staticmethod
    def force_wrench_at(p: Array, f: Array) -> Array:
        """``[p x f, f]`` ``(6, P)``: the wrench about a frame's origin of the forces ``f``
        ``(3, P)`` acting at its points ``p`` ``(3, P)`` (frame axes), i.e.
        ``Ad_(I, p)^-T [0, f]``."""
        pf = _cross_t(_rows(p, 0, 3), _rows(f, 0, 3))
        return jnp.stack(pf + _rows(f, 0, 3))

    @staticmethod
    def tangent_transpose_force(X: Array, f: Array, table: Array | None = None) -> Array:
        """``T(X)^T [0, f]`` ``(6, P)`` for body-frame forces ``f`` ``(3, P)``: with
        ``T = [[Tw, 0], [Tvw, Tw]]`` (:meth:`tangent_apply`) it is ``[Tvw^T f, Tw^T f]``,
        ``Tw^T f = f + b w x f + c w x (w x f)`` and ``Tvw^T f = db w x f + b v x f +
        dc w x (w x f) + c (w x (v x f) + v x (w x f))`` (``db = b' d rho``,
        ``d rho = 2 w.v``). The transposed map that a point force needs, without the zero
        moment rows."""
        w, v = _rows(X, 0, 3), _rows(X, 3, 6)
        rho = _dot3(w, w)
        drho = 2.0 * _dot3(w, v)
        b, c, b1, c1 = _tangent_rows_of(rho, coefficient_table(rho) if table is None else table)
        db, dc = b1 * drho, c1 * drho
        fs = _rows(f, 0, 3)
        w_f, v_f = _cross_t(w, fs), _cross_t(v, fs)
        ww_f, wv_f, vw_f = _cross_t(w, w_f), _cross_t(w, v_f), _cross_t(v, w_f)
        top = [db * w_f[i] + b * v_f[i] + dc * ww_f[i] + c * (wv_f[i] + vw_f[i]) for i in range(3)]
        bottom = [fs[i] + b * w_f[i] + c * ww_f[i] for i in range(3)]
        return jnp.stack(top + bottom)

    @staticmethod
    def rotate_twists(R: Array, x: Array) -> Array:
        """``blockdiag(R, R) x``: body-frame twist components -> world-frame components."""
        return jnp.stack(_matvec_t(R, _rows(x, 0, 3)) + _matvec_t(R, _rows(x, 3, 6)))

    @staticmethod
    def bracket(a: Array, b: Array) -> Array:
        """``ad_a b = [wa x wb, wa x vb + va x wb]`` (leading component axis)."""
        wa, va, wb, vb = _rows(a, 0, 3), _rows(a, 3, 6), _rows(b, 0, 3), _rows(b, 3, 6)
        wavb, vawb = _cross_t(wa, vb), _cross_t(va, wb)
        return jnp.stack(_cross_t(wa, wb) + tuple(wavb[i] + vawb[i] for i in range(3)))

    @staticmethod
    def coad_apply(eta: Array, m: Array) -> Array:
        """``ad_eta^T m`` for a momentum/wrench ``m = [m_w, m_v]`` (leading component axis)."""
        w, v = _rows(eta, 0, 3), _rows(eta, 3, 6)
        mw, mv = _rows(m, 0, 3), _rows(m, 3, 6)
        mww, mvv = _cross_t(mw, w), _cross_t(mv, v)
        return jnp.stack(tuple(mww[i] + mvv[i] for i in range(3)) + _cross_t(mv, w))

    @staticmethod
    def force_wrench(R: Array, f_world: Array) -> Array:
        """Body-frame wrench ``[0, R^T f]`` ``(6, P)`` of forces ``f_world`` ``(3, P)``
        (world frame) acting on the backbone."""
        Rf = _rmatvec_t(R, _rows(f_world, 0, 3, expand=True))
        zero = jnp.zeros_like(f_world[0])
        return jnp.stack((zero, zero, zero) + tuple(r[0] for r in Rf))

    @staticmethod
    def base_rotation(param: Array) -> Array:
        return param

    @staticmethod
    def pose_matrix(R: Array, p: Array) -> Array:
        """``(k, k)`` and ``(k,)`` -> 4x4 homogeneous matrix."""
        top = jnp.concatenate([R, p[:, None]], axis=1)
        bottom = jnp.zeros((1, 4), R.dtype).at[0, 3].set(1.0)
        return jnp.concatenate([top, bottom], axis=0)


class PlanarOps:
    """SE(2) operations in the batch-minor layout (see module docstring)."""

    dim = 3
    pos_dim = 2

    @staticmethod
    def coefficients(X: Array) -> Array:
        """The coefficient table ``(9, P)`` at the angle ``w`` of ``X`` ``(3, P)``
        (:func:`~sorogym.lie.coefficient_table_of_angle`), to share between :meth:`exp`
        and :meth:`tangent_apply` at the same ``X`` (see :meth:`SpatialOps.coefficients`)."""
        return coefficient_table_of_angle(X[0])

    @staticmethod
    def exp(X: Array, table: Array | None = None) -> tuple[Array, Array]:
        """``exp(X) = (R(w), [[a, -w b], [w b, a]] v)``; ``X`` ``(3, P)``; ``table``:
        optional :meth:`coefficients` of ``X``."""
        w, vx, vy = X[0], X[1], X[2]
        a, b, _ = _planar_rows_of(w, coefficient_table_of_angle(w) if table is None else table)
        wb = w * b
        c, s = jnp.cos(w), jnp.sin(w)
        R = jnp.stack([jnp.stack([c, -s]), jnp.stack([s, c])])
        return R, jnp.stack([a * vx - wb * vy, wb * vx + a * vy])

    compose = staticmethod(_compose)

    @staticmethod
    def adjoint_inverse_apply(R: Array, p: Array, x: Array) -> Array:
        """``Ad_(R,p)^-1 x = [w, R^T (v + w J p)]`` with ``J p = [-py, px]``."""
        w, v = x[0], x[1:]
        Jp = jnp.stack([-p[1], p[0]])[:, None, :]
        return jnp.concatenate([w[None], pointwise_rmatvec(R, v + Jp * w[None])])

    @staticmethod
    def tangent_apply(X: Array, x: Array, table: Array | None = None) -> Array:
        """``T(X) x`` with ``T = [[1, 0], [b J v + w c v, [[a, w b], [-w b, a]]]]``;
        ``table``: optional :meth:`coefficients` of ``X``."""
        w, vx, vy = X[0], X[1], X[2]
        a, b, c = _planar_rows_of(w, coefficient_table_of_angle(w) if table is None else table)
        wb, wc = w * b, w * c
        x0, x1, x2 = x[0], x[1], x[2]
        return jnp.stack([x0, (-b * vy + wc * vx) * x0 + a * x1 + wb * x2, (b * vx + wc * vy) * x0 - wb * x1 + a * x2])

    @staticmethod
    def force_wrench_at(p: Array, f: Array) -> Array:
        """``[p x f, f]`` ``(3, P)`` (see :meth:`SpatialOps.force_wrench_at`)."""
        return jnp.stack([p[0] * f[1] - p[1] * f[0], f[0], f[1]])

    @staticmethod
    def tangent_transpose_force(X: Array, f: Array, table: Array | None = None) -> Array:
        """``T(X)^T [0, f] = [t . f, A^T f]`` ``(3, P)`` for body-frame forces ``f``
        ``(2, P)``, with ``T = [[1, 0], [t, A]]`` (:meth:`tangent_apply`)."""
        w, vx, vy = X[0], X[1], X[2]
        a, b, c = _planar_rows_of(w, coefficient_table_of_angle(w) if table is None else table)
        wb, wc = w * b, w * c
        f0, f1 = f[0], f[1]
        return jnp.stack([(-b * vy + wc * vx) * f0 + (b * vx + wc * vy) * f1, a * f0 - wb * f1, wb * f0 + a * f1])

    @staticmethod
    def rotate_twists(R: Array, x: Array) -> Array:
        return jnp.stack((x[0],) + _matvec_t(R, _rows(x, 1, 3)))

    @staticmethod
    def bracket(a: Array, b: Array) -> Array:
        return jnp.stack([jnp.zeros_like(a[0] * b[0]), a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])

    @staticmethod
    def coad_apply(eta: Array, m: Array) -> Array:
        """``ad_eta^T m`` with ``ad_eta = [[0, 0, 0], [vy, 0, -w], [-vx, w, 0]]``."""
        w, vx, vy = eta[0], eta[1], eta[2]
        return jnp.stack([vy * m[1] - vx * m[2], w * m[2], -w * m[1]])

    @staticmethod
    def force_wrench(R: Array, f_world: Array) -> Array:
        Rf = _rmatvec_t(R, _rows(f_world, 0, 2, expand=True))
        return jnp.stack((jnp.zeros_like(f_world[0]), Rf[0][0], Rf[1][0]))

    @staticmethod
    def base_rotation(param: Array) -> Array:
        c, s = jnp.cos(param), jnp.sin(param)
        return jnp.stack([jnp.stack([c, -s]), jnp.stack([s, c])])

    @staticmethod
    def pose_matrix(R: Array, p: Array) -> Array:
        top = jnp.concatenate([R, p[:, None]], axis=1)
        bottom = jnp.zeros((1, 3), R.dtype).at[0, 2].set(1.0)
        return jnp.concatenate([top, bottom], axis=0)
