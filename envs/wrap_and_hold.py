"""``WrapAndHold-v0``: a tendon-driven soft arm wraps around a cylinder on a table and holds
it against an elastic band that starts pulling it away.

Scene (:class:`sorogym.PlanarScene`, seen from above): a horizontal tapered soft arm of
four 0.1 m constant-curvature segments (silicone, radius 14, 12, 10 and 8 mm, ``E`` 2 MPa,
Kelvin-Voigt retardation 0.1 s; 0.4 m, 169 g), its base fixed at the origin pointing along world +x, bending in the
table plane (on low-friction skids: the table's friction on the arm is neglected), and a
rigid cylinder standing on the table: ``q = [k_0 .. k_3, theta, x, y]`` (the segments'
curvatures [1/m], the cylinder's angle and centre). The cylinder is drawn per episode:
radius 25-45 mm, 50-150 g, table friction coefficient 0.3-0.5 (regularised Coulomb on eight
support points carrying its weight, slip velocity 5 mm/s, stepped implicitly). The arm
touches it at 24 backbone points as discs of its radius: frictionless compliant contact
(1000 N/m, Hunt-Crossley damping 5 s/m, :class:`sorogym.contact.BodyContact`) taken
implicitly in the velocity; with frictionless contact the arm holds only by enclosing the
cylinder.

The arm is driven by eight straight tendons at 0.7 of each segment's radius off its axis,
an antagonistic pair anchored at the tip of each segment (a tendon anchored at the tip of segment ``j`` bends
segments ``0..j``; :class:`sorogym.actuation.Tendons`).

* **Action** ``(4,)`` in [-1, 1]: per pair, the differential tension ``a max_tension``
  (40 N): ``a > 0`` pulls the tendon on the arm's left (counter-clockwise bending), ``a <
  0`` the one on its right. The tensions reach their commands through a first-order lag of
  0.2 s (``actuator_time_constant``).
* **Disturbance**: at a random ``onset`` (2-3 s) an elastic band starts pulling the
  cylinder away from the base (the base-cylinder bearing turned by up to +-20 degrees); its
  pull rises linearly over 0.5 s to 1.5-3 times the cylinder's table friction limit ``mu m
  g`` (so the cylinder slides off unless held) and falls off as the cylinder follows it
  (the band is slack 0.15 m further on). The band's direction and the time to onset are
  observed; its strength is not.
* **Observation** ``(39,)`` float32, lengths in arm lengths ``L`` (0.4 m), world frame:
  curvatures ``/ 25`` 1/m (4), their rates ``/ 250`` 1/(m s) (4), the pairs' differential
  tensions ``/ max_tension`` (4), the segments' tip positions (8), the tip's heading
  ``(cos, sin)`` (2), the cylinder's centre (2), velocity (2) [L/s] and radius (1), the
  band's direction (2), the time to onset [s] clipped to [-1, 1] (1), the band's ramp in
  [0, 1] (1), the hold point minus the centre (2), the displacement ``/ hold_radius`` (1),
  the enclosure (1), the self-overlap ``/ self_overlap_tolerance`` (1), the arm-cylinder
  clearance (1) and the centre minus the tip (2).
* **No passing through itself**: the model has no self-contact, so the task forbids what
  it would prevent: the ``self_overlap`` is the deepest overlap [m] of two of the arm's
  probe discs at least 60 mm apart along it (:meth:`WrapAndHold.self_overlap`); above
  ``self_overlap_tolerance`` (3 mm) the cylinder does not count as held.
* **Reward** terms: ``enclosure``: the angle the arm's backbone turns around the cylinder's
  centre over the probes within 15 mm of its surface (each weighted by ``1 - gap / 15 mm``),
  over a full turn, clipped to [0, 1]; ``hold = ramp [displacement < hold_radius]
  [self_overlap <= tolerance]`` (30 mm, 3 mm); ``displacement = -min(displacement, 0.1 m)``
  [m]; ``self_overlap = -self_overlap`` [m]; ``effort = -mean(a^2)``; scales 1, 1, 10, 100,
  0.02. The displacement is measured from the hold point: the cylinder's centre at the
  onset (before it, the displacement is 0).
* **Termination**: none but a diverging simulation; time limit 6 s = 120 steps.
  ``metrics``: ``object_displacement`` [m] (the task error), ``success`` (the band at full
  pull, the cylinder within ``hold_radius`` of the hold point and the arm not through
  itself; the episode's final step decides), ``enclosure``, ``self_overlap`` [m],
  ``peak_contact_force`` (the arm's normal force on the cylinder at the step's end [N]; the
  evaluations report its episode maximum), ``band_force`` [N], ``object_speed`` [m/s],
  ``clearance`` [m].
* **Reset**: the arm straight and at rest, its tendons slack; the cylinder at rest
  0.14-0.2 m from the base, 40 degrees at most off the arm's axis and clear of the straight
  arm. ``config.randomization`` randomises the arm.
* **Expert** (``env.expert("wrapper")``): inverse kinematics towards a hook of the last two
  segments around the far side of the cylinder (the side the band pulls to), wrapping at
  most 270 degrees, its tendon tensions from the quasi-static balance of the commanded
  shape (:meth:`WrapAndHold.build_expert`).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from sorogym.actuation import Tendons
from sorogym.env import Expert, StepOutputs, register
from sorogym.models import PlanarBodies, PlanarPCS, PlanarScene, SceneParams, check_positive_fields
from sorogym.planning import levenberg_marquardt

from ._common import first_order_lag
from ._ground import G, wrap_angle
from ._table import TableArmConfig, TableArmEnv, check_range, probe_abscissae, table_arm_params, table_view


@dataclasses.dataclass(frozen=True)
class RewardScales:
    enclosure: float = 1.0
    hold: float = 1.0
    displacement: float = 10.0
    self_overlap: float = 100.0
    effort: float = 0.02


@dataclasses.dataclass(frozen=True)
class RewardConfig:
    scales: RewardScales = RewardScales()


@dataclasses.dataclass(frozen=True)
class Config(TableArmConfig):
    # Timing: 20 Hz control, 6 s episodes
    episode_length_s: float = 6.0
    # Arm
    num_segments: int = 4
    base_radius: float = 0.014  # m, the first segment's (the radius falls linearly segment by segment)
    tip_radius: float = 0.008  # m, the last segment's
    young_modulus: float = 2e6  # Pa
    retardation_time: float = 0.1  # s, Kelvin-Voigt tau = 3 eta / E
    tendon_offset: float = 0.7  # of each segment's radius, from the axis
    max_tension: float = 40.0  # N, |action| = 1
    curvature_scale: float = 25.0  # 1/m, the observation's unit of curvature
    # Cylinder
    object_radius: tuple[float, float] = (0.025, 0.045)  # m
    object_mass: tuple[float, float] = (0.05, 0.15)  # kg
    friction: tuple[float, float] = (0.3, 0.5)  # table-cylinder Coulomb coefficient, per episode
    slip_velocity: float = 0.005  # m/s
    # Arm-cylinder contact
    num_probes: int = 24
    # Task
    object_range: tuple[float, float] = (0.14, 0.2)  # m from the base
    object_bearing_deg: float = 40.0
    onset: tuple[float, float] = (2.0, 3.0)  # s, the band starts pulling
    ramp_time: float = 0.5  # s, to its full pull
    pull_ratio: tuple[float, float] = (1.5, 3.0)  # full pull / (mu m g)
    band_slack: float = 0.15  # m the cylinder travels before the band goes slack
    pull_jitter_deg: float = 20.0  # the band's direction off the base-cylinder bearing
    hold_radius: float = 0.03  # m
    enclosure_band: float = 0.015  # m, probes this near the surface count towards the enclosure
    self_overlap_tolerance: float = 0.003  # m, the arm may not pass through itself deeper than this
    self_overlap_span: float = 0.06  # m, probes at least this far apart along the arm are not neighbours
    reward: RewardConfig = RewardConfig()


def default_config() -> Config:
    return Config()


@struct.dataclass
class HoldTask:
    """Task state (world frame): the hold point ``(2,)`` [m] (the cylinder's centre until
    the onset, then fixed), the band's direction ``(2,)`` (unit), its ``onset`` [s], full
    pull [N] and this episode's table friction coefficient."""

    anchor: jax.Array
    direction: jax.Array
    onset: jax.Array
    pull: jax.Array
    friction: jax.Array


@register
class WrapAndHold(TableArmEnv):
    __doc__ = __doc__
    name = "WrapAndHold-v0"

    @classmethod
    def default_config(cls) -> Config:
        return default_config()

    def build_model(self, config: Config) -> PlanarScene:
        check_positive_fields(
            config,
            ("segment_length", "base_radius", "tip_radius", "young_modulus", "density", "tendon_offset", "max_tension",
             "actuator_time_constant", "curvature_scale", "slip_velocity", "contact_stiffness", "ramp_time",
             "band_slack", "hold_radius", "enclosure_band", "self_overlap_tolerance", "self_overlap_span"),
        )  # fmt: skip
        self.check_table_config(config)
        if config.tendon_offset >= 1.0:
            raise ValueError(
                f"tendon_offset: must lie inside the arm (a fraction < 1 of its radius), got {config.tendon_offset}"
            )
        for name in ("object_radius", "pull_ratio"):
            check_range(config, name)
        onset_lo, onset_hi = check_range(config, "onset")
        if onset_hi + config.ramp_time >= config.episode_length_s:
            raise ValueError(f"onset: the band must reach its full pull within the episode, got {config.onset}")
        if not 0.0 <= config.pull_jitter_deg < 90.0:
            raise ValueError(f"pull_jitter_deg: must lie in [0, 90), got {config.pull_jitter_deg}")
        N = int(config.num_segments)
        radii = self.segment_radii(config)
        side = np.tile(config.tendon_offset * radii, (N, 1))
        tendons = Tendons(np.concatenate([side, -side]), spans=tuple(range(1, N + 1)) * 2)
        params = table_arm_params(config, self.dtype, radius=radii)
        arm = PlanarPCS(params, active_strains="pcc", actuation=tendons, num_quadrature_points=3)
        nominal = PlanarBodies.rounded_boxes(
            [[0.0, 0.0]], [np.mean(config.object_radius)], [np.mean(config.object_mass)]
        )
        return PlanarScene(arm, jax.tree.map(lambda x: jnp.asarray(x, self.dtype), nominal))

    @staticmethod
    def segment_radii(config) -> np.ndarray:
        """``(N,)`` the segments' radii [m]: ``base_radius`` to ``tip_radius``, evenly stepped."""
        return np.linspace(config.base_radius, config.tip_radius, int(config.num_segments))

    @staticmethod
    def object_reach(config) -> float:
        """The largest cylinder's radius [m]."""
        return config.object_radius[1]

    @property
    def observation_dim(self) -> int:
        return 6 + 5 * self.config.num_segments + 13

    @property
    def action_dim(self) -> int:
        return self.config.num_segments

    # -- physics hooks ------------------------------------------------------------------------

    def _sample_params(self, key):
        """The episode's arm (randomised by ``config.randomization``) and cylinder (radius and
        mass uniform in their ranges)."""
        c = self.config
        k_arm, k_radius, k_mass = jax.random.split(key, 3)
        arm = self.model.robot.params
        if c.randomization:
            arm = self.randomized_params(k_arm, arm)
        radius = jax.random.uniform(k_radius, (1,), self.dtype, *c.object_radius)
        mass = jax.random.uniform(k_mass, (1,), self.dtype, *c.object_mass)
        bodies = PlanarBodies.rounded_boxes(jnp.zeros((1, 2), self.dtype), radius, mass, dtype=self.dtype)
        return SceneParams(arm, bodies)

    def command(self, model, ps, action):
        c = self.config
        target = c.max_tension * jnp.concatenate([jnp.maximum(action, 0.0), jnp.maximum(-action, 0.0)])
        return first_order_lag(ps.u, target, c.control_dt, c.actuator_time_constant).astype(ps.u.dtype)

    def ramp(self, task, t):
        """The band's pull as a fraction of its full pull at time ``t`` [s]: 0 before the
        onset, rising linearly over ``ramp_time``."""
        return jnp.clip((t - task.onset) / self.config.ramp_time, 0.0, 1.0)

    def band_force(self, task, t, centre):
        """The band's force ``(2,)`` [N] on the cylinder at ``centre`` (world): ``ramp`` times
        the full pull, falling linearly with the travel along the band's direction, zero once
        slack (``band_slack`` beyond the hold point)."""
        travel = (centre - task.anchor) @ task.direction
        stretch = jnp.clip(1.0 - travel / self.config.band_slack, 0.0, None)
        return self.ramp(task, t) * task.pull * stretch * task.direction

    def external_force(self, model, q, qd, ps):
        centre = model.body_coordinates(q)[0, 1:]
        f = self.band_force(ps.task, ps.t, centre)
        return model.body_force(q, centre[None, None, :], f[None, None, :])

    # -- task ---------------------------------------------------------------------------------

    def reset_task(self, key, model):
        c = self.config
        k_r, k_side, k_bearing, k_angle, k_dir, k_onset, k_ratio, k_mu = jax.random.split(key, 8)
        centre, phi = self.place_beside_arm(k_r, k_side, k_bearing)
        jitter = jnp.asarray(np.deg2rad(c.pull_jitter_deg), self.dtype)
        psi = phi + jax.random.uniform(k_dir, (), self.dtype, -jitter, jitter)
        mu = jax.random.uniform(k_mu, (), self.dtype, *c.friction)
        weight = model.bodies.mass[0] * G
        task = HoldTask(
            anchor=centre,
            direction=jnp.stack([jnp.cos(psi), jnp.sin(psi)]),
            onset=jax.random.uniform(k_onset, (), self.dtype, *c.onset),
            pull=jax.random.uniform(k_ratio, (), self.dtype, *c.pull_ratio) * mu * weight,
            friction=mu,
        )
        N = c.num_segments
        angle = jax.random.uniform(k_angle, (), self.dtype, -jnp.pi, jnp.pi)
        q0 = jnp.concatenate([jnp.zeros(N, self.dtype), jnp.stack([angle, centre[0], centre[1]])])
        return task, q0, jnp.zeros_like(q0), jnp.zeros(2 * N, self.dtype)

    def advance_task(self, key, model, ps):
        """The hold point follows the cylinder until the onset, then stays."""
        centre = ps.q[self.config.num_segments + 1 :]
        return ps.task.replace(anchor=jnp.where(ps.t <= ps.task.onset, centre, ps.task.anchor))

    def enclosure(self, points, centre, gaps):
        """The angle [turns] the backbone ``points`` ``(P, 2)`` [m] turn about ``centre``, each
        step between neighbouring probes weighted by both probes' nearness ``1 - gap /
        enclosure_band`` (``gaps`` ``(P,)`` [m] from the cylinder's surface), clipped to [0, 1]."""
        near = jnp.clip(1.0 - gaps / self.config.enclosure_band, 0.0, 1.0)
        rel = points - centre
        angle = jnp.arctan2(rel[:, 1], rel[:, 0])
        turn = jnp.sum(near[1:] * near[:-1] * wrap_angle(angle[1:] - angle[:-1]))
        return jnp.clip(jnp.abs(turn) / (2.0 * jnp.pi), 0.0, 1.0)

    def self_overlap(self, points, radii):
        """How deep [m] the arm passes through itself: the largest overlap ``r_i + r_j -
        |p_i - p_j|`` (0 if none) of two probe discs (``points`` ``(P, 2)`` [m], ``radii``
        ``(P,)`` [m]) at least ``self_overlap_span`` apart along the arm. The model has no
        self-contact; the task forbids what it would prevent."""
        s = jnp.asarray(probe_abscissae(self.config), points.dtype)
        apart = jnp.abs(s[:, None] - s[None, :]) >= self.config.self_overlap_span
        distance = jnp.linalg.norm(points[:, None, :] - points[None, :, :] + jnp.eye(len(s))[..., None], axis=-1)
        overlap = radii[:, None] + radii[None, :] - distance
        return jnp.maximum(jnp.max(jnp.where(apart, overlap, 0.0)), 0.0)

    def outputs(self, model, prev, ps, action) -> StepOutputs:
        c = self.config
        N = c.num_segments
        L = self.arm_length
        tip, heading = self.tip_pose(model, ps.q)
        centre, velocity = ps.q[N + 1 :], ps.qd[N + 1 :]
        radius = model.bodies.corner_radius[0]
        contact = self.contact(model)
        f_n, depth = contact.normal_forces(model, ps.q, ps.qd)
        gaps = -depth
        clearance = jnp.maximum(jnp.min(gaps), 0.0)
        probes = model.forward_kinematics_batched(ps.q, contact.s_ps)[:, :2, 2]
        enclosure = self.enclosure(probes, centre, gaps)
        crossing = self.self_overlap(probes, contact.radii)
        clean = (crossing <= c.self_overlap_tolerance).astype(crossing.dtype)
        ends = model.forward_kinematics_batched(ps.q, jnp.arange(1, N + 1, dtype=self.dtype) * c.segment_length)
        task = ps.task
        offset = task.anchor - centre
        displacement = jnp.linalg.norm(offset)
        ramp = self.ramp(task, ps.t)
        band = self.band_force(task, ps.t, centre)
        obs = jnp.concatenate(
            [
                ps.q[:N] / c.curvature_scale,
                ps.qd[:N] / (10.0 * c.curvature_scale),
                (ps.u[:N] - ps.u[N:]) / c.max_tension,
                (ends[:, :2, 2] / L).reshape(-1),
                heading,
                centre / L,
                velocity / L,
                radius[None] / L,
                task.direction,
                jnp.clip(task.onset - ps.t, -1.0, 1.0)[None],
                ramp[None],
                offset / L,
                displacement[None] / c.hold_radius,
                enclosure[None],
                crossing[None] / c.self_overlap_tolerance,
                clearance[None] / L,
                (centre - tip) / L,
            ]
        )
        held = (displacement < c.hold_radius).astype(displacement.dtype) * clean
        if prev is None:
            terms = None
        else:
            terms = {
                "enclosure": enclosure,
                "hold": ramp * held,
                "displacement": -jnp.minimum(displacement, 0.1),
                "self_overlap": -crossing,
                "effort": -jnp.mean(action**2),
            }
        metrics = {
            "object_displacement": displacement,
            "success": (ramp >= 1.0).astype(held.dtype) * held,
            "enclosure": enclosure,
            "self_overlap": crossing,
            "peak_contact_force": jnp.sum(f_n),
            "band_force": jnp.linalg.norm(band),
            "object_speed": jnp.linalg.norm(velocity),
            "clearance": clearance,
        }
        return StepOutputs(obs, terms, metrics, info={})

    # -- expert -------------------------------------------------------------------------------

    expert_kinds = ("wrapper",)

    def differential_tensions(self, model, k):
        """Differential tensions ``(N,)`` [N] per tendon pair (left minus right) that hold
        the unloaded arm at curvatures ``k`` ``(N,)`` [1/m]: the quasi-static balance ``A_p
        dT = K k``, with ``A_p = (A_left - A_right) / 2`` the generalized force per unit
        differential tension (exact for the mirror-symmetric pairs, ``A_right = -A_left``:
        only the pulling tendon of a pair is taut)."""
        N = self.config.num_segments
        A = model.robot.actuation_matrix(k)
        K = model.robot.stiffness_matrix()
        return jnp.linalg.solve(0.5 * (A[:, :N] - A[:, N:]), K @ k)

    def build_expert(
        self,
        kind: str,
        gap: float = 0.003,
        squeeze: float = 0.004,
        hook_segments: int = 2,
        max_wrap_deg: float = 270.0,
        curl_tolerance: float = 2.0,
        lead_time: float = 0.5,
        pullback: float = 1.0,
        damping_time: float = 0.1,
        max_change: float = 4.0,
        iterations: int = 8,
    ) -> Expert:
        """``"wrapper"``: the arm's last ``hook_segments`` segments curl around the cylinder
        as one circular arc.

        The arm passes the cylinder on the side of the arm's axis and wraps around it in the
        sense that side gives (counter-clockwise for a cylinder left of the axis). The hook
        is an arc of radius ``rho = R + r + gap`` (``R`` the cylinder's radius, ``r`` the
        hook segments' mean radius) about the centre ``c``: the cylinder's centre until the
        onset, then the hold point overshot by ``pullback`` times the displacement (the arm
        pulls back). A hook that would wrap more than ``max_wrap_deg`` is opened to that
        angle (radius ``rho' = hook length / max_wrap``) and its centre moved back by ``rho' -
        rho`` against the band's direction ``d``, so it still touches the cylinder's far
        side ``c + rho d`` and its tip stays clear of the arm. The proximal curvatures solve,
        by ``iterations`` Levenberg-Marquardt steps from the present ones
        (:func:`sorogym.planning.levenberg_marquardt`), ``p + rho n = c`` at the hook's start
        (its position ``p``, its normal ``n`` towards the wrapping side), so the straight
        hook starts on the tangent of that circle. Until ``lead_time`` [s] before the onset
        the hook's curvature is ``1 / rho`` scaled by ``max(0, 1 - e / curl_tolerance)``
        (``e`` the largest proximal curvature error [1/m]), so it curls only once its start
        is in place, along circles tangent to the target circle from outside (it sweeps
        around the cylinder, not into it), and the commanded curvatures move at most
        ``max_change`` [1/m] per segment and step. From then on (gripping) the target radius
        shrinks by ``squeeze`` [m] and the full hook is commanded at once. The command is
        damped by ``- damping_time qd``; the action is the differential tensions of its
        quasi-static balance (:meth:`differential_tensions`) over ``max_tension``.
        Stateless."""
        c = self.config
        N = c.num_segments
        if int(hook_segments) != hook_segments or not 1 <= hook_segments < N:
            raise ValueError(f"hook_segments: must be an integer in [1, {N}), got {hook_segments}")
        n_prox = N - int(hook_segments)
        s_hook = n_prox * c.segment_length
        hook_length = (N - n_prox) * c.segment_length
        k_bound = 1.0 / (2.0 * c.tendon_offset * float(np.max(self.segment_radii(c))))  # half the tendons' limit

        def act(state):
            ps = state.pipeline_state
            model = self.episode_model(ps)
            arm = model.robot
            task = ps.task
            # the cylinder's centre until the onset; then the hold point, overshot against its displacement
            centre = task.anchor + pullback * (task.anchor - ps.q[N + 1 :])
            gripping = ps.t >= task.onset - lead_time
            rho = (
                model.bodies.corner_radius[0]
                + jnp.mean(arm.params.radius[n_prox:])
                + jnp.where(gripping, -squeeze, gap)
            )
            sense = jnp.where(centre[1] >= 0.0, 1.0, -1.0).astype(ps.q.dtype)
            k_now = ps.q[:N]
            # a hook that would wrap more than max_wrap_deg is opened to that angle and its
            # circle moved back from the far side, so it still touches there and the tip
            # stays clear of the arm
            hook_radius = jnp.maximum(rho, jnp.asarray(hook_length / np.deg2rad(max_wrap_deg), rho.dtype))
            centre = centre - (hook_radius - rho) * task.direction
            rho = hook_radius

            def residual(k_prox):
                T = arm.forward_kinematics(jnp.concatenate([k_prox, k_now[n_prox:]]), s_hook)
                normal = sense * T[:2, 1]
                return T[:2, 2] + rho * normal - centre

            bound = jnp.full(n_prox, k_bound, ps.q.dtype)
            k_prox, _ = levenberg_marquardt(
                residual, lambda k: jnp.clip(k, -bound, bound), k_now[:n_prox], iterations, bounds=(-bound, bound)
            )
            error = jnp.max(jnp.abs(k_prox - k_now[:n_prox]))
            curl = sense / rho * jnp.where(gripping, 1.0, jnp.clip(1.0 - error / curl_tolerance, 0.0, 1.0))
            k = jnp.concatenate([k_prox, jnp.full(N - n_prox, curl, ps.q.dtype)])
            k = jnp.where(gripping, k, k_now + jnp.clip(k - k_now, -max_change, max_change))
            k = k - damping_time * ps.qd[:N]
            return jnp.clip(self.differential_tensions(model, k) / c.max_tension, -1.0, 1.0)

        return Expert(f"{self.name}/{kind}", act)

    # -- rendering ----------------------------------------------------------------------------

    def render_scene(self, ps):
        """The arm, the cylinder, the hold point (green), the band's slack end (red) and, once
        it pulls, the band itself (a red line from the cylinder's centre)."""
        band_end = np.asarray(ps.task.anchor) + self.config.band_slack * np.asarray(ps.task.direction)
        markers = [("hold point", ps.task.anchor, "tab:green"), ("band", band_end, "tab:red")]
        scene = table_view(self, ps, markers, (0.18, 0.0), 0.25)
        if float(ps.t) > float(ps.task.onset):
            centre = np.asarray(ps.q[self.config.num_segments + 1 :], float)
            path = np.array([[centre[0], centre[1], 0.0], [band_end[0], band_end[1], 0.0]])
            scene.setdefault("curves", []).append(("band", path, "tab:red"))
        return scene
