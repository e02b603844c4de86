"""Hyper-parameter sweeps in wandb's sweep schema.

A sweep file (``configs/sweeps/*.yaml``) is a wandb sweep config whose parameter names are
dotted run-config keys, plus one sorogym key, ``base``, naming the run config every point
starts from (removed before the config reaches wandb)::

    base: configs/ppo/tendon_tracking.yaml
    method: grid                       # grid | random | bayes
    metric: {name: eval/success, goal: maximize}
    parameters:
      ppo.learning_rate: {values: [0.0001, 0.0003]}
      ppo.entropy_cost: {value: 0.001}

Online (``--online``), ``sorogym sweep`` creates the sweep on wandb (or joins ``--sweep-id``)
and runs as a wandb agent: start the same command on several machines to spread a sweep.
Offline, a local runner enumerates the grid (or draws ``count`` random points; ``bayes``
falls back to random) and trains each point in turn, logging every run like ``sorogym
train``; it writes ``summary.csv``/``summary.md`` and a plot of the metric per point to
``<output_root>/sweeps/<name>-<time>/``. In a multi-process job
(:mod:`~sorogym.agents.distributed`) every process walks the same points and trains each
one data-parallel; process 0 writes the runs and the summary.
"""

from __future__ import annotations

import csv
import datetime
import itertools
import json
import math
from pathlib import Path

import jax
import numpy as np
import yaml

from .config import load_config, parse_overrides
from .distributed import is_primary
from .run import train

_DISTRIBUTIONS = ("uniform", "log_uniform_values", "int_uniform", "q_uniform")


def load_sweep(path) -> dict:
    """The sweep file ``path`` as a dict, checked (module docstring); a bad file is a
    ``ValueError`` naming the problem."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"sweep file not found: {path}")
    spec = yaml.safe_load(Path(path).read_text()) or {}
    if not isinstance(spec.get("parameters"), dict) or not spec["parameters"]:
        raise ValueError(f"{path}: a sweep needs a non-empty 'parameters' mapping")
    method = spec.get("method", "grid")
    if method not in ("grid", "random", "bayes"):
        raise ValueError(f"{path}: method must be grid, random or bayes, got {method!r}")
    for name, p in spec["parameters"].items():
        if not isinstance(p, dict) or not ({"value", "values", "distribution"} & set(p)):
            raise ValueError(f"{path}: parameter {name!r} needs 'value', 'values' or 'distribution'")
        if "distribution" in p and p["distribution"] not in _DISTRIBUTIONS:
            raise ValueError(f"{path}: parameter {name!r}: unsupported distribution {p['distribution']!r}")
        if method == "grid" and "values" not in p and "value" not in p:
            raise ValueError(f"{path}: grid sweeps need 'values' or 'value' for {name!r}")
    return spec


def grid_points(parameters: dict) -> list[dict]:
    names = list(parameters)
    choices = [parameters[n]["values"] if "values" in parameters[n] else [parameters[n]["value"]] for n in names]
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*choices)]


def random_points(parameters: dict, count: int, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    points = []
    for _ in range(count):
        point = {}
        for name, p in parameters.items():
            if "value" in p:
                point[name] = p["value"]
            elif "values" in p:
                point[name] = p["values"][int(rng.integers(len(p["values"])))]
            elif p["distribution"] == "log_uniform_values":
                point[name] = float(math.exp(rng.uniform(math.log(p["min"]), math.log(p["max"]))))
            elif p["distribution"] == "int_uniform":
                point[name] = int(rng.integers(p["min"], p["max"] + 1))
            else:
                value = float(rng.uniform(p["min"], p["max"]))
                point[name] = round(value / p["q"]) * p["q"] if p["distribution"] == "q_uniform" else value
        points.append(point)
    return points


def _metric_of(run_dir: Path, name: str):
    summary = run_dir / "summary.json"
    if not summary.exists():
        return None
    return json.loads(summary.read_text()).get(name)


def run_sweep(path, base=None, overrides=None, count=None, online=False, sweep_id=None) -> Path | None:
    """Run the sweep in ``path``; returns the local summary folder (offline)."""
    spec = load_sweep(path)
    base = base or spec.get("base")
    extra = parse_overrides(overrides)
    metric = (spec.get("metric") or {}).get("name", "eval/return_mean")
    if online:
        if jax.process_count() > 1:
            raise ValueError(
                "an online sweep in a multi-process job: wandb agents draw their runs independently; "
                "start one agent per machine instead (sorogym sweep --sweep-id ID), or run the sweep offline"
            )
        return _run_wandb_agent(spec, base, extra, count, sweep_id)
    params = spec["parameters"]
    points = grid_points(params) if spec.get("method", "grid") == "grid" else random_points(params, count or 8)
    if count is not None:
        points = points[:count]
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%d-%H%M%S")
    name = spec.get("name") or Path(path).stem
    rows = []
    out = None
    for k, point in enumerate(points):
        config = load_config(base, {**extra, **point})
        if out is None and is_primary():
            out = Path(config.logging.output_root) / "sweeps" / f"{name}-{stamp}"
            out.mkdir(parents=True, exist_ok=True)
        run_dir = train(config, run_id=f"sweep-{name}-{stamp}-{k:03d}", quiet=True)
        if not is_primary():  # a multi-process job: the others train each point in step
            continue
        rows.append({**point, metric: _metric_of(run_dir, metric), "run_dir": str(run_dir)})
        _write_summary(out, rows, metric, spec.get("metric", {}).get("goal", "maximize"))
        print(f"[{k + 1}/{len(points)}] {point} -> {metric} = {rows[-1][metric]}")
    return out


def _write_summary(out: Path, rows: list[dict], metric: str, goal: str) -> None:
    keys = list(dict.fromkeys(k for r in rows for k in r))
    with open(out / "summary.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    ranked = sorted(
        rows, key=lambda r: (r[metric] is None, -(r[metric] or 0) if goal == "maximize" else (r[metric] or 0))
    )
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(str(r.get(k, "")) for k in keys) + " |" for r in ranked]
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 3), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    labels = [", ".join(f"{k.split('.')[-1]}={r[k]}" for k in keys if k not in (metric, "run_dir")) for r in rows]
    ax.barh(range(len(rows)), [r[metric] if r[metric] is not None else np.nan for r in rows])
    ax.set_yticks(range(len(rows)), labels, fontsize=7)
    ax.set_xlabel(metric)
    fig.tight_layout()
    fig.savefig(out / "summary.png")


def _run_wandb_agent(spec: dict, base, extra: dict, count, sweep_id):
    import wandb

    wandb_spec = {k: v for k, v in spec.items() if k != "base"}
    config0 = load_config(base, extra)
    project = config0.logging.project
    if sweep_id is None:
        sweep_id = wandb.sweep(wandb_spec, project=project, entity=config0.logging.entity)

    def one_run():
        run = wandb.init()
        point = dict(run.config)
        config = load_config(base, {**extra, **point, "logging.wandb": "online"})
        train(config, quiet=True)

    wandb.agent(sweep_id, function=one_run, count=count, project=project, entity=config0.logging.entity)
    return None
