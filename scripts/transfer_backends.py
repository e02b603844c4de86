"""Sim-to-sim transfer: policies trained on sorogym's PCS env, evaluated on the PyElastica
twin ``TendonTracking-Elastica-v0`` (a discrete Cosserat rod) and on the env they were
trained on, over the same episodes.

Policies (brax PPO, the default config of ``configs/ppo/tendon_tracking.yaml``):

* ``nominal``: the committed main-job policy ``results/tendon_tracking/ppo/checkpoint``;
* ``randomised``: the same config trained with domain randomisation of the rod's Young's
  modulus, shear modulus and damping (``RANDOMIZATION``), written to
  ``results/comparison/transfer/ppo_randomised/`` (trained here unless it exists).

Each policy acts deterministically on ``--episodes`` episodes of both Gymnasium envs with the
same seeds, hence the same target paths. Writes ``results/comparison/transfer.{json,md}``
(printed).

    python scripts/transfer_backends.py --episodes 24      # ~15 min on a 2-core CPU
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from sorogym.agents.comparison import QUICK_PPO_OVERRIDES
from sorogym.provenance import report_parser, run_metadata, write_report

ROOT = Path(__file__).resolve().parents[1]

RANDOMIZATION = [["young_modulus", 0.8, 1.25], ["shear_modulus", 0.8, 1.25], ["damping", 0.5, 2.0]]
SEED0 = 30_000


def train_randomised(dest: Path, quick: bool) -> Path:
    from sorogym.agents.config import load_config
    from sorogym.agents.run import export_run, train

    overrides = {"env_overrides": {"randomization": RANDOMIZATION}, "logging.wandb": "disabled", "logging.video": False}
    if quick:
        overrides.update(QUICK_PPO_OVERRIDES)
    with tempfile.TemporaryDirectory() as tmp:
        overrides["logging.output_root"] = tmp
        config = load_config(ROOT / "configs" / "ppo" / "tendon_tracking.yaml", overrides)
        export_run(train(config, run_id="transfer_randomised", quiet=True), dest)
    return dest / "checkpoint"


def load_policy(checkpoint: Path):
    """A jitted single-observation deterministic policy ``obs (16,) -> action (4,)``."""
    import jax
    import jax.numpy as jnp

    from sorogym.agents.checkpoint import load_ppo
    from sorogym.agents.networks import ppo_policy

    params, meta, nets = load_ppo(checkpoint)
    batched = ppo_policy(params, nets, deterministic=True)
    act = jax.jit(lambda obs: batched(obs[None], jax.random.PRNGKey(0))[0][0])
    return lambda obs: np.asarray(act(jnp.asarray(obs, jnp.float32))), meta


def run_episodes(env, policy, episodes: int) -> dict:
    """Deterministic episodes with seeds ``SEED0 + i``: step-wise success rate, mean tracking
    error [m], mean return, wall time [s]."""
    succ, err, ret = [], [], []
    t0 = time.perf_counter()
    for i in range(episodes):
        obs, _ = env.reset(seed=SEED0 + i)
        total, done = 0.0, False
        while not done:
            obs, r, terminated, truncated, info = env.step(policy(obs))
            total += r
            succ.append(info["success"])
            err.append(info["tracking_error"])
            done = terminated or truncated
        ret.append(total)
    return {
        "episodes": episodes,
        "success": float(np.mean(succ)),
        "tracking_error_m": float(np.mean(err)),
        "return_mean": float(np.mean(ret)),
        "wall_s": time.perf_counter() - t0,
    }


def markdown(report) -> str:
    m = report["meta"]
    lines = [
        "# Sim-to-sim transfer: PCS-trained policies on the PyElastica twin",
        "",
        f"Date {m['date']}, CPU {m['cpu']['model']}. Written by `scripts/transfer_backends.py`. "
        f"{report['episodes']} episodes per cell, the same seeds (same target paths) on both backends, "
        "deterministic policies.",
        "",
        "| policy | trained on | success (PCS env) | error (PCS env) [mm] | success (PyElastica) | "
        "error (PyElastica) [mm] |",
        "|---|---|---|---|---|---|",
    ]
    for r in report["rows"]:
        p, e = r["pcs"], r["elastica"]
        lines.append(
            f"| {r['policy']} | {r['trained_on']} | {100 * p['success']:.1f} % | "
            f"{1e3 * p['tracking_error_m']:.2f} | {100 * e['success']:.1f} % | {1e3 * e['tracking_error_m']:.2f} |"
        )
    lines += ["", m["notes"], ""]
    return "\n".join(lines)


def main(argv=None):
    ap = report_parser(__doc__, ROOT / "results" / "comparison")
    ap.add_argument("--episodes", type=int, default=24)
    args = ap.parse_args(argv)
    import gymnasium

    import sorogym  # noqa: F401

    episodes = 2 if args.quick else args.episodes
    args.out.mkdir(parents=True, exist_ok=True)
    rand_dir = args.out / "transfer" / "ppo_randomised"
    nominal = ROOT / "results" / "tendon_tracking" / "ppo" / "checkpoint"
    if args.quick or not (rand_dir / "checkpoint").exists():
        print("training the randomised policy", flush=True)
        train_randomised(rand_dir, args.quick)
    policies = {
        "nominal": (nominal, "TendonTracking-v0, nominal parameters"),
        "randomised": (rand_dir / "checkpoint", "TendonTracking-v0, E, G x U(0.8, 1.25), damping x U(0.5, 2)"),
    }
    pcs = gymnasium.make("sorogym/TendonTracking-v0")
    rod = gymnasium.make("sorogym/TendonTracking-Elastica-v0", **({"n_elements": 10} if args.quick else {}))
    rows = []
    for name, (ckpt, trained_on) in policies.items():
        policy, meta = load_policy(ckpt)
        row = {
            "policy": name,
            "checkpoint": str(ckpt.relative_to(ROOT)) if ckpt.is_relative_to(ROOT) else str(ckpt),
            "trained_on": trained_on,
            "env_steps": meta.get("step"),
            "pcs": run_episodes(pcs, policy, episodes),
            "elastica": run_episodes(rod, policy, episodes),
        }
        rows.append(row)
        print(
            f"  {name}: PCS success {row['pcs']['success']:.3f}, PyElastica success {row['elastica']['success']:.3f}",
            flush=True,
        )
    notes = (
        "The PCS env is the one the policies were trained on (float32, 5 trapezoid substeps per 15 Hz step); the "
        "twin is a 40-element PyElastica rod with the same parameters, tendons and task "
        "(results/comparison/backend_fidelity.md lists how the two backends differ under open-loop inputs)."
    )
    report = {
        "meta": run_metadata(args.quick, ("jax", "brax", "pyelastica"), notes),
        "episodes": episodes,
        "seed0": SEED0,
        "rows": rows,
    }
    write_report(args.out, "transfer", args.quick, report, markdown)
    return report


if __name__ == "__main__":
    main()
