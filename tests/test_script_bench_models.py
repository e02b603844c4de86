"""``scripts/bench_models.py --smoke``: the model benchmark runs end to end and writes what it
promises.

The benchmark is run by hand, rarely, and takes hours in full; this test keeps it from rotting
unseen. Its smoke mode runs every section (PCS, GVS and articulated forward dynamics, the
Table IV rollouts, the fast integrators, the body trees) at the smallest sizes, in its own
interpreter as a user runs it, and the test then reads the written reports: every section
has exactly its rows, every timing [s or us] is positive and finite, every speedup positive,
sorogym and soromox agree where the benchmark compares them, every rollout stays finite, and
the files land in ``--out`` only (none under ``results/``). The numbers themselves are not
benchmarks and are not checked against any speed.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from _isolated import REPO_ROOT
from _oracles import oracle
from _scripts import run_smoke

pytestmark = pytest.mark.oracle

# The smoke sizes of MODES["smoke"] in the script.
FD_ROWS = {
    "forward_dynamics": [("PlanarPCS", 1), ("PCS", 1)],
    "gvs_forward_dynamics": [("GVS", 1)],
    "articulated_forward_dynamics": [("Articulated", 1)],
}
ROLLOUT_CASE = "tendon_spatial_pcs"
BEAM_HORIZON = 0.02  # s
CONVERGED_SEGMENTS = 3
FAST_CANDIDATES = {"0.01", "5e-05"}  # dt [s], as the report's keys
TREE_DT = 1e-3  # s
TREE_HORIZON = 0.01  # s

# Agreement with soromox (relative): the script asserts ARTICULATED_RTOL before timing the
# chain; PCS, GVS and the free rod agree to ~1e-7 (soromox's Gauss nodes carry ~5e-8, see
# test_oracle_soromox.py); the tip trajectories agree to 2e-8 of L over the full 3 s run
# (docs/benchmarks.md), held here to that bound.
ARTICULATED_RTOL = 1e-8
FD_RTOL = 1e-6
TIP_RMSE_OVER_L = 2e-8
# The 2-segment PCS against a 50-element Cosserat rod: a sanity bound [fraction of L] (the full
# run's tendon case agrees to 1.5 % of L; a diverged or misplaced rod is off by O(L)).
PYELASTICA_RMSE_OVER_L = 0.1


def positive(x) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x) and x > 0


def check_forward_dynamics(rows, expected, rtol):
    assert [(r["model"], r["segments"]) for r in rows] == expected
    for r in rows:
        for key in ("sorogym_us", "soromox_us", "sorogym_loop_us", "soromox_loop_us", "speedup", "speedup_loop"):
            assert positive(r[key]), (r["model"], key, r[key])
        assert r["speedup"] == pytest.approx(r["soromox_us"] / r["sorogym_us"])
        assert r["speedup_loop"] == pytest.approx(r["soromox_loop_us"] / r["sorogym_loop_us"])
        assert r["num_dofs"] > 0
        assert 0 <= r["max_rel_diff"] <= rtol, (r["model"], r["max_rel_diff"])


def check_models_report(report):
    """The assertions on models_cpu_smoke.json."""
    meta = report["meta"]
    assert meta["smoke"] is True and meta["quick"] is True
    assert "smoke mode" in meta["notes"][0]
    assert meta["notes"][-1] == "sections: ['pcs', 'gvs', 'articulated', 'rollouts', 'fast', 'trees']"
    assert positive(meta["total_wall_s"])

    for key, expected in FD_ROWS.items():
        rtol = ARTICULATED_RTOL if key == "articulated_forward_dynamics" else FD_RTOL
        check_forward_dynamics(report[key], expected, rtol)
        for stat in ("median", "min"):
            for suffix in ("", "_loop"):
                assert positive(report["summary"][f"{stat}_speedup_{key}{suffix}"])

    floor = report["dispatch_floor"]
    assert positive(floor["inline_us"]) and positive(floor["dispatched_us"])
    assert floor["inline_flops"] < 1000 <= floor["dispatched_flops"]  # either side of XLA's "cheap" count

    assert [r["case"] for r in report["rollouts"]] == [ROLLOUT_CASE]
    row = report["rollouts"][0]
    assert row["model"] == "PCS" and row["horizon_s"] == BEAM_HORIZON
    for key in ("sorogym_s", "soromox_s", "pyelastica_s", "speedup_vs_soromox", "speedup_vs_pyelastica"):
        assert positive(row[key]), (key, row[key])
    assert row["speedup_vs_soromox"] == pytest.approx(row["soromox_s"] / row["sorogym_s"])
    assert math.isfinite(row["compile_s_sorogym"]) and math.isfinite(row["compile_s_soromox"])
    assert positive(row["pyelastica_damping_rate_per_s"])
    assert row["converged_segments"] == CONVERGED_SEGMENTS
    tag = f"{CONVERGED_SEGMENTS}seg"
    agreement = row["tip_agreement"]
    assert set(agreement) == {
        "sorogym_vs_soromox",
        "sorogym_vs_pyelastica",
        f"sorogym_{tag}_vs_pyelastica",
        f"sorogym_vs_sorogym_{tag}",
    }
    for stats in agreement.values():
        assert all(math.isfinite(v) and v >= 0 for v in stats.values()), stats
    assert agreement["sorogym_vs_soromox"]["rmse_over_L"] <= TIP_RMSE_OVER_L
    for key in ("sorogym_vs_pyelastica", f"sorogym_{tag}_vs_pyelastica", f"sorogym_vs_sorogym_{tag}"):
        assert agreement[key]["rmse_over_L"] <= PYELASTICA_RMSE_OVER_L, (key, agreement[key])
    for lib in ("sorogym", "soromox", "pyelastica", f"sorogym_{tag}"):
        tip = row[f"final_tip_{lib}"]
        assert len(tip) == 3 and all(math.isfinite(x) for x in tip), (lib, tip)
    assert report["summary"]["rollout_speedup_vs_soromox"] == {ROLLOUT_CASE: row["speedup_vs_soromox"]}

    fast = report["fast_integrator"]
    assert [r["integrator"] for r in fast] == ["LinearTrapezoid", "SemiImplicitEuler", "Tsit5"]
    for r in fast:
        assert r["horizon_s"] == BEAM_HORIZON
        assert r["dt"] is not None, r  # every integrator passes the 1 % test at some candidate
        assert f"{r['dt']:g}" in FAST_CANDIDATES and 0 <= r["tip_error_rel"] <= 0.01, r
        assert positive(r["sorogym_s"]) and positive(r["pyelastica_s"]) and positive(r["speedup_vs_pyelastica"])
        tried = r["tried_tip_error_rel"]
        assert set(tried) <= FAST_CANDIDATES and tried[f"{r['dt']:g}"] == r["tip_error_rel"]
    # the implicit trapezoid passes at the largest step; the explicit schemes fail there first
    assert fast[0]["dt"] == 0.01
    for r in fast[1:]:
        failed = r["tried_tip_error_rel"]["0.01"]
        assert failed is None or failed > 0.01, r


def check_trees_report(report):
    """The assertions on trees_cpu_smoke.json."""
    assert report["meta"]["smoke"] is True
    assert set(report["wall_s_of"]) == {"robots", "scaling", "floating_rod_vs_soromox"}
    assert all(positive(v) for v in report["wall_s_of"].values())

    assert [(r["robot"], r["dtype"]) for r in report["robots"]] == [("gripper", "float32")]
    robot = report["robots"][0]
    assert robot["output_dtype"] == "float32"
    for key in ("call_us", "loop_us", "rollout_s"):
        assert positive(robot[key]), (key, robot[key])
    assert robot["rollout_finite"] is True
    assert robot["rollout_steps"] == round(TREE_HORIZON / TREE_DT)
    assert robot["num_bodies"] > 1 and robot["num_dofs"] > 0 and robot["num_inputs"] > 0
    assert len(robot["final_root_position"]) == 3 and all(math.isfinite(x) for x in robot["final_root_position"])

    assert [r["arms"] for r in report["scaling"]] == [1]
    arm = report["scaling"][0]
    assert arm["num_bodies"] == 2
    for key in ("call_us", "loop_us", "loop_us_per_arm", "loop_us_per_dof"):
        assert positive(arm[key]), (key, arm[key])
    assert arm["loop_vs_1_arm"] == 1.0 and arm["dofs_vs_1_arm"] == 1.0

    check_forward_dynamics(report["floating_rod_vs_soromox"], [("free PCS rod", 1)], FD_RTOL)

    summary = report["summary"]
    assert summary["all_rollouts_finite"] is True
    assert set(summary["floating_rod_speedup_vs_soromox"]) == {"1"}
    for key in ("floating_rod_speedup_vs_soromox", "floating_rod_speedup_vs_soromox_loop"):
        assert positive(summary[key]["1"])
    assert positive(summary["brittle_star_loop_us_per_arm"]["1"])


def test_bench_models_smoke(tmp_path):
    oracle("soromox")
    oracle("elastica")
    results = Path(REPO_ROOT) / "results"
    table_iv = results / "comparison" / "table_iv.md"
    table_iv_mtime = table_iv.stat().st_mtime_ns if table_iv.exists() else None

    run_smoke("bench_models", "--out", str(tmp_path))

    assert {p.name for p in tmp_path.iterdir()} == {
        "models_cpu_smoke.json",
        "models_cpu_smoke.md",
        "trees_cpu_smoke.json",
        "trees_cpu_smoke.md",
        "table_iv.md",
    }
    check_models_report(json.loads((tmp_path / "models_cpu_smoke.json").read_text()))
    check_trees_report(json.loads((tmp_path / "trees_cpu_smoke.json").read_text()))
    for name, heading in (
        ("models_cpu_smoke.md", "**Fast integrators"),
        ("trees_cpu_smoke.md", "**Free-floating PCS rod"),
        ("table_iv.md", f"| {ROLLOUT_CASE} | PCS |"),
    ):
        assert heading in (tmp_path / name).read_text(), name
    assert not list(results.rglob("*_smoke*"))  # nothing of the smoke run under results/
    assert (table_iv.stat().st_mtime_ns if table_iv.exists() else None) == table_iv_mtime
