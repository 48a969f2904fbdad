"""Pointwise composites of the torch surface: addcmul, addcdiv, frexp, hardshrink, prelu, and the torch-level
function forms of the in-place methods (torch.exp_(x) is x.exp_()).

All are built from eager ops, so their gradients come from those ops' rules.
"""
from .. import core
from ..core import dtypes as _dt
from . import grad_mode, return_types
from . import complex_ops, linalg_ops, math_ops, shape_ops, views  # noqa: F401  (declare the methods named below)
from . import promotion as _promotion
from .declare import tensor_method, torch_op
from .inplace import _self_or_const, _zero_gradient_to
from .ops import (_t, _w, add, eq, ge, gt, le, logical_and, logical_or, logical_xor, lt, mul, ne, true_divide,
                  where)
from .tensor import Tensor, UnsupportedDTypeError, _named
from .writeback import apply, original

__all__ = [
    "addcmul", "addcdiv", "frexp", "hardshrink", "prelu",
    "abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_",
    "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_",
    "deg2rad_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fix_", "floor_", "frac_", "gcd_", "i0_", "lcm_",
    "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_",
    "reciprocal_", "relu_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_",
    "tanh_", "trunc_", "xlogy_", "addmv_", "as_strided_", "conj_physical_", "index_put_",
]


def _check_tensor_args(name, tensor1, tensor2):
    for pos, (what, t) in enumerate((("tensor1", tensor1), ("tensor2", tensor2)), start=2):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): argument '{what}' (position {pos}) must be Tensor, not {type(t).__name__}")


def _value_in(value, dtype):
    """torch's Scalar `value` as the op's result dtype reads it: truncated to an int for integral results; a
    complex value needs a complex result."""
    if isinstance(value, complex) and dtype.category != _dt.COMPLEX:
        raise RuntimeError(f"value cannot be converted to type {_C_NAMES.get(dtype.name, dtype.name)} without "
                           "overflow")
    if dtype.category < _dt.FLOAT and not isinstance(value, Tensor):
        return int(value)
    return value


_C_NAMES = {"float64": "double", "float32": "float", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "int64": "int64_t", "int32": "int", "int16": "int16_t", "int8": "int8_t", "uint8": "uint8_t"}


@torch_op(inplace=True, out=True)
def addcmul(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 * tensor2, broadcast, in the promoted dtype of the three tensors."""
    _check_tensor_args("addcmul", tensor1, tensor2)
    x, t1, t2 = _promotion.promote(_t(input), tensor1, tensor2)
    if x.dtype is _dt.bool_:
        raise UnsupportedDTypeError('"addcmul_cpu_out" not implemented for \'Bool\'')
    value = _value_in(value, x.dtype)
    prod = mul(t1, t2)
    return add(x, prod if _is_one(value) else mul(prod, value))


@torch_op(inplace=True, out=True)
def addcdiv(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 / tensor2; two integral tensor1, tensor2 are refused (no integer division)."""
    _check_tensor_args("addcdiv", tensor1, tensor2)
    if tensor1.dtype.category < _dt.FLOAT and tensor2.dtype.category < _dt.FLOAT:
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform "
            "a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + "
            "value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * "
            "tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")
    x, t1, t2 = _promotion.promote(_t(input), tensor1, tensor2)
    value = _value_in(value, x.dtype)
    return add(x, true_divide(t1 if _is_one(value) else mul(t1, value), t2))


def _is_one(value):
    return type(value) in (int, float) and value == 1


@torch_op(out=True)
def frexp(input):
    """(mantissa, exponent) with input = mantissa * 2**exponent, |mantissa| in [0.5, 1) (0, inf and nan
    keep themselves with exponent 0); exponent is int32. The mantissa's gradient is grad / 2**exponent."""
    x = _t(input)
    if x.dtype.category != _dt.FLOAT:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    with grad_mode.no_grad():
        wide = core.cast(x, _dt.float64)
        a = core.abs(wide)
        finite = core.logical_and(core.isfinite(wide), core.ne(wide, 0))
        safe = core.where(finite, a, 1.0)
        e = core.add(core.floor(core.log2(safe)), 1.0)
        m = _scaled_by_power(safe, e)  # log2's rounding may leave m just outside [0.5, 1): one step fixes it
        e = core.where(core.ge(m, 1.0), core.add(e, 1.0), core.where(core.lt(m, 0.5), core.sub(e, 1.0), e))
        e = core.where(finite, e, 0.0)
    mantissa = _w(_scaled_by_power(x, e))
    return return_types.frexp(mantissa, _w(core.cast(e, _dt.int32)))


def _scaled_by_power(x, e):
    """x * 2**-e in x's dtype, in two halves so that neither power overflows (a subnormal x, float16)."""
    half = core.floor(core.mul(e, 0.5))
    first, second = core.exp2(core.neg(half)), core.exp2(core.neg(core.sub(e, half)))
    dtype = x.dtype
    return core.mul(core.mul(x, core.cast(first, dtype)), core.cast(second, dtype)) if dtype is not _dt.float64 \
        else core.mul(core.mul(x, first), second)


@torch_op(out=True)
def hardshrink(input, lambd=0.5):
    """input where |input| > lambd, else 0."""
    if input.dtype.category != _dt.FLOAT:
        raise UnsupportedDTypeError(f'"hardshrink_cpu" not implemented for {input.dtype.scalar_name!r}')
    kept = logical_and(ge(input, -lambd), le(input, lambd))  # (nan is not in the band: it passes, as PyTorch's)
    return where(kept, _w(core.zeros((), dtype=input.dtype, device=input.device)), input)


@torch_op
def prelu(input, weight):
    """max(0, x) + weight * min(0, x), weight per channel (dim 1; an input of fewer dims is one channel) or
    shared; input and weight of one dtype."""
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {input.dtype.scalar_name} and "
                           f"{weight.dtype.scalar_name}")
    if weight.numel() == 1:
        weight = weight.reshape(())  # (shared: the result keeps input's shape, a 0-d one included)
    else:
        channels = input.shape[1] if input.ndim >= 2 else 1
        if weight.numel() != channels:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{weight.numel()} and channel size = {channels}.")
        weight = weight.reshape((channels,) + (1,) * (input.ndim - 2))
    return where(gt(input, 0), input, mul(input, weight))


def _predicate_inplace(fn, name, node=None):
    """The in-place form of a comparison or logical op: self keeps its dtype and holds 0 / 1. A comparison's
    result requires grad where self or a tensor `other` does, with zero gradients, in a node named as PyTorch's
    (LtBackward0 against a number, LtBackward1 against a tensor); the logical ops give self a zero gradient."""
    def compute(self, other):
        value = _self_or_const(original(self, (other,)), fn(self, other).to(self.dtype))
        if node is not None and isinstance(other, Tensor) and other.requires_grad and self.dtype.is_floating_point:
            value = _zero_gradient_to(value, other.to(self.dtype))  # (no nan from 0 * inf, as other * 0 would give)
        return value

    def method(self, other):
        apply(self, lambda: compute(self, other), name)
        if node is not None and self._base is None:  # (a view's node is the view of its base's write)
            _named(self, f"{node}Backward{int(isinstance(other, Tensor))}", other)
        return self
    method.__name__ = method.__qualname__ = name
    return method


tensor_method(_predicate_inplace(eq, "eq_", "Eq"), "eq_")
tensor_method(_predicate_inplace(ne, "ne_", "Ne"), "ne_", "not_equal_")
tensor_method(_predicate_inplace(lt, "lt_", "Lt"), "lt_", "less_")
tensor_method(_predicate_inplace(le, "le_", "Le"), "le_", "less_equal_")
tensor_method(_predicate_inplace(gt, "gt_", "Gt"), "gt_", "greater_")
tensor_method(_predicate_inplace(ge, "ge_", "Ge"), "ge_", "greater_equal_")
tensor_method(_predicate_inplace(logical_and, "logical_and_"), "logical_and_")
tensor_method(_predicate_inplace(logical_or, "logical_or_"), "logical_or_")
tensor_method(_predicate_inplace(logical_xor, "logical_xor_"), "logical_xor_")


# torch's function forms of in-place methods
abs_, acos_, acosh_ = Tensor.abs_, Tensor.acos_, Tensor.acosh_
arccos_, arccosh_, arcsin_, arcsinh_ = Tensor.arccos_, Tensor.arccosh_, Tensor.arcsin_, Tensor.arcsinh_
arctan_, arctanh_, asin_, asinh_ = Tensor.arctan_, Tensor.arctanh_, Tensor.asin_, Tensor.asinh_
atan_, atanh_, ceil_, clamp_ = Tensor.atan_, Tensor.atanh_, Tensor.ceil_, Tensor.clamp_
clamp_max_, clamp_min_, clip_, cos_ = Tensor.clamp_max_, Tensor.clamp_min_, Tensor.clip_, Tensor.cos_
cosh_, deg2rad_, erf_, erfc_ = Tensor.cosh_, Tensor.deg2rad_, Tensor.erf_, Tensor.erfc_
exp2_, exp_, expm1_, fix_ = Tensor.exp2_, Tensor.exp_, Tensor.expm1_, Tensor.fix_
floor_, frac_, gcd_, i0_ = Tensor.floor_, Tensor.frac_, Tensor.gcd_, Tensor.i0_
lcm_, ldexp_, log10_, log1p_ = Tensor.lcm_, Tensor.ldexp_, Tensor.log10_, Tensor.log1p_
log2_, log_, logit_, nan_to_num_ = Tensor.log2_, Tensor.log_, Tensor.logit_, Tensor.nan_to_num_
neg_, negative_, rad2deg_, reciprocal_ = Tensor.neg_, Tensor.negative_, Tensor.rad2deg_, Tensor.reciprocal_
relu_, round_, rsqrt_, sigmoid_ = Tensor.relu_, Tensor.round_, Tensor.rsqrt_, Tensor.sigmoid_
sin_, sinc_, sinh_, sqrt_ = Tensor.sin_, Tensor.sinc_, Tensor.sinh_, Tensor.sqrt_
square_, tan_, tanh_, trunc_ = Tensor.square_, Tensor.tan_, Tensor.tanh_, Tensor.trunc_
xlogy_, addmv_, as_strided_, conj_physical_ = Tensor.xlogy_, Tensor.addmv_, Tensor.as_strided_, Tensor.conj_physical_
index_put_ = Tensor.index_put_
