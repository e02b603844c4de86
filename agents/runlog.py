"""Run folders and logging: resolved config, metrics (CSV + JSON lines), wandb, curves.

A run lives in ``<output_root>/<env>/<algo>/<run-id>/`` with

* ``config.yaml``: the resolved run config plus the git revision and the versions used;
* ``metrics.csv`` and ``metrics.jsonl``: one row per progress point (``step``, ``wall_s``,
  ``env_steps_per_s`` and the algorithm's metrics, names with ``/`` kept);
* ``curve.png``: return and success rate against env steps, written at the end;
* ``checkpoints/``, ``eval.json``, ``rollout.mp4`` (or ``.gif``; written by the runners);
* ``wandb/``: the offline wandb run (``wandb sync`` uploads it later).

wandb runs offline unless ``logging.wandb`` is ``online`` (needs ``wandb login``) or
``disabled``; without the wandb package logging stays local.
"""

from __future__ import annotations

import csv
import datetime
import json
import math
import os
from pathlib import Path
from typing import Any

import jax
import yaml

import sorogym
from sorogym.provenance import git_revision


def new_run_dir(root: str | Path, env: str, algo: str, seed: int, run_id: str | None = None) -> Path:
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%d-%H%M%S")
    run_id = run_id or f"{stamp}-s{seed}"
    path = Path(root) / env / algo / run_id
    k = 1
    base = path
    while path.exists():
        path = base.with_name(f"{base.name}-{k}")
        k += 1
    path.mkdir(parents=True)
    return path


def _scalar(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


class RunLogger:
    """Writes progress rows to CSV/JSON lines and (optionally) wandb; draws the curve."""

    def __init__(
        self,
        run_dir: str | Path,
        config_dict: dict,
        wandb_mode: str = "offline",
        project: str = "sorogym",
        entity: str | None = None,
        name: str | None = None,
    ):
        self.run_dir = Path(run_dir)
        self.rows: list[dict] = []
        self._wandb = None
        self._write_config(config_dict)
        if wandb_mode != "disabled":
            self._wandb = self._start_wandb(config_dict, wandb_mode, project, entity, name)

    def _write_config(self, config_dict: dict) -> None:
        meta = {
            "git_revision": git_revision(Path(__file__).parent),
            "sorogym_version": sorogym.__version__,
            "jax_version": jax.__version__,
            "backend": jax.default_backend(),
        }
        text = yaml.safe_dump({**config_dict, "run": meta}, sort_keys=False)
        (self.run_dir / "config.yaml").write_text(text)

    def _start_wandb(self, config_dict, mode, project, entity, name):
        try:
            import wandb
        except ImportError:
            print("wandb is not installed: logging to CSV/JSON only")
            return None
        os.environ.setdefault("WANDB_SILENT", "true")
        return wandb.init(
            project=project,
            entity=entity,
            name=name or self.run_dir.name,
            config=config_dict,
            dir=str(self.run_dir),
            mode=mode,
            reinit="finish_previous",
        )

    def log(self, step: int, metrics: dict) -> dict:
        row = {"step": int(step)}
        row.update({k: _scalar(v) for k, v in metrics.items() if _scalar(v) is not None})
        self.rows.append(row)
        with open(self.run_dir / "metrics.jsonl", "a") as f:
            f.write(json.dumps(row) + "\n")
        self._write_csv()
        if self._wandb is not None:
            self._wandb.log(row, step=int(step))
        return row

    def _write_csv(self) -> None:
        """``metrics.csv``: every row so far under the union of their keys."""
        with open(self.run_dir / "metrics.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(dict.fromkeys(k for r in self.rows for k in r)))
            w.writeheader()
            w.writerows(self.rows)

    def summary(self, values: dict) -> None:
        (self.run_dir / "summary.json").write_text(json.dumps(values, indent=2))
        if self._wandb is not None:
            for k, v in values.items():
                if _scalar(v) is not None:
                    self._wandb.summary[k] = v

    def finish(self) -> None:
        plot_curve(self.rows, self.run_dir / "curve.png", title=self.run_dir.parent.parent.name)
        if self._wandb is not None:
            self._wandb.finish()
            self._wandb = None


def plot_curve(rows: list[dict], path: str | Path, title: str = "") -> Path | None:
    """Return (left axis) and success rate (right axis, where logged) against env steps."""
    if not rows:
        return None
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    steps = [r["step"] for r in rows]
    fig = Figure(figsize=(6, 3.6), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ret = [r.get("return_mean") for r in rows]
    ax.plot(steps, [float("nan") if v is None else v for v in ret], "o-", color="tab:blue", label="return")
    ax.set_xlabel("env steps")
    ax.set_ylabel("episode return", color="tab:blue")
    if any(r.get("success") is not None for r in rows):
        ax2 = ax.twinx()
        succ = [r.get("success") for r in rows]
        ax2.plot(steps, [float("nan") if v is None else 100 * v for v in succ], "s--", color="tab:green")
        ax2.set_ylabel("success [%]", color="tab:green")
        ax2.set_ylim(0, 100)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    return Path(path)
