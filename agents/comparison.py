"""What the scripts that evaluate and compare policies share: one table row per evaluated
policy (:func:`evaluation_row`, with each env's error metric) and the brax PPO run small
enough for their ``--quick`` modes (:data:`QUICK_PPO_OVERRIDES`)."""

from __future__ import annotations

#: The task error reported for each env (default ``goal_distance``): a tracking or
#: position error [m], StrainTracking's normalised strain error, the swing-up's tip height
#: over the length (1 = upright), the crawler's heading error [rad], the held cylinder's
#: displacement from its hold point [m].
ERROR_METRIC = {
    "InchwormCrawl-v0": "heading_error",
    "TendonTracking-v0": "tracking_error",
    "StrainTracking-v0": "tracking_error",
    "PoseTracking-v0": "position_error",
    "ParallelPlatformTracking-v0": "position_error",
    "SoftPendulumSwingUp-v0": "tip_height",
    "WrapAndHold-v0": "object_displacement",
}
#: How a row's error is displayed: ``(factor, unit)``; distances in mm by default,
#: StrainTracking's normalised error and the swing-up's height ratio without a unit.
ERROR_UNITS = {"StrainTracking-v0": (1.0, ""), "SoftPendulumSwingUp-v0": (1.0, ""), "InchwormCrawl-v0": (1.0, " rad")}


def format_error(row: dict, key: str = "error_mean") -> str:
    """``row[key]`` (an :func:`evaluation_row` error) in the env's display unit."""
    factor, unit = ERROR_UNITS.get(row["env"], (1e3, " mm"))
    return f"{factor * row[key]:.3g}{unit}"


#: Further error metrics recorded per env (mean over steps and at the end).
EXTRA_METRICS = {
    "PoseTracking-v0": ("orientation_error",),
    "ParallelPlatformTracking-v0": ("orientation_error",),
    "SnakeToGoal-v0": ("speed", "power"),
    "SwimmerToGoal-v0": ("speed", "power"),
    "SnakeOnSlope-v0": ("speed", "power"),
    "InchwormCrawl-v0": ("speed", "lateral_speed", "power"),
    "WrapAndHold-v0": ("enclosure",),
}

#: Dotted run-config overrides of a brax PPO run small enough for the tests.
QUICK_PPO_OVERRIDES = {
    "ppo.num_timesteps": 20_000,
    "ppo.num_envs": 16,
    "ppo.batch_size": 16,
    "ppo.num_minibatches": 4,
    "ppo.num_evals": 2,
    "ppo.num_eval_envs": 4,
    "eval.num_episodes": 4,
}


def evaluation_row(env_name: str, policy_name: str, result: dict, seconds: float) -> dict:
    """One table row from a :func:`sorogym.agents.evaluate.evaluate_policy` result: the
    episode count, step-wise and final success, the env's error metric (mean over steps and
    at the end, plus its :data:`EXTRA_METRICS`), the mean return, the steps to the first
    success (of the episodes that succeed), ``seconds`` (rounded to
    0.1 s) and, where the env has contact, the peak contact force [N] and the mean summed
    safety cost."""
    error = ERROR_METRIC.get(env_name, "goal_distance")
    out = {
        "env": env_name,
        "policy": policy_name,
        "episodes": result["num_episodes"],
        "success": result["success"],
        "final_success": result["final/success"],
        "error_metric": error,
        "error_mean": result[error],
        "error_final": result[f"final/{error}"],
        "return_mean": result["return_mean"],
        "steps_to_success": result.get("steps_to_success"),
        "seconds": round(seconds, 1),
    }
    for extra in EXTRA_METRICS.get(env_name, ()):
        out[f"{extra}_mean"], out[f"{extra}_final"] = result[extra], result[f"final/{extra}"]
    if "peak_contact_force" in result:
        out["peak_contact_force_max"] = result["max/peak_contact_force"]
        out["cost_mean"] = result.get("cost_mean")
    return out
