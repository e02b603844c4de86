"""Layer 7: agents — run configs, the CLI end to end, checkpoints, resume, PPO learning,
SB3 baseline and the offline sweep runner (tiny budgets, wandb offline)."""

import json

import jax
import numpy as np
import pytest
from _isolated import run_isolated
from _toy import BendToGoal

import sorogym
from sorogym.agents import checkpoint as ckpt
from sorogym.agents import cli, run
from sorogym.agents.config import build_config, load_config, parse_overrides
from sorogym.agents.evaluate import evaluate_policy

# A tiny PPO budget: 2 progress points, 8 envs, episodes of 6 steps.
TINY = {
    "env.episode_length_s": 0.4,
    "ppo.num_timesteps": 320,
    "ppo.num_envs": 8,
    "ppo.batch_size": 8,
    "ppo.num_minibatches": 2,
    "ppo.unroll_length": 5,
    "ppo.num_updates_per_batch": 1,
    "ppo.num_evals": 2,
    "ppo.num_eval_envs": 4,
    "ppo.policy_hidden_layer_sizes": [8],
    "ppo.value_hidden_layer_sizes": [8],
    "eval.num_episodes": 4,
    "logging.wandb": "offline",
    "logging.video_episodes": 1,
}


@pytest.fixture(autouse=True, scope="module")
def _wandb_offline(tmp_path_factory):
    home = tmp_path_factory.mktemp("wandb")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WANDB_MODE", "offline")
        mp.setenv("WANDB_SILENT", "true")
        mp.setenv("WANDB_DIR", str(home))
        mp.setenv("WANDB_CACHE_DIR", str(home / "cache"))
        mp.setenv("WANDB_CONFIG_DIR", str(home / "config"))
        yield


# -- configs ----------------------------------------------------------------------------


def test_config_files_load_and_validate():
    import glob

    from sorogym.agents.sweep import load_sweep

    paths = sorted(
        glob.glob("configs/ppo/*.yaml") + glob.glob("configs/sb3/*.yaml") + glob.glob("configs/distill/*.yaml")
    )
    assert len(paths) >= 4
    for path in paths:
        config = load_config(path)
        assert config.env in sorogym.registry()
    for path in sorted(glob.glob("configs/sweeps/*.yaml")):
        spec = load_sweep(path)
        load_config(
            spec["base"], {k: (p["values"][0] if "values" in p else p["value"]) for k, p in spec["parameters"].items()}
        )
    c = load_config("configs/ppo/tendon_tracking.yaml", ["ppo.learning_rate=1e-3", "env.max_tendon_force=20", "seed=3"])
    assert c.ppo.learning_rate == 1e-3 and c.env_overrides == {"max_tendon_force": 20} and c.seed == 3


@pytest.mark.parametrize(
    "overrides, match",
    [
        ({"ppo.learnin_rate": 1e-3}, "ppo.learnin_rate"),
        ({"env": "NoSuchEnv-v0"}, "unknown environment"),
        ({"env.no_such_field": 1}, "no_such_field"),
        ({"ppo.num_envs": "many"}, "ppo.num_envs: expected an integer"),
        ({"algo": "dqn"}, "algo"),
        ({"ppo.num_envs": 3}, "multiple of num_envs"),
        ({"logging.wandb": "sometimes"}, "logging.wandb"),
    ],
)
def test_bad_configs_are_clear_errors(overrides, match):
    with pytest.raises(ValueError, match=match):
        build_config({}, overrides)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["train", "configs/ppo/tendon_tracking.yaml", "--bogus"], "unrecognized arguments: --bogus"),
        (["evaluate", "results/tendon_tracking/ppo/checkpoint", "a=1"], "evaluate takes no key=value overrides: a=1"),
        (["train", "configs/ppo/tendon_tracking.yaml", "--num-processes", "2"], "needs --coordinator, --num-processes"),
        (["render", "x", "--renderer", "opengl"], "invalid choice: 'opengl'"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
    ],
)
def test_cli_usage_errors_name_the_problem(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, error, message",
    [
        (["train", "configs/ppo/nope.yaml"], FileNotFoundError, "config file not found: configs/ppo/nope.yaml"),
        (["train", "configs/ppo/tendon_tracking.yaml", "ppo.num_envs=many"], ValueError, "expected an integer"),
        (["evaluate", "no/such/run"], FileNotFoundError, "no checkpoint found at no/such/run"),
        (["sweep", "configs/sweeps/nope.yaml"], FileNotFoundError, "sweep file not found: configs/sweeps/nope.yaml"),
    ],
)
def test_cli_input_errors_name_the_problem(argv, error, message):
    with pytest.raises(error, match=message):
        cli.main(argv)


def test_override_parsing():
    assert parse_overrides(["a.b=1", "c=[1, 2]", "d=true", "e=x=y"]) == {"a.b": 1, "c": [1, 2], "d": True, "e": "x=y"}
    with pytest.raises(ValueError, match="key=value"):
        parse_overrides(["novalue"])


# -- the CLI end to end ------------------------------------------------------------------


def _train_args(root, run_id, **extra):
    values = {**TINY, "logging.output_root": str(root), **extra}
    args = ["train", "configs/ppo/tendon_tracking.yaml", "--run-id", run_id, "--quiet"]
    return args + [f"{k}={json.dumps(v)}" for k, v in values.items()]


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    assert cli.main(_train_args(root, "first")) == 0
    return root / "TendonTracking-v0" / "ppo" / "first", root


def test_train_writes_the_run_folder(tiny_run):
    run_dir, _ = tiny_run
    for name in (
        "config.yaml",
        "metrics.csv",
        "metrics.jsonl",
        "curve.png",
        "eval.json",
        "rollout.mp4",
        "summary.json",
    ):
        assert (run_dir / name).stat().st_size > 0, name
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows][0] == 0 and rows[-1]["step"] >= 320
    assert {"return_mean", "success", "tracking_error"} <= set(rows[-1])
    import yaml

    resolved = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert resolved["env"] == "TendonTracking-v0" and resolved["ppo"]["num_envs"] == 8
    assert "git_revision" in resolved["run"]
    assert ckpt.latest(run_dir / "checkpoints") is not None
    # the offline wandb run holds the same rows as metrics.jsonl, value for value, and the
    # final evaluation in its summary
    from _wandb_records import logged

    (run_file,) = (run_dir / "wandb").glob("offline-run-*/run-*.wandb")
    history, summary = logged(run_file)
    assert history == rows and len(rows) >= 2
    final = json.loads((run_dir / "summary.json").read_text())
    scalars = {k: v for k, v in final.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    assert scalars and all(summary[k] == pytest.approx(v, rel=1e-12) for k, v in scalars.items())


def test_evaluate_reproduces_the_training_evaluation(tiny_run, tmp_path):
    run_dir, _ = tiny_run
    trained = json.loads((run_dir / "eval.json").read_text())
    out = tmp_path / "eval.json"
    assert cli.main(["evaluate", str(run_dir), "--episodes", "4", "--seed", "10000", "--out", str(out)]) == 0
    again = json.loads(out.read_text())
    for key in ("return_mean", "success", "tracking_error"):
        assert again[key] == pytest.approx(trained[key], rel=1e-5, abs=1e-7), key


def test_render_writes_a_gif_and_a_strided_mp4(tiny_run, tmp_path):
    import imageio.v2 as imageio
    from PIL import Image, ImageSequence

    run_dir, _ = tiny_run
    out = tmp_path / "policy.gif"
    assert cli.main(["render", str(run_dir), "--out", str(out), "--size", "64", "--renderer", "matplotlib"]) == 0
    gif = Image.open(out)
    assert gif.size == (64, 64) and gif.n_frames == 4  # the 6-step episode's 7 states, every 2nd
    out = tmp_path / "policy.mp4"
    assert cli.main(["render", str(run_dir), "--out", str(out), "--size", "48", "--frame-every", "3"]) == 0
    frames = [f for f in imageio.get_reader(out)]
    assert len(frames) == 3 and frames[0].shape == (48, 48, 3)
    # the frames show the episode's different states (the arm bends, the target moves on)
    gif_frames = [np.asarray(frame.convert("RGB")) for frame in ImageSequence.Iterator(gif)]
    for shown in (gif_frames, frames):
        change = np.mean(np.any(np.abs(shown[0].astype(int) - shown[-1].astype(int)) > 12, axis=-1))
        assert change > 1e-3, change


def test_resume_continues_from_the_saved_policy_value_and_normaliser(tiny_run, monkeypatch):
    """A resumed run hands brax the saved (normaliser, policy, value) parameters: brax's
    step-0 parameters (its first ``policy_params_fn`` call, after it applied
    ``restore_params``) equal the checkpoint's leaf for leaf, and training then moves them.
    brax re-creates the optimiser state, which its trainer does not expose."""
    import brax.training.agents.ppo.train as brax_ppo_train

    run_dir, root = tiny_run
    saved_params, meta, _ = ckpt.load_ppo(run_dir)
    seen = []
    original = brax_ppo_train.train

    def spy(*args, policy_params_fn, **kwargs):
        def record(step, make_policy, params):
            seen.append((int(step), jax.tree.map(np.asarray, params)))
            policy_params_fn(step, make_policy, params)

        return original(*args, policy_params_fn=record, **kwargs)

    monkeypatch.setattr(brax_ppo_train, "train", spy)
    args = _train_args(root, "second", **{"ppo.num_timesteps": 640, "logging.video": False})
    assert cli.main(args + ["--resume", str(run_dir)]) == 0
    second = run_dir.parent / "second"
    step0, start = seen[0]
    assert step0 == 0
    flat_saved, tree_saved = jax.tree.flatten(saved_params)
    flat_start, tree_start = jax.tree.flatten(start)
    assert tree_saved == tree_start and len(flat_saved) >= 8  # normaliser count/mean/std, two MLPs
    for a, b in zip(flat_saved, flat_start):
        np.testing.assert_array_equal(np.asarray(a), b)
    final, _, _ = ckpt.load_ppo(second)
    assert any(not np.array_equal(a, b) for a, b in zip(flat_saved, jax.tree.leaves(final)))
    rows = [json.loads(line) for line in (second / "metrics.jsonl").read_text().splitlines()]
    assert rows[0]["step"] == meta["step"] and rows[-1]["step"] >= 640
    assert ckpt.load_meta(second)["step"] >= 640
    assert json.loads((second / "eval.json").read_text())["env_steps"] >= 640


def test_resume_refuses_a_checkpoint_of_other_networks_or_a_distilled_run(tiny_run):
    run_dir, root = tiny_run
    wider = _train_args(root, "wider", **{"ppo.policy_hidden_layer_sizes": [16, 16], "logging.video": False})
    with pytest.raises(ValueError, match=r"resume: the checkpoint does not fit this run \(policy_hidden_layer_sizes"):
        cli.main(wider + ["--resume", str(run_dir)])
    from sorogym.agents.distill import train_distill

    config = build_config({}, {"algo": "bc", "env": "TendonTracking-v0"})
    with pytest.raises(ValueError, match="resume: bc runs do not resume; warm-start PPO"):
        train_distill(config, None, root, lambda step, row: None, resume_from=run_dir)


def test_export_copies_results_and_checkpoint(tiny_run, tmp_path):
    run_dir, _ = tiny_run
    dest = run.export_run(run_dir, tmp_path / "published")
    assert (dest / "checkpoint" / "params.msgpack").exists() and (dest / "eval.json").exists()
    assert ckpt.load_meta(dest / "checkpoint")["algo"] == "ppo"


TINY_SB3 = {
    "env.episode_length_s": 0.4,
    "sb3_ppo.total_timesteps": 128,
    "sb3_ppo.n_envs": 4,
    "sb3_ppo.n_steps": 16,
    "sb3_ppo.batch_size": 32,
    "sb3_ppo.n_epochs": 1,
    "sb3_ppo.num_checkpoints": 2,
    "eval.num_episodes": 4,
}


def test_sweep_runner_on_a_two_point_grid(tmp_path):
    # SB3 runs are the cheapest to compile; the runner is the same for every algorithm.
    run_isolated(_sweep_body, str(tmp_path))


def _sweep_body(tmp):
    import pathlib

    tmp_path = pathlib.Path(tmp)
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(
        "base: configs/sb3/tendon_tracking.yaml\nname: tiny\nmethod: grid\n"
        "metric: {name: eval/return_mean, goal: maximize}\n"
        "parameters:\n  sb3_ppo.learning_rate: {values: [0.0001, 0.001]}\n  seed: {value: 1}\n"
    )
    overrides = [f"{k}={json.dumps(v)}" for k, v in TINY_SB3.items()]
    overrides += [f"logging.output_root={tmp_path / 'runs'}", "logging.video=false", "logging.wandb=disabled"]
    assert cli.main(["sweep", str(sweep)] + overrides) == 0
    summaries = list((tmp_path / "runs" / "sweeps").glob("tiny-*/summary.csv"))
    assert len(summaries) == 1
    lines = summaries[0].read_text().strip().splitlines()
    assert len(lines) == 3 and lines[0].startswith("sb3_ppo.learning_rate,seed,eval/return_mean")
    assert all(line.split(",")[2] not in ("", "None") for line in lines[1:])
    assert (summaries[0].parent / "summary.md").exists() and (summaries[0].parent / "summary.png").exists()


# -- learning ------------------------------------------------------------------------------


def test_brax_ppo_learns_the_toy_task(tmp_path):
    from sorogym.agents.ppo import train_ppo

    env = BendToGoal()
    config = build_config(
        {},
        {
            "ppo.num_timesteps": 60_000,
            "ppo.num_envs": 64,
            "ppo.batch_size": 64,
            "ppo.num_minibatches": 4,
            "ppo.unroll_length": 10,
            "ppo.num_updates_per_batch": 4,
            "ppo.num_evals": 2,
            "ppo.learning_rate": 3e-3,
            "ppo.policy_hidden_layer_sizes": [32, 32],
            "ppo.value_hidden_layer_sizes": [32, 32],
        },
    )
    params, nets, step = train_ppo(config, env, tmp_path, lambda s, m: None)
    assert step >= 60_000
    from sorogym.agents.networks import ppo_policy

    trained = evaluate_policy(env, ppo_policy(params, nets), 64, seed=1)
    random = evaluate_policy(
        env, lambda obs, k: (jax.random.uniform(k, (obs.shape[0], 1), minval=-1, maxval=1), {}), 64, seed=1
    )
    assert random["return_mean"] < -5.0
    assert trained["return_mean"] > -3.0, trained


def test_sb3_baseline_trains_checkpoints_and_evaluates(tmp_path):
    run_isolated(_sb3_baseline_body, str(tmp_path))


def _sb3_baseline_body(tmp_path):
    overrides = {
        **TINY_SB3,
        "algo": "sb3_ppo",
        "logging.video": False,
        "logging.wandb": "disabled",
        "logging.output_root": str(tmp_path),
    }
    run_dir = run.train(build_config({}, overrides), run_id="sb3", quiet=True)
    result = json.loads((run_dir / "eval.json").read_text())
    assert result["algo"] == "sb3_ppo" and result["env_steps"] >= 128 and np.isfinite(result["return_mean"])
    again = run.evaluate(str(run_dir), episodes=4, seed=10_000)
    assert again["return_mean"] == pytest.approx(result["return_mean"], rel=1e-5)
    assert len(list((run_dir / "checkpoints").glob("step_*"))) >= 2
    assert (ckpt.latest(run_dir / "checkpoints") / "vecnormalize.pkl").exists()

    # Resume: SB3's learn starts from the saved policy, value and VecNormalize statistics
    from stable_baselines3 import PPO

    from sorogym.agents.sb3 import load_sb3

    saved, meta, normalizer = load_sb3(run_dir)
    seen = {}
    learn = PPO.learn

    def spy(model, *args, **kwargs):
        seen["weights"] = {k: v.clone() for k, v in model.policy.state_dict().items()}
        seen["obs_rms"] = (model.get_env().obs_rms.mean.copy(), model.get_env().obs_rms.var.copy())
        seen["step"] = model.num_timesteps
        return learn(model, *args, **kwargs)

    PPO.learn = spy
    try:
        more = build_config({}, {**overrides, "sb3_ppo.total_timesteps": 256})
        second = run.train(more, resume=str(run_dir), run_id="sb3-resumed", quiet=True)
    finally:
        PPO.learn = learn
    assert seen["step"] == meta["step"] >= 128
    for name, value in saved.policy.state_dict().items():
        assert bool((seen["weights"][name] == value).all()), name
    np.testing.assert_array_equal(seen["obs_rms"][0], normalizer.obs_rms.mean)
    np.testing.assert_array_equal(seen["obs_rms"][1], normalizer.obs_rms.var)
    assert json.loads((second / "eval.json").read_text())["env_steps"] >= 256
    with pytest.raises(ValueError, match="resume: checkpoint is for TendonTracking-v0, the config trains"):
        run.train(build_config({}, {**overrides, "env": "TendonReaching-v0"}), resume=str(run_dir), quiet=True)


def test_committed_checkpoint_reproduces_its_evaluation():
    """``sorogym evaluate`` on the committed main-job checkpoint gives the committed figures."""
    published = json.loads(open("results/tendon_tracking/ppo/eval.json").read())
    again = run.evaluate("results/tendon_tracking/ppo/checkpoint", episodes=published["num_episodes"], seed=10_000)
    assert again["success"] == pytest.approx(published["success"], abs=2e-3)
    assert again["tracking_error"] == pytest.approx(published["tracking_error"], rel=2e-3)
    assert published["success"] >= 0.90 and published["tracking_error"] <= 6.19e-3
