"""Soak test: many random-action steps under domain randomisation, counting non-finite states.

For each env, ``--num-envs`` parallel episodes of uniform random actions run through the
training wrapper (episode limit and full reset: fresh tasks and fresh randomised
parameters every episode) until ``--steps`` env steps in total, in float32 with the env's
default integrator. The body parameters are randomised per episode by the factors of
``RANDOMIZATION`` (those the env allows), on top of any randomisation the env does itself
(e.g. the snake's friction). Counts the steps that ended an episode as ``nonfinite`` (the
physics diverged and the env ended it cleanly) and checks that every observation and reward
returned was finite.

    .venv/bin/python scripts/soak_envs.py --envs SnakeToGoal-v0           # 100,000 steps
    .venv/bin/python scripts/soak_envs.py --envs SnakeToGoal-v0 --steps 10000

Writes results/bench/soak_cpu.{json,md} (rows of other envs already there are kept) and
prints the table.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import jax
import jax.numpy as jnp

import sorogym
from sorogym.env import env_class, wrap_for_training
from sorogym.provenance import run_metadata

ROOT = Path(__file__).resolve().parents[1]
#: multiplicative factors per episode (fields an env does not randomise are left out)
RANDOMIZATION = (("young_modulus", 0.5, 2.0), ("damping", 0.5, 2.0), ("density", 0.8, 1.25))


def soak(name: str, steps: int, num_envs: int, seed: int) -> dict:
    fields = env_class(name).randomizable_fields
    ranges = tuple(r for r in RANDOMIZATION if r[0] in fields)
    env = sorogym.make(name, randomization=ranges)
    wrapped = wrap_for_training(env, episode_length=env.max_episode_steps)
    chunk = 50
    num_chunks = math.ceil(steps / (num_envs * chunk))

    @jax.jit
    def run(state, key):
        def body(carry, k):
            state, bad_values = carry
            action = jax.random.uniform(k, (num_envs, env.action_size), jnp.float32, -1.0, 1.0)
            state = wrapped.step(state, action)
            finite = jnp.all(jnp.isfinite(state.obs)) & jnp.all(jnp.isfinite(state.reward))
            out = (jnp.sum(state.info["nonfinite"]), jnp.sum(state.done))
            return (state, bad_values + (1 - finite.astype(jnp.int32))), out

        (state, bad), (nonfinite, done) = jax.lax.scan(body, (state, 0), jax.random.split(key, chunk))
        return state, bad, nonfinite.sum(), done.sum()

    key = jax.random.PRNGKey(seed)
    state = jax.jit(wrapped.reset)(jax.random.split(key, num_envs))
    totals = {"nonfinite_steps": 0, "episodes_ended": 0, "nonfinite_returns": 0}
    start = time.perf_counter()
    for i in range(num_chunks):
        state, bad, nonfinite, done = run(state, jax.random.fold_in(key, i))
        totals["nonfinite_steps"] += int(nonfinite)
        totals["episodes_ended"] += int(done)
        totals["nonfinite_returns"] += int(bad)
    seconds = time.perf_counter() - start
    return {
        "env": name,
        "env_steps": num_chunks * chunk * num_envs,
        "num_envs": num_envs,
        "randomization": [list(r) for r in ranges],
        **totals,
        "seconds": round(seconds, 1),
    }


def table(rows) -> str:
    lines = [
        "| env | env steps | episodes ended | nonfinite steps | non-finite obs/reward | randomisation |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        dr = ", ".join(f"{f} x[{lo}, {hi}]" for f, lo, hi in r["randomization"])
        lines.append(
            f"| {r['env']} | {r['env_steps']:,} | {r['episodes_ended']:,} | {r['nonfinite_steps']} | "
            f"{r['nonfinite_returns']} | {dr} |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--envs", nargs="+", default=None, help="default: every registered env")
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--num-envs", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "bench")
    args = ap.parse_args()
    names = args.envs or sorogym.registry()
    path = args.out / "soak_cpu.json"
    rows = {r["env"]: r for r in json.loads(path.read_text())["rows"]} if path.exists() else {}
    for name in names:
        rows[name] = soak(name, args.steps, args.num_envs, args.seed)
        print(json.dumps(rows[name]))
    ordered = [rows[k] for k in sorted(rows)]
    args.out.mkdir(parents=True, exist_ok=True)
    meta = run_metadata(args.steps < 100_000, ("jax", "jaxlib"), f"float32; {args.num_envs} parallel envs")
    path.write_text(json.dumps({"meta": meta, "rows": ordered}, indent=2) + "\n")
    md = table(ordered)
    (args.out / "soak_cpu.md").write_text(md + "\n")
    print(md)


if __name__ == "__main__":
    main()
