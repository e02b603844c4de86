"""Shared by the locomotion env tests."""

import jax
import numpy as np

import sorogym


def expert_progress(name: str, steps: int = 40, seed: int = 3, num_envs: int = 4, **overrides) -> np.ndarray:
    """``(num_envs,)`` decrease [m] of the goal distance over ``steps`` control steps of the
    env's default expert, at a fixed friction factor, from the resets of ``seed``."""
    env = sorogym.make(name, friction_range=(1.0, 1.0), **overrides)
    reset, step, act = jax.jit(jax.vmap(env.reset)), jax.jit(jax.vmap(env.step)), jax.jit(env.expert())
    state = reset(jax.random.split(jax.random.PRNGKey(seed), num_envs))
    d0 = np.asarray(state.metrics["goal_distance"])
    for _ in range(steps):
        state = step(state, act(state)[0])
    return d0 - np.asarray(state.metrics["goal_distance"])
