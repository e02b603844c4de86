"""A planar star: a rigid hub free in the plane with identical soft arms around its rim.

:class:`PlanarStar` is the planar branched model of the multi-arm crawlers seen from above
(a brittle star, a planar octopus): a rigid disc free in the world x-y plane and ``K``
identical :class:`~sorogym.models.PlanarPCS` arms leaving its rim radially at the angles
``phi_k = 2 pi k / K``. Every arm is a floating-base planar rod whose floating frame is the
hub's frame and whose mount is its place on the rim, so each arm's kinematics, Jacobians,
dynamics, tendons and line loads are the serial kernel's own (its moving root carries the
hub's columns down the arm), evaluated for the ``K`` arms under one ``vmap`` and summed
into the star's coordinates.

Coordinates: ``q = [theta, x, y, q_arm_0, ..., q_arm_K-1]`` ``(3 + K n_a,)``: the hub's
angle [rad] and centre [m] in the world, then each arm's strain coordinates (``n_a`` per
arm); ``qd = dq/dt`` (world-frame hub rates, so ``nq = n``: every scheme steps it as a
vector space). Arm ``k`` sees the local coordinates ``[theta, x, y, q_arm_k]``.

Mass: the hub's mass at its centre with its polar moment of inertia, plus the arms'
(``M = M_hub + sum_k P_k^T M_k P_k``, ``P_k`` the selection of arm ``k``'s coordinates);
the hub's terms are constant in these coordinates, so it adds no Coriolis force. Gravity
(the arms' in-plane ``params.gravity``; zero on level ground) acts on the hub and the arms.
Elastic and damping forces are the arms' (diagonal, zero on the hub). Actuators: each arm's
own actuation (tendons or generalized forces), ``u = [u_arm_0, ..., u_arm_K-1]``.
"""

from __future__ import annotations

from typing import ClassVar, final

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ..actuation import Actuation
from ._base import DynamicalTerms, SoftRobot
from ._params import RodParams, check_field, check_shape
from ._pcs import NUM_PLANAR_BASE, PlanarPCS
from ._rod import LineLoad, LineLoadTerms


def _stack(modules):
    """One module whose array leaves are those of ``modules`` stacked on a leading axis."""
    return jax.tree.map(lambda *leaves: jnp.stack(leaves), *modules)


@final
class PlanarStar(SoftRobot):
    """A rigid hub free in the plane with ``num_arms`` identical soft arms (module docstring).

    Args:
        arm: the arm, a :class:`~sorogym.models.PlanarPCS` with ``floating_base=True`` (its
            actuation is every arm's; its own base pose is replaced by its mount on the rim).
        num_arms: ``K`` >= 1, spaced evenly from world +x at ``theta = 0``.
        hub_radius: [m], the arms' roots on the rim.
        hub_mass: [kg] at the hub's centre.
        hub_inertia: polar moment of inertia [kg m^2] about the hub's centre (a uniform disc:
            ``m r^2 / 2``).

    ``params`` are the arm's :class:`~sorogym.models.RodParams` (shared by every arm):
    :meth:`with_params` changes every arm at once, which is what domain randomisation of the
    material does.
    """

    elastic_is_affine: ClassVar[bool] = True

    arm: PlanarPCS
    num_arms: int = eqx.field(static=True)
    hub_radius: Float[Array, ""]
    hub_mass: Float[Array, ""]
    hub_inertia: Float[Array, ""]
    _arms: PlanarPCS  # the K mounted arms, array leaves stacked on a leading axis

    def __init__(self, arm: PlanarPCS, num_arms: int, hub_radius, hub_mass, hub_inertia):
        if not isinstance(arm, PlanarPCS) or not arm.floating_base:
            raise TypeError("arm: expected a PlanarPCS with floating_base=True")
        if int(num_arms) != num_arms or num_arms < 1:
            raise ValueError(f"num_arms: must be an integer >= 1, got {num_arms}")
        dtype = arm.params.length.dtype
        self.arm = arm
        self.num_arms = int(num_arms)
        for name, value in (("hub_radius", hub_radius), ("hub_mass", hub_mass), ("hub_inertia", hub_inertia)):
            value = jnp.asarray(value, dtype)
            check_shape(name, value, ())
            check_field(name, value, positive=True)
            setattr(self, name, value)
        angles = jnp.asarray(self.arm_angles, dtype)
        roots = self.hub_radius * jnp.stack([jnp.cos(angles), jnp.sin(angles)], -1)
        mounted = [
            arm.with_params(arm.params.replace(base_rotation=angles[k], base_position=roots[k]))
            for k in range(self.num_arms)
        ]
        self._arms = _stack(mounted)

    # -- structure ---------------------------------------------------------------------

    @property
    def params(self) -> RodParams:
        return self.arm.params

    @property
    def actuation(self) -> Actuation:
        """Every arm's actuation (the arm's own, bound to one arm)."""
        return self.arm.actuation

    @property
    def arm_angles(self) -> np.ndarray:
        """``(K,)`` [rad]: each arm's direction in the hub frame."""
        return 2.0 * np.pi * np.arange(self.num_arms) / self.num_arms

    @property
    def arm_dofs(self) -> int:
        """``n_a``: strain coordinates per arm."""
        return self.arm.num_dofs - NUM_PLANAR_BASE

    @property
    def num_dofs(self) -> int:
        return NUM_PLANAR_BASE + self.num_arms * self.arm_dofs

    @property
    def num_actuators(self) -> int:
        return self.num_arms * self.arm.num_actuators

    @property
    def arm_length(self) -> Float[Array, ""]:
        """Length of one arm at rest [m]."""
        return self.arm.total_length

    @property
    def tip_abscissa(self) -> Float[Array, ""]:
        return self.arm.total_length

    @property
    def total_mass(self) -> Float[Array, ""]:
        """Hub plus arms [kg]."""
        return self.hub_mass + self.num_arms * self.arm_mass

    @property
    def arm_mass(self) -> Float[Array, ""]:
        """One arm's mass [kg]."""
        return jnp.sum(self.arm._quad_length * self.arm._quad_line_density)

    @property
    def coordinate_index(self) -> np.ndarray:
        """``(K, 3 + n_a)``: the star's coordinates that arm ``k`` sees as its own
        ``[theta, x, y, q_arm]``."""
        na, nb = self.arm_dofs, NUM_PLANAR_BASE
        arms = nb + na * np.arange(self.num_arms)[:, None] + np.arange(na)[None, :]
        return np.concatenate([np.broadcast_to(np.arange(nb), (self.num_arms, nb)), arms], axis=1)

    def with_params(self, params: RodParams) -> PlanarStar:
        """The same star with new arm parameters (same shapes: no recompilation)."""
        return PlanarStar(self.arm.with_params(params), self.num_arms, self.hub_radius, self.hub_mass, self.hub_inertia)

    def mounted_arm(self, k: int) -> PlanarPCS:
        """Arm ``k`` as a floating-base :class:`~sorogym.models.PlanarPCS` with its mount on
        the rim, to be evaluated at :meth:`arm_coordinates` ``(q)[k]``."""
        return jax.tree.map(lambda leaf: leaf[k], self._arms)

    def arm_coordinates(self, q: Float[Array, " n"]) -> Float[Array, "K na3"]:
        """``(K, 3 + n_a)``: each arm's local coordinates ``[theta, x, y, q_arm_k]``."""
        return q[self.coordinate_index]

    def _scatter_vectors(self, per_arm: Array, hub: Array | None = None) -> Array:
        """``(K, 3 + n_a)`` arm terms summed into ``(n,)`` (plus ``hub`` on the hub's three)."""
        out = jnp.zeros((self.num_dofs,), per_arm.dtype).at[self.coordinate_index].add(per_arm)
        return out if hub is None else out.at[:NUM_PLANAR_BASE].add(hub)

    def _scatter_matrices(self, per_arm: Array) -> Array:
        """``(K, 3 + n_a, 3 + n_a)`` arm matrices summed into ``(n, n)``."""
        idx = self.coordinate_index
        return jnp.zeros((self.num_dofs,) * 2, per_arm.dtype).at[idx[:, :, None], idx[:, None, :]].add(per_arm)

    def _on_arms(self, fn, *args):
        """``fn(arm_k, *args_k)`` for every mounted arm under one ``vmap``."""
        return jax.vmap(fn)(self._arms, *args)

    # -- kinematics --------------------------------------------------------------------

    def hub_pose(self, q: Float[Array, " n"]) -> Float[Array, "3 3"]:
        """The hub's pose in the world, a 3x3 homogeneous matrix."""
        c, s = jnp.cos(q[0]), jnp.sin(q[0])
        return jnp.array([[c, -s, q[1]], [s, c, q[2]], [0.0, 0.0, 1.0]], q.dtype)

    def forward_kinematics(self, q: Float[Array, " n"], s, arm: int = 0) -> Float[Array, "3 3"]:
        """Pose (3x3) of arm ``arm``'s backbone at arc length ``s`` [m] (0: its root on the rim)."""
        return self.mounted_arm(arm).forward_kinematics(self.arm_coordinates(q)[arm], s)

    def forward_kinematics_batched(self, q: Float[Array, " n"], s_ps, arm: int = 0) -> Array:
        """Poses ``(p, 3, 3)`` of arm ``arm`` at the arc lengths ``s_ps`` ``(p,)``."""
        return self.mounted_arm(arm).forward_kinematics_batched(self.arm_coordinates(q)[arm], s_ps)

    def jacobian(self, q: Float[Array, " n"], s, frame: str = "inertial", arm: int = 0) -> Float[Array, "3 n"]:
        """Jacobian ``(3, n)`` of arm ``arm``'s backbone twist at arc length ``s`` [m]
        (``frame`` as :meth:`PlanarPCS.jacobian <sorogym.models.PlanarPCS.jacobian>`)."""
        J = self.mounted_arm(arm).jacobian(self.arm_coordinates(q)[arm], s, frame)
        return jnp.zeros((J.shape[0], self.num_dofs), J.dtype).at[:, self.coordinate_index[arm]].set(J)

    def backbone_positions(self, q: Float[Array, " n"], s_ps) -> Float[Array, "K p 2"]:
        """Every arm's backbone positions ``(K, p, 2)`` [m] at the arc lengths ``s_ps``."""
        return self._on_arms(lambda a, qa: a.backbone_positions(qa, s_ps), self.arm_coordinates(q))

    def arm_tips(self, q: Float[Array, " n"]) -> Float[Array, "K 2"]:
        """Every arm's tip position ``(K, 2)`` [m]."""
        return self.backbone_positions(q, self.arm.total_length[None])[:, 0]

    def centre_of_mass(self, q: Float[Array, " n"]) -> Float[Array, " 2"]:
        """The star's centre of mass ``(2,)`` [m] (world frame)."""
        arms = self._on_arms(lambda a, qa: a.centre_of_mass(qa), self.arm_coordinates(q))
        return (self.hub_mass * q[1:3] + self.arm_mass * jnp.sum(arms, 0)) / self.total_mass

    # -- dynamics ----------------------------------------------------------------------

    def _frames(self, q, qd, with_velocity: bool):
        """Every arm's quadrature frames (leading axis ``K``)."""
        return self._on_arms(
            lambda a, qa, qda: a._quadrature_frames(qa, qda, with_velocity),
            self.arm_coordinates(q),
            self.arm_coordinates(qd),
        )

    def _hub_inertia_matrix(self, dtype) -> Array:
        diagonal = jnp.stack([self.hub_inertia, self.hub_mass, self.hub_mass]).astype(dtype)
        return jnp.zeros((self.num_dofs,) * 2, dtype).at[:3, :3].set(jnp.diag(diagonal))

    def _hub_gravity(self) -> Array:
        """``G`` on the hub's coordinates: its in-plane weight ``-m g`` on ``(x, y)``."""
        g = self.params.gravity
        return jnp.concatenate([jnp.zeros((1,), g.dtype), -self.hub_mass * g])

    def _inertia_from(self, f) -> Array:
        return self._assemble_inertia(self._on_arms(lambda a, fa: a._inertia_from(fa), f))

    def _assemble_inertia(self, per_arm: Array) -> Array:
        """``(K, 3 + n_a, 3 + n_a)`` arm mass matrices -> the star's ``M`` (hub added)."""
        return self._hub_inertia_matrix(per_arm.dtype) + self._scatter_matrices(per_arm)

    def _inertia_and_bias_from(self, f) -> tuple[Array, Array]:
        """``(M, C qd + G)`` with every arm's pair from one ``vmap``."""
        M, bias = self._on_arms(lambda a, fa: (a._inertia_from(fa), a._bias_from(fa)), f)
        return self._assemble_inertia(M), self._scatter_vectors(bias, self._hub_gravity())

    def inertia_matrix(self, q: Float[Array, " n"]) -> Float[Array, "n n"]:
        """``M(q)`` ``(n, n)``: hub plus arms."""
        return self._inertia_from(self._frames(q, jnp.zeros_like(q), False))

    def coriolis_force(self, q, qd) -> Float[Array, " n"]:
        """``C(q, qd) qd`` ``(n,)`` (the arms'; the hub has none in these coordinates)."""
        f = self._frames(q, qd, True)
        return self._scatter_vectors(self._on_arms(lambda a, fa: a._coriolis_from(fa), f))

    def coriolis_matrix(self, q, qd) -> Float[Array, "n n"]:
        """``C(q, qd)`` ``(n, n)`` with ``dM/dt - 2 C`` skew-symmetric (the arms' summed)."""
        per_arm = self._on_arms(
            lambda a, qa, qda: a.coriolis_matrix(qa, qda), self.arm_coordinates(q), self.arm_coordinates(qd)
        )
        return self._scatter_matrices(per_arm)

    def gravitational_force(self, q) -> Float[Array, " n"]:
        """``G(q) = dU_g/dq`` ``(n,)`` of the in-plane gravity."""
        f = self._frames(q, jnp.zeros_like(q), False)
        return self._scatter_vectors(self._on_arms(lambda a, fa: a._gravity_from(fa), f), self._hub_gravity())

    def dynamical_terms(self, q, qd) -> DynamicalTerms:
        """``(M, C qd, G)`` from one pass over every arm's quadrature points."""
        f = self._frames(q, qd, True)
        M, cor, grav = self._on_arms(lambda a, fa: (a._inertia_from(fa), a._coriolis_from(fa), a._gravity_from(fa)), f)
        return DynamicalTerms(
            self._assemble_inertia(M), self._scatter_vectors(cor), self._scatter_vectors(grav, self._hub_gravity())
        )

    def inertia_and_bias(self, q, qd) -> tuple[Array, Array]:
        """``(M, C qd + G)`` from one pass."""
        return self._inertia_and_bias_from(self._frames(q, qd, True))

    def inertia_bias_and_line_load_map(self, q, qd, load: LineLoad):
        """``(M, C qd + G, load_at)`` with ``load_at(v) -> LineLoadTerms`` the line load
        ``load`` along every arm at the velocity ``v`` on the frozen configuration ``q`` (the
        hub itself carries none: a load on it belongs in the applied force)."""
        f = self._frames(q, qd, True)

        def load_at(v):
            terms = self._on_arms(lambda a, fa, va: a._line_load_at(fa, load)(va), f, self.arm_coordinates(v))
            return LineLoadTerms(self._scatter_vectors(terms.force), self._scatter_matrices(terms.damping))

        return (*self._inertia_and_bias_from(f), load_at)

    def line_load_terms(self, q, qd, load: LineLoad) -> LineLoadTerms:
        """The generalized force ``(n,)`` of the line load ``load`` along every arm and its
        velocity stiffness ``(n, n)`` at ``(q, qd)``."""
        return self.inertia_bias_and_line_load_map(q, qd, load)[2](qd)

    # -- elastic and damping ---------------------------------------------------------------

    def _diagonal(self, arm_diagonal: Array) -> Array:
        """``(n,)``: zero on the hub, the arm's diagonal on every arm."""
        nb = NUM_PLANAR_BASE
        return jnp.concatenate([jnp.zeros((nb,), arm_diagonal.dtype), jnp.tile(arm_diagonal[nb:], self.num_arms)])

    def elastic_force(self, q) -> Float[Array, " n"]:
        """Hookean ``K(q) = S q`` (``S`` diagonal, zero on the hub)."""
        return self._diagonal(self.arm._stiffness_diagonal) * q

    def damping_force(self, qd) -> Float[Array, " n"]:
        """Viscous ``D qd`` (``D`` diagonal, zero on the hub)."""
        return self._diagonal(self.arm._damping_diagonal) * qd

    def stiffness_matrix(self) -> Float[Array, "n n"]:
        return jnp.diag(self._diagonal(self.arm._stiffness_diagonal))

    def damping_matrix(self) -> Float[Array, "n n"]:
        return jnp.diag(self._diagonal(self.arm._damping_diagonal))

    def gravitational_energy(self, q) -> Float[Array, ""]:
        """``U_g`` [J] of the in-plane gravity (zero with the hub at the origin, arms straight)."""
        arms = self._on_arms(lambda a, qa: a.gravitational_energy(qa), self.arm_coordinates(q))
        return jnp.sum(arms) - self.hub_mass * (self.params.gravity @ q[1:3])

    def elastic_energy(self, q) -> Float[Array, ""]:
        """``U_e = q^T S q / 2`` [J]."""
        return 0.5 * q @ self.elastic_force(q)

    def potential_force(self, q) -> Float[Array, " n"]:
        return self.gravitational_force(q) + self.elastic_force(q)

    # -- momentum ----------------------------------------------------------------------

    def linear_momentum(self, q, qd) -> Float[Array, " 2"]:
        """Total linear momentum ``(2,)`` [kg m/s] (world frame): the momentum conjugate to
        the hub's position, rows 1-2 of ``M qd``."""
        return (self.inertia_matrix(q) @ qd)[1:3]

    def angular_momentum(self, q, qd) -> Float[Array, ""]:
        """Total angular momentum [kg m^2/s] about the world origin: the momentum conjugate
        to the hub's angle (about the hub's centre) plus the moment of the linear momentum
        carried by the hub's position."""
        p = self.inertia_matrix(q) @ qd
        return p[0] + q[1] * p[2] - q[2] * p[1]

    # -- actuation ---------------------------------------------------------------------

    def _arm_inputs(self, u: Array) -> Array:
        return jnp.reshape(u, (self.num_arms, self.arm.num_actuators))

    def actuation_context(self, q: Float[Array, " n"]):
        """Every arm's actuation context, stacked on a leading axis ``K``."""
        return self._on_arms(lambda a, qa: a.actuation_context(qa), self.arm_coordinates(q))

    def actuation_force(self, q: Float[Array, " n"], u: Float[Array, " m"]) -> Float[Array, " n"]:
        """``sum_k P_k^T A_k(q) effort(u_k)`` ``(n,)`` (``u``: the arms' inputs in order)."""
        inputs = self._arm_inputs(u)
        per_arm = self._on_arms(lambda a, qa, ua: a.actuation_force(qa, ua), self.arm_coordinates(q), inputs)
        return self._scatter_vectors(per_arm)

    def actuation_matrix(self, q: Float[Array, " n"]) -> Float[Array, "n m"]:
        """``A(q)`` ``(n, K m_a)``: each arm's actuation matrix in its own columns."""
        per_arm = self._on_arms(lambda a, qa: a.actuation_matrix(qa), self.arm_coordinates(q))  # (K, 3+na, m_a)
        idx, m_a = self.coordinate_index, self.arm.num_actuators
        cols = np.arange(self.num_arms)[:, None] * m_a + np.arange(m_a)[None, :]
        A = jnp.zeros((self.num_dofs, self.num_actuators), per_arm.dtype)
        return A.at[idx[:, :, None], cols[:, None, :]].add(per_arm)

    def actuation_coordinates(self, q: Float[Array, " n"]) -> Float[Array, " m"]:
        """Every arm's actuator coordinates (tendon shortening [m]) in input order."""
        return self._on_arms(lambda a, qa: a.actuation_coordinates(qa), self.arm_coordinates(q)).reshape(-1)

    def tendon_lengths(self, q: Float[Array, " n"]) -> Float[Array, " m"]:
        """Every arm's tendon path lengths [m] in input order."""
        return self._on_arms(lambda a, qa: a.tendon_lengths(qa), self.arm_coordinates(q)).reshape(-1)


__all__ = ["PlanarStar"]
