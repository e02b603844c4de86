"""Layer 7: the agents package's import hygiene — each module imports alone in a fresh
interpreter (and loads no torch: Stable-Baselines3 loads on use only), and the modules
import one another one way only, counting imports inside functions."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from _isolated import REPO_ROOT

AGENTS = Path(REPO_ROOT) / "agents"
PACKAGE = "sorogym.agents"
MODULES = sorted(p.stem for p in AGENTS.glob("*.py"))


@pytest.mark.parametrize("module", MODULES)
def test_each_module_imports_alone(module):
    name = PACKAGE if module == "__init__" else f"{PACKAGE}.{module}"
    code = (
        f"import importlib, sys; importlib.import_module({name!r}); assert 'torch' not in sys.modules, 'torch loaded'"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]


def import_graph(folder: Path = AGENTS) -> dict[str, set[str]]:
    """``module -> the package's modules it imports`` (``__init__`` for names of the package
    itself), from every import statement of each file, function bodies included."""
    modules = {p.stem for p in folder.glob("*.py")}
    parts = PACKAGE.split(".")
    graph = {}
    for module in modules:
        edges = set()
        for node in ast.walk(ast.parse((folder / f"{module}.py").read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = ".".join(parts[: len(parts) + 1 - node.level]) if node.level else ""
                base = ".".join(filter(None, (base, node.module)))
                # ``from package import name``: the name may be one of its modules
                targets = [f"{base}.{a.name}" for a in node.names] if base == PACKAGE else [base]
            else:
                continue
            for target in targets:
                if target.startswith(PACKAGE + "."):
                    head = target[len(PACKAGE) + 1 :].split(".")[0]
                    edges.add(head if head in modules else "__init__")
        graph[module] = edges - {module}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` as ``[a, b, ..., a]``, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node):
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node] = 2
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_agents_import_graph_is_acyclic():
    graph = import_graph()
    assert {"run", "sweep", "plan", "config"} <= graph["cli"]  # the parser sees them all
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_cycle_finder_sees_function_level_imports(tmp_path):
    (tmp_path / "a.py").write_text("from . import b\n")
    (tmp_path / "b.py").write_text("def f():\n    from sorogym.agents.a import x\n")
    (tmp_path / "c.py").write_text("from .a import y\n")
    graph = import_graph(tmp_path)
    assert graph == {"a": {"b"}, "b": {"a"}, "c": {"a"}}
    assert find_cycle(graph) == ["a", "b", "a"]
