"""The Lie-group framework reproductions (``scripts/reproduce_tapered_rod.py``,
``scripts/reproduce_free_oscillation.py``) in smoke mode, checked against physical
expectations: the default B-spline basis within 2e-5 of the length of the independent
Cosserat shooting reference, Newton converging to a residual of 1e-12; the variational
scheme's energy error far below the trapezoidal scheme's on the released rod."""

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
