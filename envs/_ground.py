"""What the envs of soft crawlers on the ground share (planar floating-base rods seen from
above, :func:`sorogym.robots.snake` and :func:`sorogym.robots.crawler`): the body and
ground fields of their configs (:class:`GroundConfig`), the env base
(:class:`GroundLocomotor`: validation, the body, ground friction as a line load, the
actuators' lag, a straight body at reset, per-episode friction, the accuracy measure), the
body's heading frame, angle wrapping, the top-view scene, and the reward scales of the
goal-reaching locomotors (:class:`GoalRewardConfig`)."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from sorogym.contact import GroundFriction
from sorogym.env import EpisodeConfig, SoroEnv
from sorogym.models import check_positive_fields

from ._common import first_order_lag

G = 9.81  # m/s^2


@dataclasses.dataclass(frozen=True)
class GoalRewardScales:
    """Scales of the goal-reaching locomotors' reward terms: ``progress`` (the decrease of
    the distance to the goal per second [m/s]), ``success`` (1 within the success radius)
    and ``effort`` (``-mean(a^2)``)."""

    progress: float = 10.0
    success: float = 10.0
    effort: float = 0.05


@dataclasses.dataclass(frozen=True)
class GoalRewardConfig:
    scales: GoalRewardScales = GoalRewardScales()


@dataclasses.dataclass(frozen=True)
class GroundConfig(EpisodeConfig):
    """Body, ground and timing fields of a locomotion env's ``Config`` (each env sets its
    own defaults and adds its task's fields)."""

    # Timing: 20 Hz control, 10 s episodes, 8 linearly implicit substeps (each env states
    # its measured accuracy; theta and line_load_iterations as EpisodeConfig's unless set)
    control_dt: float = 0.05
    num_substeps: int = 8
    episode_length_s: float = 10.0
    integrator: str = "trapezoid"

    # Body: N equal segments of a uniform silicone rod
    num_segments: int = 6
    segment_length: float = 0.06  # m
    radius: float = 0.012  # m
    young_modulus: float = 5e5  # Pa
    density: float = 1070.0  # kg/m^3
    retardation_time: float = 0.05  # s, Kelvin-Voigt tau = 3 eta / E
    actuator_time_constant: float = 0.1  # s, first-order lag of the actuators
    # Ground
    friction: tuple[float, float, float] = (0.1, 0.2, 0.6)  # forward, backward, lateral
    slip_velocity: float = 0.01  # m/s
    friction_range: tuple[float, float] = (0.8, 1.25)  # per-episode factor on all three


class GroundLocomotor(SoroEnv):
    """Base of the envs of a soft body crawling on the ground (``config``: a
    :class:`GroundConfig`). The task state of an episode has a ``resistance`` field, that
    episode's coefficients of the medium's resistance (:meth:`resistance_coefficients`
    times a factor in ``friction_range``): the ground's friction here.

    The accuracy check follows the centre of mass over 1 s (20 control steps): the body's
    displacement, which is the task, over a short horizon, since any integrator's position
    error grows with the distance travelled."""

    accuracy_steps = 20
    accuracy_point_name = "centre_of_mass"
    #: ``g_n`` [m/s^2]: the gravity pressing the body on the ground (less on a slope)
    normal_gravity: float = G

    def ground_body(self, config: GroundConfig, body_class, *positive_fields: str):
        """Validate the ground and body fields of ``config`` (and ``positive_fields``), then
        return ``body_class`` (:class:`~sorogym.robots.SnakeBody` or
        :class:`~sorogym.robots.CrawlerBody`) built from it, kept as ``self.body``."""
        check_positive_fields(config, ("slip_velocity", "actuator_time_constant", *positive_fields))
        lo, hi = config.friction_range
        if not (0.0 < lo <= hi):
            raise ValueError(f"friction_range: expected 0 < low <= high, got {config.friction_range}")
        GroundFriction(config.friction, config.slip_velocity)  # validates the coefficients
        self.body = body_class(
            config.num_segments,
            config.segment_length,
            config.radius,
            config.young_modulus,
            config.density,
            config.retardation_time,
        )
        return self.body

    def resistance_coefficients(self) -> tuple[float, ...]:
        """The nominal coefficients of the medium: ``config.friction`` (forward, backward,
        lateral) on the ground."""
        return self.config.friction

    def line_load(self, model, ps):
        """Ground friction along the body with this episode's coefficients."""
        return GroundFriction(ps.task.resistance, self.config.slip_velocity, self.normal_gravity, dtype=self.dtype)

    def lagged(self, u, target):
        """The actuators' forces after one control period of their first-order lag towards
        ``target`` (held within the period)."""
        return first_order_lag(u, target, self.config.control_dt, self.config.actuator_time_constant)

    def straight_body(self, model, heading):
        """``q`` of the body straight along ``heading`` [rad], centred on the origin."""
        tail = -0.5 * model.total_length * jnp.stack([jnp.cos(heading), jnp.sin(heading)])
        return jnp.zeros(model.num_dofs, self.dtype).at[0].set(heading).at[1:3].set(tail)

    def episode_resistance(self, key):
        """The episode's coefficients: :meth:`resistance_coefficients` times one factor
        drawn in ``friction_range``."""
        factor = jax.random.uniform(key, (), self.dtype, *self.config.friction_range)
        return factor * jnp.asarray(self.resistance_coefficients(), self.dtype)

    def accuracy_point(self, model, q):
        """The centre of mass ``(2,)`` [m] in the ground plane."""
        return model.centre_of_mass(q)


def body_frame(model, q, head=None):
    """``(head (2,), heading angle psi, rotation (2, 2))``: the head position [m] and the
    direction from tail to head (the body's heading) in the world, and the rotation from
    that heading frame to the world (``head``: the head position when already known)."""
    head = model.forward_kinematics(q, model.total_length)[:2, 2] if head is None else head
    d = head - q[1:3]
    psi = jnp.arctan2(d[1], d[0])
    c, s = jnp.cos(psi), jnp.sin(psi)
    return head, psi, jnp.stack([jnp.stack([c, -s]), jnp.stack([s, c])])


def wrap_angle(a):
    """``a`` [rad] wrapped to (-pi, pi]."""
    return jnp.arctan2(jnp.sin(a), jnp.cos(a))


def top_view(scene: dict, centre, half: float, ground: float | None = None) -> dict:
    """``scene`` seen from above (the ground is the model's plane), framed as the square of
    half-width ``half`` [m] around ``centre`` ``(2,)``; ``ground``: the height [m] of the
    surface the body lies on (minus its radius: the backbone runs at z = 0), None in a fluid."""
    c = np.asarray(centre, float)
    scene["bounds"] = ((c[0] - half, c[0] + half), (c[1] - half, c[1] + half), (-0.1, 0.1))
    scene["view"] = (90.0, -90.0)
    if ground is not None:
        scene["ground"] = float(ground)
    return scene
