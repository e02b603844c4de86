"""Every script of ``scripts/`` runs in the tests, so none can rot unseen.

Each script has a smoke mode (``--smoke``: the script's own code paths at tiny sizes, its
files written under ``--out`` with a ``_smoke`` suffix; a few older scripts use ``--quick``)
and a test that runs it as a user would, in its own interpreter, and checks what it wrote
against an independent expectation: the committed results it must reproduce, a physical
property, or the same figure computed another way. This file holds the evaluation, rendering,
contact and tooling scripts and the check that every script is run by some test; the control
and identification reproductions are in ``test_scripts_smoke_control.py``, the benchmarks in
``test_scripts_bench.py`` and ``test_script_bench_models.py``, the PyElastica comparisons in
``test_env_elastica.py``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from _isolated import REPO_ROOT
from _scripts import SCRIPTS_DIR, run_script, run_smoke

RESULTS = Path(REPO_ROOT) / "results"
TESTS = Path(__file__).resolve().parent


def _json(path: Path) -> dict:
    assert path.is_file(), f"the script did not write {path.name}"
    return json.loads(path.read_text())


def test_every_script_is_run_by_a_test():
    """Each ``scripts/*.py`` is run (``run_script``/``run_smoke``) or has its ``main`` called
    by some test module; ``gpu_check.sh`` is checked below."""
    sources = "\n".join(p.read_text() for p in TESTS.glob("test_*.py"))
    ran = set(re.findall(r"""run_(?:script|smoke)\(\s*["']([a-z_]+)["']""", sources))
    ran |= set(re.findall(r"""load_script\(\s*["']([a-z_]+)["']\s*\)\.main\(""", sources))
    scripts = {p.stem for p in SCRIPTS_DIR.glob("*.py")}
    assert scripts - ran == set(), f"scripts no test runs: {sorted(scripts - ran)}"


def test_gpu_check_calls_only_flags_the_scripts_accept():
    """``gpu_check.sh`` needs a GPU machine, so it is not run here; its script calls are
    checked instead: valid shell, and every ``--flag`` it passes to a Python script is one
    that script's argument parser declares."""
    import subprocess

    path = SCRIPTS_DIR / "gpu_check.sh"
    subprocess.run(["bash", "-n", str(path)], check=True)
    text = path.read_text().replace("\\\n", " ")
    calls = re.findall(r"scripts/([a-z_]+)\.py([^\n|]*)", text)
    assert {name for name, _ in calls} >= {"bench_envs", "bench_planning"}
    for name, args in calls:
        declared = set(
            re.findall(r"""add_argument\(\s*["'](--[a-z-]+)["']""", (SCRIPTS_DIR / f"{name}.py").read_text())
        )
        used = set(re.findall(r"(--[a-z-]+)", args))
        assert used <= declared, f"gpu_check.sh passes {sorted(used - declared)} to {name}.py"


def test_demo_integrators_agree(tmp_path):
    run_smoke("demo", "--out", str(tmp_path))
    summary = _json(tmp_path / "tendon_arm.json")
    assert summary["horizon_s"] == pytest.approx(0.3)
    tips = np.array([r["final_tip_m"] for r in summary["runs"].values()])
    assert tips.shape == (2, 3) and np.all(np.isfinite(tips))
    assert np.all((tips[:, 2] > 0.24) & (tips[:, 2] <= 0.25))  # the 0.25 m arm bends a little in 0.3 s
    # the environments' fast integrator against Tsit5 at 1e-4 s (measured 1.2e-4 L)
    assert summary["max_tip_difference_rel_L"] < 1e-3
    assert (tmp_path / "tendon_arm.png").stat().st_size > 10_000


def _other_env_row(path: Path, committed: Path) -> dict:
    """Seed ``path`` with an earlier run's report holding one row of another env (a row of
    the ``committed`` report, renamed); return the row (a run restricted to some envs must
    keep it)."""
    row = dict(json.loads(committed.read_text())["rows"][0], env="OtherEnv-v0")
    path.write_text(json.dumps({"meta": {}, "rows": [row]}))
    return row


def test_evaluate_experts_keeps_other_rows_and_experts_beat_random(tmp_path):
    kept = _other_env_row(tmp_path / "experts_smoke.json", RESULTS / "experts.json")
    run_smoke("evaluate_experts", "--out", str(tmp_path / "experts.json"))
    rows = _json(tmp_path / "experts_smoke.json")["rows"]
    assert kept in rows
    mine = {r["policy"]: r for r in rows if r["env"] == "TendonTracking-v0"}
    assert set(mine) == {"expert/quasi_static", "expert/hoclf", "random"}
    assert all(r["episodes"] == 2 for r in mine.values())
    expert, random = mine["expert/quasi_static"], mine["random"]
    assert expert["final_success"] == 1.0 and random["final_success"] == 0.0
    assert expert["error_final"] < 0.1 * random["error_final"]
    assert "| TendonTracking-v0 | expert/quasi_static |" in (tmp_path / "experts_smoke.md").read_text()


def test_evaluate_suite_rows_read_the_committed_runs(tmp_path):
    """Every committed policy of TendonTracking-v0 is loaded from its checkpoint and solves
    the two smoke episodes; the training figures come from each run's ``eval.json``."""
    kept = _other_env_row(tmp_path / "suite_smoke.json", RESULTS / "suite.json")
    run_smoke("evaluate_suite", "--out", str(tmp_path / "suite.json"))
    report = _json(tmp_path / "suite_smoke.json")
    assert kept in report["rows"] and report["meta"]["episodes"] == 2 and report["meta"]["quick"]
    mine = {r["policy"]: r for r in report["rows"] if r["env"] == "TendonTracking-v0"}
    assert set(mine) >= {"random", "expert/quasi_static", "ppo", "sb3_ppo"}
    for kind in ("ppo", "sb3_ppo", "bc", "dagger"):
        if kind not in mine:
            continue
        committed = json.loads((RESULTS / "tendon_tracking" / kind / "eval.json").read_text())
        assert mine[kind]["env_steps"] == committed["env_steps"], kind
        assert mine[kind]["train_wall_s"] == pytest.approx(committed["train_wall_s"]), kind
        assert mine[kind]["final_success"] == 1.0, kind  # both smoke episodes (93-100 % of the committed 128)
    assert mine["random"]["error_mean"] > 3 * mine["ppo"]["error_mean"]
    bench = json.loads((RESULTS / "bench" / "envs_cpu.json").read_text())
    (committed_rate,) = [
        r["env_steps_per_s"] for r in bench["rows"] if r["env"] == "TendonTracking-v0" and r["num_envs"] == 1024
    ]
    assert mine["ppo"]["env_steps_per_s"] == pytest.approx(committed_rate)


def test_evaluate_suite_refreshes_the_throughput_column_only(tmp_path):
    """``--refresh-throughput`` evaluates nothing: every row keeps its figures and takes its
    env's newest committed env-steps/s (the committed table is refreshed)."""
    committed = json.loads((RESULTS / "suite.json").read_text())
    stale = {**committed, "rows": [{**r, "env_steps_per_s": 1.0} for r in committed["rows"]]}
    (tmp_path / "suite.json").write_text(json.dumps(stale))
    run_script("evaluate_suite", "--refresh-throughput", "--out", str(tmp_path / "suite.json"))
    refreshed = _json(tmp_path / "suite.json")
    assert refreshed["rows"] == committed["rows"]
    assert "throughput_refreshed" in refreshed["meta"]


def test_compare_policies_reproduces_the_committed_table(tmp_path):
    """The table is a pure function of the committed run folders: regenerated, it must equal
    ``results/policies.{json,md}``."""
    run_script("compare_policies", "--out", str(tmp_path))
    assert (tmp_path / "policies.json").read_text() == (RESULTS / "policies.json").read_text()
    assert (tmp_path / "policies.md").read_text() == (RESULTS / "policies.md").read_text()
    warm = sorted(p.parent.name for p in tmp_path.glob("*/warm_start.png"))
    assert warm == sorted(p.parent.name for p in RESULTS.glob("*/ppo_warm")) and warm


def test_compare_contact_mujoco_row_within_the_suite_tolerance(tmp_path):
    from sorogym.testing import BOX_TOLERANCES

    run_smoke("compare_contact_mujoco", "--out", str(tmp_path))
    (row,) = _json(tmp_path / "box_on_plane_mujoco_smoke.json")["rows"]
    bound = BOX_TOLERANCES[row["case"]]
    assert row["case"] == "slide_and_spin" and row["travel_m"] > 0.05
    assert row["position_error_rel"] < bound["position_error_rel"]
    assert row["rotation_error_rad"] < bound["rotation_error_rad"]
    assert row["mujoco_face_up"] == row["sorogym_face_up"]


def test_study_contact_formulation_pc_beats_the_one_evaluation_scheme(tmp_path):
    run_smoke("study_contact_formulation", "--out", str(tmp_path))
    rows = {r["scheme"]: r for r in _json(tmp_path / "formulation_smoke.json")["rows"]}
    assert set(rows) == {"linear_trapezoid", "trapezoid_pc"}
    for r in rows.values():
        assert r["finite"] and r["dt_ms"] == 0.2 and r["evaluations_per_s"] > 0 and r["wall_per_simulated_s"] > 0
        assert 0 < r["position_error"] < 5e-3 and 0 < r["rotation_error"] < 0.1  # 0.1 s drop against 10 us steps
    # at the same step, the predictor-corrector is the more accurate (measured 0.31 vs 0.78 mm)
    assert rows["trapezoid_pc"]["position_error"] < rows["linear_trapezoid"]["position_error"]
    assert rows["trapezoid_pc"]["evaluations_per_s"] == 2 * rows["linear_trapezoid"]["evaluations_per_s"]


def test_profile_kernels_attributes_the_kernels(tmp_path):
    out = tmp_path / "kernels.json"
    run_smoke("profile_kernels", "--json", str(out))
    report = _json(out)
    assert report["segments"] == 1 and report["num_dofs"] == 12  # a free joint (6) and one segment (6)
    kernels = report["kernels"]
    assert len(kernels) == report["num_kernels"] > 10
    assert sum(k["us"] for k in kernels) == pytest.approx(report["profiled_kernel_us"])
    assert report["wall_us"] > 0 and report["profiled_kernel_us"] > 0
    attributed = [k for k in kernels if k["source"] and not k["source"].startswith("(")]
    assert len(attributed) > 0.8 * len(kernels)  # to a sorogym source line
    assert all(re.match(r"[\w/]+\.py:\d+ ", k["source"]) for k in attributed)


def test_render_robots_draws_every_robot(tmp_path):
    import matplotlib.image

    run_smoke("render_robots", "--out", str(tmp_path))
    source = (SCRIPTS_DIR / "render_robots.py").read_text()
    names = re.search(r"for f in \(([^)]*)\)", source).group(1).replace(" ", "").split(",")
    images = {p.stem: matplotlib.image.imread(p) for p in tmp_path.glob("*.png")}
    assert set(images) == set(names) and len(names) == 7
    for name, img in images.items():
        assert img.shape[:2] == (64, 64), name
        assert img[..., :3].std() > 0.02, f"{name} is blank"
    pixels = [img[..., :3].ravel() for img in images.values()]
    assert all(not np.array_equal(a, b) for i, a in enumerate(pixels) for b in pixels[i + 1 :])


def test_soak_counts_nothing_diverged_and_keeps_other_rows(tmp_path):
    kept = _other_env_row(tmp_path / "soak_smoke.json", RESULTS / "bench" / "soak.json")
    run_smoke("soak_envs", "--out", str(tmp_path))
    rows = _json(tmp_path / "soak_smoke.json")["rows"]
    assert kept in rows
    mine = [r for r in rows if r["env"] == "StrainTracking-v0"]
    assert [r["actions"] for r in mine] == ["uniform", "bang_bang", "held_extreme"]
    for r in mine:
        assert r["env_steps"] >= 10 and r["num_envs"] == 2
        assert r["diverged_episodes"] == 0 and r["nonfinite_to_learner"] == 0
        assert {f for f, _, _ in r["randomization"]} >= {"young_modulus", "damping", "density"}
