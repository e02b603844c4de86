"""``PushToGoal-v0``: a soft arm on a table pushes a puck or a block to a goal.

Scene (:class:`sorogym.PlanarScene`, seen from above): a horizontal soft arm of three 0.1 m
constant-curvature segments (silicone, radius 12 mm, ``E`` 2 MPa, Kelvin-Voigt retardation
50 ms; 0.3 m, 145 g), its base fixed at the origin pointing along world +x, bending in the
table plane (it rides on low-friction skids: the table's friction on the arm is neglected),
and one rigid object free on the table: ``q = [k_0, k_1, k_2, theta, x, y]`` (the
segments' curvatures, the object's angle and centre). The object is drawn per episode: a
puck (a disc of radius 25-40 mm) or a block (half sides 20-35 mm each), 50-200 g. The table
holds it with regularised Coulomb friction (coefficient 0.2-0.5 per episode, slip velocity
5 mm/s) on eight support points that carry its weight evenly (sliding and turning friction
of its footprint, :class:`sorogym.models.PlanarBodies`), stepped implicitly. The arm touches
it at 16 backbone points as discs of its radius: frictionless compliant contact (1000 N/m,
Hunt-Crossley damping 5 s/m, :class:`sorogym.contact.BodyContact`), taken implicitly in the
velocity so a stiff contact does not limit the step.

* **Action** ``(3,)`` in [-1, 1]: each segment's commanded curvature ``a max_curvature``
  (10 1/m), as the bending moment ``E I L k_cmd`` that holds the unloaded segment there
  (pneumatic chambers), reached through a first-order lag of 0.1 s
  (``actuator_time_constant``; per control period the moment moves the fraction
  ``1 - exp(-dt / 0.1 s)`` of the way and is held).
* **Observation** ``(30,)`` float32, lengths in arm lengths ``L`` (0.3 m), world frame:
  curvatures ``/ max_curvature`` (3), their rates ``/ (10 max_curvature)`` per second (3),
  the actuators' moments in action units (3), the tip's position (2) and heading
  ``(cos, sin)`` (2), the object's centre (2), heading ``(cos, sin)`` (2), velocity (2)
  [L/s] and turning rate (1) [rad/s], the goal (2), goal minus object (2) and their
  distance (1), object minus tip (2), and the object's outline ``(a, b, rho)`` (3).
* **Reward** terms: ``progress`` = the decrease of the object-goal distance per second
  [m/s], ``proximity = -min(clearance, 0.1 m)`` (the gap between the arm and the object's
  outline [m]: come to the object), ``success = [distance < success_radius]`` (20 mm),
  ``effort = -mean(a^2)``; scales 10, 2, 10, 0.02.
* **Termination**: success (or a diverging simulation); time limit 8 s = 160 steps.
  ``metrics``: ``goal_distance`` [m] (object to goal), ``success``,
  ``peak_contact_force`` (the arm's normal force on the object at the step's end [N]; the
  evaluations report its episode maximum), ``object_speed`` [m/s], ``clearance`` [m].
* **Reset**: the arm straight and at rest; the object at rest 0.15-0.25 m from the base,
  within 45 degrees of the arm's axis but clear of it, at a random angle; the goal 60-120 mm
  from the object in any direction, brought into the arm's workspace (0.12-0.27 m from the
  base, within 60 degrees of its axis). ``config.randomization`` randomises the arm.
* **Expert** (``env.expert("pusher")``): a scripted pusher on inverse kinematics: the
  arm's tip is placed behind the object on the line from the goal through the object's
  centre, pointing along the push, then driven into the object as it moves
  (:meth:`PushToGoal.build_expert`).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from sorogym.actuation import GeneralizedActuation
from sorogym.contact import body_penetration, cross_section_radius
from sorogym.env import Expert, StepOutputs, register
from sorogym.models import (
    PlanarBodies,
    PlanarPCS,
    PlanarScene,
    SceneParams,
    check_positive_fields,
)
from sorogym.planning import levenberg_marquardt

from ._common import first_order_lag
from ._ground import wrap_angle
from ._table import TableArmConfig, TableArmEnv, check_range, probe_abscissae, rotation, table_arm_params, table_view


@dataclasses.dataclass(frozen=True)
class RewardScales:
    progress: float = 10.0
    proximity: float = 2.0
    success: float = 10.0
    effort: float = 0.02


@dataclasses.dataclass(frozen=True)
class RewardConfig:
    scales: RewardScales = RewardScales()


@dataclasses.dataclass(frozen=True)
class Config(TableArmConfig):
    # Arm
    radius: float = 0.015  # m
    max_curvature: float = 20.0  # 1/m, |action| = 1
    # Object: a puck with probability disc_probability, else a block
    disc_probability: float = 0.5
    disc_radius: tuple[float, float] = (0.025, 0.04)  # m
    box_half_side: tuple[float, float] = (0.02, 0.035)  # m, each half side
    object_mass: tuple[float, float] = (0.02, 0.1)  # kg
    friction: tuple[float, float] = (0.2, 0.5)  # table-object Coulomb coefficient, per episode
    slip_velocity: float = 0.005  # m/s
    # Arm-object contact
    # Task
    object_range: tuple[float, float] = (0.15, 0.25)  # m from the base
    object_bearing_deg: float = 45.0
    goal_distance: tuple[float, float] = (0.06, 0.12)  # m from the object
    outward_cone_deg: float = 60.0  # no push directions within this of straight away from the base
    workspace_range: tuple[float, float] = (0.12, 0.27)  # m from the base
    workspace_bearing_deg: float = 60.0
    success_radius: float = 0.02  # m
    reward: RewardConfig = RewardConfig()


def default_config() -> Config:
    return Config()


@struct.dataclass
class PushTask:
    """Task state: the goal ``(2,)`` [m] (world) and this episode's table friction coefficient."""

    goal: jax.Array
    friction: jax.Array


@register
class PushToGoal(TableArmEnv):
    __doc__ = __doc__
    name = "PushToGoal-v0"
    # Accuracy (TableArmEnv's check): the tip 0.06-0.8 % of L at 8 substeps for seeds 0-5. A
    # struck object's path is only first-order accurate in the step: a whipping arm launching
    # a 20 g puck sends it up to 16 % of L off the reference within that second (0.8 % at 64
    # substeps), and over a whole random episode both paths drift apart (docs/benchmarks.md).

    @classmethod
    def default_config(cls) -> Config:
        return default_config()

    def build_model(self, config: Config) -> PlanarScene:
        check_positive_fields(
            config,
            ("segment_length", "radius", "young_modulus", "density", "max_curvature", "actuator_time_constant",
             "slip_velocity", "contact_stiffness", "success_radius"),
        )  # fmt: skip
        self.check_table_config(config)
        if not 0.0 <= config.disc_probability <= 1.0:
            raise ValueError(f"disc_probability: must lie in [0, 1], got {config.disc_probability}")
        for name in ("disc_radius", "box_half_side", "goal_distance", "workspace_range"):
            check_range(config, name)
        params = table_arm_params(config, self.dtype)
        arm = PlanarPCS(params, active_strains="pcc", actuation=GeneralizedActuation(), num_quadrature_points=3)
        nominal = PlanarBodies.rounded_boxes([[0.0, 0.0]], [np.mean(config.disc_radius)], [np.mean(config.object_mass)])
        return PlanarScene(arm, jax.tree.map(lambda x: jnp.asarray(x, self.dtype), nominal))

    @staticmethod
    def object_reach(config) -> float:
        """The largest object's extent [m] from its centre: a puck's radius or a block's half diagonal."""
        return max(config.disc_radius[1], np.sqrt(2.0) * config.box_half_side[1])

    @property
    def observation_dim(self) -> int:
        return 30

    @property
    def action_dim(self) -> int:
        return self.config.num_segments

    # -- physics hooks ------------------------------------------------------------------------

    def _sample_params(self, key):
        """The episode's arm (randomised by ``config.randomization``) and object: a puck
        with probability ``disc_probability``, else a block, its size and mass uniform in
        their ranges (uniform density; inertia and support points of its outline)."""
        c = self.config
        k_arm, k_kind, k_disc, k_box, k_mass = jax.random.split(key, 5)
        arm = self.model.robot.params
        if c.randomization:
            arm = self.randomized_params(k_arm, arm)
        is_disc = jax.random.uniform(k_kind, (), self.dtype) < c.disc_probability
        radius = jax.random.uniform(k_disc, (), self.dtype, *c.disc_radius)
        half = jax.random.uniform(k_box, (2,), self.dtype, *c.box_half_side)
        half_extents = jnp.where(is_disc, jnp.zeros(2, self.dtype), half)
        corner = jnp.where(is_disc, radius, jnp.zeros((), self.dtype))
        mass = jax.random.uniform(k_mass, (), self.dtype, *c.object_mass)
        bodies = PlanarBodies.rounded_boxes(half_extents[None], corner[None], mass[None], dtype=self.dtype)
        return SceneParams(arm, bodies)

    def _bending_stiffness(self, model):
        """``E I L`` ``(N,)`` [N m^2]: the moment per unit curvature times each segment's length."""
        return jnp.diag(model.robot.stiffness_matrix())

    def command(self, model, ps, action):
        c = self.config
        target = self._bending_stiffness(model) * c.max_curvature * action
        return first_order_lag(ps.u, target, c.control_dt, c.actuator_time_constant)

    # -- task ---------------------------------------------------------------------------------

    def reset_task(self, key, model):
        c = self.config
        k_r, k_side, k_bearing, k_angle, k_dir, k_dist, k_mu = jax.random.split(key, 7)
        centre, phi = self.place_beside_arm(k_r, k_side, k_bearing)
        angle = jax.random.uniform(k_angle, (), self.dtype, -jnp.pi, jnp.pi)
        cone = np.deg2rad(c.outward_cone_deg)  # no goals straight outward: behind the object the arm would fold
        beta = phi + jax.random.uniform(k_dir, (), self.dtype, cone, 2.0 * np.pi - cone)
        goal = centre + jax.random.uniform(k_dist, (), self.dtype, *c.goal_distance) * jnp.stack(
            [jnp.cos(beta), jnp.sin(beta)]
        )
        # into the workspace: clamp the goal's distance and bearing from the base
        rg = jnp.clip(jnp.linalg.norm(goal), *c.workspace_range)
        half = np.deg2rad(c.workspace_bearing_deg)
        bg = jnp.clip(jnp.arctan2(goal[1], goal[0]), -half, half)
        goal = rg * jnp.stack([jnp.cos(bg), jnp.sin(bg)])
        task = PushTask(goal=goal, friction=jax.random.uniform(k_mu, (), self.dtype, *c.friction))
        N = c.num_segments
        q0 = jnp.concatenate([jnp.zeros(N, self.dtype), jnp.stack([angle, centre[0], centre[1]])])
        return task, q0, jnp.zeros_like(q0), jnp.zeros(N, self.dtype)

    def outputs(self, model, prev, ps, action) -> StepOutputs:
        c = self.config
        N = c.num_segments
        L = self.arm_length
        tip, heading = self.tip_pose(model, ps.q)
        theta, centre = ps.q[N], ps.q[N + 1 :]
        omega, velocity = ps.qd[N], ps.qd[N + 1 :]
        to_goal = ps.task.goal - centre
        d = jnp.linalg.norm(to_goal)
        f_n, depth = self.contact(model).normal_forces(model, ps.q, ps.qd)
        clearance = jnp.maximum(-jnp.max(depth), 0.0)
        bodies = model.bodies
        outline = jnp.concatenate([bodies.half_extents[0], bodies.corner_radius[:1]])
        k_scale = c.max_curvature
        obs = jnp.concatenate(
            [
                ps.q[:N] / k_scale,
                ps.qd[:N] / (10.0 * k_scale),
                ps.u / (self._bending_stiffness(model) * k_scale),
                tip / L,
                heading,
                centre / L,
                jnp.stack([jnp.cos(theta), jnp.sin(theta)]),
                velocity / L,
                omega[None],
                ps.task.goal / L,
                to_goal / L,
                d[None] / L,
                (centre - tip) / L,
                outline / L,
            ]
        )
        success = (d < c.success_radius).astype(d.dtype)
        if prev is None:
            terms = None
        else:
            d_prev = jnp.linalg.norm(ps.task.goal - prev.q[N + 1 :])
            terms = {
                "progress": (d_prev - d) / self.control_dt,
                "proximity": -jnp.minimum(clearance, 0.1),
                "success": success,
                "effort": -jnp.mean(action**2),
            }
        metrics = {
            "goal_distance": d,
            "success": success,
            "peak_contact_force": jnp.sum(f_n),
            "object_speed": jnp.linalg.norm(velocity),
            "clearance": clearance,
        }
        return StepOutputs(obs, terms, metrics, info={})

    def terminated(self, model, ps):
        N = self.config.num_segments
        return jnp.linalg.norm(ps.task.goal - ps.q[N + 1 :]) < self.config.success_radius

    # -- expert -------------------------------------------------------------------------------

    expert_kinds = ("pusher",)

    def build_expert(
        self,
        kind: str,
        standoff: float = 0.03,
        push_depth: float = 0.03,
        alignment: float = 0.8,
        heading_weight: float = 0.0,
        margin: float = 0.01,
        clearance_weight: float = 1.0,
        max_change: float = 4.0,
        iterations: int = 8,
    ) -> Expert:
        """``"pusher"``: inverse kinematics towards a pushing pose that keeps the arm off
        the object until its tip is behind it.

        The push direction ``d`` runs from the object's centre to the goal; ``reach`` is
        the outline's support in direction ``-d`` plus the arm's radius. The tip's target
        lies behind the object on that line at ``reach + standoff`` [m] from the centre,
        or at ``reach - push_depth`` once the tip is behind the object (the cosine between
        ``tip - centre`` and ``-d`` above ``alignment`` and the tip within ``reach + 2
        standoff``), so the compliant arm presses on and follows it. The commanded
        curvatures solve, by ``iterations`` Levenberg-Marquardt steps from the present
        ones (:func:`sorogym.planning.levenberg_marquardt`, bounded by ``max_curvature``),
        the least squares of the tip's error, ``heading_weight`` [m/rad] times the tip's
        heading error from ``d``, and ``clearance_weight`` times each backbone probe's
        intrusion into the object grown by ``margin`` [m] (the probes within 40 mm of the
        tip exempt while pushing), so the arm goes around the object rather than through it;
        the command moves at most ``max_change`` [1/m] per segment and step. Stateless."""
        c = self.config
        N, L, k_max = c.num_segments, self.arm_length, c.max_curvature
        s_probe = probe_abscissae(c)
        near_tip = jnp.asarray(s_probe > L - 0.04)

        def act(state):
            ps = state.pipeline_state
            model = self.episode_model(ps)
            arm = model.robot
            theta, centre = ps.q[N], ps.q[N + 1 :]
            to_goal = ps.task.goal - centre
            d = to_goal / (jnp.linalg.norm(to_goal) + 1e-9)
            R = rotation(theta)
            bodies = model.bodies
            half, corner = bodies.half_extents[0], bodies.corner_radius[0]
            reach = jnp.sum(jnp.abs(R.T @ d) * half) + corner + arm.params.radius[-1]
            tip = self.tip_pose(model, ps.q)[0]
            offset = tip - centre
            behind = -(offset @ d) / (jnp.linalg.norm(offset) + 1e-9)
            pushing = (behind > alignment) & (jnp.linalg.norm(offset) < reach + 2.0 * standoff)
            target = centre - d * jnp.where(pushing, reach - push_depth, reach + standoff)
            psi = jnp.arctan2(d[1], d[0])
            s = jnp.asarray(s_probe, ps.q.dtype)
            radii = cross_section_radius(arm, s) + margin
            exempt = pushing & near_tip

            def residual(k):
                T = arm.forward_kinematics(k, L)
                heading = jnp.arctan2(T[1, 0], T[0, 0])
                points = arm.forward_kinematics_batched(k, s)[:, :2, 2]
                depth = body_penetration(R, centre, half, corner, points, radii)[0]
                intrusion = jnp.where(exempt, 0.0, jnp.maximum(depth, 0.0))
                return jnp.concatenate(
                    [T[:2, 2] - target, heading_weight * wrap_angle(heading - psi)[None], clearance_weight * intrusion]
                )

            bound = jnp.full(N, k_max, ps.q.dtype)
            k, _ = levenberg_marquardt(
                residual, lambda k: jnp.clip(k, -bound, bound), ps.q[:N], iterations, bounds=(-bound, bound)
            )
            k = ps.q[:N] + jnp.clip(k - ps.q[:N], -max_change, max_change)
            return jnp.clip(k / k_max, -1.0, 1.0)

        return Expert(f"{self.name}/{kind}", act)

    # -- rendering ----------------------------------------------------------------------------

    def render_scene(self, ps):
        return table_view(self, ps, [("goal", ps.task.goal, "tab:green")], (0.15, 0.0), 0.22)
