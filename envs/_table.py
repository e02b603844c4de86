"""What the table-top manipulation envs share (``PushToGoal-v0``, ``WrapAndHold-v0``): a
horizontal soft arm on a table beside rigid objects in a :class:`sorogym.PlanarScene` (seen
from above): the hooks of :class:`TableArmEnv`, the arm-object contact, config range checks
and the top view."""

from __future__ import annotations

import abc
import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from sorogym.contact import BodyContact, GroundFriction, cross_section_radius
from sorogym.env import EpisodeConfig, SoroEnv
from sorogym.models import RodParams, SceneLoad

from ._ground import G, top_view


@dataclasses.dataclass(frozen=True)
class TableArmConfig(EpisodeConfig):
    """The config fields the table envs share (each env's ``Config`` subclasses it, overrides
    defaults where it differs and adds its own): 20 Hz control with 8 trapezoidal substeps,
    an arm of ``num_segments`` silicone segments of ``segment_length`` [m] with Kelvin-Voigt
    ``retardation_time`` [s] and a first-order actuator lag, and its contact probes with the
    Hunt-Crossley law, looked ahead by ``contact_lookahead`` substeps when
    ``implicit_contact``."""

    # Timing: 20 Hz control
    control_dt: float = 0.05
    num_substeps: int = 8
    episode_length_s: float = 8.0
    integrator: str = "trapezoid"
    # Arm
    num_segments: int = 3
    segment_length: float = 0.1  # m
    young_modulus: float = 5e6  # Pa
    density: float = 1070.0  # kg/m^3
    retardation_time: float = 0.05  # s, Kelvin-Voigt tau = 3 eta / E
    actuator_time_constant: float = 0.2  # s
    # Contact
    num_probes: int = 16  # evenly spaced to the tip
    contact_stiffness: float = 1000.0  # N/m per probe
    contact_damping: float = 5.0  # s/m, Hunt-Crossley
    implicit_contact: bool = True  # depth looked ahead (False: explicit force)
    contact_lookahead: float = 1.0  # the look-ahead in substeps


def check_range(config, name: str, low: float = 0.0) -> tuple[float, float]:
    """``config.<name>`` as ``(lo, hi)``, checked ``low < lo <= hi`` (else a ``ValueError``
    naming the field)."""
    lo, hi = getattr(config, name)
    if not (low < lo <= hi):
        raise ValueError(f"{name}: expected {low} < low <= high, got {getattr(config, name)}")
    return float(lo), float(hi)


def check_arm_config(config) -> None:
    """The :class:`TableArmConfig` fields every table env checks alike (``ValueError``
    naming the field): integer segment and probe counts (at least 1 and 2) and a
    non-negative retardation, contact damping and look-ahead."""
    if int(config.num_segments) != config.num_segments or config.num_segments < 1:
        raise ValueError(f"num_segments: must be an integer >= 1, got {config.num_segments}")
    if int(config.num_probes) != config.num_probes or config.num_probes < 2:
        raise ValueError(f"num_probes: must be an integer >= 2, got {config.num_probes}")
    if not (config.retardation_time >= 0 and config.contact_damping >= 0 and config.contact_lookahead >= 0):
        raise ValueError("retardation_time, contact_damping, contact_lookahead: must be non-negative")


def rotation(theta):
    """The ``(2, 2)`` rotation by ``theta`` [rad]."""
    c, s = jnp.cos(theta), jnp.sin(theta)
    return jnp.stack([jnp.stack([c, -s]), jnp.stack([s, c])])


def table_arm_params(config, dtype, radius=None) -> RodParams:
    """The arm of ``config`` (``num_segments`` segments of ``segment_length`` [m],
    ``density``, ``young_modulus``, Kelvin-Voigt ``retardation_time`` [s]; ``radius`` [m]
    per segment ``(N,)`` or uniform, default ``config.radius``) as planar rod parameters:
    incompressible, its base at the origin along world +x, and no gravity in the table's
    plane (the table carries the arm; its friction on the arm is neglected)."""
    N = int(config.num_segments)
    return RodParams.create(
        length=[config.segment_length] * N,
        radius=config.radius if radius is None else radius,
        density=config.density,
        young_modulus=config.young_modulus,
        poisson_ratio=0.5,
        damping=config.young_modulus * config.retardation_time / 3.0,
        gravity=jnp.zeros(2),
        planar=True,
        base_rotation=0.0,
        dtype=dtype,
    )


def probe_abscissae(config) -> np.ndarray:
    """``(num_probes,)`` arc lengths [m] of the arm's contact probes, evenly spaced to its tip."""
    length = config.num_segments * config.segment_length
    return (np.arange(1, config.num_probes + 1) / config.num_probes) * length


def contact_law(env) -> tuple[float, float, float]:
    """``(stiffness [N/m], Hunt-Crossley damping [s/m], look-ahead [s])`` of ``env.config``'s
    contact: the depth looked ahead by ``contact_lookahead`` substeps when
    ``implicit_contact``, else 0 (the explicit force)."""
    c = env.config
    return c.contact_stiffness, c.contact_damping, c.contact_lookahead * env.substep_dt if c.implicit_contact else 0.0


def arm_object_contact(env, model, body: int = 0) -> BodyContact:
    """The contact between the arm of the episode's ``model`` (its probes as discs of its
    radius) and object ``body``: ``config.contact_stiffness`` [N/m], Hunt-Crossley
    ``contact_damping`` [s/m], the depth looked ahead by ``contact_lookahead`` substeps
    when ``implicit_contact`` (else explicit)."""
    c = env.config
    s = jnp.asarray(probe_abscissae(c), env.dtype)
    return BodyContact(
        body,
        s,
        cross_section_radius(model.robot, s),
        *contact_law(env),
        dtype=env.dtype,
    )


def table_view(env, ps, markers, centre, half: float) -> dict:
    """The top view of ``ps``: the arm, every object (an extruded disc or rounded box), the
    ``markers`` (``(name, (2,) position, colour)``), framed as the square of half-width
    ``half`` [m] around ``centre``."""
    from sorogym.render import scene_of_model

    model = env.episode_model(ps)
    n_r = model.robot_dofs
    q = np.asarray(ps.q, float)
    scene = scene_of_model(model.robot, q[:n_r])
    scene["title"] = f"{env.name}  t = {float(ps.t):.2f} s"
    thickness = 0.015
    for b, (theta, x, y) in enumerate(q[n_r:].reshape(-1, 3)):
        pose = np.eye(4)
        pose[:2, :2] = [[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]]
        pose[:2, 3] = (x, y)
        h = np.asarray(model.bodies.half_extents[b], float)
        rho = float(model.bodies.corner_radius[b])
        if not np.any(h > 0):
            scene.setdefault("bodies", []).append(("ellipsoid", pose, np.array([rho, rho, thickness]), "tab:blue"))
        else:
            scene.setdefault("bodies", []).append(("box", pose, np.array([*(h + rho), thickness]), "tab:blue"))
    for name, point, colour in markers:
        point = np.asarray(point, float)
        scene["markers"].append((name, np.array([point[0], point[1], 0.0]), colour))
    ground = -float(np.max(np.asarray(model.robot.params.radius)))
    return top_view(scene, np.asarray(centre, float), half, ground=ground)


class TableArmEnv(SoroEnv):
    """What the envs of one soft arm beside one object on a table share (not registered):
    the config checks of the arm, its probes and the object's placement, the loads (the
    table's friction on the object and the arm-object contact, both implicit), the tip's
    pose and the object's placement beside the straight arm at reset.

    A subclass's config has ``num_segments``, ``segment_length`` [m], ``num_probes``,
    ``retardation_time`` [s], ``contact_*`` (:func:`arm_object_contact`), ``slip_velocity``
    [m/s], ``friction``, ``object_range`` [m] and ``object_bearing_deg``, and its task
    state a ``friction`` coefficient; it defines :meth:`object_reach` [m] (the largest
    extent of its objects from their centre)."""

    #: the float64 reference takes the contact explicitly (the look-ahead is the step's)
    reference_overrides = {"implicit_contact": False}
    # The accuracy check follows the arm's tip over 1 s of random actions: policies push and
    # hold, they do not strike, and a struck object drifts from the reference (each env's
    # own figures in its module and docs/benchmarks.md).
    accuracy_steps = 20

    @staticmethod
    @abc.abstractmethod
    def object_reach(config) -> float:
        """The largest extent [m] of the env's objects from their centre."""

    @classmethod
    def clearance_radius(cls, config) -> float:
        """Half-width [m] of the corridor an object keeps from the straight arm's axis at reset:
        the object's reach, the arm's largest radius and 10 mm."""
        radii = [getattr(config, name) for name in ("radius", "base_radius", "tip_radius") if hasattr(config, name)]
        return cls.object_reach(config) + max(radii) + 0.01

    def check_table_config(self, config) -> None:
        """``ValueError``s naming the field: segment and probe counts, non-negative damping,
        the object's ranges, objects beyond the arm's reach, and no room beside the
        straight arm for the largest object at the nearest range."""
        check_arm_config(config)
        for name in ("object_mass", "friction"):
            check_range(config, name)
        r_lo, r_hi = check_range(config, "object_range")
        length = config.num_segments * config.segment_length
        if r_hi + self.object_reach(config) > length:
            raise ValueError(f"object_range: objects up to {r_hi} m from the base lie beyond the arm's reach")
        clear = self.clearance_radius(config)
        if not (clear < r_lo and np.degrees(np.arcsin(clear / r_lo)) < config.object_bearing_deg <= 90.0):
            raise ValueError(
                f"object_bearing_deg: {config.object_bearing_deg} leaves no room beside the straight arm for "
                f"objects up to {clear:.3f} m across at {r_lo} m"
            )

    @property
    def arm_length(self) -> float:
        return self.config.num_segments * self.config.segment_length

    def contact(self, model) -> BodyContact:
        """The arm-object contact of the episode's ``model`` (its arm's radius)."""
        return arm_object_contact(self, model)

    def line_load(self, model, ps):
        """The table's friction on the object and the arm-object contact, both implicit."""
        friction = GroundFriction(ps.task.friction, self.config.slip_velocity, G, dtype=self.dtype)
        return SceneLoad(bodies=friction, interactions=(self.contact(model),))

    def tip_pose(self, model, q):
        """``(tip position (2,) [m], tip heading (2,) unit)`` of the arm."""
        T = model.forward_kinematics(q, self.arm_length)
        return T[:2, 2], T[:2, 0]

    def place_beside_arm(self, k_range, k_side, k_bearing):
        """``(centre (2,) [m], bearing [rad])`` of an object at reset: at a distance uniform
        in ``object_range`` from the base, on a random side of the straight arm, at a bearing
        uniform between the corridor's edge (:meth:`clearance_radius`) and
        ``object_bearing_deg``."""
        c = self.config
        r = jax.random.uniform(k_range, (), self.dtype, *c.object_range)
        least = jnp.arcsin(self.clearance_radius(c) / r)
        most = jnp.asarray(np.deg2rad(c.object_bearing_deg), self.dtype)
        side = jnp.where(jax.random.bernoulli(k_side), 1.0, -1.0).astype(self.dtype)
        phi = side * (least + jax.random.uniform(k_bearing, (), self.dtype) * (most - least))
        return r * jnp.stack([jnp.cos(phi), jnp.sin(phi)]), phi
