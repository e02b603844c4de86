"""The sorogym environment suite (installed as ``sorogym.envs``): one module per task.

Each module holds a frozen ``Config`` dataclass, ``default_config()``, the env class
(registered by name) and the task's shared pure functions.
"""

from . import contact_safe_reaching, pose_tracking, strain_tracking, tendon_reaching, tendon_tracking

__all__ = ["contact_safe_reaching", "pose_tracking", "strain_tracking", "tendon_reaching", "tendon_tracking"]
