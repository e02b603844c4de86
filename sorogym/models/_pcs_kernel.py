"""Structure-aware PCS kernels: proximal-to-distal propagation of pose, body Jacobian,
body twist and ``dJ/dt qd`` through constant-strain segments.

For a point at local arc length ``s`` of segment ``i`` (strain ``xi_i``, ``X = s xi_i``,
``h = exp(X)``) and the quantities at the segment's base (``R0, p0, J0, eta0, a0``)::

    g(s)      = g0 h
    J(s)      = Ad_h^-1 J0 + s T(X) B_i                       (body frame, d x n)
    eta(s)    = Ad_h^-1 eta0 + T(X) dX                        (dX = s B_i qd)
    Jdot qd   = Ad_h^-1 a0 + [eta(s), T(X) dX] + dT(X)/dt dX

where ``T`` is the tangent map of the exponential and ``B_i`` selects segment ``i``'s
active strains from ``q``, so the Jacobian is built directly in the active coordinates
(``d x n``, never ``d x (N d)``). Segment bases come from a ``lax.scan`` over segments; all
requested points are then evaluated in one call in the batch-minor layout of
:mod:`sorogym.models._rod_ops` (trailing axis ``P`` over points).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jaxtyping import Array


class Frame(NamedTuple):
    """Kinematic quantities at ``P`` backbone points (trailing axis ``P``)."""

    R: Array  # (k, k, P) rotation body -> world
    p: Array  # (k, P) position in the world [m]
    J: Array  # (d, n, P) body-frame Jacobian
    eta: Array  # (d, 1, P) body twist (zeros when velocities are not propagated)
    jdot_qd: Array  # (d, 1, P) dJ/dt qd (zeros when velocities are not propagated)


def point_frames(ops, base: Frame, xi: Array, xi_dot: Array, B: Array, s: Array, with_velocity: bool) -> Frame:
    """Frames at local arc lengths ``s`` ``(P,)`` of segments with strains ``xi``
    ``(d, P)``, strain rates ``xi_dot`` ``(d, P)``, selectors ``B`` ``(d, n, P)`` and
    base frames ``base``."""
    X = s * xi
    Rh, ph = ops.exp(X)
    R, p = ops.compose(base.R, base.p, Rh, ph)
    J = ops.adjoint_inverse_apply(Rh, ph, base.J) + s * ops.tangent_apply(X, B)
    if with_velocity:
        dX = s * xi_dot
        TdX, T_dot_dX = jax.jvp(lambda X_: ops.tangent_apply(X_, dX[:, None, :]), (X,), (dX,))
        eta = ops.adjoint_inverse_apply(Rh, ph, base.eta) + TdX
        jdot_qd = ops.adjoint_inverse_apply(Rh, ph, base.jdot_qd) + ops.bracket(eta, TdX) + T_dot_dX
    else:
        eta, jdot_qd = base.eta, base.jdot_qd
    return Frame(R, p, J, eta, jdot_qd)


def base_frame(ops, R0: Array, p0: Array, n: int) -> Frame:
    """The robot's base as a one-point frame (zero Jacobian and velocities)."""
    d = ops.dim
    z = jnp.zeros((d, 1, 1), p0.dtype)
    return Frame(R0[..., None], p0[:, None], jnp.zeros((d, n, 1), p0.dtype), z, z)


def segment_bases(ops, root: Frame, xi: Array, xi_dot: Array, B: Array, L: Array, with_velocity: bool) -> Frame:
    """Frames at the base of every segment, stacked ``(N, ..., 1)`` (``lax.scan``)."""

    def step(carry: Frame, inputs):
        xi_i, xid_i, B_i, L_i = inputs
        tip = point_frames(ops, carry, xi_i[:, None], xid_i[:, None], B_i[..., None], L_i[None], with_velocity)
        return tip, carry

    _, bases = jax.lax.scan(step, root, (xi, xi_dot, B, L), unroll=True)
    return bases


def frames_at(ops, bases: Frame, xi: Array, xi_dot: Array, B: Array, seg: Array, s_local: Array, with_velocity: bool) -> Frame:
    """Frames at the points with segment indices ``seg`` ``(P,)`` and local arc lengths
    ``s_local`` ``(P,)``, evaluated in one batch-minor call."""
    base = jax.tree.map(lambda x: jnp.moveaxis(x[seg][..., 0], 0, -1), bases)
    return point_frames(
        ops, base, xi[seg].T, xi_dot[seg].T, jnp.moveaxis(B[seg], 0, -1), s_local, with_velocity
    )
