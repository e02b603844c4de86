"""Kinematic planning for continuum robots, all as penalised least squares solved by
Levenberg-Marquardt:

* inverse kinematics from many seeds at once (two-stage beam search, :func:`make_ik_solver`);
* the static inverse problem of tendon-driven models: tensions whose equilibrium reaches a
  target (:func:`make_static_inverse_solver`);
* path following of a reference pose sequence (:func:`make_path_follower`);
* trajectory planning between configurations, initialised by a roadmap
  (:func:`build_roadmap`, :func:`plan_trajectory`).

Robots: the PCC parametrisation of tendon-driven robots (:class:`PCCRobot`) or a simulation
model's strain coordinates (:class:`PCSPlanningModel`); obstacles: spheres (:class:`Spheres`),
oriented boxes (:class:`Boxes`) and unions of them (:class:`Obstacles`).

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
from ._models import Boxes, Obstacles, PCSPlanningModel, PlanningModel, Spheres, robot_clearance
from ._paths import PATH_CENTER, PATH_KINDS, planar_shape, reference_path
from ._pcc import PCCRobot
from ._roadmap import (
    PlanResult,
    Roadmap,
    build_roadmap,
    default_planning_costs,
    linear_path,
    make_trajectory_refiner,
    plan_trajectory,
    resample_path,
    roadmap_path,
    sample_free,
)
from ._statics import StaticInverseResult, TendonStaticsModel, make_static_inverse_solver, sample_reachable_targets
from ._trajectory import (
    TrajectoryCosts,
    TrajectoryResult,
    default_following_costs,
    make_path_follower,
)

__all__ = [
    "Boxes",
    "IKResult",
    "IN_COLLISION",
    "NOT_REACHED",
    "Obstacles",
    "PCCRobot",
    "PCSPlanningModel",
    "STATUS_NAMES",
    "SUCCESS",
    "Spheres",
    "TARGET_IN_OBSTACLE",
    "ik_residual",
    "levenberg_marquardt",
    "make_ik_solver",
    "solve_ik",
    "robot_clearance",
    "PATH_CENTER",
    "PATH_KINDS",
    "planar_shape",
    "reference_path",
    "PlanResult",
    "Roadmap",
    "build_roadmap",
    "default_planning_costs",
    "linear_path",
    "make_trajectory_refiner",
    "plan_trajectory",
    "resample_path",
    "roadmap_path",
    "sample_free",
    "StaticInverseResult",
    "TendonStaticsModel",
    "make_static_inverse_solver",
    "sample_reachable_targets",
    "TrajectoryCosts",
    "TrajectoryResult",
    "default_following_costs",
    "make_path_follower",
    "PlanningModel",
]
