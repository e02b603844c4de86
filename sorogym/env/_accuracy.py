"""Accuracy of an env's physics stepping against a high-accuracy float64 reference.

One episode of random actions (or the env's ``accuracy_steps``) runs through the env as
configured (float32, the fast fixed-step integrator). The actuator states it commanded are
then replayed, held over each control period, on a float64 copy of the same env integrated
with diffrax's Tsit5 (a fixed step ``reference_dt``, or adaptive steps when
``reference_dt`` is ``None``), including any state-dependent external force and line load,
through the continuous dynamics the env's scheme discretises
(:func:`sorogym.sim.scheme_vector_field`: the equation of motion, or the overdamped flow of
the ``"overdamped"`` scheme). An env whose continuous dynamics are too stiff for that
(``reference_solver = "fine_scheme"``) is replayed instead through its own scheme in
float64 at a 100 times finer substep: a convergence check of its time step. The score is
the largest difference of the env's accuracy point
(:meth:`~sorogym.env.SoroEnv.accuracy_point`: the tip, or a locomotor's centre of mass)
over the episode divided by the robot's length; the tip's error is reported alongside. The
reference runs with float64 enabled in a scoped ``jax.enable_x64`` context; the global JAX
config is left alone.
"""

from __future__ import annotations

import diffrax
import jax
import jax.numpy as jnp
import numpy as np

from ..sim import scheme_vector_field
from ._registry import make

#: The references by name: ``"tsit5"``, diffrax's explicit Tsit5 on the continuous dynamics;
#: ``"fine_scheme"``, the env's own scheme in float64 at a :data:`FINE_SCHEME_RATIO` times
#: finer substep (see :func:`_fine_scheme_period`).
REFERENCE_SOLVERS = ("tsit5", "fine_scheme")
#: How much finer than the env's the substep of a fine-scheme reference is.
FINE_SCHEME_RATIO = 100


def random_action_episode(env, key, num_steps: int):
    """Roll ``num_steps`` uniform random actions through ``env`` (one jitted scan); returns
    ``(initial pipeline state, pipeline states after every step, stacked)``."""
    k_reset, k_act = jax.random.split(key)
    actions = jax.random.uniform(k_act, (num_steps, env.action_size), jnp.float32, -1.0, 1.0)

    @jax.jit
    def run(k_reset, actions):
        s0 = env.reset(k_reset)

        def body(s, a):
            s = env.step(s, a)
            return s, s.pipeline_state

        _, traj = jax.lax.scan(body, s0, actions)
        return s0.pipeline_state, traj

    return run(k_reset, actions)


def integrator_accuracy(
    name: str,
    num_steps: int | None = None,
    seed: int = 0,
    reference_dt: float | None = 1e-5,
    rtol: float = 1e-9,
    atol: float = 1e-12,
    solver: str | None = None,
    **overrides,
) -> dict:
    """Max error [m] of the env's accuracy point, and relative to the length, of the fast
    env integrator over one episode of random actions (see module docstring). Returns a
    dict with ``point_error``, ``point_error_rel``, ``accuracy_point`` (what was measured), the tip's
    ``tip_error`` and ``tip_error_rel``, ``num_steps``, ``substep_dt`` and the reference
    settings."""
    with jax.enable_x64(True):  # the float64 reference, scoped to this call
        return _integrator_accuracy(name, num_steps, seed, reference_dt, rtol, atol, solver, **overrides)


def _integrator_accuracy(name, num_steps, seed, reference_dt, rtol, atol, solver, **overrides) -> dict:
    if solver is not None and solver not in REFERENCE_SOLVERS:  # before building anything
        raise ValueError(f"solver: unknown {solver!r}; use one of {REFERENCE_SOLVERS}")
    env = make(name, **overrides)
    solver_name = env.reference_solver if solver is None else solver
    if solver_name not in REFERENCE_SOLVERS:
        raise ValueError(f"{env.name}.reference_solver: unknown {solver_name!r}; use one of {REFERENCE_SOLVERS}")
    ref_overrides = {**overrides, **env.reference_overrides, "dtype": "float64"}
    if solver_name == "fine_scheme":  # the env's scheme, FINE_SCHEME_RATIO times finer
        ref_overrides["num_substeps"] = env.config.num_substeps * FINE_SCHEME_RATIO
    ref_env = make(name, **ref_overrides)
    if num_steps is None:
        num_steps = env.max_episode_steps if env.accuracy_steps is None else env.accuracy_steps
    num_steps = int(num_steps)
    key = jax.random.PRNGKey(seed)
    ps0, traj = random_action_episode(env, key, num_steps)
    points = lambda e, m, q: jnp.stack([e.tip_position(m, q), e.accuracy_point(m, q)])  # noqa: E731
    tips = np.asarray(
        jax.jit(jax.vmap(lambda q, u, p: points(env, env.actuated(env._model_for(p), u)[0], q)))(
            traj.q, traj.u, traj.params
        )
    )
    # jitted: an eager reset of a rod env dispatches (and compiles) hundreds of single ops
    ref0 = jax.jit(ref_env.reset)(jax.random.split(key)[0]).pipeline_state
    # Same task and parameters as the float32 run, in float64.
    to64 = lambda x: jnp.asarray(x, jnp.float64) if jnp.issubdtype(jnp.asarray(x).dtype, jnp.floating) else x  # noqa: E731
    ref0 = ref0.replace(task=jax.tree.map(to64, ps0.task), params=jax.tree.map(to64, ps0.params))
    model = ref_env._model_for(ref0.params)
    if solver_name == "fine_scheme":
        period = _fine_scheme_period(ref_env, model)
    else:
        period = _diffrax_period(env, ref_env, model, reference_dt, rtol, atol)

    tasks = jax.tree.map(lambda x0, xs: jnp.concatenate([to64(x0)[None], to64(xs)[:-1]]), ps0.task, traj.task)

    @jax.jit
    def replay(y0, us, tasks):
        def body(y, inputs):
            u, task = inputs
            y = period(y, u, ref0.replace(task=task))
            return y, points(ref_env, ref_env.actuated(model, u)[0], model.split_state(y)[0])

        return jax.lax.scan(body, y0, (us, tasks))[1]

    y0 = model.pack_state(to64(ps0.q), to64(ps0.qd))  # the checked run's initial state (it may be random)
    ref_tips = np.asarray(replay(y0, jnp.asarray(traj.u, jnp.float64), tasks))
    tip_err, err = np.max(np.linalg.norm(tips - ref_tips, axis=-1), axis=0).astype(float)
    length = env.robot_length
    return {
        "env": env.name,
        "num_steps": num_steps,
        "substep_dt": env.substep_dt,
        "num_substeps": env.config.num_substeps,
        "reference": _reference_label(solver_name, reference_dt, ref_env),
        "reference_dt": reference_dt,
        "accuracy_point": env.accuracy_point_name,
        "point_error": float(err),
        "point_error_rel": float(err / length),
        "tip_error": float(tip_err),
        "tip_error_rel": float(tip_err / length),
    }


def _diffrax_period(env, ref_env, model, reference_dt, rtol, atol):
    """One control period of the float64 reference: diffrax's Tsit5 on the continuous
    dynamics the env's scheme discretises, ``(y, u, ps) -> y1``."""
    dt = ref_env.control_dt
    if reference_dt is None:
        controller, dt0 = diffrax.PIDController(rtol=rtol, atol=atol), dt / 100
    else:
        controller, dt0 = diffrax.ConstantStepSize(), float(reference_dt)
    flow = scheme_vector_field(env.config.integrator)  # the dynamics the env's scheme discretises

    def period(y, u, ps):
        driven, effort = ref_env.actuated(model, u)
        load = ref_env.line_load(driven, ps)

        def vf(t, y, args):
            q, qd = driven.split_state(y)
            tau_ext = ref_env.external_force(driven, q, qd, ps)
            if load is not None:  # explicitly here: the reference's steps resolve its stiffness
                tau_load = driven.line_load_terms(q, qd, load).force
                tau_ext = tau_load if tau_ext is None else tau_ext + tau_load
            act = (effort,) if tau_ext is None else (effort, tau_ext)
            return flow(driven, t, y, act)

        sol = diffrax.diffeqsolve(
            diffrax.ODETerm(vf),
            diffrax.Tsit5(),
            0.0,
            dt,
            dt0,
            y,
            stepsize_controller=controller,
            max_steps=int(dt / (reference_dt or dt / 1e5)) + 16,
        )
        return sol.ys[-1]

    return period


def _fine_scheme_period(ref_env, model):
    """One control period of the float64 reference by the env's own fixed-step scheme at a
    :data:`FINE_SCHEME_RATIO` times finer substep, ``(y, u, ps) -> y1``: for robots whose
    continuous dynamics are too stiff for an explicit reference (overdamped modes at
    ``-1e6`` 1/s make Tsit5 step at microseconds); a convergence check of the env's step."""

    def period(y, u, ps):
        return ref_env._integrate(model, y, u, ps)[0]

    return period


def _reference_label(solver_name: str, reference_dt: float | None, ref_env) -> str:
    if solver_name == "fine_scheme":
        return f"{ref_env.config.integrator}_dt{ref_env.substep_dt:g}"
    return "tsit5_fixed" if reference_dt else "tsit5_adaptive"
