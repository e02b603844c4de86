"""Training wrapper for batched brax-style use (brax PPO, the Gymnasium vector env, SB3).

:func:`wrap_for_training` = vmap over envs -> brax's episode limit (``info["steps"]``,
``info["truncation"]``, ``info["episode_metrics"]``) -> :class:`FullResetWrapper`.

Unlike brax's ``AutoResetWrapper`` (which restores a state cached at the first reset, so
every episode of an env would see the same target), :class:`FullResetWrapper` calls the
env's own ``reset`` with a fresh key whenever an episode ends: targets, goals, obstacles and
randomised parameters are resampled. The observation that ended the episode is kept in
``info["final_obs"]`` (equal to ``obs`` on steps that did not end an episode).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._base import SoroEnv
from ._brax import import_brax_envs

_brax_envs = import_brax_envs()
Wrapper = _brax_envs.Wrapper
State = _brax_envs.State


class FullResetWrapper(Wrapper):
    """Resets finished episodes of a batched env with fresh randomness (module docstring).

    Expects batched states (leading env axis) whose ``pipeline_state.rng`` holds a key per
    env; the key that resets an env is derived from it, so runs are reproducible by seed.
    """

    def reset(self, rng: jax.Array) -> State:
        state = self.env.reset(rng)
        info = dict(state.info)
        # brax's episode wrapper creates its counters in the default float type (float64
        # under x64) but updates them in float32: fix the dtype so the carry is stable.
        for key in ("steps", "truncation", "episode_done"):
            if key in info:
                info[key] = jnp.asarray(info[key], jnp.float32)
        if "episode_metrics" in info:
            info["episode_metrics"] = jax.tree.map(lambda x: jnp.asarray(x, jnp.float32), info["episode_metrics"])
        info["final_obs"] = state.obs
        return state.replace(info=info)

    def step(self, state: State, action: jax.Array) -> State:
        info = dict(state.info)
        if "steps" in info:
            info["steps"] = jnp.where(state.done > 0, jnp.zeros_like(info["steps"]), info["steps"])
        state = state.replace(done=jnp.zeros_like(state.done), info=info)
        state = self.env.step(state, action)
        done = state.done > 0

        def reset_done(ps_obs):
            ps, obs = ps_obs
            keys = jax.vmap(lambda k: jax.random.fold_in(k, 0x5EED))(ps.rng)
            fresh = jax.vmap(self.env.unwrapped.reset)(keys)

            def where_done(new, old):
                mask = jnp.reshape(done, done.shape + (1,) * (old.ndim - done.ndim))
                return jnp.where(mask, new, old)

            return jax.tree.map(where_done, fresh.pipeline_state, ps), where_done(fresh.obs, obs)

        # Resets are computed only on steps where some episode ended (a batch-level branch).
        pipeline_state, obs = jax.lax.cond(jnp.any(done), reset_done, lambda x: x, (state.pipeline_state, state.obs))
        return state.replace(pipeline_state=pipeline_state, obs=obs, info=state.info | {"final_obs": state.obs})


def wrap_for_training(
    env: SoroEnv, episode_length: int | None = None, action_repeat: int = 1, randomization_fn=None
) -> Wrapper:
    """Batched env for training (signature of brax's ``envs.training.wrap``, so it can be
    passed to ``brax.training.agents.ppo.train(wrap_env_fn=...)``).

    Args:
        env: an unbatched sorogym env.
        episode_length: control steps per episode (default: ``env.max_episode_steps``).
        action_repeat: env steps per agent step.
        randomization_fn: not supported: sorogym envs randomise their physical parameters
            inside ``reset`` (``config.randomization``), so every reset draws new ones.
    """
    if randomization_fn is not None:
        raise ValueError(
            "randomization_fn: sorogym envs randomise physics per reset via config.randomization; "
            "pass ranges there instead of a brax randomization_fn"
        )
    if not isinstance(env.unwrapped, SoroEnv):
        raise TypeError(f"env: expected a sorogym env, got {type(env.unwrapped).__name__}")
    episode_length = env.unwrapped.max_episode_steps if episode_length is None else int(episode_length)
    wrapped = _brax_envs.training.VmapWrapper(env)
    wrapped = _brax_envs.training.EpisodeWrapper(wrapped, episode_length, action_repeat)
    return FullResetWrapper(wrapped)
