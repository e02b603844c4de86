"""Layer 5 for control: the configuration-space controllers against soromox's.

One fully actuated spatial PCS segment (all six strains, generalized forces ``A = I``),
one smooth reference ``q_d(t)`` (sums of sines, so ``q_d``, ``qd_d`` and ``qdd_d`` are all
nonzero), full SPD gain matrices and an engaged tanh integral saturation. Our model uses
soromox's own quadrature nodes, so the dynamical terms agree to round-off (see
``test_oracle_soromox.py``) and the controller outputs are compared to ``rtol = 1e-9``.

Compensation -> soromox ``control.configuration_space`` class:

=============================  ==================================
``"none"``                     ``PIDController``
``"potential"``                ``PotentialCompensationRegulator``
``"gravity"``                  ``GravityCancellationRegulator``
``"potential_cancellation"``   ``PotentialCancellationRegulator``
``"feedforward"``              ``FeedforwardCompensationTracker``
``"mixed_state"``              ``MixedStateFeedbackTracker``
``"computed_torque"``          ``ComputedTorqueTracker``
=============================  ==================================

Conventions matched here:

* saturation: ours ``e_sat tanh(e / e_sat)``, soromox ``tanh(gamma e) / gamma``, so
  ``gamma = 1 / e_sat`` (componentwise);
* split: our ``split`` ``(u_mb, u_fb, d eta/dt)`` is soromox's ``model_based_term`` and
  ``error_based_feedback_term`` (the integral rate comes with the feedback term);
* computed torque: our feedback is ``A^-1 M(q) M_0^-1 PID`` with force-domain gains, soromox's
  ``A^-1 M(q) PID`` with acceleration-domain gains. Matched twice: ours with
  ``nominal_inertia = I`` and the same gains, and ours with the default ``M_0 = M(0)``
  against soromox gains ``M_0^-1 K``.

One genuine difference: mixed-state feedback uses the Coriolis *matrix* ``C(q, qd) qd_d``,
and ``C`` is not unique (only ``C qd`` is). Ours is the Christoffel matrix, for which
``dM/dt - 2 C`` is skew-symmetric (the "Coriolis consistency" Table VI assumes for this
controller); soromox 0.5.0's ``PCS.coriolis_matrix`` is another factorisation (same
``C qd``, to round-off) that does not have the skew property, although its docstring says it
does. The test therefore checks the mixed-state law with each side's own ``C qd_d`` taken out,
that the whole difference is ``(C_ours - C_soromox) qd_d``, and that ours is the consistent one.
"""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _models import random_params, random_state
from _oracle_blocks import rel

import sorogym as sg
from sorogym.control import COMPENSATIONS, ConfigurationController, FunctionReference, PIDGains
from sorogym.testing import soromox_twin

soromox = pytest.importorskip("soromox")
from soromox.control import configuration_space as cs  # noqa: E402
from soromox.control.pid_control import PIDControl, PIDControllerState  # noqa: E402
from soromox.control.reference_trajectory import ReferenceTrajectory  # noqa: E402

pytestmark = pytest.mark.oracle

RTOL = 1e-9  # per coordinate: max over points of |ours - soromox| / max |soromox|
NUM_POINTS = 6


def _rel_per_coordinate(a, b):
    """``rel`` of each coordinate (last axis) over the points, worst coordinate: the
    coordinates differ in units and size (bending moments vs axial forces)."""
    a, b = np.asarray(a), np.asarray(b)
    return max(rel(a[..., j], b[..., j]) for j in range(a.shape[-1]))


THEIRS = {
    "none": cs.PIDController,
    "potential": cs.PotentialCompensationRegulator,
    "gravity": cs.GravityCancellationRegulator,
    "potential_cancellation": cs.PotentialCancellationRegulator,
    "feedforward": cs.FeedforwardCompensationTracker,
    "mixed_state": cs.MixedStateFeedbackTracker,
    "computed_torque": cs.ComputedTorqueTracker,
}
CASES = list(COMPENSATIONS) + ["computed_torque_M0"]  # ..._M0: our default M_0, soromox gains M_0^-1 K
CALL_CASES = ("none", "potential_cancellation")  # also compared through __call__ (u, d eta/dt)


@pytest.fixture(scope="module")
def results():
    """Every controller pair at NUM_POINTS random (t, q, qd, eta), from one compiled function."""
    rng = np.random.default_rng(11)
    base = sg.PCS(random_params(rng, 1, planar=False))  # default actuation: generalized forces
    rob, combine = soromox_twin(base)
    assert combine is None
    assert np.all(np.asarray(base.params.damping) > 0) and np.any(np.asarray(base.params.gravity) != 0)
    model = sg.PCS(  # soromox's quadrature rule (its interior nodes): terms equal to round-off
        base.params,
        base.active_strains,
        base.actuation,
        quadrature=(np.asarray(rob.integration_points)[1:-1], np.asarray(rob.integration_weights)[1:-1]),
    )
    n = model.num_dofs
    q_scale = np.array([5.0, 5.0, 5.0, 0.1, 0.1, 0.1])  # curvature [1/m], stretch/shear [-]

    off, amp1, amp2 = (jnp.asarray(rng.normal(size=n) * q_scale * s) for s in (0.3, 0.4, 0.2))
    # fast enough that M qdd_d and C qd_d are a visible fraction of the stiff elastic force
    w1, w2 = jnp.asarray(rng.uniform(10.0, 30.0, n)), jnp.asarray(rng.uniform(30.0, 80.0, n))
    ph1, ph2 = (jnp.asarray(rng.uniform(0.0, 2 * np.pi, n)) for _ in range(2))

    def q_des(t):
        return off + amp1 * jnp.sin(w1 * t + ph1) + amp2 * jnp.sin(w2 * t + ph2)

    def spd(scale):
        L = rng.normal(size=(n, n))
        return jnp.asarray(scale * (L @ L.T / n + np.eye(n)))

    kp, ki, kd = spd(2.0), spd(0.7), spd(0.05)
    e_sat = jnp.asarray(0.3 * q_scale)  # the errors below are several e_sat: tanh is nonlinear
    gains = PIDGains(kp, kd, ki, e_sat)
    ours_ref = FunctionReference(q_des)
    theirs_ref = ReferenceTrajectory(ts=jnp.linspace(0.0, 2.0, 3), x_des_fn=q_des)

    pairs = {}
    with warnings.catch_warnings():  # soromox's advisory warnings (A(q) assumptions, Christoffel note)
        warnings.simplefilter("ignore", UserWarning)
        for case in CASES:
            comp = "computed_torque" if case.startswith("computed_torque") else case
            nominal = jnp.eye(n) if case == "computed_torque" else None
            ours = ConfigurationController(model, ours_ref, gains, comp, nominal_inertia=nominal)
            k = (kp, ki, kd)
            if case == "computed_torque_M0":
                k = tuple(jnp.linalg.solve(ours.nominal_inertia, g) for g in k)
            pid = PIDControl(*k, saturation_fn="tanh", gamma=1.0 / e_sat)
            pairs[case] = (ours, THEIRS[comp](rob, theirs_ref, pid))

    ts = jnp.asarray(rng.uniform(0.0, 2.0, NUM_POINTS))
    qs, qds = zip(*(random_state(model, rng, scale=0.5) for _ in range(NUM_POINTS)))
    etas = jnp.asarray(rng.normal(size=(NUM_POINTS, n)) * q_scale * 0.2)
    ys = jnp.concatenate([jnp.stack(qs), jnp.stack(qds)], axis=1)

    def at_point(t, y, eta):
        state = soromox.SystemState(t=t, y=y, control_state=PIDControllerState(integral_error=eta))
        out = {}
        for case, (ours, theirs) in pairs.items():
            u_mb, u_fb, eta_dot = ours.split(t, y, eta)
            t_mb, _ = theirs.model_based_term(state)
            t_fb, t_eta_dot = theirs.error_based_feedback_term(state)
            out[case] = dict(u_mb=(u_mb, t_mb), u_fb=(u_fb, t_fb), eta_dot=(eta_dot, t_eta_dot.integral_error))
            if case in CALL_CASES:
                (u, eta_dot), (t_u, t_eta_dot) = ours(t, y, eta), theirs(state)
                out[case].update(u=(u, t_u), eta_dot_call=(eta_dot, t_eta_dot.integral_error))
            else:  # both __call__s are u_mb + u_fb; tracing them everywhere would cost ~10 s of compilation
                out[case]["u"] = (u_mb + u_fb, t_mb + t_fb)
        ref, tref = ours_ref(t), theirs_ref
        q, qd = y[:n], y[n:]
        C_ours, C_theirs = model.coriolis_matrix(q, qd), rob.coriolis_matrix(q, qd)
        out["common"] = dict(
            q_d=(ref.value, tref.x_des_fn(t)),
            qd_d=(ref.rate, tref.xd_des_fn(t)),
            qdd_d=(ref.acceleration, tref.xdd_des_fn(t)),
            A=model.actuation_matrix(q),
            C_qd_d=(C_ours @ ref.rate, C_theirs @ ref.rate),
            C_qd=(C_ours @ qd, C_theirs @ qd),
            C=(C_ours, C_theirs),
            M_dot=jax.jvp(model.inertia_matrix, (q,), (qd,))[1],
        )
        return out

    # one compilation for every pair (shared model terms are CSE'd), run point by point (a vmap
    # of this graph compiles slower); LLVM -O0 saves a fifth of the compile time of a graph
    # that runs NUM_POINTS times
    f = jax.jit(at_point, compiler_options={"xla_backend_optimization_level": 0})
    outs = [jax.device_get(f(ts[i], ys[i], etas[i])) for i in range(NUM_POINTS)]
    out = jax.tree.map(lambda *a: np.stack(a), *outs)
    out["common"]["e_over_e_sat"] = (out["common"]["q_d"][0] - np.asarray(ys[:, :n])) / np.asarray(e_sat)
    return out


def _check_common(c):
    """The shared ground: A = I, equal references, engaged saturation, the Coriolis matrices."""
    n = c["A"].shape[-1]
    assert np.array_equal(c["A"], np.broadcast_to(np.eye(n), c["A"].shape))  # A(q) = I
    for key in ("q_d", "qd_d", "qdd_d"):  # FunctionReference's AD derivatives = soromox's jacfwd ones
        assert rel(*c[key]) < 1e-13, key
    assert np.abs(c["qd_d"][0]).min() > 0.0 and np.abs(c["qdd_d"][0]).min() > 0.0
    assert np.abs(c["e_over_e_sat"]).max() > 3.0  # deep in the tanh saturation somewhere
    # C qd agrees; the matrices differ; ours has dM/dt - 2 C skew-symmetric, soromox's does not
    assert _rel_per_coordinate(*c["C_qd"]) < RTOL
    assert rel(*c["C"]) > 1e-3
    for C, consistent in zip(c["C"], (True, False)):
        N = c["M_dot"] - 2.0 * C
        defect = np.abs(N + np.swapaxes(N, -1, -2)).max() / np.abs(N).max()
        assert (defect < 1e-12) if consistent else (defect > 1e-3), (consistent, defect)


@pytest.mark.parametrize("case", CASES)
def test_controller_agrees_with_soromox(results, case):
    _check_common(results["common"])
    r = results[case]
    for key in ("eta_dot", "eta_dot_call"):  # the saturated integral rate (gamma = 1 / e_sat)
        if key in r:
            assert _rel_per_coordinate(*r[key]) < 1e-13, key
    assert _rel_per_coordinate(*r["u_fb"]) < RTOL, ("u_fb", _rel_per_coordinate(*r["u_fb"]))
    (u_mb, t_mb), (u, t_u) = r["u_mb"], r["u"]
    if case == "mixed_state":
        # with each side's own C(q, qd) qd_d taken out (A = I: u_mb is the generalized force) the
        # laws agree, i.e. the whole difference is (C_ours - C_soromox) qd_d
        ours_c, theirs_c = results["common"]["C_qd_d"]
        assert _rel_per_coordinate(ours_c, theirs_c) > 1e-3  # the difference is real at these points
        assert _rel_per_coordinate(u_mb - ours_c, t_mb - theirs_c) < RTOL
        assert _rel_per_coordinate(u - ours_c, t_u - theirs_c) < RTOL
    else:
        assert _rel_per_coordinate(u_mb, t_mb) < RTOL, ("u_mb", _rel_per_coordinate(u_mb, t_mb))
        assert _rel_per_coordinate(u, t_u) < RTOL, ("u", _rel_per_coordinate(u, t_u))
    if case != "none":
        assert np.abs(t_mb).max() > 0.0  # a nontrivial model-based term was compared
