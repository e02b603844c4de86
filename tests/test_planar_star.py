"""The planar star (:class:`sorogym.PlanarStar`: a free hub with soft arms in the plane).

Layers: AD identities on a random state (``C qd`` from the Lagrangian, ``G = dU/dq``,
``A = dphi/dq^T``, the line load's damping, momentum as mass times the centre of mass's
velocity); the spatial :class:`~sorogym.BodyTree` brittle star moving in its plane as an
independent oracle (same disc and arms: mass matrix, Coriolis forces, stiffness, tendons);
physical invariants (momentum and energy of a free star under internal tendon forces) and
a closed form with friction (a sliding star stops at ``mu g``).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sorogym as sg
from sorogym.contact import GroundFriction
from sorogym.robots import BrittleStarBody, planar_brittle_star


def _star(gravity=(0.0, 0.0), retardation_time=0.05):
    return planar_brittle_star(BrittleStarBody(retardation_time=retardation_time), gravity=gravity)


def _random_state(model, seed):
    rng = np.random.default_rng(seed)
    scale = np.where(np.arange(model.num_dofs) < 3, 0.5, 10.0)
    return jnp.asarray(rng.normal(size=model.num_dofs) * scale), jnp.asarray(rng.normal(size=model.num_dofs) * scale)


@jax.jit
def _identities(model, q, qd, u):
    lagrangian = lambda q_, v_: 0.5 * v_ @ model.inertia_matrix(q_) @ v_  # noqa: E731
    dM = jax.jvp(model.inertia_matrix, (q,), (qd,))[1]
    C = model.coriolis_matrix(q, qd)
    A = model.actuation_matrix(q)
    load = GroundFriction((0.2, 0.3, 0.6), 0.01)
    M, bias, load_at = model.inertia_bias_and_line_load_map(q, qd, load)
    terms = load_at(qd)
    dforce = jax.jacfwd(lambda v: load_at(v).force)(qd)
    com_rate = jax.jvp(model.centre_of_mass, (q,), (qd,))[1]
    return dict(
        coriolis=(model.coriolis_force(q, qd), dM @ qd - jax.grad(lagrangian)(q, qd)),
        coriolis_matrix=(C @ qd, model.coriolis_force(q, qd)),
        skew=(dM - 2 * C, -(dM - 2 * C).T),
        bias=(bias, model.coriolis_force(q, qd) + model.gravitational_force(q)),
        mass=(M, model.inertia_matrix(q)),
        gravity=(model.gravitational_force(q), jax.grad(model.gravitational_energy)(q)),
        elastic=(model.elastic_force(q), jax.grad(model.elastic_energy)(q)),
        actuation=(A, jax.jacfwd(model.actuation_coordinates)(q).T),
        actuation_force=(model.actuation_force(q, u), A @ jnp.maximum(u, 0.0)),
        load_damping=(terms.damping, -0.5 * (dforce + dforce.T)),
        momentum=(model.linear_momentum(q, qd), model.total_mass * com_rate),
        load_power=(qd @ terms.force, -jnp.abs(qd @ terms.force)),  # friction only dissipates
    )


def test_star_terms_satisfy_ad_identities():
    model = _star(gravity=(0.7, -1.3))
    assert (model.num_dofs, model.num_actuators) == (13, 20)
    q, qd = _random_state(model, 0)
    u = jnp.asarray(np.random.default_rng(1).normal(size=model.num_actuators))
    for name, (ours, ref) in _identities(model, q, qd, u).items():
        scale = max(float(np.abs(ref).max()), 1e-30)
        np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-10 * scale, err_msg=name)
    np.testing.assert_allclose(model.total_mass, 0.04 + 5 * model.arm_mass)


def _embedding(model, tree, q):
    """The spatial tree's configuration of the planar ``q`` (disc level at its rest height,
    every arm's in-plane curvature as its ``kz``) and the velocity map ``P(q)`` ``(26, 13)``
    (the free joint's body twist ``[w, v]`` and the arms' ``(ky, kz)`` rates)."""
    theta, xy = q[0], q[1:3]
    q_sp = np.asarray(tree.neutral_configuration(q.dtype)).copy()
    q_sp[:2] = np.asarray(xy)
    q_sp[3:7] = [np.cos(theta / 2), 0.0, 0.0, np.sin(theta / 2)]
    n_sp, na = tree.num_dofs, model.arm_dofs
    c, s = np.cos(float(theta)), np.sin(float(theta))
    P = np.zeros((n_sp, model.num_dofs))
    P[2, 0] = 1.0  # w_z = theta_dot
    P[3:5, 1:3] = [[c, s], [-s, c]]  # v_b = R^T [x_dot, y_dot]
    for k in range(model.num_arms):
        q_idx, v_idx = tree.coordinate_slices(f"arm{k}")
        for i in range(na):
            q_sp[q_idx[2 * i + 1]] = float(q[3 + k * na + i])
            P[v_idx[2 * i + 1], 3 + k * na + i] = 1.0
    return jnp.asarray(q_sp), jnp.asarray(P)


def test_star_agrees_with_the_spatial_tree_moving_in_its_plane():
    """The spatial BodyTree brittle star (same disc, same two-segment arms, bending about
    both axes) restricted to planar motion: ``M = P^T M_3d P``, ``C qd = P^T (C_3d qd_3d +
    M_3d dP/dt qd)``, the same stiffness, and the planar tendon on the arm's +y side that
    runs to the tip pulls as the spatial tendon at 0 degrees."""
    tree = sg.robots.brittle_star(dtype=jnp.float64)
    base = _star()
    # the same Gauss rule as the tree's arms (the integrals of M along a curved segment
    # depend on it at 1e-4)
    points = tree.rod("arm0").num_quadrature_points
    arm = sg.PlanarPCS(base.arm.params, "pcc", base.arm.actuation, points, floating_base=True)
    model = sg.PlanarStar(arm, 5, base.hub_radius, base.hub_mass, base.hub_inertia)
    q, qd = _random_state(model, 2)
    q_sp, P = _embedding(model, tree, q)
    # dP/dt qd: only v_b = R(theta)^T [x_dot, y_dot] moves with theta
    c, s = np.cos(float(q[0])), np.sin(float(q[0]))
    dRt = np.array([[-s, c], [-c, -s]])
    Pdot_qd = jnp.zeros(tree.num_dofs).at[3:5].set(float(qd[0]) * dRt @ np.asarray(qd[1:3]))
    ours = _planar_terms(model, q, qd)
    M_sp, cor_sp, S_sp, A_sp, tips_sp = _tree_terms(tree, q_sp, P @ qd)
    np.testing.assert_allclose(ours["M"], P.T @ M_sp @ P, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(ours["Cqd"], P.T @ (cor_sp + M_sp @ Pdot_qd), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ours["S"], P.T @ S_sp @ P, rtol=1e-12)
    for k in range(model.num_arms):  # planar tendon 1 (+y, to the tip) = spatial tendon 0 (0 deg)
        np.testing.assert_allclose(ours["A"][:, 4 * k + 1], P.T @ A_sp[:, 4 * k], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ours["tips"], tips_sp, rtol=0, atol=1e-12)


@jax.jit
def _planar_terms(model, q, qd):
    return dict(
        M=model.inertia_matrix(q),
        Cqd=model.coriolis_force(q, qd),
        S=model.stiffness_matrix(),
        A=model.actuation_matrix(q),
        tips=model.arm_tips(q),
    )


@jax.jit
def _tree_terms(tree, q, qd):
    tips = jnp.stack([tree.forward_kinematics(q, tree.rod(b).total_length, body=b)[:2, 3] for b in tree.body_names[1:]])
    return tree.inertia_matrix(q), tree.coriolis_force(q, qd), tree.stiffness_matrix(), tree.actuation_matrix(q), tips


def test_free_star_conserves_momentum_and_energy():
    """No ground, gravity or damping; constant tendon tensions (a conservative load with
    potential ``-u . phi(q)``): linear and angular momentum and ``T + U_e - u . phi`` stay
    constant while the arms flail and the disc spins."""
    model = _star(retardation_time=0.0)
    q, qd = _random_state(model, 3)
    u = jnp.asarray(np.random.default_rng(4).uniform(0.0, 2.0, model.num_actuators))
    y0 = jnp.concatenate([q, qd])

    @jax.jit
    def run(y0):
        ys = sg.sim.rollout_to(model, y0, 0.05, u, solver_dt=2e-5, save_dt=0.01).ys
        n = model.num_dofs

        def invariants(y):
            q_, qd_ = y[:n], y[n:]
            energy = model.kinetic_energy(q_, qd_) + model.elastic_energy(q_) - u @ model.actuation_coordinates(q_)
            return model.linear_momentum(q_, qd_), model.angular_momentum(q_, qd_), energy

        return jax.vmap(invariants)(ys)

    p, L, E = (np.asarray(x) for x in run(y0))
    assert np.abs(p - p[0]).max() < 1e-7 * np.abs(p[0]).max()
    assert np.abs(L - L[0]).max() < 1e-7 * abs(L[0])
    assert np.abs(E - E[0]).max() < 1e-7 * np.abs(E).max()
    assert abs(L[0]) > 1e-5 and np.abs(p[0]).max() > 1e-3  # it does move


def test_sliding_star_stops_at_mu_g():
    """A star sliding on isotropic friction, its whole weight on its arms (``g_n = g
    m_total / m_arms``): its centre of mass decelerates at ``mu g`` along a line, without
    turning (the arms bend back under the drag and spring, so the disc alone does not)."""
    model = _star()
    mu, v0, g = 0.2, 0.3, 9.81
    m_arms = model.num_arms * float(model.arm_mass)
    load = GroundFriction(mu, 1e-3, g * float(model.total_mass) / m_arms)
    qd0 = jnp.zeros(model.num_dofs).at[1].set(v0)
    y0 = jnp.concatenate([jnp.zeros(model.num_dofs), qd0])
    h, steps = 1e-3, 100

    @jax.jit
    def run(y):
        step = lambda y, _: (sg.sim.linear_trapezoid_step(model, y, lambda q, v: jnp.zeros_like(q), h, load), None)  # noqa: E731
        return jax.lax.scan(step, y, None, length=steps)[0]

    q, qd = np.split(np.asarray(run(y0)), 2)
    velocity = np.asarray(model.linear_momentum(q, qd)) / float(model.total_mass)  # of the centre of mass
    np.testing.assert_allclose(velocity[0], v0 - mu * g * h * steps, rtol=2e-3)
    assert abs(velocity[1]) < 1e-9 and abs(qd[0]) < 1e-9  # mirror symmetric about its sliding line


def test_bad_star_input_is_refused():
    arm = _star().arm
    with pytest.raises(ValueError, match="num_arms"):
        sg.PlanarStar(arm, 0, 0.03, 0.04, 1e-5)
    with pytest.raises(ValueError, match="hub_mass"):
        sg.PlanarStar(arm, 5, 0.03, -0.04, 1e-5)
    with pytest.raises(TypeError, match="floating_base"):
        sg.PlanarStar(sg.PlanarPCS(arm.params), 5, 0.03, 0.04, 1e-5)
    with pytest.raises(ValueError, match="tendon_offset"):
        planar_brittle_star(BrittleStarBody(tendon_offset=0.01))
    with pytest.raises(ValueError, match="num_arms"):
        planar_brittle_star(BrittleStarBody(num_arms=2.5))
