"""The tiled transposing copy (core/ops/_transpose_kernel.py) that jit's swapped GEMM lands its result with."""
import numpy as np
import pytest

from mindtorch_v2.core import _numba
from mindtorch_v2.core.ops import _transpose_kernel, decompositions

# full tiles only, partial tiles on either axis or both, one row, one column, and a power-of-two pair
SHAPES = [(512, 128), (128, 512), (64, 80), (67, 93), (16, 300), (300, 17), (1, 5000), (5000, 1), (70, 70)]
DTYPES = [np.float32, np.float64, np.complex64, np.complex128, np.int32, np.int64, np.uint32, np.bool_,
          np.float16, np.int8]


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_copy_is_the_transpose_in_c_order_bit_for_bit(dtype):
    rng = np.random.default_rng(0)
    for shape in SHAPES:
        src = (rng.standard_normal(shape) * 100).astype(dtype)
        if src.dtype.kind == "f":
            src.reshape(-1)[:3] = [np.nan, -0.0, np.inf]
        got = _transpose_kernel.transpose_copy(src)
        assert got.flags.c_contiguous and got.dtype == src.dtype and got.shape == shape[::-1]
        assert got.tobytes() == np.ascontiguousarray(src.T).tobytes()
        out = np.full(shape[::-1], 7, dtype)
        assert _transpose_kernel.transpose_copy(src, out) is out
        assert out.tobytes() == got.tobytes()


def test_a_strided_source_is_copied_as_it_reads():
    src = np.arange(300 * 90, dtype=np.float32).reshape(300, 90)[::3, 1::2]
    assert _transpose_kernel.transpose_copy(src).tobytes() == np.ascontiguousarray(src.T).tobytes()


@pytest.mark.skipif(not _numba.available(), reason="numba (the fast and test extras) not installed")
def test_large_arrays_take_the_tiled_kernel(monkeypatch):
    calls = []
    kernel = _transpose_kernel._kernel()
    monkeypatch.setattr(_transpose_kernel, "_kernel", lambda: lambda s, o: calls.append(s.shape) or kernel(s, o))
    _transpose_kernel.transpose_copy(np.ones((512, 128), np.float32))
    _transpose_kernel.transpose_copy(np.ones((4, 8), np.float32))  # small: NumPy's copy
    _transpose_kernel.transpose_copy(np.ones((512, 128), np.float16))  # not a numba type: NumPy's copy
    assert calls == [(512, 128)]


def test_the_swapped_gemm_gives_matmuls_bits_with_and_without_out():
    rng = np.random.default_rng(1)
    for m, k, n in [(128, 784, 512), (33, 70, 129)]:
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((n, k)).astype(np.float32).T  # x @ W.T, as nn.Linear's forward
        want = np.matmul(b.T, a.T).T  # the same GEMM, NumPy's copy
        got = decompositions._matmul_swapped(a, b)
        assert got.flags.c_contiguous and got.tobytes() == np.ascontiguousarray(want).tobytes()
        out = np.empty((m, n), np.float32)
        assert decompositions._matmul_swapped(a, b, out=out) is out
        assert out.tobytes() == got.tobytes()
