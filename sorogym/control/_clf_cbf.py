"""High-order control Lyapunov and barrier functions (HOCLF, HOCBF) with closed-form
projections, after the SoRoMoX safety case study (section V-E, Appendix D-E).

Both conditions are imposed on relative-degree-two outputs of ``q``:

* HOCLF on the tip distance ``V = |x(q) - x_d(t)|`` [m]:
  ``Vdd + gamma1 Vd + gamma0 V <= 0`` (eq. 47);
* HOCBF on the contact barrier ``b = F_max - k_c max_ij delta_ij(q)`` [N]:
  ``bdd + alpha1 bd + alpha0 b >= 0`` (eq. 46, eq. 50),

where ``delta_ij`` are the penetrations of backbone probe points into the obstacles
(:func:`sorogym.contact.obstacle_depths`, negative clearance). Along ``dy/dt = f0 + f_u u`` each condition is
one half-space in ``u`` (:func:`~sorogym.control.second_order_output`). The controller
projects a nominal input (zero by default, giving the minimum-norm input) onto the HOCLF
half-space and then projects the result onto the HOCBF half-space, so safety takes
priority (eqs. 48-49). With actuator bounds (tendons only pull) both projections are onto
half-space and box together (:func:`~sorogym.control.project_halfspace_box`).

Gains: with ``gamma1 = 2 w``, ``gamma0 = w^2`` the HOCLF equality makes ``V`` decay as a
critically damped second-order system with natural frequency ``w`` [rad/s]; likewise
``alpha0, alpha1`` place the two roots of the barrier's comparison system.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import jax.numpy as jnp
from jaxtyping import Array, Float

from ..contact import cross_section_radius, obstacle_depths, sphere_obstacles
from ._affine import ControlAffine, SecondOrderOutput, control_affine_dynamics, second_order_output
from ._projection import project_halfspace, project_halfspace_box

_EPS = 1e-9  # [m]: regularises |e| at the target so V stays differentiable


def _positive(name: str, value: float) -> float:
    value = float(value)
    if not value > 0:
        raise ValueError(f"{name}: must be positive, got {value}")
    return value


@dataclasses.dataclass(frozen=True)
class SecondOrderGains:
    """Gains ``(k0, k1)`` of a second-order condition ``hdd + k1 hd + k0 h (<=, >=) 0``."""

    k0: float
    k1: float

    def __post_init__(self):
        _positive("k0", self.k0)
        _positive("k1", self.k1)

    @classmethod
    def critically_damped(cls, natural_frequency: float) -> SecondOrderGains:
        """``k1 = 2 w``, ``k0 = w^2`` for ``w = natural_frequency`` [rad/s]."""
        w = _positive("natural_frequency", natural_frequency)
        return cls(k0=w * w, k1=2.0 * w)


def tip_distance(model, target: Callable) -> Callable:
    """``V(q, t) = |x_tip(q) - target(t)|`` [m]; ``target(t) -> (3,)`` (or ``(2,)`` planar)."""

    def V(q, t):
        pose = model.forward_kinematics(q, model.total_length)
        e = pose[:-1, -1] - target(t)
        return jnp.sqrt(e @ e + _EPS**2) - _EPS

    return V


def contact_barrier(model, probe_s, centers, radii, stiffness: float, force_bound: float) -> Callable:
    """``b(q, t) = F_max - k_c max_ij delta_ij(q)`` [N] for spherical obstacles (centres
    ``(k, 3)``, radii ``(k,)`` [m]) and backbone probes at arc lengths ``probe_s`` ``(P,)``
    [m]. ``b >= 0`` iff the deepest-point penalty force ``k_c max(delta, 0)``
    (:func:`sorogym.contact.rod_obstacle_contact`) stays below ``force_bound``."""
    obstacles = sphere_obstacles(centers, radii)

    def b(q, t):
        s = jnp.asarray(probe_s, q.dtype)
        depths = obstacle_depths(obstacles, model.backbone_positions(q, s), cross_section_radius(model, s))[0]
        return force_bound - stiffness * jnp.max(depths)

    return b


def second_order_halfspace(out: SecondOrderOutput, gains: SecondOrderGains) -> tuple[Array, Array]:
    """``(w, beta)`` with ``hdd + k1 hd + k0 h = w . u - beta``: the HOCLF condition reads
    ``w . u <= beta`` and the HOCBF condition ``w . u >= beta``."""
    return out.input_gain, -(out.drift_term + gains.k1 * out.hd + gains.k0 * out.h)


def _project(v, w, beta, sense, bounds):
    if bounds is None:
        return project_halfspace(v, w, beta, sense)
    return project_halfspace_box(v, w, beta, bounds[0], bounds[1], sense)


def clf_cbf_control(
    model,
    t,
    y: Float[Array, " 2n"],
    clf: Callable,
    clf_gains: SecondOrderGains,
    cbf: Callable | None = None,
    cbf_gains: SecondOrderGains | None = None,
    *,
    nominal: Float[Array, " m"] | None = None,
    bounds: tuple[Array, Array] | None = None,
    tau_ext: Float[Array, " n"] | None = None,
    affine: ControlAffine | None = None,
) -> tuple[Float[Array, " m"], dict]:
    """The sequential-projection HOCLF(+HOCBF) input at time ``t`` [s] and state ``y``.

    Args:
        clf, cbf: outputs ``h(q, t)`` (e.g. :func:`tip_distance`, :func:`contact_barrier`);
            without ``cbf`` this is the safety-unaware HOCLF controller.
        nominal: the input projected first (default zeros: the minimum-norm input).
        bounds: ``(lower, upper)`` actuator limits ``(m,)``; ``None`` for unbounded inputs.
        tau_ext: external generalized force in the drift (e.g. contact).
        affine: a precomputed :func:`control_affine_dynamics` at ``y``.

    Returns:
        ``(u, info)`` with ``info`` holding ``V``, ``Vd`` and, with a barrier, ``b``, ``bd``.
    """
    if cbf is not None and cbf_gains is None:
        raise ValueError("cbf_gains: required with a barrier function")
    affine = control_affine_dynamics(model, y, tau_ext) if affine is None else affine
    m = affine.input_matrix.shape[1]
    u = jnp.zeros(m, y.dtype) if nominal is None else nominal
    v_out = second_order_output(clf, y, t, affine, model)
    u = _project(u, *second_order_halfspace(v_out, clf_gains), "<=", bounds)
    info = {"V": v_out.h, "Vd": v_out.hd}
    if cbf is not None:
        b_out = second_order_output(cbf, y, t, affine, model)
        u = _project(u, *second_order_halfspace(b_out, cbf_gains), ">=", bounds)
        info.update(b=b_out.h, bd=b_out.hd)
    return u, info
