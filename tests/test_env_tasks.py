"""Layer 6: task-specific semantics (reward formulas, goal feasibility, goal orientation)."""

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sorogym
from sorogym.envs._common import axis_angle_between, tip_axis
from sorogym.envs.goals import equilibrium_goal_bank


@pytest.fixture(scope="module")
def reaching_oriented():
    return sorogym.make("TendonReaching", goal_orientation=True, dtype="float64")


@pytest.fixture(scope="module")
def bank(reaching_oriented):
    env = reaching_oriented
    return equilibrium_goal_bank(env.model, jax.random.PRNGKey(7), 6, env.config.max_tension, iterations=25, ramp=10)


def test_axis_angle_between_is_accurate_near_zero_and_pi():
    a = jnp.array([1.0, 0.0, 0.0])
    for angle in (0.0, 1e-7, 0.3, np.pi - 1e-7, np.pi):
        b = jnp.array([np.cos(angle), np.sin(angle), 0.0])
        assert float(axis_angle_between(a, b)) == pytest.approx(angle, abs=1e-12)


def test_tip_axis_is_the_backbone_tangent(reaching_oriented):
    model = reaching_oriented.model
    q = jnp.asarray(np.random.default_rng(0).normal(0, 5, model.num_dofs) * np.tile([1, 1, 0.02], 2))
    L = model.total_length
    dp = jax.jit(jax.jacfwd(lambda s: model.forward_kinematics(q, s)[:3, 3]))(L)
    np.testing.assert_allclose(jax.jit(lambda q_: tip_axis(model, q_))(q), dp / jnp.linalg.norm(dp), atol=1e-10)


def test_goal_bank_entries_are_static_equilibria(reaching_oriented, bank):
    model = reaching_oriented.model
    tips, axes, q, u = bank
    assert tips.shape[0] >= 3
    S = model.stiffness_matrix()

    @jax.jit
    @jax.vmap
    def residual_and_tip(qk, uk):
        r = model.actuation_force(qk, uk) - model.gravitational_force(qk) - S @ qk
        return jnp.linalg.norm(r), model.forward_kinematics(qk, model.total_length)[:3, 3]

    res, tip = residual_and_tip(jnp.asarray(q), jnp.asarray(u))
    assert np.all(np.asarray(res) < 1e-6)
    np.testing.assert_allclose(tip, tips, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(axes, axis=-1), 1.0, atol=1e-12)


def test_goal_orientation_success_needs_position_and_direction(reaching_oriented, bank):
    env = reaching_oriented
    tips, axes, q, _ = bank
    s = jax.jit(env.reset)(jax.random.PRNGKey(0))
    assert s.obs.shape == (36,) and env.observation_size == 36
    metrics = jax.jit(lambda ps: env.outputs(env.model, None, ps, None).metrics)
    ps = s.pipeline_state
    assert {f.name for f in dataclasses.fields(ps.task)} == {"goal", "goal_axis", "goal_configuration"}
    # the goal's equilibrium configuration (the actuation-space expert's setpoint) puts the tip on the goal
    pose = jax.jit(lambda q_: env.model.forward_kinematics(q_, env.model.total_length))(ps.task.goal_configuration)
    np.testing.assert_allclose(np.asarray(pose[:3, 3]), np.asarray(ps.task.goal), atol=1e-9)
    np.testing.assert_allclose(
        np.asarray(pose[:3, 0]) / np.linalg.norm(pose[:3, 0]), np.asarray(ps.task.goal_axis), atol=1e-9
    )
    at_goal = ps.replace(
        q=jnp.asarray(q[0]), task=ps.task.replace(goal=jnp.asarray(tips[0]), goal_axis=jnp.asarray(axes[0]))
    )
    m = metrics(at_goal)
    assert float(m["goal_distance"]) < 1e-9 and float(m["goal_angle"]) < 1e-6 and float(m["success"]) == 1.0
    # Same tip position, goal axis tilted by 20 degrees: no success, angle reported.
    c, sn = np.cos(np.deg2rad(20.0)), np.sin(np.deg2rad(20.0))
    perp = np.cross(axes[0], [0.0, 0.0, 1.0] if abs(axes[0][2]) < 0.9 else [1.0, 0.0, 0.0])
    perp /= np.linalg.norm(perp)
    tilted = c * axes[0] + sn * perp
    off = at_goal.replace(task=at_goal.task.replace(goal=jnp.asarray(tips[0]), goal_axis=jnp.asarray(tilted)))
    m = metrics(off)
    assert float(m["goal_angle"]) == pytest.approx(np.deg2rad(20.0), rel=1e-9)
    assert float(m["success"]) == 0.0
    out = env.outputs(env.model, off, off, jnp.zeros(env.action_size))
    terms = out.reward_terms
    assert float(terms["orientation"]) == pytest.approx(-np.deg2rad(20.0), rel=1e-9)
    # The observation ends with the tip axis and the goal axis.
    obs = np.asarray(out.obs)
    np.testing.assert_allclose(obs[-6:-3], np.asarray(tip_axis(env.model, off.q)), atol=1e-12)
    np.testing.assert_allclose(obs[-3:], tilted, atol=1e-12)


def test_without_goal_orientation_the_angle_is_ignored():
    env = sorogym.make("TendonReaching", dtype="float64")
    assert env.observation_size == 30
    s = jax.jit(env.reset)(jax.random.PRNGKey(1))
    ps = s.pipeline_state
    ps = ps.replace(task=ps.task.replace(goal=jnp.zeros(3), goal_axis=jnp.array([1.0, 0.0, 0.0])))
    m = jax.jit(lambda ps: env.outputs(env.model, None, ps, None).metrics)(ps)
    assert float(m["goal_angle"]) == 0.0


def test_tracking_reward_matches_the_paper_formula():
    env = sorogym.make("TendonTracking", dtype="float64")
    s = jax.jit(env.reset)(jax.random.PRNGKey(2))
    step = jax.jit(env.step)
    for _ in range(3):
        s = step(s, jnp.ones(env.action_size))
    ps = s.pipeline_state
    k = int(ps.steps)
    target, target_vel = ps.task.path[k], ps.task.path_velocity[k]

    def distance(t):  # distance along the state's instantaneous motion, as a function of time
        tip = env.model.forward_kinematics(ps.q + t * ps.qd, env.model.total_length)[:3, 3]
        return jnp.linalg.norm(tip - (target + t * target_vel))

    d, d_dot = jax.jit(lambda: jax.jvp(distance, (0.0,), (1.0,)))()
    d, d_dot = float(d), float(d_dot)
    assert d_dot != 0.0
    expected = -(d / 0.2 + max(d_dot, 0.0) / 0.3) + 1.5 * (d < 0.01)
    assert float(s.reward) == pytest.approx(expected, rel=1e-6)
    assert float(s.metrics["tracking_error"]) == pytest.approx(d, rel=1e-6)


def test_pose_tracking_reference_hold_and_configuration():
    env = sorogym.make("PoseTracking-v0")
    reset, step = jax.jit(env.reset), jax.jit(env.step)
    s = reset(jax.random.PRNGKey(2))
    task = s.pipeline_state.task
    lo, hi = env.config.period
    assert lo <= float(task.period) <= hi
    assert np.allclose(
        np.abs(np.asarray(task.amplitudes)) / np.array([0.08, 0.04]), np.abs(float(task.amplitudes[0])) / 0.08
    )
    # the figure starts at the straight arm's tip pose: zero error and success at reset
    assert float(s.metrics["position_error"]) < 1e-6 and float(s.metrics["orientation_error"]) < 1e-5
    assert float(s.metrics["success"]) == 1.0
    # a = 0 commands u_hold = G(0) + K(0): the straight arm stays where it is
    for _ in range(3):
        s = step(s, jnp.zeros(env.action_size, jnp.float32))
    assert float(jnp.max(jnp.abs(s.pipeline_state.q))) < 1e-5
    np.testing.assert_allclose(np.asarray(s.pipeline_state.u), np.asarray(task.hold))
    paper = sorogym.make("PoseTracking-v0", paper_reference=True)
    t0 = jax.jit(paper.reset)(jax.random.PRNGKey(2)).pipeline_state.task
    assert float(t0.period) == 4.0 and np.allclose(np.asarray(t0.amplitudes), [0.08, 0.04])
    with pytest.raises(ValueError, match="max_force"):
        sorogym.make("PoseTracking-v0", max_force=(1.0,) * 6)
    with pytest.raises(ValueError, match="period"):
        sorogym.make("PoseTracking-v0", period=(8.0, 4.0))
    with pytest.raises(ValueError, match="position_tolerance"):
        sorogym.make("PoseTracking-v0", position_tolerance=0.0)


def test_workspace_goals_are_reachable_equilibria_and_the_ik_expert_reaches_them():
    """``goal_sampling="workspace"``: every goal is the tip of a configuration held by
    admissible tensions (``A(q) u = G(q) + K q`` with ``0 <= u <= max_tension``; ``A`` is
    square here), spread over the box the random-tension equilibria span. The static-IK
    expert, given only the goal position, reaches them."""
    from sorogym.agents.evaluate import evaluate_policy

    env = sorogym.make("TendonReaching", goal_sampling="workspace", num_goal_candidates=8)
    model, c = env.model, env.config
    bank = np.asarray(env.goal_bank)
    n = model.num_dofs
    assert bank.shape == (8, 6 + n)

    @jax.jit
    @jax.vmap
    def check(row):
        q = row[6:]
        A = model.actuation_matrix(q)
        u = jnp.linalg.solve(A, model.potential_force(q))
        return u, model.forward_kinematics(q, model.total_length)[:3, 3]

    u, tips = check(jnp.asarray(bank))
    np.testing.assert_allclose(np.asarray(tips), bank[:, :3], atol=1e-5)
    assert np.all(np.asarray(u) > -1e-3 * c.max_tension) and np.all(np.asarray(u) < 1.001 * c.max_tension)
    with pytest.raises(ValueError, match="goal_sampling"):
        sorogym.make("TendonReaching", goal_sampling="uniform")
    # 30 of the 75 steps (2 s): the expert settles well within that
    result = evaluate_policy(
        env, env.expert("static_ik"), num_episodes=8, seed=3, episode_length=30, policy_input="state"
    )
    assert result["final/success"] >= 7 / 8, result
    assert result["final/goal_distance"] < 0.5 * c.success_radius


def test_conical_arm_goals_are_equilibria_and_the_quasi_static_expert_reaches_them():
    """``ConicalArmReaching-v0``: every goal is the tip of a stored configuration held by
    tensions in ``[0, max_tension]`` (two tendons for eight coordinates: the least-squares
    tensions leave no residual), and the quasi-static expert brings the tip within the
    success radius."""
    from sorogym.agents.evaluate import evaluate_policy

    env = sorogym.make("ConicalArmReaching-v0", num_goal_candidates=16)
    model, c = env.model, env.config
    bank = np.asarray(env.goal_bank)
    assert bank.shape == (16, 6 + model.num_dofs) and model.num_dofs == 8 and model.num_actuators == 2

    @jax.jit
    @jax.vmap
    def check(row):
        q = row[6:]
        A, f = model.actuation_matrix(q), model.potential_force(q)
        u = jnp.linalg.lstsq(A, f)[0]
        return (
            u,
            jnp.linalg.norm(A @ u - f) / jnp.linalg.norm(f),
            model.forward_kinematics(q, model.total_length)[:3, 3],
        )

    u, residual, tips = check(jnp.asarray(bank))
    np.testing.assert_allclose(np.asarray(tips), bank[:, :3], atol=1e-5)
    assert np.all(np.asarray(residual) < 1e-3), residual
    assert np.all(np.asarray(u) > -1e-3 * c.max_tension) and np.all(np.asarray(u) < 1.001 * c.max_tension)
    spread = np.ptp(bank[:, :2], axis=0)
    assert np.all(spread > 0.03), spread  # goals cover the sheet, not one point
    result = evaluate_policy(env, env.expert(), num_episodes=4, seed=3, episode_length=45, policy_input="state")
    assert result["final/success"] == 1.0 and result["final/goal_distance"] < 0.5 * c.success_radius, result
    with pytest.raises(ValueError, match="goal_sampling"):
        sorogym.make("ConicalArmReaching-v0", goal_sampling="workspace")
    with pytest.raises(ValueError, match="damping"):
        sorogym.make("ConicalArmReaching-v0", damping=-1.0)


def test_soft_pendulum_rewards_observation_and_the_swing_up_expert():
    """``SoftPendulumSwingUp-v0``: the observation wraps the pivot angle, the reward terms
    follow their formulas, the torque bound is below the static lifting torque (so the
    swing must be pumped), and the energy-pumping + LQR expert swings the pendulum up and
    balances it; its discrete LQR alone holds it from 0.2 rad off upright."""
    from sorogym.agents.evaluate import evaluate_policy
    from sorogym.robots import soft_pendulum_tip

    env = sorogym.make("SoftPendulumSwingUp-v0")
    c, model = env.config, env.model
    assert env.observation_size == 16 and env.action_size == 1
    reset, step = jax.jit(env.reset), jax.jit(env.step)
    s0 = reset(jax.random.PRNGKey(0))
    f32 = functools.partial(jnp.asarray, dtype=jnp.float32)
    q = f32([jnp.pi + 2 * jnp.pi + 0.1, 0.2, -0.1, 0.05])  # one turn plus 0.1 rad past upright
    qd = f32([0.3, -0.2, 0.1, 0.0])
    s = s0.replace(pipeline_state=s0.pipeline_state.replace(q=q, qd=qd))
    s1 = step(s, f32([0.4]))
    ps = s1.pipeline_state
    np.testing.assert_allclose(np.asarray(s1.obs[:2]), [np.cos(ps.q[0]), np.sin(ps.q[0])], atol=1e-6)
    tip = soft_pendulum_tip(model, ps.q)
    np.testing.assert_allclose(float(s1.metrics["tip_height"]), float(tip[2]) / c.length, rtol=1e-5)
    np.testing.assert_allclose(float(s1.metrics["reward/effort"]), -c.reward.scales.effort * 0.4**2, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(ps.u), [0.4 * c.max_torque], rtol=1e-6)
    # a quasi-static lift within the bound stalls: holding the straight pendulum at 90 degrees
    # takes m g L / 2, more than twice the bound
    hold = float(model.gravitational_force(f32([jnp.pi / 2, 0.0, 0.0, 0.0]))[0])
    assert abs(hold) > 2 * c.max_torque
    # the LQR alone (the expert near upright) balances from 0.2 rad off
    act = jax.jit(env.expert().act)
    s = s0.replace(pipeline_state=s0.pipeline_state.replace(q=f32([jnp.pi + 0.2, 0, 0, 0]), qd=f32([0, 0, 0, 0])))
    for _ in range(50):
        s = step(s, act(s))
    assert float(s.metrics["success"]) == 1.0 and float(s.metrics["tip_height"]) > 0.999
    # swing-up from hanging: every episode ends balanced upright
    result = evaluate_policy(env, env.expert(), num_episodes=4, seed=1, policy_input="state")
    assert result["final/success"] == 1.0, result
    with pytest.raises(ValueError, match="max_torque"):
        sorogym.make("SoftPendulumSwingUp-v0", max_torque=0.0)
    with pytest.raises(ValueError, match="success_height"):
        sorogym.make("SoftPendulumSwingUp-v0", success_height=1.5)
