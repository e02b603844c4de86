"""Strain bases of Geometric Variable Strain links and the per-link quadrature rule.

A GVS link of length ``L`` has the strain field ``xi(X) = xi_ref + B(X) q_link`` over the
normalised abscissa ``X = s / L`` in ``[0, 1]``. Each strain component ``c`` (ordered
``[kx, ky, kz, sx, sy, sz]``) that is active carries ``orders[c] + 1`` coordinates, the
coefficients of ``orders[c] + 1`` scalar functions ``P_0(X), P_1(X), ...`` of the kind:

* ``"monomial"``: ``P_j(X) = X^j`` (``orders[c]`` is the degree);
* ``"legendre"``: ``P_j(X) = Legendre_j(2 X - 1)`` (orthogonal on ``[0, 1]``);
* ``"bspline"``: the clamped B-splines ``N_(j,p)`` of degree ``p`` (:attr:`StrainBasis.degree`)
  on uniform knots, ``orders[c] + 1 >= p + 1`` control points (``orders[c] - p + 1``
  knot spans). Local control: a coordinate moves the strain on at most ``p + 1`` spans.
  Degree 1 is the piecewise linear strain; ``p + 1`` control points are one polynomial
  span (the Bernstein basis);
* ``"hermite"``: piecewise cubic Hermite on ``m`` uniform spans: at each of the ``m + 1``
  nodes a value and a slope ``d xi / dX`` (``orders[c] + 1 = 2 (m + 1)`` coordinates,
  ordered node by node, value first). One span is the cubic Hermite (Bezier) segment.

With ``cumulative=True`` the coordinates are those of the cumulative functions
``Pbar_i = sum_(j >= i) P_j`` (the cumulative parameterisations of the Lie-group framework
for continuum robots): the same strain fields, with coordinates that are increments
``q_i - q_(i-1)`` of the plain ones. For B-splines ``Pbar_0 = 1``: the first coordinate is
a uniform strain of the link and the others add local changes to it.

Order 0 (one polynomial coordinate) is a constant strain, so a link with all orders 0 is a
PCS segment. Coordinates are ordered component by component, and within a component by
function index.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

from ._strains import SPATIAL_STRAINS, strain_mask

BASIS_KINDS: tuple[str, ...] = ("monomial", "legendre", "bspline", "hermite")
POLYNOMIAL_KINDS: tuple[str, ...] = ("monomial", "legendre")
MAX_SPLINE_DEGREE = 5

# Two-point Gauss rule of the fourth-order Magnus step, as fractions of a cell.
MAGNUS_NODES: tuple[float, float] = (0.5 - math.sqrt(3.0) / 6.0, 0.5 + math.sqrt(3.0) / 6.0)


@dataclasses.dataclass(frozen=True)
class StrainBasis:
    """Static description of one link's strain basis (hashable: part of a model's structure).

    Attributes:
        kind: one of :data:`BASIS_KINDS` (module docstring).
        orders: per component ``[kx, ky, kz, sx, sy, sz]`` the number of coordinates minus
            one (the polynomial degree for ``"monomial"`` and ``"legendre"``); ``-1`` marks
            an inactive component (its strain stays at the reference value).
        degree: the B-spline degree (1 to 5) for ``"bspline"``; 0 for the other kinds.
        cumulative: coordinates of the cumulative functions ``Pbar_i = sum_(j >= i) P_j``.
    """

    kind: str
    orders: tuple[int, int, int, int, int, int]
    degree: int = 0
    cumulative: bool = False

    def __post_init__(self):
        if self.kind not in BASIS_KINDS:
            raise ValueError(f"kind: unknown strain basis {self.kind!r}; use one of {BASIS_KINDS}")
        orders = tuple(int(o) for o in self.orders)
        if len(orders) != 6 or any(o < -1 for o in orders):
            raise ValueError(f"orders: expected six integers >= -1 (-1: inactive), got {self.orders}")
        if all(o < 0 for o in orders):
            raise ValueError("orders: a link needs at least one active strain component")
        active = [o + 1 for o in orders if o >= 0]
        degree = int(self.degree)
        if self.kind == "bspline":
            if not 1 <= degree <= MAX_SPLINE_DEGREE:
                raise ValueError(f"degree: B-spline degree must be in 1..{MAX_SPLINE_DEGREE}, got {self.degree}")
            if min(active) < degree + 1:
                raise ValueError(
                    f"orders: a degree-{degree} B-spline needs at least {degree + 1} control points per active "
                    f"component, got {active}"
                )
        elif degree != 0:
            raise ValueError(f"degree: only B-spline bases take a degree, got {self.degree} for {self.kind!r}")
        if self.kind == "hermite" and any(k < 4 or k % 2 for k in active):
            raise ValueError(
                f"orders: a Hermite component has a value and a slope at each of >= 2 nodes (an even number "
                f">= 4 of coordinates), got {active}"
            )
        object.__setattr__(self, "orders", orders)
        object.__setattr__(self, "degree", degree)
        object.__setattr__(self, "cumulative", bool(self.cumulative))

    @classmethod
    def create(
        cls,
        active=None,
        order: int | Sequence[int] | Mapping[str, int] = 0,
        kind: str = "monomial",
        cumulative: bool = False,
    ) -> StrainBasis:
        """Polynomial basis from active strain names (or a preset such as ``"pcc"``;
        ``None``: all six) and one order for all of them, one per component (six entries),
        or per name.

        Example: ``StrainBasis.create(("kx", "ky", "kz", "sx"), {"ky": 1, "kz": 1})`` has
        linear bending and constant torsion and elongation (7 coordinates)."""
        if kind not in POLYNOMIAL_KINDS:
            raise ValueError(
                f"kind: create() builds the polynomial bases {POLYNOMIAL_KINDS}; use StrainBasis.bspline or "
                f"StrainBasis.hermite for {kind!r}"
            )
        orders = _per_component(active, order, "order", minimum=0)
        return cls(kind, orders, cumulative=cumulative)

    @classmethod
    def bspline(
        cls,
        active=None,
        control_points: int | Sequence[int] | Mapping[str, int] = 4,
        degree: int = 3,
        cumulative: bool = False,
    ) -> StrainBasis:
        """Clamped uniform B-spline basis of ``degree`` (1 to 5) with ``control_points``
        coordinates (one number, six, or per name) on each active component."""
        counts = _per_component(active, control_points, "control_points", minimum=1, default=degree + 1)
        return cls("bspline", tuple(c - 1 if c > 0 else -1 for c in counts), degree, cumulative)

    @classmethod
    def hermite(
        cls, active=None, nodes: int | Sequence[int] | Mapping[str, int] = 2, cumulative: bool = False
    ) -> StrainBasis:
        """Piecewise cubic Hermite basis with ``nodes`` (>= 2: one span or more) uniform
        nodes on each active component (one number, six, or per name): ``2 nodes``
        coordinates each."""
        counts = _per_component(active, nodes, "nodes", minimum=2)
        return cls("hermite", tuple(2 * c - 1 if c > 0 else -1 for c in counts), cumulative=cumulative)

    @property
    def num_dofs(self) -> int:
        """Number of coordinates of the link."""
        return sum(o + 1 for o in self.orders)

    @property
    def coordinate_names(self) -> tuple[str, ...]:
        """``("ky0", "ky1", ...)``: strain name and function index of each coordinate."""
        return tuple(f"{name}{j}" for name, o in zip(SPATIAL_STRAINS, self.orders) for j in range(o + 1))

    @property
    def breakpoints(self) -> tuple[float, ...]:
        """Sorted normalised abscissae ``(0, ..., 1)`` where the basis may lose smoothness
        (the knots of every active component); ``(0, 1)`` for polynomials. GVS places
        Magnus cells and a Gauss rule on every span between them."""
        points = {0.0, 1.0}
        for o in self.orders:
            if o >= 0:
                spans = self._spans(o + 1)
                points.update(j / spans for j in range(1, spans))
        return tuple(sorted(points))

    def _spans(self, count: int) -> int:
        """Knot spans of a component with ``count`` coordinates."""
        if self.kind == "bspline":
            return count - self.degree
        if self.kind == "hermite":
            return count // 2 - 1
        return 1

    def evaluate(self, X: Array) -> Array:
        """Basis matrices ``(6, k, P)`` at normalised abscissae ``X`` ``(P,)`` (``k`` =
        :attr:`num_dofs`); traceable in ``X``."""
        X = jnp.asarray(X)
        k = self.num_dofs
        rows, col = [], 0
        for o in self.orders:  # each row: the component's functions in its columns, zeros elsewhere
            row = jnp.zeros((k,) + X.shape, X.dtype)
            if o >= 0:
                row = row.at[col : col + o + 1].set(self._functions(X, o + 1))
                col += o + 1
            rows.append(row)
        return jnp.stack(rows)

    def _functions(self, X: Array, count: int) -> Array:
        """``(count, P)`` values of one component's functions (cumulative if asked)."""
        if self.kind in POLYNOMIAL_KINDS:
            values = _polynomials(self.kind, X, count - 1)
        elif self.kind == "bspline":
            values = _clamped_bsplines(X, count, self.degree)
        else:
            values = _cubic_hermite(X, count // 2 - 1)
        if self.cumulative:
            values = jnp.flip(jnp.cumsum(jnp.flip(values, 0), axis=0), 0)
        return values


def _per_component(active, value, name: str, minimum: int, default: int | None = None) -> tuple[int, ...]:
    """Per-component integers from one value, six, or a mapping (names left out of it get
    ``default``, else ``minimum``); inactive components get ``-1`` for ``"order"``, 0 for
    counts."""
    mask = strain_mask(active, 1, planar=False)[0]
    if isinstance(value, Mapping):
        unknown = [k for k in value if k not in SPATIAL_STRAINS]
        if unknown:
            raise ValueError(f"{name}: unknown strain name(s) {unknown}; valid names are {SPATIAL_STRAINS}")
        fill = minimum if default is None else default
        per = [int(value.get(s, fill)) for s in SPATIAL_STRAINS]
    elif np.ndim(value) == 0:
        per = [int(value)] * 6
    else:
        per = [int(v) for v in value]
        if len(per) != 6:
            raise ValueError(f"{name}: expected one value or six, got {len(per)}")
    if any(v < minimum for v, a in zip(per, mask) if a):
        raise ValueError(f"{name}: values of active components must be >= {minimum}, got {per}")
    offset = 0 if name == "order" else 1
    return tuple(v if a else offset - 1 for v, a in zip(per, mask))


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


def _span_of(X: Array, spans: int) -> tuple[Array, Array]:
    """Index of the uniform span of ``[0, 1]`` holding ``X`` (``X = 1`` in the last one)
    and the local coordinate in it, in ``[0, 1]``."""
    index = jnp.clip(jnp.floor(X * spans), 0, spans - 1)
    return index.astype(jnp.int32), X * spans - index


def clamped_knots(count: int, degree: int) -> np.ndarray:
    """Knot vector ``(count + degree + 1,)`` of ``count`` clamped uniform B-splines on [0, 1]."""
    spans = count - degree
    return np.concatenate([np.zeros(degree), np.linspace(0.0, 1.0, spans + 1), np.ones(degree)])


def _clamped_bsplines(X: Array, count: int, degree: int) -> Array:
    """``(count, P)`` clamped uniform B-splines of ``degree`` at ``X`` (Cox-de Boor; the
    knot differences are static, so empty spans drop out before tracing)."""
    t = clamped_knots(count, degree)
    span, _ = _span_of(X, count - degree)
    N = (jnp.arange(t.size - 1)[:, None] == (span + degree)[None, :]).astype(X.dtype)  # degree 0
    for d in range(1, degree + 1):
        j = np.arange(t.size - 1 - d)
        left = np.divide(1.0, t[j + d] - t[j], out=np.zeros(j.size), where=t[j + d] > t[j])
        right = np.divide(1.0, t[j + d + 1] - t[j + 1], out=np.zeros(j.size), where=t[j + d + 1] > t[j + 1])
        N = (X[None] - t[j, None]) * left[:, None] * N[:-1] + (t[j + d + 1, None] - X[None]) * right[:, None] * N[1:]
    return N


def _cubic_hermite(X: Array, spans: int) -> Array:
    """``(2 (spans + 1), P)``: per node the value and the slope (per unit ``X``) functions of
    piecewise cubic Hermite interpolation on ``spans`` uniform spans."""
    span, tau = _span_of(X, spans)
    h = 1.0 / spans
    t2, t3 = tau * tau, tau * tau * tau
    local = (2 * t3 - 3 * t2 + 1, h * (t3 - 2 * t2 + tau), -2 * t3 + 3 * t2, h * (t3 - t2))  # h00 h10 h01 h11
    out = []
    for node in range(spans + 1):
        at_start, at_end = span == node, span == node - 1
        out.append(jnp.where(at_start, local[0], 0.0) + jnp.where(at_end, local[2], 0.0))
        out.append(jnp.where(at_start, local[1], 0.0) + jnp.where(at_end, local[3], 0.0))
    return jnp.stack(out)


def link_nodes(num_gauss_points: int, breakpoints: Sequence[float] = (0.0, 1.0)) -> tuple[np.ndarray, np.ndarray]:
    """Normalised nodes and weights of a link's composite Gauss-Legendre rule:
    ``num_gauss_points`` points on every span between consecutive ``breakpoints``, the
    ends and the interior breakpoints as zero-weight nodes (so no Magnus cell straddles
    a knot): ``[0, x .., b_1, x .., 1]`` and ``[0, w .., 0, w .., 0]``."""
    x, w = np.polynomial.legendre.leggauss(num_gauss_points)
    b = np.asarray(breakpoints, dtype=float)
    nodes, weights = [np.zeros(1)], [np.zeros(1)]
    for a, c in zip(b[:-1], b[1:]):
        nodes += [a + (c - a) * (x + 1.0) / 2.0, np.full(1, c)]
        weights += [(c - a) * w / 2.0, np.zeros(1)]
    return np.concatenate(nodes), np.concatenate(weights)


def pad_rule(nodes: np.ndarray, weights: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """A rule padded to ``size`` nodes by repeating the end node (zero-width cells) with
    zero weight, so links with different rules share array shapes."""
    pad = size - nodes.size
    return np.concatenate([nodes, np.ones(pad)]), np.concatenate([weights, np.zeros(pad)])
