"""Import layering: the core imports nothing above it, the suite loads on demand, and the
catalogue that Gymnasium registers from agrees with the envs it names.

Import checks run in fresh interpreters (``sys.modules`` of the test process holds everything).
"""

import subprocess
import sys

import pytest
from _isolated import REPO_ROOT, _child_environment

CORE = (
    "sorogym",
    "sorogym.models",
    "sorogym.lie",
    "sorogym.actuation",
    "sorogym.sim",
    "sorogym.control",
    "sorogym.contact",
    "sorogym.planning",
    "sorogym.robots",
    "sorogym.identification",
    "sorogym.provenance",
    "sorogym.render",
    "sorogym.envs",
)
ABOVE_THE_CORE = ("brax", "flax", "gymnasium")


def _run(code: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=_child_environment(),
    )
    assert proc.returncode == 0, f"--- stdout ---\n{proc.stdout[-4000:]}\n--- stderr ---\n{proc.stderr[-4000:]}"
    return proc.stdout


@pytest.mark.parametrize("module", CORE)
def test_core_modules_import_nothing_above_the_core(module):
    out = _run(f"import sys, {module}; print(sorted(m for m in {ABOVE_THE_CORE!r} if m in sys.modules))")
    assert out.strip() == "[]", f"import {module} loaded {out.strip()}"


def test_gymnasium_and_make_resolve_the_suite_lazily():
    _run(
        "import sys, sorogym, gymnasium\n"
        "assert 'brax' not in sys.modules and 'sorogym/TendonTracking-Elastica-v0' in gymnasium.registry\n"
        "env = gymnasium.make('sorogym/TendonTracking-v0')\n"
        "assert env.spec.max_episode_steps == 105 and env.observation_space.shape == (16,)\n"
        "assert 'sorogym.envs.tendon_tracking' in sys.modules and 'sorogym.envs.pose_tracking' not in sys.modules\n"
        "assert 'StrainTracking-v0' in sorogym.registry() and 'sorogym.envs.strain_tracking' not in sys.modules\n"
        "assert sorogym.make('StrainTracking-v0').max_episode_steps == 600\n"
    )
    # Gymnasium imported first: the suite is registered when sorogym is imported
    _run(
        "import gymnasium, sorogym\n"
        "assert gymnasium.make('sorogym/StrainTracking-v0').spec.max_episode_steps == 600\n"
        "assert gymnasium.make_vec('sorogym/TendonTracking-v0', num_envs=2).observation_space.shape == (2, 16)\n"
        "twin = gymnasium.make('sorogym/TendonTracking-Elastica-v0', n_elements=4)\n"
        "assert twin.spec.max_episode_steps == 105 and twin.observation_space.shape == (16,)\n"
        "assert sorogym.make('TendonTracking-v0').observation_size == 16\n"
    )


def test_catalogue_agrees_with_the_envs():
    import importlib

    import sorogym
    from sorogym.envs import CATALOGUE

    jax_names = {n for n, e in CATALOGUE.items() if not e.gym_only}
    assert jax_names <= set(sorogym.registry())
    assert {n for n, e in CATALOGUE.items() if e.gym_only} == set(sorogym.env.gym_twins())
    for name, entry in CATALOGUE.items():
        module, _, cls_name = entry.entry_point.partition(":")
        cls = getattr(importlib.import_module(module), cls_name)
        assert cls.name == name
        # a Gymnasium-only twin has the time limit of the brax env it mirrors
        like = name.replace("-Elastica-", "-") if entry.gym_only else name
        cfg = sorogym.env.env_class(like).default_config()
        assert entry.max_episode_steps == round(cfg.episode_length_s / cfg.control_dt), name
        if not entry.gym_only:
            assert sorogym.env.env_class(name) is cls
