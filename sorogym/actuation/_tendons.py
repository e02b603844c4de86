"""Actuation models: generalized-coordinate forces and threadlike tendons.

An actuation model maps actuator commands ``u`` (``m``,) to generalized forces
``tau = A(q) effort(u)``. For tendons, ``A(q) = d phi / dq^T`` where
``phi(q) = l(0) - l(q)`` is the tendon *contraction* (the shortening of each tendon path
from the rest configuration, in m), ``u`` the tendon tensions [N] and
``effort(u) = max(u, 0)`` (a tendon cannot push). The pair is work-conjugate:
``qd^T A(q) u = dphi/dt^T u``, the power the tendons deliver.

Routing is threadlike and fixed in the cross-section frame: within segment ``i`` the
tendon passes at offset ``r(s)`` from the backbone (``[y, z]`` spatial, ``y`` planar), either
constant (``"straight"``) or varying linearly from the segment's base to its tip
(``"linear"``). With constant strain ``xi = [w, v]`` the tendon tangent in the body frame is
``t(s) = v + w x r(s) + r'(s)`` and the path length is ``int |t(s)| ds``.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float

from ._base import Actuation, ActuationContext, RodContext, require_context


class GeneralizedActuation(Actuation):
    """Direct generalized forces on selected coordinates: ``A = I[:, indices]`` (any model).

    Attributes:
        indices: coordinates driven by ``u`` (``None``: all ``n`` coordinates); a
            coordinate listed twice receives the sum of its inputs.
        num_dofs: ``n`` of the model it is installed on (set by :meth:`bind`).
    """

    indices: tuple[int, ...] | None = eqx.field(static=True, default=None)
    num_dofs: int | None = eqx.field(static=True, default=None)

    @property
    def num_actuators(self) -> int:
        if self.indices is not None:
            return len(self.indices)
        if self.num_dofs is None:
            raise ValueError(
                "indices: GeneralizedActuation() drives every coordinate; install it on a model to know how many"
            )
        return self.num_dofs

    def bind(self, context: ActuationContext) -> GeneralizedActuation:
        n = context.num_dofs
        if self.indices is not None and any(not 0 <= i < n for i in self.indices):
            raise ValueError(f"indices: each must lie in [0, {n}), got {self.indices}")
        return GeneralizedActuation(self.indices, n)

    def effort(self, u: Array) -> Array:
        return u

    def matrix(self, context: ActuationContext) -> Float[Array, "n m"]:
        eye = jnp.eye(context.num_dofs, dtype=context.q.dtype)
        return eye if self.indices is None else eye[:, list(self.indices)]

    def force(self, context: ActuationContext, u: Float[Array, " m"]) -> Float[Array, " n"]:
        """``A u`` without forming ``A``: ``u`` placed on the driven coordinates."""
        if self.indices is None:
            return u
        return jnp.zeros((context.num_dofs,), u.dtype).at[np.asarray(self.indices)].add(u)  # repeats add up

    def coordinates(self, context: ActuationContext) -> Float[Array, " m"]:
        """``A^T q``: the driven coordinates."""
        return context.q if self.indices is None else context.q[np.asarray(self.indices)]


def _gauss_legendre(num_points: int) -> tuple[np.ndarray, np.ndarray]:
    x, w = np.polynomial.legendre.leggauss(num_points)
    return (x + 1.0) / 2.0, w / 2.0  # on [0, 1]


class Tendons(Actuation):
    """Threadlike tendons with straight or linear routing, on rod models (PCS, GVS).

    Attributes:
        offsets: cross-section offsets [m]; straight routing: ``(m, N, 2)`` spatial
            (``[y, z]`` per segment) or ``(m, N)`` planar (``y``); linear routing adds a
            trailing axis of 2 for (segment base, segment tip): ``(m, N, 2, 2)`` with
            ``offsets[..., :, 0]`` at the base, or ``(m, N, 2)`` planar.
        routing: ``"straight"`` or ``"linear"``.
        num_quadrature_points: Gauss points per segment for linear routing.
        spans: number of segments each tendon runs through, from the base (it is anchored
            at the tip of segment ``spans[j] - 1``); ``None``: every tendon runs to the
            robot's tip. Offsets of segments beyond a tendon's span are ignored.
        signed: ``False`` (default): threadlike tendons pull only, negative commands go
            slack; ``True``: the routed force acts with either sign (push-pull
            actuation, e.g. the paper's safety study with signed tendon forces).
    """

    offsets: Array
    routing: str = eqx.field(static=True, default="straight")
    num_quadrature_points: int = eqx.field(static=True, default=5)
    spans: tuple[int, ...] | None = eqx.field(static=True, default=None)
    signed: bool = eqx.field(static=True, default=False)

    def __init__(
        self,
        offsets: ArrayLike,
        routing: str = "straight",
        num_quadrature_points: int = 5,
        spans=None,
        signed: bool = False,
    ):
        if routing not in ("straight", "linear"):
            raise ValueError(f"routing: unknown {routing!r}; use 'straight' or 'linear'")
        self.offsets = jnp.asarray(offsets)
        self.routing = routing
        self.num_quadrature_points = int(num_quadrature_points)
        off = self.offsets
        if not isinstance(off, jax.core.Tracer) and not np.all(np.isfinite(np.asarray(off))):
            raise ValueError("offsets: values must be finite")
        if spans is not None:
            spans = tuple(int(k) for k in np.asarray(spans).reshape(-1))
            if len(spans) != off.shape[0]:
                raise ValueError(f"spans: expected one entry per tendon ({off.shape[0]}), got {len(spans)}")
            if off.ndim >= 2 and any(k < 1 or k > off.shape[1] for k in spans):
                raise ValueError(f"spans: each tendon must span 1..{off.shape[1]} segments, got {spans}")
        self.spans = spans
        self.signed = bool(signed)

    def span_mask(self, num_segments: int, dtype) -> Array:
        """``(m, N)``: 1 where tendon ``j`` runs through segment ``i``, else 0."""
        m = self.offsets.shape[0]
        spans = np.full(m, num_segments) if self.spans is None else np.asarray(self.spans)
        return jnp.asarray(np.arange(num_segments)[None, :] < spans[:, None], dtype)

    @property
    def num_actuators(self) -> int:
        return int(self.offsets.shape[0])

    def bind(self, context: ActuationContext) -> Tendons:
        require_context(self, context, RodContext, "rod models (PCS, GVS)")
        N, planar, m = context.num_segments, context.planar, self.offsets.shape[0]
        shape = (m, N) + (() if planar else (2,)) + ((2,) if self.routing == "linear" else ())
        if tuple(self.offsets.shape) != shape:
            kind = "planar" if planar else "spatial"
            raise ValueError(
                f"offsets: {self.routing} routing on a {kind} {N}-segment rod "
                f"needs shape (num_tendons, ...) = {shape}, got {tuple(self.offsets.shape)}"
            )
        return self

    def effort(self, u: Array) -> Array:
        """Tensions act only when positive, ``max(u, 0)`` [N]; ``u`` itself when ``signed``."""
        return u if self.signed else jnp.maximum(u, 0.0)

    def _profile(self, planar: bool, dtype):
        """Offsets r(s), their arc-length slope, and quadrature (nodes on [0,1], weights)."""
        off = self.offsets.astype(dtype)
        if planar:
            off = off[..., None, :] if self.routing == "linear" else off[..., None]
            # planar offsets live on the local y axis: embed as (..., 1[, 2])
        if self.routing == "straight":
            x01, w01 = np.array([0.5]), np.array([1.0])
            r0 = r1 = off
        else:
            x01, w01 = _gauss_legendre(self.num_quadrature_points)
            r0, r1 = off[..., 0], off[..., 1]
        return r0, r1, jnp.asarray(x01, dtype), jnp.asarray(w01, dtype)

    def _rule(self, num_segments: int, dtype):
        """The tendon's own quadrature along each segment: nodes and weights ``(N, nq)`` on
        ``[0, 1]`` (one midpoint for straight routing, exact under constant strain)."""
        _, _, x01, w01 = self._profile(False, dtype)
        shape = (num_segments, x01.shape[0])
        return jnp.broadcast_to(x01, shape), jnp.broadcast_to(w01, shape)

    def _tangents(self, xi: Array, x01: Array, w01: Array, length: Array):
        """Tendon tangents ``t`` (m, N, P, k), offsets ``r`` (m, N, P, k) and quadrature
        weights (m, N, P) [m] (zero on segments beyond a tendon's span) from the full
        strains ``xi`` ``(N, P, d)`` at the normalised abscissae ``x01`` ``(N, P)`` of each
        segment, weighted by ``w01`` ``(N, P)``."""
        planar = xi.shape[-1] == 3
        r0, r1, _, _ = self._profile(planar, xi.dtype)
        # r: (m, N, P, c) with c = 1 (planar y) or 2 (spatial y, z)
        r = r0[:, :, None, :] + (r1 - r0)[:, :, None, :] * x01[None, :, :, None]
        dr = ((r1 - r0) / length[None, :, None])[:, :, None, :]
        if planar:
            k, sx, sy = xi[..., 0][None], xi[..., 1][None], xi[..., 2][None]
            y, dy = r[..., 0], dr[..., 0]
            t = jnp.stack([sx - k * y, sy + dy * jnp.ones_like(y)], axis=-1)
            r_full = jnp.stack([jnp.zeros_like(y), y], axis=-1)
        else:
            zeros = jnp.zeros(r.shape[:-1] + (1,), xi.dtype)
            r_full = jnp.concatenate([zeros, r], axis=-1)  # [0, y, z]
            dr_full = jnp.concatenate([jnp.zeros(dr.shape[:-1] + (1,), xi.dtype), dr], axis=-1)
            w, v = xi[..., :3], xi[..., 3:]
            t = v[None] + jnp.cross(w[None], r_full) + dr_full
        weights = length[:, None] * w01
        weights = self.span_mask(length.shape[0], xi.dtype)[:, :, None] * weights[None]  # (m, N, P)
        return t, r_full, weights

    def _length_gradients(self, xi, x01, w01, length):
        """Weighted ``d|t|/dxi`` at every point, ``(m, N, P, d)``."""
        t, r_full, weights = self._tangents(xi, x01, w01, length)
        t_hat = t / _norm_last(t)[..., None]
        if xi.shape[-1] == 3:
            # d|t|/d[k, sx, sy] = [-y t_x, t_x, t_y]
            grad = jnp.concatenate([-r_full[..., 1:2] * t_hat[..., 0:1], t_hat], axis=-1)
        else:
            # d|t|/d[w, v] = [r x t_hat, t_hat]
            grad = jnp.concatenate([jnp.cross(r_full, t_hat), t_hat], axis=-1)
        return grad * weights[..., None]

    def _samples(self, context: RodContext):
        """Strains ``(N, P, d)``, abscissae and weights ``(N, P)`` the tendon integrates over:
        the context's samples, or the tendon's own rule where the strain is constant."""
        if context.constant_strain:
            xi = context.strain[:, 0, :]
            x01, w01 = self._rule(xi.shape[0], xi.dtype)
            return jnp.broadcast_to(xi[:, None, :], (xi.shape[0], x01.shape[1], xi.shape[1])), x01, w01
        return context.strain, context.abscissae, context.weights

    def _strain_gradients(self, context: RodContext) -> Float[Array, "m N P d"]:
        """``d l_j / d xi`` at the context's samples (summed over the tendon's own rule where
        the strain is constant, ``P = 1``)."""
        grad = self._length_gradients(*self._samples(context), context.length)
        if not context.constant_strain:
            return grad
        return _unrolled_sum(grad, 2)[:, :, None]

    def lengths(self, context: RodContext) -> Float[Array, " m"]:
        """Tendon path lengths ``l(q)`` ``(m,)`` [m]."""
        t, _, weights = self._tangents(*self._samples(context), context.length)
        return jnp.einsum("mip,mip->m", _norm_last(t), weights)

    def matrix(self, context: RodContext) -> Float[Array, "n m"]:
        """``A(q) = d phi/dq^T = -d l/dq^T``: column ``j`` is the generalized force of a unit
        tension in tendon ``j``."""
        return -context.columns_to_generalized(self._strain_gradients(context))

    def force(self, context: RodContext, u: Float[Array, " m"]) -> Float[Array, " n"]:
        """``A(q) effort(u)``. Where every coordinate is one strain component (PCS), it is
        formed in strain space (``-sum_j effort(u_j) d l_j / d xi``) and gathered onto the
        coordinates, without forming ``A``; otherwise it is ``A(q) effort(u)``."""
        if context.coordinate_slots is None:
            return self.matrix(context) @ self.effort(u)
        dl = self._strain_gradients(context)
        return context.to_generalized(-_unrolled_sum(self.effort(u)[:, None, None, None] * dl, 0))


def _unrolled_sum(x: Array, axis: int) -> Array:
    """Sum over a short axis (tendons, quadrature points, vector components) written as
    additions of slices: under ``jax.vmap`` XLA:CPU runs such a reduction as a slow loop (the
    tendon force's sum over tendons was a quarter of a tendon arm's step at 1024 envs)."""
    parts = jnp.moveaxis(x, axis, 0)
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total


def _norm_last(x: Array) -> Array:
    """Euclidean norm over the last (2 or 3 long) axis (see :func:`_unrolled_sum`)."""
    return jnp.sqrt(_unrolled_sum(x * x, -1))
