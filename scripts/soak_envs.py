"""Soak test: many random-action steps at each env's widest supported randomisation,
counting diverged episodes and non-finite values.

For each env, ``--num-envs`` parallel episodes run through the training wrapper (episode
limit and full reset: fresh tasks and fresh randomised parameters every episode) in float32
with the env's default integrator, until ``--steps`` env steps in total, split evenly over
three kinds of action:

* ``uniform``: uniform in [-1, 1] every step;
* ``bang_bang``: -1 or +1 per actuator, drawn every step;
* ``held_extreme``: -1 or +1 per actuator, drawn at each episode's start and held.

Every field the env randomises is drawn per episode over its full supported range
(``SoroEnv.randomization_limits``, the widest factors the env accepts), on top of any
randomisation the env does itself (e.g. the snake's friction). Counts the episodes the env
ended as ``nonfinite`` (the physics diverged: must be 0) and the observations or rewards
that reached the learner non-finite (must be 0).

    .venv/bin/python scripts/soak_envs.py                               # every env, 1M steps each
    .venv/bin/python scripts/soak_envs.py --envs SnakeToGoal-v0 --steps 30000
    .venv/bin/python scripts/soak_envs.py --smoke --out /tmp/soak   # 2 envs x 30 steps, StrainTracking-v0

Writes <out>/soak.{json,md} (``soak_smoke.*`` with ``--smoke``; out defaults to
results/bench; rows of other envs already there are kept) and prints the table.
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
ACTION_KINDS = ("uniform", "bang_bang", "held_extreme")


def widest_randomization(name: str) -> tuple:
    """``((field, low, high), ...)``: every field the env supports at its full range."""
    return tuple((field, lo, hi) for field, (lo, hi) in env_class(name).randomization_limits.items())


def soak(name: str, steps: int, num_envs: int, seed: int, kind: str, **overrides) -> dict:
    """One env and one kind of action (see the module docstring); ``overrides``: env config
    overrides (the tests shorten the episodes)."""
    ranges = widest_randomization(name)
    env = sorogym.make(name, randomization=ranges, **overrides)
    wrapped = wrap_for_training(env, episode_length=env.max_episode_steps)
    chunk = 50
    num_chunks = math.ceil(steps / (num_envs * chunk))
    shape = (num_envs, env.action_size)

    def signs(k):
        return jnp.where(jax.random.bernoulli(k, 0.5, shape), 1.0, -1.0).astype(jnp.float32)

    @jax.jit
    def run(state, held, key):
        def body(carry, k):
            state, held, bad = carry
            k_act, k_held = jax.random.split(k)
            if kind == "uniform":
                action = jax.random.uniform(k_act, shape, jnp.float32, -1.0, 1.0)
            elif kind == "bang_bang":
                action = signs(k_act)
            else:
                action = held
            state = wrapped.step(state, action)
            held = jnp.where(state.done[:, None] > 0, signs(k_held), held)  # new episode: new extremes
            finite = jnp.isfinite(state.obs).all(axis=-1) & jnp.isfinite(state.reward)
            ended = state.done > 0
            out = (jnp.sum(state.info["nonfinite"] * ended), jnp.sum(ended))
            return (state, held, bad + jnp.sum(~finite)), out

        (state, held, bad), (diverged, done) = jax.lax.scan(body, (state, held, 0), jax.random.split(key, chunk))
        return state, held, bad, diverged.sum(), done.sum()

    key = jax.random.PRNGKey(seed)
    state = jax.jit(wrapped.reset)(jax.random.split(key, num_envs))
    held = signs(jax.random.fold_in(key, 2**31 - 1))
    totals = {"diverged_episodes": 0, "episodes_ended": 0, "nonfinite_to_learner": 0}
    start = time.perf_counter()
    for i in range(num_chunks):
        state, held, bad, diverged, done = run(state, held, jax.random.fold_in(key, i))
        totals["diverged_episodes"] += int(diverged)
        totals["episodes_ended"] += int(done)
        totals["nonfinite_to_learner"] += int(bad)
    return {
        "env": name,
        "actions": kind,
        "env_steps": num_chunks * chunk * num_envs,
        "num_envs": num_envs,
        "randomization": [list(r) for r in ranges],
        **totals,
        "seconds": round(time.perf_counter() - start, 1),
    }


def table(rows) -> str:
    lines = [
        "| env | actions | env steps | episodes ended | diverged episodes | non-finite to learner | randomisation |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        dr = ", ".join(f"{f} x[{lo}, {hi}]" for f, lo, hi in r["randomization"])
        lines.append(
            f"| {r['env']} | {r['actions']} | {r['env_steps']:,} | {r['episodes_ended']:,} | "
            f"{r['diverged_episodes']} | {r['nonfinite_to_learner']} | {dr} |"
        )
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--envs", nargs="+", default=None, help="default: every registered env")
    ap.add_argument("--steps", type=int, default=1_000_000, help="per env, over the three kinds of action")
    ap.add_argument("--num-envs", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "bench")
    ap.add_argument("--smoke", action="store_true", help="30 steps of 2 envs, StrainTracking-v0 unless --envs")
    args = ap.parse_args(argv)
    if args.smoke:
        args.steps, args.num_envs, args.envs = 30, 2, args.envs or ["StrainTracking-v0"]
    names = args.envs or sorogym.registry()
    stem = "soak_smoke" if args.smoke else "soak"
    path = args.out / f"{stem}.json"
    rows = {(r["env"], r["actions"]): r for r in json.loads(path.read_text())["rows"]} if path.exists() else {}
    for name in names:
        for kind in ACTION_KINDS:
            row = soak(name, math.ceil(args.steps / len(ACTION_KINDS)), args.num_envs, args.seed, kind)
            rows[name, kind] = row
            print(json.dumps(row), flush=True)
    ordered = [rows[k] for k in sorted(rows, key=lambda k: (k[0], ACTION_KINDS.index(k[1])))]
    args.out.mkdir(parents=True, exist_ok=True)
    meta = run_metadata(args.steps < 1_000_000, ("jax", "jaxlib"), f"float32; {args.num_envs} parallel envs")
    path.write_text(json.dumps({"meta": meta, "rows": ordered}, indent=2) + "\n")
    md = table(ordered)
    (args.out / f"{stem}.md").write_text(md + "\n")
    print(md)


if __name__ == "__main__":
    main()
