"""Reference end-effector paths for path following: a square (sharp corners), a sinusoid
(smooth) and a letter "R" (strokes, corners and an arc), each resampled to ``num`` points
equally spaced by arc length and placed in the x-y plane of a frame (constant orientation).
"""

from __future__ import annotations

import numpy as np

PATH_KINDS = ("square", "sinusoid", "letter")
#: the configuration ``(theta, phi) x 3`` of a 3-segment PCC robot (1 m segments) whose tool
#: frame the benchmark paths are laid in: generic (not near a singularity), and every pose
#: of a 0.2 m path around it is reachable on its own
PATH_CENTER = (0.8, 0.5, 1.2, 2.5, 0.6, 1.0)


def _resample(points: np.ndarray, num: int) -> np.ndarray:
    """``num`` points equally spaced by arc length along the polyline ``points`` ``(P, 2)``."""
    seg = np.linalg.norm(np.diff(points, axis=0), axis=1)
    s = np.concatenate([[0.0], np.cumsum(seg)])
    u = np.linspace(0.0, s[-1], num)
    return np.stack([np.interp(u, s, points[:, i]) for i in range(points.shape[1])], axis=1)


def planar_shape(kind: str, num: int = 150) -> np.ndarray:
    """The shape ``(num, 2)`` in a unit box centred on the origin (side 1).

    * ``square``: the square's outline, counter-clockwise from a corner, closed;
    * ``sinusoid``: two periods of ``y = 0.5 sin(2 pi 2 x)`` for ``x`` in [-0.5, 0.5];
    * ``letter``: the capital "R" in one stroke: up the stem, round the bowl back to the
      middle of the stem, down the leg.
    """
    if num < 2:
        raise ValueError(f"num: must be >= 2, got {num}")
    if kind == "square":
        corners = np.array([[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5], [-0.5, -0.5]])
        return _resample(corners, num)
    if kind == "sinusoid":
        x = np.linspace(-0.5, 0.5, 2001)
        return _resample(np.stack([x, 0.5 * np.sin(2 * np.pi * 2 * x)], axis=1), num)
    if kind == "letter":
        a = np.linspace(np.pi / 2, -np.pi / 2, 200)
        bowl = np.stack([0.25 * np.cos(a), 0.25 + 0.25 * np.sin(a)], axis=1)  # from (0, 0.5) to (0, 0)
        stroke = np.concatenate([[[-0.25, -0.5], [-0.25, 0.5]], bowl, [[-0.25, 0.0], [0.25, -0.5]]])
        return _resample(stroke, num)
    raise ValueError(f"kind: one of {PATH_KINDS}, got {kind!r}")


def reference_path(kind: str, frame: np.ndarray, size: float, num: int = 150) -> np.ndarray:
    """Reference poses ``(num, 4, 4)``: :func:`planar_shape` scaled to ``size`` [m], laid in
    the x-y plane of ``frame`` (4x4, world) around its origin, every pose with ``frame``'s
    orientation."""
    frame = np.asarray(frame, float)
    if frame.shape != (4, 4) or not np.all(np.isfinite(frame)):
        raise ValueError("frame: must be a finite 4x4 pose")
    if not (np.isfinite(size) and size > 0):
        raise ValueError(f"size: must be finite and > 0, got {size}")
    uv = size * planar_shape(kind, num)
    poses = np.repeat(frame[None], num, axis=0)
    poses[:, :3, 3] = frame[:3, 3] + uv[:, :1] * frame[:3, 0] + uv[:, 1:] * frame[:3, 1]
    return poses
