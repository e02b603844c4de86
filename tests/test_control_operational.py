"""Operational-space dynamics and controllers: the task-space identities against the
forward dynamics (Lambda, the dynamically consistent pseudoinverse, the null-space
projector, the Coriolis map), the impedance law's closed-loop task dynamics, the
synergistic projector's decoupling, and clear errors for bad input. Planar arms keep the
compilations cheap; the spatial case shares the same code path."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _models import random_state

import sorogym as sg
from sorogym.control import (
    ConstantReference,
    ImpedanceController,
    OperationalSpaceDynamics,
    PIDGains,
    SynergisticController,
    matched_impedance_gains,
)


def _params(num_segments=2):
    return sg.RodParams.create(
        length=[0.12] * num_segments,
        radius=0.015,
        density=1100.0,
        young_modulus=4e4,
        poisson_ratio=0.45,
        damping=3.0,
        gravity=[2.0, -9.81],
        planar=True,
        dtype=jnp.float64,
    )


@pytest.fixture(scope="module")
def arm():
    return sg.PlanarPCS(_params())  # n = 6, A = I


def _planar_pose(theta, x, y):
    c, s = jnp.cos(theta), jnp.sin(theta)
    return jnp.asarray([[c, -s, x], [s, c, y], [0.0, 0.0, 1.0]])


def test_task_space_identities_against_the_dynamics(arm):
    task = OperationalSpaceDynamics(arm, [0.13, arm.total_length])  # two points, full pose: k = 6
    q, qd = random_state(arm, np.random.default_rng(3))
    u = jnp.asarray(np.random.default_rng(4).normal(size=6)) * 1e-3

    @jax.jit
    def evaluate(q, qd, u):
        w = task.terms(q, qd)
        qdd = arm.forward_dynamics(0.0, jnp.concatenate([q, qd]), (u,))[6:]
        return w, qdd

    w, qdd = evaluate(q, qd, u)
    J, Lam, pinv, N = (np.asarray(w[k]) for k in ("J", "Lambda", "pinv", "null"))
    k = task.task_dim
    np.testing.assert_allclose(J @ pinv, np.eye(k), atol=1e-9)
    np.testing.assert_allclose(N @ pinv, 0.0, atol=1e-9)
    np.testing.assert_allclose(N @ N, N, atol=1e-9)
    np.testing.assert_allclose(Lam, Lam.T, rtol=1e-12)
    assert np.all(np.linalg.eigvalsh(Lam) > 0)
    np.testing.assert_allclose(pinv.T @ np.asarray(w["M"]) @ pinv, Lam, rtol=1e-8, atol=1e-10 * np.abs(Lam).max())
    # Lambda xdd + C_x qd + (J_M^+)^T (G + K + D qd) = (J_M^+)^T A u, with xdd = J qdd + Jdot qd
    xdd = J @ np.asarray(qdd) + np.asarray(w["Jdot"]) @ np.asarray(qd)
    potential = np.asarray(jax.jit(lambda q_, qd_: arm.elastic_force(q_) + arm.damping_matrix() @ qd_)(q, qd))
    lhs = Lam @ xdd + np.asarray(w["coriolis"]) @ np.asarray(qd) + pinv.T @ (np.asarray(w["gravity"]) + potential)
    np.testing.assert_allclose(lhs, pinv.T @ np.asarray(u), rtol=1e-7, atol=1e-9 * np.abs(lhs).max())


def test_impedance_control_gives_the_commanded_task_dynamics(arm):
    """Eq. 30 in the closed loop: Lambda (xdd - xdd_d) + C_x J_M^+ J qd = K e + D edot."""
    task = OperationalSpaceDynamics(arm, [arm.total_length])

    class PlanarPath(sg.control.Reference):
        """A planar tip pose path (theta, x, y)(t) with AD twists [w, vx, vy]."""

        def __call__(self, t):
            path = lambda t_: jnp.stack([0.3 * jnp.sin(t_), 0.1 + 0.02 * jnp.cos(2 * t_), 0.2 + 0.01 * t_])
            one = jnp.ones_like(t)
            (v, r), (_, a) = jax.jvp(lambda t_: jax.jvp(path, (t_,), (one,)), (t,), (one,))
            return sg.control.ReferenceSample(_planar_pose(*v), r, a)

    K, D = jnp.asarray([0.02, 5.0, 5.0]), jnp.asarray([0.002, 0.5, 0.5])
    c = ImpedanceController(task, PlanarPath(), K, D)
    q, qd = random_state(arm, np.random.default_rng(5))
    y = jnp.concatenate([q, qd])
    t = jnp.asarray(0.4)

    @jax.jit
    def evaluate(t, y):
        u, _ = c(t, y, c.initial_state())
        q_, qd_ = y[:6], y[6:]
        qdd = arm.forward_dynamics(t, y, (u,))[6:]
        w = task.terms(q_, qd_)
        r = c.reference(t)
        e = task.error(r.value[None], task.poses(q_))
        return w, qdd, r, e

    w, qdd, r, e = evaluate(t, y)
    J, Lam = np.asarray(w["J"]), np.asarray(w["Lambda"])
    xdd = J @ np.asarray(qdd) + np.asarray(w["Jdot"]) @ np.asarray(qd)
    edot = np.asarray(r.rate) - J @ np.asarray(qd)
    lhs = Lam @ (xdd - np.asarray(r.acceleration)) + np.asarray(w["coriolis"] @ w["pinv"]) @ (J @ np.asarray(qd))
    np.testing.assert_allclose(
        lhs, np.asarray(K) * np.asarray(e) + np.asarray(D) * edot, rtol=1e-6, atol=1e-9 * np.abs(lhs).max()
    )


def test_synergistic_projector_decouples_the_task(arm):
    """k = m = 2 tendons, tip position task: J M^-1 A u = Lambda^-1 F_x."""
    tendon_arm = sg.PlanarPCS(_params(), actuation=sg.Tendons(np.array([[0.01, 0.01], [-0.01, -0.01]])))
    task = OperationalSpaceDynamics(tendon_arm, [tendon_arm.total_length], "position")
    gains = PIDGains(jnp.asarray([30.0, 20.0]), 2.0, 1.0, e_sat=0.01)
    c = SynergisticController(task, ConstantReference(jnp.asarray([0.05, 0.2])), gains)
    q, qd = random_state(tendon_arm, np.random.default_rng(6))
    z = jnp.asarray([0.003, -0.002])

    @jax.jit
    def evaluate(q, qd, z):
        y = jnp.concatenate([q, qd])
        u, z_dot = c(0.0, y, z)
        w = task.terms(q, qd)
        x = c.positions(q)
        force = gains.feedback(jnp.asarray([0.05, 0.2]) - x, -w["J"] @ qd, z)
        return u, z_dot, w, force, tendon_arm.actuation_matrix(q), x, task.poses(q)

    u, z_dot, w, force, A, x, g = evaluate(q, qd, z)
    lhs = np.asarray(w["M_inv_JT"]).T @ np.asarray(A) @ np.asarray(u)  # J M^-1 A u (M symmetric)
    np.testing.assert_allclose(lhs, np.linalg.solve(np.asarray(w["Lambda"]), np.asarray(force)), rtol=1e-8)
    np.testing.assert_allclose(x, np.asarray(g)[0, :2, 2], atol=1e-15)
    np.testing.assert_allclose(z_dot, 0.01 * np.tanh((np.array([0.05, 0.2]) - np.asarray(x)) / 0.01), rtol=1e-12)


def test_bad_operational_input(arm):
    with pytest.raises(ValueError, match="s_ps"):
        OperationalSpaceDynamics(arm, [0.5])
    with pytest.raises(ValueError, match="components"):
        OperationalSpaceDynamics(arm, [0.1], components=(1, 1))
    spatial = sg.PCS(sg.RodParams.create(length=0.1, radius=0.01, density=1000.0, young_modulus=1e5, dtype=jnp.float64))
    with pytest.raises(ValueError, match="all three angular"):
        OperationalSpaceDynamics(spatial, [0.1], components=(0, 3, 4, 5))
    task = OperationalSpaceDynamics(arm, [arm.total_length])
    with pytest.raises(ValueError, match="k = m"):
        SynergisticController(
            OperationalSpaceDynamics(arm, [0.1], "position"),
            ConstantReference(jnp.zeros(2)),
            PIDGains(1.0, 0.1, num_dofs=2),
        )
    with pytest.raises(ValueError, match="reference"):
        ImpedanceController(task, ConstantReference(jnp.zeros(3)), 1.0, 0.1)
    tendon_arm = sg.PlanarPCS(_params(), actuation=sg.Tendons(np.array([[0.01, 0.01], [-0.01, -0.01]])))
    with pytest.raises(ValueError, match="underactuated"):
        ImpedanceController(OperationalSpaceDynamics(tendon_arm, [0.2]), ConstantReference(jnp.zeros((3, 3))), 1.0, 0.1)


def test_matched_impedance_gains_follow_eq_31():
    lam = np.diag([2e-6, 3e-6, 4e-6, 0.05, 0.07, 0.09]) + 1e-9  # off-diagonal terms are ignored
    k, d, w_n = matched_impedance_gains(lam, translational_stiffness=2.0)
    assert w_n == pytest.approx(np.sqrt(2.0 / np.mean(np.diag(lam)[3:])))
    np.testing.assert_allclose(k[3:], 2.0)
    np.testing.assert_allclose(k[:3], np.diag(lam)[:3] * w_n**2)
    np.testing.assert_allclose(d**2, 4 * k * np.diag(lam))  # critically damped on every axis
    with pytest.raises(ValueError, match="translational_stiffness"):
        matched_impedance_gains(lam, 0.0)
    with pytest.raises(ValueError, match="task_inertia"):
        matched_impedance_gains(np.eye(3))
