"""Contact and fluid laws against closed forms, float64: a sphere (contact force at its
centre, so it slides without rolling) on a ground plane, resistive-force drag on a
straight rod; a box sliding and tumbling on a plane against MuJoCo.

Resting penetration ``m g cos(theta) / k``; on an incline it creeps at the regularised law's
closed-form speed below ``tan(theta) = mu`` and slides with ``g (sin - mu cos)`` above;
sliding on flat ground decelerates at ``mu g`` (per direction for anisotropic friction);
finite gradients through contact onset; bad parameters raise at construction.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sorogym as sg
from sorogym.contact import (
    ContactLaw,
    GroundPlane,
    ResistiveForceTheory,
    backbone_quadrature,
    fluid_force,
    penetration,
    probe_bodies,
    probe_model,
    surface_contact,
    terrain,
)
from sorogym.robots import brittle_star
from sorogym.testing import BOX_CASES, BOX_TOLERANCES, compare_box_on_plane

G, MASS, RADIUS, K, EPS = 9.81, 1.0, 0.05, 1e4, 1e-3
DT = 2e-4


def _puck():
    inertia = 0.4 * MASS * RADIUS**2 * np.eye(3)
    link = sg.RigidLink("puck", MASS, (0.0, 0.0, 0.0), inertia, joint=sg.Joint.free())
    return sg.BodyTree([link], gravity=(0.0, 0.0, -G))


PUCK = _puck()


@functools.partial(jax.jit, static_argnums=(3,))
def _slide(law, ground, y0, steps):
    """Velocities ``(steps, 3)`` [m/s] and positions of the puck's centre, stepped by the
    linear trapezoid scheme with the ground contact as the applied force."""

    def applied(q, qd):
        probe = probe_model(PUCK, q, qd, jnp.zeros(1), body="puck", radius=RADIUS)
        return surface_contact(ground, law, probe)[0]

    def step(y, _):
        y = sg.sim.linear_trapezoid_step(PUCK, y, applied, DT)
        q, qd = PUCK.split_state(y)
        probe = probe_model(PUCK, q, qd, jnp.zeros(1), body="puck", radius=RADIUS)
        return y, (probe.velocities[0], probe.positions[0])

    return jax.lax.scan(step, y0, None, length=steps)[1]


def _state_on(ground, velocity=(0.0, 0.0, 0.0), depth=0.0):
    """Puck touching the surface above the origin (centre at ``(RADIUS - depth) n``), world
    velocity given."""
    n = np.asarray(ground.signed_distance(jnp.zeros((1, 3)))[1][0])
    q = PUCK.neutral_configuration(jnp.float64).at[:3].set(jnp.asarray((RADIUS - depth) * n))
    qd = jnp.zeros(6).at[3:].set(jnp.asarray(velocity, jnp.float64))  # identity rotation: body = world
    return PUCK.pack_state(q, qd)


def _incline(theta):
    return GroundPlane(normal=(-np.sin(theta), 0.0, np.cos(theta)))


def test_resting_contact_sinks_by_the_weight_over_the_stiffness_and_does_not_drift():
    theta = np.arctan(0.2)
    law = ContactLaw(K, damping=20.0, friction=0.6, slip_velocity=EPS)
    ground = _incline(theta)
    v, p = _slide(law, ground, _state_on(ground), int(1.0 / DT))
    depth = RADIUS - np.asarray(p[-1]) @ np.asarray(ground.normal)
    expected = MASS * G * np.cos(theta) / K
    assert abs(depth - expected) < 1e-6 * expected
    r = np.tan(theta) / 0.6  # tangential load / friction limit
    creep = EPS * r / np.sqrt(1 - r * r)
    assert abs(np.linalg.norm(v[-1]) - creep) < 1e-3 * creep  # below the limit: creeping at the regularised speed


@pytest.mark.parametrize("surface", ["plane", "terrain"])
@pytest.mark.parametrize("tan_theta, mu", [(0.3, 0.5), (0.8, 0.5)])
def test_incline_sticks_below_tan_theta_equal_mu_and_slides_above_with_the_analytic_acceleration(
    tan_theta, mu, surface
):
    """On an inclined plane and on the named "slope" heightfield."""
    theta = np.arctan(tan_theta)
    ground = _incline(theta) if surface == "plane" else terrain("slope", size=(6.0, 2.0), resolution=0.1, angle=theta)
    law = ContactLaw(K, damping=20.0, friction=mu, slip_velocity=EPS)
    depth0 = MASS * G * np.cos(theta) / K
    v, _ = _slide(law, ground, _state_on(ground, depth=depth0), int(1.0 / DT))
    downhill = np.array([-np.cos(theta), 0.0, -np.sin(theta)])
    speed = np.asarray(v) @ downhill
    if tan_theta < mu:
        r = tan_theta / mu
        creep = EPS * r / np.sqrt(1 - r * r)  # closed form of the regularised law's steady slip
        assert abs(speed[-1] - creep) < 1e-3 * creep
    else:
        half = int(0.5 / DT)
        accel = (speed[-1] - speed[half - 1]) / (0.5)
        expected = G * (np.sin(theta) - mu * np.cos(theta))
        assert abs(accel - expected) < 1e-4 * expected


@pytest.mark.parametrize(
    "friction, direction, mu",
    [
        (0.3, (1.0, 0.0, 0.0), 0.3),
        ((0.1, 0.4, 0.8), (1.0, 0.0, 0.0), 0.1),
        ((0.1, 0.4, 0.8), (-1.0, 0.0, 0.0), 0.4),
        ((0.1, 0.4, 0.8), (0.0, 1.0, 0.0), 0.8),
    ],
)
def test_sliding_decelerates_at_mu_g_along_each_direction(friction, direction, mu):
    """Anisotropic friction along the puck's x axis: forward, backward, lateral."""
    ground = GroundPlane()
    law = ContactLaw(K, damping=20.0, friction=friction, slip_velocity=EPS)
    v0 = 1.0
    y0 = _state_on(ground, velocity=v0 * np.asarray(direction), depth=MASS * G / K)
    v, _ = _slide(law, ground, y0, int(0.6 / DT))
    speed = np.asarray(v) @ np.asarray(direction)
    t = 0.1
    assert abs(speed[int(t / DT) - 1] - (v0 - mu * G * t)) < 1e-5 * v0
    assert abs(np.asarray(v)[-1, 1 - int(abs(direction[1]))]) < 1e-9  # no sideways drift
    if v0 / (mu * G) < 0.55:  # stopped: creeping at most at the slip velocity scale
        assert abs(speed[-1]) < EPS


def test_gradients_are_finite_through_contact_onset():
    ground = GroundPlane()
    law = ContactLaw(K, damping=20.0, friction=0.5, slip_velocity=EPS)

    def final_x(height):
        q = PUCK.neutral_configuration(jnp.float64).at[2].set(RADIUS + height)
        y0 = PUCK.pack_state(q, jnp.zeros(6).at[3].set(0.5))
        v, p = _slide(law, ground, y0, 500)
        return p[-1, 0]

    for h in (-1e-4, 0.0, 1e-4, 2e-3):
        g = jax.grad(final_x)(jnp.float64(h))
        assert np.isfinite(g)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(stiffness=-1.0), "stiffness"),
        (dict(stiffness=0.0), "stiffness"),
        (dict(stiffness=1e4, damping=np.nan), "damping"),
        (dict(stiffness=1e4, friction=-0.1), "friction"),
        (dict(stiffness=1e4, friction=(0.1, 0.2)), "friction"),
        (dict(stiffness=1e4, friction=(0.1, np.inf, 0.2)), "friction"),
        (dict(stiffness=1e4, slip_velocity=0.0), "slip_velocity"),
    ],
)
def test_bad_contact_parameters_raise_naming_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        ContactLaw(**kwargs)


def test_bad_ground_raises_and_anisotropic_law_needs_axes():
    with pytest.raises(ValueError, match="normal"):
        GroundPlane(normal=(0.0, 0.0, 0.0))
    with pytest.raises(ValueError, match="height"):
        GroundPlane(height=np.nan)
    law = ContactLaw(1e4, friction=(0.1, 0.2, 0.3))
    with pytest.raises(ValueError, match="axis"):
        law.forces(jnp.ones(2), jnp.ones((2, 3)), jnp.ones((2, 3)))


def _floating_rod():
    params = sg.RodParams.create(
        length=[0.15, 0.15], radius=0.01, density=1000.0, young_modulus=1e6, poisson_ratio=0.5, mounting="horizontal"
    )
    return sg.BodyTree([sg.RodBody("rod", sg.PCS(params), joint=sg.Joint.free(), actuated=False)], gravity=(0, 0, -G))


@pytest.mark.parametrize("which", ["serial", "tree"])
def test_probe_velocities_and_frictionless_contact_force_are_derivatives(which):
    """Probe velocities are the time derivatives of the probe positions along the model's
    configuration rate, and a frictionless, undamped contact force is minus the gradient of
    the penalty energy ``k/2 sum depth^2`` along the retraction (generalized forces through
    the probe Jacobians), for a serial PCS arm and a floating rod."""
    rng = np.random.default_rng(3)
    if which == "serial":
        params = sg.RodParams.create(
            length=[0.15, 0.15], radius=0.01, density=1000.0, young_modulus=1e6, poisson_ratio=0.5, mounting="hanging"
        )
        model, body = sg.PCS(params), None
        ground = GroundPlane(normal=(0.2, 0.1, 1.0), height=-0.28)
    else:
        model, body = _floating_rod(), "rod"
        ground = GroundPlane(normal=(0.1, -0.2, 1.0), height=0.004)
    n = model.num_dofs
    q = model.retract(model.neutral_configuration(jnp.float64), jnp.asarray(0.05 * rng.normal(size=n)))
    qd = jnp.asarray(0.3 * rng.normal(size=n))
    s_ps = jnp.linspace(0.0, 0.3, 9)
    law = ContactLaw(K, damping=0.0, friction=0.0)

    @jax.jit
    def quantities(q, qd):
        probe = probe_model(model, q, qd, s_ps, body=body)
        positions = lambda q_: probe_model(model, q_, qd, s_ps, body=body).positions  # noqa: E731
        _, rate = jax.jvp(positions, (q,), (model.configuration_rate(q, qd),))

        def energy(dq):
            p = probe_model(model, model.retract(q, dq), qd, s_ps, body=body)
            return 0.5 * K * jnp.sum(jnp.maximum(penetration(ground, p.positions, p.radii)[0], 0.0) ** 2)

        depth = penetration(ground, probe.positions, probe.radii)[0]
        return probe.velocities, rate, depth, surface_contact(ground, law, probe)[0], -jax.grad(energy)(jnp.zeros(n))

    velocities, rate, depth, tau, expected = quantities(q, qd)
    np.testing.assert_allclose(velocities, rate, rtol=1e-10, atol=1e-12)
    assert np.sum(np.asarray(depth) > 0) >= 2, "some probe points must touch the ground"
    np.testing.assert_allclose(tau, expected, rtol=1e-9, atol=1e-9 * float(jnp.max(jnp.abs(tau))))


@pytest.mark.parametrize(
    "twist, current",
    [
        ((0, 0, 0, 0, 0, 0.2), (0, 0, 0)),  # translating sideways
        ((0, 0, 0, 0.2, 0, 0), (0, 0, 0)),  # translating along its axis
        ((0, 0, 1.5, 0, 0, 0), (0, 0, 0)),  # spinning about its base
        ((0, 0, 0, 0, 0, 0), (0, 0.3, 0.1)),  # at rest in a current
    ],
)
def test_resistive_force_theory_on_a_straight_rod_matches_the_closed_forms(twist, current):
    """Total drag force and torque about the base of a straight floating rod along +x in
    rigid motion: ``-c_n L v_n - c_t L v_t`` in translation, ``-c_n w L^2 / 2`` and torque
    ``-c_n w L^3 / 3`` spinning about its base (the generalized force on the free joint
    is the body-frame torque and force, here the world frame)."""
    rod = _floating_rod()
    c_t, c_n, L = 0.7, 1.6, 0.3
    rft = ResistiveForceTheory(c_t, c_n, current=current)
    s, w = backbone_quadrature([0.15, 0.15], 2)
    q = rod.neutral_configuration(jnp.float64)
    qd = jnp.zeros(rod.num_dofs).at[:6].set(jnp.asarray(twist, jnp.float64))
    tau, forces = jax.jit(lambda q, qd: fluid_force(rft, probe_model(rod, q, qd, s, body="rod"), w))(q, qd)
    omega, v = np.asarray(twist[:3], float), np.asarray(twist[3:], float) - np.asarray(current, float)
    x = np.array([1.0, 0.0, 0.0])
    drag = lambda u: -(c_t * (u @ x) * x + c_n * (u - (u @ x) * x))  # noqa: E731  per unit length and speed
    # point velocity v + omega x (s x): the integrand is linear in s
    force = drag(v) * L + drag(np.cross(omega, x)) * L**2 / 2
    torque = np.cross(x, drag(v)) * L**2 / 2 + np.cross(x, drag(np.cross(omega, x))) * L**3 / 3
    np.testing.assert_allclose(np.sum(np.asarray(forces), axis=0), force, atol=1e-12)
    np.testing.assert_allclose(tau[3:6], force, atol=1e-12)
    np.testing.assert_allclose(tau[:3], torque, atol=1e-12)
    assert np.abs(force).max() + np.abs(torque).max() > 0.01


def test_bad_fluid_parameters_raise_naming_the_field():
    with pytest.raises(ValueError, match="normal"):
        ResistiveForceTheory(1.0, -2.0)
    with pytest.raises(ValueError, match="tangential"):
        ResistiveForceTheory(np.nan, 2.0)
    with pytest.raises(ValueError, match="current"):
        ResistiveForceTheory(1.0, 2.0, current=(0.0, 1.0))


@pytest.mark.parametrize("case", sorted(BOX_CASES))
def test_box_sliding_and_tumbling_on_a_plane_agrees_with_mujoco(case):
    """A rigid box probed at its corners against MuJoCo's box on a plane: where it comes to
    rest, how it is turned and on which face (results/contact/box_on_plane_mujoco.json,
    written by scripts/compare_contact_mujoco.py, holds the same rows)."""
    row, bound = compare_box_on_plane(case), BOX_TOLERANCES[case]
    assert row["position_error_rel"] < bound["position_error_rel"], row
    assert row["rotation_error_rad"] < bound["rotation_error_rad"], row
    assert row["mujoco_face_up"] == row["sorogym_face_up"], row
    assert row["travel_m"] > 0.05, row  # the box did move


def test_probing_many_bodies_at_once_equals_probing_them_one_by_one():
    """The brittle star's arms and hub probed in one pass (the arms evaluated together)
    against one probe per body, at a random state."""
    star = brittle_star(num_arms=3, dtype=jnp.float64)
    rng = np.random.default_rng(5)
    q = star.retract(star.neutral_configuration(jnp.float64), jnp.asarray(0.1 * rng.normal(size=star.num_dofs)))
    qd = jnp.asarray(0.2 * rng.normal(size=star.num_dofs))
    s = np.array([0.0, 0.05, 0.12])
    bodies = ["arm0"] * 3 + ["hub"] + ["arm2"] * 3 + ["arm1"] * 3
    s_all = np.concatenate([s, [0.0], s, s])
    together = jax.jit(lambda q, qd: probe_bodies(star, q, qd, bodies, s_all, radius=0.03))(q, qd)

    @jax.jit
    def one_by_one(q, qd):
        parts = [probe_model(star, q, qd, s, body="arm0"), probe_model(star, q, qd, [0.0], body="hub", radius=0.03)]
        return parts + [probe_model(star, q, qd, s, body="arm2"), probe_model(star, q, qd, s, body="arm1")]

    parts = one_by_one(q, qd)
    for field, got in zip(together._fields, together, strict=True):
        want = jnp.concatenate([getattr(p, field) for p in parts])
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14, err_msg=field)
