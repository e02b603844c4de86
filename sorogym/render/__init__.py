"""Headless rendering of soft-robot scenes (MuJoCo's OpenGL renderer through EGL, or
matplotlib's Agg backend) and MP4/GIF export.

A *scene* is a plain dict of numpy arrays in the world frame [m]:

* ``backbone``: ``(p, 3)`` backbone points base to tip, ``radius``: ``(p,)`` radii (a
  rod's scene; optional);
* ``rods``: list of ``((p, 3) points, (p,) radii)`` further backbones, drawn like
  ``backbone`` (a body tree's rod bodies; optional);
* ``bodies``: list of ``(shape, (4, 4) pose, (3,) semi-axes, color)`` rigid bodies, shape
  ``"ellipsoid"`` or ``"box"`` (semi-axes: half the edges) in the frame ``pose`` (optional);
* ``dots``: list of ``((3,) position, color)`` unlabelled points (payloads; optional);
* ``ground``: height ``z`` [m] of a ground plane drawn across the view (optional);
* ``tendons``: list of ``(p, 3)`` tendon paths (optional);
* ``markers``: list of ``(name, (3,) position, color)`` (targets, goals);
* ``arrows``: list of ``((3,) start, (3,) vector, color)`` (goal directions; optional);
* ``spheres``: list of ``((3,) centre, radius)`` obstacles (optional);
* ``curves``: list of ``(name, (k, 3) points, color)`` polylines (reference paths, tip
  traces; optional);
* ``title``: a caption (optional); ``line_width``: the backbones' width in points
  (optional; default from the radius: ``backbone`` sized for robots of some 10 cm, ``rods``
  at about their true diameter in the view);
* ``bounds``: ``((xmin, xmax), (ymin, ymax), (zmin, zmax))`` view box (optional).

:func:`scene_of_rod` (rods) and :func:`scene_of_tree` (a
:class:`~sorogym.models.BodyTree`: rod bodies, rigid links drawn as the uniform solid of their
mass and inertia, :func:`link_shape`, payloads) build the robot part from a model and ``q``,
:func:`scene_of_concentric_tubes` (a concentric tube robot as a stepped telescope),
:func:`scene_of_model` picks the right one; envs add their markers
(``SoroEnv.render_scene``). :func:`render_rgb` draws a scene into an ``(H, W, 3)`` uint8
array; :func:`write_png` and :func:`write_gif` write frames with Pillow;
:func:`render_tree` draws (and saves) a tree in one call.

:class:`MujocoRenderer` draws the same scenes with MuJoCo (capsule chains along the rods
with their local radius, lit, shadowed, with a tracking camera); :func:`make_renderer`
picks it where an OpenGL context exists (``MUJOCO_GL``; EGL when headless) and falls back
to matplotlib; :func:`write_video` writes MP4 (imageio-ffmpeg) or GIF.
"""

from ._mujoco import MujocoRenderer, RenderingUnavailable
from ._scene import (
    MatplotlibRenderer,
    link_shape,
    make_renderer,
    render_rgb,
    render_tree,
    scene_bounds,
    scene_of_concentric_tubes,
    scene_of_model,
    scene_of_rod,
    scene_of_tree,
    write_gif,
    write_png,
    write_video,
)

__all__ = [
    "MujocoRenderer",
    "MatplotlibRenderer",
    "RenderingUnavailable",
    "make_renderer",
    "write_video",
    "scene_bounds",
    "render_rgb",
    "render_tree",
    "scene_of_concentric_tubes",
    "scene_of_model",
    "scene_of_rod",
    "scene_of_tree",
    "link_shape",
    "write_gif",
    "write_png",
]
