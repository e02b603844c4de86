"""Structure-aware PCS kernels: proximal-to-distal propagation of pose, body Jacobian,
body twist and ``dJ/dt qd`` through constant-strain segments.

For a point at local arc length ``s`` of segment ``i`` (strain ``xi_i``, ``X = s xi_i``,
``h = exp(X)``) and the quantities at the segment's base (``R0, p0, J0, eta0, a0``)::

    g(s)      = g0 h
    J(s)      = Ad_h^-1 J0 + s T(X) B_i                       (body frame, d x n)
    eta(s)    = Ad_h^-1 eta0 + T(X) dX                        (dX = s B_i qd)
    Jdot qd   = Ad_h^-1 a0 + [eta(s), T(X) dX] + dT(X)/dt dX

where ``T`` is the tangent map of the exponential and ``B_i`` selects segment ``i``'s
active strains from ``q``. The Jacobian is built directly in the active coordinates
(``d x n``, never ``d x (N d)``). Segment bases are found by a ``lax.scan`` over segments;
all quadrature points are then evaluated in one batched call.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jaxtyping import Array


class Frame(NamedTuple):
    """Kinematic state at a backbone point (leading axes allowed)."""

    R: Array  # (k, k) rotation body -> world
    p: Array  # (k,) position in the world [m]
    J: Array  # (d, n) body-frame Jacobian
    eta: Array  # (d,) body twist (zeros when velocities are not propagated)
    jdot_qd: Array  # (d,) dJ/dt qd (zeros when velocities are not propagated)


def point_frame(ops, base: Frame, xi: Array, xi_dot: Array, B: Array, s: Array, with_velocity: bool) -> Frame:
    """Frame at local arc length ``s`` of a segment with strain ``xi`` and base ``base``."""
    X = s * xi
    Rh, ph = ops.exp(X)
    Ad_inv = ops.adjoint_inverse(Rh, ph)
    R = base.R @ Rh
    p = base.p + base.R @ ph
    if with_velocity:
        dX = s * xi_dot
        T, T_dot = jax.jvp(ops.tangent, (X,), (dX,))
        TdX = T @ dX
        eta = Ad_inv @ base.eta + TdX
        jdot_qd = Ad_inv @ base.jdot_qd + ops.bracket(eta, TdX) + T_dot @ dX
    else:
        T = ops.tangent(X)
        eta, jdot_qd = base.eta, base.jdot_qd
    J = Ad_inv @ base.J + s * (T @ B)
    return Frame(R, p, J, eta, jdot_qd)


def base_frame(ops, R0: Array, p0: Array, n: int) -> Frame:
    d = ops.dim
    z = jnp.zeros((d,), p0.dtype)
    return Frame(R0, p0, jnp.zeros((d, n), p0.dtype), z, z)


def segment_bases(ops, root: Frame, xi: Array, xi_dot: Array, B: Array, L: Array, with_velocity: bool) -> Frame:
    """Frames at the base of every segment, stacked ``(N, ...)`` (``lax.scan``)."""

    def step(carry: Frame, inputs):
        xi_i, xid_i, B_i, L_i = inputs
        tip = point_frame(ops, carry, xi_i, xid_i, B_i, L_i, with_velocity)
        return tip, carry

    _, bases = jax.lax.scan(step, root, (xi, xi_dot, B, L), unroll=True)
    return bases


def frames_at(ops, bases: Frame, xi: Array, xi_dot: Array, B: Array, seg: Array, s_local: Array, with_velocity: bool) -> Frame:
    """Frames at points given by segment indices ``seg`` and local arc lengths ``s_local``
    (any matching leading shape), evaluated in one batched call."""
    shape = seg.shape
    seg_f, s_f = seg.reshape(-1), s_local.reshape(-1)
    base_f = jax.tree.map(lambda x: x[seg_f], bases)

    def one(base, i, s):
        return point_frame(ops, base, xi[i], xi_dot[i], B[i], s, with_velocity)

    out = jax.vmap(one)(base_f, seg_f, s_f)
    return jax.tree.map(lambda x: x.reshape(shape + x.shape[1:]), out)
