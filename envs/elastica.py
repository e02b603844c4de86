"""A tendon-driven Cosserat rod on PyElastica: the CPU physics backend of the ``-Elastica``
twin environments.

The rod is a discrete Cosserat rod (PyElastica's ``CosseratRod``, ``n_elements`` elements,
``PositionVerlet`` steps of ``dt``) clamped at the base. Tendons are modelled as strings
threaded through eyelets fixed in the cross-sections: one at the base, one at the centre of
every element and one at the tip, each at the tendon's constant offset in the material frame.
A tendon under tension ``T`` pulls every interior eyelet along the bisector of its two
straight pieces, ``T (u_out - u_in)``, and the tip eyelet towards the previous one,
``-T u_in``; each eyelet force acts at its offset, so it also exerts the moment
``offset x force`` on its element. The tendon's generalized force is therefore the
derivative of ``-T x (polyline length)``, the discrete form of the PCS model's
``A(q) u = d(l(0) - l(q))/dq^T u``, and it converges to the continuous tendon load as the
elements shrink.

Frames: the rod starts at the world origin with its tangent (``d3``) along the mounting
axis; ``d1`` is the PCS body frame's local y axis and ``d2 = d3 x d1`` its local z axis, so
a tendon offset ``[y, z]`` of a PCS model is ``y d1 + z d2`` here.

Damping: PyElastica offers a mass-proportional damper (every node velocity and element
angular velocity decays at the rate ``gamma``), while the PCS model has per-strain viscous
damping. :func:`matched_damping_rate` chooses ``gamma`` so that the slowest bending mode of
the PCS model and of the rod decay at the same rate (their envelopes ``exp(-gamma t / 2)``
agree); higher modes are damped differently (mass-proportional damping damps them less).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np


def _import_elastica():
    try:
        import elastica
    except ImportError as err:  # pragma: no cover - depends on the installation
        raise ImportError(
            "the PyElastica backend needs PyElastica: pip install -c constraints.txt -e '.[elastica]'"
        ) from err
    return elastica


@dataclasses.dataclass(frozen=True)
class RodSpec:
    """Physical description of a straight, clamped, tendon-driven rod (SI units).

    Attributes:
        length, radius: [m]; density [kg/m^3]; young_modulus, shear_modulus [Pa].
        tendon_offsets: ``(m, 2)`` cross-section offsets ``[y, z]`` [m] in the PCS body frame.
        direction: unit world vector of the rod's tangent at the base (the mounting axis).
        normal: unit world vector of the body frame's local y axis at the base.
        gravity: world acceleration [m/s^2].
        damping_rate: mass-proportional damping ``gamma`` [1/s] (see module docstring).
    """

    length: float
    radius: float
    density: float
    young_modulus: float
    shear_modulus: float
    tendon_offsets: tuple
    direction: tuple = (0.0, 0.0, 1.0)
    normal: tuple = (0.0, 1.0, 0.0)
    gravity: tuple = (0.0, 0.0, 0.0)
    damping_rate: float = 0.0

    def __post_init__(self):
        for name in ("length", "radius", "density", "young_modulus", "shear_modulus"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"{name}: must be a positive finite number, got {value!r}")
        offsets = np.asarray(self.tendon_offsets, dtype=float)
        if offsets.ndim != 2 or offsets.shape[1] != 2:
            raise ValueError(f"tendon_offsets: expected shape (m, 2), got {offsets.shape}")
        if np.any(np.linalg.norm(offsets, axis=1) >= self.radius):
            raise ValueError("tendon_offsets: every tendon must lie inside the cross-section")
        if not (np.isfinite(self.damping_rate) and self.damping_rate >= 0):
            raise ValueError(f"damping_rate: must be finite and >= 0, got {self.damping_rate!r}")
        d, n = np.asarray(self.direction, float), np.asarray(self.normal, float)
        if abs(np.linalg.norm(d) - 1) > 1e-9 or abs(np.linalg.norm(n) - 1) > 1e-9 or abs(d @ n) > 1e-9:
            raise ValueError("direction and normal: must be orthonormal")


def matched_damping_rate(model) -> float:
    """Mass-proportional damping rate ``gamma`` [1/s] matching the decay of the PCS
    ``model``'s slowest bending mode at rest: the mode of the undamped linearisation
    ``M(0) qdd + K q = 0`` with the lowest frequency; its modal damping ``phi^T D phi``
    over its modal mass ``phi^T M phi`` is the rate at which a mass-proportional damper
    must slow every velocity (both give the envelope ``exp(-gamma t / 2)``)."""
    import jax.numpy as jnp
    import scipy.linalg

    q0 = jnp.zeros(model.num_dofs, model.params.length.dtype)
    M = np.asarray(model.inertia_matrix(q0), float)
    # K(q) = S q is Hookean: its columns are the elastic forces of the unit coordinates
    K = np.stack([np.asarray(model.elastic_force(q0.at[i].set(1.0)), float) for i in range(model.num_dofs)], axis=1)
    D = np.asarray(model.damping_matrix(), float)
    w2, phi = scipy.linalg.eigh(K, M)
    mode = phi[:, int(np.argmin(w2))]
    return float(mode @ D @ mode / (mode @ M @ mode))


class TendonRod:
    """A clamped Cosserat rod with tendons on PyElastica, advanced in control periods.

    Args:
        spec: the rod (:class:`RodSpec`).
        n_elements: number of rod elements.
        dt: PositionVerlet time step [s].

    Attributes:
        tensions: ``(m,)`` tendon tensions [N] applied at every step (set by :meth:`advance`).
        time: simulated time [s].
    """

    def __init__(self, spec: RodSpec, n_elements: int, dt: float):
        ea = _import_elastica()
        if int(n_elements) < 2:
            raise ValueError(f"n_elements: must be >= 2, got {n_elements}")
        if not (np.isfinite(dt) and dt > 0):
            raise ValueError(f"dt: must be a positive finite number, got {dt!r}")
        self.spec, self.n_elements, self.dt = spec, int(n_elements), float(dt)
        offsets = np.asarray(spec.tendon_offsets, float)
        self.tensions = np.zeros(offsets.shape[0])
        local = np.zeros((offsets.shape[0], 3))
        local[:, :2] = offsets  # components along d1, d2
        self._offsets_local = local

        # PyElastica composes a simulator from its mixins: collection, constraints, forcing, damping
        simulator = type("Simulator", (ea.BaseSystemCollection, ea.Constraints, ea.Forcing, ea.Damping), {})
        sim = simulator()
        rod = ea.CosseratRod.straight_rod(
            self.n_elements,
            np.zeros(3),
            np.asarray(spec.direction, float),
            np.asarray(spec.normal, float),
            spec.length,
            spec.radius,
            spec.density,
            youngs_modulus=spec.young_modulus,
            shear_modulus=spec.shear_modulus,
        )
        sim.append(rod)
        sim.constrain(rod).using(ea.OneEndFixedBC, constrained_position_idx=(0,), constrained_director_idx=(0,))
        loads = type("TendonLoads", (_TendonLoads, ea.NoForces), {})  # PyElastica checks the base class
        sim.add_forcing_to(rod).using(loads, owner=self)
        if any(spec.gravity):
            sim.add_forcing_to(rod).using(ea.GravityForces, acc_gravity=np.asarray(spec.gravity, float))
        if spec.damping_rate > 0:
            sim.dampen(rod).using(
                ea.AnalyticalLinearDamper, uniform_damping_constant=spec.damping_rate, time_step=self.dt
            )
        sim.finalize()
        self._sim, self.rod = sim, rod
        self._stepper = ea.PositionVerlet()
        self._fields = (
            "position_collection",
            "director_collection",
            "velocity_collection",
            "omega_collection",
            "acceleration_collection",
            "alpha_collection",
        )
        self.time = 0.0
        self._initial = self.snapshot()

    # -- state ------------------------------------------------------------------------------

    def snapshot(self) -> dict:
        """Copies of the rod's state arrays (restorable by :meth:`restore`)."""
        return {f: np.array(getattr(self.rod, f)) for f in self._fields} | {"time": self.time}

    def restore(self, snap: dict) -> None:
        """Return to a :meth:`snapshot` (PyElastica recomputes every derived quantity from
        these arrays at the next step)."""
        for f in self._fields:
            getattr(self.rod, f)[...] = snap[f]
        self.time = float(snap["time"])

    def reset(self) -> None:
        """Straight rod at rest, zero tensions, time 0."""
        self.restore(self._initial)
        self.tensions[:] = 0.0

    def tip_state(self) -> tuple[np.ndarray, np.ndarray]:
        """Tip position [m] and velocity [m/s] ``(3,)`` each, world frame."""
        return np.array(self.rod.position_collection[:, -1]), np.array(self.rod.velocity_collection[:, -1])

    def centerline(self) -> np.ndarray:
        """Node positions ``(n_elements + 1, 3)`` [m], world frame."""
        return np.array(self.rod.position_collection.T)

    def is_finite(self, bound: float = np.inf) -> bool:
        """Whether node positions [m] and velocities [m/s] are finite and below ``bound``."""
        x, v = self.rod.position_collection, self.rod.velocity_collection
        return bool(
            np.all(np.isfinite(x))
            and np.all(np.isfinite(v))
            and np.all(np.abs(x) < bound)
            and np.all(np.abs(v) < bound)
        )

    # -- dynamics ---------------------------------------------------------------------------

    def advance(self, tensions, duration: float) -> None:
        """Hold ``tensions`` ``(m,)`` [N] for ``duration`` [s] (rounded to whole steps)."""
        self.tensions[:] = np.asarray(tensions, float)
        steps = int(round(duration / self.dt))
        t, sim, stepper, dt = self.time, self._sim, self._stepper, self.dt
        for _ in range(steps):
            t = stepper.step(sim, t, dt)
        self.time = t

    def tendon_paths(self) -> np.ndarray:
        """Eyelet positions ``(m, n_elements + 2, 3)`` [m] (base, element centres, tip)."""
        return _eyelets(self.rod.position_collection, self.rod.director_collection, self._offsets_local)


class _TendonLoads:
    """PyElastica forcing: eyelet forces and moments of every tendon (module docstring)."""

    def __init__(self, owner: TendonRod):
        self._owner = owner
        self._torques = np.zeros((3, owner.n_elements))
        self._active = False

    def apply_forces(self, system, time=0.0):
        owner = self._owner
        self._active = bool(np.any(owner.tensions))
        if self._active:
            x, Q, forces = system.position_collection, system.director_collection, system.external_forces
            _tendon_loads_kernel()(x, Q, owner._offsets_local, owner.tensions, forces, self._torques)

    def apply_torques(self, system, time=0.0):
        if self._active:
            system.external_torques += self._torques


@functools.cache
def _tendon_loads_kernel():
    from numba import njit

    @njit(cache=True)
    def kernel(x, Q, offsets, tensions, forces, torques):
        """Adds the eyelet forces of every tendon to ``forces`` ``(3, n + 1)`` (nodes, world
        frame) and writes their moments into ``torques`` ``(3, n)`` (elements, material
        frame)."""
        n = Q.shape[2]
        torques[:, :] = 0.0
        prev = np.empty(3)
        cur = np.empty(3)
        u_in = np.empty(3)
        f = np.empty(3)
        fl = np.empty(3)
        for t in range(offsets.shape[0]):
            T = tensions[t]
            if T == 0.0:
                continue
            r0, r1, r2 = offsets[t, 0], offsets[t, 1], offsets[t, 2]
            # base eyelet (element 0's frame at node 0)
            for k in range(3):
                prev[k] = x[k, 0] + Q[0, k, 0] * r0 + Q[1, k, 0] * r1 + Q[2, k, 0] * r2
            for k in range(3):
                cur[k] = 0.5 * (x[k, 0] + x[k, 1]) + Q[0, k, 0] * r0 + Q[1, k, 0] * r1 + Q[2, k, 0] * r2
            norm = np.sqrt((cur[0] - prev[0]) ** 2 + (cur[1] - prev[1]) ** 2 + (cur[2] - prev[2]) ** 2)
            for k in range(3):
                u_in[k] = (cur[k] - prev[k]) / norm
            for j in range(n + 1):
                if j < n - 1:  # next eyelet: centre of element j + 1
                    nxt0 = (
                        0.5 * (x[0, j + 1] + x[0, j + 2])
                        + Q[0, 0, j + 1] * r0
                        + Q[1, 0, j + 1] * r1
                        + Q[2, 0, j + 1] * r2
                    )
                    nxt1 = (
                        0.5 * (x[1, j + 1] + x[1, j + 2])
                        + Q[0, 1, j + 1] * r0
                        + Q[1, 1, j + 1] * r1
                        + Q[2, 1, j + 1] * r2
                    )
                    nxt2 = (
                        0.5 * (x[2, j + 1] + x[2, j + 2])
                        + Q[0, 2, j + 1] * r0
                        + Q[1, 2, j + 1] * r1
                        + Q[2, 2, j + 1] * r2
                    )
                elif j == n - 1:  # next eyelet: the tip (last element's frame at the last node)
                    nxt0 = x[0, n] + Q[0, 0, n - 1] * r0 + Q[1, 0, n - 1] * r1 + Q[2, 0, n - 1] * r2
                    nxt1 = x[1, n] + Q[0, 1, n - 1] * r0 + Q[1, 1, n - 1] * r1 + Q[2, 1, n - 1] * r2
                    nxt2 = x[2, n] + Q[0, 2, n - 1] * r0 + Q[1, 2, n - 1] * r1 + Q[2, 2, n - 1] * r2
                if j < n:
                    d0, d1, d2 = nxt0 - cur[0], nxt1 - cur[1], nxt2 - cur[2]
                    norm = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
                    d0, d1, d2 = d0 / norm, d1 / norm, d2 / norm
                    f[0], f[1], f[2] = T * (d0 - u_in[0]), T * (d1 - u_in[1]), T * (d2 - u_in[2])
                    for k in range(3):
                        forces[k, j] += 0.5 * f[k]
                        forces[k, j + 1] += 0.5 * f[k]
                    e = j
                else:  # the tip eyelet pulls back along the last piece
                    f[0], f[1], f[2] = -T * u_in[0], -T * u_in[1], -T * u_in[2]
                    for k in range(3):
                        forces[k, n] += f[k]
                    e = n - 1
                # moment r x (Q f) in the material frame of element e
                for i in range(3):
                    fl[i] = Q[i, 0, e] * f[0] + Q[i, 1, e] * f[1] + Q[i, 2, e] * f[2]
                torques[0, e] += r1 * fl[2] - r2 * fl[1]
                torques[1, e] += r2 * fl[0] - r0 * fl[2]
                torques[2, e] += r0 * fl[1] - r1 * fl[0]
                if j < n:
                    u_in[0], u_in[1], u_in[2] = d0, d1, d2
                    cur[0], cur[1], cur[2] = nxt0, nxt1, nxt2

    return kernel


def _eyelets(x, Q, offsets_local):
    """Eyelets ``(m, n + 2, 3)`` of tendons at ``offsets_local`` ``(m, 3)`` on a rod with
    nodes ``x`` ``(3, n + 1)`` and directors ``Q`` ``(3, 3, n)`` (rows: d1, d2, d3)."""
    lab = np.einsum("ikj,mi->mjk", Q, offsets_local)  # (m, n, 3): Q_j^T r
    centres = 0.5 * (x[:, :-1] + x[:, 1:]).T  # (n, 3)
    mid = centres[None] + lab
    base = x[:, 0][None, None] + lab[:, :1]
    tip = x[:, -1][None, None] + lab[:, -1:]
    return np.concatenate([base, mid, tip], axis=1)
