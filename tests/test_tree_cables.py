"""Cables through via points on a body tree (:class:`sorogym.models.Cable`): the actuation
columns are ``-dL/dq`` by AD, the tensions pull only, the inputs sit between the rods' and
the motors', a tension's generalized force is the via points' span forces mapped by their
Jacobians, and bad cables name the cable and the field at construction. The named
cable-driven arm is in ``test_tree_robots.py`` (contract identities, statics)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sorogym import robots
from sorogym.models import BodyTree, Cable, Joint, RigidLink, RodBody
from sorogym.models._tree_cables import cable_terms, via_points

ARM = robots.TendonArm(segment_lengths=(0.05, 0.05), radius=0.006, tendon_angles_deg=(90.0, 270.0))


def _mixed_tree(cables=None):
    """A fixed slider link carrying a tendon arm with a rigid plate at its tip: rod inputs
    (two tendons), one cable from the world through the slider and the arm's middle to the
    plate, one motor on the slider."""
    slider = RigidLink("slider", 0.2, inertia=np.eye(3) * 1e-3, joint=Joint.prismatic((0.0, 1.0, 0.0)))
    arm = RodBody("arm", ARM.pcs(), parent="slider")
    plate = RigidLink("plate", 0.01, inertia=np.eye(3) * 1e-5, parent="arm", at=0.1)
    if cables is None:
        cables = [
            Cable(
                [
                    (None, None, (0.0, 0.02, -0.05)),
                    ("slider", None, (0.0, 0.02, 0.0)),
                    ("arm", 0.05, (0.0, 0.0, 0.012)),
                    ("plate", None, (0.0, 0.0, 0.012)),
                ],
                name="flexor",
            )
        ]
    return BodyTree([slider, arm, plate], motors=[("slider", 0)], cables=cables)


@pytest.fixture(scope="module")
def tree():
    return _mixed_tree()


def _random_q(tree, seed=0, scale=3.0):
    rng = np.random.default_rng(seed)
    return tree.neutral_configuration() + scale * jnp.asarray(rng.uniform(-1, 1, tree.num_positions)) * 0.1


def test_columns_are_minus_the_length_gradient_and_inputs_are_ordered(tree):
    m_rod = ARM.num_tendons
    assert tree.actuation.num_inputs == m_rod + 1 + 1
    assert tree.actuation.cable_inputs == (m_rod,)
    assert tree.actuation.motor_inputs == (m_rod + 1,)
    plain = _mixed_tree(cables=())

    @jax.jit
    @jax.vmap
    def columns(q):
        A = tree.actuation.matrix(tree.actuation_context(q))
        dL = jax.jacfwd(lambda q: cable_terms(tree, tree.cables, q)[0])(q)  # vector-space q: dq = dv
        return A, dL, plain.actuation.matrix(plain.actuation_context(q))

    A, dL, A_plain = columns(jnp.stack([_random_q(tree, seed) for seed in range(3)]))
    np.testing.assert_allclose(A[:, :, m_rod], -dL[:, 0], atol=1e-12)
    assert np.all(A[:, tree.actuation.motor_dofs[0], m_rod + 1] == 1.0)
    # the tendons' and the motor's columns do not change by adding the cable
    np.testing.assert_allclose(A[:, :, :m_rod], A_plain[:, :, :m_rod], atol=1e-12)
    np.testing.assert_allclose(A[:, :, m_rod + 1], A_plain[:, :, m_rod], atol=1e-12)


def test_tension_is_the_span_forces_on_the_via_points(tree):
    """tau = sum_i J_i^T f_i with f_i = T (e_next - e_prev) at every via point: each span
    pulls its two ends together (equal and opposite forces between adjacent bodies)."""
    q = _random_q(tree, 3)
    T = 2.5
    u = jnp.zeros(tree.actuation.num_inputs).at[tree.actuation.cable_inputs[0]].set(T)
    tau, (x, J) = jax.jit(
        lambda q, u: (tree.actuation.force(tree.actuation_context(q), u), via_points(tree, tree.cables, q))
    )(q, u)
    e = np.diff(np.asarray(x), axis=0)
    e /= np.linalg.norm(e, axis=1, keepdims=True)
    f = np.zeros_like(np.asarray(x))
    f[:-1] += T * e
    f[1:] -= T * e
    np.testing.assert_allclose(tau, np.einsum("pi,pin->n", f, np.asarray(J)), atol=1e-12)
    assert np.allclose(J[0], 0.0)  # the world anchor does not move


def test_cables_pull_only_and_report_their_lengths(tree):
    ci = tree.actuation.cable_inputs[0]
    u = jnp.zeros(tree.actuation.num_inputs).at[ci].set(-3.0)
    assert tree.actuation.effort(u)[ci] == 0.0
    context = jax.jit(lambda q: (tree.actuation_context(q), via_points(tree, tree.cables, q)[0]))
    ctx0, x = context(tree.neutral_configuration())
    assert ctx0.cable_contraction[0] == pytest.approx(0.0, abs=1e-15)
    expected = np.sum(np.linalg.norm(np.diff(np.asarray(x), axis=0), axis=1))
    assert tree.cables.rest_lengths[0] == pytest.approx(expected)
    ctx, _ = context(_random_q(tree, 4))
    np.testing.assert_allclose(ctx.cable_contraction, expected - ctx.cable_lengths, atol=1e-14)
    with pytest.raises(TypeError, match="motors"):
        tree.actuation.lengths(ctx)


def test_with_params_keeps_the_cables(tree):
    other = tree.with_params(tree.params)
    assert other.cables == tree.cables
    assert other.actuation.cable_inputs == tree.actuation.cable_inputs


W0 = (None, None, (0, 0, 0))  # a world anchor at the origin


@pytest.mark.parametrize(
    ("cables", "match"),
    [
        ([Cable([W0], name="c")], "cable 'c': via: needs at least two"),
        (
            [Cable([W0, ("hand", None, (0, 0, 0))], name="c")],
            "cable 'c': via\\[1\\]: no body named 'hand'",
        ),
        (
            [Cable([W0, ("arm", 0.5, (0, 0, 0))], name="c")],
            "cable 'c': via\\[1\\]: at 0.5 outside the rod",
        ),
        (
            [Cable([W0, ("arm", 0.0, (0, 0))], name="c")],
            "cable 'c': via\\[1\\]: point must be a finite \\(3,\\)",
        ),
        (
            [Cable([W0, (None, None, (0, 0, 0))], name="c")],
            "cable 'c': via\\[1\\]: repeats via point 0",
        ),
        (
            [Cable([W0, ("slider", None, (0, 0, 0))], name="c")],
            "cable 'c': via: a span has zero length",
        ),
        (
            [Cable([W0, ("arm",)], name="c")],
            "cable 'c': via\\[1\\]: expected \\(body, at, point\\)",
        ),
        (
            [Cable([(None, None, (0, 0, 1)), ("arm", None, (0, 0, 0))], name="c")] * 2,
            "cable 'c': name: duplicate",
        ),
        (["not a cable"], "cables\\[0\\]: expected a Cable"),
    ],
)
def test_bad_cables_name_the_cable_and_field(cables, match):
    with pytest.raises(ValueError, match=match):
        _mixed_tree(cables)


def test_cable_arm_bends_towards_the_pulled_cable():
    """At rest, cable 0 (plate vertices at local (y, z) = (0, R)) pushes every section's
    bending towards local +z (a negative generalized force on ``ky``, none on ``kz`` or
    torsion) and shortens it; slack cables exert nothing; the dynamics stay finite."""
    tree = robots.cable_driven_arm(num_sections=2, bending_order=0, gravity=(0.0, 0.0, 0.0))
    q0 = tree.neutral_configuration()
    force = jax.jit(lambda u: tree.generalized_force(q0, u))
    tau = np.asarray(force(jnp.asarray([1.0, 0.0, 0.0])))
    np.testing.assert_allclose(np.asarray(force(jnp.asarray([0.0, -1.0, -2.0]))), 0.0, atol=1e-15)
    R = robots.CABLE_ARM_PLATE["circumradius"]
    for k in range(2):
        _, v_idx = tree.coordinate_slices(f"section{k}")
        kx, ky, kz, sx = tau[v_idx]  # torsion, bending (order 0), elongation
        length = float(tree.rod(f"section{k}").total_length)
        # a straight cable parallel to the backbone: the moment T R over the section's length
        np.testing.assert_allclose(ky, -R * length, rtol=1e-12)
        assert abs(kz) < 1e-15 and abs(kx) < 1e-15
        np.testing.assert_allclose(sx, -length, rtol=1e-12)  # the pull T shortens it


@pytest.fixture(scope="module")
def finger():
    """The Table 9 finger with a curled, a straight and a curled joint, no gravity."""
    return robots.cable_driven_finger((2, 1, 2), gravity=(0.0, 0.0, 0.0), dtype=jnp.float64)


def test_finger_joints_rest_on_their_b_spline_natural_shapes(finger):
    """At rest each soft joint follows its five-point cubic B-spline: its end frame turns by
    the spline's end tangent exactly (the links' rest curvatures carry each span's exact
    turn) and its centreline stays within 0.3 % of the joint's length of the curve (four
    links of constant rest curvature); a bone starts where its joint ends."""
    from scipy.interpolate import BSpline

    q0 = finger.neutral_configuration()
    poses = np.asarray(jax.jit(lambda q: finger.body_poses(q))(q0))
    control = np.asarray(robots.FINGER_JOINT_SHAPES[2])
    spline = BSpline(np.r_[0, 0, 0, 0, 0.5, 1, 1, 1, 1], control, 3)
    u = np.linspace(0.0, 1.0, 20001)
    curve = spline(u)
    arc = np.r_[0.0, np.cumsum(np.linalg.norm(np.diff(curve, axis=0), axis=1))]
    s = np.linspace(0.0, arc[-1], 41)
    points = np.asarray(jax.jit(lambda q: finger.backbone_positions(q, s, body="joint0"))(q0))
    expected = np.stack([np.interp(s, arc, curve[:, 0]), np.interp(s, arc, curve[:, 1])], axis=-1)
    assert np.max(np.linalg.norm(points[:, [0, 2]] - expected, axis=1)) < 3e-3 * arc[-1]
    assert np.max(np.abs(points[:, 1])) < 1e-15
    end = spline.derivative()(1.0)
    bone0 = poses[finger.body_index("bone0")]
    np.testing.assert_allclose(bone0[[0, 2], 0], end / np.linalg.norm(end), atol=1e-12)
    np.testing.assert_allclose(bone0[:3, 3], points[-1], atol=1e-8)  # node frames vs a partial Magnus step


def test_finger_small_tension_bends_each_joint_by_its_cable_moment(finger):
    """Linear response ``K dq = tau(u)`` at rest (no gravity): a cable's straight chord
    across joint ``k`` loads every point of it with the moment ``T h(s)``, ``h`` the
    distance from the point to the chord, so the tip turns by
    ``sum_k int T h(s) / (E I) ds`` with ``I = w t^3 / 12`` (exact for the rotation: the
    constant is in every link's basis); on a straight joint ``h`` is the cable offset.
    The flexor turns the finger towards the palm, the extensor back."""
    q0 = finger.neutral_configuration()
    x, w = np.polynomial.legendre.leggauss(12)
    lengths = [float(finger.rod(f"joint{k}").total_length) for k in range(3)]
    links = [finger.rod(f"joint{k}").num_segments for k in range(3)]
    arcs = [np.concatenate([(i + 0.5 * (x + 1.0)) * L / n for i in range(n)]) for L, n in zip(lengths, links)]
    # one program (tree kinematics run eagerly dispatch thousands of single operations)
    K, tau_f, tau_e, J, poses, joint_points = jax.jit(
        lambda q: (
            finger.stiffness_matrix(),
            finger.generalized_force(q, jnp.asarray([1.0, 0.0])),
            finger.generalized_force(q, jnp.asarray([0.0, 1.0])),
            finger.jacobian(q),
            finger.body_poses(q),
            [finger.backbone_positions(q, s, body=f"joint{k}") for k, s in enumerate(arcs)],
        )
    )(q0)
    joint = robots.FINGER_JOINT
    EI = joint["young_modulus"] * joint["width"] * joint["thickness"] ** 3 / 12.0
    d = robots.FINGER_CABLE_OFFSET
    poses = np.asarray(poses)
    predicted = {-1.0: 0.0, 1.0: 0.0}
    for k in range(3):
        L = lengths[k]
        ws = np.tile(0.5 * w * L / links[k], links[k])
        points = np.asarray(joint_points[k])
        parent = np.eye(4) if k == 0 else poses[finger.body_index(f"bone{k - 1}")]
        child = poses[finger.body_index(f"bone{k}")]
        length = 0.0 if k == 0 else robots.FINGER_BONE_LENGTHS[k - 1]
        for side in (-1.0, 1.0):
            a = (parent @ np.r_[length, 0.0, side * d, 1.0])[:3]
            b = (child @ np.r_[0.0, 0.0, side * d, 1.0])[:3]
            e = (b - a) / np.linalg.norm(b - a)
            r = points - a
            h = r[:, 2] * e[0] - r[:, 0] * e[2]  # moment arm: positive above the chord (it flexes)
            predicted[side] += float(ws @ h) / EI
            if k == 1:  # the straight joint: h is the offset itself
                np.testing.assert_allclose(float(ws @ h), -side * d * L, rtol=1e-12)
    for side, tau in ((-1.0, tau_f), (1.0, tau_e)):
        turn = float((np.asarray(J) @ np.linalg.solve(np.asarray(K), np.asarray(tau)))[1])
        np.testing.assert_allclose(turn, predicted[side], rtol=1e-9)
    assert predicted[-1.0] > 0 > predicted[1.0]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(joint_shapes=(1, 3), bone_lengths=(0.04, 0.02)), r"joint_shapes\[1\]"),
        (dict(joint_shapes=(((0, 0), (1, 0), (2, 0), (3, 0)),), bone_lengths=(0.04,)), "joint_shapes"),
        (dict(bone_lengths=(0.04, 0.02)), "bone_lengths"),
        (dict(cable_offset=0.007), "cable_offset"),
        (dict(links_per_joint=0), "links_per_joint"),
        (dict(thickness=0.0), "thickness"),
    ],
)
def test_bad_finger_settings_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        robots.cable_driven_finger(**kwargs)
