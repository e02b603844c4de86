"""Scripts are leaves: every ``scripts/*.py`` imports only public library names (no module
or name of sorogym that starts with ``_``), never another script, and leaves ``sys.path``
alone. Checked on the source with :mod:`ast`, so no script is run; the library names the
scripts import are then looked up, so a rename in the library cannot silently break one."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest
from _isolated import run_isolated

SCRIPTS = sorted((Path(__file__).resolve().parents[1] / "scripts").glob("*.py"))


def _private(dotted: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in dotted.split("."))


def violations(source: str, script_names: set[str]) -> list[str]:
    """What keeps ``source`` from being a leaf, one line per offence."""
    found, sorogym_names = [], set()
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                if top == "sorogym":
                    sorogym_names.add(alias.asname or top)
                    if _private(alias.name):
                        found.append(f"line {node.lineno}: imports the private module {alias.name}")
                elif top in script_names or _private(top):
                    found.append(f"line {node.lineno}: imports the script or private module {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            top = module.split(".")[0]
            if node.level:
                found.append(f"line {node.lineno}: relative import from {'.' * node.level}{module}")
            elif top == "sorogym":
                if _private(module):
                    found.append(f"line {node.lineno}: imports from the private module {module}")
                for alias in node.names:
                    sorogym_names.add(alias.asname or alias.name)
                    if _private(alias.name):
                        found.append(f"line {node.lineno}: imports the private name {module}.{alias.name}")
            elif top in script_names or _private(top):
                found.append(f"line {node.lineno}: imports from the script or private module {module}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "path" and getattr(node.value, "id", None) == "sys":
            found.append(f"line {node.lineno}: touches sys.path")
        elif isinstance(node, ast.Attribute) and _private(node.attr):
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in sorogym_names:
                found.append(f"line {node.lineno}: reaches the private attribute {node.attr} of sorogym")
    return found


def test_the_check_finds_every_kind_of_offence():
    bad = (
        "import sys\nsys.path.insert(0, 'scripts')\nimport demo\nfrom _helpers import x\n"
        "from sorogym.env._accuracy import integrator_accuracy\nfrom sorogym.env import _private_name\n"
        "import sorogym as sg\nsg.envs._common.tip_axis\nfrom . import sibling\n"
    )
    assert len(violations(bad, {"demo"})) == 7
    good = "import sys\nimport sorogym as sg\nfrom sorogym.robots import umarm\nsg.__version__\nsys.exit(0)\n"
    assert violations(good, {"demo"}) == []


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_script_is_a_leaf(script):
    found = violations(script.read_text(), {p.stem for p in SCRIPTS})
    assert not found, f"{script.name}:\n" + "\n".join(found)


def library_imports(source: str) -> set[tuple[str, str | None]]:
    """``(module, name)`` of every ``from sorogym... import name`` in ``source`` and
    ``(module, None)`` of every ``import sorogym...``."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {(a.name, None) for a in node.names if a.name.split(".")[0] == "sorogym"}
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "sorogym":
            found |= {(node.module, a.name) for a in node.names}
    return found


def _check_library_names() -> None:
    """Import every sorogym module the scripts import and look up each imported name."""
    missing = []
    for script in SCRIPTS:
        for module, name in sorted(library_imports(script.read_text()), key=str):
            where = f"{script.name}: {module}" + (f".{name}" if name else "")
            try:
                mod = importlib.import_module(module)
                if name is not None and not hasattr(mod, name):
                    importlib.import_module(f"{module}.{name}")
            except ModuleNotFoundError as err:
                if (err.name or "").split(".")[0] == "sorogym":  # not an optional dependency
                    missing.append(f"{where} ({err})")
            except ImportError as err:
                missing.append(f"{where} ({err})")
    assert not missing, "the scripts import names the library does not have:\n" + "\n".join(missing)


def test_the_library_names_the_scripts_import_exist():
    run_isolated(_check_library_names)  # sorogym.agents.sb3 loads torch
