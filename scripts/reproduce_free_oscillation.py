"""Reproduce the free oscillation of the Lie-group framework paper (its Table 5, Figs. 16-18):
energy over time for the variational integrator, implicit Euler and sorogym's other schemes.

The rod (Table 5): length 1 m, radius 5 cm at the clamp and 3 cm at the tip, Young's
modulus 2 MPa, Poisson's ratio 0.45, no viscosity; the paper gives no density: 1000 kg/m^3
here; no gravity. It lies along x, is bent by a 10 N upward dead force at the tip
(``static_equilibrium`` with ``point_wrenches``, Fig. 16) and released at rest. GVS: one
link, cubic B-spline strains (6 control points) on ``ky``, ``sx``, ``sz`` (the in-plane
strains), 6 Gauss points per knot span.

Schemes, each at the step sizes ``STEPS``: ``variational`` (the midpoint discrete
Euler-Lagrange scheme, ``sorogym.sim.variational_midpoint_step``), ``implicit_euler``
(diffrax's ``ImplicitEuler`` on the model's forward dynamics, Newton to 1e-10),
``trapezoid`` and ``trapezoid_pc`` (the environments' linearly implicit schemes). Reported
per run: the tip's height over time (Fig. 17), the total energy (kinetic + elastic) over
time (Fig. 18), its largest relative deviation, the drift per period (least-squares slope of
``E(t) / E(0)`` times the period, the period from the tip's upward crossings of its mean),
and the cost per step [us] measured side by side in one process (compiled, one timed run).
Writes ``results/lie_group/free_oscillation.{json,md}`` and figures.

    python scripts/reproduce_free_oscillation.py           # 10 s of motion (~12 min)
    python scripts/reproduce_free_oscillation.py --smoke --out /tmp/osc   # 0.3 s, two schemes
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import diffrax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optimistix as optx  # noqa: E402

import sorogym as sg  # noqa: E402
from sorogym.provenance import run_metadata, write_report  # noqa: E402
from sorogym.sim import FIXED_STEP_SCHEMES  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

LENGTH, BASE_RADIUS, TIP_RADIUS = 1.0, 0.05, 0.03  # Table 5
YOUNG, POISSON, DENSITY = 2.0e6, 0.45, 1000.0
TIP_FORCE = 10.0  # N, upward, removed at t = 0
STEPS = (5e-3, 2e-3)  # s
SAVE_DT = 0.01  # s
SCHEMES = ("variational", "implicit_euler", "trapezoid", "trapezoid_pc")


def rod() -> sg.GVS:
    params = sg.GVSParams.create(
        length=[LENGTH], radius=BASE_RADIUS, tip_radius=[TIP_RADIUS], density=DENSITY, young_modulus=YOUNG,
        poisson_ratio=POISSON, damping=0.0, gravity=[0.0, 0.0, 0.0], mounting="horizontal", dtype=jnp.float64,
    )  # fmt: skip
    basis = sg.StrainBasis.bspline(("ky", "sx", "sz"), 6, degree=3)
    return sg.GVS(params, basis, num_gauss_points=6)


def released_state(model: sg.GVS) -> jnp.ndarray:
    """The static equilibrium under the tip force, at rest."""
    wrench = jnp.zeros((1, 6)).at[0, 5].set(TIP_FORCE)
    q = jax.jit(lambda m: m.static_equilibrium(point_wrenches=(jnp.asarray([LENGTH]), wrench)))(model)
    return model.pack_state(q, jnp.zeros(model.num_dofs))


def fixed_step_run(model, name: str, h: float, duration: float):
    """States every ``SAVE_DT`` of ``duration`` [s] of the named fixed-step scheme."""
    scheme = FIXED_STEP_SCHEMES[name]
    per_save = int(round(SAVE_DT / h))
    saves = int(round(duration / SAVE_DT))

    def zero(q, qd):
        return jnp.zeros_like(qd)

    @jax.jit
    def run(y0):
        def save(y, _):
            y = jax.lax.fori_loop(0, per_save, lambda _, y_: scheme(model, y_, zero, h), y)
            return y, y

        return jnp.concatenate([y0[None], jax.lax.scan(save, y0, None, length=saves)[1]])

    return run, saves * per_save


def implicit_euler_run(model, h: float, duration: float):
    # full Newton (a Jacobian per iteration): diffrax's default chord iteration diverges on the
    # rod's stiff shear and stretch modes at these steps
    solver = diffrax.ImplicitEuler(root_finder=optx.Newton(rtol=1e-10, atol=1e-10))

    @jax.jit
    def run(y0):
        return sg.sim.rollout_to(model, y0, duration, solver=solver, solver_dt=h, save_dt=SAVE_DT).ys

    return run, int(round(duration / h))


def timed(run, y0):
    """``(states, seconds)``: the compiled call's time (a first call compiles it)."""
    ys = run(y0).block_until_ready()
    t0 = time.perf_counter()
    run(y0).block_until_ready()
    return ys, time.perf_counter() - t0


def period_of(t, z) -> float:
    """Mean time between upward crossings of the tip height's mean."""
    z = z - z.mean()
    up = np.flatnonzero((z[:-1] < 0) & (z[1:] >= 0))
    crossings = t[up] - z[up] * (t[up + 1] - t[up]) / (z[up + 1] - z[up])
    return float(np.mean(np.diff(crossings))) if crossings.size > 1 else float("nan")


def analyse(model, ys, seconds, steps):
    t = np.arange(ys.shape[0]) * SAVE_DT
    energy = np.asarray(jax.jit(jax.vmap(model.total_energy))(ys))
    tip_z = np.asarray(jax.jit(jax.vmap(lambda y: model.forward_kinematics(model.split_state(y)[0], LENGTH)[2, 3]))(ys))
    rel = energy / energy[0]
    period = period_of(t, tip_z)
    slope = np.polyfit(t, rel - 1.0, 1)[0] if np.all(np.isfinite(rel)) else float("nan")
    return dict(
        energy_initial=float(energy[0]),
        max_energy_deviation=float(np.max(np.abs(rel - 1.0))),
        final_energy_ratio=float(rel[-1]),
        period=period,
        drift_per_period=float(slope * period),
        us_per_step=1e6 * seconds / steps,
        t=t.tolist(),
        energy_ratio=rel.tolist(),
        tip_z=tip_z.tolist(),
    )


def plot(result, out: Path, stem: str):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    h = min(r["h"] for r in result["runs"])
    fig, ax = plt.subplots(figsize=(7, 3))
    for r in result["runs"]:
        if r["h"] == h:
            ax.plot(r["t"], r["tip_z"], label=r["scheme"], lw=1)
    ax.set(xlabel="t [s]", ylabel="tip z [m]", title=f"free oscillation, h = {h * 1e3:g} ms")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / f"{stem}_tip.png", dpi=120)
    schemes = sorted({r["scheme"] for r in result["runs"]})
    fig, axes = plt.subplots(len(schemes), 1, figsize=(7, 1.9 * len(schemes)), sharex=True, squeeze=False)
    for ax, name in zip(axes[:, 0], schemes):
        for r in result["runs"]:
            if r["scheme"] == name:
                ax.plot(r["t"], r["energy_ratio"], label=f"h = {r['h'] * 1e3:g} ms", lw=1)
        ax.set(ylabel="E / E(0)", title=name)
        ax.legend(fontsize=7)
    axes[-1, 0].set(xlabel="t [s]")
    fig.tight_layout()
    fig.savefig(out / f"{stem}_energy.png", dpi=120)
    plt.close("all")


def markdown(result) -> str:
    lines = [
        "# Free oscillation (Lie-group framework paper, Table 5, Figs. 16-18)",
        "",
        f"Undamped tapered rod released from its 10 N equilibrium, {result['duration']:g} s; energy = kinetic + "
        "elastic (`scripts/reproduce_free_oscillation.py`).",
        "",
        "| scheme | h [ms] | max abs(E/E0 - 1) | E(end)/E0 | drift per period | period [s] | us per step |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in result["runs"]:
        lines.append(
            f"| {r['scheme']} | {r['h'] * 1e3:g} | {r['max_energy_deviation']:.2e} | {r['final_energy_ratio']:.6f} "
            f"| {r['drift_per_period']:.2e} | {r['period']:.3f} | {r['us_per_step']:.0f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="0.3 s, two schemes, one step size")
    ap.add_argument("--duration", type=float, default=10.0, help="seconds of motion")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "lie_group")
    args = ap.parse_args(argv)
    duration = 0.3 if args.smoke else args.duration
    schemes = ("variational", "trapezoid") if args.smoke else SCHEMES
    steps = STEPS[:1] if args.smoke else STEPS
    model = rod()
    y0 = released_state(model)
    runs = []
    for h in steps:
        for name in schemes:
            if name == "implicit_euler":
                run, num = implicit_euler_run(model, h, duration)
            else:
                run, num = fixed_step_run(model, name, h, duration)
            ys, seconds = timed(run, y0)
            row = dict(scheme=name, h=h, **analyse(model, ys, seconds, num))
            runs.append(row)
            print(
                f"{name:15s} h={h * 1e3:g} ms: max |E/E0-1| {row['max_energy_deviation']:.2e}  "
                f"end {row['final_energy_ratio']:.6f}  drift/period {row['drift_per_period']:.1e}  "
                f"period {row['period']:.3f} s  {row['us_per_step']:.0f} us/step",
                flush=True,
            )
    stem = "free_oscillation_smoke" if args.smoke else "free_oscillation"
    tip0 = np.asarray(model.forward_kinematics(model.split_state(y0)[0], LENGTH)[:3, 3])
    result = dict(
        meta=run_metadata(args.smoke, ("jax", "diffrax"), "Table 5 rod released from the 10 N tip-force equilibrium"),
        duration=duration,
        save_dt=SAVE_DT,
        num_dofs=model.num_dofs,
        initial_tip=tip0.tolist(),
        runs=runs,
    )
    write_report(args.out, stem, False, result, markdown)  # the stem names a smoke run itself
    plot(result, args.out, stem)
    print(f"wrote {args.out / stem}.{{json,md}} and figures")


if __name__ == "__main__":
    main()
