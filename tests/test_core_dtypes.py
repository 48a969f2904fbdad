"""dtypes and the type promotion of the functional core (the Array API standard's, Python scalars weak)."""
import ml_dtypes
import numpy as np
import pytest

from mindtorch_v2 import core
from mindtorch_v2.core import dtypes as dt


def arr(data, dtype=None):
    return core.asarray(data, dtype=dtype)


# ---------------------------------------------------------------------------
# promotion through operators (PyTorch's documented rules)


@pytest.mark.parametrize("make, expected", [
    # python scalars are weak: they choose the category, never the size
    (lambda: arr([1, 2]) * 2.5, core.float32),
    (lambda: arr([1.0, 2.0]) + 1e-3, core.float32),
    (lambda: arr([1.0], core.float64) + 1e-3, core.float64),
    (lambda: 1 + arr([1.0], core.float16), core.float16),
    (lambda: arr([1], core.int32) + 5, core.int32),
    (lambda: arr([True]) + 1, core.int64),
    (lambda: arr([True]) * 1.5, core.float32),
    # dimensioned arrays: the larger type of the higher category
    (lambda: arr([1], core.int32) + arr([1], core.int64), core.int64),
    (lambda: arr([1], core.uint8) + arr([1], core.int8), core.int16),
    (lambda: arr([1], core.uint8) + arr([1], core.int16), core.int16),
    (lambda: arr([True]) + arr([1], core.uint8), core.uint8),
    (lambda: arr([True]) + arr([True]), core.bool_),
    (lambda: arr([1], core.int64) + arr([1.0], core.float16), core.float16),
    (lambda: arr([1.0], core.float16) + arr([1.0], core.float32), core.float32),
    # zero-dim core arrays are arrays like any other (the Array API standard, JAX); PyTorch's weaker
    # zero-dim tier is the eager Tensor's (tests/test_vs_torch_dtypes.py)
    (lambda: arr(1.0, core.float64) + arr([1, 2]), core.float64),
    (lambda: arr([1.0]) + arr(1.0, core.float64), core.float64),
    (lambda: arr([1], core.int32) + arr(1, core.int64), core.int64),
    (lambda: arr([1], core.int32) + arr(1.0, core.float64), core.float64),
    (lambda: arr(1, core.int32) + arr(1, core.int64), core.int64),
    (lambda: arr(1) + 2.5, core.float32),
])
def test_binary_op_result_dtype_follows_the_core_promotion(make, expected):
    assert make().dtype is expected


def test_weak_scalar_keeps_float32_precision():
    out = arr([1.0, 2.0]) + 1e-3
    np.testing.assert_array_equal(np.asarray(out), np.array([1.0, 2.0], np.float32) + np.float32(1e-3))


def test_sum_of_bool_and_ints_is_int64():
    assert core.sum(arr([True, True, False])).dtype is core.int64
    assert core.sum(arr([True, True, False])).item() == 2
    assert core.sum(arr([1, 2], core.int8)).dtype is core.int64
    assert core.sum(arr([1.0], core.float16)).dtype is core.float16


def test_float_unary_of_int_is_default_float():
    out = core.exp(arr([0, 1]))
    assert out.dtype is core.float32
    np.testing.assert_allclose(np.asarray(out), np.exp([0.0, 1.0]), rtol=1e-6)
    assert core.sqrt(arr([4], core.int8)).dtype is core.float32
    assert core.exp(arr([1.0], core.float16)).dtype is core.float16


def test_true_division_of_ints_is_default_float():
    out = arr([1, 3]) / arr([2, 2])
    assert out.dtype is core.float32
    np.testing.assert_array_equal(np.asarray(out), [0.5, 1.5])
    assert (arr([1, 2]) / 2).dtype is core.float32
    assert (1 / arr([2, 4])).dtype is core.float32


def test_out_of_range_python_int_wraps_like_subtraction():
    x = arr([0, 10], core.uint8)
    np.testing.assert_array_equal(np.asarray(x + (-1)), np.asarray(x - 1))
    np.testing.assert_array_equal(np.asarray(x + (-1)), [255, 9])


def test_negative_zero_scalar_keeps_its_sign():
    x = arr([1.0])
    _ = x * 0.0
    assert np.signbit(np.asarray(x * -0.0))[0]
    assert not np.signbit(np.asarray(x * 0.0))[0]


# ---------------------------------------------------------------------------
# the dtype objects and result_type directly


def test_dtypes_are_interned_and_compare_by_identity():
    assert dt.canonicalize("float32") is core.float32
    assert dt.canonicalize(np.float64) is core.float64
    assert dt.canonicalize(float) is core.float32
    assert dt.canonicalize(int) is core.int64
    assert dt.canonicalize(bool) is core.bool_
    assert dt.canonicalize("bool") is core.bool_
    import pickle  # noqa
    assert pickle.loads(pickle.dumps(core.int16)) is core.int16


def test_unsupported_dtype_raises_type_error():
    with pytest.raises(TypeError, match="unsupported dtype"):
        dt.canonicalize(np.complex256 if hasattr(np, "complex256") else np.str_)
    with pytest.raises(TypeError, match="unsupported dtype"):
        core.asarray(np.array(["a"]))


def test_new_dtypes_round_trip_through_numpy():
    assert dt.canonicalize(np.complex64) is core.complex64
    assert dt.from_numpy(np.dtype(ml_dtypes.bfloat16)) is core.bfloat16
    assert dt.from_numpy(np.dtype(np.uint32)) is core.uint32  # kept, not widened to int64
    assert core.asarray(np.array([1j])).dtype is core.complex128


def test_core_promotion_of_the_new_dtypes_follows_the_standard():
    P = core.promote_types
    assert P(core.complex64, core.float64) is core.complex128
    assert P(core.bfloat16, core.float16) is core.float32
    assert P(core.bfloat16, core.int64) is core.bfloat16
    assert P(core.uint16, core.float32) is core.float32
    # unsigned types widen into a signed type that holds both (PyTorch refuses these: see below)
    assert P(core.uint16, core.int32) is core.int32
    assert P(core.uint16, core.int16) is core.int32
    assert P(core.uint32, core.int8) is core.int64
    assert P(core.uint64, core.uint8) is core.uint64
    with pytest.raises(TypeError, match="does not promote uint64 with int64"):
        P(core.uint64, core.int64)
    with pytest.raises(TypeError, match="does not promote float8_e4m3fn with float32"):
        P(core.float8_e4m3fn, core.float32)


def test_torch_promotion_of_the_new_dtypes_is_the_eager_layers():
    import mindtorch_v2 as torch
    P = torch.promote_types
    assert P(torch.complex64, torch.float64) is torch.complex128
    assert P(torch.bfloat16, torch.float16) is torch.float32
    assert P(torch.uint16, torch.float32) is torch.float32
    with pytest.raises(RuntimeError, match="uint16, uint32, uint64 types is not supported.*UInt16 and Int"):
        P(torch.uint16, torch.int32)
    with pytest.raises(RuntimeError, match="Float8 Types is not supported"):
        P(torch.float8_e4m3fn, torch.float32)


def test_promote_types_table_is_symmetric_and_follows_the_standard():
    def promoted(a, b):
        try:
            return core.promote_types(a, b)
        except dt.PromotionError:
            return "refused"
    for a in dt.ALL:
        for b in dt.ALL:
            assert promoted(a, b) is promoted(b, a)
    assert core.promote_types(core.uint8, core.int8) is core.int16
    assert core.promote_types(core.bool_, core.uint8) is core.uint8
    assert core.promote_types(core.int64, core.float16) is core.float16
    assert core.promote_types(core.uint8, core.int32) is core.int32


def test_result_type_with_scalars_only_uses_default_dtypes():
    assert core.result_type(1, 2) is core.int64
    assert core.result_type(1, 2.0) is core.float32
    assert core.result_type(True, False) is core.bool_


def test_dtype_properties():
    assert core.float16.is_floating_point and not core.int64.is_floating_point
    assert core.int8.itemsize == 1 and core.float64.itemsize == 8
    assert core.uint8.is_signed is False and core.int8.is_signed is True
