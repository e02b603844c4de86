"""Reproduce the operational-space pose-tracking study of the SoRoMoX paper (section V-C2).

A fully actuated two-segment spatial PCS arm (``A = I``, ``n = 12``; the robot of
:func:`sorogym.control.case_study_pcs`) tracks the spherical figure-eight pose of eqs. 25-28
(period 4 s, sphere radius 0.08 m, first end-effector axis along the outward normal) with
the impedance controller of eq. 30. Gains (eq. 31): translational stiffness ``k_p = 1 N/m``,
``w_n = sqrt(k_p / mean(Lambda_p(0)))``, rotational stiffness ``Lambda_R,i(0) w_n^2``,
critically damped ``d_i = 2 sqrt(k_i Lambda_i(0))``. Metrics (eqs. 32-33): RMSE and
range-normalised RMSE of the position-error norm and of the geodesic orientation error over
10 s. Writes ``results/control/pose_tracking.{json,md}`` with the paper's values alongside.

    python scripts/reproduce_pose_tracking.py              # dt = 2.5e-4 s
    python scripts/reproduce_pose_tracking.py --dt 5e-4 --out /tmp/pose.json
    python scripts/reproduce_pose_tracking.py --smoke --out /tmp/pose.json   # 0.5 s, seconds

``--smoke`` simulates ``--duration 0.5`` s at ``dt = 5e-4`` s and writes
``<out stem>_smoke.{json,md}`` (errors over that half second: not comparable to the paper).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import equinox as eqx  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from sorogym.control import ImpedanceController, OperationalSpaceDynamics, matched_impedance_gains  # noqa: E402
from sorogym.lie import so3  # noqa: E402
from sorogym.provenance import run_metadata  # noqa: E402
from sorogym.robots import case_study_pcs, figure_eight_reference  # noqa: E402
from sorogym.sim import rollout_closed_loop_to  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

PAPER = {
    "rmse_p_mm": 2.84,
    "nrmse_p": 0.0211,
    "rmse_R_deg": 2.29,
    "nrmse_R": 0.0200,
    "span_p_mm": 134.6,
    "span_R_deg": 114.6,
}
DURATION = 10.0


@eqx.filter_jit
def closed_loop(model, controller, dt, duration=DURATION):
    return rollout_closed_loop_to(
        model, model.zero_state(), controller, duration, controller.initial_state(), solver_dt=dt, save_dt=0.01
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dt", type=float, default=2.5e-4, help="integration step [s] (the paper: 2e-5)")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "control" / "pose_tracking.json")
    ap.add_argument("--duration", type=float, default=DURATION, help="simulated time [s]")
    ap.add_argument("--smoke", action="store_true", help="0.5 s at dt 5e-4 (seconds)")
    args = ap.parse_args(argv)
    if args.smoke:
        args.duration, args.dt = min(args.duration, 0.5), max(args.dt, 5e-4)
        args.out = args.out.with_name(f"{args.out.stem}_smoke.json")

    model = case_study_pcs(2, dtype=jnp.float64)
    L = float(model.total_length)
    task = OperationalSpaceDynamics(model, [L])
    q0 = jnp.zeros(model.num_dofs)
    g0 = jax.jit(lambda q: model.forward_kinematics(q, L))(q0)
    lam0 = np.asarray(jax.jit(lambda q: task.task_inertia(q))(q0))
    stiffness, damping, w_n = matched_impedance_gains(lam0)
    reference = figure_eight_reference(g0)
    controller = ImpedanceController(task, reference, stiffness, damping)

    start = time.perf_counter()
    traj = closed_loop(model, controller, args.dt, args.duration)
    ys = np.asarray(traj.ys)
    seconds = time.perf_counter() - start
    if not np.all(np.isfinite(ys)):
        raise RuntimeError("the closed loop diverged; try a smaller --dt")

    @jax.jit
    def errors(ts, ys):
        def one(t, y):
            g = model.forward_kinematics(y[: model.num_dofs], L)
            g_d = reference(t).value
            return jnp.linalg.norm(g_d[:3, 3] - g[:3, 3]), jnp.linalg.norm(so3.log(g_d[:3, :3] @ g[:3, :3].T)), g_d

        return jax.vmap(one)(ts, ys)

    eps_p, eps_R, g_d = (np.asarray(a) for a in errors(traj.ts, traj.ys))
    p_d = g_d[:, :3, 3]
    span_p = np.linalg.norm(p_d[:, None] - p_d[None], axis=-1).max()
    geodesic = jax.jit(jax.vmap(jax.vmap(lambda a, b: jnp.linalg.norm(so3.log(a @ b.T)), (None, 0)), (0, None)))
    R_sub = jnp.asarray(g_d[::2, :3, :3])
    span_R = float(np.asarray(geodesic(R_sub, R_sub)).max())
    rmse_p, rmse_R = float(np.sqrt(np.mean(eps_p**2))), float(np.sqrt(np.mean(eps_R**2)))
    ours = {
        "rmse_p_mm": 1e3 * rmse_p,
        "nrmse_p": rmse_p / span_p,
        "rmse_R_deg": float(np.degrees(rmse_R)),
        "nrmse_R": rmse_R / span_R,
        "span_p_mm": 1e3 * span_p,
        "span_R_deg": float(np.degrees(span_R)),
    }

    rows = ["| metric | sorogym | paper |", "|---|---|---|"]
    rows += [f"| {k} | {ours[k]:.4g} | {PAPER[k]:.4g} |" for k in PAPER]
    table = (
        f"Figure-eight pose tracking (impedance control, eq. 30), two-segment PCS, {args.duration:g} s, "
        f"Tsit5 at dt = {args.dt:g} s, "
        f"w_n = {w_n:.3g} rad/s.\n\n" + "\n".join(rows)
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    meta = run_metadata(
        args.smoke,
        ("jax", "diffrax", "equinox"),
        "continuous closed loop, Tsit5 fixed step; Kelvin-Voigt damping eta = 2000 Pa s (not stated in the paper)",
    )
    args.out.write_text(
        json.dumps(
            {
                "meta": meta,
                "dt": args.dt,
                "duration": args.duration,
                "gains": {
                    "stiffness": stiffness.tolist(),
                    "damping": damping.tolist(),
                    "natural_frequency": float(w_n),
                },
                "results": ours,
                "paper": PAPER,
                "seconds": round(seconds, 1),
            },
            indent=2,
        )
    )
    args.out.with_suffix(".md").write_text(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
