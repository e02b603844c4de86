"""Model-contract identities of a :class:`~sorogym.BodyTree` by AD, shared by the random
trees of ``test_tree.py`` and the named robots of ``test_tree_robots.py`` (one compiled
function per tree structure, reused across states)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


def random_state(tree, rng, scale=0.4):
    q = tree.retract(tree.neutral_configuration(), jnp.asarray(scale * rng.normal(size=tree.num_dofs)))
    return q, jnp.asarray(rng.normal(size=tree.num_dofs))


@jax.jit
def _terms(tree, q, qd, u):
    M, cor, grav = tree.dynamical_terms(q, qd)
    return dict(
        M=M,
        cor=cor,
        grav=grav,
        C=tree.coriolis_matrix(q, qd),
        K=tree.elastic_force(q),
        D=tree.damping_matrix(),
        A=tree.actuation_matrix(q),
        tau=tree.generalized_force(q, u),
        fd=tree.forward_dynamics(0.0, tree.pack_state(q, qd), (u,)),
        Mdot=jax.jvp(tree.inertia_matrix, (q,), (tree.configuration_rate(q, qd),))[1],
        closure=tree.constraint_acceleration(q, qd),
    )


def _rel(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)


@jax.jit
def _derivatives(tree, q, qd, dvs, u):
    """The kinetic energy summed from the propagated body twists (not from J) at ``qd``,
    and derivatives of U_g, U_e and the actuator coordinates along the retraction in the
    directions ``dvs`` ``(k, n)``."""
    diag, full = tree._mass_points(q, qd, True)
    kinetic = sum(0.5 * jnp.sum(m * f.cols[:, f.length] ** 2) for f, m, _ in diag)
    kinetic += sum(
        0.5 * jnp.einsum("dx,dex,ex->", f.cols[:, f.length], I6, f.cols[:, f.length]) for f, I6, _, _, _ in full
    )

    def along(f):
        one = jnp.ones((), q.dtype)
        return jax.vmap(lambda dv: jax.jvp(lambda e: f(tree.retract(q, e * dv)), (0 * one,), (one,))[1])(dvs)

    rates = [along(f) for f in (tree.gravitational_energy, tree.elastic_energy, tree.actuation_coordinates)]
    return kinetic, *rates, tree.actuation.effort(u)


def check_contract_identities(tree, seed: int) -> None:
    """M symmetric positive definite, dM/dt - 2C skew, C qd fused, the kinetic energy of the
    propagated twists, G, K and A as gradients along the retraction, fused forward dynamics
    (the KKT system of the closures for a closed chain)."""
    rng = np.random.default_rng(seed)
    q, qd = random_state(tree, rng)
    u = jnp.asarray(rng.uniform(0.0, 2.0, tree.num_actuators))
    t = _terms(tree, q, qd, u)
    M = np.asarray(t["M"])
    assert np.abs(M - M.T).max() <= 1e-14 * np.abs(M).max()
    assert np.linalg.eigvalsh(M).min() > 0
    skew = np.asarray(t["Mdot"] - 2 * t["C"])
    assert np.abs(skew + skew.T).max() < 1e-11 * np.abs(t["Mdot"]).max()
    assert _rel(t["C"] @ qd, t["cor"]) < 1e-12
    dvs = jnp.asarray(rng.normal(size=(2, tree.num_dofs)))
    kinetic, dUg, dUe, dphi, effort = _derivatives(tree, q, qd, dvs, u)
    assert abs(kinetic - 0.5 * qd @ M @ qd) < 1e-12 * kinetic  # twists propagated apart from J
    for k in range(2):
        assert abs(dUg[k] - t["grav"] @ dvs[k]) < 1e-11 * np.abs(t["grav"]).sum()
        assert abs(dUe[k] - t["K"] @ dvs[k]) < 1e-11 * np.abs(t["K"]).sum()
        assert _rel(dphi[k], t["A"].T @ dvs[k]) < 1e-11
    assert _rel(t["tau"], t["A"] @ effort) < 1e-13
    rhs = t["tau"] - t["cor"] - t["grav"] - t["K"] - t["D"] @ qd
    _, qdd = tree.split_state(t["fd"])
    G, gamma = (np.asarray(x) for x in t["closure"])
    c = G.shape[0]
    kkt = np.block([[M, -G.T], [G, np.zeros((c, c))]])  # closed chains: M qdd = rhs + G^T lam, G qdd = gamma
    assert _rel(qdd, np.linalg.solve(kkt, np.concatenate([rhs, gamma]))[: tree.num_dofs]) < 1e-9
    assert _rel(tree.split_state(t["fd"])[0], tree.configuration_rate(q, qd)) < 1e-15


@jax.jit
def _closure_derivatives(tree, q, qd):
    """The closures' ``(phi, G, dG/dt qd)`` and, by AD along the retraction, ``dphi/dq . qd``
    and the second derivative of ``phi`` along ``t -> retract(q, t qd)``-type curves."""
    phi, G, rate = tree.constraint_terms_and_rate(q, qd)
    one = jnp.ones((), q.dtype)

    def along(e):  # phi on the curve q(e) with q(0) = q, dq/de = qd in velocity coordinates
        return tree.constraint_terms(tree.retract(q, e * qd))[0]

    first = jax.jvp(along, (0 * one,), (one,))[1]
    second = jax.jvp(lambda e: jax.jvp(along, (e,), (one,))[1], (0 * one,), (one,))[1]
    return phi, G, rate, first, second


def check_closure_derivatives(tree, seed: int) -> None:
    """``G qd = dphi/dt`` and ``dG/dt qd`` against AD on random states: on vector-space
    configurations the second derivative of ``phi`` along ``q + e qd`` is ``dG/dt qd``
    (``d/de (G(q + e qd) qd)``)."""
    rng = np.random.default_rng(seed)
    q, qd = random_state(tree, rng)
    phi, G, rate, first, second = _closure_derivatives(tree, q, qd)
    assert G.shape == (tree.num_constraints, tree.num_dofs)
    assert _rel(G @ qd, first) < 1e-12
    if tree.num_positions == tree.num_dofs:
        assert _rel(rate, second) < 1e-10
