"""Test-wide numerics: float64 and standard dtype promotion, set once for the test session.

XLA's CPU compiler is run with a single code-generation thread: with parallel codegen,
long test sessions (hundreds of compilations) crashed inside XLA compilation a few times on
jaxlib 0.10.2. Must be set before JAX initialises its backend.
"""

import os

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_parallel_codegen_split_count=1").strip()

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_numpy_dtype_promotion", "standard")


import sys  # noqa: E402

import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _torch_stays_out_of_the_test_process():
    """torch must not load in a pytest worker (see ``tests/_isolated.py``)."""
    yield
    assert "torch" not in sys.modules, "this test loaded torch in the pytest process; run its body with run_isolated"
