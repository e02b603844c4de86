"""MkDocs hooks of the documentation site (``hooks:`` in mkdocs.yml).

* Before the build, lay out ``build/docs-src/sorogym``: the package as installed, as links
  into the checkout (``sorogym/`` plus the folders that ``[tool.setuptools.package-dir]``
  maps into it, ``envs/`` and ``agents/``), so mkdocstrings finds every subpackage by
  static analysis, without importing anything.
* ``<!-- sorogym:env-reference -->`` in a page becomes the reference of every registered
  environment: its name, class, Gymnasium id, default timing, experts and class docstring,
  read from the registry (``sorogym.env.registry()``, ``sorogym.env.env_class(name)``) and
  the classes' default configs. No env is constructed (some build goal banks when they are).
* ``<!-- sorogym:suite -->`` becomes the leaderboard table of ``results/suite.md``
  (written by ``scripts/evaluate_suite.py``), without its title.
* Sphinx roles left in docstrings (``:class:`X```) render as plain code.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import re
import tomllib
from pathlib import Path

from mkdocs.plugins import event_priority

log = logging.getLogger("mkdocs.hooks.sorogym")

ENV_REFERENCE_MARKER = "<!-- sorogym:env-reference -->"
SUITE_MARKER = "<!-- sorogym:suite -->"
_ROLE_MD = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj|const):`(~?)([^`]+)`")
_ROLE_HTML = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj|const):<code>(~?)([^<]*)</code>")


def _role_target(tilde: str, target: str) -> str:
    return target.rsplit(".", 1)[-1] if tilde else target


# -- the package tree mkdocstrings reads --------------------------------------------------


def _link_installed_tree(root: Path) -> None:
    """Recreate ``root/build/docs-src/sorogym`` as links to the package's folders."""
    tree = root / "build" / "docs-src" / "sorogym"
    if tree.exists():
        for entry in tree.iterdir():
            entry.unlink()  # links only: never follows them
        tree.rmdir()
    tree.mkdir(parents=True)
    for child in sorted((root / "sorogym").iterdir()):
        if child.name != "__pycache__":
            (tree / child.name).symlink_to(child.resolve())
    with open(root / "pyproject.toml", "rb") as f:
        package_dirs = tomllib.load(f)["tool"]["setuptools"].get("package-dir", {})
    for package, folder in package_dirs.items():
        parent, _, name = package.rpartition(".")
        if parent != "sorogym":
            raise ValueError(f"pyproject.toml [tool.setuptools.package-dir]: {package!r} is not a sorogym subpackage")
        (tree / name).symlink_to((root / folder).resolve())


@event_priority(100)  # before mkdocstrings loads anything
def on_config(config):
    _link_installed_tree(Path(config.config_file_path).resolve().parent)
    return config


# -- the environment reference -------------------------------------------------------------


def _format_seconds(value: float) -> str:
    return f"{value:.4g} s"


def _env_section(name: str, cls: type) -> tuple[str, str]:
    """One summary-table row and one section of the environment reference."""
    doc = cls.__dict__.get("__doc__")
    if not doc or not doc.strip():
        log.warning("environment %s: %s has no class docstring (obs/act/reward/success)", name, cls.__qualname__)
        doc = ""
    doc = _ROLE_MD.sub(lambda m: f"`{_role_target(*m.groups())}`", inspect.cleandoc(doc))
    config = cls.default_config()
    control_dt, episode_s = float(config.control_dt), float(config.episode_length_s)
    steps = int(round(episode_s / control_dt))
    experts = tuple(getattr(cls, "expert_kinds", ()))
    expert_text = ", ".join(f"`{k}`" + (" (default)" if i == 0 else "") for i, k in enumerate(experts)) or "none"
    anchor = name.lower().replace(".", "")
    row = (
        f"| [`{name}`](#{anchor}) | {_format_seconds(control_dt)} ({1.0 / control_dt:.4g} Hz) | "
        f"{_format_seconds(episode_s)} ({steps} steps) | {config.num_substeps} x `{config.integrator}` | "
        f"{expert_text} |"
    )
    facts = [
        ("class", f"`{cls.__module__}.{cls.__qualname__}`"),
        ("Gymnasium id", f"`sorogym/{name}`"),
        (
            "control period",
            f"{_format_seconds(control_dt)} ({1.0 / control_dt:.4g} Hz), "
            f"{config.num_substeps} substeps of `{config.integrator}`",
        ),
        ("episode", f"{_format_seconds(episode_s)} = {steps} steps (time limit of the wrappers)"),
        ("experts", expert_text),
        (
            "domain randomisation (supported factors)",
            ", ".join(f"`{f}` x[{lo:g}, {hi:g}]" for f, (lo, hi) in cls.randomization_limits.items()),
        ),
    ]
    table = "\n".join(["| | |", "|---|---|"] + [f"| {k} | {v} |" for k, v in facts])
    section = f"## {name}\n\n{table}\n\n{doc}\n"
    return row, section


def env_reference() -> str:
    """Markdown reference of every registered environment (see the module docstring)."""
    registry = importlib.import_module("sorogym.env")
    importlib.import_module("sorogym.envs")  # the suite registers itself on import
    names = registry.registry()
    if not names:
        log.warning("the environment registry is empty after importing sorogym.envs")
    rows, sections = [], []
    for name in names:
        row, section = _env_section(name, registry.env_class(name))
        rows.append(row)
        sections.append(section)
    header = ["| env | control period | episode | substeps | experts |", "|---|---|---|---|---|"]
    return "\n".join(header + rows) + "\n\n" + "\n".join(sections)


def suite_table(root: Path) -> str:
    """``results/suite.md`` without its title line (the leaderboard)."""
    path = root / "results" / "suite.md"
    if not path.is_file():
        log.warning("results/suite.md is missing: run scripts/evaluate_suite.py")
        return "*(no leaderboard yet: run `scripts/evaluate_suite.py`)*"
    lines = path.read_text().splitlines()
    return "\n".join(lines[1:] if lines and lines[0].startswith("# ") else lines).strip() + "\n"


def on_page_markdown(markdown, page, config, files):
    if ENV_REFERENCE_MARKER in markdown:
        markdown = markdown.replace(ENV_REFERENCE_MARKER, env_reference())
    if SUITE_MARKER in markdown:
        markdown = markdown.replace(SUITE_MARKER, suite_table(Path(config.config_file_path).resolve().parent))
    return markdown


def on_page_content(html, page, config, files):
    return _ROLE_HTML.sub(lambda m: f"<code>{_role_target(*m.groups())}</code>", html)
