"""``SnakeToGoal-v0``: a soft snake slithers over the ground to a goal by lateral undulation.

Robot (:func:`sorogym.robots.snake`): a silicone body of six 60 mm constant-curvature
segments (radius 12 mm, ``E`` 0.5 MPa, Kelvin-Voigt retardation 50 ms; 0.36 m, 174 g) on a
planar floating base, seen from above: ``q = [theta, x, y, k_0 .. k_5]`` (the tail's
heading and position in the ground plane, each segment's curvature), the head at the far
end of the backbone. The ground pushes back through anisotropic skin friction along the body
(:class:`sorogym.contact.GroundFriction`: coefficients ``(forward, backward, lateral)`` =
``(0.1, 0.2, 0.6)`` of the weight, regularised over 10 mm/s), a force per unit length on the
rod's quadrature points, stepped linearly implicitly. Lateral friction above the forward one
is what turns undulation into thrust.

Terrain: level ground by default; ``slope_deg`` tilts it (uphill direction ``uphill_deg``
from world +x): the in-plane part of gravity pulls the snake downhill and the normal part
sets the friction (:func:`sorogym.robots.slope_gravity`; ``SnakeOnSlope-v0``);
``slope_range_deg`` draws each episode's slope in a range (terrain randomisation).
``medium = "liquid"`` replaces the ground by a viscous liquid, resistive-force drag with
the coefficients ``drag`` (``SwimmerToGoal-v0``).

* **Action** ``(6,)`` in [-1, 1]: each segment's commanded curvature ``a max_curvature``
  (12 1/m), as the generalized force ``E I L k_cmd`` that would hold the segment at that
  curvature without load (pneumatic chambers setting the rest shape), reached through the
  actuators' first-order lag of 0.1 s (``actuator_time_constant``; per control period the
  force moves the fraction ``1 - exp(-dt / 0.1 s)`` of the way and is held).
* **Observation** ``(26,)`` float32, in the body frame (x from tail to head, the snake's
  heading): goal minus head (2) [m] and its distance (1), curvatures ``/ max_curvature``
  (6) and their rates ``/ (2 pi 1.2 Hz max_curvature)`` (6), the head's twist (3) [rad/s,
  m/s], the actuators' forces in action units (6), and a 1.2 Hz clock ``(sin, cos)`` (2) to pace a gait.
* **Reward** terms: ``progress`` = the decrease of the head-goal distance per second
  [m/s], ``success = [distance < success_radius]`` (8 cm), ``effort = -mean(a^2)``;
  scales 10, 10, 0.05.
* **Termination**: success (or a diverging simulation); time limit 10 s = 200 steps.
  ``metrics``: ``goal_distance`` [m], ``success``, ``speed`` (progress in body lengths per
  second), ``power`` [W] (the actuators' mechanical power ``|u . k_dot|``, for the cost of
  transport).
* **Reset**: the snake straight, at rest, centred on the origin with a random heading; a
  goal 0.5 to 1.0 m from the head within 90 degrees of the heading; per-episode friction
  coefficients scaled by one factor in ``friction_range`` (domain randomisation of the
  ground; ``config.randomization`` randomises the body).
* **Expert** (``env.expert("cpg")``): a central pattern generator (a travelling curvature
  wave from head to tail) steered by a curvature bias proportional to the heading error
  (:meth:`SnakeToGoal.build_expert`).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from sorogym.contact import GroundFriction, LineDrag, ResistiveForceTheory
from sorogym.env import Expert, StepOutputs, register
from sorogym.models import PlanarPCS
from sorogym.robots import SnakeBody, slope_gravity, snake

from ._ground import G, GoalRewardConfig, GroundConfig, GroundLocomotor, body_frame, top_view, wrap_angle

CLOCK_HZ = 1.2  # Hz, the observation clock
MEDIA = ("ground", "liquid")


@dataclasses.dataclass(frozen=True)
class Config(GroundConfig):
    # Robot (body and ground: GroundConfig's defaults, six 60 mm segments on (0.1, 0.2, 0.6))
    max_curvature: float = 12.0  # 1/m, |action| = 1
    # Medium: "ground" (friction, on level ground or a slope) or "liquid" (resistive-force
    # drag: SwimmerToGoal-v0); friction_range scales the medium's coefficients per episode
    medium: str = "ground"
    drag: tuple[float, float] = (1.0, 2.0)  # N s/m^2, tangential and normal (in a liquid)
    slope_deg: float = 0.0
    uphill_deg: float = 0.0
    # Terrain randomisation: each episode's slope [deg] uniform in this range (replacing
    # slope_deg; the uphill direction stays uphill_deg), None for a fixed slope
    slope_range_deg: tuple[float, float] | None = None
    # Task
    goal_distance: tuple[float, float] = (0.5, 1.0)  # m, from the head
    goal_bearing_deg: float = 90.0  # goals within +-this of the heading
    success_radius: float = 0.08
    # Integration: GroundConfig's 8 substeps keep the centre of mass within 0.18-0.22 % of the
    # body length of the float64 reference over 1 s of random actions (the head 0.5-0.9 %;
    # 4 substeps: 1.3-1.9 %)
    reward: GoalRewardConfig = GoalRewardConfig()


def default_config() -> Config:
    return Config()


@struct.dataclass
class SnakeTask:
    """Task state: the goal (world frame) and this episode's coefficients of the medium."""

    goal: jax.Array  # (2,) [m]
    resistance: jax.Array  # (3,) friction (forward, backward, lateral) or (2,) drag (c_t, c_n)


@register
class SnakeToGoal(GroundLocomotor):
    __doc__ = __doc__
    name = "SnakeToGoal-v0"

    @classmethod
    def default_config(cls) -> Config:
        return default_config()

    def build_model(self, config: Config) -> PlanarPCS:
        body = self.ground_body(config, SnakeBody, "max_curvature", "success_radius", "goal_bearing_deg")
        d0, d1 = config.goal_distance
        if not (0.0 < d0 <= d1):
            raise ValueError(f"goal_distance: expected 0 < low <= high, got {config.goal_distance}")
        if config.medium not in MEDIA:
            raise ValueError(f"medium: unknown {config.medium!r}; use one of {MEDIA}")
        if config.medium == "liquid":
            ResistiveForceTheory(*config.drag)  # validates the coefficients
            if config.slope_deg != 0.0:
                raise ValueError(f"slope_deg: a swimmer's liquid layer is level, got {config.slope_deg}")
        in_plane, self.normal_gravity = slope_gravity(config.slope_deg, config.uphill_deg)
        if config.slope_range_deg is not None:
            lo, hi = config.slope_range_deg
            if not (0.0 <= lo <= hi < 90.0):
                raise ValueError(f"slope_range_deg: expected 0 <= low <= high < 90, got {config.slope_range_deg}")
            if config.medium == "liquid":
                raise ValueError("slope_range_deg: a swimmer's liquid layer is level")
        return snake(body, gravity=in_plane, dtype=self.dtype)

    @property
    def observation_dim(self) -> int:
        N = self.config.num_segments
        return 3 + 2 * N + 3 + N + 2 + self.terrain_observation_dim

    #: size of :meth:`terrain_observation` (none on level ground)
    terrain_observation_dim = 0

    def terrain_observation(self, R):
        """What the snake senses of the terrain, given the rotation ``R`` ``(2, 2)`` from
        its heading frame to the world: nothing here (``SnakeOnSlope-v0`` adds the uphill
        direction)."""
        return jnp.zeros((0,), R.dtype)

    @property
    def action_dim(self) -> int:
        return self.config.num_segments

    # -- physics hooks ------------------------------------------------------------------------

    def resistance_coefficients(self):
        """The ground's friction coefficients, or the liquid's drag ``(c_t, c_n)``."""
        c = self.config
        return c.drag if c.medium == "liquid" else c.friction

    def line_load(self, model, ps):
        """Ground friction, or resistive-force drag in a liquid, with this episode's
        coefficients (and, under terrain randomisation, the normal load of this episode's
        slope: ``g cos(alpha) = sqrt(g^2 - |g_plane|^2)`` from the episode's in-plane gravity)."""
        c = self.config
        if c.medium == "liquid":
            c_t, c_n = ps.task.resistance[0], ps.task.resistance[1]
            return LineDrag(ResistiveForceTheory(c_t, c_n, dtype=self.dtype))
        if c.slope_range_deg is None:
            return super().line_load(model, ps)
        g_plane = model.params.gravity
        normal = jnp.sqrt(G * G - g_plane @ g_plane)
        return GroundFriction(ps.task.resistance, c.slip_velocity, normal, dtype=self.dtype)

    def _sample_params(self, key):
        """The body's randomised parameters, and under terrain randomisation
        (``slope_range_deg``) the in-plane gravity of a slope drawn uniformly in that range."""
        c = self.config
        if c.slope_range_deg is None:
            return super()._sample_params(key)
        k_body, k_slope = jax.random.split(key)
        params = super()._sample_params(k_body)
        params = self.model.params if params is None else params
        alpha = jnp.deg2rad(jax.random.uniform(k_slope, (), self.dtype, *c.slope_range_deg))
        phi = np.deg2rad(c.uphill_deg)
        uphill = jnp.asarray([np.cos(phi), np.sin(phi)], self.dtype)
        return params.replace(gravity=-G * jnp.sin(alpha) * uphill)

    def _curvature_stiffness(self, model):
        return jnp.diag(model.stiffness_matrix())[3:]

    def command(self, model, ps, action):
        """The bending forces move towards ``E I L k_cmd`` by the actuators' first-order lag
        over one control period (held within it)."""
        return self.lagged(ps.u, self._curvature_stiffness(model) * self.config.max_curvature * action)

    # -- task ---------------------------------------------------------------------------------

    def reset_task(self, key, model):
        c = self.config
        k_heading, k_dist, k_bearing, k_friction = jax.random.split(key, 4)
        psi = jax.random.uniform(k_heading, (), self.dtype, -jnp.pi, jnp.pi)
        L = model.total_length
        heading = jnp.stack([jnp.cos(psi), jnp.sin(psi)])
        q0 = self.straight_body(model, psi)
        dist = jax.random.uniform(k_dist, (), self.dtype, *c.goal_distance)
        half = np.deg2rad(c.goal_bearing_deg)
        bearing = psi + jax.random.uniform(k_bearing, (), self.dtype, -half, half)
        goal = 0.5 * L * heading + dist * jnp.stack([jnp.cos(bearing), jnp.sin(bearing)])
        task = SnakeTask(goal=goal, resistance=self.episode_resistance(k_friction))
        zeros = jnp.zeros(model.num_dofs, self.dtype)
        return task, q0, zeros, jnp.zeros(model.num_actuators, self.dtype)

    def outputs(self, model, prev, ps, action) -> StepOutputs:
        c = self.config
        pose, J = model.pose_and_jacobian(ps.q, model.total_length)  # one pass; J: world [omega, v]
        head, _, R = body_frame(model, ps.q, pose[:2, 2])
        to_goal = ps.task.goal - head
        d = jnp.linalg.norm(to_goal)
        twist = J @ ps.qd
        kappa_scale = c.max_curvature
        actions = ps.u / (self._curvature_stiffness(model) * kappa_scale)
        phase = 2.0 * jnp.pi * CLOCK_HZ * ps.t
        obs = jnp.concatenate(
            [
                R.T @ to_goal,
                d[None],
                ps.q[3:] / kappa_scale,
                ps.qd[3:] / (2.0 * jnp.pi * CLOCK_HZ * kappa_scale),
                jnp.concatenate([twist[:1], R.T @ twist[1:]]),
                actions,
                jnp.stack([jnp.sin(phase), jnp.cos(phase)]),
                self.terrain_observation(R),
            ]
        )
        success = (d < c.success_radius).astype(d.dtype)
        power = jnp.sum(jnp.abs(ps.u * ps.qd[3:]))
        if prev is None:
            progress = jnp.zeros_like(d)
            terms = None
        else:
            d_prev = jnp.linalg.norm(ps.task.goal - body_frame(model, prev.q)[0])
            progress = (d_prev - d) / self.control_dt
            terms = {"progress": progress, "success": success, "effort": -jnp.mean(action**2)}
        metrics = {
            "goal_distance": d,
            "success": success,
            "speed": progress / model.total_length,
            "power": power,
        }
        return StepOutputs(obs, terms, metrics, info={})

    def terminated(self, model, ps):
        head = body_frame(model, ps.q)[0]
        return jnp.linalg.norm(ps.task.goal - head) < self.config.success_radius

    # -- expert -----------------------------------------------------------------------------

    expert_kinds = ("cpg",)

    def build_expert(
        self,
        kind: str,
        amplitude: float = 2.0,
        frequency: float = 1.5,
        waves: float = 0.8,
        heading_gain: float = 1.0,
        max_bias: float = 1.0,
    ) -> Expert:
        """``"cpg"``: the commanded curvature of segment ``i`` (centre at ``s_i``) is
        ``amplitude sin(2 pi (frequency t + waves s_i / L)) + bias`` (in units of
        ``max_curvature``): a wave of ``waves`` wavelengths per body length travelling from
        head to tail at ``frequency`` [Hz], which pushes the body forward against its lateral
        friction; the bias ``clip(heading_gain e, -max_bias, max_bias)`` on every segment
        curls the body towards the goal, ``e`` [rad] the angle from the heading (tail to
        head) to the head-goal direction. Clipped to [-1, 1]. Stateless (time from the
        physics state)."""
        c = self.config
        N = c.num_segments
        s_mid = (np.arange(N) + 0.5) / N

        def act(state):
            ps = state.pipeline_state
            model = self.episode_model(ps)
            head, psi, _ = body_frame(model, ps.q)
            to_goal = ps.task.goal - head
            e = wrap_angle(jnp.arctan2(to_goal[1], to_goal[0]) - psi)
            bias = jnp.clip(heading_gain * e, -max_bias, max_bias)
            wave = amplitude * jnp.sin(2.0 * jnp.pi * (frequency * ps.t + waves * jnp.asarray(s_mid, ps.q.dtype)))
            return jnp.clip(wave + bias, -1.0, 1.0)

        return Expert(f"{self.name}/{kind}", act)

    def render_scene(self, ps):
        scene = super().render_scene(ps)
        goal = np.asarray(ps.task.goal)
        scene["markers"].append(("goal", np.array([goal[0], goal[1], 0.0]), "tab:green"))
        q = np.asarray(ps.q)
        centre = q[1:3] + 0.5 * float(self.model.total_length) * np.array([np.cos(q[0]), np.sin(q[0])])
        half = max(0.6, 0.6 * float(np.linalg.norm(goal - centre)) + 0.3)
        ground = -float(np.max(self.model.params.radius)) if self.config.medium == "ground" else None
        return top_view(scene, 0.5 * (centre + goal), half, ground)
