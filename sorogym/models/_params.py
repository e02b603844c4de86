"""Physical parameters of piecewise-constant-strain rods: pytrees with validation.

Parameters hold arrays only (every leaf can be traced, ``vmap``-ped for domain
randomisation and differentiated); shape-determining choices (segment count, active
strains, quadrature order) live in the model's static structure. Units are SI.
"""

from __future__ import annotations

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float

EARTH_GRAVITY = 9.81  # m/s^2

# Base rotations for the named mountings (the backbone's local x axis in the world frame).
MOUNTING_ROTATIONS = {
    "upright": np.array([[0.0, 0.0, -1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]),  # x -> +z
    "hanging": np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]]),  # x -> -z
    "horizontal": np.eye(3),  # x -> +x
}
# Planar mountings: base angle of the local x axis in the world x-y plane (gravity -y).
PLANAR_MOUNTING_ANGLES = {"upright": math.pi / 2, "hanging": -math.pi / 2, "horizontal": 0.0}


def _is_concrete(x) -> bool:
    return not isinstance(x, jax.core.Tracer)


def _as_array(x, dtype) -> Array:
    return jnp.asarray(x, dtype=dtype)


def per_segment(name: str, value, num_segments: int, dtype) -> Array:
    arr = _as_array(value, dtype)
    if arr.ndim == 0:
        arr = jnp.full((num_segments,), arr)
    if arr.shape != (num_segments,):
        raise ValueError(
            f"{name}: expected a scalar or shape ({num_segments},) (one value per "
            f"segment), got shape {tuple(arr.shape)}"
        )
    return arr


def _dampingper_segment(value, num_segments: int, num_strains: int, dtype) -> Array:
    """Damping as ``(N,)`` material coefficients or ``(N, d)`` per-strain coefficients."""
    arr = _as_array(value, dtype)
    if arr.ndim == 2:
        if arr.shape != (num_segments, num_strains):
            raise ValueError(
                f"damping: per-strain damping needs shape ({num_segments}, {num_strains}), got {tuple(arr.shape)}"
            )
        return arr
    return per_segment("damping", arr, num_segments, dtype)


def check_positive_fields(obj, names) -> None:
    """Raise ``ValueError`` naming the field if any attribute ``names`` of ``obj`` (a config
    or description; scalars or sequences) is not positive and finite."""
    for name in names:
        value = getattr(obj, name)
        values = np.atleast_1d(np.asarray(value, dtype=float))
        if not (np.all(np.isfinite(values)) and np.all(values > 0)):
            raise ValueError(f"{name}: must be positive and finite, got {value!r}")


def check_field(name: str, value: Array, *, positive: bool = False, nonnegative: bool = False) -> None:
    """Raise ``ValueError`` naming ``name`` if a concrete ``value`` is invalid."""
    if not _is_concrete(value):
        return
    v = np.asarray(value)
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name}: values must be finite, got {v}")
    if positive and not np.all(v > 0):
        raise ValueError(f"{name}: values must be positive, got {v}")
    if nonnegative and not np.all(v >= 0):
        raise ValueError(f"{name}: values must be non-negative, got {v}")


def check_shape(name: str, value: Array, shape: tuple[int, ...]) -> None:
    if tuple(value.shape) != tuple(shape):
        raise ValueError(f"{name}: expected shape {tuple(shape)}, got {tuple(value.shape)}")


def check_rotation_matrix(name: str, value: Array) -> None:
    """Raise ``ValueError`` naming ``name`` if a concrete ``(3, 3)`` ``value`` is not a proper
    rotation (``R^T R = I`` to 1e-9, 1e-5 in float32; ``det R > 0``)."""
    if not _is_concrete(value):
        return
    R = np.asarray(value, dtype=float)
    tol = 1e-5 if jnp.asarray(value).dtype == jnp.float32 else 1e-9
    if not (np.allclose(R.T @ R, np.eye(3), atol=tol) and np.linalg.det(R) > 0):
        raise ValueError(f"{name}: must be a proper rotation matrix (R^T R = I, det R = 1)")


def replace_fields(params, fields: dict):
    """Copy of the array-field module ``params`` with ``fields`` replaced, each cast to its
    field's dtype (same shapes keep compiled functions valid); ``ValueError`` naming an
    unknown field."""
    leaves = {k: getattr(params, k) for k in params.__dataclass_fields__}
    for k, v in fields.items():
        if k not in leaves:
            raise ValueError(f"{k}: not a parameter field; fields are {tuple(leaves)}")
        leaves[k] = jnp.asarray(v, dtype=leaves[k].dtype)
    return type(params)(**leaves)


class RodParams(eqx.Module):
    """Parameters of an N-segment rod with circular cross-sections.

    Attributes (``N`` segments, ``d`` strain components: 6 spatial, 3 planar):
        length: ``(N,)`` segment lengths [m].
        radius: ``(N,)`` cross-section radii [m].
        density: ``(N,)`` volumetric mass densities [kg/m^3].
        young_modulus: ``(N,)`` Young's moduli E [Pa].
        shear_modulus: ``(N,)`` shear moduli G [Pa].
        damping: either ``(N,)`` material damping coefficients eta [Pa s] (shear viscosity
            of a Kelvin-Voigt material; bending and elongation see ``3 eta``), or ``(N, d)``
            per-strain damping coefficients per unit length, ordered like the strain
            (angular components [N m^2 s], linear components [N s]); segment ``i``'s damping
            matrix is then ``length[i] * diag(damping[i])``.
        reference_strain: ``(N, d)`` rest strain ``xi_ref`` (straight, unstretched:
            ``[0, 0, 0, 1, 0, 0]`` spatial, ``[0, 1, 0]`` planar).
        gravity: ``(3,)`` (spatial) or ``(2,)`` (planar) gravitational acceleration in the
            world frame [m/s^2].
        base_rotation: ``(3, 3)`` rotation of the base frame in the world (spatial), or
            ``()`` base angle [rad] (planar).
        base_position: ``(3,)`` or ``(2,)`` base position in the world [m].
    """

    length: Float[Array, " N"]
    radius: Float[Array, " N"]
    density: Float[Array, " N"]
    young_modulus: Float[Array, " N"]
    shear_modulus: Float[Array, " N"]
    damping: Float[Array, "N ..."]
    reference_strain: Float[Array, "N d"]
    gravity: Float[Array, " g"]
    base_rotation: Array
    base_position: Float[Array, " g"]

    @property
    def num_segments(self) -> int:
        return int(self.length.shape[0])

    @property
    def is_planar(self) -> bool:
        return self.reference_strain.shape[-1] == 3

    @classmethod
    def create(
        cls,
        length: ArrayLike,
        radius: ArrayLike,
        density: ArrayLike,
        young_modulus: ArrayLike,
        shear_modulus: ArrayLike | None = None,
        poisson_ratio: float | ArrayLike | None = None,
        damping: ArrayLike = 0.0,
        reference_strain: ArrayLike | None = None,
        gravity: ArrayLike | None = None,
        mounting: str = "upright",
        base_rotation: ArrayLike | None = None,
        base_position: ArrayLike | None = None,
        planar: bool = False,
        dtype=None,
    ) -> RodParams:
        """Build validated parameters; scalars broadcast over segments.

        Exactly one of ``shear_modulus`` and ``poisson_ratio`` may be given
        (``G = E / (2 (1 + nu))``); with neither, ``nu = 0.5``. ``mounting`` is one of
        ``"upright"`` (backbone along world +z; planar: +y), ``"hanging"`` (-z; planar
        -y) or ``"horizontal"`` (+x); ``base_rotation`` overrides it. ``gravity``
        defaults to Earth gravity along world -z (planar: -y). ``dtype`` defaults to
        JAX's default float type.
        """
        dtype = dtype or jnp.result_type(float)
        L = _as_array(length, dtype)
        if L.ndim == 0:
            L = L[None]
        if L.ndim != 1 or L.shape[0] < 1:
            raise ValueError(f"length: expected shape (N,) with N >= 1, got {tuple(L.shape)}")
        N = L.shape[0]
        d = 3 if planar else 6
        E = per_segment("young_modulus", young_modulus, N, dtype)
        if shear_modulus is not None and poisson_ratio is not None:
            raise ValueError("shear_modulus and poisson_ratio: give at most one of them")
        if shear_modulus is None:
            nu = per_segment("poisson_ratio", 0.5 if poisson_ratio is None else poisson_ratio, N, dtype)
            check_field("poisson_ratio", nu)
            if _is_concrete(nu) and not np.all((np.asarray(nu) > -1.0) & (np.asarray(nu) <= 0.5)):
                raise ValueError(f"poisson_ratio: must lie in (-1, 0.5], got {np.asarray(nu)}")
            G = E / (2.0 * (1.0 + nu))
        else:
            G = per_segment("shear_modulus", shear_modulus, N, dtype)
        if reference_strain is None:
            ref = np.zeros((N, d))
            ref[:, 1 if planar else 3] = 1.0
            reference_strain = ref
        ref = _as_array(reference_strain, dtype)
        if ref.ndim == 1:
            ref = jnp.broadcast_to(ref, (N, ref.shape[0]))
        if mounting not in MOUNTING_ROTATIONS:
            raise ValueError(f"mounting: unknown {mounting!r}; use one of {tuple(MOUNTING_ROTATIONS)}")
        gdim = 2 if planar else 3
        if gravity is None:
            gravity = np.zeros(gdim)
            gravity[-1 if not planar else 1] = -EARTH_GRAVITY
        if base_rotation is None:
            base_rotation = PLANAR_MOUNTING_ANGLES[mounting] if planar else MOUNTING_ROTATIONS[mounting]
        if base_position is None:
            base_position = np.zeros(gdim)
        params = cls(
            length=L,
            radius=per_segment("radius", radius, N, dtype),
            density=per_segment("density", density, N, dtype),
            young_modulus=E,
            shear_modulus=G,
            damping=_dampingper_segment(damping, N, d, dtype),
            reference_strain=ref,
            gravity=_as_array(gravity, dtype),
            base_rotation=_as_array(base_rotation, dtype),
            base_position=_as_array(base_position, dtype),
        )
        params.validate(planar=planar)
        return params

    @classmethod
    def upright(cls, **kwargs) -> RodParams:
        """Base at the origin, backbone along world +z (planar: +y), gravity -z (-y)."""
        return cls.create(mounting="upright", **kwargs)

    @classmethod
    def hanging(cls, **kwargs) -> RodParams:
        """Backbone along world -z (planar: -y), gravity -z (-y)."""
        return cls.create(mounting="hanging", **kwargs)

    @classmethod
    def horizontal(cls, **kwargs) -> RodParams:
        """Backbone along world +x, gravity -z (planar: -y)."""
        return cls.create(mounting="horizontal", **kwargs)

    def validate(self, planar: bool | None = None) -> None:
        """Check shapes always and values when concrete; raise ``ValueError`` naming the field."""
        planar = self.is_planar if planar is None else planar
        N = self.length.shape[0]
        d, gdim = (3, 2) if planar else (6, 3)
        check_shape("length", self.length, (N,))
        for name in ("radius", "density", "young_modulus", "shear_modulus"):
            check_shape(name, getattr(self, name), (N,))
        if tuple(self.damping.shape) not in ((N,), (N, d)):
            raise ValueError(f"damping: expected shape ({N},) or ({N}, {d}), got {tuple(self.damping.shape)}")
        check_shape("reference_strain", self.reference_strain, (N, d))
        check_shape("gravity", self.gravity, (gdim,))
        check_shape("base_position", self.base_position, (gdim,))
        check_shape("base_rotation", self.base_rotation, () if planar else (3, 3))
        for name in ("length", "radius", "density", "young_modulus", "shear_modulus"):
            check_field(name, getattr(self, name), positive=True)
        check_field("damping", self.damping, nonnegative=True)
        for name in ("reference_strain", "gravity", "base_position", "base_rotation"):
            check_field(name, getattr(self, name))
        if not planar:
            check_rotation_matrix("base_rotation", self.base_rotation)

    def replace(self, **fields) -> RodParams:
        """Copy with some fields replaced (same shapes keep compiled functions valid)."""
        return replace_fields(self, fields)
