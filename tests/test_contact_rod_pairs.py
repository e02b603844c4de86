"""Rod-rod contact (float64): two free rods of one tree, one pressed across the other (the
closed-form depth and force), the frictionless force as minus the gradient of the penalty
energy along the retraction, and zero net force and moment of every pair on bent rods in
random poses."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sorogym as sg
from sorogym.contact import ContactLaw, probe_model, rod_pair_contact

K, R = 1e4, 0.01
S_A, S_B = jnp.linspace(0.0, 0.3, 31), jnp.linspace(0.0, 0.3, 13)


def _two_rods():
    """Rod ``a`` along world x at the origin, rod ``b`` along world y crossing above its
    middle (both horizontal PCS rods of 2 x 0.15 m, radius 1 cm, free, no gravity)."""
    params = sg.RodParams.create(
        length=[0.15, 0.15], radius=R, density=1000.0, young_modulus=1e6, poisson_ratio=0.5, mounting="horizontal"
    )
    rod = sg.PCS(params)
    yaw = (np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4))  # +x -> +y
    bodies = [
        sg.RodBody("a", rod, joint=sg.Joint.free(), actuated=False),
        sg.RodBody("b", rod, joint=sg.Joint.free((0.15, -0.15, 2 * R), yaw), actuated=False),
    ]
    return sg.BodyTree(bodies, gravity=(0.0, 0.0, 0.0))


TREE = _two_rods()
B_HEIGHT = TREE.num_positions // 2 + 2  # q: [a's base position, quaternion, strains, b's ...]


@jax.jit
def _contact(q, qd, friction=0.0):
    law = ContactLaw(K, damping=0.0, friction=friction)
    a, b = probe_model(TREE, q, qd, S_A, body="a"), probe_model(TREE, q, qd, S_B, body="b")
    return rod_pair_contact(law, a, b), a, b


def test_crossed_rods_press_with_the_closed_form_force():
    delta = 1e-3
    q = TREE.neutral_configuration(jnp.float64).at[B_HEIGHT].add(-delta)
    (tau, forces, f_n, depth), a, _ = _contact(q, jnp.zeros(TREE.num_dofs))
    assert float(jnp.max(depth)) == pytest.approx(delta, rel=1e-9)
    touching = np.flatnonzero(np.asarray(depth) > 0)
    np.testing.assert_array_equal(touching, [15])  # a's middle point, under b's axis
    np.testing.assert_allclose(np.asarray(forces[15]), [0.0, 0.0, -K * delta], atol=1e-12)
    # free joints [w, v] in body frames: a (identity) is pushed down, b (yawed) up
    np.testing.assert_allclose(np.asarray(tau[3:6]), [0.0, 0.0, -K * delta], atol=1e-12)
    np.testing.assert_allclose(
        np.asarray(tau[TREE.num_dofs // 2 + 3 : TREE.num_dofs // 2 + 6]), [0.0, 0.0, K * delta], atol=1e-12
    )


def _random_state(seed):
    """b lowered 8 mm onto a, both slightly turned and bent (about 1 mm of deflection)."""
    rng = np.random.default_rng(seed)
    n = TREE.num_dofs
    rod_scales = [0.01] * 3 + [0.001] * 3 + [0.1, 0.1, 0.1, 0.001, 0.001, 0.001] * 2  # free [w, v], strains
    q0 = TREE.neutral_configuration(jnp.float64).at[B_HEIGHT].add(-0.008)
    q = TREE.retract(q0, jnp.asarray(rng.normal(size=n) * np.tile(rod_scales, 2)))
    return q, jnp.asarray(rng.normal(size=n))


def test_frictionless_rod_contact_is_minus_the_gradient_of_the_penalty_energy():
    q, qd = _random_state(1)
    law = ContactLaw(K, damping=0.0, friction=0.0)

    def energy(dq):
        qq = TREE.retract(q, dq)
        a, b = probe_model(TREE, qq, qd, S_A, body="a"), probe_model(TREE, qq, qd, S_B, body="b")
        return 0.5 * K * jnp.sum(jnp.maximum(rod_pair_contact(law, a, b)[3], 0.0) ** 2)

    (tau, _, _, depth), _, _ = _contact(q, qd)
    expected = -jax.jit(jax.grad(energy))(jnp.zeros(TREE.num_dofs))
    assert np.sum(np.asarray(depth) > 0) >= 1
    np.testing.assert_allclose(tau, expected, rtol=1e-8, atol=1e-8 * float(jnp.max(jnp.abs(tau))))


@functools.partial(jax.jit, static_argnums=(2, 3))
def _world_wrench(q, tau, body, offset):
    """Force and moment about the world origin of the free joint's generalized force."""
    pose = TREE.forward_kinematics(q, 0.0, body=body)
    R_, p = pose[:3, :3], pose[:3, 3]
    moment, force = R_ @ tau[offset : offset + 3], R_ @ tau[offset + 3 : offset + 6]
    return force, moment + jnp.cross(p, force)


def test_rod_pair_forces_have_zero_net_force_and_moment():
    """Frictionless, on bent rods in random poses: the force on A's point and its reaction
    at B's chain point act along one line."""
    half = TREE.num_dofs // 2
    for seed in range(3):
        q, qd = _random_state(seed)
        (tau, forces, _, depth), _, _ = _contact(q, qd)
        assert np.sum(np.asarray(depth) > 0) >= 1
        fa, ma = _world_wrench(q, tau, "a", 0)
        fb, mb = _world_wrench(q, tau, "b", half)
        scale = float(jnp.max(jnp.abs(forces)))
        np.testing.assert_allclose(np.asarray(fa + fb), 0.0, atol=1e-10 * scale)
        np.testing.assert_allclose(np.asarray(ma + mb), 0.0, atol=1e-10 * scale)
