"""Body trees (floating bases, branches, rigid-soft composites): the model-contract identities
by AD on a random tree with every joint kind, agreement with the serial models it generalises,
physical invariants of a free-floating tree, the state contract (retraction, projection,
quaternion sign), and bad input. The oracles (MuJoCo rigid trees, soromox's floating-base PCS)
are in ``test_tree_oracles.py``.
"""

from __future__ import annotations

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _models import GVS_BASES, random_chain_params
from _tree_checks import _rel, _terms, check_contract_identities, random_state
from scipy.spatial.transform import Rotation

import sorogym as sg


def _pose(rng, scale=0.05) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = Rotation.from_rotvec(rng.normal(size=3)).as_matrix()
    T[:3, 3] = rng.uniform(-scale, scale, 3)
    return T


def _inertia(rng, mass) -> np.ndarray:
    box = rng.uniform(0.02, 0.08, 3)
    principal = mass / 12 * np.array([box[1] ** 2 + box[2] ** 2, box[0] ** 2 + box[2] ** 2, box[0] ** 2 + box[1] ** 2])
    R = Rotation.from_rotvec(rng.normal(size=3)).as_matrix()
    return R @ np.diag(principal) @ R.T


def _rod_params(rng, N, damping=(0.0, 20.0), gravity=(0.0, 0.0, -9.81)):
    return sg.RodParams.create(
        length=rng.uniform(0.06, 0.12, N),
        radius=rng.uniform(0.006, 0.012, N),
        density=rng.uniform(900.0, 1200.0, N),
        young_modulus=rng.uniform(5e4, 5e5, N),
        poisson_ratio=0.45,
        damping=rng.uniform(*damping, N),
        gravity=gravity,
        base_rotation=Rotation.from_rotvec(rng.normal(size=3) * 0.3).as_matrix(),
        base_position=rng.uniform(-0.01, 0.01, 3),
        dtype=jnp.float64,
    )


def random_tree(seed: int = 0, floating: bool = True, damping=(0.0, 20.0), gravity=(0.3, -0.5, -9.81), gvs=True):
    """A tree with every joint kind: a (free or fixed) hub, two identical tendon-driven PCS
    arms (batched), a one-link GVS rod on a universal joint (or, without ``gvs``, a link),
    links on revolute, prismatic and spherical joints at rod abscissae and link frames, and
    two payloads."""
    rng = np.random.default_rng(seed)
    arm = sg.PCS(
        _rod_params(rng, 2, damping),
        active_strains=[("kx", "ky", "kz", "sx"), ("ky", "kz")],
        actuation=sg.Tendons(rng.uniform(-0.008, 0.008, (3, 2, 2))),
    )
    gvs_params = sg.GVSParams.from_rod(_rod_params(rng, 1, damping), np.full(1, 0.006))
    gvs_rod = sg.GVS(gvs_params, GVS_BASES["mixed"][1:])
    hub_joint = (
        sg.Joint.free(
            position=(0.1, -0.2, 0.3), quaternion=Rotation.from_rotvec([0.2, 0.1, 0.3]).as_quat(scalar_first=True)
        )
        if floating
        else sg.Joint.fixed()
    )
    bodies = [
        sg.RigidLink("hub", 0.3, rng.uniform(-0.01, 0.01, 3), _inertia(rng, 0.3), joint=hub_joint, offset=_pose(rng))
    ]
    bodies += [sg.RodBody(f"arm{k}", arm, parent="hub", offset=_pose(rng)) for k in range(2)]
    universal = sg.Joint.universal(rng.normal(size=3), (0, 1, 0), stiffness=0.2, damping=0.01, rest=0.1)

    def link(name, mass, parent, joint, at=0.0):
        com = rng.uniform(-0.02, 0.02, 3)
        return sg.RigidLink(name, mass, com, _inertia(rng, mass), parent=parent, at=at, offset=_pose(rng), joint=joint)

    if gvs:
        bodies.append(sg.RodBody("gvs", gvs_rod, parent="hub", offset=_pose(rng), joint=universal, actuated=False))
    else:
        bodies.append(link("gvs", 0.1, "hub", universal))
    hinge = sg.Joint.revolute(rng.normal(size=3), stiffness=0.3, damping=0.02, rest=-0.2)
    bodies += [
        link("hinge", 0.05, "arm1", hinge, at=0.05),
        link("slider", 0.04, "hinge", sg.Joint.prismatic(rng.normal(size=3), stiffness=5.0, damping=0.1)),
        link("ball", 0.03, "gvs", sg.Joint.spherical(), at=0.05),
    ]
    payloads = [
        sg.Payload("arm1", 0.02, at=0.07, position=(0.0, 0.01, 0.0)),
        sg.Payload("hub", 0.05, position=(0.02, 0, 0)),
    ]
    return sg.BodyTree(bodies, gravity=gravity, payloads=payloads, motors=[("hinge", 0), ("slider", 0)])


@pytest.fixture(scope="module")
def tree():
    """The random tree with a link in place of the GVS rod: GVS kernels triple the compile
    time of every function below; GVS bodies are checked against the serial GVS in
    ``test_one_branch_trees_equal_the_serial_models`` and inside a floating tree in
    ``test_gvs_body_in_a_floating_tree``."""
    return random_tree(0, gvs=False)


def test_structure_layout_and_batching(tree):
    s = tree.structure
    assert (tree.num_positions, tree.num_dofs) == (tree.num_dofs + 1 + 1, 6 + 2 * 6 + 2 + 1 + 1 + 3)
    assert tree.num_actuators == 2 * 3 + 2  # the arms' tendons, then the two motors
    rod_groups = [g for g in s.groups if g.kind == "rod"]
    assert sorted(len(g.bodies) for g in rod_groups) == [2]  # identical arms form one group
    q_idx, v_idx = tree.coordinate_slices("hub")
    assert q_idx.tolist() == list(range(7)) and v_idx.tolist() == list(range(6))
    assert tree.neutral_configuration()[3:7].tolist() == pytest.approx(
        list(Rotation.from_rotvec([0.2, 0.1, 0.3]).as_quat(scalar_first=True))
    )


@pytest.mark.parametrize("seed", [1, 2])
def test_contract_identities_by_ad(tree, seed):
    """The model-contract identities (``_tree_checks.check_contract_identities``)."""
    check_contract_identities(tree, seed)


@jax.jit
def _point(tree, q, qd, s):
    out = {}
    for body in ("slider", "ball"):  # behind a site on a PCS arm, behind a universal joint
        f = tree._point_frames(q, qd, s, body, True)
        g = ops_pose(f)
        out[body] = (
            g,
            tree._to_frame(f, "body")[..., 0],
            tree._to_frame(f, "inertial")[..., 0],
            jax.jvp(lambda e: tree.forward_kinematics(tree.retract(q, e * qd), s, body=body), (0.0,), (1.0,))[1],
            tree.jacobian_and_time_derivative(q, qd, s, frame="body", body=body)[1],
            f.cols[:, f.length, 0],
            f.cols[:, f.length + 1, 0],
        )
    return out


def ops_pose(f):
    return sg.models._rod_ops.SpatialOps.pose_matrix(f.R[..., 0], f.p[:, 0])


def test_jacobians_twists_and_their_rates_by_ad(tree):
    """J against the derivative of the pose along the retraction (body and inertial frames),
    the propagated twist against J qd, and the propagated dJ/dt qd against AD of J."""
    rng = np.random.default_rng(3)
    q, qd = random_state(tree, rng)
    for body, (g, Jb, Ji, dg, dJb, eta, acc) in _point(tree, q, qd, 0.04).items():
        g, dg = np.asarray(g), np.asarray(dg)
        body_twist = np.linalg.solve(g, dg)
        twist = np.concatenate([[body_twist[2, 1], body_twist[0, 2], body_twist[1, 0]], body_twist[:3, 3]])
        assert _rel(Jb @ qd, twist) < 1e-10, body
        R = g[:3, :3]
        assert _rel(Ji @ qd, np.concatenate([R @ twist[:3], R @ twist[3:]])) < 1e-10, body
        assert _rel(eta, Jb @ qd) < 1e-12, body
        assert _rel(acc, dJb @ qd) < 1e-10, body


def test_gvs_body_in_a_floating_tree():
    """The random tree with its GVS rod (a site on it carries the ball): J of the ball against
    the pose's derivative along the retraction, and M as the twists' kinetic energy."""
    tree = random_tree(12)
    assert sorted(len(g.bodies) for g in tree.structure.groups if g.kind == "rod") == [1, 2]
    rng = np.random.default_rng(12)
    q, qd = random_state(tree, rng)

    @jax.jit
    def check(tree, q, qd):
        f = tree._point_frames(q, qd, 0.0, "ball", False)
        dg = jax.jvp(lambda e: tree.forward_kinematics(tree.retract(q, e * qd), 0.0, body="ball"), (0.0,), (1.0,))[1]
        diag, full = tree._mass_points(q, qd, True)
        kinetic = sum(0.5 * jnp.sum(m * f_.cols[:, f_.length] ** 2) for f_, m, _ in diag)
        kinetic += sum(
            0.5 * jnp.einsum("dx,dex,ex->", f_.cols[:, f_.length], I6, f_.cols[:, f_.length])
            for f_, I6, _, _, _ in full
        )
        return ops_pose(f), dg, tree._to_frame(f, "body")[..., 0], kinetic, tree.inertia_matrix(q)

    g, dg, Jb, kinetic, M = (np.asarray(x) for x in check(tree, q, qd))
    body_twist = np.linalg.solve(g, dg)
    twist = np.concatenate([[body_twist[2, 1], body_twist[0, 2], body_twist[1, 0]], body_twist[:3, 3]])
    assert _rel(Jb @ qd, twist) < 1e-10
    assert abs(kinetic - 0.5 * qd @ M @ qd) < 1e-12 * kinetic


def _euclidean_tree(seed):
    rng = np.random.default_rng(seed)
    arm = sg.PCS(_rod_params(rng, 2), active_strains=[("ky", "kz", "sx"), ("kx", "ky")])
    cart_joint = sg.Joint.prismatic(rng.normal(size=3), stiffness=2.0)
    arm_joint = sg.Joint.universal(rng.normal(size=3), rng.normal(size=3))
    com = rng.uniform(-0.02, 0.02, (2, 3))
    bodies = [
        sg.RigidLink("cart", 0.4, com[0], _inertia(rng, 0.4), joint=cart_joint, offset=_pose(rng)),
        sg.RodBody("arm", arm, parent="cart", offset=_pose(rng), joint=arm_joint),
        sg.RigidLink(
            "tip", 0.05, com[1], _inertia(rng, 0.05), parent="arm", at=0.1, joint=sg.Joint.revolute((0, 1, 0))
        ),
    ]
    return sg.BodyTree(bodies, gravity=(0.0, 0.0, -9.81))


def test_coriolis_matches_christoffel_symbols_on_vector_space_trees():
    """Without rotational joints q is a vector space: C qd from the Christoffel symbols of M."""
    tree = _euclidean_tree(4)
    assert tree.num_positions == tree.num_dofs
    rng = np.random.default_rng(4)
    q, qd = random_state(tree, rng)

    @jax.jit
    def check(tree, q, qd):
        dM = jax.jacfwd(tree.inertia_matrix)(q)  # (n, n, n): dM_ij / dq_k
        christoffel = jnp.einsum("ijk,j,k->i", dM, qd, qd) - 0.5 * jnp.einsum("jki,j,k->i", dM, qd, qd)
        return (
            tree.coriolis_force(q, qd),
            christoffel,
            tree.gravitational_force(q),
            jax.grad(tree.gravitational_energy)(q),
        )

    cor, christoffel, grav, grad = check(tree, q, qd)
    assert _rel(cor, christoffel) < 1e-11
    assert _rel(grav, grad) < 1e-11


def test_one_branch_trees_equal_the_serial_models():
    """A fixed rod body is the PCS or GVS model it wraps, to the bit or rounding."""
    from _models import build_case
    from _models import random_state as serial_state

    rng = np.random.default_rng(5)
    for name in ("pcs3_pcc_tendons_linear", "gvs2_mixed_tendons"):
        rod = build_case(name, 5)
        tree = sg.BodyTree(
            [sg.RodBody("rod", rod)], gravity=rod.params.gravity if name.startswith("pcs") else rod.params.rod.gravity
        )
        q, qd = serial_state(rod, rng)
        u = jnp.asarray(rng.uniform(0.0, 2.0, rod.num_actuators))
        ours, theirs = _terms(tree, q, qd, u), _terms(rod, q, qd, u)
        for key in ("M", "cor", "grav", "C", "K", "D", "A", "fd"):
            assert _rel(ours[key], theirs[key]) < 1e-13, (name, key)
        s = 0.7 * rod.tip_abscissa
        kin = jax.jit(lambda m, q: (m.jacobian(q, s), m.tendon_lengths(q)))
        for a, b in zip(kin(tree, q), kin(rod, q), strict=True):
            assert _rel(a, b) < 1e-13, name


def _chain_as_tree(params: sg.ChainParams) -> sg.BodyTree:
    """An articulated chain as a tree: joint axes through the joint-frame origin, so each body
    frame is the chain's link frame moved to a point of its joint axis."""
    n = params.joint_axes.shape[0]
    axes = np.asarray(params.joint_axes)
    bodies, previous = [], np.eye(4)
    for i in range(n):
        w, v = axes[i, :3], axes[i, 3:]
        prismatic = np.linalg.norm(w) < 1e-12
        point = np.zeros(3) if prismatic else np.cross(w, v)  # a point of the revolute axis
        shift = np.eye(4)
        shift[:3, 3] = point
        offset = (
            np.linalg.inv(previous)
            @ (np.asarray(params.base_pose) if i == 0 else np.eye(4))
            @ np.asarray(params.parent_to_joint[i])
            @ shift
        )
        joint = (
            sg.Joint.prismatic(v, params.stiffness[i], params.damping[i], params.rest[i])
            if prismatic
            else sg.Joint.revolute(w, params.stiffness[i], params.damping[i], params.rest[i])
        )
        com, inertia = np.asarray(params.com[i]) - point, np.asarray(params.inertia[i])
        parent = None if i == 0 else f"link{i - 1}"
        bodies.append(
            sg.RigidLink(f"link{i}", float(params.mass[i]), com, inertia, parent=parent, joint=joint, offset=offset)
        )
        previous = shift
    return sg.BodyTree(bodies, gravity=np.asarray(params.gravity), motors=[(f"link{i}", 0) for i in range(n)])


def test_rigid_chain_tree_equals_the_articulated_model():
    rng = np.random.default_rng(6)
    params = random_chain_params(rng, 4, prismatic_share=0.4)
    chain = sg.ArticulatedSoftRobot(params)
    tree = _chain_as_tree(params)
    q, qd = jnp.asarray(rng.normal(size=4)), jnp.asarray(rng.normal(size=4))
    u = jnp.asarray(rng.normal(size=4))
    ours, theirs = _terms(tree, q, qd, u), _terms(chain, q, qd, u)
    for key in ("M", "cor", "grav", "C", "K", "D", "A", "fd"):
        assert _rel(ours[key], theirs[key]) < 1e-11, key
    energy = jax.jit(lambda m, q: m.potential_energy(q) - m.potential_energy(jnp.zeros_like(q)))
    assert abs(energy(tree, q) - energy(chain, q)) < 1e-12


@pytest.fixture(scope="module")
def free_tree():
    """The random tree without its GVS rod (cheaper to compile inside solvers), undamped."""
    tree = random_tree(7, damping=(0.0, 0.0), gravity=(0.0, 0.0, 0.0), gvs=False)
    return tree.update_params(joint_damping=jnp.zeros_like(tree.params.joint_damping))


def test_free_floating_tree_conserves_momentum_and_energy(free_tree):
    """No gravity, no damping, no input: linear and angular momentum are constant, energy too
    (Tsit5 at a tight tolerance), and quaternions stay unit in the saved states."""
    tree = free_tree
    rng = np.random.default_rng(7)
    q, qd = random_state(tree, rng, scale=0.3)
    qd = 0.3 * qd
    controller = diffrax.PIDController(rtol=1e-9, atol=1e-9)
    traj = sg.sim.rollout_to(
        tree, tree.pack_state(q, qd), t1=0.05, solver_dt=1e-4, save_dt=0.025, stepsize_controller=controller
    )
    qs, _ = traj.split(tree)
    momentum, energy = jax.jit(jax.vmap(lambda y: (tree.momentum(*tree.split_state(y)), tree.total_energy(y))))(traj.ys)
    momentum, energy = np.asarray(momentum), np.asarray(energy)
    assert np.abs(momentum - momentum[0]).max() < 1e-8 * np.abs(momentum[0]).max()
    assert np.abs(energy - energy[0]).max() < 1e-7 * energy[0]
    assert np.abs(np.linalg.norm(qs[:, 3:7], axis=1) - 1).max() < 1e-14


def test_fixed_step_schemes_retract_on_the_group(free_tree):
    """The trapezoidal scheme keeps the free base's quaternion unit without projection and
    converges at least at first order (halving the step at least about halves the gap to a
    4x finer run: 2.33 for first order, 4.2 for second)."""
    tree = free_tree.update_params(gravity=jnp.asarray([0.0, 0.0, -9.81]))
    rng = np.random.default_rng(8)
    q, qd = random_state(tree, rng, scale=0.2)
    y0 = tree.pack_state(q, 0.5 * qd)
    applied = sg.sim.actuation_applied_force(tree, ())

    @jax.jit
    def run(y, h, steps):
        return jax.lax.fori_loop(0, steps, lambda _, y: sg.sim.linear_trapezoid_step(tree, y, applied, h), y)

    t1 = 2e-3
    coarse, fine, finest = (tree.split_state(run(y0, t1 / k, k))[0] for k in (10, 20, 80))
    assert abs(float(jnp.linalg.norm(coarse[3:7])) - 1.0) < 1e-13
    ratio = float(jnp.linalg.norm(coarse - finest) / jnp.linalg.norm(fine - finest))
    assert ratio > 1.6, ratio  # at least first order (second order shows 2.33 -> 4.2)


def test_quaternion_sign_and_straight_configurations_are_regular(tree):
    """q and its negated quaternions describe the same state; gradients are finite at the
    neutral (straight) configuration and at a zero increment."""
    rng = np.random.default_rng(9)
    q, qd = random_state(tree, rng)
    flip = q.at[3:7].multiply(-1.0)
    ball = tree.coordinate_slices("ball")[0]
    flip = flip.at[ball].multiply(-1.0)
    u = jnp.ones(tree.num_actuators)
    a, b = _terms(tree, q, qd, u), _terms(tree, flip, qd, u)
    for key in ("M", "cor", "grav", "A", "fd"):
        if key == "fd":
            assert _rel(tree.split_state(a[key])[1], tree.split_state(b[key])[1]) < 1e-10
        else:
            assert _rel(a[key], b[key]) < 1e-12, key
    q0 = tree.neutral_configuration()
    loss = lambda e: jnp.sum(tree.forward_dynamics(0.0, tree.pack_state(tree.retract(q0, e), 0 * e), (u,)) ** 2)  # noqa: E731
    grad = jax.jit(jax.grad(loss))(jnp.zeros(tree.num_dofs))
    assert np.all(np.isfinite(grad))


def test_with_params_keeps_compiled_functions_and_randomises_payloads(tree):
    q, qd = random_state(tree, np.random.default_rng(10))
    heavier = tree.update_params(payload_mass=tree.params.payload_mass * 2.0)
    before = _terms._cache_size()
    _terms(heavier, q, qd, jnp.ones(tree.num_actuators))
    _terms(tree, q, qd, jnp.ones(tree.num_actuators))
    assert _terms._cache_size() <= before + 1
    batched = jax.jit(jax.vmap(lambda m: tree.update_params(payload_mass=m).inertia_matrix(q)))(
        jnp.stack([tree.params.payload_mass, 2 * tree.params.payload_mass])
    )
    assert not np.allclose(batched[0], batched[1])


def test_project_state_normalises_quaternions(tree):
    q, qd = random_state(tree, np.random.default_rng(11))
    y = tree.pack_state(q.at[3:7].multiply(1.5), qd)
    p = tree.project_state(y)
    assert abs(float(jnp.linalg.norm(tree.split_state(p)[0][3:7])) - 1.0) < 1e-15
    others = np.setdiff1d(np.arange(y.shape[0]), np.r_[3:7, tree.coordinate_slices("ball")[0]])
    assert np.array_equal(np.asarray(p)[others], np.asarray(y)[others])
    ball = tree.coordinate_slices("ball")[0]
    np.testing.assert_allclose(np.asarray(p)[ball], np.asarray(y)[ball], rtol=1e-15)


def _link(name, **kw):
    return sg.RigidLink(name, kw.pop("mass", 1.0), (0, 0, 0), kw.pop("inertia", np.eye(3) * 1e-3), **kw)


@pytest.mark.parametrize(
    "bodies,match",
    [
        ([_link("a", parent="missing")], "body 'a': parent: no body named 'missing'"),
        ([_link("a", parent="b"), _link("b", parent="a")], "cycle"),
        ([_link("a"), _link("a")], "body 'a': name: duplicate"),
        ([_link("a", joint=sg.Joint.free(quaternion=(1.0, 0.1, 0.0, 0.0)))], "body 'a': joint.quaternion"),
        ([_link("a", joint=sg.Joint.revolute((0.0, 0.0, 0.0)))], "body 'a': joint.axes: an axis of zero"),
        ([_link("a", mass=-1.0)], "body 'a': mass"),
        ([_link("a", inertia=np.ones((3, 3)))], "body 'a': inertia"),
        ([_link("a", inertia=np.eye(2))], r"body 'a': inertia: expected shape \(3, 3\)"),
        ([_link("a", offset=np.ones((4, 4)))], "body 'a': offset"),
        ([_link("a"), _link("b", parent="a", joint=sg.Joint.free())], "body 'b': joint: a free joint"),
        ([_link("a", joint=sg.Joint.revolute(stiffness=-1.0))], "body 'a': joint.stiffness"),
    ],
)
def test_bad_trees_name_the_body_and_field(bodies, match):
    with pytest.raises(ValueError, match=match):
        sg.BodyTree(bodies)


def test_bad_sites_and_payloads_name_the_body():
    rod = sg.PCS(sg.RodParams.create(length=[0.1], radius=0.01, density=1000.0, young_modulus=1e5, dtype=jnp.float64))
    with pytest.raises(ValueError, match=r"body 'tip': at: abscissa 0.2 m lies outside the parent rod 'rod'"):
        sg.BodyTree([sg.RodBody("rod", rod), _link("tip", parent="rod", at=0.2)])
    with pytest.raises(ValueError, match=r"payloads\[0\] on 'rod': at"):
        sg.BodyTree([sg.RodBody("rod", rod)], payloads=[sg.Payload("rod", 0.1, at=-0.1)])
    with pytest.raises(ValueError, match=r"payloads\[0\]: body: no body named 'x'"):
        sg.BodyTree([sg.RodBody("rod", rod)], payloads=[sg.Payload("x", 0.1)])
    with pytest.raises(ValueError, match=r"motors\[0\]: body 'rod'"):
        sg.BodyTree([sg.RodBody("rod", rod)], motors=[("rod", 0)])
