"""Small dense linear algebra shared by the models and the integrators."""

from __future__ import annotations

import jax
from jaxtyping import Array, Float


def spd_solve(M: Float[Array, "n n"], b: Float[Array, " n"]) -> Float[Array, " n"]:
    """``M^-1 b`` for a symmetric positive-definite ``M``: a Cholesky factor (``M`` is taken
    as symmetric, not symmetrised) and two triangular solves, with no intermediate layout
    changes."""
    L = jax.lax.linalg.cholesky(M, symmetrize_input=False)
    x = jax.lax.linalg.triangular_solve(L, b[:, None], left_side=True, lower=True)
    return jax.lax.linalg.triangular_solve(L, x, left_side=True, lower=True, transpose_a=True)[:, 0]
