"""On-JAX PPO: ``brax.training.agents.ppo.train`` driving a sorogym env through
:func:`sorogym.env.wrap_for_training` (full resets, truncation, final observations).

brax uses every local accelerator by itself (``pmap`` over ``jax.local_devices()``, capped by
``ppo.max_devices_per_host``); the same config runs on this CPU and on a GPU unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sorogym.env import wrap_for_training

from . import checkpoint as ckpt
from .distributed import is_primary
from .networks import make_networks, network_factory, network_meta, set_policy_std


def checkpoint_meta(config, env) -> dict:
    """The ``meta.json`` of the checkpoints of a PPO run config ``config`` on ``env``."""
    return {**ckpt.run_meta("ppo", config, env), **network_meta(config.ppo)}


def check_config(config, env_cls) -> None:
    """Raise ``ValueError`` naming the field where the ``ppo`` section cannot train."""
    p = config.ppo
    if (p.batch_size * p.num_minibatches) % p.num_envs:
        raise ValueError(
            "ppo: batch_size * num_minibatches must be a multiple of num_envs "
            f"({p.batch_size} * {p.num_minibatches} vs {p.num_envs})"
        )
    if p.num_timesteps < 0 or p.num_envs < 1 or p.num_evals < 1:
        raise ValueError("ppo: num_timesteps >= 0, num_envs >= 1 and num_evals >= 1 required")
    if p.init_std is not None and p.init_from is None:
        raise ValueError("ppo.init_std: only used with ppo.init_from (a checkpoint to warm-start from)")


def _check_compatible(old: dict, new: dict, what: str) -> None:
    """A checkpoint's ``meta`` must describe the env and networks the config trains."""
    keys = [k for k in new if k not in ("algo", "env_overrides")]
    diff = [f"{k}: checkpoint {old.get(k)!r}, config {new[k]!r}" for k in keys if old.get(k) != new[k]]
    if diff:
        raise ValueError(f"{what}: the checkpoint does not fit this run ({'; '.join(diff)})")


def train_ppo(
    config, env, run_dir: Path, on_progress: Callable[[int, dict], None], resume_from: str | Path | None = None
):
    """Train by the run config ``config`` (:class:`~sorogym.agents.config.RunConfig`);
    returns ``(params, networks, final_step)`` (see :mod:`~sorogym.agents.networks`).

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
            restore = (restore[0], set_policy_std(restore[1], p.init_std), restore[2])
    remaining = max(p.num_timesteps - step0, 0)
    ckpt_root = Path(run_dir) / "checkpoints"
    last = {"step": step0}

    def save(step, make_policy, params):
        last["step"] = step0 + int(step)
        # brax calls this on every process at step 0 and on process 0 only afterwards
        if is_primary() and (int(step) > 0 or resume_from is None):
            ckpt.save_ppo(ckpt_root, step0 + int(step), params, meta)

    if remaining == 0:
        if restore is None:
            raise ValueError("ppo.num_timesteps is 0: nothing to train")
        return restore, make_networks(meta), step0
    _, params, _ = brax_ppo.train(
        environment=env,
        num_timesteps=remaining,
        episode_length=env.max_episode_steps,
        num_envs=p.num_envs,
        unroll_length=p.unroll_length,
        batch_size=p.batch_size,
        num_minibatches=p.num_minibatches,
        num_updates_per_batch=p.num_updates_per_batch,
        learning_rate=p.learning_rate,
        entropy_cost=p.entropy_cost,
        discounting=p.discounting,
        gae_lambda=p.gae_lambda,
        clipping_epsilon=p.clipping_epsilon,
        reward_scaling=p.reward_scaling,
        max_grad_norm=p.max_grad_norm,
        normalize_observations=p.normalize_observations,
        network_factory=network_factory(meta),
        num_evals=p.num_evals,
        num_eval_envs=p.num_eval_envs,
        deterministic_eval=p.deterministic_eval,
        max_devices_per_host=p.max_devices_per_host,
        wrap_env_fn=wrap_for_training,
        seed=config.seed,
        restore_params=restore,
        progress_fn=lambda step, metrics: on_progress(step0 + int(step), metrics),
        policy_params_fn=save,
    )
    return params, make_networks(meta), last["step"]


def progress_row(metrics: dict, env) -> dict:
    """brax evaluation metrics -> our row names: ``return_mean``, per-step means of the env
    metrics (``success`` = step-wise success rate), and the training losses."""
    row, episode_length = {}, env.max_episode_steps
    for k, v in metrics.items():
        if k == "eval/episode_reward":
            row["return_mean"] = v
        elif k == "eval/episode_reward_std":
            row["return_std"] = v
        elif k.startswith("eval/episode_") and not k.endswith("_std") and "reward/" not in k:
            row[k[len("eval/episode_") :]] = float(v) / episode_length
        elif k.startswith("training/") and k != "training/walltime":
            row[k] = v
    return row
