"""On-JAX PPO: ``brax.training.agents.ppo.train`` driving a sorogym env through
:func:`sorogym.env.wrap_for_training` (full resets, truncation, final observations).

brax uses every local accelerator by itself (``pmap`` over ``jax.local_devices()``, capped by
``ppo.max_devices_per_host``); the same config runs on this CPU and on a GPU unchanged.
"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Callable

from . import checkpoint as ckpt
from .config import RunConfig


def network_factory(config: RunConfig):
    from brax.training.agents.ppo import networks as ppo_networks

    p = config.ppo
    return functools.partial(ppo_networks.make_ppo_networks, policy_hidden_layer_sizes=p.policy_hidden_layer_sizes,
                             value_hidden_layer_sizes=p.value_hidden_layer_sizes)


def checkpoint_meta(config: RunConfig, env) -> dict:
    p = config.ppo
    return {
        "algo": "ppo", "env": env.name, "env_overrides": dict(config.env_overrides),
        "observation_size": int(env.observation_size), "action_size": int(env.action_size),
        "normalize_observations": bool(p.normalize_observations),
        "policy_hidden_layer_sizes": list(p.policy_hidden_layer_sizes),
        "value_hidden_layer_sizes": list(p.value_hidden_layer_sizes),
    }


def _check_compatible(old: dict, new: dict, what: str) -> None:
    """A checkpoint's ``meta`` must describe the env and networks the config trains."""
    keys = ("env", "observation_size", "action_size", "normalize_observations", "policy_hidden_layer_sizes",
            "value_hidden_layer_sizes")
    diff = [f"{k}: checkpoint {old.get(k)!r}, config {new[k]!r}" for k in keys if old.get(k) != new[k]]
    if diff:
        raise ValueError(f"{what}: the checkpoint does not fit this run ({'; '.join(diff)})")


def train_ppo(config: RunConfig, env, run_dir: Path, on_progress: Callable[[int, dict], None],
              resume_from: str | Path | None = None):
    """Train; returns ``(params, networks, final_step)``.

    ``on_progress(step, metrics)`` receives brax's evaluation metrics at each of
    ``ppo.num_evals`` progress points (``eval/episode_reward``, ``eval/episode_<metric>``
    sums over an episode, ``training/*``), with ``step`` counted from the start of the
    first run when resuming. Checkpoints go to ``run_dir/checkpoints`` at every progress
    point. ``resume_from`` (a checkpoint or run folder) restores the normaliser, policy and
    value parameters and the step count; brax re-initialises the optimiser state, which its
    trainer does not expose. ``ppo.init_from`` starts a new run (step 0) from the parameters
    of a PPO, BC or DAgger checkpoint (a warm start), optionally with the policy's std reset
    to ``ppo.init_std``.
    """
    from sorogym.agents import install_brax_compat
    from sorogym.env import wrap_for_training

    install_brax_compat()
    from brax.training.agents.ppo import train as brax_ppo

    p = config.ppo
    step0, restore = 0, None
    meta = checkpoint_meta(config, env)
    if resume_from is not None:
        restore, old, _ = ckpt.load_ppo(resume_from)
        _check_compatible(old, meta, "resume")
        step0 = int(old["step"])
    elif p.init_from is not None:
        restore, old, _ = ckpt.load_ppo(p.init_from)
        _check_compatible(old, meta, "ppo.init_from")
        if p.init_std is not None:
            from .distill import set_policy_std

            restore = (restore[0], set_policy_std(restore[1], p.init_std), restore[2])
    remaining = max(p.num_timesteps - step0, 0)
    ckpt_root = Path(run_dir) / "checkpoints"
    last = {"params": restore, "step": step0}

    def save(step, make_policy, params):
        last["params"], last["step"] = params, step0 + int(step)
        if int(step) > 0 or resume_from is None:
            ckpt.save_ppo(ckpt_root, step0 + int(step), params, meta)

    if remaining == 0:
        if restore is None:
            raise ValueError("ppo.num_timesteps is 0: nothing to train")
        return restore, ckpt.ppo_networks_from_meta(meta), step0
    _, params, _ = brax_ppo.train(
        environment=env, num_timesteps=remaining, episode_length=env.max_episode_steps, num_envs=p.num_envs,
        unroll_length=p.unroll_length, batch_size=p.batch_size, num_minibatches=p.num_minibatches,
        num_updates_per_batch=p.num_updates_per_batch, learning_rate=p.learning_rate, entropy_cost=p.entropy_cost,
        discounting=p.discounting, gae_lambda=p.gae_lambda, clipping_epsilon=p.clipping_epsilon,
        reward_scaling=p.reward_scaling, max_grad_norm=p.max_grad_norm, normalize_observations=p.normalize_observations,
        network_factory=network_factory(config), num_evals=p.num_evals, num_eval_envs=p.num_eval_envs,
        deterministic_eval=p.deterministic_eval, max_devices_per_host=p.max_devices_per_host,
        wrap_env_fn=wrap_for_training, seed=config.seed, restore_params=restore,
        progress_fn=lambda step, metrics: on_progress(step0 + int(step), metrics), policy_params_fn=save,
    )
    return params, ckpt.ppo_networks_from_meta(meta), last["step"]


def progress_row(metrics: dict, episode_length: int) -> dict:
    """brax evaluation metrics -> our row names: ``return_mean``, per-step means of the env
    metrics (``success`` = step-wise success rate), and the training losses."""
    row = {}
    for k, v in metrics.items():
        if k == "eval/episode_reward":
            row["return_mean"] = v
        elif k == "eval/episode_reward_std":
            row["return_std"] = v
        elif k.startswith("eval/episode_") and not k.endswith("_std") and "reward/" not in k:
            row[k[len("eval/episode_"):]] = float(v) / episode_length
        elif k.startswith("training/") and k != "training/walltime":
            row[k] = v
    return row


class Throughput:
    """Env steps per second between progress points (wall clock, includes compilation at
    the first point)."""

    def __init__(self):
        self._t, self._step = time.time(), None

    def __call__(self, step: int) -> float | None:
        now = time.time()
        rate = None
        if self._step is not None and step > self._step:
            rate = (step - self._step) / max(now - self._t, 1e-9)
        self._t, self._step = now, step
        return rate
