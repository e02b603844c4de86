"""Layer 9: kinematic planning — PCC kinematics against the closed form, the tendon-length
map against the geometry of the tendon path, PCC against the PCS model (cross-model), and
batched inverse kinematics: round trips, obstacles, bad targets, PCS models."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sorogym.models import PCS, RodParams
from sorogym.planning import (
    NOT_REACHED,
    SUCCESS,
    TARGET_IN_OBSTACLE,
    Boxes,
    Obstacles,
    PCCRobot,
    PCSPlanningModel,
    Spheres,
    levenberg_marquardt,
    make_ik_solver,
)


def _rot_z(a):
    return np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])


def _rot_y(a):
    return np.array([[np.cos(a), 0, np.sin(a)], [0, 1, 0], [-np.sin(a), 0, np.cos(a)]])


def _paper_segment(theta, phi, L):
    """CR-Solver's eqs. 1-3, written out (straight case separately)."""
    T = np.eye(4)
    T[:3, :3] = _rot_z(phi) @ _rot_y(theta) @ _rot_z(-phi)
    if theta == 0.0:
        T[:3, 3] = [0.0, 0.0, L]
    else:
        r = L / theta
        T[:3, 3] = r * np.array([np.cos(phi) * (1 - np.cos(theta)), np.sin(phi) * (1 - np.cos(theta)), np.sin(theta)])
    return T


@pytest.mark.parametrize("extensible", [False, True])
def test_pcc_pose_matches_the_closed_form(extensible):
    robot = PCCRobot(4, length=[1.0, 0.8, 1.2, 0.5], extensible=extensible)
    qs = np.array(robot.sample(jax.random.PRNGKey(0), 20, jnp.float64))
    qs[0, :: robot.vars_per_segment] = 0.0  # straight segments
    qs[1, :: robot.vars_per_segment] = 1e-4  # nearly straight (the closed form cancels below)
    end_pose = jax.jit(lambda q: robot.end_pose(q))
    for q in qs:
        theta, phi, L = map(np.asarray, robot.segment_parameters(jnp.asarray(q)))
        T = np.eye(4)
        for i in range(4):
            T = T @ _paper_segment(theta[i], phi[i], L[i])
        np.testing.assert_allclose(end_pose(jnp.asarray(q)), T, atol=1e-11)
    points = np.asarray(jax.jit(lambda q: robot.backbone_points(q))(jnp.asarray(qs[2])))
    assert points.shape == (40, 3)
    np.testing.assert_allclose(points[-1], np.asarray(end_pose(jnp.asarray(qs[2])))[:3, 3], atol=1e-12)
    # finite gradients through straight segments
    g = jax.jit(jax.jacfwd(lambda q: robot.end_pose(q)[:3, 3]))(jnp.asarray(qs[0]))
    assert np.all(np.isfinite(g))


def test_tendon_lengths_match_the_tendon_paths():
    """Eq. 4 against the polyline length of the tendon path (backbone point + r_c times the
    cross-section direction at angle alpha), integrated finely along one segment."""
    robot = PCCRobot(1, length=0.3, radius=0.02, tendons_per_segment=4)
    for q in np.asarray(robot.sample(jax.random.PRNGKey(1), 5, jnp.float64)):
        theta, phi, L = (float(v[0]) for v in robot.segment_parameters(jnp.asarray(q)))
        s = np.linspace(0.0, 1.0, 4001)
        frames = [_paper_segment(theta * f, phi, L * f) for f in s]
        for j, alpha in enumerate(np.asarray(robot.tendon_angles())):
            offset = 0.02 * np.array([np.cos(alpha), np.sin(alpha), 0.0])
            path = np.stack([T[:3, :3] @ offset + T[:3, 3] for T in frames])
            length = np.sum(np.linalg.norm(np.diff(path, axis=0), axis=1))
            assert abs(length - float(robot.segment_tendon_lengths(jnp.asarray(q))[0, j])) < 1e-7


@pytest.mark.parametrize("extensible", [False, True])
def test_pcc_equals_the_pcs_model(extensible):
    """A PCC segment (theta, phi, L) is the constant strain kappa = R_b^T theta a / L0,
    elongation L / L0 - 1 of an upright PCS segment (R_b: its base rotation, a = (-sin phi,
    cos phi, 0)); the frames agree up to the fixed change of body axes (PCS backbone x, PCC z)."""
    L0 = np.array([0.2, 0.15, 0.25])
    robot = PCCRobot(3, length=L0, radius=0.01, extensible=extensible)
    params = RodParams.create(
        length=L0, radius=0.01, density=1000.0, young_modulus=1e6, mounting="upright", dtype=jnp.float64
    )
    model = PCS(params)
    Rb = np.asarray(params.base_rotation)
    C = np.eye(4)
    C[:3, :3] = Rb.T
    pcs_pose = jax.jit(lambda strain: model.forward_kinematics(strain, float(L0.sum())))
    pcc_pose = jax.jit(lambda q: robot.end_pose(q))
    for q in np.asarray(robot.sample(jax.random.PRNGKey(2), 10, jnp.float64)):
        theta, phi, L = map(np.asarray, robot.segment_parameters(jnp.asarray(q)))
        axis = np.stack([-np.sin(phi), np.cos(phi), np.zeros(3)], -1)
        kappa = (axis * (theta / L0)[:, None]) @ Rb  # rows: R_b^T (theta a / L0)
        strain = np.concatenate([kappa, (L / L0 - 1.0)[:, None], np.zeros((3, 2))], axis=1)
        T_pcs = np.asarray(pcs_pose(jnp.asarray(strain.reshape(-1))))
        np.testing.assert_allclose(T_pcs @ C, np.asarray(pcc_pose(jnp.asarray(q))), atol=1e-12)


def test_levenberg_marquardt_never_increases_the_cost():
    robot = PCCRobot(2, length=0.5)
    target = robot.end_pose(jnp.array([1.0, 2.0, 0.5, 4.0]))
    from sorogym.lie import se3

    residual = lambda q: se3.log(se3.inverse(robot.end_pose(q)) @ target)  # noqa: E731
    run = jax.jit(lambda q: levenberg_marquardt(residual, robot.project, q, 3))
    for start in (jnp.array([0.1, 0.1, 0.1, 0.1]), jnp.array([0.8, 2.3, 0.7, 3.8])):
        costs, q = [], start
        for _ in range(8):
            q, cost = run(q)
            costs.append(float(cost))
        assert all(b <= a for a, b in zip(costs, costs[1:]))
    assert costs[-1] < 1e-20  # from near the solution: quadratic convergence


# -- inverse kinematics --------------------------------------------------------------------

SMALL = {"num_seeds": 32, "num_best": 4, "coarse_iterations": 20, "fine_iterations": 60}


def test_ik_round_trip_extensible_four_segments():
    robot = PCCRobot(4, length=1.0, radius=0.1, extensible=True)
    targets = jax.vmap(robot.end_pose)(robot.sample(jax.random.PRNGKey(3), 24, jnp.float64))
    result = make_ik_solver(robot, tolerance=1e-4, **SMALL)(targets, jax.random.PRNGKey(4))
    assert np.all(np.asarray(result.status) == SUCCESS), result.status_names()
    reached = jax.vmap(robot.end_pose)(result.q)
    assert np.max(np.abs(np.asarray(reached - targets))) < 1e-4
    assert np.all(jax.vmap(robot.in_bounds)(result.q))


def test_ik_with_obstacles_and_bad_targets():
    """Collision-free reachable targets are solved without penetration; a target beyond
    reach and one inside a sphere get their status, with finite outputs."""
    robot = PCCRobot(3, length=1.0, radius=0.1)
    spheres = Spheres.lattice(shape=(2, 2, 2), spacing=(1.0, 1.0, 1.0), radius=0.15, origin=(0.0, 0.0, 1.5))
    qs = robot.sample(jax.random.PRNGKey(5), 400, jnp.float64)
    clear = jax.vmap(lambda q: jnp.min(spheres.clearance(robot.backbone_points(q), robot.radius)))(qs)
    free = qs[np.asarray(clear) > 0.02][:20]
    assert free.shape[0] == 20
    targets = jax.vmap(robot.end_pose)(free)
    far = jnp.eye(4).at[:3, 3].set(jnp.array([0.0, 0.0, 5.0]))
    blocked = jnp.eye(4).at[:3, 3].set(spheres.centers[3])
    targets = jnp.concatenate([targets, far[None], blocked[None]])
    solve = make_ik_solver(robot, obstacles=spheres, margin=0.01, **SMALL)
    result = solve(targets, jax.random.PRNGKey(6))
    status = np.asarray(result.status)
    assert np.mean(status[:20] == SUCCESS) >= 0.95, result.status_names()
    solved = status[:20] == SUCCESS
    assert np.all(np.asarray(result.clearance)[:20][solved] >= 0.0)
    assert np.all(np.asarray(result.error)[:20][solved] < 1e-2)
    assert status[20] == NOT_REACHED and status[21] == TARGET_IN_OBSTACLE
    for field in (result.q, result.error, result.position_error, result.clearance):
        assert np.all(np.isfinite(np.asarray(field)))


def _random_rotation(rng):
    Q, R = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q * np.sign(np.diag(R))
    return Q if np.linalg.det(Q) > 0 else -Q


def test_box_clearance_is_the_signed_distance():
    """Outside: the distance to the nearest point of the box, from scipy's bounded least
    squares over the box's points; inside: minus the distance to the nearest face plane.
    Gradients are finite everywhere, including inside and on the box's axes."""
    from scipy.optimize import lsq_linear

    rng = np.random.default_rng(0)
    R = np.stack([_random_rotation(rng) for _ in range(2)])
    boxes = Boxes([[0.1, -0.2, 0.3], [-0.5, 0.4, 0.0]], [[0.2, 0.1, 0.3], [0.05, 0.4, 0.1]], R)
    points = rng.uniform(-1.0, 1.0, (200, 3))
    points[:4] = [[0.1, -0.2, 0.3], [0.1, -0.2, 0.3], [-0.5, 0.4, 0.0], [-0.5, 0.41, 0.0]]  # centres and near
    c = np.asarray(jax.jit(lambda p: boxes.clearance(p, 0.01))(jnp.asarray(points)))
    for b in range(2):
        center, half = np.asarray(boxes.centers[b]), np.asarray(boxes.half_extents[b])
        for p, value in zip(points, c[:, b]):
            local = R[b].T @ (p - center)
            if np.all(np.abs(local) <= half):
                expected = -np.min(half - np.abs(local))
            else:
                fit = lsq_linear(R[b], p - center, bounds=(-half, half), lsmr_tol="auto", tol=1e-14)
                expected = np.linalg.norm(R[b] @ fit.x - (p - center))
            assert value == pytest.approx(expected - 0.01, abs=1e-9)
    assert np.sum(c[:, 0] < -0.01) > 0 and np.sum(c[:, 0] > 0) > 0  # both sides exercised
    grads = jax.jit(jax.vmap(jax.grad(lambda p: jnp.min(boxes.clearance(p[None])))))(jnp.asarray(points))
    assert np.all(np.isfinite(np.asarray(grads)))
    both = Obstacles(boxes, Spheres([[0.0, 0.0, 2.0]], 0.1))
    assert both.count == 3 and both.clearance(jnp.asarray(points)).shape == (200, 3)
    with pytest.raises(ValueError, match="rotations"):
        Boxes([[0.0, 0.0, 0.0]], 0.1, np.diag([1.0, 1.0, -1.0]))
    with pytest.raises(ValueError, match="half_extents"):
        Boxes([[0.0, 0.0, 0.0]], [0.1, 0.0, 0.1])


def test_ik_around_a_box_wall():
    """Targets beside a thin wall (a box) and a sphere: solutions do not penetrate either;
    a target inside the wall is reported as such."""
    robot = PCCRobot(3, length=1.0, radius=0.1)
    wall = Boxes([[0.9, 0.0, 1.6]], [0.05, 0.8, 0.6])  # axis-aligned
    scene = Obstacles(wall, Spheres([[-0.8, 0.0, 2.0]], 0.2))
    qs = robot.sample(jax.random.PRNGKey(11), 400, jnp.float64)
    clear = jax.vmap(lambda q: jnp.min(scene.clearance(robot.backbone_points(q), robot.radius)))(qs)
    targets = jax.vmap(robot.end_pose)(qs[np.asarray(clear) > 0.02][:12])
    inside = jnp.eye(4).at[:3, 3].set(jnp.array([0.9, 0.3, 1.6]))
    targets = jnp.concatenate([targets, inside[None]])
    result = make_ik_solver(robot, obstacles=scene, margin=0.01, **SMALL)(targets, jax.random.PRNGKey(12))
    status = np.asarray(result.status)
    assert np.mean(status[:12] == SUCCESS) >= 11 / 12, result.status_names()
    assert np.all(np.asarray(result.clearance)[:12][status[:12] == SUCCESS] >= 0.0)
    assert status[12] == TARGET_IN_OBSTACLE


def test_ik_on_a_pcs_model_position_targets():
    """The same solver on a simulation model's strain coordinates (bending and elongation
    of one segment; kept small: compiling the PCS kinematics dominates), to tip positions
    reached by random bounded strains."""
    params = RodParams.create(
        length=0.12, radius=0.02, density=1070.0, young_modulus=2.5e5, mounting="hanging", dtype=jnp.float64
    )
    model = PCS(params, active_strains=["ky", "kz", "sx"])
    lower = np.array([-15.0, -15.0, -0.1])
    planner = PCSPlanningModel(model, lower, -lower, points=5)
    goals = jax.vmap(lambda q: planner.end_pose(q)[:3, 3])(planner.sample(jax.random.PRNGKey(7), 16))
    result = make_ik_solver(planner, position_only=True, tolerance=1e-5, **SMALL)(goals, jax.random.PRNGKey(8))
    assert np.all(np.asarray(result.status) == SUCCESS), result.status_names()
    tips = jax.vmap(lambda q: planner.end_pose(q)[:3, 3])(result.q)
    assert np.max(np.abs(np.asarray(tips - goals))) < 1e-5


def test_bad_planning_inputs_are_clear_errors():
    with pytest.raises(ValueError, match="num_segments"):
        PCCRobot(0)
    with pytest.raises(ValueError, match="length"):
        PCCRobot(2, length=[1.0, -1.0])
    with pytest.raises(ValueError, match="length_range"):
        PCCRobot(2, extensible=True, length_range=(1.2, 1.5))
    with pytest.raises(ValueError, match="radii"):
        Spheres([[0, 0, 0]], -1.0)
    with pytest.raises(ValueError, match="num_best"):
        make_ik_solver(PCCRobot(2), num_seeds=4, num_best=8)
    params = RodParams.create(length=0.1, radius=0.01, density=1000.0, young_modulus=1e6, planar=True)
    from sorogym.models import PlanarPCS

    with pytest.raises(ValueError, match="spatial"):
        PCSPlanningModel(PlanarPCS(params), -1.0, 1.0)
    with pytest.raises(ValueError, match="lower"):
        PCSPlanningModel(PCS(RodParams.create(length=0.1, radius=0.01, density=1000.0, young_modulus=1e6)), 1.0, -1.0)
