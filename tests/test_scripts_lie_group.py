"""The Lie-group framework reproductions (``scripts/reproduce_tapered_rod.py``,
``scripts/reproduce_free_oscillation.py``, ``scripts/reproduce_chiral_structure.py``,
``scripts/reproduce_concentric_tubes.py``, ``scripts/reproduce_cable_arm.py``,
``scripts/reproduce_finger.py``) in smoke mode, checked against physical
expectations: the default B-spline basis within 2e-5 of the length of the independent
Cosserat shooting reference, Newton converging to a residual of 1e-12; the variational
scheme's energy error far below the trapezoidal scheme's on the released rod; the chiral
structure's small-load shortening and twist on their closed forms, and a larger initial
torque making it more compliant; the concentric tubes' S-curve on its analytical arcs and
their snap at the torsion-only model's fold; the cable-driven arm's small-load tip rotation
on the linear Galerkin closed form, and its bending growing with the cables' tension; the
finger's small-load joint turn on the cable's moment-arm closed form, and its flexion
growing with the flexor's tension."""

from __future__ import annotations

import json

import numpy as np
from _scripts import run_smoke


def test_tapered_rod_smoke_matches_the_shooting_reference(tmp_path):
    run_smoke("reproduce_tapered_rod", "--out", str(tmp_path))
    result = json.loads((tmp_path / "tapered_rod_smoke.json").read_text())
    (row,) = result["rows"]
    assert (row["kind"], row["degree"], row["coordinates_per_strain"]) == ("bspline", 3, 8)
    for name in ("force", "moment"):
        assert row[name]["max_error_over_length"] < 2e-5, (name, row[name]["max_error_over_length"])
        assert min(h[-1] for h in row[name]["newton_residuals"]) < 1e-12
    tip = np.asarray(result["reference"]["force"][0])[-1]
    assert tip[2] > 0.3 and abs(tip[1]) < 1e-12  # bent upward, in the x-z plane
    for figure in ("shapes", "error", "convergence", "newton"):
        assert (tmp_path / f"tapered_rod_smoke_{figure}.png").is_file()


def test_free_oscillation_smoke_variational_energy_beats_the_trapezoid(tmp_path):
    run_smoke("reproduce_free_oscillation", "--out", str(tmp_path))
    result = json.loads((tmp_path / "free_oscillation_smoke.json").read_text())
    runs = {r["scheme"]: r for r in result["runs"]}
    assert result["initial_tip"][2] > 0.1  # the 10 N force bent the rod up
    assert runs["variational"]["max_energy_deviation"] < 1e-4
    assert runs["trapezoid"]["max_energy_deviation"] > 10 * runs["variational"]["max_energy_deviation"]
    assert (tmp_path / "free_oscillation_smoke_energy.png").is_file()


def test_chiral_structure_smoke_meets_the_closed_forms_and_softens_with_torque(tmp_path):
    """One ring of three rods between the ground and a plate: the shortening under a small
        force is ``F L / (N E A)``, the twist under a small torque that of clamped-guided rods in
        bending plus torsion (1e-6); under compression the strain grows with the force, and the
        more pre-twisted structure is the more compliant at every force; the concentric tubes' S-curve on
    its analytical arcs and their snap at the torsion-only model's fold."""
    run_smoke("reproduce_chiral_structure", "--out", str(tmp_path))
    result = json.loads((tmp_path / "chiral_structure_smoke.json").read_text())
    check = result["closed_form_check"]
    assert check["converged"]
    assert check["axial_rel_error"] < 1e-6 and check["torsion_rel_error"] < 1e-6, check
    low, high = sorted(result["curves"], key=lambda c: c["torque"])
    for curve in (low, high):
        assert len(curve["force"]) >= 4 and curve["force"][-1] == 3.0, curve["end"]
        assert np.all(np.diff(curve["strain"]) > 0), curve["strain"]
    assert np.all(np.asarray(high["strain"]) > np.asarray(low["strain"]))
    assert abs(high["twist"][0]) > 5 * abs(low["twist"][0]) > 0
    assert low["stable"][0]  # the barely twisted ring, unloaded
    sparsity = result["kkt_sparsity"]
    assert sparsity["size"] == result["structure"]["num_dofs"] + result["num_constraints"]
    assert 0 < sparsity["nonzeros"] < sparsity["size"] ** 2
    for figure in ("force_strain", "shapes", "kkt_sparsity"):
        assert (tmp_path / f"chiral_structure_smoke_{figure}.png").is_file()


def test_concentric_tubes_smoke_matches_the_arcs_and_the_torsion_only_fold(tmp_path):
    """Table 7's robot: the S-curve on its three analytical arcs (1e-10 m) and unstable;
    the quasi-static branch of a coarse discretisation folds within 0.05 rad of the
    torsion-only model's fold, stable before it; in time the snap (psi passing pi) comes
    after the fold, the run stays finite and ends on the snapped branch."""
    run_smoke("reproduce_concentric_tubes", "--out", str(tmp_path))
    result = json.loads((tmp_path / "concentric_tubes_smoke.json").read_text())
    s_curve = result["s_curve"]
    assert s_curve["max_error"] < 1e-10 and s_curve["residual"] < 1e-9
    assert s_curve["stability"] < 0
    (branch,) = result["branches"]
    fold = result["reference_fold"]["alpha"]
    assert branch["fold"] is not None and abs(branch["fold"] - fold) < 0.05, (branch["fold"], fold)
    assert np.all(np.asarray(branch["stability"][:-1]) > 0) and np.all(np.diff(branch["psi"]) > 0)
    (run,) = result["runs"]
    assert run["finite"] and run["snap_alpha"] is not None and run["delay"] > 0
    assert run["psi"][-1] > 1.5 * np.pi
    for figure in ("s_curve", "snap"):
        assert (tmp_path / f"concentric_tubes_smoke_{figure}.png").is_file()


def test_cable_arm_smoke_meets_the_galerkin_closed_form_and_bends_with_tension(tmp_path):
    """Two tapered sections of constant curvature: under 1e-4 N the tip rotation is the
    linear Galerkin solution (``K c = Q`` with the tapered ``E I`` and the cable moment ``T d``)
    to the geometric nonlinearity (~T); Euler-Bernoulli's continuous value is larger (the
    constant-curvature sections are stiffer than the rod). Under rising tension every
    equilibrium converges, the tip turns further, the pulled cable contracts, and the arm
    bends towards the pulled cables' side."""
    run_smoke("reproduce_cable_arm", "--out", str(tmp_path))
    result = json.loads((tmp_path / "cable_arm_smoke.json").read_text())
    (row,) = result["small_load_check"]
    assert row["galerkin_rel_error"] < 1e-4
    assert -0.3 < row["euler_bernoulli_rel_diff"] < 0
    one, two = result["sweeps"]
    for sweep in (one, two):
        assert all(sweep["converged"])
        assert np.all(np.diff(sweep["tip_rotation"]) > 0)
        assert np.all(np.diff(np.asarray(sweep["contraction"])[:, 0]) > 0)
    assert np.degrees(one["tip_rotation"][-1]) > 20
    tip = np.asarray(one["tip"][-1])
    assert tip[0] > 0.1 and abs(tip[1]) < 1e-9  # cable 0's side of the hanging arm: world +x
    assert (tmp_path / "cable_arm_smoke_shapes.png").is_file()


def test_finger_smoke_meets_the_moment_arm_closed_form_and_flexes_with_tension(tmp_path):
    """One soft joint of one link: under 1 mN of flexor tension the straight joint turns by
    ``T d l / (E I)`` to the geometric nonlinearity; the curled one by the closed form on the
    B-spline's geometry to the one-link approximation of its natural shape (a circular arc,
    within 1.5 % of the joint's length of the spline). Under rising tension every equilibrium
    converges, the joint flexes further, the flexor contracts and the fingertip drops."""
    run_smoke("reproduce_finger", "--out", str(tmp_path))
    result = json.loads((tmp_path / "finger_smoke.json").read_text())
    straight, curled = result["small_load_check"]
    assert straight["rel_error"] < 1e-4
    assert curled["rel_error"] < 0.05
    assert all(r["max_distance"] < 0.015 * r["length"] for r in result["natural_shapes"])
    for sweep in result["sweeps"]:
        assert all(sweep["converged"])
        assert np.all(np.diff(np.asarray(sweep["flexion"])[:, 0]) > 0)
        assert np.all(np.diff(sweep["contraction"]) > 0)
        assert np.all(np.diff(np.asarray(sweep["tip"])[:, 1]) < 0)
    for figure in ("shapes", "tip_trajectories"):
        assert (tmp_path / f"finger_smoke_{figure}.png").is_file()
