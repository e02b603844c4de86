"""The control-ready interface shared by every soft-robot model.

Every model describes ``M(q) qdd + C(q, qd) qd + G(q) + K(q) + D qd = A(q) u + tau_ext``
with ``m`` actuators. Methods document shapes, frames and units; all are pure and safe under
``jit``/``vmap``/``grad``.

The state contract. The configuration ``q`` has :attr:`SoftRobot.num_positions` entries
``nq`` and the velocity ``qd`` :attr:`SoftRobot.num_dofs` entries ``n`` (the degrees of
freedom); ``nq > n`` when the configuration lives on a manifold, e.g. a free joint's
position and unit quaternion (7 numbers) with its 6-D twist. The state is
``y = [q, qd, auxiliary]`` (:attr:`SoftRobot.state_size` entries); consumers never halve
``y`` but use :meth:`SoftRobot.split_state` / :meth:`SoftRobot.pack_state`, advance ``q`` by
:meth:`SoftRobot.retract` (``q + dq`` on vector spaces, the Lie-group exponential on
manifolds), map velocities to configuration rates by :meth:`SoftRobot.configuration_rate`
and bring a drifted state back to the manifold with :meth:`SoftRobot.project_state`.
Forces, ``M``, Jacobian columns and every velocity-space quantity have ``n`` entries.
Serial fixed-base models have ``nq = n`` and no auxiliary states, where all of these
reduce to the vector-space operations.

:class:`SoftRobot` declares everything a consumer (integrators, environments, controllers,
planners) may call. Concrete models are final (``typing.final``): they implement the
abstract members and never serve as base classes; shared implementation lives in abstract
intermediate classes. The actuator is an abstract field: any
:class:`~sorogym.actuation.Actuation` works on any model whose
:meth:`SoftRobot.actuation_context` it understands.
"""

import abc
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ..actuation import Actuation, ActuationContext
from ._linalg import constrained_spd_solve, spd_solve


class DynamicalTerms(NamedTuple):
    """The configuration- and velocity-dependent terms of the equation of motion at one
    state, from one kinematics pass where the model offers it."""

    inertia: Float[Array, "n n"]  # M(q)
    coriolis: Float[Array, " n"]  # C(q, qd) qd
    gravity: Float[Array, " n"]  # G(q) = dU_g/dq


class SoftRobot(eqx.Module):
    """Abstract control-ready soft-robot model (see module docstring).

    Attributes:
        params: the model's numerical parameters (a pytree with ``replace(**fields)``).
        actuation: the installed :class:`~sorogym.actuation.Actuation`, bound to this model.
    """

    params: eqx.AbstractVar[Any]
    actuation: eqx.AbstractVar[Actuation]
    #: ``True`` when ``K(q)`` is affine in ``q`` with the constant Jacobian
    #: :meth:`stiffness_matrix` (the trapezoidal integrators rely on it).
    elastic_is_affine: eqx.AbstractClassVar[bool]

    # -- structure ------------------------------------------------------------------------

    @property
    @abc.abstractmethod
    def num_dofs(self) -> int:
        """Number ``n`` of generalized coordinates."""

    @property
    def num_positions(self) -> int:
        """Number ``nq`` of configuration entries (``= num_dofs`` on vector spaces)."""
        return self.num_dofs

    @property
    def num_auxiliary_states(self) -> int:
        """Number of auxiliary states after ``[q, qd]`` in ``y`` (actuator dynamics); 0 here."""
        return 0

    @property
    def state_size(self) -> int:
        """Length of the state ``y = [q, qd, auxiliary]``."""
        return self.num_positions + self.num_dofs + self.num_auxiliary_states

    @property
    def num_actuators(self) -> int:
        """Number ``m`` of actuator inputs."""
        return self.actuation.num_actuators

    @property
    @abc.abstractmethod
    def tip_abscissa(self) -> Any:
        """The ``s`` of the robot's distal end, for :meth:`forward_kinematics`: the backbone
        length [m] for rods, the last link's frame index for chains."""

    @abc.abstractmethod
    def with_params(self, params) -> "SoftRobot":
        """Same structure and actuation, new parameters (same shapes: no recompilation)."""

    def update_params(self, **fields) -> "SoftRobot":
        """``with_params(params.replace(**fields))``."""
        return self.with_params(self.params.replace(**fields))

    # -- kinematics -----------------------------------------------------------------------

    @abc.abstractmethod
    def forward_kinematics(self, q: Float[Array, " n"], s: Float[Array, ""]) -> Array:
        """Pose of the backbone point (or frame) ``s`` in the world frame."""

    @abc.abstractmethod
    def forward_kinematics_batched(self, q: Float[Array, " n"], s_ps: Float[Array, " p"]) -> Array:
        """Poses at several ``s``, stacked along a leading axis."""

    @abc.abstractmethod
    def jacobian(self, q: Float[Array, " n"], s: Float[Array, ""], frame: str = "inertial") -> Array:
        """Twist Jacobian ``(d, n)`` at ``s`` (``frame``: ``"inertial"`` or ``"body"``)."""

    def pose_and_jacobian(
        self, q: Float[Array, " n"], s: Float[Array, ""], frame: str = "inertial"
    ) -> tuple[Array, Array]:
        """``(forward_kinematics(q, s), jacobian(q, s, frame))``; models override it with a
        single kinematics pass."""
        return self.forward_kinematics(q, s), self.jacobian(q, s, frame)

    def jacobian_and_time_derivative(
        self, q: Float[Array, " n"], qd: Float[Array, " n"], s: Float[Array, ""], frame: str = "inertial"
    ) -> tuple[Array, Array]:
        """``(J, dJ/dt)`` at ``s``, each ``(d, n)``, with ``dJ/dt = (dJ/dq) dq/dt`` by
        forward-mode differentiation along :meth:`configuration_rate`."""
        return jax.jvp(lambda q_: self.jacobian(q_, s, frame), (q,), (self.configuration_rate(q, qd),))

    # -- dynamics -------------------------------------------------------------------------

    @abc.abstractmethod
    def inertia_matrix(self, q: Float[Array, " n"]) -> Float[Array, "n n"]:
        """Generalized inertia ``M(q)`` (symmetric positive definite) [kg, kg m, kg m^2]."""

    @abc.abstractmethod
    def coriolis_matrix(self, q: Float[Array, " n"], qd: Float[Array, " n"]) -> Float[Array, "n n"]:
        """A Coriolis matrix with ``dM/dt - 2 C`` skew-symmetric."""

    @abc.abstractmethod
    def coriolis_force(self, q: Float[Array, " n"], qd: Float[Array, " n"]) -> Float[Array, " n"]:
        """``C(q, qd) qd`` evaluated without forming ``C``."""

    @abc.abstractmethod
    def gravitational_force(self, q: Float[Array, " n"]) -> Float[Array, " n"]:
        """``G(q) = dU_g/dq`` (left-hand-side convention)."""

    def dynamical_terms(self, q: Float[Array, " n"], qd: Float[Array, " n"]) -> DynamicalTerms:
        """``DynamicalTerms(M(q), C(q, qd) qd, G(q))``; models override it with one shared
        kinematics pass."""
        return DynamicalTerms(self.inertia_matrix(q), self.coriolis_force(q, qd), self.gravitational_force(q))

    def inertia_and_bias(self, q: Float[Array, " n"], qd: Float[Array, " n"]) -> tuple[Array, Array]:
        """``(M(q), C(q, qd) qd + G(q))``, the terms :meth:`forward_dynamics` solves with;
        models override it where the bias has a cheaper fused form."""
        M, cor, grav = self.dynamical_terms(q, qd)
        return M, cor + grav

    @abc.abstractmethod
    def elastic_force(self, q: Float[Array, " n"]) -> Float[Array, " n"]:
        """``K(q) = dU_e/dq`` (left-hand-side convention)."""

    def stiffness_matrix(self) -> Float[Array, "n n"]:
        """``S = dK/dq`` ``(n, n)`` at the reference configuration ``q = 0``: the constant
        stiffness of an affine elastic force (:attr:`elastic_is_affine`), the tangent
        stiffness at rest otherwise. By forward-mode AD of :meth:`elastic_force`; models
        with a closed form override it."""
        return jax.jacfwd(self.elastic_force)(jnp.zeros(self.num_dofs, jnp.result_type(float)))

    def tangent_stiffness(self, q: Float[Array, " nq"]) -> Float[Array, "n n"]:
        """``dK/dq`` ``(n, n)`` at ``q``, along the retraction (``d/de K(retract(q, e))`` at
        ``e = 0``): :meth:`stiffness_matrix` where the elastic force is affine, forward-mode
        AD of :meth:`elastic_force` otherwise. The iteration matrix of the implicit
        fixed-step schemes."""
        if self.elastic_is_affine:
            return self.stiffness_matrix()
        return jax.jacfwd(lambda e: self.elastic_force(self.retract(q, e)))(jnp.zeros((self.num_dofs,), q.dtype))

    @abc.abstractmethod
    def damping_matrix(self) -> Float[Array, "n n"]:
        """Constant damping matrix ``D``."""

    def damping_force(self, qd: Float[Array, " n"]) -> Float[Array, " n"]:
        """Viscous ``D qd`` ``(n,)``."""
        return self.damping_matrix() @ qd

    def potential_force(self, q: Float[Array, " n"]) -> Float[Array, " n"]:
        """``tau_U = G(q) + K(q)``."""
        return self.gravitational_force(q) + self.elastic_force(q)

    def forward_dynamics(
        self, t: Float[Array, ""], y: Float[Array, " s"], actuation_args: tuple = ()
    ) -> Float[Array, " s"]:
        """``dy/dt = [dq/dt, M^-1 (A u + tau_ext - C qd - G - K - D qd)]`` with
        ``actuation_args`` ``()``, ``(u,)`` or ``(u, tau_ext)`` (``u``: ``(m,)``,
        ``tau_ext``: ``(n,)``); ``dq/dt`` is :meth:`configuration_rate` (``qd`` on vector
        spaces). Fused: ``M`` and ``C qd + G`` from one kinematics pass
        (:meth:`inertia_and_bias`), a Cholesky solve, never an explicit inverse. Models on
        manifolds evaluate at :meth:`project_state` of ``y`` (every stage of a diffrax
        solver sees unit quaternions). Under constraints (:attr:`num_constraints` > 0,
        closed chains) the acceleration solves ``M qdd = rhs + G^T lam``, ``G qdd = gamma``
        (:meth:`constraint_acceleration`, drift stabilised) through the Schur complement."""
        q, qd = self.split_state(self.project_state(y))
        M, bias = self.inertia_and_bias(q, qd)
        rhs = self.generalized_force(q, *actuation_args) - bias - self.elastic_force(q) - self.damping_force(qd)
        if not self.num_constraints:
            return jnp.concatenate([self.configuration_rate(q, qd), spd_solve(M, rhs)])
        G, target = self.constraint_acceleration(q, qd)
        qdd, _ = constrained_spd_solve(M, rhs, G, target)
        return jnp.concatenate([self.configuration_rate(q, qd), qdd])

    # -- kinematic constraints (closed chains) ------------------------------------------------

    @property
    def num_constraints(self) -> int:
        """Number ``c`` of holonomic constraint equations ``phi(q) = 0`` (loop closures; 0
        for open chains and trees)."""
        return 0

    @property
    def constraint_frequency(self) -> float:
        """Stabilisation rate ``omega`` [1/s] of the constraint drift (Baumgarte): the
        continuous dynamics enforce ``phi'' + 2 omega phi' + omega^2 phi = 0``, the
        fixed-step schemes ``G qd+ = -omega phi / (1 + h omega)``."""
        return 0.0

    def constraint_terms(self, q: Float[Array, " nq"]) -> tuple[Array, Array]:
        """``(phi (c,), G (c, n))``: the constraint residuals and their Jacobian on the
        velocity coordinates (``dphi/dt = G qd``)."""
        return jnp.zeros((0,), q.dtype), jnp.zeros((0, self.num_dofs), q.dtype)

    def constraint_terms_and_rate(self, q: Float[Array, " nq"], qd: Float[Array, " n"]) -> tuple[Array, Array, Array]:
        """``(phi, G, dG/dt qd)`` with the rate along ``dq/dt = configuration_rate(q, qd)``."""
        (phi, G), (_, dG) = jax.jvp(self.constraint_terms, (q,), (self.configuration_rate(q, qd),))
        return phi, G, dG @ qd

    def constraint_acceleration(self, q: Float[Array, " nq"], qd: Float[Array, " n"]) -> tuple[Array, Array]:
        """``(G (c, n), gamma (c,))`` of the stabilised acceleration-level constraint
        ``G qdd = gamma = -dG/dt qd - 2 omega G qd - omega^2 phi``
        (:attr:`constraint_frequency` ``omega``)."""
        phi, G, bias = self.constraint_terms_and_rate(q, qd)
        w = self.constraint_frequency
        return G, -bias - (2.0 * w) * (G @ qd) - (w * w) * phi

    def constraint_forces(self, y: Float[Array, " s"], actuation_args: tuple = ()) -> Float[Array, " c"]:
        """Multipliers ``lam`` ``(c,)`` of the constrained dynamics at ``y``: the generalized
        constraint force is ``G^T lam`` (closure wrenches in the closures' frames)."""
        q, qd = self.split_state(self.project_state(y))
        M, bias = self.inertia_and_bias(q, qd)
        rhs = self.generalized_force(q, *actuation_args) - bias - self.elastic_force(q) - self.damping_force(qd)
        G, target = self.constraint_acceleration(q, qd)
        return constrained_spd_solve(M, rhs, G, target)[1]

    # -- actuation ------------------------------------------------------------------------

    @abc.abstractmethod
    def actuation_context(self, q: Float[Array, " n"]) -> ActuationContext:
        """The kinematics the actuator reads at ``q`` (:mod:`sorogym.actuation`)."""

    def actuation_matrix(self, q: Float[Array, " n"]) -> Float[Array, "n m"]:
        """``A(q) = d phi/dq^T`` ``(n, m)`` mapping actuator efforts to generalized forces."""
        return self.actuation.matrix(self.actuation_context(q))

    def actuation_force(self, q: Float[Array, " n"], u: Float[Array, " m"]) -> Float[Array, " n"]:
        """``A(q) effort(u)`` ``(n,)``, the generalized actuation force (tensions and
        pressures are clipped at zero unless signed), in the actuator's cheapest form."""
        return self.actuation.force(self.actuation_context(q), u)

    def actuation_coordinates(self, q: Float[Array, " n"]) -> Float[Array, " m"]:
        """Actuator coordinates ``phi(q)`` ``(m,)``, zero at ``q = 0``, with
        ``d phi/dq^T = A(q)``: ``A^T q`` for generalized forces, the shortening
        ``l(0) - l(q)`` [m] for tendons, the displaced volume [m^3] for McKibben muscles."""
        rest = self.actuation.coordinates(self.actuation_context(jnp.zeros_like(q)))
        return self.actuation.coordinates(self.actuation_context(q)) - rest

    def tendon_lengths(self, q: Float[Array, " n"]) -> Float[Array, " m"]:
        """Path lengths ``l(q)`` ``(m,)`` [m] of tendon-like actuators (``TypeError`` for others)."""
        return self.actuation.lengths(self.actuation_context(q))

    def generalized_force(
        self, q: Float[Array, " n"], u: Float[Array, " m"] | None = None, tau_ext: Float[Array, " n"] | None = None
    ) -> Float[Array, " n"]:
        """``A(q) effort(u) + tau_ext`` ``(n,)`` (either may be ``None``): the applied
        generalized force on the right-hand side of the equation of motion."""
        tau = jnp.zeros((self.num_dofs,), q.dtype)
        if u is not None:
            tau = tau + self.actuation_force(q, u)
        if tau_ext is not None:
            tau = tau + tau_ext
        return tau

    # -- energies -------------------------------------------------------------------------

    def kinetic_energy(self, q: Float[Array, " n"], qd: Float[Array, " n"]) -> Float[Array, ""]:
        """``T = qd^T M(q) qd / 2`` [J]."""
        return 0.5 * qd @ (self.inertia_matrix(q) @ qd)

    @abc.abstractmethod
    def gravitational_energy(self, q: Float[Array, " n"]) -> Float[Array, ""]:
        """``U_g`` [J] with ``dU_g/dq = G(q)``."""

    @abc.abstractmethod
    def elastic_energy(self, q: Float[Array, " n"]) -> Float[Array, ""]:
        """``U_e`` [J] with ``dU_e/dq = K(q)``."""

    def potential_energy(self, q: Float[Array, " n"]) -> Float[Array, ""]:
        """Gravitational plus elastic potential energy [J]."""
        return self.gravitational_energy(q) + self.elastic_energy(q)

    def total_energy(self, y: Float[Array, " s"]) -> Float[Array, ""]:
        """Kinetic plus potential energy [J] of the state ``y``."""
        q, qd = self.split_state(y)
        return self.kinetic_energy(q, qd) + self.potential_energy(q)

    # -- state and statics ----------------------------------------------------------------

    def split_state(self, y: Float[Array, " s"]) -> tuple[Array, Array]:
        """``y = [q, qd, auxiliary] -> (q (nq,), qd (n,))`` (leading axes kept)."""
        nq, n = self.num_positions, self.num_dofs
        return y[..., :nq], y[..., nq : nq + n]

    def pack_state(self, q: Float[Array, " nq"], qd: Float[Array, " n"], auxiliary: Array | None = None) -> Array:
        """``(q, qd[, auxiliary]) -> y`` (:meth:`split_state`'s inverse; auxiliary states
        default to zeros)."""
        parts = [q, qd]
        if self.num_auxiliary_states:
            shape = (*q.shape[:-1], self.num_auxiliary_states)
            parts.append(jnp.zeros(shape, q.dtype) if auxiliary is None else auxiliary)
        return jnp.concatenate(parts, axis=-1)

    def neutral_configuration(self, dtype=None) -> Float[Array, " nq"]:
        """The reference configuration ``q0`` ``(nq,)``: zeros on vector spaces (the rest
        shape), identity rotations on manifolds."""
        return jnp.zeros((self.num_positions,), dtype or jnp.result_type(float))

    def retract(self, q: Float[Array, " nq"], dq: Float[Array, " n"]) -> Float[Array, " nq"]:
        """Move ``q`` along the velocity-space increment ``dq`` ``(n,)`` (e.g. ``h qd``):
        ``q + dq`` on vector spaces, the Lie-group exponential on manifolds. Every
        fixed-step scheme advances configurations through it."""
        return q + dq

    def configuration_rate(self, q: Float[Array, " nq"], qd: Float[Array, " n"]) -> Float[Array, " nq"]:
        """``dq/dt`` ``(nq,)`` of the velocity ``qd``: ``qd`` itself on vector spaces."""
        return qd

    def project_state(self, y: Float[Array, " s"]) -> Float[Array, " s"]:
        """The state brought back onto the configuration manifold (unit quaternions);
        the identity on vector spaces. Rollouts apply it at every dynamics evaluation
        and to saved states."""
        return y

    def zero_state(self, dtype=None) -> Float[Array, " s"]:
        """The rest state: :meth:`neutral_configuration`, zero velocity and auxiliaries."""
        dtype = dtype or jnp.result_type(float)
        return jnp.zeros((self.state_size,), dtype).at[: self.num_positions].set(self.neutral_configuration(dtype))

    def static_equilibrium(
        self,
        u: Float[Array, " m"] | None = None,
        tau_ext: Float[Array, " n"] | None = None,
        **solver_options,
    ) -> Float[Array, " n"]:
        """Configuration ``q*`` ``(n,)`` with ``G(q*) + K(q*) = A(q*) u + tau_ext``, reached by
        load continuation from rest and Newton, differentiable in ``u``, ``tau_ext`` and the
        parameters (implicit function theorem). Options (solver settings, dead loads on a
        rod as ``point_wrenches``): see :func:`sorogym.models.static_equilibrium`."""
        from ._statics import static_equilibrium

        return static_equilibrium(self, u, tau_ext, **solver_options)
