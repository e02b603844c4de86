"""``StrainTracking-v0``: a fully actuated soft segment tracks strain setpoints and trajectories.

The configuration-space control benchmark of the SoRoMoX paper (section V-C1, eqs. 15-17)
as an RL task. Robot: the case-study segment (:func:`sorogym.robots.case_study_pcs`): one
spatial PCS segment, L = 0.1 m, r = 0.02 m, E = 2 kPa, G = 1 kPa, rho = 1070 kg/m^3, all six
strains active, mounted horizontally under gravity, actuated directly in its coordinates
(``A = I``, ``n = m = 6``). Kelvin-Voigt damping ``viscosity = 300 Pa s``: lighter than the
2000 Pa s with which the paper's control case studies are reproduced
(``results/control/README.md``), whose damping time constants (about 1 ms) are far
below any control period, so that the task's dynamics play out at the 100 Hz control rate.

Coordinates ``q = (kappa_x, kappa_y, kappa_z, sigma_x - 1, sigma_y, sigma_z)`` [1/m, -]; the
strain scales ``s = (10, 10, 10, 0.1, 0.1, 0.1)`` (eq. 19) make errors comparable.

* **Reference** (per episode): with probability ``trajectory_probability`` a smooth
  trajectory ``q_d = h(t) a sin(w t + phi)`` on ``(kappa_y, kappa_z, sigma_x - 1)``
  (random amplitudes up to ``(12, 12, 0.06)``, frequencies in [1, 3] rad/s, phases; ``h``
  the quintic ramp of eq. 16 over 1.5 s), else a sequence of setpoints held for
  ``setpoint_duration`` (2.5) s each, with ``kappa_y, kappa_z`` uniform in [-15, 15] 1/m and
  ``sigma_x`` in [0.95, 1.10] (the ranges of eq. 15). Torsion and shear are regulated to
  zero, as in the paper.
* **Action** ``(6,)`` in [-1, 1]: generalized forces ``u = max_force * a`` held for one
  control period (10 ms).
* **Observation** ``(36,)`` float32: ``q / s``, ``qd / (10 s)``, ``q_d / s``,
  ``qd_d / (10 s)``, ``(q_d - q) / s`` and ``u / max_force``.
* **Reward** terms: ``error = -mean(|q_d - q| / s)``, ``success = [max |q_d - q| / s <
  success_tolerance]``, ``effort = -mean((u / max_force)^2)``; scales 1, 0.5, 0.01.
* **Termination**: none (time limit 6 s = 600 steps), except a diverging simulation.
  **Success**: step-wise, in ``metrics["success"]``; ``metrics["tracking_error"]`` is the
  normalised mean error.
* **Experts** (``env.expert(kind)``): ``"computed_torque"`` (default),
  ``"feedforward"`` and ``"potential_compensation"`` (PD feedback: an expert is stateless, so
  no integral), all with the matched gains of eq. 22; see
  :meth:`StrainTracking.build_expert`.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from sorogym.control import ConfigurationController, FunctionReference, PIDGains
from sorogym.env import EpisodeConfig, Expert, SoroEnv, StepOutputs, register
from sorogym.models import check_positive_fields
from sorogym.robots import case_study_pcs

STRAIN_SCALES = (10.0, 10.0, 10.0, 0.1, 0.1, 0.1)
VELOCITY_SCALE = 10.0  # 1/s: velocities are observed as qd / (10 s)
COMMANDED = (1, 2, 3)  # kappa_y, kappa_z, sigma_x - 1


@dataclasses.dataclass(frozen=True)
class RewardScales:
    error: float = 1.0
    success: float = 0.5
    effort: float = 0.01


@dataclasses.dataclass(frozen=True)
class RewardConfig:
    scales: RewardScales = RewardScales()


@dataclasses.dataclass(frozen=True)
class Config(EpisodeConfig):
    # Robot
    num_segments: int = 1
    viscosity: float = 300.0  # Pa s, Kelvin-Voigt material damping (see the module docstring)
    max_force: tuple[float, ...] = (1.5e-3, 4e-3, 1.5e-3, 0.08, 0.02, 0.1)  # generalized forces [N m, N]
    # Reference
    trajectory_probability: float = 0.5
    setpoint_duration: float = 2.5
    setpoint_low: tuple[float, float, float] = (-15.0, -15.0, -0.05)
    setpoint_high: tuple[float, float, float] = (15.0, 15.0, 0.10)
    amplitude: tuple[float, float, float] = (12.0, 12.0, 0.06)
    frequency: tuple[float, float] = (1.0, 3.0)  # rad/s
    ramp_time: float = 1.5
    success_tolerance: float = 0.1  # of the strain scales: 1 1/m, 0.01
    # Timing and integration
    control_dt: float = 0.01
    num_substeps: int = 4
    episode_length_s: float = 6.0
    reward: RewardConfig = RewardConfig()


def default_config() -> Config:
    return Config()


@struct.dataclass
class StrainTrackingTask:
    """Task state: the reference of the commanded strains ``(kappa_y, kappa_z, sigma_x - 1)`` [1/m, 1/m, -]."""

    is_trajectory: jax.Array  # () 1.0: a smooth trajectory, 0.0: a setpoint sequence
    setpoints: jax.Array  # (k, 3) setpoints, each held for setpoint_duration
    amplitude: jax.Array  # (3,) trajectory amplitudes
    frequency: jax.Array  # (3,) trajectory frequencies [rad/s]
    phase: jax.Array  # (3,) trajectory phases [rad]
    setpoint_duration: jax.Array  # () [s]
    ramp_time: jax.Array  # () duration of the trajectory's quintic ramp [s]


def reference_strains(task: StrainTrackingTask, t):
    """``q_d(t)`` ``(6,)`` of an episode's reference (``task`` from :meth:`reset_task`)."""
    k = jnp.clip(jnp.floor(t / task.setpoint_duration).astype(jnp.int32), 0, task.setpoints.shape[0] - 1)
    s = jnp.clip(t / task.ramp_time, 0.0, 1.0)
    ramp = 10 * s**3 - 15 * s**4 + 6 * s**5
    trajectory = ramp * task.amplitude * jnp.sin(task.frequency * t + task.phase)
    commanded = jnp.where(task.is_trajectory > 0, trajectory, task.setpoints[k])
    return jnp.zeros((6,), commanded.dtype).at[jnp.asarray(COMMANDED)].set(commanded)


@register
class StrainTracking(SoroEnv):
    __doc__ = __doc__
    name = "StrainTracking-v0"

    @classmethod
    def default_config(cls) -> Config:
        return default_config()

    def build_model(self, config: Config):
        check_positive_fields(config, ("viscosity", "setpoint_duration", "ramp_time", "success_tolerance"))
        if config.num_segments != 1:
            raise ValueError(f"num_segments: the task is defined for one segment, got {config.num_segments}")
        if len(config.max_force) != 6 or not all(np.isfinite(f) and f > 0 for f in config.max_force):
            raise ValueError(f"max_force: expected 6 positive forces, got {config.max_force}")
        if not 0.0 <= config.trajectory_probability <= 1.0:
            raise ValueError(f"trajectory_probability: must lie in [0, 1], got {config.trajectory_probability}")
        lo, hi = np.asarray(config.frequency)
        if not 0 < lo <= hi:
            raise ValueError(f"frequency: expected 0 < low <= high, got {config.frequency}")
        if np.any(np.asarray(config.setpoint_low) > np.asarray(config.setpoint_high)):
            raise ValueError(
                f"setpoint_low/high: low must not exceed high, got {config.setpoint_low}, {config.setpoint_high}"
            )
        return case_study_pcs(1, dtype=self.dtype, viscosity=config.viscosity)

    @property
    def observation_dim(self) -> int:
        return 36

    @property
    def action_dim(self) -> int:
        return 6

    @property
    def _strain_scales(self):
        return jnp.asarray(STRAIN_SCALES, self.dtype)

    def reset_task(self, key, model):
        c, dt = self.config, self.dtype
        k_mode, k_set, k_amp, k_freq, k_phase = jax.random.split(key, 5)
        num_setpoints = int(np.ceil(c.episode_length_s / c.setpoint_duration)) + 1
        u3 = lambda k, lo, hi, shape=(3,): jax.random.uniform(k, shape, dt, jnp.asarray(lo, dt), jnp.asarray(hi, dt))  # noqa: E731
        task = StrainTrackingTask(
            is_trajectory=(jax.random.uniform(k_mode, (), dt) < c.trajectory_probability).astype(dt),
            setpoints=u3(k_set, c.setpoint_low, c.setpoint_high, (num_setpoints, 3)),
            amplitude=u3(k_amp, -np.asarray(c.amplitude), c.amplitude),
            frequency=u3(k_freq, c.frequency[0], c.frequency[1]),
            phase=u3(k_phase, -np.pi, np.pi),
            setpoint_duration=jnp.asarray(c.setpoint_duration, dt),
            ramp_time=jnp.asarray(c.ramp_time, dt),
        )
        z = jnp.zeros(6, dt)
        return task, z, z, z

    def command(self, model, ps, action):
        return jnp.asarray(self.config.max_force, self.dtype) * action

    def reference(self, task) -> FunctionReference:
        """The episode's reference as a :class:`~sorogym.control.FunctionReference`."""
        return FunctionReference(lambda t: reference_strains(task, t))

    def outputs(self, model, prev, ps, action) -> StepOutputs:
        ref = self.reference(ps.task)(ps.t)
        s = self._strain_scales
        err = (ref.value - ps.q) / s
        u_scaled = ps.u / jnp.asarray(self.config.max_force, self.dtype)
        obs = jnp.concatenate(
            [ps.q / s, ps.qd / (VELOCITY_SCALE * s), ref.value / s, ref.rate / (VELOCITY_SCALE * s), err, u_scaled]
        )
        mean_error = jnp.mean(jnp.abs(err))
        success = (jnp.max(jnp.abs(err)) < self.config.success_tolerance).astype(self.dtype)
        terms = {"error": -mean_error, "success": success, "effort": -jnp.mean(u_scaled**2)}
        return StepOutputs(obs, terms, {"tracking_error": mean_error, "success": success}, info={})

    # -- experts ----------------------------------------------------------------------------

    expert_kinds = ("computed_torque", "feedforward", "potential_compensation")

    def build_expert(self, kind: str, natural_frequency: float = 20.0, damping_ratio: float = 0.9) -> Expert:
        """Configuration-space controllers on the episode's reference, evaluated at each
        control instant and held (zero-order hold), with the matched PD gains
        ``K_p = w_n^2 M(0)``, ``K_d = 2 zeta w_n M(0)`` (``natural_frequency`` [rad/s] well
        well below the 100 Hz control rate); the effort is clipped to
        ``max_force``.

        * ``"computed_torque"`` (default): ``u = M(q) (qdd_d + M0^-1 PD) + C qd + G + K + D qd``.
          Under a zero-order hold much longer than the damping time constant, cancelling
          ``D qd`` with the sampled velocity fails (with 2000 Pa s at 50 Hz it reached 11 %
          step success, against 84 % here).
        * ``"feedforward"``: inverse dynamics along the reference plus PD.
        * ``"potential_compensation"``: ``G(q_d) + K(q_d)`` plus PD.
        """
        compensation = {"potential_compensation": "potential"}.get(kind, kind)
        M0 = jax.jit(lambda q: self.model.inertia_matrix(q))(jnp.zeros(6, self.dtype))
        gains = PIDGains.matched(M0, natural_frequency, damping_ratio)
        max_force = jnp.asarray(self.config.max_force, self.dtype)

        def act(state):
            ps = state.pipeline_state
            model = self.episode_model(ps)
            controller = ConfigurationController(
                model, self.reference(ps.task), gains, compensation, nominal_inertia=M0
            )
            u, _ = controller(ps.t, jnp.concatenate([ps.q, ps.qd]), controller.initial_state())
            return jnp.clip(u / max_force, -1.0, 1.0)

        return Expert(f"{self.name}/{kind}", act)
