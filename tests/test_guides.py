"""The contributor guides work as written: their code blocks, run in order, give a model, an
actuator and an environment that pass the checks the guides promise.

* ``docs/contributing/adding-a-model.md``: the spring-loaded link against its closed-form
  dynamics, AD of its energies and kinematics, and an independent ODE solve (scipy); the
  pneumatic chambers on PCS and GVS against AD of the chamber volumes and a hand-derived
  column of ``A``.
* ``docs/contributing/adding-an-environment.md``: the guide's env, registered from its own
  module in a child interpreter (the registry is process-wide), passes the env contract
  tests of ``tests/test_envs.py``, Gymnasium's ``check_env``, the integrator accuracy bound,
  and its expert beats doing nothing.
"""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _isolated import run_isolated
from scipy.integrate import solve_ivp

import sorogym as sg

GUIDES = Path(__file__).resolve().parents[1] / "docs" / "contributing"


def python_blocks(page: str) -> list[str]:
    """The ```python blocks of a guide, in order."""
    blocks = re.findall(r"```python\n(.*?)```", (GUIDES / page).read_text(), re.S)
    assert blocks, f"{page}: no python blocks"
    return blocks


def run_blocks(page: str, blocks: list[str], module_name: str) -> types.ModuleType:
    """Execute ``blocks`` (consecutive blocks of one page may continue a class body) as the
    module ``module_name``, registered in ``sys.modules``."""
    module = types.ModuleType(module_name)
    sys.modules[module_name] = module
    exec(compile("".join(blocks), str(GUIDES / page), "exec"), module.__dict__)
    return module


@pytest.fixture(scope="module")
def model_guide() -> types.ModuleType:
    blocks = python_blocks("adding-a-model.md")
    assert len(blocks) == 5, "the model guide's blocks changed: update this test"
    return run_blocks("adding-a-model.md", blocks, "sorogym_guide_adding_a_model")


def _spring_link(guide, length=0.3, mass=0.2, stiffness=0.5, damping=0.05, gravity=9.81):
    params = guide.SpringLinkParams(*(jnp.asarray(x, jnp.float64) for x in (length, mass, stiffness, damping, gravity)))
    return guide.SpringLink(params), params


def test_model_guide_spring_link_matches_its_closed_form_and_ad(model_guide):
    robot, p = _spring_link(model_guide)
    rng = np.random.default_rng(0)
    for _ in range(5):
        q, qd, u = (jnp.asarray(rng.uniform(-2, 2, 1)) for _ in range(3))
        s = jnp.asarray(rng.uniform(0.0, 0.3))
        # kinematics: the Jacobian's rows are the derivatives of the pose ([omega; p_dot], world axes)
        g, dg = jax.jvp(lambda q_: robot.forward_kinematics(q_, s), (q,), (jnp.ones(1),))
        omega_hat = dg[:3, :3] @ g[:3, :3].T
        J = robot.jacobian(q, s)
        np.testing.assert_allclose(J[:3, 0], [omega_hat[2, 1], omega_hat[0, 2], omega_hat[1, 0]], atol=1e-14)
        np.testing.assert_allclose(J[3:, 0], dg[:3, 3], atol=1e-14)
        # M from the tip mass's kinetic energy; G from the weight of the tip mass; G, K energy gradients
        J_tip = robot.jacobian(q, p.length)[3:]
        np.testing.assert_allclose(robot.inertia_matrix(q), p.mass * J_tip.T @ J_tip, rtol=1e-14)
        np.testing.assert_allclose(robot.gravitational_force(q), -J_tip.T @ (p.mass * jnp.array([0, 0, -p.gravity])))
        np.testing.assert_allclose(robot.gravitational_force(q), jax.grad(robot.gravitational_energy)(q), rtol=1e-14)
        np.testing.assert_allclose(robot.elastic_force(q), jax.grad(robot.elastic_energy)(q), rtol=1e-14)
        np.testing.assert_allclose(robot.stiffness_matrix(), jax.jacfwd(robot.elastic_force)(q), rtol=1e-14)
        # the forward dynamics the base derives from these members, against the pendulum's closed form
        y = jnp.concatenate([q, qd])
        qdd = (u - p.mass * p.gravity * p.length * jnp.sin(q) - p.stiffness * q - p.damping * qd) / (
            p.mass * p.length**2
        )
        np.testing.assert_allclose(robot.forward_dynamics(0.0, y, (u,)), jnp.concatenate([qd, qdd]), rtol=1e-13)
        # power balance: dE/dt = qd (A u - D qd)
        _, dE = jax.jvp(robot.total_energy, (y,), (robot.forward_dynamics(0.0, y, (u,)),))
        np.testing.assert_allclose(dE, qd[0] * (u[0] - p.damping * qd[0]), rtol=1e-12, atol=1e-14)
    # the statics the base provides: k q + m g l sin q = u at equilibrium
    u = jnp.array([0.2])
    q_eq = robot.static_equilibrium(u)
    np.testing.assert_allclose(p.stiffness * q_eq + p.mass * p.gravity * p.length * jnp.sin(q_eq), u, atol=1e-12)
    # parameters update without touching the actuation
    heavier = robot.update_params(mass=0.4)
    assert heavier.actuation == robot.actuation
    np.testing.assert_allclose(heavier.inertia_matrix(q), 2 * robot.inertia_matrix(q), rtol=1e-14)


def test_model_guide_spring_link_rollout_matches_an_independent_ode_solve(model_guide):
    robot, p = _spring_link(model_guide)
    y0, u = jnp.array([0.8, 0.0]), jnp.array([0.05])
    traj = sg.sim.rollout_to(robot, y0, t1=0.5, u=u, solver_dt=1e-4, save_dt=0.1)
    m, g, L, k, c = (float(x) for x in (p.mass, p.gravity, p.length, p.stiffness, p.damping))

    def pendulum(t, y):
        return [y[1], (float(u[0]) - m * g * L * np.sin(y[0]) - k * y[0] - c * y[1]) / (m * L**2)]

    ref = solve_ivp(pendulum, (0.0, 0.5), np.asarray(y0), t_eval=np.asarray(traj.ts), rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(np.asarray(traj.ys), ref.y.T, atol=1e-7)


def test_model_guide_chambers_are_work_conjugate_on_pcs_and_gvs(model_guide):
    guide = model_guide
    assert guide.A.shape == (12, 3) and guide.A_gvs.shape == (16, 3)  # the shapes the guide states
    rng = np.random.default_rng(1)
    u = jnp.array([2e4, -3e3, 5e3])  # negative gauge pressure: no effort
    for robot in (guide.robot, guide.arm):
        q = jnp.asarray(rng.normal(0.0, 0.5, robot.num_dofs))
        A = robot.actuation_matrix(q)
        # A = dV/dq^T: the volumes are computed from the strain field, A through the model's map
        np.testing.assert_allclose(A, jax.jacfwd(robot.actuation_coordinates)(q).T, rtol=1e-12, atol=1e-18)
        np.testing.assert_allclose(robot.actuation_force(q, u), A @ jnp.maximum(u, 0.0), rtol=1e-12, atol=1e-18)
    # by hand on PCS: chamber j at (y, z) of area a on a segment of length l loads
    # (kx, ky, kz, sx, sy, sz) with a l (0, z, -y, 1, 0, 0)
    A = guide.robot.actuation_matrix(jnp.zeros(12))
    offsets, a, l = np.asarray(guide.chambers.offsets), 5e-5, 0.1
    for j, (y, z) in enumerate(offsets):
        np.testing.assert_allclose(A[:6, j], a * l * np.array([0, z, -y, 1, 0, 0]), rtol=1e-12, atol=1e-20)
        np.testing.assert_allclose(A[6:, j], A[:6, j], rtol=1e-12, atol=1e-20)
    planar = sg.RodParams.upright(length=[0.1], radius=0.02, density=1000.0, young_modulus=2e5, planar=True)
    with pytest.raises(ValueError, match="spatial rods"):
        sg.PlanarPCS(planar, actuation=guide.chambers)


def environment_guide_body() -> None:
    """Run in a child interpreter: build the guide's env from its blocks and hold it to the
    env contract tests, Gymnasium's checker, the accuracy bound and its expert."""
    import gymnasium
    from gymnasium.utils.env_checker import check_env

    import sorogym

    page = "adding-an-environment.md"
    blocks = python_blocks(page)
    assert len(blocks) == 7, "the environment guide's blocks changed: update this test"
    run_blocks(page, blocks[:5], "sorogym_guide_bending_reaching")  # step 6 edits the catalogue; @register suffices
    usage = {"sorogym": sorogym, "gymnasium": gymnasium}
    exec(compile(blocks[6], page, "exec"), usage)
    name = "BendingReaching-v0"
    assert name in sorogym.registry()
    env, gym_env = usage["env"], usage["gym_env"]
    assert gym_env.spec.max_episode_steps == env.max_episode_steps == 80
    check_env(gym_env.unwrapped, skip_render_check=True)
    drawn = gymnasium.make("sorogym/" + name, render_mode="rgb_array", render_size=(96, 96))  # the base draws the rod
    drawn.reset(seed=0)
    frame = drawn.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[-1] == 3 and frame.std() > 0

    import test_envs  # the contract tests the guide's step 7 runs

    for check in (
        test_envs.test_reset_step_shapes_dtypes_and_keys,
        test_envs.test_determinism_by_seed,
        test_envs.test_domain_randomized_rollouts_stay_finite,
        test_envs.test_truncation_full_reset_and_final_observation,
        test_envs.test_nonfinite_state_ends_episode_cleanly,
        test_envs.test_bad_configuration_fails_at_construction,
    ):
        check(name)
    accuracy = sorogym.env.integrator_accuracy(name, num_steps=20)
    assert accuracy["tip_error_rel"] < 0.01, accuracy

    # the expert closes most of the distance that doing nothing leaves
    reset, step, act = jax.jit(env.reset), jax.jit(env.step), jax.jit(env.expert().act)
    final = {"expert": [], "zero": []}
    for seed in range(3):
        for policy in final:
            state = reset(jax.random.PRNGKey(seed))
            for _ in range(env.max_episode_steps):
                state = step(state, act(state) if policy == "expert" else jnp.zeros(env.action_size))
            assert float(state.info["nonfinite"]) == 0.0
            final[policy].append(float(state.metrics["goal_distance"]))
    assert np.mean(final["expert"]) < 0.3 * np.mean(final["zero"]), final


def test_environment_guide_builds_an_env_that_passes_the_contract():
    run_isolated(environment_guide_body, timeout=900.0)
