"""Expert policies: model-based controllers acting on an env's full physics state.

An :class:`Expert` wraps ``act(state) -> action``, a pure function of one (unbatched) brax
``State`` of its env returning an action in [-1, 1]. Unlike a learned policy it reads the
physics state (``q``, ``qd``, tensions, task) and the episode's model, not only the
observation. It is used three ways:

* brax-style: ``expert(states, key) -> (actions, {})`` on a batch of States (vmapped), e.g.
  ``evaluate_policy(env, expert, policy_input="state")``;
* one env: ``expert.act(state)``;
* Gymnasium: ``expert.gym_action(gym_env)`` reads the wrapped env's current state.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import numpy as np


class Expert:
    """A named state-feedback policy of one env (see module docstring)."""

    def __init__(self, name: str, act: Callable):
        self.name = name
        self.act = act
        self._act_jit = jax.jit(act)

    def __call__(self, states, key=None):
        return jax.vmap(self.act)(states), {}

    def gym_action(self, gym_env) -> np.ndarray:
        """The expert's action for the current state of a ``gymnasium.make("sorogym/...")``
        env (or its unwrapped :class:`~sorogym.env.GymEnv`), as float32 numpy."""
        state = gym_env.unwrapped.state
        if state is None:
            raise RuntimeError("gym_action: reset the env first")
        return np.asarray(self._act_jit(state), np.float32)

    def __repr__(self) -> str:
        return f"Expert({self.name!r})"
