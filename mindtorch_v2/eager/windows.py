"""Window functions (torch.hann_window ... kaiser_window), computed as ATen computes them: from
arange(N) in the requested floating dtype, op by op in that dtype. periodic=True (the default) gives the
first N values of the symmetric window of length N + 1, as for spectral analysis."""
import math

from .. import core
from ..core import dtypes as _dt
from .creation import _dev, _finish
from .tensor import UnsupportedDTypeError

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]


def _window(name, window_length, periodic, dtype, device, requires_grad, body):
    """The checks and the two trivial lengths shared by every window; body(n, dtype, device) makes the
    symmetric window of length n >= 2."""
    if isinstance(window_length, bool) or not isinstance(window_length, int):
        raise TypeError(f"{name}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(window_length).__name__}")
    dtype = _dt.default_float if dtype is None else _dt.canonicalize(dtype)
    device = _dev(device)
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    if dtype.category == _dt.COMPLEX:
        raise UnsupportedDTypeError(f'"arange_cpu" not implemented for {dtype.scalar_name!r}')
    if dtype.category != _dt.FLOAT:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if window_length == 0:
        return _finish(core.zeros((0,), dtype=dtype, device=device), requires_grad)
    if window_length == 1:
        return _finish(core.ones((1,), dtype=dtype, device=device), requires_grad)
    n = window_length + 1 if periodic else window_length
    w = body(n, dtype, device)
    return _finish(w[:window_length] if periodic else w, requires_grad)


def _ramp(n, dtype, device, scale):
    return core.mul(core.arange(0, n, 1, dtype=dtype, device=device), scale)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """0.5 - 0.5 cos(2 pi k / (N - 1))."""
    return _cosine_window("hann_window", window_length, periodic, 0.5, 0.5, dtype, device, requires_grad)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   requires_grad=False):
    """alpha - beta cos(2 pi k / (N - 1))."""
    return _cosine_window("hamming_window", window_length, periodic, alpha, beta, dtype, device, requires_grad)


def _cosine_window(name, window_length, periodic, alpha, beta, dtype, device, requires_grad):
    def body(n, dtype, device):
        return core.add(core.mul(core.cos(_ramp(n, dtype, device, math.pi * 2.0 / (n - 1))), -beta), alpha)
    return _window(name, window_length, periodic, dtype, device, requires_grad, body)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """0.42 - 0.5 cos(2 pi k / (N - 1)) + 0.08 cos(4 pi k / (N - 1))."""
    def body(n, dtype, device):
        w = _ramp(n, dtype, device, math.pi / (n - 1))
        return core.add(core.sub(core.mul(core.cos(core.mul(w, 4)), 0.08), core.mul(core.cos(core.mul(w, 2)), 0.5)),
                        0.42)
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad, body)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The triangle 1 - |2k / (N - 1) - 1|: 2k / (N - 1) rising to the middle, 2 - 2k / (N - 1) after."""
    def body(n, dtype, device):
        w = _ramp(n, dtype, device, 2.0 / (n - 1))
        first_half = ((n - 1) >> 1) + 1
        return core.concatenate([w[:first_half], core.add(core.neg(w[first_half:]), 2)], 0)
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad, body)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  requires_grad=False):
    """I0(beta sqrt(1 - ((k - a) / a)^2)) / I0(beta), a = (N - 1) / 2."""
    def body(n, dtype, device):
        # half precision computed in float32 and rounded once, as ATen's kernel does (in float16 itself the
        # window was off by up to 0.004, in bfloat16 by 0.03)
        wide = core.float32 if dtype in (core.float16, core.bfloat16) else dtype
        a = (n - 1) / 2.0
        k = core.arange(0, n, 1, dtype=wide, device=device)
        r = core.div(core.sub(k, a), a)
        arg = core.mul(core.sqrt(core.sub(1.0, core.mul(r, r))), beta)
        return core.astype(core.div(core.i0(arg), core.i0(core.full((), beta, dtype=wide, device=device))), dtype)
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, body)
