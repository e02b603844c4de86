"""Loop closures: constraints between two frames of a :class:`~sorogym.models.BodyTree`
(or a frame and the world) that close kinematic loops (parallel robots, closed chains).

A :class:`LoopClosure` joins the frame ``a`` (the site ``at_a`` of ``body_a``, a rod
abscissa [m] or a link's frame, times the fixed ``offset_a``; the world frame ``offset_a``
when ``body_a`` is ``None``) to the frame ``b`` (likewise) through a joint of one of four
kinds. With the relative pose ``g = g_a^-1 g_b = (R, p)`` (``p`` the origin of ``b`` in
frame ``a`` [m]), the constraint equations ``phi(q) = 0`` are:

=============  ====  ========================================================================
kind           rows  equations
=============  ====  ========================================================================
``fixed``         6  ``vee(R - R^T) / 2 = 0`` (rotation), ``p = 0``
``revolute``      5  ``t_i . (R k) = 0`` (``b`` keeps the axis ``k`` of ``a``), ``p = 0``
``prismatic``     5  ``vee(R - R^T) / 2 = 0``, ``t_i . p = 0`` (``b`` slides along ``k``)
``spherical``     3  ``p = 0``
=============  ====  ========================================================================

``k`` is the closure's unit ``axis`` in frame ``a`` and ``t_1, t_2`` complete it to an
orthonormal basis. These are the fixed, articulated and sliding constraints of the
Lie-group framework (Table 3 of the source), written with smooth residuals instead of
``P log(g_a^-1 g_b)``: the zero sets agree near assembly (the rotation residual
``sin(theta) n`` also vanishes at half turns, far from any assembled mechanism) and the
residuals have no logarithm to differentiate at the solution.

Velocity level: the body twists ``V_a = J_a qd``, ``V_b = J_b qd`` (``[omega, v]`` in each
frame) give the relative twist ``V = V_b - Ad_(g^-1) V_a`` with ``dR/dt = R omega^``,
``dp/dt = R v``, so ``dphi/dt = E(g) V = G(q) qd`` with, per block::

    rotation   E = [(tr(R) I - R^T) / 2, 0]    hinge        E = [-T^T R k^, 0]
    position   E = [0, R]                       transverse   E = [0, T^T R]

``G(q)`` ``(c, n)`` is the constraint Jacobian on the velocity coordinates (``dphi/dq``
itself on vector-space configurations); the tests check it and ``dG/dt qd`` against AD.
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ._static_index import take

#: Equations per closure kind.
CLOSURE_ROWS = {"fixed": 6, "revolute": 5, "prismatic": 5, "spherical": 3}

# Every closure evaluates the four blocks [rotation (3), hinge (2), position (3),
# transverse (2)] = 10 candidate rows; its kind picks these of them.
_KIND_ROWS = {
    "fixed": (0, 1, 2, 5, 6, 7),
    "revolute": (3, 4, 5, 6, 7),
    "prismatic": (0, 1, 2, 8, 9),
    "spherical": (5, 6, 7),
}


@dataclasses.dataclass(eq=False)
class LoopClosure:
    """A constraint between two frames of a body tree (module docstring).

    Attributes:
        kind: ``"fixed"``, ``"revolute"``, ``"prismatic"`` or ``"spherical"``.
        body_a, body_b: body names; ``body_a=None`` is the world (its frame is ``offset_a``).
        at_a, at_b: rod abscissae [m] of the sites (default: the rod's tip; ignored on links).
        offset_a, offset_b: ``(4, 4)`` site frame -> closure frame (default identity).
        axis: ``(3,)`` joint axis in frame ``a`` (revolute, prismatic), normalised.
        name: a label for messages (default ``"<body_a>-<body_b>"``).
    """

    kind: str
    body_a: str | None
    body_b: str
    at_a: float | None = None
    at_b: float | None = None
    offset_a: Any = None
    offset_b: Any = None
    axis: Any = (0.0, 0.0, 1.0)
    name: str | None = None


class ClosureSet(NamedTuple):
    """The static description of a tree's closures (hashable: a static model field)."""

    names: tuple[str, ...]
    rows: tuple[int, ...]  # candidate rows (0..10C) kept, in order
    site_bodies: tuple[int, ...]  # (2C,) body index of every site a, b; -1: the world
    site_s: tuple[float, ...]  # (2C,) abscissa of every site
    offsets: tuple[tuple[float, ...], ...]  # (2C, 16) site -> closure frame
    frames: tuple[tuple[float, ...], ...]  # (C, 9) columns [t1, t2, k] in frame a

    @property
    def num_rows(self) -> int:
        return len(self.rows)


def _rigid(label: str, field: str, value) -> np.ndarray:
    T = np.eye(4) if value is None else np.asarray(value, dtype=float)
    if T.shape != (4, 4) or not np.all(np.isfinite(T)):
        raise ValueError(f"constraint {label!r}: {field}: expected a finite (4, 4) transform, got shape {T.shape}")
    R = T[:3, :3]
    if not (np.allclose(R @ R.T, np.eye(3), atol=1e-6) and abs(np.linalg.det(R) - 1) < 1e-6):
        raise ValueError(f"constraint {label!r}: {field}: rotation block must be in SO(3)")
    if not np.allclose(T[3], [0, 0, 0, 1]):
        raise ValueError(f"constraint {label!r}: {field}: last row must be [0, 0, 0, 1]")
    return T


def _axis_frame(label: str, axis) -> np.ndarray:
    k = np.asarray(axis, dtype=float)
    if k.shape != (3,) or not np.all(np.isfinite(k)) or np.linalg.norm(k) < 1e-12:
        raise ValueError(f"constraint {label!r}: axis: expected a non-zero finite (3,) vector, got {axis!r}")
    k = k / np.linalg.norm(k)
    helper = np.eye(3)[int(np.argmin(np.abs(k)))]
    t1 = np.cross(k, helper)
    t1 /= np.linalg.norm(t1)
    return np.stack([t1, np.cross(k, t1), k], axis=1)


def build_closures(tree, closures) -> ClosureSet:
    """The :class:`ClosureSet` of ``closures`` on ``tree`` (a body tree under construction,
    its bodies laid out), validated: errors name the closure and field, and closures that
    over-determine the structure are refused (:func:`check_rank`)."""
    out = _describe(tuple(closures), tree.structure.names, site_lengths(tree))
    if out.num_rows:
        # jitted: eagerly, the kinematics of a many-segment tree dispatch (and compile) ~1000 ops
        G = jax.jit(lambda q: closure_terms(tree, out, q)[1])(tree.neutral_configuration())
        check_rank(out, G, tree.num_dofs)
    return out


def site_lengths(tree):
    """``site_length(b)``: the length [m] of the rod of body ``b`` of a body tree under
    construction (its bodies laid out), ``None`` for a rigid link: the range of a site's
    abscissa, for validating closures and cables."""
    structure = tree.structure

    def site_length(b: int):
        g, m = structure.body_group[b]
        group = structure.groups[g]
        return float(tree._rods[group.items[m]].total_length) if group.kind == "rod" else None

    return site_length


def check_frequency(value) -> float:
    """A valid :attr:`~sorogym.models.SoftRobot.constraint_frequency` [1/s]."""
    if not (np.isfinite(value) and value >= 0.0):
        raise ValueError(f"constraint_frequency: must be finite and >= 0 [1/s], got {value}")
    return float(value)


def _describe(closures, names: tuple[str, ...], site_length) -> ClosureSet:
    """Validate ``closures`` against the body ``names``; ``site_length(b)`` is the length [m]
    of body ``b``'s rod (``None`` for a link)."""
    labels, rows, bodies, s_all, offsets, frames = [], [], [], [], [], []
    for i, c in enumerate(closures):
        if not isinstance(c, LoopClosure):
            raise ValueError(f"constraints[{i}]: expected a LoopClosure, got {type(c).__name__}")
        label = c.name or f"{c.body_a or 'world'}-{c.body_b}"
        if label in labels:
            raise ValueError(f"constraint {label!r}: name: duplicate (give each closure a distinct name)")
        if c.kind not in CLOSURE_ROWS:
            raise ValueError(f"constraint {label!r}: kind: unknown {c.kind!r}; kinds are {tuple(CLOSURE_ROWS)}")
        for field, body, at in (("body_a", c.body_a, c.at_a), ("body_b", c.body_b, c.at_b)):
            if body is None:
                if field == "body_b":
                    raise ValueError(f"constraint {label!r}: body_b: must name a body (only body_a may be the world)")
                bodies.append(-1)
                s_all.append(0.0)
                continue
            if body not in names:
                raise ValueError(f"constraint {label!r}: {field}: no body named {body!r}; bodies are {names}")
            b = names.index(body)
            length = site_length(b)
            if length is None:
                s = 0.0
            else:
                s = float(length if at is None else at)
                if not (0.0 <= s <= float(length) + 1e-12):
                    side = field[-1]
                    raise ValueError(f"constraint {label!r}: at_{side}: {s} outside the rod [0, {float(length)}]")
            bodies.append(b)
            s_all.append(s)
        if c.body_a is not None and c.body_a == c.body_b and bodies[-2] == bodies[-1] and s_all[-2] == s_all[-1]:
            raise ValueError(f"constraint {label!r}: body_b: joins a site to itself")
        offsets.append(tuple(float(x) for x in _rigid(label, "offset_a", c.offset_a).ravel()))
        offsets.append(tuple(float(x) for x in _rigid(label, "offset_b", c.offset_b).ravel()))
        frames.append(tuple(float(x) for x in _axis_frame(label, c.axis).ravel()))
        rows.extend(10 * i + r for r in _KIND_ROWS[c.kind])
        labels.append(label)
    return ClosureSet(tuple(labels), tuple(rows), tuple(bodies), tuple(s_all), tuple(offsets), tuple(frames))


def _hat(w: Array) -> Array:
    z = jnp.zeros_like(w[..., 0])
    return jnp.stack(
        [
            jnp.stack([z, -w[..., 2], w[..., 1]], -1),
            jnp.stack([w[..., 2], z, -w[..., 0]], -1),
            jnp.stack([-w[..., 1], w[..., 0], z], -1),
        ],
        -2,
    )


def site_frames(tree, closures: ClosureSet, q: Float[Array, " nq"]) -> tuple[Array, Array]:
    """World poses ``(2C, 4, 4)`` and body-frame twist Jacobians ``(2C, 6, n)`` of every
    closure frame (sites a and b alternating), offsets applied; world sites have ``J = 0``."""
    n = tree.num_dofs
    offsets = jnp.asarray(np.asarray(closures.offsets).reshape(-1, 4, 4), q.dtype)
    on_body = [k for k, b in enumerate(closures.site_bodies) if b >= 0]
    poses = jnp.broadcast_to(jnp.eye(4, dtype=q.dtype), offsets.shape)
    jacobians = jnp.zeros((offsets.shape[0], 6, n), q.dtype)
    if on_body:
        bodies = [closures.site_bodies[k] for k in on_body]
        s = jnp.asarray([closures.site_s[k] for k in on_body], q.dtype)
        g, J = tree.poses_and_jacobians(q, bodies, s, frame="body")
        idx = np.asarray(on_body, dtype=int)
        poses = poses.at[idx].set(g)
        jacobians = jacobians.at[idx].set(J)
    # the offset frame: g O, body twist Ad_(O^-1) J = [Ro^T w; Ro^T (v + w x po)]
    Ro, po = offsets[:, :3, :3], offsets[:, :3, 3]
    w, v = jacobians[:, :3], jacobians[:, 3:]
    w_o = jnp.einsum("kji,kjn->kin", Ro, w)
    v_o = jnp.einsum("kji,kjn->kin", Ro, v - jnp.einsum("kij,kjn->kin", _hat(po), w))
    return poses @ offsets, jnp.concatenate([w_o, v_o], axis=1)


def closure_terms(tree, closures: ClosureSet, q: Float[Array, " nq"]) -> tuple[Array, Array]:
    """``(phi (c,), G (c, n))``: the constraint residuals and their Jacobian on the velocity
    coordinates (module docstring), ``c = closures.num_rows``."""
    poses, J = site_frames(tree, closures, q)
    ga, gb = poses[0::2], poses[1::2]
    Ja, Jb = J[0::2], J[1::2]
    Ra, Rb = ga[:, :3, :3], gb[:, :3, :3]
    R = jnp.einsum("kji,kjl->kil", Ra, Rb)  # (C, 3, 3) g_a^-1 g_b
    p = jnp.einsum("kji,kj->ki", Ra, gb[:, :3, 3] - ga[:, :3, 3])
    # relative twist in frame b: V_b - Ad_(g^-1) V_a, Ad_(g^-1) [w; v] = [R^T w; R^T (v + w x p)]
    wa, va = Ja[:, :3], Ja[:, 3:]
    w_rel = Jb[:, :3] - jnp.einsum("kji,kjn->kin", R, wa)
    v_rel = Jb[:, 3:] - jnp.einsum("kji,kjn->kin", R, va - jnp.einsum("kij,kjn->kin", _hat(p), wa))
    frames = jnp.asarray(np.asarray(closures.frames).reshape(-1, 3, 3), q.dtype)
    T, k = frames[:, :, :2], frames[:, :, 2]
    eye = jnp.eye(3, dtype=q.dtype)
    skew = 0.5 * (R - jnp.swapaxes(R, 1, 2))
    rot = jnp.stack([skew[:, 2, 1], skew[:, 0, 2], skew[:, 1, 0]], -1)
    E_rot = 0.5 * (jnp.trace(R, axis1=1, axis2=2)[:, None, None] * eye - jnp.swapaxes(R, 1, 2))
    Rk = jnp.einsum("kij,kj->ki", R, k)
    hinge = jnp.einsum("kia,ki->ka", T, Rk)
    E_hinge = -jnp.einsum("kia,kij,kjl->kal", T, R, _hat(k))
    trans = jnp.einsum("kia,ki->ka", T, p)
    E_trans = jnp.einsum("kia,kij->kaj", T, R)
    phi = jnp.concatenate([rot, hinge, p, trans], axis=1)  # (C, 10)
    G = jnp.concatenate(
        [
            jnp.einsum("kij,kjn->kin", E_rot, w_rel),
            jnp.einsum("kij,kjn->kin", E_hinge, w_rel),
            jnp.einsum("kij,kjn->kin", R, v_rel),
            jnp.einsum("kij,kjn->kin", E_trans, v_rel),
        ],
        axis=1,
    )  # (C, 10, n)
    rows = np.asarray(closures.rows, dtype=int)
    return take(phi.reshape(-1), rows), take(jnp.moveaxis(G.reshape(-1, G.shape[-1]), 0, 1), rows).T


def closure_terms_and_rate(tree, closures: ClosureSet, q, qd) -> tuple[Array, Array, Array]:
    """``(phi, G, dG/dt qd)``, the last along ``dq/dt = configuration_rate(q, qd)`` by
    forward-mode AD (the velocity-product term of the acceleration-level constraint)."""
    (phi, G), (_, dG) = jax.jvp(lambda q_: closure_terms(tree, closures, q_), (q,), (tree.configuration_rate(q, qd),))
    return phi, G, dG @ qd


def check_rank(closures: ClosureSet, G: np.ndarray, num_dofs: int) -> None:
    """``ValueError`` when the closures over-determine the structure: more equations than
    velocities, or dependent rows of ``G`` at the reference configuration."""
    c = closures.num_rows
    if c > num_dofs:
        raise ValueError(
            f"constraints: {c} closure equations for {num_dofs} velocity coordinates over-determine the structure"
        )
    G = np.asarray(G, dtype=float)
    scale = max(float(np.abs(G).max()) if G.size else 0.0, 1.0)
    owners = [r // 10 for r in closures.rows]
    for i, label in enumerate(closures.names):
        upto = [j for j, o in enumerate(owners) if o <= i]
        rank = np.linalg.matrix_rank(G[upto], tol=1e-9 * scale) if upto else 0
        if rank < len(upto):
            raise ValueError(
                f"constraints: closure {label!r} repeats equations of the closures before it (rank {rank} for "
                f"{len(upto)} equations at the reference configuration): the closures over-determine the structure"
            )
