"""``SoftPendulumSwingUp-v0``: swing a soft pendulum up from hanging and balance it upright.

Robot: the articulated soft pendulum (:func:`sorogym.robots.soft_pendulum`): a soft rod of
0.5 m, 0.5 kg and radius 20 mm on a free pivot at the world origin, as ``num_links`` = 4
rigid links joined by elastic joints (the rod's lumped bending stiffness ``E I / (L / n)``
with E = 1 MPa, Kelvin-Voigt dampers), swinging in the world x-z plane under gravity -z.
``q_0`` is the pivot angle (0: hanging, pi: upright), ``q_1..q_3`` the bending of the
joints. A torque of at most ``max_torque`` = 0.5 N m acts at the pivot: less than half of
what a quasi-static lift needs (1.13 N m), so the pendulum must pump energy into its swing
before it can be caught upright, and its soft body bends under the motion.

Each episode starts hanging near rest: every joint angle and rate uniform in
``+/- initial_noise`` [rad, rad/s].

* **Action** ``(1,)`` in [-1, 1]: the pivot torque ``max_torque a`` [N m].
* **Observation** ``(16,)`` float32: ``cos q_0``, ``sin q_0`` (the pivot angle wraps),
  ``q_1..q_3`` [rad], ``qd`` (4) [rad/s], tip position (3) and velocity (3) [m, m/s]
  (world frame), applied torque (1) [N m].
* **Reward** terms: ``height = z_tip / L`` in [-1, 1] (1: the tip straight above the
  pivot), ``upright = [z_tip > success_height L]``, ``velocity = -|v_tip|^2 / (2 g L)``
  (kinetic energy per unit mass over the potential scale), ``effort = -(tau /
  max_torque)^2``; scales 1, 1, 0.1, 0.05.
* **Termination**: none (time limit 8 s = 200 steps of 40 ms), except a diverging
  simulation. ``metrics["tip_height"]`` (``z_tip / L``) and ``metrics["success"]`` (the tip
  above ``success_height L`` and slower than ``success_speed``).
* **Expert** (``env.expert()``): ``"energy_lqr"``: energy pumping through the pivot until
  the pendulum nears the upright state, then an LQR on the pendulum linearised at the
  upright straight configuration catches and balances it (:meth:`build_expert`).
* **Domain randomisation** fields: ``mass``, ``stiffness``, ``damping`` (per joint/link).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from sorogym.env import EpisodeConfig, Expert, SoroEnv, StepOutputs, register
from sorogym.models import ArticulatedSoftRobot, check_positive_fields
from sorogym.robots import soft_pendulum, soft_pendulum_tip

_GRAVITY = 9.81


@dataclasses.dataclass(frozen=True)
class RewardScales:
    height: float = 1.0
    upright: float = 1.0
    velocity: float = 0.1
    effort: float = 0.05


@dataclasses.dataclass(frozen=True)
class RewardConfig:
    scales: RewardScales = RewardScales()


@dataclasses.dataclass(frozen=True)
class Config(EpisodeConfig):
    # Robot (soft_pendulum's arguments; stiffness/damping None: the lumped silicone rod)
    num_links: int = 4
    length: float = 0.5  # m
    mass: float = 0.5  # kg
    radius: float = 0.02  # m
    stiffness: float | None = None  # N m/rad per bending joint
    damping: float | None = None  # N m s/rad per joint
    max_torque: float = 0.5  # N m
    # Task
    initial_noise: float = 0.05  # rad and rad/s
    success_height: float = 0.9  # fraction of the length
    success_speed: float = 0.5  # m/s
    # Timing and integration
    control_dt: float = 0.04
    num_substeps: int = 8  # 5 ms: ~0.25 % of L against Tsit5 over an episode (4 steps: ~1 %)
    episode_length_s: float = 8.0
    reward: RewardConfig = RewardConfig()


def default_config() -> Config:
    return Config()


def _wrap(angle):
    """Angle wrapped to [-pi, pi)."""
    return jnp.mod(angle + jnp.pi, 2.0 * jnp.pi) - jnp.pi


@struct.dataclass
class SwingUpTask:
    """Task state: none (the task is the same every episode; only the initial state is random)."""


@register
class SoftPendulumSwingUp(SoroEnv):
    __doc__ = __doc__
    name = "SoftPendulumSwingUp-v0"
    randomization_limits = {"mass": (0.8, 1.25), "stiffness": (0.5, 2.0), "damping": (0.5, 2.0)}

    @classmethod
    def default_config(cls) -> Config:
        return default_config()

    def build_model(self, config: Config) -> ArticulatedSoftRobot:
        check_positive_fields(config, ("max_torque", "success_height", "success_speed"))
        if not (np.isfinite(config.initial_noise) and config.initial_noise >= 0):
            raise ValueError(f"initial_noise: must be >= 0 and finite, got {config.initial_noise!r}")
        if config.success_height > 1.0:
            raise ValueError(f"success_height: a fraction of the length in (0, 1], got {config.success_height!r}")
        return soft_pendulum(
            config.num_links,
            config.length,
            config.mass,
            config.radius,
            config.stiffness,
            config.damping,
            "base_torque",
            dtype=self.dtype,
        )

    @property
    def observation_dim(self) -> int:
        n = self.model.num_dofs
        return 2 + (n - 1) + n + 6 + 1

    @property
    def action_dim(self) -> int:
        return 1

    def reset_task(self, key, model):
        n, eps = model.num_dofs, self.config.initial_noise
        kq, kv = jax.random.split(key)
        q0 = jax.random.uniform(kq, (n,), self.dtype, -eps, eps)
        qd0 = jax.random.uniform(kv, (n,), self.dtype, -eps, eps)
        return SwingUpTask(), q0, qd0, jnp.zeros(1, self.dtype)

    def command(self, model, ps, action):
        return self.config.max_torque * jnp.clip(action, -1.0, 1.0)

    def outputs(self, model, prev, ps, action) -> StepOutputs:
        c = self.config
        tip, tip_vel = jax.jvp(lambda q: self.tip_position(model, q), (ps.q,), (ps.qd,))
        height = tip[2] / c.length
        speed2 = jnp.sum(tip_vel * tip_vel)
        upright = (height > c.success_height).astype(height.dtype)
        terms = {
            "height": height,
            "upright": upright,
            "velocity": -speed2 / (2.0 * _GRAVITY * c.length),
            "effort": -jnp.sum((ps.u / c.max_torque) ** 2),
        }
        success = upright * (speed2 < c.success_speed**2).astype(height.dtype)
        obs = jnp.concatenate([jnp.cos(ps.q[:1]), jnp.sin(ps.q[:1]), ps.q[1:], ps.qd, tip, tip_vel, ps.u])
        return StepOutputs(obs, terms, {"tip_height": height, "success": success}, info={})

    def tip_position(self, model, q):
        return soft_pendulum_tip(model, q)

    # -- expert -----------------------------------------------------------------------------

    expert_kinds = ("energy_lqr",)

    def upright_lqr_gain(self, angle_weight: float = 10.0, rate_weight: float = 1.0) -> np.ndarray:
        """Discrete-time LQR state feedback ``(1, 2n)`` for the torque held over each control
        period, on the pendulum linearised at the upright straight configuration
        ``q* = (pi, 0, ..., 0)``, ``qd = 0`` (an unstable equilibrium with no torque):
        ``M dqdd = -(dG/dq + S) dq - D dqd + B tau``, discretised exactly (zero-order hold,
        ``control_dt``); cost per period ``angle_weight |dq|^2 + rate_weight |dqd|^2 +
        (tau / max_torque)^2``; solved in float64 (scipy's discrete Riccati solver)."""
        import scipy.linalg

        model, n = self.model, self.model.num_dofs
        q_up = jnp.zeros(n, self.dtype).at[0].set(jnp.pi)
        M, dG, B = jax.jit(
            lambda q: (model.inertia_matrix(q), jax.jacfwd(model.gravitational_force)(q), model.actuation_matrix(q))
        )(q_up)
        M, dG, B = (np.asarray(x, np.float64) for x in (M, dG, B))
        S = np.asarray(model.stiffness_matrix(), np.float64)
        D = np.asarray(model.damping_matrix(), np.float64)
        Minv = np.linalg.inv(M)
        A = np.block([[np.zeros((n, n)), np.eye(n)], [-Minv @ (dG + S), -Minv @ D]])
        Bc = np.concatenate([np.zeros((n, 1)), Minv @ B])
        # exact zero-order-hold discretisation: expm of the augmented matrix
        augmented = np.zeros((2 * n + 1, 2 * n + 1))
        augmented[: 2 * n, : 2 * n], augmented[: 2 * n, 2 * n :] = A, Bc
        Phi = scipy.linalg.expm(augmented * self.config.control_dt)
        Ad, Bd = Phi[: 2 * n, : 2 * n], Phi[: 2 * n, 2 * n :]
        Q = np.diag(np.r_[np.full(n, angle_weight), np.full(n, rate_weight)])
        R = np.array([[1.0 / self.config.max_torque**2]])
        P = scipy.linalg.solve_discrete_are(Ad, Bd, Q, R)
        return np.linalg.solve(R + Bd.T @ P @ Bd, Bd.T @ P @ Ad)

    def build_expert(self, kind: str, pump_gain: float = 50.0, catch_angle: float = 0.6, **lqr_weights) -> Expert:
        """``"energy_lqr"``: swing-up by energy pumping, balance by LQR.

        * Pumping: ``tau = max_torque clip(pump_gain (E* - E) w, -1, 1)``, with ``E`` the
          total energy (kinetic, gravitational, elastic), ``E*`` that of the upright
          straight pendulum at rest and ``w`` the swing rate: the angular momentum about the
          pivot ``(M qd)_0`` over the inertia about it ``M_00`` (the joint springs cannot
          change it, so unlike ``qd_0`` it does not follow the bending vibrations). The
          torque pushes with the swing while ``E < E*`` and against it above, so the swing
          grows towards the upright energy level.
        * Catching: once the pivot is within ``catch_angle`` [rad] of upright and every
          bending joint within ``catch_angle`` of straight, the LQR of
          :meth:`upright_lqr_gain` (``lqr_weights``) takes over, clipped to the torque bound.
        """
        c = self.config
        gain = jnp.asarray(self.upright_lqr_gain(**lqr_weights), self.dtype)

        def act(state):
            ps = state.pipeline_state
            model = self.episode_model(ps)
            n = model.num_dofs
            q_up = jnp.zeros(n, ps.q.dtype).at[0].set(jnp.pi)
            target_energy = model.potential_energy(q_up)
            energy = model.total_energy(jnp.concatenate([ps.q, ps.qd]))
            # the swing's rate: the angular momentum about the pivot, (M qd)_0, over the
            # pendulum's inertia about it (the joint springs cannot change it, so unlike the
            # pivot rate it carries no bending vibration for the pumping to feed)
            M = model.inertia_matrix(ps.q)
            swing_rate = (M[0] @ ps.qd) / M[0, 0]
            pump = jnp.clip(pump_gain * (target_energy - energy) * swing_rate, -1.0, 1.0)
            error = jnp.concatenate([_wrap(ps.q[:1] - jnp.pi), ps.q[1:], ps.qd])
            lqr = jnp.clip(-(gain @ error)[0] / c.max_torque, -1.0, 1.0)
            near = jnp.all(jnp.abs(error[:n]) < catch_angle)
            return jnp.where(near, lqr, pump)[None]

        return Expert(f"{self.name}/{kind}", act)

    def render_scene(self, ps):
        model = self._model_for(ps.params)
        q = jnp.asarray(ps.q)
        poses = np.asarray(jax.vmap(lambda s: model.forward_kinematics(q, s))(jnp.arange(model.num_dofs + 1)))
        tip = np.asarray(soft_pendulum_tip(model, q))
        backbone = np.concatenate([poses[:, :3, 3], tip[None]], axis=0)
        half = 1.1 * self.config.length
        return {
            "backbone": backbone,
            "radius": np.full(len(backbone), self.config.radius),
            "tendons": [],
            "markers": [("pivot", np.zeros(3), "tab:gray")],
            "spheres": [],
            "bounds": ((-half, half), (-half, half), (-half, half)),
            "title": f"{self.name}  t = {float(ps.t):.2f} s",
        }
