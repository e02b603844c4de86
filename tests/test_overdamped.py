"""The overdamped fixed-step scheme (``sorogym.sim.overdamped_step``): its order on a linear
flow against the matrix exponential, its rest points, and the passage of a concentric tube
robot through its snap by descent of the energy."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg

import sorogym as sg
from sorogym.sim import FIXED_STEP_SCHEMES, absolute_stiffness, overdamped_step


def _bending_rod(seed, gravity):
    """Two bending-only PCS segments (affine elasticity, positive definite damping), stiff
    enough that gravity (taken explicitly by the scheme) is a perturbation."""
    rng = np.random.default_rng(seed)
    params = sg.RodParams.create(
        length=rng.uniform(0.08, 0.12, 2),
        radius=rng.uniform(0.01, 0.015, 2),
        density=1000.0,
        young_modulus=rng.uniform(1e6, 2e6, 2),
        poisson_ratio=0.4,
        damping=rng.uniform(50.0, 100.0, 2),
        reference_strain=np.array([[0.0, 1.0, 0.0, 1.0, 0, 0], [0.0, -2.0, 0.5, 1.0, 0, 0]]),
        gravity=gravity,
        dtype=jnp.float64,
    )
    return sg.PCS(params, active_strains="pcc")


@jax.jit
def _relax(model, q0, tau, T, steps, theta):
    """``q(T)`` after ``steps`` steps from rest at ``q0`` (one compilation for every count)."""
    h = T / steps

    def step(_, y):
        return overdamped_step(model, y, lambda q, qd: tau, h, theta=theta)

    y = jax.lax.fori_loop(0, steps, step, model.pack_state(q0, jnp.zeros_like(q0)))
    return model.split_state(y)[0]


def test_scheme_table_and_absolute_stiffness():
    assert FIXED_STEP_SCHEMES["overdamped"] is overdamped_step
    rng = np.random.default_rng(0)
    V = np.linalg.qr(rng.normal(size=(4, 4)))[0]
    S = V @ np.diag([-2.0, -0.5, 1.0, 3.0]) @ V.T
    np.testing.assert_allclose(absolute_stiffness(jnp.asarray(S)), V @ np.diag([2.0, 0.5, 1.0, 3.0]) @ V.T, atol=1e-12)


def test_linear_flow_first_and_second_order_against_the_exponential():
    """Without gravity the bending rod's flow ``D qd = tau - S q - K(0)`` is linear: backward
    Euler (theta 1) converges at first order, the trapezoidal rule (1/2) at second."""
    model = _bending_rod(1, (0.0, 0.0, 0.0))
    n = model.num_dofs
    D, S = (np.asarray(jax.jit(f)()) for f in (lambda: model.damping_matrix(), lambda: model.stiffness_matrix()))
    K0 = np.asarray(jax.jit(lambda q: model.elastic_force(q))(jnp.zeros(n)))
    rng = np.random.default_rng(2)
    q0, tau = rng.normal(size=n), rng.normal(size=n) * 1e-3
    rates = np.linalg.eigvals(np.linalg.solve(D, S)).real
    assert rates.min() > 0
    T = 1.0 / rates.min()
    q_star = np.linalg.solve(S, tau - K0)
    exact = q_star + scipy.linalg.expm(-T * np.linalg.solve(D, S)) @ (q0 - q_star)
    for theta, order in ((1.0, 1.0), (0.5, 2.0)):
        steps = [int(np.ceil(4 * T * rates.max())) * k for k in (1, 2, 4)]
        errors = [np.linalg.norm(_relax(model, jnp.asarray(q0), jnp.asarray(tau), T, s, theta) - exact) for s in steps]
        observed = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
        assert np.all(np.abs(observed - order) < 0.15), (theta, errors, observed)


def test_static_equilibrium_is_a_rest_point_and_is_reached():
    """Under gravity (explicit) and a constant load, the static equilibrium is a fixed point
    of the step, and long steps from rest converge to it."""
    model = _bending_rod(3, (0.0, 0.0, -9.81))
    n = model.num_dofs
    tau = jnp.asarray(np.random.default_rng(4).normal(size=n) * 1e-3)
    q_star = np.asarray(model.static_equilibrium(tau_ext=tau))
    step = jax.jit(lambda y: overdamped_step(model, y, lambda q, qd: tau, 10.0))
    q1, qd1 = model.split_state(step(model.pack_state(jnp.asarray(q_star), jnp.ones(n))))
    np.testing.assert_allclose(q1, q_star, atol=1e-10)
    assert np.abs(np.asarray(qd1)).max() < 1e-9
    y = model.pack_state(jnp.zeros(n), jnp.zeros(n))
    for _ in range(12):
        y = step(y)
    np.testing.assert_allclose(model.split_state(y)[0], q_star, atol=1e-8)


def test_bad_uses_are_refused():
    model = _bending_rod(0, (0.0, 0.0, 0.0))
    y = model.zero_state(jnp.float64)
    with pytest.raises(ValueError, match="line_load"):
        overdamped_step(model, y, lambda q, qd: jnp.zeros_like(qd), 1e-2, line_load=lambda *a: None)


def test_concentric_tubes_snap_by_descent_of_the_energy():
    """Table 7's tubes driven past the fold of their relative rotation: with the drive held
    beyond it, the flow leaves the unstable state and slides down the energy (never up) to a
    stable equilibrium on the other branch, where Newton's method on ``S`` itself would
    have to start inside the basin."""
    robot = sg.robots.concentric_tube_robot(bending_order=1, twist_order=2, num_gauss_points=3, dtype=jnp.float64)
    zero = jnp.zeros(robot.num_dofs)
    unforced = lambda q, qd: jnp.zeros_like(qd)  # noqa: E731

    @jax.jit
    def drive(q, angles, h):
        """Hold each rotation of the inner tube in ``angles`` for one step; the energies."""

        def step(q, angle):
            model = robot.update_params(rotation=jnp.stack([angle, 0.0, 0.0]))
            q = model.split_state(overdamped_step(model, model.pack_state(q, zero), unforced, h))[0]
            return q, (model.elastic_energy(q), jnp.linalg.norm(model.elastic_force(q)))

        return jax.lax.scan(step, q, angles)

    # settle, creep to 4.6 rad (before the fold, about 5 rad here), settle
    slow = jnp.concatenate([jnp.zeros(40), jnp.linspace(0.0, 4.6, 200), jnp.full(60, 4.6)])  # one scan length
    q, (_, residual) = drive(zero.at[12].set(1e-3), slow, 0.02)
    assert float(residual[-1]) < 1e-8
    q_end, (energies, residuals) = drive(q, jnp.full(300, 5.6), 0.02)
    energies, residuals = np.asarray(energies), np.asarray(residuals)
    assert np.all(np.diff(energies) <= 1e-12 * energies[0]), np.diff(energies).max()
    assert energies[-1] < 0.5 * energies[0]  # released the stored torsion
    assert residuals[-1] < 1e-8
    model = robot.update_params(rotation=jnp.array([5.6, 0.0, 0.0]))
    assert np.linalg.eigvalsh(np.asarray(jax.jit(lambda q: model.tangent_stiffness(q))(q_end))).min() > 0


def test_vector_field_is_the_flow_the_scheme_discretises():
    """``scheme_vector_field('overdamped')`` is ``[D^-1 f(q), 0]``, and the scheme's steps
    converge to its adaptive solution under gravity (nonlinear), at first order: gravity is
    taken explicitly, even with the trapezoidal rule on the elasticity."""
    import diffrax

    model = _bending_rod(5, (0.0, 0.0, -9.81))
    n = model.num_dofs
    rng = np.random.default_rng(6)
    q0, tau = jnp.asarray(rng.normal(size=n)), jnp.asarray(rng.normal(size=n) * 1e-3)
    flow = sg.sim.scheme_vector_field("overdamped")
    y0 = model.pack_state(q0, jnp.zeros(n))
    D, S = (np.asarray(jax.jit(f)()) for f in (lambda: model.damping_matrix(), lambda: model.stiffness_matrix()))
    f = np.asarray(jax.jit(lambda q: tau - model.elastic_force(q) - model.gravitational_force(q))(q0))
    np.testing.assert_allclose(jax.jit(flow)(model, 0.0, y0, (None, tau))[:n], np.linalg.solve(D, f), rtol=1e-10)
    assert sg.sim.scheme_vector_field("trapezoid")(model, 0.0, y0, (None, tau)).shape == y0.shape
    with pytest.raises(ValueError, match="unknown"):
        sg.sim.scheme_vector_field("euler")
    T = 0.5 / np.linalg.eigvals(np.linalg.solve(D, S)).real.min()  # half the slowest relaxation time

    @jax.jit
    def reference(y0):
        term = diffrax.ODETerm(lambda t, y, args: flow(model, t, y, (None, tau)))
        controller = diffrax.PIDController(rtol=1e-10, atol=1e-12)
        return diffrax.diffeqsolve(term, diffrax.Tsit5(), 0.0, T, T / 100, y0, stepsize_controller=controller).ys[-1]

    exact = np.asarray(model.split_state(reference(y0))[0])
    errors = [np.linalg.norm(_relax(model, q0, tau, T, s, 0.5) - exact) for s in (100, 200)]
    assert 1.8 < errors[0] / errors[1] < 2.2, errors
