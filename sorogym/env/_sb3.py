"""A Stable-Baselines3 ``VecEnv`` over a batched sorogym JAX env.

SB3 does not accept Gymnasium vector envs, so this adapter drives the training-wrapped
env (:func:`~sorogym.env.wrap_for_training`) directly: one jitted call steps every env,
finished episodes are reset on device with fresh randomness, and the infos follow SB3's
conventions: ``terminal_observation`` and ``TimeLimit.truncated`` on finished envs, and
``episode = {"r", "l", "t"}`` (return, length, wall time) so SB3 logs ``ep_rew_mean``
without a ``Monitor`` wrapper.
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from ._base import SoroEnv
from ._gym import WRAPPER_INFO_KEYS, gym_spaces
from ._registry import make
from ._render import render_frames
from ._wrappers import wrap_for_training


class SB3VecEnv(VecEnv):
    """``num_envs`` sorogym envs as one SB3 ``VecEnv``.

    Args:
        env: a registry name or an unbatched sorogym env.
        num_envs: number of parallel envs.
        seed: seed of the first reset (``seed()`` changes it).
        episode_length: control steps per episode (default: the env's).
        **overrides: dotted config overrides when ``env`` is a name.
    """

    def __init__(
        self, env: str | SoroEnv, num_envs: int = 1, seed: int = 0, episode_length: int | None = None, **overrides
    ):
        self.jax_env = make(env, **overrides) if isinstance(env, str) else env
        if int(num_envs) < 1:
            raise ValueError(f"num_envs: must be >= 1, got {num_envs}")
        obs_space, act_space = gym_spaces(self.jax_env)
        self.render_mode = "rgb_array"
        super().__init__(int(num_envs), obs_space, act_space)
        self._batched = wrap_for_training(self.jax_env, episode_length=episode_length)
        self._reset_fn = jax.jit(self._batched.reset)
        self._step_fn = jax.jit(self._batched.step)
        self._seed = int(seed)
        self._state = None
        self._actions = None
        self._returns = np.zeros(self.num_envs)
        self._lengths = np.zeros(self.num_envs, dtype=int)
        self._t0 = time.time()

    def reset(self) -> np.ndarray:
        keys = jax.random.split(jax.random.PRNGKey(self._seed), self.num_envs)
        self._seed += 1
        self._state = self._reset_fn(keys)
        self._returns[:] = 0.0
        self._lengths[:] = 0
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return np.array(self._state.obs)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = jnp.asarray(np.asarray(actions, dtype=np.float32).reshape(self.num_envs, -1))

    def step_wait(self):
        if self._state is None:
            raise RuntimeError("step() called before reset()")
        s = self._step_fn(self._state, self._actions)
        self._state = s
        obs = np.array(s.obs)
        rewards = np.array(s.reward, dtype=np.float32)  # writable: SB3 bootstraps in place
        dones = np.array(s.done) > 0
        truncation = np.asarray(s.info["truncation"]) > 0
        final_obs = np.array(s.info["final_obs"])
        per_step = {k: np.asarray(v) for k, v in s.metrics.items()}
        per_step.update({k: np.asarray(v) for k, v in s.info.items() if k not in WRAPPER_INFO_KEYS})
        self._returns += rewards
        self._lengths += 1
        infos = []
        for i in range(self.num_envs):
            info = {k: float(v[i]) for k, v in per_step.items()}
            if dones[i]:
                info["terminal_observation"] = final_obs[i]
                info["TimeLimit.truncated"] = bool(truncation[i])
                info["episode"] = {
                    "r": float(self._returns[i]),
                    "l": int(self._lengths[i]),
                    "t": round(time.time() - self._t0, 6),
                }
                self._returns[i] = 0.0
                self._lengths[i] = 0
            infos.append(info)
        return obs, rewards, dones, infos

    def close(self) -> None:
        self._state = None

    def seed(self, seed: int | None = None):
        if seed is not None:
            self._seed = int(seed)
        return [self._seed + i for i in range(self.num_envs)]

    def get_attr(self, attr_name, indices=None):
        return [getattr(self, attr_name) for _ in self._indices(indices)]

    def set_attr(self, attr_name, value, indices=None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name, *args, indices=None, **kwargs):
        method = getattr(self, method_name)
        return [method(*args, **kwargs) for _ in self._indices(indices)]

    def env_is_wrapped(self, wrapper_class, indices=None):
        return [False for _ in self._indices(indices)]

    def get_images(self):
        if self._state is None:
            return [None] * self.num_envs
        return list(render_frames(self.jax_env, self._state.pipeline_state, 480, 480))

    def _indices(self, indices):
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return indices
