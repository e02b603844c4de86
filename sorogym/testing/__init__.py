"""Helpers for checking sorogym against independent implementations.

``soromox_twin(model)`` builds the same robot in soromox (an optional dependency from the
``oracles`` extra, imported only when called) and returns ``(robot, tendon_combination)``
where ``actuation_matrix_sorogym = actuation_matrix_soromox @ tendon_combination`` for
tendon-driven models (``None`` otherwise).

``tip_agreement(a, b, length)`` gives the equal-time tip agreement metrics of the SoRoMoX
paper's Table V (mean, RMSE, RMSE/L, max).
"""

from ._agreement import tip_agreement as tip_agreement
from ._soromox import soromox_twin as soromox_twin

__all__ = ["soromox_twin", "tip_agreement"]
