"""Parameters of a concentric tube robot: precurved elastic tubes nested on one centreline.

Tubes are numbered from the innermost (``0``, the longest: it carries the tool) outwards.
Every tube is a circular annulus (``inner_radius = 0``: a solid wire) with an optional
precurved distal section of constant curvature. Each tube enters the workspace through the
base plate at the robot's base frame; the drive behind the plate sets its base angle
(``rotation``) and its insertion (``translation``, the arc length of the tube's proximal
end relative to the plate: ``<= 0``, the tube's tip is at ``length + translation``).
Between the drive and the plate a tube is straight and twists like a torsion spring of
length ``transmission_length - translation``.

Parameters hold arrays only (traceable, ``vmap``-pable for domain randomisation,
differentiable); the number of tubes and which tubes are only partly precurved are the
model's static structure.
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float

from ._params import (
    EARTH_GRAVITY,
    MOUNTING_ROTATIONS,
    _is_concrete,
    check_field,
    check_rotation_matrix,
    check_shape,
    per_segment,
    replace_fields,
)

#: Per-tube fields, each ``(T,)``.
TUBE_FIELDS: tuple[str, ...] = (
    "length",
    "curved_length",
    "outer_radius",
    "inner_radius",
    "density",
    "young_modulus",
    "shear_modulus",
    "precurvature",
    "damping",
    "rotation",
    "translation",
    "transmission_length",
)


class ConcentricTubeParams(eqx.Module):
    """Parameters of ``T`` nested tubes (innermost first; see the module docstring).

    Attributes (each ``(T,)`` unless noted):
        length: tube lengths [m].
        curved_length: length of each tube's precurved distal section [m] (``0`` to
            ``length``; the rest of the tube is straight).
        outer_radius, inner_radius: annulus radii [m] (``inner_radius`` 0: solid).
        density: [kg/m^3].
        young_modulus, shear_modulus: E and G [Pa].
        precurvature: curvature of the precurved section [1/m], about the tube's local
            z axis (the tube bends towards its local +y in its own frame).
        damping: Kelvin-Voigt shear viscosity [Pa s] (bending sees ``3 eta I``, torsion
            ``eta J``).
        rotation: drive angle of each tube [rad] about the backbone axis.
        translation: arc length [m] of each tube's proximal end from the base plate
            (``<= 0``; the tip is at ``length + translation``).
        transmission_length: straight length [m] between the drive and the plate at zero
            translation (``> 0``): the torsional compliance of the drive.
        gravity: ``(3,)`` world gravity [m/s^2].
        base_rotation: ``(3, 3)`` base plate orientation (backbone local x in the world).
        base_position: ``(3,)`` [m].
    """

    length: Float[Array, " T"]
    curved_length: Float[Array, " T"]
    outer_radius: Float[Array, " T"]
    inner_radius: Float[Array, " T"]
    density: Float[Array, " T"]
    young_modulus: Float[Array, " T"]
    shear_modulus: Float[Array, " T"]
    precurvature: Float[Array, " T"]
    damping: Float[Array, " T"]
    rotation: Float[Array, " T"]
    translation: Float[Array, " T"]
    transmission_length: Float[Array, " T"]
    gravity: Float[Array, " 3"]
    base_rotation: Float[Array, "3 3"]
    base_position: Float[Array, " 3"]

    @classmethod
    def create(
        cls,
        length: ArrayLike,
        outer_radius: ArrayLike,
        density: ArrayLike,
        young_modulus: ArrayLike,
        inner_radius: ArrayLike | None = None,
        curved_length: ArrayLike | None = None,
        precurvature: ArrayLike = 0.0,
        shear_modulus: ArrayLike | None = None,
        poisson_ratio: ArrayLike | None = None,
        damping: ArrayLike = 0.0,
        rotation: ArrayLike = 0.0,
        translation: ArrayLike = 0.0,
        transmission_length: ArrayLike = 0.1,
        gravity: ArrayLike | None = None,
        mounting: str = "upright",
        base_rotation: ArrayLike | None = None,
        base_position: ArrayLike | None = None,
        dtype=None,
    ) -> ConcentricTubeParams:
        """Validated parameters; scalars broadcast over the tubes.

        ``inner_radius`` defaults to the next inner tube's outer radius (the tubes touch;
        the innermost is solid); ``curved_length`` to ``length`` (precurved all along);
        exactly one of ``shear_modulus`` and ``poisson_ratio`` may be given (neither:
        ``nu = 0.3``). ``mounting`` (``"upright"``, ``"hanging"``, ``"horizontal"``) sets the
        base orientation unless ``base_rotation`` is given; ``gravity`` defaults to Earth
        gravity along world -z."""
        dtype = dtype or jnp.result_type(float)
        L = jnp.asarray(length, dtype)
        L = L[None] if L.ndim == 0 else L
        if L.ndim != 1 or L.shape[0] < 1:
            raise ValueError(f"length: expected shape (T,) with T >= 1 tubes, got {tuple(L.shape)}")
        T = L.shape[0]
        ro = per_segment("outer_radius", outer_radius, T, dtype)
        if inner_radius is None:
            inner_radius = jnp.concatenate([jnp.zeros((1,), dtype), ro[:-1]])
        E = per_segment("young_modulus", young_modulus, T, dtype)
        if shear_modulus is not None and poisson_ratio is not None:
            raise ValueError("shear_modulus and poisson_ratio: give at most one of them")
        if shear_modulus is None:
            nu = per_segment("poisson_ratio", 0.3 if poisson_ratio is None else poisson_ratio, T, dtype)
            if _is_concrete(nu) and not np.all((np.asarray(nu) > -1.0) & (np.asarray(nu) <= 0.5)):
                raise ValueError(f"poisson_ratio: must lie in (-1, 0.5], got {np.asarray(nu)}")
            G = E / (2.0 * (1.0 + nu))
        else:
            G = per_segment("shear_modulus", shear_modulus, T, dtype)
        if mounting not in MOUNTING_ROTATIONS:
            raise ValueError(f"mounting: unknown {mounting!r}; use one of {tuple(MOUNTING_ROTATIONS)}")
        params = cls(
            length=L,
            curved_length=L if curved_length is None else per_segment("curved_length", curved_length, T, dtype),
            outer_radius=ro,
            inner_radius=per_segment("inner_radius", inner_radius, T, dtype),
            density=per_segment("density", density, T, dtype),
            young_modulus=E,
            shear_modulus=G,
            precurvature=per_segment("precurvature", precurvature, T, dtype),
            damping=per_segment("damping", damping, T, dtype),
            rotation=per_segment("rotation", rotation, T, dtype),
            translation=per_segment("translation", translation, T, dtype),
            transmission_length=per_segment("transmission_length", transmission_length, T, dtype),
            gravity=jnp.asarray([0.0, 0.0, -EARTH_GRAVITY] if gravity is None else gravity, dtype),
            base_rotation=jnp.asarray(MOUNTING_ROTATIONS[mounting] if base_rotation is None else base_rotation, dtype),
            base_position=jnp.asarray(np.zeros(3) if base_position is None else base_position, dtype),
        )
        params.validate()
        return params

    @property
    def num_tubes(self) -> int:
        return int(self.length.shape[0])

    @property
    def tips(self) -> Float[Array, " T"]:
        """Arc length of every tube's tip from the plate [m]: ``length + translation``."""
        return self.length + self.translation

    @property
    def curve_starts(self) -> Float[Array, " T"]:
        """Arc length where every tube's precurved section begins [m] (may lie behind the
        plate, below 0)."""
        return self.tips - self.curved_length

    @property
    def hidden_lengths(self) -> Float[Array, " T"]:
        """Straight length between each tube's drive and the plate [m]: the length of its
        torsion spring, ``transmission_length - translation``."""
        return self.transmission_length - self.translation

    def section_properties(self) -> dict[str, Array]:
        """Per-tube section properties ``(T,)``: area ``A`` [m^2], second moment ``I`` and
        polar moment ``J = 2 I`` [m^4] of the annulus."""
        ro, ri = self.outer_radius, self.inner_radius
        area = jnp.pi * (ro**2 - ri**2)
        second = jnp.pi * (ro**4 - ri**4) / 4.0
        return dict(area=area, second_moment=second, polar_moment=2.0 * second)

    def validate(self) -> None:
        """Check shapes always and values when concrete; ``ValueError`` naming the field."""
        T = self.length.shape[0]
        for name in TUBE_FIELDS:
            check_shape(name, getattr(self, name), (T,))
        check_shape("gravity", self.gravity, (3,))
        check_shape("base_position", self.base_position, (3,))
        check_shape("base_rotation", self.base_rotation, (3, 3))
        for name in ("length", "outer_radius", "density", "young_modulus", "shear_modulus", "transmission_length"):
            check_field(name, getattr(self, name), positive=True)
        for name in ("inner_radius", "curved_length", "damping"):
            check_field(name, getattr(self, name), nonnegative=True)
        for name in ("precurvature", "rotation", "translation", "gravity", "base_position", "base_rotation"):
            check_field(name, getattr(self, name))
        check_rotation_matrix("base_rotation", self.base_rotation)
        if not all(_is_concrete(getattr(self, name)) for name in TUBE_FIELDS):
            return
        v = {name: np.asarray(getattr(self, name)) for name in TUBE_FIELDS}
        if np.any(v["inner_radius"] >= v["outer_radius"]):
            raise ValueError(
                f"inner_radius: every tube's bore must be smaller than its outer radius, got inner "
                f"{v['inner_radius']} and outer {v['outer_radius']}"
            )
        if np.any(v["outer_radius"][:-1] > v["inner_radius"][1:] * (1 + 1e-12)):
            raise ValueError(
                f"outer_radius: tubes do not nest; each tube's outer radius must fit the next tube's bore "
                f"(outer {v['outer_radius']}, inner {v['inner_radius']})"
            )
        if np.any(v["curved_length"] > v["length"]):
            raise ValueError(
                f"curved_length: must not exceed the tube length, got {v['curved_length']} > {v['length']}"
            )
        if np.any(v["translation"] > 0):
            raise ValueError(f"translation: tubes are inserted from behind the plate (<= 0), got {v['translation']}")
        tips = v["length"] + v["translation"]
        if np.any(tips <= 0):
            raise ValueError(f"translation: every tube must reach through the plate (tip > 0), tips at {tips}")
        if np.any(np.diff(tips) >= 0):
            raise ValueError(
                f"length: tubes do not nest; every inner tube must reach beyond the next outer one "
                f"(tips at {tips} m, innermost first)"
            )

    def replace(self, **fields) -> ConcentricTubeParams:
        """Copy with some fields replaced (same shapes keep compiled functions valid)."""
        return replace_fields(self, fields)
