"""Task pieces shared by the envs of soft crawlers on the ground (planar floating-base
rods seen from above, :func:`sorogym.robots.snake` and :func:`sorogym.robots.crawler`):
the body's heading frame, angle wrapping and the top-view scene."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np


def body_frame(model, q, head=None):
    """``(head (2,), heading angle psi, rotation (2, 2))``: the head position [m] and the
    direction from tail to head (the body's heading) in the world, and the rotation from
    that heading frame to the world (``head``: the head position when already known)."""
    head = model.forward_kinematics(q, model.total_length)[:2, 2] if head is None else head
    d = head - q[1:3]
    psi = jnp.arctan2(d[1], d[0])
    c, s = jnp.cos(psi), jnp.sin(psi)
    return head, psi, jnp.stack([jnp.stack([c, -s]), jnp.stack([s, c])])


def wrap_angle(a):
    """``a`` [rad] wrapped to (-pi, pi]."""
    return jnp.arctan2(jnp.sin(a), jnp.cos(a))


def top_view(scene: dict, centre, half: float) -> dict:
    """``scene`` seen from above (the ground is the model's plane), framed as the square of
    half-width ``half`` [m] around ``centre`` ``(2,)``."""
    c = np.asarray(centre, float)
    scene["bounds"] = ((c[0] - half, c[0] + half), (c[1] - half, c[1] + half), (-0.1, 0.1))
    scene["view"] = (90.0, -90.0)
    return scene
