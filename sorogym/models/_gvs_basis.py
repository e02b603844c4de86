"""Strain bases of Geometric Variable Strain links and the per-link quadrature rule.

A GVS link of length ``L`` has the strain field ``xi(X) = xi_ref + B(X) q_link`` over the
normalised abscissa ``X = s / L`` in ``[0, 1]``. Each strain component ``c`` (ordered
``[kx, ky, kz, sx, sy, sz]``) that is active carries ``order[c] + 1`` coordinates, the
coefficients of the polynomials ``P_0(X), ..., P_order(X)``:

* ``"monomial"``: ``P_j(X) = X^j``;
* ``"legendre"``: ``P_j(X) = Legendre_j(2 X - 1)`` (orthogonal on ``[0, 1]``).

Order 0 is a constant strain, so a link with all orders 0 is a PCS segment. Coordinates are
ordered component by component, and within a component by increasing degree.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

from ._strains import SPATIAL_STRAINS, strain_mask

BASIS_KINDS: tuple[str, ...] = ("monomial", "legendre")

# Two-point Gauss rule of the fourth-order Magnus step, as fractions of a cell.
MAGNUS_NODES: tuple[float, float] = (0.5 - math.sqrt(3.0) / 6.0, 0.5 + math.sqrt(3.0) / 6.0)


@dataclasses.dataclass(frozen=True)
class StrainBasis:
    """Static description of one link's strain basis (hashable: part of a model's structure).

    Attributes:
        kind: ``"monomial"`` or ``"legendre"``.
        orders: six polynomial orders ``[kx, ky, kz, sx, sy, sz]``; ``-1`` marks an inactive
            component (its strain stays at the reference value).
    """

    kind: str
    orders: tuple[int, int, int, int, int, int]

    def __post_init__(self):
        if self.kind not in BASIS_KINDS:
            raise ValueError(f"kind: unknown strain basis {self.kind!r}; use one of {BASIS_KINDS}")
        orders = tuple(int(o) for o in self.orders)
        if len(orders) != 6 or any(o < -1 for o in orders):
            raise ValueError(f"orders: expected six integers >= -1 (-1: inactive), got {self.orders}")
        if all(o < 0 for o in orders):
            raise ValueError("orders: a link needs at least one active strain component")
        object.__setattr__(self, "orders", orders)

    @classmethod
    def create(
        cls, active=None, order: int | Sequence[int] | Mapping[str, int] = 0, kind: str = "monomial"
    ) -> StrainBasis:
        """Basis from active strain names (or a preset such as ``"pcc"``; ``None``: all six)
        and one order for all of them, one per component (six entries), or per name.

        Example: ``StrainBasis.create(("kx", "ky", "kz", "sx"), {"ky": 1, "kz": 1})`` has
        linear bending and constant torsion and elongation (7 coordinates)."""
        mask = strain_mask(active, 1, planar=False)[0]
        if isinstance(order, Mapping):
            unknown = [k for k in order if k not in SPATIAL_STRAINS]
            if unknown:
                raise ValueError(f"order: unknown strain name(s) {unknown}; valid names are {SPATIAL_STRAINS}")
            per = [int(order.get(name, 0)) for name in SPATIAL_STRAINS]
        elif np.ndim(order) == 0:
            per = [int(order)] * 6
        else:
            per = [int(o) for o in order]
            if len(per) != 6:
                raise ValueError(f"order: expected one order or six, got {len(per)}")
        if any(o < 0 for o, a in zip(per, mask) if a):
            raise ValueError(f"order: orders of active components must be >= 0, got {per}")
        return cls(kind, tuple(o if a else -1 for o, a in zip(per, mask)))

    @property
    def num_dofs(self) -> int:
        """Number of coordinates of the link."""
        return sum(o + 1 for o in self.orders)

    @property
    def coordinate_names(self) -> tuple[str, ...]:
        """``("ky0", "ky1", ...)``: strain name and degree of each coordinate."""
        return tuple(f"{name}{j}" for name, o in zip(SPATIAL_STRAINS, self.orders) for j in range(o + 1))

    def evaluate(self, X: Array) -> Array:
        """Basis matrices ``(6, k, P)`` at normalised abscissae ``X`` ``(P,)`` (``k`` =
        :attr:`num_dofs`); traceable in ``X``."""
        X = jnp.asarray(X)
        degree = max(self.orders)
        polys = _polynomials(self.kind, X, degree)  # (degree + 1, P)
        k = self.num_dofs
        rows, col = [], 0
        for o in self.orders:  # each row: zeros, the component's polynomials, zeros
            parts = [jnp.zeros((col,) + X.shape, X.dtype)] if col else []
            if o >= 0:
                parts.append(polys[: o + 1])
                col += o + 1
            rest = k - col if o >= 0 else k - col
            if o >= 0 and rest:
                parts.append(jnp.zeros((rest,) + X.shape, X.dtype))
            if o < 0:
                parts = [jnp.zeros((k,) + X.shape, X.dtype)]
            rows.append(jnp.concatenate(parts) if len(parts) > 1 else parts[0])
        return jnp.stack(rows)


def _polynomials(kind: str, X: Array, degree: int) -> Array:
    """``(degree + 1, P)`` values of the basis polynomials of degree ``0 .. degree``."""
    out = [jnp.ones_like(X)]
    if kind == "monomial":
        for _ in range(degree):
            out.append(out[-1] * X)
        return jnp.stack(out)
    t = 2.0 * X - 1.0  # Legendre on [0, 1] via Bonnet's recursion
    if degree >= 1:
        out.append(t)
    for j in range(1, degree):
        out.append(((2 * j + 1) * t * out[j] - j * out[j - 1]) / (j + 1))
    return jnp.stack(out)


def link_nodes(num_gauss_points: int, num_padded: int) -> tuple[np.ndarray, np.ndarray]:
    """Normalised nodes ``[0, x_1 .. x_P, 1]`` and weights ``[0, w_1 .. w_P, 0]`` of a
    ``P``-point Gauss-Legendre rule on ``[0, 1]``, padded to ``num_padded + 2`` entries by
    repeating the end node (zero-width cells) with zero weight."""
    x, w = np.polynomial.legendre.leggauss(num_gauss_points)
    pad = num_padded - num_gauss_points
    nodes = np.concatenate([[0.0], (x + 1.0) / 2.0, [1.0], np.ones(pad)])
    weights = np.concatenate([[0.0], w / 2.0, [0.0], np.zeros(pad)])
    return nodes, weights
