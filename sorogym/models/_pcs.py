"""Piecewise Constant Strain rods: spatial :class:`PCS` (SE(3)) and :class:`PlanarPCS` (SE(2)).

Each of the ``N`` segments has a constant strain ``xi_i = xi_ref_i + B_i q``; the
configuration ``q`` collects the displacements of the active strain components (see
:mod:`sorogym.models._strains`). Frames: the world frame is fixed; the base frame is
``(base_rotation, base_position)``; the backbone's local x axis is the tangent at rest.
Jacobians map ``qd`` to twists of the backbone frame at ``s``: body-frame twists
(components in the cross-section frame) or ``"inertial"`` twists ``[R w_b, R v_b]``
(world-frame angular velocity and the world-frame velocity of the backbone point).

Cross-sections are solid circles (:mod:`sorogym.models._cross_section`): per unit length
the mass ``rho diag(J, I, I, A, A, A)``, the Hookean stiffness ``diag(G J, E I, E I, E A,
G A, G A)`` and the damping ``eta diag(J, 3 I, 3 I, 3 A, A, A)`` for the material damping
coefficient ``eta = params.damping`` [Pa s], or directly ``diag(params.damping[i])`` when
per-strain coefficients ``(N, d)`` are given; segment terms are these times the segment
length, so ``K(q) = S q`` and ``D`` are constant (diagonal) matrices.
Integrals along segments (M, C qd, G) use Gauss-Legendre quadrature.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, final

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ..actuation import Actuation, GeneralizedActuation, RodContext
from . import _pcs_kernel as kernel
from ._cross_section import VISCOUS_FACTORS, elastic_moduli, section_moments
from ._params import RodParams
from ._rod import QuadratureRod
from ._rod_ops import PlanarOps, SpatialOps
from ._static_index import take
from ._strains import PLANAR_STRAINS, SPATIAL_STRAINS, StrainSpec, selector_blocks, strain_mask, strain_slots

NUM_PLANAR_BASE = 3  # [theta, x, y] of a planar floating base


class _PCSRod(QuadratureRod):
    """Shared implementation of spatial and planar PCS (see module docstring); abstract:
    :class:`PCS` and :class:`PlanarPCS` set the Lie group."""

    diagonal_elastic: ClassVar[bool] = True  # S and D are diagonal (see _stiffness_diagonal)

    params: RodParams
    actuation: Actuation
    active_strains: tuple[tuple[bool, ...], ...] = eqx.field(static=True)
    num_quadrature_points: int = eqx.field(static=True)
    quadrature: tuple[tuple[float, ...], tuple[float, ...]] | None = eqx.field(static=True)
    floating_base: bool = eqx.field(static=True)
    # Precomputed, state-independent data (recomputed by with_params).
    _B: Float[Array, "N d n"]
    _quad_s: Float[Array, " P"]  # local arc length of each quadrature point [m]
    _quad_mass: Float[Array, "d P"]  # weight * diagonal mass per unit length
    _quad_weight_force: Float[Array, "k P"]  # weight * rho A * gravity [N]
    _quad_length: Float[Array, " P"]  # quadrature weight [m]
    _quad_radius: Float[Array, " P"]  # cross-section radius [m]
    _quad_line_density: Float[Array, " P"]  # rho A [kg/m]
    _stiffness: Float[Array, "n n"]
    _damping: Float[Array, "n n"]
    _stiffness_diagonal: Float[Array, " n"]  # S and D are diagonal for PCS
    _damping_diagonal: Float[Array, " n"]

    def __init__(
        self,
        params: RodParams,
        active_strains: StrainSpec = None,
        actuation: Actuation | None = None,
        num_quadrature_points: int = 5,
        quadrature: tuple | None = None,
        floating_base: bool = False,
    ):
        if not isinstance(params, RodParams):
            raise TypeError(f"params: expected RodParams, got {type(params).__name__}")
        if params.is_planar != self.planar:
            kind = "planar" if self.planar else "spatial"
            raise ValueError(
                f"params: {type(self).__name__} needs {kind} parameters (create them with planar={self.planar})"
            )
        params.validate(planar=self.planar)
        if int(num_quadrature_points) < 1:
            raise ValueError(f"num_quadrature_points: must be >= 1, got {num_quadrature_points}")
        if floating_base and not self.planar:
            raise ValueError(
                "floating_base: only PlanarPCS has a built-in floating base; a spatial rod floats as "
                "a BodyTree body on Joint.free()"
            )
        self.floating_base = bool(floating_base)
        N = params.num_segments
        masks = strain_mask(active_strains, N, self.planar)
        self.params = params
        self.active_strains = masks
        self.num_quadrature_points = int(num_quadrature_points)
        dtype = params.length.dtype
        base_columns = ((0, 0), (0, 0), (NUM_PLANAR_BASE, 0)) if self.floating_base else ((0, 0),) * 3
        self._B = jnp.pad(jnp.asarray(selector_blocks(masks), dtype), base_columns)
        if quadrature is None:
            x, w = np.polynomial.legendre.leggauss(self.num_quadrature_points)
            x01, w01 = (x + 1) / 2, w / 2
        else:
            x01, w01 = (np.asarray(a, dtype=float).reshape(-1) for a in quadrature)
            if x01.shape != w01.shape or np.any((x01 < 0) | (x01 > 1)) or not np.all(np.isfinite(w01)):
                raise ValueError("quadrature: expected (nodes in [0, 1], weights) of equal length")
            self.num_quadrature_points = int(x01.size)
            quadrature = (tuple(float(v) for v in x01), tuple(float(v) for v in w01))
        self.quadrature = quadrature
        x01, w01 = jnp.asarray(x01, dtype), jnp.asarray(w01, dtype)
        nq = self.num_quadrature_points
        quad_segment = np.repeat(np.arange(N), nq)  # segment of each point, segment-major
        L = params.length
        self._quad_s = (L[:, None] * x01[None, :]).reshape(-1)
        weights = (L[:, None] * w01[None, :]).reshape(-1)
        moments = section_moments(params.radius, self.planar)  # (N, d)
        mass = params.density[:, None] * moments
        self._quad_mass = (weights[:, None] * mass[quad_segment]).T
        line_density = params.density * jnp.pi * params.radius**2  # kg/m
        self._quad_weight_force = params.gravity[:, None] * (weights * line_density[quad_segment])[None, :]
        self._quad_length = weights
        self._quad_radius = params.radius[quad_segment]
        self._quad_line_density = line_density[quad_segment]
        modulus = elastic_moduli(params.young_modulus, params.shear_modulus, self.planar)
        stiff = L[:, None] * modulus * moments  # (N, d)
        if params.damping.ndim == 2:  # per-strain coefficients per unit length
            damp = L[:, None] * params.damping
        else:
            damp = L[:, None] * params.damping[:, None] * jnp.asarray(VISCOUS_FACTORS[self.planar], dtype) * moments
        # Each coordinate is one strain component of one segment, so S and D are diagonal.
        # (zero on floating-base coordinates: nothing restores or damps the base)
        self._stiffness_diagonal = jnp.einsum("idn,id->n", self._B, stiff)
        self._damping_diagonal = jnp.einsum("idn,id->n", self._B, damp)
        self._stiffness = jnp.diag(self._stiffness_diagonal)
        self._damping = jnp.diag(self._damping_diagonal)
        actuation = GeneralizedActuation() if actuation is None else actuation
        self.actuation = actuation.bind(self.actuation_context(jnp.zeros((self.num_dofs,), dtype)))

    # -- structure ---------------------------------------------------------------------

    @property
    def num_segments(self) -> int:
        return len(self.active_strains)

    @property
    def num_dofs(self) -> int:
        return int(self._B.shape[-1])

    @property
    def strain_names(self) -> tuple[str, ...]:
        """Names of the coordinates of ``q``, e.g. ``("seg0.ky", "seg0.kz", ...)``."""
        names = PLANAR_STRAINS if self.planar else SPATIAL_STRAINS
        base = ("base.theta", "base.x", "base.y") if self.floating_base else ()
        return base + tuple(
            f"seg{i}.{name}" for i, m in enumerate(self.active_strains) for name, a in zip(names, m) if a
        )

    @property
    def num_base_dofs(self) -> int:
        """Number of floating-base coordinates at the front of ``q`` (3 or 0)."""
        return NUM_PLANAR_BASE if self.floating_base else 0

    def with_params(self, params: RodParams) -> _PCSRod:
        """Same structure and actuation with new parameters (same shapes: no recompilation)."""
        return type(self)(
            params, self.active_strains, self.actuation, self.num_quadrature_points, self.quadrature, self.floating_base
        )

    def with_actuation(self, actuation: Actuation) -> _PCSRod:
        """Same robot with another actuation model."""
        return type(self)(
            self.params, self.active_strains, actuation, self.num_quadrature_points, self.quadrature, self.floating_base
        )

    # -- kinematics --------------------------------------------------------------------

    def strain(self, q: Float[Array, " n"]) -> Float[Array, "N d"]:
        """Full strain of every segment: ``xi_i = xi_ref_i + B_i q``."""
        return self.params.reference_strain + self.strain_rate(q)

    def strain_rate(self, qd: Float[Array, " n"]) -> Float[Array, "N d"]:
        """``B_i qd`` of every segment ``(N, d)`` (an index gather, no matrix product)."""
        rod = qd[self.num_base_dofs :]
        return take(jnp.concatenate([rod, jnp.zeros((1,), qd.dtype)]), strain_slots(self.active_strains))

    def elastic_force(self, q: Float[Array, " n"]) -> Float[Array, " n"]:
        """Hookean ``K(q) = S q`` (``S`` diagonal)."""
        return self._stiffness_diagonal * q

    def damping_force(self, qd: Float[Array, " n"]) -> Float[Array, " n"]:
        """Viscous ``D qd`` (``D`` diagonal)."""
        return self._damping_diagonal * qd

    def _root(self, q, qd):
        """The kernel's root point: the fixed base, or the floating base at ``q[:3]``."""
        ops, p = self.ops, self.params
        R_mount = ops.base_rotation(p.base_rotation)
        if not self.floating_base:
            return kernel.root_frame(ops, R_mount, p.base_position, self.num_dofs)
        nb = NUM_PLANAR_BASE
        return kernel.planar_floating_root(ops, R_mount, p.base_position, q[:nb], qd[:nb], self.num_dofs)

    def _kinematics(self, q, qd, s_local, seg, with_velocity) -> kernel.Frame:
        p = self.params
        return kernel.frames(
            self.ops,
            self._root(q, qd),
            self.strain(q),
            self.strain_rate(qd),
            self._B,
            p.length,
            s_local,
            seg,
            with_velocity,
            moving_root=self.floating_base,
        )

    def _frames(self, q, qd, s, with_velocity):
        """Frames at arc lengths ``s`` (any shape, flattened to the trailing axis)."""
        s = jnp.asarray(s, q.dtype).reshape(-1)
        seg, s_loc = self.locate(s)
        return self._kinematics(q, qd, s_loc, seg, with_velocity)

    def point_force_map(self, q: Float[Array, " n"], s_ps) -> tuple[Array, Callable]:
        """``(positions (p, k) [m], apply)`` at the backbone points ``s_ps`` ``(p,)`` [m]:
        ``apply(forces (p, k) [N]) -> (n,)`` is the generalized force ``sum_i J_v(s_i)^T
        f_i`` of world-frame forces there, by the transposed Jacobian recursion
        (:func:`~sorogym.models._pcs_kernel.point_force_map`; the Jacobians are never
        formed)."""
        s = jnp.asarray(s_ps, q.dtype).reshape(-1)
        seg, s_local = self.locate(s)
        root = self._root(q, jnp.zeros_like(q))
        _, positions, apply = kernel.point_force_map(
            self.ops, root, self.strain(q), self._B, self.params.length, s_local, seg, self.floating_base
        )
        return positions.T, lambda forces: apply(jnp.asarray(forces, q.dtype).T)

    # -- dynamics ----------------------------------------------------------------------

    def _quadrature_frames(self, q, qd, with_velocity):
        s_local = self._quad_s.reshape(self.num_segments, self.num_quadrature_points)
        return self._kinematics(q, qd, s_local, None, with_velocity)

    @property
    def _coordinate_slots(self) -> tuple[int, ...] | None:
        """Index of each coordinate in the flattened ``(N, d)`` strain array (``None`` with
        a floating base, whose coordinates are no strain: forces then go through ``B``)."""
        if self.floating_base:
            return None
        return tuple(int(i) for i in np.flatnonzero(np.asarray(self.active_strains).reshape(-1)))

    def actuation_context(self, q: Float[Array, " n"]) -> RodContext:
        """The segment strains at ``q`` (constant along each segment: one sample per
        segment) and the selectors ``B_i``; strain-space forces map to ``q`` by gathering
        the active components."""
        ones = jnp.ones((self.num_segments, 1), q.dtype)
        return RodContext(
            q,
            self.strain(q)[:, None, :],
            0.5 * ones,
            ones,
            self.params.length,
            self._B[:, None],
            constant_strain=True,
            coordinate_slots=self._coordinate_slots,
        )


@final
class PCS(_PCSRod):
    """Spatial piecewise-constant-strain rod on SE(3) (strain ``[kx, ky, kz, sx, sy, sz]``).

    Args:
        params: :class:`RodParams` with ``planar=False``.
        active_strains: strain selection (``None``: all six; ``"pcc"``: bending only);
            names, a boolean mask, or one entry per segment.
        actuation: any :class:`~sorogym.actuation.Actuation` that acts on rods, e.g.
            :class:`~sorogym.actuation.GeneralizedActuation` (default, ``A = I``) or
            :class:`~sorogym.actuation.Tendons`.
        num_quadrature_points: Gauss-Legendre points per segment for M, C qd and G.
        quadrature: optional custom rule ``(nodes, weights)`` on ``[0, 1]`` (weights summing
            to 1) replacing Gauss-Legendre, e.g. to reproduce another implementation's rule.
        floating_base: planar rods only (a spatial rod floats as a ``BodyTree`` body).
    """

    ops: ClassVar = SpatialOps
    planar: ClassVar[bool] = False


@final
class PlanarPCS(_PCSRod):
    """Planar piecewise-constant-strain rod on SE(2) (strain ``[k, sx, sy]``, motion in
    the world x-y plane). Same arguments as :class:`PCS` with planar parameters.

    With ``floating_base=True`` the rod is free in its plane (a snake or a swimmer seen from
    above, a crawler seen from the side): ``q = [theta, x, y, q_rod]`` puts the floating
    frame at angle ``theta`` [rad] and position ``(x, y)`` [m] in the world, the rod's base
    frame being the floating frame composed with the parameters' base pose (the mount; the
    identity by default); ``qd = dq/dt`` (world-frame base rates, so ``nq = n`` and every
    scheme steps it as a vector space). The base coordinates have no stiffness, damping or
    mass of their own: ``M`` is the rod's inertia, and ``G``, actuation and point forces
    reach the base columns through the base Jacobian. soromox's ``PlanarPCS(...,
    floating_base=True)`` uses the same coordinates (the tests compare the two).
    """

    ops: ClassVar = PlanarOps
    planar: ClassVar[bool] = True
