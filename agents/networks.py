"""The agent both brax PPO and distillation train: an observation normaliser, a tanh-Gaussian
policy MLP and a value MLP (``brax.training.agents.ppo.networks``).

Parameters are the tuple ``(normalizer, policy, value)`` that brax's ``make_inference_fn``
and ``ppo.train(restore_params=...)`` take. A checkpoint's ``meta.json`` holds what rebuilds
the networks: ``observation_size`` and ``action_size`` (:func:`~sorogym.agents.checkpoint.run_meta`)
and ``normalize_observations``, ``policy_hidden_layer_sizes`` and ``value_hidden_layer_sizes``
(:func:`network_meta`).

**Policy.** The policy MLP's output ``(loc, s)`` (each ``(act,)``) parametrises
``a = tanh(x)``, ``x ~ N(loc, diag(softplus(s) + MIN_STD)^2)``: brax's
``NormalTanhDistribution``, written as a distrax distribution by
:func:`student_distribution`. Deterministic actions are the mode ``tanh(loc)``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

#: brax's ``NormalTanhDistribution`` default minimum standard deviation of ``x``
MIN_STD = 0.001


def network_meta(settings) -> dict:
    """The checkpoint meta entries of the networks a run config's ``ppo`` section describes."""
    return {
        "normalize_observations": bool(settings.normalize_observations),
        "policy_hidden_layer_sizes": list(settings.policy_hidden_layer_sizes),
        "value_hidden_layer_sizes": list(settings.value_hidden_layer_sizes),
    }


def network_factory(meta: dict) -> Callable:
    """brax's ``network_factory`` ``(observation_size, action_size,
    preprocess_observations_fn) -> PPONetworks`` with the hidden layers of ``meta``."""
    from brax.training.agents.ppo import networks as ppo_networks

    return functools.partial(
        ppo_networks.make_ppo_networks,
        policy_hidden_layer_sizes=tuple(meta["policy_hidden_layer_sizes"]),
        value_hidden_layer_sizes=tuple(meta["value_hidden_layer_sizes"]),
    )


def make_networks(meta: dict):
    """The brax ``PPONetworks`` a checkpoint's ``meta`` describes."""
    from brax.training.acme import running_statistics

    preprocess = running_statistics.normalize if meta["normalize_observations"] else (lambda x, y: x)
    return network_factory(meta)(meta["observation_size"], meta["action_size"], preprocess_observations_fn=preprocess)


def empty_normalizer(observation_size: int):
    """Running observation statistics of no data (the identity normalisation)."""
    from brax.training.acme import running_statistics, specs

    return running_statistics.init_state(specs.Array((observation_size,), jnp.dtype("float32")))


def init_params(networks, observation_size: int, policy_key, value_key) -> tuple:
    """Fresh ``(normalizer, policy, value)`` parameters: an empty normaliser and the two MLPs
    initialised from their keys."""
    return (
        empty_normalizer(observation_size),
        networks.policy_network.init(policy_key),
        networks.value_network.init(value_key),
    )


def ppo_policy(params, networks, deterministic: bool = True) -> Callable:
    """A batched JAX policy ``(obs (B, o), key) -> (actions (B, a), extras)`` from the
    parameters ``(normalizer, policy, value)`` of ``networks``."""
    from brax.training.agents.ppo import networks as ppo_networks

    return ppo_networks.make_inference_fn(networks)(params, deterministic=deterministic)


def student_distribution(logits, min_std: float = MIN_STD):
    """The action distribution for policy-network outputs ``logits (..., 2 act)``: a distrax
    ``Transformed(MultivariateNormalDiag(loc, softplus(s) + min_std), Tanh)`` over actions in
    (-1, 1), the distribution brax's PPO samples from."""
    import distrax

    loc, raw_scale = jnp.split(logits, 2, axis=-1)
    gaussian = distrax.MultivariateNormalDiag(loc, jax.nn.softplus(raw_scale) + min_std)
    return distrax.Transformed(gaussian, distrax.Block(distrax.Tanh(), ndims=1))


def set_policy_std(policy_params, std: float, min_std: float = MIN_STD):
    """Policy parameters whose pre-tanh standard deviation is ``std`` in every state: the
    scale half of the output layer gets zero weights and the bias ``softplus^-1(std -
    min_std)``; the mean half is unchanged. Used to restore exploration when PPO starts
    from a distilled policy (whose likelihood training shrinks the std)."""
    if not std > min_std:
        raise ValueError(f"init_std: must exceed the minimum std {min_std}, got {std}")
    layers = policy_params["params"]
    last = max(layers, key=lambda name: int(name.rsplit("_", 1)[-1]))
    kernel, bias = layers[last]["kernel"], layers[last]["bias"]
    half = bias.shape[-1] // 2
    raw = float(np.log(np.expm1(std - min_std)))  # softplus^-1
    new_last = {"kernel": kernel.at[:, half:].set(0.0), "bias": bias.at[half:].set(raw)}
    return {**policy_params, "params": {**layers, last: new_last}}
