"""Indexing with index arrays known at trace time, as slices where they are contiguous.

On XLA:CPU a gather is usually a kernel of its own (it does not fuse into several consumers),
while a slice fuses into whatever reads it. The models pick coordinates out of ``q``,
``qd`` and ``y`` with static integer arrays (a body's joint and rod coordinates, a rod's
active strains, a quaternion's four slots) that are almost always a few contiguous runs, so
they are taken as slices and one concatenation.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

MAX_RUNS = 8  # slices per take; beyond, one gather


def runs(row) -> list[tuple[int, int, int]]:
    """Contiguous runs ``(position in row, first index, length)`` of a 1-D static index row."""
    out, start = [], 0
    for k in range(1, len(row) + 1):
        if k == len(row) or row[k] != row[k - 1] + 1:
            out.append((start, int(row[start]), k - start))
            start = k
    return out


def take(x: Array, idx, max_runs: int = MAX_RUNS) -> Array:
    """``x[..., idx]`` for a static integer array ``idx`` of any shape (result shape
    ``(*x.shape[:-1], *idx.shape)``), from slices of the last axis of ``x`` when ``idx``
    has at most ``max_runs`` contiguous runs (non-negative indices), else one gather."""
    idx = np.asarray(idx, dtype=int)
    flat = idx.ravel()
    if flat.size == 0 or flat.min() < 0:
        return x[..., idx]
    pieces = runs(flat)
    if len(pieces) > max_runs:
        return x[..., idx]
    parts = [x[..., t : t + length] for _, t, length in pieces]
    out = parts[0] if len(parts) == 1 else jnp.concatenate(parts, axis=-1)
    return out.reshape(*x.shape[:-1], *idx.shape)
