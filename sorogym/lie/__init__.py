"""Lie groups SO(3), SE(3) and SE(2) with singularity-safe closed forms.

Use as ``from sorogym.lie import se3`` (``se3.exp``, ``se3.log``, ``se3.adjoint``,
``se3.tangent_map``...), ``so3`` and ``se2``. Twists are angular first.
"""

from . import _se2 as se2
from . import _se3 as se3
from . import _so3 as so3
from ._coefficients import cosc_b as cosc_b
from ._coefficients import safe_norm as safe_norm
from ._coefficients import sinc_a as sinc_a
from ._coefficients import sinc_c as sinc_c

__all__ = ["se2", "se3", "so3", "sinc_a", "cosc_b", "sinc_c", "safe_norm"]
