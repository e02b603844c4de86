"""A planar scene: one planar robot and rigid bodies free in its plane (a table seen from
above), in one set of coordinates.

:class:`PlanarScene` is the forest of the design notes in the plane: a fixed-base planar
robot (a :class:`~sorogym.models.PlanarPCS` arm, or several in a
:class:`~sorogym.models.PlanarArms`) and ``B >= 0`` rigid bodies, each free in the world
x-y plane (pucks, blocks, poles). Nothing joins them: the mass matrix is block
diagonal, and contact (:mod:`sorogym.contact`, chosen by the env) is what couples the
blocks, as an applied force at every integrator step. Keeping the bodies in the robot's
dynamics keeps an env's step one function of one state and differentiable end to end.

Coordinates: ``q = [q_robot (n_r,), theta_0, x_0, y_0, ..., theta_B-1, x_B-1, y_B-1]``
``(n_r + 3 B,)``: the robot's own, then each body's angle [rad] and the position [m] of its
centre of mass in the world; ``qd = dq/dt`` (world-frame rates, so ``nq = n``: every scheme
steps it as a vector space).

Bodies (:class:`PlanarBodies`): mass ``m`` at the body frame's origin and polar moment of
inertia ``I`` about it, so a body's mass block is ``diag(I, m, m)``, constant: bodies add no
Coriolis force. Gravity is the robot's in-plane ``params.gravity`` (zero on a level table).
An optional spring and damper per body coordinate towards a rest pose (``stiffness``,
``damping``, ``rest``: a pole on a compliant mount, a block on a rail; zero by default) keep
the elastic force affine with constant matrices, so the trapezoidal schemes apply.

Loads taken implicitly by the integrators (:class:`SceneLoad`): the robot's line load
(:data:`~sorogym.models.LineLoad` on its quadrature points) and a load on the bodies'
**support points**, where each body presses on the table. Body ``b`` rests on ``K`` points
at ``support_offsets[b]`` ``(K, 2)`` [m] in its frame carrying the shares
``support_shares[b]`` ``(K,)`` (summing to 1) of its weight; the load is called with them as
:class:`~sorogym.models.LinePoints` whose ``line_density`` is each point's mass share [kg]
and whose quadrature weight is 1, so a per-unit-length law such as
:class:`~sorogym.contact.GroundFriction` returns the point's force [N] (its friction
``mu m_k g``): sliding and turning friction of the footprint from one regularised law.
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple, final

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.linalg import block_diag
from jaxtyping import Array, Float

from ..actuation import Actuation
from ._base import DynamicalTerms, SoftRobot
from ._params import check_field, check_shape
from ._rod import LineLoad, LineLoadTerms, LinePoints, pointwise_load_map

BODY_DOFS = 3  # theta, x, y


class SceneLoad(NamedTuple):
    """The implicitly stepped loads of a :class:`PlanarScene`: ``robot`` on the robot's
    quadrature points, ``bodies`` on the bodies' support points (module docstring; either
    may be ``None``), and ``interactions``: loads between members (contact, e.g.
    :class:`sorogym.contact.BodyContact`), each with ``load_map(scene, q, qd) -> (v ->
    LineLoadTerms)`` on the frozen configuration."""

    robot: LineLoad | None = None
    bodies: LineLoad | None = None
    interactions: tuple = ()


class PlanarBodies(eqx.Module):
    """Parameters of ``B`` planar rigid bodies (arrays, so an episode may draw them; build
    uniform bodies with :meth:`rounded_boxes`).

    Attributes:
        mass: ``(B,)`` [kg].
        inertia: ``(B,)`` polar moment of inertia [kg m^2] about the body's centre of mass.
        support_offsets: ``(B, K, 2)`` [m], the support points in each body's frame.
        support_shares: ``(B, K)``, the share of each body's weight on each point (rows sum to 1).
        half_extents: ``(B, 2)`` [m] and corner_radius: ``(B,)`` [m], each body's outline as
            a rounded rectangle (:func:`sorogym.contact.rounded_box_distance`: a disc has
            zero half extents, a rectangle zero corner radius).
        stiffness, damping: ``(B, 3)`` [N m/rad, N/m; N m s/rad, N s/m] per body coordinate
            ``(theta, x, y)`` towards ``rest`` ``(B, 3)`` [rad, m].

    Raises ``ValueError`` naming the field for non-positive masses or inertias, negative
    shares, sizes, stiffnesses or dampings, or shares that do not sum to 1 (when concrete).
    """

    mass: Float[Array, " B"]
    inertia: Float[Array, " B"]
    support_offsets: Float[Array, "B K 2"]
    support_shares: Float[Array, "B K"]
    half_extents: Float[Array, "B 2"]
    corner_radius: Float[Array, " B"]
    stiffness: Float[Array, "B 3"]
    damping: Float[Array, "B 3"]
    rest: Float[Array, "B 3"]

    def __init__(
        self,
        mass,
        inertia,
        support_offsets,
        support_shares=None,
        half_extents=None,
        corner_radius=None,
        stiffness=None,
        damping=None,
        rest=None,
        dtype=None,
    ):
        dtype = dtype or jnp.result_type(float)
        self.mass = jnp.atleast_1d(jnp.asarray(mass, dtype))
        B = self.mass.shape[0]
        self.inertia = jnp.broadcast_to(jnp.asarray(inertia, dtype), (B,))
        offsets = jnp.asarray(support_offsets, dtype)
        self.support_offsets = jnp.broadcast_to(offsets, (B, *offsets.shape[-2:]))
        K = self.support_offsets.shape[1]
        shares = jnp.full((B, K), 1.0 / K, dtype) if support_shares is None else jnp.asarray(support_shares, dtype)
        self.support_shares = jnp.broadcast_to(shares, (B, K))

        def sized(value, shape):
            return jnp.zeros(shape, dtype) if value is None else jnp.broadcast_to(jnp.asarray(value, dtype), shape)

        self.half_extents, self.corner_radius = sized(half_extents, (B, 2)), sized(corner_radius, (B,))
        coordinate = (B, BODY_DOFS)
        self.stiffness, self.damping, self.rest = (sized(v, coordinate) for v in (stiffness, damping, rest))
        check_shape("support_offsets", self.support_offsets, (B, K, 2))
        check_field("mass", self.mass, positive=True)
        check_field("inertia", self.inertia, positive=True)
        for name in ("support_shares", "half_extents", "corner_radius", "stiffness", "damping"):
            check_field(name, getattr(self, name), nonnegative=True)
        check_field("support_offsets", self.support_offsets)
        check_field("rest", self.rest)
        try:
            sums = np.asarray(jnp.sum(self.support_shares, axis=1))
        except Exception:  # traced: checked where concrete
            return
        if not np.allclose(sums, 1.0, atol=1e-5):
            raise ValueError(f"support_shares: each body's shares must sum to 1, got sums {sums}")

    @classmethod
    def rounded_boxes(cls, half_extents, corner_radius, mass, num_support: int = 8, **fields) -> PlanarBodies:
        """Uniform bodies (lamina of any thickness) with rounded-rectangle outlines
        ``half_extents`` ``(B, 2)`` [m], ``corner_radius`` ``(B,)`` [m] and ``mass``
        ``(B,)`` [kg] (traceable: an env may draw them per episode). The inertia is the
        outline's exact polar moment; the weight rests evenly on ``num_support`` points on
        the ellipse of semi-axes ``c (a + rho, b + rho)``, ``c`` chosen so their mean
        distance from the centre equals the outline's (uniform pressure), so the friction
        moment of pure turning is the outline's (exact for a disc, where ``c = 2/3``).
        ``fields``: the remaining :class:`PlanarBodies` arguments."""
        h = jnp.atleast_2d(jnp.asarray(half_extents))
        dtype = fields.get("dtype") or jnp.result_type(h.dtype, float)
        h = h.astype(dtype)
        rho = jnp.broadcast_to(jnp.asarray(corner_radius, dtype), h.shape[:1])
        m = jnp.broadcast_to(jnp.asarray(mass, dtype), h.shape[:1])
        inertia = m * _polar_moment_per_area(h[:, 0], h[:, 1], rho) / _area(h[:, 0], h[:, 1], rho)
        mean_r = jax.vmap(_mean_distance)(h, rho)
        angles = 2.0 * np.pi * np.arange(num_support) / num_support
        ring = jnp.asarray(np.stack([np.cos(angles), np.sin(angles)], -1), dtype)  # (K, 2)
        semi = h + rho[:, None]  # (B, 2)
        ring_mean = jnp.mean(jnp.sqrt(jnp.sum((ring[None] * semi[:, None]) ** 2, -1) + 1e-30), -1)
        offsets = (mean_r / ring_mean)[:, None, None] * ring[None] * semi[:, None]
        return cls(m, inertia, offsets, None, h, rho, **fields)

    @classmethod
    def empty(cls, dtype=None) -> PlanarBodies:
        """No bodies (a scene of a robot alone, whose members touch each other)."""
        return cls(jnp.zeros((0,)), jnp.zeros((0,)), jnp.zeros((0, 1, 2)), dtype=dtype)

    @property
    def num_bodies(self) -> int:
        return int(self.mass.shape[0])

    def replace(self, **fields) -> PlanarBodies:
        """A copy with ``fields`` replaced (same shapes: no recompilation)."""
        return eqx.tree_at(lambda p: [getattr(p, k) for k in fields], self, list(fields.values()))


class SceneParams(eqx.Module):
    """Parameters of a :class:`PlanarScene`: the robot's (``robot``) and the bodies'
    (``bodies``, :class:`PlanarBodies`)."""

    robot: Any
    bodies: PlanarBodies

    def replace(self, **fields) -> SceneParams:
        return eqx.tree_at(lambda p: [getattr(p, k) for k in fields], self, list(fields.values()))


@final
class PlanarScene(SoftRobot):
    """A planar robot and free planar rigid bodies in one model (module docstring).

    Args:
        robot: a planar model whose elastic force is affine (a fixed-base
            :class:`~sorogym.models.PlanarPCS`, or several in a
            :class:`~sorogym.models.PlanarArms`); its kinematics queries are the scene's
            (``forward_kinematics(q, s)`` is the robot's frame at ``s``, its Jacobians
            padded with zero columns for the bodies).
        bodies: :class:`PlanarBodies`.

    Raises ``TypeError`` for a robot that is not planar or not affine-elastic and
    ``ValueError`` naming the field for non-positive masses or inertias.
    """

    elastic_is_affine: ClassVar[bool] = True

    robot: SoftRobot
    bodies: PlanarBodies

    def __init__(self, robot: SoftRobot, bodies: PlanarBodies):
        if not getattr(robot, "planar", False) or not robot.elastic_is_affine:
            raise TypeError(f"robot: expected a planar model with an affine elastic force, got {type(robot).__name__}")
        if robot.num_positions != robot.num_dofs:
            raise TypeError("robot: expected a model whose configuration and velocity have one size")
        self.robot = robot
        self.bodies = bodies

    # -- structure ---------------------------------------------------------------------

    @property
    def params(self) -> SceneParams:
        return SceneParams(self.robot.params, self.bodies)

    def with_params(self, params: SceneParams) -> PlanarScene:
        return PlanarScene(self.robot.with_params(params.robot), params.bodies)

    @property
    def actuation(self) -> Actuation:
        """The robot's actuation (the bodies have none)."""
        return self.robot.actuation

    @property
    def num_bodies(self) -> int:
        return self.bodies.num_bodies

    @property
    def robot_dofs(self) -> int:
        """``n_r``: the robot's coordinates, the first of ``q``."""
        return self.robot.num_dofs

    @property
    def num_dofs(self) -> int:
        return self.robot_dofs + BODY_DOFS * self.num_bodies

    @property
    def num_actuators(self) -> int:
        return self.robot.num_actuators

    @property
    def tip_abscissa(self):
        return self.robot.tip_abscissa

    @property
    def total_length(self):
        """The robot's length at rest [m]."""
        return self.robot.total_length

    def robot_coordinates(self, q: Float[Array, " n"]) -> Float[Array, " n_r"]:
        return q[: self.robot_dofs]

    def body_coordinates(self, q: Float[Array, " n"]) -> Float[Array, "B 3"]:
        """``(B, 3)``: each body's ``(theta [rad], x [m], y [m])``."""
        return q[self.robot_dofs :].reshape(self.num_bodies, BODY_DOFS)

    def _pad(self, robot_vector: Array, body_vector: Array | None = None) -> Array:
        """``(n,)`` from the robot's ``(n_r,)`` part and the bodies' ``(B, 3)`` (zeros if None)."""
        if body_vector is None:
            body_vector = jnp.zeros((self.num_bodies, BODY_DOFS), robot_vector.dtype)
        return jnp.concatenate([robot_vector, body_vector.reshape(-1)])

    # -- kinematics (the robot's) ---------------------------------------------------------

    def forward_kinematics(self, q: Float[Array, " n"], s) -> Float[Array, "3 3"]:
        """The robot's frame at the abscissa ``s`` [m] (SE(2), world)."""
        return self.robot.forward_kinematics(self.robot_coordinates(q), s)

    def forward_kinematics_batched(self, q: Float[Array, " n"], s_ps) -> Array:
        return self.robot.forward_kinematics_batched(self.robot_coordinates(q), s_ps)

    def jacobian(self, q: Float[Array, " n"], s, frame: str = "inertial") -> Float[Array, "3 n"]:
        """The robot's Jacobian at ``s`` ``(3, n)``, zero in the bodies' columns."""
        J = self.robot.jacobian(self.robot_coordinates(q), s, frame=frame)
        return jnp.pad(J, ((0, 0), (0, BODY_DOFS * self.num_bodies)))

    def point_force_map(self, q: Float[Array, " n"], s_ps):
        """``(positions (p, 2) [m], apply)`` of the robot's backbone points ``s_ps``:
        ``apply(forces (p, 2) [N]) -> (n,)`` is their generalized force (robot columns)."""
        positions, apply = self.robot.point_force_map(self.robot_coordinates(q), s_ps)
        return positions, lambda forces: self._pad(apply(forces))

    def body_frames(self, q: Float[Array, " n"]) -> tuple[Array, Array]:
        """``(rotations (B, 2, 2), positions (B, 2) [m])`` of the bodies in the world."""
        b = self.body_coordinates(q)
        c, s = jnp.cos(b[:, 0]), jnp.sin(b[:, 0])
        R = jnp.stack([jnp.stack([c, -s], -1), jnp.stack([s, c], -1)], -2)
        return R, b[:, 1:]

    def body_force(self, q: Float[Array, " n"], points: Float[Array, "B P 2"], forces: Float[Array, "B P 2"]):
        """Generalized force ``(n,)`` of world-frame point forces ``forces`` [N] applied at
        the world points ``points`` [m] of the bodies (``(P, 2)`` per body): per body the
        moment ``sum (x - p) x f`` [N m] and the resultant [N]."""
        _, p = self.body_frames(q)
        arms = points - p[:, None, :]
        moment = jnp.sum(arms[..., 0] * forces[..., 1] - arms[..., 1] * forces[..., 0], axis=-1)
        resultant = jnp.sum(forces, axis=1)
        return self._pad(jnp.zeros(self.robot_dofs, q.dtype), jnp.concatenate([moment[:, None], resultant], -1))

    def support_points(self, q: Float[Array, " n"], qd: Float[Array, " n"]) -> tuple[LinePoints, Array]:
        """The bodies' support points as :class:`~sorogym.models.LinePoints` (``B K``
        points, world frame; ``line_density``: each point's mass share [kg]) and their
        Jacobians ``(B K, 2, n)``."""
        R, _ = self.body_frames(q)
        B, K = self.support_offsets_shape
        arms = jnp.einsum("bij,bkj->bki", R, self.bodies.support_offsets)  # (B, K, 2) world lever arms
        b = self.body_coordinates(q)
        positions = b[:, None, 1:] + arms
        # d(p + R o)/d(theta, x, y) = [perp(R o), I]
        perp = jnp.stack([-arms[..., 1], arms[..., 0]], -1)
        eye = jnp.broadcast_to(jnp.eye(2, dtype=q.dtype), (B, K, 2, 2))
        J_local = jnp.concatenate([perp[..., None], eye], -1)  # (B, K, 2, 3)
        J = jnp.zeros((B, K, 2, self.num_dofs), q.dtype)
        for i in range(B):  # static, few bodies
            start = self.robot_dofs + BODY_DOFS * i
            J = J.at[i, :, :, start : start + BODY_DOFS].set(J_local[i])
        J = J.reshape(B * K, 2, self.num_dofs)
        velocities = J @ qd
        tangents = jnp.broadcast_to(R[:, None, :, 0], (B, K, 2)).reshape(B * K, 2)
        shares = (self.bodies.mass[:, None] * self.bodies.support_shares).reshape(-1)
        points = LinePoints(positions.reshape(B * K, 2), velocities, tangents, jnp.zeros_like(shares), shares)
        return points, J

    @property
    def support_offsets_shape(self) -> tuple[int, int]:
        return self.num_bodies, int(self.bodies.support_offsets.shape[1])

    # -- dynamics -------------------------------------------------------------------------

    def _body_mass_diagonal(self) -> Float[Array, " 3B"]:
        p = self.bodies
        return jnp.stack([p.inertia, p.mass, p.mass], -1).reshape(-1)

    def _body_gravity(self) -> Float[Array, "B 3"]:
        """``G`` of the bodies (``-m g`` on x, y)."""
        g = jnp.asarray(self.robot.params.gravity, self.bodies.mass.dtype)
        return jnp.concatenate([jnp.zeros((self.num_bodies, 1), g.dtype), -self.bodies.mass[:, None] * g], -1)

    def _assemble(self, M_robot: Array) -> Array:
        return block_diag(M_robot, jnp.diag(self._body_mass_diagonal().astype(M_robot.dtype)))

    def inertia_matrix(self, q: Float[Array, " n"]) -> Float[Array, "n n"]:
        return self._assemble(self.robot.inertia_matrix(self.robot_coordinates(q)))

    def coriolis_force(self, q, qd) -> Float[Array, " n"]:
        return self._pad(self.robot.coriolis_force(self.robot_coordinates(q), self.robot_coordinates(qd)))

    def coriolis_matrix(self, q, qd) -> Float[Array, "n n"]:
        C = self.robot.coriolis_matrix(self.robot_coordinates(q), self.robot_coordinates(qd))
        return block_diag(C, jnp.zeros((BODY_DOFS * self.num_bodies,) * 2, C.dtype))

    def gravitational_force(self, q) -> Float[Array, " n"]:
        return self._pad(self.robot.gravitational_force(self.robot_coordinates(q)), self._body_gravity())

    def dynamical_terms(self, q, qd) -> DynamicalTerms:
        M, cor, grav = self.robot.dynamical_terms(self.robot_coordinates(q), self.robot_coordinates(qd))
        return DynamicalTerms(self._assemble(M), self._pad(cor), self._pad(grav, self._body_gravity()))

    def inertia_and_bias(self, q, qd) -> tuple[Array, Array]:
        M, bias = self.robot.inertia_and_bias(self.robot_coordinates(q), self.robot_coordinates(qd))
        return self._assemble(M), self._pad(bias, self._body_gravity())

    def inertia_bias_and_line_load_map(self, q, qd, load: SceneLoad):
        """``(M, C qd + G, load_at)`` with ``load_at(v) -> LineLoadTerms`` the scene's
        loads (:class:`SceneLoad`) at any velocity ``v`` on the frozen configuration."""
        if not isinstance(load, SceneLoad):
            raise TypeError(f"load: a PlanarScene takes a SceneLoad(robot=..., bodies=...), got {type(load).__name__}")
        qr, qdr = self.robot_coordinates(q), self.robot_coordinates(qd)
        if load.robot is None:
            M_r, bias_r = self.robot.inertia_and_bias(qr, qdr)
            robot_at = None
        else:
            M_r, bias_r, robot_at = self.robot.inertia_bias_and_line_load_map(qr, qdr, load.robot)
        M, bias = self._assemble(M_r), self._pad(bias_r, self._body_gravity())
        body_at = None if load.bodies is None else self._support_load_at(q, qd, load.bodies)
        coupled = [member.load_map(self, q, qd) for member in load.interactions]
        n_r = self.robot_dofs

        def load_at(v):
            force = jnp.zeros(self.num_dofs, v.dtype)
            damping = jnp.zeros((self.num_dofs, self.num_dofs), v.dtype)
            if robot_at is not None:
                terms = robot_at(v[:n_r])
                force = force.at[:n_r].add(terms.force)
                damping = damping.at[:n_r, :n_r].add(terms.damping)
            if body_at is not None:
                terms = body_at(v)
                force, damping = force + terms.force, damping + terms.damping
            for member_at in coupled:
                terms = member_at(v)
                force, damping = force + terms.force, damping + terms.damping
            return LineLoadTerms(force, damping)

        return M, bias, load_at

    def line_load_terms(self, q, qd, load: SceneLoad) -> LineLoadTerms:
        """The scene's loads (:class:`SceneLoad`) at the state ``(q, qd)``: generalized
        force ``(n,)`` and velocity stiffness ``(n, n)``."""
        return self.inertia_bias_and_line_load_map(q, qd, load)[2](qd)

    def _support_load_at(self, q, qd, load: LineLoad):
        """``v -> LineLoadTerms`` of ``load`` on the support points (frozen configuration)."""
        base, J = self.support_points(q, qd)
        return pointwise_load_map(load, base, J, jnp.ones(J.shape[0], J.dtype))

    def support_load_terms(self, q, qd, load: LineLoad) -> LineLoadTerms:
        """The generalized force ``(n,)`` of ``load`` on the bodies' support points and its
        velocity stiffness ``(n, n)``."""
        return self._support_load_at(q, qd, load)(qd)

    def elastic_force(self, q) -> Float[Array, " n"]:
        p = self.bodies
        return self._pad(
            self.robot.elastic_force(self.robot_coordinates(q)), p.stiffness * (self.body_coordinates(q) - p.rest)
        )

    def damping_force(self, qd) -> Float[Array, " n"]:
        return self._pad(
            self.robot.damping_force(self.robot_coordinates(qd)), self.bodies.damping * self.body_coordinates(qd)
        )

    def stiffness_matrix(self) -> Float[Array, "n n"]:
        S = self.robot.stiffness_matrix()
        return block_diag(S, jnp.diag(self.bodies.stiffness.reshape(-1).astype(S.dtype)))

    def damping_matrix(self) -> Float[Array, "n n"]:
        D = self.robot.damping_matrix()
        return block_diag(D, jnp.diag(self.bodies.damping.reshape(-1).astype(D.dtype)))

    def gravitational_energy(self, q) -> Float[Array, ""]:
        g = jnp.asarray(self.robot.params.gravity, q.dtype)
        bodies = -jnp.sum(self.bodies.mass * (self.body_coordinates(q)[:, 1:] @ g))
        return self.robot.gravitational_energy(self.robot_coordinates(q)) + bodies

    def elastic_energy(self, q) -> Float[Array, ""]:
        p = self.bodies
        e = self.body_coordinates(q) - p.rest
        return self.robot.elastic_energy(self.robot_coordinates(q)) + 0.5 * jnp.sum(p.stiffness * e * e)

    def momentum(self, q, qd) -> Float[Array, "B 3"]:
        """Each body's ``(angular momentum about its centre [kg m^2/s], linear momentum (2,)
        [kg m/s])``."""
        return self._body_mass_diagonal().reshape(-1, BODY_DOFS) * self.body_coordinates(qd)

    # -- actuation (the robot's) ----------------------------------------------------------

    def actuation_context(self, q: Float[Array, " n"]):
        return self.robot.actuation_context(self.robot_coordinates(q))

    def actuation_force(self, q: Float[Array, " n"], u: Float[Array, " m"]) -> Float[Array, " n"]:
        return self._pad(self.robot.actuation_force(self.robot_coordinates(q), u))

    def actuation_matrix(self, q: Float[Array, " n"]) -> Float[Array, "n m"]:
        A = self.robot.actuation_matrix(self.robot_coordinates(q))
        return jnp.pad(A, ((0, BODY_DOFS * self.num_bodies), (0, 0)))

    def actuation_coordinates(self, q: Float[Array, " n"]) -> Float[Array, " m"]:
        return self.robot.actuation_coordinates(self.robot_coordinates(q))

    def tendon_lengths(self, q: Float[Array, " n"]) -> Float[Array, " m"]:
        return self.robot.tendon_lengths(self.robot_coordinates(q))


def _area(a, b, rho):
    """Area [m^2] of the rounded rectangle of half extents ``a``, ``b`` and corner radius ``rho``."""
    return 4.0 * a * b + 4.0 * rho * (a + b) + jnp.pi * rho * rho


def _polar_moment_per_area(a, b, rho):
    """Polar second moment of area [m^4] of the rounded rectangle about its centre: the
    central rectangle, four edge strips and four quarter discs (parallel-axis theorem)."""

    def rect(w, h, cx, cy):  # w x h rectangle centred at (cx, cy)
        A = w * h
        return A * (w * w + h * h) / 12.0 + A * (cx * cx + cy * cy)

    core = rect(2 * a, 2 * b, 0.0, 0.0)
    strips = 2 * rect(2 * a, rho, 0.0, b + 0.5 * rho) + 2 * rect(rho, 2 * b, a + 0.5 * rho, 0.0)
    quarter = 0.25 * jnp.pi * rho * rho
    g = 4.0 * rho / (3.0 * jnp.pi)  # centroid of a quarter disc from its vertex, along each axis
    about_vertex = quarter * rho * rho / 2.0
    corners = 4 * (about_vertex - quarter * 2 * g * g + quarter * ((a + g) ** 2 + (b + g) ** 2))
    return core + strips + corners


_GRID = 48  # samples per axis for a footprint's mean distance


def _mean_distance(h, rho):
    """Mean distance [m] from the centre over the rounded rectangle (midpoint grid)."""
    ext = h + rho
    u = (jnp.arange(_GRID, dtype=h.dtype) + 0.5) / _GRID * 2.0 - 1.0
    x, y = jnp.meshgrid(u * ext[0], u * ext[1])
    excess = jnp.maximum(jnp.stack([jnp.abs(x) - h[0], jnp.abs(y) - h[1]]), 0.0)
    inside = (jnp.sum(excess * excess, 0) <= rho * rho).astype(h.dtype)
    r = jnp.sqrt(x * x + y * y)
    return jnp.sum(inside * r) / jnp.maximum(jnp.sum(inside), 1.0)


__all__ = ["BODY_DOFS", "PlanarBodies", "PlanarScene", "SceneLoad", "SceneParams"]
