"""Project hygiene: ruff lint and format (configured in pyproject.toml), exact pins only in
constraints.txt (the GPU wheels' in constraints-cuda12.txt, agreeing with it), CI running the
README's test command verbatim, and every annotation in the package evaluating (jaxtyping
shapes are strings)."""

import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from _isolated import run_isolated
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


def _constraints(file: str = "constraints.txt") -> dict[str, str]:
    pins = {}
    for line in (ROOT / file).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, sep, version = line.partition("==")
            assert sep and version, f"{file}: {line!r} is not an exact pin 'name==version'"
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


GPU_INSTALL = 'pip install -c constraints.txt -c constraints-cuda12.txt -e ".[dev,cuda12]"'


def test_gpu_constraints_agree_with_the_cpu_pins():
    """constraints-cuda12.txt pins the CUDA wheels of the pinned jax: every pin it shares with
    constraints.txt is the same version, the plugin matches jax, torch stays on the CPU pin,
    and the one install command is the one the docs and gpu_check.sh give."""
    cpu, gpu = _constraints(), _constraints("constraints-cuda12.txt")
    shared = sorted(set(cpu) & set(gpu))
    assert {"jax", "jaxlib", "numpy"} <= set(shared)
    assert {n: (cpu[n], gpu[n]) for n in shared if cpu[n] != gpu[n]} == {}
    for plugin in ("jax-cuda12-plugin", "jax-cuda12-pjrt"):
        assert gpu.get(plugin) == cpu["jax"], f"constraints-cuda12.txt: {plugin} must match jax=={cpu['jax']}"
    assert "torch" not in gpu and not any(n.startswith("torch") for n in gpu)
    with open(ROOT / "pyproject.toml", "rb") as f:
        extras = tomllib.load(f)["project"]["optional-dependencies"]
    assert [canonicalize_name(Requirement(r).name) for r in extras["cuda12"]] == ["jax"]
    assert "cuda12" in Requirement(extras["cuda12"][0]).extras
    for doc in ("docs/getting-started.md", "scripts/gpu_check.sh"):
        assert GPU_INSTALL in (ROOT / doc).read_text(), f"{doc}: the GPU install command is missing"


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


def _package_modules() -> list[str]:
    names = []
    for package in ("sorogym", "sorogym.envs", "sorogym.agents"):
        path = importlib.import_module(package).__path__
        names += [package] + [m.name for m in pkgutil.walk_packages(path, package + ".")]
    return sorted(n for n in set(names) if not n.endswith("__main__"))


def unevaluable_annotations() -> tuple[list[str], int]:
    """Annotations of the package's functions, methods and class fields that fail to
    evaluate (modules use ``from __future__ import annotations``, so a bad one, such as
    jaxtyping's ``Float[Array, 3]`` for ``Float[Array, "3"]``, passes import silently and
    breaks ``typing.get_type_hints``, runtime type checkers and the API docs), and how many
    annotations were evaluated in all."""
    import typing

    bad, evaluated = [], 0
    for name in _package_modules():
        module = importlib.import_module(name)
        for obj in vars(module).values():
            if getattr(obj, "__module__", None) != name or not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            functions = [v for v in vars(obj).values() if inspect.isfunction(v)] if inspect.isclass(obj) else [obj]
            for function in functions:
                try:
                    evaluated += len(typing.get_type_hints(function))
                except Exception as err:
                    bad.append(f"{name}.{function.__qualname__}: {type(err).__name__}: {err}")
            fields = vars(obj).get("__annotations__", {}) if inspect.isclass(obj) else {}
            for field, annotation in fields.items():
                try:
                    if isinstance(annotation, str):
                        eval(annotation, vars(module), dict(vars(obj)))
                    evaluated += 1
                except Exception as err:
                    bad.append(f"{name}.{obj.__qualname__}.{field}: {type(err).__name__}: {err}")
    return bad, evaluated


# The package had 3,733 evaluated annotations in 127 modules when this floor was set; far fewer means the
# walk above stopped finding them (a module list or an import that silently came back empty).
MIN_ANNOTATIONS = 3000


def _check_annotations() -> None:
    bad, evaluated = unevaluable_annotations()
    assert not bad, "annotations that do not evaluate:\n" + "\n".join(bad)
    assert evaluated >= MIN_ANNOTATIONS, f"only {evaluated} annotations found; the module walk is broken"


def test_every_annotation_evaluates():
    # its own interpreter: importing every agents module loads torch (Stable-Baselines3)
    run_isolated(_check_annotations, timeout=600)
