"""The actuation contract: what every actuator offers and what every model hands it.

An actuator maps commands ``u`` ``(m,)`` to the generalized force ``tau = A(q) effort(u)``
``(n,)`` of a model with ``n`` coordinates. It never asks which model it is installed on:
the model describes its configuration through an :class:`ActuationContext`, and the
actuator computes everything it needs from that.

* :class:`RodContext` (PCS, GVS): the full strains at sample points along every segment,
  the samples' quadrature weights and the map from strain-space forces to generalized
  forces.
* :class:`ChainContext` (articulated chains): the world poses and body Jacobians of the
  links.

A model calls :meth:`Actuation.bind` once at construction with its context at ``q = 0``:
the actuator checks that it fits (shapes, link indices) and returns itself, possibly with
model-dependent defaults filled in (a McKibben muscle's resting length). Adding an actuator
type means subclassing :class:`Actuation`; no model changes.
"""

import abc
from typing import final

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float


class ActuationContext(eqx.Module):
    """Abstract: the kinematics of a model at one configuration, as its actuator sees it.

    Attributes:
        q: ``(n,)`` generalized coordinates.
    """

    q: eqx.AbstractVar[Array]

    @property
    def num_dofs(self) -> int:
        """Number ``n`` of generalized coordinates."""
        return int(self.q.shape[-1])


@final
class RodContext(ActuationContext):
    """A rod's strain field at sample points along its ``N`` segments.

    Attributes:
        q: ``(n,)`` generalized coordinates.
        strain: ``(N, P, d)`` full strains ``xi`` at the samples (``d = 6`` spatial
            ``[kx, ky, kz, sx, sy, sz]``, ``d = 3`` planar ``[k, sx, sy]``).
        abscissae: ``(N, P)`` positions of the samples on each segment, normalised to
            ``[0, 1]`` from the segment's base.
        weights: ``(N, P)`` quadrature weights of the samples on ``[0, 1]``.
        length: ``(N,)`` segment lengths at rest [m].
        selectors: ``(N, P, d, n)`` ``d xi / d q`` at the samples.
        constant_strain: (static) the strain is constant along each segment (PCS; then
            ``P = 1`` and an actuator may integrate with a rule of its own).
        coordinate_slots: (static) when every coordinate is one strain component of one
            segment (PCS), the index of each coordinate in the flattened ``(N, d)`` strain
            array; strain-space forces are then gathered instead of multiplied by the
            selectors.
    """

    q: Array
    strain: Array
    abscissae: Array
    weights: Array
    length: Array
    selectors: Array
    constant_strain: bool = eqx.field(static=True, default=False)
    coordinate_slots: tuple[int, ...] | None = eqx.field(static=True, default=None)

    @property
    def num_segments(self) -> int:
        return int(self.strain.shape[0])

    @property
    def planar(self) -> bool:
        return int(self.strain.shape[-1]) == 3

    def to_generalized(self, force: Float[Array, "N P d"]) -> Float[Array, " n"]:
        """Generalized force ``(n,)`` of a force conjugate to the strain at the samples,
        ``(N, P, d)``: ``sum B^T f`` over the samples."""
        self._check_force_shape(force, ())
        if self.coordinate_slots is not None:
            return jnp.sum(force, axis=-2).reshape(-1)[np.asarray(self.coordinate_slots)]
        return jnp.einsum("ipdn,ipd->n", self.selectors, force)

    def columns_to_generalized(self, forces: Float[Array, "m N P d"]) -> Float[Array, "n m"]:
        """:meth:`to_generalized` of ``m`` strain-space forces at once, as the columns of an
        ``(n, m)`` matrix (e.g. ``A(q)`` from the strain gradients of the tendon lengths)."""
        self._check_force_shape(forces, forces.shape[:1])
        if self.coordinate_slots is not None:
            m = forces.shape[0]
            return jnp.sum(forces, axis=-2).reshape(m, -1)[:, np.asarray(self.coordinate_slots)].T
        return jnp.einsum("ipdn,mipd->nm", self.selectors, forces)

    def _check_force_shape(self, force: Array, leading: tuple[int, ...]) -> None:
        expected = tuple(leading) + tuple(self.strain.shape)
        if tuple(force.shape) != expected:
            raise ValueError(
                f"strain-space force: expected shape {expected} ((m,) + (N, P, d) for columns), got {force.shape}"
            )


@final
class CoordinateContext(ActuationContext):
    """A model whose actuators act on its coordinates alone (generalized forces), with no
    kinematics an actuator could read (e.g. the tube drives of a concentric tube robot).

    Attributes:
        q: ``(n,)`` generalized coordinates.
    """

    q: Array


@final
class ChainContext(ActuationContext):
    """An articulated chain with ``n`` joints at one configuration.

    Attributes:
        q: ``(n,)`` joint coordinates.
        base_pose: ``(4, 4)`` base frame in the world.
        poses: ``(n, 4, 4)`` world poses of the link frames.
        jacobians: ``(n, 6, n)`` body Jacobians ``[J^w; J^v]`` of the link frames (link
            ``i``'s body twist is ``jacobians[i] @ qd``); ``None`` in the context a model
            hands to :meth:`Actuation.bind`, which needs positions only.
    """

    q: Array
    base_pose: Array
    poses: Array
    jacobians: Array | None = None


class Actuation(eqx.Module):
    """Abstract actuator: commands ``u`` ``(m,)`` -> generalized force ``A(q) effort(u)``.

    Subclasses implement :attr:`num_actuators`, :meth:`effort` and :meth:`matrix`, and
    override :meth:`force` when ``A(q) effort(u)`` has a cheaper form, :meth:`bind` to
    validate themselves against a model, and :meth:`lengths` / :meth:`coordinates` where
    they have tendon lengths or other work-conjugate coordinates.
    """

    @property
    @abc.abstractmethod
    def num_actuators(self) -> int:
        """Number ``m`` of inputs."""

    @abc.abstractmethod
    def effort(self, u: Float[Array, " m"]) -> Float[Array, " m"]:
        """The effort each input exerts (tensions clipped at zero for tendons that only pull)."""

    @abc.abstractmethod
    def matrix(self, context: ActuationContext) -> Float[Array, "n m"]:
        """``A(q)`` ``(n, m)``: column ``j`` is the generalized force of a unit effort of input ``j``."""

    def force(self, context: ActuationContext, u: Float[Array, " m"]) -> Float[Array, " n"]:
        """``A(q) effort(u)`` ``(n,)``."""
        return self.matrix(context) @ self.effort(u)

    def bind(self, context: ActuationContext) -> "Actuation":
        """This actuator, checked against (and completed for) the model whose context at
        ``q = 0`` is ``context``; raises ``ValueError`` naming the field that does not fit."""
        return self

    def lengths(self, context: ActuationContext) -> Float[Array, " m"]:
        """Path lengths ``l(q)`` ``(m,)`` [m] of tendon-like actuators."""
        raise TypeError(f"{type(self).__name__} has no tendon lengths")

    def coordinates(self, context: ActuationContext) -> Float[Array, " m"]:
        """Actuator coordinates ``phi(q)`` ``(m,)`` up to a constant, with
        ``d phi/dq^T = A(q)``: by default the shortening ``-l(q)`` of tendon paths."""
        return -self.lengths(context)


def require_context(actuation: Actuation, context: ActuationContext, kind: type, models: str) -> None:
    """Raise ``ValueError`` when ``actuation`` is installed on a model whose context is not
    a ``kind`` (``models``: the models that provide one, for the message)."""
    if not isinstance(context, kind):
        raise ValueError(
            f"actuation: {type(actuation).__name__} acts on {models}; this model provides a {type(context).__name__}"
        )
