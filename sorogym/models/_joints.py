"""Joints of a :class:`~sorogym.models.BodyTree`: how a body moves relative to the site of
its parent where it is attached, with unit quaternions for rotations of any size.

A joint connects a *site* on the parent body (a rod abscissa or a rigid link's frame) to the
child's *body frame* through a fixed ``offset`` (site frame -> joint frame) and the joint
motion ``h(q_j)`` (joint frame -> body frame)::

    g_body = g_site  offset  h(q_j)

Each joint has ``nq`` configuration and ``nv`` velocity coordinates. Velocities are
*body-frame* quantities: the relative twist of the body frame with respect to the joint
frame, expressed in the body frame, is ``V_rel = Phi(q_j) qd_j`` (columns ``Phi`` ``(6, nv)``,
angular first).

======================  ====  ====  ==================================  ===========================
kind                     nq    nv    configuration                        velocity
======================  ====  ====  ==================================  ===========================
``fixed``                0     0     -                                    -
``revolute``             1     1     angle about ``axis`` [rad]           angular rate [rad/s]
``prismatic``            1     1     slide along ``axis`` [m]             rate [m/s]
``universal``            2     2     angles about ``axis``, then          rates [rad/s]
                                     ``axis2`` (moved by the first)
``spherical``            4     3     unit quaternion ``[w, x, y, z]``     body angular velocity
``free``                 7     6     position ``p`` (joint frame) [m],    body twist ``[w_b, v_b]``
                                     unit quaternion ``[w, x, y, z]``     (``v_b = R^T dp/dt``)
======================  ====  ====  ==================================  ===========================

The retraction of the rotational joints is the group exponential: a spherical joint's
quaternion advances as ``quat (x) exp(dw / 2)``, a free joint's pose as
``(R, p) exp([dw, dv])`` on SE(3); both keep the quaternion unit to rounding. One-DOF joints
(and each axis of a universal joint) carry a linear spring ``k (q - rest)`` and a viscous
damper ``d qd``; spherical and free joints carry none.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

JOINT_KINDS = ("fixed", "revolute", "prismatic", "universal", "spherical", "free")
#: ``(nq, nv)`` of each joint kind.
JOINT_SIZES = {
    "fixed": (0, 0),
    "revolute": (1, 1),
    "prismatic": (1, 1),
    "universal": (2, 2),
    "spherical": (4, 3),
    "free": (7, 6),
}
#: Joint kinds whose coordinates form a vector space (springs act on them).
EUCLIDEAN_JOINTS = ("revolute", "prismatic", "universal")


@dataclasses.dataclass(frozen=True)
class Joint:
    """A joint's kind and constants (build with the class methods).

    Attributes:
        kind: one of :data:`JOINT_KINDS`.
        axes: unit axes in the joint frame, one per Euclidean coordinate (``revolute``,
            ``prismatic``: one; ``universal``: two, the second moved by the first rotation).
        stiffness, damping, rest: per Euclidean coordinate [N m/rad, N m s/rad, rad or SI
            equivalents for prismatic joints].
        position, quaternion: the free joint's pose at the neutral configuration (joint
            frame); the spherical joint's neutral quaternion ``[w, x, y, z]``.
    """

    kind: str
    axes: tuple[tuple[float, float, float], ...] = ()
    stiffness: tuple[float, ...] = ()
    damping: tuple[float, ...] = ()
    rest: tuple[float, ...] = ()
    position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    quaternion: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)

    @classmethod
    def fixed(cls) -> Joint:
        """Rigid attachment (no coordinates)."""
        return cls("fixed")

    @classmethod
    def revolute(cls, axis=(0.0, 0.0, 1.0), stiffness=0.0, damping=0.0, rest=0.0) -> Joint:
        """Rotation about the unit ``axis`` through the joint-frame origin."""
        return cls("revolute", (_triple(axis),), (float(stiffness),), (float(damping),), (float(rest),))

    @classmethod
    def prismatic(cls, axis=(1.0, 0.0, 0.0), stiffness=0.0, damping=0.0, rest=0.0) -> Joint:
        """Translation along the unit ``axis``."""
        return cls("prismatic", (_triple(axis),), (float(stiffness),), (float(damping),), (float(rest),))

    @classmethod
    def universal(cls, axis=(0.0, 0.0, 1.0), axis2=(0.0, 1.0, 0.0), stiffness=0.0, damping=0.0, rest=0.0) -> Joint:
        """Rotation about ``axis``, then about ``axis2`` (a Cardan joint)."""
        per = lambda v: tuple(float(x) for x in np.broadcast_to(np.asarray(v, float), (2,)))  # noqa: E731
        return cls("universal", (_triple(axis), _triple(axis2)), per(stiffness), per(damping), per(rest))

    @classmethod
    def spherical(cls, quaternion=(1.0, 0.0, 0.0, 0.0)) -> Joint:
        """Rotation of any size about the joint-frame origin (neutral ``quaternion``)."""
        return cls("spherical", quaternion=tuple(float(x) for x in np.asarray(quaternion, float).reshape(-1)))

    @classmethod
    def free(cls, position=(0.0, 0.0, 0.0), quaternion=(1.0, 0.0, 0.0, 0.0)) -> Joint:
        """Six-DOF floating joint (neutral pose ``position``, ``quaternion`` in the joint frame)."""
        return cls(
            "free",
            position=_triple(position),
            quaternion=tuple(float(x) for x in np.asarray(quaternion, float).reshape(-1)),
        )

    @property
    def sizes(self) -> tuple[int, int]:
        """``(nq, nv)``."""
        return JOINT_SIZES[self.kind]

    def validate(self, body: str) -> None:
        """Raise ``ValueError`` naming ``body`` and the field for an unknown kind, an axis of
        zero or non-finite length, negative stiffness or damping, or a non-unit quaternion."""
        if self.kind not in JOINT_KINDS:
            raise ValueError(f"body {body!r}: joint.kind {self.kind!r} is unknown; use one of {JOINT_KINDS}")
        num_axes = {"revolute": 1, "prismatic": 1, "universal": 2}.get(self.kind, 0)
        if len(self.axes) != num_axes:
            raise ValueError(f"body {body!r}: joint.axes: a {self.kind} joint needs {num_axes} axes")
        for axis in self.axes:
            norm = float(np.linalg.norm(axis))
            if not np.isfinite(norm) or norm < 1e-9:
                raise ValueError(f"body {body!r}: joint.axes: an axis of zero or non-finite length {axis}")
        for name in ("stiffness", "damping", "rest"):
            values = np.asarray(getattr(self, name), float)
            if values.shape != (num_axes,) or not np.all(np.isfinite(values)):
                raise ValueError(f"body {body!r}: joint.{name}: expected {num_axes} finite values, got {values}")
            if name != "rest" and np.any(values < 0):
                raise ValueError(f"body {body!r}: joint.{name}: must be >= 0, got {values}")
        quat = np.asarray(self.quaternion, float)
        if quat.shape != (4,) or not np.all(np.isfinite(quat)) or abs(np.linalg.norm(quat) - 1.0) > 1e-6:
            raise ValueError(f"body {body!r}: joint.quaternion: must be a unit quaternion [w, x, y, z], got {quat}")
        pos = np.asarray(self.position, float)
        if pos.shape != (3,) or not np.all(np.isfinite(pos)):
            raise ValueError(f"body {body!r}: joint.position: expected 3 finite values, got {pos}")

    def unit_axes(self) -> np.ndarray:
        """``(num_axes, 3)`` normalised axes."""
        axes = np.asarray(self.axes, float).reshape(-1, 3)
        return axes / np.linalg.norm(axes, axis=1, keepdims=True)

    def screws(self) -> np.ndarray:
        """``(num_axes, 6)`` screw axes ``[w; v]`` in the joint frame."""
        axes = self.unit_axes()
        if self.kind == "prismatic":
            return np.concatenate([np.zeros_like(axes), axes], axis=1)
        return np.concatenate([axes, np.zeros_like(axes)], axis=1)

    def neutral(self) -> np.ndarray:
        """Neutral configuration ``(nq,)``."""
        if self.kind == "free":
            return np.concatenate([np.asarray(self.position, float), np.asarray(self.quaternion, float)])
        if self.kind == "spherical":
            return np.asarray(self.quaternion, float)
        return np.zeros(self.sizes[0])


def _triple(v) -> tuple[float, float, float]:
    a = np.asarray(v, float).reshape(-1)
    if a.shape != (3,):
        raise ValueError(f"joint axis/position: expected 3 values, got {a.shape}")
    return tuple(float(x) for x in a)


# -- unit quaternions [w, x, y, z] (leading component axis, any trailing batch axes) ------------


def quaternion_to_rotation(quat: Float[Array, "4 ..."]) -> Float[Array, "3 3 ..."]:
    """Rotation matrix of the quaternion ``[w, x, y, z]`` (normalised first), components on
    the leading axis."""
    quat = quat / jnp.sqrt(jnp.sum(quat * quat, axis=0, keepdims=True))
    w, x, y, z = quat[0], quat[1], quat[2], quat[3]
    return jnp.stack(
        [
            jnp.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)]),
            jnp.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)]),
            jnp.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]),
        ]
    )


def quaternion_rotate(quat: Float[Array, "4 ..."], v: Float[Array, "3 ..."], inverse: bool = False) -> Array:
    """``R(quat) v`` (``R^T v`` with ``inverse``) ``(3, ...)`` without forming ``R``:
    ``v + 2 (w u x v + u x (u x v)) / |quat|^2`` with ``u = [x, y, z]`` (any norm)."""
    w, x, y, z = quat[0], quat[1], quat[2], quat[3]
    if inverse:
        x, y, z = -x, -y, -z
    scale = 2.0 / (w * w + x * x + y * y + z * z)
    a, b, c = v[0], v[1], v[2]
    cx, cy, cz = y * c - z * b, z * a - x * c, x * b - y * a  # u x v
    return jnp.stack(
        [
            a + scale * (w * cx + y * cz - z * cy),
            b + scale * (w * cy + z * cx - x * cz),
            c + scale * (w * cz + x * cy - y * cx),
        ]
    )


def quaternion_multiply(a: Float[Array, "4 ..."], b: Float[Array, "4 ..."]) -> Float[Array, "4 ..."]:
    """Hamilton product ``a (x) b`` (rotation ``R(a) R(b)``)."""
    aw, ax, ay, az = a[0], a[1], a[2], a[3]
    bw, bx, by, bz = b[0], b[1], b[2], b[3]
    return jnp.stack(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ]
    )


def quaternion_exp(w: Float[Array, "3 ..."]) -> Float[Array, "4 ..."]:
    """Unit quaternion of the rotation vector ``w`` [rad] (``[cos(|w|/2), sin(|w|/2) w/|w|]``),
    with a Taylor form near zero (finite derivatives at ``w = 0``)."""
    theta2 = jnp.sum(w * w, axis=0)
    small = theta2 < 1e-8
    safe = jnp.where(small, 1.0, theta2)
    theta = jnp.sqrt(safe)
    half_sinc = jnp.where(small, 0.5 - theta2 / 48.0, jnp.sin(0.5 * theta) / theta)
    cos_half = jnp.where(small, 1.0 - theta2 / 8.0, jnp.cos(0.5 * theta))
    return jnp.concatenate([cos_half[None], half_sinc[None] * w], axis=0)


def rotation_to_quaternion(R: Float[Array, "3 3"]) -> Float[Array, "4"]:
    """Unit quaternion ``[w, x, y, z]`` with ``w >= 0`` of a rotation matrix (numpy-side
    helper for building configurations; Shepperd's branch on the largest diagonal term)."""
    R = np.asarray(R, float)
    trace = np.trace(R)
    diag = np.array([trace, R[0, 0], R[1, 1], R[2, 2]])
    k = int(np.argmax(diag))
    if k == 0:
        w = 0.5 * np.sqrt(1.0 + trace)
        q = np.array([w, (R[2, 1] - R[1, 2]) / (4 * w), (R[0, 2] - R[2, 0]) / (4 * w), (R[1, 0] - R[0, 1]) / (4 * w)])
    else:
        i, j, m = k - 1, k % 3, (k + 1) % 3
        v = np.zeros(3)
        v[i] = 0.5 * np.sqrt(1.0 + R[i, i] - R[j, j] - R[m, m])
        v[j] = (R[j, i] + R[i, j]) / (4 * v[i])
        v[m] = (R[m, i] + R[i, m]) / (4 * v[i])
        w = (R[m, j] - R[j, m]) / (4 * v[i])
        q = np.concatenate([[w], v])
    return q if q[0] >= 0 else -q


def se3_exp_translation(w: Float[Array, "3 ..."], v: Float[Array, "3 ..."]) -> Float[Array, "3 ..."]:
    """Translation part of ``exp([w, v])`` on SE(3): ``V(w) v`` with the left Jacobian of
    SO(3), in a Taylor form near ``w = 0``."""
    theta2 = jnp.sum(w * w, axis=0)
    small = theta2 < 1e-6
    safe = jnp.where(small, 1.0, theta2)
    theta = jnp.sqrt(safe)
    b = jnp.where(small, 0.5 - theta2 / 24.0, (1.0 - jnp.cos(theta)) / safe)
    c = jnp.where(small, 1.0 / 6.0 - theta2 / 120.0, (theta - jnp.sin(theta)) / (safe * theta))
    wv = jnp.cross(w, v, axis=0)
    return v + b * wv + c * jnp.cross(w, wv, axis=0)


def screw_motion(screws: Float[Array, "a 6 G"], angles: Float[Array, "a G"]) -> tuple[Array, Array]:
    """``exp(S_1 q_1) ... exp(S_a q_a)`` for the screws of revolute or prismatic axes through
    the origin (pure rotation about ``w`` or translation along ``v``), batched over ``G``:
    ``(R (3, 3, G), p (3, G))``."""
    R, p = None, None
    for k in range(screws.shape[0]):
        w, v = screws[k, :3], screws[k, 3:]
        Rk = so3_exp_batched(w * angles[k][None])
        pk = v * angles[k][None]
        if R is None:
            R, p = Rk, pk
        else:
            p = p + jnp.einsum("ijg,jg->ig", R, pk)
            R = jnp.einsum("ijg,jkg->ikg", R, Rk)
    return R, p


def so3_exp_batched(w: Float[Array, "3 G"]) -> Float[Array, "3 3 G"]:
    """Rodrigues' formula over a trailing batch axis (finite derivatives at zero)."""
    return quaternion_to_rotation(quaternion_exp(w))


__all__ = ["Joint", "JOINT_KINDS", "JOINT_SIZES"]
