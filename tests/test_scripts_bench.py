"""The benchmark scripts' ``--smoke`` runs: ``scripts/bench_planning.py`` (both its parts),
``scripts/bench_envs.py`` and ``scripts/bench_contact.py``.

The benchmarks themselves run for minutes to hours and only on request, so a library change
that breaks one (a renamed argument, a changed result field, a NaN) would otherwise go
unseen until the next benchmark run. Each script runs here as a user runs it, in its own
interpreter, at the tiniest sizes that still take every code path once; the report it writes
into ``--out`` is then checked for what the script promises: a row for every case, finite
positive timings and throughputs, flags and success rates where they belong, and its meta
marked as a smoke run. The numbers themselves say nothing about speed at full size.
"""

from __future__ import annotations

import json
import math

import pytest
from _scripts import run_smoke

from sorogym.planning import PATH_KINDS

IK_CASES = [
    ("free", 3, False),
    ("free", 3, True),
    ("free", 4, False),
    ("free", 4, True),
    ("lattice", 3, False),
    ("lattice", 4, True),
]
CONTACT_CASES = ["rod_on_ground", "brittle_star_on_ground", "gripper_holding_box"]


def positive(x) -> bool:
    """A finite number > 0 (not a bool, not None)."""
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def finite(x) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def fraction(x) -> bool:
    return finite(x) and 0.0 <= x <= 1.0


def smoke_report(out, stem: str) -> dict:
    """The JSON report ``<out>/<stem>.json``, after checking that the run wrote exactly that
    report and its markdown table, nothing else."""
    assert sorted(p.name for p in out.iterdir()) == [f"{stem}.json", f"{stem}.md"]
    return json.loads((out / f"{stem}.json").read_text())


def assert_smoke_meta(meta: dict) -> None:
    notes = meta["notes"] if isinstance(meta["notes"], str) else " ".join(meta["notes"])
    assert meta["smoke"] is True and meta["quick"] is False and "smoke run" in notes


def test_bench_planning_smoke(tmp_path):
    run_smoke("bench_planning", "--out", str(tmp_path))
    report = smoke_report(tmp_path, "planning_cpu_smoke")
    assert_smoke_meta(report["meta"])

    rows = report["rows"]
    assert [(r["case"], r["segments"], r["extensible"]) for r in rows] == IK_CASES
    for r in rows:
        assert r["targets"] == 1 and r["iterations"] == 200
        assert positive(r["seconds"]) and positive(r["compile_s"]) and fraction(r["success"])
        assert sum(r["status_counts"].values()) == r["targets"]
        if r["success"] > 0:  # the solved targets meet the success threshold on the pose error
            assert 0.0 <= r["pose_error_mean"] <= r["pose_error_max"] < 1e-2
        else:
            assert r["pose_error_mean"] is None
    # one target per case, 8 seeds and 200 LM iterations: a free target is always reached
    assert all(r["success"] == 1.0 for r in rows if r["case"] == "free")

    paths = report["paths"]
    assert [p["path"] for p in paths] == list(PATH_KINDS)
    for p in paths:
        assert p["waypoints"] == 8 and positive(p["seconds"]) and finite(p["compile_s"])
        assert 0.0 <= p["position_error_mm_mean"] <= p["position_error_mm_max"] < 5.0  # 0.2 m paths
        assert 0.0 <= p["rotation_error_deg_mean"] <= p["rotation_error_deg_max"] < 1.0
        assert positive(p["max_tendon_speed"])

    modes = {t["initialization"]: t for t in report["trajectories"]}
    assert list(modes) == ["roadmap", "linear"]
    for t in modes.values():
        assert t["queries"] == 1 and t["waypoints"] == 17
        assert fraction(t["success"]) and positive(t["seconds_mean"])
        assert t["path_length_mean"] is None if t["success"] == 0 else positive(t["path_length_mean"])
    assert modes["roadmap"]["roadmap_nodes"] == 16 and positive(modes["roadmap"]["roadmap_build_s_mean"])
    assert modes["roadmap"]["success"] == 1.0  # the one query of the fixed scene has a collision-free plan

    md = (tmp_path / "planning_cpu_smoke.md").read_text()
    assert "| lattice | 4 | True | 1 |" in md and "Path following" in md and "| line only | 1 |" in md


def test_bench_planning_static_smoke(tmp_path):
    run_smoke("bench_planning", "--static-only", "--out", str(tmp_path))
    report = smoke_report(tmp_path, "planning_static_cpu_smoke")
    assert_smoke_meta(report["meta"])

    row = report["row"]
    assert row["env"] == "TendonReaching-v0" and row["goals"] == 4
    assert positive(row["seconds"]) and positive(row["compile_s"])
    assert row["success"] >= 0.75  # the goals are equilibria, so reachable
    assert 0.0 <= row["error_mm_median"] < 1.0 and finite(row["error_mm_max"])
    assert finite(row["max_tension"]) and row["max_tension"] >= 0.0

    banks = report["goal_sampling"]
    assert [b["sampling"] for b in banks] == ["equilibrium", "workspace"]
    for b in banks:
        assert b["goals"] == 8 and positive(b["build_s"])
        assert len(b["spread_mm"]) == 3 and all(finite(s) and s >= 0.0 for s in b["spread_mm"])
        assert positive(b["nn_mean_mm"]) and finite(b["nn_cv"]) and b["nn_cv"] >= 0.0
    assert banks[0]["acceptance"] is None and positive(banks[1]["acceptance"]) and banks[1]["acceptance"] <= 1.0

    md = (tmp_path / "planning_static_cpu_smoke.md").read_text()
    assert "| TendonReaching-v0 | 4 |" in md and "| workspace | 8 |" in md


def test_bench_envs_smoke(tmp_path):
    run_smoke("bench_envs", "--out", str(tmp_path), "--set", "num_substeps=3", "theta=0.5")
    report = smoke_report(tmp_path, "envs_cpu_smoke")
    assert_smoke_meta(report)
    assert report["overrides"] == {"num_substeps": 3, "theta": 0.5}

    rows = report["rows"]
    assert [(r["env"], r["num_envs"]) for r in rows] == [("StrainTracking-v0", 2)]
    r = rows[0]
    assert positive(r["env_steps_per_s"]) and positive(r["env_steps_per_s_median"])
    assert positive(r["best_call_s"]) and positive(r["median_call_s"]) and positive(r["compile_s"])
    assert r["steps_per_call"] == 8 and r["repeats"] == 1 and r["calls_per_repeat"] >= 1
    assert r["env_steps_per_s"] == pytest.approx(r["num_envs"] * r["steps_per_call"] / r["best_call_s"])
    assert r["num_substeps"] == 3 and r["control_dt"] == pytest.approx(r["num_substeps"] * r["substep_dt"])

    # the accuracy subprocess ran, and its result reached the row
    accuracy = report["accuracy"]["StrainTracking-v0"]
    assert "error" not in accuracy, accuracy.get("error")
    assert accuracy["num_steps"] == 5 and accuracy["reference"] == "tsit5_adaptive"
    assert accuracy["substep_dt"] == pytest.approx(r["substep_dt"])  # the overrides reached the subprocess
    assert finite(accuracy["tip_error_rel"]) and 0.0 <= accuracy["tip_error_rel"] < 1e-2
    assert finite(accuracy["point_error_rel"]) and positive(accuracy["wall_s"])
    assert r["tip_error_rel"] == accuracy["tip_error_rel"] and r["accuracy_point"] == accuracy["accuracy_point"]
    assert "adaptive" in report["accuracy_reference"]

    md = (tmp_path / "envs_cpu_smoke.md").read_text()
    assert "smoke run" in md and "| StrainTracking-v0 | 2 |" in md


def test_bench_contact_smoke(tmp_path):
    run_smoke("bench_contact", "--out", str(tmp_path))
    report = smoke_report(tmp_path, "contact_cpu_smoke")
    assert_smoke_meta(report["meta"])

    rows = report["rows"]
    assert [r["case"].split(" ")[0] for r in rows] == CONTACT_CASES
    for r in rows:
        assert r["num_envs"] == 2 and r["steps_per_call"] == 4 and positive(r["dt_s"])
        for key in ("contact", "free"):
            assert positive(r[f"{key}_steps_per_s"]) and positive(r[f"{key}_steps_per_s_median"])
            assert positive(r[f"{key}_compile_s"])
        assert r["contact_cost_ratio"] == pytest.approx(r["free_steps_per_s"] / r["contact_steps_per_s"])
        assert r["finite"] is True, r["case"]

    md = (tmp_path / "contact_cpu_smoke.md").read_text()
    assert all(f"| {r['case']} | 2 |" in md for r in rows)
