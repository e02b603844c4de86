"""A rigid box sliding, spinning and tumbling on a plane, in sorogym and in MuJoCo.

sorogym: a :class:`~sorogym.BodyTree` of one rigid link on a free joint, probed at its
eight corners (:func:`~sorogym.contact.probe_link`) against a
:class:`~sorogym.contact.GroundPlane` with a stiff :class:`~sorogym.contact.ContactLaw`,
stepped by :func:`sorogym.sim.linear_trapezoid_step` at 0.1 ms. MuJoCo (imported only when
called): the same box as a ``box`` geom on a ``plane``, elliptic friction cones,
``condim="3"`` (sliding friction only), a stiff ``solref``, ``implicitfast`` at 0.1 ms.
The two contact models differ (compliant corners against MuJoCo's soft constraints), so the
comparison is on the motion: where the box comes to rest and how it is turned.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

HALF_SIZES = (0.05, 0.04, 0.03)  # [m]
MASS, FRICTION, GRAVITY, DT = 1.0, 0.4, 9.81, 1e-4
STIFFNESS, DAMPING, SLIP = 1e5, 50.0, 1e-3  # per corner: [N/m], [s/m], [m/s]

#: name -> (initial position [m], rotation vector [rad], world velocity [m/s], body angular
#: velocity [rad/s], duration [s])
CASES = {
    "slide_and_spin": ((0.0, 0.0, None), (0.0, 0.0, 0.0), (1.0, 0.3, 0.0), (0.0, 0.0, 4.0), 0.5),
    "tumble": ((0.0, 0.0, 0.08), (0.0, 0.5, 0.2), (0.8, 0.0, 0.0), (0.0, 3.0, 1.0), 0.8),
}

#: bounds on the differences (:func:`compare_box_on_plane`) that the test suite asserts
TOLERANCES = {
    "slide_and_spin": {"position_error_rel": 0.02, "rotation_error_rad": 0.02, "same_face_up": True},
    "tumble": {"position_error_rel": 0.15, "rotation_error_rad": 0.3, "same_face_up": True},
}


def _box_inertia() -> np.ndarray:
    a, b, c = HALF_SIZES
    return MASS / 3.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])


def _initial(case):
    from scipy.spatial.transform import Rotation

    position, rotvec, velocity, omega, duration = CASES[case]
    if position[2] is None:  # resting on its bottom face, sunk by the static depth
        position = (position[0], position[1], HALF_SIZES[2] - MASS * GRAVITY / (4 * STIFFNESS))
    quat = Rotation.from_rotvec(rotvec).as_quat(scalar_first=True)
    return np.asarray(position, float), quat, np.asarray(velocity, float), np.asarray(omega, float), duration


def simulate_mujoco(case: str) -> tuple[np.ndarray, np.ndarray]:
    """Final ``(position (3,) [m], quaternion [w, x, y, z])`` of the box in MuJoCo."""
    import mujoco

    a, b, c = HALF_SIZES
    geom = f'friction="{FRICTION} 0 0" condim="3" solref="0.002 1"'
    xml = (
        f'<mujoco><option timestep="{DT}" gravity="0 0 -{GRAVITY}" cone="elliptic" integrator="implicitfast"/>'
        f'<worldbody><geom type="plane" size="5 5 0.1" {geom}/>'
        f'<body><freejoint/><geom type="box" size="{a} {b} {c}" mass="{MASS}" {geom}/></body>'
        "</worldbody></mujoco>"
    )
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    position, quat, velocity, omega, duration = _initial(case)
    data.qpos[:3], data.qpos[3:7] = position, quat
    data.qvel[:3], data.qvel[3:] = velocity, omega  # world linear, body angular velocity
    for _ in range(round(duration / DT)):
        mujoco.mj_step(model, data)
    return np.array(data.qpos[:3]), np.array(data.qpos[3:7])


def simulate_sorogym(case: str) -> tuple[np.ndarray, np.ndarray]:
    """Final ``(position (3,) [m], quaternion [w, x, y, z])`` of the box in sorogym (float64
    if enabled)."""
    from scipy.spatial.transform import Rotation

    import sorogym as sg
    from sorogym.contact import ContactLaw, GroundPlane, probe_link, surface_contact

    a, b, c = HALF_SIZES
    tree = sg.BodyTree(
        [sg.RigidLink("box", MASS, (0.0, 0.0, 0.0), _box_inertia(), joint=sg.Joint.free())],
        gravity=(0.0, 0.0, -GRAVITY),
    )
    corners = np.array([[sx * a, sy * b, sz * c] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    law = ContactLaw(STIFFNESS, damping=DAMPING, friction=FRICTION, slip_velocity=SLIP)
    ground = GroundPlane()
    position, quat, velocity, omega, duration = _initial(case)

    def applied(q, qd):
        probe = probe_link(tree, q, qd, "box", corners)
        return surface_contact(ground, law, probe, anisotropic_axes=False)[0]

    @jax.jit
    def run(y0):
        step = lambda y, _: (sg.sim.linear_trapezoid_step(tree, y, applied, DT), None)  # noqa: E731
        return jax.lax.scan(step, y0, None, length=round(duration / DT))[0]

    R = Rotation.from_quat(quat, scalar_first=True).as_matrix()
    dtype = tree.params.gravity.dtype
    q0 = jnp.asarray(np.concatenate([position, quat]), dtype)
    qd0 = jnp.asarray(np.concatenate([omega, R.T @ velocity]), dtype)  # body twist [w_b, v_b]
    q, _ = tree.split_state(run(tree.pack_state(q0, qd0)))
    return np.asarray(q[:3], float), np.asarray(q[3:7], float)


def compare_box_on_plane(case: str) -> dict:
    """Final poses in both simulators and their differences: position [m] (and relative to
    the distance travelled in MuJoCo), rotation angle between the final orientations [rad],
    and the resting face (the body axis closest to the world vertical, with its sign)."""
    from scipy.spatial.transform import Rotation

    p_mj, q_mj = simulate_mujoco(case)
    p_sg, q_sg = simulate_sorogym(case)
    start = _initial(case)[0]
    R_mj = Rotation.from_quat(q_mj, scalar_first=True)
    R_sg = Rotation.from_quat(q_sg, scalar_first=True)

    def face(R):
        up = R.as_matrix()[2]  # world z in body coordinates
        k = int(np.argmax(np.abs(up)))
        return f"{'+' if up[k] > 0 else '-'}{'xyz'[k]}"

    travel = float(np.linalg.norm(p_mj[:2] - start[:2]))
    error = float(np.linalg.norm(p_sg - p_mj))
    return {
        "case": case,
        "duration_s": CASES[case][4],
        "mujoco_position": p_mj.tolist(),
        "sorogym_position": p_sg.tolist(),
        "position_error_m": error,
        "travel_m": travel,
        "position_error_rel": error / travel,
        "rotation_error_rad": float((R_mj.inv() * R_sg).magnitude()),
        "mujoco_face_up": face(R_mj),
        "sorogym_face_up": face(R_sg),
    }
