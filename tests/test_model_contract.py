"""The model and actuation contracts: concrete models are final, no model dispatches on
actuator types, and an actuator written outside the library works on every model."""

import ast
import inspect
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _models import MODEL_CASES, build_case, random_state

import sorogym as sg
from sorogym.actuation import Actuation

MODELS_DIR = Path(sg.models.__file__).parent


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def test_concrete_models_are_final_and_abstract_bases_do_not_instantiate():
    library = [c for c in _subclasses(sg.SoftRobot) if c.__module__.startswith("sorogym.")]
    concrete = {c for c in library if getattr(c, "__final__", False)}
    assert concrete == {
        sg.PCS,
        sg.PlanarPCS,
        sg.GVS,
        sg.ArticulatedSoftRobot,
        sg.BodyTree,
        sg.ConcentricTubeRobot,
        sg.PlanarStar,
        sg.PlanarArms,
        sg.PlanarGripper,
        sg.PlanarScene,
    }
    for cls in concrete:
        assert not cls.__subclasses__(), cls
        assert not cls.__abstractmethods__, (cls, cls.__abstractmethods__)
    abstract = set(library) - concrete
    assert {c.__name__ for c in abstract} == {"QuadratureRod", "_PCSRod", "PlanarArmSet"}
    for cls in abstract:
        with pytest.raises(TypeError, match="abstract"):
            cls()  # equinox refuses abstract modules before __init__ runs


def test_the_contract_declares_what_consumers_call():
    """Every member the integrators, envs and controllers use is declared on SoftRobot."""
    declared = set(dir(sg.SoftRobot)) | set(sg.SoftRobot.__annotations__)
    for name in (
        "dynamical_terms",
        "inertia_and_bias",
        "generalized_force",
        "elastic_force",
        "elastic_is_affine",
        "stiffness_matrix",
        "damping_matrix",
        "damping_force",
        "actuation",
        "actuation_context",
        "actuation_matrix",
        "actuation_force",
        "forward_dynamics",
        "tip_abscissa",
        "params",
        "with_params",
        "pose_and_jacobian",
        "forward_kinematics",
        "jacobian",
        "potential_force",
        "num_actuators",
    ):
        assert name in declared, name


def _actuation_class_names() -> set[str]:
    return {name for name in sg.actuation.__all__ if inspect.isclass(getattr(sg.actuation, name))}


def test_no_model_dispatches_on_actuator_types():
    names = _actuation_class_names()
    for path in MODELS_DIR.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("isinstance", "issubclass"):
                classes = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
                classes |= {n.attr for n in ast.walk(node.args[1]) if isinstance(n, ast.Attribute)}
                assert not classes & names, f"{path.name}:{node.lineno} tests an actuator type"
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("hasattr", "getattr"):
                assert not (isinstance(node.args[0], ast.Attribute) and node.args[0].attr == "actuation"), (
                    f"{path.name}:{node.lineno} probes the actuator"
                )


class CoordinatePairs(Actuation):
    """An actuator the models have never heard of: ``k`` inputs, each pushing a pair of
    coordinates in opposite directions with gains ``(a, -b)`` (a constant ``A``), with
    the work-conjugate "lengths" ``l = L0 - A^T q``."""

    gains: jax.Array
    pairs: tuple[tuple[int, int], ...] = eqx.field(static=True)

    @property
    def num_actuators(self) -> int:
        return len(self.pairs)

    def bind(self, context):
        if max(max(p) for p in self.pairs) >= context.num_dofs:
            raise ValueError(f"pairs: indices must lie below {context.num_dofs}")
        return self

    def effort(self, u):
        return u

    def matrix(self, context):
        A = jnp.zeros((context.num_dofs, self.num_actuators), context.q.dtype)
        for j, (i, k) in enumerate(self.pairs):
            A = A.at[i, j].add(self.gains[j, 0]).at[k, j].add(-self.gains[j, 1])
        return A

    def lengths(self, context):
        return 1.0 - self.matrix(context).T @ context.q


@jax.jit
def _dynamics_pair(model, reference, y, u):
    """Forward dynamics under the new actuator and under generalized forces ``A u``."""
    q = model.split_state(y)[0]
    A = model.actuation_matrix(q)
    return (
        model.forward_dynamics(0.0, y, (u,)),
        reference.forward_dynamics(0.0, y, (jnp.zeros(model.num_dofs), A @ u)),
        A,
        model.actuation_coordinates(q),
        jax.jacfwd(model.actuation_coordinates)(q),
    )


@pytest.mark.parametrize(
    "case", ["pcs2_mixed", "planar3_all_tendons", "gvs2_mixed_tendons", "chain3_articulated_tendons"]
)
def test_a_new_actuator_works_on_every_model_unchanged(case):
    base = build_case(case, seed=3)
    rng = np.random.default_rng(0)
    pairs = ((0, 1), (1, base.num_dofs - 1))
    actuator = CoordinatePairs(jnp.asarray(rng.uniform(0.5, 2.0, (2, 2))), pairs)
    if isinstance(base, sg.ArticulatedSoftRobot):
        model, reference = sg.ArticulatedSoftRobot(base.params, actuator), sg.ArticulatedSoftRobot(base.params)
    else:
        model, reference = base.with_actuation(actuator), base.with_actuation(sg.GeneralizedActuation())
    assert model.num_actuators == 2
    q, qd = random_state(model, rng)
    u = jnp.asarray(rng.normal(size=2))
    yd, yd_ref, A, phi, dphi = _dynamics_pair(model, reference, jnp.concatenate([q, qd]), u)
    np.testing.assert_allclose(yd, yd_ref, rtol=1e-12, atol=1e-12)
    expected = np.zeros((model.num_dofs, 2))
    for j, (i, k) in enumerate(pairs):
        expected[i, j] += actuator.gains[j, 0]
        expected[k, j] -= actuator.gains[j, 1]
    np.testing.assert_allclose(A, expected, rtol=1e-15)
    np.testing.assert_allclose(phi, expected.T @ np.asarray(q), rtol=1e-12, atol=1e-15)  # zero at rest
    np.testing.assert_allclose(dphi.T, A, rtol=1e-12, atol=1e-15)  # A = dphi/dq^T
    with pytest.raises(ValueError, match="pairs"):
        bad = CoordinatePairs(actuator.gains, ((0, model.num_dofs),))
        if isinstance(base, sg.ArticulatedSoftRobot):
            sg.ArticulatedSoftRobot(base.params, bad)
        else:
            base.with_actuation(bad)


def test_generalized_actuation_counts_after_installation():
    with pytest.raises(ValueError, match="indices"):
        _ = sg.GeneralizedActuation().num_actuators  # all coordinates of an unknown model
    assert sg.GeneralizedActuation(indices=(0, 2, 2)).num_actuators == 3
    model = build_case("pcs2_mixed")
    assert model.with_actuation(sg.GeneralizedActuation()).num_actuators == model.num_dofs


def test_every_listed_case_is_a_final_model():
    for name in MODEL_CASES:
        assert getattr(type(build_case(name)), "__final__", False), name


@pytest.mark.parametrize("case", ["pcs2_mixed", "gvs2_mixed_tendons"])
def test_rod_context_maps_forces_of_its_own_shape_only(case):
    """A strain-space force must have the context's (N, P, d) shape ((m, N, P, d) for
    columns): a stack of m forces given to ``to_generalized`` is an error, not a silently
    flattened result."""
    model = build_case(case)
    context = model.actuation_context(jnp.zeros(model.num_dofs))
    N, P, d = context.strain.shape
    force = jnp.asarray(np.random.default_rng(0).normal(size=(3, N, P, d)))
    columns = context.columns_to_generalized(force)
    assert columns.shape == (model.num_dofs, 3)
    for j in range(3):  # columns agree with the single-force map (gather for PCS, selectors for GVS)
        np.testing.assert_allclose(columns[:, j], context.to_generalized(force[j]), rtol=1e-14, atol=1e-14)
    with pytest.raises(ValueError, match="strain-space force"):
        context.to_generalized(force)
    with pytest.raises(ValueError, match="strain-space force"):
        context.columns_to_generalized(force[0])


@pytest.mark.parametrize("case", list(MODEL_CASES))
def test_default_stiffness_matrix_is_the_jacobian_of_the_elastic_force(case):
    """The base's ``stiffness_matrix`` (AD of ``K`` at rest) equals every model's closed form,
    and for these affine models ``K(q) = K(0) + S q`` at a random ``q``."""
    model = build_case(case)
    S = model.stiffness_matrix()
    np.testing.assert_allclose(sg.models.SoftRobot.stiffness_matrix(model), S, rtol=1e-13, atol=1e-12 * np.abs(S).max())
    q = random_state(model, np.random.default_rng(0))[0]
    K0 = model.elastic_force(jnp.zeros_like(q))
    np.testing.assert_allclose(model.elastic_force(q), K0 + S @ q, rtol=1e-12, atol=1e-12 * np.abs(S).max())
