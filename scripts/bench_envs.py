"""Throughput and integrator accuracy of every registered sorogym environment.

For each env of ``sorogym.registry()`` and each batch size, the training-wrapped env
(``wrap_for_training``: vmap + episode limit + full auto-reset) runs a jitted ``lax.scan`` of
control steps with uniform random actions in [-1, 1] drawn inside the scan, in JAX's
default float32 mode; env_steps_per_s = num_envs * steps / seconds (best of the repeats;
the median is kept in the JSON). Then, per env, the largest tip error over one episode of
random actions relative to the robot's length against a float64 Tsit5 reference
(``sorogym.env.integrator_accuracy``), computed in a subprocess with x64 enabled.

Two device-independent costs of each compiled batched step come with every row, to reason
about a GPU before one is at hand: ``kernels_per_step``, the kernels (fusions, dots, custom
calls...) one control step of the whole batch launches, loops counted as often as they run
(on a GPU each is a launch of a few microseconds, which bounds small batches), and
``flops_per_env_step``, the arithmetic of one env's control step counted on the jaxpr
(:func:`jaxpr_flops`; XLA's own cost analysis counts a loop body once).

    .venv/bin/python scripts/bench_envs.py [--quick | --smoke] [--envs NAME ...] [--num-envs N ...]
                                           [--device-tag cpu] [--out results/bench] [--skip-accuracy]
                                           [--set FIELD=VALUE ...]

``--set``: config overrides for every env measured (throughput and accuracy alike), e.g.
``--set integrator=trapezoid_pc num_substeps=8`` to measure another scheme side by side with
the default; values are read as Python literals (else kept as strings) and recorded in the
JSON's ``overrides``.

Writes <out>/envs_<tag>.json and envs_<tag>.md (envs_<tag>_quick.* with --quick) and
prints the table. scripts/gpu_check.sh runs it on a GPU machine.

``--smoke``: every code path once at the tiniest sizes, for the tests: StrainTracking-v0
only (``--envs`` overrides), 2 envs (``--num-envs`` overrides), 8 control steps per call,
one call in one repeat, a 0.2 s CPU-load probe, and the accuracy subprocess over the first
5 control steps against the adaptive float64 reference (rtol 1e-6, atol 1e-8). Files
envs_<tag>_smoke.*, in <tmp>/sorogym-smoke unless ``--out`` says otherwise; the numbers say
nothing about throughput or accuracy.
"""

import argparse
import ast
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend import core as jax_core

import sorogym as sg
from sorogym.env import canonical_name, wrap_for_training
from sorogym.provenance import run_metadata

ROOT = Path(__file__).resolve().parents[1]
SMOKE_OUT = Path(tempfile.gettempdir()) / "sorogym-smoke"  # --smoke without --out: never results/
FULL_NUM_ENVS = (1, 64, 256, 1024, 4096)
QUICK_NUM_ENVS = (1, 64, 1024)
SMOKE_NUM_ENVS = (2,)
SMOKE_ENVS = ("StrainTracking-v0",)
# Target: TendonTracking-v0 at 1024 envs reaches this throughput with tip_error_rel <= TARGET_TIP_ERROR.
TARGET = {"env": "TendonTracking-v0", "num_envs": 1024, "env_steps_per_s": 20_000.0, "tip_error_rel": 0.01}


# -- throughput --------------------------------------------------------------------------------


def steps_per_call(num_envs, env_steps):
    """Control steps per scan: about `env_steps` env-steps per call, at least 8."""
    return max(8, math.ceil(env_steps / num_envs))


def compile_rollout(env, num_envs, num_steps, seed=0):
    """Compiled `run(state, key) -> (state, key)`: `num_steps` batched control steps with random
    actions, plus the initial batched state. Returns (run, state, key, compile_s)."""
    wrapped = wrap_for_training(env)

    def run(state, key):
        def body(carry, _):
            s, k = carry
            k, ka = jax.random.split(k)
            a = jax.random.uniform(ka, (num_envs, wrapped.action_size), jnp.float32, -1.0, 1.0)
            return (wrapped.step(s, a), k), None

        return jax.lax.scan(body, (state, key), None, length=num_steps)[0]

    k_reset, k_run = jax.random.split(jax.random.PRNGKey(seed))
    t0 = time.perf_counter()
    state = jax.block_until_ready(jax.jit(wrapped.reset)(jax.random.split(k_reset, num_envs)))
    traced = jax.jit(run).trace(state, k_run)
    compiled = traced.lower().compile()
    compile_s = time.perf_counter() - t0
    cost = {
        "kernels_per_step": compiled_kernels(compiled.as_text()) / num_steps,
        "flops_per_env_step": jaxpr_flops(traced.jaxpr.jaxpr) / (num_steps * num_envs),
    }
    return compiled, state, k_run, compile_s, cost


# -- what a step costs, device-independent -----------------------------------------------------

# primitives that move, select or generate data without arithmetic (no flops counted)
DATA_MOVEMENT = {
    "reshape", "broadcast_in_dim", "transpose", "slice", "dynamic_slice", "dynamic_update_slice", "concatenate",
    "gather", "scatter", "squeeze", "expand_dims", "convert_element_type", "copy", "copy_p", "iota", "rev", "pad",
    "select_n", "stop_gradient", "random_bits", "random_seed", "random_wrap", "random_unwrap", "threefry2x32",
    "device_put", "split", "bitcast_convert_type", "sharding_constraint",
}  # fmt: skip


def jaxpr_flops(jaxpr) -> float:
    """Floating-point operations of a jaxpr, loops counted as often as they run: one per output
    element of an arithmetic or transcendental primitive, ``2 m n k`` per ``dot_general``, the
    input size per reduction, ``n^3 / 3`` per Cholesky factor and ``n^2`` per triangular-solve
    column; data movement (``DATA_MOVEMENT``) is free. ``scan`` bodies count ``length`` times,
    a ``cond`` its costliest branch, a ``while`` body once (the envs' loops are scans)."""
    closed = jax_core.ClosedJaxpr
    total = 0.0
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        inner = [v.jaxpr if isinstance(v, closed) else v for v in _sub_jaxprs(eqn.params)]
        if name == "scan":
            total += eqn.params["length"] * jaxpr_flops(eqn.params["jaxpr"].jaxpr)
        elif name == "cond":
            total += max(jaxpr_flops(b.jaxpr) for b in eqn.params["branches"])
        elif inner:
            total += sum(jaxpr_flops(j) for j in inner)
        elif name == "dot_general":
            (contracting, _), _ = eqn.params["dimension_numbers"]
            k = math.prod(eqn.invars[0].aval.shape[d] for d in contracting)
            total += 2.0 * _size(eqn.outvars[0]) * k
        elif name.startswith(("reduce_", "arg", "cum")):
            total += _size(eqn.invars[0])
        elif name == "cholesky":
            n = eqn.invars[0].aval.shape[-1]
            total += _size(eqn.invars[0]) * n / 3.0
        elif name == "triangular_solve":
            total += _size(eqn.invars[1]) * eqn.invars[0].aval.shape[-1]
        elif name not in DATA_MOVEMENT:
            total += sum(_size(v) for v in eqn.outvars)
    return total


def _sub_jaxprs(params):
    kinds = (jax_core.ClosedJaxpr, jax_core.Jaxpr)
    for v in params.values():
        if isinstance(v, kinds):
            yield v
        elif isinstance(v, tuple | list):
            yield from (b for b in v if isinstance(b, kinds))


def _size(var) -> int:
    return math.prod(getattr(var.aval, "shape", ()))


# HLO instructions that launch no kernel of their own
NO_KERNEL = {"parameter", "get-tuple-element", "tuple", "constant", "bitcast", "after-all", "opt-barrier"}


def compiled_kernels(hlo_text: str) -> int:
    """Kernels one run of a compiled XLA program launches: every instruction of the entry
    computation and of the computations it calls that is a kernel of its own (a fusion, a dot,
    a custom call, a copy...; not a parameter, tuple or constant), with while loops counted
    ``known_trip_count`` times (their condition once more), a conditional by its largest
    branch. On a GPU each is one launch, the figure that bounds small-batch throughput."""
    computations, current, entry = {}, None, None
    for line in hlo_text.splitlines():
        head = re.match(r"^(ENTRY )?%?([\w.\-]+) .*\{$", line)
        if head:
            current = head.group(2)
            computations[current] = []
            entry = current if head.group(1) else entry
        elif current and line.strip() and line.strip() != "}":
            computations[current].append(line.strip())

    memo = {}

    def count(name):
        if name not in memo:
            n = 0
            for line in computations[name]:
                op = re.match(r"(?:ROOT )?%?[\w.\-]+ = .*? ([\w\-]+)\(", line)
                if op is None or op.group(1) in NO_KERNEL:
                    continue
                called = lambda key, line=line: re.search(key + r"=%?([\w.\-]+)", line).group(1)  # noqa: E731
                if op.group(1) == "while":
                    trips = re.search(r'known_trip_count":\{"n":"(\d+)"', line)
                    trips = int(trips.group(1)) if trips else 1
                    n += trips * count(called("body")) + (trips + 1) * count(called("condition"))
                elif op.group(1) == "conditional":
                    branches = re.search(r"branch_computations=\{([^}]*)\}", line)
                    names = [b.strip().lstrip("%") for b in branches.group(1).split(",")] if branches else []
                    n += max((count(b) for b in names), default=1)
                elif op.group(1) == "call":
                    n += count(called("to_apply"))
                else:
                    n += 1
            memo[name] = n
        return memo[name]

    return count(entry)


def time_rollout(run, state, key, repeats, min_time):
    """Seconds per call of an already compiled `run`: each repeat chains enough calls to take
    at least `min_time`. Returns (best_s, median_s, calls_per_repeat)."""
    carry = jax.block_until_ready(run(state, key))  # warm-up
    t0 = time.perf_counter()
    carry = jax.block_until_ready(run(*carry))
    calls = max(1, math.ceil(min_time / max(time.perf_counter() - t0, 1e-6)))
    per_call = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            carry = run(*carry)
        jax.block_until_ready(carry)
        per_call.append((time.perf_counter() - t0) / calls)
    obs = np.asarray(carry[0].obs)
    if not np.all(np.isfinite(obs)):
        print("  warning: non-finite observations after the timed rollout", flush=True)
    return float(np.min(per_call)), float(np.median(per_call)), calls


def cpu_busy(interval=2.0):
    """Busy fraction of all CPUs over `interval` seconds (while this process sleeps, i.e. the
    load of other processes) from /proc/stat; None where that is unavailable."""

    def sample():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v), v[3] + v[4]  # total, idle + iowait

    try:
        t0, i0 = sample()
        time.sleep(interval)
        t1, i1 = sample()
    except (OSError, ValueError, IndexError):
        return None
    return 1.0 - (i1 - i0) / max(t1 - t0, 1)


def wait_for_idle(max_wait_s, threshold=0.15, interval=2.0):
    """Waits (up to `max_wait_s`) until other processes use < `threshold` of the CPUs, each
    probe measuring over `interval` seconds; returns the last measured busy fraction and the
    seconds waited."""
    t0 = time.perf_counter()
    busy = cpu_busy(interval)
    while busy is not None and busy >= threshold and time.perf_counter() - t0 < max_wait_s:
        print(f"  other processes use {busy:.0%} of the CPUs; waiting", flush=True)
        time.sleep(10)
        busy = cpu_busy(interval)
    return busy, time.perf_counter() - t0


#: Compiled rollouts held at once. XLA:CPU maps every kernel of an executable into memory of
#: its own; the whole suite's 60 rollouts at once (each up to ~16,000 kernels at 4096 envs)
#: exhausted the process's memory mappings ("LLVM compilation error: Cannot allocate memory").
MAX_HELD_ROLLOUTS = 15


def parse_overrides(items) -> dict:
    """``["FIELD=VALUE", ...]`` -> ``{field: value}``, values as Python literals where they
    parse (``8``, ``0.5``, ``True``), else strings (``trapezoid_pc``)."""
    out = {}
    for item in items or ():
        field, sep, text = item.partition("=")
        if not sep or not field:
            raise SystemExit(f"--set: expected FIELD=VALUE, got {item!r}")
        try:
            out[field] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            out[field] = text
    return out


def bench_throughput(
    names,
    num_envs_list,
    env_steps,
    repeats,
    min_time,
    accuracy_proc=None,
    wait_idle_s=0.0,
    busy_interval=2.0,
    overrides=None,
):
    """Compiles the (env, num_envs) rollouts while the accuracy subprocess runs (if any), at
    most ``MAX_HELD_ROLLOUTS`` at a time, waits for that subprocess (and, up to
    `wait_idle_s`, for idle CPUs; the load probed over `busy_interval` seconds), then times
    the compiled ones and compiles and times the rest one after another, each released
    after its timing. Returns (rows, busy fraction of the CPUs just before timing)."""
    pending = [(name, n) for name in names for n in num_envs_list]
    envs = {}

    def compile_job(name, n):
        env = envs.setdefault(name, sg.make(name, **(overrides or {})))
        T = steps_per_call(n, env_steps)
        run, state, key, compile_s, cost = compile_rollout(env, n, T)
        print(
            f"  compiled {name} num_envs={n} (T={T}): {compile_s:.1f} s, {cost['kernels_per_step']:.0f} "
            f"kernels per step, {cost['flops_per_env_step']:,.0f} flops per env-step",
            flush=True,
        )
        return [name, env, n, T, run, state, key, compile_s, cost]

    held = []
    while pending and len(held) < MAX_HELD_ROLLOUTS and (accuracy_proc is None or accuracy_proc.poll() is None):
        held.append(compile_job(*pending.pop(0)))
    if accuracy_proc is not None and accuracy_proc.poll() is None:
        print("  waiting for the accuracy subprocess before timing", flush=True)
        accuracy_proc.wait()
    busy, waited = wait_for_idle(wait_idle_s, interval=busy_interval)
    if busy is not None:
        print(f"  timing; other processes used {busy:.0%} of the CPUs (waited {waited:.0f} s)", flush=True)
    rows = []
    while held or pending:
        job = held.pop(0) if held else compile_job(*pending.pop(0))
        name, env, n, T, run, state, key, compile_s, cost = job
        best, median, calls = time_rollout(run, state, key, repeats, min_time)
        job.clear()  # release the executable before the next compilation
        del run, state
        rows.append(
            {
                "env": name,
                "num_envs": n,
                "env_steps_per_s": n * T / best,
                "env_steps_per_s_median": n * T / median,
                "steps_per_call": T,
                "calls_per_repeat": calls,
                "repeats": repeats,
                "best_call_s": best,
                "median_call_s": median,
                "compile_s": compile_s,
                **cost,
                "num_substeps": int(env.config.num_substeps),
                "substep_dt": float(env.substep_dt),
                "control_dt": float(env.control_dt),
                "tip_error_rel": None,
                "accuracy_point": None,
                "point_error_rel": None,
            }
        )
        print(f"  {name} num_envs={n}: {rows[-1]['env_steps_per_s']:,.0f} env-steps/s", flush=True)
        if not any(job and job[0] == name for job in held) and not any(p[0] == name for p in pending):
            envs.pop(name, None)
            jax.clear_caches()  # the env's jitted resets and steps
    return rows, busy


# -- accuracy (float64, own process) ----------------------------------------------------------


def accuracy_settings(mode):
    """Keyword arguments of integrator_accuracy per mode ("full", "quick" or "smoke"): the
    float64 reference's fixed step [s] or adaptive tolerances, and (smoke) the control steps."""
    if mode == "smoke":
        return {"reference_dt": None, "rtol": 1e-6, "atol": 1e-8, "num_steps": 5}
    if mode == "quick":
        return {"reference_dt": None, "rtol": 1e-8, "atol": 1e-10}
    return {"reference_dt": 1e-5}


def accuracy_only(names, mode, path, overrides=None):
    """Runs integrator_accuracy for every env (with the config ``overrides``) and writes
    {env: result} to `path`."""
    jax.config.update("jax_enable_x64", True)
    from sorogym.env import integrator_accuracy

    out = {}
    for name in names:
        t0 = time.perf_counter()
        try:
            res = integrator_accuracy(name, **accuracy_settings(mode), **(overrides or {}))
        except Exception as exc:  # keep the other envs' results
            res = {"env": name, "error": f"{type(exc).__name__}: {exc}"}
        res["wall_s"] = time.perf_counter() - t0
        out[name] = res
        print(
            f"  accuracy {name}: tip_error_rel={res.get('tip_error_rel')}, {res.get('accuracy_point')} "
            f"error_rel={res.get('point_error_rel')} ({res['wall_s']:.0f} s)",
            flush=True,
        )
    Path(path).write_text(json.dumps(out, indent=2) + "\n")


def start_accuracy(names, mode, path, set_args=()):
    """This script with --accuracy-only in its own interpreter (x64 on), writing to `path`
    (``set_args``: the ``--set`` items, passed on)."""
    cmd = (
        [
            sys.executable,
            str(Path(__file__).resolve()),
            "--accuracy-only",
            "--accuracy-out",
            str(path),
            "--envs",
            *names,
        ]
        + ([] if mode == "full" else [f"--{mode}"])
        + (["--set", *set_args] if set_args else [])
    )
    return subprocess.Popen(cmd, cwd=ROOT)


# -- output ------------------------------------------------------------------------------------


def target_status(row):
    if row["env"] != TARGET["env"] or row["num_envs"] != TARGET["num_envs"]:
        return None
    fast = row["env_steps_per_s"] >= TARGET["env_steps_per_s"]
    err = row["tip_error_rel"]
    if err is None:
        return "yes (speed), accuracy n/a" if fast else "no (speed)"
    accurate = err <= TARGET["tip_error_rel"]
    if fast and accurate:
        return "yes"
    return "no (" + ", ".join(w for w, ok in (("speed", fast), ("accuracy", accurate)) if not ok) + ")"


def fmt(v, spec):
    if v is None:
        return "-"
    return format(v, spec) if spec else str(v)


COLS = [
    ("env", "env", ""),
    ("num_envs", "num_envs", ""),
    ("env_steps_per_s", "env-steps/s (best)", ",.0f"),
    ("env_steps_per_s_median", "env-steps/s (median)", ",.0f"),
    ("steps_per_call", "T", ""),
    ("compile_s", "compile [s]", ".1f"),
    ("kernels_per_step", "kernels / step", ",.0f"),
    ("flops_per_env_step", "flops / env-step", ",.0f"),
    ("num_substeps", "substeps", ""),
    ("substep_dt", "substep dt [s]", ".4g"),
    ("control_dt", "control dt [s]", ".4g"),
    ("tip_error_rel", "tip err / L", ".2e"),
    ("accuracy_point", "accuracy point", ""),
    ("point_error_rel", "its err / L", ".2e"),
    ("target", "target met", ""),
]


def markdown_table(rows):
    head = [c[1] for c in COLS]
    body = [[fmt(r.get(c[0]), c[2]) for c in COLS] for r in rows]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in body])


def target_line(rows):
    t = TARGET
    goal = (
        f"target: {t['env']} >= {t['env_steps_per_s']:,.0f} env-steps/s at {t['num_envs']} envs "
        f"with tip_error_rel <= {t['tip_error_rel']}"
    )
    hit = [r for r in rows if r.get("target")]
    return goal + (f": {hit[0]['target']}" if hit else ": not measured in this run")


def device_info():
    dev = jax.devices()[0]
    return {
        "backend": jax.default_backend(),
        "device_kind": dev.device_kind,
        "platform": dev.platform,
        "device_count": jax.device_count(),
        "devices": [str(d) for d in jax.devices()],
    }


def meta(mode, tag, notes):
    return run_metadata(
        mode == "quick",
        ("jax", "jaxlib", "diffrax", "equinox", "brax", "sorogym"),
        notes,
        smoke=mode == "smoke",
        device_tag=tag,
        dtype="float32 (jax_enable_x64 off)",
        device=device_info(),
    )


def with_own_references(accuracy_ref: str, accuracy: dict) -> str:
    """``accuracy_ref`` naming the envs checked against another reference than the run's
    (``reference_solver = "fine_scheme"``: the env's own scheme at a finer step)."""
    own = {
        name: a["reference"]
        for name, a in sorted(accuracy.items())
        if not str(a.get("reference", "tsit5")).startswith("tsit5")
    }
    if not own:
        return accuracy_ref
    return accuracy_ref + "; " + ", ".join(f"{n}: its own scheme at a finer step ({ref})" for n, ref in own.items())


def write_markdown(path, info, rows, accuracy_ref, episode="one episode"):
    dev = info["device"]
    where = (
        f"CPU: {info['cpu']['model']} ({info['cpu']['cpu_count']} cores)"
        if dev["backend"] == "cpu"
        else f"{dev['backend'].upper()}: {dev['device_kind']} x{dev['device_count']} (host {info['cpu']['model']})"
    )
    md = [
        f"{where}, jax {info['versions']['jax']}, float32, git {str(info['git_revision'])[:8]}"
        + (" (uncommitted changes)" if info["git_dirty"] else "")
        + (", quick mode" if info["quick"] else "")
        + (", smoke run (not a benchmark)" if info.get("smoke") else "")
        + f", {info['date']}.",
        "",
        "Batched training-wrapped env (vmap + episode limit + full auto-reset), jitted `lax.scan` of T "
        "control steps with random actions; env-steps/s = num_envs * T / s, best and median of "
        f"{rows[0]['repeats'] if rows else '-'} repeats. Compile time includes tracing and the reset."
        + (
            ""
            if info.get("cpu_busy_other_before_timing") is None
            else f" Other processes used {info['cpu_busy_other_before_timing']:.0%} of the CPUs just before timing."
        ),
        "",
        markdown_table(rows),
        "",
        f"tip err / L: max tip error over {episode} of random actions / robot length vs {accuracy_ref}.",
        "",
        target_line(rows),
        "",
    ]
    path.write_text("\n".join(md))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = ap.add_mutually_exclusive_group()
    size.add_argument(
        "--quick",
        action="store_true",
        help=f"num_envs {QUICK_NUM_ENVS}, fewer repeats, adaptive accuracy reference (< 2 min per env)",
    )
    size.add_argument(
        "--smoke",
        action="store_true",
        help=f"every code path once: {SMOKE_ENVS[0]}, num_envs {SMOKE_NUM_ENVS}, 1 call, 5 accuracy steps "
        "(files *_smoke; for the tests)",
    )
    ap.add_argument(
        "--out", type=Path, help="output directory (default results/bench; with --smoke <tmp>/sorogym-smoke)"
    )
    ap.add_argument("--envs", nargs="+", help=f"subset of sorogym.registry() (default: all; smoke {SMOKE_ENVS})")
    ap.add_argument(
        "--num-envs",
        nargs="+",
        type=int,
        help=f"batch sizes (default {FULL_NUM_ENVS}, quick {QUICK_NUM_ENVS}); drop 4096 here if memory is short",
    )
    ap.add_argument("--device-tag", default="cpu", help="file name tag: envs_<tag>.json/.md")
    ap.add_argument("--skip-accuracy", action="store_true", help="throughput only")
    ap.add_argument(
        "--wait-idle",
        type=float,
        default=0.0,
        metavar="S",
        help="before timing, wait up to S seconds until other processes use < 15%% of the CPUs",
    )
    ap.add_argument("--set", nargs="+", metavar="FIELD=VALUE", help="config overrides for every env measured")
    ap.add_argument("--accuracy-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--accuracy-out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    default_names = list(SMOKE_ENVS) if mode == "smoke" else list(sg.registry())
    names = [canonical_name(n) for n in args.envs] if args.envs else default_names
    overrides = parse_overrides(args.set)
    if args.accuracy_only:
        accuracy_only(names, mode, args.accuracy_out, overrides)
        return

    num_envs_list = args.num_envs or {"full": FULL_NUM_ENVS, "quick": QUICK_NUM_ENVS, "smoke": SMOKE_NUM_ENVS}[mode]
    env_steps = {"full": 4096, "quick": 2048, "smoke": 8}[mode]  # env-steps per scan call
    repeats, min_time = {"full": (7, 0.3), "quick": (3, 0.2), "smoke": (1, 0.0)}[mode]
    busy_interval = 0.2 if mode == "smoke" else 2.0  # [s] over which the CPU load is probed
    acc = accuracy_settings(mode)
    accuracy_ref = (
        "float64 Tsit5, fixed dt = {:g} s".format(acc["reference_dt"])
        if acc["reference_dt"]
        else f"float64 Tsit5, adaptive (rtol {acc['rtol']:g}, atol {acc['atol']:g})"
    )
    episode = (
        f"the first {acc['num_steps']} control steps of one episode"
        if "num_steps" in acc
        else "one episode (an env's accuracy_steps where it sets them)"
    )
    notes = [
        "smoke run (every code path once at the tiniest sizes; not a benchmark)" if mode == "smoke" else None,
        f"throughput: T = max(8, ceil({env_steps} / num_envs)) control steps per jitted call; each repeat "
        f"chains calls until >= {min_time} s; {repeats} repeats; env_steps_per_s is the best repeat, "
        "env_steps_per_s_median the median; the batched state is carried between calls (no reset in "
        "the timed calls apart from the wrapper's own auto-reset)",
        "compile_s: tracing + compilation of the batched reset and of the scan (overlaps the accuracy "
        "subprocess, so it is inflated when that runs)",
        f"accuracy: integrator_accuracy(name, seed 0, {episode}), reference {accuracy_ref}, in a "
        "subprocess with jax_enable_x64; it finishes before any timing starts"
        if not args.skip_accuracy
        else "accuracy skipped",
        "the machine may be shared: cpu_busy_other_before_timing is the CPU fraction other processes "
        "used just before timing (CPU throughput drops sharply when it is high); see also loadavg_*",
    ]
    info = meta(mode, args.device_tag, [n for n in notes if n is not None])
    info["overrides"] = overrides
    print(
        f"backend {info['device']['backend']} ({info['device']['device_kind']}), envs {names}, "
        f"num_envs {list(num_envs_list)}",
        flush=True,
    )
    t_start = time.perf_counter()
    out_dir = args.out or (SMOKE_OUT if mode == "smoke" else ROOT / "results" / "bench")
    out_dir = out_dir if out_dir.is_absolute() else Path.cwd() / out_dir
    out_dir.mkdir(parents=True, exist_ok=True)

    accuracy, proc = {}, None
    with tempfile.TemporaryDirectory() as tmp:
        acc_path = Path(tmp) / "accuracy.json"
        if not args.skip_accuracy:
            proc = start_accuracy(names, mode, acc_path, args.set)
        rows, busy = bench_throughput(
            names, num_envs_list, env_steps, repeats, min_time, proc, args.wait_idle, busy_interval, overrides
        )
        if proc is not None:
            if proc.wait() != 0 or not acc_path.exists():
                print(f"accuracy subprocess failed (exit code {proc.returncode})", flush=True)
            else:
                accuracy = json.loads(acc_path.read_text())
    for r in rows:
        for key in ("tip_error_rel", "accuracy_point", "point_error_rel"):
            r[key] = accuracy.get(r["env"], {}).get(key)
        r["target"] = target_status(r)

    accuracy_ref = with_own_references(accuracy_ref, accuracy)
    info["cpu_busy_other_before_timing"] = busy
    info["loadavg_end"] = list(os.getloadavg())
    info["total_wall_s"] = time.perf_counter() - t_start
    info["accuracy_reference"] = None if args.skip_accuracy else accuracy_ref
    stem = f"envs_{args.device_tag}" + ("" if mode == "full" else f"_{mode}")
    result = {**info, "target": TARGET, "target_status": target_line(rows), "accuracy": accuracy, "rows": rows}
    json_path, md_path = out_dir / f"{stem}.json", out_dir / f"{stem}.md"
    json_path.write_text(json.dumps(result, indent=2) + "\n")
    write_markdown(md_path, info, rows, accuracy_ref, episode)
    print()
    print(markdown_table(rows))
    print(f"\n{target_line(rows)}\ntotal {info['total_wall_s']:.0f} s; wrote {json_path} and {md_path}")


if __name__ == "__main__":
    main()
