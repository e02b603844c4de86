"""CPU benchmark of sorogym's PCS models against soromox (same model) and PyElastica.

Sections (all measured in one process so the ratios are side by side):
  1. per-evaluation forward dynamics, planar/spatial PCS with 1, 2, 4 segments;
  2. the SoRoMoX paper's CPU beam case (App. B-A): rollout wall time and tip agreement;
  3. the largest fixed step of the environments' integrators that keeps the beam's tip
     within 1 % of L of a fine Tsit5 reference.

    .venv/bin/python scripts/bench_models.py [--quick]

Writes results/bench/models_cpu[_quick].json (and models_cpu.md in full mode).
"""

import argparse
import json
import math
import os
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import diffrax  # noqa: E402
import equinox as eqx  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import soromox  # noqa: E402

import sorogym as sg  # noqa: E402
from sorogym.testing import soromox_twin, tip_agreement  # noqa: E402

from _runinfo import run_metadata  # noqa: E402  (scripts/ is on sys.path when run as a script)

ROOT = Path(__file__).resolve().parents[1]
G_ACC = 9.81
SAVE_DT = 0.01
# Paper beam (SoRoMoX App. B-A): 0.6 m as two 0.3 m PCS segments, gravity-like load along +x.
BEAM = dict(seg_length=0.3, num_segments=2, radius=0.03, density=1000.0, young=1e6, nu=0.5, eta=1e4)
ELASTICA_DT = 2e-4  # PositionVerlet, 50 elements: 4e-4 diverges, 3e-4 is stable; 2e-4 keeps a 2x margin
ELASTICA_ELEMENTS = 50


# -- models --------------------------------------------------------------------------------


def make_pcs(planar, lengths, radius, density, young, damping, gravity=None, nu=0.5):
    params = sg.RodParams.create(
        length=lengths, radius=radius, density=density, young_modulus=young, poisson_ratio=nu,
        damping=damping, gravity=gravity, mounting="upright", planar=planar, dtype=jnp.float64,
    )
    return (sg.PlanarPCS if planar else sg.PCS)(params)


def beam_model(planar):
    b = BEAM
    gravity = [G_ACC, 0.0] if planar else [G_ACC, 0.0, 0.0]  # distributed load rho A g along +x
    return make_pcs(planar, [b["seg_length"]] * b["num_segments"], b["radius"], b["density"],
                    b["young"], b["eta"], gravity, b["nu"])


def tip_fn_sorogym(model):
    L = model.total_length
    k = 2 if model.planar else 3
    return jax.jit(jax.vmap(lambda q: model.forward_kinematics(q, L)[:k, k]))


def tip_fn_soromox(rob, model):
    L = model.total_length
    if model.planar:  # soromox planar FK is [theta, x, y]
        return jax.jit(jax.vmap(lambda q: rob.forward_kinematics(q, L)[1:3]))
    return jax.jit(jax.vmap(lambda q: rob.forward_kinematics(q, L)[:3, 3]))


# -- timing helpers --------------------------------------------------------------------------


def interleaved_per_call_us(fns, args, blocks, calls):
    """Median per-call time [us] of each jitted fn; blocks of `calls` calls alternate."""
    for f in fns:  # compile + warm up
        for _ in range(10):
            jax.block_until_ready(f(*args))
    samples = [[] for _ in fns]
    for _ in range(blocks):
        for i, f in enumerate(fns):
            t0 = time.perf_counter()
            for _ in range(calls):
                out = f(*args)
            jax.block_until_ready(out)
            samples[i].append((time.perf_counter() - t0) / calls * 1e6)
    return [float(np.median(s)) for s in samples]


def median_wall(f, args, reps):
    """Median wall time [s] of `reps` calls of an already compiled function."""
    runs = []
    for _ in range(reps):
        t0 = time.perf_counter()
        jax.block_until_ready(f(*args))
        runs.append(time.perf_counter() - t0)
    return float(np.median(runs))


def timed_jobs(jobs, reps):
    """jobs: name -> (fn, args). First call of each (compile + run), then `reps` interleaved
    timed calls. Returns {name: (first_s, median_run_s, output)}."""
    first, runs, outs = {}, {k: [] for k in jobs}, {}
    for name, (f, a) in jobs.items():
        t0 = time.perf_counter()
        outs[name] = jax.block_until_ready(f(*a))
        first[name] = time.perf_counter() - t0
    for _ in range(reps):
        for name, (f, a) in jobs.items():
            t0 = time.perf_counter()
            jax.block_until_ready(f(*a))
            runs[name].append(time.perf_counter() - t0)
    return {k: (first[k], float(np.median(runs[k])), np.asarray(outs[k])) for k in jobs}


def save_times(t1):
    return np.round(np.arange(int(round(t1 / SAVE_DT)) + 1) * SAVE_DT, 12)


# -- 1. forward dynamics -----------------------------------------------------------------


def jit_forward_dynamics(robot):
    return jax.jit(lambda y, u: robot.forward_dynamics(0.0, y, (u,)))


LOOP_EVALS = 200


def jit_forward_dynamics_loop(robot, evals=LOOP_EVALS):
    """`evals` chained evaluations inside one compiled loop (each state depends on the last
    derivative, as in a rollout), so the per-eval time excludes Python dispatch."""
    def body(_, y, u):
        return y + 1e-9 * robot.forward_dynamics(0.0, y, (u,))
    return jax.jit(lambda y, u: jax.lax.fori_loop(0, evals, lambda i, y: body(i, y, u), y))


def bench_forward_dynamics(blocks, segments=(1, 2, 4), calls=100):
    rows = []
    for planar in (True, False):
        for N in segments:
            model = make_pcs(planar, [0.15] * N, 0.01, 1000.0, 1e6, 100.0)  # Earth gravity
            rob, _ = soromox_twin(model)
            n = model.num_dofs
            y = jnp.asarray(0.1 * np.random.default_rng(N).normal(size=2 * n))
            u = jnp.zeros(model.num_actuators)
            f_sg, f_mx = jit_forward_dynamics(model), jit_forward_dynamics(rob)
            a, b = np.asarray(f_sg(y, u)), np.asarray(f_mx(y, u))
            t_sg, t_mx = interleaved_per_call_us([f_sg, f_mx], (y, u), blocks, calls)
            loops = [jit_forward_dynamics_loop(m) for m in (model, rob)]
            l_sg, l_mx = (t / LOOP_EVALS for t in interleaved_per_call_us(loops, (y, u), blocks, 2))
            rows.append({
                "model": "PlanarPCS" if planar else "PCS", "segments": N, "num_dofs": n,
                "sorogym_us": t_sg, "soromox_us": t_mx, "speedup": t_mx / t_sg,
                "sorogym_loop_us": l_sg, "soromox_loop_us": l_mx, "speedup_loop": l_mx / l_sg,
                "max_rel_diff": float(np.max(np.abs(a - b)) / np.max(np.abs(b))),
            })
            print(f"  forward dynamics {rows[-1]['model']} N={N}: per call {t_sg:.1f} us vs {t_mx:.1f} us, "
                  f"in a loop {l_sg:.1f} us vs {l_mx:.1f} us", flush=True)
    return rows


# -- 2. beam rollouts ------------------------------------------------------------------------


def elastica_beam(t1, dt=ELASTICA_DT, n_elements=ELASTICA_ELEMENTS):
    """Clamped Cosserat rod along +z with a uniform load rho A g along +x. Returns
    (wall_s, gamma, tips (T, 3)) with tips saved every SAVE_DT."""
    import elastica as ea

    class Sim(ea.BaseSystemCollection, ea.Constraints, ea.Forcing, ea.Damping):
        pass

    b = BEAM
    L, E = b["seg_length"] * b["num_segments"], b["young"]
    # Damping mapping: with nu = 0.5 the PCS Kelvin-Voigt damping is stiffness-proportional,
    # D = beta S with beta = 3 eta / E (bending/elongation 3 eta vs E, torsion/shear eta vs
    # G = E/3), so mode k has damping ratio beta w_k / 2. Elastica's AnalyticalLinearDamper
    # is mass-proportional (dv/dt = -gamma v, ratio gamma / (2 w_k)); we match the first
    # cantilever bending mode: gamma = beta w_1^2, w_1 = 1.8751^2 sqrt(E I / (rho A L^4)).
    A, I = math.pi * b["radius"] ** 2, math.pi * b["radius"] ** 4 / 4
    w1 = 1.8751**2 * math.sqrt(E * I / (b["density"] * A * L**4))
    gamma = 3 * b["eta"] / E * w1**2
    sim = Sim()
    rod = ea.CosseratRod.straight_rod(
        n_elements, np.zeros(3), np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0]), L,
        b["radius"], b["density"], youngs_modulus=E, shear_modulus=E / (2 * (1 + b["nu"])),
    )
    sim.append(rod)
    sim.constrain(rod).using(ea.OneEndFixedBC, constrained_position_idx=(0,), constrained_director_idx=(0,))
    sim.add_forcing_to(rod).using(ea.GravityForces, acc_gravity=np.array([G_ACC, 0.0, 0.0]))
    sim.dampen(rod).using(ea.AnalyticalLinearDamper, uniform_damping_constant=gamma, time_step=dt)
    sim.finalize()
    stepper = ea.PositionVerlet()
    num_steps, every = int(round(t1 / dt)), int(round(SAVE_DT / dt))
    tips, t = [rod.position_collection[:, -1].copy()], 0.0
    t0 = time.perf_counter()
    for k in range(1, num_steps + 1):
        t = stepper.step(sim, t, dt)
        if k % every == 0:
            tips.append(rod.position_collection[:, -1].copy())
    wall = time.perf_counter() - t0
    return wall, gamma, w1, np.array(tips)


def bench_rollouts(t1, reps, elastica):
    ts = jnp.asarray(save_times(t1))
    rows = []
    for planar in (True, False):
        model = beam_model(planar)
        rob, _ = soromox_twin(model)
        y0 = jnp.zeros(2 * model.num_dofs)
        L = float(model.total_length)
        f_sg = eqx.filter_jit(lambda m, y: sg.sim.rollout_to(m, y, t1, solver_dt=1e-4, save_ts=ts).ys)
        f_mx = eqx.filter_jit(lambda r, y: r.rollout_to(
            initial_state=soromox.SystemState(t=jnp.array(0.0), y=y), t1=t1, solver_dt=1e-4,
            save_ts=ts, solver=diffrax.Tsit5()).y)
        res = timed_jobs({"sorogym": (f_sg, (model, y0)), "soromox": (f_mx, (rob, y0))}, reps)
        n = model.num_dofs
        tip_sg = np.asarray(tip_fn_sorogym(model)(jnp.asarray(res["sorogym"][2][:, :n])))
        tip_mx = np.asarray(tip_fn_soromox(rob, model)(jnp.asarray(res["soromox"][2][:, :n])))
        row = {
            "case": "beam_planar_pcs" if planar else "beam_spatial_pcs", "horizon_s": t1,
            "sorogym_s": res["sorogym"][1], "soromox_s": res["soromox"][1],
            "pyelastica_s": None if planar else elastica["wall_s"],
            "speedup_vs_soromox": res["soromox"][1] / res["sorogym"][1],
            "speedup_vs_pyelastica": None if planar else elastica["wall_s"] / res["sorogym"][1],
            "compile_s_sorogym": res["sorogym"][0] - res["sorogym"][1],
            "compile_s_soromox": res["soromox"][0] - res["soromox"][1],
            "tip_agreement": {"sorogym_vs_soromox": tip_agreement(tip_sg, tip_mx, L)},
            "final_tip_sorogym": tip_sg[-1].tolist(), "final_tip_soromox": tip_mx[-1].tolist(),
        }
        if not planar:
            row["tip_agreement"]["sorogym_vs_pyelastica"] = tip_agreement(tip_sg, elastica["tips"], L)
            row["final_tip_pyelastica"] = elastica["tips"][-1].tolist()
        rows.append(row)
        print(f"  rollout {row['case']}: {row['sorogym_s']:.2f} s vs {row['soromox_s']:.2f} s", flush=True)
    return rows


# -- 3. fast integrators -----------------------------------------------------------------------


def bench_fast_integrator(t1, candidates, ref_dt, reps, elastica_s):
    model = beam_model(planar=False)
    ts = jnp.asarray(save_times(t1))
    y0 = jnp.zeros(2 * model.num_dofs)
    L, n = float(model.total_length), model.num_dofs
    tips = tip_fn_sorogym(model)
    max_steps = int(math.ceil(t1 / ref_dt)) + 2  # one compilation per integrator: dt is traced
    solvers = {
        "LinearTrapezoid": sg.sim.LinearTrapezoid,
        "SemiImplicitEuler": sg.sim.SemiImplicitEuler,
        "Tsit5": lambda m: diffrax.Tsit5(),
    }

    def make(kind):
        return eqx.filter_jit(lambda m, y, dt: sg.sim.rollout_to(
            m, y, t1, solver=solvers[kind](m), solver_dt=dt, save_ts=ts, max_steps=max_steps).ys)

    fns = {k: make(k) for k in solvers}
    ref = tips(fns["Tsit5"](model, y0, jnp.asarray(ref_dt))[:, :n])
    rows = []
    for kind, f in fns.items():
        tried, best = {}, None
        for dt in sorted(candidates, reverse=True):  # largest first: stop at the first pass
            ys = f(model, y0, jnp.asarray(dt))
            err = float(jnp.max(jnp.linalg.norm(tips(ys[:, :n]) - ref, axis=-1))) / L
            tried[f"{dt:g}"] = err if math.isfinite(err) else None
            if math.isfinite(err) and err <= 0.01:
                best = (dt, err)
                break
        wall = None if best is None else median_wall(f, (model, y0, jnp.asarray(best[0])), reps)
        rows.append({
            "case": "fast_integrator_beam_spatial", "integrator": kind, "horizon_s": t1,
            "dt": None if best is None else best[0], "tip_error_rel": None if best is None else best[1],
            "sorogym_s": wall, "pyelastica_s": elastica_s,
            "speedup_vs_pyelastica": None if wall is None else elastica_s / wall,
            "tried_tip_error_rel": tried, "reference": f"Tsit5 dt={ref_dt:g}",
        })
        print(f"  fast integrator {kind}: dt={rows[-1]['dt']} err/L={rows[-1]['tip_error_rel']}", flush=True)
    return rows


# -- output ----------------------------------------------------------------------------------


def fmt(v, spec):
    if v is None:
        return "-"
    return format(v, spec) if spec else str(v)


FD_COLS = [("model", "model", ""), ("segments", "N", ""), ("sorogym_us", "sorogym [us]", ".1f"),
           ("soromox_us", "soromox [us]", ".1f"), ("speedup", "speedup", ".2f"),
           ("sorogym_loop_us", "sorogym in loop [us]", ".1f"), ("soromox_loop_us", "soromox in loop [us]", ".1f"),
           ("speedup_loop", "speedup in loop", ".2f"), ("max_rel_diff", "rel. diff", ".1e")]
RO_COLS = [("case", "case", ""), ("horizon_s", "T [s]", "g"), ("sorogym_s", "sorogym [s]", ".2f"),
           ("soromox_s", "soromox [s]", ".2f"), ("pyelastica_s", "PyElastica [s]", ".2f"),
           ("speedup_vs_soromox", "x soromox", ".2f"), ("speedup_vs_pyelastica", "x PyElastica", ".2f"),
           ("rmse_mx", "tip RMSE/L vs soromox", ".1e"), ("rmse_el", "tip RMSE/L vs PyElastica", ".3f"),
           ("max_el", "tip max vs PyElastica [m]", ".3f")]
FI_COLS = [("integrator", "integrator", ""), ("dt", "dt [s]", "g"),
           ("tip_error_rel", "max tip err / L", ".4f"), ("sorogym_s", "sorogym [s]", ".3f"),
           ("pyelastica_s", "PyElastica [s]", ".2f"), ("speedup_vs_pyelastica", "x PyElastica", ".3g")]


def flat_rollout(row):
    agr = row["tip_agreement"]
    el = agr.get("sorogym_vs_pyelastica", {})
    return {**row, "rmse_mx": agr["sorogym_vs_soromox"]["rmse_over_L"],
            "rmse_el": el.get("rmse_over_L"), "max_el": el.get("max_m")}


def table_cells(rows, cols):
    return [c[1] for c in cols], [[fmt(r.get(c[0]), c[2]) for c in cols] for r in rows]


def text_table(title, rows, cols):
    head, body = table_cells(rows, cols)
    w = [max(len(x) for x in col) for col in zip(head, *body)]
    lines = [title, "  ".join(h.ljust(k) for h, k in zip(head, w)), "  ".join("-" * k for k in w)]
    lines += ["  ".join(c.rjust(k) if i else c.ljust(k) for i, (c, k) in enumerate(zip(r, w))) for r in body]
    return "\n".join(lines)


def markdown_table(rows, cols):
    head, body = table_cells(rows, cols)
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in body])


def meta(quick, notes):
    return run_metadata(quick, ("jax", "jaxlib", "diffrax", "equinox", "soromox", "pyelastica", "numba"), notes)


def write_markdown(path, info, fd, ro_rows, fast, t_beam):
    md = [
        f"CPU: {info['cpu']['model']} ({info['cpu']['cpu_count']} cores), jax {info['versions']['jax']}, "
        f"float64, git {str(info['git_revision'])[:8]}.", "",
        "**Forward dynamics**: per call (jitted single-state call, incl. Python dispatch) and "
        f"per evaluation inside a compiled loop of {LOOP_EVALS} chained evaluations (as in a rollout)", "",
        markdown_table(fd, FD_COLS), "",
        f"**Paper beam (0.6 m, 2 PCS segments), Tsit5 dt = 1e-4, {t_beam} s**", "",
        markdown_table(ro_rows, RO_COLS), "",
        "**Fast integrators (largest dt with tip error <= 1 % of L)**", "", markdown_table(fast, FI_COLS), "",
    ]
    path.write_text("\n".join(md))
    print(f"wrote {path}")


def run_notes(quick, t_beam, t_fast, candidates, ref_dt):
    return [
        f"beam horizon {t_beam} s (paper: 3 s)" + (" [quick mode]" if quick else ""),
        f"fast-integrator horizon {t_fast} s; candidates {candidates}; pass = max tip error <= 1% of "
        f"L vs Tsit5 dt={ref_dt:g}; dt is traced (one compile per integrator, max_steps sized for "
        "the reference); search from the largest dt, stopping at the first pass",
        ("forward dynamics: segments (1, 4) only; " if quick else "forward dynamics: ")
        + f"jitted single-state calls incl. dispatch, alternating blocks of 100 calls, "
        f"{8 if quick else 30} blocks, medians; in-loop: {LOOP_EVALS} chained evaluations in one "
        "compiled fori_loop, alternating blocks of 2 loops, same number of blocks; rollouts: median of interleaved post-compile calls, "
        "compile_s = first call - median",
        "soromox rollout_to integrates one extra solver step past t1; saves are at the same times",
        f"PyElastica: {ELASTICA_ELEMENTS} elements, PositionVerlet dt={ELASTICA_DT:g} (4e-4 diverges, "
        "3e-4 stable), OneEndFixedBC, GravityForces acc=[9.81,0,0], AnalyticalLinearDamper uniform "
        "constant gamma = (3 eta / E) w1^2: PCS damping is stiffness-proportional D = (3 eta/E) S "
        "for nu = 0.5; the mass-proportional elastica damping is matched on the first cantilever "
        "bending mode (Euler-Bernoulli w1)",
        "machine is shared; other processes may have been running (see loadavg)",
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="short horizons and few repeats (< 2 min)")
    args = ap.parse_args()
    quick = args.quick
    t_beam = 0.3 if quick else 3.0
    t_fast = 0.1 if quick else 3.0
    # 5e-5 and 2e-5 added for the explicit schemes: the beam's fastest damping rate is ~2.5e4 1/s.
    candidates = [5e-5, 1e-4, 1e-3, 1e-2] if quick else [2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2]
    ref_dt = 1e-5
    notes = run_notes(quick, t_beam, t_fast, candidates, ref_dt)
    info = meta(quick, notes)
    t_start = time.perf_counter()
    print("[1/3] forward dynamics", flush=True)
    fd = bench_forward_dynamics(blocks=8 if quick else 30, segments=(1, 4) if quick else (1, 2, 4))
    print(f"[2/3] beam rollouts ({time.perf_counter() - t_start:.0f} s elapsed)", flush=True)
    elastica_beam(0.02)  # numba warm-up
    el_runs = [elastica_beam(t_beam) for _ in range(1 if quick else 3)]
    _, gamma, w1, tips = el_runs[0]
    elastica = {"wall_s": float(np.median([r[0] for r in el_runs])), "tips": tips}
    info["pyelastica_damping"] = {"uniform_damping_constant_per_s": gamma, "omega1_rad_s": w1,
                                  "beta_s": 3 * BEAM["eta"] / BEAM["young"]}
    rollouts = bench_rollouts(t_beam, reps=2 if quick else 3, elastica=elastica)
    print(f"[3/3] fast integrators ({time.perf_counter() - t_start:.0f} s elapsed)", flush=True)
    el_fast = elastica["wall_s"] if t_fast == t_beam else elastica_beam(t_fast)[0]
    fast = bench_fast_integrator(t_fast, candidates, ref_dt, reps=3, elastica_s=el_fast)
    speedups = [r["speedup"] for r in fd]
    loop_speedups = [r["speedup_loop"] for r in fd]
    info["loadavg_end"] = list(os.getloadavg())
    info["total_wall_s"] = time.perf_counter() - t_start
    result = {
        "meta": info, "forward_dynamics": fd, "rollouts": rollouts, "fast_integrator": fast,
        "summary": {"median_speedup_forward_dynamics": float(np.median(speedups)),
                    "min_speedup_forward_dynamics": float(np.min(speedups)),
                    "median_speedup_forward_dynamics_loop": float(np.median(loop_speedups)),
                    "min_speedup_forward_dynamics_loop": float(np.min(loop_speedups)),
                    "rollout_speedup_vs_soromox": {r["case"]: r["speedup_vs_soromox"] for r in rollouts}},
    }
    out_dir = ROOT / "results" / "bench"
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / ("models_cpu_quick.json" if quick else "models_cpu.json")
    path.write_text(json.dumps(result, indent=2) + "\n")
    ro_rows = [flat_rollout(r) for r in rollouts]
    print()
    print(text_table("Forward dynamics, per call and per in-loop evaluation (medians)", fd, FD_COLS), end="\n\n")
    print(text_table(f"Beam rollouts, Tsit5 dt=1e-4, {t_beam} s", ro_rows, RO_COLS), end="\n\n")
    print(text_table(f"Fast integrators, spatial beam, {t_fast} s (largest dt with tip err <= 1% L)",
                     fast, FI_COLS))
    summ = result["summary"]
    print(f"\nmedian / min forward-dynamics speedup per call: {summ['median_speedup_forward_dynamics']:.2f} / "
          f"{summ['min_speedup_forward_dynamics']:.2f}; in a loop: "
          f"{summ['median_speedup_forward_dynamics_loop']:.2f} / {summ['min_speedup_forward_dynamics_loop']:.2f}"
          f"\nwrote {path}")
    if not quick:
        write_markdown(out_dir / "models_cpu.md", info, fd, ro_rows, fast, t_beam)


if __name__ == "__main__":
    main()
