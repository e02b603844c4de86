#!/usr/bin/env bash
# Environment throughput on a GPU machine (no accuracy part: that runs on CPU in float64).
#
# Run from the repository root with the virtualenv already installed (CUDA-enabled jaxlib);
# nothing is installed or downloaded:
#
#     bash scripts/gpu_check.sh                      # results in results/gpu/
#     OUT=/some/dir PYTHON=/path/to/python bash scripts/gpu_check.sh
#
# Writes to $OUT (default results/gpu): nvidia-smi.txt, jax_devices.txt and
# envs_gpu.json / envs_gpu.md from scripts/bench_envs.py (the JSON's "device" entry names
# the JAX backend and device kind, so the numbers are labelled with the hardware).
set -euo pipefail

PYTHON="${PYTHON:-.venv/bin/python}"
OUT="${OUT:-results/gpu}"
mkdir -p "$OUT"

nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1 || echo "nvidia-smi failed (exit $?)" >> "$OUT/nvidia-smi.txt"
"$PYTHON" -c 'import jax; print(jax.devices())' 2>&1 | tee "$OUT/jax_devices.txt"

"$PYTHON" scripts/bench_envs.py --device-tag gpu --num-envs 1 64 256 1024 4096 16384 65536 \
    --skip-accuracy --out "$OUT"
