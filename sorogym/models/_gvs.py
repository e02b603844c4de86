"""Geometric Variable Strain (GVS) rods: links with polynomial strain fields on SE(3).

Link ``i`` (length ``L_i``, abscissa ``X = s / L_i`` in ``[0, 1]``) has the strain
``xi_i(X) = xi_ref_i + B_i(X) q_i`` in the basis of its :class:`StrainBasis`; links are
joined rigidly (fixed joints), so each starts where its predecessor ends. Kinematics
integrate the strain field with fourth-order Magnus steps between the link's quadrature
nodes (:mod:`sorogym.models._gvs_kernel`); a point between nodes is reached by one more,
partial, Magnus step from the node before it. M, C qd and G are Gauss-Legendre sums over
each link's Gauss points, as in PCS (:mod:`sorogym.models._rod`).

Cross-sections are solid circles whose radius varies linearly from ``radius`` at the link's
base to ``tip_radius`` at its tip (conical links), or solid rectangles constant along a link
(``GVSParams.rectangle``: leaf springs, flexure joints). Per unit length the mass matrix is
``rho diag(J, I, I, A, A, A)``, the Hookean stiffness ``diag(G J, E I, E I, E A, G A, G A)``
and the damping ``eta diag(J, 3 I, 3 I, 3 A, A, A)`` at the local section (the PCS
conventions), so ``K(q) = S q`` with ``S = sum_i L_i int B_i^T Sigma B_i dX`` and ``D``
constant.

Static layout: links may have different bases and Gauss rules; every link is padded to the
largest rule (repeated end nodes: zero-width cells with zero weight) so all arrays have
fixed shapes, and each link's basis is stored directly in the columns of the global ``q``
(the active coordinates). Same-shape parameter updates therefore reuse compiled code.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import ClassVar, final

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float

from ..actuation import Actuation, GeneralizedActuation, RodContext
from . import _gvs_kernel as gvs_kernel
from . import _pcs_kernel as kernel
from ._base import DynamicalTerms
from ._cross_section import VISCOUS_FACTORS, elastic_moduli, rectangle_moments, section_moments
from ._gvs_basis import MAGNUS_NODES, StrainBasis, link_nodes, pad_rule
from ._params import RodParams, check_field, check_shape, per_segment
from ._rod import QuadratureRod
from ._rod_ops import SpatialOps, prefix_sum


class GVSParams(eqx.Module):
    """Parameters of an N-link GVS rod: the fields of a spatial :class:`RodParams` (with
    ``radius`` the radius at each link's base) plus ``tip_radius`` ``(N,)`` [m], and
    optionally ``rectangle`` ``(N, 2)`` [m]: the width (along the section's local y) and
    thickness (along local z) of solid rectangular sections, constant along each link, which
    then replace the circles in the mass, stiffness, damping and weight
    (:func:`~sorogym.models._cross_section.rectangle_moments`); ``radius`` and
    ``tip_radius`` remain the radii that contact, line loads and drawing see."""

    rod: RodParams
    tip_radius: Float[Array, " N"]
    rectangle: Float[Array, "N 2"] | None = None

    @classmethod
    def create(
        cls,
        length: ArrayLike,
        radius: ArrayLike,
        density: ArrayLike,
        young_modulus: ArrayLike,
        tip_radius: ArrayLike | None = None,
        width: ArrayLike | None = None,
        thickness: ArrayLike | None = None,
        **rod_fields,
    ) -> GVSParams:
        """Validated parameters; ``tip_radius`` defaults to ``radius`` (cylindrical links);
        ``width`` and ``thickness`` (scalars or ``(N,)`` [m], both or neither) make the
        sections rectangular; ``rod_fields`` are the remaining arguments of
        :meth:`RodParams.create` (``shear_modulus`` or ``poisson_ratio``, ``damping``,
        ``reference_strain``, ``gravity``, ``mounting``, ``base_rotation``,
        ``base_position``, ``dtype``)."""
        if rod_fields.pop("planar", False):
            raise ValueError("planar: GVS links are spatial")
        rod = RodParams.create(
            length=length, radius=radius, density=density, young_modulus=young_modulus, planar=False, **rod_fields
        )
        N, dtype = rod.num_segments, rod.length.dtype
        tip = rod.radius if tip_radius is None else per_segment("tip_radius", tip_radius, N, dtype)
        if (width is None) != (thickness is None):
            missing = "thickness" if thickness is None else "width"
            raise ValueError(f"{missing}: a rectangular section needs both width and thickness")
        rectangle = None
        if width is not None:
            rectangle = jnp.stack(
                [per_segment("width", width, N, dtype), per_segment("thickness", thickness, N, dtype)], axis=-1
            )
        params = cls(rod, tip, rectangle)
        params.validate()
        return params

    @classmethod
    def from_rod(cls, rod: RodParams, tip_radius: ArrayLike | None = None) -> GVSParams:
        """GVS parameters of spatial rod parameters (cylindrical links unless ``tip_radius``)."""
        if rod.is_planar:
            raise ValueError("rod: GVS links are spatial; create the parameters with planar=False")
        tip = rod.radius if tip_radius is None else jnp.asarray(tip_radius, rod.radius.dtype)
        params = cls(rod, tip)
        params.validate()
        return params

    def validate(self) -> None:
        self.rod.validate(planar=False)
        check_shape("tip_radius", self.tip_radius, (self.rod.num_segments,))
        check_field("tip_radius", self.tip_radius, positive=True)
        if self.rectangle is not None:
            check_shape("rectangle", self.rectangle, (self.rod.num_segments, 2))
            check_field("width", self.rectangle[:, 0], positive=True)
            check_field("thickness", self.rectangle[:, 1], positive=True)

    def replace(self, **fields) -> GVSParams:
        """Copy with some fields replaced (same shapes keep compiled functions valid)."""
        tip = fields.pop("tip_radius", None)
        tip = self.tip_radius if tip is None else jnp.asarray(tip, self.tip_radius.dtype)
        rectangle = fields.pop("rectangle", None)
        rectangle = self.rectangle if rectangle is None else jnp.asarray(rectangle, self.tip_radius.dtype)
        return type(self)(self.rod.replace(**fields) if fields else self.rod, tip, rectangle)

    @property
    def num_segments(self) -> int:
        return self.rod.num_segments

    def __getattr__(self, name):  # the rod's fields: length, radius, density, ...
        if name in RodParams.__dataclass_fields__:
            return getattr(self.rod, name)
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")


# From this many links up, GVS.dynamical_terms skips the (6, n, P) Jacobians (measured on
# XLA:CPU, zero-order bases, 5 Gauss points: 1.2x at 4 links, 1.4x at 8; 1 and 2 links on par
# in a loop but ~10 % slower per single call).
COMPACT_DYNAMICS_MIN_LINKS = 3


@final
class GVS(QuadratureRod):
    """Spatial Geometric Variable Strain rod (see module docstring).

    Args:
        params: :class:`GVSParams` (or spatial :class:`RodParams` for cylindrical links).
        bases: one :class:`StrainBasis` for every link, or one per link.
        actuation: any :class:`~sorogym.actuation.Actuation` that acts on rods, e.g.
            :class:`~sorogym.actuation.GeneralizedActuation` (default) or
            :class:`~sorogym.actuation.Tendons` routed in each link's cross-section (their
            path integrals use the links' Gauss points).
        num_gauss_points: Gauss-Legendre points per link (one for all links, or one each);
            for spline bases, per knot span (:attr:`StrainBasis.breakpoints`), whose
            knots also bound the Magnus cells.
    """

    ops: ClassVar = SpatialOps
    planar: ClassVar[bool] = False

    params: GVSParams
    actuation: Actuation
    bases: tuple[StrainBasis, ...] = eqx.field(static=True)
    num_gauss_points: tuple[int, ...] = eqx.field(static=True)
    # Precomputed, state-independent data (recomputed by with_params).
    _nodes: Float[Array, "N K"]  # normalised nodes of every link, padded
    _B_cells: Float[Array, "2 6 k C"]  # basis at the two Magnus points of every cell (link coordinates)
    _cell_width: Float[Array, " C"]  # physical cell widths [m]
    _xi_ref_cells: Float[Array, "6 C"]
    _B_quad: Float[Array, "6 n P"]  # basis at the Gauss points of every link
    _quad_x: Float[Array, "N Q"]  # normalised Gauss points of every link, padded
    _quad_w: Float[Array, "N Q"]  # their weights on [0, 1] (zero where padded)
    _quad_mass: Float[Array, "6 P"]
    _quad_weight_force: Float[Array, "3 P"]
    _quad_length: Float[Array, " P"]
    _quad_radius: Float[Array, " P"]
    _quad_line_density: Float[Array, " P"]
    _stiffness: Float[Array, "n n"]
    _damping: Float[Array, "n n"]

    def __init__(
        self,
        params,
        bases: StrainBasis | Sequence[StrainBasis],
        actuation: Actuation | None = None,
        num_gauss_points: int | Sequence[int] = 5,
    ):
        if isinstance(params, RodParams):
            params = GVSParams.from_rod(params)
        if not isinstance(params, GVSParams):
            raise TypeError(f"params: expected GVSParams, got {type(params).__name__}")
        params.validate()
        N = params.num_segments
        bases = (bases,) * N if isinstance(bases, StrainBasis) else tuple(bases)
        if len(bases) != N or not all(isinstance(b, StrainBasis) for b in bases):
            raise ValueError(f"bases: expected a StrainBasis or {N} of them (one per link), got {bases!r}")
        gauss = (num_gauss_points,) * N if np.ndim(num_gauss_points) == 0 else tuple(num_gauss_points)
        gauss = tuple(int(g) for g in gauss)
        if len(gauss) != N or any(g < 1 for g in gauss):
            raise ValueError(f"num_gauss_points: expected integers >= 1, one or {N}, got {num_gauss_points}")
        self.params, self.bases, self.num_gauss_points = params, bases, gauss
        dtype = params.length.dtype
        rules = [link_nodes(g, b.breakpoints) for g, b in zip(gauss, bases)]
        size = max(r[0].size for r in rules)
        rules = [pad_rule(*r, size) for r in rules]
        Q = size - 2
        nodes = jnp.asarray(np.stack([r[0] for r in rules]), dtype)  # (N, Q + 2)
        weights01 = jnp.asarray(np.stack([r[1] for r in rules]), dtype)
        self._nodes = nodes
        L = params.length
        # Magnus cells: between consecutive nodes, segment-major.
        H = nodes[:, 1:] - nodes[:, :-1]  # (N, Q + 1)
        self._cell_width = (L[:, None] * H).reshape(-1)
        self._B_cells = jnp.stack([self._compact_basis(lambda i, z=z: nodes[i, :-1] + z * H[i]) for z in MAGNUS_NODES])
        self._xi_ref_cells = jnp.repeat(params.reference_strain.T, Q + 1, axis=1)
        # Gauss points (the interior nodes).
        self._quad_x, self._quad_w = nodes[:, 1:-1], weights01[:, 1:-1]
        self._B_quad = self._global_basis(lambda i: nodes[i, 1:-1])
        w = (L[:, None] * self._quad_w).reshape(-1)  # (P,) physical weights [m]
        seg = np.repeat(np.arange(N), Q)
        r0, r1 = params.radius[:, None], params.tip_radius[:, None]
        radius = (r0 + (r1 - r0) * self._quad_x).reshape(-1)  # (P,)
        if params.rectangle is None:
            mass_moments = moments = section_moments(radius, planar=False)  # (P, 6)
        else:
            mass_moments, moments = rectangle_moments(params.rectangle[seg, 0], params.rectangle[seg, 1])
        rho = params.density[seg]
        self._quad_mass = (w[:, None] * rho[:, None] * mass_moments).T
        if params.rectangle is None:
            # circles keep the expressions (and so the compiled programs) they had before
            # rectangular sections; ``w * line_density`` would round differently
            self._quad_weight_force = params.gravity[:, None] * (w * rho * jnp.pi * radius**2)[None, :]
            line_density = rho * jnp.pi * radius**2
        else:
            line_density = rho * mass_moments[:, 3]
            self._quad_weight_force = params.gravity[:, None] * (w * line_density)[None, :]
        self._quad_length, self._quad_radius, self._quad_line_density = w, radius, line_density
        modulus = elastic_moduli(params.young_modulus[seg], params.shear_modulus[seg], planar=False)
        stiff = w[:, None] * modulus * moments  # (P, 6)
        if params.damping.ndim == 2:  # per-strain coefficients per unit length
            damp = w[:, None] * params.damping[seg]
        else:
            damp = w[:, None] * params.damping[seg][:, None] * jnp.asarray(VISCOUS_FACTORS[False], dtype) * moments
        self._stiffness = jnp.einsum("dip,pd,djp->ij", self._B_quad, stiff, self._B_quad)
        self._damping = jnp.einsum("dip,pd,djp->ij", self._B_quad, damp, self._B_quad)
        actuation = GeneralizedActuation() if actuation is None else actuation
        self.actuation = actuation.bind(self.actuation_context(jnp.zeros((self.num_dofs,), dtype)))

    def _global_basis(self, points_of) -> Array:
        """Basis ``(6, n, N P)`` at ``points_of(i)`` ``(P,)`` of every link ``i``, each link's
        columns placed at its coordinates in ``q`` (zeros elsewhere)."""
        compact = self._compact_basis(points_of)
        return self._expand_columns(compact, compact.shape[-1] // self.num_segments)

    def _compact_basis(self, points_of) -> Array:
        """Basis ``(6, k_max, N P)`` at ``points_of(i)`` ``(P,)`` of every link ``i`` in the
        link's own coordinates (zero-padded to the largest link's ``k_max``)."""
        k_max = max(b.num_dofs for b in self.bases)
        blocks = [
            jnp.pad(b.evaluate(points_of(i)), ((0, 0), (0, k_max - b.num_dofs), (0, 0)))
            for i, b in enumerate(self.bases)
        ]
        return jnp.concatenate(blocks, axis=-1)

    def _cell_coordinates(self) -> np.ndarray:
        """``(k_max, N C)`` indices into ``[q, 0]`` of each cell's link coordinates."""
        n, k_max, C = self.num_dofs, max(b.num_dofs for b in self.bases), self._cells_per_link
        index = np.full((self.num_segments, k_max, C), n)
        start = 0
        for i, b in enumerate(self.bases):
            index[i, : b.num_dofs] = np.arange(start, start + b.num_dofs)[:, None]
            start += b.num_dofs
        return np.moveaxis(index, 0, 1).reshape(k_max, -1)

    def _expand_columns(self, x: Array, C: int) -> Array:
        """Columns in link coordinates ``(d, k_max, N C)`` (``C`` points per link, link-major)
        -> global ``(d, n, N C)``."""
        n = self.num_dofs
        blocks, start = [], 0
        for i, b in enumerate(self.bases):
            block = x[:, : b.num_dofs, i * C : (i + 1) * C]
            blocks.append(jnp.pad(block, ((0, 0), (start, n - start - b.num_dofs), (0, 0))))
            start += b.num_dofs
        return jnp.concatenate(blocks, axis=-1)

    def _basis_at(self, seg: Array, X: Array) -> Array:
        """Basis ``(6, n, P)`` of the links ``seg`` ``(P,)`` at their abscissae ``X``."""
        cols = []
        for i, basis in enumerate(self.bases):
            cols.append(jnp.where(seg == i, basis.evaluate(X), 0.0))
        return jnp.concatenate(cols, axis=1)

    # -- structure ---------------------------------------------------------------------

    @property
    def num_segments(self) -> int:
        return len(self.bases)

    @property
    def num_dofs(self) -> int:
        return sum(b.num_dofs for b in self.bases)

    @property
    def coordinate_names(self) -> tuple[str, ...]:
        """Names of the coordinates of ``q``, e.g. ``("seg0.ky0", "seg0.ky1", ...)``."""
        return tuple(f"seg{i}.{name}" for i, b in enumerate(self.bases) for name in b.coordinate_names)

    def with_params(self, params) -> GVS:
        """Same structure and actuation with new parameters (same shapes: no recompilation)."""
        return type(self)(params, self.bases, self.actuation, self.num_gauss_points)

    def with_actuation(self, actuation: Actuation) -> GVS:
        """Same robot with another actuation model."""
        return type(self)(self.params, self.bases, actuation, self.num_gauss_points)

    # -- kinematics --------------------------------------------------------------------

    @property
    def _cells_per_link(self) -> int:
        return int(self._nodes.shape[1]) - 1

    def _cells_and_root(self, q, qd, with_velocity):
        """Magnus terms of every cell (link coordinates) and the root frame."""
        ops, p = self.ops, self.params
        index = self._cell_coordinates()
        q_cells = jnp.concatenate([q, jnp.zeros((1,), q.dtype)])[index]  # (k_max, C)
        qd_cells = jnp.concatenate([qd, jnp.zeros((1,), qd.dtype)])[index]
        xi = self._xi_ref_cells + jnp.einsum("kdjc,jc->kdc", self._B_cells, q_cells)
        dxi = jnp.einsum("kdjc,jc->kdc", self._B_cells, qd_cells)
        cells = gvs_kernel.cell_terms(
            ops, xi[0], xi[1], dxi[0], dxi[1], self._B_cells[0], self._B_cells[1], self._cell_width, with_velocity
        )
        return cells, kernel.root_frame(ops, p.base_rotation, p.base_position, self.num_dofs)

    def _node_frames(self, q, qd, with_velocity):
        """``(R, p, cols)`` at every node along the trailing axis: index ``i C + k`` is node
        ``k`` of link ``i`` (``C`` cells per link; node 0 of link ``i`` is the tip of link
        ``i - 1``, the base for ``i = 0``)."""
        cells, root = self._cells_and_root(q, qd, with_velocity)
        expand = functools.partial(self._expand_columns, C=self._cells_per_link)
        return gvs_kernel.node_frames(self.ops, root, cells, with_velocity, expand)

    def _compact_index(self) -> np.ndarray:
        """``(n,)``: position of every coordinate in a ``(k_max, N)`` link-coordinate array
        (flattened)."""
        N = self.num_segments
        return np.concatenate([np.arange(b.num_dofs) * N + i for i, b in enumerate(self.bases)])

    def dynamical_terms(self, q, qd) -> DynamicalTerms:
        """``(M, C qd, G)`` without forming the ``(6, n, P)`` Jacobians.

        A Gauss point of link ``b`` sees the columns of its own link through ``J_own`` and
        those of every earlier link ``a`` as the constant world-frame sum ``S_a``
        (:func:`~sorogym.models._gvs_kernel.compact_cell_frames`). With the world-frame
        inertias ``W = Ad^-T M_s Ad^-1`` and wrenches ``F = Ad^-T f`` of the points, and
        ``W_>a``, ``F_>a`` their sums over the links after ``a``:
        ``M_aa = sum_(p in a) J_own^T M_s J_own + S_a^T W_>a S_a``,
        ``M_ab = S_a^T (sum_(p in b) Ad^-T M_s J_own + W_>b S_b)`` for ``a < b``, and the
        generalized force of link ``a`` is ``sum_(p in a) J_own^T f + S_a^T F_>a``. Same
        sums as :meth:`inertia_matrix`, :meth:`coriolis_force` and
        :meth:`gravitational_force`, in another order (equal to rounding). Used from
        ``COMPACT_DYNAMICS_MIN_LINKS`` links up; below, the dense pass over the Jacobians
        compiles to fewer kernels and is as fast or faster on CPU."""
        if self.num_segments < COMPACT_DYNAMICS_MIN_LINKS:
            return super().dynamical_terms(q, qd)
        ops, N, Q, Cl = self.ops, self.num_segments, self._quad_x.shape[1], self._cells_per_link
        cells, root = self._cells_and_root(q, qd, True)
        R, p, J_own, eta, a, S_link = gvs_kernel.compact_cell_frames(ops, root, cells, N)
        at = (np.arange(N)[:, None] * Cl + np.arange(Q)[None, :]).reshape(-1)  # cells ending at Gauss points
        R, p, J_own, eta, a = R[..., at], p[:, at], J_own[..., at], eta[:, at], a[:, at]
        m = self._quad_mass  # (6, P)
        k = J_own.shape[1]
        # body wrenches of the points: inertial (C qd) and weight (G)
        f = jnp.stack([m * a - ops.coad_apply(eta, m * eta), -ops.force_wrench(R, self._quad_weight_force)], axis=1)
        mJ = m[:, None, :] * J_own
        Ad_inv = ops.adjoint_inverse_apply(
            R, p, jnp.broadcast_to(jnp.eye(6, dtype=q.dtype)[:, :, None], (6, 6, R.shape[-1]))
        )
        world = gvs_kernel.coadjoint_to_world(R, p, jnp.concatenate([f, mJ, m[:, None, :] * Ad_inv], axis=1))
        F, WJ, W = world[:, :2], world[:, 2 : 2 + k], world[:, 2 + k :]  # W[:, j] = W e_j (symmetric)

        def per_link(x):  # (.., P) -> sums over each link's points (.., N)
            return jnp.sum(x.reshape(x.shape[:-1] + (N, Q)), axis=-1)

        def after(x):  # (.., N) -> sums over the links after each (.., N)
            return jnp.flip(prefix_sum(jnp.flip(x, -1)), -1) - x

        W_after, F_after = after(per_link(W)), after(per_link(F))
        Jq, fq = J_own.reshape(6, k, N, Q), f.reshape(6, 2, N, Q)
        # small contractions as products and sums (fused loops; XLA:CPU dots cost a call each)
        WS = jnp.sum(W_after[:, :, None] * S_link[None], axis=1)  # (6, k, N) = W_>a S_a
        M_own = jnp.sum(Jq[:, :, None] * mJ.reshape(6, k, N, Q)[:, None], axis=(0, 4)) + jnp.sum(
            S_link[:, :, None] * WS[:, None], axis=0
        )  # (k, k, N)
        h_own = jnp.sum(Jq[:, None] * fq[:, :, None], axis=(0, 4)) + jnp.sum(
            S_link[:, None] * F_after[:, :, None], axis=0
        )  # (2, k, N)
        G = per_link(WJ) + WS  # (6, k, N)
        idx = self._compact_index()
        owner = np.repeat(np.arange(N), [b.num_dofs for b in self.bases])
        kk = idx // N
        S_g, G_g = S_link.reshape(6, -1)[:, idx], G.reshape(6, -1)[:, idx]  # (6, n)
        U = jnp.where(owner[:, None] < owner[None, :], jnp.sum(S_g[:, :, None] * G_g[:, None], axis=0), 0.0)
        same = owner[:, None] == owner[None, :]
        diag = jnp.where(same, M_own[kk[:, None], kk[None, :], owner[:, None]], 0.0)
        h = h_own[:, kk, owner]
        return DynamicalTerms(U + U.T + diag, h[0], h[1])

    def inertia_and_bias(self, q, qd) -> tuple[Array, Array]:
        if self.num_segments < COMPACT_DYNAMICS_MIN_LINKS:
            return super().inertia_and_bias(q, qd)
        M, cor, grav = self.dynamical_terms(q, qd)
        return M, cor + grav

    def _frames(self, q, qd, s, with_velocity):
        """Frames at arc lengths ``s`` (any shape, flattened to the trailing axis)."""
        s = jnp.asarray(s, q.dtype).reshape(-1)
        seg, s_local = self.locate(s)
        X = s_local / self.params.length[seg]
        C = self._cells_per_link
        nodes = self._nodes[seg]  # (P, C + 1)
        cell = jnp.clip(jnp.sum(nodes[:, 1:] <= X[:, None], axis=1), 0, C - 1)
        X0 = jnp.take_along_axis(nodes, cell[:, None], axis=1)[:, 0]
        H = jnp.maximum(X - X0, 0.0)
        B1, B2 = (self._basis_at(seg, X0 + z * H) for z in MAGNUS_NODES)
        ref = self.params.reference_strain[seg].T
        xi1, xi2 = ref + jnp.einsum("dnp,n->dp", B1, q), ref + jnp.einsum("dnp,n->dp", B2, q)
        dxi1, dxi2 = jnp.einsum("dnp,n->dp", B1, qd), jnp.einsum("dnp,n->dp", B2, qd)
        local = gvs_kernel.cell_terms(
            self.ops, xi1, xi2, dxi1, dxi2, B1, B2, self.params.length[seg] * H, with_velocity
        )
        R, p, cols = self._node_frames(q, qd, with_velocity)
        at = seg * C + cell
        base = (R[..., at], p[..., at], cols[..., at])
        return kernel.to_frame(*kernel.attach(self.ops, *base, local, with_velocity))

    def _quadrature_frames(self, q, qd, with_velocity):
        C, Q = self._cells_per_link, self._quad_x.shape[1]
        at = (np.arange(self.num_segments)[:, None] * C + np.arange(1, Q + 1)[None, :]).reshape(-1)
        R, p, cols = self._node_frames(q, qd, with_velocity)
        return kernel.to_frame(R[..., at], p[..., at], cols[..., at])

    def strain(self, q: Float[Array, " n"], s) -> Float[Array, "p 6"]:
        """Full strain ``xi(s)`` ``(p, 6)`` at arc lengths ``s`` ``(p,)`` [m]."""
        s = jnp.asarray(s, q.dtype).reshape(-1)
        seg, s_local = self.locate(s)
        X = s_local / self.params.length[seg]
        return (self.params.reference_strain[seg].T + jnp.einsum("dnp,n->dp", self._basis_at(seg, X), q)).T

    # -- actuation ---------------------------------------------------------------------

    def _strain_at_gauss_points(self, q) -> tuple[Array, Array]:
        """Strains ``(N, Q, 6)`` and selectors ``(N, Q, 6, n)`` at every link's Gauss points."""
        N, Q, n = self.num_segments, self._quad_x.shape[1], self.num_dofs
        B = jnp.moveaxis(self._B_quad.reshape(6, n, N, Q), (2, 3), (0, 1))  # (N, Q, 6, n)
        return self.params.reference_strain[:, None, :] + B @ q, B

    def actuation_context(self, q: Float[Array, " n"]) -> RodContext:
        """The strains and selectors at every link's Gauss points (the samples tendon path
        integrals use)."""
        xi, B = self._strain_at_gauss_points(q)
        return RodContext(q, xi, self._quad_x, self._quad_w, self.params.length, B)
