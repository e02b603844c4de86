"""``TendonTracking-v0``: a tendon-driven soft arm tracks a target moving on a hemisphere.

The SoRoMoX paper's RL case study (section V-F, Appendix D-F) as its reference setup
defines it.

Robot: one spatial PCS segment (all six strains), length 0.25 m, radius 0.025 m, density
1070 kg/m^3, E = 250 kPa, nu = 0.37, per-strain damping ``1e-3 [1, 1, 1, 1e3, 1e3, 1e3]``
per unit length, no gravity, mounted upright at the origin (backbone along world +z).
Four straight tendons at 0.02 m from the axis, 90 degrees apart (cross-section offsets
``[y, z]`` = (0, +r), (0, -r), (+r, 0), (-r, 0)).

* **Action** ``(4,)`` in [-1, 1]: tendon-tension increments, ``u+ = clip(u + 0.5 a, 0, 25)`` N,
  held for one control period of 1/15 s.
* **Observation** ``(16,)`` float32: tip position [m] (3), tip velocity [m/s] (3), tendon
  tensions [N] (4), target position [m] (3), target velocity [m/s] (3); world frame.
* **Target**: moves on the upper hemisphere of radius 0.10 m centred at (0, 0, 0.15) m,
  starting at its pole (the arm's rest tip position, since L = 0.25 m) with a random
  heading, at a per-episode speed in [0.0075, 0.015] m/s, turning at a smooth random rate
  (random direction changes, a new draw each episode); see :class:`TargetConfig`.
* **Reward**: ``-(d / 0.2 + max(d_dot, 0) / 0.3) + 1.5 [d < 0.01]`` with ``d`` the tip-target
  distance [m] and ``d_dot`` its rate; as terms ``distance = -d``, ``approach =
  -max(d_dot, 0)``, ``success = [d < success_radius]`` with scales 5, 10/3 and 1.5.
* **Termination**: none (time limit 7 s = 105 steps, applied by the wrappers), except a
  diverging simulation.
* **Success**: step-wise, tip within 10 mm of the target (``metrics["success"]``; its
  episode mean is the success rate), and ``metrics["tracking_error"]`` = d [m].
* **Experts** (``env.expert(kind)``): ``"quasi_static"`` (default; tendon-space steps on the
  static tip sensitivity towards the target's next position) and ``"hoclf"``; see
  :meth:`TendonTracking.build_expert` and ``results/experts.md``.
"""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from sorogym.actuation import Tendons
from sorogym.control import SecondOrderGains
from sorogym.env import RANDOMIZATION_LIMITS, EpisodeConfig, Expert, PhysicsState, SoroEnv, StepOutputs, register
from sorogym.models import PCS, RodParams, check_positive_fields

from ._common import clf_tensions, quasi_static_tensions, tip_position_velocity


@dataclasses.dataclass(frozen=True)
class RewardScales:
    distance: float = 1.0 / 0.2
    approach: float = 1.0 / 0.3
    success: float = 1.5


@dataclasses.dataclass(frozen=True)
class RewardConfig:
    scales: RewardScales = RewardScales()


@dataclasses.dataclass(frozen=True)
class TargetConfig:
    """Hemisphere target path (world frame, SI units, angles in rad).

    The target starts at polar angle ``start_polar`` from the vertical (0: the pole, which is
    the arm's rest tip position) with a random heading and moves along the sphere at a
    per-episode speed ``speed * U(speed_fraction)`` [m/s], turning at a smooth random rate:
    the sum of two sinusoids with amplitudes ``U(-1, 1) turn_rate`` [rad/s] and frequencies
    ``U(turn_frequency)`` [Hz]. Near ``max_polar`` the heading is reflected back up, so the
    target stays on the upper hemisphere.
    """

    center: tuple[float, float, float] = (0.0, 0.0, 0.15)
    radius: float = 0.10
    speed: float = 0.015
    speed_fraction: tuple[float, float] = (0.5, 1.0)
    start_polar: tuple[float, float] = (0.0, 0.0)
    turn_rate: float = 1.0
    turn_frequency: tuple[float, float] = (0.05, 0.5)
    max_polar: float = math.pi / 2 - 0.15


@dataclasses.dataclass(frozen=True)
class Config(EpisodeConfig):
    # Robot
    length: float = 0.25
    radius: float = 0.025
    density: float = 1070.0
    young_modulus: float = 2.5e5
    poisson_ratio: float = 0.37
    damping: tuple[float, ...] = (1e-3, 1e-3, 1e-3, 1.0, 1.0, 1.0)  # per strain, per metre
    gravity: tuple[float, float, float] = (0.0, 0.0, 0.0)
    tendon_offset: float = 0.02
    # Actuation
    tendon_force_increment: float = 0.5  # N per unit action
    max_tendon_force: float = 25.0  # N
    # Timing and integration
    control_dt: float = 1.0 / 15.0
    num_substeps: int = 5
    integrator: str = "trapezoid"
    episode_length_s: float = 7.0
    # Task
    target: TargetConfig = TargetConfig()
    success_radius: float = 0.01
    reward: RewardConfig = RewardConfig()
    randomization: tuple = ()  # ((field, low, high), ...) multiplicative, per reset


def default_config() -> Config:
    return Config()


# -- shared task code (also used by other physics backends) -------------------------------


@struct.dataclass
class TrackingTask:
    """Task state: the target's motion at ``t = k control_dt``, ``k = 0..max_episode_steps`` (world frame)."""

    path: jax.Array  # (T + 1, 3) target positions [m]
    path_velocity: jax.Array  # (T + 1, 3) target velocities [m/s]


def hemisphere_target_path(key: jax.Array, cfg: TargetConfig, num_points: int, dt: float, dtype=jnp.float32):
    """Target positions and velocities ``(num_points, 3)`` [m, m/s] at times ``k dt``.

    Moves along great circles on the sphere (exact geodesic steps of length ``speed dt``),
    the heading turning at the sampled rate and reflected at ``max_polar`` (see
    :class:`TargetConfig`); velocities are the exact tangent velocities.
    """
    k = jax.random.split(key, 8)
    u = lambda kk, lo, hi: jax.random.uniform(kk, (), dtype, lo, hi)  # noqa: E731
    speed = cfg.speed * u(k[0], *cfg.speed_fraction)
    polar0, azimuth0, heading0 = u(k[1], *cfg.start_polar), u(k[2], 0.0, 2 * math.pi), u(k[3], 0.0, 2 * math.pi)
    amps = cfg.turn_rate * jax.random.uniform(k[4], (2,), dtype, -1.0, 1.0)
    freqs = jax.random.uniform(k[5], (2,), dtype, *cfg.turn_frequency)
    phases = jax.random.uniform(k[6], (2,), dtype, 0.0, 2 * math.pi)
    R = jnp.asarray(cfg.radius, dtype)
    c = jnp.asarray(cfg.center, dtype)
    up = jnp.array([0.0, 0.0, 1.0], dtype)
    n0 = jnp.stack([jnp.sin(polar0) * jnp.cos(azimuth0), jnp.sin(polar0) * jnp.sin(azimuth0), jnp.cos(polar0)])
    # Tangent frame at n0 (east, north), robust at the pole; heading = angle from east.
    east = jnp.array([-jnp.sin(azimuth0), jnp.cos(azimuth0), 0.0], dtype)
    north = jnp.cross(n0, east)
    e0 = jnp.cos(heading0) * east + jnp.sin(heading0) * north
    step_angle = speed * dt / R
    cos_max = jnp.cos(jnp.asarray(cfg.max_polar, dtype))

    def body(carry, t):
        n, e = carry
        out = (c + R * n, speed * e)
        # turn the heading about the normal, then reflect it upwards near the boundary
        w = jnp.sum(amps * jnp.sin(2 * math.pi * freqs * t + phases))
        a = w * dt
        e = jnp.cos(a) * e + jnp.sin(a) * jnp.cross(n, e)
        m = up - jnp.dot(up, n) * n
        m = m / jnp.maximum(jnp.linalg.norm(m), 1e-9)
        e = jnp.where((n[2] < cos_max) & (jnp.dot(e, m) < 0), e - 2 * jnp.dot(e, m) * m, e)
        # geodesic step
        n, e = jnp.cos(step_angle) * n + jnp.sin(step_angle) * e, jnp.cos(step_angle) * e - jnp.sin(step_angle) * n
        n = n / jnp.linalg.norm(n)
        e = e - jnp.dot(e, n) * n
        return (n, e / jnp.linalg.norm(e)), out

    times = jnp.arange(num_points, dtype=dtype) * dt
    _, (pos, vel) = jax.lax.scan(body, (n0, e0), times)
    return pos, vel


def tracking_observation(tip_pos, tip_vel, tendon_forces, target_pos, target_vel):
    """The 16-D observation (see module docstring)."""
    return jnp.concatenate([tip_pos, tip_vel, tendon_forces, target_pos, target_vel])


def tracking_reward_terms(tip_pos, tip_vel, target_pos, target_vel, success_radius):
    """Unscaled reward terms and the distance ``d`` [m]."""
    e = tip_pos - target_pos
    d = jnp.linalg.norm(e)
    d_dot = jnp.dot(tip_vel - target_vel, e / (d + 1e-8))
    terms = {
        "distance": -d,
        "approach": -jnp.maximum(d_dot, 0.0),
        "success": (d < success_radius).astype(d.dtype),
    }
    return terms, d


def increment_tendon_forces(u, action, increment, max_force):
    """``clip(u + increment * action, 0, max_force)``."""
    return jnp.clip(u + increment * action, 0.0, max_force)


# -- environment -----------------------------------------------------------------------


@register
class TendonTracking(SoroEnv):
    __doc__ = __doc__
    name = "TendonTracking-v0"
    # Moduli down to x0.8 (not the rods' default x0.5): held extreme tensions on an arm
    # softer than that diverged in 1 of 3,073 soak episodes (scripts/soak_envs.py).
    randomization_limits = {**RANDOMIZATION_LIMITS, "young_modulus": (0.8, 2.0), "shear_modulus": (0.8, 2.0)}

    @classmethod
    def default_config(cls) -> Config:
        return default_config()

    def build_model(self, config: Config) -> PCS:
        check_positive_fields(
            config,
            ("length", "radius", "tendon_offset", "tendon_force_increment", "max_tendon_force", "success_radius"),
        )
        if config.tendon_offset >= config.radius:
            raise ValueError(
                f"tendon_offset: must lie inside the cross-section (< radius {config.radius}), "
                f"got {config.tendon_offset}"
            )
        if len(config.damping) != 6:
            raise ValueError(f"damping: expected 6 per-strain coefficients, got {len(config.damping)}")
        params = RodParams.upright(
            length=config.length,
            radius=config.radius,
            density=config.density,
            young_modulus=config.young_modulus,
            poisson_ratio=config.poisson_ratio,
            damping=np.asarray(config.damping)[None, :],
            gravity=list(config.gravity),
            dtype=self.dtype,
        )
        r = config.tendon_offset
        offsets = np.array([[0.0, r], [0.0, -r], [r, 0.0], [-r, 0.0]])[:, None, :]
        return PCS(params, actuation=Tendons(jnp.asarray(offsets, self.dtype)))

    @property
    def observation_dim(self) -> int:
        return 16

    @property
    def action_dim(self) -> int:
        return 4

    def _tip(self, model, ps):
        return tip_position_velocity(model, ps.q, ps.qd)

    @staticmethod
    def target_at(task: TrackingTask, steps):
        """Target position and velocity ``(3,)`` each [m, m/s] after ``steps`` control steps
        of the episode whose task state is ``task``."""
        k = jnp.minimum(steps, task.path.shape[0] - 1)
        return task.path[k], task.path_velocity[k]

    def reset_task(self, key, model):
        pos, vel = hemisphere_target_path(
            key, self.config.target, self.max_episode_steps + 1, self.control_dt, self.dtype
        )
        n, m = model.num_dofs, model.num_actuators
        z = jnp.zeros
        return TrackingTask(path=pos, path_velocity=vel), z(n, self.dtype), z(n, self.dtype), z(m, self.dtype)

    def command(self, model, ps: PhysicsState, action):
        c = self.config
        return increment_tendon_forces(ps.u, action, c.tendon_force_increment, c.max_tendon_force)

    def outputs(self, model, prev, ps, action) -> StepOutputs:
        # tip kinematics once per step, shared by the observation, reward and metrics
        tip, tip_vel = self._tip(model, ps)
        return self.task_outputs(tip, tip_vel, ps.u, ps.task, ps.steps)

    def task_outputs(self, tip, tip_vel, tensions, task: TrackingTask, steps) -> StepOutputs:
        """The task's outputs from the physical state it sees: tip position and velocity
        ``(3,)`` [m, m/s] (world frame), tendon tensions ``(4,)`` [N], the episode's task
        state and the control steps since reset. The whole task definition in one place,
        used by every physics backend of this task (the PCS model here, the Cosserat rod of
        ``TendonTracking-Elastica-v0``)."""
        target, target_vel = self.target_at(task, steps)
        terms, d = tracking_reward_terms(tip, tip_vel, target, target_vel, self.config.success_radius)
        metrics = {"tracking_error": d, "success": terms["success"], "tendon_force_mean": jnp.mean(tensions)}
        return StepOutputs(tracking_observation(tip, tip_vel, tensions, target, target_vel), terms, metrics, info={})

    # -- expert -----------------------------------------------------------------------------

    expert_kinds = ("quasi_static", "hoclf")

    def build_expert(self, kind: str, gain: float = 0.8, clf_frequency: float = 6.0) -> Expert:
        """Tendon-space tracking of the moving target; the action is the tension increment
        towards the controller's tensions, saturated at one ``tendon_force_increment`` per
        step.

        * ``"quasi_static"`` (default): one bounded least-squares step on the static tip
          sensitivity moves the equilibrium a fraction ``gain`` of the way to where the
          target will be at the end of the control period
          (:func:`sorogym.control.quasi_static_tension_control`).
        * ``"hoclf"``: the minimum-norm tensions satisfying the HOCLF condition on the
          distance to the target extrapolated at its current velocity, critically damped at
          ``clf_frequency`` [rad/s] (:func:`sorogym.control.clf_cbf_control`)."""
        c = self.config
        gains = SecondOrderGains.critically_damped(clf_frequency)

        def act(state):
            ps = state.pipeline_state
            model = self.episode_model(ps)
            pos, vel = self.target_at(ps.task, ps.steps)
            if kind == "quasi_static":
                u = quasi_static_tensions(
                    model, ps, pos + vel * self.control_dt, c.max_tendon_force, gain, max_step=c.tendon_force_increment
                )
            else:
                t_now = ps.t
                u = clf_tensions(model, ps, lambda t: pos + vel * (t - t_now), c.max_tendon_force, gains)
            return jnp.clip((u - ps.u) / c.tendon_force_increment, -1.0, 1.0)

        return Expert(f"{self.name}/{kind}", act)

    def render_scene(self, ps):
        return self.add_task_to_scene(super().render_scene(ps), ps.task, int(ps.steps))

    def add_task_to_scene(self, scene: dict, task: TrackingTask, steps: int) -> dict:
        """``scene`` with the target marker and the task's fixed view bounds (shared by the
        renderers of every backend)."""
        k = min(int(steps), task.path.shape[0] - 1)
        scene["markers"].append(("target", np.asarray(task.path[k]), "tab:green"))
        c, R = np.asarray(self.config.target.center), self.config.target.radius
        half = max(R, 0.5 * self.config.length) * 1.4
        scene["bounds"] = ((c[0] - half, c[0] + half), (c[1] - half, c[1] + half), (0.0, 2 * half))
        return scene
