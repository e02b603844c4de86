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


def test_fine_scheme_reference_agrees_with_the_continuous_reference():
    """The reference of stiff envs, the env's own scheme at a 100 times finer substep, gives
    the same error as diffrax's Tsit5 on the continuous dynamics (a few steps of an arm)."""
    name, steps = "TendonReaching-v0", 10
    tsit5 = integrator_accuracy(name, num_steps=steps, seed=1, reference_dt=None, rtol=1e-6, atol=1e-8)
    fine = integrator_accuracy(name, num_steps=steps, seed=1, solver="fine_scheme")
    integrator = sorogym.make(name).config.integrator
    assert fine["reference"] == f"{integrator}_dt{fine['substep_dt'] / 100:g}", fine
    assert tsit5["reference"] == "tsit5_adaptive"
    assert fine["point_error"] > 0.0
    assert abs(fine["point_error"] - tsit5["point_error"]) <= 0.05 * tsit5["point_error"], (fine, tsit5)
    with pytest.raises(ValueError, match="solver"):
        integrator_accuracy(name, num_steps=1, solver="euler")
