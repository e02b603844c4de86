"""Cost of ground contact per simulation step, batched, on this CPU.

Cases: a free 2-segment PCS rod lying on the ground, probed at 16 backbone points
(anisotropic friction along the rod), and the brittle star on the ground (its hub as a sphere
of half its thickness and 4 points on each of its 5 arms, all probed in one pass). Each case steps
``sg.sim.linear_trapezoid_step`` in float32 with the ground contact as the applied force
(``sg.contact.surface_contact``), vmapped over ``num_envs`` randomly perturbed states, in a
jitted ``lax.scan`` of control steps; the same step without contact runs side by side in
the same process, so the ratio is the contact's cost. steps/s = num_envs * steps / seconds
(best of the repeats, median in the JSON); every final state is checked finite.

    .venv/bin/python scripts/bench_contact.py [--quick | --smoke] [--out results/bench]

Third case: the 2-finger soft gripper holding a box (a free `RigidObject` in the same tree,
20 finger probe points against it, forces on the probes' surfaces, 0.2 ms steps), started
from the grasp closed on a table (tests/test_contact_objects.py checks that this grasp holds
the box, in float64 with the predictor-corrector scheme); its "without" run is the same tree
without contact forces.

Writes <out>/contact_cpu.{json,md} (``contact_cpu_quick.*`` with ``--quick``; <out>:
``--out``, default results/bench) and prints the table. ``--quick``: 1 and 256 envs, 3
repeats. ``--smoke``: every case once at the tiniest sizes, for the tests: 2 envs, 4 steps
per call, 1 repeat; files ``contact_cpu_smoke.*``, in <tmp>/sorogym-smoke unless ``--out``
says otherwise. Its rates are dominated by dispatch overhead and say nothing about the
contact's cost.
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import sorogym as sg
from sorogym.contact import (
    ContactLaw,
    GroundPlane,
    RigidObject,
    object_contact,
    probe_bodies,
    probe_object,
    surface_contact,
)
from sorogym.provenance import run_metadata
from sorogym.robots import brittle_star, gripper

ROOT = Path(__file__).resolve().parents[1]
SMOKE_OUT = Path(tempfile.gettempdir()) / "sorogym-smoke"  # --smoke without --out: never results/
DT = 1e-3  # [s] per simulation step on the ground
GRASP_DT = 2e-4  # [s]: the grasp's stiffer contact and friction (h < 2 m eps / (mu sum f_n))
ROD = dict(radius=0.01, density=1000.0, young_modulus=1e6, poisson_ratio=0.5, damping=100.0)


def rod_case():
    """The free rod, its probe (bodies, abscissae, link radius) and its contact law."""
    params = sg.RodParams.create(length=[0.15, 0.15], **ROD, mounting="horizontal", dtype=jnp.float32)
    joint = sg.Joint.free(position=(0.0, 0.0, ROD["radius"]))
    tree = sg.BodyTree([sg.RodBody("rod", sg.PCS(params), joint=joint, actuated=False)], gravity=(0, 0, -9.81))
    s = np.linspace(0.0, 0.3, 16)
    law = ContactLaw(100.0, damping=5.0, friction=(0.2, 0.6, 0.8), slip_velocity=1e-3, dtype=jnp.float32)
    return tree, (["rod"] * 16, s, 0.0), law


def star_case():
    star = brittle_star(dtype=jnp.float32)
    s = np.linspace(0.02, 0.12, 4)
    bodies = ["hub"] + [f"arm{k}" for k in range(5) for _ in s]  # the hub: a sphere of half its thickness
    abscissae = np.concatenate([[0.0], np.tile(s, 5)])
    law = ContactLaw(200.0, damping=5.0, friction=0.5, slip_velocity=1e-3, dtype=jnp.float32)
    return star, (bodies, abscissae, 0.007), law


def gripper_case():
    """The 2-finger soft gripper holding a box (the grasp of tests/test_contact_objects.py):
    10 probe points per finger against the box, the force on the probes' surfaces."""
    box = RigidObject("box", "box", (0.02, 0.03, 0.025), 300.0, position=(0.0, 0.0, 0.19))
    tree = gripper(num_fingers=2, wrist="fixed", extra_bodies=[box.link()], dtype=jnp.float32)
    s = np.tile(np.linspace(0.01, 0.1, 10), 2)
    bodies = ["finger0"] * 10 + ["finger1"] * 10
    law = ContactLaw(3e3, damping=10.0, friction=1.0, slip_velocity=2e-3, dtype=jnp.float32)

    def contact(q, qd):
        probe = probe_bodies(tree, q, qd, bodies, s)
        return object_contact(tree, q, qd, box, law, probe, at_surface=True)[0]

    u = jnp.array([5.0, 0.0, 5.0, 0.0], jnp.float32)
    table = GroundPlane(height=0.19 - 0.025, dtype=jnp.float32)

    def closing(y, _):  # the fingers close on the box resting on a table
        def applied(q, qd):
            on_table = surface_contact(table, law, probe_object(tree, q, qd, box))[0]
            return tree.generalized_force(q, u, contact(q, qd) + on_table)

        return sg.sim.linear_trapezoid_step(tree, y, applied, GRASP_DT), None

    y = tree.pack_state(tree.neutral_configuration(jnp.float32), jnp.zeros(tree.num_dofs, jnp.float32))
    grasped = jax.jit(lambda y: jax.lax.scan(closing, y, None, length=int(0.3 / GRASP_DT))[0])(y)
    return tree, contact, GRASP_DT, u, grasped, 1e-5


def ground_contact(tree, probe_spec, law):
    ground = GroundPlane(dtype=jnp.float32)
    bodies, s, radius = probe_spec
    return lambda q, qd: surface_contact(ground, law, probe_bodies(tree, q, qd, bodies, s, radius))[0]


def on_ground(build):
    def case():
        tree, spec, law = build()
        u = jnp.full((tree.num_actuators,), 0.2, jnp.float32)
        return tree, ground_contact(tree, spec, law), DT, u, None, 0.01

    return case


CASES = {
    "rod_on_ground (16 points)": on_ground(rod_case),
    "brittle_star_on_ground (21 points)": on_ground(star_case),
    "gripper_holding_box (20 points)": gripper_case,
}


def compile_run(tree, contact_force, dt, u, start, spread, num_envs, steps, contact: bool):
    """The jitted batched scan from ``num_envs`` states: ``start`` (a packed state; the
    neutral one at rest if ``None``) with its configuration perturbed by ``spread``."""

    def applied(q, qd):
        tau = tree.generalized_force(q, u)
        if contact:
            tau = tau + contact_force(q, qd)
        return tau

    step = jax.vmap(lambda y: sg.sim.linear_trapezoid_step(tree, y, applied, dt))

    def run(y):
        return jax.lax.scan(lambda y, _: (step(y), None), y, None, length=steps)[0]

    rng = np.random.default_rng(0)
    if start is None:
        start = tree.pack_state(tree.neutral_configuration(jnp.float32), jnp.zeros(tree.num_dofs, jnp.float32))
    q0, v0 = tree.split_state(start)
    dq = jnp.asarray(spread * rng.normal(size=(num_envs, tree.num_dofs)), jnp.float32)
    y0 = jax.vmap(lambda d: tree.pack_state(tree.retract(q0, d), v0))(dq)
    t0 = time.perf_counter()
    compiled = jax.jit(run).lower(y0).compile()
    return compiled, y0, time.perf_counter() - t0


def measure(compiled, y0, repeats):
    y = jax.block_until_ready(compiled(y0))
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        y = jax.block_until_ready(compiled(y0))
        times.append(time.perf_counter() - t0)
    return times, bool(np.all(np.isfinite(np.asarray(y))))


#: per mode: batch sizes, repeats, and the steps per call max(min_steps, ceil(step_budget / num_envs))
MODES = {
    "full": {"sizes": (1, 256, 1024), "repeats": 5, "min_steps": 10, "step_budget": 4000},
    "quick": {"sizes": (1, 256), "repeats": 3, "min_steps": 10, "step_budget": 4000},
    "smoke": {"sizes": (2,), "repeats": 1, "min_steps": 4, "step_budget": 8},
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="fewer repeats, 1 and 256 envs")
    size.add_argument(
        "--smoke", action="store_true", help="2 envs, 4 steps, 1 repeat: every case once (files *_smoke; the tests)"
    )
    parser.add_argument(
        "--out", type=Path, help="output directory (default results/bench; with --smoke <tmp>/sorogym-smoke)"
    )
    args = parser.parse_args(argv)
    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    cfg = MODES[mode]
    repeats = cfg["repeats"]
    rows = []
    for name, build in CASES.items():
        tree, contact_force, dt, u, start, spread = build()
        for num_envs in cfg["sizes"]:
            steps = max(cfg["min_steps"], math.ceil(cfg["step_budget"] / num_envs))
            row = {"case": name, "num_envs": num_envs, "steps_per_call": steps, "dt_s": dt}
            runs = {
                key: compile_run(tree, contact_force, dt, u, start, spread, num_envs, steps, key == "contact")
                for key in ("contact", "free")
            }
            times = {key: [] for key in runs}
            finite = True
            for _ in range(repeats):  # alternate the two programs
                for key, (compiled, y0, _) in runs.items():
                    t, ok = measure(compiled, y0, 1)
                    times[key] += t
                    finite &= ok
            for key in runs:
                row[f"{key}_steps_per_s"] = num_envs * steps / min(times[key])
                row[f"{key}_steps_per_s_median"] = num_envs * steps / float(np.median(times[key]))
                row[f"{key}_compile_s"] = runs[key][2]
            row["contact_cost_ratio"] = row["free_steps_per_s"] / row["contact_steps_per_s"]
            row["finite"] = finite
            rows.append(row)
            print(
                f"{name} x{num_envs}: {row['contact_steps_per_s']:,.0f} steps/s with contact, "
                f"{row['free_steps_per_s']:,.0f} without (x{row['contact_cost_ratio']:.2f})",
                flush=True,
            )
    out = args.out or (SMOKE_OUT if args.smoke else ROOT / "results" / "bench")
    out.mkdir(parents=True, exist_ok=True)
    stem = "contact_cpu" if mode == "full" else f"contact_cpu_{mode}"
    notes = "float32; steps/s best of the alternating repeats"
    if mode == "smoke":
        notes = f"smoke run (every case once at the tiniest sizes; not a benchmark): {notes}"
    meta = run_metadata(args.quick, ("jax", "jaxlib"), notes, smoke=args.smoke, sizes=cfg)
    (out / f"{stem}.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    lines = [
        "| case | envs | steps/s with contact | steps/s without | contact cost (x) | finite |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['case']} | {r['num_envs']} | {r['contact_steps_per_s']:,.0f} | {r['free_steps_per_s']:,.0f} | "
            f"{r['contact_cost_ratio']:.2f} | {r['finite']} |"
        )
    (out / f"{stem}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines) + f"\nwrote {out / stem}.json and .md")


if __name__ == "__main__":
    main()
