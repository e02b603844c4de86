"""Several fixed-base soft arms in one plane: two arms on a shared torso, a row of fingers.

:class:`PlanarArms` mounts ``K`` copies of one fixed-base :class:`~sorogym.models.PlanarPCS`
arm at fixed poses ``mounts[k] = (theta_k, x_k, y_k)`` (the arm's base direction [rad] and
base position [m] in the world) and sums them into one model (:mod:`._planar_arm_set`):
``q = [q_arm_0, ..., q_arm_K-1]`` ``(K n_a,)``, ``u = [u_arm_0, ..., u_arm_K-1]``. Nothing
joins the arms but their shared parameters; a task couples them through contact between
the arms or with objects (the arms of a :class:`~sorogym.models.PlanarScene`). ``M``,
``S`` and ``D`` are block diagonal, one block per arm, and each block is that of the lone
arm mounted at ``mounts[k]``.
"""

from __future__ import annotations

from typing import final

import equinox as eqx
from jaxtyping import Array, Float

from ._params import RodParams
from ._pcs import PlanarPCS
from ._planar_arm_set import PlanarArmSet, checked_mounts, stack_modules


@final
class PlanarArms(PlanarArmSet):
    """``K`` identical fixed-base planar arms at the poses ``mounts`` (module docstring).

    Args:
        arm: a :class:`~sorogym.models.PlanarPCS` with a fixed base (its actuation is every
            arm's; its own base pose is replaced by the mounts).
        mounts: ``(K, 3)`` ``[theta, x, y]`` per arm: the base direction [rad] of arm ``k``
            from world +x and its base position [m], ``K >= 1``.

    ``params`` are the arm's :class:`~sorogym.models.RodParams` (shared by every arm):
    :meth:`with_params` changes every arm at once and keeps the mounts. Raises
    ``TypeError`` for a floating-base or non-planar arm and ``ValueError`` naming
    ``mounts`` for a shape other than ``(K, 3)`` or non-finite entries.
    """

    arm: PlanarPCS
    num_arms: int = eqx.field(static=True)
    mounts: Float[Array, "K 3"]
    _arms: PlanarPCS

    def __init__(self, arm: PlanarPCS, mounts):
        if not isinstance(arm, PlanarPCS) or arm.floating_base:
            raise TypeError("arm: expected a PlanarPCS with a fixed base (floating_base=False)")
        dtype = arm.params.length.dtype
        mounts = checked_mounts(mounts, dtype)
        self.arm = arm
        self.num_arms = int(mounts.shape[0])
        self.mounts = mounts
        self._arms = stack_modules(
            [
                arm.with_params(arm.params.replace(base_rotation=mounts[k, 0], base_position=mounts[k, 1:]))
                for k in range(self.num_arms)
            ]
        )

    @property
    def total_mass(self) -> Float[Array, ""]:
        """All arms [kg]."""
        return self.num_arms * self.arm_mass

    def with_params(self, params: RodParams) -> PlanarArms:
        """The same arms at the same mounts with new parameters (same shapes: no recompilation)."""
        return PlanarArms(self.arm.with_params(params), self.mounts)


__all__ = ["PlanarArms"]
