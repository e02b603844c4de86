"""Soft crawlers on the ground: the snake (``sorogym.robots.snake``, ``SnakeToGoal-v0``):
friction thresholds on a slope in closed form through the env, slithering that comes from
the friction's anisotropy, the expert's progress, swimming (``SwimmerToGoal-v0``) that
comes from the drag's anisotropy, and bad input; the crawler
(``sorogym.robots.crawler``, ``InchwormCrawl-v0``): its coordinates and centre of mass, an
inchworm stroke that moves it only on directional friction, and the env's expert."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _locomotion import expert_progress
from scipy.optimize import brentq

import sorogym
from sorogym.contact import GroundFriction
from sorogym.robots import CrawlerBody, SnakeBody, crawler, slope_gravity, snake

G = 9.81


@functools.cache
def _env(**overrides):
    env = sorogym.make("SnakeToGoal-v0", friction_range=(1.0, 1.0), **overrides)
    return env, jax.jit(jax.vmap(env.reset)), jax.jit(jax.vmap(env.step))


def _aligned_uphill(env, state):
    """Episodes restarted with the body straight along world +x (head uphill), at rest."""
    q = jnp.zeros_like(state.pipeline_state.q)
    return state.replace(pipeline_state=state.pipeline_state.replace(q=q, qd=jnp.zeros_like(q)))


@pytest.mark.parametrize("mu_backward,slides", [(0.2, True), (0.5, False)])
def test_snake_on_a_slope_slides_down_only_above_the_friction_angle(mu_backward, slides):
    """On a 20 degree slope (uphill = world +x), a straight passive snake pointing uphill
    slides tail first when ``tan(20 deg) = 0.364`` exceeds the backward coefficient, with
    acceleration ``g (sin a - mu_b cos a)``; with ``mu_b = 0.5`` it holds, creeping at the
    regularised law's steady speed: the ``v`` where the law's axial coefficient (blended
    from backward to forward over ``eps``) times ``v / sqrt(v^2 + eps^2)`` equals
    ``tan a``."""
    alpha = np.deg2rad(20.0)
    env, reset, step = _env(slope_deg=20.0, uphill_deg=0.0, friction=(0.1, mu_backward, 0.6))
    state = _aligned_uphill(env, reset(jax.random.split(jax.random.PRNGKey(0), 2)))
    zero = jnp.zeros((2, env.action_size), jnp.float32)
    steps = 10
    for _ in range(steps):
        state = step(state, zero)
    v = np.asarray(state.pipeline_state.qd[:, 1])  # the tail's world x velocity
    t = steps * env.control_dt
    if slides:
        expected = -G * (np.sin(alpha) - mu_backward * np.cos(alpha)) * t
        np.testing.assert_allclose(v, expected, rtol=0.03)
    else:
        eps, mu_f, t_a = env.config.slip_velocity, 0.1, np.tan(alpha)

        def residual(c):  # creeping backward at speed c
            mu = mu_backward + (mu_f - mu_backward) * 0.5 * (1.0 + np.tanh(-c / eps))
            return mu * c / np.sqrt(c * c + eps * eps) - t_a

        creep = brentq(residual, 1e-9, 1.0)
        np.testing.assert_allclose(v, -creep, rtol=1e-3)
    assert np.all(np.abs(np.asarray(state.pipeline_state.qd[:, 2])) < 1e-3)  # no sideways motion


def test_terrain_randomisation_draws_each_episodes_slope():
    """``slope_range_deg``: every episode gets its own slope, in its in-plane gravity and in
    its friction's normal load together; a passive snake pointing uphill slides tail first
    at that slope's ``g (sin a - mu_b cos a)``."""
    mu_b = 0.1
    env, reset, step = _env(slope_range_deg=(12.0, 30.0), friction=(0.1, mu_b, 0.6))
    state = _aligned_uphill(env, reset(jax.random.split(jax.random.PRNGKey(0), 6)))
    g_plane = np.asarray(state.pipeline_state.params.gravity)  # (6, 2): downhill, along -x
    alpha = np.arcsin(-g_plane[:, 0] / G)
    assert np.all((alpha >= np.deg2rad(12.0) - 1e-6) & (alpha <= np.deg2rad(30.0) + 1e-6))
    assert np.ptp(alpha) > np.deg2rad(3.0) and np.allclose(g_plane[:, 1], 0.0)
    zero = jnp.zeros((6, env.action_size), jnp.float32)
    steps = 10
    for _ in range(steps):
        state = step(state, zero)
    v = np.asarray(state.pipeline_state.qd[:, 1])
    expected = -G * (np.sin(alpha) - mu_b * np.cos(alpha)) * steps * env.control_dt
    np.testing.assert_allclose(v, expected, rtol=0.03)
    for bad in [(10.0, 5.0), (-1.0, 5.0), (5.0, 90.0)]:
        with pytest.raises(ValueError, match="slope_range_deg"):
            sorogym.make("SnakeToGoal-v0", slope_range_deg=bad)


def test_slithering_comes_from_anisotropic_friction():
    """The expert's gait moves the snake towards its goal on anisotropic skin; on isotropic
    friction (every coefficient 0.3) the same gait makes less than a fifth of the progress."""

    def progress(friction):
        return expert_progress("SnakeToGoal-v0", friction=friction)

    anisotropic, isotropic = progress((0.1, 0.2, 0.6)), progress((0.3, 0.3, 0.3))
    assert anisotropic.mean() > 0.1  # m in 2 s: over a quarter of the body length per second
    assert abs(isotropic.mean()) < 0.2 * anisotropic.mean()


def test_swimming_comes_from_anisotropic_drag():
    """``SwimmerToGoal-v0``: the expert's gait moves the snake towards its goal in a liquid
    whose drag across the body is twice that along it; with isotropic drag (resistive-force
    theory with ``c_n = c_t``: a body that cannot push off sideways) the same gait makes
    less than a quarter of the progress (an eighth measured)."""

    def progress(drag):
        return expert_progress("SwimmerToGoal-v0", drag=drag)

    anisotropic, isotropic = progress((1.0, 2.0)), progress((1.5, 1.5))
    assert anisotropic.mean() > 0.04  # m in 2 s (0.055 measured: 0.08 body lengths per second)
    assert abs(isotropic.mean()) < 0.25 * anisotropic.mean()  # (0.007 measured)


def test_snake_model_and_slope_reject_bad_input():
    with pytest.raises(ValueError, match="num_segments"):
        snake(SnakeBody(num_segments=0))
    with pytest.raises(ValueError, match="radius"):
        snake(SnakeBody(radius=-0.01))
    with pytest.raises(ValueError, match="slope_deg"):
        slope_gravity(95.0)
    g, g_n = slope_gravity(30.0, 90.0)
    np.testing.assert_allclose(g, [0.0, -G / 2], atol=1e-12)
    assert g_n == pytest.approx(G * np.sqrt(3) / 2)
    with pytest.raises(ValueError, match="friction_range"):
        sorogym.make("SnakeToGoal-v0", friction_range=(1.2, 0.8))
    with pytest.raises(ValueError, match="friction"):
        sorogym.make("SnakeToGoal-v0", friction=(0.1, -0.2, 0.6))
    with pytest.raises(ValueError, match="medium"):
        sorogym.make("SnakeToGoal-v0", medium="sand")
    with pytest.raises(ValueError, match="tangential"):
        sorogym.make("SwimmerToGoal-v0", drag=(-1.0, 2.0))
    with pytest.raises(ValueError, match="slope_deg"):
        sorogym.make("SwimmerToGoal-v0", slope_deg=5.0)


def test_crawler_moves_by_its_stroke_only_on_directional_friction():
    """The whole body shortening and lengthening in phase (axial strain 0 to -0.3 at 2 Hz,
    through a 0.1 s actuator lag) carries the crawler forward (towards its head) on skin that
    grips backwards (0.1 forward, 0.8 backward and sideways); on isotropic friction the same
    stroke leaves its centre in place (a reciprocal motion), and it never drifts sideways."""
    body = CrawlerBody()
    model = crawler(body)
    n, N = model.num_dofs, body.num_segments
    assert model.strain_names[3:5] == ("seg0.k", "seg0.sx") and n == 3 + 2 * N
    S = jnp.diag(model.stiffness_matrix())[3:]
    dt, sub, blend = 0.05, 8, 1.0 - np.exp(-0.05 / 0.1)

    def centre_after(friction, seconds=2.0):
        load = GroundFriction(friction, slip_velocity=0.01)

        def control(carry, k):
            y, u = carry
            e = -0.15 * (1.0 + jnp.sin(2.0 * jnp.pi * 2.0 * k * dt))
            u = u + blend * (S * jnp.tile(jnp.stack([0.0, e]), N) - u)
            applied = lambda q, qd: model.generalized_force(q, u)  # noqa: E731
            step = lambda y, _: (sorogym.sim.linear_trapezoid_step(model, y, applied, dt / sub, line_load=load), None)  # noqa: E731
            return (jax.lax.scan(step, y, None, length=sub)[0], u), None

        steps = int(round(seconds / dt))
        (y, _), _ = jax.lax.scan(control, (jnp.zeros(2 * n), jnp.zeros(2 * N)), jnp.arange(steps))
        return model.backbone_positions(y[:n], jnp.linspace(0.0, body.length, 41)).mean(0)

    run = jax.jit(centre_after)
    directional = np.asarray(run(jnp.asarray([0.1, 0.8, 0.8])))
    isotropic = np.asarray(run(jnp.asarray([0.45, 0.45, 0.45])))
    start = 0.5 * body.length
    assert directional[0] - start > 0.1 * body.length  # over 5 % of its length per second
    assert abs(isotropic[0] - start) < 0.2 * (directional[0] - start)
    assert abs(directional[1]) < 1e-6 and abs(isotropic[1]) < 1e-6


def test_centre_of_mass_is_the_mass_weighted_backbone_mean():
    """``centre_of_mass`` (the quadrature points weighted by their mass) is the mean of the
    backbone over the reference arc length for a uniform rod (every cross-section carries
    ``rho A`` per unit of reference length, stretched or not), here by Simpson's rule on
    2001 points, for a bent and stretched crawler on a floating base."""
    body = CrawlerBody()
    model = crawler(body)
    q = jnp.asarray(np.random.default_rng(0).uniform(-1.0, 1.0, model.num_dofs)).at[4::2].multiply(0.3)
    s = jnp.linspace(0.0, body.length, 2001)
    w = np.ones(2001)
    w[1:-1:2], w[2:-1:2] = 4.0, 2.0
    mean = jnp.asarray(w / w.sum()) @ model.backbone_positions(q, s)
    np.testing.assert_allclose(np.asarray(model.centre_of_mass(q)), np.asarray(mean), atol=1e-9 * body.length)


def test_inchworm_expert_turns_onto_the_command_and_crawls_along_it():
    """``InchwormCrawl-v0``'s gait expert, from bodies up to 60 degrees off the commanded
    heading: after 3 s every body is within 20 degrees of it, moving forward along it at
    over 0.1 body lengths per second, while random actions make under half that progress."""
    env = sorogym.make("InchwormCrawl-v0")
    reset, step, act = jax.jit(jax.vmap(env.reset)), jax.jit(jax.vmap(env.step)), jax.jit(env.expert())
    keys = jax.random.split(jax.random.PRNGKey(5), 8)

    def run(policy):
        state, speeds = reset(keys), []
        for k in range(60):
            state = step(state, policy(state, k))
            speeds.append(np.asarray(state.metrics["speed"]))
        return state, np.mean(speeds[20:], axis=0)

    state, speed = run(lambda s, k: act(s)[0])
    rand = lambda s, k: jax.random.uniform(jax.random.PRNGKey(k), (8, env.action_size), minval=-1.0, maxval=1.0)  # noqa: E731
    _, random_speed = run(rand)
    assert np.all(np.asarray(state.metrics["heading_error"]) < np.deg2rad(20.0))
    assert np.all(speed > 0.1)
    assert random_speed.mean() < 0.5 * speed.mean()
