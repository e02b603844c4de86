"""``ParallelPlatformTracking-v0`` beyond the shared env contract: the recorded references
replay exactly, equal drive forces lift the platform by ``u / k`` (statics), the closures
hold under random forces, randomised parameters reach the model, the quasi-static expert
tracks, and bad settings are refused by name."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sorogym
from sorogym.models import static_equilibrium

NAME = "ParallelPlatformTracking-v0"


@functools.cache
def _env():
    env = sorogym.make(NAME)  # the default config: its reference bank is shared with the contract tests
    return env, jax.jit(env.reset), jax.jit(env.step)


def test_recorded_forces_replay_the_reference():
    env, reset, step = _env()
    bank = env.reference_bank
    T = env.max_episode_steps
    assert bank["poses"].shape == (env.config.num_references, T + 11, 4, 4)
    assert bank["forces"].shape == (env.config.num_references, T + 10, 3)
    assert np.abs(bank["forces"]).max() <= 2 * env.config.reference_amplitude * env.config.max_force
    excursion = np.linalg.norm(bank["poses"][:, :, :3, 3] - bank["poses"][:, :1, :3, 3], axis=-1).max(axis=1)
    assert 0.005 < np.median(excursion) < 0.04  # centimetres of platform motion, not noise
    state = reset(jax.random.PRNGKey(3))
    ps = state.pipeline_state
    assert float(state.metrics["position_error"]) < 1e-6  # the episode starts on its reference
    errors = []
    for k in range(12):
        state = step(state, ps.task.forces[k] / env.config.max_force)
        errors.append(float(state.metrics["position_error"]))
    assert max(errors) < 1e-5, errors
    assert float(state.metrics["success"]) == 1.0 and float(state.reward) > 0.9


def test_equal_drive_forces_lift_the_platform_by_force_over_stiffness():
    env, _, _ = _env()
    model, k = env.model, env.config.insertion_stiffness

    @jax.jit
    def platform(u):
        q = static_equilibrium(model, u, ramp_steps=0, rtol=1e-6, atol=1e-8)
        return env.platform_pose(model, q), model.constraint_terms(q)[0]

    rest, _ = platform(jnp.zeros(3, jnp.float32))
    lifted, phi = platform(jnp.full(3, 6.0, jnp.float32))
    # inextensible rods: the drives' springs alone take the extra force, the rods translate
    np.testing.assert_allclose(lifted[2, 3] - rest[2, 3], 6.0 / k, rtol=2e-3)
    np.testing.assert_allclose(lifted[:2, 3], rest[:2, 3], atol=1e-6)
    np.testing.assert_allclose(lifted[:3, :3], rest[:3, :3], atol=1e-5)
    assert float(jnp.max(jnp.abs(phi))) < 1e-5


def test_closures_hold_under_random_forces():
    env, reset, step = _env()
    state = reset(jax.random.PRNGKey(1))
    rng = np.random.default_rng(0)
    closure = jax.jit(lambda q: env.model.constraint_terms(q)[0])
    for _ in range(15):
        state = step(state, jnp.asarray(rng.uniform(-1, 1, 3), jnp.float32))
    assert float(state.info["nonfinite"]) == 0.0
    assert float(jnp.max(jnp.abs(closure(state.pipeline_state.q)))) < 1e-5


def test_randomized_parameters_reach_the_model():
    env = sorogym.make(
        NAME,
        randomization=(("young_modulus", 0.5, 2.0), ("insertion_stiffness", 0.8, 1.25), ("platform_mass", 0.5, 2.0)),
    )
    params = env._sample_params(jax.random.PRNGKey(0))
    nominal = env.nominal_params()
    model = env._model_for(params)
    factor = np.asarray(params.young_modulus / nominal.young_modulus)
    assert not np.allclose(factor, factor[0])  # one factor per rod
    for k, (rod, rod0) in enumerate(zip(model.params.rods, env.model.params.rods, strict=True)):
        np.testing.assert_allclose(rod.young_modulus, rod0.young_modulus * factor[k], rtol=1e-6)
        np.testing.assert_allclose(rod.shear_modulus, rod0.shear_modulus, rtol=1e-6)
    np.testing.assert_allclose(model.params.joint_stiffness, params.insertion_stiffness)
    mass = np.asarray(params.platform_mass / nominal.platform_mass)
    inertia = env.model.params.link_inertia * mass[:, None, None]
    np.testing.assert_allclose(model.params.link_inertia, inertia, rtol=1e-6)
    # the drives' springs are in the stiffness matrix
    drives = [int(env.model.coordinate_slices(f"rod{k}")[1][0]) for k in range(3)]
    K = np.asarray(jax.jit(lambda m: m.stiffness_matrix())(model))
    np.testing.assert_allclose(K[drives, drives], params.insertion_stiffness, rtol=1e-6)


def test_the_quasi_static_expert_tracks():
    from sorogym.agents.evaluate import evaluate_policy

    env, _, _ = _env()
    result = evaluate_policy(env, env.expert(), num_episodes=2, seed=5, episode_length=25, policy_input="state")
    assert result["position_error"] < 1e-3 and result["max/position_error"] < 3e-3, result
    assert result["success"] > 0.8 and result["orientation_error"] < 0.01, result


@pytest.mark.parametrize(
    "override, field",
    [
        ({"reference_amplitude": 0.7}, "reference_amplitude"),
        ({"reference_frequency": (2.0, 1.0)}, "reference_frequency"),
        ({"preview_steps": (0, 5)}, "preview_steps"),
        ({"num_references": 0}, "num_references"),
        ({"max_force": -1.0}, "max_force"),
        ({"insertion_damping": 0.0}, "insertion_damping"),
        ({"integrator": "variational"}, "integrator"),
    ],
)
def test_bad_settings_name_the_field(override, field):
    with pytest.raises(ValueError, match=field):
        sorogym.make(NAME, **override)
