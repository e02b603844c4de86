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
* :class:`~sorogym.models.PlanarGripper`: floating-base fingers on a palm that slides on a
  vertical rail; the rail's one coordinate leads ``q``, the fingers see it as the ``y`` of
  their floating base (its angle and ``x`` held at zero), and the palm adds its mass,
  weight, the rail's spring and damper and its force input.

Coordinates: ``q = [q_root (b,), q_arm_0 (n_a,), ..., q_arm_K-1]``; arm ``k`` sees
``[r, q_arm_k]`` with ``r`` its own floating-base coordinates (3 for floating-base arms, 0
for fixed ones), each either one of the root's ``b`` coordinates or held at zero
(:attr:`PlanarArmSet.coordinate_index`: the index ``n`` stands for a coordinate held at
zero). Inputs: ``u = [u_arm_0 (m_a,), ..., u_arm_K-1, u_root (m_r,)]``, the root's own
inputs last (none but the gripper's rail force).
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
from ._params import check_field
from ._pcs import PlanarPCS
from ._rod import LineLoad, LineLoadTerms


def checked_mounts(mounts, dtype) -> Array:
    """``mounts`` as a ``(K, 3)`` array ``[theta, x, y]`` of ``dtype``; ``ValueError`` naming
    ``mounts`` for another shape, ``K < 1`` or non-finite entries."""
    mounts = jnp.asarray(mounts, dtype)
    if mounts.ndim != 2 or mounts.shape[0] < 1 or mounts.shape[1] != 3:
        raise ValueError(f"mounts: expected shape (K, 3) [theta, x, y] with K >= 1, got {mounts.shape}")
    check_field("mounts", mounts)
    return mounts


def stack_modules(modules):
    """One module whose array leaves are those of ``modules`` stacked on a leading axis."""
    return jax.tree.map(lambda *leaves: jnp.stack(leaves), *modules)


class PlanarArmSet(SoftRobot):
    """``K`` identical planar arms at their mounts, summed into one model (module docstring).

    Subclasses set :attr:`arm`, :attr:`num_arms` and :attr:`_arms` (:func:`stack_modules`
    of the mounted copies of ``arm``) and may give the root fewer coordinates than the
    arm's floating base (:attr:`root_dofs`, :meth:`_root_index`) and add the root's own mass
    matrix (:meth:`_root_inertia_matrix`), weight (:meth:`_root_gravity`), gravitational
    energy (:meth:`_root_gravitational_energy`), diagonal stiffness and damping
    (:meth:`_root_stiffness`, :meth:`_root_damping`) and inputs (:attr:`root_actuators`,
    :meth:`_root_actuation_matrix`)."""

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
    def arm_root_dofs(self) -> int:
        """The arm's own floating-base coordinates (3 for floating-base arms, else 0)."""
        return self.arm.num_base_dofs

    @property
    def root_dofs(self) -> int:
        """``b``: the root's coordinates, shared by every arm (by default the arm's
        floating base's)."""
        return self.arm_root_dofs

    def _root_index(self) -> np.ndarray:
        """``(arm_root_dofs,)``: for each of the arm's floating-base coordinates the root
        coordinate that moves it, or :attr:`num_dofs` where it is held at zero (by default
        the root's coordinates in order)."""
        return np.arange(self.arm_root_dofs)

    @property
    def arm_dofs(self) -> int:
        """``n_a``: strain coordinates per arm."""
        return self.arm.num_dofs - self.arm_root_dofs

    @property
    def num_dofs(self) -> int:
        return self.root_dofs + self.num_arms * self.arm_dofs

    @property
    def root_actuators(self) -> int:
        """``m_r``: the root's own inputs, last in ``u`` (none by default)."""
        return 0

    @property
    def arm_actuators(self) -> int:
        """``K m_a``: the arms' inputs, first in ``u``."""
        return self.num_arms * self.arm.num_actuators

    @property
    def num_actuators(self) -> int:
        return self.arm_actuators + self.root_actuators

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
        """``(K, r + n_a)``: the set's coordinates that arm ``k`` sees as its own
        ``[r, q_arm]`` (``r`` its floating base's; the index :attr:`num_dofs` marks one held
        at zero)."""
        na, nb = self.arm_dofs, self.root_dofs
        arms = nb + na * np.arange(self.num_arms)[:, None] + np.arange(na)[None, :]
        root = np.broadcast_to(self._root_index(), (self.num_arms, self.arm_root_dofs))
        return np.concatenate([root, arms], axis=1)

    def mounted_arm(self, k: int) -> PlanarPCS:
        """Arm ``k`` as a :class:`~sorogym.models.PlanarPCS` at its mount, to be evaluated
        at :meth:`arm_coordinates` ``(q)[k]``."""
        return jax.tree.map(lambda leaf: leaf[k], self._arms)

    def arm_coordinates(self, q: Float[Array, " n"]) -> Float[Array, "K r_na"]:
        """``(K, r + n_a)``: each arm's local coordinates ``[r, q_arm_k]`` (held ones zero)."""
        return jnp.concatenate([q, jnp.zeros((1,), q.dtype)])[self.coordinate_index]

    def _scatter_vectors(self, per_arm: Array, root: Array | None = None) -> Array:
        """``(K, r + n_a)`` arm terms summed into ``(n,)`` (plus ``root`` on the root's ``b``;
        what falls on held coordinates is dropped: the rail carries it)."""
        n = self.num_dofs
        out = jnp.zeros((n + 1,), per_arm.dtype).at[self.coordinate_index].add(per_arm)[:n]
        return out if root is None else out.at[: self.root_dofs].add(root)

    def _scatter_matrices(self, per_arm: Array) -> Array:
        """``(K, r + n_a, r + n_a)`` arm matrices summed into ``(n, n)``."""
        idx, n = self.coordinate_index, self.num_dofs
        out = jnp.zeros((n + 1,) * 2, per_arm.dtype).at[idx[:, :, None], idx[:, None, :]].add(per_arm)
        return out[:n, :n]

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

    def _root_stiffness(self) -> Array | None:
        """``(b,)`` diagonal stiffness of the root's coordinates towards zero, or ``None``."""
        return None

    def _root_damping(self) -> Array | None:
        """``(b,)`` diagonal damping of the root's coordinates, or ``None``."""
        return None

    def _root_actuation_matrix(self, dtype) -> Array:
        """``(b, m_r)``: the generalized force of the root's inputs (none by default)."""
        return jnp.zeros((self.root_dofs, self.root_actuators), dtype)

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
        n = self.num_dofs
        return jnp.zeros((J.shape[0], n + 1), J.dtype).at[:, self.coordinate_index[arm]].add(J)[:, :n]

    def backbone_positions(self, q: Float[Array, " n"], s_ps) -> Float[Array, "K p 2"]:
        """Every arm's backbone positions ``(K, p, 2)`` [m] at the arc lengths ``s_ps``."""
        return self._on_arms(lambda a, qa: a.backbone_positions(qa, s_ps), self.arm_coordinates(q))

    def arm_tips(self, q: Float[Array, " n"]) -> Float[Array, "K 2"]:
        """Every arm's tip position ``(K, 2)`` [m]."""
        return self.backbone_positions(q, self.arm.total_length[None])[:, 0]

    def tip_poses(self, q: Float[Array, " n"]) -> tuple[Array, Array]:
        """``(positions (K, 2) [m], headings (K, 2) unit)`` of every arm's tip (world frame)."""
        poses = self._on_arms(lambda a, qa: a.forward_kinematics(qa, a.total_length), self.arm_coordinates(q))
        return poses[:, :2, 2], poses[:, :2, 0]

    def backbone_points(self, q: Float[Array, " n"], qd: Float[Array, " n"], s_ps):
        """Every arm's backbone points at the arc lengths ``s_ps`` ``(p,)`` [m] from one
        kinematics pass: ``(positions (K, p, 2) [m], velocities (K, p, 2) [m/s], Jacobians
        (K, p, 2, n))``, world frame (the Jacobians of the points' velocities in the set's
        coordinates)."""

        def one(a, qa):
            poses, J = a.pose_and_jacobian_batched(qa, s_ps, frame="inertial")
            return poses[:, :2, 2], J[:, 1:, :]  # planar twist rows [omega, vx, vy]

        positions, J_local = self._on_arms(one, self.arm_coordinates(q))  # (K, p, 2), (K, p, 2, b + n_a)
        select = np.zeros((self.num_arms, self.coordinate_index.shape[1], self.num_dofs + 1))
        for k, idx in enumerate(self.coordinate_index):
            select[k, np.arange(idx.size), idx] = 1.0
        select = select[..., : self.num_dofs]  # held coordinates move nothing
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

    def _diagonal(self, arm_diagonal: Array, root: Array | None) -> Array:
        """``(n,)``: ``root`` (zero if ``None``) on the root, the arm's strain diagonal on every arm."""
        root = jnp.zeros((self.root_dofs,), arm_diagonal.dtype) if root is None else root.astype(arm_diagonal.dtype)
        return jnp.concatenate([root, jnp.tile(arm_diagonal[self.arm_root_dofs :], self.num_arms)])

    def _stiffness_diagonal(self) -> Array:
        return self._diagonal(self.arm._stiffness_diagonal, self._root_stiffness())

    def _damping_diagonal(self) -> Array:
        return self._diagonal(self.arm._damping_diagonal, self._root_damping())

    def elastic_force(self, q) -> Float[Array, " n"]:
        """Hookean ``K(q) = S q`` (``S`` diagonal: the arms' and the root's, zero by default)."""
        return self._stiffness_diagonal() * q

    def damping_force(self, qd) -> Float[Array, " n"]:
        """Viscous ``D qd`` (``D`` diagonal: the arms' and the root's, zero by default)."""
        return self._damping_diagonal() * qd

    def stiffness_matrix(self) -> Float[Array, "n n"]:
        return jnp.diag(self._stiffness_diagonal())

    def damping_matrix(self) -> Float[Array, "n n"]:
        return jnp.diag(self._damping_diagonal())

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
        """``(K, m_a)``: the arms' inputs, the first ``K m_a`` of ``u``, split per arm."""
        return jnp.reshape(u[: self.arm_actuators], (self.num_arms, self.arm.num_actuators))

    def _root_force(self, u: Array) -> Array | None:
        """``(b,)`` generalized force of the root's inputs ``u[K m_a:]``, or ``None``."""
        if not self.root_actuators:
            return None
        return self._root_actuation_matrix(u.dtype) @ u[self.arm_actuators :]

    def actuation_context(self, q: Float[Array, " n"]):
        """Every arm's actuation context, stacked on a leading axis ``K``."""
        return self._on_arms(lambda a, qa: a.actuation_context(qa), self.arm_coordinates(q))

    def actuation_force(self, q: Float[Array, " n"], u: Float[Array, " m"]) -> Float[Array, " n"]:
        """``sum_k P_k^T A_k(q) effort(u_k)`` ``(n,)`` plus the root's inputs' force (``u``: the
        arms' inputs in order, then the root's)."""
        inputs = self.arm_inputs(u)
        per_arm = self._on_arms(lambda a, qa, ua: a.actuation_force(qa, ua), self.arm_coordinates(q), inputs)
        return self._scatter_vectors(per_arm, self._root_force(u))

    def actuation_matrix(self, q: Float[Array, " n"]) -> Float[Array, "n m"]:
        """``A(q)`` ``(n, K m_a + m_r)``: each arm's actuation matrix in its own columns, the
        root's last."""
        per_arm = self._on_arms(lambda a, qa: a.actuation_matrix(qa), self.arm_coordinates(q))  # (K, r+na, m_a)
        idx, m_a, n = self.coordinate_index, self.arm.num_actuators, self.num_dofs
        cols = np.arange(self.num_arms)[:, None] * m_a + np.arange(m_a)[None, :]
        A = jnp.zeros((n + 1, self.num_actuators), per_arm.dtype)
        A = A.at[idx[:, :, None], cols[:, None, :]].add(per_arm)[:n]
        return A.at[: self.root_dofs, self.arm_actuators :].add(self._root_actuation_matrix(per_arm.dtype))

    def actuation_coordinates(self, q: Float[Array, " n"]) -> Float[Array, " m"]:
        """Every arm's actuator coordinates (tendon shortening [m]) in input order, then the
        root's (``B_r^T q_root``)."""
        arms = self._on_arms(lambda a, qa: a.actuation_coordinates(qa), self.arm_coordinates(q)).reshape(-1)
        root = self._root_actuation_matrix(q.dtype).T @ q[: self.root_dofs]
        return jnp.concatenate([arms, root])

    def tendon_lengths(self, q: Float[Array, " n"]) -> Float[Array, " m"]:
        """Every arm's tendon path lengths [m] in input order (the arms' inputs alone)."""
        return self._on_arms(lambda a, qa: a.tendon_lengths(qa), self.arm_coordinates(q)).reshape(-1)


__all__ = ["PlanarArmSet", "checked_mounts", "stack_modules"]
