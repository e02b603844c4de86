"""Independent references for concentric tube robots (NumPy and SciPy, no sorogym model).

* :func:`piecewise_arc_backbone`: the backbone of a robot whose curvature is constant and
  planar on each of a few intervals (torsionally rigid tubes at relative angles 0 or pi:
  the aligned or the S-shaped robot), by exact composition of circular arcs.
* :func:`two_tube_torsion_branch`: the classic torsion-only model of two precurved tubes
  that overlap along a curved length ``L_c`` behind straight sections, with the bending
  eliminated (moment balance with no external load): the relative twist ``psi`` obeys
  ``psi'' = c sin(psi)`` on the overlap, ``c = E I_a E I_b kappa_a kappa_b / (E I_a +
  E I_b) / j_eff`` with ``j_eff = G J_a G J_b / (G J_a + G J_b)``, ``psi' = 0`` at the
  overlap's distal end and a linear twist over the straight sections, which act as one
  torsion spring of equivalent length ``l_eff = j_eff (l_a / G J_a + l_b / G J_b)``. For a
  distal angle ``psi_tip`` it returns the drive angle ``alpha`` (exact up to the ODE solver's
  tolerance): the equilibrium branch ``alpha(psi_tip)``, whose first maximum is the snap.
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp


def piecewise_arc_backbone(curvatures, lengths, s) -> np.ndarray:
    """Positions ``(p, 2)`` [m] in the bending plane (backbone along +x at ``s = 0``,
    positive curvature turning towards +y) at arc lengths ``s`` ``(p,)`` of a curve with
    curvature ``curvatures[k]`` [1/m] on consecutive intervals of ``lengths[k]`` [m]."""
    s = np.asarray(s, float)
    out = np.zeros((s.size, 2))
    starts = np.concatenate([[0.0], np.cumsum(lengths)[:-1]])
    for j, sj in enumerate(s):
        x = np.zeros(2)
        phi = 0.0
        for k, (k_, L, s0) in enumerate(zip(curvatures, lengths, starts)):
            ds = np.clip(sj - s0, 0.0, L) if k < len(lengths) - 1 else max(sj - s0, 0.0)
            if ds <= 0:
                break
            if abs(k_) < 1e-12:
                x += ds * np.array([np.cos(phi), np.sin(phi)])
            else:
                x += np.array([np.sin(phi + k_ * ds) - np.sin(phi), np.cos(phi) - np.cos(phi + k_ * ds)]) / k_
            phi += k_ * ds
        out[j] = x
    return out


def two_tube_torsion_branch(
    psi_tip, bending_stiffness, torsion_stiffness, precurvature, curved_length: float, straight_lengths
) -> dict[str, np.ndarray]:
    """The drive angle ``alpha`` [rad] that holds the distal relative angle ``psi_tip``
    [rad] (array), for tubes ``a, b`` with ``bending_stiffness`` ``(E I_a, E I_b)`` [N m^2],
    ``torsion_stiffness`` ``(G J_a, G J_b)``, ``precurvature`` ``(kappa_a, kappa_b)``
    [1/m] over the overlap ``curved_length`` [m], and straight lengths
    ``straight_lengths`` ``(l_a, l_b)`` [m] between each tube's drive and the overlap.
    Returns ``alpha``, the proximal ``psi_base`` and ``c``, ``l_eff``."""
    EIa, EIb = bending_stiffness
    GJa, GJb = torsion_stiffness
    ka, kb = precurvature
    j_eff = GJa * GJb / (GJa + GJb)
    c = EIa * EIb * ka * kb / (EIa + EIb) / j_eff
    l_eff = j_eff * (straight_lengths[0] / GJa + straight_lengths[1] / GJb)
    psi_tip = np.atleast_1d(np.asarray(psi_tip, float))
    alpha, psi_base = np.empty_like(psi_tip), np.empty_like(psi_tip)
    for k, tip in enumerate(psi_tip):
        # from the distal end (psi' = 0) towards the base: y = [psi, psi'], d/ds with s decreasing
        sol = solve_ivp(
            lambda _, y: [-y[1], -c * np.sin(y[0])], (0.0, curved_length), [tip, 0.0], rtol=1e-12, atol=1e-14
        )
        psi0, dpsi0 = sol.y[0, -1], sol.y[1, -1]
        psi_base[k] = psi0
        alpha[k] = psi0 - l_eff * dpsi0
    return dict(alpha=alpha, psi_base=psi_base, c=np.asarray(c), l_eff=np.asarray(l_eff))
