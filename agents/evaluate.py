"""Policy evaluation over parallel episodes of a brax-face env.

A *policy* maps a batch of observations ``(B, obs)`` (float32) and a PRNG key to actions
``(B, act)`` in [-1, 1]. JAX policies (brax PPO, BC students, experts written in JAX) run the
whole evaluation as one compiled ``lax.scan``; host policies (SB3/torch) step the jitted,
batched env from Python.

Every episode runs for ``episode_length`` steps (default: the env's time limit) unless the
env terminates it (then later steps are ignored). Reported, as plain floats:

* ``return_mean``, ``return_std``: undiscounted episode return;
* ``length_mean``: steps until termination or the time limit;
* ``<metric>`` for each env metric: its step-mean within the episode, averaged over episodes
  (``success`` -> step-wise success rate, ``tracking_error`` -> mean tracking error [m]);
* ``final/<metric>``: its value at the last step (``final/success`` -> success at the end);
* ``max/<metric>``: its episode maximum (``max/peak_contact_force`` [N]);
* ``steps_to_success``: where the env reports ``success``, the env steps until its first
  success (1 = after the first step), averaged over the episodes that succeed at all
  (``max/success`` is their share; None if none does);
* ``cost_mean``: the summed ``info["cost"]`` per episode, where the env reports a cost;
* ``num_episodes``, ``episode_length``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np


@dataclasses.dataclass(frozen=True)
class Policy:
    """A policy as the trainers return it: ``act`` (the batched policy of the module
    docstring), whether it is a JAX function (``on_jax``; otherwise a host one) and the
    trained parameters where they are a JAX pytree (``params``; None for SB3)."""

    act: Callable
    on_jax: bool = True
    params: Any = None


def episode_statistics(rewards, alive, metrics, costs=None) -> dict:
    """The statistics of the module docstring from per-step arrays ``(T, B)`` (numpy):
    ``rewards``, ``alive`` (1 until the episode terminated), the env ``metrics`` (a dict) and
    ``costs`` (None where the env reports no cost), as :func:`rollout_arrays` returns them."""
    steps = np.maximum(alive.sum(0), 1)
    returns = (rewards * alive).sum(0)
    last = np.maximum(alive.sum(0) - 1, 0).astype(int)
    out = {
        "num_episodes": int(rewards.shape[1]),
        "episode_length": int(rewards.shape[0]),
        "return_mean": float(returns.mean()),
        "return_std": float(returns.std()),
        "length_mean": float(alive.sum(0).mean()),
    }
    cols = np.arange(rewards.shape[1])
    for k, v in metrics.items():
        if k.startswith("reward/"):
            continue
        out[k] = float(((v * alive).sum(0) / steps).mean())
        out[f"final/{k}"] = float(v[last, cols].mean())
        out[f"max/{k}"] = float(np.where(alive > 0, v, -np.inf).max(0).mean())
    if "success" in metrics:
        hit = (metrics["success"] * alive) > 0  # (T, B)
        reached = hit.any(0)
        first = hit.argmax(0) + 1.0
        out["steps_to_success"] = float(first[reached].mean()) if reached.any() else None
    if costs is not None:
        out["cost_mean"] = float((costs * alive).sum(0).mean())
    return out


def evaluate_policy(
    env,
    policy: Callable,
    num_episodes: int = 128,
    seed: int = 0,
    episode_length: int | None = None,
    jax_policy: bool = True,
    policy_input: str = "obs",
) -> dict:
    """Run ``num_episodes`` parallel episodes of ``env`` under ``policy``; see the module
    docstring for the returned statistics. ``policy_input="state"`` passes the batched
    brax ``State`` instead of the observations (experts, :class:`sorogym.env.Expert`)."""
    return episode_statistics(
        *rollout_arrays(env, policy, num_episodes, seed, episode_length, jax_policy, policy_input)
    )


def rollout_arrays(
    env,
    policy: Callable,
    num_episodes: int = 128,
    seed: int = 0,
    episode_length: int | None = None,
    jax_policy: bool = True,
    policy_input: str = "obs",
):
    """The per-step arrays behind :func:`evaluate_policy`: ``(rewards, alive, metrics,
    costs)``, each ``(T, num_episodes)`` numpy (``metrics`` a dict of them, ``costs`` None
    where the env reports no cost). Columns are episodes, so one rollout can hold several
    policies side by side (a policy that picks its action per column) and
    :func:`episode_statistics` summarises any subset of columns."""
    if policy_input not in ("obs", "state"):
        raise ValueError(f"policy_input: 'obs' or 'state', got {policy_input!r}")
    if policy_input == "state" and not jax_policy:
        raise ValueError("policy_input='state' needs a JAX policy")
    policy_of = (lambda state: state.obs) if policy_input == "obs" else (lambda state: state)
    T = int(episode_length or env.max_episode_steps)
    reset = jax.vmap(env.reset)
    step = jax.vmap(env.step)
    key_reset, key_act = jax.random.split(jax.random.PRNGKey(seed))
    keys = jax.random.split(key_reset, num_episodes)

    has_cost = []  # set while tracing: whether the env reports info["cost"]

    def record(state, alive):
        has_cost.append("cost" in state.info)
        cost = state.info.get("cost", jnp.zeros_like(state.reward))
        return state.reward, alive, state.metrics, cost

    if jax_policy:

        @jax.jit
        def run(keys, key_act):
            state = reset(keys)

            def body(carry, k):
                state, alive = carry
                action, _ = policy(policy_of(state), k)
                state = step(state, action)
                out = record(state, alive)
                alive = alive * (1.0 - state.done)
                return (state, alive), out

            alive = jnp.ones(num_episodes, jnp.float32)
            _, outs = jax.lax.scan(body, (state, alive), jax.random.split(key_act, T))
            return outs

        rewards, alive, metrics, costs = jax.tree.map(np.asarray, run(keys, key_act))
    else:
        state = jax.jit(reset)(keys)
        jstep = jax.jit(step)
        alive = np.ones(num_episodes, np.float32)
        rows = []
        for k in jax.random.split(key_act, T):
            action = np.asarray(policy(np.asarray(state.obs), k)[0], np.float32)
            state = jstep(state, jnp.asarray(action))
            rows.append(jax.tree.map(np.asarray, record(state, alive)))
            alive = alive * (1.0 - np.asarray(state.done))
        rewards, alive, metrics, costs = jax.tree.map(lambda *steps: np.stack(steps), *rows)
    return rewards, alive, metrics, (costs if has_cost[-1] else None)
