"""The named body-tree robots of :mod:`sorogym.robots` (inchworm, brittle star, gripper,
two-arm platform, cart arm, spacer arm, cable-driven arm), at small sizes: their structure (bodies,
coordinates, inputs, batched groups), the model-contract identities by AD (as on the random
trees of ``test_tree.py``), finite forward dynamics at rest under tendon tensions
and motor inputs (one compilation per robot), and their drawings
(:func:`sorogym.render.scene_of_tree` agrees with the tree's own kinematics; two
configurations give two different images)."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _tree_checks import check_contract_identities

from sorogym import robots
from sorogym.render import link_shape, render_rgb, render_tree, scene_of_model, scene_of_tree

SHORT_WORM = dataclasses.replace(robots.INCHWORM_BODY, segment_lengths=(0.08, 0.08))
# name: (builder, expected bodies, nq, n, m, batched groups), at small test sizes
CASES = {
    "inchworm": (lambda: robots.inchworm(body=SHORT_WORM), 1, 11, 10, 4, 1),
    "brittle_star": (lambda: robots.brittle_star(num_arms=2), 3, 15, 14, 8, 2),
    "gripper": (lambda: robots.gripper(num_fingers=2), 3, 9, 9, 5, 2),
    "two_arm_platform": (lambda: robots.two_arm_platform(base="prismatic"), 3, 9, 9, 9, 2),
    "cart_arm": (robots.cart_arm, 2, 5, 5, 5, 2),
    "spacer_arm": (lambda: robots.spacer_arm(num_sections=2, tip_mass=0.02), 4, 4, 4, 6, 4),
    # tapered GVS sections (distinct radii: one group each) between plates, three cables
    "cable_driven_arm": (lambda: robots.cable_driven_arm(num_sections=1, bending_order=0), 2, 4, 4, 3, 2),
}
ROD_ACTUATED = [name for name in CASES if name != "cable_driven_arm"]  # input 0: a rod's own tendon
_TREES: dict = {}


def tree_of(name: str):
    if name not in _TREES:
        _TREES[name] = CASES[name][0]()
    return _TREES[name]


def _is_rod(tree, body: str) -> bool:
    return tree.structure.groups[tree.structure.body_group[tree.body_index(body)][0]].kind == "rod"


def bent(tree, amplitude: float = 8.0) -> np.ndarray:
    """A configuration with every rod body bent (alternating curvatures [1/m])."""
    q = np.array(tree.neutral_configuration())
    for b in tree.body_names:
        if _is_rod(tree, b):
            idx, _ = tree.coordinate_slices(b)
            k = tree.rod(b).num_dofs
            q[idx[len(idx) - k :]] = amplitude * np.cos(np.arange(k))
    return q


@pytest.mark.parametrize("name", CASES)
def test_contract_identities_by_ad(name):
    """M symmetric positive definite, dM/dt - 2C skew, C qd fused, twists' kinetic energy,
    G, K and A as gradients along the retraction, fused forward dynamics."""
    check_contract_identities(tree_of(name), seed=11)


@pytest.mark.parametrize("name", CASES)
def test_structure(name):
    _, bodies, nq, n, m, groups = CASES[name]
    tree = tree_of(name)
    assert (tree.num_bodies, tree.num_positions, tree.num_dofs, tree.num_actuators) == (bodies, nq, n, m)
    assert len(tree.structure.groups) == groups


@pytest.mark.parametrize("num_arms", [1, 2, 5, 10])
def test_brittle_star_batches_its_arms(num_arms):
    tree = robots.brittle_star(num_arms=num_arms)
    assert len(tree.structure.groups) == 2  # the hub, then all arms in one group
    assert (tree.num_dofs, tree.num_actuators) == (6 + 4 * num_arms, 4 * num_arms)
    bases = np.asarray(tree.params.offset_position[1:])  # arm bases on the hub's rim (30 mm), evenly spaced
    np.testing.assert_allclose(np.linalg.norm(bases[:, :2], axis=1), 0.03)
    angles = np.sort(np.mod(np.arctan2(bases[:, 1], bases[:, 0]), 2 * np.pi))
    np.testing.assert_allclose(angles, 2 * np.pi * np.arange(num_arms) / num_arms, atol=1e-12)


@pytest.mark.parametrize("name", ROD_ACTUATED)
def test_forward_dynamics_at_rest_is_finite(name):
    tree = tree_of(name)
    u = jnp.linspace(0.5, 2.0, tree.num_actuators)  # tendon tensions [N], motor inputs
    # finiteness only: compiled without backend optimisation (a third faster to compile)
    fd = jax.jit(
        lambda y, u: tree.forward_dynamics(0.0, y, (u,)), compiler_options={"xla_backend_optimization_level": 0}
    )
    y0 = tree.zero_state()
    dy = fd(y0, u)
    assert dy.shape == (tree.num_positions + tree.num_dofs,)
    assert np.all(np.isfinite(np.asarray(dy)))
    assert np.any(np.asarray(dy[tree.num_positions :]) != 0.0)
    # input 0, the first rod body's tendon 0 at the section offset (y, z), bends that rod
    # towards its side: curvatures (ky, kz) along (-z, y) in every segment
    first = next(b for b in tree.body_names if _is_rod(tree, b))
    rod, (_, v_idx) = tree.rod(first), tree.coordinate_slices(first)
    y_off, z_off = np.asarray(rod.actuation.offsets[0, 0])
    pull = np.asarray(fd(y0, jnp.zeros(tree.num_actuators).at[0].set(1.0)) - fd(y0, jnp.zeros(tree.num_actuators)))
    qdd = pull[tree.num_positions :][v_idx[len(v_idx) - rod.num_dofs :]]
    assert qdd @ np.tile([-z_off, y_off], rod.num_dofs // 2) > 0


@pytest.mark.parametrize(
    "variant",
    [lambda: robots.gripper(2, wrist="fixed"), lambda: robots.two_arm_platform(base="fixed")],
    ids=["gripper_fixed_wrist", "platform_fixed_base"],
)
def test_fixed_mount_variants(variant):
    """A link fixed to the world has no coordinate on its path: it adds nothing to M."""
    tree = variant()
    M = jax.eval_shape(lambda q: tree.inertia_matrix(q), tree.neutral_configuration())
    assert M.shape == (tree.num_dofs, tree.num_dofs)


@pytest.mark.parametrize("name", CASES)
def test_renders_and_the_picture_follows_the_configuration(name):
    tree = tree_of(name)
    rest = render_tree(tree, tree.neutral_configuration(), width=96, height=96, ground=0.0)
    frame = render_rgb(scene_of_model(tree, bent(tree), num_points=21) | {"ground": 0.0}, 96, 96)
    assert rest.shape == frame.shape == (96, 96, 3) and rest.dtype == np.uint8
    assert np.mean(np.any(rest != frame, axis=-1)) > 0.005


def test_scene_matches_the_tree_kinematics(tmp_path):
    tree = tree_of("brittle_star")
    q = bent(tree)
    quat = np.array([np.cos(0.2), 0.1, 0.0, np.sin(0.2)])
    q[3:7] = quat / np.linalg.norm(quat)  # the hub tilted and turned
    scene = scene_of_tree(tree, q)
    s = jnp.linspace(0.0, tree.rod("arm1").total_length, 21)
    expected = jax.jit(lambda q: tree.backbone_positions(q, s, body="arm1"))(jnp.asarray(q))
    np.testing.assert_allclose(scene["rods"][1][0], expected, atol=1e-12)
    assert len(scene["tendons"]) == 8 and len(scene["bodies"]) == 1 and scene["bodies"][0][0] == "ellipsoid"
    # the payload of the spacer arm is drawn, 10 mm beyond the last spacer
    spacer = tree_of("spacer_arm")
    ((dot, _),) = scene_of_tree(spacer, spacer.neutral_configuration())["dots"]
    np.testing.assert_allclose(dot, [0.0, 0.0, 0.4 - 2 * 0.08 - 2 * 0.004 - 0.01], atol=1e-12)
    path = tmp_path / "star.png"
    render_tree(tree, q, path, 64, 64)
    assert path.stat().st_size > 0


def test_link_shape_is_the_uniform_solid_of_the_inertia():
    size = np.array([0.3, 0.2, 0.05])
    pose, semi = link_shape(2.0, (0.0, 0.0, -0.01), robots.box_inertia(2.0, size), "box")
    np.testing.assert_allclose(np.sort(2 * semi), np.sort(size), rtol=1e-12)
    np.testing.assert_allclose(pose[:3, 3], [0.0, 0.0, -0.01])
    _, semi = link_shape(1.0, np.zeros(3), robots.disc_inertia(1.0, 0.04, 0.01), "ellipsoid")
    np.testing.assert_allclose(np.sort(semi), [np.sqrt(5 / 12) * 0.01, np.sqrt(1.25) * 0.04, np.sqrt(1.25) * 0.04])
    with pytest.raises(ValueError, match="shape"):
        link_shape(1.0, np.zeros(3), np.eye(3), "cone")


def test_bad_arguments_name_the_field():
    with pytest.raises(ValueError, match="num_arms"):
        robots.brittle_star(num_arms=0)
    with pytest.raises(ValueError, match="wrist"):
        robots.gripper(wrist="ball")
    with pytest.raises(ValueError, match="base"):
        robots.two_arm_platform(base="wheels")
    with pytest.raises(ValueError, match="radius"):
        robots.TendonArm(radius=-0.01).pcs()
    with pytest.raises(ValueError, match="plate_circumradius: 0.03 m must exceed the rod's radius"):
        robots.cable_driven_arm(plate_circumradius=0.03)
    with pytest.raises(ValueError, match="bending_order"):
        robots.cable_driven_arm(bending_order=-1)
    with pytest.raises(ValueError, match="num_sections"):
        robots.cable_driven_arm(num_sections=0)
    with pytest.raises(ValueError, match="mounting"):
        robots.cable_driven_arm(mounting="sideways")
