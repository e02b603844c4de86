"""The articulated soft robot against MuJoCo on randomised chains built as MJCF (mass matrix
from ``mj_fullM``, bias forces ``qfrc_bias``, spring and damper forces ``qfrc_passive``,
accelerations ``qacc``, body Jacobians ``mj_jacBody``), plus structural identities
(``dM/dt - 2C`` skew, ``C qd`` both ways, energy balance) and bad input."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import sorogym as sg

mujoco = pytest.importorskip("mujoco")


def random_chain(rng: np.random.Generator, n: int, prismatic_share: float = 0.3) -> sg.ArticulatedSoftRobot:
    """Random chain: random fixed transforms, revolute axes through random points or
    prismatic axes, random masses, centres of mass and (box-like) inertias, springs,
    dampers, rest positions, gravity and base pose."""
    axes, transforms, inertias = [], [], []
    for _ in range(n):
        if rng.uniform() < prismatic_share:
            v = rng.normal(size=3)
            axes.append(np.concatenate([np.zeros(3), v / np.linalg.norm(v)]))
        else:
            w = rng.normal(size=3)
            w /= np.linalg.norm(w)
            p = rng.uniform(-0.1, 0.1, 3)
            axes.append(np.concatenate([w, np.cross(p, w)]))
        T = np.eye(4)
        T[:3, :3] = Rotation.from_rotvec(rng.normal(size=3)).as_matrix()
        T[:3, 3] = rng.uniform(-0.3, 0.3, 3)
        transforms.append(T)
        box, mass_ = rng.uniform(0.02, 0.3, 3), 1.0
        principal = mass_ / 12 * np.array([box[1] ** 2 + box[2] ** 2, box[0] ** 2 + box[2] ** 2, box[0] ** 2 + box[1] ** 2])
        R = Rotation.from_rotvec(rng.normal(size=3)).as_matrix()
        inertias.append(R @ np.diag(principal) @ R.T)
    mass = rng.uniform(0.2, 2.0, n)
    base = np.eye(4)
    base[:3, :3] = Rotation.from_rotvec(rng.normal(size=3)).as_matrix()
    base[:3, 3] = rng.uniform(-0.5, 0.5, 3)
    params = sg.ChainParams.create(
        joint_axes=np.array(axes), parent_to_joint=np.array(transforms), mass=mass,
        com=rng.uniform(-0.1, 0.1, (n, 3)), inertia=np.array(inertias) * mass[:, None, None],
        stiffness=rng.uniform(0.0, 5.0, n), damping=rng.uniform(0.0, 1.0, n), rest=rng.uniform(-0.5, 0.5, n),
        gravity=rng.normal(size=3) * 5.0, base_pose=base, dtype=jnp.float64,
    )
    return sg.ArticulatedSoftRobot(params)


def _vec(values) -> str:
    return " ".join(f"{float(x):.17g}" for x in np.ravel(values))


def _pose_attrs(T) -> str:
    x, y, z, w = Rotation.from_matrix(T[:3, :3]).as_quat()
    return f'pos="{_vec(T[:3, 3])}" quat="{_vec([w, x, y, z])}"'


def to_mjcf(robot: sg.ArticulatedSoftRobot) -> str:
    """The same chain as MJCF: one body per link at its parent-to-joint transform, a hinge
    through the point ``p`` (``S = [w; p x w]``) or a slide joint, explicit inertials."""
    p = jax.tree.map(np.asarray, robot.params)
    body = ""
    for i in reversed(range(robot.num_dofs)):
        w, v = p.joint_axes[i, :3], p.joint_axes[i, 3:]
        if np.linalg.norm(w) > 0.5:
            point = np.cross(w, v)  # the point on the axis closest to the origin: v = p x w
            joint = f'type="hinge" pos="{_vec(point)}" axis="{_vec(w)}"'
        else:
            joint = f'type="slide" pos="0 0 0" axis="{_vec(v)}"'
        I = p.inertia[i]
        full = _vec([I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]])
        body = (
            f'<body name="link{i}" {_pose_attrs(p.parent_to_joint[i])}>'
            f'<joint name="j{i}" {joint} stiffness="{_vec(p.stiffness[i])}" damping="{_vec(p.damping[i])}" '
            f'springref="{_vec(p.rest[i])}" armature="0" frictionloss="0"/>'
            f'<inertial pos="{_vec(p.com[i])}" mass="{_vec(p.mass[i])}" fullinertia="{full}"/>'
            f"{body}</body>"
        )
    return (
        '<mujoco><compiler angle="radian" inertiafromgeom="false" boundmass="0" boundinertia="0"/>'
        f'<option gravity="{_vec(p.gravity)}"/>'
        f'<worldbody><body name="base" {_pose_attrs(p.base_pose)}>{body}</body></worldbody></mujoco>'
    )


def mujoco_terms(robot, q, qd, tau):
    m = mujoco.MjModel.from_xml_string(to_mjcf(robot))
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:], d.qfrc_applied[:] = q, qd, tau
    mujoco.mj_forward(m, d)
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)  # MuJoCo >= 3.5 signature (model, data, out)
    jacobians = []
    for i in range(robot.num_dofs):
        jacp, jacr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
        mujoco.mj_jacBody(m, d, jacp, jacr, m.body(f"link{i}").id)
        jacobians.append(np.concatenate([jacr, jacp]))
    poses = [(d.xmat[m.body(f"link{i}").id].reshape(3, 3), d.xpos[m.body(f"link{i}").id]) for i in range(robot.num_dofs)]
    return dict(M=M, bias=d.qfrc_bias.copy(), passive=d.qfrc_passive.copy(), qacc=d.qacc.copy(),
                jacobians=np.array(jacobians), poses=poses)


@eqx.filter_jit
def sorogym_terms(robot, q, qd, tau):
    n = robot.num_dofs
    frames = jnp.arange(1, n + 1)
    return dict(
        M=robot.inertia_matrix(q),
        bias=robot.coriolis_force(q, qd) + robot.gravitational_force(q),
        passive=-(robot.elastic_force(q) + robot.damping_matrix() @ qd),
        qacc=robot.forward_dynamics(0.0, jnp.concatenate([q, qd]), (jnp.zeros(robot.num_actuators), tau))[n:],
        jacobians=jax.vmap(lambda s: robot.jacobian(q, s))(frames),
        poses=jax.vmap(lambda s: robot.forward_kinematics(q, s))(frames),
    )


@pytest.mark.parametrize("n, seed", [(1, 0), (3, 1), (6, 2), (6, 3)])
def test_matches_mujoco_on_random_chains(n, seed):
    rng = np.random.default_rng(seed)
    robot = random_chain(rng, n)
    q, qd, tau = rng.normal(size=n), rng.normal(size=n) * 2.0, rng.normal(size=n)
    ours = sorogym_terms(robot, jnp.asarray(q), jnp.asarray(qd), jnp.asarray(tau))
    ref = mujoco_terms(robot, q, qd, tau)
    for key in ("M", "bias", "passive", "qacc", "jacobians"):
        scale = np.max(np.abs(ref[key])) + 1e-12
        np.testing.assert_allclose(ours[key], ref[key], rtol=0, atol=1e-8 * scale, err_msg=key)
    for i, (R, pos) in enumerate(ref["poses"]):
        np.testing.assert_allclose(ours["poses"][i][:3, :3], R, atol=1e-10)
        np.testing.assert_allclose(ours["poses"][i][:3, 3], pos, atol=1e-10)


@eqx.filter_jit
def _identities(robot, q, qd):
    M = robot.inertia_matrix(q)
    M_dot = jax.jvp(robot.inertia_matrix, (q,), (qd,))[1]
    C = robot.coriolis_matrix(q, qd)
    energy_rate = jax.jvp(lambda y: robot.total_energy(y), (jnp.concatenate([q, qd]),),
                          (robot.forward_dynamics(0.0, jnp.concatenate([q, qd])),))[1]
    return M, M_dot - 2 * C, C @ qd, robot.coriolis_force(q, qd), energy_rate


def test_structural_identities():
    rng = np.random.default_rng(7)
    robot = random_chain(rng, 5)
    q, qd = jnp.asarray(rng.normal(size=5)), jnp.asarray(rng.normal(size=5))
    M, skew, Cqd_matrix, Cqd, energy_rate = _identities(robot, q, qd)
    np.testing.assert_allclose(M, M.T, atol=1e-14)
    assert np.all(np.linalg.eigvalsh(np.asarray(M)) > 0)
    np.testing.assert_allclose(skew, -skew.T, atol=1e-11 * float(jnp.max(jnp.abs(M))))
    np.testing.assert_allclose(Cqd_matrix, Cqd, atol=1e-11 * float(jnp.max(jnp.abs(Cqd))))
    # without inputs, energy only leaves through the dampers: dE/dt = -qd^T D qd
    np.testing.assert_allclose(energy_rate, -qd @ robot.damping_matrix() @ qd, rtol=1e-9)


def test_static_equilibrium_and_gradients_through_the_dynamics():
    rng = np.random.default_rng(11)
    robot = random_chain(rng, 3, prismatic_share=0.0)
    robot = robot.update_params(stiffness=robot.params.stiffness + 20.0)  # a stiff, stable chain
    u = jnp.asarray(rng.normal(size=3))
    q_star = eqx.filter_jit(lambda r, u_: r.static_equilibrium(u_))(robot, u)
    residual = robot.potential_force(q_star) - u
    assert float(jnp.max(jnp.abs(residual))) < 1e-10
    # d qdd / d mass against central differences
    y = jnp.asarray(rng.normal(size=6))
    f = jax.jit(lambda mass: robot.update_params(mass=mass).forward_dynamics(0.0, y, (u,))[3:])
    mass = robot.params.mass
    J = jax.jit(jax.jacfwd(lambda m_: f(m_)))(mass)
    for j in range(3):
        h = 1e-6
        fd = (f(mass.at[j].add(h)) - f(mass.at[j].add(-h))) / (2 * h)
        np.testing.assert_allclose(J[:, j], fd, rtol=1e-6, atol=1e-7 * float(jnp.max(jnp.abs(fd))))


def test_bad_parameters_name_the_field():
    rng = np.random.default_rng(0)
    good = jax.tree.map(np.asarray, random_chain(rng, 2).params)
    fields = {k: getattr(good, k) for k in good.__dataclass_fields__}
    bad_cases = {
        "mass": dict(mass=np.array([1.0, -1.0])),
        "inertia": dict(inertia=np.stack([np.eye(3), -np.eye(3)])),
        "stiffness": dict(stiffness=np.array([1.0, -2.0])),
        "damping": dict(damping=np.array([np.nan, 0.0])),
        "joint_axes": dict(joint_axes=np.array([[1.0, 1.0, 0, 0, 0, 0], [0, 0, 1.0, 0, 0, 0]])),
        "parent_to_joint": dict(parent_to_joint=np.stack([np.eye(4) * 2, np.eye(4)])),
        "com": dict(com=np.zeros((3, 3))),
    }
    for name, change in bad_cases.items():
        with pytest.raises(ValueError, match=name):
            sg.ChainParams.create(**(fields | change))
    with pytest.raises(ValueError, match="actuation"):
        sg.ArticulatedSoftRobot(sg.ChainParams.create(**fields), actuation=sg.Tendons(np.zeros((1, 1, 2))))


@eqx.filter_jit
def _oracle_terms(robot, q, qd, u, tau, s_pair, soromox_api):
    """M, G, K, D, C qd, forward dynamics, and pose and Jacobian at the two end frames
    (``s_pair``: frame arguments in the robot's own convention)."""
    y = jnp.concatenate([q, qd])
    D = robot.damping_matrix(q) if soromox_api else robot.damping_matrix()  # soromox's D takes q
    Cqd = robot.coriolis_matrix(q, qd) @ qd if soromox_api else robot.coriolis_force(q, qd)
    ends = [(robot.forward_kinematics(q, s), robot.jacobian(q, s)) for s in s_pair]
    return (robot.inertia_matrix(q), robot.gravitational_force(q), robot.elastic_force(q), D, Cqd,
            robot.forward_dynamics(0.0, y, (u, tau)), ends)


@pytest.mark.parametrize("n, seed", [(2, 20), (5, 21)])
def test_matches_soromox_articulated_chain(n, seed):
    """soromox's articulated model (an independent implementation; zero tip offsets, see
    ``sorogym.testing``): M, G, K, D, C qd, forward dynamics and the end frames."""
    pytest.importorskip("soromox")
    from sorogym.testing import soromox_twin

    rng = np.random.default_rng(seed)
    robot = random_chain(rng, n)
    twin, _ = soromox_twin(robot)
    q, qd = jnp.asarray(rng.normal(size=n)), jnp.asarray(rng.normal(size=n))
    u, tau = jnp.asarray(rng.normal(size=n)), jnp.asarray(rng.normal(size=n))
    ours = _oracle_terms(robot, q, qd, u, tau, (1.0, float(n)), False)
    theirs = _oracle_terms(twin, q, qd, u, tau, (0.0, 1.0), True)
    for name, a, b in zip(("M", "G", "K", "D", "C qd", "forward_dynamics", "end frames"), ours, theirs):
        for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
            np.testing.assert_allclose(x, y, rtol=0, atol=1e-10 * (np.max(np.abs(np.asarray(y))) + 1e-12), err_msg=name)
