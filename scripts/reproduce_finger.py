"""Reproduce the cable-driven finger of the Lie-group framework paper (its Table 9,
Figs. 28-30): rigid bones joined by leaf-spring soft joints whose natural shape is a cubic
B-spline of five control points, flexed by a cable through the bones.

The robot (``sg.robots.cable_driven_finger``): three soft joints of Table 9's rectangular
section (1 mm thick, 20 mm wide, ``E`` 5 GPa) between the palm and three bones (40, 25 and
20 mm: not in the paper), a flexor cable 5 mm below the joints' neutral plane and an
extensor 5 mm above, straight across every joint. Each joint's natural shape is one of two
B-splines (Fig. 30's labels 1 and 2; the paper does not list its control points): 1
straight, 2 curled towards the palm by about 34 degrees. No gravity.

* **Natural shapes (Fig. 29).** Each joint is a GVS rod of links with constant rest
  curvature that turn by the spline's exact tangent turn over their span; the distance of
  the rest centreline from the B-spline, for 1 to 8 links per joint.
* **Small-load check.** Under 1 mN of flexor tension, the tip rotation of the equilibrium
  (``static_equilibrium``) against the linear closed form on the B-spline geometry: the
  cable's straight chord across a joint loads each of its points with ``T h(s)`` (``h``
  the distance to the chord), so the tip turns by ``sum_k int T h / (E I) ds``.
* **Tip trajectories (Fig. 30).** The fingertip as the flexor tension rises from 0 to
  ``MAX_TENSION`` (equilibria continued from the previous tension), for all eight
  combinations of the two natural shapes on the three joints; joint flexions and the
  cable's contraction.

Writes ``results/lie_group/finger.{json,md}``, ``finger_shapes.png`` (Figs. 28-29) and
``finger_tip_trajectories.png`` (Fig. 30).

    python scripts/reproduce_finger.py                          # (~10 min on 2 cores)
    python scripts/reproduce_finger.py --smoke --out /tmp/finger  # one joint of one link
"""

from __future__ import annotations

import itertools
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

SMALL_TENSION = 1e-3  # N (linear regime: tip rotation ~1e-4 rad)
MAX_TENSION, TENSION_STEP = 48.0, 3.0  # N
LINK_COUNTS = (1, 2, 4, 8)  # links per joint of the natural-shape study
LINKS_PER_JOINT, BENDING_ORDER = 4, 1  # of the deformation study
SHAPE_SAMPLES = 9  # centreline points drawn per joint


def build(shapes, links: int, order: int) -> sg.BodyTree:
    bones = sg.robots.FINGER_BONE_LENGTHS[: len(shapes)]
    return sg.robots.cable_driven_finger(
        shapes,
        bone_lengths=bones,
        links_per_joint=links,
        bending_order=order,
        gravity=(0.0, 0.0, 0.0),
        dtype=jnp.float64,
    )


def spline_geometry(shape, samples: int = 4001) -> dict:
    """The B-spline of a natural shape (``FINGER_JOINT_SHAPES[shape]``) in its joint's x-z
    plane: points ``(samples, 2)``, arc length ``s`` and tangent angle (from x towards z)."""
    control = sg.robots.FINGER_JOINT_SHAPES[shape]
    geo = sg.robots.joint_natural_shape(control, 1, samples)
    return dict(points=geo["curve"], s=geo["arc_length"], angle=geo["tangent_angle"], control=np.asarray(control))


def natural_shape_study(shapes, link_counts) -> list[dict]:
    """Largest distance [m] of each joint's rest centreline from its B-spline."""
    rows = []
    for shape, links in itertools.product(shapes, link_counts):
        tree = build((shape,), links, 0)
        geo = spline_geometry(shape)
        s = np.linspace(0.0, geo["s"][-1], 201)
        points = np.asarray(
            jax.jit(lambda q, tree=tree, s=s: tree.backbone_positions(q, s, body="joint0"))(
                tree.neutral_configuration()
            )
        )
        expected = np.stack([np.interp(s, geo["s"], geo["points"][:, k]) for k in (0, 1)], axis=-1)
        error = float(np.max(np.linalg.norm(points[:, [0, 2]] - expected, axis=1)))
        rows.append(dict(shape=shape, links=links, length=float(geo["s"][-1]), max_distance=error))
        print(f"shape {shape}, {links} links: rest centreline within {1e6 * error:.1f} um of the B-spline", flush=True)
    return rows


def closed_form_turn(shapes, tension: float) -> float:
    """Tip rotation [rad] of the linear response to a flexor tension on the B-spline
    geometry (module docstring): per joint, ``int T h(s) / (E I) ds`` with ``h`` the
    distance from the curve to the cable's chord between the two bones' holes."""
    joint, d = sg.robots.FINGER_JOINT, sg.robots.FINGER_CABLE_OFFSET
    EI = joint["young_modulus"] * joint["width"] * joint["thickness"] ** 3 / 12.0
    total = 0.0
    for shape in shapes:
        geo = spline_geometry(shape)
        pts, phi = geo["points"], geo["angle"][-1]
        start = np.array([0.0, -d])  # the parent bone's hole, in the joint's frame (x, z)
        end = pts[-1] + d * np.array([np.sin(phi), -np.cos(phi)])  # the child bone's hole
        e = (end - start) / np.linalg.norm(end - start)
        r = pts - start
        h = r[:, 1] * e[0] - r[:, 0] * e[1]  # positive above the chord
        total += float(np.sum(0.5 * (h[1:] + h[:-1]) * np.diff(geo["s"]))) * tension / EI
    return total


def make_solver(tree: sg.BodyTree):
    """``solve(params, u (2,), q_start) -> (q, observed)``: the equilibrium of ``tree`` with
    the parameters ``params`` (every natural-shape combination: same structure, one compiled
    program) under the cable tensions ``u`` [N], Newton continued from ``q_start``."""

    @jax.jit
    def solve(params, u, q_start):
        model = tree.with_params(params)
        q = static_equilibrium(model, u, q0=q_start, ramp_steps=4, throw=False)
        return q, observe(model, q, u)

    return solve


def observe(tree: sg.BodyTree, q, u) -> dict:
    """Bone poses, largest static residual, cable lengths and the drawn centrelines."""
    centrelines = [
        tree.backbone_positions(q, jnp.linspace(0.0, tree.rod(name).total_length, SHAPE_SAMPLES), body=name)
        for name in tree.body_names
        if name.startswith("joint")
    ]
    paths = tree.cable_paths(q)
    return dict(
        bones=tree.body_poses(q)[1::2],
        residual=jnp.max(jnp.abs(static_residual(tree, q, u))),
        cable_lengths=jnp.stack([jnp.sum(jnp.linalg.norm(jnp.diff(p, axis=0), axis=1)) for p in paths]),
        centrelines=jnp.concatenate(centrelines),
        cables=jnp.stack(paths),
    )


def bone_angles(bones) -> np.ndarray:
    """Flexion angle [rad] of every bone's axis from world +x (towards the palm, -z)."""
    R = np.asarray(bones)[:, :3, :3]
    return np.arctan2(-R[:, 2, 0], R[:, 0, 0])


def fingertip(bones, length: float) -> np.ndarray:
    return (np.asarray(bones)[-1] @ np.r_[length, 0.0, 0.0, 1.0])[:3]


def sweep(tree, solve, params, max_tension: float, step: float, rest: dict) -> dict:
    """Equilibria as the flexor tension rises from 0 to ``max_tension`` [N]; a solve whose
    residual stays above 1e-8 is reported and not continued from."""
    q = tree.neutral_configuration()
    tip_length = sg.robots.FINGER_BONE_LENGTHS[tree.num_bodies // 2 - 1]
    out = dict(tension=[], tip=[], flexion=[], contraction=[], converged=[], shapes={})
    for T in np.arange(0.0, max_tension + 1e-9, step):
        q_new, seen = solve(params, jnp.asarray([T, 0.0]), q)
        ok = bool(np.all(np.isfinite(q_new)) and float(seen["residual"]) < 1e-8)
        q = q_new if ok else q
        angles = bone_angles(seen["bones"])
        out["tension"].append(float(T))
        out["tip"].append(fingertip(seen["bones"], tip_length)[[0, 2]].tolist())
        turn = np.diff(np.r_[0.0, angles]) - rest["joint_turns"]
        out["flexion"].append(np.degrees(np.angle(np.exp(1j * turn))).tolist())  # in (-180, 180]
        out["contraction"].append(float(rest["cable_lengths"][0] - seen["cable_lengths"][0]))
        out["converged"].append(ok)
        if np.isclose(T % (4 * step), 0.0) or T + step > max_tension + 1e-9:
            out["shapes"][f"{T:g}"] = dict(
                centreline=np.asarray(seen["centrelines"])[:, [0, 2]].tolist(),
                bones=[
                    (b @ np.array([[0.0, 0, 0, 1], [L, 0, 0, 1]]).T)[[0, 2]].T.tolist()
                    for b, L in zip(np.asarray(seen["bones"]), sg.robots.FINGER_BONE_LENGTHS, strict=False)
                ],
                flexor=np.asarray(seen["cables"])[0][:, [0, 2]].tolist(),
            )
    return out


def main(argv=None):
    smoke = "one joint of one link, bending order 0, a short sweep"
    args = reproduction_args(__doc__.splitlines()[0], argv, ROOT / "results" / "lie_group", smoke, markdown, plot)
    if args is None:  # --replot: done
        return
    num_joints = 1 if args.smoke else 3
    links, order = (1, 0) if args.smoke else (LINKS_PER_JOINT, BENDING_ORDER)
    link_counts = (1, 2) if args.smoke else LINK_COUNTS
    max_tension, step = (6.0, 3.0) if args.smoke else (MAX_TENSION, TENSION_STEP)
    start = time.perf_counter()
    natural = natural_shape_study((1, 2), link_counts)
    combos = list(itertools.product((1, 2), repeat=num_joints))
    trees = {c: build(c, links, order) for c in combos}
    base = trees[combos[0]]
    t0 = time.perf_counter()
    solve = make_solver(base)
    check = []
    for c in (combos[0], combos[-1]):
        q, seen = solve(trees[c].params, jnp.asarray([SMALL_TENSION, 0.0]), base.neutral_configuration())
        _, rest = solve(trees[c].params, jnp.zeros(2), base.neutral_configuration())
        turn = float(bone_angles(seen["bones"])[-1] - bone_angles(rest["bones"])[-1])
        expected = closed_form_turn(c, SMALL_TENSION)
        check.append(dict(shapes=list(c), tip_rotation=turn, closed_form=expected, rel_error=abs(turn / expected - 1)))
        print(f"shapes {c}: tip rotation {turn:.6e} rad, closed form {expected:.6e} ({check[-1]['rel_error']:.1e})")
    compile_and_check = time.perf_counter() - t0
    sweeps = []
    for c in combos:
        t0 = time.perf_counter()
        _, rest = solve(trees[c].params, jnp.zeros(2), base.neutral_configuration())
        rest = dict(
            joint_turns=np.diff(np.r_[0.0, bone_angles(rest["bones"])]), cable_lengths=np.asarray(rest["cable_lengths"])
        )
        run = sweep(base, solve, trees[c].params, max_tension, step, rest)
        run.update(joint_shapes=list(c), seconds=time.perf_counter() - t0)
        sweeps.append(run)
        tip = run["tip"][-1]
        print(
            f"shapes {c}: tip at ({1e3 * tip[0]:.1f}, {1e3 * tip[1]:.1f}) mm under {run['tension'][-1]:g} N, "
            f"flexion {np.round(run['flexion'][-1], 1)} deg, all converged: {all(run['converged'])}",
            flush=True,
        )
    stem = "finger_smoke" if args.smoke else "finger"
    result = dict(
        meta=run_metadata(args.smoke, ("jax", "scipy"), "Table 9 finger: natural shapes, closed form, Fig. 30"),
        robot=dict(
            num_joints=num_joints,
            links_per_joint=links,
            bending_order=order,
            num_dofs=base.num_dofs,
            joint=sg.robots.FINGER_JOINT,
            joint_shapes={str(k): v for k, v in sg.robots.FINGER_JOINT_SHAPES.items()},
            bone_lengths=sg.robots.FINGER_BONE_LENGTHS[:num_joints],
            bone_section=sg.robots.FINGER_BONE_SECTION,
            cable_offset=sg.robots.FINGER_CABLE_OFFSET,
        ),
        natural_shapes=natural,
        small_tension=SMALL_TENSION,
        small_load_check=check,
        compile_and_check_seconds=compile_and_check,
        sweeps=sweeps,
        seconds=time.perf_counter() - start,
    )
    write_report(args.out, stem, False, result, markdown)
    plot(result, args.out, stem)
    print(f"wrote {args.out / stem}.{{json,md}} and figures")


def _label(shapes) -> str:
    return "-".join(str(s) for s in shapes)


def markdown(result: dict) -> str:
    robot = result["robot"]
    joint = robot["joint"]
    lines = [
        f"# Cable-driven finger (Table 9, Figs. 28-30): {robot['num_joints']} soft joints, no gravity",
        "",
        f"Soft joints: leaf springs {1e3 * joint['thickness']:g} mm x {1e3 * joint['width']:g} mm, "
        f"E = {joint['young_modulus'] / 1e9:g} GPa (Table 9), {robot['links_per_joint']} links each of bending "
        f"order {robot['bending_order']} ({robot['num_dofs']} coordinates); bones "
        + ", ".join(f"{1e3 * b:g}" for b in robot["bone_lengths"])
        + f" mm; flexor cable {1e3 * robot['cable_offset']:g} mm below the joints' neutral plane.",
        "",
        "Natural shapes (Fig. 29): largest distance of a joint's rest centreline from its B-spline.",
        "",
        "| shape | links per joint | joint length [mm] | max distance [um] | relative to the length |",
        "|---|---|---|---|---|",
    ]
    for r in result["natural_shapes"]:
        lines.append(
            f"| {r['shape']} | {r['links']} | {1e3 * r['length']:.3f} | {1e6 * r['max_distance']:.2f} | "
            f"{r['max_distance'] / r['length']:.1e} |"
        )
    lines += [
        "",
        f"Small-load check (flexor at {result['small_tension']:g} N): tip rotation [rad] of the equilibrium against "
        "the linear closed form on the B-spline geometry.",
        "",
        "| joint shapes | tip rotation | closed form | rel. difference |",
        "|---|---|---|---|",
    ]
    for r in result["small_load_check"]:
        lines.append(
            f"| {_label(r['shapes'])} | {r['tip_rotation']:.6e} | {r['closed_form']:.6e} | {r['rel_error']:.1e} |"
        )
    lines += [
        "",
        "Tip trajectories (Fig. 30): the fingertip (x, z) [mm] and the joints' flexion from rest [deg] as the "
        "flexor tension rises (equilibria continued from the previous tension).",
        "",
        "| joint shapes | tension [N] | fingertip [mm] | joint flexion [deg] | flexor contraction [mm] | converged |",
        "|---|---|---|---|---|---|",
    ]
    for s in result["sweeps"]:
        n = len(s["tension"])
        for i in sorted({0, n // 2, n - 1}):
            tip = ", ".join(f"{1e3 * v:+.1f}" for v in s["tip"][i])
            flex = ", ".join(f"{v:.1f}" for v in s["flexion"][i])
            lines.append(
                f"| {_label(s['joint_shapes'])} | {s['tension'][i]:g} | ({tip}) | {flex} | "
                f"{1e3 * s['contraction'][i]:.2f} | {all(s['converged'][: i + 1])} |"
            )
    return "\n".join(lines) + "\n"


def plot(result, out: Path, stem: str):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # Figs. 28-29: the natural shapes' splines and a finger at rest and flexed.
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), gridspec_kw=dict(width_ratios=(1, 1.4)))
    ax = axes[0]
    for k, (key, control) in enumerate(result["robot"]["joint_shapes"].items()):
        geo = spline_geometry(int(key))
        ax.plot(1e3 * geo["points"][:, 0], 1e3 * geo["points"][:, 1], lw=2, color=f"C{k}", label=f"shape {key}")
        c = 1e3 * np.asarray(control)
        ax.plot(c[:, 0], c[:, 1], "o--", color=f"C{k}", ms=4, lw=0.8, alpha=0.7)
    ax.set(xlabel="x [mm]", ylabel="z [mm]", title="natural shapes and control polygons (Fig. 29)", aspect="equal")
    ax.set_ylim(-8.0, 3.0)
    ax.legend(fontsize=7)
    ax = axes[1]
    last = result["sweeps"][-1]
    for k, (T, sh) in enumerate(last["shapes"].items()):
        cl = 1e3 * np.asarray(sh["centreline"])
        ax.plot(cl[:, 0], cl[:, 1], ".", color=f"C{k}", ms=3)
        for b in sh["bones"]:
            b = 1e3 * np.asarray(b)
            ax.plot(b[:, 0], b[:, 1], color=f"C{k}", lw=4, alpha=0.6)
        f = 1e3 * np.asarray(sh["flexor"])
        ax.plot(f[:, 0], f[:, 1], color=f"C{k}", lw=0.8, ls="--", label=f"{T} N")
    ax.set(xlabel="x [mm]", ylabel="z [mm]", title=f"shapes {_label(last['joint_shapes'])} (Fig. 28)", aspect="equal")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / f"{stem}_shapes.png", dpi=110)
    plt.close(fig)
    # Fig. 30: the fingertip's trajectory for every combination of natural shapes.
    sweeps = result["sweeps"]
    cols = min(4, len(sweeps))
    rows = -(-len(sweeps) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 3.0 * rows), squeeze=False, sharex=True, sharey=True)
    for ax, s in zip(axes.flat, sweeps, strict=False):
        tip = 1e3 * np.asarray(s["tip"])
        ax.plot(tip[:, 0], tip[:, 1], "-", color="C3", lw=1.5)
        ax.scatter(tip[:, 0], tip[:, 1], c=s["tension"], s=10, cmap="viridis", zorder=3)
        for sh in s["shapes"].values():
            cl = 1e3 * np.asarray(sh["centreline"])
            ax.plot(cl[:, 0], cl[:, 1], ".", color="0.6", ms=1.5)
            for b in sh["bones"]:
                b = 1e3 * np.asarray(b)
                ax.plot(b[:, 0], b[:, 1], color="0.6", lw=2)
        ax.set(title=f"joints {_label(s['joint_shapes'])}", aspect="equal")
    for ax in axes[-1]:
        ax.set_xlabel("x [mm]")
    for ax in axes[:, 0]:
        ax.set_ylabel("z [mm]")
    fig.suptitle("fingertip under rising flexor tension (Fig. 30); colour: tension")
    fig.tight_layout()
    fig.savefig(out / f"{stem}_tip_trajectories.png", dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
