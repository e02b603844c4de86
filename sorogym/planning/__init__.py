"""Kinematic planning for continuum robots: batched inverse kinematics by projected
Levenberg-Marquardt from many seeds (two-stage beam search), on the PCC parametrisation of
tendon-driven robots (:class:`PCCRobot`) or directly on a simulation model's strain
coordinates (:class:`PCSPlanningModel`), with spherical obstacles (:class:`Spheres`).

    robot = PCCRobot(3, length=1.0, radius=0.1)
    solve = make_ik_solver(robot, obstacles=Spheres.lattice())
    result = solve(target_poses, jax.random.PRNGKey(0))   # IKResult, batched over targets
"""

from ._ik import (
    IN_COLLISION,
    NOT_REACHED,
    STATUS_NAMES,
    SUCCESS,
    TARGET_IN_OBSTACLE,
    IKResult,
    ik_residual,
    levenberg_marquardt,
    make_ik_solver,
    solve_ik,
)
from ._models import PCSPlanningModel, Spheres
from ._pcc import PCCRobot

__all__ = [
    "IKResult", "IN_COLLISION", "NOT_REACHED", "PCCRobot", "PCSPlanningModel", "STATUS_NAMES", "SUCCESS",
    "Spheres", "TARGET_IN_OBSTACLE", "ik_residual", "levenberg_marquardt", "make_ik_solver", "solve_ik",
]
