"""The environment registry: names -> env classes, and their Gymnasium and brax registration.

Canonical names carry the version (``"TendonTracking-v0"``); :func:`make` also accepts the
bare name and the Gymnasium id (``"sorogym/TendonTracking-v0"``). The suite's envs are known
from :data:`sorogym.envs.CATALOGUE` without importing them: an env's module is imported when
the env is first made (or its class asked for). :mod:`sorogym` registers the catalogue with
Gymnasium once Gymnasium is imported (``sorogym/<Name>-v0``, string entry points, a batched
``vector_entry_point``); importing this module registers it with
``brax.envs.register_environment`` (factories that call :func:`make`). Envs added with
:func:`register` are registered with both in the same way.
"""

from __future__ import annotations

import functools
import importlib

import wrapt

from sorogym.envs import CATALOGUE, GYM_NAMESPACE, register_gym_id

from ._base import SoroEnv
from ._brax import import_brax_envs

_brax_envs = import_brax_envs()

#: classes added by :func:`register` (the suite's as their modules are imported, and user envs)
_ENVS: dict[str, type[SoroEnv]] = {}
#: Gymnasium-only twins added by :func:`register_gym_twin`: name -> entry point
_GYM_TWINS: dict[str, str] = {}


def register(env_cls: type[SoroEnv]) -> type[SoroEnv]:
    """Class decorator adding an env to the registry under ``env_cls.name``, and to brax and
    (once it is imported) Gymnasium."""
    name = env_cls.name
    if not name or not name.rsplit("-v", 1)[-1].isdigit():
        raise ValueError(f"{env_cls.__name__}.name: expected '<Name>-v<version>', got {name!r}")
    if name in _ENVS and _ENVS[name] is not env_cls:
        raise ValueError(f"environment {name!r} is already registered by {_ENVS[name].__name__}")
    entry = CATALOGUE.get(name)
    if entry is not None and entry.entry_point != f"{env_cls.__module__}:{env_cls.__qualname__}":
        raise ValueError(f"environment {name!r} is the suite's {entry.entry_point}")
    _ENVS[name] = env_cls
    steps = _default_steps(env_cls)
    wrapt.register_post_import_hook(lambda gymnasium: register_gym_id(gymnasium, name, steps), "gymnasium")
    _brax_envs.register_environment(name, functools.partial(make, name))
    return env_cls


def registry() -> tuple[str, ...]:
    """Canonical names of every brax env (the suite's and those added by :func:`register`), sorted."""
    return tuple(sorted({n for n, e in CATALOGUE.items() if not e.gym_only} | set(_ENVS)))


def canonical_name(name: str) -> str:
    """Resolve ``"X"``, ``"X-v0"`` or ``"sorogym/X-v0"`` to the registered name."""
    key = name.split("/", 1)[1] if name.startswith(GYM_NAMESPACE + "/") else name
    names = registry()
    if key in names:
        return key
    versions = sorted(n for n in names if n.rsplit("-v", 1)[0] == key)
    if versions:
        return versions[-1]
    raise ValueError(f"unknown environment {name!r}; registered: {names}")


def env_class(name: str) -> type[SoroEnv]:
    """The env class of ``name`` (any form :func:`canonical_name` accepts); a suite env's
    module is imported on first use."""
    name = canonical_name(name)
    if name in _ENVS:
        return _ENVS[name]
    module, _, cls = CATALOGUE[name].entry_point.partition(":")
    return getattr(importlib.import_module(module), cls)


def make(name: str, config=None, **overrides) -> SoroEnv:
    """The brax (pure-functional, unbatched) env ``name`` with its default config, or
    ``config``, updated by dotted ``overrides`` (``"reward.scales.bonus"`` or
    ``reward__scales__bonus``)."""
    return env_class(name)(config, **overrides)


def register_gym_twin(name: str, entry_point: str, like: str) -> None:
    """Declare a Gymnasium-only env ``name`` (e.g. the same task on another physics backend)
    whose ``entry_point`` (``"module:Class"``, imported only when made) shares the time
    limit of the brax env ``like``; registered with Gymnasium once it is imported."""
    if name in registry():
        raise ValueError(f"{name!r} is a registered JAX env")
    _GYM_TWINS[name] = entry_point
    steps = _default_steps(env_class(like))
    wrapt.register_post_import_hook(lambda gymnasium: register_gym_id(gymnasium, name, steps, entry_point), "gymnasium")


def gym_twins() -> tuple[str, ...]:
    """Names of the Gymnasium-only twin envs, sorted."""
    return tuple(sorted({n for n, e in CATALOGUE.items() if e.gym_only} | set(_GYM_TWINS)))


def _default_steps(cls: type[SoroEnv]) -> int:
    cfg = cls.default_config()
    return int(round(cfg.episode_length_s / cfg.control_dt))


def _register_suite_with_brax() -> None:
    for name in registry():
        _brax_envs.register_environment(name, functools.partial(make, name))


_register_suite_with_brax()
