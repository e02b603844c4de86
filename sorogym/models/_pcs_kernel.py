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
(``d x n``, never ``d x (N d)``).

Evaluation order (the cost on a CPU is dominated by the number of kernels, not by the
arithmetic): the *local* terms ``h``, ``s T(X) B_i``, ``T(X) dX`` and ``dT/dt dX``
depend on the segment's own strain only, so they are computed for every segment tip and
every requested point in **one** batched call. What remains sequential is the cheap
composition with the base quantities, ``N - 1`` steps on single points; the requested
points are then attached to their segment bases in one more batched call. Base
quantities ``J0, eta0, a0`` travel as the columns of one ``(d, n + 2, P)`` array, so one
adjoint application transports all three. Layout: the batch-minor layout of
:mod:`sorogym.models._rod_ops` (trailing axis ``P`` over points).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

from ._rod_ops import pointwise_rmatvec


class Frame(NamedTuple):
    """Kinematic quantities at ``P`` backbone points (trailing axis ``P``)."""

    R: Array  # (k, k, P) rotation body -> world
    p: Array  # (k, P) position in the world [m]
    J: Array  # (d, n, P) body-frame Jacobian
    eta: Array  # (d, 1, P) body twist (zeros when velocities are not propagated)
    jdot_qd: Array  # (d, 1, P) dJ/dt qd (zeros when velocities are not propagated)


class Local(NamedTuple):
    """Terms of a point that depend on its own segment's strain only (trailing axis ``P``)."""

    R: Array  # (k, k, P) rotation of h = exp(s xi)
    p: Array  # (k, P) translation of h
    cols: Array  # (d, n + 2, P): [s T(X) B, T(X) dX, dT/dt dX] (last two zero without velocity)


def _local_terms(ops, xi: Array, xi_dot: Array, B: Array, s: Array, with_velocity: bool) -> Local:
    """Local terms at arc lengths ``s`` ``(P,)`` of segments with strains ``xi`` ``(d, P)``,
    rates ``xi_dot`` ``(d, P)`` and selectors ``B`` ``(d, n, P)``."""
    X = s * xi
    table = ops.coefficients(X)  # shared by exp, T and dT/dt
    Rh, ph = ops.exp(X, table)
    d, n = B.shape[:2]
    if n > d:
        # several segments: most of B's n columns are zero at any point, so form T(X) once
        # (d columns) and select with B by unrolled products instead of applying T to each
        # of the n columns (9 % faster batched PoseTracking steps at n = 12)
        eye = jnp.broadcast_to(jnp.eye(d, dtype=X.dtype)[:, :, None], (d, d, X.shape[-1]))
        T = ops.tangent_apply(X, eye, table)
        S = s * sum(T[:, j][:, None] * B[j][None] for j in range(d))
    else:
        S = s * ops.tangent_apply(X, B, table)
    if with_velocity:
        dX = s * xi_dot
        TdX, T_dot_dX = jax.jvp(lambda X_: ops.tangent_apply(X_, dX[:, None, :], table), (X,), (dX,))
        cols = jnp.concatenate([S, TdX, T_dot_dX], axis=1)
    else:
        cols = jnp.concatenate([S, jnp.zeros((S.shape[0], 2, S.shape[2]), S.dtype)], axis=1)
    return Local(Rh, ph, cols)


def attach(ops, R0: Array, p0: Array, base_cols: Array, loc: Local, with_velocity: bool):
    """Compose local terms with base quantities ``(R0, p0, [J0, eta0, a0])``; returns
    ``(R, p, [J, eta, Jdot qd])``."""
    R, p = ops.compose(R0, p0, loc.R, loc.p)
    cols = ops.adjoint_inverse_apply(loc.R, loc.p, base_cols) + loc.cols
    if with_velocity:
        # Jdot qd gains the bracket [eta(s), T(X) dX].
        eta, TdX = cols[:, -2:-1], loc.cols[:, -2:-1]
        cols = jnp.concatenate([cols[:, :-1], cols[:, -1:] + ops.bracket(eta, TdX)], axis=1)
    return R, p, cols


def to_frame(R, p, cols) -> Frame:
    return Frame(R, p, cols[:, :-2], cols[:, -2:-1], cols[:, -1:])


def root_frame(ops, R0: Array, p0: Array, n: int) -> tuple[Array, Array, Array]:
    """The robot's base as one point: ``(R0 (k, k, 1), p0 (k, 1), zeros (d, n + 2, 1))``."""
    return R0[..., None], p0[:, None], jnp.zeros((ops.dim, n + 2, 1), p0.dtype)


def planar_floating_root(
    ops, R_mount: Array, p_mount: Array, q_base: Array, qd_base: Array, n: int
) -> tuple[Array, Array, Array]:
    """A planar floating base as the root point: the rod's base frame is the floating frame
    ``(R(theta), [x, y])`` (``q_base = [theta, x, y]``, world frame) composed with the fixed
    mount ``(R_mount, p_mount)``; its velocity coordinates are ``qd_base = [theta_dot,
    x_dot, y_dot]`` (world frame, the time derivative of ``q_base``), the first three
    columns of ``q``.

    The floating frame's body twist is ``J_f qd_base`` with ``J_f = [[1, 0], [0, R^T]]``, and
    ``dJ_f/dt qd_base = [0, theta_dot dR^T/dtheta [x_dot, y_dot]]``; the mount transports
    both by ``Ad_mount^-1``. Returns ``(R0 (2, 2, 1), p0 (2, 1), [J0, eta0, a0] (3, n + 2, 1))``
    with ``J0`` zero beyond the base columns.
    """
    theta, xy = q_base[0], q_base[1:]
    theta_dot, xy_dot = qd_base[0], qd_base[1:]
    R_f = ops.base_rotation(theta)
    c, s = jnp.cos(theta), jnp.sin(theta)
    dRt = jnp.stack([jnp.stack([-s, c]), jnp.stack([-c, -s])])  # d R^T / d theta
    zero = jnp.zeros((), q_base.dtype)
    J_f = jnp.zeros((3, n), q_base.dtype).at[0, 0].set(1.0).at[1:, 1:3].set(R_f.T)
    eta_f = jnp.concatenate([theta_dot[None], R_f.T @ xy_dot])
    a_f = jnp.concatenate([zero[None], theta_dot * (dRt @ xy_dot)])
    cols_f = jnp.concatenate([J_f, eta_f[:, None], a_f[:, None]], axis=1)
    cols0 = ops.adjoint_inverse_apply(R_mount[..., None], p_mount[:, None], cols_f[..., None])
    return (R_f @ R_mount)[..., None], (xy + R_f @ p_mount)[:, None], cols0


def _segment_bases(ops, root, tips: Local, with_velocity: bool):
    """Base quantities of every segment, stacked along the trailing axis ``(.., N)``,
    from the local terms ``tips`` at the segment tips (a short unrolled chain)."""
    N = tips.R.shape[-1] + 1
    R, p, cols = root
    out = [root]
    for i in range(N - 1):
        tip = jax.tree.map(lambda x, i=i: x[..., i : i + 1], tips)
        R, p, cols = attach(ops, R, p, cols, tip, with_velocity)
        out.append((R, p, cols))
    return tuple(jnp.concatenate(parts, axis=-1) for parts in zip(*out))


def frames(
    ops,
    root,
    xi: Array,
    xi_dot: Array,
    B: Array,
    L: Array,
    s_local: Array,
    seg: Array | None,
    with_velocity: bool,
    moving_root: bool = False,
) -> Frame:
    """Frames at ``P`` backbone points.

    Args:
        ops: :class:`SpatialOps` or :class:`PlanarOps`.
        root: :func:`root_frame` of the base.
        xi, xi_dot: ``(N, d)`` segment strains and strain rates.
        B: ``(N, d, n)`` selectors of the active strains.
        L: ``(N,)`` segment lengths [m].
        s_local: local arc lengths [m]: ``(N, nq)`` for the same ``nq`` points on every
            segment (``seg=None``; points ordered segment-major, ``P = N nq``), or ``(P,)``
            with the segment index of each point in ``seg`` ``(P,)``.
        with_velocity: propagate ``eta`` and ``dJ/dt qd`` (else they are zeros).
        moving_root: the root carries Jacobian columns and a velocity (a floating base,
            :func:`planar_floating_root`); else they are zeros and skipped.
    """
    N = xi.shape[0]
    if seg is None:
        nq = s_local.shape[1]

        def at_points(x):  # (N, ...) -> (..., N nq), static broadcast
            x = jnp.moveaxis(x, 0, -1)
            return jnp.broadcast_to(x[..., None], (*x.shape, nq)).reshape(*x.shape[:-1], N * nq)

        s_pts = s_local.reshape(-1)
    else:

        def at_points(x):  # (N, ...) -> (..., P), gather
            return jnp.moveaxis(x[seg], 0, -1)

        s_pts = s_local
    # Tips of segments 0 .. N-2 (the last tip is no segment's base) and the points, batched.
    tip_or_point = lambda x: jnp.concatenate([jnp.moveaxis(x[:-1], 0, -1), at_points(x)], axis=-1)  # noqa: E731
    local = _local_terms(
        ops, tip_or_point(xi), tip_or_point(xi_dot), tip_or_point(B), jnp.concatenate([L[:-1], s_pts]), with_velocity
    )
    tips = jax.tree.map(lambda x: x[..., : N - 1], local)
    points = jax.tree.map(lambda x: x[..., N - 1 :], local)
    if N == 1 and not moving_root:  # the only base is the root, which carries no Jacobian nor velocity
        R, p = ops.compose(root[0], root[1], points.R, points.p)
        return to_frame(R, p, points.cols)
    bases = _segment_bases(ops, root, tips, with_velocity) if N > 1 else root
    R0, p0, cols0 = (at_points(jnp.moveaxis(x, -1, 0)) for x in bases)
    return to_frame(*attach(ops, R0, p0, cols0, points, with_velocity))


def _transposed(apply, x: Array) -> Array:
    """The transpose of the linear map ``y -> apply(y)`` on ``(d, P)`` columns, at ``x``."""
    return jax.linear_transpose(apply, x)(x)[0]


def point_force_map(
    ops, root, xi: Array, B: Array, L: Array, s_local: Array, seg: Array | None, moving_root: bool = False
):
    """World rotations ``(k, k, P)`` and positions ``(k, P)`` of ``P`` backbone points
    (layouts of :func:`frames`) and the map ``apply(f_world (k, P)) -> (n,)`` from
    world-frame point forces [N] there to the generalized force ``sum_i J_v(s_i)^T f_i``.

    ``apply`` is the transpose of the proximal-to-distal Jacobian recursion: each point's
    body-frame wrench ``w_i = [0, R_i^T f_i]`` contributes ``s_i B^T T(X_i)^T w_i`` to its
    segment's coordinates and reaches the segment's base as ``Ad_(h_i)^-T w_i``; the wrench
    ``W`` at the base of segment ``j + 1`` adds ``L_j B_j^T T(L_j xi_j)^T W`` to segment
    ``j`` and reaches its base as ``Ad_(h_j)^-T W``. One wrench per point instead of ``n``
    Jacobian columns: several times cheaper than forming ``J`` when only ``J^T f`` is needed.
    With ``moving_root`` (a floating base), the wrench reaching the root adds ``J0^T W``.
    """
    N = xi.shape[0]
    if seg is None:
        nq = s_local.shape[1]
        s_pts = s_local.reshape(-1)
        xi_pts = jnp.repeat(xi.T, nq, axis=1)
        onehot = jnp.asarray(np.repeat(np.eye(N), nq, axis=1), xi.dtype)  # (N, P)
    else:
        s_pts, xi_pts = s_local, jnp.moveaxis(xi[seg], 0, -1)
        onehot = (seg[None, :] == jnp.arange(N)[:, None]).astype(xi.dtype)
    X_tip = L[:-1] * xi[:-1].T  # (d, N - 1)
    X_pts = s_pts * xi_pts  # (d, P)
    X_all = jnp.concatenate([X_tip, X_pts], axis=-1)
    table = ops.coefficients(X_all)  # shared by exp and the transposed T at the points
    Rh, ph = ops.exp(X_all, table)
    table_pts = table[..., N - 1 :]
    R_tip, p_tip, R_loc, p_loc = Rh[..., : N - 1], ph[:, : N - 1], Rh[..., N - 1 :], ph[:, N - 1 :]
    R, p = root[0], root[1]
    bases = [(R, p)]
    for i in range(N - 1):  # segment bases, a short unrolled chain
        R, p = ops.compose(R, p, R_tip[..., i : i + 1], p_tip[:, i : i + 1])
        bases.append((R, p))
    R_base, p_base = (jnp.concatenate(parts, axis=-1) for parts in zip(*bases, strict=True))
    if seg is None:
        R_base, p_base = jnp.repeat(R_base, nq, axis=-1), jnp.repeat(p_base, nq, axis=-1)
    else:
        R_base, p_base = R_base[..., seg], p_base[:, seg]
    R_pts, p_pts = ops.compose(R_base, p_base, R_loc, p_loc)

    def transposed(apply_columns, y):  # transpose of the linear map on single columns (d, K)
        return jax.linear_transpose(lambda x: apply_columns(x[:, None])[:, 0], y)(y)[0]

    def apply(f_world: Array) -> Array:
        # each point's wrench w = [0, R^T f] (body frame) adds s T(X)^T w to its segment's
        # coordinates and carries Ad_h^-T w = [p_h x g, g] to the segment's base, where
        # g = R_base^T f = R_h R^T f is the force in the base's axes
        g = pointwise_rmatvec(R_base, f_world[:, None])[:, 0]
        local = s_pts * ops.tangent_transpose_force(X_pts, pointwise_rmatvec(R_loc, g[:, None])[:, 0], table_pts)
        carried = ops.force_wrench_at(p_loc, g)
        local_sum, carried_sum = local @ onehot.T, carried @ onehot.T  # (d, N)
        coords, W = [local_sum[:, N - 1]], carried_sum[:, N - 1 :]
        for j in range(N - 2, -1, -1):
            X_j, R_j, p_j = X_tip[:, j : j + 1], R_tip[..., j : j + 1], p_tip[:, j : j + 1]
            T_j = lambda x, X_j=X_j, j=j: ops.tangent_apply(X_j, x, table[..., j : j + 1])  # noqa: E731
            coords.append(local_sum[:, j] + L[j] * transposed(T_j, W)[:, 0])
            W = carried_sum[:, j : j + 1] + transposed(
                lambda x, R_j=R_j, p_j=p_j: ops.adjoint_inverse_apply(R_j, p_j, x), W
            )
        tau = jnp.einsum("jdn,dj->n", B, jnp.stack(coords[::-1], axis=-1))
        if moving_root:
            tau = tau + root[2][:, : B.shape[-1], 0].T @ W[:, 0]
        return tau

    return R_pts, p_pts, apply
