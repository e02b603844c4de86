"""Policy checkpoints: a folder per saved step with the parameters and what rebuilds them.

Layout of ``<run>/checkpoints/step_<000000123456>/``:

* ``params.msgpack``: flax-serialised ``(normalizer, policy, value)`` parameters of a brax
  PPO agent or a BC/DAgger student of the same shape (SB3 agents store ``sb3_model.zip``
  instead);
* ``meta.json``: ``step``, ``algo``, ``env``, ``env_overrides``, ``observation_size``,
  ``action_size`` and the network settings needed to rebuild the policy.

The format is ours (msgpack + JSON, no orbax), small enough to commit for small networks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

META = "meta.json"
PARAMS = "params.msgpack"
#: algorithms whose checkpoints hold brax PPO ``(normalizer, policy, value)`` parameters
PPO_FORMAT_ALGOS = ("ppo", "bc", "dagger")


def step_dir(root: str | Path, step: int) -> Path:
    return Path(root) / f"step_{int(step):012d}"


def latest(root: str | Path) -> Path | None:
    """The newest ``step_*`` folder under ``root`` (a run's ``checkpoints/``), or None."""
    root = Path(root)
    steps = sorted(p for p in root.glob("step_*") if (p / META).is_file())
    return steps[-1] if steps else None


def resolve(path: str | Path) -> Path:
    """Accept a checkpoint folder, a run's ``checkpoints/`` folder or a run folder."""
    path = Path(path)
    if (path / META).is_file():
        return path
    for root in (path, path / "checkpoints"):
        found = latest(root)
        if found is not None:
            return found
    raise FileNotFoundError(f"no checkpoint found at {path} (expected {META} in a step_* folder)")


def save_ppo(root: str | Path, step: int, params: Any, meta: dict) -> Path:
    """Write brax PPO ``params`` (``(normalizer, policy, value)``) and ``meta`` at ``step``."""
    import jax
    import numpy as np
    from flax import serialization

    out = step_dir(root, step)
    out.mkdir(parents=True, exist_ok=True)
    host = jax.tree.map(np.asarray, params)
    (out / PARAMS).write_bytes(serialization.msgpack_serialize(serialization.to_state_dict(host)))
    (out / META).write_text(json.dumps({**meta, "step": int(step)}, indent=2))
    return out


def load_meta(path: str | Path) -> dict:
    return json.loads((resolve(path) / META).read_text())


def ppo_networks_from_meta(meta: dict):
    """The brax PPO networks described by a checkpoint's ``meta``."""
    from brax.training.acme import running_statistics
    from brax.training.agents.ppo import networks as ppo_networks

    preprocess = running_statistics.normalize if meta["normalize_observations"] else (lambda x, y: x)
    return ppo_networks.make_ppo_networks(
        meta["observation_size"], meta["action_size"], preprocess_observations_fn=preprocess,
        policy_hidden_layer_sizes=tuple(meta["policy_hidden_layer_sizes"]),
        value_hidden_layer_sizes=tuple(meta["value_hidden_layer_sizes"]),
    )


def load_ppo(path: str | Path):
    """``(params, meta, networks)`` of a brax PPO checkpoint; ``params`` is the
    ``(normalizer, policy, value)`` tuple brax's ``make_inference_fn`` and
    ``ppo.train(restore_params=...)`` take."""
    import jax
    import jax.numpy as jnp
    from brax.training.acme import running_statistics, specs
    from flax import serialization

    ckpt = resolve(path)
    meta = json.loads((ckpt / META).read_text())
    if meta.get("algo") not in PPO_FORMAT_ALGOS:
        raise ValueError(f"{ckpt}: a {meta.get('algo')!r} checkpoint, not one in brax PPO's format "
                         f"({', '.join(PPO_FORMAT_ALGOS)})")
    nets = ppo_networks_from_meta(meta)
    key = jax.random.PRNGKey(0)
    template = (
        running_statistics.init_state(specs.Array((meta["observation_size"],), jnp.dtype("float32"))),
        nets.policy_network.init(key),
        nets.value_network.init(key),
    )
    state = serialization.msgpack_restore((ckpt / PARAMS).read_bytes())
    params = serialization.from_state_dict(template, state)
    params = jax.tree.map(jnp.asarray, params)
    return params, meta, nets
