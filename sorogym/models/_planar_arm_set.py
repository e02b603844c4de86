"""What the planar multi-arm models share: ``K`` identical :class:`~sorogym.models.PlanarPCS`
arms, each at its own mount, evaluated under one ``vmap`` and summed into one set of
coordinates.

:class:`PlanarArmSet` (abstract) holds the arms stacked on a leading axis (array leaves of
the ``K`` mounted copies of one arm), the map from the set's coordinates to each arm's, and
every term that is a sum over arms: kinematics queries per arm, ``M``, ``C qd``, ``G``,
line loads, the diagonal elastic and damping forces and the actuation. A subclass says
where the arms are mounted and what the arms' common root adds:

* :class:`~sorogym.models.PlanarArms`: fixed-base arms at fixed mounts (two arms on a
  shared torso); the root adds nothing and ``q`` is the arms' strains alone.
* :class:`~sorogym.models.PlanarStar`: floating-base arms on the rim of a free hub; the
  hub's pose ``[theta, x, y]`` leads ``q``, every arm sees it as its floating base, and the
  hub adds its mass and weight.

Coordinates: ``q = [q_root (b,), q_arm_0 (n_a,), ..., q_arm_K-1]`` with ``b = 3`` for
floating-base arms and ``0`` for fixed ones; arm ``k`` sees ``[q_root, q_arm_k]``
(:attr:`PlanarArmSet.coordinate_index`).
"""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ..actuation import Actuation
from ._base import DynamicalTerms, SoftRobot
from ._pcs import PlanarPCS
from ._rod import LineLoad, LineLoadTerms


def stack_modules(modules):
    """One module whose array leaves are those of ``modules`` stacked on a leading axis."""
    return jax.tree.map(lambda *leaves: jnp.stack(leaves), *modules)


class PlanarArmSet(SoftRobot):
    """``K`` identical planar arms at their mounts, summed into one model (module docstring).

    Subclasses set :attr:`arm`, :attr:`num_arms` and :attr:`_arms` (:func:`stack_modules`
    of the mounted copies of ``arm``) and may add the root's own mass matrix
    (:meth:`_root_inertia_matrix`), weight (:meth:`_root_gravity`) and gravitational energy
    (:meth:`_root_gravitational_energy`)."""

    elastic_is_affine: ClassVar[bool] = True
    planar: ClassVar[bool] = True

    arm: eqx.AbstractVar[PlanarPCS]
    num_arms: eqx.AbstractVar[int]
    _arms: eqx.AbstractVar[PlanarPCS]  # the K mounted arms, array leaves stacked on a leading axis

    # -- structure ---------------------------------------------------------------------

    @property
    def params(self):
        """The arm's :class:`~sorogym.models.RodParams` (shared by every arm)."""
        return self.arm.params

    @property
    def actuation(self) -> Actuation:
        """Every arm's actuation (the arm's own, bound to one arm)."""
        return self.arm.actuation

    @property
    def root_dofs(self) -> int:
        """``b``: the coordinates every arm shares (3 for floating-base arms, else 0)."""
        return self.arm.num_base_dofs

    @property
    def arm_dofs(self) -> int:
        """``n_a``: strain coordinates per arm."""
        return self.arm.num_dofs - self.root_dofs

    @property
    def num_dofs(self) -> int:
        return self.root_dofs + self.num_arms * self.arm_dofs

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
    def arm_mass(self) -> Float[Array, ""]:
        """One arm's mass [kg]."""
        return jnp.sum(self.arm._quad_length * self.arm._quad_line_density)

    @property
    def coordinate_index(self) -> np.ndarray:
        """``(K, b + n_a)``: the set's coordinates that arm ``k`` sees as its own
        ``[q_root, q_arm]``."""
        na, nb = self.arm_dofs, self.root_dofs
        arms = nb + na * np.arange(self.num_arms)[:, None] + np.arange(na)[None, :]
        return np.concatenate([np.broadcast_to(np.arange(nb), (self.num_arms, nb)), arms], axis=1)

    def mounted_arm(self, k: int) -> PlanarPCS:
        """Arm ``k`` as a :class:`~sorogym.models.PlanarPCS` at its mount, to be evaluated
        at :meth:`arm_coordinates` ``(q)[k]``."""
        return jax.tree.map(lambda leaf: leaf[k], self._arms)

    def arm_coordinates(self, q: Float[Array, " n"]) -> Float[Array, "K nb_na"]:
        """``(K, b + n_a)``: each arm's local coordinates ``[q_root, q_arm_k]``."""
        return q[self.coordinate_index]

    def _scatter_vectors(self, per_arm: Array, root: Array | None = None) -> Array:
        """``(K, b + n_a)`` arm terms summed into ``(n,)`` (plus ``root`` on the root's ``b``)."""
        out = jnp.zeros((self.num_dofs,), per_arm.dtype).at[self.coordinate_index].add(per_arm)
        return out if root is None else out.at[: self.root_dofs].add(root)

    def _scatter_matrices(self, per_arm: Array) -> Array:
        """``(K, b + n_a, b + n_a)`` arm matrices summed into ``(n, n)``."""
        idx = self.coordinate_index
        return jnp.zeros((self.num_dofs,) * 2, per_arm.dtype).at[idx[:, :, None], idx[:, None, :]].add(per_arm)

    def _on_arms(self, fn, *args):
        """``fn(arm_k, *args_k)`` for every mounted arm under one ``vmap``."""
        return jax.vmap(fn)(self._arms, *args)

    # -- what the root adds (nothing by default) ------------------------------------------

    def _root_inertia_matrix(self, dtype) -> Array | None:
        """``(n, n)`` mass matrix of the root itself, or ``None``."""
        return None

    def _root_gravity(self) -> Array | None:
        """``(b,)`` gravitational force on the root's coordinates, or ``None``."""
        return None

    def _root_gravitational_energy(self, q) -> Array:
        """The root's own gravitational energy [J]."""
        return jnp.zeros((), q.dtype)

    # -- kinematics --------------------------------------------------------------------

    def forward_kinematics(self, q: Float[Array, " n"], s, arm: int = 0) -> Float[Array, "3 3"]:
        """Pose (3x3) of arm ``arm``'s backbone at arc length ``s`` [m] (0: its root at its mount)."""
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

    def backbone_points(self, q: Float[Array, " n"], qd: Float[Array, " n"], s_ps):
        """Every arm's backbone points at the arc lengths ``s_ps`` ``(p,)`` [m] from one
        kinematics pass: ``(positions (K, p, 2) [m], velocities (K, p, 2) [m/s], Jacobians
        (K, p, 2, n))``, world frame (the Jacobians of the points' velocities in the set's
        coordinates)."""

        def one(a, qa):
            poses, J = a.pose_and_jacobian_batched(qa, s_ps, frame="inertial")
            return poses[:, :2, 2], J[:, 1:, :]  # planar twist rows [omega, vx, vy]

        positions, J_local = self._on_arms(one, self.arm_coordinates(q))  # (K, p, 2), (K, p, 2, b + n_a)
        select = np.zeros((self.num_arms, self.coordinate_index.shape[1], self.num_dofs))
        for k, idx in enumerate(self.coordinate_index):
            select[k, np.arange(idx.size), idx] = 1.0
        J = jnp.einsum("kpcl,kln->kpcn", J_local, jnp.asarray(select, J_local.dtype))
        return positions, jnp.einsum("kpcn,n->kpc", J, qd), J

    # -- dynamics ----------------------------------------------------------------------

    def _frames(self, q, qd, with_velocity: bool):
        """Every arm's quadrature frames (leading axis ``K``)."""
        return self._on_arms(
            lambda a, qa, qda: a._quadrature_frames(qa, qda, with_velocity),
            self.arm_coordinates(q),
            self.arm_coordinates(qd),
        )

    def _assemble_inertia(self, per_arm: Array) -> Array:
        """``(K, b + n_a, b + n_a)`` arm mass matrices -> the set's ``M`` (root added)."""
        M = self._scatter_matrices(per_arm)
        root = self._root_inertia_matrix(per_arm.dtype)
        return M if root is None else M + root

    def _inertia_from(self, f) -> Array:
        return self._assemble_inertia(self._on_arms(lambda a, fa: a._inertia_from(fa), f))

    def _inertia_and_bias_from(self, f) -> tuple[Array, Array]:
        """``(M, C qd + G)`` with every arm's pair from one ``vmap``."""
        M, bias = self._on_arms(lambda a, fa: (a._inertia_from(fa), a._bias_from(fa)), f)
        return self._assemble_inertia(M), self._scatter_vectors(bias, self._root_gravity())

    def inertia_matrix(self, q: Float[Array, " n"]) -> Float[Array, "n n"]:
        """``M(q)`` ``(n, n)``: the arms' (and the root's)."""
        return self._inertia_from(self._frames(q, jnp.zeros_like(q), False))

    def coriolis_force(self, q, qd) -> Float[Array, " n"]:
        """``C(q, qd) qd`` ``(n,)`` (the arms'; a root with constant mass adds none)."""
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
        return self._scatter_vectors(self._on_arms(lambda a, fa: a._gravity_from(fa), f), self._root_gravity())

    def dynamical_terms(self, q, qd) -> DynamicalTerms:
        """``(M, C qd, G)`` from one pass over every arm's quadrature points."""
        f = self._frames(q, qd, True)
        M, cor, grav = self._on_arms(lambda a, fa: (a._inertia_from(fa), a._coriolis_from(fa), a._gravity_from(fa)), f)
        return DynamicalTerms(
            self._assemble_inertia(M), self._scatter_vectors(cor), self._scatter_vectors(grav, self._root_gravity())
        )

    def inertia_and_bias(self, q, qd) -> tuple[Array, Array]:
        """``(M, C qd + G)`` from one pass."""
        return self._inertia_and_bias_from(self._frames(q, qd, True))

    def inertia_bias_and_line_load_map(self, q, qd, load: LineLoad):
        """``(M, C qd + G, load_at)`` with ``load_at(v) -> LineLoadTerms`` the line load
        ``load`` along every arm at the velocity ``v`` on the frozen configuration ``q`` (the
        root itself carries none: a load on it belongs in the applied force)."""
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
        """``(n,)``: zero on the root, the arm's strain diagonal on every arm."""
        nb = self.root_dofs
        return jnp.concatenate([jnp.zeros((nb,), arm_diagonal.dtype), jnp.tile(arm_diagonal[nb:], self.num_arms)])

    def elastic_force(self, q) -> Float[Array, " n"]:
        """Hookean ``K(q) = S q`` (``S`` diagonal, zero on the root)."""
        return self._diagonal(self.arm._stiffness_diagonal) * q

    def damping_force(self, qd) -> Float[Array, " n"]:
        """Viscous ``D qd`` (``D`` diagonal, zero on the root)."""
        return self._diagonal(self.arm._damping_diagonal) * qd

    def stiffness_matrix(self) -> Float[Array, "n n"]:
        return jnp.diag(self._diagonal(self.arm._stiffness_diagonal))

    def damping_matrix(self) -> Float[Array, "n n"]:
        return jnp.diag(self._diagonal(self.arm._damping_diagonal))

    def gravitational_energy(self, q) -> Float[Array, ""]:
        """``U_g`` [J] of the in-plane gravity (the arms' plus the root's)."""
        arms = self._on_arms(lambda a, qa: a.gravitational_energy(qa), self.arm_coordinates(q))
        return jnp.sum(arms) + self._root_gravitational_energy(q)

    def elastic_energy(self, q) -> Float[Array, ""]:
        """``U_e = q^T S q / 2`` [J]."""
        return 0.5 * q @ self.elastic_force(q)

    def potential_force(self, q) -> Float[Array, " n"]:
        return self.gravitational_force(q) + self.elastic_force(q)

    # -- actuation ---------------------------------------------------------------------

    def arm_inputs(self, u: Array) -> Array:
        """``(K, m_a)``: the inputs ``u`` ``(K m_a,)`` split per arm."""
        return jnp.reshape(u, (self.num_arms, self.arm.num_actuators))

    def actuation_context(self, q: Float[Array, " n"]):
        """Every arm's actuation context, stacked on a leading axis ``K``."""
        return self._on_arms(lambda a, qa: a.actuation_context(qa), self.arm_coordinates(q))

    def actuation_force(self, q: Float[Array, " n"], u: Float[Array, " m"]) -> Float[Array, " n"]:
        """``sum_k P_k^T A_k(q) effort(u_k)`` ``(n,)`` (``u``: the arms' inputs in order)."""
        inputs = self.arm_inputs(u)
        per_arm = self._on_arms(lambda a, qa, ua: a.actuation_force(qa, ua), self.arm_coordinates(q), inputs)
        return self._scatter_vectors(per_arm)

    def actuation_matrix(self, q: Float[Array, " n"]) -> Float[Array, "n m"]:
        """``A(q)`` ``(n, K m_a)``: each arm's actuation matrix in its own columns."""
        per_arm = self._on_arms(lambda a, qa: a.actuation_matrix(qa), self.arm_coordinates(q))  # (K, b+na, m_a)
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


__all__ = ["PlanarArmSet", "stack_modules"]
