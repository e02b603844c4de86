"""The static inverse problem of tendon-driven models: which admissible tendon tensions
hold the robot in an equilibrium whose tip reaches a target?

:class:`TendonStaticsModel` presents a tendon-driven PCS model (Hookean, ``K(q) = S q``) to
the IK solvers with the configuration ``z = [q, u]``: strains ``q`` ``(n,)`` and tensions
``u`` ``(m,)`` [N] in ``[lower, upper]`` (tendons only pull). Poses are those of ``q``, and
the equilibrium enters as an extra residual (``constraint_residual``, appended by
:func:`~sorogym.planning.ik_residual`)::

    r_eq(q, u) = sqrt(w_eq) (q - S^-1 (A(q) u - G(q)))         (strain units)

so one LM iteration costs one Jacobian of the kinematics and the forces, with no
equilibrium solve inside (the penalty formulation of the planning problems). Seeds are
random tensions with the strains of the linearised equilibrium about the rest shape.

:func:`make_static_inverse_solver` runs the beam search on this model and then *verifies*
each answer: it recomputes the equilibrium reached from rest under the returned tensions
(:func:`sorogym.control.equilibrium_from_rest`, Newton continuation) and reports the error
and status of that equilibrium, not of the penalised solution.
"""

from __future__ import annotations

from typing import NamedTuple, final

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from sorogym.control import equilibrium_from_rest
from sorogym.models import PCS

from ._ik import IN_COLLISION, NOT_REACHED, SUCCESS, TARGET_IN_OBSTACLE, make_ik_solver, target_error
from ._models import PCSPlanningModel, PlanningModel, robot_clearance


@final
class TendonStaticsModel(PlanningModel):
    """A tendon-driven spatial :class:`~sorogym.models.PCS` model for the static inverse
    problem (module docstring): configuration ``z = [q (n), u (m)]``.

    Args:
        model: a spatial PCS model with tendon actuation and Hookean elasticity.
        lower, upper: tension bounds [N] (scalars or ``(m,)``; ``0 <= lower < upper``).
        strain_limit: box on the strains ``|q_i| <= strain_limit`` (their units: 1/m for
            bending, 1 for elongation) keeping the search in the model's valid range.
        equilibrium_weight: ``w_eq``.
        points: backbone points for obstacle clearance (evenly spread, tip included).
    """

    strains: PCSPlanningModel  # the strain half: bounds |q| <= strain_limit, poses, backbone points
    lower: Array
    upper: Array
    compliance: Array
    equilibrium_weight: float = eqx.field(static=True)

    def __init__(
        self,
        model,
        lower=0.0,
        upper=1.0,
        strain_limit: float = 100.0,
        equilibrium_weight: float = 1.0,
        points: int = 20,
    ):
        if not isinstance(model, PCS):
            raise ValueError("TendonStaticsModel: needs a spatial PCS model (planar models have no SE(3) pose)")
        m = int(model.num_actuators)
        if m < 1:
            raise ValueError("TendonStaticsModel: the model has no actuators")
        lo = np.broadcast_to(np.asarray(lower, float), (m,)).copy()
        hi = np.broadcast_to(np.asarray(upper, float), (m,)).copy()
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) and np.all(lo >= 0) and np.all(lo < hi)):
            raise ValueError(f"lower/upper: need finite tension bounds 0 <= lower < upper for all {m} tendons")
        if not (np.isfinite(strain_limit) and strain_limit > 0):
            raise ValueError(f"strain_limit: must be finite and > 0, got {strain_limit}")
        if not (np.isfinite(equilibrium_weight) and equilibrium_weight > 0):
            raise ValueError(f"equilibrium_weight: must be finite and > 0, got {equilibrium_weight}")
        self.strains = PCSPlanningModel(model, -float(strain_limit), float(strain_limit), points=points)
        dtype = model.params.length.dtype
        self.lower, self.upper = jnp.asarray(lo, dtype), jnp.asarray(hi, dtype)
        self.compliance = jnp.linalg.inv(model.stiffness_matrix())
        self.equilibrium_weight = float(equilibrium_weight)

    @property
    def model(self):
        return self.strains.model

    def with_model(self, model) -> TendonStaticsModel:
        """The same problem (bounds, weights, points) on a model of the same structure with
        other parameters (traceable: e.g. an episode's randomised parameters)."""
        return eqx.tree_at(
            lambda s: (s.strains.model, s.compliance), self, (model, jnp.linalg.inv(model.stiffness_matrix()))
        )

    @property
    def radius(self) -> float:
        return self.strains.radius

    @property
    def num_strains(self) -> int:
        return self.strains.dim

    @property
    def dim(self) -> int:
        return self.num_strains + int(self.lower.shape[0])

    def split(self, z: Float[Array, " d"]) -> tuple[Array, Array]:
        """``z -> (q, u)``."""
        return z[: self.num_strains], z[self.num_strains :]

    def bounds(self) -> tuple[Array, Array]:
        q_lower, q_upper = self.strains.bounds()
        return jnp.concatenate([q_lower, self.lower]), jnp.concatenate([q_upper, self.upper])

    def project(self, z: Float[Array, " d"]) -> Float[Array, " d"]:
        lower, upper = self.bounds()
        return jnp.clip(z, lower.astype(z.dtype), upper.astype(z.dtype))

    def in_bounds(self, z: Float[Array, " d"], tol: float = 1e-9) -> Array:
        lower, upper = self.bounds()
        return jnp.all((z >= lower - tol) & (z <= upper + tol))

    def linear_equilibrium(self, u: Float[Array, " m"]) -> Float[Array, " n"]:
        """The equilibrium of the statics linearised about the rest shape ``q = 0``."""

        def residual(q):
            return self.model.potential_force(q) - self.model.actuation_force(q, u)

        q0 = jnp.zeros((self.num_strains,), u.dtype)
        return -jnp.linalg.solve(jax.jacfwd(residual)(q0), residual(q0))

    def sample(self, key: Array, num: int, dtype=None) -> Float[Array, "num d"]:
        """Random tensions (uniform in the bounds) with their linearised equilibria."""
        dtype = dtype or self.lower.dtype
        u = jax.random.uniform(
            key, (num, self.lower.shape[0]), dtype, self.lower.astype(dtype), self.upper.astype(dtype)
        )
        q = jax.vmap(self.linear_equilibrium)(u)
        return jax.vmap(self.project)(jnp.concatenate([q, u], axis=-1))

    def interpolate(self, z0: Float[Array, " d"], z1: Float[Array, " d"], s) -> Float[Array, " d"]:
        return (1 - s) * z0 + s * z1

    def constraint_residual(self, z: Float[Array, " d"]) -> Float[Array, " n"]:
        """``r_eq`` of the module docstring ``(n,)``."""
        q, u = self.split(z)
        free = self.model.actuation_force(q, u) - self.model.gravitational_force(q)
        return jnp.sqrt(self.equilibrium_weight) * (q - self.compliance.astype(z.dtype) @ free)

    def end_pose(self, z: Float[Array, " d"]) -> Float[Array, "4 4"]:
        return self.strains.end_pose(self.split(z)[0])

    def backbone_points(self, z: Float[Array, " d"]) -> Float[Array, "P 3"]:
        return self.strains.backbone_points(self.split(z)[0])


class StaticInverseResult(NamedTuple):
    """Verified answers of the static inverse problem for ``B`` targets."""

    tensions: Array  # (B, m) [N]
    q: Array  # (B, n) equilibrium reached from rest under the tensions
    error: Array  # (B,) target error of that equilibrium (position [m] or pose log norm)
    position_error: Array  # (B,) [m]
    clearance: Array  # (B,) smallest obstacle clearance of that equilibrium [m]
    status: Array  # (B,) int, as in IKResult


def make_static_inverse_solver(
    model,
    lower=0.0,
    upper=1.0,
    obstacles=None,
    position_only: bool = True,
    tolerance: float = 1e-3,
    num_seeds: int = 32,
    num_best: int = 4,
    coarse_iterations: int = 15,
    fine_iterations: int = 60,
    equilibrium_iterations: int = 25,
    ramp: int = 10,
    **options,
):
    """A jitted ``solve(targets, key) -> StaticInverseResult`` for target positions
    ``(B, 3)`` [m] (or poses ``(B, 4, 4)`` with ``position_only=False``). ``tolerance``:
    success threshold on the verified error. ``options`` go to :class:`TendonStaticsModel`;
    ``equilibrium_iterations``/``ramp`` to the verification."""
    statics = TendonStaticsModel(model, lower, upper, **options)
    ik = make_ik_solver(
        statics,
        obstacles=obstacles,
        position_only=position_only,
        num_seeds=num_seeds,
        num_best=num_best,
        coarse_iterations=coarse_iterations,
        fine_iterations=fine_iterations,
        tolerance=tolerance,
    )
    planning = statics.strains

    def verify(z, target, status):
        u = statics.split(z)[1]
        q = equilibrium_from_rest(model, u, equilibrium_iterations, ramp)
        error = jnp.linalg.norm(target_error(planning, q, target, position_only))
        tip = planning.end_pose(q)[:3, 3]
        goal = target if position_only else target[:3, 3]
        clearance = robot_clearance(planning, obstacles, q)
        ok = jnp.isfinite(error) & (error < tolerance)
        verified = jnp.where(clearance < 0.0, IN_COLLISION, jnp.where(ok, SUCCESS, NOT_REACHED))
        status = jnp.where(status == TARGET_IN_OBSTACLE, status, verified)
        return StaticInverseResult(u, q, error, jnp.linalg.norm(tip - goal), clearance, status.astype(jnp.int32))

    @jax.jit
    def solve(targets, key):
        result = ik(targets, key)
        return jax.vmap(verify)(result.q, targets, result.status)

    return solve


def sample_reachable_targets(
    solve, lower_corner, upper_corner, key, num: int, batch: int = 128, max_rounds: int = 50, dtype=None
) -> tuple[StaticInverseResult, np.ndarray]:
    """``num`` targets uniformly distributed over the statically reachable part of a box.

    Candidate positions are drawn uniformly in the box ``[lower_corner, upper_corner]``
    ``(3,)`` [m], ``batch`` at a time (one compiled shape), and solved by ``solve`` (from
    :func:`make_static_inverse_solver` with position targets); the verified successes are
    kept until ``num`` are found (rejection sampling, so the kept targets are uniform over
    the reachable set the solver finds, inside the box).

    Returns ``(result, acceptance)``: the successful :class:`StaticInverseResult` rows
    (leading axis ``num``; the equilibrium ``q`` under ``tensions`` reaches the candidate
    within the solver's tolerance) and the fraction of candidates accepted. ``dtype``: of
    the candidates (the model's; default: JAX's default float). Raises
    ``RuntimeError`` if ``max_rounds`` batches do not give ``num`` successes.
    """
    lo, hi = np.asarray(lower_corner, float), np.asarray(upper_corner, float)
    if lo.shape != (3,) or hi.shape != (3,) or not np.all(np.isfinite(lo) & np.isfinite(hi) & (lo < hi)):
        raise ValueError("lower_corner/upper_corner: need finite (3,) corners with lower < upper")
    if num < 1 or batch < 1:
        raise ValueError(f"num and batch must be >= 1, got {num} and {batch}")
    kept, tried = [], 0
    for _ in range(max_rounds):
        key, k_draw, k_solve = jax.random.split(key, 3)
        dtype = dtype or jnp.result_type(float)
        candidates = jax.random.uniform(k_draw, (batch, 3), dtype, jnp.asarray(lo, dtype), jnp.asarray(hi, dtype))
        result = jax.device_get(solve(candidates, k_solve))
        tried += batch
        ok = np.asarray(result.status) == SUCCESS
        kept.append(jax.tree_util.tree_map(lambda x, ok=ok: np.asarray(x)[ok], result))
        if sum(k.status.shape[0] for k in kept) >= num:
            break
    else:
        found = sum(k.status.shape[0] for k in kept)
        raise RuntimeError(f"sample_reachable_targets: {found} of {num} reachable targets after {tried} candidates")
    merged = jax.tree_util.tree_map(lambda *xs: np.concatenate(xs)[:num], *kept)
    accepted = sum(k.status.shape[0] for k in kept)
    return StaticInverseResult(*merged), accepted / tried
