"""Project hygiene: ruff lint and format (configured in pyproject.toml), exact pins only in
constraints.txt, and CI running the README's test command verbatim."""

import re
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def _ruff(*args: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, f"ruff {' '.join(args)}:\n{result.stdout}{result.stderr}"


def test_ruff_check():
    _ruff("check", "--output-format", "concise", ".")


def test_ruff_format():
    _ruff("format", "--check", ".")


def _pyproject_requirements() -> list[Requirement]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        project = tomllib.load(f)["project"]
    specs = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        specs += extra
    return [Requirement(s) for s in specs if canonicalize_name(Requirement(s).name) != "sorogym"]


def _constraints() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, sep, version = line.partition("==")
            assert sep and version, f"constraints.txt: {line!r} is not an exact pin 'name==version'"
            pins[canonicalize_name(name)] = version
    return pins


def test_pyproject_has_ranges_and_constraints_pin_them():
    pins = _constraints()
    for req in _pyproject_requirements():
        assert not any(s.operator in ("==", "===") for s in req.specifier), (
            f"pyproject.toml: {req} is an exact pin; pins live in constraints.txt, ranges here"
        )
        name = canonicalize_name(req.name)
        assert name in pins, f"constraints.txt: no pin for {req.name} (named in pyproject.toml)"
        assert req.specifier.contains(pins[name], prereleases=True), (
            f"constraints.txt pins {req.name}=={pins[name]}, outside pyproject.toml's {req}"
        )


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    commands = re.findall(r"^python3 -m venv \.venv && .*$", readme, re.M)
    test_command = [c for c in commands if "pytest" in c]
    assert len(test_command) == 1, f"README.md: expected one test command, found {test_command}"
    assert test_command[0] in (ROOT / ".ci" / "run").read_text(), ".ci/run does not run the README's test command"


def test_every_subpackage_is_packaged():
    with open(ROOT / "pyproject.toml", "rb") as f:
        setuptools = tomllib.load(f)["tool"]["setuptools"]
    listed, package_dirs = set(setuptools["packages"]), setuptools.get("package-dir", {})
    roots = {"sorogym": ROOT / "sorogym", **{name: ROOT / folder for name, folder in package_dirs.items()}}
    found = set()
    for name, folder in roots.items():
        for init in folder.rglob("__init__.py"):
            relative = init.parent.relative_to(folder).parts
            found.add(".".join((name, *relative)))
    assert found <= listed, f"pyproject.toml [tool.setuptools] packages misses {sorted(found - listed)}"
