"""Torch names for the core's functions (dim/keepdim -> axis/keepdims), as
`torch.fn(...)` and as `Tensor.fn(...)`. The core functions run on Tensors
through the bind hook, so each primitive they bind is recorded for autograd.
"""
import builtins
import math

import numpy as np

from .. import core
from ..core import dtypes as _dt
from .tensor import UnsupportedDTypeError
from .tensor import Size, Tensor, _dim, _int_sizes, _named, as_result, bind_binary, bind_unary
from . import grad_mode, return_types
from .autograd.graph import NotImplementedNode
from .autocast_state import lower_precision
from .declare import tensor_method, torch_op, write_out
from .inplace import check_scalar_fits
from .memory_format import keep_layout
from . import promotion as _promotion

__all__ = [
    "abs", "absolute", "neg", "negative", "sign", "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "sin",
    "cos", "tan", "tanh", "sigmoid", "erf", "floor", "ceil", "round", "reciprocal", "logical_not", "relu",
    "square", "trunc", "fix", "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide",
    "floor_divide", "remainder", "fmod", "pow", "maximum", "minimum", "eq", "ne", "not_equal", "lt", "less", "le",
    "less_equal", "gt", "greater", "ge", "greater_equal",
    "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
    "clamp", "clip", "clamp_min", "clamp_max", "masked_fill", "lerp", "isclose", "allclose", "equal", "isnan",
    "isinf", "isfinite", "sum", "prod", "mean", "var", "std", "max", "min", "amax", "amin", "argmax", "argmin",
    "all", "any", "cumsum", "logsumexp", "softmax", "log_softmax", "norm", "count_nonzero", "sort", "argsort",
    "topk", "gather", "scatter", "scatter_add", "index_select", "index_add", "index_fill", "take", "take_along_dim", "nonzero",
    "masked_select", "flip", "roll", "tril", "triu", "repeat", "tile", "broadcast_to", "matmul", "mm", "bmm",
    "mv", "dot", "inner", "outer", "addmm", "trace", "diag", "concat", "concatenate", "cat", "stack", "hstack",
    "vstack", "broadcast_tensors", "broadcast_shapes", "einsum", "where", "cdist", "ger", "rsub", "result_type",
    "promote_types", "can_cast",
]



_w = as_result


def _t(x):
    """A Tensor from a Tensor, number or array-like input."""
    if isinstance(x, Tensor):
        return x
    return Tensor._from_value(core.asarray(x))


def _axis(dim, ndim, empty_is_all=True):
    """torch dims -> core axes: None or [] (torch's "all dims" for sum, mean, ...) -> None, negative dims
    wrapped; a repeated dim is torch's RuntimeError."""
    if dim is None:
        return None
    if isinstance(dim, (tuple, list)):
        if not dim and empty_is_all:
            return None
        axes = tuple(_dim(d, ndim) for d in dim)
        for i, a in enumerate(axes):
            if a in axes[:i]:
                raise RuntimeError(f"dim {a} appears multiple times in the list of dims")
        return axes
    return _dim(dim, ndim)


def _check_nonempty(name, x, axis, error=IndexError):
    """torch's IndexError for max/min/argmax-like reductions over an empty dim (over all dims of an empty
    input: `error`, a RuntimeError for amax/amin)."""
    if axis is None:
        if x.numel() == 0:
            raise error(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                        "reduction dim with the 'dim' argument.")
        return
    for a in (axis if isinstance(axis, tuple) else (axis,)):
        if x.ndim and x.shape[a] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {a} to have non-zero size.")


# ---------------------------------------------------------------------------
# elementwise

def _unary(fn, prim=None):
    """torch.fn(input). With `prim` (fn is the core's float_unary of it: fn(x) is prim.bind(x) for a floating
    or complex x), such tensors go straight to the bind hook."""
    def op(input):
        if prim is not None and isinstance(input, Tensor) and input._storage.value.dtype.category >= _FLOAT:
            out = bind_unary(prim, input)
            return out if input._strides is None else keep_layout(out, input)
        x = _t(input)
        out = _w(fn(x))
        return out if x._strides is None else keep_layout(out, x)
    op.__name__ = fn.__name__
    return op


abs = torch_op(_unary(core.abs), name="abs", inplace=True, out=True, aliases=("absolute",))  # noqa: A001
absolute = abs
neg = negative = torch_op(_unary(core.neg), name="neg", inplace=True, out=True, aliases=("negative",))
_sign = _unary(core.sign)


@torch_op(inplace=True, out=True)
def sign(input):
    if input.dtype.category == _dt.COMPLEX:
        raise RuntimeError("Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
                           "torch.sgn instead.")
    return input.clone() if input.dtype is _dt.bool_ else _sign(input)  # sign(bool) is itself in torch


exp = torch_op(_unary(core.exp, core.exp_p), name="exp", inplace=True, out=True)
expm1 = torch_op(_unary(core.expm1, core.expm1_p), name="expm1", inplace=True, out=True)
log = torch_op(_unary(core.log, core.log_p), name="log", inplace=True, out=True)
log1p = torch_op(_unary(core.log1p, core.log1p_p), name="log1p", inplace=True, out=True)
sqrt = torch_op(_unary(core.sqrt, core.sqrt_p), name="sqrt", inplace=True, out=True)
rsqrt = torch_op(_unary(core.rsqrt, core.rsqrt_p), name="rsqrt", inplace=True, out=True)
sin = torch_op(_unary(core.sin, core.sin_p), name="sin", inplace=True, out=True)
cos = torch_op(_unary(core.cos, core.cos_p), name="cos", inplace=True, out=True)
tan = torch_op(_unary(core.tan, core.tan_p), name="tan", inplace=True, out=True)
tanh = torch_op(_unary(core.tanh, core.tanh_p), name="tanh", inplace=True, out=True)
sigmoid = torch_op(_unary(core.sigmoid, core.sigmoid_p), name="sigmoid", inplace=True, out=True)
erf = torch_op(_unary(core.erf, core.erf_p), name="erf", inplace=True, out=True)
floor = torch_op(_unary(core.floor), name="floor", inplace=True, out=True)
ceil = torch_op(_unary(core.ceil), name="ceil", inplace=True, out=True)
_round = _unary(core.round)


@torch_op(inplace=True, out=True)
def round(input, *, decimals=0):  # noqa: A001
    """Half to even; with `decimals`, torch's round(x * 10**d) / 10**d (x / 10**-d for d < 0)."""
    if not decimals:
        return _round(input)
    if input.dtype.category != _FLOAT:
        raise UnsupportedDTypeError(f'"round_cpu" not implemented for {input.dtype.scalar_name!r}')
    scale = 10.0 ** builtins.abs(decimals)
    x = input.to(_dt.float32) if input.dtype is _dt.float16 else input  # half computes in float, as torch
    if decimals > 0:
        out = true_divide(_round(mul(x, scale)), scale)
    else:
        out = mul(_round(true_divide(x, scale)), scale)
    return out.to(input.dtype)


reciprocal = torch_op(_unary(core.reciprocal), name="reciprocal", inplace=True, out=True)
logical_not = torch_op(_unary(core.logical_not), name="logical_not", inplace=True, out=True)
_relu = _unary(core.relu)
_square = _unary(core.square)


@torch_op(inplace=True)
def relu(input):
    if input.dtype is _dt.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")
    return _named(_relu(input), "ReluBackward0", input)


@torch_op(inplace=True, out=True)
def square(input):
    return _square(input.to(_dt.int64) if input.dtype is _dt.bool_ else input)  # torch: pow(x, 2)


@torch_op(inplace=True, out=True)
def log2(input):
    return _w(core.log2(_t(input)))


@torch_op(inplace=True, out=True)
def log10(input):
    return _w(core.log10(_t(input)))


@torch_op(inplace=True, out=True, aliases=("fix",))
def trunc(input):
    return _w(core.trunc(_t(input)))


fix = trunc


_FLOAT = _dt.FLOAT


_I64, _U64 = 1 << 63, 1 << 64  # a Python int operand must fit one of torch's 64-bit scalars


def _binary(fn, prim=None, float_only=False):
    """torch.fn(input, other); same-dtype tensors (and a float tensor with a python number) go straight
    to the bind hook, the rest to the core function with operands cast to torch's result dtype."""
    promote = _promotion.promote
    if prim is None:
        def op(input, other):
            out = _w(fn(*promote(input, other)))
            return out if out._shape.__len__() < 2 else keep_layout(out, input, other)
    else:
        scalar = core.scalar_array

        def op(input, other):
            if isinstance(input, Tensor):
                dtype = input._storage.value.dtype  # (input.dtype without the property call)
                if isinstance(other, Tensor):
                    if dtype is other._storage.value.dtype and (not float_only or dtype.category == _FLOAT):
                        out = bind_binary(prim, input, other)
                        return out if input._strides is None and other._strides is None else \
                            keep_layout(out, input, other)
                elif (type(other) is float or type(other) is int) and dtype.category == _FLOAT:
                    if type(other) is int and not -_I64 <= other < _U64:
                        _promotion.check_int_operand(other)
                    out = bind_binary(prim, input, scalar(other, dtype, input._storage.value.device))
                    return out if input._strides is None else keep_layout(out, input)
            out = _w(fn(*promote(input, other)))
            return out if out._shape.__len__() < 2 else keep_layout(out, input, other)
    op.__name__ = fn.__name__
    return op


mul = multiply = torch_op(_binary(core.mul, core.mul_p), name="mul", inplace=True, out=True, aliases=("multiply",))
true_divide = torch_op(_binary(core.div, core.div_p, float_only=True), name="true_divide", inplace=True, out=True)
_floor_divide = _binary(core.floor_divide)


def floor_divide(input, other):
    """input // other; torch defines no derivative: the result's grad_fn raises when backward reaches it."""
    args = (input, other)
    if not (grad_mode.tape_enabled() and builtins.any(isinstance(a, Tensor) and a._rg for a in args)):
        return _floor_divide(input, other)
    with grad_mode.no_grad():
        out = _floor_divide(input, other)
    if out.dtype.category >= _FLOAT:
        edges = tuple(a._edge() if isinstance(a, Tensor) and a._rg else (None, 0) for a in args)
        out._grad_fn, out._output_nr, out._rg = NotImplementedNode("floor_divide", edges), 0, True
    return out


floor_divide = torch_op(floor_divide, inplace=True, out=True)
remainder = torch_op(_binary(core.remainder), name="remainder", inplace=True, out=True)
_pow = _binary(core.pow)


@torch_op(inplace=True, out=True)
def pow(input, exponent):  # noqa: A001
    if isinstance(exponent, (int, np.integer)) and not isinstance(exponent, (bool, np.bool_)) and exponent < 0 \
            and isinstance(input, Tensor) and input.dtype.category != _FLOAT:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if isinstance(exponent, (bool, np.bool_)) and isinstance(input, Tensor) and input.dtype is _dt.bool_:
        return input.clone() if exponent else ones_like_bool(input)  # x ** True is x; x ** False is True
    return _pow(input, exponent)


maximum = torch_op(_binary(core.maximum, core.maximum_p), name="maximum", out=True)
minimum = torch_op(_binary(core.minimum, core.minimum_p), name="minimum", out=True)
eq = torch_op(_binary(core.eq, core.eq_p), name="eq", out=True)
ne = not_equal = torch_op(_binary(core.ne, core.ne_p), name="ne", out=True, aliases=("not_equal",))
lt = less = torch_op(_binary(core.lt, core.lt_p), name="lt", out=True, aliases=("less",))
le = less_equal = torch_op(_binary(core.le, core.le_p), name="le", out=True, aliases=("less_equal",))
gt = greater = torch_op(_binary(core.gt, core.gt_p), name="gt", out=True, aliases=("greater",))
ge = greater_equal = torch_op(_binary(core.ge, core.ge_p), name="ge", out=True,
                                aliases=("greater_equal",))
logical_and = torch_op(_binary(core.logical_and), name="logical_and", out=True)
logical_or = torch_op(_binary(core.logical_or), name="logical_or", out=True)
logical_xor = torch_op(_binary(core.logical_xor), name="logical_xor", out=True)
bitwise_and = torch_op(_binary(core.bitwise_and), name="bitwise_and", inplace=True, out=True)
bitwise_or = torch_op(_binary(core.bitwise_or), name="bitwise_or", inplace=True, out=True)
bitwise_xor = torch_op(_binary(core.bitwise_xor), name="bitwise_xor", inplace=True, out=True)
bitwise_not = torch_op(_unary(core.bitwise_not), name="bitwise_not", inplace=True, out=True)


_add = _binary(core.add, core.add_p)
_sub_same = _binary(core.sub, core.sub_p)


def _is_bool(x):
    return x.dtype is _dt.bool_ if isinstance(x, Tensor) else isinstance(x, (bool, np.bool_))


def _sub(input, other):
    if _is_bool(input) or _is_bool(other):
        if _is_bool(input) and _is_bool(other):
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
                               "or `logical_xor()` operator instead.")
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
                           "to invert a mask, use the `~` or `logical_not()` operator instead.")
    return _sub_same(input, other)


def _scaled(input, other, alpha):
    """alpha * other in the dtype of the op's result (alpha takes no part in the promotion, as in torch)."""
    kind = type(alpha)
    if kind is int or kind is float:
        if alpha == 1:
            return other
    elif isinstance(alpha, Tensor):  # (a tensor lr: a scalar to torch, read without a Python comparison, so a
        alpha = alpha.detach()       # compiled step keeps it an input; no derivative flows into it)
    elif alpha == 1 and kind is not bool:
        return other
    dtype = _promotion.result_type(input, other)
    if isinstance(alpha, (bool, np.bool_)) and dtype is not _dt.bool_:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, (float, np.floating)) and dtype.category != _FLOAT:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if not isinstance(other, Tensor):
        return bool(other * alpha) if dtype is _dt.bool_ else other * alpha
    out = mul(other.to(dtype) if other.dtype is not dtype else other, alpha)
    return out if out.dtype is dtype else out.to(dtype)  # bool * 2 is int64; torch keeps bool


@torch_op(inplace=True, out=True)
def add(input, other, *, alpha=1):
    return _add(input, _scaled(input, other, alpha))


@torch_op(inplace=True, out=True, aliases=("subtract",))
def sub(input, other, *, alpha=1):
    return _sub(input, _scaled(input, other, alpha))


subtract = sub


def rsub(input, other, *, alpha=1):
    return sub(other, input, alpha=alpha)


@torch_op(inplace=True, out=True, aliases=("divide",))
def div(input, other, *, rounding_mode=None):
    if rounding_mode is None:
        return true_divide(input, other)
    if rounding_mode == "floor":
        return _w(core.floor_divide(*_promotion.promote(input, other)))
    if rounding_mode == "trunc":
        return _w(core.trunc_divide(*_promotion.promote(input, other)))
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")


divide = div


@torch_op(inplace=True, out=True)
def fmod(input, other):
    """C's fmod: the remainder with the sign of the dividend."""
    return _w(core.fmod(*_promotion.promote(input, other)))


@torch_op(method=False, out=True)
def where(condition, input=None, other=None):
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if isinstance(condition, Tensor) and condition.dtype is not _dt.bool_ and condition.dtype is not _dt.uint8:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{condition.dtype.scalar_name}")
    return keep_layout(_w(core.where(condition, *_promotion.promote(input, other))), condition, input, other)


@tensor_method("where")
def _where_method(self, condition, other):
    """Tensor.where(condition, other): self where condition holds, else other."""
    return where(condition, self, other)


@torch_op(inplace=True, out=True, aliases=("clip",))
def clamp(input, min=None, max=None):  # noqa: A002
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    x = _t(input)
    bounds = [b for b in (min, max) if b is not None]
    if x.dtype is _dt.bool_ and not (len(bounds) == 1 and isinstance(bounds[0], Tensor)) \
            and _promotion.result_type(x, *bounds) is _dt.bool_:  # (one bool tensor bound works: clamp_min / _max)
        raise UnsupportedDTypeError('"clamp_cpu" not implemented for \'Bool\'')
    tensor_bound = isinstance(min, Tensor) or isinstance(max, Tensor)
    if tensor_bound:  # torch's result dtype of all three (numbers keep x's dtype in the core too)
        x, *bounds = _promotion.promote(x, *bounds)
        min, max = (bounds.pop(0) if min is not None else None), (bounds.pop(0) if max is not None else None)
    return _named(_w(core.clamp(x, min, max)), "ClampBackward0" if tensor_bound else "ClampBackward1", x)


clip = clamp


@torch_op(inplace=True)
def clamp_min(input, min):  # noqa: A002
    return clamp(input, min=min)


@torch_op(inplace=True)
def clamp_max(input, max):  # noqa: A002
    return clamp(input, max=max)


@torch_op(inplace=True)
def masked_fill(input, mask, value):
    mask = _t(mask)
    if mask.dtype is not _dt.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {mask.dtype}")
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    if not isinstance(value, Tensor):
        check_scalar_fits(value, input.dtype)
        value = core.full((), value, dtype=input.dtype, device=input.device)
    else:
        value = core.cast(value, input.dtype)
    return _w(core.where(mask, value, input))


@torch_op(inplace=True, out=True)
def lerp(input, end, weight):
    input, end, weight = _promotion.promote(input, end, weight)
    return _w(core.add(input, core.mul(weight, core.sub(end, input))))


@torch_op
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = _promotion.promote(_t(input), _t(other))
    close = core.le(core.abs(core.sub(a, b)), core.add(atol, core.mul(rtol, core.abs(b))))
    close = core.logical_or(close, core.eq(a, b))
    if equal_nan:
        close = core.logical_or(close, core.logical_and(core.ne(a, a), core.ne(b, b)))
    return _w(close)


@torch_op
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(core.all(isclose(input, other, rtol, atol, equal_nan)).item())


@torch_op
def equal(input, other):
    return tuple(input.shape) == tuple(other.shape) and bool(core.all(core.eq(input, other)).item())


@torch_op
def isnan(input):
    x = _t(input)
    return _w(core.ne(x, x))


@torch_op
def isinf(input):
    x = _t(input)
    return _w(core.eq(core.abs(x), math.inf)) if x.dtype.category == _dt.FLOAT else zeros_like_bool(x)


@torch_op
def isfinite(input):
    return _w(core.isfinite(_t(input)))


def zeros_like_bool(x):
    return _w(core.zeros(tuple(x.shape), dtype=_dt.bool_, device=x.device))


def ones_like_bool(x):
    return _w(core.full(tuple(x.shape), True, dtype=_dt.bool_, device=x.device))


def result_type(tensor1, tensor2):
    """The dtype torch's promotion gives an op on these two (tensors or numbers)."""
    return _promotion.result_type(tensor1, tensor2)


def promote_types(type1, type2):
    return _promotion.promote_types(_dt.canonicalize(type1), _dt.canonicalize(type2))


def can_cast(from_, to):
    """Whether casting keeps the kind (bool -> integer -> floating), as torch's same_kind rule."""
    return _dt.canonicalize(from_).category <= _dt.canonicalize(to).category


# ---------------------------------------------------------------------------
# reductions


def _reduce_args(input, dim, keepdim, empty_is_all=True):
    x = _t(input)
    return x, _axis(dim, x.ndim, empty_is_all), bool(keepdim)


def _is_unsigned(x):
    return x.dtype.category == _dt.INT and not x.dtype.is_signed


def _with_dtype(out, dtype):
    """A sum/prod/cumsum result in the requested dtype (the core's integer sums are int64)."""
    if dtype is None:
        return _w(out)
    dtype = _dt.canonicalize(dtype)
    return _w(out if out.dtype is dtype else core.cast(out, dtype))


@torch_op(out=True)
def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001
    x, axis, keepdim = _reduce_args(input, dim, keepdim)
    if dtype is None and _is_unsigned(x):
        dtype = _dt.int64  # torch's sums of integers are int64 (the core's, the standard's, stay unsigned)
    if dtype is not None:
        x = core.cast(x, dtype)
    out = _with_dtype(core.sum(x, axis, keepdim), dtype)
    return out if dim is None else _named(out, "SumBackward1", input)


@torch_op(out=True)
def prod(input, dim=None, keepdim=False, *, dtype=None):
    x, axis, keepdim = _reduce_args(input, dim, keepdim)
    if dtype is None and _is_unsigned(x):
        dtype = _dt.int64
    if dtype is not None:
        x = core.cast(x, dtype)
    return _with_dtype(core.prod(x, axis, keepdim), dtype)


@torch_op(out=True)
def mean(input, dim=None, keepdim=False, *, dtype=None):
    x = _t(input)
    if dtype is not None:
        x = _w(core.cast(x, dtype))
    if x.dtype.category < _dt.FLOAT:
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {x.dtype.scalar_name}")
    x, axis, keepdim = _reduce_args(x, dim, keepdim)
    return _named(_w(core.mean(x, axis, keepdim)), "MeanBackward0" if dim is None else "MeanBackward1", input)



def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased in (None, True) else 0


def _check_float_for_var(x):
    if x.dtype.category < _dt.FLOAT:
        raise RuntimeError("std and var only support floating point and complex dtypes")


@torch_op(out=True)
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, bool):  # the var(input, unbiased) overload
        dim, unbiased = None, dim
    _check_float_for_var(_t(input))
    x, axis, keepdim = _reduce_args(input, dim, keepdim)
    return _named(_w(_in_float64(core.var, x, axis, _correction(unbiased, correction), keepdim)), "VarBackward0")


@torch_op(out=True)
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, bool):  # the std(input, unbiased) overload
        dim, unbiased = None, dim
    _check_float_for_var(_t(input))
    x, axis, keepdim = _reduce_args(input, dim, keepdim)
    return _named(_w(_in_float64(core.std, x, axis, _correction(unbiased, correction), keepdim)), "StdBackward0")


def _in_float64(fn, x, *args):
    """fn(x, *args) accumulated in float64 for a float32 x and rounded once, as torch's cpu var/std kernels
    (Welford in double): the std of [1e20, -1e20, 1e20] is 1.15e20, not the inf of a float32 square."""
    if x.dtype is not _dt.float32:
        return fn(x, *args)
    return core.cast(fn(core.cast(x, _dt.float64), *args), _dt.float32)


def _extremum(name, core_reduce, core_arg, core_pair, rtype):
    def op(input, dim=None, keepdim=False, *, out=None):
        if out is not None:  # torch.max(x, dim, out=(values, indices)): the pair written in place
            res = op(input, dim, keepdim)
            if isinstance(res, Tensor):
                return write_out(name, out, res)
            values, indices = out
            return rtype(write_out(name, values, res.values), write_out(name, indices, res.indices))
        if isinstance(dim, Tensor):
            return _w(core_pair(input, dim))
        x = _t(input)
        if dim is None:
            if x.numel() == 0:
                raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                                   "Specify the reduction dim with the 'dim' argument.")
            return _named(_w(core_reduce(x)), f"{name.capitalize()}Backward1", x)
        d = _dim(dim, x.ndim)
        _check_nonempty(name, x, d)
        if x.ndim == 0:
            return rtype(x, _w(core.zeros((), dtype=_dt.int64, device=x.device)))
        idx = core_arg(x, d, keepdims=True)
        values = core.gather(x, d, idx)
        if not keepdim:
            values, idx = core.squeeze(values, d), core.squeeze(idx, d)
        return rtype(_w(values), _w(idx))
    op.__name__ = name
    return op


max = torch_op(_extremum('max', core.max, core.argmax, core.maximum, return_types.max), name="max")  # noqa: A001
min = torch_op(_extremum('min', core.min, core.argmin, core.minimum, return_types.min), name="min")  # noqa: A001


@torch_op(out=True)
def amax(input, dim=(), keepdim=False):
    x, axis, keepdim = _reduce_args(input, dim, keepdim)
    _check_nonempty("amax", x, axis, RuntimeError)
    return _named(_w(core.max(x, axis, keepdim)), "AmaxBackward0", input)


@torch_op(out=True)
def amin(input, dim=(), keepdim=False):
    x, axis, keepdim = _reduce_args(input, dim, keepdim)
    _check_nonempty("amin", x, axis, RuntimeError)
    return _w(core.min(x, axis, keepdim))


@torch_op(out=True)
def argmax(input, dim=None, keepdim=False):
    x = _t(input)
    if x.dtype is _dt.bool_:
        raise RuntimeError("argmax(): does not support bool input")
    axis = None if dim is None else _dim(dim, x.ndim)
    _check_nonempty("argmax", x, axis)
    return _w(core.argmax(x, axis, keepdim))


@torch_op(out=True)
def argmin(input, dim=None, keepdim=False):
    x = _t(input)
    if x.dtype is _dt.bool_:
        raise RuntimeError("argmin(): does not support bool input")
    axis = None if dim is None else _dim(dim, x.ndim)
    _check_nonempty("argmin", x, axis)
    return _w(core.argmin(x, axis, keepdim))


@torch_op(out=True)
def all(input, dim=None, keepdim=False):  # noqa: A001
    x, axis, keepdim = _reduce_args(input, dim, keepdim, empty_is_all=False)
    return _with_dtype(core.all(x, axis, keepdim), _dt.uint8 if x.dtype is _dt.uint8 else None)  # uint8 stays


@torch_op(out=True)
def any(input, dim=None, keepdim=False):  # noqa: A001
    x, axis, keepdim = _reduce_args(input, dim, keepdim, empty_is_all=False)
    return _with_dtype(core.any(x, axis, keepdim), _dt.uint8 if x.dtype is _dt.uint8 else None)


@torch_op(inplace=True, out=True)
def cumsum(input, dim, *, dtype=None):
    x = _t(input)
    if dtype is not None:
        x = core.cast(x, dtype)
    return _with_dtype(core.cumsum(x, _dim(dim, x.ndim)), dtype)


@torch_op(out=True)
def logsumexp(input, dim, keepdim=False):
    x, axis, keepdim = _reduce_args(input, dim, keepdim)
    return _w(core.logsumexp(x, axis, keepdim))


def _softmax_input(input, dtype, name):
    x = _t(input)
    if dtype is not None:
        x = core.cast(x, dtype)
    if x.dtype.category != _FLOAT and x.numel():  # (an empty input comes back as it is, in torch)
        raise UnsupportedDTypeError(f'"{name}_kernel_impl" not implemented for {x.dtype.scalar_name!r}')
    return x


@torch_op
def softmax(input, dim, dtype=None):
    d = _dim(dim, _t(input).ndim)
    x = _softmax_input(input, dtype, "softmax")
    return _named(_w(core.softmax(x, d)), "SoftmaxBackward0", input) if x.dtype.category == _FLOAT else x.clone()


@torch_op
def log_softmax(input, dim, dtype=None):
    d = _dim(dim, _t(input).ndim)
    x = _softmax_input(input, dtype, "log_softmax")
    return (_named(_w(core.log_softmax(x, d)), "LogSoftmaxBackward0", input) if x.dtype.category == _FLOAT
            else x.clone())


@torch_op(out=True)
def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    x = _t(input)
    if dtype is not None:
        x = _w(core.cast(x, dtype))
    if x.dtype.category < _FLOAT:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{x.dtype.scalar_name}")
    if p == "nuc":
        if dim is None and x.ndim < 2:
            raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
        if dim is not None and not (isinstance(dim, (tuple, list)) and len(dim) == 2):
            got = " ".join(str(d) for d in dim) if isinstance(dim, (tuple, list)) else str(dim)
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {got}")
        axes = (-2, -1) if dim is None else tuple(_axis(dim, x.ndim))
        return _w(core.linalg.matrix_norm(x, "nuc", axes, bool(keepdim)))
    x, axis, keepdim = _reduce_args(x, dim, keepdim)
    ord_ = 2 if p in ("fro", None) else (math.inf if p in ("inf", float("inf")) else p)
    return _named(_w(core.norm(x, ord_, axis, keepdim)), "LinalgVectorNormBackward0", x)


@torch_op
def count_nonzero(input, dim=None):
    x = _t(input)
    return _w(core.sum(core.ne(x, 0), _axis(dim, x.ndim)))


# ---------------------------------------------------------------------------
# sorting, indexing


@torch_op
def sort(input, dim=-1, descending=False, stable=False):
    x = _t(input)
    values, idx = core.sort_with_indices(x, _dim(dim, x.ndim) if x.ndim else 0, descending)
    return return_types.sort(_w(values), _w(idx))


@torch_op
def argsort(input, dim=-1, descending=False, stable=False):
    return sort(input, dim, descending, stable).indices


@torch_op
def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    x = _t(input)
    d = _dim(dim, x.ndim)
    if not 0 <= k <= (x.shape[d] if x.ndim else 1):
        raise RuntimeError("selected index k out of range")
    if x.dtype is _dt.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    if x.ndim == 0:  # one element along dim 0; torch gives it back for k = 0 too
        return return_types.topk(x.clone(), _w(core.zeros((), dtype=_dt.int64, device=x.device)))
    values, idx = core.topk(x, k, d, largest)
    return return_types.topk(_w(values), _w(idx))


def _check_index_values(idx, size, dim, op):
    """idx after torch's bounds check of its values: unlike numpy and the core, torch refuses negative indices
    here. Concrete values are checked now; traced ones (torch.compile, a torch.func transform) by the program,
    through core.check_index. op: "gather" (gather, scatter), "index_select", "index_add"."""
    if op == "gather":
        error, message = "RuntimeError", f"index {{}} is out of bounds for dimension {dim} with size {size}"
    elif op == "index_select" and dim > 0:
        error, message = "RuntimeError", f"INDICES element is out of DATA bounds, id={{}} axis_dim={size}"
    else:
        error, message = "IndexError", "index out of range in self"
    return checked_index(idx, size, error, message)


def checked_index(idx, size, error, message):
    """idx (a Tensor of indices) with every value in [0, size), else `error` (a name) with message.format(the
    bad value), by core.check_index: now for concrete values, when the program runs for traced ones."""
    if idx.device.type == "meta" or not idx.numel():
        return idx
    checked = core.check_index(idx._value(), lo=0, hi=size, error=error, message=message)
    return idx if type(checked) is core.Array else _w(checked)


def _bounds_as_runtime_error(fn, *args):
    """gather / scatter / index_add report an index out of bounds as a RuntimeError in torch."""
    try:
        return _w(fn(*args))
    except IndexError as e:
        raise RuntimeError(str(e)) from None


@torch_op(out=True)
def gather(input, dim, index):
    x = _t(input)
    d, idx = _dim(dim, x.ndim), _index(index)
    idx = _check_index_values(idx, x.shape[d] if x.ndim else 1, d, "gather")
    if x.ndim <= 1 and idx.ndim <= 1 and x.ndim != idx.ndim:
        # torch reads a 0-d input or index as 1-D of one element here: the result has the index's shape
        out = _bounds_as_runtime_error(core.gather, x.reshape(-1), 0, idx.reshape(-1))
        return out.reshape(idx.shape)
    return _bounds_as_runtime_error(core.gather, x, d, idx)


def _index(index):
    idx = _t(index)
    if idx.dtype is not _dt.int64 and idx.dtype.category == _dt.INT:
        idx = _w(core.cast(idx, _dt.int64))
    if idx.dtype is not _dt.int64:
        raise RuntimeError(f"Expected dtype int64 for index, got {idx.dtype}")
    return idx


def _check_same_dtype(name, x, src, what="src"):
    if isinstance(src, Tensor) and src.dtype is not x.dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to {what}.dtype")


@torch_op(inplace=True)
def scatter(input, dim, index, src=None, value=None, reduce=None):
    x = _t(input)
    if src is None:
        src = value
    _check_same_dtype("scatter", x, src)
    if not isinstance(src, Tensor):
        src = core.full(tuple(index.shape), src, dtype=x.dtype, device=x.device)
    if reduce is not None and reduce != "add":
        raise RuntimeError(f"scatter: reduce='{reduce}' is not supported (use 'add' or scatter_reduce)")
    d, idx = _dim(dim, x.ndim), _index(index)
    idx = _check_index_values(idx, x.shape[d] if x.ndim else 1, d, "gather")
    return _bounds_as_runtime_error(core.scatter_add if reduce == "add" else core.scatter, x, d, idx, src)


@torch_op(inplace=True)
def scatter_add(input, dim, index, src):
    x = _t(input)
    _check_same_dtype("scatter", x, src)
    d, idx = _dim(dim, x.ndim), _index(index)
    idx = _check_index_values(idx, x.shape[d] if x.ndim else 1, d, "gather")
    return _bounds_as_runtime_error(core.scatter_add, x, d, idx, src)


@torch_op(out=True)
def index_select(input, dim, index):
    x = _t(input)
    if isinstance(index, Tensor) and index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    idx = _index(index)
    d = _dim(dim, x.ndim)
    if x.ndim == 0:
        if idx.numel() != 1:
            raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {idx.numel()} value(s)")
        idx = _check_index_values(idx, 1, 0, "index_select")
        return _w(core.reshape(core.take(core.reshape(x, (1,)), core.reshape(idx, (1,)), axis=0), ()))
    idx = _check_index_values(idx, x.shape[d] if x.ndim else 1, d, "index_select")
    return _w(core.take(x, core.reshape(idx, (-1,)), axis=d))


@torch_op(inplace=True)
def index_add(input, dim, index, source, *, alpha=1):
    x = _t(input)
    _check_same_dtype("index_add", x, source, "source")
    if alpha != 1:
        source = core.mul(source, alpha)
    d, idx = _dim(dim, x.ndim), _index(index)
    if idx.ndim > 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: {idx.ndim} with type: "
                         f"Long and size: {list(idx.shape)}")
    src_shape = tuple(source.shape) if isinstance(source, Tensor) else ()
    if src_shape and d >= len(src_shape):
        raise RuntimeError(f"index_add_(): Indexing dim {d} is out of bounds of the source tensor with dim "
                           f"{len(src_shape)}")
    if idx.numel() != (src_shape[d] if src_shape else 1):
        raise RuntimeError(f"index_add_(): Number of indices ({idx.numel()}) should be equal to source.size(dim): "
                           f"({src_shape[d] if src_shape else 1}), for dim: {d}")
    idx = _check_index_values(idx, x.shape[d] if x.ndim else 1, d, "index_add")
    return _bounds_as_runtime_error(core.index_add, x, idx, source, d)


@torch_op(inplace=True)
def index_fill(input, dim, index, value):
    """input with every slice at `index` along dim set to value (a number or a 0-d tensor)."""
    x = _t(input)
    if not isinstance(index, Tensor) or index.dtype is not _dt.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    d = _dim(dim, x.ndim)
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value.ndim} dimension(s).")
        fill = core.cast(value, x.dtype)
    else:
        check_scalar_fits(value, x.dtype)
        fill = core.full((), value, dtype=x.dtype, device=x.device)
    n = x.shape[d] if x.ndim else 1
    v = index._value()
    if isinstance(v, core.Array) and index.device.type != "meta" and index.numel():
        a = np.asarray(v)
        bad = a[(a < -n) | (a >= n)]
        if bad.size:
            raise IndexError(f"index {int(bad.flat[0])} is out of bounds for dimension {d} with size {n}")
    idx = core.reshape(index, (-1,))
    idx = core.where(core.lt(idx, 0), core.add(idx, n), idx)
    hits = core.gt(core.index_add(core.zeros((n,), dtype=_dt.float32, device=x.device), idx,
                                  core.ones(tuple(idx.shape), dtype=_dt.float32, device=x.device)), 0)
    mask = core.reshape(hits, tuple(n if i == d else 1 for i in range(x.ndim)))
    return _named(_w(core.where(mask, fill, x)), "IndexFillBackward1" if isinstance(value, Tensor)
                  else "IndexFillBackward0", x)


@torch_op(out=True)
def take(input, index):
    if isinstance(index, Tensor) and index.dtype is not _dt.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {index.dtype.scalar_name}")
    return _w(core.take(_t(input), _index(index)))


@torch_op(out=True)
def take_along_dim(input, indices, dim=None):
    x = _t(input)
    if dim is None:
        return _w(core.take(x, _index(indices)))
    return _w(core.take_along_axis(x, _index(indices), _dim(dim, x.ndim)))


@torch_op
def nonzero(input, *, as_tuple=False):
    x = _t(input)
    if x.device.type == "meta":
        raise NotImplementedError("nonzero has a data-dependent shape and cannot run on meta tensors")
    a = np.asarray(x._value())
    nz = np.nonzero(np.atleast_1d(a))
    if a.ndim == 0 and not as_tuple:  # one index column per dim: (1, 0) or (0, 0) for a 0-d tensor
        return Tensor._from_value(core.asarray(np.zeros((int(a != 0), 0), np.int64)))
    if as_tuple:
        return tuple(Tensor._from_value(core.asarray(n.astype(np.int64))) for n in nz)
    return Tensor._from_value(core.asarray(np.stack(nz, 1).astype(np.int64) if nz else np.zeros((1, 0), np.int64)))


@torch_op
def masked_select(input, mask):
    x, mask = _t(input), _t(mask)
    if mask.dtype is not _dt.bool_:
        raise RuntimeError(f"masked_select: expected BoolTensor for mask, got {mask.dtype}")
    shape = core.broadcast_shapes(tuple(x.shape), tuple(mask.shape))
    return _w(core.getitem(core.broadcast_to(x, shape), core.broadcast_to(mask, shape)._value()
                           if isinstance(mask, Tensor) else mask))


# ---------------------------------------------------------------------------
# joining, shape


@torch_op(method=False, out=True)
def cat(tensors, dim=0):
    tensors = [_t(x) for x in _tensor_seq(tensors, "cat")]
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for k, x in enumerate(tensors):
        if x.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {k}) cannot be concatenated")
    ref = builtins.max(tensors, key=lambda x: x.ndim)
    dtype = _promotion.result_type(*tensors) if builtins.any(x.dtype is not ref.dtype for x in tensors) else ref.dtype
    # legacy empty tensors (shape (0,)) take part in the dtype only
    tensors = [x for x in tensors if not (x.ndim == 1 and x.shape[0] == 0) or x is ref]
    if builtins.any(x.dtype is not dtype for x in tensors):
        tensors = [_w(core.cast(x, dtype)) for x in tensors]
    d = _dim(dim, ref.ndim)
    for k, x in enumerate(tensors):
        if x.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {x.ndim}")
        for i, (a, b) in enumerate(zip(x.shape, ref.shape)):
            if i != d and a != b:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size {b} but "
                                   f"got size {a} for tensor number {k} in the list.")
    return _named(_w(core.concatenate(tensors, d)), "CatBackward0", *tensors)


concat = concatenate = cat


@torch_op(method=False, out=True)
def stack(tensors, dim=0):
    tensors = [_t(x) for x in _tensor_seq(tensors, "stack")]
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, x in enumerate(tensors):
        if x.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} at "
                               f"entry 0 and {list(x.shape)} at entry {i}")
    d = _dim(dim, tensors[0].ndim + 1)
    shape = tuple(tensors[0].shape)
    if d < len(shape):  # one concatenate along d, then split d into (n, size): two nodes, not 2n
        joined = core.concatenate(list(_promotion.promote(*tensors)), d)
        out = _w(core.reshape(joined, shape[:d] + (len(tensors), shape[d]) + shape[d + 1:]))
    else:
        out = cat([x.unsqueeze(d) for x in tensors], d)
    return _named(out, "StackBackward0", *tensors)


@torch_op(method=False, out=True)
def hstack(tensors):
    tensors = [_t(x) for x in _tensor_seq(tensors, "hstack")]
    if not tensors:
        raise RuntimeError("hstack expects a non-empty TensorList")
    tensors = [x.reshape(1) if x.ndim == 0 else x for x in tensors]  # atleast_1d
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


@torch_op(method=False, out=True)
def vstack(tensors):
    tensors = [_t(x) for x in _tensor_seq(tensors, "vstack")]
    if not tensors:
        raise RuntimeError("vstack expects a non-empty TensorList")
    return cat([x if x.ndim > 1 else x.reshape(1, -1) for x in tensors], 0)


def _tensor_seq(tensors, op):
    """torch's parser for a `tensors` argument: a list or tuple (not a tensor, not a generator)."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    return tensors


@torch_op
def flip(input, dims):
    x = _t(input)
    return _w(core.flip(x, _axis(tuple(dims) if isinstance(dims, (list, tuple)) else (dims,), x.ndim)))


@torch_op
def roll(input, shifts, dims=None):
    x = _t(input)
    n_shifts = len(shifts) if isinstance(shifts, (tuple, list)) else 1
    n_dims = 0 if dims is None else len(dims) if isinstance(dims, (tuple, list)) else 1
    if n_shifts != n_dims and not (dims is None and n_shifts == 1):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {n_shifts}, dims:{n_dims}")
    if dims is not None:
        dims = tuple(_dim(d, x.ndim) for d in (dims if isinstance(dims, (tuple, list)) else (dims,)))
    return _w(core.roll(x, shifts, dims))


@torch_op(inplace=True)
def tril(input, diagonal=0):
    return _triangle(input, diagonal, lower=True)


@torch_op(inplace=True)
def triu(input, diagonal=0):
    return _triangle(input, diagonal, lower=False)


def _triangle(input, diagonal, lower):
    x = _t(input)
    if x.ndim < 2:
        raise RuntimeError(f"{'tril' if lower else 'triu'}: input tensor must have at least 2 dimensions")
    return _w(core.tril(x, diagonal) if lower else core.triu(x, diagonal))


@torch_op
def repeat(self, *sizes):
    if not sizes:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    sizes = _int_sizes(sizes, "repeat", "repeats")
    if len(sizes) < self.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    return _w(core.tile(self, sizes))


@torch_op
def tile(input, dims):
    dims = tuple(dims)
    x = _t(input)
    if len(dims) < x.ndim:
        dims = (1,) * (x.ndim - len(dims)) + dims
    return repeat(x, *dims)


@torch_op
def broadcast_to(input, size):
    return _t(input).expand(tuple(size))


def _broadcast_shapes(name, shapes):
    try:
        return core.broadcast_shapes(*shapes)
    except ValueError as e:  # RuntimeError in torch
        raise RuntimeError(str(e)) from None


def broadcast_tensors(*tensors):
    shape = _broadcast_shapes("broadcast_tensors", [tuple(t.shape) for t in tensors])
    return tuple(_t(t).expand(tuple(shape)) for t in tensors)


def broadcast_shapes(*shapes):
    return Size(_broadcast_shapes("broadcast_shapes", [(s,) if isinstance(s, int) else tuple(s) for s in shapes]))


# ---------------------------------------------------------------------------
# linear algebra


@torch_op(out=True)
def matmul(input, other):
    input, other = lower_precision(input, other)  # inside a cpu autocast region: bfloat16
    if input.dtype is not other.dtype:  # torch does not promote here
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {input.dtype} != {other.dtype}")
    if input.dtype is _dt.bool_ and input.numel() and other.numel():
        raise UnsupportedDTypeError('"matmul" not implemented for \'Bool\'')
    try:
        out = None
        if other.ndim == 2 and input.ndim >= 2:
            # which operand is laid out column-major (x @ W.t()): its gradient then comes out in its layout
            # (core's matmul_p `col_major`, PyTorch's mm backward reading the strides)
            hint = (input.ndim == 2 and _col_major(input), _col_major(other))
            if hint[0] or hint[1]:
                out = _w(core.matmul_p.bind(input, other, col_major=hint))
        if out is None:
            out = _w(core.matmul(input, other))
        return _named(out, "MmBackward0", input, other) if input.ndim == 2 and other.ndim == 2 else out
    except ValueError as e:  # the core's shape errors: RuntimeError in torch
        raise RuntimeError(str(e)) from None


def _col_major(t):
    """Whether a 2-D tensor is laid out column-major, as PyTorch's mm backward tells from its strides."""
    strides = t._strides  # (None: contiguous)
    return strides is not None and strides[0] == 1 and strides[1] == t._shape[0]


@torch_op(out=True)
def mm(input, mat2):
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mm: expected 2D tensors, got {input.ndim}D and {mat2.ndim}D")
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({input.shape[0]}x{input.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    return matmul(input, mat2)


@torch_op(out=True)
def bmm(input, mat2):
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor (got {input.ndim}D and {mat2.ndim}D)")
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{input.shape[0]}, {input.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    return matmul(input, mat2)


@torch_op(out=True)
def mv(input, vec):
    return matmul(input, vec)


@torch_op(out=True)
def dot(input, other):
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
                           f"[{other.shape[0]}] to have the same number of elements, but got {input.shape[0]} and "
                           f"{other.shape[0]} elements respectively")
    return matmul(input, other)


@torch_op(out=True)
def inner(input, other):
    """The sum of products over the last dims (a scalar operand scales)."""
    if input.ndim == 0 or other.ndim == 0:
        return mul(input, other)
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    return _w(core.tensordot(*_promotion.promote(input, other), ((input.ndim - 1,), (other.ndim - 1,))))


@torch_op(out=True)
def outer(input, vec2):
    for name, v in (("self", input), ("vec2", vec2)):
        if isinstance(v, Tensor) and v.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v.ndim}-D")
    return _w(core.outer(*_promotion.promote(_t(input), _t(vec2))))


ger = outer


def einsum(equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    operands = [_t(o) for o in operands]
    equation = equation.replace(" ", "")
    lhs, arrow, out = equation.partition("->")
    specs = lhs.split(",")
    if len(specs) == len(operands) and builtins.any(_has_repeat(sp) for sp in specs):
        if not arrow:  # implicit output: the letters used once, sorted (fixed before the diagonals merge them)
            letters = lhs.replace(".", "").replace(",", "")
            out = ("..." if "..." in lhs else "") + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
        pairs = [_einsum_diagonal(sp, x) for sp, x in zip(specs, operands)]
        specs, operands = [p[0] for p in pairs], [p[1] for p in pairs]
        equation = ",".join(specs) + "->" + out
    try:
        return _w(core.einsum(equation, *operands))
    except ValueError as e:  # the core's spec and shape errors: RuntimeError in torch
        raise RuntimeError(str(e)) from None


def _has_repeat(spec):
    letters = spec.replace(".", "")
    return len(set(letters)) != len(letters)


def _einsum_diagonal(spec, x):
    """('ii', x) -> ('i', x.diagonal()): a letter repeated in one operand reads that operand's diagonal."""
    tokens = ["..."] if spec == "..." else []
    if spec != "...":
        head, dots, tail = spec.partition("...")
        tokens = list(head) + (["..."] if dots else []) + list(tail)
    while True:
        letters = [c for c in tokens if c != "..."]
        dup = next((c for c in letters if letters.count(c) > 1), None)
        if dup is None:
            return "".join(tokens), x
        i, j = [k for k, c in enumerate(tokens) if c == dup][:2]
        dims = [k if "..." not in tokens[:k + 1] or tokens[k] == "..." else x.ndim - (len(tokens) - k)
                for k in (i, j)]
        x = x.diagonal(0, dims[0], dims[1])
        tokens = [c for k, c in enumerate(tokens) if k not in (i, j)] + [dup]


@torch_op(inplace=True, out=True)
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    input, mat1, mat2 = lower_precision(input, mat1, mat2)
    out = mm(mat1, mat2)
    if alpha != 1:
        out = out * alpha
    return out + (input if beta == 1 else input * beta)


@torch_op
def trace(input):
    return input.diagonal().sum()


@torch_op
def diag(input, diagonal=0):
    x = _t(input)
    if x.ndim == 2:
        return x.diagonal(diagonal).clone()
    if x.ndim != 1:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {x.ndim}D")
    return _w(core.diag(x, diagonal))


def cdist(x1, x2, p=2.0):
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return norm(diff, p=p, dim=-1)
