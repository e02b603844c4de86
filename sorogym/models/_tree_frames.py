"""Frames of a :class:`~sorogym.models.BodyTree`'s points and the placement of their
contributions: the path-local column layout (:class:`_Frames`), attaching frames to their
parents (:func:`_attach`), evaluating a group's rods (:func:`_map_rods`), and adding
per-body blocks on the path coordinates to the tree-wide vectors and matrices
(:func:`_scatter_blocks`).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

from ._rod_ops import SpatialOps as ops
from ._static_index import runs as index_runs


class _Frames(NamedTuple):
    """Frames at ``X`` points, batch-minor: ``R (3, 3, X)``, ``p (3, X)`` and the columns
    ``(6, L + 2, X)`` = ``[J_path, eta, dJ/dt qd]`` (body frame), where ``J_path`` holds
    only the ``L`` columns of the coordinates on the point's path to the root (the others
    are zero); ``path`` ``(G, L)`` (static) names them, the points being ``G`` bodies'
    (``X = G P``, body-major)."""

    R: Array
    p: Array
    cols: Array
    path: tuple

    @property
    def length(self) -> int:
        return self.cols.shape[1] - 2

    def blocks(self, values: Array) -> Array:
        """``(..., X)`` -> ``(..., G, P)``."""
        G = max(len(self.path), 1)
        return values.reshape(*values.shape[:-1], G, values.shape[-1] // G)


class _GroupFrames(NamedTuple):
    root: _Frames  # body frames (X = G)
    points: _Frames | None  # rod quadrature points (X = G P), body-major


def _take(frames: _Frames, idx) -> _Frames:
    """The frames of the bodies ``idx`` (one point per body)."""
    idx = np.asarray(idx, dtype=int)
    path = tuple(frames.path[i] for i in idx)
    return _Frames(frames.R[..., idx], frames.p[..., idx], frames.cols[..., idx], path)


def _attach(
    base: _Frames, R: Array, p: Array, own: Array, rel: Array, dphi: Array, own_path, with_velocity, at_origin=False
):
    """Frames of points moved by local transforms ``(R, p)`` ``(.., X)`` from their bases
    (one per point), whose relative twist is ``own qd_own`` with the local columns ``own``
    ``(6, k, X)`` of coordinates ``own_path`` ``(G, k)``; ``rel`` ``(6, 1, X)`` is the
    relative twist and ``dphi`` ``(6, 1, X)`` the rate of the local columns times the
    velocities. The path of the result is the base's followed by ``own_path``::

        J = [Ad_h^-1 J_base, own],   eta = Ad_h^-1 eta_base + rel,
        dJ/dt qd = Ad_h^-1 (dJ/dt qd)_base + [eta, rel] + dphi

    ``at_origin`` (static): the base frames are the identity pose, so the result's pose is
    ``(R, p)`` itself. A base with no path coordinates is at rest (``eta`` and ``dJ/dt qd``
    zero), so nothing of it is moved. Both skip arithmetic XLA cannot drop on its own
    (products with zeros) and the kernels it would take."""
    Rn, pn = (R, p) if at_origin else ops.compose(base.R, base.p, R, p)
    path = tuple(tuple(a) + tuple(b) for a, b in zip(base.path, own_path, strict=True))
    L = base.length
    if L == 0:
        return _Frames(Rn, pn, jnp.concatenate([own, rel, dphi], axis=1), path)  # [rel, rel] = 0
    moved = ops.adjoint_inverse_apply(R, p, base.cols)
    eta = moved[:, L : L + 1] + rel
    acc = moved[:, L + 1 :] + dphi
    if with_velocity:
        acc = acc + ops.bracket(eta, rel)
    return _Frames(Rn, pn, jnp.concatenate([moved[:, :L], own, eta, acc], axis=1), path)


def _repeat(frames: _Frames, times: int) -> _Frames:
    """Every frame repeated ``times`` times along the points (same path per body)."""
    return _Frames(*(jnp.repeat(x, times, axis=-1) for x in frames[:3]), frames.path)


def _scatter_columns(f: _Frames, n: int) -> Array:
    """Full body Jacobians ``(6, n, X)`` from path columns."""
    out = jnp.zeros((6, n, f.cols.shape[-1]), f.cols.dtype)
    if f.length == 0:  # a body fixed to the world: no coordinate moves it
        return out
    J = f.blocks(f.cols[:, : f.length])  # (6, L, G, P)
    idx = np.asarray(f.path, dtype=int).reshape(-1, f.length)
    out = out.reshape(6, n, *J.shape[2:])
    for g in range(idx.shape[0]):
        out = out.at[:, idx[g], g].set(J[:, :, g])
    return out.reshape(6, n, -1)


_MAX_PADS = 64  # placements by zero-padding per call; beyond, one scatter


def _scatter_blocks(target: Array, f: _Frames, blocks: Array) -> Array:
    """Add per-body blocks ``(G, L)`` or ``(G, L, L)`` on the path coordinates to ``target``
    ``(n,)`` or ``(n, n)``.

    Paths are a few contiguous runs of coordinates (a joint's, then a rod's), so each block
    is cut at the runs and zero-padded into place: pads and adds fuse into one loop, where a
    scatter is a kernel of its own (a large share of a small tree's cost). Many runs fall
    back to one scatter."""
    if f.length == 0:  # a body fixed to the world contributes nothing
        return target
    idx = np.asarray(f.path, dtype=int).reshape(-1, f.length)
    runs = [index_runs(row) for row in idx]
    n = target.shape[0]
    matrix = blocks.ndim == 3
    if sum(len(r) ** (2 if matrix else 1) for r in runs) > _MAX_PADS:
        if matrix:
            return target.at[idx[:, :, None], idx[:, None, :]].add(blocks)
        return target.at[idx].add(blocks)
    for g, row_runs in enumerate(runs):
        for a, t, la in row_runs:
            if not matrix:
                target = target + jnp.pad(blocks[g, a : a + la], (t, n - t - la))
                continue
            for b, s, lb in row_runs:
                target = target + jnp.pad(blocks[g, a : a + la, b : b + lb], ((t, n - t - la), (s, n - s - lb)))
    return target


def _spatial_inertia(mass: Array, com: Array, inertia: Array) -> Array:
    """``(6, 6, X)`` inertia at the frame origin for body twists ``[w; v]`` (batch-minor):
    ``[[I_c + m [c]^T [c], m [c]], [-m [c], m 1]]``."""
    c0, c1, c2 = com[0], com[1], com[2]
    z = jnp.zeros_like(c0)
    C = jnp.stack([jnp.stack([z, -c2, c1]), jnp.stack([c2, z, -c0]), jnp.stack([-c1, c0, z])])  # (3, 3, X)
    CtC = jnp.einsum("kix,kjx->ijx", C, C)
    top = jnp.concatenate([inertia + mass * CtC, mass * C], axis=1)
    eye = jnp.eye(3, dtype=mass.dtype)[:, :, None]
    bottom = jnp.concatenate([-mass * C, mass * eye], axis=1)
    return jnp.concatenate([top, bottom], axis=0)


def _map_rods(fn, rods, *args):
    """``jax.vmap(fn)(rods, *args)`` over a group's stacked rods (leading axis ``G``). A
    single rod is evaluated unbatched and given the axis after: a batch of one changes XLA's
    layouts and fusions (a one-rod PCS group compiled to about 7 more kernels under vmap)."""
    if args[0].shape[0] == 1:
        out = fn(jax.tree.map(lambda x: x[0], rods), *(a[0] for a in args))
        return jax.tree.map(lambda x: x[None], out)
    return jax.vmap(fn)(rods, *args)
