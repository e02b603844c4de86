"""Configuration helpers: frozen dataclasses with dotted overrides and validation.

Every environment module defines one frozen ``Config`` dataclass (nested dataclasses for
groups such as ``reward`` and ``reward.scales``) and a ``default_config()``. Overrides are
given as ``{"dotted.path": value}`` (or as keyword arguments to :func:`sorogym.make`, where a
double underscore may stand for the dot: ``reward__scales__bonus=0.0``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any


@dataclasses.dataclass(frozen=True)
class EpisodeConfig:
    """The fields :class:`~sorogym.env.SoroEnv` reads from every env's ``Config``.

    Each env's ``Config`` subclasses this, sets its own timing (no defaults here: the step
    sizes are chosen per robot by measured accuracy), overrides other defaults where it
    differs and adds its robot, task and ``reward`` groups.
    """

    control_dt: float  # s, one env step
    num_substeps: int  # integrator steps per env step
    episode_length_s: float  # s
    integrator: str = "trapezoid_pc"  # see sorogym.env._base.INTEGRATORS
    divergence_bound: float = 1e3  # |q|, |qd| beyond which an episode ends as diverged
    randomization: tuple = ()  # ((field, low, high), ...) multiplicative, per reset
    dtype: str = "float32"


def replace_config(config: Any, overrides: Mapping[str, Any] | None = None) -> Any:
    """Return ``config`` with dotted-path ``overrides`` applied (nested frozen dataclasses).

    Raises:
        ValueError: naming the key when a path does not exist in the config.
    """
    if not overrides:
        return config
    grouped: dict[str, dict[str, Any]] = {}
    direct: dict[str, Any] = {}
    for raw_key, value in overrides.items():
        key = raw_key.replace("__", ".")
        head, _, rest = key.partition(".")
        if not dataclasses.is_dataclass(config) or head not in {f.name for f in dataclasses.fields(config)}:
            known = sorted(f.name for f in dataclasses.fields(config)) if dataclasses.is_dataclass(config) else []
            raise ValueError(f"config override {raw_key!r}: unknown key {head!r}; known keys: {known}")
        if rest:
            grouped.setdefault(head, {})[rest] = value
        else:
            direct[head] = _coerce(getattr(config, head), value, raw_key)
    for head, sub in grouped.items():
        direct[head] = replace_config(getattr(config, head), sub)
    return dataclasses.replace(config, **direct)


def _coerce(current: Any, value: Any, key: str) -> Any:
    """Keep tuples as tuples and numbers as numbers when overriding from text or lists."""
    if dataclasses.is_dataclass(current) and isinstance(value, Mapping):
        return replace_config(current, value)
    if isinstance(current, tuple) and isinstance(value, list):
        return tuple(tuple(v) if isinstance(v, list) else v for v in value)
    if isinstance(current, bool) and not isinstance(value, bool):
        raise ValueError(f"config override {key!r}: expected a bool, got {value!r}")
    if isinstance(current, float) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def config_to_dict(config: Any) -> dict:
    """A plain nested ``dict`` of a config (for logging and JSON)."""
    return dataclasses.asdict(config)


def flatten_config(config: Any, prefix: str = "") -> dict[str, Any]:
    """``{"dotted.path": leaf}`` for every leaf of a nested config dataclass."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        key = f"{prefix}{f.name}"
        if dataclasses.is_dataclass(value):
            out.update(flatten_config(value, key + "."))
        else:
            out[key] = value
    return out


RANDOMIZABLE_FIELDS = ("length", "radius", "density", "young_modulus", "shear_modulus", "damping")


def check_randomization(ranges: tuple, fields: tuple[str, ...] = RANDOMIZABLE_FIELDS) -> None:
    """Validate domain-randomisation ranges ``((field, low, high), ...)`` (multiplicative
    factors applied per segment or joint to the model's parameter ``fields``: by default the
    :class:`~sorogym.models.RodParams` fields of :data:`RANDOMIZABLE_FIELDS`)."""
    for entry in ranges:
        if len(entry) != 3:
            raise ValueError(f"randomization: entries are (field, low, high), got {entry!r}")
        name, lo, hi = entry
        if name not in fields:
            raise ValueError(f"randomization: unknown field {name!r}; use one of {fields}")
        if not (0.0 < float(lo) <= float(hi)):
            raise ValueError(f"randomization: {name} factors must satisfy 0 < low <= high, got ({lo}, {hi})")


def check_positive(config: Any, *names: str) -> None:
    """Raise ``ValueError`` naming the field if any of ``names`` is not a positive number."""
    for name in names:
        value = getattr(config, name)
        if not (isinstance(value, (int, float)) and value > 0):
            raise ValueError(f"{name}: must be a positive number, got {value!r}")


__all__ = [
    "replace_config",
    "config_to_dict",
    "flatten_config",
    "check_randomization",
    "check_positive",
    "RANDOMIZABLE_FIELDS",
]
