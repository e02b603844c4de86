"""A missing oracle package fails the run where oracles are required (as in ``.ci/run``)
and skips its comparisons, said in the summary, where they are not (tests/_oracles.py)."""

import os
import subprocess
import sys

from _isolated import REPO_ROOT

PROBE = "tests/test_params.py::test_per_strain_damping_matches_soromox_link_damping"


def _pytest(**env):
    full = {k: v for k, v in os.environ.items() if k != "SOROGYM_REQUIRE_ORACLES"}
    full.update(SOROGYM_TEST_HIDE_ORACLES="soromox", **env)
    cmd = [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", PROBE]
    return subprocess.run(cmd, cwd=REPO_ROOT, env=full, capture_output=True, text=True, timeout=300)


def test_a_missing_oracle_fails_the_run_where_required():
    out = _pytest(SOROGYM_REQUIRE_ORACLES="1")
    assert out.returncode == 4, out.stdout + out.stderr  # pytest's usage error: nothing ran
    assert "oracle packages not installed: soromox" in out.stdout + out.stderr


def test_a_missing_oracle_skips_and_says_so_elsewhere():
    out = _pytest()
    assert out.returncode == 0, out.stdout + out.stderr
    assert "1 skipped" in out.stdout and "oracle package soromox not installed" in out.stdout
    assert "oracle packages not installed: soromox; the comparisons against them were skipped" in out.stdout
