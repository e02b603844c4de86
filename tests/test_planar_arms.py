"""Fixed-base arms at fixed mounts in one plane (:class:`sorogym.PlanarArms`) and soft
fingers on a palm on a vertical lift (:class:`sorogym.PlanarGripper`).

Layers: every term against the lone :class:`~sorogym.PlanarPCS` arms mounted at the same
poses (block diagonal ``M``, ``S``, ``D``; ``C qd``, ``G``, ``A``, line loads and tips arm
by arm) and, for the gripper, against the lone floating-base fingers at the palm's pose
plus the palm's own terms; AD identities on a random state (``C qd`` from the Lagrangian,
``G = dU/dq``, ``A = dphi/dq^T``, the backbone points' Jacobians and velocities); bad input.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sorogym as sg
from sorogym.contact import GroundFriction
from sorogym.robots import BrittleStarBody, planar_brittle_star

MOUNTS = np.array([[0.3, 0.0, 0.05], [-0.4, 0.01, -0.05], [1.0, -0.1, 0.02]])  # [theta, x, y]


def _arms(gravity=(0.7, -1.3)):
    star = planar_brittle_star(BrittleStarBody(), gravity=gravity)  # its tendon-driven arm
    arm = sg.PlanarPCS(star.arm.params, "pcc", star.arm.actuation, star.arm.num_quadrature_points)
    return sg.PlanarArms(arm, MOUNTS), arm


GRIPPER = dict(palm_position=[0.02, 0.3], palm_mass=0.2, lift_stiffness=400.0, lift_damping=7.0)
FINGER_MOUNTS = np.array([[-1.4, 0.04, -0.01], [-1.8, -0.04, -0.01]])  # on the palm


def _gripper(gravity=(0.7, -9.81)):
    finger = planar_brittle_star(BrittleStarBody(), gravity=gravity).arm  # floating-base, tendon-driven
    return sg.PlanarGripper(finger, FINGER_MOUNTS, **GRIPPER), finger


def _random(model, seed):
    rng = np.random.default_rng(seed)
    q, qd = (jnp.asarray(rng.normal(size=model.num_dofs) * 8.0) for _ in range(2))
    return q, qd, jnp.asarray(rng.uniform(0.0, 2.0, model.num_actuators))


@jax.jit
def _terms(model, q, qd, u, load):
    M, bias, load_at = model.inertia_bias_and_line_load_map(q, qd, load)
    terms = load_at(qd)
    return dict(
        M=M,
        bias=bias,
        Cqd=model.coriolis_force(q, qd),
        G=model.gravitational_force(q),
        S=model.stiffness_matrix(),
        D=model.damping_matrix(),
        A=model.actuation_matrix(q),
        tau=model.actuation_force(q, u),
        load=terms.force,
        load_damping=terms.damping,
        tips=model.arm_tips(q)
        if isinstance(model, (sg.PlanarArms, sg.PlanarGripper))
        else model.forward_kinematics(q, model.total_length)[:2, 2],
        U=model.gravitational_energy(q) + model.elastic_energy(q),
    )


def test_arms_are_the_lone_arms_at_their_mounts():
    model, arm = _arms()
    assert (model.num_arms, model.num_dofs, model.num_actuators) == (3, 3 * arm.num_dofs, 3 * arm.num_actuators)
    q, qd, u = _random(model, 0)
    load = GroundFriction((0.2, 0.3, 0.6), 0.01)
    ours = _terms(model, q, qd, u, load)
    n_a, m_a = arm.num_dofs, arm.num_actuators
    energy = 0.0
    for k, (theta, x, y) in enumerate(MOUNTS):
        lone = arm.with_params(arm.params.replace(base_rotation=theta, base_position=jnp.asarray([x, y])))
        rows, cols = slice(k * n_a, (k + 1) * n_a), slice(k * m_a, (k + 1) * m_a)
        ref = _terms(lone, q[rows], qd[rows], u[cols], load)
        for name in ("M", "S", "D", "load_damping"):
            block = np.asarray(ours[name])
            np.testing.assert_allclose(block[rows, rows], ref[name], rtol=1e-10, atol=1e-14, err_msg=name)
            off = block[rows].copy()
            off[:, rows] = 0.0
            assert not np.any(off), name  # nothing couples the arms
        for name in ("bias", "Cqd", "G", "tau", "load"):
            np.testing.assert_allclose(ours[name][rows], ref[name], rtol=1e-10, atol=1e-13, err_msg=name)
        np.testing.assert_allclose(ours["A"][rows, cols], ref["A"], rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(ours["tips"][k], ref["tips"], atol=1e-12)
        energy += float(ref["U"])
    np.testing.assert_allclose(ours["U"], energy, rtol=1e-10)


def test_gripper_is_its_fingers_on_the_moving_palm():
    model, finger = _gripper()
    n_a, m_a, K = finger.num_dofs - 3, finger.num_actuators, len(FINGER_MOUNTS)
    assert (model.num_dofs, model.num_actuators) == (1 + K * n_a, K * m_a + 1)
    q, qd, u = _random(model, 3)
    load = GroundFriction((0.2, 0.3, 0.6), 0.01)
    ours = _terms(model, q, qd, u, load)
    p = GRIPPER
    m_p, k_l, c_l = p["palm_mass"], p["lift_stiffness"], p["lift_damping"]
    g_y = -9.81
    expected = dict(
        M=np.zeros((model.num_dofs,) * 2), S=np.zeros((model.num_dofs,) * 2), D=np.zeros((model.num_dofs,) * 2)
    )
    expected["M"][0, 0], expected["S"][0, 0], expected["D"][0, 0] = m_p, k_l, c_l
    vectors = {name: np.zeros(model.num_dofs) for name in ("bias", "Cqd", "G", "tau", "load")}
    vectors["G"][0] = vectors["bias"][0] = -m_p * g_y
    vectors["tau"][0] = u[-1]  # the lift's force
    A = np.zeros((model.num_dofs, model.num_actuators))
    A[0, -1] = 1.0
    energy = m_p * (-g_y) * float(q[0]) + 0.5 * k_l * float(q[0]) ** 2
    for k, (theta, x, y) in enumerate(FINGER_MOUNTS):
        base = np.asarray(p["palm_position"]) + [x, y]
        lone = finger.with_params(finger.params.replace(base_rotation=theta, base_position=jnp.asarray(base)))
        idx = np.r_[0, 1 + k * n_a + np.arange(n_a)]  # the gripper's coordinates the finger sees
        lone_idx = np.r_[2, 3 + np.arange(n_a)]  # its floating base's y, then its strains
        ql, qdl = (jnp.zeros(3 + n_a).at[lone_idx].set(v[idx]) for v in (q, qd))
        ref = _terms(lone, ql, qdl, u[k * m_a : (k + 1) * m_a], load)
        for name in ("M", "S", "D"):
            expected[name][np.ix_(idx, idx)] += np.asarray(ref[name])[np.ix_(lone_idx, lone_idx)]
        for name in vectors:
            vectors[name][idx] += np.asarray(ref[name])[lone_idx]
        A[idx, k * m_a : (k + 1) * m_a] = np.asarray(ref["A"])[lone_idx]
        np.testing.assert_allclose(ours["tips"][k], ref["tips"], atol=1e-12)
        energy += float(ref["U"])
    for name in ("M", "S", "D"):
        np.testing.assert_allclose(ours[name], expected[name], rtol=1e-10, atol=1e-14, err_msg=name)
    for name, ref in vectors.items():
        np.testing.assert_allclose(ours[name], ref, rtol=1e-10, atol=1e-12, err_msg=name)
    np.testing.assert_allclose(ours["A"], A, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(ours["U"], energy, rtol=1e-10)
    np.testing.assert_allclose(model.palm_centre(q), np.asarray(p["palm_position"]) + [0.0, float(q[0])])
    # the lift force that holds the unloaded gripper at z = 0 is its weight
    np.testing.assert_allclose(model.weight_on_lift(), -float(model.total_mass) * g_y, rtol=1e-12)
    z0 = jnp.zeros(model.num_dofs)
    residual = model.potential_force(z0) - model.actuation_force(
        z0, jnp.zeros(model.num_actuators).at[-1].set(model.weight_on_lift())
    )
    np.testing.assert_allclose(residual[0], 0.0, atol=1e-12)


@pytest.mark.parametrize("build", [_arms, _gripper], ids=["arms", "gripper"])
def test_arms_terms_satisfy_ad_identities(build):
    model, _ = build()
    q, qd, u = _random(model, 1)
    s = jnp.linspace(0.0, float(model.arm_length), 7)

    @jax.jit
    def identities(q, qd):
        lagrangian = lambda q_, v_: 0.5 * v_ @ model.inertia_matrix(q_) @ v_  # noqa: E731
        dM = jax.jvp(model.inertia_matrix, (q,), (qd,))[1]
        C = model.coriolis_matrix(q, qd)
        positions, velocities, J = model.backbone_points(q, qd, s)
        J_ad = jax.jacfwd(lambda q_: model.backbone_positions(q_, s))(q)
        tip_pose_J = jnp.stack([model.jacobian(q, model.arm_length, arm=k)[1:] for k in range(model.num_arms)])
        return dict(
            coriolis=(model.coriolis_force(q, qd), dM @ qd - jax.grad(lagrangian)(q, qd)),
            coriolis_matrix=(C @ qd, model.coriolis_force(q, qd)),
            skew=(dM - 2 * C, -(dM - 2 * C).T),
            gravity=(model.gravitational_force(q), jax.grad(model.gravitational_energy)(q)),
            elastic=(model.elastic_force(q), jax.grad(model.elastic_energy)(q)),
            actuation=(model.actuation_matrix(q), jax.jacfwd(model.actuation_coordinates)(q).T),
            points=(positions, model.backbone_positions(q, s)),
            point_jacobians=(J, J_ad),
            point_velocities=(velocities, jnp.einsum("kpcn,n->kpc", J_ad, qd)),
            tip_jacobians=(tip_pose_J, J_ad[:, -1]),
            tip_poses=(model.tip_poses(q)[0], model.arm_tips(q)),
        )

    for name, (ours, ref) in identities(q, qd).items():
        scale = max(float(np.abs(ref).max()), 1e-30)
        np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-10 * scale, err_msg=name)
    if isinstance(model, sg.PlanarGripper):
        return
    # with_params keeps the mounts and changes every arm
    stiffer = model.with_params(model.params.replace(young_modulus=2.0 * model.params.young_modulus))
    np.testing.assert_allclose(stiffer.mounts, model.mounts)
    np.testing.assert_allclose(stiffer.stiffness_matrix(), 2.0 * model.stiffness_matrix(), rtol=1e-12)


def test_bad_arms_input_is_refused():
    model, arm = _arms()
    with pytest.raises(ValueError, match="mounts"):
        sg.PlanarArms(arm, [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="mounts"):
        sg.PlanarArms(arm, [[0.0, np.nan, 0.0]])
    with pytest.raises(TypeError, match="fixed base"):
        sg.PlanarArms(planar_brittle_star(BrittleStarBody()).arm, MOUNTS)
    _, finger = _gripper()
    with pytest.raises(TypeError, match="floating_base"):
        sg.PlanarGripper(arm, FINGER_MOUNTS, **GRIPPER)
    for name, value in (("palm_mass", 0.0), ("lift_stiffness", -1.0), ("lift_damping", -1.0), ("palm_position", [0.0])):
        with pytest.raises(ValueError, match=name):
            sg.PlanarGripper(finger, FINGER_MOUNTS, **{**GRIPPER, name: value})
    with pytest.raises(ValueError, match="mounts"):
        sg.PlanarGripper(finger, [[0.0, 0.0]], **GRIPPER)
