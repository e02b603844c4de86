"""Bad input fails at construction with a ValueError naming the field; dtypes are respected."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _oracles import oracle

import sorogym as sg

GOOD = dict(length=[0.1, 0.1], radius=0.01, density=1000.0, young_modulus=1e6, poisson_ratio=0.5, damping=1.0)


def _params(**over):
    args = dict(GOOD)
    args.update(over)
    return sg.RodParams.create(**args)


@pytest.mark.parametrize(
    "field,value",
    [
        ("length", [0.1, -0.1]),
        ("length", [0.1, np.nan]),
        ("radius", 0.0),
        ("radius", np.inf),
        ("density", -1.0),
        ("young_modulus", 0.0),
        ("damping", -1.0),
        ("shear_modulus", -5.0),
    ],
)
def test_invalid_values_name_the_field(field, value):
    over = {field: value}
    if field == "shear_modulus":
        over["poisson_ratio"] = None
    with pytest.raises(ValueError, match=field):
        _params(**over)


def test_shapes_and_names_are_checked():
    with pytest.raises(ValueError, match="radius"):
        _params(radius=[0.01, 0.01, 0.01])
    with pytest.raises(ValueError, match="reference_strain"):
        _params(reference_strain=np.zeros((2, 5)))
    with pytest.raises(ValueError, match="gravity"):
        _params(gravity=[0.0, -9.81])
    with pytest.raises(ValueError, match="poisson_ratio"):
        _params(poisson_ratio=0.7)
    with pytest.raises(ValueError, match="shear_modulus and poisson_ratio"):
        _params(shear_modulus=1e5)
    with pytest.raises(ValueError, match="mounting"):
        _params(mounting="sideways")
    with pytest.raises(ValueError, match="base_rotation"):
        _params(base_rotation=2 * np.eye(3))
    with pytest.raises(ValueError, match="unknown strain"):
        sg.PCS(_params(), active_strains=("ky", "bend"))
    with pytest.raises(ValueError, match="active_strains"):
        sg.PCS(_params(), active_strains=[False] * 6)
    with pytest.raises(ValueError, match="planar"):
        sg.PlanarPCS(_params())
    with pytest.raises(ValueError, match="offsets"):
        sg.PCS(_params(), actuation=sg.Tendons(np.zeros((4, 3, 2))))
    with pytest.raises(ValueError, match="routing"):
        sg.Tendons(np.zeros((4, 2, 2)), routing="helical")
    with pytest.raises(ValueError, match="spans"):
        sg.Tendons(np.zeros((2, 2, 2)), spans=(3, 1))
    with pytest.raises(ValueError, match="spans"):
        sg.Tendons(np.zeros((2, 2, 2)), spans=(1,))
    with pytest.raises(ValueError, match="num_quadrature_points"):
        sg.PCS(_params(), num_quadrature_points=0)
    with pytest.raises(ValueError, match="not a parameter field"):
        sg.PCS(_params()).update_params(stiffness=1.0)


def test_strain_selection_forms():
    p = _params()
    assert sg.PCS(p, active_strains="pcc").num_dofs == 4
    assert sg.PCS(p, active_strains=("ky", "kz", "sx")).num_dofs == 6
    assert sg.PCS(p, active_strains=[("kx",), "pcs"]).num_dofs == 7
    assert sg.PCS(p, active_strains=[True, False, False, False, False, True]).num_dofs == 4
    m = sg.PCS(p, active_strains=[("kx",), ("ky", "sz")])
    assert m.strain_names == ("seg0.kx", "seg1.ky", "seg1.sz")


def test_float32_and_float64_models():
    for dtype in (jnp.float32, jnp.float64):
        p = sg.RodParams.upright(**GOOD, dtype=dtype)
        m = sg.PCS(
            p, actuation=sg.Tendons(np.full((2, 2, 2), 0.005, dtype=np.float32 if dtype == jnp.float32 else np.float64))
        )
        y = jnp.zeros(2 * m.num_dofs, dtype).at[0].set(0.5)
        yd = jax.jit(lambda m_, y_: m_.forward_dynamics(0.0, y_, (jnp.ones(2, dtype),)))(m, y)
        assert yd.dtype == dtype
        assert np.all(np.isfinite(np.asarray(yd)))


def test_same_shape_parameter_updates_do_not_recompile():
    traces = []

    @jax.jit
    def accel(model, y):
        traces.append(1)
        return model.forward_dynamics(0.0, y)

    m = sg.PCS(sg.RodParams.upright(**GOOD, dtype=jnp.float64))
    y = jnp.ones(2 * m.num_dofs) * 0.1
    a0 = accel(m, y)
    m2 = m.update_params(young_modulus=[2e6, 3e6], length=[0.12, 0.08])
    a1 = accel(m2, y)
    m3 = m.with_params(m.params.replace(damping=[5.0, 6.0]))
    accel(m3, y)
    assert len(traces) == 1
    assert not np.allclose(a0, a1)
    # parameters are differentiable leaves: d(accel)/dE through update_params
    dE = jax.grad(lambda E: jnp.sum(m.update_params(young_modulus=E).forward_dynamics(0.0, y) ** 2))(
        jnp.array([1e6, 1e6])
    )
    assert np.all(np.isfinite(np.asarray(dE))) and np.any(np.asarray(dE) != 0)


def test_per_strain_damping_form():
    rates = np.array([[1e-3, 2e-3, 3e-3, 1.0, 2.0, 3.0], [4e-3, 5e-3, 6e-3, 4.0, 5.0, 6.0]])
    m = sg.PCS(_params(damping=rates, dtype=jnp.float64))
    expected = np.diag((np.asarray([0.1, 0.1])[:, None] * rates).reshape(-1))
    np.testing.assert_allclose(np.asarray(m.damping_matrix()), expected, rtol=1e-14)
    with pytest.raises(ValueError, match="damping"):
        _params(damping=np.ones((2, 3)))
    with pytest.raises(ValueError, match="damping"):
        _params(damping=-rates)
    planar = sg.PlanarPCS(_params(damping=np.ones((2, 3)), planar=True, dtype=jnp.float64))
    np.testing.assert_allclose(np.diag(np.asarray(planar.damping_matrix())), 0.1 * np.ones(6))


@pytest.mark.oracle
def test_per_strain_damping_matches_soromox_link_damping():
    oracle("soromox")
    from sorogym.testing import soromox_twin

    rates = np.tile(1e-3 * np.array([1.0, 1.0, 1.0, 1e3, 1e3, 1e3]), (2, 1))
    m = sg.PCS(_params(damping=rates, dtype=jnp.float64))
    rob, _ = soromox_twin(m)
    np.testing.assert_allclose(
        np.asarray(rob.damping_matrix(jnp.zeros(12))), np.asarray(m.damping_matrix()), rtol=1e-14
    )
