"""``SwimmerToGoal-v0``: the soft snake of ``SnakeToGoal-v0`` swims to a goal in a viscous
liquid.

The body, actions, observation, reward, termination and expert of ``SnakeToGoal-v0`` (six
60 mm silicone segments, 0.36 m, 174 g, curvature commands through a 0.1 s lag), in a
horizontal layer of liquid instead of on the ground (neutrally buoyant, seen from above):

* **Medium** (``medium = "liquid"``): the only external force is resistive-force drag
  along the body (:class:`sorogym.contact.ResistiveForceTheory` as a line load on the
  rod's quadrature points, stepped implicitly), ``c_t`` = 1 N s/m^2 along the backbone and
  ``c_n`` = 2 N s/m^2 across it (``drag``): a filament of this slenderness in a liquid of
  about 0.5 Pa s, glycerol-like (``c_t ~ 2 pi mu / ln(L / r)``). Undulation propels the
  body because ``c_n > c_t``; both coefficients are scaled per episode by one factor in
  ``friction_range``.
* **Goals** lie 0.15 to 0.3 m from the head within 90 degrees of its heading (the swimmer
  makes about a tenth of a body length per second); success within 6 cm ends the
  episode; time limit 10 s = 200 steps.
* **Integration**: less damped by its surroundings than on the ground, the free body's
  fast bending modes are not resolved by the 6.25 ms substeps, and the trapezoidal rule
  lets them ring, which drives a spurious drift of the whole swimmer (its centre of mass
  5.5-7.4 % of the length off the float64 reference over 1 s of random actions). The
  elastic and damping forces are taken at ``theta = 0.75`` of the step, which damps
  them: 0.17-0.24 % (seeds 0-2).
"""

from __future__ import annotations

import dataclasses

from sorogym.env import register

from .snake_to_goal import Config, SnakeToGoal, default_config

__all__ = ["SwimmerToGoal", "swimmer_config"]


def swimmer_config() -> Config:
    """``SnakeToGoal-v0``'s configuration in the liquid, with goals and timing for it."""
    return dataclasses.replace(
        default_config(),
        medium="liquid",
        goal_distance=(0.15, 0.3),
        success_radius=0.06,
        theta=0.75,
    )


@register
class SwimmerToGoal(SnakeToGoal):
    __doc__ = __doc__
    name = "SwimmerToGoal-v0"

    @classmethod
    def default_config(cls) -> Config:
        return swimmer_config()
