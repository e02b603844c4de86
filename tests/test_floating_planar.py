"""The planar PCS rod on a floating base (``PlanarPCS(..., floating_base=True)``).

Layers: AD identities (Jacobians of the forward kinematics, ``C qd`` from the Lagrangian,
``G = dU/dq``, point forces as ``J^T f``), physical invariants (linear momentum and
energy of a free rod), and soromox 0.5.0's floating-base ``PlanarPCS`` as an independent
oracle on randomised rods (same coordinates ``[theta, x, y, q_rod]``, same velocities).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _models import model_terms, random_params, tendon_offsets
from _oracle_blocks import coordinate_kinds, rel_per_block
from _oracles import oracle

import sorogym as sg
from sorogym.testing import soromox_twin


def _floating(seed: int, num_segments: int = 2, active=None, tendons: bool = False, mount=None):
    rng = np.random.default_rng(seed)
    params = random_params(rng, num_segments, planar=True)
    rotation, position = (0.0, (0.0, 0.0)) if mount is None else mount
    params = params.replace(base_rotation=jnp.asarray(rotation), base_position=jnp.asarray(position))
    actuation = sg.Tendons(tendon_offsets(rng, 3, num_segments, True)) if tendons else None
    model = sg.PlanarPCS(params, active_strains=active, actuation=actuation, floating_base=True)
    n = model.num_dofs
    scale = np.where(np.arange(n) < 3, 1.0, 2.0)
    q = jnp.asarray(rng.normal(size=n) * scale)
    qd = jnp.asarray(rng.normal(size=n) * scale)
    return model, q, qd


@jax.jit
def _identities(model, q, qd):
    s = 0.6 * model.total_length
    fk = lambda q_: model.forward_kinematics(q_, s)  # noqa: E731
    J = model.jacobian(q, s)
    dfk = jax.jacfwd(fk)(q)
    lagrangian = lambda q_, v_: 0.5 * v_ @ model.inertia_matrix(q_) @ v_  # noqa: E731
    dM = jax.jvp(model.inertia_matrix, (q,), (qd,))[1]
    s_ps = jnp.stack([0.2 * model.total_length, model.total_length])
    forces = jnp.stack([jnp.array([0.3, -1.1]), jnp.array([-0.7, 0.4])]).astype(q.dtype)
    _, apply = model.point_force_map(q, s_ps)
    J_ps = model.jacobian_batched(q, s_ps)
    return dict(
        position=(dfk[:2, 2], J[1:]),
        angle=(dfk[1, 0] * fk(q)[0, 0] - dfk[0, 0] * fk(q)[1, 0], J[0]),
        coriolis=(model.coriolis_force(q, qd), dM @ qd - jax.grad(lagrangian)(q, qd)),
        coriolis_matrix=(model.coriolis_matrix(q, qd) @ qd, model.coriolis_force(q, qd)),
        gravity=(model.gravitational_force(q), jax.grad(model.gravitational_energy)(q)),
        point_forces=(apply(forces), jnp.einsum("pcn,pc->n", J_ps[:, 1:], forces)),
    )


@pytest.mark.parametrize("seed,segments", [(0, 1), (1, 3)])
def test_floating_terms_satisfy_ad_identities(seed, segments):
    model, q, qd = _floating(seed, segments, mount=(0.4, (0.02, -0.01)))
    assert model.num_dofs == 3 + 3 * segments
    assert model.strain_names[:3] == ("base.theta", "base.x", "base.y")
    for name, (ours, ref) in _identities(model, q, qd).items():
        ours, ref = np.asarray(ours), np.asarray(ref)
        assert np.abs(ours - ref).max() <= 1e-10 * max(1.0, np.abs(ref).max()), name


def test_base_coordinates_carry_no_stiffness_and_tendons_push_no_base():
    model, q, _ = _floating(2, 2, tendons=True)
    K, D = np.asarray(model.stiffness_matrix()), np.asarray(model.damping_matrix())
    assert np.all(K[:3] == 0.0) and np.all(D[:3] == 0.0)
    assert np.all(np.diag(K)[3:] > 0.0)
    # internal tendon tension: zero net force and torque on the free body
    A = np.asarray(jax.jit(lambda m, q_: m.actuation_matrix(q_))(model, q))
    assert A.shape == (model.num_dofs, 3)
    assert np.abs(A[:3]).max() < 1e-12 * np.abs(A).max()


def test_free_rod_conserves_momentum_and_energy():
    """No gravity, no damping, no input: the linear momentum (the generalized momentum of
    the cyclic coordinates x, y) and the energy stay constant over a tumbling flight."""
    model, q, qd = _floating(3, 2)
    p = model.params.replace(gravity=jnp.zeros(2), damping=jnp.zeros(2))
    model = model.with_params(p)
    y0 = jnp.concatenate([q, qd])

    @jax.jit
    def run(y0):
        ys = sg.sim.rollout_to(model, y0, 0.05, jnp.zeros(model.num_actuators), solver_dt=2e-5, save_dt=0.01).ys
        n = model.num_dofs

        def invariants(y):
            q_, qd_ = y[:n], y[n:]
            M = model.inertia_matrix(q_)
            return (M @ qd_)[1:3], 0.5 * qd_ @ M @ qd_ + model.elastic_energy(q_)

        return jax.vmap(invariants)(ys)

    momentum, energy = (np.asarray(x) for x in run(y0))
    assert np.abs(momentum - momentum[0]).max() < 1e-7 * np.abs(momentum[0]).max()  # truncation of the solver
    assert np.abs(energy - energy[0]).max() < 1e-7 * energy[0]
    assert np.abs(momentum[0]).max() > 1e-3  # it does fly


def test_spatial_floating_base_is_refused():
    params = sg.RodParams.create(length=[0.1], radius=0.01, density=1e3, young_modulus=1e6)
    with pytest.raises(ValueError, match="floating_base"):
        sg.PCS(params, floating_base=True)


@pytest.mark.oracle
@pytest.mark.parametrize("seed,segments,active", [(4, 2, None), (5, 3, "pcc")])
def test_floating_planar_pcs_agrees_with_soromox(seed, segments, active):
    oracle("soromox")
    model, q, qd = _floating(seed, segments, active=active, tendons=True)
    rob, combine = soromox_twin(model)
    s = jnp.asarray(0.73 * float(model.total_length))
    ours = model_terms(model, q, qd, s)
    theirs = dict(
        J=rob.jacobian(q, s),
        M=rob.inertia_matrix(q),
        # soromox 0.5.0 has no floating-base planar Coriolis term: its C qd from its own M
        Cqd=jax.jvp(rob.inertia_matrix, (q,), (qd,))[1] @ qd
        - jax.grad(lambda q_: 0.5 * qd @ rob.inertia_matrix(q_) @ qd)(q),
        G=rob.gravitational_force(q),
        K=rob.elastic_force(q),
        D=rob.damping_matrix(q),
        A=rob.actuation_matrix(q) @ combine,
    )
    g = np.asarray(ours.pop("fk"))
    pose = np.asarray(rob.forward_kinematics(q, s))  # [theta, x, y]
    assert np.abs(np.array([g[0, 2], g[1, 2]]) - pose[1:]).max() < 1e-12
    assert abs(np.angle(np.exp(1j * (np.arctan2(g[1, 0], g[0, 0]) - pose[0])))) < 1e-12
    # per block: the base angle, x and y, and the angular and linear strains apart (J's rows,
    # the pose entries and the actuators each a block of their own)
    kinds = coordinate_kinds(model)
    labels = dict(J=(None, kinds), M=(kinds, kinds), Cqd=(kinds,), G=(kinds,), K=(kinds,), D=(kinds, kinds))
    labels["A"] = (kinds, None)
    for key, ref in theirs.items():
        # soromox's Gauss nodes carry ~5e-8 relative error (see test_oracle_soromox)
        assert rel_per_block(ours[key], ref, labels[key]) <= 1e-6, key
