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
from _models import random_params, tendon_offsets

import sorogym as sg
from sorogym.lie import se3


def _rel(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)


@jax.jit
def _terms(model, q, qd, s_ps, u):
    J, Jd = model.jacobian_and_time_derivative(q, qd, s_ps[1])
    return dict(
        fk=model.forward_kinematics_batched(q, s_ps),
        J=J,
        Jd=Jd,
        M=model.inertia_matrix(q),
        Cqd=model.coriolis_force(q, qd),
        G=model.gravitational_force(q),
        K=model.elastic_force(q),
        D=model.damping_matrix(),
        A=model.actuation_matrix(q),
        U=model.potential_energy(q),
        yd=model.forward_dynamics(0.0, jnp.concatenate([q, qd]), (u,)),
    )


@jax.jit
def _kinematics(model, q, s_ps):
    return dict(
        fk=model.forward_kinematics_batched(q, s_ps), J=model.jacobian_batched(q, s_ps), K=model.elastic_force(q)
    )


COHERENCE = [
    (1, None, "straight"),
    (3, [("ky", "kz"), ("kx", "ky", "kz", "sx", "sy"), ("ky", "kz", "sx")], "linear"),
]


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("N, active, routing", COHERENCE, ids=["n1-all-straight", "n3-mixed-linear"])
def test_constant_bases_equal_spatial_pcs(N, active, routing, seed):
    """GVS with order-0 bases and fixed joints is PCS (Magnus steps are exact for constant
    strain): kinematics, dynamics, tendon actuation and energies agree on random rods,
    random pre-curvature, gravity and mountings; with other (per-link) Gauss rules the
    kinematics and K stay exact."""
    rng = np.random.default_rng(10 * N + seed)
    params = random_params(rng, N, planar=False, mounting=("upright", "hanging", "horizontal")[(N + seed) % 3])
    tendons = sg.Tendons(tendon_offsets(rng, 2, N, False, routing), routing=routing)
    pcs = sg.PCS(params, active_strains=active, actuation=tendons)
    bases = [
        sg.StrainBasis(kind, tuple(0 if a else -1 for a in mask))
        for mask, kind in zip(pcs.active_strains, ("monomial", "legendre", "monomial"))
    ]
    gvs = sg.GVS(params, bases, actuation=tendons)
    assert gvs.num_dofs == pcs.num_dofs
    q = jnp.asarray(rng.normal(size=pcs.num_dofs) * 2.0)
    qd = jnp.asarray(rng.normal(size=pcs.num_dofs))
    u = jnp.asarray(rng.uniform(0.0, 2.0, 2))
    s_ps = jnp.asarray(np.sort(rng.uniform(0, float(pcs.total_length), 4)))
    ours, ref = _terms(gvs, q, qd, s_ps, u), _terms(pcs, q, qd, s_ps, u)
    for key in ref:
        assert _rel(ours[key], ref[key]) < 1e-11, key
    # heterogeneous rules: every link padded to the largest (zero-width cells, zero weights)
    mixed = sg.GVS(params, bases, actuation=tendons, num_gauss_points=(5, 2, 8)[:N])
    ours, ref = _kinematics(mixed, q, s_ps), _kinematics(pcs, q, s_ps)
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
        length=p.length,
        radius=p.radius,
        density=p.density,
        young_modulus=p.young_modulus,
        shear_modulus=p.shear_modulus,
        damping=p.damping,
        reference_strain=ref3,
        gravity=[*np.asarray(p.gravity), 0.0],
        mounting="horizontal",
        dtype=jnp.float64,
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
    np.testing.assert_allclose(np.asarray(tg["J"])[[2, 3, 4]], tp["J"], atol=1e-13)
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
        diffrax.ODETerm(rhs),
        diffrax.Tsit5(),
        0.0,
        float(model.total_length) * (1 - 1e-15),
        1e-3,
        g0.reshape(-1),
        stepsize_controller=diffrax.PIDController(rtol=1e-13, atol=1e-13),
        max_steps=100_000,
    )
    return sol.ys[-1].reshape(4, 4)


def _tip_errors_against_the_ode(params, bases, q, gauss_points) -> list[float]:
    """Largest tip-pose error [m] of the Magnus steps with each number of Gauss points
    against :func:`_kinematic_ode_tip`."""
    ref = np.asarray(_kinematic_ode_tip(sg.GVS(params, bases), q))
    errors = []
    for points in gauss_points:
        m = sg.GVS(params, bases, num_gauss_points=points)
        tip = np.asarray(eqx.filter_jit(lambda m_: m_.forward_kinematics(q, m_.total_length))(m))
        errors.append(float(np.abs(tip - ref).max()))
    return errors


def test_magnus_kinematics_converge_at_fourth_order_to_the_strain_ode():
    """With strongly varying strains the tip pose from the Magnus steps matches an
    adaptive ODE integration of the strain field, and the error falls by ~2^4 per
    halving of the cells (fourth-order Magnus)."""
    rng = np.random.default_rng(1)
    params = sg.GVSParams.create(
        length=[0.25, 0.2], radius=0.015, tip_radius=[0.01, 0.006], density=1000.0, young_modulus=1e5, dtype=jnp.float64
    )
    bases = (sg.StrainBasis.create(None, 2), sg.StrainBasis.create(None, 3, kind="legendre"))
    model = sg.GVS(params, bases, num_gauss_points=3)
    # curvatures of several rad/m varying along the links, stretches of ~0.1
    scale = np.concatenate(
        [np.full(o + 1, 3.0 if c < 3 else 0.05) for b in bases for c, o in enumerate(b.orders) if o >= 0]
    )
    q = jnp.asarray(rng.normal(size=model.num_dofs) * scale)
    errors = _tip_errors_against_the_ode(params, bases, q, (3, 7, 15))
    # measured: 3.4e-3, 1.9e-4, 1.1e-5 of L for 3, 7, 15 points (cells shrink by ~2 per step;
    # ratios ~17.5, i.e. ~2^4)
    assert errors[-1] < 2e-5 * float(model.total_length), errors
    assert errors[0] / errors[1] > 12 and errors[1] / errors[2] > 12, errors


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
    """``static_equilibrium`` works on GVS unchanged (the paper's conical arm): residual
    <= 1e-10 of the elastic scale, and the tip's derivative in the Young's modulus
    (implicit differentiation, forward mode) against central differences."""
    model = sg.robots.conical_tendon_arm(young_modulus=2e5, dtype=jnp.float64)
    assert (model.num_dofs, model.num_actuators) == (8, 2)
    u = jnp.asarray([2.0, 0.5])

    @jax.jit
    def tip_and_derivative(E):
        def tip(e):
            m = model.update_params(young_modulus=jnp.full(2, e))
            q = m.static_equilibrium(u)
            residual = m.potential_force(q) - m.actuation_force(q, u)
            return m.forward_kinematics(q, m.total_length)[:3, 3], (residual, m.elastic_force(q))

        (p, aux), (dp, _) = jax.jvp(tip, (E,), (jnp.ones_like(E),))
        return p, dp, aux

    E, h = 2e5, 2e5 * 1e-5
    p, dp, (residual, elastic) = tip_and_derivative(E)
    assert np.abs(residual).max() <= 1e-10 * np.abs(elastic).max()
    rest_tip = jax.jit(lambda: model.forward_kinematics(jnp.zeros(8), model.total_length)[:3, 3])()
    assert np.linalg.norm(p - rest_tip) > 0.01  # bent
    fd = (tip_and_derivative(E + h)[0] - tip_and_derivative(E - h)[0]) / (2 * h)
    np.testing.assert_allclose(dp, fd, rtol=1e-5, atol=1e-12)
    markers = jax.jit(sg.robots.conical_arm_markers)(model, jnp.zeros(8))
    # at rest (hanging, stretched slightly by its weight) the markers sit at their offsets
    np.testing.assert_allclose(markers[:, :2], [[0.025, 0.0], [-0.021, 0.0], [0.020, 0.0], [0.0, 0.0]], atol=1e-12)


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


# -- local-control (spline) strain bases --------------------------------------------------


def _change_of_basis(target: sg.StrainBasis, source: sg.StrainBasis) -> np.ndarray:
    """``T`` with ``B_target(X) = B_source(X) T`` (least squares on a grid; exact when the
    two bases span the same functions)."""
    X = np.linspace(0.0, 1.0, 41)
    Bt = np.asarray(target.evaluate(X)).transpose(0, 2, 1).reshape(-1, target.num_dofs)
    Bs = np.asarray(source.evaluate(X)).transpose(0, 2, 1).reshape(-1, source.num_dofs)
    T = np.linalg.lstsq(Bs, Bt, rcond=None)[0]
    np.testing.assert_allclose(Bs @ T, Bt, atol=1e-12)  # same span
    return T


def test_one_span_spline_bases_are_the_polynomial_bases_in_other_coordinates():
    """One knot span of a B-spline or a cubic Hermite basis spans the polynomials of its
    degree, so with ``q_mono = T q`` the models agree term by term: ``fk``, ``J T``,
    ``T^T M T``, ``T^T C qd``, ``T^T G``, ``T^T K``, ``T^T D T``, ``T^T A``, energy
    (1e-11). Two links: a cumulative quintic B-spline and a plain cubic Hermite one.
    Catches a wrong spline, Hermite or cumulative function."""
    splines = (
        sg.StrainBasis.bspline(("kx", "ky", "kz", "sx"), {"ky": 6, "kz": 6}, degree=5, cumulative=True),
        sg.StrainBasis.hermite(("ky", "kz", "sy"), 2),
    )
    monos = (sg.StrainBasis.create(("kx", "ky", "kz", "sx"), 5), sg.StrainBasis.create(("ky", "kz", "sy"), 3))
    blocks = [_change_of_basis(b, m) for b, m in zip(splines, monos)]
    T = np.block([[blocks[0], np.zeros((blocks[0].shape[0], blocks[1].shape[1]))],
                  [np.zeros((blocks[1].shape[0], blocks[0].shape[1])), blocks[1]]])  # fmt: skip
    rng = np.random.default_rng(7)
    params = sg.GVSParams.create(
        length=[0.2, 0.15], radius=0.015, tip_radius=[0.01, 0.006], density=1100.0, young_modulus=3e5,
        gravity=[0.0, -9.81, 2.0], damping=20.0, dtype=jnp.float64,
    )  # fmt: skip
    offsets = tendon_offsets(rng, 2, 2, planar=False)
    ms = sg.GVS(params, splines, actuation=sg.Tendons(offsets), num_gauss_points=4)
    mm = sg.GVS(params, monos, actuation=sg.Tendons(offsets), num_gauss_points=4)
    q = jnp.asarray(np.linalg.lstsq(T, rng.normal(size=T.shape[0]) * 3.0, rcond=None)[0])
    qd = jnp.asarray(rng.normal(size=T.shape[1]) * 5.0)
    s_ps = jnp.asarray([0.05, 0.13, 0.3])
    u = jnp.asarray([1.5, 0.7])
    a = _terms(ms, q, qd, s_ps, u)
    T_ = jnp.asarray(T)
    b = _terms(mm, T_ @ q, T_ @ qd, s_ps, u)
    assert _rel(a["fk"], b["fk"]) < 1e-11
    assert _rel(a["J"], np.asarray(b["J"]) @ T) < 1e-11
    assert _rel(a["M"], T.T @ np.asarray(b["M"]) @ T) < 1e-11
    for key in ("Cqd", "G", "K"):
        assert _rel(a[key], T.T @ np.asarray(b[key])) < 1e-11, key
    assert _rel(a["D"], T.T @ np.asarray(b["D"]) @ T) < 1e-11
    assert _rel(a["A"], T.T @ np.asarray(b["A"])) < 1e-11
    assert _rel(a["U"], b["U"]) < 1e-11


def test_spline_bases_have_local_control_and_their_smoothness():
    """Clamped B-splines of degree ``p`` sum to one, are >= 0, vanish outside their ``p + 1``
    spans and have continuous derivatives up to order ``p - 1`` at the knots; the Hermite
    functions interpolate values and slopes at their nodes and are C1. On a rod, the body
    Jacobian column of a B-spline coordinate is exactly zero before its support begins."""
    X = jnp.linspace(0.0, 1.0, 201)
    for p in range(1, 6):
        basis = sg.StrainBasis.bspline(("ky",), 8, degree=p)
        B = np.asarray(basis.evaluate(X))[1]
        np.testing.assert_allclose(B.sum(0), 1.0, atol=1e-13)
        assert B.min() >= -1e-15
        knots = sg.models._gvs_basis.clamped_knots(8, p)
        for j in range(8):
            outside = (np.asarray(X) < knots[j]) | (np.asarray(X) > knots[j + p + 1])
            assert np.abs(B[j, outside]).max(initial=0.0) < 1e-30, (p, j)
        f = lambda x, j=3, p=p: sg.StrainBasis.bspline(("ky",), 8, degree=p).evaluate(x[None])[1, j, 0]  # noqa: E731
        for _ in range(p - 1):
            f = jax.grad(f)
        for knot in knots[p + 1 : 8]:  # interior knots: the (p-1)-th derivative is continuous
            left, right = f(jnp.asarray(knot - 1e-7)), f(jnp.asarray(knot + 1e-7))
            assert abs(float(left - right)) < 1e-4 * max(1.0, abs(float(left))), (p, knot)
    hermite = sg.StrainBasis.hermite(("kz",), 3)
    nodes = jnp.asarray([0.0, 0.5, 1.0])
    H = np.asarray(hermite.evaluate(nodes))[2]
    np.testing.assert_allclose(H[0::2], np.eye(3), atol=1e-14)  # values
    np.testing.assert_allclose(H[1::2], 0.0, atol=1e-14)
    slopes = np.asarray(jax.jacfwd(lambda x: hermite.evaluate(x)[2])(nodes * (1 - 1e-12)))  # (6, 3, 3)
    np.testing.assert_allclose(np.einsum("kpp->kp", slopes)[1::2], np.eye(3), atol=1e-9)
    # on a rod: coordinate j of a cubic B-spline with 7 points moves nothing before knot t_j
    params = sg.GVSParams.create(length=[0.3], radius=0.01, density=1000.0, young_modulus=1e5, dtype=jnp.float64)
    model = sg.GVS(params, sg.StrainBasis.bspline(("ky", "kz"), 7, degree=3), num_gauss_points=3)
    knots = sg.models._gvs_basis.clamped_knots(7, 3)
    q = jnp.asarray(np.random.default_rng(3).normal(size=model.num_dofs))
    s_ps = jnp.linspace(0.0, 0.3, 31)
    J = np.asarray(_kinematics(model, q, s_ps)["J"])  # (P, 6, n)
    for j in range(7):
        before = np.asarray(s_ps) < 0.3 * knots[j]
        assert np.abs(J[before][:, :, j]).max(initial=0.0) < 1e-30 and np.abs(J[~before][1:, :, j]).max() > 1e-6, j


def test_magnus_cells_stop_at_the_knots_of_spline_bases():
    """With several knot spans the Gauss rule and the Magnus cells are laid out per span
    (no cell straddles a kink of the strain), so the tip pose converges at about fourth
    order to the ODE integration of the piecewise linear strain, like a polynomial basis.
    Measured: 6.7e-6, 5.8e-7, 4.2e-8 m for 4, 8, 16 points per span (ratios 11.6, 13.8)."""
    rng = np.random.default_rng(4)
    params = sg.GVSParams.create(
        length=[0.3], radius=0.015, tip_radius=[0.008], density=1000.0, young_modulus=1e5, dtype=jnp.float64
    )
    basis = sg.StrainBasis.bspline(None, 6, degree=1)  # piecewise linear strain, 5 spans: kinks at the knots
    q = jnp.asarray(rng.normal(size=basis.num_dofs) * np.repeat([4.0, 4.0, 4.0, 0.05, 0.05, 0.05], 6))
    errors = _tip_errors_against_the_ode(params, basis, q, (4, 8, 16))
    assert errors[-1] < 3e-7 * 0.3, errors
    assert errors[0] / errors[1] > 9 and errors[1] / errors[2] > 9, errors


def test_bad_spline_bases_name_the_field():
    with pytest.raises(ValueError, match="degree"):
        sg.StrainBasis.bspline(None, 8, degree=6)
    with pytest.raises(ValueError, match="degree"):
        sg.StrainBasis("monomial", (1, 1, 1, 0, 0, 0), degree=2)
    with pytest.raises(ValueError, match="control points"):
        sg.StrainBasis.bspline(("ky",), 3, degree=3)
    with pytest.raises(ValueError, match="nodes"):
        sg.StrainBasis.hermite(("ky",), 1)
    with pytest.raises(ValueError, match="Hermite"):
        sg.StrainBasis("hermite", (-1, 4, -1, -1, -1, -1))
    with pytest.raises(ValueError, match="control_points"):
        sg.StrainBasis.bspline(None, {"kq": 4})
    with pytest.raises(ValueError, match="kind"):
        sg.StrainBasis.create(None, 2, kind="bspline")


def test_rectangle_moments_meet_their_closed_forms():
    """Area, second moments, the polar moment (mass) and Saint-Venant's torsion constant
    (stiffness) of solid rectangles: a square's ``J_t = 0.1406 a^4`` (the series value
    0.14058), a thin strip's ``w t^3 / 3 (1 - 0.63 t / w)``, either orientation alike."""
    from sorogym.models._cross_section import rectangle_moments

    mass, stiff = (
        np.asarray(m) for m in rectangle_moments(jnp.asarray([2.0, 0.02, 1.0]), jnp.asarray([2.0, 1e-3, 20.0]))
    )
    w, t = np.array([2.0, 0.02, 1.0]), np.array([2.0, 1e-3, 20.0])
    Iy, Iz = w * t**3 / 12, t * w**3 / 12
    np.testing.assert_allclose(mass[:, 1:], np.stack([Iy, Iz, w * t, w * t, w * t], -1), rtol=1e-14)
    np.testing.assert_allclose(stiff[:, 1:], mass[:, 1:], rtol=0)
    np.testing.assert_allclose(mass[:, 0], Iy + Iz, rtol=1e-14)
    np.testing.assert_allclose(stiff[0, 0], 0.14058 * 2.0**4, rtol=2e-3)
    np.testing.assert_allclose(stiff[1, 0], 0.02 * 1e-9 / 3 * (1 - 0.63 * 0.05), rtol=1e-4)
    np.testing.assert_allclose(stiff[2, 0], 20.0 * 1.0 / 3 * (1 - 0.63 * 0.05), rtol=1e-4)


def test_rectangular_gvs_cantilever_meets_beam_theory():
    """A leaf spring (20 mm x 1 mm, E 5 GPa) clamped at one end: tip deflections under small
    tip forces are ``F L^3 / (3 E I)`` about either axis (``I = w t^3 / 12`` soft,
    ``t w^3 / 12`` stiff), the tip twist under a torque ``M L / (G J_t)`` (exact: the load's
    moments are linear in ``s``, inside the basis); the weight is ``rho w t L g`` and its
    generalized force on the constant bending coordinate ``-rho w t g L^3 / 6``. Only one of
    width and thickness, or a non-positive one, is named at construction."""
    L, w, t, E, nu, rho = 0.05, 0.02, 1e-3, 5e9, 0.35, 1300.0
    params = sg.GVSParams.create(
        length=[L],
        radius=t / 2,
        density=rho,
        young_modulus=E,
        poisson_ratio=nu,
        width=w,
        thickness=t,
        mounting="horizontal",
        dtype=jnp.float64,
    )
    rod = sg.GVS(params, sg.StrainBasis.create(("kx", "ky", "kz", "sx"), {"ky": 1, "kz": 1}))
    q0 = rod.neutral_configuration()
    K, J, grav = jax.jit(lambda m: (m.stiffness_matrix(), m.jacobian(q0, L), m.gravitational_force(q0)))(rod)
    K, J = np.asarray(K), np.asarray(J)  # J: world-frame [angular; linear] rows

    def response(wrench):
        return J @ np.linalg.solve(K, J.T @ wrench)

    G = E / (2 * (1 + nu))
    Jt = w * t**3 * (1 / 3 - 0.21 * (t / w) * (1 - (t / w) ** 4 / 12))
    np.testing.assert_allclose(
        response(np.r_[0, 0, 0, 0, 0, 1e-3])[5], 1e-3 * L**3 / (3 * E * w * t**3 / 12), rtol=1e-10
    )
    np.testing.assert_allclose(
        response(np.r_[0, 0, 0, 0, 1e-3, 0])[4], 1e-3 * L**3 / (3 * E * t * w**3 / 12), rtol=1e-10
    )
    np.testing.assert_allclose(response(np.r_[1e-3, 0, 0, 0, 0, 0])[0], 1e-3 * L / (G * Jt), rtol=1e-10)
    np.testing.assert_allclose(float(grav[1]), -rho * w * t * 9.81 * L**3 / 6, rtol=1e-10)
    with pytest.raises(ValueError, match="thickness"):
        sg.GVSParams.create(length=[L], radius=t, density=rho, young_modulus=E, width=w)
    with pytest.raises(ValueError, match="width"):
        sg.GVSParams.create(length=[L], radius=t, density=rho, young_modulus=E, width=-w, thickness=t)
