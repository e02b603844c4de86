"""Scene construction from models, matplotlib drawing, GIF export (see package docstring)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..actuation import Tendons


def scene_of_rod(model, q, num_points: int = 41) -> dict:
    """Backbone, radii and tendon paths of a PCS rod at configuration ``q`` (numpy, world
    frame, planar models embedded in the x-y plane)."""
    import jax.numpy as jnp

    q = jnp.asarray(q, model.params.length.dtype)
    s = jnp.linspace(0.0, model.total_length, num_points, dtype=q.dtype)
    poses = np.asarray(model.forward_kinematics_batched(q, s), dtype=float)
    seg = np.asarray(model.locate(s)[0])
    radius = np.asarray(model.params.radius, dtype=float)[seg]
    planar = poses.shape[-1] == 3
    if planar:
        R = np.zeros((num_points, 3, 3))
        R[:, :2, :2] = poses[:, :2, :2]
        R[:, 2, 2] = 1.0
        p = np.concatenate([poses[:, :2, 2], np.zeros((num_points, 1))], axis=-1)
    else:
        R, p = poses[:, :3, :3], poses[:, :3, 3]
    scene = {"backbone": p, "radius": radius, "tendons": [], "markers": [], "spheres": []}
    act = model.actuation
    if isinstance(act, Tendons):
        off = np.asarray(act.offsets, dtype=float)
        frac = np.asarray(model.locate(s)[1]) / np.asarray(model.params.length)[seg]
        for j in range(off.shape[0]):
            o = off[j][seg]  # (P,) / (P, 2) straight, (P, 2) / (P, 2, 2) linear
            if act.routing == "linear":
                o = o[..., 0] + (o[..., 1] - o[..., 0]) * (frac if planar else frac[:, None])
            local = np.zeros((num_points, 3))
            if planar:
                local[:, 1] = o
            else:
                local[:, 1:] = o
            scene["tendons"].append(p + np.einsum("pij,pj->pi", R, local))
    return scene


def _auto_bounds(scene: dict) -> np.ndarray:
    pts = [scene["backbone"]] + [np.asarray(m[1])[None] for m in scene.get("markers", [])]
    pts += [np.asarray(c)[None] for c, _ in scene.get("spheres", [])]
    pts += [np.asarray(c) for _, c, _ in scene.get("curves", [])]
    allp = np.concatenate(pts, axis=0)
    centre = 0.5 * (allp.min(0) + allp.max(0))
    half = 0.55 * max(float(np.max(allp.max(0) - allp.min(0))), 0.05)
    return np.stack([centre - half, centre + half], axis=-1)


def render_rgb(scene: dict, width: int = 480, height: int = 480, elev: float = 20.0, azim: float = -60.0) -> np.ndarray:
    """Draw ``scene`` headlessly; returns an ``(height, width, 3)`` uint8 image."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    dpi = 100
    fig = Figure(figsize=(width / dpi, height / dpi), dpi=dpi)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_subplot(projection="3d")
    ax.view_init(elev=elev, azim=azim)
    bb = scene["backbone"]
    # Tube: backbone line with a width proportional to the radius (in points).
    width = scene.get("line_width") or max(2.0, 400 * float(np.mean(scene["radius"])))
    ax.plot(*bb.T, color="tab:orange", lw=width, solid_capstyle="round")
    for path in scene.get("tendons", []):
        ax.plot(*np.asarray(path).T, color="0.25", lw=0.8)
    for name, path, color in scene.get("curves", []):
        ax.plot(*np.asarray(path).T, color=color, lw=1.2, label=name)
    for name, pos, color in scene.get("markers", []):
        ax.scatter(*np.asarray(pos)[:, None], color=color, s=40, depthshade=False, label=name)
    for start, vec, color in scene.get("arrows", []):
        ax.quiver(*np.asarray(start), *np.asarray(vec), color=color, lw=1.5)
    u, v = np.mgrid[0 : 2 * np.pi : 16j, 0 : np.pi : 9j]
    for centre, r in scene.get("spheres", []):
        c = np.asarray(centre)
        ax.plot_surface(
            c[0] + r * np.cos(u) * np.sin(v),
            c[1] + r * np.sin(u) * np.sin(v),
            c[2] + r * np.cos(v),
            color="tab:red",
            alpha=0.35,
            linewidth=0,
        )
    bounds = np.asarray(scene["bounds"]) if scene.get("bounds") is not None else _auto_bounds(scene)
    ax.set_xlim(*bounds[0])
    ax.set_ylim(*bounds[1])
    ax.set_zlim(*bounds[2])
    ax.set_box_aspect((1, 1, 1))
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_zlabel("z [m]")
    if scene.get("markers") or scene.get("curves"):
        ax.legend(loc="upper left", fontsize=7)
    if scene.get("title"):
        ax.set_title(scene["title"], fontsize=9)
    canvas.draw()
    img = np.asarray(canvas.buffer_rgba())[..., :3].copy()
    return img


def write_gif(frames, path, fps: float = 15.0) -> Path:
    """Write ``frames`` (sequence of ``(H, W, 3)`` uint8) to a GIF at ``fps``."""
    from PIL import Image

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    images = [Image.fromarray(np.asarray(f, dtype=np.uint8)) for f in frames]
    if not images:
        raise ValueError("frames: need at least one frame")
    images[0].save(path, save_all=True, append_images=images[1:], duration=int(round(1000.0 / fps)), loop=0)
    return path
