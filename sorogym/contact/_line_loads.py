"""Line loads: forces per unit length along a rod's backbone for the rods' own quadrature
(:data:`sorogym.models.LineLoad`, stepped linearly implicitly by the fixed-step schemes).

A line load is called with the rod's quadrature points (:class:`~sorogym.models.LinePoints`,
world frame, ``k = 2`` for a planar rod, ``3`` for a spatial one) and returns the force per
unit length ``(P, k)`` [N/m] at each. Each point's force depends on that point alone, so the
schemes obtain its velocity Jacobian from ``k`` forward-mode products and put it in their
iteration matrix: regularised Coulomb friction, whose slope ``mu f_n / eps`` makes an
explicit step unstable beyond ``h ~ 2 m eps / (mu f_n)``, then steps at the rod's own
time scale.

* :class:`GroundFriction`: a rod lying on flat ground, pressed by its own weight
  (``f_n = rho A g_n`` per unit length, ``g_n`` the gravity normal to the ground): the
  snake, the crawler seen from above. A planar rod's plane *is* the ground plane; on a
  slope of angle ``alpha``, ``g_n = g cos(alpha)`` and the in-plane component
  ``g sin(alpha)`` goes into the rod's own gravity. Isotropic or anisotropic (forward,
  backward and lateral coefficients along the local backbone tangent) as
  :class:`ContactLaw`.
* :class:`LineDrag`: a fluid law of ``_fluids.py`` (resistive-force theory, Morison drag)
  as a line load (planar rods move in the x-y plane of the fluid).
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from ..models import LinePoints
from ._fluids import MorisonDrag, ResistiveForceTheory
from ._laws import ContactLaw, _checked


def _embed(x: Array) -> Array:
    """``(P, k)`` -> ``(P, 3)``: planar vectors in the world x-y plane."""
    return x if x.shape[-1] == 3 else jnp.pad(x, ((0, 0), (0, 3 - x.shape[-1])))


class GroundFriction(eqx.Module):
    """Regularised Coulomb friction per unit length of a rod lying on flat ground under its
    own weight (module docstring).

    Args:
        friction: one coefficient or ``(mu_forward, mu_backward, mu_lateral)`` along the
            local backbone tangent (forward: towards the tip).
        slip_velocity: ``eps`` [m/s] (positive), the regularisation of stick and slip: a
            point sliding at ``|v| >> eps`` feels ``mu f_n``, one pushed by less than that
            creeps at ``|v| ~ eps``.
        normal_acceleration: ``g_n`` [m/s^2] (positive), the gravity component pressing the
            rod on the ground (``g cos(alpha)`` on a slope of angle ``alpha``).
        dtype: floating dtype of the parameters.

    The ground's normal is world +z: for a spatial rod, the ground is the plane its points
    lie on, for a planar rod, the rod's own plane. Raises ``ValueError`` naming the field
    for negative or non-finite coefficients or a non-positive slip velocity or normal
    acceleration.
    """

    law: ContactLaw
    normal_acceleration: Float[Array, ""]

    def __init__(self, friction, slip_velocity=1e-3, normal_acceleration=9.81, dtype=None):
        # the law's stiffness is not used: the normal force is the weight
        self.law = ContactLaw(1.0, friction=friction, slip_velocity=slip_velocity, dtype=dtype)
        self.normal_acceleration = _checked(
            "normal_acceleration", normal_acceleration, self.law.stiffness.dtype, positive=True, shape=()
        )

    def normal_force(self, points: LinePoints) -> Float[Array, " P"]:
        """``rho A g_n`` ``(P,)`` [N/m] at the points."""
        return points.line_density * self.normal_acceleration

    def __call__(self, points: LinePoints) -> Float[Array, "P k"]:
        """Friction per unit length ``(P, k)`` [N/m] at the points."""
        k = points.velocities.shape[-1]
        v, t = _embed(points.velocities), _embed(points.tangents)
        up = jnp.zeros_like(v).at[:, 2].set(1.0)
        forces = self.law.friction_force(self.normal_force(points), v, up, t if self.law.anisotropic else None)
        return forces[:, :k]


class LineDrag(eqx.Module):
    """A fluid law (:class:`ResistiveForceTheory` or :class:`MorisonDrag`) as a line load:
    the drag per unit length at the points (planar rods in the fluid's x-y plane; a current
    along z does not reach them)."""

    law: ResistiveForceTheory | MorisonDrag

    def __call__(self, points: LinePoints) -> Float[Array, "P k"]:
        """Drag per unit length ``(P, k)`` [N/m] at the points."""
        k = points.velocities.shape[-1]
        v, t = _embed(points.velocities), _embed(points.tangents)
        if isinstance(self.law, MorisonDrag):
            return self.law.line_forces(v, t, points.radii)[:, :k]
        return self.law.line_forces(v, t)[:, :k]


__all__ = ["GroundFriction", "LineDrag"]
