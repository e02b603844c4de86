"""Compatibility stand-in between the pinned brax and jax.

brax 0.14.2's trainers call ``jax.device_put_replicated``, which jax 0.10 removed
(brax issue #671). :func:`install_brax_compat` provides it (replicas stacked along a new
leading axis, sharded over the given devices) only while jax lacks it; it is called by the
training entry points right before they start brax, never at import.
``tests/test_agents_compat.py`` fails once jax (or brax) no longer needs it.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


def _device_put_replicated(x, devices):
    devices = list(devices)
    mesh = jax.sharding.Mesh(np.array(devices), ("replica",))
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("replica"))

    def replicate(a):
        a = jnp.asarray(a)
        return jax.device_put(jnp.broadcast_to(a, (len(devices),) + a.shape), sharding)

    return jax.tree.map(replicate, x)


def brax_needs_compat() -> bool:
    """True while the installed jax lacks the function brax's trainers call."""
    return not hasattr(jax, "device_put_replicated")


def install_brax_compat() -> bool:
    """Install the stand-in if needed; returns whether it was installed."""
    if brax_needs_compat():
        jax.device_put_replicated = _device_put_replicated
        return True
    return False
