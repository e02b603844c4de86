"""``TwoArmReach-v0``: two soft arms on a shared torso reach two targets without getting in
each other's way.

Scene (a :class:`sorogym.PlanarScene` of a :class:`sorogym.PlanarArms` and no objects, seen
from above): two horizontal soft arms of three
0.1 m constant-curvature segments each (silicone, radius 12 mm, ``E`` 5 MPa, Kelvin-Voigt
retardation 100 ms; 0.3 m, 145 g each) on a rigid torso, their bases fixed 0.1 m apart at
``(0, +0.05)`` (arm 0, the left) and ``(0, -0.05)`` (arm 1, the right), both pointing along
world +x, bending in the table plane: ``q = [k_0,0, k_0,1, k_0,2, k_1,0, k_1,1, k_1,2]``.
The arms touch each other: 16 backbone points of arm 0 (discs of its radius) against the
capsule chain through the same points of arm 1 (:class:`sorogym.contact.ArmPairContact`),
frictionless compliant contact (3000 N/m per point, Hunt-Crossley damping 5 s/m), taken
implicitly in the velocity so a stiff contact does not limit the step; 16 substeps of 3.125
ms per 50 ms control step keep arms that strike each other within 1 % of their length of
the float64 reference.

* **Targets**: one per arm, reachable together by construction: the tips of a random
  configuration of both arms (curvatures up to 0.75 ``max_curvature``) in which the arms
  keep 5 mm apart, the tips lie 60 mm apart and 50 mm in front of the torso. The
  workspaces overlap: a target may lie on the other arm's side of the torso, and then the
  other arm has to make room.
* **Action** ``(6,)`` in [-1, 1]: each segment's commanded curvature ``a max_curvature``
  (20 1/m), arm 0's three then arm 1's, as the bending moment ``E I L k_cmd`` that holds the
  unloaded segment there, reached through a first-order lag of 0.2 s.
* **Observation** ``(37,)`` float32, lengths in arm lengths ``L`` (0.3 m), world frame: per
  arm (18 each, arm 0 first): curvatures ``/ max_curvature`` (3), their rates ``/ (10
  max_curvature)`` per second (3), its moments in action units (3), tip position (2) and
  heading ``(cos, sin)`` (2), target (2), target minus tip (2) and their distance (1); then
  the gap between the arms (1) [L] (negative when they press into each other).
  ``sorogym.env.LimbAgents(gymnasium.make("sorogym/TwoArmReach-v0"))`` is the multi-agent
  view: one agent per arm, each seeing its own arm's entries first
  (:meth:`TwoArmReach.agent_observations`).
* **Reward** terms: ``distance = -(d_0 + d_1)`` [m], ``success = [both d_k <
  success_radius]`` (15 mm), ``contact = -(normal force between the arms)`` [N],
  ``effort = -mean(a^2)``; scales 5, 1, 0.5, 0.02.
* **Termination**: none (time limit 4 s = 80 steps at 20 Hz), except a diverging
  simulation. ``metrics``: ``goal_distance`` [m] (the larger of the two tip distances),
  ``success``, ``peak_contact_force`` [N] (the normal force between the arms at the step's
  end; the evaluations report its episode maximum), ``arm_gap`` [m], ``tip_speed`` [m/s] (the faster tip).
* **Reset**: both arms straight and at rest; ``config.randomization`` randomises the arms
  (both alike: they share their parameters).
* **Expert** (``env.expert("ik")``): inverse kinematics of both arms at once towards their
  targets, with a clearance penalty that keeps arm 0's backbone out of arm 1's grown by a
  margin (:meth:`TwoArmReach.build_expert`).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from sorogym.actuation import GeneralizedActuation
from sorogym.contact import ArmPairContact, closest_on_chain, cross_section_radius
from sorogym.env import Expert, SoroEnv, StepOutputs, register
from sorogym.models import (
    PlanarArms,
    PlanarBodies,
    PlanarPCS,
    PlanarScene,
    SceneLoad,
    SceneParams,
    check_positive_fields,
)
from sorogym.planning import levenberg_marquardt

from ._common import first_order_lag
from ._table import TableArmConfig, check_arm_config, contact_law, probe_abscissae, table_arm_params, table_view

ARM_OBSERVATIONS = 18  # per arm, see the module docstring


@dataclasses.dataclass(frozen=True)
class RewardScales:
    distance: float = 5.0
    success: float = 1.0
    contact: float = 0.5
    effort: float = 0.02


@dataclasses.dataclass(frozen=True)
class RewardConfig:
    scales: RewardScales = RewardScales()


@dataclasses.dataclass(frozen=True)
class Config(TableArmConfig):
    # Timing: 20 Hz control, 16 substeps (impacts between the arms), 4 s episodes
    num_substeps: int = 16
    episode_length_s: float = 4.0
    # Arms (both alike)
    radius: float = 0.012  # m
    retardation_time: float = 0.1  # s, Kelvin-Voigt tau = 3 eta / E
    max_curvature: float = 20.0  # 1/m, |action| = 1
    arm_spacing: float = 0.1  # m between the two bases, across the torso
    # Arm-arm contact
    contact_stiffness: float = 3000.0  # N/m per probe
    # Targets: the tips of random collision-free configurations of both arms
    target_curvature: float = 0.75  # of max_curvature, the largest curvature drawn
    target_clearance: float = 0.005  # m, least gap between the arms in the drawn configuration
    target_separation: float = 0.06  # m, least distance between the two targets
    target_min_x: float = 0.05  # m, targets in front of the torso
    num_target_draws: int = 32  # candidate configurations per reset (the first valid one is kept)
    success_radius: float = 0.015  # m
    reward: RewardConfig = RewardConfig()


def default_config() -> Config:
    return Config()


@struct.dataclass
class TwoTargets:
    """Task state: each arm's target ``(2, 2)`` [m] (world frame, arm 0's first)."""

    targets: jax.Array


@register
class TwoArmReach(SoroEnv):
    __doc__ = __doc__
    name = "TwoArmReach-v0"
    # The accuracy check follows arm 0's tip over 1 s of random actions, in which the arms
    # strike each other at up to about 2 m/s: 0.9 / 0.4 / 0.02 % of L for seeds 0-2 at 16
    # substeps (without contact between the arms, 0.1-0.2 % at 8). Strikes make the paths
    # sensitive: at 8 substeps and 50 ms retardation they missed the reference by 1-6 % of L.
    accuracy_steps = 20

    @classmethod
    def default_config(cls) -> Config:
        return default_config()

    def build_model(self, config: Config) -> PlanarArms:
        check_positive_fields(
            config,
            ("segment_length", "radius", "young_modulus", "density", "max_curvature", "actuator_time_constant",
             "arm_spacing", "contact_stiffness", "success_radius", "target_separation",
             "num_target_draws"),
        )  # fmt: skip
        check_arm_config(config)
        if config.arm_spacing <= 2.0 * config.radius:
            raise ValueError(f"arm_spacing: {config.arm_spacing} m leaves the arms overlapping at their bases")
        if not 0.0 < config.target_curvature <= 1.0:
            raise ValueError(f"target_curvature: must lie in (0, 1], got {config.target_curvature}")
        if config.target_clearance < 0.0:
            raise ValueError(f"target_clearance: must be non-negative, got {config.target_clearance}")
        params = table_arm_params(config, self.dtype)
        arm = PlanarPCS(params, active_strains="pcc", actuation=GeneralizedActuation(), num_quadrature_points=3)
        half = 0.5 * config.arm_spacing
        arms = PlanarArms(arm, [[0.0, 0.0, half], [0.0, 0.0, -half]])
        return PlanarScene(arms, PlanarBodies.empty(self.dtype))

    @property
    def arm_length(self) -> float:
        return self.config.num_segments * self.config.segment_length

    @property
    def observation_dim(self) -> int:
        return 2 * ARM_OBSERVATIONS + 1

    @property
    def action_dim(self) -> int:
        return 2 * self.config.num_segments

    # -- multi-agent view ---------------------------------------------------------------------

    @property
    def agent_names(self) -> tuple[str, ...]:
        """The agents of the multi-agent view (:class:`sorogym.env.LimbAgents`): ``"arm0"``
        (left) and ``"arm1"`` (right), each commanding its own arm's curvatures."""
        return ("arm0", "arm1")

    @property
    def agent_observation_dim(self) -> int:
        """Size of one arm's observation in :meth:`agent_observations`: the whole observation."""
        return self.observation_dim

    def agent_observations(self, obs):
        """One observation per arm ``(..., 2, 37)`` from observations ``(..., 37)`` (numpy or
        jax), in egocentric order: the agent's own arm's 18 entries, the other arm's 18, then
        the gap between the arms."""
        xp = jnp if isinstance(obs, jax.Array) else np
        A = ARM_OBSERVATIONS
        arm0, arm1, gap = obs[..., :A], obs[..., A : 2 * A], obs[..., 2 * A :]
        return xp.stack([xp.concatenate([arm0, arm1, gap], -1), xp.concatenate([arm1, arm0, gap], -1)], -2)

    # -- physics hooks ------------------------------------------------------------------------

    def _sample_params(self, key):
        """The episode's arms: both alike, randomised by ``config.randomization``."""
        if not self.config.randomization:
            return None
        params = self.model.params
        return SceneParams(self.randomized_params(key, params.robot), params.bodies)

    def _bending_stiffness(self, model):
        """``E I L`` ``(2 N,)`` [N m^2]: the moment per unit curvature of every segment."""
        return jnp.diag(model.robot.stiffness_matrix())

    def command(self, model, ps, action):
        c = self.config
        target = self._bending_stiffness(model) * c.max_curvature * action
        return first_order_lag(ps.u, target, c.control_dt, c.actuator_time_constant)

    def contact(self, model) -> ArmPairContact:
        """The contact of arm 0's probes with arm 1's chain (module docstring)."""
        c = self.config
        s = jnp.asarray(probe_abscissae(c), self.dtype)
        return ArmPairContact(
            (0, 1),
            s,
            cross_section_radius(model.robot.arm, s),
            *contact_law(self),
            dtype=self.dtype,
        )

    def line_load(self, model, ps):
        return SceneLoad(interactions=(self.contact(model),))

    # -- task ---------------------------------------------------------------------------------

    def reset_task(self, key, model):
        """Targets reachable together by construction: ``num_target_draws`` random
        configurations of both arms (curvatures uniform within ``target_curvature``
        ``max_curvature``) are drawn, and the first whose arms keep ``target_clearance``
        apart, whose tips lie ``target_separation`` apart and ``target_min_x`` in front of
        the torso gives the targets (its tips; the first draw if none qualifies)."""
        c = self.config
        arms = model.robot
        n, D = arms.num_dofs, int(c.num_target_draws)
        bound = c.target_curvature * c.max_curvature
        k = jax.random.uniform(key, (D, n), self.dtype, -bound, bound)
        s = jnp.asarray(probe_abscissae(c), self.dtype)
        radii = cross_section_radius(arms.arm, s)

        def candidate(q):
            points = arms.backbone_positions(q, s)  # (2, P, 2)
            foot = closest_on_chain(points[0], points[1])[2]
            gap = jnp.min(jnp.linalg.norm(points[0] - foot, axis=-1) - 2.0 * radii)
            tips = points[:, -1]
            valid = (
                (gap >= c.target_clearance)
                & (jnp.linalg.norm(tips[0] - tips[1]) >= c.target_separation)
                & jnp.all(tips[:, 0] >= c.target_min_x)
            )
            return tips, valid

        tips, valid = jax.vmap(candidate)(k)
        targets = tips[jnp.argmax(valid)]
        zeros = jnp.zeros(n, self.dtype)
        return TwoTargets(targets=targets), zeros, zeros, zeros

    def outputs(self, model, prev, ps, action) -> StepOutputs:
        c = self.config
        N, L, k_scale = c.num_segments, self.arm_length, c.max_curvature
        arms = model.robot
        tips, headings = arms.tip_poses(ps.q)
        targets = ps.task.targets
        to_target = targets - tips
        d = jnp.linalg.norm(to_target, axis=-1)  # (2,)
        f_n, depth = self.contact(model).normal_forces(model, ps.q, ps.qd)
        gap = -jnp.max(depth)
        moments = ps.u / (self._bending_stiffness(model) * k_scale)
        per_arm = [
            jnp.concatenate(
                [
                    ps.q[k * N : (k + 1) * N] / k_scale,
                    ps.qd[k * N : (k + 1) * N] / (10.0 * k_scale),
                    moments[k * N : (k + 1) * N],
                    tips[k] / L,
                    headings[k],
                    targets[k] / L,
                    to_target[k] / L,
                    d[k : k + 1] / L,
                ]
            )
            for k in range(2)
        ]
        obs = jnp.concatenate([*per_arm, gap[None] / L])
        success = jnp.all(d < c.success_radius).astype(d.dtype)
        force = jnp.sum(f_n)
        terms = None
        if prev is not None:
            terms = {"distance": -jnp.sum(d), "success": success, "contact": -force, "effort": -jnp.mean(action**2)}
        tip_velocities = arms.backbone_points(ps.q, ps.qd, jnp.asarray([L], ps.q.dtype))[1][:, 0]  # (2, 2)
        tip_speeds = jnp.linalg.norm(tip_velocities, axis=-1)
        metrics = {
            "goal_distance": jnp.max(d),
            "success": success,
            "peak_contact_force": force,
            "arm_gap": gap,
            "tip_speed": jnp.max(tip_speeds),
        }
        return StepOutputs(obs, terms, metrics, info={})

    # -- expert -------------------------------------------------------------------------------

    expert_kinds = ("ik",)

    def build_expert(
        self,
        kind: str,
        margin: float = 0.015,
        clearance_weight: float = 2.0,
        max_change: float = 4.0,
        iterations: int = 8,
    ) -> Expert:
        """``"ik"``: both arms' commanded curvatures from one inverse-kinematics problem.

        ``iterations`` Levenberg-Marquardt steps from the present curvatures
        (:func:`sorogym.planning.levenberg_marquardt`, bounded by ``max_curvature``)
        minimise the squared tip errors of both arms plus ``clearance_weight`` times the
        intrusion of each of arm 0's probes into arm 1's backbone grown by ``margin`` [m]
        (its capsule chain, as the contact sees it), so the arms bend around each other
        rather than press into each other; the command moves at most ``max_change``
        [1/m] per segment and step. The arms in equilibrium hold the commanded curvatures
        (no load in the plane but contact), so the IK solution is the command. Stateless."""
        c = self.config
        N, k_max = c.num_segments, c.max_curvature
        n = 2 * N

        def act(state):
            ps = state.pipeline_state
            arms = self.episode_model(ps).robot
            s = jnp.asarray(probe_abscissae(c), ps.q.dtype)
            radii = cross_section_radius(arms.arm, s)

            def residual(k):
                positions = arms.backbone_positions(k, s)  # (2, P, 2)
                tips = positions[:, -1]
                _, t, foot = closest_on_chain(positions[0], positions[1])
                gap = jnp.linalg.norm(positions[0] - foot, axis=-1) - 2.0 * radii - margin
                return jnp.concatenate(
                    [(tips - ps.task.targets).reshape(-1), clearance_weight * jnp.maximum(-gap, 0.0)]
                )

            bound = jnp.full(n, k_max, ps.q.dtype)
            k, _ = levenberg_marquardt(
                residual, lambda k: jnp.clip(k, -bound, bound), ps.q, iterations, bounds=(-bound, bound)
            )
            k = ps.q + jnp.clip(k - ps.q, -max_change, max_change)
            return jnp.clip(k / k_max, -1.0, 1.0)

        return Expert(f"{self.name}/{kind}", act)

    # -- rendering ----------------------------------------------------------------------------

    def render_scene(self, ps):
        targets = np.asarray(ps.task.targets, float)
        markers = [("target 0", targets[0], "tab:green"), ("target 1", targets[1], "tab:purple")]
        return table_view(self, ps, markers, (0.15, 0.0), 0.25)
