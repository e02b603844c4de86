"""Line loads (forces per unit length on a rod's quadrature points, stepped linearly
implicitly): AD identities of their velocity stiffness, agreement with the probe-based
fluid forces, and friction thresholds in closed form on a free planar rod at steps far
beyond the explicit stability limit of its regularised friction."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sorogym as sg
from sorogym.contact import (
    GroundFriction,
    LineDrag,
    MorisonDrag,
    ResistiveForceTheory,
    backbone_quadrature,
    fluid_force,
    probe_model,
)

RADIUS, DENSITY, LENGTH = 0.01, 1000.0, 0.2  # m, kg/m^3, m
MASS = DENSITY * np.pi * RADIUS**2 * LENGTH  # kg
G_N = 9.81


def _free_rod(active="pcc"):
    params = sg.RodParams.create(
        length=[LENGTH / 2] * 2,
        radius=RADIUS,
        density=DENSITY,
        young_modulus=1e6,
        poisson_ratio=0.5,
        damping=10.0,
        planar=True,
        gravity=[0.0, 0.0],
        base_rotation=0.0,
    )
    return sg.PlanarPCS(params, active_strains=active, floating_base=True)


@pytest.mark.parametrize(
    "load",
    [
        GroundFriction((0.3, 0.9, 1.4), slip_velocity=0.02),
        LineDrag(ResistiveForceTheory(0.4, 0.9, current=(0.02, -0.01, 0.0))),
        LineDrag(MorisonDrag(1000.0, 1.1, 0.02)),
    ],
    ids=["anisotropic_friction", "rft", "morison"],
)
def test_line_load_damping_is_the_symmetric_velocity_jacobian(load):
    model = _free_rod(active=None)
    rng = np.random.default_rng(0)
    q = jnp.asarray(rng.normal(size=model.num_dofs))
    qd = jnp.asarray(0.05 * rng.normal(size=model.num_dofs))

    @jax.jit
    def check(q, qd):
        terms = model.line_load_terms(q, qd, load)
        dtau = jax.jacfwd(lambda v: model.line_load_terms(q, v, load).force)(qd)
        # the map a Newton step iterates on, built at another velocity: the same terms at qd
        load_at = model.inertia_bias_and_line_load_map(q, 2.0 * qd + 0.01, load)[2]
        return terms, -0.5 * (dtau + dtau.T), load_at(qd)

    terms, ref, frozen = check(q, qd)
    D, ref = np.asarray(terms.damping), np.asarray(ref)
    assert np.abs(D - ref).max() <= 1e-12 * np.abs(ref).max()
    assert np.linalg.eigvalsh(D).min() > -1e-12 * np.abs(D).max()  # dissipative
    for ours, exact in zip(frozen, terms, strict=True):
        np.testing.assert_allclose(np.asarray(ours), np.asarray(exact), rtol=1e-12, atol=1e-15)


def test_line_drag_matches_probe_fluid_force_on_a_spatial_rod():
    """The same drag through the probe path (``fluid_force`` on Gauss points from
    ``backbone_quadrature``) and as a line load on the rod's own Gauss points."""
    params = sg.RodParams.create(
        length=[0.1, 0.15], radius=[0.012, 0.008], density=1100.0, young_modulus=1e6, gravity=[0, 0, -9.81]
    )
    model = sg.PCS(params)
    rng = np.random.default_rng(1)
    q = jnp.asarray(0.3 * rng.normal(size=model.num_dofs))
    qd = jnp.asarray(rng.normal(size=model.num_dofs))
    law = ResistiveForceTheory(0.5, 1.2, current=(0.1, 0.0, -0.05))

    @jax.jit
    def both(q, qd):
        s, w = backbone_quadrature(params.length, model.num_quadrature_points)
        probe_force, _ = fluid_force(law, probe_model(model, q, qd, s), w)
        return model.line_load_terms(q, qd, LineDrag(law)).force, probe_force

    ours, ref = (np.asarray(x) for x in both(q, qd))
    assert np.abs(ours - ref).max() <= 1e-12 * np.abs(ref).max()


def _pull_tip(model, force, h, duration, load, at=1.0, iterations=0):
    """A free straight rod at rest on the ground pulled by the world force ``force``
    ``(2,)`` [N] at the fraction ``at`` of its length (the tip by default); returns the
    final state."""
    n = model.num_dofs

    def applied(q, qd):
        _, apply = model.point_force_map(q, jnp.stack([at * model.total_length]))
        return apply(jnp.asarray(force, q.dtype)[None])

    def step(y, _):
        return sg.sim.linear_trapezoid_step(model, y, applied, h, line_load=load, line_load_iterations=iterations), None

    y, _ = jax.lax.scan(step, jnp.zeros(2 * n), None, length=int(round(duration / h)))
    return y


@pytest.mark.parametrize("h", [1e-3, 1e-2])
def test_friction_threshold_on_the_ground(h):
    """Pulled along its axis by ``r mu m g``, the rod creeps at the regularised law's
    steady speed ``eps r / sqrt(1 - r^2)`` below the threshold (``r = 0.5``) and slides
    with acceleration ``(r - 1) mu g`` above it (``r = 2``). The steps are 10 to 100 times
    the explicit limit ``2 m eps / (mu m g) = 0.4 ms``; the linearly implicit scheme is
    first order in the friction, 4 % slow on the sliding speed at 10 ms."""
    model, mu, eps = _free_rod(), 0.5, 1e-3
    load = GroundFriction(mu, slip_velocity=eps, normal_acceleration=G_N)
    n, T = model.num_dofs, 0.5
    run = jax.jit(lambda F: _pull_tip(model, jnp.stack([F, 0.0]), h, T, load))
    creep = np.asarray(run(0.5 * mu * MASS * G_N))
    slide = np.asarray(run(2.0 * mu * MASS * G_N))
    v_creep = eps * 0.5 / np.sqrt(1 - 0.25)
    assert abs(creep[n + 1] - v_creep) < 1e-3 * v_creep
    assert abs(creep[n + 2]) < 1e-9 and abs(creep[n]) < 1e-6  # no sideways motion or spin
    v_slide = mu * G_N * T
    assert abs(slide[n + 1] - v_slide) < (0.005 if h < 5e-3 else 0.04) * v_slide


def test_newton_corrections_take_the_friction_at_the_new_velocity():
    """At 10 ms steps the single linearisation of the sliding friction (slope ``mu g eps^2 /
    |v|^3``, almost flat) leaves the rod 3.6 % slow; two Newton corrections per step on
    the frozen configuration solve backward Euler on the load, whose sliding speed is
    exact for a constant friction force (0.04 % left, from the regularisation)."""
    model, mu, eps = _free_rod(), 0.5, 1e-3
    load = GroundFriction(mu, slip_velocity=eps, normal_acceleration=G_N)
    n, T, h = model.num_dofs, 0.5, 1e-2
    pull = jnp.stack([2.0 * mu * MASS * G_N, 0.0])
    run = jax.jit(lambda: [_pull_tip(model, pull, h, T, load, iterations=k)[n + 1] for k in (0, 2)])
    linearised, corrected = (float(v) for v in run())
    v_slide = mu * G_N * T
    assert 0.02 < (v_slide - linearised) / v_slide < 0.05
    assert abs(corrected - v_slide) < 2e-3 * v_slide


def test_anisotropic_friction_resists_each_direction_with_its_coefficient():
    """Pulled at its middle (no torque), the rod creeps under forward, backward and lateral
    pulls of 0.8 times each direction's threshold ``mu_dir m g``, and under ``1.5 mu_forward
    m g`` sideways (below ``mu_lateral``), while the same pull forward slides."""
    mu = (0.2, 0.6, 1.0)
    model = _free_rod()
    load = GroundFriction(mu, slip_velocity=1e-3, normal_acceleration=G_N)
    n, W = model.num_dofs, MASS * G_N
    run = jax.jit(lambda f: _pull_tip(model, f, 2e-3, 0.3, load, at=0.5))
    for force, axis in [((0.8 * mu[0] * W, 0.0), 1), ((-0.8 * mu[1] * W, 0.0), 1), ((0.0, 0.8 * mu[2] * W), 2)]:
        y = np.asarray(run(jnp.asarray(force)))
        assert abs(y[n + axis]) < 2e-3, (force, y[n : n + 3])
    sideways = np.asarray(run(jnp.asarray((0.0, 1.5 * mu[0] * W))))
    forward = np.asarray(run(jnp.asarray((1.5 * mu[0] * W, 0.0))))
    assert abs(sideways[n + 2]) < 2e-3
    assert forward[n + 1] > 0.5 * 0.5 * mu[0] * G_N * 0.3  # slides at about (1.5 - 1) mu g t


def test_ground_friction_rejects_bad_parameters():
    with pytest.raises(ValueError, match="normal_acceleration"):
        GroundFriction(0.5, normal_acceleration=0.0)
    with pytest.raises(ValueError, match="slip_velocity"):
        GroundFriction(0.5, slip_velocity=-1.0)
    with pytest.raises(ValueError, match="friction"):
        GroundFriction((0.5, 0.2))
