"""Reproduce the tapered rod of the Lie-group framework paper (its Table 4, Figs. 12-15):
statics of a 1 m conical rod under a tip force and a tip moment with local-control strain
bases, against a converged reference.

The rod (Table 4): length 1 m, radius 3 cm at the clamped end and 1.5 cm at the loaded end,
Young's modulus 0.2 MPa, Poisson's ratio 0.45, no gravity. It lies along x; the loads are
dead loads at the tip: an upward force ``F_z`` of 0.25, 0.5, 0.75, 1 N (Fig. 12, upper) and a
moment about ``-y`` of 0.05, 0.1, 0.15, 0.2 N m (Fig. 12, lower).

Reference: the Cosserat rod's static boundary-value problem with the same constitutive law
as the model (``diag(G J, E I, E I)`` on the curvatures, ``diag(E A, G A, G A)`` on the
stretch and shears, the section's radius linear in ``s``), solved by shooting in float64
(scipy ``solve_ivp`` DOP853, tolerance 1e-12; Brent's method on the base moment, which
the in-plane loads keep about ``y``; ten load increments per step, each started from the
base moment's exact expression ``M + p_tip x F`` at the previous tip).
It shares no code with the GVS model, so its distance to the GVS solution is the
discretisation error of the strain basis, the quadrature and the Magnus steps.

GVS: one link with the in-plane strains the loads excite (bending ``ky``, stretch ``sx``,
shear ``sz``; the out-of-plane ones stay zero by symmetry). Every basis gets at least
``MIN_POINTS`` Gauss points (and Magnus cells) on the rod, spread over its knot spans, and
at least ``degree + 3`` per span (exact stiffness integrals), so the error measured is the
basis's, not the integration's (12 Legendre coordinates with 14 points: 2.1e-5 / 8.3e-5 of
L under the force / moment; with 48: 1.7e-7 / 6.4e-7).

The equilibrium ``K(q) = J_tip(q)^T w`` is followed over the four load steps by Newton's
method with backtracking (the residual of every iteration recorded, Fig. 14).

Reported, per basis (B-splines of degree 1 to 5, cubic Hermite, Legendre polynomials) and
number of coordinates per strain: the largest position error along the rod, as a fraction
of the length, over the load cases (Fig. 15: convergence with the control points); for the
default basis (cubic B-spline, 8 control points) the error along the rod per load (Fig. 13)
and the shapes (Fig. 12). Writes ``results/lie_group/tapered_rod.{json,md}`` and figures.

    python scripts/reproduce_tapered_rod.py          # full study (~10 min)
    python scripts/reproduce_tapered_rod.py --smoke --out /tmp/rod   # one basis, 0.5 N, 0.1 N m
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import equinox as eqx  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402
from scipy.optimize import brentq  # noqa: E402

import sorogym as sg  # noqa: E402
from sorogym.provenance import run_metadata, write_report  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

LENGTH, BASE_RADIUS, TIP_RADIUS = 1.0, 0.03, 0.015  # Table 4
YOUNG, POISSON = 2.0e5, 0.45
SHEAR = YOUNG / (2.0 * (1.0 + POISSON))
FORCES = (0.25, 0.5, 0.75, 1.0)  # N, along +z at the tip
MOMENTS = (0.05, 0.1, 0.15, 0.2)  # N m, about -y at the tip
ACTIVE = ("ky", "sx", "sz")
SAMPLES = np.linspace(0.0, LENGTH, 101)  # where positions are compared
MIN_POINTS = 48  # Gauss points per rod at least (see the module docstring)
DEFAULT = ("bspline", 3, 8)  # the basis of Figs. 12-14: cubic B-spline, 8 control points


def load_wrenches(forces=FORCES, moments=MOMENTS) -> dict[str, list[np.ndarray]]:
    """World-frame tip wrenches ``[moment, force]`` of the two load sequences."""
    return {
        "force": [np.array([0.0, 0.0, 0.0, 0.0, 0.0, f]) for f in forces],
        "moment": [np.array([0.0, -m, 0.0, 0.0, 0.0, 0.0]) for m in moments],
    }


# -- reference: Cosserat shooting -------------------------------------------------------


def _section(s):
    r = BASE_RADIUS + (TIP_RADIUS - BASE_RADIUS) * s / LENGTH
    area, inertia = np.pi * r**2, np.pi * r**4 / 4.0
    return np.array([SHEAR * 2 * inertia, YOUNG * inertia, YOUNG * inertia]), np.array(
        [YOUNG * area, SHEAR * area, SHEAR * area]
    )


def _shoot(m0, force):
    """Integrate ``p' = R v``, ``R' = R u^``, ``m' = -p' x n`` from the clamp with the
    internal moment ``m0`` (world frame); the internal force is the tip force throughout."""

    def rhs(s, y):
        R = y[3:12].reshape(3, 3)
        bending, stretching = _section(s)
        u = R.T @ y[12:] / bending
        v = np.array([1.0, 0.0, 0.0]) + R.T @ force / stretching
        dp = R @ v
        dR = R @ np.array([[0.0, -u[2], u[1]], [u[2], 0.0, -u[0]], [-u[1], u[0], 0.0]])
        return np.concatenate([dp, dR.ravel(), -np.cross(dp, force)])

    y0 = np.concatenate([np.zeros(3), np.eye(3).ravel(), m0])
    return solve_ivp(rhs, (0.0, LENGTH), y0, method="DOP853", rtol=1e-12, atol=1e-13, dense_output=True)


def _bracketed_root(f, guess: float) -> float:
    """Root of the scalar ``f`` near ``guess``: a bracket grown around it until ``f``
    changes sign, then Brent's method (the tip moment is steep and folds back in the base
    moment at large loads, where open methods stray)."""
    width = 1e-3 * (abs(guess) + 1e-3)
    for _ in range(40):
        a, b = guess - width, guess + width
        if np.sign(f(a)) != np.sign(f(b)):
            return brentq(f, a, b, xtol=1e-16, rtol=1e-15)
        width *= 1.6
    raise RuntimeError(f"no sign change of the tip moment around the base moment {guess}")


def reference_positions(wrenches, substeps: int = 10) -> list[np.ndarray]:
    """Backbone positions ``(len(SAMPLES), 3)`` of each wrench of the sequence, followed
    from the unloaded rod in ``substeps`` increments per load step; each solve starts from
    ``m0 = M + p_tip x F`` at the previous tip (the base moment's exact expression)."""
    out, previous, tip = [], np.zeros(6), np.array([LENGTH, 0.0, 0.0])
    for w in wrenches:
        for lam in np.arange(1, substeps + 1) / substeps:
            step = previous + lam * (w - previous)
            moment, force = step[:3], step[3:]
            guess = (moment + np.cross(tip, force))[1]
            # the loads act in the x-z plane, so the base moment is about y (by symmetry)
            root_y = _bracketed_root(
                lambda my, f=force, M=moment: _shoot(np.array([0.0, my, 0.0]), f).y[13, -1] - M[1], guess
            )
            shot = _shoot(np.array([0.0, root_y, 0.0]), force)
            miss = np.abs(shot.y[12:, -1] - moment).max()
            if miss > 1e-10:  # N m; the tip moments are 0.05 to 0.2 N m
                raise RuntimeError(f"reference shooting failed at {step}: tip moment off by {miss:.1e}")
            tip = shot.y[:3, -1]
        previous = w
        out.append(shot.sol(SAMPLES)[:3].T)
    return out


# -- GVS ----------------------------------------------------------------------------------


def gvs_model(kind: str, degree: int, count: int) -> sg.GVS:
    """One-link GVS rod with ``count`` coordinates per active strain."""
    params = sg.GVSParams.create(
        length=[LENGTH], radius=BASE_RADIUS, tip_radius=[TIP_RADIUS], density=1000.0, young_modulus=YOUNG,
        poisson_ratio=POISSON, gravity=[0.0, 0.0, 0.0], mounting="horizontal", dtype=jnp.float64,
    )  # fmt: skip
    if kind == "bspline":
        basis = sg.StrainBasis.bspline(ACTIVE, count, degree=degree)
    elif kind == "hermite":
        basis = sg.StrainBasis.hermite(ACTIVE, count // 2)
    else:
        basis, degree = sg.StrainBasis.create(ACTIVE, count - 1, kind=kind), count - 1
    spans = len(basis.breakpoints) - 1
    points = max(degree + 3, -(-MIN_POINTS // spans))
    return sg.GVS(params, basis, num_gauss_points=points)


@eqx.filter_jit
def _newton_step(model, q, wrench):
    """One Newton step on ``K(q) - J_tip(q)^T w``, backtracked (1, 1/2, ..., 1/16: the first
    step that lowers the residual norm); returns the new iterate and its residual norm."""

    def residual(q_):
        return model.elastic_force(q_) - model.jacobian(q_, LENGTH).T @ wrench

    r, J = residual(q), jax.jacfwd(residual)(q)
    step = jnp.linalg.solve(J, r)
    alphas = 0.5 ** jnp.arange(5.0)
    trial = jax.vmap(lambda a: jnp.linalg.norm(residual(q - a * step)))(alphas)
    k = jnp.argmax(trial < jnp.linalg.norm(r))
    return q - alphas[k] * step, trial[k]


@eqx.filter_jit
def _positions(model, q):
    return model.backbone_positions(q, jnp.asarray(SAMPLES))


def gvs_positions(model, wrenches, tol=1e-14, max_iterations=50):
    """Positions ``(len(SAMPLES), 3)`` at each wrench of the sequence and the residual norm
    of every Newton iteration (relative to the load's generalized force at the start of
    the step). Iterates to ``tol`` or until the residual stops falling (its rounding floor)."""
    q = jnp.zeros(model.num_dofs)
    out, history = [], []
    for w in wrenches:
        w = jnp.asarray(w)
        scale = float(jnp.linalg.norm(model.jacobian(q, LENGTH).T @ w)) or 1.0
        norms = [scale]
        for _ in range(max_iterations):
            q, norm = _newton_step(model, q, w)
            norms.append(float(norm))
            stalled = len(norms) > 4 and norms[-1] >= 0.5 * norms[-3] and norms[-1] < 1e-9 * scale
            if norms[-1] < tol * scale or stalled:
                break
        else:
            raise RuntimeError(f"Newton did not converge for {w}: residuals {norms[-5:]}")
        out.append(np.asarray(_positions(model, q)))
        history.append([x / scale for x in norms])
    return out, history


def position_errors(ours, reference) -> np.ndarray:
    """``(loads, len(SAMPLES))`` distances along the rod [m]."""
    return np.stack([np.linalg.norm(a - b, axis=1) for a, b in zip(ours, reference)])


def study(bases, loads, references):
    rows = []
    for kind, degree, count in bases:
        t0 = time.perf_counter()
        model = gvs_model(kind, degree, count)
        degree = {"hermite": 3, "legendre": count - 1}.get(kind, degree)
        row = dict(kind=kind, degree=degree, coordinates_per_strain=count, num_dofs=model.num_dofs)
        for name, wrenches in loads.items():
            ours, history = gvs_positions(model, wrenches)
            errors = position_errors(ours, references[name])
            row[name] = dict(
                max_error_over_length=float(errors.max() / LENGTH),
                tip_error_over_length=[float(e) for e in errors[:, -1] / LENGTH],
                newton_iterations=[len(h) - 1 for h in history],
            )
            if (kind, degree, count) == DEFAULT:
                row[name]["error_along_rod"] = errors.tolist()
                row[name]["positions"] = [p.tolist() for p in ours]
                row[name]["newton_residuals"] = history
        row["seconds"] = time.perf_counter() - t0
        rows.append(row)
        jax.clear_caches()  # one process compiles ~40 models: free their code (memory mappings)
        print(
            f"{kind:9s} p={degree} n={count:3d} ({model.num_dofs:3d} dofs): max error / L  force "
            f"{row['force']['max_error_over_length']:.2e}  moment {row['moment']['max_error_over_length']:.2e}"
            f"  ({row['seconds']:.1f} s)",
            flush=True,
        )
    return rows


def bases_of(smoke: bool):
    if smoke:
        return [DEFAULT]
    counts = (4, 6, 8, 12, 16, 24)
    out = [("bspline", p, n) for p in range(1, 6) for n in counts if n >= p + 1]
    out += [("hermite", 3, n) for n in counts]
    out += [("legendre", 0, n) for n in (2, 4, 6, 8, 10, 12)]
    return out


def plot(result, out: Path, stem: str):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    default = next(r for r in result["rows"] if (r["kind"], r["degree"], r["coordinates_per_strain"]) == DEFAULT)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, name in zip(axes, ("force", "moment")):
        for k, (ours, ref) in enumerate(zip(default[name]["positions"], result["reference"][name])):
            ours, ref = np.asarray(ours), np.asarray(ref)
            ax.plot(ref[:, 0], ref[:, 2], color="0.6", lw=4, label="reference" if k == 0 else None)
            ax.plot(
                ours[:, 0], ours[:, 2], color="C0", lw=1.5, label="GVS cubic B-spline, 8 points" if k == 0 else None
            )
        ax.set(xlabel="x [m]", ylabel="z [m]", title=f"tip {name} steps", aspect="equal")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / f"{stem}_shapes.png", dpi=120)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.5))
    for ax, name in zip(axes, ("force", "moment")):
        for k, e in enumerate(default[name]["error_along_rod"]):
            ax.semilogy(SAMPLES, np.maximum(e, 1e-16) / LENGTH, label=f"load step {k + 1}")
        ax.set(xlabel="s [m]", ylabel="position error / L", title=f"tip {name}")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / f"{stem}_error.png", dpi=120)
    fig, ax = plt.subplots(figsize=(5.5, 4))
    series = {}
    for r in result["rows"]:
        label = f"B-spline degree {r['degree']}" if r["kind"] == "bspline" else r["kind"]
        error = max(r["force"]["max_error_over_length"], r["moment"]["max_error_over_length"])
        series.setdefault(label, []).append((r["coordinates_per_strain"], error))
    for label, points in series.items():
        x, y = zip(*sorted(points))
        ax.loglog(x, y, "o-", label=label, ms=3)
    ax.set(xlabel="coordinates (control points) per strain", ylabel="max position error / L")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / f"{stem}_convergence.png", dpi=120)
    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    for name in ("force", "moment"):
        for k, h in enumerate(default[name]["newton_residuals"]):
            ax.semilogy(range(len(h)), h, "o-", ms=3, label=f"{name} step {k + 1}")
    ax.set(xlabel="Newton iteration", ylabel="residual / initial")
    ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(out / f"{stem}_newton.png", dpi=120)
    plt.close("all")


def markdown(result) -> str:
    lines = [
        "# Tapered rod under tip loads (Lie-group framework paper, Table 4, Figs. 12-15)",
        "",
        "Largest position error along the rod over the four load steps, as a fraction of the length, against a "
        "Cosserat shooting reference (`scripts/reproduce_tapered_rod.py`).",
        "",
        "| basis | degree | coordinates per strain | dofs | tip force | tip moment | time [s] |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['kind']} | {r['degree']} "
            f"| {r['coordinates_per_strain']} | {r['num_dofs']} | {r['force']['max_error_over_length']:.2e} "
            f"| {r['moment']['max_error_over_length']:.2e} | {r['seconds']:.1f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="the default basis, one load step each")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "lie_group")
    args = ap.parse_args(argv)
    loads = load_wrenches(FORCES[1:2], MOMENTS[1:2]) if args.smoke else load_wrenches()
    references = {name: reference_positions(w) for name, w in loads.items()}
    rows = study(bases_of(args.smoke), loads, references)
    stem = "tapered_rod_smoke" if args.smoke else "tapered_rod"
    result = dict(
        meta=run_metadata(
            args.smoke,
            ("jax", "scipy"),
            "Table 4 rod statics; reference: Cosserat shooting (DOP853, tol 1e-12, Brent on the base moment)",
        ),
        loads={name: [w.tolist() for w in ws] for name, ws in loads.items()},
        samples=SAMPLES.tolist(),
        reference={name: [p.tolist() for p in ps] for name, ps in references.items()},
        rows=rows,
    )
    write_report(args.out, stem, False, result, markdown)  # the stem names a smoke run itself
    plot(result, args.out, stem)
    print(f"wrote {args.out / stem}.{{json,md}} and figures")


if __name__ == "__main__":
    main()
