"""A planar star: a rigid hub free in the plane with identical soft arms around its rim.

:class:`PlanarStar` is the planar branched model of the multi-arm crawlers seen from above
(a brittle star, a planar octopus): a rigid disc free in the world x-y plane and ``K``
identical :class:`~sorogym.models.PlanarPCS` arms leaving its rim radially at the angles
``phi_k = 2 pi k / K``. Every arm is a floating-base planar rod whose floating frame is the
hub's frame and whose mount is its place on the rim, so each arm's kinematics, Jacobians,
dynamics, tendons and line loads are the serial kernel's own (its moving root carries the
hub's columns down the arm), evaluated for the ``K`` arms under one ``vmap`` and summed
into the star's coordinates.

Coordinates: ``q = [theta, x, y, q_arm_0, ..., q_arm_K-1]`` ``(3 + K n_a,)``: the hub's
angle [rad] and centre [m] in the world, then each arm's strain coordinates (``n_a`` per
arm); ``qd = dq/dt`` (world-frame hub rates, so ``nq = n``: every scheme steps it as a
vector space). Arm ``k`` sees the local coordinates ``[theta, x, y, q_arm_k]``.

Mass: the hub's mass at its centre with its polar moment of inertia, plus the arms'
(``M = M_hub + sum_k P_k^T M_k P_k``, ``P_k`` the selection of arm ``k``'s coordinates);
the hub's terms are constant in these coordinates, so it adds no Coriolis force. Gravity
(the arms' in-plane ``params.gravity``; zero on level ground) acts on the hub and the arms.
Elastic and damping forces are the arms' (diagonal, zero on the hub). Actuators: each arm's
own actuation (tendons or generalized forces), ``u = [u_arm_0, ..., u_arm_K-1]``.
"""

from __future__ import annotations

from typing import final

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ._params import RodParams, check_field, check_shape
from ._pcs import PlanarPCS
from ._planar_arm_set import PlanarArmSet, stack_modules


@final
class PlanarStar(PlanarArmSet):
    """A rigid hub free in the plane with ``num_arms`` identical soft arms (module docstring).

    Args:
        arm: the arm, a :class:`~sorogym.models.PlanarPCS` with ``floating_base=True`` (its
            actuation is every arm's; its own base pose is replaced by its mount on the rim).
        num_arms: ``K`` >= 1, spaced evenly from world +x at ``theta = 0``.
        hub_radius: [m], the arms' roots on the rim.
        hub_mass: [kg] at the hub's centre.
        hub_inertia: polar moment of inertia [kg m^2] about the hub's centre (a uniform disc:
            ``m r^2 / 2``).

    ``params`` are the arm's :class:`~sorogym.models.RodParams` (shared by every arm):
    :meth:`with_params` changes every arm at once, which is what domain randomisation of the
    material does.
    """

    arm: PlanarPCS
    num_arms: int = eqx.field(static=True)
    hub_radius: Float[Array, ""]
    hub_mass: Float[Array, ""]
    hub_inertia: Float[Array, ""]
    _arms: PlanarPCS  # the K mounted arms, array leaves stacked on a leading axis

    def __init__(self, arm: PlanarPCS, num_arms: int, hub_radius, hub_mass, hub_inertia):
        if not isinstance(arm, PlanarPCS) or not arm.floating_base:
            raise TypeError("arm: expected a PlanarPCS with floating_base=True")
        if int(num_arms) != num_arms or num_arms < 1:
            raise ValueError(f"num_arms: must be an integer >= 1, got {num_arms}")
        dtype = arm.params.length.dtype
        self.arm = arm
        self.num_arms = int(num_arms)
        for name, value in (("hub_radius", hub_radius), ("hub_mass", hub_mass), ("hub_inertia", hub_inertia)):
            value = jnp.asarray(value, dtype)
            check_shape(name, value, ())
            check_field(name, value, positive=True)
            setattr(self, name, value)
        angles = jnp.asarray(self.arm_angles, dtype)
        roots = self.hub_radius * jnp.stack([jnp.cos(angles), jnp.sin(angles)], -1)
        mounted = [
            arm.with_params(arm.params.replace(base_rotation=angles[k], base_position=roots[k]))
            for k in range(self.num_arms)
        ]
        self._arms = stack_modules(mounted)

    # -- structure ---------------------------------------------------------------------

    @property
    def arm_angles(self) -> np.ndarray:
        """``(K,)`` [rad]: each arm's direction in the hub frame."""
        return 2.0 * np.pi * np.arange(self.num_arms) / self.num_arms

    @property
    def total_mass(self) -> Float[Array, ""]:
        """Hub plus arms [kg]."""
        return self.hub_mass + self.num_arms * self.arm_mass

    def with_params(self, params: RodParams) -> PlanarStar:
        """The same star with new arm parameters (same shapes: no recompilation)."""
        return PlanarStar(self.arm.with_params(params), self.num_arms, self.hub_radius, self.hub_mass, self.hub_inertia)

    # -- the hub -----------------------------------------------------------------------

    def _root_inertia_matrix(self, dtype) -> Array:
        diagonal = jnp.stack([self.hub_inertia, self.hub_mass, self.hub_mass]).astype(dtype)
        return jnp.zeros((self.num_dofs,) * 2, dtype).at[:3, :3].set(jnp.diag(diagonal))

    def _root_gravity(self) -> Array:
        """``G`` on the hub's coordinates: its in-plane weight ``-m g`` on ``(x, y)``."""
        g = self.params.gravity
        return jnp.concatenate([jnp.zeros((1,), g.dtype), -self.hub_mass * g])

    def _root_gravitational_energy(self, q) -> Array:
        return -self.hub_mass * (self.params.gravity @ q[1:3])

    def hub_pose(self, q: Float[Array, " n"]) -> Float[Array, "3 3"]:
        """The hub's pose in the world, a 3x3 homogeneous matrix."""
        c, s = jnp.cos(q[0]), jnp.sin(q[0])
        return jnp.array([[c, -s, q[1]], [s, c, q[2]], [0.0, 0.0, 1.0]], q.dtype)

    def centre_of_mass(self, q: Float[Array, " n"]) -> Float[Array, " 2"]:
        """The star's centre of mass ``(2,)`` [m] (world frame)."""
        arms = self._on_arms(lambda a, qa: a.centre_of_mass(qa), self.arm_coordinates(q))
        return (self.hub_mass * q[1:3] + self.arm_mass * jnp.sum(arms, 0)) / self.total_mass

    # -- momentum ----------------------------------------------------------------------

    def linear_momentum(self, q, qd) -> Float[Array, " 2"]:
        """Total linear momentum ``(2,)`` [kg m/s] (world frame): the momentum conjugate to
        the hub's position, rows 1-2 of ``M qd``."""
        return (self.inertia_matrix(q) @ qd)[1:3]

    def angular_momentum(self, q, qd) -> Float[Array, ""]:
        """Total angular momentum [kg m^2/s] about the world origin: the momentum conjugate
        to the hub's angle (about the hub's centre) plus the moment of the linear momentum
        carried by the hub's position."""
        p = self.inertia_matrix(q) @ qd
        return p[0] + q[1] * p[2] - q[2] * p[1]


__all__ = ["PlanarStar"]
