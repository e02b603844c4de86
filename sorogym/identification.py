"""Static-equilibrium identification of the conical tendon arm's material (the SoRoMoX
paper's App. D-A protocol).

The arm is :func:`sorogym.robots.conical_tendon_arm`; its four markers
(:func:`sorogym.robots.conical_arm_markers`) are observed at the static equilibria under
``NUM_INPUTS`` tension pairs drawn from ``U(0, MAX_TENSION)`` [N], with Gaussian marker
noise of standard deviation ``MARKER_NOISE`` [m] per coordinate. Adam (optax, step
``LEARNING_RATE``) minimises the mean squared marker error from the paper's initial guess
``INITIAL_MATERIAL``, with gradients through the differentiable equilibrium (implicit
function theorem); the bounds ``MATERIAL_LOWER``/``MATERIAL_UPPER`` are kept by a sigmoid
map from unconstrained variables.

A material ``theta`` ``(3,)`` is ``(young_modulus [Pa], poisson_ratio, density [kg/m^3])``
(``MATERIAL_NAMES``), the same on every link; the shear modulus follows as
``E / (2 (1 + nu))``. ``TRUE_MATERIAL`` is the paper's identified ``theta*``, the "true"
material of synthetic data.
"""

from __future__ import annotations

import time

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from sorogym.robots import conical_arm_markers

MATERIAL_NAMES = ("young_modulus", "poisson_ratio", "density")
TRUE_MATERIAL = np.array([0.315e6, 0.45, 1320.0])  # E [Pa], nu, rho [kg/m^3]
INITIAL_MATERIAL = np.array([0.505e6, 0.45, 1500.0])
MATERIAL_LOWER = np.array([0.01e6, 0.4, 1000.0])
MATERIAL_UPPER = np.array([1.0e6, 0.5, 2000.0])
NUM_INPUTS = 22
MAX_TENSION = 3.0  # N per tendon
MARKER_NOISE = 0.5e-3  # m, standard deviation per coordinate
LEARNING_RATE = 0.05  # Adam step on the unconstrained variables


def _material_of(z):
    """Material ``(3,)`` inside the bounds from unconstrained variables ``z`` ``(3,)``."""
    return MATERIAL_LOWER + (MATERIAL_UPPER - MATERIAL_LOWER) * jax.nn.sigmoid(z)


def _unconstrained(theta):
    """The inverse of :func:`_material_of` (``theta`` strictly inside the bounds)."""
    x = (np.asarray(theta) - MATERIAL_LOWER) / (MATERIAL_UPPER - MATERIAL_LOWER)
    return jnp.asarray(np.log(x / (1 - x)))


def with_material(model, theta):
    """``model`` with the material ``theta`` ``(3,)`` on every link (same shapes, so no
    recompilation)."""
    E, nu, rho = theta[0], theta[1], theta[2]
    shape = jnp.shape(model.params.young_modulus)
    return model.update_params(
        young_modulus=jnp.full(shape, E),
        shear_modulus=jnp.full(shape, E / (2 * (1 + nu))),
        density=jnp.full(shape, rho),
    )


@eqx.filter_jit
def predict_markers(model, theta, inputs):
    """Markers ``(e, 4, 3)`` [m, world frame] at the static equilibria of ``model`` with the
    material ``theta`` under every tension pair of ``inputs`` ``(e, 2)`` [N]."""
    m = with_material(model, theta)
    return jax.vmap(lambda u: conical_arm_markers(m, m.static_equilibrium(u)))(inputs)


def marker_rmse(pred, meas) -> tuple[float, list[float]]:
    """``(overall, per marker)`` RMSE [m] of the marker distances between ``pred`` and
    ``meas`` ``(e, k, 3)``: over all inputs and markers, and per marker ``(k,)``."""
    err = np.linalg.norm(np.asarray(pred) - np.asarray(meas), axis=-1)  # (e, k)
    return float(np.sqrt(np.mean(err**2))), np.sqrt(np.mean(err**2, axis=0)).tolist()


def synthetic_marker_data(model, theta, seed: int, num_inputs: int = NUM_INPUTS):
    """``(inputs (e, 2), clean markers (e, 4, 3), measured markers)``: tension pairs
    ``U(0, MAX_TENSION)`` and Gaussian marker noise ``MARKER_NOISE``, both drawn from
    ``seed``; the markers are those of ``model`` with the material ``theta``."""
    rng = np.random.default_rng(seed)
    inputs = jnp.asarray(rng.uniform(0.0, MAX_TENSION, (num_inputs, 2)))
    clean = predict_markers(model, jnp.asarray(theta), inputs)
    measured = clean + MARKER_NOISE * rng.normal(size=clean.shape)
    return inputs, clean, measured


def identify_material(model, inputs, measured, steps: int, log=print):
    """Adam from ``INITIAL_MATERIAL`` on the mean squared marker error [m^2] of ``model``
    against ``measured`` ``(e, 4, 3)`` under ``inputs`` ``(e, 2)``, ``steps`` steps (progress
    through ``log`` every 20). Returns ``(theta (3,), history, wall seconds)``; the history
    holds the loss and the material before every step."""
    import optax

    @eqx.filter_jit
    def loss_and_grad(z):
        def loss(z_):
            return jnp.mean(jnp.sum((predict_markers(model, _material_of(z_), inputs) - measured) ** 2, axis=-1))

        return jax.value_and_grad(loss)(z)

    opt = optax.adam(LEARNING_RATE)
    z = _unconstrained(INITIAL_MATERIAL)
    state = opt.init(z)
    history = []
    t1 = time.perf_counter()
    for k in range(steps):
        value, grad = loss_and_grad(z)
        history.append({"step": k, "loss_m2": float(value), "theta": np.asarray(_material_of(z)).tolist()})
        updates, state = opt.update(grad, state)
        z = optax.apply_updates(z, updates)
        if k % 20 == 0 or k == steps - 1:
            th = np.asarray(_material_of(z))
            log(
                f"  step {k:4d}: marker RMSE {np.sqrt(float(value)) * 1e3:.2f} mm, E {th[0] / 1e6:.4f} MPa, "
                f"nu {th[1]:.4f}, rho {th[2]:.1f}"
            )
    return np.asarray(_material_of(z)), history, time.perf_counter() - t1
