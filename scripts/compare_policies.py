"""Trained policies against the env experts: one table from the committed run folders.

For each env folder under ``results/`` (``tendon_tracking``, ``tendon_reaching``,
``contact_safe_reaching``, ``snake_to_goal``, ``inchworm_crawl``, ``swimmer_to_goal``,
``snake_on_slope``, ``brittle_star_to_goal``, ``strain_tracking``, ``pose_tracking``,
``soft_pendulum_swing_up``, ``conical_arm_reaching``) it reads the final 128-episode evaluations
(``eval.json``, all with seed 10000, so every row saw the same episodes) of

* ``ppo/``: brax PPO from scratch,
* ``bc/``, ``dagger/``: students distilled from an expert (their ``eval.json`` also holds
  the expert on the same episodes),
* ``ppo_warm/``: brax PPO warm-started from that student (``ppo.init_from``),

next to the experts and the random policy of ``results/experts.json`` (same seed and
episodes), and writes ``results/policies.json`` / ``results/policies.md`` (printed) and, where both a
cold and a warm PPO run exist, ``results/<env>/warm_start.png``: step-wise success against
env steps and wall time. Nothing is trained here; each run folder's
``config.yaml`` records the command's resolved config.

    python scripts/compare_policies.py [--results results] [--out results]

``--out`` receives ``policies.{json,md}`` and ``<env>/warm_start.png`` (a run over the
committed folders into a scratch ``--out`` is the script's smoke test: it reads no more than
it writes, so its output must equal the committed ``results/policies.json``).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

from sorogym.agents.comparison import evaluation_row, format_error

ROOT = Path(__file__).resolve().parents[1]

ENVS = {
    "tendon_tracking": "TendonTracking-v0",
    "tendon_reaching": "TendonReaching-v0",
    "contact_safe_reaching": "ContactSafeReaching-v0",
    "snake_to_goal": "SnakeToGoal-v0",
    "inchworm_crawl": "InchwormCrawl-v0",
    "swimmer_to_goal": "SwimmerToGoal-v0",
    "snake_on_slope": "SnakeOnSlope-v0",
    "brittle_star_to_goal": "BrittleStarToGoal-v0",
    "strain_tracking": "StrainTracking-v0",
    "pose_tracking": "PoseTracking-v0",
    "soft_pendulum_swing_up": "SoftPendulumSwingUp-v0",
    "conical_arm_reaching": "ConicalArmReaching-v0",
    "push_to_goal": "PushToGoal-v0",
    "wrap_and_hold": "WrapAndHold-v0",
    "two_arm_reach": "TwoArmReach-v0",
    "grasp_and_lift": "GraspAndLift-v0",
}
RUNS = ("ppo", "bc", "dagger", "ppo_warm")
LABELS = {"ppo": "ppo", "bc": "bc", "dagger": "dagger", "ppo_warm": "ppo (warm start)"}


def _row(env: str, policy: str, ev: dict) -> dict:
    """A trained run's row: the expert table's columns plus env steps and training time."""
    out = evaluation_row(env, policy, ev, 0.0)
    out.pop("seconds")  # the evaluation time of the expert table; here train_wall_s
    out.update({"env_steps": ev.get("env_steps"), "train_wall_s": ev.get("train_wall_s")})
    return out


def collect(results: Path) -> list[dict]:
    """Per env: the experts and the random policy from ``results/experts.json`` (written by
    ``scripts/evaluate_experts.py`` with the same seed and episode count), then the trained
    runs found under ``results/<env>/``."""
    experts = json.loads((results / "experts.json").read_text())
    experts = experts["rows"] if isinstance(experts, dict) else experts
    rows = []
    for folder, env in ENVS.items():
        for r in experts:
            if r["env"] == env:
                keep = (
                    "env",
                    "policy",
                    "episodes",
                    "success",
                    "final_success",
                    "error_metric",
                    "error_mean",
                    "error_final",
                    "return_mean",
                    "peak_contact_force_max",
                    "cost_mean",
                )
                rows.append({k: r[k] for k in keep if k in r})
        for run in RUNS:
            path = results / folder / run / "eval.json"
            if path.is_file():
                ev = json.loads(path.read_text())
                label = LABELS[run]
                if "expert" in ev:  # a student: name its teacher
                    label += f" of {ev['expert']['kind'].split('/', 1)[1]}"
                rows.append(_row(env, label, ev))
    return rows


def markdown(rows) -> str:
    lines = [
        "| env | policy | step success | final success | mean error | peak force [N] | cost | env steps "
        "| train wall [s] |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        force = f"{r['peak_contact_force_max']:.2f}" if "peak_contact_force_max" in r else "-"
        cost = f"{r['cost_mean']:.3f}" if r.get("cost_mean") is not None else "-"
        steps = f"{r['env_steps'] / 1e6:.2f}M" if r.get("env_steps") else "-"
        wall = f"{r['train_wall_s']:.0f}" if r.get("train_wall_s") else "-"
        lines.append(
            f"| {r['env']} | {r['policy']} | {100 * r['success']:.1f} % | {100 * r['final_success']:.1f} % | "
            f"{format_error(r)} | {force} | {cost} | {steps} | {wall} |"
        )
    return "\n".join(lines)


def _curve(path: Path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    return ([int(r["step"]) for r in rows], [float(r["wall_s"]) for r in rows], [float(r["success"]) for r in rows])


def warm_start_plot(results: Path, folder: str, out_dir: Path) -> Path | None:
    """Step-wise success of the cold and warm PPO runs (and the DAgger student) of
    ``results/<folder>`` against env steps and wall time, to ``out_dir/<folder>/warm_start.png``;
    ``None`` without both PPO runs."""
    cold, warm = results / folder / "ppo" / "metrics.csv", results / folder / "ppo_warm" / "metrics.csv"
    student = results / folder / "dagger" / "metrics.csv"
    if not (cold.is_file() and warm.is_file()):
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    curves = [("PPO from scratch", cold, "C0"), ("PPO warm-started from DAgger", warm, "C1")]
    if student.is_file():
        curves.insert(0, ("DAgger student (collected steps)", student, "C2"))
    warm_offset = 0.0
    if student.is_file():  # the warm run's clock starts after distillation
        warm_offset = json.loads((results / folder / "dagger" / "eval.json").read_text()).get("train_wall_s", 0.0)
    for label, path, color in curves:
        steps, wall, success = _curve(path)
        shift = warm_offset if "warm" in label else 0.0
        axes[0].plot([s / 1e6 for s in steps], success, "o-", color=color, label=label, ms=3)
        axes[1].plot([w + shift for w in wall], success, "o-", color=color, label=label, ms=3)
    for ax in axes:
        ax.axhline(0.9, color="0.6", lw=0.8, ls="--")
        ax.grid(alpha=0.3)
    axes[0].set(xlabel="env steps [M] (PPO's own)", ylabel="step-wise success (brax eval, 64 episodes)")
    axes[1].set(xlabel="wall time [s] (warm start: incl. distillation)")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"{ENVS[folder]}: warm start")
    fig.tight_layout()
    out = out_dir / folder / "warm_start.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=ROOT / "results", help="the run folders' root")
    parser.add_argument("--out", type=Path, default=ROOT / "results", help="where the table and plots go")
    args = parser.parse_args(argv)
    results, out_dir = args.results, args.out
    rows = collect(results)
    table = markdown(rows)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "policies.json").write_text(json.dumps(rows, indent=2))
    header = (
        "# Trained policies vs experts (128 episodes each, seed 10000: the same episodes in every row)\n\n"
        "Generated by `scripts/compare_policies.py` from the run folders under `results/<env>/`.\n\n"
    )
    (out_dir / "policies.md").write_text(header + table + "\n")
    print(table)
    for folder in ENVS:
        out = warm_start_plot(results, folder, out_dir)
        if out is not None:
            print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
