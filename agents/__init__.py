"""Training and evaluation (installed as ``sorogym.agents``).

* :mod:`~sorogym.agents.config`: YAML run configs, dotted overrides, validation;
* :mod:`~sorogym.agents.trainers`: ``algo`` -> :class:`~sorogym.agents.trainers.Trainer`;
* :mod:`~sorogym.agents.ppo`: brax PPO through the training wrapper;
* :mod:`~sorogym.agents.sb3`: the Stable-Baselines3 PPO baseline;
* :mod:`~sorogym.agents.distill`: BC and DAgger from an env's expert (PPO warm starts);
* :mod:`~sorogym.agents.networks`: the networks PPO and distillation train;
* :mod:`~sorogym.agents.evaluate`: parallel-episode evaluation of any policy;
* :mod:`~sorogym.agents.checkpoint`: msgpack + JSON checkpoints;
* :mod:`~sorogym.agents.runlog`: run folders, CSV/JSON/wandb logging, learning curves;
* :mod:`~sorogym.agents.run`: train a run config, evaluate/render/export a checkpoint;
* :mod:`~sorogym.agents.video`: rollout videos (MP4/GIF); :mod:`~sorogym.agents.sweep`: sweeps;
* :mod:`~sorogym.agents.plan`: planning demos; :mod:`~sorogym.agents.cli`: the ``sorogym``
  command.

Modules import one another one way only (``tests/test_agents_imports.py``).
"""
