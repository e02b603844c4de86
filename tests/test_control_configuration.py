"""Configuration-space controllers and references: AD reference derivatives against closed
forms, every compensation's model term against the dynamics (the reference is an exact
solution of the compensated loop), computed torque's linear error dynamics against the
matrix exponential, and clear errors for bad input."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.linalg import expm

import sorogym as sg
from sorogym.control import (
    COMPENSATIONS,
    ConfigurationController,
    ConstantReference,
    FunctionReference,
    PIDGains,
    PoseReference,
    SampledReference,
    pose_error,
    saturate,
)
from sorogym.lie import se3, so3
from sorogym.robots import figure_eight_reference, strain_benchmark_q
from sorogym.sim import rollout_closed_loop_to

W_N, ZETA, W_I = 12.0, 0.8, 0.5


def _reference_fn(t):
    """A smooth 3-D reference with known derivatives (planar one-segment arm, n = 3)."""
    a = jnp.asarray([1.2, 0.4, -0.02])
    w = jnp.asarray([2.5, 1.0, 4.0])
    return a * jnp.sin(w * t + 0.3)


@pytest.fixture(scope="module")
def arm():
    """Planar one-segment PCS (all strains), fully actuated ``A = I``."""
    return sg.PlanarPCS(
        sg.RodParams.create(
            length=0.12,
            radius=0.02,
            density=1100.0,
            young_modulus=3e4,
            poisson_ratio=0.45,
            damping=2.0,
            gravity=[1.5, -9.81],
            planar=True,
            dtype=jnp.float64,
        )
    )


def _gains(model, ki=W_I):
    M0 = jax.jit(lambda q: model.inertia_matrix(q))(jnp.zeros(model.num_dofs))
    return PIDGains.matched(M0, W_N, ZETA, ki)


def test_references_derivatives_by_ad():
    ts = np.linspace(0.0, 1.0, 11)
    line = SampledReference(ts, np.stack([2 * ts - 1, -ts], axis=1), method="linear")
    ts_fine = np.linspace(0.0, 2.0, 201)
    cubic = SampledReference(ts_fine, np.sin(3 * ts_fine))
    t = jnp.linspace(0.0, 2.0, 7)
    tq = jnp.asarray([0.05, 0.52, 0.97, 1.5])

    @jax.jit
    def samples():
        return jax.vmap(FunctionReference(_reference_fn))(t), jax.vmap(line)(tq), jax.vmap(cubic)(tq)

    s, sl, sc = samples()
    a = np.array([1.2, 0.4, -0.02])
    w = np.array([2.5, 1.0, 4.0])
    arg = np.asarray(t)[:, None] * w + 0.3
    np.testing.assert_allclose(s.rate, a * w * np.cos(arg), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(s.acceleration, -a * w**2 * np.sin(arg), rtol=1e-12, atol=1e-14)
    # sampled: linear pieces reproduce a line exactly; outside the samples the end value holds
    np.testing.assert_allclose(sl.value[:3, 0], [-0.9, 0.04, 0.94], atol=1e-12)
    np.testing.assert_allclose(sl.rate[:3], np.tile([2.0, -1.0], (3, 1)), atol=1e-10)
    np.testing.assert_allclose(sl.value[3], [1.0, -1.0], atol=1e-12)
    assert np.all(sl.rate[3] == 0) and np.all(sl.acceleration == 0)
    # cubic Hermite: through the samples, rate close to the true derivative on a fine grid
    np.testing.assert_allclose(sc.value[:, 0], np.sin(3 * tq), atol=1e-4)
    np.testing.assert_allclose(sc.rate[:, 0], 3 * np.cos(3 * tq), atol=5e-2)
    with pytest.raises(ValueError, match="strictly increasing"):
        SampledReference(np.array([0.0, 0.2, 0.1]), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="method"):
        SampledReference(ts, np.sin(ts), method="spline")


def test_pose_reference_twist_and_pose_error():
    xi0 = jnp.asarray([0.3, -0.2, 0.5, 0.1, 0.0, -0.2])
    xi1 = jnp.asarray([0.7, 0.4, -0.3, 0.05, 0.2, 0.1])
    ref = PoseReference(lambda t: se3.exp(xi0 * jnp.sin(t)) @ se3.exp(xi1 * t**2))
    t, h = 0.7, 1e-5
    w, dp = jnp.asarray([0.1, -0.2, 0.05]), jnp.asarray([0.01, 0.02, -0.03])

    @jax.jit
    def evaluate():
        s, s_p, s_m = ref(t), ref(t + h), ref(t - h)
        g = s.value
        g_d = g.at[:3, :3].set(so3.exp(w) @ g[:3, :3]).at[:3, 3].add(dp)
        return s, s_p, s_m, pose_error(s_p.value, s_m.value), pose_error(g, g), pose_error(g_d, g)

    s, s_p, s_m, e_pm, e_same, e_shift = evaluate()
    fd = np.concatenate([np.asarray(e_pm[:3]), np.asarray(s_p.value[:3, 3] - s_m.value[:3, 3])]) / (2 * h)
    np.testing.assert_allclose(s.rate, fd, rtol=1e-6, atol=1e-8)  # log(R(t+h) R(t-h)^T) / 2h
    np.testing.assert_allclose(
        s.acceleration, (np.asarray(s_p.rate) - np.asarray(s_m.rate)) / (2 * h), rtol=1e-5, atol=1e-7
    )
    # pose error: zero at equal poses; a world-frame rotation w and shift dp give [w, dp]
    np.testing.assert_allclose(e_same, np.zeros(6), atol=1e-12)
    np.testing.assert_allclose(e_shift, np.concatenate([w, dp]), atol=1e-12)


def test_saturated_integral():
    e = jnp.asarray([-50.0, -0.01, 0.0, 0.02, 3.0])
    e_sat = jnp.asarray([10.0, 10.0, 0.1, 0.1, jnp.inf])
    s = saturate(e, e_sat)
    assert np.all(np.abs(s[:4]) < e_sat[:4]) and s[4] == 3.0  # inf: no saturation
    np.testing.assert_allclose(s[1], -0.01, rtol=1e-5)  # unit slope near zero
    np.testing.assert_allclose(jax.grad(lambda x: saturate(x, 0.1))(0.0), 1.0)


def test_every_compensation_makes_the_reference_a_solution(arm):
    """At the reference state with zero integral, feedback vanishes and the model term alone
    produces the reference motion: an equilibrium for the regulators (constant setpoint),
    ``qdd = qdd_d`` for the trackers (time-varying reference)."""
    n = arm.num_dofs
    q_set = jnp.asarray([0.9, 0.1, 0.05])  # [k, sx - 1, sy]
    setpoint = ConstantReference(q_set)
    moving = FunctionReference(_reference_fn)
    gains = _gains(arm)
    regulators = ("potential", "gravity", "potential_cancellation")
    trackers = ("feedforward", "mixed_state", "computed_torque")
    assert set(regulators + trackers + ("none",)) == set(COMPENSATIONS)

    controllers = {
        kind: ConfigurationController(arm, setpoint if kind in regulators else moving, gains, kind)
        for kind in regulators + trackers
    }

    @jax.jit
    def accelerations(t):
        out = {}
        for kind, c in controllers.items():
            r = c.reference(t)
            y = jnp.concatenate([r.value, r.rate])
            u_mb, u_fb, z_dot = c.split(t, y, jnp.zeros(n))
            qdd = arm.forward_dynamics(t, y, (u_mb + u_fb,))[n:]
            out[kind] = (qdd, r.acceleration, u_fb, z_dot)
        return out

    for kind, (qdd, qdd_d, u_fb, z_dot) in accelerations(0.37).items():
        np.testing.assert_allclose(u_fb, 0.0, atol=1e-12, err_msg=kind)
        np.testing.assert_allclose(z_dot, 0.0, atol=1e-12, err_msg=kind)
        np.testing.assert_allclose(qdd, qdd_d, atol=1e-7 * (1 + np.abs(qdd_d).max()), err_msg=kind)


def test_computed_torque_error_decays_as_the_linear_closed_loop(arm):
    """With matched gains ``K = w^2 M_0`` etc., computed torque leaves per coordinate
    ``edd + 2 zeta w ed + w^2 e + w_i w^2 eta = 0`` (no saturation): compare the rollout's
    error with the matrix exponential of that linear system."""
    n = arm.num_dofs
    ref = FunctionReference(_reference_fn)
    c = ConfigurationController(arm, ref, _gains(arm), "computed_torque")
    traj = jax.jit(
        lambda: rollout_closed_loop_to(arm, arm.zero_state(), c, 1.0, c.initial_state(), solver_dt=2e-3, save_dt=0.1)
    )()
    r = jax.vmap(ref)(traj.ts)
    e = np.asarray(r.value - traj.ys[:, :n])
    F = np.array([[0.0, 1.0, 0.0], [-(W_N**2), -2 * ZETA * W_N, -W_I * W_N**2], [1.0, 0.0, 0.0]])
    x0 = np.stack([np.asarray(r.value[0]), np.asarray(r.rate[0]), np.zeros(n)])  # [e, ed, eta] at t = 0
    expected = np.stack([expm(F * float(t)) @ x0 for t in traj.ts])  # (T, 3, n)
    np.testing.assert_allclose(e, expected[:, 0], atol=1e-7 * np.abs(x0).max())
    np.testing.assert_allclose(traj.zs, expected[:, 2], atol=1e-7 * np.abs(x0).max())  # the integral state
    assert np.abs(e[-1]).max() < 0.1 * np.abs(e[0]).max()  # and it decays


def test_bad_controller_input_fails_at_construction(arm):
    n = arm.num_dofs
    ref = ConstantReference(jnp.zeros(n))
    gains = _gains(arm)
    with pytest.raises(ValueError, match="compensation: unknown"):
        ConfigurationController(arm, ref, gains, "sliding_mode")
    with pytest.raises(ValueError, match="reference: values must have shape"):
        ConfigurationController(arm, ConstantReference(jnp.zeros(n + 1)), gains, "potential")
    with pytest.raises(ValueError, match="gains: sized for"):
        ConfigurationController(arm, ref, PIDGains(1.0, 0.1, num_dofs=n - 1), "none")
    with pytest.raises(ValueError, match="e_sat"):
        PIDGains(1.0, 0.1, e_sat=-1.0, num_dofs=n)
    with pytest.raises(ValueError, match="natural_frequency"):
        PIDGains.matched(jnp.eye(n), -1.0, 0.9)
    tendon_arm = sg.PlanarPCS(arm.params, actuation=sg.Tendons(np.array([[0.01], [-0.01]])))  # m = 2 < n = 3
    with pytest.raises(ValueError, match="underactuated"):
        ConfigurationController(
            tendon_arm,
            ConstantReference(jnp.zeros(tendon_arm.num_dofs)),
            PIDGains(1.0, 0.1, num_dofs=tendon_arm.num_dofs),
            "computed_torque",
        )
    # model-free PID works on any actuation: u = A^T PID
    pid = ConfigurationController(
        tendon_arm,
        ConstantReference(jnp.full(tendon_arm.num_dofs, 0.1)),
        PIDGains(2.0, 0.1, num_dofs=tendon_arm.num_dofs),
        "none",
    )
    y = tendon_arm.zero_state(jnp.float64)
    u, _ = jax.jit(lambda t, y_, z: pid(t, y_, z))(0.0, y, pid.initial_state())
    A = jax.jit(lambda q: tendon_arm.actuation_matrix(q))(y[: tendon_arm.num_dofs])
    np.testing.assert_allclose(u, A.T @ jnp.full(tendon_arm.num_dofs, 0.2), rtol=1e-12)
    # rank-deficient A (a coordinate driven twice, another never) is refused
    singular = sg.PlanarPCS(arm.params, actuation=sg.GeneralizedActuation(indices=(0, 0, 1)))
    with pytest.raises(ValueError, match="rank"):
        ConfigurationController(singular, ref, gains, "feedforward")


def test_strain_benchmark_reference_is_the_paper_schedule():
    q = jax.jit(jax.vmap(strain_benchmark_q))(jnp.asarray([1.0, 4.0, 7.5, 10.0, 13.0, 15.0, 17.0]))
    np.testing.assert_allclose(
        q[:5, 1:4], [[0, 0, 0], [14, 7, 0.1], [-14, -7, -0.05], [7, -10, 0.06], [0, 0, 0]], atol=1e-12
    )
    h = 1.0  # s(2 s) = 1: ramp complete
    np.testing.assert_allclose(
        q[6, 1:4], [12 * h * np.sin(6), 6 * np.sin(4 + np.pi / 4), 0.06 * np.sin(5 + np.pi / 2)], atol=1e-12
    )
    np.testing.assert_allclose(q[5], 0.0, atol=1e-12)  # continuous hand-over at 15 s
    assert np.all(q[:, [0, 4, 5]] == 0)


def test_figure_eight_pose_stays_on_the_sphere_facing_outwards():
    g0 = se3.exp(jnp.asarray([0.2, -0.4, 0.1, 0.05, 0.1, 0.2]))
    ts = jnp.linspace(0.0, 4.0, 9)
    ref = figure_eight_reference(g0)
    s = jax.jit(jax.vmap(ref))(ts)
    g = np.asarray(s.value)
    center = np.asarray(g0[:3, 3] - 0.08 * g0[:3, 0])
    np.testing.assert_allclose(g[0], g0, atol=1e-12)  # starts at the initial pose
    np.testing.assert_allclose(g[-1], g0, atol=1e-9)  # periodic, T = 4 s
    radial = g[:, :3, 3] - center
    np.testing.assert_allclose(np.linalg.norm(radial, axis=1), 0.08, atol=1e-12)
    np.testing.assert_allclose(g[:, :3, 0], radial / 0.08, atol=1e-12)  # first axis: outward normal
    np.testing.assert_allclose(
        np.einsum("kji,kjl->kil", g[:, :3, :3], g[:, :3, :3]), np.tile(np.eye(3), (9, 1, 1)), atol=1e-12
    )
    # the reference spans of the paper (section V-C2): S_p = 134.6 mm, S_R = 114.6 deg
    ts_fine = jnp.arange(0.0, 4.0, 0.01)
    g_fine = jax.jit(jax.vmap(ref))(ts_fine).value
    positions = np.asarray(g_fine[:, :3, 3])
    s_p = np.linalg.norm(positions[:, None] - positions[None], axis=-1).max()
    geodesic = jax.jit(jax.vmap(jax.vmap(lambda a, b: jnp.linalg.norm(so3.log(a @ b.T)), (None, 0)), (0, None)))
    s_r = np.degrees(np.asarray(geodesic(g_fine[:, :3, :3], g_fine[:, :3, :3])).max())
    np.testing.assert_allclose([1e3 * s_p, s_r], [134.6, 114.6], atol=0.06)
    # the tangential speed is finite and nonzero; its normal component vanishes
    assert np.all(np.linalg.norm(s.rate[:, 3:], axis=1) > 1e-3)
    np.testing.assert_allclose(np.einsum("ki,ki->k", np.asarray(s.rate[:, 3:]), radial), 0.0, atol=1e-12)


def test_closed_loop_loss_gradient_in_the_gains_matches_finite_differences(arm):
    """Gain tuning differentiates through the whole closed loop (as
    scripts/reproduce_gain_optimisation.py does): reverse-mode gradients of the
    integrated squared error in the log-gains agree with central differences."""
    n = arm.num_dofs
    q_d = jnp.asarray([4.0, 0.01, -0.02])
    ref = ConstantReference(q_d)

    def loss(log_gains):
        kp, ki, kd = jnp.exp(log_gains)
        gains = PIDGains(kp * jnp.ones(n), kd * jnp.ones(n), ki * jnp.ones(n), e_sat=1.0, dtype=jnp.float64)
        ctrl = ConfigurationController(arm, ref, gains, "potential")
        traj = rollout_closed_loop_to(
            arm, jnp.zeros(2 * n), ctrl, 0.3, ctrl.initial_state(), solver_dt=2e-3, save_dt=0.01
        )
        return jnp.trapezoid(jnp.sum((q_d - traj.ys[:, :n]) ** 2, axis=-1), traj.ts)

    x = jnp.log(jnp.asarray([2e-3, 5e-4, 1e-4]))
    value, grad = jax.jit(jax.value_and_grad(loss))(x)
    loss_jit = jax.jit(loss)
    h = 1e-5
    fd = np.array([(loss_jit(x.at[i].add(h)) - loss_jit(x.at[i].add(-h))) / (2 * h) for i in range(3)])
    assert np.isfinite(float(value)) and np.all(np.abs(fd) > 1e-6 * float(value))
    np.testing.assert_allclose(np.asarray(grad), fd, rtol=1e-5)
