"""``BrittleStarToGoal-v0``: walking that comes from the arms' anisotropic friction, the
multi-agent Gymnasium view (one agent per arm), and bad input. The model itself
(:class:`sorogym.PlanarStar`) is checked in ``test_planar_star.py``; the env contract,
faces, determinism and rendering by the suite-wide tests."""

import gymnasium
import numpy as np
import pytest
from _locomotion import expert_progress
from gymnasium.utils.env_checker import check_env

import sorogym
from sorogym.env import LimbAgents

NAME = "BrittleStarToGoal-v0"


def test_walking_comes_from_anisotropic_friction():
    """The expert's gait brings the disc towards its goal on arms that grip sideways three
    times harder than along them; on isotropic friction the same gait gets nowhere."""

    def progress(friction):
        return expert_progress(NAME, friction=friction)

    anisotropic, isotropic = progress((0.2, 0.2, 0.6)), progress((0.4, 0.4, 0.4))
    assert anisotropic.min() > 0.04  # m in 2 s (0.05-0.06 measured: 0.09 spans per second)
    assert np.abs(isotropic).max() < 0.2 * anisotropic.mean()  # (at most 0.009 measured)


def test_one_agent_per_arm_sees_the_disc_in_its_own_frame():
    flat = gymnasium.make(f"sorogym/{NAME}")
    agents = LimbAgents(gymnasium.make(f"sorogym/{NAME}"))
    check_env(agents, skip_render_check=True)
    assert agents.agents == ("arm0", "arm1", "arm2", "arm3", "arm4")
    obs, _ = agents.reset(seed=3)
    flat_obs, _ = flat.reset(seed=3)
    jax_env = flat.unwrapped.jax_env
    K, N = 5, 2
    for k, name in enumerate(agents.agents):
        view = obs[name]
        assert view.shape == (jax_env.agent_observation_dim,) == (14,)
        phi = 2 * np.pi * k / K
        to_arm = np.array([[np.cos(phi), np.sin(phi)], [-np.sin(phi), np.cos(phi)]])
        np.testing.assert_allclose(view[0:2], to_arm @ flat_obs[0:2], rtol=1e-5, atol=1e-6)  # goal
        np.testing.assert_allclose(view[4:6], to_arm @ flat_obs[4:6], rtol=1e-5, atol=1e-6)  # velocity
        np.testing.assert_array_equal(view[2:4], flat_obs[2:4])  # distance, yaw rate
        for j in range(3):  # curvatures, their rates, tendon states: the arm's own
            np.testing.assert_array_equal(view[6 + N * j : 6 + N * (j + 1)], flat_obs[6 + K * N * j + N * k :][:N])
        np.testing.assert_array_equal(view[-2:], flat_obs[-2:])  # clock
    # each agent's action drives its own arm: the same step as the flat env's
    actions = {name: np.array([0.2 * k - 0.4, 0.5], np.float32) for k, name in enumerate(agents.agents)}
    obs, reward, *_ = agents.step(actions)
    flat_obs, flat_reward, *_ = flat.step(np.concatenate([actions[n] for n in agents.agents]))
    np.testing.assert_allclose(reward, flat_reward, rtol=1e-6)
    np.testing.assert_allclose(obs["arm2"], jax_env.agent_observations(flat_obs)[2], rtol=1e-6)
    with pytest.raises(ValueError, match="missing agents"):
        agents.step({"arm0": np.zeros(2)})


def test_multi_agent_view_needs_a_multi_limb_env():
    with pytest.raises(ValueError, match="SnakeToGoal-v0 has no multi-agent view"):
        LimbAgents(gymnasium.make("sorogym/SnakeToGoal-v0"))


@pytest.mark.parametrize(
    "overrides,field",
    [
        ({"num_arms": 0}, "num_arms"),
        ({"tendon_offset": 0.008}, "tendon_offset"),
        ({"hub_mass": 0.0}, "hub_mass"),
        ({"max_tension": -1.0}, "max_tension"),
        ({"goal_distance": (0.4, 0.2)}, "goal_distance"),
        ({"friction": (0.2, -0.1, 0.6)}, "friction"),
    ],
)
def test_bad_brittle_star_config_fails_at_construction(overrides, field):
    with pytest.raises(ValueError, match=field):
        sorogym.make(NAME, **overrides)
