"""``ConcentricTubeReaching-v0``: a three-tube concentric tube robot reaches goals by rotating
and inserting its tubes.

Robot: the Lie-group framework's Table 7 (:func:`sorogym.robots.concentric_tube_robot`): a
0.6 m nitinol wire precurved at 6 1/m inside a 0.4 m tube precurved at 4 1/m, both through
a stiff straight 0.05 m outer tube, leaving the base plate upright (world +z); no gravity.
Discretisation: linear bending per link, quadratic twist per section (``q`` has 27
entries: bending coefficients of the links between tube tips, then per tube its angle at
the plate and its twist coefficients); 0.1 m of straight tube between each drive and the
plate (the drives' torsional compliance). The drives set parameters of the model
(:meth:`ConcentricTubeReaching.actuated`): the actuator state ``u = [rotation (3) [rad],
translation (3) [m]]``, tubes innermost first, a tube's tip at ``length + translation``.

Physics: the overdamped scheme (:func:`sorogym.sim.overdamped_step`): inertia is negligible
for tubes this thin driven this slowly, and each control period relaxes the robot onto the
equilibrium of its new drives (2 saddle-free Newton steps of 50 ms; the Kelvin-Voigt
relaxation time is about 1 ms; against the continuous overdamped flow the tip stays within
0.74 mm over an episode of random actions, 0.18 mm with 4 steps). When the two precurved
tubes are turned far enough against each other (about 5 rad here) the equilibrium
disappears in a fold and the robot **snaps** to the other branch, its tip jumping by up to
0.2 m within one period, as real concentric tube robots do.

Goals are reachable by construction: each reset draws a start and a goal from a bank of
stable equilibria (their drives, configurations and tips), computed once per robot at
construction by driving the robot from its home pose (drives at zero) along a straight
path in drive space to random admissible drives with this env's own physics.

* **Action** ``(5,)`` in [-1, 1]: increments of the drives per control period: the
  rotations of the precurved tubes (``rotated_tubes``, by at most ``max_rotation_step``
  = 0.2 rad) and the insertions of all tubes (by at most ``max_insertion_step`` = 10 mm);
  the tips are then kept nested (each tip at least ``min_tip_spacing`` = 5 mm beyond the
  next outer one, the outer tube at least ``min_exposed_length`` = 5 mm out of the plate,
  no tube beyond its length), the rotations are unbounded.
* **Observation** ``(40,)`` float32: ``q`` (27), cosine and sine of the rotated tubes'
  rotations (4), translations (3) [m], tip position (3) [m], tip-to-goal vector (3) [m];
  world frame.
* **Reward** terms: ``distance = -|tip - goal|`` [m] (the far field),
  ``precision = 1 - tanh(distance / (2 success_radius))`` (the last centimetres),
  ``success = [distance < success_radius]`` (5 mm), ``motion = -mean(action^2)``; scales
  10, 1, 1, 0.02; with obstacles also ``clearance`` (below).
* **Obstacles** (optional, none by default): spheres ``obstacle_centers``,
  ``obstacle_radii`` [m] standing for anatomy the backbone must not enter. No contact force
  (the tubes would pierce soft tissue, not bounce off it): the reward term ``clearance =
  -depth`` (scale 20 per m) with ``depth`` the deepest penetration of ``obstacle_probes``
  backbone points, ``metrics["penetration"]`` [m] and the safe-RL cost ``info["cost"] =
  [depth > 0]``; starts and goals are drawn with their tips outside. The expert ignores
  them.
* **Termination**: none (time limit 6 s = 60 steps, applied by the wrappers), except a
  diverging simulation. ``metrics["success"]``, ``metrics["goal_distance"]`` [m],
  ``metrics["penetration"]`` [m] (0 without obstacles), ``info["cost"]``.
* **Expert** (``env.expert()``): ``"quasi_static"``: each control period one bounded
  damped least-squares step in action units on the static sensitivity of the tip to the
  drives (:func:`sorogym.control.static_drive_sensitivity`, the implicit function theorem
  on the equilibrium plus the drives' direct effect), correcting a fraction ``gain`` of the
  tip error.
"""

from __future__ import annotations

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from sorogym.control import bounded_least_squares_step, static_drive_sensitivity
from sorogym.env import EpisodeConfig, Expert, SoroEnv, StepOutputs, register
from sorogym.models import ConcentricTubeRobot, check_positive_fields
from sorogym.robots import concentric_tube_robot

from .goals import robot_key, sample_goal

_ROBOT_FIELDS = ("damping", "transmission_length", "bending_order", "twist_order", "num_gauss_points")
_DRIVE_FIELDS = (
    "rotated_tubes",
    "max_rotation_step",
    "max_insertion_step",
    "min_tip_spacing",
    "min_exposed_length",
    "control_dt",
    "num_substeps",
    "integrator",
    "theta",
)


@dataclasses.dataclass(frozen=True)
class RewardScales:
    distance: float = 10.0
    precision: float = 1.0
    success: float = 1.0
    motion: float = 0.02
    clearance: float = 20.0  # per m of the deepest penetration of an obstacle (0 without obstacles)


@dataclasses.dataclass(frozen=True)
class RewardConfig:
    scales: RewardScales = RewardScales()


@dataclasses.dataclass(frozen=True)
class Config(EpisodeConfig):
    # Robot: Table 7's tubes
    damping: float = 2e6  # Kelvin-Voigt viscosity [Pa s]
    transmission_length: float = 0.1  # m of straight tube between a drive and the plate
    bending_order: int = 1
    twist_order: int = 2
    num_gauss_points: int = 3
    # Drives
    rotated_tubes: tuple[int, ...] = (0, 1)  # the precurved tubes (a straight tube's rotation does nothing)
    max_rotation_step: float = 0.2  # rad per control period
    max_insertion_step: float = 0.01  # m per control period (0.1 m/s: the whole stroke in an episode)
    min_tip_spacing: float = 0.005  # m between consecutive tube tips
    min_exposed_length: float = 0.005  # m of the outermost tube beyond the plate
    # Task
    num_goal_candidates: int = 256
    goal_ramp_steps: int = 40  # control periods from home to a bank entry's drives (then 20 to settle)
    success_radius: float = 0.005  # m
    # Optional anatomy: spheres the backbone must keep out of (none by default)
    obstacle_centers: tuple = ()  # ((x, y, z), ...) [m], world frame
    obstacle_radii: tuple[float, ...] = ()  # m
    obstacle_probes: int = 16  # backbone points checked against them
    # Timing and integration
    control_dt: float = 0.1
    num_substeps: int = 2  # 50 ms Newton steps: 0.74 mm tip error per episode (4: 0.18 mm; 1: 17 mm)
    episode_length_s: float = 6.0
    integrator: str = "overdamped"
    theta: float = 1.0
    divergence_bound: float = 1e5  # qd = dq / h: a snap moves q by a few units within one substep
    reward: RewardConfig = RewardConfig()


def default_config() -> Config:
    return Config()


@struct.dataclass
class ReachingTask:
    """Task state: a static goal, one stable equilibrium of the goal bank."""

    goal: jax.Array  # (3,) goal position [m], world frame
    goal_drives: jax.Array  # (2T,) the drives of that equilibrium [rad, m]


def nested_tips(tips, lengths, spacing: float, exposed: float):
    """Tube tips ``(T,)`` [m] (innermost first) moved the least to nest: from the outermost
    inwards, each tip clipped to ``[next outer tip + spacing, its length]`` (the outermost to
    ``[exposed, its length]``)."""
    nested = [jnp.clip(tips[-1], exposed, lengths[-1])]
    for i in range(tips.shape[0] - 2, -1, -1):
        nested.append(jnp.clip(tips[i], nested[-1] + spacing, lengths[i]))
    return jnp.stack(nested[::-1])


_GOAL_BANKS: dict = {}


@register
class ConcentricTubeReaching(SoroEnv):
    __doc__ = __doc__
    name = "ConcentricTubeReaching-v0"
    #: the float64 accuracy reference replays the checked run's task: a small goal bank suffices
    reference_overrides = {"num_goal_candidates": 8, "goal_ramp_steps": 4}
    #: per-tube factors that ``config.randomization`` may apply (the tubes' moduli, precurvature
    #: and damping; density and the lengths are left alone: no inertia, fixed nesting)
    randomization_limits = {
        "young_modulus": (0.5, 2.0),
        "shear_modulus": (0.5, 2.0),
        "precurvature": (0.8, 1.25),
        "damping": (0.25, 4.0),
    }

    @classmethod
    def default_config(cls) -> Config:
        return default_config()

    def __init__(self, config=None, **overrides):
        super().__init__(config, **overrides)
        self.goal_bank = self._goal_bank()

    def build_model(self, config: Config) -> ConcentricTubeRobot:
        check_positive_fields(
            config,
            (
                "damping",
                "max_rotation_step",
                "max_insertion_step",
                "min_tip_spacing",
                "min_exposed_length",
                "success_radius",
            ),
        )
        if config.integrator != "overdamped":
            raise ValueError(
                f"integrator: {self.name} relaxes onto equilibria with 'overdamped' (Table 7's tubes are "
                f"too stiff and light for the inertial schemes at control rates), got {config.integrator!r}"
            )
        centers, radii = np.asarray(config.obstacle_centers, float), np.asarray(config.obstacle_radii, float)
        if centers.size or radii.size:
            if centers.ndim != 2 or centers.shape != (radii.size, 3) or not np.all(np.isfinite(centers)):
                raise ValueError(
                    f"obstacle_centers: one finite (x, y, z) per obstacle radius, got {config.obstacle_centers!r}"
                )
            if not np.all(radii > 0):
                raise ValueError(f"obstacle_radii: must be positive [m], got {config.obstacle_radii!r}")
        for name in ("num_goal_candidates", "goal_ramp_steps", "obstacle_probes"):
            if not (isinstance(getattr(config, name), int) and getattr(config, name) >= 1):
                raise ValueError(f"{name}: must be an integer >= 1, got {getattr(config, name)!r}")
        model = concentric_tube_robot(
            bending_order=config.bending_order,
            twist_order=config.twist_order,
            num_gauss_points=config.num_gauss_points,
            damping=config.damping,
            transmission_length=config.transmission_length,
            dtype=self.dtype,
        )
        T = model.num_tubes
        rotated = tuple(config.rotated_tubes)
        if not rotated or len(set(rotated)) != len(rotated) or not all(0 <= i < T for i in rotated):
            raise ValueError(f"rotated_tubes: distinct tube indices in [0, {T}), got {config.rotated_tubes!r}")
        lengths = np.asarray(model.params.length)
        needed = config.min_exposed_length + config.min_tip_spacing * np.arange(T - 1, -1, -1)
        if np.any(lengths < needed):
            raise ValueError(
                f"min_tip_spacing, min_exposed_length: the tubes (lengths {lengths} m) cannot nest with "
                f"{config.min_tip_spacing} m between tips and {config.min_exposed_length} m exposed"
            )
        return model

    # -- drives ---------------------------------------------------------------------------

    @property
    def num_tubes(self) -> int:
        return self.model.num_tubes

    def actuated(self, model, u):
        """The robot with its drives at ``u = [rotation (T), translation (T)]``; no efforts."""
        T = self.num_tubes
        return model.update_params(rotation=u[:T], translation=u[T:]), None

    def episode_model(self, ps):
        return self.actuated(super().episode_model(ps), ps.u)[0]

    def _step_sizes(self):
        """Drive change per unit action ``(k,)``: rotations then insertions."""
        c = self.config
        r = len(c.rotated_tubes)
        return jnp.concatenate(
            [jnp.full(r, c.max_rotation_step, self.dtype), jnp.full(self.num_tubes, c.max_insertion_step, self.dtype)]
        )

    def _drives_of(self, u):
        """The actuated drives ``(k,)`` of the actuator state ``u``."""
        T, idx = self.num_tubes, jnp.asarray(self.config.rotated_tubes)
        return jnp.concatenate([u[idx], u[T:]])

    def _with_drives(self, u, p):
        """The actuator state ``u`` with its actuated drives set to ``p``, tips nested."""
        c, T, idx = self.config, self.num_tubes, jnp.asarray(self.config.rotated_tubes)
        lengths = self.model.params.length
        tips = nested_tips(lengths + p[len(c.rotated_tubes) :], lengths, c.min_tip_spacing, c.min_exposed_length)
        return jnp.concatenate([u[:T].at[idx].set(p[: len(c.rotated_tubes)]), tips - lengths])

    def command(self, model, ps, action):
        return self._with_drives(ps.u, self._drives_of(ps.u) + self._step_sizes() * action)

    # -- spaces ---------------------------------------------------------------------------

    @property
    def observation_dim(self) -> int:
        return self.model.num_dofs + 2 * len(self.config.rotated_tubes) + self.num_tubes + 6

    @property
    def action_dim(self) -> int:
        return len(self.config.rotated_tubes) + self.num_tubes

    # -- task -----------------------------------------------------------------------------

    @property
    def has_obstacles(self) -> bool:
        return len(self.config.obstacle_radii) > 0

    def _obstacles(self):
        return jnp.asarray(self.config.obstacle_centers, self.dtype), jnp.asarray(
            self.config.obstacle_radii, self.dtype
        )

    def penetration(self, model, q):
        """Deepest penetration [m] (``>= 0``) of the backbone, probed at ``obstacle_probes``
        points from the plate to the tip of the driven ``model``, into the obstacles."""
        s = jnp.linspace(0.0, 1.0, self.config.obstacle_probes, dtype=self.dtype) * model.total_length
        points = model.forward_kinematics_batched(q, s)[:, :3, 3]
        centers, radii = self._obstacles()
        distance = jnp.linalg.norm(points[:, None, :] - centers[None, :, :], axis=-1)
        return jnp.maximum(jnp.max(radii[None, :] - distance), 0.0)

    def reset_task(self, key, model):
        k_start, k_goal = jax.random.split(key)
        bank = jnp.asarray(self.goal_bank, self.dtype)
        n, T = model.num_dofs, self.num_tubes
        centers, radii = self._obstacles() if self.has_obstacles else (None, None)
        # neither the start's tip nor the goal inside an obstacle
        start, goal = sample_goal(k_start, bank, centers, radii), sample_goal(k_goal, bank, centers, radii)
        task = ReachingTask(goal=goal[:3], goal_drives=goal[3 : 3 + 2 * T])
        q0, u0 = start[3 + 2 * T : 3 + 2 * T + n], start[3 : 3 + 2 * T]
        return task, q0, jnp.zeros(n, self.dtype), u0

    def outputs(self, model, prev, ps, action) -> StepOutputs:
        c, T = self.config, self.num_tubes
        driven = self.actuated(model, ps.u)[0]
        tip = self.tip_position(driven, ps.q)
        d = jnp.linalg.norm(ps.task.goal - tip)
        angles = ps.u[jnp.asarray(c.rotated_tubes)]
        motion = jnp.zeros((), d.dtype) if action is None else -jnp.mean(action**2)
        terms = {
            "distance": -d,
            "precision": 1.0 - jnp.tanh(d / (2.0 * c.success_radius)),
            "success": (d < c.success_radius).astype(d.dtype),
            "motion": motion,
        }
        depth = self.penetration(driven, ps.q) if self.has_obstacles else jnp.zeros_like(d)
        terms["clearance"] = -depth
        obs = jnp.concatenate([ps.q, jnp.cos(angles), jnp.sin(angles), ps.u[T:], tip, ps.task.goal - tip])
        metrics = {"goal_distance": d, "success": terms["success"], "penetration": depth}
        return StepOutputs(obs, terms, metrics, info={"cost": (depth > 0).astype(d.dtype)})

    # -- goal bank ------------------------------------------------------------------------

    def _goal_bank(self) -> np.ndarray:
        """Rows ``[tip (3) [m], drives (2T), q (n)]`` of stable equilibria (module docstring),
        memoised per robot and drive settings."""
        c = self.config
        key = robot_key(c, _ROBOT_FIELDS + _DRIVE_FIELDS) + (
            ("num_goal_candidates", c.num_goal_candidates),
            ("goal_ramp_steps", c.goal_ramp_steps),
        )
        if key not in _GOAL_BANKS:
            _GOAL_BANKS[key] = self._solve_goal_bank(jax.random.PRNGKey(0))
        return _GOAL_BANKS[key]

    def _random_drives(self, key, count: int):
        """``count`` admissible actuator states ``(count, 2T)``: rotations of the rotated tubes
        uniform in [-pi, pi], tips uniform within their nesting limits (outermost first)."""
        c, T = self.config, self.num_tubes
        lengths = np.asarray(self.model.params.length)
        k_rot, k_tip = jax.random.split(key)
        rot = (
            jnp.zeros((count, T), self.dtype)
            .at[:, jnp.asarray(c.rotated_tubes)]
            .set(jax.random.uniform(k_rot, (count, len(c.rotated_tubes)), self.dtype, -np.pi, np.pi))
        )
        fractions = jax.random.uniform(k_tip, (count, T), self.dtype)
        tips = [c.min_exposed_length + fractions[:, -1] * (lengths[-1] - c.min_exposed_length)]
        for i in range(T - 2, -1, -1):
            low = tips[-1] + c.min_tip_spacing
            tips.append(low + fractions[:, i] * (lengths[i] - low))
        tips = jnp.stack(tips[::-1], axis=1)
        return jnp.concatenate([rot, tips - jnp.asarray(lengths, self.dtype)], axis=1)

    def _solve_goal_bank(self, key) -> np.ndarray:
        c = self.config
        targets = self._random_drives(key, c.num_goal_candidates)
        ramp, settle = c.goal_ramp_steps, 20
        fractions = jnp.minimum(1.0, jnp.arange(1, ramp + settle + 1, dtype=self.dtype) / ramp)
        model, n = self.model, self.model.num_dofs

        def drive_to(model, target):
            def period(y, fraction):  # this env's own physics, the drives moved a step along the path
                return self._integrate(model, y, fraction * target, None)[0], None

            y, _ = jax.lax.scan(period, model.zero_state(self.dtype), fractions)
            driven = self.actuated(model, target)[0]
            q = driven.split_state(y)[0]
            return self.tip_position(driven, q), q, jnp.linalg.norm(driven.elastic_force(q))

        solve = eqx.filter_jit(lambda model, targets: jax.vmap(drive_to, in_axes=(None, 0))(model, targets))
        tips, qs, residuals = solve(model, targets)
        scale = float(jax.jit(lambda m: jnp.linalg.norm(m.elastic_force(jnp.zeros(n, self.dtype))))(model))
        ok = np.asarray((residuals < 1e-3 * scale) & jnp.all(jnp.isfinite(qs), axis=1))
        if ok.sum() < max(1, c.num_goal_candidates // 2):
            raise RuntimeError(f"{self.name}: only {ok.sum()} of {c.num_goal_candidates} goal equilibria settled")
        return np.concatenate([np.asarray(tips), np.asarray(targets), np.asarray(qs)], axis=1)[ok]

    # -- expert ---------------------------------------------------------------------------

    expert_kinds = ("quasi_static",)

    def build_expert(self, kind: str, gain: float = 1.0, damping: float = 1e-6) -> Expert:
        """``"quasi_static"``: the action ``a`` in [-1, 1] minimising
        ``|S a - gain (goal - tip)|^2 + damping |a|^2`` with ``S = dx/dp diag(step sizes)``
        the static tip sensitivity to the drives in action units
        (:func:`sorogym.control.static_drive_sensitivity` about the current state, which the
        overdamped physics keeps at equilibrium; :func:`sorogym.control.bounded_least_squares_step`)."""
        steps = self._step_sizes()

        def act(state):
            ps = state.pipeline_state
            model = super(ConcentricTubeReaching, self).episode_model(ps)
            p = self._drives_of(ps.u)
            drive = lambda p_: self.actuated(model, self._with_drives(ps.u, p_))[0]  # noqa: E731
            tip, S = static_drive_sensitivity(drive, ps.q, p, self.tip_position)
            e = gain * (ps.task.goal - tip)
            zero = jnp.zeros_like(p)
            return bounded_least_squares_step(S * steps, e, zero, zero - 1.0, zero + 1.0, damping)

        return Expert(f"{self.name}/{kind}", act)

    # -- rendering ------------------------------------------------------------------------

    def render_scene(self, ps):
        scene = super().render_scene(ps)
        scene["markers"].append(("goal", np.asarray(ps.task.goal), "tab:green"))
        c = self.config
        scene["spheres"] = [(np.asarray(x, float), float(r)) for x, r in zip(c.obstacle_centers, c.obstacle_radii)]
        half = 0.45
        scene["bounds"] = ((-half, half), (-half, half), (0.0, 0.65))
        return scene
