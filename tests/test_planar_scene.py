"""The planar scene (:class:`sorogym.PlanarScene`: a planar arm and free rigid bodies on a
table) and its contacts (:class:`sorogym.contact.BodyContact`, and
:class:`sorogym.contact.FloorContact` in the vertical plane).

Layers: closed forms of the bodies (areas, polar moments, the footprint's friction moment);
AD identities on random states (``M`` the Hessian of the kinetic energy, ``G`` and ``K``
energy gradients, the implicit loads' damping ``-d force / d v``); the rounded-rectangle
distance against the 3-D obstacles of :mod:`sorogym.contact` (written apart); friction
thresholds and decelerations against Coulomb's closed forms, for the table and for the
contact's friction and for the floor's; bodies settling on the floor under their weight; the
contact rows of a gripper's fingers against AD; energy conservation of an
undamped arm striking a free puck through elastic contact.
"""

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sorogym as sg
from sorogym.actuation import GeneralizedActuation
from sorogym.contact import (
    BodyContact,
    BoxObstacle,
    CylinderObstacle,
    FloorContact,
    GroundFriction,
    penetration,
    rounded_box_distance,
)
from sorogym.models import PlanarBodies, SceneLoad
from sorogym.sim import linear_trapezoid_step

G = 9.81


def _scene(retardation=0.05, bodies=None, dtype=jnp.float64):
    params = sg.RodParams.create(
        length=[0.1, 0.1, 0.1],
        radius=0.015,
        density=1070.0,
        young_modulus=5e6,
        poisson_ratio=0.5,
        damping=5e6 * retardation / 3.0,
        gravity=jnp.zeros(2),
        planar=True,
        base_rotation=0.0,
        dtype=dtype,
    )
    arm = sg.PlanarPCS(params, active_strains="pcc", actuation=GeneralizedActuation())
    if bodies is None:
        bodies = PlanarBodies.rounded_boxes([[0.0, 0.0]], [0.03], [0.08], dtype=dtype)
    return sg.PlanarScene(arm, bodies)


def test_rounded_boxes_have_the_closed_form_inertia_and_footprint():
    m = 0.2
    disc = PlanarBodies.rounded_boxes([[0.0, 0.0]], [0.04], [m])
    box = PlanarBodies.rounded_boxes([[0.03, 0.02]], [0.0], [m])
    np.testing.assert_allclose(disc.inertia, [0.5 * m * 0.04**2], rtol=1e-12)
    np.testing.assert_allclose(box.inertia, [m * (0.06**2 + 0.04**2) / 12.0], rtol=1e-12)
    # a stadium-cornered block against a fine grid integral of r^2 over its outline
    a, b, rho = 0.03, 0.01, 0.015
    rounded = PlanarBodies.rounded_boxes([[a, b]], [rho], [m])
    u = (np.arange(2000) + 0.5) / 2000 * 2 - 1
    x, y = np.meshgrid(u * (a + rho), u * (b + rho))
    inside = np.hypot(np.maximum(np.abs(x) - a, 0), np.maximum(np.abs(y) - b, 0)) <= rho
    np.testing.assert_allclose(rounded.inertia, [m * np.mean((x * x + y * y)[inside])], rtol=1e-4)
    # the support ring of a disc lies at 2/3 of its radius (uniform pressure's mean distance)
    r = np.linalg.norm(np.asarray(disc.support_offsets[0]), axis=-1)
    np.testing.assert_allclose(r, 2.0 / 3.0 * 0.04, rtol=2e-3)
    np.testing.assert_allclose(np.sum(np.asarray(box.support_shares)), 1.0)


def test_bad_bodies_raise_naming_the_field():
    with pytest.raises(ValueError, match="mass"):
        PlanarBodies([-1.0], [1e-4], np.zeros((4, 2)))
    with pytest.raises(ValueError, match="inertia"):
        PlanarBodies([1.0], [0.0], np.zeros((4, 2)))
    with pytest.raises(ValueError, match="support_shares"):
        PlanarBodies([1.0], [1e-4], np.zeros((4, 2)), support_shares=[[0.5, 0.5, 0.5, 0.5]])
    with pytest.raises(TypeError, match="planar"):
        sg.PlanarScene(sg.PCS(sg.RodParams.upright(length=[0.1], radius=0.01, density=1e3, young_modulus=1e6)), None)


@jax.jit
def _identities(scene, q, qd):
    kinetic = lambda q_, v_: 0.5 * v_ @ scene.inertia_matrix(q_) @ v_  # noqa: E731
    dM = jax.jvp(scene.inertia_matrix, (q,), (qd,))[1]
    coriolis = dM @ qd - jax.grad(kinetic)(q, qd)  # C qd of the Lagrangian
    load = SceneLoad(
        bodies=GroundFriction(0.4, 0.01),
        interactions=(BodyContact(0, jnp.linspace(0.02, 0.3, 15), 0.015, 800.0, 5.0, 0.005),),
    )
    load_at = scene.inertia_bias_and_line_load_map(q, qd, load)[2]
    return {
        "M": (scene.inertia_matrix(q), jax.hessian(kinetic, argnums=1)(q, qd)),
        "C": (scene.coriolis_force(q, qd), coriolis),
        "G": (scene.gravitational_force(q), jax.grad(scene.gravitational_energy)(q)),
        "K": (scene.elastic_force(q), jax.grad(scene.elastic_energy)(q)),
        "S": (scene.stiffness_matrix(), jax.jacfwd(scene.elastic_force)(q)),
        "load damping": (load_at(qd).damping, -jax.jacfwd(lambda v: load_at(v).force)(qd)),
    }


@pytest.mark.parametrize("seed", [0, 1])
def test_scene_dynamics_are_the_energies_derivatives(seed):
    rng = np.random.default_rng(seed)
    bodies = PlanarBodies.rounded_boxes(
        [[0.02, 0.03]], [0.01], [0.1], stiffness=rng.uniform(0, 5, 3), damping=rng.uniform(0, 1, 3)
    )
    scene = _scene(bodies=bodies)
    scene = scene.with_params(scene.params.replace(robot=scene.robot.params.replace(gravity=jnp.array([0.3, -2.0]))))
    # the arm bent towards the block, which sits against it: the contact is active
    q = jnp.concatenate([jnp.asarray(rng.normal(size=3) * 2.0), jnp.array([rng.uniform(-3, 3), 0.2, 0.0])])
    tip_region = scene.forward_kinematics(q, 0.2)[:2, 2]
    q = q.at[4:].set(tip_region + jnp.array([0.0, 0.03]))
    qd = jnp.asarray(rng.normal(size=6))
    for name, (got, want) in _identities(scene, q, qd).items():
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10, err_msg=name)
    M = scene.inertia_matrix(q)
    np.testing.assert_allclose(M[3:, :3], 0.0)  # block diagonal: only contact couples the two
    np.testing.assert_allclose(np.diag(M)[3:], [bodies.inertia[0], 0.1, 0.1])


def test_rounded_rectangle_distance_matches_the_3d_obstacles():
    rng = np.random.default_rng(3)
    points = rng.uniform(-0.08, 0.08, (400, 2))
    embedded = jnp.asarray(np.concatenate([points, np.zeros((400, 1))], -1))
    zero = jnp.zeros(400)
    # a disc: a vertical cylinder; a rectangle: a box, both cut at z = 0
    d_disc, n_disc = rounded_box_distance(jnp.asarray(points), jnp.zeros(2), 0.03)
    depth, normal = penetration(CylinderObstacle((0.0, 0.0, 0.0), (0.0, 0.0, 1.0), 0.03, 1.0), embedded, zero)
    np.testing.assert_allclose(d_disc, -depth, atol=1e-9)
    np.testing.assert_allclose(n_disc, normal[:, :2], atol=1e-6)
    d_box, n_box = rounded_box_distance(jnp.asarray(points), jnp.array([0.04, 0.02]), 0.0)
    depth, normal = penetration(BoxObstacle((0.0, 0.0, 0.0), (0.04, 0.02, 1.0)), embedded, zero)
    np.testing.assert_allclose(d_box, -depth, atol=1e-9)
    away = np.asarray(np.abs(d_box) > 1e-6)  # normals agree off the surface
    np.testing.assert_allclose(np.asarray(n_box)[away], np.asarray(normal)[away, :2], atol=1e-6)


def _slide(scene, q0, qd0, force, mu, eps, seconds, h=1e-3):
    """The arm left alone and the body under a constant world force ``(fx, fy)`` and
    table friction: body velocities ``(theta_dot, vx, vy)`` every 10 ms."""
    load = SceneLoad(bodies=GroundFriction(mu, eps))
    tau = jnp.zeros(scene.num_dofs).at[4:].set(jnp.asarray(force))

    @jax.jit
    def run(y0):
        step = lambda y, _: (linear_trapezoid_step(scene, y, lambda q, v: tau, h, load, 2),) * 2  # noqa: E731
        return jax.lax.scan(step, y0, None, length=int(round(seconds / h)))[1]

    ys = run(scene.pack_state(q0, qd0))
    return np.asarray(ys[9::10, scene.num_dofs + 3 :])


def test_friction_holds_below_the_threshold_and_slides_above_with_coulombs_acceleration():
    scene = _scene()
    m, mu, eps = 0.08, 0.4, 1e-3
    q0 = jnp.zeros(6).at[4:].set(jnp.array([0.5, 0.5]))  # far from the arm
    held = _slide(scene, q0, jnp.zeros(6), (0.9 * mu * m * G, 0.0), mu, eps, 0.3)
    # below mu m g: creep at the regularisation's speed eps r / sqrt(1 - r^2), r = 0.9
    assert abs(held[-1, 1] - eps * 0.9 / np.sqrt(1 - 0.81)) < 2e-4
    pushed = _slide(scene, q0, jnp.zeros(6), (2.0 * mu * m * G, 0.0), mu, eps, 0.3)
    accel = np.polyfit(np.arange(10, 30) * 0.01, pushed[10:30, 1], 1)[0]
    np.testing.assert_allclose(accel, mu * G, rtol=0.02)  # (F - mu m g) / m
    # a disc spinning on its support ring: alpha = (2/3 mu m g R) / (m R^2 / 2)
    spinning = _slide(scene, q0, jnp.zeros(6).at[3].set(20.0), (0.0, 0.0), mu, eps, 0.2)
    alpha = -np.polyfit(np.arange(1, 8) * 0.01, spinning[1:8, 0], 1)[0]  # it stops after 0.11 s
    np.testing.assert_allclose(alpha, 4.0 * mu * G / (3.0 * 0.03), rtol=0.02)


def test_contact_friction_holds_a_pressed_block_below_mu_f_n_and_slides_above():
    """A block lies on a stiff straight arm (two probes under its flat face), pressed down by
    ``F_n`` and pulled along the arm by ``F_t`` (no table): below ``mu F_n`` it creeps at
    the regularisation's speed ``eps r / sqrt(1 - r^2)``, ``r = F_t / (mu F_n)``; above,
    it slides at ``(F_t - mu F_n) / m``; frictionless, at ``F_t / m``."""
    bodies = PlanarBodies.rounded_boxes([[0.05, 0.02]], [0.0], [0.08], dtype=jnp.float64)
    scene = _scene(bodies=bodies)
    scene = scene.with_params(scene.params.replace(robot=scene.robot.params.replace(young_modulus=jnp.full(3, 5e10))))
    m, mu, eps, k, f_n = 0.08, 0.4, 1e-3, 2000.0, 0.5
    q0 = jnp.zeros(6).at[4:].set(jnp.array([0.2, 0.015 + 0.02 - 0.5 * f_n / k]))  # at rest on the probes

    def slide(f_t, friction, seconds=0.06, h=1e-3):
        contact = BodyContact(0, [0.1, 0.17, 0.23, 0.3], 0.015, k, 0.0, h, friction, eps)
        load = SceneLoad(interactions=(contact,))
        tau = jnp.zeros(6).at[4:].set(jnp.asarray([f_t, -f_n]))

        @jax.jit
        def run(y0):
            step = lambda y, _: (linear_trapezoid_step(scene, y, lambda q, v: tau, h, load, 2),) * 2  # noqa: E731
            return jax.lax.scan(step, y0, None, length=int(round(seconds / h)))[1]

        return np.asarray(run(scene.pack_state(q0, jnp.zeros(6)))[:, 6 + 4])  # the block's x velocity

    held = slide(0.9 * mu * f_n, mu, seconds=0.2)  # after the block's rocking on the probes settles
    np.testing.assert_allclose(held[-50:].mean(), eps * 0.9 / np.sqrt(1 - 0.81), rtol=0.03)
    t = np.arange(1, 61) * 1e-3
    for f_t, friction, accel in [(2.0 * mu * f_n, mu, mu * f_n / m), (0.5 * f_n, 0.0, 0.5 * f_n / m)]:
        fitted = np.polyfit(t[20:], slide(f_t, friction)[20:], 1)[0]
        np.testing.assert_allclose(fitted, accel, rtol=0.02)
    with pytest.raises(ValueError, match="slip_velocity"):
        BodyContact(0, [0.1], 0.015, k, friction=mu, slip_velocity=0.0)


def _upright_scene(bodies):
    """An arm held high (base at y = 0.4 m, out of the floor's reach) and ``bodies``, under
    gravity along -y (the vertical plane)."""
    scene = _scene(bodies=bodies)
    params = scene.robot.params.replace(gravity=jnp.array([0.0, -G]), base_position=jnp.array([0.0, 0.4]))
    return scene.with_params(scene.params.replace(robot=params))


def test_floor_carries_bodies_flat_and_its_friction_has_coulombs_threshold():
    """A tilted box and a disc dropped on the floor settle with the floor's force equal to
    their weights (the box flat, on two corner discs; the disc on four coincident ones);
    pushed sideways by 0.9 ``mu m g`` the box creeps at the regularised speed, by 2 ``mu m
    g`` it slides at ``mu g``."""
    m, k, mu, eps, h = 0.08, 3000.0, 0.5, 1e-3, 1e-3
    bodies = PlanarBodies.rounded_boxes([[0.03, 0.02], [0.0, 0.0]], [0.005, 0.03], [m, m], dtype=jnp.float64)
    scene = _upright_scene(bodies)
    floor = FloorContact([], [], k, damping=5.0, lookahead=h, friction=mu, slip_velocity=eps)
    load = SceneLoad(interactions=(floor,))
    n = scene.num_dofs
    q0 = jnp.zeros(n).at[3:].set(jnp.array([0.15, 0.5, 0.03, 0.0, 0.7, 0.032]))

    def run(y0, push, seconds):
        tau = jnp.zeros(n).at[4].set(push)

        @jax.jit
        def go(y):
            step = lambda y, _: (linear_trapezoid_step(scene, y, lambda q, v: tau, h, load, 2),) * 2  # noqa: E731
            return jax.lax.scan(step, y, None, length=int(round(seconds / h)))[1]

        return go(y0)

    settled = run(scene.pack_state(q0, jnp.zeros(n)), 0.0, 1.0)[-1]
    q, qd = settled[:n], settled[n:]
    np.testing.assert_allclose(q[3], 0.0, atol=1e-3)  # the box lies flat
    np.testing.assert_allclose(np.asarray(q)[[5, 8]], [0.025 - m * G / (2 * k), 0.03 - m * G / (4 * k)], atol=2e-5)
    f_n = np.asarray(floor.normal_forces(scene, q, qd)[0])
    np.testing.assert_allclose([f_n[:4].sum(), f_n[4:].sum()], [m * G, m * G], rtol=1e-3)
    assert np.count_nonzero(f_n[:4] > 1e-3) == 2
    held = np.asarray(run(settled, 0.9 * mu * m * G, 0.3)[:, n + 4])
    np.testing.assert_allclose(held[-50:].mean(), eps * 0.9 / np.sqrt(1 - 0.81), rtol=0.05)
    pushed = np.asarray(run(settled, 2.0 * mu * m * G, 0.1)[:, n + 4])
    t = np.arange(1, 101) * h
    np.testing.assert_allclose(np.polyfit(t[20:], pushed[20:], 1)[0], mu * G, rtol=0.02)
    with pytest.raises(ValueError, match="height"):
        FloorContact([], [], k, height=np.nan)


def test_gripper_contact_rows_are_the_derivatives_of_the_gaps():
    """The rows of the floor and body contacts of a two-finger gripper's probes (and of a
    body's corners on the floor) are the derivatives of the depths (``-J_n``) and of the
    sliding (``J_t``: the probe's ``-x``, the body's material point's ``-x``) by AD."""
    finger_params = sg.RodParams.create(
        length=[0.05, 0.05], radius=0.008, density=1070.0, young_modulus=2e6, poisson_ratio=0.5,
        gravity=jnp.array([0.0, -G]), planar=True, dtype=jnp.float64,
    )  # fmt: skip
    finger = sg.PlanarPCS(finger_params, "pcc", GeneralizedActuation(), floating_base=True)
    mounts = [[-np.pi / 2, -0.05, 0.0], [-np.pi / 2, 0.05, 0.0]]
    gripper = sg.PlanarGripper(finger, mounts, [0.0, 0.12], 0.2, 400.0, 10.0)
    bodies = PlanarBodies.rounded_boxes([[0.02, 0.01]], [0.004], [0.05], dtype=jnp.float64)
    scene = sg.PlanarScene(gripper, bodies)
    s = jnp.asarray([0.025, 0.05, 0.1])
    rng = np.random.default_rng(4)
    q = jnp.asarray(np.r_[-0.03, rng.normal(size=4) * 5.0, 0.3, 0.01, 0.02])
    floor = FloorContact(s, 0.008, 1000.0, height=0.01)
    touch = BodyContact(0, s, 0.008, 1000.0)

    @jax.jit
    def rows_and_gradients(q):
        return [
            (c.contact_rows(scene, q), jax.jacfwd(lambda x: c.contact_rows(scene, x)[0])(q)) for c in (floor, touch)
        ]

    computed = rows_and_gradients(q)
    for (_, J_n, _), gradient in computed:
        np.testing.assert_allclose(-J_n, gradient, atol=1e-10)
    depth, J_n, J_t = computed[0][0]
    assert depth.shape == (2 * 3 + 4,)
    positions = lambda x: gripper.backbone_positions(x[:5], s).reshape(-1, 2)  # noqa: E731
    np.testing.assert_allclose(J_t[:6], -jax.jit(jax.jacfwd(positions))(q)[:, 0, :], atol=1e-10)
    R, _ = scene.body_frames(q)
    corners = np.array([[1, 1], [-1, 1], [-1, -1], [1, -1]]) * np.asarray(bodies.half_extents[0])
    lever = corners @ np.asarray(R[0]).T - [0.0, float(bodies.corner_radius[0])]
    local = lever @ np.asarray(R[0])  # the corners' lowest points, as material points of the body

    def material(x):
        c, s_ = jnp.cos(x[5]), jnp.sin(x[5])
        Rx = jnp.array([[c, -s_], [s_, c]])
        return x[6:8] + jnp.asarray(local) @ Rx.T

    np.testing.assert_allclose(J_t[6:], -jax.jit(jax.jacfwd(material))(q)[:, 0, :], atol=1e-12)


def test_undamped_arm_striking_a_free_puck_conserves_energy():
    """No damping, no friction, an elastic contact (``d = 0``, no look-ahead): kinetic plus
    elastic energy plus the contact's ``k delta^2 / 2`` is constant through the impact."""
    scene = _scene(retardation=0.0)
    contact = BodyContact(0, jnp.linspace(0.0375, 0.3, 8), 0.015, 500.0)
    load = SceneLoad(interactions=(contact,))

    def energy(y):
        q, qd = scene.split_state(y)
        depth = contact.normal_forces(scene, q, qd)[1]
        return scene.total_energy(y) + 0.5 * 500.0 * jnp.sum(jnp.maximum(depth, 0.0) ** 2)

    def vf(t, y, args):
        q, qd = scene.split_state(y)
        return scene.forward_dynamics(t, y, (None, scene.line_load_terms(q, qd, load).force))

    q0 = jnp.zeros(6).at[4:].set(jnp.array([0.2, 0.055]))  # 10 mm beside the arm
    qd0 = jnp.zeros(6).at[:3].set(jnp.array([30.0, 30.0, 30.0]))  # swinging towards it
    sol = diffrax.diffeqsolve(
        diffrax.ODETerm(vf),
        diffrax.Tsit5(),
        0.0,
        0.3,
        1e-4,
        scene.pack_state(q0, qd0),
        stepsize_controller=diffrax.PIDController(rtol=1e-9, atol=1e-12),
        saveat=diffrax.SaveAt(ts=jnp.linspace(0.0, 0.3, 61)),
        max_steps=200_000,
    )
    E = np.asarray(jax.vmap(energy)(sol.ys))
    puck_speed = np.linalg.norm(np.asarray(sol.ys[-1, 10:12]))
    assert puck_speed > 0.05  # the puck was struck
    assert np.max(np.abs(E - E[0])) < 1e-6 * E[0]
