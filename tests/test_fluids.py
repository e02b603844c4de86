"""Fluid laws on slender rods, float64 (the test session's default): quadratic (Morison)
drag, buoyancy and added mass against closed forms on straight rods, and an undulating
filament in resistive-force theory (RFT) against the small-amplitude swimming theory.

Closed forms: Morison drag ``1/2 rho C D L U^2`` (normal, projected area) and ``1/2 rho C_t
pi D L U^2`` (axial, wetted perimeter) on a translating rod, ``1/2 rho C_n D w^2 L^3 / 3``
(torque ``L^4 / 4``) on a rod spinning about its base; buoyancy ``rho g pi r^2 L`` and its
torque ``rho g pi r^2 L^2 / 2`` about the base, a frustum's volume for a conical rod, and
minus the model's own gravity force for a neutrally buoyant rod; added mass ``C_a rho pi
r^2 L`` normal to the axis and none along it.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sorogym as sg
from sorogym.contact import (
    Buoyancy,
    MorisonDrag,
    ResistiveForceTheory,
    added_mass_matrix,
    backbone_quadrature,
    fluid_force,
    probe_model,
)
from sorogym.lie import se3

G, RHO, R, L = 9.81, 1000.0, 0.01, 0.3
X_AXIS = np.array([1.0, 0.0, 0.0])


def _floating_rod(gravity=(0.0, 0.0, -G)):
    """A straight rod of 2 x 0.15 m along world +x on a free joint (identity base: the
    joint's body-frame twist ``[w, v]`` is the world one)."""
    params = sg.RodParams.create(
        length=[0.15, 0.15], radius=R, density=RHO, young_modulus=1e6, poisson_ratio=0.5, mounting="horizontal"
    )
    rod = sg.RodBody("rod", sg.PCS(params), joint=sg.Joint.free(), actuated=False)
    return sg.BodyTree([rod], gravity=gravity)


ROD = _floating_rod()
S_ROD, W_ROD = backbone_quadrature([0.15, 0.15], 3)  # exact to degree 5 in s per segment
Q_ROD = ROD.neutral_configuration(jnp.float64)
_rod_probe = jax.jit(lambda q, qd: probe_model(ROD, q, qd, S_ROD, body="rod"))


@jax.jit
def _rod_fluid(laws, q, qd):
    return fluid_force(laws, probe_model(ROD, q, qd, S_ROD, body="rod"), W_ROD)


def _rigid(twist):
    return jnp.zeros(ROD.num_dofs).at[:6].set(jnp.asarray(twist, jnp.float64))


def _assert_force_and_torque(tau, forces, force, torque, rtol=1e-10):
    """Total point force, and the free joint's generalized force (torque about the base,
    force), against closed forms."""
    scale = max(np.abs(force).max(), np.abs(torque).max())
    np.testing.assert_allclose(np.sum(np.asarray(forces), axis=0), force, rtol=rtol, atol=rtol * scale)
    np.testing.assert_allclose(tau[3:6], force, rtol=rtol, atol=rtol * scale)
    np.testing.assert_allclose(tau[:3], torque, rtol=rtol, atol=rtol * scale)


@pytest.mark.parametrize(
    "velocity, current",
    [
        ((0.0, 0.0, 0.4), (0.0, 0.0, 0.0)),  # sideways: 1/2 rho C_n D L U^2
        ((0.4, 0.0, 0.0), (0.0, 0.0, 0.0)),  # along the axis: 1/2 rho C_t pi D L U^2
        ((0.3, -0.2, 0.1), (0.0, 0.0, 0.0)),  # oblique: both parts
        ((0.0, 0.0, 0.0), (0.2, 0.3, -0.1)),  # at rest in a current
    ],
)
def test_morison_drag_on_a_translating_rod_matches_the_closed_forms(velocity, current):
    c_n, c_t, D = 1.1, 0.02, 2 * R
    law = MorisonDrag(RHO, c_n, c_t, current=current)
    tau, forces = _rod_fluid(law, Q_ROD, _rigid((0.0, 0.0, 0.0) + velocity))
    w = np.asarray(velocity) - np.asarray(current)
    w_t = (w @ X_AXIS) * X_AXIS
    w_n = w - w_t
    per_length = -0.5 * RHO * (c_n * D * np.linalg.norm(w_n) * w_n + c_t * np.pi * D * np.linalg.norm(w_t) * w_t)
    _assert_force_and_torque(tau, forces, per_length * L, np.cross(X_AXIS, per_length) * L**2 / 2)
    if velocity == (0.0, 0.0, 0.4):  # the textbook form, by hand
        assert float(forces[:, 2].sum()) == pytest.approx(-0.5 * RHO * c_n * D * L * 0.4**2, rel=1e-10)
    if velocity == (0.4, 0.0, 0.0):
        assert float(forces[:, 0].sum()) == pytest.approx(-0.5 * RHO * c_t * np.pi * D * L * 0.4**2, rel=1e-10)


def test_morison_drag_on_a_rod_spinning_about_its_base_matches_the_closed_form():
    """Point ``s`` moves at ``s w`` normal to the rod: force ``-1/2 rho C_n D w |w| L^3 / 3``,
    torque ``-1/2 rho C_n D w |w| L^4 / 4`` (integrands of degree 2 and 3 in ``s``)."""
    c_n, omega, D = 1.1, -2.5, 2 * R
    tau, forces = _rod_fluid(MorisonDrag(RHO, c_n, 0.3), Q_ROD, _rigid((0.0, 0.0, omega, 0.0, 0.0, 0.0)))
    k = -0.5 * RHO * c_n * D * omega * abs(omega)
    _assert_force_and_torque(tau, forces, np.array([0.0, k * L**3 / 3, 0.0]), np.array([0.0, 0.0, k * L**4 / 4]))


def test_morison_drag_has_finite_zero_gradients_at_zero_relative_velocity():
    """``|w| w`` is C1 with a zero Jacobian at ``w = 0``: in the point velocities (the rod
    moving with the current, and at rest in still water), and finite gradients in the law's
    parameters there."""
    current = jnp.asarray([0.1, -0.2, 0.05])
    law = MorisonDrag(RHO, 1.1, 0.02, current=current)
    probe = _rod_probe(Q_ROD, _rigid((0.0, 0.0, 0.0) + tuple(np.asarray(current))))  # moving with the current

    def generalized(law_, velocities):
        return fluid_force(law_, probe._replace(velocities=velocities), W_ROD)[0]

    jacobian = jax.jit(jax.jacfwd(generalized, argnums=1))
    gradient = jax.jit(jax.grad(lambda l_, v_: jnp.sum(generalized(l_, v_) ** 2)))
    for law_, velocities in ((law, probe.velocities), (MorisonDrag(RHO, 1.1, 0.02), jnp.zeros_like(probe.velocities))):
        jac = jacobian(law_, velocities)
        assert np.all(np.isfinite(jac)) and np.abs(np.asarray(jac)).max() == 0.0
        grads = gradient(law_, velocities)
        assert all(np.all(np.isfinite(np.asarray(x))) for x in jax.tree.leaves(grads))


def test_buoyancy_of_a_straight_rod_and_its_torque_about_the_base():
    """A horizontal rod along +x, gravity -z: ``rho g pi r^2 L`` upward, torque
    ``rho g pi r^2 L^2 / 2`` about -y at the base."""
    law = Buoyancy(RHO, ROD.params.gravity)
    tau, forces = _rod_fluid(law, Q_ROD, jnp.zeros(ROD.num_dofs))
    lift = RHO * G * np.pi * R**2 * L
    _assert_force_and_torque(tau, forces, np.array([0.0, 0.0, lift]), np.array([0.0, -lift * L / 2, 0.0]))


def test_buoyancy_of_a_conical_rod_and_of_a_neutrally_buoyant_bent_rod():
    """A conical GVS rod: straight, the lift is ``rho g`` times the frustums' volume
    ``pi L (r0^2 + r0 r1 + r1^2) / 3``; bent, in a fluid of its own density, the buoyancy's
    generalized force is ``+G(q)`` (it cancels the model's weight in every coordinate; the
    model's 5 Gauss points per link are the probe's)."""
    lengths, r0, r1 = [0.15, 0.1], [0.02, 0.015], [0.015, 0.008]
    params = sg.GVSParams.create(
        length=lengths, radius=r0, tip_radius=r1, density=RHO, young_modulus=1e6, poisson_ratio=0.5, mounting="hanging"
    )
    model = sg.GVS(params, sg.StrainBasis.create(None, order=1))
    s, w = backbone_quadrature(lengths, 5)
    law = Buoyancy(RHO, params.gravity)

    @jax.jit
    def buoyancy_and_gravity(q):
        return fluid_force(law, probe_model(model, q, jnp.zeros_like(q), s), w), model.gravitational_force(q)

    q = jnp.asarray(0.5 * np.random.default_rng(5).normal(size=model.num_dofs))
    (_, forces), _ = buoyancy_and_gravity(jnp.zeros_like(q))
    volume = sum(np.pi * h * (a * a + a * b + b * b) / 3 for h, a, b in zip(lengths, r0, r1))
    np.testing.assert_allclose(np.sum(np.asarray(forces), axis=0), [0.0, 0.0, RHO * G * volume], rtol=1e-12, atol=1e-14)
    (tau, _), expected = buoyancy_and_gravity(q)
    np.testing.assert_allclose(tau, expected, rtol=1e-9, atol=1e-9 * float(jnp.abs(expected).max()))


def test_added_mass_of_a_free_straight_rod_and_its_use_in_the_dynamics():
    """Free-joint block of ``M_a`` (twist ``[w, v]``): with ``m_a = C_a rho pi r^2``,
    ``m_a L (I - x x^T)`` in translation (none along the axis), ``m_a L^3 / 3 (I - x x^T)``
    in rotation, ``m_a L^2 / 2 [x]x`` coupling. Used as ``(M + M_a) qdd = tau``: a uniform
    load per unit length ``f`` (here buoyancy, gravity along ``-(x + y)``) accelerates the
    rod rigidly at ``f / (rho_s A)`` along its axis and ``f / ((rho_s + C_a rho) A)``
    across it."""
    c_a = 1.0

    @jax.jit
    def matrices_and_load():
        probe = probe_model(ROD, Q_ROD, jnp.zeros(ROD.num_dofs), S_ROD, body="rod")
        load = fluid_force(Buoyancy(RHO, (-G, -G, 0.0)), probe, W_ROD)[0]
        return added_mass_matrix(probe, W_ROD, RHO, c_a), ROD.inertia_matrix(Q_ROD), load

    M_a, M, tau = matrices_and_load()
    m_a = c_a * RHO * np.pi * R**2
    P = np.eye(3) - np.outer(X_AXIS, X_AXIS)
    cross = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])  # [x]x
    expected = m_a * np.block([[L**3 / 3 * P, L**2 / 2 * cross], [L**2 / 2 * cross.T, L * P]])
    np.testing.assert_allclose(M_a[:6, :6], expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(M_a, M_a.T, atol=1e-15)
    assert float(jnp.linalg.eigvalsh(M_a).min()) > -1e-12

    qdd = np.linalg.solve(M + M_a, tau)
    rho_s = RHO  # the rod's own density
    accel = np.array([G * RHO / rho_s, G * RHO / (rho_s + c_a * RHO), 0.0])
    np.testing.assert_allclose(qdd[3:6], accel, rtol=1e-10)
    np.testing.assert_allclose(qdd[:3], 0.0, atol=1e-9)
    np.testing.assert_allclose(qdd[6:], 0.0, atol=1e-9)


def test_several_fluid_laws_sum():
    rng = np.random.default_rng(2)
    q = np.array(Q_ROD)
    q_idx, _ = ROD.coordinate_slices("rod")
    quat = rng.normal(size=4)
    q[q_idx[:7]] = np.concatenate([rng.normal(size=3), quat / np.linalg.norm(quat)])
    q[q_idx[7:]] = 0.5 * rng.normal(size=len(q_idx) - 7)
    qd = jnp.asarray(0.3 * rng.normal(size=ROD.num_dofs))
    laws = (
        ResistiveForceTheory(0.7, 1.6, current=(0.1, 0.0, 0.2)),
        MorisonDrag(RHO, 1.1, 0.02, current=(0.0, -0.1, 0.0)),
        Buoyancy(RHO, ROD.params.gravity),
    )

    @jax.jit
    def together_and_apart(q, qd):
        probe = probe_model(ROD, q, qd, S_ROD, body="rod")
        return fluid_force(laws, probe, W_ROD), [fluid_force(law, probe, W_ROD) for law in laws], probe

    (tau, forces), parts, probe = together_and_apart(jnp.asarray(q), qd)
    np.testing.assert_allclose(tau, sum(p[0] for p in parts), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(forces, sum(p[1] for p in parts), rtol=1e-12, atol=1e-14)
    assert min(float(jnp.abs(p[1]).max()) for p in parts) > 1e-3
    with pytest.raises(ValueError, match="laws"):
        fluid_force((), probe, W_ROD)


def test_bad_fluid_parameters_raise_naming_the_field():
    with pytest.raises(ValueError, match="density"):
        MorisonDrag(-1.0, 1.0)
    with pytest.raises(ValueError, match="normal_coefficient"):
        MorisonDrag(RHO, np.inf)
    with pytest.raises(ValueError, match="tangential_coefficient"):
        MorisonDrag(RHO, 1.0, np.nan)
    with pytest.raises(ValueError, match="current"):
        MorisonDrag(RHO, 1.0, current=(0.0, 1.0))
    with pytest.raises(ValueError, match="current"):
        MorisonDrag(RHO, 1.0, current=(0.0, np.nan, 1.0))
    with pytest.raises(ValueError, match="density"):
        Buoyancy(-RHO)
    with pytest.raises(ValueError, match="gravity"):
        Buoyancy(RHO, gravity=(0.0, -G))
    probe = _rod_probe(Q_ROD, jnp.zeros(ROD.num_dofs))
    with pytest.raises(ValueError, match="density"):
        added_mass_matrix(probe, W_ROD, -RHO)
    with pytest.raises(ValueError, match="coefficient"):
        added_mass_matrix(probe, W_ROD, RHO, np.nan)


# -- a swimmer in Stokes flow ----------------------------------------------------------------
#
# A free filament of N = 2 whole wavelengths (lambda = 0.1 m, k = 2 pi / lambda) whose
# curvature is prescribed as the travelling wave kappa(s, t) = A sin(k s - omega t) (bending
# in the x-y plane, wave running base to tip at V = omega / k, period 1 s). Its lateral
# displacement is y = -b sin(k s - omega t) with slope amplitude b k = A / k. Without
# inertia, at each instant the free joint's twist makes the total RFT force and torque
# vanish; the base pose follows that body-frame twist (fourth-order Magnus steps, the
# model's retraction). Theory (small amplitude, r = c_n / c_t):
#
# * infinite filament (Gray & Hancock 1955; Lighthill 1975, ch. 3): U / V = (r - 1) (b k)^2 / 2,
#   against the wave (Taylor's 1951 sheet, U = omega k b^2 / 2, is the case r = 2);
# * finite filament of whole wavelengths, free to recoil: the lateral force and moment balance
#   (c_n y_t orthogonal to 1 and s on [0, L]) removes the part of sin(k s) along s - L / 2, and
#   the mean thrust -(r - 1) c_t <y_t y_s> then gives U / V = (r - 1) (b k)^2 / 2 (1 - 12 / (k L)^2),
#   7.6 % below the infinite filament for N = 2;
# * next order, infinite filament: exact RFT for a tangent angle a cos(k s - omega t) (material
#   sliding along the travelling shape at omega / k): U / (omega / k) = C (r - 1) S / (1 + (r - 1) S)
#   with C = <cos(theta)> and S = <sin(theta)^2>; this sets the O((b k)^2) relative correction.

WAVELENGTH, WAVES, LINKS, ORDER = 0.1, 2, 4, 5
WAVENUMBER = 2 * np.pi / WAVELENGTH
SWIM_LENGTH = WAVES * WAVELENGTH
OMEGA, PERIOD, STEPS = 2 * np.pi, 1.0, 32
RECOIL = 1.0 - 12.0 / (WAVENUMBER * SWIM_LENGTH) ** 2


def _swimmer():
    params = sg.RodParams.create(
        length=[SWIM_LENGTH / LINKS] * LINKS,
        radius=0.002,
        density=RHO,
        young_modulus=1e6,
        poisson_ratio=0.5,
        mounting="horizontal",
    )
    basis = sg.StrainBasis.create(("kz",), order=ORDER, kind="legendre")
    rod = sg.RodBody("body", sg.GVS(params, basis, num_gauss_points=6), joint=sg.Joint.free(), actuated=False)
    return sg.BodyTree([rod], gravity=(0.0, 0.0, 0.0))


SWIMMER = _swimmer()
SWIM_Q, SWIM_V = SWIMMER.coordinate_slices("body")  # free joint (7 / 6), then the rod's coordinates
S_SWIM, W_SWIM = backbone_quadrature([SWIM_LENGTH / LINKS] * LINKS, 8)


def _legendre_coefficients(f) -> np.ndarray:
    """Coefficients of ``f(s)`` in the links' Legendre bases (L2 projection, one link after
    the other: the rod's coordinate order)."""
    x, w = np.polynomial.legendre.leggauss(32)
    basis = np.stack([np.polynomial.legendre.Legendre.basis(j)(x) for j in range(ORDER + 1)])
    h = SWIM_LENGTH / LINKS
    scale = (2 * np.arange(ORDER + 1) + 1) / 2
    return np.concatenate([scale * (basis * f(h * (i + (x + 1) / 2)) * w).sum(axis=1) for i in range(LINKS)])


SIN_K, COS_K = (_legendre_coefficients(f) for f in (lambda s: np.sin(WAVENUMBER * s), lambda s: np.cos(WAVENUMBER * s)))


@jax.jit
def _body_twists(rft, q, qd):
    """Free-joint twists ``(T, 6)`` for which the total RFT force and torque on the swimmer
    vanish, at configurations ``(T, nq)`` with shape rates ``(T, n)`` (their free-joint
    entries ignored): the joint's generalized force (base wrench) is affine in its twist."""

    def one(q, qd):
        probe = probe_model(SWIMMER, q, qd.at[SWIM_V[:6]].set(0.0), S_SWIM, body="body")
        free = probe.jacobians[:, :, SWIM_V[:6]]  # (P, 3, 6)

        def wrench(twist):
            moved = probe._replace(velocities=probe.velocities + free @ twist)
            return fluid_force(rft, moved, W_SWIM)[0][SWIM_V[:6]]

        zero = jnp.zeros(6, q.dtype)
        return jnp.linalg.solve(jax.jacfwd(wrench)(zero), -wrench(zero))

    return jax.vmap(one)(q, qd)


@jax.jit
def _advance(q0, increments):
    return jax.lax.scan(lambda q, dq: (SWIMMER.retract(q, dq), None), q0, increments)[0]


def _shape(amplitude, t):
    """Rod coordinates ``(T, k)`` and their rates of the curvature wave at times ``t``."""
    phase = OMEGA * np.asarray(t)[:, None]
    q = amplitude * (np.cos(phase) * SIN_K - np.sin(phase) * COS_K)
    qd = amplitude * OMEGA * (-np.sin(phase) * SIN_K - np.cos(phase) * COS_K)
    return q, qd


def _states(amplitude, t, base=None):
    q_shape, qd_shape = _shape(amplitude, t)
    q = np.tile(np.asarray(SWIMMER.neutral_configuration(jnp.float64)), (len(t), 1))
    if base is not None:
        q[:, SWIM_Q[:7]] = base
    q[:, SWIM_Q[7:]] = q_shape
    qd = np.zeros((len(t), SWIMMER.num_dofs))
    qd[:, SWIM_V[6:]] = qd_shape
    return jnp.asarray(q), jnp.asarray(qd)


def _swim_one_period(rft, slope):
    """Net displacement ``(3,)`` [m] of the base over one period and the change of its
    quaternion, for the slope amplitude ``b k = slope``."""
    amplitude = slope * WAVENUMBER  # A = (b k) k
    h = PERIOD / STEPS
    nodes = (np.arange(STEPS)[:, None] + np.array([0.5 - np.sqrt(3) / 6, 0.5 + np.sqrt(3) / 6])) * h
    twists = _body_twists(rft, *_states(amplitude, nodes.ravel())).reshape(STEPS, 2, 6)
    a, b = twists[:, 0], twists[:, 1]
    magnus = h / 2 * (a + b) + np.sqrt(3) / 12 * h**2 * jax.vmap(se3.bracket)(a, b)
    q_shape = _shape(amplitude, np.arange(STEPS + 1) * h)[0]
    increments = np.zeros((STEPS, SWIMMER.num_dofs))
    increments[:, SWIM_V[:6]] = magnus
    increments[:, SWIM_V[6:]] = np.diff(q_shape, axis=0)
    q0 = _states(amplitude, [0.0])[0][0]
    qT = _advance(q0, jnp.asarray(increments))
    shift = np.asarray(qT - q0)
    assert np.abs(shift[SWIM_Q[7:]]).max() < 1e-12  # the shape is back
    return shift[SWIM_Q[:3]], shift[SWIM_Q[3:7]]


def _exact_infinite(r, slope):
    phi = np.linspace(0.0, 2 * np.pi, 4096, endpoint=False)
    C, S = np.mean(np.cos(slope * np.cos(phi))), np.mean(np.sin(slope * np.cos(phi)) ** 2)
    return C * (r - 1) * S / (1 + (r - 1) * S)


def test_swimmer_twist_does_not_depend_on_where_the_swimmer_is():
    """RFT without a current is invariant under rigid motions, so the body-frame twist
    depends on the shape alone (what lets the swimmer test evaluate it at the identity)."""
    rng = np.random.default_rng(7)
    t = np.linspace(0.0, PERIOD, 2 * STEPS, endpoint=False)
    quat = rng.normal(size=4)
    base = np.concatenate([rng.normal(size=3), quat / np.linalg.norm(quat)])
    rft = ResistiveForceTheory(1.0, 2.0)
    here = _body_twists(rft, *_states(0.2 * WAVENUMBER, t))
    there = _body_twists(rft, *_states(0.2 * WAVENUMBER, t, base))
    np.testing.assert_allclose(there, here, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("ratio", [2.0, 1.5])
def test_undulating_filament_swims_at_the_small_amplitude_rft_speed(ratio):
    """Mean speed over one period at slope amplitudes b k = 0.1 and 0.2 (theory above).

    Measured (r = 2 / 1.5): against the finite-filament leading order, -0.95 % / -0.72 % at
    b k = 0.1 and -3.7 % / -2.9 % at 0.2, i.e. -0.94 / -0.71 (b k)^2 (the next-order
    relative correction of the infinite filament is -1.0 / -0.75 (b k)^2); against the
    exact infinite-filament RFT times the recoil factor, +0.03 % to +0.15 %. Tolerances:
    2 % at b k = 0.1, 5 % at 0.2, the deviation shrinking as (b k)^2 (ratio 3 to 5 between
    the two amplitudes), 0.5 % against the next-order form; the infinite filament's leading
    order within 10 % at b k = 0.1 (the recoil's 7.6 % included). The swimmer swims
    straight (no net rotation over a period), against the wave; its mean axis is tilted
    from the base's initial axis by about b k, so the speed is the net displacement's
    magnitude over the period."""
    rft = ResistiveForceTheory(1.0, ratio)
    V = OMEGA / WAVENUMBER
    deviations = []
    for slope, tolerance in ((0.1, 0.02), (0.2, 0.05)):
        shift, turn = _swim_one_period(rft, slope)
        assert np.abs(turn).max() < 1e-12 and abs(shift[2]) < 1e-12
        assert shift[0] < 0.0  # against the wave
        speed = np.linalg.norm(shift) / PERIOD / V
        leading = (ratio - 1) * slope**2 / 2
        deviation = speed / (leading * RECOIL) - 1.0
        assert abs(deviation) < tolerance, (slope, speed, leading * RECOIL)
        assert abs(speed / (_exact_infinite(ratio, slope) * RECOIL) - 1.0) < 0.005
        if slope == 0.1:
            assert abs(speed / leading - 1.0) < 0.10
        deviations.append(deviation)
    assert 3.0 < deviations[1] / deviations[0] < 5.0
