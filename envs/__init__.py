"""The sorogym environment suite (installed as ``sorogym.envs``): one module per task.

Each module holds a frozen ``Config`` dataclass, ``default_config()``, the env class
(registered by name when the module is imported) and the task's shared pure functions.

The package itself imports nothing: :data:`CATALOGUE` names each env with its entry point
and time limit, so Gymnasium can list the suite (string entry points) and
:mod:`sorogym.env` makes an env by importing only its module. ``TendonTracking-Elastica-v0``
is the PyElastica twin of ``TendonTracking-v0`` (Gymnasium only).
"""

from __future__ import annotations

from typing import NamedTuple

#: Gymnasium ids are ``sorogym/<name>``.
GYM_NAMESPACE = "sorogym"


class CatalogueEntry(NamedTuple):
    """One env of the suite."""

    entry_point: str  # "module:Class" of the env class
    max_episode_steps: int  # the default config's episode_length_s / control_dt (the Gymnasium time limit)
    gym_only: bool = False  # a Gymnasium env (the task on another physics backend), not a brax env


CATALOGUE: dict[str, CatalogueEntry] = {
    "BrittleStarToGoal-v0": CatalogueEntry("sorogym.envs.brittle_star_to_goal:BrittleStarToGoal", 200),
    "ConcentricTubeReaching-v0": CatalogueEntry("sorogym.envs.concentric_tube_reaching:ConcentricTubeReaching", 60),
    "ConicalArmReaching-v0": CatalogueEntry("sorogym.envs.conical_arm_reaching:ConicalArmReaching", 75),
    "ContactSafeReaching-v0": CatalogueEntry("sorogym.envs.contact_safe_reaching:ContactSafeReaching", 120),
    "InchwormCrawl-v0": CatalogueEntry("sorogym.envs.inchworm_crawl:InchwormCrawl", 200),
    "ParallelPlatformTracking-v0": CatalogueEntry(
        "sorogym.envs.parallel_platform_tracking:ParallelPlatformTracking", 200
    ),
    "PoseTracking-v0": CatalogueEntry("sorogym.envs.pose_tracking:PoseTracking", 800),
    "PushToGoal-v0": CatalogueEntry("sorogym.envs.push_to_goal:PushToGoal", 160),
    "SoftPendulumSwingUp-v0": CatalogueEntry("sorogym.envs.soft_pendulum_swing_up:SoftPendulumSwingUp", 200),
    "SnakeOnSlope-v0": CatalogueEntry("sorogym.envs.snake_on_slope:SnakeOnSlope", 200),
    "SnakeToGoal-v0": CatalogueEntry("sorogym.envs.snake_to_goal:SnakeToGoal", 200),
    "SwimmerToGoal-v0": CatalogueEntry("sorogym.envs.swimmer_to_goal:SwimmerToGoal", 200),
    "StrainTracking-v0": CatalogueEntry("sorogym.envs.strain_tracking:StrainTracking", 600),
    "TendonReaching-v0": CatalogueEntry("sorogym.envs.tendon_reaching:TendonReaching", 75),
    "TendonTracking-v0": CatalogueEntry("sorogym.envs.tendon_tracking:TendonTracking", 105),
    "TendonTracking-Elastica-v0": CatalogueEntry(
        "sorogym.envs.tendon_tracking_elastica:TendonTrackingElastica", 105, gym_only=True
    ),
    "WrapAndHold-v0": CatalogueEntry("sorogym.envs.wrap_and_hold:WrapAndHold", 120),
    "TwoArmReach-v0": CatalogueEntry("sorogym.envs.two_arm_reach:TwoArmReach", 80),
    "GraspAndLift-v0": CatalogueEntry("sorogym.envs.grasp_and_lift:GraspAndLift", 100),
}


def register_gym_id(gymnasium, name: str, max_episode_steps: int, entry_point: str | None = None) -> None:
    """Register ``sorogym/<name>`` with the ``gymnasium`` module (no-op when registered): the
    Gymnasium faces of the brax env ``name`` (:mod:`sorogym.env`, with a batched
    ``vector_entry_point``), or the Gymnasium-only env at ``entry_point``."""
    faces = {"entry_point": "sorogym.env._gym:GymEnv", "vector_entry_point": "sorogym.env._gym:GymVectorEnv"}
    spec = {**faces, "kwargs": {"env_name": name}} if entry_point is None else {"entry_point": entry_point}
    if f"{GYM_NAMESPACE}/{name}" not in gymnasium.registry:
        gymnasium.register(id=f"{GYM_NAMESPACE}/{name}", max_episode_steps=max_episode_steps, **spec)


def register_with_gymnasium(gymnasium) -> None:
    """Register every env of :data:`CATALOGUE` with ``gymnasium`` (idempotent; :mod:`sorogym`
    calls it once Gymnasium is imported)."""
    for name, entry in CATALOGUE.items():
        register_gym_id(gymnasium, name, entry.max_episode_steps, entry.entry_point if entry.gym_only else None)


__all__ = ["CATALOGUE", "CatalogueEntry", "GYM_NAMESPACE", "register_gym_id", "register_with_gymnasium"]
