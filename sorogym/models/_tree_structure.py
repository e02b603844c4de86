"""The description of a :class:`~sorogym.models.BodyTree` and its static structure: the
bodies a user declares (:class:`RigidLink`, :class:`RodBody`, :class:`Payload`), the
parameters pytree (:class:`TreeParams`), and :func:`build`, which validates the description
(every error names the body and field) and lays out coordinates, groups of identically
structured bodies and payload sites.
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

from ..actuation import TreeActuation
from ._joints import EUCLIDEAN_JOINTS, Joint
from ._rod import QuadratureRod

_EYE4 = np.eye(4)


@dataclasses.dataclass(eq=False)
class RigidLink:
    """A rigid body.

    Attributes:
        name: unique name.
        mass: [kg].
        com: ``(3,)`` centre of mass in the body frame [m].
        inertia: ``(3, 3)`` rotational inertia about the centre of mass, body axes [kg m^2].
        parent: the parent body's name, or ``None`` for the world.
        joint: the joint to the parent site (default fixed).
        at: abscissa [m] of the site on a parent rod (ignored for link parents and the world).
        offset: ``(4, 4)`` site frame -> joint frame.
    """

    name: str
    mass: float
    com: Any = (0.0, 0.0, 0.0)
    inertia: Any = None
    parent: str | None = None
    joint: Joint = dataclasses.field(default_factory=Joint.fixed)
    at: float = 0.0
    offset: Any = None


@dataclasses.dataclass(eq=False)
class RodBody:
    """A soft rod (spatial :class:`~sorogym.models.PCS` or :class:`~sorogym.models.GVS`,
    with its actuator); its base pose is taken in the body frame (see module docstring).
    ``actuated=False`` leaves the rod's actuator out of the tree's inputs (a passive rod).
    Other attributes as :class:`RigidLink`."""

    name: str
    rod: QuadratureRod
    parent: str | None = None
    joint: Joint = dataclasses.field(default_factory=Joint.fixed)
    at: float = 0.0
    offset: Any = None
    actuated: bool = True


@dataclasses.dataclass(eq=False)
class Payload:
    """A point mass [kg] at ``position`` ``(3,)`` [m] in the frame of the site ``at`` of
    ``body`` (a rod abscissa [m], or a link's frame)."""

    body: str
    mass: float
    at: float = 0.0
    position: Any = (0.0, 0.0, 0.0)


class TreeParams(eqx.Module):
    """Numerical parameters of a :class:`BodyTree` (a pytree: same shapes -> no
    recompilation; randomise or differentiate any leaf).

    Attributes:
        rods: per rod body (declaration order) its rod's parameters.
        link_mass: ``(L,)`` [kg]; link_com: ``(L, 3)`` [m]; link_inertia: ``(L, 3, 3)``
            [kg m^2], per rigid link.
        joint_screw: ``(E, 6)`` screw axis of every Euclidean joint coordinate.
        joint_stiffness, joint_damping, joint_rest: ``(E,)`` per Euclidean joint coordinate.
        offset_rotation: ``(B, 3, 3)``; offset_position: ``(B, 3)`` [m]; per body.
        site: ``(B,)`` abscissa of each body's site on its parent rod [m] (0 elsewhere).
        payload_mass: ``(K,)`` [kg]; payload_position: ``(K, 3)`` [m]; payload_site: ``(K,)`` [m].
        gravity: ``(3,)`` world gravitational acceleration [m/s^2].
    """

    rods: tuple
    link_mass: Array
    link_com: Array
    link_inertia: Array
    joint_screw: Array
    joint_stiffness: Array
    joint_damping: Array
    joint_rest: Array
    offset_rotation: Array
    offset_position: Array
    site: Array
    payload_mass: Array
    payload_position: Array
    payload_site: Array
    gravity: Array

    def replace(self, **fields) -> TreeParams:
        """Copy with some fields replaced (same shapes keep compiled functions valid)."""
        for k in fields:
            if k not in self.__dataclass_fields__:
                raise ValueError(f"{k}: not a parameter field; fields are {tuple(self.__dataclass_fields__)}")
        return eqx.tree_at(lambda p: [getattr(p, k) for k in fields], self, list(fields.values()))


# -- static structure ----------------------------------------------------------------------


class _Group(NamedTuple):
    """Bodies evaluated together (static)."""

    bodies: tuple[int, ...]  # body indices
    kind: str  # "link" or "rod"
    actuated: bool  # rod groups: the rods' actuators are inputs of the tree
    joint: str  # joint kind
    parent_group: int  # -1: the world
    parent_members: tuple[int, ...]  # index of each body's parent within the parent group
    items: tuple[int, ...]  # link index or rod index of each body
    joint_q: tuple[tuple[int, ...], ...]  # (G, nq_j) configuration slots of the joints
    joint_v: tuple[tuple[int, ...], ...]  # (G, nv_j) velocity slots
    joint_e: tuple[tuple[int, ...], ...]  # (G, a) Euclidean joint coordinate indices
    rod_q: tuple[tuple[int, ...], ...]  # (G, n_b) rod coordinates in q
    rod_v: tuple[tuple[int, ...], ...]  # (G, n_b) rod coordinates in qd


class _Structure(NamedTuple):
    names: tuple[str, ...]
    groups: tuple[_Group, ...]
    body_group: tuple[tuple[int, int], ...]  # body -> (group, member)
    num_positions: int
    num_velocities: int
    euclidean_q: tuple[int, ...]  # (n,) q index of each velocity slot, nq for rotational slots
    joint_rest_slots: tuple[int, ...]  # (E,) velocity slot of each Euclidean joint coordinate
    free_q: tuple[tuple[int, ...], ...]  # (F, 7)
    free_v: tuple[tuple[int, ...], ...]  # (F, 6)
    sphere_q: tuple[tuple[int, ...], ...]  # (S, 4)
    sphere_v: tuple[tuple[int, ...], ...]  # (S, 3)
    neutral: tuple[float, ...]  # (nq,)
    payload_groups: tuple[tuple[int, tuple[int, ...], tuple[int, ...]], ...]  # (group, members, payloads)
    tip_body: int


def _check_vector(body: str, field: str, value, shape) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if arr.shape != shape:
        raise ValueError(f"body {body!r}: {field}: expected shape {shape}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"body {body!r}: {field}: values must be finite")
    return arr


def _check_offset(body: str, offset) -> np.ndarray:
    T = _EYE4 if offset is None else _check_vector(body, "offset", offset, (4, 4))
    R = T[:3, :3]
    if not (
        np.allclose(R @ R.T, np.eye(3), atol=1e-6)
        and abs(np.linalg.det(R) - 1.0) < 1e-6
        and np.allclose(T[3], [0, 0, 0, 1])
    ):
        raise ValueError(f"body {body!r}: offset: must be a rigid transform (rotation in SO(3), last row [0, 0, 0, 1])")
    return T


def _rod_signature(rod: QuadratureRod):
    leaves, treedef = jax.tree.flatten(rod)
    return (type(rod), treedef, tuple((np.shape(x), jnp.result_type(x)) for x in leaves))


# -- construction --------------------------------------------------------------------------


def build(bodies, gravity, payloads, motors, tip, dtype):
    names = [b.name for b in bodies]
    for i, name in enumerate(names):
        if not isinstance(name, str) or not name:
            raise ValueError(f"bodies[{i}]: name must be a non-empty string")
        if names.index(name) != i:
            raise ValueError(f"body {name!r}: name: duplicate")
    index = {name: i for i, name in enumerate(names)}
    parent = []
    for b in bodies:
        if b.parent is not None and b.parent not in index:
            raise ValueError(f"body {b.name!r}: parent: no body named {b.parent!r}")
        parent.append(-1 if b.parent is None else index[b.parent])
    depth = [None] * len(bodies)
    for i in range(len(bodies)):
        chain, j = [], i
        while j >= 0 and depth[j] is None:
            if j in chain:
                raise ValueError(f"body {names[i]!r}: parent: the chain of parents forms a cycle")
            chain.append(j)
            j = parent[j]
        d = -1 if j < 0 else depth[j]
        for k in reversed(chain):
            d += 1
            depth[k] = d
    # validation of every body
    rods, link_rows, screws, stiff, damp, rest = [], [], [], [], [], []
    offsets = []
    for i, b in enumerate(bodies):
        if not isinstance(b, RigidLink | RodBody):
            raise ValueError(f"bodies[{i}]: expected a RigidLink or RodBody, got {type(b).__name__}")
        if not isinstance(b.joint, Joint):
            raise ValueError(f"body {b.name!r}: joint: expected a Joint, got {type(b.joint).__name__}")
        b.joint.validate(b.name)
        if b.joint.kind == "free" and parent[i] >= 0:
            raise ValueError(f"body {b.name!r}: joint: a free joint must attach to the world (parent None)")
        offsets.append(_check_offset(b.name, b.offset))
        at = float(b.at)
        if not np.isfinite(at):
            raise ValueError(f"body {b.name!r}: at: must be finite")
        if parent[i] >= 0 and isinstance(bodies[parent[i]], RodBody):
            length = float(np.sum(np.asarray(bodies[parent[i]].rod.params.length)))
            if not 0.0 <= at <= length * (1 + 1e-9):
                raise ValueError(
                    f"body {b.name!r}: at: abscissa {at} m lies outside the parent rod {b.parent!r} [0, {length}] m"
                )
        if isinstance(b, RodBody):
            if not isinstance(b.rod, QuadratureRod) or b.rod.planar:
                raise ValueError(f"body {b.name!r}: rod: expected a spatial PCS or GVS model")
            rods.append(b.rod)
        else:
            mass = float(np.asarray(b.mass, float))
            if not np.isfinite(mass) or mass <= 0:
                raise ValueError(f"body {b.name!r}: mass: must be positive and finite, got {b.mass}")
            com = _check_vector(b.name, "com", b.com, (3,))
            inertia = np.zeros((3, 3)) if b.inertia is None else _check_vector(b.name, "inertia", b.inertia, (3, 3))
            if b.inertia is None:
                raise ValueError(f"body {b.name!r}: inertia: required (3, 3) rotational inertia about the com")
            if not np.allclose(inertia, inertia.T, atol=1e-12) or np.any(np.linalg.eigvalsh(inertia) <= 0):
                raise ValueError(f"body {b.name!r}: inertia: must be symmetric positive definite")
            link_rows.append((mass, com, inertia))
    # coordinates, body by body in declaration order
    q_at = v_at = e_at = 0
    joint_q, joint_v, joint_e, rod_q, rod_v = [], [], [], [], []
    euclid_v, neutral, rest_slots = {}, [], []
    free_q, free_v, sphere_q, sphere_v = [], [], [], []
    for b in bodies:
        nq, nv = b.joint.sizes
        jq, jv = tuple(range(q_at, q_at + nq)), tuple(range(v_at, v_at + nv))
        neutral.extend(b.joint.neutral())
        if b.joint.kind in EUCLIDEAN_JOINTS:
            for k in range(nq):
                euclid_v[jv[k]] = jq[k]
                rest_slots.append(jv[k])
            joint_e.append(tuple(range(e_at, e_at + nq)))
            e_at += nq
            screws.extend(b.joint.screws())
            stiff.extend(b.joint.stiffness)
            damp.extend(b.joint.damping)
            rest.extend(b.joint.rest)
        else:
            joint_e.append(())
        if b.joint.kind == "free":
            free_q.append(jq)
            free_v.append(jv)
        if b.joint.kind == "spherical":
            sphere_q.append(jq)
            sphere_v.append(jv)
        q_at, v_at = q_at + nq, v_at + nv
        joint_q.append(jq)
        joint_v.append(jv)
        nb = b.rod.num_dofs if isinstance(b, RodBody) else 0
        rod_q.append(tuple(range(q_at, q_at + nb)))
        rod_v.append(tuple(range(v_at, v_at + nb)))
        for k in range(nb):
            euclid_v[v_at + k] = q_at + k
        neutral.extend([0.0] * nb)
        q_at, v_at = q_at + nb, v_at + nb
    nq_total, nv_total = q_at, v_at
    euclidean_q = tuple(euclid_v.get(k, nq_total) for k in range(nv_total))
    # groups: by depth, then kind, joint kind, parent group and rod structure
    rod_index, link_index = {}, {}
    for i, b in enumerate(bodies):
        table = rod_index if isinstance(b, RodBody) else link_index
        table[i] = len(table)
    body_group: dict[int, tuple[int, int]] = {}
    groups: list[_Group] = []
    for d in range(max(depth) + 1):
        keyed: dict[Any, list[int]] = {}
        for i in range(len(bodies)):
            if depth[i] != d:
                continue
            b = bodies[i]
            pg = -1 if parent[i] < 0 else body_group[parent[i]][0]
            sig = _rod_signature(b.rod) if isinstance(b, RodBody) else None
            actuated = isinstance(b, RodBody) and bool(b.actuated) and b.rod.num_actuators > 0
            keyed.setdefault((isinstance(b, RodBody), actuated, b.joint.kind, pg, sig), []).append(i)
        for (is_rod, actuated, jkind, pg, _), members in keyed.items():
            gi = len(groups)
            for m, i in enumerate(members):
                body_group[i] = (gi, m)
            groups.append(
                _Group(
                    bodies=tuple(members),
                    kind="rod" if is_rod else "link",
                    actuated=actuated,
                    joint=jkind,
                    parent_group=pg,
                    parent_members=tuple(body_group[parent[i]][1] if parent[i] >= 0 else 0 for i in members),
                    items=tuple((rod_index if is_rod else link_index)[i] for i in members),
                    joint_q=tuple(joint_q[i] for i in members),
                    joint_v=tuple(joint_v[i] for i in members),
                    joint_e=tuple(joint_e[i] for i in members),
                    rod_q=tuple(rod_q[i] for i in members),
                    rod_v=tuple(rod_v[i] for i in members),
                )
            )
    # payloads, grouped by the group of their body
    payload_rows, by_group = [], {}
    for k, pl in enumerate(payloads):
        if pl.body not in index:
            raise ValueError(f"payloads[{k}]: body: no body named {pl.body!r}")
        mass = float(np.asarray(pl.mass, float))
        if not np.isfinite(mass) or mass <= 0:
            raise ValueError(f"payloads[{k}] on {pl.body!r}: mass: must be positive and finite")
        pos = _check_vector(pl.body, f"payloads[{k}].position", pl.position, (3,))
        b = index[pl.body]
        if isinstance(bodies[b], RodBody):
            length = float(np.sum(np.asarray(bodies[b].rod.params.length)))
            if not 0.0 <= float(pl.at) <= length * (1 + 1e-9):
                raise ValueError(f"payloads[{k}] on {pl.body!r}: at: abscissa {pl.at} m outside [0, {length}] m")
        payload_rows.append((mass, pos, float(pl.at)))
        gi, m = body_group[b]
        by_group.setdefault(gi, ([], []))
        by_group[gi][0].append(m)
        by_group[gi][1].append(k)
    payload_groups = tuple((gi, tuple(ms), tuple(ks)) for gi, (ms, ks) in sorted(by_group.items()))
    # motors
    motor_pairs = []
    for j, (name, axis) in enumerate(motors):
        if name not in index:
            raise ValueError(f"motors[{j}]: no body named {name!r}")
        jv = joint_v[index[name]]
        if not 0 <= int(axis) < len(jv):
            raise ValueError(f"motors[{j}]: body {name!r}: axis {axis} outside its joint's {len(jv)} velocities")
        if bodies[index[name]].joint.kind not in EUCLIDEAN_JOINTS:
            raise ValueError(f"motors[{j}]: body {name!r}: motors drive revolute, prismatic or universal joints")
        motor_pairs.append(jv[int(axis)])
    tip_body = len(bodies) - 1 if tip is None else index.get(tip, -1)
    if tip_body < 0:
        raise ValueError(f"tip: no body named {tip!r}")
    structure = _Structure(
        names=tuple(names),
        groups=tuple(groups),
        body_group=tuple(body_group[i] for i in range(len(bodies))),
        num_positions=nq_total,
        num_velocities=nv_total,
        euclidean_q=euclidean_q,
        joint_rest_slots=tuple(rest_slots),
        free_q=tuple(free_q),
        free_v=tuple(free_v),
        sphere_q=tuple(sphere_q),
        sphere_v=tuple(sphere_v),
        neutral=tuple(float(x) for x in neutral),
        payload_groups=payload_groups,
        tip_body=tip_body,
    )
    grav = _check_vector("<tree>", "gravity", gravity, (3,))
    arr = lambda x, shape: jnp.asarray(np.asarray(x, float).reshape(shape), dtype)  # noqa: E731
    L, E, B, K = len(link_rows), len(stiff), len(bodies), len(payload_rows)
    params = TreeParams(
        rods=tuple(r.params for r in rods),
        link_mass=arr([r[0] for r in link_rows], (L,)),
        link_com=arr([r[1] for r in link_rows], (L, 3)),
        link_inertia=arr([r[2] for r in link_rows], (L, 3, 3)),
        joint_screw=arr(screws, (E, 6)),
        joint_stiffness=arr(stiff, (E,)),
        joint_damping=arr(damp, (E,)),
        joint_rest=arr(rest, (E,)),
        offset_rotation=arr([T[:3, :3] for T in offsets], (B, 3, 3)),
        offset_position=arr([T[:3, 3] for T in offsets], (B, 3)),
        site=arr([float(b.at) if parent[i] >= 0 else 0.0 for i, b in enumerate(bodies)], (B,)),
        payload_mass=arr([r[0] for r in payload_rows], (K,)),
        payload_position=arr([r[1] for r in payload_rows], (K, 3)),
        payload_site=arr([r[2] for r in payload_rows], (K,)),
        gravity=arr(grav, (3,)),
    )
    return structure, params, rods, tuple((d, j) for j, d in enumerate(motor_pairs))


def tree_actuation(structure, rods, group_rods, motors, num_cables: int = 0) -> TreeActuation:
    """The :class:`~sorogym.actuation.TreeActuation` of a tree: the actuators of its
    actuated rod groups (``group_rods[g].actuation``, stacked per group) with their input
    and velocity slots, ``num_cables`` cables through the tree, then the joint ``motors``
    (``(velocity coordinate, ...)`` pairs); inputs ordered as the rods were declared, then
    the cables, then the motors."""
    acts, uslots, vslots, start = [], [], [], 0
    actuated = {r for g in structure.groups if g.actuated for r in g.items}
    rod_inputs = {}
    for r, rod in enumerate(rods):
        if r in actuated:
            rod_inputs[r] = tuple(range(start, start + rod.num_actuators))
            start += rod.num_actuators
    for g, group in enumerate(structure.groups):
        if group.actuated:
            acts.append(group_rods[g].actuation)
            uslots.append(tuple(rod_inputs[r] for r in group.items))
            vslots.append(group.rod_v)
    cable_inputs = tuple(range(start, start + num_cables))
    start += num_cables
    motor_dofs = tuple(int(d) for d, _ in motors)
    motor_inputs = tuple(range(start, start + len(motor_dofs)))
    euclid = structure.euclidean_q
    motor_positions = tuple(int(euclid[d]) for d in motor_dofs)
    return TreeActuation(
        tuple(acts),
        tuple(uslots),
        tuple(vslots),
        motor_dofs,
        motor_inputs,
        motor_positions,
        start + len(motor_dofs),
        cable_inputs,
    )
