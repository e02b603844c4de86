"""Layer 6: the env contract over the whole registry (brax API and the training wrapper)."""

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sorogym
from sorogym.env import wrap_for_training

NAMES = sorogym.registry()
T_EPISODE = 4  # one short episode length shared by the batched tests (one compilation)
DR = (("young_modulus", 0.5, 1.5), ("damping", 0.5, 2.0), ("density", 0.8, 1.2), ("radius", 0.9, 1.1))


# the chain's parameters (articulated robots) have no rod fields
DR_CHAIN = (("mass", 0.8, 1.2), ("stiffness", 0.5, 1.5), ("damping", 0.5, 2.0))


def _randomization(name):
    """DR (or DR_CHAIN) clipped to the ranges the env supports."""
    limits = sorogym.env.env_class(name).randomization_limits
    return tuple((f, max(lo, limits[f][0]), min(hi, limits[f][1])) for f, lo, hi in DR + DR_CHAIN if f in limits)


@functools.cache
def _env(name):
    """The env under domain randomisation (``_randomization``) and its jitted ``reset`` and
    ``step``: every contract test here steps this one env, so each env compiles one
    unbatched and one batched step (the default env, without randomisation, is checked
    through its Gymnasium face in ``test_env_faces.py`` and in ``test_env_accuracy.py``)."""
    env = sorogym.make(name, randomization=_randomization(name))
    return env, jax.jit(env.reset), jax.jit(env.step)


@functools.cache
def _batched(name, episode_length):
    env = _env(name)[0]
    w = wrap_for_training(env, episode_length=episode_length)
    return w, jax.jit(w.reset), jax.jit(w.step)


def _random_rollout(name, num_envs, num_steps, seed, episode_length):
    w, reset, step = _batched(name, episode_length)
    state = reset(jax.random.split(jax.random.PRNGKey(seed), num_envs))
    rng = np.random.default_rng(seed)
    states = [state]
    for _ in range(num_steps):
        state = step(state, jnp.asarray(rng.uniform(-1, 1, (num_envs, w.action_size)), jnp.float32))
        states.append(state)
    return states


def test_registry_and_names():
    assert "TendonTracking-v0" in NAMES
    assert sorogym.env.canonical_name("TendonTracking") == "TendonTracking-v0"
    assert sorogym.env.canonical_name("sorogym/TendonTracking-v0") == "TendonTracking-v0"
    with pytest.raises(ValueError, match="unknown environment"):
        sorogym.make("NoSuchTask")


@pytest.mark.parametrize("name", NAMES)
def test_reset_step_shapes_dtypes_and_keys(name):
    env, reset, step = _env(name)
    s0 = reset(jax.random.PRNGKey(0))
    s1 = step(s0, jnp.zeros(env.action_size, jnp.float32))
    for s in (s0, s1):
        assert s.obs.shape == (env.observation_size,) and s.obs.dtype == jnp.float32
        assert s.reward.shape == () and s.reward.dtype == jnp.float32
        assert s.done.shape == () and s.done.dtype == jnp.float32
        assert all(v.dtype == jnp.float32 and v.shape == () for v in s.metrics.values())
    assert set(s0.metrics) == set(s1.metrics) and set(s0.info) == set(s1.info)
    assert "nonfinite" in s0.info
    scale_keys = {f.name for f in dataclasses.fields(env.config.reward.scales)}
    assert {k.split("/", 1)[1] for k in s1.metrics if k.startswith("reward/")} == scale_keys
    # the reward is the sum of the scaled terms
    total = sum(float(s1.metrics[f"reward/{k}"]) for k in scale_keys)
    assert float(s1.reward) == pytest.approx(total, rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_determinism_by_seed(name):
    a = _random_rollout(name, 3, 6, seed=3, episode_length=T_EPISODE)
    b = _random_rollout(name, 3, 6, seed=3, episode_length=T_EPISODE)
    c = _random_rollout(name, 3, 6, seed=4, episode_length=T_EPISODE)
    for sa, sb in zip(a, b, strict=True):
        np.testing.assert_array_equal(np.asarray(sa.obs), np.asarray(sb.obs))
    assert not np.allclose(np.asarray(a[-1].obs), np.asarray(c[-1].obs))


@pytest.mark.parametrize("name", NAMES)
def test_domain_randomized_rollouts_stay_finite(name):
    states = _random_rollout(name, 3, 3 * T_EPISODE, seed=1, episode_length=T_EPISODE)
    for s in states:
        assert np.all(np.isfinite(np.asarray(s.obs))) and np.all(np.isfinite(np.asarray(s.reward)))
        assert float(jnp.max(s.info["nonfinite"])) == 0.0
    # parameters differ between envs and between episodes of one env
    field = _randomization(name)[0][0]
    robot_params = [getattr(s.pipeline_state.params, "robot", s.pipeline_state.params) for s in (states[0], states[-1])]
    E = [np.asarray(getattr(p, field)) for p in robot_params]  # a scene's robot part
    assert not np.allclose(E[0][0], E[0][1]) and not np.allclose(E[0], E[1])


@pytest.mark.parametrize("name", NAMES)
def test_truncation_full_reset_and_final_observation(name):
    T = T_EPISODE
    env, _, step_single = _env(name)
    w, reset, step = _batched(name, T)
    state = reset(jax.random.split(jax.random.PRNGKey(7), 3))
    first_task, first_q = state.pipeline_state.task, np.asarray(state.pipeline_state.q)
    action = jnp.full((3, env.action_size), 0.5, jnp.float32)
    for k in range(T):
        prev = state
        state = step(state, action)
        expected_done = 1.0 if k == T - 1 else 0.0
        np.testing.assert_array_equal(np.asarray(state.done), expected_done)
        np.testing.assert_array_equal(np.asarray(state.info["truncation"]), expected_done)
    # the final observation is the unwrapped env's observation of the last transition
    inner_prev = jax.tree.map(lambda x: x[0], prev)
    inner = step_single(inner_prev, action[0])
    # (batched and single float32 steps round differently; the stiff friction of a locomotor
    # amplifies that to ~1e-4 of its velocities, far below the change from a reset)
    np.testing.assert_allclose(np.asarray(state.info["final_obs"][0]), np.asarray(inner.obs), rtol=2e-4, atol=5e-5)
    # a full reset: fresh task (new targets), state back to the initial one, observations from the new episode
    new_task = state.pipeline_state.task
    changed = jax.tree.map(lambda a, b: not np.allclose(np.asarray(a), np.asarray(b)), first_task, new_task)
    # a task without a task state (swing-up) draws a fresh random initial state instead
    changed = any(jax.tree.leaves(changed)) or not np.allclose(first_q, np.asarray(state.pipeline_state.q))
    assert changed, "neither the task nor the initial state was resampled at reset"
    assert np.all(np.asarray(state.pipeline_state.steps) == 0)
    assert not np.allclose(np.asarray(state.obs), np.asarray(state.info["final_obs"]))


@pytest.mark.parametrize("name", NAMES)
def test_nonfinite_state_ends_episode_cleanly(name):
    env, reset, step = _env(name)
    s0 = reset(jax.random.PRNGKey(0))
    bad = s0.replace(pipeline_state=s0.pipeline_state.replace(qd=s0.pipeline_state.qd.at[0].set(jnp.nan)))
    s1 = step(bad, jnp.zeros(env.action_size, jnp.float32))
    assert float(s1.done) == 1.0 and float(s1.info["nonfinite"]) == 1.0
    assert np.isfinite(float(s1.reward)) and np.all(np.isfinite(np.asarray(s1.obs)))
    # a state beyond the divergence bound is treated the same way
    far = s0.pipeline_state.q + 10 * env.config.divergence_bound
    s2 = step(s0.replace(pipeline_state=s0.pipeline_state.replace(q=far)), jnp.zeros(env.action_size, jnp.float32))
    assert float(s2.done) == 1.0 and float(s2.info["nonfinite"]) == 1.0
    np.testing.assert_array_equal(np.asarray(s2.pipeline_state.q), np.asarray(far))  # previous state kept


@pytest.mark.parametrize("name", NAMES)
def test_bad_configuration_fails_at_construction(name):
    with pytest.raises(ValueError, match="control_dt"):
        sorogym.make(name, control_dt=-0.1)
    with pytest.raises(ValueError, match="num_substeps"):
        sorogym.make(name, num_substeps=0)
    with pytest.raises(ValueError, match="integrator"):
        sorogym.make(name, integrator="rk99")
    with pytest.raises(ValueError, match="theta"):
        sorogym.make(name, theta=0.3)
    with pytest.raises(ValueError, match="line_load_iterations"):
        sorogym.make(name, line_load_iterations=-1)
    with pytest.raises(ValueError, match="no_such_key"):
        sorogym.make(name, no_such_key=1.0)
    with pytest.raises(ValueError, match="randomization"):
        sorogym.make(name, randomization=(("no_such_field", 0.5, 1.5),))
    with pytest.raises(ValueError, match="randomization"):
        sorogym.make(name, randomization=((_randomization(name)[0][0], 1.5, 0.5),))
    # wider than the env supports: refused, naming the field and the supported range
    field, (low, high) = next(iter(sorogym.env.env_class(name).randomization_limits.items()))
    with pytest.raises(ValueError, match=rf"{field} factors .* outside the range {name} supports, \[{low}, {high}\]"):
        sorogym.make(name, randomization=((field, low, 1.01 * high),))
    sorogym.make(name, randomization=((field, low, high),))  # the full supported range is accepted


def test_dotted_overrides_reach_nested_config():
    env = sorogym.make("TendonTracking-v0", **{"reward.scales.success": 0.0}, target__radius=0.08)
    assert env.config.reward.scales.success == 0.0 and env.config.target.radius == 0.08


def test_randomisation_draws_stay_within_and_fill_their_ranges():
    """512 episodes' parameters against the nominal ones: every factor inside its range,
    the range filled (extremes within 5 % of its ends, mean within 4 standard errors of the
    midpoint), entries (segments, damping's strains) drawn independently, and fields left
    out of the ranges nominal."""
    ranges = (("young_modulus", 0.8, 2.0), ("damping", 0.7, 1.4), ("density", 0.8, 1.25), ("radius", 0.9, 1.1))
    env = sorogym.make("TendonTracking-v0", randomization=ranges)
    nominal = env.model.params
    params = jax.jit(jax.vmap(env.reset))(jax.random.split(jax.random.PRNGKey(11), 512)).pipeline_state.params
    for field, lo, hi in ranges:
        factor = np.asarray(getattr(params, field)) / np.asarray(getattr(nominal, field))
        assert factor.shape[0] == 512 and factor.shape[1:] == np.shape(getattr(nominal, field))
        assert factor.min() >= lo * (1 - 1e-6) and factor.max() <= hi * (1 + 1e-6), field
        span = hi - lo
        assert factor.min() < lo + 0.05 * span and factor.max() > hi - 0.05 * span, field
        assert abs(factor.mean() - (lo + hi) / 2) < 4 * span / np.sqrt(12 * factor.size), field
        per_episode = factor.reshape(512, -1)
        if per_episode.shape[1] > 1:  # one factor per entry (segment, strain), drawn apart
            assert abs(np.corrcoef(per_episode[:, 0], per_episode[:, 1])[0, 1]) < 0.2, field
    shear = np.asarray(params.shear_modulus)
    np.testing.assert_array_equal(shear, np.broadcast_to(nominal.shear_modulus, shear.shape))


def test_chunked_batches_step_like_one_vmap():
    """A batch stepped in chunks (the CPU default above 1024 envs) gives the states of one
    ``vmap`` over the batch, through an episode end and its full reset."""
    env = _env("TendonTracking-v0")[0]
    keys = jax.random.split(jax.random.PRNGKey(5), 4)
    actions = jnp.asarray(np.random.default_rng(5).uniform(-1, 1, (T_EPISODE + 2, 4, env.action_size)), jnp.float32)

    def rollout(chunk_size):
        w = wrap_for_training(env, episode_length=T_EPISODE, chunk_size=chunk_size)
        step = lambda s, a: (w.step(s, a),) * 2  # noqa: E731
        return jax.jit(lambda k: jax.lax.scan(step, w.reset(k), actions)[1])(keys)

    one, chunked = rollout(None), rollout(2)
    assert float(jnp.max(one.done)) == 1.0  # the rollout crossed a reset
    for a, b in zip(jax.tree.leaves(one), jax.tree.leaves(chunked), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="chunk_size"):
        wrap_for_training(env, chunk_size=0)
