"""Obstacles pressing on a rod: depths, the deepest-point penalty, and point forces mapped to
generalized forces (the transposed Jacobian recursion of PCS against ``J_v^T f``)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sorogym as sg
from sorogym.contact import (
    deepest_point_forces,
    obstacle_depths,
    rod_obstacle_contact,
    sphere_obstacles,
)


def _rod(planar=False, segments=2):
    params = sg.RodParams.upright(
        length=[0.15] * segments,
        radius=0.02,
        density=1000.0,
        young_modulus=1e5,
        poisson_ratio=0.5,
        gravity=[0.0, 0.0] if planar else [0.0, 0.0, 0.0],
        planar=planar,
        dtype=jnp.float64,
    )
    return sg.PlanarPCS(params) if planar else sg.PCS(params)


def test_depths_match_closed_form():
    pts = jnp.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.1]])
    d, n = obstacle_depths(
        sphere_obstacles(jnp.array([[0.05, 0.0, 0.1]]), jnp.array([0.01])), pts, jnp.array([0.01, 0.02])
    )
    np.testing.assert_allclose(np.asarray(d)[:, 0], [0.02 - np.hypot(0.05, 0.1), 0.03 - 0.05], atol=1e-12)
    np.testing.assert_allclose(np.asarray(n)[1, 0], [-1.0, 0.0, 0.0], atol=1e-12)


def test_obstacles_keep_the_dtype_of_their_centres():
    """Float32 obstacles stay float32 under x64 (a float32 env's contact in float32); plain
    Python numbers take the default float."""
    spheres = sphere_obstacles(jnp.zeros((2, 3), jnp.float32), jnp.ones(2, jnp.float32))
    assert spheres.center.dtype == spheres.radius.dtype == jnp.float32
    assert sphere_obstacles([[0.0, 0.0, 1.0]], [1]).center.dtype == jnp.float64


def test_penalty_force_magnitude_is_independent_of_sampling_density():
    """A sphere 5 mm into a rod sampled at 11, 41 and 161 points (each sampling holds the
    deepest abscissa z = 0.1 m): the same magnitude k * depth = 5 N at every density, and
    resultants that converge as the sampling refines (one point in contact at 11 points,
    7 at 41, 27 at 161; the fan of normals shortens the resultant to 4.80-4.81 N)."""
    k = 1000.0
    spheres = sphere_obstacles(jnp.array([[0.025, 0.0, 0.1]]), jnp.array([0.01]))
    magnitudes, resultants = [], []
    for num in (11, 41, 161):
        z = jnp.linspace(0.0, 0.2, num)
        pts = jnp.stack([jnp.zeros(num), jnp.zeros(num), z], -1)
        depths, normals = obstacle_depths(spheres, pts, jnp.full(num, 0.02))
        forces, mag = deepest_point_forces(depths, normals, k)
        assert abs(float(mag[0]) - k * float(jnp.max(depths))) < 1e-9
        magnitudes.append(float(mag[0]))
        resultants.append(np.asarray(jnp.sum(forces, 0)))
    np.testing.assert_allclose(magnitudes, k * 0.005, rtol=1e-6)  # depth 0.01 + 0.02 - 0.025 m
    assert magnitudes[0] == magnitudes[1] == magnitudes[2]
    for total in resultants:  # pushes the rod away from the sphere (-x), no more than the magnitude
        assert total[0] < 0 and np.linalg.norm(total[1:]) < 1e-5 * magnitudes[0]
        assert 0.9 * magnitudes[0] < np.linalg.norm(total) <= magnitudes[0] * (1 + 1e-6)
    assert np.linalg.norm(resultants[2] - resultants[1]) < 0.1 * np.linalg.norm(resultants[1] - resultants[0])
    far = sphere_obstacles(jnp.array([[0.125, 0.0, 0.1]]), jnp.array([0.01]))
    assert float(jnp.abs(deepest_point_forces(*obstacle_depths(far, pts, jnp.full(num, 0.02)), k)[0]).max()) == 0.0


def test_generalized_contact_force_is_power_consistent():
    model = _rod()
    rng = np.random.default_rng(0)
    q = jnp.asarray(rng.normal(size=model.num_dofs) * np.tile([2.0, 2.0, 2.0, 0.02, 0.02, 0.02], 2))
    qd = jnp.asarray(rng.normal(size=model.num_dofs))
    s_ps = jnp.linspace(0.0, 0.3, 15)
    centre = model.backbone_positions(q, s_ps)[9] + jnp.array([0.025, 0.0, 0.0])
    spheres = sphere_obstacles(centre[None], jnp.array([0.01]))

    @jax.jit
    def power(q, qd):
        tau, mag, _ = rod_obstacle_contact(model, q, s_ps, spheres, 1000.0)
        positions = model.backbone_positions(q, s_ps)
        forces = deepest_point_forces(*obstacle_depths(spheres, positions, jnp.full(15, 0.02)), 1000.0)[0]
        v = jax.jvp(lambda qq: model.backbone_positions(qq, s_ps), (q,), (qd,))[1]
        return mag, qd @ tau, jnp.sum(forces * v)

    mag, rate, expected = power(q, qd)
    assert float(mag[0]) > 0
    np.testing.assert_allclose(float(rate), float(expected), rtol=1e-10)


@pytest.mark.parametrize("planar, segments", [(False, 1), (False, 3), (True, 2)])
def test_transposed_recursion_equals_jacobian_transpose(planar, segments):
    """PCS.point_force_map (one wrench per point, no Jacobian) against sum J_v^T f from the
    Jacobians, on random strains, abscissae (segment ends included) and forces."""
    model = _rod(planar, segments)
    rng = np.random.default_rng(segments)
    k = model.ops.pos_dim
    L = float(model.total_length)
    s_ps = jnp.asarray(np.concatenate([rng.uniform(0, L, 9), [0.0, 0.15, L]]))

    @jax.jit
    def both(q, f):
        positions, apply = model.point_force_map(q, s_ps)
        poses, J = model.pose_and_jacobian_batched(q, s_ps)
        return positions, apply(f), poses[:, :k, k], jnp.einsum("pcn,pc->n", J[:, -k:], f)

    for _ in range(3):
        q = jnp.asarray(rng.normal(size=model.num_dofs) * 3.0)
        f = jnp.asarray(rng.normal(size=(s_ps.shape[0], k)))
        positions, tau, expected_positions, expected = (np.asarray(x) for x in both(q, f))
        np.testing.assert_allclose(tau, expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())
        np.testing.assert_allclose(positions, expected_positions, atol=1e-14)


def test_obstacle_fields_are_named():
    with pytest.raises(ValueError, match="centers"):
        sphere_obstacles(jnp.zeros((2, 2)), jnp.ones(2))
    with pytest.raises(ValueError, match="radii"):
        sphere_obstacles(jnp.zeros((2, 3)), jnp.array([0.1, -0.1]))
    with pytest.raises(ValueError, match="radii"):
        sphere_obstacles(jnp.zeros((2, 3)), jnp.ones(3))
