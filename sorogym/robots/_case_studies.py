"""The robot and references of the SoRoMoX control case studies (section V-C, Appendix D-C).

* :func:`case_study_pcs`: fully actuated (``A = I``) spatial PCS segments of ``L = 0.1 m``,
  ``r = 0.02 m``, ``E = 2 kPa``, ``G = 1 kPa``, ``rho = 1070 kg/m^3``, all six strains
  active, mounted horizontally. The case study does not state the damping; we use
  Kelvin-Voigt material damping with the viscosity ``eta = 2000 Pa s`` (see
  ``CASE_STUDY_VISCOSITY``), with which the model-free baselines' errors come out at the
  magnitude Table VIII reports (``results/control/configuration_space.md``).
* :func:`strain_benchmark_reference`: the configuration-space benchmark (eqs. 15-17):
  setpoints on ``(kappa_y, kappa_z, sigma_x)`` every 3 s for 15 s, then smooth sinusoidal
  tracking started by the quintic ramp ``h(s) = 10 s^3 - 15 s^4 + 6 s^5``.
* :func:`figure_eight_pose` and :func:`figure_eight_reference`: the spherical figure-eight
  pose of eqs. 25-28 (period 4 s, sphere radius 0.08 m), first end-effector axis along
  the outward normal.
"""

from __future__ import annotations

import jax.numpy as jnp

from ..control import FunctionReference, PoseReference
from ..models import PCS, RodParams

CASE_STUDY_ROD = {"length": 0.1, "radius": 0.02, "young_modulus": 2e3, "shear_modulus": 1e3, "density": 1070.0}
CASE_STUDY_VISCOSITY = 2000.0  # Pa s, Kelvin-Voigt (not stated in the paper; see the module docstring)

# (t_start [s], kappa_y [1/m], kappa_z [1/m], sigma_x [-]) of eq. (15)
STRAIN_SETPOINTS = (
    (0.0, 0.0, 0.0, 1.00),
    (3.0, 14.0, 7.0, 1.10),
    (6.0, -14.0, -7.0, 0.95),
    (9.0, 7.0, -10.0, 1.06),
    (12.0, 0.0, 0.0, 1.00),
)
REGULATION_END = 15.0  # s
TRACKING_END = 30.0  # s


def case_study_pcs(
    num_segments: int = 1, dtype=None, viscosity: float = CASE_STUDY_VISCOSITY, mounting: str = "horizontal"
) -> PCS:
    """The fully actuated case-study arm with ``num_segments`` segments (``n = 6 N``),
    material damping ``viscosity`` [Pa s] and base ``mounting`` (the paper's: horizontal)."""
    c = CASE_STUDY_ROD
    params = RodParams.create(
        length=[c["length"]] * num_segments,
        radius=c["radius"],
        density=c["density"],
        young_modulus=c["young_modulus"],
        shear_modulus=c["shear_modulus"],
        damping=viscosity,
        mounting=mounting,
        dtype=dtype,
    )
    return PCS(params)


def _quintic_ramp(tau, duration: float = 1.5):
    s = jnp.clip(tau / duration, 0.0, 1.0)
    return 10 * s**3 - 15 * s**4 + 6 * s**5


def strain_benchmark_q(t):
    """``q_d(t)`` ``(6,)`` of eqs. 15-17 for one segment, ordered
    ``(kappa_x, kappa_y, kappa_z, sigma_x - 1, sigma_y, sigma_z)``."""
    t = jnp.asarray(t)
    starts = jnp.asarray([s[0] for s in STRAIN_SETPOINTS], t.dtype)
    table = jnp.asarray([s[1:] for s in STRAIN_SETPOINTS], t.dtype)
    idx = jnp.clip(jnp.searchsorted(starts, t, side="right") - 1, 0, len(STRAIN_SETPOINTS) - 1)
    setpoint = table[idx]
    tau = t - REGULATION_END
    h = _quintic_ramp(tau)
    tracking = jnp.stack(
        [
            12 * h * jnp.sin(3 * tau),
            6 * h * jnp.sin(2 * tau + jnp.pi / 4),
            1 + 0.06 * h * jnp.sin(2.5 * tau + jnp.pi / 2),
        ]
    )
    ky, kz, sx = jnp.where(t < REGULATION_END, setpoint, tracking)
    zero = jnp.zeros_like(t)
    return jnp.stack([zero, ky, kz, sx - 1.0, zero, zero])


def strain_benchmark_reference() -> FunctionReference:
    """Eqs. 15-17 as a reference with AD rates and accelerations."""
    return FunctionReference(strain_benchmark_q)


FIGURE_EIGHT_AMPLITUDES = (0.08, 0.04)  # m, along the first and second tangent axes (eq. 25)


def figure_eight_pose(
    t, initial_pose, sphere_radius: float = 0.08, period: float = 4.0, amplitudes=FIGURE_EIGHT_AMPLITUDES
):
    """Desired end-effector pose ``(4, 4)`` at ``t`` [s] (eqs. 25-28) for the initial pose
    ``initial_pose`` ``(4, 4)`` of the end effector. ``amplitudes`` ``(2,)`` [m]: the
    tangent-plane lobes ``a_1 sin(phi) t_1 + a_2 sin(2 phi) t_2`` (the paper's ``(0.08,
    0.04)``; negative values mirror the figure)."""
    g0 = jnp.asarray(initial_pose)
    R0, p0 = g0[:3, :3], g0[:3, 3]
    n0, t1, t2 = R0[:, 0], R0[:, 1], R0[:, 2]
    center = p0 - sphere_radius * n0
    phi = 2 * jnp.pi * t / period
    a1, a2 = amplitudes[0], amplitudes[1]
    p_tan = a1 * jnp.sin(phi) * t1 + a2 * jnp.sin(2 * phi) * t2
    rho = jnp.sqrt(jnp.sum(p_tan**2) + 1e-30)
    z = rho / sphere_radius
    sinc = jnp.where(z > 1e-8, jnp.sin(z) / jnp.where(z > 1e-8, z, 1.0), 1.0 - z**2 / 6)
    p_d = center + sphere_radius * (jnp.cos(z) * n0 + sinc * p_tan / sphere_radius)
    n_d = (p_d - center) / sphere_radius
    y = t1 - n_d * jnp.dot(n_d, t1)
    y_d = y / jnp.linalg.norm(y)
    z_d = jnp.cross(n_d, y_d)
    R_d = jnp.stack([n_d, y_d, z_d], axis=1)
    top = jnp.concatenate([R_d, p_d[:, None]], axis=1)
    bottom = jnp.asarray([[0.0, 0.0, 0.0, 1.0]], top.dtype)
    return jnp.concatenate([top, bottom], axis=0)


def figure_eight_reference(
    initial_pose, sphere_radius: float = 0.08, period: float = 4.0, amplitudes=FIGURE_EIGHT_AMPLITUDES
) -> PoseReference:
    """:func:`figure_eight_pose` as a :class:`PoseReference` (twists by AD)."""
    g0 = jnp.asarray(initial_pose)
    return PoseReference(lambda t: figure_eight_pose(t, g0, sphere_radius, period, amplitudes))
