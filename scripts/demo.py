"""Main job (until the agents land): build a tendon-driven PCS arm, simulate it, plot it.

The arm is the TendonTracking robot: one spatial PCS segment (L 0.25 m, r 0.025 m,
E 250 kPa, nu 0.37, rho 1070 kg/m^3, no gravity) with four straight tendons at +-0.02 m.
It is driven for 3 s by smoothly varying tendon tensions with the environments' fast
integrator and, for reference, with Tsit5. Writes ``results/demo/tendon_arm.png`` and
``results/demo/tendon_arm.json``.

    python scripts/demo.py [--out results/demo] [--horizon 3.0]
    python scripts/demo.py --smoke --out /tmp/demo    # 0.3 s horizon
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import diffrax
import jax
import jax.numpy as jnp
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import sorogym as sg  # noqa: E402
from sorogym.provenance import git_revision  # noqa: E402


def build_arm() -> sg.PCS:
    params = sg.RodParams.upright(
        length=0.25,
        radius=0.025,
        density=1070.0,
        young_modulus=2.5e5,
        poisson_ratio=0.37,
        damping=20.0,
        gravity=[0.0, 0.0, 0.0],
    )
    offsets = np.array([[0.02, 0.0], [-0.02, 0.0], [0.0, 0.02], [0.0, -0.02]])[:, None, :]
    return sg.PCS(params, active_strains=("ky", "kz", "sx"), actuation=sg.Tendons(offsets))


def tensions(t):
    """Smooth, non-negative tendon tensions [N]: a slow circular sweep."""
    phase = 2 * jnp.pi * 0.5 * t
    ramp = jnp.minimum(t / 0.5, 1.0)
    return ramp * 3.0 * jnp.maximum(jnp.stack([jnp.cos(phase), -jnp.cos(phase), jnp.sin(phase), -jnp.sin(phase)]), 0.0)


def simulate(model, dt, control_dt, horizon, solver):
    def controller(t, y):
        return tensions(t)

    return sg.sim.rollout_discrete_closed_loop_to(
        model, model.zero_state(), controller, horizon, control_dt, solver=solver, solver_dt=dt
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="results/demo")
    ap.add_argument("--horizon", type=float, default=3.0, help="simulated time [s]")
    ap.add_argument("--smoke", action="store_true", help="0.3 s horizon")
    args = ap.parse_args(argv)
    if args.smoke:
        args.horizon = min(args.horizon, 0.3)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model = build_arm()
    L = float(model.total_length)
    control_dt = 1.0 / 15.0
    runs = {}
    for name, solver, dt in [
        ("LinearTrapezoid dt=2 ms", sg.sim.LinearTrapezoid(model), 2e-3),
        ("Tsit5 dt=0.1 ms", diffrax.Tsit5(), 1e-4),
    ]:
        fn = jax.jit(lambda m, s=solver, d=dt: simulate(m, d, control_dt, args.horizon, s))
        t0 = time.perf_counter()
        traj = jax.block_until_ready(fn(model))
        wall = time.perf_counter() - t0
        tips = jax.vmap(lambda y: model.forward_kinematics(y[: model.num_dofs], L)[:3, 3])(traj.ys)
        runs[name] = dict(traj=traj, tips=np.asarray(tips), wall_s=wall)
        print(f"{name:26s} {wall:6.2f} s (incl. compile), final tip {np.round(np.asarray(tips[-1]), 4)} m")
    names = list(runs)
    err = np.linalg.norm(runs[names[0]]["tips"] - runs[names[1]]["tips"], axis=1).max() / L
    print(f"max tip difference between the integrators: {100 * err:.3f} % of L")

    fig = plt.figure(figsize=(11, 4.5))
    ax3 = fig.add_subplot(1, 2, 1, projection="3d")
    traj = runs[names[0]]["traj"]
    s_ps = jnp.linspace(0.0, L, 30)
    for k in range(0, traj.ys.shape[0], 5):
        pts = np.asarray(model.backbone_positions(traj.ys[k, : model.num_dofs], s_ps))
        ax3.plot(pts[:, 0], pts[:, 1], pts[:, 2], color=plt.cm.viridis(k / traj.ys.shape[0]), lw=1.5)
    tip = runs[names[0]]["tips"]
    ax3.plot(tip[:, 0], tip[:, 1], tip[:, 2], "k--", lw=0.8, label="tip path")
    ax3.set_xlabel("x [m]"), ax3.set_ylabel("y [m]"), ax3.set_zlabel("z [m]")
    ax3.set_title("backbone every 1/3 s (colour: time)")
    ax3.legend()
    ax = fig.add_subplot(1, 2, 2)
    for name in names:
        ax.plot(np.asarray(runs[name]["traj"].ts), runs[name]["tips"][:, 0], label=f"x, {name}")
        ax.plot(np.asarray(runs[name]["traj"].ts), runs[name]["tips"][:, 1], "--", label=f"y, {name}")
    ax.set_xlabel("time [s]"), ax.set_ylabel("tip position [m]")
    ax.legend(fontsize=7)
    ax.set_title("tip under tendon actuation (15 Hz zero-order hold)")
    fig.tight_layout()
    fig.savefig(out / "tendon_arm.png", dpi=120)
    summary = {
        "git_revision": git_revision(),
        "robot": "PCS, 1 segment, 4 straight tendons (TendonTracking arm)",
        "horizon_s": args.horizon,
        "control_dt_s": control_dt,
        "runs": {
            n: {"wall_s_incl_compile": r["wall_s"], "final_tip_m": r["tips"][-1].tolist()} for n, r in runs.items()
        },
        "max_tip_difference_rel_L": float(err),
    }
    (out / "tendon_arm.json").write_text(json.dumps(summary, indent=2))
    print(f"wrote {out / 'tendon_arm.png'} and {out / 'tendon_arm.json'}")


if __name__ == "__main__":
    main()
