"""The soak test of scripts/soak_envs.py, small: one env at all its supported randomisation
ranges under each kind of random action, short episodes so that several end and restart."""

import pytest
from _scripts import load_script


@pytest.mark.parametrize("kind", ["uniform", "bang_bang", "held_extreme"])
def test_soak_at_the_widest_randomisation_stays_finite(kind):
    script = load_script("soak_envs")
    row = script.soak("SnakeToGoal-v0", steps=200, num_envs=4, seed=3, kind=kind, episode_length_s=0.5)
    assert row["env_steps"] == 200 and row["episodes_ended"] == 20  # 4 envs x 5 episodes of 10 steps
    assert row["diverged_episodes"] == 0 and row["nonfinite_to_learner"] == 0, row
    fields = {f for f, _, _ in row["randomization"]}
    assert {"young_modulus", "damping", "density", "length", "radius"} <= fields
