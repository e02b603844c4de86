"""Rigid objects (free bodies of a tree with a primitive shape), float64: mass properties
against the shape itself, a box resting on the ground at the closed-form depth, a box held
between two fingertips under gravity (holds while ``2 mu F > m g``, slides with ``g - 2 mu
F / m`` otherwise), momentum conserved through a frictionless collision of two free
objects, and bad input."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sorogym as sg
from sorogym.contact import (
    SHAPES,
    ContactLaw,
    GroundPlane,
    RigidObject,
    check_separation,
    object_contact,
    probe_bodies,
    probe_link,
    probe_object,
    surface_contact,
)

G, K, EPS, DT = 9.81, 1e4, 1e-3, 2e-4
FINGER_EPS = 5e-3
OBJECTS = {
    "sphere": RigidObject("o", "sphere", (0.04,), 700.0),
    "box": RigidObject("o", "box", (0.05, 0.03, 0.02), 700.0),
    "capsule": RigidObject("o", "capsule", (0.02, 0.05), 700.0),
    "cylinder": RigidObject("o", "cylinder", (0.03, 0.04), 700.0),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_mass_and_inertia_equal_the_integrals_over_the_shape(shape):
    """Closed-form mass and inertia against a midpoint-rule integral of the density over the
    points where the shape's own signed distance is negative (grid of 96^3 cells)."""
    obj = OBJECTS[shape]
    r = obj.size[0]
    extent = {
        "sphere": (r, r, r),
        "box": obj.size,
        "capsule": (r, r, r + obj.size[-1]),
        "cylinder": (r, r, obj.size[-1]),
    }
    extent = np.asarray(extent[shape])  # the bounding box (cells align with a box's faces)
    n = 96
    axes = [(np.arange(n) + 0.5) / n * 2 * e - e for e in extent]
    X = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, 3)
    inside = np.asarray(jax.jit(lambda x: obj.surface(jnp.float64).signed_distance(x)[0])(jnp.asarray(X))) < 0
    cell = np.prod(2 * extent / n) * obj.density
    x = X[inside]
    mass = cell * inside.sum()
    inertia = cell * (np.sum(x * x) * np.eye(3) - x.T @ x)
    m, I = obj.mass_properties()
    assert abs(mass - m) < 0.02 * m
    np.testing.assert_allclose(inertia, I, atol=0.03 * np.abs(I).max())


def _step_scan(tree, applied, y0, steps, observe, scheme=sg.sim.linear_trapezoid_step):
    def step(y, _):
        y = scheme(tree, y, applied, DT)
        return y, observe(y)

    return jax.lax.scan(step, y0, None, length=steps)[1]


def test_box_rests_on_the_ground_at_the_closed_form_depth_without_drift():
    box = RigidObject("box", "box", (0.05, 0.03, 0.02), 700.0)
    tree = sg.BodyTree([box.link()], gravity=(0.0, 0.0, -G))
    m = box.mass_properties()[0]
    law, ground = ContactLaw(K, damping=20.0, friction=0.5, slip_velocity=EPS), GroundPlane()
    depth = m * G / (4 * K)  # four corners carry the weight
    q0 = tree.neutral_configuration(jnp.float64).at[2].set(0.02 - depth + 1e-4)  # dropped from 0.1 mm

    @jax.jit
    def run(y0):
        def applied(q, qd):
            return surface_contact(ground, law, probe_object(tree, q, qd, box))[0]

        return _step_scan(tree, applied, y0, int(0.5 / DT), lambda y: y)

    ys = np.asarray(run(tree.pack_state(q0, jnp.zeros(6))))
    q, qd = ys[-1][:7], ys[-1][7:]
    assert abs(q[2] - (0.02 - depth)) < 1e-6 * depth
    assert np.abs(q[:2]).max() < 1e-12 and np.abs(qd).max() < 1e-9


def _fingers_and_box(mu, squeeze):
    """A box (mass m) between two spherical fingertips on prismatic joints along x,
    pressed with ``squeeze`` [N] each; gravity -z acts on the box only (the fingertips'
    joints carry it). Returns a jitted ``run() -> box vertical velocities (steps,)`` and m."""
    box = RigidObject("box", "box", (0.03, 0.03, 0.03), 500.0)
    r = 0.01
    tips = [
        sg.RigidLink(
            name,
            0.05,
            (0.0, 0.0, 0.0),
            4e-6 * np.eye(3),
            joint=sg.Joint.prismatic((1.0, 0.0, 0.0)),
            offset=np.block([[np.eye(3), np.array([[sign * (0.03 + r)], [0.0], [0.0]])], [np.zeros((1, 3)), 1.0]]),
        )
        for name, sign in (("left", -1.0), ("right", 1.0))
    ]
    tree = sg.BodyTree([box.link(), *tips], gravity=(0.0, 0.0, -G))
    m = box.mass_properties()[0]
    # explicit friction is stable for h < 2 m eps / (mu sum f_n) = 2 eps (m g / 2 mu F) / g: eps = 5 mm/s
    law = ContactLaw(K, damping=20.0, friction=mu, slip_velocity=FINGER_EPS)
    press = (
        jnp.zeros(tree.num_dofs).at[6].set(squeeze).at[7].set(-squeeze)
    )  # prismatic coordinates after the free joint
    depth = squeeze / K
    q0 = tree.neutral_configuration(jnp.float64).at[7].set(depth).at[8].set(-depth)

    @jax.jit
    def run():
        def applied(q, qd):
            tau = press
            for name in ("left", "right"):
                probe = probe_link(tree, q, qd, name, jnp.zeros((1, 3)), radius=r)
                tau = tau + object_contact(tree, q, qd, box, law, probe)[0]
            return tau

        return _step_scan(
            tree,
            applied,
            tree.pack_state(q0, jnp.zeros(tree.num_dofs)),
            int(0.1 / DT),  # a sliding box travels 12 mm of its 60 mm
            lambda y: y[tree.num_positions + 5],
        )

    return run, m


@pytest.mark.parametrize("mu, squeeze", [(0.5, 2.0), (0.2, 2.0)])
def test_box_between_two_fingertips_holds_inside_the_friction_cone_and_slides_outside(mu, squeeze):
    run, m = _fingers_and_box(mu, squeeze)
    vz = np.asarray(run())  # the box's vertical velocity (body frame = world: it does not rotate)
    ratio = m * G / (2 * mu * squeeze)  # load / friction limit
    if ratio < 1:
        creep = FINGER_EPS * ratio / np.sqrt(1 - ratio * ratio)  # the regularised law's steady slip
        assert abs(-vz[-1] - creep) < 1e-2 * creep
    else:
        accel = np.polyfit(np.arange(len(vz))[-250:] * DT, vz[-250:], 1)[0]
        # the regularised law falls short of mu f_n by eps^2 / (2 v^2) at sliding speed v
        assert abs(accel + (G - 2 * mu * squeeze / m)) < 1e-3 * G


def _momenta(tree, q, qd, objects):
    """Total linear [kg m/s] and angular momentum about the origin [kg m^2/s] of free objects."""
    P, L = jnp.zeros(3), jnp.zeros(3)
    for obj in objects:
        pose, J = tree.pose_and_jacobian(q, 0.0, frame="inertial", body=obj.name)
        twist = J @ qd
        m, I = obj.mass_properties()
        R = pose[:3, :3]
        P = P + m * twist[3:]
        L = L + R @ (jnp.asarray(I) @ (R.T @ twist[:3])) + m * jnp.cross(pose[:3, 3], twist[3:])
    return P, L


def test_frictionless_collision_of_two_free_objects_conserves_momentum():
    ball = RigidObject("ball", "sphere", (0.02,), 2000.0, position=(-0.1, 0.012, 0.0))
    box = RigidObject("box", "box", (0.03, 0.02, 0.02), 500.0)
    tree = sg.BodyTree([ball.link(), box.link()], gravity=(0.0, 0.0, 0.0))
    check_separation(tree, tree.neutral_configuration(jnp.float64), [ball, box])
    law = ContactLaw(K, damping=0.0)

    def applied(q, qd):
        ball_on_box = object_contact(tree, q, qd, box, law, probe_object(tree, q, qd, ball))[0]
        box_on_ball = object_contact(tree, q, qd, ball, law, probe_object(tree, q, qd, box))[0]
        return ball_on_box + box_on_ball

    qd0 = jnp.zeros(tree.num_dofs).at[3].set(1.0)  # the ball flies along +x, off the box's centre line

    @jax.jit
    def run():
        def step(y, _):
            y = sg.sim.trapezoid_predictor_corrector_step(tree, y, applied, 1e-5)
            return y, None

        y0 = tree.pack_state(tree.neutral_configuration(jnp.float64), qd0)
        y1 = jax.lax.scan(step, y0, None, length=12000)[0]
        return y0, y1

    y0, y1 = run()
    (P0, L0), (P1, L1) = (_momenta(tree, *tree.split_state(y), [ball, box]) for y in (y0, y1))
    m_ball = ball.mass_properties()[0]
    assert float(jnp.linalg.norm(tree.split_state(y1)[1][9:12])) > 0.1  # the box was hit and moves
    assert float(jnp.linalg.norm(P1 - P0)) < 1e-6 * m_ball
    assert float(jnp.linalg.norm(L1 - L0)) < 1e-6 * m_ball * 0.1
    assert float(jnp.abs(L1[2])) > 1e-3 * m_ball * 0.012  # off-centre: the box spins


def test_bad_objects_raise_naming_the_field():
    with pytest.raises(ValueError, match="shape"):
        RigidObject("a", "cone", (0.1,), 1.0)
    with pytest.raises(ValueError, match="size"):
        RigidObject("a", "box", (0.1, 0.1), 1.0)
    with pytest.raises(ValueError, match="size"):
        RigidObject("a", "sphere", (-0.1,), 1.0)
    with pytest.raises(ValueError, match="density"):
        RigidObject("a", "sphere", (0.1,), float("nan"))
    with pytest.raises(ValueError, match="name"):
        RigidObject("", "sphere", (0.1,), 1.0)
    a = RigidObject("a", "sphere", (0.05,), 100.0)
    b = RigidObject("b", "box", (0.05, 0.05, 0.05), 100.0, position=(0.08, 0.0, 0.0))
    tree = sg.BodyTree([a.link(), b.link()])
    with pytest.raises(ValueError, match="'a' and 'b'"):
        check_separation(tree, tree.neutral_configuration(jnp.float64), [a, b])


@pytest.mark.parametrize("tan_theta", [0.3, 2.0])
def test_ball_rolls_down_an_incline_with_the_closed_form_accelerations(tan_theta):
    """A ball with the contact force on its surface (``at_surface``): below ``tan(theta) =
    7 mu / 2`` it rolls without slipping at ``a = 5/7 g sin``; above it slides at ``g (sin -
    mu cos)`` while its spin grows at ``5 mu g cos / (2 r)``."""
    mu, r, theta = 0.5, 0.05, np.arctan(tan_theta)
    ball = RigidObject("ball", "sphere", (r,), 1000.0)
    tree = sg.BodyTree([ball.link()], gravity=(0.0, 0.0, -G))
    m = ball.mass_properties()[0]
    normal = np.array([-np.sin(theta), 0.0, np.cos(theta)])
    ground = GroundPlane(normal=normal)
    law = ContactLaw(K, damping=20.0, friction=mu, slip_velocity=FINGER_EPS)
    q0 = tree.neutral_configuration(jnp.float64).at[:3].set(jnp.asarray((r - m * G * np.cos(theta) / K) * normal))
    downhill = np.array([-np.cos(theta), 0.0, -np.sin(theta)])

    @jax.jit
    def run():
        def applied(q, qd):
            return surface_contact(ground, law, probe_object(tree, q, qd, ball), at_surface=True)[0]

        def observe(y):
            q, qd = tree.split_state(y)
            probe = probe_object(tree, q, qd, ball)
            return probe.velocities[0], probe.spins[0]

        # second order: the first-order scheme lets the body-frame velocity of a fast-spinning
        # ball grow by (w h)^2 / 2 per step
        scheme = sg.sim.trapezoid_predictor_corrector_step
        return _step_scan(tree, applied, tree.pack_state(q0, jnp.zeros(6)), int(0.2 / DT), observe, scheme)

    v, w = (np.asarray(x) for x in run())
    t = np.arange(len(v))[-500:] * DT
    accel = np.polyfit(t, v[-500:] @ downhill, 1)[0]
    spin = np.polyfit(t, w[-500:, 1], 1)[0]  # about world +y: rolling downhill (-x) turns the ball about -y
    if tan_theta < 3.5 * mu:
        assert abs(accel - 5.0 / 7.0 * G * np.sin(theta)) < 1e-3 * G
        assert abs(-spin * r - accel) < 1e-3 * G  # no slip: v = w r
    else:
        assert abs(accel - G * (np.sin(theta) - mu * np.cos(theta))) < 1e-3 * G
        assert abs(-spin - 5 * mu * G * np.cos(theta) / (2 * r)) < 1e-3 * G / r


def _soft_grasp():
    """The 2-finger soft gripper (palm fixed) around a 4 x 6 x 5 cm box of 36 g whose
    centre sits 10 mm above the straight fingertips, 5 N on each inner tendon; the box rests
    on a table until the fingers have closed (0.3 s), then the table is gone (0.2 s).
    Returns a jitted ``run(law) -> box height change [m] every 10 ms of the second phase``."""
    from sorogym.robots import gripper

    zc = 0.19
    box = RigidObject("box", "box", (0.02, 0.03, 0.025), 300.0, position=(0.0, 0.0, zc))
    tree = gripper(num_fingers=2, wrist="fixed", extra_bodies=[box.link()])
    table = GroundPlane(height=zc - 0.025)
    s = jnp.tile(jnp.linspace(0.01, 0.1, 10), 2)
    fingers = ["finger0"] * 10 + ["finger1"] * 10
    u = jnp.array([5.0, 0.0, 5.0, 0.0])

    def phase(law, y0, steps, table_on):
        def applied(q, qd):
            probe = probe_bodies(tree, q, qd, fingers, s)
            tau = object_contact(tree, q, qd, box, law, probe, at_surface=True)[0]
            if table_on:
                tau = tau + surface_contact(table, law, probe_object(tree, q, qd, box))[0]
            return tree.generalized_force(q, u, tau)

        step = lambda y, _: (sg.sim.trapezoid_predictor_corrector_step(tree, y, applied, DT),) * 2  # noqa: E731
        return jax.lax.scan(step, y0, None, length=steps)

    @jax.jit
    def run(law):
        y0 = tree.pack_state(tree.neutral_configuration(jnp.float64), jnp.zeros(tree.num_dofs))
        y1 = phase(law, y0, int(0.3 / DT), True)[0]
        ys = phase(law, y1, int(0.2 / DT), False)[1]
        height = lambda y: tree.forward_kinematics(y[: tree.num_positions], 0.0, body="box")[2, 3]  # noqa: E731
        return jax.vmap(height)(ys[::50]) - height(y1)

    return run


def test_soft_gripper_holds_a_box_inside_the_friction_cone_and_drops_it_outside():
    run = _soft_grasp()
    held = np.asarray(run(ContactLaw(3e3, damping=10.0, friction=1.0, slip_velocity=2e-3)))
    dropped = np.asarray(run(ContactLaw(3e3, damping=10.0, friction=0.1, slip_velocity=2e-3)))
    # mu = 1: the fingertips' friction (about 1.1 N) exceeds the weight (0.35 N): the box
    # only creeps at the regularised law's slip speed, of order eps = 2 mm/s
    assert np.abs(held).max() < 1e-3 and abs(held[-1] - held[-5]) / 0.04 < 2e-3
    assert dropped[-1] < -0.02  # mu = 0.1: it falls out of the grasp
