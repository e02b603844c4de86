"""The ``sorogym`` command line (also ``python -m sorogym``).

    sorogym train CONFIG [key=value ...] [--resume RUN_OR_CHECKPOINT] [--export DIR]
    sorogym evaluate CHECKPOINT [--episodes N] [--seed S]
    sorogym render CHECKPOINT [--out FILE.gif] [--episodes N]
    sorogym sweep SWEEP.yaml [--base CONFIG] [--count N] [key=value ...]
    sorogym plan follow|trajectory [--path square] [--out DIR]
    sorogym list

``CONFIG`` is a YAML run config (see :mod:`sorogym.agents.config`), e.g.
``configs/ppo/tendon_tracking.yaml`` (brax PPO), ``configs/sb3/...`` (SB3 PPO) or
``configs/distill/...`` (BC / DAgger from the env's expert); overrides are dotted ``key=value`` pairs
(``ppo.num_timesteps=200000``, ``env.max_tendon_force=20``, ``algo=sb3_ppo``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path


def _make_env(name: str, overrides: dict):
    import sorogym

    return sorogym.make(name, **overrides)


def _policy_from_checkpoint(path, deterministic: bool = True):
    """``(env, policy, jax_policy, meta)`` for a brax PPO or SB3 checkpoint."""
    from . import checkpoint as ckpt

    meta = ckpt.load_meta(path)
    env = _make_env(meta["env"], meta.get("env_overrides", {}))
    if meta["algo"] in ckpt.PPO_FORMAT_ALGOS:
        from .evaluate import ppo_policy

        params, meta, nets = ckpt.load_ppo(path)
        return env, ppo_policy(params, nets, deterministic), True, meta
    if meta["algo"] == "sb3_ppo":
        from .sb3 import load_sb3, sb3_policy

        model, meta, normalizer = load_sb3(path)
        return env, sb3_policy(model, deterministic, normalizer), False, meta
    raise ValueError(f"{path}: unknown checkpoint algo {meta['algo']!r}")


def train(config, resume: str | None = None, export: str | None = None, run_id: str | None = None,
          quiet: bool = False) -> Path:
    """Train with a validated :class:`RunConfig`, evaluate, render; returns the run folder."""
    from tqdm import tqdm

    from .config import DISTILL_ALGOS, config_to_dict
    from .evaluate import evaluate_policy, ppo_policy
    from .ppo import Throughput, progress_row, train_ppo
    from .runlog import RunLogger, new_run_dir
    from .video import write_policy_gif

    env = _make_env(config.env, config.env_overrides)
    run_dir = new_run_dir(config.logging.output_root, env.name, config.algo, config.seed, run_id)
    logger = RunLogger(run_dir, config_to_dict(config), config.logging.wandb, config.logging.project,
                       config.logging.entity)
    if config.algo == "ppo":
        total = config.ppo.num_timesteps
    elif config.algo in DISTILL_ALGOS:
        total = config.distill.rounds * config.distill.num_envs * env.max_episode_steps
    else:
        total = config.sb3_ppo.total_timesteps
    bar = tqdm(total=total, unit="step", unit_scale=True, desc=f"{env.name} {config.algo}", disable=quiet,
               dynamic_ncols=True)
    rate = Throughput()
    t0 = time.perf_counter()

    def on_progress(step: int, metrics: dict):
        row = progress_row(metrics, env.max_episode_steps) if config.algo == "ppo" else dict(metrics)
        sps = rate(step)
        if sps is not None:
            row["env_steps_per_s"] = sps
        row["wall_s"] = time.perf_counter() - t0
        row = logger.log(step, row)
        bar.update(max(step - bar.n, 0))
        shown = {"return": row.get("return_mean"), "success": row.get("success"), "steps/s": row.get("env_steps_per_s")}
        bar.set_postfix({k: f"{v:.3g}" for k, v in shown.items() if v is not None})

    try:
        if config.algo == "ppo":
            params, nets, step = train_ppo(config, env, run_dir, on_progress, resume_from=resume)
            policy, jax_policy = ppo_policy(params, nets, config.eval.deterministic), True
        elif config.algo in DISTILL_ALGOS:
            from .distill import train_distill

            params, nets, step = train_distill(config, env, run_dir, on_progress)
            policy, jax_policy = ppo_policy(params, nets, config.eval.deterministic), True
        else:
            from .sb3 import sb3_policy, train_sb3, training_normalizer

            model, step = train_sb3(config, env, run_dir, on_progress, resume_from=resume)
            policy, jax_policy = sb3_policy(model, config.eval.deterministic, training_normalizer(model)), False
        train_wall = time.perf_counter() - t0
        bar.close()
        result = evaluate_policy(env, policy, config.eval.num_episodes, seed=config.seed + 10_000,
                                 jax_policy=jax_policy)
        result.update({"env": env.name, "algo": config.algo, "env_steps": int(step), "train_wall_s": float(train_wall)})
        if config.algo in DISTILL_ALGOS:  # the teacher on the same episodes
            expert = env.expert(config.distill.expert)
            result["expert"] = {"kind": expert.name, **evaluate_policy(
                env, expert, config.eval.num_episodes, seed=config.seed + 10_000, policy_input="state")}
        (run_dir / "eval.json").write_text(json.dumps(result, indent=2))
        logger.summary({f"eval/{k}": v for k, v in result.items()})
        if config.logging.video:
            write_policy_gif(env, policy, run_dir / "rollout.gif", seed=config.seed + 20_000,
                             episodes=config.logging.video_episodes, jax_policy=jax_policy)
    finally:
        bar.close()
        logger.finish()
    if not quiet:
        print(format_eval(result))
        print(f"run folder: {run_dir}")
    if export:
        export_run(run_dir, export)
    return run_dir


def format_eval(result: dict) -> str:
    keys = [("return_mean", "return", "{:.2f}"), ("success", "step-wise success", "{:.1%}"),
            ("final/success", "final success", "{:.1%}"), ("tracking_error", "mean tracking error [mm]", "mm"),
            ("goal_distance", "mean goal distance [mm]", "mm"), ("final/goal_distance", "final goal distance [mm]", "mm"),
            ("max/peak_contact_force", "peak contact force [N]", "{:.2f}"), ("cost_mean", "episode cost", "{:.3f}")]
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


def export_run(run_dir: Path, dest: str | Path) -> Path:
    """Copy a run's summary files and its last checkpoint to ``dest`` (for committing)."""
    from . import checkpoint as ckpt

    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("config.yaml", "metrics.csv", "curve.png", "eval.json", "rollout.gif", "summary.json"):
        if (run_dir / name).exists():
            shutil.copy2(run_dir / name, dest / name)
    last = ckpt.latest(run_dir / "checkpoints")
    if last is not None:
        target = dest / "checkpoint"
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(last, target)
    return dest


def evaluate(checkpoint: str, episodes: int = 128, seed: int = 10_000, out: str | None = None) -> dict:
    from .evaluate import evaluate_policy

    env, policy, jax_policy, meta = _policy_from_checkpoint(checkpoint)
    result = evaluate_policy(env, policy, episodes, seed=seed, jax_policy=jax_policy)
    result.update({"env": env.name, "algo": meta["algo"], "env_steps": int(meta["step"]), "checkpoint": str(checkpoint)})
    if out:
        Path(out).write_text(json.dumps(result, indent=2))
    return result


def render(checkpoint: str, out: str, episodes: int = 1, seed: int = 20_000) -> Path:
    from .video import write_policy_gif

    env, policy, jax_policy, _ = _policy_from_checkpoint(checkpoint)
    return write_policy_gif(env, policy, out, seed=seed, episodes=episodes, jax_policy=jax_policy)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="sorogym", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("train", help="train an agent from a run config")
    p.add_argument("config", help="YAML run config (configs/ppo|sb3|distill/*.yaml)")
    p.add_argument("overrides", nargs="*", help="dotted key=value overrides")
    p.add_argument("--resume", help="run or checkpoint folder to continue from")
    p.add_argument("--export", help="also copy the results and last checkpoint to this folder")
    p.add_argument("--run-id", help="run folder name (default: UTC time and seed)")
    p.add_argument("--quiet", action="store_true")

    p = sub.add_parser("evaluate", help="evaluate a checkpoint over parallel episodes")
    p.add_argument("checkpoint", help="checkpoint, checkpoints/ or run folder")
    p.add_argument("--episodes", type=int, default=128)
    p.add_argument("--seed", type=int, default=10_000)
    p.add_argument("--out", help="write the statistics as JSON here")

    p = sub.add_parser("render", help="write a GIF of a checkpoint's policy")
    p.add_argument("checkpoint")
    p.add_argument("--out", default="rollout.gif")
    p.add_argument("--episodes", type=int, default=1)
    p.add_argument("--seed", type=int, default=20_000)

    p = sub.add_parser("sweep", help="run a wandb-schema sweep (wandb agent online, local runner offline)")
    p.add_argument("sweep", help="configs/sweeps/*.yaml")
    p.add_argument("overrides", nargs="*", help="dotted key=value overrides applied to every run")
    p.add_argument("--base", help="base run config (default: the sweep file's 'base' entry)")
    p.add_argument("--count", type=int, help="max runs (random/bayes sweeps; default: the grid size or 8)")
    p.add_argument("--online", action="store_true", help="create the sweep on wandb and run as its agent")
    p.add_argument("--sweep-id", help="join an existing wandb sweep as an agent (implies --online)")

    from .plan import add_parser as add_plan_parser

    add_plan_parser(sub)
    sub.add_parser("list", help="list registered environments")

    # Overrides may sit anywhere among the flags: collect the leftover key=value words.
    args, extra = parser.parse_known_args(argv)
    unknown = [a for a in extra if "=" not in a or a.startswith("-")]
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    if extra:
        if not hasattr(args, "overrides"):
            parser.error(f"{args.command} takes no key=value overrides: {' '.join(extra)}")
        args.overrides = list(args.overrides) + extra
    if args.command == "list":
        import sorogym

        for name in sorogym.registry():
            print(name)
        for name in sorogym.env.gym_twins():
            print(f"{name}  (Gymnasium only: gymnasium.make('sorogym/{name}'))")
        return 0
    if args.command == "train":
        from .config import load_config

        config = load_config(args.config, args.overrides)
        train(config, resume=args.resume, export=args.export, run_id=args.run_id, quiet=args.quiet)
        return 0
    if args.command == "evaluate":
        result = evaluate(args.checkpoint, args.episodes, args.seed, args.out)
        print(format_eval(result))
        return 0
    if args.command == "render":
        print(render(args.checkpoint, args.out, args.episodes, args.seed))
        return 0
    if args.command == "plan":
        from .plan import run as run_plan

        print(json.dumps(run_plan(args), indent=2))
        return 0
    if args.command == "sweep":
        from .sweep import run_sweep

        run_sweep(args.sweep, base=args.base, overrides=args.overrides, count=args.count,
                  online=args.online or bool(args.sweep_id), sweep_id=args.sweep_id)
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
