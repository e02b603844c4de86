"""Run metadata shared by the benchmark scripts: date, git state, package versions, CPU."""

from __future__ import annotations

import datetime
import importlib.metadata
import os
import platform
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def package_version(pkg: str) -> str | None:
    try:
        return importlib.metadata.version(pkg)
    except importlib.metadata.PackageNotFoundError:
        return None


def cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo") as f:
            return next(x.split(":", 1)[1].strip() for x in f if x.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or None


def git_state() -> tuple[str | None, bool | None]:
    """``(revision, has uncommitted changes to tracked files)``."""
    try:
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip()
        return rev or None, bool(dirty)
    except OSError:
        return None, None


def run_metadata(quick: bool, packages, notes, **extra) -> dict:
    rev, dirty = git_state()
    info = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "git_revision": rev, "git_dirty": dirty, "quick": quick,
        "versions": {p: package_version(p) for p in packages},
        "cpu": {"model": cpu_model(), "machine": platform.machine(), "platform": platform.platform(),
                "cpu_count": os.cpu_count(), "python": platform.python_version()},
        "loadavg_start": list(os.getloadavg()), "notes": notes,
    }
    info.update(extra)
    return info


def comparison_parser(doc: str, default_out: Path):
    """Argument parser of the comparison scripts: ``--quick`` (small sizes, for the tests)
    and ``--out`` (the results folder); the description is the docstring's first paragraph."""
    import argparse

    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (for the tests)")
    ap.add_argument("--out", type=Path, default=default_out)
    return ap


def write_report(out: Path, stem: str, quick: bool, report: dict, markdown) -> str:
    """Write ``<stem>[_quick].json`` and the ``markdown(report)`` table ``<stem>[_quick].md``
    into ``out``, print the table and return it."""
    import json

    out.mkdir(parents=True, exist_ok=True)
    stem = f"{stem}_quick" if quick else stem
    (out / f"{stem}.json").write_text(json.dumps(report, indent=2))
    md = markdown(report)
    (out / f"{stem}.md").write_text(md)
    print(md)
    return md
