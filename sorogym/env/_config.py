"""Configuration helpers: frozen dataclasses with dotted overrides and validation.

Every environment module defines one frozen ``Config`` dataclass (nested dataclasses for
groups such as ``reward`` and ``reward.scales``) and a ``default_config()``. Overrides are
given as ``{"dotted.path": value}`` (or as keyword arguments to :func:`sorogym.make`, where a
double underscore may stand for the dot: ``reward__scales__bonus=0.0``).
:func:`replace_config` applies them, to env configs and to the agents' run configs alike.
"""

from __future__ import annotations

import contextlib
import dataclasses
import numbers
import types
import typing
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
    integrator: str = "trapezoid_pc"  # a name of sorogym.sim.FIXED_STEP_SCHEMES
    line_load_iterations: int = 0  # Newton corrections of a line load (friction) per substep
    theta: float = 0.5  # stiff linear forces at theta of the step: 0.5 trapezoidal, up to 1 (damps unresolved modes)
    divergence_bound: float = 1e3  # |q|, |qd| beyond which an episode ends as diverged
    randomization: tuple = ()  # ((field, low, high), ...) multiplicative, per reset
    dtype: str = "float32"


def replace_config(config: Any, overrides: Mapping[str, Any] | None = None, prefix: str = "") -> Any:
    """Return the frozen dataclass ``config`` with ``overrides`` applied: dotted paths
    (``"reward.scales.success"`` or ``reward__scales__success``) to values, or a mapping for a
    nested dataclass, applied into it the same way. Values are checked against the field
    annotations and converted as YAML or a command line gives them: lists to tuples, ints to
    floats, numeric strings to floats (YAML 1.1 reads ``1e-3`` as a string); ``bool`` takes
    true/false only, ``X | None`` None or an ``X``. ``prefix`` starts the keys in errors.

    Raises:
        ValueError: naming the full key of an unknown field or a bad value.
    """
    if not overrides:
        return config
    names, hints = {f.name for f in dataclasses.fields(config)}, typing.get_type_hints(type(config))
    grouped: dict[str, dict[str, Any]] = {}
    direct: dict[str, Any] = {}
    for raw_key, value in overrides.items():
        head, _, rest = raw_key.replace("__", ".").partition(".")
        key, current = prefix + head, getattr(config, head, None)
        if head not in names:
            raise ValueError(
                f"unknown config key {prefix + raw_key!r}; valid keys under "
                f"{prefix.rstrip('.') or 'the top level'}: {sorted(names)}"
            )
        if dataclasses.is_dataclass(current) and (rest or isinstance(value, Mapping)):
            grouped.setdefault(head, {}).update({rest: value} if rest else value)
        elif rest:
            raise ValueError(f"config key {prefix + raw_key!r}: {key!r} is not a group of settings")
        elif dataclasses.is_dataclass(current) and not isinstance(value, type(current)):
            raise ValueError(f"{key}: expected a mapping, got {value!r}")
        else:
            direct[head] = _coerce(value, hints[head], key)
    for head, sub in grouped.items():
        direct[head] = replace_config(getattr(config, head), sub, f"{prefix}{head}.")
    return dataclasses.replace(config, **direct)


def _coerce(value: Any, annotation: Any, key: str) -> Any:
    """``value`` checked and converted for a field annotated ``annotation``."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        return _coerce(value, next(a for a in args if a is not type(None)), key)
    if annotation is tuple or origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"{key}: expected a list, got {value!r}")
        if not args:  # a bare tuple: nested lists become tuples too
            return tuple(_coerce(v, tuple, key) if isinstance(v, list) else v for v in value)
        kinds = (args[0],) * len(value) if args[-1] is Ellipsis else args
        if len(kinds) != len(value):
            raise ValueError(f"{key}: expected {len(args)} entries, got {value!r}")
        return tuple(_coerce(v, a, key) for v, a in zip(value, kinds, strict=True))
    if annotation is dict or origin is dict:
        if not isinstance(value, Mapping):
            raise ValueError(f"{key}: expected a mapping, got {value!r}")
        return dict(value)
    if annotation is bool and not isinstance(value, bool):
        raise ValueError(f"{key}: expected true/false, got {value!r}")
    if annotation is int:
        if isinstance(value, bool) or not (
            isinstance(value, numbers.Integral) or (isinstance(value, float) and value.is_integer())
        ):
            raise ValueError(f"{key}: expected an integer, got {value!r}")
        return int(value)
    if annotation is float:
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            with contextlib.suppress(ValueError):
                return float(value)
        raise ValueError(f"{key}: expected a number, got {value!r}")
    if annotation is str and not isinstance(value, str):
        raise ValueError(f"{key}: expected a string, got {value!r}")
    return value


def config_to_dict(config: Any) -> Any:
    """A plain nested ``dict`` of a config (dataclasses become dicts, tuples lists): ready for
    YAML and JSON."""
    if dataclasses.is_dataclass(config):
        return {f.name: config_to_dict(getattr(config, f.name)) for f in dataclasses.fields(config)}
    if isinstance(config, (tuple, list)):
        return [config_to_dict(v) for v in config]
    if isinstance(config, Mapping):
        return {k: config_to_dict(v) for k, v in config.items()}
    return config


#: The widest factors ``(low, high)`` an env supports per field unless it says otherwise
#: (``SoroEnv.randomization_limits``): within them no episode diverges under any action
#: (``scripts/soak_envs.py``: 1M steps of uniform, bang-bang and held-extreme actions).
RANDOMIZATION_LIMITS = {
    "length": (0.9, 1.1),
    "radius": (0.9, 1.1),
    "density": (0.8, 1.25),
    "young_modulus": (0.5, 2.0),
    "shear_modulus": (0.5, 2.0),
    "damping": (0.5, 2.0),
}


def check_randomization(ranges: tuple, limits: dict | None = None, env: str = "this env") -> None:
    """Validate domain-randomisation ranges ``((field, low, high), ...)``: multiplicative
    factors applied per segment or joint to the model's parameter ``field``, which must be
    a key of ``limits`` (``field -> (lowest, highest)`` factors supported; by default
    :data:`RANDOMIZATION_LIMITS`, the :class:`~sorogym.models.RodParams` fields) with
    ``lowest <= low <= high <= highest``."""
    limits = RANDOMIZATION_LIMITS if limits is None else limits
    for entry in ranges:
        if len(entry) != 3:
            raise ValueError(f"randomization: entries are (field, low, high), got {entry!r}")
        name, lo, hi = entry
        if name not in limits:
            raise ValueError(f"randomization: unknown field {name!r}; use one of {tuple(limits)}")
        if not (0.0 < float(lo) <= float(hi)):
            raise ValueError(f"randomization: {name} factors must satisfy 0 < low <= high, got ({lo}, {hi})")
        low, high = limits[name]
        if float(lo) < low or float(hi) > high:
            raise ValueError(
                f"randomization: {name} factors ({lo}, {hi}) lie outside the range {env} supports, "
                f"[{low}, {high}] (wider ranges are not checked to stay stable)"
            )


__all__ = [
    "replace_config",
    "config_to_dict",
    "check_randomization",
    "RANDOMIZATION_LIMITS",
]
