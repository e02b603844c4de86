"""Cables routed through via points on the bodies of a :class:`~sorogym.models.BodyTree`.

A :class:`Cable` runs in straight spans between consecutive via points ``x_0, x_1, ...``,
each fixed on a body (``point`` [m] in the frame of the site ``at`` of ``body``: a rod
abscissa or a link's frame) or on the world (``body=None``: ``point`` in world
coordinates). It slides through the intermediate points without friction, so one tension
``T`` [N] acts along the whole cable: every span pulls its two ends towards each other
with ``T``, and an intermediate point feels the two spans' pulls, ``T (e_next - e_prev)``.
This is the cable of tendon-driven arms with rigid spacer plates, where the cable crosses
the plates' holes and spans the soft sections between them in straight lines, and of
fingers whose tendons run through their bones.

With the cable's length ``L(q) = sum_i |x_(i+1) - x_i|``, the generalized force of the
tension is ``tau = -(dL/dq)^T T``: the cable's column of the actuation matrix is
``a = -(dL/dq)^T = -sum_i (J_(i+1) - J_i)^T e_i`` with the spans' unit vectors
``e_i = (x_(i+1) - x_i) / |x_(i+1) - x_i|`` and the via points' world-velocity Jacobians
``J_i`` ``(3, n)`` (``dx_i/dt = J_i qd``). The tension does the work ``-T dL``; its
work-conjugate coordinate is the cable's *contraction* ``L(q_0) - L(q)``, with ``q_0``
the tree's neutral configuration. Cables pull only: a negative command is a slack cable
(zero force).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ._closures import site_lengths


@dataclasses.dataclass(eq=False)
class Cable:
    """A cable through via points on a tree's bodies (module docstring).

    Attributes:
        via: the via points in order, at least two, each ``(body, at, point)``: a body name
            (``None``: the world), the rod abscissa [m] of the site (``None``: the rod's
            tip; ignored on links and the world) and ``(3,)`` coordinates [m] in the site's
            frame (world coordinates on the world).
        name: a label for messages (default ``"cable<i>"``).
    """

    via: Sequence[tuple[Any, Any, Any]]
    name: str | None = None


class CableSet(NamedTuple):
    """The static description of a tree's cables (hashable: a static model field)."""

    names: tuple[str, ...]
    point_bodies: tuple[int, ...]  # (P,) body index of every via point; -1: the world
    point_s: tuple[float, ...]  # (P,) abscissa of every via point's site
    points: tuple[tuple[float, float, float], ...]  # (P, 3) coordinates in the site frame
    spans: tuple[tuple[int, int], ...]  # (S,) via-point index pairs of every straight span
    span_cable: tuple[int, ...]  # (S,) the cable of every span
    rest_lengths: tuple[float, ...] = ()  # (k,) lengths [m] at the neutral configuration

    @property
    def num_cables(self) -> int:
        return len(self.names)


NO_CABLES = CableSet((), (), (), (), (), ())


def describe_cables(cables, names: tuple[str, ...], site_length) -> CableSet:
    """Validate ``cables`` against the body ``names``; ``site_length(b)`` is the length [m]
    of body ``b``'s rod (``None`` for a link). Errors name the cable and the field."""
    labels, bodies, s_all, points, spans, span_cable = [], [], [], [], [], []
    for i, cable in enumerate(cables):
        if not isinstance(cable, Cable):
            raise ValueError(f"cables[{i}]: expected a Cable, got {type(cable).__name__}")
        label = cable.name or f"cable{i}"
        if label in labels:
            raise ValueError(f"cable {label!r}: name: duplicate (give each cable a distinct name)")
        via = list(cable.via)
        if len(via) < 2:
            raise ValueError(f"cable {label!r}: via: needs at least two via points, got {len(via)}")
        first = len(bodies)
        for j, entry in enumerate(via):
            if not (isinstance(entry, (tuple, list)) and len(entry) == 3):
                raise ValueError(f"cable {label!r}: via[{j}]: expected (body, at, point), got {entry!r}")
            body, at, point = entry
            p = np.asarray(point, dtype=float)
            if p.shape != (3,) or not np.all(np.isfinite(p)):
                raise ValueError(f"cable {label!r}: via[{j}]: point must be a finite (3,) vector, got {point!r}")
            if body is None:
                b, s = -1, 0.0
            else:
                if body not in names:
                    raise ValueError(f"cable {label!r}: via[{j}]: no body named {body!r}; bodies are {names}")
                b = names.index(body)
                length = site_length(b)
                s = 0.0 if length is None else float(length if at is None else at)
                if length is not None and not (0.0 <= s <= float(length) + 1e-12):
                    raise ValueError(f"cable {label!r}: via[{j}]: at {s} outside the rod [0, {float(length)}]")
            bodies.append(b)
            s_all.append(s)
            points.append(tuple(float(x) for x in p))
        for j in range(len(via) - 1):
            a, c = first + j, first + j + 1
            if bodies[a] == bodies[c] and s_all[a] == s_all[c] and points[a] == points[c]:
                raise ValueError(f"cable {label!r}: via[{j + 1}]: repeats via point {j} (a span of zero length)")
            spans.append((a, c))
            span_cable.append(i)
        labels.append(label)
    if not labels:
        return NO_CABLES
    return CableSet(tuple(labels), tuple(bodies), tuple(s_all), tuple(points), tuple(spans), tuple(span_cable))


def build_cables(tree, cables) -> CableSet:
    """The :class:`CableSet` of ``cables`` on ``tree`` (a body tree under construction, its
    bodies laid out), validated, with the rest lengths at the neutral configuration; a
    cable whose span has zero length there is refused (its direction is undefined)."""
    out = describe_cables(tuple(cables), tree.structure.names, site_lengths(tree))
    if not out.num_cables:
        return out
    # jitted: eagerly, the kinematics of a many-segment tree dispatch (and compile) many ops
    x = np.asarray(jax.jit(lambda q: via_points(tree, out, q)[0])(tree.neutral_configuration()))
    spans = np.asarray(out.spans, dtype=int)
    span_lengths = np.linalg.norm(x[spans[:, 1]] - x[spans[:, 0]], axis=-1)
    for k, length in enumerate(span_lengths):
        if length < 1e-9:
            label = out.names[out.span_cable[k]]
            raise ValueError(f"cable {label!r}: via: a span has zero length at the neutral configuration")
    rest = np.zeros(out.num_cables)
    np.add.at(rest, np.asarray(out.span_cable, dtype=int), span_lengths)
    return out._replace(rest_lengths=tuple(float(v) for v in rest))


def via_points(tree, cables: CableSet, q: Float[Array, " nq"]) -> tuple[Array, Array]:
    """World positions ``(P, 3)`` [m] and world-velocity Jacobians ``(P, 3, n)`` of every via
    point (one kinematics pass; world points have ``J = 0``)."""
    n = tree.num_dofs
    local = jnp.asarray(np.asarray(cables.points), q.dtype)
    x, J = local, jnp.zeros((local.shape[0], 3, n), q.dtype)
    on_body = [k for k, b in enumerate(cables.point_bodies) if b >= 0]
    if on_body:
        idx = np.asarray(on_body, dtype=int)
        bodies = [cables.point_bodies[k] for k in on_body]
        g, V = tree.poses_and_jacobians(q, bodies, jnp.asarray([cables.point_s[k] for k in on_body], q.dtype), "body")
        R, p, r = g[:, :3, :3], g[:, :3, 3], local[idx]
        # a point r fixed in a frame with body twist [w; v]: world velocity R (v + w x r)
        w, v = V[:, :3], V[:, 3:]
        v_point = v - jnp.cross(r[:, :, None], w, axisa=1, axisb=1, axisc=1)
        x = x.at[idx].set(p + jnp.einsum("kij,kj->ki", R, r))
        J = J.at[idx].set(jnp.einsum("kij,kjn->kin", R, v_point))
    return x, J


def cable_terms(tree, cables: CableSet, q: Float[Array, " nq"]) -> tuple[Array, Array]:
    """``(L (k,), A (n, k))``: the cables' lengths [m] and actuation columns
    ``-(dL/dq)^T`` (module docstring) at ``q``."""
    x, J = via_points(tree, cables, q)
    spans = np.asarray(cables.spans, dtype=int)
    d = x[spans[:, 1]] - x[spans[:, 0]]  # (S, 3)
    length = jnp.linalg.norm(d, axis=-1)
    e = d / length[:, None]
    dL = jnp.einsum("si,sin->sn", e, J[spans[:, 1]] - J[spans[:, 0]])  # (S, n)
    owner = np.asarray(cables.span_cable, dtype=int)
    k = cables.num_cables
    L = jnp.zeros((k,), q.dtype).at[owner].add(length)
    A = -jnp.zeros((k, tree.num_dofs), q.dtype).at[owner].add(dL).T
    return L, A


__all__ = ["Cable", "CableSet", "NO_CABLES", "build_cables", "cable_terms", "describe_cables", "via_points"]
