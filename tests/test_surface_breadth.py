"""The breadth of the torch surface real programs call: addcmul / addcdiv, the comparison aliases and in-place
comparisons, fix, frexp, the shape and selection helpers (fliplr ... fill_diagonal_), dist / renorm / cov /
corrcoef / pdist, the top-level forms of nn ops (torch.layer_norm, torch.dropout, ...) and the window
functions, each against PyTorch's answers recorded in tests/goldens/surface_breadth.{json.gz,npz}: values,
dtypes, error types, in-place and out= forms, and gradients (first and second order).

Regenerate where torch is installed with
`MINDTORCH_RECORD_GOLDENS=1 python -m pytest -p no:randomly tests/test_surface_breadth.py`
(then run it once more without the variable). The messages' key words are asserted directly below.
"""
import math
import warnings

import numpy as np
import pytest

import mindtorch_v2 as mt
import mindtorch_v2.nn.functional as F
from _goldens import Goldens, golden_fixtures, torch_lib
from test_vs_torch_eager import compare_with
from test_vs_torch_math import grads_with

GOLDEN = Goldens("surface_breadth")
_golden_file, _golden_case = golden_fixtures(GOLDEN)
compare = compare_with(GOLDEN)


grads = grads_with(GOLDEN)


def arr(dtype, shape, seed=0, low=-3.0, high=3.0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype in ("int64", "int32", "uint8"):
        return rng.integers(0 if dtype == "uint8" else -3, 4, size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


def nonzero_arr(dtype, shape, seed=0):
    a = arr(dtype, shape, seed)
    return np.where(a == 0, 1, a).astype(dtype)


# ---------------------------------------------------------------------------
# addcmul, addcdiv

DTYPE_TRIPLES = [("float32", "float32", "float32"), ("float64", "float32", "int64"), ("int64", "int64", "int64"),
                 ("float16", "float64", "int64"), ("int64", "float32", "int64"), ("bool", "bool", "bool"),
                 ("int32", "int64", "uint8")]


@pytest.mark.parametrize("dtypes", DTYPE_TRIPLES, ids=["-".join(d) for d in DTYPE_TRIPLES])
@pytest.mark.parametrize("value", [1, 0.5, 2, -3.0, True])
def test_addcmul_matches_torch(dtypes, value):
    a, b, c = (arr(d, s, i) for i, (d, s) in enumerate(zip(dtypes, ((2, 1), (3,), (1, 1, 3)))))
    compare(lambda L, x, y, z: L.addcmul(x, y, z, value=value), a, b, c, what="addcmul")
    compare(lambda L, x, y, z: x.addcmul(y, z, value=value), a, b, c, what="Tensor.addcmul")


@pytest.mark.parametrize("dtypes", DTYPE_TRIPLES, ids=["-".join(d) for d in DTYPE_TRIPLES])
@pytest.mark.parametrize("value", [1, 0.5, -2])
def test_addcdiv_matches_torch(dtypes, value):
    a, b = arr(dtypes[0], (2, 3), 0), arr(dtypes[1], (2, 3), 1)
    c = nonzero_arr(dtypes[2], (3,), 2)
    compare(lambda L, x, y, z: L.addcdiv(x, y, z, value=value), a, b, c, what="addcdiv")


def test_addcmul_addcdiv_inplace_and_out_match_torch():
    a, b, c = arr("float32", (2, 3)), arr("float32", (2, 3), 1), nonzero_arr("float32", (3,), 2)
    compare(lambda L, x, y, z: x.addcmul_(y, z, value=0.25), a, b, c)
    compare(lambda L, x, y, z: x.addcdiv_(y, z, value=2), a, b, c)
    compare(lambda L, x, y, z: L.addcmul(x, y, z, out=L.empty(2, 3)), a, b, c)
    compare(lambda L, x, y, z: L.addcdiv(x, y, z, value=3, out=L.empty(2, 3)), a, b, c)
    # a float result cannot be written into an int64 self; a broadcast result must fit self's shape
    compare(lambda L, x, y, z: x.addcmul_(y, z), arr("int64", (2, 3)), b, c)
    compare(lambda L, x, y, z: x.addcmul_(y, z), arr("float32", (3,)), b, c)
    compare(lambda L, x, y, z: x.addcmul_(y, z), arr("float32", (2, 3)), arr("float64", (2, 3)), c)


def test_addcmul_addcdiv_errors_match_torch():
    i, f = arr("int64", (3,)), arr("float32", (3,))
    compare(lambda L, x, y, z: L.addcdiv(x, y, z), f, i, nonzero_arr("int64", (3,)))
    compare(lambda L, x, y, z: L.addcdiv(x, y, z), f, arr("bool", (3,)), nonzero_arr("int64", (3,)))
    compare(lambda L, x, y, z: L.addcmul(x, y, z), arr("bool", (3,)), arr("bool", (3,)), arr("bool", (3,)))
    compare(lambda L, x, z: L.addcmul(x, 2, z), f, f)
    compare(lambda L, x, y, z: L.addcmul(x, y, z), f, f, arr("float32", (4,)))
    compare(lambda L, x, y, z: L.addcdiv(x, y, z, value=1j), f, f, nonzero_arr("float32", (3,)))
    compare(lambda L, x, y, z: L.addcmul(x, y, z, value=1j), f, f.astype(np.complex64), f)


def test_addcmul_addcdiv_messages():
    f, i = mt.ones(3), mt.ones(3, dtype=mt.int64)
    with pytest.raises(RuntimeError, match="Integer division with addcdiv is no longer supported"):
        mt.addcdiv(f, i, i)
    with pytest.raises(TypeError, match=r"addcmul\(\): argument 'tensor1' \(position 2\) must be Tensor, not int"):
        mt.addcmul(f, 2, f)
    with pytest.raises(NotImplementedError, match="addcmul_cpu_out.*Bool"):
        mt.addcmul(f.bool(), f.bool(), f.bool())
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        i.addcmul_(f, f)


def test_addcmul_addcdiv_gradients_match_torch():
    a, b, c = arr("float64", (2, 1)), arr("float64", (3,), 1), nonzero_arr("float64", (1, 1, 3), 2)
    grads(lambda L, x, y, z: L.addcmul(x, y, z, value=0.5), a, b, c)
    grads(lambda L, x, y, z: L.addcdiv(x, y, z, value=-2), a, b, c + np.sign(c))


# ---------------------------------------------------------------------------
# comparison aliases, in-place comparisons and logical ops, fix, in-place function forms

COMPARISONS = ["greater", "greater_equal", "less", "less_equal", "not_equal", "gt", "ge", "lt", "le", "eq", "ne"]


@pytest.mark.parametrize("op", COMPARISONS)
def test_comparison_aliases_and_inplace_forms_match_torch(op):
    x, y = np.array([1.0, 2.0, 3.0, np.nan], np.float32), np.array([2.0, 2.0, 1.0, 0.0], np.float32)
    if op in ("greater", "greater_equal", "less", "less_equal", "not_equal"):
        compare(lambda L, a, b: getattr(L, op)(a, b), x, y, what=f"torch.{op}")
        compare(lambda L, a, b: getattr(L, op)(a, b, out=L.empty(4, dtype=L.bool)), x, y, what=f"torch.{op} out=")
    compare(lambda L, a, b: getattr(a, op)(b), x, y, what=f"Tensor.{op}")
    compare(lambda L, a, b: getattr(a, op + "_")(b), x, y, what=f"Tensor.{op}_ (keeps float32)")
    compare(lambda L, a: getattr(a, op + "_")(2.5), np.array([1, 2, 3], np.int64), what=f"Tensor.{op}_ int64")
    compare(lambda L, a, b: getattr(a, op + "_")(b), np.array([True, False]), np.array([2, 0]), what=f"{op}_ bool")
    compare(lambda L, a, b: getattr(a, op + "_")(b), x[:2], y.reshape(2, 2), what=f"{op}_ broadcast refused")


@pytest.mark.parametrize("op", ["logical_and", "logical_or", "logical_xor"])
def test_inplace_logical_ops_match_torch(op):
    x, y = np.array([1.5, 0.0, -2.0, 0.0], np.float32), np.array([1, 1, 0, 0], np.int64)
    compare(lambda L, a, b: getattr(a, op + "_")(b), x, y, what=f"{op}_ float")
    compare(lambda L, a, b: getattr(a, op + "_")(b), y, x, what=f"{op}_ int64")
    compare(lambda L, a, b: getattr(a, op + "_")(b), y.astype(np.bool_), x, what=f"{op}_ bool")


def test_inplace_comparison_on_requires_grad_leaf_is_refused_as_torch():
    compare(lambda L: L.ones(2, requires_grad=True).gt_(0))


@pytest.mark.parametrize("op", ["eq_", "lt_", "greater_equal_"])
def test_inplace_comparison_keeps_self_in_the_graph_with_zero_gradient_as_torch(op):
    def run(L):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        getattr(y, op)(2.0)
        (y * 3).sum().backward()
        return [y.requires_grad, y, x.grad]
    compare(run)


@pytest.mark.parametrize("op", ["fix", "tan", "exp", "sqrt", "clamp", "neg", "sigmoid", "trunc", "round", "log1p",
                                "floor", "abs", "reciprocal", "square", "relu"])
def test_inplace_function_forms_match_torch(op):
    x = np.array([0.3, 1.7, 2.5, 0.9], np.float32)
    args = (0.5, 2.0) if op == "clamp" else ()
    compare(lambda L, a: getattr(L, op + "_")(a, *args), x, what=f"torch.{op}_")
    compare(lambda L, a: getattr(a, op + "_")(*args), x, what=f"Tensor.{op}_")


def test_inplace_function_form_writes_its_argument():
    x = mt.tensor([0.0, 1.0])
    out = mt.exp_(x)
    assert out is x and np.allclose(x.numpy(), [1.0, np.e])


def test_fix_matches_torch():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.7, np.inf, np.nan], np.float32)
    compare(lambda L, a: L.fix(a), x)
    compare(lambda L, a: a.fix(), x)
    compare(lambda L, a: L.fix(a, out=L.empty(8)), x)
    compare(lambda L, a: L.fix(a), np.array([-3, 2], np.int64))


# ---------------------------------------------------------------------------
# frexp, hardshrink, prelu


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_frexp_matches_torch(dtype):
    tiny = np.finfo(dtype).smallest_subnormal
    x = np.array([8.0, 0.3, -0.0, 0.0, -5.5, 1.0, 0.5, 0.999, 1024.0, np.inf, -np.inf, np.nan, tiny,
                  np.finfo(dtype).max, np.finfo(dtype).tiny], dtype)
    compare(lambda L, a: L.frexp(a), x)
    compare(lambda L, a: a.frexp(), x)
    compare(lambda L, a: L.frexp(a).exponent, x)
    compare(lambda L, a: L.frexp(a, out=(L.empty(15, dtype=a.dtype), L.empty(15, dtype=L.int32))), x)


def test_frexp_refuses_integers_and_has_torch_gradient():
    compare(lambda L, a: L.frexp(a), np.array([1, 2], np.int64))
    with pytest.raises(RuntimeError, match="frexp.*only supports floating-point dtypes"):
        mt.frexp(mt.tensor([1, 2]))
    assert type(mt.frexp(mt.ones(1))).__name__ == "frexp"
    grads(lambda L, a: L.frexp(a).mantissa, np.array([8.0, 0.3, -5.5, 3.0]), second_order=False)


def test_hardshrink_and_prelu_match_torch():
    x = np.array([-1.0, -0.5, -0.3, 0.0, 0.3, 0.5, 0.6, 2.0], np.float32)
    compare(lambda L, a: L.hardshrink(a), x)
    compare(lambda L, a: a.hardshrink(0.3), x)
    compare(lambda L, a: L.hardshrink(a, out=L.empty(8)), x)
    compare(lambda L, a: L.hardshrink(a), np.array([1, 2], np.int64))
    assert F.hardshrink is mt.hardshrink and F.prelu is mt.prelu
    xs = arr("float32", (2, 3, 4))
    compare(lambda L, a, w: a.prelu(w), xs, np.array([0.1, 0.2, 0.3], np.float32))
    compare(lambda L, a, w: L.prelu(a, w), xs, np.array([0.1, 0.2], np.float32))
    grads(lambda L, a: L.hardshrink(a, 0.4), np.array([-1.0, -0.2, 0.1, 0.6, 2.0]))
    grads(lambda L, a, w: L.prelu(a, w), arr("float64", (2, 3, 2)), np.array([0.1, 0.2, 0.3]))


# ---------------------------------------------------------------------------
# shape and selection helpers


def test_flips_ravel_msort_diagflat_argwhere_match_torch():
    x = arr("float32", (3, 4))
    compare(lambda L, a: L.fliplr(a), x)
    compare(lambda L, a: a.flipud(), x)
    compare(lambda L, a: L.fliplr(a), x[0])
    compare(lambda L, a: L.flipud(a), np.array(2.0, np.float32))
    compare(lambda L, a: L.ravel(a.t()), x)
    compare(lambda L, a: a.ravel(), arr("int64", (2, 2, 2)))
    compare(lambda L, a: L.msort(a), x)
    compare(lambda L, a: a.msort(), np.array(1.5, np.float32))
    compare(lambda L, a: L.msort(a, out=L.empty(3, 4)), x)
    for offset in (0, 1, -2):
        compare(lambda L, a: L.diagflat(a, offset), x[:2, :2])
    compare(lambda L, a: a.diagflat(), np.array(3.0, np.float32))
    compare(lambda L, a: L.argwhere(a), np.array([[0, 1.5], [2, 0]], np.float32))
    compare(lambda L, a: a.argwhere(), np.array(3.0, np.float32))
    compare(lambda L, a: L.argwhere(a), np.zeros((2, 0), np.float32))
    grads(lambda L, a: L.fliplr(a) * L.flipud(a), arr("float64", (2, 3)))
    grads(lambda L, a: L.diagflat(a, 1), arr("float64", (2, 2)))
    grads(lambda L, a: L.msort(a).ravel(), arr("float64", (3, 2)), second_order=False)


def test_split_with_sizes_narrow_copy_sum_to_size_match_torch():
    x = arr("float32", (2, 5))
    compare(lambda L, a: L.split_with_sizes(a, [1, 3, 1], 1), x)
    compare(lambda L, a: a.split_with_sizes([2, 0], dim=0), x)
    compare(lambda L, a: L.split_with_sizes(a, [1, 1], 1), x)
    compare(lambda L, a: L.split_with_sizes(a, [3, -1, 3], 1), x)
    compare(lambda L, a: L.narrow_copy(a, 1, 1, 3), x)
    compare(lambda L, a: a.narrow_copy(1, -2, 2), x)
    compare(lambda L, a: L.narrow_copy(a, 1, 1, 3, out=L.empty(2, 3)), x)
    for size in ((5,), (1, 5), (2, 1), (1, 1), ((2, 5),), (4,), (1, 2, 5), ()):
        compare(lambda L, a: a.sum_to_size(*size), x, what=f"sum_to_size{size}")
    with pytest.raises(RuntimeError, match=r"split_with_sizes expects split_sizes to sum exactly to 5"):
        mt.split_with_sizes(mt.ones(2, 5), [1, 1], 1)
    with pytest.raises(RuntimeError, match=r"size \{\[4\]\} is not expandable to size \{\[2, 5\]\}"):
        mt.ones(2, 5).sum_to_size(4)
    grads(lambda L, a: a.sum_to_size(1, 5), arr("float64", (3, 5)))
    grads(lambda L, a: L.split_with_sizes(a, [1, 2], 1)[1], arr("float64", (2, 3)))
    grads(lambda L, a: L.narrow_copy(a, 0, 1, 1), arr("float64", (2, 3)))


def test_predicates_and_device_queries_match_torch():
    compare(lambda L: [L.is_nonzero(L.tensor([1.5])), L.is_nonzero(L.tensor(0)), L.tensor([[True]]).is_nonzero()])
    compare(lambda L: L.is_nonzero(L.tensor([1, 2])))
    compare(lambda L: L.is_nonzero(L.tensor([])))
    compare(lambda L: [L.is_same_size(L.ones(2, 3), L.zeros(2, 3)), L.ones(2, 3).is_same_size(L.ones(3, 2))])
    compare(lambda L: [L.is_signed(L.ones(1, dtype=d)) for d in (L.bool, L.uint8, L.int8, L.int64, L.float16,
                                                                 L.float32, L.complex64)])
    compare(lambda L: [L.ones(2).get_device(), L.get_device(L.ones(2)), L.ones(2).is_cpu,
                       L.empty(2, device="meta").is_cpu, L.empty(2, device="meta").get_device()])
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        mt.is_nonzero(mt.ones(2))


def test_index_copy_matches_torch():
    x, src = arr("float32", (4, 3)), arr("float32", (2, 3), 1)
    idx = np.array([3, 0])
    compare(lambda L, a, i, s: L.index_copy(a, 0, i, s), x, idx, src)
    compare(lambda L, a, i, s: a.index_copy_(1, i, s), x, np.array([2, 0]), arr("float32", (4, 2), 2))
    compare(lambda L, a, i, s: a.index_copy(-2, i, s), arr("int64", (4, 3)), idx, arr("int64", (2, 3), 1))
    compare(lambda L, a, i, s: a.index_copy(0, i, s), arr("bool", (4, 3)), idx, arr("bool", (2, 3), 1))
    # torch's refusals: index dtype, count, source dtype, bounds, slice shapes, index rank
    compare(lambda L, a, i, s: L.index_copy(a, 0, i, s), x, idx.astype(np.int32), src)
    compare(lambda L, a, i, s: L.index_copy(a, 0, i, s), x, np.array([1, 2, 3]), src)
    compare(lambda L, a, i, s: L.index_copy(a, 0, i, s), x, idx, src.astype(np.float64))
    compare(lambda L, a, i, s: L.index_copy(a, 0, i, s), x, np.array([1, 4]), src)
    compare(lambda L, a, i, s: L.index_copy(a, 0, i, s), x, idx, arr("float32", (2, 2)))
    compare(lambda L, a, i, s: L.index_copy(a, 0, i, s), x, idx.reshape(1, 2), src)
    with pytest.raises(RuntimeError, match="Expected a long tensor for index"):
        mt.zeros(3).index_copy(0, mt.tensor([0], dtype=mt.int32), mt.ones(1))
    grads(lambda L, a, s: L.index_copy(a, 0, L.tensor([3, 0]), s), arr("float64", (4, 3)), arr("float64", (2, 3)))


def test_fill_diagonal_matches_torch():
    compare(lambda L: L.zeros(3, 5).fill_diagonal_(2.5))
    compare(lambda L: L.zeros(5, 3).fill_diagonal_(1))
    compare(lambda L: L.zeros(7, 3).fill_diagonal_(1, wrap=True))
    compare(lambda L: L.zeros(7, 3).fill_diagonal_(1, wrap=False))
    compare(lambda L: L.zeros(3, 3, 3).fill_diagonal_(-1))
    compare(lambda L: L.zeros(3, 5, dtype=L.int64).fill_diagonal_(2.7))
    compare(lambda L: L.zeros(3).fill_diagonal_(1))
    compare(lambda L: L.zeros(3, 3, 2).fill_diagonal_(1))
    compare(lambda L: L.zeros(3, 3, requires_grad=True).fill_diagonal_(1))
    with pytest.raises(RuntimeError, match="all dimensions of input must be of equal length"):
        mt.zeros(3, 3, 2).fill_diagonal_(1)
    grads(lambda L, a: (a * 2).fill_diagonal_(0.5), arr("float64", (3, 4)))


# ---------------------------------------------------------------------------
# dist, renorm, cov, corrcoef, pdist


def test_dist_matches_torch():
    x, y = arr("float32", (2, 3)), arr("float32", (3,), 1)
    for p in (2, 1, 0, 3.5, float("inf"), float("-inf")):
        compare(lambda L, a, b: L.dist(a, b, p), x, y, what=f"dist p={p}")
    compare(lambda L, a, b: a.dist(b), x, y.astype(np.float64))
    compare(lambda L, a, b: L.dist(a, b), np.array([1, 2]), np.array([3, 4]))
    grads(lambda L, a, b: L.dist(a, b, 3), arr("float64", (2, 3)), arr("float64", (3,), 1))


def test_renorm_matches_torch():
    x = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    for p, dim, maxnorm in ((2, 0, 5), (1, 1, 6), (float("inf"), 1, 3), (3, -1, 4)):
        compare(lambda L, a: L.renorm(a, p, dim, maxnorm), x, what=f"renorm({p}, {dim}, {maxnorm})")
    compare(lambda L, a: a.renorm_(2, 0, 5), x)
    compare(lambda L, a: L.renorm(a, 2, 0, 5, out=L.empty(3, 4)), x)
    compare(lambda L, a: L.renorm(a, 0, 0, 5), x)
    compare(lambda L, a: L.renorm(a, 2, 0, -1), x)
    compare(lambda L, a: L.renorm(a, 2, 0, 1), x.astype(np.int64))
    compare(lambda L, a: L.renorm(a, 2, 0, 1), x[0])
    compare(lambda L, a: L.renorm(a, 2, 2, 1), x)
    with pytest.raises(RuntimeError, match="renorm: non-positive-norm not supported"):
        mt.renorm(mt.ones(2, 2), 0, 0, 1)
    grads(lambda L, a: L.renorm(a, 2, 0, 5), x.astype(np.float64))


def test_cov_and_corrcoef_match_torch():
    x = arr("float32", (3, 5))
    compare(lambda L, a: L.cov(a), x)
    compare(lambda L, a: a.cov(correction=0), x)
    compare(lambda L, a, f, w: L.cov(a, fweights=f, aweights=w), x, np.array([1, 2, 1, 3, 1]),
            np.array([0.5, 1.0, 2.0, 0.1, 1.0], np.float32))
    compare(lambda L, a, f: L.cov(a, correction=2, fweights=f), x, np.array([1, 2, 1, 3, 1]))
    compare(lambda L, a: L.cov(a), np.array([1, 2, 4]))
    compare(lambda L, a: L.cov(a), x[0].astype(np.float64))
    compare(lambda L, a: L.corrcoef(a), x)
    compare(lambda L, a: a.corrcoef(), np.array([1, 2, 4]))
    compare(lambda L, a: L.corrcoef(a), np.array([[1.0, 2, 3], [2, 2, 2]], np.float32))
    # refusals: rank, bool, weight dtypes, counts and signs
    compare(lambda L, a: L.cov(a), arr("float32", (2, 2, 2)))
    compare(lambda L, a: L.cov(a), arr("bool", (2, 3)))
    compare(lambda L, a, f: L.cov(a, fweights=f), x, np.array([1.0, 2, 1, 3, 1], np.float32))
    compare(lambda L, a, f: L.cov(a, fweights=f), x, np.array([1, 2, 1]))
    compare(lambda L, a, f: L.cov(a, fweights=f), x, np.array([1, -2, 1, 3, 1]))
    compare(lambda L, a, w: L.cov(a, aweights=w), x, np.array([1, 2, 1, 3, 1]))
    compare(lambda L, a: L.corrcoef(a), arr("float32", (2, 2, 2)))
    with pytest.raises(RuntimeError, match="cov\\(\\): expected input to have two or fewer dimensions"):
        mt.cov(mt.ones(2, 2, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(lambda L, a: L.cov(a, correction=5), x)
    grads(lambda L, a: L.cov(a), x.astype(np.float64))
    grads(lambda L, a, w: L.cov(a, aweights=w), x.astype(np.float64), np.array([0.5, 1.0, 2.0, 0.1, 1.0]))
    grads(lambda L, a: L.corrcoef(a), x.astype(np.float64))


def test_pdist_matches_torch():
    x = np.array([[0.0, 1.0], [0.0, 1.0], [2.0, 3.5], [-1.0, 0.5]], np.float32)
    for p in (2, 1, 0, 3, float("inf")):
        compare(lambda L, a: L.pdist(a, p), x, what=f"pdist p={p}")
    compare(lambda L, a: F.pdist(a) if L is mt else L.nn.functional.pdist(a), x)
    compare(lambda L, a: L.pdist(a), x[:1])
    compare(lambda L, a: L.pdist(a), x[0])
    compare(lambda L, a: L.pdist(a, -1), x)
    compare(lambda L, a: L.pdist(a), x.astype(np.int64))
    x64 = np.array([[0.0, 1.0], [0.0, 1.0], [2.0, 3.5], [-1.0, 0.25]])
    for p in (2, 1, 3):  # equal rows (distance 0) get a zero gradient, as torch's kernel gives
        grads(lambda L, a: L.pdist(a, p), x64, second_order=False)


# ---------------------------------------------------------------------------
# nn ops at the top level


def test_top_level_nn_functions_are_functionals_where_torch_says_so():
    for name in ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
                 "bilinear", "cosine_similarity", "pairwise_distance", "pdist", "pixel_shuffle", "pixel_unshuffle",
                 "prelu", "avg_pool1d", "adaptive_avg_pool1d", "celu_", "hardshrink"):
        assert getattr(mt, name) is getattr(F, name), name


def test_top_level_nn_functions_match_torch():
    x = arr("float32", (2, 3, 6))
    w = arr("float32", (4, 3, 2), 1)
    compare(lambda L, a, k: L.conv1d(a, k, None, 2, 1), x, w)
    compare(lambda L, a, k: L.conv_transpose1d(a, k), x, arr("float32", (3, 2, 2), 1))
    compare(lambda L, a, k: L.conv2d(a.unsqueeze(0), k), x, arr("float32", (1, 2, 2, 2), 1))
    compare(lambda L, a: L.layer_norm(a, [6]), x)
    compare(lambda L, a, g, b: L.layer_norm(a, (3, 6), g, b, 1e-3, False), x, arr("float32", (3, 6), 1),
            arr("float32", (3, 6), 2))
    compare(lambda L, a: L.group_norm(a, 3), x)
    compare(lambda L, a, g, b: L.group_norm(a, 1, g, b, 1e-4, True), x, arr("float32", (3,), 1),
            arr("float32", (3,), 2))
    compare(lambda L, a: L.batch_norm(a, None, None, None, None, True, 0.1, 1e-5, False), x)
    compare(lambda L, a, g, b, m, v: L.batch_norm(a, g, b, m, v, False, 0.1, 1e-5, True), x,
            arr("float32", (3,), 1), arr("float32", (3,), 2), arr("float32", (3,), 3), np.ones(3, np.float32) * 2)
    compare(lambda L, a, m, v: [L.batch_norm(a, None, None, m, v, True, 0.3, 1e-5, False), m, v], x,
            np.zeros(3, np.float32), np.ones(3, np.float32))
    compare(lambda L, a: L.instance_norm(a, None, None, None, None, True, 0.1, 1e-5, False), x)
    compare(lambda L, wt, i: L.embedding(wt, i), arr("float32", (5, 3)), np.array([[0, 4], [2, 2]]))
    compare(lambda L, wt, i: L.embedding(wt, i, -1), arr("float32", (5, 3)), np.array([0, 4]))
    compare(lambda L, a: L.dropout(a, 0.5, False), x)
    compare(lambda L, a: L.dropout(a, 0.0, True), x)
    compare(lambda L, a: L.dropout(a, 1.0, True), x)
    compare(lambda L, a: L.dropout(a, 1.5, True), x)
    compare(lambda L, a: L.dropout_(a, 1.0, True), x)
    compare(lambda L, a: L.alpha_dropout(a, 0.5, False), x)
    compare(lambda L, a: L.feature_alpha_dropout(a, 0.2, False), x)
    compare(lambda L, a: L.alpha_dropout_(a, 0.0, True), x)
    compare(lambda L, a: L.feature_alpha_dropout_(a, 0.0, True), x)
    compare(lambda L, a: L.celu(a, 0.5), x)
    compare(lambda L, a: L.celu_(a, 2.0), x)
    compare(lambda L, a, b: L.bilinear(a, b, L.ones(2, 6, 6)), x[0], x[1])
    compare(lambda L, a, b: L.cosine_similarity(a, b), x[0], x[1])
    compare(lambda L, a, b: L.pairwise_distance(a, b, 3), x[0], x[1])
    compare(lambda L, a: L.pixel_shuffle(a, 2), arr("float32", (1, 8, 2, 3)))
    compare(lambda L, a: L.pixel_unshuffle(a, 2), arr("float32", (1, 2, 4, 6)))
    compare(lambda L, a: L.max_pool1d(a, 2), x)
    compare(lambda L, a: L.max_pool1d(a, 3, 1, 1, 1, True), x)
    compare(lambda L, a: L.max_pool2d(a, (2, 2)), x)
    compare(lambda L, a: L.max_pool3d(a.unsqueeze(0), 1), x)
    compare(lambda L, a: L.avg_pool1d(a, 2), x)
    compare(lambda L, a: L.adaptive_avg_pool1d(a, 4), x)
    compare(lambda L, a: L.adaptive_max_pool1d(a, 4), x)


def test_top_level_losses_take_an_integer_reduction_that_defaults_to_none():
    x, y = arr("float32", (2, 4)), arr("float32", (2, 4), 1, 0.0, 1.0)
    t = np.array([1.0, -1.0], np.float32)
    logp = np.log(np.full((2, 4), 0.25, np.float32))
    for r in ((), (0,), (1,), (2,), (5,)):
        compare(lambda L, a, b: L.kl_div(a, b, *r), logp, y, what=f"kl_div{r}")
        compare(lambda L, a, b, c: L.margin_ranking_loss(a, b, c.reshape(2, 1), 0.1, *r), x, y, t)
        compare(lambda L, a, c: L.hinge_embedding_loss(a, c.reshape(2, 1), 0.5, *r), x, t)
        compare(lambda L, a, b, c: L.cosine_embedding_loss(a, b, c, 0.2, *r), x, y, t)
        compare(lambda L, a, b: L.binary_cross_entropy_with_logits(a, b, None, None, *r), x, y)
    compare(lambda L, a, b: L.kl_div(a, b, 2, log_target=True), logp, np.log(y + 0.1))
    compare(lambda L, a, b: L.kl_div(a, b, "mean"), logp, y)
    compare(lambda L, a, b, w, pw: L.binary_cross_entropy_with_logits(a, b, w, pw, 1), x, y,
            arr("float32", (4,), 2, 0.1, 1.0), arr("float32", (4,), 3, 0.5, 2.0))
    compare(lambda L, a, b: L.poisson_nll_loss(a, b, True, False, 1e-8, 1), x, y * 3)
    compare(lambda L, a, b: L.poisson_nll_loss(a, b, False, True, 1e-8, 0), np.abs(x) + 0.1, y * 3)
    compare(lambda L, a, b: L.poisson_nll_loss(a, b), x, y)
    with pytest.raises(TypeError, match=r"kl_div\(\): argument 'reduction' \(position 3\) must be int, not str"):
        mt.kl_div(mt.ones(2), mt.ones(2), "mean")


def test_top_level_dropout_signatures_and_messages():
    with pytest.raises(TypeError, match="train"):
        mt.dropout(mt.ones(2), 0.5)
    with pytest.raises(RuntimeError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        mt.dropout(mt.ones(2), 1.5, True)
    x = mt.ones(1000)
    kept = mt.dropout(x, 0.5, True)
    assert set(np.unique(kept.numpy())) <= {0.0, 2.0} and 300 < int((kept != 0).sum()) < 700


def test_top_level_nn_function_gradients_match_torch():
    x = arr("float64", (2, 3, 4))
    grads(lambda L, a, g, b: L.layer_norm(a, [4], g, b), x, arr("float64", (4,), 1), arr("float64", (4,), 2))
    grads(lambda L, a: L.group_norm(a, 3), x)
    grads(lambda L, a, g, b: L.batch_norm(a, g, b, None, None, True, 0.1, 1e-5, False), x,
          arr("float64", (3,), 1), arr("float64", (3,), 2))
    grads(lambda L, wt: L.embedding(wt, L.tensor([[0, 3], [3, 1]]), 1), arr("float64", (4, 2)), second_order=False)
    grads(lambda L, a, b: L.kl_div(a, b, 1), np.log(np.full((2, 3), 0.3)), arr("float64", (2, 3), 1, 0.1, 1.0))
    grads(lambda L, a, b: L.binary_cross_entropy_with_logits(a, b, None, None, 2), arr("float64", (2, 3)),
          arr("float64", (2, 3), 1, 0.0, 1.0))
    grads(lambda L, a: L.celu(a, 0.5), arr("float64", (5,)))  # (an alpha exact in float32: torch rounds it there)
    grads(lambda L, a: L.adaptive_max_pool1d(a, 2)[0], arr("float64", (1, 2, 4)), second_order=False)


# ---------------------------------------------------------------------------
# window functions

WINDOWS = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("length", [0, 1, 2, 3, 8, 11])
def test_windows_match_torch(name, length):
    compare(lambda L: getattr(L, name)(length), what=f"{name}({length})")
    compare(lambda L: getattr(L, name)(length, False), what=f"{name}({length}, periodic=False)")
    compare(lambda L: getattr(L, name)(length, periodic=True, dtype=L.float64), what=f"{name}({length}) float64")


@pytest.mark.parametrize("name", WINDOWS)
def test_window_keywords_and_refusals_match_torch(name):
    compare(lambda L: getattr(L, name)(6, requires_grad=True).requires_grad)
    compare(lambda L: getattr(L, name)(6, dtype=L.float16))
    compare(lambda L: getattr(L, name)(-1))
    compare(lambda L: getattr(L, name)(4, dtype=L.int64))
    compare(lambda L: getattr(L, name)(4.0))
    with pytest.raises(RuntimeError, match=f"{name} expects floating point dtypes"):
        getattr(mt, name)(4, dtype=mt.int64)
    with pytest.raises(RuntimeError, match=f"{name} requires non-negative window_length, got window_length=-1"):
        getattr(mt, name)(-1)
    assert getattr(mt, name)(3, device="meta").shape == (3,)


def test_window_parameters_match_torch():
    compare(lambda L: L.hamming_window(7, False, 0.6, 0.3))
    compare(lambda L: L.hamming_window(7, True, 0.5))
    compare(lambda L: L.kaiser_window(9, False, 5.0))
    compare(lambda L: L.kaiser_window(9, True, 0.5, dtype=L.float64))


# ---------------------------------------------------------------------------
# meta tensors: shapes and dtypes without data

META_CASES = {
    "addcmul": lambda L, m: L.addcmul(m, m, m), "addcdiv": lambda L, m: L.addcdiv(m, m, m),
    "fliplr": lambda L, m: L.fliplr(m), "frexp": lambda L, m: L.frexp(m)[1], "dist": lambda L, m: L.dist(m, m),
    "renorm": lambda L, m: L.renorm(m, 2, 0, 1), "pdist": lambda L, m: L.pdist(m),
    "index_copy": lambda L, m: m.index_copy(0, L.tensor([1], device="meta"), L.empty(1, 4, device="meta")),
    "fill_diagonal_": lambda L, m: m.fill_diagonal_(1), "hann_window": lambda L, m: L.hann_window(4, device="meta"),
    "layer_norm": lambda L, m: L.layer_norm(m, [4]), "sum_to_size": lambda L, m: m.sum_to_size(1, 4),
    "gt_": lambda L, m: m.gt_(0),
}


@pytest.mark.parametrize("op", sorted(META_CASES))
def test_new_ops_on_meta_give_torch_shapes_and_dtypes(op):
    def run(L):
        r = META_CASES[op](L, L.empty(3, 4, device="meta"))
        return [tuple(r.shape), r.dtype, str(r.device)]
    compare(run)


# ---------------------------------------------------------------------------
# review mends (values recorded from PyTorch 2.13)


def test_index_copy_copies_slices_keeping_the_last_duplicate_and_signed_zeros():
    assert mt.index_copy(mt.zeros(3), 0, mt.tensor([0, 0]), mt.tensor([1.0, 2.0])).tolist() == [2, 0, 0]
    got = mt.index_copy(mt.ones(3), 0, mt.tensor([1]), mt.tensor([-0.0]))
    assert math.copysign(1, got[1].item()) == -1
    assert mt.index_copy(mt.tensor(1.0), 0, mt.tensor([0]), mt.tensor(5.0)).item() == 5.0
    x = mt.zeros(2, 3, requires_grad=True)
    s = mt.ones(2, 2, requires_grad=True)
    y = mt.index_copy(x, 1, mt.tensor([2, 0]), s)
    assert y.tolist() == [[1, 0, 1], [1, 0, 1]]
    (y * mt.arange(6.0).reshape(2, 3)).sum().backward()
    assert x.grad.tolist() == [[0, 1, 0], [0, 4, 0]] and s.grad.tolist() == [[2, 0], [5, 3]]


def test_prelu_channels_shapes_and_dtypes_as_pytorch():
    assert mt.prelu(mt.tensor(1.5), mt.tensor([0.1])).shape == ()
    assert mt.prelu(mt.tensor([-1.0, 2.0]), mt.tensor([0.25])).tolist() == [-0.25, 2.0]
    with pytest.raises(RuntimeError, match="Found parameter numbers = 4 and channel size = 1"):
        mt.prelu(mt.randn(4), mt.randn(4))  # (a 1-D input is one channel)
    with pytest.raises(RuntimeError, match="prelu: Type promoting not supported. Got Float and Double"):
        mt.prelu(mt.randn(2, 3), mt.randn(3, dtype=mt.float64))


def test_hardshrink_zeros_are_positive_and_nan_passes():
    got = F.hardshrink(mt.tensor([-0.5, 0.5, 0.2, -0.7, float("nan")]), 0.5).tolist()
    assert got[:3] == [0.0, 0.0, 0.0] and all(math.copysign(1, v) == 1 for v in got[:3])
    assert got[3] == pytest.approx(-0.7) and math.isnan(got[4])


def test_kaiser_window_in_half_precision_is_rounded_once_from_float32():
    assert mt.kaiser_window(7, dtype=mt.float16).tolist() == [
        5.27501106262207e-05, 0.03277587890625, 0.330810546875, 0.888671875, 0.888671875, 0.330810546875,
        0.03277587890625]
    assert mt.kaiser_window(7, periodic=False, dtype=mt.bfloat16).tolist() == [
        5.269050598144531e-05, 0.0546875, 0.51953125, 1.0, 0.51953125, 0.0546875, 5.269050598144531e-05]


def test_inplace_comparison_nodes_and_a_tensor_other_requiring_grad_as_pytorch():
    # PyTorch 2.13: y.lt_(0.5) -> LtBackward0; z.lt_(x) with only x requiring grad -> z requires grad, LtBackward1,
    # and x's gradient through it is zero (also where x holds inf: no nan from 0 * inf)
    x = mt.tensor([0.25, float("inf"), -1.0], requires_grad=True)
    y = x * 1
    y.lt_(0.5)
    assert y.grad_fn.name() == "LtBackward0" and y.tolist() == [1.0, 0.0, 1.0]
    z = mt.zeros(3)
    z.ge_(x)
    assert z.requires_grad and z.grad_fn.name() == "GeBackward1" and z.tolist() == [0.0, 0.0, 1.0]
    z.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
    assert mt.zeros(3).eq_(mt.ones(3)).grad_fn is None  # (nothing requires grad)
