"""Samples for the elementwise family, and the array strategies the other families share.

Differentiable samples are float64 and stay inside the op's domain, away from its
kinks and ties (log: positive; div: denominators away from 0; maximum: operands
at least ~0.07 apart), so central differences see one smooth branch. Samples in
other dtypes (float32/16, ints, bool) have `diff=()`: they exercise the meta rule
and the lowering only.
"""
import math

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from mindtorch_v2 import core
from mindtorch_v2.core.autodiff import add_any_p  # machinery-owned: core does not export it

from . import Sample, register

MAX_SIZE = 24
INT_DTYPES = (np.int64, np.int32, np.int16, np.int8, np.uint8)
FLOAT_DTYPES = (np.float64, np.float32, np.float16)
ALL_DTYPES = (np.bool_,) + INT_DTYPES + FLOAT_DTYPES


def size_of(shape):
    return math.prod(shape)


# ---------------------------------------------------------------------------
# shared strategies (imported by the other family modules)


def shapes(min_dims=0, max_dims=3, min_side=1, max_side=4, max_size=MAX_SIZE):
    """Array shapes with at most `max_size` elements; with min_side=0, one draw in four may be empty."""
    def of(lo):
        return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=lo,
                                max_side=max_side).filter(lambda s: size_of(s) <= max_size)
    if min_side == 0:
        return st.integers(0, 3).flatmap(lambda k: of(0 if k == 3 else 1))
    return of(min_side)


def sides(hi, lo=1):
    """A dimension size in [lo, hi], and now and then 0 (empty arrays are an edge worth visiting)."""
    return st.integers(0, 7).flatmap(lambda k: st.just(0) if k == 7 else st.integers(lo, hi))


def broadcast_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=1, max_side=4):
    """Input shapes that broadcast together, with a small result."""
    return hnp.mutually_broadcastable_shapes(
        num_shapes=num_shapes, min_dims=min_dims, max_dims=max_dims, min_side=min_side,
        max_side=max_side).filter(lambda b: size_of(b.result_shape) <= MAX_SIZE).map(lambda b: b.input_shapes)


def floats(shape, lo, hi, dtype=np.float64):
    """float64 values in [lo, hi] (then cast to dtype)."""
    elements = st.floats(lo, hi, allow_nan=False, allow_infinity=False, width=64)
    return hnp.arrays(np.float64, shape, elements=elements).map(lambda a: a.astype(dtype))


def magnitudes(shape, lo, hi):
    """float64 values with |x| in [lo, hi] and either sign (away from 0)."""
    return st.tuples(floats(shape, lo, hi), hnp.arrays(np.bool_, shape)).map(
        lambda p: np.where(p[1], -p[0], p[0]))


def separated(shape, offset=0.0, step=0.2):
    """Distinct float64 values at least `step - 0.03` apart (no ties, no near-ties).

    Values are `step * k + offset + noise` for distinct integers k in [-15, 15] and noise in
    [0, 0.03]; two arrays drawn with offsets 0 and step / 2 are also separated from each other.
    """
    n = size_of(shape)
    ks = hnp.arrays(np.int64, shape, elements=st.integers(-15, 15), unique=True) if n <= 31 else st.nothing()
    return st.tuples(ks, floats(shape, 0.0, 0.03)).map(lambda p: np.asarray(step * p[0] + offset + p[1]))


def ints(shape, dtype=np.int64, lo=-5, hi=5):
    info = np.iinfo(dtype)
    return hnp.arrays(dtype, shape, elements=st.integers(max(lo, int(info.min)), min(hi, int(info.max))))


def any_array(shape, dtypes=ALL_DTYPES, lo=-5, hi=5):
    """An array of one of `dtypes`: small ints (so ties happen), bools, or floats in [lo, hi]."""
    def of(dtype):
        dtype = np.dtype(dtype)
        if dtype.kind == "b":
            return hnp.arrays(np.bool_, shape)
        if dtype.kind in "iu":
            return ints(shape, dtype, lo, hi)
        return floats(shape, lo, hi, dtype)
    return st.sampled_from(dtypes).flatmap(of)


def axes_subset(ndim):
    """A sorted tuple of distinct axes of an ndim-array (possibly empty)."""
    return st.lists(st.integers(0, max(ndim - 1, 0)), unique=True, max_size=ndim).map(
        lambda a: tuple(sorted(a)) if ndim else ())


# ---------------------------------------------------------------------------
# cast / stop_gradient


@st.composite
def _cast(draw):
    shape = draw(shapes(min_side=0))
    src = draw(st.sampled_from(ALL_DTYPES))
    dst = draw(st.sampled_from(ALL_DTYPES))
    if not draw(st.booleans()):
        # float64 -> float64: the one cast whose derivative central differences can check exactly
        return Sample((draw(floats(shape, -3, 3)),), {"dtype": core.float64}, diff=(0,))
    x = draw(any_array(shape, (src,), lo=0, hi=20))  # non-negative: casts to uint8 stay defined
    return Sample((x,), {"dtype": core.dtypes.from_numpy(np.dtype(dst))})


register(core.cast_p, _cast(), linear=True)
register(core.stop_gradient_p, shapes(min_side=0).flatmap(any_array).map(lambda x: Sample((x,))))


@st.composite
def _copy(draw):
    shape = draw(shapes(min_side=0))
    if draw(st.integers(0, 2)) == 2:
        return Sample((draw(any_array(shape)),))
    return Sample((draw(floats(shape, -3, 3)),), diff=(0,))


register(core.copy_p, _copy(), linear=True)


# ---------------------------------------------------------------------------
# unary float ops: (lo, hi) of the sampled domain; "mag" domains are |x| in [lo, hi]

_UNARY_FLOAT = {
    core.exp_p: (-3, 3), core.expm1_p: (-3, 3), core.log_p: (0.3, 5), core.log1p_p: (-0.6, 5),
    core.sqrt_p: (0.3, 5), core.rsqrt_p: (0.3, 5), core.sin_p: (-4, 4), core.cos_p: (-4, 4),
    core.tan_p: (-1.2, 1.2), core.tanh_p: (-3, 3), core.sigmoid_p: (-4, 4), core.erf_p: (-2.5, 2.5),
    core.reciprocal_p: ("mag", 0.4, 4),
}


def _domain(spec, shape, dtype=np.float64):
    if spec[0] == "mag":
        return magnitudes(shape, spec[1], spec[2]).map(lambda a: a.astype(dtype))
    return floats(shape, spec[0], spec[1], dtype)


def complexify(real_values, imag_lo=-0.5, imag_hi=0.5):
    """complex128 values: the given real parts (a strategy of float64 arrays) plus small imaginary parts,
    which keeps a domain's real restriction (log: positive real part, away from the branch cut)."""
    return real_values.flatmap(lambda re: floats(re.shape, imag_lo, imag_hi).map(lambda im: np.asarray(re + 1j * im)))


_REAL_ONLY = {core.erf_p}


def _unary_float(prim, spec):
    @st.composite
    def strategy(draw):
        shape = draw(shapes(min_side=0))
        k = draw(st.integers(0, 3))
        if k == 3:  # float32 / float16: meta rule and lowering only
            dtype = draw(st.sampled_from((np.float32, np.float16)))
            return Sample((draw(_domain(spec, shape, dtype)),))
        if k == 2 and prim not in _REAL_ONLY:  # complex128: the holomorphic rule, JAX's convention
            return Sample((draw(complexify(_domain(spec, shape))),), diff=(0,))
        return Sample((draw(_domain(spec, shape)),), diff=(0,))
    return strategy()


for _prim, _spec in _UNARY_FLOAT.items():
    register(_prim, _unary_float(_prim, _spec))


# numeric unary ops (no bool): float64 away from the kink at 0 for abs; ints for the meta rule
_NUMERIC = INT_DTYPES + FLOAT_DTYPES


@st.composite
def _numeric_unary(draw, differentiable, lo=-4, hi=4, complex_too=False):
    shape = draw(shapes(min_side=0))
    k = draw(st.integers(0, 3))
    if differentiable and complex_too and k == 3:  # |z| away from 0, where it is smooth
        return Sample((draw(complexify(magnitudes(shape, 0.3, hi), 0.3, 1.0)),), diff=(0,))
    if differentiable and k < 2:
        return Sample((draw(magnitudes(shape, 0.1, hi)),), diff=(0,))
    return Sample((draw(any_array(shape, _NUMERIC, lo, hi)),))


register(core.neg_p, _numeric_unary(True, complex_too=True), linear=True)
register(core.abs_p, _numeric_unary(True, complex_too=True))


@st.composite
def _relu(draw):
    """relu: float64 away from the kink at 0 (differentiable), or any real numeric dtype."""
    shape = draw(shapes(min_side=0))
    if draw(st.integers(0, 2)) < 2:
        mags = draw(magnitudes(shape, 0.1, 4))
        return Sample((mags,), diff=(0,))
    return Sample((draw(any_array(shape, _NUMERIC, -4, 4)),))


@st.composite
def _threshold_backward(draw):
    """threshold_backward(g, out): g passes where out > 0; out away from 0 (its derivative is zero there)."""
    shape = draw(shapes(min_side=0))
    g = draw(floats(shape, -3, 3))
    out = draw(magnitudes(shape, 0.1, 4))
    return Sample((g, out), diff=(0, 1))


register(core.relu_p, _relu())
register(core.threshold_backward_p, _threshold_backward())


@st.composite
def _piecewise_constant(draw):
    """sign / floor / ceil / round: zero derivative (as in PyTorch) away from the jumps; float64 values
    k + 0.15..0.35 or k + 0.65..0.85 stay >= 0.15 from integers and half-integers (and from 0)."""
    shape = draw(shapes(min_side=0))
    if draw(st.booleans()):
        return Sample((draw(any_array(shape, _NUMERIC, -4, 4)),))
    whole = draw(ints(shape, np.int64, -4, 4))
    frac = draw(floats(shape, 0.15, 0.35))
    upper = draw(hnp.arrays(np.bool_, shape))
    return Sample((np.asarray(whole + frac + 0.5 * upper),), diff=(0,))


for _prim in (core.sign_p, core.floor_p, core.ceil_p, core.round_p):
    register(_prim, _piecewise_constant())
register(core.logical_not_p, shapes(min_side=0).flatmap(any_array).map(lambda x: Sample((x,))))
register(core.bitwise_not_p, shapes(min_side=0).flatmap(
    lambda s: any_array(s, (np.bool_,) + INT_DTYPES)).map(lambda x: Sample((x,))))


# ---------------------------------------------------------------------------
# binary ops


@st.composite
def _binary(draw, dtypes, x_dom=(-3, 3), y_dom=(-3, 3), separated_pair=False):
    """Two broadcastable operands of one dtype; float64 ones are differentiable."""
    sx, sy = draw(broadcast_shapes(2))
    if dtypes and draw(st.integers(0, 2)) == 2:
        dtype = draw(st.sampled_from(dtypes))
        if np.dtype(dtype).kind == "f":  # same domain, lower precision
            return Sample((draw(_domain(x_dom, sx, dtype)), draw(_domain(y_dom, sy, dtype))))
        return Sample((draw(any_array(sx, (dtype,))), draw(any_array(sy, (dtype,)))))
    if separated_pair:
        x, y = draw(separated(sx, 0.0)), draw(separated(sy, 0.1))
    else:
        x, y = draw(_domain(x_dom, sx)), draw(_domain(y_dom, sy))
    return Sample((x, y), diff=(0, 1))


register(core.add_p, _binary(ALL_DTYPES), linear=True)
register(core.sub_p, _binary(_NUMERIC), linear=True)
register(core.mul_p, _binary(ALL_DTYPES))
register(core.div_p, _binary((np.float32, np.float16), y_dom=("mag", 0.5, 3)))
register(core.maximum_p, _binary(ALL_DTYPES, separated_pair=True))
register(core.minimum_p, _binary(ALL_DTYPES, separated_pair=True))


@st.composite
def _pow(draw):
    sx, sy = draw(broadcast_shapes(2))
    if draw(st.integers(0, 2)) == 2:  # integer powers: non-negative exponents (numpy rejects negative ones)
        dtype = draw(st.sampled_from((np.int64, np.int32, np.int16)))
        return Sample((draw(ints(sx, dtype, -3, 3)), draw(ints(sy, dtype, 0, 3))))
    # positive base keeps log(x) (the exponent's partial) defined
    return Sample((draw(floats(sx, 0.5, 3)), draw(floats(sy, -2, 2))), diff=(0, 1))


register(core.pow_p, _pow())


def _nonzero_ints(shape, dtype):
    return ints(shape, dtype, 1, 6).flatmap(
        lambda a: hnp.arrays(np.bool_, shape).map(
            lambda s: np.where(s & (np.dtype(dtype).kind == "i"), -a, a).astype(dtype)))


@st.composite
def _floor_divide(draw):
    if draw(st.integers(0, 2)) == 2:  # float64 away from the jumps (see _remainder): zero derivative
        return draw(_remainder(float_only=True))
    sx, sy = draw(broadcast_shapes(2))
    dtype = draw(st.sampled_from(_NUMERIC))
    if np.dtype(dtype).kind == "f":
        return Sample((draw(floats(sx, -5, 5, dtype)), draw(magnitudes(sy, 0.5, 3).map(lambda a: a.astype(dtype)))))
    return Sample((draw(ints(sx, dtype, -9, 9)), draw(_nonzero_ints(sy, dtype))))


@st.composite
def _remainder(draw, float_only=False):
    """x % y away from the jumps: y in {+-0.5, +-1, +-2, +-4} and frac(x) in [0.1, 0.4] u [0.6, 0.9],
    so x / y is never within ~0.05 of an integer, for every broadcast pair."""
    sx, sy = draw(broadcast_shapes(2))
    if not float_only and draw(st.integers(0, 2)) == 2:
        dtype = draw(st.sampled_from(INT_DTYPES))
        return Sample((draw(ints(sx, dtype, -9, 9)), draw(_nonzero_ints(sy, dtype))))
    whole = draw(ints(sx, np.int64, -4, 4))
    frac = draw(floats(sx, 0.1, 0.4))
    upper = draw(hnp.arrays(np.bool_, sx))
    x = np.asarray(whole + frac + 0.5 * upper)
    y = draw(hnp.arrays(np.float64, sy, elements=st.sampled_from((-4.0, -2.0, -1.0, -0.5, 0.5, 1.0, 2.0, 4.0))))
    return Sample((x, y), diff=(0, 1))


register(core.remainder_p, _remainder())
register(core.floor_divide_p, _floor_divide())


@st.composite
def _compare(draw, dtypes=ALL_DTYPES):
    sx, sy = draw(broadcast_shapes(2))
    dtype = draw(st.sampled_from(dtypes))
    return Sample((draw(any_array(sx, (dtype,), -2, 2)), draw(any_array(sy, (dtype,), -2, 2))))


for _prim in (core.eq_p, core.ne_p, core.lt_p, core.le_p, core.gt_p, core.ge_p,
              core.logical_and_p, core.logical_or_p, core.logical_xor_p):
    register(_prim, _compare())
for _prim in (core.bitwise_and_p, core.bitwise_or_p, core.bitwise_xor_p):
    register(_prim, _compare((np.bool_,) + INT_DTYPES))


@st.composite
def _where(draw):
    sc, sx, sy = draw(broadcast_shapes(3))
    c = draw(hnp.arrays(np.bool_, sc))
    if draw(st.integers(0, 2)) == 2:
        dtype = draw(st.sampled_from(ALL_DTYPES))
        return Sample((c, draw(any_array(sx, (dtype,))), draw(any_array(sy, (dtype,)))))
    return Sample((c, draw(floats(sx, -3, 3)), draw(floats(sy, -3, 3))), diff=(1, 2))


register(core.where_p, _where())


@st.composite
def _add_any(draw):
    """autodiff's sum of two cotangents: operands of one shape and one float dtype, as the interpreters add them."""
    shape = draw(shapes(min_side=0))
    if draw(st.integers(0, 2)) == 2:
        dtype = draw(st.sampled_from((np.float32, np.float16)))
        return Sample((draw(floats(shape, -3, 3, dtype)), draw(floats(shape, -3, 3, dtype))))
    return Sample((draw(floats(shape, -3, 3)), draw(floats(shape, -3, 3))), diff=(0, 1))


register(add_any_p, _add_any(), linear=True)
