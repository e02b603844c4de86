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
