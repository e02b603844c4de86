"""``TendonReaching-v0``: a two-segment tendon-driven arm reaches static goals in its workspace.

Robot: two spatial PCS segments of 0.12 m hanging from the origin under gravity (backbone
along world -z), radius 20 mm, density 1070 kg/m^3, E = 250 kPa, nu = 0.37, per-strain
damping ``1e-3 [1, 1, 1, 1e3, 1e3, 1e3]`` per unit length; bending and elongation active
in each segment (``q`` has 6 entries). Six straight tendons 15 mm from the axis: three at
0, 120, 240 degrees end at the first segment's tip, three at 60, 180, 300 degrees at the
robot's tip.

Goals are feasible by construction: each reset draws a goal from a bank of tip poses at
static equilibria, computed once per robot at construction. ``goal_sampling`` chooses the
bank: ``"equilibrium"`` (default) takes the equilibria under random admissible tensions (a
random subset of tendons pulled with tensions uniform in [0, max_tension], equilibrium
followed by Newton continuation from the rest shape), which crowds goals where many
tension vectors lead; ``"workspace"`` spreads them uniformly over the reachable
workspace: candidate positions uniform in a box around it, kept when the static inverse
problem (:mod:`sorogym.planning`) finds admissible tensions whose equilibrium reaches
them (costs about a minute of compilation at construction).

**Goal orientation** (``goal_orientation=True``): the goal also fixes the direction of the
tip axis (the backbone tangent at the tip, a unit vector in the world frame), taken from the
same equilibrium as the goal position, so position and direction are reachable together.
Roll about the tip axis is not part of the goal: without torsion or shear the arm cannot
choose it independently.

* **Action** ``(6,)`` in [-1, 1]: absolute tendon tensions ``max_tension (a + 1) / 2`` [N].
* **Observation** ``(30,)`` float32: ``q`` (6), ``qd`` (6), tip position (3) and velocity
  (3) [m, m/s], goal (3), tip-to-goal vector (3), tensions (6) [N]; world frame. With goal
  orientation, ``(36,)``: followed by the tip axis (3) and the goal axis (3).
* **Reward** terms: ``distance = -|tip - goal|`` [m], ``success = [distance < 1 cm]``,
  ``effort = -mean((u / max_tension)^2)``; scales 5, 1, 0.05. With goal orientation also
  ``orientation = -angle(tip axis, goal axis)`` [rad] (scale 0.05), and success also
  requires the angle below ``success_angle_deg`` (10 degrees).
* **Termination**: none (time limit 5 s = 75 steps, applied by the wrappers), except a
  diverging simulation. **Success**: tip within ``success_radius`` (and, with goal
  orientation, axis within ``success_angle_deg``) in ``metrics["success"]``;
  ``metrics["goal_distance"]`` [m] and ``metrics["goal_angle"]`` [rad] (0 without goal
  orientation).
* **Experts** (``env.expert(kind)``): ``"actuation_space"`` (default; potential-shaping
  regulation in actuation coordinates to the goal's equilibrium), ``"static_ik"`` (the
  same regulator towards the configuration found by static inverse kinematics of the goal
  position, without the stored equilibrium), ``"quasi_static"`` (tendon-space regulation
  on the static tip sensitivity) and ``"hoclf"``; see :meth:`TendonReaching.build_expert`.
"""

from __future__ import annotations

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from sorogym.control import (
    ActuationSpaceController,
    ActuationSpaceDynamics,
    ConstantReference,
    PIDGains,
    SecondOrderGains,
)
from sorogym.env import EpisodeConfig, Expert, SoroEnv, StepOutputs, register
from sorogym.models import PCS, check_positive_fields
from sorogym.planning import TendonStaticsModel, ik_residual, levenberg_marquardt
from sorogym.robots import tendon_ring_pcs

from ._common import (
    action_from_tensions,
    axis_angle_between,
    axis_of_pose,
    clf_tensions,
    quasi_static_tensions,
    reaching_terms,
    tensions_from_action,
    tip_kinematics,
)
from .goals import cached_goal_bank, robot_key, sample_goal

_ROBOT_FIELDS = (
    "segment_lengths",
    "radius",
    "density",
    "young_modulus",
    "poisson_ratio",
    "damping",
    "gravity",
    "active_strains",
    "tendon_offset",
    "tendon_angles_deg",
    "tendon_spans",
)


@dataclasses.dataclass(frozen=True)
class RewardScales:
    distance: float = 5.0
    success: float = 1.0
    effort: float = 0.05
    orientation: float = 0.05  # per rad; used only with goal_orientation


@dataclasses.dataclass(frozen=True)
class RewardConfig:
    scales: RewardScales = RewardScales()


@dataclasses.dataclass(frozen=True)
class Config(EpisodeConfig):
    # Robot
    segment_lengths: tuple[float, ...] = (0.12, 0.12)
    radius: float = 0.02
    density: float = 1070.0
    young_modulus: float = 2.5e5
    poisson_ratio: float = 0.37
    damping: tuple[float, ...] = (1e-3, 1e-3, 1e-3, 1.0, 1.0, 1.0)  # per strain, per metre
    gravity: tuple[float, float, float] = (0.0, 0.0, -9.81)
    active_strains: str = "bending_elongation"
    tendon_offset: float = 0.015
    tendon_angles_deg: tuple[float, ...] = (0.0, 120.0, 240.0, 60.0, 180.0, 300.0)
    tendon_spans: tuple[int, ...] = (1, 1, 1, 2, 2, 2)
    max_tension: float = 6.0  # N
    # Task
    num_goal_candidates: int = 512
    goal_sampling: str = "equilibrium"  # or "workspace" (uniform over the reachable workspace)
    goal_activation: float = 0.5  # probability that a tendon pulls in a goal sample ("equilibrium")
    success_radius: float = 0.01
    goal_orientation: bool = False
    success_angle_deg: float = 10.0
    # Timing and integration
    control_dt: float = 1.0 / 15.0
    num_substeps: int = 5
    episode_length_s: float = 5.0
    reward: RewardConfig = RewardConfig()


def default_config() -> Config:
    return Config()


@struct.dataclass
class ReachingTask:
    """Task state: a static goal, one equilibrium of the goal bank (world frame)."""

    goal: jax.Array  # (3,) goal position [m]
    goal_axis: jax.Array  # (3,) its unit tip axis (backbone tangent), a goal only with goal_orientation
    goal_configuration: jax.Array  # (n,) its configuration q (the actuation-space expert's setpoint)


@register
class TendonReaching(SoroEnv):
    __doc__ = __doc__
    name = "TendonReaching-v0"

    @classmethod
    def default_config(cls) -> Config:
        return default_config()

    #: config fields that define the robot (the key of the shared goal bank)
    robot_fields: tuple[str, ...] = _ROBOT_FIELDS

    def __init__(self, config=None, **overrides):
        super().__init__(config, **overrides)
        c = self.config
        self.goal_bank = cached_goal_bank(
            robot_key(c, self.robot_fields),
            self.model,
            c.num_goal_candidates,
            c.max_tension,
            sampling=c.goal_sampling,
            activation=c.goal_activation,
        )

    def build_model(self, config: Config) -> PCS:
        check_positive_fields(config, ("max_tension", "success_radius", "success_angle_deg"))
        return tendon_ring_pcs(config, "hanging", self.dtype, active_strains=config.active_strains)

    @property
    def observation_dim(self) -> int:
        extra = 6 if self.config.goal_orientation else 0
        return 2 * self.model.num_dofs + 12 + self.model.num_actuators + extra

    @property
    def action_dim(self) -> int:
        return self.model.num_actuators

    def reset_task(self, key, model):
        row = sample_goal(key, jnp.asarray(self.goal_bank, self.dtype))
        n, m = model.num_dofs, model.num_actuators
        task = ReachingTask(goal=row[:3], goal_axis=row[3:6], goal_configuration=row[6 : 6 + n])
        return task, jnp.zeros(n, self.dtype), jnp.zeros(n, self.dtype), jnp.zeros(m, self.dtype)

    def command(self, model, ps, action):
        return tensions_from_action(action, self.config.max_tension)

    def outputs(self, model, prev, ps, action) -> StepOutputs:
        # tip kinematics once per step, shared by the observation, reward and metrics
        c = self.config
        pose, tip_vel = tip_kinematics(model, ps.q, ps.qd)
        tip, goal = pose[:3, 3], ps.task.goal
        d, terms = reaching_terms(tip, goal, ps.u, c.success_radius, c.max_tension)
        parts = [ps.q, ps.qd, tip, tip_vel, goal, goal - tip, ps.u]
        angle = jnp.zeros_like(d)
        if c.goal_orientation:
            axis = axis_of_pose(pose)
            angle = axis_angle_between(axis, ps.task.goal_axis)
            terms["success"] = terms["success"] * (angle < np.deg2rad(c.success_angle_deg)).astype(d.dtype)
            parts += [axis, ps.task.goal_axis]
        terms["orientation"] = -angle
        metrics = {"goal_distance": d, "goal_angle": angle, "success": terms["success"]}
        return StepOutputs(jnp.concatenate(parts), terms, metrics, info={})

    # -- expert -----------------------------------------------------------------------------

    expert_kinds = ("actuation_space", "static_ik", "quasi_static", "hoclf")

    def build_expert(
        self,
        kind: str,
        gain: float = 0.8,
        clf_frequency: float = 6.0,
        natural_frequency: float = 4.0,
        damping_ratio: float = 1.0,
        ik_iterations: int = 8,
    ) -> Expert:
        """Regulation of the tip position to the goal in tendon space, ignoring the goal
        orientation (with ``goal_orientation`` the goal axis comes from the same
        equilibrium, so reaching the position usually aligns it as well).

        * ``"quasi_static"``: each control period, one bounded least-squares step
          on the static tip sensitivity moves the equilibrium a fraction ``gain`` of the
          way to the goal (:func:`sorogym.control.quasi_static_tension_control`).
        * ``"actuation_space"`` (default): the potential-shaping regulator of the paper's eq. 35 in
          the actuation coordinates ``phi_a`` (tendon shortenings; here ``m = n``, so
          ``phi = phi_a``) towards the goal's equilibrium configuration ``q_d`` (stored
          with the goal): the tensions ``A_phi^-1 (G_phi + K_phi)(q_d)`` that hold ``q_d``
          plus PD feedback on ``phi_a(q_d) - phi_a(q)`` with gains matched to the
          actuation-space inertia at rest (``K_p = w_n^2 M_phi(0)``, ``K_d = 2 zeta w_n
          M_phi(0)``, ``natural_frequency`` [rad/s], ``damping_ratio``; no integral, an
          expert is stateless), clipped to ``[0, max_tension]``.
        * ``"static_ik"``: the same regulator, its target configuration found from the goal
          position alone by static inverse kinematics
          (:class:`sorogym.planning.TendonStaticsModel`): each control period,
          ``ik_iterations`` Levenberg-Marquardt steps on ``z = [q, u]`` (strains and
          tensions in ``[0, max_tension]``), warm-started at the current strains and applied
          tensions, move towards an equilibrium whose tip is at the goal; its ``q`` is the
          regulator's target. Stateless like the others: the warm start carries the
          solution from one period to the next.
        * ``"hoclf"``: the minimum-norm tensions in ``[0, max_tension]`` satisfying the
          HOCLF condition on the tip distance, critically damped at ``clf_frequency``
          [rad/s] (:func:`sorogym.control.clf_cbf_control`)."""
        c = self.config
        gains = SecondOrderGains.critically_damped(clf_frequency)
        if kind in ("actuation_space", "static_ik"):
            nominal = ActuationSpaceDynamics(self.model)  # H_u is empty when m = n
            m = self.model.num_actuators  # gains act on the actuated block of M_phi
            rest = jax.jit(lambda q: nominal.terms(q, q)["M"][:m, :m])(jnp.zeros(self.model.num_dofs, self.dtype))
            pd = PIDGains.matched(rest, natural_frequency, damping_ratio)
        if kind == "static_ik":
            if ik_iterations < 1:
                raise ValueError(f"ik_iterations: must be >= 1, got {ik_iterations}")
            statics = TendonStaticsModel(self.model, 0.0, c.max_tension, points=1)

        def ik_configuration(model, ps):
            """Target strains from warm-started static IK of the goal position."""
            episode = statics.with_model(model)
            residual = lambda z: ik_residual(episode, z, ps.task.goal, position_only=True)  # noqa: E731
            z0 = jnp.concatenate([ps.q, ps.u])
            z, _ = levenberg_marquardt(residual, episode.project, z0, ik_iterations, bounds=episode.bounds())
            return episode.split(z)[0]

        def act(state):
            ps = state.pipeline_state
            model = self.episode_model(ps)
            goal = ps.task.goal
            if kind == "quasi_static":
                u = quasi_static_tensions(model, ps, goal, c.max_tension, gain)
            elif kind in ("actuation_space", "static_ik"):
                dynamics = eqx.tree_at(lambda d: d.model, nominal, model)  # this episode's parameters
                q_d = ps.task.goal_configuration if kind == "actuation_space" else ik_configuration(model, ps)
                controller = ActuationSpaceController(dynamics, ConstantReference(q_d), pd, "potential")
                u, _ = controller(ps.t, jnp.concatenate([ps.q, ps.qd]), controller.initial_state())
                u = jnp.clip(u, 0.0, c.max_tension)
            else:
                u = clf_tensions(model, ps, lambda t: goal, c.max_tension, gains)
            return action_from_tensions(u, c.max_tension)

        return Expert(f"{self.name}/{kind}", act)

    def render_scene(self, ps):
        scene = super().render_scene(ps)
        scene["markers"].append(("goal", np.asarray(ps.task.goal), "tab:green"))
        if self.config.goal_orientation:
            scene.setdefault("arrows", []).append(
                (np.asarray(ps.task.goal), 0.03 * np.asarray(ps.task.goal_axis), "tab:green")
            )
        half = 1.1 * float(self.model.total_length)
        scene["bounds"] = ((-half / 2, half / 2), (-half / 2, half / 2), (-half, 0.0))
        return scene
