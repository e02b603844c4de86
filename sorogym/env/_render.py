"""Frames of env states, for both faces: one state (:func:`render_state`) or a batch or
sequence of them (:func:`render_frames`), drawn by a renderer of :mod:`sorogym.render`
(MuJoCo where an OpenGL context exists, matplotlib otherwise)."""

from __future__ import annotations

import jax
import numpy as np


def render_state(env, pipeline_state, width: int = 480, height: int = 480, renderer="auto") -> np.ndarray:
    """``(height, width, 3)`` uint8 frame of one (unbatched) physics state of ``env``;
    ``renderer``: ``"auto"``, ``"mujoco"``, ``"matplotlib"`` (see
    :func:`sorogym.render.make_renderer`) or a renderer object to reuse."""
    return render_frames(env, jax.tree.map(lambda x: np.asarray(x)[None], pipeline_state), width, height, renderer)[0]


def render_frames(env, pipeline_states, width: int = 480, height: int = 480, renderer="auto") -> np.ndarray:
    """Frames ``(n, height, width, 3)`` uint8 of ``n`` physics states of ``env``: a
    ``PhysicsState`` whose leaves carry a leading axis of size ``n`` (a batch of envs, or a
    rollout's states stacked over time, e.g. ``jax.lax.scan`` output), or a sequence of
    unbatched states. One renderer (one OpenGL context) draws them all; ``renderer`` as in
    :func:`render_state`."""
    from ..render import make_renderer

    if isinstance(pipeline_states, list | tuple):
        states = [jax.tree.map(np.asarray, s) for s in pipeline_states]
    else:
        stacked = jax.tree.map(np.asarray, pipeline_states)
        n = int(np.shape(stacked.q)[0])
        states = [jax.tree.map(lambda x, k=k: x[k], stacked) for k in range(n)]
    own = isinstance(renderer, str)
    drawer = make_renderer(renderer, width, height) if own else renderer
    try:
        frames = [drawer.render(env.render_scene(ps)) for ps in states]
    finally:
        if own:
            drawer.close()
    return np.stack(frames) if frames else np.zeros((0, height, width, 3), np.uint8)
