"""Rollouts and integrators: energy behaviour, closed loops, and jit/vmap/grad through them."""

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sorogym as sg


def _arm(damping=0.0, gravity=(0.0, 0.0, -9.81), planar=False):
    p = sg.RodParams.upright(
        length=[0.12, 0.1],
        radius=0.015,
        density=1070.0,
        young_modulus=1e5,
        poisson_ratio=0.45,
        damping=damping,
        gravity=list(gravity)[: 2 if planar else 3],
        planar=planar,
        dtype=jnp.float64,
    )
    if planar:
        return sg.PlanarPCS(p, active_strains="bending_elongation")
    off = np.array([[[0.01, 0.0]] * 2, [[-0.01, 0.0]] * 2, [[0.0, 0.01]] * 2])
    return sg.PCS(p, active_strains="bending_elongation", actuation=sg.Tendons(off))


# Energy drift over 1 s without damping or actuation, relative to the initial energy
# measured from the rest state (|E(t) - E(0)| / (E(0) - E_rest)). Tolerances stated per
# integrator: Tsit5 is accurate, the two fixed-step schemes bounded at their env steps.
ENERGY_CASES = [
    ("tsit5", lambda m: diffrax.Tsit5(), 2e-4, 1e-6),
    ("semi_implicit_euler", sg.sim.SemiImplicitEuler, 2e-5, 2e-2),
    ("linear_trapezoid", sg.sim.LinearTrapezoid, 1e-3, 1e-2),
]


@pytest.mark.parametrize("name,make_solver,dt,tol", ENERGY_CASES, ids=[c[0] for c in ENERGY_CASES])
def test_energy_drift_without_damping(name, make_solver, dt, tol):
    m = _arm()
    n = m.num_dofs
    y0 = jnp.zeros(2 * n).at[0].set(3.0).at[n + 1].set(-2.0)
    traj = jax.jit(lambda m_, y: sg.sim.rollout_to(m_, y, 1.0, solver=make_solver(m_), solver_dt=dt, save_dt=0.01).ys)(
        m, y0
    )
    energy = jax.jit(jax.vmap(m.total_energy))(traj)
    e_rest = m.total_energy(jnp.zeros(2 * n))
    drift = np.abs(np.asarray(energy - energy[0])).max() / float(energy[0] - e_rest)
    assert np.all(np.isfinite(np.asarray(traj)))
    assert drift < tol, drift


def test_damping_dissipates_energy_monotonically():
    m = _arm(damping=50.0)
    n = m.num_dofs
    y0 = jnp.zeros(2 * n).at[0].set(3.0)
    ys = sg.sim.rollout_to(m, y0, 0.5, solver_dt=2e-4, save_dt=0.01).ys
    energy = np.asarray(jax.vmap(m.total_energy)(ys))
    assert np.all(np.diff(energy) <= 1e-12)


def test_fixed_step_integrators_converge_to_tsit5():
    m = _arm(damping=5.0)
    n = m.num_dofs
    y0 = jnp.zeros(2 * n)
    u = jnp.array([2.0, 0.0, 1.0])
    # dt is traced and the step budget static, so both step sizes of a solver share one
    # compilation (the loop runs the steps dt needs, ceil(0.3 / dt))
    run = jax.jit(
        lambda m_, solver, dt, max_steps: sg.sim.rollout_to(
            m_, y0, 0.3, u, solver=solver, solver_dt=dt, save_dt=0.3, max_steps=max_steps
        ).ys[-1],
        static_argnums=(3,),
    )
    ref = run(m, diffrax.Tsit5(), 1e-5, int(np.ceil(0.3 / 1e-5)) + 2)
    # Both are first order overall (the trapezoidal rule is second order on the linear
    # stiff part only; M and the remaining forces are frozen at the start of each step).
    for solver_cls, dts, order in [
        (sg.sim.LinearTrapezoid, (1e-3, 5e-4), 1),
        (sg.sim.SemiImplicitEuler, (4e-5, 2e-5), 1),
    ]:
        max_steps = int(np.ceil(0.3 / min(dts))) + 2
        errs = [float(np.abs(np.asarray(run(m, solver_cls(m), dt, max_steps) - ref))[:n].max()) for dt in dts]
        assert errs[1] < errs[0]
        assert np.log2(errs[0] / errs[1]) > order - 0.4, (solver_cls.__name__, errs)


def test_closed_loop_rollouts_regulate_and_hold_inputs():
    """Potential compensation with matched PD(+I) gains (``sorogym.control``) drives q to a
    set point, both continuously and with a zero-order hold; the sampled version holds u
    between samples; the controller state (the error integral) is integrated along."""
    m = _arm(damping=5.0, gravity=(0.0, 0.0, 0.0), planar=True)
    n = m.num_dofs
    q_star = jnp.array([4.0, 0.0, -3.0, 0.0])
    M0 = jax.jit(lambda q: m.inertia_matrix(q))(jnp.zeros(n))
    ref = sg.control.ConstantReference(q_star)
    pd = sg.control.ConfigurationController(m, ref, sg.control.PIDGains.matched(M0, 20.0, 1.0), "potential")
    pid = sg.control.ConfigurationController(m, ref, sg.control.PIDGains.matched(M0, 20.0, 1.0, 2.0), "potential")
    y0 = jnp.zeros(2 * n)

    @jax.jit
    def run():
        cont = sg.sim.rollout_closed_loop_to(
            m, y0, lambda t, y: pd(t, y, pd.initial_state())[0], 1.0, solver_dt=2e-4, save_dt=0.5
        )
        disc = sg.sim.rollout_discrete_closed_loop_to(
            m, y0, lambda t, y: pd(t, y, pd.initial_state())[0], 1.0, control_dt=0.01, solver_dt=2e-4
        )
        tr = sg.sim.rollout_closed_loop_to(m, y0, pid, 1.0, z0=pid.initial_state(), solver_dt=2e-4, save_dt=0.5)
        return cont, disc, tr

    cont, disc, tr = run()
    np.testing.assert_allclose(cont.ys[-1, :n], q_star, atol=1e-3)
    assert disc.ys.shape == (101, 2 * n) and disc.us.shape == (101, n)
    np.testing.assert_allclose(disc.ys[-1, :n], q_star, atol=1e-2)
    u0 = jax.jit(lambda y: pd(0.0, y, pd.initial_state())[0])(disc.ys[0])
    np.testing.assert_allclose(disc.us[0], u0, rtol=1e-12)  # the held input is the sample at t = 0
    assert tr.zs.shape == (3, n)
    np.testing.assert_allclose(tr.zs[0], 0.0)
    err = np.abs(np.asarray(tr.ys[:, :n] - q_star))
    assert err[-1].max() < 0.05 * err[0].max()  # the integral term slows the approach, it still converges
    assert np.all(np.abs(np.asarray(tr.zs[-1])[[0, 2]]) > 1e-2)  # the commanded bending errors were integrated


def test_grad_and_vmap_through_a_rollout():
    """Gradients of the final tip position with respect to u and every physical parameter
    are finite and match finite differences; vmap over parameters gives per-robot results.
    (Planar arm with generalized forces: reverse mode through a spatial tendon arm's rollout
    compiles for about a minute and adds nothing the planar case does not check.)"""
    m = _arm(damping=10.0, planar=True)
    n = m.num_dofs
    y0 = jnp.zeros(2 * n)

    def tip_x(params, u):
        mm = m.with_params(params)
        ys = sg.sim.rollout_to(mm, y0, 0.1, u, solver=sg.sim.LinearTrapezoid(mm), solver_dt=1e-3, save_dt=0.1).ys
        return mm.forward_kinematics(ys[-1, :n], mm.total_length)[0, 2]

    u = jnp.array([0.01, 0.2, 0.005, 0.1])  # bending torques [N m] and axial forces [N] per segment
    f = jax.jit(tip_x)
    g_params, g_u = jax.jit(jax.grad(tip_x, argnums=(0, 1)))(m.params, u)
    for leaf in jax.tree.leaves(g_params):
        assert np.all(np.isfinite(np.asarray(leaf)))
    eps = 1e-6
    fd_u = (f(m.params, u.at[0].add(eps)) - f(m.params, u.at[0].add(-eps))) / (2 * eps)
    np.testing.assert_allclose(g_u[0], fd_u, rtol=1e-5)
    E = m.params.young_modulus
    fd_E = (
        f(m.params.replace(young_modulus=E * (1 + eps)), u) - f(m.params.replace(young_modulus=E * (1 - eps)), u)
    ) / (2 * eps)
    np.testing.assert_allclose(jnp.sum(g_params.young_modulus * E), fd_E, rtol=1e-4)
    # domain randomisation: vmap over a batch of parameter sets
    Es = jnp.stack([E * 0.5, E, E * 2.0])
    batch = jax.tree.map(lambda x: jnp.broadcast_to(x, (3,) + x.shape), m.params)
    batch = batch.replace(young_modulus=Es)
    tips = jax.jit(jax.vmap(tip_x, in_axes=(0, None)))(batch, u)
    np.testing.assert_allclose(tips[1], f(m.params, u), rtol=1e-12)
    assert abs(float(tips[0] - tips[2])) > 1e-6


def test_orders_of_the_trapezoid_schemes():
    """On an arm with damping and a fast initial motion (float64, against Tsit5): the
    linear trapezoid is first order, the predictor-corrector second order; the midpoint
    variant is second order while the configuration-dependent forces dominate the error
    (coarse steps) and tends to first order as the velocity-dependent ones take over, at the
    cost of the first scheme."""
    m = _arm(damping=2.0)
    u = jnp.array([0.4, 0.0, 0.2])
    y0 = m.zero_state().at[0].set(2.0).at[m.num_dofs + 1].set(-3.0)
    T = 0.1
    ref = sg.sim.rollout_to(m, y0, t1=T, u=u, solver_dt=1e-4, save_dt=T).ys[-1]
    force = lambda q, v: m.generalized_force(q, u)  # noqa: E731

    @jax.jit
    def errors(n):  # n traced: one compilation for every scheme and step count
        h = T / n
        ends = [
            jax.lax.fori_loop(0, n, lambda i, y, step=step: step(m, y, force, h), y0)
            for step in (
                sg.sim.linear_trapezoid_step,
                sg.sim.trapezoid_predictor_corrector_step,
                sg.sim.trapezoid_midpoint_step,
            )
        ]
        return jnp.stack([jnp.linalg.norm(y - ref) for y in ends])

    e = np.stack([np.asarray(errors(n)) for n in (50, 100, 200, 400)])  # (step counts, schemes)
    order = np.log2(e[:-1] / e[1:])
    trapezoid, pc, midpoint = order.T
    assert np.all((0.7 < trapezoid) & (trapezoid < 1.5)), e
    assert np.all((1.8 < pc) & (pc < 2.3)), e
    assert 1.8 < midpoint[0] < 2.3 and 1.4 < midpoint[-1] < 1.9, e  # second order, then first
    assert np.all(e[:, 1] < e[:, 2]) and np.all(e[:, 2] < e[:, 0]), e
    assert e[1, 2] < 1.5 * e[1, 1], e  # at 100 steps within half again of the predictor-corrector


def test_fixed_step_rollout_saves_at_arbitrary_times_and_checks_them():
    """Fixed-step rollouts solve between save times: at irregular save times (not on the
    step grid) they match an adaptive reference, and bad save times raise."""
    m = _arm(damping=2.0, planar=True)
    y0 = jnp.zeros(2 * m.num_dofs)
    u = jnp.array([0.05, 0.0, -0.02, 0.01])  # generalized forces on the 4 coordinates
    ts = jnp.array([0.0, 0.0123, 0.05, 0.0777, 0.1])
    fixed = sg.sim.rollout_to(m, y0, 0.1, u, solver_dt=1e-4, save_ts=ts)
    ref = sg.sim.rollout_to(
        m, y0, 0.1, u, solver_dt=1e-4, save_ts=ts, stepsize_controller=diffrax.PIDController(rtol=1e-11, atol=1e-12)
    )
    np.testing.assert_allclose(fixed.ts, ts)
    np.testing.assert_array_equal(fixed.ys[0], y0)
    scale = np.abs(np.asarray(ref.ys)).max()
    assert scale > 0
    np.testing.assert_allclose(fixed.ys, ref.ys, atol=1e-7 * scale)
    # An explicit ConstantStepSize is the default fixed-step path, not a second one.
    explicit = sg.sim.rollout_to(
        m, y0, 0.1, u, solver_dt=1e-4, save_ts=ts, stepsize_controller=diffrax.ConstantStepSize()
    )
    np.testing.assert_array_equal(explicit.ys, fixed.ys)
    for bad in ([0.05, 0.01], [0.0, 0.2], [-0.01, 0.05]):
        with pytest.raises(ValueError, match="save_ts"):
            sg.sim.rollout_to(m, y0, 0.1, u, solver_dt=1e-4, save_ts=jnp.array(bad))


def test_theta_damps_the_stiff_modes_a_step_does_not_resolve():
    """An undamped planar arm without gravity starts with a 1 % elongation of both
    segments; its axial modes (71 and 260 rad/s) are not resolved by 50 ms steps. The
    trapezoidal rule (``theta = 1/2``) keeps that energy ringing (the elongation still
    near its start after 2 s), ``theta = 1`` (backward Euler on the linear forces) removes
    it, ``theta = 0.75`` lies in between; and a damping theta settles on the static
    equilibrium under a constant force (a fixed point of the update is ``F = K(q)``)."""
    m = _arm(gravity=(0.0, 0.0), planar=True)
    n, h = m.num_dofs, 5e-2
    y0 = m.zero_state().at[1].set(0.01).at[3].set(0.01)  # elongation of both segments

    def run(theta, u, steps):
        step = lambda y, _: (sg.sim.linear_trapezoid_step(m, y, lambda q, v: u, h, theta=theta), None)  # noqa: E731
        return jax.lax.scan(step, y0, None, length=steps)[0]

    run = jax.jit(run, static_argnums=(0, 2))
    zero = jnp.zeros(n)
    elongation = {t: float(jnp.abs(run(t, zero, 40)[jnp.array([1, 3])]).max()) for t in (0.5, 0.75, 1.0)}
    assert elongation[0.5] > 0.005, elongation
    assert elongation[1.0] < 1e-8, elongation
    assert elongation[1.0] < elongation[0.75] < 1e-2 * elongation[0.5], elongation
    u = jnp.array([0.02, 0.3, -0.01, 0.2])  # generalized forces of bending and elongation
    static = np.linalg.solve(np.asarray(m.stiffness_matrix()), np.asarray(u))
    for theta in (0.75, 1.0):
        np.testing.assert_allclose(np.asarray(run(theta, u, 2000)[:n]), static, rtol=1e-6, atol=1e-9)
