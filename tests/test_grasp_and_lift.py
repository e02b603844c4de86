"""GraspAndLift-v0's own pieces: the objects drawn per episode, the action's meaning (a
positive pair action closes either finger; the lift's force holds its set point), the
hold that makes a success, and the grasp planner lifting the object."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sorogym

NAME = "GraspAndLift-v0"


@pytest.fixture(scope="module")
def env():
    return sorogym.make(NAME)


def test_objects_rest_between_the_fingers_within_their_ranges(env):
    c = env.config
    states = jax.jit(jax.vmap(env.reset))(jax.random.split(jax.random.PRNGKey(0), 256))
    ps = states.pipeline_state
    bodies = ps.params.bodies
    h, rho = np.asarray(bodies.half_extents[:, 0]), np.asarray(bodies.corner_radius[:, 0])
    disc = np.all(h == 0.0, axis=-1)
    assert 0.35 < disc.mean() < 0.65
    assert np.all((rho[disc] >= c.disc_radius[0]) & (rho[disc] <= c.disc_radius[1]))
    assert np.all((h[~disc] >= c.box_half_side[0]) & (h[~disc] <= c.box_half_side[1]))
    np.testing.assert_allclose(rho[~disc], c.box_corner_radius, rtol=1e-6)
    mass = np.asarray(bodies.mass[:, 0])
    assert np.all((mass >= c.object_mass[0]) & (mass <= c.object_mass[1]))
    n_r = env.model.robot_dofs
    q = np.asarray(ps.q)
    rest = h[:, 1] + rho
    np.testing.assert_allclose(q[:, n_r + 2], rest, rtol=1e-6)  # on the table
    assert np.all(np.abs(q[:, n_r + 1]) <= c.object_offset + 1e-7)
    lift = np.asarray(ps.task.target_height) - rest
    assert np.all((lift >= c.target_lift[0] - 1e-6) & (lift <= c.target_lift[1] + 1e-6))
    assert np.all(q[:, :n_r] == 0.0)  # fingers straight, palm at its rest
    # the straight fingers clear the widest object
    assert np.all(np.abs(q[:, n_r + 1]) + np.maximum(h[:, 0], 0.0) + rho < 0.5 * c.finger_spacing - c.radius)


def test_pair_actions_close_either_finger_and_the_lift_holds_its_set_point():
    env = sorogym.make(NAME, actuator_time_constant=1e-6)  # the lag settles within one step
    c = env.config
    model = env.model
    gripper, n_r = model.robot, model.robot_dofs
    lifts = jnp.asarray([c.lift_up, -c.lift_down, 0.0])

    @jax.jit
    def forces(actions):
        """Per action ``(5,)``: the fingers' generalized force at rest and the residual of
        the lift's balance at the set point it commands (``+lift_up, -lift_down, 0``)."""
        ps = env.reset(jax.random.PRNGKey(1)).pipeline_state
        u = jax.vmap(lambda a: env.command(model, ps, a))(actions)
        q = jnp.zeros((actions.shape[0], n_r)).at[:, 0].set(jnp.concatenate([jnp.zeros(1), lifts]))
        tau = jax.vmap(gripper.actuation_force)(q, u)
        return tau, jax.vmap(gripper.potential_force)(q)[:, 0] - tau[:, 0]

    closing = [0.5, 0.5, 0.5, 0.5, 1.0]
    tau, residual = forces(jnp.asarray([closing] + [[0.0] * 4 + [a] for a in (1.0, -1.0, 0.0)], env.dtype))
    assert np.all(np.asarray(tau[0, 1:3]) > 0.0) and np.all(np.asarray(tau[0, 3:5]) < 0.0)  # both close inwards
    np.testing.assert_allclose(tau[0, 1:3], -tau[0, 3:5], rtol=1e-5)  # mirror images
    # the lift's force holds the unloaded gripper at its set point: +lift_up at +1, -lift_down at -1
    np.testing.assert_allclose(residual[1:], 0.0, atol=1e-3 * float(gripper.weight_on_lift()))


def test_success_needs_the_object_held_at_height_for_hold_time(env):
    model = env.model
    n_r = model.robot_dofs
    ps = env.reset(jax.random.PRNGKey(2)).pipeline_state
    at_target = ps.replace(q=ps.q.at[n_r + 2].set(ps.task.target_height))
    advance = jax.jit(lambda ps: env.advance_task(None, model, ps))
    for k in range(env.hold_steps):
        at_target = at_target.replace(task=advance(at_target))
        assert int(at_target.task.held_steps) == k + 1
    assert float(env.outputs(model, None, at_target, None).metrics["success"]) == 1.0
    # moving fast, or off the height, breaks the hold
    fast = at_target.replace(qd=at_target.qd.at[n_r + 2].set(2.0 * env.config.hold_speed))
    assert int(advance(fast).held_steps) == 0
    low = at_target.replace(q=at_target.q.at[n_r + 2].add(-2.0 * env.config.height_tolerance))
    assert int(advance(low).held_steps) == 0


def test_grasp_planner_lifts_and_holds_the_objects(env):
    n = 8
    expert = env.expert("grasp")

    @jax.jit
    def episodes(keys):
        def one(key):
            s = env.reset(key)

            def body(s, _):
                s = env.step(s, expert.act(s))
                m = s.metrics
                return s, (m["success"], m["goal_distance"], m["grip_force"], s.info["nonfinite"])

            return jax.lax.scan(body, s, None, length=env.max_episode_steps)[1]

        return jax.vmap(one)(keys)

    success, error, grip, nonfinite = (np.asarray(x) for x in episodes(jax.random.split(jax.random.PRNGKey(7), n)))
    assert not nonfinite.any()
    assert success.max(axis=1).mean() >= 7 / 8
    held = success[:, -1] > 0
    assert np.all(error[held, -1] < env.config.height_tolerance)
    assert np.all(grip[held, -1] > 0.1)  # both fingers press on what they hold


@pytest.mark.parametrize(
    "overrides,field",
    [
        ({"finger_spacing": 0.06}, "finger_spacing"),
        ({"palm_height": 0.09}, "palm_height"),
        ({"tendon_offset": 1.2}, "tendon_offset"),
        ({"disc_radius": (0.03, 0.02)}, "disc_radius"),
        ({"lift_stiffness": 0.0}, "lift_stiffness"),
        ({"rolling_damping": -1.0}, "rolling_damping"),
        ({"num_probes": 1}, "num_probes"),
    ],
)
def test_bad_config_is_refused_at_construction(overrides, field):
    with pytest.raises(ValueError, match=field):
        sorogym.make(NAME, **overrides)
