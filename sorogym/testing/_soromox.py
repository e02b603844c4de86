"""Twins of sorogym models in soromox (an independent implementation used as an oracle).

Convention mapping (documented in docs/conventions.md): identical strain ordering, q, mass,
stiffness and damping definitions, mountings and inertial-frame Jacobians. Differences
handled here: soromox's planar forward kinematics is ``[theta, x, y]`` (we return a 3x3
pose); its tendon paths are routed with a *global* linear offset over a span of segments,
so each (tendon, segment) pair of ours becomes one soromox path and columns are summed.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

import sorogym as sg


def _damping_kwargs(p, i: int) -> dict:
    """Material coefficient, or per-strain coefficients as soromox's per-link diagonal
    damping (which it takes already multiplied by the segment length)."""
    if p.damping.ndim == 2:
        return {"damping": jnp.diag(jnp.asarray(np.asarray(p.damping[i]) * float(p.length[i])))}
    return {"material_damping_coefficient": float(p.damping[i])}


def soromox_twin(model):
    """``(robot, combine)``: the same robot in soromox and, for tendons, the ``(paths, m)``
    matrix summing soromox's per-segment paths into our tendons (``None`` otherwise)."""
    if isinstance(model, sg.ArticulatedSoftRobot):
        return _articulated_twin(model), None
    if isinstance(model, sg.GVS):
        return _gvs_twin(model)
    import soromox

    p = model.params
    planar = model.planar
    N = model.num_segments
    links = [
        soromox.LinkSpec.circular(
            length=float(p.length[i]),
            radius=float(p.radius[i]),
            density=float(p.density[i]),
            reference_strain=np.asarray(p.reference_strain[i]),
            young_modulus=float(p.young_modulus[i]),
            shear_modulus=float(p.shear_modulus[i]),
            **_damping_kwargs(p, i),
        )
        for i in range(N)
    ]
    mask = np.concatenate([np.array(m) for m in model.active_strains])
    Structure = soromox.PlanarPCSStructure if planar else soromox.PCSStructure
    structure = Structure(num_gauss_points=model.num_quadrature_points, strain_selector=jnp.asarray(mask))
    floating = bool(getattr(model, "floating_base", False))
    if floating:  # soromox composes no mount with its floating base: ours must be the identity
        if float(p.base_rotation) != 0.0 or np.any(np.asarray(p.base_position) != 0.0):
            raise ValueError("soromox_twin: a floating-base twin needs the identity base pose (mount)")
        base = None
    elif planar:
        base = jnp.asarray([float(p.base_rotation), *np.asarray(p.base_position)])
    else:
        base = _spatial_base_pose(np.asarray(p.base_rotation), np.asarray(p.base_position))
    actuators, combine = None, None
    if isinstance(model.actuation, sg.Tendons):
        actuators, combine = _tendon_paths(model)
    rob_cls = soromox.PlanarPCS if planar else soromox.PCS
    rob = rob_cls.from_links(
        links,
        structure=structure,
        gravity=jnp.asarray(p.gravity),
        **({"floating_base": True} if floating else {"base_pose": base}),
        **({} if actuators is None else {"actuators": actuators}),
    )
    return rob, combine


def _spatial_base_pose(R, pos):
    from scipy.spatial.transform import Rotation

    quat = Rotation.from_matrix(R).as_quat()  # scalar last [x, y, z, w]
    return jnp.asarray(np.concatenate([quat, pos]))


def _tendon_paths(model):
    """One soromox path per (tendon, segment); returns actuators and the (P, m) summation."""
    import soromox

    act = model.actuation
    off = np.asarray(act.offsets)
    L = np.asarray(model.params.length)
    starts = np.concatenate([[0.0], np.cumsum(L)[:-1]])
    m, N = off.shape[0], off.shape[1]
    intercepts, slopes, segs = [], [], []
    spans = [N] * m if act.spans is None else list(act.spans)
    for j in range(m):
        for i in range(spans[j]):
            o = off[j, i]
            if model.planar:
                r0, r1 = (o[0], o[1]) if act.routing == "linear" else (o, o)
                r0, r1 = np.array([0.0, r0, 0.0]), np.array([0.0, r1, 0.0])
            else:
                r0, r1 = (o[:, 0], o[:, 1]) if act.routing == "linear" else (o, o)
                r0, r1 = np.array([0.0, *r0]), np.array([0.0, *r1])
            slope = (r1 - r0) / L[i]
            intercepts.append(r0 - slope * starts[i])
            slopes.append(slope)
            segs.append(i)
    routing = soromox.ThreadlikeRouting.linear(
        intercept=jnp.asarray(np.array(intercepts)),
        slope=jnp.asarray(np.array(slopes)),
        start_segment_index=tuple(segs),
        end_segment_index=tuple(segs),
    )
    combine = np.zeros((len(segs), m))  # (paths, m): sum each tendon's segment paths
    owner = np.repeat(np.arange(m), spans)
    combine[np.arange(len(segs)), owner] = 1.0
    return soromox.ThreadlikeActuator.tendons(routing), combine


def _articulated_twin(model):
    """soromox's articulated chain with the same joints, transforms and inertias.

    soromox attaches each joint frame to its parent's *tip* (``tip_position``, which also
    sets the link lengths that its arc-length argument ``s`` walks along); with all tips at
    the link-frame origins its chain is ours. Its ``s`` then saturates at the ends: ``s = 0``
    is link 0 (our frame ``s = 1``) and ``s >= total length = 0`` the last link (ours ``n``).
    """
    import soromox

    p = model.params
    n = model.num_dofs
    params = soromox.ArticulatedSoftRobotParams(
        joint_screw=p.joint_axes,
        parent_to_joint_transform=p.parent_to_joint,
        tip_position=jnp.zeros((n, 3), p.mass.dtype),
        center_of_mass_position=p.com,
        mass=p.mass,
        center_of_mass_inertia=p.inertia,
        gravity=p.gravity,
        joint_stiffness=jnp.diag(p.stiffness),
        joint_damping=jnp.diag(p.damping),
        joint_rest_configuration=p.rest,
        radius=jnp.full((n,), 0.01, p.mass.dtype),
    )
    base = np.asarray(p.base_pose)
    return soromox.ArticulatedSoftRobot(params, base_pose=_spatial_base_pose(base[:3, :3], base[:3, 3]))


def _gvs_twin(model):
    """soromox's GVS with the same links (linear radius profile), bases (same polynomial
    families on the normalised abscissa), Gauss rules and fixed joints; tendons as for PCS."""
    import soromox
    from soromox.systems.components.cross_sections import LinearProfile

    p = model.params
    segments = []
    for i, basis in enumerate(model.bases):
        link = soromox.LinkSpec.circular(
            length=float(p.length[i]),
            radius=LinearProfile(float(p.radius[i]), float(p.tip_radius[i])),
            density=float(p.density[i]),
            reference_strain=np.asarray(p.reference_strain[i]),
            young_modulus=float(p.young_modulus[i]),
            shear_modulus=float(p.shear_modulus[i]),
            **_damping_kwargs(p, i),
        )
        spec = soromox.StrainBasisSpec(
            type=basis.kind,
            strain_selector=[int(o >= 0) for o in basis.orders],
            basis_order=[max(o, 0) for o in basis.orders],
        )
        segments.append(
            soromox.GVSSegment(
                link=link, joint=soromox.JointSpec.fixed(), basis=spec, num_gauss_points=model.num_gauss_points[i]
            )
        )
    actuators, combine = (None, None)
    if isinstance(model.actuation, sg.Tendons):
        actuators, combine = _tendon_paths(model)
    base = _spatial_base_pose(np.asarray(p.base_rotation), np.asarray(p.base_position))
    rob = soromox.GVS.from_segments(
        segments,
        gravity=jnp.asarray(p.gravity),
        base_pose=base,
        **({} if actuators is None else {"actuators": actuators}),
    )
    return rob, combine
