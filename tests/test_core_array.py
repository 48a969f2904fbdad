"""The immutable Array value: construction, immutability, conversions, repr."""
import pickle

import numpy as np
import pytest

from mindtorch_v2 import core


def test_attributes_cannot_be_set_or_deleted():
    x = core.asarray([1.0, 2.0])
    with pytest.raises(AttributeError, match="immutable"):
        x.shape = (1, 2)
    with pytest.raises(AttributeError, match="immutable"):
        x.anything = 1
    with pytest.raises(AttributeError, match="immutable"):
        del x.dtype
    assert x.shape == (2,)


def test_array_cannot_be_constructed_directly():
    with pytest.raises(TypeError, match="asarray"):
        core.Array()


def test_numpy_view_is_read_only():
    x = core.asarray([[1.0, 2.0], [3.0, 4.0]])
    view = np.asarray(x)
    assert view.flags.writeable is False
    with pytest.raises(ValueError, match="read-only"):
        view[0, 0] = 5.0
    assert x.numpy().flags.writeable is False
    np.testing.assert_array_equal(np.asarray(x), [[1.0, 2.0], [3.0, 4.0]])


def test_read_only_flag_cannot_be_switched_back_on():
    x = core.asarray([1.0, 2.0])
    view = np.asarray(x)
    with pytest.raises(ValueError):
        view.flags.writeable = True


def test_op_results_are_read_only_too():
    y = core.exp(core.asarray([0.0]))
    with pytest.raises(ValueError, match="read-only"):
        np.asarray(y)[0] = 3.0


def test_asarray_copies_numpy_input():
    src = np.array([1.0, 2.0])
    x = core.asarray(src)
    src[0] = 100.0
    np.testing.assert_array_equal(np.asarray(x), [1.0, 2.0])
    assert x.dtype is core.float64  # numpy input keeps its dtype


def test_asarray_infers_torch_dtypes_from_python_data():
    assert core.asarray([1, 2]).dtype is core.int64
    assert core.asarray([1, 2.5]).dtype is core.float32
    assert core.asarray([True, False]).dtype is core.bool_
    assert core.asarray(3).shape == ()
    assert core.asarray(np.array([1], np.int32)).dtype is core.int32
    assert core.asarray([core.asarray(1.0), core.asarray(2.0)]).shape == (2,)
    assert core.asarray([1, 2], dtype=core.float64).dtype is core.float64


def test_asarray_rejects_non_numeric_data():
    with pytest.raises(TypeError):
        core.asarray(["a", "b"])


def test_repr_shows_values_and_dtype():
    r = repr(core.asarray([[1.0, 2.0], [3.0, 4.0]]))
    assert r.startswith("Array(") and "dtype=float32" in r and "3." in r
    assert repr(core.zeros((2, 3), device="meta")) == "Array(shape=(2, 3), dtype=float32, device=meta)"


def test_item_and_tolist():
    assert core.asarray([[3.5]]).item() == 3.5
    assert isinstance(core.asarray(2).item(), int)
    with pytest.raises(ValueError, match="one element"):
        core.asarray([1.0, 2.0]).item()
    assert core.asarray([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]


def test_len_iter_and_bool():
    x = core.asarray([[1, 2], [3, 4], [5, 6]])
    assert len(x) == 3
    assert [row.tolist() for row in x] == [[1, 2], [3, 4], [5, 6]]
    with pytest.raises(TypeError, match="0-d"):
        len(core.asarray(1.0))
    with pytest.raises(TypeError, match="0-d"):
        iter(core.asarray(1.0)).__next__()
    assert bool(core.asarray([0.0])) is False
    assert bool(core.asarray(2)) is True
    with pytest.raises(ValueError, match="ambiguous"):
        bool(x)


def test_scalar_conversions():
    assert float(core.asarray(2.5)) == 2.5
    assert int(core.asarray([7])) == 7
    assert [10, 20, 30][core.asarray(1)] == 20
    with pytest.raises(TypeError, match="integer"):
        [10, 20][core.asarray(1.0)]


def test_arrays_are_unhashable_and_compare_elementwise():
    x = core.asarray([1, 2])
    with pytest.raises(TypeError):
        hash(x)
    assert (x == core.asarray([1, 3])).tolist() == [True, False]
    assert (x == None) is False  # noqa: E711 - torch's behaviour
    assert (x != None) is True  # noqa: E711


def test_pickle_round_trip():
    x = core.asarray([[1.0, 2.0]], dtype=core.float64)
    y = pickle.loads(pickle.dumps(x))
    assert y.dtype is core.float64 and y.shape == (1, 2)
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))


def test_ndim_size_and_numpy_dtype_conversion():
    x = core.zeros((2, 3, 4))
    assert x.ndim == 3 and x.size == 24
    assert np.asarray(x, dtype=np.float64).dtype == np.float64


def test_creation_functions():
    assert core.zeros(3).tolist() == [0.0, 0.0, 0.0]
    assert core.ones((2,), dtype=core.int32).dtype is core.int32
    assert core.full((2,), 3).dtype is core.int64
    assert core.full((2,), 3.5).dtype is core.float32
    assert core.full((2,), True).dtype is core.bool_
    assert core.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert core.arange(5, 0, -2).tolist() == [5, 3, 1]
    np.testing.assert_allclose(np.asarray(core.arange(0, 1, 0.25)), [0, 0.25, 0.5, 0.75])
    assert core.arange(0, 1, 0.25).dtype is core.float32
    np.testing.assert_allclose(np.asarray(core.linspace(0, 1, 5)), np.linspace(0, 1, 5))
    np.testing.assert_array_equal(np.asarray(core.eye(2, 3)), np.eye(2, 3))
    assert core.zeros_like(core.asarray([1, 2])).dtype is core.int64
    assert core.full_like(core.asarray([1.0, 2.0]), 7).tolist() == [7.0, 7.0]
    with pytest.raises(ValueError, match="negative"):
        core.zeros((-1,))
    with pytest.raises(ValueError, match="step"):
        core.arange(0, 1, 0)
