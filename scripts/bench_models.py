"""CPU benchmark of sorogym's PCS models against soromox (same model) and PyElastica.

Sections (all measured in one process so the ratios are side by side):
  1. per-evaluation forward dynamics, planar/spatial PCS with 1, 2, 4 segments, and the
     articulated chain with 1, 2, 4, 8, 16 links;
  2. the SoRoMoX paper's Table IV rollouts (App. B-A: beam under planar and spatial loads, and
     tendon-driven): sorogym, soromox and PyElastica wall time and tip agreement;
  3. the largest fixed step of the environments' integrators that keeps the beam's tip
     within 1 % of L of a fine Tsit5 reference;
  4. body trees (``trees``): the brittle star, gripper and floating inchworm of
     :mod:`sorogym.robots` in float64 and float32 (sizes, forward dynamics, a 1 s
     LinearTrapezoid rollout), the brittle star with 1-10 arms, and a free-floating PCS rod
     against soromox's floating-base PCS.

    .venv/bin/python scripts/bench_models.py [--quick | --smoke] [--out DIR]
        [--sections pcs gvs articulated rollouts fast trees]

Writes results/bench/models_cpu[_quick].json (and, in full mode, models_cpu.md and the
rollout section as results/comparison/table_iv.md); the tree section goes to its own
results/bench/trees_cpu[_quick].json (and, in full mode, trees_cpu.md). ``--out DIR`` writes
all of these into DIR instead (table_iv.md included). ``--quick`` (under two minutes on a
2-core CPU) runs the PCS sections only, with 1 and 4 segments, 0.3 s horizons, the two beam
cases and no converged-PCS reference runs; ``--quick --sections trees`` runs 0.3 s rollouts,
1, 5 and 10 arms and the 2-segment rod. The tree section is compile-bound: about 50 programs
of 10-25 s each on a 2-core CPU.

``--smoke`` runs every section's code once at the smallest sizes, for the tests (its numbers
are not benchmarks): one segment or link per forward-dynamics table, the tendon-driven PCS
case of Table IV over 0.02 s with a 3-segment converged-PCS run, the fast integrators over
0.02 s with the dt candidates 1e-2 and 5e-5 s, the gripper in float32 with a 0.01 s rollout,
the one-arm brittle star and the one-segment free rod; one timing block of 10 calls and one
timed repeat. It writes every file of a full run, named ``*_smoke`` (models_cpu_smoke.json
and .md, trees_cpu_smoke.json and .md, table_iv.md), into ``--out`` (default: a new temporary
folder, never results/). It is compile-bound: about 1.5 minutes of wall time (1 minute of CPU
time) on a shared 2-core CPU with a warm persistent compilation cache, 2-3 minutes without; the
cache cannot hold its seven diffrax rollout programs (equinox's runtime checks are host
callbacks), which compile anew in every run.
"""

import argparse
import json
import math
import os
import tempfile
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
from sorogym.provenance import run_metadata  # noqa: E402
from sorogym.robots import brittle_star, gripper, inchworm  # noqa: E402
from sorogym.testing import soromox_twin, tip_agreement  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
G_ACC = 9.81
SAVE_DT = 0.01
# Paper beam (SoRoMoX App. B-A): 0.6 m as two 0.3 m PCS segments, upright along world +z.
BEAM = dict(seg_length=0.3, num_segments=2, radius=0.03, density=1000.0, young=1e6, nu=0.5, eta=1e4)
# The Table IV scenarios. `load`: distributed acceleration (world, 3D) acting on rho A, read
# as +x, +x and +y, and +z like the paper's "along the global X / Y / Z direction" (with -z the
# upright beam would be past its self-weight buckling load, q = 27.7 N/m > 7.84 EI / L^3 =
# 23.1 N/m, where the tip is very sensitive to small stiffness differences). Tendons: straight,
# base to tip, 2 cm from the centre line, 90 degrees apart; the paper does not state the
# tension: 20 N each bends the tip ~0.1 m sideways. `model`: two PCS segments, or two GVS links
# (the paper runs the spatial beam on both, and its tendon case on GVS; we run the tendon case
# on both as well).
TENDON_OFFSETS = ((0.02, 0.0), (0.0, 0.02))  # [y, z] in the PCS body frame (world +y and -x upright)
TENDON_TENSION = 20.0
ROLLOUT_CASES = {
    "beam_planar_pcs": dict(planar=True, load=(G_ACC, 0.0, 0.0), tendons=False, model="pcs"),
    "beam_spatial_pcs": dict(planar=False, load=(G_ACC, G_ACC, 0.0), tendons=False, model="pcs"),
    "beam_spatial_gvs": dict(planar=False, load=(G_ACC, G_ACC, 0.0), tendons=False, model="gvs"),
    "tendon_spatial_pcs": dict(planar=False, load=(0.0, 0.0, G_ACC), tendons=True, model="pcs"),
    "tendon_spatial_gvs": dict(planar=False, load=(0.0, 0.0, G_ACC), tendons=True, model="gvs"),
}
# The GVS links of the Table IV cases: all six strains, with quadratic bending (the curvature
# of a cantilever under a distributed load is quadratic along it), 5 Gauss points per link.
GVS_BEAM_ORDERS = {"ky": 2, "kz": 2}
# Their fastest damped mode (4.6e4 1/s at the unloaded state; 2.5e4 1/s for the 2-segment PCS)
# is past fixed-step Tsit5's stability at 1e-4 s, so both libraries run the GVS cases on Tsit5
# with the same PID step-size controller (first step 1e-4 s), as the paper's ode45 would.
GVS_STEP_TOLERANCES = dict(rtol=1e-6, atol=1e-6)
GVS_MAX_STEPS = 400_000
ELASTICA_DT = 2e-4  # PositionVerlet, 50 elements: 4e-4 diverges, 3e-4 is stable; 2e-4 keeps a 2x margin
ELASTICA_ELEMENTS = 50
CONVERGED_SEGMENTS = 8  # finer PCS run once per case (not timed) to split discretisation from model gap
FINE_DT = 5e-4


# -- models --------------------------------------------------------------------------------


def make_pcs(planar, lengths, radius, density, young, damping, gravity=None, nu=0.5):
    params = sg.RodParams.create(
        length=lengths,
        radius=radius,
        density=density,
        young_modulus=young,
        poisson_ratio=nu,
        damping=damping,
        gravity=gravity,
        mounting="upright",
        planar=planar,
        dtype=jnp.float64,
    )
    return (sg.PlanarPCS if planar else sg.PCS)(params)


def beam_model(case, num_segments=BEAM["num_segments"], pcs=False):
    """The sorogym model of a Table IV case and its constant input (``None``: no actuation).
    GVS cases give two GVS links (:data:`GVS_BEAM_ORDERS`) unless ``pcs`` (then the PCS model
    of the same scenario with ``num_segments`` segments)."""
    b, c = BEAM, ROLLOUT_CASES[case]
    if c["model"] == "gvs" and not pcs:
        model, u = beam_model(case, pcs=True)
        return sg.GVS(
            sg.GVSParams.from_rod(model.params),
            sg.StrainBasis.create(None, GVS_BEAM_ORDERS),
            actuation=model.actuation,
            num_gauss_points=5,
        ), u
    load = np.asarray(c["load"])
    gravity = load[[0, 2]] if c["planar"] else load  # planar world (x, y) is the 3D (x, z) plane
    lengths = [b["seg_length"] * b["num_segments"] / num_segments] * num_segments
    model = make_pcs(c["planar"], lengths, b["radius"], b["density"], b["young"], b["eta"], gravity, b["nu"])
    if not c["tendons"]:
        return model, None
    offsets = np.repeat(np.asarray(TENDON_OFFSETS)[:, None, :], num_segments, axis=1)  # (m, N, 2)
    model = sg.PCS(model.params, actuation=sg.Tendons(jnp.asarray(offsets)))
    return model, jnp.full((len(TENDON_OFFSETS),), TENDON_TENSION)


CHAIN_SEED = 2024  # the benchmark chain: one random draw, the n-link model is its first n links
CHAIN_MAX_LINKS = 16


def chain_model(n, seed=CHAIN_SEED):
    """Benchmark articulated chain: the first ``n`` links of one random revolute chain
    (``seed``): unit joint axes in random directions through random points within 2 cm of
    the joint frame, joint frames about 0.1 m along the parent link (random rotations,
    +-2 cm offsets), masses 0.05-0.2 kg, centres of mass and (box-like, rotated) inertias
    random, springs 0.5-2 N m/rad, dampers 0.005-0.02 N m s/rad, Earth gravity; joint-torque
    actuation (:class:`~sorogym.actuation.GeneralizedActuation`, one torque per joint)."""
    from scipy.spatial.transform import Rotation

    rng = np.random.default_rng(seed)
    m = CHAIN_MAX_LINKS
    w = rng.normal(size=(m, 3))
    w /= np.linalg.norm(w, axis=1, keepdims=True)
    axes = np.concatenate([w, np.cross(rng.uniform(-0.02, 0.02, (m, 3)), w)], axis=1)
    T = np.tile(np.eye(4), (m, 1, 1))
    T[:, :3, :3] = Rotation.from_rotvec(rng.normal(scale=0.5, size=(m, 3))).as_matrix()
    T[:, :3, 3] = rng.uniform(-0.02, 0.02, (m, 3)) + [0.1, 0.0, 0.0]
    T[0, :3, 3] = 0.0  # the first joint sits at the base
    mass = rng.uniform(0.05, 0.2, m)
    box = rng.uniform(0.01, 0.1, (m, 3))
    principal = mass[:, None] / 12 * (np.sum(box**2, axis=1, keepdims=True) - box**2)
    R = Rotation.from_rotvec(rng.normal(size=(m, 3))).as_matrix()
    inertia = R @ (principal[:, :, None] * np.eye(3)) @ np.swapaxes(R, 1, 2)
    com = np.stack([rng.uniform(0.03, 0.07, m), *rng.uniform(-0.01, 0.01, (2, m))], axis=1)
    stiffness, damping = rng.uniform(0.5, 2.0, m), rng.uniform(0.005, 0.02, m)
    params = sg.ChainParams.create(
        joint_axes=axes[:n],
        parent_to_joint=T[:n],
        mass=mass[:n],
        com=com[:n],
        inertia=inertia[:n],
        stiffness=stiffness[:n],
        damping=damping[:n],
        dtype=jnp.float64,
    )
    return sg.ArticulatedSoftRobot(params)


def tip_in_3d(tips, planar):
    """Tip positions ``(T, 2)`` of a planar model as ``(T, 3)`` in the 3D (x, z) plane."""
    tips = np.asarray(tips)
    return np.stack([tips[:, 0], np.zeros(len(tips)), tips[:, 1]], axis=1) if planar else tips


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
    """Median per-call time [us] of each jitted fn; blocks of `calls` calls alternate.
    ``args``: the arguments of every fn (a tuple), or a list of one tuple per fn."""
    per_fn = args if isinstance(args, list) else [args] * len(fns)
    for f, a in zip(fns, per_fn, strict=True):  # compile + warm up
        for _ in range(10):
            jax.block_until_ready(f(*a))
    samples = [[] for _ in fns]
    for _ in range(blocks):
        for i, (f, a) in enumerate(zip(fns, per_fn, strict=True)):
            t0 = time.perf_counter()
            for _ in range(calls):
                out = f(*a)
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


def forward_dynamics_times(robots, args, blocks, calls, fns=None):
    """``(per call [us], per in-loop evaluation [us])`` of each robot's forward dynamics,
    measured side by side: alternating blocks of ``calls`` jitted calls, then alternating
    blocks of 2 compiled loops of :data:`LOOP_EVALS` evaluations. ``args``: ``(y, u)`` for
    every robot, or a list of one per robot; ``fns``: the robots' already jitted
    single-state calls (default: :func:`jit_forward_dynamics`)."""
    fns = fns or [jit_forward_dynamics(r) for r in robots]
    per_call = interleaved_per_call_us(fns, args, blocks, calls)
    loops = [jit_forward_dynamics_loop(r) for r in robots]
    return per_call, [t / LOOP_EVALS for t in interleaved_per_call_us(loops, args, blocks, 2)]


def forward_dynamics_row(label, size, model, blocks, calls, input_scale=0.0, rtol=None):
    """Per-call and in-loop forward-dynamics times of ``model`` and its soromox twin at one
    random state, measured side by side. Inputs: zero, or (``input_scale > 0``) random
    normal times ``input_scale``, the same for both. With ``rtol``, first asserts that the
    two state derivatives agree to ``rtol`` (max abs difference / max abs value)."""
    rob, _ = soromox_twin(model)
    n = model.num_dofs
    rng = np.random.default_rng(size)
    y = jnp.asarray(0.1 * rng.normal(size=2 * n))
    u = jnp.asarray(input_scale * rng.normal(size=model.num_actuators))
    f_sg, f_mx = jit_forward_dynamics(model), jit_forward_dynamics(rob)
    a, b = np.asarray(f_sg(y, u)), np.asarray(f_mx(y, u))
    rel = float(np.max(np.abs(a - b)) / np.max(np.abs(b)))
    if rtol is not None:
        assert rel <= rtol, f"{label} N={size}: sorogym and soromox forward dynamics differ by {rel:.1e} (> {rtol:g})"
    (t_sg, t_mx), (l_sg, l_mx) = forward_dynamics_times([model, rob], (y, u), blocks, calls, fns=[f_sg, f_mx])
    print(
        f"  forward dynamics {label} N={size}: per call {t_sg:.1f} us vs {t_mx:.1f} us, "
        f"in a loop {l_sg:.1f} us vs {l_mx:.1f} us",
        flush=True,
    )
    return {
        "model": label,
        "segments": size,
        "num_dofs": n,
        "sorogym_us": t_sg,
        "soromox_us": t_mx,
        "speedup": t_mx / t_sg,
        "sorogym_loop_us": l_sg,
        "soromox_loop_us": l_mx,
        "speedup_loop": l_mx / l_sg,
        "max_rel_diff": rel,
    }


def bench_dispatch_floor(blocks, calls=200):
    """What any jitted call costs before its kernels run, measured like the rows above: a
    one-kernel program XLA counts as cheap (under 1000 flops: PjRt runs it on the calling
    thread) and a one-kernel program above that count (dispatched to a worker thread, as
    every forward-dynamics program here is, ours and soromox's alike)."""
    y, u = jnp.linspace(0.1, 0.6, 6), jnp.zeros(3)

    def above(y, u):  # 200 chained multiply-adds on 6 numbers: one fused loop, 2400 flops
        for _ in range(200):
            y = y * 1.0001 + 1e-6
        return y

    def counted_flops(f):  # XLA's HloCostAnalysis count, the one PjRt compares with 1000
        cost = f.lower(y, u).compile().cost_analysis()
        return float((cost[0] if isinstance(cost, (list, tuple)) else cost).get("flops", 0.0))

    fns = [jax.jit(lambda y, u: 2.0 * y), jax.jit(above)]
    flops = [counted_flops(f) for f in fns]
    inline_us, dispatched_us = interleaved_per_call_us(fns, (y, u), blocks, calls)
    print(
        f"  dispatch floor: cheap program {inline_us:.1f} us ({flops[0]:.0f} flops), "
        f"one kernel above 1000 flops {dispatched_us:.1f} us ({flops[1]:.0f} flops)",
        flush=True,
    )
    return {
        "inline_us": inline_us,
        "inline_flops": flops[0],
        "dispatched_us": dispatched_us,
        "dispatched_flops": flops[1],
    }


def bench_forward_dynamics(blocks, segments=(1, 2, 4), calls=100):
    return [
        forward_dynamics_row(
            "PlanarPCS" if planar else "PCS", N, make_pcs(planar, [0.15] * N, 0.01, 1000.0, 1e6, 100.0), blocks, calls
        )  # Earth gravity
        for planar in (True, False)
        for N in segments
    ]


def gvs_model(n):
    """Benchmark GVS rod (the paper's App. B-B setting): ``n`` links of 0.15 m, r 1 cm,
    rho 1000, E 1 MPa, eta 100 Pa s, zero-order bases of all six strains, 5 Gauss points."""
    params = sg.GVSParams.create(
        length=[0.15] * n, radius=0.01, density=1000.0, young_modulus=1e6, damping=100.0, dtype=jnp.float64
    )
    return sg.GVS(params, sg.StrainBasis.create(None, 0), num_gauss_points=5)


def bench_gvs_forward_dynamics(blocks, links=(1, 2, 4, 8), calls=100):
    """The same measurements for :func:`gvs_model` (``segments`` = links)."""
    return [forward_dynamics_row("GVS", n, gvs_model(n), blocks, calls) for n in links]


ARTICULATED_RTOL = 1e-8


def bench_articulated_forward_dynamics(blocks, links=(1, 2, 4, 8, 16), calls=100):
    """The same measurements for :func:`chain_model` (``segments`` = links) with random
    joint torques (0.1 N m scale), after asserting agreement with soromox to 1e-8."""
    return [
        forward_dynamics_row("Articulated", n, chain_model(n), blocks, calls, input_scale=0.1, rtol=ARTICULATED_RTOL)
        for n in links
    ]


# -- 2. beam rollouts ------------------------------------------------------------------------


def elastica_rollout(case, t1, dt=ELASTICA_DT, n_elements=ELASTICA_ELEMENTS):
    """A Table IV case on a clamped PyElastica Cosserat rod (the tendon-driven rod of the
    ``-Elastica`` envs: eyelet tendon loads, mass-proportional damping matched to the slowest
    bending mode of the PCS model). Returns ``(wall_s, gamma, tips (T, 3))``, tips saved every
    SAVE_DT."""
    from sorogym.envs.elastica import RodSpec, TendonRod, matched_damping_rate

    b, c = BEAM, ROLLOUT_CASES[case]
    model, _ = beam_model(case, pcs=True)
    gamma = matched_damping_rate(model)
    spec = RodSpec(
        length=b["seg_length"] * b["num_segments"],
        radius=b["radius"],
        density=b["density"],
        young_modulus=b["young"],
        shear_modulus=b["young"] / (2 * (1 + b["nu"])),
        tendon_offsets=TENDON_OFFSETS if c["tendons"] else np.zeros((0, 2)),
        gravity=c["load"],
        damping_rate=gamma,
    )
    rod = TendonRod(spec, n_elements, dt)
    tensions = np.full(len(spec.tendon_offsets), TENDON_TENSION)
    tips = [rod.tip_state()[0]]
    t0 = time.perf_counter()
    for _ in range(int(round(t1 / SAVE_DT))):
        rod.advance(tensions, SAVE_DT)
        tips.append(rod.tip_state()[0])
    return time.perf_counter() - t0, gamma, np.array(tips)


def bench_rollouts(t1, reps, elastica_reps, converged_segments, cases=tuple(ROLLOUT_CASES)):
    """Table IV: each case on sorogym and soromox (Tsit5, dt 1e-4) and PyElastica, with tip
    agreement; a ``converged_segments`` PCS (sorogym, not timed; ``None`` skips it) separates
    the 2-segment discretisation from the rod-vs-PCS modelling gap."""
    ts = jnp.asarray(save_times(t1))
    adaptive = dict(stepsize_controller=diffrax.PIDController(**GVS_STEP_TOLERANCES), max_steps=GVS_MAX_STEPS)

    def rollout_fns(steps):  # steps: {} = each library's default fixed steps
        f_sg = eqx.filter_jit(lambda m, y, u: sg.sim.rollout_to(m, y, t1, u=u, solver_dt=1e-4, save_ts=ts, **steps).ys)
        f_mx = eqx.filter_jit(
            lambda r, y, u: (
                r.rollout_to(
                    initial_state=soromox.SystemState(t=jnp.array(0.0), y=y),
                    u=u,
                    t1=t1,
                    solver_dt=1e-4,
                    save_ts=ts,
                    solver=diffrax.Tsit5(),
                    **steps,
                ).y
            )
        )
        return f_sg, f_mx

    fns = {"pcs": rollout_fns({}), "gvs": rollout_fns(adaptive)}
    # Shorter segments stiffen the fastest damped mode past Tsit5's stability at 1e-4 s, so the
    # finer PCS runs on the linearly implicit trapezoid (K, D constant) at FINE_DT.
    f_fine = eqx.filter_jit(
        lambda m, y, u: (
            sg.sim.rollout_to(m, y, t1, u=u, solver=sg.sim.LinearTrapezoid(m), solver_dt=FINE_DT, save_ts=ts).ys
        )
    )
    elastica_rollout(cases[0], 0.02)  # numba warm-up
    # A PCS case and its GVS twin are one physical scenario: PyElastica and the finer PCS run once for both.
    scenario_runs = {}
    rows = []
    for case in cases:
        spec = ROLLOUT_CASES[case]
        planar = spec["planar"]
        f_sg, f_mx = fns[spec["model"]]
        model, u = beam_model(case)
        rob, combine = soromox_twin(model)
        u_mx = None if u is None else jnp.asarray(combine @ np.asarray(u))
        y0 = jnp.zeros(2 * model.num_dofs)
        L, n = float(model.total_length), model.num_dofs
        res = timed_jobs({"sorogym": (f_sg, (model, y0, u)), "soromox": (f_mx, (rob, y0, u_mx))}, reps)
        scenario = (planar, spec["load"], spec["tendons"])
        if scenario not in scenario_runs:
            scenario_runs[scenario] = {"elastica": [elastica_rollout(case, t1) for _ in range(elastica_reps)]}
        runs = scenario_runs[scenario]
        el_runs = runs["elastica"]
        el_wall, gamma, tip_el = float(np.median([r[0] for r in el_runs])), el_runs[0][1], el_runs[0][2]
        tip_sg = tip_in_3d(tip_fn_sorogym(model)(jnp.asarray(res["sorogym"][2][:, :n])), planar)
        tip_mx = tip_in_3d(tip_fn_soromox(rob, model)(jnp.asarray(res["soromox"][2][:, :n])), planar)
        row = {
            "case": case,
            "model": type(model).__name__,
            "num_dofs": n,
            "horizon_s": t1,
            "steps": f"Tsit5, PID controller {_gvs_steps_text()}" if spec["model"] == "gvs" else "Tsit5, dt = 1e-4",
            "load_acc": list(spec["load"]),
            "tendon_tension_N": TENDON_TENSION if spec["tendons"] else None,
            "sorogym_s": res["sorogym"][1],
            "soromox_s": res["soromox"][1],
            "pyelastica_s": el_wall,
            "speedup_vs_soromox": res["soromox"][1] / res["sorogym"][1],
            "speedup_vs_pyelastica": el_wall / res["sorogym"][1],
            "compile_s_sorogym": res["sorogym"][0] - res["sorogym"][1],
            "compile_s_soromox": res["soromox"][0] - res["soromox"][1],
            "pyelastica_damping_rate_per_s": gamma,
            "converged_segments": converged_segments,
            "tip_agreement": {
                "sorogym_vs_soromox": tip_agreement(tip_sg, tip_mx, L),
                "sorogym_vs_pyelastica": tip_agreement(tip_sg, tip_el, L),
            },
            "final_tip_sorogym": tip_sg[-1].tolist(),
            "final_tip_soromox": tip_mx[-1].tolist(),
            "final_tip_pyelastica": tip_el[-1].tolist(),
        }
        if converged_segments is not None:
            if "fine" not in runs:
                fine, u_fine = beam_model(case, converged_segments, pcs=True)
                ys_fine = f_fine(fine, jnp.zeros(2 * fine.num_dofs), u_fine)
                runs["fine"] = tip_in_3d(tip_fn_sorogym(fine)(ys_fine[:, : fine.num_dofs]), planar)
            tip_fine = runs["fine"]
            tag = f"{converged_segments}seg"
            row["tip_agreement"] |= {
                f"sorogym_{tag}_vs_pyelastica": tip_agreement(tip_fine, tip_el, L),
                f"sorogym_vs_sorogym_{tag}": tip_agreement(tip_sg, tip_fine, L),
            }
            row[f"final_tip_sorogym_{tag}"] = tip_fine[-1].tolist()
        rows.append(row)
        print(
            f"  rollout {case}: sorogym {row['sorogym_s']:.2f} s, soromox {row['soromox_s']:.2f} s, "
            f"PyElastica {el_wall:.2f} s",
            flush=True,
        )
    return rows


# -- 3. fast integrators -----------------------------------------------------------------------


def bench_fast_integrator(t1, candidates, ref_dt, reps, elastica_s):
    model, _ = beam_model("beam_spatial_pcs")
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
        return eqx.filter_jit(
            lambda m, y, dt: (
                sg.sim.rollout_to(m, y, t1, solver=solvers[kind](m), solver_dt=dt, save_ts=ts, max_steps=max_steps).ys
            )
        )

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
        rows.append(
            {
                "case": "fast_integrator_beam_spatial",
                "integrator": kind,
                "horizon_s": t1,
                "dt": None if best is None else best[0],
                "tip_error_rel": None if best is None else best[1],
                "sorogym_s": wall,
                "pyelastica_s": elastica_s,
                "speedup_vs_pyelastica": None if wall is None else elastica_s / wall,
                "tried_tip_error_rel": tried,
                "reference": f"Tsit5 dt={ref_dt:g}",
            }
        )
        print(f"  fast integrator {kind}: dt={rows[-1]['dt']} err/L={rows[-1]['tip_error_rel']}", flush=True)
    return rows


# -- 4. body trees -----------------------------------------------------------------------------

TREE_ROBOTS = {"brittle_star": brittle_star, "gripper": gripper, "inchworm": inchworm}  # default builds
TREE_DTYPES = {"float64": jnp.float64, "float32": jnp.float32}
TREE_SOLVER = "LinearTrapezoid"  # the environments' fixed-step scheme (K and D constant in a tree too)
# 1e-3 s: over 1 s the last rod tip stays within 0.01 mm (star, gripper) and 0.6 mm (inchworm) of a
# 1e-4 s run; SemiImplicitEuler diverges on the gripper at 2e-3 s.
TREE_DT = 1e-3  # s
TREE_TENSION = 0.5  # N, constant, on tendon 0 of every soft part (motors at zero)
TREE_ARMS = (1, 2, 5, 10)
# The free rod timed against soromox: the segments of the PCS rows above, backbone along the
# body's local x like soromox's floating PCS, all six strains, 5 Gauss points, Earth gravity.
FLOATING_ROD = dict(seg_length=0.15, radius=0.01, density=1000.0, young=1e6, nu=0.5, eta=100.0)


def tree_state(model, seed):
    """A random valid state ``[q, qd]`` in the model's dtype: the neutral configuration moved
    by ``retract`` along 0.1 x a standard normal, velocities 0.1 x a standard normal."""
    rng = np.random.default_rng(seed)
    q0 = model.neutral_configuration()
    dq, qd = (jnp.asarray(0.1 * rng.normal(size=model.num_dofs), q0.dtype) for _ in range(2))
    return jnp.concatenate([model.retract(q0, dq), qd])


def tree_input(model, tension=TREE_TENSION):
    """``TREE_TENSION`` on the first tendon of every rod body (in body order), zero elsewhere."""
    u, start = np.zeros(model.num_actuators), 0
    for name in model.body_names:
        try:
            rod = model.rod(name)
        except ValueError:  # a rigid link: no tendons
            continue
        u[start] = tension
        start += rod.num_actuators
    return jnp.asarray(u, model.neutral_configuration().dtype)


def bench_tree_robots(blocks, calls, horizon, reps, robots=tuple(TREE_ROBOTS), dtypes=tuple(TREE_DTYPES)):
    """The named trees ``robots`` (keys of :data:`TREE_ROBOTS`) in ``dtypes`` (keys of
    :data:`TREE_DTYPES`; default: all, float64 and float32): sizes, forward dynamics per call
    and per in-loop evaluation (all variants side by side), and a rollout of ``horizon`` s on
    :data:`TREE_SOLVER` at :data:`TREE_DT` from rest at the neutral configuration with
    :func:`tree_input` (wall time median of ``reps`` interleaved post-compile calls)."""
    ts = jnp.asarray(save_times(horizon))
    solver = getattr(sg.sim, TREE_SOLVER)
    rollout = eqx.filter_jit(
        lambda m, y, u: sg.sim.rollout_to(m, y, horizon, u=u, solver=solver(m), solver_dt=TREE_DT, save_ts=ts).ys
    )
    body_poses = eqx.filter_jit(lambda m, q: m.body_poses(q))  # one program: op by op costs ~10 s a tree
    cases = {}
    for name in robots:
        for tag in dtypes:
            model = TREE_ROBOTS[name](dtype=TREE_DTYPES[tag])
            y = tree_state(model, seed=len(cases))
            cases[(name, tag)] = (model, y, tree_input(model))
    models = [c[0] for c in cases.values()]
    per_call, loop = forward_dynamics_times(models, [(y, u) for _, y, u in cases.values()], blocks, calls)
    jobs = {}
    for (name, tag), (model, _, u) in cases.items():
        y0 = jnp.concatenate([model.neutral_configuration(), jnp.zeros(model.num_dofs, u.dtype)])
        jobs[f"{name}/{tag}"] = (rollout, (model, y0, u))
    runs = timed_jobs(jobs, reps)
    rows = []
    for i, ((name, tag), (model, _, _)) in enumerate(cases.items()):
        first, wall, ys = runs[f"{name}/{tag}"]
        finite = bool(np.all(np.isfinite(ys)))
        poses = np.asarray(body_poses(model, jnp.asarray(ys[-1, : model.num_positions])))
        rows.append(
            {
                "robot": name,
                "dtype": tag,
                "num_bodies": model.num_bodies,
                "nq": model.num_positions,
                "num_dofs": model.num_dofs,
                "num_inputs": model.num_actuators,
                "call_us": per_call[i],
                "loop_us": loop[i],
                "rollout_s": wall,
                "rollout_compile_s": first - wall,
                "rollout_steps": int(round(horizon / TREE_DT)),
                "rollout_finite": finite,
                "output_dtype": str(ys.dtype),
                "final_root_position": poses[0, :3, 3].tolist(),
            }
        )
        assert finite, f"{name} ({tag}): the {horizon} s rollout at dt = {TREE_DT:g} is not finite"
        print(
            f"  tree {name} {tag}: n {model.num_dofs}, per call {per_call[i]:.1f} us, in a loop {loop[i]:.1f} us, "
            f"rollout {wall:.3f} s",
            flush=True,
        )
    return rows


def bench_tree_scaling(blocks, calls, arms=TREE_ARMS):
    """The brittle star with ``arms`` arms (float64), side by side: per-evaluation cost and
    its ratio to the arm count, against the one-arm star."""
    models = [brittle_star(num_arms=k, dtype=jnp.float64) for k in arms]
    args = [(tree_state(m, seed=k), tree_input(m)) for k, m in zip(arms, models, strict=True)]
    per_call, loop = forward_dynamics_times(models, args, blocks, calls)
    rows = []
    for k, m, c, lp in zip(arms, models, per_call, loop, strict=True):
        rows.append(
            {
                "arms": k,
                "num_bodies": m.num_bodies,
                "num_dofs": m.num_dofs,
                "call_us": c,
                "loop_us": lp,
                "loop_us_per_arm": lp / k,
                "loop_us_per_dof": lp / m.num_dofs,
                "loop_vs_1_arm": lp / loop[0],
                "dofs_vs_1_arm": m.num_dofs / models[0].num_dofs,
            }
        )
        print(f"  brittle star, {k} arms: n {m.num_dofs}, in a loop {lp:.1f} us ({lp / k:.1f} us per arm)", flush=True)
    return rows


def floating_rod_pair(num_segments, seed):
    """A free-floating PCS rod with no hub in sorogym (a :class:`~sorogym.BodyTree` of one
    passive rod on a free joint) and soromox (``PCS.from_links(..., floating_base=True)``),
    with the same random state in each library's layout, and the relative difference of their
    accelerations. Ours: ``q = [p, quat (w first), q_rod]``, ``qd = [w_body, v_body, qd_rod]``;
    soromox: ``q = [quat (w last), p, q_rod]``, ``qd = [R w_body, R v_body, qd_rod]`` (world
    frame), so ``qdd_soromox = T qdd + [0, R (w_body x v_body), 0]``, ``T = diag(R, R, 1)``."""
    from scipy.spatial.transform import Rotation

    b, N = FLOATING_ROD, num_segments
    G = b["young"] / (2 * (1 + b["nu"]))
    params = sg.RodParams.create(
        length=[b["seg_length"]] * N,
        radius=b["radius"],
        density=b["density"],
        young_modulus=b["young"],
        poisson_ratio=b["nu"],
        damping=b["eta"],
        mounting="horizontal",
        dtype=jnp.float64,
    )
    ours = sg.BodyTree(
        [sg.RodBody("rod", sg.PCS(params), joint=sg.Joint.free(), actuated=False)], gravity=(0.0, 0.0, -G_ACC)
    )
    links = [
        soromox.LinkSpec.circular(
            length=b["seg_length"],
            radius=b["radius"],
            density=b["density"],
            reference_strain=np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0]),
            young_modulus=b["young"],
            shear_modulus=G,
            material_damping_coefficient=b["eta"],
        )
        for _ in range(N)
    ]
    rob = soromox.PCS.from_links(
        links,
        structure=soromox.PCSStructure(num_gauss_points=5),
        gravity=jnp.array([0.0, 0.0, -G_ACC]),
        floating_base=True,
        backend="jax",  # "auto" would pick soromox's Warp kernels on a GPU
    )
    rng = np.random.default_rng(seed)
    nr = 6 * N
    R = Rotation.from_rotvec(rng.normal(size=3)).as_matrix()
    p, q_rod = rng.uniform(-0.5, 0.5, 3), 0.1 * rng.normal(size=nr)
    w, v, qd_rod = (0.1 * rng.normal(size=k) for k in (3, 3, nr))
    T = np.eye(6 + nr)
    T[:3, :3] = T[3:6, 3:6] = R
    quat = Rotation.from_matrix(R).as_quat(scalar_first=True)
    y = jnp.asarray(np.concatenate([p, quat, q_rod, w, v, qd_rod]))
    y_mx = jnp.asarray(np.concatenate([np.roll(quat, -1), p, q_rod, T @ np.concatenate([w, v, qd_rod])]))
    u, u_mx = jnp.zeros(0), jnp.zeros(rob.num_velocities - 6)  # ours passive; soromox: identity actuation, zero
    nq = ours.num_positions
    qdd = np.asarray(jit_forward_dynamics(ours)(y, u))[nq:]
    qdd_mx = np.asarray(jit_forward_dynamics(rob)(y_mx, u_mx))[nq:]
    drift = np.zeros(6 + nr)
    drift[3:6] = R @ np.cross(w, v)
    rel = float(np.max(np.abs(T @ qdd + drift - qdd_mx)) / np.max(np.abs(qdd_mx)))
    return ours, rob, (y, u), (y_mx, u_mx), rel


def bench_floating_rod(blocks, calls, segments=(2, 4)):
    """Forward dynamics of the free rod (:func:`floating_rod_pair`) in sorogym and soromox,
    side by side, as the rows of section 1 (``speedup`` = soromox time / ours)."""
    rows = []
    for N in segments:
        ours, rob, args, args_mx, rel = floating_rod_pair(N, seed=N)
        (t_sg, t_mx), (l_sg, l_mx) = forward_dynamics_times([ours, rob], [args, args_mx], blocks, calls)
        rows.append(
            {
                "model": "free PCS rod",
                "segments": N,
                "nq": ours.num_positions,
                "num_dofs": ours.num_dofs,
                "sorogym_us": t_sg,
                "soromox_us": t_mx,
                "speedup": t_mx / t_sg,
                "sorogym_loop_us": l_sg,
                "soromox_loop_us": l_mx,
                "speedup_loop": l_mx / l_sg,
                "max_rel_diff": rel,
            }
        )
        print(
            f"  free rod N={N}: per call {t_sg:.1f} us vs soromox {t_mx:.1f} us, "
            f"in a loop {l_sg:.1f} us vs {l_mx:.1f} us (rel. diff {rel:.1e})",
            flush=True,
        )
    return rows


def bench_trees(
    blocks,
    calls=50,
    horizon=1.0,
    reps=3,
    robots=tuple(TREE_ROBOTS),
    dtypes=tuple(TREE_DTYPES),
    arms=TREE_ARMS,
    rod_segments=(2, 4),
):
    """Section 4 (:func:`bench_tree_robots` on ``robots`` in ``dtypes`` with rollouts of
    ``horizon`` s timed ``reps`` times, :func:`bench_tree_scaling` over ``arms``,
    :func:`bench_floating_rod` with ``rod_segments``), forward dynamics in ``blocks`` blocks of
    ``calls`` calls, with the load average before and after."""
    t0, load_start = time.perf_counter(), list(os.getloadavg())
    result = {
        "settings": {
            "robots": {k: f"sorogym.robots.{k}() (defaults)" for k in robots},
            "dtypes": list(dtypes),
            "rollout": f"{horizon:g} s from rest at the neutral configuration, sorogym.sim.rollout_to with "
            f"{TREE_SOLVER}(model) at dt = {TREE_DT:g} s, saves every {SAVE_DT:g} s, {TREE_TENSION:g} N on "
            "tendon 0 of every rod body, motors at zero; no contact (the floating robots fall freely)",
            "forward_dynamics": f"random valid state (seeded); per call: alternating blocks of {calls} jitted calls, "
            f"{blocks} blocks, medians; in loop: {LOOP_EVALS} chained evaluations in one compiled fori_loop, "
            "alternating blocks of 2 loops; every table's rows measured side by side",
            "floating_rod": {**FLOATING_ROD, "gauss_points": 5, "strains": "all six", "gravity": [0, 0, -G_ACC]},
        },
        "loadavg_start": load_start,  # 1/5/15 min, as `uptime`; the machine may be shared
    }
    parts = {
        "robots": lambda: bench_tree_robots(blocks, calls, horizon, reps, robots, dtypes),
        "scaling": lambda: bench_tree_scaling(blocks, calls, arms),
        "floating_rod_vs_soromox": lambda: bench_floating_rod(blocks, calls, rod_segments),
    }
    result["loadavg_after"], result["wall_s_of"] = {}, {}
    for key, run in parts.items():
        print(f"  {key} ({time.perf_counter() - t0:.0f} s into the section)", flush=True)
        t_part = time.perf_counter()
        result[key] = run()
        result["wall_s_of"][key] = time.perf_counter() - t_part
        result["loadavg_after"][key] = list(os.getloadavg())
    result["loadavg_end"] = list(os.getloadavg())
    result["wall_s"] = time.perf_counter() - t0
    rod, scaling = result["floating_rod_vs_soromox"], result["scaling"]
    result["summary"] = {
        "floating_rod_speedup_vs_soromox": {r["segments"]: r["speedup"] for r in rod},
        "floating_rod_speedup_vs_soromox_loop": {r["segments"]: r["speedup_loop"] for r in rod},
        "brittle_star_loop_us_per_arm": {r["arms"]: r["loop_us_per_arm"] for r in scaling},
        "all_rollouts_finite": all(r["rollout_finite"] for r in result["robots"]),
    }
    return result


# -- output ----------------------------------------------------------------------------------


def fmt(v, spec):
    if v is None:
        return "-"
    return format(v, spec) if spec else str(v)


FD_COLS = [
    ("model", "model", ""),
    ("segments", "N", ""),
    ("sorogym_us", "sorogym [us]", ".1f"),
    ("soromox_us", "soromox [us]", ".1f"),
    ("speedup", "speedup", ".2f"),
    ("sorogym_loop_us", "sorogym in loop [us]", ".1f"),
    ("soromox_loop_us", "soromox in loop [us]", ".1f"),
    ("speedup_loop", "speedup in loop", ".2f"),
    ("max_rel_diff", "rel. diff", ".1e"),
]
RO_COLS = [
    ("case", "case", ""),
    ("model", "model", ""),
    ("num_dofs", "n", "d"),
    ("horizon_s", "T [s]", "g"),
    ("sorogym_s", "sorogym [s]", ".2f"),
    ("soromox_s", "soromox [s]", ".2f"),
    ("pyelastica_s", "PyElastica [s]", ".2f"),
    ("speedup_vs_soromox", "x soromox", ".2f"),
    ("speedup_vs_pyelastica", "x PyElastica", ".2f"),
    ("rmse_mx", "tip RMSE/L vs soromox", ".1e"),
    ("rmse_el", "tip RMSE/L vs PyElastica", ".3f"),
    ("max_el", "tip max vs PyElastica [m]", ".3f"),
    ("rmse_fine_el", f"{CONVERGED_SEGMENTS}-segment PCS: RMSE/L vs PyElastica", ".3f"),
]
FI_COLS = [
    ("integrator", "integrator", ""),
    ("dt", "dt [s]", "g"),
    ("tip_error_rel", "max tip err / L", ".4f"),
    ("sorogym_s", "sorogym [s]", ".3f"),
    ("pyelastica_s", "PyElastica [s]", ".2f"),
    ("speedup_vs_pyelastica", "x PyElastica", ".3g"),
]

TREE_COLS = [
    ("robot", "robot", ""),
    ("dtype", "dtype", ""),
    ("num_bodies", "bodies", "d"),
    ("nq", "nq", "d"),
    ("num_dofs", "n", "d"),
    ("call_us", "per call [us]", ".1f"),
    ("loop_us", "in loop [us]", ".1f"),
    ("rollout_s", "rollout [s]", ".3f"),
    ("rollout_compile_s", "rollout compile [s]", ".1f"),
]
SCALING_COLS = [
    ("arms", "arms", "d"),
    ("num_bodies", "bodies", "d"),
    ("num_dofs", "n", "d"),
    ("call_us", "per call [us]", ".1f"),
    ("loop_us", "in loop [us]", ".1f"),
    ("loop_us_per_arm", "in loop per arm [us]", ".1f"),
    ("loop_us_per_dof", "in loop per DOF [us]", ".2f"),
    ("loop_vs_1_arm", "time / 1-arm time", ".2f"),
    ("dofs_vs_1_arm", "n / 1-arm n", ".2f"),
]
FLOATING_COLS = FD_COLS[:2] + [("num_dofs", "n", "d")] + FD_COLS[2:]


def converged_of(ro_rows):
    """The segment count of the rows' converged-PCS runs (:data:`CONVERGED_SEGMENTS` if none)."""
    return next((r["converged_segments"] for r in ro_rows if r.get("converged_segments")), CONVERGED_SEGMENTS)


def rollout_cols(ro_rows):
    """:data:`RO_COLS`, the converged-PCS column named by the segment count of ``ro_rows``."""
    head = f"{converged_of(ro_rows)}-segment PCS: RMSE/L vs PyElastica"
    return [("rmse_fine_el", head, c[2]) if c[0] == "rmse_fine_el" else c for c in RO_COLS]


def flat_rollout(row):
    agr = row["tip_agreement"]
    fine = next((v for k, v in agr.items() if k.endswith("seg_vs_pyelastica")), None)
    return {
        **row,
        "rmse_mx": agr["sorogym_vs_soromox"]["rmse_over_L"],
        "rmse_el": agr["sorogym_vs_pyelastica"]["rmse_over_L"],
        "max_el": agr["sorogym_vs_pyelastica"]["max_m"],
        "rmse_fine_el": None if fine is None else fine["rmse_over_L"],
    }


def table_cells(rows, cols):
    return [c[1] for c in cols], [[fmt(r.get(c[0]), c[2]) for c in cols] for r in rows]


def text_table(title, rows, cols):
    head, body = table_cells(rows, cols)
    w = [max(len(x) for x in col) for col in zip(head, *body, strict=True)]
    lines = [title, "  ".join(h.ljust(k) for h, k in zip(head, w, strict=True)), "  ".join("-" * k for k in w)]
    lines += [
        "  ".join(c.rjust(k) if i else c.ljust(k) for i, (c, k) in enumerate(zip(r, w, strict=True))) for r in body
    ]
    return "\n".join(lines)


def markdown_table(rows, cols):
    head, body = table_cells(rows, cols)
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in body])


def meta(quick, notes, **extra):
    return run_metadata(
        quick, ("jax", "jaxlib", "diffrax", "equinox", "soromox", "pyelastica", "numba"), notes, **extra
    )


def write_markdown(path, info, fd, gvs, arti, ro_rows, fast, t_beam, floor=None):
    md = [
        f"CPU: {info['cpu']['model']} ({info['cpu']['cpu_count']} cores), jax {info['versions']['jax']}, "
        f"float64, git {str(info['git_revision'])[:8]}.",
        "",
    ]
    fd_note = (
        "per call (jitted single-state call, incl. Python dispatch) and per evaluation inside a "
        f"compiled loop of {LOOP_EVALS} chained evaluations (as in a rollout)"
    )
    if fd:
        md += [f"**Forward dynamics, PCS**: {fd_note}", "", markdown_table(fd, FD_COLS), ""]
    if floor:
        md += [
            f"Dispatch floor of a jitted call (same run): {floor['inline_us']:.1f} us for a one-kernel "
            f"program under XLA's 1000-flop 'cheap' count (run on the calling thread), "
            f"{floor['dispatched_us']:.1f} us for one kernel above it (handed to a worker thread).",
            "",
        ]
    if gvs:
        md += [
            f"**Forward dynamics, GVS** (`gvs_model`, N = links, zero-order bases, 5 Gauss points): {fd_note}",
            "",
            markdown_table(gvs, FD_COLS),
            "",
        ]
    if arti:
        md += [
            f"**Forward dynamics, articulated chain** (`chain_model`, N = links of one random revolute chain, "
            f"seed {CHAIN_SEED}, random joint torques; sorogym and soromox agree to {ARTICULATED_RTOL:g} "
            f"relative, asserted before timing): {fd_note}",
            "",
            markdown_table(arti, FD_COLS),
            "",
        ]
    if ro_rows:
        md += [
            f"**The paper's Table IV cases (0.6 m beam as 2 PCS segments or 2 GVS links), {t_beam} s: "
            f"Tsit5 dt = 1e-4 (PCS), Tsit5 with a PID controller (GVS; {_gvs_steps_text()})**",
            "",
            markdown_table(ro_rows, rollout_cols(ro_rows)),
            "",
        ]
    if fast:
        md += ["**Fast integrators (largest dt with tip error <= 1 % of L)**", "", markdown_table(fast, FI_COLS), ""]
    path.write_text("\n".join(md))
    print(f"wrote {path}")


def write_tree_markdown(path, info, trees):
    """The tree section's three tables (same run)."""
    md = [
        f"CPU: {info['cpu']['model']} ({info['cpu']['cpu_count']} cores), jax {info['versions']['jax']}, "
        f"git {str(info['git_revision'])[:8]}, load average {trees['loadavg_start'][0]:.1f} at the start and "
        f"{trees['loadavg_end'][0]:.1f} at the end; section wall time {trees['wall_s']:.0f} s.",
        "",
        f"**Named trees** (default builds): forward dynamics per call (jitted single-state call, incl. "
        f"dispatch) and per evaluation inside a compiled loop of {LOOP_EVALS} chained evaluations, all rows side "
        f"by side; rollout: {trees['settings']['rollout']} (median after compilation).",
        "",
        markdown_table(trees["robots"], TREE_COLS),
        "",
        f"**Scaling**: the brittle star with {', '.join(str(r['arms']) for r in trees['scaling'])} arms, float64, "
        "side by side.",
        "",
        markdown_table(trees["scaling"], SCALING_COLS),
        "",
        "**Free-floating PCS rod against soromox** (float64, all six strains, no hub mass; soromox "
        "`PCS.from_links(..., floating_base=True)`; speedup = soromox time / sorogym time; rel. diff: "
        "accelerations mapped to one convention).",
        "",
        markdown_table(trees["floating_rod_vs_soromox"], FLOATING_COLS),
        "",
    ]
    path.write_text("\n".join(md))
    print(f"wrote {path}")


def _gvs_steps_text():
    return ", ".join(f"{k} = {v:g}" for k, v in GVS_STEP_TOLERANCES.items())


def write_table_iv(path, info, rollouts, ro_rows, t_beam, source):
    """The rollout section as the comparison report's Table IV (same run as models_cpu.json)."""
    cols = [
        ("case", "case", ""),
        ("model", "model", ""),
        ("num_dofs", "n", "d"),
        ("sorogym_s", "sorogym [s]", ".2f"),
        ("soromox_s", "soromox [s]", ".2f"),
        ("pyelastica_s", "PyElastica [s]", ".2f"),
        ("rmse_mx", "RMSE/L sorogym-soromox", ".1e"),
        ("rmse_el", "RMSE/L sorogym-PyElastica", ".3f"),
        ("max_el", "max dist. to PyElastica [m]", ".3f"),
        ("rmse_fine_el", f"RMSE/L {converged_of(ro_rows)}-seg PCS-PyElastica", ".3f"),
    ]
    finals = [
        {
            "case": r["case"],
            **{
                k: "[" + ", ".join(f"{x:.3f}" for x in r[f"final_tip_{k}"]) + "]"
                for k in ("sorogym", "soromox", "pyelastica")
            },
        }
        for r in rollouts
    ]
    fcols = [
        ("case", "case", ""),
        ("sorogym", "sorogym", ""),
        ("soromox", "soromox", ""),
        ("pyelastica", "PyElastica", ""),
    ]
    md = [
        f"# Table IV: {t_beam:g} s rollouts of the paper's beam on three libraries, one run",
        "",
        f"{info['date']}, CPU: {info['cpu']['model']} ({info['cpu']['cpu_count']} cores), float64, "
        f"git {str(info['git_revision'])[:8]}. Written by `scripts/bench_models.py` (the rollout section "
        f"of `{source}`). sorogym and soromox: 2 PCS segments on Tsit5, dt = 1e-4, or 2 GVS "
        f"links (all six strains, quadratic bending: {GVS_BEAM_ORDERS}) on Tsit5 with a PID controller "
        f"({_gvs_steps_text()}, first step 1e-4); "
        f"PyElastica: {ELASTICA_ELEMENTS} elements, PositionVerlet dt = {ELASTICA_DT:g}. Times are medians "
        "after compilation. Tip agreement over the samples every 10 ms (no time alignment).",
        "",
        markdown_table(ro_rows, cols),
        "",
        "Final tip positions [m] (world frame):",
        "",
        markdown_table(finals, fcols),
        "",
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(md))
    print(f"wrote {path}")


def run_notes(mode, s):
    """The ``meta.notes`` of a run in ``mode`` (a key of :data:`MODES`) with settings ``s``."""
    converged = s["converged_segments"]
    mode_note = {
        "full": "",
        "quick": f" [quick mode: cases {list(QUICK_ROLLOUT_CASES)}, one timed call each, no converged-PCS "
        "runs; default sections pcs, rollouts, fast]",
        "smoke": f" [smoke mode: a test that every section runs, at the smallest sizes, not a benchmark: "
        f"cases {list(s['rollout_cases'])}, one timed call each, {converged}-segment converged-PCS run]",
    }[mode]
    fd_sizes = {
        "full": "",
        "quick": "segments (1, 4) only; ",
        "smoke": f"PCS segments {s['pcs_segments']}, GVS links {s['gvs_links']}, chain links {s['chain_links']} only; ",
    }[mode]
    return [
        f"beam horizon {s['t_beam']} s (paper: 3 s)" + mode_note,
        f"fast-integrator horizon {s['t_fast']} s; candidates {s['candidates']}; pass = max tip error <= 1% of "
        f"L vs Tsit5 dt={s['ref_dt']:g}; dt is traced (one compile per integrator, max_steps sized for "
        "the reference); search from the largest dt, stopping at the first pass",
        "forward dynamics: "
        + fd_sizes
        + f"jitted single-state calls incl. dispatch, alternating blocks of {s['calls']} calls, "
        f"{s['blocks']} blocks, medians; in-loop: {LOOP_EVALS} chained evaluations in one "
        "compiled fori_loop, alternating blocks of 2 loops, same number of blocks; rollouts: median of interleaved "
        "post-compile calls, "
        "compile_s = first call - median",
        "soromox rollout_to integrates one extra solver step past t1; saves are at the same times",
        f"PyElastica: {ELASTICA_ELEMENTS} elements, PositionVerlet dt={ELASTICA_DT:g} (4e-4 diverges, "
        "3e-4 stable), OneEndFixedBC, GravityForces with the case's load, tendons as eyelet loads "
        "(sorogym.envs.elastica.TendonRod), AnalyticalLinearDamper with the mass-proportional rate "
        "matched to the decay of the PCS model's slowest bending mode (matched_damping_rate); the "
        "PCS damping (Kelvin-Voigt, stiffness-proportional for nu = 0.5) damps higher modes more",
        "Table IV cases (App. B-A): beam_planar_pcs load rho A g along +x (planar model in the x-z "
        "plane); beam_spatial_pcs along +x and +y; tendon_spatial_pcs: load along +z and two straight "
        f"tendons at 2 cm, 90 deg apart, {TENDON_TENSION:g} N each (tension not stated in the paper); "
        f"the _gvs cases run the same scenarios on two GVS links (all six strains, orders {GVS_BEAM_ORDERS}, "
        f"5 Gauss points) with Tsit5 and a PID controller ({_gvs_steps_text()}, first step 1e-4, both "
        "libraries): their fastest damped mode (4.6e4 1/s) is past fixed-step Tsit5's stability at 1e-4",
        f"the {converged or CONVERGED_SEGMENTS}-segment PCS column is one untimed sorogym rollout per case: it "
        "separates the 2-segment discretisation from the PCS-vs-rod modelling gap",
        "machine is shared; other processes may have been running (see loadavg)",
    ]


SECTIONS = ("pcs", "gvs", "articulated", "rollouts", "fast", "trees")
QUICK_SECTIONS = ("pcs", "rollouts", "fast")  # the PCS core; GVS, the chain and the trees on request
QUICK_ROLLOUT_CASES = ("beam_planar_pcs", "beam_spatial_pcs")
# The sizes of each mode. sections: run by default; blocks, calls: forward-dynamics timing
# (blocks of calls jitted calls; floor_calls for the dispatch floor); reps: timed repeats of each
# rollout (PyElastica included), fast_reps of each fast integrator; pcs_segments, gvs_links,
# chain_links: the forward-dynamics rows; t_beam [s]: Table IV horizon; converged_segments: the
# finer PCS run per case (None: none); t_fast [s], candidates [s], ref_dt [s]: fast integrators;
# tree_*: the tree section (horizon [s], rollout repeats, robots, dtypes, arm counts, free-rod
# segments, calls per block).
MODES = {
    "full": dict(
        sections=SECTIONS,
        blocks=30,
        calls=100,
        floor_calls=200,
        reps=3,
        fast_reps=3,
        pcs_segments=(1, 2, 4),
        gvs_links=(1, 2, 4, 8),
        chain_links=(1, 2, 4, 8, 16),
        t_beam=3.0,
        rollout_cases=tuple(ROLLOUT_CASES),
        converged_segments=CONVERGED_SEGMENTS,
        t_fast=3.0,
        # 5e-5 and 2e-5 for the explicit schemes: the beam's fastest damping rate is ~2.5e4 1/s.
        candidates=[2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2],
        ref_dt=1e-5,
        tree_horizon=1.0,
        tree_reps=3,
        tree_robots=tuple(TREE_ROBOTS),
        tree_dtypes=tuple(TREE_DTYPES),
        tree_arms=TREE_ARMS,
        tree_rod_segments=(2, 4),
        tree_calls=50,
    ),
    "quick": dict(
        sections=QUICK_SECTIONS,
        blocks=6,
        calls=100,
        floor_calls=200,
        reps=1,
        fast_reps=3,
        pcs_segments=(1, 4),
        gvs_links=(1, 4),
        chain_links=(1, 4, 16),
        t_beam=0.3,
        rollout_cases=QUICK_ROLLOUT_CASES,
        converged_segments=None,
        t_fast=0.1,
        candidates=[5e-5, 1e-4, 1e-3, 1e-2],
        ref_dt=1e-5,
        tree_horizon=0.3,
        tree_reps=1,
        tree_robots=tuple(TREE_ROBOTS),
        tree_dtypes=tuple(TREE_DTYPES),
        tree_arms=(1, 5, 10),
        tree_rod_segments=(2,),
        tree_calls=50,
    ),
    # Every code path once: the tendon case has an input (and PyElastica tendons), 1e-2 s fails
    # the explicit schemes' 1 % test before 5e-5 s passes, the gripper has a rigid link.
    "smoke": dict(
        sections=SECTIONS,
        blocks=1,
        calls=10,
        floor_calls=10,
        reps=1,
        fast_reps=1,
        pcs_segments=(1,),
        gvs_links=(1,),
        chain_links=(1,),
        t_beam=0.02,
        rollout_cases=("tendon_spatial_pcs",),
        converged_segments=3,
        t_fast=0.02,
        candidates=[5e-5, 1e-2],
        ref_dt=1e-5,
        tree_horizon=0.01,
        tree_reps=1,
        tree_robots=("gripper",),
        tree_dtypes=("float32",),
        tree_arms=(1,),
        tree_rod_segments=(1,),
        tree_calls=10,
    ),
}
STEM_SUFFIX = {"full": "", "quick": "_quick", "smoke": "_smoke"}


def main(argv=None):
    """Run the benchmark with command-line arguments ``argv`` (default: ``sys.argv[1:]``)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = ap.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="short horizons and few repeats")
    size.add_argument(
        "--smoke",
        action="store_true",
        help="every section's code once at the smallest sizes (a test, not a benchmark); files *_smoke.*",
    )
    ap.add_argument(
        "--out",
        type=Path,
        default=None,
        help="folder of every file written, table_iv.md included (default: results/bench, and "
        "results/comparison for table_iv.md; with --smoke: a new temporary folder)",
    )
    ap.add_argument(
        "--sections",
        nargs="+",
        choices=SECTIONS,
        default=None,
        help="run only these sections (default: all; with --quick: "
        f"{' '.join(QUICK_SECTIONS)}); a partial run writes "
        "models_cpu_<sections>.{json,md} and leaves the full-run files alone; trees always writes "
        "trees_cpu[_quick|_smoke].json (and trees_cpu[_smoke].md)",
    )
    args = ap.parse_args(argv)
    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    quick, s = mode == "quick", MODES[mode]
    chosen = args.sections or s["sections"]
    sections = [x for x in SECTIONS if x in chosen]
    t_beam, t_fast, blocks = s["t_beam"], s["t_fast"], s["blocks"]
    if args.out is not None:
        out_dir, table_iv_dir = args.out, args.out
    elif mode == "smoke":
        out_dir = table_iv_dir = Path(tempfile.mkdtemp(prefix="bench_models_smoke_"))
    else:
        out_dir, table_iv_dir = ROOT / "results" / "bench", ROOT / "results" / "comparison"
    notes = run_notes(mode, s) + [f"sections: {sections}"]
    info = meta(mode != "full", notes, smoke=mode == "smoke")
    t_start = time.perf_counter()
    fd, gvs, arti, rollouts, fast = [], [], [], [], []
    floor = trees = None
    if "pcs" in sections:
        print("[pcs] forward dynamics", flush=True)
        fd = bench_forward_dynamics(blocks=blocks, segments=s["pcs_segments"], calls=s["calls"])
        floor = bench_dispatch_floor(blocks=blocks, calls=s["floor_calls"])
    if "gvs" in sections:
        print(f"[gvs] forward dynamics ({time.perf_counter() - t_start:.0f} s elapsed)", flush=True)
        gvs = bench_gvs_forward_dynamics(blocks=blocks, links=s["gvs_links"], calls=s["calls"])
    if "articulated" in sections:
        print(f"[articulated] forward dynamics ({time.perf_counter() - t_start:.0f} s elapsed)", flush=True)
        arti = bench_articulated_forward_dynamics(blocks=blocks, links=s["chain_links"], calls=s["calls"])
    if "rollouts" in sections:
        print(f"[rollouts] Table IV ({time.perf_counter() - t_start:.0f} s elapsed)", flush=True)
        rollouts = bench_rollouts(
            t_beam,
            reps=s["reps"],
            elastica_reps=s["reps"],
            converged_segments=s["converged_segments"],
            cases=s["rollout_cases"],
        )
    if "fast" in sections:
        print(f"[fast] fast integrators ({time.perf_counter() - t_start:.0f} s elapsed)", flush=True)
        spatial = [r for r in rollouts if r["case"] == "beam_spatial_pcs"]
        el_fast = (
            spatial[0]["pyelastica_s"]
            if spatial and t_fast == t_beam
            else elastica_rollout("beam_spatial_pcs", t_fast)[0]
        )
        fast = bench_fast_integrator(t_fast, s["candidates"], s["ref_dt"], reps=s["fast_reps"], elastica_s=el_fast)
    if "trees" in sections:
        print(f"[trees] body trees and floating bases ({time.perf_counter() - t_start:.0f} s elapsed)", flush=True)
        trees = bench_trees(
            blocks,
            calls=s["tree_calls"],
            horizon=s["tree_horizon"],
            reps=s["tree_reps"],
            robots=s["tree_robots"],
            dtypes=s["tree_dtypes"],
            arms=s["tree_arms"],
            rod_segments=s["tree_rod_segments"],
        )
    info["loadavg_end"] = list(os.getloadavg())
    info["total_wall_s"] = time.perf_counter() - t_start
    summary = {}
    for key, rows in (("forward_dynamics", fd), ("gvs_forward_dynamics", gvs), ("articulated_forward_dynamics", arti)):
        if rows:
            summary |= {
                f"median_speedup_{key}": float(np.median([r["speedup"] for r in rows])),
                f"min_speedup_{key}": float(np.min([r["speedup"] for r in rows])),
                f"median_speedup_{key}_loop": float(np.median([r["speedup_loop"] for r in rows])),
                f"min_speedup_{key}_loop": float(np.min([r["speedup_loop"] for r in rows])),
            }
    if rollouts:
        summary["rollout_speedup_vs_soromox"] = {r["case"]: r["speedup_vs_soromox"] for r in rollouts}
    result = {
        "meta": info,
        "forward_dynamics": fd,
        "dispatch_floor": floor,
        "gvs_forward_dynamics": gvs,
        "articulated_forward_dynamics": arti,
        "rollouts": rollouts,
        "fast_integrator": fast,
        "summary": summary,
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    suffix = STEM_SUFFIX[mode]
    if trees is not None:  # its own file, whatever else ran
        tree_path = out_dir / f"trees_cpu{suffix}.json"
        tree_path.write_text(json.dumps({"meta": info, **trees}, indent=2) + "\n")
    # the model files, named by the other sections
    model_sections = [x for x in sections if x != "trees"]
    default = [x for x in s["sections"] if x != "trees"]
    stem = "models_cpu" + ("" if model_sections == default else "_" + "_".join(model_sections)) + suffix
    path = out_dir / f"{stem}.json"
    if model_sections:
        path.write_text(json.dumps(result, indent=2) + "\n")
    ro_rows = [flat_rollout(r) for r in rollouts]
    print()
    if fd:
        print(
            text_table("Forward dynamics, PCS, per call and per in-loop evaluation (medians)", fd, FD_COLS), end="\n\n"
        )
    if gvs:
        print(text_table("Forward dynamics, GVS (N = links, zero-order bases)", gvs, FD_COLS), end="\n\n")
    if arti:
        print(text_table("Forward dynamics, articulated chain (N = links)", arti, FD_COLS), end="\n\n")
    if ro_rows:
        print(text_table(f"Table IV rollouts, Tsit5 dt=1e-4, {t_beam} s", ro_rows, rollout_cols(ro_rows)), end="\n\n")
    if fast:
        print(
            text_table(f"Fast integrators, spatial beam, {t_fast} s (largest dt with tip err <= 1% L)", fast, FI_COLS),
            end="\n\n",
        )
    if trees is not None:
        print(text_table("Body trees: forward dynamics and rollouts", trees["robots"], TREE_COLS), end="\n\n")
        print(text_table("Brittle star scaling (float64)", trees["scaling"], SCALING_COLS), end="\n\n")
        print(
            text_table("Free PCS rod, sorogym vs soromox (float64)", trees["floating_rod_vs_soromox"], FLOATING_COLS),
            end="\n\n",
        )
        print(f"wrote {tree_path}")
        if not quick:
            write_tree_markdown(out_dir / f"trees_cpu{suffix}.md", info, trees)
    if not model_sections:
        return
    print("summary: " + json.dumps(summary, indent=1) + f"\nwrote {path}")
    if not quick:
        write_markdown(out_dir / f"{stem}.md", info, fd, gvs, arti, ro_rows, fast, t_beam, floor)
        if rollouts:
            resolved = path.resolve()
            source = resolved.relative_to(ROOT) if resolved.is_relative_to(ROOT) else resolved
            write_table_iv(table_iv_dir / "table_iv.md", info, rollouts, ro_rows, t_beam, source)


if __name__ == "__main__":
    main()
