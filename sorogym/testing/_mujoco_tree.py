"""MuJoCo oracle for rigid trees with a floating base (MuJoCo is imported only when called).

``mujoco_tree_terms(bodies, gravity, qpos, qvel)`` builds the tree as MJCF, runs ``mj_forward``
and returns the full mass matrix (``mj_fullM``), the bias forces ``qfrc_bias`` (Coriolis,
centrifugal and gravity), the body poses ``xpos``/``xmat`` and the centres of mass ``xipos``.

The tree. ``bodies`` is a list of dicts in topological order (parents first), each with
``parent`` (index in the list, ``-1`` for the world), ``offset`` ((4, 4) transform from the
parent body's frame to this body's joint frame), ``joint`` (``"free"``, ``"revolute"``,
``"prismatic"``, ``"fixed"`` or ``"spherical"``), ``axis`` ((3,) unit axis in the joint frame,
revolute and prismatic only), ``mass``, ``com`` ((3,) in the body frame) and ``inertia``
((3, 3) about the com, body-frame axes). The body frame is the joint frame moved by the joint:
rotated about the axis through the joint-frame origin (revolute), translated along the axis
(prismatic), rotated about the joint-frame origin (spherical), not moved (fixed); a free body
(parent ``-1`` only) has the joint configuration as its world pose, and its ``offset`` only
sets MuJoCo's reference configuration ``qpos0``, which plays no part in the terms returned.
Each body becomes one MJCF ``<body>`` at ``offset`` with its joint at the body origin, so that
MuJoCo's body frame is exactly the body frame above (``alignfree`` and ``fusestatic`` off), and
an ``<inertial>`` from the eigen-decomposition of ``inertia`` (principal moments as
``diaginertia``, principal axes as ``quat``). No geoms, contacts off, no damping, stiffness,
armature or friction loss. MuJoCo rejects inertias that break the triangle inequality
(``A + B >= C``) and moving bodies without mass.

Coordinate order. ``qpos``, ``qvel`` and the returned ``M`` and ``bias`` follow the order of
``bodies``: body 0's coordinates, then body 1's, ... (none for a fixed body). MuJoCo itself
numbers bodies depth first (a grandchild comes right after its parent, before its parent's
later siblings), which can differ; the permutation is done here. ``qpos_adr[i]``,
``dof_adr[i]`` give where body ``i``'s coordinates start in our order (``-1``: fixed), and
``xpos``, ``xmat``, ``xipos`` are indexed as ``bodies``.

MuJoCo's conventions (checked by experiment with mujoco 4.0.0: ``mj_differentiatePos`` on
motions built from the definitions below, the mass matrix against ``sum m Jv^T Jv + Jw^T I Jw``
from finite differences of an independent forward kinematics, gravity against
``-sum m Jv^T g``, the free-body bias against Newton-Euler, and the power identity
``qvel . bias = 0.5 qvel^T (dM/dt) qvel`` at zero gravity):

* free joint, 7 ``qpos``: ``[x, y, z, qw, qx, qy, qz]``, the world position of the body-frame
  origin and the unit quaternion, scalar first, of the body-to-world rotation ``R``
  (``data.xquat`` equals it);
* free joint, 6 ``qvel``: ``[v, w_b]`` with ``v = d/dt [x, y, z]`` the velocity of the
  body-frame origin in the **world** frame and ``w_b`` the angular velocity in the **body**
  (local) frame, ``R^T dR/dt = [w_b]_x``;
* ball joint, 4 ``qpos``: unit quaternion ``[qw, qx, qy, qz]``, scalar first, of the rotation
  from the body frame to the joint frame (``R_world_body = R_world_joint R(q)``); 3 ``qvel``:
  the angular velocity of the body relative to its parent, in the **body** frame;
* hinge (revolute) and slide (prismatic): one angle [rad] / displacement, positive by the
  right-hand rule about / along ``axis``; ``qvel`` its rate.

MuJoCo normalises (a copy of) each quaternion before use, so a non-unit one acts as its
normalisation.

Free joint and body twists. For a body-frame twist ``V = [w_b, v_b]`` (angular first, both in
the body frame, ``v_b = R^T v`` the body-frame velocity of the body-frame origin), MuJoCo's
free-joint velocity is ``qvel = T V`` with ``T = [[0, R], [1, 0]]`` (3x3 blocks: ``v = R v_b``,
``w_b = w_b``); ``free_twist_map(R)`` gives ``T``, ``twist_to_mujoco_qvel`` and
``mujoco_qvel_to_twist`` apply it and its inverse. Equations of motion written in ``V`` follow
from ``M_mj qacc + bias_mj = tau_mj`` with ``qacc = T dV/dt + dT/dt V``, where ``dT/dt V =
[R (w_b x v_b), 0]``: ``M_V = T^T M_mj T``, ``bias_V = T^T (bias_mj + M_mj dT/dt V)`` and
``tau_V = T^T tau_mj`` (``to_body_twist_coordinates`` does this for the free base of a tree).
For one free body (mass ``m``, com ``r`` and inertia ``I_c`` in the body frame) MuJoCo's bias
is, with ``w = w_b``,

    bias_mj = [m R (w x (w x r)) - m g,  w x I_c w + m r x (w x (w x r)) - m r x (R^T g)]

(Newton-Euler about the com, then moved to the body origin and projected on ``qvel``), and in
twist coordinates, with ``p = m (v_b + w x r)`` and ``h = I_c w + r x p`` the body-frame linear
and angular (about the origin) momenta, ``bias_V = [w x h + v_b x p, w x p]`` at zero gravity.
"""

from __future__ import annotations

import numpy as np

_JOINTS = {"free": (7, 6), "revolute": (1, 1), "prismatic": (1, 1), "spherical": (4, 3), "fixed": (0, 0)}


def _vec(values) -> str:
    return " ".join(f"{float(x):.17g}" for x in np.ravel(values))


def _quat(R) -> np.ndarray:
    """Unit quaternion ``[w, x, y, z]`` of a rotation matrix."""
    from scipy.spatial.transform import Rotation

    x, y, z, w = Rotation.from_matrix(R).as_quat()
    return np.array([w, x, y, z])


def _pose_attrs(T) -> str:
    return f'pos="{_vec(T[:3, 3])}" quat="{_vec(_quat(T[:3, :3]))}"'


def _inertial(body) -> str:
    """``<inertial>`` with the principal moments and axes of the inertia about the com."""
    inertia = np.asarray(body["inertia"], dtype=float)
    moments, axes = np.linalg.eigh(0.5 * (inertia + inertia.T))
    if np.linalg.det(axes) < 0:
        axes[:, 0] = -axes[:, 0]  # a proper rotation (principal axes are defined up to sign)
    return (
        f'<inertial pos="{_vec(body["com"])}" quat="{_vec(_quat(axes))}" '
        f'mass="{_vec(body["mass"])}" diaginertia="{_vec(moments)}"/>'
    )


def _joint(i: int, body) -> str:
    kind = body["joint"]
    common = 'pos="0 0 0" stiffness="0" damping="0" armature="0" frictionloss="0" limited="false"'
    if kind == "free":
        return f'<joint name="j{i}" type="free" damping="0" armature="0" frictionloss="0"/>'
    if kind == "revolute":
        return f'<joint name="j{i}" type="hinge" axis="{_vec(body["axis"])}" {common}/>'
    if kind == "prismatic":
        return f'<joint name="j{i}" type="slide" axis="{_vec(body["axis"])}" {common}/>'
    if kind == "spherical":
        return f'<joint name="j{i}" type="ball" {common}/>'
    return ""  # fixed: welded to the parent at ``offset``


def _check(bodies) -> None:
    for i, body in enumerate(bodies):
        kind, parent = body.get("joint"), body.get("parent")
        if kind not in _JOINTS:
            raise ValueError(f"bodies[{i}]: joint must be one of {sorted(_JOINTS)}, got {kind!r}")
        if not (isinstance(parent, int | np.integer) and -1 <= parent < i):
            raise ValueError(f"bodies[{i}]: parent must be -1 or an earlier body, got {parent!r}")
        if kind == "free" and parent != -1:
            raise ValueError(f"bodies[{i}]: a free joint needs parent -1, got {parent}")
        if np.shape(body["offset"]) != (4, 4) or np.shape(body["inertia"]) != (3, 3) or np.shape(body["com"]) != (3,):
            raise ValueError(f"bodies[{i}]: offset (4, 4), inertia (3, 3) and com (3,) expected")


def tree_to_mjcf(bodies, gravity) -> str:
    """The tree as MJCF: body ``i`` is ``<body name="b{i}">`` with joint ``j{i}``."""
    _check(bodies)
    children = {i: [] for i in range(-1, len(bodies))}
    for i, body in enumerate(bodies):
        children[int(body["parent"])].append(i)

    def emit(i: int) -> str:
        body = bodies[i]
        inner = "".join(emit(c) for c in children[i])
        offset = np.asarray(body["offset"], dtype=float)
        return f'<body name="b{i}" {_pose_attrs(offset)}>{_joint(i, body)}{_inertial(body)}{inner}</body>'

    return (
        '<mujoco><compiler angle="radian" inertiafromgeom="false" boundmass="0" boundinertia="0" '
        'alignfree="false" fusestatic="false" balanceinertia="false"/>'
        f'<option gravity="{_vec(gravity)}"><flag contact="disable"/></option>'
        f"<worldbody>{''.join(emit(c) for c in children[-1])}</worldbody></mujoco>"
    )


def mujoco_tree_terms(bodies, gravity, qpos, qvel) -> dict:
    """MuJoCo's dynamics terms of a rigid tree (module docstring: tree, coordinate order and
    MuJoCo's per-joint conventions for ``qpos``, ``qvel``).

    Returns ``M`` (nv, nv), ``bias`` (nv,) (``qfrc_bias``: ``M qacc + bias = tau``), ``xpos``
    (n, 3) and ``xmat`` (n, 3, 3) (body-frame origin and body-to-world rotation), ``xipos``
    (n, 3) (centres of mass), ``nq``, ``nv``, ``qpos_adr``, ``dof_adr`` (n,) (start of each
    body's coordinates in ``qpos``/``qvel``, ``-1`` for fixed bodies) and ``mjcf``."""
    import mujoco

    xml = tree_to_mjcf(bodies, gravity)
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    ids = [m.body(f"b{i}").id for i in range(len(bodies))]
    # our coordinate k <-> MuJoCo's qpos_perm[k] (and dof_perm for velocities)
    qpos_perm, dof_perm, qpos_adr, dof_adr = [], [], [], []
    for i, body in enumerate(bodies):
        nq_i, nv_i = _JOINTS[body["joint"]]
        if nq_i == 0:
            qpos_adr.append(-1)
            dof_adr.append(-1)
            continue
        joint = m.body_jntadr[ids[i]]
        qpos_adr.append(len(qpos_perm))
        dof_adr.append(len(dof_perm))
        qpos_perm += list(range(m.jnt_qposadr[joint], m.jnt_qposadr[joint] + nq_i))
        dof_perm += list(range(m.jnt_dofadr[joint], m.jnt_dofadr[joint] + nv_i))
    qpos_perm, dof_perm = np.array(qpos_perm, dtype=int), np.array(dof_perm, dtype=int)
    assert len(qpos_perm) == m.nq and len(dof_perm) == m.nv
    qpos, qvel = np.asarray(qpos, dtype=float), np.asarray(qvel, dtype=float)
    if qpos.shape != (m.nq,) or qvel.shape != (m.nv,):
        raise ValueError(
            f"mujoco_tree_terms: qpos ({m.nq},) and qvel ({m.nv},) expected, got {qpos.shape} and {qvel.shape}"
        )
    d.qpos[qpos_perm], d.qvel[dof_perm] = qpos, qvel
    mujoco.mj_forward(m, d)
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)  # MuJoCo >= 3.5 signature (model, data, out)
    return dict(
        M=M[np.ix_(dof_perm, dof_perm)],
        bias=d.qfrc_bias[dof_perm].copy(),
        xpos=d.xpos[ids].copy(),
        xmat=d.xmat[ids].reshape(-1, 3, 3).copy(),
        xipos=d.xipos[ids].copy(),
        nq=int(m.nq),
        nv=int(m.nv),
        qpos_adr=np.array(qpos_adr, dtype=int),
        dof_adr=np.array(dof_adr, dtype=int),
        mjcf=xml,
    )


def free_twist_map(R) -> np.ndarray:
    """``T`` (6, 6) with ``qvel_mujoco = T @ [w_b, v_b]`` for a free body with body-to-world
    rotation ``R``: ``[[0, R], [1, 0]]``; its inverse is ``[[0, 1], [R^T, 0]]``."""
    T = np.zeros((6, 6))
    T[:3, 3:] = np.asarray(R, dtype=float)
    T[3:, :3] = np.eye(3)
    return T


def twist_to_mujoco_qvel(R, twist) -> np.ndarray:
    """MuJoCo's free-joint ``qvel = [R v_b, w_b]`` from a body twist ``[w_b, v_b]``."""
    twist = np.asarray(twist, dtype=float)
    return np.concatenate([np.asarray(R, dtype=float) @ twist[3:], twist[:3]])


def mujoco_qvel_to_twist(R, qvel) -> np.ndarray:
    """The body twist ``[w_b, v_b] = [qvel[3:], R^T qvel[:3]]`` of a free-joint ``qvel``."""
    qvel = np.asarray(qvel, dtype=float)
    return np.concatenate([qvel[3:6], np.asarray(R, dtype=float).T @ qvel[:3]])


def to_body_twist_coordinates(M, bias, R, twist, dof: int = 0):
    """``(M_V, bias_V)``: MuJoCo's ``M`` and ``bias`` with the free joint at dofs
    ``dof:dof+6`` re-expressed in body-twist coordinates (``R``: its body-to-world rotation,
    ``twist``: its body twist ``[w_b, v_b]``; the other coordinates unchanged):
    ``M_V = T^T M T``, ``bias_V = T^T (bias + M dT/dt V)`` with ``dT/dt V = [R (w_b x v_b), 0]``
    in the free joint's slots."""
    M, bias = np.asarray(M, dtype=float), np.asarray(bias, dtype=float)
    R, twist = np.asarray(R, dtype=float), np.asarray(twist, dtype=float)
    T = np.eye(len(bias))
    T[dof : dof + 6, dof : dof + 6] = free_twist_map(R)
    drift = np.zeros(len(bias))
    drift[dof : dof + 3] = R @ np.cross(twist[:3], twist[3:])
    return T.T @ M @ T, T.T @ (bias + M @ drift)
