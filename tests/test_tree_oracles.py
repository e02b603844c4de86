"""Body trees against implementations nobody here wrote: MuJoCo on random rigid trees with a
free base (hinge, slide, ball and fixed joints), and soromox 0.5.0's floating-base PCS on
random parameters and states. Conventions differ (MuJoCo's free-joint velocity is
``[v_world, w_body]``, soromox's ``[w_world, v_world]``, soromox's quaternion is scalar-last);
the maps are stated where they are applied. Tolerances: MuJoCo and our kernels compute the
same sums in another order (1e-10 relative per block); soromox's Gauss nodes carry ~5e-8
error, so we integrate with soromox's own rule and compare at 1e-9 per block.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _oracles import oracle
from scipy.spatial.transform import Rotation

import sorogym as sg

pytestmark = pytest.mark.oracle


def _rel_blocks(ours, theirs, blocks):
    """Largest relative error over the blocks ``(rows, cols)`` of a matrix or vector, each
    scaled by its own largest entry (so small blocks are held to the same tolerance)."""
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    worst = 0.0
    for rows in blocks:
        for cols in blocks if theirs.ndim == 2 else [None]:
            a = ours[np.ix_(rows, cols)] if cols is not None else ours[rows]
            b = theirs[np.ix_(rows, cols)] if cols is not None else theirs[rows]
            scale = np.abs(b).max()
            if scale > 0:
                worst = max(worst, np.abs(a - b).max() / scale)
    return worst


def _rigid_tree(rng):
    """The same random rigid tree for both libraries: a free root, then hinge, slide, ball
    and fixed joints, branching twice."""
    spec = [  # (joint, parent)
        ("free", -1),
        ("revolute", 0),
        ("prismatic", 0),
        ("spherical", 1),
        ("revolute", 1),
        ("fixed", 2),
        ("revolute", 5),
    ]
    mj, ours = [], []
    for i, (kind, parent) in enumerate(spec):
        offset = np.eye(4)
        if parent >= 0:
            offset[:3, :3] = Rotation.from_rotvec(rng.normal(size=3)).as_matrix()
            offset[:3, 3] = rng.uniform(-0.2, 0.2, 3)
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        mass = rng.uniform(0.2, 2.0)
        box = rng.uniform(0.05, 0.3, 3)
        principal = (
            mass / 12 * np.array([box[1] ** 2 + box[2] ** 2, box[0] ** 2 + box[2] ** 2, box[0] ** 2 + box[1] ** 2])
        )
        R = Rotation.from_rotvec(rng.normal(size=3)).as_matrix()
        inertia, com = R @ np.diag(principal) @ R.T, rng.uniform(-0.1, 0.1, 3)
        mj.append(dict(parent=parent, offset=offset, joint=kind, axis=axis, mass=mass, com=com, inertia=inertia))
        joint = {
            "free": sg.Joint.free,
            "revolute": lambda a=axis: sg.Joint.revolute(a),
            "prismatic": lambda a=axis: sg.Joint.prismatic(a),
            "spherical": sg.Joint.spherical,
            "fixed": sg.Joint.fixed,
        }[kind]()
        ours.append(
            sg.RigidLink(
                f"b{i}", mass, com, inertia, parent=None if parent < 0 else f"b{parent}", joint=joint, offset=offset
            )
        )
    return mj, ours


@pytest.mark.parametrize("seed", [0, 1])
def test_rigid_tree_matches_mujoco(seed):
    from sorogym.testing._mujoco_tree import mujoco_tree_terms, to_body_twist_coordinates

    rng = np.random.default_rng(seed)
    mj_bodies, bodies = _rigid_tree(rng)
    gravity = rng.normal(size=3) * 5.0
    tree = sg.BodyTree(bodies, gravity=gravity)
    q = tree.retract(tree.neutral_configuration(), jnp.asarray(rng.normal(size=tree.num_dofs)))
    q = q.at[:3].set(jnp.asarray(rng.uniform(-1, 1, 3)))
    qd = jnp.asarray(rng.normal(size=tree.num_dofs))
    # our free-joint velocity is the body twist [w_b, v_b]; MuJoCo's is [R v_b, w_b]
    R = np.asarray(tree.body_poses(q)[0, :3, :3])
    qvel = np.asarray(qd).copy()
    qvel[:6] = np.concatenate([R @ qvel[3:6], qvel[:3]])
    ref = mujoco_tree_terms(mj_bodies, gravity, np.asarray(q), qvel)
    M_ref, bias_ref = to_body_twist_coordinates(ref["M"], ref["bias"], R, np.asarray(qd[:6]))
    M, cor, grav = jax.jit(lambda t, q, v: t.dynamical_terms(q, v))(tree, q, qd)
    blocks = [np.arange(0, 3), np.arange(3, 6)] + [np.array([k]) for k in range(6, tree.num_dofs)]
    assert _rel_blocks(M, M_ref, blocks) < 1e-10
    assert _rel_blocks(cor + grav, bias_ref, blocks) < 1e-10
    poses = np.asarray(tree.body_poses(q))
    np.testing.assert_allclose(poses[:, :3, 3], ref["xpos"], atol=1e-12)
    np.testing.assert_allclose(poses[:, :3, :3], ref["xmat"], atol=1e-12)


def _soromox_case(rng, n_seg):
    return dict(
        length=rng.uniform(0.08, 0.15, n_seg),
        radius=rng.uniform(0.008, 0.02, n_seg),
        density=rng.uniform(900.0, 1300.0, n_seg),
        young_modulus=rng.uniform(1e5, 1e6, n_seg),
        poisson_ratio=rng.uniform(0.3, 0.49, n_seg),
        damping=rng.uniform(0.0, 30.0, n_seg),
        gravity=rng.normal(size=3) * 5.0,
    )


@eqx.filter_jit
def _floating_terms(tree, q, qd):
    """Everything the soromox comparison reads, compiled once for both seeds (eager tree
    evaluation costs tens of seconds)."""
    qdd = tree.split_state(tree.forward_dynamics(0.0, tree.pack_state(q, qd)))[1]
    tip = tree.forward_kinematics(q, tree.tip_abscissa)
    return tree.dynamical_terms(q, qd), qdd, tree.elastic_force(q), tree.damping_force(qd), tip


@pytest.mark.parametrize("seed", [0, 1])
def test_floating_pcs_matches_soromox(seed):
    """A free rod body (no hub mass) is soromox's floating-base PCS. soromox's velocity is
    ``[w, v]`` in the world frame: ``qd_s = T qd`` with ``T = diag(R, R, 1)``, so
    ``M = T^T M_s T``, ``G = T^T G_s``, ``C qd + G = T^T (b_s + M_s dT/dt qd)`` and
    ``qdd_s = T qdd + [0, R (w_b x v_b), 0]``."""
    oracle("soromox")
    from sorogym.testing._soromox_floating import base_configuration, floating_pcs_terms

    rng = np.random.default_rng(seed)
    params = _soromox_case(rng, 2)
    n_rod = 12
    R = Rotation.from_rotvec(rng.normal(size=3)).as_matrix()
    p = rng.uniform(-0.5, 0.5, 3)
    q_rod = 0.5 * rng.normal(size=n_rod) * np.tile([3, 3, 3, 0.05, 0.05, 0.05], 2)
    w_b, v_b, qd_rod = rng.normal(size=3), rng.normal(size=3), rng.normal(size=n_rod)
    T = np.eye(6 + n_rod)
    T[:3, :3] = T[3:6, 3:6] = R
    qd_s = T @ np.concatenate([w_b, v_b, qd_rod])
    ref = floating_pcs_terms(params, base_configuration(R, p, q_rod), qd_s)

    rod_params = sg.RodParams.create(
        length=params["length"], radius=params["radius"], density=params["density"],
        young_modulus=params["young_modulus"], poisson_ratio=params["poisson_ratio"], damping=params["damping"],
        base_rotation=np.eye(3), dtype=jnp.float64,
    )  # fmt: skip
    rod = sg.PCS(rod_params, quadrature=(ref["quad_nodes"], ref["quad_weights"]))
    tree = sg.BodyTree([sg.RodBody("rod", rod, joint=sg.Joint.free(), actuated=False)], gravity=params["gravity"])
    quat = Rotation.from_matrix(R).as_quat(scalar_first=True)
    q = jnp.asarray(np.concatenate([p, quat, q_rod]))
    qd = jnp.asarray(np.concatenate([w_b, v_b, qd_rod]))
    (M, cor, grav), qdd, Kq, Dqd, tip = _floating_terms(tree, q, qd)
    drift = np.zeros(6 + n_rod)
    drift[3:6] = R @ np.cross(w_b, v_b)
    blocks = [np.arange(0, 3), np.arange(3, 6)] + [np.arange(6 + 6 * k, 12 + 6 * k) for k in range(2)]
    assert _rel_blocks(M, T.T @ ref["M"] @ T, blocks) < 1e-9
    assert _rel_blocks(grav, T.T @ ref["G"], blocks) < 1e-9
    assert _rel_blocks(cor + grav, T.T @ (ref["Cqd"] + ref["G"] + ref["M"] @ drift), blocks) < 1e-9
    assert _rel_blocks(Kq, ref["Kq"], blocks[2:]) < 1e-12
    assert _rel_blocks(Dqd, ref["Dqd"], blocks[2:]) < 1e-12
    assert _rel_blocks(T @ np.asarray(qdd) + drift, ref["qdd"], blocks) < 1e-7  # M's condition ~1e7
    np.testing.assert_allclose(tip, ref["tip_pose"], atol=1e-12)
