"""Where a result came from, and the report files that carry it.

Every committed benchmark or reproduction result records when it was produced, from which
code (the git revision and whether tracked files had uncommitted changes), with which
package versions and on which machine (:func:`run_metadata`). Report scripts take
``--quick`` and ``--out`` (:func:`report_parser`) and write ``<stem>[_quick].json`` with a
Markdown table next to it (:func:`write_report`).

The git state is read from the checkout that holds this package's source (or ``cwd``);
outside a checkout the revision is None.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path

_SOURCE_DIR = Path(__file__).resolve().parent


def _git(args: list[str], cwd) -> str:
    """Stripped stdout of ``git <args>`` run in ``cwd`` (default: this package's source)."""
    return subprocess.run(
        ["git", *args], cwd=cwd or _SOURCE_DIR, capture_output=True, text=True, timeout=10
    ).stdout.strip()


def git_revision(cwd: str | Path | None = None) -> str | None:
    """Commit hash of ``HEAD`` in the checkout holding ``cwd``; None outside a checkout or
    without git."""
    try:
        return _git(["rev-parse", "HEAD"], cwd) or None
    except (OSError, subprocess.SubprocessError):
        return None


def git_state(cwd: str | Path | None = None) -> tuple[str | None, bool | None]:
    """``(revision, dirty)``: :func:`git_revision` and whether tracked files have
    uncommitted changes (untracked files do not count); ``(None, None)`` without git."""
    rev = git_revision(cwd)
    if rev is None:
        return None, None
    try:
        return rev, bool(_git(["status", "--porcelain", "--untracked-files=no"], cwd))
    except (OSError, subprocess.SubprocessError):
        return rev, None


def package_version(name: str) -> str | None:
    """Installed version of the distribution ``name`` (None if not installed)."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def cpu_model() -> str | None:
    """The CPU's model name (``/proc/cpuinfo``, else :func:`platform.processor`)."""
    try:
        with open("/proc/cpuinfo") as f:
            return next(x.split(":", 1)[1].strip() for x in f if x.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or None


def run_metadata(quick: bool, packages: Iterable[str], notes, **extra) -> dict:
    """The ``meta`` entry of a report: UTC ``date``, ``git_revision``, ``git_dirty``,
    ``quick``, ``versions`` of ``packages``, the ``cpu`` (model, machine, platform,
    core count, Python version), ``loadavg_start`` (1/5/15 min) and ``notes`` (any JSON
    value), then every ``extra`` field."""
    rev, dirty = git_state()
    info = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "git_revision": rev,
        "git_dirty": dirty,
        "quick": quick,
        "versions": {p: package_version(p) for p in packages},
        "cpu": {
            "model": cpu_model(),
            "machine": platform.machine(),
            "platform": platform.platform(),
            "cpu_count": os.cpu_count(),
            "python": platform.python_version(),
        },
        "loadavg_start": list(os.getloadavg()),
        "notes": notes,
    }
    info.update(extra)
    return info


def report_parser(doc: str, default_out: Path) -> argparse.ArgumentParser:
    """Argument parser of a report script: ``--quick`` (small sizes, for the tests) and
    ``--out`` (the results folder, default ``default_out``); the description is the first
    paragraph of ``doc`` (the script's docstring)."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (for the tests)")
    ap.add_argument("--out", type=Path, default=default_out)
    return ap


def write_report(out: Path, stem: str, quick: bool, report: dict, markdown: Callable[[dict], str]) -> str:
    """Write ``<stem>[_quick].json`` (``report``) and ``<stem>[_quick].md`` (the table
    ``markdown(report)``) into ``out`` (created if missing), print the table and return it."""
    out.mkdir(parents=True, exist_ok=True)
    stem = f"{stem}_quick" if quick else stem
    (out / f"{stem}.json").write_text(json.dumps(report, indent=2))
    md = markdown(report)
    (out / f"{stem}.md").write_text(md)
    print(md)
    return md


def rewrite_report(
    path: Path, out: Path, markdown: Callable[[dict], str], plot: Callable[[dict, Path, str], None] | None = None
) -> dict:
    """Rewrite a report's table (and figures, ``plot(report, out, stem)``) from its JSON
    ``path`` into ``out``, without rerunning the study (a script's ``--replot``); returns the
    report."""
    report, stem = json.loads(Path(path).read_text()), Path(path).stem
    write_report(out, stem, False, report, markdown)
    if plot is not None:
        plot(report, out, stem)
    return report


def reproduction_args(
    description: str,
    argv,
    default_out: Path,
    smoke_help: str,
    markdown: Callable[[dict], str],
    plot: Callable[[dict, Path, str], None],
) -> argparse.Namespace | None:
    """Parse a reproduction script's ``--smoke``, ``--out`` and ``--replot REPORT``; with
    ``--replot``, rewrite that report's table and figures (:func:`rewrite_report`) and
    return ``None`` (the script has nothing left to do), else the parsed arguments."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--smoke", action="store_true", help=smoke_help)
    ap.add_argument("--out", type=Path, default=default_out)
    ap.add_argument("--replot", type=Path, help="a report JSON of this script: rewrite its table and figures only")
    args = ap.parse_args(argv)
    if args.replot:
        rewrite_report(args.replot, args.out, markdown, plot)
        return None
    return args
