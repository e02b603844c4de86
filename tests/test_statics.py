"""Static equilibria ``G(q) + K(q) = A(q) u + tau_ext`` (``SoftRobot.static_equilibrium``):
recovery of a known equilibrium on randomised models, residual, implicit derivatives against
finite differences in every input and in physical parameters, agreement with a damped
rollout, and bad input."""

from __future__ import annotations

import os

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _models import build_case, random_state

import sorogym as sg
from sorogym.models import static_residual

# Model seeds whose unloaded rest is stable under their random gravity (some random rods,
# soft and pre-curved, buckle under their own weight; they have no equilibrium branch from rest
# to recover).
MODEL_SEED = 3


@eqx.filter_jit
def _loads_and_stiffness(model, q_t, u):
    """``tau_ext`` holding ``q_t`` under ``u``, and the static stiffness there."""
    tau = model.potential_force(q_t) - model.actuation_force(q_t, u)
    return tau, jax.jacfwd(lambda q_: static_residual(model, q_, u, tau))(q_t)


def _known_equilibrium(model, seed):
    """A random *stable* configuration ``q_t`` (curvatures ~1 /m, stretches ~0.02) and the
    loads that hold it: random efforts ``u`` (tendons pull) and ``tau_ext`` for the rest."""
    rng = np.random.default_rng(seed)
    for _ in range(20):
        q_t, _ = random_state(model, rng, scale=0.2)
        u = jnp.asarray(rng.uniform(0.0, 1.0, model.num_actuators))
        tau, stiffness = _loads_and_stiffness(model, q_t, u)
        if np.all(np.linalg.eigvals(np.asarray(stiffness)).real > 0):
            return q_t, u, tau
    raise AssertionError("no stable random equilibrium in 20 draws")


@eqx.filter_jit
def _solve_and_check(model, u, tau):
    """Solution, its residual, the scale of the elastic forces and the static stiffness
    ``d/dq [G + K - A u]`` at the solution (one compiled function per model shape)."""
    q = model.static_equilibrium(u, tau)
    stiffness = jax.jacfwd(lambda q_: static_residual(model, q_, u, tau))(q)
    return q, static_residual(model, q, u, tau), jnp.max(jnp.abs(model.elastic_force(q))), stiffness


# spatial with linear tendon routing, spatial with mixed strains and generalized forces, planar
# (the other two cases are the fixtures of the derivative and rollout tests below)
@pytest.mark.parametrize("case", ["pcs3_pcc_tendons_linear", "pcs2_mixed", "planar2_pcc_tendons_linear"])
def test_recovers_a_known_equilibrium_to_machine_precision(case):
    model = build_case(case, MODEL_SEED)
    q_t, u, tau = _known_equilibrium(model, 11)
    q, residual, force_scale, stiffness = _solve_and_check(model, u, tau)
    assert float(jnp.max(jnp.abs(residual))) <= 1e-10 * (1.0 + float(force_scale))
    np.testing.assert_allclose(q, q_t, rtol=0, atol=1e-8 * (1.0 + float(jnp.max(jnp.abs(q_t)))))
    # a stable equilibrium: the static stiffness has eigenvalues with positive real part
    assert np.all(np.linalg.eigvals(np.asarray(stiffness)).real > 0)


def _tip(model, q):
    return model.forward_kinematics(q, model.total_length)[:-1, -1]


@pytest.fixture(scope="module")
def spatial_arm():
    return build_case("pcs1_all_tendons", MODEL_SEED)


@pytest.fixture(scope="module")
def planar_arm():
    return build_case("planar3_all_tendons", MODEL_SEED)


def _loads(model, seed):
    rng = np.random.default_rng(seed)
    _, u, tau = _known_equilibrium(model, seed)
    return u, tau, jnp.asarray(rng.normal(size=model.params.gravity.shape[0]))


def _tip_objective(model, u, tau, w):
    """Weighted tip position at the equilibrium: a scalar of everything the solve depends on."""
    return jnp.dot(w, _tip(model, model.static_equilibrium(u, tau)))


@pytest.mark.parametrize("arm, mode", [("spatial_arm", "reverse"), ("planar_arm", "forward")])
def test_implicit_derivatives_match_finite_differences(arm, mode, request):
    """d(w . tip(q*))/d(E, rho, L, u, tau_ext) against central differences."""
    model = request.getfixturevalue(arm)
    u, tau, w = _loads(model, 5)

    def objective(E, rho, L, u_, tau_):
        m = model.update_params(young_modulus=E, density=rho, length=L)
        return _tip_objective(m, u_, tau_, w)

    p = model.params
    args = (p.young_modulus, p.density, p.length, u, tau)
    f = jax.jit(objective)
    derivative = (jax.grad if mode == "reverse" else jax.jacfwd)(objective, argnums=(0, 1, 2, 3, 4))
    grads = jax.jit(derivative)(*args)
    for i, g in enumerate(grads):
        x = np.asarray(args[i], dtype=float)
        fd = np.zeros_like(x)
        for j in range(x.size):
            h = 1e-6 * max(abs(x.flat[j]), 1e-3)
            xp, xm = x.copy(), x.copy()
            xp.flat[j] += h
            xm.flat[j] -= h
            ap, am = list(args), list(args)
            ap[i], am[i] = jnp.asarray(xp), jnp.asarray(xm)
            fd.flat[j] = (f(*ap) - f(*am)) / (2 * h)
        assert np.max(np.abs(fd)) > 0, f"argument {i}: the objective does not depend on it"
        np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-6 * np.max(np.abs(fd)), err_msg=f"argument {i}")


def test_equilibrium_is_where_a_damped_rollout_comes_to_rest(spatial_arm):
    """The root found by Newton is the state the dynamics settle to: tensions held from rest,
    damping raised to about critical for the first bending mode, 3 s."""
    model = spatial_arm.update_params(damping=spatial_arm.params.damping * 0 + 3e3)
    u = jnp.asarray(np.random.default_rng(2).uniform(0.0, 0.3, model.num_actuators))
    q_star = eqx.filter_jit(lambda m, u_: m.static_equilibrium(u_))(model, u)
    traj = eqx.filter_jit(
        lambda m, u_: (
            sg.sim.rollout_to(
                m, m.zero_state(), 3.0, u=u_, solver=sg.sim.LinearTrapezoid(m), solver_dt=1e-3, save_dt=1.0
            ).ys
        )
    )(model, u)
    q_end, qd_end = model.split_state(traj[-1])
    assert float(jnp.max(jnp.abs(q_star))) > 0.5  # a real bend, not the rest configuration
    assert float(jnp.max(jnp.abs(qd_end))) < 1e-5
    np.testing.assert_allclose(q_end, q_star, rtol=0, atol=1e-6)


def test_vmap_over_efforts_and_same_shape_updates_do_not_recompile(planar_arm):
    model = planar_arm
    us = jnp.asarray(np.random.default_rng(0).uniform(0.0, 0.2, (4, model.num_actuators)))
    traces = []

    def equilibria(m, u_batch):
        traces.append(1)
        return jax.vmap(m.static_equilibrium)(u_batch)

    batched = eqx.filter_jit(equilibria)
    qs = batched(model, us)
    for k in range(4):
        assert float(jnp.max(jnp.abs(static_residual(model, qs[k], us[k])))) <= 1e-9
    stiffer = model.update_params(young_modulus=model.params.young_modulus * 1.5)
    qs_stiff = batched(stiffer, us)
    assert len(traces) == 1
    assert float(jnp.max(jnp.abs(static_residual(stiffer, qs_stiff[0], us[0])))) <= 1e-9


def test_bad_input_names_the_argument(planar_arm):
    n, m = planar_arm.num_dofs, planar_arm.num_actuators
    with pytest.raises(ValueError, match="u: expected shape"):
        planar_arm.static_equilibrium(jnp.zeros(m + 1))
    with pytest.raises(ValueError, match="tau_ext: expected shape"):
        planar_arm.static_equilibrium(None, jnp.zeros(n + 2))
    with pytest.raises(ValueError, match="q0: expected shape"):
        planar_arm.static_equilibrium(q0=jnp.zeros(1))
    with pytest.raises(ValueError, match="ramp_steps"):
        planar_arm.static_equilibrium(ramp_steps=-1)


def test_non_convergence_is_reported_only_after_newton_at_the_full_load(planar_arm):
    """The loop counts as converged only on a full-load Newton step below the tolerance:
    one such step after the continuation is too few for a loaded arm (the check fails; under
    the tests' ``EQX_ON_ERROR=nan`` the solution is NaN), ``throw=False`` returns that
    iterate, and the default budget converges to the same equilibrium."""
    assert os.environ.get("EQX_ON_ERROR") == "nan"  # set in conftest.py
    u = jnp.full(planar_arm.num_actuators, 2.0)

    @jax.jit
    def solve(u_):
        return (
            planar_arm.static_equilibrium(u_, max_steps=1),
            planar_arm.static_equilibrium(u_, max_steps=1, throw=False),
            planar_arm.static_equilibrium(u_),
        )

    one_step, unchecked, converged = solve(u)
    assert np.all(np.isnan(np.asarray(one_step)))
    assert np.all(np.isfinite(np.asarray(unchecked)))
    assert np.abs(np.asarray(static_residual(planar_arm, converged, u))).max() < 1e-9
    np.testing.assert_allclose(unchecked, converged, atol=1e-3)  # one step short, close already


def test_default_tolerances_follow_the_float_type():
    """A float32 model converges with the default tolerances (float64's 1e-10 is below
    float32 rounding) and agrees with its float64 twin to float32 accuracy."""
    solutions = {}
    for dtype in (jnp.float32, jnp.float64):
        params = sg.RodParams.create(length=[0.1, 0.1], radius=0.01, density=1000.0, young_modulus=1e6, dtype=dtype)
        model = sg.PCS(params, active_strains="bending")
        tau = jnp.full(model.num_dofs, 1e-3, dtype)
        solutions[dtype] = np.asarray(jax.jit(lambda m, t: m.static_equilibrium(None, t))(model, tau))
    assert solutions[jnp.float32].dtype == np.float32 and np.all(np.isfinite(solutions[jnp.float32]))
    np.testing.assert_allclose(solutions[jnp.float32], solutions[jnp.float64], rtol=2e-5)


def test_dead_tip_moment_bends_a_uniform_rod_into_the_closed_form_arc():
    """A dead moment ``M`` about ``-y`` at the tip of a uniform horizontal rod (bending
    only): constant curvature ``M / (E I)`` about ``-y``, the tip on the circle
    ``(sin(k L), 0, 1 - cos(k L)) / k`` (1e-10), ``dq*/dM = -1 / (E I)`` by implicit
    differentiation (1e-9); a force on it: the residual with its Jacobian-transposed load
    vanishes; bad shapes name the argument."""
    E, r, L = 2e5, 0.02, 0.4
    params = sg.GVSParams.create(
        length=[L], radius=r, density=1000.0, young_modulus=E, gravity=[0.0, 0.0, 0.0], mounting="horizontal",
        dtype=jnp.float64,
    )  # fmt: skip
    model = sg.GVS(params, sg.StrainBasis.create(("ky",), 0))
    EI = E * np.pi * r**4 / 4
    s_tip = jnp.asarray([L])

    @jax.jit
    def solve(wrench, direction):
        """The equilibrium and tip position under the tip wrench ``(1, 6)``, and the
        derivative of the equilibrium along ``direction`` (one compiled program for both
        loads below)."""

        def at(w):
            q = model.static_equilibrium(point_wrenches=(s_tip, w))
            return q, model.forward_kinematics(q, L)[:3, 3]

        (q, tip), (dq, _) = jax.jvp(at, (wrench,), (direction,))
        return q, tip, dq

    M = 0.8 * EI / L  # bends the rod through 0.8 rad
    about_minus_y = jnp.zeros((1, 6)).at[0, 1].set(-1.0)
    q, tip, dq = solve(M * about_minus_y, about_minus_y)
    k = M / EI
    np.testing.assert_allclose(q, [-k], rtol=1e-10)
    np.testing.assert_allclose(tip, [np.sin(k * L) / k, 0.0, (1 - np.cos(k * L)) / k], atol=1e-10 * L)
    np.testing.assert_allclose(dq, [-1.0 / EI], rtol=1e-9)
    wrench = jnp.asarray([[0.0, 0.0, 0.0, 0.0, 0.0, 0.05]])
    q = solve(wrench, jnp.zeros_like(wrench))[0]
    residual = jax.jit(lambda q_, w: static_residual(model, q_, jnp.zeros(1), None, (s_tip, w)))
    assert np.abs(residual(q, wrench)).max() < 1e-12
    with pytest.raises(ValueError, match="point_wrenches"):
        model.static_equilibrium(point_wrenches=(s_tip, jnp.zeros((1, 3))))
