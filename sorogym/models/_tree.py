"""Body trees: rigid links and soft rods joined by joints, on a fixed or floating base.

A :class:`BodyTree` is a forest of bodies. Each body is a :class:`RigidLink` (mass, centre
of mass, inertia) or a :class:`RodBody` (a spatial :class:`~sorogym.models.PCS` or
:class:`~sorogym.models.GVS` rod with its cross-section law and actuator). Every body hangs
from a *site* of its parent (a rod abscissa ``at`` [m], or a link's frame) or from the world,
through a fixed ``offset`` (site frame -> joint frame) and a
:class:`~sorogym.models.Joint` (fixed, revolute, prismatic, universal, spherical, free)::

    g_body = g_site  offset  h_joint(q_j)

A rod body's backbone starts at its rod's own base pose (the rod's ``base_rotation`` and
``base_position``) expressed in the body frame; a link's frame is the body frame. Point
masses (:class:`Payload`) sit at any site. The serial PCS, GVS and articulated models are the
one-branch, fixed-base special cases (the tests check that they agree to rounding).

State: ``q`` ``(nq,)`` concatenates, body by body in declaration order, the joint's
configuration then the rod's strain coordinates; ``qd`` ``(n,)`` the joint's velocity then
the rod's strain rates (:mod:`sorogym.models._joints` for each joint's layout). Free and
spherical joints store unit quaternions ``[w, x, y, z]`` and body-frame velocities, so
``nq > n``; :meth:`BodyTree.retract`, :meth:`BodyTree.configuration_rate` and
:meth:`BodyTree.project_state` implement the state contract of
:class:`~sorogym.models.SoftRobot`.

Dynamics: every body contributes mass points (a rod's Gauss points with their diagonal
cross-section inertia, a link's frame with its 6x6 spatial inertia, payloads) whose frames,
body Jacobians ``J`` ``(6, n)``, twists ``eta`` and ``dJ/dt qd`` come from one
proximal-to-distal pass::

    M = sum J^T M_p J,   C qd + G = sum J^T (M_p dJ/dt qd - ad_eta^T M_p eta - M_p [0; R^T g])

which is d'Alembert's principle projected on the velocity coordinates, valid for any velocity
parameterisation (body twists included). Body-frame Jacobians, twists and their rates do not
change when the whole world moves rigidly, so these terms depend on a free root's pose only
through gravity: they are computed with every free root at the origin and gravity rotated
into its frame, ``R_b^T g`` (no rotation matrix formed for it). Elastic forces are Hookean on the rods' strains and
the one-DOF joints, so ``K = S e(q)`` with constant ``S`` and ``D``.

Batching: bodies of one depth with the same kind, joint kind, parent group and (for rods)
identical structure form a *group*; a group's joints are evaluated in the batch-minor layout
and its rods under one ``vmap``, so a five-arm star costs one rod evaluation, not five.
The trace holds one short sequence of operations per group, whatever the number of bodies.
"""

from __future__ import annotations

from typing import Any, ClassVar, final

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ..actuation import TreeActuation, TreeContext
from ._base import DynamicalTerms, SoftRobot
from ._closures import ClosureSet, LoopClosure, build_closures, check_frequency, closure_terms
from ._joints import (
    EUCLIDEAN_JOINTS,
    quaternion_exp,
    quaternion_multiply,
    quaternion_rotate,
    quaternion_to_rotation,
    screw_motion,
    se3_exp_translation,
)
from ._rod import QuadratureRod
from ._rod_ops import SpatialOps as ops
from ._static_index import take
from ._tree_cables import Cable, CableSet, build_cables, cable_terms, via_points
from ._tree_frames import (
    _attach,
    _Frames,
    _GroupFrames,
    _map_rods,
    _repeat,
    _scatter_blocks,
    _scatter_columns,
    _spatial_inertia,
    _take,
)
from ._tree_structure import Payload, RigidLink, RodBody, TreeParams, _Group, _Structure, build, tree_actuation

__all__ = ["BodyTree", "Cable", "LoopClosure", "Payload", "RigidLink", "RodBody", "TreeParams"]


@final
class BodyTree(SoftRobot):
    """Rigid links and soft rods in a tree on a fixed or floating base (module docstring).

    Args:
        bodies: :class:`RigidLink` and :class:`RodBody` descriptions (parents before or
            after children: the order of declaration fixes the layout of ``q``).
        gravity: ``(3,)`` world gravity [m/s^2].
        payloads: :class:`Payload` point masses.
        motors: joint motors as ``(body name, axis index)`` pairs (a generalized force on
            that joint velocity coordinate; axis 0-5 of a free joint's twist ``[w, v]``),
            after the rods' actuator inputs in ``u``.
        tip: name of the body whose ``s`` is the default of the kinematic queries (default:
            the last declared body).
        constraints: :class:`LoopClosure` constraints between bodies (or a body and the
            world) that close kinematic loops: parallel robots, closed chains
            (:mod:`sorogym.models._closures`). The tree's coordinates stay those of its
            spanning tree; the dynamics add the closure forces ``G^T lam``, statics the
            closure equations (a KKT system).
        constraint_frequency: drift stabilisation rate [1/s] of the closures
            (:attr:`SoftRobot.constraint_frequency`).
        cables: :class:`Cable` tendons routed through via points on several bodies (spacer
            plates, bones; :mod:`sorogym.models._tree_cables`), inputs (tensions [N])
            after the rods' actuator inputs and before the motors.

    Raises ``ValueError`` naming the body and field for a missing parent, a cycle, a
    duplicate name, a site abscissa outside the parent rod, a non-unit quaternion, a joint
    axis of zero length, non-positive mass or inertia, mismatched shapes, planar rods, or
    a free joint not attached to the world; naming the cable for one with fewer than two
    via points or one on a missing body or outside its rod; and naming the closure for one
    that refers to a missing body, has an unknown kind or a bad offset or axis, or over-determines the
    structure (its equations dependent on the others' at the reference configuration).
    """

    params: TreeParams
    actuation: TreeActuation
    structure: _Structure = eqx.field(static=True)
    _rods: tuple  # per rod body, its model (with the actuator)
    _group_rods: tuple  # per group: stacked rod models (rod groups) or None
    _stiffness: Array
    _damping: Array
    _stiffness_q: Array  # (n, nq): S e(q) = S_q q - S e_rest
    _stiffness_rest: Array  # (n,): S e_rest
    _elastic_diagonals: tuple | None  # (diag S, diag D) when both are diagonal by construction
    closures: ClosureSet = eqx.field(static=True)
    cables: CableSet = eqx.field(static=True)
    _constraint_frequency: float = eqx.field(static=True)
    elastic_is_affine: ClassVar[bool] = True
    planar: ClassVar[bool] = False
    ops: ClassVar = ops

    def __init__(
        self,
        bodies=(),
        gravity=(0.0, 0.0, -9.81),
        payloads=(),
        motors=(),
        tip: str | None = None,
        dtype=None,
        *,
        constraints=(),
        constraint_frequency: float = 20.0,
        cables=(),
        _parts=None,
    ):
        if _parts is None:
            bodies, payloads = list(bodies), list(payloads)
            if not bodies:
                raise ValueError("bodies: a tree needs at least one body")
            _parts = build(bodies, gravity, payloads, motors, tip, dtype or jnp.result_type(float))
        structure, params, rods, motor_pairs = _parts
        self.structure = structure
        self.params = params
        self._rods = tuple(r.with_params(p) for r, p in zip(rods, params.rods, strict=True))
        stacked = []
        for g in structure.groups:
            if g.kind == "rod":
                members = [self._rods[i] for i in g.items]
                stacked.append(jax.tree.map(lambda *xs: jnp.stack(xs), *members))
            else:
                stacked.append(None)
        self._group_rods = tuple(stacked)
        self._stiffness, self._damping = self._elastic_matrices()
        self._stiffness_q, self._stiffness_rest = self._elastic_map()
        diagonal = all(r.diagonal_elastic for r in self._rods)  # joint springs are diagonal
        self._elastic_diagonals = (jnp.diagonal(self._stiffness), jnp.diagonal(self._damping)) if diagonal else None
        self.cables = cables if isinstance(cables, CableSet) else build_cables(self, cables)
        self.actuation = tree_actuation(
            self.structure, self._rods, self._group_rods, motor_pairs, self.cables.num_cables
        )
        self.closures = constraints if isinstance(constraints, ClosureSet) else build_closures(self, constraints)
        self._constraint_frequency = check_frequency(constraint_frequency)

    # -- structure ---------------------------------------------------------------------------

    @property
    def num_dofs(self) -> int:
        return self.structure.num_velocities

    @property
    def num_positions(self) -> int:
        return self.structure.num_positions

    @property
    def body_names(self) -> tuple[str, ...]:
        return self.structure.names

    @property
    def num_bodies(self) -> int:
        return len(self.structure.names)

    @property
    def tip_abscissa(self) -> Any:
        """Length [m] of the default body's rod (0 for a link)."""
        b = self.structure.tip_body
        g, _ = self.structure.body_group[b]
        group = self.structure.groups[g]
        if group.kind == "rod":
            return self._rods[group.items[group.bodies.index(b)]].total_length
        return jnp.zeros((), self.params.gravity.dtype)

    def body_index(self, body) -> int:
        """Index of a body given by name or index."""
        if body is None:
            return self.structure.tip_body
        if isinstance(body, str):
            if body not in self.structure.names:
                raise ValueError(f"body: unknown {body!r}; bodies are {self.structure.names}")
            return self.structure.names.index(body)
        return int(body)

    def rod(self, body) -> QuadratureRod:
        """The rod model of a rod body (its coordinates are the body's slice of ``q``)."""
        b = self.body_index(body)
        g, m = self.structure.body_group[b]
        group = self.structure.groups[g]
        if group.kind != "rod":
            raise ValueError(f"body {self.structure.names[b]!r} is a rigid link, not a rod")
        return self._rods[group.items[m]]

    def coordinate_slices(self, body) -> tuple[np.ndarray, np.ndarray]:
        """``(q indices, qd indices)`` of a body's joint and rod coordinates."""
        b = self.body_index(body)
        g, m = self.structure.body_group[b]
        group = self.structure.groups[g]
        q_idx = np.array(group.joint_q[m] + group.rod_q[m], dtype=int)
        v_idx = np.array(group.joint_v[m] + group.rod_v[m], dtype=int)
        return q_idx, v_idx

    def with_params(self, params: TreeParams) -> BodyTree:
        """Same structure and actuators, new parameters (same shapes: no recompilation)."""
        motors = tuple(zip(self.actuation.motor_dofs, self.actuation.motor_inputs, strict=True))
        return BodyTree(
            _parts=(self.structure, params, self._rods, motors),
            constraints=self.closures,
            constraint_frequency=self._constraint_frequency,
            cables=self.cables,
        )

    # -- loop closures -----------------------------------------------------------------------

    @property
    def num_constraints(self) -> int:
        return self.closures.num_rows

    @property
    def constraint_frequency(self) -> float:
        return self._constraint_frequency

    def constraint_terms(self, q: Float[Array, " nq"]) -> tuple[Array, Array]:
        """``(phi (c,), G (c, n))`` of the loop closures (:mod:`sorogym.models._closures`)."""
        if not self.closures.num_rows:
            return super().constraint_terms(q)
        return closure_terms(self, self.closures, q)

    def _elastic_matrices(self) -> tuple[Array, Array]:
        n, p = self.num_dofs, self.params
        dtype = p.gravity.dtype
        S = jnp.zeros((n, n), dtype)
        D = jnp.zeros((n, n), dtype)
        for g in self.structure.groups:
            if g.kind == "rod":
                for m, r in enumerate(g.items):
                    idx = np.asarray(g.rod_v[m], dtype=int)
                    S = S.at[np.ix_(idx, idx)].set(self._rods[r].stiffness_matrix())
                    D = D.at[np.ix_(idx, idx)].set(self._rods[r].damping_matrix())
        slots = np.asarray(self.structure.joint_rest_slots, dtype=int)
        if slots.size:
            S = S.at[slots, slots].set(p.joint_stiffness)
            D = D.at[slots, slots].set(p.joint_damping)
        return S, D

    def _elastic_map(self) -> tuple[Array, Array]:
        """``(S_q, S e_rest)`` with ``S e(q) = S_q q - S e_rest``: ``K`` as one product (the
        selection of Euclidean coordinates folded into the stiffness)."""
        s = self.structure
        euclid = np.asarray(s.euclidean_q, dtype=int)
        lin = np.flatnonzero(euclid < s.num_positions)
        select = np.zeros((s.num_velocities, s.num_positions))
        select[lin, euclid[lin]] = 1.0
        S = self._stiffness
        rest = jnp.zeros(s.num_velocities, S.dtype)
        slots = np.asarray(s.joint_rest_slots, dtype=int)
        if slots.size:
            rest = rest.at[slots].set(self.params.joint_rest)
        return S @ jnp.asarray(select, S.dtype), S @ rest

    # -- state contract ----------------------------------------------------------------------

    def neutral_configuration(self, dtype=None) -> Float[Array, " nq"]:
        """Joint neutral poses (identity quaternions unless given) and straight rods."""
        return jnp.asarray(self.structure.neutral, dtype or self.params.gravity.dtype)

    def _free_parts(self, q):
        s = self.structure
        fq = np.asarray(s.free_q, dtype=int).reshape(-1, 7)
        sq = np.asarray(s.sphere_q, dtype=int).reshape(-1, 4)
        return take(q, fq[:, :3]).T, take(q, fq[:, 3:]).T, take(q, sq).T  # (3, F), (4, F), (4, S)

    def _assemble_q(self, euclidean: Array, free_p: Array, free_quat: Array, sphere_quat: Array) -> Array:
        """``(nq,)`` from the values of the Euclidean slots ``(E,)`` (in ``q`` order), free
        positions ``(3, F)``, free quaternions ``(4, F)`` and spherical quaternions ``(4, S)``:
        one take from their concatenation (fuses with its producers, unlike a scatter per
        part)."""
        source = jnp.concatenate([euclidean, free_p.T.ravel(), free_quat.T.ravel(), sphere_quat.T.ravel()])
        return take(source, self._q_layout()[2])

    def _q_layout(self):
        """Static ``(q slots, qd slots, gather map)``: the Euclidean configuration slots and
        their velocity slots, and for each ``q`` slot its index in the source of
        :meth:`_assemble_q`."""
        s = self.structure
        euclid = np.asarray(s.euclidean_q, dtype=int)
        v = np.flatnonzero(euclid < s.num_positions)
        q = euclid[v]
        order = np.argsort(q)
        q, v = q[order], v[order]
        fq = np.asarray(s.free_q, dtype=int).reshape(-1, 7)
        sq = np.asarray(s.sphere_q, dtype=int).reshape(-1, 4)
        source_of = np.empty(s.num_positions, dtype=int)
        source_of[q] = np.arange(q.size)
        k = q.size
        for block in (fq[:, :3], fq[:, 3:], sq):
            source_of[block.ravel()] = k + np.arange(block.size)
            k += block.size
        return q, v, source_of

    def retract(self, q: Float[Array, " nq"], dq: Float[Array, " n"]) -> Float[Array, " nq"]:
        """Euclidean coordinates move by ``dq``; spherical joints by ``quat (x) exp(dw/2)``,
        free joints by ``(R, p) exp([dw, dv])`` (SE(3), body-frame increments)."""
        s = self.structure
        eq, ev, _ = self._q_layout()
        if not (s.free_q or s.sphere_q):
            return q + take(dq, ev)  # every slot Euclidean, in the same order
        p, quat, squat = self._free_parts(q)
        if s.free_q:
            fv = np.asarray(s.free_v, dtype=int)
            w, v = take(dq, fv[:, :3]).T, take(dq, fv[:, 3:]).T
            R = quaternion_to_rotation(quat)
            p = p + jnp.einsum("ijf,jf->if", R, se3_exp_translation(w, v))
            quat = quaternion_multiply(quat, quaternion_exp(w))
        if s.sphere_q:
            squat = quaternion_multiply(squat, quaternion_exp(take(dq, s.sphere_v).T))
        return self._assemble_q(take(q, eq) + take(dq, ev), p, quat, squat)

    def configuration_rate(self, q: Float[Array, " nq"], qd: Float[Array, " n"]) -> Float[Array, " nq"]:
        """``dq/dt``: ``qd`` on Euclidean coordinates, ``quat (x) [0, w] / 2`` for
        quaternions, ``R v_b`` for free positions."""
        s = self.structure
        _, ev, _ = self._q_layout()
        if not (s.free_q or s.sphere_q):
            return take(qd, ev)
        p, quat, squat = self._free_parts(q)

        def quaternion_rate(quat, w):
            return 0.5 * quaternion_multiply(quat, jnp.concatenate([jnp.zeros_like(w[:1]), w], axis=0))

        if s.free_q:
            fv = np.asarray(s.free_v, dtype=int)
            w, v = take(qd, fv[:, :3]).T, take(qd, fv[:, 3:]).T
            p = quaternion_rotate(quat, v)
            quat = quaternion_rate(quat, w)
        if s.sphere_q:
            squat = quaternion_rate(squat, take(qd, s.sphere_v).T)
        return self._assemble_q(take(qd, ev), p, quat, squat)

    def project_state(self, y: Float[Array, " s"]) -> Float[Array, " s"]:
        """Quaternions normalised (the rest unchanged)."""
        s = self.structure
        idx = [np.asarray(s.free_q, dtype=int).reshape(-1, 7)[:, 3:], np.asarray(s.sphere_q, dtype=int).reshape(-1, 4)]
        idx = np.concatenate(idx, axis=0)
        if not idx.size:
            return y
        quat = take(y, idx)
        unit = quat / jnp.linalg.norm(quat, axis=-1, keepdims=True)
        # one take from [y, unit quaternions] (fuses; a scatter would be a kernel of its own)
        source_of = np.arange(y.shape[-1])
        source_of[idx.ravel()] = y.shape[-1] + np.arange(idx.size)
        flat = unit.reshape(*unit.shape[:-2], -1)
        return take(jnp.concatenate([y, flat], axis=-1), source_of)

    # -- kinematics pass ---------------------------------------------------------------------

    def _joint_local(self, group: _Group, q, qd, with_velocity: bool):
        """Offset and joint motion of a group's bodies ``(.., G)``: ``(R, p, Phi (6, nv_j,
        G), V_rel (6, 1, G), dPhi/dt qd_j (6, 1, G))``."""
        p = self.params
        b = np.asarray(group.bodies, dtype=int)
        Ro, po = jnp.moveaxis(p.offset_rotation[b], 0, -1), p.offset_position[b].T
        G, dtype = b.size, q.dtype
        kind = group.joint
        dphi = jnp.zeros((6, 1, G), dtype)
        if kind == "fixed":
            return Ro, po, jnp.zeros((6, 0, G), dtype), jnp.zeros((6, 1, G), dtype), dphi
        jq, jv = np.asarray(group.joint_q, dtype=int), np.asarray(group.joint_v, dtype=int)
        qj, vj = take(q, jq).T, take(qd, jv).T  # (nq_j, G), (nv_j, G)
        if kind in EUCLIDEAN_JOINTS:
            screws = jnp.moveaxis(p.joint_screw[np.asarray(group.joint_e, dtype=int)], 0, -1)  # (a, 6, G)
            Rm, pm = screw_motion(screws, qj)
            if kind == "universal":
                # Phi = [Ad_exp(-S2 q2) S1, S2]: the first axis seen from the moved frame.
                R2 = screw_motion(screws[1:], qj[1:])[0]
                first = jnp.einsum("jig,jg->ig", R2, screws[0, :3])
                phi = jnp.stack([jnp.concatenate([first, jnp.zeros_like(first)]), screws[1]], axis=1)
                if with_velocity:
                    dphi = ops.bracket(phi[:, :1] * vj[0][None, None], phi[:, 1:] * vj[1][None, None])
            else:
                phi = jnp.moveaxis(screws, 0, 1)  # (6, 1, G)
        elif kind == "spherical":
            Rm, pm = quaternion_to_rotation(qj), jnp.zeros((3, G), dtype)
            phi = jnp.broadcast_to(jnp.eye(6, 3, dtype=dtype)[:, :, None], (6, 3, G))
        else:  # free
            Rm, pm = quaternion_to_rotation(qj[3:]), qj[:3]
            phi = jnp.broadcast_to(jnp.eye(6, dtype=dtype)[:, :, None], (6, 6, G))
        if kind in ("spherical", "free"):  # Phi = [1; 0]: the twist is the velocity itself
            rel = jnp.concatenate([vj, jnp.zeros((6 - vj.shape[0], G), dtype)])[:, None, :]
        else:
            rel = jnp.einsum("dkg,kg->dg", phi, vj)[:, None, :]
        R, pos = ops.compose(Ro, po, Rm, pm)
        return R, pos, phi, rel, dphi

    def _site_frames(self, frames, group_index: int, members, s, q, qd, with_velocity, at_origin=False) -> _Frames:
        """Frames at sites ``s`` ``(K,)`` [m] of the group's bodies ``members`` ``(K,)``
        (``at_origin``: the bodies' frames are the identity pose, see :func:`_attach`)."""
        group = self.structure.groups[group_index]
        base = _take(frames[group_index].root, members)
        if group.kind == "link":
            return base
        members = np.asarray(members, dtype=int)
        rods = jax.tree.map(lambda x: x[members], self._group_rods[group_index])
        rq, rv = np.asarray(group.rod_q, dtype=int)[members], np.asarray(group.rod_v, dtype=int)[members]
        local = _map_rods(
            lambda r, qb, vb, sb: r._frames(qb, vb, sb[None], with_velocity), rods, take(q, rq), take(qd, rv), s
        )
        return self._attach_rod(base, local, with_velocity, tuple(group.rod_v[m] for m in members), at_origin)

    @staticmethod
    def _attach_rod(base: _Frames, local, with_velocity: bool, rod_v, at_origin: bool = False) -> _Frames:
        """Attach vmapped rod frames ``(G, ..., P)`` (relative to each rod's body frame) to
        the body frames ``base`` ``(.., G)``; the rods' coordinates ``rod_v`` ``(G, n_b)``
        join the path. (A body frame does not move with its own rod's strains, so the
        body frames carry no columns for them.)"""
        G, P = local.R.shape[0], local.R.shape[-1]
        flat = lambda x: jnp.moveaxis(x, 0, -2).reshape(*x.shape[1:-1], G * P)  # noqa: E731
        R, p, own, rel, dphi = (flat(x) for x in (local.R, local.p, local.J, local.eta, local.jdot_qd))
        return _attach(_repeat(base, P), R, p, own, rel, dphi, rod_v, with_velocity, at_origin)

    def _kinematics(self, q, qd, with_velocity: bool, free_roots_fixed: bool = False) -> list[_GroupFrames]:
        """Frames of every group's bodies and rod quadrature points, proximal to distal.
        ``free_roots_fixed``: bodies on a free joint (all roots) are placed at the origin, so
        their descendants' frames are relative to them (:meth:`_reference_gravity`)."""
        out = []
        dtype = q.dtype
        for gi, group in enumerate(self.structure.groups):
            G = len(group.bodies)
            if group.parent_group < 0:
                eye = jnp.broadcast_to(jnp.eye(3, dtype=dtype)[:, :, None], (3, 3, G))
                site = _Frames(eye, jnp.zeros((3, G), dtype), jnp.zeros((6, 2, G), dtype), ((),) * G)
            else:
                s = self.params.site[np.asarray(group.bodies, dtype=int)]
                parent_at_origin = free_roots_fixed and self.structure.groups[group.parent_group].joint == "free"
                site = self._site_frames(
                    out, group.parent_group, group.parent_members, s, q, qd, with_velocity, parent_at_origin
                )
            R, p, phi, rel, dphi = self._joint_local(group, q, qd, with_velocity)
            at_origin = free_roots_fixed and group.joint == "free"  # free joints are at roots only
            if at_origin:
                R = jnp.broadcast_to(jnp.eye(3, dtype=dtype)[:, :, None], (3, 3, G))
                p = jnp.zeros((3, G), dtype)
            root = _attach(site, R, p, phi, rel, dphi, group.joint_v, with_velocity, group.parent_group < 0)
            points = None
            if group.kind == "rod":
                rq, rv = np.asarray(group.rod_q, dtype=int), np.asarray(group.rod_v, dtype=int)
                local = _map_rods(
                    lambda r, qb, vb: r._quadrature_frames(qb, vb, with_velocity),
                    self._group_rods[gi],
                    take(q, rq),
                    take(qd, rv),
                )
                points = self._attach_rod(root, local, with_velocity, group.rod_v, at_origin)
            out.append(_GroupFrames(root, points))
        return out

    # -- mass points -------------------------------------------------------------------------

    def _reference_gravity(self, q) -> list:
        """Gravity ``(3, G)`` per group in the frame its bodies' frames are relative to under
        ``free_roots_fixed``: ``R_b^T g`` in the frame of the free root ``b`` the body descends
        from (the dynamics of a floating tree depend on its base pose through gravity only),
        or ``None`` for groups placed in the world frame."""
        g, out = self.params.gravity, []
        for group in self.structure.groups:
            if group.parent_group >= 0:
                up = out[group.parent_group]
                out.append(None if up is None else up[:, np.asarray(group.parent_members, dtype=int)])
            elif group.joint == "free":
                b = np.asarray(group.bodies, dtype=int)
                g_offset = jnp.einsum("gji,j->ig", self.params.offset_rotation[b], g)  # R_offset^T g
                quat = take(q, np.asarray(group.joint_q, dtype=int)[:, 3:]).T  # (4, G)
                out.append(quaternion_rotate(quat, g_offset, inverse=True))
            else:
                out.append(None)
        return out

    def _mass_points(self, q, qd, with_velocity: bool, free_roots_fixed: bool = False):
        """``(diagonal, full)``: lists of ``(frames, mass (6, X), gravity)`` for rod points
        and of ``(frames, inertia (6, 6, X), mass (X,), first moment m c (3, X), gravity)``
        for links and payloads; ``gravity`` ``(3, X)`` or ``(3, 1)`` in the frame the frames
        are relative to (the world unless ``free_roots_fixed``, see :meth:`_kinematics`)."""
        p = self.params
        frames = self._kinematics(q, qd, with_velocity, free_roots_fixed)
        world = p.gravity[:, None]
        gravity = self._reference_gravity(q) if free_roots_fixed else [None] * len(frames)
        diagonal, full = [], []
        for gi, group in enumerate(self.structure.groups):
            g_group = world if gravity[gi] is None else gravity[gi]
            if group.kind == "rod":
                m = jnp.moveaxis(self._group_rods[gi]._quad_mass, 0, -2)  # (6, G, P)
                g_points = g_group if gravity[gi] is None else jnp.repeat(g_group, m.shape[-1], axis=-1)
                diagonal.append((frames[gi].points, m.reshape(6, -1), g_points))
            else:
                li = np.asarray(group.items, dtype=int)
                mass, com = p.link_mass[li], p.link_com[li].T
                inertia = jnp.moveaxis(p.link_inertia[li], 0, -1)
                full.append((frames[gi].root, _spatial_inertia(mass, com, inertia), mass, mass * com, g_group))
        for gi, members, payloads in self.structure.payload_groups:
            k = np.asarray(payloads, dtype=int)
            at_origin = free_roots_fixed and self.structure.groups[gi].joint == "free"
            site = self._site_frames(frames, gi, members, p.payload_site[k], q, qd, with_velocity, at_origin)
            mass, com = p.payload_mass[k], p.payload_position[k].T
            zero = jnp.zeros((3, 3, k.size), mass.dtype)
            g_site = world if gravity[gi] is None else gravity[gi][:, np.asarray(members, dtype=int)]
            full.append((site, _spatial_inertia(mass, com, zero), mass, mass * com, g_site))
        return diagonal, full

    def _terms(self, q, qd, with_velocity: bool, want_mass: bool = True, split_bias: bool = True):
        """``(M, C qd, G)`` from one pass (``C qd`` zero without velocities); each set of
        mass points adds per-body blocks on its path coordinates. ``split_bias=False``
        returns ``(M, C qd + G, None)``, the bias from one contraction per set."""
        n = self.num_dofs
        diagonal, full = self._mass_points(q, qd, with_velocity, free_roots_fixed=True)
        M = jnp.zeros((n, n), q.dtype)
        cor = jnp.zeros((n,), q.dtype)
        grav = jnp.zeros((n,), q.dtype)

        def add_forces(cor, grav, f, J, inertial, weight):
            if split_bias:
                cor = _scatter_blocks(cor, f, jnp.einsum("dlgp,dgp->gl", J, f.blocks(inertial)))
                return cor, _scatter_blocks(grav, f, -jnp.einsum("dlgp,dgp->gl", J, f.blocks(weight)))
            return _scatter_blocks(cor, f, jnp.einsum("dlgp,dgp->gl", J, f.blocks(inertial - weight))), grav

        for f, m, g in diagonal:
            L = f.length
            J, eta, jd = f.blocks(f.cols[:, :L]), f.cols[:, L], f.cols[:, L + 1]
            if want_mass:
                M = _scatter_blocks(M, f, jnp.einsum("digp,dgp,djgp->gij", J, f.blocks(m), J))
            inertial = m * jd - ops.coad_apply(eta, m * eta)
            weight = ops.force_wrench(f.R, g * m[3])
            cor, grav = add_forces(cor, grav, f, J, inertial, weight)
        for f, I6, _, _, g in full:
            L = f.length
            J, eta, jd = f.blocks(f.cols[:, :L]), f.cols[:, L], f.cols[:, L + 1]
            if want_mass:
                M = _scatter_blocks(M, f, jnp.einsum("digp,degp,ejgp->gij", J, f.blocks(I6), J))
            mom = jnp.einsum("dex,ex->dx", I6, eta)
            inertial = jnp.einsum("dex,ex->dx", I6, jd) - ops.coad_apply(eta, mom)
            acc = ops.force_wrench(f.R, jnp.broadcast_to(g, f.p.shape))  # [0; R^T g]
            weight = jnp.einsum("dex,ex->dx", I6, acc)
            cor, grav = add_forces(cor, grav, f, J, inertial, weight)
        return M, cor, (grav if split_bias else None)

    # -- kinematic queries -------------------------------------------------------------------

    def _point_frames(self, q, qd, s, body, with_velocity) -> _Frames:
        b = self.body_index(body)
        gi, member = self.structure.body_group[b]
        s = jnp.asarray(s, q.dtype).reshape(-1)
        frames = self._kinematics(q, qd, with_velocity)
        return self._site_frames(frames, gi, (member,) * s.shape[0], s, q, qd, with_velocity)

    def _to_frame(self, f: _Frames, frame: str) -> Array:
        J = _scatter_columns(f, self.num_dofs)
        if frame == "body":
            return J
        if frame == "inertial":
            return ops.rotate_twists(f.R, J)
        raise ValueError(f"frame: unknown {frame!r}; use 'inertial' or 'body'")

    def forward_kinematics(self, q: Float[Array, " nq"], s=0.0, body=None) -> Float[Array, "4 4"]:
        """World pose ``(4, 4)`` of the point ``s`` [m] of a rod body (its backbone frame) or
        of a link's frame (``s`` ignored); ``body`` a name or index (default: ``tip``)."""
        f = self._point_frames(q, jnp.zeros(self.num_dofs, q.dtype), s, body, False)
        return ops.pose_matrix(f.R[..., 0], f.p[:, 0])

    def forward_kinematics_batched(self, q: Float[Array, " nq"], s_ps, body=None) -> Array:
        """Poses ``(p, 4, 4)`` at the abscissae ``s_ps`` ``(p,)`` of one body."""
        f = self._point_frames(q, jnp.zeros(self.num_dofs, q.dtype), s_ps, body, False)
        return jax.vmap(ops.pose_matrix, in_axes=(2, 1))(f.R, f.p)

    def backbone_positions(self, q: Float[Array, " nq"], s_ps, body=None) -> Array:
        """World positions ``(p, 3)`` [m] at the abscissae ``s_ps`` of one body."""
        return self._point_frames(q, jnp.zeros(self.num_dofs, q.dtype), s_ps, body, False).p.T

    def jacobian(self, q: Float[Array, " nq"], s=0.0, frame: str = "inertial", body=None) -> Array:
        """Twist Jacobian ``(6, n)`` of the point ``s`` of ``body``: ``"inertial"`` gives
        world-frame ``[omega, pdot]``, ``"body"`` the twist in the point's frame."""
        f = self._point_frames(q, jnp.zeros(self.num_dofs, q.dtype), s, body, False)
        return self._to_frame(f, frame)[..., 0]

    def jacobian_batched(self, q: Float[Array, " nq"], s_ps, frame: str = "inertial", body=None) -> Array:
        """Twist Jacobians ``(p, 6, n)`` at the abscissae ``s_ps`` ``(p,)`` of one body
        (:meth:`jacobian`'s frames)."""
        f = self._point_frames(q, jnp.zeros(self.num_dofs, q.dtype), s_ps, body, False)
        return jnp.moveaxis(self._to_frame(f, frame), -1, 0)

    def pose_and_jacobian_batched(self, q: Float[Array, " nq"], s_ps, frame: str = "inertial", body=None):
        """Poses ``(p, 4, 4)`` and Jacobians ``(p, 6, n)`` at the abscissae ``s_ps`` of one
        body, from one kinematics pass."""
        s_ps = jnp.asarray(s_ps, q.dtype).reshape(-1)
        return self.poses_and_jacobians(q, [self.body_index(body)] * s_ps.shape[0], s_ps, frame)

    def poses_and_jacobians(self, q: Float[Array, " nq"], bodies, s, frame: str = "inertial") -> tuple[Array, Array]:
        """World poses ``(K, 4, 4)`` and twist Jacobians ``(K, 6, n)`` of ``K`` points of
        several bodies: point ``k`` at the abscissa ``s[k]`` [m] of ``bodies[k]`` (a name or
        index; a link's frame for a link). One kinematics pass; the points on the bodies of
        one group (a star's arms) are evaluated together."""
        index = [self.body_index(b) for b in bodies]
        s = jnp.asarray(s, q.dtype).reshape(-1)
        if s.shape[0] != len(index):
            raise ValueError(f"s: one abscissa per body, got {s.shape[0]} for {len(index)} bodies")
        qd = jnp.zeros(self.num_dofs, q.dtype)
        frames = self._kinematics(q, qd, False)
        by_group: dict[int, list[tuple[int, int]]] = {}
        for k, b in enumerate(index):
            gi, member = self.structure.body_group[b]
            by_group.setdefault(gi, []).append((k, member))
        order, poses, jacobians = [], [], []
        for gi, items in by_group.items():
            ks = np.array([k for k, _ in items], dtype=int)
            f = self._site_frames(frames, gi, tuple(m for _, m in items), take(s, ks), q, qd, False)
            poses.append(jax.vmap(ops.pose_matrix, in_axes=(2, 1))(f.R, f.p))
            jacobians.append(jnp.moveaxis(self._to_frame(f, frame), -1, 0))
            order.extend(ks.tolist())
        inverse = np.argsort(np.asarray(order, dtype=int))
        return jnp.concatenate(poses)[inverse], jnp.concatenate(jacobians)[inverse]

    def pose_and_jacobian(self, q, s=0.0, frame: str = "inertial", body=None) -> tuple[Array, Array]:
        """``(forward_kinematics, jacobian)`` from one pass."""
        f = self._point_frames(q, jnp.zeros(self.num_dofs, q.dtype), s, body, False)
        return ops.pose_matrix(f.R[..., 0], f.p[:, 0]), self._to_frame(f, frame)[..., 0]

    def jacobian_and_time_derivative(self, q, qd, s=0.0, frame: str = "inertial", body=None) -> tuple[Array, Array]:
        """``(J, dJ/dt)`` ``(6, n)`` each, ``dJ/dt`` along ``dq/dt = configuration_rate(q, qd)``."""
        return jax.jvp(lambda q_: self.jacobian(q_, s, frame, body), (q,), (self.configuration_rate(q, qd),))

    def body_poses(self, q: Float[Array, " nq"]) -> Float[Array, "B 4 4"]:
        """World poses ``(B, 4, 4)`` of every body frame, in declaration order."""
        frames = self._kinematics(q, jnp.zeros(self.num_dofs, q.dtype), False)
        R = jnp.concatenate([f.root.R for f in frames], axis=-1)
        p = jnp.concatenate([f.root.p for f in frames], axis=-1)
        order = [b for g in self.structure.groups for b in g.bodies]
        inverse = np.argsort(np.asarray(order, dtype=int))
        return jax.vmap(ops.pose_matrix, in_axes=(2, 1))(R[..., inverse], p[:, inverse])

    def cable_paths(self, q: Float[Array, " nq"]) -> tuple[Array, ...]:
        """World positions ``(V, 3)`` [m] of every cable's via points, in order (one pass)."""
        x = via_points(self, self.cables, q)[0]
        ends = np.cumsum([1 + self.cables.span_cable.count(k) for k in range(self.cables.num_cables)])
        return tuple(x[a:b] for a, b in zip(np.concatenate([[0], ends[:-1]]), ends, strict=True))

    # -- dynamics ----------------------------------------------------------------------------

    def inertia_matrix(self, q: Float[Array, " nq"]) -> Float[Array, "n n"]:
        """``M(q) = sum J^T M_p J`` over the mass points."""
        return self._terms(q, jnp.zeros(self.num_dofs, q.dtype), False)[0]

    def coriolis_force(self, q, qd) -> Float[Array, " n"]:
        """``C(q, qd) qd = sum J^T (M_p dJ/dt qd - ad_eta^T M_p eta)``, no ``C`` formed."""
        return self._terms(q, qd, True, want_mass=False)[1]

    def gravitational_force(self, q) -> Float[Array, " n"]:
        """``G(q) = -sum J^T M_p [0; R^T g] = dU_g/dq`` (on the velocity coordinates)."""
        return self._terms(q, jnp.zeros(self.num_dofs, q.dtype), False, want_mass=False)[2]

    def dynamical_terms(self, q, qd) -> DynamicalTerms:
        """``(M, C qd, G)`` from one shared pass."""
        return DynamicalTerms(*self._terms(q, qd, True))

    def inertia_and_bias(self, q, qd) -> tuple[Array, Array]:
        """``(M, C qd + G)``, the bias from one contraction per set of mass points."""
        M, bias, _ = self._terms(q, qd, True, split_bias=False)
        return M, bias

    def coriolis_matrix(self, q, qd) -> Float[Array, "n n"]:
        """``C = sum J^T (M_p dJ/dt + (M_p ad_eta - ad_eta^T M_p - adbar(M_p eta)) J / 2)``
        with ``dM/dt - 2 C`` skew-symmetric and ``C qd`` equal to :meth:`coriolis_force`."""
        n = self.num_dofs
        rate = self.configuration_rate(q, qd)
        (diag, full), (ddiag, dfull) = jax.jvp(lambda q_: self._mass_points(q_, qd, True), (q,), (rate,))
        C = jnp.zeros((n, n), q.dtype)
        pairs = [(f, df, lambda x, m=m: m[:, None] * x) for (f, m, _), (df, _, _) in zip(diag, ddiag, strict=True)]
        pairs += [
            (f, df, lambda x, I6=I6: jnp.einsum("dex,ekx->dkx", I6, x))
            for (f, I6, _, _, _), (df, _, _, _, _) in zip(full, dfull, strict=True)
        ]
        for f, df, mass in pairs:
            L = f.length
            J, eta, dJ = f.cols[:, :L], f.cols[:, L : L + 1], df.cols[:, :L]
            m_eta = mass(eta)
            inner = mass(dJ) + 0.5 * (
                mass(ops.bracket(eta, J)) - ops.coad_apply(eta, mass(J)) - ops.coad_apply(J, m_eta)
            )
            C = _scatter_blocks(C, f, jnp.einsum("digp,djgp->gij", f.blocks(J), f.blocks(inner)))
        return C

    def elastic_coordinates(self, q: Float[Array, " nq"]) -> Float[Array, " n"]:
        """``e(q)`` ``(n,)``: rod strains and Euclidean joint coordinates minus their rest
        values, zero on rotational slots (the argument of the Hookean ``K = S e``)."""
        s = self.structure
        q_ext = jnp.concatenate([q, jnp.zeros((1,), q.dtype)])
        e = take(q_ext, s.euclidean_q)
        slots = np.asarray(s.joint_rest_slots, dtype=int)
        return e.at[slots].add(-self.params.joint_rest) if slots.size else e

    def elastic_force(self, q) -> Float[Array, " n"]:
        """Hookean ``K(q) = S e(q)``: elementwise where ``S`` is diagonal by construction
        (a dense product is a kernel of its own), else as ``S_q q - S e_rest``."""
        if self._elastic_diagonals is not None:
            return self._elastic_diagonals[0] * self.elastic_coordinates(q)
        return self._stiffness_q @ q - self._stiffness_rest

    def damping_force(self, qd) -> Float[Array, " n"]:
        """``D qd``, elementwise where ``D`` is diagonal by construction."""
        if self._elastic_diagonals is not None:
            return self._elastic_diagonals[1] * qd
        return self._damping @ qd

    def stiffness_matrix(self) -> Float[Array, "n n"]:
        """Constant ``S = dK/dq`` on the velocity coordinates (zero rows for free joints)."""
        return self._stiffness

    def damping_matrix(self) -> Float[Array, "n n"]:
        return self._damping

    def elastic_energy(self, q) -> Float[Array, ""]:
        e = self.elastic_coordinates(q)
        return 0.5 * e @ (self._stiffness @ e)

    def gravitational_energy(self, q) -> Float[Array, ""]:
        """``U_g = -sum m g . p_com`` [J] (zero at the world origin)."""
        g = self.params.gravity
        diagonal, full = self._mass_points(q, jnp.zeros(self.num_dofs, q.dtype), False)
        U = jnp.zeros((), q.dtype)
        for f, m, _ in diagonal:
            U = U - jnp.sum(m[3] * (g @ f.p))
        for f, _, mass, first, _ in full:
            U = U - jnp.sum(mass * (g @ f.p)) - jnp.sum(g @ jnp.einsum("ijx,jx->ix", f.R, first))
        return U

    def linear_momentum(self, q, qd) -> Float[Array, " 3"]:
        """Total linear momentum ``(3,)`` [kg m/s] in the world frame."""
        return self.momentum(q, qd)[3:]

    def momentum(self, q, qd) -> Float[Array, " 6"]:
        """Total spatial momentum ``[angular about the world origin, linear]`` ``(6,)`` in the
        world frame (conserved without gravity, damping-free joints aside, and external load)."""
        diagonal, full = self._mass_points(q, qd, True)
        total = jnp.zeros((6,), q.dtype)
        bodies = [(f, lambda x, m=m: m * x) for f, m, _ in diagonal]
        bodies += [(f, lambda x, I6=I6: jnp.einsum("dex,ex->dx", I6, x)) for f, I6, _, _, _ in full]
        for f, mass in bodies:
            h = mass(f.cols[:, f.length])  # body-frame momentum at each point frame
            hw, hv = jnp.einsum("ijx,jx->ix", f.R, h[:3]), jnp.einsum("ijx,jx->ix", f.R, h[3:])
            ang = hw + jnp.cross(f.p, hv, axis=0)
            total = total + jnp.concatenate([jnp.sum(ang, axis=1), jnp.sum(hv, axis=1)])
        return total

    # -- actuation ---------------------------------------------------------------------------

    def actuation_context(self, q: Float[Array, " nq"]) -> TreeContext:
        """Stacked contexts of the actuated rod groups at ``q``."""
        parts = []
        for gi, group in enumerate(self.structure.groups):
            if group.actuated:
                rq = np.asarray(group.rod_q, dtype=int)
                parts.append(jax.vmap(lambda r, qb: r.actuation_context(qb))(self._group_rods[gi], q[rq]))
        if not self.cables.num_cables:
            return TreeContext(q, tuple(parts), self.num_dofs)
        lengths, A = cable_terms(self, self.cables, q)
        rest = jnp.asarray(self.cables.rest_lengths, q.dtype)
        return TreeContext(q, tuple(parts), self.num_dofs, lengths, A, rest - lengths)
