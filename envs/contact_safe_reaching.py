"""``ContactSafeReaching-v0``: reach a goal among spherical obstacles without pressing on them.

The SoRoMoX paper's safety scenario (section V-E, Appendix D-E) as an RL task with a
safe-RL cost.

Robot: two spatial PCS segments of 0.15 m (all six strains each), radius 36 mm, density
1070 kg/m^3, E = G = 20 kPa, per-strain damping ``1e-3 [1, 1, 1, 1e3, 1e3, 1e3]`` per unit
length, gravity +9.81 m/s^2 along world +z (as in the reference scenario), mounted upright
at the origin. Six straight tendons 31 mm from the axis: tendons 1-3 at 120, 240, 0 degrees
end at the first segment's tip, tendons 4-6 at 180, 300, 60 degrees at the robot's tip.
Obstacles: three spheres of radius 20 mm centred at (0.10, 0.08, 0.24), (0.12, 0.06,
0.32), (0.04, 0.055, 0.20) m. Each sphere pushes on the robot, probed at 20 backbone points,
with a penalty force of stiffness 1000 N/m at its deepest penetration
(:func:`sorogym.contact.rod_obstacle_contact`); the force bound is 5 N.

Goals: with ``randomize_scene`` (default) each reset draws a goal from a bank of tip
positions at static equilibria under random admissible tensions (so every goal is reachable
in free space; goals inside an obstacle are skipped) and perturbs the obstacle centres
uniformly by up to ``obstacle_jitter`` [m] per axis. Without it, the fixed ``goal`` is used:
by default the reference goal (0.10, 0.05, 0.32) m, which lies beyond the reach of pull-only
tendons (the reference controller used signed tendon forces), so it measures how close a
policy gets rather than success.

* **Action** ``(6,)`` in [-1, 1]: absolute tendon tensions ``max_tension (a + 1) / 2`` [N].
* **Observation** ``(54,)`` float32: ``q`` (12), ``qd`` (12), tip position (3) and velocity
  (3), goal (3), tensions (6), obstacle centres and radii (3 x 4), the minimum clearance
  to each obstacle [m] (3).
* **Reward** terms: ``distance = -|tip - goal|`` [m], ``success = [distance < 1 cm]``,
  ``contact = -max(F_peak - F_max, 0)`` [N], ``effort = -mean((u / max_tension)^2)``.
* **Cost** ``info["cost"] = max(F_peak - F_max, 0)`` [N] (safe-RL convention), with
  ``metrics["peak_contact_force"] = F_peak``, the largest obstacle force of the step.
* **Termination**: none (time limit 8 s, applied by the wrappers), except divergence.
* **Experts** (``env.expert(kind)``): ``"hoclf_hocbf"`` (default; the paper's safe
  controller) and ``"hoclf"`` (safety-unaware); see :meth:`ContactSafeReaching.build_expert`.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from sorogym.contact import rod_obstacle_contact, sphere_obstacles
from sorogym.control import SecondOrderGains, contact_barrier
from sorogym.env import EpisodeConfig, Expert, SoroEnv, StepOutputs, register
from sorogym.models import PCS, check_positive_fields
from sorogym.robots import tendon_ring_pcs

from ._common import (
    action_from_tensions,
    clf_tensions,
    reaching_terms,
    tensions_from_action,
    tip_position_velocity,
)
from .goals import cached_goal_bank, robot_key, sample_goal

_ROBOT_FIELDS = (
    "segment_lengths",
    "radius",
    "density",
    "young_modulus",
    "shear_modulus",
    "gravity",
    "tendon_offset",
    "tendon_angles_deg",
    "tendon_spans",
)


@dataclasses.dataclass(frozen=True)
class RewardScales:
    distance: float = 5.0
    success: float = 1.0
    contact: float = 0.5
    effort: float = 0.05


@dataclasses.dataclass(frozen=True)
class RewardConfig:
    scales: RewardScales = RewardScales()


@dataclasses.dataclass(frozen=True)
class Config(EpisodeConfig):
    # Robot
    segment_lengths: tuple[float, float] = (0.15, 0.15)
    radius: float = 0.036
    density: float = 1070.0
    young_modulus: float = 2.0e4
    shear_modulus: float = 2.0e4
    damping: tuple[float, ...] = (1e-3, 1e-3, 1e-3, 1.0, 1.0, 1.0)  # per strain, per metre
    gravity: tuple[float, float, float] = (0.0, 0.0, 9.81)
    tendon_offset: float = 0.031
    tendon_angles_deg: tuple[float, ...] = (120.0, 240.0, 0.0, 180.0, 300.0, 60.0)
    tendon_spans: tuple[int, ...] = (1, 1, 1, 2, 2, 2)
    max_tension: float = 3.0  # N (about 2 rad of bending per tendon pair at full tension)
    # Scene
    goal: tuple[float, float, float] = (0.10, 0.05, 0.32)
    obstacle_centers: tuple = ((0.10, 0.08, 0.24), (0.12, 0.06, 0.32), (0.04, 0.055, 0.20))
    obstacle_radii: tuple[float, ...] = (0.02, 0.02, 0.02)
    randomize_scene: bool = True
    obstacle_jitter: float = 0.02
    num_goal_candidates: int = 512
    contact_stiffness: float = 1000.0  # N/m
    contact_points: int = 20
    force_bound: float = 5.0  # N
    success_radius: float = 0.01
    # Timing and integration
    control_dt: float = 1.0 / 15.0
    num_substeps: int = 6  # tip error 9.1e-3 L against float64 Tsit5 (8: 6.9e-3, 5: 1.07e-2)
    episode_length_s: float = 8.0
    reward: RewardConfig = RewardConfig()


def default_config() -> Config:
    return Config()


@struct.dataclass
class ObstacleReachingTask:
    """Task state: the goal and the spherical obstacles (world frame)."""

    goal: jax.Array  # (3,) goal position [m]
    centers: jax.Array  # (k, 3) obstacle centres [m]
    radii: jax.Array  # (k,) obstacle radii [m]


@register
class ContactSafeReaching(SoroEnv):
    __doc__ = __doc__
    name = "ContactSafeReaching-v0"
    reference_overrides = {"randomize_scene": False}

    @classmethod
    def default_config(cls) -> Config:
        return default_config()

    def build_model(self, config: Config) -> PCS:
        check_positive_fields(
            config, ("max_tension", "obstacle_radii", "contact_stiffness", "force_bound", "success_radius")
        )
        if np.asarray(config.obstacle_centers).shape != (len(config.obstacle_radii), 3):
            raise ValueError("obstacle_centers: expected one (x, y, z) per obstacle radius")
        if config.contact_points < 2:
            raise ValueError(f"contact_points: need at least 2, got {config.contact_points}")
        return tendon_ring_pcs(config, "upright", self.dtype)

    @property
    def observation_dim(self) -> int:
        k = len(self.config.obstacle_radii)
        n = self.model.num_dofs
        return 2 * n + 9 + self.model.num_actuators + 5 * k

    @property
    def action_dim(self) -> int:
        return self.model.num_actuators

    def _probe_points(self, model):
        return jnp.linspace(0.0, model.total_length, self.config.contact_points)

    def __init__(self, config=None, **overrides):
        super().__init__(config, **overrides)
        c = self.config
        self.goal_bank = None
        if c.randomize_scene:
            self.goal_bank = cached_goal_bank(
                robot_key(c, _ROBOT_FIELDS), self.model, c.num_goal_candidates, c.max_tension
            )

    def reset_task(self, key, model):
        c = self.config
        goal = jnp.asarray(c.goal, self.dtype)
        centers = jnp.asarray(c.obstacle_centers, self.dtype)
        radii = jnp.asarray(c.obstacle_radii, self.dtype)
        if c.randomize_scene:
            kg, ko = jax.random.split(key)
            centers = centers + jax.random.uniform(ko, centers.shape, self.dtype, -c.obstacle_jitter, c.obstacle_jitter)
            goal = sample_goal(kg, jnp.asarray(self.goal_bank, self.dtype), centers, radii, c.radius)[:3]
        task = ObstacleReachingTask(goal=goal, centers=centers, radii=jnp.asarray(c.obstacle_radii, self.dtype))
        n, m = model.num_dofs, model.num_actuators
        return task, jnp.zeros(n, self.dtype), jnp.zeros(n, self.dtype), jnp.zeros(m, self.dtype)

    def command(self, model, ps, action):
        return tensions_from_action(action, self.config.max_tension)

    def _contact(self, model, q, task: ObstacleReachingTask):
        obstacles = sphere_obstacles(task.centers, task.radii)
        return rod_obstacle_contact(model, q, self._probe_points(model), obstacles, self.config.contact_stiffness)

    def external_force(self, model, q, qd, ps):
        return self._contact(model, q, ps.task)[0]

    def outputs(self, model, prev, ps, action) -> StepOutputs:
        # tip kinematics and contact once per step, shared by every output
        c = self.config
        tip, tip_vel = tip_position_velocity(model, ps.q, ps.qd)
        _, forces, depths = self._contact(model, ps.q, ps.task)
        peak = jnp.max(forces)
        excess = jnp.maximum(peak - c.force_bound, 0.0)
        t = ps.task
        d, terms = reaching_terms(tip, t.goal, ps.u, c.success_radius, c.max_tension)
        terms["contact"] = -excess
        obstacles = jnp.concatenate([t.centers, t.radii[:, None]], axis=-1).reshape(-1)
        obs = jnp.concatenate([ps.q, ps.qd, tip, tip_vel, t.goal, ps.u, obstacles, -jnp.max(depths, axis=0)])
        metrics = {"goal_distance": d, "success": terms["success"], "peak_contact_force": peak}
        return StepOutputs(obs, terms, metrics, info={"cost": excess})

    # -- experts: the paper's HOCLF and HOCLF+HOCBF controllers ---------------------------

    expert_kinds = ("hoclf_hocbf", "hoclf")

    def build_expert(self, kind: str, clf_frequency: float = 6.0, cbf_frequency: float = 4.0) -> Expert:
        """``"hoclf_hocbf"``: the minimum-norm input satisfying the HOCLF condition on the tip
        distance, projected onto the HOCBF half-space of the contact-force barrier (safety
        first); ``"hoclf"``: the same without the barrier (safety-unaware). Both stay within
        the tension box ``[0, max_tension]`` and run at the control rate (zero-order hold);
        the contact force of the current state enters the drift. Gains are critically
        damped at ``clf_frequency`` and ``cbf_frequency`` [rad/s]."""
        c = self.config
        clf_gains = SecondOrderGains.critically_damped(clf_frequency)
        cbf_gains = SecondOrderGains.critically_damped(cbf_frequency)
        safe = kind == "hoclf_hocbf"

        def act(state):
            ps = state.pipeline_state
            model = self.episode_model(ps)
            goal = ps.task.goal
            cbf = None
            if safe:
                cbf = contact_barrier(
                    model, self._probe_points(model), ps.task.centers, ps.task.radii, c.contact_stiffness, c.force_bound
                )
            u = clf_tensions(
                model,
                ps,
                lambda t: goal,
                c.max_tension,
                clf_gains,
                cbf,
                cbf_gains,
                tau_ext=self.external_force(model, ps.q, ps.qd, ps),
            )
            return action_from_tensions(u, c.max_tension)

        return Expert(f"{self.name}/{kind}", act)

    def render_scene(self, ps):
        scene = super().render_scene(ps)
        scene["markers"].append(("goal", np.asarray(ps.task.goal), "tab:green"))
        scene["spheres"] = [(np.asarray(c), float(r)) for c, r in zip(ps.task.centers, ps.task.radii, strict=True)]
        scene["bounds"] = ((-0.1, 0.2), (-0.1, 0.2), (0.0, 0.35))
        return scene
