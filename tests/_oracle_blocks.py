"""Oracle comparisons measured per block: each entry against the largest oracle entry of its
own block, so that a block 10^2-10^3 smaller than the largest (the bending rows of M, G and A
on a slender rod, a floating base's angle beside its position) is held to the stated
tolerance too, not to the largest block's."""

from __future__ import annotations

import numpy as np

# Entries of a block that is zero in the oracle (a tendon that does not reach a segment, a
# strain that gravity does not load) are held to this share of the array's largest entry.
ZERO_BLOCK_FLOOR = 1e-9


def rel(a, b) -> float:
    """Largest ``|a - b|`` over the largest ``|b|`` (one block: the whole array)."""
    a, b = np.asarray(a), np.asarray(b)
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))


def coordinate_kinds(model) -> np.ndarray:
    """Block label of each coordinate of ``q``: the first letter of its name's last part, so
    ``"k"`` for the angular strains (curvature, torsion: 1/m), ``"s"`` for the linear ones
    (stretch, shear: dimensionless), and a floating base's ``"t"`` (angle, rad), ``"x"`` and
    ``"y"`` (position, m) each a block of its own."""
    names = model.strain_names if hasattr(model, "strain_names") else model.coordinate_names
    return np.array([name.split(".")[-1][0] for name in names])


def rel_per_block(a, b, labels) -> float:
    """Worst relative difference of ``a`` from the oracle ``b`` with every entry measured
    against the largest ``|b|`` of its block, not of the whole array. ``labels`` holds, per
    axis, the block label of each index (coordinate kinds for a q axis) or None where every
    index is a block of its own (twist rows, actuators, pose entries). Blocks are products
    of the axes' groups, so the scale is a max over each axis's group in turn."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    scale = np.abs(b)
    for axis, axis_labels in enumerate(labels):
        if axis_labels is not None:
            along = np.moveaxis(scale, axis, 0)
            grouped = np.empty_like(along)
            for label in np.unique(axis_labels):
                rows = axis_labels == label
                grouped[rows] = along[rows].max(axis=0)
            scale = np.moveaxis(grouped, 0, axis)
    floor = ZERO_BLOCK_FLOOR * max(np.abs(b).max(), 1e-300)
    return float((np.abs(a - b) / np.maximum(scale, floor)).max())
