"""Actuation of articulated chains: tendons through via-points, pulley tendons and McKibben
muscles.

All three act on an open serial chain (:class:`~sorogym.models.ArticulatedSoftRobot`)
with joint coordinates ``q`` ``(n,)``. Geometry comes from one kinematics pass of the
chain, handed over as a :class:`~sorogym.actuation.ChainContext` (world poses and body
Jacobians of the links), so this module does not depend on the model class.

**Articulated tendons** (:class:`ArticulatedTendons`): threadlike tendons routed through
via-points fixed on the links (or on the base). With world via-points ``w_0 .. w_P`` of one
tendon its length is the polyline length ``L(q) = sum_k |w_(k+1)(q) - w_k(q)|`` [m]. A
tension ``u >= 0`` [N] shortens the tendon, and the generalized force is
``A(q) u`` with ``A(q) = -dL/dq^T`` ``(n, m)``; the pair is work-conjugate,
``qd^T A(q) u = -dL/dt^T u`` (the power the tendons deliver). The derivative is analytic:
a point ``p`` fixed in link ``i`` moves with ``dw/dq = R_i (J_i^v - [p]x J_i^w)`` (``J_i``
the link's body Jacobian ``[J^w; J^v]``), and each straight piece contributes its unit
direction times the relative velocity of its end points. Via-points are not wrapping
surfaces: the tendon is a straight line between them, also where that line would pass
through a link.

**Pulley tendons** (:class:`PulleyTendons`): constant moment arms ``r_ij`` [m] (tendon
``i`` over a pulley of radius ``r_ij`` on joint ``j``, or along a prismatic joint with
``r_ij = 1``): ``L(q) = L_0 - R q`` and ``A = R^T`` (constant).

**McKibben muscles** (:class:`McKibbenMuscles`): pneumatic artificial muscles whose ends
follow either of the two paths above. Input: gauge pressures ``p`` [Pa] (``>= 0``; negative
commands act as zero). Static force law (Chou & Hannaford 1996; with Tondu & Lopez's
correction factor ``k``)::

    F(p, eps) = p pi r0^2 (a (1 - k eps)^2 - b),   a = 3 / tan^2(theta0),  b = 1 / sin^2(theta0)

with the contraction ``eps = 1 - L(q) / L0`` (``L0`` the resting length of the muscle, at
which the braid angle is ``theta0`` and the inner radius ``r0``). The muscle pulls only up to
its maximum contraction ``eps_max = (1 - sqrt(b / a)) / k`` (``a (1 - k eps_max)^2 = b``); the
force is zero beyond (``eps`` is clipped at ``eps_max``). The muscle acts on the chain like a
tendon with tension ``F``: ``tau = -dL/dq^T F``. ``F`` is linear in ``p``, so
``A(q) = -dL/dq^T diag(f(eps(q)))`` with ``f = F / p`` [m^2] is exactly
``d tau / dp``, and ``tau = A(q) p``. The work-conjugate coordinate of the pressure is the
volume the muscle displaces as it contracts, ``V(q) - V(rest)`` [m^3] with ``dV/dL = -f``
(:meth:`McKibbenMuscles.coordinates`): ``qd^T A(q) p = dV/dt^T p``.
"""

from __future__ import annotations

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float

from ..lie import safe_norm, so3
from ._base import Actuation, ActuationContext, ChainContext, require_context

# above this braid angle (arccos(1/sqrt(3)) ~ 54.7 deg) a McKibben muscle extends under pressure
MCKIBBEN_NEUTRAL_ANGLE = math.acos(1.0 / math.sqrt(3.0))


def _is_concrete(x) -> bool:
    return not isinstance(x, jax.core.Tracer)


def _tension_effort(u: Array, signed: bool) -> Array:
    return u if signed else jnp.maximum(u, 0.0)


class ArticulatedTendons(Actuation):
    """Threadlike tendons through via-points on the links of a chain (module docstring).

    Args:
        routes: one route per tendon, each a sequence of at least two via-points
            ``(link, point)``: ``link`` the link index ``0 .. n-1`` or ``-1`` for the base,
            ``point`` ``(3,)`` the via-point in that link's frame [m]. The tendon runs
            straight from each via-point to the next.
        signed: ``False`` (default): tendons pull only, negative commands go slack;
            ``True``: the routed force acts with either sign.

    Attributes:
        points: ``(V, 3)`` all via-points, tendon after tendon, in their link frames [m].
        links: ``(V,)`` (static) link index of each via-point (``-1``: base).
        sizes: ``(m,)`` (static) number of via-points of each tendon.
    """

    points: Array
    links: tuple[int, ...] = eqx.field(static=True)
    sizes: tuple[int, ...] = eqx.field(static=True)
    signed: bool = eqx.field(static=True, default=False)

    def __init__(self, routes, signed: bool = False):
        routes = list(routes)
        if len(routes) < 1:
            raise ValueError("routes: need at least one tendon")
        links, points, sizes = [], [], []
        for j, route in enumerate(routes):
            route = list(route)
            if len(route) < 2:
                raise ValueError(f"routes: tendon {j} needs at least two via-points, got {len(route)}")
            for k, (link, point) in enumerate(route):
                if int(link) != link or int(link) < -1:
                    raise ValueError(
                        f"routes: tendon {j}, via-point {k}: link must be an integer >= -1 (-1: base), got {link}"
                    )
                links.append(int(link))
                points.append(point)
            sizes.append(len(route))
        if all(_is_concrete(p) for p in points):
            arr = np.asarray(points, dtype=float)
            if arr.shape != (len(links), 3) or not np.all(np.isfinite(arr)):
                raise ValueError(f"routes: via-points must be finite 3-vectors, got shape {arr.shape}")
            self.points = jnp.asarray(arr)
        else:
            self.points = jnp.stack([jnp.asarray(p) for p in points])
        self.links = tuple(links)
        self.sizes = tuple(sizes)
        self.signed = bool(signed)

    @property
    def num_actuators(self) -> int:
        return len(self.sizes)

    def bind(self, context: ActuationContext) -> ArticulatedTendons:
        """Raise ``ValueError`` unless the model is a chain with every via-point's link."""
        require_context(self, context, ChainContext, "articulated chains")
        n = context.num_dofs
        if max(self.links) >= n:
            raise ValueError(f"routes: link indices must lie in [-1, {n}) for a {n}-joint chain, got {max(self.links)}")
        return self

    def _segments(self):
        """Static start/end via-point indices ``(S,)`` of the straight pieces and the
        ``(m, S)`` 0/1 matrix summing pieces into tendons."""
        ends = np.cumsum(self.sizes)
        starts = ends - np.asarray(self.sizes)
        a = np.concatenate([np.arange(s, e - 1) for s, e in zip(starts, ends)])
        owner = np.concatenate([np.full(k - 1, j) for j, k in enumerate(self.sizes)])
        return a, a + 1, (owner[None, :] == np.arange(len(self.sizes))[:, None]).astype(float)

    def world_points(self, context: ChainContext) -> Float[Array, "V 3"]:
        """World positions ``(V, 3)`` [m] of all via-points."""
        R, t = self._link_rotations_translations(context)
        return jnp.einsum("vij,vj->vi", R, self.points.astype(R.dtype)) + t

    def _link_rotations_translations(self, context):
        poses = jnp.concatenate([context.base_pose[None], context.poses])
        idx = np.asarray(self.links) + 1
        return poses[idx, :3, :3], poses[idx, :3, 3]

    def lengths(self, context: ChainContext) -> Float[Array, " m"]:
        """Tendon lengths ``L(q)`` ``(m,)`` [m] (polyline through the world via-points)."""
        a, b, S = self._segments()
        w = self.world_points(context)
        return jnp.asarray(S, w.dtype) @ safe_norm(w[b] - w[a])

    def length_jacobian(self, context: ChainContext) -> Float[Array, "m n"]:
        """``dL/dq`` ``(m, n)`` [m/rad or m/m], analytic (module docstring)."""
        a, b, S = self._segments()
        R, t = self._link_rotations_translations(context)
        p = self.points.astype(R.dtype)
        n = context.num_dofs
        J = jnp.concatenate([jnp.zeros((1, 6, n), R.dtype), context.jacobians])[np.asarray(self.links) + 1]
        point_jac = jnp.einsum("vij,vjn->vin", R, J[:, 3:] - so3.hat(p) @ J[:, :3])  # (V, 3, n)
        d = jnp.einsum("vij,vj->vi", R, p) + t
        d = d[b] - d[a]
        norm = safe_norm(d)
        unit = d / jnp.where(norm > 0, norm, 1.0)[:, None]
        return jnp.asarray(S, R.dtype) @ jnp.einsum("si,sin->sn", unit, point_jac[b] - point_jac[a])

    def matrix(self, context: ChainContext) -> Float[Array, "n m"]:
        """``A(q) = -dL/dq^T`` ``(n, m)``: column ``j`` is the generalized force of a unit
        tension in tendon ``j``."""
        return -self.length_jacobian(context).T

    def effort(self, u: Float[Array, " m"]) -> Float[Array, " m"]:
        """Tensions [N]: ``max(u, 0)`` (``u`` itself when ``signed``)."""
        return _tension_effort(u, self.signed)


class PulleyTendons(Actuation):
    """Tendons over joint pulleys with constant moment arms: ``L(q) = L0 - R q``,
    ``A = R^T`` (module docstring); on any model (the moment arms act on its coordinates).

    Args:
        moment_arms: ``(m, n)`` moment arm ``r_ij`` of tendon ``i`` on joint ``j`` [m for
            revolute joints; dimensionless for prismatic ones]; a positive tension in
            tendon ``i`` drives joint ``j`` towards positive ``q_j`` when ``r_ij > 0``.
        rest_lengths: ``(m,)`` lengths ``L0`` at ``q = 0`` [m] (scalars broadcast).
        signed: as for :class:`ArticulatedTendons`.
    """

    moment_arms: Array
    rest_lengths: Array
    signed: bool = eqx.field(static=True, default=False)

    def __init__(self, moment_arms: ArrayLike, rest_lengths: ArrayLike = 0.0, signed: bool = False):
        R = jnp.asarray(moment_arms)
        if R.ndim != 2 or R.shape[0] < 1:
            raise ValueError(f"moment_arms: expected shape (num_tendons, num_joints), got {R.shape}")
        L0 = (
            jnp.broadcast_to(jnp.asarray(rest_lengths, R.dtype), (R.shape[0],))
            if jnp.ndim(rest_lengths) == 0
            else jnp.asarray(rest_lengths)
        )
        if L0.shape != (R.shape[0],):
            raise ValueError(f"rest_lengths: expected shape ({R.shape[0]},), got {L0.shape}")
        if _is_concrete(R) and not np.all(np.isfinite(np.asarray(R))):
            raise ValueError("moment_arms: values must be finite")
        self.moment_arms, self.rest_lengths, self.signed = R, L0, bool(signed)

    @property
    def num_actuators(self) -> int:
        return int(self.moment_arms.shape[0])

    def bind(self, context: ActuationContext) -> PulleyTendons:
        n = context.num_dofs
        if self.moment_arms.shape[1] != n:
            raise ValueError(
                f"moment_arms: expected {n} columns (one per coordinate), got shape {tuple(self.moment_arms.shape)}"
            )
        return self

    def lengths(self, context: ActuationContext) -> Float[Array, " m"]:
        """``L(q) = L0 - R q`` ``(m,)`` [m]."""
        q = context.q
        return self.rest_lengths.astype(q.dtype) - self.moment_arms.astype(q.dtype) @ q

    def length_jacobian(self, context: ActuationContext) -> Float[Array, "m n"]:
        return -self.moment_arms.astype(context.q.dtype)

    def matrix(self, context: ActuationContext) -> Float[Array, "n m"]:
        """``A = R^T`` ``(n, m)`` (constant)."""
        return self.moment_arms.astype(context.q.dtype).T

    def effort(self, u: Float[Array, " m"]) -> Float[Array, " m"]:
        return _tension_effort(u, self.signed)


def mckibben_coefficients(braid_angle: ArrayLike) -> tuple[Array, Array]:
    """``(a, b) = (3 / tan^2(theta0), 1 / sin^2(theta0))`` of the McKibben force law."""
    theta = jnp.asarray(braid_angle)
    return 3.0 / jnp.tan(theta) ** 2, 1.0 / jnp.sin(theta) ** 2


def mckibben_max_contraction(braid_angle: ArrayLike, correction: ArrayLike = 1.0) -> Array:
    """``eps_max = (1 - sqrt(b / a)) / k = (1 - 1 / (sqrt(3) cos(theta0))) / k``: the
    contraction at which the muscle force vanishes."""
    return (1.0 - 1.0 / (math.sqrt(3.0) * jnp.cos(jnp.asarray(braid_angle)))) / jnp.asarray(correction)


def mckibben_force(
    pressure: ArrayLike, contraction: ArrayLike, radius: ArrayLike, braid_angle: ArrayLike, correction: ArrayLike = 1.0
) -> Array:
    """McKibben muscle force [N] (positive: pulling), elementwise over broadcast inputs.

    ``F = p pi r0^2 (a (1 - k eps_c)^2 - b)`` with ``eps_c = min(eps, eps_max)`` (zero force
    at and beyond the maximum contraction; module docstring).

    Args:
        pressure: gauge pressure ``p`` [Pa] (used as given; the muscles clip it at zero).
        contraction: ``eps = 1 - L / L0`` (negative when stretched).
        radius: resting inner radius ``r0`` [m].
        braid_angle: resting braid angle ``theta0`` [rad] (between the fibres and the axis).
        correction: Tondu-Lopez factor ``k`` (1: the Chou-Hannaford law).
    """
    a, b = mckibben_coefficients(braid_angle)
    k = jnp.asarray(correction)
    eps = jnp.minimum(jnp.asarray(contraction), mckibben_max_contraction(braid_angle, k))
    per_area = jnp.maximum(a * (1.0 - k * eps) ** 2 - b, 0.0)  # >= 0 also where rounding at eps_max would dip below
    return jnp.asarray(pressure) * jnp.pi * jnp.asarray(radius) ** 2 * per_area


class McKibbenMuscles(Actuation):
    """McKibben muscles along tendon-like paths on a chain (module docstring). Inputs are
    gauge pressures [Pa].

    Args:
        paths: :class:`ArticulatedTendons` (muscle ends, and any via-points, on the links)
            or :class:`PulleyTendons` (constant moment arms; then ``rest_lengths`` are the
            muscles' path lengths at ``q = 0`` unless given). The paths' ``signed`` flag
            is ignored.
        radius: ``(m,)`` resting inner radius ``r0`` [m] (scalars broadcast).
        braid_angle: ``(m,)`` resting braid angle ``theta0`` [rad], in
            ``(0, arccos(1/sqrt(3)))``.
        rest_lengths: ``(m,)`` resting lengths ``L0`` [m] (``eps = 0``); ``None``: the path
            lengths at ``q = 0``, filled in by the model that installs the muscles.
        correction: ``(m,)`` Tondu-Lopez factor ``k > 0`` (1: Chou-Hannaford).
    """

    paths: ArticulatedTendons | PulleyTendons
    radius: Array
    braid_angle: Array
    correction: Array
    rest_lengths: Array | None

    def __init__(
        self,
        paths,
        radius: ArrayLike,
        braid_angle: ArrayLike,
        rest_lengths: ArrayLike | None = None,
        correction: ArrayLike = 1.0,
    ):
        if not isinstance(paths, (ArticulatedTendons, PulleyTendons)):
            raise ValueError(f"paths: expected ArticulatedTendons or PulleyTendons, got {type(paths).__name__}")
        m = paths.num_actuators
        self.paths = paths

        def field(name, value, low=None, high=None):
            arr = jnp.asarray(value)
            arr = jnp.broadcast_to(arr, (m,)) if arr.ndim == 0 else arr
            if arr.shape != (m,):
                raise ValueError(f"{name}: expected shape ({m},) (one per muscle), got {arr.shape}")
            if _is_concrete(arr):
                v = np.asarray(arr, dtype=float)
                if (
                    not np.all(np.isfinite(v))
                    or (low is not None and np.any(v <= low))
                    or (high is not None and np.any(v >= high))
                ):
                    bounds = f"> {low}" if high is None else f"in ({low}, {high:.6g})"
                    raise ValueError(f"{name}: values must be finite and {bounds}, got {v}")
            return arr

        self.radius = field("radius", radius, 0.0)
        self.braid_angle = field("braid_angle", braid_angle, 0.0, MCKIBBEN_NEUTRAL_ANGLE)
        self.correction = field("correction", correction, 0.0)
        self.rest_lengths = None if rest_lengths is None else field("rest_lengths", rest_lengths, 0.0)

    @property
    def num_actuators(self) -> int:
        return self.paths.num_actuators

    def bind(self, context: ActuationContext) -> McKibbenMuscles:
        """Check the paths against the model and, if ``rest_lengths`` is ``None``, set it
        to the path lengths at ``q = 0`` (once: the lengths then belong to the muscles)."""
        muscles = eqx.tree_at(lambda mm: mm.paths, self, self.paths.bind(context))
        if muscles.rest_lengths is not None:
            return muscles
        rest = muscles.paths.lengths(context)
        if _is_concrete(rest) and np.any(np.asarray(rest) <= 0):
            raise ValueError(
                f"rest_lengths: the muscle paths have non-positive lengths at q = 0 ({np.asarray(rest)}); "
                "pass rest_lengths"
            )
        return muscles.with_rest_lengths(rest)

    def with_rest_lengths(self, rest_lengths: Float[Array, " m"]) -> McKibbenMuscles:
        """Copy with the resting lengths ``L0`` ``(m,)`` [m] set."""
        return eqx.tree_at(lambda mm: mm.rest_lengths, self, jnp.asarray(rest_lengths), is_leaf=lambda x: x is None)

    def _rest(self, dtype):
        if self.rest_lengths is None:
            raise ValueError(
                "rest_lengths: not set; install the muscles on a model (which fills in the lengths at q = 0) "
                "or pass them"
            )
        return self.rest_lengths.astype(dtype)

    def lengths(self, context: ActuationContext) -> Float[Array, " m"]:
        """Muscle path lengths ``L(q)`` ``(m,)`` [m]."""
        return self.paths.lengths(context)

    def contraction(self, context: ActuationContext) -> Float[Array, " m"]:
        """``eps(q) = 1 - L(q) / L0`` ``(m,)`` (unclipped)."""
        return 1.0 - self.lengths(context) / self._rest(context.q.dtype)

    def force_per_pressure(self, contraction: Float[Array, " m"]) -> Float[Array, " m"]:
        """``f(eps) = F / p`` ``(m,)`` [m^2] (zero at and beyond the maximum contraction)."""
        return mckibben_force(
            1.0,
            contraction,
            self.radius.astype(contraction.dtype),
            self.braid_angle.astype(contraction.dtype),
            self.correction.astype(contraction.dtype),
        )

    def forces(self, context: ActuationContext, u: Float[Array, " m"]) -> Float[Array, " m"]:
        """Muscle forces ``F(p, eps(q))`` ``(m,)`` [N] at the pressures ``u`` [Pa] (clipped at zero)."""
        return self.effort(u) * self.force_per_pressure(self.contraction(context))

    def matrix(self, context: ActuationContext) -> Float[Array, "n m"]:
        """``A(q) = -dL/dq^T diag(f(eps(q)))`` ``(n, m)`` [N m/Pa or N/Pa]: the generalized
        force per unit pressure, ``d tau / dp`` (exact: ``F`` is linear in ``p``)."""
        f = self.force_per_pressure(self.contraction(context))
        return -self.paths.length_jacobian(context).T * f[None, :]

    def coordinates(self, context: ActuationContext) -> Float[Array, " m"]:
        """Volume displaced since rest, ``V(q) - V(L0)`` ``(m,)`` [m^3]: the coordinate
        work-conjugate to pressure (``dV/dq^T = A(q)`` column by column)::

            V = L0 pi r0^2 (a (1 - (1 - k eps_c)^3) / (3 k) - b eps_c),  eps_c = min(eps, eps_max)
        """
        dtype = context.q.dtype
        L0 = self._rest(dtype)
        r0, theta, k = (x.astype(dtype) for x in (self.radius, self.braid_angle, self.correction))
        a, b = mckibben_coefficients(theta)
        eps = jnp.minimum(self.contraction(context), mckibben_max_contraction(theta, k))
        return L0 * jnp.pi * r0**2 * (a * (1.0 - (1.0 - k * eps) ** 3) / (3.0 * k) - b * eps)

    def effort(self, u: Float[Array, " m"]) -> Float[Array, " m"]:
        """Gauge pressures [Pa], ``max(u, 0)``."""
        return jnp.maximum(u, 0.0)


__all__ = [
    "ArticulatedTendons",
    "PulleyTendons",
    "McKibbenMuscles",
    "mckibben_force",
    "mckibben_coefficients",
    "mckibben_max_contraction",
    "MCKIBBEN_NEUTRAL_ANGLE",
]
