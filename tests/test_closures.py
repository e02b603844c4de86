"""Closed chains: loop closures on body trees (:class:`sorogym.LoopClosure`).

* The closure equations of every kind, their Jacobian ``G`` and ``dG/dt qd`` against AD on
  random states, and the model-contract identities with the constrained forward dynamics
  (the KKT system), on a tree that closes four rods with the four kinds and on the parallel
  continuum robot.
* Statics (the KKT system with implicit derivatives): the parallel robot's platform under
  a small lateral force moves as three fixed-guided beams, ``F L^3 / (3 * 12 EI)``, and the
  closure multipliers are the clamps' reactions (a third of the force, moment ``F L / 6``
  each); the implicit derivative against central differences.
* Dynamics: an undamped rigid spatial loop conserves energy and keeps its closure under
  Tsit5; the trapezoidal scheme keeps the parallel robot's closures and converges with the
  step; the variational scheme refuses closures.
* Bad closures name the closure and field.
"""

from __future__ import annotations

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _tree_checks import check_closure_derivatives, check_contract_identities
from scipy.spatial.transform import Rotation

import sorogym as sg
from sorogym.sim import FIXED_STEP_SCHEMES


def _pose(R=None, p=(0.0, 0.0, 0.0)) -> np.ndarray:
    T = np.eye(4)
    if R is not None:
        T[:3, :3] = R
    T[:3, 3] = p
    return T


def _rod(length=0.1):
    params = sg.RodParams.create(
        length=[length], radius=0.008, density=1000.0, young_modulus=2e5, poisson_ratio=0.45, damping=50.0
    )
    return sg.PCS(params)


def four_kinds_tree() -> sg.BodyTree:
    """Four one-segment PCS rods (all six strains) from the world and a link on a revolute
    joint; rod tips closed with one closure of each kind: fixed to the world, revolute to the
    moving link, prismatic to the middle of another rod, spherical to the world (random
    offsets and axes: not assembled at rest, which the derivative checks do not need)."""
    rng = np.random.default_rng(3)
    rot = lambda: Rotation.from_rotvec(rng.normal(size=3) * 0.4).as_matrix()  # noqa: E731
    bodies = [sg.RodBody(f"rod{k}", _rod(), offset=_pose(rot(), (0.05 * k, 0.0, 0.0))) for k in range(4)]
    bodies.append(
        sg.RigidLink(
            "link",
            0.05,
            inertia=np.diag([1e-4, 2e-4, 3e-4]),
            joint=sg.Joint.revolute(rng.normal(size=3), stiffness=0.1),
            offset=_pose(rot(), (0.0, 0.1, 0.05)),
        )
    )
    closures = [
        sg.LoopClosure("fixed", None, "rod0", offset_a=_pose(rot(), (0.0, 0.0, 0.1))),
        sg.LoopClosure(
            "revolute", "link", "rod1", offset_a=_pose(rot()), offset_b=_pose(rot()), axis=rng.normal(size=3)
        ),
        sg.LoopClosure("prismatic", "rod3", "rod2", at_a=0.05, offset_a=_pose(rot()), axis=rng.normal(size=3)),
        sg.LoopClosure("spherical", None, "rod3", offset_a=_pose(p=(0.15, 0.0, 0.1)), offset_b=_pose(p=(0.0, 0.01, 0))),
    ]
    return sg.BodyTree(bodies, motors=[("link", 0)], constraints=closures)


_ROBOTS: dict = {}


def pcr(**kw) -> sg.BodyTree:
    """The parallel continuum robot at test size (two segments per rod)."""
    key = tuple(sorted(kw.items()))
    if key not in _ROBOTS:
        _ROBOTS[key] = sg.robots.parallel_continuum_robot(rod_segments=2, **kw)
    return _ROBOTS[key]


@pytest.mark.parametrize("name", ["four_kinds", "pcr"])
def test_closure_derivatives_and_contract_identities_by_ad(name):
    tree = four_kinds_tree() if name == "four_kinds" else pcr()
    assert tree.num_constraints == (19 if name == "four_kinds" else 12)
    if name == "four_kinds":  # every kind, moving frames a, rod-to-rod (the robot's clamps are among them)
        for seed in (0, 1):
            check_closure_derivatives(tree, seed)
    check_contract_identities(tree, seed=5)


def test_closure_residuals_vanish_on_the_joint_motion():
    """Each kind's equations are zero exactly on its joint's relative motion (a rotation
    about the axis, a slide along it, any rotation for a ball) and not off it."""
    rng = np.random.default_rng(0)
    k = rng.normal(size=3)
    k /= np.linalg.norm(k)
    Ra = Rotation.from_rotvec(rng.normal(size=3)).as_matrix()
    pa = rng.normal(size=3) * 0.1

    def residual(kind, rel):
        link = sg.RigidLink("b", 1.0, inertia=np.eye(3) * 1e-3, joint=sg.Joint.free())
        tree = sg.BodyTree([link], constraints=[sg.LoopClosure(kind, None, "b", offset_a=_pose(Ra, pa), axis=k)])
        g = _pose(Ra, pa) @ rel
        quat = Rotation.from_matrix(g[:3, :3]).as_quat(scalar_first=True)
        return np.asarray(tree.constraint_terms(jnp.concatenate([jnp.asarray(g[:3, 3]), jnp.asarray(quat)]))[0])

    spin = _pose(Rotation.from_rotvec(1.3 * k).as_matrix())
    slide = _pose(p=0.07 * k)
    ball = _pose(Rotation.from_rotvec(rng.normal(size=3)).as_matrix())
    tilt = _pose(Rotation.from_rotvec(0.2 * np.cross(k, [1.0, 0, 0])).as_matrix())
    for kind, allowed, forbidden in [
        ("fixed", [], [spin, slide]),
        ("revolute", [spin], [slide, tilt]),
        ("prismatic", [slide], [spin, tilt]),
        ("spherical", [ball, spin], [slide]),
    ]:
        for rel in allowed:
            assert np.abs(residual(kind, rel)).max() < 1e-12, kind
        for rel in forbidden:
            assert np.abs(residual(kind, rel)).max() > 1e-3, kind


@jax.jit
def _lateral_statics(tree, force):
    """Platform position, multipliers and configuration under a lateral world force at the
    platform [N], with the derivative of the position with respect to the force (implicit)."""
    q0 = tree.neutral_configuration()

    def solve(f):
        tau = tree.jacobian(q0, body="platform").T @ jnp.zeros(6, q0.dtype).at[3].set(f)  # constant world force
        q, lam = tree.static_equilibrium(tau_ext=tau, return_multipliers=True)
        return tree.forward_kinematics(q, body="platform")[:3, 3], (lam, q)

    pos, slope, (lam, q) = jax.jvp(solve, (force,), (jnp.ones_like(force),), has_aux=True)
    return pos, slope, lam, q


def test_parallel_robot_platform_moves_as_fixed_guided_beams():
    """Stiff drives, no gravity, a small lateral force ``F`` at the platform: three clamped-
    guided rods, ``dx = F L^3 / (36 EI)``, times ``1 - 1/N^2`` for ``N`` constant-curvature
    segments (their curvatures are the segment means of the exact linear one); each
    closure's multiplier is the clamp's reaction on its rod tip: a lateral force ``F / 3``
    and a bending moment ``F L / 6``."""
    tree = pcr(insertion_stiffness=1e7)
    tree = tree.with_params(tree.params.replace(gravity=jnp.zeros(3)))
    p = sg.robots.PARALLEL_ROBOT
    EI = p["young_modulus"] * np.pi * p["rod_radius"] ** 4 / 4
    L, F = p["rod_length"], jnp.asarray(4e-5)  # small: the rods' axial forces (P-delta) stay negligible
    pos, slope, lam, q = _lateral_statics(tree, F)
    residual = jax.jit(lambda t, q: t.constraint_terms(q)[0])(tree, q)
    assert np.abs(np.asarray(residual)).max() < 1e-12
    assert abs(float(pos[0]) / (float(F) * L**3 / (36 * EI) * (1 - 1 / 2**2)) - 1) < 1e-4
    assert abs(float(pos[1])) < 1e-12
    wrenches = np.asarray(lam).reshape(2, 6)  # [moment, force] on each rod tip, tip frame (x along the rod)
    np.testing.assert_allclose(np.linalg.norm(wrenches[:, 4:], axis=1), float(F) / 3, rtol=1e-4)  # lateral
    np.testing.assert_allclose(np.linalg.norm(wrenches[:, :3], axis=1), float(F) * L / 6, rtol=1e-4)
    # the implicit derivative against central differences
    h = 1e-6
    fd = (_lateral_statics(tree, F + h)[0][0] - _lateral_statics(tree, F - h)[0][0]) / (2 * h)
    assert abs(float(slope[0]) / float(fd) - 1) < 1e-7


def rigid_loop() -> sg.BodyTree:
    """Four rigid links on revolute joints with skew axes from the world, the last link's end
    held to the world by a ball joint: a one-degree-of-freedom spatial loop, assembled at rest."""
    axes = [(0.0, 0.0, 1.0), (0.0, 1.0, 0.3), (1.0, 0.2, 0.0), (0.2, 1.0, 0.5)]
    steps = [(0.0, 0.0, 0.0), (0.12, 0.0, 0.0), (0.02, 0.1, 0.03), (0.1, -0.03, 0.05)]
    bodies, parent = [], None
    for k, (axis, step) in enumerate(zip(axes, steps, strict=True)):
        bodies.append(
            sg.RigidLink(
                f"l{k}",
                0.1 + 0.05 * k,
                com=(0.04, 0.02, 0.0),
                inertia=np.diag([1e-4, 4e-4, 4e-4]),
                parent=parent,
                joint=sg.Joint.revolute(axis),
                offset=_pose(p=step),
            )
        )
        parent = f"l{k}"
    end = _pose(p=(0.06, 0.05, -0.04))  # the ball's centre in the last link's frame
    held = np.asarray(sg.BodyTree(bodies).forward_kinematics(jnp.zeros(4), body="l3")) @ end
    closure = sg.LoopClosure("spherical", None, "l3", offset_a=held, offset_b=end)
    return sg.BodyTree(bodies, constraints=[closure], constraint_frequency=10.0)


@jax.jit
def _rigid_run(tree, y0):
    sol = diffrax.diffeqsolve(
        diffrax.ODETerm(lambda t, y, a: tree.forward_dynamics(t, y)),
        diffrax.Tsit5(),
        t0=0.0,
        t1=1.0,
        dt0=1e-3,
        y0=y0,
        saveat=diffrax.SaveAt(ts=jnp.linspace(0.0, 1.0, 21)),
        max_steps=2000,
    )
    q, _ = tree.split_state(sol.ys)
    energy = jax.vmap(tree.total_energy)(sol.ys)
    return (
        energy,
        jax.vmap(lambda q_: tree.constraint_terms(q_)[0])(q),
        jax.vmap(lambda y: tree.constraint_forces(y))(sol.ys),
    )


def test_rigid_spatial_loop_conserves_energy_and_keeps_its_closure():
    tree = rigid_loop()
    q0 = tree.neutral_configuration()
    G = np.asarray(tree.constraint_terms(q0)[1])
    null = np.linalg.svd(G)[2][-1]  # the loop's one mobility
    y0 = tree.pack_state(q0, jnp.asarray(2.0 * null))
    energy, phi, lam = _rigid_run(tree, y0)
    swing = float(jnp.max(energy) - jnp.min(energy))
    kinetic0 = float(tree.kinetic_energy(q0, tree.split_state(y0)[1]))
    assert swing < 1e-7 * kinetic0
    assert float(jnp.abs(phi).max()) < 1e-9
    assert float(jnp.abs(lam).max()) > 0.1  # the closure carries load


@jax.jit
def _pcr_trapezoid(tree, y0, u, h, steps):
    """Platform position after ``steps`` trapezoidal steps of ``h`` [s] and the largest
    closure residual on the way (one compilation for every step size)."""
    scheme = FIXED_STEP_SCHEMES["trapezoid"]
    applied = lambda q, qd: tree.actuation_force(q, u)  # noqa: E731

    def step(_, carry):
        y, worst = carry
        y = scheme(tree, y, applied, h)
        return y, jnp.maximum(worst, jnp.abs(tree.constraint_terms(tree.split_state(y)[0])[0]).max())

    y, worst = jax.lax.fori_loop(0, steps, step, (y0, jnp.zeros((), y0.dtype)))
    return tree.forward_kinematics(tree.split_state(y)[0], body="platform")[:3, 3], worst


def test_trapezoid_keeps_the_closures_and_converges():
    """Unequal insertions tilt the platform: 0.2 s of the trapezoidal scheme at 2 and 1 ms
    keeps every closure within 1e-6 (velocity-level closures and a projection per step) and
    ends within 2 % of the platform's travel of the same scheme at a quarter of the step
    (the error shrinks with the step)."""
    tree = pcr()
    y0 = tree.zero_state()
    u = jnp.asarray([20.0, -10.0, 0.0])  # drive forces [N]: 10 mm in, 5 mm out
    # jitted: a tree's kinematics run eagerly dispatch (and compile) hundreds of single operations
    start = jax.jit(lambda q: tree.forward_kinematics(q, body="platform")[:3, 3])(tree.neutral_configuration())
    ends = {}
    for h, steps in ((2e-3, 100), (1e-3, 200), (2.5e-4, 800)):
        ends[h], worst = _pcr_trapezoid(tree, y0, u, h, steps)
        assert float(worst) < 1e-6, h
    travel = float(jnp.linalg.norm(ends[2.5e-4] - start))
    assert travel > 3e-3
    coarse, fine = (float(jnp.linalg.norm(ends[h] - ends[2.5e-4])) for h in (2e-3, 1e-3))
    assert fine < 0.02 * travel and fine < 0.5 * coarse


def test_variational_scheme_refuses_closures():
    tree = rigid_loop()
    with pytest.raises(TypeError, match="closure"):
        FIXED_STEP_SCHEMES["variational"](tree, tree.zero_state(), lambda q, qd: jnp.zeros_like(qd), 1e-3)


def test_with_params_keeps_the_closures():
    tree = pcr()
    other = tree.with_params(tree.params.replace(gravity=jnp.zeros(3)))
    assert other.num_constraints == tree.num_constraints == 12
    assert other.constraint_frequency == tree.constraint_frequency


def _bodies():
    return [sg.RodBody("a", _rod()), sg.RodBody("b", _rod(), offset=_pose(p=(0.05, 0, 0)))]


@pytest.mark.parametrize(
    "closures, match",
    [
        ([sg.LoopClosure("fixed", "a", "c")], "'a-c': body_b: no body named 'c'"),
        ([sg.LoopClosure("fixed", "x", "b")], "'x-b': body_a: no body named 'x'"),
        ([sg.LoopClosure("weld", "a", "b")], "'a-b': kind: unknown 'weld'"),
        ([sg.LoopClosure("fixed", "a", None)], "body_b: must name a body"),
        ([sg.LoopClosure("fixed", "a", "b", at_a=0.5)], "at_a: 0.5 outside the rod"),
        ([sg.LoopClosure("fixed", "a", "a")], "joins a site to itself"),
        ([sg.LoopClosure("revolute", "a", "b", axis=(0, 0, 0))], "axis: expected a non-zero"),
        ([sg.LoopClosure("fixed", "a", "b", offset_b=np.ones((4, 4)))], "offset_b: rotation block"),
        ([sg.LoopClosure("fixed", "a", "b"), sg.LoopClosure("fixed", "a", "b")], "name: duplicate"),
        (
            [sg.LoopClosure("fixed", "a", "b", name="one"), sg.LoopClosure("spherical", "b", "a", name="two")],
            "closure 'two' repeats equations",
        ),
        ([sg.LoopClosure("fixed", None, "a", name=f"c{k}") for k in range(2)], "over-determine"),
    ],
)
def test_bad_closures_name_the_closure_and_field(closures, match):
    with pytest.raises(ValueError, match=match):
        sg.BodyTree(_bodies(), constraints=closures)


def test_bad_constraint_frequency():
    with pytest.raises(ValueError, match="constraint_frequency"):
        sg.BodyTree(_bodies(), constraint_frequency=-1.0)


def test_parallel_robot_bad_arguments_name_the_field():
    with pytest.raises(ValueError, match="num_rods"):
        sg.robots.parallel_continuum_robot(num_rods=1)
    with pytest.raises(ValueError, match="rod_segments"):
        sg.robots.parallel_continuum_robot(rod_segments=0)
    with pytest.raises(ValueError, match="platform_mass"):
        sg.robots.parallel_continuum_robot(platform_mass=0.0)


def test_chiral_structure_bad_arguments_name_the_field():
    with pytest.raises(ValueError, match="num_rods"):
        sg.robots.chiral_structure(num_rods=1)
    with pytest.raises(ValueError, match="num_tiers"):
        sg.robots.chiral_structure(num_tiers=0)
    with pytest.raises(ValueError, match="rod_radius"):
        sg.robots.chiral_structure(rod_radius=0.0)
    with pytest.raises(ValueError, match="plate_mass"):
        sg.robots.chiral_structure(plate_mass=-1.0)
