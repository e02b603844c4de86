"""Actuation-space dynamics and the actuation-space controllers of Table VI.

For a model whose actuation map is integrable (``A(q) = d phi_a/dq^T``, e.g. tendons, where
``phi_a`` is the tendon shortening), the actuation-space coordinates (paper eq. 6) are::

    phi = [phi_a(q), H_u q]   (n,),    J_phi(q) = d phi/dq = [A(q)^T; H_u]   (n, n),

with ``H_u`` ``(n - m, n)`` given or, by default, the transposed last ``n - m`` columns of a
complete QR factorisation of ``A(0)`` (an orthonormal basis of ``ker A(0)^T``). With
``W = J_phi^-1`` the dynamics keep their form in ``phi``::

    M_phi = W^T M W,   C_phi = W^T (C - M W Jdot_phi) W,   G_phi = W^T G,   K_phi = W^T K,
    D_phi = W^T D W,   A_phi = W^T A = [I_m; 0],

so the actuators drive the first ``m`` coordinates directly (collocated form).

:class:`ActuationSpaceController` regulates or tracks ``phi_a`` with the saturated-integral
PID of :mod:`._configuration` and the compensations of Table VI, taking the actuated rows
``[.]_a`` of the actuation-space terms::

    "none":                   u = PID_phi_a
    "potential":              u = [G_phi(q_d) + K_phi(q_d)]_a + PID
    "gravity":                u = [G_phi(q) + K_phi(q_d)]_a + PID
    "potential_cancellation": u = [G_phi(q) + K_phi(q)]_a + PID
    "feedforward":            u = [M_phi(q_d) phidd_d + C_phi(q_d, qd_d) phid_d + G_phi(q_d) + K_phi(q_d)
                                   + D_phi(q_d) phid_d]_a + PID
    "mixed_state":            u = [M_phi(q) phidd_d + C_phi(q, qd) phid_d + G_phi(q) + K_phi(q_d)
                                   + D_phi(q) phid_d]_a + PID

The reference is given in configuration space (``q_d(t)``, :class:`Reference`); its
actuation-space image is ``phi_d = phi(q_d)``, ``phid_d = J_phi(q_d) qd_d``,
``phidd_d = J_phi(q_d) qdd_d + Jdot_phi(q_d, qd_d) qd_d``.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ._configuration import PIDGains
from ._reference import Reference

ACTUATION_COMPENSATIONS = ("none", "potential", "gravity", "potential_cancellation", "feedforward", "mixed_state")


@eqx.filter_jit
def _actuation_matrix_at_zero(model):
    return model.actuation_matrix(jnp.zeros((model.num_dofs,), jnp.result_type(float)))


class ActuationSpaceDynamics(eqx.Module):
    """The dynamics of ``model`` in actuation-space coordinates (module docstring).

    ``unactuated_map``: ``H_u`` ``(n - m, n)``; by default from the QR factorisation of
    ``A(0)``. Raises ``ValueError`` when ``A(0)`` has rank below ``m`` or when ``J_phi(0)``
    is singular.
    """

    model: object
    unactuated_map: Float[Array, "n_minus_m n"]

    def __init__(self, model, unactuated_map=None):
        n, m = model.num_dofs, model.num_actuators
        if m > n:
            raise ValueError(f"model: over-actuated (m = {m} > n = {n}); actuation-space coordinates need m <= n")
        A0 = np.asarray(_actuation_matrix_at_zero(model))
        if np.linalg.matrix_rank(A0) < m:
            raise ValueError(
                f"model: A(0) has rank {np.linalg.matrix_rank(A0)} < m = {m}; the actuators are not independent"
            )
        if unactuated_map is None:
            Q, _ = np.linalg.qr(A0, mode="complete")
            unactuated_map = Q[:, m:].T
        H = np.asarray(unactuated_map, float)
        if H.shape != (n - m, n):
            raise ValueError(f"unactuated_map: expected shape ({n - m}, {n}), got {H.shape}")
        J0 = np.concatenate([A0.T, H], axis=0)
        if np.linalg.cond(J0) > 1e12:
            raise ValueError("unactuated_map: J_phi(0) = [A(0)^T; H_u] is singular; H_u must complete A(0)^T")
        self.model = model
        self.unactuated_map = jnp.asarray(H, A0.dtype)

    @property
    def num_actuated(self) -> int:
        return self.model.num_actuators

    def coordinates(self, q) -> Float[Array, " n"]:
        """``phi(q) = [phi_a(q), H_u q]``."""
        return jnp.concatenate([self.model.actuation_coordinates(q), self.unactuated_map @ q])

    def jacobian(self, q) -> Float[Array, "n n"]:
        """``J_phi(q) = [A(q)^T; H_u]``."""
        return jnp.concatenate([self.model.actuation_matrix(q).T, self.unactuated_map], axis=0)

    def terms(self, q, qd) -> dict:
        """``M``, ``C`` (matrix), ``G``, ``K``, ``D``, ``A`` in actuation coordinates, and
        ``J`` (``J_phi``), ``Jdot``."""
        m = self.model
        J, Jd = jax.jvp(self.jacobian, (q,), (qd,))
        W = jnp.linalg.inv(J)
        M, _, grav = m.dynamical_terms(q, qd)
        C = m.coriolis_matrix(q, qd)
        return {
            "M": W.T @ M @ W,
            "C": W.T @ (C - M @ W @ Jd) @ W,
            "G": W.T @ grav,
            "K": W.T @ m.elastic_force(q),
            "D": W.T @ m.damping_matrix() @ W,
            "A": W.T @ m.actuation_matrix(q),
            "J": J,
            "Jdot": Jd,
        }

    def reference_image(self, q_d, qd_d, qdd_d) -> tuple[Array, Array, Array]:
        """``(phi_d, phid_d, phidd_d)`` of a configuration reference sample."""
        J, Jd = jax.jvp(self.jacobian, (q_d,), (qd_d,))
        return self.coordinates(q_d), J @ qd_d, J @ qdd_d + Jd @ qd_d


class ActuationSpaceController(eqx.Module):
    """PID on the actuated coordinates ``phi_a`` plus a Table VI compensation (module
    docstring). ``gains``: :class:`PIDGains` of size ``m``; ``z``: the saturated error
    integral ``(m,)``."""

    dynamics: ActuationSpaceDynamics
    reference: Reference
    gains: PIDGains
    compensation: str = eqx.field(static=True)

    def __init__(
        self, dynamics: ActuationSpaceDynamics, reference: Reference, gains: PIDGains, compensation: str = "none"
    ):
        if compensation not in ACTUATION_COMPENSATIONS:
            raise ValueError(f"compensation: unknown {compensation!r}; use one of {ACTUATION_COMPENSATIONS}")
        n, m = dynamics.model.num_dofs, dynamics.num_actuated
        if gains.num_dofs != m:
            raise ValueError(f"gains: sized for {gains.num_dofs}, the model has m = {m} actuators")
        sample = jax.eval_shape(reference, 0.0)
        if sample.value.shape != (n,):
            raise ValueError(f"reference: configuration values must have shape ({n},), got {sample.value.shape}")
        self.dynamics, self.reference, self.gains, self.compensation = dynamics, reference, gains, compensation

    def initial_state(self) -> Array:
        return jnp.zeros((self.dynamics.num_actuated,), self.gains.kp.dtype)

    def _model_force(self, q, qd, ref, image) -> Array:
        """The actuation-space force ``(n,)`` whose actuated rows are ``u_mb``; ``image`` is
        ``(phi_d, phid_d, phidd_d)`` of the reference sample ``ref``."""
        dyn, kind = self.dynamics, self.compensation
        q_d, qd_d, _ = ref
        _, phid, phidd = image
        if kind == "none":
            return jnp.zeros_like(q)
        at_ref = dyn.terms(q_d, qd_d)
        if kind == "potential":
            return at_ref["G"] + at_ref["K"]
        if kind == "feedforward":
            return at_ref["M"] @ phidd + at_ref["C"] @ phid + at_ref["G"] + at_ref["K"] + at_ref["D"] @ phid
        now = dyn.terms(q, qd)
        if kind == "gravity":
            return now["G"] + at_ref["K"]
        if kind == "potential_cancellation":
            return now["G"] + now["K"]
        return now["M"] @ phidd + now["C"] @ phid + now["G"] + at_ref["K"] + now["D"] @ phid  # mixed state

    def split(self, t, y, z) -> tuple[Array, Array, Array]:
        """``(u_mb, u_fb, dz/dt)``, each ``(m,)``."""
        dyn = self.dynamics
        m = dyn.num_actuated
        q, qd = dyn.model.split_state(y)
        ref = self.reference(t)
        image = dyn.reference_image(*ref)
        phi_d, phid_d, _ = image
        phi, phid = dyn.coordinates(q), dyn.jacobian(q) @ qd
        e = phi_d[:m] - phi[:m]
        u_fb = self.gains.feedback(e, phid_d[:m] - phid[:m], z)
        return self._model_force(q, qd, ref, image)[:m], u_fb, self.gains.integral_rate(e)

    def __call__(self, t, y, z) -> tuple[Array, Array]:
        u_mb, u_fb, z_dot = self.split(t, y, z)
        return u_mb + u_fb, z_dot
