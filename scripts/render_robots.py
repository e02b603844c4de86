"""Pictures of the named body-tree robots for the docs: each robot of :mod:`sorogym.robots`
built as a :class:`~sorogym.BodyTree` (inchworm, brittle star, gripper, two-arm platform,
cart arm, spacer arm, parallel continuum robot), drawn at a bent configuration to ``<out>/<name>.png``.

The configurations are hand-set strains of the kind the robots' tendons produce (constant
curvatures per segment [1/m], joint angles [rad] and slides [m]); the floating robots are
placed so that their lowest backbone point touches the ground plane ``z = 0``. Rigid links
are drawn as the uniform solid of their mass and inertia (platform and cart as boxes, the
discs as flat ellipsoids), rod bodies as tubes with their tendons, payloads as dots.

    python scripts/render_robots.py [--out docs/img/robots] [--size 400] [--only NAME ...]
    python scripts/render_robots.py --smoke --out /tmp/robots   # every robot at 64 px

``--smoke`` draws every robot (or ``--only``) at 64 x 64 px.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import jax
import numpy as np

from sorogym import robots
from sorogym.render import render_tree, scene_of_tree


def _set(tree, q: np.ndarray, body: str, values) -> None:
    """Write a rod body's strain coordinates (the last entries of its slice of ``q``)."""
    idx, _ = tree.coordinate_slices(body)
    values = np.asarray(values, dtype=float)
    q[idx[len(idx) - values.size :]] = values


def _rest_on_ground(tree, q: np.ndarray) -> None:
    """Shift a free base (the first body's joint: position first) so that the lowest point
    of the tubes touches ``z = 0``."""
    scene = scene_of_tree(tree, q)
    lowest = min(float(np.min(p[:, 2] - r)) for p, r in scene["rods"])
    q[2] -= lowest


def inchworm():
    tree = robots.inchworm()
    q = np.array(tree.neutral_configuration())
    # underneath tendon pulled: the body arches (up, over, down, flat)
    _set(tree, q, "body", [-14.0, 0.0, 14.0, 2.0, 14.0, 2.0, -14.0, 0.0])
    _rest_on_ground(tree, q)
    return tree, q, {"ground": 0.0}, {"elev": 18.0, "azim": -70.0}


def brittle_star():
    tree = robots.brittle_star(num_arms=5)
    q = np.array(tree.neutral_configuration())
    yaw = 0.3
    q[3:7] = [np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]  # hub quaternion [w, x, y, z]
    for k in range(5):
        phase = 2.0 * np.pi * 2 * k / 5  # a walking gait: arms at different phases
        down, side = 5.0 + 4.0 * np.sin(phase), 6.0 * np.cos(phase)
        _set(tree, q, f"arm{k}", [down, side, down + 3.0, side])
    _rest_on_ground(tree, q)
    return tree, q, {"ground": 0.0}, {"elev": 30.0, "azim": -60.0}


def gripper():
    tree = robots.gripper(num_fingers=3)
    q = np.array(tree.neutral_configuration())
    q[0] = 0.5  # wrist [rad]
    for k in range(3):
        _set(tree, q, f"finger{k}", [4.0, 0.0, 8.0, 0.0])  # inner tendons pulled: closing
    return tree, q, {}, {"elev": 15.0, "azim": -60.0}


def two_arm_platform():
    tree = robots.two_arm_platform(base="prismatic")
    q = np.array(tree.neutral_configuration())
    q[0] = 0.04  # rail [m]
    _set(tree, q, "left", [3.0, -2.0, 5.0, -3.0])
    _set(tree, q, "right", [-2.0, 3.0, -4.0, 5.0])
    return tree, q, {"ground": 0.0, "link_shapes": "box"}, {"elev": 20.0, "azim": -50.0}


def cart_arm():
    tree = robots.cart_arm()
    q = np.array(tree.neutral_configuration())
    q[0] = 0.05  # cart [m]
    _set(tree, q, "arm", [-4.0, 2.0, -7.0, 3.0])
    return tree, q, {"ground": 0.0, "link_shapes": "box"}, {"elev": 15.0, "azim": -65.0}


def spacer_arm():
    tree = robots.spacer_arm(num_sections=3, tip_mass=0.02)
    q = np.array(tree.neutral_configuration())
    for k, (ky, kz) in enumerate([(3.0, 1.0), (6.0, 4.0), (8.0, -4.0)]):
        _set(tree, q, f"section{k}", [ky, kz])
    return tree, q, {}, {"elev": 15.0, "azim": -60.0}


def parallel_continuum_robot():
    tree = robots.parallel_continuum_robot(num_rods=3)
    q = np.array(tree.neutral_configuration())
    for k in range(3):
        # every rod the same S-bend (zero net rotation): the clamps stay closed and the
        # platform shifts sideways, level
        idx, _ = tree.coordinate_slices(f"rod{k}")
        q[idx[0]] = 0.02  # insertion [m]
        _set(tree, q, f"rod{k}", [0.0, 2.5, 0.0, 0.0, 2.5, 0.0, 0.0, -2.5, 0.0, 0.0, -2.5, 0.0])
    return tree, q, {"ground": 0.0}, {"elev": 20.0, "azim": -60.0}


ROBOTS = {
    f.__name__: f
    for f in (inchworm, brittle_star, gripper, two_arm_platform, cart_arm, spacer_arm, parallel_continuum_robot)
}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("docs/img/robots"))
    parser.add_argument("--size", type=int, default=400, help="image width and height [px]")
    parser.add_argument("--only", nargs="*", choices=sorted(ROBOTS), help="robots to draw (default: all)")
    parser.add_argument("--smoke", action="store_true", help="64 px images")
    args = parser.parse_args(argv)
    if args.smoke:
        args.size = 64
    jax.config.update("jax_enable_x64", True)
    for name in args.only or ROBOTS:
        start = time.perf_counter()
        tree, q, scene_options, view = ROBOTS[name]()
        title = f"{name}: n = {tree.num_dofs}, m = {tree.num_actuators}"
        path = args.out / f"{name}.png"
        render_tree(tree, q, path, args.size, args.size, title=title, **view, **scene_options)
        size_kb = path.stat().st_size / 1024
        print(f"{path}  {size_kb:.0f} KB  ({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
