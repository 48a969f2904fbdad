"""The fused recurrent-layer primitives (core/ops/rnn.py) and the nn layers built on them.

The step-by-step composites are the reference: the fused primitives give their values and their
derivatives (first and second order, forward mode, vmap) in float64; nn.LSTM / GRU / RNN on the fused path
equal the step-by-step path (`_run_steps`, the packed-sequence path) in values and gradients;
torch.autograd.gradcheck and gradgradcheck pass through the layers; meta arrays give shapes only; bad
shapes and dtypes raise errors naming the op.
"""
import numpy as np
import pytest

import mindtorch_v2 as torch
from mindtorch_v2 import core
from mindtorch_v2.autograd import gradcheck, gradgradcheck
from mindtorch_v2.core.ops import rnn

T, B, H, P = 4, 3, 4, 2


def _arrays(seed, *shapes):
    rng = np.random.default_rng(seed)
    return [core.asarray(rng.standard_normal(s) * 0.6) for s in shapes]


CASES = {
    "lstm": (rnn.lstm_layer_p, rnn._lstm_forward, ((T, B, 4 * H), (B, H), (B, H), (4 * H, H)), {}),
    "lstm_proj": (rnn.lstm_layer_p, rnn._lstm_forward, ((T, B, 4 * H), (B, P), (B, H), (4 * H, P), (P, H)), {}),
    "gru": (rnn.gru_layer_p, rnn._gru_forward, ((T, B, 3 * H), (B, H), (3 * H, H), (3 * H,)), {}),
    "gru_no_bias": (rnn.gru_layer_p, rnn._gru_forward, ((T, B, 3 * H), (B, H), (3 * H, H)), {}),
    "rnn_tanh": (rnn.rnn_layer_p, rnn._rnn_forward, ((T, B, H), (B, H), (H, H)), {"nonlinearity": "tanh"}),
    "rnn_relu": (rnn.rnn_layer_p, rnn._rnn_forward, ((T, B, H), (B, H), (H, H)), {"nonlinearity": "relu"}),
}


def _close(xs, ys, tol=1e-12):
    xs = xs if isinstance(xs, (tuple, list)) else (xs,)
    ys = ys if isinstance(ys, (tuple, list)) else (ys,)
    assert len(xs) == len(ys)
    for x, y in zip(xs, ys):
        assert x.shape == y.shape
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(CASES))
def test_fused_layer_equals_the_composite_in_values_and_gradients(name):
    prim, composite, shapes, params = CASES[name]
    args = _arrays(1, *shapes)
    fused = lambda *xs: prim.bind(*xs, **params)  # noqa: E731
    ref = lambda *xs: composite(*xs, **params)  # noqa: E731
    out = fused(*args)
    _close(out, ref(*args))
    cts = tuple(_arrays(2, *[o.shape for o in out]))
    _close(core.vjp(fused, *args)[1](cts), core.vjp(ref, *args)[1](cts))
    tangents = _arrays(3, *shapes)
    _close(core.jvp(fused, args, tangents)[1], core.jvp(ref, args, tangents)[1])


@pytest.mark.parametrize("name", ["lstm", "lstm_proj", "gru", "rnn_tanh"])
def test_fused_layer_second_order_equals_the_composite(name):
    prim, composite, shapes, params = CASES[name]
    args = _arrays(4, *shapes)
    cts = tuple(_arrays(5, *[o.shape for o in prim.bind(*args, **params)]))
    ws = _arrays(6, *shapes)

    def inner(f):
        def h(*xs):
            grads = core.vjp(f, *xs)[1](cts)
            return sum(core.sum(g * w) for g, w in zip(grads, ws))
        return h
    argnums = tuple(range(len(args)))
    fused = core.grad(inner(lambda *xs: prim.bind(*xs, **params)), argnums=argnums)(*args)
    ref = core.grad(inner(lambda *xs: composite(*xs, **params)), argnums=argnums)(*args)
    _close(fused, ref, 1e-11)
    # forward over reverse agrees too
    tangents = _arrays(7, *shapes)
    _close(core.jvp(inner(lambda *xs: prim.bind(*xs, **params)), args, tangents)[1],
           core.jvp(inner(lambda *xs: composite(*xs, **params)), args, tangents)[1], 1e-11)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("batched_weights", [False, True])
def test_vmap_of_the_fused_layer_equals_vmap_of_the_composite(name, batched_weights):
    prim, composite, shapes, params = CASES[name]
    rng = np.random.default_rng(8)
    args = [core.asarray(rng.standard_normal((2,) + s) * 0.6) for s in shapes]
    # sequences mapped over their last axis, states over the first; weights mapped or shared
    in_axes = tuple(3 if len(s) == 3 else 0 if i < 3 and len(s) == 2 and s[0] == B else (0 if batched_weights
                                                                                          else None)
                    for i, s in enumerate(shapes))
    args = [core.moveaxis(a, 0, ax) if ax is not None else a[0] for a, ax in zip(args, in_axes)]
    fused = core.vmap(lambda *xs: prim.bind(*xs, **params), in_axes=in_axes)(*args)
    ref = core.vmap(lambda *xs: composite(*xs, **params), in_axes=in_axes)(*args)
    _close(fused, ref)
    # and per example, as a loop
    for k in range(2):
        one = [core.take(a, k, axis=ax) if ax is not None else a for a, ax in zip(args, in_axes)]
        _close([o[k] for o in fused], prim.bind(*[core.asarray(np.asarray(a)) for a in one], **params))


def test_the_backward_primitives_have_their_composites_derivatives():
    gx, h0, c0, w = _arrays(9, (T, B, 4 * H), (B, H), (B, H), (4 * H, H))
    out = rnn.lstm_layer_p.bind(gx, h0, c0, w)[0]
    cts = _arrays(10, (T, B, H), (B, H), (B, H))
    args = (gx, h0, c0, w, out) + tuple(cts)
    fused = rnn.lstm_layer_vjp_p.bind(*args)
    _close(fused, rnn._lstm_backward(*args))
    v = tuple(_arrays(11, *[o.shape for o in fused]))
    _close(core.vjp(lambda *xs: rnn.lstm_layer_vjp_p.bind(*xs), *args)[1](v),
           core.vjp(rnn._lstm_backward, *args)[1](v))



@pytest.mark.parametrize("proj", [False, True])
def test_the_backward_from_saved_activations_has_its_composites_values_and_derivatives(proj):
    p = P if proj else H
    gx, h0, c0, w, w_r = _arrays(12, (T, B, 4 * H), (B, p), (B, H), (4 * H, p), (p, H))
    w_hr = (w_r,) if proj else ()
    acts = rnn.lstm_layer_p.bind(gx, h0, c0, w, *w_hr)[3]
    g_out, g_hn, g_cn, g_acts = _arrays(13, (T, B, p), (B, p), (B, H), acts.shape)
    args = (acts, c0, w, g_out, g_hn, g_cn, g_acts) + w_hr
    fused = lambda *xs: rnn.lstm_layer_vjp_p.bind(*xs, saved=True)  # noqa: E731
    ref = lambda *xs: rnn._lstm_backward(*xs, saved=True)  # noqa: E731
    out = fused(*args)
    _close(out, ref(*args))
    v = tuple(_arrays(14, *[o.shape for o in out]))
    _close(core.vjp(fused, *args)[1](v), core.vjp(ref, *args)[1](v))
    tangents = _arrays(15, *[a.shape for a in args])
    _close(core.jvp(fused, args, tangents)[1], core.jvp(ref, args, tangents)[1])


def test_the_backward_from_saved_activations_checks_its_shapes():
    gx, h0, c0, w = _arrays(16, (T, B, 4 * H), (B, H), (B, H), (4 * H, H))
    acts = rnn.lstm_layer_p.bind(gx, h0, c0, w)[3]
    g = _arrays(17, (T, B, H), (B, H), (B, H))
    with pytest.raises(ValueError, match="lstm_layer_vjp.*activations' cotangent"):
        rnn.lstm_layer_vjp_p.bind(acts, c0, w, *g, gx, saved=True)
    with pytest.raises(ValueError, match="lstm_layer_vjp.*saved activations"):
        rnn.lstm_layer_vjp_p.bind(gx, c0, w, *g, gx, saved=True)


# ---------------------------------------------------------------------------
# the nn layers


MODULES = {
    "lstm": lambda: torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True, dtype=torch.float64),
    "lstm_proj": lambda: torch.nn.LSTM(3, 4, proj_size=2, num_layers=2, batch_first=True, dtype=torch.float64),
    "gru": lambda: torch.nn.GRU(3, 4, num_layers=2, bidirectional=True, dtype=torch.float64),
    "gru_no_bias": lambda: torch.nn.GRU(3, 4, bias=False, dtype=torch.float64),
    "rnn_tanh": lambda: torch.nn.RNN(3, 4, bidirectional=True, dtype=torch.float64),
    "rnn_relu": lambda: torch.nn.RNN(3, 4, nonlinearity="relu", num_layers=2, dtype=torch.float64),
}


def _module_inputs(m, seed=12):
    torch.manual_seed(seed)
    d = 2 if m.bidirectional else 1
    x = torch.randn(5, 2, 3, dtype=torch.float64, requires_grad=True)
    h = torch.randn(m.num_layers * d, 2, m.proj_size or m.hidden_size, dtype=torch.float64, requires_grad=True)
    c = torch.randn(m.num_layers * d, 2, m.hidden_size, dtype=torch.float64, requires_grad=True)
    return x, h, c


@pytest.mark.parametrize("name", sorted(MODULES))
def test_fused_layers_equal_the_step_by_step_path(name):
    torch.manual_seed(0)
    m = MODULES[name]()
    x, h, c = _module_inputs(m)
    c = c if isinstance(m, torch.nn.LSTM) else None
    fused = m._run(x, None, h, c)  # (time-major, as _forward hands it over)
    steps = m._run_steps(x, [x.shape[0]] * x.shape[1], h, c)
    for a, b in zip(fused, steps):
        if a is not None:
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-12)
    inputs = [t for t in (x, h, c) if t is not None] + list(m.parameters())
    seeds = [torch.randn(*o.shape, dtype=torch.float64) for o in fused if o is not None]
    g_fused = torch.autograd.grad([o for o in fused if o is not None], inputs, seeds)
    g_steps = torch.autograd.grad([o for o in steps if o is not None], inputs, seeds)
    for a, b in zip(g_fused, g_steps):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("name", ["lstm", "lstm_proj", "gru", "rnn_tanh"])
def test_gradcheck_and_gradgradcheck_through_the_layers(name):
    torch.manual_seed(1)
    m = MODULES[name]()
    x, h, c = _module_inputs(m, seed=13)
    x = x[:3].detach().requires_grad_()
    lstm = isinstance(m, torch.nn.LSTM)
    if m.batch_first:
        x = x.transpose(0, 1).detach().requires_grad_()
    params = list(m.parameters())[:2]  # the first layer's weights (keeps the Jacobians small)

    def f(x, h, c, *ws):
        out, state = m(x, (h, c) if lstm else h)
        return out, (state[0] if lstm else state)
    inputs = (x, h, c) + tuple(params)
    assert gradcheck(f, inputs)
    assert gradgradcheck(f, inputs)


def test_equal_length_packed_sequences_take_the_fused_path_with_the_same_values():
    torch.manual_seed(2)
    m = torch.nn.LSTM(3, 4, bidirectional=True, dtype=torch.float64)
    x = torch.randn(5, 2, 3, dtype=torch.float64)
    packed = torch.nn.utils.rnn.pack_padded_sequence(x, [5, 5])
    out_p, (h_p, c_p) = m(packed)
    out, (h, c) = m(x)
    padded, _ = torch.nn.utils.rnn.pad_packed_sequence(out_p)
    np.testing.assert_allclose(padded.detach().numpy(), out.detach().numpy(), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(h_p.detach().numpy(), h.detach().numpy(), rtol=1e-13, atol=1e-13)


def test_layers_on_the_meta_device_give_shapes_only():
    for m, shapes in ((torch.nn.LSTM(3, 5, num_layers=2, proj_size=2, bidirectional=True, device="meta"),
                       [(7, 4, 4), (4, 4, 2), (4, 4, 5)]),
                      (torch.nn.GRU(3, 5, batch_first=True, device="meta"), [(4, 7, 5), (1, 4, 5)]),
                      (torch.nn.RNN(3, 5, nonlinearity="relu", device="meta"), [(7, 4, 5), (1, 4, 5)])):
        x = torch.empty((4, 7, 3) if m.batch_first else (7, 4, 3), device="meta", requires_grad=True)
        out, state = m(x)
        flat = [out] + (list(state) if isinstance(state, tuple) else [state])
        assert [tuple(t.shape) for t in flat] == shapes
        assert all(t.device.type == "meta" for t in flat)
        out.sum().backward()
        assert x.grad.shape == x.shape and x.grad.device.type == "meta"


def test_core_primitives_on_meta_arrays():
    gx, h0, c0, w = [core.zeros(s, device=core.meta) for s in ((T, B, 4 * H), (B, H), (B, H), (4 * H, H))]
    out, h, c, acts = rnn.lstm_layer_p.bind(gx, h0, c0, w)
    assert (out.shape, h.shape, c.shape, acts.shape) == ((T, B, H), (B, H), (B, H), (T, B, 6 * H))
    grads = core.vjp(lambda *xs: rnn.lstm_layer_p.bind(*xs), gx, h0, c0, w)[1]((out, h, c, acts))
    assert [g.shape for g in grads] == [a.shape for a in (gx, h0, c0, w)]


@pytest.mark.parametrize("call, words", [
    (lambda: rnn.lstm_layer(*_arrays(0, (T, B, 4 * H + 1), (B, H), (B, H), (4 * H, H))), "(T, B, 4 * hidden)"),
    (lambda: rnn.lstm_layer(*_arrays(0, (T, B, 4 * H), (B, H), (B, H), (4 * H, H + 1))), "recurrent weight"),
    (lambda: rnn.lstm_layer(*_arrays(0, (T, B, 4 * H), (B + 1, H), (B, H), (4 * H, H))), "initial hidden state"),
    (lambda: rnn.lstm_layer(*_arrays(0, (T, B, 4 * H), (B, H), (B, H + 1), (4 * H, H))), "initial cell state"),
    (lambda: rnn.lstm_layer(*_arrays(0, (T, B, 4 * H), (B, P), (B, H), (4 * H, P), (P, H + 1))), "projection"),
    (lambda: rnn.gru_layer(*_arrays(0, (T, B, 3 * H), (B, H), (3 * H, H), (H,))), "recurrent bias"),
    (lambda: rnn.rnn_layer(*_arrays(0, (0, B, H), (B, H), (H, H))), "at least one step"),
    (lambda: rnn.rnn_layer(*_arrays(0, (T, B, H), (B, H), (H, H)), nonlinearity="gelu"), "nonlinearity"),
    (lambda: rnn.lstm_layer_vjp_p.bind(*_arrays(0, (T, B, 4 * H), (B, H), (B, H), (4 * H, H), (T, B, H),
                                                (T + 1, B, H), (B, H), (B, H))), "output cotangent"),
])
def test_bad_shapes_raise_errors_naming_the_op(call, words):
    with pytest.raises(ValueError, match="layer") as info:
        call()
    assert words in str(info.value)


def test_mixed_dtypes_raise_type_errors():
    gx, h0, c0, w = _arrays(0, (T, B, 4 * H), (B, H), (B, H), (4 * H, H))
    with pytest.raises(TypeError, match="lstm_layer"):
        rnn.lstm_layer(gx, core.astype(h0, core.float32), c0, w)
    with pytest.raises(TypeError, match="lstm_layer"):
        rnn.lstm_layer(core.astype(gx, core.int64), h0, c0, w)


@pytest.mark.parametrize("batched_weights", [False, True])
def test_vmap_of_the_backward_from_saved_activations_equals_vmap_of_its_composite(batched_weights):
    rng = np.random.default_rng(18)
    shapes = ((T, B, 6 * H), (B, H), (4 * H, H), (T, B, H), (B, H), (B, H), (T, B, 6 * H))
    roles = ("seq", "state", "weight", "seq", "state", "state", "seq")
    args = [core.asarray(np.tanh(rng.standard_normal((2,) + s))) for s in shapes]
    in_axes = tuple(3 if r == "seq" else 0 if r == "state" else (0 if batched_weights else None) for r in roles)
    args = [core.moveaxis(a, 0, ax) if ax is not None else a[0] for a, ax in zip(args, in_axes)]
    fused = core.vmap(lambda *xs: rnn.lstm_layer_vjp_p.bind(*xs, saved=True), in_axes=in_axes)(*args)
    ref = core.vmap(lambda *xs: rnn._lstm_backward(*xs, saved=True), in_axes=in_axes)(*args)
    _close(fused, ref)
