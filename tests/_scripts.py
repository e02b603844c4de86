"""The command-line scripts of ``scripts/`` in the tests: :func:`load_script` executes one
as a module (for tests that call its functions), :func:`run_script` runs it as a user
would, in its own interpreter. Scripts are leaves, not a package: neither puts ``scripts/``
on ``sys.path``."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from _isolated import REPO_ROOT, run_child

SCRIPTS_DIR = Path(REPO_ROOT) / "scripts"


def _path(name: str) -> Path:
    path = SCRIPTS_DIR / f"{name}.py"
    if not path.is_file():
        raise FileNotFoundError(f"no script {path}")
    return path


def load_script(name: str):
    """The module ``scripts/<name>.py``, executed under the module name ``script_<name>``
    (so it shadows no library module; its ``main`` does not run)."""
    spec = importlib.util.spec_from_file_location(f"script_{name}", _path(name))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and flax modules look their module up
    spec.loader.exec_module(module)
    return module


def run_script(name: str, *args: str, timeout: float = 900.0) -> subprocess.CompletedProcess:
    """Run ``python scripts/<name>.py *args`` from the repository root (environment and JAX
    cache as :func:`_isolated.run_child`); fail the calling test with its output if it
    exits non-zero or times out."""
    return run_child([str(_path(name)), *args], f"scripts/{name}.py", timeout)
