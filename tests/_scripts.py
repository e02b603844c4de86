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


def run_script(name: str, *args: str, timeout: float = 900.0, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run ``python scripts/<name>.py *args`` from the repository root (environment, plus
    ``env``, and JAX cache as :func:`_isolated.run_child`); fail the calling test with its
    output if it exits non-zero or times out."""
    return run_child([str(_path(name)), *args], f"scripts/{name}.py", timeout, env)


#: The environment of smoke runs: equinox's runtime checks report through NaN instead of a
#: host callback, so the compiled programs of diffrax and optimistix solves can be stored in
#: the persistent compilation cache (programs with host callbacks never are); a failed check
#: still fails the run, as a non-finite result the smoke tests reject.
SMOKE_ENV = {"EQX_ON_ERROR": "nan"}


def run_smoke(name: str, *args: str, timeout: float = 900.0) -> subprocess.CompletedProcess:
    """Run ``scripts/<name>.py --smoke *args`` as :func:`run_script` does, in
    :data:`SMOKE_ENV`."""
    return run_script(name, "--smoke", *args, timeout=timeout, env=SMOKE_ENV)
