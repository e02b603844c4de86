"""Strain names and the per-segment selection of active strain components.

Spatial strain ``xi = [kx, ky, kz, sx, sy, sz]`` (1/m for the curvatures ``k``: torsion
``kx`` and bending ``ky``, ``kz``; dimensionless for the stretches ``s``: elongation ``sx``
and shears ``sy``, ``sz``). Planar strain ``xi = [k, sx, sy]`` (bending, elongation,
shear). The configuration ``q`` stacks ``xi - xi_ref`` over the active components of each
segment, segment by segment, in this component order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

SPATIAL_STRAINS: tuple[str, ...] = ("kx", "ky", "kz", "sx", "sy", "sz")
PLANAR_STRAINS: tuple[str, ...] = ("k", "sx", "sy")

# Named presets: PCC is bending only.
_PRESETS = {
    "spatial": {
        "all": SPATIAL_STRAINS,
        "pcs": SPATIAL_STRAINS,
        "pcc": ("ky", "kz"),
        "bending": ("ky", "kz"),
        "bending_elongation": ("ky", "kz", "sx"),
        "bending_torsion": ("kx", "ky", "kz"),
        "no_shear": ("kx", "ky", "kz", "sx"),
    },
    "planar": {
        "all": PLANAR_STRAINS,
        "pcs": PLANAR_STRAINS,
        "pcc": ("k",),
        "bending": ("k",),
        "bending_elongation": ("k", "sx"),
    },
}

StrainSpec = str | Sequence[str] | Sequence[Sequence[str]] | Sequence[bool] | None


def _one_mask(spec, names: tuple[str, ...], kind: str) -> tuple[bool, ...]:
    if isinstance(spec, str):
        if spec in _PRESETS[kind]:
            spec = _PRESETS[kind][spec]
        else:
            spec = (spec,)
    spec = list(spec)
    if spec and all(isinstance(x, (bool, np.bool_)) for x in spec):
        if len(spec) != len(names):
            raise ValueError(
                f"active_strains: a boolean mask needs {len(names)} entries ({', '.join(names)}), got {len(spec)}"
            )
        mask = tuple(bool(x) for x in spec)
    else:
        unknown = [x for x in spec if x not in names]
        if unknown:
            raise ValueError(
                f"active_strains: unknown strain name(s) {unknown!r}; "
                f"valid names are {names} or presets {tuple(_PRESETS[kind])}"
            )
        mask = tuple(n in spec for n in names)
    if not any(mask):
        raise ValueError("active_strains: every segment needs at least one active strain")
    return mask


def strain_mask(spec: StrainSpec, num_segments: int, planar: bool) -> tuple[tuple[bool, ...], ...]:
    """Normalise a strain selection to one boolean mask per segment.

    ``spec`` may be ``None`` (all strains), a preset name (``"pcc"``, ``"pcs"``,
    ``"bending_elongation"``...), a sequence of strain names applied to every segment, a
    boolean mask, or a per-segment sequence of any of these.
    """
    kind = "planar" if planar else "spatial"
    names = PLANAR_STRAINS if planar else SPATIAL_STRAINS
    if spec is None:
        spec = "all"
    # Per segment: one entry per segment, each a preset name or a sequence (strain names
    # or a boolean mask); a flat sequence of strain names or booleans applies to all.
    per_segment = (
        not isinstance(spec, str)
        and len(spec) == num_segments
        and all((isinstance(x, str) and x in _PRESETS[kind]) or not isinstance(x, (str, bool, np.bool_)) for x in spec)
    )
    if per_segment:
        return tuple(_one_mask(s, names, kind) for s in spec)
    mask = _one_mask(spec, names, kind)
    return tuple(mask for _ in range(num_segments))


def selector_blocks(masks: tuple[tuple[bool, ...], ...]) -> np.ndarray:
    """Per-segment selectors ``B`` of shape ``(N, d, n)``: ``xi_i - xi_ref_i = B[i] @ q``."""
    num_segments, dim = len(masks), len(masks[0])
    n = sum(sum(m) for m in masks)
    B = np.zeros((num_segments, dim, n))
    col = 0
    for i, m in enumerate(masks):
        for k, active in enumerate(m):
            if active:
                B[i, k, col] = 1.0
                col += 1
    return B


def strain_slots(masks: tuple[tuple[bool, ...], ...]) -> np.ndarray:
    """Index of each strain component in ``concatenate([q, [0]])``: ``(N, d)`` integers,
    the coordinate of an active component or ``n`` (the appended zero) for an inactive
    one, so ``concatenate([q, [0]])[slots]`` equals ``B q`` without a matrix product."""
    B = selector_blocks(masks)
    n = B.shape[-1]
    return np.where(B.any(axis=-1), B.argmax(axis=-1), n)
