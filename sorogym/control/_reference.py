"""Reference trajectories for tracking controllers: value, rate and acceleration at time ``t``.

* :class:`FunctionReference` wraps a smooth map ``t -> value`` ``(k,)``; its first and
  second time derivatives come from forward-mode AD (no finite differences).
* :class:`SampledReference` interpolates samples ``(ts, values)`` with diffrax's cubic
  Hermite (or linear) interpolation; derivatives are those of the interpolant. Outside
  ``[ts[0], ts[-1]]`` it holds the end value with zero rate and acceleration.
* :class:`PoseReference` wraps a smooth SE(3) map ``t -> g`` ``(4, 4)`` and returns the
  world-frame twist ``[omega, pdot]`` ``(6,)`` (angular first, the convention of the models'
  ``"inertial"`` Jacobians) and its time derivative.

:func:`pose_error` is the geometric error ``[log(R_d R^T), p_d - p]`` ``(6,)`` between two
poses, the error the operational-space controllers drive to zero.

All references are pure functions of ``t``, safe under ``jit``/``vmap``/``grad``.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import NamedTuple

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ..lie import so3


class ReferenceSample(NamedTuple):
    """A reference at one instant: ``value`` ``(k,)``, ``rate`` ``(k,)`` [1/s] and
    ``acceleration`` ``(k,)`` [1/s^2] (for poses: the pose ``(4, 4)``, the world twist
    ``(6,)`` and its derivative ``(6,)``)."""

    value: Array
    rate: Array
    acceleration: Array


def _time(t, dtype=None) -> Array:
    """``t`` as a float array: ``dtype`` if given, else its own floating dtype (a float32
    env clock stays float32), else JAX's default float."""
    t = jnp.asarray(t)
    if dtype is not None:
        return t.astype(dtype)
    return t if jnp.issubdtype(t.dtype, jnp.floating) else t.astype(jnp.result_type(float))


def _value_rate_acceleration(fn: Callable, t: Array) -> ReferenceSample:
    one = jnp.ones_like(t)

    def value_and_rate(t_):
        return jax.jvp(fn, (t_,), (one,))

    (value, rate), (_, acceleration) = jax.jvp(value_and_rate, (t,), (one,))
    return ReferenceSample(value, rate, acceleration)


class Reference(eqx.Module):
    """A time-indexed reference; call it with ``t`` [s] for a :class:`ReferenceSample`."""

    @abc.abstractmethod
    def __call__(self, t) -> ReferenceSample: ...


class FunctionReference(Reference):
    """``fn(t) -> (k,)``, twice differentiable; ``rate`` and ``acceleration`` by AD."""

    fn: Callable = eqx.field(static=True)

    def __call__(self, t) -> ReferenceSample:
        return _value_rate_acceleration(self.fn, _time(t))


class ConstantReference(Reference):
    """A setpoint: ``value`` ``(k,)`` at every time, zero rate and acceleration."""

    value: Float[Array, " k"]

    def __call__(self, t) -> ReferenceSample:
        zero = jnp.zeros_like(self.value)
        return ReferenceSample(self.value, zero, zero)


class SampledReference(Reference):
    """Samples ``values`` ``(T, k)`` at increasing times ``ts`` ``(T,)`` [s], interpolated.

    ``method="cubic"`` (default): diffrax cubic Hermite interpolation with backward-difference
    tangents (continuous rate); ``"linear"``: piecewise linear (piecewise-constant rate, zero
    acceleration).
    """

    interpolation: diffrax.AbstractPath
    t0: Float[Array, ""]
    t1: Float[Array, ""]

    def __init__(self, ts: Float[Array, " T"], values: Float[Array, "T k"], method: str = "cubic"):
        ts = jnp.asarray(ts)
        values = jnp.asarray(values, ts.dtype)
        if ts.ndim != 1 or ts.shape[0] < 2:
            raise ValueError(f"ts: expected shape (T,) with T >= 2, got {tuple(ts.shape)}")
        if values.ndim == 1:
            values = values[:, None]
        if values.ndim != 2 or values.shape[0] != ts.shape[0]:
            raise ValueError(f"values: expected shape ({ts.shape[0]}, k), got {tuple(values.shape)}")
        try:
            increasing = bool(jnp.all(jnp.diff(ts) > 0))
        except jax.errors.ConcretizationTypeError:
            increasing = True
        if not increasing:
            raise ValueError("ts: sample times must be strictly increasing")
        if method == "cubic":
            coeffs = diffrax.backward_hermite_coefficients(ts, values)
            self.interpolation = diffrax.CubicInterpolation(ts, coeffs)
        elif method == "linear":
            self.interpolation = diffrax.LinearInterpolation(ts, values)
        else:
            raise ValueError(f"method: unknown {method!r}; use 'cubic' or 'linear'")
        self.t0, self.t1 = ts[0], ts[-1]

    def __call__(self, t) -> ReferenceSample:
        t = _time(t, self.t0.dtype)
        inside = (t >= self.t0) & (t <= self.t1)
        tc = jnp.clip(t, self.t0, self.t1)
        sample = _value_rate_acceleration(self.interpolation.evaluate, tc)
        zero = jnp.zeros_like(sample.rate)
        return ReferenceSample(
            sample.value,
            jnp.where(inside, sample.rate, zero),
            jnp.where(inside, sample.acceleration, zero),
        )


class PoseReference(Reference):
    """``fn(t) -> g`` ``(4, 4)`` homogeneous, twice differentiable. Returns the pose, the
    world-frame twist ``[omega, pdot]`` ``(6,)`` (``omega = vee(Rdot R^T)``) and its rate."""

    fn: Callable = eqx.field(static=True)

    def _pose_and_twist(self, t):
        g, g_dot = jax.jvp(self.fn, (t,), (jnp.ones_like(t),))
        R, R_dot = g[:3, :3], g_dot[:3, :3]
        W = R_dot @ R.T
        omega = so3.vee(0.5 * (W - W.T))
        return g, jnp.concatenate([omega, g_dot[:3, 3]])

    def __call__(self, t) -> ReferenceSample:
        t = _time(t)
        (g, twist), (_, twist_rate) = jax.jvp(self._pose_and_twist, (t,), (jnp.ones_like(t),))
        return ReferenceSample(g, twist, twist_rate)


def pose_error(g_desired: Float[Array, "4 4"], g: Float[Array, "4 4"]) -> Float[Array, " 6"]:
    """Geometric pose error ``[log(R_d R^T), p_d - p]`` ``(6,)`` [rad, m], world frame."""
    e_R = so3.log(g_desired[:3, :3] @ g[:3, :3].T)
    return jnp.concatenate([e_R, g_desired[:3, 3] - g[:3, 3]])
