"""sorogym's access to brax: the quiet import of ``brax.envs`` and the one piece of jax that
brax's trainers still need.

brax 0.14.2's trainers (``brax.training.agents.ppo.train``, ``sac.train``, ...) call
``jax.device_put_replicated``, which jax deprecated in 0.8.1 and removed in 0.10 (brax issue
#671); no brax release calls the replacement yet, and the rest of the pinned stack (soromox,
lineax, flax) needs jax >= 0.10, so no pin of the two works together.
:func:`install_brax_compat` restores that one public function with its documented
behaviour (the value broadcast along a new leading axis, one slice on each given device)
only while jax lacks it. Every env constructor calls it, so a brax user's own
``ppo.train(environment=sorogym.make(...))`` runs unchanged; it is never called at import.
``tests/test_brax_trainers.py`` fails once jax (or brax) no longer needs it.
"""

from __future__ import annotations

import contextlib
import io

import jax
import jax.numpy as jnp
import numpy as np


def import_brax_envs():
    """``brax.envs``, imported with its optional-backend notices silenced."""
    with contextlib.redirect_stdout(io.StringIO()):
        import brax.envs as brax_envs
    return brax_envs


def device_put_replicated(x, devices):
    """``x`` (a pytree of arrays) replicated on ``devices``: every leaf of shape ``S``
    becomes an array of shape ``(len(devices),) + S`` sharded one slice per device."""
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
    """Restore ``jax.device_put_replicated`` if jax lacks it (idempotent); returns whether
    it was installed by this call."""
    if brax_needs_compat():
        jax.device_put_replicated = device_put_replicated
        return True
    return False
