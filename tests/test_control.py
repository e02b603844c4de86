"""Control layer: projections against a generic QP solver, the control-affine split and
output derivatives against the dynamics, HOCLF/HOCBF conditions, the static tip
sensitivity against solved equilibria, and every env's experts against a random policy."""

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _models import build_case, random_state
from scipy.optimize import minimize

import sorogym
import sorogym as sg
from sorogym.agents.evaluate import episode_statistics, rollout_arrays
from sorogym.control import (
    SecondOrderGains,
    clf_cbf_control,
    control_affine_dynamics,
    project_halfspace,
    project_halfspace_box,
    quasi_static_tension_control,
    second_order_halfspace,
    second_order_output,
    static_equilibrium,
    static_tip_sensitivity,
    tip_distance,
)

# -- projections (eqs. 52, 54) -------------------------------------------------------------


def _qp(v, w, beta, sense, bounds=None):
    """Reference: SLSQP on min |u - v|^2 subject to the half-space (and box)."""
    sign = 1.0 if sense == ">=" else -1.0
    cons = [{"type": "ineq", "fun": lambda u: sign * (w @ u - beta), "jac": lambda u: sign * w}]
    res = minimize(
        lambda u: np.sum((u - v) ** 2),
        np.clip(v, *bounds) if bounds else v,
        jac=lambda u: 2 * (u - v),
        constraints=cons,
        bounds=None if bounds is None else [bounds] * len(v),
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 500},
    )
    assert res.success, res.message
    return res.x


@pytest.mark.parametrize("sense", [">=", "<="])
def test_halfspace_projections_match_a_qp_solver(sense):
    rng = np.random.default_rng(0)
    V, W = rng.normal(size=(12, 5)), rng.normal(size=(12, 5))
    B = rng.normal(size=12) * 2
    closed = jax.jit(jax.vmap(lambda v, w, b: project_halfspace(v, w, b, sense)))(V, W, B)
    lo, hi = -0.7, 1.3
    boxed = jax.jit(jax.vmap(lambda v, w, b: project_halfspace_box(v, w, b, jnp.full(5, lo), jnp.full(5, hi), sense)))(
        V, W, B
    )
    for k in range(12):
        np.testing.assert_allclose(closed[k], _qp(V[k], W[k], B[k], sense), atol=1e-6)
        # keep instances whose half-space meets the box
        best = np.where((W[k] > 0) == (sense == ">="), hi, lo)
        if (W[k] @ best - B[k]) * (1 if sense == ">=" else -1) > 1e-3:
            np.testing.assert_allclose(boxed[k], _qp(V[k], W[k], B[k], sense, (lo, hi)), atol=1e-6)


def test_projection_edge_cases_and_bad_sense():
    v = jnp.array([0.3, -0.2])
    np.testing.assert_array_equal(project_halfspace(v, jnp.zeros(2), 1.0), v)  # degenerate w: unchanged
    np.testing.assert_array_equal(project_halfspace(v, jnp.array([1.0, 0.0]), -1.0), v)  # already feasible
    # infeasible with the box: the box corner closest to feasibility
    out = project_halfspace_box(v, jnp.array([1.0, 1.0]), 10.0, jnp.zeros(2), jnp.ones(2))
    np.testing.assert_allclose(out, [1.0, 1.0])
    with pytest.raises(ValueError, match="sense"):
        project_halfspace(v, v, 0.0, ">")


def test_second_order_gains_validate():
    g = SecondOrderGains.critically_damped(3.0)
    assert (g.k0, g.k1) == (9.0, 6.0)
    with pytest.raises(ValueError, match="k0"):
        SecondOrderGains(k0=-1.0, k1=1.0)
    with pytest.raises(ValueError, match="natural_frequency"):
        SecondOrderGains.critically_damped(0.0)


# -- control-affine form and output derivatives ---------------------------------------------


@pytest.fixture(scope="module")
def arm():
    return build_case("pcs1_all_tendons", seed=3)


def _rk4(model, y, u, tau, h):
    f = lambda y_: model.forward_dynamics(0.0, y_, (u, tau))  # noqa: E731
    k1 = f(y)
    k2 = f(y + 0.5 * h * k1)
    k3 = f(y + 0.5 * h * k2)
    k4 = f(y + h * k3)
    return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def test_control_affine_split_and_output_derivatives(arm):
    rng = np.random.default_rng(1)
    q, qd = random_state(arm, rng, 0.3)
    y = jnp.concatenate([q, qd])
    u = jnp.asarray(rng.uniform(0.0, 0.5, arm.num_actuators))  # tendons pull: the affine range
    tau = jnp.asarray(rng.normal(size=arm.num_dofs) * 1e-3)
    affine = jax.jit(control_affine_dynamics)(arm, y, tau)
    np.testing.assert_allclose(
        affine.drift + affine.input_matrix @ u, arm.forward_dynamics(0.0, y, (u, tau)), rtol=1e-10, atol=1e-10
    )
    assert np.all(affine.input_matrix[: arm.num_dofs] == 0)

    # a moving target: h = |x_tip(q) - (p0 + v t)|; hdd by central differences in time
    p0, vel = jnp.array([0.05, -0.02, 0.3]), jnp.array([0.2, 0.1, -0.1])
    h = tip_distance(arm, lambda t: p0 + vel * t)
    out = jax.jit(lambda y_: second_order_output(h, y_, 0.0, affine))(y)
    dt = 2e-5
    step = jax.jit(lambda y_, s: _rk4(arm, y_, u, tau, s))
    y_p, y_m = step(y, dt), step(y, -dt)
    n = arm.num_dofs
    hs = [float(h(y_m[:n], -dt)), float(h(y[:n], 0.0)), float(h(y_p[:n], dt))]
    np.testing.assert_allclose(out.h, hs[1], rtol=1e-12)
    np.testing.assert_allclose(out.hd, (hs[2] - hs[0]) / (2 * dt), rtol=1e-5)
    np.testing.assert_allclose(out.drift_term + out.input_gain @ u, (hs[2] - 2 * hs[1] + hs[0]) / dt**2, rtol=1e-3)


def test_clf_input_is_minimum_norm_and_barrier_takes_priority(arm):
    rng = np.random.default_rng(2)
    q, _ = random_state(arm, rng, 0.3)
    y = jnp.concatenate([q, jnp.zeros_like(q)])  # at rest: Vd = 0
    clf = tip_distance(arm, lambda t: jnp.array([0.3, 0.3, 0.0]))
    gains = SecondOrderGains.critically_damped(4.0)
    # a barrier against the CLF: the distance may shrink by at most 1 mm, approached slowly,
    # while the CLF asks for Vdd = -16 V
    v0 = float(clf(q, 0.0))

    def barrier(q_, t):
        return clf(q_, t) - (v0 - 1e-3)

    bgains = SecondOrderGains.critically_damped(0.5)

    @jax.jit
    def run(y_):
        affine = control_affine_dynamics(arm, y_)
        u_clf, _ = clf_cbf_control(arm, 0.0, y_, clf, gains, affine=affine)
        u_safe, info = clf_cbf_control(arm, 0.0, y_, clf, gains, barrier, bgains, affine=affine)
        wv, bv = second_order_halfspace(second_order_output(clf, y_, 0.0, affine), gains)
        wb, bb = second_order_halfspace(second_order_output(barrier, y_, 0.0, affine), bgains)
        return u_clf, u_safe, wv, bv, wb, bb

    u_clf, u_safe, wv, bv, wb, bb = run(y)
    assert bv < 0  # the zero input violates the CLF condition: minimum norm lies on the boundary along w
    np.testing.assert_allclose(wv @ u_clf, bv, rtol=1e-9)
    np.testing.assert_allclose(u_clf, wv * (bv / (wv @ wv)), rtol=1e-9)
    assert wb @ u_clf < bb  # the nominal CLF input is unsafe ...
    np.testing.assert_allclose(wb @ u_safe, bb, rtol=1e-9)  # ... the safe one sits on the barrier
    with pytest.raises(ValueError, match="cbf_gains"):
        clf_cbf_control(arm, 0.0, y, clf, gains, barrier)


def test_static_tip_sensitivity_matches_solved_equilibria():
    env = sorogym.make("TendonReaching-v0", dtype="float64")
    model = env.model
    u = jnp.array([1.0, 0.5, 0.2, 0.3, 0.8, 0.1])
    solve = jax.jit(lambda u_, q_: static_equilibrium(model, q_, u_, 12))
    q = solve(u, jnp.zeros(model.num_dofs))
    residual = model.potential_force(q) - model.actuation_force(q, u)
    assert np.max(np.abs(residual)) < 1e-10
    x, S = jax.jit(lambda q_, u_: static_tip_sensitivity(model, q_, u_))(q, u)
    tip = jax.jit(lambda u_: model.forward_kinematics(solve(u_, q), model.total_length)[:3, 3])
    d = 1e-5
    fd = np.stack([(tip(u.at[i].add(d)) - tip(u.at[i].add(-d))) / (2 * d) for i in range(6)], axis=1)
    np.testing.assert_allclose(S, fd, rtol=1e-5, atol=1e-9)
    # one full undamped step (gain 1) from this equilibrium to a nearby reachable point lands
    # on it to first order
    target = tip(u + 0.01)
    step = jax.jit(
        lambda q_, u_, x_: quasi_static_tension_control(
            model, q_, u_, x_, jnp.zeros(6), jnp.full(6, 6.0), gain=1.0, damping=1e-14
        )
    )
    u_new = step(q, u, target)
    assert np.linalg.norm(tip(u_new) - target) < 0.05 * np.linalg.norm(target - x)


# -- experts ----------------------------------------------------------------------------------

# (env, expert kind, metric, steps): experts must beat a uniform random policy by a wide margin
EXPERT_CASES = [
    ("TendonTracking-v0", "quasi_static", "tracking_error", 30),
    ("TendonReaching-v0", "actuation_space", "goal_distance", 20),
    ("ContactSafeReaching-v0", "hoclf_hocbf", "goal_distance", 40),
    ("StrainTracking-v0", "computed_torque", "tracking_error", 50),
    ("PoseTracking-v0", "impedance", "position_error", 50),
]


@pytest.mark.parametrize("name,kind,metric,steps", EXPERT_CASES, ids=[c[0] for c in EXPERT_CASES])
def test_experts_beat_a_random_policy(name, kind, metric, steps):
    # one compiled rollout of 8 episodes: the expert acts in the first 4, a uniform random
    # policy in the last 4
    env = sorogym.make(name)
    expert_policy = env.expert(kind)

    def side_by_side(states, key):
        a_expert, _ = expert_policy(states, key)
        a_random = jax.random.uniform(key, a_expert.shape, a_expert.dtype, -1.0, 1.0)
        return jnp.where(jnp.arange(8)[:, None] < 4, a_expert, a_random), {}

    rewards, alive, metrics, costs = rollout_arrays(
        env, side_by_side, 8, seed=7, episode_length=steps, policy_input="state"
    )
    expert, rand = (
        episode_statistics(
            rewards[:, cols],
            alive[:, cols],
            {k: v[:, cols] for k, v in metrics.items()},
            None if costs is None else costs[:, cols],
        )
        for cols in (slice(0, 4), slice(4, 8))
    )
    assert expert[f"final/{metric}"] < 0.5 * rand[f"final/{metric}"], (expert, rand)
    assert expert["return_mean"] > rand["return_mean"]
    if "max/peak_contact_force" in expert:
        assert expert["max/peak_contact_force"] <= env.config.force_bound


def test_expert_on_the_gymnasium_face_and_bad_kinds():
    env = gymnasium.make("sorogym/TendonReaching-v0")
    expert = env.unwrapped.jax_env.expert()
    with pytest.raises(RuntimeError, match="reset"):
        expert.gym_action(env)
    _, info = env.reset(seed=3)
    first = info["goal_distance"]
    for _ in range(12):
        action = expert.gym_action(env)
        assert action.shape == env.action_space.shape and env.action_space.contains(action)
        _, _, _, _, info = env.step(action)
    assert info["goal_distance"] < 0.3 * first
    with pytest.raises(ValueError, match="expert kind"):
        sg.make("TendonReaching-v0").expert("pid")
