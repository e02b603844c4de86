"""Configuration-space controllers: PID with a saturated integral and the model-based
compensations of setpoint regulation and trajectory tracking.

Every controller follows the contract of :mod:`sorogym.control`: it maps the time ``t``
[s], the plant state ``y = [q, qd]`` ``(2n,)`` and its own state ``z`` (here the integral
``eta`` ``(n,)`` of the saturated error) to the actuator effort ``u`` ``(m,)`` and ``dz/dt``,
so it plugs into :func:`sorogym.sim.rollout_closed_loop_to` (continuous) and
:func:`sorogym.sim.rollout_discrete_closed_loop_to` (zero-order hold) with
``z0 = controller.initial_state()``. The effort splits as ``u = u_mb + u_fb``
(:meth:`ConfigurationController.split`).

With ``e = q_d - q`` and the unit-preserving saturation ``sat(e) = e_sat tanh(e / e_sat)``
(componentwise; ``Gamma = diag(e_sat)^-1``, unit slope at the origin)::

    d eta/dt = sat(e),     PID = K_p e + K_i eta + K_d (qd_d - qd),

and, with ``A = A(q)`` (of full row rank ``n`` for every compensation except ``"none"``;
``A^-1`` is the pseudoinverse when over-actuated):

==========================  =============================================================  ===================
compensation                model-based term ``A u_mb``                                    feedback ``u_fb``
==========================  =============================================================  ===================
``"none"`` (PID / PD)       0                                                              ``A^T PID``
``"potential"``             ``G(q_d) + K(q_d)``                                            ``A^T PID``
``"gravity"``               ``G(q) + K(q_d)``                                              ``A^T PID``
``"potential_cancellation"`` ``G(q) + K(q)``                                               ``A^T PID``
``"feedforward"``           ``M(q_d) qdd_d + C(q_d, qd_d) qd_d + G(q_d) + K(q_d) + D qd_d`` ``A^T PID``
``"mixed_state"``           ``M(q) qdd_d + C(q, qd) qd_d + G(q) + K(q_d) + D qd_d``        ``A^T PID``
``"computed_torque"``       ``M(q) qdd_d + C(q, qd) qd + G(q) + K(q) + D qd``              ``A^-1 M(q) M_0^-1 PID``
==========================  =============================================================  ===================

The computed-torque feedback divides the force-domain gains by the nominal inertia
``M_0 = M(0)`` so that one set of gains serves all controllers; with the matched gains of
:meth:`PIDGains.matched` the closed loop of computed torque is exactly linear:
``edd + 2 zeta w_n ed + w_n^2 e + w_i w_n^2 eta = 0``.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ._reference import Reference, ReferenceSample

COMPENSATIONS = (
    "none",
    "potential",
    "gravity",
    "potential_cancellation",
    "feedforward",
    "mixed_state",
    "computed_torque",
)


def saturate(e: Float[Array, " n"], e_sat: Float[Array, " n"]) -> Float[Array, " n"]:
    """``Gamma^-1 tanh(Gamma e)`` with ``Gamma = diag(e_sat)^-1``: componentwise, in the
    units of ``e``, unit slope at ``e = 0`` and ``|sat(e)| < e_sat``."""
    finite = jnp.isfinite(e_sat)
    scale = jnp.where(finite, e_sat, 1.0)
    return jnp.where(finite, scale * jnp.tanh(e / scale), e)


def as_gain_matrix(name: str, value, n: int, dtype) -> Array:
    """A gain as an ``(n, n)`` matrix from a scalar, a diagonal ``(n,)`` or a matrix."""
    value = jnp.asarray(value, dtype)
    if value.ndim == 0:
        return value * jnp.eye(n, dtype=dtype)
    if value.shape == (n,):
        return jnp.diag(value)
    if value.shape == (n, n):
        return value
    raise ValueError(f"{name}: expected a scalar, ({n},) or ({n}, {n}), got {tuple(value.shape)}")


class PIDGains(eqx.Module):
    """Force-domain gains ``kp``, ``ki``, ``kd`` ``(n, n)`` and integral saturation scales
    ``e_sat`` ``(n,)`` (in the units of each coordinate; ``inf`` disables saturation)."""

    kp: Float[Array, "n n"]
    ki: Float[Array, "n n"]
    kd: Float[Array, "n n"]
    e_sat: Float[Array, " n"]

    def __init__(self, kp, kd, ki=0.0, e_sat=None, *, num_dofs: int | None = None, dtype=None):
        dtype = dtype or jnp.result_type(float)
        shapes = [np.shape(g) for g in (kp, kd, ki)]
        n = num_dofs or next((s[0] for s in shapes if len(s) >= 1), None)
        if n is None:
            raise ValueError("num_dofs: needed when every gain is a scalar")
        self.kp = as_gain_matrix("kp", kp, n, dtype)
        self.kd = as_gain_matrix("kd", kd, n, dtype)
        self.ki = as_gain_matrix("ki", ki, n, dtype)
        e_sat = jnp.full((n,), jnp.inf, dtype) if e_sat is None else jnp.broadcast_to(jnp.asarray(e_sat, dtype), (n,))
        if not isinstance(e_sat, jax.core.Tracer) and not bool(jnp.all(e_sat > 0)):
            raise ValueError(f"e_sat: saturation scales must be positive, got {np.asarray(e_sat)}")
        self.e_sat = e_sat

    @property
    def num_dofs(self) -> int:
        return self.kp.shape[0]

    @classmethod
    def matched(
        cls,
        inertia: Float[Array, "n n"],
        natural_frequency: float,
        damping_ratio: float,
        integral_frequency: float = 0.0,
        e_sat=None,
    ) -> PIDGains:
        """``K_p = w_n^2 M``, ``K_d = 2 zeta w_n M``, ``K_i = w_i w_n^2 M`` for an inertia
        ``M`` ``(n, n)`` (usually ``M(0)``): every coordinate gets the bandwidth ``w_n``
        [rad/s] and damping ratio ``zeta`` of a unit-mass loop."""
        for name, v in (("natural_frequency", natural_frequency), ("damping_ratio", damping_ratio)):
            if not v > 0:
                raise ValueError(f"{name}: must be positive, got {v}")
        if integral_frequency < 0:
            raise ValueError(f"integral_frequency: must be >= 0, got {integral_frequency}")
        M = jnp.asarray(inertia)
        w2 = natural_frequency**2
        return cls(
            w2 * M, 2.0 * damping_ratio * natural_frequency * M, integral_frequency * w2 * M, e_sat, dtype=M.dtype
        )

    def feedback(self, e, e_rate, eta) -> Float[Array, " n"]:
        """``K_p e + K_i eta + K_d e_rate``."""
        return self.kp @ e + self.ki @ eta + self.kd @ e_rate

    def integral_rate(self, e) -> Float[Array, " n"]:
        """``d eta/dt = sat(e)``."""
        return saturate(e, self.e_sat)


@eqx.filter_jit
def _actuation_matrix_at(model, q):
    return model.actuation_matrix(q)


@eqx.filter_jit
def _inertia_matrix_at(model, q):
    return model.inertia_matrix(q)


def check_full_actuation(model, what: str) -> None:
    """Raise ``ValueError`` unless ``A(0)`` ``(n, m)`` has full row rank ``n`` (fully or
    over-actuated): the compensations invert ``A(q)`` (a pseudoinverse when ``m > n``)."""
    n, m = model.num_dofs, model.num_actuators
    if m < n:
        raise ValueError(
            f"{what}: needs full actuation (A(q) of rank n); the model has n = {n} coordinates "
            f"and only m = {m} actuators (underactuated: use an actuation- or operational-space controller)"
        )
    A0 = _actuation_matrix_at(model, jnp.zeros(n, jnp.result_type(float)))
    if isinstance(A0, jax.core.Tracer):  # built inside a trace: checked where concrete
        return
    A0 = np.asarray(A0)
    sv = np.linalg.svd(A0, compute_uv=False)
    if not np.all(np.isfinite(sv)) or sv[-1] <= 1e-12 * max(sv[0], 1e-300):
        raise ValueError(f"{what}: A(0) has rank < n = {n} (singular values {sv}); the model is not fully actuated")


def _solve_actuation(A: Array, forces: Array) -> Array:
    """``A^-1 forces`` for square ``A``, the minimum-norm ``A^+ forces`` when ``m > n``."""
    if A.shape[0] == A.shape[1]:
        return jnp.linalg.solve(A, forces)
    return jnp.linalg.pinv(A) @ forces


class ConfigurationController(eqx.Module):
    """A configuration-space controller (see the module docstring for the laws).

    ``model``: any :class:`~sorogym.models.SoftRobot`; ``reference``: a
    :class:`~sorogym.control.Reference` with values ``(n,)`` (``q_d(t)``);
    ``gains``: :class:`PIDGains` of size ``n``; ``compensation``: one of
    :data:`COMPENSATIONS`; ``nominal_inertia``: ``M_0`` for computed torque (default
    ``M(0)``).
    """

    model: object
    reference: Reference
    gains: PIDGains
    nominal_inertia: Float[Array, "n n"]
    compensation: str = eqx.field(static=True)

    def __init__(self, model, reference: Reference, gains: PIDGains, compensation: str = "none", nominal_inertia=None):
        if compensation not in COMPENSATIONS:
            raise ValueError(f"compensation: unknown {compensation!r}; use one of {COMPENSATIONS}")
        n = model.num_dofs
        if gains.num_dofs != n:
            raise ValueError(f"gains: sized for {gains.num_dofs} coordinates, the model has {n}")
        sample = jax.eval_shape(reference, 0.0)
        if sample.value.shape != (n,):
            raise ValueError(f"reference: values must have shape ({n},), got {sample.value.shape}")
        if compensation != "none":
            check_full_actuation(model, f"compensation={compensation!r}")
        if nominal_inertia is None:
            nominal_inertia = _inertia_matrix_at(model, jnp.zeros(n, gains.kp.dtype))
        self.model = model
        self.reference = reference
        self.gains = gains
        self.nominal_inertia = jnp.asarray(nominal_inertia, gains.kp.dtype)
        self.compensation = compensation

    def initial_state(self) -> Float[Array, " n"]:
        """``eta(t0) = 0``."""
        return jnp.zeros((self.model.num_dofs,), self.gains.kp.dtype)

    def _model_force(self, q, qd, ref: ReferenceSample) -> Array:
        """The generalized force ``A u_mb`` ``(n,)`` of the compensation."""
        m, kind = self.model, self.compensation
        q_d, qd_d, qdd_d = ref
        if kind == "none":
            return jnp.zeros_like(q)
        if kind == "potential":
            return m.potential_force(q_d)
        if kind == "gravity":
            return m.gravitational_force(q) + m.elastic_force(q_d)
        if kind == "potential_cancellation":
            return m.potential_force(q)
        D = m.damping_matrix()
        if kind == "feedforward":
            M_d, cor_d, grav_d = m.dynamical_terms(q_d, qd_d)
            return M_d @ qdd_d + cor_d + grav_d + m.elastic_force(q_d) + D @ qd_d
        if kind == "mixed_state":
            M, _, grav = m.dynamical_terms(q, qd)
            return M @ qdd_d + m.coriolis_matrix(q, qd) @ qd_d + grav + m.elastic_force(q_d) + D @ qd_d
        raise AssertionError(kind)  # computed torque is assembled in split()

    def split(self, t, y, z) -> tuple[Array, Array, Array]:
        """``(u_mb, u_fb, dz/dt)``, each ``u`` ``(m,)``, ``dz/dt`` ``(n,)``."""
        q, qd = self.model.split_state(y)
        ref = self.reference(t)
        e = ref.value - q
        pid = self.gains.feedback(e, ref.rate - qd, z)
        A = self.model.actuation_matrix(q)
        if self.compensation == "none":
            return jnp.zeros((A.shape[1],), y.dtype), A.T @ pid, self.gains.integral_rate(e)
        if self.compensation == "computed_torque":
            M, cor, grav = self.model.dynamical_terms(q, qd)
            model_force = (
                M @ ref.acceleration + cor + grav + self.model.elastic_force(q) + self.model.damping_matrix() @ qd
            )
            feedback_force = M @ jnp.linalg.solve(self.nominal_inertia, pid)
            sol = _solve_actuation(A, jnp.stack([model_force, feedback_force], axis=1))
            return sol[:, 0], sol[:, 1], self.gains.integral_rate(e)
        u_mb = _solve_actuation(A, self._model_force(q, qd, ref))
        return u_mb, A.T @ pid, self.gains.integral_rate(e)

    def __call__(self, t, y, z) -> tuple[Array, Array]:
        """``(u, dz/dt)`` with ``u = u_mb + u_fb``."""
        u_mb, u_fb, z_dot = self.split(t, y, z)
        return u_mb + u_fb, z_dot
