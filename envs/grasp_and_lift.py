"""``GraspAndLift-v0``: a soft two-finger gripper grasps an object from the table and lifts it
to a target height.

Scene (a :class:`sorogym.PlanarScene` of a :class:`sorogym.PlanarGripper` and one object,
seen from the side: world x horizontal, y up, gravity 9.81 m/s^2 along -y, the table the
floor ``y = 0``): a rigid palm (200 g) on a vertical series-elastic lift (400 N/m, 20 N s/m,
its rest 130 mm above the table) carries two tendon-driven soft fingers hanging from it
100 mm apart, each two 50 mm constant-curvature segments (silicone, radius 8 mm, ``E`` 2
MPa, Kelvin-Voigt retardation 50 ms; 22 g): ``q = [z, k_00, k_01, k_10, k_11, theta, x,
y]`` (the palm's lift [m], the fingers' curvatures [1/m], the object's angle and centre).
Each finger has two antagonistic tendon pairs 6.4 mm off its axis (one to the first
segment's tip, one to the fingertip). The object is drawn per episode: a sphere or cylinder
(a disc in the plane, radius 15-25 mm) or a box (half sides 12-22 mm, 2 mm rounded edges),
20-80 g, resting on the table within 10 mm of the centre line; a rotational damper of
2e-4 N m s/rad on it stands for rolling resistance and air drag (without it a sphere nudged
on the table rolls away for ever).

Contact, all compliant (Hunt-Crossley, 2000 N/m per point, 5 s/m) and taken implicitly in
the velocity (:class:`sorogym.contact.NormalContactLoad`): the fingers' 8 probes each
against the object with regularised Coulomb friction (coefficient 0.6-1.0 per episode,
slip velocity 5 mm/s: :class:`sorogym.contact.BodyContact`), the object's outline against
the table with friction (0.3-0.6 per episode) and the fingers' probes against it without
(:class:`sorogym.contact.FloorContact`), and finger 0's probes against finger 1
(frictionless: :class:`sorogym.contact.ArmPairContact`). 16 substeps of 3.125 ms per 50 ms control step.

* **Action** ``(5,)`` in [-1, 1]: per finger and tendon pair (finger 0's two, then finger
  1's), the differential tension ``a max_tension`` (20 N; ``a > 0`` closes the finger
  towards the other: the flexor pulls, the extensor is slack; ``a < 0`` opens it), then the
  lift's set point ``z_cmd = a up`` for ``a >= 0`` and ``a down`` below (``up`` 100 mm,
  ``down`` 40 mm), held through the lift's spring by the force ``W + k z_cmd`` (``W`` the
  gripper's weight). Tensions and the lift's force reach their commands through a
  first-order lag of 0.1 s.
* **Observation** ``(39,)`` float32, lengths in finger lengths ``L`` (0.1 m), world frame:
  the lift ``z`` (1), its rate ``/ 10`` per second (1), its set point in action units (1); the
  curvatures ``/ curvature_scale`` (20 1/m) (4), their rates ``/ (10 curvature_scale)`` (4),
  the differential tensions in action units (4); each fingertip's position relative to the
  object's centre (4) and heading ``(cos, sin)`` (4); the object's centre relative to the
  palm (2), heading (2), velocity (2) and turning rate ``/ 10`` (1), its outline ``(a, b,
  rho)`` (3), its height above its rest (1), the target lift (1) and the height error (1);
  each finger's normal force on the object [N] (2); the hold's progress (1).
* **Reward** terms: ``height = -|y - y_target|`` [m] of the object's centre, ``grip =
  min_k min(f_k, 1 N) / 1 N`` (both fingers pressing on the object), ``hold = [at
  height]`` (within ``height_tolerance``, 10 mm, and slower than ``hold_speed``, 50 mm/s),
  ``effort = -mean(a^2)``; scales 20, 0.5, 2, 0.02.
* **Success**: the object held at height for ``hold_time`` (0.5 s) without interruption.
  **Termination**: none (time limit 5 s = 100 steps), except a diverging simulation.
  ``metrics``: ``goal_distance`` (the height error [m]), ``success``,
  ``peak_contact_force`` (the fingers' normal force on the object [N]; the evaluations
  report its episode maximum), ``object_lift`` [m], ``grip_force`` (the weaker finger's
  [N]), ``slip_speed`` (the object's speed relative to the palm [m/s]).
* **Reset**: the fingers straight and at rest, the palm at its rest, the object at rest on
  the table; the target lifts its centre by 40-80 mm. ``config.randomization`` randomises
  the fingers (both alike).
* **Expert** (``env.expert("grasp")``): a grasp planner on the fingers' constant-curvature
  kinematics: lower the palm to the height where fingers curved to the object's sides touch
  it below its middle, close them past contact by a squeeze curvature (tensions from the
  fingers' quasi-static balance under the tension limits), and lift once both fingers press
  on it (:meth:`GraspAndLift.build_expert`).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from sorogym.actuation import Tendons
from sorogym.contact import ArmPairContact, BodyContact, FloorContact, cross_section_radius
from sorogym.env import Expert, SoroEnv, StepOutputs, register
from sorogym.models import (
    PlanarBodies,
    PlanarGripper,
    PlanarPCS,
    PlanarScene,
    RodParams,
    SceneLoad,
    SceneParams,
    check_positive_fields,
)

from ._common import first_order_lag
from ._table import TableArmConfig, check_arm_config, check_range, contact_law, probe_abscissae, table_view

G = 9.81
FINGER_SIGNS = np.array([1.0, -1.0])  # the curvature that closes finger k towards the other


@dataclasses.dataclass(frozen=True)
class RewardScales:
    height: float = 20.0
    grip: float = 0.5
    hold: float = 2.0
    effort: float = 0.02


@dataclasses.dataclass(frozen=True)
class RewardConfig:
    scales: RewardScales = RewardScales()


@dataclasses.dataclass(frozen=True)
class Config(TableArmConfig):
    # Timing: 20 Hz control, 16 substeps, 5 s episodes
    num_substeps: int = 16
    episode_length_s: float = 5.0
    # Fingers (both alike)
    num_segments: int = 2
    segment_length: float = 0.05  # m
    radius: float = 0.008  # m
    young_modulus: float = 2e6  # Pa
    tendon_offset: float = 0.8  # of the radius
    max_tension: float = 20.0  # N, |action| = 1
    curvature_scale: float = 20.0  # 1/m, the observation's unit of curvature
    actuator_time_constant: float = 0.1  # s
    finger_spacing: float = 0.1  # m between the fingers' bases
    # Palm and lift
    palm_height: float = 0.13  # m, the fingers' bases above the table at the lift's rest
    palm_mass: float = 0.2  # kg
    lift_stiffness: float = 400.0  # N/m
    lift_damping: float = 20.0  # N s/m
    lift_up: float = 0.1  # m, the set point at action +1
    lift_down: float = 0.04  # m, below the rest at action -1
    # Contact
    num_probes: int = 8  # per finger, evenly spaced to the tip
    contact_stiffness: float = 2000.0  # N/m per point
    finger_friction: tuple[float, float] = (0.6, 1.0)  # finger-object Coulomb coefficient, per episode
    floor_friction: tuple[float, float] = (0.3, 0.6)  # table-object and table-finger, per episode
    slip_velocity: float = 0.005  # m/s
    # Object: a disc (sphere, cylinder) with probability disc_probability, else a box
    disc_probability: float = 0.5
    disc_radius: tuple[float, float] = (0.015, 0.025)  # m
    box_half_side: tuple[float, float] = (0.012, 0.022)  # m, each half side
    box_corner_radius: float = 0.002  # m
    object_mass: tuple[float, float] = (0.02, 0.08)  # kg
    object_offset: float = 0.01  # m, the largest distance of the object from the centre line
    rolling_damping: float = 2e-4  # N m s/rad on the object's turning: rolling resistance and air drag
    # Task
    target_lift: tuple[float, float] = (0.04, 0.08)  # m, the object's centre above its rest
    height_tolerance: float = 0.01  # m
    hold_speed: float = 0.05  # m/s, slower than this counts as held
    hold_time: float = 0.5  # s at height without interruption
    grip_force_unit: float = 1.0  # N, the grip reward's saturation
    reward: RewardConfig = RewardConfig()


def default_config() -> Config:
    return Config()


@struct.dataclass
class GraspTask:
    """Task state: the object's rest height and target height [m] (world y of its centre),
    this episode's friction coefficients, and the control steps it has been held at height."""

    rest_height: jax.Array
    target_height: jax.Array
    finger_friction: jax.Array
    floor_friction: jax.Array
    held_steps: jax.Array


@register
class GraspAndLift(SoroEnv):
    __doc__ = __doc__
    name = "GraspAndLift-v0"
    #: the float64 reference takes the contact explicitly (the look-ahead is the step's)
    reference_overrides = {"implicit_contact": False}
    accuracy_steps = 20  # the first second of random actions (fingers striking the object)

    @classmethod
    def default_config(cls) -> Config:
        return default_config()

    def build_model(self, config: Config) -> PlanarScene:
        check_positive_fields(
            config,
            ("segment_length", "radius", "young_modulus", "density", "tendon_offset", "max_tension",
             "curvature_scale", "actuator_time_constant", "finger_spacing", "palm_height", "palm_mass",
             "lift_stiffness", "lift_up", "lift_down", "contact_stiffness", "slip_velocity", "box_corner_radius",
             "height_tolerance", "hold_speed", "hold_time", "grip_force_unit"),
        )  # fmt: skip
        check_arm_config(config)
        for name in ("finger_friction", "floor_friction", "disc_radius", "box_half_side", "object_mass", "target_lift"):
            check_range(config, name)
        if config.tendon_offset >= 1.0:
            raise ValueError(f"tendon_offset: must lie inside the finger (below 1 radius), got {config.tendon_offset}")
        if not 0.0 <= config.disc_probability <= 1.0:
            raise ValueError(f"disc_probability: must lie in [0, 1], got {config.disc_probability}")
        if min(config.lift_damping, config.object_offset, config.rolling_damping) < 0.0:
            raise ValueError("lift_damping, object_offset, rolling_damping: must be non-negative")
        reach = self.object_half_width(config) + config.object_offset
        if reach + config.radius >= 0.5 * config.finger_spacing:
            raise ValueError(
                f"finger_spacing: {config.finger_spacing} m leaves no room between the straight fingers for objects "
                f"up to {reach:.3f} m from the centre line"
            )
        if config.palm_height <= config.num_segments * config.segment_length + config.radius:
            raise ValueError(f"palm_height: {config.palm_height} m puts the straight fingers into the table")
        params = RodParams.create(
            length=[config.segment_length] * config.num_segments,
            radius=config.radius,
            density=config.density,
            young_modulus=config.young_modulus,
            poisson_ratio=0.5,
            damping=config.young_modulus * config.retardation_time / 3.0,
            gravity=jnp.asarray([0.0, -G]),
            planar=True,
            dtype=self.dtype,
        )
        N = config.num_segments
        side = np.full((N, N), config.tendon_offset * config.radius)
        tendons = Tendons(np.concatenate([side, -side]), spans=tuple(range(1, N + 1)) * 2)
        finger = PlanarPCS(params, "pcc", tendons, num_quadrature_points=3, floating_base=True)
        half = 0.5 * config.finger_spacing
        gripper = PlanarGripper(
            finger,
            [[-0.5 * np.pi, -half, 0.0], [-0.5 * np.pi, half, 0.0]],
            [0.0, config.palm_height],
            config.palm_mass,
            config.lift_stiffness,
            config.lift_damping,
        )
        radius = float(np.mean(config.disc_radius))
        nominal = PlanarBodies.rounded_boxes(
            [[0.0, 0.0]],
            [radius],
            [np.mean(config.object_mass)],
            num_support=1,
            damping=[[config.rolling_damping, 0, 0]],
        )
        return PlanarScene(gripper, jax.tree.map(lambda x: jnp.asarray(x, self.dtype), nominal))

    @staticmethod
    def object_half_width(config) -> float:
        """The widest object's half-width [m] as it rests on the table (a box lies flat)."""
        return max(config.disc_radius[1], config.box_half_side[1] + config.box_corner_radius)

    @property
    def finger_length(self) -> float:
        return self.config.num_segments * self.config.segment_length

    @property
    def hold_steps(self) -> int:
        """Control steps at height that make a success."""
        return max(1, int(round(self.config.hold_time / self.control_dt)))

    @property
    def observation_dim(self) -> int:
        return 39

    @property
    def action_dim(self) -> int:
        return 2 * self.config.num_segments + 1

    # -- physics hooks ------------------------------------------------------------------------

    def _sample_params(self, key):
        """The episode's fingers (randomised by ``config.randomization``) and object: a disc
        with probability ``disc_probability``, else a rounded box, its size and mass uniform
        in their ranges (uniform density)."""
        c = self.config
        k_robot, k_kind, k_disc, k_box, k_mass = jax.random.split(key, 5)
        robot = self.model.robot.params
        if c.randomization:
            robot = self.randomized_params(k_robot, robot)
        is_disc = jax.random.uniform(k_kind, (), self.dtype) < c.disc_probability
        radius = jax.random.uniform(k_disc, (), self.dtype, *c.disc_radius)
        half = jax.random.uniform(k_box, (2,), self.dtype, *c.box_half_side)
        half_extents = jnp.where(is_disc, jnp.zeros(2, self.dtype), half)
        corner = jnp.where(is_disc, radius, jnp.asarray(c.box_corner_radius, self.dtype))
        mass = jax.random.uniform(k_mass, (), self.dtype, *c.object_mass)
        damping = jnp.asarray([[c.rolling_damping, 0.0, 0.0]], self.dtype)
        bodies = PlanarBodies.rounded_boxes(
            half_extents[None], corner[None], mass[None], num_support=1, damping=damping, dtype=self.dtype
        )
        return SceneParams(robot, bodies)

    def _tension_signs(self):
        """``(2 N,)``: the sign that turns each pair's action into its differential tension
        (left minus right), so a positive action closes either finger."""
        return jnp.asarray(np.repeat(FINGER_SIGNS, self.config.num_segments), self.dtype)

    def lift_setpoint(self, a_lift):
        """The lift's set point [m] of the action ``a_lift`` (module docstring)."""
        c = self.config
        return jnp.where(a_lift >= 0.0, a_lift * c.lift_up, a_lift * c.lift_down)

    def command(self, model, ps, action):
        c = self.config
        N = c.num_segments
        gripper = model.robot
        dT = c.max_tension * self._tension_signs() * action[: 2 * N]  # (2 N,) left minus right, per finger
        per_finger = dT.reshape(2, N)
        tensions = jnp.concatenate([jnp.maximum(per_finger, 0.0), jnp.maximum(-per_finger, 0.0)], axis=1).reshape(-1)
        force = gripper.weight_on_lift() + gripper.lift_stiffness * self.lift_setpoint(action[-1])
        target = jnp.concatenate([tensions, force[None]])
        return first_order_lag(ps.u, target, c.control_dt, c.actuator_time_constant).astype(ps.u.dtype)

    def _probes(self, model):
        s = jnp.asarray(probe_abscissae(self.config), self.dtype)
        return s, cross_section_radius(model.robot.arm, s)

    def finger_contact(self, model, friction) -> BodyContact:
        """The fingers' probes against the object (``friction`` this episode's coefficient)."""
        c = self.config
        s, radii = self._probes(model)
        return BodyContact(0, s, radii, *contact_law(self), friction, c.slip_velocity, dtype=self.dtype)

    def line_load(self, model, ps):
        """The fingers on the object, the fingers and the object on the table, and finger
        against finger, all implicit."""
        c = self.config
        s, radii = self._probes(model)
        law = contact_law(self)
        table = FloorContact([], [], *law, ps.task.floor_friction, c.slip_velocity, dtype=self.dtype)
        fingers_on_table = FloorContact(s, radii, *law, bodies=False, dtype=self.dtype)
        pair = ArmPairContact((0, 1), s, radii, *law, dtype=self.dtype)
        contacts = (self.finger_contact(model, ps.task.finger_friction), table, fingers_on_table, pair)
        return SceneLoad(interactions=contacts)

    # -- task ---------------------------------------------------------------------------------

    def reset_task(self, key, model):
        c = self.config
        k_x, k_lift, k_mu, k_floor = jax.random.split(key, 4)
        bodies = model.bodies
        rest = bodies.half_extents[0, 1] + bodies.corner_radius[0]
        x = jax.random.uniform(k_x, (), self.dtype, -c.object_offset, c.object_offset)
        task = GraspTask(
            rest_height=rest,
            target_height=rest + jax.random.uniform(k_lift, (), self.dtype, *c.target_lift),
            finger_friction=jax.random.uniform(k_mu, (), self.dtype, *c.finger_friction),
            floor_friction=jax.random.uniform(k_floor, (), self.dtype, *c.floor_friction),
            held_steps=jnp.zeros((), jnp.int32),
        )
        n_r = model.robot_dofs
        q0 = jnp.zeros(model.num_dofs, self.dtype).at[n_r + 1 :].set(jnp.stack([x, rest]))
        u0 = jnp.zeros(model.num_actuators, self.dtype).at[-1].set(model.robot.weight_on_lift())
        return task, q0, jnp.zeros_like(q0), u0

    def _at_height(self, model, ps):
        """``(height error [m], object speed relative to the palm [m/s], at height)``."""
        c = self.config
        n_r = model.robot_dofs
        error = jnp.abs(ps.q[n_r + 2] - ps.task.target_height)
        palm_velocity = jnp.stack([jnp.zeros((), ps.qd.dtype), ps.qd[0]])
        slip = jnp.linalg.norm(ps.qd[n_r + 1 : n_r + 3] - palm_velocity)
        return error, slip, (error < c.height_tolerance) & (slip < c.hold_speed)

    def advance_task(self, key, model, ps):
        held = self._at_height(model, ps)[2]
        return ps.task.replace(held_steps=jnp.where(held, ps.task.held_steps + 1, 0).astype(jnp.int32))

    def finger_forces(self, model, ps):
        """Each finger's normal force on the object ``(2,)`` [N]."""
        f_n, _ = self.finger_contact(model, ps.task.finger_friction).normal_forces(model, ps.q, ps.qd)
        return jnp.sum(f_n.reshape(2, -1), axis=1)

    def outputs(self, model, prev, ps, action) -> StepOutputs:
        c = self.config
        L, k_scale, N = self.finger_length, c.curvature_scale, c.num_segments
        gripper, n_r = model.robot, model.robot_dofs
        task = ps.task
        theta, centre = ps.q[n_r], ps.q[n_r + 1 : n_r + 3]
        omega, velocity = ps.qd[n_r], ps.qd[n_r + 1 : n_r + 3]
        tips, headings = gripper.tip_poses(ps.q[:n_r])
        forces = self.finger_forces(model, ps)
        error, slip, at_height = self._at_height(model, ps)
        bodies = model.bodies
        outline = jnp.concatenate([bodies.half_extents[0], bodies.corner_radius[:1]])
        fingers = slice(1, n_r)
        per_finger = ps.u[: 4 * N].reshape(2, 2 * N)
        dT = (per_finger[:, :N] - per_finger[:, N:]).reshape(-1) * self._tension_signs() / c.max_tension
        setpoint = (ps.u[-1] - gripper.weight_on_lift()) / gripper.lift_stiffness
        a_lift = jnp.where(setpoint >= 0.0, setpoint / c.lift_up, setpoint / c.lift_down)
        obs = jnp.concatenate(
            [
                ps.q[:1] / L,
                ps.qd[:1] / (10.0 * L),
                a_lift[None],
                ps.q[fingers] / k_scale,
                ps.qd[fingers] / (10.0 * k_scale),
                dT,
                ((tips - centre) / L).reshape(-1),
                headings.reshape(-1),
                (centre - gripper.palm_centre(ps.q[:n_r])) / L,
                jnp.stack([jnp.cos(theta), jnp.sin(theta)]),
                velocity / L,
                omega[None] / 10.0,
                outline / L,
                jnp.stack(
                    [
                        centre[1] - task.rest_height,
                        task.target_height - task.rest_height,
                        centre[1] - task.target_height,
                    ]
                )
                / L,  # fmt: skip
                forces,
                (task.held_steps / self.hold_steps)[None].astype(ps.q.dtype),
            ]
        )
        success = (task.held_steps >= self.hold_steps).astype(ps.q.dtype)
        terms = None
        if prev is not None:
            unit = c.grip_force_unit
            terms = {
                "height": -error,
                "grip": jnp.min(jnp.minimum(forces, unit)) / unit,
                "hold": at_height.astype(ps.q.dtype),
                "effort": -jnp.mean(action**2),
            }
        metrics = {
            "goal_distance": error,
            "success": success,
            "peak_contact_force": jnp.sum(forces),
            "object_lift": centre[1] - task.rest_height,
            "grip_force": jnp.min(forces),
            "slip_speed": slip,
        }
        return StepOutputs(obs, terms, metrics, info={})

    # -- expert -------------------------------------------------------------------------------

    expert_kinds = ("grasp",)

    def build_expert(
        self,
        kind: str,
        squeeze_curvature: float = 16.0,
        squeeze_depth: float = 0.004,
        grasp_depth: float = 0.3,
        grip_force: float = 0.2,
        tip_clearance: float = 0.004,
        settle: float = 0.008,
    ) -> Expert:
        """``"grasp"``: a grasp planner on the fingers' constant-curvature kinematics.

        Each finger is planned as one arc of curvature ``kappa_k`` (both segments alike):
        its tip moves sideways by ``(1 - cos kappa L) / kappa`` and rises to ``sin(kappa L) /
        kappa`` below its base. ``kappa_k`` (bisection) brings finger ``k``'s tip to the
        object's side, ``squeeze_depth`` [m] inside its outline (the outline's half-width
        along x from its angle, plus the finger's radius); the grasp height puts the tips
        ``grasp_depth`` of the object's half-height below its centre at rest (at least
        ``tip_clearance`` [m] above the table), which sets the palm's set point. The palm
        goes down with the fingers open until the straight fingers' tips are
        ``tip_clearance`` above the table (or to the grasp height, if higher); within
        ``settle`` [m] of there (or once the object is off the table, both fingers press on
        it or are bent past half their grasp curvature) it goes on to the grasp height and
        the fingers close to ``kappa_k +
        squeeze_curvature`` [1/m], so they press on the object; once both fingers' normal
        forces exceed ``grip_force`` [N] the set point rises by the target lift. The
        tensions are the fingers' quasi-static balance at the commanded curvatures
        (``A_pair dT = S q + G(q)`` per finger, with ``A_pair`` the left tendons' columns:
        the right ones' are their negatives, so a pair acts by its differential tension),
        clipped by ``max_tension``. Stateless."""
        c = self.config
        N, L = c.num_segments, self.finger_length
        signs = jnp.asarray(FINGER_SIGNS, self.dtype)
        bases_x = jnp.asarray([-0.5 * c.finger_spacing, 0.5 * c.finger_spacing], self.dtype)

        def arc_curvature(d):
            """``kappa`` with ``(1 - cos kappa L) / kappa = d`` (bisection up to ``kappa L = 2``)."""

            def halve(bounds, _):
                lo, hi = bounds
                mid = 0.5 * (lo + hi)
                reach = (1.0 - jnp.cos(mid * L)) / mid
                return (jnp.where(reach < d, mid, lo), jnp.where(reach < d, hi, mid)), None

            lo, hi = jnp.full_like(d, 1e-3), jnp.full_like(d, 2.0 / L)
            (lo, hi), _ = jax.lax.scan(halve, (lo, hi), None, length=30)
            return 0.5 * (lo + hi)

        def act(state):
            ps = state.pipeline_state
            model = self.episode_model(ps)
            gripper, n_r = model.robot, model.robot_dofs
            theta, x_o = ps.q[n_r], ps.q[n_r + 1]
            bodies = model.bodies
            h, rho = bodies.half_extents[0], bodies.corner_radius[0]
            cos, sin = jnp.abs(jnp.cos(theta)), jnp.abs(jnp.sin(theta))
            half_width = cos * h[0] + sin * h[1] + rho
            half_height = sin * h[0] + cos * h[1] + rho
            # each tip to the object's side, squeeze_depth inside its outline
            sides = x_o - signs * (half_width + c.radius - squeeze_depth)
            kappa = arc_curvature(jnp.maximum(signs * (sides - bases_x), 1e-4))  # (2,)
            drop = jnp.sin(kappa * L) / kappa
            task = ps.task
            tip_y = jnp.maximum(task.rest_height - grasp_depth * half_height, c.radius + tip_clearance)
            z_grasp = tip_y + jnp.mean(drop) - c.palm_height
            z_approach = jnp.maximum(z_grasp, c.radius + tip_clearance + L - c.palm_height)  # straight tips clear
            forces = self.finger_forces(model, ps)
            grasped = jnp.min(forces) > grip_force
            lifted = ps.q[n_r + 2] > task.rest_height + 0.005
            bent = jnp.mean(ps.q[1:n_r].reshape(2, N) * signs[:, None], axis=1)  # (2,) closing curvature
            closing = jnp.all(bent > 0.5 * kappa)  # once closing, the fingers go on (hysteresis)
            close = grasped | lifted | closing | (ps.q[0] < z_approach + settle)
            z_cmd = jnp.where(close, z_grasp, z_approach)
            z_cmd = z_cmd + jnp.where(grasped, task.target_height - task.rest_height, 0.0)
            k_cmd = jnp.where(close, kappa + squeeze_curvature, 0.0) * signs  # (2,) signed curvature
            q_cmd = ps.q[:n_r].at[1:].set(jnp.repeat(k_cmd, N))
            balance = (gripper.elastic_force(q_cmd) + gripper.gravitational_force(q_cmd))[1:].reshape(2, N)
            A = gripper.actuation_matrix(q_cmd)[1:, : 4 * N].reshape(2, N, 2, 2 * N)
            A = jnp.stack([A[k, :, k] for k in range(2)])  # (2, N, 2 N): each finger's own rows and tendons
            A_pair = A[..., :N]  # (2, N, N): the left tendons' columns (the right's are their negatives)
            dT = jnp.linalg.solve(A_pair, balance[..., None])[..., 0]  # (2, N) left minus right
            a_fingers = (dT * signs[:, None]).reshape(-1) / c.max_tension
            a_lift = jnp.where(z_cmd >= 0.0, z_cmd / c.lift_up, z_cmd / c.lift_down)
            return jnp.clip(jnp.concatenate([a_fingers, a_lift[None]]), -1.0, 1.0)

        return Expert(f"{self.name}/{kind}", act)

    # -- rendering ----------------------------------------------------------------------------

    def render_scene(self, ps):
        c = self.config
        n_r = self.episode_model(ps).robot_dofs
        q = np.asarray(ps.q, float)
        x_o = float(q[n_r + 1])
        markers = [("target", (x_o, float(ps.task.target_height)), "tab:green")]
        scene = table_view(self, ps, markers, (0.0, 0.08), 0.12)
        palm = np.eye(4)
        palm[:2, 3] = (0.0, c.palm_height + q[0] + 0.01)
        half = 0.5 * c.finger_spacing + c.radius + 0.005
        scene["bodies"].append(("box", palm, np.array([half, 0.01, 0.015]), "tab:gray"))
        table = np.eye(4)
        table[:2, 3] = (0.0, -0.005)
        scene["bodies"].append(("box", table, np.array([0.12, 0.005, 0.015]), "tab:brown"))
        return scene
