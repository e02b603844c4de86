"""Small dense linear algebra shared by the models and the integrators."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

#: Matrix sizes up to which :func:`spd_solve` factors and solves by unrolled scalar code.
SMALL_SOLVE_MAX_SIZE = 8
#: Matrix sizes up to which :func:`spd_solve` takes the unrolled code under ``jax.vmap``
#: only (unbatched calls keep LAPACK, which is faster there).
BATCHED_SOLVE_MAX_SIZE = 16
#: Smallest batch for which that unrolled code is taken (smaller batches: LAPACK per system).
BATCHED_SOLVE_MIN_BATCH = 64


def spd_solve(M: Float[Array, "n n"], b: Float[Array, "n ..."]) -> Float[Array, "n ..."]:
    """``M^-1 b`` for a symmetric positive-definite ``M`` (its lower triangle is read, ``M``
    is not symmetrised) and ``b`` of shape ``(n,)`` or ``(n, k)`` (``k`` right-hand sides):
    a Cholesky factor and two triangular solves.

    Up to ``SMALL_SOLVE_MAX_SIZE`` the factor and the substitutions are unrolled scalar
    arithmetic on the matrix entries (one fusion per batch under ``jax.vmap``); larger
    systems call LAPACK through ``jax.lax.linalg``. Under ``jax.vmap`` XLA:CPU runs the
    LAPACK path as one small call per batch element: at 1024 batch elements, n = 4 takes
    115 us that way and 2.5 us unrolled, n = 8 160 us and 10 us; one unbatched n = 4 solve
    0.49 us and 0.14 us (this machine). At n = 12 the unrolled code is 9x faster batched
    but twice as slow unbatched, so up to ``BATCHED_SOLVE_MAX_SIZE`` the choice is made
    when the solve is batched (:func:`jax.custom_batching.custom_vmap`): LAPACK for one
    system and for batches below ``BATCHED_SOLVE_MIN_BATCH`` (a loop of single solves,
    which an enclosing ``vmap`` batches again), the unrolled code for larger batches on a
    CPU (:func:`jax.lax.platform_dependent`; other platforms keep their batched LAPACK
    equivalents, where ~100 small kernels per solve would each cost a launch). That solve
    sits inside :func:`jax.lax.custom_linear_solve`, so derivatives (any order, either
    mode) are solves with the same ``M`` and never differentiate the factorisation.
    """
    n = M.shape[-1]
    if n <= SMALL_SOLVE_MAX_SIZE:
        return _unrolled_cholesky_solve(M, b)
    if n > BATCHED_SOLVE_MAX_SIZE:
        return _lapack_cholesky_solve(M, b)

    def matvec(x):  # the symmetric matrix of M's lower triangle
        return jnp.tril(M) @ x + jnp.tril(M, -1).T @ x

    return jax.lax.custom_linear_solve(matvec, b, lambda _, r: _batch_aware_solve(M, r), symmetric=True)


def _lapack_cholesky_solve(M, b):
    """``M^-1 b`` for ``b`` of shape ``(n,)`` or ``(n, k)`` (``k`` right-hand sides, one
    factorisation and one pair of triangular solves)."""
    L = jax.lax.linalg.cholesky(M, symmetrize_input=False)
    B = b[:, None] if b.ndim == 1 else b
    x = jax.lax.linalg.triangular_solve(L, B, left_side=True, lower=True)
    x = jax.lax.linalg.triangular_solve(L, x, left_side=True, lower=True, transpose_a=True)
    return x[:, 0] if b.ndim == 1 else x


@jax.custom_batching.custom_vmap
def _batch_aware_solve(M, b):
    return _lapack_cholesky_solve(M, b)


@_batch_aware_solve.def_vmap
def _batch_aware_solve_vmap(axis_size, in_batched, M, b):
    M, b = (x if batched else jnp.broadcast_to(x, (axis_size, *x.shape)) for x, batched in zip((M, b), in_batched))
    if axis_size < BATCHED_SOLVE_MIN_BATCH:
        # one system at a time, each still batch-aware for a vmap around this one
        return jax.lax.map(lambda Mb: _batch_aware_solve(*Mb), (M, b)), True
    unrolled = lambda M, b: jax.vmap(_unrolled_cholesky_solve)(M, b)  # noqa: E731
    lapack = lambda M, b: jax.vmap(_lapack_cholesky_solve)(M, b)  # noqa: E731
    return jax.lax.platform_dependent(M, b, cpu=unrolled, default=lapack), True


def _unrolled_cholesky_solve(M, b):
    n = M.shape[-1]
    L = [[None] * n for _ in range(n)]  # lower factor, entry by entry
    for j in range(n):
        L[j][j] = jnp.sqrt(M[j, j] - _dot([L[j][k] for k in range(j)], [L[j][k] for k in range(j)]))
        inv = 1.0 / L[j][j]
        for i in range(j + 1, n):
            L[i][j] = (M[i, j] - _dot([L[i][k] for k in range(j)], [L[j][k] for k in range(j)])) * inv
    y = []  # L y = b
    for i in range(n):
        y.append((b[i] - _dot([L[i][k] for k in range(i)], y)) / L[i][i])
    x = [None] * n  # L^T x = y
    for i in reversed(range(n)):
        x[i] = (y[i] - _dot([L[k][i] for k in range(i + 1, n)], x[i + 1 :])) / L[i][i]
    return jnp.stack(x)


def _dot(a: list, b: list):
    """Sum of the products of two equally long lists of scalars (0 when empty)."""
    total = 0.0
    for u, v in zip(a, b, strict=True):
        total = total + u * v
    return total


#: Contraction lengths up to which :func:`small_matmul` unrolls (longer ones use ``a @ b``).
SMALL_MATMUL_MAX_TERMS = 32


def small_matmul(a: Float[Array, "n k"], b: Float[Array, "k ..."]) -> Float[Array, "n ..."]:
    """``a @ b`` for a small contraction length ``k`` (``b`` of shape ``(k, m)`` or ``(k,)``),
    written as ``k`` unrolled multiply-adds of broadcast columns and rows.

    Numerically the same product (one more rounding order). Under ``jax.vmap`` (every env of
    a batch) XLA:CPU turns ``a @ b`` into a batched dot that calls one tiny matrix kernel
    per batch element, while this form is a single elementwise fusion over the batch: at
    1024 batch elements, 4x4 @ 4x4 takes 400 us as a dot and 5 us unrolled, 6x6 @ 6x4 430 us
    and 24 us (this machine). Contractions longer than ``SMALL_MATMUL_MAX_TERMS`` fall back
    to ``a @ b``.
    """
    k = a.shape[-1]
    if b.shape[0] != k:
        raise ValueError(f"small_matmul: shapes {a.shape} and {b.shape} do not chain")
    if k > SMALL_MATMUL_MAX_TERMS:
        return a @ b
    column = lambda j: a[:, j].reshape((-1,) + (1,) * (b.ndim - 1))  # noqa: E731  (broadcasts against b[j])
    out = column(0) * b[0]
    for j in range(1, k):
        out = out + column(j) * b[j]
    return out


def constrained_spd_solve(
    M: Float[Array, "n n"], f: Float[Array, " n"], G: Float[Array, "c n"], b: Float[Array, " c"]
) -> tuple[Float[Array, " n"], Float[Array, " c"]]:
    """``(x, lam)`` with ``M x = f + G^T lam`` and ``G x = b``: the saddle-point (KKT) system
    of a symmetric positive-definite ``M`` under the full-row-rank constraints ``G``, by its
    Schur complement: ``x0 = M^-1 f``, ``Y = M^-1 G^T``, ``(G Y) lam = b - G x0``,
    ``x = x0 + Y lam``. Solves with :func:`spd_solve` (the same ``M``, so derivatives stay
    solves); ``G M^-1 G^T`` is factored by Cholesky (NaN where ``G`` loses rank, i.e. at a
    singular configuration of a closed chain).

    ``x0`` and ``Y`` come from one solve with the ``1 + c`` right-hand sides ``[f, G^T]``:
    one factorisation of ``M``, and no two independent LAPACK calls that XLA:CPU could run
    at once (jaxlib 0.10's batched LAPACK kernels each block a thread of the intra-op pool
    while waiting for their batch chunks, so as many concurrent batched calls as the pool
    has threads deadlock it; seen under ``vmap`` on a 2-core machine)."""
    X = spd_solve(M, jnp.concatenate([f[:, None], G.T], axis=1))  # (n, 1 + c)
    x0, Y = X[:, 0], X[:, 1:]
    S = G @ Y
    lam = _lapack_cholesky_solve(0.5 * (S + S.T), b - G @ x0)
    return x0 + Y @ lam, lam
