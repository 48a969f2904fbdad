"""mindtorch_v2.core as an Array API standard (2024.12) namespace, as jax.numpy is.

Each rule here is one the array-api-tests suite found broken in the core (the suite itself is not a
test dependency); expectations come from the standard's text and from NumPy. Functions written against
the namespace (`xp = x.__array_namespace__()`) keep grad and vmap.
"""
import math

import numpy as np
import pytest

import mindtorch_v2 as torch
from mindtorch_v2 import core as xp


def arr(data, dtype=None):
    return xp.asarray(data, dtype=dtype)


def npa(x):
    return np.asarray(x)


# ---------------------------------------------------------------------------
# the namespace, its inspection API and constants


def test_arrays_name_the_core_as_their_namespace():
    x = arr([1.0, 2.0])
    assert x.__array_namespace__() is xp
    assert x.__array_namespace__(api_version="2024.12") is xp
    assert xp.__array_api_version__ == "2024.12"
    with pytest.raises(ValueError, match="api_version"):
        x.__array_namespace__(api_version="1999.01")


def test_namespace_info_lists_devices_and_standard_dtypes():
    info = xp.__array_namespace_info__()
    assert info.default_device() is xp.cpu and xp.cpu in info.devices()
    assert info.default_dtypes() == {"real floating": xp.float32, "complex floating": xp.complex64,
                                     "integral": xp.int64, "indexing": xp.int64}
    assert set(info.dtypes(kind="unsigned integer").values()) == {xp.uint8, xp.uint16, xp.uint32, xp.uint64}
    assert info.dtypes(kind=("bool", "complex floating")) == {"bool": xp.bool_, "complex64": xp.complex64,
                                                               "complex128": xp.complex128}
    assert "bfloat16" not in info.dtypes()  # an extra of the core, not a standard dtype
    assert info.capabilities()["boolean indexing"] is True
    with pytest.raises(ValueError, match="no backend"):
        info.dtypes(device="meta")


def test_constants_and_the_bool_dtype_name():
    assert xp.e == math.e and xp.pi == math.pi and xp.inf == math.inf and math.isnan(xp.nan)
    assert xp.newaxis is None and arr([1, 2])[xp.newaxis].shape == (1, 2)
    assert xp.bool is xp.bool_ and arr([True]).dtype is xp.bool


# ---------------------------------------------------------------------------
# promotion: every core array is strong (a 0-d one too), Python scalars are weak


@pytest.mark.parametrize("a, b, expected", [
    (arr([1], xp.int32), arr(1, xp.int64), xp.int64),
    (arr([1.0], xp.float32), arr(1.0, xp.float64), xp.float64),
    (arr([1], xp.uint16), arr([1], xp.int16), xp.int32),
    (arr([1], xp.uint32), arr([1], xp.int8), xp.int64),
    (arr([1], xp.uint8), arr([1], xp.uint32), xp.uint32),
    (arr([1.0], xp.float64), arr([1j], xp.complex64), xp.complex128),
])
def test_array_promotion_follows_the_standard(a, b, expected):
    assert (a + b).dtype is expected
    assert xp.result_type(a, b) is expected
    assert xp.result_type(a.dtype, b.dtype) is expected


def test_python_scalars_stay_weak():
    assert (arr([1], xp.int8) + 1000).dtype is xp.int8
    assert (arr([1.0], xp.float32) + 1e-3).dtype is xp.float32
    assert xp.result_type(arr([1], xp.int16), 2.5) is xp.float32
    assert xp.result_type(xp.float64, 1j) is xp.complex128


def test_unsigned_64_with_signed_has_no_standard_promotion():
    with pytest.raises(TypeError, match="uint64 with int64"):
        arr([1], xp.uint64) + arr([1], xp.int64)


def test_eager_tensors_keep_torchs_zero_dim_tier():
    # PyTorch's weaker 0-d tier belongs to the eager layer
    assert (torch.tensor([1], dtype=torch.int32) + torch.tensor(1, dtype=torch.int64)).dtype is torch.int32
    with pytest.raises(RuntimeError, match="uint16, uint32, uint64"):
        torch.tensor([1], dtype=torch.uint16) + torch.tensor([1], dtype=torch.int16)


def test_eager_ops_beyond_the_operators_keep_torchs_tier_too():
    """Eager ops cast to torch's result dtype before they call the core, whose promotion is the standard's."""
    x, zero = torch.tensor([3, -7], dtype=torch.int32), torch.tensor(2, dtype=torch.int64)
    assert torch.where(torch.tensor([True, False]), x, zero).dtype is torch.int32
    assert torch.clamp(x, min=zero).dtype is torch.int32
    assert torch.fmod(x, zero).dtype is torch.int32 and torch.div(x, zero, rounding_mode="floor").dtype is torch.int32
    assert torch.maximum(torch.tensor([1.0]), torch.tensor(2.0, dtype=torch.float64)).dtype is torch.float32
    assert torch.sum(torch.tensor([200, 100], dtype=torch.uint8)).dtype is torch.int64
    # the same values in the core: strong 0-d arrays, unsigned sums stay unsigned
    assert xp.where(arr([True, False]), arr([3, -7], xp.int32), arr(2, xp.int64)).dtype is xp.int64
    assert xp.sum(arr([200, 100], xp.uint8)).dtype is xp.uint64


def test_can_cast_stays_within_a_kind():
    assert xp.can_cast(xp.int8, xp.int32) and not xp.can_cast(xp.int32, xp.int8)
    assert xp.can_cast(arr([1], xp.uint8), xp.int16) and not xp.can_cast(xp.uint16, xp.int16)
    assert not xp.can_cast(xp.int32, xp.float64) and not xp.can_cast(xp.bool_, xp.int8)
    assert xp.can_cast(xp.float32, xp.complex64) and not xp.can_cast(xp.complex64, xp.float64)


def test_isdtype_kinds():
    assert xp.isdtype(xp.int8, "signed integer") and not xp.isdtype(xp.uint8, "signed integer")
    assert xp.isdtype(xp.uint8, "integral") and xp.isdtype(xp.float32, ("bool", "real floating"))
    assert xp.isdtype(xp.complex64, "numeric") and not xp.isdtype(xp.bool_, "numeric")
    assert xp.isdtype(xp.float64, xp.float64) and not xp.isdtype(xp.float64, xp.float32)
    with pytest.raises(ValueError, match="unknown kind"):
        xp.isdtype(xp.int8, "integer")
    with pytest.raises(TypeError, match="expected a dtype"):
        xp.isdtype("int8", "integral")


def test_finfo_and_iinfo_take_arrays_and_give_dtype_objects():
    assert xp.finfo(arr([1.0], xp.float64)).dtype is xp.float64
    assert xp.finfo(xp.complex64).dtype is xp.float32 and isinstance(xp.finfo(xp.float32).bits, int)
    assert xp.iinfo(arr([1], xp.uint16)).dtype is xp.uint16 and xp.iinfo(xp.int8).min == -128
    assert torch.finfo(torch.float32).dtype == "float32"  # torch's finfo names the dtype


# ---------------------------------------------------------------------------
# the standard's functions and keywords


def test_astype_concat_bitwise_invert():
    x = arr([1, 2, 3], xp.int32)
    assert xp.astype(x, xp.float64).dtype is xp.float64
    assert xp.astype(x, xp.int32, copy=False) is x
    assert xp.astype(x, xp.int8, device="meta").device is xp.meta
    assert x.astype(xp.int16, copy=True).dtype is xp.int16
    np.testing.assert_array_equal(npa(xp.concat([arr([[1, 2]]), arr([[3]])], axis=None)), [1, 2, 3])
    np.testing.assert_array_equal(npa(xp.concat([arr([[1], [2]]), arr([[3], [4]])], axis=1)), [[1, 3], [2, 4]])
    np.testing.assert_array_equal(npa(xp.bitwise_invert(arr([0, 5], xp.uint8))), [255, 250])


def test_count_nonzero_and_nonzero():
    x = arr([[0.0, 1.5], [2.0, 0.0]])
    assert xp.count_nonzero(x).item() == 2 and xp.count_nonzero(x).dtype is xp.int64
    np.testing.assert_array_equal(npa(xp.count_nonzero(x, axis=0, keepdims=True)), [[1, 1]])
    rows, cols = xp.nonzero(x)
    np.testing.assert_array_equal(npa(rows), [0, 1])
    np.testing.assert_array_equal(npa(cols), [1, 0])
    with pytest.raises(ValueError, match="zero-dimensional"):
        xp.nonzero(arr(1.0))
    with pytest.raises(ValueError, match="concrete"):
        xp.vmap(lambda r: xp.nonzero(r)[0])(x)


def test_correction_keyword_of_var_and_std():
    x = arr([1.0, 2.0, 4.0, 7.0])
    np.testing.assert_allclose(npa(xp.var(x, correction=1)), np.var(npa(x), ddof=1), rtol=1e-6)
    np.testing.assert_allclose(npa(xp.std(x, correction=1.5)), np.std(npa(x), ddof=1.5), rtol=1e-6)
    np.testing.assert_allclose(npa(x.var(correction=1)), np.var(npa(x), ddof=1), rtol=1e-6)


def test_sums_and_products_of_unsigned_integers_are_uint64():
    x = arr([200, 100], xp.uint8)
    assert xp.sum(x).dtype is xp.uint64 and xp.sum(x).item() == 300
    assert xp.prod(x).dtype is xp.uint64 and xp.prod(x).item() == 20000
    assert xp.cumulative_sum(x).dtype is xp.uint64 and xp.cumulative_prod(x).dtype is xp.uint64
    assert xp.sum(arr([1, 2], xp.int8)).dtype is xp.int64
    assert xp.sum(x, dtype=xp.uint8).dtype is xp.uint8 and xp.sum(x, dtype=xp.uint8).item() == 300 % 256
    assert xp.prod(arr([2.5, 2.0]), dtype=xp.float64).dtype is xp.float64
    assert torch.tensor([200, 100], dtype=torch.uint8).sum().dtype is torch.int64  # torch's rule stays eager's


def test_creation_keywords():
    np.testing.assert_array_equal(npa(xp.eye(3, 4, k=1)), np.eye(3, 4, 1))
    np.testing.assert_array_equal(npa(xp.eye(3, k=-2)), np.eye(3, k=-2))
    np.testing.assert_allclose(npa(xp.linspace(0, 1, 4, endpoint=False)), [0, 0.25, 0.5, 0.75])
    assert xp.linspace(0, 1j, 3).dtype is xp.complex64
    x = arr([1.0, 2.0])
    assert xp.asarray(x, copy=False) is x
    with pytest.raises(ValueError, match="copy=False"):
        xp.asarray([1.0, 2.0], copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        xp.asarray(x, dtype=xp.float64, copy=False)
    assert xp.reshape(x, (2, 1), copy=True).shape == (2, 1)


def test_unique_functions_return_the_standards_named_tuples():
    x = arr([3.0, 1.0, 3.0, float("nan"), float("nan")])
    out = xp.unique_all(x)
    np.testing.assert_array_equal(npa(out.values)[:2], [1.0, 3.0])
    assert np.isnan(npa(out.values)[2:]).all()  # each NaN is its own unique value
    np.testing.assert_array_equal(npa(out.counts), [1, 2, 1, 1])
    np.testing.assert_array_equal(npa(out.indices)[:2], [1, 0])
    np.testing.assert_array_equal(npa(out.values)[npa(out.inverse_indices)][:3], npa(x)[:3])
    assert xp.unique_counts(x).counts.shape == (4,)
    assert xp.unique_inverse(x).inverse_indices.shape == (5,)


def test_unique_of_complex_values_orders_them_as_numpy():
    z = np.array([1 + 2j, 1 + 1j, 0 + 5j, 1 + 1j], np.complex64)
    out = xp.unique_counts(arr(z))
    np.testing.assert_array_equal(npa(out.values), np.unique(z))
    np.testing.assert_array_equal(npa(out.counts), [1, 2, 1])


def test_moveaxis_with_tuples_and_tile_with_fewer_reps():
    x = np.arange(24).reshape(2, 3, 4)
    for src, dst in [((0, 1), (2, 0)), ((2, 0), (0, 1)), ((), ()), (0, -1)]:
        np.testing.assert_array_equal(npa(xp.moveaxis(arr(x), src, dst)), np.moveaxis(x, src, dst))
    with pytest.raises(ValueError, match="same length"):
        xp.moveaxis(arr(x), (0, 1), (0,))
    np.testing.assert_array_equal(npa(xp.tile(arr(x[0]), (2,))), np.tile(x[0], (2,)))
    assert xp.tile(xp.ones((1, 0)), (1,)).shape == (1, 0)


def test_clip_without_bounds_and_the_sign_of_complex_values():
    x = arr([-2.0, 0.5, 3.0])
    assert xp.clip(x) is x and x.clip() is x
    np.testing.assert_array_equal(npa(xp.clip(x, max=1.0)), [-2.0, 0.5, 1.0])
    with pytest.raises(ValueError, match="at least one"):
        xp.clamp(x)  # torch's clamp still needs a bound
    z = arr([3 + 4j, 0j], xp.complex64)
    np.testing.assert_allclose(npa(xp.sign(z)), [0.6 + 0.8j, 0j], rtol=1e-6)


def test_take_along_axis_defaults_to_the_last_axis():
    x = np.array([[3, 1, 2], [9, 7, 8]])
    idx = np.array([[2, 0], [1, 1]])
    np.testing.assert_array_equal(npa(xp.take_along_axis(arr(x), arr(idx))), np.take_along_axis(x, idx, -1))


def test_argsort_and_sort_take_the_stable_keyword():
    x = arr([2, 1, 2, 1])
    np.testing.assert_array_equal(npa(xp.argsort(x, stable=True)), [1, 3, 0, 2])
    np.testing.assert_array_equal(npa(xp.argsort(x, stable=False)), [1, 3, 0, 2])


def test_linalg_results_are_the_standards_named_tuples():
    a = arr([[2.0, 1.0], [1.0, 3.0]], xp.float64)
    w, v = xp.linalg.eigh(a)
    assert xp.linalg.eigh(a).eigenvalues is not None and type(xp.linalg.eigh(a)).__name__ == "EighResult"
    np.testing.assert_allclose(npa(xp.linalg.eigh(a).eigenvalues), np.linalg.eigvalsh(npa(a)))
    assert xp.linalg.svd(a).S.shape == (2,) and xp.linalg.qr(a).R.shape == (2, 2)
    np.testing.assert_allclose(npa(xp.linalg.slogdet(a).logabsdet), np.log(5.0))


def test_array_tolerances_broadcast_against_the_batch_shape():
    a = np.random.default_rng(0).normal(size=(2, 3, 3))
    a[1, :, 2] = a[1, :, 0]
    rtol = np.array([1e-6, 1e-6])
    np.testing.assert_array_equal(npa(xp.linalg.matrix_rank(arr(a), rtol=arr(rtol))), [3, 2])
    np.testing.assert_allclose(npa(xp.linalg.pinv(arr(a), rtol=arr(rtol))), np.linalg.pinv(a, rtol=rtol), atol=1e-8)


def test_linalg_edge_cases():
    assert xp.linalg.pinv(xp.zeros((0, 3))).shape == (3, 0)
    assert xp.linalg.pinv(xp.zeros((0, 2, 3))).shape == (0, 3, 2)
    assert np.signbit(npa(xp.linalg.outer(arr([0.0]), arr([-0.0])))).all()  # one product per entry
    with pytest.raises(ValueError, match="1-D"):
        xp.linalg.outer(arr([[1.0]]), arr([1.0]))
    assert xp.linalg.matrix_rank(xp.zeros((0, 2, 3)), rtol=xp.zeros((0,))).shape == (0,)
    out = xp.linalg.vecdot(arr([200, 100], xp.uint8), arr([1, 2], xp.uint8))
    assert out.dtype is xp.uint8 and out.item() == 400 % 256


# ---------------------------------------------------------------------------
# array methods: DLPack, devices, complex(), immutability


def test_dlpack_round_trips_with_numpy():
    x = arr([[1.0, 2.0], [3.0, 4.0]], xp.float64)
    np.testing.assert_array_equal(np.from_dlpack(x), npa(x))
    assert x.__dlpack_device__() == (1, 0)
    y = xp.from_dlpack(np.arange(4, dtype=np.int16))
    assert y.dtype is xp.int16 and npa(y).tolist() == [0, 1, 2, 3]
    assert xp.from_dlpack(x) is x
    with pytest.raises(ValueError, match="copy=False"):
        xp.from_dlpack(np.arange(3), copy=False)
    with pytest.raises(TypeError, match="__dlpack__"):
        xp.from_dlpack([1, 2])


def test_to_device_complex_and_item_assignment():
    x = arr([1.0, 2.0])
    assert x.to_device("meta").device is xp.meta and x.to_device(x.device) is x
    assert complex(arr(2.0)) == 2 + 0j and complex(arr(1 + 2j)) == 1 + 2j
    with pytest.raises(TypeError, match=r"immutable.*\.at\[key\]\.set"):
        x[0] = 3.0


# ---------------------------------------------------------------------------
# x.at[key]: JAX's functional update


def test_at_set_and_get_leave_the_array_unchanged():
    x = arr([[1.0, 2.0], [3.0, 4.0]])
    y = x.at[0, 1].set(9.0)
    np.testing.assert_array_equal(npa(y), [[1, 9], [3, 4]])
    np.testing.assert_array_equal(npa(x), [[1, 2], [3, 4]])
    np.testing.assert_array_equal(npa(x.at[:, 0].set(arr([7.0, 8.0]))), [[7, 2], [8, 4]])
    np.testing.assert_array_equal(npa(x.at[arr([True, False])].set(0)), [[0, 0], [3, 4]])
    assert x.at[1].get().tolist() == [3.0, 4.0]
    assert x.at[0].set(1).dtype is xp.float32  # values take x's dtype


@pytest.mark.parametrize("mode, ufunc", [("add", np.add), ("multiply", np.multiply), ("min", np.minimum),
                                         ("max", np.maximum)])
def test_at_updates_combine_duplicate_indices_as_numpy_ufunc_at(mode, ufunc):
    base = np.array([1.0, -2.0, 3.0, 4.0], np.float32)
    idx = np.array([0, 2, 0, 3, 0])
    vals = np.array([2.0, -1.0, 0.5, 5.0, -3.0], np.float32)
    expected = base.copy()
    ufunc.at(expected, idx, vals)
    out = getattr(arr(base).at[arr(idx)], mode)(arr(vals))
    np.testing.assert_allclose(npa(out), expected, rtol=1e-6)


def test_at_divide_divides_at_the_key_and_keeps_the_rest():
    x = arr([8.0, 6.0, 5.0])
    np.testing.assert_allclose(npa(x.at[arr([0, 2, 0])].divide(arr([2.0, 5.0, 4.0]))), [1.0, 6.0, 1.0])
    assert arr([4, 6]).at[0].divide(2).dtype is xp.float32  # integers divide to the default float, as `/`
    g = xp.grad(lambda v: xp.sum(x.at[1].divide(v)))(arr(3.0))
    np.testing.assert_allclose(npa(g), -6.0 / 9.0, rtol=1e-6)


def test_at_rejects_bad_values():
    with pytest.raises(ValueError, match="cannot be broadcast"):
        arr([1.0, 2.0]).at[0].set(arr([1.0, 2.0]))
    with pytest.raises(IndexError):
        arr([1.0, 2.0]).at[5].set(0.0)


def test_grad_and_vmap_through_at_updates():
    x = arr([1.0, 2.0, 3.0])
    # f = x0 * x1^2 + x1 + x2 (x0 multiplied twice by x1)
    g = xp.grad(lambda x: xp.sum(x.at[arr([0, 0])].multiply(x[1])))(x)
    np.testing.assert_allclose(npa(g), [4.0, 5.0, 1.0])
    g = xp.grad(lambda v: xp.sum(x.at[arr([1, 1])].max(v) ** 2))(arr([5.0, 4.0]))
    np.testing.assert_allclose(npa(g), [10.0, 0.0])
    batched = xp.vmap(lambda row, i: row.at[i].set(0.0))(xp.ones((2, 3)), arr([0, 2]))
    np.testing.assert_array_equal(npa(batched), [[0, 1, 1], [1, 1, 0]])


# ---------------------------------------------------------------------------
# code written against the namespace keeps the transforms


def _standardize(x):
    xp_ = x.__array_namespace__()
    mean = xp_.mean(x, axis=-1, keepdims=True)
    std = xp_.std(x, axis=-1, keepdims=True, correction=1)
    centered = xp_.concat([x - mean], axis=0)
    return xp_.sum(xp_.astype(centered / std, xp_.float32) ** 3) + xp_.sum(xp_.cumulative_sum(x, axis=-1))


def test_grad_and_vmap_of_a_function_written_against_the_namespace():
    x = arr([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]])
    g = xp.grad(_standardize)(x)
    eps = 1e-3
    xn = npa(x).astype(np.float64)
    num = np.zeros_like(xn)
    for i in np.ndindex(xn.shape):
        d = np.zeros_like(xn)
        d[i] = eps
        num[i] = (float(_standardize(arr(xn + d))) - float(_standardize(arr(xn - d)))) / (2 * eps)
    np.testing.assert_allclose(npa(g), num, rtol=2e-2, atol=2e-2)
    per_row = xp.vmap(lambda r: _standardize(r[None]))(x)
    np.testing.assert_allclose(npa(per_row), [float(_standardize(x[i:i + 1])) for i in range(2)], rtol=1e-5)


# ---------------------------------------------------------------------------
# scikit-learn with array_api_dispatch=True recognises core arrays (through array_api_compat and
# __array_namespace__). SciPy reads SCIPY_ARRAY_API when it is first imported, so this runs in a fresh
# interpreter. (LinearDiscriminantAnalysis and Ridge(solver="svd") write into arrays with a plain __setitem__
# inside scikit-learn 1.9 (`means[i, :] = ...`, `std[std == 0] = 1.0`, `d[idx] = ...`), not through
# array-api-extra's at(), which immutable arrays refuse, as JAX's do. at() itself takes its functional path
# only for arrays array_api_compat recognises as JAX's, by class; for any other type with
# __array_namespace__ is_writeable_array is True, and there is no hook a library can set.)

_PCA_SCRIPT = """
import numpy as np
from sklearn import config_context
from sklearn.decomposition import PCA
from mindtorch_v2 import core
X = np.random.default_rng(0).normal(size=(40, 5))
ref = PCA(n_components=3, svd_solver="full").fit(X)
with config_context(array_api_dispatch=True):
    pca = PCA(n_components=3, svd_solver="full").fit(core.asarray(X))
    out = pca.transform(core.asarray(X))
assert type(out) is core.Array and type(pca.components_) is core.Array, (type(out), type(pca.components_))
np.testing.assert_allclose(np.asarray(pca.components_), ref.components_, atol=1e-12)
np.testing.assert_allclose(np.asarray(pca.explained_variance_), ref.explained_variance_, rtol=1e-12)
np.testing.assert_allclose(np.asarray(out), ref.transform(X), atol=1e-12)
print("ok")
"""


def test_scikit_learn_pca_fits_core_arrays_as_numpy_ones():
    import os
    import subprocess
    import sys
    from pathlib import Path
    env = dict(os.environ, SCIPY_ARRAY_API="1",
               PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, "-c", _PCA_SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-3000:]



def test_sort_returns_the_sorted_array_and_vecdot_conjugates():
    """The standard's sort returns values only (sort_with_indices gives torch.sort's pair); vecdot is
    sum(conj(x1) * x2) for complex inputs."""
    x = xp.asarray([3.0, 1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(xp.sort(x)), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(np.asarray(xp.sort(x, descending=True)), [3.0, 2.0, 1.0])
    values, idx = xp.sort_with_indices(x)
    np.testing.assert_array_equal(np.asarray(idx), [1, 2, 0])
    a = np.array([1 + 2j, 3 - 1j])
    b = np.array([2 - 1j, 1 + 1j])
    np.testing.assert_allclose(np.asarray(xp.vecdot(xp.asarray(a), xp.asarray(b))), np.vdot(a, b))
