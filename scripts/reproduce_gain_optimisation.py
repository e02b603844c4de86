"""Reproduce the control-gain optimisation study of the SoRoMoX paper (section V-D, Appendix D-D).

Two underactuated tendon-driven PCS arms (three tendons, linear routing) regulate to a
setpoint, and the diagonal PID gains ``[k_p, k_i, k_d]`` of their controllers are tuned by
gradient descent (optax Yogi) through the whole closed-loop rollout, for a batch of random
initial gain sets in parallel (``vmap``):

* ``actuation``: one segment (``n = 6``), the potential-shaping controller in actuation
  coordinates (eqs. 35-36, ``ActuationSpaceController(compensation="potential")``), error
  ``e = q_d - q``;
* ``operational``: two segments (``n = 12``), the synergistic operational-space controller
  (eqs. 37-39, ``SynergisticController``) on the tip position, error ``e = x_d - x``.

Loss (eq. 41): ``l = lam1 int_0^t1 |e|^2 dt + lam2 int_t1^t2 |e|^2 dt`` with
``t1 = t2 / 2``. The paper does not state the robot, the targets, the horizon, the weights or
the gain intervals; the choices here are stated in ``CASES`` and the module constants and
written to the JSON. The robot is the control case-study material (``E = 2 kPa``,
``G = 1 kPa``, ``rho = 1070 kg/m^3``, ``r = 20 mm``, 0.1 m per segment) without gravity (so
the straight rest state is the start), with light Kelvin-Voigt damping 30 Pa s, and three tendons at 0, 120 and
240 degrees routed linearly from 15 mm at the base to 10 mm at the tip of each segment. Each
target is the static equilibrium under a fixed set of tendon tensions, so it is reachable.
Gains are optimised in log space (positive by construction).

Metrics per case, as in the paper: loss reduction from the initial median to the best final
value across the batch, cumulative tracking error ``int |e| dt``, settling time (first time
``|e| <= 5 %`` of ``|e(0)|``), overshoot (largest excursion past the target along the step
direction, in % of the step) and the reduction of the batch variance of the loss.
Writes ``results/control/gain_optimisation.{json,md,png}``.

    python scripts/reproduce_gain_optimisation.py            # 100 iterations, batch 8
    python scripts/reproduce_gain_optimisation.py --quick    # 3 iterations, batch 2
    python scripts/reproduce_gain_optimisation.py --smoke --out /tmp/gains.json   # 2 iterations, 0.5 s loops

``--smoke`` (2 iterations, batch 2, ``--horizon 0.5`` s) writes ``<out stem>_smoke.{json,md,png}``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import diffrax  # noqa: E402
import equinox as eqx  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402

from sorogym.actuation import Tendons  # noqa: E402
from sorogym.control import (  # noqa: E402
    ActuationSpaceController,
    ActuationSpaceDynamics,
    ConstantReference,
    OperationalSpaceDynamics,
    PIDGains,
    SynergisticController,
    static_equilibrium,
)
from sorogym.models import PCS  # noqa: E402
from sorogym.provenance import run_metadata  # noqa: E402
from sorogym.robots import case_study_pcs, ring_offsets  # noqa: E402
from sorogym.sim import rollout_closed_loop_to  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

VISCOSITY = 30.0  # Pa s
HORIZON = 5.0  # s (the paper's Fig. 12 shows 0-5 s)
SOLVER_DT = 1e-2  # s, Tsit5 (stable with the light damping below)
SAVE_DT = 0.01  # s, loss quadrature (trapezoid)
WEIGHTS = (1.0, 5.0)  # (lam1, lam2) of eq. 41
TENDON_ANGLES_DEG = (0.0, 120.0, 240.0)
TENDON_OFFSETS = (0.015, 0.010)  # m, at the base and at the tip of each segment
SETTLING_BAND = 0.05
PAPER = {
    "actuation": {
        "loss_reduction_pct": 62,
        "settling_time_improvement_pct": 64,
        "overshoot_change_pct": -50,
        "cumulative_error_reduction_pct": 71,
    },
    "operational": {
        "loss_reduction_pct": 57,
        "settling_time_improvement_pct": 62,
        "overshoot_change_pct": 82,
        "cumulative_error_reduction_pct": 45,
    },
    "batch_loss_variance_reduction_pct": {"actuation": 97, "operational": 99},
}

# Per case: segments, tensions [N] that define the target equilibrium, log-uniform gain
# intervals (kp, ki, kd) for the random initial batch.
CASES = {
    "actuation": {
        "segments": 1,
        "target_tensions": (0.12, 0.0, 0.04),
        "kp": (2.0, 20.0),
        "ki": (1.0, 10.0),
        "kd": (0.5, 5.0),
    },
    "operational": {
        "segments": 2,
        "target_tensions": (0.05, 0.0, 0.03),
        "kp": (2.0, 20.0),
        "ki": (0.2, 2.0),
        "kd": (0.2, 2.0),
    },
}


def tendon_arm(num_segments: int) -> PCS:
    """The upright case-study arm (no gravity) with three linearly routed tendons through
    every segment."""
    arm = case_study_pcs(num_segments, dtype=jnp.float64, viscosity=VISCOSITY, mounting="upright")
    arm = arm.update_params(gravity=jnp.zeros(3))
    # (3, 2, 2): [y, z] x (segment base, segment tip)
    offsets = np.stack([ring_offsets(r, TENDON_ANGLES_DEG) for r in TENDON_OFFSETS], axis=-1)
    offsets = np.repeat(offsets[:, None], num_segments, axis=1)  # (3, N, 2, 2)
    return arm.with_actuation(Tendons(offsets, routing="linear"))


def build_case(name: str, horizon: float = HORIZON):
    """``(loss_and_traces(log_gains) -> (loss, traces), info)`` for one case, closed loops
    of ``horizon`` [s]."""
    spec = CASES[name]
    model = tendon_arm(spec["segments"])
    n, m = model.num_dofs, model.num_actuators
    q0 = jnp.zeros(n)
    q_target = static_equilibrium(model, q0, jnp.asarray(spec["target_tensions"]), iterations=30)
    L = model.total_length
    if name == "actuation":
        dynamics = ActuationSpaceDynamics(model)

        def controller_for(gains):
            return ActuationSpaceController(dynamics, ConstantReference(q_target), gains, "potential")

        def error(q):
            return q_target - q

        target = q_target
    else:
        task = OperationalSpaceDynamics(model, jnp.asarray([L]), components="position")
        x_target = model.forward_kinematics(q_target, L)[:3, 3]

        def controller_for(gains):
            return SynergisticController(task, ConstantReference(x_target), gains)

        def error(q):
            return x_target - model.forward_kinematics(q, L)[:3, 3]

        target = x_target

    def loss_and_traces(log_gains):
        kp, ki, kd = jnp.exp(log_gains).reshape(3, m)
        ctrl = controller_for(PIDGains(kp, kd, ki, e_sat=1.0, num_dofs=m, dtype=jnp.float64))
        traj = rollout_closed_loop_to(
            model,
            jnp.zeros(2 * n),
            ctrl,
            horizon,
            z0=ctrl.initial_state(),
            solver=diffrax.Tsit5(),
            solver_dt=SOLVER_DT,
            save_dt=SAVE_DT,
        )
        e = jax.vmap(error)(traj.ys[:, :n])
        sq = jnp.sum(e**2, axis=-1)
        t1 = 0.5 * horizon
        w = jnp.where(traj.ts < t1, WEIGHTS[0], WEIGHTS[1])
        loss = jnp.trapezoid(w * sq, traj.ts)
        return loss, (traj.ts, e)

    info = {
        "num_dofs": n,
        "num_actuators": m,
        "target": np.asarray(target).tolist(),
        "target_configuration": np.asarray(q_target).tolist(),
        "initial_error_norm": float(jnp.linalg.norm(error(q0))),
    }
    return loss_and_traces, info


def response_metrics(ts, e) -> dict:
    """Cumulative error, settling time and overshoot of one error trace ``e`` ``(T, k)``."""
    norm = np.linalg.norm(e, axis=-1)
    inside = norm <= SETTLING_BAND * norm[0]
    settling = float(ts[np.argmax(inside)]) if inside.any() else float("nan")
    step = e[0]  # target - start
    past = -(e @ step) / float(step @ step)  # fraction of the step travelled beyond the target
    dt = np.diff(ts)
    return {
        "cumulative_error": float(np.sum(0.5 * (norm[1:] + norm[:-1]) * dt)),
        "settling_time_s": settling,
        "overshoot_pct": float(100 * max(0.0, past.max())),
        "final_error": float(norm[-1]),
    }


def sample_log_gains(key, spec, batch, m):
    lo = np.log([spec[k][0] for k in ("kp", "ki", "kd")])
    hi = np.log([spec[k][1] for k in ("kp", "ki", "kd")])
    u = jax.random.uniform(key, (batch, 3, m), jnp.float64)
    return (lo[None, :, None] + u * (hi - lo)[None, :, None]).reshape(batch, 3 * m)


def run_case(name, iterations, batch, learning_rate, seed, horizon=HORIZON):
    loss_and_traces, info = build_case(name, horizon)
    m = info["num_actuators"]
    params = sample_log_gains(jax.random.PRNGKey(seed), CASES[name], batch, m)
    optimiser = optax.yogi(learning_rate)
    opt_state = optimiser.init(params)
    grad_fn = jax.vmap(jax.value_and_grad(lambda p: loss_and_traces(p)[0]))

    @eqx.filter_jit
    def step(params, opt_state):
        loss, grads = grad_fn(params)
        grads = jnp.where(jnp.isfinite(grads), grads, 0.0)
        updates, opt_state = optimiser.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    traces = eqx.filter_jit(jax.vmap(loss_and_traces))
    start = time.perf_counter()
    initial_params = params
    history = []
    for it in range(iterations):
        params, opt_state, loss = step(params, opt_state)
        history.append(np.asarray(loss))
        if it == 0:
            compile_s = time.perf_counter() - start
        if it % 10 == 0 or it == iterations - 1:
            print(
                f"{name} iteration {it:3d}: loss median {np.median(history[-1]):.4g} "
                f"min {np.min(history[-1]):.4g} ({time.perf_counter() - start:.0f} s)",
                flush=True,
            )
    final_loss, (ts, e_final) = traces(params)
    init_loss, (_, e_init) = traces(initial_params)
    final_loss, init_loss = np.asarray(final_loss), np.asarray(init_loss)
    ts = np.asarray(ts[0])
    best = int(np.nanargmin(final_loss))
    median_init = int(np.argsort(init_loss)[len(init_loss) // 2])
    m_init = response_metrics(ts, np.asarray(e_init[median_init]))
    m_best = response_metrics(ts, np.asarray(e_final[best]))

    def change(a, b):
        """Relative change [%] from ``a`` to ``b``; ``None`` when undefined (no settling)."""
        if not (np.isfinite(a) and np.isfinite(b)) or a == 0:
            return None
        return float(100 * (b - a) / a)

    summary = {
        "loss_initial_median": float(np.median(init_loss)),
        "loss_best_final": float(final_loss[best]),
        "loss_reduction_pct": -change(float(np.median(init_loss)), float(final_loss[best])),
        "loss_variance_reduction_pct": -change(float(np.var(init_loss)), float(np.var(final_loss))),
        "initial_median": m_init,
        "optimised_best": m_best,
        "cumulative_error_reduction_pct": -change(m_init["cumulative_error"], m_best["cumulative_error"]),
        "settling_time_improvement_pct": (
            None
            if change(m_init["settling_time_s"], m_best["settling_time_s"]) is None
            else -change(m_init["settling_time_s"], m_best["settling_time_s"])
        ),
        "overshoot_change_pct": change(m_init["overshoot_pct"], m_best["overshoot_pct"]),
        "gains_initial": np.exp(np.asarray(initial_params)).reshape(-1, 3, m).tolist(),
        "gains_best": np.exp(np.asarray(params[best])).reshape(3, m).tolist(),
        "loss_history": np.stack(history).tolist(),
        "compile_s": round(compile_s, 1),
        "seconds": round(time.perf_counter() - start, 1),
        "finite": bool(np.all(np.isfinite(final_loss))),
    }
    curves = {"ts": ts, "initial_median": np.asarray(e_init[median_init]), "best": np.asarray(e_final[best])}
    return {**info, **summary}, curves


def plot(results, curves, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(10, 7))
    for row, name in enumerate(results):
        hist = np.asarray(results[name]["loss_history"])
        it = np.arange(1, hist.shape[0] + 1)
        ax = axes[row, 0]
        ax.fill_between(it, hist.min(1), hist.max(1), alpha=0.3, label="batch min-max")
        ax.plot(it, hist.min(1), label="best")
        ax.set(xlabel="iteration", ylabel="loss (eq. 41)", yscale="log", title=f"{name}: loss")
        ax.legend()
        ax = axes[row, 1]
        c = curves[name]
        for label, style in (("initial_median", "--"), ("best", "-")):
            ax.plot(c["ts"], np.linalg.norm(c[label], axis=-1), style, label=label.replace("_", " "))
        ax.set(xlabel="time [s]", ylabel="|e|", title=f"{name}: error norm")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--learning-rate", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    ap.add_argument("--quick", action="store_true", help="3 iterations, batch 2")
    ap.add_argument("--horizon", type=float, default=HORIZON, help="closed-loop duration [s]")
    ap.add_argument("--smoke", action="store_true", help="2 iterations, batch 2, 0.5 s loops")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "control" / "gain_optimisation.json")
    args = ap.parse_args(argv)
    if args.quick:
        args.iterations, args.batch = 3, 2
    if args.smoke:
        args.iterations, args.batch, args.horizon = 2, 2, min(args.horizon, 0.5)
        args.out = args.out.with_name(f"{args.out.stem}_smoke.json")

    results, curves = {}, {}
    for name in args.cases:
        results[name], curves[name] = run_case(
            name, args.iterations, args.batch, args.learning_rate, args.seed, args.horizon
        )
        r = results[name]
        print(
            name,
            {
                k: r[k]
                for k in (
                    "loss_reduction_pct",
                    "cumulative_error_reduction_pct",
                    "settling_time_improvement_pct",
                    "overshoot_change_pct",
                    "seconds",
                )
            },
            flush=True,
        )

    rows = [
        "| case | loss reduction | cumulative error | settling time | overshoot | batch loss variance |",
        "|---|---|---|---|---|---|",
    ]
    for name, r in results.items():
        p = PAPER[name]

        def pct(v, sign=-1):
            return "n/a" if v is None else f"{sign * v:+.0f} %"

        rows.append(
            f"| {name} | {pct(r['loss_reduction_pct'])} / -{p['loss_reduction_pct']} % "
            f"| {pct(r['cumulative_error_reduction_pct'])} / -{p['cumulative_error_reduction_pct']} % "
            f"| {pct(r['settling_time_improvement_pct'])} / -{p['settling_time_improvement_pct']} % "
            f"| {pct(r['overshoot_change_pct'], 1)} / {p['overshoot_change_pct']:+d} % "
            f"| {pct(r['loss_variance_reduction_pct'])} / -{PAPER['batch_loss_variance_reduction_pct'][name]} % |"
        )
    table = (
        f"Gain optimisation (sorogym / paper): optax Yogi (lr {args.learning_rate}), {args.iterations} iterations, "
        f"batch {args.batch}, {args.horizon:g} s closed loops (Tsit5, dt {SOLVER_DT:g} s), "
        f"initial median vs optimised best.\n\n" + "\n".join(rows)
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    meta = run_metadata(
        args.quick or args.smoke, ("jax", "diffrax", "optax"), "reverse mode through the full closed loop"
    )
    setup = {
        "viscosity_Pa_s": VISCOSITY,
        "horizon_s": args.horizon,
        "solver_dt_s": SOLVER_DT,
        "save_dt_s": SAVE_DT,
        "weights": WEIGHTS,
        "tendon_angles_deg": TENDON_ANGLES_DEG,
        "tendon_offsets_m": TENDON_OFFSETS,
        "settling_band": SETTLING_BAND,
        "cases": CASES,
        "iterations": args.iterations,
        "batch": args.batch,
        "learning_rate": args.learning_rate,
        "seed": args.seed,
        "gain_parametrisation": "log",
    }
    args.out.write_text(json.dumps({"meta": meta, "setup": setup, "results": results, "paper": PAPER}, indent=1))
    args.out.with_suffix(".md").write_text(table + "\n")
    plot(results, curves, args.out.with_suffix(".png"))
    print(table)


if __name__ == "__main__":
    main()
