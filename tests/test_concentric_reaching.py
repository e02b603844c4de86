"""``ConcentricTubeReaching-v0`` beyond the shared env contract: drive increments keep the
tubes nested, every state the env holds is a stable equilibrium of its driven robot, the
static sensitivity of the tip to the drives matches finite differences of equilibria, and
the quasi-static expert reaches the goals."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sorogym
import sorogym as sg
from sorogym.control import static_drive_sensitivity
from sorogym.envs.concentric_tube_reaching import nested_tips
from sorogym.sim import overdamped_step

NAME = "ConcentricTubeReaching-v0"


@functools.cache
def _env():
    env = sorogym.make(NAME)
    return env, jax.jit(env.reset), jax.jit(env.step)


def _tips(env, u):
    return np.asarray(env.model.params.length) + np.asarray(u)[..., env.num_tubes :]


def test_nested_tips_moves_the_least():
    lengths = jnp.array([0.6, 0.4, 0.05])
    np.testing.assert_allclose(nested_tips(jnp.array([0.5, 0.3, 0.04]), lengths, 0.005, 0.005), [0.5, 0.3, 0.04])
    # the outer tube pulled back past the plate, the middle one beyond the inner one and its length
    np.testing.assert_allclose(
        nested_tips(jnp.array([0.2, 0.45, -0.01]), lengths, 0.005, 0.005), [0.405, 0.4, 0.005], atol=1e-12
    )


def test_drive_increments_rotate_the_precurved_tubes_and_keep_the_tips_nested():
    env, reset, _ = _env()
    c, T = env.config, env.num_tubes
    ps = reset(jax.random.PRNGKey(0)).pipeline_state
    command = jax.jit(lambda ps, a: env.command(env.model, ps, a))
    u1 = np.asarray(command(ps, jnp.ones(env.action_size, jnp.float32)))
    u0 = np.asarray(ps.u)
    np.testing.assert_allclose(u1[:2] - u0[:2], c.max_rotation_step, rtol=1e-5)
    assert u1[2] == u0[2]  # the straight outer tube does not turn
    lengths = np.asarray(env.model.params.length)
    for sign in (1.0, -1.0):  # drive every insertion to its limit
        for _ in range(150):
            ps = ps.replace(u=command(ps, jnp.full(env.action_size, sign, jnp.float32)))
        tips = _tips(env, ps.u)
        assert np.all(tips <= lengths + 1e-6) and tips[-1] >= c.min_exposed_length - 1e-6
        assert np.all(tips[:-1] - tips[1:] >= c.min_tip_spacing - 1e-6), tips
    np.testing.assert_allclose(tips, [0.015, 0.01, 0.005], atol=1e-6)  # fully retracted and still nested
    assert np.asarray(ps.u)[T:].max() <= 0.0


def test_bank_and_stepped_states_are_stable_equilibria():
    """Every bank row is a stable equilibrium (no elastic residual, positive definite
    tangent stiffness) with its stored tip; after a step under a random action the robot
    is again at an equilibrium of its new drives."""
    env, reset, step = _env()
    n, T = env.model.num_dofs, env.num_tubes
    bank = jnp.asarray(env.goal_bank[:24])

    @jax.jit
    @jax.vmap
    def check(row):
        model, _ = env.actuated(env.model, row[3 : 3 + 2 * T])
        q = row[3 + 2 * T :]
        eig = jnp.linalg.eigvalsh(model.tangent_stiffness(q))
        return jnp.linalg.norm(model.elastic_force(q)), eig[0] / eig[-1], env.tip_position(model, q)

    residual, stability, tips = check(bank)
    scale = float(jnp.linalg.norm(jax.jit(lambda: env.model.elastic_force(jnp.zeros(n, env.dtype)))()))
    assert np.all(np.asarray(residual) < 1e-3 * scale), residual
    assert np.all(np.asarray(stability) > 0), stability
    np.testing.assert_allclose(np.asarray(tips), np.asarray(bank[:, :3]), atol=1e-6)
    assert np.all(np.ptp(np.asarray(env.goal_bank)[:, :3], axis=0) > 0.25)  # goals spread over the workspace
    s = reset(jax.random.PRNGKey(1))
    rng = np.random.default_rng(1)
    for _ in range(5):
        s = step(s, jnp.asarray(rng.uniform(-1, 1, env.action_size), jnp.float32))
    ps = s.pipeline_state
    model = env.episode_model(ps)
    assert float(jax.jit(lambda q: jnp.linalg.norm(model.elastic_force(q)))(ps.q)) < 1e-2 * scale


def test_static_drive_sensitivity_matches_finite_differences_of_equilibria():
    """The tip's sensitivity to the rotations and insertions (implicit function theorem plus
    the drives' direct effect), float64, against central differences of equilibria relaxed
    by the overdamped scheme."""
    robot = sg.robots.concentric_tube_robot(bending_order=1, twist_order=2, num_gauss_points=3, dtype=jnp.float64)
    n = robot.num_dofs
    drive = lambda p: robot.update_params(rotation=jnp.stack([p[0], p[1], 0.0]), translation=p[2:])  # noqa: E731
    tip = lambda model, q: model.forward_kinematics(q, model.total_length)[:3, 3]  # noqa: E731

    @jax.jit
    def equilibrium(p, q):
        model = drive(p)
        unforced = lambda q, qd: jnp.zeros_like(qd)  # noqa: E731
        y = jax.lax.fori_loop(0, 60, lambda _, y: overdamped_step(model, y, unforced, 0.05), model.pack_state(q, q))
        q = model.split_state(y)[0]
        return q, tip(model, q), jnp.linalg.norm(model.elastic_force(q))

    p = jnp.array([1.3, -0.4, -0.12, -0.08, -0.02])
    q, _, residual = equilibrium(p, jnp.zeros(n))
    assert float(residual) < 1e-10
    x, S = jax.jit(lambda p, q: static_drive_sensitivity(drive, q, p, tip))(p, q)
    eps = jnp.array([1e-5, 1e-5, 1e-6, 1e-6, 1e-6])
    fd = np.stack(
        [
            (equilibrium(p + e, q)[1] - equilibrium(p - e, q)[1]) / (2 * e.sum())
            for e in (jnp.diag(eps)[k] for k in range(5))
        ],
        axis=1,
    )
    np.testing.assert_allclose(np.asarray(S), fd, rtol=1e-4, atol=1e-6 * np.abs(fd).max())


def test_quasi_static_expert_reaches_the_goals():
    from sorogym.agents.evaluate import evaluate_policy

    env = _env()[0]
    result = evaluate_policy(env, env.expert(), num_episodes=8, seed=3, episode_length=40, policy_input="state")
    assert result["final/success"] >= 0.75, result
    assert result["final/goal_distance"] < 0.02, result


def test_obstacles_are_a_penetration_cost():
    """An obstacle around the base plate: the straight outer tube's first probe (the plate
    centre) lies on its centre, so the penetration is its radius, in the metric, the reward
    term and the cost; without obstacles all three are zero."""
    env = sorogym.make(NAME, obstacle_centers=((0.0, 0.0, 0.0),), obstacle_radii=(0.01,))
    s = jax.jit(env.reset)(jax.random.PRNGKey(0))
    assert float(s.metrics["penetration"]) == pytest.approx(0.01, abs=1e-6)
    assert float(s.info["cost"]) == 1.0
    s1 = jax.jit(env.step)(s, jnp.zeros(env.action_size, jnp.float32))
    assert float(s1.metrics["reward/clearance"]) == pytest.approx(-env.config.reward.scales.clearance * 0.01, rel=1e-4)
    assert len(env.render_scene(jax.tree.map(np.asarray, s1.pipeline_state))["spheres"]) == 1
    free, reset, step = _env()
    s = step(reset(jax.random.PRNGKey(0)), jnp.zeros(free.action_size, jnp.float32))
    assert float(s.metrics["penetration"]) == 0.0 and float(s.info["cost"]) == 0.0
    assert float(s.metrics["reward/clearance"]) == 0.0


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"integrator": "trapezoid"}, "integrator"),
        ({"rotated_tubes": (0, 0)}, "rotated_tubes"),
        ({"rotated_tubes": (3,)}, "rotated_tubes"),
        ({"min_tip_spacing": 0.3}, "min_tip_spacing"),
        ({"max_rotation_step": -0.1}, "max_rotation_step"),
        ({"num_goal_candidates": 0}, "num_goal_candidates"),
        ({"obstacle_centers": ((0.0, 0.0),), "obstacle_radii": (0.01,)}, "obstacle_centers"),
        ({"obstacle_centers": ((0.0, 0.0, 0.1),), "obstacle_radii": (-0.01,)}, "obstacle_radii"),
    ],
)
def test_bad_configuration_names_the_field(overrides, field):
    with pytest.raises(ValueError, match=field):
        sorogym.make(NAME, **overrides)
