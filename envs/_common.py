"""Task pieces shared by the suite's envs (pure functions): tip kinematics, tension maps,
reaching reward terms, the experts' tension controllers and the rod envs' scene."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from sorogym.control import clf_cbf_control, quasi_static_tension_control, tip_distance


def first_order_lag(u, target, control_dt: float, time_constant: float):
    """Actuator state after one control period of a first-order lag of ``time_constant``
    [s] towards ``target`` (held within the period): ``u + (1 - exp(-dt / tau)) (target - u)``."""
    return u + (1.0 - np.exp(-control_dt / time_constant)) * (target - u)


def tip_kinematics(model, q, qd):
    """Tip pose ``(4, 4)`` and tip velocity ``(3,)`` [m/s] (world frame), one kinematics pass."""
    pose, J = model.pose_and_jacobian(q, model.total_length)
    return pose, (J @ qd)[3:]


def tip_position_velocity(model, q, qd):
    """World position [m] and velocity [m/s] of the robot's tip."""
    pose, vel = tip_kinematics(model, q, qd)
    return pose[:3, 3], vel


def tip_axis(model, q):
    """Unit direction of the backbone tangent at the tip (the tip frame's local x axis),
    world frame."""
    return axis_of_pose(model.forward_kinematics(q, model.total_length))


def axis_of_pose(pose):
    """Unit local x axis (the backbone tangent) of a ``(4, 4)`` pose."""
    return pose[:3, 0] / jnp.linalg.norm(pose[:3, 0])


def axis_angle_between(a, b):
    """Angle [rad] in [0, pi] between unit vectors ``a`` and ``b`` (``atan2`` form: accurate
    near 0 and pi, unlike ``arccos`` of the dot product)."""
    return jnp.arctan2(jnp.linalg.norm(jnp.cross(a, b)), jnp.dot(a, b))


def tensions_from_action(action, max_tension):
    """Absolute tendon tensions [N] from actions in [-1, 1]: ``max_tension (a + 1) / 2``."""
    return 0.5 * max_tension * (action + 1.0)


def action_from_tensions(u, max_tension):
    """The inverse of :func:`tensions_from_action`: ``2 u / max_tension - 1``."""
    return 2.0 * u / max_tension - 1.0


def reaching_terms(tip, goal, tensions, success_radius: float, max_tension: float):
    """Goal distance ``d`` [m] and the reaching reward terms ``distance = -d``,
    ``success = [d < success_radius]``, ``effort = -mean((u / max_tension)^2)``."""
    d = jnp.linalg.norm(tip - goal)
    terms = {
        "distance": -d,
        "success": (d < success_radius).astype(d.dtype),
        "effort": -jnp.mean((tensions / max_tension) ** 2),
    }
    return d, terms


def tension_box(model, max_tension: float, dtype):
    """``(lower, upper)`` tension bounds ``(m,)`` [N]: ``[0, max_tension]`` per tendon."""
    m = model.num_actuators
    return jnp.zeros(m, dtype), jnp.full(m, max_tension, dtype)


def quasi_static_tensions(model, ps, target, max_tension: float, gain: float, max_step: float | None = None):
    """Tendon tensions ``(m,)`` [N] in ``[0, max_tension]`` after one quasi-static step
    (:func:`sorogym.control.quasi_static_tension_control`) towards ``target`` ``(3,)`` [m]
    from the physics state ``ps``, changing each tension by at most ``max_step``."""
    lower, upper = tension_box(model, max_tension, ps.q.dtype)
    return quasi_static_tension_control(model, ps.q, ps.u, target, lower, upper, gain, max_step=max_step)


def clf_tensions(model, ps, target, max_tension: float, clf_gains, cbf=None, cbf_gains=None, tau_ext=None):
    """Tendon tensions ``(m,)`` [N] in ``[0, max_tension]`` from the sequential-projection
    HOCLF(+HOCBF) controller (:func:`sorogym.control.clf_cbf_control`) driving the tip to
    ``target(t) -> (3,)`` [m] from the physics state ``ps``."""
    y = jnp.concatenate([ps.q, ps.qd])
    bounds = tension_box(model, max_tension, y.dtype)
    u, _ = clf_cbf_control(
        model, ps.t, y, tip_distance(model, target), clf_gains, cbf, cbf_gains, bounds=bounds, tau_ext=tau_ext
    )
    return u
