"""Operational-space dynamics and the operational-space controllers (impedance, synergistic).

A task is a set of backbone points ``s_ps`` ``(p,)`` [m] and a selection of twist components
(world frame, angular first: spatial ``[wx, wy, wz, vx, vy, vz]``, planar ``[w, vx, vy]``)
common to all points. Stacking the selected rows of the points' inertial Jacobians gives the
task Jacobian ``J`` ``(k, n)``; with ``M = M(q)``::

    Lambda = (J M^-1 J^T)^-1                 task-space inertia (k, k)
    J_M^+  = M^-1 J^T Lambda                 dynamically consistent pseudoinverse (n, k)
    N      = I - J_M^+ J                     null-space projector (n, n)
    C_x    = Lambda (J M^-1 C(q, qd) - Jdot) Coriolis map from joint velocities (k, n)

so that the task acceleration ``xdd = J qdd + Jdot qd`` of
``M qdd + C qd + G + K + D qd = A u + tau_ext`` obeys::

    Lambda xdd + C_x qd + (J_M^+)^T (G + K + D qd - tau_ext) = (J_M^+)^T A u.

(``C_x J_M^+`` is the usual ``(k, k)`` operational-space Coriolis matrix; ``C_x N qd`` is the
coupling through the null-space velocity.)

Controllers (the paper's Table VI and eqs. 30, 37-39), both ``(t, y, z) -> (u, dz/dt)``:

* :class:`ImpedanceController` (fully actuated): ``u = A^-1 (J^T F + G(q))`` with
  ``F = (J_M^+)^T (K(q) + D qd) + C_x N qd + Lambda xdd_d + K_x e_x + D_x edot_x``.
* :class:`SynergisticController` (task dimension = number of actuators):
  ``u = P J^T F_x`` with the synergistic projector ``P = (J M^-1 A)^-1 J M^-1`` and
  ``F_x = PID_x`` (saturated integral); it makes ``J M^-1 A u = Lambda^-1 F_x``.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ..lie import so3
from ._configuration import PIDGains, as_gain_matrix, check_full_actuation
from ._reference import Reference

ANGULAR = {False: (0, 1, 2), True: (0,)}


def _components(planar: bool, components) -> tuple[int, ...]:
    d = 3 if planar else 6
    if components == "pose" or components is None:
        return tuple(range(d))
    if components == "position":
        return tuple(range(d - (2 if planar else 3), d))
    comps = tuple(int(c) for c in components)
    if not comps or len(set(comps)) != len(comps) or any(not 0 <= c < d for c in comps):
        raise ValueError(f"components: expected distinct indices in [0, {d}), got {components!r}")
    angular = [c for c in comps if c in ANGULAR[planar]]
    if not planar and angular and len(angular) != 3:
        raise ValueError("components: a spatial task selects all three angular components or none")
    return tuple(sorted(comps))


class OperationalSpaceDynamics(eqx.Module):
    """The dynamics of ``model`` projected onto task points ``s_ps`` (see module docstring).

    ``components``: ``"pose"`` (default, every twist component), ``"position"`` or explicit
    indices into the twist ``[angular, linear]``. Task dimension ``k = p * len(components)``.
    """

    model: object
    s_ps: tuple[float, ...] = eqx.field(static=True)
    components: tuple[int, ...] = eqx.field(static=True)

    def __init__(self, model, s_ps, components="pose"):
        s = np.atleast_1d(np.asarray(s_ps, float))
        length = model.total_length
        L = (
            np.inf if isinstance(length, jax.core.Tracer) else float(np.asarray(length))
        )  # traced: checked where concrete
        if s.ndim != 1 or s.size == 0 or np.any(s < 0) or np.any(s > L * (1 + 1e-12)):
            raise ValueError(f"s_ps: task points must lie on the backbone [0, {L:g}] m, got {np.asarray(s_ps)}")
        self.model = model
        self.s_ps = tuple(float(x) for x in s)
        self.components = _components(bool(model.planar), components)

    @property
    def task_dim(self) -> int:
        return len(self.s_ps) * len(self.components)

    @property
    def has_orientation(self) -> bool:
        return any(c in ANGULAR[bool(self.model.planar)] for c in self.components)

    def poses(self, q) -> Array:
        """Poses of the task points ``(p, 4, 4)`` (planar ``(p, 3, 3)``), world frame."""
        return jnp.stack([self.model.forward_kinematics(q, s) for s in self.s_ps])

    def jacobian(self, q) -> Float[Array, "k n"]:
        """Task Jacobian: the selected rows of each point's inertial twist Jacobian."""
        idx = jnp.asarray(self.components)
        return jnp.concatenate([self.model.jacobian(q, s)[idx] for s in self.s_ps], axis=0)

    def jacobian_and_rate(self, q, qd) -> tuple[Array, Array]:
        """``(J, Jdot)``, each ``(k, n)``."""
        return jax.jvp(self.jacobian, (q,), (qd,))

    def terms(self, q, qd) -> dict:
        """Everything a controller needs at ``(q, qd)`` from one factorisation of ``M``:
        ``J``, ``Jdot``, ``M``, ``Lambda``, ``pinv`` (``J_M^+``), ``null`` (``N``),
        ``coriolis`` (``C_x``, ``(k, n)``), ``M_inv_JT`` and the joint-space ``Cqd``,
        ``gravity``."""
        J, Jd = self.jacobian_and_rate(q, qd)
        M, cor, grav = self.model.dynamical_terms(q, qd)
        factor = jax.scipy.linalg.cho_factor(M)
        C = self.model.coriolis_matrix(q, qd)
        M_inv = jax.scipy.linalg.cho_solve(factor, jnp.concatenate([J.T, C], axis=1))
        k = J.shape[0]
        M_inv_JT, M_inv_C = M_inv[:, :k], M_inv[:, k:]
        Lam = jnp.linalg.inv(J @ M_inv_JT)
        Lam = 0.5 * (Lam + Lam.T)
        pinv = M_inv_JT @ Lam
        null = jnp.eye(q.shape[0], dtype=q.dtype) - pinv @ J
        coriolis = Lam @ (J @ M_inv_C - Jd)
        return {
            "J": J,
            "Jdot": Jd,
            "M": M,
            "Lambda": Lam,
            "pinv": pinv,
            "null": null,
            "coriolis": coriolis,
            "M_inv_JT": M_inv_JT,
            "Cqd": cor,
            "gravity": grav,
        }

    def task_inertia(self, q) -> Float[Array, "k k"]:
        """``Lambda(q) = (J M^-1 J^T)^-1``."""
        return self.terms(q, jnp.zeros_like(q))["Lambda"]

    def error(self, g_desired, g) -> Array:
        """Selected geometric errors ``(k,)`` between desired and actual task-point poses
        (``(p, 4, 4)``, planar ``(p, 3, 3)``): ``[log(R_d R^T), p_d - p]`` per point, planar
        ``[wrap(theta_d - theta), p_d - p]``."""
        if self.model.planar:
            dth = jnp.arctan2(g_desired[:, 1, 0], g_desired[:, 0, 0]) - jnp.arctan2(g[:, 1, 0], g[:, 0, 0])
            dth = jnp.arctan2(jnp.sin(dth), jnp.cos(dth))
            full = jnp.concatenate([dth[:, None], g_desired[:, :2, 2] - g[:, :2, 2]], axis=1)
        else:
            e_R = jax.vmap(lambda a, b: so3.log(a[:3, :3] @ b[:3, :3].T))(g_desired, g)
            full = jnp.concatenate([e_R, g_desired[:, :3, 3] - g[:, :3, 3]], axis=1)
        return full[:, jnp.asarray(self.components)].reshape(-1)


def matched_impedance_gains(task_inertia, translational_stiffness: float = 1.0) -> tuple[np.ndarray, np.ndarray, float]:
    """The impedance gains of the paper's eq. 31 from a pose task's inertia ``Lambda``
    ``(6, 6)`` (usually at rest, angular rows first): the translational stiffness
    ``k_p`` [N/m] sets ``w_n = sqrt(k_p / mean(Lambda_p))`` [rad/s], the rotational
    stiffness is ``Lambda_R w_n^2`` and every axis is critically damped,
    ``d = 2 sqrt(k Lambda)``. Returns ``(stiffness (6,), damping (6,), w_n)`` (numpy)."""
    if not translational_stiffness > 0:
        raise ValueError(f"translational_stiffness: must be positive, got {translational_stiffness}")
    lam = np.diag(np.asarray(task_inertia, float))
    if lam.shape != (6,):
        raise ValueError(f"task_inertia: expected the (6, 6) inertia of one pose task, got {np.shape(task_inertia)}")
    w_n = float(np.sqrt(translational_stiffness / lam[3:].mean()))
    stiffness = np.concatenate([lam[:3] * w_n**2, np.full(3, float(translational_stiffness))])
    return stiffness, 2 * np.sqrt(stiffness * lam), w_n


def _check_pose_reference(task: OperationalSpaceDynamics, reference: Reference) -> None:
    sample = jax.eval_shape(reference, 0.0)
    p, planar = len(task.s_ps), bool(task.model.planar)
    side, d = (3, 3) if planar else (4, 6)
    value_ok = sample.value.shape in {(p, side, side)} | ({(side, side)} if p == 1 else set())
    rate_ok = int(np.prod(sample.rate.shape)) == p * d
    if not (value_ok and rate_ok):
        raise ValueError(
            f"reference: expected {p} pose(s) of shape ({side}, {side}) and twists of {d} per point, "
            f"got values {sample.value.shape} and rates {sample.rate.shape}"
        )


class ImpedanceController(eqx.Module):
    """Operational-space impedance control (eq. 30) for a fully actuated model.

    ``reference``: a pose reference (e.g. :class:`~sorogym.control.PoseReference`) of the
    task points: value ``(p, 4, 4)`` or ``(4, 4)`` for one point (planar ``(3, 3)``), rate
    and acceleration the world twists ``(p, d)`` or ``(d,)``. ``stiffness`` and ``damping``:
    ``K_x``, ``D_x`` as scalars, ``(k,)`` or ``(k, k)``. Stateless: ``z`` is ignored and
    ``dz/dt = 0`` (use ``initial_state()``).
    """

    task: OperationalSpaceDynamics
    reference: Reference
    stiffness: Float[Array, "k k"]
    damping: Float[Array, "k k"]

    def __init__(self, task: OperationalSpaceDynamics, reference: Reference, stiffness, damping):
        check_full_actuation(task.model, "ImpedanceController")
        _check_pose_reference(task, reference)
        k = task.task_dim
        given = jnp.asarray(stiffness)
        dtype = given.dtype if jnp.issubdtype(given.dtype, jnp.floating) else jnp.result_type(float)
        self.task, self.reference = task, reference
        self.stiffness = as_gain_matrix("stiffness", stiffness, k, dtype)
        self.damping = as_gain_matrix("damping", damping, k, dtype)

    def initial_state(self) -> Array:
        return jnp.zeros((0,), jnp.result_type(float))

    def _selected(self, twists) -> Array:
        twists = twists.reshape(len(self.task.s_ps), -1)
        return twists[:, jnp.asarray(self.task.components)].reshape(-1)

    def split(self, t, y, z) -> tuple[Array, Array, Array]:
        """``(u_mb, u_fb, dz/dt)``: ``u_mb = A^-1 (J^T F_model + G)`` with the model part of
        ``F`` (elastic, damping, null-space Coriolis, ``Lambda xdd_d``), ``u_fb = A^-1 J^T
        (K_x e + D_x edot)``."""
        model, task = self.task.model, self.task
        q, qd = model.split_state(y)
        ref = self.reference(t)
        g_d = ref.value.reshape((len(task.s_ps),) + ref.value.shape[-2:])
        w = task.terms(q, qd)
        e = task.error(g_d, task.poses(q))
        e_rate = self._selected(ref.rate) - w["J"] @ qd
        f_model = (
            w["pinv"].T @ (model.elastic_force(q) + model.damping_matrix() @ qd)
            + w["coriolis"] @ (w["null"] @ qd)
            + w["Lambda"] @ self._selected(ref.acceleration)
        )
        f_fb = self.stiffness @ e + self.damping @ e_rate
        A = model.actuation_matrix(q)
        forces = jnp.stack([w["J"].T @ f_model + w["gravity"], w["J"].T @ f_fb], axis=1)
        sol = jnp.linalg.solve(A, forces) if A.shape[0] == A.shape[1] else jnp.linalg.pinv(A) @ forces
        return sol[:, 0], sol[:, 1], jnp.zeros_like(z)

    def __call__(self, t, y, z) -> tuple[Array, Array]:
        u_mb, u_fb, z_dot = self.split(t, y, z)
        return u_mb + u_fb, z_dot


class SynergisticController(eqx.Module):
    """Synergistic operational-space regulation (eqs. 37-39): ``u = P J^T PID_x`` with
    ``P = (J M^-1 A)^-1 J M^-1``. Needs ``k = m`` (task dimension = actuators); the
    reference is a task-space setpoint or trajectory ``(k,)`` of positions (``components =
    "position"``); ``z`` is the saturated error integral ``(k,)``."""

    task: OperationalSpaceDynamics
    reference: Reference
    gains: PIDGains

    def __init__(self, task: OperationalSpaceDynamics, reference: Reference, gains: PIDGains):
        k, m = task.task_dim, task.model.num_actuators
        if k != m:
            raise ValueError(f"SynergisticController: needs task dimension k = m actuators, got k = {k}, m = {m}")
        if task.has_orientation:
            raise ValueError("SynergisticController: regulates positions; build the task with components='position'")
        if gains.num_dofs != k:
            raise ValueError(f"gains: sized for {gains.num_dofs}, the task has k = {k}")
        sample = jax.eval_shape(reference, 0.0)
        if sample.value.shape != (k,):
            raise ValueError(f"reference: values must have shape ({k},), got {sample.value.shape}")
        self.task, self.reference, self.gains = task, reference, gains

    def initial_state(self) -> Array:
        return jnp.zeros((self.task.task_dim,), self.gains.kp.dtype)

    def positions(self, q) -> Array:
        """The task coordinates ``x(q)`` ``(k,)``: the selected position components."""
        planar = bool(self.task.model.planar)
        g = self.task.poses(q)
        p = g[:, :2, 2] if planar else g[:, :3, 3]
        offset = 1 if planar else 3
        cols = jnp.asarray([c - offset for c in self.task.components])
        return p[:, cols].reshape(-1)

    def projector(self, q, J=None) -> Array:
        """``P = (J M^-1 A)^-1 J M^-1`` ``(m, n)`` (pass the task Jacobian ``J`` if known)."""
        J = self.task.jacobian(q) if J is None else J
        M = self.task.model.inertia_matrix(q)
        A = self.task.model.actuation_matrix(q)
        JMinv = jnp.linalg.solve(M, J.T).T
        return jnp.linalg.solve(JMinv @ A, JMinv)

    def split(self, t, y, z) -> tuple[Array, Array, Array]:
        q, qd = self.task.model.split_state(y)
        ref = self.reference(t)
        J = self.task.jacobian(q)
        e = ref.value - self.positions(q)
        force = self.gains.feedback(e, ref.rate - J @ qd, z)
        u_fb = self.projector(q, J) @ (J.T @ force)
        return jnp.zeros_like(u_fb), u_fb, self.gains.integral_rate(e)

    def __call__(self, t, y, z) -> tuple[Array, Array]:
        u_mb, u_fb, z_dot = self.split(t, y, z)
        return u_mb + u_fb, z_dot
