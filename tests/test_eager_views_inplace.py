"""Views share storage and version counter; in-place ops are seen through every view, exactly as in NumPy."""
import numpy as np
import pytest

import mindtorch_v2 as torch


def base_pair(shape=(3, 4), dtype=np.float64):
    a = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape) + 1
    return a, torch.tensor(a.copy())


def _diag(a, offset):
    """A writable numpy view of a 2-d array's diagonal (np.diagonal is read-only)."""
    start = a[0, offset:] if offset >= 0 else a[-offset:, 0]
    n = len(a.diagonal(offset))
    return np.lib.stride_tricks.as_strided(start, (n,), (a.strides[0] + a.strides[1],))


# each entry: (name, torch view of t, the same view of numpy array a)
VIEWS = [
    ("view", lambda t: t.view(2, 6), lambda a: a.reshape(2, 6)),
    ("view_infer", lambda t: t.view(-1), lambda a: a.reshape(-1)),
    ("reshape", lambda t: t.reshape(4, 3), lambda a: a.reshape(4, 3)),
    ("transpose", lambda t: t.transpose(0, 1), lambda a: a.T),
    ("permute", lambda t: t.permute(1, 0), lambda a: a.transpose(1, 0)),
    ("t", lambda t: t.t(), lambda a: a.T),
    ("T", lambda t: t.T, lambda a: a.T),
    ("unsqueeze", lambda t: t.unsqueeze(1), lambda a: a[:, None]),
    ("squeeze", lambda t: t.unsqueeze(0).squeeze(0), lambda a: a),
    ("narrow", lambda t: t.narrow(1, 1, 2), lambda a: a[:, 1:3]),
    ("select", lambda t: t.select(1, 2), lambda a: a[:, 2]),
    ("select_neg", lambda t: t.select(0, -1), lambda a: a[-1]),
    ("slice_step", lambda t: t[::2, 1::2], lambda a: a[::2, 1::2]),
    ("int_slice", lambda t: t[1, 1:], lambda a: a[1, 1:]),
    ("ellipsis_none", lambda t: t[..., None, 0], lambda a: a[..., None, 0]),
    ("diagonal", lambda t: t.diagonal(), lambda a: _diag(a, 0)),
    ("diagonal_offset", lambda t: t.diagonal(1), lambda a: _diag(a, 1)),
    ("diagonal_neg", lambda t: t.diagonal(-1), lambda a: _diag(a, -1)),
    ("unfold", lambda t: t.unfold(1, 2, 2), lambda a: np.lib.stride_tricks.as_strided(
        a, (3, 2, 2), (a.strides[0], 2 * a.strides[1], a.strides[1]))),
    ("split", lambda t: t.split(2, 1)[1], lambda a: a[:, 2:4]),
    ("chunk", lambda t: t.chunk(3, 0)[2], lambda a: a[2:3]),
    ("unbind", lambda t: t.unbind(1)[3], lambda a: a[:, 3]),
    ("detach", lambda t: t.detach(), lambda a: a),
    ("view_of_view", lambda t: t.t()[1:, ::2], lambda a: a.T[1:, ::2]),
    ("flatten_contig", lambda t: t.flatten(), lambda a: a.reshape(-1)),
    ("movedim", lambda t: t.movedim(0, 1), lambda a: np.moveaxis(a, 0, 1)),
    ("expand_read", lambda t: t[:, :1].expand(3, 5), lambda a: np.broadcast_to(a[:, :1], (3, 5))),
]


@pytest.mark.parametrize("name, tview, nview", VIEWS, ids=[v[0] for v in VIEWS])
def test_view_shares_storage_and_version_and_reads_like_numpy(name, tview, nview):
    a, t = base_pair()
    v = tview(t)
    assert v._storage is t._storage
    assert v._version_counter is t._version_counter
    np.testing.assert_array_equal(v.numpy(), nview(a))
    expected = nview(a)
    for size, got, want in zip(expected.shape, v.stride(), expected.strides):
        assert size == 1 or got == want // a.itemsize  # a size-1 dim's stride is free


WRITABLE = [v for v in VIEWS if v[0] not in ("expand_read", "unfold")]


@pytest.mark.parametrize("name, tview, nview", WRITABLE, ids=[v[0] for v in WRITABLE])
def test_in_place_on_a_view_mirrors_numpy_and_bumps_the_shared_version_once(name, tview, nview):
    a, t = base_pair()
    other = t.t()  # an unrelated view must see the change too
    v = tview(t)
    before = t._version
    v.mul_(10).add_(1)
    nv = nview(a)
    nv *= 10
    nv += 1
    np.testing.assert_array_equal(t.numpy(), a)
    np.testing.assert_array_equal(other.numpy(), a.T)
    assert t._version == before + 2 and v._version == t._version and other._version == t._version


def test_unfold_windows_write_back_like_numpy():
    a = np.arange(7.0)
    t = torch.tensor(a)
    u = t.unfold(0, 3, 2)
    u[1].zero_()
    a[2:5] = 0
    np.testing.assert_array_equal(t.numpy(), a)


def test_views_of_views_see_writes_to_the_base_and_to_each_other():
    t = torch.zeros(4, 4)
    a = t[1:3]
    b = a.t()
    c = b[:, 0]
    t.fill_(1)
    assert c.tolist() == [1.0] * 4
    c.add_(5)
    assert t[1].tolist() == [6.0] * 4 and t[2].tolist() == [1.0] * 4
    assert a._version == b._version == c._version == t._version == 2


def test_version_counter_is_a_shared_object_with_value():
    t = torch.zeros(3)
    v = t[1:]
    counter = t._version_counter
    assert counter is v._version_counter and isinstance(t._version, int) and counter.value == 0
    v.add_(1)
    assert counter.value == 1 and t._version == 1
    c = t.clone()
    assert c._version_counter is not counter and c._version == 0
    assert t.detach()._version_counter is counter


def test_out_of_place_ops_do_not_bump_versions():
    t = torch.ones(3)
    _ = t + 1, t.exp(), t[0], t.view(3), t.clone(), t[[0, 1]]
    assert t._version == 0


# ---------------------------------------------------------------------------
# view vs reshape


def test_view_on_non_contiguous_raises_and_reshape_copies():
    t = torch.arange(12.0).reshape(3, 4)
    tt = t.t()
    with pytest.raises(RuntimeError, match=r"view size is not compatible.*Use \.reshape\(\.\.\.\) instead"):
        tt.view(12)
    r = tt.reshape(12)
    assert r._storage is not t._storage
    assert r.tolist() == np.arange(12.0).reshape(3, 4).T.reshape(12).tolist()
    assert t.reshape(2, 6)._storage is t._storage  # contiguous: a view
    # a view across a contiguous chunk of a non-contiguous tensor is allowed (torch's computeStride)
    s = torch.zeros(4, 6)[:, :4]
    assert s.view(4, 2, 2)._storage is s._storage and s.view(4, 2, 2).stride() == (6, 2, 1)
    with pytest.raises(RuntimeError, match="reshape"):
        s.view(16)


def test_view_shape_errors():
    t = torch.zeros(3, 4)
    with pytest.raises(RuntimeError, match=r"shape '\[5, -1\]' is invalid for input of size 12"):
        t.view(5, -1)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        t.view(-1, -1)
    with pytest.raises(RuntimeError, match=r"shape '\[5\]' is invalid for input of size 12"):
        t.reshape(5)


def test_expand_errors_and_strides():
    t = torch.zeros(3, 1)
    e = t.expand(2, 3, 4)
    assert e.shape == (2, 3, 4) and e.stride() == (0, 1, 0) and e._storage is t._storage
    assert t.expand(-1, 5).shape == (3, 5)
    assert t.expand_as(torch.zeros(3, 2)).shape == (3, 2)
    with pytest.raises(RuntimeError, match=r"The expanded size of the tensor \(5\) must match the existing size "
                                           r"\(3\) at non-singleton dimension 0"):
        t.expand(5, 1)


def test_squeeze_unsqueeze_shapes():
    t = torch.zeros(1, 3, 1, 2)
    assert t.squeeze().shape == (3, 2)
    assert t.squeeze(0).shape == (3, 1, 2) and t.squeeze(1).shape == (1, 3, 1, 2)
    assert t.squeeze(-2).shape == (1, 3, 2)
    assert t.unsqueeze(-1).shape == (1, 3, 1, 2, 1) and t.unsqueeze(0).shape == (1, 1, 3, 1, 2)
    with pytest.raises(IndexError, match="Dimension out of range"):
        t.unsqueeze(6)


def test_split_chunk_unbind_are_views():
    t = torch.arange(10.0)
    parts = t.split([3, 7])
    assert [p.shape[0] for p in parts] == [3, 7] and all(p._storage is t._storage for p in parts)
    assert [c.tolist() for c in torch.chunk(torch.arange(5), 3)] == [[0, 1], [2, 3], [4]]
    rows = torch.arange(6.0).reshape(2, 3).unbind(0)
    rows[1].fill_(0)
    assert rows[1]._storage is not t._storage
    with pytest.raises(RuntimeError, match="split_with_sizes expects split_sizes to sum exactly to 10"):
        t.split([3, 3])


# ---------------------------------------------------------------------------
# the in-place ops


def _rand_base():
    return np.linspace(0.1, 0.9, 12).reshape(4, 3)


IN_PLACE = [
    ("add_", lambda t: t.add_(1), lambda a: a + 1),
    ("add_alpha", lambda t: t.add_(torch.ones(3, dtype=torch.float64), alpha=2), lambda a: a + 2),
    ("sub_", lambda t: t.sub_(0.5), lambda a: a - 0.5),
    ("mul_", lambda t: t.mul_(torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)), lambda a: a * [1, 2, 3]),
    ("div_", lambda t: t.div_(4), lambda a: a / 4),
    ("pow_", lambda t: t.pow_(2), lambda a: a ** 2),
    ("neg_", lambda t: t.neg_(), lambda a: -a),
    ("abs_", lambda t: t.sub_(0.5).abs_(), lambda a: np.abs(a - 0.5)),
    ("exp_", lambda t: t.exp_(), np.exp),
    ("log_", lambda t: t.log_(), np.log),
    ("sqrt_", lambda t: t.sqrt_(), np.sqrt),
    ("clamp_", lambda t: t.clamp_(0.3, 0.6), lambda a: np.clip(a, 0.3, 0.6)),
    ("clamp_min", lambda t: t.clamp_(min=0.5), lambda a: np.maximum(a, 0.5)),
    ("relu_", lambda t: t.sub_(0.5).relu_(), lambda a: np.maximum(a - 0.5, 0)),
    ("sigmoid_", lambda t: t.sigmoid_(), lambda a: 1 / (1 + np.exp(-a))),
    ("tanh_", lambda t: t.tanh_(), np.tanh),
    ("zero_", lambda t: t.zero_(), np.zeros_like),
    ("fill_", lambda t: t.fill_(3), lambda a: np.full_like(a, 3)),
    ("fill_tensor", lambda t: t.fill_(torch.tensor(2.0)), lambda a: np.full_like(a, 2)),
    ("copy_", lambda t: t.copy_(torch.tensor([[9.0, 8.0, 7.0]])), lambda a: np.broadcast_to([9, 8, 7], a.shape)),
    ("masked_fill_", lambda t: t.masked_fill_(torch.tensor([True, False, True]), -1),
     lambda a: np.where([True, False, True], -1, a)),
    ("index_add_", lambda t: t.index_add_(0, torch.tensor([0, 0]), torch.ones(2, 3, dtype=torch.float64)),
     lambda a: a + np.array([[2.0], [0.0], [0.0]])),
]


@pytest.mark.parametrize("name, op, ref", IN_PLACE, ids=[x[0] for x in IN_PLACE])
def test_in_place_op_on_a_row_slice_mirrors_numpy(name, op, ref):
    a = _rand_base()
    t = torch.tensor(a.copy())
    col_view = t.t()
    sub = t[1:]
    before = t._version
    out = op(sub)
    assert out is sub
    expected = ref(a[1:])
    a[1:] = expected
    np.testing.assert_allclose(t.numpy(), a, rtol=1e-12)
    np.testing.assert_allclose(col_view.numpy(), a.T, rtol=1e-12)
    assert t.dtype is torch.float64
    bumps = 2 if name in ("abs_", "relu_") else 1
    assert t._version == before + bumps


def test_scatter_and_index_add_match_numpy():
    t = torch.zeros(3, 4)
    t.scatter_(1, torch.tensor([[0], [3], [1]]), 7.0)
    assert t.tolist() == [[7, 0, 0, 0], [0, 0, 0, 7], [0, 7, 0, 0]]
    src = torch.arange(1.0, 7.0).reshape(3, 2)
    t.zero_().scatter_(1, torch.tensor([[0, 1], [2, 3], [3, 0]]), src)
    assert t.tolist() == [[1, 2, 0, 0], [0, 0, 3, 4], [6, 0, 0, 5]]
    u = torch.ones(5)
    u.index_add_(0, torch.tensor([0, 4, 0]), torch.tensor([1.0, 2.0, 3.0]))
    assert u.tolist() == [5.0, 1.0, 1.0, 1.0, 3.0]
    u.index_add_(0, torch.tensor([1]), torch.tensor([1.0]), alpha=10)
    assert u[1].item() == 11.0


def test_random_in_place_fills_keep_shape_dtype_and_bump_once():
    t = torch.zeros(2000)
    view = t[::2]
    view.uniform_(-2, 3)
    assert t._version == 1 and t[1::2].abs().sum().item() == 0
    assert -2 <= view.min().item() and view.max().item() < 3
    t.normal_(5, 0.5)
    assert abs(t.mean().item() - 5) < 0.1 and abs(t.std().item() - 0.5) < 0.1 and t._version == 2
    t.bernoulli_(0.25)
    assert set(t.tolist()) <= {0.0, 1.0}
    assert 0.18 < t.mean().item() < 0.32 and t._version == 3 and t.dtype is torch.float32
    torch.manual_seed(0)
    a = torch.empty(5).uniform_()
    torch.manual_seed(0)
    b = torch.empty(5).uniform_()
    assert a.tolist() == b.tolist()


def test_copy_casts_and_broadcasts():
    t = torch.zeros(2, 3)
    t.copy_(torch.tensor([1, 2, 3]))
    assert t.dtype is torch.float32 and t.tolist() == [[1, 2, 3]] * 2
    i = torch.zeros(3, dtype=torch.int64)
    i.copy_(torch.tensor([1.7, -2.7, 3.0]))  # copy_ casts freely, unlike arithmetic in-place ops
    assert i.tolist() == [1, -2, 3] and i.dtype is torch.int64
    t[0].copy_(torch.tensor(5.0, dtype=torch.float64))
    assert t.tolist() == [[5, 5, 5], [1, 2, 3]]


def test_failing_in_place_op_changes_neither_data_nor_version():
    t = torch.arange(6.0).reshape(2, 3)
    view = t[0]
    cases = [
        lambda: t.add_(torch.ones(4)),
        lambda: view.add_(torch.ones(2, 3)),
        lambda: t.copy_(torch.ones(2)),
        lambda: t.mul_(torch.ones(3, 3)),
        lambda: torch.tensor([1, 2]).add_(0.5),
        lambda: t.masked_fill_(torch.tensor([1, 0, 1]), 0.0),
        lambda: t.fill_(torch.ones(2)),
    ]
    for case in cases:
        with pytest.raises(RuntimeError):
            case()
        assert t.tolist() == [[0, 1, 2], [3, 4, 5]] and t._version == 0


def test_in_place_broadcast_error_messages():
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
        torch.ones(3).add_(torch.ones(2, 3))
    with pytest.raises(RuntimeError, match="fill_ only supports 0-dimension value tensor"):
        torch.ones(3).fill_(torch.ones(2))
    with pytest.raises(RuntimeError, match="masked_fill_ only supports boolean masks"):
        torch.ones(3).masked_fill_(torch.tensor([1, 0, 1]), 0.0)


def test_writing_an_expanded_view_is_refused():
    t = torch.ones(3)
    e = t.expand(2, 3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single "
                                           "memory location"):
        e.add_(1)
    with pytest.raises(RuntimeError, match="single memory location"):
        e.copy_(torch.zeros(2, 3))  # (zero_ and fill_ with a number are allowed, as in torch)
    with pytest.raises(RuntimeError, match="single memory location"):
        e[:, 1] = 5.0
    assert t.tolist() == [1.0, 1.0, 1.0] and t._version == 0
    e[0] = 5.0  # one row of the expansion has no repeated element: it writes t
    assert t.tolist() == [5.0, 5.0, 5.0]


def test_in_place_results_keep_the_tensor_dtype():
    i = torch.tensor([1, 2, 3])
    i.mul_(2)
    i.add_(torch.tensor([1, 1, 1], dtype=torch.int32))
    assert i.dtype is torch.int64 and i.tolist() == [3, 5, 7]
    h = torch.ones(2, dtype=torch.float16)
    h.add_(torch.ones(2, dtype=torch.float64))
    assert h.dtype is torch.float16
    f = torch.ones(2)
    f.div_(torch.tensor([2, 4]))
    assert f.dtype is torch.float32 and f.tolist() == [0.5, 0.25]


def test_functionalize_context_gives_the_same_results():
    a = np.arange(12.0).reshape(3, 4)
    with torch.functionalize():
        t = torch.tensor(a.copy())
        keep = t  # another reference to the storage's base value must not see a donated buffer
        old = t._storage.value
        t[1].add_(1)
        t[:, 2] = 0.0
    a[1] += 1
    a[:, 2] = 0
    np.testing.assert_array_equal(keep.numpy(), a)
    assert np.asarray(old)[1, 0] == 4.0  # the previous base value is untouched


def test_old_values_stay_immutable_after_writes():
    t = torch.arange(4.0)
    old = t._storage.value
    snapshot = np.asarray(old).copy()
    r = t * 1  # an out-of-place result holding its own value
    t[1:3].zero_()
    np.testing.assert_array_equal(np.asarray(old), snapshot)
    assert r.tolist() == [0, 1, 2, 3]


# ---------------------------------------------------------------------------
# a deterministic chain of views and in-place ops against NumPy


def test_random_chain_of_views_and_in_place_ops_mirrors_numpy():
    rng = np.random.default_rng(0)
    for _ in range(30):
        a = rng.standard_normal((4, 6))
        t = torch.tensor(a.copy())
        nv, tv = a, t
        for _ in range(6):
            kind = rng.integers(6)
            if kind == 0 and nv.ndim == 2:
                nv, tv = nv.T, tv.t()
            elif kind == 1 and nv.shape[0] > 1:
                s = int(rng.integers(nv.shape[0]))
                nv, tv = nv[s:], tv[s:]
            elif kind == 2 and nv.ndim == 2 and nv.shape[-1] > 1:
                nv, tv = nv[:, ::2], tv[:, ::2]
            elif kind == 3:
                nv *= 2.0
                tv.mul_(2.0)
            elif kind == 4:
                nv += 1.0
                tv += 1.0
            elif kind == 5 and nv.ndim == 2:
                i = int(rng.integers(nv.shape[0]))
                nv[i] = -1.0
                tv[i] = -1.0
            np.testing.assert_array_equal(t.numpy(), a)
            np.testing.assert_array_equal(tv.numpy(), nv)
