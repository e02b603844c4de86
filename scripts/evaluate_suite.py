"""The suite leaderboard: every env, every policy kind, the same episodes.

For each registered env the task is the env as its brax PPO run config sets it up
(``configs/ppo/<env>.yaml``'s ``env_overrides``: the locomotion tasks randomise stiffness,
damping and density). On that env, with one seed (so every row sees the same reset keys
and the same randomised parameters), the script evaluates

* ``random``: uniform actions in [-1, 1];
* ``expert``: the env's default model-based expert (``env.expert()``; every expert kind is
  in ``results/experts.md``);
* every committed trained policy under ``results/<env>/``: ``ppo`` (brax PPO from scratch),
  ``sb3_ppo`` (the Stable-Baselines3 CPU baseline) and, where they exist, ``bc``/``dagger``
  students and ``ppo_warm`` (PPO warm-started from a student), each from its checkpoint;

and writes ``results/suite.json`` and ``results/suite.md`` (printed): step-wise and final
success, the task error, the return, the env steps and wall time the policy took to train
(from its run's ``eval.json``) and the env's throughput (env-steps/s at 1024 parallel envs on
this CPU, from the committed ``results/bench/envs_cpu*.json``). The docs page
``docs/leaderboard.md`` shows the table.

    python scripts/evaluate_suite.py                       # everything, 128 episodes each
    python scripts/evaluate_suite.py --envs SnakeToGoal-v0 # one env; other rows kept
    python scripts/evaluate_suite.py --kinds ppo --out /tmp/suite.json
    python scripts/evaluate_suite.py --smoke --out /tmp/suite.json   # 2 episodes of TendonTracking-v0
    python scripts/evaluate_suite.py --refresh-throughput  # only the env-steps/s column, from results/bench

``--smoke``: 2 episodes per row, ``--envs`` defaulting to TendonTracking-v0, written to
``<out stem>_smoke.{json,md}``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import time
from pathlib import Path

import jax
import yaml

import sorogym
from sorogym.agents.comparison import evaluation_row, format_error
from sorogym.agents.evaluate import evaluate_policy
from sorogym.agents.trainers import TRAINERS
from sorogym.provenance import run_metadata

ROOT = Path(__file__).resolve().parents[1]
#: every env has a row of each of these kinds (tests/test_suite.py checks it)
KINDS = ("random", "expert", "ppo", "sb3_ppo")
#: further committed runs shown where they exist
EXTRA_RUNS = ("bc", "dagger", "ppo_warm")
THROUGHPUT_ENVS = 1024


def results_folder(env_name: str) -> str:
    """``TendonTracking-v0`` -> ``tendon_tracking`` (the env's folder under ``results/``)."""
    stem = env_name.rsplit("-v", 1)[0]
    return re.sub(r"(?<!^)(?=[A-Z])", "_", stem).lower()


def task_overrides(env_name: str) -> dict:
    """The env config overrides of the env's brax PPO run config (the benchmark task)."""
    path = ROOT / "configs" / "ppo" / f"{results_folder(env_name)}.yaml"
    if not path.is_file():
        return {}
    return yaml.safe_load(path.read_text()).get("env_overrides") or {}


def random_policy(action_size: int):
    def policy(obs, key):
        return jax.random.uniform(key, (obs.shape[0], action_size), minval=-1.0, maxval=1.0), {}

    return policy


def throughput(env_name: str, bench_dir: Path = ROOT / "results" / "bench") -> float | None:
    """The env's committed env-steps/s at :data:`THROUGHPUT_ENVS` envs (the newest of the
    ``envs_cpu*.json`` benchmark files that measured it), or None."""
    best = None
    for path in sorted(bench_dir.glob("envs_cpu*.json")):
        data = json.loads(path.read_text())
        for row in data.get("rows", []):
            if row.get("env") == env_name and row.get("num_envs") == THROUGHPUT_ENVS:
                stamp = data.get("date", "")
                if best is None or stamp > best[0]:
                    best = (stamp, float(row["env_steps_per_s"]))
    return None if best is None else best[1]


def _with_throughput(row: dict) -> dict:
    """``row`` with the newest committed env-steps/s of its env (kept where none is committed)."""
    fresh = throughput(row["env"])
    return row if fresh is None else {**row, "env_steps_per_s": fresh}


def trained_runs(env_name: str, results: Path) -> list[tuple[str, Path]]:
    """``(kind, run folder)`` of every committed trained policy of the env."""
    folder = results / results_folder(env_name)
    return [(k, folder / k) for k in ("ppo", "sb3_ppo", *EXTRA_RUNS) if (folder / k / "checkpoint").is_dir()]


def evaluate_env(env_name: str, kinds, episodes: int, seed: int, results: Path) -> list[dict]:
    """The rows of one env (see the module docstring)."""
    overrides = task_overrides(env_name)
    env = sorogym.make(env_name, **overrides)
    speed = throughput(env_name)
    rows = []

    def add(kind, label, result, seconds, run=None):
        row = evaluation_row(env_name, label, result, seconds)
        row.update(kind=kind, env_steps_per_s=speed, task_overrides=overrides)
        if run is not None:
            trained = json.loads((run / "eval.json").read_text())
            row.update(env_steps=trained.get("env_steps"), train_wall_s=trained.get("train_wall_s"))
            row["run"] = str(run.relative_to(ROOT)) if run.is_relative_to(ROOT) else str(run)
        rows.append(row)
        print(markdown(rows[-1:]).splitlines()[-1], flush=True)

    if "random" in kinds:
        t0 = time.perf_counter()
        result = evaluate_policy(env, random_policy(env.action_size), episodes, seed=seed)
        add("random", "random", result, time.perf_counter() - t0)
    if "expert" in kinds and env.expert_kinds:
        t0 = time.perf_counter()
        result = evaluate_policy(env, env.expert(), episodes, seed=seed, policy_input="state")
        add("expert", f"expert/{env.expert_kinds[0]}", result, time.perf_counter() - t0)
    for kind, run in trained_runs(env_name, results):
        if kind not in kinds and not (kind in EXTRA_RUNS and "extra" in kinds):
            continue
        meta = json.loads((run / "checkpoint" / "meta.json").read_text())
        if meta.get("env_overrides", {}) != overrides:
            raise ValueError(
                f"{run}: trained with env overrides {meta.get('env_overrides')}, the suite task has {overrides}"
            )
        policy = TRAINERS[meta["algo"]].load_policy(run / "checkpoint", True)
        t0 = time.perf_counter()
        result = evaluate_policy(env, policy.act, episodes, seed=seed, jax_policy=policy.on_jax)
        add(kind, kind, result, time.perf_counter() - t0, run)
    return rows


def _cell(value, fmt, scale=1.0):
    return "-" if value is None else fmt.format(scale * value)


def markdown(rows) -> str:
    lines = [
        "| env | policy | step success | final success | task error | return | trained for | train wall [s] "
        "| env-steps/s (1024 envs) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['env']} | {r['policy']} | {100 * r['success']:.1f} % | {100 * r['final_success']:.1f} % | "
            f"{format_error(r)} | {r['return_mean']:.1f} | {_cell(r.get('env_steps'), '{:.2f}M', 1e-6)} | "
            f"{_cell(r.get('train_wall_s'), '{:.0f}')} | {_cell(r.get('env_steps_per_s'), '{:,.0f}')} |"
        )
    return "\n".join(lines)


def write(rows: list[dict], out: Path, episodes: int, seed: int, quick: bool = False, meta: dict | None = None) -> None:
    """Writes ``out`` (JSON) and its ``.md`` table; ``meta``: keep an earlier run's metadata
    (a throughput refresh evaluates nothing)."""
    if meta is None:
        meta = run_metadata(quick, ("jax", "jaxlib", "brax", "stable_baselines3"), "suite leaderboard")
        meta.update(episodes=episodes, seed=seed)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"meta": meta, "kinds": list(KINDS), "rows": rows}, indent=2) + "\n")
    header = (
        f"# sorogym leaderboard ({episodes} episodes per row, seed {seed}: "
        "the same episodes in every row of an env)\n\n"
        "Generated by `scripts/evaluate_suite.py`. Each env is its brax PPO run config's task (the locomotion "
        "envs with randomised stiffness, damping and density); task error: the env's error metric, mean over "
        "steps; env-steps/s: the committed CPU benchmark at 1024 envs.\n\n"
    )
    out.with_suffix(".md").write_text(header + markdown(rows) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=128)
    parser.add_argument("--seed", type=int, default=10_000)
    parser.add_argument("--envs", nargs="*", default=None, help="env names (default: every registered env)")
    parser.add_argument(
        "--kinds", nargs="*", default=[*KINDS, "extra"], help=f"of {KINDS} and 'extra' (bc, dagger, ppo_warm)"
    )
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "suite.json")
    parser.add_argument("--smoke", action="store_true", help="2 episodes, TendonTracking-v0 unless --envs")
    parser.add_argument(
        "--refresh-throughput",
        action="store_true",
        help="evaluate nothing: rewrite --out's env-steps/s column from the committed benchmark files",
    )
    args = parser.parse_args(argv)
    if args.refresh_throughput:
        data = json.loads(args.out.read_text())
        rows = [_with_throughput(r) for r in data["rows"]]
        now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        meta = {**data["meta"], "throughput_refreshed": now}
        write(rows, args.out, meta["episodes"], meta["seed"], meta.get("quick", False), meta)
        print(markdown(rows))
        return 0
    if args.smoke:
        args.episodes, args.envs = 2, args.envs or ["TendonTracking-v0"]
        args.out = args.out.with_name(f"{args.out.stem}_smoke.json")
    unknown = set(args.kinds) - {*KINDS, "extra"}
    if unknown:
        parser.error(f"unknown kinds {sorted(unknown)}; choose from {KINDS} and 'extra'")
    names = args.envs or list(sorogym.registry())
    rows = []
    for name in names:
        rows += evaluate_env(sorogym.env.canonical_name(name), args.kinds, args.episodes, args.seed, ROOT / "results")
    if args.envs and args.out.exists():  # keep the other envs' rows of an earlier run
        done = {r["env"] for r in rows}
        earlier = [_with_throughput(r) for r in json.loads(args.out.read_text())["rows"] if r["env"] not in done]
        order = {n: i for i, n in enumerate(sorogym.registry())}
        rows = sorted(earlier + rows, key=lambda r: order.get(r["env"], len(order)))
    write(rows, args.out, args.episodes, args.seed, args.smoke)
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
