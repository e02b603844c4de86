"""Concentric tube robots (:class:`sorogym.ConcentricTubeRobot`).

* The model contract on a random three-tube robot (partly precurved tubes, translated,
  rotated, gravity in a random direction, random base pose): Jacobians against AD of the
  poses, ``dJ/dt``, ``M`` against the kinetic energy of every tube integrated from pose
  velocities and the tubes' angles (no Jacobian), ``C`` against the Christoffel symbols and
  ``dM/dt - 2C`` skew, ``G`` and ``K`` as energy gradients, the fused forward dynamics, and
  finite derivatives at the straight configuration; parameter updates (translations that
  reorder the transitions) reuse the compiled functions.
* Closed forms: tubes aligned (one plane of bending) and opposed (the S-curve, Fig. 24 of
  the Lie-group framework) bend as circular arcs of the stiffness-weighted curvature, to
  rounding; the relative twist of two tubes under a drive rotation against the torsion-only
  model (shooting on ``psi'' = c sin psi``).
* Integrators: the trapezoid and the variational scheme step the non-affine elasticity.
* Bad parameters name the field.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import sorogym as sg
from sorogym.testing import piecewise_arc_backbone, two_tube_torsion_branch


def _random_robot(seed: int = 0) -> sg.ConcentricTubeRobot:
    rng = np.random.default_rng(seed)
    params = sg.ConcentricTubeParams.create(
        length=[0.5, 0.35, 0.2],
        curved_length=[0.2, 0.35, 0.1],
        outer_radius=[0.6e-3, 1.0e-3, 1.5e-3],
        inner_radius=[0.0, 0.7e-3, 1.1e-3],
        density=rng.uniform(5000, 8000, 3),
        young_modulus=rng.uniform(30e9, 80e9, 3),
        poisson_ratio=0.33,
        precurvature=rng.uniform(3.0, 12.0, 3),
        damping=rng.uniform(1e6, 3e6, 3),
        rotation=rng.uniform(-np.pi, np.pi, 3),
        translation=[-0.05, -0.02, -0.03],
        transmission_length=0.05,
        gravity=rng.normal(size=3) * 5.0,
        base_rotation=Rotation.from_rotvec(rng.normal(size=3)).as_matrix(),
        base_position=rng.normal(size=3) * 0.1,
    )
    return sg.ConcentricTubeRobot(params, bending_order=1, twist_order=2, num_gauss_points=3)


def _random_state(model, rng, scale=1.0):
    n = model.num_dofs
    names = model.coordinate_names
    per = np.array([3.0 if ".k" in name else 0.5 if "angle" in name else 2.0 for name in names])
    return jnp.asarray(rng.normal(size=n) * per * scale), jnp.asarray(rng.normal(size=n) * per)


def _rel(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)


def _gauss_on_tubes(model, points=8):
    """Arc lengths, weights and tube masks of an 8-point Gauss rule on every interval
    between transitions (the reference's own quadrature)."""
    p = model.params
    tips = np.asarray(p.tips)
    cuts = np.concatenate([tips, np.asarray(p.curve_starts)])
    cuts = np.unique(np.clip(cuts, 0.0, tips[0]))
    x, w = np.polynomial.legendre.leggauss(points)
    s, wt = [], []
    for a, b in zip(np.concatenate([[0.0], cuts[:-1]]), cuts):
        s.append(a + (b - a) * (x + 1) / 2)
        wt.append((b - a) * w / 2)
    s, wt = np.concatenate(s), np.concatenate(wt)
    return s, wt, s[None, :] < tips[:, None]


@jax.jit
def _terms(model, q, qd, s_ps, u):
    def pose_and_angles(q_):
        return model.forward_kinematics_batched(q_, s_ps), model.tube_angles(q_, s_ps)

    (g, th), (gd, thd) = jax.jvp(pose_and_angles, (q,), (qd,))
    M, cor, grav = model.dynamical_terms(q, qd)
    J, Jd = model.jacobian_and_time_derivative(q, qd, s_ps[3])
    return dict(
        g=g,
        gd=gd,
        theta=th,
        theta_dot=thd,
        M=M,
        cor=cor,
        grav=grav,
        C=model.coriolis_matrix(q, qd),
        dM=jax.jacfwd(model.inertia_matrix)(q),
        K=model.elastic_force(q),
        dUe=jax.grad(model.elastic_energy)(q),
        dUg=jax.grad(model.gravitational_energy)(q),
        J=model.jacobian_batched(q, s_ps),
        Jb=model.jacobian_batched(q, s_ps, frame="body"),
        dg=jax.jacfwd(lambda q_: model.forward_kinematics_batched(q_, s_ps))(q),
        Jd=Jd,
        Jd_ad=jnp.einsum("dnm,m->dn", jax.jacfwd(lambda q_: model.jacobian(q_, s_ps[3]))(q), qd),
        fd=model.forward_dynamics(0.0, jnp.concatenate([q, qd]), (u,)),
        rhs=model.actuation_matrix(q) @ u - cor - grav - model.elastic_force(q) - model.damping_matrix() @ qd,
        S=model.tangent_stiffness(q),
        H=jax.hessian(model.elastic_energy)(q),
    )


@pytest.mark.parametrize("seed", [0, 1])
def test_contract_identities_on_a_random_robot(seed):
    model = _random_robot(seed)
    rng = np.random.default_rng(10 + seed)
    q, qd = _random_state(model, rng)
    s_ref, w_ref, present = _gauss_on_tubes(model)
    s_probe = np.array([0.0, 0.07, 0.2, float(model.tip_abscissa)])
    s_all = jnp.asarray(np.concatenate([s_probe, s_ref]))
    u = jnp.asarray(rng.normal(size=model.num_actuators))
    t = {k: np.asarray(v) for k, v in _terms(model, q, qd, s_all, u).items()}
    # Jacobians: linear rows = d position / dq, angular rows = vee(dR R^T), body = rotated
    R, dR = t["g"][:4, :3, :3], t["dg"][:4, :3, :3]
    Omega = np.einsum("pijn,pkj->pnik", dR, R)
    w = np.stack([Omega[..., 2, 1], Omega[..., 0, 2], Omega[..., 1, 0]], axis=1)  # (p, 3, n)
    J = t["J"][:4]
    assert _rel(J[:, 3:], t["dg"][:4, :3, 3]) < 1e-11
    assert _rel(J[:, :3], w) < 1e-10
    Jb_world = np.concatenate([R @ t["Jb"][:4, :3], R @ t["Jb"][:4, 3:]], axis=1)
    assert _rel(Jb_world, J) < 1e-12
    assert _rel(t["Jd"], t["Jd_ad"]) < 1e-10
    # kinetic energy of every tube from the pose velocities of the innermost tube and the
    # tubes' angles: tube i's axial rate is that of tube 0 plus theta_i_dot - theta_0_dot
    p = model.params
    sec = {k: np.asarray(v) for k, v in p.section_properties().items()}
    g, gd = t["g"][4:], t["gd"][4:]
    w_body = np.einsum("pji,pjk->pik", g[:, :3, :3], gd[:, :3, :3])  # R^T dR
    w_body = np.stack([w_body[:, 2, 1], w_body[:, 0, 2], w_body[:, 1, 0]], axis=-1)
    pdot2 = np.sum(gd[:, :3, 3] ** 2, axis=-1)
    rho = np.asarray(p.density)
    T_ref = 0.0
    for i in range(model.num_tubes):
        axial = w_body[:, 0] + t["theta_dot"][i, 4:] - t["theta_dot"][0, 4:]
        density = rho[i] * (
            sec["area"][i] * pdot2
            + sec["polar_moment"][i] * axial**2
            + sec["second_moment"][i] * (w_body[:, 1] ** 2 + w_body[:, 2] ** 2)
        )
        T_ref += 0.5 * np.sum(w_ref * present[i] * density)
    M = t["M"]
    assert abs(0.5 * qd @ M @ qd - T_ref) < 1e-4 * T_ref  # 3-point (model) vs 8-point (reference) Gauss
    assert np.abs(M - M.T).max() <= 1e-14 * np.abs(M).max()
    assert np.linalg.eigvalsh(M).min() > 0
    # Coriolis
    dM = t["dM"]
    dMq = np.einsum("ijk,k->ij", dM, qd)
    christoffel = 0.5 * (dMq + np.einsum("ikj,k->ij", dM, qd) - np.einsum("jki,k->ij", dM, qd))
    assert _rel(t["cor"], christoffel @ qd) < 1e-10
    assert _rel(t["C"] @ qd, t["cor"]) < 1e-11
    N = dMq - 2 * t["C"]
    assert np.abs(N + N.T).max() < 1e-10 * np.abs(N).max()
    # potentials, tangent stiffness, damping
    assert _rel(t["K"], t["dUe"]) < 1e-13
    assert _rel(t["grav"], t["dUg"]) < 1e-12
    assert _rel(t["S"], t["H"]) < 1e-12
    D = np.asarray(model.damping_matrix())
    assert np.abs(D - D.T).max() <= 1e-15 * np.abs(D).max() and np.linalg.eigvalsh(D).min() >= -1e-12 * np.abs(D).max()
    # fused forward dynamics
    n = model.num_dofs
    assert _rel(t["fd"][:n], qd) == 0.0
    assert _rel(t["fd"][n:], np.linalg.solve(M, t["rhs"])) < 1e-8


@jax.jit
def _grads_at_rest(model, q, qd, u):
    def scalar(q_, qd_, u_, params):
        m = model.with_params(params)
        y = m.forward_dynamics(0.0, jnp.concatenate([q_, qd_]), (u_,))
        return jnp.sum(y**2) + m.potential_energy(q_) + jnp.sum(m.forward_kinematics(q_, m.tip_abscissa))

    return jax.grad(scalar, argnums=(0, 1, 2, 3))(q, qd, u, model.params)


def test_derivatives_finite_at_the_straight_configuration():
    model = _random_robot(0)
    n = model.num_dofs
    grads = _grads_at_rest(model, jnp.zeros(n), jnp.full(n, 0.1), jnp.ones(model.num_actuators))
    for leaf in jax.tree.leaves(grads):
        assert np.all(np.isfinite(np.asarray(leaf)))


def _two_tubes(rotation=0.0, **kw):
    """Two tubes precurved all along (overlap 0.3 m), no gravity."""
    args = dict(
        length=[0.5, 0.3],
        outer_radius=[1.0e-3, 1.6e-3],
        inner_radius=[0.5e-3, 1.2e-3],
        density=6450.0,
        young_modulus=[60e9, 50e9],
        poisson_ratio=0.3,
        precurvature=[8.0, 5.0],
        rotation=[0.0, rotation],
        transmission_length=0.1,
        gravity=[0.0, 0.0, 0.0],
    )
    args.update(kw)
    return sg.ConcentricTubeParams.create(**args)


@jax.jit
def _equilibrium(model, q0):
    q = model.static_equilibrium(q0=q0, ramp_steps=0)
    s = jnp.linspace(0.0, model.tip_abscissa, 21)
    return q, model.backbone_positions(q, s), model.tube_angles(q, jnp.asarray([0.3]))[:, 0]


@pytest.mark.parametrize("opposed", [False, True])
def test_aligned_and_opposed_tubes_bend_as_circular_arcs(opposed):
    """Torsion-free states (relative angle 0 or pi): the overlap bends at the
    stiffness-weighted curvature ``(EI_0 k_0 +- EI_1 k_1) / (EI_0 + EI_1)`` and the
    innermost tube alone at its own, in one plane (the S-curve when opposed)."""
    params = _two_tubes(np.pi if opposed else 0.0)
    model = sg.ConcentricTubeRobot(params, bending_order=0, twist_order=1, num_gauss_points=2)
    q0 = jnp.zeros(model.num_dofs).at[model.twist_offsets[1]].set(np.pi if opposed else 0.0)
    q, pos, _ = _equilibrium(model, q0)
    sec = params.section_properties()
    EI = np.asarray(params.young_modulus * sec["second_moment"])
    sign = -1.0 if opposed else 1.0
    k_overlap = (EI[0] * 8.0 + sign * EI[1] * 5.0) / EI.sum()
    s = np.linspace(0.0, 0.5, 21)
    plane = piecewise_arc_backbone([k_overlap, 8.0], [0.3, 0.2], s)
    R = np.asarray(params.base_rotation)
    ref = plane[:, :1] * R[:, 0] + plane[:, 1:] * R[:, 1]
    assert np.abs(np.asarray(pos) - ref).max() < 1e-11
    assert (k_overlap < 0) == opposed  # the S: the overlap bends against the wire's tip


def test_relative_twist_follows_the_torsion_only_model():
    """A drive rotation of the outer tube twists both: the distal relative angle ``psi`` and
    the drive angle satisfy the torsion-only model's branch ``alpha(psi_tip)`` to 3e-4 rad,
    before and past the unstable opposed state (the branch continued by small steps)."""
    params = _two_tubes()
    model = sg.ConcentricTubeRobot(params, bending_order=3, twist_order=4, num_gauss_points=4)
    sec = params.section_properties()
    EI = np.asarray(params.young_modulus * sec["second_moment"])
    GJ = np.asarray(params.shear_modulus * sec["polar_moment"])
    q = jnp.zeros(model.num_dofs)
    for alpha in np.linspace(0.4, 2.0, 5):
        q, _, theta = _equilibrium(model.update_params(rotation=[0.0, alpha]), q)
        psi = float(theta[1] - theta[0])
        ref = two_tube_torsion_branch(psi, EI, GJ, (8.0, 5.0), 0.3, (0.1, 0.1))
        assert abs(ref["alpha"][0] - alpha) < 3e-4, (alpha, psi, ref["alpha"][0])
        assert 0.0 < psi < alpha


def test_parameter_updates_reuse_compiled_code_and_reorder_transitions():
    """Translations that move the wire's curved section out of the outer tube reorder the
    backbone's transitions without recompiling; the tip moves continuously."""
    params = _two_tubes(curved_length=[0.15, 0.3], translation=[-0.15, 0.0])
    model = sg.ConcentricTubeRobot(params, bending_order=1, twist_order=2, num_gauss_points=3)

    @jax.jit
    def tip(p):
        m = model.with_params(p)
        q = m.static_equilibrium(q0=jnp.zeros(m.num_dofs), ramp_steps=0)
        return m.forward_kinematics(q, m.tip_abscissa)[:3, 3]

    tips = [np.asarray(tip(params.replace(translation=[d, 0.0]))) for d in (-0.15, -0.1, -0.05, -0.04, 0.0)]
    assert tip._cache_size() == 1
    steps = np.linalg.norm(np.diff(np.array(tips), axis=0), axis=1)
    assert np.all(steps > 0) and steps[2] < 0.5 * steps[1]  # 1 cm moves the tip less than 5 cm


@pytest.mark.parametrize("scheme", ["trapezoid", "variational"])
def test_fixed_step_schemes_step_the_nonlinear_elasticity(scheme):
    """From the straight (unrelaxed) state the damped robot settles at its static
    equilibrium under the fixed-step schemes (tangent stiffness in the iteration matrix)."""
    params = _two_tubes(np.pi / 2, damping=2e8)  # retardation 3 eta / E = 10 ms
    model = sg.ConcentricTubeRobot(params, bending_order=1, twist_order=2, num_gauss_points=3)
    step = sg.sim.FIXED_STEP_SCHEMES[scheme]
    zero = jnp.zeros(model.num_actuators)

    @jax.jit
    def run(y):
        def body(y, _):
            return step(model, y, lambda q, qd: model.generalized_force(q, zero), 2e-4), None

        return jax.lax.scan(body, y, None, length=3000)[0]

    y = run(model.zero_state())
    q_static = _equilibrium(model, jnp.zeros(model.num_dofs))[0]
    q, qd = model.split_state(y)
    assert np.all(np.isfinite(np.asarray(y)))
    assert _rel(q, q_static) < 1e-3


@pytest.mark.parametrize(
    "change, match",
    [
        (dict(outer_radius=[1.3e-3, 1.6e-3]), "outer_radius: tubes do not nest"),
        (dict(inner_radius=[0.5e-3, 1.7e-3]), "inner_radius"),
        (dict(length=[0.3, 0.3]), "length: tubes do not nest"),
        (dict(curved_length=[0.6, 0.3]), "curved_length"),
        (dict(translation=[0.01, 0.0]), "translation"),
        (dict(translation=[0.0, -0.3]), "translation"),
        (dict(transmission_length=0.0), "transmission_length"),
        (dict(young_modulus=[60e9, -1.0]), "young_modulus"),
        (dict(precurvature=[1.0, 2.0, 3.0]), "precurvature"),
        (dict(base_rotation=2.0 * np.eye(3)), "base_rotation"),
    ],
)
def test_bad_parameters_name_the_field(change, match):
    with pytest.raises(ValueError, match=match):
        _two_tubes(**change)


def test_bad_discretisation_names_the_field():
    cases = (
        (dict(bending_order=-1), "bending_order"),
        (dict(twist_order=0), "twist_order"),
        (dict(bending_order=4, num_gauss_points=4), "num_gauss_points"),
        (dict(twist_order=5, num_gauss_points=4), "num_gauss_points"),
    )
    for kw, match in cases:
        with pytest.raises(ValueError, match=match):
            sg.ConcentricTubeRobot(_two_tubes(), **kw)


def test_scene_is_a_stepped_telescope():
    """The rendered scene: the backbone, each point's radius that of the outermost tube
    present, the tubes' tips as markers on the backbone."""
    from sorogym.render import scene_of_model

    params = _two_tubes()
    model = sg.ConcentricTubeRobot(params, bending_order=0, twist_order=1, num_gauss_points=2)
    scene = scene_of_model(model, jnp.zeros(model.num_dofs))
    s = np.linspace(0.0, 0.5, scene["radius"].shape[0])
    np.testing.assert_array_equal(scene["radius"], np.where(s <= 0.3 + 1e-12, 1.6e-3, 1.0e-3))
    np.testing.assert_allclose(scene["markers"][0][1], scene["backbone"][-1], atol=1e-12)
    assert len(scene["markers"]) == 2
