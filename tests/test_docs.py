"""The documentation: the MkDocs site builds without a warning, and the README's examples run.

``mkdocs build --strict`` fails on any warning: a broken link or anchor, a page missing from
the nav, an API reference that does not resolve, an env without a class docstring. It
needs no network.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def test_mkdocs_build_strict(tmp_path):
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", JAX_PLATFORMS="cpu")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    log = result.stdout + result.stderr
    warnings = [line for line in log.splitlines() if line.startswith(("WARNING", "ERROR"))]
    assert result.returncode == 0 and not warnings, f"mkdocs build --strict failed:\n{log[-6000:]}"
    assert (tmp_path / "site" / "environments" / "index.html").exists()


def _python_block_after(heading: str, text: str) -> str:
    section = text.split(heading, 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, f"no python block after {heading!r}"
    return match.group(1)


def test_readme_first_simulation_runs():
    code = _python_block_after("## A first simulation", (ROOT / "README.md").read_text())
    assert "t1=1.0" in code
    code = code.replace("t1=1.0", "t1=0.02")  # the same calls on a shorter horizon
    namespace: dict = {}
    exec(compile(code, "README.md: A first simulation", "exec"), namespace)
    robot, traj = namespace["robot"], namespace["traj"]
    assert namespace["A"].shape == (robot.num_dofs, 2)
    assert np.all(np.isfinite(np.asarray(traj.ys))) and traj.ys.shape[1] == 2 * robot.num_dofs


def test_models_page_tree_example_runs():
    code = _python_block_after("## Trees and floating bases", (ROOT / "docs" / "models.md").read_text())
    namespace: dict = {}
    exec(compile(code, "docs/models.md: Trees and floating bases", "exec"), namespace)
    star, q = namespace["star"], namespace["q"]
    assert (star.num_positions, star.num_dofs, star.num_actuators) == (7 + 5 * 4, 6 + 5 * 4, 5 * 4)
    assert len(star.structure.groups) == 2  # the hub, then the five arms together
    import jax

    M = np.asarray(jax.jit(lambda m, q: m.inertia_matrix(q))(star, q))  # compiled: eager takes minutes
    assert np.all(np.linalg.eigvalsh(M) > 0)
