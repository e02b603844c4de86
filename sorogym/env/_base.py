"""The environment base: a pure-functional brax ``Env`` over a sorogym model.

One env step holds the actuator command for one control period ``control_dt`` and advances
the physics by ``num_substeps`` steps of the scheme ``config.integrator`` (of
:data:`sorogym.sim.FIXED_STEP_SCHEMES`) inside one ``lax.scan``. Subclasses supply the
model, the task (initial state, target motion, termination, and its :class:`StepOutputs`)
and optionally an external generalized force evaluated at every substep (contact) and a
line load along the robot's rod (ground friction, drag; taken implicitly by the scheme).

State layout (``brax.envs.base.State``):

* ``pipeline_state``: a :class:`PhysicsState` (time, ``q``, ``qd``, actuator state ``u``,
  physical parameters when randomised, the env's task dataclass, a PRNG key, the step counter);
* ``obs``: ``(observation_size,)`` float32; ``reward``/``done``: float32 scalars;
* ``metrics``: ``reward/<term>`` for every reward term (already scaled) plus the task's
  metrics; ``info``: ``nonfinite`` (1.0 when the physics produced a non-finite or
  diverging state: the episode ends, the previous finite state is kept and the reward is
  finite) plus the task's info keys. The same keys at reset and at every step.
"""

from __future__ import annotations

import abc
import dataclasses
from typing import Any, ClassVar, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct
from jaxtyping import Array

from ..models import SoftRobot
from ..sim import FIXED_STEP_SCHEMES
from ._brax import import_brax_envs, install_brax_compat
from ._config import RANDOMIZATION_LIMITS, check_randomization, replace_config

_brax_envs = import_brax_envs()
Env, State = _brax_envs.Env, _brax_envs.State


class StepOutputs(NamedTuple):
    """What a task reports about one state (:meth:`SoroEnv.outputs`), a pytree.

    Attributes:
        obs: observation ``(observation_dim,)``; the base makes it float32 and finite and
            clips it to ``observation_limit``.
        reward_terms: unscaled reward terms (scalars), one per field of
            ``config.reward.scales``; not used at reset.
        metrics: task metrics (scalars, e.g. ``tracking_error``, ``success``), added to
            ``State.metrics``; info: task info (scalars, e.g. ``cost``), added to
            ``State.info``. Both with the same keys at reset and at every step.
    """

    obs: Array
    reward_terms: dict[str, Array] | None
    metrics: dict[str, Array]
    info: dict[str, Array]


@struct.dataclass
class PhysicsState:
    """Physics and task state of one environment (a pytree; batched under ``vmap``).

    Attributes:
        t: time since reset [s], scalar.
        q, qd: generalized coordinates ``(n,)`` and velocities ``(n,)``.
        u: actuator state ``(m,)`` (e.g. tendon tensions [N]) held over the control period.
        params: physical parameters of this episode (the model's ``params`` type) when
            domain randomisation is enabled, else ``None``.
        task: the task's own state (target, goal, obstacles, ...), the env's pytree
            dataclass (e.g. ``TrackingTask``).
        rng: PRNG key for in-episode randomness and the next full reset.
        steps: control steps since reset (int32).
    """

    t: Array
    q: Array
    qd: Array
    u: Array
    params: Any
    task: Any
    rng: Array
    steps: Array


class SoroEnv(Env, abc.ABC):
    """Base class of every sorogym environment (see module docstring).

    Subclasses define ``Config`` (a frozen dataclass with the fields of
    :class:`~sorogym.env.EpisodeConfig`, usually by subclassing it, and ``reward.scales``),
    ``default_config()``, and the task hooks below (:meth:`build_model`, :meth:`reset_task`,
    :meth:`command` and :meth:`outputs` required). The base calls only the
    :class:`~sorogym.models.SoftRobot` interface of the model.
    """

    #: Name in the registry (``sorogym/<name>-v0`` on the Gymnasium side).
    name: ClassVar[str] = ""
    #: Overrides for the float64 reference copy in accuracy checks (the reference replays
    #: the task state of the checked run, so costly task set-up can be skipped there).
    reference_overrides: ClassVar[dict] = {}
    #: Parameter fields that ``config.randomization`` may scale, with the widest factors
    #: ``(low, high)`` supported for each (the rod models' fields by default, see
    #: :data:`~sorogym.env._config.RANDOMIZATION_LIMITS`); wider ranges are refused at
    #: construction.
    randomization_limits: ClassVar[dict[str, tuple[float, float]]] = RANDOMIZATION_LIMITS
    #: Control steps of the accuracy check (:func:`~sorogym.env.integrator_accuracy`):
    #: ``None`` for a whole episode; a locomotor sets a short horizon, since its position
    #: error grows with the distance travelled under any integrator.
    accuracy_steps: ClassVar[int | None] = None
    #: The reference of accuracy checks: ``"tsit5"`` (diffrax's Tsit5 on the continuous
    #: dynamics, the default) or ``"fine_scheme"`` (the env's own scheme in float64 at a
    #: 100 times finer substep: for robots whose overdamped stiff modes an explicit solver
    #: must step at microseconds).
    reference_solver: ClassVar[str] = "tsit5"
    #: What :meth:`accuracy_point` measures (``"tip"`` or ``"centre_of_mass"``), recorded
    #: in the accuracy check's result.
    accuracy_point_name: ClassVar[str] = "tip"
    #: Observations are clipped to [-limit, limit] (the Gymnasium Box bounds).
    observation_limit: ClassVar[float] = 1e4

    def __init__(self, config: Any = None, **overrides):
        install_brax_compat()  # brax's own trainers run on any sorogym env (see _brax.py)
        config = self.default_config() if config is None else config
        config = replace_config(config, overrides)
        self._validate_base_config(config)
        self.config = config
        self.dtype = jnp.dtype(config.dtype)
        self.model: SoftRobot = self.build_model(config)
        self._scale_names = tuple(f.name for f in dataclasses.fields(config.reward.scales))
        self._scales = {k: float(getattr(config.reward.scales, k)) for k in self._scale_names}

    # -- configuration --------------------------------------------------------------

    @classmethod
    @abc.abstractmethod
    def default_config(cls) -> Any:
        """The env's default frozen ``Config``."""

    @classmethod
    def _validate_base_config(cls, config) -> None:
        for name in ("control_dt", "episode_length_s", "divergence_bound"):
            value = getattr(config, name)
            if not (isinstance(value, (int, float)) and np.isfinite(value) and value > 0):
                raise ValueError(f"{name}: must be a positive finite number, got {value!r}")
        if not (isinstance(config.num_substeps, int) and config.num_substeps >= 1):
            raise ValueError(f"num_substeps: must be an integer >= 1, got {config.num_substeps!r}")
        if not (isinstance(config.theta, (int, float)) and 0.5 <= config.theta <= 1.0):
            raise ValueError(f"theta: must lie in [0.5, 1] (0.5: trapezoidal; 1: backward Euler), got {config.theta!r}")
        if not (isinstance(config.line_load_iterations, int) and config.line_load_iterations >= 0):
            raise ValueError(f"line_load_iterations: must be an integer >= 0, got {config.line_load_iterations!r}")
        check_randomization(config.randomization, cls.randomization_limits, cls.name)
        if config.integrator not in FIXED_STEP_SCHEMES:
            raise ValueError(f"integrator: unknown {config.integrator!r}; use one of {tuple(FIXED_STEP_SCHEMES)}")

    @property
    def control_dt(self) -> float:
        """Duration of one env step [s]."""
        return float(self.config.control_dt)

    @property
    def substep_dt(self) -> float:
        """Integrator step [s]."""
        return self.control_dt / self.config.num_substeps

    @property
    def max_episode_steps(self) -> int:
        """Episode length in control steps (applied by the wrappers, brax convention)."""
        return int(round(self.config.episode_length_s / self.control_dt))

    # -- brax Env interface -----------------------------------------------------------

    @property
    def observation_size(self) -> int:
        return int(self.observation_dim)

    @property
    def action_size(self) -> int:
        return int(self.action_dim)

    @property
    def backend(self) -> str:
        return "sorogym"

    @property
    @abc.abstractmethod
    def observation_dim(self) -> int:
        """Length of the observation vector."""

    @property
    @abc.abstractmethod
    def action_dim(self) -> int:
        """Length of the action vector (actions in [-1, 1])."""

    def reset(self, rng: Array) -> State:
        """Fresh episode: sample parameters (if randomised), the task and the initial state."""
        key_params, key_task, key_next = jax.random.split(rng, 3)
        params = self._sample_params(key_params)
        model = self._model_for(params)
        task, q0, qd0, u0 = self.reset_task(key_task, model)
        cast = lambda x: jnp.asarray(x, self.dtype)  # noqa: E731
        ps = PhysicsState(
            t=jnp.zeros((), self.dtype),
            q=cast(q0),
            qd=cast(qd0),
            u=cast(u0),
            params=params,
            task=task,
            rng=key_next,
            steps=jnp.zeros((), jnp.int32),
        )
        zero = jnp.zeros((), jnp.float32)
        out = self.outputs(model, None, ps, None)
        metrics = {f"reward/{k}": zero for k in self._scale_names} | _float32(out.metrics)
        info = {"nonfinite": zero} | _float32(out.info)
        return State(
            pipeline_state=ps, obs=self._clean_obs(out.obs), reward=zero, done=zero, metrics=metrics, info=info
        )

    def step(self, state: State, action: Array) -> State:
        """One control period: command from ``action`` in [-1, 1], physics substeps, task update."""
        ps = state.pipeline_state
        action = jnp.clip(jnp.asarray(self.checked_action(action), self.dtype), -1.0, 1.0)
        model = self._model_for(ps.params)
        u = jnp.asarray(self.command(model, ps, action), self.dtype)
        y0 = model.pack_state(ps.q, ps.qd)
        y1, diverged = self._integrate(model, y0, u, ps)
        y1 = jnp.where(diverged, y0, y1)
        q1, qd1 = model.split_state(y1)
        rng, key_task = jax.random.split(ps.rng)
        moved = ps.replace(t=ps.t + self.control_dt, q=q1, qd=qd1, u=u, rng=rng, steps=ps.steps + 1)
        moved = moved.replace(task=self.advance_task(key_task, model, moved))
        out = self.outputs(model, ps, moved, action)
        reward, scaled = self.scaled_reward(out.reward_terms)
        done = jnp.logical_or(diverged, self.terminated(model, moved))
        # new dicts that keep the keys added by wrappers (brax's eval adds "reward")
        metrics = state.metrics | {f"reward/{k}": v for k, v in scaled.items()} | _float32(out.metrics)
        info = state.info | {"nonfinite": diverged.astype(jnp.float32)} | _float32(out.info)
        return state.replace(
            pipeline_state=moved,
            obs=self._clean_obs(out.obs),
            reward=reward,
            done=done.astype(jnp.float32),
            metrics=metrics,
            info=info,
        )

    def checked_action(self, action) -> Array:
        """``action`` as an array, after checking (at trace time) that it is one env's action:
        shape ``(action_size,)`` (batch with ``jax.vmap``) and a real number type; raises
        ``ValueError`` naming the expected shape otherwise, instead of a broadcasting error
        from inside the physics."""
        action = jnp.asarray(action)
        if action.shape != (self.action_size,):
            raise ValueError(
                f"action: {self.name} takes one env's action of shape ({self.action_size},) "
                f"(batch with jax.vmap or wrap_for_training), got shape {action.shape}"
            )
        if not (jnp.issubdtype(action.dtype, jnp.floating) or jnp.issubdtype(action.dtype, jnp.integer)):
            raise ValueError(f"action: {self.name} takes real numbers in [-1, 1], got dtype {action.dtype}")
        return action

    def scaled_reward(self, terms: dict[str, Array]) -> tuple[Array, dict[str, Array]]:
        """``(reward, scaled terms)``: each unscaled term times its ``config.reward.scales``
        entry (float32 scalars) and their sum, a non-finite sum replaced by 0. Raises
        ``KeyError`` when the terms are not exactly the scales' fields."""
        if set(terms) != set(self._scale_names):
            raise KeyError(f"reward terms {sorted(terms)} do not match reward.scales {sorted(self._scale_names)}")
        scaled = {k: jnp.asarray(self._scales[k] * terms[k], jnp.float32) for k in self._scale_names}
        reward = sum(scaled.values(), jnp.zeros((), jnp.float32))
        return jnp.where(jnp.isfinite(reward), reward, 0.0), scaled

    def _clean_obs(self, obs: Array) -> Array:
        obs = jnp.asarray(obs, jnp.float32)
        lim = self.observation_limit
        return jnp.clip(jnp.where(jnp.isfinite(obs), obs, 0.0), -lim, lim)

    # -- physics ------------------------------------------------------------------------

    def _integrate(self, model: SoftRobot, y0: Array, u: Array, ps: PhysicsState) -> tuple[Array, Array]:
        """``num_substeps`` integrator steps with ``u`` held; returns ``(y1, diverged)``."""
        h = jnp.asarray(self.substep_dt, self.dtype)
        model, effort = self.actuated(model, u)

        def applied(q, qd):
            return model.generalized_force(q, effort, self.external_force(model, q, qd, ps))

        scheme = FIXED_STEP_SCHEMES[self.config.integrator]
        load = self.line_load(model, ps)
        extra = {"theta": self.config.theta}
        if load is not None:
            extra.update(line_load=load, line_load_iterations=self.config.line_load_iterations)

        def substep(y, _):
            return scheme(model, y, applied, h, **extra), None

        y1, _ = jax.lax.scan(substep, y0, None, length=self.config.num_substeps)
        bound = self.config.divergence_bound
        # a non-finite state in (a scheme may not read all of it: the overdamped one ignores qd)
        # or a non-finite or diverging state out
        diverged = jnp.logical_not(jnp.all(jnp.isfinite(y0)) & jnp.all(jnp.isfinite(y1)) & jnp.all(jnp.abs(y1) < bound))
        return y1, diverged

    def actuated(self, model: SoftRobot, u: Array) -> tuple[SoftRobot, Array | None]:
        """``(model, effort)`` under the actuator state ``u``: the model the physics steps and
        the actuator efforts ``(m,)`` its actuation matrix maps (``None``: none). By default
        ``(model, u)``; an env whose actuators set parameters of the model instead of forces
        (a concentric tube robot's rotation and insertion drives) returns the driven model."""
        return model, u

    def _sample_params(self, key: Array) -> Any:
        """Physical parameters of an episode: ``None`` without randomisation, else the
        nominal ``model.params`` with each randomised field scaled by a per-segment (or
        per-joint) factor drawn uniformly from its ``(low, high)`` range."""
        if not self.config.randomization:
            return None
        return self.randomized_params(key, self.model.params)

    def randomized_params(self, key: Array, params: Any) -> Any:
        """``params`` (the robot's parameters) with each field of ``config.randomization``
        scaled by a factor per entry (segment, joint) drawn uniformly from its range."""
        ranges = self.config.randomization
        keys = jax.random.split(key, len(ranges))
        fields = {}
        for k, (name, lo, hi) in zip(keys, ranges, strict=True):
            nominal = fields.get(name, getattr(params, name))
            factor = jax.random.uniform(k, nominal.shape, nominal.dtype, lo, hi)
            fields[name] = nominal * factor
        return params.replace(**fields)

    def _model_for(self, params: Any) -> SoftRobot:
        return self.model if params is None else self.model.with_params(params)

    def episode_model(self, ps: PhysicsState) -> SoftRobot:
        """The robot model of the episode in ``ps`` (its randomised parameters, if any)."""
        return self._model_for(ps.params)

    # -- measures -------------------------------------------------------------------------

    def tip_position(self, model: SoftRobot, q: Array) -> Array:
        """World position ``(3,)`` (``(2,)`` planar) [m] of the robot's tip: the point the
        accuracy checks compare (the frame at ``model.tip_abscissa``; an env whose tip lies
        elsewhere overrides this)."""
        return model.forward_kinematics(q, model.tip_abscissa)[:-1, -1]

    def accuracy_point(self, model: SoftRobot, q: Array) -> Array:
        """World position ``(3,)`` (``(2,)`` planar) [m] that the accuracy check compares
        (:func:`~sorogym.env.integrator_accuracy`): :meth:`tip_position` by default; a
        locomotor measures its centre of mass, whose path is the task, where its head's
        error is dominated by fast shape changes that do not carry it anywhere."""
        return self.tip_position(model, q)

    @property
    def robot_length(self) -> float:
        """Distance [m] from the base to :meth:`tip_position` of the nominal robot at
        ``q = 0`` (the length of a robot that is straight at rest), the scale of the
        accuracy checks."""
        model = self.model

        @jax.jit  # one compiled call, not hundreds of eagerly dispatched ops
        def length():
            q0 = jnp.zeros(model.num_dofs, self.dtype)
            base = model.forward_kinematics(q0, jnp.zeros((), self.dtype))[:-1, -1]
            return jnp.linalg.norm(self.tip_position(model, q0) - base)

        return float(length())

    # -- experts --------------------------------------------------------------------------

    #: names accepted by :meth:`expert`; the first is the default
    expert_kinds: tuple[str, ...] = ()

    def expert(self, kind: str | None = None, **options):
        """A model-based expert policy (:class:`~sorogym.env.Expert`) of this env: ``kind``
        one of :attr:`expert_kinds` (default: the first); ``options`` (gains) go to
        :meth:`build_expert`. An env without experts raises ``ValueError``."""
        if kind is None and self.expert_kinds:
            kind = self.expert_kinds[0]
        if kind not in self.expert_kinds:
            raise ValueError(f"expert kind: {self.name} has {self.expert_kinds or 'no experts'}, got {kind!r}")
        return self.build_expert(kind, **options)

    def build_expert(self, kind: str, **options):
        """Construct the expert ``kind`` (one of :attr:`expert_kinds`). Envs that list
        expert kinds override this."""
        raise TypeError(
            f"{type(self).__name__} lists expert_kinds {self.expert_kinds} but does not override build_expert"
        )

    # -- task hooks -----------------------------------------------------------------------

    @abc.abstractmethod
    def build_model(self, config) -> SoftRobot:
        """The nominal robot model in ``self.dtype`` (validated at construction)."""

    @abc.abstractmethod
    def reset_task(self, key: Array, model: SoftRobot) -> tuple[Any, Array, Array, Array]:
        """``(task_state, q0, qd0, u0)`` of a fresh episode."""

    @abc.abstractmethod
    def command(self, model: SoftRobot, ps: PhysicsState, action: Array) -> Array:
        """Actuator state held over the next control period from ``action`` in [-1, 1]."""

    def external_force(self, model: SoftRobot, q: Array, qd: Array, ps: PhysicsState) -> Array | None:
        """Generalized external force ``(n,)`` at a substep (``None``: none)."""
        return None

    def line_load(self, model: SoftRobot, ps: PhysicsState):
        """A force per unit length along the robot's rod (:data:`sorogym.models.LineLoad`:
        ground friction, fluid drag) for the episode in ``ps``, stepped linearly implicitly
        by the integrator at every substep (``None``: none)."""
        return None

    def advance_task(self, key: Array, model: SoftRobot, ps: PhysicsState) -> Any:
        """Task state after a control period (``ps`` already holds the new physics)."""
        return ps.task

    @abc.abstractmethod
    def outputs(
        self, model: SoftRobot, prev: PhysicsState | None, ps: PhysicsState, action: Array | None
    ) -> StepOutputs:
        """The observation, unscaled reward terms, metrics and info of the state ``ps``
        reached from ``prev`` under ``action`` (at reset ``prev`` and ``action`` are
        ``None`` and the reward terms are not used). One hook, so quantities the outputs
        share (tip kinematics, contact) are computed once per step."""

    def terminated(self, model: SoftRobot, ps: PhysicsState) -> Array:
        """Task termination (success or failure), scalar bool. Time limits are the wrappers'."""
        return jnp.zeros((), bool)

    # -- rendering ------------------------------------------------------------------------

    def render_scene(self, ps: PhysicsState) -> dict:
        """Numpy description of the scene of the (unbatched, numpy) state ``ps`` for the
        renderers (:mod:`sorogym.render`: backbone points, tendon paths, markers, obstacles).
        By default the episode's rod (PCS, PlanarPCS, GVS) and its tendons, or its body tree
        (:func:`~sorogym.render.scene_of_model`), titled with the env's name and time; envs add
        their task (targets, obstacles, view bounds) to it, and envs on other models
        (articulated chains) override it."""
        from ..render import scene_of_model

        scene = scene_of_model(self.episode_model(ps), np.asarray(ps.q))
        scene["title"] = f"{self.name}  t = {float(ps.t):.2f} s"
        return scene


def _float32(values: dict[str, Array]) -> dict[str, Array]:
    return {k: jnp.asarray(v, jnp.float32) for k, v in values.items()}
