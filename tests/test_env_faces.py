"""Layer 6: the Gymnasium, vector, SB3 and brax faces, each driven by its real consumer."""

import importlib.util

import gymnasium
import jax
import numpy as np
import pytest
from _isolated import run_isolated
from gymnasium.utils.env_checker import check_env

import sorogym
from sorogym.env import GymVectorEnv

NAMES = sorogym.registry()


def _drawn_fraction(frame, scene, renderer) -> float:
    """The fraction of ``frame``'s pixels that differ from the same view with nothing in it."""
    from sorogym.render import scene_bounds

    empty = {"bounds": scene_bounds(scene), "view": scene.get("view", (20.0, -60.0)), "ground": scene.get("ground")}
    background = renderer.render(empty)
    return float(np.mean(np.any(np.abs(frame.astype(int) - background.astype(int)) > 12, axis=-1)))


@pytest.mark.parametrize("name", NAMES)
def test_gymnasium_check_env_and_rendering(name):
    env = gymnasium.make(f"sorogym/{name}", render_mode="rgb_array", render_size=(160, 120), renderer="mujoco")
    assert env.spec.max_episode_steps == sorogym.make(name).max_episode_steps
    with pytest.warns() as record:
        check_env(env.unwrapped, skip_render_check=False)
        import warnings

        warnings.warn("sentinel", UserWarning, stacklevel=1)  # pytest.warns needs at least one warning
    assert [str(w.message) for w in record] == ["sentinel"], [str(w.message) for w in record]
    obs, info = env.reset(seed=5)
    assert obs.dtype == np.float32 and env.observation_space.contains(obs)
    obs2, _ = env.reset(seed=5)
    np.testing.assert_array_equal(obs, obs2)
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    assert isinstance(reward, float) and not terminated and not truncated
    assert "nonfinite" in info and any(k.startswith("reward/") for k in info)
    frame = env.render()  # MuJoCo, headless (EGL)
    assert frame.shape == (120, 160, 3) and frame.dtype == np.uint8
    frames = env.unwrapped._frames
    scene = env.unwrapped.jax_env.render_scene(jax.tree.map(np.asarray, env.unwrapped.state.pipeline_state))
    assert _drawn_fraction(frame, scene, frames._renderer) > 0.002, "the robot is not in the frame"
    env.close()


def test_gymnasium_time_limit_truncates():
    env = gymnasium.make("sorogym/TendonTracking-v0", max_episode_steps=3)
    env.reset(seed=0)
    flags = [env.step(env.action_space.sample())[3] for _ in range(3)]
    assert flags == [False, False, True]


def test_vector_env_same_step_autoreset_with_final_obs_and_final_info():
    """The vector env against the unbatched brax env stepped by hand with the same keys and
    actions: the observation and metrics that ended each episode (``final_obs``,
    ``final_info``), the fresh episode's first observation (the env's own reset with the
    key the training wrapper derives), and seeded resets that repeat."""
    from sorogym.env import jax_key_from

    T = 3
    venv = gymnasium.make_vec("sorogym/TendonTracking-v0", num_envs=4, max_episode_steps=T)
    assert isinstance(venv.unwrapped, GymVectorEnv)
    obs, infos = venv.reset(seed=0)
    assert obs.shape == (4, 16) and obs.dtype == np.float32
    again, _ = venv.reset(seed=0)
    np.testing.assert_array_equal(obs, again)
    assert not np.array_equal(obs, venv.reset(seed=1)[0])  # another seed, other targets
    obs, infos = venv.reset(seed=0)
    env = sorogym.make("TendonTracking-v0")
    keys = jax.random.split(jax_key_from(gymnasium.utils.seeding.np_random(0)[0]), 4)
    reset = jax.jit(env.reset)
    states = [reset(k) for k in keys]
    np.testing.assert_allclose(obs, np.stack([np.asarray(s.obs) for s in states]), rtol=1e-6, atol=1e-7)
    actions = np.random.default_rng(3).uniform(-1, 1, (T, 4, 4)).astype(np.float32)
    step = jax.jit(env.step)
    for t in range(T):
        obs, rew, term, trunc, infos = venv.step(actions[t])
        states = [step(s, a) for s, a in zip(states, actions[t])]
        np.testing.assert_allclose(rew, [float(s.reward) for s in states], rtol=1e-5, atol=1e-6)
        if t < T - 1:
            assert not (term.any() or trunc.any()) and "final_obs" not in infos and "final_info" not in infos
    assert trunc.all() and not term.any()
    assert infos["_final_obs"].all() and infos["_final_info"].all()
    by_hand = np.stack([np.asarray(s.obs) for s in states])
    np.testing.assert_allclose(np.stack(list(infos["final_obs"])), by_hand, rtol=1e-5, atol=1e-6)
    for key in ("tracking_error", "success", "nonfinite"):
        assert infos["final_info"]["_" + key].all()
        expected = [float(s.metrics[key] if key in s.metrics else s.info[key]) for s in states]
        np.testing.assert_allclose(infos["final_info"][key], expected, rtol=1e-5, atol=1e-7)
    fresh = [reset(jax.random.fold_in(s.pipeline_state.rng, 0x5EED)) for s in states]
    np.testing.assert_allclose(obs, np.stack([np.asarray(s.obs) for s in fresh]), rtol=1e-6, atol=1e-7)
    obs, rew, term, trunc, infos = venv.step(venv.action_space.sample())
    assert not trunc.any() and "final_obs" not in infos and "final_info" not in infos


def test_vector_env_terminated_episodes_reset_in_the_same_step():
    """Episodes that end by divergence (a bound any motion exceeds) are terminated, not
    truncated, and reset at once; their final info says ``nonfinite``."""
    venv = gymnasium.make_vec("sorogym/TendonTracking-v0", num_envs=3, divergence_bound=1e-9)
    obs0, _ = venv.reset(seed=4)
    obs, rew, term, trunc, infos = venv.step(np.ones((3, 4), np.float32))
    assert term.all() and not trunc.any()
    np.testing.assert_array_equal(infos["final_info"]["nonfinite"], [1.0, 1.0, 1.0])
    final = np.stack(list(infos["final_obs"]))
    np.testing.assert_array_equal(final[:, :6], obs0[:, :6])  # the tip's state before the step is kept
    assert np.all(np.isfinite(obs)) and not np.array_equal(obs[:, 12:], obs0[:, 12:])  # new episodes, new targets


def test_wrong_action_shape_or_dtype_is_a_clear_error_on_every_face():
    """A wrong action names the expected shape (brax, Gymnasium, Gymnasium vector) instead
    of failing as a broadcasting error inside the physics."""
    env = sorogym.make("TendonTracking-v0")
    state = env.reset(jax.random.PRNGKey(0))
    with pytest.raises(ValueError, match=r"shape \(4,\).*got shape \(5,\)"):
        env.step(state, np.zeros(5, np.float32))
    with pytest.raises(ValueError, match=r"shape \(4,\).*got shape \(2, 4\)"):
        jax.jit(env.step)(state, np.zeros((2, 4), np.float32))  # a batch without vmap
    with pytest.raises(ValueError, match="dtype complex"):
        env.step(state, np.zeros(4, np.complex64))
    assert np.isfinite(float(env.step(state, np.zeros(4, np.int32)).reward))  # integers are real numbers
    single = gymnasium.make("sorogym/TendonTracking-v0")
    single.reset(seed=0)
    with pytest.raises(ValueError, match=r"takes shape \(4,\), got shape \(3,\)"):
        single.step(np.zeros(3))
    with pytest.raises(ValueError, match="dtype <U1"):
        single.step(np.array(["a"] * 4))
    venv = gymnasium.make_vec("sorogym/TendonTracking-v0", num_envs=2)
    venv.reset(seed=0)
    with pytest.raises(ValueError, match=r"takes shape \(2, 4\), got shape \(4,\)"):
        venv.step(np.zeros(4))


@pytest.mark.skipif(importlib.util.find_spec("stable_baselines3") is None, reason="stable-baselines3 not installed")
def test_sb3_vecenv_infos_and_short_ppo_run():
    run_isolated(_sb3_vecenv_body)


def _sb3_vecenv_body():
    import stable_baselines3 as sb3

    from sorogym.env import SB3VecEnv

    venv = SB3VecEnv("TendonTracking-v0", num_envs=4, episode_length=5, seed=1)
    obs = venv.reset()
    assert obs.shape == (4, 16)
    # the same episodes stepped by hand on the unbatched env: keys split from the seed
    env = venv.jax_env
    reset = jax.jit(env.reset)
    states = [reset(k) for k in jax.random.split(jax.random.PRNGKey(1), 4)]
    step = jax.jit(env.step)
    returns = np.zeros(4)
    for k in range(5):
        actions = np.random.default_rng(k).uniform(-1, 1, (4, 4)).astype(np.float32)
        obs, rewards, dones, infos = venv.step(actions)
        states = [step(s, a) for s, a in zip(states, actions)]
        returns += [float(s.reward) for s in states]
        assert dones.all() if k == 4 else not dones.any()
    assert dones.all()
    assert all(i["TimeLimit.truncated"] for i in infos)
    for i, s in zip(infos, states):
        np.testing.assert_allclose(i["terminal_observation"], np.asarray(s.obs), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(i["tracking_error"], float(s.metrics["tracking_error"]), rtol=1e-5)
    assert not any(np.allclose(o, i["terminal_observation"]) for o, i in zip(obs, infos))  # reset at once
    assert all(i["episode"]["l"] == 5 for i in infos)
    np.testing.assert_allclose([i["episode"]["r"] for i in infos], returns, rtol=1e-5)
    model = sb3.PPO("MlpPolicy", venv, n_steps=16, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=128)
    assert len(model.ep_info_buffer) > 0
    assert all(np.isfinite(e["r"]) for e in model.ep_info_buffer)


def test_brax_side_frames_mp4_export_and_renderer_fallback(tmp_path, monkeypatch):
    import imageio.v2 as imageio

    from sorogym.render import RenderingUnavailable, make_renderer, write_video

    env = sorogym.make("SnakeToGoal-v0")
    states = jax.jit(jax.vmap(env.reset))(jax.random.split(jax.random.PRNGKey(0), 3))
    frames = sorogym.env.render_frames(env, states.pipeline_state, 64, 48, renderer="mujoco")
    assert frames.shape == (3, 48, 64, 3) and frames.dtype == np.uint8
    assert not np.array_equal(frames[0], frames[1])  # three different goals and headings
    path = write_video(frames, tmp_path / "clip.mp4", fps=10)
    back = np.stack([f for f in imageio.get_reader(path)])  # list() would ask the reader for len: inf
    assert back.shape == (3, 48, 64, 3)
    with pytest.raises(ValueError, match=".mp4 or .gif"):
        write_video(frames, tmp_path / "clip.avi")
    monkeypatch.setenv("MUJOCO_GL", "disabled")
    with pytest.raises(RenderingUnavailable, match="MUJOCO_GL"):
        make_renderer("mujoco", 64, 64)
    with pytest.warns(RuntimeWarning, match="falling back to matplotlib"):
        fallback = make_renderer("auto", 64, 64)
    ps = jax.tree.map(lambda x: np.asarray(x)[0], states.pipeline_state)
    assert fallback.render(env.render_scene(ps)).shape == (64, 64, 3)


def test_gif_export(tmp_path):
    from sorogym.render import render_rgb, write_gif

    env = sorogym.make("TendonTracking-v0")
    state = jax.jit(env.reset)(jax.random.PRNGKey(0))
    ps = jax.tree.map(np.asarray, state.pipeline_state)
    frames = [render_rgb(env.render_scene(ps), 96, 96) for _ in range(2)]
    path = write_gif(frames, tmp_path / "clip.gif", fps=15)
    assert path.stat().st_size > 0
