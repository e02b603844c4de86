"""Where a model's forward dynamics spends its time on XLA:CPU: the kernels of one compiled
evaluation, attributed to the sorogym source lines that produced them.

On a CPU the cost of a small model is set by the number of kernels (fusions, dots, custom
calls) that one evaluation launches more than by its arithmetic, and which kernels XLA forms
is hard to predict from the source. This script compiles a loop of chained forward-dynamics
evaluations (as ``scripts/bench_models.py`` times them), counts the kernels of the loop
body, runs the loop under ``jax.profiler`` and sums each kernel's time by the innermost
sorogym frame of its root instruction (from the stack-frame table XLA keeps in the compiled
module). The profiler adds a fixed cost to every kernel, so the summed times exceed the
loop's wall time: read shares and counts, and compare changes side by side.

    .venv/bin/python scripts/profile_kernels.py --robot free_rod --segments 4
    .venv/bin/python scripts/profile_kernels.py --robot brittle_star --kernels 30
    .venv/bin/python scripts/profile_kernels.py --smoke --json /tmp/kernels.json   # seconds

``--smoke``: one rod segment, 4 chained evaluations, 2 profiled runs.

Robots: ``free_rod`` (a passive PCS rod on a free joint, the case compared with soromox in
``bench_models.py --sections trees``), ``fixed_rod`` (the same rod on a fixed joint),
``pcs`` (the same rod as a serial :class:`~sorogym.PCS`), and the named trees
``brittle_star``, ``gripper`` and ``inchworm``.
"""

from __future__ import annotations

import argparse
import collections
import glob
import gzip
import json
import re
import tempfile
import time

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import sorogym as sg  # noqa: E402
from sorogym.provenance import run_metadata  # noqa: E402
from sorogym.robots import brittle_star, gripper, inchworm  # noqa: E402

NAMED = {"brittle_star": brittle_star, "gripper": gripper, "inchworm": inchworm}
# the rod of bench_models.py's floating-rod comparison (FLOATING_ROD there): 0.15 m segments
ROD_SEGMENT = 0.15
ROD = dict(radius=0.01, density=1000.0, young_modulus=1e6, poisson_ratio=0.5, damping=100.0)
SKIP = {"parameter", "get-tuple-element", "tuple", "constant", "bitcast"}


def build(robot: str, segments: int, dtype):
    """The model, a random state ``y`` (the neutral configuration retracted along 0.1 x a
    standard normal, velocities likewise, actuator states zero) and zero inputs ``u``."""
    if robot in NAMED:
        model = NAMED[robot](dtype=dtype)
    else:
        params = sg.RodParams.create(length=[ROD_SEGMENT] * segments, **ROD, mounting="horizontal", dtype=dtype)
        if robot == "pcs":
            model = sg.PCS(params)
        else:
            joint = sg.Joint.free() if robot == "free_rod" else sg.Joint.fixed()
            model = sg.BodyTree([sg.RodBody("rod", sg.PCS(params), joint=joint, actuated=False)], gravity=(0, 0, -9.81))
    rng = np.random.default_rng(0)
    q = model.retract(model.neutral_configuration(dtype), jnp.asarray(0.1 * rng.normal(size=model.num_dofs), dtype))
    qd = jnp.asarray(0.1 * rng.normal(size=model.num_dofs), dtype)
    y = jnp.concatenate([q, qd, jnp.zeros(model.num_auxiliary_states, dtype)])
    return model, y, jnp.zeros(model.num_actuators, dtype)


def _varint(b: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = b[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def _fields(b: bytes) -> list[tuple[int, object]]:
    """Top-level ``(field number, value)`` pairs of a serialized protobuf message."""
    i, out = 0, []
    while i < len(b):
        key, i = _varint(b, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(b, i)
        elif wire == 2:
            size, i = _varint(b, i)
            value, i = b[i : i + size], i + size
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            value, i = b[i : i + size], i + size
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        out.append((number, value))
    return out


def source_lines(module_proto: bytes):
    """``stack_frame_id -> "file:line function"`` of the innermost sorogym frame, from the
    ``stack_frame_index`` (field 17) of an ``HloModuleProto``: file names (1), function
    names (2), file locations (3: file, function, line) and frames (4: location, parent)."""
    index = dict(_fields(module_proto)).get(17)
    if index is None:
        return lambda frame_id: None
    table = _fields(index)
    files = [v.decode() for k, v in table if k == 1]
    functions = [v.decode() for k, v in table if k == 2]
    locations = [dict(_fields(v)) for k, v in table if k == 3]
    frames = [dict(_fields(v)) for k, v in table if k == 4]

    def lookup(frame_id: int) -> str | None:
        while frame_id:
            frame = frames[frame_id - 1]
            loc = locations[frame.get(1, 0) - 1]
            name = files[loc.get(1, 0) - 1]
            if "sorogym/" in name:
                return f"{name.split('sorogym/')[-1]}:{loc.get(3, 0)} {functions[loc.get(2, 0) - 1]}"
            frame_id = frame.get(2, 0)
        return None

    return lookup


def loop_body_kernels(hlo_text: str) -> tuple[dict[str, str], dict[str, list[str]]]:
    """``(kernels of the while body: name -> instruction line, computations: name -> lines)``."""
    computations, current = {}, None
    for line in hlo_text.splitlines():
        head = re.match(r"^(ENTRY )?%?([\w.\-]+) .*\{$", line)
        if head:
            current = head.group(2)
            computations[current] = []
        elif current and line.strip() and line.strip() != "}":
            computations[current].append(line.strip())
    body = re.search(r"condition=%?[\w.\-]+, body=%?([\w.\-]+)", hlo_text).group(1)
    kernels = {}
    for line in computations[body]:
        m = re.match(r"(?:ROOT )?%?([\w.\-]+) = \S+ ([\w\-]+)\(", line)
        if m and m.group(2) not in SKIP:
            kernels[m.group(1)] = line
    return kernels, computations


def attribute(line: str, computations, lookup) -> str:
    """Source of a kernel: its root instruction's frame (a fusion's fused root), else the
    most common frame among its instructions."""
    called = re.search(r"calls=%?([\w.\-]+)", line)
    lines = computations.get(called.group(1), [line]) if called else [line]
    roots = [x for x in lines if x.startswith("ROOT")] or [line]

    def frame(x):
        m = re.search(r"stack_frame_id=(\d+)", x)
        return lookup(int(m.group(1))) if m else None

    found = frame(roots[0])
    if found:
        return found
    common = collections.Counter(filter(None, map(frame, lines))).most_common(1)
    return common[0][0] if common else "(no sorogym frame)"


def profile(model, y, u, evals: int, reps: int):
    """Kernel count, loop wall time per evaluation [us] and per-kernel profiled times."""

    def loop(y, u):
        return jax.lax.fori_loop(0, evals, lambda i, y: y + 1e-9 * model.forward_dynamics(0.0, y, (u,)), y)

    compiled = jax.jit(loop).lower(y, u).compile()
    module = compiled.runtime_executable().hlo_modules()[0]
    kernels, computations = loop_body_kernels(module.to_string())
    lookup = source_lines(module.as_serialized_hlo_module_proto())
    for _ in range(5):
        jax.block_until_ready(compiled(y, u))
    t0 = time.perf_counter()
    for _ in range(reps):
        jax.block_until_ready(compiled(y, u))
    wall = (time.perf_counter() - t0) / (reps * evals) * 1e6
    with tempfile.TemporaryDirectory() as folder:
        with jax.profiler.trace(folder, create_perfetto_trace=True):
            for _ in range(reps):
                jax.block_until_ready(compiled(y, u))
        (path,) = glob.glob(f"{folder}/**/*.trace.json.gz", recursive=True)
        events = json.load(gzip.open(path))["traceEvents"]
    per_kernel = collections.Counter()
    for e in events:
        if e.get("ph") == "X" and e.get("name") in kernels:
            per_kernel[e["name"]] += e["dur"] / (reps * evals)
    rows = [
        {
            "kernel": name,
            "op": re.match(r"(?:ROOT )?%?[\w.\-]+ = (\S+) ([\w\-]+)\(", line).group(2),
            "shape": re.match(r"(?:ROOT )?%?[\w.\-]+ = (\S+) ", line).group(1).split("{")[0],
            "source": attribute(line, computations, lookup),
            "us": per_kernel.get(name, 0.0),
        }
        for name, line in kernels.items()
    ]
    return wall, rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robot", default="free_rod", choices=["free_rod", "fixed_rod", "pcs", *NAMED])
    parser.add_argument("--segments", type=int, default=4, help="rod segments (free_rod, fixed_rod, pcs)")
    parser.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    parser.add_argument("--evals", type=int, default=200, help="chained evaluations per compiled loop")
    parser.add_argument("--reps", type=int, default=20, help="profiled loop runs")
    parser.add_argument("--sources", type=int, default=25, help="costliest source lines to list")
    parser.add_argument("--kernels", type=int, default=20, help="slowest kernels to list")
    parser.add_argument("--json", help="also write the rows to this JSON file")
    parser.add_argument("--smoke", action="store_true", help="1 segment, 4 evaluations, 2 runs (seconds)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.segments, args.evals, args.reps = 1, 4, 2
    model, y, u = build(args.robot, args.segments, getattr(jnp, args.dtype))
    wall, rows = profile(model, y, u, args.evals, args.reps)
    total = sum(r["us"] for r in rows)
    by_source = collections.Counter()
    count = collections.Counter()
    for r in rows:
        by_source[r["source"]] += r["us"]
        count[r["source"]] += 1
    print(f"{args.robot} ({args.dtype}, n = {model.num_dofs}): {len(rows)} kernels per evaluation, ", end="")
    print(f"{wall:.1f} us per evaluation unprofiled, {total:.1f} us of kernel time profiled")
    print(f"\n{'share':>6} {'kernels':>7}  source (innermost sorogym frame)")
    for source, us in by_source.most_common(args.sources):
        print(f"{us / total:6.1%} {count[source]:7d}  {source}")
    print(f"\n{'share':>6}  {'kernel':28s} {'op':11s} {'shape':22s} source")
    for r in sorted(rows, key=lambda r: -r["us"])[: args.kernels]:
        print(f"{r['us'] / total:6.1%}  {r['kernel'][:28]:28s} {r['op']:11s} {r['shape'][:22]:22s} {r['source']}")
    if args.json:
        notes = "kernel times under jax.profiler (a fixed cost added per kernel); wall_us: one unprofiled run"
        info = {"robot": args.robot, "segments": args.segments, "dtype": args.dtype, "num_dofs": model.num_dofs}
        summary = {"num_kernels": len(rows), "wall_us": wall, "profiled_kernel_us": total}
        with open(args.json, "w") as f:
            json.dump(
                {"meta": run_metadata(args.smoke, ["jax", "jaxlib"], notes), **info, **summary, "kernels": rows},
                f,
                indent=1,
            )
            f.write("\n")


if __name__ == "__main__":
    main()
