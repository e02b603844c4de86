"""The training algorithms a run config's ``algo`` names: :data:`TRAINERS` maps each name to
one :class:`Trainer`, the whole of what the run layer (:mod:`sorogym.agents.run`) and the
config checks (:mod:`sorogym.agents.config`) know of an algorithm.

Adding an algorithm: a module with its training and loading code, its settings as a section
of :class:`~sorogym.agents.config.RunConfig`, and one entry here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from . import checkpoint as ckpt
from . import distill, ppo, sb3
from .evaluate import Policy
from .networks import ppo_policy


@dataclasses.dataclass(frozen=True)
class Trainer:
    """One training algorithm; ``config`` is a run config, ``env`` a brax-face env.

    * ``train(config, env, run_dir, on_progress, resume_from) -> (Policy, env_steps)``: train
      (continuing the checkpoint or run folder ``resume_from`` unless None), calling
      ``on_progress(env_steps, metrics)`` at each progress point and writing checkpoints to
      ``run_dir/checkpoints/``; the policy acts as ``config.eval.deterministic`` says;
    * ``load_policy(checkpoint, deterministic) -> Policy``;
    * ``total_steps(config, env)``: the env steps a run takes (for progress bars);
    * ``check(config, env_cls)``: raise ``ValueError`` naming a field it cannot train with;
    * ``progress_row(metrics, env)``: ``on_progress`` metrics in the logged names
      (``return_mean``, ``success``, ...);
    * ``teacher(config, env)``: an expert to evaluate alongside the result, or None.
    """

    train: Callable[..., tuple[Policy, int]]
    load_policy: Callable[[str | Path, bool], Policy]
    total_steps: Callable[..., int]
    check: Callable[..., None] = lambda config, env_cls: None
    progress_row: Callable[[dict, object], dict] = lambda metrics, env: dict(metrics)
    teacher: Callable = lambda config, env: None


def _brax_format(train_fn: Callable) -> Callable:
    """``Trainer.train`` from a ``train_fn`` that returns ``(params, networks, env_steps)``
    (:mod:`~sorogym.agents.networks`)."""

    def train(config, env, run_dir, on_progress, resume_from=None) -> tuple[Policy, int]:
        params, nets, step = train_fn(config, env, run_dir, on_progress, resume_from)
        return Policy(ppo_policy(params, nets, config.eval.deterministic), params=params), step

    return train


def _load_brax_format(checkpoint, deterministic: bool = True) -> Policy:
    params, _, nets = ckpt.load_ppo(checkpoint)
    return Policy(ppo_policy(params, nets, deterministic), params=params)


def _train_sb3(config, env, run_dir, on_progress, resume_from=None) -> tuple[Policy, int]:
    model, step = sb3.train_sb3(config, env, run_dir, on_progress, resume_from)
    return Policy(sb3.sb3_policy(model, config.eval.deterministic, sb3.training_normalizer(model)), False), step


def _load_sb3(checkpoint, deterministic: bool = True) -> Policy:
    model, _, normalizer = sb3.load_sb3(checkpoint)
    return Policy(sb3.sb3_policy(model, deterministic, normalizer), on_jax=False)


_DISTILL = Trainer(
    _brax_format(distill.train_distill),
    _load_brax_format,
    check=distill.check_config,
    total_steps=lambda config, env: config.distill.rounds * config.distill.num_envs * env.max_episode_steps,
    teacher=lambda config, env: env.expert(config.distill.expert),
)

#: ``algo`` -> its trainer
TRAINERS: dict[str, Trainer] = {
    "ppo": Trainer(
        _brax_format(ppo.train_ppo),
        _load_brax_format,
        total_steps=lambda config, env: config.ppo.num_timesteps,
        check=ppo.check_config,
        progress_row=ppo.progress_row,
    ),
    "sb3_ppo": Trainer(_train_sb3, _load_sb3, lambda config, env: config.sb3_ppo.total_timesteps),
    "bc": _DISTILL,
    "dagger": _DISTILL,
}
