"""Accuracy per unit work of the contact formulation: a rigid box dropped tilted and spinning
onto the ground, stepped by the two fixed-step schemes at several step sizes and contact
stiffnesses.

The box (10 x 8 x 6 cm, 1 kg; `sorogym.contact.RigidObject` on a free joint) touches the
ground with its eight corners under a `ContactLaw` of stiffness k per corner (Hunt-Crossley
damping 20 s/m at k = 1e4 N/m, 50 s/m at 1e5), friction 0.4 and slip velocity 1 mm/s. For
each k, a reference run with the predictor-corrector scheme at 10 us; then
`linear_trapezoid` (one evaluation of the dynamics and the contact per step) and
`trapezoid_pc` (two) at 0.05-2 ms. Error: the box's position [m] and rotation [rad] after
0.8 s against the reference of the same k (the integration error; the stiffness's own
effect is the resting depth `m g / (4 k)`, listed beside). Work: evaluations per simulated
second, and the measured wall time per simulated second of one jitted float64 run, all in
this process.

    .venv/bin/python scripts/study_contact_formulation.py [--quick | --smoke] [--out DIR]

Writes <out>/formulation.{json,md} (``_quick`` / ``_smoke`` with those flags; out defaults
to results/contact) and prints the table. ``--smoke``: k = 1e5 only, one step size (0.2 ms)
per scheme, 0.1 s drops (seconds).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)  # a script: float64 for the accuracy study

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from scipy.spatial.transform import Rotation  # noqa: E402

import sorogym as sg  # noqa: E402
from sorogym.contact import ContactLaw, GroundPlane, RigidObject, probe_object, surface_contact  # noqa: E402
from sorogym.provenance import run_metadata  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
HALF = (0.05, 0.04, 0.03)
MASS, G, MU, SLIP, DURATION = 1.0, 9.81, 0.4, 1e-3, 0.8
STIFFNESSES = (1e4, 1e5)  # [N/m] per corner
DAMPING = {1e4: 20.0, 1e5: 50.0}  # [s/m]
STEPS_MS = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0)
SCHEMES = {
    "linear_trapezoid": (sg.sim.linear_trapezoid_step, 1),
    "trapezoid_pc": (sg.sim.trapezoid_predictor_corrector_step, 2),
}
REFERENCE_DT = 1e-5


def scene():
    box = RigidObject("box", "box", HALF, MASS / (8 * np.prod(HALF)))
    tree = sg.BodyTree([box.link()], gravity=(0.0, 0.0, -G))
    quat = Rotation.from_rotvec((0.0, 0.5, 0.2)).as_quat(scalar_first=True)
    q0 = jnp.concatenate([jnp.array([0.0, 0.0, 0.08]), jnp.asarray(quat)])
    qd0 = jnp.array([0.0, 3.0, 1.0, 0.8, 0.0, 0.0])  # body [w, v]
    return box, tree, tree.pack_state(q0, qd0)


def simulate(tree, box, law, scheme, dt, y0, duration=DURATION):
    ground = GroundPlane()
    steps = int(round(duration / dt))

    def applied(q, qd):
        return surface_contact(ground, law, probe_object(tree, q, qd, box))[0]

    @jax.jit
    def run(y):
        return jax.lax.scan(lambda y, _: (scheme(tree, y, applied, dt), None), y, None, length=steps)[0]

    y = run(y0)
    jax.block_until_ready(y)
    start = time.perf_counter()
    y = jax.block_until_ready(run(y0))
    return np.asarray(y), time.perf_counter() - start


def pose_error(tree, y, y_ref):
    q, q_ref = y[: tree.num_positions], y_ref[: tree.num_positions]
    rot = Rotation.from_quat(q[3:7], scalar_first=True) * Rotation.from_quat(q_ref[3:7], scalar_first=True).inv()
    return float(np.linalg.norm(q[:3] - q_ref[:3])), float(rot.magnitude())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="two step sizes, one stiffness")
    ap.add_argument("--smoke", action="store_true", help="one step size, one stiffness, 0.1 s")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "contact")
    args = ap.parse_args(argv)
    stiffnesses = STIFFNESSES[1:] if args.quick or args.smoke else STIFFNESSES
    steps_ms = (0.2,) if args.smoke else (0.1, 1.0) if args.quick else STEPS_MS
    duration = 0.1 if args.smoke else DURATION
    box, tree, y0 = scene()
    rows = []
    for k in stiffnesses:
        law = ContactLaw(k, damping=DAMPING[k], friction=MU, slip_velocity=SLIP)
        y_ref, _ = simulate(tree, box, law, sg.sim.trapezoid_predictor_corrector_step, REFERENCE_DT, y0, duration)
        travel = float(np.linalg.norm(y_ref[:2] - np.asarray(y0[:2])))
        for name, (scheme, evaluations) in SCHEMES.items():
            for dt_ms in steps_ms:
                y, wall = simulate(tree, box, law, scheme, dt_ms * 1e-3, y0, duration)
                finite = bool(np.all(np.isfinite(y)))
                pos, rot = pose_error(tree, y, y_ref) if finite else (float("nan"), float("nan"))
                rows.append(
                    {
                        "stiffness": k,
                        "resting_depth": MASS * G / (4 * k),
                        "scheme": name,
                        "dt_ms": dt_ms,
                        "finite": finite,
                        "position_error": pos,
                        "rotation_error": rot,
                        "evaluations_per_s": evaluations / (dt_ms * 1e-3),
                        "wall_per_simulated_s": wall / duration,
                        "reference_travel": travel,
                    }
                )
                print(f"k {k:g} {name} dt {dt_ms} ms: position error {pos:.3g} m, rotation {rot:.3g} rad", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    meta = run_metadata(args.quick or args.smoke, ("jax", "jaxlib"), "float64; one env; wall time of one jitted run")
    result = {"meta": meta, "duration_s": duration, "reference_dt_s": REFERENCE_DT, "rows": rows}
    stem = "formulation" + ("_smoke" if args.smoke else "_quick" if args.quick else "")
    (args.out / f"{stem}.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [
        "| k [N/m] | resting depth [mm] | scheme | dt [ms] | position error [mm] | rotation error [rad] "
        "| evaluations / s | wall [s] per simulated s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        err = "diverged" if not r["finite"] else f"{1e3 * r['position_error']:.3g}"
        rot = "-" if not r["finite"] else f"{r['rotation_error']:.3g}"
        lines.append(
            f"| {r['stiffness']:g} | {1e3 * r['resting_depth']:.3g} | {r['scheme']} | {r['dt_ms']:g} | {err} | {rot} | "
            f"{r['evaluations_per_s']:,.0f} | {r['wall_per_simulated_s']:.3g} |"
        )
    table = "\n".join(lines)
    (args.out / f"{stem}.md").write_text(
        f"# Contact formulation: accuracy per unit work\n\n{__doc__.split(chr(10) + chr(10))[1]}\n\n{table}\n"
    )
    print(table)


if __name__ == "__main__":
    main()
