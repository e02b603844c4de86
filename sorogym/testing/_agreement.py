"""Trajectory agreement metrics of the SoRoMoX paper's Table V."""

from __future__ import annotations

import numpy as np


def tip_agreement(a, b, length: float) -> dict:
    """Equal-time agreement of two tip trajectories ``a``, ``b`` ``(T, 3)`` [m] sampled at the
    same instants (no time or phase alignment): with ``d_k = |a_k - b_k|``, the mean
    ``mean_m``, root mean square ``rmse_m``, ``rmse_over_L`` (RMSE over the robot length
    ``length`` [m]) and maximum ``max_m`` of ``d``."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 2 or a.shape[-1] != 3:
        raise ValueError(f"tip_agreement: expected two (T, 3) arrays, got {a.shape} and {b.shape}")
    d = np.linalg.norm(a - b, axis=-1)
    rmse = float(np.sqrt(np.mean(d**2)))
    return {"mean_m": float(np.mean(d)), "rmse_m": rmse, "rmse_over_L": rmse / float(length), "max_m": float(np.max(d))}
