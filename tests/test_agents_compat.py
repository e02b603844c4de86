"""The brax/jax compatibility stand-in: needed now, correct, and flagged once obsolete."""

import jax
import jax.numpy as jnp
import numpy as np

from sorogym.agents import brax_needs_compat, install_brax_compat
from sorogym.agents._compat import _device_put_replicated


def test_stand_in_is_still_needed():
    # Fails once the pinned jax (or brax) no longer needs the stand-in: then delete
    # agents/_compat.py and its calls.
    assert brax_needs_compat() or jax.device_put_replicated is _device_put_replicated


def test_stand_in_replicates_pytrees_over_devices():
    tree = {"w": jnp.arange(3.0), "b": jnp.float32(2.0)}
    out = _device_put_replicated(tree, jax.local_devices()[:1])
    np.testing.assert_array_equal(np.asarray(out["w"]), np.arange(3.0)[None])
    assert out["b"].shape == (1,)
    assert install_brax_compat() in (True, False) and hasattr(jax, "device_put_replicated")
