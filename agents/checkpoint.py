"""Policy checkpoints: a folder per saved step with the parameters and what rebuilds them.

Layout of ``<run>/checkpoints/step_<000000123456>/``:

* ``params.msgpack``: flax-serialised ``(normalizer, policy, value)`` parameters of a brax
  PPO agent or a BC/DAgger student of the same shape (SB3 agents store ``sb3_model.zip``
  instead);
* ``meta.json``: ``step``, the entries of :func:`run_meta` and those the algorithm needs to
  rebuild its policy (:func:`sorogym.agents.networks.network_meta`).

The format is ours (msgpack + JSON, no orbax), small enough to commit for small networks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .networks import init_params, make_networks

META = "meta.json"
PARAMS = "params.msgpack"


def run_meta(algo: str, config, env) -> dict:
    """The ``meta.json`` entries every checkpoint has: ``algo``, ``env``, ``env_overrides``
    (of the run config ``config``), ``observation_size`` and ``action_size``."""
    return {
        "algo": algo,
        "env": env.name,
        "env_overrides": dict(config.env_overrides),
        "observation_size": int(env.observation_size),
        "action_size": int(env.action_size),
    }


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
    from flax import serialization

    out = step_dir(root, step)
    out.mkdir(parents=True, exist_ok=True)
    host = jax.tree.map(np.asarray, params)
    (out / PARAMS).write_bytes(serialization.msgpack_serialize(serialization.to_state_dict(host)))
    (out / META).write_text(json.dumps({**meta, "step": int(step)}, indent=2))
    return out


def load_meta(path: str | Path) -> dict:
    return json.loads((resolve(path) / META).read_text())


def load_ppo(path: str | Path):
    """``(params, meta, networks)`` of a checkpoint in brax PPO's format (PPO, BC, DAgger);
    ``params`` is the ``(normalizer, policy, value)`` tuple of :mod:`~sorogym.agents.networks`."""
    from flax import serialization

    ckpt = resolve(path)
    meta = json.loads((ckpt / META).read_text())
    if not (ckpt / PARAMS).is_file():
        raise ValueError(f"{ckpt}: a {meta.get('algo')!r} checkpoint without {PARAMS}, not one in brax PPO's format")
    nets = make_networks(meta)
    key = jax.random.PRNGKey(0)
    template = init_params(nets, meta["observation_size"], key, key)
    state = serialization.msgpack_restore((ckpt / PARAMS).read_bytes())
    params = serialization.from_state_dict(template, state)
    return jax.tree.map(jnp.asarray, params), meta, nets
