"""A planar soft gripper: soft fingers on a rigid palm that slides on a vertical rail.

:class:`PlanarGripper` is a gripper seen from the side, in the vertical world x-y plane
(gravity along -y): a rigid palm on a prismatic lift and ``K`` identical
:class:`~sorogym.models.PlanarPCS` fingers mounted on it. The palm moves along world y
alone; every finger is a floating-base planar rod whose floating frame is the palm's, with
that frame's angle and ``x`` held at zero and its ``y`` the lift's coordinate, so each
finger's kinematics, Jacobians, dynamics, tendons and line loads are the serial kernel's
own (the moving root carries the lift's column down the finger), evaluated for the ``K``
fingers under one ``vmap`` and summed into the gripper's coordinates
(:mod:`._planar_arm_set`).

Coordinates: ``q = [z, q_finger_0, ..., q_finger_K-1]`` ``(1 + K n_a,)``: the palm's
displacement ``z`` [m] along world +y from its mount ``palm_position``, then each finger's
strain coordinates. Inputs: ``u = [u_finger_0, ..., u_finger_K-1, f_lift]``: each
finger's own (tendon tensions [N] for tendon-driven fingers), then the lift's force [N]
along +y on the palm.

The lift is a series-elastic drive: a spring of ``lift_stiffness`` [N/m] and a damper of
``lift_damping`` [N s/m] hold the palm at ``z = 0``, so a force ``f_lift`` holds the
unloaded gripper at ``z = (f_lift - W) / k`` (``W`` its weight): a position command through
its spring, like a finger's bending moment through its own stiffness. Both are diagonal
terms of ``S`` and ``D``, so the elastic force stays affine with constant matrices and the
trapezoidal schemes take the lift's spring implicitly.

Mass: the palm's mass on ``z`` plus the fingers' (``M = m_p e_z e_z^T + sum_k P_k^T M_k
P_k``, ``P_k`` the selection of finger ``k``'s coordinates, with the floating base's held
angle and ``x`` dropped: the rail carries the forces along them). Gravity (the fingers'
``params.gravity``, world frame) acts on the palm and the fingers.
"""

from __future__ import annotations

from typing import final

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ._params import RodParams, check_field, check_shape
from ._pcs import PlanarPCS
from ._planar_arm_set import PlanarArmSet, checked_mounts, stack_modules


@final
class PlanarGripper(PlanarArmSet):
    """Soft fingers on a palm on a vertical prismatic lift (module docstring).

    Args:
        finger: a :class:`~sorogym.models.PlanarPCS` with ``floating_base=True`` (its
            actuation is every finger's; its own base pose is replaced by its mount).
        mounts: ``(K, 3)`` ``[theta, x, y]`` per finger: its base direction [rad] from world
            +x (``-pi/2``: hanging down) and base position [m] relative to the palm frame.
        palm_position: ``(2,)`` [m], the palm frame's origin in the world at ``z = 0``.
        palm_mass: [kg], moving with the lift.
        lift_stiffness: [N/m], the lift's spring towards ``z = 0``.
        lift_damping: [N s/m], the lift's damper.

    ``params`` are the finger's :class:`~sorogym.models.RodParams` (shared by every finger):
    :meth:`with_params` changes every finger at once and keeps the palm. Raises
    ``TypeError`` for a fixed-base finger and ``ValueError`` naming the field for bad
    mounts, a non-positive palm mass or lift stiffness, or a negative lift damping.
    """

    arm: PlanarPCS
    num_arms: int = eqx.field(static=True)
    mounts: Float[Array, "K 3"]
    palm_position: Float[Array, " 2"]
    palm_mass: Float[Array, ""]
    lift_stiffness: Float[Array, ""]
    lift_damping: Float[Array, ""]
    _arms: PlanarPCS

    def __init__(self, finger: PlanarPCS, mounts, palm_position, palm_mass, lift_stiffness, lift_damping):
        if not isinstance(finger, PlanarPCS) or not finger.floating_base:
            raise TypeError("finger: expected a PlanarPCS with floating_base=True (the palm is its floating base)")
        dtype = finger.params.length.dtype
        mounts = checked_mounts(mounts, dtype)
        palm_position = jnp.asarray(palm_position, dtype)
        check_shape("palm_position", palm_position, (2,))
        check_field("palm_position", palm_position)
        self.arm = finger
        self.num_arms = int(mounts.shape[0])
        self.mounts = mounts
        self.palm_position = palm_position
        for name, value, positive in (
            ("palm_mass", palm_mass, True),
            ("lift_stiffness", lift_stiffness, True),
            ("lift_damping", lift_damping, False),
        ):
            value = jnp.asarray(value, dtype)
            check_shape(name, value, ())
            check_field(name, value, positive=positive, nonnegative=not positive)
            setattr(self, name, value)
        self._arms = stack_modules(
            [
                finger.with_params(
                    finger.params.replace(base_rotation=mounts[k, 0], base_position=palm_position + mounts[k, 1:])
                )
                for k in range(self.num_arms)
            ]
        )

    # -- structure ---------------------------------------------------------------------

    @property
    def root_dofs(self) -> int:
        """1: the palm's displacement along the rail."""
        return 1

    def _root_index(self) -> np.ndarray:
        """The floating base's angle and ``x`` held, its ``y`` the lift's coordinate."""
        return np.array([self.num_dofs, self.num_dofs, 0])

    @property
    def root_actuators(self) -> int:
        """1: the lift's force."""
        return 1

    @property
    def fingers(self) -> int:
        """``K``: the number of fingers."""
        return self.num_arms

    @property
    def finger_length(self) -> Float[Array, ""]:
        """One finger's length at rest [m]."""
        return self.arm.total_length

    @property
    def total_mass(self) -> Float[Array, ""]:
        """Palm plus fingers [kg]: what the lift carries."""
        return self.palm_mass + self.num_arms * self.arm_mass

    def with_params(self, params: RodParams) -> PlanarGripper:
        """The same gripper with new finger parameters (same shapes: no recompilation)."""
        return PlanarGripper(
            self.arm.with_params(params),
            self.mounts,
            self.palm_position,
            self.palm_mass,
            self.lift_stiffness,
            self.lift_damping,
        )

    def palm_centre(self, q: Float[Array, " n"]) -> Float[Array, " 2"]:
        """The palm frame's origin ``(2,)`` [m] in the world."""
        return self.palm_position + jnp.stack([jnp.zeros((), q.dtype), q[0]])

    # -- the palm and its lift -------------------------------------------------------------

    def _root_inertia_matrix(self, dtype) -> Array:
        return jnp.zeros((self.num_dofs,) * 2, dtype).at[0, 0].set(self.palm_mass.astype(dtype))

    def _root_gravity(self) -> Array:
        """``G`` on ``z``: the palm's weight along the rail, ``-m_p g_y``."""
        return -self.palm_mass * self.params.gravity[1:2]

    def _root_gravitational_energy(self, q) -> Array:
        return -self.palm_mass * self.params.gravity[1] * q[0]

    def _root_stiffness(self) -> Array:
        return self.lift_stiffness[None]

    def _root_damping(self) -> Array:
        return self.lift_damping[None]

    def _root_actuation_matrix(self, dtype) -> Array:
        return jnp.ones((1, 1), dtype)

    def weight_on_lift(self) -> Float[Array, ""]:
        """The gripper's weight along the rail [N] (``-M g_y``, positive under downward
        gravity): the lift force that holds it at ``z = 0``."""
        return -self.total_mass * self.params.gravity[1]


__all__ = ["PlanarGripper"]
