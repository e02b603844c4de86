"""One training job over several processes and hosts, on JAX's multi-controller runtime.

Every process runs the same ``sorogym train`` command; :func:`initialize` joins them into
one JAX runtime (``jax.distributed.initialize``) before anything touches a device. brax PPO
then runs data-parallel: each process steps ``ppo.num_envs / num_processes`` envs on its
local devices, gradients are averaged over every device of every process, and the
parameters stay identical everywhere. Process 0 (the primary) evaluates, logs, checkpoints
and exports; the others train and print the digest of their final parameters
(:func:`params_digest`), which equals the primary's ``eval.json["params_sha256"]``.

How processes find one another (:class:`ProcessGroup`):

* explicitly: ``--coordinator HOST:PORT --num-processes N --process-id I`` on every process
  (process 0's host serves as coordinator);
* from the cluster (``--distributed``): JAX detects Slurm (``srun``), Open MPI
  (``mpirun``) and Kubernetes job indices itself; ``JAX_COORDINATOR_ADDRESS`` overrides the
  coordinator it picks.

On CPU the collectives go through gloo (jax's default; ``JAX_CPU_COLLECTIVES_IMPLEMENTATION``
chooses another); GPUs use NCCL, TPUs their own interconnect. Nothing here changes jax's
configuration.
"""

from __future__ import annotations

import dataclasses
import hashlib

import jax
import numpy as np


@dataclasses.dataclass(frozen=True)
class ProcessGroup:
    """Where this process sits in a multi-process job.

    ``coordinator``: ``"host:port"`` of process 0's coordination service (None: from
    ``JAX_COORDINATOR_ADDRESS`` or the cluster); ``num_processes`` and ``process_id`` (None:
    from the cluster); ``auto``: let JAX detect the cluster (Slurm, Open MPI, Kubernetes)
    for whatever is None.
    """

    coordinator: str | None = None
    num_processes: int | None = None
    process_id: int | None = None
    auto: bool = False

    def __post_init__(self):
        explicit = (self.coordinator, self.num_processes, self.process_id)
        if not self.auto and any(v is None for v in explicit) and any(v is not None for v in explicit):
            raise ValueError(
                "multi-process training needs --coordinator, --num-processes and --process-id together "
                "(or --distributed to take them from the cluster)"
            )
        if self.num_processes is not None and self.num_processes < 1:
            raise ValueError(f"num_processes: must be >= 1, got {self.num_processes}")
        if self.process_id is not None and self.num_processes is not None:
            if not 0 <= self.process_id < self.num_processes:
                raise ValueError(f"process_id: must lie in [0, {self.num_processes}), got {self.process_id}")
        if self.coordinator is not None and ":" not in self.coordinator:
            raise ValueError(f"coordinator: expected 'host:port', got {self.coordinator!r}")

    @property
    def requested(self) -> bool:
        """Whether this describes a multi-process job at all."""
        return self.auto or self.coordinator is not None


def initialize(group: ProcessGroup) -> None:
    """Join the multi-process job ``group`` describes (nothing when it describes none).
    Must run before the first JAX computation of the process."""
    if not group.requested:
        return
    jax.distributed.initialize(
        coordinator_address=group.coordinator,
        num_processes=group.num_processes,
        process_id=group.process_id,
    )


def is_primary() -> bool:
    """Whether this is process 0 (the one that logs, checkpoints and evaluates)."""
    return jax.process_index() == 0


def params_digest(params) -> str:
    """SHA-256 over the bytes of every leaf of ``params`` (in pytree order, as float32),
    to check that the processes of a job hold the same parameters."""
    h = hashlib.sha256()
    for leaf in jax.tree.leaves(params):
        a = np.ascontiguousarray(np.asarray(leaf, dtype=np.float32))
        h.update(str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()
