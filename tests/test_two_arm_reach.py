"""TwoArmReach-v0's own pieces: targets reachable together, the contact between the arms
(a conservative force of the planar probes; arms that press into each other do not pass
through), the inverse-kinematics expert and the multi-agent view (one agent per arm)."""

from __future__ import annotations

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import sorogym
from sorogym.contact import ArmPairContact
from sorogym.env import LimbAgents

NAME = "TwoArmReach-v0"


@pytest.fixture(scope="module")
def env():
    return sorogym.make(NAME)


def test_targets_are_tips_of_collision_free_configurations(env):
    c = env.config
    states = jax.jit(jax.vmap(env.reset))(jax.random.split(jax.random.PRNGKey(0), 256))
    targets = np.asarray(states.pipeline_state.task.targets)  # (256, 2, 2)
    assert np.all(np.linalg.norm(targets[:, 0] - targets[:, 1], axis=-1) >= c.target_separation - 1e-6)
    assert np.all(targets[..., 0] >= c.target_min_x - 1e-6)
    bases = np.asarray(env.model.robot.mounts[:, 1:])
    assert np.all(np.linalg.norm(targets - bases, axis=-1) <= env.arm_length + 1e-6)
    # the workspaces overlap: about a third of the episodes put a target on the other arm's side
    crossed = np.mean((targets[:, 0, 1] < 0.0) | (targets[:, 1, 1] > 0.0))
    assert 0.2 < crossed < 0.5
    assert np.all(np.asarray(states.pipeline_state.q) == 0.0)  # straight and at rest


def test_arm_contact_is_the_gradient_of_its_penalty_energy(env):
    """Undamped contact between arm 0's probes and arm 1's chain, not looked ahead: the
    generalized force is minus the gradient of ``k/2 sum depth^2`` (the Jacobians of
    :meth:`PlanarArms.backbone_points` in the scene's coordinates), and it pushes the arms
    apart (its power on the closing motion is negative)."""
    model, k = env.model, 1000.0
    s = jnp.linspace(0.02, env.arm_length, 16)
    contact = ArmPairContact((0, 1), s, env.config.radius, k, dtype=jnp.float32)
    q = jnp.asarray([-6.0, -5.0, -2.0, 6.0, 4.0, 3.0])  # arms bent into each other

    def energy(q):
        depth = contact.normal_rows(model, q)[0]
        return 0.5 * k * jnp.sum(jnp.maximum(depth, 0.0) ** 2)

    closing = jnp.asarray([-1.0, -1.0, -1.0, 1.0, 1.0, 1.0])

    @jax.jit
    def terms(q):
        force = contact.load_map(model, q, closing)(closing).force
        return force, contact.normal_forces(model, q, jnp.zeros_like(q)), -jax.grad(energy)(q)

    force, (f_n, depth), minus_gradient = terms(q)
    assert float(jnp.max(depth)) > 2e-3 and float(jnp.sum(f_n)) > 1.0  # they do overlap
    np.testing.assert_allclose(force, minus_gradient, rtol=2e-4, atol=1e-5 * float(jnp.abs(force).max()))
    assert float(force @ closing) < 0.0
    with pytest.raises(ValueError, match="arms"):
        ArmPairContact((1, 1), s, 0.01, k)


def test_arms_pressing_into_each_other_do_not_pass_through(env):
    """Arm 0 curls right and arm 1 left, into each other: the contact holds them apart
    (overlap at most a few mm); with a contact a million times softer they pass through."""
    action = jnp.asarray([-0.6, -0.6, -0.6, 0.6, 0.6, 0.6])

    def run(e):
        reset, step = jax.jit(e.reset), jax.jit(e.step)
        s = reset(jax.random.PRNGKey(1))
        gaps, forces = [], []
        for _ in range(40):
            s = step(s, action)
            gaps.append(float(s.metrics["arm_gap"]))
            forces.append(float(s.metrics["peak_contact_force"]))
        assert np.all(np.isfinite(np.asarray(s.pipeline_state.q)))
        return np.asarray(gaps), np.asarray(forces)

    gaps, forces = run(env)
    assert forces.max() > 0.5 and gaps.min() > -0.008  # 5 mm measured (radius 12 mm)
    soft_gaps, _ = run(sorogym.make(NAME, contact_stiffness=1e-3))
    assert soft_gaps.min() < -0.02


def test_inverse_kinematics_expert_reaches_both_targets_apart(env):
    n = 8
    expert = env.expert("ik")

    @jax.jit
    def episodes(keys):
        def one(key):
            s = env.reset(key)

            def body(s, _):
                s = env.step(s, expert.act(s))
                return s, (s.metrics["goal_distance"], s.metrics["peak_contact_force"])

            return jax.lax.scan(body, s, None, length=env.max_episode_steps)[1]

        return jax.vmap(one)(keys)

    d, f = (np.asarray(x) for x in episodes(jax.random.split(jax.random.PRNGKey(5), n)))
    assert np.mean(d[:, -1] < env.config.success_radius) >= 7 / 8
    assert np.median(d[:, -1]) < 2e-3 and f.max() < 1.0


def test_one_agent_per_arm_sees_its_own_arm_first():
    flat = gymnasium.make(f"sorogym/{NAME}")
    agents = LimbAgents(gymnasium.make(f"sorogym/{NAME}"))
    check_env(agents, skip_render_check=True)
    assert agents.agents == ("arm0", "arm1")
    obs, _ = agents.reset(seed=2)
    flat_obs, _ = flat.reset(seed=2)
    np.testing.assert_array_equal(obs["arm0"], flat_obs)
    np.testing.assert_array_equal(obs["arm1"], np.concatenate([flat_obs[18:36], flat_obs[:18], flat_obs[36:]]))
    actions = {"arm0": np.array([0.3, -0.2, 0.1], np.float32), "arm1": np.array([-0.5, 0.4, 0.0], np.float32)}
    obs, reward, *_ = agents.step(actions)
    flat_obs, flat_reward, *_ = flat.step(np.concatenate([actions["arm0"], actions["arm1"]]))
    np.testing.assert_allclose(reward, flat_reward, rtol=1e-6)
    np.testing.assert_allclose(obs["arm1"][:18], flat_obs[18:36], rtol=1e-6)


@pytest.mark.parametrize(
    "overrides,field",
    [
        ({"arm_spacing": 0.02}, "arm_spacing"),
        ({"target_curvature": 1.5}, "target_curvature"),
        ({"target_separation": 0.0}, "target_separation"),
        ({"num_probes": 1}, "num_probes"),
        ({"contact_lookahead": -1.0}, "contact_lookahead"),
    ],
)
def test_bad_config_is_refused_at_construction(overrides, field):
    with pytest.raises(ValueError, match=field):
        sorogym.make(NAME, **overrides)
