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
``env.<field>=value`` for env fields; values are parsed as YAML scalars/lists. Unknown keys,
unknown envs and env fields that the env's Config lacks are errors naming the key.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from pathlib import Path
from typing import Any

ALGOS = ("ppo", "sb3_ppo", "bc", "dagger")
#: algorithms configured by the ``distill`` section (:mod:`sorogym.agents.distill`)
DISTILL_ALGOS = ("bc", "dagger")


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

    def algo_config(self):
        return self.distill if self.algo in DISTILL_ALGOS else getattr(self, self.algo)


# -- parsing and validation -----------------------------------------------------------


def _coerce(value: Any, annotation: Any, key: str) -> Any:
    """Check/convert a YAML value against a dataclass field annotation."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _coerce(value, inner[0], key)
    if dataclasses.is_dataclass(annotation):
        if not isinstance(value, dict):
            raise ValueError(f"{key}: expected a mapping, got {value!r}")
        return _from_dict(annotation, value, key + ".")
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"{key}: expected a list, got {value!r}")
        return tuple(_coerce(v, args[0], key) for v in value)
    if annotation is dict or origin is dict:
        if not isinstance(value, dict):
            raise ValueError(f"{key}: expected a mapping, got {value!r}")
        return dict(value)
    if annotation is bool:
        if not isinstance(value, bool):
            raise ValueError(f"{key}: expected true/false, got {value!r}")
        return value
    if annotation is int:
        if isinstance(value, bool) or not (isinstance(value, int) or (isinstance(value, float) and value.is_integer())):
            raise ValueError(f"{key}: expected an integer, got {value!r}")
        return int(value)
    if annotation is float:
        if isinstance(value, str):  # YAML 1.1 reads "1e-3" (no dot) as a string
            try:
                return float(value)
            except ValueError:
                raise ValueError(f"{key}: expected a number, got {value!r}") from None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{key}: expected a number, got {value!r}")
        return float(value)
    if annotation is str:
        if not isinstance(value, str):
            raise ValueError(f"{key}: expected a string, got {value!r}")
        return value
    return value


def _from_dict(cls, data: dict, prefix: str = ""):
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ValueError(f"unknown config key(s) {', '.join(prefix + k for k in unknown)}; "
                         f"valid keys under {prefix or 'the top level'}: {sorted(names)}")
    kwargs = {k: _coerce(v, hints[k], prefix + k) for k, v in data.items()}
    return cls(**kwargs)


def _to_dict(obj) -> Any:
    if dataclasses.is_dataclass(obj):
        return {f.name: _to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, tuple):
        return [_to_dict(v) for v in obj]
    if isinstance(obj, dict):
        return {k: _to_dict(v) for k, v in obj.items()}
    return obj


def config_to_dict(config: RunConfig) -> dict:
    """Plain nested dict (YAML/JSON-ready) of a run config."""
    return _to_dict(config)


def parse_overrides(items) -> dict:
    """``["a.b=1", "c=[1, 2]"]`` -> ``{"a.b": 1, "c": [1, 2]}`` (values parsed as YAML)."""
    import yaml

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


def _set_dotted(tree: dict, key: str, value: Any) -> None:
    parts = key.split(".")
    node = tree
    for p in parts[:-1]:
        node = node.setdefault(p, {})
        if not isinstance(node, dict):
            raise ValueError(f"override {key!r}: {p!r} is not a section")
    node[parts[-1]] = value


def build_config(data: dict | None = None, overrides: dict | None = None) -> RunConfig:
    """A validated :class:`RunConfig` from a mapping plus dotted overrides.

    ``env.<field>`` overrides go to ``env_overrides`` (``env=<name>`` picks the env). The env
    name is checked against the registry and the env overrides against the env's Config
    (by constructing the env config, not the model).
    """
    data = dict(data or {})
    data["env_overrides"] = dict(data.get("env_overrides") or {})
    for key, value in (overrides or {}).items():
        if key.startswith("env."):
            data["env_overrides"][key[4:]] = value
        elif key.startswith("env_overrides."):
            data["env_overrides"][key[len("env_overrides."):]] = value
        else:
            _set_dotted(data, key, value)
    config = _from_dict(RunConfig, data)
    validate(config)
    return config


def validate(config: RunConfig) -> None:
    from sorogym.env import canonical_name, registry, replace_config
    from sorogym.env._registry import env_class

    if config.algo not in ALGOS:
        raise ValueError(f"algo: unknown {config.algo!r}; use one of {ALGOS}")
    name = canonical_name(config.env)
    if name not in registry():
        raise ValueError(f"env: unknown environment {config.env!r}; registered: {registry()}")
    replace_config(env_class(name).default_config(), config.env_overrides)
    if config.logging.wandb not in ("offline", "online", "disabled"):
        raise ValueError(f"logging.wandb: use offline, online or disabled, got {config.logging.wandb!r}")
    if config.eval.num_episodes < 1:
        raise ValueError("eval.num_episodes: must be >= 1")
    if config.algo == "ppo":
        p = config.ppo
        if (p.batch_size * p.num_minibatches) % p.num_envs:
            raise ValueError("ppo: batch_size * num_minibatches must be a multiple of num_envs "
                             f"({p.batch_size} * {p.num_minibatches} vs {p.num_envs})")
        if p.num_timesteps < 0 or p.num_envs < 1 or p.num_evals < 1:
            raise ValueError("ppo: num_timesteps >= 0, num_envs >= 1 and num_evals >= 1 required")
        if p.init_std is not None and p.init_from is None:
            raise ValueError("ppo.init_std: only used with ppo.init_from (a checkpoint to warm-start from)")
    if config.algo in DISTILL_ALGOS:
        d = config.distill
        kinds = env_class(name).expert_kinds
        if not kinds:
            raise ValueError(f"algo={config.algo}: {name} has no expert to distil")
        if d.expert is not None and d.expert not in kinds:
            raise ValueError(f"distill.expert: {name} has experts {kinds}, got {d.expert!r}")
        if min(d.rounds, d.num_envs, d.updates_per_round, d.batch_size) < 1:
            raise ValueError("distill: rounds, num_envs, updates_per_round and batch_size must be >= 1")
        if not 0.0 <= d.beta_decay <= 1.0:
            raise ValueError(f"distill.beta_decay: must lie in [0, 1], got {d.beta_decay}")
        if not 0.0 < d.action_clip < 1.0:
            raise ValueError(f"distill.action_clip: must lie in (0, 1), got {d.action_clip}")


def load_config(path: str | Path | None, overrides=None) -> RunConfig:
    """Read a YAML run config (or the defaults when ``path`` is None) and apply overrides
    (a dict of dotted keys or a list of ``key=value`` strings)."""
    import yaml

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
