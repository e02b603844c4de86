"""Rollout videos of a policy in one env: headless frames (MuJoCo through EGL, or
matplotlib) written as MP4 or GIF."""

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


def write_policy_video(
    env,
    policy: Callable,
    path: str | Path,
    seed: int = 0,
    episodes: int = 1,
    jax_policy: bool = True,
    frame_every: int = 2,
    size: int = 360,
    renderer: str = "auto",
) -> Path:
    """Render ``episodes`` episodes (every ``frame_every``-th step, ``size`` x ``size`` px)
    into ``path``: MP4 for ``.mp4`` (a GIF beside it, ``.gif``, when imageio-ffmpeg is
    missing), GIF for ``.gif``; returns the file written. ``renderer``: see
    :func:`sorogym.render.make_renderer`."""
    from sorogym.env import render_frames
    from sorogym.render import make_renderer, write_video

    if int(frame_every) < 1:
        raise ValueError(f"frame_every: must be >= 1, got {frame_every}")
    drawer = make_renderer(renderer, size, size)
    try:
        frames = []
        for e in range(episodes):
            states = rollout_states(env, policy, seed + e, jax_policy=jax_policy)
            frames += list(render_frames(env, states[::frame_every], size, size, renderer=drawer))
    finally:
        drawer.close()
    fps = env.control_dt**-1 / frame_every
    try:
        return write_video(frames, path, fps=fps)
    except ImportError:
        if Path(path).suffix.lower() != ".mp4":
            raise
        return write_video(frames, Path(path).with_suffix(".gif"), fps=fps)
