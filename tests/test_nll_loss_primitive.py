"""nll_loss_p / nll_loss_backward_p (core/ops/nll.py) and F.nll_loss / F.cross_entropy built on them: values and
gradients against PyTorch 2.13 goldens (recorded with real torch, hard-coded here), the two ops as each other's
transpose, vmap, out-of-range targets raising in eager, core.jit and torch.compile, and the size of the traced
gradient."""
import warnings

import numpy as np
import pytest

import mindtorch_v2 as torch
import mindtorch_v2.nn.functional as F
from mindtorch_v2 import core
from mindtorch_v2.core.ops import nll as nll_family


def X(shape):
    """The inputs the goldens were recorded on: sin(0.7 k + 0.3) over the flat positions, float64."""
    return np.sin(np.arange(int(np.prod(shape))) * 0.7 + 0.3).reshape(shape)


W = np.array([0.2, 1.0, 3.0])
TARGETS = {
    (4, 3): [0, 2, -100, 1],
    (2, 3, 2): [[0, 2], [1, -100]],
    (2, 3, 2, 2): [[[0, 2], [1, -100]], [[2, 2], [-100, 0]]],
}

# torch.nn.functional.nll_loss(X(shape), t, weight, ignore_index, reduction); with ignore_index=1 the -100
# targets are replaced by 1
GOLDENS = {
    ((4, 3), False, -100): ([-0.29552020666133955, 0.6118578909427189, 0.0, -0.8504366206285644],
                            -0.5340989363471851, -0.17803297878239502),
    ((4, 3), False, 1): ([-0.29552020666133955, 0.6118578909427189, 0.0, 0.0],
                         0.31633768428137937, 0.15816884214068969),
    ((4, 3), True, -100): ([-0.05910404133226791, 1.8355736728281569, 0.0, -0.8504366206285644],
                           0.9260330108673246, 0.22048405020650585),
    ((4, 3), True, 1): ([-0.05910404133226791, 1.8355736728281569, 0.0, 0.0],
                        1.776469631495889, 0.5551467598424653),
    ((2, 3, 2), False, -100): ([[-0.29552020666133955, 0.6118578909427189], [0.37387666483023685, 0.0]],
                               0.6902143491116162, 0.23007144970387206),
    ((2, 3, 2), False, 1): ([[-0.29552020666133955, 0.6118578909427189], [0.0, 0.0]],
                            0.31633768428137937, 0.15816884214068969),
    ((2, 3, 2), True, -100): ([[-0.05910404133226791, 1.8355736728281569], [0.37387666483023685, 0.0]],
                              2.1503462963261257, 0.5119872134109823),
    ((2, 3, 2), True, 1): ([[-0.05910404133226791, 1.8355736728281569], [0.0, 0.0]],
                           1.776469631495889, 0.5551467598424653),
    ((2, 3, 2, 2), False, -100): (
        [[[-0.29552020666133955, -0.31154136351337786], [0.9775301176650969, 0.0]],
         [[-0.9867719642746133, -0.6502878401571168], [0.0, 0.9809362300664916]]],
        -0.28565502687485905, -0.04760917114580984),
    ((2, 3, 2, 2), False, 1): (
        [[[-0.29552020666133955, -0.31154136351337786], [0.0, 0.0]],
         [[-0.9867719642746133, -0.6502878401571168], [0.0, 0.9809362300664916]]],
        -1.263185144539956, -0.2526370289079912),
    ((2, 3, 2, 2), True, -100): (
        [[[-0.05910404133226791, -0.9346240905401335], [0.9775301176650969, 0.0]],
         [[-2.9603158928238402, -1.9508635204713505], [0.0, 0.19618724601329832]]],
        -4.731190181489196, -0.45492213283549965),
    ((2, 3, 2, 2), True, 1): (
        [[[-0.05910404133226791, -0.9346240905401335], [0.0, 0.0]],
         [[-2.9603158928238402, -1.9508635204713505], [0.0, 0.19618724601329832]]],
        -5.708720299154293, -0.6073106701227972),
}

# cross_entropy(X((4, 3)), [0, 2, -100, 1], weight=W): the loss, its gradient, and the gradient of
# sum(gradient * V) (second order)
CE_LOSS = 1.6553021714975642
CE_GRAD = [[-0.037556388159453204, 0.017370654642975457, 0.02018573351647775],
           [0.39538942697129986, 0.20976516690615563, -0.6051545938774555],
           [0.0, 0.0, 0.0],
           [0.0508350194993394, -0.15095831288621445, 0.10012329338687502]]
V = np.cos(np.arange(12) * 0.3).reshape(4, 3)
CE_GRADGRAD = [[0.0009089884685833619, 0.0007933059051826946, -0.0017022943737660555],
               [0.06338061854536782, -0.020756890301127488, -0.0426237282442403],
               [0.0, 0.0, 0.0],
               [0.00338149994990448, -0.0016905653193559638, -0.0016909346305485358]]
# cross_entropy(X((2, 3, 2)), [[0, 2], [1, -100]], reduction='sum', label_smoothing=0.1) and its gradient
CE_SMOOTH = 4.988609639754497
CE_SMOOTH_GRAD = [[[-0.6689049673568562, 0.44724404663838363], [0.4971109842182776, 0.37373474973208815],
                   [0.17179398313857852, -0.8209787963704718]],
                  [[0.07716375267076814, 0.0], [-0.7312575883175192, 0.0], [0.6540938356467512, 0.0]]]


def _targets(shape, ignore_index):
    t = np.array(TARGETS[shape])
    return np.where(t == -100, 1, t) if ignore_index == 1 else t


@pytest.mark.parametrize("key", list(GOLDENS), ids=lambda k: f"{len(k[0])}d-{'w' if k[1] else 'nw'}-ii{k[2]}")
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_values_equal_pytorch_for_weights_ignore_index_reductions_and_spatial_dims(key, reduction):
    shape, weighted, ignore_index = key
    want = GOLDENS[key][("none", "sum", "mean").index(reduction)]
    t = _targets(shape, ignore_index)
    w = W if weighted else None
    core_out = core.nll_loss(core.asarray(X(shape)), core.asarray(t), None if w is None else core.asarray(w),
                             ignore_index=ignore_index, reduction=reduction)
    np.testing.assert_allclose(np.asarray(core_out), want, rtol=1e-13, atol=1e-15)
    eager = F.nll_loss(torch.tensor(X(shape)), torch.tensor(t), weight=None if w is None else torch.tensor(w),
                       ignore_index=ignore_index, reduction=reduction)
    np.testing.assert_allclose(eager.numpy(), want, rtol=1e-13, atol=1e-15)


def test_every_position_ignored_gives_nan_mean_and_zero_sum_as_pytorch():
    x, t = core.asarray(X((3, 3))), core.asarray(np.full(3, -100))
    assert np.isnan(np.asarray(core.nll_loss(x, t)))
    assert np.asarray(core.nll_loss(x, t, reduction="sum")) == 0.0
    xt = torch.tensor(X((3, 3)), requires_grad=True)
    loss = F.cross_entropy(xt, torch.tensor(np.full(3, -100)))
    assert np.isnan(loss.item())
    loss.backward()
    assert not xt.grad.numpy().any()  # (no kept position: a zero gradient, not nan, as PyTorch)


def test_numpy_path_gives_the_numba_path_values_in_eager_and_jit(monkeypatch):
    # the numba kernels run as one closure per shape and params (nll._forward / _backward), which jit binds to
    # its equation (`specialized`); all three give the NumPy path's values
    rng = np.random.default_rng(3)
    cases = []
    for shape in [(128, 10), (5, 4, 3), (0, 4)]:
        for dtype in (np.float32, np.float64):
            t = rng.integers(0, shape[1], shape[:1] + shape[2:])
            t[rng.random(t.shape) < 0.3] = -100
            cases.append((rng.standard_normal(shape).astype(dtype), t, rng.random(shape[1]).astype(dtype)))

    def run(transform=lambda f: f):
        out = []
        for x, t, w in cases:
            for weight in (None, core.asarray(w)):
                for reduction in ("none", "sum", "mean"):
                    args = (core.asarray(x), core.asarray(t)) + (() if weight is None else (weight,))

                    def loss_and_grad(x, *rest, reduction=reduction):
                        loss, pull = core.vjp(lambda x: core.nll_loss_p.bind(
                            x, *rest, ignore_index=-100, reduction=reduction), x)
                        return loss, pull(core.ones_like(loss) * 0.5)[0]
                    out += [np.asarray(v) for v in transform(loss_and_grad)(*args)]
        return out

    compiled, jitted = run(), run(core.jit)
    monkeypatch.setattr(nll_family, "_forward", lambda *a: None)
    monkeypatch.setattr(nll_family, "_backward", lambda *a: None)
    numpy_path = run()
    assert len(compiled) == len(jitted) == len(numpy_path) == 72
    for a, b, c in zip(compiled, jitted, numpy_path):
        assert a.dtype == b.dtype == c.dtype and a.tobytes() == b.tobytes() == c.tobytes()


def test_a_mean_over_nothing_is_nan_without_a_warning():
    # every position ignored, or kept weights summing to 0: 'mean' is 0 / 0, nan silently as PyTorch's (a count
    # of kept positions needs no warnings silenced, so the lowering enters no errstate for one)
    x, t = core.asarray(X((4, 3))), core.asarray(np.array([0, 1, 2, 0]))
    ignored = core.asarray(np.full(4, -100))
    zero_w = core.asarray(np.zeros(3, X((1,)).dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for args in ((x, ignored), (x, t, zero_w), (x, ignored, zero_w)):
            assert np.isnan(np.asarray(core.nll_loss(*args)))
            assert np.isnan(np.asarray(core.jit(core.nll_loss)(*args)))


def test_a_float16_mean_over_more_positions_than_float16_counts_warns_only_of_the_cast():
    # 70000 kept positions: the count is inf in float16, the mean inf / inf = nan, as PyTorch 2.13 gives (its
    # float16 nll_loss: nan here too); the count's cast warns as before, the division itself stays silent
    x = core.asarray(np.full((70000, 1), -60000, np.float16))
    t = core.asarray(np.zeros(70000, np.int64))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        loss = np.asarray(core.nll_loss(x, t))
    assert np.isnan(loss)
    assert [str(w.message) for w in seen] == ["overflow encountered in cast"]


def test_float32_mean_equals_the_composite_sum_over_the_denominator():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((128, 10)).astype(np.float32)
    t = rng.integers(0, 10, 128)
    t[::7] = -100
    w = rng.random(10).astype(np.float32)
    valid = t != -100
    picked = -x[np.arange(128), np.where(valid, t, 0)] * np.where(valid, w[np.where(valid, t, 0)], 0)
    want = np.add.reduce(picked) / np.add.reduce(np.where(valid, w[np.where(valid, t, 0)], 0))
    got = core.nll_loss(core.asarray(x), core.asarray(t), core.asarray(w))
    assert np.asarray(got) == want


def test_backward_op_is_the_transpose_of_the_forward():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4, 2))
    t = np.array([[0, 3], [-100, 1], [2, 2]])
    w = core.asarray(rng.random(4))
    for reduction in ("none", "sum", "mean"):
        g = rng.standard_normal(t.shape if reduction == "none" else ())
        fwd = core.nll_loss(core.asarray(x), core.asarray(t), w, reduction=reduction)
        bwd = core.nll_loss_backward_p.bind(core.asarray(g), core.asarray(t), w, ignore_index=-100,
                                            reduction=reduction, num_classes=4)
        assert np.sum(np.asarray(fwd) * g) == pytest.approx(np.sum(x * np.asarray(bwd)), rel=1e-12)


def test_cross_entropy_gradient_equals_pytorch_in_eager_and_core_grad():
    t = np.array(TARGETS[(4, 3)])
    xt = torch.tensor(X((4, 3)), requires_grad=True)
    loss = F.cross_entropy(xt, torch.tensor(t), weight=torch.tensor(W))
    assert loss.grad_fn.name() == "NllLossBackward0"
    assert loss.item() == pytest.approx(CE_LOSS, rel=1e-13)
    loss.backward()
    np.testing.assert_allclose(xt.grad.numpy(), CE_GRAD, rtol=1e-12, atol=1e-15)
    g = core.grad(lambda x: core.nll_loss(core.log_softmax(x, 1), core.asarray(t), core.asarray(W)))(
        core.asarray(X((4, 3))))
    np.testing.assert_allclose(np.asarray(g), xt.grad.numpy(), rtol=1e-14, atol=1e-16)


def test_second_order_through_cross_entropy_equals_pytorch():
    t = torch.tensor(np.array(TARGETS[(4, 3)]))
    xt = torch.tensor(X((4, 3)), requires_grad=True)
    (g,) = torch.autograd.grad(F.cross_entropy(xt, t, weight=torch.tensor(W)), xt, create_graph=True)
    (gg,) = torch.autograd.grad((g * torch.tensor(V)).sum(), xt)
    np.testing.assert_allclose(gg.numpy(), CE_GRADGRAD, rtol=1e-11, atol=1e-15)

    def grad_dot_v(x):
        g = core.grad(lambda x: core.nll_loss(core.log_softmax(x, 1), t._value(), core.asarray(W)))(x)
        return core.sum(g * core.asarray(V))
    np.testing.assert_allclose(np.asarray(core.grad(grad_dot_v)(core.asarray(X((4, 3))))), CE_GRADGRAD,
                               rtol=1e-11, atol=1e-15)


def test_label_smoothing_over_spatial_dims_equals_pytorch():
    xt = torch.tensor(X((2, 3, 2)), requires_grad=True)
    loss = F.cross_entropy(xt, torch.tensor(np.array(TARGETS[(2, 3, 2)])), reduction="sum", label_smoothing=0.1)
    assert loss.item() == pytest.approx(CE_SMOOTH, rel=1e-13)
    loss.backward()
    np.testing.assert_allclose(xt.grad.numpy(), CE_SMOOTH_GRAD, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("batched", ["x", "target", "both", "weight"])
def test_vmap_equals_a_loop_over_the_batch(reduction, batched):
    rng = np.random.default_rng(2)
    xs, ws = rng.standard_normal((3, 4, 5)), rng.random((3, 5)) + 0.1
    ts = rng.integers(0, 5, (3, 4))
    ts[0, :2] = ts[2, :] = -100  # (the last element: every position ignored, a nan mean)
    x_b = xs if batched in ("x", "both", "weight") else xs[0]
    t_b = ts if batched in ("target", "both", "weight") else ts[0]
    w_b = ws if batched == "weight" else ws[0]
    axes = (0 if x_b.ndim == 3 else None, 0 if t_b.ndim == 2 else None, 0 if w_b.ndim == 2 else None)

    def f(x, t, w):
        return core.nll_loss(x, t, w, reduction=reduction)
    got = np.asarray(core.vmap(f, in_axes=axes)(core.asarray(x_b), core.asarray(t_b), core.asarray(w_b)))
    for b in range(3):
        pick = [a[b] if ax == 0 else a for a, ax in zip((x_b, t_b, w_b), axes)]
        np.testing.assert_allclose(got[b], np.asarray(f(*map(core.asarray, pick))), rtol=1e-14, equal_nan=True)
    # and the gradient, batched (nll_loss_backward's batching rule)
    if reduction != "none" and batched != "weight":
        grads = core.vmap(core.grad(lambda x, t: core.nll_loss(x, t, core.asarray(ws[0]), reduction=reduction)),
                          in_axes=axes[:2])(core.asarray(x_b), core.asarray(t_b))
        for b in range(3):
            x1, t1 = (a[b] if ax == 0 else a for a, ax in zip((x_b, t_b), axes[:2]))
            want = core.grad(lambda x: core.nll_loss(x, core.asarray(t1), core.asarray(ws[0]),
                                                     reduction=reduction))(core.asarray(x1))
            np.testing.assert_allclose(np.asarray(grads)[b], np.asarray(want), rtol=1e-14)


def test_out_of_range_target_raises_index_error_in_eager_core_jit_and_compile():
    logits = torch.tensor(X((3, 4)).astype(np.float32))
    bad = torch.tensor(np.array([0, -100, 7]))
    with pytest.raises(IndexError, match=r"^Target 7 is out of bounds\.$"):
        F.cross_entropy(logits, bad)
    with pytest.raises(IndexError, match=r"^Target -1 is out of bounds\.$"):
        core.nll_loss(logits._value(), core.asarray(np.array([0, -1, 2])))
    jitted = core.jit(lambda x, t: core.nll_loss(core.log_softmax(x, 1), t))
    jitted(logits._value(), core.asarray(np.array([0, 1, 2])))
    with pytest.raises(IndexError, match=r"^Target 7 is out of bounds\.$"):
        jitted(logits._value(), bad._value())
    compiled = torch.compile(lambda x, t: F.cross_entropy(x, t))
    compiled(logits, torch.tensor(np.array([0, 1, 2])))
    with pytest.raises(IndexError, match=r"^Target 7 is out of bounds\.$"):
        compiled(logits, bad)


def test_a_weight_that_requires_grad_is_pytorchs_runtime_error():
    x, t = torch.tensor(X((3, 3)), requires_grad=True), torch.tensor(np.array([0, 1, 2]))
    w = torch.tensor(W, requires_grad=True)
    with pytest.raises(RuntimeError, match="'nll_loss_forward' is not differentiable with respect to argument "
                                           "'weight'"):
        F.nll_loss(x, t, weight=w)
    with pytest.raises(RuntimeError, match="'nll_loss2d_forward'"):
        F.cross_entropy(torch.tensor(X((3, 3, 2))), torch.tensor(np.zeros((3, 2), np.int64)), weight=w)
    with torch.no_grad():
        want = -(W * X((3, 3))[[0, 1, 2], [0, 1, 2]]).sum() / W.sum()
        assert F.nll_loss(x, t, weight=w).item() == pytest.approx(want, rel=1e-13)


def test_meta_rule_errors_name_the_op_and_shapes():
    x = core.asarray(np.zeros((3, 4)))
    with pytest.raises(ValueError, match=r"nll_loss: target shape \(2,\) does not match input shape \(3, 4\)"):
        core.nll_loss(x, core.asarray(np.zeros(2, np.int64)))
    with pytest.raises(TypeError, match="nll_loss: target must be an integer array, got float64"):
        core.nll_loss(x, core.asarray(np.zeros(3)))
    with pytest.raises(ValueError, match=r"nll_loss: weight of shape \(3,\) does not match the 4 classes"):
        core.nll_loss(x, core.asarray(np.zeros(3, np.int64)), core.asarray(np.ones(3)))
    with pytest.raises(TypeError, match="nll_loss: weight dtype float32 differs from the input's float64"):
        core.nll_loss(x, core.asarray(np.zeros(3, np.int64)), core.asarray(np.ones(4, np.float32)))
    with pytest.raises(ValueError, match="nll_loss: reduction must be one of"):
        core.nll_loss(x, core.asarray(np.zeros(3, np.int64)), reduction="avg")
    with pytest.raises(ValueError, match=r"nll_loss_backward: gradient shape \(3,\) does not match \(\)"):
        core.nll_loss_backward_p.bind(core.asarray(np.zeros(3)), core.asarray(np.zeros(3, np.int64)),
                                      ignore_index=-100, reduction="mean", num_classes=4)


def test_traced_gradient_of_cross_entropy_is_a_few_equations():
    # the composite's gradient (ne, where, check_index x3, as_strided, gather, take, where, neg, mul, sums, div,
    # reciprocal, broadcast, index_add, reshape, scatter_add, ...) traced to 28 equations with a weight, 26
    # without; the primitive pair to 7 (log_softmax, nll_loss, nll_loss_backward and log_softmax's VJP)
    x = core.asarray(np.ones((128, 10), np.float32))
    t = core.asarray(np.arange(128) % 10)
    w = core.asarray(np.ones(10, np.float32))
    for weight in (None, w):
        def loss(x, t):
            return F.cross_entropy(torch.Tensor._from_value(x), torch.Tensor._from_value(t),
                                   weight=None if weight is None else torch.Tensor._from_value(weight))._value()
        jaxpr = core.make_jaxpr(core.grad(loss))(x, t)
        assert len(jaxpr.eqns) <= 8, str(jaxpr)
        assert sum(e.prim is core.nll_loss_backward_p for e in jaxpr.eqns) == 1


def test_core_derivatives_with_respect_to_the_weight_are_refused_not_zero():
    x = core.asarray(np.random.default_rng(0).standard_normal((4, 3)))
    t = core.asarray(np.array([0, 2, 1, 1]))
    w = core.asarray(np.array([0.2, 1.0, 3.0]))
    for reduction in ("sum", "mean", "none"):
        def loss(w, reduction=reduction):
            return core.sum(core.nll_loss(x, t, w, reduction=reduction))
        with pytest.raises(NotImplementedError, match="derivative with respect to weight is not implemented"):
            core.grad(loss)(w)
        with pytest.raises(NotImplementedError, match="derivative with respect to weight is not implemented"):
            core.jvp(loss, (w,), (core.asarray(np.ones(3)),))
    # the input's derivatives, with the weight held constant, still run (both modes agree)
    g = core.grad(lambda x: core.nll_loss(x, t, w, reduction="sum"))(x)
    _, tangent = core.jvp(lambda x: core.nll_loss(x, t, w, reduction="sum"), (x,), (core.asarray(np.ones((4, 3))),))
    assert np.isclose(float(np.asarray(tangent)), float(np.asarray(g).sum()))


def test_the_torch_face_refuses_a_weight_of_another_dtype_and_a_float_ignore_index_as_pytorch():
    x = torch.randn(4, 3, dtype=torch.float64).log_softmax(1)
    t = torch.tensor([0, 1, 2, 1])
    for f in (F.nll_loss, F.cross_entropy):  # (PyTorch 2.13's messages)
        with pytest.raises(RuntimeError, match="expected scalar type Double but found Float"):
            f(x, t, weight=torch.ones(3))
    with pytest.raises(TypeError, match=r"nll_loss_nd\(\): argument 'ignore_index' \(position 5\) must be int, not "
                                        "float"):
        F.nll_loss(x, t, ignore_index=1.0)
    with pytest.raises(TypeError, match=r"cross_entropy_loss\(\): argument 'ignore_index' \(position 5\) must be "
                                        "int, not float"):
        F.cross_entropy(x, t, ignore_index=1.0)
    assert np.isclose(float(F.nll_loss(x, t, ignore_index=np.int64(1))), float(F.nll_loss(x, t, ignore_index=1)))


def test_under_cpu_autocast_the_losses_run_in_float32_as_pytorchs():
    x, t, w = torch.randn(4, 3), torch.tensor([0, 1, 2, 1]), torch.ones(3)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = torch.nn.Linear(3, 3)(x)
        assert y.dtype == torch.bfloat16
        assert F.cross_entropy(y, t, weight=w).dtype == torch.float32
        assert F.nll_loss(y.log_softmax(1), t, weight=w).dtype == torch.float32
    assert F.cross_entropy(x.to(torch.bfloat16), t).dtype == torch.bfloat16  # (outside: the input's dtype)
