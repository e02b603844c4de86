"""Batched inverse kinematics on this CPU, with the CR-Solver paper's protocol (Tables I/II).

Robots: PCC continuum robots with 1 m segments and radius 0.1 m, 3 and 4 segments,
inextensible (L = 1 m) and extensible (L in [0.5, 1.5] m). Targets: end-effector poses of
configurations drawn uniformly from the bounds (so every target is reachable). Solver: the
two-stage beam search of :func:`sorogym.planning.make_ik_solver` (128 seeds, the best 8
refined, 200 LM iterations in all: 40 coarse + 160 fine). Success: pose error
``|log(T^-1 T*)| < 0.01``, within bounds, and, with obstacles, no penetration.

* ``free``: 1000 targets without obstacles (Table I);
* ``lattice``: 100 collision-free targets (clearance >= the 1 cm safety margin the solver
  keeps, so the constrained problem has an exact solution) among the 27-sphere lattice (radius 0.2 m,
  spacing 0.8/0.8/1.0 m) of Table II. The paper does not say where the lattice sits; here
  its centre is at (0.4, 0.4, 1.5) m, so the base stands in the middle of a lattice cell
  and the spheres fill heights 0.5-2.5 m of the robot's 3-4 m reach (about a third of
  random configurations are collision-free; centred on the base axis, none are).

All targets of a case go through the solver in one batch. Time is the wall time of the
compiled solve (compilation reported separately).

Path following (Table III protocol): the 3-segment inextensible robot follows a square, a
sinusoid and a letter "R" of 150 reference poses (0.2 m across, constant orientation, in
the tool x-y plane of the configuration ``PATH_CENTER``; every waypoint is reachable on
its own). Reported: position and rotation error over the waypoints, time per path.

Trajectory planning (Sec. V-C protocol): random scenes of 27 spheres (radii uniform in
[0.15, 0.30] m, centres uniform in the 3 x 3 x 3 m cube around the base; spheres within
0.3 m of the base are redrawn), collision-free start/goal pairs whose end effectors are at
least 0.1 x 3 m apart; 33-waypoint trajectories planned with the roadmap (512 nodes,
8 neighbours) and the straight line as candidates, and with the straight line alone.
Success: collision-free (checked densely between waypoints) and within the tendon speed
limit.

    .venv/bin/python scripts/bench_planning.py [--quick | --smoke] [--device-tag cpu] [--static-only]
                                               [--out results/bench]

Writes <out>/planning_<tag>.json and .md (<out>: ``--out``, default results/bench; with
``--smoke``, <tmp>/sorogym-smoke) and prints the table.
``--static-only``: the static inverse problem on TendonReaching-v0's arm (128 goals of its
goal bank) and its two goal samplings (random-tension equilibria, and workspace sampling by
static inverse kinematics: 512 goals each, build time and evenness), written to
<out>/planning_static_<tag>.json and .md.

``--quick``: 50 / 10 IK targets with 32 seeds, 40-waypoint paths, one trajectory scene of
4 queries on a 128-node roadmap, 16 / 32 static goals (files ``*_quick``).
``--smoke``: the tiniest sizes that still run every code path once, for the tests: one IK
target per case with 8 seeds (so one compiled batch shape), 8-waypoint paths, one
trajectory query on a 16-node roadmap with 17 waypoints; with ``--static-only``, 4 static
goals and goal banks of 8 goals. Files ``planning_<tag>_smoke.*`` and
``planning_static_<tag>_smoke.*``; the numbers say nothing about speed or success at full
size.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from sorogym.lie import so3  # noqa: E402
from sorogym.planning import (  # noqa: E402
    PATH_CENTER,
    PATH_KINDS,
    SUCCESS,
    PCCRobot,
    Spheres,
    build_roadmap,
    make_ik_solver,
    make_path_follower,
    make_trajectory_refiner,
    plan_trajectory,
    reference_path,
    robot_clearance,
    sample_free,
)
from sorogym.provenance import run_metadata  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SMOKE_OUT = Path(tempfile.gettempdir()) / "sorogym-smoke"  # --smoke without --out: never results/

MARGIN = 0.01  # safety margin [m] of the collision constraint (targets are sampled to satisfy it too)
PAPER_PATHS = {"square": (3.03, 0.47, 0.115), "sinusoid": (3.76, 0.25, 0.080), "letter": (3.63, 0.57, 0.122)}

#: sizes per mode: IK targets (free / lattice), beam-search seeds / refined / LM iterations
#: (coarse, fine), path waypoints and the path follower's seeds / refined, trajectory scenes /
#: queries per scene / roadmap nodes / roadmap neighbours / trajectory intervals, static
#: inverse goals, goal-bank goals (and the candidates of the env's own bank, the workspace
#: sampler's box equilibria and candidate batch; None: the library's defaults)
SIZES = {
    "full": dict(
        free=1000, lattice=100, seeds=128, best=8, coarse=40, fine=160,
        path_waypoints=150, path_seeds=32, path_best=4,
        scenes=3, pairs=20, nodes=512, neighbours=8, horizon=32,
        static_goals=128, bank_goals=512, goal_candidates=None, box_samples=None, box_batch=None,
    ),
    "quick": dict(
        free=50, lattice=10, seeds=32, best=4, coarse=40, fine=160,
        path_waypoints=40, path_seeds=32, path_best=4,
        scenes=1, pairs=4, nodes=128, neighbours=8, horizon=32,
        static_goals=16, bank_goals=32, goal_candidates=None, box_samples=None, box_batch=None,
    ),
    "smoke": dict(
        free=1, lattice=1, seeds=8, best=2, coarse=40, fine=160,
        path_waypoints=8, path_seeds=8, path_best=2,
        scenes=1, pairs=1, nodes=16, neighbours=4, horizon=16,
        static_goals=4, bank_goals=8, goal_candidates=64, box_samples=64, box_batch=16,
    ),
}  # fmt: skip

PAPER = {  # CR-Solver, Tables I and II (its CPU figure: 404.29 s for 1000 targets)
    ("free", 3, False): {"success": 1.0, "cpu_s": 404.29, "gpu_s": 0.46, "error": 3.74e-4},
    ("lattice", 3, False): {"success": 1.0, "gpu_s": 0.30, "error": 1.00e-4},
    ("lattice", 4, True): {"success": 1.0, "gpu_s": 0.323, "error": 3.30e-5},
}


def lattice_obstacles() -> Spheres:
    return Spheres.lattice(shape=(3, 3, 3), spacing=(0.8, 0.8, 1.0), radius=0.2, origin=(0.4, 0.4, 1.5))


def sample_targets(robot, key, count, obstacles=None, min_clearance=0.0, max_rounds=50):
    """End poses of ``count`` random configurations (collision-free ones with obstacles)."""
    clearances = jax.jit(jax.vmap(lambda q: robot_clearance(robot, obstacles, q)))
    end_poses = jax.jit(jax.vmap(robot.end_pose))
    poses = []
    for _ in range(max_rounds):
        if sum(p.shape[0] for p in poses) >= count:
            break
        key, sub = jax.random.split(key)
        qs = robot.sample(sub, 4 * count, jnp.float64)
        if obstacles is not None:
            qs = qs[np.asarray(clearances(qs)) > min_clearance]
        poses.append(end_poses(qs))
    found = sum(p.shape[0] for p in poses)
    if found < count:
        raise RuntimeError(
            f"only {found} of {count} collision-free configurations in {max_rounds} rounds of "
            f"{4 * count} samples: the obstacles leave too little free space"
        )
    return jnp.concatenate(poses)[:count]


def compile_then_time(fn, *args):
    """``(result, compile_s, seconds)``: ``fn(*args, PRNGKey(0))`` once to compile, then
    timed on ``PRNGKey(1)``."""
    t0 = time.perf_counter()
    jax.block_until_ready(fn(*args, jax.random.PRNGKey(0)))
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    result = jax.block_until_ready(fn(*args, jax.random.PRNGKey(1)))
    return result, compile_s, time.perf_counter() - t0


def run_case(name, segments, extensible, count, seeds, best, coarse, fine):
    robot = PCCRobot(segments, length=1.0, radius=0.1, extensible=extensible)
    obstacles = lattice_obstacles() if name == "lattice" else None
    targets = sample_targets(robot, jax.random.PRNGKey(segments + 10 * extensible), count, obstacles, MARGIN)
    solve = make_ik_solver(
        robot,
        obstacles=obstacles,
        num_seeds=seeds,
        num_best=best,
        coarse_iterations=coarse,
        fine_iterations=fine,
        tolerance=1e-2,
        margin=MARGIN,
    )
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
        "case": name,
        "segments": segments,
        "extensible": extensible,
        "targets": int(count),
        "seeds": seeds,
        "best": best,
        "iterations": coarse + fine,
        "success": float(ok.mean()),
        "seconds": seconds,
        "compile_s": compile_s,
        "pose_error_mean": float(np.asarray(result.error)[ok].mean()) if ok.any() else None,
        "pose_error_max": float(np.asarray(result.error)[ok].max()) if ok.any() else None,
        "status_counts": {str(k): int(v) for k, v in zip(*np.unique(status, return_counts=True), strict=True)},
        "paper_success": paper.get("success"),
        "paper_cpu_s": paper.get("cpu_s"),
        "paper_gpu_s": paper.get("gpu_s"),
        "paper_error": paper.get("error"),
    }


def run_paths(num_waypoints: int, size: float = 0.2, seeds: int = 32, best: int = 4):
    """Each path of ``PATH_KINDS``, ``num_waypoints`` poses ``size`` [m] across, followed with
    ``seeds`` beam-search seeds (``best`` refined) where the warm start misses."""
    robot = PCCRobot(3, length=1.0, radius=0.1)
    frame = np.asarray(robot.end_pose(jnp.asarray(PATH_CENTER)))
    follow = make_path_follower(robot, num_seeds=seeds, num_best=best)

    @jax.jit
    def rotation_error_deg(q, refs):
        """Angle [deg] between the reached and the reference orientation at each waypoint."""
        poses = jax.vmap(robot.end_pose)(q)
        angles = jax.vmap(lambda a, b: jnp.linalg.norm(so3.log(a.T @ b)))(poses[:, :3, :3], refs[:, :3, :3])
        return jnp.degrees(angles)

    rows = []
    for kind in PATH_KINDS:
        refs = jnp.asarray(reference_path(kind, frame, size, num_waypoints))
        result, compile_s, seconds = compile_then_time(follow, refs)
        rot = np.asarray(rotation_error_deg(result.q, refs))
        pos = 1e3 * np.asarray(result.position_error)
        paper = PAPER_PATHS[kind]
        rows.append(
            {
                "path": kind,
                "waypoints": num_waypoints,
                "size_m": size,
                "seconds": seconds,
                "compile_s": compile_s,
                "position_error_mm_mean": float(pos.mean()),
                "position_error_mm_max": float(pos.max()),
                "rotation_error_deg_mean": float(rot.mean()),
                "rotation_error_deg_max": float(rot.max()),
                "max_tendon_speed": float(result.max_tendon_speed),
                "paper_position_error_mm": paper[0],
                "paper_rotation_error_deg": paper[1],
                "paper_gpu_s": paper[2],
            }
        )
        r = rows[-1]
        print(
            f"path {kind:8s} position error {r['position_error_mm_mean']:.4f} mm "
            f"(max {r['position_error_mm_max']:.4f}), "
            f"rotation {r['rotation_error_deg_mean']:.4f} deg, {seconds:.2f} s",
            flush=True,
        )
    return rows


def run_trajectories(scenes: int, pairs: int, nodes: int, horizon: int = 32, neighbours: int = 8):
    """``pairs`` start/goal queries in each of ``scenes`` random scenes, planned with a roadmap
    of ``nodes`` nodes (``neighbours`` each) and the straight line as candidates, and with the
    line alone; ``horizon`` intervals per trajectory."""
    robot = PCCRobot(3, length=1.0, radius=0.1)
    rng = np.random.default_rng(0)
    records = {"roadmap": [], "linear": []}
    build_s = []
    for scene in range(scenes):
        obstacles = Spheres.random(rng)
        t0 = time.perf_counter()
        roadmap = build_roadmap(robot, jax.random.PRNGKey(100 + scene), obstacles, nodes, neighbours, margin=0.01)
        build_s.append(time.perf_counter() - t0)
        refiner = make_trajectory_refiner(robot, obstacles)
        ends = sample_free(robot, jax.random.PRNGKey(200 + scene), 8 * pairs, obstacles, 0.01)
        tips = np.asarray(jax.jit(jax.vmap(robot.end_pose))(ends)[:, :3, 3])
        starts, goals = [], []
        for i in range(0, ends.shape[0] - 1, 2):
            if np.linalg.norm(tips[i] - tips[i + 1]) >= 0.1 * 3.0 and len(starts) < pairs:
                starts.append(ends[i])
                goals.append(ends[i + 1])
        for warm in (roadmap, None):  # compile for two candidates and for one
            plan_trajectory(robot, starts[0], goals[0], obstacles, warm, horizon, k=neighbours, refiner=refiner)
        for start, goal in zip(starts, goals, strict=True):
            for mode in ("roadmap", "linear"):
                t0 = time.perf_counter()
                warm = roadmap if mode == "roadmap" else None
                plan = plan_trajectory(robot, start, goal, obstacles, warm, horizon, k=neighbours, refiner=refiner)
                seconds = time.perf_counter() - t0
                records[mode].append(
                    {
                        "success": plan.success,
                        "seconds": seconds,
                        "path_length": float(plan.trajectory.path_length),
                        "initialization": plan.initialization,
                    }
                )
        print(
            f"scene {scene}: roadmap {np.mean([r['success'] for r in records['roadmap']]):.1%}, linear "
            f"{np.mean([r['success'] for r in records['linear']]):.1%} so far",
            flush=True,
        )
    rows = []
    for mode, recs in records.items():
        ok = [r for r in recs if r["success"]]
        rows.append(
            {
                "initialization": mode,
                "queries": len(recs),
                "success": float(np.mean([r["success"] for r in recs])),
                "seconds_mean": float(np.mean([r["seconds"] for r in recs])),
                "path_length_mean": float(np.mean([r["path_length"] for r in ok])) if ok else None,
                "roadmap_chosen": int(sum(r["initialization"] == "roadmap" for r in recs)),
                "roadmap_build_s_mean": float(np.mean(build_s)) if mode == "roadmap" else None,
                "roadmap_nodes": nodes if mode == "roadmap" else None,
                "waypoints": horizon + 1,
            }
        )
    return rows


def run_static_inverse(count: int, candidates: int | None = None):
    """Tensions for ``count`` goals of TendonReaching-v0's goal bank (equilibria under random
    tensions, so reachable), verified by the continuation equilibrium; success = tip within
    1 mm. ``candidates``: the bank's ``num_goal_candidates`` (None: the env's default)."""
    import sorogym
    from sorogym.planning import make_static_inverse_solver

    bank = {} if candidates is None else {"num_goal_candidates": candidates}
    env = sorogym.make("TendonReaching-v0", dtype="float64", **bank)
    goals = jnp.asarray(np.asarray(env.goal_bank)[:count, :3])
    solve = make_static_inverse_solver(env.model, 0.0, env.config.max_tension, tolerance=1e-3)
    result, compile_s, seconds = compile_then_time(solve, goals)
    ok = np.asarray(result.status) == SUCCESS
    err = 1e3 * np.asarray(result.error)
    return {
        "env": "TendonReaching-v0",
        "goals": count,
        "success": float(ok.mean()),
        "seconds": seconds,
        "compile_s": compile_s,
        "error_mm_median": float(np.median(err)),
        "error_mm_max": float(err.max()),
        "max_tension": float(np.max(np.asarray(result.tensions))),
    }


def run_goal_sampling(count: int, box_samples: int | None = None, batch: int | None = None):
    """TendonReaching-v0's goal banks of ``count`` goals (float32, as the env runs): random-
    tension equilibria against workspace sampling by static inverse kinematics. Reports the
    build time (compilation included), the acceptance of the rejection sampler and how
    evenly the goals cover the space: the spread per axis and the coefficient of variation
    of nearest-neighbour distances (lower = more even). ``box_samples`` and ``batch``: the
    workspace sampler's box equilibria and candidates per solve (None: its defaults)."""
    from scipy.spatial import cKDTree

    import sorogym
    from sorogym.envs.goals import equilibrium_goal_bank, workspace_goal_bank

    env = sorogym.make("TendonReaching-v0", num_goal_candidates=8)
    model, max_tension = env.model, env.config.max_tension
    rows = []
    for sampling in ("equilibrium", "workspace"):
        t0 = time.perf_counter()
        if sampling == "workspace":
            options = {k: v for k, v in (("box_samples", box_samples), ("batch", batch)) if v is not None}
            tips, _, _, _, acceptance = workspace_goal_bank(model, jax.random.PRNGKey(0), count, max_tension, **options)
        else:
            tips, *_ = equilibrium_goal_bank(model, jax.random.PRNGKey(0), count, max_tension, iterations=25, ramp=10)
            acceptance = None
        seconds = time.perf_counter() - t0
        tips = np.asarray(tips, float)[:count]
        nn = cKDTree(tips).query(tips, k=2)[0][:, 1]
        rows.append(
            {
                "sampling": sampling,
                "goals": int(tips.shape[0]),
                "build_s": seconds,
                "acceptance": acceptance,
                "spread_mm": (1e3 * tips.std(axis=0)).tolist(),
                "nn_mean_mm": float(1e3 * nn.mean()),
                "nn_cv": float(nn.std() / nn.mean()),
            }
        )
    return rows


def markdown_goal_sampling(rows) -> str:
    lines = [
        "| goal sampling | goals | build [s] | acceptance | spread x / y / z [mm] | nearest-neighbour mean [mm] | "
        "nearest-neighbour CV |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        acc = "-" if r["acceptance"] is None else f"{100 * r['acceptance']:.1f} %"
        spread = " / ".join(f"{v:.1f}" for v in r["spread_mm"])
        lines.append(
            f"| {r['sampling']} | {r['goals']} | {r['build_s']:.1f} | {acc} | {spread} | {r['nn_mean_mm']:.2f} | "
            f"{r['nn_cv']:.2f} |"
        )
    return "\n".join(lines)


def markdown(rows, meta) -> str:
    lines = [
        f"{meta['device']}: {meta['cpu'].get('model')} ({meta['cpu'].get('cpu_count')} cores), "
        f"jax {meta['versions']['jax']}, "
        f"float64, git {str(meta['git_revision'])[:8]}, {meta['date']}.",
        "",
        "| case | N | extensible | targets | success | solve [s] | compile [s] | pose error (mean / max) | "
        "CR-Solver success | CR-Solver CPU [s] | CR-Solver GPU [s] |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        err = "-" if r["pose_error_mean"] is None else f"{r['pose_error_mean']:.1e} / {r['pose_error_max']:.1e}"
        fmt = lambda v, f: "-" if v is None else f.format(v)  # noqa: E731
        lines.append(
            f"| {r['case']} | {r['segments']} | {r['extensible']} | {r['targets']} | {100 * r['success']:.1f} % | "
            f"{r['seconds']:.2f} | {r['compile_s']:.1f} | {err} | {fmt(r['paper_success'], '{:.0%}')} | "
            f"{fmt(r['paper_cpu_s'], '{:.1f}')} | {fmt(r['paper_gpu_s'], '{:.2f}')} |"
        )
    lines += [
        "",
        f"Solver: {rows[0]['seeds']} seeds, best {rows[0]['best']} refined, {rows[0]['iterations']} "
        "LM iterations in all; success = pose error < 0.01, in bounds, no penetration.",
    ]
    return "\n".join(lines)


def markdown_paths(rows) -> str:
    lines = [
        "| path | waypoints | position error mean / max [mm] | rotation error mean / max [deg] | time [s] | "
        "compile [s] | CR-Solver position [mm] | CR-Solver rotation [deg] | CR-Solver GPU [s] |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['path']} | {r['waypoints']} | "
            f"{r['position_error_mm_mean']:.4f} / {r['position_error_mm_max']:.4f} | "
            f"{r['rotation_error_deg_mean']:.4f} / {r['rotation_error_deg_max']:.4f} | {r['seconds']:.2f} | "
            f"{r['compile_s']:.1f} | {r['paper_position_error_mm']} | {r['paper_rotation_error_deg']} | "
            f"{r['paper_gpu_s']} |"
        )
    return "\n".join(lines)


def markdown_trajectories(rows) -> str:
    lines = [
        "| initialisation | queries | success | mean time [s] | mean path length [m] | roadmap build [s] |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        length = "-" if r["path_length_mean"] is None else f"{r['path_length_mean']:.2f}"
        build = "-" if r["roadmap_build_s_mean"] is None else f"{r['roadmap_build_s_mean']:.1f}"
        name = "roadmap + line" if r["initialization"] == "roadmap" else "line only"
        lines.append(
            f"| {name} | {r['queries']} | {100 * r['success']:.1f} % | {r['seconds_mean']:.2f} | {length} | {build} |"
        )
    return "\n".join(lines)


def run_metadata_for(mode: str, notes: str, sizes: dict) -> dict:
    """``run_metadata`` of a report at ``mode``'s ``sizes`` (a smoke run says so in its notes)."""
    if mode == "smoke":
        notes = f"smoke run (tiniest sizes, every code path once; not a benchmark): {notes}"
    return run_metadata(
        mode == "quick",
        ("jax", "jaxlib"),
        notes,
        smoke=mode == "smoke",
        sizes=sizes,
        device=str(jax.devices()[0].device_kind),
    )


def static_part(out: Path, tag: str, mode: str) -> None:
    """The static inverse problem and the goal samplings; writes planning_static_<tag>[_mode].*"""
    sz = SIZES[mode]
    row = run_static_inverse(sz["static_goals"], sz["goal_candidates"])
    goal_rows = run_goal_sampling(sz["bank_goals"], sz["box_samples"], sz["box_batch"])
    meta = run_metadata_for(mode, "static inverse, TendonReaching-v0", sz)
    suffix = f"planning_static_{tag}" + ("" if mode == "full" else f"_{mode}")
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{suffix}.json").write_text(json.dumps({"meta": meta, "row": row, "goal_sampling": goal_rows}, indent=2))
    table = (
        "| env | goals | success (< 1 mm) | error median / max [mm] | solve [s] | compile [s] |\n"
        "|---|---|---|---|---|---|\n"
        f"| {row['env']} | {row['goals']} | {100 * row['success']:.1f} % | {row['error_mm_median']:.1e} / "
        f"{row['error_mm_max']:.2f} | {row['seconds']:.1f} | {row['compile_s']:.0f} |\n\n"
        + markdown_goal_sampling(goal_rows)
    )
    (out / f"{suffix}.md").write_text(table + "\n")
    print(f"{table}\nwrote {out / suffix}.json and .md")


def planning_part(out: Path, tag: str, mode: str) -> None:
    """Batched IK, path following and trajectory planning; writes planning_<tag>[_mode].*"""
    sz = SIZES[mode]
    free_n, lattice_n = sz["free"], sz["lattice"]
    cases = [
        ("free", 3, False, free_n),
        ("free", 3, True, free_n),
        ("free", 4, False, free_n),
        ("free", 4, True, free_n),
        ("lattice", 3, False, lattice_n),
        ("lattice", 4, True, lattice_n),
    ]
    rows = []
    for name, n, ext, count in cases:
        rows.append(run_case(name, n, ext, count, sz["seeds"], sz["best"], sz["coarse"], sz["fine"]))
        r = rows[-1]
        print(f"{name:8s} N={n} ext={ext!s:5s} success {100 * r['success']:.1f} % in {r['seconds']:.2f} s", flush=True)
    path_rows = run_paths(sz["path_waypoints"], seeds=sz["path_seeds"], best=sz["path_best"])
    trajectory_rows = run_trajectories(sz["scenes"], sz["pairs"], sz["nodes"], sz["horizon"], sz["neighbours"])
    meta = run_metadata_for(mode, "PCC IK, CR-Solver protocol", sz)
    suffix = f"planning_{tag}" + ("" if mode == "full" else f"_{mode}")
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{suffix}.json").write_text(
        json.dumps({"meta": meta, "rows": rows, "paths": path_rows, "trajectories": trajectory_rows}, indent=2)
    )
    table = "\n\n".join(
        [
            markdown(rows, meta),
            "Path following (3 segments, inextensible):",
            markdown_paths(path_rows),
            "Trajectory planning (3 segments, random 27-sphere scenes):",
            markdown_trajectories(trajectory_rows),
        ]
    )
    (out / f"{suffix}.md").write_text(table + "\n")
    print(f"{table}\nwrote {out / suffix}.json and .md")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = ap.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="50 / 10 targets, 32 seeds (a short run)")
    size.add_argument(
        "--smoke",
        action="store_true",
        help="tiniest sizes that run every code path once (files *_smoke; for the tests)",
    )
    ap.add_argument("--device-tag", default="cpu")
    ap.add_argument(
        "--out", type=Path, help="output directory (default results/bench; with --smoke <tmp>/sorogym-smoke)"
    )
    ap.add_argument(
        "--static-only",
        action="store_true",
        help="only the static inverse problem (writes planning_static_<tag>.json/.md)",
    )
    args = ap.parse_args(argv)
    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    out = args.out or (SMOKE_OUT if args.smoke else ROOT / "results" / "bench")
    if args.static_only:
        static_part(out, args.device_tag, mode)
    else:
        planning_part(out, args.device_tag, mode)
    return 0


if __name__ == "__main__":
    sys.exit(main())
