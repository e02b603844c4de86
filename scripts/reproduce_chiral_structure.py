"""Reproduce the chiral structure under compression of the Lie-group framework paper (its
Table 8, Figs. 25 and 27): the force-strain curves of rods clamped between stacked plates,
pre-twisted by an initial torque of 0.1, 0.5, 1 and 2 N m.

The structure (``sg.robots.chiral_structure``): two rings of four vertical rods (Table 8:
0.8 m, radius 4 cm, ``E`` 0.1 MPa, Poisson's ratio 0.45), each ring clamped between two
rigid discs (closed chains: fixed loop closures); the bottom ring stands clamped on the
ground, the two plates float. Rods: PCS, three segments of constant bending, torsion and
extension each. The paper gives neither the plates nor the rods' spacing: discs with the
rods at a radius of 0.3 m here; no gravity (the study isolates the response to the loads).

Loading, quasi-statically (``static_equilibrium``, KKT with the closures): a dead torque
``T`` about the vertical on the top plate, raised from zero in small steps, then a dead
downward force ``F`` on the top plate, raised in steps of ``FORCE_STEP`` (halved, down to
1/16, where Newton does not converge from the previous equilibrium); each solve starts from
the previous equilibrium. A step is accepted when Newton converges and the strain changes
by at most ``MAX_STRAIN_STEP`` (a larger change is a jump to a distant branch, not a
neighbouring equilibrium); the step doubles again after a success. Reported per torque:
compressive strain ``(H - z) / H`` of the top plate (``H`` the unloaded height) and its
twist angle (unwrapped) against ``F``; the run ends at ``MAX_FORCE``, at a strain of
``MAX_STRAIN`` (beyond it the rods of a ring would pass through each other: there is no
rod-rod contact) or at a limit point of force control (the force cannot rise further on
the branch: a snap). A check against closed forms at small loads (axial: ``F L / (N E A)`` per ring;
torsion: rings of clamped-guided rods, ``k = N (12 E I R^2 / (L^3 (1 - 1/S^2)) + G J / L)``
with ``S`` constant-curvature segments) is in the report.

Every equilibrium's stability is reported: the stiffness (the KKT Jacobian's ``q`` block)
positive definite on the closures' tangent space. The non-zero pattern of the static KKT
Jacobian ``[[d r / d q, -G_c^T], [G_c, 0]]`` at the last point of the largest torque is the
paper's Fig. 26 (its parallel soft-rigid mechanism of three rigid bodies and eight rods is
this structure's topology: the ground plate and two plates, two rings of four rods).

Writes ``results/lie_group/chiral_structure.{json,md}`` and the figures
``chiral_structure_force_strain.png`` (Fig. 27), ``chiral_structure_shapes.png`` (Fig. 25:
unloaded and most compressed shapes) and ``chiral_structure_kkt_sparsity.png`` (Fig. 26).

    python scripts/reproduce_chiral_structure.py                      # (~10 min on 2 cores)
    python scripts/reproduce_chiral_structure.py --smoke --out /tmp/chiral   # one ring of 3 rods
"""

from __future__ import annotations

import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import sorogym as sg  # noqa: E402
from sorogym.models import static_residual  # noqa: E402
from sorogym.provenance import reproduction_args, run_metadata, write_report  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

TORQUES = (0.1, 0.5, 1.0, 2.0)  # N m, the paper's initial torques
RING_RADIUS = 0.3  # m, rods' distance from the plates' axis (not in the paper)
TORQUE_STEPS = 10  # the torque is raised in this many equal steps
FORCE_STEP, MAX_FORCE = 1.0, 40.0  # N
MAX_STRAIN = 0.3  # beyond it the rods of a ring would pass through each other (no rod-rod contact here)
MAX_STRAIN_STEP = 0.02  # a larger change in one force step is a jump to another branch: the step is halved
HALVINGS = 4  # force step halvings before the curve ends
RESIDUAL_TOL = 1e-8  # largest KKT residual entry [N, N m, m] of a converged solve
SMALL_FORCE, SMALL_TORQUE = 1e-3, 1e-4  # N, N m (closed-form check)


def structure(smoke: bool) -> sg.BodyTree:
    """The chiral structure without gravity (smoke: one ring of three two-segment rods)."""
    size = dict(num_rods=3, num_tiers=1, rod_segments=2) if smoke else dict(num_rods=4, num_tiers=2, rod_segments=3)
    tree = sg.robots.chiral_structure(radius=RING_RADIUS, dtype=jnp.float64, **size)
    return tree.with_params(tree.params.replace(gravity=jnp.zeros(3))), size


def make_solver(tree: sg.BodyTree):
    """``solve(F, T, q_start) -> (q, top pose (4, 4), converged, KKT Jacobian (n + c, n + c))``:
    the equilibrium under the dead downward force ``F`` [N] and torque ``T`` [N m] about +z
    at the top plate, Newton from ``q_start``, and the Jacobian of the static KKT residual
    ``[G + K - J^T w - G_c^T lam; phi]`` in ``(q, lam)`` there (one compiled program for
    every load)."""
    n = tree.num_dofs

    @jax.jit
    def solve(force, torque, q_start):
        zero = jnp.zeros((), q_start.dtype)
        wrench = jnp.stack([zero, zero, torque, zero, zero, -force])[None]
        loads = (jnp.zeros(1, q_start.dtype), wrench)  # at the tip body's frame (the top plate)
        q, lam = tree.static_equilibrium(
            point_wrenches=loads, q0=q_start, ramp_steps=0, throw=False, return_multipliers=True
        )

        def kkt(x):
            phi, G = tree.constraint_terms(x[:n])
            r = static_residual(tree, x[:n], jnp.zeros(tree.num_actuators), None, loads) - G.T @ x[n:]
            out = jnp.concatenate([r, phi])
            return out, out

        jacobian, residual = jax.jacfwd(kkt, has_aux=True)(jnp.concatenate([q, lam]))
        ok = jnp.all(jnp.isfinite(q)) & (jnp.max(jnp.abs(residual)) < RESIDUAL_TOL)
        return jnp.where(ok, q, q_start), tree.forward_kinematics(q, body=tree.body_names[-1]), ok, jacobian

    return solve


def is_stable(jacobian, n: int) -> bool:
    """A constrained equilibrium is stable when the stiffness ``d(residual)/dq`` is positive
    definite on the closures' tangent space (the null space of ``G_c``)."""
    jac = np.asarray(jacobian)
    stiffness, G = jac[:n, :n], jac[n:, :n]
    _, sv, vt = np.linalg.svd(G)
    Z = vt[int(np.sum(sv > 1e-10 * sv[0])) :].T
    reduced = Z.T @ (0.5 * (stiffness + stiffness.T)) @ Z
    return bool(np.linalg.eigvalsh(reduced).min() > 0)


def twist_angle(pose) -> float:
    """Rotation of a plate about the vertical [rad] (from its x axis)."""
    pose = np.asarray(pose)
    return float(np.arctan2(pose[1, 0], pose[0, 0]))


def euler_sway_load(structure: dict) -> float:
    """``N pi^2 E I / L^2`` [N] of a report's ``structure``: a ring's rods buckle sideways,
    clamped at both ends with the upper ends free to translate (the plate does not turn)."""
    second_moment = np.pi * structure["rod_radius"] ** 4 / 4
    return float(
        structure["num_rods"] * np.pi**2 * structure["young_modulus"] * second_moment / structure["rod_length"] ** 2
    )


def closed_form_check(tree, solve, size) -> dict:
    """Small-load response against the linear closed forms (module docstring)."""
    p = sg.robots.CHIRAL_STRUCTURE
    E, r, L, nu = p["young_modulus"], p["rod_radius"], p["rod_length"], p["poisson_ratio"]
    N, S, rings = size["num_rods"], size["rod_segments"], size["num_tiers"]
    A, second_moment = np.pi * r**2, np.pi * r**4 / 4
    G, J = E / (2 * (1 + nu)), np.pi * r**4 / 2
    q0 = tree.neutral_configuration()
    H = rings * L
    _, pose, ok_axial, _ = solve(jnp.asarray(SMALL_FORCE), jnp.asarray(0.0), q0)
    shortening = H - float(pose[2, 3])
    expected_shortening = rings * SMALL_FORCE * L / (N * E * A)
    _, pose_t, ok_torsion, _ = solve(jnp.asarray(0.0), jnp.asarray(SMALL_TORQUE), q0)
    k_ring = N * (12 * E * second_moment * RING_RADIUS**2 / (L**3 * (1 - 1 / S**2)) + G * J / L)
    expected_twist = rings * SMALL_TORQUE / k_ring
    return dict(
        converged=bool(ok_axial) and bool(ok_torsion),
        shortening=shortening,
        expected_shortening=expected_shortening,
        axial_rel_error=abs(shortening / expected_shortening - 1),
        twist=twist_angle(pose_t),
        expected_twist=expected_twist,
        torsion_rel_error=abs(twist_angle(pose_t) / expected_twist - 1),
        ring_torsional_stiffness=k_ring,
        ring_axial_stiffness=N * E * A / L,
    )


def load_path(solve, q0, torque: float, H: float, max_force: float, force_step: float):
    """Raise the torque, then the force; returns the curve (with the stability of every
    point), the last configuration and the KKT Jacobian there."""
    q = q0
    for k in range(1, TORQUE_STEPS + 1):
        q, pose, ok, jac = solve(jnp.asarray(0.0), jnp.asarray(torque * k / TORQUE_STEPS), q)
        if not bool(ok):
            return dict(force=[], strain=[], twist=[], stable=[], end=f"torque step {k} did not converge"), q, None
    n = q.shape[0]
    force, strain, twist = [0.0], [(H - float(pose[2, 3])) / H], [twist_angle(pose)]
    stable = [is_stable(jac, n)]
    F, dF, end = 0.0, force_step, f"reached the largest force {max_force:g} N"
    while F < max_force - 1e-12:
        F_try = min(F + dF, max_force)
        q_try, pose, ok, jac_try = solve(jnp.asarray(F_try), jnp.asarray(torque), q)
        strain_try = (H - float(pose[2, 3])) / H
        twist_try = twist[-1] + np.angle(np.exp(1j * (twist_angle(pose) - twist[-1])))  # unwrapped
        if not bool(ok) or abs(strain_try - strain[-1]) > MAX_STRAIN_STEP:  # no equilibrium near: halve
            if dF < force_step / 2**HALVINGS:
                end = f"limit point of force control between {F:g} and {F_try:g} N"
                break
            dF /= 2
            continue
        F, q, jac, dF = F_try, q_try, jac_try, min(2 * dF, force_step)
        force.append(F)
        stable.append(is_stable(jac, n))
        strain.append(strain_try)
        twist.append(float(twist_try))
        if strain[-1] > MAX_STRAIN:
            end = f"strain above {MAX_STRAIN:g}"
            break
    return dict(force=force, strain=strain, twist=twist, stable=stable, end=end), q, np.asarray(jac)


def kkt_sparsity(tree, jacobian, where: str) -> dict:
    """The non-zero pattern of the static KKT Jacobian (rows as strings of 0/1) with the
    coordinate blocks of the rods and the closures (the paper's Fig. 26, right)."""
    nonzero = np.asarray(jacobian) != 0.0
    blocks = []
    for name in tree.body_names:
        index = np.asarray(tree.coordinate_slices(name)[1]).reshape(-1)
        if index.size:
            blocks.append(dict(name=name, start=int(index.min()), stop=int(index.max()) + 1))
    return dict(
        where=where,
        size=int(nonzero.shape[0]),
        num_dofs=tree.num_dofs,
        nonzeros=int(nonzero.sum()),
        density=float(nonzero.mean()),
        blocks=blocks,
        rows=["".join("1" if v else "0" for v in row) for row in nonzero],
    )


def rod_shapes(tree, q, points: int = 12) -> list:
    """Backbone points ``(points, 3)`` of every rod, as lists."""
    shapes = []
    for name in tree.body_names:
        if name.startswith("tier"):
            L = sg.robots.CHIRAL_STRUCTURE["rod_length"]
            s = jnp.linspace(0.0, L, points)
            shapes.append(np.asarray(tree.backbone_positions(q, s, body=name)).tolist())
    return shapes


def main(argv=None):
    smoke = "one ring of three rods, two torques, a few force steps"
    args = reproduction_args(__doc__.splitlines()[0], argv, ROOT / "results" / "lie_group", smoke, markdown, plot)
    if args is None:  # --replot: done
        return
    tree, size = structure(args.smoke)
    solve = make_solver(tree)
    q0 = tree.neutral_configuration()
    H = size["num_tiers"] * sg.robots.CHIRAL_STRUCTURE["rod_length"]
    start = time.perf_counter()
    check = closed_form_check(tree, solve, size)
    compile_s = time.perf_counter() - start
    print(f"closed forms: axial {check['axial_rel_error']:.1e}, torsion {check['torsion_rel_error']:.1e}", flush=True)
    torques = TORQUES[::3] if args.smoke else TORQUES
    max_force, force_step = (3.0, 1.0) if args.smoke else (MAX_FORCE, FORCE_STEP)
    curves, shapes = [], {"unloaded": rod_shapes(tree, q0)}
    for T in torques:
        t0 = time.perf_counter()
        curve, q_end, jacobian = load_path(solve, q0, T, H, max_force, force_step)
        curves.append(dict(torque=T, seconds=time.perf_counter() - t0, **curve))
        shapes[f"T = {T:g} N m, F = {curve['force'][-1] if curve['force'] else 0:g} N"] = rod_shapes(tree, q_end)
        last = f"strain {curve['strain'][-1]:.3f} at {curve['force'][-1]:g} N" if curve["force"] else "no point"
        print(f"T = {T:g} N m: {len(curve['force'])} points, {last}; {curve['end']}", flush=True)
    sparsity = kkt_sparsity(tree, jacobian, f"T = {torques[-1]:g} N m, last point")
    print(f"KKT Jacobian {sparsity['size']}x{sparsity['size']}: {sparsity['density']:.1%} non-zero", flush=True)
    stem = "chiral_structure_smoke" if args.smoke else "chiral_structure"
    result = dict(
        meta=run_metadata(args.smoke, ("jax",), "Table 8 chiral structure, force-strain under initial torques"),
        structure=dict(size, ring_radius=RING_RADIUS, height=H, num_dofs=tree.num_dofs, **sg.robots.CHIRAL_STRUCTURE),
        num_constraints=tree.num_constraints,
        compile_and_check_seconds=compile_s,
        closed_form_check=check,
        curves=curves,
        shapes=shapes,
        kkt_sparsity=sparsity,
    )
    write_report(args.out, stem, False, result, markdown)
    plot(result, args.out, stem)
    print(f"wrote {args.out / stem}.{{json,md}} and figures")


def plot(result, out: Path, stem: str):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for k, c in enumerate(result["curves"]):
        stable = np.asarray(c["stable"], bool)
        last = int(np.argmin(stable)) if not stable.all() else len(stable) - 1  # first unstable point
        for x, y, ax in ((c["strain"], c["force"], axes[0]), (c["force"], np.degrees(c["twist"]), axes[1])):
            x, y = np.asarray(x), np.asarray(y)
            ax.plot(
                x[: last + 1], y[: last + 1], marker=".", ms=3, lw=1, color=f"C{k}", label=f"T = {c['torque']:g} N m"
            )
            ax.plot(x[last:], y[last:], ls="--", lw=1, color=f"C{k}")
    axes[0].axhline(euler_sway_load(result["structure"]), color="0.5", lw=0.6, ls=":")
    axes[0].set(xlabel="compressive strain", ylabel="force [N]", title="force-strain (Fig. 27; dashed: unstable)")
    axes[1].set(xlabel="force [N]", ylabel="top plate twist [deg]", title="twist of the top plate")
    for ax in axes:
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / f"{stem}_force_strain.png", dpi=120)
    shapes = result["shapes"]
    fig = plt.figure(figsize=(3.2 * len(shapes), 3.6))
    for k, (title, rods) in enumerate(shapes.items()):
        ax = fig.add_subplot(1, len(shapes), k + 1, projection="3d")
        for rod in rods:
            p = np.asarray(rod)
            ax.plot(p[:, 0], p[:, 1], p[:, 2], lw=2)
        ax.set(title=title, zlim=(0, result["structure"]["height"]))
        ax.title.set_fontsize(8)
    fig.tight_layout()
    fig.savefig(out / f"{stem}_shapes.png", dpi=110)
    sp = result["kkt_sparsity"]
    pattern = np.asarray([[c == "1" for c in row] for row in sp["rows"]])
    fig, ax = plt.subplots(figsize=(4.6, 4.6))
    ax.spy(pattern, markersize=1.2 if sp["size"] > 60 else 3)
    for edge in [b["stop"] for b in sp["blocks"]][:-1] + [sp["num_dofs"]]:
        ax.axhline(edge - 0.5, color="0.8", lw=0.5)
        ax.axvline(edge - 0.5, color="0.8", lw=0.5)
    ax.set_title(f"static KKT Jacobian ({sp['density']:.0%} non-zero)", fontsize=9)
    fig.tight_layout()
    fig.savefig(out / f"{stem}_kkt_sparsity.png", dpi=120)
    plt.close("all")


def stable_up_to(curve) -> str:
    """The largest force [N] before the first unstable point of a curve (all stable: ``all``)."""
    stable = np.asarray(curve["stable"], bool)
    if stable.all():
        return "all"
    first = int(np.argmin(stable))
    return f"{curve['force'][first - 1]:g}" if first else "none"


def markdown(result) -> str:
    s, chk = result["structure"], result["closed_form_check"]
    lines = [
        "# Chiral structure under compression (Lie-group framework paper, Table 8, Figs. 25 and 27)",
        "",
        f"{s['num_tiers']} rings of {s['num_rods']} rods ({s['rod_length']} m, radius {s['rod_radius']} m, "
        f"E {s['young_modulus']:g} Pa, nu {s['poisson_ratio']}) between rigid plates, rods at {s['ring_radius']} m "
        f"from the axis; {s['num_dofs']} coordinates, {result['num_constraints']} closure equations; no gravity "
        "(`scripts/reproduce_chiral_structure.py`).",
        "",
        f"Closed forms at small loads: shortening {chk['shortening']:.6e} m against {chk['expected_shortening']:.6e} "
        f"(relative error {chk['axial_rel_error']:.1e}); twist {chk['twist']:.6e} rad against "
        f"{chk['expected_twist']:.6e} ({chk['torsion_rel_error']:.1e}).",
        "",
        "| initial torque [N m] | points | strain at 0 N | force at 5 % strain [N] | last force [N] | last strain | "
        "last twist [deg] | stable up to [N] | end |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    sway = euler_sway_load(s)
    for c in result["curves"]:
        if not c["force"]:
            lines.append(f"| {c['torque']:g} | 0 | | | | | | | {c['end']} |")
            continue
        strain, force = np.asarray(c["strain"]), np.asarray(c["force"])
        rising = np.all(np.diff(strain) > 0)
        at5 = f"{np.interp(0.05, strain, force):.2f}" if rising and strain[0] < 0.05 <= strain[-1] else ""
        lines.append(
            f"| {c['torque']:g} | {len(force)} | {strain[0]:.4f} | {at5} | {force[-1]:g} | {strain[-1]:.4f} | "
            f"{np.degrees(c['twist'][-1]):.1f} | {stable_up_to(c)} | {c['end']} |"
        )
    sp = result["kkt_sparsity"]
    lines += [
        "",
        f"Stability: stiffness positive definite on the closures' tangent space. A ring's Euler sway load "
        f"(clamped rods whose upper ends translate without turning) is N pi^2 E I / L^2 = {sway:.2f} N; past the "
        "last stable force the twist path goes on as an unstable equilibrium (under a dead load the plates "
        "would sway sideways).",
        "",
        f"Static KKT Jacobian ({sp['where']}): {sp['size']} x {sp['size']} ({sp['num_dofs']} coordinates, "
        f"{sp['size'] - sp['num_dofs']} closure equations), {sp['nonzeros']} non-zeros ({sp['density']:.1%}).",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
