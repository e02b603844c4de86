"""``BrittleStarToGoal-v0``: a soft brittle star walks over the ground to a goal by
undulating its five tendon-driven arms.

Robot (:func:`sorogym.robots.planar_brittle_star`, a :class:`sorogym.models.PlanarStar`): a
rigid disc (radius 30 mm, 40 g) free in the ground plane with five silicone arms of two
60 mm bending segments each (radius 7 mm, ``E`` 0.5 MPa, Kelvin-Voigt retardation 50 ms;
20 g per arm, 140 g in all, 0.3 m tip to tip), seen from above: ``q = [theta, x, y,
k_arm0_0, k_arm0_1, ..., k_arm4_1]`` (the disc's angle and centre, each segment's
curvature). Each segment is bent by an antagonistic pair of tendons 5 mm either side of the
backbone, the one of segment 0 anchored at its tip, the one of segment 1 at the arm's tip
(so it bends both segments). The disc is carried clear of the ground by the arms (as a
brittle star holds it): the ground presses on the arms with the whole weight, friction
``(forward, backward, lateral)`` = ``(0.2, 0.2, 0.6)`` per unit length along the arms
(arm spines grip sideways), regularised over 10 mm/s (:class:`sorogym.contact.GroundFriction`
with ``g_n = g m_total / m_arms``), stepped implicitly with one Newton correction per
substep, the elastic and damping forces at ``theta = 0.75`` of each substep.

* **Action** ``(10,)`` in [-1, 1], arm by arm, segment by segment: ``a > 0`` pulls the
  pair's counter-clockwise tendon with ``a max_tension`` (6 N), ``a < 0`` the clockwise
  one with ``|a| max_tension`` (tendons only pull), through the actuators' 0.1 s
  first-order lag.
* **Observation** ``(38,)`` float32, in the disc's frame: goal minus disc centre (2) [m]
  and its distance (1), the disc's twist (yaw rate [rad/s], velocity (2) [m/s]), the
  curvatures ``/ max_curvature`` (10; the curvature ``max_tension`` holds on segment 0
  alone, 32 1/m) and their rates ``/ (2 pi 2.5 Hz max_curvature)`` (10), the tendon pairs'
  state in action units (10), and a 2.5 Hz clock ``(sin, cos)`` (2), the expert's gait
  frequency, so that its action is a function of the observation.
  :meth:`BrittleStarToGoal.agent_observations` splits it into one observation per arm (14:
  the disc's part in the arm's frame, the arm's own state, the clock): the multi-agent view
  ``sorogym.env.LimbAgents(gymnasium.make("sorogym/BrittleStarToGoal-v0"))``, one agent per
  arm with its own two actions and a shared reward.
* **Reward** terms: ``progress`` = the decrease of the disc-goal distance per second
  [m/s], ``success = [distance < success_radius]`` (5 cm), ``effort = -mean(a^2)``; scales
  10, 10, 0.05.
* **Termination**: success (or a diverging simulation); time limit 10 s = 200 steps.
  ``metrics``: ``goal_distance`` [m], ``success``, ``speed`` (progress in body lengths per
  second, the body length being the star's span tip to tip), ``power`` [W] (the tendons'
  mechanical power ``sum |u_j dphi_j/dt|``, for the cost of transport).
* **Reset**: the star at rest with straight arms, its disc at the origin at a random angle;
  a goal 0.2 to 0.4 m away in any direction; per-episode friction coefficients scaled by
  one factor in ``friction_range`` (``config.randomization`` randomises the arms' material).
* **Expert** (``env.expert("gait")``): every arm undulates at 2.5 Hz (its outer segment
  30 degrees ahead of the inner one, nearly bang-bang), the wave travelling inwards on the
  arms that point towards the goal and outwards on those that point away
  (:meth:`BrittleStarToGoal.build_expert`).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from sorogym.env import Expert, StepOutputs, register
from sorogym.models import PlanarStar
from sorogym.robots import BrittleStarBody, planar_brittle_star

from ._ground import G, GoalRewardConfig, GroundConfig, GroundLocomotor, top_view, wrap_angle

CLOCK_HZ = 2.5  # Hz, the observation clock and the expert's gait frequency


@dataclasses.dataclass(frozen=True)
class Config(GroundConfig):
    # Arms (GroundConfig's body fields describe one arm)
    num_segments: int = 2
    segment_length: float = 0.06  # m
    radius: float = 0.007  # m
    num_arms: int = 5
    hub_radius: float = 0.03  # m
    hub_mass: float = 0.04  # kg
    tendon_offset: float = 0.005  # m
    max_tension: float = 6.0  # N, |action| = 1
    # Ground: arm spines slide along the arm and grip sideways
    friction: tuple[float, float, float] = (0.2, 0.2, 0.6)
    line_load_iterations: int = 1
    theta: float = 0.75
    # A soft, lightly damped 60-mm arm whipping under switched tensions reaches curvature
    # rates above 1e3 1/(m s) while its state stays finite and bounded (soaked to 1e6)
    divergence_bound: float = 1e4
    # Task
    goal_distance: tuple[float, float] = (0.2, 0.4)  # m, from the disc's centre
    success_radius: float = 0.05
    reward: GoalRewardConfig = GoalRewardConfig()


def default_config() -> Config:
    return Config()


@struct.dataclass
class StarTask:
    """Task state: the goal (world frame) and this episode's friction coefficients."""

    goal: jax.Array  # (2,) [m]
    resistance: jax.Array  # (3,) friction (forward, backward, lateral)


@register
class BrittleStarToGoal(GroundLocomotor):
    __doc__ = __doc__
    name = "BrittleStarToGoal-v0"
    # Narrower than the rods' default: under bang-bang tensions the softest, least damped
    # corner of the default ranges (E, G x0.5, radius x0.9, length x1.1, damping x0.5)
    # ended every episode at the divergence bound (scripts/soak_envs.py).
    randomization_limits = {
        "length": (0.95, 1.05),
        "radius": (0.95, 1.05),
        "density": (0.85, 1.2),
        "young_modulus": (0.7, 2.0),
        "shear_modulus": (0.7, 2.0),
        "damping": (0.7, 2.0),
    }

    @classmethod
    def default_config(cls) -> Config:
        return default_config()

    def build_model(self, config: Config) -> PlanarStar:
        arm = self.ground_body(config, BrittleStarBody, "max_tension", "success_radius")
        d0, d1 = config.goal_distance
        if not (0.0 < d0 <= d1):
            raise ValueError(f"goal_distance: expected 0 < low <= high, got {config.goal_distance}")
        self.body = dataclasses.replace(
            arm,
            num_arms=config.num_arms,
            hub_radius=config.hub_radius,
            hub_mass=config.hub_mass,
            tendon_offset=config.tendon_offset,
        )
        model = planar_brittle_star(self.body, dtype=self.dtype)
        # the arms carry the disc: the ground presses on them with the whole weight
        self.normal_gravity = G * self.body.total_mass / (self.body.num_arms * self.body.mass)
        return model

    @property
    def max_curvature(self) -> float:
        """The curvature [1/m] ``max_tension`` holds on a segment bent by its own pair alone."""
        b = self.body
        return self.config.max_tension * b.tendon_offset / b.bending_stiffness

    @property
    def span(self) -> float:
        """The star's span tip to tip at rest [m], its body length."""
        return 2.0 * (self.body.hub_radius + self.body.length)

    @property
    def robot_length(self) -> float:
        """The span: the scale of the accuracy check, as of the speed metric."""
        return self.span

    @property
    def observation_dim(self) -> int:
        return 3 + 3 + 3 * self.action_dim + 2

    @property
    def action_dim(self) -> int:
        return self.config.num_arms * self.config.num_segments

    # -- multi-agent view -----------------------------------------------------------------

    @property
    def agent_names(self) -> tuple[str, ...]:
        """The agents of the multi-agent view (:class:`sorogym.env.LimbAgents`): one per arm."""
        return tuple(f"arm{k}" for k in range(self.config.num_arms))

    @property
    def agent_observation_dim(self) -> int:
        """Size of one arm's observation in :meth:`agent_observations`."""
        return 6 + 3 * self.config.num_segments + 2

    def agent_observations(self, obs):
        """One observation per arm ``(..., K, 6 + 3 N + 2)`` from observations ``(..., 38)``
        (numpy or jax): the disc's part (goal vector, distance, twist) in the arm's own frame
        (x along the arm), then the arm's curvatures, rates and tendon states, and the clock.
        Arms with equal views act alike, so one shared policy can drive them all."""
        xp = jnp if isinstance(obs, jax.Array) else np
        K, N = self.config.num_arms, self.config.num_segments
        phi = 2.0 * np.pi * np.arange(K) / K
        c, s = np.cos(phi), np.sin(phi)
        to_arm = np.stack([np.stack([c, s], -1), np.stack([-s, c], -1)], -2)  # (K, 2, 2): disc -> arm frame
        goal = xp.einsum("kij,...j->...ki", to_arm, obs[..., 0:2])
        velocity = xp.einsum("kij,...j->...ki", to_arm, obs[..., 4:6])
        lead = obs.shape[:-1]
        distance = xp.broadcast_to(obs[..., None, 2:3], (*lead, K, 1))
        yaw_rate = xp.broadcast_to(obs[..., None, 3:4], (*lead, K, 1))
        arms = [obs[..., 6 + j * K * N : 6 + (j + 1) * K * N].reshape(*lead, K, N) for j in range(3)]
        clock = xp.broadcast_to(obs[..., None, -2:], (*lead, K, 2))
        return xp.concatenate([goal, distance, yaw_rate, velocity, *arms, clock], axis=-1)

    # -- physics hooks ------------------------------------------------------------------------

    def _tensions(self, signed):
        """Signed pair forces ``(K N,)`` -> tendon tensions ``(K 2 N,)`` in the model's order."""
        K, N = self.config.num_arms, self.config.num_segments
        pairs = signed.reshape(K, N)
        return jnp.concatenate([jnp.maximum(pairs, 0.0), jnp.maximum(-pairs, 0.0)], axis=1).reshape(-1)

    def _pair_forces(self, u):
        """Tendon tensions ``(K 2 N,)`` -> signed pair forces ``(K N,)`` [N]."""
        K, N = self.config.num_arms, self.config.num_segments
        t = u.reshape(K, 2, N)
        return (t[:, 0] - t[:, 1]).reshape(-1)

    def command(self, model, ps, action):
        """The tendon tensions move towards those the action asks for by the actuators'
        first-order lag over one control period (held within it)."""
        return self.lagged(ps.u, self._tensions(self.config.max_tension * action))

    # -- task ---------------------------------------------------------------------------------

    def reset_task(self, key, model):
        c = self.config
        k_angle, k_dist, k_bearing, k_friction = jax.random.split(key, 4)
        angle = jax.random.uniform(k_angle, (), self.dtype, -jnp.pi, jnp.pi)
        dist = jax.random.uniform(k_dist, (), self.dtype, *c.goal_distance)
        bearing = jax.random.uniform(k_bearing, (), self.dtype, -jnp.pi, jnp.pi)
        goal = dist * jnp.stack([jnp.cos(bearing), jnp.sin(bearing)])
        task = StarTask(goal=goal, resistance=self.episode_resistance(k_friction))
        zeros = jnp.zeros(model.num_dofs, self.dtype)
        return task, zeros.at[0].set(angle), zeros, jnp.zeros(model.num_actuators, self.dtype)

    def outputs(self, model, prev, ps, action) -> StepOutputs:
        c = self.config
        R = model.hub_pose(ps.q)[:2, :2]  # disc frame -> world
        to_goal = ps.task.goal - ps.q[1:3]
        d = jnp.linalg.norm(to_goal)
        kappa = self.max_curvature
        phase = 2.0 * jnp.pi * CLOCK_HZ * ps.t
        obs = jnp.concatenate(
            [
                R.T @ to_goal,
                d[None],
                ps.qd[:1],
                R.T @ ps.qd[1:3],
                ps.q[3:] / kappa,
                ps.qd[3:] / (2.0 * jnp.pi * CLOCK_HZ * kappa),
                self._pair_forces(ps.u) / c.max_tension,
                jnp.stack([jnp.sin(phase), jnp.cos(phase)]),
            ]
        )
        success = (d < c.success_radius).astype(d.dtype)
        power = jnp.sum(jnp.abs(ps.u * (model.actuation_matrix(ps.q).T @ ps.qd)))
        if prev is None:
            progress = jnp.zeros_like(d)
            terms = None
        else:
            progress = (jnp.linalg.norm(ps.task.goal - prev.q[1:3]) - d) / self.control_dt
            terms = {"progress": progress, "success": success, "effort": -jnp.mean(action**2)}
        metrics = {"goal_distance": d, "success": success, "speed": progress / self.span, "power": power}
        return StepOutputs(obs, terms, metrics, info={})

    def terminated(self, model, ps):
        return jnp.linalg.norm(ps.task.goal - ps.q[1:3]) < self.config.success_radius

    # -- expert -----------------------------------------------------------------------------

    expert_kinds = ("gait",)

    def build_expert(
        self,
        kind: str,
        amplitude: float = 3.0,
        frequency: float = CLOCK_HZ,
        lag_deg: float = 30.0,
        alignment_power: float = 0.0,
        tip_ratio: float = 1.0,
    ) -> Expert:
        """``"gait"``: every arm undulates against its lateral friction, each segment's
        curvature (in units of ``max_curvature``) following ``w sin(2 pi frequency t + sign(c_k)
        lag i / (N - 1))`` for segment ``i`` of arm ``k``, ``c_k = cos(beta - phi_k)`` its
        alignment with the goal's bearing ``beta`` (``phi_k`` the arm's direction, both in the
        disc's frame) and ``w = amplitude |c_k|^alignment_power tip_ratio^(i / (N - 1))``. The
        outer segment leads: the wave travels inwards on the arms that point towards the goal,
        which then slide tip first like a snake, and outwards on those that point away, so
        every arm pushes the disc goalwards. The curvatures are turned into tendon-pair
        commands (pair ``j`` bends segments ``0..j``) and clipped to [-1, 1]: with the default
        amplitude of 3 the stroke is nearly bang-bang. Defaults tuned on the evaluation seed
        (16 episodes; frequency 1.5-3 Hz, lag 15-60 degrees, amplitude 0.7-3, tip ratio
        0.5-2 and alignment power 0-1 tried); 8 or 24 substeps per control step give the
        same speed. Stateless (time from the physics state)."""
        c = self.config
        K, N = c.num_arms, c.num_segments
        phi = 2.0 * np.pi * np.arange(K) / K
        lag = np.deg2rad(lag_deg) * np.arange(N) / max(N - 1, 1)
        profile = tip_ratio ** (np.arange(N) / max(N - 1, 1))

        def act(state):
            ps = state.pipeline_state
            to_goal = ps.task.goal - ps.q[1:3]
            beta = wrap_angle(jnp.arctan2(to_goal[1], to_goal[0]) - ps.q[0])
            align = jnp.cos(beta - jnp.asarray(phi, ps.q.dtype))  # (K,)
            weight = amplitude * jnp.abs(align) ** alignment_power
            phase = 2.0 * jnp.pi * frequency * ps.t + jnp.sign(align)[:, None] * jnp.asarray(lag, ps.q.dtype)
            # (K, N) segment curvatures in units of max_curvature
            curvature = weight[:, None] * jnp.asarray(profile, ps.q.dtype) * jnp.sin(phase)
            # pair j bends segments 0..j: segment i's curvature is the sum of pairs j >= i
            pairs = curvature - jnp.pad(curvature[:, 1:], ((0, 0), (0, 1)))
            return jnp.clip(pairs.reshape(-1), -1.0, 1.0)

        return Expert(f"{self.name}/{kind}", act)

    def render_scene(self, ps):
        scene = super().render_scene(ps)
        goal = np.asarray(ps.task.goal)
        scene["markers"].append(("goal", np.array([goal[0], goal[1], 0.0]), "tab:green"))
        centre = np.asarray(ps.q)[1:3]
        half = max(0.3, 0.6 * float(np.linalg.norm(goal - centre)) + 0.2)
        return top_view(scene, 0.5 * (centre + goal), half, ground=-float(np.max(self.model.params.radius)))
