"""Run a test body in a fresh Python interpreter.

Tests that drive Stable-Baselines3 load torch. torch and XLA each bring their own thread
pools and runtime libraries, and a long-lived pytest worker that has loaded both crashed
inside an XLA compilation. Bodies that need torch therefore run in a child interpreter of
their own, so no pytest worker ever imports torch.

The body is a module-level function of a test module, called with positional arguments
that survive ``repr`` (strings, numbers). The child inherits the environment (wandb
offline settings set by fixtures included) and runs from the repository root.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys

import pytest

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(TESTS_DIR)


def _child_environment() -> dict:
    """The parent's environment plus the persistent JAX compilation cache of
    ``tests/conftest.py`` (set there through ``jax.config``, which a child interpreter does
    not see): children, and the worker processes they spawn, reuse compiled code across
    runs like the pytest workers do. Numerics are the child's own (no x64)."""
    import jax

    env = dict(os.environ)
    cache = jax.config.jax_compilation_cache_dir
    if cache:
        env.setdefault("JAX_COMPILATION_CACHE_DIR", cache)
        env.setdefault(
            "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", str(jax.config.jax_persistent_cache_min_compile_time_secs)
        )
        env.setdefault(
            "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", str(jax.config.jax_persistent_cache_min_entry_size_bytes)
        )
        env.setdefault("JAX_COMPILATION_CACHE_MAX_SIZE", str(jax.config.jax_compilation_cache_max_size))
    return env


def run_child(
    args: list[str], what: str, timeout: float = 900.0, env: dict | None = None
) -> subprocess.CompletedProcess:
    """Run ``python -X faulthandler *args`` from the repository root with the child
    environment above (updated with ``env``); fail the calling test with its output
    (``what`` names it) if it exits non-zero, crashes or times out."""
    try:
        proc = subprocess.run(
            [sys.executable, "-X", "faulthandler", *args],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=_child_environment() | (env or {}),
        )
    except subprocess.TimeoutExpired as err:
        pytest.fail(f"{what} did not finish in {timeout:.0f} s\n{err.stdout or ''}\n{err.stderr or ''}")
    if proc.returncode != 0:
        pytest.fail(
            f"{what} failed (exit {proc.returncode})\n"
            f"--- stdout ---\n{proc.stdout[-6000:]}\n--- stderr ---\n{proc.stderr[-6000:]}"
        )
    return proc


def run_isolated(body, *args, timeout: float = 900.0) -> None:
    """Call ``body(*args)`` in a child interpreter; fail the calling test with the child's
    output if it raises, crashes or times out."""
    module = inspect.getmodule(body).__name__
    code = (
        f"import sys; sys.path.insert(0, {TESTS_DIR!r}); from {module} import {body.__name__} as body; body(*{args!r})"
    )
    run_child(["-c", code], f"{body.__name__} (in its own interpreter)", timeout)
