"""Rollout videos of a policy in one env (headless matplotlib frames -> GIF)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np


def rollout_states(env, policy: Callable, seed: int = 0, num_steps: int | None = None, jax_policy: bool = True):
    """Pipeline states (host numpy) of one episode of ``policy`` (a batched policy, see
    :mod:`sorogym.agents.evaluate`), from the reset state to the time limit or termination."""
    reset, step = jax.jit(env.reset), jax.jit(env.step)
    act = jax.jit(policy) if jax_policy else policy
    key, key_act = jax.random.split(jax.random.PRNGKey(seed))
    state = reset(key)
    states = [jax.tree.map(np.asarray, state.pipeline_state)]
    for k in jax.random.split(key_act, int(num_steps or env.max_episode_steps)):
        action, _ = act(state.obs[None], k)
        state = step(state, jnp.asarray(action, jnp.float32)[0])
        states.append(jax.tree.map(np.asarray, state.pipeline_state))
        if float(state.done):
            break
    return states


def write_policy_gif(
    env,
    policy: Callable,
    path: str | Path,
    seed: int = 0,
    episodes: int = 1,
    jax_policy: bool = True,
    frame_every: int = 2,
    size: int = 360,
) -> Path:
    """Render ``episodes`` episodes (every ``frame_every``-th step) into a GIF at ``path``."""
    from sorogym.render import render_rgb, write_gif

    frames = []
    for e in range(episodes):
        states = rollout_states(env, policy, seed + e, jax_policy=jax_policy)
        frames += [render_rgb(env.render_scene(ps), size, size) for ps in states[::frame_every]]
    return write_gif(frames, path, fps=env.control_dt**-1 / frame_every)
