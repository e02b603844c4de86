"""soromox's floating-base spatial PCS as an oracle (soromox 0.5.0, JAX execution path).

soromox has no separate floating-base class: it is ``soromox.PCS`` built with
``floating_base=True`` (and no ``base_pose``), the base pose and twist then being part of
the runtime state. Everything below is in *soromox's* conventions, stated here once:

Configuration ``q`` (``7 + n``): ``[qx, qy, qz, qw, x, y, z, q_rod]``; the base quaternion is
a scalar-LAST (w last) Hamilton quaternion giving the base rotation ``R`` (base -> world),
``[x, y, z]`` is the base origin in the world, and ``q_rod`` (``n`` active strains) are the
strain displacements ``xi_i = xi_ref_i + B_i q_rod`` as for the fixed-base PCS. The rod's
local x axis is the backbone tangent; with the identity base quaternion it is world +x (not
the fixed-base default "upright" mounting). soromox normalises the quaternion inside its
kinematics and dynamics; :func:`floating_pcs_terms` normalises it first, so the returned
``qdot`` is that of a unit quaternion.

Velocity ``qd`` (``6 + n``): ``[wx, wy, wz, vx, vy, vz, qd_rod]``, angular first; ``w`` is the
base angular velocity in the WORLD frame (``dR/dt = [w]x R``, quaternion rate
``0.5 [w, 0] (x) quat``) and ``v`` the world-frame velocity of the base origin (``d[x,y,z]/dt``),
i.e. neither a body twist nor a spatial twist. Forces (``Cqd``, ``G``, ...) are work-conjugate
to this velocity (base torque about the base origin in world axes, then world force).

Equation of motion (soromox's forward dynamics, zero actuation):
``M(q) qdd = -Cqd - G - K q - D qd`` with ``G`` = +gradient of the gravitational energy
(left-hand-side convention), ``K q`` acting on ``q_rod`` only and zero base rows/columns in
``K`` and ``D``. The base is massless by itself: ``M`` is the rod's inertia only (no rigid
base body), per unit length ``rho diag(J, I, I, A, A, A)`` with ``A = pi r^2``,
``I = pi r^4 / 4``, ``J = 2 I``, integrated by Gauss-Legendre quadrature
(``num_gauss_points`` per segment). Stiffness per segment ``L diag(G J, E I, E I, E A, G A,
G A)``; damping per segment ``L eta diag(J, 3I, 3I, 3A, A, A)`` (material coefficient
``eta`` [Pa s]) or ``L diag(c)`` (per-strain coefficients ``c``), as for the fixed base.

soromox 0.5.0 offers no Coriolis matrix for a floating PCS, so the oracle compares the
vector ``C qd`` (the tree's ``C`` is checked by the skew identity in ``test_tree.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import SimpleNamespace

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from ._soromox import _damping_kwargs, _spatial_base_pose

_DEFAULT_GRAVITY = (0.0, 0.0, -9.81)
_STRAIGHT = (0.0, 0.0, 0.0, 1.0, 0.0, 0.0)


def _per_segment(value, n: int, name: str) -> np.ndarray:
    a = np.asarray(value, dtype=float)
    if a.ndim == 0:
        return np.full(n, float(a))
    if a.shape != (n,):
        raise ValueError(f"{name}: expected a scalar or shape ({n},), got {a.shape}")
    return a


def _num_segments(params: Mapping) -> int:
    length = np.asarray(params["length"], dtype=float)
    if length.ndim == 1:
        if "num_segments" in params and int(params["num_segments"]) != length.shape[0]:
            raise ValueError("num_segments disagrees with len(length)")
        return int(length.shape[0])
    return int(params.get("num_segments", 1))


def _strain_selector(active, n: int) -> np.ndarray | None:
    if active is None:
        return None
    a = np.asarray(active, dtype=bool)
    if a.shape == (6,):
        a = np.tile(a, n)
    return a.reshape(6 * n)


def floating_pcs_robot(params: Mapping):
    """soromox's floating-base spatial PCS built from a plain dict.

    Keys (scalars broadcast over the ``N`` segments):
        length: ``(N,)`` or scalar segment length [m] (with ``num_segments`` when scalar).
        radius [m], density [kg/m^3], young_modulus [Pa].
        shear_modulus [Pa] or poisson_ratio (``G = E / (2 (1 + nu))``; neither: ``nu = 0.5``).
        damping: material coefficient(s) eta [Pa s] (scalar or ``(N,)``), or ``(N, 6)``
            per-strain coefficients per unit length; default 0.
        reference_strain: ``(6,)`` or ``(N, 6)``; default straight ``[0, 0, 0, 1, 0, 0]``.
        gravity: ``(3,)`` world gravity [m/s^2]; default ``(0, 0, -9.81)``.
        active_strains: optional bool ``(6,)``, ``(N, 6)`` or ``(6 N,)``; default all.
        num_gauss_points: Gauss-Legendre points per segment; default 5.

    The robot always runs soromox's JAX implementation (``backend="jax"``).
    """
    import soromox

    n = _num_segments(params)
    L = _per_segment(params["length"], n, "length")
    E = _per_segment(params["young_modulus"], n, "young_modulus")
    if "shear_modulus" in params and "poisson_ratio" in params:
        raise ValueError("give at most one of shear_modulus and poisson_ratio")
    if "shear_modulus" in params:
        G = _per_segment(params["shear_modulus"], n, "shear_modulus")
    else:
        G = E / (2.0 * (1.0 + _per_segment(params.get("poisson_ratio", 0.5), n, "poisson_ratio")))
    damping = np.asarray(params.get("damping", 0.0), dtype=float)
    damping = damping if damping.ndim == 2 else _per_segment(damping, n, "damping")
    ref = np.broadcast_to(np.asarray(params.get("reference_strain", _STRAIGHT), dtype=float), (n, 6))
    radius = _per_segment(params["radius"], n, "radius")
    density = _per_segment(params["density"], n, "density")
    dview = SimpleNamespace(damping=damping, length=L)  # the shape _damping_kwargs reads
    links = [
        soromox.LinkSpec.circular(
            length=float(L[i]),
            radius=float(radius[i]),
            density=float(density[i]),
            reference_strain=np.array(ref[i]),
            young_modulus=float(E[i]),
            shear_modulus=float(G[i]),
            **_damping_kwargs(dview, i),
        )
        for i in range(n)
    ]
    selector = _strain_selector(params.get("active_strains"), n)
    structure = soromox.PCSStructure(
        num_gauss_points=int(params.get("num_gauss_points", 5)),
        strain_selector=None if selector is None else jnp.asarray(selector),
    )
    return soromox.PCS.from_links(
        links,
        structure=structure,
        gravity=jnp.asarray(params.get("gravity", _DEFAULT_GRAVITY), dtype=jnp.float64),
        floating_base=True,
        backend="jax",  # "auto" would pick soromox's Warp kernels on a GPU (warp is not installed)
    )


def base_configuration(rotation, position, q_rod) -> np.ndarray:
    """soromox's floating ``q`` from a base rotation matrix (base -> world), base position
    and rod strains: ``[qx, qy, qz, qw, x, y, z, q_rod]``."""
    pose = np.asarray(_spatial_base_pose(np.asarray(rotation, dtype=float), np.asarray(position, dtype=float)))
    return np.concatenate([pose, np.asarray(q_rod, dtype=float)])


@eqx.filter_jit
def _evaluate(robot, q, qd):
    q = robot.normalize_configuration(q)
    M, Cqd, G = robot.dynamics_terms(q, qd)
    D = robot.damping_matrix(q)
    dy = robot.forward_dynamics(0.0, robot.pack_state(q, qd))
    nq = robot.num_coordinates
    total = jnp.sum(robot.segment_length)
    return {
        "q": q,
        "M": M,
        "Cqd": Cqd,
        "G": G,
        "K": robot.stiffness_matrix(),
        "Kq": robot.elastic_force(q),
        "D": D,
        "Dqd": D @ qd,
        "qdot": dy[:nq],
        "qdd": dy[nq:],
        "tip_pose": robot.forward_kinematics(q, total),
        "segment_tip_poses": robot.forward_kinematics_tips(q),
        "tip_jacobian": robot.jacobian(q, total),
        "gravitational_energy": robot.gravitational_energy(q),
        "elastic_energy": robot.elastic_energy(q),
        "quad_nodes": robot.integration_points[1:-1],
        "quad_weights": robot.integration_weights[1:-1],
    }


def floating_pcs_terms(params: Mapping, q, qd) -> dict:
    """Dynamics terms of soromox's floating-base spatial PCS at ``(q, qd)``, as numpy arrays.

    ``params`` as for :func:`floating_pcs_robot`; ``q`` ``(7 + n,)`` and ``qd`` ``(6 + n,)`` in
    soromox's layout (module docstring). Returns, with ``nv = 6 + n``:
    ``M`` ``(nv, nv)``; ``Cqd`` ``(nv,)``; ``G`` ``(nv,)`` (+dU_g, left-hand side); ``K``
    ``(nv, nv)`` and ``Kq`` (elastic force, zero base rows); ``D`` ``(nv, nv)`` and ``Dqd``;
    ``qdd`` ``(nv,)`` (forward dynamics with zero actuation and external force) and ``qdot``
    ``(7 + n,)`` (stored-coordinate rate); ``tip_pose`` ``(4, 4)`` world pose at ``s = sum(L)``,
    ``segment_tip_poses`` ``(N, 4, 4)``; ``tip_jacobian`` ``(6, nv)`` (world-frame
    ``[w; v]`` of the tip point); ``gravitational_energy``, ``elastic_energy``; ``q`` (the
    configuration used, quaternion normalised); and ``quad_nodes``, ``quad_weights``, the
    Gauss rule on ``[0, 1]`` soromox integrates with. soromox's Newton iteration stops at
    float32 precision, so its nodes and weights are off the exact Gauss-Legendre ones by
    ~1e-8 (weights sum to 1 + O(1e-8)): pass them as sorogym's ``quadrature=`` to compare
    beyond ~1e-7 relative. Needs a float64-enabled session (the tests' conftest sets
    it); this module sets no global configuration.
    """
    robot = floating_pcs_robot(params)
    q = jnp.asarray(q, dtype=jnp.float64)
    qd = jnp.asarray(qd, dtype=jnp.float64)
    if q.shape != (robot.num_coordinates,) or qd.shape != (robot.num_velocities,):
        raise ValueError(
            f"expected q ({robot.num_coordinates},) and qd ({robot.num_velocities},), got {q.shape} and {qd.shape}"
        )
    return {k: np.asarray(v) for k, v in _evaluate(robot, q, qd).items()}
