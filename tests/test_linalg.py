"""The batch-friendly small linear algebra of the kernels (``sorogym.models._linalg``,
``_rod_ops.prefix_sum``) against NumPy, unbatched and under ``vmap``, with gradients."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sorogym.models._linalg import (
    BATCHED_SOLVE_MAX_SIZE,
    BATCHED_SOLVE_MIN_BATCH,
    SMALL_MATMUL_MAX_TERMS,
    SMALL_SOLVE_MAX_SIZE,
    constrained_spd_solve,
    small_matmul,
    spd_solve,
)
from sorogym.models._rod_ops import prefix_sum


def _spd(rng, n, batch=()):
    A = rng.normal(size=(*batch, n, n))
    return A @ np.swapaxes(A, -1, -2) + n * np.eye(n)


@pytest.mark.parametrize("n", [1, 2, 4, SMALL_SOLVE_MAX_SIZE, SMALL_SOLVE_MAX_SIZE + 4, BATCHED_SOLVE_MAX_SIZE + 2])
def test_spd_solve_matches_numpy_unbatched_and_batched(n):
    rng = np.random.default_rng(n)
    M, b = _spd(rng, n, (5,)), rng.normal(size=(5, n))
    # only the lower triangle is read: garbage above the diagonal must not matter
    M_lower = np.tril(M) + np.triu(rng.normal(size=(n, n)), 1)
    expected = np.linalg.solve(M, b[..., None])[..., 0]
    np.testing.assert_allclose(spd_solve(jnp.asarray(M_lower[0]), jnp.asarray(b[0])), expected[0], rtol=1e-11)
    np.testing.assert_allclose(jax.vmap(spd_solve)(jnp.asarray(M_lower), jnp.asarray(b)), expected, rtol=1e-11)


@pytest.mark.parametrize("n", [4, SMALL_SOLVE_MAX_SIZE + 4, BATCHED_SOLVE_MAX_SIZE + 14])
def test_spd_solve_takes_several_right_hand_sides_and_the_kkt_solve_holds_its_constraints(n):
    """``b`` of shape ``(n, k)``: every path (unrolled, batch-aware, LAPACK) solves each
    column, unbatched and at a batch that takes the batched code; the saddle-point solve
    built on it meets ``M x = f + G^T lam`` and ``G x = b``."""
    rng = np.random.default_rng(20 + n)
    batch, k, c = BATCHED_SOLVE_MIN_BATCH, 3, 2
    M, B = _spd(rng, n, (batch,)), rng.normal(size=(batch, n, k))
    expected = np.linalg.solve(M, B)
    np.testing.assert_allclose(spd_solve(jnp.asarray(M[0]), jnp.asarray(B[0])), expected[0], rtol=1e-10)
    np.testing.assert_allclose(jax.vmap(spd_solve)(jnp.asarray(M), jnp.asarray(B)), expected, rtol=1e-10)
    f, G, b = rng.normal(size=(batch, n)), rng.normal(size=(batch, c, n)), rng.normal(size=(batch, c))
    x, lam = jax.vmap(constrained_spd_solve)(*(jnp.asarray(a) for a in (M, f, G, b)))
    np.testing.assert_allclose(np.einsum("bij,bj->bi", M, x), f + np.einsum("bci,bc->bi", G, lam), atol=1e-9)
    np.testing.assert_allclose(np.einsum("bci,bi->bc", G, x), b, atol=1e-10)


@pytest.mark.parametrize("n", [3, SMALL_SOLVE_MAX_SIZE + 4])
def test_spd_solve_gradient_matches_the_dense_solve(n):
    rng = np.random.default_rng(10 + n)
    batch = BATCHED_SOLVE_MIN_BATCH  # large enough for the unrolled batched path
    M, b = jnp.asarray(_spd(rng, n, (batch,))), jnp.asarray(rng.normal(size=(batch, n)))
    w = jnp.asarray(rng.normal(size=n))
    sym = lambda M: 0.5 * (M + M.T)  # noqa: E731  (a symmetric perturbation of M)
    grad = lambda solve: jax.grad(lambda M, b: w @ solve(sym(M), b), argnums=(0, 1))  # noqa: E731
    dense = grad(jnp.linalg.solve)
    # unbatched and batched (the batched n > SMALL_SOLVE_MAX_SIZE solve takes other code)
    for a, e in zip(grad(spd_solve)(M[0], b[0]), dense(M[0], b[0]), strict=True):
        np.testing.assert_allclose(a, e, rtol=1e-9, atol=1e-12)
    for a, e in zip(jax.vmap(grad(spd_solve))(M, b), jax.vmap(dense)(M, b), strict=True):
        np.testing.assert_allclose(a, e, rtol=1e-9, atol=1e-12)
    # second order: the Hessian of |M^-1 b|^2 in b is 2 M^-T M^-1
    hess = jax.vmap(jax.hessian(lambda M, b: jnp.sum(spd_solve(M, b) ** 2), argnums=1))(M, b)
    inv = np.linalg.inv(np.asarray(M))
    np.testing.assert_allclose(hess, 2 * np.swapaxes(inv, -1, -2) @ inv, rtol=1e-9, atol=1e-12)


def test_batched_mid_size_solve_calls_lapack_only_for_small_batches():
    """Between SMALL_SOLVE_MAX_SIZE and BATCHED_SOLVE_MAX_SIZE one system and small batches go
    to LAPACK, a batch of BATCHED_SOLVE_MIN_BATCH or more to the unrolled factorisation
    (LAPACK under vmap runs one call per batch element), also when that batch is an outer
    vmap around a small inner one; the values agree."""
    n, big = SMALL_SOLVE_MAX_SIZE + 4, BATCHED_SOLVE_MIN_BATCH
    M = jnp.asarray(_spd(np.random.default_rng(2), n))
    lowered = lambda f, *args: jax.jit(f).lower(*args).as_text()  # noqa: E731
    assert "lapack" in lowered(spd_solve, M, jnp.ones(n))
    assert "lapack" in lowered(jax.vmap(spd_solve, in_axes=(None, 0)), M, jnp.ones((4, n)))
    assert "lapack" not in lowered(jax.vmap(spd_solve, in_axes=(None, 0)), M, jnp.ones((big, n)))
    nested = jax.vmap(jax.vmap(spd_solve, in_axes=(None, 0)), in_axes=(None, 0))
    b = jnp.asarray(np.random.default_rng(3).normal(size=(big, 4, n)))
    assert "lapack" not in lowered(nested, M, b)
    np.testing.assert_allclose(
        nested(M, b), np.linalg.solve(np.asarray(M), np.asarray(b)[..., None])[..., 0], rtol=1e-10, atol=1e-15
    )


LONG = SMALL_MATMUL_MAX_TERMS + 8  # takes the a @ b fallback


@pytest.mark.parametrize(
    "shapes", [((3, 3), (3, 3)), ((6, 6), (6, 4)), ((4, 5), (5,)), ((2, 1), (1, 7)), ((3, LONG), (LONG, 2))]
)
def test_small_matmul_is_the_matrix_product(shapes):
    rng = np.random.default_rng(len(str(shapes)))
    a, b = rng.normal(size=(4, *shapes[0])), rng.normal(size=(4, *shapes[1]))
    np.testing.assert_allclose(small_matmul(jnp.asarray(a[0]), jnp.asarray(b[0])), a[0] @ b[0], rtol=1e-12)
    expected = np.stack([x @ y for x, y in zip(a, b, strict=True)])
    np.testing.assert_allclose(jax.vmap(small_matmul)(jnp.asarray(a), jnp.asarray(b)), expected, rtol=1e-12)


def test_small_matmul_rejects_shapes_that_do_not_chain():
    with pytest.raises(ValueError, match="do not chain"):
        small_matmul(jnp.ones((3, 4)), jnp.ones((3, 2)))


def test_prefix_sum_is_the_cumulative_sum_along_the_last_axis():
    x = np.random.default_rng(3).normal(size=(2, 6, 5, 12))
    np.testing.assert_allclose(prefix_sum(jnp.asarray(x)), np.cumsum(x, axis=-1), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(jax.vmap(prefix_sum)(jnp.asarray(x)), np.cumsum(x, axis=-1), rtol=1e-12, atol=1e-14)
