"""Scene construction from models, matplotlib drawing, GIF export (see package docstring)."""

from __future__ import annotations

import functools
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
    p, radius, tendons = _rod_geometry(model, s, poses)
    return {"backbone": p, "radius": radius, "tendons": tendons, "markers": [], "spheres": []}


def _rod_geometry(model, s, poses: np.ndarray) -> tuple[np.ndarray, np.ndarray, list]:
    """Backbone points ``(P, 3)``, radii ``(P,)`` and tendon paths of the rod ``model``
    sampled at the abscissae ``s`` ``(P,)`` [m] whose world poses are ``poses``
    (``(P, 4, 4)``, or ``(P, 3, 3)`` planar)."""
    num_points = poses.shape[0]
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
    tendons = []
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
            tendons.append(p + np.einsum("pij,pj->pi", R, local))
    return p, radius, tendons


def scene_of_model(model, q, num_points: int = 41) -> dict:
    """The robot part of a scene for any model: :func:`scene_of_tree` for a
    :class:`~sorogym.models.BodyTree`, :func:`scene_of_concentric_tubes` for a concentric tube
    robot, :func:`scene_of_rod` for a rod (PCS, PlanarPCS, GVS)."""
    from ..models import BodyTree, ConcentricTubeRobot
    from ..models._planar_arm_set import PlanarArmSet

    if isinstance(model, BodyTree):
        return scene_of_tree(model, q, num_points=num_points)
    if isinstance(model, PlanarArmSet):
        return scene_of_arms(model, q, num_points=num_points)
    if isinstance(model, ConcentricTubeRobot):
        return scene_of_concentric_tubes(model, q, num_points)
    return scene_of_rod(model, q, num_points)


def scene_of_concentric_tubes(model, q, num_points: int = 61) -> dict:
    """Backbone and radii of a :class:`~sorogym.models.ConcentricTubeRobot` at ``q``: the
    radius at each point is the outer radius of the outermost tube present there (a stepped
    telescope); the tubes' tips as markers."""
    import jax.numpy as jnp

    q = jnp.asarray(q, model.params.length.dtype)
    tips = np.asarray(model.tube_tips, dtype=float)
    s = np.concatenate([np.linspace(0.0, tips[0], num_points), tips])
    points = np.asarray(_compiled_kinematics()[2](model, q, jnp.asarray(s, q.dtype)), dtype=float)
    p, tip_points, s = points[:num_points], points[num_points:], s[:num_points]
    outer = np.asarray(model.params.outer_radius, dtype=float)
    present = s[:, None] <= tips[None, :] + 1e-12  # (P, T)
    outermost = present.shape[1] - 1 - np.argmax(present[:, ::-1], axis=1)
    markers = [(f"tube{i} tip", tip_points[i], "k") for i in range(len(tips))]
    return {"backbone": p, "radius": outer[outermost], "tendons": [], "markers": markers, "spheres": []}


def scene_of_arms(model, q, num_points: int = 21) -> dict:
    """The scene of a planar multi-arm model (:class:`~sorogym.models.PlanarStar`,
    :class:`~sorogym.models.PlanarArms`) at ``q`` (the ground plane is the world x-y plane):
    every arm's backbone and tendons under ``rods`` and ``tendons``, a star's hub as a flat
    disc (thickness a third of its radius) under ``bodies``."""
    import jax.numpy as jnp

    from ..models import PlanarStar

    q = jnp.asarray(q, model.params.length.dtype)
    s = jnp.linspace(0.0, model.arm_length, num_points, dtype=q.dtype)
    rod_fk = _compiled_kinematics()[1]
    arm_q = model.arm_coordinates(q)
    scene = {"rods": [], "tendons": [], "bodies": [], "dots": [], "markers": [], "spheres": []}
    for k in range(model.num_arms):
        arm = model.mounted_arm(k)
        p, radius, tendons = _rod_geometry(arm, s, np.asarray(rod_fk(arm, arm_q[k], s), dtype=float))
        scene["rods"].append((p, radius))
        scene["tendons"] += tendons
    if not isinstance(model, PlanarStar):
        return scene
    hub = np.asarray(model.hub_pose(q), dtype=float)
    pose = np.eye(4)
    pose[:2, :2], pose[:2, 3] = hub[:2, :2], hub[:2, 2]
    r = float(model.hub_radius)
    scene["bodies"].append(("ellipsoid", pose, np.array([r, r, r / 6.0]), "tab:blue"))
    return scene


@functools.cache
def _compiled_kinematics():
    """Compiled ``(tree, q) -> body poses``, ``(rod, q_rod, s) -> rod poses`` and ``(rod, q,
    s) -> backbone positions``: models are
    arguments, so each compiles once per structure (identical arms share one compilation)."""
    import equinox as eqx

    return (
        eqx.filter_jit(lambda tree, q: tree.body_poses(q)),
        eqx.filter_jit(lambda rod, q, s: rod.forward_kinematics_batched(q, s)),
        eqx.filter_jit(lambda rod, q, s: rod.backbone_positions(q, s)),
    )


def link_shape(mass: float, com, inertia, shape: str = "ellipsoid") -> tuple[np.ndarray, np.ndarray]:
    """The uniform solid ``shape`` (``"ellipsoid"`` or ``"box"``) with a rigid body's
    ``mass`` [kg] and rotational ``inertia`` ``(3, 3)`` [kg m^2] about its centre of mass
    ``com`` ``(3,)`` [m]: ``((4, 4) pose in the body frame, (3,) semi-axes [m])`` (the box's
    semi-axes are half its edges). Exact for a box drawn as a box; a disc of radius ``r``
    and thickness ``t`` becomes an ellipsoid of semi-axes ``(1.12 r, 1.12 r, 0.65 t)``."""
    if shape not in ("ellipsoid", "box"):
        raise ValueError(f"shape: unknown {shape!r}; use 'ellipsoid' or 'box'")
    lam, V = np.linalg.eigh(np.asarray(inertia, dtype=float))
    if np.linalg.det(V) < 0:
        V[:, 2] = -V[:, 2]
    factor = (2.5 if shape == "ellipsoid" else 1.5) / float(mass)
    semi = np.sqrt(np.maximum(factor * (lam.sum() - 2.0 * lam), 0.0))
    pose = np.eye(4)
    pose[:3, :3], pose[:3, 3] = V, np.asarray(com, dtype=float)
    return pose, semi


def scene_of_tree(
    tree, q, num_points: int = 21, link_shapes: str | dict = "ellipsoid", ground: float | None = None
) -> dict:
    """The scene of a :class:`~sorogym.models.BodyTree` at configuration ``q`` ``(nq,)``:
    every rod body's backbone (``num_points`` points) and tendons under ``rods`` and
    ``tendons``, every rigid link as the uniform solid of its mass and inertia
    (:func:`link_shape`; ``link_shapes``: ``"ellipsoid"``, ``"box"``, or a dict from link
    names to either, ellipsoid elsewhere) under ``bodies``, payloads as ``dots``, and the
    ground plane at the height ``ground`` [m] if given. Kinematics: one compiled pass for the
    body frames, then each rod's own kinematics from its body frame (compiled once per rod
    structure; later frames and identical rods reuse the compilations)."""
    import jax.numpy as jnp

    q = jnp.asarray(q, tree.params.gravity.dtype)
    body_fk, rod_fk = _compiled_kinematics()[:2]
    body_poses = np.asarray(body_fk(tree, q), dtype=float)
    kinds = [tree.structure.groups[g].kind for g, _ in tree.structure.body_group]
    rods = {b: tree.rod(b) for b, kind in zip(tree.body_names, kinds, strict=True) if kind == "rod"}

    def rod_poses(b: str, s) -> np.ndarray:
        # a rod body's backbone: its body frame, then the rod's own kinematics (base pose included)
        rod, (q_idx, _) = rods[b], tree.coordinate_slices(b)
        local = rod_fk(rod, q[q_idx[len(q_idx) - rod.num_dofs :]], s)
        return body_poses[tree.body_index(b)] @ np.asarray(local, dtype=float)

    scene = {"rods": [], "tendons": [], "bodies": [], "dots": [], "markers": [], "spheres": []}
    for b, rod in rods.items():
        s = jnp.linspace(0.0, rod.total_length, num_points, dtype=q.dtype)
        p, radius, tendons = _rod_geometry(rod, s, rod_poses(b, s))
        scene["rods"].append((p, radius))
        scene["tendons"] += tendons
    params = tree.params
    links = [b for b, kind in zip(tree.body_names, kinds, strict=True) if kind == "link"]
    for k, b in enumerate(links):
        shape = link_shapes if isinstance(link_shapes, str) else link_shapes.get(b, "ellipsoid")
        local, semi = link_shape(params.link_mass[k], params.link_com[k], params.link_inertia[k], shape)
        scene["bodies"].append((shape, body_poses[tree.body_index(b)] @ local, semi, "tab:blue"))
    for k, (name, site) in enumerate(_payload_sites(tree)):
        if name in rods:
            pose = rod_poses(name, jnp.asarray([site], q.dtype))[0]
        else:
            pose = body_poses[tree.body_index(name)]
        scene["dots"].append((pose[:3, :3] @ np.asarray(params.payload_position[k]) + pose[:3, 3], "k"))
    if ground is not None:
        scene["ground"] = float(ground)
    return scene


def _payload_sites(tree) -> list[tuple[str, float]]:
    """``(body name, site abscissa)`` of every payload, in declaration order."""
    out = [None] * int(tree.params.payload_mass.shape[0])
    for gi, members, payloads in tree.structure.payload_groups:
        bodies = tree.structure.groups[gi].bodies
        for m, k in zip(members, payloads, strict=True):
            out[k] = (tree.body_names[bodies[m]], float(tree.params.payload_site[k]))
    return out


def scene_bounds(scene: dict) -> np.ndarray:
    """The view box ``(3, 2)`` [m] of ``scene``: its ``bounds``, or a cube around everything
    drawn (with a margin; the ground's height included)."""
    return np.asarray(scene["bounds"], dtype=float) if scene.get("bounds") is not None else _auto_bounds(scene)


def _auto_bounds(scene: dict) -> np.ndarray:
    pts = [np.asarray(scene["backbone"])] if scene.get("backbone") is not None else []
    pts += [np.asarray(p) for p, _ in scene.get("rods", [])]
    pts += [_solid_points(*body[:3]).reshape(-1, 3) for body in scene.get("bodies", [])]
    pts += [np.asarray(c)[None] for c, _ in scene.get("dots", [])]
    pts += [np.asarray(m[1])[None] for m in scene.get("markers", [])]
    pts += [np.asarray(c)[None] for c, _ in scene.get("spheres", [])]
    pts += [np.asarray(c) for _, c, _ in scene.get("curves", [])]
    if not pts:
        raise ValueError("scene: nothing to draw (no backbone, rods, bodies, dots, markers, spheres or curves)")
    allp = np.concatenate(pts, axis=0)
    if scene.get("ground") is not None:
        allp = np.concatenate([allp, [[allp[0, 0], allp[0, 1], float(scene["ground"])]]])
    centre = 0.5 * (allp.min(0) + allp.max(0))
    half = 0.55 * max(float(np.max(allp.max(0) - allp.min(0))), 0.05)
    return np.stack([centre - half, centre + half], axis=-1)


def _solid_points(shape: str, pose, semi, resolution: int = 24) -> np.ndarray:
    """World points ``(a, b, 3)`` of the surface grid of a ``"box"`` or ``"ellipsoid"`` of
    semi-axes ``semi`` ``(3,)`` in the frame ``pose`` ``(4, 4)``."""
    if shape == "ellipsoid":
        u, v = np.meshgrid(np.linspace(0.0, 2.0 * np.pi, resolution + 1), np.linspace(0.0, np.pi, resolution // 2 + 1))
        unit = np.stack([np.cos(u) * np.sin(v), np.sin(u) * np.sin(v), np.cos(v)], axis=-1)
    elif shape == "box":
        unit = np.array([[i, j, k] for i in (-1.0, 1.0) for j in (-1.0, 1.0) for k in (-1.0, 1.0)])[None]
    else:
        raise ValueError(f"bodies: unknown shape {shape!r}; use 'ellipsoid' or 'box'")
    pose = np.asarray(pose, dtype=float)
    return (unit * np.asarray(semi, dtype=float)) @ pose[:3, :3].T + pose[:3, 3]


_BOX_FACES = ((0, 1, 3, 2), (4, 5, 7, 6), (0, 1, 5, 4), (2, 3, 7, 6), (0, 2, 6, 4), (1, 3, 7, 5))


def _draw_body(ax, shape: str, pose, semi, color) -> None:
    pts = _solid_points(shape, pose, semi)
    if shape == "ellipsoid":
        ax.plot_surface(*np.moveaxis(pts, -1, 0), color=color, alpha=0.9, linewidth=0, shade=True)
    else:
        from mpl_toolkits.mplot3d.art3d import Poly3DCollection

        corners = pts[0]
        faces = [corners[list(f)] for f in _BOX_FACES]
        ax.add_collection3d(Poly3DCollection(faces, facecolor=color, edgecolor="0.2", linewidths=0.4, alpha=0.9))


def render_rgb(scene: dict, width: int = 480, height: int = 480, elev: float = 20.0, azim: float = -60.0) -> np.ndarray:
    """Draw ``scene`` headlessly; returns an ``(height, width, 3)`` uint8 image. A scene's
    ``"view"`` entry ``(elev, azim)`` [deg] overrides the camera (e.g. ``(90, -90)``: from
    above)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    dpi = 100
    fig = Figure(figsize=(width / dpi, height / dpi), dpi=dpi)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_subplot(projection="3d")
    elev, azim = scene.get("view", (elev, azim))
    ax.view_init(elev=elev, azim=azim)
    bounds = scene_bounds(scene)
    if scene.get("ground") is not None:
        (x0, x1), (y0, y1), z = bounds[0], bounds[1], float(scene["ground"])
        ax.plot_surface(
            np.array([[x0, x1], [x0, x1]]), np.array([[y0, y0], [y1, y1]]), np.full((2, 2), z), color="0.8", alpha=0.5
        )
    # Tubes: backbone lines with a width proportional to the radius (in points); the rods of a
    # tree at about their true diameter in the view.
    if scene.get("backbone") is not None:
        width_pt = scene.get("line_width") or max(2.0, 400 * float(np.mean(scene["radius"])))
        ax.plot(*np.asarray(scene["backbone"]).T, color="tab:orange", lw=width_pt, solid_capstyle="round")
    points_per_metre = 0.4 * min(width, height) * 72.0 / dpi / float(np.max(bounds[:, 1] - bounds[:, 0]))
    for points, radius in scene.get("rods", []):
        width_pt = scene.get("line_width") or max(1.5, 2.0 * float(np.mean(radius)) * points_per_metre)
        ax.plot(*np.asarray(points).T, color="tab:orange", lw=width_pt, solid_capstyle="round")
    for shape, pose, semi, color in scene.get("bodies", []):
        _draw_body(ax, shape, pose, semi, color)
    for pos, color in scene.get("dots", []):
        ax.scatter(*np.asarray(pos)[:, None], color=color, s=40, depthshade=False)
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
    ax.set_xlim(*bounds[0])
    ax.set_ylim(*bounds[1])
    ax.set_zlim(*bounds[2])
    ax.set_box_aspect((1, 1, 1))
    for axis in (ax.xaxis, ax.yaxis, ax.zaxis):
        axis.set_major_locator(MaxNLocator(4))
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    if abs(elev) < 89.0:
        ax.set_zlabel("z [m]")
    else:  # seen from above: the z axis is edge-on
        ax.set_zticks([])
    if scene.get("markers") or scene.get("curves"):
        ax.legend(loc="upper left", fontsize=7)
    if scene.get("title"):
        ax.set_title(scene["title"], fontsize=9)
    canvas.draw()
    img = np.asarray(canvas.buffer_rgba())[..., :3].copy()
    return img


def write_png(frame, path) -> Path:
    """Write one ``(H, W, 3)`` uint8 frame to a PNG file (parent folders created)."""
    from PIL import Image

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.asarray(frame, dtype=np.uint8)).save(path, optimize=True)
    return path


def render_tree(
    tree, q, path=None, width: int = 400, height: int = 400, elev: float = 20.0, azim: float = -60.0, **scene_options
) -> np.ndarray:
    """Draw a :class:`~sorogym.models.BodyTree` at ``q`` (:func:`scene_of_tree` with
    ``scene_options``: ``num_points``, ``link_shapes``, ``ground``; plus ``title`` and
    ``bounds`` of the scene); returns the ``(height, width, 3)`` uint8 image and writes it to
    the PNG file ``path`` if given."""
    extra = {k: scene_options.pop(k) for k in ("title", "bounds", "line_width") if k in scene_options}
    scene = scene_of_tree(tree, q, **scene_options) | extra
    frame = render_rgb(scene, width, height, elev, azim)
    if path is not None:
        write_png(frame, path)
    return frame


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


class MatplotlibRenderer:
    """:func:`render_rgb` behind the renderer interface of :func:`make_renderer`."""

    def __init__(self, width: int = 480, height: int = 480):
        self.width, self.height = int(width), int(height)

    def render(self, scene: dict) -> np.ndarray:
        return render_rgb(scene, self.width, self.height)

    def close(self) -> None:
        """Nothing to free: every frame makes and drops its own figure."""
        return None


def make_renderer(kind: str = "auto", width: int = 480, height: int = 480):
    """A renderer (``.render(scene) -> (height, width, 3) uint8``, ``.close()``):
    ``"mujoco"`` (:class:`~sorogym.render.MujocoRenderer`; raises
    :class:`~sorogym.render.RenderingUnavailable` naming ``MUJOCO_GL`` without an OpenGL
    context), ``"matplotlib"`` (:func:`render_rgb`), or ``"auto"``: MuJoCo where it can
    render, matplotlib otherwise (with a warning saying why)."""
    if kind not in ("auto", "mujoco", "matplotlib"):
        raise ValueError(f"renderer: unknown {kind!r}; use 'auto', 'mujoco' or 'matplotlib'")
    if kind == "matplotlib":
        return MatplotlibRenderer(width, height)
    from ._mujoco import MujocoRenderer, RenderingUnavailable

    try:
        return MujocoRenderer(width, height)
    except (RenderingUnavailable, ImportError) as err:
        if kind == "mujoco":
            raise
        import warnings

        warnings.warn(f"falling back to matplotlib frames: {err}", RuntimeWarning, stacklevel=2)
        return MatplotlibRenderer(width, height)


def write_video(frames, path, fps: float = 15.0) -> Path:
    """Write ``frames`` (sequence of ``(H, W, 3)`` uint8) to ``path``: an MP4 (H.264 through
    imageio's ffmpeg plugin, ``imageio-ffmpeg``) for ``.mp4``, a GIF (:func:`write_gif`) for
    ``.gif``. Frame sizes are padded to even numbers for H.264."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".gif":
        return write_gif(frames, path, fps)
    if suffix != ".mp4":
        raise ValueError(f"video path: use a .mp4 or .gif file, got {path.name!r}")
    frames = [np.asarray(f, dtype=np.uint8) for f in frames]
    if not frames:
        raise ValueError("frames: need at least one frame")
    try:
        import imageio.v2 as imageio
        import imageio_ffmpeg  # noqa: F401  (the plugin's ffmpeg binary)
    except ImportError as err:
        need = "MP4 export needs imageio and imageio-ffmpeg (the 'rl' extra); or write a .gif"
        raise ImportError(f"{need} ({err})") from err
    h, w = frames[0].shape[:2]
    pad = ((0, h % 2), (0, w % 2), (0, 0))
    path.parent.mkdir(parents=True, exist_ok=True)
    import warnings

    with warnings.catch_warnings():
        # the plugin starts ffmpeg with fork + exec; JAX's warning about fork does not apply
        warnings.filterwarnings("ignore", message="os.fork", category=RuntimeWarning)
        with imageio.get_writer(path, fps=fps, codec="libx264", quality=7, macro_block_size=1) as writer:
            for f in frames:
                writer.append_data(np.pad(f, pad, mode="edge"))
    return path
