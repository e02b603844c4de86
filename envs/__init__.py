"""The sorogym environment suite (installed as ``sorogym.envs``): one module per task.

Each module holds a frozen ``Config`` dataclass, ``default_config()``, the env class
(registered by name) and the task's shared pure functions. ``tendon_tracking_elastica``
holds ``TendonTracking-Elastica-v0``, the PyElastica twin of ``TendonTracking-v0``
(Gymnasium only, imported on ``gymnasium.make``).
"""

from sorogym.env import register_gym_twin

from . import (
    conical_arm_reaching,
    contact_safe_reaching,
    pose_tracking,
    soft_pendulum_swing_up,
    strain_tracking,
    tendon_reaching,
    tendon_tracking,
)

# The same task on PyElastica (Gymnasium only; PyElastica is imported when the env is made).
register_gym_twin("TendonTracking-Elastica-v0", "sorogym.envs.tendon_tracking_elastica:TendonTrackingElastica",
                  like="TendonTracking-v0")

__all__ = ["conical_arm_reaching", "contact_safe_reaching", "pose_tracking", "soft_pendulum_swing_up", "strain_tracking",
           "tendon_reaching", "tendon_tracking"]
