"""Randomised model factories shared by the tests."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from scipy.spatial.transform import Rotation

import sorogym as sg


def random_params(rng: np.random.Generator, num_segments: int, planar: bool, mounting: str = "upright"):
    """Physically plausible random rod parameters (float64)."""
    N = num_segments
    d = 3 if planar else 6
    ref = np.zeros((N, d))
    ref[:, 1 if planar else 3] = 1.0
    ref += 0.2 * rng.normal(size=(N, d)) * (np.arange(d) < (1 if planar else 3))  # pre-curved
    gdim = 2 if planar else 3
    return sg.RodParams.create(
        length=rng.uniform(0.08, 0.2, N),
        radius=rng.uniform(0.008, 0.03, N),
        density=rng.uniform(800.0, 1500.0, N),
        young_modulus=rng.uniform(2e4, 2e6, N),
        poisson_ratio=rng.uniform(0.3, 0.5, N),
        damping=rng.uniform(0.0, 100.0, N),
        reference_strain=ref,
        gravity=rng.normal(size=gdim) * 5.0,
        mounting=mounting,
        planar=planar,
        dtype=jnp.float64,
    )


def tendon_offsets(rng, num_tendons, num_segments, planar, routing="straight"):
    shape = (num_tendons, num_segments) + (() if planar else (2,)) + ((2,) if routing == "linear" else ())
    return rng.uniform(-0.015, 0.015, shape)


# name -> (model class, segments, active strains, actuation kind)
MODEL_CASES = {
    "pcs1_all_tendons": (sg.PCS, 1, None, "tendons"),
    "pcs3_pcc_tendons_linear": (sg.PCS, 3, "pcc", "tendons_linear"),
    "pcs2_mixed": (sg.PCS, 2, [("ky", "kz", "sx"), ("kx", "ky", "kz", "sy")], "generalized"),
    "planar3_all_tendons": (sg.PlanarPCS, 3, None, "tendons"),
    "planar2_pcc_tendons_linear": (sg.PlanarPCS, 2, "pcc", "tendons_linear"),
    # GVS: conical links; a 6-coordinate monomial link (linear bending, constant torsion
    # and elongation, as the paper's conical arm) and a Legendre link with quadratic bending
    "gvs2_mixed_tendons": (sg.GVS, 2, "mixed", "tendons"),
    # GVS with local-control bases: a quadratic B-spline link, a cumulative Hermite link, a
    # cumulative piecewise linear (degree-1 B-spline) link; three links (compact dynamics)
    "gvs3_spline_tendons": (sg.GVS, 3, "splines", "tendons"),
    # articulated chain: 3 joints (seeded mix of revolute and prismatic), tendons through
    # via-points on the base and the links (the chain's ``s`` is a frame index)
    "chain3_articulated_tendons": (sg.ArticulatedSoftRobot, 3, None, "articulated_tendons"),
}

# link of each via-point (-1: base) of the chain case's tendons; points are random
CHAIN_TENDON_LINKS = ((-1, 0, 1, 2), (-1, 1), (0, 2, 2))


def random_chain_params(
    rng: np.random.Generator, n: int, prismatic_share: float = 0.3, min_stiffness: float = 0.0
) -> sg.ChainParams:
    """Random chain: random fixed transforms, revolute axes through random points or
    prismatic axes, random masses, centres of mass and (box-like) inertias, springs
    (``>= min_stiffness``), dampers, rest positions, gravity and base pose (float64)."""
    axes, transforms, inertias = [], [], []
    for _ in range(n):
        if rng.uniform() < prismatic_share:
            v = rng.normal(size=3)
            axes.append(np.concatenate([np.zeros(3), v / np.linalg.norm(v)]))
        else:
            w = rng.normal(size=3)
            w /= np.linalg.norm(w)
            p = rng.uniform(-0.1, 0.1, 3)
            axes.append(np.concatenate([w, np.cross(p, w)]))
        T = np.eye(4)
        T[:3, :3] = Rotation.from_rotvec(rng.normal(size=3)).as_matrix()
        T[:3, 3] = rng.uniform(-0.3, 0.3, 3)
        transforms.append(T)
        box, mass_ = rng.uniform(0.02, 0.3, 3), 1.0
        principal = (
            mass_ / 12 * np.array([box[1] ** 2 + box[2] ** 2, box[0] ** 2 + box[2] ** 2, box[0] ** 2 + box[1] ** 2])
        )
        R = Rotation.from_rotvec(rng.normal(size=3)).as_matrix()
        inertias.append(R @ np.diag(principal) @ R.T)
    mass = rng.uniform(0.2, 2.0, n)
    base = np.eye(4)
    base[:3, :3] = Rotation.from_rotvec(rng.normal(size=3)).as_matrix()
    base[:3, 3] = rng.uniform(-0.5, 0.5, 3)
    return sg.ChainParams.create(
        joint_axes=np.array(axes),
        parent_to_joint=np.array(transforms),
        mass=mass,
        com=rng.uniform(-0.1, 0.1, (n, 3)),
        inertia=np.array(inertias) * mass[:, None, None],
        stiffness=min_stiffness + rng.uniform(0.0, 5.0, n),
        damping=rng.uniform(0.0, 1.0, n),
        rest=rng.uniform(-0.5, 0.5, n),
        gravity=rng.normal(size=3) * 5.0,
        base_pose=base,
        dtype=jnp.float64,
    )


def random_routes(rng: np.random.Generator, links) -> list:
    """Tendon routes through random via-points (within 0.15 m of each link frame's origin)
    on the given links (one tuple of link indices per tendon, -1: base)."""
    return [[(k, rng.uniform(-0.15, 0.15, 3)) for k in route] for route in links]


GVS_BASES = {
    "mixed": (
        sg.StrainBasis.create(("kx", "ky", "kz", "sx"), {"ky": 1, "kz": 1}),
        sg.StrainBasis.create(("ky", "kz", "sy"), {"ky": 2, "kz": 1}, kind="legendre"),
    ),
    "splines": (
        sg.StrainBasis.bspline(("ky", "kz"), {"ky": 4, "kz": 3}, degree=2),
        sg.StrainBasis.hermite(("ky", "sx"), 2, cumulative=True),
        sg.StrainBasis.bspline(("kx", "kz"), 3, degree=1, cumulative=True),
    ),
}


def build_case(name: str, seed: int = 0):
    cls, N, active, act = MODEL_CASES[name]
    rng = np.random.default_rng(seed)
    if cls is sg.ArticulatedSoftRobot:
        params = random_chain_params(rng, N, prismatic_share=0.4, min_stiffness=0.5)
        return sg.ArticulatedSoftRobot(params, sg.ArticulatedTendons(random_routes(rng, CHAIN_TENDON_LINKS)))
    planar = cls is sg.PlanarPCS
    params = random_params(rng, N, planar)
    actuation = None
    if act.startswith("tendons"):
        routing = "linear" if act.endswith("linear") else "straight"
        spans = tuple(max(1, N - j) for j in range(3))  # some tendons end at inner segment tips
        actuation = sg.Tendons(tendon_offsets(rng, 3, N, planar, routing), routing=routing, spans=spans)
    if cls is sg.GVS:
        tip = np.asarray(params.radius) * rng.uniform(0.4, 1.0, N)
        return sg.GVS(sg.GVSParams.from_rod(params, tip), GVS_BASES[active], actuation=actuation)
    return cls(params, active_strains=active, actuation=actuation)


def coordinate_components(model) -> np.ndarray:
    """Strain component (0 .. d-1) of every coordinate of ``q``."""
    if isinstance(model, sg.GVS):
        return np.array([c for b in model.bases for c, o in enumerate(b.orders) for _ in range(o + 1)])
    return np.concatenate([np.flatnonzero(np.array(m)) for m in model.active_strains])


def random_state(model, rng, scale=1.0):
    """Random (q, qd): curvature displacements ~ 5/m, stretches ~ 0.1; for chains, joint
    angles ~ 1 rad and slides ~ 0.1 m."""
    if isinstance(model, sg.ArticulatedSoftRobot):
        prismatic = np.linalg.norm(np.asarray(model.params.joint_axes)[:, :3], axis=1) < 0.5
        q_scale = np.where(prismatic, 0.1, 1.0)
        return (
            jnp.asarray(rng.normal(size=model.num_dofs) * q_scale * scale),
            jnp.asarray(rng.normal(size=model.num_dofs) * q_scale * 3.0),
        )
    d = 3 if model.planar else 6
    rot = 1 if model.planar else 3
    per = np.where(np.arange(d) < rot, 5.0, 0.1)
    q_scale = per[coordinate_components(model)]
    q = rng.normal(size=model.num_dofs) * q_scale * scale
    qd = rng.normal(size=model.num_dofs) * q_scale * 3.0
    return jnp.asarray(q), jnp.asarray(qd)


@jax.jit
def model_terms(model, q, qd, s):
    """The interface's terms at ``(q, qd)`` and the backbone point ``s`` that the oracle
    comparisons check: pose, inertial and body Jacobians, ``M``, ``C qd``, ``G``, ``K``,
    ``D``, ``A`` and the forward dynamics under unit inputs (one compiled call per model
    structure)."""
    return dict(
        fk=model.forward_kinematics(q, s),
        J=model.jacobian(q, s),
        Jb=model.jacobian(q, s, frame="body"),
        M=model.inertia_matrix(q),
        Cqd=model.coriolis_force(q, qd),
        G=model.gravitational_force(q),
        K=model.elastic_force(q),
        D=model.damping_matrix(),
        A=model.actuation_matrix(q),
        yd=model.forward_dynamics(0.0, jnp.concatenate([q, qd]), (jnp.ones(model.num_actuators),)),
    )
