"""``sorogym plan``: plan with :mod:`sorogym.planning` on a PCC robot and render the result.

    sorogym plan follow [--path square|sinusoid|letter] [--size 0.2] [--waypoints 150]
    sorogym plan trajectory [--obstacles 27] [--seed 0] [--horizon 32]

``follow`` tracks a reference path of poses (the benchmark's paths, around a generic
configuration of the robot); ``trajectory`` plans between two random collision-free
configurations among random spheres (roadmap + straight line, refined). Both write
``plan.json`` (the figures), ``plan.npz`` (the trajectory) and ``plan.gif`` (the robot
moving along it, with the reference and the tip's trace) into ``--out``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from sorogym.planning import (
    PATH_CENTER,
    PCCRobot,
    Spheres,
    build_roadmap,
    make_path_follower,
    plan_trajectory,
    reference_path,
    sample_free,
)
from sorogym.render import render_rgb, write_gif


def _scenes(robot, Q, obstacles=None, reference=None, title="", frames=40):
    Q = jnp.asarray(Q)
    points = np.asarray(jax.jit(jax.vmap(lambda q: robot.backbone_points(q)))(Q))
    tips = points[:, -1]
    base = np.zeros((1, 3))
    spheres = (
        []
        if obstacles is None
        else [(c, float(r)) for c, r in zip(np.asarray(obstacles.centers), np.asarray(obstacles.radii), strict=True)]
    )
    allp = np.concatenate([points.reshape(-1, 3), base] + ([reference] if reference is not None else []))
    centre = 0.5 * (allp.min(0) + allp.max(0))
    half = 0.55 * float(np.max(allp.max(0) - allp.min(0)))
    bounds = np.stack([centre - half, centre + half], axis=-1)
    out = []
    for i in np.linspace(0, Q.shape[0] - 1, min(frames, Q.shape[0])).astype(int):
        backbone = np.concatenate([base, points[i]])
        curves = [("tip trace", tips[: i + 1], "tab:blue")]
        if reference is not None:
            curves.insert(0, ("reference", reference, "0.5"))
        out.append(
            {
                "backbone": backbone,
                "radius": np.full(backbone.shape[0], robot.radius),
                "spheres": spheres,
                "curves": curves,
                "bounds": bounds,
                "line_width": 6.0,
                "title": f"{title} (waypoint {i + 1}/{Q.shape[0]})",
            }
        )
    return out


def _write(out: Path, figures: dict, Q, scenes) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    (out / "plan.json").write_text(json.dumps(figures, indent=2))
    np.savez(out / "plan.npz", q=np.asarray(Q))
    write_gif([render_rgb(s, 480, 480) for s in scenes], out / "plan.gif", fps=10)
    return figures


def follow(
    path: str = "square",
    size: float = 0.2,
    waypoints: int = 150,
    out: str | Path = "plan",
    seed: int = 0,
    gif_frames: int = 40,
) -> dict:
    """Track the reference ``path`` (``size`` m, ``waypoints`` poses); returns the figures."""
    robot = PCCRobot(3, length=1.0, radius=0.1)
    frame = np.asarray(jax.jit(lambda q: robot.end_pose(q))(jnp.asarray(PATH_CENTER)))
    refs = jnp.asarray(reference_path(path, frame, size, waypoints))
    follower = make_path_follower(robot, num_seeds=32, num_best=4)
    t0 = time.perf_counter()
    result = jax.block_until_ready(follower(refs, jax.random.PRNGKey(seed)))
    seconds = time.perf_counter() - t0
    figures = {
        "task": "follow",
        "path": path,
        "size_m": size,
        "waypoints": waypoints,
        "seconds_with_compile": seconds,
        "position_error_mm_mean": float(1e3 * jnp.mean(result.position_error)),
        "position_error_mm_max": float(1e3 * jnp.max(result.position_error)),
        "max_tendon_speed": float(result.max_tendon_speed),
        "path_length_m": float(result.path_length),
    }
    scenes = _scenes(
        robot, result.q, reference=np.asarray(refs[:, :3, 3]), title=f"following a {path}", frames=gif_frames
    )
    return _write(Path(out), figures, result.q, scenes)


def trajectory(
    obstacles: int = 27, seed: int = 0, horizon: int = 32, out: str | Path = "plan", gif_frames: int = 40
) -> dict:
    """Plan between two random free configurations among ``obstacles`` random spheres over
    ``horizon`` steps; returns the figures."""
    robot = PCCRobot(3, length=1.0, radius=0.1)
    scene = Spheres.random(np.random.default_rng(seed), obstacles) if obstacles else None
    t0 = time.perf_counter()
    roadmap = build_roadmap(robot, jax.random.PRNGKey(seed), scene, num_nodes=512, k=8, margin=0.01)
    start, goal = sample_free(robot, jax.random.PRNGKey(seed + 1), 2, scene, 0.01)
    plan = plan_trajectory(robot, start, goal, scene, roadmap, horizon)
    seconds = time.perf_counter() - t0
    t = plan.trajectory
    figures = {
        "task": "trajectory",
        "obstacles": obstacles,
        "seed": seed,
        "waypoints": horizon + 1,
        "success": plan.success,
        "initialization": plan.initialization,
        "roadmap_found": plan.roadmap_found,
        "seconds_with_compile": seconds,
        "path_length_m": float(t.path_length),
        "min_clearance_m": plan.dense_clearance,
        "max_tendon_speed": float(t.max_tendon_speed),
    }
    scenes = _scenes(
        robot, t.q, scene, title=f"trajectory ({'feasible' if plan.success else 'NOT feasible'})", frames=gif_frames
    )
    return _write(Path(out), figures, t.q, scenes)


def run(task: str, **options) -> dict:
    """:func:`follow` or :func:`trajectory` (``task``) with ``options``, in float64."""
    with jax.enable_x64(True):  # the planners work in float64; scoped, the global config is left alone
        return {"follow": follow, "trajectory": trajectory}[task](**options)
