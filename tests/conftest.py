"""Test-wide numerics: float64, strict dtype promotion, a persistent compilation cache."""

import os

import jax

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_numpy_dtype_promotion", "standard")
_cache = os.environ.get("JAX_COMPILATION_CACHE_DIR", os.path.join(os.path.dirname(__file__), "..", ".jax_cache"))
jax.config.update("jax_compilation_cache_dir", os.path.abspath(_cache))
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)
