"""Batched inverse kinematics on this CPU, with the CR-Solver paper's protocol (Tables I/II).

Robots: PCC continuum robots with 1 m segments and radius 0.1 m, 3 and 4 segments,
inextensible (L = 1 m) and extensible (L in [0.5, 1.5] m). Targets: end-effector poses of
configurations drawn uniformly from the bounds (so every target is reachable). Solver: the
two-stage beam search of :func:`sorogym.planning.make_ik_solver` (128 seeds, the best 8
refined, 200 LM iterations in all: 40 coarse + 160 fine). Success: pose error
``|log(T^-1 T*)| < 0.01``, within bounds, and, with obstacles, no penetration.

* ``free``: 1000 targets without obstacles (Table I);
* ``lattice``: 100 collision-free targets among the 27-sphere lattice (radius 0.2 m,
  spacing 0.8/0.8/1.0 m) of Table II. The paper does not say where the lattice sits; here
  its centre is at (0.4, 0.4, 1.5) m, so the base stands in the middle of a lattice cell
  and the spheres fill heights 0.5-2.5 m of the robot's 3-4 m reach (about a third of
  random configurations are collision-free; centred on the base axis, none are).

All targets of a case go through the solver in one batch. Time is the wall time of the
compiled solve (compilation reported separately).

    .venv/bin/python scripts/bench_planning.py [--quick] [--device-tag cpu]

Writes results/bench/planning_<tag>[_quick].json and .md and prints the table.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _runinfo import ROOT, run_metadata  # noqa: E402
from sorogym.planning import SUCCESS, PCCRobot, Spheres, make_ik_solver  # noqa: E402

PAPER = {  # CR-Solver, Tables I and II (its CPU figure: 404.29 s for 1000 targets)
    ("free", 3, False): {"success": 1.0, "cpu_s": 404.29, "gpu_s": 0.46, "error": 3.74e-4},
    ("lattice", 3, False): {"success": 1.0, "gpu_s": 0.30, "error": 1.00e-4},
    ("lattice", 4, True): {"success": 1.0, "gpu_s": 0.323, "error": 3.30e-5},
}


def lattice_obstacles() -> Spheres:
    return Spheres.lattice(shape=(3, 3, 3), spacing=(0.8, 0.8, 1.0), radius=0.2, origin=(0.4, 0.4, 1.5))


def sample_targets(robot, key, count, obstacles=None, min_clearance=0.0, max_rounds=50):
    """End poses of ``count`` random configurations (collision-free ones with obstacles)."""
    poses = []
    for _ in range(max_rounds):
        if sum(p.shape[0] for p in poses) >= count:
            break
        key, sub = jax.random.split(key)
        qs = robot.sample(sub, 4 * count, jnp.float64)
        if obstacles is not None:
            clear = jax.vmap(lambda q: jnp.min(obstacles.clearance(robot.backbone_points(q), robot.radius)))(qs)
            qs = qs[np.asarray(clear) > min_clearance]
        poses.append(jax.vmap(robot.end_pose)(qs))
    found = sum(p.shape[0] for p in poses)
    if found < count:
        raise RuntimeError(f"only {found} of {count} collision-free configurations in {max_rounds} rounds of "
                           f"{4 * count} samples: the obstacles leave too little free space")
    return jnp.concatenate(poses)[:count]


def run_case(name, segments, extensible, count, seeds, best, coarse, fine):
    robot = PCCRobot(segments, length=1.0, radius=0.1, extensible=extensible)
    obstacles = lattice_obstacles() if name == "lattice" else None
    targets = sample_targets(robot, jax.random.PRNGKey(segments + 10 * extensible), count, obstacles)
    solve = make_ik_solver(robot, obstacles=obstacles, num_seeds=seeds, num_best=best, coarse_iterations=coarse,
                           fine_iterations=fine, tolerance=1e-2, margin=0.01)
    t0 = time.perf_counter()
    jax.block_until_ready(solve(targets[:1], jax.random.PRNGKey(0)))  # compile (batch of 1)
    compile_s = time.perf_counter() - t0
    jax.block_until_ready(solve(targets, jax.random.PRNGKey(1)))  # compile for the full batch
    t0 = time.perf_counter()
    result = jax.block_until_ready(solve(targets, jax.random.PRNGKey(2)))
    seconds = time.perf_counter() - t0
    status = np.asarray(result.status)
    ok = status == SUCCESS
    paper = PAPER.get((name, segments, extensible), {})
    return {
        "case": name, "segments": segments, "extensible": extensible, "targets": int(count),
        "seeds": seeds, "best": best, "iterations": coarse + fine,
        "success": float(ok.mean()), "seconds": seconds, "compile_s": compile_s,
        "pose_error_mean": float(np.asarray(result.error)[ok].mean()) if ok.any() else None,
        "pose_error_max": float(np.asarray(result.error)[ok].max()) if ok.any() else None,
        "status_counts": {str(k): int(v) for k, v in zip(*np.unique(status, return_counts=True))},
        "paper_success": paper.get("success"), "paper_cpu_s": paper.get("cpu_s"), "paper_gpu_s": paper.get("gpu_s"),
        "paper_error": paper.get("error"),
    }


def markdown(rows, meta) -> str:
    lines = [f"{meta['device']}: {meta['cpu'].get('model')} ({meta['cpu'].get('cpu_count')} cores), jax {meta['versions']['jax']}, "
             f"float64, git {str(meta['git_revision'])[:8]}, {meta['date']}.", "",
             "| case | N | extensible | targets | success | solve [s] | compile [s] | pose error (mean / max) | "
             "CR-Solver success | CR-Solver CPU [s] | CR-Solver GPU [s] |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        err = "-" if r["pose_error_mean"] is None else f"{r['pose_error_mean']:.1e} / {r['pose_error_max']:.1e}"
        fmt = lambda v, f: "-" if v is None else f.format(v)  # noqa: E731
        lines.append(f"| {r['case']} | {r['segments']} | {r['extensible']} | {r['targets']} | {100 * r['success']:.1f} % | "
                     f"{r['seconds']:.2f} | {r['compile_s']:.1f} | {err} | {fmt(r['paper_success'], '{:.0%}')} | "
                     f"{fmt(r['paper_cpu_s'], '{:.1f}')} | {fmt(r['paper_gpu_s'], '{:.2f}')} |")
    lines += ["", f"Solver: {rows[0]['seeds']} seeds, best {rows[0]['best']} refined, {rows[0]['iterations']} "
              "LM iterations in all; success = pose error < 0.01, in bounds, no penetration."]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="50 / 10 targets, 32 seeds (a smoke run)")
    ap.add_argument("--device-tag", default="cpu")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "bench")
    args = ap.parse_args()
    free_n, lattice_n = (50, 10) if args.quick else (1000, 100)
    seeds, best = (32, 4) if args.quick else (128, 8)
    cases = [("free", 3, False, free_n), ("free", 3, True, free_n), ("free", 4, False, free_n), ("free", 4, True, free_n),
             ("lattice", 3, False, lattice_n), ("lattice", 4, True, lattice_n)]
    rows = []
    for name, n, ext, count in cases:
        rows.append(run_case(name, n, ext, count, seeds, best, 40, 160))
        r = rows[-1]
        print(f"{name:8s} N={n} ext={ext!s:5s} success {100 * r['success']:.1f} % in {r['seconds']:.2f} s", flush=True)
    meta = run_metadata(args.quick, ("jax", "jaxlib"), "PCC IK, CR-Solver protocol",
                        device=str(jax.devices()[0].device_kind))
    suffix = f"planning_{args.device_tag}" + ("_quick" if args.quick else "")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{suffix}.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2))
    table = markdown(rows, meta)
    (args.out / f"{suffix}.md").write_text(table + "\n")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
