"""Contact: clearances, penalty forces and their generalized forces on a spatial PCS rod."""

import jax
import jax.numpy as jnp
import numpy as np

import sorogym as sg
from sorogym.contact import contact_generalized_force, penalty_contact_forces, sphere_clearances


def _rod():
    p = sg.RodParams.upright(
        length=[0.15, 0.15],
        radius=0.02,
        density=1000.0,
        young_modulus=1e5,
        poisson_ratio=0.5,
        gravity=[0.0, 0.0, 0.0],
        dtype=jnp.float64,
    )
    return sg.PCS(p)


def test_clearances_match_closed_form():
    pts = jnp.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.1]])
    d = sphere_clearances(pts, jnp.array([0.01, 0.02]), jnp.array([[0.05, 0.0, 0.1]]), jnp.array([0.01]))
    np.testing.assert_allclose(np.asarray(d)[:, 0], [np.hypot(0.05, 0.1) - 0.02, 0.05 - 0.03], atol=1e-12)


def test_penalty_force_magnitude_is_independent_of_sampling_density():
    k = 1000.0
    centre, radius = jnp.array([[0.025, 0.0, 0.1]]), jnp.array([0.01])
    for num in (11, 41, 161):
        z = jnp.linspace(0.0, 0.2, num)
        pts = jnp.stack([jnp.zeros(num), jnp.zeros(num), z], -1)
        forces, mag, d = penalty_contact_forces(pts, jnp.full(num, 0.02), centre, radius, k)
        deepest = float(-jnp.min(d))
        assert abs(float(mag[0]) - k * deepest) < 1e-9
        total = np.asarray(jnp.sum(forces, 0))
        assert total[0] < 0 and abs(np.linalg.norm(total) - float(mag[0])) < 0.1 * float(
            mag[0]
        )  # normals fan out around the deepest point
    # no penetration, no force
    far = penalty_contact_forces(pts, jnp.full(num, 0.02), centre + jnp.array([0.1, 0, 0]), radius, k)
    assert float(jnp.abs(far[0]).max()) == 0.0


def test_generalized_contact_force_is_power_consistent():
    model = _rod()
    rng = np.random.default_rng(0)
    q = jnp.asarray(rng.normal(size=model.num_dofs) * np.tile([2.0, 2.0, 2.0, 0.02, 0.02, 0.02], 2))
    qd = jnp.asarray(rng.normal(size=model.num_dofs))
    s_ps = jnp.linspace(0.0, 0.3, 15)
    centre = model.backbone_positions(q, s_ps)[9] + jnp.array([0.025, 0.0, 0.0])
    tau, mag, d = contact_generalized_force(model, q, s_ps, centre[None], jnp.array([0.01]), 1000.0)
    assert float(mag[0]) > 0
    pts = model.backbone_positions(q, s_ps)
    forces = penalty_contact_forces(pts, jnp.full(15, 0.02), centre[None], jnp.array([0.01]), 1000.0)[0]
    v = jax.jvp(lambda qq: model.backbone_positions(qq, s_ps), (q,), (qd,))[1]
    np.testing.assert_allclose(float(qd @ tau), float(jnp.sum(forces * v)), rtol=1e-10)
