"""One PPO job over two processes on localhost (JAX's multi-controller runtime, gloo
collectives on CPU): both processes train in step and end with the same parameters, and
only process 0 writes a run."""

import json
import re
import socket
import subprocess
import sys

from _isolated import REPO_ROOT, _child_environment

from sorogym.agents.distributed import ProcessGroup

TINY = [
    "configs/ppo/tendon_tracking.yaml",
    "env.episode_length_s=0.4",
    "ppo.num_timesteps=640",
    "ppo.num_envs=8",
    "ppo.batch_size=8",
    "ppo.num_minibatches=2",
    "ppo.unroll_length=5",
    "ppo.num_updates_per_batch=1",
    "ppo.num_evals=2",
    "ppo.num_eval_envs=4",
    "ppo.policy_hidden_layer_sizes=[8]",
    "ppo.value_hidden_layer_sizes=[8]",
    "eval.num_episodes=4",
    "logging.wandb=disabled",
    "logging.video=false",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def test_two_processes_train_one_ppo_job_and_agree_on_the_parameters(tmp_path):
    port = _free_port()
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "sorogym", "train", *TINY, f"logging.output_root={tmp_path}", "--quiet"]
            + ["--coordinator", f"localhost:{port}", "--num-processes", "2", "--process-id", str(i)],
            cwd=REPO_ROOT,
            env=_child_environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for i in range(2)
    ]
    try:
        outputs = [p.communicate(timeout=600)[0] for p in procs]
    finally:
        for p in procs:
            p.kill()
    for i, (p, out) in enumerate(zip(procs, outputs)):
        assert p.returncode == 0, f"process {i} failed:\n{out[-4000:]}"
    runs = list(tmp_path.glob("TendonTracking-v0/ppo/*/eval.json"))
    assert len(runs) == 1, runs  # process 0 alone writes
    result = json.loads(runs[0].read_text())
    assert result["num_processes"] == 2 and result["env_steps"] >= 640
    replica = re.search(r"process 1 of 2 done, params_sha256: ([0-9a-f]{64})", outputs[1])
    assert replica, outputs[1][-2000:]
    assert replica.group(1) == result["params_sha256"]
    checkpoints = sorted(runs[0].parent.glob("checkpoints/step_*"))
    assert checkpoints[-1].name.endswith("640")


def test_process_group_flags_are_checked():
    import pytest

    with pytest.raises(ValueError, match="--coordinator, --num-processes and --process-id together"):
        ProcessGroup(coordinator="localhost:1234")
    with pytest.raises(ValueError, match="process_id: must lie in"):
        ProcessGroup("localhost:1234", 2, 2)
    with pytest.raises(ValueError, match="host:port"):
        ProcessGroup("localhost", 2, 0)
    assert not ProcessGroup().requested and ProcessGroup(auto=True).requested


def test_only_ppo_trains_across_processes():
    import pytest

    from sorogym.agents.config import load_config
    from sorogym.agents.run import check_multiprocess

    check_multiprocess(load_config("configs/ppo/tendon_tracking.yaml", {}))
    with pytest.raises(ValueError, match="algo=sb3_ppo: only brax PPO"):
        check_multiprocess(load_config("configs/sb3/tendon_tracking.yaml", {}))
