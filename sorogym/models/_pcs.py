"""Piecewise Constant Strain rods: spatial :class:`PCS` (SE(3)) and :class:`PlanarPCS` (SE(2)).

Each of the ``N`` segments has a constant strain ``xi_i = xi_ref_i + B_i q``; the
configuration ``q`` collects the displacements of the active strain components (see
:mod:`sorogym.models._strains`). Frames: the world frame is fixed; the base frame is
``(base_rotation, base_position)``; the backbone's local x axis is the tangent at rest.
Jacobians map ``qd`` to twists of the backbone frame at ``s``: body-frame twists
(components in the cross-section frame) or ``"inertial"`` twists ``[R w_b, R v_b]``
(world-frame angular velocity and the world-frame velocity of the backbone point).

Cross-sections are solid circles of radius ``r``: area ``A = pi r^2``, second moments
``I = pi r^4 / 4`` and polar ``J = pi r^4 / 2``. Per unit length, the mass matrix is
``rho diag(J, I, I, A, A, A)`` (planar ``rho diag(I, A, A)``), the Hookean stiffness
``diag(G J, E I, E I, E A, G A, G A)`` (planar ``diag(E I, E A, G A)``) and the damping
``eta diag(J, 3 I, 3 I, 3 A, A, A)`` (planar ``eta diag(3 I, 3 A, A)``) for the material
damping coefficient ``eta = params.damping`` [Pa s], a shear viscosity whose extensional
counterpart is ``3 eta`` (Trouton's ratio, incompressible material), or directly
``diag(params.damping[i])`` when per-strain coefficients ``(N, d)`` are given; segment terms
are these times the segment length, so ``K(q) = S q`` and ``D`` are constant matrices.
Integrals along segments (M, C qd, G) use Gauss-Legendre quadrature.
"""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ..actuation import GeneralizedActuation
from . import _pcs_kernel as kernel
from ._base import SoftRobot
from ._params import RodParams
from ._rod_ops import PlanarOps, SpatialOps
from ._strains import PLANAR_STRAINS, SPATIAL_STRAINS, StrainSpec, selector_blocks, strain_mask


def _section_moments(radius: Array, planar: bool) -> Array:
    """``(N, d)`` cross-section moments ordered like the strain: ``[J, I, I, A, A, A]``
    (spatial) or ``[I, A, A]`` (planar)."""
    A = jnp.pi * radius**2
    I = jnp.pi * radius**4 / 4.0
    if planar:
        return jnp.stack([I, A, A], axis=-1)
    return jnp.stack([2.0 * I, I, I, A, A, A], axis=-1)


# Viscous (Kelvin-Voigt) damping: the damping coefficient is a shear viscosity eta; the
# extensional viscosity of an incompressible material is 3 eta (Trouton's ratio), so bending
# and elongation rates are damped by 3 eta and torsion and shear by eta.
_TROUTON = {
    False: np.array([1.0, 3.0, 3.0, 3.0, 1.0, 1.0]),
    True: np.array([3.0, 3.0, 1.0]),
}


class _PCSRod(SoftRobot):
    """Shared implementation of spatial and planar PCS (see module docstring)."""

    ops: ClassVar = SpatialOps
    planar: ClassVar[bool] = False

    params: RodParams
    actuation: eqx.Module
    active_strains: tuple[tuple[bool, ...], ...] = eqx.field(static=True)
    num_quadrature_points: int = eqx.field(static=True)
    quadrature: tuple[tuple[float, ...], tuple[float, ...]] | None = eqx.field(static=True)
    # Precomputed, state-independent data (recomputed by with_params).
    _B: Float[Array, "N d n"]
    _quad_s: Float[Array, " P"]  # local arc length of each quadrature point [m]
    _quad_mass: Float[Array, "d P"]  # weight * diagonal mass per unit length
    _quad_weight_force: Float[Array, "k P"]  # weight * rho A * gravity [N]
    _stiffness: Float[Array, "n n"]
    _damping: Float[Array, "n n"]

    def __init__(
        self,
        params: RodParams,
        active_strains: StrainSpec = None,
        actuation: eqx.Module | None = None,
        num_quadrature_points: int = 5,
        quadrature: tuple | None = None,
    ):
        if not isinstance(params, RodParams):
            raise TypeError(f"params: expected RodParams, got {type(params).__name__}")
        if params.is_planar != self.planar:
            kind = "planar" if self.planar else "spatial"
            raise ValueError(
                f"params: {type(self).__name__} needs {kind} parameters "
                f"(create them with planar={self.planar})"
            )
        params.validate(planar=self.planar)
        if int(num_quadrature_points) < 1:
            raise ValueError(f"num_quadrature_points: must be >= 1, got {num_quadrature_points}")
        N = params.num_segments
        masks = strain_mask(active_strains, N, self.planar)
        self.params = params
        self.active_strains = masks
        self.num_quadrature_points = int(num_quadrature_points)
        n = sum(sum(m) for m in masks)
        self.actuation = GeneralizedActuation() if actuation is None else actuation
        self.actuation.check(N, n, self.planar)
        dtype = params.length.dtype
        self._B = jnp.asarray(selector_blocks(masks), dtype)
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
        moments = _section_moments(params.radius, self.planar)  # (N, d)
        mass = params.density[:, None] * moments
        self._quad_mass = (weights[:, None] * mass[quad_segment]).T
        line_density = params.density * jnp.pi * params.radius**2  # kg/m
        self._quad_weight_force = params.gravity[:, None] * (weights * line_density[quad_segment])[None, :]
        E, G = params.young_modulus, params.shear_modulus
        if self.planar:
            modulus = jnp.stack([E, E, G], axis=-1)
        else:
            modulus = jnp.stack([G, E, E, E, G, G], axis=-1)
        stiff = L[:, None] * modulus * moments  # (N, d)
        if params.damping.ndim == 2:  # per-strain coefficients per unit length
            damp = L[:, None] * params.damping
        else:
            damp = L[:, None] * params.damping[:, None] * jnp.asarray(_TROUTON[self.planar], dtype) * moments
        self._stiffness = jnp.einsum("idn,id,idm->nm", self._B, stiff, self._B)
        self._damping = jnp.einsum("idn,id,idm->nm", self._B, damp, self._B)

    # -- structure ---------------------------------------------------------------------

    @property
    def num_segments(self) -> int:
        return len(self.active_strains)

    @property
    def num_dofs(self) -> int:
        return int(self._B.shape[-1])

    @property
    def num_actuators(self) -> int:
        return self.actuation.num_actuators(self.num_dofs)

    @property
    def strain_names(self) -> tuple[str, ...]:
        """Names of the coordinates of ``q``, e.g. ``("seg0.ky", "seg0.kz", ...)``."""
        names = PLANAR_STRAINS if self.planar else SPATIAL_STRAINS
        return tuple(
            f"seg{i}.{name}" for i, m in enumerate(self.active_strains) for name, a in zip(names, m) if a
        )

    @property
    def total_length(self) -> Float[Array, ""]:
        """Backbone length at rest [m]."""
        return jnp.sum(self.params.length)

    def with_params(self, params: RodParams) -> "_PCSRod":
        """Same structure and actuation with new parameters (same shapes: no recompilation)."""
        return type(self)(params, self.active_strains, self.actuation, self.num_quadrature_points, self.quadrature)

    def update_params(self, **fields) -> "_PCSRod":
        """``with_params(params.replace(**fields))``."""
        return self.with_params(self.params.replace(**fields))

    def with_actuation(self, actuation: eqx.Module) -> "_PCSRod":
        """Same robot with another actuation model."""
        return type(self)(self.params, self.active_strains, actuation, self.num_quadrature_points, self.quadrature)

    # -- kinematics --------------------------------------------------------------------

    def strain(self, q: Float[Array, " n"]) -> Float[Array, "N d"]:
        """Full strain of every segment: ``xi_i = xi_ref_i + B_i q``."""
        return self.params.reference_strain + jnp.einsum("idn,n->id", self._B, q)

    def strain_rate(self, qd: Float[Array, " n"]) -> Float[Array, "N d"]:
        return jnp.einsum("idn,n->id", self._B, qd)

    def _kinematics(self, q, qd, s_local, seg, with_velocity) -> kernel.Frame:
        ops, p = self.ops, self.params
        root = kernel.root_frame(ops, ops.base_rotation(p.base_rotation), p.base_position, self.num_dofs)
        return kernel.frames(
            ops, root, self.strain(q), self.strain_rate(qd), self._B, p.length, s_local, seg, with_velocity
        )

    def _locate(self, s: Array) -> tuple[Array, Array]:
        """Segment index and local arc length of the backbone point ``s`` [m]."""
        L = self.params.length
        ends = jnp.cumsum(L)
        seg = jnp.clip(jnp.searchsorted(ends, s, side="left"), 0, self.num_segments - 1)
        return seg, s - (ends[seg] - L[seg])

    def _frames(self, q, qd, s, with_velocity):
        """Frames at arc lengths ``s`` (any shape, flattened to the trailing axis)."""
        s = jnp.asarray(s, q.dtype).reshape(-1)
        seg, s_loc = self._locate(s)
        return self._kinematics(q, qd, s_loc, seg, with_velocity)

    def forward_kinematics(self, q: Float[Array, " n"], s) -> Array:
        """Pose at arc length ``s`` [m] (``0 <= s <= total_length``) in the world frame:
        a 4x4 (spatial) or 3x3 (planar) homogeneous matrix."""
        f = self._frames(q, jnp.zeros_like(q), s, False)
        return self.ops.pose_matrix(f.R[..., 0], f.p[:, 0])

    def forward_kinematics_batched(self, q: Float[Array, " n"], s_ps) -> Array:
        """Poses at the arc lengths ``s_ps`` (``(p,)``): ``(p, 4, 4)`` or ``(p, 3, 3)``."""
        f = self._frames(q, jnp.zeros_like(q), s_ps, False)
        return jax.vmap(self.ops.pose_matrix, in_axes=(2, 1))(f.R, f.p)

    def backbone_positions(self, q: Float[Array, " n"], s_ps) -> Array:
        """Backbone positions ``(p, k)`` [m] in the world frame at arc lengths ``s_ps``."""
        return self._frames(q, jnp.zeros_like(q), s_ps, False).p.T

    def _to_frame(self, f, frame):
        if frame == "body":
            return f.J
        if frame == "inertial":
            return self.ops.rotate_twists(f.R, f.J)
        raise ValueError(f"frame: unknown {frame!r}; use 'inertial' or 'body'")

    def jacobian(self, q: Float[Array, " n"], s, frame: str = "inertial") -> Array:
        """Twist Jacobian ``(d, n)`` at ``s``: ``"inertial"`` gives world-frame
        ``[omega, pdot]`` (angular first), ``"body"`` the cross-section-frame twist."""
        return self._to_frame(self._frames(q, jnp.zeros_like(q), s, False), frame)[..., 0]

    def pose_and_jacobian(self, q: Float[Array, " n"], s, frame: str = "inertial") -> tuple[Array, Array]:
        """``(forward_kinematics(q, s), jacobian(q, s, frame))`` from one kinematics pass
        (cheaper than the two calls, in tracing and at run time)."""
        f = self._frames(q, jnp.zeros_like(q), s, False)
        return self.ops.pose_matrix(f.R[..., 0], f.p[:, 0]), self._to_frame(f, frame)[..., 0]

    def jacobian_batched(self, q: Float[Array, " n"], s_ps, frame: str = "inertial") -> Array:
        """Jacobians ``(p, d, n)`` at the arc lengths ``s_ps``."""
        J = self._to_frame(self._frames(q, jnp.zeros_like(q), s_ps, False), frame)
        return jnp.moveaxis(J, -1, 0)

    def jacobian_and_time_derivative(self, q, qd, s, frame: str = "inertial") -> tuple[Array, Array]:
        """``(J, dJ/dt)`` at ``s`` in the requested frame, each ``(d, n)``."""
        return jax.jvp(lambda q_: self.jacobian(q_, s, frame), (q,), (qd,))

    # -- dynamics ----------------------------------------------------------------------

    def _quadrature_frames(self, q, qd, with_velocity):
        s_local = self._quad_s.reshape(self.num_segments, self.num_quadrature_points)
        return self._kinematics(q, qd, s_local, None, with_velocity)

    def _inertia_from(self, f):
        return jnp.einsum("dip,dp,djp->ij", f.J, self._quad_mass, f.J)

    def _gravity_from(self, f):
        wrench = self.ops.force_wrench(f.R, self._quad_weight_force)
        return -jnp.einsum("dnp,dp->n", f.J, wrench)

    def _coriolis_from(self, f):
        eta, m = f.eta[:, 0], self._quad_mass
        gyro = self.ops.coad_apply(eta, m * eta)
        return jnp.einsum("dnp,dp->n", f.J, m * f.jdot_qd[:, 0] - gyro)

    def inertia_matrix(self, q: Float[Array, " n"]) -> Float[Array, "n n"]:
        """``M(q) = int J^T M_s J ds`` (body-frame Jacobians, Gauss quadrature)."""
        return self._inertia_from(self._quadrature_frames(q, jnp.zeros_like(q), False))

    def coriolis_force(self, q, qd) -> Float[Array, " n"]:
        """``C(q, qd) qd = int J^T (M_s dJ/dt qd - ad_eta^T M_s eta) ds``, no ``C`` formed."""
        return self._coriolis_from(self._quadrature_frames(q, qd, True))

    def coriolis_matrix(self, q, qd) -> Float[Array, "n n"]:
        """``C = int J^T (M_s dJ/dt + (M_s ad_eta - ad_eta^T M_s - adbar(M_s eta)) J / 2) ds``
        where ``adbar(mu) x = ad_x^T mu``; ``dM/dt - 2 C`` is skew-symmetric and
        ``C qd`` equals :meth:`coriolis_force`."""
        f, df = jax.jvp(lambda q_: self._quadrature_frames(q_, qd, True), (q,), (qd,))
        ops, m = self.ops, self._quad_mass[:, None, :]
        J, eta = f.J, f.eta
        inner = m * df.J + 0.5 * (
            m * ops.bracket(eta, J) - ops.coad_apply(eta, m * J) - ops.coad_apply(J, m * eta)
        )
        return jnp.einsum("dip,djp->ij", J, inner)

    def gravitational_force(self, q: Float[Array, " n"]) -> Float[Array, " n"]:
        """``G(q) = -int J^T [0, R^T rho A g] ds = dU_g/dq``."""
        return self._gravity_from(self._quadrature_frames(q, jnp.zeros_like(q), False))

    def elastic_force(self, q: Float[Array, " n"]) -> Float[Array, " n"]:
        """Hookean ``K(q) = S q`` with the constant stiffness matrix ``S``."""
        return self._stiffness @ q

    def stiffness_matrix(self) -> Float[Array, "n n"]:
        """Constant stiffness ``S`` (``K(q) = S q``)."""
        return self._stiffness

    def damping_matrix(self) -> Float[Array, "n n"]:
        """Constant damping ``D`` (force ``D qd``)."""
        return self._damping

    def actuation_matrix(self, q: Float[Array, " n"]) -> Float[Array, "n m"]:
        """``A(q)`` of the installed actuation model."""
        return self.actuation.matrix(self.strain(q), self.params.length, self._B)

    def actuation_coordinates(self, q: Float[Array, " n"]) -> Float[Array, " m"]:
        """Actuator coordinates ``phi_a(q)`` ``(m,)`` with ``d phi_a/dq^T = A(q)``, zero at
        ``q = 0``: tendon shortening ``l(0) - l(q)`` [m] for tendons, ``A^T q`` for
        generalized-force actuation (constant ``A``)."""
        if hasattr(self.actuation, "lengths"):
            lengths = lambda q_: self.actuation.lengths(self.strain(q_), self.params.length)  # noqa: E731
            return lengths(jnp.zeros_like(q)) - lengths(q)
        return self.actuation_matrix(q).T @ q

    def actuation_force(self, q, u) -> Float[Array, " n"]:
        """``A(q) effort(u)`` (tendon tensions are clipped at zero)."""
        return self.actuation_matrix(q) @ self.actuation.effort(u)

    def kinetic_energy(self, q, qd) -> Float[Array, ""]:
        return 0.5 * qd @ (self.inertia_matrix(q) @ qd)

    def gravitational_energy(self, q) -> Float[Array, ""]:
        """``U_g = -int rho A g . p(s) ds`` [J] (zero at the base height)."""
        f = self._quadrature_frames(q, jnp.zeros_like(q), False)
        return -jnp.sum(self._quad_weight_force * f.p)

    def elastic_energy(self, q) -> Float[Array, ""]:
        return 0.5 * q @ (self._stiffness @ q)

    def potential_energy(self, q) -> Float[Array, ""]:
        return self.gravitational_energy(q) + self.elastic_energy(q)

    def dynamical_terms(self, q, qd) -> tuple[Array, Array, Array]:
        """``(M, C qd, G)`` from one shared pass over the quadrature points."""
        f = self._quadrature_frames(q, qd, True)
        return self._inertia_from(f), self._coriolis_from(f), self._gravity_from(f)

    def generalized_force(self, q, u=None, tau_ext=None) -> Float[Array, " n"]:
        """``A(q) effort(u) + tau_ext`` (either may be ``None``)."""
        tau = jnp.zeros_like(q)
        if u is not None:
            tau = tau + self.actuation_force(q, u)
        if tau_ext is not None:
            tau = tau + tau_ext
        return tau

    def forward_dynamics(self, t, y, actuation_args: tuple = ()) -> Float[Array, " 2n"]:
        """``dy/dt = [qd, M^-1 (A u + tau_ext - C qd - G - S q - D qd)]``.

        ``actuation_args`` is ``()``, ``(u,)`` or ``(u, tau_ext)`` (``u``: ``(m,)``,
        ``tau_ext``: ``(n,)``). Fused: kinematics shared by M, C qd and G; a Cholesky solve.
        """
        q, qd = self.split_state(y)
        M, cor, grav = self.dynamical_terms(q, qd)
        tau = self.generalized_force(q, *actuation_args)
        rhs = tau - cor - grav - self._stiffness @ q - self._damping @ qd
        qdd = jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(M), rhs)
        return jnp.concatenate([qd, qdd])


class PCS(_PCSRod):
    """Spatial piecewise-constant-strain rod on SE(3) (strain ``[kx, ky, kz, sx, sy, sz]``).

    Args:
        params: :class:`RodParams` with ``planar=False``.
        active_strains: strain selection (``None``: all six; ``"pcc"``: bending only);
            names, a boolean mask, or one entry per segment.
        actuation: :class:`~sorogym.actuation.GeneralizedActuation` (default, ``A = I``)
            or :class:`~sorogym.actuation.Tendons`.
        num_quadrature_points: Gauss-Legendre points per segment for M, C qd and G.
        quadrature: optional custom rule ``(nodes, weights)`` on ``[0, 1]`` (weights summing
            to 1) replacing Gauss-Legendre, e.g. to reproduce another implementation's rule.
    """

    ops: ClassVar = SpatialOps
    planar: ClassVar[bool] = False


class PlanarPCS(_PCSRod):
    """Planar piecewise-constant-strain rod on SE(2) (strain ``[k, sx, sy]``, motion in
    the world x-y plane). Same arguments as :class:`PCS` with planar parameters."""

    ops: ClassVar = PlanarOps
    planar: ClassVar[bool] = True
