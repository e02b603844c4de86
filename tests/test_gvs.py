"""GVS-specific checks: coherence with PCS (constant bases), Magnus accuracy against an
independent ODE integration of the strain field, parameter updates, statics and bad input.

The general conformance suite (layers 3 and 5) runs over a GVS case through
``_models.MODEL_CASES`` (``tests/test_models.py``, ``tests/test_oracle_soromox.py``).
"""

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sorogym as sg
from sorogym.lie import se3

from _models import random_params, tendon_offsets


def _rel(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)


@jax.jit
def _terms(model, q, qd, s_ps, u):
    J, Jd = jax.vmap(lambda s: model.jacobian_and_time_derivative(q, qd, s))(s_ps)
    return dict(
        fk=model.forward_kinematics_batched(q, s_ps), J=J, Jd=Jd, M=model.inertia_matrix(q),
        Cqd=model.coriolis_force(q, qd), C=model.coriolis_matrix(q, qd), G=model.gravitational_force(q),
        K=model.elastic_force(q), D=model.damping_matrix(), A=model.actuation_matrix(q),
        U=model.potential_energy(q), yd=model.forward_dynamics(0.0, jnp.concatenate([q, qd]), (u,)),
    )


COHERENCE = [
    (1, None, "straight"),
    (2, [("ky", "kz"), ("kx", "ky", "kz", "sx", "sy")], "linear"),
    (3, ("ky", "kz", "sx"), "straight"),
]


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("N, active, routing", COHERENCE, ids=["n1-all", "n2-mixed-linear", "n3-bend-elong"])
def test_constant_bases_equal_spatial_pcs(N, active, routing, seed):
    """GVS with order-0 bases and fixed joints is PCS (Magnus steps are exact for constant
    strain): kinematics, dynamics, tendon actuation and energies agree on random rods,
    random pre-curvature, gravity and mountings."""
    rng = np.random.default_rng(10 * N + seed)
    params = random_params(rng, N, planar=False, mounting=("upright", "hanging", "horizontal")[seed % 3])
    tendons = sg.Tendons(tendon_offsets(rng, 2, N, False, routing), routing=routing)
    pcs = sg.PCS(params, active_strains=active, actuation=tendons)
    bases = [sg.StrainBasis(kind, tuple(0 if a else -1 for a in mask)) for mask, kind in
             zip(pcs.active_strains, ("monomial", "legendre", "monomial"))]
    gvs = sg.GVS(params, bases, actuation=tendons, num_gauss_points=(5, 3, 7)[:N])
    assert gvs.num_dofs == pcs.num_dofs
    q = jnp.asarray(rng.normal(size=pcs.num_dofs) * 2.0)
    qd = jnp.asarray(rng.normal(size=pcs.num_dofs))
    u = jnp.asarray(rng.uniform(0.0, 2.0, 2))
    s_ps = jnp.asarray(np.sort(rng.uniform(0, float(pcs.total_length), 4)))
    ours, ref = _terms(gvs, q, qd, s_ps, u), _terms(pcs, q, qd, s_ps, u)
    for key in ref:
        # with other Gauss rules only the integrals of non-polynomial integrands (M, C, G, U,
        # linearly routed tendons) differ; kinematics, K and D are exact
        tol = 1e-10 if key not in ("M", "Cqd", "C", "G", "U", "yd", "A") else 2e-3
        assert _rel(ours[key], ref[key]) < tol, key
    same_rule = sg.GVS(params, bases, actuation=tendons, num_gauss_points=pcs.num_quadrature_points)
    ours = _terms(same_rule, q, qd, s_ps, u)
    for key in ref:
        assert _rel(ours[key], ref[key]) < 1e-11, key


def test_constant_bases_equal_planar_pcs():
    """The paper's coherence test (App. E-C): a planar PCS robot and the GVS robot with
    bases (kz, sx, sy) of order 0, horizontal mounting and in-plane gravity; generalized
    quantities agree, poses after lifting SE(2) into SE(3)."""
    rng = np.random.default_rng(4)
    N = 3
    planar_params = random_params(rng, N, planar=True, mounting="horizontal")
    p = planar_params
    ref3 = np.zeros((N, 6))
    ref3[:, 2], ref3[:, 3], ref3[:, 4] = np.asarray(p.reference_strain).T
    spatial = sg.GVSParams.create(
        length=p.length, radius=p.radius, density=p.density, young_modulus=p.young_modulus,
        shear_modulus=p.shear_modulus, damping=p.damping, reference_strain=ref3,
        gravity=[*np.asarray(p.gravity), 0.0], mounting="horizontal", dtype=jnp.float64,
    )
    planar = sg.PlanarPCS(planar_params)
    gvs = sg.GVS(spatial, sg.StrainBasis.create(("kz", "sx", "sy"), 0))
    q = jnp.asarray(rng.normal(size=3 * N) * np.tile([4.0, 0.1, 0.1], N))
    qd = jnp.asarray(rng.normal(size=3 * N))
    s_ps = jnp.linspace(0.0, float(planar.total_length), 5)
    u = jnp.zeros(3 * N)
    tp, tg = _terms(planar, q, qd, s_ps, u), _terms(gvs, q, qd, s_ps, u)
    lifted = np.asarray(tg["fk"])[:, [0, 1, 3]][:, :, [0, 1, 3]]
    np.testing.assert_allclose(lifted, tp["fk"], atol=1e-14)
    np.testing.assert_allclose(np.asarray(tg["J"])[:, [2, 3, 4]], tp["J"], atol=1e-13)
    for key in ("M", "Cqd", "G", "K", "D", "U", "yd"):
        assert _rel(tg[key], tp[key]) < 1e-11, key


def _kinematic_ode_tip(model, q):
    """Tip pose from integrating ``g' = g xi(s)^`` through every link with diffrax (Tsit5,
    tolerance 1e-13): an independent reference for the Magnus steps."""

    def rhs(s, g_flat, args):
        g = g_flat.reshape(4, 4)
        return (g @ se3.hat(model.strain(q, s)[0])).reshape(-1)

    p = model.params
    g0 = jnp.eye(4).at[:3, :3].set(p.base_rotation).at[:3, 3].set(p.base_position)
    sol = diffrax.diffeqsolve(
        diffrax.ODETerm(rhs), diffrax.Tsit5(), 0.0, float(model.total_length) * (1 - 1e-15), 1e-3, g0.reshape(-1),
        stepsize_controller=diffrax.PIDController(rtol=1e-13, atol=1e-13), max_steps=100_000,
    )
    return sol.ys[-1].reshape(4, 4)


def test_magnus_kinematics_converge_at_fourth_order_to_the_strain_ode():
    """With strongly varying strains the tip pose from the Magnus steps matches an
    adaptive ODE integration of the strain field, and the error falls by ~2^4 per
    halving of the cells (fourth-order Magnus)."""
    rng = np.random.default_rng(1)
    params = sg.GVSParams.create(length=[0.25, 0.2], radius=0.015, tip_radius=[0.01, 0.006], density=1000.0,
                                 young_modulus=1e5, dtype=jnp.float64)
    bases = (sg.StrainBasis.create(None, 2), sg.StrainBasis.create(None, 3, kind="legendre"))
    model = sg.GVS(params, bases, num_gauss_points=3)
    q = jnp.asarray(rng.normal(size=model.num_dofs) * np.where(np.arange(model.num_dofs) % 4 < 2, 6.0, 0.1))
    ref = np.asarray(_kinematic_ode_tip(model, q))
    errors = []
    for points in (3, 7, 15):
        m = sg.GVS(params, bases, num_gauss_points=points)
        tip = np.asarray(eqx.filter_jit(lambda m_: m_.forward_kinematics(q, m_.total_length))(m))
        errors.append(np.abs(tip - ref).max())
    assert errors[-1] < 1e-9, errors
    # cells shrink by ~2 per step (P + 1 cells): the error ratios approach 2^4
    assert errors[0] / errors[1] > 10 and errors[1] / errors[2] > 12, errors


def test_parameter_updates_reuse_compiled_code_and_vmap():
    rng = np.random.default_rng(2)
    params = sg.GVSParams.from_rod(random_params(rng, 2, planar=False), tip_radius=[0.006, 0.005])
    model = sg.GVS(params, sg.StrainBasis.create("pcc", 1))
    traces = []

    @jax.jit
    def fd(m, y):
        traces.append(1)
        return m.forward_dynamics(0.0, y)

    y = jnp.asarray(rng.normal(size=2 * model.num_dofs) * 0.3)
    a = fd(model, y)
    b = fd(model.update_params(young_modulus=params.young_modulus * 2, tip_radius=[0.008, 0.004]), y)
    assert len(traces) == 1 and not np.allclose(a, b)
    E = jnp.asarray([1e5, 2e5, 4e5])
    batched = jax.vmap(lambda e: fd(model.update_params(young_modulus=jnp.full(2, e)), y))(E)
    np.testing.assert_allclose(batched[1], fd(model.update_params(young_modulus=jnp.full(2, 2e5)), y), rtol=1e-12)


def test_static_equilibrium_of_a_tendon_driven_conical_arm():
    """``static_equilibrium`` works on GVS unchanged: residual <= 1e-10 of the elastic
    scale and derivatives in the Young's modulus against central differences."""
    params = sg.GVSParams.create(length=[0.305, 0.055], radius=[0.0154, 0.0154 - 0.0106 * 0.305 / 0.36],
                                 tip_radius=[0.0154 - 0.0106 * 0.305 / 0.36, 0.0048], density=1100.0,
                                 young_modulus=2e5, poisson_ratio=0.45, dtype=jnp.float64)
    angles = np.deg2rad([30.0, 150.0])
    offsets = 0.008 * np.stack([np.cos(angles), np.sin(angles)], axis=-1)[:, None, :].repeat(2, axis=1)
    bases = (sg.StrainBasis.create(("kx", "ky", "kz", "sx"), {"ky": 1, "kz": 1}), sg.StrainBasis.create("pcc", 0))
    model = sg.GVS(params, bases, actuation=sg.Tendons(offsets, spans=(1, 1)))
    assert model.num_dofs == 9
    u = jnp.asarray([2.0, 0.5])

    @jax.jit
    def solve(m, u_):
        q = m.static_equilibrium(u_)
        return q, m.potential_force(q) - m.actuation_force(q, u_), m.elastic_force(q)

    q, residual, elastic = solve(model, u)
    assert np.abs(residual).max() <= 1e-10 * np.abs(elastic).max()
    tip = lambda E: eqx.filter_jit(  # noqa: E731
        lambda e: (lambda m: m.forward_kinematics(m.static_equilibrium(u), m.total_length)[:3, 3])(
            model.update_params(young_modulus=jnp.full(2, e))))(E)
    grad = jax.jacfwd(tip)(2e5)
    fd = (tip(2e5 * (1 + 1e-5)) - tip(2e5 * (1 - 1e-5))) / (2 * 2e5 * 1e-5)
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-12)


def test_bad_input_names_the_problem():
    p = sg.GVSParams.create(length=[0.1, 0.1], radius=0.01, density=1000.0, young_modulus=1e5)
    with pytest.raises(ValueError, match="tip_radius"):
        sg.GVSParams.create(length=[0.1, 0.1], radius=0.01, density=1000.0, young_modulus=1e5, tip_radius=[0.01, -1])
    with pytest.raises(ValueError, match="tip_radius"):
        sg.GVSParams.create(length=[0.1, 0.1], radius=0.01, density=1000.0, young_modulus=1e5, tip_radius=[0.01] * 3)
    with pytest.raises(ValueError, match="length"):
        sg.GVSParams.create(length=[0.1, np.nan], radius=0.01, density=1000.0, young_modulus=1e5)
    with pytest.raises(ValueError, match="planar"):
        sg.GVSParams.create(length=[0.1], radius=0.01, density=1000.0, young_modulus=1e5, planar=True)
    with pytest.raises(ValueError, match="kind"):
        sg.StrainBasis.create(None, 1, kind="fourier")
    with pytest.raises(ValueError, match="unknown strain"):
        sg.StrainBasis.create(("ky", "bend"), 1)
    with pytest.raises(ValueError, match="order"):
        sg.StrainBasis.create(None, -2)
    with pytest.raises(ValueError, match="order"):
        sg.StrainBasis.create(None, {"kq": 1})
    with pytest.raises(ValueError, match="bases"):
        sg.GVS(p, [sg.StrainBasis.create(None, 0)] * 3)
    with pytest.raises(ValueError, match="num_gauss_points"):
        sg.GVS(p, sg.StrainBasis.create(None, 0), num_gauss_points=0)
    with pytest.raises(ValueError, match="offsets"):
        sg.GVS(p, sg.StrainBasis.create(None, 0), actuation=sg.Tendons(np.zeros((2, 3, 2))))
    with pytest.raises(TypeError, match="params"):
        sg.GVS({"length": 1.0}, sg.StrainBasis.create(None, 0))
