"""brax's own trainers on sorogym envs, called exactly as brax documents them.

The call runs in a fresh interpreter: there jax starts without ``device_put_replicated``
(removed in jax 0.10, still called by brax 0.14's trainers), so the test shows both that the
stand-in is still needed and that constructing an env is all a brax user has to do.
"""

import jax
import jax.numpy as jnp
import numpy as np
from _isolated import run_isolated

from sorogym.env import install_brax_compat
from sorogym.env._brax import brax_needs_compat, device_put_replicated


def _brax_trainers_body():
    import jax
    import numpy as np

    import sorogym

    # Fails once the pinned jax (or brax) no longer needs the stand-in: then delete
    # install_brax_compat and its call in SoroEnv.__init__.
    assert not hasattr(jax, "device_put_replicated"), "jax has device_put_replicated again: drop the stand-in"
    from brax.training.agents.ppo import train as ppo
    from brax.training.agents.sac import train as sac

    env = sorogym.make("TendonTracking-v0")
    # brax's default wrapping (its own VmapWrapper, EpisodeWrapper, AutoResetWrapper);
    # sorogym's own training wrapper goes through this trainer in tests/test_agents.py
    seen = []
    shared = dict(environment=env, episode_length=8, num_envs=8, num_evals=2, num_eval_envs=4, seed=0)
    make_policy, params, metrics = ppo.train(
        **shared,
        num_timesteps=512,
        batch_size=8,
        unroll_length=4,
        num_minibatches=2,
        num_updates_per_batch=1,
        progress_fn=lambda step, m: seen.append(step),
    )
    assert len(seen) == 2 and seen[-1] >= 512
    assert np.isfinite(float(metrics["eval/episode_reward"])), metrics
    action, _ = make_policy(params, deterministic=True)(jax.numpy.zeros(16), jax.random.PRNGKey(0))
    assert action.shape == (4,) and np.all(np.abs(np.asarray(action)) <= 1.0)

    make_policy, params, metrics = sac.train(
        **shared, num_timesteps=256, batch_size=16, min_replay_size=64, max_replay_size=512, grad_updates_per_step=1
    )
    assert np.isfinite(float(metrics["eval/episode_reward"])), metrics
    action, _ = make_policy(params, deterministic=True)(jax.numpy.zeros(16), jax.random.PRNGKey(0))
    assert action.shape == (4,) and np.all(np.abs(np.asarray(action)) <= 1.0)


def test_brax_ppo_and_sac_train_a_sorogym_env_as_brax_documents():
    run_isolated(_brax_trainers_body, timeout=600)


def test_stand_in_replicates_pytrees_over_devices():
    tree = {"w": jnp.arange(3.0), "b": jnp.float32(2.0)}
    devices = jax.local_devices()[:1]
    out = device_put_replicated(tree, devices)
    np.testing.assert_array_equal(np.asarray(out["w"]), np.arange(3.0)[None])
    assert out["b"].shape == (1,) and out["w"].sharding.device_set == set(devices)
    install_brax_compat()
    assert not brax_needs_compat() and install_brax_compat() is False  # idempotent
