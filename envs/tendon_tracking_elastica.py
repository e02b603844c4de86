"""``TendonTracking-Elastica-v0``: ``TendonTracking-v0`` on a PyElastica Cosserat rod.

The CPU baseline twin of :mod:`sorogym.envs.tendon_tracking` for fidelity, RL-speed and
sim-to-sim comparisons. The two envs differ only in the physics backend:

* **Task**: taken from the JAX env itself, not re-implemented. Each reset draws the JAX
  key from Gymnasium's ``np_random`` exactly as the ``sorogym/TendonTracking-v0``
  Gymnasium face does and runs the JAX env's ``reset`` for the episode's target path, so
  the same seed gives the same targets on both backends. Observation, reward terms,
  metrics (:meth:`TendonTracking.task_outputs`), reward scaling
  (:meth:`SoroEnv.scaled_reward`) and the tension update
  (:func:`~sorogym.envs.tendon_tracking.increment_tendon_forces`) are the JAX env's, called
  on the rod's tip state.
* **Physics**: a clamped discrete Cosserat rod with the same length, radius, density,
  E and ``G = E / (2 (1 + nu))`` (:mod:`sorogym.envs.elastica`), ``n_elements`` elements
  and PositionVerlet steps of at most ``max_dt``; the four tendons at the same offsets, as eyelet
  forces; the PCS per-strain damping mapped to a mass-proportional damping rate matching
  the decay of the slowest bending mode (:func:`~sorogym.envs.elastica.matched_damping_rate`).
  The defaults (40 elements, steps of at most 2e-4 s) come from the convergence study in
  ``results/comparison/elastica_convergence.md`` (``scripts/compare_backends.py``).

Spaces, ``info`` keys (``reward/<term>``, ``tracking_error``, ``success``,
``tendon_force_mean``, ``nonfinite``) and the 105-step time limit are those of
``sorogym/TendonTracking-v0``. A rod that diverges (non-finite, or a coordinate beyond
``divergence_bound``) ends the episode with ``info["nonfinite"] = 1``; the last finite
state is kept and the reward is finite. Domain randomisation is a JAX-env feature and is
rejected here. Needs PyElastica (``pip install -e '.[elastica]'``).
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np

from sorogym.env import gym_spaces, jax_key_from

from .elastica import RodSpec, TendonRod, matched_damping_rate
from .tendon_tracking import TendonTracking, increment_tendon_forces

#: Defaults of the rod discretisation (see the module docstring).
DEFAULT_ELEMENTS = 40
DEFAULT_MAX_DT = 2e-4


class TendonTrackingElastica(gymnasium.Env):
    """Gymnasium env: the ``TendonTracking-v0`` task on a PyElastica rod (module docstring).

    Args:
        n_elements: rod elements.
        max_dt: largest PositionVerlet step [s]; the step is the control period divided
            by the smallest whole number of steps not longer than it.
        damping_rate: mass-proportional damping [1/s]; ``None``: matched to the PCS model.
        render_mode: ``None`` or ``"rgb_array"``.
        render_size: ``(width, height)`` [px].
        **overrides: dotted config overrides of ``TendonTracking-v0`` (robot, task, reward).
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 15}
    name = "TendonTracking-Elastica-v0"

    def __init__(
        self,
        n_elements: int = DEFAULT_ELEMENTS,
        max_dt: float = DEFAULT_MAX_DT,
        damping_rate: float | None = None,
        render_mode: str | None = None,
        render_size=(480, 480),
        **overrides,
    ):
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode: only 'rgb_array' is supported, got {render_mode!r}")
        task = TendonTracking(**overrides)
        c = task.config
        if c.randomization:
            raise ValueError("randomization: domain randomisation is not supported by the PyElastica backend")
        if not (np.isfinite(max_dt) and 0 < max_dt <= c.control_dt):
            raise ValueError(f"max_dt: must be in (0, control_dt = {c.control_dt:g}] s, got {max_dt!r}")
        dt = c.control_dt / math.ceil(c.control_dt / max_dt - 1e-9)
        self.task_env = task
        self.config = c
        if damping_rate is None:
            damping_rate = matched_damping_rate(task.model)
        r = c.tendon_offset
        offsets = ((0.0, r), (0.0, -r), (r, 0.0), (-r, 0.0))  # the JAX env's tendon layout
        self.rod_spec = RodSpec(
            length=c.length,
            radius=c.radius,
            density=c.density,
            young_modulus=c.young_modulus,
            shear_modulus=c.young_modulus / (2 * (1 + c.poisson_ratio)),
            tendon_offsets=offsets,
            gravity=tuple(c.gravity),
            damping_rate=float(damping_rate),
        )
        self.rod = TendonRod(self.rod_spec, n_elements, dt)
        self.render_mode = render_mode
        self.render_size = tuple(render_size)
        self.metadata = dict(self.metadata, render_fps=int(round(1.0 / task.control_dt)))
        self.observation_space, self.action_space = gym_spaces(task)
        self._reset_task = jax.jit(task.reset)
        dtype = task.dtype

        def tension_update(u, action):
            a = jnp.clip(jnp.asarray(action, dtype), -1.0, 1.0)
            return increment_tendon_forces(jnp.asarray(u, dtype), a, c.tendon_force_increment, c.max_tendon_force)

        def outputs(tip, tip_vel, u, task_state, steps):
            out = task.task_outputs(
                jnp.asarray(tip, dtype), jnp.asarray(tip_vel, dtype), jnp.asarray(u, dtype), task_state, steps
            )
            reward, scaled = task.scaled_reward(out.reward_terms)
            return task._clean_obs(out.obs), reward, scaled, out.metrics

        self._tension_update = jax.jit(tension_update)
        self._outputs = jax.jit(outputs)
        self._task = None
        self._steps = 0
        self._u = np.zeros(4)

    @property
    def max_episode_steps(self) -> int:
        return self.task_env.max_episode_steps

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        state = self._reset_task(jax_key_from(self.np_random))
        self._task = state.pipeline_state.task
        self._steps = 0
        self._u = np.zeros(self.action_space.shape[0])
        self.rod.reset()
        obs, _, scaled, metrics = self._outputs(*self.rod.tip_state(), self._u, self._task, self._steps)
        info = {f"reward/{k}": 0.0 for k in scaled}
        info.update({k: float(v) for k, v in metrics.items()})
        info["nonfinite"] = 0.0
        return np.array(obs), info

    def step(self, action):
        if self._task is None:
            raise RuntimeError("step() called before reset()")
        action = np.asarray(action, dtype=np.float32).reshape(self.action_space.shape)
        u = np.asarray(self._tension_update(self._u, action), dtype=float)
        before = self.rod.snapshot()
        self.rod.advance(u, self.task_env.control_dt)
        diverged = not self.rod.is_finite(self.config.divergence_bound)
        if diverged:
            self.rod.restore(before)
        self._u = u
        self._steps += 1
        obs, reward, scaled, metrics = self._outputs(*self.rod.tip_state(), u, self._task, self._steps)
        info: dict[str, Any] = {f"reward/{k}": float(v) for k, v in scaled.items()}
        info.update({k: float(v) for k, v in metrics.items()})
        info["nonfinite"] = float(diverged)
        return np.array(obs), float(reward), diverged, False, info

    @property
    def tensions(self) -> np.ndarray:
        """Current tendon tensions ``(4,)`` [N]."""
        return self._u.copy()

    def render(self):
        if self.render_mode != "rgb_array" or self._task is None:
            return None
        from sorogym.render import render_rgb

        paths = self.rod.tendon_paths()
        scene = {
            "backbone": self.rod.centerline(),
            "radius": np.array([self.rod_spec.radius]),
            "tendons": [paths[j] for j in range(paths.shape[0])],
            "markers": [],
            "spheres": [],
            "title": f"{self.name}  t = {self.rod.time:.2f} s",
        }
        scene = self.task_env.add_task_to_scene(scene, jax.tree.map(np.asarray, self._task), self._steps)
        return render_rgb(scene, *self.render_size)
