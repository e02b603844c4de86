"""Env-step throughput of one code version (run with its tree first on ``PYTHONPATH``), for
an interleaved old/new comparison: ``num_envs`` envs under ``vmap``, ``steps`` jitted steps
per timed call inside one ``lax.scan``, random uniform actions; prints one JSON line.

    for i in 1 2 3; do
      PYTHONPATH=/tmp/old_tree python step_throughput.py TendonTracking-v0 >> old.jsonl
      PYTHONPATH=/work/main python step_throughput.py TendonTracking-v0 >> new.jsonl
    done
"""

import json
import sys
import time

import jax
import numpy as np

import sorogym as sg


def main(name, num_envs=1024, steps=100, reps=5):
    env = sg.env.make(name)
    keys = jax.random.split(jax.random.PRNGKey(0), num_envs)
    state = jax.jit(jax.vmap(env.reset))(keys)
    actions = jax.random.uniform(jax.random.PRNGKey(1), (steps, num_envs, env.action_size), minval=-1.0, maxval=1.0)

    @jax.jit
    def run(state, actions):
        return jax.lax.scan(lambda s, a: (jax.vmap(env.step)(s, a), None), state, actions)[0]

    jax.block_until_ready(run(state, actions))
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        jax.block_until_ready(run(state, actions))
        times.append(time.perf_counter() - t0)
    t = float(np.median(times))
    row = {"env": name, "sorogym": sg.__file__, "num_envs": num_envs, "steps": steps, "median_s": t}
    print(json.dumps({**row, "env_steps_per_s": num_envs * steps / t}))


if __name__ == "__main__":
    main(sys.argv[1])
