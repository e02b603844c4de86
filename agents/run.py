"""The jobs behind the ``sorogym`` command: train a run config (then evaluate and render the
result), evaluate or render a checkpoint, export a run for committing. Every algorithm goes
through its :class:`~sorogym.agents.trainers.Trainer`.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path

import jax
from tqdm import tqdm

import sorogym
from sorogym.env import config_to_dict

from . import checkpoint as ckpt
from .config import RunConfig
from .distributed import is_primary, params_digest
from .evaluate import evaluate_policy
from .runlog import RunLogger, new_run_dir
from .trainers import TRAINERS
from .video import write_policy_video

#: files of a run folder that :func:`export_run` copies
EXPORTED_FILES = ("config.yaml", "metrics.csv", "curve.png", "eval.json", "rollout.mp4", "rollout.gif", "summary.json")


def make_env(name: str, overrides: dict):
    """The env a run config or a checkpoint names, with its config overrides."""
    return sorogym.make(name, **overrides)


def train(
    config: RunConfig,
    resume: str | None = None,
    export: str | None = None,
    run_id: str | None = None,
    quiet: bool = False,
) -> Path | None:
    """Train with a validated :class:`RunConfig`, evaluate, render; returns the run folder.

    ``resume`` (a run or checkpoint folder) continues an earlier run; ``export`` also copies
    the results to that folder (:func:`export_run`); ``run_id`` names the run folder. In a
    multi-process job (:mod:`~sorogym.agents.distributed`) only process 0 writes and
    evaluates; the others return None after training.
    """
    trainer = TRAINERS[config.algo]
    env = make_env(config.env, config.env_overrides)
    if jax.process_count() > 1:
        check_multiprocess(config)
        if not is_primary():
            return _train_replica(trainer, config, env, resume, quiet)
    run_dir = new_run_dir(config.logging.output_root, env.name, config.algo, config.seed, run_id)
    logger = RunLogger(
        run_dir, config_to_dict(config), config.logging.wandb, config.logging.project, config.logging.entity
    )
    bar = tqdm(
        total=trainer.total_steps(config, env),
        unit="step",
        unit_scale=True,
        desc=f"{env.name} {config.algo}",
        disable=quiet,
        dynamic_ncols=True,
    )
    t0 = time.perf_counter()
    last = {"time": time.time(), "step": None}  # env steps/s between progress points (incl. compilation)

    def on_progress(step: int, metrics: dict):
        row, now = trainer.progress_row(metrics, env), time.time()
        if last["step"] is not None and step > last["step"]:
            row["env_steps_per_s"] = (step - last["step"]) / max(now - last["time"], 1e-9)
        last.update(time=now, step=step)
        row["wall_s"] = time.perf_counter() - t0
        row = logger.log(step, row)
        bar.update(max(step - bar.n, 0))
        shown = {"return": row.get("return_mean"), "success": row.get("success"), "steps/s": row.get("env_steps_per_s")}
        bar.set_postfix({k: f"{v:.3g}" for k, v in shown.items() if v is not None})

    try:
        policy, step = trainer.train(config, env, run_dir, on_progress, resume)
        train_wall = time.perf_counter() - t0
        bar.close()
        seed = config.seed + 10_000
        result = evaluate_policy(env, policy.act, config.eval.num_episodes, seed=seed, jax_policy=policy.on_jax)
        result.update({"env": env.name, "algo": config.algo, "env_steps": int(step), "train_wall_s": float(train_wall)})
        if policy.params is not None:
            result.update(params_sha256=params_digest(policy.params), num_processes=jax.process_count())
        teacher = trainer.teacher(config, env)
        if teacher is not None:  # on the same episodes
            result["expert"] = {
                "kind": teacher.name,
                **evaluate_policy(env, teacher, config.eval.num_episodes, seed=seed, policy_input="state"),
            }
        (run_dir / "eval.json").write_text(json.dumps(result, indent=2))
        logger.summary({f"eval/{k}": v for k, v in result.items()})
        if config.logging.video:
            write_policy_video(
                env,
                policy.act,
                run_dir / f"rollout.{config.logging.video_format}",
                seed=config.seed + 20_000,
                episodes=config.logging.video_episodes,
                jax_policy=policy.on_jax,
                renderer=config.logging.renderer,
            )
    finally:
        bar.close()
        logger.finish()
    if not quiet:
        print(format_eval(result))
        print(f"run folder: {run_dir}")
        if "params_sha256" in result:
            print(f"params_sha256: {result['params_sha256']}")
    if export:
        export_run(run_dir, export)
    return run_dir


def check_multiprocess(config: RunConfig) -> None:
    """Raise ``ValueError`` naming what a multi-process job cannot train with."""
    if config.algo != "ppo":
        raise ValueError(f"algo={config.algo}: only brax PPO trains across several processes")
    devices = jax.device_count()
    if config.ppo.num_envs % devices:
        raise ValueError(f"ppo.num_envs={config.ppo.num_envs}: must be a multiple of the job's {devices} devices")


def _train_replica(trainer, config: RunConfig, env, resume, quiet: bool) -> None:
    """A non-primary process of a multi-process job: train in step with the others, write
    nothing, print the digest of the final parameters (the primary's ``params_sha256``)."""
    with tempfile.TemporaryDirectory() as scratch:
        policy, _ = trainer.train(config, env, Path(scratch), lambda step, metrics: None, resume)
    digest = params_digest(policy.params)
    print(f"process {jax.process_index()} of {jax.process_count()} done, params_sha256: {digest}")
    return None


def load_checkpoint(path, deterministic: bool = True):
    """``(env, policy, meta)`` of a checkpoint (or run folder) of any algorithm."""
    meta = ckpt.load_meta(path)
    if meta["algo"] not in TRAINERS:
        raise ValueError(f"{path}: unknown checkpoint algo {meta['algo']!r}")
    env = make_env(meta["env"], meta.get("env_overrides", {}))
    return env, TRAINERS[meta["algo"]].load_policy(path, deterministic), meta


def evaluate(checkpoint: str, episodes: int = 128, seed: int = 10_000, out: str | None = None) -> dict:
    """:func:`~sorogym.agents.evaluate.evaluate_policy` statistics of a checkpoint's
    deterministic policy over ``episodes`` parallel episodes (also written to ``out``)."""
    env, policy, meta = load_checkpoint(checkpoint)
    result = evaluate_policy(env, policy.act, episodes, seed=seed, jax_policy=policy.on_jax)
    result.update(
        {"env": env.name, "algo": meta["algo"], "env_steps": int(meta["step"]), "checkpoint": str(checkpoint)}
    )
    if out:
        Path(out).write_text(json.dumps(result, indent=2))
    return result


def render(
    checkpoint: str,
    out: str,
    episodes: int = 1,
    seed: int = 20_000,
    frame_every: int = 2,
    size: int = 480,
    renderer: str = "auto",
) -> Path:
    """Write an MP4 or GIF (``out``'s suffix) of ``episodes`` episodes of a checkpoint's
    policy, every ``frame_every``-th step at ``size`` x ``size`` px; returns the file written."""
    env, policy, _ = load_checkpoint(checkpoint)
    return write_policy_video(
        env,
        policy.act,
        out,
        seed=seed,
        episodes=episodes,
        jax_policy=policy.on_jax,
        frame_every=frame_every,
        size=size,
        renderer=renderer,
    )


def export_run(run_dir: Path, dest: str | Path) -> Path:
    """Copy a run's summary files and its last checkpoint to ``dest`` (for committing)."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for name in EXPORTED_FILES:
        if (run_dir / name).exists():
            shutil.copy2(run_dir / name, dest / name)
    last = ckpt.latest(run_dir / "checkpoints")
    if last is not None:
        target = dest / "checkpoint"
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(last, target)
    return dest


def format_eval(result: dict) -> str:
    """The headline figures of an evaluation (``eval.json``), one per line; a distilled
    run's expert in a second column."""
    keys = [
        ("return_mean", "return", "{:.2f}"),
        ("success", "step-wise success", "{:.1%}"),
        ("final/success", "final success", "{:.1%}"),
        ("tracking_error", "mean tracking error [mm]", "mm"),
        ("goal_distance", "mean goal distance [mm]", "mm"),
        ("final/goal_distance", "final goal distance [mm]", "mm"),
        ("max/peak_contact_force", "peak contact force [N]", "{:.2f}"),
        ("cost_mean", "episode cost", "{:.3f}"),
    ]
    lines = [f"{result.get('env', '')} {result.get('algo', '')}: {result['num_episodes']} episodes"]
    teacher = result.get("expert")
    if teacher:
        lines[0] += f" (student | expert {teacher['kind']})"
    for key, label, fmt in keys:
        if key in result:
            cells = [result[key]] + ([teacher[key]] if teacher and key in teacher else [])
            text = " | ".join(f"{1000 * v:.2f}" if fmt == "mm" else fmt.format(v) for v in cells)
            lines.append(f"  {label:<28} {text}")
    return "\n".join(lines)
