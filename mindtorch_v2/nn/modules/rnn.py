"""RNN, LSTM, GRU (multi-layer, bidirectional, LSTM projections, PackedSequence inputs) and their cells.

Each layer projects the whole input sequence at once (x W_ih^T + b_ih), then steps through time
with the recurrent part; a reverse direction reads each sequence backwards within its own length.

Sequences of one length (plain tensors, and PackedSequences whose sequences all have the same length)
run each layer and direction as one fused primitive of core/ops/rnn.py (a NumPy loop over time, with its
backward-through-time primitive). A PackedSequence of unequal lengths takes the step-by-step path below
(`_run_steps`): a sequence's state stops changing after its last step (so h_n is the state at its last
step) and its outputs past its end are zero, as torch's packed kernels give.

Gates, in torch's order of the weight rows:
    RNN:  h' = tanh|relu(W_ih x + b_ih + W_hh h + b_hh)
    LSTM: i, f, g, o;  c' = sigmoid(f) c + sigmoid(i) tanh(g);  h' = sigmoid(o) tanh(c')  (then W_hr h')
    GRU:  r, z, n;  n = tanh(W_in x + b_in + sigmoid(r) (W_hn h + b_hn));  h' = (1 - sigmoid(z)) n + sigmoid(z) h
"""
import math
import numbers
import warnings

from ...eager.creation import arange, empty, tensor, zeros
from ...eager.ops import cat, relu, sigmoid, stack, tanh, where
from ...core import int64
from ...core.ops.rnn import gru_layer_p, lstm_layer_p, rnn_layer_p

from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence, _padded_from_packed
from .module import Module

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _lstm_step(gx, h, c, w_hh, b_hh, w_hr):
    gates = gx + F.linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    c = sigmoid(f) * c + sigmoid(i) * tanh(g)
    h = sigmoid(o) * tanh(c)
    if w_hr is not None:
        h = F.linear(h, w_hr)
    return h, c


def _gru_step(gx, h, w_hh, b_hh):
    gh = F.linear(h, w_hh, b_hh)
    xr, xz, xn = gx.chunk(3, -1)
    hr, hz, hn = gh.chunk(3, -1)
    r = sigmoid(xr + hr)
    z = sigmoid(xz + hz)
    n = tanh(xn + r * hn)
    return (1 - z) * n + z * h


def _stacked(states):
    """The final states of every layer and direction as one (L * D, B, H) tensor (a view for one)."""
    return states[0].unsqueeze(0) if len(states) == 1 else stack(states, 0)


class RNNBase(Module):
    """The shared parameters and recurrence of RNN, LSTM and GRU."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             "being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                          stacklevel=2)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        fk = {"device": device, "dtype": dtype}
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        directions = 2 if bidirectional else 1
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else real_hidden * directions
                suffix = "_reverse" if direction == 1 else ""
                params = [("weight_ih_l{}{}", (gate_size, layer_input)), ("weight_hh_l{}{}", (gate_size, real_hidden))]
                if bias:
                    params += [("bias_ih_l{}{}", (gate_size,)), ("bias_hh_l{}{}", (gate_size,))]
                if proj_size > 0:
                    params += [("weight_hr_l{}{}", (proj_size, hidden_size))]
                names = []
                for fmt, shape in params:
                    name = fmt.format(layer, suffix)
                    setattr(self, name, Parameter(empty(shape, **fk)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self):
        """A no-op (there is no cuDNN weight buffer to compact)."""

    @property
    def _flat_weights(self):
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # ------------------------------------------------------------------

    def _layer_params(self, layer, direction):
        """(w_ih, w_hh, b_ih, b_hh, w_hr) of one layer and direction (None for the absent ones)."""
        suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
        return tuple(getattr(self, name + suffix, None)
                     for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"))

    def _check_input(self, input, batch_sizes):
        if not input.is_floating_point():
            raise ValueError(f"input must have the type torch.float32, got type {input.dtype}")
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{input.size(-1)}")

    def _check_hidden(self, hx, expected, msg="Expected hidden size {}, got {}"):
        if tuple(hx.shape) != tuple(expected):
            raise RuntimeError(msg.format(list(expected), list(hx.shape)))

    def _run(self, x, lengths, h0, c0):
        """The stacked recurrence on x (T, B, F) in time-major order: (output, h_n, c_n or None)."""
        if lengths is not None and any(n != x.shape[0] for n in lengths):
            return self._run_steps(x, lengths, h0, c0)
        return self._stack(x, h0, c0, self._fused_direction)

    def _run_steps(self, x, lengths, h0, c0):
        """The same, one step at a time (the path for sequences of several lengths)."""
        return self._stack(x, h0, c0, self._steps_direction(x, lengths))

    def _stack(self, x, h0, c0, run_direction):
        """Layers over directions: run_direction(seq, layer, direction, h, c) -> (out, h_n, c_n or None) runs
        one of them over the layer's input (reading it backwards for direction 1), outputs in time order."""
        directions = 2 if self.bidirectional else 1
        h_n, c_n = [], []
        layer_input = x
        for layer in range(self.num_layers):
            outs = []
            for direction in range(directions):
                idx = layer * directions + direction
                out, h, c = run_direction(layer_input, layer, direction, h0[idx], c0[idx] if c0 is not None else None)
                outs.append(out)
                h_n.append(h)
                if c is not None:
                    c_n.append(c)
            layer_input = outs[0] if directions == 1 else cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        return layer_input, _stacked(h_n), (_stacked(c_n) if c_n else None)

    def _fused_direction(self, seq, layer, direction, h, c):
        """One layer and direction over seq (T, B, F) as one primitive: (out, h_n, c_n or None)."""
        if direction == 1:
            out, h, c = self._fused_layer(seq.flip(0), layer, direction, h, c)
            return out.flip(0), h, c
        return self._fused_layer(seq, layer, direction, h, c)

    def _fused_layer(self, seq, layer, direction, h, c):
        w_ih, w_hh, b_ih, b_hh, w_hr = self._layer_params(layer, direction)
        if self.mode == "GRU":  # b_hh's n block is inside r * (W_hn h + b_hn): it stays with the recurrence
            gx = F.linear(seq, w_ih, b_ih)
            out, h = gru_layer_p.bind(gx, h, w_hh, *(() if b_hh is None else (b_hh,)))
            return out, h, None
        gx = F.linear(seq, w_ih, None if b_ih is None else b_ih + b_hh)
        if self.mode == "LSTM":  # (its fourth result: the activations its backward reads)
            return lstm_layer_p.bind(gx, h, c, w_hh, *(() if w_hr is None else (w_hr,)))[:3]
        out, h = rnn_layer_p.bind(gx, h, w_hh, nonlinearity="tanh" if self.mode == "RNN_TANH" else "relu")
        return out, h, None

    def _steps_direction(self, x, lengths):
        """One layer and direction one step at a time, for sequences of several lengths (see the module
        docstring): a sequence's state stops at its last step, its outputs past its end are zero, and
        direction 1 reads each sequence backwards within its own length."""
        steps = x.shape[0]
        lengths_t = tensor(lengths, dtype=int64)
        time = arange(steps, dtype=int64).unsqueeze(1)
        alive = (time < lengths_t.unsqueeze(0)).unsqueeze(-1)  # (T, B, 1)
        rev = where(time < lengths_t, lengths_t - 1 - time, time)  # per-sequence reversal, (T, B)

        def run(seq, layer, direction, h, c):
            w_ih, w_hh, b_ih, b_hh, w_hr = self._layer_params(layer, direction)
            if direction == 1:
                seq = seq.gather(0, rev.unsqueeze(-1).expand(*seq.shape))
            gx = F.linear(seq, w_ih, b_ih)  # every step's input projection in one product
            out_steps = []
            for t in range(steps):
                if self.mode == "LSTM":
                    h_new, c_new = _lstm_step(gx[t], h, c, w_hh, b_hh, w_hr)
                elif self.mode == "GRU":
                    h_new, c_new = _gru_step(gx[t], h, w_hh, b_hh), None
                else:
                    pre = gx[t] + F.linear(h, w_hh, b_hh)
                    h_new, c_new = (tanh(pre) if self.mode == "RNN_TANH" else relu(pre)), None
                keep = alive[t]
                out_steps.append(where(keep, h_new, 0.0))
                h = where(keep, h_new, h)
                if c is not None:
                    c = where(keep, c_new, c)
            out = stack(out_steps, 0)
            if direction == 1:
                out = out.gather(0, rev.unsqueeze(-1).expand(*out.shape))
            return out, h, c
        return run

    def _forward(self, input, hx):
        """Shared forward: returns (output, h_n, c_n) with torch's shapes, packing and batch conventions."""
        is_lstm = self.mode == "LSTM"
        directions = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        packed = isinstance(input, PackedSequence)
        if packed:
            data, batch_sizes, sorted_indices, unsorted_indices = input
            self._check_input(data, batch_sizes)
            x, lengths = _padded_from_packed(input, 0.0, None)
            batch = x.shape[1]
            unbatched = False
        else:
            if input.dim() not in (2, 3):
                raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.dim()}D instead")
            unbatched = input.dim() == 2
            x = input.unsqueeze(1) if unbatched else (input.transpose(0, 1) if self.batch_first else input)
            self._check_input(x, None)
            batch, lengths, sorted_indices, unsorted_indices = x.shape[1], None, None, None
        h_shape = (self.num_layers * directions, batch, real_hidden)
        c_shape = (self.num_layers * directions, batch, self.hidden_size)
        if hx is None:
            # one zero state, shared by every layer and direction (indexed like the (L * D, B, H) tensors)
            h0 = [zeros(h_shape[1:], dtype=x.dtype, device=x.device)] * h_shape[0]
            c0 = [zeros(c_shape[1:], dtype=x.dtype, device=x.device)] * c_shape[0] if is_lstm else None
        else:
            h0, c0 = hx if is_lstm else (hx, None)
            if unbatched:
                if h0.dim() != 2 or (c0 is not None and c0.dim() != 2):
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {h0.dim()}-D tensor")
                h0 = h0.unsqueeze(1)
                c0 = c0.unsqueeze(1) if c0 is not None else None
            elif h0.dim() != 3 or (c0 is not None and c0.dim() != 3):
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {h0.dim()}-D tensor")
            if sorted_indices is not None:
                h0 = h0.index_select(1, sorted_indices)
                c0 = c0.index_select(1, sorted_indices) if c0 is not None else None
            self._check_hidden(h0, h_shape)
            if c0 is not None:
                self._check_hidden(c0, c_shape, "Expected hidden[1] size {}, got {}")
        out, h_n, c_n = self._run(x, lengths, h0, c0)
        if packed:
            sizes = [int(b) for b in batch_sizes.tolist()]
            out = PackedSequence(cat([out[t, :b] for t, b in enumerate(sizes)], 0), batch_sizes,
                                 sorted_indices, unsorted_indices)
            if unsorted_indices is not None:
                h_n = h_n.index_select(1, unsorted_indices)
                c_n = c_n.index_select(1, unsorted_indices) if c_n is not None else None
        elif unbatched:
            out, h_n = out.squeeze(1), h_n.squeeze(1)
            c_n = c_n.squeeze(1) if c_n is not None else None
        elif self.batch_first:
            out = out.transpose(0, 1)
        return out, h_n, c_n


class RNN(RNNBase):
    """Elman RNN with tanh or relu: h_t = act(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)."""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None, proj_size=0):
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device=device, dtype=dtype)  # proj_size != 0 raises, as in torch

    def forward(self, input, hx=None):
        out, h_n, _ = self._forward(input, hx)
        return out, h_n


class LSTM(RNNBase):
    """Long short-term memory; forward returns (output, (h_n, c_n))."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)

    def forward(self, input, hx=None):
        out, h_n, c_n = self._forward(input, hx)
        return out, (h_n, c_n)


class GRU(RNNBase):
    """Gated recurrent unit; forward returns (output, h_n)."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, device=None, dtype=None, proj_size=0):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        out, h_n, _ = self._forward(input, hx)
        return out, h_n


# ---------------------------------------------------------------------------
# cells


class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        fk = {"device": device, "dtype": dtype}
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), **fk))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), **fk))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, **fk))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, **fk))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, input, hx, count):
        """(input as (N, F), the states as (N, H) each, unbatched?) after torch's checks."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if input.size(-1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(-1)} expected {self.input_size}")
        unbatched = input.dim() == 1
        x = input.unsqueeze(0) if unbatched else input
        if hx is None:
            state = zeros((x.shape[0], self.hidden_size), dtype=x.dtype, device=x.device)
            return x, [state] * count, unbatched
        states = list(hx) if count > 1 else [hx]
        if any(s.dim() != input.dim() for s in states):
            raise RuntimeError(f"{type(self).__name__}: Expected hidden to be {input.dim()}D, got "
                               f"{states[0].dim()}D instead")
        if unbatched:
            states = [s.unsqueeze(0) for s in states]
        for s in states:
            if tuple(s.shape) != (x.shape[0], self.hidden_size):
                raise RuntimeError(f"hidden has inconsistent hidden_size: got {s.shape[-1]}, expected "
                                   f"{self.hidden_size}")
        return x, states, unbatched


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        x, (h,), unbatched = self._prepare(input, hx, 1)
        pre = F.linear(x, self.weight_ih, self.bias_ih) + F.linear(h, self.weight_hh, self.bias_hh)
        if self.nonlinearity == "tanh":
            out = tanh(pre)
        elif self.nonlinearity == "relu":
            out = relu(pre)
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return out.squeeze(0) if unbatched else out


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        x, (h, c), unbatched = self._prepare(input, hx, 2)
        h, c = _lstm_step(F.linear(x, self.weight_ih, self.bias_ih), h, c, self.weight_hh, self.bias_hh, None)
        return (h.squeeze(0), c.squeeze(0)) if unbatched else (h, c)


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        x, (h,), unbatched = self._prepare(input, hx, 1)
        out = _gru_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return out.squeeze(0) if unbatched else out
