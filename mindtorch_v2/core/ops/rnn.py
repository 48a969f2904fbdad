"""Recurrent layers: one direction of one layer of an LSTM, GRU or Elman RNN per bind.

Each layer primitive takes the input projection of every step, already computed as one product
(gx = x W_ih^T + b_ih, shape (T, B, G)), the initial state and the recurrent weights, and returns the
output sequence and the final state(s). Time runs forward; the layer reverses its input for the
backward direction. Gates, in torch's order of the weight rows:

    lstm_layer (gx, h0, c0, w_hh[, w_hr]) -> (out, h_n, c_n, acts)  gates i, f, g, o
        pre = gx_t + h W_hh^T;  c' = s(f) c + s(i) tanh(g);  m = s(o) tanh(c');  h' = m (or m W_hr^T)
    gru_layer  (gx, h0, w_hh[, b_hh])      -> (out, h_n)            gates r, z, n
        gh = h W_hh^T + b_hh;  r, z = s(gx_rz + gh_rz);  n = tanh(gx_n + r gh_n);  h' = (1 - z) n + z h
    rnn_layer  (gx, h0, w_hh)              -> (out, h_n)            h' = tanh|relu(gx_t + h W_hh^T)

(s is the logistic sigmoid; the biases that simply add to the pre-activation are folded into gx.)

Why primitives (STYLE: promote a composite only for a measured reason): the step-by-step composite is
~20 small binds per step, about 17x PyTorch's time for a (8, 20, 32) -> 64 LSTM in eager; the fused
lowering is one NumPy loop over time. The composites below (`_lstm_forward`, ...) are the reference
semantics: the JVP rules run them under forward mode, vmap with batched weights runs them under vmap.

Backward through time is a primitive of its own per cell (lstm_layer_vjp, ...), bound by the layer's
VJP rules, with a fast NumPy lowering. It is a function of the layer's inputs, its output sequence
`out` and the cotangents. It reads the previous states from `out` (teacher forcing: the previous state of
step t is out[t - 1], or h0), recomputes every step's gates from them in one product, then runs the
recurrence of the cotangents backwards. Its composite (`_lstm_backward`, ...) computes the same function
with core ops: the per-step VJP of the pointwise cell (`_lstm_cell`, ...) chained by the recurrent
products. The backward primitive's own VJP and JVP rules run that composite under reverse and forward
mode, so every derivative order is the composite cell's, while first order runs the NumPy loop.

The LSTM saves its activations instead (cuDNN's reserve space, as an ordinary output): lstm_layer's fourth
result `acts` (T, B, 6H) holds every step's s(i), s(f), tanh(g), s(o), c_t and tanh(c_t), and its VJP binds
lstm_layer_vjp in the form saved=True, (acts, c0, w_hh, g_out, g_hn, g_cn, g_acts[, w_hr]): backward through
time as a function of the saved activations (and of their own cotangent, a broadcast zero unless someone
differentiates through them), so no product or tanh is recomputed: the (8, 20, 32) -> 64 LSTM's backward
lowering 213 -> 108 us. The recomputing form stays for callers holding only the output sequence.

The backward primitive returns what the layer's rules need per batch element (so that vmap can fold its
axis into the batch): the cotangents of gx, h0 (and c0), of the per-step products h W_hh^T (GRU), and
for an LSTM projection the total cotangent of every h_t with the unprojected m_t. The weight gradients
are then single products over all steps in the layer's VJP rules.

Loops over time (issue 14, "fused kernels where they win"): each cpu lowering prepares its arrays in NumPy
(the one-product gate recomputation, every pointwise pass over all steps) and runs only its sequential loop
through `_loop`. That loop is a NumPy function here (`_lstm_forward_loop`, ...: the reference, and the only
path without numba or for other dtypes than float32/float64) with a numba twin of the same name in
_rnn_kernels (per-step BLAS product, then one fused pointwise pass; same operations in the same order and
dtype, so results differ only by tanh's rounding: our vectorized tanh, not NumPy's). Chosen by measurement,
once per (loop, dtype, shapes, flags): the first call compiles the kernel (~1 s per kernel and dtype, cached
on disk), times both loops on the call's own arguments (best of 3) and keeps the faster for that signature.
Measured, (8, 20, 32) -> 64 float32: the LSTM forward loop 250 -> 160 us, its backward loop 200 -> 70 us.
The LSTM backward loop takes the gates as tanh'd pre-activations and does every pointwise pass of the step
itself (no tanh inside: its numba twin gives NumPy's bits), so its lowering is one product, two tanh passes
and the two loops: 268 -> 196 us.

All the rules of one primitive need one run of the backward pass: `_shared` runs it once per call of the
rules (the interpreters call an input's rule with the same cotangent tuple object, one input after another).
"""
import threading
import timeit

import numpy as np

from .. import _numba
from ..autodiff import JVPTrace, JVPTracer, vjp_flat
from ..batching import BatchTrace, BatchTracer
from ..primitive import Primitive, new_main, zeros_like
from . import _family, _rnn_kernels
from ._family import bdim_size, broadcast_batch
from .elementwise import add, mul, relu, sigmoid, sub, tanh
from .linalg import matmul
from .reduction import sum as _sum
from .shape import concatenate, expand_dims, reshape, stack, static_slice, transpose

__all__ = ["lstm_layer_p", "lstm_layer_vjp_p", "gru_layer_p", "gru_layer_vjp_p", "rnn_layer_p", "rnn_layer_vjp_p",
           "lstm_layer", "gru_layer", "rnn_layer"]


# ---------------------------------------------------------------------------
# shared helpers (static shapes, core ops)


def _check(name, gx, h0, w_hh, gates, c0=None, w_hr=None, b_hh=None):
    """(T, B, H, P) of a layer's inputs, or the error naming the op and the shapes."""
    for a in (gx, h0, w_hh) + tuple(a for a in (c0, w_hr, b_hh) if a is not None):
        _family.require_float(name, a)
    _family.same_dtype(name, *(a for a in (gx, h0, c0, w_hh, w_hr, b_hh) if a is not None))
    if gx.ndim != 3 or gx.shape[2] % gates or gx.shape[2] == 0:
        raise ValueError(f"{name}: the input projection must have shape (T, B, {gates} * hidden), got {gx.shape}")
    steps, batch, hidden = gx.shape[0], gx.shape[1], gx.shape[2] // gates
    if steps < 1:
        raise ValueError(f"{name}: expected a sequence of at least one step, got the input projection {gx.shape}")
    if w_hr is not None and (w_hr.ndim != 2 or w_hr.shape[1] != hidden):
        raise ValueError(f"{name}: the projection weight must have shape (proj, {hidden}), got {w_hr.shape}")
    proj = hidden if w_hr is None else w_hr.shape[0]
    if w_hh.shape != (gates * hidden, proj):
        raise ValueError(f"{name}: the recurrent weight must have shape {(gates * hidden, proj)} for the input "
                         f"projection {gx.shape}, got {w_hh.shape}")
    if h0.shape != (batch, proj):
        raise ValueError(f"{name}: the initial hidden state must have shape {(batch, proj)}, got {h0.shape}")
    if c0 is not None and c0.shape != (batch, hidden):
        raise ValueError(f"{name}: the initial cell state must have shape {(batch, hidden)}, got {c0.shape}")
    if b_hh is not None and b_hh.shape != (gates * hidden,):
        raise ValueError(f"{name}: the recurrent bias must have shape {(gates * hidden,)}, got {b_hh.shape}")
    return steps, batch, hidden, proj


def _check_cotangents(name, steps, batch, proj, out, g_out, g_hn, hidden=None, g_cn=None):
    for what, a, shape in (("output sequence", out, (steps, batch, proj)), ("output cotangent", g_out,
                           (steps, batch, proj)), ("final hidden state cotangent", g_hn, (batch, proj)),
                           ("final cell state cotangent", g_cn, (batch, hidden))):
        if a is not None and a.shape != shape:
            raise ValueError(f"{name}: the {what} must have shape {shape}, got {a.shape}")


def _at(x, t):
    """x[t] along the leading (time) axis."""
    return reshape(static_slice(x, (slice(t, t + 1),)), x.shape[1:])


def _cols(x, start, stop):
    """x[..., start:stop]."""
    return static_slice(x, (slice(None),) * (x.ndim - 1) + (slice(start, stop),))


def _mT(w):
    return transpose(w, (1, 0))


def _previous(h0, out):
    """The state each step starts from: h0, out[0], ..., out[T - 2] (T, B, P)."""
    return concatenate([expand_dims(h0, 0), static_slice(out, (slice(0, out.shape[0] - 1),))], 0)


def _flat(x):
    """(T, B, F) -> (T * B, F)."""
    return reshape(x, (x.shape[0] * x.shape[1], x.shape[2]))


def _weight_grad(d, x):
    """sum over steps and batch of d_t^T x_t: (T, B, G), (T, B, F) -> (G, F)."""
    return matmul(_mT(_flat(d)), _flat(x))


def _zeros_for(args, cts):
    return [zeros_like(a) if c is None else c for a, c in zip(args, cts)]


# The rules of one primitive share one backward pass (see the module docstring). One entry per thread:
# the cotangent tuple, the primal output and the inputs of the last call, by identity, and its result.
class _Last(threading.local):
    key = None
    value = None


_last = _Last()


def _shared(g, out, args, compute):
    key = (g, out) + tuple(args)
    last = _last.key
    if last is not None and len(last) == len(key) and all(a is b for a, b in zip(last, key)):
        return _last.value
    _last.key = None  # (a failing compute leaves no stale entry)
    value = compute()
    _last.key, _last.value = key, value
    return value


def _composite_vjp(composite, n_inputs):
    """The VJP rules (one per input) of a primitive whose values are composite(*args, **params): the
    composite's reverse pass, run once for all inputs."""
    def all_cts(g, out, args, params):
        def run():
            _, pull = vjp_flat(lambda xs: list(composite(*xs, **params)), list(args))
            return _zeros_for(args, pull(list(g)))
        return _shared(g, out, args, run)

    def rule(i):
        return lambda g, out, *args, **params: all_cts(g, out, args, params)[i]
    return tuple(rule(i) for i in range(n_inputs))


def _composite_jvp(composite):
    """A JVP rule: the composite under forward mode."""
    def jvp(tangents, out, *args, **params):
        with new_main(JVPTrace) as main:
            outs = composite(*[JVPTracer(main, a, t) for a, t in zip(args, tangents)], **params)
            return tuple(o.tangent if type(o) is JVPTracer and o._main is main else None for o in outs)
    return jvp


# batching: vmap's axis folds into the batch axis (axis 1 of sequences, 0 of states); the weights must be
# unbatched for that. With batched weights each batch element has its own recurrence: the composite runs
# under vmap instead.
SEQ, STATE, WEIGHT = "seq", "state", "weight"


def _batch_rule(prim, composite, in_roles, out_roles):
    def rule(vals, bdims, **params):
        ins = in_roles(len(vals), **params)
        n = bdim_size(vals, bdims)
        if any(d is not None for d, r in zip(bdims, ins) if r is WEIGHT):
            return _vmapped(composite, vals, bdims, params, n), 0
        args = []
        for v, d, r in zip(vals, bdims, ins):
            if r is WEIGHT:
                args.append(v)
                continue
            v = broadcast_batch(v, d, n)
            if r is SEQ:  # (n, T, B, F) -> (T, n * B, F)
                v = transpose(v, (1, 0, 2, 3))
                v = reshape(v, (v.shape[0], n * v.shape[2], v.shape[3]))
            else:
                v = reshape(v, (n * v.shape[1], v.shape[2]))
            args.append(v)
        outs = prim.bind(*args, **params)
        res, res_dims = [], []
        for o, r in zip(outs, out_roles(len(outs), **params)):
            if r is SEQ:
                res.append(reshape(o, (o.shape[0], n, o.shape[1] // n, o.shape[2])))
                res_dims.append(1)
            else:
                res.append(reshape(o, (n, o.shape[0] // n, o.shape[1])))
                res_dims.append(0)
        return tuple(res), tuple(res_dims)
    return rule


def _vmapped(composite, vals, bdims, params, n):
    with new_main(BatchTrace) as main:
        main.trace.axis_size = n
        outs = composite(*[v if d is None else BatchTracer(main, v, d) for v, d in zip(vals, bdims)], **params)
        res = []
        for o in outs:
            if type(o) is BatchTracer and o._main is main:
                res.append(broadcast_batch(o.val, o.bdim, n))
            else:
                res.append(broadcast_batch(o, None, n))
        return tuple(res)


# NumPy helpers of the lowerings. They keep torch's (T, B, G) layout throughout (no transposes: with a
# batch of 8 a transposing copy costs as much as ten steps). A logistic gate is 0.5 tanh(x / 2) + 0.5: the
# halving is folded into its weight rows and input projection (exact: a power of two), so one tanh covers
# every gate of a step, followed by one multiply-add (by 1 and 0 on the tanh gates: exact no-ops).


def _gate_scale(dtype, hidden, logistic):
    """(scale, shift) over the gate axis: 0.5 and 0.5 on the logistic gate blocks, 1 and 0 elsewhere (read-only,
    built once per (dtype, hidden, gates): ~6 us a call otherwise)."""
    key = (np.dtype(dtype), hidden, logistic)
    got = _scales.get(key)
    if got is None:
        scale = np.ones(len(logistic) * hidden, dtype)
        shift = np.zeros(len(logistic) * hidden, dtype)
        for k, is_logistic in enumerate(logistic):
            if is_logistic:
                scale[k * hidden:(k + 1) * hidden] = 0.5
                shift[k * hidden:(k + 1) * hidden] = 0.5
        scale.flags.writeable = shift.flags.writeable = False
        got = _scales[key] = (scale, shift)
    return got


_scales = {}


# The loops over time: each lowering prepares its arrays in NumPy, then runs `_loop(numpy_loop, *args)`, which
# calls the NumPy loop or its numba twin of the same name in _rnn_kernels (see the module docstring).
_FAST_DTYPES = (np.float32, np.float64)
_numba_available = _numba.available
_chosen = {}  # (loop, dtype, shapes, flags) -> the loop that measured faster


def _loop(numpy_loop, *args):
    dtype = args[0].dtype.type
    if dtype not in _FAST_DTYPES or not _numba_available():
        return numpy_loop(*args)
    args = tuple(np.ascontiguousarray(a) if type(a) is np.ndarray else a for a in args)
    key = (numpy_loop, dtype) + tuple(a.shape if type(a) is np.ndarray else a for a in args)
    fn = _chosen.get(key)
    if fn is None:
        fn = _chosen[key] = _faster(numpy_loop, _rnn_kernels.kernels()[numpy_loop.__name__], args)
    return fn(*args)


def _faster(numpy_loop, kernel, args):
    """The faster of the two loops on these arguments (after one call of each: the kernel's compiles it)."""
    kernel(*args)
    numpy_loop(*args)
    t_kernel = min(timeit.repeat(lambda: kernel(*args), repeat=3, number=1))
    t_numpy = min(timeit.repeat(lambda: numpy_loop(*args), repeat=3, number=1))
    return kernel if t_kernel < t_numpy else numpy_loop


_LSTM_GATES = (True, True, False, True)   # i, f, g, o
_GRU_GATES = (True, True, False)          # r, z, n


def _previous_np(h0, out):
    """h0, out[0], ..., out[T - 2]: (T, B, P)."""
    return np.concatenate((h0[None], out[:-1]), axis=0)


def _blocks(a, hidden, n):
    """The n gate blocks of a (..., n * hidden) array, as views."""
    return tuple(a[..., k * hidden:(k + 1) * hidden] for k in range(n))


# ---------------------------------------------------------------------------
# LSTM


def _lstm_cell(pre, c):
    """The pointwise LSTM cell: gate pre-activations (B, 4H) and cell state -> (m, c')."""
    h = pre.shape[-1] // 4
    i, f, g, o = (_cols(pre, k * h, (k + 1) * h) for k in range(4))
    c = add(mul(sigmoid(f), c), mul(sigmoid(i), tanh(g)))
    return mul(sigmoid(o), tanh(c)), c


def _lstm_forward(gx, h0, c0, w_hh, *w_hr):
    """The reference LSTM layer, one step at a time in core ops: (out, h_n, c_n, acts), acts (T, B, 6H) every
    step's activations s(i), s(f), tanh(g), s(o), c_t, tanh(c_t) (what backward through time reads)."""
    h, c, hs, acts = h0, c0, [], []
    n = c0.shape[-1]
    for t in range(gx.shape[0]):
        pre = add(_at(gx, t), matmul(h, _mT(w_hh)))
        i, f, g, o = (_cols(pre, k * n, (k + 1) * n) for k in range(4))
        i, f, g, o = sigmoid(i), sigmoid(f), tanh(g), sigmoid(o)
        c = add(mul(f, c), mul(i, g))
        tc = tanh(c)
        m = mul(o, tc)
        h = matmul(m, _mT(w_hr[0])) if w_hr else m
        hs.append(h)
        acts.append(concatenate([i, f, g, o, c, tc], 1))
    return stack(hs, 0), h, c, stack(acts, 0)


def _lstm_backward(*args, saved=False):
    """lstm_layer_vjp's values in core ops: (d gx, d h0, d c0[, d h_t for every step, m_t for every step]).

    Two forms. saved=False: (gx, h0, c0, w_hh, out, g_out, g_hn, g_cn[, w_hr]), the gates recomputed from the
    previous states in `out`. saved=True: (acts, c0, w_hh, g_out, g_hn, g_cn, g_acts[, w_hr]), from the
    activations lstm_layer saved (and with their cotangent g_acts): lstm_layer's own VJP."""
    return _lstm_backward_saved(*args) if saved else _lstm_backward_recomputed(*args)


def _lstm_backward_recomputed(gx, h0, c0, w_hh, out, g_out, g_hn, g_cn, *w_hr):
    pre = add(gx, matmul(_previous(h0, out), _mT(w_hh)))
    pulls, ms, c = [], [], c0
    for t in range(gx.shape[0]):
        (m, c), pull = vjp_flat(lambda xs: list(_lstm_cell(*xs)), [_at(pre, t), c])
        pulls.append(pull)
        ms.append(m)
    dpre, dhs = [None] * len(pulls), [None] * len(pulls)
    dh, dc = g_hn, g_cn
    for t in reversed(range(len(pulls))):
        dh = add(dh, _at(g_out, t))
        dhs[t] = dh
        dm = matmul(dh, w_hr[0]) if w_hr else dh
        dpre[t], dc = _zeros_for((_at(pre, t), c0), pulls[t]([dm, dc]))
        dh = matmul(dpre[t], w_hh)
    res = (stack(dpre, 0), dh, dc)
    return res + (stack(dhs, 0), stack(ms, 0)) if w_hr else res


def _lstm_backward_saved(acts, c0, w_hh, g_out, g_hn, g_cn, g_acts, *w_hr):
    n = c0.shape[-1]
    steps = acts.shape[0]
    dpre, dhs = [None] * steps, [None] * steps
    dh, dc = g_hn, g_cn
    for t in reversed(range(steps)):
        i, f, g, o, c, tc = (_cols(_at(acts, t), k * n, (k + 1) * n) for k in range(6))
        gi, gf, gg, go, gc, gtc = (_cols(_at(g_acts, t), k * n, (k + 1) * n) for k in range(6))
        c_prev = c0 if t == 0 else _cols(_at(acts, t - 1), 4 * n, 5 * n)
        dh = add(dh, _at(g_out, t))
        dhs[t] = dh
        dm = matmul(dh, w_hr[0]) if w_hr else dh
        dc = add(add(dc, gc), mul(add(mul(dm, o), gtc), sub(1.0, mul(tc, tc))))
        dpre[t] = concatenate([mul(add(mul(dc, g), gi), mul(i, sub(1.0, i))),
                               mul(add(mul(dc, c_prev), gf), mul(f, sub(1.0, f))),
                               mul(add(mul(dc, i), gg), sub(1.0, mul(g, g))),
                               mul(add(mul(dm, tc), go), mul(o, sub(1.0, o)))], 1)
        dc = mul(dc, f)
        dh = matmul(dpre[t], w_hh)
    res = (stack(dpre, 0), dh, dc)
    return res + (stack(dhs, 0), mul(_cols(acts, 3 * n, 4 * n), _cols(acts, 5 * n, 6 * n))) if w_hr else res


def _lstm_meta(gx, h0, c0, w_hh, *w_hr):
    if len(w_hr) > 1:
        raise TypeError(f"lstm_layer: expected 4 or 5 arrays, got {4 + len(w_hr)}")
    steps, batch, hidden, proj = _check("lstm_layer", gx, h0, w_hh, 4, c0=c0, w_hr=w_hr[0] if w_hr else None)
    d = gx.dtype
    return ((steps, batch, proj), d), ((batch, proj), d), ((batch, hidden), d), ((steps, batch, 6 * hidden), d)


def _lstm_vjp_meta(*args, saved=False):
    name = "lstm_layer_vjp"
    if not saved:
        if len(args) not in (8, 9):
            raise TypeError(f"{name}: expected 8 or 9 arrays, got {len(args)}")
        gx, h0, c0, w_hh, out, g_out, g_hn, g_cn, *w_hr = args
        steps, batch, hidden, proj = _check(name, gx, h0, w_hh, 4, c0=c0, w_hr=w_hr[0] if w_hr else None)
        _family.same_dtype(name, gx, out, g_out, g_hn, g_cn)
        _check_cotangents(name, steps, batch, proj, out, g_out, g_hn, hidden, g_cn)
    else:
        if len(args) not in (7, 8):
            raise TypeError(f"{name}: expected 7 or 8 arrays with saved activations, got {len(args)}")
        acts, c0, w_hh, g_out, g_hn, g_cn, g_acts, *w_hr = args
        if acts.ndim != 3 or acts.shape[2] % 6:
            raise ValueError(f"{name}: the saved activations must have shape (T, B, 6 * hidden), got {acts.shape}")
        steps, batch, hidden = acts.shape[0], acts.shape[1], acts.shape[2] // 6
        proj = w_hh.shape[1] if w_hh.ndim == 2 else hidden
        for a in (acts, c0, w_hh, g_out, g_hn, g_cn, g_acts) + tuple(w_hr):
            _family.require_float(name, a)
        _family.same_dtype(name, acts, c0, w_hh, g_out, g_hn, g_cn, g_acts, *w_hr)
        if w_hh.shape != (4 * hidden, proj) or (w_hr and w_hr[0].shape != (proj, hidden)) or \
                (not w_hr and proj != hidden):
            raise ValueError(f"{name}: the recurrent weights {w_hh.shape}" + (f" and {w_hr[0].shape}" if w_hr else "")
                             + f" do not fit the saved activations {acts.shape}")
        if c0.shape != (batch, hidden):
            raise ValueError(f"{name}: the initial cell state must have shape {(batch, hidden)}, got {c0.shape}")
        if g_acts.shape != acts.shape:
            raise ValueError(f"{name}: the activations' cotangent must have shape {acts.shape}, got {g_acts.shape}")
        _check_cotangents(name, steps, batch, proj, None, g_out, g_hn, hidden, g_cn)
    d = args[0].dtype
    res = (((steps, batch, 4 * hidden), d), ((batch, proj), d), ((batch, hidden), d))
    return res + (((steps, batch, proj), d), ((steps, batch, hidden), d)) if w_hr else res


def _lstm_grads(g, out, gx, h0, c0, w_hh, *w_hr):
    """lstm_layer_vjp from the saved activations (out[3]): the layer's VJP reads no input sequence."""
    g_out, g_hn, g_cn, g_acts = g
    return _shared(g, out, (c0, w_hh) + w_hr, lambda: lstm_layer_vjp_p.bind(
        out[3], c0, w_hh, g_out, g_hn, g_cn, g_acts, *w_hr, saved=True))


lstm_layer_p = Primitive(
    "lstm_layer", _lstm_meta, multiple_results=True, vjp_reads=(1, 2, 3, 4, "out"),
    vjp=(lambda g, out, *a: _lstm_grads(g, out, *a)[0],
         lambda g, out, *a: _lstm_grads(g, out, *a)[1],
         lambda g, out, *a: _lstm_grads(g, out, *a)[2],
         lambda g, out, gx, h0, c0, w_hh, *w_hr: _weight_grad(_lstm_grads(g, out, gx, h0, c0, w_hh, *w_hr)[0],
                                                               _previous(h0, out[0])),
         lambda g, out, *a: _weight_grad(*_lstm_grads(g, out, *a)[3:5])),
    jvp=_composite_jvp(_lstm_forward))

lstm_layer_vjp_p = Primitive("lstm_layer_vjp", _lstm_vjp_meta, multiple_results=True, vjp_reads=tuple(range(9)),
                             vjp=_composite_vjp(_lstm_backward, 9), jvp=_composite_jvp(_lstm_backward))

lstm_layer_p.batch = _batch_rule(lstm_layer_p, _lstm_forward,
                                 lambda n: (SEQ, STATE, STATE) + (WEIGHT,) * (n - 3), lambda n: (SEQ, STATE, STATE, SEQ))
lstm_layer_vjp_p.batch = _batch_rule(
    lstm_layer_vjp_p, _lstm_backward,
    lambda n, saved=False: ((SEQ, STATE, WEIGHT, SEQ, STATE, STATE, SEQ, WEIGHT) if saved else
                            (SEQ, STATE, STATE, WEIGHT, SEQ, SEQ, STATE, STATE, WEIGHT))[:n],
    lambda n, saved=False: (SEQ, STATE, STATE, SEQ, SEQ)[:n])


@lstm_layer_p.def_impl("cpu")
def _lstm_cpu(gx, h0, c0, w_hh, *w_hr):
    scale, shift = _gate_scale(gx.dtype, gx.shape[2] // 4, _LSTM_GATES)
    w_r = w_hr[0] if w_hr else np.empty((0, 0), gx.dtype)                     # (P, H)
    out, c, acts = _loop(_lstm_forward_loop, gx, h0, c0, w_hh, scale, shift, w_r, bool(w_hr))
    return out, out[-1].copy(), c, acts


# The gates' halving (see _gate_scale) is applied after the recurrent product and the input projection are
# added: (h W^T + gx) / 2 has the same bits as h (W / 2)^T + gx / 2 (halving is exact), without a scaled
# copy of the weights or of gx per call.
def _lstm_forward_loop(gx, h0, c0, w_hh, scale, shift, w_r, proj):
    steps, batch, g4 = gx.shape
    hidden, dtype = g4 // 4, gx.dtype
    out = np.empty((steps, batch, h0.shape[1]), dtype)
    h, c = h0, np.array(c0, dtype)
    gates = np.empty((batch, g4), dtype)
    tmp = np.empty((batch, hidden), dtype)
    gi, gf, gg, go = _blocks(gates, hidden, 4)
    m = np.empty((batch, hidden), dtype)
    acts = np.empty((steps, batch, 6 * hidden), dtype)
    w_t, w_rt = np.ascontiguousarray(w_hh.T), np.ascontiguousarray(w_r.T)  # (a transposed view: 4x slower GEMMs)
    for t in range(steps):
        np.matmul(h, w_t, out=gates)
        gates += gx[t]
        gates *= scale
        np.tanh(gates, out=gates)
        gates *= scale
        gates += shift
        np.multiply(gf, c, out=c)
        np.multiply(gi, gg, out=tmp)
        c += tmp
        np.tanh(c, out=tmp)
        acts[t, :, :g4] = gates
        acts[t, :, g4:g4 + hidden] = c
        acts[t, :, g4 + hidden:] = tmp
        h = out[t]
        if not proj:
            np.multiply(go, tmp, out=h)
        else:
            np.multiply(go, tmp, out=m)
            np.matmul(m, w_rt, out=h)
    return out, c, acts


@lstm_layer_vjp_p.def_impl("cpu")
def _lstm_vjp_cpu(*args, saved=False):
    return _lstm_vjp_saved_cpu(*args) if saved else _lstm_vjp_recomputed_cpu(*args)


def _lstm_vjp_saved_cpu(acts, c0, w_hh, g_out, g_hn, g_cn, g_acts, *w_hr):
    hidden = c0.shape[1]
    # the activations' cotangent is zero unless someone differentiates through them: then the loop skips it
    # (11 us at (8, 20, 32) -> 64). The autograd engine materializes that zero, so it is checked bitwise (5 us).
    has_g = not _is_zero(g_acts)
    g_acts = g_acts if has_g else np.empty((0, 0, 0), acts.dtype)
    w_r = w_hr[0] if w_hr else np.empty((0, 0), acts.dtype)                    # (P, H)
    dpre, dh, dc, dhs = _loop(_lstm_saved_backward_loop, acts, c0, w_hh, g_out, g_hn, g_cn, g_acts, w_r,
                              bool(w_hr), has_g)
    res = (dpre, dh, dc)
    return res + (dhs, acts[..., 3 * hidden:4 * hidden] * acts[..., 5 * hidden:]) if w_hr else res


def _is_zero(a):
    """Whether every element of a is +0 (a -0 counts as nonzero: then the general path runs, as exact)."""
    if a.size and not any(a.strides):
        return not a.reshape(-1)[:1].view(_UINT[a.itemsize]).any() if a.itemsize in _UINT else not a.flat[0]
    if a.flags.c_contiguous and a.nbytes % 8 == 0:
        return not np.count_nonzero(a.reshape(-1).view(np.uint64))
    return not a.any()


_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def _lstm_saved_backward_loop(acts, c0, w_hh, g_out, g_hn, g_cn, g_acts, w_r, proj, has_g):
    """Backward through time from the saved activations (see _lstm_backward_saved): (d pre-activation (T, B, 4H),
    d h0, d c0, the total cotangent of every h_t (with a projection; else unset)). Per step, d pre = K * dc
    (+ G) on the i, f, g blocks and K * dm (+ G) on o, with K and G (the activations' cotangent's share) of
    every step computed first."""
    steps, batch, h6 = acts.shape
    hidden, dtype = h6 // 6, acts.dtype
    one = dtype.type(1)
    i, f, g, o, c, tc = _blocks(acts, hidden, 6)
    c_prev = _previous_np(c0, c)
    u = np.square(tc)
    np.subtract(one, u, out=u)                                                    # tanh'(c)
    kc = o * u
    k = np.empty((steps, batch, 4, hidden), dtype)
    kl = np.empty((3, steps, batch, hidden), dtype)                               # s' of i, f, o
    for dst, s in zip(kl, (i, f, o)):
        np.subtract(one, s, out=dst)
        dst *= s
    kg = np.square(g)
    np.subtract(one, kg, out=kg)
    np.multiply(kl[0], g, out=k[:, :, 0])
    np.multiply(kl[1], c_prev, out=k[:, :, 1])
    np.multiply(kg, i, out=k[:, :, 2])
    np.multiply(kl[2], tc, out=k[:, :, 3])
    if has_g:
        gi, gf, gg, go, gc, gtc = _blocks(g_acts, hidden, 6)
        gk = np.empty_like(k)
        for q, (a, b) in enumerate(((gi, kl[0]), (gf, kl[1]), (gg, kg), (go, kl[2]))):
            np.multiply(a, b, out=gk[:, :, q])
        gcs = gtc * u
        gcs += gc
    return _lstm_bptt_np(k, kc, f, g_out, g_hn, g_cn, w_hh, w_r, proj, *((gcs, gk) if has_g else ()))


def _lstm_vjp_recomputed_cpu(gx, h0, c0, w_hh, out, g_out, g_hn, g_cn, *w_hr):
    steps, batch, g4 = gx.shape
    hidden, proj = g4 // 4, h0.shape[1]
    scale, _ = _gate_scale(gx.dtype, hidden, _LSTM_GATES)
    # every step's gates from the previous states (h0, out[0], ...), in one product: a = tanh of the
    # pre-activations, halved on the logistic gates (s(x) = 0.5 tanh(x / 2) + 0.5)
    a = np.matmul(_previous_np(h0, out).reshape(steps * batch, proj), w_hh.T).reshape(gx.shape)
    a += gx
    a *= scale
    np.tanh(a, out=a)
    cs = _loop(_lstm_cells_loop, a, c0)                                          # c0, c1, ..., cT
    tc = np.tanh(cs[1:])
    w_r = w_hr[0] if w_hr else np.empty((0, 0), gx.dtype)                      # (P, H)
    dpre, dh, dc, dhs = _loop(_lstm_backward_loop, a, cs, tc, g_out, g_hn, g_cn, w_hh, w_r, bool(w_hr))
    res = (dpre, dh, dc)
    if not w_hr:
        return res
    o = a[..., 3 * hidden:] * scale[3 * hidden:]
    o += 0.5
    return res + (dhs, o * tc)


def _lstm_cells_loop(a, c0):
    """The cell states c0, c1, ..., cT (T + 1, B, H) from a (the tanh'd, halved pre-activations)."""
    hidden = a.shape[2] // 4
    half = a.dtype.type(0.5)
    ti, tf, tg, _ = _blocks(a, hidden, 4)
    f = ti * half                                                                 # (scratch first: s(i) g)
    f += half
    ig = f * tg
    np.multiply(tf, half, out=f)
    f += half
    cs = np.empty((a.shape[0] + 1,) + c0.shape, a.dtype)
    cs[0] = c0
    for t in range(a.shape[0]):
        np.multiply(f[t], cs[t], out=cs[t + 1])
        cs[t + 1] += ig[t]
    return cs


def _lstm_backward_loop(a, cs, tc, g_out, g_hn, g_cn, w_hh, w_r, proj):
    """Backward through time from the tanh'd pre-activations a, the cell states and their tanh: (d pre-activation
    (T, B, 4H), d h0, d c0, the total cotangent of every h_t (with a projection; else unset))."""
    steps, batch, g4 = a.shape
    hidden, dtype = g4 // 4, a.dtype
    one, half = dtype.type(1), dtype.type(0.5)
    ti, tf, tg, to = _blocks(a, hidden, 4)
    # each gate's derivative in its pre-activation times what multiplies it: s' = (1 - tanh(x / 2)^2) / 4 on
    # the logistic gates, 1 - tanh^2 on g; d pre = k * dc on the i, f, g blocks and k * dm on o
    k = np.square(a)
    np.subtract(one, k, out=k)
    k *= _gate_scale(dtype, hidden, _LSTM_GATES)[0] ** 2
    k4 = k.reshape(steps, batch, 4, hidden)
    ki, kf, kg, ko = _blocks(k, hidden, 4)
    ki *= tg
    kf *= cs[:-1]
    kg *= ti * half + half
    ko *= tc
    kc = np.square(tc)
    np.subtract(one, kc, out=kc)
    kc *= to * half + half
    f = tf * half
    f += half
    return _lstm_bptt_np(k4, kc, f, g_out, g_hn, g_cn, w_hh, w_r, proj)


def _lstm_bptt_np(k4, kc, f, g_out, g_hn, g_cn, w_hh, w_r, proj, gcs=None, gk=None):
    """The recurrence both NumPy backward forms share, given each step's factors: k4 (T, B, 4, H) of the gate
    derivatives, kc of tanh'(c) * o, f the forget gate (and, from saved activations with a cotangent of their
    own, gcs added to dc and gk to d pre). Per step: dh += g_out[t]; dm = dh (through the projection);
    dc += dm * kc (+ gcs); d pre = K * dc on i, f, g and K * dm on o (+ gk); dc *= f; dh = d pre @ w_hh."""
    steps, batch, _, hidden = k4.shape
    dtype = k4.dtype
    dpre = np.empty((steps, batch, 4 * hidden), dtype)
    d4 = dpre.reshape(steps, batch, 4, hidden)
    dh = np.array(g_hn, dtype)
    dc = np.array(g_cn, dtype)
    dc3 = dc[:, None]
    k3, k1, d3, d1 = k4[:, :, :3], k4[:, :, 3], d4[:, :, :3], d4[:, :, 3]
    tmp = np.empty((batch, hidden), dtype)
    dhs = np.empty(g_out.shape, dtype)
    dm = np.empty((batch, hidden), dtype)
    for t in range(steps - 1, -1, -1):
        dh += g_out[t]
        if proj:
            dhs[t] = dh
            np.matmul(dh, w_r, out=dm)
        else:
            dm = dh
        np.multiply(dm, kc[t], out=tmp)
        dc += tmp
        if gcs is not None:
            dc += gcs[t]
        np.multiply(k3[t], dc3, out=d3[t])
        np.multiply(k1[t], dm, out=d1[t])
        if gk is not None:
            d4[t] += gk[t]
        dc *= f[t]
        np.matmul(dpre[t], w_hh, out=dh)
    return dpre, dh, dc, dhs


# ---------------------------------------------------------------------------
# GRU


def _gru_cell(gx, gh, h):
    """The pointwise GRU cell: the step's input and recurrent products (B, 3H) and state -> h'."""
    n3 = gx.shape[-1] // 3
    xr, xz, xn = (_cols(gx, k * n3, (k + 1) * n3) for k in range(3))
    hr, hz, hn = (_cols(gh, k * n3, (k + 1) * n3) for k in range(3))
    r = sigmoid(add(xr, hr))
    z = sigmoid(add(xz, hz))
    n = tanh(add(xn, mul(r, hn)))
    return add(n, mul(z, sub(h, n)))


def _gru_products(h, w_hh, b_hh):
    gh = matmul(h, _mT(w_hh))
    return add(gh, b_hh[0]) if b_hh else gh


def _gru_forward(gx, h0, w_hh, *b_hh):
    """The reference GRU layer, one step at a time in core ops: (out, h_n)."""
    h, hs = h0, []
    for t in range(gx.shape[0]):
        h = _gru_cell(_at(gx, t), _gru_products(h, w_hh, b_hh), h)
        hs.append(h)
    return stack(hs, 0), h


def _gru_backward(gx, h0, w_hh, out, g_out, g_hn, *b_hh):
    """gru_layer_vjp's values in core ops: (d gx, d gh (the per-step products h W_hh^T + b_hh), d h0)."""
    prev = _previous(h0, out)
    gh = _gru_products(prev, w_hh, b_hh)
    pulls = [vjp_flat(lambda xs: [_gru_cell(*xs)], [_at(gx, t), _at(gh, t), _at(prev, t)])[1]
             for t in range(gx.shape[0])]
    dgx, dgh = [None] * len(pulls), [None] * len(pulls)
    dh = g_hn
    for t in reversed(range(len(pulls))):
        dh = add(dh, _at(g_out, t))
        dgx[t], dgh[t], dprev = _zeros_for((_at(gx, t), _at(gh, t), h0), pulls[t]([dh]))
        dh = add(dprev, matmul(dgh[t], w_hh))
    return stack(dgx, 0), stack(dgh, 0), dh


def _gru_meta(gx, h0, w_hh, *b_hh):
    if len(b_hh) > 1:
        raise TypeError(f"gru_layer: expected 3 or 4 arrays, got {3 + len(b_hh)}")
    steps, batch, hidden, _ = _check("gru_layer", gx, h0, w_hh, 3, b_hh=b_hh[0] if b_hh else None)
    return ((steps, batch, hidden), gx.dtype), ((batch, hidden), gx.dtype)


def _gru_vjp_meta(gx, h0, w_hh, out, g_out, g_hn, *b_hh):
    if len(b_hh) > 1:
        raise TypeError(f"gru_layer_vjp: expected 6 or 7 arrays, got {6 + len(b_hh)}")
    name = "gru_layer_vjp"
    steps, batch, hidden, _ = _check(name, gx, h0, w_hh, 3, b_hh=b_hh[0] if b_hh else None)
    _family.same_dtype(name, gx, out, g_out, g_hn)
    _check_cotangents(name, steps, batch, hidden, out, g_out, g_hn)
    d = gx.dtype
    return ((steps, batch, 3 * hidden), d), ((steps, batch, 3 * hidden), d), ((batch, hidden), d)


def _gru_grads(g, out, gx, h0, w_hh, *b_hh):
    g_out, g_hn = g
    return _shared(g, out, (gx, h0, w_hh) + b_hh, lambda: gru_layer_vjp_p.bind(
        gx, h0, w_hh, out[0], g_out, g_hn, *b_hh))


gru_layer_p = Primitive(
    "gru_layer", _gru_meta, multiple_results=True, vjp_reads=(0, 1, 2, 3, "out"),
    vjp=(lambda g, out, *a: _gru_grads(g, out, *a)[0],
         lambda g, out, *a: _gru_grads(g, out, *a)[2],
         lambda g, out, gx, h0, w_hh, *b: _weight_grad(_gru_grads(g, out, gx, h0, w_hh, *b)[1],
                                                       _previous(h0, out[0])),
         lambda g, out, *a: _sum(_gru_grads(g, out, *a)[1], axis=(0, 1))),
    jvp=_composite_jvp(_gru_forward))

gru_layer_vjp_p = Primitive("gru_layer_vjp", _gru_vjp_meta, multiple_results=True, vjp_reads=tuple(range(7)),
                            vjp=_composite_vjp(_gru_backward, 7), jvp=_composite_jvp(_gru_backward))

gru_layer_p.batch = _batch_rule(gru_layer_p, _gru_forward, lambda n: (SEQ, STATE) + (WEIGHT,) * (n - 2),
                                lambda n: (SEQ, STATE))
gru_layer_vjp_p.batch = _batch_rule(gru_layer_vjp_p, _gru_backward,
                                    lambda n: (SEQ, STATE, WEIGHT, SEQ, SEQ, STATE, WEIGHT)[:n],
                                    lambda n: (SEQ, SEQ, STATE))


@gru_layer_p.def_impl("cpu")
def _gru_cpu(gx, h0, w_hh, *b_hh):
    hidden = gx.shape[2] // 3
    dtype = gx.dtype
    scale, _ = _gate_scale(dtype, hidden, _GRU_GATES)
    w_t = np.ascontiguousarray((w_hh * scale[:, None]).T)                       # (H, 3H)
    b = b_hh[0] * scale if b_hh else np.zeros(3 * hidden, dtype)
    out = _loop(_gru_forward_loop, gx * scale, h0, w_t, b, bool(b_hh), dtype.type(0.5))
    return out, out[-1].copy()


def _gru_forward_loop(gxs, h0, w_t, b, has_b, half):
    steps, batch, g3 = gxs.shape
    hidden, dtype = g3 // 3, gxs.dtype
    two = 2 * hidden
    out = np.empty((steps, batch, hidden), dtype)
    h = h0
    gh = np.empty((batch, g3), dtype)
    rz = np.empty((batch, two), dtype)
    n = np.empty((batch, hidden), dtype)
    r, z, hn = rz[:, :hidden], rz[:, hidden:], gh[:, two:]
    for t in range(steps):
        np.matmul(h, w_t, out=gh)
        if has_b:
            gh += b
        np.add(gxs[t, :, :two], gh[:, :two], out=rz)
        np.tanh(rz, out=rz)
        rz *= half
        rz += half
        np.multiply(r, hn, out=n)
        n += gxs[t, :, two:]
        np.tanh(n, out=n)
        new = out[t]
        np.subtract(h, n, out=new)
        new *= z
        new += n
        h = new
    return out


@gru_layer_vjp_p.def_impl("cpu")
def _gru_vjp_cpu(gx, h0, w_hh, out, g_out, g_hn, *b_hh):
    steps, batch, g3 = gx.shape
    hidden = g3 // 3
    two = 2 * hidden
    dtype = gx.dtype
    half, one = dtype.type(0.5), dtype.type(1)
    scale, _ = _gate_scale(dtype, hidden, _GRU_GATES)
    # every step's gates from the previous states (h0, out[0], ...): gh in one product
    prev = _previous_np(h0, out)
    gh = np.matmul(prev.reshape(steps * batch, hidden), (w_hh * scale[:, None]).T).reshape(gx.shape)
    if b_hh:
        gh += b_hh[0] * scale                                                    # (r, z blocks halved)
    gxs = gx * scale
    rz = gxs[..., :two] + gh[..., :two]
    np.tanh(rz, out=rz)
    rz *= half
    rz += half
    r, z = rz[..., :hidden], rz[..., hidden:]
    hn = gh[..., two:]
    n = r * hn
    n += gxs[..., two:]
    np.tanh(n, out=n)
    # d gx = dh * (kr, kz, kn) and d gh = dh * (kr, kz, kn r), dh the total cotangent of the step's output
    k = np.empty((steps, batch, 3, hidden), dtype)
    kr, kz, kn = k[:, :, 0], k[:, :, 1], k[:, :, 2]
    np.square(n, out=kn)
    np.subtract(one, kn, out=kn)
    kn *= 1 - z
    np.subtract(one, z, out=kz)
    kz *= z
    kz *= prev - n
    np.subtract(one, r, out=kr)
    kr *= r
    kr *= hn
    kr *= kn
    kgh = k.copy()
    kgh[:, :, 2] *= r
    dgx, dgh, dh = _loop(_gru_backward_loop, k, kgh, z, g_out, g_hn, w_hh)
    return dgx.reshape(gx.shape), dgh.reshape(gx.shape), dh


def _gru_backward_loop(k, kgh, z, g_out, g_hn, w_hh):
    steps, batch, _, hidden = k.shape
    dhs = np.empty((steps, batch, 1, hidden), k.dtype)
    dgh = np.empty_like(k)
    dh = np.array(g_hn, k.dtype)
    back = np.empty((batch, hidden), k.dtype)
    for t in range(steps - 1, -1, -1):
        dh += g_out[t]
        dhs[t, :, 0] = dh
        np.multiply(kgh[t], dhs[t], out=dgh[t])
        np.matmul(dgh[t].reshape(batch, 3 * hidden), w_hh, out=back)
        dh *= z[t]
        dh += back
    return k * dhs, dgh, dh


# ---------------------------------------------------------------------------
# Elman RNN (tanh or relu)


def _act(x, nonlinearity):
    return tanh(x) if nonlinearity == "tanh" else relu(x)


def _rnn_forward(gx, h0, w_hh, *, nonlinearity):
    """The reference RNN layer, one step at a time in core ops: (out, h_n)."""
    h, hs = h0, []
    for t in range(gx.shape[0]):
        h = _act(add(_at(gx, t), matmul(h, _mT(w_hh))), nonlinearity)
        hs.append(h)
    return stack(hs, 0), h


def _rnn_backward(gx, h0, w_hh, out, g_out, g_hn, *, nonlinearity):
    """rnn_layer_vjp's values in core ops: (d gx (= d pre-activation), d h0)."""
    pre = add(gx, matmul(_previous(h0, out), _mT(w_hh)))
    pulls = [vjp_flat(lambda xs: [_act(xs[0], nonlinearity)], [_at(pre, t)])[1] for t in range(gx.shape[0])]
    dpre = [None] * len(pulls)
    dh = g_hn
    for t in reversed(range(len(pulls))):
        dh = add(dh, _at(g_out, t))
        dpre[t] = _zeros_for((h0,), pulls[t]([dh]))[0]
        dh = matmul(dpre[t], w_hh)
    return stack(dpre, 0), dh


def _check_nonlinearity(name, nonlinearity):
    if nonlinearity not in ("tanh", "relu"):
        raise ValueError(f"{name}: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")


def _rnn_meta(gx, h0, w_hh, *, nonlinearity):
    _check_nonlinearity("rnn_layer", nonlinearity)
    steps, batch, hidden, _ = _check("rnn_layer", gx, h0, w_hh, 1)
    return ((steps, batch, hidden), gx.dtype), ((batch, hidden), gx.dtype)


def _rnn_vjp_meta(gx, h0, w_hh, out, g_out, g_hn, *, nonlinearity):
    name = "rnn_layer_vjp"
    _check_nonlinearity(name, nonlinearity)
    steps, batch, hidden, _ = _check(name, gx, h0, w_hh, 1)
    _family.same_dtype(name, gx, out, g_out, g_hn)
    _check_cotangents(name, steps, batch, hidden, out, g_out, g_hn)
    return ((steps, batch, hidden), gx.dtype), ((batch, hidden), gx.dtype)


def _rnn_grads(g, out, gx, h0, w_hh, *, nonlinearity):
    g_out, g_hn = g
    return _shared(g, out, (gx, h0, w_hh), lambda: rnn_layer_vjp_p.bind(
        gx, h0, w_hh, out[0], g_out, g_hn, nonlinearity=nonlinearity))


rnn_layer_p = Primitive(
    "rnn_layer", _rnn_meta, multiple_results=True, vjp_reads=(0, 1, 2, "out"),
    vjp=(lambda g, out, *a, **p: _rnn_grads(g, out, *a, **p)[0],
         lambda g, out, *a, **p: _rnn_grads(g, out, *a, **p)[1],
         lambda g, out, gx, h0, w_hh, **p: _weight_grad(_rnn_grads(g, out, gx, h0, w_hh, **p)[0],
                                                        _previous(h0, out[0]))),
    jvp=_composite_jvp(_rnn_forward))

rnn_layer_vjp_p = Primitive("rnn_layer_vjp", _rnn_vjp_meta, multiple_results=True, vjp_reads=tuple(range(6)),
                            vjp=_composite_vjp(_rnn_backward, 6), jvp=_composite_jvp(_rnn_backward))

rnn_layer_p.batch = _batch_rule(rnn_layer_p, _rnn_forward, lambda n, **_: (SEQ, STATE, WEIGHT),
                                lambda n, **_: (SEQ, STATE))
rnn_layer_vjp_p.batch = _batch_rule(rnn_layer_vjp_p, _rnn_backward,
                                    lambda n, **_: (SEQ, STATE, WEIGHT, SEQ, SEQ, STATE), lambda n, **_: (SEQ, STATE))


@rnn_layer_p.def_impl("cpu")
def _rnn_cpu(gx, h0, w_hh, *, nonlinearity):
    out = _loop(_rnn_forward_loop, gx, h0, np.ascontiguousarray(w_hh.T), nonlinearity == "relu")
    return out, out[-1].copy()


def _rnn_forward_loop(gx, h0, w_t, relu):
    out = np.empty(gx.shape, gx.dtype)
    h = h0
    zero = gx.dtype.type(0)
    for t in range(gx.shape[0]):
        new = out[t]
        np.matmul(h, w_t, out=new)
        new += gx[t]
        if relu:
            np.maximum(new, zero, out=new)  # (nan stays nan, as relu)
        else:
            np.tanh(new, out=new)
        h = new
    return out


@rnn_layer_vjp_p.def_impl("cpu")
def _rnn_vjp_cpu(gx, h0, w_hh, out, g_out, g_hn, *, nonlinearity):
    steps, batch, hidden = gx.shape
    dtype = gx.dtype
    pre = np.matmul(_previous_np(h0, out).reshape(steps * batch, hidden), w_hh.T).reshape(gx.shape)
    pre += gx
    if nonlinearity == "tanh":
        k = np.tanh(pre)
        np.square(k, out=k)
        np.subtract(dtype.type(1), k, out=k)
    else:
        k = np.logical_not(pre <= 0).astype(dtype)  # relu's derivative as threshold_backward: 0 where out <= 0
    return _loop(_rnn_backward_loop, k, g_out, g_hn, w_hh)


def _rnn_backward_loop(k, g_out, g_hn, w_hh):
    dpre = np.empty_like(k)
    dh = np.array(g_hn, k.dtype)
    for t in range(k.shape[0] - 1, -1, -1):
        dh += g_out[t]
        np.multiply(dh, k[t], out=dpre[t])
        np.matmul(dpre[t], w_hh, out=dh)
    return dpre, dh


# ---------------------------------------------------------------------------
# functions


def lstm_layer(gx, h0, c0, w_hh, w_hr=None):
    """One LSTM direction over gx (T, B, 4H) = x W_ih^T + b_ih + b_hh: (out (T, B, P), h_n, c_n)."""
    return lstm_layer_p.bind(gx, h0, c0, w_hh, *(() if w_hr is None else (w_hr,)))[:3]


def gru_layer(gx, h0, w_hh, b_hh=None):
    """One GRU direction over gx (T, B, 3H) = x W_ih^T + b_ih: (out (T, B, H), h_n)."""
    return gru_layer_p.bind(gx, h0, w_hh, *(() if b_hh is None else (b_hh,)))


def rnn_layer(gx, h0, w_hh, nonlinearity="tanh"):
    """One Elman RNN direction over gx (T, B, H) = x W_ih^T + b_ih + b_hh: (out (T, B, H), h_n)."""
    return rnn_layer_p.bind(gx, h0, w_hh, nonlinearity=nonlinearity)
