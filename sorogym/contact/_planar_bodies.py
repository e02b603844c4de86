"""Contact between a planar robot and the rigid bodies of a :class:`~sorogym.PlanarScene`
(the table plane seen from above, world frame, SI units).

Body outlines are **rounded rectangles** (:class:`~sorogym.models.PlanarBodies`): half
extents ``(a, b)`` [m] along the body's x and y axes grown by a corner radius ``rho`` [m]. ``a = b = 0`` is a
disc of radius ``rho`` (a puck), ``rho = 0`` a rectangle (a block), ``b = 0`` a stadium; an
env may draw the three numbers per episode, so one compiled step serves every shape. The signed distance of a
point with body-frame coordinates ``l`` is

    d(l) = |max(|l| - h, 0)| + min(max_i(|l_i| - h_i), 0) - rho,     h = (a, b),

with the outward normal its gradient. The robot is probed at backbone points, each a
disc of the cross-section radius ``r``: the depth is ``r - d`` (positive when they overlap),
the contact point on the body's surface ``c = x - d n``. :class:`BodyContact`'s normal
force acts on the robot at ``x`` and its opposite on the body at ``c``: both on one line
along ``n``, so contact conserves linear and angular momentum; it is taken implicitly in
the velocity by the integrators (a stiff contact does not limit the step).
"""

from __future__ import annotations

import abc

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

_TINY = 1e-20  # inside square roots: finite gradients at zero length


def _norm2(v: Array) -> Array:
    """``|v|`` over the last axis of length 2, finite gradient at 0."""
    return jnp.sqrt(v[..., 0] * v[..., 0] + v[..., 1] * v[..., 1] + _TINY)


def rounded_box_distance(
    local: Float[Array, "P 2"], half_extents: Float[Array, " 2"], corner_radius
) -> tuple[Float[Array, " P"], Float[Array, "P 2"]]:
    """``(signed distances (P,) [m], outward unit normals (P, 2))`` of body-frame points
    ``local`` to the rounded rectangle (module docstring)."""
    sign = jnp.where(local < 0, -1.0, 1.0).astype(local.dtype)
    excess = jnp.abs(local) - half_extents  # (P, 2)
    outer = jnp.maximum(excess, 0.0)
    outer_len = _norm2(outer)
    inner = jnp.minimum(jnp.maximum(excess[:, 0], excess[:, 1]), 0.0)
    distance = jnp.where(jnp.any(excess > 0, axis=-1), outer_len, 0.0) + inner - corner_radius
    along_x = (excess[:, 0] >= excess[:, 1])[:, None]
    inside_normal = jnp.where(along_x, jnp.asarray([1.0, 0.0], local.dtype), jnp.asarray([0.0, 1.0], local.dtype))
    outside = jnp.any(excess > 0, axis=-1)[:, None]
    normal = sign * jnp.where(outside, outer / outer_len[:, None], inside_normal)
    return distance, normal


def body_penetration(
    rotation: Float[Array, "2 2"],
    centre: Float[Array, " 2"],
    half_extents: Float[Array, " 2"],
    corner_radius,
    positions: Float[Array, "P 2"],
    radii: Float[Array, " P"],
) -> tuple[Float[Array, " P"], Float[Array, "P 2"], Float[Array, "P 2"]]:
    """``(depths (P,) [m], world outward normals (P, 2), surface points (P, 2) [m])`` of
    probe discs at world ``positions`` with ``radii`` against a rounded rectangle posed at
    ``(rotation, centre)``."""
    local = (positions - centre) @ rotation  # R^T (x - p)
    distance, normal_local = rounded_box_distance(local, half_extents, corner_radius)
    normal = normal_local @ rotation.T
    return radii - distance, normal, positions - distance[:, None] * normal


class NormalContactLoad(eqx.Module):
    """A compliant planar contact with regularised Coulomb friction, taken implicitly in the
    velocity, as a member of :class:`~sorogym.models.SceneLoad`'s ``interactions``
    (abstract: a subclass gives its contact geometry by :meth:`contact_rows`).

    Each overlapping probe feels the Hunt-Crossley normal force ``f_n = k delta (1 + d
    delta_dot)`` (:class:`~sorogym.contact.ContactLaw`'s, ``stiffness`` ``k`` [N/m],
    ``damping`` ``d`` [s/m]) and the friction ``f_t = -mu f_n v_t / sqrt(v_t^2 + eps^2)``
    along the contact tangent (``friction`` ``mu``, 0 by default: frictionless;
    ``slip_velocity`` ``eps`` [m/s]; ``v_t`` the probe's sliding speed over what it
    touches), and what it touches the opposite forces at the same point.

    **Implicit in the velocity.** On the frozen configuration of a step, the depth is taken
    at the step's end, ``delta(v) = delta_0 + lookahead delta_dot(v)`` with ``delta_dot =
    -J_n v``: the penalty's stiffness then enters the step's iteration matrix as
    ``lookahead k`` (plus ``k d delta``) on the contact normals, so a stiff contact between
    a light arm tip and what it touches does not limit the step (explicitly, ``sqrt(k /
    m_tip) h`` above about 1 rings and then diverges). Set ``lookahead`` to the integrator's
    step [s]; 0 gives the explicit force. Friction enters the iteration matrix with its
    slope ``mu f_n eps^2 / (v_t^2 + eps^2)^(3/2)`` on the tangents (at most ``mu f_n /
    eps``), so a sticking contact does not limit the step either.
    """

    stiffness: eqx.AbstractVar[Float[Array, ""]]
    damping: eqx.AbstractVar[Float[Array, ""]]
    lookahead: eqx.AbstractVar[Float[Array, ""]]
    friction: eqx.AbstractVar[Float[Array, ""]]
    slip_velocity: eqx.AbstractVar[Float[Array, ""]]

    def _set_law(self, stiffness, damping, lookahead, friction, slip_velocity, dtype) -> None:
        """Set and check the law's parameters (``ValueError`` naming the field): a positive
        stiffness and slip velocity, non-negative damping, look-ahead and friction."""
        from ._laws import _checked

        self.stiffness = _checked("stiffness", stiffness, dtype, positive=True, shape=())
        self.damping = _checked("damping", damping, dtype, shape=())
        self.lookahead = _checked("lookahead", lookahead, dtype, shape=())
        self.friction = _checked("friction", friction, dtype, shape=())
        self.slip_velocity = _checked("slip_velocity", slip_velocity, dtype, positive=True, shape=())

    @abc.abstractmethod
    def contact_rows(self, scene, q: Float[Array, " n"]) -> tuple[Array, Array, Array]:
        """``(depths (P,) [m], J_n (P, n), J_t (P, n))`` at ``q``: each probe's overlap and
        the rows mapping ``qd`` to its separation speed along the contact normal and its
        sliding speed along the tangent (the normal turned by +90 degrees) [m/s]."""

    def normal_rows(self, scene, q: Float[Array, " n"]) -> tuple[Array, Array]:
        """``(depths (P,) [m], J_n (P, n))`` of :meth:`contact_rows`."""
        return self.contact_rows(scene, q)[:2]

    def normal_forces(self, scene, q: Float[Array, " n"], qd: Float[Array, " n"]) -> tuple[Array, Array]:
        """``(normal forces (P,) [N], depths (P,) [m])`` at the state ``(q, qd)``."""
        depth, J_n = self.normal_rows(scene, q)
        return self._law(depth, -(J_n @ qd)), depth

    def _law(self, depth, rate):
        return jnp.maximum(self.stiffness * jnp.maximum(depth, 0.0) * (1.0 + self.damping * rate), 0.0)

    def load_map(self, scene, q: Float[Array, " n"], qd: Float[Array, " n"]):
        """``v -> LineLoadTerms``: the contact's generalized force ``(n,)`` at velocity
        ``v`` on the frozen configuration ``q`` (depths looked ahead, class docstring) and
        its velocity stiffness ``(n, n)`` (the friction's slope with the normal force
        held)."""
        from ..models import LineLoadTerms

        depth, J_n, J_t = self.contact_rows(scene, q)
        k, d, ahead = self.stiffness, self.damping, self.lookahead
        mu, eps = self.friction, self.slip_velocity

        def at(v):
            rate = -(J_n @ v)
            deep = depth + ahead * rate
            f_n = self._law(deep, rate)
            slope = jnp.where(f_n > 0, k * (ahead * (1.0 + d * rate) + d * jnp.maximum(deep, 0.0)), 0.0)
            v_t = J_t @ v
            root = jnp.sqrt(v_t * v_t + eps * eps)
            f_t = -mu * f_n * v_t / root
            slip_slope = mu * f_n * eps * eps / root**3
            force = J_n.T @ f_n + J_t.T @ f_t
            damping = jnp.einsum("pn,p,pm->nm", J_n, slope, J_n) + jnp.einsum("pn,p,pm->nm", J_t, slip_slope, J_t)
            return LineLoadTerms(force, damping)

        return at


class BodyContact(NormalContactLoad):
    """Frictionless compliant contact between the robot of a :class:`~sorogym.PlanarScene`
    and one of its bodies, as an implicit load of the scene (:class:`NormalContactLoad`).

    The robot is probed at the abscissae ``s_ps`` ``(P,)`` [m] as discs of ``radii``
    ``(P,)`` [m]; body ``body``'s outline is its rounded rectangle (module docstring). Each
    overlapping probe feels the normal force along the body's outward normal and the
    friction along its surface, and the body the opposite forces at the surface point
    (``delta_dot = -n . (v_probe - v_body(c))``, ``v_t = t . (v_probe - v_body(c))``).
    """

    body: int = eqx.field(static=True)
    s_ps: Float[Array, " P"]
    radii: Float[Array, " P"]
    stiffness: Float[Array, ""]
    damping: Float[Array, ""]
    lookahead: Float[Array, ""]
    friction: Float[Array, ""]
    slip_velocity: Float[Array, ""]

    def __init__(
        self,
        body: int,
        s_ps,
        radii,
        stiffness,
        damping=0.0,
        lookahead=0.0,
        friction=0.0,
        slip_velocity=1e-3,
        dtype=None,
    ):

        dtype = dtype or jnp.result_type(float)
        self.body = int(body)
        self.s_ps = jnp.asarray(s_ps, dtype).reshape(-1)
        self.radii = jnp.broadcast_to(jnp.asarray(radii, dtype), self.s_ps.shape)
        self._set_law(stiffness, damping, lookahead, friction, slip_velocity, dtype)

    def contact_rows(self, scene, q: Float[Array, " n"]) -> tuple[Array, Array, Array]:
        """``(depths (P,) [m], J_n (P, n), J_t (P, n))`` at ``q``: each probe's depth in the
        body and the rows mapping ``qd`` to ``n . (v_probe - v_body(c))`` and ``t . (v_probe
        - v_body(c))`` [m/s]."""
        s_ps = self.s_ps.astype(q.dtype)

        def positions_of(x):
            return scene.point_force_map(x, s_ps)[0]

        positions = positions_of(q)
        J_probe = jax.jacfwd(positions_of)(q)  # (P, 2, n)
        R, p = scene.body_frames(q)
        b = self.body
        shape = scene.bodies.half_extents[b], scene.bodies.corner_radius[b]
        depth, normal, surface = body_penetration(R[b], p[b], *shape, positions, self.radii.astype(q.dtype))
        arms = surface - p[b]
        tangent = jnp.stack([-normal[:, 1], normal[:, 0]], -1)
        start = scene.robot_dofs + 3 * b

        def rows(direction):
            """``direction . (v_probe - v_body(c))`` as rows ``(P, n)``."""
            moment_arm = arms[:, 0] * direction[:, 1] - arms[:, 1] * direction[:, 0]  # e . (omega x arm) / omega
            body_rows = jnp.stack([moment_arm, direction[:, 0], direction[:, 1]], -1)
            return jnp.einsum("pk,pkn->pn", direction, J_probe).at[:, start : start + 3].add(-body_rows)

        return depth, rows(normal), rows(tangent)


__all__ = ["BodyContact", "NormalContactLoad", "body_penetration", "rounded_box_distance"]
