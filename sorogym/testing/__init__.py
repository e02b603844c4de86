"""Helpers for checking sorogym against independent implementations.

``soromox_twin(model)`` builds the same robot in soromox (an optional dependency from the
``oracles`` extra, imported only when called) and returns ``(robot, tendon_combination)``
where ``actuation_matrix_sorogym = actuation_matrix_soromox @ tendon_combination`` for
tendon-driven models (``None`` otherwise).

``tip_agreement(a, b, length)`` gives the equal-time tip agreement metrics of the SoRoMoX
paper's Table V (mean, RMSE, RMSE/L, max).

``compare_box_on_plane(case)`` runs a rigid box sliding, spinning or tumbling on a plane in
sorogym's contact layer and in MuJoCo (imported only when called) and returns where each
came to rest.

``piecewise_arc_backbone`` and ``two_tube_torsion_branch`` are closed-form and torsion-only
references for concentric tube robots (the S-shaped robot; the two-tube snap).
"""

from ._agreement import tip_agreement as tip_agreement
from ._concentric import piecewise_arc_backbone as piecewise_arc_backbone
from ._concentric import two_tube_torsion_branch as two_tube_torsion_branch
from ._mujoco_box import CASES as BOX_CASES
from ._mujoco_box import TOLERANCES as BOX_TOLERANCES
from ._mujoco_box import compare_box_on_plane as compare_box_on_plane
from ._soromox import soromox_twin as soromox_twin

__all__ = [
    "BOX_CASES",
    "BOX_TOLERANCES",
    "compare_box_on_plane",
    "piecewise_arc_backbone",
    "soromox_twin",
    "tip_agreement",
    "two_tube_torsion_branch",
]
