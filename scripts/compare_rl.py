"""Training speed: brax PPO on ``TendonTracking-v0`` against SB3 PPO on its PyElastica twin
``TendonTracking-Elastica-v0``, on this machine, as learning curves against wall time.

Runs, in one process, one after the other (nothing else should run meanwhile):

1. **sorogym**: brax PPO with the default config (``configs/ppo/tendon_tracking.yaml``, the
   README's main job), deterministic evaluation over 64 episodes at each progress point.
2. **SB3 on the PCS env** (the sample-efficiency reference): the paper's SB3 protocol
   (2 envs, rollouts of 12,800 samples, minibatch 428, every other setting SB3's default)
   plus ``VecNormalize`` (without it SB3 settles on the do-nothing policy on this task,
   ``results/tendon_tracking/README.md``) on ``TendonTracking-v0`` through
   :class:`sorogym.env.SB3VecEnv`, 1M steps; after every rollout the step-wise success of
   that rollout and of a deterministic evaluation over 32 episodes; at most ``--pcs-minutes``.
3. **SB3 on PyElastica** (the CPU baseline): the same protocol on the Elastica twin, two
   envs in two worker processes (``SubprocVecEnv``, one per core), for at most
   ``--elastica-minutes``; the step-wise success of each rollout.

The figure of merit is the wall time until the step-wise success passes the paper's level
(91.4 %). When the PyElastica run stops before that, its time is projected as its measured
wall time per env step (rollouts and PPO updates) times the number of steps the same
protocol needed on the PCS env (run 2, deterministic evaluation); if run 2 did not get
there either, the PyElastica run's whole wall time is reported as a lower bound. The
report also gives the time every run took to reach the best success the PyElastica run
reached. Both the measured curves and any projection are reported, and the early curves of
runs 2 and 3 are shown together so the reader can judge whether the sample efficiency
carries over.

Writes ``results/comparison/rl_wallclock.{json,md,png}`` (printed).

    python scripts/compare_rl.py      # ~60 min on a 2-core CPU
"""

from __future__ import annotations

import csv
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from sorogym.agents.comparison import QUICK_PPO_OVERRIDES
from sorogym.provenance import report_parser, run_metadata, write_report

ROOT = Path(__file__).resolve().parents[1]

PAPER_SUCCESS = 0.914
ROLLOUT = 12_800
N_ENVS = 2
MINIBATCH = 428
TOTAL_STEPS = 1_000_000


def first_crossing(rows, key, level=PAPER_SUCCESS):
    """The first row whose ``key`` reaches ``level`` (or None)."""
    return next((r for r in rows if r.get(key) is not None and r[key] >= level), None)


# -- 1. brax PPO ---------------------------------------------------------------------------


def run_brax(quick: bool, workdir: Path) -> dict:
    from sorogym.agents.config import load_config
    from sorogym.agents.run import train

    overrides = {"logging.output_root": str(workdir), "logging.wandb": "disabled", "logging.video": False}
    if quick:
        overrides.update(QUICK_PPO_OVERRIDES)
    config = load_config(ROOT / "configs" / "ppo" / "tendon_tracking.yaml", overrides)
    t0 = time.perf_counter()
    run_dir = train(config, run_id="compare_rl", quiet=True)
    wall = time.perf_counter() - t0
    with open(run_dir / "metrics.csv") as f:
        rows = [
            {
                "step": int(r["step"]),
                "wall_s": float(r["wall_s"]),
                "success": float(r["success"]),
                "tracking_error": float(r["tracking_error"]),
            }
            for r in csv.DictReader(f)
        ]
    final = json.loads((run_dir / "eval.json").read_text())
    hit = first_crossing(rows, "success")
    return {
        "label": "sorogym brax PPO, TendonTracking-v0 (256 envs, JAX on CPU)",
        "curve": rows,
        "metric": "deterministic evaluation, 64 episodes",
        "train_wall_s": final["train_wall_s"],
        "total_wall_s": wall,
        "env_steps": final["env_steps"],
        "final_success": final["success"],
        "final_tracking_error": final["tracking_error"],
        "time_to_target_s": None if hit is None else hit["wall_s"],
        "steps_to_target": None if hit is None else hit["step"],
    }


# -- 2./3. SB3 PPO ----------------------------------------------------------------------------


def _sb3_model(venv, quick: bool, seed: int):
    """SB3 PPO with the paper's protocol (rollouts of 12,800 samples from 2 envs, minibatch
    428, SB3's defaults otherwise) on ``venv`` wrapped in ``VecNormalize`` (observations and
    returns): without it SB3 settles on the do-nothing policy on this task
    (``results/tendon_tracking/README.md``)."""
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import VecNormalize

    n_steps = 64 if quick else ROLLOUT // N_ENVS
    batch = 32 if quick else MINIBATCH
    venv = VecNormalize(venv, norm_obs=True, norm_reward=True, gamma=0.99)
    return PPO("MlpPolicy", venv, n_steps=n_steps, batch_size=batch, seed=seed, device="cpu", verbose=0)


def _rollout_recorder(budget_s: float | None, eval_fn=None):
    """An SB3 callback recording, per rollout, the step-wise success and tracking error of
    the rollout's steps, the wall time since training began (evaluation time excluded) and
    optionally a deterministic evaluation; it stops training after ``budget_s``."""
    from stable_baselines3.common.callbacks import BaseCallback

    class Recorder(BaseCallback):
        def __init__(self):
            super().__init__()
            self.rows, self._succ, self._err = [], [], []
            self._t0, self._eval_s = None, 0.0

        def _on_training_start(self):
            self._t0 = time.perf_counter()

        def _on_step(self):
            for info in self.locals.get("infos", []):
                self._succ.append(info.get("success", np.nan))
                self._err.append(info.get("tracking_error", np.nan))
            return budget_s is None or self._wall() < budget_s

        def _wall(self):
            return time.perf_counter() - self._t0 - self._eval_s

        def _on_rollout_end(self):
            row = {
                "step": int(self.num_timesteps),
                "wall_s": self._wall(),
                "rollout_success": float(np.nanmean(self._succ)),
                "rollout_tracking_error": float(np.nanmean(self._err)),
            }
            self._succ, self._err = [], []
            if eval_fn is not None:
                t = time.perf_counter()
                row.update(eval_fn(self.model))
                self._eval_s += time.perf_counter() - t
            self.rows.append(row)
            print(
                f"    {row['step']:8d} steps  {row['wall_s']:7.0f} s  rollout success {row['rollout_success']:.3f}"
                + (f"  eval success {row['eval_success']:.3f}" if "eval_success" in row else ""),
                flush=True,
            )

    return Recorder()


def run_sb3_pcs(quick: bool, budget_s: float) -> dict:
    import sorogym
    from sorogym.agents.evaluate import evaluate_policy
    from sorogym.agents.sb3 import sb3_policy, training_normalizer
    from sorogym.env import SB3VecEnv

    env = sorogym.make("TendonTracking-v0")
    venv = SB3VecEnv(env, num_envs=N_ENVS, seed=0)

    def evaluate(model):
        policy = sb3_policy(model, True, training_normalizer(model))
        res = evaluate_policy(env, policy, 4 if quick else 32, seed=10_000, jax_policy=False)
        return {"eval_success": float(res["success"]), "eval_tracking_error": float(res["tracking_error"])}

    model = _sb3_model(venv, quick, seed=0)
    rec = _rollout_recorder(budget_s, evaluate)
    total = 256 if quick else TOTAL_STEPS
    t0 = time.perf_counter()
    model.learn(total_timesteps=total, callback=rec)
    wall = time.perf_counter() - t0
    hit = first_crossing(rec.rows, "eval_success")
    hit_rollout = first_crossing(rec.rows, "rollout_success")
    last = rec.rows[-1]
    return {
        "label": "SB3 PPO (paper protocol + VecNormalize), TendonTracking-v0 (2 envs, JAX on CPU)",
        "curve": rec.rows,
        "metric": "rollout step-wise success; deterministic evaluation over 32 episodes",
        "env_steps": int(model.num_timesteps),
        "train_wall_s": last["wall_s"],
        "total_wall_s": wall,
        "budget_s": budget_s,
        "final_success": last["eval_success"],
        "final_tracking_error": last["eval_tracking_error"],
        "steps_to_target": None if hit is None else hit["step"],
        "time_to_target_s": None if hit is None else hit["wall_s"],
        "steps_to_target_rollout": None if hit_rollout is None else hit_rollout["step"],
    }


def _elastica_env(n_elements):
    import gymnasium

    import sorogym  # noqa: F401

    kwargs = {} if n_elements is None else {"n_elements": n_elements}
    return gymnasium.make("sorogym/TendonTracking-Elastica-v0", **kwargs)


def run_sb3_elastica(quick: bool, budget_s: float) -> dict:
    import functools

    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import SubprocVecEnv

    venv = make_vec_env(
        functools.partial(_elastica_env, 10 if quick else None),
        n_envs=N_ENVS,
        seed=0,
        vec_env_cls=SubprocVecEnv,
        vec_env_kwargs={"start_method": "spawn"},
    )
    try:
        model = _sb3_model(venv, quick, seed=0)
        rec = _rollout_recorder(budget_s)
        total = 256 if quick else TOTAL_STEPS
        t0 = time.perf_counter()
        model.learn(total_timesteps=total, callback=rec)
        wall = time.perf_counter() - t0
    finally:
        venv.close()
    steps = int(model.num_timesteps)
    last = rec.rows[-1] if rec.rows else {"wall_s": wall, "step": steps}
    hit = first_crossing(rec.rows, "rollout_success")
    return {
        "label": "SB3 PPO (paper protocol + VecNormalize), TendonTracking-Elastica-v0 "
        "(2 envs in 2 processes, PyElastica)",
        "curve": rec.rows,
        "metric": "rollout step-wise success",
        "env_steps": steps,
        "train_wall_s": last["wall_s"],
        "total_wall_s": wall,
        "budget_s": budget_s,
        "wall_per_step_s": last["wall_s"] / max(last["step"], 1),
        "final_rollout_success": last.get("rollout_success"),
        "time_to_target_s": None if hit is None else hit["wall_s"],
        "steps_to_target": None if hit is None else hit["step"],
    }


# -- report --------------------------------------------------------------------------------


def time_to_level(rows, key, level):
    """Wall time [s] at which ``key`` first reaches ``level`` (linear interpolation between
    progress points; None if never)."""
    prev = None
    for r in rows:
        v = r.get(key)
        if v is not None and v >= level:
            if prev is None or prev[key] is None:
                return r["wall_s"]
            f = (level - prev[key]) / max(v - prev[key], 1e-12)
            return prev["wall_s"] + f * (r["wall_s"] - prev["wall_s"])
        prev = r
    return None


def summarise(brax, sb3_pcs, sb3_el) -> dict:
    """Time to the paper's success level on every run: measured, or for the PyElastica run
    projected from the PCS run's steps to target, or else a lower bound (its whole budget);
    and the time each run needs to reach the best level the PyElastica run reached."""
    out = {"target_success": PAPER_SUCCESS}
    t_brax = brax["time_to_target_s"]
    el_time, how = sb3_el["time_to_target_s"], "measured"
    if el_time is None and sb3_pcs["steps_to_target"] is not None:
        el_time, how = sb3_el["wall_per_step_s"] * sb3_pcs["steps_to_target"], "projected"
    elif el_time is None:
        el_time, how = sb3_el["train_wall_s"], "lower bound (not reached)"
    out.update(
        {
            "brax_time_to_target_s": t_brax,
            "sb3_pcs_time_to_target_s": sb3_pcs["time_to_target_s"],
            "sb3_elastica_time_to_target_s": el_time,
            "sb3_elastica_time_to_target": how,
            "sb3_elastica_projected_1M_steps_s": sb3_el["wall_per_step_s"] * TOTAL_STEPS,
            "speedup_vs_sb3_elastica": None if t_brax is None else el_time / t_brax,
        }
    )
    best = max((r["rollout_success"] for r in sb3_el["curve"]), default=None)
    if best is not None:
        out["elastica_best_rollout_success"] = best
        out["time_to_elastica_best_s"] = {
            "sb3_elastica": time_to_level(sb3_el["curve"], "rollout_success", best),
            "sb3_pcs_rollouts": time_to_level(sb3_pcs["curve"], "rollout_success", best),
            "brax_eval": time_to_level(brax["curve"], "success", best),
        }
    return out


def plot(report, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    b, p, e = report["brax"], report["sb3_pcs"], report["sb3_elastica"]
    curves = (  # (run, success key, line style, colour, label)
        (b, "success", "o-", "tab:blue", "sorogym brax PPO (eval)"),
        (p, "eval_success", "-", "tab:green", "SB3 PPO on the PCS env (eval)"),
        (p, "rollout_success", ":", "tab:green", "SB3 PPO on the PCS env (rollouts)"),
        (e, "rollout_success", "s-", "tab:red", "SB3 PPO on PyElastica (rollouts)"),
    )
    for run, key, style, color, label in curves:
        ax.plot([r["wall_s"] for r in run["curve"]], [r[key] for r in run["curve"]], style, color=color, label=label)
    s = report["summary"]
    if s["sb3_elastica_time_to_target"] == "projected" and s["sb3_elastica_time_to_target_s"]:
        ax.plot(
            [s["sb3_elastica_time_to_target_s"]],
            [PAPER_SUCCESS],
            "x",
            color="tab:red",
            ms=10,
            label="SB3 on PyElastica, projected",
        )
    ax.axhline(PAPER_SUCCESS, color="0.5", lw=0.8, ls="--")
    ax.set_xscale("log")
    ax.set_xlabel("wall time [s] (this machine)")
    ax.set_ylabel("step-wise success (tip within 10 mm)")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def markdown(report) -> str:
    s, m = report["summary"], report["meta"]
    b, p, e = report["brax"], report["sb3_pcs"], report["sb3_elastica"]
    fmt = lambda x, f="{:.0f}": "-" if x is None else f.format(x)  # noqa: E731
    lines = [
        "# Training wall time: sorogym brax PPO vs SB3 PPO on PyElastica",
        "",
        f"Date {m['date']}, CPU {m['cpu']['model']} ({m['cpu']['cpu_count']} cores), no GPU. "
        "Written by `scripts/compare_rl.py`; figure `rl_wallclock.png`.",
        "",
        f"Target: step-wise success {100 * PAPER_SUCCESS:.1f} % (the paper's final PPO level).",
        "",
        "| run | env steps | training wall [s] | final success | time to target [s] | steps to target |",
        "|---|---|---|---|---|---|",
        f"| {b['label']} | {b['env_steps']} | {b['train_wall_s']:.0f} | {100 * b['final_success']:.1f} % (128 ep.) | "
        f"{fmt(b['time_to_target_s'])} | {fmt(b['steps_to_target'])} |",
        f"| {p['label']} | {p['env_steps']} (stopped after {p['budget_s'] / 60:.0f} min) | {p['train_wall_s']:.0f} | "
        f"{100 * p['final_success']:.1f} % (32 ep.) | "
        f"{fmt(p['time_to_target_s'])} | {fmt(p['steps_to_target'])} |",
        f"| {e['label']} | {e['env_steps']} (stopped after {e['budget_s'] / 60:.0f} min) | {e['train_wall_s']:.0f} | "
        f"{fmt(e['final_rollout_success'], '{:.3f}')} (rollouts) | "
        f"{fmt(s['sb3_elastica_time_to_target_s'])} ({s['sb3_elastica_time_to_target']}) | "
        f"{fmt(e['steps_to_target'])} |",
        "",
        f"* **sorogym reaches the target {fmt(s['speedup_vs_sb3_elastica'], '{:.0f}')}x sooner** in wall time than SB3 "
        f"PPO on the PyElastica twin ({s['sb3_elastica_time_to_target']}"
        + (", so the ratio is a lower bound)." if s["sb3_elastica_time_to_target"].startswith("lower") else ")."),
        f"* PyElastica with SB3: {1e3 * e['wall_per_step_s']:.1f} ms per env step including the PPO updates; the "
        f"paper's full budget of 1M steps would take {s['sb3_elastica_projected_1M_steps_s'] / 3600:.1f} h here.",
    ]
    if "time_to_elastica_best_s" in s:
        t = s["time_to_elastica_best_s"]
        lines.append(
            f"* The best rollout success the PyElastica run reached, {100 * s['elastica_best_rollout_success']:.1f} %, "
            f"took it {fmt(t['sb3_elastica'])} s; brax PPO (evaluation) passed it after {fmt(t['brax_eval'])} s, "
            f"SB3 on the PCS env (rollouts) after {fmt(t['sb3_pcs_rollouts'])} s."
        )
    lines += ["", m["notes"], ""]
    return "\n".join(lines)


def main(argv=None):
    ap = report_parser(__doc__, ROOT / "results" / "comparison")
    ap.add_argument("--elastica-minutes", type=float, default=30.0, help="wall budget of the PyElastica run")
    ap.add_argument("--pcs-minutes", type=float, default=20.0, help="wall budget of the SB3 run on the PCS env")
    args = ap.parse_args(argv)
    budget = 20.0 if args.quick else 60.0 * args.elastica_minutes
    budget_pcs = 30.0 if args.quick else 60.0 * args.pcs_minutes
    notes = (
        "Each run has the machine alone (run one after the other). brax's wall time includes its compilation "
        "and its periodic evaluations; the SB3 wall times exclude the deterministic evaluations of run 2. "
        "PyElastica twin: 40 elements, PositionVerlet at 2e-4 s (scripts/compare_backends.py), one env per "
        "core. The projection assumes SB3 needs as many steps on the rod as on the PCS env; compare the "
        "early curves in the figure."
    )
    with tempfile.TemporaryDirectory() as tmp:
        print("1. brax PPO on TendonTracking-v0", flush=True)
        brax = run_brax(args.quick, Path(tmp))
        print(f"   time to target {brax['time_to_target_s']}", flush=True)
    print("2. SB3 PPO on TendonTracking-v0", flush=True)
    sb3_pcs = run_sb3_pcs(args.quick, budget_pcs)
    print(f"3. SB3 PPO on TendonTracking-Elastica-v0 (budget {budget / 60:.0f} min)", flush=True)
    sb3_el = run_sb3_elastica(args.quick, budget)
    report = {
        "meta": run_metadata(args.quick, ("jax", "brax", "stable_baselines3", "torch", "pyelastica"), notes),
        "brax": brax,
        "sb3_pcs": sb3_pcs,
        "sb3_elastica": sb3_el,
    }
    report["summary"] = summarise(brax, sb3_pcs, sb3_el)
    write_report(args.out, "rl_wallclock", args.quick, report, markdown)
    plot(report, args.out / ("rl_wallclock_quick.png" if args.quick else "rl_wallclock.png"))
    return report


if __name__ == "__main__":
    main()
