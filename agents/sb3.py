"""CPU baseline: Stable-Baselines3 PPO on the batched env through
:class:`sorogym.env.SB3VecEnv`, with the same config, run folder and logging as brax PPO.

With ``sb3_ppo.normalize`` (default) the env is wrapped in SB3's ``VecNormalize``
(running observation and return normalisation, as RL Zoo tunes PPO for continuous control).
Checkpoints are SB3's own ``sb3_model.zip`` (plus ``vecnormalize.pkl``) in
``checkpoints/step_<n>/`` next to our ``meta.json``; evaluation runs the torch policy on the
host against the jitted batched env (:func:`sorogym.agents.evaluate.evaluate_policy` with
``jax_policy=False``), normalising observations with the saved statistics. Stable-Baselines3
(and torch) load only when a function here runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from . import checkpoint as ckpt

MODEL_FILE = "sb3_model.zip"
NORMALIZER_FILE = "vecnormalize.pkl"


def save_sb3(root: Path, step: int, model, meta: dict) -> Path:
    from stable_baselines3.common.vec_env import VecNormalize

    out = ckpt.step_dir(root, step)
    out.mkdir(parents=True, exist_ok=True)
    model.save(out / MODEL_FILE)
    if isinstance(model.get_env(), VecNormalize):
        model.get_env().save(out / NORMALIZER_FILE)
    (out / ckpt.META).write_text(json.dumps({**meta, "step": int(step)}, indent=2))
    return out


def load_sb3(path):
    """``(model, meta, normalizer)``; ``normalizer`` is the saved ``VecNormalize`` (without
    its env, ``training`` off) or None."""
    import pickle

    from stable_baselines3 import PPO

    found = ckpt.resolve(path)
    meta = ckpt.load_meta(found)
    if meta.get("algo") != "sb3_ppo":
        raise ValueError(f"{found}: a {meta.get('algo')!r} checkpoint, not an SB3 one")
    normalizer = None
    if (found / NORMALIZER_FILE).exists():
        with open(found / NORMALIZER_FILE, "rb") as f:
            normalizer = pickle.load(f)
        normalizer.training = False
    return PPO.load(found / MODEL_FILE, device="cpu"), meta, normalizer


def sb3_policy(model, deterministic: bool = True, normalizer=None) -> Callable:
    """Host policy ``(obs (B, o) numpy, key) -> (actions (B, a), {})`` for evaluation;
    ``normalizer`` (a ``VecNormalize``) normalises the observations first."""

    def act(obs, key):
        obs = np.asarray(obs)
        if normalizer is not None:
            obs = normalizer.normalize_obs(obs)
        action, _ = model.predict(obs, deterministic=deterministic)
        return np.clip(action, -1.0, 1.0), {}

    return act


def training_normalizer(model):
    """The ``VecNormalize`` a model trains through (``training`` off), or None."""
    import copy

    from stable_baselines3.common.vec_env import VecNormalize

    env = model.get_env()
    if not isinstance(env, VecNormalize):
        return None
    frozen = copy.copy(env)
    frozen.training = False
    return frozen


def train_sb3(config, env, run_dir: Path, on_progress: Callable[[int, dict], None], resume_from=None):
    """Train SB3 PPO by the run config ``config`` (:class:`~sorogym.agents.config.RunConfig`);
    returns ``(model, final_step)``. ``on_progress(step, row)`` gets the mean return of the
    episodes finished since the last progress point."""
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import VecNormalize

    from sorogym.env import SB3VecEnv  # loads torch: only on use

    s = config.sb3_ppo
    venv = SB3VecEnv(env, num_envs=s.n_envs, seed=config.seed)
    meta = ckpt.run_meta("sb3_ppo", config, env)
    root = Path(run_dir) / "checkpoints"
    every = max(s.total_timesteps // max(s.num_checkpoints, 1), 1)

    class Progress(BaseCallback):
        def __init__(self):
            super().__init__()
            self.next_at = self.num_timesteps + every
            self.episodes: list[dict] = []

        def _on_step(self) -> bool:
            for info in self.locals.get("infos", []):
                if "episode" in info:
                    self.episodes.append(info["episode"])
            if self.num_timesteps >= self.next_at:
                self.next_at += every
                self._report()
            return True

        def _report(self):
            row = {}
            if self.episodes:
                row["return_mean"] = float(np.mean([e["r"] for e in self.episodes]))
            self.episodes = []
            save_sb3(root, self.num_timesteps, self.model, meta)
            on_progress(self.num_timesteps, row)

    if resume_from is not None:
        model, old, normalizer = load_sb3(resume_from)
        if old["env"] != env.name:
            raise ValueError(f"resume: checkpoint is for {old['env']}, the config trains {env.name}")
        if normalizer is not None:
            normalizer.set_venv(venv)
            normalizer.training = True
            venv = normalizer
        model.set_env(venv)
        model.num_timesteps = int(old["step"])
    else:
        if s.normalize:
            venv = VecNormalize(venv, norm_obs=True, norm_reward=True, gamma=s.gamma)
        model = PPO(
            "MlpPolicy",
            venv,
            n_steps=s.n_steps,
            batch_size=s.batch_size,
            n_epochs=s.n_epochs,
            learning_rate=s.learning_rate,
            gamma=s.gamma,
            gae_lambda=s.gae_lambda,
            clip_range=s.clip_range,
            ent_coef=s.ent_coef,
            policy_kwargs={"net_arch": list(s.net_arch)},
            seed=config.seed,
            device="cpu",
            verbose=0,
        )
    remaining = max(s.total_timesteps - int(model.num_timesteps), 0)
    cb = Progress()
    if remaining:
        model.learn(total_timesteps=remaining, callback=cb, reset_num_timesteps=False)
    save_sb3(root, int(model.num_timesteps), model, meta)
    return model, int(model.num_timesteps)
