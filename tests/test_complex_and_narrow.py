"""The complex and narrow dtypes across the two layers: one set of derivative rules, JAX's convention in
the core and PyTorch's (its conjugate) on the eager tape; narrow floats stored narrow, computed in float32."""
import io

import ml_dtypes
import numpy as np
import pytest

import mindtorch_v2 as torch
from mindtorch_v2 import core

Z = np.array([1 + 2j, -0.5 + 0.25j, 3 - 1j])


def test_core_grad_is_jax_convention_and_eager_grad_its_conjugate():
    f_core = lambda z: core.sum(core.abs(core.mul(z, z)) + core.real(core.exp(z)))  # noqa: E731
    g_core = np.asarray(core.grad(f_core)(core.asarray(Z)))
    # d/dz of |z^2| + Re e^z, in JAX's convention: conj of (2 conj(z) z / |z| ... ) -- check by differences
    eps = 1e-7
    num = np.zeros_like(Z)
    for k in range(len(Z)):
        for unit in (1.0, 1j):
            dz = np.zeros_like(Z)
            dz[k] = eps * unit
            f = lambda z: float(np.sum(np.abs(z * z) + np.exp(z).real))  # noqa: E731
            num[k] += unit.conjugate() * (f(Z + dz) - f(Z - dz)) / (2 * eps) if unit == 1j else (
                f(Z + dz) - f(Z - dz)) / (2 * eps)
    # the real gradient (df/dx + i df/dy) is PyTorch's; JAX's is its conjugate
    torch_convention = num.real + 1j * (num.imag * -1)  # num holds df/dx - i df/dy by construction above
    np.testing.assert_allclose(np.conj(g_core), torch_convention, rtol=1e-6)
    z = torch.tensor(Z, requires_grad=True)
    (torch.abs(z * z) + torch.exp(z).real).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), torch_convention, rtol=1e-6)


def test_abs_squared_gradients_in_both_conventions():
    g = core.grad(lambda z: core.sum(core.abs(z) ** 2))(core.asarray(Z))
    np.testing.assert_allclose(np.asarray(g), 2 * np.conj(Z))
    z = torch.tensor(Z, requires_grad=True)
    (z.abs() ** 2).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), 2 * Z)


def test_complex_jvp_and_vmap():
    out, tangent = core.jvp(core.exp, (core.asarray(Z),), (core.asarray(np.ones(3) * 1j),))
    np.testing.assert_allclose(np.asarray(tangent), 1j * np.exp(Z))
    np.testing.assert_allclose(np.asarray(core.vmap(core.abs)(core.asarray(Z.reshape(3, 1)))), np.abs(Z).reshape(3, 1))


def test_grad_of_complex_output_is_refused():
    with pytest.raises(TypeError, match="real floating-point output"):
        core.grad(lambda z: core.sum(z))(core.asarray(Z))
    with pytest.raises(RuntimeError, match="real scalar outputs"):
        torch.tensor(Z, requires_grad=True).sum().backward()


def test_ordered_ops_refuse_complex():
    with pytest.raises(TypeError, match="complex"):
        core.maximum(core.asarray(Z), core.asarray(Z))
    with pytest.raises(TypeError, match="complex"):
        core.floor(core.asarray(Z))


def test_narrow_dtypes_are_stored_narrow_and_computed_in_float32():
    x = core.cast(core.asarray(np.array([1.0, 2.0, 3.0], np.float32)), core.bfloat16)
    y = core.mul(x, 3.3)
    assert y.dtype is core.bfloat16 and np.asarray(y).dtype == np.dtype(ml_dtypes.bfloat16)
    expect = (np.array([1, 2, 3], np.float32) * np.float32(ml_dtypes.bfloat16(3.3))).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(np.asarray(y).astype(np.float32), expect.astype(np.float32))
    assert core.erf(x).dtype is core.bfloat16  # no bfloat16 kernel of its own: computed through float32


def test_half_mean_accumulates_in_float32():
    assert float(torch.full((3,), 60000.0, dtype=torch.float16).mean()) == 60000.0
    assert float(core.mean(core.full((3,), 60000.0, dtype=core.float16))) == 60000.0


def test_bitcast_round_trips_and_batches():
    x = core.asarray(np.array([[1.0, -2.0], [0.5, 3.0]], np.float32))
    bits = core.bitcast(x, core.int32)
    np.testing.assert_array_equal(np.asarray(bits), np.asarray(x).view(np.int32))
    np.testing.assert_array_equal(np.asarray(core.bitcast(bits, core.float32)), np.asarray(x))
    halves = core.vmap(lambda r: core.bitcast(r, core.int16))(x)
    assert halves.shape == (2, 4)
    with pytest.raises(ValueError, match="divisible"):
        core.bitcast(core.asarray(np.ones(3, np.float32)), core.float64)


@pytest.mark.parametrize("dtype", ["complex64", "complex128", "bfloat16", "float8_e4m3fn", "float8_e5m2", "uint16",
                                   "uint32", "uint64"])
def test_save_and_load_keep_the_new_dtypes(dtype):
    t = torch.tensor([1.5, 2.0, 3.0]).to(getattr(torch, dtype))
    if t.is_complex():
        t = t * (1 + 1j)
    buf = io.BytesIO()
    torch.save({"t": t}, buf)
    buf.seek(0)
    back = torch.load(buf)["t"]
    assert back.dtype is t.dtype
    assert np.asarray(back.numpy()).tobytes() == np.asarray(t.numpy()).tobytes()


def test_complex_randn_has_unit_variance():
    torch.manual_seed(0)
    z = torch.randn(20000, dtype=torch.complex128)
    assert z.dtype is torch.complex128
    assert abs(float((z.abs() ** 2).mean()) - 1.0) < 0.05
    assert abs(float(z.real.var()) - 0.5) < 0.05


@pytest.mark.parametrize("part", [lambda z: z.real, lambda z: z.imag, lambda z: torch.view_as_real(z),
                                  lambda z: torch.ones(3, 2)[1:].view(torch.int32)])
def test_copied_parts_refuse_in_place_writes_instead_of_losing_them(part):
    z = torch.tensor([1 + 2j, 3 - 1j])
    p = part(z)
    before = p.clone()
    with pytest.raises(RuntimeError, match="copy .*would not reach the input"):
        p.mul_(2)
    assert p._version == 0 and torch.equal(p, before)
    assert torch.equal(p.clone().mul_(2), before * 2)  # a clone is an ordinary tensor


def test_view_dtype_of_a_whole_tensor_is_a_true_view():
    a = torch.ones(2)
    b = a.view(torch.int32)
    b.add_(1)  # as torch: a becomes the next float after 1
    assert a.tolist() == [float(np.nextafter(np.float32(1), np.float32(2)))] * 2
    assert a._version == b._version == 1
    a.mul_(2)
    assert b.tolist() == [int(np.float32(a[0].item()).view(np.int32))] * 2


@pytest.mark.parametrize("dtype", ["bfloat16", "float8_e4m3fn", "float8_e5m2", "float16"])
def test_random_draws_in_narrow_dtypes_stay_in_range(dtype):
    d = getattr(torch, dtype)
    x = torch.rand(2000, dtype=d)
    assert x.dtype is d and 0.0 <= float(x.float().min()) and float(x.float().max()) < 1.0
    assert torch.randn(3, dtype=d).dtype is d and torch.empty(4, dtype=d).uniform_(-1, 1).dtype is d


def test_randint_with_bool_and_float_dtypes_as_torch():
    b = torch.randint(0, 2, (50,), dtype=torch.bool)
    f = torch.randint(0, 5, (50,), dtype=torch.float32)
    assert b.dtype is torch.bool and f.dtype is torch.float32
    assert set(f.tolist()) <= {0.0, 1.0, 2.0, 3.0, 4.0}
