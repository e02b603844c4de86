"""Static contact surfaces: signed distances and normals against closed forms and the
properties of an exact signed-distance function, heightfields against the plane they
sample, and construction errors that name the field (float64)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from sorogym.contact import (
    TERRAINS,
    BoxObstacle,
    CapsuleObstacle,
    CylinderObstacle,
    GroundPlane,
    Heightfield,
    SphereObstacle,
    terrain,
)

ROT = Rotation.from_rotvec([0.3, -0.5, 0.8]).as_matrix()
OBSTACLES = {
    "sphere": SphereObstacle((0.1, -0.2, 0.3), 0.25),
    "box": BoxObstacle((0.1, -0.2, 0.3), (0.3, 0.2, 0.1), rotation=ROT),
    "capsule": CapsuleObstacle((0.0, 0.0, 0.0), (0.4, 0.2, -0.1), 0.1),
    "cylinder": CylinderObstacle((0.1, 0.0, 0.2), (1.0, 1.0, 0.5), 0.15, 0.25),
}


@pytest.mark.parametrize("name", sorted(OBSTACLES))
def test_obstacle_distances_are_exact_signed_distances(name):
    """Outside points: moving a point by ``-d n`` lands it on the surface, and the normal is
    the gradient of the distance (finite differences). Inside points are negative."""
    obstacle = OBSTACLES[name]
    rng = np.random.default_rng(0)
    core = {
        "sphere": (0.1, -0.2, 0.3),
        "box": (0.1, -0.2, 0.3),
        "capsule": (0.2, 0.1, -0.05),
        "cylinder": (0.1, 0, 0.2),
    }
    near = np.asarray(core[name]) + rng.uniform(-0.05, 0.05, size=(50, 3))  # inside
    x = jnp.asarray(np.concatenate([rng.uniform(-0.8, 0.8, size=(400, 3)), near]))
    d, n = jax.jit(lambda x: obstacle.signed_distance(x))(x)
    out = np.asarray(d) > 1e-3
    assert out.sum() > 100 and (np.asarray(d) < 0).sum() >= 50
    on_surface = x[out] - d[out, None] * n[out]
    d_surface, _ = obstacle.signed_distance(on_surface)
    np.testing.assert_allclose(d_surface, 0.0, atol=1e-9)
    h = 1e-6
    for k in range(3):
        e = jnp.zeros(3).at[k].set(h)
        fd = (obstacle.signed_distance(x + e)[0] - obstacle.signed_distance(x - e)[0]) / (2 * h)
        np.testing.assert_allclose(np.asarray(fd)[out], np.asarray(n)[out, k], atol=1e-6)


def test_obstacle_distances_match_closed_forms():
    sphere = SphereObstacle((0.0, 0.0, 0.0), 0.5)
    assert float(sphere.signed_distance(jnp.array([[0.0, 0.8, 0.0]]))[0][0]) == pytest.approx(0.3, abs=1e-12)
    box = BoxObstacle((1.0, 0.0, 0.0), (0.3, 0.2, 0.1))
    pts = jnp.array([[1.4, 0.0, 0.0], [1.4, 0.3, 0.2], [1.0, 0.0, 0.0], [1.0, 0.15, 0.0]])
    np.testing.assert_allclose(box.signed_distance(pts)[0], [0.1, np.sqrt(3) * 0.1, -0.1, -0.05], atol=1e-12)
    capsule = CapsuleObstacle((0.0, 0.0, 0.0), (1.0, 0.0, 0.0), 0.1)
    pts = jnp.array([[0.5, 0.3, 0.0], [1.3, 0.0, 0.0], [-0.2, 0.0, 0.2]])
    np.testing.assert_allclose(capsule.signed_distance(pts)[0], [0.2, 0.2, np.sqrt(0.08) - 0.1], atol=1e-12)
    cylinder = CylinderObstacle((0.0, 0.0, 0.0), (0.0, 0.0, 2.0), 0.2, 0.5)
    pts = jnp.array([[0.4, 0.0, 0.1], [0.0, 0.1, 0.7], [0.5, 0.0, 0.9], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(cylinder.signed_distance(pts)[0], [0.2, 0.2, 0.5, -0.2], atol=1e-12)
    _, normals = cylinder.signed_distance(pts[:2])
    np.testing.assert_allclose(normals, [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]], atol=1e-9)


def test_slope_heightfield_equals_the_inclined_plane():
    angle = 0.2
    field = terrain("slope", size=(2.0, 2.0), resolution=0.05, angle=angle)
    plane = GroundPlane(normal=(-np.sin(angle), 0.0, np.cos(angle)))
    rng = np.random.default_rng(1)
    x = jnp.asarray(np.c_[rng.uniform(-0.9, 0.9, (200, 2)), rng.uniform(-0.3, 0.3, 200)])
    d_field, n_field = jax.jit(lambda x: field.signed_distance(x))(x)
    d_plane, n_plane = plane.signed_distance(x)
    np.testing.assert_allclose(d_field, d_plane, atol=1e-12)
    np.testing.assert_allclose(n_field, n_plane, atol=1e-12)


def test_named_terrains_have_their_shape():
    for name in TERRAINS:
        field = terrain(name, size=(1.0, 1.0), resolution=0.02)
        assert np.all(np.isfinite(np.asarray(field.heights)))
    steps = terrain("steps", size=(1.0, 1.0), resolution=0.01, height=0.03, width=0.25)
    h, _ = steps.height_and_slope(jnp.array([[-0.4, 0.0], [-0.1, 0.0], [0.2, 0.0], [0.45, 0.0]]))
    np.testing.assert_allclose(np.diff(np.asarray(h)), 0.03, atol=1e-12)
    bumps = terrain("bumps", size=(1.0, 1.0), resolution=0.01, amplitude=0.02, wavelength=0.4)
    h, _ = bumps.height_and_slope(jnp.array([[0.1, 0.1], [0.1, 0.3]]))
    np.testing.assert_allclose(h, [0.02, -0.02], atol=1e-4)  # a peak and a trough
    # the slope is the derivative of the interpolant (off the grid lines)
    xy = jnp.array([[0.123, -0.217], [0.031, 0.402]])
    _, slope = bumps.height_and_slope(xy)
    for k in range(2):
        e = jnp.zeros(2).at[k].set(1e-7)
        fd = (bumps.height_and_slope(xy + e)[0] - bumps.height_and_slope(xy - e)[0]) / 2e-7
        np.testing.assert_allclose(slope[:, k], fd, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize(
    "build, field",
    [
        (lambda: terrain("mars"), "terrain"),
        (lambda: terrain("slope", height=1.0), "terrain 'slope'"),
        (lambda: Heightfield(np.zeros((4, 4)), (0.1, -0.1)), "spacing"),
        (lambda: Heightfield(np.full((4, 4), np.nan), (0.1, 0.1)), "heights"),
        (lambda: SphereObstacle((0.0, 0.0, 0.0), -1.0), "radius"),
        (lambda: BoxObstacle((0.0, 0.0, 0.0), (0.1, 0.0, 0.1)), "half_sizes"),
        (lambda: BoxObstacle((0.0, 0.0, 0.0), (0.1, 0.1, 0.1), rotation=2 * np.eye(3)), "rotation"),
        (lambda: CapsuleObstacle((0.0, 0.0, 0.0), (1.0, 0.0, 0.0), np.nan), "radius"),
        (lambda: CylinderObstacle((0.0, 0.0, 0.0), (0.0, 0.0, 0.0), 0.1, 0.2), "axis"),
        (lambda: CylinderObstacle((0.0, 0.0), (0.0, 0.0, 1.0), 0.1, 0.2), "center"),
    ],
)
def test_bad_surfaces_raise_naming_the_field(build, field):
    with pytest.raises(ValueError, match=field):
        build()
