"""The Fourier family (core.fft, as jax.numpy.fft): one primitive, `fft_p`, and composites.

fft_p(x, kind, axes, lengths, norm) is jax.lax.fft over any axes: kind "fft"/"ifft" (complex ->
complex), "rfft" (real -> the half spectrum on axes[-1]: lengths[-1] // 2 + 1 bins), "irfft" (that
half spectrum -> real, lengths[-1] samples on axes[-1]). `lengths` are the transformed sizes; the
operand already has them (the composites pad or crop first), except irfft's half axis. `norm` scales
as numpy.fft: the unnormalized sums F (e^-) and B (e^+) times 1, 1/sqrt(N) or 1/N (N = prod(lengths)).

Every kind is linear, so the JVP is fft_p on the tangent. The VJP is the transpose in JAX's convention
(no conjugation; the eager tape conjugates at its boundary):
  * fft, ifft: the DFT matrix is symmetric, so c F transposes to c F: the same call;
  * rfft (c F of a real x, cropped to the half spectrum): c Re(F pad(g)) = irfft(conj(g) / w) with the
    same scale c, i.e. the opposite norm name; w are the Hermitian weights of the half axis (1 for the
    DC and, for even n, the Nyquist bin; 2 for the bins standing for a conjugate pair);
  * irfft (c sum_j w_j Re(X_j e^+)): c w conj(F g) = w conj(rfft(g)) with the opposite norm name.
Everything else (fft of real input, n/s by padding or cropping, the 2-D and n-D forms, hfft as irfft
of conj, the frequencies, the shifts) is a composite of fft_p and shape ops.
"""

import numpy as np
import scipy.fft

from .. import dtypes as dt
from ..primitive import Primitive
from . import _family
from ._family import move_to_front, shift_axes

from .composite import roll
from .creation import arange, asarray
from .elementwise import cast, conj, mul
from .shape import concatenate, pad, slice_axis

__all__ = [
    "fft_p", "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2",
    "ihfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift",
    "ifftshift",
]

_KINDS = ("fft", "ifft", "rfft", "irfft")
_NORMS = ("backward", "ortho", "forward")
# the same scale on the other direction: c F's partner c B (the transposes of rfft and irfft)
_SWAP = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def _fft_meta(x, *, kind, axes, lengths, norm):
    if kind not in _KINDS:
        raise ValueError(f"fft: kind must be one of {_KINDS}, got {kind!r}")
    if norm not in _NORMS:
        raise ValueError(f'{kind}: Invalid normalization mode: "{norm}"')
    if not axes or len(axes) != len(lengths):
        raise ValueError(f"{kind}: expected as many lengths as axes (at least one), got axes {axes} and "
                         f"lengths {lengths}")
    _family.check_unique_axes(kind, axes)
    for a in axes:
        if not 0 <= a < x.ndim:
            raise IndexError(f"{kind}: axis {a} is out of range for an array of {x.ndim} dimensions")
    for n in lengths:
        if n < 1:
            raise ValueError(f"{kind}: Invalid number of data points ({n}) specified")
    if kind == "rfft":
        if x.dtype not in (dt.float32, dt.float64):
            raise TypeError(f"rfft: expected a float32 or float64 array, got {x.dtype.name}")
    elif x.dtype not in dt.COMPLEXES:
        raise TypeError(f"{kind}: expected a complex64 or complex128 array, got {x.dtype.name}")
    expected = list(x.shape)
    for a, n in zip(axes, lengths):
        expected[a] = n
    if kind == "irfft":
        expected[axes[-1]] = lengths[-1] // 2 + 1
    if tuple(expected) != x.shape:
        raise ValueError(f"{kind}: operand shape {x.shape} does not match lengths {lengths} on axes {axes}")
    shape = list(x.shape)
    if kind == "rfft":
        shape[axes[-1]] = lengths[-1] // 2 + 1
        return tuple(shape), x.dtype.to_complex()
    if kind == "irfft":
        shape[axes[-1]] = lengths[-1]
        return tuple(shape), x.dtype.to_real()
    return x.shape, x.dtype


def _half_weights(n, axis, ndim, dtype, device, inverse=False):
    """w on the half axis (shape 1 elsewhere): 1 for DC and, n even, Nyquist; 2 for the other bins
    (inverse: 1 / w)."""
    m = n // 2 + 1
    w = np.full(m, 0.5 if inverse else 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    shape = [1] * ndim
    shape[axis] = m
    return asarray(w.reshape(shape), dtype=dtype, device=device)


def _fft_vjp(g, out, x, *, kind, axes, lengths, norm):
    if kind in ("fft", "ifft"):
        return fft_p.bind(g, kind=kind, axes=axes, lengths=lengths, norm=norm)
    w = _half_weights(lengths[-1], axes[-1], g.ndim, g.dtype.to_complex(), g.device, inverse=kind == "rfft")
    if kind == "rfft":
        return fft_p.bind(mul(conj(g), w), kind="irfft", axes=axes, lengths=lengths, norm=_SWAP[norm])
    return mul(conj(fft_p.bind(g, kind="rfft", axes=axes, lengths=lengths, norm=_SWAP[norm])), w)


fft_p = Primitive("fft", _fft_meta, linear=True, vjp=(_fft_vjp,))
fft_p.batch = lambda vals, bdims, *, kind, axes, lengths, norm: (
    fft_p.bind(move_to_front(vals[0], bdims[0]), kind=kind, axes=shift_axes(axes), lengths=lengths, norm=norm), 0)


@fft_p.def_impl("cpu")
def _fft_cpu(x, *, kind, axes, lengths, norm):
    # scipy.fft keeps single precision (numpy.fft computes in double)
    if kind == "fft":
        return scipy.fft.fftn(x, s=lengths, axes=axes, norm=norm)
    if kind == "ifft":
        return scipy.fft.ifftn(x, s=lengths, axes=axes, norm=norm)
    if kind == "rfft":
        return scipy.fft.rfftn(x, s=lengths, axes=axes, norm=norm)
    return scipy.fft.irfftn(x, s=lengths, axes=axes, norm=norm)


# ---------------------------------------------------------------------------
# the transforms: operand dtype, axes and sizes (torch's rules for s and dim), then one fft_p


def _norm(name, norm):
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise ValueError(f'{name}: Invalid normalization mode: "{norm}"')
    return norm


def _operand(name, x, real_input):
    """x as fft_p takes it: bool and integers -> the default float (then complex unless `real_input`);
    half-precision floats are refused, as by PyTorch on CPU; a complex x where a real one is needed too."""
    x = _family.as_operand(x)
    if not _family.is_arraylike(x):
        x = asarray(x)
    d = x.dtype
    if d.category in (dt.BOOL, dt.INT):
        x = cast(x, dt.default_float)
    elif d.category == dt.FLOAT and d not in (dt.float32, dt.float64):
        raise TypeError(f"{name}: Unsupported dtype {d.scalar_name}")
    elif d.category == dt.COMPLEX and real_input:
        raise TypeError(f"{name} expects a real input array, but got {d.scalar_name}")
    if not real_input and x.dtype.category != dt.COMPLEX:
        x = cast(x, x.dtype.to_complex())
    return x


def _plan(name, x, s, axes, half):
    """(axes, lengths) of an n-D transform. axes None: the last len(s) axes, or all; an entry -1 in s
    keeps that axis's size (irfft's half axis, `half`: 2 * (m - 1))."""
    ndim = x.ndim
    if axes is None:
        if s is None:
            axes = tuple(range(ndim))
        else:
            s = tuple(s)
            if len(s) > ndim:
                raise ValueError(f"{name}: Got shape with {len(s)} values but input tensor only has {ndim} "
                                 "dimensions.")
            axes = tuple(range(ndim - len(s), ndim))
    else:
        axes = (axes,) if isinstance(axes, (int, np.integer)) else tuple(axes)
        for a in axes:
            if ndim == 0 or not -ndim <= a < ndim:
                raise IndexError(f"{name}: axis {a} is out of range for an array of {ndim} dimensions")
        axes = tuple(int(a) % ndim for a in axes)
        if len(set(axes)) != len(axes):
            raise ValueError(f"{name}: FFT dims must be unique, got {axes}")
        if s is not None and len(tuple(s)) != len(axes):
            raise ValueError(f"{name}: When given, dim and shape arguments must have the same length")
    lengths = []
    for i, a in enumerate(axes):
        n = -1 if s is None else int(tuple(s)[i])
        if n == -1:
            n = 2 * (x.shape[a] - 1) if half and i == len(axes) - 1 else x.shape[a]
        if n < 1:
            raise ValueError(f"{name}: Invalid number of data points ({n}) specified")
        lengths.append(n)
    return axes, tuple(lengths)


def _resized(x, axes, sizes):
    """x cropped or zero-padded (at the end) to `sizes` on `axes`."""
    widths = [(0, 0)] * x.ndim
    for a, n in zip(axes, sizes):
        if x.shape[a] > n:
            x = slice_axis(x, a, 0, n)
        elif x.shape[a] < n:
            widths[a] = (0, n - x.shape[a])
    if any(hi for _, hi in widths):
        x = pad(x, tuple(widths))
    return x


def _transform(kind, name, x, s, axes, norm):
    """The n-D transform `kind` of x (already an fft_p operand dtype) as torch.fft.<name> defines it."""
    norm = _norm(name, norm)
    axes, lengths = _plan(name, x, s, axes, half=kind == "irfft")
    if not axes:
        if kind in ("rfft", "irfft"):
            raise ValueError(f"{name} must transform at least one axis")
        return x
    sizes = lengths[:-1] + (lengths[-1] // 2 + 1,) if kind == "irfft" else lengths
    return fft_p.bind(_resized(x, axes, sizes), kind=kind, axes=axes, lengths=lengths, norm=norm)


def _one(name, n):
    """The s of a 1-D transform: an explicit n must be positive (-1 is not "keep the size" here)."""
    if n is None:
        return None
    if n < 1:
        raise ValueError(f"{name}: Invalid number of data points ({n}) specified")
    return (n,)


def fftn(x, s=None, axes=None, norm=None):
    """The n-D discrete Fourier transform (complex output; real and integer inputs promoted)."""
    return _transform("fft", "fftn", _operand("fftn", x, False), s, axes, norm)


def ifftn(x, s=None, axes=None, norm=None):
    """The n-D inverse discrete Fourier transform."""
    return _transform("ifft", "ifftn", _operand("ifftn", x, False), s, axes, norm)


def rfftn(x, s=None, axes=None, norm=None):
    """The n-D transform of a real x: the half spectrum (n // 2 + 1 bins) on the last of `axes`."""
    return _transform("rfft", "rfftn", _operand("rfftn", x, True), s, axes, norm)


def irfftn(x, s=None, axes=None, norm=None):
    """The real inverse of rfftn; the last output size defaults to 2 * (m - 1)."""
    return _transform("irfft", "irfftn", _operand("irfftn", x, False), s, axes, norm)


def hfftn(x, s=None, axes=None, norm=None):
    """The n-D transform of a Hermitian-symmetric signal given as its half (on the last axis): real."""
    x = conj(_operand("hfftn", x, False))
    return _transform("irfft", "hfftn", x, s, axes, _SWAP[_norm("hfftn", norm)])


def ihfftn(x, s=None, axes=None, norm=None):
    """The inverse of hfftn: the half of the Hermitian inverse transform of a real x."""
    x = _operand("ihfftn", x, True)
    return conj(_transform("rfft", "ihfftn", x, s, axes, _SWAP[_norm("ihfftn", norm)]))


def fft(x, n=None, axis=-1, norm=None):
    """The 1-D discrete Fourier transform along `axis` (cropped or zero-padded to n)."""
    return _transform("fft", "fft", _operand("fft", x, False), _one("fft", n), (axis,), norm)


def ifft(x, n=None, axis=-1, norm=None):
    return _transform("ifft", "ifft", _operand("ifft", x, False), _one("ifft", n), (axis,), norm)


def rfft(x, n=None, axis=-1, norm=None):
    return _transform("rfft", "rfft", _operand("rfft", x, True), _one("rfft", n), (axis,), norm)


def irfft(x, n=None, axis=-1, norm=None):
    return _transform("irfft", "irfft", _operand("irfft", x, False), _one("irfft", n), (axis,), norm)


def hfft(x, n=None, axis=-1, norm=None):
    x = conj(_operand("hfft", x, False))
    return _transform("irfft", "hfft", x, _one("hfft", n), (axis,), _SWAP[_norm("hfft", norm)])


def ihfft(x, n=None, axis=-1, norm=None):
    x = _operand("ihfft", x, True)
    return conj(_transform("rfft", "ihfft", x, _one("ihfft", n), (axis,), _SWAP[_norm("ihfft", norm)]))


def fft2(x, s=None, axes=(-2, -1), norm=None):
    return fftn(x, s, axes, norm)


def ifft2(x, s=None, axes=(-2, -1), norm=None):
    return ifftn(x, s, axes, norm)


def rfft2(x, s=None, axes=(-2, -1), norm=None):
    return rfftn(x, s, axes, norm)


def irfft2(x, s=None, axes=(-2, -1), norm=None):
    return irfftn(x, s, axes, norm)


def hfft2(x, s=None, axes=(-2, -1), norm=None):
    return hfftn(x, s, axes, norm)


def ihfft2(x, s=None, axes=(-2, -1), norm=None):
    return ihfftn(x, s, axes, norm)


# ---------------------------------------------------------------------------
# sample frequencies and shifts


def _frequency_dtype(name, dtype):
    dtype = dt.canonicalize(dtype) or dt.default_float
    if dtype.category != dt.FLOAT:
        raise TypeError(f"{name} requires a floating point dtype, got {dtype.name}")
    return dtype


def _inverse_spacing(n, d):
    with np.errstate(divide="ignore"):  # d == 0 gives infinities, as in PyTorch
        return float(np.divide(1.0, n * d))


def _check_count(n):
    if n < 0:
        raise ValueError(f"Trying to create tensor with negative dimension {n}: [{n}]")


def fftfreq(n, d=1.0, dtype=None, device=None):
    """The sample frequencies of an n-point fft with sample spacing d: [0, 1, ..., -2, -1] / (n d)."""
    dtype = _frequency_dtype("fftfreq", dtype)
    _check_count(n)
    k = concatenate([arange(0, (n - 1) // 2 + 1, dtype=dtype, device=device),
                     arange(-(n // 2), 0, dtype=dtype, device=device)])
    return mul(k, _inverse_spacing(n, d))


def rfftfreq(n, d=1.0, dtype=None, device=None):
    """The sample frequencies of an n-point rfft: [0, 1, ..., n // 2] / (n d)."""
    dtype = _frequency_dtype("rfftfreq", dtype)
    _check_count(n)
    return mul(arange(0, n // 2 + 1, dtype=dtype, device=device), _inverse_spacing(n, d))


def _shift(name, x, axes, sign):
    x = _family.as_operand(x)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, (int, np.integer)):
        axes = (axes,)
    axes = tuple(_family.normalize_axis(a, x.ndim, name) for a in axes)
    if not axes:
        return x
    return roll(x, tuple(sign * (x.shape[a] // 2) for a in axes), axes)


def fftshift(x, axes=None):
    """x rolled so that the zero frequency is in the middle of each of `axes` (all by default)."""
    return _shift("fftshift", x, axes, 1)


def ifftshift(x, axes=None):
    """The inverse of fftshift (they differ for odd sizes)."""
    return _shift("ifftshift", x, axes, -1)
