"""The environment layer: the brax ``Env`` base, the registry and the wrappers.

* :class:`SoroEnv` / :class:`PhysicsState` / :class:`StepOutputs`: the pure-functional env
  base (brax API) and what its one task hook, ``outputs``, returns.
* :func:`make`, :func:`registry`, :func:`register`: names -> envs (the suite's from
  :data:`sorogym.envs.CATALOGUE`, imported on demand); the suite is registered with
  Gymnasium (``sorogym/<Name>-v0``) once Gymnasium is imported, and with brax.
* :func:`wrap_for_training`: vmap (in chunks of 1024 envs on a CPU) + episode limit + full
  reset (brax PPO's ``wrap_env_fn``).
* :class:`GymEnv`, :class:`GymVectorEnv` (Gymnasium) and :class:`SB3VecEnv`
  (Stable-Baselines3) faces over the same JAX env; :class:`LimbAgents`, the multi-agent
  Gymnasium view of a multi-limb env (one agent per limb).
* :func:`install_brax_compat`: restores the one jax function brax 0.14's trainers call
  (every env constructor calls it, so ``brax.training.agents.ppo.train`` runs unchanged).
* :func:`render_frames` / :func:`render_state`: frames of a batch (or sequence) of states,
  or of one, for either face (MuJoCo or matplotlib).
* :class:`Expert`: model-based expert policies (``env.expert()``) on the full state.
* :func:`integrator_accuracy`, :func:`random_action_episode`: the env integrator against a
  float64 reference.
"""

from ._accuracy import integrator_accuracy, random_action_episode
from ._base import PhysicsState, SoroEnv, StepOutputs
from ._brax import install_brax_compat
from ._config import RANDOMIZATION_LIMITS, EpisodeConfig, config_to_dict, replace_config
from ._expert import Expert
from ._registry import canonical_name, env_class, gym_twins, make, register, register_gym_twin, registry
from ._render import render_frames, render_state
from ._wrappers import ChunkedVmapWrapper, FullResetWrapper, wrap_for_training


def __getattr__(name):
    # Gymnasium and SB3 faces load on first use (SB3 pulls in torch).
    if name in ("GymEnv", "GymVectorEnv", "gym_spaces", "jax_key_from"):
        from . import _gym

        return getattr(_gym, name)
    if name == "LimbAgents":
        from ._agents import LimbAgents

        return LimbAgents
    if name == "SB3VecEnv":
        from ._sb3 import SB3VecEnv

        return SB3VecEnv
    raise AttributeError(name)


__all__ = [
    "Expert",
    "PhysicsState",
    "SoroEnv",
    "StepOutputs",
    "make",
    "install_brax_compat",
    "render_frames",
    "render_state",
    "registry",
    "register",
    "gym_twins",
    "register_gym_twin",
    "canonical_name",
    "env_class",
    "wrap_for_training",
    "ChunkedVmapWrapper",
    "FullResetWrapper",
    "replace_config",
    "EpisodeConfig",
    "RANDOMIZATION_LIMITS",
    "config_to_dict",
    "integrator_accuracy",
    "random_action_episode",
    "GymEnv",
    "GymVectorEnv",
    "LimbAgents",
    "SB3VecEnv",
]
