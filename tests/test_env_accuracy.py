"""The default env integrator's accuracy: over one episode of random actions (a locomotor:
its ``accuracy_steps``, 1 s), the env's accuracy point (the tip; a locomotor's centre of
mass) stays within 1 % of the robot's length of a float64 Tsit5 reference (adaptive here,
with tolerances; ``scripts/bench_envs.py`` reports the same against fixed dt = 1e-5).

The reference's rtol 1e-6 / atol 1e-8 changes the measured error by about 1e-9 of the length
against rtol 1e-8 / atol 1e-10 (ConicalArmReaching: 0.0039105195 against 0.0039105190) at a
sixth of the cost: far below the 1 % being checked."""

import pytest

import sorogym
from sorogym.env import integrator_accuracy

NAMES = sorogym.registry()


@pytest.mark.parametrize("name", NAMES)
def test_default_integrator_tracks_reference_within_one_percent_of_length(name):
    result = integrator_accuracy(name, seed=0, reference_dt=None, rtol=1e-6, atol=1e-8)
    env = sorogym.make(name)
    assert result["num_steps"] == (env.max_episode_steps if env.accuracy_steps is None else env.accuracy_steps)
    assert result["accuracy_point"] == env.accuracy_point_name
    assert result["point_error_rel"] <= 0.01, result
    assert result["point_error_rel"] > 0.0  # a real comparison, not the same computation twice
    if result["accuracy_point"] == "tip":
        assert result["tip_error_rel"] == result["point_error_rel"]
