"""A toy env for agent tests: cheap to compile, learnable in seconds, with an expert."""

import dataclasses

import jax
import jax.numpy as jnp
from flax import struct

from sorogym.actuation import GeneralizedActuation
from sorogym.env import Expert, SoroEnv, StepOutputs
from sorogym.models import PlanarPCS, RodParams


@dataclasses.dataclass(frozen=True)
class _ToyScales:
    error: float = 1.0


@dataclasses.dataclass(frozen=True)
class _ToyReward:
    scales: _ToyScales = _ToyScales()


@dataclasses.dataclass(frozen=True)
class _ToyConfig:
    control_dt: float = 0.05
    num_substeps: int = 2
    episode_length_s: float = 1.0
    divergence_bound: float = 1e3
    integrator: str = "trapezoid"
    theta: float = 0.5
    line_load_iterations: int = 0
    randomization: tuple = ()
    reward: _ToyReward = _ToyReward()
    dtype: str = "float32"


@struct.dataclass
class GoalTask:
    goal: jax.Array  # goal curvature (1,) [1/m]


class BendToGoal(SoroEnv):
    """Toy task: one planar bending segment driven by a generalized torque (action x 0.05
    N m) must hold a random goal curvature in [-10, 10] 1/m. Reward ``-|q - q*| / 10``
    per step, so a random policy scores about -10 per 20-step episode and a good one > -3."""

    name = "BendToGoal-v0"

    @classmethod
    def default_config(cls):
        return _ToyConfig()

    def build_model(self, config):
        params = RodParams.create(
            length=0.1, radius=0.01, density=1000.0, young_modulus=1e6, damping=1e3, planar=True, dtype=self.dtype
        )
        return PlanarPCS(params, active_strains="pcc", actuation=GeneralizedActuation())

    observation_dim = 3
    action_dim = 1

    def reset_task(self, key, model):
        goal = jax.random.uniform(key, (1,), self.dtype, -10.0, 10.0)
        z = jnp.zeros(1, self.dtype)
        return GoalTask(goal), z, z, z

    def command(self, model, ps, action):
        return 0.05 * action

    def outputs(self, model, prev, ps, action):
        obs = jnp.concatenate([ps.q, ps.qd, ps.task.goal])
        return StepOutputs(obs, {"error": -jnp.abs(ps.q[0] - ps.task.goal[0]) / 10.0}, metrics={}, info={})

    expert_kinds = ("pd",)

    def build_expert(self, kind):
        """Static torque of the goal curvature plus a proportional correction."""

        def act(state):
            ps = state.pipeline_state
            goal = ps.task.goal
            torque = self.model.potential_force(goal) + 1e-4 * (goal - ps.q)
            return jnp.clip(torque / 0.05, -1.0, 1.0)

        return Expert(f"{self.name}/{kind}", act)
