"""torch.fft: the discrete Fourier transforms, sample frequencies and shifts.

Each op is core.fft's composite run on Tensors (its one primitive, fft_p, is recorded by the tape; the
tape turns core's complex gradients into PyTorch's convention). Here only torch's names and argument
spelling (dim, s, out=) and its exception types: the core checks raise ValueError/TypeError with
torch's key words, which torch raises as RuntimeError; dims are checked here for torch's IndexError.
"""
from . import core
from .eager.declare import torch_op
from .eager.ops import _t
from .eager.tensor import _dim, as_result

__all__ = [
    "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
    "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]


def _dims(dim, ndim):
    """torch dims -> core axes (None stays None), with torch's IndexError for a bad dim."""
    if dim is None:
        return None
    single = isinstance(dim, int)
    dims = (dim,) if single else tuple(dim)
    if ndim == 0 and dims:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    axes = tuple(_dim(d, ndim) for d in dims)
    return axes[0] if single else axes


def _run(fn, *args, **kwargs):
    try:
        out = fn(*args, **kwargs)
    except (ValueError, TypeError) as e:  # core's argument and dtype checks: RuntimeError in torch
        raise RuntimeError(str(e)) from None
    return as_result(out)


def _one_dim(name, core_fn):
    def op(input, n=None, dim=-1, norm=None):
        x = _t(input)
        return _run(core_fn, x, n, _dims(dim, x.ndim), norm)
    return torch_op(op, name=name, method=False, out=True)


def _n_dim(name, core_fn, default_dim):
    def op(input, s=None, dim=default_dim, norm=None):
        x = _t(input)
        return _run(core_fn, x, None if s is None else tuple(s), _dims(dim, x.ndim), norm)
    return torch_op(op, name=name, method=False, out=True)


fft = _one_dim("fft", core.fft.fft)
ifft = _one_dim("ifft", core.fft.ifft)
rfft = _one_dim("rfft", core.fft.rfft)
irfft = _one_dim("irfft", core.fft.irfft)
hfft = _one_dim("hfft", core.fft.hfft)
ihfft = _one_dim("ihfft", core.fft.ihfft)
fft2 = _n_dim("fft2", core.fft.fftn, (-2, -1))
ifft2 = _n_dim("ifft2", core.fft.ifftn, (-2, -1))
rfft2 = _n_dim("rfft2", core.fft.rfftn, (-2, -1))
irfft2 = _n_dim("irfft2", core.fft.irfftn, (-2, -1))
hfft2 = _n_dim("hfft2", core.fft.hfftn, (-2, -1))
ihfft2 = _n_dim("ihfft2", core.fft.ihfftn, (-2, -1))
fftn = _n_dim("fftn", core.fft.fftn, None)
ifftn = _n_dim("ifftn", core.fft.ifftn, None)
rfftn = _n_dim("rfftn", core.fft.rfftn, None)
irfftn = _n_dim("irfftn", core.fft.irfftn, None)
hfftn = _n_dim("hfftn", core.fft.hfftn, None)
ihfftn = _n_dim("ihfftn", core.fft.ihfftn, None)


def _frequencies(name, core_fn):
    def op(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
        out = _run(core_fn, n, d, dtype=dtype, device=device)
        return out.requires_grad_(True) if requires_grad else out
    return torch_op(op, name=name, method=False, out=True)


fftfreq = _frequencies("fftfreq", core.fft.fftfreq)
rfftfreq = _frequencies("rfftfreq", core.fft.rfftfreq)


def _shift(name, core_fn):
    def op(input, dim=None):
        x = _t(input)
        if dim is None and x.ndim == 0:
            raise RuntimeError("`shifts` required")
        return _run(core_fn, x, _dims(dim, x.ndim))
    return torch_op(op, name=name, method=False)


fftshift = _shift("fftshift", core.fft.fftshift)
ifftshift = _shift("ifftshift", core.fft.ifftshift)
