"""Scenes drawn with MuJoCo's OpenGL renderer (headless through EGL).

:class:`MujocoRenderer` turns the scene dicts of :mod:`sorogym.render` into MuJoCo
visual geoms every frame: rods as chains of capsules along the backbone with their local
radius, tendons as thin capsules, rigid bodies as ellipsoids and boxes, targets and payloads
as spheres, obstacles as translucent spheres, arrows and polylines; the ground as a checker
plane at its height. A free camera tracks the scene: it looks at the centre of the view
box (the scene's ``bounds``, or the box around everything drawn) from the scene's ``view``
angles ``(elevation, azimuth)`` [deg] (matplotlib's convention; default ``(20, -60)``), at
a distance that fits the box. The model holds only the world (sky, lights, floor); nothing
is simulated by MuJoCo.

The OpenGL context: ``MUJOCO_GL`` as MuJoCo reads it (``egl``, ``osmesa``, ``glfw``); unset
and without a display, EGL. When no context can be made, :class:`RenderingUnavailable`
(a ``RuntimeError``) names ``MUJOCO_GL`` and the matplotlib fallback.
"""

from __future__ import annotations

import contextlib
import os

import numpy as np

_WORLD_XML = """
<mujoco model="sorogym-scene">
  <visual>
    <global offwidth="{width}" offheight="{height}" fovy="40"/>
    <headlight ambient="0.3 0.3 0.3" diffuse="0.3 0.3 0.3" specular="0.1 0.1 0.1"/>
    <quality shadowsize="2048"/>
    <map znear="0.001" zfar="200"/>
  </visual>
  <asset>
    <texture name="sky" type="skybox" builtin="gradient" rgb1="0.93 0.95 0.98" rgb2="0.62 0.70 0.80"
             width="256" height="256"/>
    <texture name="checker" type="2d" builtin="checker" rgb1="0.72 0.72 0.70" rgb2="0.60 0.62 0.64"
             width="256" height="256"/>
    <material name="floor" texture="checker" texrepeat="1 1" texuniform="true" reflectance="0.05"/>
  </asset>
  <worldbody>
    <light name="key" directional="true" pos="0 0 5" dir="-0.3 0.4 -1" diffuse="0.45 0.45 0.45"
           castshadow="true"/>
    <light name="fill" directional="true" pos="0 0 5" dir="0.5 -0.3 -0.6" diffuse="0.2 0.2 0.2"
           castshadow="false"/>
    <geom name="floor" type="plane" size="0 0 0.05" material="floor" group="3"/>
  </worldbody>
</mujoco>
"""

ROD_RGBA = (0.95, 0.55, 0.15, 1.0)
TENDON_RGBA = (0.2, 0.2, 0.2, 1.0)
OBSTACLE_RGBA = (0.84, 0.15, 0.16, 0.35)


class RenderingUnavailable(RuntimeError):
    """No OpenGL context for MuJoCo's renderer on this machine."""


def _rgba(color, alpha: float | None = None) -> np.ndarray:
    from matplotlib.colors import to_rgba

    rgba = np.array(to_rgba(color), dtype=np.float32)
    if alpha is not None:
        rgba[3] = alpha
    return rgba


def _gl_context(width: int, height: int):
    """An OpenGL context for offscreen rendering (see the module docstring)."""
    backend = os.environ.get("MUJOCO_GL", "").strip().lower()
    headless = not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    if backend in ("", "enable", "enabled", "on", "true", "1") and headless:
        backend = "egl"
    hint = (
        "MuJoCo rendering needs an OpenGL context: set MUJOCO_GL=egl (GPU or Mesa EGL, the headless default) or "
        "MUJOCO_GL=osmesa (software) before Python starts, or pass renderer='matplotlib'"
    )
    try:
        if backend == "egl":
            from mujoco.egl import GLContext
        elif backend == "osmesa":
            from mujoco.osmesa import GLContext
        elif backend in ("disable", "disabled", "off", "false", "0"):
            raise RenderingUnavailable(f"MUJOCO_GL={backend!r} disables rendering. {hint}")
        else:
            from mujoco.glfw import GLContext
        context = GLContext(width, height)
        context.make_current()
    except RenderingUnavailable:
        raise
    except Exception as err:  # backends fail with ImportError, RuntimeError, EGL or GLFW errors
        raise RenderingUnavailable(f"no OpenGL context with MUJOCO_GL={backend or 'unset'!r} ({err}). {hint}") from err
    return context


def _on_surface(path, backbones, radii, width: float) -> np.ndarray:
    """A tendon ``path`` ``(p, 3)`` lifted onto the surface of its rod where it runs inside
    (so it shows on the opaque tube): the rod is the backbone of ``backbones`` sampled like
    the path (same ``p``) that lies closest to it; points within ``radius + width`` of the
    backbone move out radially to that distance."""
    path = np.asarray(path, float)
    candidates = [(np.asarray(b, float), np.asarray(r, float)) for b, r in zip(backbones, radii)]
    candidates = [(b, r) for b, r in candidates if b.shape == path.shape]
    if not candidates:
        return path
    b, r = min(candidates, key=lambda c: float(np.mean(np.linalg.norm(path - c[0], axis=-1))))
    d = path - b
    dist = np.linalg.norm(d, axis=-1, keepdims=True)
    reach = np.broadcast_to(r, dist.shape[:1])[:, None] + width
    lifted = b + d / np.maximum(dist, 1e-12) * reach
    return np.where((dist < reach) & (dist > 1e-12), lifted, path)


class MujocoRenderer:
    """Draws scene dicts (:mod:`sorogym.render`) into ``(height, width, 3)`` uint8 frames.

    Args:
        width, height: frame size [px].
        max_geom: visual geoms per frame (a rod of ``p`` points takes ``p - 1`` capsules).

    Keeps one OpenGL context until :meth:`close` (or garbage collection); use one renderer
    per thread.
    """

    def __init__(self, width: int = 480, height: int = 480, max_geom: int = 20_000):
        import mujoco

        if width < 16 or height < 16:
            raise ValueError(f"frame size: width and height must be >= 16 px, got {width}x{height}")
        self._mj = mujoco
        self.width, self.height = int(width), int(height)
        self._context = _gl_context(self.width, self.height)
        self._model = mujoco.MjModel.from_xml_string(_WORLD_XML.format(width=self.width, height=self.height))
        self._data = mujoco.MjData(self._model)
        mujoco.mj_forward(self._model, self._data)
        self._floor = mujoco.mj_name2id(self._model, mujoco.mjtObj.mjOBJ_GEOM, "floor")
        self._mjr = mujoco.MjrContext(self._model, mujoco.mjtFontScale.mjFONTSCALE_150.value)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN.value, self._mjr)
        self._scene = mujoco.MjvScene(self._model, maxgeom=max_geom)
        self._option = mujoco.MjvOption()
        self._camera = mujoco.MjvCamera()
        self._camera.type = mujoco.mjtCamera.mjCAMERA_FREE
        self._perturb = mujoco.MjvPerturb()
        self._rect = mujoco.MjrRect(0, 0, self.width, self.height)
        self._pixels = np.empty((self.height, self.width, 3), np.uint8)

    # -- frames -------------------------------------------------------------------------

    def render(self, scene: dict) -> np.ndarray:
        """The frame of ``scene``: ``(height, width, 3)`` uint8."""
        from ._scene import scene_bounds

        mj = self._mj
        bounds = scene_bounds(scene)
        centre = bounds.mean(axis=1)
        half = 0.5 * float(np.max(bounds[:, 1] - bounds[:, 0]))
        ground = scene.get("ground")
        self._option.geomgroup[3] = ground is not None
        if ground is not None:
            self._model.geom_pos[self._floor] = (centre[0], centre[1], float(ground))
            self._model.mat_texrepeat[0] = (1.0 / max(0.5 * half, 1e-3),) * 2  # checks of a quarter half-view
        elev, azim = scene.get("view", (20.0, -60.0))
        cam = self._camera
        cam.lookat[:] = centre
        cam.distance = 1.45 * half / np.tan(np.deg2rad(0.5 * self._model.vis.global_.fovy))
        cam.elevation = -float(np.clip(elev, -89.5, 89.5))
        cam.azimuth = float(azim) + 180.0
        self._context.make_current()
        mj.mjv_updateScene(
            self._model, self._data, self._option, self._perturb, cam, mj.mjtCatBit.mjCAT_ALL.value, self._scene
        )
        self._add_scene(scene, half)
        mj.mjr_render(self._rect, self._scene, self._mjr)
        mj.mjr_readPixels(self._pixels, None, self._rect, self._mjr)
        return np.flipud(self._pixels).copy()

    def _geom(self, kind, size=(0.0, 0.0, 0.0), pos=(0.0, 0.0, 0.0), mat=None, rgba=ROD_RGBA):
        scene = self._scene
        if scene.ngeom >= scene.maxgeom:
            raise ValueError(f"scene: more than max_geom={scene.maxgeom} geoms; build the renderer with a larger one")
        g = scene.geoms[scene.ngeom]
        mat = np.eye(3) if mat is None else np.asarray(mat, dtype=float)
        self._mj.mjv_initGeom(
            g, kind, np.asarray(size, float), np.asarray(pos, float), mat.reshape(-1), np.asarray(rgba, np.float32)
        )
        scene.ngeom += 1
        return g

    def _tube(self, points, radii, rgba, kind=None) -> None:
        """Capsules between consecutive ``points`` ``(p, 3)`` with radii ``(p,)`` (mean of ends)."""
        mj = self._mj
        kind = mj.mjtGeom.mjGEOM_CAPSULE if kind is None else kind
        points = np.asarray(points, float)
        radii = np.broadcast_to(np.asarray(radii, float), points.shape[:1])
        for k in range(points.shape[0] - 1):
            a, b = points[k], points[k + 1]
            if np.allclose(a, b):
                continue
            g = self._geom(kind, rgba=rgba)
            mj.mjv_connector(g, kind, 0.5 * (radii[k] + radii[k + 1]), a, b)

    def _add_scene(self, scene: dict, half: float) -> None:
        mj = self._mj
        sphere = mj.mjtGeom.mjGEOM_SPHERE
        thin = 0.004 * half
        if scene.get("backbone") is not None:
            self._tube(scene["backbone"], scene["radius"], ROD_RGBA)
        rods = scene.get("rods", [])
        for points, radius in rods:
            self._tube(points, radius, ROD_RGBA)
        backbones = ([scene["backbone"]] if scene.get("backbone") is not None else []) + [p for p, _ in rods]
        radii = ([scene["radius"]] if scene.get("backbone") is not None else []) + [r for _, r in rods]
        for path in scene.get("tendons", []):
            self._tube(_on_surface(path, backbones, radii, 0.5 * thin), 0.5 * thin, TENDON_RGBA)
        for shape, pose, semi, color in scene.get("bodies", []):
            kind = mj.mjtGeom.mjGEOM_ELLIPSOID if shape == "ellipsoid" else mj.mjtGeom.mjGEOM_BOX
            pose = np.asarray(pose, float)
            self._geom(kind, semi, pose[:3, 3], pose[:3, :3], _rgba(color))
        for pos, color in scene.get("dots", []):
            self._geom(sphere, (0.02 * half,) * 3, pos, rgba=_rgba(color))
        for _, pos, color in scene.get("markers", []):
            self._geom(sphere, (0.04 * half,) * 3, pos, rgba=_rgba(color))
        for centre, r in scene.get("spheres", []):
            self._geom(sphere, (float(r),) * 3, centre, rgba=OBSTACLE_RGBA)
        for _, path, color in scene.get("curves", []):
            self._tube(path, thin, _rgba(color))
        for start, vec, color in scene.get("arrows", []):
            start = np.asarray(start, float)
            g = self._geom(mj.mjtGeom.mjGEOM_ARROW, rgba=_rgba(color))
            mj.mjv_connector(g, mj.mjtGeom.mjGEOM_ARROW, 2.0 * thin, start, start + np.asarray(vec, float))

    # -- lifetime -----------------------------------------------------------------------

    def close(self) -> None:
        """Free the OpenGL context (idempotent)."""
        if getattr(self, "_mjr", None) is not None:
            self._mjr.free()
            self._mjr = None
        if getattr(self, "_context", None) is not None:
            self._context.free()
            self._context = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        # at interpreter exit the GL library may already be gone: nothing left to free then
        with contextlib.suppress(Exception):
            self.close()
