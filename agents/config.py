"""Run configuration: one YAML file per experiment plus dotted ``key=value`` overrides.

A run config names an environment of the registry, the env's config overrides, an
algorithm and that algorithm's settings::

    env: TendonTracking-v0
    env_overrides: {}            # dotted keys into the env's Config (see sorogym.make)
    algo: ppo                    # ppo (brax, on JAX) | sb3_ppo (Stable-Baselines3, CPU)
                                 # | bc | dagger (distil the env's expert)
    seed: 0
    ppo: {num_timesteps: 2000000, num_envs: 256, ...}
    sb3_ppo: {total_timesteps: 200000, n_envs: 16, ...}
    distill: {expert: null, rounds: 10, ...}   # bc / dagger
    eval: {num_episodes: 128, deterministic: true}
    logging: {wandb: offline, project: sorogym, video: true}

Overrides use the same dotted paths (``ppo.learning_rate=1e-3``, ``seed=3``) and
``env.<field>=value`` for env fields; values are parsed as YAML scalars/lists and checked
against the fields (:func:`sorogym.env.replace_config`, the env configs' coercer). Unknown
keys, unknown envs and env fields that the env's Config lacks are errors naming the key;
so is a section the algorithm (:data:`sorogym.agents.trainers.TRAINERS`) cannot train with.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import yaml

from sorogym.env import env_class, replace_config

from .trainers import TRAINERS


@dataclasses.dataclass(frozen=True)
class PPOConfig:
    """brax PPO (``brax.training.agents.ppo.train``) settings; one env step = one sample.

    Per training iteration brax collects ``batch_size * num_minibatches`` sequences of
    ``unroll_length`` steps from ``num_envs`` parallel envs, then makes
    ``num_updates_per_batch`` passes of ``num_minibatches`` gradient steps over them.
    """

    num_timesteps: int = 2_000_000
    num_envs: int = 256
    unroll_length: int = 25
    batch_size: int = 64
    num_minibatches: int = 8
    num_updates_per_batch: int = 4
    learning_rate: float = 3e-4
    entropy_cost: float = 1e-3
    discounting: float = 0.9
    gae_lambda: float = 0.95
    clipping_epsilon: float = 0.2
    reward_scaling: float = 1.0
    max_grad_norm: float | None = 1.0
    normalize_observations: bool = True
    policy_hidden_layer_sizes: tuple[int, ...] = (64, 64)
    value_hidden_layer_sizes: tuple[int, ...] = (64, 64)
    num_evals: int = 11  # progress points (evaluations, checkpoints) incl. the initial one
    num_eval_envs: int = 64
    deterministic_eval: bool = True
    max_devices_per_host: int | None = None  # None: every local accelerator (brax pmap)
    # warm start: a ppo/bc/dagger checkpoint (or run folder) whose normaliser, policy and
    # value start training (step count from 0; unlike --resume, which continues a run)
    init_from: str | None = None
    init_std: float | None = None  # with init_from: reset the policy's pre-tanh std to this


@dataclasses.dataclass(frozen=True)
class SB3PPOConfig:
    """Stable-Baselines3 PPO on the batched env through :class:`sorogym.env.SB3VecEnv`."""

    total_timesteps: int = 200_000
    n_envs: int = 16
    n_steps: int = 800
    batch_size: int = 428
    n_epochs: int = 10
    learning_rate: float = 3e-4
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.0
    net_arch: tuple[int, ...] = (64, 64)
    normalize: bool = True  # VecNormalize: running observation and return normalisation
    num_checkpoints: int = 5  # checkpoints (and progress points) over the run


@dataclasses.dataclass(frozen=True)
class DistillConfig:
    """Behaviour cloning / DAgger from an env expert (:mod:`sorogym.agents.distill`); the
    student's networks are the ``ppo`` section's, so it warm-starts PPO."""

    expert: str | None = None  # expert kind (env.expert_kinds); None: the env's default
    rounds: int = 10  # data-collection rounds of num_envs full episodes each
    num_envs: int = 128
    beta_decay: float = 0.0  # dagger: P(expert acts) in round i >= 1 is beta_decay ** i
    updates_per_round: int = 4000  # Adam steps after each round
    batch_size: int = 512
    learning_rate: float = 1e-3
    action_clip: float = 0.995  # expert actions clipped to +-this for the tanh likelihood
    value_weight: float = 1.0  # weight of the return-to-go regression of the value MLP


@dataclasses.dataclass(frozen=True)
class EvalConfig:
    num_episodes: int = 128
    deterministic: bool = True


@dataclasses.dataclass(frozen=True)
class LoggingConfig:
    wandb: str = "offline"  # offline | online | disabled
    project: str = "sorogym"
    entity: str | None = None
    video: bool = True
    video_episodes: int = 1
    video_format: str = "mp4"  # mp4 (falls back to gif without imageio-ffmpeg) | gif
    renderer: str = "auto"  # auto (MuJoCo where an OpenGL context exists) | mujoco | matplotlib
    output_root: str = "results/runs"


@dataclasses.dataclass(frozen=True)
class RunConfig:
    env: str = "TendonTracking-v0"
    env_overrides: dict = dataclasses.field(default_factory=dict)
    algo: str = "ppo"
    seed: int = 0
    ppo: PPOConfig = PPOConfig()
    sb3_ppo: SB3PPOConfig = SB3PPOConfig()
    distill: DistillConfig = DistillConfig()
    eval: EvalConfig = EvalConfig()
    logging: LoggingConfig = LoggingConfig()


# -- parsing and validation -----------------------------------------------------------


def parse_overrides(items) -> dict:
    """``["a.b=1", "c=[1, 2]"]`` -> ``{"a.b": 1, "c": [1, 2]}`` (values parsed as YAML)."""
    out = {}
    for item in items or ():
        if "=" not in item:
            raise ValueError(f"override {item!r}: expected key=value")
        key, text = item.split("=", 1)
        key = key.strip()
        if not key:
            raise ValueError(f"override {item!r}: empty key")
        out[key] = yaml.safe_load(text)
    return out


def build_config(data: dict | None = None, overrides: dict | None = None) -> RunConfig:
    """A validated :class:`RunConfig` from a mapping plus dotted overrides (both through
    :func:`sorogym.env.replace_config`).

    ``env.<field>`` overrides go to ``env_overrides`` (``env=<name>`` picks the env). The env
    name is checked against the registry and the env overrides against the env's Config
    (by constructing the env config, not the model).
    """
    config = replace_config(RunConfig(), data)
    env_overrides, rest = dict(config.env_overrides), {}
    for key, value in (overrides or {}).items():
        prefix = next((p for p in ("env.", "env_overrides.") if key.startswith(p)), None)
        if prefix:
            env_overrides[key[len(prefix) :]] = value
        else:
            rest[key] = value
    config = replace_config(config, {**rest, "env_overrides": env_overrides})
    validate(config)
    return config


def validate(config: RunConfig) -> None:
    """Raise ``ValueError`` naming the field of ``config`` that cannot run."""
    trainer = TRAINERS.get(config.algo)
    if trainer is None:
        raise ValueError(f"algo: unknown {config.algo!r}; use one of {tuple(TRAINERS)}")
    try:
        env_cls = env_class(config.env)
    except ValueError as err:
        raise ValueError(f"env: {err}") from None
    replace_config(env_cls.default_config(), config.env_overrides, prefix="env.")
    if config.logging.wandb not in ("offline", "online", "disabled"):
        raise ValueError(f"logging.wandb: use offline, online or disabled, got {config.logging.wandb!r}")
    if config.logging.video_format not in ("mp4", "gif"):
        raise ValueError(f"logging.video_format: use mp4 or gif, got {config.logging.video_format!r}")
    if config.logging.renderer not in ("auto", "mujoco", "matplotlib"):
        raise ValueError(f"logging.renderer: use auto, mujoco or matplotlib, got {config.logging.renderer!r}")
    if config.eval.num_episodes < 1:
        raise ValueError("eval.num_episodes: must be >= 1")
    trainer.check(config, env_cls)


def load_config(path: str | Path | None, overrides=None) -> RunConfig:
    """Read a YAML run config (or the defaults when ``path`` is None) and apply overrides
    (a dict of dotted keys or a list of ``key=value`` strings)."""
    data = {}
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"config file not found: {path}")
        data = yaml.safe_load(path.read_text()) or {}
        if not isinstance(data, dict):
            raise ValueError(f"{path}: expected a mapping at the top level")
    if isinstance(overrides, (list, tuple)):
        overrides = parse_overrides(overrides)
    return build_config(data, overrides)
