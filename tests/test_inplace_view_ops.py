"""In-place view ops (t_, transpose_, swapdims_, swapaxes_, squeeze_, unsqueeze_, as_strided_): self takes a
view's geometry over the same storage. Values are checked against NumPy, gradients against hand-derived ones,
errors by type and key words."""
import numpy as np
import pytest

import mindtorch_v2 as torch


def _np(t):
    return np.asarray(t.detach().numpy())


def _arange(*shape):
    return torch.arange(float(np.prod(shape))).reshape(*shape).clone()


OPS = [
    ("t_", (2, 3), lambda x: x.t_(), lambda a: a.T),
    ("t_1d", (4,), lambda x: x.t_(), lambda a: a),
    ("t_0d", (), lambda x: x.t_(), lambda a: a),
    ("transpose_", (2, 3, 4), lambda x: x.transpose_(0, 2), lambda a: a.swapaxes(0, 2)),
    ("transpose_neg", (2, 3, 4), lambda x: x.transpose_(-1, 1), lambda a: a.swapaxes(-1, 1)),
    ("swapdims_", (2, 3), lambda x: x.swapdims_(0, 1), lambda a: a.swapaxes(0, 1)),
    ("swapaxes_", (2, 3), lambda x: x.swapaxes_(1, 0), lambda a: a.swapaxes(1, 0)),
    ("squeeze_", (1, 3, 1, 2), lambda x: x.squeeze_(), lambda a: a.squeeze()),
    ("squeeze_dim", (1, 3, 1, 2), lambda x: x.squeeze_(2), lambda a: a.squeeze(2)),
    ("squeeze_dim_kept", (1, 3, 1, 2), lambda x: x.squeeze_(1), lambda a: a),
    ("squeeze_dims", (1, 3, 1, 2), lambda x: x.squeeze_((0, -2)), lambda a: a.squeeze((0, 2))),
    ("squeeze_none", (2, 3), lambda x: x.squeeze_(), lambda a: a),
    ("unsqueeze_", (2, 3), lambda x: x.unsqueeze_(1), lambda a: np.expand_dims(a, 1)),
    ("unsqueeze_end", (2, 3), lambda x: x.unsqueeze_(-1), lambda a: np.expand_dims(a, -1)),
    ("as_strided_", (2, 3), lambda x: x.as_strided_((3, 2), (1, 3)), lambda a: a.T),
    ("as_strided_off", (2, 3), lambda x: x.as_strided_((2,), (2,), 1),
     lambda a: np.lib.stride_tricks.as_strided(a.ravel()[1:], (2,), (2 * a.itemsize,))),
]


@pytest.mark.parametrize("name,shape,op,ref", OPS, ids=[o[0] for o in OPS])
def test_geometry_values_version(name, shape, op, ref):
    x = _arange(*shape)
    expected = ref(_np(x))
    st, v = x._storage, x._version
    out = op(x)
    assert out is x
    assert x._storage is st
    assert x._version == v + 1
    assert tuple(x.shape) == expected.shape
    np.testing.assert_array_equal(_np(x), expected)
    if expected.ndim and expected.size:
        np.testing.assert_array_equal(np.array(x.stride()) * 4, np.array(ref(np.arange(x._storage.value.size,
                                                                                      dtype=np.float32).reshape(
            shape)).strides))


def test_write_after_t_lands_in_storage():
    x = _arange(2, 3)
    alias = x.view(6)  # a view taken before t_ sees the writes
    x.t_()
    x[0].fill_(-1)  # x[0] is column 0 of the original
    np.testing.assert_array_equal(_np(alias), [-1, 1, 2, -1, 4, 5])
    x.mul_(torch.tensor([[1.0, 10.0]]))  # scales the original row 1
    np.testing.assert_array_equal(_np(alias), [-1, 1, 2, -10, 40, 50])
    assert not x.is_contiguous()
    x.t_()
    assert x.is_contiguous()
    np.testing.assert_array_equal(_np(x), [[-1, 1, 2], [-10, 40, 50]])


@pytest.mark.parametrize("call,exc,words", [
    (lambda: _arange(2, 3).transpose_(0, 2), IndexError, "Dimension out of range (expected to be in range of [-2, 1], "
                                                         "but got 2)"),
    (lambda: _arange(2, 3).swapdims_(-3, 0), IndexError, "Dimension out of range"),
    (lambda: _arange(2, 3).unsqueeze_(3), IndexError, "[-3, 2], but got 3"),
    (lambda: _arange(2, 3).squeeze_(2), IndexError, "[-2, 1], but got 2"),
    (lambda: _arange(2, 3).squeeze_((0, 5)), IndexError, "Dimension out of range"),
    (lambda: torch.tensor(1.0).squeeze_(1), IndexError, "[-1, 0], but got 1"),
    (lambda: _arange(2, 2, 2).t_(), RuntimeError, "t_() expects a tensor with <= 2 dimensions, but self is 3D"),
    (lambda: _arange(2, 3).as_strided_((3, 3), (1, 1), 2), RuntimeError, "out of bounds for storage of size 24"),
    (lambda: _arange(2, 3).as_strided_((3,), (-1,)), RuntimeError, "Negative strides"),
    (lambda: _arange(2, 3).as_strided_((3, 2), (1,)), RuntimeError, "mismatch in length of strides and shape"),
])
def test_errors(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    assert words in str(info.value)


def test_failed_op_changes_nothing():
    a = torch.randn(2, 3, requires_grad=True)
    x = a * 2
    fn, v, shape, strides = x.grad_fn, x._version, tuple(x.shape), x.stride()
    data = _np(x).copy()
    for bad in (lambda: x.transpose_(0, 3), lambda: x.unsqueeze_(4), lambda: x.squeeze_(-3),
                lambda: x.as_strided_((7,), (1,)), lambda: x.unsqueeze(0).t_()):
        with pytest.raises((IndexError, RuntimeError)):
            bad()
        assert (x._version, tuple(x.shape), x.stride(), x.grad_fn) == (v, shape, strides, fn)
        np.testing.assert_array_equal(_np(x), data)


@pytest.mark.parametrize("op", [lambda x: x.t_(), lambda x: x.transpose_(0, 1), lambda x: x.squeeze_(),
                                lambda x: x.unsqueeze_(0), lambda x: x.as_strided_((3,), (1,))])
def test_leaf_rules(op):
    a = torch.randn(1, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        op(a)
    assert tuple(a.shape) == (1, 3) and a._version == 0
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        op(a[0:1])
    with torch.no_grad():
        v = a[0:1]
        op(a)  # allowed under no_grad
    assert a.requires_grad and a.is_leaf and a.grad_fn is None
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode"):
        op(v)


@pytest.mark.parametrize("op,name", [
    (lambda x: x.t_(), "TBackward1"), (lambda x: x.transpose_(0, 1), "TransposeBackward1"),
    (lambda x: x.swapdims_(0, 1), "TransposeBackward1"), (lambda x: x.swapaxes_(0, 1), "TransposeBackward1"),
    (lambda x: x.squeeze_(), "SqueezeBackward3"), (lambda x: x.squeeze_(0), "SqueezeBackward4"),
    (lambda x: x.squeeze_((0,)), "SqueezeBackward5"), (lambda x: x.unsqueeze_(0), "UnsqueezeBackward1"),
    (lambda x: x.as_strided_((3,), (1,)), "AsStridedBackward1"),
])
def test_node_names_wrap_history(op, name):
    a = torch.randn(1, 3, requires_grad=True)
    b = a * 2
    mul = b.grad_fn
    assert op(b) is b
    assert b.grad_fn.name() == name
    assert b.grad_fn.next_functions[0][0] is mul
    with torch.no_grad():  # under no_grad the history is left as it is (as torch)
        c = a * 2
        fn = c.grad_fn
        op(c)
    assert c.grad_fn is fn


def test_backward_through_t_and_unsqueeze():
    w = torch.randn(2, 3, requires_grad=True)
    c = torch.randn(3, 1, 2)
    b = w * 1
    b.t_().unsqueeze_(1)
    (b * c).sum().backward()
    np.testing.assert_allclose(_np(w.grad), _np(c)[:, 0, :].T)


def test_view_stays_view_and_writes_reach_base():
    w = torch.randn(3, 4, requires_grad=True)
    b = w * 1
    vv = b[1:3].t_()
    assert vv._base is b and vv._is_view() and tuple(vv.shape) == (4, 2)
    assert vv.grad_fn.name() == "TBackward1"
    vv.mul_(0)
    np.testing.assert_array_equal(_np(b)[1:], 0)
    np.testing.assert_array_equal(_np(b)[0], _np(w)[0])
    b.sum().backward()
    np.testing.assert_array_equal(_np(w.grad), [[1] * 4, [0] * 4, [0] * 4])


def test_views_before_and_after_t_on_a_base():
    w = torch.randn(3, 4, requires_grad=True)
    b = w * 1
    v1 = b[0]  # row 0 of w
    b.t_()
    assert b._base is None and not b._is_view()
    v2 = b[1]  # column 1 of w
    assert v1._base is b and v2._base is b
    v1.mul_(2)
    v2.mul_(3)
    expected = _np(w).copy()
    expected[0] *= 2
    expected[:, 1] *= 3
    np.testing.assert_allclose(_np(b), expected.T)
    (b.sum() + v1.sum()).backward()
    grad = np.ones((3, 4))
    grad[0] *= 2
    grad[:, 1] *= 3
    grad[0] += 2 * np.array([1, 3, 1, 1])  # v1 = 2 * w[0] with its element 1 then tripled
    np.testing.assert_allclose(_np(w.grad), grad)


def test_view_history_rebuilt_from_a_transposed_base():
    w = torch.randn(2, 3, requires_grad=True)
    b = w * 1
    b.t_()
    v = b[0]  # (w[0, 0], w[1, 0])
    b.mul_(2)  # v's history is stale: rebuilt from b's storage
    assert v.grad_fn is not None
    np.testing.assert_allclose(_np(v), 2 * _np(w)[:, 0])
    v.sum().backward()
    np.testing.assert_allclose(_np(w.grad), [[2, 0, 0], [2, 0, 0]])


def test_as_strided_inplace_on_transposed_base_gradient():
    w = torch.randn(2, 3, requires_grad=True)
    b = w * 1
    b.t_()
    b.as_strided_((3,), (2,), 0)  # storage elements 0, 2, 4: w[0, 0], w[0, 2], w[1, 1]
    np.testing.assert_allclose(_np(b), _np(w).ravel()[[0, 2, 4]])
    (b * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_allclose(_np(w.grad), [[1, 0, 2], [0, 3, 0]])


def test_as_strided_out_of_place():
    x = _arange(2, 3)
    y = x.as_strided((3, 2), (1, 3))
    assert y._base is x
    np.testing.assert_array_equal(_np(y), _np(x).T)
    w = torch.randn(2, 3, requires_grad=True)
    y = (w * 1).as_strided((2,), (4,), 1)  # elements 1 and 5
    y.sum().backward()
    np.testing.assert_array_equal(_np(w.grad), [[0, 1, 0], [0, 0, 1]])


def test_leaf_under_no_grad_keeps_accumulating():
    a = torch.randn(2, 3, requires_grad=True)
    with torch.no_grad():
        a.t_()
    (a * torch.arange(6.0).reshape(3, 2)).sum().backward()
    assert tuple(a.grad.shape) == (3, 2)
    np.testing.assert_array_equal(_np(a.grad), np.arange(6.0).reshape(3, 2))


def test_inplace_view_op_in_grad_mode_on_view_then_write_gradient():
    w = torch.randn(2, 3, requires_grad=True)
    b = w * 1
    v = b[:, 1:]  # (2, 2)
    v.unsqueeze_(0).squeeze_(0).t_()
    v.add_(torch.tensor([[10.0, 20.0], [30.0, 40.0]]))  # v[i, j] is b[j, 1 + i]
    np.testing.assert_allclose(_np(b)[:, 1:], _np(w)[:, 1:] + np.array([[10.0, 30.0], [20.0, 40.0]]))
    (b * b).sum().backward()
    np.testing.assert_allclose(_np(w.grad), 2 * _np(b), rtol=1e-6)


def test_views_of_a_result_with_a_transposed_layout():
    # an elementwise result keeps a transposed input's layout (a base not covering its storage row-major,
    # as after t_): writes through its views and their gradients follow the base's own geometry
    w = torch.arange(6.0).reshape(2, 3).requires_grad_()
    out = w.t() * 1
    assert out.stride() == (1, 3) and out._base is None
    v = out[0]
    out.mul_(2)
    out[1].add_(1)
    np.testing.assert_allclose(_np(v), 2 * _np(w)[:, 0])
    (v.sum() * 3 + out.sum()).backward()
    np.testing.assert_allclose(_np(w.grad), [[8, 2, 2], [8, 2, 2]])


def test_torch_as_strided_is_the_function_form():
    import mindtorch_v2 as torch
    x = torch.arange(6.0)
    v = torch.as_strided(x, (2, 2), (1, 2), 1)
    assert v.tolist() == [[1.0, 3.0], [2.0, 4.0]]
    assert v._base is x
