"""Static surfaces a robot touches: the ground plane, heightfield terrain and obstacles.

Every surface answers ``signed_distance(positions)``: for points ``(P, 3)`` [m] (world
frame) the signed distance ``(P,)`` [m] to its surface (negative inside) and the outward
unit normal ``(P, 3)`` there. A probe sphere of radius ``r`` penetrates by ``r - d``
(:func:`penetration`). Obstacles use exact signed-distance functions and take their normal
as the distance's gradient; the heightfield measures the distance to the tangent plane of
its bilinear interpolant (exact on planar pieces).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

_TINY = 1e-30


def _traced(value) -> bool:
    """Whether ``value`` is (or holds) a JAX tracer: inside ``jit``/``vmap`` a surface built
    from per-environment values is checked where those values were concrete."""
    return any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree.leaves(value))


def _vector(name: str, value, size: int, dtype=None, *, nonzero: bool = False, unit: bool = False):
    """``value`` validated as a finite (nonzero) ``size``-vector: as an array of ``dtype``,
    normalised if ``unit``; ``ValueError`` naming ``name`` otherwise (not checked when
    traced)."""
    if _traced(value):
        v = jnp.asarray(value, dtype)
        return v / jnp.linalg.norm(v) if unit else v
    v = np.asarray(value, float)
    if v.shape != (size,) or not np.all(np.isfinite(v)) or ((nonzero or unit) and np.linalg.norm(v) == 0.0):
        kind = "nonzero " if nonzero or unit else ""
        raise ValueError(f"{name}: a finite {kind}{size}-vector, got {value!r}")
    return jnp.asarray(v / np.linalg.norm(v) if unit else v, dtype)


def _positive(name: str, value, dtype) -> Array:
    if _traced(value):
        return jnp.asarray(value, dtype)
    v = np.asarray(value, float)
    if v.shape != () or not np.isfinite(v) or v <= 0.0:
        raise ValueError(f"{name}: a finite positive scalar, got {value!r}")
    return jnp.asarray(v, dtype)


def _squared_norm(v: Array) -> Array:
    """``|v|^2`` over the last axis (2 or 3 components), unrolled: under ``vmap`` a short
    reduction after the points' transposed layout was a slow kernel of its own on XLA:CPU
    (the sphere distance 1.2x faster this way)."""
    return sum(v[..., i] * v[..., i] for i in range(v.shape[-1]))


def _normalised(v: Array) -> Array:
    return v / jnp.sqrt(_squared_norm(v) + _TINY)[..., None]


def _gradient_normals(distance, positions: Array) -> Array:
    """Unit gradients ``(P, 3)`` of a pointwise signed-distance function."""
    return _normalised(jax.vmap(jax.grad(distance))(positions))


class GroundPlane(eqx.Module):
    """The half-space below the plane ``n . x = height`` (``normal`` ``(3,)``, any nonzero
    length, points out of the ground; ``height`` [m] along it)."""

    normal: Float[Array, " 3"]
    height: Float[Array, ""]

    def __init__(self, normal=(0.0, 0.0, 1.0), height=0.0, dtype=None):
        dtype = dtype or jnp.result_type(float)
        self.normal = _vector("normal", normal, 3, dtype, unit=True)
        h = np.asarray(height, float)
        if h.shape != () or not np.isfinite(h):
            raise ValueError(f"height: a finite scalar, got {height!r}")
        self.height = jnp.asarray(h, dtype)

    def signed_distance(self, positions: Float[Array, "P 3"]) -> tuple[Array, Array]:
        return positions @ self.normal - self.height, jnp.broadcast_to(self.normal, positions.shape)


class Heightfield(eqx.Module):
    """Terrain ``z = h(x, y)``: heights ``(nx, ny)`` [m] on a grid of ``spacing`` ``(dx,
    dy)`` [m] from ``origin`` ``(x0, y0)`` [m], bilinear in between, its edge values beyond
    the grid. :func:`terrain` builds named ones."""

    heights: Float[Array, "nx ny"]
    spacing: Float[Array, " 2"]
    origin: Float[Array, " 2"]

    def __init__(self, heights, spacing, origin=(0.0, 0.0), dtype=None):
        dtype = dtype or jnp.result_type(float)
        h = np.asarray(heights, float)
        if h.ndim != 2 or min(h.shape) < 2 or not np.all(np.isfinite(h)):
            raise ValueError(f"heights: a finite (nx, ny) grid with nx, ny >= 2, got shape {h.shape}")
        d = np.asarray(spacing, float)
        if d.shape != (2,) or not np.all(np.isfinite(d)) or not np.all(d > 0):
            raise ValueError(f"spacing: two finite positive values (dx, dy) [m], got {spacing!r}")
        self.heights = jnp.asarray(h, dtype)
        self.spacing = jnp.asarray(d, dtype)
        self.origin = _vector("origin", origin, 2, dtype)

    def height_and_slope(self, xy: Float[Array, "P 2"]) -> tuple[Array, Array]:
        """Heights ``(P,)`` [m] and gradients ``(P, 2)`` of the bilinear interpolant."""
        nx, ny = self.heights.shape
        u = (xy - self.origin) / self.spacing
        i = jnp.clip(jnp.floor(u[:, 0]), 0, nx - 2).astype(int)
        j = jnp.clip(jnp.floor(u[:, 1]), 0, ny - 2).astype(int)
        fx = jnp.clip(u[:, 0] - i, 0.0, 1.0)
        fy = jnp.clip(u[:, 1] - j, 0.0, 1.0)
        h00, h10 = self.heights[i, j], self.heights[i + 1, j]
        h01, h11 = self.heights[i, j + 1], self.heights[i + 1, j + 1]
        h = h00 * (1 - fx) * (1 - fy) + h10 * fx * (1 - fy) + h01 * (1 - fx) * fy + h11 * fx * fy
        inside_x = (u[:, 0] >= 0) & (u[:, 0] <= nx - 1)
        inside_y = (u[:, 1] >= 0) & (u[:, 1] <= ny - 1)
        dx = jnp.where(inside_x, ((h10 - h00) * (1 - fy) + (h11 - h01) * fy) / self.spacing[0], 0.0)
        dy = jnp.where(inside_y, ((h01 - h00) * (1 - fx) + (h11 - h10) * fx) / self.spacing[1], 0.0)
        return h, jnp.stack([dx, dy], axis=-1)

    def signed_distance(self, positions: Float[Array, "P 3"]) -> tuple[Array, Array]:
        h, slope = self.height_and_slope(positions[:, :2])
        up = jnp.concatenate([-slope, jnp.ones_like(h)[:, None]], axis=-1)
        scale = jnp.sqrt(_squared_norm(up))
        return (positions[:, 2] - h) / scale, up / scale[:, None]


#: names accepted by :func:`terrain`
TERRAINS = ("flat", "slope", "steps", "bumps")


def terrain(name: str, size=(4.0, 4.0), resolution: float = 0.02, dtype=None, **shape) -> Heightfield:
    """A named :class:`Heightfield` centred on the origin, ``size`` ``(Lx, Ly)`` [m] with
    grid ``resolution`` [m]:

    * ``"flat"``: zero height;
    * ``"slope"``: rising along +x at ``angle`` [rad] (default 0.1);
    * ``"steps"``: stairs along +x of ``height`` [m] (0.02) every ``width`` [m] (0.3), each
      edge a ramp one grid cell wide;
    * ``"bumps"``: ``amplitude`` [m] (0.01) ``sin(2 pi x / wavelength) sin(2 pi y /
      wavelength)``, ``wavelength`` [m] (0.4).
    """
    defaults = {
        "slope": {"angle": 0.1},
        "steps": {"height": 0.02, "width": 0.3},
        "bumps": {"amplitude": 0.01, "wavelength": 0.4},
        "flat": {},
    }
    if name not in defaults:
        raise ValueError(f"terrain: unknown name {name!r}; named terrains are {TERRAINS}")
    unknown = set(shape) - set(defaults[name])
    if unknown:
        raise ValueError(f"terrain {name!r}: unknown parameters {sorted(unknown)}; it takes {sorted(defaults[name])}")
    p = {**defaults[name], **shape}
    Lx, Ly = (float(v) for v in size)
    x = np.arange(-Lx / 2, Lx / 2 + 0.5 * resolution, resolution)
    y = np.arange(-Ly / 2, Ly / 2 + 0.5 * resolution, resolution)
    X, Y = np.meshgrid(x, y, indexing="ij")
    if name == "flat":
        H = np.zeros_like(X)
    elif name == "slope":
        H = np.tan(p["angle"]) * X
    elif name == "steps":
        H = p["height"] * np.floor((X - x[0]) / p["width"])
    else:
        k = 2 * np.pi / p["wavelength"]
        H = p["amplitude"] * np.sin(k * X) * np.sin(k * Y)
    return Heightfield(H, (resolution, resolution), (x[0], y[0]), dtype)


class SphereObstacle(eqx.Module):
    """A static sphere: ``center`` ``(3,)`` [m], ``radius`` [m]."""

    center: Float[Array, " 3"]
    radius: Float[Array, ""]

    def __init__(self, center, radius, dtype=None):
        dtype = dtype or jnp.result_type(float)
        self.center, self.radius = _vector("center", center, 3, dtype), _positive("radius", radius, dtype)

    def signed_distance(self, positions: Float[Array, "P 3"]) -> tuple[Array, Array]:
        offset = positions - self.center
        dist = jnp.sqrt(_squared_norm(offset) + _TINY)
        return dist - self.radius, offset / dist[:, None]


class BoxObstacle(eqx.Module):
    """A static box: ``center`` ``(3,)`` [m], ``half_sizes`` ``(3,)`` [m] along its axes,
    ``rotation`` ``(3, 3)`` (box axes in the world, identity by default)."""

    center: Float[Array, " 3"]
    half_sizes: Float[Array, " 3"]
    rotation: Float[Array, "3 3"]

    def __init__(self, center, half_sizes, rotation=None, dtype=None):
        dtype = dtype or jnp.result_type(float)
        self.center = _vector("center", center, 3, dtype)
        h = np.asarray(half_sizes, float)
        if h.shape != (3,) or not np.all(np.isfinite(h)) or not np.all(h > 0):
            raise ValueError(f"half_sizes: three finite positive values [m], got {half_sizes!r}")
        self.half_sizes = jnp.asarray(h, dtype)
        R = np.eye(3) if rotation is None else np.asarray(rotation, float)
        if R.shape != (3, 3) or not np.allclose(R.T @ R, np.eye(3), atol=1e-9) or np.linalg.det(R) <= 0:
            raise ValueError("rotation: a proper rotation matrix (3, 3)")
        self.rotation = jnp.asarray(R, dtype)

    def _distance(self, x: Array) -> Array:
        q = jnp.abs(self.rotation.T @ (x - self.center)) - self.half_sizes
        outside = jnp.sqrt(jnp.sum(jnp.maximum(q, 0.0) ** 2) + _TINY)
        return jnp.where(jnp.max(q) > 0, outside, jnp.max(q))

    def signed_distance(self, positions: Float[Array, "P 3"]) -> tuple[Array, Array]:
        return jax.vmap(self._distance)(positions), _gradient_normals(self._distance, positions)


class CapsuleObstacle(eqx.Module):
    """A static capsule: the points within ``radius`` [m] of the segment ``start`` ->
    ``end`` ``(3,)`` [m]."""

    start: Float[Array, " 3"]
    end: Float[Array, " 3"]
    radius: Float[Array, ""]

    def __init__(self, start, end, radius, dtype=None):
        dtype = dtype or jnp.result_type(float)
        self.start, self.end = _vector("start", start, 3, dtype), _vector("end", end, 3, dtype)
        self.radius = _positive("radius", radius, dtype)

    def signed_distance(self, positions: Float[Array, "P 3"]) -> tuple[Array, Array]:
        axis = self.end - self.start
        t = jnp.clip((positions - self.start) @ axis / jnp.maximum(axis @ axis, _TINY), 0.0, 1.0)
        offset = positions - (self.start + t[:, None] * axis)
        dist = jnp.sqrt(_squared_norm(offset) + _TINY)
        return dist - self.radius, offset / dist[:, None]


class CylinderObstacle(eqx.Module):
    """A static solid cylinder: ``center`` ``(3,)`` [m], unit ``axis`` ``(3,)`` (any
    nonzero length), ``radius`` [m] and ``half_length`` [m] along the axis."""

    center: Float[Array, " 3"]
    axis: Float[Array, " 3"]
    radius: Float[Array, ""]
    half_length: Float[Array, ""]

    def __init__(self, center, axis, radius, half_length, dtype=None):
        dtype = dtype or jnp.result_type(float)
        self.center = _vector("center", center, 3, dtype)
        self.axis = _vector("axis", axis, 3, dtype, unit=True)
        self.radius = _positive("radius", radius, dtype)
        self.half_length = _positive("half_length", half_length, dtype)

    def _distance(self, x: Array) -> Array:
        r = x - self.center
        along = r @ self.axis
        radial = jnp.sqrt(jnp.sum((r - along * self.axis) ** 2) + _TINY)
        q = jnp.stack([radial - self.radius, jnp.abs(along) - self.half_length])
        outside = jnp.sqrt(jnp.sum(jnp.maximum(q, 0.0) ** 2) + _TINY)
        return jnp.where(jnp.max(q) > 0, outside, jnp.max(q))

    def signed_distance(self, positions: Float[Array, "P 3"]) -> tuple[Array, Array]:
        return jax.vmap(self._distance)(positions), _gradient_normals(self._distance, positions)


def penetration(surface, positions: Float[Array, "P 3"], radii: Float[Array, " P"]) -> tuple[Array, Array]:
    """``(depths (P,) [m], outward normals (P, 3))`` of probe spheres of ``radii`` at
    ``positions`` against ``surface`` (depth positive when they overlap)."""
    distance, normal = surface.signed_distance(positions)
    return radii - distance, normal


__all__ = [
    "TERRAINS",
    "BoxObstacle",
    "CapsuleObstacle",
    "CylinderObstacle",
    "GroundPlane",
    "Heightfield",
    "SphereObstacle",
    "penetration",
    "terrain",
]
