"""The control-ready interface shared by every soft-robot model.

Every model describes ``M(q) qdd + C(q, qd) qd + G(q) + K(q) + D qd = A(q) u + tau_ext``
with state ``y = [q, qd]`` (``n`` generalized coordinates) and ``m`` actuators. Methods
document shapes, frames and units; all are pure and safe under ``jit``/``vmap``/``grad``.
"""

from __future__ import annotations

import abc
from typing import NamedTuple

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from ..actuation import GeneralizedActuation


class DynamicalTerms(NamedTuple):
    """The configuration- and velocity-dependent terms of the equation of motion at one
    state, from one kinematics pass where the model offers it."""

    inertia: Float[Array, "n n"]  # M(q)
    coriolis: Float[Array, " n"]  # C(q, qd) qd
    gravity: Float[Array, " n"]  # G(q) = dU_g/dq


class SoftRobot(eqx.Module):
    """Abstract control-ready soft-robot model (see module docstring)."""

    #: ``True`` when ``K(q)`` is affine in ``q`` with the constant Jacobian
    #: :meth:`stiffness_matrix` (the trapezoidal integrators rely on it).
    elastic_is_affine: eqx.AbstractClassVar[bool]

    @property
    @abc.abstractmethod
    def num_dofs(self) -> int:
        """Number ``n`` of generalized coordinates."""

    @property
    @abc.abstractmethod
    def num_actuators(self) -> int:
        """Number ``m`` of actuator inputs."""

    @abc.abstractmethod
    def forward_kinematics(self, q: Float[Array, " n"], s: Float[Array, ""]) -> Array:
        """Pose of the backbone point at arc length ``s`` [m] in the world frame."""

    @abc.abstractmethod
    def forward_kinematics_batched(self, q: Float[Array, " n"], s_ps: Float[Array, " p"]) -> Array:
        """Poses at several arc lengths, stacked along a leading axis."""

    @abc.abstractmethod
    def jacobian(self, q: Float[Array, " n"], s: Float[Array, ""], frame: str = "inertial") -> Array:
        """Twist Jacobian ``(d, n)`` at ``s`` (``frame``: ``"inertial"`` or ``"body"``)."""

    def pose_and_jacobian(self, q: Float[Array, " n"], s: Float[Array, ""], frame: str = "inertial") -> tuple[Array, Array]:
        """``(forward_kinematics(q, s), jacobian(q, s, frame))``; models override it with a
        single kinematics pass."""
        return self.forward_kinematics(q, s), self.jacobian(q, s, frame)

    @abc.abstractmethod
    def jacobian_and_time_derivative(
        self, q: Float[Array, " n"], qd: Float[Array, " n"], s: Float[Array, ""], frame: str = "inertial"
    ) -> tuple[Array, Array]:
        """``(J, dJ/dt)`` at ``s``, each ``(d, n)``."""

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

    @abc.abstractmethod
    def elastic_force(self, q: Float[Array, " n"]) -> Float[Array, " n"]:
        """``K(q) = dU_e/dq`` (left-hand-side convention)."""

    def stiffness_matrix(self) -> Float[Array, "n n"]:
        """Constant ``S = dK/dq`` ``(n, n)`` of an affine elastic force (:attr:`elastic_is_affine`)."""
        raise NotImplementedError(f"{type(self).__name__}: the elastic force is not affine; it has no constant stiffness matrix")

    @abc.abstractmethod
    def damping_matrix(self) -> Float[Array, "n n"]:
        """Constant damping matrix ``D``."""

    def damping_force(self, qd: Float[Array, " n"]) -> Float[Array, " n"]:
        """Viscous ``D qd`` ``(n,)``."""
        return self.damping_matrix() @ qd

    def dynamical_terms(self, q: Float[Array, " n"], qd: Float[Array, " n"]) -> DynamicalTerms:
        """``DynamicalTerms(M(q), C(q, qd) qd, G(q))``; models override it with one shared
        kinematics pass."""
        return DynamicalTerms(self.inertia_matrix(q), self.coriolis_force(q, qd), self.gravitational_force(q))

    def generalized_force(self, q: Float[Array, " n"], u: Float[Array, " m"] | None = None,
                          tau_ext: Float[Array, " n"] | None = None) -> Float[Array, " n"]:
        """``A(q) effort(u) + tau_ext`` ``(n,)`` (either may be ``None``): the applied
        generalized force on the right-hand side of the equation of motion."""
        tau = jnp.zeros_like(q)
        if u is not None:
            tau = tau + self.actuation_force(q, u)
        if tau_ext is not None:
            tau = tau + tau_ext
        return tau

    @abc.abstractmethod
    def actuation_matrix(self, q: Float[Array, " n"]) -> Float[Array, "n m"]:
        """``A(q) = d phi/dq^T`` mapping actuator efforts to generalized forces."""

    def actuation_force(self, q: Float[Array, " n"], u: Float[Array, " m"]) -> Float[Array, " n"]:
        """``A(q) effort(u)``, the generalized actuation force (tensions and pressures are
        clipped at zero unless signed); generalized actuation places ``u`` on its
        coordinates without forming ``A``."""
        if isinstance(self.actuation, GeneralizedActuation):
            return self.actuation.force(u, self.num_dofs)
        return self.actuation_matrix(q) @ self.actuation.effort(u)

    @abc.abstractmethod
    def kinetic_energy(self, q: Float[Array, " n"], qd: Float[Array, " n"]) -> Float[Array, ""]:
        """``T = qd^T M(q) qd / 2`` [J]."""

    @abc.abstractmethod
    def potential_energy(self, q: Float[Array, " n"]) -> Float[Array, ""]:
        """Gravitational plus elastic potential energy [J]."""

    @abc.abstractmethod
    def forward_dynamics(self, t: Float[Array, ""], y: Float[Array, " 2n"], actuation_args: tuple = ()) -> Float[Array, " 2n"]:
        """``dy/dt = [qd, qdd]`` with ``actuation_args = (u,)`` or ``(u, tau_ext)``."""

    @abc.abstractmethod
    def with_params(self, params) -> "SoftRobot":
        """Same structure, new parameters (same shapes: no recompilation)."""

    # Concrete conveniences shared by all models ---------------------------------------

    def potential_force(self, q: Float[Array, " n"]) -> Float[Array, " n"]:
        """``tau_U = G(q) + K(q)``."""
        return self.gravitational_force(q) + self.elastic_force(q)

    def static_equilibrium(
        self,
        u: Float[Array, " m"] | None = None,
        tau_ext: Float[Array, " n"] | None = None,
        **solver_options,
    ) -> Float[Array, " n"]:
        """Configuration ``q*`` ``(n,)`` with ``G(q*) + K(q*) = A(q*) u + tau_ext``, reached by
        load continuation from rest and Newton, differentiable in ``u``, ``tau_ext`` and the
        parameters (implicit function theorem). Options: see
        :func:`sorogym.models.static_equilibrium`."""
        from ._statics import static_equilibrium

        return static_equilibrium(self, u, tau_ext, **solver_options)

    def split_state(self, y: Float[Array, " 2n"]) -> tuple[Array, Array]:
        """``y -> (q, qd)``."""
        n = self.num_dofs
        return y[..., :n], y[..., n:]

    def total_energy(self, y: Float[Array, " 2n"]) -> Float[Array, ""]:
        """Kinetic plus potential energy [J] of the state ``y``."""
        q, qd = self.split_state(y)
        return self.kinetic_energy(q, qd) + self.potential_energy(q)

    def zero_state(self, dtype=None) -> Float[Array, " 2n"]:
        """The rest state ``y = 0`` (``q = 0`` is the reference configuration)."""
        return jnp.zeros((2 * self.num_dofs,), dtype or jnp.result_type(float))
