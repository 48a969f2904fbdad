"""The fast paths a compiled GPT training step takes give the numbers of the plain ones."""
import numpy as np
import pytest
import scipy.special as sc

import mindtorch_v2 as torch
from mindtorch_v2.core.ops import elementwise


# ---------------------------------------------------------------------------
# float32 erf (GELU): the table kernel gives scipy's float32 erf bit for bit
# (checked once over every float32 with |x| < 4.5; here a dense sample of bit patterns)


def test_float32_erf_equals_scipy_on_every_sampled_bit_pattern():
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2 ** 32, 2_000_000, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    assert np.array_equal(elementwise._erf(x), sc.erf(x), equal_nan=True)


def test_float32_erf_equals_scipy_near_zero_and_at_the_piece_edges():
    edges = np.arange(0, 4.5, 1 / 32, dtype=np.float32)
    near = np.concatenate([np.nextafter(edges, np.float32(-1)), edges, np.nextafter(edges, np.float32(9))])
    x = np.concatenate([near, -near, np.linspace(-5, 5, 100_001, dtype=np.float32)])
    assert np.array_equal(elementwise._erf(x), sc.erf(x))


def test_float32_erf_special_values():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-38, 3.9999998, 4.0, 7.0, -1e30],
                 np.float32)
    got = elementwise._erf(x)
    assert got.dtype == np.float32
    assert np.array_equal(got, sc.erf(x), equal_nan=True)
    assert np.signbit(got[1]) and not np.signbit(got[0])


def test_float32_erf_takes_any_layout_and_a_0d_array():
    x = np.random.default_rng(1).standard_normal((6, 8)).astype(np.float32)
    assert np.array_equal(elementwise._erf(x.T), sc.erf(x.T))
    assert np.array_equal(elementwise._erf(x[:, ::3]), sc.erf(x[:, ::3]))
    got = elementwise._erf(np.array(0.5, np.float32))
    assert got.shape == () and got.dtype == np.float32 and got == sc.erf(np.float32(0.5))


def test_erf_and_gelu_in_eager_use_the_same_numbers():
    x = np.random.default_rng(2).standard_normal((4, 33)).astype(np.float32)
    assert np.array_equal(torch.erf(torch.tensor(x)).numpy(), sc.erf(x))
    t = torch.tensor(x, requires_grad=True)
    y = torch.nn.functional.gelu(t)
    y.sum().backward()
    want = x * np.float32(0.5) * (np.float32(1.0) + sc.erf(x * np.float32(1 / np.sqrt(2.0))))
    np.testing.assert_allclose(y.detach().numpy(), want, rtol=1e-6, atol=1e-7)
    assert t.grad is not None and t.grad.shape == (4, 33)


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_other_float_dtypes_keep_scipy(dtype):
    x = np.linspace(-3, 3, 101).astype(dtype)
    got = elementwise._erf(x)
    assert got.dtype == dtype and np.array_equal(got, np.asarray(sc.erf(x), dtype=dtype))
