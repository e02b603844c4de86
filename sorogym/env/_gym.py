"""Gymnasium faces of the JAX envs: a single :class:`GymEnv` and a natively batched
:class:`GymVectorEnv` (``gymnasium.make_vec``'s ``vector_entry_point``).

Numpy arrays at the boundary, float32 ``Box`` spaces (actions in [-1, 1]), seeding through
Gymnasium's ``np_random`` (the JAX key of each reset is drawn from it), ``render_mode =
"rgb_array"`` (MuJoCo frames where an OpenGL context exists, matplotlib otherwise:
``renderer=``). The JAX ``reset``/``step`` are jitted once per instance.

``info`` carries the env's metrics (``reward/<term>``, task metrics such as
``tracking_error`` and ``success``) and info keys (``nonfinite``, ``cost`` where defined) as
Python floats (single env) or arrays (vector env).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
from gymnasium.vector.utils import batch_space
from gymnasium.vector.vector_env import AutoresetMode

from ._registry import make
from ._render import render_state
from ._wrappers import wrap_for_training

#: ``info`` keys of the training wrapper that the Gymnasium faces do not pass on.
WRAPPER_INFO_KEYS = {"steps", "truncation", "episode_done", "episode_metrics", "final_obs"}


def gym_spaces(env):
    """Float32 ``(observation_space, action_space)`` Boxes of a sorogym env: observations
    within ``+-env.observation_limit``, actions in ``[-1, 1]``."""
    obs = gymnasium.spaces.Box(-env.observation_limit, env.observation_limit, (env.observation_size,), np.float32)
    act = gymnasium.spaces.Box(-1.0, 1.0, (env.action_size,), np.float32)
    return obs, act


def checked_action(action, space: gymnasium.spaces.Box, name: str) -> np.ndarray:
    """``action`` as float32 of the shape of ``space``; ``ValueError`` naming the expected
    shape when its size differs, or when it is not real numbers."""
    a = np.asarray(action)
    if a.dtype.kind not in "fiu":
        raise ValueError(f"action: {name} takes real numbers in [-1, 1], got dtype {a.dtype}")
    if a.size != int(np.prod(space.shape)):
        raise ValueError(f"action: {name} takes shape {space.shape}, got shape {a.shape}")
    return a.astype(np.float32).reshape(space.shape)


def jax_key_from(np_random: np.random.Generator) -> jax.Array:
    """A JAX PRNG key drawn from a Gymnasium env's ``np_random`` (seeded resets stay reproducible)."""
    return jax.random.PRNGKey(int(np_random.integers(0, 2**31 - 1)))


class _Frames:
    """The Gymnasium faces' rendering: one renderer (:func:`sorogym.render.make_renderer`)
    made on the first frame and kept until ``close``."""

    def __init__(self, kind: str, size):
        if kind not in ("auto", "mujoco", "matplotlib"):
            raise ValueError(f"renderer: unknown {kind!r}; use 'auto', 'mujoco' or 'matplotlib'")
        width, height = (int(v) for v in size)
        if width < 16 or height < 16:
            raise ValueError(f"render_size: (width, height) of at least 16 px each, got {tuple(size)}")
        self.kind, self.size, self._renderer = kind, (width, height), None

    def __call__(self, env, pipeline_state) -> np.ndarray:
        from ..render import make_renderer

        if self._renderer is None:
            self._renderer = make_renderer(self.kind, *self.size)
        return render_state(env, pipeline_state, *self.size, renderer=self._renderer)

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None


class GymEnv(gymnasium.Env):
    """A registered sorogym env as a ``gymnasium.Env`` (time limit from the registry).

    Args:
        env_name: registry name, e.g. ``"TendonTracking-v0"``.
        render_mode: ``None`` or ``"rgb_array"``.
        render_size: ``(width, height)`` of rendered frames [px].
        renderer: ``"auto"`` (MuJoCo where an OpenGL context exists, else matplotlib),
            ``"mujoco"`` or ``"matplotlib"`` (:func:`sorogym.render.make_renderer`).
        **overrides: dotted config overrides (see :func:`sorogym.make`).
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 15}

    def __init__(
        self, env_name: str, render_mode: str | None = None, render_size=(480, 480), renderer="auto", **overrides
    ):
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode: only 'rgb_array' is supported, got {render_mode!r}")
        self.jax_env = make(env_name, **overrides)
        self.render_mode = render_mode
        self.render_size = tuple(render_size)
        self._frames = _Frames(renderer, render_size)
        self.metadata = dict(self.metadata, render_fps=int(round(1.0 / self.jax_env.control_dt)))
        self.observation_space, self.action_space = gym_spaces(self.jax_env)
        self._reset = jax.jit(self.jax_env.reset)
        self._step = jax.jit(self.jax_env.step)
        self._state = None

    @property
    def state(self):
        """The current brax ``State`` of the wrapped JAX env (``None`` before ``reset``)."""
        return self._state

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._state = self._reset(jax_key_from(self.np_random))
        return np.array(self._state.obs), self._info(self._state)

    def step(self, action):
        if self._state is None:
            raise RuntimeError("step() called before reset()")
        action = checked_action(action, self.action_space, self.jax_env.name)
        self._state = self._step(self._state, jnp.asarray(action))
        s = self._state
        return np.array(s.obs), float(s.reward), bool(s.done > 0), False, self._info(s)

    @staticmethod
    def _info(state) -> dict[str, Any]:
        info = {k: float(v) for k, v in state.metrics.items()}
        info.update({k: float(v) for k, v in state.info.items() if k not in WRAPPER_INFO_KEYS})
        return info

    def render(self):
        if self.render_mode != "rgb_array" or self._state is None:
            return None
        return self._frames(self.jax_env, self._state.pipeline_state)

    def close(self):
        self._frames.close()
        super().close()


class GymVectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` copies stepped as one batched, jitted JAX call (same-step autoreset).

    Finished episodes are reset in the same ``step`` with fresh randomness; the observation
    that ended an episode is in ``infos["final_obs"]`` (object array, ``None`` elsewhere)
    with the mask ``infos["_final_obs"]``, and that step's metrics and info in
    ``infos["final_info"]`` (a dict of per-env arrays, zero where no episode ended, each with
    its ``_key`` mask; mask ``infos["_final_info"]``), as Gymnasium's ``SAME_STEP`` mode
    specifies. The top-level metrics of a reset env are those of its final step too (the
    reset itself has no metrics).
    """

    metadata = {"render_modes": ["rgb_array"], "autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(
        self,
        env_name: str,
        num_envs: int = 1,
        max_episode_steps: int | None = None,
        render_mode: str | None = None,
        render_size=(480, 480),
        renderer="auto",
        **overrides,
    ):
        if int(num_envs) < 1:
            raise ValueError(f"num_envs: must be >= 1, got {num_envs}")
        self.jax_env = make(env_name, **overrides)
        self.num_envs = int(num_envs)
        self.render_mode = render_mode
        self.render_size = tuple(render_size)
        self._frames = _Frames(renderer, render_size)
        self._batched = wrap_for_training(self.jax_env, episode_length=max_episode_steps)
        self.single_observation_space, self.single_action_space = gym_spaces(self.jax_env)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._reset = jax.jit(self._batched.reset)
        self._step = jax.jit(self._batched.step)
        self._state = None

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        keys = jax.random.split(jax_key_from(self.np_random), self.num_envs)
        self._state = self._reset(keys)
        return np.array(self._state.obs), self._infos(self._state, None)

    def step(self, actions):
        if self._state is None:
            raise RuntimeError("step() called before reset()")
        actions = checked_action(actions, self.action_space, self.jax_env.name)
        self._state = self._step(self._state, jnp.asarray(actions))
        s = self._state
        done = np.asarray(s.done) > 0
        truncated = done & (np.asarray(s.info["truncation"]) > 0)
        terminated = done & ~truncated
        return np.array(s.obs), np.array(s.reward), terminated, truncated, self._infos(s, done)

    def _infos(self, state, done) -> dict[str, Any]:
        infos: dict[str, Any] = {}
        items = dict(state.metrics)
        items.update({k: v for k, v in state.info.items() if k not in WRAPPER_INFO_KEYS})
        for k, v in items.items():
            infos[k] = np.array(v)
            infos["_" + k] = np.ones(self.num_envs, dtype=bool)
        if done is not None and done.any():
            final = np.array(state.info["final_obs"])
            objs = np.full(self.num_envs, None, dtype=object)
            for i in np.flatnonzero(done):
                objs[i] = final[i]
            infos["final_obs"], infos["_final_obs"] = objs, done.copy()
            # the metrics and info of the step that ended each episode, zero where none ended
            final_info: dict[str, Any] = {}
            for k, v in items.items():
                v = np.array(v)
                final_info[k] = np.where(done.reshape(done.shape + (1,) * (v.ndim - 1)), v, np.zeros_like(v))
                final_info["_" + k] = done.copy()
            infos["final_info"], infos["_final_info"] = final_info, done.copy()
        return infos

    def render(self):
        if self.render_mode != "rgb_array" or self._state is None:
            return None
        first = jax.tree.map(lambda x: x[0], self._state.pipeline_state)
        return self._frames(self.jax_env, first)

    def close(self, **kwargs):
        self._frames.close()
        super().close(**kwargs)
