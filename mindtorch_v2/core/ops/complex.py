"""Complex numbers as composites of the complex-part primitives (real_p, imag_p, conj_p, complex_p in
elementwise.py, where their rules are): angle, sgn, polar, and the real/complex pair views.

Complex derivatives in the core follow JAX (see elementwise.py): composites need no rules of their own.
"""
import math

from .. import dtypes as dt
from . import _family
from .elementwise import (cast, complex_p, conj, imag, log, lt, mul, real, sign,  # noqa: F401
                          where, cos, sin)
from .shape import squeeze, stack, slice_axis

__all__ = ["complex", "angle", "sgn", "polar", "real_pair", "from_real_pair", "iscomplexobj", "conjugate"]

conjugate = conj  # jax.numpy's second name


def complex(real, imag):  # noqa: A001 - torch.complex / lax.complex
    """The complex array real + i * imag (float32 parts -> complex64, float64 -> complex128)."""
    real, imag = _family.promote("complex", real, imag)
    return complex_p.bind(real, imag)


def angle(x):
    """The argument of each element, in radians: atan2(imag, real); for real arrays 0 or pi (nan stays nan)."""
    x = _family.as_operand(x)
    if x.dtype.category == dt.COMPLEX:
        return imag(log(x))  # arg z = Im log z, differentiable where z != 0
    if x.dtype.category < dt.FLOAT:
        x = cast(x, dt.default_float)
    return where(lt(x, 0.0), math.pi, mul(x, 0.0))  # x * 0 keeps nan and the zero derivative


sgn = sign  # torch's name: x / |x| (0 at 0), the sign of real arrays, the unit phase of complex ones


def polar(abs_, angle_):
    """The complex array abs * (cos(angle) + i sin(angle))."""
    return complex(mul(abs_, cos(angle_)), mul(abs_, sin(angle_)))


def real_pair(x):
    """A complex array as real numbers: a new last axis of size 2 holding (real, imag)."""
    if x.dtype.category != dt.COMPLEX:
        raise TypeError(f"real_pair: expected a complex array, got {x.dtype.name}")
    return stack([real(x), imag(x)], axis=-1)


def from_real_pair(x):
    """The complex array whose (real, imag) parts are the last axis (of size 2) of x."""
    if x.ndim == 0 or x.shape[-1] != 2:
        raise ValueError(f"from_real_pair: the last axis must have size 2, got shape {tuple(x.shape)}")
    re = squeeze(slice_axis(x, -1, 0, 1), -1)
    im = squeeze(slice_axis(x, -1, 1, 2), -1)
    return complex(re, im)


def iscomplexobj(x):
    """Whether x has a complex dtype."""
    return x.dtype.category == dt.COMPLEX
