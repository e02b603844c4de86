"""Reproduce the three-tube concentric tube robot of the Lie-group framework paper (its
Table 7, Figs. 21-24): the S-curve against its analytical solution and the snapping of two
precurved tubes under a drive rotation, quasi-statically and in time.

The robot (``sg.robots.concentric_tube_robot``, Table 7): a 0.6 m wire (radius 2.5 mm,
precurvature 6 1/m) inside a 0.4 m tube (5 mm, 4 1/m), both through a 0.05 m straight
outer tube (50 mm, 10 GPa) held by the base; ``E`` 2 GPa, Poisson's ratio 0.45. The table
leaves open the bores (each tube's bore is the next inner tube's outer radius), the
density (nitinol, 6450 kg/m^3), the straight tube between each drive and the plate (0.1 m)
and the damping; no gravity.

* **S-curve (Fig. 24)**: the middle tube turned by pi against the wire. With torsionally
  rigid tubes the backbone is three circular arcs (inside the outer tube, the overlap at the
  stiffness-weighted curvature ``(E I_0 k_0 - E I_1 k_1) / sum E I``, the wire alone at its
  own): our equilibrium from the opposed state against that closed form, and its stability
  (smallest eigenvalue of the Hessian of the potential relative to the stiffness at the
  unrotated equilibrium).
* **Snapping, quasi-statically (Fig. 23)**: the middle tube's drive turned from 0 in steps
  (each equilibrium from the previous; the step halved where Newton fails, down to
  ``FOLD_RESOLUTION``): the distal relative angle ``psi`` of the two curved tubes against the
  torsion-only model (``sorogym.testing.two_tube_torsion_branch``: the drive angle that holds
  each ``psi``), the stability of each equilibrium, and the fold (the snap) against the
  model's, for several discretisations (bending and twist orders).
* **Snapping in time**: the drive turned at a constant rate from the unrotated equilibrium
  (linearly implicit trapezoid with the tangent stiffness, ``h`` = ``DT``): ``psi``, tip and
  kinetic energy over time; the snap (``psi`` passing pi) comes later than the quasi-static
  fold by a delay that shrinks with the rate (slow passage through a fold).

Writes ``results/lie_group/concentric_tubes.{json,md}`` and the figures
``concentric_tubes_s_curve.png`` (Fig. 24), ``concentric_tubes_snap.png`` (Fig. 23: branch,
time series and shapes).

    python scripts/reproduce_concentric_tubes.py                        # (~5 min on 2 cores)
    python scripts/reproduce_concentric_tubes.py --smoke --out /tmp/ctr  # one discretisation, short runs
"""

from __future__ import annotations

import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import scipy.linalg  # noqa: E402
import scipy.optimize  # noqa: E402

import sorogym as sg  # noqa: E402
from sorogym.provenance import reproduction_args, run_metadata, write_report  # noqa: E402
from sorogym.testing import piecewise_arc_backbone, two_tube_torsion_branch  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: (bending_order, twist_order) of the discretisations compared; the first is the default.
ORDERS = ((2, 3), (1, 2), (3, 4), (4, 6))
ALPHA_STEP = 0.1  # [rad] drive step of the quasi-static continuation
FOLD_RESOLUTION = 1e-3  # [rad] smallest step: the fold is located to this
MAX_ALPHA = 2 * np.pi
RATES = (1.0, 0.25)  # [rad/s] drive rates of the runs in time
DT = 2e-4  # [s]
VISCOSITY = 2e7  # [Pa s] Kelvin-Voigt: retardation 3 eta / E = 30 ms in the two curved tubes
SNAP_TUBES = (0, 1)  # the wire and the middle tube


def robot(orders=ORDERS[0]) -> sg.ConcentricTubeRobot:
    gauss = max(4, orders[0] + 1, orders[1])  # enough points to resolve both bases
    return sg.robots.concentric_tube_robot(
        bending_order=orders[0], twist_order=orders[1], num_gauss_points=gauss, damping=VISCOSITY
    )


def stiffness(model: sg.ConcentricTubeRobot) -> dict[str, np.ndarray]:
    sec = model.params.section_properties()
    p = model.params
    return dict(
        EI=np.asarray(p.young_modulus * sec["second_moment"]), GJ=np.asarray(p.shear_modulus * sec["polar_moment"])
    )


def make_solver(model: sg.ConcentricTubeRobot):
    """``(solve, q_rest, H0)``: ``solve(alpha, q0) -> (q, psi, residual, H)`` at the middle
    tube's drive angle ``alpha`` from ``q0`` (Newton at the full load), with the Hessian
    ``H = d(G + K)/dq`` of the potential; ``q_rest``, ``H0`` the unrotated equilibrium (by load
    continuation from the straight tubes) and its Hessian."""
    overlap_end = jnp.asarray([float(model.tube_tips[1])])

    @jax.jit
    def solve(alpha, q0):
        m = model.update_params(rotation=jnp.asarray([0.0, 1.0, 0.0]) * alpha)
        q = m.static_equilibrium(q0=q0, ramp_steps=0, throw=False)
        theta = m.tube_angles(q, overlap_end)[:, 0]
        residual = jnp.max(jnp.abs(m.potential_force(q))) / jnp.max(jnp.abs(m.elastic_force(jnp.zeros_like(q))))
        return q, theta[1] - theta[0], residual, jax.jacfwd(m.potential_force)(q)

    q_rest = jax.jit(lambda m: m.static_equilibrium())(model)  # load continuation from the straight tubes
    q_rest, _, _, H0 = solve(0.0, q_rest)
    return solve, q_rest, np.asarray(H0)


def stability(H, H0) -> float:
    """Smallest eigenvalue of ``H`` relative to ``H0`` (``H v = lambda H0 v``): 1 at the
    unrotated equilibrium, negative where an equilibrium is unstable."""
    H = np.asarray(H)
    try:
        return float(scipy.linalg.eigh(0.5 * (H + H.T), H0, eigvals_only=True)[0])
    except np.linalg.LinAlgError:  # H0 numerically not positive definite
        return float("nan")


def s_curve(model: sg.ConcentricTubeRobot, solve, H0) -> dict:
    """The opposed state (rotation pi, tubes started opposed) against three circular arcs."""
    q0 = jnp.zeros(model.num_dofs).at[model.twist_offsets[1]].set(np.pi)
    q, psi, residual, H = solve(np.pi, q0)
    m = model.update_params(rotation=[0.0, np.pi, 0.0])
    tips = np.asarray(model.tube_tips)
    s = np.linspace(0.0, tips[0], 121)
    pos = np.asarray(m.backbone_positions(q, jnp.asarray(s)))
    EI = stiffness(model)["EI"]
    k = np.asarray(model.params.precurvature)
    curvatures = [(EI[0] * k[0] - EI[1] * k[1]) / EI.sum(), (EI[0] * k[0] - EI[1] * k[1]) / EI[:2].sum(), k[0]]
    lengths = [tips[2], tips[1] - tips[2], tips[0] - tips[1]]
    plane = piecewise_arc_backbone(curvatures, lengths, s)
    R = np.asarray(model.params.base_rotation)
    ref = plane[:, :1] * R[:, 0] + plane[:, 1:] * R[:, 1]
    error = np.linalg.norm(pos - ref, axis=1)
    return dict(
        s=s.tolist(),
        positions=pos.tolist(),
        analytical=ref.tolist(),
        curvatures=[float(c) for c in curvatures],
        max_error=float(error.max()),
        relative_error=float(error.max() / tips[0]),
        psi=float(psi),
        residual=float(residual),
        stability=stability(H, H0),
    )


def continuation(solve, q_rest, H0, max_alpha: float, step: float) -> dict:
    """Quasi-static drive rotation from 0; halves the step where Newton fails or ``psi``
    jumps (more than 0.5 rad) until ``FOLD_RESOLUTION``: the last accepted angle is the fold."""
    alpha, q = 0.0, q_rest
    _, _, res0, _ = solve(0.0, q)
    out = dict(alpha=[0.0], psi=[0.0], stability=[1.0], residual=[float(res0)])
    h, fold = step, None
    while alpha < max_alpha - 1e-12:
        a = min(alpha + h, max_alpha)
        q_new, psi, res, H = solve(a, q)
        ok = bool(res < 1e-9 and abs(float(psi) - out["psi"][-1]) < 0.5 and np.all(np.isfinite(H)))
        if not ok:
            if h <= FOLD_RESOLUTION:
                fold = alpha
                break
            h *= 0.5
            continue
        alpha, q = a, q_new
        for key, value in (("alpha", a), ("psi", psi), ("stability", stability(H, H0)), ("residual", res)):
            out[key].append(float(value))
    out["fold"] = fold
    out["end"] = "fold (no neighbouring equilibrium)" if fold is not None else f"reached {max_alpha:.3f} rad"
    return out


def torsion_reference(model: sg.ConcentricTubeRobot, psi) -> dict:
    """The torsion-only model of the two curved tubes: overlap from the outer tube's tip to
    the middle tube's tip; straight behind it (inside the stiff outer tube and behind the
    plate)."""
    tips = np.asarray(model.tube_tips)
    p = model.params
    straight = tuple(float(tips[2] + p.hidden_lengths[i]) for i in SNAP_TUBES)
    st = stiffness(model)
    k = np.asarray(p.precurvature)
    return two_tube_torsion_branch(psi, st["EI"][:2], st["GJ"][:2], (k[0], k[1]), float(tips[1] - tips[2]), straight)


def reference_fold(model) -> dict:
    """The torsion-only branch on a grid of ``psi`` and its first maximum (the fold),
    refined by a bounded scalar search."""
    psi = np.linspace(1e-3, 2 * np.pi, 200)
    alpha = torsion_reference(model, psi)["alpha"]
    k = int(np.argmax(np.diff(alpha) < 0))
    best = scipy.optimize.minimize_scalar(
        lambda x: -torsion_reference(model, x)["alpha"][0],
        bounds=(psi[k - 1], psi[k + 1]),
        method="bounded",
        options=dict(xatol=1e-8),
    )
    ref = torsion_reference(model, best.x)
    return dict(
        alpha=float(ref["alpha"][0]),
        psi=float(best.x),
        c=float(ref["c"]),
        l_eff=float(ref["l_eff"]),
        curve_psi=psi.tolist(),
        curve_alpha=alpha.tolist(),
    )


def snap_in_time(model: sg.ConcentricTubeRobot, q_rest, rate: float, t_end: float, dt: float) -> dict:
    """The middle tube's drive turned at ``rate`` [rad/s] from the unrotated equilibrium."""
    step = sg.sim.FIXED_STEP_SCHEMES["trapezoid"]
    zero = jnp.zeros(model.num_actuators)
    chunk_steps = max(1, int(round(0.01 / dt)))
    overlap_end = jnp.asarray([float(model.tube_tips[1])])
    shape_s = jnp.linspace(0.0, model.tip_abscissa, 41)

    @jax.jit
    def chunk(y, t0):
        def body(y, k):
            t = t0 + k * dt
            m = model.update_params(rotation=jnp.asarray([0.0, 1.0, 0.0]) * (rate * (t + 0.5 * dt)))
            return step(m, y, lambda q, qd: m.generalized_force(q, zero), dt), None

        y, _ = jax.lax.scan(body, y, jnp.arange(chunk_steps, dtype=y.dtype))
        q, qd = model.split_state(y)
        theta = model.tube_angles(q, overlap_end)[:, 0]
        return y, theta[1] - theta[0], model.kinetic_energy(q, qd), model.backbone_positions(q, shape_s)

    y = model.pack_state(q_rest, jnp.zeros_like(q_rest))
    t, rows, shapes = 0.0, [], []
    start = time.perf_counter()
    while t < t_end - 1e-12:
        y, psi, kinetic, pos = chunk(y, t)
        t += chunk_steps * dt
        pos = np.asarray(pos)
        rows.append((t, float(psi), float(kinetic), *pos[-1]))
        shapes.append(pos)
    seconds = time.perf_counter() - start
    rows = np.array(rows)
    finite = bool(np.all(np.isfinite(rows)))
    crossing = np.flatnonzero(rows[:, 1] > np.pi)
    k = int(crossing[0]) if crossing.size else None
    picks = []
    if k is not None:  # shapes before, during and after the snap
        t_snap = rows[k, 0]
        for offset in (-1.0 / rate, -0.05, 0.0, 0.05, 0.3):  # [s]
            picks.append(int(np.argmin(np.abs(rows[:, 0] - (t_snap + offset)))))
    return dict(
        rate=rate,
        dt=dt,
        seconds=seconds,
        finite=finite,
        t=rows[:, 0].tolist(),
        psi=rows[:, 1].tolist(),
        kinetic=rows[:, 2].tolist(),
        tip=rows[:, 3:].tolist(),
        snap_time=None if k is None else float(rows[k, 0]),
        snap_alpha=None if k is None else float(rate * rows[k, 0]),
        peak_kinetic=float(rows[:, 2].max()),
        shapes={f"{rows[i, 0]:.2f}": shapes[i].tolist() for i in picks},
    )


def main(argv=None):
    smoke = "one coarse discretisation, coarse steps, one short run"
    args = reproduction_args(__doc__.splitlines()[0], argv, ROOT / "results" / "lie_group", smoke, markdown, plot)
    if args is None:  # --replot: done
        return
    orders = ORDERS[1:2] if args.smoke else ORDERS
    branches = []
    reference = None
    for k, o in enumerate(orders):
        model = robot(o)
        start = time.perf_counter()
        solve, q_rest, H0 = make_solver(model)
        if k == 0:
            reference = reference_fold(model)
            s_shape = s_curve(model, solve, H0)
            print(f"S-curve: max error {s_shape['max_error']:.2e} m, stability {s_shape['stability']:.3f}", flush=True)
            default_model, default_rest = model, q_rest
        step = 0.4 if args.smoke else ALPHA_STEP
        branch = continuation(solve, q_rest, H0, MAX_ALPHA, step)
        ref_alpha = torsion_reference(model, branch["psi"])["alpha"]
        branch.update(
            bending_order=o[0],
            twist_order=o[1],
            num_dofs=model.num_dofs,
            seconds=time.perf_counter() - start,
            alpha_error=float(np.max(np.abs(ref_alpha - np.asarray(branch["alpha"])))),
            fold_error=None if branch["fold"] is None else float(branch["fold"] - reference["alpha"]),
        )
        branches.append(branch)
        print(
            f"orders {o}: n = {model.num_dofs}, {len(branch['alpha'])} points, fold {branch['fold']} "
            f"(torsion-only {reference['alpha']:.4f}), branch error {branch['alpha_error']:.1e} rad",
            flush=True,
        )
    rates, t_end = ((4.0,), 1.6) if args.smoke else (RATES, None)
    runs = []
    for rate in rates:
        run = snap_in_time(default_model, default_rest, rate, t_end or (6.0 / rate), DT)
        run["delay"] = None if run["snap_alpha"] is None else run["snap_alpha"] - reference["alpha"]
        runs.append(run)
        print(f"rate {rate} rad/s: snap at alpha {run['snap_alpha']}, {run['seconds']:.1f} s", flush=True)
    stem = "concentric_tubes_smoke" if args.smoke else "concentric_tubes"
    p = default_model.params
    result = dict(
        meta=run_metadata(args.smoke, ("jax",), "Table 7 concentric tube robot: S-curve and snapping"),
        robot=dict(
            {k: np.asarray(v).tolist() for k, v in sg.robots.CONCENTRIC_TUBES.items()},
            damping=VISCOSITY,
            hidden_lengths=np.asarray(p.hidden_lengths).tolist(),
            tips=np.asarray(p.tips).tolist(),
        ),
        s_curve=s_shape,
        reference_fold=reference,
        branches=branches,
        runs=runs,
    )
    write_report(args.out, stem, False, result, markdown)
    plot(result, args.out, stem)
    print(f"wrote {args.out / stem}.{{json,md}} and figures")


def markdown(result) -> str:
    sc, ref = result["s_curve"], result["reference_fold"]
    lines = [
        "# Concentric tube robot (Lie-group framework paper, Table 7, Figs. 21-24)",
        "",
        "Three tubes (Table 7) with 0.1 m of straight tube between each drive and the plate, no gravity "
        "(`scripts/reproduce_concentric_tubes.py`).",
        "",
        "## S-curve (Fig. 24)",
        "",
        f"Middle tube turned by pi: three circular arcs of curvature {', '.join(f'{c:.4f}' for c in sc['curvatures'])} "
        f"1/m. Largest distance between our backbone and the analytical one: {sc['max_error']:.1e} m "
        f"({sc['relative_error']:.1e} of the length). Stability of this opposed state: smallest relative "
        f"eigenvalue {sc['stability']:.3f} ({'stable' if sc['stability'] > 0 else 'unstable'}: "
        f"beyond the bifurcation, a small twist makes it snap, see below).",
        "",
        "## Snapping under a drive rotation (Fig. 23)",
        "",
        f"Torsion-only model of the two curved tubes: c = {ref['c']:.2f} 1/m^2, equivalent straight length "
        f"{ref['l_eff']:.3f} m; its branch alpha(psi) folds at a drive angle of {ref['alpha']:.4f} rad "
        f"(psi = {ref['psi']:.3f} rad at the overlap's end).",
        "",
        "| bending order | twist order | coordinates | points | fold [rad] | fold - torsion-only [rad] | "
        "largest branch error [rad] | time [s] |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for b in result["branches"]:
        fold = "" if b["fold"] is None else f"{b['fold']:.4f}"
        err = "" if b["fold_error"] is None else f"{b['fold_error']:+.1e}"
        lines.append(
            f"| {b['bending_order']} | {b['twist_order']} | {b['num_dofs']} | {len(b['alpha'])} | {fold} | {err} | "
            f"{b['alpha_error']:.1e} | {b['seconds']:.0f} |"
        )
    lines += [
        "",
        "Branch error: the drive angle the torsion-only model needs for our distal angle psi, minus ours.",
        "",
        "| drive rate [rad/s] | step [s] | snap (psi passes pi) at alpha [rad] | delay after the fold [rad] | "
        "peak kinetic energy [J] | run time [s] |",
        "|---|---|---|---|---|---|",
    ]
    for r in result["runs"]:
        snap = "" if r["snap_alpha"] is None else f"{r['snap_alpha']:.3f}"
        delay = "" if r["delay"] is None else f"{r['delay']:.3f}"
        lines.append(
            f"| {r['rate']:g} | {r['dt']:g} | {snap} | {delay} | {r['peak_kinetic']:.2e} | {r['seconds']:.0f} |"
        )
    return "\n".join(lines) + "\n"


def plot(result, out: Path, stem: str):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sc = result["s_curve"]
    fig, ax = plt.subplots(figsize=(4.2, 4.2))
    pos, ref = np.asarray(sc["positions"]), np.asarray(sc["analytical"])
    horizontal = np.argmax(np.ptp(pos[:, :2], axis=0))
    ax.plot(ref[:, horizontal], ref[:, 2], "k-", lw=3, alpha=0.3, label="analytical (three arcs)")
    ax.plot(pos[:, horizontal], pos[:, 2], "C0--", lw=1.5, label="sorogym")
    ax.set_xlabel("horizontal [m]")
    ax.set_ylabel("z [m]")
    ax.set_aspect("equal")
    ax.legend(fontsize=8)
    ax.set_title("S-curve (Table 7 tubes, middle tube at pi)", fontsize=9)
    fig.tight_layout()
    fig.savefig(out / f"{stem}_s_curve.png", dpi=130)
    plt.close(fig)

    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
    ref = result["reference_fold"]
    ax = axes[0]
    ax.plot(ref["curve_alpha"], ref["curve_psi"], "k-", lw=3, alpha=0.3, label="torsion-only model")
    for k, b in enumerate(result["branches"]):
        st = np.asarray(b["stability"]) > 0
        a, p = np.asarray(b["alpha"]), np.asarray(b["psi"])
        ax.plot(a[st], p[st], ".", ms=3, color=f"C{k}", label=f"orders {b['bending_order']}/{b['twist_order']}")
    for k, r in enumerate(result["runs"]):
        ax.plot(
            np.asarray(r["t"]) * r["rate"],
            r["psi"],
            "-",
            lw=1,
            color=f"C{k + 4}",
            label=f"in time, {r['rate']:g} rad/s",
        )
    ax.axvline(ref["alpha"], color="k", lw=0.5, ls=":")
    ax.set_xlabel("drive angle alpha [rad]")
    ax.set_ylabel("distal relative angle psi [rad]")
    ax.set_xlim(0, 2 * np.pi)
    ax.legend(fontsize=7)
    ax = axes[1]
    for k, r in enumerate(result["runs"]):
        ax.semilogy(r["t"], np.maximum(r["kinetic"], 1e-12), color=f"C{k + 4}", label=f"{r['rate']:g} rad/s")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("kinetic energy [J]")
    ax.legend(fontsize=7)
    ax = axes[2]
    r = result["runs"][0]
    for k, (t, shape) in enumerate(r["shapes"].items()):
        shape = np.asarray(shape)
        ax.plot(shape[:, 0], shape[:, 2], color=plt.cm.viridis(k / max(1, len(r["shapes"]) - 1)), label=f"t = {t} s")
    ax.set_aspect("equal")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("z [m]")
    ax.set_title(f"shapes around the snap ({r['rate']:g} rad/s)", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / f"{stem}_snap.png", dpi=130)
    plt.close(fig)


if __name__ == "__main__":
    main()
