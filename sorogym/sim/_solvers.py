"""Fixed-step integrators for the mechanical state ``y = [q, qd]``, usable as diffrax solvers.

Every scheme follows the model's state contract (:class:`~sorogym.models.SoftRobot`): it
splits and packs ``y`` with the model's helpers (configuration and velocity may differ in
size) and advances the configuration by the model's retraction ``q+ = retract(q, dq)``
(``q + dq`` on vector spaces, the Lie-group exponential for free and spherical joints), so
a floating base stays on SE(3) without projection.

* :class:`SemiImplicitEuler`: kick-drift Euler (first order, conditionally stable):
  ``qd+ = qd + h qdd(q, qd)``, ``q+ = retract(q, h qd+)``. Evaluates the full dynamics, so it
  works for any model with velocity-dependent forces.
* :class:`LinearTrapezoid`: the environments' fast integrator. It exploits that PCS
  elastic and damping forces are affine with constant matrices (``K(q) = S q + K(0)``, ``D qd``):
  those stiff terms are integrated by the trapezoidal rule (A-stable, second order on this
  linear part, no numerical damping), the remaining forces ``F = A u + tau_ext - C qd - G``
  explicitly, and ``M`` is frozen over the step, so the scheme is first order overall with a
  small error constant when the linear stiff forces dominate. One step costs one evaluation
  of ``(M, C qd, G)`` and one Cholesky solve of ``W = M + h/2 D + h^2/4 S``::

      dv = h W^-1 (F - S q - D v - h/2 S v),   v+ = v + dv,   q+ = retract(retract(q, h v), h/2 dv).

  With ``theta`` in (1/2, 1] in place of the 1/2s (``W = M + theta h D + theta^2 h^2 S``,
  ``K`` at ``retract(q, theta h v)``, ``q+ = retract(retract(q, h v), theta h dv)``), the
  same update is the theta-method on the linear part: L-stable at 1, damping the stiff
  modes a step does not resolve, first order in them.

  A model whose elastic force is not affine (``elastic_is_affine`` false: concentric tubes)
  takes ``S`` as its tangent stiffness at the theta-point ``retract(q, theta h v)``
  (:meth:`~sorogym.models.SoftRobot.tangent_stiffness`): the step is then one Newton
  iteration of the implicit theta-method (linearly implicit, Rosenbrock-like), exact for the
  affine models and stable on stiff nonlinear elasticity.

  Closed chains (``model.num_constraints > 0``): the velocity update is the KKT system
  ``W dv = h rhs + G^T mu``, ``G (v + dv) = -omega phi / (1 + h omega)`` with the closure
  equations ``phi`` and Jacobian ``G`` at the step's start and the impulse ``mu`` (the
  closures hold at the velocity level at every step's end), then one projection of the new
  configuration back onto the closures, ``dq = -W^-1 G^T (G W^-1 G^T)^-1 phi(q+)`` with
  ``G`` at ``q+`` (one Gauss-Newton step, the ``W``-weighted least change: the drift left
  is of second order in ``phi``). ``omega`` is
  the model's :attr:`~sorogym.models.SoftRobot.constraint_frequency`.
* Two variants take the nonlinear forces more accurately: :func:`trapezoid_predictor_corrector_step`
  (Heun on them, two evaluations per step, second order) and
  :func:`trapezoid_midpoint_step` (one evaluation at the half-step configuration: second
  order in the configuration-dependent forces, first in the velocity-dependent ones).
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import ClassVar

import diffrax
import jax
import jax.numpy as jnp
from jaxtyping import Array

from ..models import SoftRobot
from ..models._linalg import constrained_spd_solve, spd_solve

#: ``applied_force(q, qd) -> tau`` ``(n,)``: the generalized force of the actuators and of
#: any external load (contact, disturbances) at a state, the one way inputs reach the
#: fixed-step schemes.
AppliedForce = Callable[[Array, Array], Array]


def semi_implicit_euler_step(model: SoftRobot, t, y: Array, args: tuple, h) -> Array:
    """One kick-drift Euler step of size ``h`` [s] (``args``: the actuation tuple of
    ``model.forward_dynamics``)."""
    q, qd = model.split_state(y)
    qdd = model.split_state(model.forward_dynamics(t, y, args))[1]
    qd_new = qd + h * qdd
    return model.pack_state(model.retract(q, h * qd_new), qd_new)


def _trapezoid_update(
    model: SoftRobot, q: Array, v: Array, M: Array, F: Array, h, load_at=None, load_iterations: int = 0, theta=0.5
) -> Array:
    """``[q+, v+]`` of the trapezoidal update with mass ``M`` and nonlinear force ``F``
    (the theta-method on the linear stiff forces, ``theta = 0.5`` the trapezoidal rule).

    ``load_at`` (``v -> LineLoadTerms``, the line load on the frozen configuration) adds a
    line load taken implicitly in the velocity: the first solve linearises it at ``v``
    (linearly implicit Euler, ``W += h D_load``); each of ``load_iterations`` further
    Newton steps re-evaluates it at the new velocity ``v + dv`` (no kinematics) and
    corrects ``dv``, converging to backward Euler on the load. Regularised friction is
    strongly nonlinear where it sticks or reverses, and there one linearisation overshoots.
    """
    if model.elastic_is_affine:
        S = model.stiffness_matrix()
    else:  # the tangent stiffness at the theta-point: one Newton iteration of the implicit step
        S = model.tangent_stiffness(model.retract(q, (theta * h) * v))
    D = model.damping_matrix()
    W = M + (theta * h) * D + (theta * theta * h * h) * S
    # K is affine with Jacobian S, so K(retract(q, theta h v)) + theta^2 h^2 S dv / h is K at
    # the theta-point of the step (its trapezoidal average for theta = 1/2)
    rhs = F - model.elastic_force(model.retract(q, (theta * h) * v)) - model.damping_force(v)
    solve = _velocity_solver(model, q, v, h)
    if load_at is None:
        dv, _ = solve(W, rhs, h, True)
    else:
        load = load_at(v)
        dv, impulse = solve(W + h * load.damping, rhs + load.force, h, True)
        for _ in range(load_iterations):
            load = load_at(v + dv)
            residual = W @ dv - h * (rhs + load.force) - impulse
            ddv, dimpulse = solve(W + h * load.damping, residual, -1.0, False)
            dv, impulse = dv + ddv, impulse + dimpulse
    # two retractions, h v then theta h dv: on vector spaces exactly the former (q + h v) + h dv / 2
    # for theta = 1/2, so the serial models step bit-identically to the code before the state contract
    q_next = model.retract(model.retract(q, h * v), (theta * h) * dv)
    if model.num_constraints:
        q_next = _project_on_closures(model, q_next, W)
    return model.pack_state(q_next, v + dv)


def _project_on_closures(model: SoftRobot, q: Array, W: Array) -> Array:
    """One ``W``-weighted Gauss-Newton step of ``q`` onto ``phi = 0`` (``phi`` and ``G`` at
    ``q``, from one evaluation)."""
    phi, G = model.constraint_terms(q)
    dq, _ = constrained_spd_solve(W, jnp.zeros_like(phi, shape=W.shape[:1]), G, -phi)
    return model.retract(q, dq)


def _velocity_solver(model: SoftRobot, q: Array, v: Array, h):
    """``solve(W, b, scale, first) -> (dv, impulse)``: ``W dv = scale b`` for an
    unconstrained model (zero impulse; computed as ``scale W^-1 b``, the rounding of the
    scheme before closures existed); for a closed chain ``W dv = scale b + G^T mu``,
    ``impulse = G^T mu``, with
    ``G (v + dv) = -omega phi / (1 + h omega)`` for the ``first`` solve of a step and
    ``G ddv = 0`` for the corrections after it."""
    if not model.num_constraints:
        return lambda W, b, scale, first: (scale * spd_solve(W, b), 0.0)
    phi, G = model.constraint_terms(q)
    w = model.constraint_frequency
    target = -(w / (1.0 + h * w)) * phi - G @ v

    def solve(W, b, scale, first):
        dv, mu = constrained_spd_solve(W, scale * b, G, target if first else jnp.zeros_like(target))
        return dv, G.T @ mu

    return solve


def _mass_and_force(model: SoftRobot, q: Array, v: Array, applied_force: AppliedForce, line_load=None):
    """``(M, F, load_at)``: mass, nonlinear force without the line load, and the line load
    on the frozen configuration as a function of velocity (``None`` without one)."""
    if line_load is None:
        M, cor, grav = model.dynamical_terms(q, v)
        return M, applied_force(q, v) - cor - grav, None
    M, bias, load_at = model.inertia_bias_and_line_load_map(q, v, line_load)
    return M, applied_force(q, v) - bias, load_at


def linear_trapezoid_step(
    model: SoftRobot,
    y: Array,
    applied_force: AppliedForce,
    h,
    line_load=None,
    line_load_iterations: int = 0,
    theta: float = 0.5,
    evaluation_point: float = 0.0,
) -> Array:
    """One step of size ``h`` [s] of the linearly implicit trapezoidal scheme (module
    docstring) from ``y = [q, qd]``, with the nonlinear forces (``M``, ``C qd``, ``G``, the
    applied force, a line load) evaluated once, at ``y``; with ``evaluation_point`` ``c`` in
    (0, 1] at the configuration ``retract(q, c h qd)`` instead (``1/2``:
    :func:`trapezoid_midpoint_step`).

    ``line_load``: an optional force per unit length along a rod's backbone
    (:data:`sorogym.models.LineLoad`: ground friction, resistive-force fluids), integrated
    on the rod's quadrature points in the same kinematics pass as ``M`` and taken
    implicitly in the velocity: linearised once (its velocity stiffness enters the
    iteration matrix, so stiff regularised friction, ``mu f_n / eps`` per unit length, does
    not limit the step), then ``line_load_iterations`` Newton corrections at the new
    velocity on the frozen configuration (backward Euler on the load: accurate through
    stick-slip, where one linearisation overshoots).

    ``theta`` in [1/2, 1]: the weight of the step's end in the elastic and damping forces
    (module docstring). 1/2 is the trapezoidal rule: second order, no numerical damping, but
    a stiff mode the step does not resolve keeps ringing at the step's Nyquist frequency
    (amplification near -1). Above 1/2 such modes decay (at 1, backward Euler, at once)
    and the scheme is first order in the linear forces; on a free body whose fast internal
    modes are not damped by its surroundings (a swimmer), that ringing drives a spurious
    drift of the whole body that a little numerical damping removes."""
    q, v = model.split_state(y)
    q_eval = q if evaluation_point == 0.0 else model.retract(q, (evaluation_point * h) * v)
    M, F, load_at = _mass_and_force(model, q_eval, v, applied_force, line_load)
    return _trapezoid_update(model, q, v, M, F, h, load_at, line_load_iterations, theta)


def trapezoid_predictor_corrector_step(
    model: SoftRobot,
    y: Array,
    applied_force: AppliedForce,
    h,
    line_load=None,
    line_load_iterations: int = 0,
    theta: float = 0.5,
) -> Array:
    """Second-order variant of :func:`linear_trapezoid_step` for state-dependent inputs.

    A trapezoidal predictor step gives ``y1``; the corrector repeats the step with the mass
    matrix and the nonlinear forces (``applied_force`` included, e.g. contact) averaged
    between ``y`` and ``y1`` (Heun's method on the nonlinear part, the trapezoidal rule on
    the linear stiff part): two evaluations of ``(M, C qd, G)`` per step. A line load is
    taken implicitly in both solves, on the configuration of ``y`` and then of ``y1``
    (``line_load_iterations`` and ``theta`` as in :func:`linear_trapezoid_step`).
    """
    q, v = model.split_state(y)
    M0, F0, L0 = _mass_and_force(model, q, v, applied_force, line_load)
    q1, v1 = model.split_state(_trapezoid_update(model, q, v, M0, F0, h, L0, line_load_iterations, theta))
    M1, F1, L1 = _mass_and_force(model, q1, v1, applied_force, line_load)
    L = None if L0 is None else (lambda u: jax.tree.map(_average, L0(u), L1(u)))
    return _trapezoid_update(model, q, v, 0.5 * (M0 + M1), 0.5 * (F0 + F1), h, L, line_load_iterations, theta)


def trapezoid_midpoint_step(model: SoftRobot, y: Array, applied_force: AppliedForce, h, **options) -> Array:
    """:func:`linear_trapezoid_step` with the nonlinear forces taken at the step's
    half-way configuration ``q_m = retract(q, h/2 qd)`` instead of its start: ``M``,
    ``C qd``, ``G``, ``applied_force`` and a line load are evaluated once, at ``(q_m, qd)``
    (``options``: ``line_load``, ``line_load_iterations``, ``theta``, as there).

    The cost of :func:`linear_trapezoid_step` (one evaluation of ``(M, C qd, G)``, one
    solve; half of :func:`trapezoid_predictor_corrector_step`), and second order in the
    configuration-dependent forces (gravity, the actuators' and loads' dependence on the
    shape, ``M(q)``): the velocity update is the midpoint rule on them. Forces that depend
    on the velocity (``C qd``, velocity-dependent loads) stay at the step's start: first
    order in those, so the predictor-corrector remains the scheme for fast, strongly
    velocity-coupled motion. On a robot where gravity and the shape-dependent actuation
    dominate the nonlinear forces (a soft arm moving at a few body lengths per second) it
    reaches the predictor-corrector's accuracy per step at half its cost (the conical GVS
    arm: 0.39 % of L against 0.39 %, 8.3 ms steps, docs/benchmarks.md).
    """
    return linear_trapezoid_step(model, y, applied_force, h, evaluation_point=0.5, **options)


def _average(a, b):
    return 0.5 * (a + b)


def actuation_applied_force(model: SoftRobot, args: tuple) -> AppliedForce:
    """The :data:`AppliedForce` of a diffrax ``args`` actuation tuple, ``()``, ``(u,)`` or
    ``(u, tau_ext)`` (the convention of ``model.forward_dynamics``)."""
    return lambda q, qd: model.generalized_force(q, *args)


class _FixedStepSolver(diffrax.AbstractSolver):
    """Base for model-aware fixed-step diffrax solvers (``args`` = actuation tuple)."""

    model: SoftRobot
    term_structure: ClassVar = diffrax.AbstractTerm
    interpolation_cls: ClassVar = diffrax.LocalLinearInterpolation

    def order(self, terms):
        return 1

    def init(self, terms, t0, t1, y0, args):
        return None

    @abc.abstractmethod
    def _advance(self, t0, y0, args, h):
        """State after one step of size ``h`` from ``(t0, y0)``."""

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        del terms, solver_state, made_jump
        y1 = self._advance(t0, y0, args, t1 - t0)
        return y1, None, dict(y0=y0, y1=y1), None, diffrax.RESULTS.successful

    def func(self, terms, t0, y0, args):
        return terms.vf(t0, y0, args)


class SemiImplicitEuler(_FixedStepSolver):
    """Kick-drift Euler for ``[q, qd]`` (first order). ``args`` is the actuation tuple
    ``(u,)`` or ``(u, tau_ext)`` passed to ``model.forward_dynamics``."""

    def _advance(self, t0, y0, args, h):
        return semi_implicit_euler_step(self.model, t0, y0, args, h)


class LinearTrapezoid(_FixedStepSolver):
    """Linearly implicit trapezoidal scheme exploiting constant ``S`` and ``D`` (trapezoidal
    in the stiff linear part, first order overall); on a model whose elastic force is not
    affine (``model.elastic_is_affine`` false) ``S`` is the tangent stiffness of the step."""

    def _advance(self, t0, y0, args, h):
        return linear_trapezoid_step(self.model, y0, actuation_applied_force(self.model, args), h)
