"""Concentric tube robots: precurved elastic tubes nested on one shared centreline.

The tubes share their centreline (no clearance), so the robot's shape is one backbone curve
with the parallel-transport (torsion-free) frame ``g(s)``, ``s`` in ``[0, l]`` from the
base plate to the innermost tube's tip. Tube ``i``'s cross-sections are rotated about the
backbone tangent by its angle ``theta_i(s)``: its material frame is
``g_i(s) = g(s) exp(theta_i(s) e_x^)`` (the nested-rod relative rotation of the Lie-group
framework, pure rotation along the shared centreline). Its curvature in its own frame is
``u_i = R_x(theta_i)^T u + theta_i' e_x``, with ``u = [0, ky, kz]`` the backbone's bending.

Generalized coordinates ``q = [q_bend, q_twist]``:

* ``q_bend``: the backbone's bending ``ky, kz`` on GVS links between the *transitions* (the
  tubes' tips and the starts of their precurved sections), in a polynomial basis of
  ``bending_order`` per link. The transitions move with the tubes' translations, so the
  link lengths are parameters; their number is static.
* ``q_twist``: per tube its angle at the plate ``theta_i(0)`` and its twist rate
  ``theta_i'(s)`` as a polynomial of degree ``twist_order - 1`` (shifted Legendre) on each
  *section* of the tube between the tips of the tubes around it (the number of tubes
  present is constant on a section). ``theta_i`` is the integral, so it is continuous.

Energies (tube ``i`` present on ``[0, tip_i]``; ``E I_i``, ``G J_i`` of its annulus):
``U_e = sum_i int (E I_i |R_x(theta_i)^T u - kappa_i(s) e_z|^2 + G J_i theta_i'^2) / 2 ds
+ sum_i G J_i (theta_i(0) - rotation_i)^2 / (2 hidden_i)``: bending against the
precurvature ``kappa_i`` (on the tube's precurved section), torsion, and the straight
tube between the drive and the plate (length ``hidden_i``) as a torsion spring. Hence
``K(q)`` is not affine (:attr:`elastic_is_affine` is ``False``); it and the tangent
stiffness follow from ``U_e`` by automatic differentiation. The backbone is inextensible
and unshearable, the standard concentric-tube assumption.

Dynamics: every tube is a Cosserat rod whose material frame moves with ``g_i``: ``M``,
``C qd`` and ``G`` are the rod sums (:mod:`sorogym.models._rod`) over every tube's
quadrature points (those of the backbone links, masked by each tube's extent), with the
twist ``Ad_(R_x(-theta_i)) eta + theta_i_dot e_x``. Damping is Kelvin-Voigt on the
backbone curvature rates (``3 eta I`` summed over the tubes present) and on the tubes'
twist rates (``eta J``, and ``eta J / hidden_i`` on the plate angles for the straight tube
behind the plate): a constant ``D``. Translation and rotation are inputs through the
parameters (kinematic drives: ``with_params`` moves them without recompiling).
"""

from __future__ import annotations

from typing import ClassVar, final

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ..actuation import Actuation, CoordinateContext, GeneralizedActuation
from . import _pcs_kernel as kernel
from ._base import SoftRobot
from ._concentric_params import ConcentricTubeParams
from ._gvs import GVS, GVSParams
from ._gvs_basis import StrainBasis
from ._rod import QuadratureRod
from ._rod_ops import SpatialOps

#: Links shorter than this [m] (coinciding transitions) are kept at this length.
MIN_LINK_LENGTH = 1e-9


def _rotations_about_x(angle: Array) -> Array:
    """``R_x(angle)`` ``(3, 3, P)`` for angles ``(P,)``."""
    c, s = jnp.cos(angle), jnp.sin(angle)
    one, zero = jnp.ones_like(c), jnp.zeros_like(c)
    return jnp.stack([jnp.stack([one, zero, zero]), jnp.stack([zero, c, -s]), jnp.stack([zero, s, c])])


def _legendre_and_integrals(X: Array, count: int) -> tuple[Array, Array]:
    """Shifted Legendre polynomials ``P_j(2 X - 1)`` and their integrals from 0 to ``X``,
    ``j < count``, each ``(..., count)``: ``int_0^X P_j(2 t - 1) dt = (P_(j+1) - P_(j-1)) / (2 (2 j + 1))``
    for ``j >= 1`` (``X`` for ``j = 0``). Built by the three-term recurrence (products only:
    finite derivatives everywhere)."""
    x = 2.0 * X - 1.0
    P = [jnp.ones_like(x), x]
    for n in range(1, count):
        P.append(((2 * n + 1) * x * P[n] - n * P[n - 1]) / (n + 1))
    integrals = [X] + [(P[j + 1] - P[j - 1]) / (2.0 * (2 * j + 1)) for j in range(1, count)]
    return jnp.stack(P[:count], axis=-1), jnp.stack(integrals, axis=-1)


@final
class ConcentricTubeRobot(QuadratureRod):
    """A concentric tube robot (see module docstring).

    Args:
        params: :class:`ConcentricTubeParams` (tubes innermost first).
        bending_order: polynomial degree of ``ky`` and ``kz`` on each backbone link
            (Legendre basis; 0: piecewise constant curvature).
        twist_order: number of coefficients of each tube's twist rate on each of its
            sections (degree ``twist_order - 1``).
        num_gauss_points: Gauss-Legendre points per backbone link (at least
            ``bending_order + 1`` and ``twist_order``: fewer leave modes without stiffness).
        actuation: an :class:`~sorogym.actuation.Actuation` reading a
            :class:`~sorogym.actuation.CoordinateContext` (default: generalized forces on
            every coordinate). The drives' angles and insertions are parameters.
        partial_curves: which tubes have a straight proximal section (static: each adds a
            transition, so a backbone link); default ``curved_length < length``, kept by
            :meth:`with_params`.
    """

    ops: ClassVar = SpatialOps
    planar: ClassVar[bool] = False
    elastic_is_affine: ClassVar[bool] = False

    params: ConcentricTubeParams
    actuation: Actuation
    partial_curves: tuple[bool, ...] = eqx.field(static=True)
    bending_order: int = eqx.field(static=True)
    twist_order: int = eqx.field(static=True)
    num_gauss_points: int = eqx.field(static=True)
    backbone: GVS
    _s_quad: Float[Array, " P"]  # arc lengths of the backbone's Gauss points [m]
    _twist_basis: Float[Array, "T P n"]  # theta_i(s_p) = _twist_basis[i, p] @ q
    _twist_rate_basis: Float[Array, "T P n"]  # theta_i'(s_p)
    _precurvature: Float[Array, "T P"]  # kappa_i(s_p) [1/m] (0 off the precurved section)
    _bend_weight: Float[Array, "T P"]  # w_p E I_i [N m^3] where tube i is present, else 0
    _torsion_weight: Float[Array, "T P"]  # w_p G J_i
    _drive_stiffness: Float[Array, " T"]  # G J_i / hidden_i [N m / rad]
    _quad_mass: Float[Array, "6 TP"]
    _quad_weight_force: Float[Array, "3 TP"]
    _quad_length: Float[Array, " TP"]
    _quad_radius: Float[Array, " TP"]
    _quad_line_density: Float[Array, " TP"]
    _damping: Float[Array, "n n"]

    def __init__(
        self,
        params: ConcentricTubeParams,
        bending_order: int = 2,
        twist_order: int = 3,
        num_gauss_points: int = 4,
        actuation: Actuation | None = None,
        partial_curves: tuple[bool, ...] | None = None,
    ):
        if not isinstance(params, ConcentricTubeParams):
            raise TypeError(f"params: expected ConcentricTubeParams, got {type(params).__name__}")
        params.validate()
        for name, value, low in (
            ("bending_order", bending_order, 0),
            ("twist_order", twist_order, 1),
            ("num_gauss_points", num_gauss_points, 1),
        ):
            if int(value) != value or value < low:
                raise ValueError(f"{name}: expected an integer >= {low}, got {value!r}")
        if num_gauss_points < max(bending_order + 1, twist_order):
            raise ValueError(
                f"num_gauss_points: {num_gauss_points} Gauss points per link cannot resolve a bending basis of "
                f"order {bending_order} or {twist_order} twist coefficients (their stiffness would be singular); use "
                f"at least {max(bending_order + 1, twist_order)}"
            )
        T = params.num_tubes
        if partial_curves is None:  # static: which tubes have a straight proximal section
            partial_curves = tuple(np.asarray(params.curved_length) < np.asarray(params.length))
        self.params, self.partial_curves = params, tuple(bool(x) for x in partial_curves)
        self.bending_order, self.twist_order = int(bending_order), int(twist_order)
        self.num_gauss_points = int(num_gauss_points)
        dtype = params.length.dtype
        tips = params.tips
        transitions = [tips] + [params.curve_starts[i : i + 1] for i in range(T) if self.partial_curves[i]]
        bounds = jnp.sort(jnp.clip(jnp.concatenate(transitions), 0.0, tips[0]))
        links = jnp.maximum(jnp.diff(jnp.concatenate([jnp.zeros((1,), dtype), bounds])), MIN_LINK_LENGTH)
        section = params.section_properties()
        rod = GVSParams.create(
            length=links,
            radius=params.outer_radius[0],
            density=params.density[0],
            young_modulus=params.young_modulus[0],
            shear_modulus=params.shear_modulus[0],
            gravity=params.gravity,
            base_rotation=params.base_rotation,
            base_position=params.base_position,
            dtype=dtype,
        )
        basis = StrainBasis.create(("ky", "kz"), self.bending_order, kind="legendre")
        self.backbone = GVS(rod, basis, num_gauss_points=self.num_gauss_points)
        starts = jnp.cumsum(links) - links
        s = (starts[:, None] + links[:, None] * self.backbone._quad_x).reshape(-1)  # (P,)
        w = self.backbone._quad_length  # (P,) [m]
        self._s_quad = s
        self._twist_basis, self._twist_rate_basis = self._twist_bases_at(s)
        present = (s[None, :] < tips[:, None]).astype(dtype)  # (T, P)
        curved = jnp.stack(
            [(s > params.curve_starts[i]) if self.partial_curves[i] else jnp.ones_like(s, bool) for i in range(T)]
        ).astype(dtype)
        self._precurvature = params.precurvature[:, None] * curved
        wp = w[None, :] * present  # (T, P)
        A, I, J = section["area"], section["second_moment"], section["polar_moment"]  # noqa: E741
        self._bend_weight = wp * (params.young_modulus * I)[:, None]
        self._torsion_weight = wp * (params.shear_modulus * J)[:, None]
        self._drive_stiffness = params.shear_modulus * J / params.hidden_lengths
        moments = jnp.stack([J, I, I, A, A, A], axis=-1)  # (T, 6)
        self._quad_mass = (wp[:, :, None] * (params.density[:, None] * moments)[:, None, :]).reshape(-1, 6).T
        line_density = (present * (params.density * A)[:, None]).reshape(-1)  # (T P,)
        self._quad_length = jnp.tile(w, T)
        self._quad_line_density = line_density
        self._quad_weight_force = params.gravity[:, None] * (self._quad_length * line_density)[None, :]
        self._quad_radius = jnp.repeat(params.outer_radius, s.shape[0])
        # damping: backbone curvature rates (3 eta I summed over the tubes present), twist rates (eta J)
        bend_damp = jnp.sum(wp * (3.0 * params.damping * I)[:, None], axis=0)  # (P,)
        Bb = self.backbone._B_quad[1:3]  # (2, n_b, P)
        D_bend = jnp.einsum("dip,p,djp->ij", Bb, bend_damp, Bb)
        n_b = self.backbone.num_dofs
        D = jnp.zeros((self.num_dofs, self.num_dofs), dtype).at[:n_b, :n_b].set(D_bend)
        tors_damp = wp * (params.damping * J)[:, None]  # (T, P)
        D = D + jnp.einsum("tpi,tp,tpj->ij", self._twist_rate_basis, tors_damp, self._twist_rate_basis)
        angles = np.asarray(self.twist_offsets)  # the straight tube behind the plate: eta J / hidden
        self._damping = D.at[angles, angles].add(params.damping * J / params.hidden_lengths)
        actuation = GeneralizedActuation() if actuation is None else actuation
        self.actuation = actuation.bind(self.actuation_context(jnp.zeros((self.num_dofs,), dtype)))

    # -- structure ---------------------------------------------------------------------

    @property
    def num_tubes(self) -> int:
        return len(self.partial_curves)

    @property
    def num_links(self) -> int:
        """Number of backbone links (tubes plus partly precurved tubes)."""
        return self.num_tubes + sum(self.partial_curves)

    def _twist_sizes(self) -> list[int]:
        T, K = self.num_tubes, self.twist_order
        return [1 + K * (T - i) for i in range(T)]

    @property
    def num_dofs(self) -> int:
        n_b = 2 * (self.bending_order + 1) * self.num_links
        return n_b + sum(self._twist_sizes())

    @property
    def twist_offsets(self) -> tuple[int, ...]:
        """Index in ``q`` of every tube's plate angle ``theta_i(0)`` (its twist-rate
        coefficients follow)."""
        offsets, start = [], self.backbone.num_dofs
        for size in self._twist_sizes():
            offsets.append(start)
            start += size
        return tuple(offsets)

    @property
    def coordinate_names(self) -> tuple[str, ...]:
        """Names of the coordinates, e.g. ``("link0.ky0", ..., "tube0.angle",
        "tube0.section0.twist0", ...)``."""
        names = list(self.backbone.coordinate_names)
        names = [n.replace("seg", "link", 1) for n in names]
        for i in range(self.num_tubes):
            names.append(f"tube{i}.angle")
            for m in range(self.num_tubes - i):
                names += [f"tube{i}.section{m}.twist{j}" for j in range(self.twist_order)]
        return tuple(names)

    @property
    def total_length(self) -> Float[Array, ""]:
        """Backbone length [m]: the innermost tube's tip."""
        return self.params.tips[0]

    def locate(self, s: Array) -> tuple[Array, Array]:
        """Backbone link index and local arc length [m] of the points ``s`` [m] (links between
        the transitions)."""
        return self.backbone.locate(s)

    @property
    def tube_tips(self) -> Float[Array, " T"]:
        """Arc length of every tube's tip [m]."""
        return self.params.tips

    def with_params(self, params) -> ConcentricTubeRobot:
        """Same structure and actuation, new parameters (same shapes: no recompilation).
        Translations that reorder the transitions are fine; the precurved-section structure
        (``partial_curves``) is kept."""
        return type(self)(
            params, self.bending_order, self.twist_order, self.num_gauss_points, self.actuation, self.partial_curves
        )

    def with_actuation(self, actuation: Actuation) -> ConcentricTubeRobot:
        """Same robot with another actuation model."""
        return type(self)(
            self.params, self.bending_order, self.twist_order, self.num_gauss_points, actuation, self.partial_curves
        )

    # -- twist fields ------------------------------------------------------------------

    def _twist_bases_at(self, s: Array) -> tuple[Array, Array]:
        """``(Theta, Theta')`` ``(T, p, n)``: ``theta_i(s) = Theta[i] @ q`` and
        ``theta_i'(s) = Theta'[i] @ q`` at the arc lengths ``s`` ``(p,)`` [m]."""
        K, n = self.twist_order, self.num_dofs
        tips = self.params.tips
        values, rates = [], []
        for i, offset in enumerate(self.twist_offsets):
            ends = jnp.concatenate([tips[i:][::-1]])  # section ends: outermost tube's tip first
            begins = jnp.concatenate([jnp.zeros((1,), s.dtype), ends[:-1]])
            widths = ends - begins  # (T - i,)
            X = (s[:, None] - begins[None, :]) / widths[None, :]  # (p, sections)
            legendre, integral = _legendre_and_integrals(jnp.clip(X, 0.0, 1.0), K)  # (p, m, K)
            integral = widths[None, :, None] * integral
            inside = (X >= 0.0) & (X < 1.0)
            rate = jnp.where(inside[..., None], legendre, 0.0)
            p = s.shape[0]
            value = jnp.concatenate([jnp.ones((p, 1), s.dtype), integral.reshape(p, -1)], axis=1)
            rate = jnp.concatenate([jnp.zeros((p, 1), s.dtype), rate.reshape(p, -1)], axis=1)
            size = value.shape[1]
            pad = ((0, 0), (offset, n - offset - size))
            values.append(jnp.pad(value, pad))
            rates.append(jnp.pad(rate, pad))
        return jnp.stack(values), jnp.stack(rates)

    def tube_angles(self, q: Float[Array, " n"], s_ps) -> Float[Array, "T p"]:
        """Angles ``theta_i(s)`` [rad] of every tube's cross-sections about the backbone
        tangent, relative to the backbone's parallel-transport frame, at ``s_ps`` ``(p,)``
        (meaningful where the tube is present, ``s <= tip_i``)."""
        s = jnp.asarray(s_ps, q.dtype).reshape(-1)
        return self._twist_bases_at(s)[0] @ q

    def bending(self, q: Float[Array, " n"], s_ps) -> Float[Array, "p 2"]:
        """Backbone bending ``[ky, kz]`` ``(p, 2)`` [1/m] in the parallel-transport frame."""
        return self.backbone.strain(q[: self.backbone.num_dofs], s_ps)[:, 1:3]

    # -- kinematics --------------------------------------------------------------------

    def _attach_tubes(self, f, q, qd, basis, with_velocity):
        """Frames of tubes at backbone frames ``f`` (``P`` points): ``basis`` ``(T', P, n)``
        maps ``q`` to the angles of ``T'`` tubes there; returns ``T' P`` frames, tube-major."""
        Tn, P, n = basis.shape
        n_b = f.J.shape[1]
        J = jnp.pad(f.J, ((0, 0), (0, n - n_b), (0, 0)))
        base_cols = jnp.tile(jnp.concatenate([J, f.eta, f.jdot_qd], axis=1), (1, 1, Tn))
        R0, p0 = jnp.tile(f.R, (1, 1, Tn)), jnp.tile(f.p, (1, Tn))
        flat = basis.reshape(Tn * P, n)
        theta = flat @ q
        theta_dot = flat @ qd if with_velocity else jnp.zeros_like(theta)
        zeros = jnp.zeros_like(theta)
        row = jnp.concatenate([flat.T, theta_dot[None], zeros[None]], axis=0)  # (n + 2, T P)
        cols = jnp.zeros((6, n + 2, Tn * P), q.dtype).at[0].set(row)
        local = kernel.Local(_rotations_about_x(theta), jnp.zeros((3, Tn * P), q.dtype), cols)
        return kernel.to_frame(*kernel.attach(self.ops, R0, p0, base_cols, local, with_velocity))

    def _frames(self, q, qd, s, with_velocity):
        """The innermost tube's frames at arc lengths ``s`` (its material frame: the tool
        rotates with it)."""
        s = jnp.asarray(s, q.dtype).reshape(-1)
        n_b = self.backbone.num_dofs
        f = self.backbone._frames(q[:n_b], qd[:n_b], s, with_velocity)
        return self._attach_tubes(f, q, qd, self._twist_bases_at(s)[0][:1], with_velocity)

    def _quadrature_frames(self, q, qd, with_velocity):
        """Every tube's frames at the backbone's Gauss points (``T P``, tube-major; a tube's
        points beyond its tip carry no mass)."""
        n_b = self.backbone.num_dofs
        f = self.backbone._quadrature_frames(q[:n_b], qd[:n_b], with_velocity)
        return self._attach_tubes(f, q, qd, self._twist_basis, with_velocity)

    # -- elasticity --------------------------------------------------------------------

    def elastic_energy(self, q: Float[Array, " n"]) -> Float[Array, ""]:
        """``U_e`` [J] (module docstring): bending against the precurvature, torsion, and
        the drives' torsion springs; ``E I kappa^2 / 2`` per length on a straight tube."""
        n_b = self.backbone.num_dofs
        u = jnp.einsum("dnp,n->dp", self.backbone._B_quad[1:3], q[:n_b])  # (2, P): ky, kz
        theta = self._twist_basis @ q  # (T, P)
        rate = self._twist_rate_basis @ q
        kappa = self._precurvature
        # |R_x(theta)^T u - kappa e_z|^2 = |u|^2 - 2 kappa (cos(theta) kz - sin(theta) ky) + kappa^2
        bend = jnp.sum(u**2, axis=0)[None] - 2.0 * kappa * (jnp.cos(theta) * u[1] - jnp.sin(theta) * u[0]) + kappa**2
        drive = q[np.asarray(self.twist_offsets)] - self.params.rotation
        energies = (self._bend_weight * bend, self._torsion_weight * rate**2, self._drive_stiffness * drive**2)
        return 0.5 * sum(jnp.sum(e) for e in energies)

    def elastic_force(self, q: Float[Array, " n"]) -> Float[Array, " n"]:
        """``K(q) = dU_e/dq`` (reverse-mode AD of :meth:`elastic_energy`)."""
        return jax.grad(self.elastic_energy)(q)

    def stiffness_matrix(self) -> Float[Array, "n n"]:
        """Tangent stiffness ``dK/dq`` at ``q = 0`` (the straight, untwisted configuration):
        :class:`SoftRobot`'s AD of :meth:`elastic_force` (the rods' constant ``S`` does not
        exist here)."""
        return SoftRobot.stiffness_matrix(self)

    @property
    def _stiffness(self) -> Float[Array, "n n"]:
        return self.stiffness_matrix()

    # -- actuation ---------------------------------------------------------------------

    def actuation_context(self, q: Float[Array, " n"]) -> CoordinateContext:
        """The coordinates alone (the tubes' drives are parameters)."""
        return CoordinateContext(q)
