"""``ConicalArmReaching-v0``: the conical tendon-driven GVS arm reaches static goals.

Robot: the conical arm of the paper's identification study
(:func:`sorogym.robots.conical_tendon_arm`): length 360 mm, radius tapering linearly from
15.4 mm at the base to 4.8 mm at the tip, E = 0.315 MPa, nu = 0.45, rho = 1320 kg/m^3
(the identified material), hanging from the origin under gravity (backbone along world
-z). Two GVS links split at 305 mm: the first with linear bending, constant torsion and
constant elongation (6 coordinates), the second with constant bending (2), so ``q`` has 8
entries. Kelvin-Voigt damping with viscosity ``damping`` [Pa s]. Two straight tendons
``tendon_offset`` = 5 mm from the axis at 30 and 150 degrees end 305 mm from the base.

With two tendons the reachable tip positions form a two-dimensional sheet in space. Every
goal is reachable by construction: each reset draws one from a bank of tip positions at
static equilibria under tensions uniform in ``[0, max_tension]^2`` (computed once per robot
at construction), together with that equilibrium's configuration.

* **Action** ``(2,)`` in [-1, 1]: absolute tendon tensions ``max_tension (a + 1) / 2`` [N].
* **Observation** ``(30,)`` float32: ``q`` (8), ``qd`` (8), tip position (3) and velocity
  (3) [m, m/s], goal (3), tip-to-goal vector (3), tensions (2) [N]; world frame.
* **Reward** terms (as ``TendonReaching-v0``): ``distance = -|tip - goal|`` [m],
  ``success = [distance < success_radius]``, ``effort = -mean((u / max_tension)^2)``;
  scales 5, 1, 0.05.
* **Termination**: none (time limit 5 s = 75 steps, applied by the wrappers), except a
  diverging simulation. ``metrics["success"]``, ``metrics["goal_distance"]`` [m].
* **Expert** (``env.expert()``): ``"quasi_static"``: each control period one bounded
  least-squares step on the static tip sensitivity moves the equilibrium towards the goal
  (:meth:`sorogym.envs.tendon_reaching.TendonReaching.build_expert`). TendonReaching's
  actuation-space regulator is not offered here: with two tendons for eight coordinates
  and the tensions held for a whole control period (15 Hz), its PD loop on the tendon
  coordinates chatters between the tension bounds instead of settling.
"""

from __future__ import annotations

import dataclasses

from sorogym.env import EpisodeConfig, register
from sorogym.models import GVS, check_positive_fields
from sorogym.robots import conical_tendon_arm

from .tendon_reaching import RewardConfig, TendonReaching

_ROBOT_FIELDS = ("young_modulus", "poisson_ratio", "density", "damping", "tendon_offset")


@dataclasses.dataclass(frozen=True)
class Config(EpisodeConfig):
    # Robot
    young_modulus: float = 0.315e6  # Pa
    poisson_ratio: float = 0.45
    density: float = 1320.0  # kg/m^3
    damping: float = 5e3  # Kelvin-Voigt viscosity [Pa s]
    tendon_offset: float = 0.005  # m
    max_tension: float = 3.0  # N per tendon
    # Task
    num_goal_candidates: int = 512
    goal_sampling: str = "equilibrium"
    goal_activation: float = 1.0  # both tendons pull in every goal sample
    success_radius: float = 0.01
    goal_orientation: bool = False
    success_angle_deg: float = 10.0
    # Timing and integration
    control_dt: float = 1.0 / 15.0
    # the nonlinear forces at each substep's half-way configuration (docs/environments.md):
    # 0.39 % of L against Tsit5 at 8 substeps, as the predictor-corrector at twice the cost
    integrator: str = "trapezoid_midpoint"
    num_substeps: int = 6  # 11.1 ms: 0.55 % of L (seeds 1-3: 0.79, 0.48, 0.92 %; 5 substeps: 1.03-1.14 % on seeds 1, 3)
    episode_length_s: float = 5.0
    reward: RewardConfig = RewardConfig()


def default_config() -> Config:
    return Config()


@register
class ConicalArmReaching(TendonReaching):
    __doc__ = __doc__
    name = "ConicalArmReaching-v0"
    robot_fields = _ROBOT_FIELDS
    expert_kinds = ("quasi_static",)

    @classmethod
    def default_config(cls) -> Config:
        return default_config()

    def build_model(self, config: Config) -> GVS:
        check_positive_fields(
            config, ("young_modulus", "density", "tendon_offset", "max_tension", "success_radius", "success_angle_deg")
        )
        if config.damping < 0:
            raise ValueError(f"damping: must be >= 0, got {config.damping!r}")
        if config.goal_sampling != "equilibrium":
            raise ValueError(
                f"goal_sampling: {self.name} supports only 'equilibrium' (two tendons reach a "
                f"two-dimensional sheet, which uniform workspace sampling would miss), got {config.goal_sampling!r}"
            )
        if not 0.0 < config.goal_activation <= 1.0:
            raise ValueError(f"goal_activation: must lie in (0, 1], got {config.goal_activation!r}")
        return conical_tendon_arm(
            config.young_modulus,
            config.poisson_ratio,
            config.density,
            config.damping,
            config.tendon_offset,
            "hanging",
            dtype=self.dtype,
        )
