"""Articulated soft robots: an open serial chain of rigid links joined by compliant joints.

Coordinates ``q`` ``(n,)`` are the joint variables (rad for revolute, m for prismatic
joints). Link ``i`` hangs from link ``i - 1`` (link ``-1`` is the base) through the fixed
transform ``T_i`` (parent frame -> joint frame at ``q_i = 0``) and the joint motion
``exp(S_i q_i)`` about the screw axis ``S_i = [w; v]`` (angular first, joint frame)::

    g_i(q) = g_base T_0 exp(S_0 q_0) T_1 exp(S_1 q_1) ... T_i exp(S_i q_i)

A revolute joint about the unit axis ``w`` through the point ``p`` has ``S = [w; p x w]``,
a prismatic joint along ``v`` has ``S = [0; v]``.

Each link has a mass, a centre of mass ``c`` and a rotational inertia ``I_c`` about it (both
in the link frame); its spatial inertia at the link-frame origin, for body twists
``[w; v]``, is ``[[I_c + m [c]^T [c], m [c]], [-m [c], m 1]]``. Each joint has a linear spring
``k_i (q_i - rest_i)`` and a viscous damper ``d_i qd_i``. Dynamics (the same equation as every
model)::

    M(q) qdd + C(q, qd) qd + G(q) + K(q) + D qd = A u + tau_ext

``M = sum_i J_i^T M_i J_i`` from the body Jacobians of the links; ``C qd + G`` by a
recursive Newton-Euler pass (body twists ``V_i``, accelerations at ``qdd = 0``, base
accelerating at ``-g``): ``sum_i J_i^T (M_i A_i - ad_(V_i)^T M_i V_i)``; ``G = dU_g/dq``
with ``U_g = -sum_i m_i g . p_com,i``; the matrix ``C`` from the Christoffel symbols of
``M``.

Backbone points: the argument ``s`` of the kinematics is a *frame index*: ``s = 0`` is the
base frame and ``s = i + 1`` the frame of link ``i`` (non-integer values are rounded).

Actuation: joint torques/forces (:class:`~sorogym.actuation.GeneralizedActuation`, the
default), tendons through via-points on the links
(:class:`~sorogym.actuation.ArticulatedTendons`), tendons over joint pulleys
(:class:`~sorogym.actuation.PulleyTendons`) or McKibben muscles along either kind of path
(:class:`~sorogym.actuation.McKibbenMuscles`, pressure inputs). The geometry of the
tendons and muscles comes from the same link poses and Jacobians as the dynamics.
"""

from __future__ import annotations

from typing import ClassVar, final

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float

from ..actuation import Actuation, ChainContext, GeneralizedActuation
from ..lie import se3, so3
from ._base import DynamicalTerms, SoftRobot
from ._linalg import small_matmul, spd_solve


def _sum_transposed(J: Array, X: Array) -> Array:
    """``sum_i J_i^T X_i`` for per-link ``J`` ``(L, 6, n)`` and ``X`` ``(L, 6, ...)``."""
    return small_matmul(J.reshape(-1, J.shape[-1]).T, X.reshape(-1, *X.shape[2:]))


def _spatial_inertia(mass: Array, com: Array, inertia: Array) -> Array:
    """``(6, 6)`` inertia at the link-frame origin for body twists ``[w; v]``."""
    C = so3.hat(com)
    eye = jnp.eye(3, dtype=mass.dtype)
    top = jnp.concatenate([inertia + mass * C.T @ C, mass * C], axis=1)
    bottom = jnp.concatenate([-mass * C, mass * eye], axis=1)
    return jnp.concatenate([top, bottom], axis=0)


class ChainParams(eqx.Module):
    """Numerical parameters of an articulated chain with ``n`` joints (a pytree: same shapes
    -> no recompilation). Build with :meth:`create`, which validates.

    Attributes:
        joint_axes: ``(n, 6)`` screw axes ``[w; v]`` in the joint frames.
        parent_to_joint: ``(n, 4, 4)`` fixed transforms, parent link frame -> joint frame.
        mass: ``(n,)`` link masses [kg].
        com: ``(n, 3)`` centres of mass in the link frames [m].
        inertia: ``(n, 3, 3)`` rotational inertias about the centres of mass, link frames [kg m^2].
        stiffness: ``(n,)`` joint stiffness [N m/rad or N/m].
        damping: ``(n,)`` joint damping [N m s/rad or N s/m].
        rest: ``(n,)`` spring rest positions [rad or m].
        gravity: ``(3,)`` world gravitational acceleration [m/s^2].
        base_pose: ``(4, 4)`` base frame in the world.
    """

    joint_axes: Array
    parent_to_joint: Array
    mass: Array
    com: Array
    inertia: Array
    stiffness: Array
    damping: Array
    rest: Array
    gravity: Array
    base_pose: Array

    @classmethod
    def create(
        cls,
        joint_axes: ArrayLike,
        parent_to_joint: ArrayLike,
        mass: ArrayLike,
        com: ArrayLike,
        inertia: ArrayLike,
        stiffness: ArrayLike = 0.0,
        damping: ArrayLike = 0.0,
        rest: ArrayLike = 0.0,
        gravity: ArrayLike = (0.0, 0.0, -9.81),
        base_pose: ArrayLike | None = None,
        dtype=None,
    ) -> ChainParams:
        """Validated parameters; scalars broadcast over the joints. Raises ``ValueError``
        naming the field for wrong shapes, non-finite values, non-positive masses, inertias
        that are not symmetric positive definite, negative stiffness or damping, and screw
        axes that are neither revolute (unit ``w``) nor prismatic (``w = 0``, unit ``v``)."""
        dtype = dtype or jnp.result_type(float)
        axes = np.asarray(joint_axes, dtype=float)
        if axes.ndim != 2 or axes.shape[1] != 6 or axes.shape[0] < 1:
            raise ValueError(f"joint_axes: expected shape (n, 6) with n >= 1, got {axes.shape}")
        n = axes.shape[0]

        def field(name, value, shape):
            arr = np.asarray(value, dtype=float)
            if arr.ndim == 0 and len(shape) == 1:
                arr = np.full(shape, float(arr))
            if arr.shape != shape:
                raise ValueError(f"{name}: expected shape {shape}, got {arr.shape}")
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"{name}: values must be finite")
            return arr

        axes = field("joint_axes", axes, (n, 6))
        w_norm, v_norm = np.linalg.norm(axes[:, :3], axis=1), np.linalg.norm(axes[:, 3:], axis=1)
        revolute = np.abs(w_norm - 1.0) < 1e-9
        prismatic = (w_norm < 1e-12) & (np.abs(v_norm - 1.0) < 1e-9)
        if not np.all(revolute | prismatic):
            raise ValueError(
                "joint_axes: each must be revolute (unit angular part) or prismatic (zero angular, unit linear part)"
            )
        T = field("parent_to_joint", parent_to_joint, (n, 4, 4))
        R = T[:, :3, :3]
        if not (
            np.allclose(R @ np.swapaxes(R, 1, 2), np.eye(3), atol=1e-9)
            and np.allclose(np.linalg.det(R), 1.0, atol=1e-9)
            and np.allclose(T[:, 3], [0.0, 0.0, 0.0, 1.0])
        ):
            raise ValueError(
                "parent_to_joint: each must be a rigid transform (rotation block in SO(3), last row [0, 0, 0, 1])"
            )
        mass = field("mass", mass, (n,))
        if np.any(mass <= 0):
            raise ValueError("mass: must be positive")
        inertia = field("inertia", inertia, (n, 3, 3))
        if not np.allclose(inertia, np.swapaxes(inertia, 1, 2), atol=1e-12) or np.any(np.linalg.eigvalsh(inertia) <= 0):
            raise ValueError("inertia: each must be symmetric positive definite")
        stiffness, damping = field("stiffness", stiffness, (n,)), field("damping", damping, (n,))
        for name, value in (("stiffness", stiffness), ("damping", damping)):
            if np.any(value < 0):
                raise ValueError(f"{name}: must be >= 0")
        base = np.eye(4) if base_pose is None else field("base_pose", base_pose, (4, 4))
        arrays = dict(
            joint_axes=axes,
            parent_to_joint=T,
            mass=mass,
            com=field("com", com, (n, 3)),
            inertia=inertia,
            stiffness=stiffness,
            damping=damping,
            rest=field("rest", rest, (n,)),
            gravity=field("gravity", gravity, (3,)),
            base_pose=base,
        )
        return cls(**{k: jnp.asarray(v, dtype) for k, v in arrays.items()})

    def replace(self, **fields) -> ChainParams:
        """Copy with some fields replaced (same shapes keep compiled functions valid)."""
        for k in fields:
            if k not in self.__dataclass_fields__:
                raise ValueError(f"{k}: not a parameter field; fields are {tuple(self.__dataclass_fields__)}")
        return eqx.tree_at(
            lambda p: [getattr(p, k) for k in fields],
            self,
            [jnp.asarray(v, getattr(self, k).dtype) for k, v in fields.items()],
        )


@final
class ArticulatedSoftRobot(SoftRobot):
    """Open serial chain of rigid links with compliant joints (module docstring).

    Args:
        params: :class:`ChainParams`.
        actuation: any :class:`~sorogym.actuation.Actuation` that acts on chains, e.g.
            :class:`~sorogym.actuation.GeneralizedActuation` (joint torques/forces on all
            or selected joints; default all), :class:`~sorogym.actuation.ArticulatedTendons`
            or :class:`~sorogym.actuation.PulleyTendons` (tensions [N]), or
            :class:`~sorogym.actuation.McKibbenMuscles` (gauge pressures [Pa]; resting
            lengths left ``None`` are set to the path lengths at ``q = 0`` when installed,
            once: they belong to the muscles and stay as they are under :meth:`with_params`).
    """

    params: ChainParams
    actuation: Actuation
    planar: ClassVar[bool] = False
    elastic_is_affine: ClassVar[bool] = True

    def __init__(self, params: ChainParams, actuation: Actuation | None = None):
        self.params = params
        actuation = GeneralizedActuation() if actuation is None else actuation
        self.actuation = actuation.bind(self._rest_context())

    # -- structure ---------------------------------------------------------------------------

    @property
    def num_dofs(self) -> int:
        return self.params.joint_axes.shape[0]

    def with_params(self, params: ChainParams) -> ArticulatedSoftRobot:
        return type(self)(params, self.actuation)

    @property
    def tip_abscissa(self) -> int:
        """The last link's frame index ``n`` (frame ``i + 1`` is link ``i``)."""
        return self.num_dofs

    # -- kinematics ----------------------------------------------------------------------

    def link_frames(self, q: Float[Array, " n"]) -> tuple[Array, Array]:
        """World poses ``(n, 4, 4)`` of the link frames and body Jacobians ``(n, 6, n)``
        (link ``i``'s body twist ``= J_i qd``), by one proximal-to-distal scan."""
        poses, J, _, _ = self._recursion(q, jnp.zeros_like(q), False)
        return poses, J

    def _rest_context(self) -> ChainContext:
        """The actuation context at ``q = 0`` with link poses only (products of the fixed
        transforms, no Jacobians): cheap outside ``jit`` too; models hand it to
        ``Actuation.bind``."""
        g, poses = self.params.base_pose, []
        for T in self.params.parent_to_joint:
            g = g @ T
            poses.append(g)
        q0 = jnp.zeros((self.num_dofs,), self.params.mass.dtype)
        return ChainContext(q0, self.params.base_pose, jnp.stack(poses), None)

    def actuation_context(self, q: Float[Array, " n"]) -> ChainContext:
        """World poses and body Jacobians of the links at ``q`` (one kinematics scan)."""
        poses, J = self.link_frames(q)
        return ChainContext(q, self.params.base_pose, poses, J)

    def _recursion(self, q, qd, gravity: bool):
        """One proximal-to-distal scan: link poses ``(n, 4, 4)``, body Jacobians
        ``(n, 6, n)``, body twists ``V_i`` ``(n, 6)`` and body accelerations at ``qdd = 0``
        ``A_i = Ad_(h_i^-1) A_(i-1) + [V_i, S_i qd_i]`` ``(n, 6)``; with ``gravity`` the base
        accelerates at ``-g`` (its body frame), which puts the weights into the wrenches."""
        p = self.params
        n = self.num_dofs
        local = jax.vmap(lambda T, S, qi: T @ se3.exp(S * qi))(p.parent_to_joint, p.joint_axes, q)
        a0 = jnp.zeros(6, q.dtype)
        if gravity:
            a0 = a0.at[3:].set(-p.base_pose[:3, :3].T @ p.gravity)

        def step(carry, inputs):
            g, J, V, A = carry
            h, S, qd_i, i = inputs
            Ad_inv = se3.adjoint_inverse(h)
            joint_twist = S * qd_i
            J = small_matmul(Ad_inv, J) + S[:, None] * jax.nn.one_hot(i, n, dtype=q.dtype)[None, :]
            V = small_matmul(Ad_inv, V) + joint_twist
            A = small_matmul(Ad_inv, A) + se3.bracket(V, joint_twist)
            g = small_matmul(g, h)
            return (g, J, V, A), (g, J, V, A)

        init = (p.base_pose, jnp.zeros((6, n), q.dtype), jnp.zeros(6, q.dtype), a0)
        _, out = jax.lax.scan(step, init, (local, p.joint_axes, qd, jnp.arange(n)))
        return out

    def _spatial_inertias(self):
        p = self.params
        return jax.vmap(_spatial_inertia)(p.mass, p.com, p.inertia)

    def _bias(self, J, V, A, Mi):
        """``sum_i J_i^T (M_i A_i - ad_(V_i)^T M_i V_i)``: the joint forces at ``qdd = 0``."""
        MV = jax.vmap(small_matmul)(Mi, V)
        wrench = jax.vmap(small_matmul)(Mi, A) - jax.vmap(lambda v, mv: small_matmul(se3.ad(v).T, mv))(V, MV)
        return _sum_transposed(J, wrench)

    def _frame(self, q, s):
        poses, jacobians = self.link_frames(q)
        poses = jnp.concatenate([self.params.base_pose[None], poses])
        jacobians = jnp.concatenate([jnp.zeros((1, 6, self.num_dofs), q.dtype), jacobians])
        k = jnp.clip(jnp.round(jnp.asarray(s)).astype(jnp.int32), 0, self.num_dofs)
        return poses[k], jacobians[k]

    def forward_kinematics(self, q: Float[Array, " n"], s: Float[Array, ""]) -> Float[Array, "4 4"]:
        """World pose ``(4, 4)`` of frame ``s`` (0: base, ``i + 1``: link ``i``)."""
        return self._frame(q, s)[0]

    def forward_kinematics_batched(self, q: Float[Array, " n"], s_ps: Float[Array, " p"]) -> Float[Array, "p 4 4"]:
        return jax.vmap(lambda s: self.forward_kinematics(q, s))(jnp.asarray(s_ps))

    def pose_and_jacobian(self, q, s, frame: str = "inertial"):
        g, J = self._frame(q, s)
        return g, self._in_frame(g, J, frame)

    @staticmethod
    def _in_frame(g, J, frame):
        if frame == "body":
            return J
        if frame != "inertial":
            raise ValueError(f"frame: unknown {frame!r}; use 'inertial' or 'body'")
        # twist at the frame's origin with world-aligned axes: rotate both halves
        R = g[:3, :3]
        return jnp.concatenate([R @ J[:3], R @ J[3:]], axis=0)

    def jacobian(self, q: Float[Array, " n"], s: Float[Array, ""], frame: str = "inertial") -> Float[Array, "6 n"]:
        """Twist Jacobian ``(6, n)`` of frame ``s``: ``"body"`` (body frame) or ``"inertial"``
        (angular and linear velocity of the frame's origin in world axes)."""
        return self.pose_and_jacobian(q, s, frame)[1]

    def jacobian_batched(self, q: Float[Array, " n"], s_ps, frame: str = "inertial") -> Float[Array, "p 6 n"]:
        """Jacobians ``(p, 6, n)`` of the frames ``s_ps`` ``(p,)`` (one kinematics pass)."""
        poses, jacobians = self.link_frames(q)
        poses = jnp.concatenate([self.params.base_pose[None], poses])
        jacobians = jnp.concatenate([jnp.zeros((1, 6, self.num_dofs), q.dtype), jacobians])
        k = jnp.clip(jnp.round(jnp.asarray(s_ps)).astype(jnp.int32), 0, self.num_dofs)
        return jax.vmap(lambda g, J: self._in_frame(g, J, frame))(poses[k], jacobians[k])

    # -- dynamics ----------------------------------------------------------------------

    def inertia_matrix(self, q: Float[Array, " n"]) -> Float[Array, "n n"]:
        """``M(q) = sum_i J_i^T M_i J_i`` [kg m^2, kg m, kg]."""
        _, J = self.link_frames(q)
        return jnp.einsum("iak,iab,ibl->kl", J, self._spatial_inertias(), J)

    def coriolis_matrix(self, q: Float[Array, " n"], qd: Float[Array, " n"]) -> Float[Array, "n n"]:
        """Christoffel form ``C_ij = sum_k (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i) qd_k / 2``
        (``dM/dt - 2 C`` skew-symmetric)."""
        dM = jax.jacfwd(self.inertia_matrix)(q)
        return 0.5 * (
            jnp.einsum("ijk,k->ij", dM, qd) + jnp.einsum("ikj,k->ij", dM, qd) - jnp.einsum("jki,k->ij", dM, qd)
        )

    def coriolis_force(self, q: Float[Array, " n"], qd: Float[Array, " n"]) -> Float[Array, " n"]:
        """``C(q, qd) qd`` by the recursive Newton-Euler pass without gravity (no ``C``)."""
        _, J, V, A = self._recursion(q, qd, False)
        return self._bias(J, V, A, self._spatial_inertias())

    def _gravity_potential(self, q):
        p = self.params
        poses, _ = self.link_frames(q)
        com_world = jnp.einsum("iab,ib->ia", poses[:, :3, :3], p.com) + poses[:, :3, 3]
        return -jnp.sum(p.mass * (com_world @ p.gravity))

    def gravitational_force(self, q: Float[Array, " n"]) -> Float[Array, " n"]:
        """``G(q) = dU_g/dq`` (``U_g = -sum_i m_i g . p_com,i``), as the joint forces that hold
        the chain at rest against gravity (Newton-Euler pass with the base accelerating at ``-g``)."""
        _, J, V, A = self._recursion(q, jnp.zeros_like(q), True)
        return self._bias(J, V, A, self._spatial_inertias())

    def elastic_force(self, q: Float[Array, " n"]) -> Float[Array, " n"]:
        """``K(q) = k (q - rest)`` (affine: ``S q - S rest`` with :meth:`stiffness_matrix`)."""
        return self.params.stiffness * (q - self.params.rest)

    def stiffness_matrix(self) -> Float[Array, "n n"]:
        """Constant ``S = dK/dq = diag(k)`` ``(n, n)`` [N m/rad, N/m]. The elastic force is
        affine, ``K(q) = S (q - rest)``: integrators that treat it as ``S q`` are exact
        only for zero rest positions."""
        return jnp.diag(self.params.stiffness)

    def damping_matrix(self) -> Float[Array, "n n"]:
        """Constant ``D = diag(d)`` ``(n, n)`` [N m s/rad, N s/m]."""
        return jnp.diag(self.params.damping)

    def damping_force(self, qd: Float[Array, " n"]) -> Float[Array, " n"]:
        """``D qd = d * qd`` ``(n,)`` (``D`` diagonal)."""
        return self.params.damping * qd

    def dynamical_terms(self, q: Float[Array, " n"], qd: Float[Array, " n"]) -> DynamicalTerms:
        """``(M, C qd, G)`` from one recursive pass (shared Jacobians)."""
        poses, J, V, A = self._recursion(q, qd, False)
        Mi = self._spatial_inertias()
        M = _sum_transposed(J, jax.vmap(small_matmul)(Mi, J))
        # gravity: each link's body acceleration [0; -R_i^T g] (the base accelerating at -g)
        g_body = -jax.vmap(lambda R: small_matmul(R.T, self.params.gravity))(poses[:, :3, :3])
        weights = jax.vmap(small_matmul)(Mi[:, :, 3:], g_body)
        return DynamicalTerms(M, self._bias(J, V, A, Mi), _sum_transposed(J, weights))

    def gravitational_energy(self, q: Float[Array, " n"]) -> Float[Array, ""]:
        """``U_g = -sum_i m_i g . p_com,i`` [J] (zero with the centres of mass at the world origin)."""
        return self._gravity_potential(q)

    def elastic_energy(self, q: Float[Array, " n"]) -> Float[Array, ""]:
        """``sum_i k_i (q_i - rest_i)^2 / 2`` [J]."""
        dq = q - self.params.rest
        return 0.5 * jnp.sum(self.params.stiffness * dq * dq)

    def forward_dynamics(
        self, t: Float[Array, ""], y: Float[Array, " 2n"], actuation_args: tuple = ()
    ) -> Float[Array, " 2n"]:
        """``[qd, M^-1 (A u + tau_ext - C qd - G - K - D qd)]`` (Cholesky solve)."""
        q, qd = self.split_state(y)
        u = actuation_args[0] if len(actuation_args) > 0 else jnp.zeros((self.num_actuators,), y.dtype)
        poses, J, V, A = self._recursion(q, qd, True)  # one pass: M, C qd, G and the tendon geometry share J
        Mi = self._spatial_inertias()
        M = jnp.einsum("iak,iab,ibl->kl", J, Mi, J)
        # the link frames of the dynamics serve the actuator too
        act = self.actuation.force(ChainContext(q, self.params.base_pose, poses, J), u)
        tau = act - self._bias(J, V, A, Mi) - self.elastic_force(q) - self.damping_force(qd)
        if len(actuation_args) > 1:
            tau = tau + actuation_args[1]
        qdd = spd_solve(M, tau)
        return jnp.concatenate([qd, qdd])
