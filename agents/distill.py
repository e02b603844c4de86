"""Expert distillation: behaviour cloning (BC) and DAgger into a PPO-shaped student.

The student is the agent brax PPO trains (:mod:`sorogym.agents.networks`), shaped by the run
config's ``ppo`` section (hidden sizes, normalisation). A distilled checkpoint therefore
evaluates, renders and warm-starts PPO (``ppo.init_from``) exactly like a PPO checkpoint.

**Policy.** The policy loss is the negative log-likelihood, under
:func:`~sorogym.agents.networks.student_distribution`, of the expert's action clipped to
``±distill.action_clip`` so that the tanh is invertible. Deterministic evaluation uses the
mode ``tanh(loc)``.

**Data.** ``distill.rounds`` rounds; each collects one full episode (the env's time limit) in
each of ``distill.num_envs`` parallel envs, labels every visited state with the expert's
action and adds it to the data set (steps after an env terminates are dropped).

* ``bc``: the expert acts in every round (supervised learning on the expert's state
  distribution);
* ``dagger``: the expert acts in round 0; in round ``i >= 1`` each step executes the
  expert's action with probability ``beta_i = distill.beta_decay ** i`` and the student's
  mode otherwise (``beta_decay = 0``: the student alone), so later rounds label the states
  the student itself visits (Ross, Gordon and Bagnell, 2011).

After each round: the normaliser is refitted to every collected observation, then
``distill.updates_per_round`` Adam steps on minibatches drawn uniformly from all data
collected so far, then one deterministic rollout of the student alone gives the progress
point (the same statistics as :func:`~sorogym.agents.evaluate.evaluate_policy`).

**Value.** The value MLP is regressed on the discounted return-to-go (``ppo.discounting``)
of the collected episodes, cut at the time limit, so that a warm-started PPO begins with a
critic of roughly the right scale rather than a random one.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from . import checkpoint as ckpt
from .evaluate import episode_statistics
from .networks import empty_normalizer, init_params, make_networks, network_meta, student_distribution


def check_config(config, env_cls) -> None:
    """Raise ``ValueError`` naming the field where the ``distill`` section cannot train."""
    d = config.distill
    kinds = env_cls.expert_kinds
    if not kinds:
        raise ValueError(f"algo={config.algo}: {env_cls.name} has no expert to distil")
    if d.expert is not None and d.expert not in kinds:
        raise ValueError(f"distill.expert: {env_cls.name} has experts {kinds}, got {d.expert!r}")
    if min(d.rounds, d.num_envs, d.updates_per_round, d.batch_size) < 1:
        raise ValueError("distill: rounds, num_envs, updates_per_round and batch_size must be >= 1")
    if not 0.0 <= d.beta_decay <= 1.0:
        raise ValueError(f"distill.beta_decay: must lie in [0, 1], got {d.beta_decay}")
    if not 0.0 < d.action_clip < 1.0:
        raise ValueError(f"distill.action_clip: must lie in (0, 1), got {d.action_clip}")


def returns_to_go(rewards, alive, discount: float):
    """Discounted return-to-go ``(T, B)`` of per-step rewards ``(T, B)``; steps with
    ``alive = 0`` contribute nothing and the sum stops at the end of the window."""

    def back(carry, x):
        r, a = x
        g = a * (r + discount * carry)
        return g, g

    _, g = jax.lax.scan(back, jnp.zeros_like(rewards[0]), (rewards, alive), reverse=True)
    return g


def make_rollout(env, expert, networks, num_envs: int, episode_length: int) -> Callable:
    """A jitted ``rollout(params, key, beta)`` of one episode in ``num_envs`` envs where each
    step executes the expert's action with probability ``beta`` and the student's mode
    otherwise. Returns per-step arrays ``(T, B, ...)``: ``obs``, ``expert_action``,
    ``alive`` (1 until the env terminated), ``reward``, the env metrics and ``cost``."""
    reset, step = jax.vmap(env.reset), jax.vmap(env.step)
    act_expert = jax.vmap(expert.act)
    mode = networks.parametric_action_distribution.mode

    def rollout(params, key, beta):
        key_reset, key_mix = jax.random.split(key)
        state = reset(jax.random.split(key_reset, num_envs))

        def body(carry, k):
            state, alive = carry
            a_expert = act_expert(state)
            a_student = mode(networks.policy_network.apply(params[0], params[1], state.obs))
            use_expert = jax.random.uniform(k, (num_envs,)) < beta
            action = jnp.where(use_expert[:, None], a_expert, a_student.astype(a_expert.dtype))
            nxt = step(state, action)
            cost = nxt.info.get("cost", jnp.zeros_like(nxt.reward))
            record = {
                "obs": state.obs,
                "expert_action": a_expert,
                "alive": alive,
                "reward": nxt.reward,
                "metrics": nxt.metrics,
                "cost": cost,
                "has_cost": jnp.asarray("cost" in nxt.info),
            }
            alive = alive * (1.0 - nxt.done)
            return (nxt, alive), record

        alive0 = jnp.ones(num_envs, jnp.float32)
        _, out = jax.lax.scan(body, (state, alive0), jax.random.split(key_mix, episode_length))
        return out

    return jax.jit(rollout)


def _summary(out) -> dict:
    host = jax.tree.map(np.asarray, out)
    costs = host["cost"] if bool(host["has_cost"][0]) else None
    return episode_statistics(host["reward"], host["alive"], host["metrics"], costs)


def make_update(
    networks, optimizer, updates: int, batch_size: int, action_clip: float, value_weight: float
) -> Callable:
    """A jitted ``update(params, opt_state, data, n_valid, key)`` making ``updates`` Adam
    steps on minibatches drawn from the first ``n_valid`` rows of the flat data buffers;
    returns ``(params, opt_state, mean losses)``."""

    def loss_fn(trainable, normalizer, batch):
        policy, value = trainable
        logits = networks.policy_network.apply(normalizer, policy, batch["obs"])
        action = jnp.clip(batch["expert_action"], -action_clip, action_clip)
        nll = -student_distribution(logits).log_prob(action)
        v = networks.value_network.apply(normalizer, value, batch["obs"])
        v_err = jnp.square(v - batch["return"])
        w = batch["weight"]
        denom = jnp.maximum(w.sum(), 1.0)
        nll, v_err = (w * nll).sum() / denom, (w * v_err).sum() / denom
        mode = jnp.tanh(jnp.split(logits, 2, axis=-1)[0])
        mse = (w * jnp.mean(jnp.square(mode - batch["expert_action"]), -1)).sum() / denom
        return nll + value_weight * v_err, {"nll": nll, "value_loss": v_err, "action_mse": mse}

    import optax

    grad_fn = jax.value_and_grad(loss_fn, has_aux=True)

    def update(params, opt_state, data, n_valid, key):
        normalizer, policy, value = params

        def body(carry, k):
            trainable, opt_state = carry
            idx = jax.random.randint(k, (batch_size,), 0, n_valid)
            batch = jax.tree.map(lambda x: x[idx], data)
            (loss, aux), grads = grad_fn(trainable, normalizer, batch)
            steps, opt_state = optimizer.update(grads, opt_state, trainable)
            return (optax.apply_updates(trainable, steps), opt_state), {"loss": loss, **aux}

        (trainable, opt_state), logs = jax.lax.scan(body, ((policy, value), opt_state), jax.random.split(key, updates))
        return (normalizer, *trainable), opt_state, jax.tree.map(jnp.mean, logs)

    return jax.jit(update)


def checkpoint_meta(config, env, expert_kind: str) -> dict:
    """The ``meta.json`` of the checkpoints of a BC/DAgger run config ``config`` on ``env``."""
    return {**ckpt.run_meta(config.algo, config, env), **network_meta(config.ppo), "expert": expert_kind}


def train_distill(config, env, run_dir: Path, on_progress: Callable[[int, dict], None], resume_from=None):
    """Distil ``env``'s expert ``config.distill.expert`` into a student by ``config.algo``
    (``bc`` or ``dagger``; ``config`` a :class:`~sorogym.agents.config.RunConfig`); returns
    ``(params, networks, env_steps)`` with brax PPO's ``(normalizer, policy, value)``
    parameter layout. ``on_progress(env_steps, row)`` gets the student's deterministic
    rollout statistics and the mean losses after each round; a checkpoint is written to
    ``run_dir/checkpoints`` after each round. A distillation starts from the expert: it
    does not resume (``resume_from`` must be None; warm-start PPO from it instead)."""
    if resume_from is not None:
        raise ValueError(f"resume: {config.algo} runs do not resume; warm-start PPO from one (ppo.init_from)")
    import optax
    from brax.training.acme import running_statistics

    d = config.distill
    expert = env.expert(d.expert)
    T = int(env.max_episode_steps)
    meta = checkpoint_meta(config, env, expert.name)
    nets = make_networks(meta)
    key = jax.random.PRNGKey(config.seed)
    key, k_policy, k_value = jax.random.split(key, 3)
    params = init_params(nets, env.observation_size, k_policy, k_value)
    optimizer = optax.adam(d.learning_rate)
    opt_state = optimizer.init((params[1], params[2]))

    rollout = make_rollout(env, expert, nets, d.num_envs, T)
    update = make_update(nets, optimizer, d.updates_per_round, d.batch_size, d.action_clip, d.value_weight)
    capacity = d.rounds * d.num_envs * T
    data = {
        "obs": jnp.zeros((capacity, env.observation_size), jnp.float32),
        "expert_action": jnp.zeros((capacity, env.action_size), jnp.float32),
        "return": jnp.zeros((capacity,), jnp.float32),
        "weight": jnp.zeros((capacity,), jnp.float32),
    }
    n_valid, env_steps = 0, 0
    for round_ in range(d.rounds):
        beta = 1.0 if (config.algo == "bc" or round_ == 0) else float(d.beta_decay**round_)
        key, k_collect, k_update, k_eval = jax.random.split(key, 4)
        out = rollout(params, k_collect, jnp.float32(beta))
        finite = jnp.all(jnp.isfinite(out["obs"]), -1) & jnp.all(jnp.isfinite(out["expert_action"]), -1)
        weight = out["alive"] * finite
        ret = returns_to_go(jnp.nan_to_num(out["reward"]), weight, config.ppo.discounting)
        n_new = d.num_envs * T
        rows = slice(n_valid, n_valid + n_new)
        new = {
            "obs": jnp.nan_to_num(out["obs"]),
            "expert_action": jnp.nan_to_num(out["expert_action"]),
            "return": ret,
            "weight": weight.astype(jnp.float32),
        }
        data = {k: data[k].at[rows].set(v.reshape((n_new,) + v.shape[2:]).astype(jnp.float32)) for k, v in new.items()}
        n_valid += n_new
        env_steps += int(np.asarray(out["alive"]).sum())
        if config.ppo.normalize_observations:
            normalizer = running_statistics.update(
                empty_normalizer(env.observation_size), data["obs"][:n_valid], weights=data["weight"][:n_valid]
            )
            params = (normalizer, params[1], params[2])
        params, opt_state, losses = update(params, opt_state, data, n_valid, k_update)
        row = _summary(rollout(params, k_eval, jnp.float32(0.0)))
        row.update({f"distill/{k}": float(v) for k, v in losses.items()})
        row.update({"distill/round": round_, "distill/beta": beta, "distill/dataset_size": int(data["weight"].sum())})
        on_progress(env_steps, row)
        ckpt.save_ppo(Path(run_dir) / "checkpoints", env_steps, params, meta)
    return params, nets, env_steps
