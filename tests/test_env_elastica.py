"""``TendonTracking-Elastica-v0``: the PyElastica twin of ``TendonTracking-v0``.

The tendon loads against the derivative of the tendon length, the shared task code, the
Gymnasium contract, divergence handling, bad input, the rod's statics against the PCS model,
a short SB3 run and the backend comparison script in its quick mode.
"""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _isolated import run_isolated
from _scripts import load_script, run_script
from gymnasium.utils.env_checker import check_env

import sorogym  # noqa: F401  (registers the envs)

pytest.importorskip("elastica")

from sorogym.envs.elastica import RodSpec, TendonRod, _eyelets, _tendon_loads_kernel, matched_damping_rate  # noqa: E402
from sorogym.envs.tendon_tracking_elastica import TendonTrackingElastica  # noqa: E402

ELASTICA_ID = "sorogym/TendonTracking-Elastica-v0"
PCS_ID = "sorogym/TendonTracking-v0"


def _rotation(w):
    """Rotation matrix exp(hat(w)) (Rodrigues)."""
    th = np.linalg.norm(w)
    K = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
    if th < 1e-12:
        return np.eye(3) + K
    return np.eye(3) + np.sin(th) / th * K + (1 - np.cos(th)) / th**2 * K @ K


def _random_rod(rng, n):
    """A bent rod: nodes (3, n + 1) and directors (3, 3, n) (rows d1, d2, d3)."""
    x = np.zeros((3, n + 1))
    Q = np.zeros((3, 3, n))
    R = np.eye(3)
    for j in range(n):
        R = R @ _rotation(rng.normal(0, 0.3, 3))
        Q[:, :, j] = R.T  # rows: the frame's axes in the world
        x[:, j + 1] = x[:, j] + 0.05 * R[:, 2] * rng.uniform(0.9, 1.1)
    return x, Q


def test_tendon_loads_are_minus_tension_times_the_gradient_of_tendon_length():
    rng = np.random.default_rng(0)
    n, m = 6, 3
    x, Q = _random_rod(rng, n)
    offsets = np.zeros((m, 3))
    offsets[:, :2] = rng.uniform(-0.02, 0.02, (m, 2))
    T = rng.uniform(0.5, 5.0, m)
    forces, torques = np.zeros((3, n + 1)), np.zeros((3, n))
    _tendon_loads_kernel()(x, Q, offsets, T, forces, torques)

    def work(x_, Q_):  # -sum T l: the potential of the tendon loads
        p = _eyelets(x_, Q_, offsets)
        return -np.sum(T * np.sum(np.linalg.norm(np.diff(p, axis=1), axis=-1), axis=1))

    eps = 1e-6
    for i in range(1, n + 1):  # node 0 is clamped: its load is not applied
        for k in range(3):
            dx = np.zeros_like(x)
            dx[k, i] = eps
            fd = (work(x + dx, Q) - work(x - dx, Q)) / (2 * eps)
            np.testing.assert_allclose(forces[k, i], fd, rtol=1e-6, atol=1e-8)
    for e in range(1, n):  # element 0's director is clamped
        for k in range(3):
            w = np.zeros(3)
            w[k] = eps
            Qp, Qm = Q.copy(), Q.copy()
            # a body-frame rotation by w: offsets Q^T r -> Q^T exp(hat w) r
            Qp[:, :, e] = _rotation(-w) @ Q[:, :, e]
            Qm[:, :, e] = _rotation(w) @ Q[:, :, e]
            fd = (work(x, Qp) - work(x, Qm)) / (2 * eps)
            np.testing.assert_allclose(torques[k, e], fd, rtol=1e-6, atol=1e-8)


def test_same_seed_same_task_on_both_backends():
    rod = gymnasium.make(ELASTICA_ID, n_elements=10)
    pcs = gymnasium.make(PCS_ID)
    assert rod.spec.max_episode_steps == pcs.spec.max_episode_steps == 105
    o_rod, i_rod = rod.reset(seed=7)
    o_pcs, i_pcs = pcs.reset(seed=7)
    np.testing.assert_array_equal(o_rod, o_pcs)  # both at rest; same target
    assert set(i_rod) == set(i_pcs)
    tip_at_rest = o_pcs[:3].copy()
    for a in ([1, 0, 0.5, -1], [1, 0.2, 1, 0], [-0.3, 0, 1, 0]):
        o_rod, r_rod, term, trunc, i_rod = rod.step(np.array(a, np.float32))
        o_pcs, r_pcs, *_, i_pcs = pcs.step(np.array(a, np.float32))
        np.testing.assert_array_equal(o_rod[6:], o_pcs[6:])  # tensions and target
        assert set(i_rod) == set(i_pcs)
        assert not term and not trunc and np.isfinite(r_rod)
        # The two backends move the tip alike, measured against how far it moved: the gap is
        # 10, 17 and 24 % of the PCS tip's displacement over these three steps (1.6, 6.7 and
        # 13.6 mm; the Cosserat rod lags as its damping is matched on the first mode only),
        # and the two displacements point the same way (cosine 0.998 at the third step).
        moved_pcs, moved_rod = o_pcs[:3] - tip_at_rest, o_rod[:3] - tip_at_rest
        assert np.linalg.norm(moved_pcs) > 1e-3
        assert np.linalg.norm(o_rod[:3] - o_pcs[:3]) < 0.3 * np.linalg.norm(moved_pcs)
        assert moved_rod @ moved_pcs > 0.98 * np.linalg.norm(moved_rod) * np.linalg.norm(moved_pcs)


def test_both_backends_compute_the_task_from_the_physical_state_alike():
    """The twin's observation, reward and metrics from a tip state equal the JAX env's from
    a PCS state with that tip state."""
    twin = TendonTrackingElastica(n_elements=2)
    env = twin.task_env
    model = env.model
    state = jax.jit(env.reset)(jax.random.PRNGKey(3))
    rng = np.random.default_rng(1)
    for k in range(3):
        q = jnp.asarray(rng.normal(0, 0.5, model.num_dofs) * np.array([1, 3, 3, 0.02, 0.02, 0.02]), env.dtype)
        qd = jnp.asarray(rng.normal(0, 0.5, model.num_dofs), env.dtype)
        u = jnp.asarray(rng.uniform(0, 25, 4), env.dtype)
        ps = state.pipeline_state.replace(q=q, qd=qd, u=u, steps=jnp.asarray(5 * k + 1, jnp.int32))
        obs, terms, metrics, _ = env.outputs(model, state.pipeline_state, ps, None)
        reward, scaled = env.scaled_reward(terms)
        tip, tip_vel = (np.asarray(v) for v in env._tip(model, ps))
        obs2, reward2, scaled2, metrics2 = twin._outputs(tip, tip_vel, np.asarray(u), ps.task, int(ps.steps))
        np.testing.assert_allclose(obs2, env._clean_obs(obs), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(reward2, reward, rtol=1e-6, atol=1e-6)
        for key in scaled:
            np.testing.assert_allclose(scaled2[key], scaled[key], rtol=1e-6, atol=1e-6)
        for key in metrics:
            np.testing.assert_allclose(metrics2[key], metrics[key], rtol=1e-6, atol=1e-7)


def test_check_env_and_determinism():
    env = gymnasium.make(ELASTICA_ID)
    check_env(env.unwrapped, skip_render_check=True)
    actions = np.random.default_rng(0).uniform(-1, 1, (4, 4)).astype(np.float32)
    runs = []
    for _ in range(2):
        obs = [env.reset(seed=11)[0]]
        obs += [env.step(a)[0] for a in actions]
        runs.append(np.array(obs))
    np.testing.assert_array_equal(runs[0], runs[1])
    assert np.abs(runs[0][-1, :3] - runs[0][0, :3]).max() > 1e-3  # it moved


def test_render_returns_an_image():
    env = gymnasium.make(ELASTICA_ID, n_elements=10, render_mode="rgb_array", render_size=(160, 120))
    env.reset(seed=0)
    env.step(np.ones(4, np.float32))
    img = env.render()
    assert img.shape == (120, 160, 3) and img.dtype == np.uint8 and img.std() > 0


def test_a_diverging_rod_ends_the_episode_cleanly():
    env = TendonTrackingElastica(n_elements=40, max_dt=1 / 15 / 20)  # 10x the stable step
    obs0, _ = env.reset(seed=0)
    for _ in range(30):
        obs, reward, terminated, truncated, info = env.step(np.array([1, 0, 1, 0], np.float32))
        assert np.all(np.isfinite(obs)) and np.isfinite(reward)
        if terminated:
            break
    assert terminated and info["nonfinite"] == 1.0
    assert env.rod.is_finite()


def test_bad_input_fails_at_construction():
    with pytest.raises(ValueError, match="randomization"):
        TendonTrackingElastica(randomization=(("young_modulus", 0.8, 1.2),))
    with pytest.raises(ValueError, match="max_dt"):
        TendonTrackingElastica(max_dt=0.1)
    with pytest.raises(ValueError, match="n_elements"):
        TendonTrackingElastica(n_elements=1)
    with pytest.raises(ValueError, match="tendon_offset"):
        TendonTrackingElastica(tendon_offset=0.03)
    with pytest.raises(ValueError, match="tendon_offsets"):
        RodSpec(0.25, 0.02, 1000.0, 1e5, 4e4, ((0.0, 0.03),))
    with pytest.raises(ValueError, match="young_modulus"):
        RodSpec(0.25, 0.02, 1000.0, -1e5, 4e4, ((0.0, 0.01),))


def test_rod_statics_agree_with_the_pcs_model_at_small_tension():
    """One tendon at 1 N: the tip deflects to the tendon's side by the PCS model's amount
    (within the rod's discretisation error, ~1/n)."""
    from sorogym.control import equilibrium_from_rest

    twin = TendonTrackingElastica(n_elements=2)
    model = twin.task_env.model
    solve = jax.jit(lambda u: equilibrium_from_rest(model, u, 40, 10))
    spec = RodSpec(**{**twin.rod_spec.__dict__, "damping_rate": 8.0})
    for tendon in (0, 2):
        u = np.zeros(4)
        u[tendon] = 1.0
        q = solve(jnp.asarray(u, jnp.float32))
        tip_pcs = np.asarray(model.forward_kinematics(q, model.total_length))[:3, 3]
        rod = TendonRod(spec, 20, 4e-4)
        rod.advance(u, 1.5)
        tip_rod = rod.tip_state()[0]
        d_pcs, d_rod = tip_pcs[:2], tip_rod[:2]
        assert np.linalg.norm(d_pcs) > 5e-3
        assert np.linalg.norm(d_rod - d_pcs) < 0.06 * np.linalg.norm(d_pcs)


def test_matched_damping_rate_is_the_decay_rate_of_the_slowest_bending_mode():
    """The damped linearisation's eigenvalue nearest the slowest bending frequency decays at
    gamma / 2, the rate of every mode under mass-proportional damping gamma."""
    twin = TendonTrackingElastica(n_elements=2)
    model = twin.task_env.model
    gamma = matched_damping_rate(model)
    q0 = jnp.zeros(model.num_dofs)
    M = np.asarray(model.inertia_matrix(q0), float)
    K = np.stack([np.asarray(model.elastic_force(q0.at[i].set(1.0)), float) for i in range(model.num_dofs)], axis=1)
    D = np.asarray(model.damping_matrix(), float)
    n = model.num_dofs
    A = np.block([[np.zeros((n, n)), np.eye(n)], [-np.linalg.solve(M, K), -np.linalg.solve(M, D)]])
    lam = np.linalg.eigvals(A)
    osc = lam[np.abs(lam.imag) > 1e-6]
    slowest = osc[np.argmin(np.abs(osc.imag))]
    assert gamma > 0
    np.testing.assert_allclose(-slowest.real, gamma / 2, rtol=0.02)


def _sb3_body():
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    import sorogym  # noqa: F401

    venv = make_vec_env(ELASTICA_ID, n_envs=1, seed=0, env_kwargs={"n_elements": 10, "max_dt": 8e-4})
    model = PPO("MlpPolicy", venv, n_steps=32, batch_size=16, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=64)
    assert model.num_timesteps == 64
    obs = venv.reset()
    action, _ = model.predict(obs, deterministic=True)
    assert action.shape == (1, 4) and np.all(np.isfinite(action))


def test_sb3_ppo_runs_on_the_elastica_env():
    run_isolated(_sb3_body)  # torch stays out of the pytest process


def test_compare_backends_quick(tmp_path):
    report = load_script("compare_backends").main(["--quick", "--out", str(tmp_path)])
    assert (tmp_path / "backend_fidelity_quick.md").exists()
    rows = report["fidelity"]["rows"]
    assert {r["sequence"] for r in rows} >= {"step_one_tendon", "ramp", "random_smooth_0"}
    for r in rows:
        assert np.isfinite(r["rmse_over_L"]) and r["rmse_over_L"] < 0.1
    conv = report["convergence"]["rows"]
    assert conv[-1]["rmse_over_L"] < conv[0]["rmse_over_L"]  # refining converges
    static = report["static"]
    for s in static:  # the rod is stiffer (B / e^3); without stretch the gap is the discretisation's
        assert 0.8 < s["deflection_rod_m"] / s["deflection_pcs_m"] < 1.0
        assert abs(s["deflection_rod_stiff_stretch_m"] / s["deflection_pcs_bending_only_m"] - 1) < 0.06


def test_compare_rl_quick(tmp_path):
    # its own interpreter, as a user runs it (SB3 loads torch; the SubprocVecEnv workers
    # re-import the script as __main__)
    run_script("compare_rl", "--quick", "--out", str(tmp_path))
    report = json.loads((tmp_path / "rl_wallclock_quick.json").read_text())
    out = tmp_path
    assert set(report) >= {"brax", "sb3_pcs", "sb3_elastica", "summary", "meta"}
    for run in ("sb3_pcs", "sb3_elastica"):
        curve = report[run]["curve"]
        assert curve and all(0.0 <= r["rollout_success"] <= 1.0 for r in curve)
        assert [r["step"] for r in curve] == sorted(r["step"] for r in curve)
    assert report["sb3_elastica"]["wall_per_step_s"] > 0
    s = report["summary"]
    assert s["sb3_elastica_time_to_target"] in ("measured", "projected", "lower bound (not reached)")
    assert (Path(out) / "rl_wallclock_quick.png").exists() and (Path(out) / "rl_wallclock_quick.md").exists()


def test_compare_rl_time_to_level_interpolates():
    time_to_level = load_script("compare_rl").time_to_level

    rows = [{"wall_s": 10.0, "s": 0.1}, {"wall_s": 20.0, "s": 0.5}, {"wall_s": 30.0, "s": 0.9}]
    assert time_to_level(rows, "s", 0.7) == pytest.approx(25.0)
    assert time_to_level(rows, "s", 0.05) == 10.0
    assert time_to_level(rows, "s", 0.95) is None


def test_transfer_backends_quick(tmp_path):
    report = load_script("transfer_backends").main(["--quick", "--out", str(tmp_path)])
    assert [r["policy"] for r in report["rows"]] == ["nominal", "randomised"]
    for r in report["rows"]:
        for backend in ("pcs", "elastica"):
            res = r[backend]
            assert res["episodes"] == 2 and 0.0 <= res["success"] <= 1.0 and np.isfinite(res["tracking_error_m"])
    nominal = report["rows"][0]["pcs"]
    assert nominal["success"] > 0.8  # the committed policy on its own env
    assert (tmp_path / "transfer" / "ppo_randomised" / "checkpoint").exists()


def test_the_twin_is_registered_with_gymnasium_only():
    assert "TendonTracking-Elastica-v0" in sorogym.env.gym_twins()
    assert "TendonTracking-Elastica-v0" not in sorogym.registry()  # not a brax env
    assert ELASTICA_ID in gymnasium.registry
    with pytest.raises(ValueError, match="registered JAX env"):
        sorogym.env.register_gym_twin("TendonTracking-v0", "x:y", like="TendonTracking-v0")
