"""Test-wide numerics: float64 and standard dtype promotion, set once for the test session."""

import jax

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_numpy_dtype_promotion", "standard")
