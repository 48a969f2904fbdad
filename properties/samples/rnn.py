"""Samples for the recurrent-layer family: lstm_layer, gru_layer, rnn_layer and their backward-through-time
primitives (core/ops/rnn.py).

Sizes stay tiny (T <= 3 steps, batch <= 2, hidden <= 3) so the nested finite-difference checks, which run
the step-by-step composites under reverse and forward mode, are fast. Values are scaled normals: the gates
stay in their responsive range. The backward primitives take arbitrary output sequences and cotangents
(they are smooth functions of every input, the output sequence included). rnn_layer with relu counts as
not smooth (second order has kinks).
"""
import numpy as np
from hypothesis import strategies as st

from mindtorch_v2.core.ops import rnn

from . import Sample, register


def _normal(rng, shape, scale=0.6):
    return rng.standard_normal(shape) * scale


@st.composite
def _sizes(draw):
    return (draw(st.integers(1, 3)), draw(st.integers(1, 2)), draw(st.integers(1, 3)),
            np.random.default_rng(draw(st.integers(0, 2**31 - 1))))


@st.composite
def lstm_samples(draw, backward=False):
    steps, batch, hidden, rng = draw(_sizes())
    proj = draw(st.integers(0, hidden - 1))  # 0: no projection
    p = proj or hidden
    args = [_normal(rng, (steps, batch, 4 * hidden)), _normal(rng, (batch, p)), _normal(rng, (batch, hidden)),
            _normal(rng, (4 * hidden, p))]
    if backward:
        args += [_normal(rng, (steps, batch, p)), _normal(rng, (steps, batch, p)), _normal(rng, (batch, p)),
                 _normal(rng, (batch, hidden))]
    if proj:
        args.append(_normal(rng, (proj, hidden)))
    return Sample(args=tuple(args), diff=tuple(range(len(args))))


@st.composite
def lstm_saved_samples(draw):
    """lstm_layer_vjp's saved form (lstm_layer's own VJP): (acts, c0, w_hh, g_out, g_hn, g_cn, g_acts[, w_hr]),
    acts the (T, B, 6H) activations in (-1, 1) taken as independent inputs (the rule is smooth in each)."""
    steps, batch, hidden, rng = draw(_sizes())
    proj = draw(st.integers(0, hidden - 1))
    p = proj or hidden
    args = [np.tanh(_normal(rng, (steps, batch, 6 * hidden))), _normal(rng, (batch, hidden)),
            _normal(rng, (4 * hidden, p)), _normal(rng, (steps, batch, p)), _normal(rng, (batch, p)),
            _normal(rng, (batch, hidden)), _normal(rng, (steps, batch, 6 * hidden))]
    if proj:
        args.append(_normal(rng, (proj, hidden)))
    return Sample(args=tuple(args), params=dict(saved=True), diff=tuple(range(len(args))))


@st.composite
def gru_samples(draw, backward=False):
    steps, batch, hidden, rng = draw(_sizes())
    args = [_normal(rng, (steps, batch, 3 * hidden)), _normal(rng, (batch, hidden)), _normal(rng, (3 * hidden, hidden))]
    if backward:
        args += [_normal(rng, (steps, batch, hidden)), _normal(rng, (steps, batch, hidden)),
                 _normal(rng, (batch, hidden))]
    if draw(st.booleans()):
        args.append(_normal(rng, (3 * hidden,)))
    return Sample(args=tuple(args), diff=tuple(range(len(args))))


@st.composite
def rnn_samples(draw, backward=False):
    steps, batch, hidden, rng = draw(_sizes())
    nonlinearity = draw(st.sampled_from(("tanh", "relu")))
    args = [_normal(rng, (steps, batch, hidden)), _normal(rng, (batch, hidden)), _normal(rng, (hidden, hidden))]
    if backward:
        args += [_normal(rng, (steps, batch, hidden)), _normal(rng, (steps, batch, hidden)),
                 _normal(rng, (batch, hidden))]
    if nonlinearity == "relu":
        # away from relu's kink: every pre-activation at least 0.05 from 0 (or the sample is a plain tanh one)
        pre = _rnn_preactivations(args, backward)
        if np.min(np.abs(pre)) < 0.05:
            nonlinearity = "tanh"
    return Sample(args=tuple(args), params=dict(nonlinearity=nonlinearity), diff=tuple(range(len(args))),
                  smooth=nonlinearity == "tanh")


def _rnn_preactivations(args, backward):
    """Every step's pre-activation of a relu RNN sample: from the given output sequence (backward) or
    from the recurrence itself."""
    gx, h0, w = args[:3]
    if backward:
        prev = np.concatenate([h0[None], args[3][:-1]])
        return gx + prev @ w.T
    h, pres = h0, []
    for t in range(gx.shape[0]):
        pre = gx[t] + h @ w.T
        pres.append(pre)
        h = np.maximum(pre, 0)
    return np.stack(pres)


register(rnn.lstm_layer_p, lstm_samples())
register(rnn.lstm_layer_vjp_p, st.one_of(lstm_samples(backward=True), lstm_saved_samples()))
register(rnn.gru_layer_p, gru_samples())
register(rnn.gru_layer_vjp_p, gru_samples(backward=True))
register(rnn.rnn_layer_p, rnn_samples())
register(rnn.rnn_layer_vjp_p, rnn_samples(backward=True))
