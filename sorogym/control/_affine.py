"""The control-affine form of a soft robot's dynamics and second-order output derivatives.

With ``y = [q, qd]`` (``q`` ``(nq,)``, ``qd`` ``(n,)``; ``dq/dt`` is the model's
``configuration_rate``, ``qd`` itself for the serial models) every model in :mod:`sorogym.models` is affine in the
actuator effort ``u`` (``(m,)``: tendon tensions [N], generalized forces, ...)::

    dy/dt = f0(y) + f_u(y) u,
    f0  = [dq/dt, M^-1 (tau_ext - C(q, qd) qd - G(q) - K(q) - D qd)],
    f_u = [0, M^-1 A(q)].

For tendons this holds for non-negative tensions (a slack tendon pulls with zero force);
controllers that use the split keep ``u`` in its admissible box.

For an output ``h(q, t)`` (a scalar such as a distance or a clearance) the second time
derivative along the dynamics is affine in ``u`` as well::

    hdd = Lf2h(y, t) + LgLfh(y, t) . u,

which is what high-order CLF/CBF conditions constrain (:mod:`._clf_cbf`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float


class ControlAffine(NamedTuple):
    """``dy/dt = drift + input_matrix @ u`` at one state."""

    drift: Float[Array, " 2n"]
    input_matrix: Float[Array, "2n m"]


def control_affine_dynamics(model, y: Float[Array, " 2n"], tau_ext: Float[Array, " n"] | None = None) -> ControlAffine:
    """The drift ``f0(y)`` ``(2n,)`` and input matrix ``f_u(y)`` ``(2n, m)`` of ``model`` at
    state ``y``, with an optional external generalized force ``tau_ext`` ``(n,)`` (contact,
    disturbances) counted in the drift. One factorisation of ``M(q)`` serves both."""
    q, qd = model.split_state(y)
    M, cor, grav = model.dynamical_terms(q, qd)
    rhs = -cor - grav - model.elastic_force(q) - model.damping_matrix() @ qd
    if tau_ext is not None:
        rhs = rhs + tau_ext
    A = model.actuation_matrix(q)
    sol = jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(M), jnp.concatenate([rhs[:, None], A], axis=1))
    drift = jnp.concatenate([model.configuration_rate(q, qd), sol[:, 0]])
    input_matrix = jnp.concatenate([jnp.zeros((q.shape[0], A.shape[1]), A.dtype), sol[:, 1:]], axis=0)
    return ControlAffine(drift, input_matrix)


class SecondOrderOutput(NamedTuple):
    """An output ``h`` and its derivatives along ``dy/dt = f0 + f_u u``:
    ``h``, ``hd = dh/dt`` and ``hdd = drift_term + input_gain . u``."""

    h: Float[Array, ""]
    hd: Float[Array, ""]
    drift_term: Float[Array, ""]
    input_gain: Float[Array, " m"]


def second_order_output(h: Callable, y: Float[Array, " s"], t, affine: ControlAffine, model=None) -> SecondOrderOutput:
    """Value, rate and control-affine second derivative of the scalar output ``h(q, t)``.

    ``h`` must be twice differentiable in ``q`` and ``t`` near ``y``; ``t`` [s] carries an
    explicit time dependence (a moving target), pass any scalar when there is none. With a
    ``model``, ``y`` is split by its state contract and ``q`` moves at its
    ``configuration_rate`` (floating bases); without one, ``y = [q, qd]`` halves.
    """
    t = jnp.asarray(t, y.dtype)

    def split(y_):
        if model is None:
            n = y_.shape[0] // 2
            return y_[:n], y_[n:]
        q_, qd_ = model.split_state(y_)
        return q_, model.configuration_rate(q_, qd_)

    def rate_and_value(y_, t_):
        q_, rate_q = split(y_)
        value, rate = jax.jvp(h, (q_, t_), (rate_q, jnp.ones_like(t_)))
        return rate, value

    (rate, value), (d_y, d_t) = jax.value_and_grad(rate_and_value, argnums=(0, 1), has_aux=True)(y, t)
    return SecondOrderOutput(
        h=value, hd=rate, drift_term=d_y @ affine.drift + d_t, input_gain=d_y @ affine.input_matrix
    )
