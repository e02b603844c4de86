"""The ``sorogym`` command line (also ``python -m sorogym``).

    sorogym train CONFIG [key=value ...] [--resume RUN_OR_CHECKPOINT] [--export DIR]
                  [--coordinator HOST:PORT --num-processes N --process-id I | --distributed]
    sorogym evaluate CHECKPOINT [--episodes N] [--seed S]
    sorogym render CHECKPOINT [--out FILE.mp4|FILE.gif] [--episodes N] [--frame-every K] [--size PX]
    sorogym sweep SWEEP.yaml [--base CONFIG] [--count N] [key=value ...]
    sorogym plan follow|trajectory [--path square] [--out DIR]
    sorogym list

``CONFIG`` is a YAML run config (see :mod:`sorogym.agents.config`), e.g.
``configs/ppo/tendon_tracking.yaml`` (brax PPO), ``configs/sb3/...`` (SB3 PPO) or
``configs/distill/...`` (BC / DAgger from the env's expert); overrides are dotted ``key=value`` pairs
(``ppo.num_timesteps=200000``, ``env.max_tendon_force=20``, ``algo=sb3_ppo``). ``train`` and
``sweep`` join a multi-process job (:mod:`~sorogym.agents.distributed`) before anything
else runs when given its process-group flags. This module
only parses: the commands are :mod:`~sorogym.agents.run`, :mod:`~sorogym.agents.sweep` and
:mod:`~sorogym.agents.plan`.
"""

from __future__ import annotations

import argparse
import json
import sys

from sorogym.env import gym_twins, registry

from . import plan, run
from .config import load_config
from .distributed import ProcessGroup, initialize
from .sweep import run_sweep


def _add_process_group_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("multi-process training (one job over several processes or hosts)")
    g.add_argument("--coordinator", help="HOST:PORT of process 0's coordination service")
    g.add_argument("--num-processes", type=int, help="processes in the job")
    g.add_argument("--process-id", type=int, help="this process's index, 0 .. num-processes - 1")
    g.add_argument(
        "--distributed", action="store_true", help="take the above from the cluster (Slurm, Open MPI, Kubernetes)"
    )


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
    _add_process_group_flags(p)

    p = sub.add_parser("evaluate", help="evaluate a checkpoint over parallel episodes")
    p.add_argument("checkpoint", help="checkpoint, checkpoints/ or run folder")
    p.add_argument("--episodes", type=int, default=128)
    p.add_argument("--seed", type=int, default=10_000)
    p.add_argument("--out", help="write the statistics as JSON here")

    p = sub.add_parser("render", help="write an MP4 or GIF of a checkpoint's policy")
    p.add_argument("checkpoint")
    p.add_argument("--out", default="rollout.mp4", help="a .mp4 or .gif file")
    p.add_argument("--episodes", type=int, default=1)
    p.add_argument("--seed", type=int, default=20_000)
    p.add_argument("--frame-every", type=int, default=2, help="draw every k-th env step")
    p.add_argument("--size", type=int, default=480, help="frame width and height [px]")
    p.add_argument(
        "--renderer", default="auto", choices=("auto", "mujoco", "matplotlib"), help="auto: MuJoCo where it can render"
    )

    p = sub.add_parser("sweep", help="run a wandb-schema sweep (wandb agent online, local runner offline)")
    p.add_argument("sweep", help="configs/sweeps/*.yaml")
    p.add_argument("overrides", nargs="*", help="dotted key=value overrides applied to every run")
    p.add_argument("--base", help="base run config (default: the sweep file's 'base' entry)")
    p.add_argument("--count", type=int, help="max runs (random/bayes sweeps; default: the grid size or 8)")
    p.add_argument("--online", action="store_true", help="create the sweep on wandb and run as its agent")
    p.add_argument("--sweep-id", help="join an existing wandb sweep as an agent (implies --online)")
    _add_process_group_flags(p)

    p = sub.add_parser("plan", help="plan a path or trajectory for a PCC robot and render it")
    p.add_argument("task", choices=("follow", "trajectory"))
    p.add_argument("--path", default="square", choices=("square", "sinusoid", "letter"), help="follow: the shape")
    p.add_argument("--size", type=float, default=0.2, help="follow: path size [m]")
    p.add_argument("--waypoints", type=int, default=150, help="follow: reference poses")
    p.add_argument("--obstacles", type=int, default=27, help="trajectory: random spheres")
    p.add_argument("--horizon", type=int, default=32, help="trajectory: steps (waypoints - 1)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--frames", type=int, default=40, help="GIF frames")
    p.add_argument("--out", default="plan", help="output folder")
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
        for name in registry():
            print(name)
        for name in gym_twins():
            print(f"{name}  (Gymnasium only: gymnasium.make('sorogym/{name}'))")
        return 0
    if args.command in ("train", "sweep"):
        try:
            group = ProcessGroup(args.coordinator, args.num_processes, args.process_id, args.distributed)
        except ValueError as err:
            parser.error(str(err))
        initialize(group)
    if args.command == "train":
        config = load_config(args.config, args.overrides)
        run.train(config, resume=args.resume, export=args.export, run_id=args.run_id, quiet=args.quiet)
        return 0
    if args.command == "evaluate":
        print(run.format_eval(run.evaluate(args.checkpoint, args.episodes, args.seed, args.out)))
        return 0
    if args.command == "render":
        print(
            run.render(args.checkpoint, args.out, args.episodes, args.seed, args.frame_every, args.size, args.renderer)
        )
        return 0
    if args.command == "plan":
        options = (
            {"path": args.path, "size": args.size, "waypoints": args.waypoints}
            if args.task == "follow"
            else {"obstacles": args.obstacles, "horizon": args.horizon}
        )
        print(
            json.dumps(plan.run(args.task, seed=args.seed, out=args.out, gif_frames=args.frames, **options), indent=2)
        )
        return 0
    if args.command == "sweep":
        run_sweep(
            args.sweep,
            base=args.base,
            overrides=args.overrides,
            count=args.count,
            online=args.online or bool(args.sweep_id),
            sweep_id=args.sweep_id,
        )
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
