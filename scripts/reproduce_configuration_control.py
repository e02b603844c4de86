"""Reproduce the configuration-space control benchmark of the SoRoMoX paper (Table VIII).

A horizontally mounted, fully actuated one-segment spatial PCS arm (``A = I``; see
:func:`sorogym.control.case_study_pcs`) runs the benchmark of eqs. 15-17: five setpoints
on ``(kappa_y, kappa_z, sigma_x)`` over 15 s, then 15 s of sinusoidal tracking. Every
controller shares the reference, the matched gains of eq. 22 (``w_n = 30 rad/s``,
``zeta = 0.9``, ``w_i = 0.75 rad/s`` on ``M(0)``), the saturated integral of eqs. 18-19 and
the rollout (continuous closed loop, Tsit5 at ``--dt``, saved every 10 ms); only the
model-based term changes.

Metrics (eqs. 23-24): per-coordinate RMSE over the regulation phase [0, 15) s and the
tracking phase [15, 30] s, and the terminal mean absolute error over the last 10 % of the
four post-change setpoint intervals. Writes ``results/control/configuration_space.json``
and ``.md`` with the paper's values alongside.

    python scripts/reproduce_configuration_control.py            # dt = 2.5e-4 s, ~10 min on 2 cores
    python scripts/reproduce_configuration_control.py --dt 5e-4 --out /tmp/cfg.json
    python scripts/reproduce_configuration_control.py --smoke --out /tmp/cfg.json  # seconds

``--smoke`` runs two controllers (PD, computed torque) for ``--duration 0.5`` s at
``dt = 5e-4`` s and writes ``<out stem>_smoke.{json,md}``; the metrics of phases the short
run does not reach are ``null``.
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

from sorogym.control import ConfigurationController, PIDGains  # noqa: E402
from sorogym.provenance import run_metadata  # noqa: E402
from sorogym.robots import (  # noqa: E402
    REGULATION_END,
    STRAIN_SETPOINTS,
    TRACKING_END,
    case_study_pcs,
    strain_benchmark_reference,
)
from sorogym.sim import rollout_closed_loop_to  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

COORDS = ("kappa_x", "kappa_y", "kappa_z", "dsigma_x", "sigma_y", "sigma_z")
E_SAT = (10.0, 10.0, 10.0, 0.1, 0.1, 0.1)  # eq. 19
# label -> (compensation, integral on)
CONTROLLERS = {
    "PD": ("none", False),
    "PID": ("none", True),
    "potential compensation": ("potential", True),
    "gravity cancellation": ("gravity", True),
    "potential cancellation": ("potential_cancellation", True),
    "feedforward": ("feedforward", True),
    "mixed-state feedback": ("mixed_state", True),
    "computed torque": ("computed_torque", True),
}
# Table VIII of the paper (0.0 stands for "below 1e-12").
PAPER = {
    "regulation_rmse": {
        "PD": (2.817, 3.067, 1.573, 1.806e-2, 3.704e-2, 1.133e-1),
        "PID": (2.472, 3.052, 1.531, 1.846e-2, 3.606e-2, 6.747e-2),
        "potential compensation": (2.097e-1, 2.965, 1.408, 1.832e-2, 2.111e-2, 4.591e-2),
        "feedforward": (2.097e-1, 2.965, 1.408, 1.832e-2, 2.111e-2, 4.591e-2),
        "computed torque": (0.0, 2.088, 1.026, 1.198e-2, 0.0, 0.0),
    },
    "terminal_mae": {
        "PD": (2.827, 1.081, 0.7853, 5.828e-3, 3.180e-2, 1.058e-1),
        "PID": (0.9285, 0.4410, 0.3845, 4.565e-3, 1.446e-2, 2.315e-2),
        "potential compensation": (4.579e-2, 0.2532, 0.1546, 1.924e-3, 3.524e-3, 4.549e-3),
        "feedforward": (4.579e-2, 0.2532, 0.1546, 1.924e-3, 3.524e-3, 4.549e-3),
        "computed torque": (0.0, 5.963e-2, 3.998e-2, 4.466e-4, 0.0, 0.0),
    },
    "tracking_rmse": {
        "PD": (1.768, 2.688, 0.9485, 2.501e-2, 2.936e-2, 1.204e-1),
        "PID": (2.233, 2.603, 0.9200, 2.652e-2, 3.357e-2, 7.504e-2),
        "potential compensation": (0.1369, 2.549, 0.9085, 9.478e-3, 2.715e-2, 7.290e-2),
        "feedforward": (1.870e-2, 1.395e-2, 3.960e-2, 2.309e-4, 1.099e-3, 1.959e-4),
        "computed torque": (0.0, 5.309e-3, 8.326e-3, 4.881e-5, 0.0, 0.0),
    },
}


@eqx.filter_jit
def closed_loop(model, controller, dt, duration=TRACKING_END):
    return rollout_closed_loop_to(
        model, model.zero_state(), controller, duration, controller.initial_state(), solver_dt=dt, save_dt=0.01
    )


def metrics(ts: np.ndarray, errors: np.ndarray) -> dict:
    """Eqs. 23-24 from saved times ``(T,)`` [s] and errors ``q_d - q`` ``(T, 6)``: per
    coordinate, the RMSE over the regulation phase ``[0, REGULATION_END)`` and over the
    tracking phase ``[REGULATION_END, ...]``, and the mean over the four post-change setpoint
    intervals of the mean absolute error in the last 10 % of each. A phase (or, for the
    terminal MAE, any of the four windows) without samples gives ``None``."""
    reg = ts < REGULATION_END - 1e-9
    trk = ts >= REGULATION_END - 1e-9
    windows = []
    for (start, *_), (end, *_) in zip(
        STRAIN_SETPOINTS[1:], list(STRAIN_SETPOINTS[2:]) + [(REGULATION_END,)], strict=True
    ):
        in_window = (ts >= end - 0.1 * (end - start) - 1e-9) & (ts < end - 1e-9)
        windows.append(np.abs(errors[in_window]).mean(axis=0) if in_window.any() else None)
    return {
        "regulation_rmse": np.sqrt((errors[reg] ** 2).mean(axis=0)).tolist() if reg.any() else None,
        "terminal_mae": None if any(w is None for w in windows) else np.mean(windows, axis=0).tolist(),
        "tracking_rmse": np.sqrt((errors[trk] ** 2).mean(axis=0)).tolist() if trk.any() else None,
    }


def markdown(rows: dict, dt: float) -> str:
    out = [
        f"Configuration-space benchmark (Table VIII), one-segment PCS, Tsit5 at dt = {dt:g} s. "
        "Each cell: sorogym / paper. kappa in rad/m, sigma dimensionless.",
        "",
    ]
    titles = {
        "regulation_rmse": "Setpoint regulation: RMSE",
        "terminal_mae": "Setpoint regulation: terminal-window MAE",
        "tracking_rmse": "Trajectory tracking: RMSE",
    }
    for block, title in titles.items():
        out += [f"### {title}", "", "| controller | " + " | ".join(COORDS) + " |", "|---" * (len(COORDS) + 1) + "|"]
        for label, r in rows.items():
            if r[block] is None:  # a phase the run did not reach
                out.append(f"| {label} | " + " | ".join("-" for _ in COORDS) + " |")
                continue
            paper = PAPER[block].get(label)
            cells = [
                f"{v:.3g}" + (f" / {p:.3g}" if paper is not None else "")
                for v, p in zip(r[block], paper if paper is not None else [None] * 6, strict=True)
            ]
            out.append(f"| {label} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dt", type=float, default=2.5e-4, help="integration step [s] (the paper: 5e-5)")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "control" / "configuration_space.json")
    ap.add_argument("--controllers", nargs="+", choices=list(CONTROLLERS), help="default: all")
    ap.add_argument("--duration", type=float, default=TRACKING_END, help="simulated time [s]")
    ap.add_argument("--smoke", action="store_true", help="PD and computed torque, 0.5 s, dt 5e-4 (seconds)")
    args = ap.parse_args(argv)
    if args.smoke:
        args.controllers = args.controllers or ["PD", "computed torque"]
        args.duration, args.dt = min(args.duration, 0.5), max(args.dt, 5e-4)
        args.out = args.out.with_name(f"{args.out.stem}_smoke.json")

    model = case_study_pcs(1, dtype=jnp.float64)
    M0 = np.asarray(jax.jit(lambda q: model.inertia_matrix(q))(jnp.zeros(6)))
    reference = strain_benchmark_reference()
    rows, seconds = {}, {}
    for label in args.controllers or CONTROLLERS:
        compensation, integral = CONTROLLERS[label]
        gains = PIDGains.matched(M0, 30.0, 0.9, 0.75 if integral else 0.0, e_sat=E_SAT)
        controller = ConfigurationController(model, reference, gains, compensation)
        start = time.perf_counter()
        traj = closed_loop(model, controller, args.dt, args.duration)
        ys = np.asarray(traj.ys)
        seconds[label] = round(time.perf_counter() - start, 1)
        ts = np.asarray(traj.ts)
        q_d = np.asarray(jax.jit(jax.vmap(lambda t: reference(t).value))(traj.ts))
        if not np.all(np.isfinite(ys)):
            raise RuntimeError(f"{label}: the closed loop diverged")
        rows[label] = metrics(ts, q_d - ys[:, :6])
        headline = rows[label]["tracking_rmse"] or rows[label]["regulation_rmse"]
        print(f"{label:>24s}: RMSE kappa_y {headline[1]:.3g} rad/m ({seconds[label]} s)")

    args.out.parent.mkdir(parents=True, exist_ok=True)
    meta = run_metadata(
        args.smoke,
        ("jax", "diffrax", "equinox"),
        "continuous closed loop, Tsit5 fixed step; Kelvin-Voigt damping eta = 2000 Pa s (not stated in the paper)",
    )
    payload = {
        "meta": meta,
        "dt": args.dt,
        "duration": args.duration,
        "coordinates": COORDS,
        "e_sat": E_SAT,
        "gains": {"natural_frequency": 30.0, "damping_ratio": 0.9, "integral_frequency": 0.75},
        "results": rows,
        "paper": PAPER,
        "seconds": seconds,
    }
    args.out.write_text(json.dumps(payload, indent=2))
    table = markdown(rows, args.dt)
    args.out.with_suffix(".md").write_text(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
