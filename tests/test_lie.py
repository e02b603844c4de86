"""Layer 1: Lie-group primitives against their definitions, finite at zero."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.linalg import expm

from sorogym.lie import se2, se3, so3
from sorogym.models._rod_ops import PlanarOps, SpatialOps

SCALES = [0.0, 1e-9, 1e-4, 0.3, 0.999, 1.001, 2.5]


def _series_tangent(adX):
    T, P = np.zeros_like(adX), np.eye(adX.shape[0])
    for k in range(60):
        T += (-1) ** k * P / math.factorial(k + 1)
        P = P @ adX
    return T


@pytest.mark.parametrize("scale", SCALES)
def test_se3_exp_log_tangent(scale):
    rng = np.random.default_rng(1)
    xi = rng.normal(size=6) * scale
    g = np.asarray(se3.exp(xi))
    np.testing.assert_allclose(g, expm(np.asarray(se3.hat(xi))), atol=1e-14)
    if np.linalg.norm(xi[:3]) < np.pi:
        np.testing.assert_allclose(se3.log(g), xi, atol=1e-13)
    np.testing.assert_allclose(se3.tangent_map(xi), _series_tangent(np.asarray(se3.ad(xi))), atol=1e-14)
    np.testing.assert_allclose(se3.vee(se3.hat(xi)), xi)


@pytest.mark.parametrize("scale", SCALES)
def test_se2_exp_log_tangent(scale):
    rng = np.random.default_rng(2)
    xi = rng.normal(size=3) * scale
    g = np.asarray(se2.exp(xi))
    np.testing.assert_allclose(g, expm(np.asarray(se2.hat(xi))), atol=1e-14)
    np.testing.assert_allclose(se2.log(g), xi, atol=1e-13)
    np.testing.assert_allclose(se2.tangent_map(xi), _series_tangent(np.asarray(se2.ad(xi))), atol=1e-14)
    np.testing.assert_allclose(se2.vee(se2.hat(xi)), xi)


def test_planar_embedding_of_spatial_maps():
    """hat, exp and Ad of a planar twist embedded in se(3) reduce to the se(2) forms."""
    rng = np.random.default_rng(3)
    for _ in range(5):
        x2 = rng.normal(size=3)
        x6 = np.array([0, 0, x2[0], x2[1], x2[2], 0.0])
        proj = np.ix_([0, 1, 3], [0, 1, 3])
        np.testing.assert_allclose(np.asarray(se3.hat(x6))[proj], se2.hat(x2), atol=1e-15)
        np.testing.assert_allclose(np.asarray(se3.exp(x6))[proj], se2.exp(x2), atol=1e-14)
        g2, g6 = se2.exp(x2), se3.exp(x6)
        rows = [2, 3, 4]
        np.testing.assert_allclose(np.asarray(se3.adjoint(g6))[np.ix_(rows, rows)], se2.adjoint(g2), atol=1e-14)


def test_log_of_pure_rotation_translation_and_identity():
    w = np.array([0.3, -1.2, 0.5])
    g = se3.from_rotation_translation(so3.exp(w), jnp.zeros(3))
    np.testing.assert_allclose(se3.log(g), np.r_[w, 0, 0, 0], atol=1e-14)
    p = np.array([0.1, 0.2, -0.3])
    np.testing.assert_allclose(se3.log(se3.from_rotation_translation(jnp.eye(3), p)), np.r_[0, 0, 0, p], atol=1e-15)
    np.testing.assert_array_equal(se3.log(jnp.eye(4)), np.zeros(6))
    # near pi the symmetric-part branch is used
    axis = np.array([1.0, 2.0, -0.5]) / np.linalg.norm([1.0, 2.0, -0.5])
    for theta in [np.pi - 1e-3, np.pi - 1e-7]:
        np.testing.assert_allclose(so3.log(so3.exp(theta * axis)), theta * axis, atol=1e-9)


def test_adjoint_identities():
    rng = np.random.default_rng(4)
    g = se3.exp(rng.normal(size=6))
    x = rng.normal(size=6)
    np.testing.assert_allclose(g @ se3.hat(x) @ se3.inverse(g), se3.hat(se3.adjoint(g) @ x), atol=1e-14)
    np.testing.assert_allclose(se3.adjoint_inverse(g) @ se3.adjoint(g), np.eye(6), atol=1e-14)
    np.testing.assert_allclose(se3.coadjoint(g), se3.adjoint_inverse(g).T, atol=1e-15)
    R, p = np.asarray(g[:3, :3]), np.asarray(g[:3, 3])
    np.testing.assert_allclose(np.asarray(se3.adjoint(g))[3:, :3], np.asarray(so3.hat(p)) @ R, atol=1e-15)
    a, b = rng.normal(size=6), rng.normal(size=6)
    np.testing.assert_allclose(se3.hat(se3.ad(a) @ b), se3.hat(a) @ se3.hat(b) - se3.hat(b) @ se3.hat(a), atol=1e-14)
    np.testing.assert_allclose(se3.bracket(a, b), se3.ad(a) @ b, atol=1e-15)
    g2 = se2.exp(rng.normal(size=3))
    x2 = rng.normal(size=3)
    np.testing.assert_allclose(g2 @ se2.hat(x2) @ se2.inverse(g2), se2.hat(se2.adjoint(g2) @ x2), atol=1e-14)
    np.testing.assert_allclose(se2.adjoint_inverse(g2) @ se2.adjoint(g2), np.eye(3), atol=1e-14)
    a2, b2 = rng.normal(size=3), rng.normal(size=3)
    np.testing.assert_allclose(se2.bracket(a2, b2), se2.ad(a2) @ b2, atol=1e-15)


@pytest.mark.parametrize("scale", [0.0, 1e-6, 0.5, 2.0])
def test_tangent_map_first_order_condition_and_derivative(scale):
    """exp(xi + d) ~ exp(xi) exp(T(xi) d); dT/dt matches AD; T(0) = I; dT(xi, 0) = 0."""
    rng = np.random.default_rng(5)
    xi = rng.normal(size=6) * scale
    d = rng.normal(size=6) * 1e-6
    lhs = se3.exp(xi + d)
    rhs = se3.exp(xi) @ se3.exp(se3.tangent_map(xi) @ d)
    assert np.abs(np.asarray(lhs - rhs)).max() < 1e-11
    xd = rng.normal(size=6)
    Td = se3.tangent_map_derivative(xi, xd)
    Td_ad = jax.jacfwd(se3.tangent_map)(jnp.asarray(xi)) @ xd
    np.testing.assert_allclose(Td, Td_ad, atol=1e-13)
    np.testing.assert_array_equal(se3.tangent_map_derivative(xi, np.zeros(6)), np.zeros((6, 6)))
    np.testing.assert_allclose(se3.tangent_map(np.zeros(6)), np.eye(6))
    x2 = rng.normal(size=3) * scale
    d2 = rng.normal(size=3) * 1e-6
    err2 = se2.exp(x2 + d2) - se2.exp(x2) @ se2.exp(se2.tangent_map(x2) @ d2)
    assert np.abs(np.asarray(err2)).max() < 1e-11


def _log_exp(x):
    return se3.log(se3.exp(x))


@pytest.mark.parametrize("fn", [se3.exp, se3.tangent_map, _log_exp])
def test_gradients_finite_at_zero(fn):
    """Forward- and reverse-mode derivatives at zero twist are finite (no NaN leaks)."""
    x0 = jnp.zeros(6)
    rev = jax.jacrev(lambda x: jnp.sum(fn(x) ** 2))(x0)
    fwd = jax.jacfwd(fn)(x0)
    hess = jax.hessian(lambda x: jnp.sum(fn(x)))(x0)
    for arr in (rev, fwd, hess):
        assert np.all(np.isfinite(np.asarray(arr)))


def test_batch_minor_ops_match_lie_module():
    """The fused kernels' closed forms equal sorogym.lie's reference implementations."""
    rng = np.random.default_rng(6)
    for scale in [0.0, 1e-5, 0.7, 3.0]:
        X = rng.normal(size=(6, 4)) * scale
        R, p = SpatialOps.exp(jnp.asarray(X))
        x = rng.normal(size=(6, 5, 4))
        Tx = SpatialOps.tangent_apply(jnp.asarray(X), jnp.asarray(x))
        Ax = SpatialOps.adjoint_inverse_apply(R, p, jnp.asarray(x))
        for k in range(4):
            g = se3.exp(X[:, k])
            np.testing.assert_allclose(R[..., k], g[:3, :3], atol=1e-14)
            np.testing.assert_allclose(p[:, k], g[:3, 3], atol=1e-14)
            np.testing.assert_allclose(Tx[..., k], se3.tangent_map(X[:, k]) @ x[..., k], atol=1e-13)
            np.testing.assert_allclose(Ax[..., k], se3.adjoint_inverse(g) @ x[..., k], atol=1e-13)
        X2 = rng.normal(size=(3, 4)) * scale
        R2, p2 = PlanarOps.exp(jnp.asarray(X2))
        x2 = rng.normal(size=(3, 5, 4))
        T2 = PlanarOps.tangent_apply(jnp.asarray(X2), jnp.asarray(x2))
        A2 = PlanarOps.adjoint_inverse_apply(R2, p2, jnp.asarray(x2))
        for k in range(4):
            g2 = se2.exp(X2[:, k])
            np.testing.assert_allclose(R2[..., k], g2[:2, :2], atol=1e-14)
            np.testing.assert_allclose(T2[..., k], se2.tangent_map(X2[:, k]) @ x2[..., k], atol=1e-13)
            np.testing.assert_allclose(A2[..., k], se2.adjoint_inverse(g2) @ x2[..., k], atol=1e-13)


def test_batch_minor_point_force_maps_and_shared_tables_match_lie_module():
    """``tangent_transpose_force`` is ``T(X)^T [0, f]``, ``force_wrench_at`` is
    ``Ad_(I, p)^-T [0, f]``, and ``exp`` / ``tangent_apply`` given the shared
    ``coefficients`` table equal the plain calls, with the same derivatives in ``X`` (first
    and second order: the kernels differentiate through them)."""
    rng = np.random.default_rng(7)
    for ops, group, k in ((SpatialOps, se3, 3), (PlanarOps, se2, 2)):
        d = ops.dim
        for scale in [0.0, 1e-5, 0.7, 3.0]:
            X = jnp.asarray(rng.normal(size=(d, 4)) * scale)
            f, p = rng.normal(size=(k, 4)), rng.normal(size=(k, 4))
            table = ops.coefficients(X)
            Tf = ops.tangent_transpose_force(X, jnp.asarray(f), table)
            Wf = ops.force_wrench_at(jnp.asarray(p), jnp.asarray(f))
            for j in range(4):
                w = np.concatenate([np.zeros(d - k), f[:, j]])
                np.testing.assert_allclose(Tf[:, j], group.tangent_map(X[:, j]).T @ w, atol=1e-13)
                g = np.eye(k + 1)
                g[:k, k] = p[:, j]
                np.testing.assert_allclose(Wf[:, j], group.adjoint_inverse(g).T @ w, atol=1e-13)
            x, dX = jnp.asarray(rng.normal(size=(d, 2, 4))), jnp.asarray(rng.normal(size=(d, 4)))
            shared = lambda X_, ops=ops, x=x: (  # noqa: E731
                ops.exp(X_, ops.coefficients(X_)),
                ops.tangent_apply(X_, x, ops.coefficients(X_)),
            )
            plain = lambda X_, ops=ops, x=x: (ops.exp(X_), ops.tangent_apply(X_, x))  # noqa: E731
            second = lambda fn, dX=dX: jax.jvp(lambda Y: jax.jvp(fn, (Y,), (dX,))[1], (X,), (dX,))  # noqa: E731
            for a, b in zip(jax.tree.leaves(second(shared)), jax.tree.leaves(second(plain)), strict=True):
                np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)

            # the kernels' pattern: dT/dt from a jvp with the table of the primal closed over
            def rate(Y, table_of, ops=ops, x=x, dX=dX):
                table = table_of(Y)
                return jax.jvp(lambda Z: ops.tangent_apply(Z, x, table), (Y,), (dX,))[1]

            ours = jax.jvp(lambda Y: rate(Y, ops.coefficients), (X,), (dX,))
            ref = jax.jvp(lambda Y: rate(Y, lambda _: None), (X,), (dX,))
            for a, b in zip(ours, ref, strict=True):
                np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_coefficient_table_matches_scalar_functions_and_their_derivatives():
    """The batched coefficient table (polynomial form of the closed-form recurrences above
    the switch, Taylor series below) gives a, b, c and their first two rho-derivatives:
    values against the scalar functions, derivatives against AD through them, across the
    branch switch, for 1-D and 2-D inputs."""
    from sorogym.lie._coefficients import TABLE_RHO_SWITCH, coefficient_table, cosc_b, sinc_a, sinc_c

    rng = np.random.default_rng(11)
    rho = np.concatenate(
        [
            [0.0, 1e-12, TABLE_RHO_SWITCH * (1 - 1e-9), TABLE_RHO_SWITCH, TABLE_RHO_SWITCH * (1 + 1e-9)],
            rng.uniform(0.0, 4.0, 60),
            rng.uniform(4.0, 400.0, 20),
        ]
    )
    scalar = lambda r: jnp.stack([sinc_a(r), cosc_b(r), sinc_c(r)])  # noqa: E731
    d1 = jax.vmap(jax.jacfwd(scalar))(jnp.asarray(rho)).T
    d2 = jax.vmap(jax.jacfwd(jax.jacfwd(scalar)))(jnp.asarray(rho)).T
    expected = np.concatenate([np.asarray(scalar(jnp.asarray(rho))), np.asarray(d1), np.asarray(d2)])
    table = np.asarray(coefficient_table(rho))
    assert table.shape == (9, rho.size)
    np.testing.assert_allclose(table, expected, rtol=0, atol=1e-12)
    grid = np.asarray(coefficient_table(rho[:84].reshape(12, 7)))
    np.testing.assert_array_equal(grid.reshape(9, -1), table[:, :84])
