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
from _models import random_chain_params, random_routes
from _oracles import oracle
from scipy.spatial.transform import Rotation

import sorogym as sg


def random_chain(rng: np.random.Generator, n: int, prismatic_share: float = 0.3) -> sg.ArticulatedSoftRobot:
    """Random chain (``_models.random_chain_params``) with joint-torque actuation."""
    return sg.ArticulatedSoftRobot(random_chain_params(rng, n, prismatic_share))


def _vec(values) -> str:
    return " ".join(f"{float(x):.17g}" for x in np.ravel(values))


def _pose_attrs(T) -> str:
    x, y, z, w = Rotation.from_matrix(T[:3, :3]).as_quat()
    return f'pos="{_vec(T[:3, 3])}" quat="{_vec([w, x, y, z])}"'


def to_mjcf(robot: sg.ArticulatedSoftRobot) -> str:
    """The same chain as MJCF: one body per link at its parent-to-joint transform, a hinge
    through the point ``p`` (``S = [w; p x w]``) or a slide joint, explicit inertials; with
    tendon or McKibben actuation through via-points, one site per via-point in its link's
    body and one ``<spatial>`` tendon per route (``t0``, ``t1``, ...)."""
    p = jax.tree.map(np.asarray, robot.params)
    act = robot.actuation.paths if isinstance(robot.actuation, sg.McKibbenMuscles) else robot.actuation
    sites = {i: "" for i in range(-1, robot.num_dofs)}
    tendons = ""
    if isinstance(act, sg.ArticulatedTendons):
        points, start = np.asarray(act.points), 0
        for j, size in enumerate(act.sizes):
            refs = ""
            for k in range(start, start + size):
                sites[act.links[k]] += f'<site name="v{k}" pos="{_vec(points[k])}"/>'
                refs += f'<site site="v{k}"/>'
            tendons += f'<spatial name="t{j}">{refs}</spatial>'
            start += size
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
            f"{sites[i]}{body}</body>"
        )
    return (
        '<mujoco><compiler angle="radian" inertiafromgeom="false" boundmass="0" boundinertia="0"/>'
        f'<option gravity="{_vec(p.gravity)}"/>'
        f'<worldbody><body name="base" {_pose_attrs(p.base_pose)}>{sites[-1]}{body}</body></worldbody>'
        f"{'<tendon>' + tendons + '</tendon>' if tendons else ''}</mujoco>"
    )


def mujoco_terms(robot, q, qd, tau):
    mujoco = oracle("mujoco")
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
    poses = [
        (d.xmat[m.body(f"link{i}").id].reshape(3, 3), d.xpos[m.body(f"link{i}").id]) for i in range(robot.num_dofs)
    ]
    return dict(
        M=M,
        bias=d.qfrc_bias.copy(),
        passive=d.qfrc_passive.copy(),
        qacc=d.qacc.copy(),
        jacobians=np.array(jacobians),
        poses=poses,
    )


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
    energy_rate = jax.jvp(
        lambda y: robot.total_energy(y),
        (jnp.concatenate([q, qd]),),
        (robot.forward_dynamics(0.0, jnp.concatenate([q, qd])),),
    )[1]
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
    return (
        robot.inertia_matrix(q),
        robot.gravitational_force(q),
        robot.elastic_force(q),
        D,
        Cqd,
        robot.forward_dynamics(0.0, y, (u, tau)),
        ends,
    )


@pytest.mark.parametrize("n, seed", [(2, 20), (5, 21)])
def test_matches_soromox_articulated_chain(n, seed):
    """soromox's articulated model (an independent implementation; zero tip offsets, see
    ``sorogym.testing``): M, G, K, D, C qd, forward dynamics and the end frames."""
    oracle("soromox")
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


# -- articulated tendons and McKibben muscles ---------------------------------------------


def _random_route_links(rng, n: int, num_tendons: int) -> list[tuple[int, ...]]:
    """Via-point links of random routes: 2-5 via-points each on the base or any link, in
    any order (repeats allowed)."""
    return [tuple(int(k) for k in rng.integers(-1, n, rng.integers(2, 6))) for _ in range(num_tendons)]


@eqx.filter_jit
def _route_terms(robot, q, u):
    return robot.tendon_lengths(q), robot.actuation_matrix(q), robot.actuation_force(q, u)


def mujoco_tendons(robot, q):
    """MuJoCo's spatial-tendon lengths ``ten_length`` ``(m,)`` and moment arms
    ``ten_J = dL/dq`` ``(m, n)`` at ``q``."""
    mujoco = oracle("mujoco")
    m = mujoco.MjModel.from_xml_string(to_mjcf(robot))
    d = mujoco.MjData(m)
    d.qpos[:] = q
    mujoco.mj_forward(m, d)
    J = np.zeros((m.ntendon, m.nv))  # ten_J is stored by compressed rows (structure in the model)
    for i in range(m.ntendon):
        k = slice(m.ten_J_rowadr[i], m.ten_J_rowadr[i] + m.ten_J_rownnz[i])
        J[i, m.ten_J_colind[k]] = d.ten_J[k]
    return d.ten_length.copy(), J


@pytest.mark.parametrize("n, seed", [(1, 30), (3, 31), (6, 32)])
def test_articulated_tendons_and_mckibben_muscles_match_mujoco_tendons(n, seed):
    """MuJoCo ``<spatial>`` tendons through ``<site>`` via-points on random chains (mixed
    joints, random routes): our lengths equal ``ten_length`` and ``A(q) = -ten_J^T``; McKibben
    muscles on the same paths give ``tau = -ten_J^T F(p, 1 - ten_length / L0)`` with the
    force law written out here."""
    rng = np.random.default_rng(seed)
    params = random_chain_params(rng, n, prismatic_share=0.3)
    tendons = sg.ArticulatedTendons(random_routes(rng, _random_route_links(rng, n, 4)))
    robot = sg.ArticulatedSoftRobot(params, tendons)
    worst = {}
    for _ in range(3):
        q = rng.normal(size=n)
        L_ref, dL_ref = mujoco_tendons(robot, q)
        u = rng.uniform(0.0, 10.0, 4)
        L, A, tau = _route_terms(robot, jnp.asarray(q), jnp.asarray(u))
        scale = np.abs(dL_ref).max()
        worst["L"] = max(worst.get("L", 0.0), np.abs(L - L_ref).max() / np.abs(L_ref).max())
        worst["A"] = max(worst.get("A", 0.0), np.abs(A + dL_ref.T).max() / scale)
        np.testing.assert_allclose(tau, -dL_ref.T @ u, rtol=0, atol=1e-10 * scale * u.max())
        # McKibben muscles along the same paths, resting lengths giving eps in [-0.1, 0.3]
        theta, r0 = rng.uniform(0.3, 0.7, 4), rng.uniform(0.003, 0.01, 4)
        L0 = L_ref / (1.0 - rng.uniform(-0.1, 0.3, 4))
        muscles = sg.ArticulatedSoftRobot(params, sg.McKibbenMuscles(tendons, r0, theta, rest_lengths=L0))
        p = rng.uniform(0.0, 3e5, 4)
        eps = 1.0 - L_ref / L0
        a, b = 3.0 / np.tan(theta) ** 2, 1.0 / np.sin(theta) ** 2
        F = p * np.pi * r0**2 * np.maximum(a * (1.0 - eps) ** 2 - b, 0.0)  # eps < 1 here
        _, _, tau_m = _route_terms(muscles, jnp.asarray(q), jnp.asarray(p))
        np.testing.assert_allclose(tau_m, -dL_ref.T @ F, rtol=0, atol=1e-10 * scale * max(F.max(), 1.0))
    assert worst["L"] <= 1e-12 and worst["A"] <= 1e-10, worst


def test_tendon_lengths_planar_two_link_closed_form():
    """Planar 2R chain (joints about z, links 0.3 m and 0.2 m): via-points at height d on
    the base, link 0 and link 1 give a closed-form polyline; the pulley form's lengths and
    constant A as well."""
    l1, d, a, b = 0.3, 0.02, 0.15, 0.12
    T1 = np.eye(4)
    T1[0, 3] = l1
    params = sg.ChainParams.create(
        joint_axes=[[0, 0, 1, 0, 0, 0]] * 2,
        parent_to_joint=np.stack([np.eye(4), T1]),
        mass=[1.0, 0.5],
        com=[[0.15, 0, 0], [0.1, 0, 0]],
        inertia=np.stack([np.eye(3) * 0.01] * 2),
        stiffness=1.0,
        dtype=jnp.float64,
    )
    routes = [[(-1, (0.0, d, 0.0)), (0, (a, d, 0.0)), (1, (b, d, 0.0))], [(0, (a, -d, 0.0)), (1, (b, -d, 0.0))]]
    robot = sg.ArticulatedSoftRobot(params, sg.ArticulatedTendons(routes))

    def rot(t):
        return np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])

    for t1, t2 in [(0.0, 0.0), (0.4, -1.1), (-2.0, 2.5)]:

        def point(link, x, y):
            if link == -1:
                return np.array([x, y])
            if link == 0:
                return rot(t1) @ [x, y]
            return rot(t1) @ [l1, 0.0] + rot(t1 + t2) @ [x, y]

        ref = [
            np.linalg.norm(point(0, a, d) - point(-1, 0, d)) + np.linalg.norm(point(1, b, d) - point(0, a, d)),
            np.linalg.norm(point(1, b, -d) - point(0, a, -d)),
        ]
        L, A, _ = _route_terms(robot, jnp.asarray([t1, t2]), jnp.zeros(2))
        np.testing.assert_allclose(L, ref, rtol=1e-14)
    # pulleys: L = L0 - R q, A = R^T
    R = np.array([[0.02, 0.01], [-0.02, 0.0]])
    pulleys = sg.ArticulatedSoftRobot(params, sg.PulleyTendons(R, rest_lengths=[0.5, 0.4]))
    L, A, tau = _route_terms(pulleys, jnp.asarray([0.3, -0.2]), jnp.asarray([2.0, -1.0]))
    np.testing.assert_allclose(L, [0.5 - 0.006 + 0.002, 0.4 + 0.006], rtol=1e-14)
    np.testing.assert_allclose(A, R.T, rtol=1e-15)
    np.testing.assert_allclose(tau, R.T @ [2.0, 0.0], rtol=1e-15)  # slack at negative tension


@eqx.filter_jit
def _force(robot, q, u):
    return robot.actuation_force(q, u)


@eqx.filter_jit
def _length_derivatives(robot, q, v, h):
    L = robot.tendon_lengths
    return robot.actuation_matrix(q), jax.jacfwd(L)(q), jax.jacrev(L)(q), (L(q + h * v) - L(q - h * v)) / (2 * h)


def test_tendon_matrix_is_minus_length_gradient_and_work_conjugate():
    """``A = -dL/dq^T`` (forward and reverse AD of the length map) and
    ``qd^T A u = -dL/dt . u`` with ``dL/dt`` by central differences along ``q + t qd``;
    negative tensions go slack unless ``signed``."""
    rng = np.random.default_rng(40)
    params = random_chain_params(rng, 5, prismatic_share=0.4)
    routes = random_routes(rng, _random_route_links(rng, 5, 3))
    robot = sg.ArticulatedSoftRobot(params, sg.ArticulatedTendons(routes))
    q, qd, u = jnp.asarray(rng.normal(size=5)), jnp.asarray(rng.normal(size=5)), jnp.asarray(rng.uniform(0, 5, 3))
    A, dL_fwd, dL_rev, L_dot = _length_derivatives(robot, q, qd, 1e-6)
    np.testing.assert_allclose(A, -dL_fwd.T, rtol=0, atol=1e-13)
    np.testing.assert_allclose(A, -dL_rev.T, rtol=0, atol=1e-13)
    np.testing.assert_allclose(qd @ A @ u, -L_dot @ u, rtol=1e-8)
    np.testing.assert_array_equal(_force(robot, q, -u), np.zeros(5))
    signed = sg.ArticulatedSoftRobot(params, sg.ArticulatedTendons(routes, signed=True))
    np.testing.assert_allclose(_force(signed, q, -u), -(A @ u), rtol=1e-14)


def test_mckibben_force_law_closed_form():
    """theta0 = 30 deg: a = 9, b = 4, eps_max = 1/3 (k = 1); zero force at zero pressure
    and beyond the maximum contraction; more force when stretched."""
    f = sg.actuation.mckibben_force
    th, r0, p = np.pi / 6, 0.005, 2e5
    np.testing.assert_allclose(f(p, 0.1, r0, th), p * np.pi * r0**2 * (9 * 0.81 - 4), rtol=1e-13)
    np.testing.assert_allclose(f(p, -0.05, r0, th), p * np.pi * r0**2 * (9 * 1.05**2 - 4), rtol=1e-13)
    k = 1.25  # Tondu-Lopez: eps_max = (1 - 2/3) / 1.25
    np.testing.assert_allclose(f(p, 0.1, r0, th, k), p * np.pi * r0**2 * (9 * (1 - 0.125) ** 2 - 4), rtol=1e-13)
    np.testing.assert_allclose(sg.actuation.mckibben_max_contraction(th, k), (1 - 2 / 3) / 1.25, rtol=1e-13)
    np.testing.assert_allclose(f(p, 1 / 3 - 1e-9, r0, th), 0.0, atol=1e-6)
    np.testing.assert_array_equal(f(p, np.array([0.34, 0.9, 1.5]), r0, th), 0.0)
    np.testing.assert_array_equal(f(0.0, 0.1, r0, th), 0.0)


@eqx.filter_jit
def _muscle_terms(robot, q, p1, p2):
    tau = lambda p: robot.actuation_force(q, p)  # noqa: E731
    return (
        tau(p1),
        tau(p2),
        tau(2.0 * p1 + 0.5 * p2),
        robot.actuation_matrix(q),
        jax.jacfwd(tau)(p1),
        robot.tendon_lengths(q),
        jax.jacfwd(robot.tendon_lengths)(q),
        jax.jacfwd(robot.actuation_coordinates)(q),
        robot.actuation_coordinates(jnp.zeros_like(q)),
        tau(jnp.zeros_like(p1)),
        tau(-p1),
    )


def test_mckibben_muscles_on_a_chain():
    """Pressures -> joint forces: zero at zero pressure, linear in pressure,
    ``tau = -dL/dq^T F(p, eps(q))``, ``A(q) = d tau/dp`` and ``A = dV/dq^T`` (the displaced
    volume is the pressure's work-conjugate coordinate); negative pressure does nothing;
    pulley paths give ``A = R^T diag(F / p)``."""
    rng = np.random.default_rng(50)
    params = random_chain_params(rng, 4, prismatic_share=0.25)
    paths = sg.ArticulatedTendons(random_routes(rng, [(-1, 1), (0, 2, 3), (1, 3)]))
    theta, r0 = np.array([0.35, 0.45, 0.5]), np.array([0.004, 0.006, 0.008])
    base = sg.ArticulatedSoftRobot(params, sg.McKibbenMuscles(paths, r0, theta))
    q = jnp.asarray(rng.normal(size=4) * 0.3)
    p1, p2 = jnp.asarray(rng.uniform(1e4, 3e5, 3)), jnp.asarray(rng.uniform(1e4, 3e5, 3))
    L_now = _muscle_terms(base, q, p1, p2)[5]
    L_rest = _muscle_terms(base, jnp.zeros(4), p1, p2)[5]
    np.testing.assert_allclose(base.actuation.rest_lengths, L_rest, rtol=1e-15)
    # resting lengths around the current ones: contractions in [-0.1, 0.25]
    robot = sg.ArticulatedSoftRobot(params, base.actuation.with_rest_lengths(L_now / (1 - np.array([-0.1, 0.1, 0.25]))))
    t1, t2, t12, A, dtau_dp, L, dL, dV, V0, t_zero, t_neg = _muscle_terms(robot, q, p1, p2)
    scale = float(jnp.max(jnp.abs(t12)))
    np.testing.assert_allclose(t12, 2.0 * t1 + 0.5 * t2, rtol=0, atol=1e-13 * scale)
    F = sg.actuation.mckibben_force(p1, 1.0 - L / robot.actuation.rest_lengths, r0, theta)
    np.testing.assert_allclose(t1, -dL.T @ F, rtol=0, atol=1e-13 * scale)
    np.testing.assert_allclose(A, dtau_dp, rtol=0, atol=1e-15 * float(jnp.max(jnp.abs(A))))
    np.testing.assert_allclose(A, dV.T, rtol=0, atol=1e-13 * float(jnp.max(jnp.abs(A))))
    np.testing.assert_allclose(V0, 0.0, atol=1e-20)
    np.testing.assert_array_equal(t_zero, np.zeros(4))
    np.testing.assert_array_equal(t_neg, np.zeros(4))
    # constant moment arms
    R = rng.normal(size=(3, 4)) * 0.02
    pulley = sg.ArticulatedSoftRobot(params, sg.McKibbenMuscles(sg.PulleyTendons(R, 0.2), r0, theta))
    eps = np.asarray(R @ q) / 0.2
    np.testing.assert_allclose(
        _muscle_terms(pulley, q, p1, p2)[3],
        R.T * np.asarray(sg.actuation.mckibben_force(1.0, eps, r0, theta)),
        rtol=1e-13,
    )
    with pytest.raises(ValueError, match="rest_lengths"):
        sg.ArticulatedSoftRobot(params, sg.McKibbenMuscles(sg.PulleyTendons(R), r0, theta))
    with pytest.raises(ValueError, match="braid_angle"):
        sg.McKibbenMuscles(paths, r0, 1.0)
    with pytest.raises(ValueError, match="routes"):
        sg.ArticulatedSoftRobot(params, sg.ArticulatedTendons([[(-1, (0, 0, 0)), (4, (0, 0, 0))]]))


# -- named instances --------------------------------------------------------------------


@eqx.filter_jit
def _instance_terms(robot, y, u, statics: bool):
    """Forward dynamics at ``y`` with ``u`` and at rest without input, and (``statics``)
    the static equilibrium under ``u`` with its residual."""
    rest = robot.forward_dynamics(0.0, jnp.zeros_like(y), (jnp.zeros_like(u),))
    if not statics:
        return robot.forward_dynamics(0.0, y, (u,)), rest, None, None
    q_star = robot.static_equilibrium(u)
    residual = robot.potential_force(q_star) - robot.actuation_force(q_star, u)
    return robot.forward_dynamics(0.0, y, (u,)), rest, q_star, residual


@pytest.mark.parametrize(
    "actuation, u", [("base_torque", [0.3]), ("tendons", [12.0, 0.0]), ("joint_torques", [0.2, -0.1, 0.05, 0.1])]
)
def test_soft_pendulum_builds_rests_hanging_and_solves_statics(actuation, u):
    """Every actuation: forward dynamics finite, hanging rest is an equilibrium; static
    equilibria under input (not repeated for joint torques, the same solve as base torque)."""
    robot = sg.robots.soft_pendulum(actuation=actuation, dtype=jnp.float64)
    assert robot.num_dofs == 4 and robot.num_actuators == len(u)
    p = robot.params
    np.testing.assert_allclose(p.stiffness, [0.0] + [1e6 * np.pi * 0.02**4 / 4 / 0.125] * 3, rtol=1e-14)
    np.testing.assert_allclose(sg.robots.soft_pendulum_tip(robot, jnp.zeros(4)), [0, 0, -0.5], atol=1e-15)
    rng = np.random.default_rng(60)
    y = jnp.asarray(rng.normal(size=8))
    yd, rest, q_star, residual = _instance_terms(robot, y, jnp.asarray(u, jnp.float64), actuation != "joint_torques")
    assert np.all(np.isfinite(np.asarray(yd)))
    np.testing.assert_allclose(rest, 0.0, atol=1e-14)  # hanging straight down is an equilibrium
    if q_star is None:
        return
    assert float(jnp.max(jnp.abs(residual))) <= 1e-10
    assert 0.05 < abs(float(q_star[0])) < 1.0
    if actuation == "tendons":  # the +x tendon swings the pendulum towards +x (negative q_0)
        assert float(q_star[0]) < 0
    # the pendulum swings in the x-z plane
    tip = sg.robots.soft_pendulum_tip(robot, q_star)
    assert abs(float(tip[1])) < 1e-15


@jax.jit
def _pumping_rollout(robot, y0):
    """RK4 (1 ms) with the energy-pumping pivot torque ``0.5 sign(qd_0)``; tip heights."""
    h, n = 1e-3, robot.num_dofs

    def f(y):
        tau = sg.robots.SOFT_PENDULUM_MAX_TORQUE * jnp.sign(y[n])
        return robot.forward_dynamics(0.0, y, (tau[None],))

    def step(y, _):
        k1 = f(y)
        k2 = f(y + 0.5 * h * k1)
        k3 = f(y + 0.5 * h * k2)
        k4 = f(y + h * k3)
        y = y + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        return y, sg.robots.soft_pendulum_tip(robot, y[:n])[2]

    return jax.lax.scan(step, y0, None, length=2600)[1]


def test_soft_pendulum_swing_up_needs_pumping():
    """With the suggested torque bound the pivot cannot hold the pendulum horizontal (even
    with the soft joints relaxed into their static equilibrium), but pumping energy with
    ``tau = 0.5 sign(qd_0)`` lifts the tip above the pivot within 2.6 s from rest."""
    robot = sg.robots.soft_pendulum(dtype=jnp.float64)
    grad = jax.jit(jax.grad(robot.potential_energy))
    hess = jax.jit(jax.hessian(robot.potential_energy))
    q = jnp.asarray([np.pi / 2, 0.0, 0.0, 0.0])
    for _ in range(20):  # relax joints 1..3 at q_0 = pi/2
        step = jnp.linalg.solve(hess(q)[1:, 1:], grad(q)[1:])
        q = q.at[1:].add(-step)
    assert float(jnp.max(jnp.abs(grad(q)[1:]))) < 1e-12
    holding_torque = float(grad(q)[0])
    assert holding_torque > 2 * sg.robots.SOFT_PENDULUM_MAX_TORQUE, holding_torque
    heights = np.asarray(_pumping_rollout(robot, jnp.zeros(8).at[4].set(1e-3)))
    assert heights.max() > 0.0, heights.max()


@eqx.filter_jit
def _umarm_terms(robot, y, u):
    q0 = jnp.zeros(robot.num_dofs)
    return (
        _instance_terms(robot, y, u, True),
        robot.actuation_matrix(q0),
        robot.forward_kinematics(q0, robot.num_dofs)[:3, 3],
    )


def test_umarm_builds_and_solves_statics():
    """The default arm's structure (12 joints, 24 muscles, 1.15 kg); muscle torque,
    dynamics and statics on a 3-module arm (the same code, a cheaper compile)."""
    robot = sg.robots.umarm(dtype=jnp.float64)
    assert (robot.num_dofs, robot.num_actuators) == (12, 24)
    np.testing.assert_allclose(float(jnp.sum(robot.params.mass)), 1.15, rtol=1e-14)
    np.testing.assert_allclose(
        robot.actuation.rest_lengths, 0.12, rtol=1e-14
    )  # straight muscles, half a module on each side
    robot = sg.robots.umarm(num_modules=3, dtype=jnp.float64)
    rng = np.random.default_rng(70)
    y = jnp.asarray(rng.normal(size=12) * 0.2)
    u = jnp.zeros(12).at[0].set(6e4).at[5].set(3e4).at[10].set(2e4)
    (yd, rest, q_star, residual), A0, last_frame = _umarm_terms(robot, y, u)
    np.testing.assert_allclose(last_frame, [0.0, 0.0, -0.24], atol=1e-14)  # hanging: the last spine link's joint
    np.testing.assert_allclose(A0 @ jnp.full(12, 5e4), 0.0, atol=1e-12)  # equal pressures: no torque when straight
    # one muscle at 100 kPa and zero contraction: 92.7 N at 25 mm
    np.testing.assert_allclose(np.abs(A0[1, 0]) * sg.robots.UMARM_MAX_PRESSURE, 2.3179, rtol=1e-4)
    assert np.all(np.isfinite(np.asarray(yd)))
    np.testing.assert_allclose(rest, 0.0, atol=1e-12)
    assert float(jnp.max(jnp.abs(residual))) <= 1e-10
    assert float(jnp.max(jnp.abs(q_star))) > 0.05
    upright = sg.robots.umarm(num_modules=2, mounting="upright", dtype=jnp.float64)
    np.testing.assert_allclose(upright._rest_context().poses[-1][:3, 3], [0, 0, 0.12], atol=1e-15)


def test_instances_reject_bad_arguments():
    cases = [
        (sg.robots.soft_pendulum, dict(num_links=0), "num_links"),
        (sg.robots.soft_pendulum, dict(stiffness=-1.0), "stiffness"),
        (sg.robots.soft_pendulum, dict(damping=-0.1), "damping"),
        (sg.robots.soft_pendulum, dict(actuation="muscles"), "actuation"),
        (sg.robots.soft_pendulum, dict(length=0.0), "length"),
        (sg.robots.soft_pendulum, dict(actuation="tendons", tendon_offset=-0.01), "tendon_offset"),
        (sg.robots.umarm, dict(num_modules=0), "num_modules"),
        (sg.robots.umarm, dict(stiffness=-1.0), "stiffness"),
        (sg.robots.umarm, dict(mounting="sideways"), "mounting"),
        (sg.robots.umarm, dict(braid_angle=1.2), "braid_angle"),
    ]
    for factory, kwargs, name in cases:
        with pytest.raises(ValueError, match=name):
            factory(**kwargs)


@jax.jit
def _trapezoid_vs_rk4(robot, y0, u):
    from sorogym.sim import linear_trapezoid_step

    h = 1e-3

    def trap(y, _):
        return linear_trapezoid_step(robot, y, lambda q, qd: robot.generalized_force(q, u), h), None

    def rk4(y, _):
        f = lambda y_: robot.forward_dynamics(0.0, y_, (u,))  # noqa: E731
        k1 = f(y)
        k2 = f(y + 0.5 * h * k1)
        k3 = f(y + 0.5 * h * k2)
        k4 = f(y + h * k3)
        return y + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4), None

    return jax.lax.scan(trap, y0, None, length=300)[0], jax.lax.scan(rk4, y0, None, length=300)[0]


def test_env_integrator_runs_on_the_chain():
    """The environments' linearly implicit trapezoid (``dynamical_terms``,
    ``generalized_force``, ``stiffness_matrix``, ``damping_matrix``) follows RK4 on the
    tendon-driven soft pendulum over 0.3 s."""
    robot = sg.robots.soft_pendulum(actuation="tendons", dtype=jnp.float64)
    y0 = jnp.asarray([0.6, -0.2, 0.1, 0.0, 0.0, 1.0, 0.0, 0.0])
    y_trap, y_rk4 = _trapezoid_vs_rk4(robot, y0, jnp.asarray([5.0, 0.0]))
    np.testing.assert_allclose(y_trap[:4], y_rk4[:4], atol=5e-3)
