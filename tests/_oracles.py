"""The oracle packages (independent implementations the tests compare with): required where
``SOROGYM_REQUIRE_ORACLES`` is set (``.ci/run`` sets it), so a missing one fails the run
naming the package; elsewhere their comparisons skip, and the test summary says which
packages were missing.

An oracle test calls :func:`oracle` in its body (never at module level, where a missing
package would skip the module's other tests too)."""

from __future__ import annotations

import importlib
import importlib.util
import os

import pytest

#: module name -> distribution that installs it (all in the ``oracles`` extra)
ORACLE_PACKAGES = {"soromox": "soromox", "mujoco": "mujoco", "elastica": "pyelastica"}


def oracles_required() -> bool:
    return os.environ.get("SOROGYM_REQUIRE_ORACLES", "").strip().lower() not in ("", "0", "false", "no")


def _installed(module: str) -> bool:
    # SOROGYM_TEST_HIDE_ORACLES (comma-separated module names) makes installed packages count
    # as missing, so the tests can check what happens without them
    hidden = {m.strip() for m in os.environ.get("SOROGYM_TEST_HIDE_ORACLES", "").split(",") if m.strip()}
    return module not in hidden and importlib.util.find_spec(module) is not None


def missing_oracles() -> list[str]:
    """Distributions of the oracle packages that are not installed."""
    return [dist for module, dist in ORACLE_PACKAGES.items() if not _installed(module)]


def oracle(module: str):
    """The oracle package ``module``, imported; skips the calling test where it is missing
    (``pytest_configure`` has already stopped the run where oracles are required)."""
    if not _installed(module):
        pytest.skip(f"oracle package {ORACLE_PACKAGES.get(module, module)} not installed")
    return importlib.import_module(module)
