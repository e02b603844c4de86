#!/usr/bin/env bash
# Environment throughput on a GPU machine (no accuracy part: that runs on CPU in float64).
#
# Run from the repository root with the virtualenv already installed with the CUDA jaxlib
# (docs/getting-started.md, "On a GPU"), e.g. before the machine goes offline:
#
#     python3 -m venv .venv && .venv/bin/pip install -c constraints.txt -c constraints-cuda12.txt -e ".[dev,cuda12]"
#
# The script itself installs and downloads nothing:
#
#     bash scripts/gpu_check.sh                      # results in results/gpu/
#     OUT=/some/dir PYTHON=/path/to/python bash scripts/gpu_check.sh
#
# Writes to $OUT (default results/gpu): nvidia-smi.txt, jax_devices.txt and
# envs_gpu.json / envs_gpu.md from scripts/bench_envs.py (the JSON's "device" entry names
# the JAX backend and device kind, so the numbers are labelled with the hardware), and a PPO
# training run on TendonTracking (tendon_tracking_ppo/: metrics.csv with wall time per
# progress point, eval.json, curve.png, the checkpoint), the planning benchmark
# (planning_gpu.json / .md: CR-Solver's IK, path-following and trajectory protocols)
# and short PPO runs on the locomotion and manipulation envs (snake_to_goal_ppo/,
# inchworm_crawl_ppo/, swimmer_to_goal_ppo/, brittle_star_to_goal_ppo/, push_to_goal_ppo/,
# wrap_and_hold_ppo/, two_arm_reach_ppo/, grasp_and_lift_ppo/).
set -euo pipefail

PYTHON="${PYTHON:-.venv/bin/python}"
OUT="${OUT:-results/gpu}"
mkdir -p "$OUT"

nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1 || echo "nvidia-smi failed (exit $?)" >> "$OUT/nvidia-smi.txt"
"$PYTHON" -c 'import jax; print(jax.devices())' 2>&1 | tee "$OUT/jax_devices.txt"

"$PYTHON" scripts/bench_envs.py --device-tag gpu --num-envs 1 64 256 1024 4096 16384 65536 \
    --skip-accuracy --out "$OUT"

# Batched IK / path following / trajectory planning (CR-Solver on an RTX 4090: 0.46 s for
# 1000 IK targets, 0.08-0.12 s per path).
"$PYTHON" scripts/bench_planning.py --device-tag gpu --out "$OUT" 2>&1 | tail -n 40 | tee "$OUT/planning.txt"

# Time to 90 % step-wise success on TendonTracking with brax PPO on the GPU: the default
# config with more parallel envs (the trainer uses every local device through brax's pmap).
# Progress points every ~0.4M steps record wall time and success in metrics.csv.
"$PYTHON" -m sorogym train configs/ppo/tendon_tracking.yaml ppo.num_envs=2048 ppo.batch_size=512 \
    ppo.num_minibatches=8 ppo.num_timesteps=8000000 ppo.num_evals=21 logging.wandb=disabled \
    "logging.output_root=$OUT/runs" --run-id gpu-ppo --export "$OUT/tendon_tracking_ppo" --quiet \
    2>&1 | tail -n 20 | tee "$OUT/train_ppo.txt"

# Short PPO runs on the locomotion and manipulation envs with many parallel envs: the speed of
# their implicit loads (ground friction, Newton-corrected stick-slip, resistive-force drag,
# the objects' table friction and arm contact) at scale.
for task in snake_to_goal inchworm_crawl swimmer_to_goal brittle_star_to_goal push_to_goal wrap_and_hold two_arm_reach grasp_and_lift; do
    "$PYTHON" -m sorogym train "configs/ppo/$task.yaml" ppo.num_envs=2048 ppo.batch_size=512 \
        ppo.num_minibatches=8 ppo.num_timesteps=4000000 ppo.num_evals=11 logging.wandb=disabled \
        "logging.output_root=$OUT/runs" --run-id "gpu-$task" --export "$OUT/${task}_ppo" --quiet \
        2>&1 | tail -n 20 | tee "$OUT/train_$task.txt"
done
