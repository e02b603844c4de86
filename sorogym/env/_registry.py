"""The environment registry: names -> env classes, and their Gymnasium and brax registration.

Canonical names carry the version (``"TendonTracking-v0"``); :func:`make` also accepts the
bare name and the Gymnasium id (``"sorogym/TendonTracking-v0"``). Importing :mod:`sorogym`
imports the suite (:mod:`sorogym.envs`) and registers every env with Gymnasium as
``sorogym/<Name>-v0`` (``max_episode_steps`` from the default config, a batched
``vector_entry_point``) and with ``brax.envs.register_environment`` under its canonical name.
"""

from __future__ import annotations

import functools

from ._base import SoroEnv

GYM_NAMESPACE = "sorogym"
_ENVS: dict[str, type[SoroEnv]] = {}


def register(env_cls: type[SoroEnv]) -> type[SoroEnv]:
    """Class decorator adding an env to the registry under ``env_cls.name``."""
    name = env_cls.name
    if not name or not name.rsplit("-v", 1)[-1].isdigit():
        raise ValueError(f"{env_cls.__name__}.name: expected '<Name>-v<version>', got {name!r}")
    if name in _ENVS and _ENVS[name] is not env_cls:
        raise ValueError(f"environment {name!r} is already registered by {_ENVS[name].__name__}")
    _ENVS[name] = env_cls
    return env_cls


def registry() -> tuple[str, ...]:
    """Canonical names of every registered environment, sorted."""
    return tuple(sorted(_ENVS))


def canonical_name(name: str) -> str:
    """Resolve ``"X"``, ``"X-v0"`` or ``"sorogym/X-v0"`` to the registered name."""
    key = name.split("/", 1)[1] if name.startswith(GYM_NAMESPACE + "/") else name
    if key in _ENVS:
        return key
    versions = sorted(n for n in _ENVS if n.rsplit("-v", 1)[0] == key)
    if versions:
        return versions[-1]
    raise ValueError(f"unknown environment {name!r}; registered: {registry()}")


def env_class(name: str) -> type[SoroEnv]:
    return _ENVS[canonical_name(name)]


def make(name: str, config=None, **overrides) -> SoroEnv:
    """The brax (pure-functional, unbatched) env ``name`` with its default config, or
    ``config``, updated by dotted ``overrides`` (``"reward.scales.bonus"`` or
    ``reward__scales__bonus``)."""
    return env_class(name)(config, **overrides)


def gym_id(name: str) -> str:
    return f"{GYM_NAMESPACE}/{canonical_name(name)}"


_GYM_TWINS: dict[str, tuple[str, str]] = {}


def register_gym_twin(name: str, entry_point: str, like: str) -> None:
    """Declare a Gymnasium-only env ``name`` (e.g. the same task on another physics backend)
    whose ``entry_point`` (``"module:Class"``, imported only when made) shares the time
    limit of the registered JAX env ``like``; registered by :func:`register_everywhere`."""
    if name in _ENVS:
        raise ValueError(f"{name!r} is a registered JAX env")
    _GYM_TWINS[name] = (entry_point, like)


def gym_twins() -> tuple[str, ...]:
    """Names of the Gymnasium-only twin envs, sorted."""
    return tuple(sorted(_GYM_TWINS))


def register_everywhere() -> None:
    """Register every env with Gymnasium and brax, and the Gymnasium-only twins with
    Gymnasium (idempotent)."""
    import gymnasium

    from ._brax import register_brax_environment

    for name, (entry_point, like) in _GYM_TWINS.items():
        gid = f"{GYM_NAMESPACE}/{name}"
        if gid not in gymnasium.registry:
            gymnasium.register(id=gid, entry_point=entry_point, max_episode_steps=_default_steps(env_class(like)))

    for name, cls in _ENVS.items():
        gid = f"{GYM_NAMESPACE}/{name}"
        if gid not in gymnasium.registry:
            gymnasium.register(
                id=gid,
                entry_point="sorogym.env._gym:GymEnv",
                vector_entry_point="sorogym.env._gym:GymVectorEnv",
                max_episode_steps=_default_steps(cls),
                kwargs={"env_name": name},
            )
        register_brax_environment(name, functools.partial(make, name))


def _default_steps(cls: type[SoroEnv]) -> int:
    cfg = cls.default_config()
    return int(round(cfg.episode_length_s / cfg.control_dt))
