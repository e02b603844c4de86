"""Layer 9: trajectory-level planning — the block-banded normal equations against AD of the
explicitly stacked residual, path following of a reachable path, roadmap trajectory
planning around an obstacle the straight line hits, and the static inverse problem of a
tendon-driven PCS model (recovering the tensions of known equilibria)."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sorogym.control import equilibrium_from_rest
from sorogym.planning import (
    PCCRobot,
    Spheres,
    TendonStaticsModel,
    TrajectoryCosts,
    build_roadmap,
    levenberg_marquardt,
    linear_path,
    make_path_follower,
    make_trajectory_refiner,
    plan_trajectory,
    planar_shape,
    reference_path,
)
from sorogym.planning._trajectory import (
    _difference_terms,
    _differences,
    _features,
    _hinge,
    _map_targets,
    _Problem,
    normal_equations,
    trajectory_cost,
)


def _stacked_residual(p, T):
    """The residual of the trajectory problem written out as one vector."""

    def residual(flat):
        Q = flat.reshape(T, -1)
        feats = _map_targets(lambda q, t: _features(p, q, t), Q, p.targets)
        parts = [feats[0].ravel()]
        for index, stencil, weight, limit in _difference_terms(p):
            r = _differences(feats[index], stencil)
            parts.append(jnp.sqrt(weight) * (r if limit is None else _hinge(r, limit)).ravel())
        return jnp.concatenate(parts)

    return residual


@pytest.mark.parametrize("targets", ["poses", "none"])
def test_normal_equations_match_ad_of_the_stacked_residual(targets):
    robot = PCCRobot(3, 1.0, 0.1)
    obstacles = Spheres([[0.5, 0.0, 1.5], [-0.5, 0.3, 2.0]], [0.4, 0.5])
    T = 6
    Q = robot.sample(jax.random.PRNGKey(1), T, jnp.float64)
    poses = jax.jit(jax.vmap(lambda q: robot.end_pose(q)))(robot.sample(jax.random.PRNGKey(2), T, jnp.float64))
    tgt = {"poses": poses, "positions": poses[:, :3, 3], "none": None}[targets]
    # every term on, with limits low enough that some hinges are active and some are not
    costs = TrajectoryCosts(
        dt=0.1,
        tracking=2.0,
        path_length=0.3,
        configuration_smoothness=0.2,
        tendon_velocity=0.01,
        tendon_acceleration=0.001,
        max_tendon_speed=1.0,
        max_tendon_acceleration=20.0,
        limit_weight=10.0,
        margin=0.05,
    )
    p = _Problem(robot, obstacles, tgt, targets == "positions", costs)
    residual = _stacked_residual(p, T)
    r, J = jax.jit(lambda f: (residual(f), jax.jacfwd(residual)(f)))(Q.reshape(-1))
    cost, g, A = jax.jit(lambda Q_: normal_equations(p, Q_))(Q)
    np.testing.assert_allclose(cost, 0.5 * r @ r, rtol=1e-12)
    np.testing.assert_allclose(jax.jit(lambda Q_: trajectory_cost(p, Q_))(Q), cost, rtol=1e-12)
    scale = float(jnp.max(jnp.abs(J.T @ J)))
    np.testing.assert_allclose(g, J.T @ r, atol=1e-12 * scale)
    np.testing.assert_allclose(A, J.T @ J, atol=1e-12 * scale)
    assert np.count_nonzero(np.abs(np.asarray(A)) > 0) < A.size  # banded, not dense


def test_trajectory_costs_reject_bad_values():
    with pytest.raises(ValueError, match="dt"):
        TrajectoryCosts(dt=0.0)
    with pytest.raises(ValueError, match="tendon_velocity"):
        TrajectoryCosts(tendon_velocity=-1.0)
    with pytest.raises(ValueError, match="max_tendon_speed"):
        TrajectoryCosts(max_tendon_speed=0.0)
    with pytest.raises(ValueError, match="kind"):
        planar_shape("circle")
    with pytest.raises(ValueError, match="frame"):
        reference_path("square", np.eye(3), 0.1)


def test_reference_paths_are_evenly_spaced_closed_shapes():
    for kind in ("square", "sinusoid", "letter"):
        pts = planar_shape(kind, 150)
        assert pts.shape == (150, 2) and np.all(np.abs(pts) <= 0.5 + 1e-12)
        steps = np.linalg.norm(np.diff(pts, axis=0), axis=1)
        assert steps.max() < 1.05 * steps.mean()  # arc-length spacing (chords shorten at corners)
    square = planar_shape("square", 101)
    np.testing.assert_allclose(square[0], square[-1], atol=1e-12)
    frame = np.eye(4)
    frame[:3, 3] = [0.1, 0.2, 2.0]
    poses = reference_path("letter", frame, 0.2, 30)
    np.testing.assert_allclose(poses[:, :3, :3], np.broadcast_to(np.eye(3), (30, 3, 3)))
    np.testing.assert_allclose(poses[:, 2, 3], 2.0)


def test_path_following_tracks_a_reachable_pose_path_smoothly():
    robot = PCCRobot(3, 1.0, 0.1)
    # a reachable reference: the end poses along a smooth configuration path
    s = jnp.linspace(0.0, 1.0, 24)[:, None]
    q_a = jnp.array([0.8, 0.5, 1.2, 2.5, 0.6, 1.0])
    q_b = jnp.array([1.0, 0.9, 0.9, 2.9, 0.8, 0.6])
    end_poses = jax.jit(jax.vmap(lambda q: robot.end_pose(q)))
    refs = end_poses((1 - s) * q_a + s * q_b + 0.05 * jnp.sin(2 * jnp.pi * s))
    follow = make_path_follower(robot, num_seeds=16, num_best=2, refine_iterations=10)
    result = follow(refs, jax.random.PRNGKey(0))
    assert result.q.shape == (24, 6)
    assert float(jnp.max(result.position_error)) < 1e-4
    assert float(jnp.max(result.tracking_error)) < 1e-4
    poses = end_poses(result.q)
    np.testing.assert_allclose(poses[:, :3, 3], refs[:, :3, 3], atol=1e-4)
    # continuous: no azimuth wraps, tendon speeds of the size of the reference's
    assert float(jnp.max(jnp.abs(jnp.diff(result.q, axis=0)))) < 0.5
    assert np.isfinite(float(result.max_tendon_speed)) and float(result.max_tendon_speed) < 1.0
    assert np.isinf(float(result.clearance))


def test_trajectory_planning_goes_around_an_obstacle_the_straight_line_hits():
    robot = PCCRobot(2, 1.0, 0.1)
    obstacles = Spheres([[0.0, 0.0, 2.0]], [0.35])  # on the straight robot's tip
    start = jnp.array([1.2, 0.0, 0.4, 0.0])
    goal = jnp.array([1.2, np.pi, 0.4, np.pi])
    line = linear_path(robot, start, goal, 33)  # passes through the straight configuration
    clear = jax.jit(jax.vmap(lambda q: jnp.min(obstacles.clearance(robot.backbone_points(q), robot.radius))))(line)
    assert float(jnp.min(clear)) < 0.0
    costs = TrajectoryCosts(dt=0.1, tracking=0.0, path_length=1.0, max_tendon_speed=0.3, margin=0.02)
    refiner = make_trajectory_refiner(robot, obstacles, costs, iterations=40)
    roadmap = build_roadmap(robot, jax.random.PRNGKey(0), obstacles, num_nodes=96, k=6, margin=0.02)
    assert roadmap.nodes.shape == (96, 4) and np.isfinite(roadmap.edge_length).any()
    plan = plan_trajectory(robot, start, goal, obstacles, roadmap, horizon=32, k=6, refiner=refiner)
    assert plan.roadmap_found and plan.success
    Q = plan.trajectory.q
    assert Q.shape == (33, 4)
    np.testing.assert_allclose(Q[0], start, atol=1e-12)
    # the goal up to whole turns of the azimuths
    end_poses = jax.jit(jax.vmap(lambda q: robot.end_pose(q)))(jnp.stack([Q[-1], goal]))
    np.testing.assert_allclose(end_poses[0], end_poses[1], atol=1e-9)
    assert plan.dense_clearance >= 0.0 and float(plan.trajectory.clearance) >= 0.0
    assert float(plan.trajectory.max_tendon_speed) <= 0.3 * 1.01
    with pytest.raises(ValueError, match="collision"):
        plan_trajectory(robot, start, jnp.zeros(4), obstacles, roadmap, refiner=refiner)
    with pytest.raises(ValueError, match="shape"):
        plan_trajectory(robot, start, jnp.zeros(3), obstacles, roadmap, refiner=refiner)


def _one_segment_tendon_arm():
    from sorogym.envs.tendon_reaching import default_config
    from sorogym.robots import tendon_ring_pcs

    cfg = dataclasses.replace(
        default_config(), segment_lengths=(0.12,), tendon_angles_deg=(0.0, 120.0, 240.0), tendon_spans=(1, 1, 1)
    )
    return tendon_ring_pcs(cfg, "hanging", jnp.float64, active_strains="bending_elongation")


def test_static_inverse_recovers_the_tensions_of_known_equilibria():
    model = _one_segment_tendon_arm()  # 3 strains, 3 tendons: the tensions are unique
    statics = TendonStaticsModel(model, 0.0, 6.0)
    u_true = jax.random.uniform(jax.random.PRNGKey(3), (4, 3), jnp.float64, 0.0, 4.0).at[:, 0].set(0.0)

    eps = 1e-6
    # one compiled batch of 7 continuations serves every equilibrium below (compile time)
    equilibria = jax.jit(jax.vmap(lambda u_: equilibrium_from_rest(model, u_)))
    implicit_derivative = jax.jit(jax.jacfwd(lambda u_: equilibrium_from_rest(model, u_)))

    @jax.jit
    def inverse(target):
        res = lambda z: jnp.concatenate([statics.end_pose(z)[:3, 3] - target, statics.constraint_residual(z)])  # noqa: E731
        z0 = statics.sample(jax.random.PRNGKey(1), 1)[0]
        z, cost = levenberg_marquardt(res, statics.project, z0, 60, bounds=statics.bounds())
        return statics.split(z)[1], cost

    tip = jax.jit(lambda q: model.forward_kinematics(q, model.total_length)[:3, 3])
    static_residual = jax.jit(lambda q, u: model.potential_force(q) - model.actuation_force(q, u))

    for u in u_true:
        qs = equilibria(jnp.concatenate([u[None], u + eps * jnp.eye(3), u - eps * jnp.eye(3)]))
        q = qs[0]
        assert float(jnp.linalg.norm(static_residual(q, u))) < 1e-9  # the continuation converged
        fd = ((qs[1:4] - qs[4:7]) / (2 * eps)).T
        dq = implicit_derivative(u)
        np.testing.assert_allclose(dq, fd, rtol=1e-5, atol=1e-6 * float(jnp.max(jnp.abs(fd))))
        u_found, cost = inverse(tip(q))
        q_found = equilibria(jnp.broadcast_to(u_found, (7, 3)))[0]
        assert float(cost) < 1e-12 and float(jnp.linalg.norm(tip(q_found) - tip(q))) < 1e-6
        np.testing.assert_allclose(u_found, u, atol=1e-5)


def test_static_inverse_model_rejects_bad_inputs():
    model = _one_segment_tendon_arm()
    with pytest.raises(ValueError, match="lower/upper"):
        TendonStaticsModel(model, 1.0, 0.5)
    with pytest.raises(ValueError, match="lower/upper"):
        TendonStaticsModel(model, -1.0, 1.0)
    with pytest.raises(ValueError, match="strain_limit"):
        TendonStaticsModel(model, 0.0, 1.0, strain_limit=0.0)


def test_plan_cli_follows_a_path_and_writes_its_files(tmp_path):
    import json

    from sorogym.agents.cli import main

    assert (
        main(["plan", "follow", "--path", "sinusoid", "--waypoints", "10", "--frames", "2", "--out", str(tmp_path)])
        == 0
    )
    figures = json.loads((tmp_path / "plan.json").read_text())
    assert figures["task"] == "follow" and figures["waypoints"] == 10
    assert figures["position_error_mm_max"] < 1.0  # coarse path: the smoothing costs a fraction of a mm
    assert np.load(tmp_path / "plan.npz")["q"].shape == (10, 6)
    assert (tmp_path / "plan.gif").stat().st_size > 0
    with pytest.raises(SystemExit):
        main(["plan", "follow", "--path", "circle"])


def test_random_sphere_scenes_keep_clear_of_the_base():
    scene = Spheres.random(np.random.default_rng(4), count=27, half=1.5, radii=(0.15, 0.30), base_clearance=0.3)
    centers, radii = np.asarray(scene.centers), np.asarray(scene.radii)
    assert scene.count == 27 and np.all((radii >= 0.15) & (radii <= 0.30)) and np.all(np.abs(centers) <= 1.5)
    assert np.all(np.linalg.norm(centers, axis=1) - radii > 0.3)
    with pytest.raises(ValueError, match="radii"):
        Spheres.random(np.random.default_rng(0), radii=(0.3, 0.1))
    with pytest.raises(RuntimeError, match="clear of the base"):
        Spheres.random(np.random.default_rng(0), half=0.2, base_clearance=1.0)
