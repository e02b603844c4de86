"""Reproduce the cable-driven soft manipulator of the Lie-group framework paper (its Table 6,
Figs. 19-20): a tapered soft rod cut into sections by rigid triangular plates, bent by
cables through the plates' vertices.

The robot (``sg.robots.cable_driven_arm``): Table 6's rod (1 m, radius 4 cm at the base to
2 cm at the tip, ``E`` 1 MPa, Poisson's ratio 0.45, viscosity 10 Pa s) in five GVS sections
between triangular plates (circumradius 6 cm, 5 mm, 30 g: not in the paper), three cables
through the plates' vertices spanning straight lines between adjacent plates (the tree of
Fig. 20: section, plate, section, plate, ...). No gravity (the paper's shape study; it does
not give the orientation), backbone along world -z.

* **Small-load check.** Under a tension ``T`` of 0.01 N in one cable, the model's tip
  rotation against two closed forms: the linear Galerkin solution on the model's own strain
  space (per section, ``K c = Q`` with ``K = int E I(s) phi phi^T ds`` and ``Q = T d int phi
  ds``, ``d`` the cable's distance from the backbone: it checks the cable's generalized force
  and the tapered stiffness to rounding) and Euler-Bernoulli's continuous
  ``theta = T d int ds / (E I(s))``, which the bending order converges to.
* **Deformation (Fig. 19).** The equilibria (``static_equilibrium``, continued from the
  previous tension) as one cable's tension rises to ``MAX_TENSION``, and with two cables
  pulled equally (bending between their vertices): tip position, tip rotation, the cables'
  contraction, and the shapes with the cables drawn span by span.

Writes ``results/lie_group/cable_arm.{json,md}`` and ``cable_arm_shapes.png`` (Fig. 19).

    python scripts/reproduce_cable_arm.py                          # (~10 min on 2 cores)
    python scripts/reproduce_cable_arm.py --smoke --out /tmp/cable   # two sections, order 0
"""

from __future__ import annotations

import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import sorogym as sg  # noqa: E402
from sorogym.models import static_equilibrium, static_residual  # noqa: E402
from sorogym.provenance import reproduction_args, run_metadata, write_report  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

SMALL_TENSION = 1e-4  # N (linear regime: tip rotation ~1e-5 rad)
MAX_TENSION, TENSION_STEP = 12.0, 1.0  # N
BENDING_ORDERS = (0, 1, 2, 3)  # per section, of the small-load check
SHAPE_ORDER = 2  # bending order of the deformation study
SHAPE_SAMPLES = 9  # backbone points drawn per section


def build(num_sections: int, order: int) -> sg.BodyTree:
    return sg.robots.cable_driven_arm(
        num_sections=num_sections, bending_order=order, gravity=(0.0, 0.0, 0.0), dtype=jnp.float64
    )


def make_solver(tree: sg.BodyTree):
    """``solve(u (3,), q_start) -> (q, observed)``: the equilibrium under the cable tensions
    ``u`` [N], Newton continued from ``q_start``, and what the report needs of it
    (:func:`observe`): one compiled program for every load."""

    @jax.jit
    def solve(u, q_start):
        q = static_equilibrium(tree, u, q0=q_start, ramp_steps=4, throw=False)
        return q, observe(tree, q, u)

    return solve


def observe(tree: sg.BodyTree, q, u) -> dict:
    """Tip pose, largest static residual, cable contraction, backbone points and cable paths."""
    backbone = [
        tree.backbone_positions(q, jnp.linspace(0.0, tree.rod(name).total_length, SHAPE_SAMPLES), body=name)
        for name in tree.body_names
        if name.startswith("section")
    ]
    return dict(
        tip=tree.forward_kinematics(q),
        residual=jnp.max(jnp.abs(static_residual(tree, q, u))),
        contraction=tree.actuation_context(q).cable_contraction,
        backbone=jnp.concatenate(backbone),
        cables=jnp.stack(tree.cable_paths(q)),
    )


def tip_rotation(tip_pose) -> float:
    """Angle [rad] between the last plate's normal (its local x) and the straight backbone."""
    R = np.asarray(tip_pose)[:3, :3]
    return float(np.arccos(np.clip(-R[2, 0], -1.0, 1.0)))


def galerkin_rotation(tension: float, order: int, num_sections: int) -> float:
    """Tip rotation [rad] of the linear Galerkin solution on polynomial curvature of
    ``order`` per section (module docstring), by Gauss-Legendre quadrature (exact)."""
    rod = sg.robots.CABLE_ARM_ROD
    L, r0, r1, E = rod["length"], rod["base_radius"], rod["tip_radius"], rod["young_modulus"]
    moment = tension * sg.robots.CABLE_ARM_PLATE["circumradius"]
    ell = L / num_sections
    x, w = np.polynomial.legendre.leggauss(order + 4)
    x, w = 0.5 * (x + 1.0), 0.5 * w * ell  # on [0, 1] (a section), weights in metres
    total = 0.0
    for k in range(num_sections):
        s = (k + x) * ell
        EI = E * np.pi * (r0 + (r1 - r0) * s / L) ** 4 / 4.0
        phi = np.vander(x, order + 1, increasing=True)  # (points, order + 1)
        K = phi.T @ (EI[:, None] * w[:, None] * phi)
        Q = moment * phi.T @ w
        total += float(w @ (phi @ np.linalg.solve(K, Q)))
    return total


def euler_bernoulli_rotation(tension: float) -> float:
    """``T d int_0^L ds / (E I(s))`` [rad] for the linear taper (closed form)."""
    rod = sg.robots.CABLE_ARM_ROD
    L, r0, r1, E = rod["length"], rod["base_radius"], rod["tip_radius"], rod["young_modulus"]
    d = sg.robots.CABLE_ARM_PLATE["circumradius"]
    integral = 4.0 / (E * np.pi) * L / (3.0 * (r0 - r1)) * (r1**-3 - r0**-3)
    return tension * d * integral


def small_load_check(num_sections: int, orders, solvers: dict) -> list[dict]:
    """One row per bending order; ``solvers[order] = (tree, solve)`` (built when missing)."""
    rows = []
    for order in orders:
        t0 = time.perf_counter()
        if order not in solvers:
            tree = build(num_sections, order)
            solvers[order] = (tree, make_solver(tree))
        tree, solve = solvers[order]
        _, seen = solve(jnp.asarray([SMALL_TENSION, 0.0, 0.0]), tree.neutral_configuration())
        theta = tip_rotation(seen["tip"])
        galerkin = galerkin_rotation(SMALL_TENSION, order, num_sections)
        eb = euler_bernoulli_rotation(SMALL_TENSION)
        rows.append(
            dict(
                order=order,
                coordinates=tree.num_dofs,
                tip_rotation=theta,
                galerkin=galerkin,
                galerkin_rel_error=abs(theta - galerkin) / galerkin,
                euler_bernoulli=eb,
                euler_bernoulli_rel_diff=(theta - eb) / eb,
                seconds=time.perf_counter() - t0,
            )
        )
        print(
            f"order {order}: tip rotation {theta:.6e} rad, Galerkin {galerkin:.6e} "
            f"({rows[-1]['galerkin_rel_error']:.1e}), Euler-Bernoulli {eb:.6e} "
            f"({rows[-1]['euler_bernoulli_rel_diff']:+.2e})",
            flush=True,
        )
    return rows


def tension_sweep(tree: sg.BodyTree, solve, direction, max_tension: float, step: float) -> dict:
    """Equilibria as the tensions ``T direction`` rise from 0 to ``max_tension`` [N]; a
    solve that does not converge (residual above 1e-8) is reported and not continued from."""
    q = tree.neutral_configuration()
    out = dict(direction=list(direction), tension=[], tip=[], tip_rotation=[], contraction=[], converged=[], shapes={})
    for T in np.arange(0.0, max_tension + 1e-9, step):
        q_new, seen = solve(jnp.asarray(direction, jnp.float64) * T, q)
        ok = bool(np.all(np.isfinite(q_new)) and float(seen["residual"]) < 1e-8)
        q = q_new if ok else q
        out["tension"].append(float(T))
        out["tip"].append(np.asarray(seen["tip"])[:3, 3].tolist())
        out["tip_rotation"].append(tip_rotation(seen["tip"]))
        out["contraction"].append(np.asarray(seen["contraction"]).tolist())
        out["converged"].append(ok)
        if np.isclose(T % (4 * step), 0.0) or T + step > max_tension + 1e-9:
            out["shapes"][f"{T:g}"] = dict(
                backbone=np.asarray(seen["backbone"]).tolist(), cables=np.asarray(seen["cables"]).tolist()
            )
    return out


def structure_listing(tree: sg.BodyTree) -> list[str]:
    """The tree of Fig. 20: every body with its parent."""
    rows = []
    for name in tree.body_names:
        b = tree.body_index(name)
        g, _ = tree.structure.body_group[b]
        kind = tree.structure.groups[g].kind
        rows.append(f"{name} ({'soft GVS section' if kind == 'rod' else 'rigid triangular plate'})")
    return rows


def main(argv=None):
    smoke = "two sections, bending order 0, a short sweep"
    args = reproduction_args(__doc__.splitlines()[0], argv, ROOT / "results" / "lie_group", smoke, markdown, plot)
    if args is None:  # --replot: done
        return
    num_sections = 2 if args.smoke else 5
    orders = (0,) if args.smoke else BENDING_ORDERS
    shape_order = 0 if args.smoke else SHAPE_ORDER
    max_tension, step = (4.0, 2.0) if args.smoke else (MAX_TENSION, TENSION_STEP)
    start = time.perf_counter()
    solvers: dict = {}
    check = small_load_check(num_sections, orders, solvers)
    if shape_order not in solvers:
        tree = build(num_sections, shape_order)
        solvers[shape_order] = (tree, make_solver(tree))
    tree, solve = solvers[shape_order]
    sweeps = []
    for direction in ((1.0, 0.0, 0.0), (1.0, 1.0, 0.0)):
        t0 = time.perf_counter()
        sweep = tension_sweep(tree, solve, direction, max_tension, step)
        sweep["seconds"] = time.perf_counter() - t0
        sweeps.append(sweep)
        print(
            f"cables {direction}: tip rotation {np.degrees(sweep['tip_rotation'][-1]):.1f} deg at "
            f"{sweep['tension'][-1]:g} N, all converged: {all(sweep['converged'])}",
            flush=True,
        )
    stem = "cable_arm_smoke" if args.smoke else "cable_arm"
    result = dict(
        meta=run_metadata(args.smoke, ("jax",), "Table 6 cable-driven arm: small-load closed forms, tension sweeps"),
        robot=dict(
            num_sections=num_sections,
            shape_bending_order=shape_order,
            num_dofs=tree.num_dofs,
            rod=sg.robots.CABLE_ARM_ROD,
            plate=sg.robots.CABLE_ARM_PLATE,
            density=sg.robots.CABLE_ARM_DENSITY,
            cable_angles_deg=sg.robots.CABLE_ARM_CABLE_ANGLES,
            cable_rest_lengths=list(tree.cables.rest_lengths),
            tree=structure_listing(tree),
        ),
        small_tension=SMALL_TENSION,
        small_load_check=check,
        sweeps=sweeps,
        seconds=time.perf_counter() - start,
    )
    write_report(args.out, stem, False, result, markdown)
    plot(result, args.out, stem)
    print(f"wrote {args.out / stem}.{{json,md}} and figures")


def markdown(result: dict) -> str:
    robot = result["robot"]
    lines = [
        f"# Cable-driven arm (Table 6, Figs. 19-20): {robot['num_sections']} sections, no gravity",
        "",
        "Tree (Fig. 20): " + " -> ".join(robot["tree"]) + f"; {robot['num_dofs']} coordinates in the sweeps "
        f"(bending order {robot['shape_bending_order']}). Three cables through the plates' vertices, "
        f"{robot['plate']['circumradius']} m from the backbone, rest length {robot['cable_rest_lengths'][0]:.4f} m.",
        "",
        f"Small-load check (one cable at {result['small_tension']:g} N): tip rotation [rad] against the linear "
        "Galerkin solution on the same strain space and Euler-Bernoulli's continuous closed form.",
        "",
        "| bending order | coordinates | tip rotation | Galerkin | rel. error | Euler-Bernoulli | rel. difference |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in result["small_load_check"]:
        lines.append(
            f"| {r['order']} | {r['coordinates']} | {r['tip_rotation']:.6e} | {r['galerkin']:.6e} | "
            f"{r['galerkin_rel_error']:.1e} | {r['euler_bernoulli']:.6e} | {r['euler_bernoulli_rel_diff']:+.2e} |"
        )
    lines += [
        "",
        "Tension sweeps (Fig. 19), equilibria continued from the previous tension:",
        "",
        "| cables pulled | tension [N] | tip [m] | tip rotation [deg] | contraction of cable 0 [mm] | converged |",
        "|---|---|---|---|---|---|",
    ]
    for s in result["sweeps"]:
        pulled = ", ".join(str(i) for i, v in enumerate(s["direction"]) if v)
        for i, T in enumerate(s["tension"]):
            if i % 2 and i != len(s["tension"]) - 1:
                continue
            tip = ", ".join(f"{v:+.3f}" for v in s["tip"][i])
            lines.append(
                f"| {pulled} | {T:g} | ({tip}) | {np.degrees(s['tip_rotation'][i]):.1f} | "
                f"{1e3 * s['contraction'][i][0]:.1f} | {s['converged'][i]} |"
            )
    return "\n".join(lines) + "\n"


def plot(result, out: Path, stem: str):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sweeps = result["sweeps"]
    fig, axes = plt.subplots(1, len(sweeps) + 1, figsize=(4 * (len(sweeps) + 1), 4))
    for ax, s in zip(axes, sweeps, strict=False):
        for k, (T, sh) in enumerate(s["shapes"].items()):
            b = np.asarray(sh["backbone"])
            cables = np.asarray(sh["cables"])
            # the view plane: world z and the horizontal direction of the most bent tip
            tip = np.asarray(s["tip"][-1])[:2]
            bend = tip / (np.linalg.norm(tip) + 1e-12)
            h = lambda p, bend=bend: p[..., 0] * bend[0] + p[..., 1] * bend[1]  # noqa: E731
            ax.plot(h(b), b[:, 2], color=f"C{k}", lw=2, label=f"{T} N")
            for c in cables:
                ax.plot(h(c), c[:, 2], color=f"C{k}", lw=0.6, ls="--")
        pulled = ", ".join(str(i) for i, v in enumerate(s["direction"]) if v)
        ax.set(
            xlabel="bending direction [m]", ylabel="z [m]", title=f"cables {pulled} pulled (Fig. 19)", aspect="equal"
        )
        ax.legend(fontsize=7)
    ax = axes[-1]
    for s in sweeps:
        pulled = ", ".join(str(i) for i, v in enumerate(s["direction"]) if v)
        ax.plot(s["tension"], np.degrees(s["tip_rotation"]), marker=".", label=f"cables {pulled}")
    ax.set(xlabel="tension [N]", ylabel="tip rotation [deg]", title="tip rotation")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / f"{stem}_shapes.png", dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
