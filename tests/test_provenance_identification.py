"""Where results come from (:mod:`sorogym.provenance`) and the static identification of the
conical arm's material (:mod:`sorogym.identification`) at small sizes."""

import json
import subprocess

import jax.numpy as jnp
import numpy as np
import pytest

from sorogym import identification as ident
from sorogym import provenance


def _git(repo, *args):
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()


def test_git_state_of_a_checkout_clean_dirty_and_outside(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "a.txt").write_text("one\n")
    _git(repo, "add", "a.txt")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    head = _git(repo, "rev-parse", "HEAD")
    assert provenance.git_state(repo) == (head, False)
    (repo / "untracked.txt").write_text("x\n")
    assert provenance.git_state(repo) == (head, False)  # untracked files do not count
    (repo / "a.txt").write_text("two\n")
    assert provenance.git_state(repo) == (head, True)
    outside = tmp_path / "plain"
    outside.mkdir()
    assert provenance.git_state(outside) == (None, None)


def test_run_metadata_and_report_files(tmp_path):
    import numpy

    assert provenance.package_version("numpy") == numpy.__version__
    assert provenance.package_version("no-such-distribution-here") is None
    meta = provenance.run_metadata(True, ("numpy", "nope-pkg"), ["a note"], num_envs=4)
    assert meta["quick"] is True and meta["notes"] == ["a note"] and meta["num_envs"] == 4
    assert meta["versions"] == {"numpy": numpy.__version__, "nope-pkg": None}
    assert meta["git_revision"] == provenance.git_revision() and len(meta["git_revision"]) == 40
    assert len(meta["loadavg_start"]) == 3 and meta["cpu"]["cpu_count"] >= 1 and meta["date"].endswith("+00:00")
    args = provenance.report_parser("Title line.\n\nMore.", tmp_path / "default").parse_args(["--quick"])
    assert args.quick and args.out == tmp_path / "default"
    report = {"rows": [1, 2]}
    md = provenance.write_report(tmp_path / "out", "bench", True, report, lambda r: f"| {len(r['rows'])} |\n")
    assert md == "| 2 |\n" and (tmp_path / "out" / "bench_quick.md").read_text() == md
    assert json.loads((tmp_path / "out" / "bench_quick.json").read_text()) == report
    provenance.write_report(tmp_path / "out", "bench", False, report, lambda r: "")
    assert (tmp_path / "out" / "bench.json").exists()


def test_material_map_and_material_on_every_link():
    theta = np.array([0.4e6, 0.47, 1210.0])
    np.testing.assert_allclose(np.asarray(ident._material_of(ident._unconstrained(theta))), theta, rtol=1e-12)
    extreme = np.asarray(ident._material_of(jnp.array([-50.0, 0.0, 50.0])))
    assert np.all(extreme >= ident.MATERIAL_LOWER) and np.all(extreme <= ident.MATERIAL_UPPER)
    from sorogym.robots import conical_tendon_arm

    model = ident.with_material(conical_tendon_arm(dtype=jnp.float64), jnp.asarray(theta))
    p = model.params
    np.testing.assert_allclose(np.asarray(p.young_modulus), 0.4e6)
    np.testing.assert_allclose(np.asarray(p.shear_modulus), 0.4e6 / (2 * 1.47))
    np.testing.assert_allclose(np.asarray(p.density), 1210.0)


def test_marker_rmse_by_hand():
    pred = np.zeros((2, 2, 3))
    meas = np.zeros((2, 2, 3))
    meas[0, 0] = [3.0, 4.0, 0.0]  # 5 m off at one input, marker 0
    meas[1, 1, 2] = 1.0  # 1 m off at the other input, marker 1
    overall, per_marker = ident.marker_rmse(pred, meas)
    assert overall == pytest.approx(np.sqrt((25.0 + 1.0) / 4))
    assert per_marker == pytest.approx([np.sqrt(25.0 / 2), np.sqrt(1.0 / 2)])


def test_identification_moves_toward_the_true_material():
    """Three Adam steps on noise-free data of four equilibria: the loss falls at every step
    and the stiffness moves from the initial guess toward the true value; the synthetic data
    repeat by seed and their noise has the stated size."""
    from sorogym.robots import conical_tendon_arm

    model = conical_tendon_arm(dtype=jnp.float64)
    inputs, clean, measured = ident.synthetic_marker_data(model, ident.TRUE_MATERIAL, seed=2, num_inputs=4)
    again = ident.synthetic_marker_data(model, ident.TRUE_MATERIAL, seed=2, num_inputs=4)
    np.testing.assert_array_equal(np.asarray(measured), np.asarray(again[2]))
    assert np.all((np.asarray(inputs) >= 0) & (np.asarray(inputs) <= ident.MAX_TENSION))
    noise = np.asarray(measured - clean)
    assert 0.5 * ident.MARKER_NOISE < noise.std() < 1.5 * ident.MARKER_NOISE  # 48 draws
    theta, history, _ = ident.identify_material(model, inputs, clean, steps=3, log=lambda line: None)
    losses = [h["loss_m2"] for h in history]
    assert losses[0] > losses[1] > losses[2] > 0
    assert ident.TRUE_MATERIAL[0] < theta[0] < ident.INITIAL_MATERIAL[0]
