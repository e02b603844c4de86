"""Old/new comparison of the BodyTree state-contract change (a34411f -> fe684d0).

Run once per code version, with the tree to test first on PYTHONPATH (the venv holds
/work/main in editable mode), then compare:

    PYTHONPATH=/tmp/old_tree .venv/bin/python compare_rollouts.py dump --part envs32 old_envs32.npz
    PYTHONPATH=/tmp/old_tree .venv/bin/python compare_rollouts.py dump --part envs64 old_envs64.npz
    PYTHONPATH=/tmp/old_tree .venv/bin/python compare_rollouts.py dump --part models old_models.npz
    (same for the new tree: PYTHONPATH=/work/main)
    .venv/bin/python compare_rollouts.py compare --old old_*.npz --new new_*.npz --out rollouts_diff.json

Parts: ``envs32``: every registered env in float32 (JAX default mode); ``envs64``: every
env with ``dtype="float64"`` (x64 enabled); ``models``: ``forward_dynamics`` at random states of PlanarPCS, PCS, GVS and
ArticulatedSoftRobot, and ``sg.sim.rollout_to`` with the default solver, LinearTrapezoid
and SemiImplicitEuler (float64). Env episodes: seeds 0 and 1, 100 steps of uniform random
actions (numpy seed 1000 + seed), jitted ``env.step`` without resets; q, qd, obs and reward
after every step are saved.
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np

SEEDS = (0, 1)
NUM_STEPS = 100


def dump_envs(dtype, out):
    import jax
    import jax.numpy as jnp

    import sorogym as sg

    for name in sg.registry():
        env = sg.env.make(name) if dtype == "float32" else sg.env.make(name, dtype=dtype)
        reset, step = jax.jit(env.reset), jax.jit(env.step)
        for seed in SEEDS:
            actions = np.random.default_rng(1000 + seed).uniform(-1, 1, (NUM_STEPS, env.action_size))
            state = reset(jax.random.PRNGKey(seed))
            rec = {k: [] for k in ("q", "qd", "obs", "reward")}
            for a in actions:
                state = step(state, jnp.asarray(a, env.dtype))
                ps = state.pipeline_state
                for k, v in (("q", ps.q), ("qd", ps.qd), ("obs", state.obs), ("reward", state.reward)):
                    rec[k].append(np.asarray(v))
            for k, v in rec.items():
                out[f"env/{name}/{dtype}/seed{seed}/{k}"] = np.stack(v)
        print(f"  {name} {dtype} done", flush=True)


def dump_models(out):
    import equinox as eqx
    import jax.numpy as jnp

    import sorogym as sg

    sys.path.insert(0, str(Path(sg.__file__).resolve().parents[1] / "scripts"))
    import bench_models as bm  # enables x64

    models = {
        "PlanarPCS-1": bm.make_pcs(True, [0.15], 0.01, 1000.0, 1e6, 100.0),
        "PlanarPCS-4": bm.make_pcs(True, [0.15] * 4, 0.01, 1000.0, 1e6, 100.0),
        "PCS-1": bm.make_pcs(False, [0.15], 0.01, 1000.0, 1e6, 100.0),
        "PCS-4": bm.make_pcs(False, [0.15] * 4, 0.01, 1000.0, 1e6, 100.0),
        "PCS-tendons": bm.beam_model("tendon_spatial_pcs")[0],
        "GVS-1": bm.gvs_model(1),
        "GVS-4": bm.gvs_model(4),
        "GVS-tendons": bm.beam_model("tendon_spatial_gvs")[0],
        "Articulated-1": bm.chain_model(1),
        "Articulated-4": bm.chain_model(4),
        "Articulated-16": bm.chain_model(16),
    }
    for name, model in models.items():
        n, m = model.num_dofs, model.num_actuators
        rng = np.random.default_rng(7)
        fd = eqx.filter_jit(lambda mdl, t, y, args: mdl.forward_dynamics(t, y, args))
        res = []
        for _ in range(8):
            y = jnp.asarray(np.concatenate([rng.normal(0, 0.5, n), rng.normal(0, 1.0, n)]))
            u = jnp.asarray(rng.uniform(0, 1, m))
            res.append(np.asarray(fd(model, jnp.zeros(()), y, (u,) if m else ())))
        out[f"fd/{name}"] = np.stack(res)
    print("  forward_dynamics done", flush=True)

    cases = {
        "beam_spatial_pcs": bm.beam_model("beam_spatial_pcs"),
        "tendon_spatial_pcs": bm.beam_model("tendon_spatial_pcs"),
        "beam_planar_pcs": bm.beam_model("beam_planar_pcs"),
        "Articulated-4": (bm.chain_model(4), jnp.full((4,), 0.05)),
    }
    for case, (model, u) in cases.items():
        y0 = jnp.zeros(2 * model.num_dofs)
        runs = {
            "default": dict(solver_dt=1e-4),
            "LinearTrapezoid": dict(solver=sg.sim.LinearTrapezoid(model), solver_dt=1e-3),
            "SemiImplicitEuler": dict(solver=sg.sim.SemiImplicitEuler(model), solver_dt=5e-5),
        }
        for label, kw in runs.items():
            traj = sg.sim.rollout_to(model, y0, 0.1, u, save_dt=0.01, **kw)
            out[f"rollout/{case}/{label}"] = np.asarray(traj.ys)
    gvs, u = bm.beam_model("tendon_spatial_gvs")
    traj = sg.sim.rollout_to(
        gvs,
        jnp.zeros(2 * gvs.num_dofs),
        0.05,
        u,
        save_dt=0.01,
        stepsize_controller=__import__("diffrax").PIDController(rtol=1e-6, atol=1e-6, dtmin=None),
        max_steps=100_000,
    )
    out["rollout/tendon_spatial_gvs/default+PID"] = np.asarray(traj.ys)
    print("  rollouts done", flush=True)


def dump(part, path):
    import jax

    if part != "envs32":
        jax.config.update("jax_enable_x64", True)
    import sorogym as sg
    from sorogym.provenance import git_revision

    print(f"sorogym from {sg.__file__} (git {git_revision()}), part {part}", flush=True)
    out = {}
    if part == "envs32":
        dump_envs("float32", out)
    elif part == "envs64":
        dump_envs("float64", out)
    else:
        dump_models(out)
    np.savez(path, __source__=np.asarray(sg.__file__), __git__=np.asarray(str(git_revision())), **out)


def compare(old_paths, new_paths, out_path):
    old, new = {}, {}
    for paths, d in ((old_paths, old), (new_paths, new)):
        for p in paths:
            with np.load(p) as z:
                d.update({k: z[k] for k in z.files if not k.startswith("__")})
    assert set(old) == set(new), set(old) ^ set(new)
    rows = {}
    for k in sorted(old):
        a, b = old[k].astype(np.float64), new[k].astype(np.float64)
        assert a.shape == b.shape, (k, a.shape, b.shape)
        d = np.abs(a - b)
        row = {
            "identical": bool(np.array_equal(old[k], new[k])),
            "max_abs_diff": float(d.max()),
            "max_abs_value": float(np.abs(a).max()),
        }
        # in units of the spacing of the stored dtype at each coordinate's largest magnitude
        # over the saved trajectory (time on axis 0), floored at 1e-6 of the array's largest
        # magnitude (coordinates that stay near zero, e.g. unloaded strains)
        top = np.abs(old[k]).max()
        scale = np.maximum(np.abs(old[k]).max(axis=0) if old[k].ndim > 1 else top, 1e-6 * top)
        ulps = d / np.spacing(np.asarray(scale, old[k].dtype)).astype(np.float64)
        row["max_diff_in_ulps_of_scale"] = float(ulps.max())
        if k.startswith("env/"):
            row["max_abs_diff_1_step"] = float(d[:1].max())
            row["max_abs_diff_12_steps"] = float(d[:12].max())
            row["max_diff_in_ulps_of_scale_1_step"] = float(ulps[:1].max())
            row["max_diff_in_ulps_of_scale_12_steps"] = float(ulps[:12].max())
            row["first_step_differing"] = int(np.argmax(d.reshape(len(d), -1).max(1) > 0)) + 1 if d.max() > 0 else None
        rows[k] = row
    Path(out_path).write_text(json.dumps(rows, indent=1) + "\n")
    for k, r in rows.items():
        flag = "identical" if r["identical"] else f"max diff {r['max_abs_diff']:.3g} (of {r['max_abs_value']:.3g})"
        print(f"{k}: {flag}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--part", choices=("envs32", "envs64", "models"), required=True)
    d.add_argument("path")
    c = sub.add_parser("compare")
    c.add_argument("--old", nargs="+", required=True)
    c.add_argument("--new", nargs="+", required=True)
    c.add_argument("--out", required=True)
    args = ap.parse_args()
    if args.cmd == "dump":
        dump(args.part, args.path)
    else:
        compare(args.old, args.new, args.out)
