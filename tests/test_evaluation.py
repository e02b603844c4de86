"""The evaluation statistics behind every committed figure (:mod:`sorogym.agents.evaluate`),
against hand-computed arrays and against episodes stepped one by one on the unbatched env."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _toy import BendToGoal

from sorogym.agents.evaluate import episode_statistics, evaluate_policy
from sorogym.env import StepOutputs


def test_episode_statistics_by_hand():
    # two episodes of three steps; the second ends (terminates) at its second step
    rewards = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    alive = np.array([[1.0, 1.0], [1.0, 1.0], [1.0, 0.0]])
    metrics = {"m": np.array([[0.1, 0.9], [0.2, 0.6], [0.3, 0.7]]), "reward/part": np.ones((3, 2))}
    costs = np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 100.0]])
    out = episode_statistics(rewards, alive, metrics, costs)
    assert out["num_episodes"] == 2 and out["episode_length"] == 3
    assert out["return_mean"] == pytest.approx((9.0 + 6.0) / 2)  # 1+3+5, 2+4 (step 3 after the end)
    assert out["return_std"] == pytest.approx(1.5)
    assert out["length_mean"] == pytest.approx(2.5)
    assert out["m"] == pytest.approx((0.2 + 0.75) / 2)  # step means 0.2 and (0.9+0.6)/2
    assert out["final/m"] == pytest.approx((0.3 + 0.6) / 2)  # the last step of each episode
    assert out["max/m"] == pytest.approx((0.3 + 0.9) / 2)  # the 0.7 after the end does not count
    assert out["cost_mean"] == pytest.approx((6.0 + 3.0) / 2)
    assert "reward/part" not in out and "final/reward/part" not in out
    assert "cost_mean" not in episode_statistics(rewards, alive, metrics)
    assert "steps_to_success" not in out
    # first success after step 2 in the first episode, never in the second (its success at
    # step 3 comes after it ended), none at all in a third
    success = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0]])
    three = episode_statistics(np.zeros((3, 3)), np.c_[alive, np.ones(3)], {"success": success})
    assert three["steps_to_success"] == pytest.approx(2.0) and three["max/success"] == pytest.approx(1 / 3)
    assert (
        episode_statistics(np.zeros((3, 1)), np.ones((3, 1)), {"success": np.zeros((3, 1))})["steps_to_success"] is None
    )


class _BendUntilClose(BendToGoal):
    """The toy task with a metric (relative error), a cost (|action|) and termination once
    the curvature is within 3 % of the goal, so episodes end at different steps."""

    name = "BendUntilClose-v0"

    def outputs(self, model, prev, ps, action):
        out = super().outputs(model, prev, ps, action)
        rel = jnp.abs(ps.q[0] / ps.task.goal[0] - 1.0)
        cost = jnp.zeros((), rel.dtype) if action is None else jnp.sum(jnp.abs(action))  # None at reset
        return StepOutputs(out.obs, out.reward_terms, metrics={"rel_error": rel}, info={"cost": cost})

    def terminated(self, model, ps):
        return jnp.abs(ps.q[0] / ps.task.goal[0] - 1.0) < 0.03


def _policy(obs, key):
    return obs[:, 2:3] / 65.0, {}  # about the static torque of the goal: it rings, then settles


def test_evaluate_policy_equals_episodes_stepped_one_by_one():
    env = _BendUntilClose()
    N, T, seed = 6, 20, 4
    key_reset, _ = jax.random.split(jax.random.PRNGKey(seed))
    reset, step = jax.jit(env.reset), jax.jit(env.step)
    returns, lengths, means, finals, maxima, costs = [], [], [], [], [], []
    for key in jax.random.split(key_reset, N):
        state, rows = reset(key), []
        for _ in range(T):
            action = _policy(np.asarray(state.obs)[None], None)[0][0]
            state = step(state, jnp.asarray(action))
            rows.append((float(state.reward), float(state.metrics["rel_error"]), float(state.info["cost"])))
            if float(state.done):
                break
        r, m, c = np.array(rows).T
        returns.append(r.sum()), lengths.append(len(rows)), costs.append(c.sum())
        means.append(m.mean()), finals.append(m[-1]), maxima.append(m.max())
    assert len(set(lengths)) > 1 and min(lengths) < T, lengths  # episodes end at different steps
    for jax_policy in (True, False):
        out = evaluate_policy(env, _policy, N, seed=seed, episode_length=T, jax_policy=jax_policy)
        assert out["return_mean"] == pytest.approx(np.mean(returns), rel=1e-5)
        assert out["return_std"] == pytest.approx(np.std(returns), rel=1e-4)
        assert out["length_mean"] == pytest.approx(np.mean(lengths))
        assert out["rel_error"] == pytest.approx(np.mean(means), rel=1e-5)
        assert out["final/rel_error"] == pytest.approx(np.mean(finals), rel=1e-5)
        assert out["max/rel_error"] == pytest.approx(np.mean(maxima), rel=1e-5)
        assert out["cost_mean"] == pytest.approx(np.mean(costs), rel=1e-5)
