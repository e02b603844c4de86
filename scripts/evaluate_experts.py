"""Evaluate every env's model-based experts against a uniform random policy.

For each registered env with experts, each expert kind (``env.expert_kinds``) and a
uniform random policy run the same ``--episodes`` parallel episodes (same reset keys) of
the env's full time limit. Writes ``results/experts.json`` and ``results/experts.md`` and
prints the table: step-wise success (fraction of steps within the success radius), success
at the last step, the task's error metric (mean over steps and at the end) and, where the
env has contact, the peak contact force and the summed safety cost per episode.

    python scripts/evaluate_experts.py                 # 128 episodes per policy
    python scripts/evaluate_experts.py --episodes 16 --out /tmp/experts.json
    python scripts/evaluate_experts.py --envs PoseTracking-v0   # rerun one env, keep the other rows
    python scripts/evaluate_experts.py --smoke --out /tmp/experts.json  # 2 episodes of TendonTracking-v0

``--smoke``: 2 episodes per policy, ``--envs`` defaulting to TendonTracking-v0, written to
``<out stem>_smoke.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import jax

import sorogym
from sorogym.agents.comparison import evaluation_row, format_error
from sorogym.agents.evaluate import evaluate_policy
from sorogym.provenance import run_metadata

ROOT = Path(__file__).resolve().parents[1]


def random_policy(action_size):
    def policy(obs, key):
        return jax.random.uniform(key, (obs.shape[0], action_size), minval=-1.0, maxval=1.0), {}

    return policy


def markdown(rows) -> str:
    lines = [
        "| env | policy | step success | final success | error mean | error final | peak force [N] | return |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        force = f"{r['peak_contact_force_max']:.2f}" if "peak_contact_force_max" in r else "-"
        lines.append(
            f"| {r['env']} | {r['policy']} | {100 * r['success']:.1f} % | {100 * r['final_success']:.1f} % | "
            f"{format_error(r, 'error_mean')} | {format_error(r, 'error_final')} | {force} | {r['return_mean']:.1f} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=128)
    parser.add_argument("--seed", type=int, default=10_000)
    parser.add_argument("--envs", nargs="*", default=None, help="env names (default: all with experts)")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "experts.json")
    parser.add_argument("--smoke", action="store_true", help="2 episodes, TendonTracking-v0 unless --envs")
    args = parser.parse_args(argv)
    if args.smoke:
        args.episodes, args.envs = 2, args.envs or ["TendonTracking-v0"]
        args.out = args.out.with_name(f"{args.out.stem}_smoke.json")

    rows = []
    for name in args.envs or sorogym.registry():
        env = sorogym.make(name)
        if not env.expert_kinds:
            continue
        for kind in env.expert_kinds:
            t0 = time.perf_counter()
            result = evaluate_policy(env, env.expert(kind), args.episodes, seed=args.seed, policy_input="state")
            rows.append(evaluation_row(name, f"expert/{kind}", result, time.perf_counter() - t0))
            print(markdown(rows[-1:]).splitlines()[-1], flush=True)
        t0 = time.perf_counter()
        result = evaluate_policy(env, random_policy(env.action_size), args.episodes, seed=args.seed)
        rows.append(evaluation_row(name, "random", result, time.perf_counter() - t0))
        print(markdown(rows[-1:]).splitlines()[-1], flush=True)

    if args.envs and args.out.exists():  # keep the other envs' rows of an earlier run
        earlier = json.loads(args.out.read_text())["rows"]
        rows = sorted([r for r in earlier if r["env"] not in args.envs] + rows, key=lambda r: r["env"])
    meta = run_metadata(
        args.smoke, ("jax", "jaxlib", "brax"), "experts and a uniform random policy on the same reset keys"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")
    table = markdown(rows)
    args.out.with_suffix(".md").write_text(
        f"# Experts vs a random policy ({args.episodes} episodes each, env time limits)\n\n{table}\n"
    )
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
