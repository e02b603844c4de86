"""Headless rendering of soft-robot scenes (matplotlib, Agg backend) and GIF export.

A *scene* is a plain dict of numpy arrays in the world frame [m]:

* ``backbone``: ``(p, 3)`` backbone points base to tip, ``radius``: ``(p,)`` radii;
* ``tendons``: list of ``(p, 3)`` tendon paths (optional);
* ``markers``: list of ``(name, (3,) position, color)`` (targets, goals);
* ``arrows``: list of ``((3,) start, (3,) vector, color)`` (goal directions; optional);
* ``spheres``: list of ``((3,) centre, radius)`` obstacles (optional);
* ``curves``: list of ``(name, (k, 3) points, color)`` polylines (reference paths, tip
  traces; optional);
* ``title``: a caption (optional); ``line_width``: the backbone's width in points
  (optional; default from the radius, sized for robots of some 10 cm);
* ``bounds``: ``((xmin, xmax), (ymin, ymax), (zmin, zmax))`` view box (optional).

:func:`scene_of_rod` builds the robot part from a model and ``q``; envs add their markers
(``SoroEnv.render_scene``). :func:`render_rgb` draws a scene into an ``(H, W, 3)`` uint8
array; :func:`write_gif` writes frames to a GIF with Pillow.
"""

from ._scene import render_rgb, scene_of_rod, write_gif

__all__ = ["render_rgb", "scene_of_rod", "write_gif"]
