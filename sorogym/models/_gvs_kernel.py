"""GVS kinematics: fourth-order Magnus steps between quadrature nodes, chained from the
base to the tip.

Each link is cut into cells between consecutive nodes ``X_k < X_k+1`` (the link's base, its
Gauss points and its tip, normalised by its length ``L``). On a cell of physical width
``h = L (X_k+1 - X_k)`` with strains ``xi_1``, ``xi_2`` at the two Gauss points
:data:`~sorogym.models._gvs_basis.MAGNUS_NODES` of the cell, the pose advances by
``exp(Omega)`` with the fourth-order Magnus increment::

    Omega   = h/2 (xi_1 + xi_2) + c [xi_1, xi_2],          c = sqrt(3) h^2 / 12
    dOmega/dq = h/2 (B_1 + B_2) + c (ad_xi_1 B_2 - ad_xi_2 B_1)

(``B_k`` maps the global ``q`` to the strain at Gauss point ``k``). With
``h_c = exp(Omega)`` the body Jacobian, twist and ``dJ/dt qd`` propagate as in a constant
strain segment (:mod:`sorogym.models._pcs_kernel`) with ``s xi -> Omega``::

    J+       = Ad_hc^-1 (J + T(Omega) dOmega/dq)
    eta+     = Ad_hc^-1 (eta + T(Omega) dOmega/dt)
    Jdot+ qd = Ad_hc^-1 Jdot qd + [eta+, T dOmega/dt] + dT/dt dOmega/dt + 2 c T [xi_1', xi_2']

where ``xi_k' = B_k qd``; the last term is ``T (d/dt dOmega/dq) qd``. For constant strains
the bracket vanishes and the step is exact. Arrays use the batch-minor layout of
:mod:`sorogym.models._rod_ops` (trailing axis over cells or points).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jaxtyping import Array

from ._pcs_kernel import Local
from ._rod_ops import pointwise_cross, pointwise_matvec, prefix_sum

_SQRT3_12 = 3.0**0.5 / 12.0


def cell_terms(ops, xi1, xi2, dxi1, dxi2, B1, B2, h, with_velocity: bool) -> Local:
    """Local terms of Magnus cells: strains ``xi_k`` and rates ``dxi_k`` ``(6, P)`` at the
    two Gauss points, their selectors ``B_k`` ``(6, n, P)`` and widths ``h`` ``(P,)`` [m]."""
    half, c = 0.5 * h, _SQRT3_12 * h * h
    omega = half * (xi1 + xi2) + c * ops.bracket(xi1, xi2)
    d_omega_dq = half * (B1 + B2) + c * (ops.bracket(xi1[:, None], B2) - ops.bracket(xi2[:, None], B1))
    table = ops.coefficients(omega)  # shared by exp, T and dT/dt
    R, p = ops.exp(omega, table)
    S = ops.tangent_apply(omega, d_omega_dq, table)
    if with_velocity:
        d_omega = half * (dxi1 + dxi2) + c * (ops.bracket(dxi1, xi2) + ops.bracket(xi1, dxi2))
        TdO, T_dot_dO = jax.jvp(lambda X: ops.tangent_apply(X, d_omega[:, None], table), (omega,), (d_omega,))
        curv = ops.tangent_apply(omega, (2.0 * c * ops.bracket(dxi1, dxi2))[:, None], table)
        cols = jnp.concatenate([S, TdO, T_dot_dO + curv], axis=1)
    else:
        cols = jnp.concatenate([S, jnp.zeros((S.shape[0], 2, S.shape[2]), S.dtype)], axis=1)
    return Local(R, p, cols)


def cell_end_poses(root, cells: Local) -> tuple[Array, Array]:
    """World poses ``(3, 3, C)``, ``(3, C)`` at the end of every cell (a log-depth
    ``associative_scan`` of the cell transforms from the root)."""
    R0, p0 = root[0][..., 0], root[1][:, 0]

    def compose(a, b):  # leading batch axis: pose a followed by pose b
        # 3x3 products as sums of broadcast products: they fuse with the scan's slicing
        # and padding, where batched dots were a kernel each per level
        Ra, pa = a
        Rb, pb = b
        R = sum(Ra[..., :, j, None] * Rb[..., None, j, :] for j in range(3))
        return R, pa + sum(Ra[..., :, j] * pb[..., None, j] for j in range(3))

    Rc, pc = jax.lax.associative_scan(compose, (jnp.moveaxis(cells.R, -1, 0), jnp.moveaxis(cells.p, -1, 0)))
    R, p = compose((R0[None], p0[None]), (Rc, pc))
    return jnp.moveaxis(R, 0, -1), jnp.moveaxis(p, 0, -1)


def node_frames(ops, root, cells: Local, with_velocity: bool, expand=lambda x: x):
    """Node quantities ``(R, p, [J, eta, Jdot qd])`` (body frame) along the trailing axis
    ``(.., 1 + C)``: the root, then the end of every cell of ``cells`` (trailing axis ``C``,
    base to tip).

    Only the poses are chained (a log-depth ``associative_scan`` of the cell
    transforms). The recursion for the columns is unrolled in the world frame, where it
    becomes a sum: with ``g_k`` the world pose at the end of cell ``k`` and ``S_k`` its
    local terms (:func:`cell_terms`),
    ``J_k = Ad_gk^-1 sum_{j <= k} Ad_gj S_j`` (likewise ``eta``), and
    ``Jdot qd_k = Ad_gk^-1 sum_{j <= k} Ad_gj ([eta_j, T dOmega_j] + dT/dt dOmega_j + ...)``.
    Every step is then one batched operation over all cells. ``cells`` may carry each
    cell's Jacobian terms in its link's own coordinates; ``expand`` maps those
    ``(d, k, C)`` columns to the global ``(d, n, C)`` before they are summed.
    """
    R, p = cell_end_poses(root, cells)
    k = cells.cols.shape[1] - 2
    J_world = prefix_sum(expand(ops.adjoint_apply(R, p, cells.cols[:, :k])))
    if with_velocity:
        TdO, extra = cells.cols[:, k : k + 1], cells.cols[:, k + 1 :]
        eta_world = prefix_sum(ops.adjoint_apply(R, p, TdO))
        eta = ops.adjoint_inverse_apply(R, p, eta_world)
        a_world = prefix_sum(ops.adjoint_apply(R, p, ops.bracket(eta, TdO) + extra))
        cols = ops.adjoint_inverse_apply(R, p, jnp.concatenate([J_world, eta_world, a_world], axis=1))
    else:
        J = ops.adjoint_inverse_apply(R, p, J_world)
        cols = jnp.concatenate([J, jnp.zeros((J.shape[0], 2, J.shape[2]), J.dtype)], axis=1)
    return (
        jnp.concatenate([root[0], R], axis=-1),
        jnp.concatenate([root[1], p], axis=-1),
        jnp.concatenate([root[2], cols], axis=-1),
    )


def compact_cell_frames(ops, root, cells: Local, num_links: int):
    """Kinematics at the end of every cell without global Jacobians (see
    :func:`node_frames` for the world-frame sums): poses ``R`` ``(3, 3, C)``, ``p``
    ``(3, C)``; ``J_own`` ``(6, k, C)``, the body-frame Jacobian columns of the cell's own
    link (link coordinates); the body twist ``eta`` and ``dJ/dt qd`` ``(6, C)``; and
    ``S_link`` ``(6, k, N)``, every link's total world-frame column sum, which is the
    world-frame Jacobian ``Ad_g J`` of that link's columns at every point beyond the link.
    Cells are link-major, ``C = num_links Cl``."""
    N = num_links
    R, p = cell_end_poses(root, cells)
    k = cells.cols.shape[1] - 2
    S_world = ops.adjoint_apply(R, p, cells.cols[:, :k])
    C = S_world.shape[-1]
    own = prefix_sum(S_world.reshape(6, k, N, C // N))
    J_own = ops.adjoint_inverse_apply(R, p, own.reshape(S_world.shape))
    TdO, extra = cells.cols[:, k : k + 1], cells.cols[:, k + 1 :]
    eta_world = prefix_sum(ops.adjoint_apply(R, p, TdO))
    eta = ops.adjoint_inverse_apply(R, p, eta_world)
    a_world = prefix_sum(ops.adjoint_apply(R, p, ops.bracket(eta, TdO) + extra))
    a = ops.adjoint_inverse_apply(R, p, a_world)
    return R, p, J_own, eta[:, 0], a[:, 0], own[..., -1]


def coadjoint_to_world(R: Array, p: Array, f: Array) -> Array:
    """``Ad_(R,p)^-T f``: body-frame wrenches ``f = [m, f]`` ``(6, K, P)`` in the world frame,
    ``[R m + p x R f, R f]`` (the dual of :meth:`SpatialOps.adjoint_inverse_apply`)."""
    Rf = pointwise_matvec(R, f[3:])
    return jnp.concatenate([pointwise_matvec(R, f[:3]) + pointwise_cross(p[:, None, :], Rf), Rf])
