"""Actuation of a body tree: the actuators of its rod bodies and motors on its joints.

A rod body of a :class:`~sorogym.models.BodyTree` keeps the actuator it was built with
(tendons, pressure chambers, generalized forces...). Those actuators act between parts of
their own rod (a tendon is anchored on the rod it runs along), so their generalized force
lives on that rod's coordinates; the tree places it there. Rod bodies of identical
structure are batched: their actuators arrive stacked along a leading axis and are applied
under one ``vmap``. Cables routed through via points on several bodies (a tendon through
a chain of spacer plates or bones, :mod:`sorogym.models._tree_cables`) act across the tree:
the tree hands their lengths and actuation columns ``-(dL/dq)^T`` in the context, and
their tensions pull only. Joint motors are generalized forces on chosen velocity
coordinates of the joints (a wrist torque, a cart's force).

Inputs ``u`` are ordered as the rod bodies were declared (each body's own inputs in its
actuator's order), then the tree's cables (tensions [N]), then the joint motors.
"""

from __future__ import annotations

from typing import final

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ._base import Actuation, ActuationContext


@final
class TreeContext(ActuationContext):
    """A body tree's actuated rods at one configuration.

    Attributes:
        q: ``(nq,)`` tree configuration.
        rods: one stacked context per actuated group of identical rod bodies (leading axis
            over the group's bodies), each what the rods' own models hand their actuators.
        num_velocities: (static) ``n``, the length of generalized forces.
        cable_lengths: ``(k,)`` [m] lengths of the tree's cables (``None`` without cables).
        cable_matrix: ``(n, k)`` their actuation columns ``-(dL/dq)^T``.
        cable_contraction: ``(k,)`` [m] ``L(q_0) - L(q)``, the work-conjugate coordinates.
    """

    q: Array
    rods: tuple
    num_velocities: int = eqx.field(static=True)
    cable_lengths: Array | None = None
    cable_matrix: Array | None = None
    cable_contraction: Array | None = None

    @property
    def num_dofs(self) -> int:
        return self.num_velocities


@final
class TreeActuation(Actuation):
    """Rod actuators placed on their rods' coordinates, plus joint motors (module docstring).

    Attributes:
        actuators: per actuated group, the stacked actuators of its rod bodies.
        input_slots: (static) per group, ``(G, m_b)`` indices into ``u``.
        velocity_slots: (static) per group, ``(G, n_b)`` indices of the rods' coordinates
            among the tree's velocity coordinates.
        motor_dofs: (static) velocity coordinates driven by joint motors.
        motor_inputs: (static) their indices into ``u``.
        motor_positions: (static) the motors' configuration coordinates (Euclidean joints).
        num_inputs: (static) ``m``.
        cable_inputs: (static) the indices into ``u`` of the tree's cable tensions.
    """

    actuators: tuple
    input_slots: tuple = eqx.field(static=True)
    velocity_slots: tuple = eqx.field(static=True)
    motor_dofs: tuple[int, ...] = eqx.field(static=True)
    motor_inputs: tuple[int, ...] = eqx.field(static=True)
    motor_positions: tuple[int, ...] = eqx.field(static=True)
    num_inputs: int = eqx.field(static=True)
    cable_inputs: tuple[int, ...] = eqx.field(static=True, default=())

    @property
    def num_actuators(self) -> int:
        return self.num_inputs

    def _place(self, slots, values: Array, n: int) -> Array:
        """Scatter ``(G, n_b, ...)`` rod values onto ``(n, ...)`` velocity coordinates."""
        idx = np.asarray(slots)
        out = jnp.zeros((n, *values.shape[2:]), values.dtype)
        return out.at[idx.reshape(-1)].add(values.reshape(-1, *values.shape[2:]))

    def effort(self, u: Float[Array, " m"]) -> Float[Array, " m"]:
        out = u
        for acts, slots in zip(self.actuators, self.input_slots, strict=True):
            idx = np.asarray(slots)
            efforts = jax.vmap(lambda a, ub: a.effort(ub))(acts, u[idx])
            out = out.at[idx.reshape(-1)].set(efforts.reshape(-1))
        if self.cable_inputs:  # cables pull only: a negative command is a slack cable
            ci = np.asarray(self.cable_inputs)
            out = out.at[ci].set(jnp.maximum(u[ci], 0.0))
        return out

    def matrix(self, context: TreeContext) -> Float[Array, "n m"]:
        n = context.num_velocities
        A = jnp.zeros((n, self.num_inputs), context.q.dtype)
        for acts, ctx, uslots, vslots in zip(
            self.actuators, context.rods, self.input_slots, self.velocity_slots, strict=True
        ):
            cols = jax.vmap(lambda a, c: a.matrix(c))(acts, ctx)  # (G, n_b, m_b)
            vi, ui = np.asarray(vslots), np.asarray(uslots)
            A = A.at[vi[:, :, None], ui[:, None, :]].add(cols)
        if self.cable_inputs:
            A = A.at[:, np.asarray(self.cable_inputs)].set(context.cable_matrix)
        if self.motor_dofs:
            A = A.at[np.asarray(self.motor_dofs), np.asarray(self.motor_inputs)].set(1.0)
        return A

    def force(self, context: TreeContext, u: Float[Array, " m"]) -> Float[Array, " n"]:
        n = context.num_velocities
        tau = jnp.zeros((n,), u.dtype)
        for acts, ctx, uslots, vslots in zip(
            self.actuators, context.rods, self.input_slots, self.velocity_slots, strict=True
        ):
            forces = jax.vmap(lambda a, c, ub: a.force(c, ub))(acts, ctx, u[np.asarray(uslots)])
            tau = tau + self._place(vslots, forces, n)
        if self.cable_inputs:
            tau = tau + context.cable_matrix @ jnp.maximum(u[np.asarray(self.cable_inputs)], 0.0)
        if self.motor_dofs:
            tau = tau.at[np.asarray(self.motor_dofs)].add(u[np.asarray(self.motor_inputs)])
        return tau

    def lengths(self, context: TreeContext) -> Float[Array, " m"]:
        """Tendon path lengths ``(m,)`` [m]; ``TypeError`` when joint motors or rods without
        tendon-like actuators are present."""
        if self.motor_dofs:
            raise TypeError("TreeActuation with joint motors has no tendon lengths")
        out = jnp.zeros((self.num_inputs,), context.q.dtype)
        for acts, ctx, uslots in zip(self.actuators, context.rods, self.input_slots, strict=True):
            lengths = jax.vmap(lambda a, c: a.lengths(c))(acts, ctx)
            out = out.at[np.asarray(uslots).reshape(-1)].set(lengths.reshape(-1))
        if self.cable_inputs:
            out = out.at[np.asarray(self.cable_inputs)].set(context.cable_lengths)
        return out

    def coordinates(self, context: TreeContext) -> Float[Array, " m"]:
        """Work-conjugate coordinates ``(m,)``: each rod actuator's own, and the joint
        coordinate of each motor (``d phi/dq^T = A`` on the velocity coordinates)."""
        out = jnp.zeros((self.num_inputs,), context.q.dtype)
        for acts, ctx, uslots in zip(self.actuators, context.rods, self.input_slots, strict=True):
            coords = jax.vmap(lambda a, c: a.coordinates(c))(acts, ctx)
            out = out.at[np.asarray(uslots).reshape(-1)].set(coords.reshape(-1))
        if self.cable_inputs:
            out = out.at[np.asarray(self.cable_inputs)].set(context.cable_contraction)
        if self.motor_dofs:
            out = out.at[np.asarray(self.motor_inputs)].set(context.q[np.asarray(self.motor_positions)])
        return out
