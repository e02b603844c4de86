"""The control and identification reproductions of ``scripts/`` (paper Tables VIII, the
pose-tracking, safety and gain-optimisation studies, App. D-A and D-B) in smoke mode: short
closed loops and a few optimiser steps, each checked for a property the full run relies on
(see ``test_scripts_smoke.py`` for the other scripts)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _scripts import load_script, run_smoke


def _json(path: Path) -> dict:
    assert path.is_file(), f"the script did not write {path.name}"
    return json.loads(path.read_text())


def test_configuration_metrics_by_hand():
    """Eqs. 23-24 of the script on an error signal with known values, per coordinate times
    (1..6): 2 in the last 10 % of each post-change setpoint interval (setpoints change at 3, 6,
    9 and 12 s; the windows are [5.7, 6), [8.7, 9), [11.7, 12), [14.7, 15)), 1 elsewhere in
    the regulation phase, 3 in the tracking phase."""
    script = load_script("reproduce_configuration_control")
    from sorogym.robots import STRAIN_SETPOINTS, TRACKING_END

    assert [s[0] for s in STRAIN_SETPOINTS] == [0.0, 3.0, 6.0, 9.0, 12.0]
    ts = np.round(np.arange(0.0, TRACKING_END + 1e-9, 0.01), 6)
    scale = np.arange(1.0, 7.0)
    window = np.zeros_like(ts, dtype=bool)
    for end in (6.0, 9.0, 12.0, 15.0):
        window |= (ts >= end - 0.3) & (ts < end)
    value = np.where(ts < 15.0, np.where(window, 2.0, 1.0), 3.0)
    errors = -value[:, None] * scale  # the sign of q_d - q does not matter
    m = script.metrics(ts, errors)
    regulation = ts < 15.0
    np.testing.assert_allclose(m["terminal_mae"], 2 * scale)
    np.testing.assert_allclose(m["regulation_rmse"], np.sqrt(np.mean(value[regulation] ** 2)) * scale)
    np.testing.assert_allclose(m["tracking_rmse"], 3 * scale)
    assert m["regulation_rmse"][0] == pytest.approx(np.sqrt((1380 + 4 * 120) / 1500))  # 120 of 1500 samples at 2
    short = script.metrics(ts[ts < 1.0], errors[ts < 1.0])  # a run that ends in the first interval
    assert short["tracking_rmse"] is None and short["terminal_mae"] is None
    np.testing.assert_allclose(short["regulation_rmse"], scale)


def test_configuration_control_computed_torque_cancels_gravity(tmp_path):
    """Half a second on the first setpoint (the straight arm, mounted horizontally): the
    computed-torque controller holds it exactly; PD sags under gravity (kappa_y)."""
    run_smoke("reproduce_configuration_control", "--out", str(tmp_path / "cfg.json"))
    report = _json(tmp_path / "cfg_smoke.json")
    assert report["duration"] == 0.5 and report["meta"]["quick"]
    pd, ct = report["results"]["PD"], report["results"]["computed torque"]
    assert pd["tracking_rmse"] is None and pd["terminal_mae"] is None  # phases the run did not reach
    assert max(ct["regulation_rmse"]) < 1e-9
    assert pd["regulation_rmse"][1] > 0.1  # rad/m
    assert "| PD |" in (tmp_path / "cfg_smoke.md").read_text()


def test_pose_tracking_errors_are_finite_and_small(tmp_path):
    run_smoke("reproduce_pose_tracking", "--out", str(tmp_path / "pose.json"))
    r = _json(tmp_path / "pose_smoke.json")["results"]
    assert all(np.isfinite(v) for v in r.values()), r
    # the first 0.5 s of the figure eight (period 4 s): part of the path, tracked within cm
    assert 20 < r["span_p_mm"] < 134.6 and 0 < r["rmse_p_mm"] < 20 and 0 < r["rmse_R_deg"] < 15


def test_safety_controllers_approach_the_goal(tmp_path):
    run_smoke("reproduce_safety_control", "--out", str(tmp_path / "safety.json"))
    report = _json(tmp_path / "safety_smoke.json")
    assert report["duration"] == 0.5
    for name in ("hoclf", "hoclf_hocbf"):
        r = report["results"][name]
        assert r["finite"], name
        assert r["final_goal_distance_m"] < 0.8 * r["initial_goal_distance_m"], name
        assert r["peak_force_N"] <= 5.0 + 1e-6, name  # no contact yet, so no barrier violation
    assert (tmp_path / "safety_smoke.png").stat().st_size > 5_000


def test_gain_optimisation_lowers_the_loss(tmp_path):
    """Two Yogi steps through the reverse-mode closed loop already lower the best loss
    (the actuation-space case; the operational case's gradient is checked in
    ``test_control_configuration.py``)."""
    run_smoke("reproduce_gain_optimisation", "--cases", "actuation", "--out", str(tmp_path / "gains.json"))
    report = _json(tmp_path / "gains_smoke.json")
    assert report["setup"]["horizon_s"] == 0.5 and report["setup"]["iterations"] == 2
    r = report["results"]["actuation"]
    assert np.isfinite(r["loss_initial_median"]) and 0 < r["loss_best_final"] < r["loss_initial_median"]
    assert (tmp_path / "gains_smoke.png").is_file()


def test_sysid_moves_toward_the_true_material(tmp_path):
    run_smoke("reproduce_sysid", "--out", str(tmp_path))
    report = _json(tmp_path / "conical_arm_smoke.json")
    rmse = report["marker_rmse_m"]
    assert rmse["noise_floor_true_params"] < rmse["identified"] < rmse["initial"]
    # two Adam steps from the initial guess move E and rho towards the truth
    for name in ("young_modulus", "density"):
        start, end, true = (report[k][name] for k in ("initial", "recovered", "true"))
        assert abs(end - true) < abs(start - true), name


def test_residual_pipeline_reduces_the_marker_error(tmp_path):
    run_smoke("reproduce_residual", "--out", str(tmp_path))
    rmse = _json(tmp_path / "residual_smoke.json")["marker_rmse_m"]
    assert all(np.isfinite(v) for v in rmse.values()), rmse
    identified = rmse["identified model"]
    assert rmse["optimal residual"] < identified
    assert rmse["exact minimiser of eq. 12 (check)"] < rmse["optimal residual"]
    assert rmse["network residual, all"] < identified  # 20 network steps already help (measured 8.0 vs 19 mm)
