"""The table-top tasks' own pieces: WrapAndHold-v0's band, hold point, enclosure measure,
tendon-pair statics and its wrapping expert."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sorogym


@pytest.fixture(scope="module")
def wrap():
    return sorogym.make("WrapAndHold-v0")


@pytest.fixture(scope="module")
def wrap_state(wrap):
    return jax.jit(wrap.reset)(jax.random.PRNGKey(3))


def test_band_pull_ramps_in_after_the_onset_and_slackens_with_travel(wrap, wrap_state):
    task = wrap_state.pipeline_state.task
    c = wrap.config
    d, anchor = np.asarray(task.direction), np.asarray(task.anchor)
    on, pull = float(task.onset), float(task.pull)
    assert np.isclose(np.linalg.norm(d), 1.0, atol=1e-6)
    # the full pull exceeds the table's friction limit by the configured ratio
    weight = float(wrap.episode_model(wrap_state.pipeline_state).bodies.mass[0]) * 9.81
    ratio = pull / (float(task.friction) * weight)
    assert c.pull_ratio[0] - 1e-5 <= ratio <= c.pull_ratio[1] + 1e-5
    sideways = anchor + 0.02 * np.array([-d[1], d[0]])  # no travel along the band
    for t, expected in [(on - 0.1, 0.0), (on + 0.25 * c.ramp_time, 0.25 * pull), (on + 2.0, pull)]:
        f = np.asarray(wrap.band_force(task, jnp.float32(t), jnp.asarray(sideways, jnp.float32)))
        np.testing.assert_allclose(f, expected * d, rtol=1e-5, atol=1e-7)
    half_way = anchor + 0.5 * c.band_slack * d
    f = np.asarray(wrap.band_force(task, jnp.float32(on + 2.0), jnp.asarray(half_way, jnp.float32)))
    np.testing.assert_allclose(f, 0.5 * pull * d, rtol=1e-4, atol=1e-7)
    beyond = anchor + 1.5 * c.band_slack * d
    f = np.asarray(wrap.band_force(task, jnp.float32(on + 2.0), jnp.asarray(beyond, jnp.float32)))
    np.testing.assert_allclose(f, 0.0, atol=1e-7)


def test_unheld_cylinder_is_pulled_away_and_the_hold_point_stays_where_the_pull_began(wrap):
    """With the arm slack the band drags the cylinder off (its pull beats the table's
    friction): the hold point follows the cylinder until the onset and then stays."""
    n = 4
    keys = jax.random.split(jax.random.PRNGKey(7), n)
    reset, step = jax.jit(jax.vmap(wrap.reset)), jax.jit(jax.vmap(wrap.step))
    s = reset(keys)
    N = wrap.config.num_segments
    zero = jnp.zeros((n, wrap.action_size))
    anchors, centres, times = [], [], []
    for _ in range(wrap.max_episode_steps):
        s = step(s, zero)
        ps = s.pipeline_state
        anchors.append(np.asarray(ps.task.anchor))
        centres.append(np.asarray(ps.q[:, N + 1 :]))
        times.append(np.asarray(ps.t))
    anchors, centres, times = map(np.stack, (anchors, centres, times))
    onset = np.asarray(s.pipeline_state.task.onset)
    before = times <= onset[None, :]
    np.testing.assert_array_equal(anchors[before], centres[before])
    after = ~before
    last = anchors[-1]
    np.testing.assert_array_equal(anchors[after], np.broadcast_to(last, anchors.shape)[after])
    assert np.all(np.asarray(s.metrics["object_displacement"]) > 2.0 * wrap.config.hold_radius)
    assert np.all(np.asarray(s.metrics["success"]) == 0.0)
    assert np.all(np.asarray(s.metrics["enclosure"]) == 0.0)


def test_tendon_pair_tensions_balance_the_commanded_curvatures(wrap, wrap_state):
    """Only the pulling tendon of a pair is taut: the tensions of ``differential_tensions``
    ``dT`` applied as ``[max(dT, 0), max(-dT, 0)]`` give exactly the elastic force ``K k``."""
    model = wrap.episode_model(wrap_state.pipeline_state)
    rng = np.random.default_rng(0)
    for _ in range(3):
        k = jnp.asarray(rng.uniform(-30.0, 30.0, wrap.config.num_segments), jnp.float32)
        dT = wrap.differential_tensions(model, k)
        u = jnp.concatenate([jnp.maximum(dT, 0.0), jnp.maximum(-dT, 0.0)])
        np.testing.assert_allclose(
            model.robot.actuation_force(k, u), model.robot.stiffness_matrix() @ k, rtol=1e-4, atol=1e-7
        )
        # the env's command maps an action of dT / max_tension onto the same tensions (after the lag)
        ps = wrap_state.pipeline_state.replace(u=u)
        a = dT / wrap.config.max_tension
        if np.all(np.abs(np.asarray(a)) <= 1.0):
            np.testing.assert_allclose(wrap.command(model, ps, a), u, rtol=1e-5, atol=1e-5)


def test_enclosure_counts_the_turn_of_the_backbone_along_the_surface(wrap):
    centre = jnp.array([0.2, 0.1])
    radius = 0.03
    for turn in (0.25, 0.5, 0.8):
        angles = jnp.linspace(0.3, 0.3 + 2 * np.pi * turn, 40)
        points = centre + radius * jnp.stack([jnp.cos(angles), jnp.sin(angles)], -1)
        on_surface = jnp.zeros(40)
        assert float(wrap.enclosure(points, centre, on_surface)) == pytest.approx(turn, abs=1e-5)
        assert float(wrap.enclosure(points[::-1], centre, on_surface)) == pytest.approx(turn, abs=1e-5)
        far = jnp.full(40, 2.0 * wrap.config.enclosure_band)
        assert float(wrap.enclosure(points, centre, far)) == 0.0
        half = jnp.full(40, 0.5 * wrap.config.enclosure_band)  # each step weighted by 1/2 * 1/2
        assert float(wrap.enclosure(points, centre, half)) == pytest.approx(0.25 * turn, abs=1e-5)


def test_wrapping_expert_holds_the_cylinder_against_the_band(wrap):
    n = 4
    keys = jax.random.split(jax.random.PRNGKey(10000), n)
    expert = wrap.expert("wrapper")

    @jax.jit
    def episode(keys):
        s = jax.vmap(wrap.reset)(keys)

        def body(s, _):
            s = jax.vmap(wrap.step)(s, jax.vmap(expert.act)(s))
            return s, s.metrics["enclosure"]

        s, enclosure = jax.lax.scan(body, s, None, length=wrap.max_episode_steps)
        return s.metrics, enclosure

    metrics, enclosure = episode(keys)
    assert np.all(np.asarray(metrics["success"]) == 1.0)
    assert np.all(np.asarray(metrics["object_displacement"]) < wrap.config.hold_radius)
    assert np.all(np.asarray(metrics["band_force"]) > 0.0)  # the band still pulls: held, not slack
    assert np.all(np.asarray(enclosure).max(0) > 0.5)  # more than half a turn around the cylinder
    with pytest.raises(ValueError, match="hook_segments"):
        wrap.expert("wrapper", hook_segments=4)


def test_self_overlap_is_zero_for_a_simple_arm_and_the_crossing_depth_for_a_coil(wrap, wrap_state):
    model = wrap.episode_model(wrap_state.pipeline_state)
    contact = wrap.contact(model)
    N = wrap.config.num_segments
    rest = wrap_state.pipeline_state.q

    def overlap(k):
        q = rest.at[:N].set(jnp.asarray(k, rest.dtype))
        points = model.forward_kinematics_batched(q, contact.s_ps)[:, :2, 2]
        return float(wrap.self_overlap(points, contact.radii))

    assert overlap([0.0] * N) == 0.0
    assert overlap([10.0] * N) == 0.0  # 0.4 m on a 0.1 m radius: under 2/3 of a turn
    # a uniform coil of radius R turns 0.4 / (2 pi R) times: at R = 0.04 m one and a half
    # turns, so the tip lies on the base's circle: the overlap is about the two radii
    radii = np.asarray(contact.radii)
    depth = overlap([25.0] * N)
    assert 0.5 * (radii[0] + radii[-1]) < depth <= radii[0] + radii.max() + 1e-6
