"""torch.fn and Tensor.fn under torch names (dim/keepdim), checked against NumPy, with torch's errors."""
import numpy as np
import pytest

import mindtorch_v2 as torch

X = np.array([[0.5, -1.5, 2.0, 3.0], [4.0, -0.25, 1.0, -2.0], [0.0, 2.5, -3.0, 1.5]])


def tx(a=X, dtype=torch.float64):
    return torch.tensor(a, dtype=dtype)


def close(t, expected, rtol=1e-7):
    np.testing.assert_allclose(np.asarray(t.detach()), np.asarray(expected, dtype=np.float64), rtol=rtol, atol=1e-12)


def both(name, *args, **kwargs):
    """torch.name(x, ...) and x.name(...): the two must agree; returns the function form."""
    x = tx()
    f = getattr(torch, name)(x, *args, **kwargs)
    m = getattr(x, name)(*args, **kwargs)
    if isinstance(f, tuple):
        for a, b in zip(f, m):
            assert a.tolist() == b.tolist()
    else:
        assert f.tolist() == m.tolist() and f.dtype is m.dtype
    return f


# ---------------------------------------------------------------------------
# elementwise


def test_add_sub_with_alpha():
    close(both("add", 2.0, alpha=3), X + 6)
    close(torch.add(tx(), tx(), alpha=-1), np.zeros_like(X))
    close(both("sub", 1.0, alpha=2), X - 2)
    close(both("sub", tx()), np.zeros_like(X))
    assert torch.add(torch.tensor([1, 2]), 3, alpha=2).tolist() == [7, 8]
    close(torch.rsub(tx(), 1.0), 1 - X)


def test_mul_div_and_rounding_modes():
    close(both("mul", 3.0), X * 3)
    close(both("div", 2.0), X / 2)
    a = torch.tensor([-7, 7, -8, 5])
    assert torch.div(a, 2).tolist() == [-3.5, 3.5, -4.0, 2.5] and torch.div(a, 2).dtype is torch.float32
    fl = torch.div(a, 2, rounding_mode="floor")
    tr = torch.div(a, 2, rounding_mode="trunc")
    assert fl.tolist() == [-4, 3, -4, 2] and fl.dtype is torch.int64
    assert tr.tolist() == [-3, 3, -4, 2] and tr.dtype is torch.int64
    f = torch.tensor([-7.0, 7.0])
    assert torch.div(f, 2, rounding_mode="trunc").tolist() == [-3.0, 3.0]
    assert f.div(2, rounding_mode="floor").tolist() == [-4.0, 3.0]
    with pytest.raises(RuntimeError, match="div expected rounding_mode to be one of None, .trunc., or .floor."):
        torch.div(a, 2, rounding_mode="bad")


def test_unary_math_matches_numpy():
    p = np.abs(X) + 0.1
    t = tx(p)
    for name, ref in [("exp", np.exp), ("log", np.log), ("sqrt", np.sqrt), ("sin", np.sin), ("cos", np.cos),
                      ("tanh", np.tanh), ("abs", np.abs), ("neg", np.negative), ("reciprocal", np.reciprocal),
                      ("log1p", np.log1p), ("expm1", np.expm1), ("rsqrt", lambda a: 1 / np.sqrt(a)),
                      ("sigmoid", lambda a: 1 / (1 + np.exp(-a))), ("log2", np.log2), ("log10", np.log10),
                      ("square", np.square)]:
        close(getattr(torch, name)(t), ref(p))
        close(getattr(t, name)(), ref(p))
    close(torch.relu(tx()), np.maximum(X, 0))
    close(tx().floor(), np.floor(X))
    close(tx().ceil(), np.ceil(X))
    close(tx().round(), np.round(X))
    close(torch.trunc(tx()), np.trunc(X))
    close(torch.sign(tx()), np.sign(X))
    close(torch.pow(tx(), 2), X ** 2)
    close(torch.maximum(tx(), tx(-X)), np.maximum(X, -X))
    close(torch.fmod(tx(), 1.5), np.fmod(X, 1.5))
    close(torch.remainder(tx(), 1.5), np.remainder(X, 1.5))


def test_clamp_variants():
    close(both("clamp", -1.0, 2.0), np.clip(X, -1, 2))
    close(torch.clamp(tx(), min=0.0), np.maximum(X, 0))
    close(tx().clamp(max=1.0), np.minimum(X, 1))
    close(tx().clamp(min=tx(np.zeros(4))), np.maximum(X, 0))
    close(torch.clip(tx(), -1, 1), np.clip(X, -1, 1))
    c = torch.clamp(torch.tensor([1, 5, 9]), 2, 6)
    assert c.tolist() == [2, 5, 6] and c.dtype is torch.int64
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max' must not be None"):
        torch.clamp(tx())


def test_where_and_masked_fill():
    cond = X > 1
    close(torch.where(torch.tensor(cond), tx(), 0.0), np.where(cond, X, 0))
    close(torch.where(torch.tensor(cond), tx(), tx(-X)), np.where(cond, X, -X))
    assert torch.where(torch.tensor([True, False]), 1, 0).dtype is torch.int64
    rows, cols = torch.where(torch.tensor(cond))
    assert rows.tolist() == np.nonzero(cond)[0].tolist() and cols.tolist() == np.nonzero(cond)[1].tolist()
    close(both("masked_fill", torch.tensor(cond), -1.0), np.where(cond, -1, X))
    close(tx().masked_fill(torch.tensor([True, False, False, True]), 9.0), np.where([1, 0, 0, 1], 9, X))
    close(tx().masked_fill(torch.tensor(cond), torch.tensor(7.0)), np.where(cond, 7, X))
    with pytest.raises(RuntimeError, match="only supports boolean masks"):
        tx().masked_fill(torch.tensor(cond.astype(np.int64)), 0.0)


def test_isclose_allclose_equal():
    a = tx()
    b = tx(X + 1e-9)
    assert torch.isclose(a, b).all().item() and torch.allclose(a, b) and a.allclose(b)
    assert not torch.allclose(a, tx(X + 1e-3))
    assert torch.isclose(a, tx(X + 1e-3), atol=1e-2).all().item()
    nan = torch.tensor([float("nan"), 1.0])
    assert torch.isclose(nan, nan).tolist() == [False, True]
    assert torch.isclose(nan, nan, equal_nan=True).tolist() == [True, True]
    assert torch.equal(a, a.clone()) and not torch.equal(a, b) and not torch.equal(a, a[:2])
    assert isinstance(torch.equal(a, a), bool) and isinstance(torch.allclose(a, a), bool)


# ---------------------------------------------------------------------------
# reductions


@pytest.mark.parametrize("dim, keepdim", [(None, False), (0, False), (1, True), (-1, False), ((0, 1), False),
                                          ([0, 1], True)])
def test_sum_mean_with_dim_keepdim(dim, keepdim):
    axis = tuple(dim) if isinstance(dim, list) else dim
    if dim is None:
        close(torch.sum(tx()), X.sum())
        close(tx().mean(), X.mean())
        return
    close(both("sum", dim, keepdim), X.sum(axis=axis, keepdims=keepdim))
    close(torch.mean(tx(), dim=dim, keepdim=keepdim), X.mean(axis=axis, keepdims=keepdim))
    assert tx().sum(dim=dim, keepdim=keepdim).shape == X.sum(axis=axis, keepdims=keepdim).shape


def test_reduction_dtypes():
    i = torch.tensor([[1, 2], [3, 4]])
    assert i.sum().dtype is torch.int64 and i.sum().item() == 10
    assert torch.tensor([True, True, False]).sum().item() == 2
    assert i.sum(dtype=torch.float64).dtype is torch.float64
    assert i.float().mean().item() == 2.5
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype"):
        i.mean()
    assert i.prod().item() == 24


def test_var_std_are_unbiased_by_default():
    close(both("var"), X.var(ddof=1))
    close(both("std"), X.std(ddof=1))
    close(tx().var(1), X.var(axis=1, ddof=1))
    close(tx().var(1, unbiased=False), X.var(axis=1))
    close(tx().var(dim=0, correction=0), X.var(axis=0))
    close(tx().std(dim=0, keepdim=True), X.std(axis=0, ddof=1, keepdims=True))
    close(torch.var(tx(), 0, False), X.var(axis=0))


def test_max_min_with_dim_return_values_and_indices():
    r = both("max", 1)
    assert type(r).__name__ == "max" and r.values.tolist() == X.max(1).tolist()
    assert r.indices.tolist() == X.argmax(1).tolist() and r.indices.dtype is torch.int64
    values, indices = torch.min(tx(), dim=0, keepdim=True)
    assert values.shape == (1, 4) and indices.tolist() == [X.argmin(0).tolist()]
    assert tx().max(1)[0].tolist() == X.max(1).tolist()
    assert torch.max(tx()).item() == X.max() and tx().min().item() == X.min()
    close(torch.max(tx(), tx(-X)), np.maximum(X, -X))
    i = torch.tensor([[1, 5], [7, 2]])
    assert torch.max(i, 1).values.tolist() == [5, 7] and torch.max(i, 1).values.dtype is torch.int64
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified for input.numel\\(\\) == 0"):
        torch.zeros(0).max()


def test_amax_amin_argmax():
    close(both("amax", 1), X.max(1))
    close(tx().amax((0, 1)), X.max())
    close(tx().amax(dim=0, keepdim=True), X.max(0, keepdims=True))
    close(torch.amin(tx(), -1), X.min(-1))
    assert tx().argmax().item() == X.argmax() and tx().argmax(1).tolist() == X.argmax(1).tolist()
    assert tx().argmin(0, keepdim=True).shape == (1, 4)


def test_cumsum_all_any():
    close(both("cumsum", 1), X.cumsum(1))
    close(tx().cumsum(dim=0), X.cumsum(0))
    assert torch.cumsum(torch.tensor([1, 2, 3]), 0).tolist() == [1, 3, 6]
    assert torch.cumsum(torch.tensor([True, True]), 0).dtype is torch.int64
    b = tx() > 0
    assert b.all().item() is False and b.any().item() is True
    assert torch.all(b, 1).tolist() == (X > 0).all(1).tolist()
    assert b.any(dim=0, keepdim=True).tolist() == [(X > 0).any(0).tolist()]
    assert torch.all(tx()).dtype is torch.bool


def test_softmax_log_softmax_logsumexp_norm():
    e = np.exp(X - X.max(1, keepdims=True))
    sm = e / e.sum(1, keepdims=True)
    close(both("softmax", 1), sm)
    close(tx().softmax(dim=-1), sm)
    close(torch.log_softmax(tx(), 1), np.log(sm))
    close(tx().log_softmax(dim=0), np.log(np.exp(X) / np.exp(X).sum(0)))
    close(torch.softmax(tx(dtype=torch.float32), 1, dtype=torch.float64), sm)
    lse = np.log(np.exp(X).sum(1))
    close(both("logsumexp", 1), lse)
    close(tx().logsumexp(dim=(0, 1)), np.log(np.exp(X).sum()))
    close(tx().norm(), np.linalg.norm(X))
    close(torch.norm(tx(), dim=1), np.linalg.norm(X, axis=1))
    close(tx().norm(p=1, dim=1), np.abs(X).sum(1))
    close(tx().norm(p=float("inf"), dim=0), np.abs(X).max(0))
    close(tx().norm(dim=1, keepdim=True), np.linalg.norm(X, axis=1, keepdims=True))


# ---------------------------------------------------------------------------
# indexing ops


def test_gather_and_index_select():
    idx = np.array([[0, 3], [2, 2], [1, 0]])
    close(both("gather", 1, torch.tensor(idx)), np.take_along_axis(X, idx, 1))
    idx0 = np.array([[2, 0, 1, 1]])
    close(torch.gather(tx(), 0, torch.tensor(idx0)), np.take_along_axis(X, idx0, 0))
    close(both("index_select", 1, torch.tensor([3, 0])), X[:, [3, 0]])
    close(tx().index_select(0, torch.tensor([2, 2])), X[[2, 2]])
    with pytest.raises(RuntimeError, match="Expected dtype int64 for index"):
        torch.gather(tx(), 1, torch.tensor([[0.0]]))


def test_scatter_and_index_add_functional():
    t = torch.zeros(2, 3)
    s = torch.scatter(t, 1, torch.tensor([[2], [0]]), torch.tensor([[5.0], [6.0]]))
    assert s.tolist() == [[0, 0, 5], [6, 0, 0]] and t.tolist() == [[0] * 3] * 2
    assert t.scatter(1, torch.tensor([[1], [1]]), 3.0).tolist() == [[0, 3, 0], [0, 3, 0]]
    a = torch.scatter_add(t, 1, torch.tensor([[0, 0]]), torch.tensor([[1.0, 2.0]]))
    assert a.tolist() == [[3, 0, 0], [0, 0, 0]]
    ia = torch.index_add(t, 0, torch.tensor([1, 1]), torch.ones(2, 3), alpha=2)
    assert ia.tolist() == [[0, 0, 0], [4, 4, 4]]


def test_sort_and_topk():
    r = both("sort", 1)
    assert type(r).__name__ == "sort"
    close(r.values, np.sort(X, 1))
    assert r.indices.tolist() == np.argsort(X, 1).tolist()
    assert r.indices.tolist() == np.argsort(X, 1).tolist()
    d = tx().sort(dim=0, descending=True)
    close(d.values, -np.sort(-X, 0))
    assert torch.sort(torch.tensor([3, 1, 2])).values.tolist() == [1, 2, 3]
    assert tx().argsort(1).tolist() == np.argsort(X, 1).tolist()
    k = torch.topk(torch.tensor([3.0, 1.0, 2.0, 5.0]), 2)
    assert type(k).__name__ == "topk" and k.values.tolist() == [5.0, 3.0] and k.indices.tolist() == [3, 0]
    k = torch.tensor([3.0, 1.0, 2.0, 5.0]).topk(2, largest=False)
    assert k.values.tolist() == [1.0, 2.0] and k.indices.tolist() == [1, 2]
    k = tx().topk(1, dim=0)
    close(k.values, X.max(0, keepdims=True))
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        torch.topk(torch.ones(3), 4)


# ---------------------------------------------------------------------------
# joining and shape


def test_cat_stack():
    close(torch.cat([tx(), tx()], 1), np.concatenate([X, X], 1))
    close(torch.cat((tx(), tx())), np.concatenate([X, X]))
    close(torch.cat([tx(), tx()], dim=-1), np.concatenate([X, X], -1))
    assert torch.cat([torch.tensor([1]), torch.tensor([1.5])]).dtype is torch.float32
    close(torch.stack([tx(), tx()]), np.stack([X, X]))
    close(torch.stack([tx(), tx()], -1), np.stack([X, X], -1))
    close(torch.stack([tx(), tx()], dim=1), np.stack([X, X], 1))
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0"):
        torch.cat([torch.zeros(2, 3), torch.zeros(2, 4)])
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        torch.stack([torch.zeros(2), torch.zeros(3)])
    with pytest.raises(RuntimeError, match="Tensors must have same number of dimensions"):
        torch.cat([torch.zeros(2, 3), torch.zeros(3)])
    with pytest.raises(RuntimeError, match=r"zero-dimensional tensor \(at position 1\) cannot be concatenated"):
        torch.cat([torch.zeros(2), torch.tensor(1.0)])
    with pytest.raises(RuntimeError, match=r"zero-dimensional tensor \(at position 0\) cannot be concatenated"):
        torch.cat([torch.tensor(1.0)])


def test_split_chunk_unbind_functional_and_method():
    parts = torch.split(tx(), 3, dim=1)
    assert [p.shape for p in parts] == [(3, 3), (3, 1)]
    close(parts[1], X[:, 3:])
    parts = tx().split([1, 2])
    close(parts[1], X[1:])
    chunks = torch.chunk(tx(), 2, 1)
    assert len(chunks) == 2 and chunks[0].shape == (3, 2)
    assert len(tx().chunk(4, 0)) == 3
    rows = torch.unbind(tx())
    assert len(rows) == 3 and rows[1].tolist() == X[1].tolist()
    assert [c.tolist() for c in tx().unbind(1)][2] == X[:, 2].tolist()


def test_flatten_repeat_tril_triu():
    z = torch.zeros(2, 3, 4)
    assert z.flatten().shape == (24,) and torch.flatten(z, 1).shape == (2, 12)
    assert z.flatten(0, 1).shape == (6, 4) and z.flatten(-2).shape == (2, 12)
    assert torch.tensor(5.0).flatten().shape == (1,)
    close(tx().repeat(2, 1), np.tile(X, (2, 1)))
    close(tx().repeat(2, 1, 2), np.tile(X, (2, 1, 2)))
    assert torch.tensor([1, 2]).repeat(3).tolist() == [1, 2, 1, 2, 1, 2]
    with pytest.raises(RuntimeError, match="Number of dimensions of repeat dims can not be smaller"):
        tx().repeat(2)
    close(both("tril"), np.tril(X))
    close(torch.triu(tx(), 1), np.triu(X, 1))
    close(torch.triu(tx(), 1), np.triu(X, 1))
    close(tx().tril(-1), np.tril(X, -1))
    close(torch.tril(torch.ones(2, 3, 3)), np.tril(np.ones((2, 3, 3))))


# ---------------------------------------------------------------------------
# linear algebra and einsum


def test_mm_bmm_matmul():
    a = np.arange(6.0).reshape(2, 3)
    b = np.arange(12.0).reshape(3, 4)
    close(torch.mm(tx(a), tx(b)), a @ b)
    close(tx(a).mm(tx(b)), a @ b)
    ba = np.arange(24.0).reshape(2, 3, 4)
    bb = np.arange(40.0).reshape(2, 4, 5)
    close(torch.bmm(tx(ba), tx(bb)), ba @ bb)
    close(tx(ba).bmm(tx(bb)), ba @ bb)
    close(tx(ba) @ tx(bb), ba @ bb)
    close(torch.matmul(tx(a), tx(np.ones(3))), a @ np.ones(3))
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x3\)"):
        torch.mm(tx(a), tx(a))
    with pytest.raises(RuntimeError, match="batch1 must be a 3D tensor"):
        torch.bmm(tx(a), tx(b))


@pytest.mark.parametrize("eq, shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("ij", [(3, 2)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("i,i->", [(3,), (3,)]),
    ("i,j->ij", [(3,), (2,)]),
    ("...ij->...ji", [(2, 3, 4)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("bii->b", [(2, 3, 3)]),
    ("ij,ij->i", [(2, 3), (2, 3)]),
    ("i j , j k -> i k", [(2, 3), (3, 4)]),
])
def test_einsum_common_patterns(eq, shapes):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    close(torch.einsum(eq, *[tx(a) for a in arrays]), np.einsum(eq.replace(" ", ""), *arrays))
    close(torch.einsum(eq, [tx(a) for a in arrays]), np.einsum(eq.replace(" ", ""), *arrays))


def test_einsum_gradient_through_a_diagonal():
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    torch.einsum("ii->", x).backward()
    assert x.grad.tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_other_namespace_functions():
    close(torch.outer(tx(np.array([1.0, 2.0])), tx(np.array([3.0, 4.0, 5.0]))), np.outer([1, 2], [3, 4, 5]))
    close(torch.dot(tx(np.array([1.0, 2.0])), tx(np.array([3.0, 4.0]))), 11.0)
    close(torch.trace(tx(np.arange(9.0).reshape(3, 3))), 12.0)
    close(torch.diag(tx(np.array([1.0, 2.0]))), np.diag([1.0, 2.0]))
    close(torch.flip(tx(), [0]), X[::-1])
    close(torch.roll(tx(), 1, 1), np.roll(X, 1, 1))
    close(torch.roll(tx(), 1, 1), np.roll(X, 1, 1))
    assert torch.numel(tx()) == 12 and torch.is_floating_point(tx())


def test_var_std_unbiased_positional_overload_and_int_error():
    close(tx().var(False), X.var())
    close(tx().std(True), X.std(ddof=1))
    close(torch.std(tx(), 0, True, True), X.std(axis=0, ddof=1, keepdims=True))
    with pytest.raises(RuntimeError, match="std and var only support floating point and complex dtypes"):
        torch.tensor([1, 2]).std()


def test_python_ints_beyond_64_bits_are_torchs_overflow_errors():
    import pytest
    import mindtorch_v2 as torch
    for t in (torch.ones(2), torch.ones(2, dtype=torch.int64)):
        with pytest.raises(OverflowError, match="int too big to convert"):
            t + 2 ** 64
        with pytest.raises(OverflowError, match="int too big to convert"):
            2 ** 70 * t
        with pytest.raises(OverflowError, match="negative int to unsigned"):
            t - (-2 ** 63 - 1)
    assert (torch.ones(1) + 2 ** 63).item() == 2.0 ** 63
