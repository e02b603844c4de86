"""Actuation-space dynamics and controllers: the coordinate map against A(q) by AD, the
collocated actuation matrix, the transformed dynamics against the forward dynamics, the
QR completion, potential compensation at a static equilibrium, and bad input."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _models import random_state

import sorogym as sg
from sorogym.control import (
    ACTUATION_COMPENSATIONS,
    ActuationSpaceController,
    ActuationSpaceDynamics,
    ConstantReference,
    FunctionReference,
    PIDGains,
    static_equilibrium,
)


@pytest.fixture(scope="module")
def arm():
    """Planar one-segment PCS (n = 3) with two straight tendons (m = 2) under gravity."""
    params = sg.RodParams.create(
        length=0.15,
        radius=0.015,
        density=1100.0,
        young_modulus=5e4,
        poisson_ratio=0.45,
        damping=4.0,
        gravity=[1.0, -9.81],
        planar=True,
        dtype=jnp.float64,
    )
    return sg.PlanarPCS(params, actuation=sg.Tendons(np.array([[0.01], [-0.008]])))


def test_coordinates_collocation_and_transformed_dynamics(arm):
    dyn = ActuationSpaceDynamics(arm)
    q, qd = random_state(arm, np.random.default_rng(2))
    u = jnp.asarray([0.7, 0.2])

    @jax.jit
    def evaluate(q, qd, u):
        w = dyn.terms(q, qd)
        dphi = jax.jacfwd(dyn.coordinates)(q)
        qdd = arm.forward_dynamics(0.0, jnp.concatenate([q, qd]), (u,))[3:]
        return w, dphi, qdd, dyn.coordinates(jnp.zeros(3))

    w, dphi, qdd, phi0 = evaluate(q, qd, u)
    np.testing.assert_allclose(dphi, w["J"], rtol=1e-9, atol=1e-12)  # integrable: d phi_a/dq^T = A(q)
    np.testing.assert_allclose(phi0, 0.0, atol=1e-15)
    np.testing.assert_allclose(w["A"], np.vstack([np.eye(2), np.zeros((1, 2))]), atol=1e-10)  # collocated
    H = np.asarray(dyn.unactuated_map)
    A0 = np.asarray(jax.jit(lambda q_: arm.actuation_matrix(q_))(jnp.zeros(3)))
    np.testing.assert_allclose(H @ A0, 0.0, atol=1e-15)
    np.testing.assert_allclose(H @ H.T, np.eye(1), atol=1e-12)
    # M_phi phidd + C_phi phid + G_phi + K_phi + D_phi phid = A_phi u along the true motion
    J, Jd = np.asarray(w["J"]), np.asarray(w["Jdot"])
    phid = J @ np.asarray(qd)
    phidd = J @ np.asarray(qdd) + Jd @ np.asarray(qd)
    lhs = (
        np.asarray(w["M"]) @ phidd
        + np.asarray(w["C"]) @ phid
        + np.asarray(w["G"])
        + np.asarray(w["K"])
        + np.asarray(w["D"]) @ phid
    )
    np.testing.assert_allclose(lhs, np.asarray(w["A"]) @ np.asarray(u), rtol=1e-7, atol=1e-9 * np.abs(lhs).max())
    np.testing.assert_allclose(w["M"], np.asarray(w["M"]).T, rtol=1e-10, atol=1e-14)


def test_potential_compensation_recovers_the_equilibrium_tensions(arm):
    """At a static equilibrium q* of tensions u*, the actuated rows of G_phi + K_phi are u*
    and the unactuated rows vanish: every compensation's model term equals u* there."""
    u_star = jnp.asarray([0.9, 0.3])
    q_star = jax.jit(lambda u: static_equilibrium(arm, jnp.zeros(3), u, iterations=30))(u_star)
    dyn = ActuationSpaceDynamics(arm)
    gains = PIDGains(jnp.asarray([40.0, 40.0]), 1.0, 2.0, e_sat=0.01)
    controllers = {
        kind: ActuationSpaceController(dyn, ConstantReference(q_star), gains, kind) for kind in ACTUATION_COMPENSATIONS
    }

    @jax.jit
    def evaluate(y):
        w = dyn.terms(y[:3], y[3:])
        return {k: c.split(0.0, y, c.initial_state()) for k, c in controllers.items()}, w["G"] + w["K"]

    out, potential = evaluate(jnp.concatenate([q_star, jnp.zeros(3)]))
    np.testing.assert_allclose(potential, np.concatenate([u_star, [0.0]]), atol=1e-8)
    for kind, (u_mb, u_fb, z_dot) in out.items():
        np.testing.assert_allclose(u_fb, 0.0, atol=1e-12, err_msg=kind)
        np.testing.assert_allclose(z_dot, 0.0, atol=1e-12, err_msg=kind)
        np.testing.assert_allclose(u_mb, 0.0 if kind == "none" else u_star, atol=1e-8, err_msg=kind)


def test_tracking_reference_image_and_bad_input(arm):
    dyn = ActuationSpaceDynamics(arm)
    ref = FunctionReference(lambda t: jnp.asarray([3.0 * jnp.sin(t), 0.02 * jnp.cos(t), 0.0]))
    c = ActuationSpaceController(dyn, ref, PIDGains(jnp.asarray([5.0, 5.0]), 0.5), "feedforward")
    t = 0.3
    phi_d, phid_d, phidd_d = jax.jit(lambda t_: dyn.reference_image(*ref(t_)))(t)
    h = 1e-5
    fd = jax.jit(lambda t_: dyn.coordinates(ref(t_).value))
    np.testing.assert_allclose(phid_d, (fd(t + h) - fd(t - h)) / (2 * h), rtol=1e-6, atol=1e-10)
    assert np.all(np.isfinite(jax.jit(lambda y: c(t, y, c.initial_state())[0])(jnp.zeros(6))))
    with pytest.raises(ValueError, match="compensation"):
        ActuationSpaceController(dyn, ref, PIDGains(1.0, 0.1, num_dofs=2), "computed_torque")
    with pytest.raises(ValueError, match="gains"):
        ActuationSpaceController(dyn, ref, PIDGains(1.0, 0.1, num_dofs=3))
    with pytest.raises(ValueError, match="unactuated_map"):
        ActuationSpaceDynamics(arm, unactuated_map=np.zeros((1, 3)))
    u = jnp.asarray([-1.0, 2.0])  # pull-only tendons go slack; signed ones push
    np.testing.assert_array_equal(arm.actuation.effort(u), [0.0, 2.0])
    np.testing.assert_array_equal(sg.Tendons(np.array([[0.01], [-0.008]]), signed=True).effort(u), u)
    with pytest.raises(ValueError, match="rank"):
        ActuationSpaceDynamics(sg.PlanarPCS(arm.params, actuation=sg.Tendons(np.array([[0.01], [0.01]]))))
