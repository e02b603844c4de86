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
the velocity by the integrators (a stiff contact does not limit the step). A robot of
several arms (:class:`~sorogym.models.PlanarArms`, :class:`~sorogym.models.PlanarGripper`)
is probed on every arm at the same abscissae.

:class:`FloorContact` is the floor of a scene in the vertical plane (gravity along -y): the
half-plane ``y <= height`` pushing the robot's probe discs and the bodies' outlines up.
"""

from __future__ import annotations

import abc

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ..models._params import check_field

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
    (abstract: a subclass gives its contact geometry by :meth:`contact_rows`). Every
    subclass probes the robot at the abscissae ``s_ps`` ``(P,)`` [m] as discs of ``radii``
    (set by :meth:`_set_probes`) and holds the law's parameters below (:meth:`_set_law`).

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
    step [s]; 0 gives the explicit force. Friction enters the iteration matrix as the
    viscous coefficient ``mu f_n / sqrt(v_t^2 + eps^2)`` on the tangents (its secant at the
    step's start, at most ``mu f_n / eps``), so a sticking contact does not limit the step
    either, and the step's friction only ever dissipates: the tangent's slope, steep at
    rest and flat in a slide, extrapolated the force of a contact that starts to slip far
    past ``mu f_n`` (fingers squeezing a light object then diverged at 3 ms steps).
    """

    s_ps: Float[Array, " P"]  # the robot's probe abscissae [m] (set by _set_probes)
    radii: Float[Array, " P"]  # the probes' radii [m]
    stiffness: Float[Array, ""]  # the law's parameters (set by _set_law)
    damping: Float[Array, ""]
    lookahead: Float[Array, ""]
    friction: Float[Array, ""]
    slip_velocity: Float[Array, ""]

    def _set_probes(self, s_ps, radii, dtype) -> None:
        """Set the robot's probe abscissae ``s_ps`` ``(P,)`` [m] and radii (broadcast to ``(P,)``)."""
        self.s_ps = jnp.asarray(s_ps, dtype).reshape(-1)
        self.radii = jnp.broadcast_to(jnp.asarray(radii, dtype), self.s_ps.shape)

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
        its velocity stiffness ``(n, n)`` (the friction's secant coefficient with the
        normal force held, class docstring)."""
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
            slip_slope = mu * f_n / root  # the secant: friction as a viscous coefficient, never overshot
            force = J_n.T @ f_n + J_t.T @ f_t
            damping = jnp.einsum("pn,p,pm->nm", J_n, slope, J_n) + jnp.einsum("pn,p,pm->nm", J_t, slip_slope, J_t)
            return LineLoadTerms(force, damping)

        return at


def robot_probes(scene, q: Float[Array, " n"], s_ps: Float[Array, " P"]) -> tuple[Array, Array]:
    """``(positions (Q, 2) [m], Jacobians (Q, 2, n))`` of the scene robot's backbone points
    at the abscissae ``s_ps`` (world frame): ``Q = P`` for one arm, ``Q = K P`` (arm by arm)
    for a robot of ``K`` arms (one with ``backbone_points``)."""
    robot, n_r = scene.robot, scene.robot_dofs
    if hasattr(robot, "backbone_points"):
        q_r = q[:n_r]
        positions, _, J = robot.backbone_points(q_r, jnp.zeros_like(q_r), s_ps)
        positions, J = positions.reshape(-1, 2), J.reshape(-1, 2, n_r)
        return positions, jnp.pad(J, ((0, 0), (0, 0), (0, q.shape[0] - n_r)))

    def positions_of(x):
        return scene.point_force_map(x, s_ps)[0]

    return positions_of(q), jax.jacfwd(positions_of)(q)


def num_probe_arms(scene) -> int:
    """How many arms :func:`robot_probes` probes (1 for a lone arm)."""
    return int(getattr(scene.robot, "num_arms", 1)) if hasattr(scene.robot, "backbone_points") else 1


class BodyContact(NormalContactLoad):
    """Frictionless compliant contact between the robot of a :class:`~sorogym.PlanarScene`
    and one of its bodies, as an implicit load of the scene (:class:`NormalContactLoad`).

    The robot is probed at the abscissae ``s_ps`` ``(P,)`` [m] as discs of ``radii``
    ``(P,)`` [m] (every arm of a robot of ``K`` arms: ``K P`` probes, arm by arm); body
    ``body``'s outline is its rounded rectangle (module docstring). Each
    overlapping probe feels the normal force along the body's outward normal and the
    friction along its surface, and the body the opposite forces at the surface point
    (``delta_dot = -n . (v_probe - v_body(c))``, ``v_t = t . (v_probe - v_body(c))``).
    """

    body: int = eqx.field(static=True)

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
        self._set_probes(s_ps, radii, dtype)
        self._set_law(stiffness, damping, lookahead, friction, slip_velocity, dtype)

    def contact_rows(self, scene, q: Float[Array, " n"]) -> tuple[Array, Array, Array]:
        """``(depths (P,) [m], J_n (P, n), J_t (P, n))`` at ``q``: each probe's depth in the
        body and the rows mapping ``qd`` to ``n . (v_probe - v_body(c))`` and ``t . (v_probe
        - v_body(c))`` [m/s]."""
        positions, J_probe = robot_probes(scene, q, self.s_ps.astype(q.dtype))  # (Q, 2), (Q, 2, n)
        radii = jnp.tile(self.radii.astype(q.dtype), num_probe_arms(scene))
        R, p = scene.body_frames(q)
        b = self.body
        shape = scene.bodies.half_extents[b], scene.bodies.corner_radius[b]
        depth, normal, surface = body_penetration(R[b], p[b], *shape, positions, radii)
        arms = surface - p[b]
        tangent = jnp.stack([-normal[:, 1], normal[:, 0]], -1)
        start = scene.robot_dofs + 3 * b

        def rows(direction):
            """``direction . (v_probe - v_body(c))`` as rows ``(P, n)``."""
            moment_arm = arms[:, 0] * direction[:, 1] - arms[:, 1] * direction[:, 0]  # e . (omega x arm) / omega
            body_rows = jnp.stack([moment_arm, direction[:, 0], direction[:, 1]], -1)
            return jnp.einsum("pk,pkn->pn", direction, J_probe).at[:, start : start + 3].add(-body_rows)

        return depth, rows(normal), rows(tangent)


class FloorContact(NormalContactLoad):
    """The floor of a :class:`~sorogym.PlanarScene` in the vertical plane: the half-plane
    ``y <= height`` [m] (world frame, gravity along -y) touching the robot and every body,
    as an implicit load of the scene (:class:`NormalContactLoad`: Hunt-Crossley normal force
    along +y, regularised Coulomb friction along x).

    The robot is probed at the abscissae ``s_ps`` ``(P,)`` [m] as discs of ``radii`` ``(P,)``
    [m] (every arm of a robot of ``K`` arms; none for an empty ``s_ps``), depth ``r - (y -
    height)``. With ``bodies`` (the default) each body is
    probed at the four corners ``(+-a, +-b)`` of its outline as discs of its corner radius
    ``rho`` (:class:`~sorogym.models.PlanarBodies`), each touching at its lowest point ``c =
    x + R o - rho e_y``, where the floor's force acts on the body (a box resting flat presses
    on two corner discs, a disc on all four at once: its stiffness is four times
    ``stiffness``). Rows: ``e_y . v(c)`` (separation) and ``-e_x . v(c)`` (the tangent, the
    normal turned by +90 degrees), so a disc that rolls without slipping does not slide.
    """

    height: Float[Array, ""]
    bodies: bool = eqx.field(static=True)

    def __init__(
        self,
        s_ps,
        radii,
        stiffness,
        damping=0.0,
        lookahead=0.0,
        friction=0.0,
        slip_velocity=1e-3,
        height=0.0,
        bodies=True,
        dtype=None,
    ):
        dtype = dtype or jnp.result_type(float)
        self.bodies = bool(bodies)
        self._set_probes(s_ps, radii, dtype)
        self.height = jnp.asarray(height, dtype)
        if self.height.shape != ():
            raise ValueError(f"height: expected a scalar [m], got shape {self.height.shape}")
        check_field("height", self.height)
        self._set_law(stiffness, damping, lookahead, friction, slip_velocity, dtype)

    def contact_rows(self, scene, q: Float[Array, " n"]) -> tuple[Array, Array, Array]:
        """``(depths (P',) [m], J_n (P', n), J_t (P', n))`` at ``q``: the robot's probes
        (``K P``) then each body's four corners (``4 B``, with ``bodies``)."""
        n = q.shape[0]
        height = self.height.astype(q.dtype)
        depth, J_n, J_t = [], [], []
        if self.s_ps.shape[0]:
            positions, J = robot_probes(scene, q, self.s_ps.astype(q.dtype))
            radii = jnp.tile(self.radii.astype(q.dtype), num_probe_arms(scene))
            depth.append(radii - (positions[:, 1] - height))
            J_n.append(J[:, 1, :])
            J_t.append(-J[:, 0, :])
        B = scene.num_bodies if self.bodies else 0
        if B:
            R, p = scene.body_frames(q)
            h, rho = scene.bodies.half_extents.astype(q.dtype), scene.bodies.corner_radius.astype(q.dtype)
            signs = jnp.asarray([[1.0, 1.0], [-1.0, 1.0], [-1.0, -1.0], [1.0, -1.0]], q.dtype)
            corners = signs[None] * h[:, None, :]  # (B, 4, 2) body frame
            lever = jnp.einsum("bij,bkj->bki", R, corners) - rho[:, None, None] * jnp.asarray([0.0, 1.0], q.dtype)
            lowest = p[:, None, :] + lever  # (B, 4, 2): each corner disc's lowest point
            depth.append((height - lowest[..., 1]).reshape(-1))
            ones, zeros = jnp.ones((B, 4), q.dtype), jnp.zeros((B, 4), q.dtype)
            normal_rows = jnp.stack([lever[..., 0], zeros, ones], -1)  # e_y . (v + omega x lever)
            tangent_rows = jnp.stack([lever[..., 1], -ones, zeros], -1)  # -e_x . (v + omega x lever)
            start = scene.robot_dofs + 3 * np.arange(B)
            cols = start[:, None] + np.arange(3)[None, :]  # (B, 3)

            def rows(local):
                full = jnp.zeros((B, 4, n), q.dtype)
                full = full.at[np.arange(B)[:, None, None], np.arange(4)[None, :, None], cols[:, None, :]].set(local)
                return full.reshape(4 * B, n)

            J_n.append(rows(normal_rows))
            J_t.append(rows(tangent_rows))
        return jnp.concatenate(depth), jnp.concatenate(J_n), jnp.concatenate(J_t)


__all__ = [
    "BodyContact",
    "FloorContact",
    "NormalContactLoad",
    "body_penetration",
    "num_probe_arms",
    "robot_probes",
    "rounded_box_distance",
]
