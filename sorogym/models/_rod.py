"""Operations shared by the rod models (PCS and GVS): everything that follows from the
frames at backbone points and at the quadrature points.

A rod model (a final subclass of the abstract :class:`QuadratureRod`) provides ``ops``
(:class:`~sorogym.models._rod_ops.SpatialOps` or ``PlanarOps``), ``_frames(q, qd, s,
with_velocity)`` (frames at arc lengths ``s``), ``_quadrature_frames(q, qd, with_velocity)``
(frames at the ``P`` quadrature points) and the precomputed arrays ``_quad_mass`` ``(d, P)``
(quadrature weight times the diagonal of the cross-section mass matrix),
``_quad_weight_force`` ``(k, P)`` (weight times ``rho A g``, world frame [N]), ``_stiffness``
and ``_damping`` ``(n, n)``; all are declared here as abstract members. Frames are
:class:`~sorogym.models._pcs_kernel.Frame` tuples in the batch-minor layout of
:mod:`sorogym.models._rod_ops`.
"""

import abc
from collections.abc import Callable
from typing import ClassVar, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ._base import DynamicalTerms, SoftRobot


class LinePoints(NamedTuple):
    """Backbone points where a line load is evaluated (the rod's quadrature points, world
    frame, ``k = 2`` planar or ``3`` spatial): ``positions`` ``(P, k)`` [m], ``velocities``
    ``(P, k)`` [m/s], unit ``tangents`` ``(P, k)``, cross-section ``radii`` ``(P,)`` [m] and
    ``line_density`` ``(P,)`` [kg/m] (``rho A``, the mass per unit length)."""

    positions: Array
    velocities: Array
    tangents: Array
    radii: Array
    line_density: Array


#: ``load(points: LinePoints) -> (P, k)``: a force per unit length [N/m] (world frame) along
#: the backbone, each point's force depending on that point alone (friction on the ground,
#: resistive-force fluids, drag).
LineLoad = Callable[[LinePoints], Array]


class LineLoadTerms(NamedTuple):
    """A line load at one state: the generalized force ``force`` ``(n,)`` and its velocity
    stiffness ``damping`` ``(n, n)`` (symmetric part of ``-d force / d qd``), the matrix a
    linearly implicit step adds to its iteration matrix."""

    force: Array
    damping: Array


def pointwise_load_map(load: LineLoad, base: LinePoints, J_world: Float[Array, "P k n"], weights: Float[Array, " P"]):
    """``v -> LineLoadTerms`` of a pointwise load at points with world-frame linear
    Jacobians ``J_world`` ``(P, k, n)`` (positions, tangents, radii and densities frozen in
    ``base``; its velocities are ``J_world v``), each point's force integrated with its
    weight ``weights`` ``(P,)``: ``tau = sum_p w_p J_p^T f_p`` and the symmetric part of
    ``-d tau / d v`` from ``k`` forward-mode products (the load's Jacobian per point)."""
    k = J_world.shape[1]

    def at(v):
        v_world = J_world @ v  # (P, k)
        forces, linear = jax.linearize(lambda u: load(base._replace(velocities=u)), v_world)
        dfdv = jnp.stack([linear(jnp.broadcast_to(e, v_world.shape)) for e in jnp.eye(k, dtype=v.dtype)], -1)
        C = -0.5 * (dfdv + jnp.swapaxes(dfdv, 1, 2))  # (P, k, k) world frame, per unit weight
        tau = jnp.einsum("pkn,pk->n", J_world, weights[:, None] * forces)
        D = jnp.einsum("pin,pij,pjm->nm", J_world, weights[:, None, None] * C, J_world)
        return LineLoadTerms(tau, D)

    return at


class QuadratureRod(SoftRobot):
    """Kinematic queries, dynamics and energies of a rod discretised by quadrature
    points (see module docstring); subclasses build the frames."""

    ops: eqx.AbstractClassVar[type]
    planar: eqx.AbstractClassVar[bool]
    elastic_is_affine: ClassVar[bool] = True
    # True where the stiffness and damping matrices are diagonal by construction, whatever
    # the parameters (a body tree then forms K and D qd as elementwise products).
    diagonal_elastic: ClassVar[bool] = False
    _quad_mass: eqx.AbstractVar[Float[Array, "d P"]]
    _quad_weight_force: eqx.AbstractVar[Float[Array, "k P"]]
    _quad_length: eqx.AbstractVar[Float[Array, " P"]]  # quadrature weights [m]
    _quad_radius: eqx.AbstractVar[Float[Array, " P"]]
    _quad_line_density: eqx.AbstractVar[Float[Array, " P"]]
    _stiffness: eqx.AbstractVar[Float[Array, "n n"]]
    _damping: eqx.AbstractVar[Float[Array, "n n"]]

    @abc.abstractmethod
    def _frames(self, q, qd, s, with_velocity: bool):
        """Frames at the arc lengths ``s`` [m] (any shape, flattened to the trailing axis)."""

    @abc.abstractmethod
    def _quadrature_frames(self, q, qd, with_velocity: bool):
        """Frames at the ``P`` quadrature points."""

    @property
    def total_length(self) -> Float[Array, ""]:
        """Backbone length at rest [m]."""
        return jnp.sum(self.params.length)

    @property
    def tip_abscissa(self) -> Float[Array, ""]:
        return self.total_length

    # -- kinematics --------------------------------------------------------------------

    def locate(self, s: Array) -> tuple[Array, Array]:
        """Segment index and local arc length [m] of the backbone points ``s`` [m]."""
        L = self.params.length
        ends = jnp.cumsum(L)
        seg = jnp.clip(jnp.searchsorted(ends, s, side="left"), 0, L.shape[0] - 1)
        return seg, s - (ends[seg] - L[seg])

    def forward_kinematics(self, q: Float[Array, " n"], s) -> Array:
        """Pose at arc length ``s`` [m] (``0 <= s <= total_length``) in the world frame:
        a 4x4 (spatial) or 3x3 (planar) homogeneous matrix."""
        f = self._frames(q, jnp.zeros_like(q), s, False)
        return self.ops.pose_matrix(f.R[..., 0], f.p[:, 0])

    def forward_kinematics_batched(self, q: Float[Array, " n"], s_ps) -> Array:
        """Poses at the arc lengths ``s_ps`` (``(p,)``): ``(p, 4, 4)`` or ``(p, 3, 3)``."""
        f = self._frames(q, jnp.zeros_like(q), s_ps, False)
        return jax.vmap(self.ops.pose_matrix, in_axes=(2, 1))(f.R, f.p)

    def centre_of_mass(self, q: Float[Array, " n"]) -> Array:
        """Position ``(k,)`` [m] (world frame) of the rod's centre of mass: its quadrature
        points' positions weighted by their mass (``rho A`` times the Gauss weight)."""
        f = self._quadrature_frames(q, jnp.zeros_like(q), False)
        m = self._quad_length * self._quad_line_density
        return (f.p @ m) / jnp.sum(m)

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

    def pose_and_jacobian_batched(self, q: Float[Array, " n"], s_ps, frame: str = "inertial") -> tuple[Array, Array]:
        """``(forward_kinematics_batched, jacobian_batched)`` at the arc lengths ``s_ps``
        from one kinematics pass: poses ``(p, 4, 4)`` and Jacobians ``(p, d, n)``."""
        f = self._frames(q, jnp.zeros_like(q), s_ps, False)
        poses = jax.vmap(self.ops.pose_matrix, in_axes=(2, 1))(f.R, f.p)
        return poses, jnp.moveaxis(self._to_frame(f, frame), -1, 0)

    def jacobian_batched(self, q: Float[Array, " n"], s_ps, frame: str = "inertial") -> Array:
        """Jacobians ``(p, d, n)`` at the arc lengths ``s_ps``."""
        J = self._to_frame(self._frames(q, jnp.zeros_like(q), s_ps, False), frame)
        return jnp.moveaxis(J, -1, 0)

    def point_force_map(self, q: Float[Array, " n"], s_ps) -> tuple[Array, Callable]:
        """``(positions (p, k) [m], apply)`` at the backbone points ``s_ps`` ``(p,)`` [m]:
        ``apply(forces (p, k) [N]) -> (n,)`` is the generalized force ``sum_i J_v(s_i)^T
        f_i`` of world-frame forces acting there (contact, drag, a pull on the tip), with
        ``J_v`` the linear rows of the inertial-frame Jacobians. Models with a cheaper
        transposed recursion override it."""
        poses, J = self.pose_and_jacobian_batched(q, s_ps, frame="inertial")
        k = self.ops.pos_dim
        return poses[:, :k, k], lambda forces: jnp.einsum("pcn,pc->n", J[:, -k:], forces)

    # -- dynamics ----------------------------------------------------------------------

    def _inertia_from(self, f):
        return jnp.einsum("dip,dp,djp->ij", f.J, self._quad_mass, f.J)

    def _gravity_from(self, f):
        wrench = self.ops.force_wrench(f.R, self._quad_weight_force)
        return -jnp.einsum("dnp,dp->n", f.J, wrench)

    def _inertial_wrench(self, f):
        """``M_s dJ/dt qd - ad_eta^T M_s eta`` ``(d, P)`` (quadrature-weighted)."""
        eta, m = f.eta[:, 0], self._quad_mass
        return m * f.jdot_qd[:, 0] - self.ops.coad_apply(eta, m * eta)

    def _coriolis_from(self, f):
        return jnp.einsum("dnp,dp->n", f.J, self._inertial_wrench(f))

    def _bias_from(self, f):
        """``C qd + G`` from one contraction over the quadrature points."""
        wrench = self._inertial_wrench(f) - self.ops.force_wrench(f.R, self._quad_weight_force)
        return jnp.einsum("dnp,dp->n", f.J, wrench)

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
        inner = m * df.J + 0.5 * (m * ops.bracket(eta, J) - ops.coad_apply(eta, m * J) - ops.coad_apply(J, m * eta))
        return jnp.einsum("dip,djp->ij", J, inner)

    def gravitational_force(self, q: Float[Array, " n"]) -> Float[Array, " n"]:
        """``G(q) = -int J^T [0, R^T rho A g] ds = dU_g/dq``."""
        return self._gravity_from(self._quadrature_frames(q, jnp.zeros_like(q), False))

    def elastic_force(self, q: Float[Array, " n"]) -> Float[Array, " n"]:
        """Hookean ``K(q) = S q`` with the constant stiffness matrix ``S``."""
        return self._stiffness @ q

    def damping_force(self, qd: Float[Array, " n"]) -> Float[Array, " n"]:
        """Viscous ``D qd`` with the constant damping matrix ``D``."""
        return self._damping @ qd

    def stiffness_matrix(self) -> Float[Array, "n n"]:
        """Constant stiffness ``S`` (``K(q) = S q``)."""
        return self._stiffness

    def damping_matrix(self) -> Float[Array, "n n"]:
        """Constant damping ``D`` (force ``D qd``)."""
        return self._damping

    def gravitational_energy(self, q) -> Float[Array, ""]:
        """``U_g = -int rho A g . p(s) ds`` [J] (zero at the base height)."""
        f = self._quadrature_frames(q, jnp.zeros_like(q), False)
        return -jnp.sum(self._quad_weight_force * f.p)

    def elastic_energy(self, q) -> Float[Array, ""]:
        """``U_e = q^T S q / 2`` [J]."""
        return 0.5 * q @ (self._stiffness @ q)

    def dynamical_terms(self, q, qd) -> DynamicalTerms:
        """``(M, C qd, G)`` from one shared pass over the quadrature points."""
        f = self._quadrature_frames(q, qd, True)
        return DynamicalTerms(self._inertia_from(f), self._coriolis_from(f), self._gravity_from(f))

    def _line_load_at(self, f, load: LineLoad):
        """``v -> LineLoadTerms``: the line load at generalized velocity ``v`` ``(n,)`` with
        the quadrature frames ``f`` (positions, orientations, Jacobians) frozen; exact at
        the velocity of ``f``. The force per unit length at each quadrature point is
        integrated by the rod's own rule; its velocity Jacobian comes from ``k`` forward-mode
        products (pointwise loads: one column per velocity direction at every point at
        once). Cheap to call again: no kinematics, one ``(P, k, n)`` product and the load."""
        k = self.ops.pos_dim
        R = f.R  # (k, k, P)
        J_lin = f.J[-k:]  # (k, n, P) body-frame linear rows
        J_world = jnp.einsum("abp,bnp->pan", R, J_lin)  # (P, k, n)
        base = LinePoints(f.p.T, None, R[:, 0].T, self._quad_radius, self._quad_line_density)
        return pointwise_load_map(load, base, J_world, self._quad_length)

    def line_load_terms(self, q, qd, load: LineLoad) -> LineLoadTerms:
        """The generalized force ``(n,)`` of a force per unit length ``load`` along the
        backbone (:data:`LineLoad`, evaluated at the quadrature points and integrated with
        the rod's Gauss rule: ``sum_p w_p J_v(s_p)^T f_p``) and its velocity stiffness
        ``(n, n)`` (:class:`LineLoadTerms`)."""
        return self._line_load_at(self._quadrature_frames(q, qd, True), load)(qd)

    def inertia_bias_and_line_load(self, q, qd, load: LineLoad) -> tuple[Array, Array, LineLoadTerms]:
        """``(M, C qd + G, line_load_terms(q, qd, load))`` from one pass over the
        quadrature points: what a linearly implicit step needs."""
        M, bias, load_at = self.inertia_bias_and_line_load_map(q, qd, load)
        return M, bias, load_at(qd)

    def inertia_bias_and_line_load_map(self, q, qd, load: LineLoad):
        """``(M, C qd + G, load_at)`` from one pass over the quadrature points, with
        ``load_at(v) -> LineLoadTerms`` the line load at any generalized velocity ``v`` on
        the frozen configuration ``q`` (no further kinematics): what an implicit solve of
        the load over a step iterates on."""
        f = self._quadrature_frames(q, qd, True)
        return self._inertia_from(f), self._bias_from(f), self._line_load_at(f, load)

    def inertia_and_bias(self, q, qd) -> tuple[Array, Array]:
        """``(M, C qd + G)`` from one pass over the quadrature points (the bias as one
        contraction)."""
        f = self._quadrature_frames(q, qd, True)
        return self._inertia_from(f), self._bias_from(f)
