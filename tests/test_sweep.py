"""The offline sweep runner's point selection (grid, random, bayes, count), its parameter
distributions and its summary, with the trainer replaced by a stand-in that scores each
point by a known function (the runner with real training: test_agents' two-point grid)."""

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

from sorogym.agents import sweep

PARAMETERS = {
    "ppo.learning_rate": {"distribution": "log_uniform_values", "min": 1e-5, "max": 1e-2},
    "ppo.num_minibatches": {"distribution": "int_uniform", "min": 2, "max": 4},
    "ppo.entropy_cost": {"distribution": "q_uniform", "min": 0.0, "max": 0.01, "q": 0.002},
    "ppo.discounting": {"distribution": "uniform", "min": 0.9, "max": 0.99},
    "ppo.unroll_length": {"values": [5, 10, 20]},
    "seed": {"value": 3},
}


def test_random_points_follow_their_distributions():
    points = sweep.random_points(PARAMETERS, 2000, seed=1)
    assert points == sweep.random_points(PARAMETERS, 2000, seed=1) != sweep.random_points(PARAMETERS, 2000, seed=2)
    lr = np.array([p["ppo.learning_rate"] for p in points])
    assert lr.min() >= 1e-5 and lr.max() <= 1e-2
    # log-uniform: each decade holds a third of the draws (binomial sd ~1 %)
    decades = np.histogram(np.log10(lr), bins=[-5, -4, -3, -2])[0] / len(lr)
    np.testing.assert_allclose(decades, 1 / 3, atol=0.04)
    mb = [p["ppo.num_minibatches"] for p in points]
    assert set(mb) == {2, 3, 4} and all(isinstance(v, int) for v in mb)  # both ends included
    ent = np.array([p["ppo.entropy_cost"] for p in points])
    np.testing.assert_allclose(ent / 0.002, np.round(ent / 0.002), atol=1e-9)  # multiples of q
    assert set(np.round(ent / 0.002).astype(int)) == {0, 1, 2, 3, 4, 5}
    gamma = np.array([p["ppo.discounting"] for p in points])
    assert 0.9 <= gamma.min() and gamma.max() <= 0.99 and abs(gamma.mean() - 0.945) < 0.003
    assert {p["ppo.unroll_length"] for p in points} == {5, 10, 20}
    assert all(p["seed"] == 3 for p in points)


def test_grid_points_are_the_product_of_the_values():
    grid = sweep.grid_points({"a": {"values": [1, 2]}, "b": {"value": "x"}, "c": {"values": [0.1, 0.2, 0.3]}})
    assert len(grid) == 6 and grid[0] == {"a": 1, "b": "x", "c": 0.1} and grid[-1] == {"a": 2, "b": "x", "c": 0.3}


@pytest.mark.parametrize(
    "spec, message",
    [
        ({"parameters": {}}, "non-empty 'parameters'"),
        ({"method": "hyperband", "parameters": {"a": {"value": 1}}}, "method must be grid, random or bayes"),
        ({"parameters": {"a": {"min": 1}}}, "parameter 'a' needs 'value', 'values' or 'distribution'"),
        ({"method": "random", "parameters": {"a": {"distribution": "normal"}}}, "unsupported distribution 'normal'"),
        ({"parameters": {"a": {"distribution": "uniform", "min": 0, "max": 1}}}, "grid sweeps need 'values'"),
    ],
)
def test_bad_sweep_files_are_refused_by_name(tmp_path, spec, message):
    import yaml

    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(spec))
    with pytest.raises(ValueError, match=message):
        sweep.load_sweep(path)


def _score(point: dict) -> float:
    """The stand-in trainer's metric: best at learning rate 1e-3."""
    return -abs(math.log10(point["ppo.learning_rate"]) + 3.0)


def _run(tmp_path, monkeypatch, spec: dict, count=None):
    import yaml

    trained = []

    def fake_train(config, run_id, quiet):
        point = {"ppo.learning_rate": config.ppo.learning_rate, "seed": config.seed}
        run_dir = Path(config.logging.output_root) / run_id
        run_dir.mkdir(parents=True)
        (run_dir / "summary.json").write_text(json.dumps({"eval/return_mean": _score(point)}))
        trained.append(point)
        return run_dir

    monkeypatch.setattr(sweep, "train", fake_train)
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({"base": "configs/ppo/tendon_tracking.yaml", **spec}))
    out = sweep.run_sweep(path, overrides=[f"logging.output_root={tmp_path / 'runs'}"], count=count)
    with open(out / "summary.csv") as f:
        rows = list(csv.DictReader(f))
    return trained, rows, (out / "summary.md").read_text().splitlines()


def test_offline_runner_grid_count_and_ranked_summary(tmp_path, monkeypatch):
    values = [1e-4, 1e-3, 1e-2]
    spec = {"method": "grid", "parameters": {"ppo.learning_rate": {"values": values}, "seed": {"value": 7}}}
    trained, rows, md = _run(tmp_path, monkeypatch, spec)
    assert trained == [{"ppo.learning_rate": v, "seed": 7} for v in values]
    assert [float(r["eval/return_mean"]) for r in rows] == pytest.approx([_score(p) for p in trained])
    assert md[2].startswith("| 0.001 | 7 | -0.0")  # ranked: the best point first
    trained, rows, _ = _run(tmp_path / "two", monkeypatch, spec, count=2)
    assert [p["ppo.learning_rate"] for p in trained] == values[:2] and len(rows) == 2


@pytest.mark.parametrize("method", ["random", "bayes"])
def test_offline_runner_draws_count_random_points(tmp_path, monkeypatch, method):
    """``bayes`` has no offline model: it draws random points like ``random``."""
    lr = {"distribution": "log_uniform_values", "min": 1e-4, "max": 1e-2}
    spec = {"method": method, "metric": {"name": "eval/return_mean"}, "parameters": {"ppo.learning_rate": lr}}
    trained, rows, _ = _run(tmp_path, monkeypatch, spec, count=5)
    expected = sweep.random_points(spec["parameters"], 5)
    assert [p["ppo.learning_rate"] for p in trained] == pytest.approx([p["ppo.learning_rate"] for p in expected])
    assert len(rows) == 5
    trained, _, _ = _run(tmp_path / "default", monkeypatch, spec)
    assert len(trained) == 8  # without --count: eight points
