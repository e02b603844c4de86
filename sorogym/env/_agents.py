"""A multi-agent Gymnasium view of a multi-limb env: one agent per limb.

:class:`LimbAgents` wraps a Gymnasium env of a robot with identical limbs (e.g.
``gymnasium.make("sorogym/BrittleStarToGoal-v0")``) so that each limb is an agent with its
own observation and action, the cooperative setting of multi-limb locomotion studies:

* observations: a ``Dict`` space ``{agent: Box}``; each agent sees the shared part (for the
  brittle star: the goal and the disc's motion, expressed in the limb's own frame) and its
  own limb's state (:meth:`agent_observations` of the JAX env);
* actions: a ``Dict`` space ``{agent: Box(-1, 1, (a,))}``, concatenated in agent order into
  the env's action (each limb's actuators are a contiguous block of it);
* one shared reward and ``terminated``/``truncated`` for the team (a float and two bools, so
  the view is still a ``gymnasium.Env`` and passes ``check_env``); ``info`` as the wrapped env's.

Because every agent sees the world in its own limb's frame, limbs that see the same thing
should act alike: one policy with shared parameters can drive all of them.

A JAX env opts in by defining ``agent_names`` (tuple of str), ``agent_observation_dim`` and
``agent_observations(obs) -> (..., num_agents, agent_observation_dim)``; its action is
``num_agents`` equal blocks.
"""

from __future__ import annotations

import gymnasium
import numpy as np


class LimbAgents(gymnasium.Wrapper, gymnasium.utils.RecordConstructorArgs):
    """One agent per limb of a sorogym Gymnasium env (module docstring).

    Args:
        env: a ``gymnasium.make("sorogym/...")`` env (or its :class:`~sorogym.env.GymEnv`)
            whose JAX env defines the agent view.

    Raises ``ValueError`` naming the env when it has no multi-agent view.
    """

    def __init__(self, env: gymnasium.Env):
        gymnasium.utils.RecordConstructorArgs.__init__(self)
        gymnasium.Wrapper.__init__(self, env)
        jax_env = getattr(env.unwrapped, "jax_env", None)
        if jax_env is None or not hasattr(jax_env, "agent_observations"):
            name = getattr(jax_env, "name", type(env.unwrapped).__name__)
            raise ValueError(f"env: {name} has no multi-agent view (it defines no agent_observations)")
        self.agents = tuple(jax_env.agent_names)
        self._view = jax_env.agent_observations
        k, a = len(self.agents), env.action_space.shape[0]
        if a % k:
            raise ValueError(f"env: {jax_env.name}'s {a} actions do not split into {k} equal blocks")
        self._block = a // k
        limit = float(jax_env.observation_limit)
        d = int(jax_env.agent_observation_dim)
        self.observation_space = gymnasium.spaces.Dict(
            {name: gymnasium.spaces.Box(-limit, limit, (d,), np.float32) for name in self.agents}
        )
        self.action_space = gymnasium.spaces.Dict(
            {name: gymnasium.spaces.Box(-1.0, 1.0, (self._block,), np.float32) for name in self.agents}
        )

    def _split(self, obs) -> dict[str, np.ndarray]:
        views = np.asarray(self._view(np.asarray(obs, np.float32)), np.float32)
        return {name: views[k] for k, name in enumerate(self.agents)}

    def joint_action(self, actions: dict) -> np.ndarray:
        """The env's action ``(num_agents * a,)`` from one action per agent."""
        missing = set(self.agents) - set(actions)
        if missing:
            raise ValueError(f"actions: missing agents {sorted(missing)}")
        return np.concatenate([np.asarray(actions[name], np.float32).reshape(self._block) for name in self.agents])

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        return self._split(obs), info

    def step(self, actions: dict):
        obs, reward, terminated, truncated, info = self.env.step(self.joint_action(actions))
        return self._split(obs), reward, terminated, truncated, info


__all__ = ["LimbAgents"]
