"""The Lie-group framework reproductions (``scripts/reproduce_tapered_rod.py``,
``scripts/reproduce_free_oscillation.py``, ``scripts/reproduce_chiral_structure.py``) in
smoke mode, checked against physical expectations: the default B-spline basis within 2e-5
of the length of the independent Cosserat shooting reference, Newton converging to a
residual of 1e-12; the variational scheme's energy error far below the trapezoidal scheme's
on the released rod; the chiral structure's small-load shortening and twist on their closed
forms, and a larger initial torque making it more compliant."""

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
    more pre-twisted structure is the more compliant at every force."""
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
