"""Residual learning (``scripts/reproduce_residual.py``, paper App. D-B) in miniature: the
box of eq. 12 follows the conical arm's links; projected Adam through the differentiable
equilibrium recovers most of a known unmodelled generalized force while staying in the
box; the eq. 13 network fits a known smooth map."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from _scripts import load_script

from sorogym.robots import conical_arm_markers, conical_tendon_arm

_residual = load_script("reproduce_residual")
fit_network, optimal_residuals, residual_bounds, split = (
    _residual.fit_network,
    _residual.optimal_residuals,
    _residual.residual_bounds,
    _residual.split,
)


def test_bounds_follow_the_links_and_the_split_is_90_10():
    model = conical_tendon_arm(dtype=jnp.float64)
    lower, upper = residual_bounds(model)
    link0 = np.array([name.startswith("seg0.") for name in model.coordinate_names])
    assert link0.sum() == 6 and (~link0).sum() == 2
    np.testing.assert_array_equal(np.asarray(upper), np.where(link0, 1.0, 0.01))
    np.testing.assert_array_equal(np.asarray(lower), -np.asarray(upper))
    train, test = split(22, seed=0)
    assert len(train) == 20 and len(test) == 2 and not set(train) & set(test)
    np.testing.assert_array_equal(np.sort(np.concatenate([train, test])), np.arange(22))


@eqx.filter_jit
def _loads_and_markers(model, q, u):
    """``tau_ext`` holding each configuration under its tensions, and its markers."""
    return jax.vmap(
        lambda q_, u_: (model.potential_force(q_) - model.actuation_force(q_, u_), conical_arm_markers(model, q_))
    )(q, u)


def test_optimal_residual_reduces_the_marker_error_inside_the_box():
    """Data: prescribed "true" configurations of the arm under 4 small tension pairs; the
    known unmodelled generalized force is the one that holds them there,
    ``tau_true = G + K - A u`` (no noise). The box is tight on the elongation coordinate,
    where ``tau_true`` exceeds it, so the projection is active."""
    model = conical_tendon_arm(dtype=jnp.float64)
    names = model.coordinate_names
    inputs = jnp.asarray([[0.1, 0.3], [0.3, 0.0], [0.2, 0.2], [0.0, 0.1]])
    q_true = np.zeros((4, model.num_dofs))
    q_true[:, names.index("seg0.ky0")] = [0.05, -0.08, 0.03, 0.1]
    q_true[:, names.index("seg0.kz0")] = [-0.06, 0.02, 0.07, -0.04]
    q_true[:, names.index("seg1.ky0")] = [0.1, 0.0, -0.1, 0.05]
    tau_true, measured = _loads_and_markers(model, jnp.asarray(q_true), inputs)
    lower, upper = (np.array(b) for b in residual_bounds(model))
    sx0 = names.index("seg0.sx0")
    upper[sx0], lower[sx0] = 1e-3, -1e-3
    assert np.all(np.abs(np.asarray(tau_true)[:, sx0]) > 5e-2)  # outside the box
    taus, history = optimal_residuals(
        model,
        conical_arm_markers,
        inputs,
        measured,
        steps=40,
        lr=1e-4,
        bounds=(jnp.asarray(lower), jnp.asarray(upper)),
        chunk=40,
        log=lambda _: None,
    )
    taus = np.asarray(taus)
    assert np.all(taus >= lower) and np.all(taus <= upper)
    assert np.any(np.isclose(np.abs(taus[:, sx0]), 1e-3, rtol=0, atol=1e-12))  # the box is active
    before, after = history[0]["marker_rmse_m"], history[-1]["marker_rmse_m"]
    assert before > 3e-3  # the unmodelled force moves the markers by millimetres
    assert after < 0.3 * before, (before, after)


def test_network_fits_a_smooth_map():
    rng = np.random.default_rng(0)
    u = rng.uniform(0.0, 3.0, (24, 2))

    def target(u_):
        return np.stack([1e-3 * np.sin(u_[:, 0]) * u_[:, 1], 0.01 + 2e-3 * u_[:, 0] ** 2, -5e-3 * u_[:, 1]], axis=-1)

    predict, info = fit_network(u, target(u), steps=1500, hidden=(64, 64), log=lambda _: None)
    tau = target(u)
    assert np.linalg.norm(predict(u) - tau) < 0.03 * np.linalg.norm(tau)
    u_new = rng.uniform(0.3, 2.7, (8, 2))  # inside the training cloud
    assert np.linalg.norm(predict(u_new) - target(u_new)) < 0.15 * np.linalg.norm(target(u_new))
    assert predict(u_new).dtype == np.float64 and info["final_data_term"] < 1e-2
